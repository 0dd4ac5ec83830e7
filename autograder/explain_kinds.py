"""``from autograder.explain_kinds import kinds_by_chapter`` (lessons, the site): the public name of
:mod:`autograder.kinds.table`, the mistakes ``explain`` knows."""

from .kinds.table import (
    EXCEPTION_TYPES,
    KINDS,
    MODIFIED_INPLACE,
    UNKNOWN,
    Kind,
    kinds_by_chapter,
    modified_inplace_message,
)

__all__ = [
    "Kind",
    "KINDS",
    "UNKNOWN",
    "MODIFIED_INPLACE",
    "EXCEPTION_TYPES",
    "kinds_by_chapter",
    "modified_inplace_message",
]
