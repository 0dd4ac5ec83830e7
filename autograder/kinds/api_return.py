"""What a training API returns, misused (:mod:`autograder.explain.api_return`): a name bound to what
``loss.backward()``, ``optimizer.step()`` or ``zero_grad()`` returned (None), to a generator of ``parameters()``, a
``state_dict()``, an ``.item()`` number; ``parameters()`` unpacked as (name, tensor) pairs; a method passed or used
without its call (``Adam(model.parameters, ...)``); an attribute called like a method (``ctx.saved_tensors()``); an
L-BFGS closure with no ``return``. ``{seen}`` is what the frame (or the paste) showed."""

from __future__ import annotations

from .kind import Kind, taught

_N1 = taught(1, "Pitfalls")
_N2 = taught(2, "Optimizers take leaves only")
_N9 = taught(9, "Pitfalls")
__all__ = ["KINDS", "RETURNS", "ATTRIBUTES"]

_CLOSURE = "https://pytorch.org/docs/stable/optim.html#optimizer-step-closure"

KINDS: dict[str, Kind] = {
    "api_returned_none": Kind(
        "usage",
        "",
        _N1,
        "{name} is None, and the failing line uses it ({use}): {returns}. {seen}",
        "{fix}",
        types=("AttributeError", "TypeError"),
    ),
    "api_returned_value": Kind(
        "usage",
        "",
        _N1,
        "{name} is not what the failing line takes it for ({use}): {returns}. {seen}",
        "{fix}",
        types=("AttributeError", "TypeError"),
    ),
    "iterated_items_unpacked": Kind(
        "usage",
        "",
        _N2,
        "`{line}` unpacks each item of {api} into {n} names, but it yields {items}.{seen}",
        "{fix}",
        types=("ValueError", "TypeError"),
    ),
    "method_not_called": Kind(
        "usage",
        "",
        _N2,
        "{name} is the method itself, not what it returns: its call's parentheses are missing. {seen}",
        "{fix}",
        types=("TypeError", "AttributeError"),
    ),
    "attribute_called": Kind(
        "usage",
        "",
        _N1,
        "{name} is an attribute that holds {holds}, not a method: {name}() calls that {type}. {seen}",
        "Read it without parentheses: {usage}.",
        types=("TypeError",),
    ),
    "saved_tensors_called": Kind(
        "usage",
        "",
        _N9,
        "In a custom Function's backward, {name} is an attribute that holds {holds}, not a method: {name}() "
        "calls that {type}. {seen}",
        "Read it without parentheses: {usage}.",
        types=("TypeError",),
    ),
    "item_of_many": Kind(
        "usage",
        r"a Tensor with (?P<n>\d+) elements cannot be converted to Scalar"
        r"|only one element tensors can be converted to Python scalars",
        _N1,
        "{call} gives one Python number, so it needs a tensor of one element{many}. {seen}",
        "{fix}",
        types=("RuntimeError", "ValueError"),
    ),
    "backward_positional_flag": Kind(
        "usage",
        "",
        _N1,
        "`{call}` passes {arg} as backward()'s first positional parameter, which is gradient (the tensor the backward "
        "pass starts from, one per output), not retain_graph or create_graph: a {type} is not a tensor. {seen}",
        "{fix}",
        types=("TypeError",),
    ),
    "closure_returns_none": Kind(
        "usage",
        "",
        _CLOSURE,
        "{optimizer}.step({name}) calls the closure and reads the loss it returns (L-BFGS calls float(closure())); "
        "{name} returns None. {seen}",
        "End {name} with `return loss` (the tensor it computed and backwarded): def {name}(): "
        "optimizer.zero_grad(); loss = ...; loss.backward(); return loss.",
        types=("TypeError",),
    ),
}

# method name -> (the type names it returns, what it returns, the fix)
RETURNS = {
    "backward": (
        ("NoneType",),
        "Tensor.backward() returns None: it adds the gradients into the .grad of each leaf",
        "Call {recv}.backward() on its own line and read the gradients from the leaves (w.grad); to get them "
        "returned instead, g, = torch.autograd.grad({recv}, [w]).",
    ),
    "step": (
        ("NoneType",),
        "step() returns None (optimizer.step(), scheduler.step(), scaler.step(optimizer)): it updates in place",
        "Call {recv}.step() on its own line and keep using the values you had (the loss you computed before "
        "backward()).",
    ),
    "zero_grad": (("NoneType",), "zero_grad() returns None: it resets the .grad of the parameters", "{own_line}"),
    "update": (("NoneType",), "update() returns None (GradScaler.update, dict.update): it acts in place", "{own_line}"),
    "unscale_": (("NoneType",), "GradScaler.unscale_() returns None: it unscales the .grad in place", "{own_line}"),
    "append": (("NoneType",), "list.append() returns None: it adds to the list in place", "{own_line}"),
    "parameters": (
        ("generator",),
        "Module.parameters() returns a generator of the parameter tensors alone (no names): it can be iterated "
        "once, and has no len() and no [i]",
        "{generator_fix}",
    ),
    "named_parameters": (
        ("generator", "tuple"),
        "Module.named_parameters() returns a generator of (name, tensor) pairs",
        "{generator_fix}",
    ),
    "buffers": (("generator",), "Module.buffers() returns a generator of tensors", "{generator_fix}"),
    "children": (("generator",), "Module.children() returns a generator of modules", "{generator_fix}"),
    "modules": (("generator",), "Module.modules() returns a generator of modules", "{generator_fix}"),
    "state_dict": (
        ("OrderedDict", "dict", "collections.OrderedDict", "str"),
        "state_dict() returns a dict from names to tensors: iterating it gives the names (strings) alone, and its "
        "entries are read with ['name'], not as attributes",
        "Iterate its items: for name, t in {recv}.state_dict().items(); read one entry as {recv}.state_dict()['name'].",
    ),
    "load_state_dict": (
        ("_IncompatibleKeys", "NoneType"),
        "load_state_dict() loads in place and returns the missing and unexpected keys (a Module's) or None (an "
        "optimizer's), not the model",
        "Call {recv}.load_state_dict(...) on its own line and keep using {recv}.",
    ),
    "item": (
        ("float", "int", "bool"),
        "Tensor.item() returns a Python number, cut from the graph (no backward, no .grad, no .shape)",
        "Keep the tensor for the computation and the backward; call .item() only to log or print it.",
    ),
    "tolist": (
        ("list", "float", "int"),
        "Tensor.tolist() returns Python numbers in lists, cut from the graph",
        "Keep the tensor; call .tolist() only to log or print it.",
    ),
    "numpy": (
        ("ndarray", "numpy.ndarray"),
        "Tensor.numpy() returns a NumPy array, outside autograd",
        "Keep the tensor for anything autograd must differentiate; convert only to log or plot.",
    ),
    "register_hook": (
        ("RemovableHandle",),
        "register_hook() returns a handle to remove the hook, not a tensor",
        "Keep the handle only to call .remove() on it; the hook's work happens during backward.",
    ),
    "register_forward_hook": (
        ("RemovableHandle",),
        "register_forward_hook() returns a handle to remove the hook",
        "Keep the handle only to call .remove(); store what the hook computes in a list or dict.",
    ),
    "register_full_backward_hook": (
        ("RemovableHandle",),
        "register_full_backward_hook() returns a handle",
        "Keep the handle only to call .remove(); store what the hook computes elsewhere.",
    ),
}

# attributes that hold a value, not a method: name -> what it holds, the type names a call of it reports
ATTRIBUTES = {
    "saved_tensors": (
        "a tuple of the tensors save_for_backward saved",
        ("tuple",),
        "x, = {name} (one name per saved tensor)",
    ),
    "needs_input_grad": ("a tuple of booleans, one per input of forward", ("tuple",), "{name}[0]"),
    "shape": ("a torch.Size", ("Size", "torch.Size"), "{name} (or the method: .size())"),
    "grad": ("the gradient tensor (or None)", ("Tensor", "NoneType", "Parameter"), "{name}"),
    "requires_grad": ("a bool", ("bool",), "{name} (to set it, the method requires_grad_())"),
    "is_leaf": ("a bool", ("bool",), "{name}"),
    "training": ("a bool", ("bool",), "{name} (to switch it, .train() or .eval())"),
    "param_groups": ("a list of dicts, one per parameter group", ("list",), "{name}[0]['lr']"),
    "data": ("a tensor", ("Tensor", "Parameter"), "{name}"),
    "weight": ("a Parameter (a tensor)", ("Parameter", "Tensor"), "{name}"),
    "bias": ("a Parameter (a tensor)", ("Parameter", "Tensor", "NoneType"), "{name}"),
    "dtype": ("a torch.dtype", ("dtype", "torch.dtype"), "{name}"),
    "T": ("a tensor (the transpose)", ("Tensor",), "{name}"),
}
