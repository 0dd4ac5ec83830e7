"""Draw a traced graph with Graphviz, or as a text table where the ``dot`` program is missing."""

from __future__ import annotations

import base64
import html
import re
import shutil
from collections import Counter
from collections.abc import Mapping

import graphviz
import torch

from .graph import Graph, trace

__all__ = ["Drawing", "Figure", "draw", "describe", "html_table", "dot_available", "INSTALL_DOT"]

INSTALL_DOT = (
    "Graphviz's `dot` program is not installed, so the graph is shown as a table. "
    "Install it with: sudo apt-get install graphviz  (macOS: brew install graphviz)"
)

_STYLE = {
    "node": dict(shape="box", style="filled", fillcolor="lightgrey"),
    "leaf": dict(shape="box", style="filled", fillcolor="lightblue"),
    "saved": dict(shape="box", style="filled", fillcolor="orange", fontsize="10"),
    "output": dict(shape="box", style="filled", fillcolor="darkolivegreen1"),
    "note": dict(shape="note", style="filled", fillcolor="lightyellow", fontsize="10"),
}


def dot_available() -> bool:
    """True when Graphviz's ``dot`` executable is on PATH."""
    return shutil.which("dot") is not None


def describe(graph: Graph) -> str:
    """One sentence saying what a drawing of ``graph`` shows: its Nodes (AccumulateGrad with the
    leaves they write to), how many tensors they saved, and how many Nodes backward has freed. The drawing's
    ``alt`` text."""
    if not len(graph):
        return "An empty autograd graph: no backward Nodes."
    kinds = Counter(n.kind for n in graph.nodes if n.leaf is None)  # in visit order
    leaves = [n.leaf for n in graph.nodes if n.leaf is not None]
    parts = [", ".join(kind if k == 1 else f"{kind} x{k}" for kind, k in kinds.items())] if kinds else []
    if leaves:
        parts.append("AccumulateGrad for " + ", ".join(leaves))
    saved = sum(1 for n in graph.nodes for s in n.saved if not s.freed)
    # After backward a custom Function's Node no longer says how many tensors it held: count Nodes, not tensors.
    freed = sum(1 for n in graph.nodes if any(s.freed for s in n.saved))
    gone = f"; backward has freed what {freed} Node{'s' if freed != 1 else ''} saved" if freed else ""
    return (
        f"Autograd graph, {len(graph)} backward Node{'s' if len(graph) != 1 else ''} "
        f"({'; '.join(parts)}) and {saved} saved tensor{'s' if saved != 1 else ''}{gone}. "
        "The text version lists every Node, where it sends its gradient and what it saved."
    )


def html_table(graph: Graph) -> str:
    """``graph.table()`` as an HTML table (a header row, one row per Node), for screen readers."""
    left = ' style="text-align: left"'  # JupyterLab right-aligns table cells by default
    head = "".join(f"<th{left}>{h}</th>" for h in ("node", "sends grad to", "saved for backward"))
    rows = []
    for n in graph.nodes:
        target = ", ".join(n.next) or (f"-> {n.leaf}.grad" if n.leaf else "-")
        saved = "; ".join(map(str, n.saved)) or "-"
        rows.append("<tr>" + "".join(f"<td{left}>{html.escape(v)}</td>" for v in (n.name, target, saved)) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


# A Graphviz SVG's comment or <title> naming a node ("140...") or an edge ("140...&#45;&gt;139...")
# by id(): torchviz's node names.
_ID_NAMES = re.compile(r"[ \t]*(?:<!-- \d{6,}(?:&#45;&gt;\d{6,})? -->|<title>\d{6,}(?:&#45;&gt;\d{6,})?</title>)\n?")


class Figure:
    """An SVG picture with its text alternative, shown in Jupyter as an HTML ``<figure>``: the
    picture (an ``<img>`` with ``alt`` text), a visible ``caption`` and, folded under "Text
    version", ``details_html`` (e.g. a table of the Nodes). JupyterLab shows this HTML even in a
    notebook it does not trust yet, where it refuses a bare SVG output. The bundle also carries
    the SVG itself (labelled with ``role="img"`` and ``aria-label``) and ``text`` as plain text.
    """

    def __init__(
        self,
        svg: str,
        alt: str,
        caption: str = "",
        details_html: str = "",
        text: str = "",
        details_summary: str = "Text version: the Nodes and what they saved",
    ):
        self.svg, self.alt, self.caption, self.details_html, self.text = svg, alt, caption, details_html, text
        self.details_summary = details_summary

    @classmethod
    def of_graph(cls, svg: str, graph: Graph, title: str = "", caption: str = "") -> Figure:
        """Any SVG drawing of ``graph`` (e.g. torchviz's) with ``graph``'s text alternative: alt
        text ``title`` + :func:`describe`, a table of the Nodes, and the text table as plain text.
        Graphviz writes each node's and edge's name into the SVG (a comment and a hover ``<title>``);
        torchviz names nodes by ``id()``, a memory address, so those are left out."""
        alt = f"{title}. {describe(graph)}" if title else describe(graph)
        svg = _ID_NAMES.sub("", svg)
        return cls(svg, alt, caption, details_html=html_table(graph), text=graph.table())

    def html(self) -> str:
        """The ``<figure>``: picture, caption and folded text version."""
        data = base64.b64encode(self.svg.encode("utf-8")).decode("ascii")
        parts = [f'<img src="data:image/svg+xml;base64,{data}" alt="{html.escape(self.alt)}">']
        caption = html.escape(self.caption)
        if self.details_html:
            caption += f"<details><summary>{html.escape(self.details_summary)}</summary>{self.details_html}</details>"
        if caption:
            parts.append(f"<figcaption>{caption}</figcaption>")
        return '<figure class="autograd-drawing">' + "".join(parts) + "</figure>"

    def labelled_svg(self) -> str:
        """The SVG with ``role="img"`` and ``aria-label`` (the alt text) on its root element."""
        return self.svg.replace("<svg ", f'<svg role="img" aria-label="{html.escape(self.alt)}" ', 1)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html(), "image/svg+xml": self.labelled_svg(), "text/plain": self.text or self.alt}


class Drawing:
    """A drawing of a :class:`~autograder.graph.Graph`.

    ``digraph`` is the ``graphviz.Digraph``; ``table`` the same graph as text. In Jupyter it shows
    as a :class:`Figure`: the SVG picture with :func:`describe`'s sentence as its ``alt`` text and
    the table of Nodes and saved tensors folded under it ("Text version"); the plain-text part of
    the output is the table. Where ``dot`` is missing it shows the table alone, with the one line
    that installs Graphviz.
    """

    def __init__(self, graph: Graph, digraph: graphviz.Digraph, notes: Mapping[str, str] | None = None):
        self.graph, self.digraph, self.notes = graph, digraph, dict(notes or {})
        # the notes, in words, under the table: what the yellow boxes say, for readers without the picture
        self.table = graph.table() + "".join(f"\nnote at {name}: {text}" for name, text in self.notes.items())

    def svg(self) -> str:
        """The drawing as SVG text. Raises ``graphviz.ExecutableNotFound`` without ``dot``."""
        return self.digraph.pipe(format="svg", encoding="utf-8")

    def figure(self) -> Figure:
        """The drawing with its text alternative (needs ``dot``)."""
        caption = "; ".join(f"at {name}: {text}" for name, text in self.notes.items())
        return Figure.of_graph(self.svg(), self.graph, caption=caption)

    def _repr_mimebundle_(self, include=None, exclude=None):
        if not dot_available():
            return {"text/plain": f"{INSTALL_DOT}\n\n{self.table}"}
        return self.figure()._repr_mimebundle_(include, exclude)

    def __repr__(self) -> str:
        return self.table


def draw(
    obj: torch.Tensor | Graph,
    names: Mapping[str, torch.Tensor] | None = None,
    show_saved: bool = True,
    notes: Mapping[str, str] | None = None,
) -> Drawing:
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
        notes: ``{"MulBackward0": "tensor hook on y runs here"}``: a yellow note beside each named
            Node (names as the graph's table prints them), also written under the drawing.

    Returns:
        A :class:`Drawing`; node ids are ``n0, n1, ...`` in visit order, so output is identical
        from run to run.
    """
    graph = obj if isinstance(obj, Graph) else trace(obj, names)
    ids = {node.name: f"n{i}" for i, node in enumerate(graph.nodes)}
    dot = graphviz.Digraph(
        "autograd", graph_attr=dict(rankdir="TB", size="12,12"), node_attr=dict(fontname="Helvetica", fontsize="12")
    )
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
    unknown = [name for name in notes or {} if name not in ids]
    if unknown:
        raise ValueError(
            f"draw(notes=...): no Node named {', '.join(unknown)} in this graph; its Nodes are {', '.join(ids)}"
        )
    for j, (name, text) in enumerate((notes or {}).items()):
        dot.node(f"note{j}", text, **_STYLE["note"])
        dot.edge(f"note{j}", ids[name], style="dotted", arrowhead="none")
    return Drawing(graph, dot, notes)
