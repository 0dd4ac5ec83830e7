"""What the failing frame of the learner's code holds: the line that raised (the exact expression, from Python's
instruction positions), the objects its names are bound to there, and a short description of each torch object
among them (a tensor's shape, dtype, requires_grad, is_leaf and grad_fn; a module, the wrapper around one, an
optimizer's param groups; a tuple or a Python number where a tensor was expected).

The evidence is the frame's own: names are looked up in the frame that raised (its locals, then its globals),
never in text elsewhere in the file or the cell. Nothing is called to find an object (attribute reads only,
``inspect.getattr_static`` first). Never raises.
"""

from __future__ import annotations

import ast
import linecache
import re
import types
from dataclasses import dataclass, field

from .context import _LIBRARY
from .grad_none import _resolve

__all__ = ["Seen", "assignments", "describe", "learner_frame", "seen"]

_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


@dataclass(frozen=True)
class Seen:
    """The learner's failing frame: ``frame`` (None for a paste), ``line`` (the whole line, stripped),
    ``segment`` (the expression that raised, or the line), ``objects`` (each name or dotted name of the segment
    that the frame binds: its object, in the order written)."""

    frame: types.FrameType | None = None
    line: str = ""
    segment: str = ""
    objects: dict = field(default_factory=dict)
    library_called: str = ""  # "file:function" of the first torch frame the learner's line called ("" if none)

    def torch_objects(self) -> dict:
        """The objects of the segment that are torch's (tensor, module, optimizer, a torch class), or a tuple or
        list holding a tensor: name -> description."""
        found = {}
        for name, obj in self.objects.items():
            text = describe(obj)
            if text:
                found[name] = text
        return found


def learner_frame(error):
    """The traceback entry of ``error`` whose frame is the learner's and raised or called into a library last
    (the innermost frame not in torch, Python or the course), and the next entry (where it called), or
    ``(None, None)``."""
    tb, found, after = getattr(error, "__traceback__", None), None, None
    while tb is not None:
        if not _LIBRARY.search(tb.tb_frame.f_code.co_filename):
            found, after = tb, tb.tb_next
        tb = tb.tb_next
    return found, after


def _segment(tb) -> tuple[str, str]:
    """The failing line of the traceback entry ``tb`` (stripped) and its expression that raised."""
    code, lineno = tb.tb_frame.f_code, tb.tb_lineno
    line = linecache.getline(code.co_filename, lineno)
    try:
        positions = list(code.co_positions())[tb.tb_lasti // 2]
        start, end, col, end_col = positions
        if start == end == lineno and col is not None and end_col is not None:
            return line.strip(), line.encode()[col:end_col].decode(errors="replace")
    except (IndexError, ValueError, AttributeError, TypeError):
        pass
    return line.strip(), line.strip()


def _names(segment: str) -> list[str]:
    """The names and dotted names (``model.fc.weight``) in ``segment``, outermost chains first."""
    text = segment.strip()
    if text.startswith("with ") and text.endswith(":"):
        text = text[5:-1]
    for candidate in (text, text.rstrip(":"), f"({text})"):
        try:
            tree = ast.parse(candidate, mode="eval")
            break
        except SyntaxError:
            tree = None
    if tree is None:
        return list(dict.fromkeys(m.group(0) for m in _DOTTED.finditer(text)))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute | ast.Name):
            try:
                dotted = ast.unparse(node)
            except (ValueError, AttributeError):  # pragma: no cover - ast.unparse of a name never fails
                continue
            if _DOTTED.fullmatch(dotted):
                found.append(dotted)
    return list(dict.fromkeys(found))


def seen(error) -> Seen | None:
    """The learner's failing frame of ``error`` and the objects its failing expression names (None when no frame
    of the traceback is the learner's)."""
    try:
        tb, after = learner_frame(error)
        if tb is None:
            return None
        line, segment = _segment(tb)
        objects = {}
        for name in _names(segment):
            obj = _resolve(name, tb.tb_frame)
            if obj is not None or name in tb.tb_frame.f_locals:
                objects[name] = obj
        obj = getattr(error, "obj", None)  # AttributeError knows the object that lacked the attribute
        if isinstance(error, AttributeError) and obj is not None:
            objects.setdefault("<object>", obj)
        called = ""
        if after is not None:
            called = f"{after.tb_frame.f_code.co_filename}:{after.tb_frame.f_code.co_name}"
        return Seen(tb.tb_frame, line, segment, objects, called)
    except Exception:  # noqa: BLE001 -- reading a frame must never add an error of its own
        return None


def _tensor(t) -> str:
    made = f"grad_fn={type(t.grad_fn).__name__}" if t.grad_fn is not None else "grad_fn=None"
    return (
        f"a tensor of shape {list(t.shape)}, dtype {str(t.dtype).removeprefix('torch.')}, "
        f"requires_grad={t.requires_grad}, is_leaf={t.is_leaf}, {made}"
    )


def describe(obj) -> str:
    """A short description of a torch object (tensor, module, optimizer, torch's grad-mode classes), of a tuple or
    list holding tensors, or of a Python number; "" for anything else."""
    import torch

    try:
        if isinstance(obj, torch.Tensor):
            return _tensor(obj)
        if isinstance(obj, torch.nn.Module):
            inner = getattr(obj, "module", None) or getattr(obj, "_orig_mod", None)
            params = sum(1 for _ in obj.parameters())
            text = f"an nn.Module ({type(obj).__name__}, {params} parameter tensors)"
            if isinstance(inner, torch.nn.Module):
                what = "module" if getattr(obj, "module", None) is inner else "_orig_mod"
                text += f", a wrapper whose .{what} is a {type(inner).__name__}"
            return text
        if isinstance(obj, torch.optim.Optimizer):
            sizes = ", ".join(str(len(g["params"])) for g in obj.param_groups)
            return f"a {type(obj).__name__} optimizer with {len(obj.param_groups)} param group(s) of {sizes} tensors"
        if isinstance(obj, tuple | list) and any(isinstance(x, torch.Tensor) for x in obj):
            kinds = ", ".join("tensor" if isinstance(x, torch.Tensor) else type(x).__name__ for x in obj[:4])
            named = type(obj).__module__ == "torch.return_types"
            what = f"torch.return_types.{type(obj).__name__} (a named tuple)" if named else type(obj).__name__
            return f"a {what} of {len(obj)} ({kinds}{', ...' if len(obj) > 4 else ''})"
        if isinstance(obj, bool):
            return ""
        if isinstance(obj, int | float):
            return f"a Python {type(obj).__name__} ({obj!r}), not a tensor"
        if isinstance(obj, type) and obj.__module__.startswith("torch") and hasattr(obj, "__enter__"):
            return f"the class {obj.__module__.split('.')[0]}.{obj.__name__} itself, not an instance of it"
    except Exception:  # noqa: BLE001
        return ""
    return ""


def _frame_code(frame) -> tuple[str, int]:
    """The code of ``frame`` (its function, dedented; at module level its whole cell or script) and the line
    number its first line has; ("", 0) when it cannot be read."""
    import inspect
    import textwrap

    code = frame.f_code
    try:
        if code.co_name == "<module>":
            return "".join(linecache.getlines(code.co_filename)), 1
        lines, first = inspect.getsourcelines(code)
        return textwrap.dedent("".join(lines)), max(first, 1)
    except (OSError, TypeError, IndexError):
        return "", 0


def _own_scope(tree, function: bool):
    """The nodes of the frame's own scope: the module's statements, or the first function's body, not those of the
    functions, lambdas and classes defined in it."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    roots = tree.body
    if function and roots and isinstance(roots[0], ast.FunctionDef | ast.AsyncFunctionDef):
        roots = roots[0].body
    todo = list(roots)
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, nested))


def assignments(frame, names: set[str], depth: int = 4) -> list[str] | None:
    """The statements of ``frame``'s own code, above its failing line, that last assigned ``names`` before it, and
    (``depth`` levels) those that assigned the names their right-hand sides read, nearest first: how the frame made
    what its failing line uses. None when the code cannot be read or parsed."""
    source, first = _frame_code(frame)
    if not source:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    failing = frame.f_lineno - first + 1
    bound = []  # (line, targets, statement, names it reads)
    for node in _own_scope(tree, frame.f_code.co_name != "<module>"):
        targets = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.For):
            targets, value = [node.target], node.iter
        if not targets or node.lineno >= failing:
            continue
        written = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        read = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        bound.append((node.lineno, written, ast.get_source_segment(source, node) or "", read))
    bound.sort(key=lambda b: -b[0])
    found, todo, done = [], set(names), set()
    for _ in range(depth):
        nxt = set()
        for name in todo - done:
            done.add(name)
            last = next((b for b in bound if name in b[1]), None)
            if last and last[2] not in found:
                found.append(last[2])
                nxt |= last[3]
        todo = nxt
    return found


def enclosing_with(frame, statement: str) -> str:
    """The ``with`` items (``torch.no_grad()``) of the blocks of ``frame``'s own code that enclose ``statement`` (a
    statement as :func:`assignments` returns it), "" when none or the code cannot be read."""
    source, _ = _frame_code(frame)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    for node in _own_scope(tree, frame.f_code.co_name != "<module>"):
        if isinstance(node, ast.With | ast.AsyncWith):
            inner = [ast.get_source_segment(source, s) for s in ast.walk(node) if isinstance(s, ast.stmt)]
            if statement in inner:
                return ", ".join(ast.unparse(item.context_expr) for item in node.items)
    return ""
