"""Explorers of chapters 1 and 2: the graph built one statement at a time, and which tensors are
leaves and get a ``.grad``."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import ipywidgets as widgets
import torch
from IPython.display import display

from ..draw import draw
from ..graph import Graph, trace
from .shell import explorer
from .table import text_table

__all__ = ["run_steps", "step_explorer", "leaf_facts", "leaf_table", "leaf_explorer"]


def run_steps(lines: Sequence[str], steps: int, show: str, setup: str = "") -> tuple[dict, Graph]:
    """Execute ``setup`` then the first ``steps`` of ``lines`` in a fresh namespace.

    Returns:
        ``(namespace, graph)`` where ``graph`` traces the variable named ``show`` (an empty
        ``Graph`` when it does not exist yet or is not a tensor). Leaves are labelled with the
        names of the tensors in the namespace.

    Raises:
        Whatever the executed lines raise.
    """
    namespace: dict = {"torch": torch}
    exec(setup, namespace)
    for line in lines[:steps]:
        exec(line, namespace)
    target = namespace.get(show)
    if not isinstance(target, torch.Tensor):
        return namespace, Graph(())
    names = {k: v for k, v in namespace.items() if isinstance(v, torch.Tensor) and not k.startswith("_")}
    return namespace, trace(target, names)


def step_explorer(lines: Sequence[str], show: str, setup: str = "") -> widgets.Widget:
    """A slider that runs a program one statement at a time and draws the graph behind ``show``
    after each step: the graph is built as the code runs."""

    def draw_step(steps: int) -> None:
        _, graph = run_steps(lines, steps, show, setup)
        print("\n".join(f"{'>>' if i == steps - 1 else '  '} {line}" for i, line in enumerate(lines[:steps])))
        display(draw(graph) if len(graph) else f"{show} has no grad_fn yet: no graph behind it")

    slider = widgets.IntSlider(value=1, min=1, max=len(lines), description="statements")
    return explorer("step_explorer", {"steps": slider}, draw_step)


_LEAF_ROWS = ("x", "y", "z")


def leaf_facts(
    requires_grad: bool = True,
    no_grad: bool = False,
    detach: bool = False,
    retain_grad: bool = False,
    backward: bool = True,
) -> list[dict]:
    """Facts about ``x`` (a leaf), ``y = x * 2`` and ``z = (y ** 2).sum()`` under the chosen
    options (``x`` has shape [3], float32).

    Options: ``requires_grad`` for x; compute y under ``torch.no_grad()``; ``detach`` y before z;
    ``retain_grad`` on y; call ``z.backward()`` (skipped when z does not require grad).

    Returns:
        One dict per tensor with keys ``tensor, is_leaf, requires_grad, grad_fn, grad``
        (``grad_fn`` is the Node's class name or None; ``grad`` a list of floats or None).
    """
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=requires_grad)
    with torch.set_grad_enabled(not no_grad):
        y = x * 2
    if detach:
        y = y.detach()
    if retain_grad and y.requires_grad:
        y.retain_grad()
    z = (y**2).sum()
    if backward and z.requires_grad:
        z.backward()
    rows = []
    for name, t in zip(_LEAF_ROWS, (x, y, z)):
        with warnings.catch_warnings():  # reading a non-leaf's .grad warns; the table says why
            warnings.simplefilter("ignore")
            grad = t.grad
        rows.append(
            dict(
                tensor=name,
                is_leaf=t.is_leaf,
                requires_grad=t.requires_grad,
                grad_fn=type(t.grad_fn).__name__ if t.grad_fn else None,
                grad=grad.tolist() if grad is not None else None,
            )
        )
    return rows


def leaf_table(**options) -> str:
    """:func:`leaf_facts` under ``options`` as a fixed-width text table, one row per tensor:
    what :func:`leaf_explorer` shows for the same checkboxes."""
    keys = ("tensor", "is_leaf", "requires_grad", "grad_fn", "grad")
    return text_table([keys, *([r[k] for k in keys] for r in leaf_facts(**options))])


def leaf_explorer() -> widgets.Widget:
    """Checkboxes for :func:`leaf_facts`' options and a table of the resulting facts."""
    options = {
        k: widgets.Checkbox(value=v, description=k, indent=False)
        for k, v in dict(requires_grad=True, no_grad=False, detach=False, retain_grad=False, backward=True).items()
    }
    return explorer("leaf_explorer", options, leaf_table)
