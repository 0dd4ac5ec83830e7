"""Plain Python errors caused by an autograd or training mistake, read from the failing frames' objects (or a pasted
traceback's lines): the kinds of :mod:`autograder.kinds.plain`. Rules of :mod:`autograder.explain.returned`, with its
signature ``rule(d, message, look, where, text, error) -> (kind, details) | None``.

- a None used as a tensor where the frames hold gradients with None among them: what ``torch.autograd.grad(...,
  allow_unused=True)`` returned for inputs the output does not use, or the ``.grad`` of parameters no backward
  reached while the others' were filled (named from the modules the frames bind);
- ``got an unexpected keyword argument``: the torch function's real parameters, read with ``inspect`` (or from its
  docstring's signature, or the message's own list), and the close match by ``difflib``;
- a ``KeyError`` on ``optimizer.state[p]``: the parameters whose state was never created;
- ``'Tensor' object is not callable`` raised inside torch.optim: a loss passed to ``step``.
"""

from __future__ import annotations

import difflib
import re

from .context import Context
from .frame import Seen
from .quoted import PASTE as _PASTE
from .quoted import failing_quote as _failing_quote

__all__ = ["plain_unknown", "unexpected_keyword", "NONE_USE"]

NONE_USE = re.compile(
    r"'NoneType' object has no attribute '(?P<attr>\w+)'"
    r"|unsupported operand type\(s\) for (?P<op>\S+?): (?:'NoneType' and '[\w.]+'|'[\w.]+' and 'NoneType')"
    r"|(?P<sub>'NoneType' object is not subscriptable)"
)


def _learner_frames(error) -> list:
    """The frames of ``error``'s traceback that are the learner's (innermost first)."""
    from .context import _LIBRARY

    found, tb = [], getattr(error, "__traceback__", None)
    while tb is not None:
        if not _LIBRARY.search(tb.tb_frame.f_code.co_filename):
            found.insert(0, tb.tb_frame)
        tb = tb.tb_next
    return found


def _param_names(frames) -> dict:
    """id(parameter) -> ``module.name`` for every module bound in ``frames`` (locals, then globals)."""
    import torch

    names = {}
    for frame in frames:
        for owner, value in {**frame.f_globals, **frame.f_locals}.items():
            if isinstance(value, torch.nn.Module) and not owner.startswith("_"):
                for name, p in value.named_parameters():
                    names.setdefault(id(p), f"{owner}.{name}")
    return names


def plain_unknown(d, message, look: Seen | None, where: Context, text, error):
    """The first of the plain-error rules that applies to an unknown message, or None."""
    for rule in (_none_gradient, _state_key, _step_closure):
        found = rule(d, message, look, where, text, error)
        if found:
            return found
    return None


# ------------------------------------------------------------------------------------------------ a None
def _use(m) -> str:
    return f"it reads .{m['attr']}" if m["attr"] else f"the {m['op']} operator" if m["op"] else "it indexes it"


_SKIP = (
    "Skip what has no gradient: `if g is None: continue` (or torch.autograd.grad(..., materialize_grads=True) "
    "for zeros); or remove the unused module, or use it in forward if it was meant to be used."
)


def _none_gradient(d, message, look: Seen | None, where: Context, text, error):
    m = NONE_USE.search(message)
    if not m or m["attr"] == "backward":
        return None
    d = {**d, "use": _use(m)}
    if look is None or look.frame is None:
        return _none_pasted(d, where, text)
    frames = _learner_frames(error)
    names = _param_names(frames)
    import torch

    # torch.autograd.grad(..., allow_unused=True): a tuple of gradients with None at the unused inputs
    for frame in frames:
        for name, value in frame.f_locals.items():
            if not (isinstance(value, tuple | list) and any(v is None for v in value)):
                continue
            if not any(isinstance(v, torch.Tensor) for v in value) and "allow_unused" not in where.source:
                continue
            if not re.search(r"allow_unused\s*=\s*True", where.source):
                continue
            missing = [i for i, v in enumerate(value) if v is None]
            inputs = _grad_inputs(where.source, frame, name)
            which = (
                ", ".join(names.get(id(inputs[i]), f"input {i}") for i in missing)
                if inputs is not None and len(inputs) == len(value)
                else ", ".join(f"entry {i}" for i in missing)
            )
            shown = (
                f"Seen in the failing frames: {name} is what torch.autograd.grad(..., allow_unused=True) returned, "
                f"{len(value)} gradients of which {len(missing)} are None ({which}): the output does not depend on "
                "those inputs, so autograd.grad gives None for them instead of raising."
            )
            return "unused_input_none_grad", {**d, "name": "A gradient", "seen": shown, "fix": _SKIP}
    # .grad of parameters the forward never used, while backward filled the others'
    if not re.search(r"\.grad\b", where.source):
        return None
    unused, used = [], 0
    for frame in frames:
        for owner, value in {**frame.f_globals, **frame.f_locals}.items():
            if isinstance(value, torch.nn.Module) and not owner.startswith("_"):
                for pname, p in value.named_parameters():
                    if p.requires_grad and p.grad is None:
                        unused.append(f"{owner}.{pname}")
                    elif p.grad is not None:
                        used += 1
        if unused or used:
            break
    if not unused or not used:
        return None
    shown = (
        f"Seen in the failing frames: after backward, {', '.join(unused[:6])} require grad and have .grad None, "
        f"while {used} other parameters have theirs: the loss does not depend on them (a module or parameter "
        "the forward never used)."
    )
    fix = (
        "Skip parameters whose gradient is None (`if p.grad is None: continue`, as optimizers do), or use the "
        "module in forward if it was meant to be used, or delete it; under DDP, find_unused_parameters=True."
    )
    return "unused_input_none_grad", {**d, "name": "A .grad", "seen": shown, "fix": fix}


def _grad_inputs(source: str, frame, name: str):
    """The inputs of the ``name = torch.autograd.grad(out, INPUTS, ...)`` call in ``source``, resolved in ``frame``
    and its callers (a name bound to a sequence, ``[a, b]``, ``list(m.parameters()) + ...``), or None."""
    from .grad_none import _resolve

    call = re.search(rf"\b{re.escape(name)}\s*=\s*torch\.autograd\.grad\(\s*[^,]+,\s*(.+?)\s*,\s*\w+\s*=", source)
    if not call:
        return None
    found = []
    for part in re.split(r"\s*\+\s*", call[1]):
        part = part.strip()
        params = re.fullmatch(r"(?:list\()?([\w.]+)\.parameters\(\)\)?", part)
        items = re.fullmatch(r"[\[(](.*)[\])]", part)
        objs = None
        for f in (frame, frame.f_back):
            if f is None:
                continue
            if params and _resolve(params[1], f) is not None:
                objs = list(_resolve(params[1], f).parameters())
            elif items:
                objs = [_resolve(x.strip(), f) for x in items[1].split(",") if x.strip()]
            elif _resolve(part, f) is not None:
                value = _resolve(part, f)
                objs = list(value) if isinstance(value, list | tuple) else [value]
            if objs is not None:
                break
        if objs is None:
            return None
        found += objs
    return found


def _none_pasted(d, where: Context, text):
    quoted = "\n".join(x for x in where.source.splitlines() if x.startswith(" "))
    if re.search(r"allow_unused\s*=\s*True", quoted):
        shown = (
            f"{_PASTE}its lines call torch.autograd.grad(..., allow_unused=True), which gives None (not zeros) for "
            "each input the output does not depend on; which input that was is not in it."
        )
        return "unused_input_none_grad", {**d, "name": "A gradient", "seen": shown, "fix": _SKIP}
    return None


# ------------------------------------------------------------------------------------------ optimizer state
def _state_key(d, message, look: Seen | None, where: Context, text, error):
    key = re.fullmatch(r"\s*(?:KeyError: )?'(\w+)'\s*", message.splitlines()[-1] if message else "")
    if not key:
        return None
    line = look.line if look is not None else _failing_quote(where)
    if not re.search(r"\bstate\s*\[", line):
        return None
    d = {**d, "key": f"'{key[1]}'"}
    fix = (
        "Read the state only where it exists: `state = optimizer.state.get(p); if not state: continue` (or "
        "`if p.grad is None: continue`); and if the parameter was meant to train, make the loss use it."
    )
    if look is None or look.frame is None:
        shown = f"{_PASTE}its failing line `{line[:120]}` reads an optimizer's state; which parameter is not in it."
        return "optimizer_state_missing", {**d, "seen": shown, "fix": fix}
    import torch

    frames = _learner_frames(error)
    names = _param_names(frames)
    for frame in frames:
        for owner, opt in {**frame.f_globals, **frame.f_locals}.items():
            if not isinstance(opt, torch.optim.Optimizer):
                continue
            params = [p for g in opt.param_groups for p in g["params"]]
            empty = [p for p in params if not opt.state.get(p)]
            if not empty:
                continue
            which = ", ".join(names.get(id(p), f"a tensor of shape {list(p.shape)}") for p in empty[:6])
            shown = (
                f"Seen in the failing frames: {owner} has state for {len(params) - len(empty)} of its {len(params)} "
                f"parameters; none for {which}"
                + (
                    ", whose .grad is None: no step ever had a gradient for it."
                    if all(p.grad is None for p in empty)
                    else "."
                )
            )
            return "optimizer_state_missing", {**d, "seen": shown, "fix": fix}
    return None


# ------------------------------------------------------------------------------------------- step(loss)
def _step_closure(d, message, look: Seen | None, where: Context, text, error):
    if "'Tensor' object is not callable" not in message or not where.called(r"torch[/\\]optim[/\\]"):
        return None
    line = look.line if look is not None else _failing_quote(where)
    call = re.search(r"([\w.]+)\.step\(\s*([^)\s][^)]*)\)", line)
    if not call:
        return None
    source = "Seen in the failing frame" if look is not None and look.frame is not None else _PASTE.rstrip(": ")
    shown = f"{source}: `{line[:120]}` passes {call[2]} to {call[1]}.step."
    return "optimizer_step_closure", {**d, "seen": shown}


# ------------------------------------------------------------------------------------ a renamed keyword
_NAMESPACES = (
    "torch",
    "torch.Tensor",
    "torch.autograd",
    "torch.nn.functional",
    "torch.utils.checkpoint",
    "torch.func",
    "torch.nn.utils",
    "torch.autograd.functional",
    "torch.optim",
    "torch.nn",
)


def _torch_callable(function: str, look: Seen | None):
    """The torch callable a message names (``Tensor.backward``, ``grad``, ``tensor``): from the failing frame's
    objects first, then torch's namespaces; None when none is torch's."""
    import importlib

    last = function.split(".")[-1]
    if look is not None:
        for name, obj in look.objects.items():
            if name.split(".")[-1] == last and callable(obj) and _is_torch(obj):
                return obj
    for space in _NAMESPACES:
        module, _, attr = space.rpartition(".") if space.endswith("Tensor") else (space, "", "")
        try:
            obj = importlib.import_module(module)
        except ImportError:
            continue
        obj = getattr(obj, attr) if attr else obj
        for part in function.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None and callable(obj) and _is_torch(obj):
            return obj
    return None


def _own_callee(function: str, look: Seen | None) -> bool:
    """Is the function the failing line calls by that name one of the learner's (bound in the frame, not torch's)?"""
    from .grad_none import _resolve

    if look is None or look.frame is None:
        return False
    last = function.split(".")[-1]
    for callee in re.findall(rf"([A-Za-z_][\w.]*\b{re.escape(last)})\s*\(", look.line):
        obj = _resolve(callee, look.frame)
        if obj is not None and callable(obj) and not _is_torch(obj):
            return True
    return False


def _is_torch(obj) -> bool:
    return str(getattr(obj, "__module__", "") or "").startswith("torch") or "Tensor" in str(
        getattr(obj, "__qualname__", "")
    )


def _parameters(obj, message: str) -> list[str]:
    """The keyword parameters of ``obj``: its signature, else its docstring's first signature, else the names the
    message's own "expected one of" list gives."""
    import inspect

    if "expected one of" in message:  # torch's C++ argument parser lists what each overload takes
        return _overloads(message)
    try:
        return [p for p in inspect.signature(obj).parameters if p not in ("self", "args", "kwargs")]
    except (TypeError, ValueError):
        pass
    doc = (getattr(obj, "__doc__", "") or "").strip()
    first = re.match(r"[\w.]+\((.*?)\)\s*(?:->|$)", doc.splitlines()[0]) if doc else None
    if first:
        return [n for n in re.findall(r"(\w+)\s*(?:=|,|$)", first[1]) if n not in ("self",)]
    return _overloads(message)


def _overloads(message: str) -> list[str]:
    """The parameter names of the overloads torch's argument parser lists after "expected one of"."""
    return list(dict.fromkeys(re.findall(r"[\w.]+ (\w+)(?: = [^,)]+)?[,)]", message.split("expected one of", 1)[-1])))


def _described(arg: str, params: list[str], obj) -> list[str]:
    """The parameter whose documentation speaks of ``arg`` (``async``: non_blocking's "asynchronously"), as a list
    of one, or []: the lines of the docstring that say the word, and the two lines above each."""
    lines = (getattr(obj, "__doc__", "") or "").splitlines()
    for i, line in enumerate(lines):
        if len(arg) >= 4 and arg.lower() in line.lower():
            for near in reversed(lines[max(0, i - 2) : i + 1]):  # the nearest line that names a parameter
                named = [p for p in params if re.search(rf"\b{re.escape(p)}\b", near)]
                if named:
                    return named[:1]
    return []


def softmax_dim(d, message, look: Seen | None, where: Context, text, error):
    """Which dimension a softmax without ``dim`` normalised: read from the calling frame (a warning being shown,
    ``error`` its frame) as torch's _get_softmax_dim does (0 for 0, 1 or 3 dimensions, else 1)."""
    import linecache
    import types

    import torch

    from .context import _LIBRARY
    from .grad_none import _resolve

    function = d.get("function", "softmax")
    frame = error if isinstance(error, types.FrameType) else None
    while frame is not None and _LIBRARY.search(frame.f_code.co_filename):
        frame = frame.f_back
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip() if frame is not None else ""
    line = line or (_failing_quote(where) if where.pasted else "")
    call = re.search(rf"{function}\(\s*([A-Za-z_][\w.]*)\s*\)", line)
    x = _resolve(call[1], frame) if call and frame is not None else None
    if isinstance(x, torch.Tensor):
        dim = 0 if x.dim() in (0, 1, 3) else 1
        shown = f"Seen in the calling frame: `{line[:120]}` gives it {call[1]} of shape {list(x.shape)}, so it "
        shown += f"normalised over dim {dim}" + (
            ", the batch: the values sum to 1 across the samples, not across each sample's classes."
            if dim == 0 and x.dim() > 1
            else "."
        )
    else:
        shown = (f"The call is `{line[:120]}`; " if line else "") + (
            "the input's shape is not seen here: for a batch of sequences [batch, seq, classes] (3 dimensions) "
            "dim 0 is the batch."
        )
    return "softmax_implicit_dim", {**d, "function": function, "seen": shown}


def state_dict_groups(d, message, look: Seen | None, where: Context, text, error):
    """How many parameters each group holds, in this optimizer and in the saved state dict (load_state_dict's
    locals)."""
    from .quoted import library_local

    groups = library_local(error, "load_state_dict", "groups")
    saved = library_local(error, "load_state_dict", "saved_groups")
    if groups is None or saved is None:
        shown = f"{_PASTE}how many parameters each optimizer held is not in it." if where.pasted else ""
    else:
        sizes = [len(g["params"]) for g in groups]
        kept = [len(g["params"]) for g in saved]
        shown = f"Seen in load_state_dict's frame: this optimizer's groups hold {sizes} parameters, the saved "
        shown += f"one's {kept}."
    return "optimizer_state_dict_groups", {**d, "seen": shown}


def vjp_outputs(d, message, look: Seen | None, where: Context, text, error):
    """What the function returned, from the message's ``primal output: (*, *)``."""
    primal = re.search(r"primal output: (.+)", message)
    shape = primal[1].strip() if primal else ""
    count = shape.count("*")
    outputs = f"a tuple of {count} tensors ({shape})" if shape.startswith("(") and count > 1 else f"{shape or 'one'}"
    return "vjp_cotangent_structure", {**d, "outputs": outputs}


def none_not_grad(d, message, look: Seen | None, where: Context, text, error):
    """A None used as a tensor on a line that reads no ``.grad``: the gradients of autograd.grad's unused inputs."""
    line = look.line if look is not None else _failing_quote(where)
    return None if re.search(r"\.grad\b", line) else _none_gradient(d, message, look, where, text, error)


def unexpected_keyword(d, message, look: Seen | None, where: Context, text, error):
    function = d.get("function") or d.get("function2") or "?"
    arg = d.get("arg") or d.get("arg2") or "?"
    obj = _torch_callable(function, look)
    if (obj is None and "expected one of" not in text) or _own_callee(function, look):
        return "unknown", {}
    params = _parameters(obj, text)
    params = [p for p in params if p != arg]
    close = difflib.get_close_matches(arg, params, n=1, cutoff=0.6) or _described(arg, params, obj)
    shown = f"Its parameters (read from torch's {getattr(obj, '__qualname__', function)}): {', '.join(params)}."
    if close:
        fix = f"Use {close[0]}= instead of {arg}= (the name it has in this version of PyTorch)."
    else:
        fix = (
            f"Drop {arg}= : it is not one of {function}()'s parameters in this version of PyTorch (removed or never "
            "there); if it set a mode (volatile, for instance), use the API that replaced it (torch.no_grad() for "
            "volatile=True)."
        )
    return "unexpected_keyword", {**d, "function": function, "arg": arg, "seen": shown, "fix": fix}
