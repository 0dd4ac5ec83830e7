"""Judging one notebook against the references: what runs, what is withheld, what it scored.

assemble    the notebook to grade: the instructor's source with the learner's answers
references  test cells with their REFERENCE regions withheld (what a learner's process receives)
stubs       the release's stubs: which questions a submission left unanswered
verdict     a test cell's records judged against the solution's, matched by name (``check.judge``)
points      a question's points, only on positive evidence: the one function every run scores by
grade_one   one submission run in a sandbox and judged (``Result``); the solution's records

It may import the sandbox (``grading.sandbox``), ``grading.status``, ``grading.names`` and the checks
(``autograder.check``, ``autograder.compare``); the store, the pages and the runs import it, never
the other way round.
"""
