"""Which case of "backward through the graph a second time" the failing frame shows: the same loss backwarded
again (its last assignment is above a backward of it, or outside the loop whose iterations backward it), or a tensor
carried from an earlier iteration (a name of the loop assigned from itself, ``h = cell(x, h)``, still holding a
graph). Read from the failing frame's own code (its function, or its cell) and the objects it binds; None when
neither shows (then the explanation names both causes)."""

from __future__ import annotations

import ast

from .cut import _differentiated_names
from .frame import _frame_code, _own_scope, assignments, describe, learner_frame

__all__ = ["consumed_case"]


def _reads(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _assigned(node) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return {n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}


def _backwards(node, names: set[str]) -> bool:
    """Does ``node`` call ``name.backward(`` or ``autograd.grad(name`` for one of ``names``?"""
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "backward" and _reads(func.value) & names:
            return True
        if isinstance(func, ast.Attribute) and func.attr == "grad" and call.args and _reads(call.args[0]) & names:
            return True
    return False


def consumed_case(error) -> tuple[str, dict] | None:
    """``("consumed_same_loss" | "consumed_carried_state", details)`` from the failing frame, or None."""
    tb, _ = learner_frame(error)
    if tb is None:
        return None
    frame = tb.tb_frame
    source, first = _frame_code(frame)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    failing = frame.f_lineno - first + 1
    line = source.splitlines()[failing - 1] if 0 < failing <= len(source.splitlines()) else ""
    names = _differentiated_names(line) - {"torch", "autograd"}
    nodes = list(_own_scope(tree, frame.f_code.co_name != "<module>"))
    loops = [n for n in nodes if isinstance(n, ast.For | ast.While) and n.lineno <= failing <= n.end_lineno]
    assigns = [n for n in nodes if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign)]
    scope = {**frame.f_globals, **frame.f_locals}
    graphs = {n for n in _reads_all(line) if getattr(scope.get(n), "grad_fn", None) is not None}
    loop = loops[-1] if loops else None
    # the same loss: backwarded above the failing line since its last assignment
    for name in sorted(names & graphs):
        last = max((n.lineno for n in assigns if name in _assigned(n) and n.lineno < failing), default=None)
        if last is None:
            continue
        between = [n for n in nodes if isinstance(n, ast.Expr) and last < n.lineno < failing and _backwards(n, {name})]
        outside = loop is not None and not (loop.lineno <= last <= loop.end_lineno)
        if between or outside:
            where = (
                f"line {between[0].lineno + first - 1} backwarded it already"
                if between
                else "it is assigned outside the loop that backwards it in every iteration"
            )
            return "consumed_same_loss", {"name": name, "seen": f"Seen in the failing frame's code: {where}."}
    # another loss backwarded above, whose graph shares a Node with this one's
    for name in sorted(names & graphs):
        for node in (n for n in nodes if isinstance(n, ast.Expr) and n.lineno < failing):
            others = {o for o in _backwarded(node) if o != name and getattr(scope.get(o), "grad_fn", None) is not None}
            for other in sorted(others):
                shared = _shared_node(scope[name].grad_fn, scope[other].grad_fn)
                if shared:
                    seen = (
                        f"Seen in the failing frame: line {node.lineno + first - 1} backwarded {other}, and the graphs "
                        f"of {name} and {other} meet at {shared}."
                    )
                    return "consumed_shared_graph", {"name": name, "other": other, "seen": seen}
    # carried state: in the loop around the failing line, a name assigned from itself, holding a graph now
    for node in (n for lp in reversed(loops) for n in ast.walk(lp) if isinstance(n, ast.Assign | ast.AugAssign)):
        reads = _reads(node.value) | (_assigned(node) if isinstance(node, ast.AugAssign) else set())
        for name in sorted(_assigned(node) & reads):
            value = scope.get(name)
            if getattr(value, "grad_fn", None) is None:
                continue
            text = ast.get_source_segment(source, node) or name
            seen = (
                f"Seen in the failing frame: `{text}` in the loop makes {name} from its value of the previous "
                f"iteration, and {name} is {describe(value)}: it still holds that iteration's graph."
            )
            fix = f"Cut it at the iteration's end: {name} = {name}.detach() (truncated backpropagation)."
            return "consumed_carried_state", {"name": name, "seen": seen, "fix": fix}
    # made before the loop: a tensor of the failing line, with a graph, assigned (or iterated over) outside it
    if loop is not None:
        inside = {
            n
            for node in ast.walk(loop)
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign)
            for n in _assigned(node)
        }
        header = _reads(loop.target) if isinstance(loop, ast.For) else set()
        chain = {n for statement in assignments(frame, names) or [] for n in _reads_all(statement)}
        made = graphs | {n for n in chain if getattr(scope.get(n), "grad_fn", None) is not None}
        for name in sorted(made - (inside - header)):
            value = scope[name]
            made = "iterated over a tensor made before the loop" if name in header else "made before the loop"
            seen = (
                f"Seen in the failing frame: {name} is {describe(value)}, {made}: every iteration's backward "
                "goes through the graph that made it, which the first backward freed."
            )
            fix = (
                f"Compute {name} inside the loop (each backward needs its own forward); if what made it must not "
                f"be trained, detach it once before the loop ({name} = {name}.detach())."
            )
            return "consumed_carried_state", {"name": name, "seen": seen, "fix": fix}
    return None


def _reads_all(line: str) -> set[str]:
    try:
        return _reads(ast.parse(line.strip()))
    except SyntaxError:
        return set()


def _backwarded(node) -> set[str]:
    """The names ``node`` calls ``.backward(`` on (``loss.backward()``: {"loss"})."""
    return {
        call.func.value.id
        for call in ast.walk(node)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "backward"
        and isinstance(call.func.value, ast.Name)
    }


def _nodes(fn, most: int = 5000) -> list:
    """The Nodes of the graph from ``fn``, breadth first (at most ``most``)."""
    found, todo, seen = [], [fn], set()
    while todo and len(found) < most:
        node = todo.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        found.append(node)
        todo.extend(n for n, _ in getattr(node, "next_functions", ()))
    return found


def _shared_node(a, b) -> str:
    """The name of the first Node (from ``a``) that the graphs from ``a`` and ``b`` share and that saves tensors (not
    a leaf's AccumulateGrad, which saves nothing), "" when none."""
    theirs = {id(n) for n in _nodes(b)}
    for node in _nodes(a):
        if id(node) in theirs and type(node).__name__ != "AccumulateGrad":
            return type(node).__name__
    return ""
