"""Explorer of chapter 14: the order in which backward's engine runs the Nodes of a graph, and on
which thread, seen from hooks."""

from __future__ import annotations

import threading

import ipywidgets as widgets
import torch

from .shell import explorer
from .table import text_table

__all__ = ["GRAPHS", "engine_events", "engine_table", "engine_explorer", "all_nodes"]

# The graphs the explorer can build, from leaves a = [1, 2] and b = [3, 4] (requires_grad=True):
GRAPHS = {
    "chain": "y = a * 2; z = y.sin(); loss = (z * b).sum()",
    "branch": "y = a * b; loss = (y.exp() + y.cos() + b).sum()",
    "two uses of a": "y = a * 3; loss = (y * a + b).sum()",
}


def all_nodes(root) -> list:
    """Every Node reachable from ``root`` (a ``grad_fn``) through ``next_functions``, each once,
    in the order a depth-first walk from ``root`` meets them (``root`` first)."""
    seen, order, stack = set(), [], [root]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(reversed([fn for fn, _ in node.next_functions]))
    return order


def _build(graph: str):
    # The leaves and the named intermediate tensors of one of GRAPHS, and its loss.
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    if graph == "chain":
        y = a * 2
        loss = (y.sin() * b).sum()
    elif graph == "branch":
        y = a * b
        loss = (y.exp() + y.cos() + b).sum()
    elif graph == "two uses of a":
        y = a * 3
        loss = (y * a + b).sum()
    else:
        raise ValueError(f"graph must be one of {sorted(GRAPHS)}, got {graph!r}")
    return {"a": a, "b": b}, y, loss


def engine_events(graph: str = "chain", tensor_hook: bool = True, post_accumulate: bool = True) -> dict:
    """Build one of :data:`GRAPHS`, put a pre-hook on every Node (``Node.register_prehook``), a
    tensor hook on ``y`` (``tensor_hook``) and a post-accumulate-grad hook on each leaf
    (``post_accumulate``), run ``loss.backward()`` and record what ran.

    Returns:
        ``{"events": [str, ...], "same_thread": bool, "grads": {"a": [float], "b": [float]}}``:
        events in the order they ran (``"Node MulBackward0"``, ``"Node AccumulateGrad (a)"``,
        ``"tensor hook on y"``, ``"post-accumulate hook on a"``); ``same_thread`` is True when every
        hook ran on the thread that called ``backward()``; ``grads`` the leaves' gradients.

    Raises:
        ValueError: ``graph`` is not a key of :data:`GRAPHS`.
    """
    leaves, y, loss = _build(graph)
    events: list[str] = []
    threads: set[int] = set()
    names = {id(t): n for n, t in leaves.items()}

    def record(text):
        events.append(text)
        threads.add(threading.get_ident())

    for node in all_nodes(loss.grad_fn):
        label = node.name()
        if label.endswith("AccumulateGrad"):
            label = f"AccumulateGrad ({names[id(node.variable)]})"
        node.register_prehook(lambda grad_outputs, label=label: record(f"Node {label}"))
    if tensor_hook:
        y.register_hook(lambda g: record("tensor hook on y"))
    if post_accumulate:
        for name, leaf in leaves.items():
            leaf.register_post_accumulate_grad_hook(lambda p, name=name: record(f"post-accumulate hook on {name}"))
    loss.backward()
    same = threads == {threading.get_ident()}
    return {"events": events, "same_thread": same, "grads": {n: t.grad.tolist() for n, t in leaves.items()}}


def engine_table(graph: str = "chain", tensor_hook: bool = True, post_accumulate: bool = True) -> str:
    """:func:`engine_events` as text: the graph's code, the numbered events, the thread verdict."""
    facts = engine_events(graph, tensor_hook, post_accumulate)
    lines = [f"{GRAPHS[graph]}; loss.backward()"]
    lines.append(text_table([("#", "what ran"), *((i + 1, e) for i, e in enumerate(facts["events"]))], align="><"))
    lines.append(f"every hook ran on the thread that called backward(): {facts['same_thread']}")
    return "\n".join(lines)


def engine_explorer() -> widgets.Widget:
    """A graph to choose and two kinds of hooks to switch on; shows :func:`engine_table`."""
    return explorer(
        "engine_explorer",
        {
            "graph": widgets.Dropdown(options=list(GRAPHS), value="chain", description="graph"),
            "tensor_hook": widgets.Checkbox(value=True, description="tensor hook on y"),
            "post_accumulate": widgets.Checkbox(value=True, description="post-accumulate hooks"),
        },
        engine_table,
    )
