"""What leaves the grader for people: pages, exports and the class report.

feedback       the learner's feedback page (no hidden tests, no tracebacks) from a ``Result``
feedback_page  that page written directly as HTML, everything from a submission escaped
offline_html   nbconvert's offline template: markdown maths as MathML, no scripts
redact         hidden tests and solutions cut from what a learner or a page may see
course_files   the graded notebook in ``autograded/`` (what formgrader shows) and the feedback
               page in ``feedback/<student>/<assignment>/<notebook>.html`` with the files
               ``nbgrader release_feedback`` reads there
exports        per-question CSV, per-student summary and Canvas's gradebook-import CSV, from the store
summary        the class report's numbers (rows in, a summary out)
report         the class report from the gradebook: pass rates and causes (``autograder.compare.causes``)
report_page    the report as one offline HTML page, plots as embedded PNG

It may import the store, judge (a ``Result``, the notebook's questions), intake (a submission's
time), ``grading.names`` and the checks' records and causes; the runs import it.
"""
