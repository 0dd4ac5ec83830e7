"""Explorer of chapter 6: grad mode, no_grad and inference_mode side by side."""

from __future__ import annotations

import ipywidgets as widgets
import torch

from .shell import explorer
from .table import text_table

__all__ = ["grad_mode_facts", "grad_mode_table", "grad_mode_explorer", "GRAD_MODES"]

GRAD_MODES = ("grad mode", "no_grad", "inference_mode")


def grad_mode_facts(mode: str = "grad mode", train: bool = True, detach: bool = False) -> dict:
    """Run a small model (Linear, ReLU, Dropout(0.5), Linear) on a batch under ``mode`` (one of
    :data:`GRAD_MODES`), in training mode or after ``eval()``, and optionally ``detach()`` the
    output. The model and data are seeded; the global RNG is left as it was.

    Returns:
        A dict: ``requires_grad``, ``grad_fn`` (class name or None), ``is_inference`` of the
        output; ``saved_bytes`` (``int``: bytes the forward pass saved for backward, parameters
        excluded, read before ``detach``);
        ``repeatable`` (two forward passes give the same output: False while dropout is active);
        ``backward``: ``"ok"`` or the :func:`autograder.explain` kind of the error
        ``out.sum().backward()`` raises; ``reuse``: the same for ``(w * out).sum().backward()``
        with a new leaf ``w`` (the output used in a later computation that autograd records).
    """
    from ..explain import explain
    from ..memory import SavedTensorMeter

    context = {"grad mode": torch.enable_grad, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}[mode]

    def attempt(fn) -> str:
        try:
            fn()
            return "ok"
        except RuntimeError as error:
            return explain(error).kind

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = torch.nn.Sequential(
            torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(8, 2)
        ).train(train)
        x = torch.randn(16, 4)
        with context():
            with SavedTensorMeter(exclude=model.parameters()) as meter:
                out = model(x)
            repeatable = torch.equal(out, model(x))
        saved_bytes = meter.alive_bytes  # what the forward saved; detach() below frees none of it
        if detach:
            out = out.detach()
        facts = dict(
            requires_grad=out.requires_grad,
            grad_fn=type(out.grad_fn).__name__ if out.grad_fn is not None else None,
            is_inference=out.is_inference(),
            saved_bytes=saved_bytes,
            repeatable=repeatable,
        )
        w = torch.ones(2, requires_grad=True)  # autograd.grad for w only: the model's graph stays
        facts["reuse"] = attempt(lambda: torch.autograd.grad((w * out).sum(), w))
        facts["backward"] = attempt(lambda: out.sum().backward())
    return facts


def grad_mode_table(train: bool = True, detach: bool = False) -> str:
    """:func:`grad_mode_facts` for the three modes, as a fixed-width text table: what
    :func:`grad_mode_explorer` shows for the same checkboxes."""
    keys = ("requires_grad", "grad_fn", "is_inference", "saved_bytes", "repeatable", "backward", "reuse")
    rows = [("", *keys)]
    for mode in GRAD_MODES:
        facts = grad_mode_facts(mode, train, detach)
        rows.append((mode, *(str(facts[k]) for k in keys)))
    return text_table(rows)


def grad_mode_explorer() -> widgets.Widget:
    """Checkboxes ``train`` and ``detach``; the table of :func:`grad_mode_table` for them."""
    options = {
        "train": widgets.Checkbox(value=True, description="train() (untick: eval())", indent=False),
        "detach": widgets.Checkbox(value=False, description="detach the output", indent=False),
    }
    return explorer("grad_mode_explorer", options, grad_mode_table)
