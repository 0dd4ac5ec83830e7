"""The command line, one module per command: each has ``add(commands)``, which adds its parser to
``python -m autograder``'s subcommands (``argparse``), and ``run(args)``, which does it and returns the
exit status.

grade        grade a class (with no SUBMITTED, the demo class)
report       the class report from the gradebook
export       questions.csv, summary.csv, canvas.csv from the gradebook
extension    more time for one student's assignment
references   each solution run once, its records saved (refs.json)
grade_one    one notebook for a hosted grader (results.json)
serve        grading on submit: a service watching nbgrader's exchange (a JupyterHub service)
attempts     extra attempts for one learner's assignment (the service's limits)
merge        shards' part gradebooks into one
release      exercises/ from solutions/
workspace    the learner's own copies of notebooks/ and exercises/ (my-work/)
progress     the learner's exercises run in fresh processes: where they stand (my-work/.progress.json)
explain      an autograd error's explanation, from a file or stdin
options      what several commands share

The commands sit above everything else: they may import ``autograder.grading`` and the explainer,
and nothing imports them but ``__main__``. Each imports what it runs inside ``run``, so ``python -m
autograder explain`` (and ``--help``) starts without importing torch or nbgrader.
"""

from . import (
    attempts,
    explain,
    export,
    extension,
    grade,
    grade_one,
    merge,
    progress,
    references,
    release,
    report,
    serve,
    workspace,
)

# In the order --help lists them.
COMMANDS = (
    grade, report, export, extension, references, grade_one, serve, attempts, merge, release, workspace, progress,
    explain,
)  # fmt: skip

__all__ = ["COMMANDS"]
