"""Judging a checked value: the one comparison both a check in the learner's notebook and the
class grader use (NOTE 1 in ``autograder/check/__init__.py``), by kind of record."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import torch

from ..compare import diagnose, diagnose_bytes
from ..compare import evidence as compare_evidence
from ..compare.causes import key as cause_key
from ..compare.causes import keyed
from ..compare.evidence import facts_of
from ..compare.patterns import sequence_pattern
from .checked import Checked

__all__ = ["judge", "passed_fact"]


# Values are shown only when both tensors are this small: a long list of floats buries the diagnosis.
_SHOWN_AT_MOST = 8


def _with_reasons(message, reasons) -> str:
    """``message`` (a :class:`~autograder.compare.causes.Diagnosed`) carrying ``reasons``: ``[(reason, given), ...]``
    of the diagnoses behind it (``compare.Diagnosis``), each once, for a hidden test's message."""
    message.reasons = tuple(dict.fromkeys((r, tuple(g)) for r, g in reasons if r))
    return message


def _diagnose(received, expected, name: str, options: dict):
    tolerance = {k: options[k] for k in ("rtol", "atol", "allow_graph", "causes", "terms") if k in options}
    return diagnose(received, expected, name, facts=options.get("run facts"), **tolerance)


def _weighed_hint(entry, facts) -> tuple[str, bool]:
    """A hint (a text, a ``compare.evidence.cause`` or a list of them) weighed on the learner's run."""
    return compare_evidence.said(entry, facts) if entry else ("", True)


def _shown(received, expected, options: dict) -> str:
    """Both values, as two indented lines, when ``show_values`` and both hold at most
    ``_SHOWN_AT_MOST`` numbers; otherwise empty."""
    if (
        options.get("show_values", True)
        and isinstance(received, torch.Tensor)
        and max(received.numel(), expected.numel()) <= _SHOWN_AT_MOST
    ):
        return f"\n  expected: {expected.detach().tolist()}\n  received: {received.detach().tolist()}"
    return ""


def _tagged(received) -> tuple:
    """A record's value as ``check.tensor`` (with ``tolerance_by``) and ``check.grads`` (with
    ``causes_by``) send it: ``(what the learner's run chose or did, the value)``; ``(None,
    received)`` when it is no such pair (a forged record: judged as it is)."""
    return received if isinstance(received, tuple) and len(received) == 2 else (None, received)


def _judge_tensor(received, expected, name: str, options: dict) -> tuple[bool, str]:
    by = options.get("tolerance_by")
    if isinstance(by, Mapping):  # the tolerance follows the learner's choice (check.tensor's choice)
        choice, value = _tagged(received)
        if not isinstance(choice, str) or not isinstance(by.get(choice), Mapping):
            allowed = " or ".join(map(str, by))
            used = f"{name}: the question allows {allowed}; your code used {str(choice)[:60]}."
            return False, keyed(used, "tensor.choice")
        received, options, received_choice = value, {**options, **by[choice]}, choice
    result = _diagnose(received, expected, name, options)
    if result.ok:
        return True, f"OK {name}"
    chosen = f"\n  (the tolerance of {received_choice}, which your code chose)" if isinstance(by, Mapping) else ""
    message = result.message + chosen + _shown(received, expected, options)
    return False, _with_reasons(
        keyed(message, result.cause or f"tensor.{result.kind}"), [(result.reason, result.given)]
    )


_OBSERVED = re.compile(r" Observed: .*?[.](?= |\n|$)")  # the pattern one tensor's values show (compare.patterns)


def _cause(result, received, expected, name: str) -> str:
    """What a gradient's diagnosis says apart from its name and, for a shape, its shapes, or for a
    mismatch, its relative error: gradients wrong for one reason have the same cause (each lacking
    the batch dimension, their shapes differ; each missing a local derivative, their errors do)."""
    first = result.message.splitlines()[0].removeprefix(name)
    if result.kind == "shape":
        shapes = f" has shape {tuple(received.shape)}, expected {tuple(expected.shape)}"
        first = first.replace(shapes, " has shape ?", 1)
    if result.kind == "mismatch":  # its reason: the cause and what kind of values differ, without the values (nor
        # what each one's values show: gradients wrong for one reason show different patterns)
        return f"mismatch: {_OBSERVED.sub('', result.reason)}"
    return first


def _same_factor(results: dict) -> dict:
    """``{key: other key}`` for each gradient that differs by no cause of its own (a mismatch: too few elements to
    show one) by the very factor another gradient's elements all show (``tensor.scaled``: a count written as a
    number scales every gradient alike): it is that gradient's mistake."""
    scaled = {key: r.factor for key, r in results.items() if r.cause == "tensor.scaled"}
    return {
        key: other
        for key, r in results.items()
        if r.kind == "mismatch" and r.factor
        for other in [next((k for k, f in scaled.items() if abs(r.factor - f) <= 1e-3 * abs(f)), None)]
        if other is not None
    }


def _grads_hint(hint, kinds: list[str], facts=None) -> str:
    """``hint`` as given (a sentence: always), or, for a mapping ``{kind: sentence}``, the sentences
    of the kinds found (``"otherwise"``: when none of them has one). A sentence may be a cause with its
    evidence (``compare.evidence``), or a list of them: weighed on the learner's run."""
    if not isinstance(hint, Mapping) or compare_evidence.is_cause(hint):  # a cause is a mapping too: one sentence
        return _weighed_hint(hint, facts)[0]
    found = [hint[kind] for kind in dict.fromkeys(kinds) if isinstance(hint.get(kind), (str, list, Mapping))]
    said = [text for text in (_weighed_hint(entry, facts)[0] for entry in found) if text]
    return " ".join(said) if said else _weighed_hint(hint.get("otherwise", ""), facts)[0]


def _claims(hint) -> list:
    """The claims with a test of their own (``compare.evidence``) among a hint's entries, at any depth."""
    if compare_evidence.is_cause(hint):
        return [hint]
    if isinstance(hint, Mapping):
        return [c for entry in hint.values() for c in _claims(entry)]
    return [c for entry in hint for c in _claims(entry)] if isinstance(hint, list) else []


def _facts(options: dict) -> dict:
    return options.get("run facts") if isinstance(options.get("run facts"), Mapping) else {}


def _judge_grads(received, expected, name: str, options: dict) -> tuple[bool, str]:
    by = options.get("causes_by")
    if isinstance(by, Mapping):  # the causes the learner's run adds, by what the check observed it do (check.grads)
        observed, received = _tagged(received)
        causes = options.get("causes") if isinstance(options.get("causes"), Mapping) else {}
        added = by.get(observed) if isinstance(observed, str) else None
        options = {**options, "causes": {**causes, **(added if isinstance(added, Mapping) else {})}}
    if not isinstance(received, Mapping):
        return False, f"expected a dict with keys {sorted(expected)}, got {type(received).__name__}"
    problems: dict[str, list] = {}  # cause -> [kind, message of the first, names, cause key]
    reasons = []  # what a hidden test may say of each (no parameter's name: a hidden model's names are its own)
    results = {key: _diagnose(received[key], want, key, options) for key, want in expected.items() if key in received}
    joins = _same_factor(results)
    for key, want in expected.items():
        if key in joins:
            continue
        if key not in received:
            kind, message, cause, cause_id = "missing", f"{key} is missing from the dict", "missing", "grads.missing"
            reasons.append(("is missing from the dict.", ()))
        else:
            result = results[key]
            if result.ok:
                continue
            kind, cause = result.kind, _cause(result, received[key], want, key)
            message = result.message + _shown(received[key], want, options)
            cause_id = result.cause or f"tensor.{kind}"
            reasons.append((result.reason, result.given))
        problems.setdefault(cause, [kind, message, [], cause_id])[2].append(key)
    for key, scaled in joins.items():  # said with the gradient whose elements show the factor
        problems[_cause(results[scaled], received[scaled], expected[scaled], scaled)][2].append(key)
    if not problems:
        return True, f"OK {name}: " + ", ".join(expected)
    # One message per cause: four parameters summed instead of averaged are one mistake.
    lines = [  # what one gradient's values show is its own: not said for a group, which "the same" would extend
        (_OBSERVED.sub("", message) + f"\n  (the same for {', '.join(names[1:])})") if names[1:] else message
        for _, message, names, _ in problems.values()
    ]
    right = [str(key) for key, r in results.items() if r.ok]  # which gradients are right locates the mistake
    if right:
        lines.append(f"  (right: {', '.join(right[:_SHOWN_AT_MOST])}{', ...' if len(right) > _SHOWN_AT_MOST else ''})")
    others = [str(key)[:40] for key in received if key not in expected]  # the learner's keys, cut short
    if "missing" in problems and others:
        listed = ", ".join(others[:_SHOWN_AT_MOST]) + (", ..." if len(others) > _SHOWN_AT_MOST else "")
        lines.append(f"  (the dict's other keys: {listed})")
    hint = _grads_hint(options.get("hint"), [kind for kind, _, _, _ in problems.values()], options.get("run facts"))
    first = next(iter(problems.values()))[3]  # the first wrong gradient's cause names the message
    if first.count(".") == 1 and hint and compare_evidence.weigh(_claims(options.get("hint")), _facts(options))[0]:
        first = cause_key(first, hint)  # a kind alone ("tensor.mismatch"): the cause the run showed names it
    return False, _with_reasons(keyed("\n".join(lines + ([hint] if hint else [])), first), reasons)


def _judge_value(received, expected, name: str, options: dict) -> tuple[bool, str]:
    if type(received) is type(expected) and received == expected:
        return True, f"OK {name}"
    message = f"{name} is wrong"
    if options.get("show_values", True):
        message += f": expected {expected!r}, got {received!r}"
    hint, selected = options.get("hint", ""), False  # selected: by the received value, or which way it is off
    if isinstance(hint, Mapping) and not compare_evidence.is_cause(hint):  # {"too high": ..., "too low": ...}
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (received, expected))
        if numbers and ("too high" in hint or "too low" in hint):
            hint, selected = hint.get("too high" if received > expected else "too low", ""), True
        else:  # {received value: hint}: what the learner's run did, reported as the received value
            found = [text for key, text in hint.items() if type(key) is type(received) and key == received]
            hint, selected = (found[0], True) if found else (hint.get("otherwise", ""), False)
    weighed, named = _weighed_hint(hint, options.get("run facts"))
    otherwise = options.get("hint", {}).get("otherwise", "") if isinstance(options.get("hint"), Mapping) else ""
    if (
        not weighed and otherwise and hint is not otherwise
    ):  # the run contradicts each cause of that value: the general hint
        weighed, named = _weighed_hint(otherwise, options.get("run facts"))
    hint = weighed
    if not named and not options.get("show_values", True):  # the symptom, said: what the learner's run gave
        message += f" (your code gave {str(received)[:200]})"
    seen = "" if selected else sequence_pattern(received, expected, bool(options.get("show_values", True)))
    seen = f" Observed: {seen}." if seen else ""  # what a list shows (an order, a shift), where no value selected it
    message = message + (f". {hint}" if hint else ".") + seen
    return False, keyed(message, cause_key("value", hint if named else name))


def _probes(received, options: dict) -> tuple:
    """``(the figure, the probes)``: a record made with probes carries the learner's figures at the probes' inputs
    with its value (``check.nbytes``); each probe is then the solution's facts there with the learner's figure."""
    if not options.get("probed"):
        return received, []
    figure, others = received if isinstance(received, tuple) and len(received) == 2 else (received, ())
    facts = options.get("probes") if isinstance(options.get("probes"), list) else []
    others = others if isinstance(others, (tuple, list)) else ()
    return figure, [{**f, "received": r} for f, r in zip(facts, others) if isinstance(f, Mapping)]


def _judge_nbytes(received, expected, name: str, options: dict) -> tuple[bool, str]:
    received, probes = _probes(received, options)
    result = diagnose_bytes(
        received,
        expected,
        name,
        options.get("parts") or {},
        options.get("unsaved") or {},
        options.get("step"),
        options.get("extra") or {},
        options.get("element_size"),
        options.get("element_sizes") or {},
        options.get("views") or {},
        probes,
        options.get("saved") if isinstance(options.get("saved"), bool) else None,
        options.get("saved_by") or {},
    )
    if result.ok:
        return True, f"OK {name}"
    cause = result.cause or f"bytes.{result.kind}"
    # a number gets its unit; anything else (None, a tensor, a string) is shown as it came
    got = f"{received} B" if isinstance(received, int) and not isinstance(received, bool) else repr(received)
    shown = f"\n  expected: {expected} B\n  received: {got}" if options.get("show_values", True) else ""
    unsized = _breakdown(result.kind, {**options, "show_values": False})  # the parts' names, never their sizes
    parts = options.get("parts") if unsized else {}
    return False, _with_reasons(
        keyed(result.message + _breakdown(result.kind, options) + shown, cause),
        [(result.reason + unsized, result.given + tuple(str(part) for part in parts))],
    )


def _breakdown(kind: str, options: dict) -> str:
    """For a difference made of no known part: what the reference figure is made of, part by part
    (sizes only where values are shown: together they give the expected figure)."""
    parts = options.get("parts") or {}
    if kind not in ("mismatch", "multiple", "fraction", "ambiguous") or not isinstance(parts, Mapping) or not parts:
        return ""
    sized = options.get("show_values", True)
    listed = "; ".join(f"{part} ({size} B)" if sized else str(part) for part, size in parts.items())
    return f"\n  The expected figure is made of: {listed}."


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
        # the wrong entries are the cause: each has its own reason (entries are the question's names)
        names = sorted(_entry(key) for key in wrong)
        entries = "+".join(names[:3]) + ("+more" if len(names) > 3 else "")
        return False, keyed(message, f"{cause_key('prediction', name)}.{entries}")
    return True, f"OK all {len(expected)} {name}"


def _judge_at_most(received, expected, name: str, options: dict) -> tuple[bool, str]:
    if isinstance(received, bool) or not isinstance(received, (int, float)):
        return False, f"{name} should be a number, got {type(received).__name__}"
    if not math.isfinite(received):  # -inf is below every bound: a forged or broken figure passes nothing
        return False, f"{name} should be a finite number, got {received!r}"
    if received <= expected:
        return True, f"OK {name}"
    shown = f": {received:g}, more than {expected:g}" if options.get("show_values", True) else ""
    hint, named = _weighed_hint(options.get("hint", ""), options.get("run facts"))
    return False, keyed(
        f"{name} is too high{shown}." + (f" {hint}" if hint else ""),
        cause_key("value.too_high", hint if hint and named else name),
    )


def _entry(name) -> str:
    """A prediction's entry as part of a cause key: its name, other characters than letters,
    digits and ``.`` as ``_`` (``"D: h.requires_grad"``: ``D_h.requires_grad``)."""
    return re.sub(r"[^\w.]+", "_", str(name)[:40]).strip("_") or "_"


_JUDGES = {
    "at_most": _judge_at_most,
    "tensor": _judge_tensor,
    "grads": _judge_grads,
    "value": _judge_value,
    "nbytes": _judge_nbytes,
    "predictions": _judge_predictions,
}


def passed_fact(record: Checked) -> dict:
    """What a check that passed tells the later checks of its cell: ``{its name: (the value it received,)}``, for a
    ``check.value`` of a plain value (an observation the cell's OK line stated). A cause of a later failure that
    names that check (``compare.evidence.shown(text, name, ...)``) is weighed on it, so a failure never states a
    cause the OK line above it contradicts. ``{}`` for any other record."""
    received = record.received
    if record.kind != "value":
        return {}
    if record.options.get("facts") and isinstance(received, tuple) and len(received) == 2:
        received = received[1]
    return {record.name: (received,)} if isinstance(received, (str, int, float, bool, tuple)) else {}


def _with_warned(message, warned) -> str:
    """A failure's ``message`` with what was warned while the learner's code ran (``check.call``'s ``warned``: an
    observation of the run, never a cause), its numbers left out (they may be a hidden test's sizes)."""
    if not isinstance(warned, list) or not warned or not all(isinstance(w, str) for w in warned):
        return message
    said = "; ".join(re.sub(r"\d+", "…", w[:300]).replace("[", "").replace("]", "") for w in warned[:2])
    return _with_reasons(
        keyed(f"{message}\n  While your code ran, Python warned: {said}", getattr(message, "cause", "")),
        getattr(message, "reasons", ()),
    )


def judge(record: Checked, passed: dict | None = None) -> tuple[bool, str]:
    """Judge a record: ``(ok, message)``, the message starting with ``OK`` when ok. The one
    comparison both a check in the learner's notebook and the class grader use; ``passed``: the facts the checks
    that passed before it in the same cell state (:func:`passed_fact`). Never raises for anything a learner's
    code produced."""
    try:
        received, options = record.received, record.options
        facts = {}
        if options.get("facts"):  # the value comes with the facts the check observed of the learner's run
            facts, received = received if isinstance(received, tuple) and len(received) == 2 else ({}, received)
        if options.get("facts") or passed:
            options = {**options, "run facts": {**facts_of(passed or {}), **facts_of(facts)}}
        ok, message = _JUDGES[record.kind](received, record.expected, record.name, options)
        return ok, message if ok else _with_warned(message, options.get("warned"))
    except Exception as error:  # noqa: BLE001 -- a received value built to break comparisons is just wrong
        return False, keyed(f"{record.name} could not be compared ({type(error).__name__})", "not_comparable")
