"""Causes of the not-built and non-scalar messages that the traceback tells apart (explain_refine)."""

from __future__ import annotations

from .functions import FUNCTIONS
from .graph import PITFALLS_1
from .kind import Kind, taught

_SECOND = taught(12, "create_graph=True")
KINDS: dict[str, Kind] = {
    "second_derivative_no_create_graph": Kind(
        "not built",
        "",
        _SECOND,
        "You differentiate a gradient a second time{which}, and the "
        "first torch.autograd.grad (or backward) ran without create_graph=True: its result is a "
        "constant for autograd, with no grad_fn.{penalty}",
        "Pass create_graph=True to the first torch.autograd.grad (a gradient penalty, a "
        "Hessian-vector product): (g,) = torch.autograd.grad(loss, x, create_graph=True).",
    ),
    "second_derivative_cut": Kind(
        "not built",
        "",
        _SECOND,
        "Your code passes create_graph=True, yet the gradient you differentiate again (element "
        "{index} of the outputs) has no grad_fn: this line takes it out of the graph: {cut}",
        "Differentiate the gradient itself: drop the .detach() (or .item(), .data, no_grad) on the "
        "way to the second torch.autograd.grad; detach only what you return or log.",
    ),
    "second_derivative_constant": Kind(
        "not built",
        "",
        _SECOND,
        "Your code passes create_graph=True, yet the gradient you differentiate again (element "
        "{index} of the outputs) has no grad_fn. Either it does not depend on the inputs (a "
        "function linear in them, e.g. (3 * x).sum(), has gradient 3 everywhere: its derivative "
        "is zero), or something on the way took it out of the graph (.detach(), .data, no_grad).",
        "Print g.requires_grad right after the first torch.autograd.grad: True there means a "
        "later line cut it. False means the first gradient is constant, and the second derivative "
        "is 0: write torch.zeros_like(x) for it, or compute it with torch.func.hessian(f)(x), which "
        "returns the zeros (autograd.grad(..., materialize_grads=True) raises the same error here).",
    ),
    "function_backward_no_grad": Kind(
        "not built",
        "",
        (FUNCTIONS, "Double backward"),
        "The error comes from inside the backward of your autograd.Function: backward runs with "
        "grad mode off (unless the outer call passed create_graph=True), so what it computes "
        "records no graph, and differentiating it (torch.autograd.grad, backward) finds none.",
        "Wrap the part of backward that you differentiate in `with torch.enable_grad():` (and "
        "detach().requires_grad_() the saved inputs you differentiate with respect to), or write "
        "the gradient by hand.",
    ),
    "grad_outputs_missing": Kind(
        "usage",
        "",
        PITFALLS_1,
        "torch.autograd.grad(outputs, inputs) was called on outputs with more than one element: "
        "without grad_outputs it starts from d(outputs)/d(outputs) = 1, which exists only for a "
        "single number.",
        "Reduce first (torch.autograd.grad(out.sum(), x)), or pass the starting gradient: "
        "torch.autograd.grad(out, x, grad_outputs=torch.ones_like(out)); for a full Jacobian use "
        "torch.func.jacrev.",
    ),
}
