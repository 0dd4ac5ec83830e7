"""``from autograder.explain_kinds import kinds_by_chapter`` (lessons, the site): the public name of
:mod:`autograder.kinds.table`, the mistakes ``explain`` knows."""

from .kinds import table as _table
from .kinds.table import *  # noqa: F403 -- the table's public names, as lessons import them

__all__ = _table.__all__
