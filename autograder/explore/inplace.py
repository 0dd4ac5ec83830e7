"""Explorer of chapter 5: which in-place changes autograd refuses, and why."""

from __future__ import annotations

import ipywidgets as widgets
import torch

from ..graph import SAVED_PREFIX, is_python_scalar, saved_attributes
from .shell import explorer
from .table import text_table

__all__ = ["inplace_facts", "inplace_table", "inplace_explorer", "INPLACE_OPS", "INPLACE_CHANGES"]

INPLACE_OPS = ("y = x * 2", "y = x ** 2", "y = x.sin()", "y = x.sigmoid()", "y = x.exp()", "y = torch.relu(x)")
# Each in-place change and the same change written out of place (what the values now compute).
INPLACE_CHANGES = {
    "(none)": "",
    "y += 1": "y = y + 1",
    "y.mul_(2)": "y = y * 2",
    "y[0] = 0": "y = torch.cat([torch.zeros(1), y[1:]])",
    "y.detach().mul_(2)": "y = y * 2",
    "y.data.mul_(2)": "y = y * 2",
}


def _saved_names(node, named: dict) -> list[str]:
    """``attr = name`` for each tensor ``node`` saved: a tensor of ``named`` (same storage) or a
    Python scalar."""
    found = []
    for attr in saved_attributes(node):
        t = getattr(node, SAVED_PREFIX + attr)
        if not isinstance(t, torch.Tensor):
            continue
        if is_python_scalar(t):
            found.append(f"{attr} = {t.item():g} (a Python number)")
            continue
        ptr = t.untyped_storage().data_ptr()
        name = next((n for n, v in named.items() if v.untyped_storage().data_ptr() == ptr), "?")
        found.append(f"{attr} = {name}")
    return found


def inplace_facts(op: str, change: str) -> dict:
    """Run ``x = [0.5, 1.0, 2.0]`` (requires grad), ``op`` (one of :data:`INPLACE_OPS`), then
    ``change`` (a key of :data:`INPLACE_CHANGES`) and ``y.sum().backward()``.

    Returns:
        A dict: ``saved`` (what ``y.grad_fn`` saved, as ``"attr = x"``, ``"attr = y"`` or a Python
        number), ``version`` (``y._version`` after the change), ``outcome`` (``"ok"`` or the
        :func:`autograder.explain` kind of the error backward raised), ``grad`` (``x.grad`` as a
        list rounded to 4 decimals, or None), ``expected`` (``x.grad`` when the change is written
        out of place) and ``verdict``: ``"right"``, ``"raises"`` or ``"silently wrong"``.
    """
    from ..explain import explain

    def run(change_code: str):
        ns = {"torch": torch, "x": torch.tensor([0.5, 1.0, 2.0], requires_grad=True)}
        exec(op, ns)
        saved = _saved_names(ns["y"].grad_fn, {"x": ns["x"], "y": ns["y"]})
        exec(change_code, ns)
        try:
            ns["y"].sum().backward()
            outcome = "ok"
        except RuntimeError as error:
            outcome = explain(error).kind
        grad = ns["x"].grad
        return saved, ns["y"]._version, outcome, None if grad is None else [round(g, 4) for g in grad.tolist()]

    saved, version, outcome, grad = run("" if change == "(none)" else change)
    expected = run(INPLACE_CHANGES[change])[3]
    verdict = "raises" if outcome != "ok" else "right" if grad == expected else "silently wrong"
    return dict(saved=saved, version=version, outcome=outcome, grad=grad, expected=expected, verdict=verdict)


def inplace_table(op: str) -> str:
    """:func:`inplace_facts` for ``op`` and every change, as a fixed-width text table: what
    :func:`inplace_explorer` shows for that op."""
    facts = {change: inplace_facts(op, change) for change in INPLACE_CHANGES}
    rows = [("change", "y._version", "backward", "x.grad", "verdict")]
    for change, f in facts.items():
        should = f" (should be {f['expected']})" if f["verdict"] == "silently wrong" else ""
        rows.append((change, f["version"], f["outcome"], f["grad"], f["verdict"] + should))
    return f"{op}   saves: {', '.join(facts['(none)']['saved']) or 'nothing'}\n" + text_table(rows)


def inplace_explorer() -> widgets.Widget:
    """A menu of ops; for the chosen one, :func:`inplace_table`: what it saves and what each
    in-place change of its result does to backward."""
    menu = widgets.Dropdown(options=INPLACE_OPS, value="y = x.sigmoid()", description="op")
    return explorer("inplace_explorer", {"op": menu}, inplace_table)
