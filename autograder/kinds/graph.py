"""Chapters 1-8's kinds: the graph not built or consumed, tensors it saved changed in place, and
autograd calls used the wrong way (backward, grad modes, checkpointing)."""

from __future__ import annotations

from .functions import FUNCTIONS
from .kind import MODIFIED_INPLACE, Kind, taught

_CHANGED = taught(5, "Pitfalls")
_CONSUMED = taught(3, "Pitfalls")
_CHECKPOINT = taught(8, "Pitfalls")
PITFALLS_1 = taught(1, "Pitfalls")
GRAD_MODES = taught(6, "Pitfalls")
KINDS: dict[str, Kind] = {
    "not_built": Kind(
        "not built",
        r"element (?P<index>\d+) of tensors does not require grad and does not have a grad_fn",
        PITFALLS_1,
        "The tensor you called backward() on (element {index} of the outputs) has "
        "requires_grad=False and grad_fn=None: no operation was recorded, so there is no graph "
        "to walk. Usually no input required grad, the forward ran under torch.no_grad() or "
        "inference_mode(), every parameter is frozen, or the value went through .item(), "
        ".detach() or argmax/comparison; or it is a gradient that autograd.grad computed without "
        "create_graph=True, differentiated a second time.{seen}",
        "Find where the value left the graph and keep it in: compute the loss outside torch.no_grad(), "
        "keep it a tensor (no .item(), float(), .detach() or NumPy inside it), join several losses with "
        "torch.stack(list) or sum(list), not torch.tensor(list), and build it from the model's float "
        "output, not from argmax or a comparison. Setting requires_grad on the loss or on a tensor made "
        "from it is no fix: it makes a new leaf, and the parameters still get no gradient; only a trainable "
        "input you create yourself is made with requires_grad=True. Check with print(loss.grad_fn) after "
        "each step: it must not be None. For a second derivative (a gradient penalty, a Hessian-vector "
        "product) pass create_graph=True to the first torch.autograd.grad.",
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
        "y[i] = ..., nn.ReLU(inplace=True){or_step}. Write it out of place "
        "(y = y + 1), or clone() first{step_rule}. "
        "torch.autograd.set_detect_anomaly(True) names the forward line whose gradient failed.",
    ),
    "view_inplace": Kind(
        "changed",
        r"(?:Output (?P<output>\d+) of (?P<op>\w+) is a view|A view was created in "
        r"(?P<mode>no_grad) mode) and (?:(?P<base>its base or another view of its base has "
        r"been)|is being) modified inplace",
        _CHANGED,
        "{what} {why}",
        "{fix}",
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
        GRAD_MODES,
        "{what} Inference tensors carry no version counter, so autograd cannot check them.",
        "{fix}",
    ),
    "inference_version": Kind(
        "changed",
        r"Inference tensors do not track version counter",
        GRAD_MODES,
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
        taught(2, "warning for a non-leaf"),
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
        PITFALLS_1,
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
        (FUNCTIONS, "What backward returns"),
        "The backward() of your autograd.Function {function} returned {got} gradient(s), but "
        "its forward() takes {expected} inputs (after ctx): backward must return one value per "
        "input.",
        "Return a tuple of {expected} values, in the order of forward's arguments, with None "
        "for inputs that need no gradient (numbers, flags): e.g. return grad_x, None.",
    ),
}
