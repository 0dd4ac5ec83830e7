"""``from autograder.explain_kinds import kinds_by_chapter`` (lessons, the site): the public name of
:mod:`autograder.explain.kinds_table`, the mistakes ``explain`` knows."""

from .explain.kinds_table import (
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
