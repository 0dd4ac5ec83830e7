"""Chapter 12's kinds: gradients of gradients, torch.func transforms, NaN gradients (lesson 12)."""

from __future__ import annotations

from .graph import GRAD_MODES
from .kind import Kind, taught

_FUNC = taught(12, "Pitfalls")
KINDS: dict[str, Kind] = {
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
# Collected later, from the lessons' pitfalls, the exercises' typical mistakes and the messages most
# reported on PyTorch's issue tracker and forums (kinds.table lists them after every chapter's KINDS).
# A kind whose pattern is "" is a cause that explain_refine tells apart from another kind's message.
MORE: dict[str, Kind] = {
    "vmap_batch_norm": Kind(
        "usage",
        r"Batch norm got a batched tensor as input while the running_mean or running_var, which will "
        r"be updated in place, were not batched",
        _FUNC,
        "A BatchNorm in training mode ran under vmap: it would update its running_mean and "
        "running_var in place with one value per sample, and those buffers hold one value only.",
        "For per-sample gradients (one sample per vmap slice) put the model in eval() mode: in training "
        "mode BatchNorm needs more than one value per channel. torch.func.replace_all_batch_norm_modules_(model) "
        "(or track_running_stats=False) works only where each slice holds several samples.",
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
        GRAD_MODES,
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
}
