"""Learner-facing checks, used in the exercises' visible and hidden test cells.

Every check either prints one line starting with ``OK`` or raises :class:`CheckFailed` (an
``AssertionError``, so nbgrader and our grader count the cell as failed) whose message says what
was expected, what came back and the likely autograd cause. Checks never print test code.

PyTorch warnings raised while a check runs the learner's code are printed on stdout, not stderr:
plain nbgrader scores any stderr output in a test cell as 0, and a warning is not a wrong answer.
"""
from __future__ import annotations

import contextlib
import io
import warnings
from typing import Any, Callable, Mapping

import torch

from .compare import diagnose, diagnose_bytes
from .explain import explain

__all__ = ["CheckFailed", "call", "tensor", "grads", "value", "nbytes", "predictions",
           "warnings_to_stdout"]


# Set by the class grader in the process that runs a submission: every value a check compares is
# also reported to it, and compared again outside that process with the solution's value for the
# same check (autograder.grading.values). None everywhere else, where checks only compare.
_EXPORT = None


def _report(name: str, received, **tolerance) -> None:
    if _EXPORT is not None:
        _EXPORT(name, received, tolerance)


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
        raise CheckFailed(f"{getattr(fn, '__name__', 'the answer')} is not answered yet "
                          "(it still raises NotImplementedError).") from None
    except CheckFailed:
        raise
    except Exception as error:  # learner code may raise anything; report it, in one line
        first = str(error).splitlines()[0] if str(error) else ""
        explained = explain(error)  # an autograd error also gets its cause in learner terms
        cause = f"\n{explained.cause}" if explained.kind != "unknown" else ""
        raise CheckFailed(f"{getattr(fn, '__name__', 'your code')} raised "
                          f"{type(error).__name__}: {first}{cause}") from None


def tensor(received, expected: torch.Tensor, name: str = "value", show_values: bool = True,
           **tolerance) -> None:
    """Check one tensor against a reference with :func:`autograder.compare.diagnose`.

    ``tolerance`` may hold ``rtol``/``atol``/``allow_graph``. With ``show_values`` the message
    includes both values (hidden tests pass False so hidden inputs stay hidden).

    Raises:
        CheckFailed: with the diagnosis when the values differ.
    """
    __tracebackhide__ = True  # IPython shows the learner's frames, not the checker's
    _report(name, received, **tolerance)
    result = diagnose(received, expected, name, **tolerance)
    if result.ok:
        print(f"OK {name}")
        return
    message = result.message
    if show_values and isinstance(received, torch.Tensor) and received.numel() <= 8:
        message += f"\n  expected: {expected.detach().tolist()}\n  received: {received.detach().tolist()}"
    raise CheckFailed(message)


def grads(received: Mapping[str, Any], expected: Mapping[str, torch.Tensor],
          show_values: bool = True) -> None:
    """Check several named gradients (``{"w": tensor, "b": tensor}``); all must match.

    Raises:
        CheckFailed: listing each name that is missing or wrong, with its diagnosis.
    """
    __tracebackhide__ = True  # IPython shows the learner's frames, not the checker's
    if not isinstance(received, Mapping):
        raise CheckFailed(f"expected a dict with keys {sorted(expected)}, got {type(received).__name__}")
    problems = []
    for name, want in expected.items():
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                tensor(received.get(name), want, name, show_values=show_values)
        except CheckFailed as failure:
            problems.append(str(failure))
    if problems:
        raise CheckFailed("\n".join(problems))
    print("OK " + ", ".join(expected))


def value(received, expected, name: str = "value", hint: str = "", show_values: bool = True) -> None:
    """Check a plain value (an int, bool, string or tuple of them) for equality, type included
    (``True`` is not accepted for ``1``).

    Raises:
        CheckFailed: naming the value, with both values when ``show_values``, then ``hint``.
    """
    __tracebackhide__ = True  # IPython shows the learner's frames, not the checker's
    _report(name, received)
    if type(received) is type(expected) and received == expected:
        print(f"OK {name}")
        return
    message = f"{name} is wrong"
    if show_values:
        message += f": expected {expected!r}, got {received!r}"
    raise CheckFailed(message + (f". {hint}" if hint else "."))


def nbytes(received, expected: int, name: str = "saved bytes", parts: dict[str, int] | None = None,
           show_values: bool = True) -> None:
    """Check a memory figure in bytes (an ``int``), exactly, with
    :func:`autograder.compare.diagnose_bytes` (``parts``: bytes of each saved storage of the
    reference, by name, so an answer off by one of them is told which).

    Raises:
        CheckFailed: with the diagnosis.
    """
    __tracebackhide__ = True  # IPython shows the learner's frames, not the checker's
    _report(name, received)
    result = diagnose_bytes(received, expected, name, parts or {})
    if result.ok:
        print(f"OK {name}")
        return
    values = f"\n  expected: {expected} B\n  received: {received!r}" if show_values else ""
    raise CheckFailed(result.message + values)


def predictions(received: Mapping[str, Any], expected: Mapping[str, Any],
                what: str = "predictions") -> None:
    """Check a dict of predicted facts (``{"y.is_leaf": False, ...}``) against computed ones.

    The message names the wrong entries but not their right values, so a learner can rethink them.

    Raises:
        CheckFailed: when an entry is missing or wrong.
    """
    __tracebackhide__ = True  # IPython shows the learner's frames, not the checker's
    if not isinstance(received, Mapping):
        raise CheckFailed(f"{what} should be a dict, got {type(received).__name__}")
    _report(what, dict(received))
    wrong = [key for key in expected if key not in received or received[key] != expected[key]]
    if wrong:
        raise CheckFailed(f"{len(expected) - len(wrong)} of {len(expected)} {what} are right; "
                          f"rethink: {', '.join(wrong)}")
    print(f"OK all {len(expected)} {what}")
