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
               ``custom_function_grad_shape``, ``once_differentiable``, ``function_transform``,
               ``grad_outputs_missing`` (autograd.grad of a non-scalar), ``numpy_requires_grad``:
               the graph is fine, an autograd call (or a custom Function) is used the wrong
               way (a reentrant checkpoint whose inputs do not require grad records no graph
               for the block, but the fix is in the call)
custom (ch 9)  ``custom_function_*`` (the gradients backward returns, save_for_backward, the legacy
               style, a missing backward or jvp, setup_context's signature), ``once_differentiable``,
               ``function_transform``, ``gradcheck_mismatch``/``gradcheck_float32``/``gradcheck_not_double``,
               ``function_backward_no_grad`` (not built: autograd.grad inside a backward)
hooks (ch 10)  ``backward_hook_inplace``, ``grad_overlap_inplace``, ``pack_hook_inplace`` (changed);
               ``hook_no_grad_tensor`` (not built); ``hook_changed_grad``,
               ``post_accumulate_nonleaf``, ``post_accumulate_returned``, ``forward_hook_returned_value``,
               ``hook_signature``, ``backward_hook_count``, ``unpack_hook_not_tensor``,
               ``unpack_hook_backward`` (any error in backward under saved-tensor hooks),
               ``full_backward_hook_no_input`` and ``nonfull_backward_hook`` (both warnings) (usage)
amp (ch 11)    ``autocast_dtype_mismatch`` and its other causes ``custom_function_autocast``,
               ``dtype_mismatch``; ``custom_fwd_setup_context``; GradScaler: ``scaler_call_order``
               (naming the order the code uses), ``scaler_not_scaled``, ``scaler_no_inf_checks``,
               ``scaler_update_before_step``, ``scaler_fp16_grads``; ``half_overflow``;
               warnings ``amp_device_unavailable``, ``amp_deprecated_api``, ``cpu_autocast_dtype``,
               ``lr_scheduler_order``/``scaler_skipped_step`` (usage)
func (ch 12)   ``vmap_item``, ``vmap_control_flow``, ``vmap_inplace``, ``vmap_randomness``,
               ``vmap_batch_norm``, ``vmap_mapped_sizes``, ``vmap_in_dims``, ``backward_in_transform``,
               ``func_grad_not_scalar``, ``func_output_type``, ``func_saved_tensor_hooks``,
               ``func_captured_mutation``/``func_buffer_mutation``, ``func_numpy``,
               ``grad_unused_input``, ``anomaly_nan`` (usage); ``second_derivative_no_create_graph``,
               ``second_derivative_constant`` (not built)
compile (13)   ``compile_builtin``, ``compile_item``, ``compile_data_dependent``,
               ``compile_retain_grad``, ``compile_hook_side_effect``, ``compile_checkpoint_side_effect``,
               ``compile_autograd_call``, ``compile_no_cxx`` (usage): Dynamo's graph breaks, errors
               under fullgraph=True, Inductor without a compiler
DDP (ch 14)    ``ddp_ready_twice``, ``ddp_unused_parameters``, ``ddp_no_process_group``,
               ``ddp_static_graph_changed``, ``ddp_model_mismatch``, ``ddp_no_trainable_parameters``,
               ``dist_address_in_use`` (usage)
notebook       ``name_not_defined``: not autograd's, a cell ran before the cell that defines a name;
               ``setup_not_run``: a name the set-up cell defines (torch, nn, ...)
               ``check_helpers_not_run``: a name an exercise's folded check helpers define
unknown        ``unknown``: anything else
=============  ====================================================================================

NOTE [stable parts]: PyTorch rewords its messages (``SigmoidBackward0`` became ``Sigmoid``, the
"Hint:" changed, the checkpoint warning was reworded), so each pattern matches only words
that have stayed the same, and the details (shape, op, versions) are optional groups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Kind",
    "KINDS",
    "UNKNOWN",
    "MODIFIED_INPLACE",
    "EXCEPTION_TYPES",
    "kinds_by_chapter",
    "modified_inplace_message",
]


@dataclass(frozen=True)
class Kind:
    """One kind of mistake: its family (a key of explain's headlines), the pattern on PyTorch's
    message, where the course teaches it, and str.format templates of its cause and fix."""

    family: str
    pattern: str  # regex on the stable part of PyTorch's message, see NOTE [stable parts]
    lesson: tuple | str  # (notebook, a word of the heading to link to), see lessons.lesson; or a URL
    cause: str  # str.format templates over the details, see explain._values()
    fix: str
    # The exception types (builtin names) the message comes as; the notebook extension explains
    # exactly the union of these (see EXCEPTION_TYPES). Warnings need none.
    types: tuple = ("RuntimeError",)
    # A regex that one of the traceback's "file:function" frames (or a pasted traceback) must match,
    # for a message that is not PyTorch's alone (a Python TypeError raised through autograd's code).
    where: str = ""


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
        r"(?:function (?P<function>\w+) )?returned an incorrect number of gradients "
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
            "{what}. {story}",
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
            types=("ValueError",),
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
            r"vmap: (?:inplace arithmetic|[\w:.]+_)\(self, \*extra_args\) is not possible",
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
            r"Function '(?P<node>\w+)' returned nan values in its (?P<index>\d+)(?:st|nd|rd|th)? output",
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
            "from one compiled block it gets no gradient from inside that block). A register_hook "
            "inside the compiled function is traced only if the hook just transforms the gradient "
            "(return g * 2); a hook with a side effect (appending g to a list, logging) breaks the "
            "graph (HOP: Unsafe side effect), an error under fullgraph=True.",
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
            types=("ValueError", "RuntimeError"),
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
# ---- chapters 9-14, collected from the lessons' pitfalls, the exercises' typical mistakes and the
# messages most reported on PyTorch's issue tracker and forums for each topic. Kinds whose pattern is
# "" are causes that explain_refine tells apart from another kind's message.
_ANY_ERROR = ("RuntimeError", "TypeError", "ValueError", "KeyError", "IndexError", "AttributeError", "OSError")
KINDS.update(
    {
        "custom_function_save_non_tensor": Kind(
            "usage",
            r"save_for_backward can only save variables, but argument (?P<position>\d+) is of type (?P<type>[\w.]+)",
            (_FUNCTIONS, "save_for_backward or a ctx attribute"),
            "ctx.save_for_backward(...) got a {type} as argument {position} (counting from 0). It saves "
            "tensors only (it checks their version counters and frees them after backward).",
            "Keep numbers, flags and shapes as attributes of ctx (ctx.scale = scale) and pass only "
            "tensors to ctx.save_for_backward.",
            types=("TypeError",),
        ),
        "custom_function_legacy": Kind(
            "usage",
            r"Legacy autograd function with non-static forward method is deprecated|should not be "
            r"instantiated\. Methods on autograd functions are all static",
            (_FUNCTIONS, "forward, setup_context, backward"),
            "The autograd.Function was instantiated and called, MyFunction()(x): PyTorch's style before "
            "1.3. A Function is a class whose forward and backward are static methods, used through "
            "the class.",
            "Call MyFunction.apply(x), never MyFunction()(x) or MyFunction.forward(...); write forward "
            "and backward as @staticmethod, with ctx as their first argument.",
        ),
        "custom_function_no_backward": Kind(
            "usage",
            r"You must implement either the backward or vjp method for your custom autograd\.Function",
            (_FUNCTIONS, "forward, setup_context, backward"),
            "Your autograd.Function has no backward (it is missing, misspelled such as backwards, or "
            "not a @staticmethod of the class), so autograd cannot compute its gradient.",
            "Define @staticmethod def backward(ctx, grad_output) in the class, returning one gradient "
            "per input of forward.",
            types=("NotImplementedError",),
        ),
        "custom_function_no_jvp": Kind(
            "usage",
            r"You must implement the jvp function for custom autograd\.Function to use it with forward "
            r"mode AD",
            (_FUNCTIONS, "torch.func"),
            "Forward-mode AD (torch.func.jvp or jacfwd, dual tensors of torch.autograd.forward_ad) went "
            "through your autograd.Function, which has a backward (reverse mode) but no jvp.",
            "Use reverse mode (jacrev, vjp, grad), which uses backward; or write @staticmethod "
            "jvp(ctx, *tangents) (forward and setup_context written apart, ctx.save_for_forward(...)).",
            types=("NotImplementedError",),
        ),
        "custom_function_setup_context_signature": Kind(
            "usage",
            r"missing (?:a|\d+) required (?:positional )?argument",
            (_FUNCTIONS, "forward, setup_context, backward"),
            "Your autograd.Function has a setup_context, so autograd calls forward without ctx: "
            "forward(x, ...). A forward written as forward(ctx, x, ...) is then one argument short.",
            "With setup_context, write forward(x, ...) without ctx and setup_context(ctx, inputs, "
            "output); or drop setup_context and keep forward(ctx, x, ...).",
            types=("TypeError",),
            where=r"autograd[/\\]function\.py[\":,\w ]*(?:apply|bind_default_args)",
        ),
        "custom_function_backward_arity": Kind(
            "usage",
            "",
            (_FUNCTIONS, "What backward returns"),
            "{function}() is called with one gradient per output of forward (after ctx): {given} "
            "arguments, and it takes {takes}.",
            "Give backward one argument per output of forward after ctx, def backward(ctx, grad_a, "
            "grad_b), or def backward(ctx, *grads); outputs marked non-differentiable get one too.",
            types=("TypeError",),
        ),
        "gradcheck_mismatch": Kind(
            "usage",
            r"Jacobian mismatch for output (?P<output>\d+) with respect to input (?P<input>\d+)",
            (_FUNCTIONS, "gradcheck"),
            "gradcheck compared your backward's Jacobian (analytical) with finite differences "
            "(numerical), in float64, and they differ for output {output} and input {input}: the "
            "backward computes a wrong gradient (a missing factor such as the 2 of x**2, a saved "
            "tensor used in place of another, a transposed matmul).",
            "Compare the two matrices printed above: a constant ratio is a missing factor, zeros where "
            "numbers are expected a missing term. Derive the gradient again and test on small float64 "
            "inputs.",
        ),
        "gradcheck_float32": Kind(
            "usage",
            "",
            (_FUNCTIONS, "gradcheck"),
            "gradcheck ran on inputs that are not float64: its finite differences in float32 are too "
            "imprecise, so numerical and analytical Jacobians differ even for a correct backward "
            "(output {output}, input {input}).",
            "Give gradcheck float64 inputs: torch.randn(3, dtype=torch.float64, requires_grad=True); "
            "only then does a mismatch mean that backward is wrong.",
        ),
        "gradgradcheck_mismatch": Kind(
            "usage",
            "",
            (_FUNCTIONS, "gradgradcheck"),
            "gradgradcheck differentiated your backward (a second derivative) and the result differs "
            "from finite differences (output {output}, input {input}): part of backward is not "
            "recorded under create_graph=True: a .detach(), .data, NumPy or .item() inside it, or a "
            "saved tensor used where the input should be.",
            "Write backward with differentiable torch operations on the saved tensors and the "
            "incoming gradient only (no detach/.data/NumPy); or mark it @once_differentiable if no "
            "second derivative is needed.",
        ),
        "gradcheck_not_double": Kind(
            "usage",
            r"requires gradient and is not a double precision floating point",
            (_FUNCTIONS, "gradcheck"),
            "gradcheck warns that an input is not float64: finite differences in float32 are too "
            "imprecise, and the check will likely fail even for a correct backward.",
            "Give gradcheck and gradgradcheck float64 inputs (dtype=torch.float64).",
        ),
        # chapter 10: hooks
        "post_accumulate_returned": Kind(
            "usage",
            r"post accumulate grad hooks should return None",
            (_HOOKS[0], "After accumulation"),
            "A hook registered with register_post_accumulate_grad_hook returned a value. It gets the "
            "parameter after .grad was written and must return None (it changes p.grad in place if it "
            "wants). A lambda returns what its expression returns: lambda p: p.grad.clamp_(-c, c) "
            "returns the clamped tensor.",
            "Write the hook with def and no return: def clip(p): p.grad.clamp_(-c, c); or add "
            "'and None' to the lambda's expression.",
        ),
        "forward_hook_returned_value": Kind(
            "usage",
            r"\bRemovableHandle\b",
            _HOOKS,
            "A forward hook returned something, and a forward hook's return value replaces the "
            "module's output: here a handle (RemovableHandle), what out.register_hook(...) returns, so "
            "the next module received a handle instead of a tensor.",
            "Write the hook with def and no return (def hook(m, args, out): out.register_hook(fn)), "
            "or make the lambda return None.",
            types=("TypeError", "AttributeError"),
        ),
        "hook_signature": Kind(
            "usage",
            r"(?<![\w.<>])(?P<function>[\w.<>]+)\(\) takes (?P<takes>\d+) positional arguments? but (?P<given>\d+) "
            r"(?:was|were) given",
            _HOOKS,
            "{which} was called with {given} argument(s) and takes {takes}.{factory}",
            "Give the hook the arguments PyTorch passes: {signatures}{factory_fix}",
            types=("TypeError",),
            where=r"nn[/\\]modules[/\\]module\.py|utils[/\\]hooks\.py|_engine_run_backward|run_backward",
        ),
        "backward_hook_count": Kind(
            "usage",
            r"Backward (?P<pre>pre )?hook returned an invalid number of (?P<which>grad_input|grad_output), "
            r"got (?P<got>\d+), but expected (?P<expected>\d+)|has returned an incorrect number of values "
            r"\(got (?P<got_old>\d+), but expected (?P<expected_old>\d+)\)",
            (_HOOKS[0], "Module hooks"),
            "A module's full backward {hook} returned {got} gradient(s), and {which} has {expected}: its "
            "return value replaces {which}, one entry per {part} of the module's forward.",
            "Return None (to keep {which}) or a tuple like it: tuple(g * 2 if g is not None else None for "
            "g in {which}).",
        ),
        "module_hook_changed_grad": Kind(
            "usage",
            "",
            (_HOOKS[0], "Module hooks"),
            "A module's full backward hook (or pre-hook) returned something other than a tuple like "
            "grad_input (grad_output for a pre-hook): a bare tensor, or tensors of other shapes. PyTorch "
            "checks what it returns through its own wrapper, named 'hook', hence \"hook 'hook' has "
            'changed the {what} of value".',
            "Return None, or a tuple with one tensor per entry, each of that entry's shape: return "
            "(grad_input[0] * 2,) rather than grad_input[0] * 2.",
        ),
        "unpack_hook_not_tensor": Kind(
            "usage",
            r"Output of saved tensor unpack_hook expected to be a Tensor but got result of type (?P<type>\w+)",
            (_HOOKS[0], "Saved-tensor hooks"),
            "Your unpack hook (torch.autograd.graph.saved_tensors_hooks) returned a {type}. Backward "
            "computes with what unpack returns, so it must return the saved tensor itself.",
            "Make unpack return a tensor of the saved one's shape and dtype, rebuilt from what pack "
            "returned (pack: t -> key or smaller copy; unpack: -> the tensor).",
            types=("TypeError",),
        ),
        "unpack_hook_backward": Kind(
            "usage",
            "",
            (_HOOKS[0], "Saved-tensor hooks"),
            "This error ({what}) was raised during backward, where autograd computes with the tensors "
            "forward saved, under saved-tensor hooks (saved_tensors_hooks or save_on_cpu, maybe "
            "entered in another cell, around the forward): backward calls your unpack hook for each "
            "saved tensor and computes with what it returns, so an unpack hook that fails, or returns "
            "a tensor of another dtype or shape than the one pack received, fails there.",
            "Make unpack return exactly the saved tensor: same shape, dtype and device (pack: "
            "t -> (t.dtype, t.to(torch.bfloat16)); unpack: (dtype, p) -> p.to(dtype)), and keep what "
            "unpack reads (a file, a dict entry) until backward has run; check that the gradients "
            "equal those without the hooks.",
            types=_ANY_ERROR,
        ),
        # chapter 11: mixed precision
        "custom_function_autocast": Kind(
            "usage",
            "",
            (_PRECISION[0], "Pitfalls"),
            "Two tensors of different dtypes met in the backward of your autograd.Function, run under "
            "autocast: forward's ops made 16-bit tensors (autocast casts inside a Function's forward "
            "too), but backward runs outside the autocast region, so its ops see the saved 16-bit "
            "tensors next to float32 gradients.",
            "Decorate the Function: forward with @torch.amp.custom_fwd(device_type='cpu') (or "
            "cast_inputs=torch.float32 to run it in float32) and backward with "
            "@torch.amp.custom_bwd(device_type='cpu'), so backward runs with forward's autocast state.",
        ),
        "custom_fwd_setup_context": Kind(
            "usage",
            r"object has no attribute '_fwd_used_autocast'",
            (_PRECISION[0], "Pitfalls"),
            "torch.amp.custom_bwd found no autocast state on ctx: custom_fwd writes it on ctx, which "
            "it takes to be forward's first argument, and a Function with a separate setup_context has "
            "a forward without ctx (pytorch/pytorch#132388).",
            "With custom_fwd/custom_bwd, write the combined forward(ctx, ...) (no setup_context); or "
            "drop the decorators and cast inside forward yourself (x.float()).",
            types=("AttributeError",),
        ),
        "dtype_mismatch": Kind(
            "usage",
            "",
            (_PRECISION[0], "Pitfalls"),
            "Two tensors of different dtypes met in one operation ({dtypes}), with no 16-bit tensor "
            "among them: usually float64 data (from NumPy, torch.from_numpy, a Python list of "
            "doubles, a .double() target) meeting float32 weights, or a model cast with .double().",
            "Cast the data to the model's dtype where it enters: torch.from_numpy(a).float(), "
            "x.to(torch.float32), or torch.as_tensor(a, dtype=torch.float32).",
        ),
        "scaler_not_scaled": Kind(
            "usage",
            r"Attempted (?P<call>\w+) but _scale is None",
            (_PRECISION[0], "The scaler's steps"),
            "scaler.{call}(...) ran but this GradScaler never scaled a loss: its scale exists only "
            "after the first scaler.scale(loss). The loss was backwarded without scaler.scale, or "
            "another scaler object scaled it.{order}",
            "One iteration: scaler.scale(loss).backward(); scaler.unscale_(opt) (if you clip); "
            "scaler.step(opt); scaler.update(), all on the same scaler.",
            types=("AssertionError",),
        ),
        "scaler_no_inf_checks": Kind(
            "usage",
            r"No inf checks were recorded for this optimizer",
            (_PRECISION[0], "The scaler's steps"),
            "scaler.step(optimizer) found no gradient to unscale among this optimizer's parameters: "
            "none of them has a .grad. The backward did not reach them (the optimizer was built on "
            "other parameters, a second model took no part in this iteration's loss, or they are "
            "frozen), or the gradients were cleared (optimizer.zero_grad()) between backward and "
            "step.{order}",
            "Build the optimizer on the model that computes the loss (torch.optim.SGD(model.parameters(), "
            "...)); call zero_grad() at the start of the iteration, before scaler.scale(loss).backward(); "
            "skip scaler.step(opt) for an optimizer none of whose parameters got a gradient this "
            "iteration (if any(p.grad is not None for g in opt.param_groups for p in g['params'])).",
            types=("AssertionError",),
        ),
        "scaler_update_before_step": Kind(
            "usage",
            r"No inf checks were recorded prior to update",
            (_PRECISION[0], "The scaler's steps"),
            "scaler.update() found no inf checks to read: it reads those that scaler.step(opt) (through "
            "unscale_) records, and none ran since the last update(). {story}",
            "Call scaler.step(opt) for every optimizer, then scaler.update() once, at the end of the iteration.",
            types=("AssertionError",),
        ),
        "half_overflow": Kind(
            "usage",
            r"value cannot be converted to type (?:c10::|at::)?(?P<dtype>Half|BFloat16) without overflow",
            (_PRECISION[0], "Why float16 gradients underflow"),
            "A Python number too large for {dtype} (float16 holds at most 65504) was written into a "
            "{dtype} tensor, typically scores.masked_fill(mask, -1e9) or fill_ on a tensor autocast "
            "made 16-bit.",
            "Use the dtype's own limit: scores.masked_fill(mask, torch.finfo(scores.dtype).min), or "
            "float('-inf') for a mask before softmax.",
        ),
        "amp_deprecated_api": Kind(
            "usage",
            r"`torch\.cuda\.amp\.(?P<api>GradScaler|autocast|custom_fwd|custom_bwd)\(args\.\.\.\)` is deprecated",
            (_PRECISION[0], "On a GPU"),
            "torch.cuda.amp.{api} is the old name of torch.amp.{api} with device 'cuda'; it still works and warns.",
            "Write torch.amp.{api}('cuda', ...) (device_type='cuda' for custom_fwd and custom_bwd); on "
            "the CPU, torch.amp.{api}('cpu', ...).",
        ),
        "cpu_autocast_dtype": Kind(
            "usage",
            r"In CPU autocast, but the target dtype is not supported",
            (_PRECISION[0], "Which op runs in which dtype"),
            "torch.autocast('cpu', dtype=...) was given a dtype it does not run ops in (float32, "
            "float64), so it disabled itself: the block runs as without autocast.",
            "On the CPU use torch.autocast('cpu', dtype=torch.bfloat16) (or torch.float16).",
        ),
        "lr_scheduler_order": Kind(
            "usage",
            r"Detected call of `lr_scheduler\.step\(\)` before `optimizer\.step\(\)`",
            (_PRECISION[0], "A skipped step"),
            "The learning-rate scheduler stepped while the optimizer had not: either "
            "scheduler.step() is called before optimizer.step() in your loop, or a GradScaler skipped "
            "the optimizer's step (inf or NaN in the first iterations' scaled gradients, normal while "
            "the scale settles).",
            "Call optimizer.step() (or scaler.step(optimizer)) before scheduler.step(). With a "
            "GradScaler the warning after a skipped first step is harmless.",
        ),
        "scaler_skipped_step": Kind(
            "usage",
            "",
            (_PRECISION[0], "A skipped step"),
            "The learning-rate scheduler stepped while the optimizer had not: your loop uses a "
            "GradScaler, which skips optimizer.step() when the scaled gradients hold inf or NaN (normal "
            "in the first iterations, while the scale settles), so the scheduler seems to come first.",
            "Nothing to fix if this happens in the first iterations (the scale is lowered and steps "
            "resume); keep the order scaler.step(opt); scaler.update(); scheduler.step().",
        ),
        # chapter 12: torch.func over modules, randomness, buffers
        "vmap_batch_norm": Kind(
            "usage",
            r"Batch norm got a batched tensor as input while the running_mean or running_var, which will "
            r"be updated in place, were not batched",
            _FUNC,
            "A BatchNorm in training mode ran under vmap: it would update its running_mean and "
            "running_var in place with one value per sample, and those buffers hold one value only.",
            "For per-sample gradients put the model in eval() mode, or make BatchNorm keep no running "
            "statistics: torch.func.replace_all_batch_norm_modules_(model) (or track_running_stats=False).",
        ),
        "func_saved_tensor_hooks": Kind(
            "usage",
            r"torch\.func\.\{grad, vjp, jacrev, hessian\} don't yet support saved tensor hooks",
            _FUNC,
            "torch.func's grad, vjp, jacrev and hessian ran inside a saved-tensor hooks region "
            "(saved_tensors_hooks, save_on_cpu, or a meter built on them), which they refuse; vmap, jvp "
            "and jacfwd run there.",
            "Call the transform outside the with block, or measure with the hooks on an ordinary backward().",
        ),
        "vmap_randomness": Kind(
            "usage",
            r"vmap: called random operation while in randomness error mode",
            _FUNC,
            "The function under vmap draws random numbers (nn.Dropout in training mode, torch.rand, "
            "randn_like). vmap does not know whether each sample should get its own draw, so by "
            "default it refuses.",
            "Pass vmap(..., randomness='different') (each sample its own mask, as in a batch) or "
            "randomness='same'; or put the model in eval() mode for per-sample gradients without "
            "dropout.",
        ),
        "func_captured_mutation": Kind(
            "usage",
            r"During a grad \(vjp, jvp, grad, etc\) transform, the function provided attempted to call "
            r"in-place operation \((?P<op>[\w.:]+)\) that would mutate a captured Tensor",
            _FUNC,
            "The function given to a torch.func transform changes in place ({op}) a tensor it did not "
            "receive as an argument (a global, a tensor of an enclosing function).",
            "Pass the tensor in as an argument (and return the new value), or compute out of place.",
        ),
        "func_buffer_mutation": Kind(
            "usage",
            "",
            _FUNC,
            "Under a torch.func transform, a module's buffer was updated in place ({op}): BatchNorm in "
            "training mode updates running_mean and running_var in each forward, and those buffers are "
            "captured by the transformed function, not given to it.",
            "Put the model in eval() mode (running statistics used, not updated), pass the buffers "
            "through functional_call(model, (params, buffers), ...), or make BatchNorm keep no "
            "running statistics: torch.func.replace_all_batch_norm_modules_(model).",
        ),
        "vmap_mapped_sizes": Kind(
            "usage",
            r"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            r"\[(?P<sizes>[\d, ]+)\]",
            _FUNC,
            "vmap maps every input over its in_dims dimension (0 by default), and those sizes differ: "
            "[{sizes}]. Usually the parameters are mapped too (in_dims 0 for params), or x and y "
            "have different batch sizes.",
            "Give in_dims one entry per argument, None for what every sample shares: "
            "vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y).",
            types=("ValueError",),
        ),
        "vmap_in_dims": Kind(
            "usage",
            r"in_dims is not compatible with the structure of `inputs`",
            _FUNC,
            "vmap's in_dims must have the structure of the positional arguments: one entry per "
            "argument (a tuple of the same length), None for what is not mapped.",
            "Write in_dims with as many entries as the function has positional arguments, "
            "e.g. in_dims=(None, 0, 0) for f(params, x, y).",
            types=("ValueError",),
        ),
        "grad_unused_input": Kind(
            "usage",
            r"(?:One of the differentiated Tensors|The differentiated Tensor at index (?P<index>\d+)) "
            r"appears to not have been used in the graph",
            (_FUNC[0], "create_graph=True"),
            "torch.autograd.grad was asked for the gradient with respect to a tensor the outputs do "
            "not depend on: a tensor from another run of the forward (each call records a new graph: "
            "an intermediate taken from one call is not in the graph of an output of the next), a "
            "parameter the forward skipped, a copy made after it was created (w.to(device) is a new "
            "tensor), or a first gradient that does not depend on it (the second derivative of a "
            "linear function).",
            "Pass allow_unused=True (its gradient is then None; materialize_grads=True gives zeros), or "
            "leave it out of inputs; check that inputs are the tensors the forward used, from the same "
            "call as the outputs.",
        ),
        "func_output_type": Kind(
            "usage",
            r"grad_and_value\(f\)\(\*args\): (?:Expected f\(\*args\) to return a Tensor, got "
            r"(?P<type>[^\s]+)|(?P<aux>output of function f should be a tuple: \(output, aux\)))",
            _FUNC,
            "torch.func.grad differentiates a function that returns one scalar tensor; with "
            "has_aux=True a pair (scalar, anything). The function returned {what}.",
            "Return the scalar loss; return other values as a pair with has_aux=True: "
            "grad(f, has_aux=True)(x) returns (gradient, aux).",
        ),
        "numpy_requires_grad": Kind(
            "usage",
            r"Can't call numpy\(\) on Tensor that requires grad",
            _GRAD_MODES,
            ".numpy() was called on a tensor that requires grad: a NumPy array shares its memory but "
            "cannot be recorded, so PyTorch refuses to let the graph lose track of it.",
            "For values only (logging, plotting): t.detach().numpy() (t.detach().cpu().numpy() on a "
            "GPU), or t.tolist(); a computation that needs gradients must stay in torch.",
        ),
        "func_numpy": Kind(
            "usage",
            "",
            _FUNC,
            ".numpy() (or a NumPy function) was called inside a torch.func transform, where every "
            "tensor is a wrapper that the transform differentiates: NumPy cannot compute on it.",
            "Compute in torch inside the function (torch.sin, torch.linalg ...), and convert to NumPy "
            "only the transform's result.",
        ),
        # chapter 13: torch.compile
        "compile_hook_side_effect": Kind(
            "usage",
            r"HOP: Unsafe side effect",
            (_COMPILE[0], "Hooks and"),
            "A tensor hook registered inside the compiled function has a side effect (it appends to a "
            "list, logs, writes a global): Dynamo can trace a hook that only transforms the gradient, "
            "but not one that mutates something outside, so the graph breaks there (under "
            "fullgraph=True: this error).",
            "Keep hooks inside compiled code pure (return g * 2; no append or print); register the "
            "logging hook outside the compiled function (on its output, in eager code), or capture "
            "the backward with compiled autograd.",
        ),
        "compile_checkpoint_side_effect": Kind(
            "usage",
            "",
            (_COMPILE[0], "Hooks and"),
            "A function checkpointed (torch.utils.checkpoint) inside compiled code has a side effect "
            "(it appends to a list, counts calls, writes a global): the checkpoint replays its forward "
            "in backward, so Dynamo refuses to trace the side effect (under fullgraph=True: this "
            "error).",
            "Move the side effect out of the checkpointed function; or set "
            "torch._dynamo.config.skip_fwd_side_effects_in_bwd_under_checkpoint = True if it may run "
            "once only.",
        ),
        "compile_autograd_call": Kind(
            "usage",
            r"Unsupported Tensor\.backward\(\) call|using `torch\.autograd\.grad` with "
            r"`torch\._dynamo\.config\.trace_autograd_ops=False`",
            (_COMPILE[0], "AOTAutograd"),
            "backward() or torch.autograd.grad is called inside the compiled function. Dynamo captures "
            "the forward (AOTAutograd traces its backward ahead of time); a backward call inside is a "
            "graph break (under fullgraph=True: this error).",
            "Compile the forward and the loss only, and call loss.backward() outside the compiled "
            "function: the backward is compiled anyway. To capture the backward pass itself, use "
            "compiled autograd.",
        ),
        "compile_no_cxx": Kind(
            "usage",
            r"No working C\+\+ compiler found|InvalidCxxCompiler",
            (_COMPILE[0], "Inductor"),
            "torch.compile's default backend, Inductor, writes C++ for the CPU and found no C++ compiler to build it.",
            "Install one (Debian/Ubuntu: sudo apt-get install g++), or compile with "
            "backend='aot_eager' (the graphs without code generation, as the course's lessons do).",
        ),
        # chapter 14: DDP and its helpers
        "ddp_static_graph_changed": Kind(
            "usage",
            r"Your training graph has changed in this iteration",
            _DDP,
            "DistributedDataParallel(..., static_graph=True) was promised the same graph in every "
            "iteration, and a parameter used in one iteration was unused in another (a branch, a "
            "skipped layer).",
            "Drop static_graph=True and pass find_unused_parameters=True, or make the forward use the "
            "same parameters in every iteration.",
        ),
        "ddp_model_mismatch": Kind(
            "usage",
            r"DDP expects same model across all ranks|appears not to match sizes of the same param in process",
            _DDP,
            "The ranks built different models (another number or shape of parameters): DDP checks "
            "at construction that each rank holds the same parameters, since it reduces them bucket "
            "by bucket.",
            "Build the same model in every rank (no rank-dependent layers or sizes); vary the data by "
            "rank, not the model.",
        ),
        "ddp_no_trainable_parameters": Kind(
            "usage",
            r"DistributedDataParallel is not needed when a module doesn't have any parameter that "
            r"requires a gradient",
            _DDP,
            "The module wrapped in DistributedDataParallel has no parameter that requires grad (all "
            "frozen, or none at all): there is nothing to all-reduce.",
            "Unfreeze what should train before wrapping (p.requires_grad_()), or do not wrap a frozen module in DDP.",
        ),
        "dist_address_in_use": Kind(
            "usage",
            r"address already in use|EADDRINUSE",
            _DDP,
            "The process group's rendezvous port (MASTER_PORT, the store's port) is already taken: a "
            "previous run that did not exit, or another notebook using the same port.",
            "Use another port (MASTER_PORT, init_method='tcp://127.0.0.1:<port>'), or end the old "
            "processes (restart that notebook's kernel); run_ranks needs no port (its ranks meet through a "
            "FileStore).",
        ),
    }
)
_SETUP_NAME = Kind(
    "notebook",
    "",
    ("notebooks/00_start.ipynb", "How to use the course"),
    "{name} is defined by the notebook's set-up cell (the first code cell, which imports torch and "
    "the course's tools), and that cell has not run since the kernel started.",
    "Run the set-up cell first (the first code cell at the top of the notebook), then the cells "
    "above this one (Run > Run All Above Selected Cell), then this cell again.",
    types=("NameError",),
)
# Causes of the not-built and non-scalar messages that the traceback tells apart (explain_refine).
_SECOND = "notebooks/12_higher_order.ipynb", "create_graph=True"
KINDS.update(
    {
        "second_derivative_no_create_graph": Kind(
            "not built",
            "",
            _SECOND,
            "You differentiate a gradient a second time (element {index} of the outputs), and the "
            "first torch.autograd.grad (or backward) ran without create_graph=True: its result is a "
            "constant for autograd, with no grad_fn.",
            "Pass create_graph=True to the first torch.autograd.grad (a gradient penalty, a "
            "Hessian-vector product): (g,) = torch.autograd.grad(loss, x, create_graph=True).",
        ),
        "second_derivative_constant": Kind(
            "not built",
            "",
            _SECOND,
            "Your code passes create_graph=True, yet the gradient you differentiate again (element "
            "{index} of the outputs) has no grad_fn: it does not depend on the inputs (the first "
            "function is linear in them, e.g. (3 * x).sum() has gradient 3 everywhere), so autograd "
            "recorded nothing. Its derivative is zero.",
            "The second derivative is 0 here: torch.autograd.grad(g.sum(), x, allow_unused=True, "
            "materialize_grads=True) returns zeros; or check g.requires_grad before differentiating "
            "again. If a nonzero result was expected, check that the function really is nonlinear.",
        ),
        "function_backward_no_grad": Kind(
            "not built",
            "",
            (_FUNCTIONS, "Double backward"),
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
            _PITFALLS_1,
            "torch.autograd.grad(outputs, inputs) was called on outputs with more than one element: "
            "without grad_outputs it starts from d(outputs)/d(outputs) = 1, which exists only for a "
            "single number.",
            "Reduce first (torch.autograd.grad(out.sum(), x)), or pass the starting gradient: "
            "torch.autograd.grad(out, x, grad_outputs=torch.ones_like(out)); for a full Jacobian use "
            "torch.func.jacrev.",
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
    types=("NameError",),
)
KINDS["setup_not_run"] = _SETUP_NAME
# An exercise's check cell run before the folded cell of check helpers right above it.
KINDS["check_helpers_not_run"] = Kind(
    "notebook",
    "",
    ("notebooks/00_start.ipynb", "How to check an answer"),
    "{name} is defined by this question's check helpers: the locked cell right above the check cell, "
    "shown folded (a bar with an ellipsis), which has not run since the kernel started.",
    "Run the check helpers (click the folded bar and press Shift-Enter; running the answer cell with "
    "Shift-Enter moves you there), then the check cell again. If {name} is a name of your own, check "
    "the cell that defines it.",
    types=("NameError",),
)
UNKNOWN = Kind(
    "unknown",
    "",
    ("notebooks/00_start.ipynb", "Contents"),
    "This message is not one of the autograd errors and warnings this explainer knows.",
    "Read PyTorch's message above; the course's lessons are listed on the start page.",
)
# Every exception type (builtin name) a known kind comes as: what the notebook extension explains.
EXCEPTION_TYPES = tuple(sorted({t for k in KINDS.values() for t in k.types}))


def kinds_by_chapter() -> dict[int, list[str]]:
    """The kinds ``explain`` knows, by the chapter whose lesson teaches each (0: the start page, for a
    cell run before the cell it needs), chapters in order, kinds in the table's order."""
    chapters: dict[int, list[str]] = {}
    for name, kind in KINDS.items():
        where = kind.lesson if isinstance(kind.lesson, str) else kind.lesson[0]
        found = re.search(r"notebooks/(\d+)_", where)
        chapters.setdefault(int(found.group(1)) if found else 0, []).append(name)
    return dict(sorted(chapters.items()))
