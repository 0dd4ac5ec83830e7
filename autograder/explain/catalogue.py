"""PyTorch's own autograd messages (``autograder/kinds/catalogue.tsv``, read from torch 2.13's sources): the kind
each one is, for messages that no kind's own pattern matched (other wordings, kinds named from the catalogue)."""

from __future__ import annotations

import functools
import re

from ..kinds.catalogued import catalogue

__all__ = ["catalogued_kind"]


@functools.cache
def _patterns() -> tuple[tuple[re.Pattern, str], ...]:
    return tuple((re.compile(row["pattern"], re.IGNORECASE), row["kind"]) for row in catalogue())


def catalogued_kind(text: str) -> str:
    """The kind of the last catalogued message in ``text`` ("-": catalogued, but no kind the course explains;
    "": not in the catalogue)."""
    found = [(m.start(), kind) for pattern, kind in _patterns() for m in pattern.finditer(text)]
    return max(found)[1] if found else ""
