"""The verdict on one test cell: the learner's checked values against the solution's records.

Records are matched by name: the k-th check called ``"d loss / d h"`` in the learner's run of a
cell is judged against the k-th check of that name in the solution's run of the same cell, with
the solution's kind, expected value and options (``autograder.check.judge``). What the learner's
process said about kinds, expected values or options plays no part.
"""

from __future__ import annotations

from collections import Counter

from ..checked import Checked
from ..judge import judge

__all__ = ["keyed", "verdict", "NOT_ALL_RAN"]

NOT_ALL_RAN = (
    "the checks of this question did not all run (the notebook changed how cells or checks run), so it earns no points"
)


def keyed(records: list[Checked]) -> dict[tuple[str, int], Checked]:
    """``{(name, occurrence): record}``: occurrence counts from 0 for each name, in call order."""
    seen: Counter = Counter()
    result = {}
    for record in records:
        result[(record.name, seen[record.name])] = record
        seen[record.name] += 1
    return result


def verdict(received: list[Checked], solution: list[Checked]) -> str:
    """Empty when every check of the solution's run has a matching learner record that passes;
    otherwise the first reason, in learner terms (the solution's ``show_values`` decides whether
    values appear). Never raises."""
    learner = keyed(received)
    for key, reference in keyed(solution).items():
        mine = learner.get(key)
        if mine is None:
            return NOT_ALL_RAN
        ok, message = judge(
            Checked(reference.name, reference.kind, mine.received, reference.expected, reference.options)
        )
        if not ok:
            return message
    return ""
