"""What a pasted traceback quotes and what torch's own frames of a live traceback hold: the learner's failing line
as a paste shows it, and a local of a torch function (``__setattr__``'s value, a scheduler's ``last_epoch``). Shared by
:mod:`autograder.explain.returned` and :mod:`autograder.explain.optimizers`."""

from __future__ import annotations

import itertools
import re

from .context import Context
from .graph_cut import code_only

__all__ = ["PASTE", "caret_segment", "failing_quote", "library_local"]

PASTE = "A paste shows no objects, only its lines: "


def failing_quote(where: Context) -> str:
    """A paste's last quoted line of the learner's code (its failing line)."""
    lines = [x.strip() for x in where.source.splitlines() if x.startswith(" ") and x.strip()]
    lines = [x for x in lines if not set(x) <= set("^~ ")]
    return code_only(lines[-1]) if lines else ""


def caret_segment(text: str) -> str:
    """The expression Python's carets mark under the last quoted line of a paste ("" when none is marked)."""
    lines, found = text.splitlines(), ""
    for code, marks in itertools.pairwise(lines):
        if re.fullmatch(r"\s*[\^~]+[\s\^~]*", marks) and code.strip():
            start = len(marks) - len(marks.lstrip())
            found = code[start : len(marks.rstrip())]
    return found


def library_local(error, function: str, name: str):
    """The local ``name`` of the first frame of ``error``'s traceback running a function named ``function`` (torch's
    own, e.g. ``__setattr__``'s ``value``), or None."""
    tb = getattr(error, "__traceback__", None)
    while tb is not None:
        if tb.tb_frame.f_code.co_name == function and name in tb.tb_frame.f_locals:
            return tb.tb_frame.f_locals[name]
        tb = tb.tb_next
    return None
