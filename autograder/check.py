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

from .compare import diagnose

__all__ = ["CheckFailed", "call", "tensor", "grads", "predictions", "warnings_to_stdout"]


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
                print(f"Warning ({w.category.__name__}): {str(w.message).splitlines()[0]}")


def call(fn: Callable, *args, **kwargs) -> Any:
    """Call a learner's function and turn its failures into learner-facing messages.

    Raises:
        CheckFailed: the function still raises ``NotImplementedError`` (not answered yet), or
            raised anything else (the message names the exception, not the test's code).
    """
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
        raise CheckFailed(f"{getattr(fn, '__name__', 'your code')} raised "
                          f"{type(error).__name__}: {first}") from None


def tensor(received, expected: torch.Tensor, name: str = "value", show_values: bool = True,
           **tolerance) -> None:
    """Check one tensor against a reference with :func:`autograder.compare.diagnose`.

    ``tolerance`` may hold ``rtol``/``atol``/``allow_graph``. With ``show_values`` the message
    includes both values (hidden tests pass False so hidden inputs stay hidden).

    Raises:
        CheckFailed: with the diagnosis when the values differ.
    """
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


def predictions(received: Mapping[str, Any], expected: Mapping[str, Any],
                what: str = "predictions") -> None:
    """Check a dict of predicted facts (``{"y.is_leaf": False, ...}``) against computed ones.

    The message names the wrong entries but not their right values, so a learner can rethink them.

    Raises:
        CheckFailed: when an entry is missing or wrong.
    """
    if not isinstance(received, Mapping):
        raise CheckFailed(f"{what} should be a dict, got {type(received).__name__}")
    wrong = [key for key in expected if key not in received or received[key] != expected[key]]
    if wrong:
        raise CheckFailed(f"{len(expected) - len(wrong)} of {len(expected)} {what} are right; "
                          f"rethink: {', '.join(wrong)}")
    print(f"OK all {len(expected)} {what}")
