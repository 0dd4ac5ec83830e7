"""An exception as data: its name and its message as they are shown, whatever the exception is.

A learner's code can raise anything: a class whose name is empty (``type("", (BaseException,), {})``),
whose ``__str__`` returns "" or raises, whose metaclass makes ``__name__`` something else than a
string. What is shown of it (by a check, by the process that runs a submission, by the grader reading
what crossed back) is built here, and never raises: an empty or odd name reads :data:`UNNAMED` or
names itself as odd, so an error is never shown as nothing.
"""

from __future__ import annotations

__all__ = ["UNNAMED", "UNREADABLE", "described", "shown_name"]

UNNAMED = "<unnamed exception>"
UNREADABLE = "<its message could not be read: its __str__ raised>"
_ODD = "<exception named "
_LONGEST_NAME = 80  # characters of a name shown; a class name is rarely a tenth of it


def shown_name(name: object) -> str:
    """``name`` (an exception's class name, as it crossed back) as it is shown: itself when it is a
    dotted Python name, :data:`UNNAMED` when it is empty, blank or not a string, else
    ``<exception named '...'>`` (cut at 80 characters): a name of spaces, quotes or markup is data."""
    if type(name) is not str or not name.strip():
        return UNNAMED
    if name == UNNAMED or (name.startswith(_ODD) and name.endswith("'>")):  # shown once already: as it is
        return name[: len(_ODD) + _LONGEST_NAME + 4]
    if all(part.isidentifier() for part in name.split(".")) and len(name) <= _LONGEST_NAME:
        return name
    return f"{_ODD}{name[:_LONGEST_NAME]!r}>"


def described(error: BaseException) -> tuple[str, str]:
    """``(name, message)`` of ``error``: :func:`shown_name` of its class's name, and ``str(error)``
    as a plain ``str`` (:data:`UNREADABLE` when ``__str__`` raises or gives something else). Never
    raises, whatever ``error`` defines."""
    try:
        name = shown_name(type(error).__name__)
    except BaseException:  # noqa: BLE001 -- a metaclass's __name__ may raise anything; the error is still one
        name = UNNAMED
    try:
        message = str(error)
        message = str.__str__(message) if isinstance(message, str) else UNREADABLE  # a str subclass made plain
    except BaseException:  # noqa: BLE001 -- a learner's __str__ may raise anything (SystemExit included)
        message = UNREADABLE
    return name, message
