"""Learner-facing checks, used in the exercises' visible and hidden test cells.

Every check either prints one line starting with ``OK`` or raises :class:`CheckFailed` (an
``AssertionError``, so nbgrader and our grader count the cell as failed) whose message says what
was expected, what came back and the likely autograd cause. Checks never print test code.

Each check builds one :class:`Checked` record (name, kind, received, expected, options) and
judges it with :func:`judge`. The class grader uses the same two pieces from outside the learner's
process (NOTE 1 below).

PyTorch warnings raised while a check runs the learner's code are printed on stdout, not stderr:
plain nbgrader scores any stderr output in a test cell as 0, and a warning is not a wrong answer.

NOTE 1 (class grading). In a learner's own notebook, and under plain nbgrader, a test cell computes
its references itself and the checks compare at once. The class grader instead replaces each
``### BEGIN REFERENCE`` ... ``### END REFERENCE`` region of a test cell by names bound to
:data:`WITHHELD` (``autograder.grading.references``), installs a hook with :func:`report_to`, and
takes from the learner's process only what each check *received*. A check whose expected value or
options hold :data:`WITHHELD` reports its record and prints that it is checked when graded; the
grader then judges the learner's received value against the record of the same check (same name,
same occurrence in the cell) made when the instructor's solution ran, with :func:`judge`.
So no reference is ever computed in, or sent to, the process that runs learner code.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import traceback
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from .compare import diagnose, diagnose_bytes
from .explain import explain

__all__ = [
    "CheckFailed",
    "Checked",
    "WITHHELD",
    "at_most",
    "call",
    "tensor",
    "grads",
    "value",
    "nbytes",
    "predictions",
    "judge",
    "report_to",
    "warnings_to_stdout",
]


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
        options: how to judge: ``rtol``/``atol``/``allow_graph``/``causes`` (tensor, grads),
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


_hook: Callable[[Checked], None] | None = None


def report_to(hook: Callable[[Checked], None] | None) -> None:
    """Send every :class:`Checked` record made from now on to ``hook`` (None: stop). Used by the
    class grader in the process that runs a submission (NOTE 1)."""
    global _hook
    _hook = hook


class CheckFailed(AssertionError):
    """A check that did not pass; its message is written for the learner."""


@contextlib.contextmanager
def warnings_to_stdout():
    """Within the block, show warnings as ``Warning (Category): message`` lines on stdout."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for w in caught:
                first = (str(w.message).splitlines() or [""])[0]  # a warning's message may be empty
                print(f"Warning ({w.category.__name__}): {first}")


def call(fn: Callable, *args, **kwargs) -> Any:
    """Call a learner's function and turn its failures into learner-facing messages.

    Raises:
        CheckFailed: the function still raises ``NotImplementedError`` (not answered yet), or
            raised anything else (the message names the exception, not the test's code).
    """
    __tracebackhide__ = True  # IPython shows the learner's frames, not the checker's
    try:
        with warnings_to_stdout():
            return fn(*args, **kwargs)
    except NotImplementedError:
        raise CheckFailed(
            f"{getattr(fn, '__name__', 'the answer')} is not answered yet (it still raises NotImplementedError)."
        ) from None
    except CheckFailed:
        raise
    except Exception as error:  # noqa: BLE001 -- learner code may raise anything; report it, in one line
        first = str(error).splitlines()[0] if str(error) else ""
        explained = explain(error)  # an autograd error also gets its cause in learner terms
        cause = f"\n{explained.cause}" if explained.kind != "unknown" else ""
        where = _learner_line(error.__traceback__)
        raise CheckFailed(
            f"{getattr(fn, '__name__', 'your code')} raised {type(error).__name__}: {first}{where}{cause}"
        ) from None


# Frames from these folders are not the learner's: the course's package, PyTorch, the standard
# library and installed packages. (Under a class grader, a learner's cell is compiled with an
# IPython cell name such as "<ipython-input-3-...>" or "/tmp/ipykernel_12/....py".)
_NOT_LEARNER = tuple(
    os.path.dirname(os.path.abspath(path)) + os.sep
    for path in (__file__, torch.__file__, os.__file__, contextlib.__file__)
)


def _is_learner_file(filename: str) -> bool:
    if filename.startswith("<ipython-input-") or "ipykernel_" in filename:
        return True
    if filename.startswith("<") or "site-packages" in filename or "dist-packages" in filename:
        # other pseudo-files ("<frozen ...>", "<string>") are not shown; "<q1_answer>" (a cell run by
        # the course's tests) is a learner's cell
        return filename.startswith("<") and filename.endswith("_answer>")
    return not os.path.abspath(filename).startswith(_NOT_LEARNER)


def _learner_line(tb) -> str:
    """``"\n  raised in fn(), line N: <source>"`` for the innermost frame of ``tb`` that runs the
    learner's own code (a notebook cell, not the course's package, PyTorch or another library);
    empty when there is none."""
    found = ""
    for frame, lineno in traceback.walk_tb(tb):
        filename = frame.f_code.co_filename
        if not _is_learner_file(filename):
            continue
        text = linecache.getline(filename, lineno, frame.f_globals).strip()
        found = f"\n  raised in {frame.f_code.co_name}(), line {lineno}" + (f": {text}" if text else "")
    return found


def _judge_tensor(received, expected, name: str, options: dict) -> tuple[bool, str]:
    tolerance = {k: options[k] for k in ("rtol", "atol", "allow_graph", "causes") if k in options}
    result = diagnose(received, expected, name, **tolerance)
    if result.ok:
        return True, f"OK {name}"
    message = result.message
    if options.get("show_values", True) and isinstance(received, torch.Tensor) and received.numel() <= 8:
        message += f"\n  expected: {expected.detach().tolist()}\n  received: {received.detach().tolist()}"
    return False, message


def _judge_grads(received, expected, name: str, options: dict) -> tuple[bool, str]:
    if not isinstance(received, Mapping):
        return False, f"expected a dict with keys {sorted(expected)}, got {type(received).__name__}"
    problems = [
        message
        for key, want in expected.items()
        for ok, message in [_judge_tensor(received.get(key), want, key, options)]
        if not ok
    ]
    if options.get("hint") and problems:
        problems.append(options["hint"])
    return (False, "\n".join(problems)) if problems else (True, "OK " + ", ".join(expected))


def _judge_value(received, expected, name: str, options: dict) -> tuple[bool, str]:
    if type(received) is type(expected) and received == expected:
        return True, f"OK {name}"
    message = f"{name} is wrong"
    if options.get("show_values", True):
        message += f": expected {expected!r}, got {received!r}"
    hint = options.get("hint", "")
    if isinstance(hint, Mapping):  # {"too high": ..., "too low": ...}: the side the answer is on
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (received, expected))
        if numbers and ("too high" in hint or "too low" in hint):
            hint = hint.get("too high" if received > expected else "too low", "")
        else:  # {received value: hint}: what the learner's run did, reported as the received value
            hint = next(
                (text for key, text in hint.items() if type(key) is type(received) and key == received),
                hint.get("otherwise", ""),
            )
    return False, message + (f". {hint}" if hint else ".")


def _judge_nbytes(received, expected, name: str, options: dict) -> tuple[bool, str]:
    result = diagnose_bytes(
        received,
        expected,
        name,
        options.get("parts") or {},
        options.get("unsaved") or {},
        options.get("step"),
        options.get("extra") or {},
    )
    if result.ok:
        return True, f"OK {name}"
    shown = f"\n  expected: {expected} B\n  received: {received!r}" if options.get("show_values", True) else ""
    return False, result.message + shown


def _judge_predictions(received, expected, name: str, options: dict) -> tuple[bool, str]:
    if not isinstance(received, Mapping):
        return False, f"{name} should be a dict, got {type(received).__name__}"
    # an entry the reference does not have (a Node kind that is not in the graph) is wrong too
    wrong = [key for key in expected if key not in received or received[key] != expected[key]]
    wrong += [key for key in received if key not in expected]
    if wrong:
        right = sum(key in received and received[key] == expected[key] for key in expected)
        message = f"{right} of {len(expected)} {name} are right; rethink: {', '.join(map(str, wrong))}"
        reasons = options.get("reasons")
        reasons = reasons if isinstance(reasons, Mapping) else {}
        # each wrong entry's own pointer at the mechanism, computed from the run (never its value)
        message += "".join(f"\n  - {key}: {reasons[key]}" for key in wrong if isinstance(reasons.get(key), str))
        return False, message
    return True, f"OK all {len(expected)} {name}"


def _judge_at_most(received, expected, name: str, options: dict) -> tuple[bool, str]:
    if isinstance(received, bool) or not isinstance(received, (int, float)):
        return False, f"{name} should be a number, got {type(received).__name__}"
    if received <= expected:
        return True, f"OK {name}"
    shown = f": {received:g}, more than {expected:g}" if options.get("show_values", True) else ""
    hint = options.get("hint", "")
    return False, f"{name} is too high{shown}." + (f" {hint}" if hint else "")


_JUDGES = {
    "at_most": _judge_at_most,
    "tensor": _judge_tensor,
    "grads": _judge_grads,
    "value": _judge_value,
    "nbytes": _judge_nbytes,
    "predictions": _judge_predictions,
}


def judge(record: Checked) -> tuple[bool, str]:
    """Judge a record: ``(ok, message)``, the message starting with ``OK`` when ok. The one
    comparison both a check in the learner's notebook and the class grader use. Never raises
    for anything a learner's code produced."""
    try:
        return _JUDGES[record.kind](record.received, record.expected, record.name, record.options)
    except Exception as error:  # noqa: BLE001 -- a received value built to break comparisons is just wrong
        return False, f"{record.name} could not be compared ({type(error).__name__})"


def _check(record: Checked) -> None:
    """Report the record, then print OK or raise CheckFailed (or, class grading, defer: NOTE 1)."""
    __tracebackhide__ = True
    if _hook is not None:
        _hook(record)
    if record.withheld:
        print(f"{record.name}: checked when graded")
        return
    ok, message = judge(record)
    if not ok:
        raise CheckFailed(message)
    print(message)


def tensor(
    received,
    expected: torch.Tensor,
    name: str = "value",
    show_values: bool = True,
    causes: Mapping | None = None,
    **tolerance,
) -> None:
    """Check one tensor against a reference with :func:`autograder.compare.diagnose`.

    ``tolerance`` may hold ``rtol``/``atol``/``allow_graph``. With ``show_values`` the message
    includes both values (hidden tests pass False so hidden inputs stay hidden). ``causes`` names
    the likely cause of a difference in this question, by factor received / expected or by kind
    (``{0.5: "the factor 2 of the square's derivative forgotten", n: "...", "none": "..."}``, see
    :func:`~autograder.compare.diagnose`): plain numbers and strings, computed from the check's
    inputs (or inside a REFERENCE region when they depend on a reference).

    Raises:
        CheckFailed: with the diagnosis when the values differ.
    """
    __tracebackhide__ = True  # IPython shows the learner's frames, not the checker's
    options = dict(tolerance, show_values=show_values)
    if causes:
        options["causes"] = dict(causes)
    _check(Checked(name, "tensor", received, expected, options))


def grads(
    received: Mapping[str, Any],
    expected: Mapping[str, torch.Tensor],
    show_values: bool = True,
    name: str = "gradients",
    hint: str = "",
    causes: Mapping | None = None,
) -> None:
    """Check several named gradients (``{"w": tensor, "b": tensor}``); all must match. ``causes``
    (as for :func:`tensor`) applies to each gradient; ``hint`` follows the list of problems.

    Raises:
        CheckFailed: listing each name that is missing or wrong, with its diagnosis, then ``hint``.
    """
    __tracebackhide__ = True
    if not isinstance(received, Mapping):
        raise CheckFailed(f"expected a dict of gradients, got {type(received).__name__}")
    options = {"show_values": show_values, "hint": hint}
    if causes:
        options["causes"] = dict(causes)
    _check(Checked(name, "grads", dict(received), expected, options))


def value(
    received, expected, name: str = "value", hint: str | Mapping[Any, str] = "", show_values: bool = True
) -> None:
    """Check a plain value (an int, bool, string or tuple of them) for equality, type included
    (``True`` is not accepted for ``1``). ``hint`` is a sentence for the learner, or, for numbers,
    ``{"too high": ..., "too low": ...}``: the one that fits the received value is shown; or
    ``{received value: sentence, "otherwise": sentence}``, for a received value that describes
    what the learner's code did (``"the graph was kept after backward"``): the hint then says
    only what the submission shows.

    Raises:
        CheckFailed: naming the value, with both values when ``show_values``, then ``hint``.
    """
    __tracebackhide__ = True
    _check(Checked(name, "value", received, expected, {"hint": hint, "show_values": show_values}))


def nbytes(
    received,
    expected: int,
    name: str = "saved bytes",
    parts: dict[str, int] | None = None,
    show_values: bool = True,
    unsaved: dict[str, int] | None = None,
    step: int | None = None,
    extra: dict[str, int] | None = None,
) -> None:
    """Check a memory figure in bytes (an ``int``), exactly, with
    :func:`autograder.compare.diagnose_bytes`, which names what a difference is made of:
    ``parts``, bytes of each storage the reference saves, by name; ``unsaved``, bytes of tensors
    the computation makes but no Node saves; ``step``, bytes of one step's graph (a loop);
    ``extra``, bytes a known wrong run adds, named by what adds them.

    Raises:
        CheckFailed: with the diagnosis.
    """
    __tracebackhide__ = True
    _check(
        Checked(
            name,
            "nbytes",
            received,
            expected,
            {
                "parts": parts or {},
                "unsaved": unsaved or {},
                "step": step,
                "extra": extra or {},
                "show_values": show_values,
            },
        )
    )


def at_most(received, limit, name: str, hint: str = "", show_values: bool = True) -> None:
    """Check that a number (a memory figure in bytes, say) is at most ``limit``.

    Raises:
        CheckFailed: naming the figure, with both numbers when ``show_values``, then ``hint``.
    """
    __tracebackhide__ = True
    _check(Checked(name, "at_most", received, limit, {"hint": hint, "show_values": show_values}))


def predictions(
    received: Mapping[str, Any],
    expected: Mapping[str, Any],
    what: str = "predictions",
    reasons: Mapping[str, str] | None = None,
) -> None:
    """Check a dict of predicted facts (``{"y.is_leaf": False, ...}``) against computed ones.

    The message names the wrong entries but not their right values, so a learner can rethink them;
    ``reasons`` (``{key: sentence}``, computed from the run in the reference region) adds, for each
    wrong entry only, a sentence that points at the mechanism (which Node saved what, which tensor
    is a leaf, ...) without giving the value away.

    Raises:
        CheckFailed: when ``received`` is not a dict, or an entry is missing or wrong.
    """
    __tracebackhide__ = True
    if not isinstance(received, Mapping):
        raise CheckFailed(f"{what} should be a dict, got {type(received).__name__}")
    _check(Checked(what, "predictions", dict(received), expected, {"reasons": reasons or {}}))
