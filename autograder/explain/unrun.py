"""Two mistakes the code above the failing line shows, whatever the tensors say: a ``loss.backward`` written without
parentheses (a statement that only reads the bound method, so backward never ran: a ``.grad`` stays None), and a
gradient penalty's ``torch.autograd.grad(out, x)`` without ``create_graph=True`` whose result a loss then backwards
(that first grad freed the graph and returned a gradient with no graph of its own: "backward through the graph a
second time"). Read from source text (a frame's file or cell, or the file a paste names), so every route reads it."""

from __future__ import annotations

import ast
import re

__all__ = [
    "bare_backward",
    "bare_backward_evidence",
    "bare_in_traceback",
    "penalty_case",
    "penalty_without_create_graph",
]

_DEF = re.compile(r"\s*(?:async\s+)?def ")


def _statement(line: str):
    try:
        body = ast.parse(line.split("#")[0].strip()).body
    except SyntaxError:
        return None
    return body[0] if len(body) == 1 else None


def bare_backward(source: str | None, lineno: int) -> str:
    """The last ``X.backward`` statement (no call) above line ``lineno`` of ``source``, in the function around that
    line (or the whole cell or script), with no ``backward(`` call after it: "" where there is none."""
    if not source or lineno < 1:
        return ""
    lines = source.splitlines()[: lineno - 1]
    start = max((i for i, x in enumerate(lines) if _DEF.match(x)), default=-1) + 1
    found = ""
    for line in lines[start:]:
        if re.search(r"\.backward\s*\(|autograd\.grad\s*\(", line.split("#")[0]):
            found = ""
        node = _statement(line)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Attribute) and node.value.attr == "backward":
            found = line.strip()
    return found


def bare_backward_evidence(source: str | None, lineno: int, name: str, where: str) -> dict:
    """grad_is_none's ``why`` and ``try_this`` where :func:`bare_backward` finds the statement; {} otherwise."""
    bare = bare_backward(source, lineno)
    if not bare:
        return {}
    call = bare.split("#")[0].strip()
    return {
        "why": f"`{call}` above this line ({where}) has no parentheses: it only reads the method and never calls it, "
        f"so backward() never ran and no .grad was written ({name}.grad is None because of that, not because of "
        "zero_grad or the graph).",
        "try_this": f"Call it: {call}() (with the parentheses), before reading {name}.grad.",
    }


def bare_in_traceback(error, name: str, text: str = "") -> dict:
    """:func:`bare_backward_evidence` read in the learner's frames of ``error``'s traceback, or of the paste ``text``
    (the failing one first, then up to two that called it: a helper that reads the gradients); {} where none shows
    the statement, or its file cannot be read."""
    import linecache

    from .context import _LIBRARY

    frames, tb = [], getattr(error, "__traceback__", None)
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    if not frames and text:
        frames = [(f, int(n)) for f, n in re.findall(r'File "([^"]+)", line (\d+), in \S+', text)]
    frames = [f for f in frames if not _LIBRARY.search(f[0])]
    for depth, (filename, lineno) in enumerate(reversed(frames[-3:])):
        where = "in the failing frame's code" if depth == 0 else f"in the code that called it, {depth} frame(s) up"
        found = bare_backward_evidence("".join(linecache.getlines(filename)), lineno, name, where)
        if found:
            return found
    return {}


def _is_grad_call(call: ast.Call, source: str) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "grad":
        base = func.value
        return (isinstance(base, ast.Name) and base.id == "autograd") or (
            isinstance(base, ast.Attribute) and base.attr == "autograd"
        )
    return isinstance(func, ast.Name) and func.id == "grad" and "from torch.autograd import" in source


def _creates_graph(call: ast.Call) -> bool:
    for kw in call.keywords:
        if kw.arg == "create_graph":
            return not (isinstance(kw.value, ast.Constant) and not kw.value.value)
    return len(call.args) >= 6  # grad(outputs, inputs, grad_outputs, retain_graph, create_graph, ...) positionally


def _names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _targets(node) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return {n for t in targets if t is not None for n in _names(t)}


def penalty_without_create_graph(source: str | None, lineno: int) -> str:
    """Where line ``lineno`` of ``source`` backwards (``.backward(`` or autograd.grad) a loss made from the result of
    an earlier ``torch.autograd.grad(...)`` without ``create_graph=True`` in the same function (or cell): that call's
    text; "" otherwise, or where the code cannot be parsed."""
    try:
        tree = ast.parse(source or "")
    except SyntaxError:
        return ""
    lines = (source or "").splitlines()
    if not 0 < lineno <= len(lines) or not re.search(r"\.backward\s*\(|autograd\.grad\s*\(", lines[lineno - 1]):
        return ""
    scopes = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.lineno <= lineno <= (n.end_lineno or 0)
    ]
    scope = max(scopes, key=lambda n: n.lineno) if scopes else tree
    statements = sorted(
        (n for n in ast.walk(scope) if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign) and n.lineno < lineno),
        key=lambda n: n.lineno,
    )
    failing = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.lineno == lineno}
    for statement in statements:
        calls = [c for c in ast.walk(statement) if isinstance(c, ast.Call) and _is_grad_call(c, source or "")]
        if not calls or any(_creates_graph(c) for c in calls):
            continue
        tainted = _targets(statement)
        for later in (s for s in statements if s.lineno > statement.lineno):
            if later.value is not None and _names(later.value) & tainted:
                tainted |= _targets(later)
        if failing & tainted:
            return ast.get_source_segment(source or "", calls[0]) or lines[calls[0].lineno - 1].strip()
    return ""


def penalty_case(details: dict, look, where, text: str):
    """("second_derivative_no_create_graph", details) for "backward through the graph a second time" where the code
    (the failing frame's, or the file a paste names) backwards a loss made from a gradient taken without
    create_graph=True (:func:`penalty_without_create_graph`); None otherwise."""
    from .made import code_at

    source, lineno, _, framed = code_at(look, where, text)
    call = penalty_without_create_graph(source, lineno)
    if not call:
        return None
    seen = "the failing frame's code" if framed else "the code the traceback names"
    which = (
        f" (seen in {seen}: the loss backwarded here is made from the result of `{call}`, a gradient penalty "
        "or the like)"
    )
    penalty = (
        " That first grad also freed the graph it went through (retain_graph defaults to create_graph), so this "
        "backward finds it freed. retain_graph=True would silence the error and still leave the penalty "
        "without a gradient."
    )
    return "second_derivative_no_create_graph", {**details, "which": which, "penalty": penalty}
