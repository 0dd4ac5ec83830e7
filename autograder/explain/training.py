"""Pick the kind of an ordinary Python error that an autograd or training mistake causes (the kinds of
:mod:`autograder.kinds.training`) from what the failing frame holds: the object ``.backward`` was looked up on, the
class a ``with`` statement was given, the module handed to an optimizer, the dict a forward hook fills, the module
being pickled with a local hook, the wrapper an attribute was read from. ``seen`` (a detail) says what was looked at
and what it showed; from a pasted traceback, what its lines and message show and what a paste cannot show.

``training_kind(kind, details, text, where, error)`` returns ``(kind, details)``: the same when no rule applies.
Never raises.
"""

from __future__ import annotations

import ast
import re

from .consumed import consumed_case
from .context import _LIBRARY, Context
from .frame import Seen, describe, seen
from .quoted import library_local
from .unrun import penalty_case

__all__ = ["training_kind"]

# the kinds whose own pattern matched and that the frame adds evidence to
_ENRICHED = {
    "optimizer_given_tensor",
    "optimizer_overlapping_groups",
    "module_init_not_called",
    "wrapper_attribute",
    "consumed",
    "modified_inplace",
    "out_requires_grad",
}
_NUMBERS = {"float", "int", "complex", "numpy.float64", "numpy.float32", "float64", "float32", "ndarray"}
_PASTE = "A paste shows no objects, only its lines: "
_FUNCTIONS = {
    "CrossEntropyLoss": "cross_entropy",
    "MSELoss": "mse_loss",
    "L1Loss": "l1_loss",
    "NLLLoss": "nll_loss",
    "BCELoss": "binary_cross_entropy",
    "BCEWithLogitsLoss": "binary_cross_entropy_with_logits",
    "SmoothL1Loss": "smooth_l1_loss",
    "HuberLoss": "huber_loss",
    "KLDivLoss": "kl_div",
}
_GRAD_MODES = (
    r"(?:torch\.)?(?:no_grad|enable_grad|inference_mode|set_grad_enabled|autocast|amp\.autocast|"
    r"autograd\.(?:detect_anomaly|set_detect_anomaly|graph\.saved_tensors_hooks|graph\.save_on_cpu))"
)
_MODULE_PRIVATE = r"_(?:parameters|buffers|modules|\w*hooks\w*|non_persistent_buffers_set|is_full_backward_hook)"


def training_kind(kind: str, details: dict, text: str, where: Context, error) -> tuple[str, dict]:
    """See the module's docstring."""
    try:
        if kind != "unknown" and kind not in _ENRICHED:
            return kind, details
        look = seen(error) if isinstance(error, BaseException) else None
        found = penalty_case(details, look, where, text) if kind == "consumed" else None
        if found:
            return found
        quoted = where.source if where.pasted else ""
        for rule in _RULES:
            found = rule(kind, dict(details), _last_message(text), look, quoted, text, error)
            if found:
                return found
    except Exception:  # noqa: BLE001 -- a rule must never cost the explanation
        pass
    return kind, details


def _last_message(text: str) -> str:
    """The last line of ``text`` that is not a traceback's (the final message of a paste; the message itself)."""
    lines = [x for x in text.strip().splitlines() if x.strip() and not x.startswith((" ", "\t"))]
    return "\n".join(lines[-3:]) if lines else text


def _seen_sentence(name: str, obj) -> str:
    text = describe(obj)
    return f"Seen in the failing frame: {name} is {text}." if text else ""


def _receiver(segment: str, attr: str) -> str:
    found = re.findall(rf"([\w.\[\]'\"]+?(?:\(\))?)\s*\.\s*{attr}\b", segment)
    return found[-1] if found else ""


def _backward_on(kind, d, message, look: Seen | None, quoted, text, error):
    m = re.search(r"'(?P<type>[\w.]+)' object has no attribute 'backward'", message)
    if not m:
        return None
    where_line = look.line if look else quoted
    name = _receiver(where_line, "backward") or "it"
    obj = look.objects.get("<object>") if look else None
    typename = m["type"]
    if look and obj is not None:
        shown = _seen_sentence(name, obj) or f"Seen in the failing frame: {name} is a {typename}."
    else:
        shown = f"{_PASTE}the message says {name} is a {typename}; where it was made is not in the paste."
    import torch

    if typename in ("tuple", "list"):
        return "backward_on_container", {**d, "name": name, "seen": f"a {typename}", "story": shown}
    if typename in _NUMBERS:
        return "backward_on_number", {**d, "name": name, "seen": f"a Python {typename}", "story": shown}
    loss = isinstance(obj, torch.nn.modules.loss._Loss) if obj is not None else typename.endswith("Loss")
    if loss:
        return "loss_module_given_data", _loss_details(d, typename, f"nn.{typename}(...)", shown)
    return None


def _loss_details(d: dict, loss: str, call: str, shown: str) -> dict:
    function = _FUNCTIONS.get(loss, re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", loss.removesuffix("Loss")).lower())
    return {**d, "loss": loss, "call": call, "function": function, "seen": shown}


def _loss_given_data(kind, d, message, look: Seen | None, quoted, text, error):
    """``nn.CrossEntropyLoss(logits, target)``: the constructor reads the tensors as its options."""
    import torch

    line = look.line if look else quoted
    call = re.search(r"((?:[\w.]+\.)?(\w+Loss))\(\s*[^)\s]", line)
    if not call:
        return None
    if look:
        cls = look.objects.get(call[1])
        if not (isinstance(cls, type) and issubclass(cls, torch.nn.modules.loss._Loss)):
            return None
        if not re.search(r"nn[/\\]modules[/\\]loss\.py:__init__", look.library_called):
            return None
        shown = (
            f"Seen in the failing frame: {call[1]} is the class {cls.__name__} (a loss module), called with "
            "tensors, and the error came from its __init__."
        )
    else:
        if not re.search(r"loss\.py\"?, line \d+, in __init__", text):
            return None
        shown = f"{_PASTE}the failing line calls {call[1]}(...) with arguments, and the error came from its __init__."
    return "loss_module_given_data", _loss_details(d, call[2], f"{call[1]}(...)", shown)


def _with_class(kind, d, message, look: Seen | None, quoted, text, error):
    if not re.search(r"does not support the context manager protocol|__enter__", message):
        return None
    if look:
        for name, obj in look.objects.items():
            if isinstance(obj, type) and hasattr(obj, "__enter__") and obj.__module__.startswith("torch"):
                shown = f"Seen in the failing frame: {name} is {describe(obj)}."
                return "context_manager_not_called", {**d, "name": name, "seen": shown}
        return None
    m = re.search(rf"with\s+({_GRAD_MODES})\s*:", quoted)
    if not m:
        return None
    shown = f"{_PASTE}its line `with {m[1]}:` has no call."
    return "context_manager_not_called", {**d, "name": m[1], "seen": shown}


def _optimizer_module(kind, d, message, look: Seen | None, quoted, text, error):
    import torch

    m = re.search(r"'(?P<type>\w+)' object is not iterable", message) or re.search(
        r"optimizer can only optimize Tensors, but one of the params is [\w.]+\.(?P<type>\w+)", message
    )
    if not m or not m["type"][:1].isupper():  # a module's class; a method not called is api_return's
        return None
    if look:
        if not re.search(r"[/\\]optim[/\\]", look.library_called):
            return None
        given = library_local(error, "__init__", "params")  # what the optimizer was given, not a name beside it
        for name, obj in look.objects.items():
            if isinstance(obj, torch.nn.Module) and (given is None or given is obj):
                what = describe(obj) + (": iterating a Sequential gives its modules" if "can only" in m[0] else "")
                return "optimizer_given_module", {**d, "name": name, "seen": f"({what}, seen in the frame)"}
        return None
    if not re.search(r"[/\\]optim[/\\]\w+\.py", text):
        return None
    called = re.search(r"optim\.\w+\(\s*([A-Za-z_][\w.]*)\s*[,)]", quoted)
    name = called[1] if called else f"the {m['type']}"
    shown = f"(a {m['type']}, says the message; {_PASTE.lower()}that it is a module is read from its class name)"
    return "optimizer_given_module", {**d, "name": name, "seen": shown}


def _optimizer_tensor(kind, d, message, look: Seen | None, quoted, text, error):
    if kind != "optimizer_given_tensor":
        return None
    import torch

    tensors = [(n, o) for n, o in (look.objects.items() if look else ()) if isinstance(o, torch.Tensor)]
    if tensors:
        name, obj = tensors[0]
        shown = f"Seen in the failing frame: {name} is {describe(obj)}."
    else:
        shown = f"{_PASTE}which tensor it was is not in it." if not look else ""
    return kind, {**d, "seen": shown}


def _overlapping(kind, d, message, look: Seen | None, quoted, text, error):
    """The tensors already in a group and in the group being added: read from the optimizer's add_param_group
    frame (its ``self.param_groups`` and ``param_group``), named by the modules of the learner's frame."""
    if kind != "optimizer_overlapping_groups":
        return None
    if not look:
        return kind, {**d, "seen": f"{_PASTE}which tensors are shared is not in it."}
    tb, frame = getattr(error, "__traceback__", None), None
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "add_param_group":
            frame = tb.tb_frame
        tb = tb.tb_next
    if frame is None:
        return kind, {**d, "seen": ""}
    new = frame.f_locals.get("param_group", {}).get("params", [])
    groups = frame.f_locals["self"].param_groups
    shared = [(i, p) for i, g in enumerate(groups) for p in g["params"] if any(p is q for q in new)]
    names = [_parameter_name(p, look.frame) for _, p in shared]
    which = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    shown = (
        f"Seen in the optimizer's frame: {len(shared)} tensor(s) ({which}) of group {len(groups)} (the one being "
        f"added) are already in group {shared[0][0]}."
        if shared
        else ""
    )
    return kind, {**d, "seen": shown}


def _parameter_name(tensor, frame) -> str:
    import torch

    for scope in (frame.f_locals, frame.f_globals):
        for owner, value in scope.items():
            if isinstance(value, torch.nn.Module):
                for name, p in value.named_parameters():
                    if p is tensor:
                        return f"{owner}.{name}"
    return f"a tensor of shape {list(tensor.shape)}"


def _init_not_called(kind, d, message, look: Seen | None, quoted, text, error):
    import torch

    private = re.search(rf"'(?P<type>\w+)' object has no attribute '{_MODULE_PRIVATE}'", message)
    if kind != "module_init_not_called" and not private:
        return None
    obj = look.frame.f_locals.get("self", look.objects.get("<object>")) if look else None
    if isinstance(obj, torch.nn.Module) and "_parameters" not in vars(obj):
        shown = (
            f"Seen in the failing frame: self, a {type(obj).__name__}, has no _parameters dict of its own: "
            "nn.Module.__init__ never ran on it."
        )
        return "module_init_not_called", {**d, "seen": shown}
    if private and (look is None or look.frame is None):
        if not re.search(r"nn[/\\]modules[/\\]module\.py", text):
            return None
        shown = f"{_PASTE}the message names a dict that nn.Module.__init__ makes."
        return "module_init_not_called", {**d, "seen": shown}
    return (kind, {**d, "seen": ""}) if kind == "module_init_not_called" else None


def _hooked(obj_dict, frame):
    """``[(path, hook name)]``: hooks of the modules bound in ``frame`` whose function refers to ``obj_dict``
    (a closure cell, or a global name of the hook's code)."""
    import torch

    found = []
    for owner, value in {**frame.f_globals, **frame.f_locals}.items():
        if not isinstance(value, torch.nn.Module):
            continue
        for path, module in value.named_modules():
            hooks = [
                *module._forward_hooks.values(),
                *module._forward_pre_hooks.values(),
                *module._backward_hooks.values(),
            ]
            for hook in hooks:
                fn = getattr(hook, "func", hook)
                code = getattr(fn, "__code__", None)
                cells = [c.cell_contents for c in (getattr(fn, "__closure__", None) or ()) if _filled(c)]
                names = [getattr(fn, "__globals__", {}).get(n) for n in (code.co_names if code else ())]
                if any(x is obj_dict for x in [*cells, *names]):
                    where = f"{owner}.{path}" if path else owner
                    found.append((where, getattr(fn, "__name__", "hook")))
    return list(dict.fromkeys(found))


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def _hook_dict(kind, d, message, look: Seen | None, quoted, text, error):
    if not isinstance(error, KeyError) or not look or look.frame is None:
        return None
    try:
        tree = ast.parse(look.segment.strip(), mode="eval")
    except SyntaxError:
        return None
    subscripts = [n for n in ast.walk(tree) if isinstance(n, ast.Subscript)]
    for node in subscripts:
        name = ast.unparse(node.value)
        obj = look.objects.get(name)
        if not isinstance(obj, dict):
            continue
        hooked = _hooked(obj, look.frame)
        if not hooked:
            continue
        key = repr(error.args[0]) if error.args else "?"
        modules = ", ".join(f"{where} ({hook})" for where, hook in hooked)
        if obj:
            state = f"it holds {list(obj)[:6]!r}, filled by the hook on {modules}: it stores under other keys"
            fix = f"Read a key the hook stores ({list(obj)[:6]!r}), or store under the key you read ({key})."
        else:
            state = (
                f"it is empty, and a forward hook on {modules} writes into it: no forward of that module has run "
                f"since the hook was registered and {name} was made (the model was not called yet, {name} was "
                "emptied after the call, or the model called is another object than the hooked one)"
            )
            fix = (
                f"Call the model (model(x)) after registering the hook and before reading {name}; register the "
                "hook on a submodule of the model you call (model.fc, not a copy)."
            )
        shown = f"Seen in the failing frame: {name} is a dict; {state}."
        return "hook_never_ran", {**d, "name": name, "key": key, "seen": shown, "fix": fix}
    return None


def _pickled_hook(kind, d, message, look: Seen | None, quoted, text, error):
    import torch

    m = re.search(r"Can't (?:pickle|get) local object '(?P<hook>[^']+)'", message)
    if not m:
        return None
    if look:
        for name, obj in look.objects.items():
            if not isinstance(obj, torch.nn.Module):
                continue
            for path, module in obj.named_modules():
                hooks = [*module._forward_hooks.values(), *module._forward_pre_hooks.values()]
                hooks += [*module._backward_hooks.values(), *module._backward_pre_hooks.values()]
                local = [h for h in hooks if "<locals>" in getattr(h, "__qualname__", "")]
                if local:
                    where = f"{name}.{path}" if path else name
                    shown = f"Seen in the failing frame: {where} holds the hook {local[0].__qualname__}."
                    return "pickle_module_hook", {**d, "hook": m["hook"], "seen": shown}
        return None
    if not re.search(r"serialization\.py|pickle|copyreg", text):
        return None
    shown = f"{_PASTE}the local function is named {m['hook']}; which module holds it is not in it."
    return "pickle_module_hook", {**d, "hook": m["hook"], "seen": shown}


def _wrapper(kind, d, message, look: Seen | None, quoted, text, error):
    if kind != "wrapper_attribute":
        return None
    attr = d.get("attr", "")
    obj = look.objects.get("<object>") if look else None
    if obj is None and look:
        obj = next((o for o in look.objects.values() if type(o).__name__ == d.get("wrapper")), None)
    inner = getattr(obj, "module", None) if obj is not None else None
    if inner is None:
        return kind, {**d, "seen": f"{_PASTE}whether the wrapped model has {attr} is not in it." if not look else ""}
    has = "has it" if hasattr(inner, attr) else f"has no {attr} either: check the name too"
    return kind, {**d, "seen": f"Seen in the failing frame: its .module is a {type(inner).__name__}, which {has}."}


def _inplace(kind, d, message, look: Seen | None, quoted, text, error):
    """The learner's frames: the tensors of the message's shape at its version (which one it was), and whether any
    optimizer is there at all (the hint on an optimizer.step() is given only where one is)."""
    if kind != "modified_inplace" or not isinstance(error, BaseException) or "version" not in d:
        return None
    import torch

    frames, tb = [], error.__traceback__
    while tb is not None:
        if not _LIBRARY.search(tb.tb_frame.f_code.co_filename):
            frames.append(tb.tb_frame)
        tb = tb.tb_next
    if not frames:
        return None
    shape = [int(n) for n in d.get("shape", "").replace(" ", "").split(",") if n]
    matches, optimizers = [], []
    for frame in reversed(frames):
        for name, value in frame.f_locals.items():
            if isinstance(value, torch.optim.Optimizer):
                optimizers.append(name)
            elif (
                isinstance(value, torch.Tensor)
                and list(value.shape) == shape
                and value._version == int(d["version"])
                and name not in matches
            ):
                matches.append(name)
    optimizers += [n for n, v in frames[0].f_globals.items() if isinstance(v, torch.optim.Optimizer)]
    seen = ""
    if len(matches) == 1:
        seen = f" Seen in the failing frames: {matches[0]} has that shape and is at version {d['version']}."
    if optimizers:
        return (kind, {**d, "seen": seen}) if seen else None
    none = (
        " No optimizer is bound in the failing frames (their locals, the cell's globals): no optimizer.step() did it."
    )
    return kind, {**d, "seen": seen + none}


def _dataloader_worker(kind, d, message, look: Seen | None, quoted, text, error):
    if kind != "out_requires_grad" or "in DataLoader worker process" not in text:
        return None
    shown = "Seen in the message: it was raised in a worker (`Caught RuntimeError in DataLoader worker process`)."
    return "dataset_requires_grad", {**d, "seen": shown}


def _consumed(kind, d, message, look: Seen | None, quoted, text, error):
    if kind != "consumed" or not isinstance(error, BaseException):
        return None
    found = consumed_case(error)
    return (found[0], {**d, **found[1]}) if found else None


_RULES = (
    _dataloader_worker,
    _inplace,
    _consumed,
    _backward_on,
    _loss_given_data,
    _with_class,
    _optimizer_module,
    _optimizer_tensor,
    _overlapping,
    _init_not_called,
    _hook_dict,
    _pickled_hook,
    _wrapper,
)
