"""Pick and fill the kinds of :mod:`autograder.kinds.returned` from what the failing frame holds (an exception) or what
a pasted traceback's lines show: a tuple used as a tensor (whose tuple: ``torch.autograd.grad``'s, a hook's argument,
another call's), a computed tensor assigned over a Parameter, an optimizer's empty parameter list, a scheduler's
missing ``initial_lr``, an integer tensor made by a non-differentiable operation and then asked to require grad.

``returned_kind(kind, details, text, where, error)`` returns ``(kind, details)``: the same when no rule applies.
Never raises.
"""

from __future__ import annotations

import ast
import re

from .api_passed import duplicate_params, item_of_many
from .api_return import api_unknown
from .context import _LIBRARY, Context
from .frame import Seen, assignments, describe, seen
from .graph_cut import code_only
from .made import code_at, code_origin, made_by
from .nonfinite import nonfinite
from .optimizers import empty_params, nonleaf, scheduler
from .plain import none_not_grad, plain_unknown, softmax_dim, state_dict_groups, unexpected_keyword, vjp_outputs
from .quoted import PASTE as _PASTE
from .quoted import caret_segment as _caret_segment
from .quoted import failing_quote as _failing_quote
from .quoted import library_local as _library_local

__all__ = ["returned_kind", "NOT_DIFFERENTIABLE"]

# a tuple used where a tensor is expected: the attribute read on it, the operator, the argument
_TUPLE = re.compile(
    r"'(?:tuple|torch\.return_types\.\w+)' object has no attribute '(?P<attr>\w+)'"
    r"|unsupported operand type\(s\) for (?P<op>.+?): (?:'tuple' and '[\w.]+'|'[\w.]+' and 'tuple')"
    r"|bad operand type for unary (?P<unary>\S+): 'tuple'"
    r"|argument '(?P<arg>\w+)' \(position \d+\) must be Tensor, not tuple"
    r"|can't (?P<seq>multiply) sequence by non-int|can only (?P<cat>concatenate) tuple"
)
_HOOK_CALLERS = r"nn[/\\]modules[/\\]module\.py|utils[/\\]hooks\.py"
# operations whose result has no gradient: (regex on the code, what it made)
NOT_DIFFERENTIABLE = (
    (r"\.?\bargmax\(|\.?\bargmin\(", "the positions of a maximum or minimum (argmax/argmin): integers"),
    (r"\.(?:max|min)\(\s*(?:dim\s*=\s*)?-?\d", "the indices that max(dim)/min(dim) return beside the values: integers"),
    (r"\.(?:topk|sort|argsort)\(", "the indices of topk/sort: integers"),
    (r"[^=!<>]==[^=]|!=|[^<>=]<=?[^<=]|[^<>=-]>=?[^>=]", "a comparison: a bool tensor (0/1)"),
    (r"\.(?:long|int|bool|to\(torch\.(?:long|int\d*|bool))\(", "an integer or bool cast: no fractions, no gradient"),
)


def returned_kind(kind: str, details: dict, text: str, where: Context, error) -> tuple[str, dict]:
    """See the module's docstring."""
    try:
        rule = _RULES.get(kind)
        if rule is None:
            return kind, details
        look = seen(error) if isinstance(error, BaseException) else None
        found = rule(dict(details), _last_message(text), look, where, text, error)
        return found or (kind, details)
    except Exception:  # noqa: BLE001 -- a rule must never cost the explanation
        return kind, details


def _last_message(text: str) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip() and not x.startswith((" ", "\t"))]
    return "\n".join(lines[-3:]) if lines else text


def _pasted_frames(text: str) -> list[tuple[str, str]]:
    return re.findall(r'File "([^"]+)", line \d+, in (\S+)', text)


# ------------------------------------------------------------------------------------------------ a tuple
def _unknown(d, message, look: Seen | None, where: Context, text, error):
    return (
        _tuple(d, message, look, where, text, error)
        or _none(d, message, look, where, text, error)
        or api_unknown(d, message, look, where, text, error)
        or plain_unknown(d, message, look, where, text, error)
    )


def _none(d, message, look: Seen | None, where: Context, text, error):
    """``loss.backward()`` on None: what made the name None (a function with no ``return``, a method that returns None
    such as ``optimizer.step()`` or ``list.append``)."""
    if "'NoneType' object has no attribute 'backward'" not in message:
        return None
    line = code_only(look.line) if look is not None else _failing_quote(where)
    found = re.findall(r"([A-Za-z_][\w.]*)\s*\.\s*backward\(", line)
    name = found[-1] if found else "it"
    fix = (
        "Find what made it None and return the loss from there: a function that computes the loss needs "
        "`return loss` at its end; methods that act in place (optimizer.step(), list.append, dict.update) return None."
    )
    if look is None or look.frame is None:
        return "backward_on_none", {
            **d,
            "name": name,
            "seen": f"{_PASTE}where {name} was made is not in it.",
            "fix": fix,
        }
    made = assignments(look.frame, {name.split(".")[0]}, depth=1) if name.isidentifier() else None
    if not made:
        return "backward_on_none", {**d, "name": name, "seen": "", "fix": fix}
    statement = made[0].strip().splitlines()[0][:120]
    shown = f"Seen in the failing frame: {name} is None, made by `{statement}`."
    call = re.search(r"=\s*([A-Za-z_][\w.]*)\(", statement)
    func = _resolve_in(call[1], look.frame) if call else None
    code = getattr(func, "__code__", None)
    if code is not None and not _returns_value(func):
        shown += f" {call[1]} has no `return` of a value, so calling it gives None."
        fix = f"End {call[1]} with `return loss` (the tensor it computes), and call backward() on what it returns."
    return "backward_on_none", {**d, "name": name, "seen": shown, "fix": fix}


def _resolve_in(dotted: str, frame):
    from .grad_none import _resolve

    return _resolve(dotted, frame)


def _returns_value(func) -> bool:
    """Does ``func``'s source hold a ``return`` with a value (True when it cannot be read)?"""
    import inspect
    import textwrap

    try:
        source = textwrap.dedent(inspect.getsource(func)).strip()
        tree = ast.parse(source if not source.startswith(".") else "_" + source)
    except (OSError, TypeError, SyntaxError):
        return True
    if getattr(func, "__name__", "") == "<lambda>":  # its body is its value: None only from a call that returns None
        bodies = [n.body for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
        return any(not _none_call(b) for b in bodies) if bodies else True
    return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(tree))


def _none_call(node) -> bool:
    """Is ``node`` a call that returns None (print, list.append, dict.update, ...)?"""
    if not isinstance(node, ast.Call):
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    return name in {"print", "append", "extend", "update", "add", "insert", "setdefault", "__setitem__"}


def _tuple(d, message, look: Seen | None, where: Context, text, error):
    m = _TUPLE.search(message)
    if not m:
        return None
    use = (
        f"it reads .{m['attr']}"
        if m["attr"]
        else f"the {m['op'] or m['unary'] or ('*' if m['seq'] else '+')} operator"
        if m["op"] or m["unary"] or m["seq"] or m["cat"]
        else f"it is passed as the tensor argument '{m['arg']}'"
    )
    d = {**d, "use": use}
    if look is not None and look.frame is not None:
        return _tuple_seen(d, m, look, error)
    if not where.pasted:
        return None
    source, lineno, quoted, _ = code_at(None, where, text)
    for name in dict.fromkeys(re.findall(r"(?<![\w.])([A-Za-z_]\w*)\b", quoted)):  # any name the file shows made
        made = made_by(source, lineno, name)  # by autograd.grad: a tuple, even behind an operator
        if made and re.search(r"autograd\.grad\(|(?<![\w.])grad\(", made[0]):
            shown = f"Read from {code_origin(where, text)}: {name} was made by `{made[0]}`."
            return "grad_returns_tuple", {**d, "name": name, "seen": shown}
    if m["seq"]:  # a list is a sequence too: only the object tells
        return None
    line = _failing_quote(where)
    marked = _caret_segment(text) or line
    name = re.findall(rf"([A-Za-z_]\w*)\s*\.\s*{m['attr']}\b", marked) if m["attr"] else []
    name = name[0] if name else "the value"
    frames = _pasted_frames(text)
    mine = bool(frames) and not _LIBRARY.search(frames[-1][0])
    caller = frames[-2][0] if len(frames) > 1 else ""
    if mine and re.search(_HOOK_CALLERS, caller) and frames[-1][1] != "forward":
        shown = (
            f"{_PASTE}the failing function {frames[-1][1]} was called by torch's {caller.split('torch')[-1]}: a hook."
        )
        return "hook_args_tuple", {**d, "name": name, "hook": frames[-1][1], "seen": shown}
    if re.search(r"autograd\.grad\(|\bgrad\(", line):
        return "grad_returns_tuple", {**d, "name": name, "seen": f"{_PASTE}the failing line calls it."}
    source, lineno, _, _ = code_at(None, where, text)
    made = made_by(source, lineno, name) if name.isidentifier() else None
    if made:  # the traceback's file, where its line still reads as the paste quotes it
        shown = f"Read from {code_origin(where, text)}: {name} was made by `{made[0]}`"
        if re.search(r"autograd\.grad\(|(?<![\w.])grad\(", made[0]):
            return "grad_returns_tuple", {**d, "name": name, "seen": shown + "."}
        fix = "Unpack what that call returns (a, b = ...) and use the tensor you need. " + _TUPLE_FIX
        return "tuple_as_tensor", {**d, "name": name, "seen": shown + ": that call returns several values.", "fix": fix}
    shown = f"{_PASTE}where {name} was made is not in it."
    return "tuple_as_tensor", {**d, "name": name, "seen": shown, "fix": _TUPLE_FIX}


_TUPLE_FIX = (
    "Find where it was made and take the tensor out: torch.autograd.grad returns one gradient per input, "
    "(g,) = torch.autograd.grad(out, x); a hook's input, grad_input and grad_output are tuples, input[0]; "
    "values, indices = t.max(dim) (also min, sort, topk); out, (h, c) = lstm(x); loss, logits = model(x) for a "
    "forward that returns several values."
)


def _tuple_seen(d, m, look: Seen, error):
    obj = getattr(error, "obj", None) if m["attr"] else None
    tuples = [(n, o) for n, o in look.objects.items() if isinstance(o, tuple) and n != "<object>"]
    named = [(n, o) for n, o in tuples if obj is None or o is obj]
    if not named:
        return _hooked_output(d, look)
    name, value = named[0]
    shown = f"Seen in the failing frame: {name} is {describe(value) or f'a tuple of {len(value)}'}."
    frame = look.frame
    code = frame.f_code
    arguments = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    caller = _caller(error)
    if name in arguments and re.search(_HOOK_CALLERS, caller) and code.co_name != "forward":
        shown += f" It is an argument of {code.co_name}, which torch called ({caller.split('torch')[-1]}): a hook."
        return "hook_args_tuple", {**d, "name": name, "hook": code.co_name, "seen": shown}
    made = assignments(frame, {name.split(".")[0]}, depth=1) or []
    if made and re.search(r"autograd\.grad\(|(?<![\w.])grad\(", made[0]):
        shown += f" It was made by `{made[0].strip().splitlines()[0][:120]}`."
        return "grad_returns_tuple", {**d, "name": name, "seen": shown}
    fix = _TUPLE_FIX
    if made:
        first = made[0].strip().splitlines()[0][:120]
        shown += f" It was made by `{first}`: that call returns several values."
        fix = "Unpack what that call returns (a, b = ...) and use the tensor you need. " + _TUPLE_FIX
    first = value[0] if value else None
    if m["attr"] == "backward" and getattr(first, "numel", lambda: 1)() > 1:
        fix += (
            f" Then reduce it to one number before backward(): {name}[0] has {first.numel()} elements, so "
            f"{name}[0].backward() would fail next (a scalar is needed): {name}[0].sum().backward(), or the "
            "reduction you meant (.mean())."
        )
    return "tuple_as_tensor", {**d, "name": name, "seen": shown, "fix": fix}


def _hooked_output(d: dict, look: Seen):
    """A module of the failing expression with a forward hook that returns a value: its return replaced the output."""
    import torch

    for name, obj in look.objects.items():
        hooks = getattr(obj, "_forward_hooks", {}) if isinstance(obj, torch.nn.Module) else {}
        for hook in hooks.values():
            code = getattr(hook, "__code__", None)
            if code is None or not _returns_value(hook):
                continue
            label = getattr(hook, "__qualname__", "hook")
            shown = (
                f"Seen in the failing frame: {name} has a forward hook ({label}) that returns a value, and a forward "
                f"hook's return value replaces the module's output: {name}(...) gave a tuple."
            )
            fix = (
                "Make the hook return None (store what it computes in a list or dict instead), or return a value of "
                "the output's own type and shape (one tensor for a tensor output)."
            )
            return "tuple_as_tensor", {**d, "name": f"the output of {name}(...)", "seen": shown, "fix": fix}
    return None


def _caller(error) -> str:
    """The file of the traceback entry that called the learner's failing frame ("" if none)."""
    entries, tb = [], getattr(error, "__traceback__", None)
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    mine = [i for i, e in enumerate(entries) if not _LIBRARY.search(e.tb_frame.f_code.co_filename)]
    if not mine or mine[-1] == 0:
        return ""
    return entries[mine[-1] - 1].tb_frame.f_code.co_filename


# ------------------------------------------------------------------------------------------- a Parameter
def _parameter(d, message, look: Seen | None, where: Context, text, error):
    attr = d.get("attr", "?")
    line = code_only(look.line) if look is not None else _failing_quote(where)
    assigned = re.match(rf"\s*([\w.]*\b{attr})\s*=\s*(.+)", line)
    target, value_code = (assigned[1], assigned[2]) if assigned else (f"self.{attr}", "")
    itself = bool(value_code) and re.search(rf"\b{re.escape(target)}\b", value_code) is not None
    value = _library_local(error, "__setattr__", "value")
    if look is not None and look.frame is not None:
        shown = f"Seen in the failing frame: {look.frame.f_code.co_name}() runs `{line[:120]}`"
        shown += f", and the value is {describe(value)}." if value is not None and describe(value) else "."
    else:
        shown = f"{_PASTE}its failing line is `{line[:120]}`." if line else f"{_PASTE}the assignment is not quoted."
    if itself:
        shown += (
            f" The value is computed from {target} itself: assigning it back would also throw the learned weights away."
        )
        fix = (
            "Keep the parameter and give the computed value a name of its own: "
            f"w = {value_code.strip()[:80]}, then use "
            f"w below; {target} stays the leaf the optimizer updates, and the gradient reaches it through that "
            "computation."
        )
    else:
        fix = (
            f"To put new values into it, keep the Parameter: with torch.no_grad(): {target}.copy_(value). To make it a "
            f"new trainable tensor (in __init__, before the optimizer is made): {target} = nn.Parameter(value). For "
            "a computed value, use a local name instead of the attribute."
        )
    return "parameter_assigned_tensor", {**d, "seen": shown, "fix": fix}


# ------------------------------------------------------------------------------- requires_grad on integers
def _integer(d, message, look: Seen | None, where: Context, text, error):
    import torch

    if look is None or look.frame is None:
        return None
    for name, obj in look.objects.items():
        if not (isinstance(obj, torch.Tensor) and not obj.is_floating_point() and not obj.is_complex()):
            continue
        made = assignments(look.frame, {name.split(".")[0]}, depth=1)
        if not made:
            continue
        statement = made[0].strip().splitlines()[0]
        value = statement.split("=", 1)[1] if "=" in statement else statement
        for pattern, what in NOT_DIFFERENTIABLE:
            if re.search(pattern, value) and _from_graph(value, look.frame):
                shown = f"Seen in the failing frame: {name} is {describe(obj)}."
                return "nondifferentiable_requires_grad", {
                    **d,
                    "name": name,
                    "made": statement[:120],
                    "what": what + ", computed from tensors that require grad",
                    "seen": shown,
                }
    return None


def _from_graph(code: str, frame) -> bool:
    """Does ``code`` read a tensor that requires grad or a module with a parameter that does (in ``frame``)?"""
    import torch

    from .grad_none import _resolve

    for name in set(re.findall(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", code)):
        obj = _resolve(name, frame)
        if isinstance(obj, torch.Tensor) and obj.requires_grad:
            return True
        if isinstance(obj, torch.nn.Module) and any(p.requires_grad for p in obj.parameters()):
            return True
        if isinstance(obj, list | tuple) and any(isinstance(x, torch.Tensor) and x.requires_grad for x in obj):
            return True
    return False


def _inplace_pasted(d, message, look: Seen | None, where: Context, text, error):
    """A paste of the in-place error: an optimizer is named as the weight's updater only where its quoted lines
    show a step()."""
    if not where.pasted or re.search(r"\.step\(|optim", where.source):
        return None
    return "modified_inplace", {**d, "unseen_update": True}


_RULES = {
    "optimizer_nonleaf": nonleaf,
    "modified_inplace": _inplace_pasted,
    "unknown": _unknown,
    "clip_grad_nonfinite": nonfinite,
    "item_of_many": item_of_many,
    "optimizer_duplicate_params": duplicate_params,
    # a handle read as a forward hook's return only where the frame does not show it assigned from register_*
    "forward_hook_returned_value": api_unknown,
    # an error on None, read as a .grad until refine sees no .grad on the line
    "grad_is_none": lambda *a: _none(*a) or api_unknown(*a) or none_not_grad(*a),
    "parameter_assigned_tensor": _parameter,
    "optimizer_empty_params": empty_params,
    "scheduler_initial_lr": scheduler,
    "integer_requires_grad": _integer,
    "unexpected_keyword": unexpected_keyword,
    "softmax_implicit_dim": softmax_dim,
    "vjp_cotangent_structure": vjp_outputs,
    "optimizer_state_dict_groups": state_dict_groups,
}
