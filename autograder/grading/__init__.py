"""Class grading on top of nbgrader's notebook format.

assemble    the notebook to grade: the instructor's source with the learner's answers
references  test cells with their REFERENCE regions withheld (what a learner's process receives)
limits      the limits a submission runs under (one object, from the command line down)
sandbox     a bubblewrap container around a warm fork server, seen from the grader
cgroups     as root, the pids and memory cgroups that bound a container's processes together
ipc         System V objects and keyrings a submission leaves behind, removed
forkserver  the fork server inside the container, and the submission process it forks
runner      run a notebook's cells, one at a time, in a fresh submission process
boundary    what comes back from a submission process: read with a deadline and a size limit, checked
values      checked values and records as plain JSON (how they cross back)
verdict     a test cell's records judged against the solution's, matched by name
grade_one   grade one submission; the solution's records
status      every status string of grades.csv
names       ids from submissions as data: checked, CSV cells without formulas, terminal text escaped
feedback    the learner's feedback page (no hidden tests, no tracebacks)
feedback_page  that page written directly as HTML, everything from a submission escaped
batch       a whole class in parallel, each result recorded in the store as it finishes
intake/     how submissions come in: nbgrader's exchange (timestamp.txt), an LMS zip unpacked safely
store/      nbgrader's gradebook as the store (each submission whole in a transaction, late penalties,
            a lock per SQLite gradebook) and the views written from it (grades.csv)
out/        files for people: autograded/ and feedback/ in nbgrader's layout (formgrader,
            release_feedback), exports (per question, per student, Canvas's import)
nbgrader_cli  plain nbgrader commands on the course or a copy of it
release     exercises/ from solutions/ with nbgrader generate_assignment
demo        a demo class of correct, blank and typical-mistake submissions
stubs       the release's stubs: which questions a submission left unanswered
report      the class report from the gradebook: pass rates and causes (``autograder.causes``)
report_page the report as one offline HTML page, plots as embedded PNG

A submission's path: intake (a SUBMITTED folder, what ``nbgrader collect`` left, an LMS zip) ->
batch -> grade_one -> runner -> sandbox -> fork server; its result: verdict -> store (nbgrader's
gradebook, in the grader's main thread) -> views (grades.csv), feedback pages, out (nbgrader's
layout, exports).

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
