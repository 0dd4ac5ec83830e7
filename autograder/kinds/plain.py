"""Plain Python errors whose cause is an autograd or training mistake, read from the failing frame's objects
(:mod:`autograder.explain.plain`): a None gradient used as a tensor (what ``torch.autograd.grad(...,
allow_unused=True)`` gives for an input the output does not use, the ``.grad`` of a parameter the forward never
used), a keyword argument a torch function does not take (a renamed one: the close match read from its real
signature), a ``KeyError`` on an optimizer's per-parameter state, a loss passed to ``optimizer.step``; and two
messages of torch's Python layer whose words name the problem: an optimizer state dict loaded into an optimizer
built over other parameters, a vjp's cotangents of another structure than the function's outputs. ``{seen}`` is what
the frame (or the paste) showed."""

from __future__ import annotations

from .kind import Kind, taught

_N2 = taught(2, "Optimizers take leaves only")
_N1 = taught(1, "Pitfalls")
_N12 = taught(12, "Pitfalls")
_N14 = taught(14, "parameters that get no gradient")
_SOFTMAX = "https://pytorch.org/docs/stable/generated/torch.nn.functional.softmax.html"

KINDS: dict[str, Kind] = {
    "unused_input_none_grad": Kind(
        "not built",
        "",
        _N14,
        "{name} is None, and the failing line uses it as a tensor ({use}). {seen}",
        "{fix}",
        types=("AttributeError", "TypeError"),
    ),
    "unexpected_keyword": Kind(
        "usage",
        # A name starts only where no name character precedes it: otherwise a long run of them
        # is tried from every position (quadratic; tests/compare/test_causes.py's hostile texts).
        r"(?<![\w.])(?P<function>[\w.]+)\(\) got an unexpected keyword argument '(?P<arg>\w+)'"
        r"|(?<!\w)(?P<function2>\w+)\(\) received an invalid combination of arguments - got \([^)]*?\b(?P<arg2>\w+)=",
        _N1,
        "{function}() has no parameter named {arg}. {seen}",
        "{fix}",
        types=("TypeError",),
    ),
    "optimizer_state_missing": Kind(
        "usage",
        "",
        _N2,
        "An optimizer's per-parameter state (optimizer.state[p]: Adam's 'exp_avg', SGD's 'momentum_buffer') is "
        "created at the first step() where p.grad is not None: a parameter the loss never used (its .grad None at "
        "every step) has an empty state, and reading {key} from it raises KeyError. {seen}",
        "{fix}",
        types=("KeyError",),
    ),
    "optimizer_step_closure": Kind(
        "usage",
        "",
        _N2,
        "optimizer.step(closure) takes a function that recomputes the loss (for L-BFGS), not the loss: it was given "
        "a tensor and called it. {seen}",
        "Call loss.backward() and then optimizer.step() with no argument; step() reads each parameter's .grad. "
        "(With L-BFGS: def closure(): optimizer.zero_grad(); loss = f(); loss.backward(); return loss, then "
        "optimizer.step(closure).)",
        types=("TypeError",),
    ),
    "optimizer_state_dict_groups": Kind(
        "usage",
        r"loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
        r"|loaded state dict has a different number of parameter groups",
        _N2,
        "PyTorch says: the loaded state dict's parameter groups do not match this optimizer's. An optimizer's "
        "state dict holds its parameters by position only, so it loads only into an optimizer built over the same "
        "parameters, in the same groups: this one was built over others (often a filter on requires_grad after "
        "layers were frozen or unfrozen since the save). {seen}",
        "Build the optimizer over the same parameters, in the same groups, as the one that was saved, load the state "
        "dict into it, and only then add what is new: optimizer.add_param_group(dict(params=new_params)).",
        types=("ValueError",),
    ),
    "vjp_cotangent_structure": Kind(
        "usage",
        r"Expected pytree structure of cotangents to be the same as pytree structure of outputs"
        r"(?:.*?primal output: (?P<primal>.+))?",
        _N12,
        "The function given to torch.func.vjp returns {outputs}, and the vjp function was called with cotangents of "
        "another structure: it needs one cotangent per output, in the same structure.",
        "If the extra outputs are only carried along (a loss and its logits, a value to log), return (output, aux) "
        "and call torch.func.vjp(f, x, has_aux=True), which gives (output, vjp_fn, aux); else pass a tuple of "
        "cotangents, one per output: vjp_fn((torch.ones_like(a), torch.zeros_like(b))).",
    ),
    "softmax_implicit_dim": Kind(
        "usage",
        r"Implicit dimension choice for (?P<function>\w+) has been deprecated",
        _SOFTMAX,
        "{function} was called without dim, so torch picked one: dim 0 for an input of 0, 1 or 3 dimensions, dim 1 "
        "otherwise. {seen}",
        "Say the dimension: F.{function}(x, dim=-1) normalises over the last dimension (the classes, for logits of "
        "shape [batch, ..., classes]).",
        types=(),
    ),
}
