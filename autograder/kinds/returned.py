"""Mistakes about what torch returns and accepts, read from the failing frame's objects: a tuple used as a tensor
(what ``torch.autograd.grad`` returns, a hook's ``input``/``grad_input``/``grad_output``), a computed tensor assigned
over a module's Parameter, an optimizer handed an empty (often used-up) iterable, a learning-rate scheduler made
with ``last_epoch >= 0`` on an optimizer no scheduler ever touched; and the graph cut by a call that made a tensor
with no ``grad_fn`` from tensors that had one (``torch.tensor(list_of_losses)``, ``argmax``, a comparison), where the
fix is never to set ``requires_grad`` on the result. ``{seen}`` is what the frame (or the paste) showed."""

from __future__ import annotations

from .kind import Kind, taught

_N1 = taught(1, "Pitfalls")
_N2 = taught(2, "Optimizers take leaves only")
_N2_REQ = taught(2, "requires_grad")
_N6 = taught(6, "one tensor cut")
_N10 = taught(10, "Module hooks")
_N12 = taught(12, "gradient penalty")
_SCHEDULERS = "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"

KINDS: dict[str, Kind] = {
    "grad_returns_tuple": Kind(
        "usage",
        "",
        _N12,
        "{name} is what torch.autograd.grad returned: a tuple with one gradient per tensor of its inputs argument "
        "(a tuple even for a single input), and the failing line uses it as a tensor ({use}). {seen}",
        "Unpack it: (g,) = torch.autograd.grad(out, x, ...) or g = torch.autograd.grad(out, x, ...)[0]; for "
        "several inputs gw, gb = torch.autograd.grad(loss, [w, b]).",
        types=("AttributeError", "TypeError"),
    ),
    "hook_args_tuple": Kind(
        "usage",
        "",
        _N10,
        "{name} is an argument of the hook {hook}, and PyTorch passes it as a tuple: a forward hook's input (the "
        "positional arguments of forward, (x,)), a backward hook's grad_input and grad_output (one gradient per "
        "input or output of the module); the failing line uses it as a tensor ({use}). {seen}",
        "Take the tensor out: {name}[0] (e.g. {name}[0].shape); in a backward hook an entry can be None (an input "
        "that does not require grad): check it first. A hook that returns a replacement returns a tuple of the "
        "same length: return (grad_input[0] * 0.5,).",
        types=("AttributeError", "TypeError"),
    ),
    "tuple_as_tensor": Kind(
        "usage",
        "",
        _N1,
        "{name} is a tuple, and the failing line uses it as a tensor ({use}). {seen}",
        "{fix}",
        types=("AttributeError", "TypeError"),
    ),
    "backward_on_none": Kind(
        "not built",
        "",
        _N1,
        "{name} is None, not a tensor, so it has no backward(). {seen}",
        "{fix}",
        types=("AttributeError",),
    ),
    "tensor_hook_returned_type": Kind(
        "usage",
        r"expected Variable(?: or None)?(?: \(got \w+\))?, but hook returned '(?P<type>[\w.]+)'",
        _N10,
        "A tensor hook (registered with t.register_hook) returned a {type}. Autograd uses what a tensor hook returns "
        "as the new gradient, so it must return None (keep the gradient) or one tensor of the gradient's shape.",
        "Return None and store what you compute elsewhere (norms.append(g.norm().item())), or return one tensor "
        "(return g * 0.5): not a number, not a tuple.",
    ),
    "parameter_assigned_tensor": Kind(
        "usage",
        r"cannot assign '(?P<type>[\w.]+)'(?: object)? (?:as|to) parameter '(?P<attr>\w+)'",
        _N2,
        "A plain tensor ({type}) was assigned to {attr}, which the module registered as an nn.Parameter: the "
        "module refuses to replace its trainable leaf with a tensor that is not a Parameter. {seen}",
        "{fix}",
        types=("TypeError",),
    ),
    "optimizer_empty_params": Kind(
        "usage",
        r"optimizer got an empty parameter list",
        _N2,
        "The optimizer was given an iterable with no tensor in it. {seen}",
        "{fix}",
        types=("ValueError",),
    ),
    "scheduler_initial_lr": Kind(
        "usage",
        r"param 'initial_lr' is not specified in param_groups",
        _SCHEDULERS,
        "A learning-rate scheduler was made with last_epoch >= 0, which means 'resuming a run': it then reads "
        "'initial_lr' from the optimizer's param groups, a key only a scheduler made earlier on that optimizer "
        "(or a loaded optimizer state_dict of such a run) puts there. {seen}",
        "{fix}",
        types=("KeyError",),
    ),
    "optimizer_nonleaf_seen": Kind(
        "usage",
        "",
        _N2,
        "A tensor given to the optimizer is not a leaf, so backward() never fills its .grad and the optimizer could "
        "not update it. {seen}",
        "{fix} Not retain_grad(): the optimizer would then step a copy, and the leaf it came from would not train.",
        types=("ValueError",),
    ),
    "graph_cut": Kind(
        "not built",
        "",
        _N6,
        "The tensor you called backward() on has no graph because a call made a tensor with no grad_fn from "
        "tensors that had one: {cut}. {seen}",
        "{fix} Setting requires_grad on the result (torch.tensor(..., requires_grad=True), .requires_grad_()) "
        "is no fix: it makes a new leaf, and the parameters before the cut still get no gradient.",
    ),
    "nondifferentiable_requires_grad": Kind(
        "usage",
        "",
        _N2_REQ,
        "{name} was made by `{made}`: {what}. That operation has no gradient (a small change of the model's "
        "output leaves it the same or makes it jump), so no dtype and no requires_grad flag lets a loss built "
        "from it train the model: requires_grad on it would only make a new leaf. {seen}",
        "Build the loss from the model's float output with a differentiable function: F.cross_entropy(logits, "
        "labels) for class labels (F.binary_cross_entropy_with_logits for 0/1 targets, a softmax for a soft "
        "count); keep the argmax/comparison result for accuracy, under torch.no_grad().",
        types=("RuntimeError",),
    ),
}
