"""nbgrader configuration of the course, for instructors who use plain nbgrader or formgrader.

Folders: solutions/ is nbgrader's source folder, exercises/ its release folder. Run nbgrader
commands from this folder, with the virtual environment's bin/ on PATH (nbgrader runs `alembic`).
"""
import os

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

here = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.root = here
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(here, "gradebook.db")
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback"]

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
# A test cell deleted by a learner is restored from the source instead of "needs manual grading".
c.OverwriteCells.add_missing_cells = True
# Feedback never shows hidden tests (nbgrader shows them by default).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
