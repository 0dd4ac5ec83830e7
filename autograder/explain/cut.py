"""The line of a learner's code that takes a gradient out of the graph before it is differentiated
again (``.detach()``, ``.data``, ``.item()``, ``no_grad``): the evidence ``refine`` needs before it
names that cause of "element 0 of tensors does not require grad" under create_graph=True."""

from __future__ import annotations

import ast
import re

__all__ = ["cut_line"]

# What takes a tensor out of the graph: its result has no grad_fn, whatever produced it.
_CUT = re.compile(r"\.detach\(\)|\.data\b|\.item\(\)|\.numpy\(\)|\.tolist\(\)|no_grad\(\)|inference_mode\(")


def _differentiated_names(failing: str) -> set[str]:
    """The names in what the failing line differentiates: the first argument of ``...grad(...)``, the
    receiver of ``.backward()`` (every name of the line when it does not parse as either)."""
    try:
        tree = ast.parse(failing.strip())
    except SyntaxError:
        tree = None
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            target = node.args[0] if name == "grad" and node.args else None
            if name == "backward" and isinstance(node.func, ast.Attribute):
                target = node.func.value
            if target is not None:
                return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return set(re.findall(r"\b[A-Za-z_]\w*\b", failing))


def cut_line(code: str, failing: str) -> str:
    """The line of ``code`` that cuts the gradient differentiated again from the graph: a line that
    takes it with create_graph=True and detaches it, or that assigns a name the failing line
    differentiates through a cut; "" when no line shows it (then nothing is claimed)."""
    used = _differentiated_names(failing)
    for line in code.splitlines():
        if not _CUT.search(line) or "requires_grad_(" in line:  # a new leaf made from a detached tensor is no cut
            continue
        target = re.match(r"\s*([\w\s,()]+?)\s*=[^=]", line)
        assigned = set(re.findall(r"\b[A-Za-z_]\w*\b", target[1])) if target else set()
        if "create_graph" in line or (assigned & used):
            return line.strip()
    return ""
