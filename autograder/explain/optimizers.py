"""The optimizer's and the scheduler's refusals read from the failing frame: an empty parameter list (a generator used
up before, a filter that left nothing, layers held in a plain list), a scheduler made with ``last_epoch >= 0`` on an
optimizer no scheduler touched, a non-leaf handed to an optimizer (a row or slice of a parameter, a tensor made from a
leaf). Rules of :mod:`autograder.explain.returned`, with the same signature."""

from __future__ import annotations

import ast
import re

from .context import Context
from .frame import Seen, assignments, describe
from .graph_cut import code_only
from .quoted import PASTE as _PASTE
from .quoted import failing_quote as _failing_quote
from .quoted import library_local as _library_local

__all__ = ["empty_params", "nonleaf", "scheduler"]


def empty_params(d, message, look: Seen | None, where: Context, text, error):
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


def scheduler(d, message, look: Seen | None, where: Context, text, error):
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


def nonleaf(d, message, look: Seen | None, where: Context, text, error):
    """The non-leaf the optimizer refused (its add_param_group's ``param``): a view of a parameter of the learner's
    frame (a row, from unpacking ``*model.parameters()``, or a slice), or the result of an operation on a leaf."""
    import torch

    param = _library_local(error, "add_param_group", "param")
    unpacked = r"\*\s*[\w.]+\.parameters\(\)"
    if where.pasted and re.search(unpacked, _failing_quote(where)):
        line = _failing_quote(where)
        shown = (
            f"{_PASTE}its failing line `{line[:120]}` unpacks parameters with *, so the iterable yields the rows of "
            "each weight (views made by indexing, not leaves), not the parameters."
        )
        fix = (
            "Make it yield the parameters themselves: itertools.chain(net.parameters(), [W]) or [*net.parameters(), W]."
        )
        return "optimizer_nonleaf_seen", {**d, "seen": shown, "fix": fix}
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
