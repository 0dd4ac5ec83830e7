"""Explorer of chapter 12: what a Jacobian costs in reverse mode and in forward mode, and where
gradients turn NaN or infinite."""

from __future__ import annotations

import warnings

import ipywidgets as widgets
import torch
from torch.func import jacfwd, jacrev
from torch.utils.flop_counter import FlopCounterMode

from .shell import explorer
from .table import text_table

__all__ = ["jacobian_cost", "jacobian_table", "NAN_CASES", "nan_facts", "nan_table", "jacobian_explorer"]


def _layer(n_in: int, n_out: int):
    """``f(x) = tanh(W @ x)`` with ``W`` a seeded ``[n_out, n_in]`` float32 matrix, and an ``x``."""
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(n_out, n_in, generator=gen)
    return (lambda x: torch.tanh(w @ x)), torch.randn(n_in, generator=gen)


def jacobian_cost(n_in: int, n_out: int) -> dict:
    """The Jacobian ``[n_out, n_in]`` of ``f(x) = tanh(W @ x)`` three ways, and what each costs.

    Returns:
        ``{"jacrev": {...}, "jacfwd": {...}, "loop": {...}}``, each with ``"flops"`` (``int``, the
        matrix-multiply FLOPs ``torch.utils.flop_counter.FlopCounterMode`` counts while the
        Jacobian is computed: deterministic, unlike a timing), ``"vectors"`` (``int``, how many
        vectors the mode pushes through the graph: one cotangent per output row in reverse mode,
        one tangent per input column in forward mode) and ``"equal"`` (``bool``, the Jacobian
        equals ``torch.autograd.functional.jacobian``'s to 1e-5). ``"loop"`` is
        ``torch.autograd.functional.jacobian(vectorize=False)``: one backward pass per output,
        counted by a hook on ``x`` (its ``"flops"`` is ``None``: its passes multiply matrices by
        vectors, which the counter does not count).
    """
    f, x = _layer(n_in, n_out)
    reference = torch.autograd.functional.jacobian(f, x)
    facts = {}
    for name, transform, vectors in (("jacrev", jacrev, n_out), ("jacfwd", jacfwd, n_in)):
        with FlopCounterMode(display=False) as counter:
            jac = transform(f)(x)
        facts[name] = {
            "flops": counter.get_total_flops(),
            "vectors": vectors,
            "equal": torch.allclose(jac, reference, atol=1e-5),
        }
    passes = []

    def counted(x):
        if x.requires_grad:
            x.register_hook(lambda g: passes.append(1))
        return f(x)

    jac = torch.autograd.functional.jacobian(counted, x, vectorize=False)
    facts["loop"] = {
        "flops": None,
        "vectors": len(passes),
        "equal": torch.allclose(jac, reference, atol=1e-5),
    }
    return facts


def jacobian_table(n_in: int = 4, n_out: int = 256) -> str:
    """:func:`jacobian_cost` as text, one row per way, then which mode multiplies less."""
    facts = jacobian_cost(n_in, n_out)
    rows = [("way", "vectors pushed", "matmul FLOPs", "same Jacobian")]
    labels = {
        "jacrev": "torch.func.jacrev (reverse, vmap)",
        "jacfwd": "torch.func.jacfwd (forward, vmap)",
        "loop": "autograd.functional (backward loop)",
    }
    rows += [
        (labels[k], v["vectors"], f"{v['flops']:,}" if v["flops"] is not None else "-", v["equal"])
        for k, v in facts.items()
    ]
    rev, fwd = facts["jacrev"]["flops"], facts["jacfwd"]["flops"]
    verdict = "the same" if rev == fwd else ("jacfwd" if fwd < rev else "jacrev") + " multiplies less"
    return "\n".join(
        [
            f"f(x) = tanh(W @ x), x: [{n_in}], f(x): [{n_out}], Jacobian [{n_out}, {n_in}]",
            text_table(rows, align="<>>>"),
            f"cheaper by FLOPs: {verdict}",
        ]
    )


# Functions with a point where their derivative is undefined or infinite, each at that point.
NAN_CASES = {
    "sqrt(x) at 0": (lambda x: x.sqrt(), 0.0),
    "sqrt(x * x) at 0": (lambda x: (x * x).sqrt(), 0.0),
    "torch.linalg.vector_norm(v) at 0": (lambda x: torch.linalg.vector_norm(x.expand(3)), 0.0),
    "sqrt(sum(v * v)) at 0": (lambda x: (x.expand(3) * x.expand(3)).sum().sqrt(), 0.0),
    "sqrt(sum(v ** 2)) at 0": (lambda x: (x.expand(3) ** 2).sum().sqrt(), 0.0),
    "where(x > 0, sqrt(x), 0) at 0": (lambda x: torch.where(x > 0, x.sqrt(), torch.zeros_like(x)), 0.0),
    "where(x > 0, log(x), 0) at 0": (lambda x: torch.where(x > 0, x.log(), torch.zeros_like(x)), 0.0),
    "where(x > 0, log(where(x > 0, x, 1)), 0) at 0": (
        lambda x: torch.where(x > 0, torch.where(x > 0, x, torch.ones_like(x)).log(), torch.zeros_like(x)),
        0.0,
    ),
    "sqrt(clamp(x, min=1e-12)) at 0": (lambda x: x.clamp(min=1e-12).sqrt(), 0.0),
}


def nan_facts(case: str) -> dict:
    """The value and the gradient of ``NAN_CASES[case]`` at its point, and the Node that anomaly
    mode names.

    Returns:
        ``{"value": float, "grad": float, "anomaly": str | None}``: ``grad`` is d(sum of the
        output)/dx for a scalar float32 ``x``; ``anomaly`` is the first line of the
        ``RuntimeError`` ``torch.autograd.detect_anomaly()`` raises in that backward (it names the
        Node whose output was NaN), ``None`` when it raises nothing (an ``inf`` is not NaN).
    """
    fn, at = NAN_CASES[case]
    x = torch.tensor(at, requires_grad=True)
    out = fn(x)
    (grad,) = torch.autograd.grad(out.sum(), x)
    anomaly = None
    try:
        # detect_anomaly warns that it is on, and about each error it finds: the error is the fact
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly(check_nan=True):
                x2 = torch.tensor(at, requires_grad=True)
                torch.autograd.grad(fn(x2).sum(), x2)
    except RuntimeError as error:
        anomaly = str(error).splitlines()[0]
    return {"value": out.sum().item(), "grad": grad.item(), "anomaly": anomaly}


def nan_table(cases=tuple(NAN_CASES)) -> str:
    """:func:`nan_facts` of each case as a text table (value and gradient to 4 significant digits)."""
    rows = [("function", "value", "gradient", "anomaly mode")]
    for case in cases:
        f = nan_facts(case)
        rows.append((case, f"{f['value']:.4g}", f"{f['grad']:.4g}", f["anomaly"] or "-"))
    return text_table(rows, align="<>><")


def jacobian_explorer() -> widgets.Widget:
    """Sliders for the input and output sizes; shows :func:`jacobian_table`."""
    sizes = [1, 2, 4, 16, 64, 256]
    return explorer(
        "jacobian_explorer",
        {
            "n_in": widgets.SelectionSlider(options=sizes, value=4, description="inputs"),
            "n_out": widgets.SelectionSlider(options=sizes, value=256, description="outputs"),
        },
        jacobian_table,
    )
