"""What leaves the grader for people: files in nbgrader's course layout and exports for an LMS.

course_files  the graded notebook in ``autograded/`` (what formgrader shows) and the feedback
              page in ``feedback/<student>/<assignment>/<notebook>.html`` with the files
              ``nbgrader release_feedback`` reads there
exports       per-question CSV, per-student summary and Canvas's gradebook-import CSV, from the store

The learner's feedback page itself is rendered by ``grading.feedback``.
"""
