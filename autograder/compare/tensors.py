"""``diagnose``: a learner's tensor (a value, a gradient) compared with the reference, and the autograd
mistake behind a difference named (see the package's docstring for its kinds)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from .causes import key as cause_key
from .diagnosis import Diagnosis, tolerances
from .evidence import NON_FINITE, because, cause, facts_of, said
from .factors import _cause_for_factor, _factor_words, _rel_error, _scale_factor, _whole, _worst_element
from .patterns import combination, pattern
from .shapes import _shape_message, shape_read

__all__ = ["diagnose"]

# What a difference's kind shows, said as the question that decides between its possible causes: none of these
# is stated as the cause unless the run shows it (compare.evidence)
ZEROS_QUESTION = (
    "which path from the loss to it carries no gradient? One cut from the graph (.detach(), .data, torch.no_grad()), "
    "an op with no gradient (argmax, round, a comparison), or a parameter the loss never reaches; or was the "
    "gradient zeroed after backward (in place, or through a tensor that shares its storage)?"
)
NONE_QUESTION = (
    "is None: it holds no gradient. Did a backward() run after the last zero_grad(), and "
    "does its path from the loss reach this tensor as a leaf that requires grad (not cut by detach(), .data or "
    "torch.no_grad(); not a copy made by .to() or a cast; a non-leaf needs .retain_grad())?"
)
SIGN_QUESTION = "Is the sign of the loss, or of one chain-rule factor, the other way round?"
# all zeros, where the check observed what backward() ran on (observe.backward_calls): said only where it shows it
ZERO_LOSS_CAUSE = cause(
    "every backward() of your run ran on a loss that is exactly 0, so every gradient is 0: what made the loss 0 (a "
    "factor that is 0, such as an integer division len(xb) // n)?",
    "every backward on a zero loss",
)


def _multiple_question(k: int | None) -> str:
    left = f"a division by {k} left out" if k else "a division left out"
    # the scale first: it fits any value; accumulation only a gradient read from .grad, so it is asked as such
    return (
        f"Was a sum taken where a mean was meant, or {left}; or, for a gradient read from .grad, did "
        f"{k or 'that many'} backward passes add into it without zeroing?"
    )


def _fraction_question(k: int | None) -> str:
    by = f"by {k}" if k else "by that number"
    return f"Was it divided {by} once too often, or a mean taken where a sum was meant?"


# a constant factor that is no whole number is said only when this many elements of the reference agree on it
_AGREEING = 3


def _weighed(entry, facts) -> tuple[str, bool] | None:
    """A question's cause for a difference weighed on the learner's run (``compare.evidence.said``): ``(text,
    named)``, or None when the run contradicts every one."""
    text, named = said(entry, facts)
    return (text, named) if text else None


def _run_facts(facts, received: torch.Tensor) -> dict:
    """The facts of the learner's run a check reported, with what the received value itself shows."""
    found = facts_of(facts)
    if received.is_floating_point() or received.is_complex():
        found[NON_FINITE] = (not bool(torch.isfinite(received).all()),)
    return found


def _index(flat: int, shape) -> str:
    """A flat index as the tensor's own index: ``(1, 2)``, or ``3`` for one dimension."""
    where = []
    for size in reversed(list(shape)):
        flat, rest = divmod(flat, size)
        where.insert(0, rest)
    return str(where[0]) if len(where) == 1 else str(tuple(where))


def _observed(r: torch.Tensor, e: torch.Tensor, rtol: float, atol: float) -> tuple[str, str]:
    """What the difference is made of, observed: ``(said with values, said without)``: how many elements are out of
    tolerance and the first of them (with values), and the NaN and inf the received value holds where the expected
    one is finite (the second form gives no value or index of a hidden test)."""
    bad = ~torch.isclose(r, e, rtol=rtol, atol=atol, equal_nan=True)
    count, total = int(bad.sum()), bad.numel()
    seen = []
    if total > 1 and count:
        first = int(bad.reshape(-1).nonzero()[0])
        got, want = (
            f"{v:.4g}".replace("nan", "NaN") for v in (r.reshape(-1)[first].item(), e.reshape(-1)[first].item())
        )
        seen.append(
            f"elements out of tolerance: {count} of {total}, the first at index {_index(first, r.shape)} ({got} where "
            f"{want} is expected)"
        )
    new = ~torch.isfinite(r) & torch.isfinite(e)
    kinds = [(int((new & torch.isnan(r)).sum()), "NaN"), (int((new & torch.isinf(r)).sum()), "inf")]
    odd = " and ".join(f"{k} {what}" for k, what in kinds if k)
    unseen = ""
    if odd:
        overflow = " (an overflow or a division by 0 on the way?)" if kinds[1][0] else ""
        nan = " (0/0, inf - inf or 0 * inf on the way?)" if kinds[0][0] else ""
        unseen = f" It holds {'NaN' if kinds[0][0] else 'inf'} where the expected values are finite{nan or overflow}."
        seen.append(f"it holds {odd} where the expected values are finite{nan or overflow}")
    said = f" {seen[0][0].upper()}{seen[0][1:]}" + "".join(f"; {x}" for x in seen[1:]) + "." if seen else ""
    return said, unseen


def diagnose(
    received,
    expected: torch.Tensor,
    name: str = "value",
    rtol: float | None = None,
    atol: float | None = None,
    allow_graph: bool = False,
    causes: Mapping | None = None,
    facts: Mapping | None = None,
    terms: Mapping | None = None,
) -> Diagnosis:
    """Compare ``received`` with ``expected`` and explain any difference in autograd terms.

    Args:
        received: what the learner produced: a tensor, a Python number, ``None`` or anything else.
        expected: the reference tensor (any shape, floating or integer dtype, any device).
        name: how to call the value in messages (``"w.grad"``).
        rtol, atol: override the dtype's tolerances (:func:`tolerances`).
        allow_graph: accept a received tensor that still requires grad (by default a value still
            attached to a graph is reported, since checks ask for plain values).
        causes: the likely cause of a difference *in this question*, by factor received / expected
            (number keys: ``{0.5: "the factor 2 of the square's derivative forgotten", n: ...}``)
            or by kind (``"none"``, ``"zeros"``, ``"attached"``, ``"shape"``, ``"mismatch"``);
            it replaces the generic cause of the module docstring. A factor with a cause is
            reported even when it is not a whole number or its inverse. A factor's cause, or the
            ``"zeros"`` or ``"mismatch"`` one, may be a ``compare.evidence.cause`` (or a list of
            texts and causes): named only when its evidence holds on ``facts``.
        facts: what the check observed the learner's run do (``compare.evidence``).
        terms: the question's inputs of ``expected``'s shape, by name (``{"online": w1, "target before": w0}``):
            a value that differs by no pattern is said as the weighted sum of them it is, where it is one.

    Returns:
        A :class:`Diagnosis`; this function does not raise for any ``received``.
    """
    expected = expected.detach()
    causes = dict(causes) if isinstance(causes, Mapping) else {}
    if received is None:
        if "none" in causes:
            return Diagnosis(
                False,
                "none",
                f"{name} is None: {causes['none']}",
                cause=cause_key("tensor.none", causes["none"]),
                reason=f"is None: {causes['none']}",
                given=(str(causes["none"]),),
            )
        # nothing observed tells which of NONE_GRAD_CAUSES it is: what is seen, and the question that decides
        return Diagnosis(False, "none", f"{name} {NONE_QUESTION}", reason=NONE_QUESTION)
    if isinstance(received, (int, float, bool)) and expected.numel() == 1:
        try:
            converted = torch.tensor(received, dtype=expected.dtype, device=expected.device)
        except (RuntimeError, ValueError, OverflowError):  # nan, inf or 2**70 for an integer dtype
            converted = None
        exact = not (expected.is_floating_point() or expected.is_complex())
        if converted is None or (exact and converted.item() != received):  # 2.5 is not the integer 2
            return Diagnosis(
                False,
                "mismatch",
                f"{name} is {received!r}, not a value of dtype {expected.dtype}.",
                reason="is not a value of the expected dtype.",
            )
        received = converted
    if not isinstance(received, torch.Tensor):
        return Diagnosis(
            False,
            "type",
            f"{name} should be a tensor of shape {tuple(expected.shape)}, got a {type(received).__name__}.",
            reason=f"should be a tensor, got a {type(received).__name__}.",
        )
    if received.requires_grad and not allow_graph:
        # no grad_fn here need not mean a leaf: a tensor sent back from the sandbox loses its grad_fn
        where = f"grad_fn={type(received.grad_fn).__name__}, " if received.grad_fn else ""
        fix = causes.get("attached", "Return a plain value: .detach() (or .item() for a number).")
        return Diagnosis(
            False,
            "attached",
            f"{name} is still attached to the autograd graph ({where}requires_grad=True). {fix}",
            cause=cause_key("tensor.attached", causes["attached"]) if "attached" in causes else "",
            reason=f"is still attached to the autograd graph (requires_grad=True). {fix}",
            given=(str(fix),) if "attached" in causes else (),
        )
    if tuple(received.shape) != tuple(expected.shape):
        got, want = tuple(received.shape), tuple(expected.shape)
        if "shape" in causes:
            message = f"{name} has shape {got}, expected {want}: {causes['shape']}"
            own = f"has the wrong shape: {causes['shape']}"
            return Diagnosis(
                False,
                "shape",
                message,
                cause=cause_key("tensor.shape", causes["shape"]),
                reason=own,
                given=(str(causes["shape"]),),
            )
        message, why = _shape_message(name, got, want)
        message, reason = shape_read(message, why, received, expected)  # what its values show, where they tell
        return Diagnosis(False, "shape", message, cause=f"tensor.shape.{why}", reason=reason)
    for kind, got, want in (("dtype", received.dtype, expected.dtype), ("device", received.device, expected.device)):
        if got != want:
            return Diagnosis(False, kind, f"{name} has {kind} {got}, expected {want}.", reason=f"has the wrong {kind}.")
    r, e = received.detach(), expected
    if not r.is_floating_point() and not r.is_complex():
        same = torch.equal(r, e)
        return Diagnosis(
            same,
            "ok" if same else "mismatch",
            f"{name} is correct." if same else f"{name} differs from the expected values.",
            reason="" if same else "differs from the expected values.",
        )
    default_rtol, default_atol = tolerances(e.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    rel = _rel_error(r, e)
    if torch.allclose(r, e, rtol=rtol, atol=atol, equal_nan=True):
        return Diagnosis(True, "ok", f"{name} is correct (relative error {rel:.1e}).", rel)
    facts = _run_facts(facts, r)
    if not bool(r.any()) and bool(e.any()):
        told = _weighed(causes["zeros"], facts) if "zeros" in causes else None
        zero_loss = _weighed(ZERO_LOSS_CAUSE, facts)  # stated only where it holds, never listed as a guess
        told = told if told and told[1] else zero_loss if zero_loss and zero_loss[1] else told
        if told:
            cause = told[0]
        else:  # nothing observed tells which path carried no gradient: the question that decides, no cause
            cause = because("", (), ZEROS_QUESTION).removeprefix(". ")
        own = cause_key("tensor.zeros", cause) if told and told[1] else ""
        return Diagnosis(
            False,
            "zeros",
            f"{name} is all zeros but should not be: {cause}",
            rel,
            cause=own,
            reason=f"is all zeros but should not be: {cause}",
            given=(str(cause),) if own else (),
        )
    s = _scale_factor(r, e, rtol, atol)
    told = None
    if s is not None and s != 0 and (entry := _cause_for_factor(s, causes)) is not None:
        told = _weighed(entry, facts)
    if told and not told[1]:  # the factor of a known mistake, but its mechanism not shown by the run: a symptom
        kind = "sign" if _whole(s) == -1 else "multiple" if abs(s) > 1 else "fraction"
        return Diagnosis(
            False,
            kind,
            f"{name} {_factor_words(s)} the expected value. {told[0]}",
            rel,
            s,
            cause=f"tensor.{kind}",
            reason=f"is a constant multiple of the expected value. {told[0]}",
            given=(told[0],),
        )
    if told:
        cause = told[0]
        kind = "sign" if _whole(s) == -1 else "multiple" if abs(s) > 1 else "fraction"
        message = f"{name} {_factor_words(s)} the expected value: {cause}"
        # which cause the factor picked is said; the factor itself (7 for N = 7 rows) is not
        how = "has the opposite sign of" if kind == "sign" else "is a constant multiple of"
        return Diagnosis(
            False,
            kind,
            message,
            rel,
            s,
            cause=cause_key(f"tensor.{kind}", cause),
            reason=f"{how} the expected value: {cause}",
            given=(cause,),
        )
    if s is not None and _whole(s) == -1:
        said = because("", (), SIGN_QUESTION).removeprefix(". ")
        return Diagnosis(
            False,
            "sign",
            f"{name} has the opposite sign of the expected value. {said}",
            rel,
            s,
            reason=f"has the opposite sign of the expected value. {said}",
        )
    if s is not None and (k := _whole(s)) and k >= 2:
        # a second backward into a kept .grad and a loss k times too large give the same figure: both asked (a
        # question that may run several backward passes by design cannot tell them apart from the facts)
        message = because(f"{name} is exactly {k}x the expected value", (), _multiple_question(k))
        reason = because("is a whole multiple of the expected value", (), _multiple_question(None))
        return Diagnosis(False, "multiple", message, rel, s, reason=reason)
    if s and abs(s) < 1 and (k := _whole(1 / s)) and k >= 2:  # s == 0: r is ~0 but not exactly
        return Diagnosis(
            False,
            "fraction",
            because(f"{name} is exactly 1/{k} of the expected value", (), _fraction_question(k)),
            rel,
            s,
            reason=because("is the expected value divided by a whole number", (), _fraction_question(None)),
        )
    # one factor fits every element, but no whole one: evidence only where several elements agree on it (any
    # wrong number is some multiple of a one-element reference)
    if s and math.isfinite(s) and abs(s - 1) > 1e-3 and int((e != 0).sum()) >= _AGREEING:  # ~1: precision
        said = (
            "a constant factor, the same for every element, but no whole number: is a count or a size (N, a "
            "batch's length) the wrong one, or written as a number that fits other inputs only?"
        )
        return Diagnosis(
            False,
            "multiple" if abs(s) > 1 else "fraction",
            f"{name} is {s:.4g}x the expected value: {said}",
            rel,
            s,
            cause="tensor.scaled",
            reason=f"is a constant multiple of the expected value: {said}",
        )
    told = _weighed(causes["mismatch"], facts) if "mismatch" in causes else None
    cause = (f" {told[0]}" if told[1] else f" {told[0][0].upper()}{told[0][1:]}") if told else ""
    seen, unseen = _observed(r, e, rtol, atol)
    shows, shows_unseen = pattern(r, e, rtol, atol) if not told else ("", "")
    if not told and not shows and terms:  # a weighted sum of the question's inputs, with its weights
        shows, shows_unseen = combination(r, e, dict(terms), rtol, atol)
    if shows:  # what the values show, observed (never a cause), where the question names none
        seen, unseen = f"{seen} Observed: {shows}.", f"{unseen} Observed: {shows_unseen}."
    return Diagnosis(
        False,
        "mismatch",
        f"{name} differs from the expected value (relative error"
        f" {rel:.1e} in max-norm; {_worst_element(r, e, rtol, atol)}).{seen}{cause}",
        rel,
        s,
        cause=cause_key("tensor.mismatch", cause) if told and told[1] else "",
        reason="differs from the expected value." + unseen + cause,
        given=(cause.strip(),) if cause else (),
    )
