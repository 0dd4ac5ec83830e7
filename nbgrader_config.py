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
