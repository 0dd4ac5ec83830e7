"""Class grading on top of nbgrader's notebook format.

assemble   the notebook to grade: the instructor's source with the learner's answers
grade_one  execute it in a fresh kernel and score each test cell
feedback   the learner's feedback page (no hidden tests, no tracebacks)
batch      a whole class in parallel: grades.csv and feedback pages
nbgrader_cli  plain nbgrader commands on the course or a copy of it
release    exercises/ from solutions/ with nbgrader generate_assignment
demo       a demo class of correct, blank and typical-mistake submissions
"""
