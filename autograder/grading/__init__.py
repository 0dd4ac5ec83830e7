"""Class grading on top of nbgrader's notebook format, one package per stage a submission goes through.

intake/         the way in: a SUBMITTED folder (what ``nbgrader collect`` left, ``timestamp.txt``), an
                LMS zip unpacked safely
sandbox/        where a submission runs and what crosses back: the bubblewrap container, its fork
                server, the runner, the boundary's checks, limits, cgroups
judge/          one notebook judged against the references: assembled from the instructor's source,
                REFERENCE regions withheld, records judged (verdict), a ``Result`` (grade_one)
store/          nbgrader's gradebook as the store (each submission whole in a transaction, late
                penalties, a lock per SQLite gradebook) and the views written from it (grades.csv)
out/            what goes out to people: feedback pages, nbgrader's autograded/ and feedback/
                layout, exports for an LMS, the class report
runs/           whole-class runs (batch, progress, the warm grader they and the service share),
                shards and merges, saved references, one notebook for a hosted grader, the demo class
nbgrader_glue/  plain nbgrader: its commands, its preprocessors, the release
service/        grading on submit (``serve``): nbgrader's exchange watched, a durable queue, attempt
                rules, feedback released through the exchange, the learner's page behind the hub
mistakes/       data: the typical mistake of each question (the demo class, the tests)
names           ids from submissions as data: checked, CSV cells without formulas, terminal text escaped
status          every status string of grades.csv

Each stage imports only the stages below it, in this order (``[tool.importlinter]`` in
pyproject.toml keeps it so): service; runs and nbgrader_glue; out; store; judge; sandbox and intake;
names and status.

A submission's path: intake (a SUBMITTED folder, an LMS zip; or service.inbound, the exchange, then the
course's submitted/) -> runs.batch (or service.loop) -> runs.warm -> judge.grade_one ->
sandbox.runner -> sandbox.container -> sandbox.forkserver; its result: judge.verdict -> store
(nbgrader's gradebook, in the grader's main thread; late penalties in store.gradebook) -> store.views
(grades.csv), out.feedback (feedback pages), out.course_files (nbgrader's layout), out.exports, and
out.report (the class report). A report from a submission process is validated where it arrives,
in sandbox.boundary.

The processes, and what crosses between them::

    grader (python -m autograder grade)           trusted: sources, solutions' records, SUBMITTED, OUT;
      │                                           writes the gradebook, from its main thread only
      └─ grading thread x --jobs                  reads one submission, sends its cells, judges, writes feedback
           └─ bwrap container (one per thread)    new user/PID/net/IPC/UTS namespaces, read-only /usr,
                │                                 Python and the autograder package only; tmpfs /tmp
                └─ fork server                    imported torch, IPython, autograder once; holds nothing
                     │                            secret; control socket: "fork" (+ a channel), "reap"
                     └─ submission process        one per notebook (and one per solution run); resource
                                                  limits; runs the cells it receives on its channel

Grader -> submission process: one cell's text at a time (test cells with REFERENCE regions
replaced by ``check.WITHHELD``), never a reference value, never another student's anything.
Submission process -> grader: per cell, JSON only: outputs (cut), the error's type and message,
and the ``check.Checked`` records its checks made, read with a deadline and a size limit and
checked against that shape where they arrive (``boundary``); anything else is the submission's
``crashed (malformed report)``. The grader trusts only the ``received`` part of
those records, and judges it against the record of the same check from the solution's run
(``verdict``). After each notebook, the fork server kills every process the submission started
and empties ``/tmp``; a container that stops answering, or whose fork server's own state (limits,
priority, affinity, scheduling: a submission of the same user can change them) is no longer what
it was when it started, is killed whole and replaced.
"""
