"""Draw a traced graph with Graphviz, or as a text table where the ``dot`` program is missing."""
from __future__ import annotations

import shutil
from typing import Mapping

import graphviz
import torch

from .graph import Graph, trace

__all__ = ["Drawing", "draw", "dot_available", "INSTALL_DOT"]

INSTALL_DOT = ("Graphviz's `dot` program is not installed, so the graph is shown as a table. "
               "Install it with: sudo apt-get install graphviz  (macOS: brew install graphviz)")

_STYLE = {
    "node": dict(shape="box", style="filled", fillcolor="lightgrey"),
    "leaf": dict(shape="box", style="filled", fillcolor="lightblue"),
    "saved": dict(shape="box", style="filled", fillcolor="orange", fontsize="10"),
    "output": dict(shape="box", style="filled", fillcolor="darkolivegreen1"),
}


def dot_available() -> bool:
    """True when Graphviz's ``dot`` executable is on PATH."""
    return shutil.which("dot") is not None


class Drawing:
    """A drawing of a :class:`~autograder.graph.Graph`.

    ``digraph`` is the ``graphviz.Digraph``; ``table`` the same graph as text. In Jupyter it shows
    as SVG with the table as its text alternative, or as the table alone (with the one line that
    installs Graphviz) when ``dot`` is missing.
    """

    def __init__(self, graph: Graph, digraph: graphviz.Digraph):
        self.graph, self.digraph, self.table = graph, digraph, graph.table()

    def svg(self) -> str:
        """The drawing as SVG text. Raises ``graphviz.ExecutableNotFound`` without ``dot``."""
        return self.digraph.pipe(format="svg", encoding="utf-8")

    def _repr_mimebundle_(self, include=None, exclude=None):
        if not dot_available():
            return {"text/plain": f"{INSTALL_DOT}\n\n{self.table}"}
        return {"image/svg+xml": self.svg(), "text/plain": self.table}

    def __repr__(self) -> str:
        return self.table


def draw(obj: torch.Tensor | Graph, names: Mapping[str, torch.Tensor] | None = None,
         show_saved: bool = True) -> Drawing:
    """Draw the graph behind a tensor (or an already traced :class:`Graph`).

    Legend (as in torchviz): green = the output tensor you traced; grey = a backward Node
    (``grad_fn``, named by its class); blue = ``AccumulateGrad``, writing into a leaf's ``.grad``;
    orange = a tensor saved for backward by the Node it hangs from (dtype, shape, bytes,
    version). Arrows follow the gradient: from the output towards the leaves, as
    ``next_functions`` do.

    Args:
        obj: a tensor (traced with ``trace(obj, names)``) or a ``Graph``.
        names: ``{"w": w}`` labels for leaves, as in :func:`autograder.graph.trace`.
        show_saved: draw the saved tensors (orange boxes).

    Returns:
        A :class:`Drawing`; node ids are ``n0, n1, ...`` in visit order, so output is identical
        from run to run.
    """
    graph = obj if isinstance(obj, Graph) else trace(obj, names)
    ids = {node.name: f"n{i}" for i, node in enumerate(graph.nodes)}
    dot = graphviz.Digraph("autograd", graph_attr=dict(rankdir="TB", size="12,12"),
                           node_attr=dict(fontname="Helvetica", fontsize="12"))
    for i, root in enumerate(graph.roots):
        dot.node(f"out{i}", "output", **_STYLE["output"])
        dot.edge(f"out{i}", ids[root])
    for node in graph.nodes:
        if node.leaf is not None:
            dot.node(ids[node.name], f"{node.name}\n-> {node.leaf}.grad", **_STYLE["leaf"])
        else:
            dot.node(ids[node.name], node.name, **_STYLE["node"])
        for j, saved in enumerate(node.saved if show_saved else ()):
            sid = f"{ids[node.name]}s{j}"
            dot.node(sid, str(saved), **_STYLE["saved"])
            dot.edge(sid, ids[node.name], style="dashed", arrowhead="none")
        for nxt in node.next:
            dot.edge(ids[node.name], ids[nxt])
    return Drawing(graph, dot)
