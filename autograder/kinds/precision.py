"""Chapter 11's kinds: mixed precision, autocast and GradScaler (lesson 11)."""

from __future__ import annotations

from .kind import Kind, taught

# Chapter 11: mixed precision (autocast, GradScaler).
_PRECISION = taught(11, "Pitfalls")
KINDS: dict[str, Kind] = {
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
# Collected later, from the lessons' pitfalls, the exercises' typical mistakes and the messages most
# reported on PyTorch's issue tracker and forums (kinds.table lists them after every chapter's KINDS).
# A kind whose pattern is "" is a cause that explain_refine tells apart from another kind's message.
MORE: dict[str, Kind] = {
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
        r"`torch\.(?P<device>cuda|cpu)\.amp\.(?P<api>GradScaler|autocast|custom_fwd|custom_bwd)\(args\.\.\.\)` "
        r"is deprecated",
        (_PRECISION[0], "On a GPU"),
        "torch.{device}.amp.{api} is the old name of torch.amp.{api} with device '{device}'; it still works and warns.",
        "Write torch.amp.{api}('{device}', ...) (device_type='{device}' for custom_fwd and custom_bwd).",
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
}
