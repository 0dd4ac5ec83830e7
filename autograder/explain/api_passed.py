"""What one call's result does where another call takes something else, and a tensor of several values where one number
is taken: an optimizer given ``model.state_dict()`` (it iterates the names), ``load_state_dict`` given
``model.parameters()`` (a generator), ``.item()`` or ``float()`` of a per-sample loss. Rules of
:mod:`autograder.explain.returned` (signature ``rule(d, message, look, where, text, error)``), read from the failing
line and the frame's objects (a paste: its lines, or the file its traceback names).
"""

from __future__ import annotations

import re

from .context import Context
from .frame import Seen
from .made import code_at, made_by, show, value_of
from .quoted import PASTE as _PASTE

__all__ = ["duplicate_params", "item_of_many", "positional_flag", "wrong_argument"]


# ------------------------------------------------------------------------------- .item() of several values
def item_of_many(d, message, look: Seen | None, where: Context, text, error):
    """Which tensor ``.item()``/``float()`` was given, its shape and the statement that made it (a per-sample loss
    made with reduction='none'). Always returns the kind with its fields filled."""
    source, lineno, line, live = code_at(look, where, text)
    call = re.search(r"([A-Za-z_][\w.]*)\.item\(\)|\b(float|int|bool)\(\s*([A-Za-z_][\w.]*)\s*\)", line)
    name = (call[1] or call[3]) if call else ""
    step = re.search(r"([\w.]+)\.step\(\s*(?:closure\s*=\s*)?([A-Za-z_]\w*)\s*\)", line)
    if call:
        what = f"{name}.item()" if call[1] else f"{call[2]}({name})"
    elif step and where.called(r"[/\\]optim[/\\]"):
        what = f"{step[1]}.step({step[2]}) converts what {step[2]}() returns with float(), which"
    else:
        what = "A conversion to one Python number (.item(), float(t), or one inside torch)"
    d = {**d, "call": what}
    d["many"] = f"; this one has {d['n']}" if d.get("n") else ""
    seen = ""
    if name and live:
        obj = value_of(name, look.frame)
        seen = f"Seen in the failing frame: {name} is {show(obj)}."
    made = made_by(source, lineno, name.split(".")[0]) if name and "." not in name else None
    if made:
        seen += f" It was made by `{made[0]}`" + (
            ": reduction='none' gives one loss per sample." if re.search(r"reduction\s*=\s*.none.", made[0]) else "."
        )
    elif not live:
        seen = f"{_PASTE}the failing line is `{line[:120]}`; the tensor's shape is not in it." if line else ""
    x = name or "t"
    d["seen"] = seen.strip()
    if step and not call:
        d["fix"] = f"Return one number from {step[2]}: the reduced loss (loss.mean() or loss.sum()), and call "
        d["fix"] += "backward() on that same reduced loss inside it."
        return "item_of_many", d
    d["fix"] = (
        f"Reduce it to the one number you mean first: {x}.mean().item() (the batch's average, what reduction='mean' "
        f"gives) or {x}.sum().item(); to log every value, {x}.tolist(); and backward() a reduced loss too."
    )
    return "item_of_many", d


# ---------------------------------------------------------------------- one API's result given to another
# (message, the call the failing line passes, what that call returns, what the receiver takes, the fix)
_ARGUMENTS = (
    (
        r"optimizer can only optimize Tensors, but one of the params is str",
        r"(?P<recv>[A-Za-z_][\w.]*)\.state_dict\(\)",
        "state_dict() returns a dict from names to tensors, and an optimizer iterating a dict gets its names (strings)",
        "the optimizer iterates it",
        "Give the optimizer the parameters: torch.optim.{optimizer}({recv}.parameters(), ...).",
    ),
    (
        r"Expected state_dict to be dict-like, got <class 'generator'>",
        r"(?P<recv>[A-Za-z_][\w.]*)\.(?:named_)?parameters\(\)",
        "parameters() returns a generator of tensors, and load_state_dict takes the dict of names to tensors that "
        "state_dict() returns",
        "load_state_dict reads it as a dict",
        "Load a state dict: target.load_state_dict({recv}.state_dict()) (names and shapes must match).",
    ),
)


def wrong_argument(d, message, look: Seen | None, where: Context, text, error):
    for said, passed, returns, use, fix in _ARGUMENTS:
        if not re.search(said, message):
            continue
        _source, _lineno, line, live = code_at(look, where, text)
        call = re.search(passed, line)
        if not call:
            return None
        optimizer = re.search(r"optim\.(\w+)\(", line)
        name = call[0]
        if live:
            obj = value_of(call["recv"], look.frame)
            seen = f"Seen in the failing frame: `{line[:120]}` passes {name}, and {call['recv']} is {show(obj)}."
        else:
            seen = f"{_PASTE}the failing line `{line[:120]}` passes {name}."
        fixed = fix.format(recv=call["recv"], optimizer=optimizer[1] if optimizer else "SGD")
        return "api_returned_value", {**d, "name": name, "returns": returns, "use": use, "seen": seen, "fix": fixed}
    return None


# ------------------------------------------------------------------------------- loss.backward(True)
def positional_flag(d, message, look: Seen | None, where: Context, text, error):
    """``loss.backward(True)`` or ``loss.backward(2.0)``: a bool or a number where backward's gradient goes."""
    m = re.search(r"'(bool|int|float)' object is not iterable", message)
    if not m or not where.called(r"_tensor\.py\W+(?:line \d+, in )?backward|autograd[/\\]__init__\.py\W+\S*backward"):
        return None
    _source, _lineno, line, live = code_at(look, where, text)
    call = re.search(r"([A-Za-z_][\w.()\[\]]*?)\.backward\(\s*([^=,()\s]+)\s*[,)]", line)
    if not call:
        return None
    seen = "Seen in the failing frame" if live else f"{_PASTE.rstrip(': ')}"
    seen += f": the call is `{call[0].rstrip(',)')})`."
    if m[1] == "bool":
        fix = f"Name the flag: {call[1]}.backward(retain_graph={call[2]}) (or create_graph=...)."
    else:
        fix = (
            f"For a loss of one element backward() needs no gradient (it starts from 1): {call[1]}.backward(). To "
            f"scale the gradients, scale the loss: ({call[1]} * {call[2]}).backward()."
        )
    return "backward_positional_flag", {
        **d,
        "call": f"{call[1]}.backward({call[2]})",
        "arg": call[2],
        "type": m[1],
        "seen": seen,
        "fix": fix,
    }


# ------------------------------------------------------------------------------- a tensor twice in a group
def duplicate_params(d, message, look: Seen | None, where: Context, text, error):
    """Which tensors a parameter group holds twice: read from add_param_group's frame while the warning is shown
    (``error`` is then the frame that warned), named by the modules of the learner's frame. Always the kind."""
    import types as _types

    import torch

    from .context import _LIBRARY

    frame, group, mine = error if isinstance(error, _types.FrameType) else None, None, None
    while frame is not None:
        if frame.f_code.co_name == "add_param_group" and group is None:
            group = frame.f_locals.get("param_group")
        if mine is None and not _LIBRARY.search(frame.f_code.co_filename):
            mine = frame
        frame = frame.f_back
    seen = ""
    if isinstance(group, dict) and mine is not None:
        params, names = list(group.get("params", [])), {}
        for owner, value in {**mine.f_globals, **mine.f_locals}.items():
            if isinstance(value, torch.nn.Module) and not owner.startswith("_"):
                for name, p in value.named_parameters():
                    names.setdefault(id(p), f"{owner}.{name}")
        twice = [p for i, p in enumerate(params) if any(p is q for q in params[:i])]
        which = ", ".join(names.get(id(p), f"a tensor of shape {list(p.shape)}") for p in twice[:6])
        if twice:
            seen = (
                f" Seen in the optimizer's frame: {len(twice)} of its {len(params)} entries repeat a tensor: {which}."
            )
    elif where.pasted and where.source.strip():
        seen = f" {_PASTE}the line is `{where.source.strip().splitlines()[-1].strip()[:120]}`."
    return "optimizer_duplicate_params", {**d, "seen": seen}
