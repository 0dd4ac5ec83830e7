"""nbgrader configuration of the course, for instructors who use plain nbgrader or formgrader.

Folders: solutions/ is nbgrader's source folder, exercises/ its release folder, and the usual
submitted/, autograded/, feedback/ and gradebook.db sit beside this file (all git-ignored). Run
nbgrader commands from this folder, with the virtual environment's bin/ on PATH (nbgrader runs
`alembic`).
"""

import os
import sys

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

here = os.path.dirname(os.path.abspath(__file__))
# The preprocessors and the feedback template below come from this course's own autograder package.
if here not in sys.path:
    sys.path.insert(0, here)

from autograder.grading.out import offline_html  # noqa: E402

c.CourseDirectory.root = here
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(here, "gradebook.db")
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback"]

# The course's id: the exchange's commands (release_assignment, fetch_assignment, submit, collect,
# release_feedback) and formgrader's release and collect buttons name it. Write your course's here;
# `--course ID` on a command overrides it.
c.CourseDirectory.course_id = "torch101"
# Late work scores 0 unless an extension covers it (python -m autograder extension). nbgrader's
# default, "none", keeps a late submission's score; grade's table and the exports then say
# "late (36 h, no penalty)". nbgrader's other choice: "zero"; or your own plugin class
# (c.AssignLatePenalties.plugin_class).
c.LateSubmissionPlugin.penalty_method = "zero"
# The exchange, where release_assignment and collect meet the learners' fetch and submit: a hub's
# configuration names it (the environment's etc/jupyter/nbgrader_config.py), else nbgrader's default
# /usr/local/share/nbgrader/exchange. An exchange/ folder here, when it exists, is used instead: a
# term tried on one machine (the README's "A term with this course"; ignored by git), where every
# sample learner is you, so collect's check that a submission's owner is its learner is off.
if os.path.isdir(os.path.join(here, "exchange")):
    c.Exchange.root = os.path.join(here, "exchange")
    c.ExchangeCollect.check_owner = False  # nbgrader 0.9 names it here (CollectApp.check_owner warns "Outdated config")

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# exercises/ is committed, and nbgrader skips an assignment whose release folder exists: it would
# then never enter the gradebook, and autograde would fail with "No assignment with ID ... exists".
# Regenerating writes the same files (a course test checks that exercises/ is what this gives).
c.GenerateAssignment.force = True

# A test cell deleted by a learner is restored from the source instead of "needs manual grading".
c.OverwriteCells.add_missing_cells = True
# nbgrader's sanitize steps, with the released test cells given their hidden tests back first, so
# that "checksum ... has changed" is only reported for cells a learner really edited.
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "autograder.grading.nbgrader_glue.plugins.RestoreHiddenTests",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Feedback never shows hidden tests, in sources, tracebacks or outputs (nbgrader shows them by
# default), and is one self-contained page that loads nothing from the network (maths as MathML).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "autograder.grading.nbgrader_glue.plugins.RedactHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
c.GenerateFeedback.exporter_class = offline_html.OfflineHTMLExporter
# nbgrader sets HTMLExporter's template to its own "feedback" one; this class's section wins.
c.OfflineHTMLExporter.template_name = offline_html.TEMPLATE_NAME
c.OfflineHTMLExporter.extra_template_basedirs = [offline_html.TEMPLATE_DIR]
