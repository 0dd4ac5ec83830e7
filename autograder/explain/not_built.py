"""The causes of "element 0 of tensors does not require grad and does not have a grad_fn", told apart: no graph at
all, a second derivative without create_graph, with it but cut from the graph, with it but constant, inside a custom
Function's backward. Where the failing frame can be read, the evidence is how that frame made what its failing line
differentiates (:func:`~autograder.explain.frame.assignments`), never other lines of the file or the cell."""

from __future__ import annotations

import re

from .context import Context
from .cut import _differentiated_names, cut_line
from .frame import assignments, enclosing_with, learner_frame
from .graph_cut import graph_cut

__all__ = ["not_built_cause"]

_DIFFERENTIATE = re.compile(r"autograd\.grad\(|\.backward\(|\bgrad\(")


def not_built_cause(d: dict, where: Context, failing: str, error=None):
    """The not-built message's causes: inside a Function's backward; a second derivative whose
    first gradient was taken without create_graph; with it, but cut from the graph by a line the
    code shows (``.detach()``, ``.item()``, ``no_grad``); with it and uncut, but constant; or no graph
    at all. Where the failing frame can be read, the evidence is how that frame made what its failing
    line differentiates (:func:`~autograder.explain.frame.assignments`), not other lines of the file."""
    if where.in_function_backward:
        return "function_backward_no_grad", d
    d = {**d, "seen": ""}
    tb, _ = learner_frame(error)
    made = assignments(tb.tb_frame, _differentiated_names(failing)) if tb is not None else None
    if made is not None:
        code = "\n".join(made)
        if not re.search(r"\bgrad\(", code):  # not a gradient: no graph was recorded for it
            cut = graph_cut(made, tb.tb_frame)
            if cut:
                return "graph_cut", {**d, **cut, "seen": ""}
            return "not_built", {**d, "seen": _made_by(made, tb.tb_frame)}
    else:
        code = where.source
    if not code:
        return "not_built", d
    passed = len(re.findall(r"create_graph\s*=\s*True", code))
    if passed - (1 if where.create_graph and made is None else 0) > 0:
        cut = cut_line(code, failing)
        if cut:
            return "second_derivative_cut", {**d, "cut": cut}
        return "second_derivative_constant", d
    if made is not None or len(_DIFFERENTIATE.findall(code)) >= 2:
        return "second_derivative_no_create_graph", d
    return "not_built", d


def _made_by(made: list[str], frame) -> str:
    """What the failing frame shows of how the differentiated tensor was made (its assignment's first line, and the
    ``with`` block around it)."""
    if not made:
        return ""
    line = made[0].strip().splitlines()[0][:120]
    under = enclosing_with(frame, made[0])
    block = f", inside `with {under}:`" if under else ""
    return f" Seen in the failing frame: it was made by `{line}`{block}, not by autograd.grad."
