"""The verdict on one test cell: the learner's checked values against the solution's records.

Records are matched by name: the k-th check called ``"d loss / d h"`` in the learner's run of a
cell is judged against the k-th check of that name in the solution's run of the same cell, with
the solution's kind, expected value and options (``autograder.check.judge``). What the learner's
process said about kinds, expected values or options plays no part.
"""

from __future__ import annotations

import math
from collections import Counter

from ..causes import Diagnosed
from ..checked import Checked
from ..judge import judge

__all__ = ["keyed", "verdict", "NOT_ALL_RAN", "HIDDEN_WRONG"]

NOT_ALL_RAN = (
    "the checks of this question did not all run (the notebook changed how cells or checks run), so it earns no points"
)


HIDDEN_WRONG = "{name} is wrong on a hidden test (a hidden test shows neither its inputs nor its values)."


def _hidden_message(reference: Checked, received) -> str:
    """A hidden check's failure without what the grader computes from its inputs: no values, no
    shapes, no factor and no cause matched to one (a factor of 7 is "N = 7 rows here"). What the
    author wrote for the learner stays: a figure's or a prediction's own message (which side,
    which named entries, their reasons) and a tensor check's ``hint``; an author who puts an
    input into those (an f-string) shows it."""
    options = {k: v for k, v in reference.options.items() if k != "causes"}
    if reference.kind in ("value", "at_most", "predictions"):
        _, message = judge(
            Checked(reference.name, reference.kind, received, reference.expected, dict(options, show_values=False))
        )
        return f"{message} (a hidden test: its inputs are not shown)"
    hint = options.get("hint")
    return HIDDEN_WRONG.format(name=reference.name) + (f" {hint}" if isinstance(hint, str) and hint else "")


def keyed(records: list[Checked]) -> dict[tuple[str, int], Checked]:
    """``{(name, occurrence): record}``: occurrence counts from 0 for each name, in call order."""
    seen: Counter = Counter()
    result = {}
    for record in records:
        result[(record.name, seen[record.name])] = record
        seen[record.name] += 1
    return result


def _not_a_number_like(received, expected) -> bool:
    """True when the solution checked a finite number and the learner's record holds a value that
    is not one of the same kind: ``-inf`` or NaN (forged, or computed), or a bool for a number."""
    if isinstance(expected, bool) or not isinstance(expected, (int, float)):
        return False
    if isinstance(received, bool) or not isinstance(received, (int, float)):
        return False  # a string or None is judged (and fails) as it is, with the judge's own message
    try:
        return math.isfinite(expected) and not math.isfinite(received)
    except OverflowError:  # an int too large for a float is not a figure any check expects
        return True


def verdict(received: list[Checked], solution: list[Checked]) -> str:
    """Empty when every check of the solution's run has a matching learner record that passes;
    otherwise the first reason, in learner terms (the solution's ``show_values`` decides whether
    values appear). Never raises."""
    learner = keyed(received)
    for key, reference in keyed(solution).items():
        mine = learner.get(key)
        if mine is None:
            return NOT_ALL_RAN
        if _not_a_number_like(mine.received, reference.expected):
            return f"{reference.name} should be a finite number, got {mine.received!r}"
        ok, message = judge(
            Checked(reference.name, reference.kind, mine.received, reference.expected, reference.options)
        )
        if not ok:
            if reference.options.get("hidden"):  # the cause key (for the gradebook) is the full diagnosis's
                return Diagnosed(_hidden_message(reference, mine.received), getattr(message, "cause", ""))
            return message
    return ""
