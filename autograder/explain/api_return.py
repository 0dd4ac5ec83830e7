"""Plain Python errors about what a training API returns, read from the failing line, the objects its names are
bound to and the statement that made them (the frame's own code; for a paste, the file its traceback names when the
file's line still reads as the paste quotes it): ``grads = loss.backward()`` then ``grads[0]`` (backward returns None),
``for name, p in model.parameters()`` (it yields tensors, not pairs), ``model.parameters()[0]`` (a generator),
``Adam(model.parameters, ...)`` (the method itself), ``ctx.saved_tensors()`` (an attribute called), an LBFGS closure
that returns nothing. The kinds are in :mod:`autograder.kinds.api_return`.

``api_unknown(d, message, look, where, text, error)`` returns ``(kind, details)`` or None (a rule of
:mod:`autograder.explain.returned`). Never raises: a rule that fails gives None.
"""

from __future__ import annotations

import ast
import inspect
import keyword
import re
import types

from ..kinds.api_return import ATTRIBUTES, RETURNS
from ..kinds.kind import taught
from .api_passed import positional_flag, wrong_argument
from .context import _LIBRARY, Context
from .frame import Seen, describe
from .made import call_of, code_at, code_origin, made_by, show, type_name, value_of
from .quoted import PASTE as _PASTE

__all__ = ["api_unknown", "API_LESSONS"]

_TYPED = re.compile(
    r"'(?P<t1>[\w.]+)' object has no attribute '(?P<attr>\w+)'"
    r"|'(?P<t2>[\w.]+)' object is not (?P<what>subscriptable|iterable)"
    r"|object of type '(?P<t3>[\w.]+)' has no len\(\)"
    r"|unsupported operand type\(s\) for (?P<op>[^:\s]{1,3}): '(?P<a>[\w.]+)' and '(?P<b>[\w.]+)'"
    r"|cannot unpack non-iterable (?P<t4>[\w.]+) object"
    r"|'(?P<t5>[\w.]+)' object does not support item assignment"
    r"|'(?P<t6>[\w.]+)' object is not callable"
)
_UNPACK = re.compile(r"(?:too many|not enough) values to unpack \(expected (?P<n>\d+)")
_CALLED = re.compile(r"'(?P<t>[\w.]+)' object is not callable")
_FLOAT_NONE = re.compile(r"float\(\) argument must be [\w ]+, not 'NoneType'")


def api_unknown(d, message, look: Seen | None, where: Context, text, error):
    """The first rule that reads the failing line as a training API's return value misused, or None."""
    for rule in (
        _closure_none,
        _attribute_called,
        _method_value,
        _unpacked,
        wrong_argument,
        positional_flag,
        _returned,
    ):
        try:
            found = rule(d, message, look, where, text, error)
        except Exception:  # noqa: BLE001 -- a rule must never cost the explanation
            found = None
        if found:
            return found
    return None


def _short(t: str) -> str:
    return t.rsplit(".", 1)[-1]


def use_of(m) -> str:
    if m["attr"]:
        return f"it reads .{m['attr']}"
    if m["op"]:
        return f"the {m['op']} operator"
    if m["t3"]:
        return "it asks its len()"
    if m["t4"]:
        return "it unpacks it"
    if m["t5"]:
        return "it assigns into it"
    if m["t6"]:
        return "it calls it"
    return "it indexes it" if m["what"] == "subscriptable" else "it iterates it"


# ------------------------------------------------------------------------------------ a value returned
def _returned(d, message, look: Seen | None, where: Context, text, error):
    m = _TYPED.search(message)
    if not m:
        return None
    types_seen = {_short(t) for t in (m["t1"], m["t2"], m["t3"], m["t4"], m["t5"], m["t6"], m["a"], m["b"]) if t}
    source, lineno, line, live = code_at(look, where, text)
    # the result of an API call used on the failing line itself: loss.backward()[0], len(model.parameters())
    inline = re.search(r"(?:([A-Za-z_][\w.]*)\.)?(\w+)\([^()]*\)\s*(?:\[|\.\w|\))", line)
    candidates = []
    if look is not None and look.frame is not None:
        for name, obj in look.objects.items():
            if "." not in name and (type_name(obj) in types_seen or (obj is None and "NoneType" in types_seen)):
                candidates.append((name, obj))
    else:
        names = re.findall(r"(?<![\w.])([A-Za-z_]\w*)\b(?!\s*=[^=])", line)  # a bare name read on the line
        candidates = [(n, None) for n in dict.fromkeys(names) if not keyword.iskeyword(n)]
    for name, obj in candidates:
        made = made_by(source, lineno, name)
        call = call_of(made[1]) if made else None
        groups = made and re.match(r"for\s+\w+\s+in\s+([\w.]+)\.param_groups\s*:", made[0])
        if groups and "dict" in types_seen:  # for g in opt.param_groups: g.lr
            shown = f"Seen in the failing frame: {name} is {show(obj)}, made by `{made[0]}`." if live else ""
            returns = "an optimizer's param_groups is a list of dicts (one per group): a group's entries are read as "
            returns += "g['lr'], g['params'], not as attributes"
            fix = f"for g in {groups[1]}.param_groups: g['lr'] (and g['lr'] = ... to change it)."
            return "api_returned_value", {
                **d,
                "name": name,
                "returns": returns,
                "use": use_of(m),
                "seen": shown,
                "fix": fix,
            }
        if call is None:
            continue
        api, recv = call
        if made[0].startswith("for "):  # a loop's name: what each item of the API is
            shown = f" Seen in the failing frame: {name} is {show(obj)}." if live else ""
            found = unpack_line(d, made[0], look, live, source, shown)
            if found:
                return found
            continue
        if api in RETURNS and types_seen & set(RETURNS[api][0]):
            origin = "" if live else code_origin(where, text)
            return _api_details(d, m, name, obj, made[0], api, recv, origin, "NoneType" in types_seen)
        own = _own_function(api, look)
        if own and "NoneType" in types_seen:
            shown = (
                f"Seen in the failing frame: {name} is None, made by `{made[0]}`, and {api} has no `return` of a value."
            )
            fix = f"End {api} with `return` of what it computes (return loss), and use what it returns."
            return "api_returned_none", {
                **d,
                "name": name,
                "returns": f"{api}() returns None",
                "use": use_of(m),
                "seen": shown,
                "fix": fix,
            }
    if inline and inline[2] in RETURNS and types_seen & set(RETURNS[inline[2]][0]):
        api, recv = inline[2], inline[1] or "it"
        shown = f"The failing line `{line[:120]}` uses what {api}() returned directly."
        return _api_details(d, m, f"{recv}.{api}()", None, "", api, recv, "", "NoneType" in types_seen, shown)
    return None


def _own_function(name: str, look: Seen | None):
    """The learner's function ``name`` bound in the failing frame when its source has no ``return`` of a value."""
    if look is None or look.frame is None or not name.isidentifier():
        return None
    func = value_of(name, look.frame)
    code = getattr(func, "__code__", None)
    if code is None or _LIBRARY.search(code.co_filename):
        return None
    try:
        tree = ast.parse(inspect.getsource(func).strip())
    except (OSError, TypeError, SyntaxError):
        return None
    return None if any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(tree)) else func


API_LESSONS = {  # where the course teaches what these calls do, nearer than the kind's own section
    "zero_grad": taught(4, "Resetting"),
    "step": taught(2, "Optimizers take leaves only"),
    "parameters": taught(2, "Optimizers take leaves only"),
}


def _api_details(d, m, name, obj, made, api, recv, origin, none, shown=""):
    """The details of api_returned_none/_value; ``origin`` is where a paste's code was read ("" for a live frame)."""
    _types, returns, fix = RETURNS[api]
    use = use_of(m)
    if not shown:
        where_seen = f"Read from {origin}" if origin else "Seen in the failing frame"
        what = "" if origin else f"is {show(obj)}"
        shown = f"{where_seen}: {name} {what + ', ' if what else 'was '}made by `{made}`."
    generator = (
        f"Make a list once if you need len() or [i]: params = list({recv}.{api}()); to pick parameters by name, "
        f"iterate {recv}.named_parameters() (name, p pairs) or read dict({recv}.named_parameters())['0.weight']."
    )
    own_line = f"Call {recv}.{api}() on its own line; it works in place, so keep using what you had."
    fix = fix.format(recv=recv or "x", generator_fix=generator, own_line=own_line)
    kind = "api_returned_none" if none else "api_returned_value"
    d = {**d, "lesson": API_LESSONS[api]} if api in API_LESSONS else d
    return kind, {**d, "name": name, "returns": returns, "use": use, "seen": shown, "fix": fix}


# ----------------------------------------------------------------------------- for a, b in X.parameters()
def _unpacked(d, message, look: Seen | None, where: Context, text, error):
    m = _UNPACK.search(message) or re.search(r"cannot unpack non-iterable (?P<t>[\w.]+) object", message)
    if not m:
        return None
    source, _lineno, line, live = code_at(look, where, text)
    return unpack_line(d, line, look, live, source)


def unpack_line(d, line: str, look: Seen | None, live: bool, source, shown: str = ""):
    """``for a, b in X.parameters()`` (or a comprehension's ``for``) in ``line``: what the API yields, or None."""
    loop = re.search(r"\bfor\s+(.+?)\s+in\s+(?:enumerate\()?(?:([A-Za-z_][\w.]*)\.)?(\w+)\(", line)
    if not loop or loop[3] not in (
        "parameters",
        "named_parameters",
        "state_dict",
        "buffers",
        "children",
        "modules",
        "named_children",
        "named_modules",
        "named_buffers",
    ):
        groups = re.search(r"\bfor\s+(.+?)\s+in\s+([\w.]+)\.param_groups\b", line)
        if loop is not None or groups is None:
            return None
        api, recv, targets = "param_groups", groups[2], groups[1]
    else:
        api, recv, targets = loop[3], loop[2] or "model", loop[1]
    n = targets.count(",") + 1 if not targets.strip().startswith("(") or "," in targets else 1
    if n < 2:
        return None
    items = {
        "parameters": "the parameter tensors alone, not (name, tensor) pairs: unpacking one iterates its rows",
        "buffers": "the buffer tensors alone: unpacking one iterates its rows",
        "children": "the child modules alone, not (name, module) pairs",
        "modules": "the modules alone, not (name, module) pairs",
        "state_dict": "a dict: iterating it gives the names (strings) alone, and unpacking a name splits its letters",
        "param_groups": "a list of dicts: iterating a dict gives its keys ('params', 'lr', ...)",
    }.get(api, "(name, value) pairs: two values each")
    if re.search(r"\benumerate\(", line):
        items = f"(index, item) pairs through enumerate: two values each, the item being what {api}() yields"
    seen = ""
    if live:
        owner = value_of(recv, look.frame) or value_of(recv, look.frame.f_back)  # a comprehension: its caller
        import torch

        if isinstance(owner, torch.nn.Module) and api == "parameters":
            first = next(owner.parameters(), None)
            if first is not None:
                seen = (
                    f" Seen in the failing frame: {recv} is {describe(owner)}; its first parameter is "
                    f"{describe(first)}."
                )
        elif owner is not None:
            seen = f" Seen in the failing frame: {recv} is {describe(owner) or type_name(owner)}."
    elif source is None:
        seen = f" {_PASTE}the failing line is `{line[:120]}`."
    seen = shown + seen
    fixes = {
        "parameters": f"for name, p in {recv}.named_parameters(): ... (names like '0.weight'); or, without "
        f"names, for p in {recv}.parameters().",
        "buffers": f"for name, b in {recv}.named_buffers().",
        "children": f"for name, m in {recv}.named_children().",
        "modules": f"for name, m in {recv}.named_modules().",
        "state_dict": f"for name, t in {recv}.state_dict().items().",
        "param_groups": f"for group in {recv}.param_groups: group['lr'], group['params'].",
    }
    fix = fixes.get(
        api,
        f"Unpack two names per item: for name, x in {recv}.{api}(); with a counter, "
        f"for i, (name, x) in enumerate({recv}.{api}()).",
    )
    return "iterated_items_unpacked", {
        **d,
        "line": line[:120],
        "n": str(n),
        "api": f"{recv}.{api}" + ("()" if api != "param_groups" else ""),
        "items": items,
        "seen": seen,
        "fix": fix,
    }


# ------------------------------------------------------------------------------- model.parameters (no call)
def _method_value(d, message, look: Seen | None, where: Context, text, error):
    m = re.search(r"'(?P<t>method|builtin_function_or_method|function)'", message)
    if not m:
        return None
    _source, _lineno, line, live = code_at(look, where, text)
    if live:
        from .quoted import library_local

        given = library_local(error, "__init__", "params")  # what an optimizer was given
        found = []
        for name in look.objects:
            obj = value_of(name, look.frame) if "." in name else look.objects[name]
            bound = isinstance(obj, types.MethodType | types.BuiltinMethodType) and not isinstance(
                getattr(obj, "__self__", None), types.ModuleType
            )
            if bound and (given is None or obj == given) and not re.search(rf"{re.escape(name)}\s*\(", line):
                found.append((name, obj))
    if live and found:
        name, obj = found[0]
        seen = f"Seen in the failing frame: {name} is {_describe_method(obj)}."
        if given is not None:
            seen += " The optimizer was given it."
    else:
        names = [_expression_before(line, a.start()) + a[0] for a in _METHOD_USED.finditer(line)]
        if not names:
            return None
        name = names[0]
        source = "The failing line" if live else f"{_PASTE}the failing line"
        seen = f"{source} uses {name} with no parentheses, and the message says a {m['t']}."
    optimizer = re.search(r"((?:torch\.)?(?:optim\.)?[A-Z]\w*)\(\s*" + re.escape(name) + r"\b", line)
    fix = (
        f"Call it: {optimizer[1]}({name}(), ...): an optimizer takes the parameters the call returns."
        if optimizer
        else f"Call it: {name}()."
    )
    return "method_not_called", {**d, "name": name, "seen": seen, "fix": fix}


_METHOD_USED = re.compile(
    r"\.(?:parameters|named_parameters|item|size|numel|dim|detach|state_dict|zero_grad|step|backward)\b(?!\s*\()"
)


def _expression_before(line: str, end: int) -> str:
    """The expression that ends at ``end`` in ``line`` (names, dots, balanced brackets): ``(w * s).sum()``."""
    depth, i = 0, end
    while i > 0:
        c = line[i - 1]
        if c in ")]":
            depth += 1
        elif c in "([":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and not (c.isalnum() or c in "_."):
            break
        i -= 1
    return line[i:end]


def _describe_method(obj) -> str:
    owner = getattr(obj, "__self__", None)
    label = getattr(obj, "__qualname__", getattr(obj, "__name__", "?"))
    return f"the bound method {label} of {describe(owner) or type_name(owner)}, not what calling it returns"


# --------------------------------------------------------------------------------- ctx.saved_tensors()
def _attribute_called(d, message, look: Seen | None, where: Context, text, error):
    m = _CALLED.search(message)
    if not m:
        return None
    _source, _lineno, line, live = code_at(look, where, text)
    t = _short(m["t"])
    for call in re.finditer(r"([A-Za-z_][\w.]*)\.(\w+)\(\s*\)", look.segment if live else line):
        attr = call[2]
        if attr not in ATTRIBUTES:
            continue
        holds, kinds, usage = ATTRIBUTES[attr]
        if t not in kinds:
            continue
        name = f"{call[1]}.{attr}"
        if live:
            obj = value_of(name, look.frame)
            if callable(obj):
                continue
            seen = f"Seen in the failing frame: {name} is {show(obj)}."
        else:
            seen = f"{_PASTE}the failing line calls {name}(), and the message says the {t} it holds is not callable."
        kind = "saved_tensors_called" if attr in ("saved_tensors", "needs_input_grad") else "attribute_called"
        return kind, {**d, "name": name, "holds": holds, "type": t, "usage": usage.format(name=name), "seen": seen}
    return None


# ---------------------------------------------------------------------------------- a closure's return
def _closure_none(d, message, look: Seen | None, where: Context, text, error):
    if not _FLOAT_NONE.search(message) or not where.called(r"[/\\]optim[/\\]"):
        return None
    source, _lineno, line, live = code_at(look, where, text)
    step = re.search(r"([\w.]+)\.step\(\s*(?:closure\s*=\s*)?([A-Za-z_]\w*)\s*\)", line)
    if not step:
        return None
    name = step[2]
    if live:
        func = value_of(name, look.frame)
        if not callable(func):
            return None
        try:
            tree = ast.parse(inspect.getsource(func).strip())
            returns = any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(tree))
        except (OSError, TypeError, SyntaxError):
            returns = True
        if returns:
            return None
        seen = f"Seen in the failing frame: {name} (passed to {step[1]}.step) has no `return` of a value."
    else:
        defined = _defined(source, name)
        if defined:
            return None
        seen = (
            f"Read from {code_origin(where, text)}: {name} has no `return` of a value."
            if defined is not None
            else f"{_PASTE}{step[1]}.step({name}) was given a closure, and the optimizer read None from its call."
        )
    return "closure_returns_none", {**d, "name": name, "optimizer": step[1], "seen": seen}


def _defined(source: str | None, name: str) -> bool | None:
    """Does the function ``name`` defined in ``source`` return a value (None when it is not found or not read)?"""
    try:
        tree = ast.parse(source or "")
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            nested = {
                id(n)
                for f in ast.walk(node)
                if f is not node and isinstance(f, ast.FunctionDef | ast.Lambda)
                for n in ast.walk(f)
            }
            return any(
                isinstance(n, ast.Return) and n.value is not None and id(n) not in nested for n in ast.walk(node)
            )
    return None
