"""Pick and fill the kinds of :mod:`autograder.kinds.returned` from what the failing frame holds (an exception) or what
a pasted traceback's lines show: a tuple used as a tensor (whose tuple: ``torch.autograd.grad``'s, a hook's argument,
another call's), a computed tensor assigned over a Parameter, an optimizer's empty parameter list, a scheduler's
missing ``initial_lr``, an integer tensor made by a non-differentiable operation and then asked to require grad.

``returned_kind(kind, details, text, where, error)`` returns ``(kind, details)``: the same when no rule applies.
Never raises.
"""

from __future__ import annotations

import ast
import itertools
import re

from .context import _LIBRARY, Context
from .frame import Seen, assignments, describe, seen
from .graph_cut import code_only

__all__ = ["returned_kind", "NOT_DIFFERENTIABLE"]

_PASTE = "A paste shows no objects, only its lines: "
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


def _failing_quote(where: Context) -> str:
    """A paste's last quoted line of the learner's code (its failing line)."""
    lines = [x.strip() for x in where.source.splitlines() if x.startswith(" ") and x.strip()]
    lines = [x for x in lines if not set(x) <= set("^~ ")]
    return code_only(lines[-1]) if lines else ""


def _caret_segment(text: str) -> str:
    """The expression Python's carets mark under the last quoted line of a paste ("" when none is marked)."""
    lines, found = text.splitlines(), ""
    for code, marks in itertools.pairwise(lines):
        if re.fullmatch(r"\s*[\^~]+[\s\^~]*", marks) and code.strip():
            start = len(marks) - len(marks.lstrip())
            found = code[start : len(marks.rstrip())]
    return found


def _pasted_frames(text: str) -> list[tuple[str, str]]:
    return re.findall(r'File "([^"]+)", line \d+, in (\S+)', text)


# ------------------------------------------------------------------------------------------------ a tuple
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
    if not where.pasted or m["seq"]:  # a list is a sequence too: only the object tells
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
        return None
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
    return "tuple_as_tensor", {**d, "name": name, "seen": shown, "fix": fix}


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


def _library_local(error, function: str, name: str):
    tb = getattr(error, "__traceback__", None)
    while tb is not None:
        if tb.tb_frame.f_code.co_name == function and name in tb.tb_frame.f_locals:
            return tb.tb_frame.f_locals[name]
        tb = tb.tb_next
    return None


# ------------------------------------------------------------------------------- an empty parameter list
def _empty(d, message, look: Seen | None, where: Context, text, error):
    import torch

    if look is None or look.frame is None:
        line = _failing_quote(where) if where.pasted else ""
        arg = re.search(r"optim\.\w+\(\s*([^,)]+)", line) or re.search(r"\b[A-Z]\w*\(\s*([^,)]+)", line)
        arg = arg[1].strip() if arg else "what it was given"
        shown = f"{_PASTE}it was given {arg}; whether that was an empty list or a used-up generator is not in it."
        return "optimizer_empty_params", {**d, "seen": shown, "fix": _EMPTY_FIX}
    for name, obj in look.objects.items():
        if isinstance(obj, torch.nn.Module) and f"{name}.parameters" in look.segment:
            if sum(1 for _ in obj.parameters()) == 0:
                held = [k for k, v in vars(obj).items() if isinstance(v, list | tuple | dict) and _holds_module(v)]
                where_ = f" its layers are in {', '.join(held)}, a plain Python {type(vars(obj)[held[0]]).__name__}"
                shown = f"Seen in the failing frame: {name} is {describe(obj)}:" + (
                    where_ + ", which nn.Module does not look into." if held else " nothing registered any."
                )
                fix = (
                    "Hold layers in nn.ModuleList / nn.ModuleDict (self.layers = nn.ModuleList([...])), or assign "
                    "each as an attribute, so that .parameters() finds them."
                )
                return "optimizer_empty_params", {**d, "seen": shown, "fix": fix}
    for name, obj in look.objects.items():
        if isinstance(obj, list | tuple) and not obj and name.isidentifier():
            shown = f"Seen in the failing frame: {name} is an empty {type(obj).__name__}."
            made = assignments(look.frame, {name}, depth=1)
            if made:
                shown += f" It was made by `{made[0].strip().splitlines()[0][:120]}`."
            fix = "Check what it selects: a filter on requires_grad leaves nothing when every parameter is frozen."
            return "optimizer_empty_params", {**d, "seen": shown, "fix": fix}
        if _is_iterator(obj) and name.isidentifier():
            kind_of = type(obj).__name__
            shown = f"Seen in the failing frame: {name} is a {kind_of} object, an iterator: it yields its items once."
            uses = _uses_between(look.frame, name)
            if uses:
                shown += f" `{uses[0][:120]}` went through it before this line, so the optimizer found it used up."
            else:
                shown += " No earlier use of it is in this frame: it was used up elsewhere or yielded nothing."
            fix = (
                f"Make it a list once and reuse the list: {name} = list(...) (e.g. [p for p in model.parameters() if "
                "p.requires_grad]); or call model.parameters() again for each use (each optimizer, each count)."
            )
            return "optimizer_empty_params", {**d, "seen": shown, "fix": fix}
    return "optimizer_empty_params", {**d, "seen": "", "fix": _EMPTY_FIX}


_EMPTY_FIX = (
    "If it is a generator (model.parameters(), filter(...), a generator expression), it can be gone through only "
    "once: make it a list (params = list(model.parameters())) or call model.parameters() again. If the model has no "
    "parameters, hold its layers in nn.ModuleList, not a Python list. If a filter on requires_grad left nothing, "
    "every parameter is frozen."
)


def _holds_module(v) -> bool:
    import torch

    items = v.values() if isinstance(v, dict) else v
    return any(isinstance(x, torch.nn.Module) for x in items)


def _is_iterator(obj) -> bool:
    try:
        return hasattr(obj, "__next__") and iter(obj) is obj
    except TypeError:
        return False


def _uses_between(frame, name: str) -> list[str]:
    """The statements of ``frame``'s code after ``name`` was last assigned and before the failing line that read it."""
    from .frame import _frame_code, _own_scope

    source, first = _frame_code(frame)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    failing = frame.f_lineno - first + 1
    stmts = [n for n in _own_scope(tree, frame.f_code.co_name != "<module>") if isinstance(n, ast.stmt)]
    stmts = [s for s in stmts if not isinstance(s, ast.For | ast.While | ast.If | ast.With | ast.Try)]
    assigned = max((s.lineno for s in stmts if s.lineno < failing and _writes(s, name)), default=0)
    found = []
    for s in sorted(stmts, key=lambda s: s.lineno):
        if assigned < s.lineno < failing and not _writes(s, name):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(s)):
                found.append(ast.get_source_segment(source, s) or "")
    return found


def _writes(stmt, name: str) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    return any(isinstance(n, ast.Name) and n.id == name for t in targets if t is not None for n in ast.walk(t))


# ------------------------------------------------------------------------------------------ a scheduler
def _scheduler(d, message, look: Seen | None, where: Context, text, error):
    last = _library_local(error, "__init__", "last_epoch")
    optimizer = _library_local(error, "__init__", "optimizer")
    line = code_only(look.line) if look is not None else _failing_quote(where)
    passed = re.search(r"last_epoch\s*=\s*([^,)]+)", line)
    if isinstance(last, int) and optimizer is not None:
        state = getattr(optimizer, "state", None)
        fresh = not state
        shown = f"Seen in the scheduler's frame: last_epoch={last}" + (
            f" (passed as `last_epoch={passed[1].strip()}`)" if passed else ""
        )
        shown += (
            ", and the optimizer has no state (it never stepped and no state_dict was loaded into it): a fresh run."
            if fresh
            else ", and the optimizer has state (it stepped, or a state_dict was loaded), but no scheduler ran on it."
        )
    elif passed:
        fresh = None
        shown = f"{_PASTE}the failing line passes last_epoch={passed[1].strip()}; whether anything was restored is "
        shown += "not in it."
    else:
        fresh = None
        shown = f"{_PASTE}which last_epoch was passed is not quoted."
    start = "For a fresh run leave last_epoch at its default, -1"
    resume = (
        "to resume, make the scheduler with the default too and load its saved state after the optimizer's: "
        "optimizer.load_state_dict(ckpt['optimizer']); scheduler.load_state_dict(ckpt['scheduler']) (saved with "
        "scheduler.state_dict())."
    )
    fix = f"{start} (the first epoch is 0 only after the scheduler's own first step); {resume}"
    if fresh is False:
        fix = f"To resume, {resume[len('to resume, ') :]} {start}."
    return "scheduler_initial_lr", {**d, "seen": shown, "fix": fix}


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


def _nonleaf(d, message, look: Seen | None, where: Context, text, error):
    """The non-leaf the optimizer refused (its add_param_group's ``param``): a view of a parameter of the learner's
    frame (a row, from unpacking ``*model.parameters()``, or a slice), or the result of an operation on a leaf."""
    import torch

    param = _library_local(error, "add_param_group", "param")
    if look is None or look.frame is None or not isinstance(param, torch.Tensor):
        return None
    made = type(param.grad_fn).__name__ if param.grad_fn is not None else "an operation"
    shown = f"Seen in the optimizer's frame: it got a tensor of shape {list(param.shape)} made by {made}"
    base = getattr(param, "_base", None)
    owner = _parameter_of(base, look.frame) if base is not None else ""
    line = code_only(look.line)
    if owner and re.search(r"\*\s*[\w.]+\.parameters\(\)", line):
        shown += (
            f", a row of {owner}: `{line[:120]}` unpacks each parameter with *, so the iterable yields the rows of "
            "each weight, not the parameters."
        )
        fix = (
            "Make it yield the parameters themselves: itertools.chain(net.parameters(), [W]) or [*net.parameters(), W]."
        )
    elif owner:
        shown += f", a view (slice) of {owner}."
        fix = (
            f"Make the optimizer take {owner} itself; to train only part of it, zero the rest of its gradient with a "
            f"hook ({owner}.register_hook(lambda g: g * mask)) or split it into two Parameters."
        )
    else:
        names = [n for n, o in look.objects.items() if o is param]
        built = assignments(look.frame, {names[0]}, depth=1) if names else None
        shown += f": `{built[0].strip().splitlines()[0][:120]}` made it from a leaf." if built else "."
        fix = (
            "Make the tensor in its final form first and ask for gradients last: w = (torch.randn(3, 4) * 0.01)"
            ".to(device).requires_grad_(), or nn.Parameter(...) of the finished value."
        )
    return "optimizer_nonleaf_seen", {**d, "seen": shown, "fix": fix}


def _parameter_of(tensor, frame) -> str:
    import torch

    for owner, value in {**frame.f_globals, **frame.f_locals}.items():
        if isinstance(value, torch.nn.Module):
            for name, p in value.named_parameters():
                if p is tensor:
                    return f"{owner}.{name}"
        elif value is tensor and isinstance(value, torch.Tensor):
            return owner
    return ""


def _inplace_pasted(d, message, look: Seen | None, where: Context, text, error):
    """A paste of the in-place error: an optimizer is named as the weight's updater only where its quoted lines
    show a step()."""
    if not where.pasted or re.search(r"\.step\(|optim", where.source):
        return None
    return "modified_inplace", {**d, "unseen_update": True}


_RULES = {
    "optimizer_nonleaf": _nonleaf,
    "modified_inplace": _inplace_pasted,
    "unknown": _tuple,
    "parameter_assigned_tensor": _parameter,
    "optimizer_empty_params": _empty,
    "scheduler_initial_lr": _scheduler,
    "integer_requires_grad": _integer,
}
