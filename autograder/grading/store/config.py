"""A course folder's nbgrader configuration, loaded as nbgrader loads ``nbgrader_config.py``."""

from __future__ import annotations

from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

__all__ = ["course_config", "course_paths"]


def course_config(course: Path | None) -> Config:
    """The traitlets ``Config`` of ``course/nbgrader_config.py`` (an empty one when ``course`` is
    None or holds no such file). The file runs as nbgrader runs it (``get_config()`` provided), so
    an instructor's settings (``ClearSolutions.code_stub``, ``AssignLatePenalties.plugin_class``,
    ``LateSubmissionPlugin.penalty_method``, ``CourseDirectory.db_url``) apply unchanged."""
    if course is None or not (course / "nbgrader_config.py").is_file():
        return Config()
    return PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()


def course_paths(course: Path) -> tuple[Path, str, Path]:
    """What an nbgrader course folder's configuration names: ``(source folder, gradebook db_url,
    submitted folder)``, with nbgrader's defaults (``source/``, ``sqlite:///<course>/gradebook.db``,
    ``submitted/``) where it names none."""
    course = Path(course).resolve()
    directory = course_config(course).get("CourseDirectory", {})
    return (
        course / directory.get("source_directory", "source"),
        directory.get("db_url") or "sqlite:///" + str(course / "gradebook.db"),
        course / directory.get("submitted_directory", "submitted"),
    )
