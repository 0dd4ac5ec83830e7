"""Cause keys: the identity of a diagnosis, so that failures with one cause can be counted together.

A failed check's message is written for one learner and holds their numbers ("is exactly 3x the
expected value"). Its *cause key* names the mistake behind it, the same for every learner who made
it (``tensor.multiple``, ``bytes.double.the_tanh_output``, ``error.consumed``, ``not_answered``),
so the class report (``autograder.grading.out.report``) can say how many learners made each mistake.

Keys are set where the diagnosis is made and travel with its text as a :class:`Diagnosed` (a
``str``: everything that shows or stores a message is unchanged):

==========================  ======================================================================
``tensor.<kind>``           ``compare.diagnose``'s kinds (``none``, ``zeros``, ``multiple``,
                            ``shape.not_summed``, ...); with the question's own cause for it:
                            ``tensor.<kind>.<words of that cause>``
``bytes.<kind>``            ``compare.diagnose_bytes``'s kinds, with the parts named
                            (``bytes.double.the_tanh_output``)
``prediction.<what>.<e>``   the wrong entries of a ``check.predictions`` (each has its own reason)
``value.<words>``           a ``check.value`` or ``check.at_most``: the words of the hint that fits
``error.<kind>``            an error raised in the learner's code: the explainer's kind
                            (``autograder.explain``; the one the message's explanation was written
                            as, where it was raised), or the exception's type when it knows none
``not_answered``            the release's stub left as it is (``grading.stubs``)
``stopped.<why>``           the cell timed out or crashed
``forged_cause_line``       a message that ends in a line like ``[cause: ...]`` but has no key: text
                            from the learner's process (an exception's message) posing as one
==========================  ======================================================================

A key never holds a number or a hidden input: words only, from the course's own texts (a check's
hint, a question's cause, the name of a saved part), never from values. A message without a key
is grouped by :func:`message_group`: its first line with numbers and names taken out.

In nbgrader's gradebook a graded cell's autograder comment is the message with the key as its
last line, exactly ``[cause: <key>]`` (:func:`with_cause_line`, :func:`split_cause_line`).
"""

from __future__ import annotations

import re

__all__ = [
    "Diagnosed",
    "keyed",
    "key",
    "cause_of",
    "error_cause",
    "message_group",
    "with_cause_line",
    "split_cause_line",
    "NOT_ANSWERED",
    "FORGED",
    "MAX_TEXT",
]

NOT_ANSWERED = "not_answered"
FORGED = "forged_cause_line"
_MAX_WORDS = 6
# what of a learner's text any pattern here (and the explainer's) reads: they run in the grading
# thread, holding the GIL, so their time is bounded by the text's length, never the learner's choice
MAX_TEXT = 4000


class Diagnosed(str):
    """A message (``str``) that also carries its cause key as ``.cause`` ("" when none), and, from
    ``autograder.check.judging``, ``.reasons``: ``((reason, given), ...)``, what a hidden test may say of the
    difference (``compare.Diagnosis.reason`` and ``.given``; not pickled: the grader reads it where it judges)."""

    cause: str = ""
    reasons: tuple = ()

    def __new__(cls, text: str, cause: str = ""):
        made = super().__new__(cls, text)
        made.cause = cause
        return made

    def __reduce__(self):  # pickled (to a page-rendering process) with its key
        return (Diagnosed, (str(self), self.cause))


def _words(text: str) -> str:
    """The first words of ``text``'s first clause, lowercase, joined by ``_``; no digits."""
    clause = re.split(r"[:;(\n]|\.\s|\.$|, (?:so|then|or|but) ", str(text), maxsplit=1)[0]
    words = re.findall(r"[a-z]+", clause.lower().replace("'", ""))
    return "_".join(words[:_MAX_WORDS])


def key(*parts: str) -> str:
    """A cause key from a fixed prefix and free texts: ``key("bytes.double", "the Tanh output")``
    is ``"bytes.double.the_tanh_output"``. The first part is kept as it is; the others give their
    first words (:func:`_words`), so no number, shape or value enters a key."""
    head, *rest = parts
    return ".".join([head, *(w for w in map(_words, rest) if w)])


def keyed(text: str, cause: str) -> Diagnosed:
    """``text`` with the cause key ``cause``."""
    return Diagnosed(text, cause)


# "fn raised RuntimeError: ..." (check.call), or "RuntimeError: ..." (a test cell's own error)
_RAISED = re.compile(r"^(?:\S+ raised )?([A-Za-z_][A-Za-z0-9_]*(?:Error|Exception|Warning)): ?(.*)")


def cause_of(message: str) -> str:
    """The cause key of a failure ``message``: its own (a :class:`Diagnosed`), or, for the texts
    that come back from a learner's process as plain strings, the key their form tells: the
    stub's ``NotImplementedError`` (``not_answered``), an error raised in the learner's code
    (``error.<kind>``), a cell that was stopped (``stopped.<why>``). "" when nothing tells.
    The class grader does not read keys out of texts (a learner writes them): it keys what it
    knows itself and takes only :func:`error_cause` from a learner's error."""
    own = getattr(message, "cause", "")
    if own:
        return own
    text = str(message or "")
    # a learner's own text (an exception's message) posing as a key: its last line, read from the end
    if _CAUSE_LINE.search(text, max(0, len(text) - MAX_TEXT)):
        return FORGED
    first = text[:MAX_TEXT].split("\n", 1)[0]
    if "is not answered yet" in first or first.strip() == "NotImplementedError":
        return NOT_ANSWERED
    if first.startswith("stopped: "):
        return key("stopped", first.removeprefix("stopped: ").split(" in ")[0])
    return error_cause(text)


def error_cause(text: str) -> str:
    """``error.<kind>`` of an error raised in the learner's code, from its text (``Name: message``, or
    check.call's ``fn raised Name: message``): the explainer's kind of it, else its type's name;
    "" for a test cell's own ``AssertionError`` or a ``CheckFailed`` (a check's verdict, not an
    error of the learner's code). Only ever a key under ``error.``: whatever the text holds, it
    cannot pass for a cause the grader found (a stop, a wrong value, an unanswered question)."""
    text = str(text or "")
    first = text[:MAX_TEXT].split("\n", 1)[0]
    raised = _RAISED.match(first)
    # a test cell's own assert is no error of the learner's; an AssertionError their code raised (in
    # check.call: "fn raised ...") is, where the explainer knows it (GradScaler's order asserts)
    learners = raised and (raised.group(1) != "AssertionError" or " raised AssertionError" in first)
    if learners and raised.group(1) != "CheckFailed":
        from ..explain import explain, told_kind

        # check.call's message ends with the explanation made where the error was raised (its traceback, the
        # code around it): that kind, else the kind its first line alone gives
        lines = text[:MAX_TEXT].rstrip("\n").split("\n")
        told = told_kind(lines[-1]) if len(lines) > 1 and not lines[-1].startswith("  raised in ") else ""
        kind = told or explain(raised.group(2)).kind
        if kind != "unknown":
            return f"error.{kind}"
        return f"error.{raised.group(1)}" if raised.group(1) != "AssertionError" else ""
    return ""


_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")
# a call's or an index's arguments, innermost first (not prose in parentheses, which follows a space)
_ARGUMENTS = re.compile(r"(?<=[\w\])(.…])[(\[][^()\[\]]*[)\]]")
# a name of code: holds _ or . between letters: w.grad, q2_check, x.is_leaf
# Each branch is tried only where a word starts (a lookbehind), so it is linear on a 50k-letter word.
# Nothing else changes: a match inside a word starts after its leading digits (kept: group 1) or at
# its first letter anyway.
_CODE_NAME = re.compile(r"(?<!\w)(\d*)[A-Za-z_]\w*(?:\.[\w…]+)+|(?<![A-Za-z])[A-Za-z]*_\w*")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:e[-+]?\d+)?", re.IGNORECASE)


def message_group(message: str) -> str:
    """What a message without a cause key is grouped by: its first line with quoted texts and
    names of code taken out (``…``) and numbers replaced by ``#``, spaces collapsed. Two messages
    that differ only in their numbers or the names they quote fall in one group."""
    first = str(message or "")[:MAX_TEXT].split("\n", 1)[0]
    first = _QUOTED.sub("…", first)
    for _ in range(20):  # nested calls: f(g(x)) loses g(x), then f's own arguments
        first, found = _ARGUMENTS.subn("…", first)
        if not found:
            break
    first = _CODE_NAME.sub(r"\1…", first)
    first = _NUMBER.sub("#", first)
    first = re.sub(r"…+", "…", first)
    return " ".join(first.split())


_CAUSE_LINE = re.compile(r"\n?\[cause: ([^\]\n]+)\]\s*\Z")


def with_cause_line(message: str, cause: str) -> str:
    """The gradebook comment for a failure: ``message``, then ``[cause: <cause>]`` as its last line
    (nothing added when ``cause`` is "")."""
    return f"{message}\n[cause: {cause}]" if cause else str(message)


def split_cause_line(comment: str | None) -> tuple[str, str]:
    """``(message, cause)`` from a gradebook comment made by :func:`with_cause_line` (cause "" when
    its last line is no ``[cause: ...]``)."""
    text = comment or ""
    found = _CAUSE_LINE.search(text, max(0, len(text) - MAX_TEXT))  # the last line: read the end only
    return (text[: found.start()], found.group(1).strip()) if found else (text, "")
