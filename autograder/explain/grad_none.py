"""Why a ``.grad`` read as None is None, from the tensor itself: the failing frame of the learner's
traceback holds it (``W.grad.zero_()``: is ``W`` a leaf, does it require grad, which module's
parameter is it), so the explainer names the one cause it sees instead of every cause it knows; and whether
the learner's code reset that gradient (``opt.zero_grad()``) after its last backward, before the failing line."""

from __future__ import annotations

import inspect
import linecache
import re

__all__ = ["failing_frame", "grad_is_none_evidence"]


def failing_frame(error):
    """The frame of ``error``'s last traceback entry (where the learner's line raised), or None."""
    tb = getattr(error, "__traceback__", None)
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame


_MISSING = object()


def _resolve(dotted: str, frame, static: bool = True):
    """The object a dotted name (``W``, ``model.proj.weight``) is bound to in ``frame``: looked up
    with attribute reads only (no call, no indexing), None when any part is missing or ``frame`` is None.
    ``static``: each attribute read without running a property where it can be (``inspect.getattr_static``);
    else as the code would read it (a method bound, a property's value)."""
    if frame is None or not re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", dotted):
        return None
    first, *rest = dotted.split(".")
    scope = {**frame.f_globals, **frame.f_locals}
    if first not in scope:
        return None
    obj = scope[first]
    for part in rest:
        obj = _attribute(obj, part, static)
        if obj is _MISSING:
            return None
    return obj


def _attribute(obj, part: str, static: bool):
    if static:
        try:
            return inspect.getattr_static(obj, part)
        except AttributeError:
            pass  # nn.Module's parameters live in _parameters, reached by __getattr__
    try:
        return getattr(obj, part)
    except Exception:  # noqa: BLE001 -- a missing attribute (or a property that raises): nothing to show
        return _MISSING


def _parameter_name(tensor, frame) -> str:
    """``proj.weight`` when ``tensor`` is a parameter of an nn.Module bound in ``frame`` or in one of
    the few frames that called it ("" if none)."""
    import torch

    for _ in range(4):  # the failing line may sit in a comprehension's or a helper's frame
        if frame is None:
            break
        for value in {**frame.f_globals, **frame.f_locals}.values():
            if isinstance(value, torch.nn.Module):
                for name, p in value.named_parameters():
                    if p is tensor:
                        return name
        frame = frame.f_back
    return ""


def grad_is_none_evidence(what: str, frame) -> dict:
    """``why`` and ``try_this`` for a ``.grad`` read as None, from the tensor itself where the failing
    frame holds it (``W.grad``: is ``W`` a leaf, does it require grad, which parameter is it); all
    the causes, to check, where it cannot be looked at."""
    import torch

    from ..kinds.catalogued import GRAD_IS_NONE_CAUSES, GRAD_IS_NONE_TRY

    tensor = _resolve(what.removesuffix(".grad"), frame) if what.endswith(".grad") else None
    if not isinstance(tensor, torch.Tensor):
        return {"why": GRAD_IS_NONE_CAUSES, "try_this": GRAD_IS_NONE_TRY}
    name = what.removesuffix(".grad")
    if not tensor.requires_grad and isinstance(tensor, torch.nn.Parameter):
        param = _parameter_name(tensor, frame) if frame is not None else ""
        called = f" ({param} of a module)" if param and param != name else ""
        return {  # a Parameter is made with requires_grad=True: the code turned it off, on purpose or not
            "why": f"{name}{called} has requires_grad=False (checked on {name} itself), so autograd never writes its "
            ".grad; "
            f"it is an nn.Parameter, which requires grad unless the code turned it off (a frozen layer, a fixed "
            "mask): the code's intent and the flag may differ.",
            "try_this": "If it is meant to stay fixed, its .grad is None by design: skip it (`if p.grad is not None`, "
            "or iterate over [p for p in model.parameters() if p.requires_grad]), and make a fixed mask a buffer "
            f"(self.register_buffer('mask', ...)) rather than a Parameter. Only if it should be trained, call "
            f"{name}.requires_grad_() before the forward pass.",
        }
    buffer = _buffer_name(tensor, frame) if not tensor.requires_grad else ""
    if buffer:
        return {
            "why": f"{name} is the buffer {buffer} (registered with register_buffer: a module's state that is not "
            "trained), so autograd never writes its .grad: it is None by design.",
            "try_this": "Skip it: update and read .grad of the parameters only (for p in model.parameters(), or "
            "`if p.grad is not None`); only if it should train, make it an nn.Parameter in __init__.",
        }
    if not tensor.requires_grad:
        return {
            "why": f"{name} has requires_grad=False (checked on {name} itself), so autograd records nothing for "
            "it and never writes its .grad.",
            "try_this": f"Create {name} with requires_grad=True, or call {name}.requires_grad_() before the "
            "forward pass.",
        }
    if not tensor.is_leaf:
        made_by = type(tensor.grad_fn).__name__
        # the why is grad_none_nonleaf's own cause template (its fixed words tell it apart from grad_is_none's)
        return {
            "nonleaf": made_by,
            "name": name,
            "try_this": f"Make {name} a leaf: do the operation first, then requires_grad_() (torch.randn(...) "
            f"* 0.01 then .requires_grad_(), or wrap it in nn.Parameter); or call {name}.retain_grad() before "
            "backward() if you only want to look at it.",
        }
    reset = _reset_before(tensor, frame)
    if reset:
        # the why is grad_reset's own cause template (its fixed words tell it apart from grad_is_none's)
        return {
            "reset": reset,
            "name": name,
            "checked": f"; {name} is a leaf that requires grad, and one of its parameters (checked on {name} itself)",
            "try_this": f"Let zero_grad() do the reset (a manual {name}.grad.zero_() after it is not needed); read "
            f"or log a gradient after backward() and before zero_grad(), or guard the read with `if {name}.grad "
            "is not None`. Pass set_to_none=False only where your code needs tensors of zeros.",
        }
    param = _parameter_name(tensor, frame) if frame is not None else ""
    called = f" ({param} of a module)" if param and param != name else ""
    unreached = _not_reached(tensor, frame)
    if unreached:
        return {
            "why": f"{name}{called} is a leaf that requires grad (checked on {name} itself), and {unreached}: the "
            "loss does not depend on it, so backward() never writes its .grad.",
            "try_this": f"If {name} should train, make the loss use it in the graph (call the module in forward; "
            "keep values as tensors: torch.stack, not torch.tensor or .item(); no detach() or no_grad on the way). If "
            f"it is meant to stay out, skip it: `if {name}.grad is not None` (or leave it out of the optimizer).",
        }
    later = _backward_only_below(frame)
    if later:
        return {
            "why": f"{name}{called} is a leaf that requires grad (checked on {name} itself), and this code's only "
            f"backward comes after the failing line (`{later}`): the line reads .grad before any backward() has "
            "filled it (on the first pass of the loop, .grad is still None).",
            "try_this": f"Read or reset {name}.grad only after backward(): move the line below {later} (zero it "
            f"after the update, or set {name}.grad = None there), or guard it: `if {name}.grad is not None`.",
        }
    siblings = _siblings_filled(tensor, frame)
    if siblings:
        return {
            "why": f"{name}{called} is a leaf that requires grad (checked on {name} itself), and a backward() did run: "
            f"{siblings}. So the loss does not depend on it: a module or parameter the forward never used, or its "
            "values copied out of the graph (detach(), .item(), torch.tensor([...]), no_grad).",
            "try_this": f"If {name} should train, use it in forward (keep the graph: no detach(), torch.stack not "
            f"torch.tensor); if it is meant to stay out, skip it: `if {name}.grad is None: continue` (as optimizers "
            "do), or delete the unused module.",
        }
    return {
        "why": f"{name}{called} is a leaf that requires grad (checked on {name} itself), so either no backward() "
        "reached it yet (not run, or zero_grad(set_to_none=True) ran since), or the loss does not depend on "
        "it: a module or parameter not used in forward, or its values copied out of the graph (detach(), "
        ".item(), torch.tensor([...]) of its elements, no_grad).",
        "try_this": "Check that backward() ran before this line, and that the loss's graph reaches "
        f"{name} (a parameter of an unused module keeps .grad None: skip parameters whose .grad is None, or use "
        "the module; build tensors with torch.stack rather than torch.tensor to keep the graph).",
    }


def _reset_before(tensor, frame) -> str:
    """The learner's ``X.zero_grad(...)`` line (not ``set_to_none=False``) that ran in ``frame``'s code before
    its failing line, with no ``backward(``/``autograd.grad(`` after it, where ``X`` (read in ``frame``) is an
    optimizer or a module holding ``tensor``; "" where there is none or the code cannot be read."""
    import torch

    if frame is None:
        return ""
    code = frame.f_code
    before = linecache.getlines(code.co_filename)[code.co_firstlineno - 1 : frame.f_lineno - 1]
    found = ""
    for line in (x.split("#")[0].strip() for x in before):
        if re.search(r"\.backward\(|autograd\.grad\(", line):
            found = ""
        call = re.search(r"([A-Za-z_][\w.]*)\.zero_grad\(([^)]*)\)", line)
        if call and "set_to_none=False" not in call.group(2).replace(" ", ""):
            owner = _resolve(call.group(1), frame)
            if isinstance(owner, torch.optim.Optimizer):
                params = [p for group in owner.param_groups for p in group["params"]]
            else:
                params = list(owner.parameters()) if isinstance(owner, torch.nn.Module) else []
            if any(p is tensor for p in params):
                found = call.group(0)
    return found


def _backward_only_below(frame) -> str:
    """The first ``backward(``/``autograd.grad(`` line of ``frame``'s function when none comes before its failing
    line and one comes after it ("" otherwise, or when the code cannot be read)."""
    if frame is None:
        return ""
    code = frame.f_code
    lines = [x.split("#")[0].strip() for x in linecache.getlines(code.co_filename)]
    first = code.co_firstlineno - 1
    end = max((line for *_, line in code.co_lines() if line is not None), default=frame.f_lineno)
    call = re.compile(r"\.backward\(|autograd\.grad\(")
    if any(call.search(x) for x in lines[first : frame.f_lineno - 1]):
        return ""
    return next((x for x in lines[frame.f_lineno : end] if call.search(x)), "")


def _buffer_name(tensor, frame) -> str:
    """``model.mask`` when ``tensor`` is a buffer of an nn.Module bound in ``frame`` or a few frames above it."""
    import torch

    for _ in range(4):
        if frame is None:
            break
        for owner, value in {**frame.f_globals, **frame.f_locals}.items():
            if isinstance(value, torch.nn.Module):
                for name, b in value.named_buffers():
                    if b is tensor:
                        return f"{owner}.{name}"
        frame = frame.f_back
    return ""


def _not_reached(tensor, frame) -> str:
    """What shows that the loss backwarded above the failing line (``X.backward()`` in ``frame``'s function, ``X``
    bound now) has a graph that does not reach ``tensor``: "" when no such loss is bound, or its graph reaches it."""
    import torch

    found = None
    for _ in range(3):  # the failing line may sit in a helper called after the backward
        if frame is None or found:
            break
        code = frame.f_code
        lines = linecache.getlines(code.co_filename)[code.co_firstlineno - 1 : frame.f_lineno - 1]
        for line in reversed([x.split("#")[0].strip() for x in lines]):
            call = re.search(r"([A-Za-z_][\w.]*)\.backward\(", line)
            loss = _resolve(call.group(1), frame) if call else None
            if isinstance(loss, torch.Tensor):
                found = (line, call, loss, frame)
                break
        frame = frame.f_back
    if found:
        line, call, loss, frame = found
        if loss.grad_fn is None:
            return (
                f"`{line}` ran above, but {call.group(1)} has no grad_fn (a leaf of its own: "
                f"requires_grad={loss.requires_grad}), so its backward reaches nothing before it"
            )
        if not _reaches(loss.grad_fn, tensor):
            from .frame import assignments
            from .graph_cut import graph_cut

            cut = graph_cut(assignments(frame, {call.group(1).split(".")[0]}) or [], frame)
            where = f" (the graph was cut there: {cut['cut']})" if cut else ""
            return f"`{line}` ran above, and the graph of {call.group(1)} (checked on it) has no path to it{where}"
    return ""


def _reaches(fn, tensor, most: int = 20000) -> bool:
    """Does the graph from the Node ``fn`` end at ``tensor``'s AccumulateGrad (within ``most`` Nodes)?"""
    todo, seen = [fn], set()
    while todo and len(seen) < most:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if getattr(node, "variable", None) is tensor:
            return True
        todo.extend(n for n, _ in getattr(node, "next_functions", ()))
    return len(seen) >= most  # too large to tell: claim nothing


def _siblings_filled(tensor, frame) -> str:
    """Where a module bound in ``frame`` (or a few frames above) holds ``tensor`` and backward filled the .grad of
    some of its other parameters: which have a .grad and which do not ("" otherwise)."""
    import torch

    for _ in range(4):
        if frame is None:
            break
        for owner, value in {**frame.f_globals, **frame.f_locals}.items():
            if not isinstance(value, torch.nn.Module) or owner.startswith("_"):
                continue
            named = list(value.named_parameters())
            if not any(p is tensor for _, p in named):
                continue
            filled = [n for n, p in named if p.grad is not None]
            empty = [f"{owner}.{n}" for n, p in named if p.requires_grad and p.grad is None]
            if filled:
                return (
                    f"{len(filled)} parameters of {owner} have a .grad, while {', '.join(empty[:6])} "
                    f"{'has' if len(empty) == 1 else 'have'} none"
                )
        frame = frame.f_back
    return ""
