"""Every status a graded submission can get, built in one place (``grades.csv``'s ``status``)."""

from __future__ import annotations

__all__ = [
    "GRADED",
    "NO_NOTEBOOK",
    "UNKNOWN_ASSIGNMENT",
    "LINKED",
    "crashed",
    "stopped_in",
    "unreadable",
    "unreadable_shape",
    "grader_error",
    "not_graded",
    "unsandboxed",
]

GRADED = "graded"
NO_NOTEBOOK = "no notebook"
UNKNOWN_ASSIGNMENT = "unknown assignment"
LINKED = "refused: a symbolic link, not a notebook file"
NOT_A_FILE = "refused: not a regular file (a FIFO, device or socket), not a notebook file"
TOO_LARGE = "refused: a notebook over 16 MiB"
TIMEOUT = "timeout"
NOTEBOOK_TIME_LIMIT = "notebook time limit"
UNREADABLE_REPORT = "crashed (unreadable report)"
MALFORMED_REPORT = "crashed (malformed report)"  # not of the fork server's shape, or over its size limit
SANDBOX_LOST = "crashed (the sandbox stopped answering and was replaced)"


def crashed(exit_code: int | None) -> str:
    """``crashed (signal 9)`` for a negative exit code, else ``crashed (exit code N)``."""
    if exit_code is not None and exit_code < 0:
        return f"crashed (signal {-exit_code})"
    return f"crashed (exit code {exit_code})"


def stopped_in(stops: dict[str, str]) -> str:
    """``timeout in q2_check; crashed (signal 9) in q3_answer``: why each left-out cell stopped."""
    return "; ".join(f"{why} in {where}" for where, why in stops.items())


def unreadable_shape(why: str) -> str:
    """The status of a file whose JSON is too deep or holds too many objects to be a notebook
    (``why``: ``intake.bounds.shape_problem``'s words, which quote nothing of the file)."""
    return f"unreadable: {why}, not a notebook"


def grader_error(error: BaseException) -> str:
    """The status when grading this one submission raised in the grader (a bug, or a case not
    foreseen): ``crashed (grader error: KeyError)``; the batch goes on."""
    return f"crashed (grader error: {type(error).__name__})"


_UNREADABLE = {  # what a learner can do about it, by the error reading the file raised
    "NotJSONError": "not a notebook's JSON: the file is cut off, or is not a notebook",
    "UnicodeDecodeError": "not UTF-8 text: is it a notebook?",
    "ValidationError": "JSON, but not a notebook that nbformat reads",
    "JSONDecodeError": "not a notebook's JSON: the file is cut off, or is not a notebook",
}


def unreadable(error: BaseException) -> str:
    """The status of a file that is not a readable notebook: what is wrong with it in words (when
    its error is a known kind), then the error's type name; never the error's text (it may quote
    the file)."""
    name = type(error).__name__
    return f"unreadable: {_UNREADABLE[name]} ({name})" if name in _UNREADABLE else f"unreadable: {name}"


def not_graded(reason: str) -> str:
    """The status when the instructor's own solution fails its tests."""
    return f"not graded: {reason}"


def unsandboxed(status: str) -> str:
    """A status graded with ``--no-sandbox``: says so in ``grades.csv``."""
    return f"{status} (no sandbox)"
