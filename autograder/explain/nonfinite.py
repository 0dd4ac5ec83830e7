"""Where a non-finite gradient norm came from (``clip_grad_norm_(..., error_if_nonfinite=True)``): the operations of
the learner's code that make inf or NaN at a point of their input (a log, a sqrt, a division), read from its frames'
code, and, for a live error, the tensor each one read: a log of a tensor that holds zeros is named, not listed.
A paste names the operations its file's code holds, and says it cannot see the values.

``nonfinite(d, message, look, where, text, error)`` is a rule of :mod:`autograder.explain.returned`; it always returns
``(kind, details)`` with ``seen`` and ``pick`` filled ("" when nothing tells).
"""

from __future__ import annotations

import ast
import linecache

from .context import _LIBRARY, Context
from .frame import Seen
from .made import code_at, code_origin

__all__ = ["nonfinite"]

# function or method name -> (the input values that break it, what it gives there)
_BREAKS = {
    "log": ("zero", "log(0) = -inf, and its gradient 1/x is inf there"),
    "log2": ("zero", "log2(0) = -inf, and its gradient is inf there"),
    "log10": ("zero", "log10(0) = -inf, and its gradient is inf there"),
    "sqrt": ("zero", "sqrt's gradient 1/(2 sqrt(x)) is inf at 0"),
    "rsqrt": ("zero", "rsqrt(0) = inf"),
    "reciprocal": ("zero", "1/0 = inf"),
    "div": ("zero", "a division by 0 is inf (0/0 is NaN)"),
}
_FIX = {
    "log": "clamp what goes into the log (torch.log(p.clamp_min(1e-12))), or stay in log space: "
    "F.log_softmax, F.logsigmoid, nn.BCEWithLogitsLoss instead of a log of a probability",
    "sqrt": "add an eps inside (torch.sqrt(x + 1e-12)), or clamp it (x.clamp_min(1e-12))",
    "div": "add an eps to the divisor (a / (b + 1e-12)) or clamp it away from 0",
}


def _family(name: str) -> str:
    return "log" if name.startswith("log") else "sqrt" if "sqrt" in name else "div"


def _operations(source: str, first: int, last: int):
    """(name, the argument's source, line) of each breaking operation on lines first..last of ``source``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not first <= getattr(node, "lineno", 0) <= last:
            continue
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in _BREAKS:
                continue
            if node.args:
                arg = node.args[-1] if name == "div" else node.args[0]
            elif isinstance(func, ast.Attribute):  # x.log()
                arg = func.value
            else:
                continue
            found.append((name, ast.unparse(arg), node.lineno))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and not isinstance(node.right, ast.Constant):
            found.append(("div", ast.unparse(node.right), node.lineno))
    return sorted(found, key=lambda f: f[2])


def _frames(error) -> list:
    found, tb = [], getattr(error, "__traceback__", None)
    while tb is not None:
        if not _LIBRARY.search(tb.tb_frame.f_code.co_filename):
            found.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return found


def _span(frame) -> tuple[int, int]:
    code = frame.f_code
    lines = [n for _, _, n in code.co_lines() if n is not None]
    return (min(lines), max(lines)) if lines else (0, 0)


def _zeros(expression: str, frame):
    """The number of zeros (and negatives) of the tensor ``expression`` names in ``frame`` (a name or dotted name),
    or None when it names no tensor there."""
    import torch

    from .made import value_of

    try:
        value = value_of(expression, frame)
    except Exception:  # noqa: BLE001
        return None
    if not isinstance(value, torch.Tensor):
        return None
    value = value.detach()
    return int((value == 0).sum()), int((value < 0).sum()), value.numel()


def nonfinite(d, message, look: Seen | None, where: Context, text, error):
    """See the module's docstring."""
    d = {**d, "seen": "", "pick": ""}
    if isinstance(error, BaseException):
        for frame, _ in reversed(_frames(error)):
            source = "".join(linecache.getlines(frame.f_code.co_filename))
            first, last = _span(frame)
            for name, arg, line in _operations(source, first, last):
                counted = _zeros(arg, frame)
                if counted is None or not (counted[0] or (counted[1] and name in ("log", "sqrt"))):
                    continue
                zeros, negatives, n = counted
                what = f"{zeros} zero(s)" + (f" and {negatives} negative value(s)" if negatives else "")
                d["seen"] = (
                    f" Seen in the failing frames: line {line} takes {name} of {arg}, and {arg} holds {what} of its "
                    f"{n} values: {_BREAKS[name][1]}."
                )
                d["pick"] = f"Here: {_FIX[_family(name)]}. "
                return "clip_grad_nonfinite", d
        return "clip_grad_nonfinite", d
    source, lineno, _, _ = code_at(None, where, text)
    if source:
        ops = _operations(source, 1, lineno)
        if ops:
            named = ", ".join(f"{name}({arg}) on line {line}" for name, arg, line in ops[-3:])
            one = len(ops) == 1
            d["seen"] = (
                f" Read from {code_origin(where, text)}: the code takes {named}, "
                + ("which is inf or NaN at 0" if one else "each inf or NaN at 0")
                + " (a paste does not show the values, so it is not certain)."
            )
            if one:
                d["pick"] = f"If it is that {ops[0][0]}: {_FIX[_family(ops[0][0])]}. "
    return "clip_grad_nonfinite", d
