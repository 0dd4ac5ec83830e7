"""Preprocessors that plain nbgrader runs for this course (registered in ``nbgrader_config.py``).

- :class:`RestoreHiddenTests` (``autograde``, before ``OverwriteCells``): nbgrader stores a test
  cell in the gradebook *with* its hidden tests, and checksums it before ``ClearHiddenTests`` runs,
  so every released test cell that had hidden tests differs from its stored checksum and
  ``OverwriteCells`` warns "Attribute 'checksum' for cell ... has changed!" even for an untouched
  release (jupyter/nbgrader#1961). A locked cell whose source is exactly the released version of
  the stored one gets the stored source back here; the warning is then left for cells a learner
  really changed.
- :class:`RedactHiddenTests` (``generate_feedback``): removes hidden tests from the feedback page,
  sources, tracebacks and outputs alike (see :mod:`autograder.grading.out.redact`). nbgrader's own
  ``ClearHiddenTests`` clears sources only: a failing visible check's traceback still quotes the
  hidden lines after it.
"""

from __future__ import annotations

from nbconvert.preprocessors import Preprocessor
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import default

from ..out.redact import redact, split_hidden

__all__ = ["RestoreHiddenTests", "RedactHiddenTests"]


class RestoreHiddenTests(NbGraderPreprocessor):
    """Put the stored hidden tests back into released test cells that the learner left unchanged."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            for cell in nb.cells:
                grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                if grade_id is None:
                    continue
                try:
                    stored = gradebook.find_source_cell(grade_id, info["notebook"], info["assignment"])
                except MissingEntry:
                    continue  # OverwriteCells reports it
                released = "\n".join(split_hidden(stored.source, note=None)[0])
                if stored.locked and cell.source == released != stored.source:
                    cell.source = stored.source
        return nb, resources


class RedactHiddenTests(Preprocessor):  # nbconvert's: nbgrader's base warns about nbconvert's config
    """Remove hidden tests from every part of a feedback notebook (see ``redact.redact``)."""

    @default("enabled")
    def _enabled_default(self):
        return True  # nbconvert's preprocessors are off unless enabled

    def preprocess(self, nb, resources):
        return redact(nb), resources
