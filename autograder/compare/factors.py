"""A difference by a constant factor (k times, 1/k of, the opposite sign), and the element a
tolerance test fails worst: the arithmetic ``diagnose`` names a mistake by."""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from .evidence import is_cause


def _rel_error(r: torch.Tensor, e: torch.Tensor) -> float:
    scale = e.abs().max().item() if e.numel() else 0.0
    diff = (r - e).abs().max().item() if e.numel() else 0.0
    return diff / scale if scale > 0 else diff


def _scale_factor(r: torch.Tensor, e: torch.Tensor, rtol: float, atol: float) -> float | None:
    """The s with r == s * e within tolerance (least squares), or None if no single s fits."""
    ee = (e * e).sum().item()
    if ee == 0:
        return None
    s = (r * e).sum().item() / ee
    if torch.allclose(r, s * e, rtol=max(rtol, 1e-5), atol=max(atol, 1e-6) * max(1.0, abs(s))):
        return s
    return None


def _whole(s: float) -> int | None:
    if not math.isfinite(s):  # an inf gradient "fits" s = inf: no whole factor to report
        return None
    k = round(s)
    return k if k != 0 and abs(s - k) <= 1e-3 * abs(k) else None


def _cause_for_factor(s: float, causes: Mapping):
    """The cause ``causes`` gives for the factor s (a number key within 0.1 % of s), if any: its text, or a
    ``compare.evidence.cause`` (a text with the test of its mechanism) as it is."""
    for key, cause in causes.items():
        if (
            isinstance(key, (int, float))
            and not isinstance(key, bool)
            and key != 0
            and math.isfinite(key)
            and abs(s - key) <= 1e-3 * abs(key)
        ):
            return cause if is_cause(cause) else str(cause)
    return None


def _factor_words(s: float) -> str:
    """``"is exactly 3x"``, ``"is exactly 1/2 of"``, ``"has the opposite sign of"``, ``"is 0.75x"``."""
    if _whole(s) == -1:
        return "has the opposite sign of"
    if (k := _whole(s)) is not None:
        return f"is exactly {k}x"
    if abs(s) < 1 and (k := _whole(1 / s)) is not None:
        return f"is exactly {'-' if k < 0 else ''}1/{abs(k)} of"
    return f"is {s:.4g}x"


def _worst_element(r: torch.Tensor, e: torch.Tensor, rtol: float, atol: float) -> str:
    """The test that failed, in words: each element must satisfy |r - e| <= atol + rtol * |e|; the
    element that misses it by the largest factor, with its error and what was allowed there (the
    relative error above is a max-norm ratio, which is not what was compared)."""
    diff = (r - e).abs().to(torch.float64)
    allowed = atol + rtol * e.abs().to(torch.float64)
    ratio = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff / allowed)
    worst = int(ratio.reshape(-1).argmax())
    got, bound = diff.reshape(-1)[worst].item(), allowed.reshape(-1)[worst].item()
    off = "is NaN" if math.isnan(got) else f"is off by {got:.2g} where {bound:.2g} is allowed"
    return (
        f"the test is elementwise, |received - expected| <= atol + rtol * |expected| with rtol={rtol:g},"
        f" atol={atol:g}, and its worst element {off}"
    )
