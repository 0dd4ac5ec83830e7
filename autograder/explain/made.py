"""Where the names of the learner's failing line were made: the frame's code (or, for a paste, the file its traceback
names, when that file's line still reads as the paste quotes it), the statement that last bound a name above the
failing line, the call it made, and the object a dotted name reads in a frame. Read by
:mod:`autograder.explain.api_return`. Nothing here raises on the learner's code: a code that cannot be read gives None.
"""

from __future__ import annotations

import ast
import linecache
import re

from .context import _LIBRARY, Context
from .frame import Seen, describe
from .grad_none import _resolve
from .quoted import failing_quote as _failing_quote

__all__ = [
    "STEP_PER_PASS",
    "per_pass",
    "loop_around",
    "pasted_reset",
    "code_origin",
    "code_at",
    "made_by",
    "call_of",
    "value_of",
    "show",
    "type_name",
]


def code_at(look: Seen | None, where: Context, text: str):
    """(source, failing line number in it, failing line, from a frame?) of the learner's failing frame: the frame's
    file (or cell) read through linecache; for a paste, its last learner's ``File "...", line N`` when that file's
    line N still reads as the paste quotes it. (None, 0, line, False) when the code cannot be read."""
    if look is not None and look.frame is not None:
        name, lineno = look.frame.f_code.co_filename, look.frame.f_lineno
        return "".join(linecache.getlines(name)), lineno, look.line, True
    line = _failing_quote(where)
    files = [f for f in re.findall(r'File "([^"]+)", line (\d+), in \S+', text) if not _LIBRARY.search(f[0])]
    if files:
        name, lineno = files[-1][0], int(files[-1][1])
        lines = linecache.getlines(name)
        if 0 < lineno <= len(lines) and line and lines[lineno - 1].strip().startswith(line[:60]):
            return "".join(lines), lineno, line, False
    quoted = _ipython_lines(text)
    if quoted:
        return quoted[0], quoted[1], quoted[0].splitlines()[quoted[1] - 1].strip(), False
    return None, 0, line, False


def code_origin(where: Context, text: str) -> str:
    """Where :func:`code_at` read a paste's code: "the traceback's file", or "the lines the paste quotes"."""
    source, _, _, _ = code_at(None, where, text)
    return (
        "the lines the paste quotes"
        if source is not None and source == (_ipython_lines(text) or ("",))[0]
        else ("the traceback's file")
    )


def _ipython_lines(text: str):
    """The numbered lines IPython quotes around the failing one (``---> 12 code`` and its neighbours) of the paste's
    last block, as a source with blank lines elsewhere, and the failing line's number; None when it quotes none."""
    block = re.split(r"^(?:Cell In\[\d+\]|File [~/\\]).*$", text, flags=re.MULTILINE)[-1]
    lines, failing = {}, 0
    for found in re.finditer(r"^(-*>)?\s*(\d+) (.*)$", block, flags=re.MULTILINE):
        lines[int(found[2])] = found[3]
        failing = int(found[2]) if found[1] else failing
    if not failing:
        return None
    return "\n".join(lines.get(n, "") for n in range(1, max(lines) + 1)), failing


def made_by(source: str | None, lineno: int, name: str):
    """The statement of the innermost function around ``lineno`` that last bound the bare ``name`` above that line
    (an assignment or a ``for`` target), as (its first line, its value node, its source); None if none is found."""
    if not source:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a part of the code (the lines a paste quotes): each line read alone
        return _made_by_lines(source, lineno, name)
    scope = tree
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno <= lineno <= (node.end_lineno or 0):
            if scope is tree or node.lineno > scope.lineno:
                scope = node
    best = None
    for node in ast.walk(scope):
        targets = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.For):
            targets, value = [node.target], node.iter
        if not targets or node.lineno >= lineno:
            continue
        if name in {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}:
            if best is None or node.lineno > best[0].lineno:
                best = (node, value)
    if best is None:
        return None
    node, value = best
    first = (ast.get_source_segment(source, node) or "").strip().splitlines()
    return (first[0][:120] if first else ""), value, source


def _made_by_lines(source: str, lineno: int, name: str):
    """:func:`made_by` for code that does not parse as a whole: the nearest line above ``lineno`` that parses alone
    (a ``for`` header with a ``pass`` body) and binds ``name``."""
    for text in reversed(source.splitlines()[: lineno - 1]):
        code = text.strip()
        try:
            node = ast.parse(code + (" pass" if code.endswith(":") else "")).body[0]
        except (SyntaxError, IndexError):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.For) else []
        if name in {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}:
            return code[:120], node.value if isinstance(node, ast.Assign) else node.iter, source
    return None


def call_of(value):
    """(method or function name, receiver's source) of a call node (``loss.backward()`` -> ("backward", "loss"))."""
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Attribute):
        return func.attr, ast.unparse(func.value)
    if isinstance(func, ast.Name):
        return func.id, ""
    return None


def value_of(dotted: str, frame):
    """The object ``dotted`` names in ``frame``, a method bound as the code would see it (attribute reads only)."""
    return _resolve(dotted, frame, static=False)


def show(obj) -> str:
    """A torch object as :func:`describe` says it, else its type and a short repr."""
    if obj is None:
        return "None"
    if isinstance(obj, dict):
        keys = ", ".join(repr(k) for k in list(obj)[:6])
        return f"a {type_name(obj)} with keys {keys}{', ...' if len(obj) > 6 else ''}"
    if isinstance(obj, list | tuple) and not describe(obj):
        return f"a {type_name(obj)} of {len(obj)}"
    text = repr(obj)
    return describe(obj) or f"a {type_name(obj)} {text[:60]}{'...' if len(text) > 60 else ''}"


def type_name(obj) -> str:
    return type(obj).__name__


def loop_around(source: str | None, lineno: int, call: str) -> tuple[str, bool, str] | None:
    """The innermost ``for`` or ``while`` loop of ``source`` whose body holds line ``lineno``: (its header line, whether
    its body also calls ``.call(``, its body's code); None when no loop holds it or the code cannot be read. Evidence
    that one call site runs once per pass of that loop."""
    if not source:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.While | ast.AsyncFor) and node.body:
            if node.body[0].lineno <= lineno <= (node.end_lineno or 0):
                if found is None or node.lineno > found.lineno:
                    found = node
    if found is None:
        return None
    header = source.splitlines()[found.lineno - 1].strip()
    body = "\n".join(ast.get_source_segment(source, s) or "" for s in found.body)
    return header[:120], re.search(rf"\.{re.escape(call)}\(", body) is not None, body


def pasted_reset(what: str, where: Context, text: str) -> dict:
    """For a paste whose failing line reads ``X.grad`` as None: the ``zero_grad()`` call its traceback's file runs
    after the function's last ``backward()`` and above the failing line (same block order), as grad_is_none's
    grad_reset's ``reset``, ``checked`` and ``try_this``; {} when the file cannot be read or shows none."""
    source, lineno, _, _ = code_at(None, where, text)
    if not source:
        return {}
    from .unrun import bare_backward_evidence, bare_in_traceback

    name = what.removesuffix(".grad")
    bare = bare_in_traceback(None, name, text) or bare_backward_evidence(source, lineno, name, "in the pasted lines")
    if bare:
        return bare
    lines = source.splitlines()[: lineno - 1]
    start = max((i for i, x in enumerate(lines) if re.match(r"\s*(?:async\s+)?def ", x)), default=-1) + 1
    found = None
    for number, line in enumerate(lines[start:], start + 1):
        code = line.split("#")[0]
        if re.search(r"\.backward\(|autograd\.grad\(", code):
            found = None
        call = re.search(r"[A-Za-z_][\w.]*\.zero_grad\(([^)]*)\)", code)
        if call and "set_to_none=False" not in call[1].replace(" ", ""):
            found = (number, call[0])
    if found is None:
        return {}
    name = what.removesuffix(".grad")
    return {
        "reset": found[1],
        "name": name,
        "checked": f" (line {found[0]} of {code_origin(where, text)}; a paste does not show whether {name} is among "
        "its parameters)",
        "try_this": f"Read or log {what} after backward() and before zero_grad() (or guard it: `if {what} is not "
        "None`); pass set_to_none=False only where your code needs tensors of zeros.",
    }


STEP_PER_PASS = (
    "If each pass is a step of its own, call scaler.update() right after scaler.step(opt) in the loop; if the passes "
    "are micro-batches of one step, call scaler.step(opt) and scaler.update() once, after the loop."
)


def per_pass(loop, calls_in_body: list[str], call: str) -> str:
    """Where the failing GradScaler ``call`` is the one such call in the body of ``loop`` (:func:`loop_around`) and that
    body has no ``update()``: the clause saying it runs once per pass; "" otherwise (the evidence does not tell)."""
    if not loop or loop[1] or calls_in_body.count(call) != 1:
        return ""
    return (
        f"the failing scaler.{call} call is inside the loop `{loop[0]}`, whose body has no scaler.update(), so it runs "
        "once per pass (per micro-batch), not once per update"
    )


def per_pass_story(what: str, loop, calls, pasted: bool = False) -> str:
    """GradScaler's "unscale_() has already been called" or "step() has already been called" (``what``) told as one
    call site run by each pass of ``loop`` (:func:`loop_around`), where its body (read with ``calls``, the scaler
    calls of a code) makes that call once and no update(); "" where the code does not show that."""
    call = (
        "unscale_" if "unscale_() has already been called" in what else "step" if "step() has already" in what else ""
    )
    lead = per_pass(loop, calls(loop[2]) if loop and call else [], call)
    if not lead:
        return ""
    lead += " (read from the code the traceback names)" if pasted else ""
    if call == "step":
        return f"step() ran a second time before update(): {lead}. {STEP_PER_PASS}"
    return (
        f"unscale_ ran a second time for this optimizer before update(): {lead}: once per optimizer and iteration is "
        "allowed, since a second one would divide the gradients by the scale again. Move scaler.unscale_(opt) and "
        "the clipping out of that loop, after it, right before scaler.step(opt)."
    )
