"""Kinds of messages raised or warned by torch's Python layer (not its C++ core) and a few C++ warnings of the same
chapters, and the catalogue of that layer (``python_layer.tsv``: every ``raise`` and ``warnings.warn`` of the
modules the chapters call, read from the installed torch by ``tests/scripts/python_layer_catalogue.py``, each with
the kind ``explain`` names or the reason it names none; ``python_layer_coverage.tsv``: how many of each module)."""

from __future__ import annotations

import csv
from pathlib import Path

from .kind import Kind, taught

_N1 = taught(1, "training step")
_N6 = taught(6, "detach()")
_N7 = taught(7, "What a graph saves")
_N8 = taught(8, "Pitfalls")
_N9 = taught(9, "gradcheck")
_N9_CTX = taught(9, "What ctx holds")
_N11 = taught(11, "before clipping")
_N12 = taught(12, "Pitfalls")
_N14 = taught(14, "Pitfalls")

KINDS: dict[str, Kind] = {
    "clip_grad_nonfinite": Kind(
        "usage",
        r"for gradients from `parameters` is non-finite, so it cannot be clipped",
        _N11,
        "clip_grad_norm_(..., error_if_nonfinite=True) found the total norm of the gradients inf or NaN: a "
        "gradient overflowed or the loss was already inf or NaN (a log of 0, a sqrt at 0, a division by 0, "
        "float16 without a GradScaler).{seen}",
        "{pick}Find where it became non-finite (torch.autograd.set_detect_anomaly(True), or check "
        "loss.isfinite() and each p.grad.isfinite().all()) and fix that operation (clamp before log or sqrt, "
        "add an eps). Under a GradScaler call scaler.unscale_(opt) before clipping and keep "
        "error_if_nonfinite=False: scaler.step then skips the step with inf gradients.",
    ),
    "loss_broadcast": Kind(
        "usage",
        r"Using a target size \((?P<target>.*?)\) that is different to the input size \((?P<input>.*?)\)",
        _N1,
        "The loss compares a prediction of size {input} with a target of size {target}; the two broadcast to a "
        "larger shape (a [N, 1] prediction and an [N] target give [N, N]: every prediction against every "
        "target), so the loss and its gradients are wrong, silently.",
        "Give both the same shape before the loss: loss_fn(output.squeeze(-1), target) or "
        "loss_fn(output, target.view_as(output)).",
    ),
    "checkpoint_unexpected_kwargs": Kind(
        "usage",
        r"Unexpected keyword arguments: (?P<names>[\w, ]+)|got an unexpected keyword argument '(?P<name>\w+)'",
        _N8,
        "torch.utils.checkpoint.checkpoint(fn, *args, **kwargs) got a keyword argument it does not know: the "
        "reentrant variant takes none for fn, the non-reentrant one passes them to fn, which has no such "
        "parameter; or a checkpoint option is misspelled.",
        "Pass fn's arguments positionally, or close over them: checkpoint(lambda t: block(t, mask=m), x, "
        "use_reentrant=False); check the spelling of checkpoint's own options (use_reentrant, "
        "preserve_rng_state, context_fn, determinism_check, debug).",
        types=("ValueError", "TypeError"),
        where=r"utils[/\\]checkpoint\.py",
    ),
    "checkpoint_unpacked_twice": Kind(
        "usage",
        r"Unpack is being triggered for a tensor that was already unpacked once",
        _N8,
        "Inside a non-reentrant checkpoint each saved tensor is recomputed for one unpack only, and a saved "
        "tensor was unpacked a second time: a custom Function's backward reads ctx.saved_tensors twice, or two "
        "backward calls that need the same saved tensor overlap.",
        "Read ctx.saved_tensors once at the top of backward (a, b = ctx.saved_tensors) and use those names; "
        "run one backward through a checkpointed block at a time.",
    ),
    "gradcheck_nondeterministic": Kind(
        "usage",
        r"Backward is not reentrant, i\.e\., running backward with same input and grad_output multiple times "
        r"gives different values",
        _N9,
        "gradcheck ran your backward twice on the same input and grad_output and got different values: the "
        "backward reads state that changes between calls (a counter, a global, randomness, an attribute it "
        "sets on ctx) or uses a nondeterministic op (index_add_, scatter_add_ on a GPU).",
        "Make backward a function of grad_output and what forward saved only; for an op that is "
        "nondeterministic by nature pass nondet_tol= to gradcheck.",
    ),
    "vmap_output_not_tensor": Kind(
        "usage",
        r"must only return Tensors, got type (?P<type><class '[^']*'>|\S+)",
        _N12,
        "The function under vmap returned {type} among its outputs: vmap stacks each output over the batch, "
        "so every output must be a tensor.",
        "Return tensors only (torch.as_tensor(n) for a number), or mark an output that is the same for every "
        "sample with out_dims=None: vmap(f, out_dims=(0, None)).",
        types=("ValueError",),
    ),
    "functional_call_not_dict": Kind(
        "usage",
        r"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got (?P<type>\S+)",
        _N12,
        "torch.func.functional_call(model, params, args) takes a dict from parameter names to tensors; it got "
        "{type} (model.parameters() is a generator of tensors without their names).",
        "Pass a dict: functional_call(model, dict(model.named_parameters()), (x,)) (with buffers: "
        "{{**dict(model.named_parameters()), **dict(model.named_buffers())}}).",
        types=("ValueError",),
    ),
    "process_group_env": Kind(
        "usage",
        r"environment variable (?P<var>\w+) expected, but not set",
        _N14,
        "init_process_group() was called without rank and world_size, so it read them from the environment "
        "(the env:// rendezvous), which torchrun sets: {var} is not set. The script was started with python, "
        "not torchrun, or this is a notebook's own process.",
        "Start it with torchrun --nproc_per_node=N script.py; or pass them: init_process_group('gloo', "
        "rank=r, world_size=n, init_method='tcp://127.0.0.1:29500'); in a notebook, "
        "autograder.ranks.run_ranks(fn, n) starts the processes and joins them.",
        types=("ValueError",),
    ),
    "volatile_removed": Kind(
        "usage",
        r"volatile was removed",
        _N6,
        "Variable(..., volatile=True) is from PyTorch 0.3: volatile has no effect any more, so the computation "
        "is recorded in the graph as any other.",
        "Compute under `with torch.no_grad():` (or torch.inference_mode()); Variable is not needed, tensors "
        "are variables.",
    ),
    "typed_storage_deprecated": Kind(
        "usage",
        r"TypedStorage is deprecated",
        _N7,
        "tensor.storage() returns a TypedStorage, which is deprecated; the measurements the course makes "
        "(bytes, data pointers) read the untyped storage.",
        "Use tensor.untyped_storage() (its nbytes(), data_ptr()).",
    ),
    "saved_variables_deprecated": Kind(
        "usage",
        r"'saved_variables' is deprecated; use 'saved_tensors'",
        _N9_CTX,
        "A custom Function's backward reads ctx.saved_variables, the old name of ctx.saved_tensors.",
        "Write ctx.saved_tensors (a, b = ctx.saved_tensors).",
    ),
    "scalar_of_requires_grad": Kind(
        "usage",
        r"Converting a tensor with requires_grad=True to a scalar",
        _N6,
        "A tensor that requires grad was made a Python number (float(t), int(t)): the number is outside the "
        "graph, so whatever is computed from it gets no gradient. Harmless for logging; wrong inside a loss.",
        "For logging, convert a detached tensor: float(t.detach()) or t.item(); inside the loss keep the "
        "tensor (no float(), no math.* on it: use torch.* ops).",
    ),
    "optimizer_duplicate_params": Kind(
        "usage",
        r"optimizer contains a parameter group with duplicate parameters",
        taught(2, "Optimizers take leaves only"),
        "A parameter group holds the same tensor more than once (a list built from overlapping parts: "
        "model.parameters() plus a submodule's parameters(), or a tensor listed twice): step() updates it once per "
        "entry, so it moves that many times as far, its momentum or Adam state applied again.{seen}",
        "List each parameter once: torch.optim.SGD(model.parameters(), ...); for a part with its own settings, give "
        "it its own group and leave it out of the other: [{{'params': [p for n, p in model.named_parameters() if "
        "not n.startswith('head.')]}}, {{'params': model.head.parameters(), 'lr': ...}}].",
        types=(),
    ),
    "allreduce_no_autograd": Kind(
        "usage",
        r"an autograd kernel was not registered to the Autograd key",
        _N14,
        "A collective of torch.distributed (dist.all_reduce, ...) ran on a tensor of the graph: these "
        "collectives have no backward, so autograd passes the gradient through them as if they were the "
        "identity, which is silently wrong (the gradient of an all-reduced sum needs an all-reduce too).",
        "Use the differentiable collectives: torch.distributed.nn.functional.all_reduce(t) (it returns a new "
        "tensor); all-reduce only detached values (metrics) under torch.no_grad(); DDP already all-reduces "
        "the gradients.",
    ),
    "ddp_grad_strides": Kind(
        "usage",
        r"Grad strides do not match bucket view strides",
        _N14,
        "A parameter's gradient has another memory layout (strides) than DDP's bucket expected: the "
        "parameter's layout changed after DDP was built (model.to(memory_format=torch.channels_last) after "
        "wrapping, or .data replaced). Results stay right; each step copies the gradient.",
        "Convert the model first (to(memory_format=...), .to(device)), then wrap it in DistributedDataParallel.",
    ),
    "complex_loss": Kind(
        "usage",
        r"only for real scalar outputs but got (?P<dtype>torch\.complex\w*)",
        taught(1, "Pitfalls"),
        "The loss is complex ({dtype}): backward() without a gradient needs a real scalar, since a complex "
        "number is not something to minimise. loss.mean() stays complex (the same error), and "
        "backward(gradient=torch.ones_like(loss)) silently differentiates the real part only.",
        "Make the loss the real number you mean to minimise: loss = z.abs().pow(2).mean() (or z.real, "
        "z.abs()), then loss.backward().",
    ),
    # an unknown message, its family guessed from the part of torch that raised it (autograder.explain.guess); its
    # lesson is the guessed chapter's
    "family_guess": Kind(
        "unknown",
        "",
        taught(0, "Contents"),
        "A guess, from where torch raised it ({module}): this message is not one the explainer knows; it comes "
        "from {what}. PyTorch's own words name the problem: \u201c{said}\u201d.",
        "Where to look: {look}. Read PyTorch's message for the argument or the call it names.",
        types=(),
    ),
}

CATALOGUE_PATH = Path(__file__).with_name("python_layer.tsv")
COVERAGE_PATH = Path(__file__).with_name("python_layer_coverage.tsv")


def _rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def catalogue() -> list[dict]:
    """The rows of ``python_layer.tsv``: ``module`` (a file of the installed torch), ``line``, ``statement``
    (``raise`` or ``warn``), ``type`` (the exception or warning class), ``fragment`` (the longest literal part of
    the message), ``message`` (the message with each computed part written ``X``), ``kind`` (the kind ``explain``
    names, "-" for none) and ``reason`` (why none)."""
    return _rows(CATALOGUE_PATH)


def coverage() -> list[dict]:
    """The rows of ``python_layer_coverage.tsv``: per module, ``statements``, ``with_kind``, ``without_kind``."""
    return _rows(COVERAGE_PATH)
