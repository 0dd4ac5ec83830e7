"""One checked value: the record a check makes, and the placeholder for a withheld reference.

A check (``autograder.check``) builds one :class:`Checked` per value it compares; in class grading
the record is what crosses from the learner's process to the grader (as JSON,
``autograder.grading.sandbox.values``), and :data:`WITHHELD` stands for every reference that never enters
that process (NOTE 1 in ``autograder/check/__init__.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Checked", "WITHHELD", "CHECKED_WHEN_GRADED"]

# What a check with a withheld reference prints in the learner's process, after its name; the
# feedback page drops these lines, since it shows the verdict itself.
CHECKED_WHEN_GRADED = ": checked when graded"


class _Withheld:
    """The placeholder the class grader binds to the names a REFERENCE region defines (NOTE 1).

    Calling it, indexing it or reading an attribute gives it back, so ``reference(x)[0]`` or
    ``measured["a"]`` still reach the check, which then only reports what it received."""

    _instance = None

    def __new__(cls):
        cls._instance = cls._instance or super().__new__(cls)
        return cls._instance

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, key):
        return self

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __repr__(self) -> str:
        return "<withheld: computed by the grader>"


WITHHELD = _Withheld()


def _holds_withheld(value: Any, depth: int = 0) -> bool:
    if value is WITHHELD:
        return True
    if depth > 5:
        return False
    if isinstance(value, Mapping):
        return any(_holds_withheld(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_withheld(v, depth + 1) for v in value)
    return False


@dataclass
class Checked:
    """One value a check compared: the crossing between a learner's process and the grader.

    Attributes:
        name: what the check calls the value (``"d loss / d h"``); together with its occurrence in
            the cell, the key by which the grader matches a learner's record to the solution's.
        kind: ``"tensor"``, ``"grads"``, ``"value"``, ``"nbytes"``, ``"at_most"`` or
            ``"predictions"``.
        received: what the learner's code produced (a tensor, a dict of tensors, an int, ...).
        expected: the reference, or :data:`WITHHELD` in class grading.
        options: how to judge: ``rtol``/``atol``/``allow_graph``/``causes`` (tensor, grads), ``tolerance_by`` (tensor),
            ``hint`` (value, grads, at_most), ``parts``/``unsaved``/``step`` (nbytes), ``reasons``
            (predictions), ``show_values`` (all).
    """

    name: str
    kind: str
    received: Any
    expected: Any
    options: dict = field(default_factory=dict)

    @property
    def withheld(self) -> bool:
        """True when the reference is not in this process (class grading, NOTE 1)."""
        return _holds_withheld(self.expected) or _holds_withheld(self.options)
