"""Chapter 10's kinds: module hooks, tensor hooks, saved-tensor hooks (lesson 10)."""

from __future__ import annotations

from .kind import Kind, taught

_HOOKS = taught(10, "Pitfalls")
_ANY_ERROR = ("RuntimeError", "TypeError", "ValueError", "KeyError", "IndexError", "AttributeError", "OSError")
KINDS: dict[str, Kind] = {
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
        "Return a new tensor from the pack hook (t.to(torch.bfloat16), t.cpu(), t.clone()), never change its argument.",
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
# Collected later, from the lessons' pitfalls, the exercises' typical mistakes and the messages most
# reported on PyTorch's issue tracker and forums (kinds.table lists them after every chapter's KINDS).
# A kind whose pattern is "" is a cause that explain_refine tells apart from another kind's message.
MORE: dict[str, Kind] = {
    "post_accumulate_returned": Kind(
        "usage",
        r"post accumulate grad hooks should return None",
        (_HOOKS[0], "After accumulation"),
        "A hook registered with register_post_accumulate_grad_hook returned a value. It gets the "
        "parameter after .grad was written and must return None (it changes p.grad in place if it "
        "wants). A lambda returns what its expression returns: lambda p: p.grad.clamp_(-c, c) "
        "returns the clamped tensor.",
        "Write the hook with def and no return: def clip(p): p.grad.clamp_(-c, c). Not a lambda "
        "ending in 'and None': 'and' calls bool() on the gradient, which raises for more than one "
        "element and, for a single 0, returns the tensor.",
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
        "Return None (to keep {which}) or a tuple like it: tuple(g * 2 if g is not None else None for g in {which}).",
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
}
