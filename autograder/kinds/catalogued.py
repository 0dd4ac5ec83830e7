"""The kinds found by reading PyTorch's own messages (``catalogue.tsv``, see :mod:`autograder.explain.catalogue`),
chapters 1-14, that no chapter module held yet. Each fix is worded as something to try: none was run on the
learner's objects."""

from __future__ import annotations

import csv
from pathlib import Path

from .kind import Kind, taught

# name: (family, chapter, a word of the lesson's heading, cause, fix, exception types)
_DEFS = {
    "integer_requires_grad": (
        "usage",
        2,
        "requires_grad",
        "A tensor of integer (or bool) dtype was asked to require grad. Gradients are defined only "
        "for floating point (and complex) tensors: an integer cannot change by a small amount.",
        "Check where it came from. If it holds values you mean to learn, create it as a float: torch.tensor([1., 2.], "
        "requires_grad=True). If it was computed from the model's output by argmax, max(dim)'s indices, a "
        "comparison or a cast to int (predicted labels, a count of errors), no dtype makes it differentiable: "
        "build the loss from the float output (F.cross_entropy(logits, labels)); indices and labels need no "
        "gradient.",
        ("RuntimeError",),
    ),
    "optimizer_nonleaf": (
        "usage",
        2,
        "Optimizers take leaves only",
        "A tensor given to the optimizer is not a leaf: it is the result of an operation (w * 2, "
        "w.to(device), w.double() after requires_grad=True), so backward() never fills its .grad and "
        "the optimizer could not update it.",
        "Try giving the optimizer the leaves themselves (model.parameters(), or a tensor created with"
        " requires_grad=True on its final device and dtype: torch.randn(3, device=d, "
        "requires_grad=True)).",
        ("ValueError",),
    ),
    "requires_grad_nonleaf": (
        "usage",
        2,
        "requires_grad",
        "requires_grad was changed on a non-leaf (the result of an operation): its requires_grad "
        "follows from its inputs, so it cannot be set.",
        "To cut it from the graph, try y = y.detach(); to freeze parameters, set requires_grad on the"
        " parameters (the leaves) before the forward.",
        ("RuntimeError",),
    ),
    "deepcopy_nonleaf": (
        "usage",
        2,
        "Leaf or not",
        "copy.deepcopy met a non-leaf tensor (one with a grad_fn): only leaves can be deep-copied. A "
        "module often holds one when __init__ computed a tensor from a parameter (self.c = self.w * "
        "2) or after weight_norm.",
        "Try computing such tensors in forward() instead of __init__, or storing them detached "
        "(self.c = (self.w * 2).detach()) if no gradient should flow through them.",
        ("RuntimeError",),
    ),
    "retain_grad_no_grad": (
        "usage",
        2,
        "retain_grad",
        "retain_grad() (or backward(inputs=...)) was asked of a tensor that does not require grad: no"
        " gradient reaches it.",
        "Check that the tensor is computed from something that requires grad, outside "
        "torch.no_grad(); retain_grad() only on tensors with requires_grad=True.",
        ("RuntimeError",),
    ),
    "out_requires_grad": (
        "usage",
        1,
        "Pitfalls",
        "An operation was given out=... while an argument requires grad: autograd cannot record an "
        "operation that writes into a given tensor.",
        "Try the out-of-place form (y = torch.sin(x)) while recording a graph, or do it under "
        "torch.no_grad() when no gradient is wanted.",
        ("RuntimeError",),
    ),
    "grad_output_shape": (
        "usage",
        1,
        "Pitfalls",
        "The starting gradient given to backward(gradient=...) or autograd.grad(grad_outputs=...) has"
        " another shape than the output it belongs to.",
        "Try a gradient of the output's own shape: out.backward(torch.ones_like(out)).",
        ("RuntimeError",),
    ),
    "grad_assign_shape": (
        "usage",
        4,
        ".grad",
        "A .grad was assigned a tensor of another size than the tensor it belongs to.",
        "Try assigning a gradient of the parameter's own shape (p.grad = torch.zeros_like(p)), or "
        "p.grad = None to reset it.",
        ("RuntimeError",),
    ),
    "detach_view_inplace": (
        "usage",
        6,
        "one tensor cut",
        "detach_() was called on a view (a slice, or a gradient that DDP keeps as a view of its "
        "bucket): a view cannot be cut from the graph in place.",
        "Try the out-of-place y = y.detach(); for gradients, optimizer.zero_grad(set_to_none=True).",
        ("RuntimeError",),
    ),
    "inference_requires_grad": (
        "changed",
        6,
        "no_grad, an",
        "A tensor created under torch.inference_mode() was asked to require grad outside it. "
        "Inference tensors carry no version counter, so autograd cannot record them.",
        "Try computing it under torch.no_grad() instead of inference_mode(), or make a normal tensor "
        "of it first: t = t.clone().requires_grad_().",
        ("RuntimeError",),
    ),
    "copy_construct": (
        "not built",
        6,
        "one tensor cut",
        "torch.tensor(t) was called on a tensor: it copies the values only, so the copy has no "
        "grad_fn and gradients will not flow back to t (the graph is cut here).",
        "For a copy in the graph try t.clone(); for a copy outside it, t.detach().clone() (and "
        ".requires_grad_() for a new leaf); torch.stack(list) to join tensors.",
        (),
    ),
    "checkpoint_recomputed_differently": (
        "usage",
        8,
        "Pitfalls",
        "A checkpointed block computed something different when it was recomputed during backward "
        "than in the forward (other shapes, or another number of saved tensors): the block depends on"
        " something that changed between the two runs (a counter, a Python random choice, a flag or a"
        " module's training mode).",
        "Make the block depend only on its inputs: try passing the varying value as an argument, "
        "keeping training/eval unchanged until backward has run; checkpoint(..., debug=True) names "
        "the differing operation.",
        ("RuntimeError",),
    ),
    "gradcheck_no_input_grad": (
        "usage",
        9,
        "gradcheck",
        "gradcheck was given inputs none of which require grad, so there is no derivative to check.",
        "Try inputs created with requires_grad=True in float64: torch.randn(3, dtype=torch.double, "
        "requires_grad=True).",
        ("ValueError",),
    ),
    "grad_input_no_grad": (
        "not built",
        12,
        "torch.autograd",
        "A tensor in autograd.grad's inputs does not require grad, so the outputs cannot depend on it through a graph.",
        "Try x.requires_grad_() before computing the outputs from x (and outside torch.no_grad()).",
        ("RuntimeError",),
    ),
    "hessian_not_scalar": (
        "usage",
        12,
        "torch.autograd",
        "torch.autograd.functional.hessian needs a function returning a single number; this one returned several.",
        "Try reducing the output (lambda x: f(x).sum()), or jacobian for a vector-valued function.",
        ("RuntimeError",),
    ),
    "forward_ad_no_level": (
        "usage",
        12,
        "Forward-mode",
        "make_dual was called outside a dual level: forward-mode AD needs `with "
        "torch.autograd.forward_ad.dual_level():` around it.",
        "Try wrapping make_dual and unpack_dual in `with fwAD.dual_level():`, or use torch.func.jvp.",
        ("RuntimeError",),
    ),
    "jvp_tangent_shape": (
        "usage",
        12,
        "Forward mode",
        "A tangent (forward gradient) has another size than the primal it belongs to.",
        "Try a tangent of the primal's shape: torch.func.jvp(f, (x,), (torch.ones_like(x),)).",
        ("RuntimeError",),
    ),
    "compile_double_backward": (
        "usage",
        13,
        "AOTAutograd",
        "A gradient of a compiled function was differentiated again (create_graph=True, a gradient "
        "penalty, a Hessian): AOTAutograd traces one backward and cannot differentiate it.",
        "Try computing the double backward in eager mode (without torch.compile for that function), "
        "or torch.func transforms.",
        ("RuntimeError",),
    ),
    "compile_requires_grad_output": (
        "usage",
        13,
        "fullgraph",
        "requires_grad_() was called inside a compiled region on an intermediate that is returned: "
        "the compiled graph drops that effect.",
        "Try calling requires_grad_() outside the compiled function, on its inputs or its result.",
        ("RuntimeError",),
    ),
    "ddp_device_ids_cpu": (
        "usage",
        14,
        "run_ranks",
        "device_ids (or output_device) was given to DistributedDataParallel for a model on the CPU: "
        "they name GPUs only.",
        "For a CPU model (gloo) try DDP(model) without device_ids; on GPUs, move the model first: "
        "DDP(model.to(rank), device_ids=[rank]).",
        ("ValueError",),
    ),
    "ddp_lazy_module": (
        "usage",
        14,
        "run_ranks",
        "A module with lazy (uninitialized) parameters (LazyLinear, ...) was wrapped in DDP before "
        "its first forward: DDP must know every parameter's size.",
        "Try running one forward pass on a dummy batch before wrapping it in DDP.",
        ("RuntimeError",),
    ),
}
KINDS: dict[str, Kind] = {
    name: Kind(family, "", taught(chapter, heading), cause, fix, types)
    for name, (family, chapter, heading, cause, fix, types) in _DEFS.items()
}
# Python's own message on None; explain_refine keeps this kind only where the failing line reads a .grad
KINDS["grad_is_none"] = Kind(
    "not built",
    r"unsupported operand type\(s\) for .*'NoneType'|'NoneType' object has no attribute",
    taught(2, "ends up"),
    "The failing line reads {what}, and it is None. {why}",
    "{try_this}",
    ("TypeError", "AttributeError"),
)
# grad_is_none where the learner's code reset the gradient since the last backward (explain.grad_none tells it apart):
# the graph may well have been built, so it must not be headed "never built".
KINDS["grad_reset"] = Kind(
    "usage",
    "",
    taught(4, "Resetting"),
    "The failing line reads {what}, and it is None. `{reset}` ran before this line with no backward() after "
    "it{checked}. zero_grad() sets .grad to None "
    "(set_to_none=True, the default since PyTorch 2.0): there is no gradient tensor to zero or read until the next "
    "backward().",
    "{try_this}",
    ("TypeError", "AttributeError"),
)
# grad_is_none where the tensor read is a non-leaf (explain.grad_none checks it): the graph was built, and a
# non-leaf gets no .grad unless retain_grad() is called, so it must not be headed "never built" either.
KINDS["grad_none_nonleaf"] = Kind(
    "usage",
    "",
    taught(2, "Which tensors"),
    "The failing line reads {what}, and it is None. {name} is not a leaf (checked on {name} itself: it has "
    "grad_fn={nonleaf}, so it is the result of an operation, e.g. torch.randn(..., requires_grad=True) * 0.01 or "
    "w.to(device)). The graph through it was built, but backward() fills .grad only for leaves, and for a non-leaf "
    "only if retain_grad() was called on it before backward().",
    "{try_this}",
    ("TypeError", "AttributeError"),
)
# What grad_is_none says when the tensor could not be looked at (a paste; an expression with a call): every cause.
GRAD_IS_NONE_CAUSES = (
    "A .grad stays None when one of these holds (check each): "
    "no backward() has run yet (or zero_grad(set_to_none=True) ran after it); the tensor is not a leaf (the "
    "result of an operation, including w.to(device) or w.double() after requires_grad=True) and retain_grad() "
    "was not called; it has requires_grad=False; or the loss does not depend on it (unused, or cut by detach(), "
    "no_grad, .item() or torch.tensor([...]) of its values). A hook's grad_input is None for an input that does "
    "not require grad."
)
GRAD_IS_NONE_TRY = (
    "Try printing t.is_leaf, t.requires_grad and loss.grad_fn before backward(); read .grad after backward() "
    "and before zero_grad(); call t.retain_grad() for an intermediate."
)

CATALOGUE_PATH = Path(__file__).with_name("catalogue.tsv")


def catalogue() -> list[dict]:
    """The rows of ``catalogue.tsv``: ``kind`` ("-": none the course explains), ``chapter``, ``where`` (the file of
    the installed torch 2.13 that holds ``fragment``), ``fragment``, ``pattern`` (a regex on the message's stable
    words), ``message`` (as torch 2.13 writes it)."""
    with CATALOGUE_PATH.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))
