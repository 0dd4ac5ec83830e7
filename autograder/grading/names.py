"""Names that come from submissions (student and assignment ids, file names) are data.

A student's folder or an LMS file name reaches ``grades.csv``, the instructor's terminal, feedback
pages and the gradebook. Each place gets one function here: ``check_id`` refuses an id that is not
safe to store; ``csv_cell`` keeps a spreadsheet from reading a cell as a formula; ``terminal``
shows control characters escaped, so nothing a submission names can move the cursor, set a window
title or write to the clipboard (OSC 52) of the terminal that prints it; ``visible`` does the same
for a learner's message of several lines (a ``Graded:`` line, a page, a comment): a carriage return
or an ANSI escape is shown, never interpreted; ``gradebook_name`` is a roster's name as nbgrader's
gradebook may hold it (``nbgrader export`` writes names into its CSV unquoted).
"""

from __future__ import annotations

import re

__all__ = [
    "UnsafeId",
    "SAFE_ID",
    "check_id",
    "csv_cell",
    "terminal",
    "visible",
    "without_controls",
    "gradebook_name",
    "MAX_NAME_PART",
    "counted",
]

# What nbgrader itself accepts for a student or assignment id is looser; ours is what every place
# above can show unchanged: letters, digits, '.', '_', '-', '@' and '+' (e-mail-like LMS logins),
# starting with a letter, a digit or '_' (never with a formula start: nbgrader's own ``export``
# writes ids into its CSV raw, and a spreadsheet evaluates ``+A1+B1`` or ``@A1``), at most 100
# characters.
SAFE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,99}")

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


# Every format character (Unicode category Cf, Unicode 14 as Python 3.11 has it: U+FEFF, the soft
# hyphen, the invisible and bidirectional marks, tags): invisible, they hide what a name starts
# with (U+FEFF then ``=``). tests/grading/test_names.py checks the list against ``unicodedata``.
FORMAT_CHARACTERS = (
    "\U000000ad\U00000600-\U00000605\U0000061c\U000006dd\U0000070f\U00000890-\U00000891"
    "\U000008e2\U0000180e\U0000200b-\U0000200f\U0000202a-\U0000202e\U00002060-\U00002064"
    "\U00002066-\U0000206f\U0000feff\U0000fff9-\U0000fffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)
_CONTROL = re.compile(rf"[\x00-\x1f\x7f-\x9f\u2028\u2029{FORMAT_CHARACTERS}]")


class UnsafeId(ValueError):
    """A student or assignment id that is not a safe id (the message says which and why)."""


def check_id(value: str, what: str = "student id") -> str:
    """``value`` unchanged when it is a safe id (``SAFE_ID``).

    Raises:
        UnsafeId: anything else; the message shows ``value`` with control characters escaped.
    """
    if not isinstance(value, str) or not SAFE_ID.fullmatch(value):
        raise UnsafeId(
            f"refused {what} {terminal(str(value))[:120]}: an id is 1-100 letters, digits or . _ - @ + "
            "(starting with a letter, a digit or _: never with a formula start, = + - @, for a spreadsheet)"
        )
    return value


def csv_cell(value: object) -> str:
    """``value`` as a CSV cell that no spreadsheet evaluates: a text starting with ``= + - @``, a
    tab or a line break gets a leading ``'`` (OWASP's advice for CSV injection). Numbers stay as
    they are (a negative score is still a number); a text only when it is a plain decimal
    (``-2``, ``-1.5e3``), not anything else ``float()`` reads (``+inf``, ``+1_000``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        text = str(value)
        if text.startswith(_FORMULA_START) and not _is_number(text):
            return "'" + text
        return text
    return f"{value:g}" if isinstance(value, float) else str(value)


# a plain decimal only: float() also reads "+inf", "+Infinity", "+1_000", " -1", Arabic digits
_PLAIN_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def _is_number(text: str) -> bool:
    return _PLAIN_NUMBER.fullmatch(text) is not None


def terminal(text: str) -> str:
    """``text`` safe to print to a terminal: every control or bidirectional-override character is
    shown as its escape (``\\x1b``, ``\\n``, ``\\u202e``), so that one line stays one line."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


_CONTROL_BUT_LINES = re.compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{FORMAT_CHARACTERS}]")


def visible(text: str) -> str:
    """``text`` with every control or bidirectional-override character but the line break and the
    tab shown as its escape (``\\r``, ``\\x1b``): a learner's message keeps its lines, and nothing in
    it can overwrite a line or colour what follows when JupyterLab or a terminal renders it."""
    return _CONTROL_BUT_LINES.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


MAX_NAME_PART = 100  # characters of a first or last name kept (a roster's names are data)


def gradebook_name(part: str) -> str:
    """A first or last name as this course writes it into nbgrader's gradebook: no control
    character, comma or double quote (``nbgrader export`` writes names into its CSV unquoted, so a
    comma would shift every later column), spaces collapsed, at most ``MAX_NAME_PART`` characters,
    and a leading ``'`` before a formula start (``=HYPERLINK(...)`` stays text in a spreadsheet)."""
    text = " ".join(without_controls(part).replace(",", " ").replace('"', " ").split())[:MAX_NAME_PART]
    return "'" + text if text.startswith(_FORMULA_START) else text


def without_controls(text: str) -> str:
    """``text`` with every control or bidirectional-override character dropped (a name from a
    roster, stored for formgrader and the exports, where an escape would only garble it)."""
    return _CONTROL.sub("", text)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 submission``, ``2 submissions``, ``0 entries`` (``plural`` when adding "s" is wrong)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
