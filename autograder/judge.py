"""Judging a checked value: the one comparison both a check in the learner's notebook and the
class grader use (NOTE 1 in ``autograder/check.py``), by kind of record."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from .checked import Checked
from .compare import diagnose, diagnose_bytes

__all__ = ["judge"]


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
    problems: dict[str, list] = {}  # diagnosis (the first line without the name) -> [message, names]
    for key, want in expected.items():
        ok, message = _judge_tensor(received.get(key), want, key, options)
        if not ok:
            diagnosis = message.splitlines()[0].removeprefix(key)
            problems.setdefault(diagnosis, [message, []])[1].append(key)
    # One message per diagnosis: four parameters summed instead of averaged are one mistake.
    lines = [
        message + (f"\n  (the same for {', '.join(names[1:])})" if names[1:] else "")
        for message, names in problems.values()
    ]
    if options.get("hint") and lines:
        lines.append(options["hint"])
    return (False, "\n".join(lines)) if lines else (True, f"OK {name}: " + ", ".join(expected))


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
    # a number gets its unit; anything else (None, a tensor, a string) is shown as it came
    got = f"{received} B" if isinstance(received, int) and not isinstance(received, bool) else repr(received)
    shown = f"\n  expected: {expected} B\n  received: {got}" if options.get("show_values", True) else ""
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
