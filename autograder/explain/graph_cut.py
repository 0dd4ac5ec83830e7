"""Where the graph was cut: among the statements that made the tensor a failing ``backward()`` was called on
(:func:`~autograder.explain.frame.assignments`), the call that made a tensor with no ``grad_fn`` from tensors that had
one (``torch.tensor(list_of_losses)``, ``.item()``, ``.detach()``, ``argmax``, a comparison, ...), with the objects of
the failing frame as evidence: the tensors it read require grad. Its fix keeps the graph (``torch.stack``, the tensor
itself, a differentiable loss), never a ``requires_grad`` on the result."""

from __future__ import annotations

import ast
import re

from .frame import describe
from .grad_none import _resolve

__all__ = ["graph_cut"]

_STACK = (
    "Join the tensors in the graph instead: torch.stack({arg}) (0-d or same-shape tensors; torch.cat to join along "
    "a dimension), or sum({arg}) for a total."
)
_KEEP = "Keep the tensor itself in the loss: drop {call} there, and call .item() / float() only for logging."
_LOSS = (
    "That value has no gradient at all: build the loss from the model's float output with a differentiable "
    "function (F.cross_entropy(logits, labels) instead of counting wrong argmax predictions, a softmax or sigmoid "
    "instead of a hard threshold), and keep the hard result for logging."
)
_NUMPY = "Do that computation with torch operations on the tensor (torch.exp, torch.where, ...), not NumPy."


def _callee(node: ast.Call) -> str:
    try:
        return ast.unparse(node.func)
    except (ValueError, AttributeError):  # pragma: no cover
        return ""


def _requiring(expr: ast.AST, frame) -> tuple[str, object] | None:
    """The first name (or dotted name) in ``expr`` bound in ``frame`` to a tensor that requires grad, a list or tuple
    holding one, or a module with a parameter that does: ``(name, object)``."""
    import torch

    for node in ast.walk(expr):
        if not isinstance(node, ast.Name | ast.Attribute):
            continue
        try:
            name = ast.unparse(node)
        except (ValueError, AttributeError):  # pragma: no cover
            continue
        obj = _resolve(name, frame)
        if isinstance(obj, torch.Tensor) and obj.requires_grad:
            return name, obj
        if isinstance(obj, list | tuple) and any(isinstance(x, torch.Tensor) and x.requires_grad for x in obj):
            return name, obj
        if isinstance(obj, torch.nn.Module) and any(p.requires_grad for p in obj.parameters()):
            return name, obj
    return None


def _cut_of(node: ast.AST, frame) -> tuple[str, str, str] | None:
    """``(the call, what it did, its fix)`` when ``node`` cuts the graph of a tensor the frame shows requires grad."""
    if isinstance(node, ast.Compare):
        read = _requiring(node, frame)
        if read:
            return ast.unparse(node), f"a comparison, whose result (bool) has no gradient; {_seen(read)}", _LOSS
        return None
    if isinstance(node, ast.Attribute) and node.attr == "data":
        read = _requiring(node.value, frame)
        if read:
            return (
                ast.unparse(node),
                f".data gives the values without the graph; {_seen(read)}",
                _KEEP.format(call=".data"),
            )
        return None
    if not isinstance(node, ast.Call):
        return None
    callee = _callee(node)
    arg = node.args[0] if node.args else None
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
    method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
    if re.fullmatch(
        r"(?:torch\.)?(?:tensor|as_tensor|Tensor|FloatTensor|DoubleTensor)|(?:np|numpy)\.(?:array|asarray)", callee
    ):
        read = _requiring(arg, frame) if arg is not None else None
        if read:
            what = f"{callee} copies the values of what it is given into a new tensor with no history; {_seen(read)}"
            return ast.unparse(node), what, _STACK.format(arg=ast.unparse(arg))
        return None
    if callee in ("float", "int") and arg is not None:
        read = _requiring(arg, frame)
        return (
            (ast.unparse(node), f"{callee}() makes a Python number; {_seen(read)}", _KEEP.format(call=callee + "()"))
            if read
            else None
        )
    if receiver is None:
        return None
    what = {
        "item": ".item() makes a Python number",
        "tolist": ".tolist() makes Python numbers",
        "detach": ".detach() returns the values without the graph",
        "numpy": ".numpy() leaves torch (NumPy records no graph)",
        "argmax": "argmax returns integer positions, which have no gradient",
        "argmin": "argmin returns integer positions, which have no gradient",
        "long": "an integer cast has no gradient",
        "int": "an integer cast has no gradient",
        "bool": "a bool cast has no gradient",
    }.get(method)
    if method in ("max", "min") and node.args:
        what = f"{method}(dim) returns (values, indices), and the indices have no gradient"
    if what is None:
        return None
    read = _requiring(receiver, frame)
    if not read:
        return None
    fix = (
        _NUMPY
        if method == "numpy"
        else _KEEP.format(call=f".{method}()")
        if method in ("item", "tolist", "detach")
        else _LOSS
    )
    return ast.unparse(node), f"{what}; {_seen(read)}", fix


def _seen(read) -> str:
    name, obj = read
    import torch

    grads = ", whose parameters require grad" if isinstance(obj, torch.nn.Module) else ""
    return f"seen in the failing frame: {name} is {describe(obj)}{grads}"


def graph_cut(made: list[str], frame) -> dict | None:
    """``{"cut", "fix"}`` for the first statement of ``made`` (nearest first) holding a call that cuts the graph of a
    tensor the frame shows requires grad; None when none does."""
    for statement in made:
        try:
            tree = ast.parse(statement.strip())
        except SyntaxError:
            continue
        value = tree.body[0].value if tree.body and isinstance(tree.body[0], ast.Assign | ast.AugAssign) else tree
        for node in ast.walk(value):
            found = _cut_of(node, frame)
            if found:
                call, what, fix = found
                first = statement.strip().splitlines()[0][:120]
                return {"cut": f"`{call}` in `{first}`: {what}", "fix": fix}
    return None


# a warning that a tensor requiring grad was read as numbers, and the source line Python quotes under it
_PASTED_WARNING = re.compile(
    r"^\S[^\n]*?:\d+: UserWarning: (?P<warning>Converting a tensor with requires_grad=True to a scalar|To copy "
    r"construct from a tensor)[^\n]*\n(?:\S[^\n]*\n)*?(?P<line>[ \t]+\S[^\n]*)",
    re.M,
)


def pasted_cut(text: str) -> dict | None:
    """``{"cut", "fix", "seen"}`` from a paste whose warning above the error says that a tensor requiring grad was
    copied as values (torch.tensor of tensors, float()), quoting the line that did it; None when it does not."""
    matches = list(_PASTED_WARNING.finditer(text))
    if not matches:
        return None
    found = matches[-1]
    line = code_only(found["line"])
    call = re.search(r"(?:torch\.)?(?:tensor|as_tensor|Tensor)\(\s*([^()]*?(?:\([^()]*\))?[^()]*?)\)", line)
    if call and re.search(r"\btorch\.", call[0]):
        fix = _STACK.format(arg=call[1].split(",")[0].strip() or "tensors")
        what = "torch.tensor copies the values of the tensors it is given into a new tensor with no history"
    elif re.search(r"\b(?:float|int)\(", line):
        call, fix = re.search(r"\b(?:float|int)\([^)]*\)", line), _KEEP.format(call="float()")
        what = "it makes a Python number of a tensor that requires grad"
    else:
        return None
    seen = f"Seen in the paste: the warning above it ({found['warning']}) quotes the line."
    return {"cut": f"`{call[0]}` in `{line}`: {what}", "fix": fix, "seen": seen}


def code_only(line: str) -> str:
    """``line`` stripped, without a trailing comment (a ``#`` outside quotes)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[:i].strip()
    return line.strip()
