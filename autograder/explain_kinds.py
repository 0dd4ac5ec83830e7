"""The kinds of autograd mistakes ``explain`` knows: one pattern on PyTorch's message each, the
lesson that teaches it, and the cause and fix it explains (data only; the matching is in ``explain``).

Each kind is keyed to a pattern on PyTorch's own message (``KINDS``); kinds by family:

=============  ====================================================================================
not built      ``not_built``: there is no graph to walk
consumed       ``consumed``: backward already freed what the graph saved
changed        ``modified_inplace``, ``view_inplace``, ``leaf_inplace``, ``inference_tensor``,
               ``inference_version``, ``custom_function_view_inplace``: a tensor the graph
               depends on was modified in place
               (inference tensors are here: they carry no version counter, so autograd cannot
               watch them; ``inference_tensor`` also covers a ``.grad`` that a backward() run
               inside inference_mode() made an inference tensor, then changed in place)
kept alive     ``create_graph_cycle`` (a warning): the graph cannot be freed
usage          ``nonleaf_grad``, ``checkpoint_use_reentrant``, ``checkpoint_no_grad_input`` (all
               warnings), ``checkpoint_reentrant_grad``, ``non_scalar_output``,
               ``custom_function_gradients``, ``custom_function_non_tensor_grad``,
               ``custom_function_grad_shape``, ``once_differentiable``, ``function_transform``:
               the graph is fine, an autograd call (or a custom Function) is used the wrong
               way (a reentrant checkpoint whose inputs do not require grad records no graph
               for the block, but the fix is in the call)
hooks (ch 10)  ``backward_hook_inplace``, ``grad_overlap_inplace``, ``pack_hook_inplace`` (changed);
               ``hook_no_grad_tensor`` (not built); ``hook_changed_grad``,
               ``post_accumulate_nonleaf``, ``full_backward_hook_no_input`` and
               ``nonfull_backward_hook`` (both warnings) (usage)
amp (ch 11)    ``autocast_dtype_mismatch``, ``scaler_call_order``, ``scaler_fp16_grads``,
               ``amp_device_unavailable`` (a warning) (usage)
func (ch 12)   ``vmap_item``, ``vmap_control_flow``, ``vmap_inplace``, ``backward_in_transform``,
               ``func_grad_not_scalar``, ``anomaly_nan`` (all usage): torch.func transforms and NaN
               gradients (a second derivative without create_graph is ``not_built``)
compile (13)   ``compile_builtin``, ``compile_item``, ``compile_data_dependent``,
               ``compile_retain_grad`` (usage): Dynamo's graph breaks, errors under fullgraph=True
DDP (ch 14)    ``ddp_ready_twice``, ``ddp_unused_parameters``, ``ddp_no_process_group`` (usage)
notebook       ``name_not_defined``: not autograd's, a cell ran before the cell that defines a name
unknown        ``unknown``: anything else
=============  ====================================================================================

NOTE [stable parts]: PyTorch rewords its messages (``SigmoidBackward0`` became ``Sigmoid``, the
"Hint:" changed, the checkpoint warning was reworded), so each pattern matches only words
that have stayed the same, and the details (shape, op, versions) are optional groups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Kind", "KINDS", "UNKNOWN", "MODIFIED_INPLACE", "modified_inplace_message"]


@dataclass(frozen=True)
class Kind:
    """One kind of mistake: its family (a key of explain's headlines), the pattern on PyTorch's
    message, where the course teaches it, and str.format templates of its cause and fix."""

    family: str
    pattern: str  # regex on the stable part of PyTorch's message, see NOTE [stable parts]
    lesson: tuple | str  # (notebook, a word of the heading to link to), see lessons.lesson; or a URL
    cause: str  # str.format templates over the details, see explain._values()
    fix: str


# PyTorch's message when a tensor saved for backward was changed in place after it was saved, e.g.
# "one of the variables needed for gradient computation has been modified by an inplace operation:
# [torch.FloatTensor [2, 3]], which is output 0 of SigmoidBackward0, is at version 1; expected
# version 0 instead." The one place that reads it (graph.trace, explain) and writes it
# (memory.SavedTensorMeter, which must raise it itself): the details are optional groups, see
# NOTE [stable parts]; ``type`` is e.g. "torch.FloatTensor" or "torch.cuda.FloatTensor".
MODIFIED_INPLACE = re.compile(
    r"needed for gradient computation has been modified by an inplace operation"
    r"(?:: \[(?P<type>[\w.]+) \[(?P<shape>[\d, ]*)\]\](?:, which is output (?P<output>\d+) "
    r"of (?P<op>\w+),)? is at version (?P<version>\d+); expected version (?P<expected>\d+))?"
)


def modified_inplace_message(tensor_type: str, shape, version: int, expected: int) -> str:
    """PyTorch's message for a saved tensor that was modified in place since it was saved, as
    autograd words it (it matches :data:`MODIFIED_INPLACE`, details included).

    Args:
        tensor_type: ``tensor.type()``, e.g. ``"torch.FloatTensor"``.
        shape: the tensor's shape (a ``torch.Size`` or a sequence of ints).
        version: the tensor's version counter now; expected: its version when it was saved.
    """
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{tensor_type} {list(shape)}] is at version {version}; expected version "
        f"{expected} instead."
    )


_CHANGED = "notebooks/05_inplace_version_counter.ipynb", "Pitfalls"
_CONSUMED = "notebooks/03_backward_consumes.ipynb", "Pitfalls"
_CHECKPOINT = "notebooks/08_checkpointing.ipynb", "Pitfalls"
_PITFALLS_1 = "notebooks/01_dynamic_graph.ipynb", "Pitfalls"
_GRAD_MODES = "notebooks/06_detach_no_grad.ipynb", "Pitfalls"
_FUNCTIONS = "notebooks/09_custom_functions.ipynb"
KINDS: dict[str, Kind] = {
    "not_built": Kind(
        "not built",
        r"element (?P<index>\d+) of tensors does not require grad and does not have a grad_fn",
        _PITFALLS_1,
        "The tensor you called backward() on (element {index} of the outputs) has "
        "requires_grad=False and grad_fn=None: no operation was recorded, so there is no graph "
        "to walk. Usually no input required grad, the forward ran under torch.no_grad() or "
        "inference_mode(), every parameter is frozen, or the value went through .item(), "
        ".detach() or argmax/comparison; or it is a gradient that autograd.grad computed without "
        "create_graph=True, differentiated a second time.",
        "Ask for gradients before the operations run (torch.tensor(..., requires_grad=True) or "
        "w.requires_grad_()), compute the loss outside torch.no_grad(), and keep it a tensor. "
        "Check with print(loss.grad_fn): it must not be None. For a second derivative (a "
        "gradient penalty, a Hessian-vector product) pass create_graph=True to the first "
        "torch.autograd.grad.",
    ),
    "consumed": Kind(
        "consumed",
        r"backward through the graph a second time",
        _CONSUMED,
        "backward() (or autograd.grad) already ran through this part of the graph and freed the "
        "tensors it had saved. Either the same loss is backwarded twice, or a tensor from an "
        "earlier iteration (an RNN hidden state, a running sum, a cached output) ties the new "
        "loss to a graph that was already consumed.",
        "Run the forward again before each backward; carry state across iterations as "
        "h = h.detach(); or add the losses and call backward() once. Only when two backward "
        "passes really need the same graph, pass retain_graph=True to the first one.",
    ),
    "modified_inplace": Kind(
        "changed",
        MODIFIED_INPLACE.pattern,
        _CHANGED,
        "Autograd saved {tensor} to compute gradients{saved_at}, and an in-place operation "
        "changed it afterwards{now_at}. The saved values are gone, so backward() refuses to use "
        "them.{hint}",
        "Find what changes {it} after it was saved and before backward(): y += 1, y.mul_(2), "
        "y[i] = ..., nn.ReLU(inplace=True), or optimizer.step(). Write it out of place "
        "(y = y + 1), or clone() first; run every backward of a forward before optimizer.step(). "
        "torch.autograd.set_detect_anomaly(True) names the forward line whose gradient failed.",
    ),
    "view_inplace": Kind(
        "changed",
        r"(?:Output (?P<output>\d+) of (?P<op>\w+) is a view|A view was created in "
        r"(?P<mode>no_grad) mode) and (?:(?P<base>its base or another view of its base has "
        r"been)|is being) modified inplace",
        _CHANGED,
        "{what} {why}",
        "Use the out-of-place version (a = a * 2 instead of a.mul_(2), a = a.clamp(...) instead "
        "of a.clamp_(...)), or clone() the view before changing it.{mode_fix}",
    ),
    "leaf_inplace": Kind(
        "changed",
        r"a (?P<view>view of a )?leaf Variable that requires grad (?:is being|has been) used in an "
        r"in-place operation",  # "has been": a custom Function's mark_dirty on a leaf
        _CHANGED,
        "You modified in place {what} that requires grad (a parameter, or a tensor created with "
        "requires_grad=True) while autograd was recording. Recording the change would turn the "
        "leaf into the result of an operation, so autograd forbids it.",
        "Update or initialise parameters inside `with torch.no_grad():` (w -= lr * w.grad), or "
        "use an optimizer; anywhere else compute a new tensor out of place (w2 = w + 1).",
    ),
    "inference_tensor": Kind(
        "changed",
        r"(?P<saved>Inference tensors cannot be saved for backward)|Inplace update to "
        r"inference tensor outside InferenceMode",
        _GRAD_MODES,
        "{what} Inference tensors carry no version counter, so autograd cannot check them.",
        "{fix}",
    ),
    "inference_version": Kind(
        "changed",
        r"Inference tensors do not track version counter",
        _GRAD_MODES,
        "You asked for the version counter (._version) of a tensor created under "
        "torch.inference_mode(). Inference tensors have none: that is what makes inference mode "
        "cheaper than no_grad, and why autograd refuses to record or save them (it could not "
        "notice an in-place change).",
        "Check first with t.is_inference(). For a tensor whose changes you want to follow, or "
        "that will take part in training, compute it under torch.no_grad() instead of "
        "torch.inference_mode(), or make a normal tensor of it outside inference mode: "
        "t = t.clone().",
    ),
    "create_graph_cycle": Kind(
        "kept alive",
        r"backward\(\) with create_graph=True will create a reference cycle",
        _CONSUMED,
        "backward(create_graph=True) stored in each parameter's .grad a gradient that has a "
        "graph of its own, and that graph refers back to the parameter: a reference cycle, which "
        "keeps the graph and its saved tensors alive (a memory leak) until the cycle is broken.",
        "Use grads = torch.autograd.grad(loss, params, create_graph=True), which returns the "
        "gradients instead of storing them in .grad; or set p.grad = None for every parameter "
        "after use (optimizer.zero_grad(set_to_none=True)).",
    ),
    "nonleaf_grad": Kind(
        "usage",
        r"\.grad attribute of a Tensor that is not a leaf Tensor is being accessed",
        ("notebooks/02_leaf_tensors.ipynb", "warning for a non-leaf"),
        "You read .grad of a non-leaf tensor (the result of an operation). backward() fills "
        ".grad only for leaves that require grad, so this .grad is None. A tensor moved or cast "
        "after requires_grad=True (w.to(device), w.double()) is such a non-leaf.",
        "Read .grad of the leaf itself (the parameter, or the tensor created with "
        "requires_grad=True), or call y.retain_grad() before backward() to keep this "
        "intermediate's gradient.",
    ),
    "checkpoint_use_reentrant": Kind(
        "usage",
        r"use_reentrant(?: parameter should be passed|=True or use_reentrant=False) explicitly",
        _CHECKPOINT,
        "torch.utils.checkpoint.checkpoint was called without use_reentrant. Its two variants "
        "behave differently (the reentrant one, still the default, records nothing for the "
        "block unless an input requires grad, and does not work with autograd.grad), so PyTorch "
        "asks you to choose.",
        "Pass it explicitly: checkpoint(block, x, use_reentrant=False).",
    ),
    "checkpoint_no_grad_input": Kind(
        "usage",
        r"None of the inputs have requires_grad=True\. Gradients will be None",
        _CHECKPOINT,
        "A reentrant checkpoint (use_reentrant=True, or not given) got no input that requires "
        "grad. It runs the block under no_grad and records one Node whose inputs are the "
        "block's tensor arguments, so nothing inside the block, not even its parameters, gets a "
        "gradient.",
        "Use checkpoint(block, x, use_reentrant=False), which records the parameters too; or do "
        "not checkpoint the first block, whose input is the raw data.",
    ),
    "checkpoint_reentrant_grad": Kind(
        "usage",
        r"use_reentrant=True, torch\.utils\.checkpoint is incompatible with \.grad\(\)",
        _CHECKPOINT,
        "A reentrant checkpoint (use_reentrant=True) recomputes its block during the backward "
        "pass by running a backward() of its own, which fills .grad of every leaf. It cannot "
        "serve torch.autograd.grad(...) or backward(inputs=...), which ask for the gradients of "
        "chosen tensors only and must leave .grad alone.",
        "Use checkpoint(block, x, use_reentrant=False), which works with autograd.grad and "
        "inputs=; or keep the reentrant one, call loss.backward() without inputs and read .grad.",
    ),
    "non_scalar_output": Kind(
        "usage",
        r"grad can be implicitly created only for (?:real )?scalar outputs",
        _PITFALLS_1,
        "backward() without an argument starts from dL/dL = 1, which exists only for a single "
        "number, and you called it on a tensor with more than one element (a per-sample loss, "
        "reduction='none', a batch of outputs).",
        "Reduce to a scalar first (loss = out.mean() or out.sum()), or pass the starting "
        "gradient yourself: out.backward(gradient=torch.ones_like(out)).",
    ),
    "custom_function_gradients": Kind(
        "usage",
        r"function (?P<function>\w+) returned an incorrect number of gradients "
        r"\(expected (?P<expected>\d+), got (?P<got>\d+)\)",
        (_FUNCTIONS, "What backward returns"),
        "The backward() of your autograd.Function {function} returned {got} gradient(s), but "
        "its forward() takes {expected} inputs (after ctx): backward must return one value per "
        "input.",
        "Return a tuple of {expected} values, in the order of forward's arguments, with None "
        "for inputs that need no gradient (numbers, flags): e.g. return grad_x, None.",
    ),
}
# Chapter 9: custom autograd Functions (one block, so that other chapters' kinds append apart).
KINDS.update(
    {
        "custom_function_view_inplace": Kind(
            "changed",
            # not when the Function is the one a full backward hook inserts (chapter 10's kind)
            r"(?<!BackwardHookFunction is a view and is being modified inplace\. )"
            r"(?<!BackwardHookFunctionBackward is a view and is being modified inplace\. )"
            r"This view was created inside a custom Function",
            (_FUNCTIONS, "mark_dirty"),
            "Output {output} of your autograd.Function {op} is a view of one of its inputs (forward "
            "returned an input as it is, or a view of it), and it was modified in place. Autograd "
            "cannot record that change without overriding your backward, so it refuses.",
            "If forward changes an input in place on purpose, call ctx.mark_dirty(x) in forward and "
            "return x. Otherwise return a new tensor from forward (x.clone(), or an out-of-place "
            "result), or clone() the Function's output before changing it.",
        ),
        "once_differentiable": Kind(
            "usage",
            r"trying to differentiate twice a function that was marked with @once_differentiable",
            (_FUNCTIONS, "Double backward"),
            "A backward pass with create_graph=True went through an autograd.Function whose backward "
            "is decorated with @once_differentiable. That backward runs without recording, so the "
            "gradient it returns has no graph (its grad_fn is an Error Node), and differentiating "
            "that gradient again (a second derivative, a gradient penalty, gradgradcheck) raises.",
            "Remove @once_differentiable and write backward with differentiable torch operations on "
            "the saved tensors and the incoming gradient (no .detach(), .numpy() or .item()); check "
            "it with torch.autograd.gradgradcheck in float64. Or do not ask for a second derivative.",
        ),
        "custom_function_non_tensor_grad": Kind(
            "usage",
            r"function (?P<function>\w+) returned a gradient different than None at position "
            r"(?P<position>\d+), but the corresponding forward input was not a Variable",
            (_FUNCTIONS, "What backward returns"),
            "The backward() of your autograd.Function {function} returned a gradient at position "
            "{position} (counting from 1), but forward's argument there (after ctx) is not a tensor: "
            "a number, a flag, None. Only tensor inputs can receive a gradient.",
            "Return None at position {position}, e.g. return grad_x, None for forward(ctx, x, scale).",
        ),
        "custom_function_grad_shape": Kind(
            "usage",
            r"Function (?P<function>\w+) returned an invalid gradient at index (?P<index>\d+) - got "
            r"\[(?P<got>[\d, ]*)\] but expected shape compatible with \[(?P<want>[\d, ]*)\]",
            (_FUNCTIONS, "What backward returns"),
            "The backward() of your autograd.Function {function} returned a gradient of shape "
            "[{got}] for input {index} (counting from 0), whose shape is [{want}]: each gradient "
            "must have the shape of its input.",
            "Return a tensor of the input's shape: where forward reduced the input (sum, mean), "
            "expand the incoming gradient back (grad.expand_as(x)); where it broadcast the input, "
            "sum the gradient over the broadcast dimensions.",
        ),
        "function_transform": Kind(
            "usage",
            r"(?P<setup>must override the setup_context staticmethod)|You tried to vmap over "
            r"(?P<function>\w+), but it does not have vmap support",
            (_FUNCTIONS, "torch.func"),
            "{what}",
            "{fix}",
        ),
    }
)

# Chapter 10: hooks (module hooks, tensor hooks, saved-tensor hooks).
_HOOKS = "notebooks/10_hooks.ipynb", "Pitfalls"
KINDS.update(
    {
        "backward_hook_inplace": Kind(
            "changed",
            # starts after view_inplace's "Output N of", so it wins over it (explain: latest match)
            r"BackwardHookFunction(?:Backward)? is a view and is being modified inplace",
            _HOOKS,
            "A module with a full backward hook (register_full_backward_hook or "
            "register_full_backward_pre_hook) passes its inputs and outputs through "
            "BackwardHookFunction, which returns them as views; then an in-place operation "
            "changed one of them, typically nn.ReLU(inplace=True) (or x += ...) right after or "
            "before the hooked module. Autograd forbids it: the in-place change would bypass "
            "the hook's Node.",
            "Build the activations with inplace=False (for m in model.modules(): if "
            "isinstance(m, nn.ReLU): m.inplace = False), or hook tensors instead of modules: a "
            "forward hook that calls out.register_hook(fn) gets the same gradient as grad_output.",
        ),
        "grad_overlap_inplace": Kind(
            "changed",
            r"more than one element of the written-to tensor refers to a single memory location",
            _HOOKS,
            "An in-place operation wrote into a tensor whose elements share memory, an expanded "
            "tensor (stride 0). Gradients are often such tensors: the gradient of a sum() "
            "reaches the next Node as ones expanded to the input's shape, so a tensor hook "
            "(or a custom backward) that changes its gradient argument in place (g.mul_(2), "
            "g.clamp_(...), g[mask] = 0) fails here, and where it does not fail it changes a "
            "gradient other Nodes may share.",
            "Never modify a hook's gradient argument: return a new tensor instead (return g * 2, "
            "return g.clamp(-c, c)); autograd uses the returned tensor. Anywhere else, clone() "
            "before writing in place.",
        ),
        "pack_hook_inplace": Kind(
            "changed",
            r"saved tensor pack hook is modifying its input in place",
            _HOOKS,
            "Your pack hook (torch.autograd.graph.saved_tensors_hooks) changed the tensor autograd "
            "was saving, in place. That tensor is still used by the forward (and by other Nodes), "
            "so autograd refuses.",
            "Return a new tensor from the pack hook (t.to(torch.bfloat16), t.cpu(), t.clone()), "
            "never change its argument.",
        ),
        "hook_changed_grad": Kind(
            "usage",
            r"hook '(?P<hook>[^']*)' has changed the (?P<what>size|type) of value",
            _HOOKS,
            "The tensor hook {hook} returned a gradient of another {what} than the tensor it is "
            "registered on. A tensor hook's return value replaces the gradient, so it must have the "
            "tensor's shape, dtype and device.",
            "Return a tensor like the gradient argument (g * 2, g.clamp(-c, c), torch.where(...)), "
            "or None to keep the gradient as it is; compute statistics (g.norm(), g.sum()) and "
            "store them instead of returning them.",
        ),
        "hook_no_grad_tensor": Kind(
            "not built",
            r"cannot register a hook on a tensor that doesn't require gradient",
            _HOOKS,
            "You registered a tensor hook on a tensor with requires_grad=False: no gradient will "
            "ever flow to it, so the hook could never run.",
            "Register the hook on a tensor that requires grad (a parameter, or a result computed "
            "from one outside torch.no_grad()); for an input, call x.requires_grad_() first.",
        ),
        "post_accumulate_nonleaf": Kind(
            "usage",
            r"post accumulate grad hooks cannot be registered on non-leaf tensors",
            _HOOKS,
            "register_post_accumulate_grad_hook runs after AccumulateGrad has written .grad, and "
            "only leaves (parameters, tensors created with requires_grad=True) have an "
            "AccumulateGrad Node.",
            "Register it on the parameter itself; for the gradient of an intermediate result use "
            "y.register_hook(fn) (or y.retain_grad()).",
        ),
        "full_backward_hook_no_input": Kind(
            "usage",
            r"Full backward hook is firing when gradients are computed with respect to module "
            r"outputs since no inputs require gradients",
            _HOOKS,
            "A full backward hook is registered on a module none of whose inputs requires grad "
            "(typically the first layer, fed with data). The hook then fires as soon as the "
            "gradient of its output is known, and its grad_input holds None.",
            "Nothing is wrong if you only read grad_output. To silence it, hook the output tensor "
            "instead (a forward hook calling out.register_hook(fn)), or skip the first layer.",
        ),
        "nonfull_backward_hook": Kind(
            "usage",
            r"Using a non-full backward hook when the forward contains multiple autograd Nodes is "
            r"deprecated",
            _HOOKS,
            "module.register_backward_hook is deprecated: it hooks only the last Node the "
            "module's forward recorded, so its grad_input is that Node's, not the module's "
            "inputs' (some are missing).",
            "Use module.register_full_backward_hook(hook) (same signature: module, grad_input, "
            "grad_output), or register_full_backward_pre_hook to see grad_output only.",
        ),
    }
)
# Chapter 12: gradients of gradients, torch.func transforms, NaN gradients.
# Chapter 11: mixed precision (autocast, GradScaler).
_PRECISION = "notebooks/11_mixed_precision.ipynb", "Pitfalls"
KINDS.update(
    {
        "autocast_dtype_mismatch": Kind(
            "usage",
            r"mat1 and mat2 must have the same dtype|expected m1 and m2 to have the same dtype|"
            r"expected scalar type \w+ but found \w+|Input type \(\S+\) and (?:weight|bias) type \(\S+\) should "
            r"be the same|Index put requires the source and destination dtypes match|expected self and source to "
            r"have same dtypes",
            _PRECISION,
            "Two tensors of different floating dtypes met in one operation. With mixed precision this is "
            "a 16-bit result of autocast (bfloat16 or float16) meeting a float32 weight or buffer outside "
            "the autocast region: autocast casts the inputs of the ops it runs, nothing after its with "
            "block, and never the tensor you write into.",
            "Run the whole forward and the loss inside torch.autocast(...), or cast where you leave it "
            "(layer(h.float()), buffer[idx] = value.to(buffer.dtype)). Keep the parameters float32: do "
            "not call model.half() for autocast.",
        ),
        "scaler_call_order": Kind(
            "usage",
            r"(?P<what>unscale_\(\) has already been called on this optimizer since the last update\(\)|"
            r"unscale_\(\) is being called after step\(\)|step\(\) has already been called since the last "
            r"update\(\))",
            _PRECISION,
            "GradScaler keeps, per optimizer, where it is in the iteration (scaled, unscaled, stepped), "
            "and only scaler.update() starts the next one; here a call came out of that order: "
            "{what}. Usually update() was forgotten at the end of the previous iteration (then the "
            "next unscale_ or step comes after step()), or unscale_ is called twice, by you and by a "
            "helper (it would divide the gradients by the scale twice).",
            "One iteration: scaler.scale(loss).backward(); scaler.unscale_(opt) (once, only if you clip "
            "or read the gradients); clip; scaler.step(opt); scaler.update().",
        ),
        "scaler_fp16_grads": Kind(
            "usage",
            r"Attempting to unscale FP16 gradients",
            _PRECISION,
            "GradScaler found float16 gradients: the parameters themselves are float16 (model.half()). "
            "The scaler expects float32 master weights, whose gradients can hold the unscaled values.",
            "Keep the model float32 and run the forward under torch.autocast(device, dtype=torch.float16); "
            "or train in bfloat16, which needs no scaler.",
        ),
        "amp_device_unavailable": Kind(
            "usage",
            r"CUDA is not available or torch_xla is imported\. Disabling autocast|GradScaler is enabled, but "
            r"CUDA is not available",
            _PRECISION,
            "torch.autocast('cuda') or GradScaler('cuda') was used on a machine without a usable GPU: "
            "PyTorch disables it, and the run is plain float32.",
            "On the CPU use torch.autocast('cpu', dtype=torch.bfloat16) (and no scaler, or "
            "torch.amp.GradScaler('cpu')); pick the device from torch.cuda.is_available().",
        ),
    }
)
_FUNC = "notebooks/12_higher_order.ipynb", "Pitfalls"
KINDS.update(
    {
        "vmap_item": Kind(
            "usage",
            r"vmap: It looks like you're calling \.item\(\) on a Tensor",
            _FUNC,
            "The function under vmap turned a tensor into a Python number (.item(), float(), int(), "
            ".tolist()). Inside vmap a tensor stands for a whole batch, one value per sample, so "
            "there is no single number to return.",
            "Stay in tensors: x / x.abs().max() instead of x / x.abs().max().item(); compute "
            "Python numbers outside vmap, on its result.",
        ),
        "vmap_control_flow": Kind(
            "usage",
            r"vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow",
            _FUNC,
            "The function under vmap branches in Python on a tensor's value (if x.sum() > 0, while, "
            "and/or). Under vmap that value differs from sample to sample, so Python cannot take "
            "one branch.",
            "Compute both branches and choose per sample with torch.where(cond, a, b) (or "
            "torch.clamp, masks); keep Python if only for shapes and settings.",
        ),
        "vmap_inplace": Kind(
            "usage",
            r"vmap: inplace arithmetic\(self, \*extra_args\) is not possible",
            _FUNC,
            "Under vmap an in-place operation wrote a batched value (one per sample) into a tensor "
            "that is not batched, typically a buffer the function created with torch.zeros(...) "
            "or torch.ones(...) and then filled (out[:] = x, out.mul_(x), out.copy_(x)). It has "
            "room for one sample only.",
            "Compute out of place (return x * 2, torch.cat, torch.stack), or create the buffer from "
            "the input (torch.zeros_like(x), x.new_zeros(shape)), which vmap batches.",
        ),
        "backward_in_transform": Kind(
            "usage",
            r"backward\(\) called inside a functorch transform",
            _FUNC,
            "The function given to torch.func.grad (or vjp, jacrev, vmap of them) calls "
            ".backward(). torch.func computes the gradients itself and never writes .grad, so "
            "backward() is refused there.",
            "Return the loss from the function and let grad differentiate it: "
            "grads = torch.func.grad(loss_fn)(params, x). Call backward() only outside transforms.",
        ),
        "func_grad_not_scalar": Kind(
            "usage",
            r"Expected f\(\*args\) to return a scalar Tensor, got tensor with (?P<dims>\d+) dims",
            _FUNC,
            "torch.func.grad differentiates a function that returns a single number, but yours "
            "returned a tensor with {dims} dimension(s): a per-sample loss, unreduced outputs.",
            "Reduce inside the function (.sum(), .mean()). For one gradient per sample, write the "
            "loss of ONE sample and vmap(grad(loss), in_dims=(None, 0, 0)); for a Jacobian or "
            "vector-Jacobian product of a non-scalar function use jacrev or vjp.",
        ),
        "anomaly_nan": Kind(
            "usage",
            r"Function '(?P<node>\w+)' returned nan values in its (?P<index>\d+)\w* output",
            _FUNC,
            "Anomaly mode (torch.autograd.detect_anomaly) found NaN in what the Node {node} "
            "computed in backward. Typical causes: 0 * inf (a torch.where whose unused branch "
            "has an infinite derivative, such as sqrt or log at 0: where sends that branch a "
            "gradient of 0), 0/0, or a hand-written norm sqrt(sum(x**2)) at 0.",
            "Keep the dangerous input out of the unused branch (the double where: "
            "torch.where(x > 0, torch.where(x > 0, x, 1).sqrt(), 0)), clamp it "
            "(x.clamp(min=eps).sqrt()), or use a function whose gradient is defined there "
            "(torch.linalg.vector_norm is 0 at 0). Turn anomaly mode off again: it is slow.",
        ),
    }
)
# Chapter 13: torch.compile (Dynamo's graph breaks under fullgraph=True, retain_grad in a compiled function).
_COMPILE = "notebooks/13_compile.ipynb", "Pitfalls"
KINDS.update(
    {
        "compile_builtin": Kind(
            "usage",
            r"Failed to trace builtin operator",
            _COMPILE,
            "torch.compile's Dynamo met a Python builtin it cannot put in a graph, typically print(...) "
            "inside the compiled function. Without fullgraph=True that is a graph break (two graphs, the "
            "print runs in Python between them); with fullgraph=True it is this error.",
            "Take the print (or logging) out of the compiled function, or return what you want to see "
            "and print it outside; torch._dynamo.explain(fn)(*args) lists every break and its reason.",
        ),
        "compile_item": Kind(
            "usage",
            r"Tensor\.item\(\) call with capture_scalar_outputs=False",
            _COMPILE,
            "A compiled function calls .item() (or float(t)): a Python number cannot stay inside the "
            "graph, so Dynamo breaks the graph there.",
            "Keep the value a tensor: compare and select with tensor ops (torch.where, clamp, masks) "
            "instead of Python numbers; call .item() outside the compiled function.",
        ),
        "compile_data_dependent": Kind(
            "usage",
            r"Data-dependent branching|Could not guard on data-dependent expression",
            _COMPILE,
            "A Python if (or while, and, or) in a compiled function depends on a tensor's values, "
            "such as if y.sum() > 0 or if y.sum().item() > 0. A graph records operations, not Python "
            "decisions, so Dynamo cannot put the choice in the graph (with fullgraph=True, .item() is "
            "captured as an unknown number and the if on it fails).",
            "Compute both branches and select with torch.where(cond, a, b) (gradients flow only "
            "through the selected elements, as with the if), or use torch.cond; keep Python ifs for "
            "shapes, flags and constants.",
        ),
        "compile_retain_grad": Kind(
            "usage",
            r"Tensor\.retain_grad\(\) with AOTDispatcher",
            _COMPILE,
            "retain_grad() was called inside a compiled function. AOTAutograd traces the backward "
            "ahead of time into one compiled Node, so an intermediate tensor of the block has no Node "
            "of its own whose gradient could be kept in .grad.",
            "Make the tensor a boundary: compile the code before it and the code after it as two "
            "functions (or run one part eagerly) and call retain_grad() on it between them (returned "
            "from one compiled block it gets no gradient from inside that block); a register_hook "
            "inside the compiled function is traced and works.",
        ),
    }
)
# Chapter 14: several processes (DistributedDataParallel).
_DDP = "notebooks/14_distributed.ipynb", "Pitfalls"
KINDS.update(
    {
        "ddp_ready_twice": Kind(
            "usage",
            r"Expected to mark a variable ready only once",
            _DDP,
            "DistributedDataParallel hooks each parameter's AccumulateGrad and expects it to fire "
            "once per backward. It fired twice: typically a reentrant activation checkpoint "
            "(use_reentrant=True) together with find_unused_parameters=True, where the block's "
            "backward runs as a separate, nested backward; or a parameter used again outside "
            "forward, or shared by two forwards before one backward.",
            "Use checkpoint(..., use_reentrant=False) (the recommended variant), or drop "
            "find_unused_parameters if every parameter is used; DDP(..., static_graph=True) is a "
            "workaround when the graph is the same in every iteration.",
        ),
        "ddp_no_process_group": Kind(
            "usage",
            r"Default process group has not been initialized",
            _DDP,
            "DistributedDataParallel (or a collective such as dist.all_reduce) was called in a "
            "process that has not joined a process group: typically the notebook's own process, "
            "outside the function that every rank runs.",
            "Put the DDP code in a function fn(rank, world_size, ...) and run it with "
            "autograder.ranks.run_ranks(fn, world_size, ...), which joins each process to a gloo "
            "group first (in a script: torch.distributed.init_process_group, started by torchrun).",
        ),
        "ddp_unused_parameters": Kind(
            "usage",
            r"Expected to have finished reduction in the prior iteration before starting a new one",
            _DDP,
            "Some parameters of the model wrapped in DistributedDataParallel got no gradient in the "
            "last backward (a layer the forward skipped, an output not in the loss). DDP waits for "
            "every parameter's gradient before it all-reduces the last bucket, so that reduction "
            "never finished, and the next forward refuses to start.",
            "Pass find_unused_parameters=True to DistributedDataParallel (it then walks the graph "
            "after each forward to mark unused parameters ready), or remove the unused parameters "
            "from the model, or make every output take part in the loss.",
        ),
    }
)
# Not autograd's, but the first error of many a notebook session: a cell run before the cell that
# defines what it uses (in an exercise, a check cell run before its answer cell).
KINDS["name_not_defined"] = Kind(
    "notebook",
    r"name '(?P<name>\w+)' is not defined",
    ("notebooks/00_start.ipynb", "check an answer"),
    "{name} is not defined in this kernel (yet): the cell that defines it has not run since the kernel "
    "started (a restart forgets every name), or it raised before reaching the line that defines it.",
    "Run the cell that defines {name}, then this cell again: in a lesson, the cells above this one, top "
    "to bottom (Run > Run All Above Selected Cell); in an exercise, the set-up cell at the top, the "
    "question's answer cell and the code cell between its text and its answer, if it has one. If {name} "
    "is yours, check its spelling in the cell that defines it.",
)
UNKNOWN = Kind(
    "unknown",
    "",
    ("notebooks/00_start.ipynb", "Contents"),
    "This message is not one of the autograd errors and warnings this explainer knows.",
    "Read PyTorch's message above; the course's lessons are listed on the start page.",
)
