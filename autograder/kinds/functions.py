"""Chapter 9's kinds: custom autograd Functions (lesson 09)."""

from __future__ import annotations

from .kind import LESSONS, Kind

FUNCTIONS = LESSONS[9]
KINDS: dict[str, Kind] = {
    "custom_function_view_inplace": Kind(
        "changed",
        # not when the Function is the one a full backward hook inserts (chapter 10's kind)
        r"(?<!BackwardHookFunction is a view and is being modified inplace\. )"
        r"(?<!BackwardHookFunctionBackward is a view and is being modified inplace\. )"
        r"This view was created inside a custom Function",
        (FUNCTIONS, "mark_dirty"),
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
        (FUNCTIONS, "Double backward"),
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
        (FUNCTIONS, "What backward returns"),
        "The backward() of your autograd.Function {function} returned a gradient at position "
        "{position} (counting from 1), but forward's argument there (after ctx) is not a tensor: "
        "a number, a flag, None. Only tensor inputs can receive a gradient.",
        "Return None at position {position}, e.g. return grad_x, None for forward(ctx, x, scale).",
    ),
    "custom_function_grad_shape": Kind(
        "usage",
        r"Function (?P<function>\w+) returned an invalid gradient at index (?P<index>\d+) - got "
        r"\[(?P<got>[\d, ]*)\] but expected shape compatible with \[(?P<want>[\d, ]*)\]",
        (FUNCTIONS, "What backward returns"),
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
        (FUNCTIONS, "torch.func"),
        "{what}",
        "{fix}",
    ),
}
# Collected later, from the lessons' pitfalls, the exercises' typical mistakes and the messages most
# reported on PyTorch's issue tracker and forums (kinds.table lists them after every chapter's KINDS).
# A kind whose pattern is "" is a cause that explain_refine tells apart from another kind's message.
MORE: dict[str, Kind] = {
    "custom_function_save_non_tensor": Kind(
        "usage",
        r"save_for_backward can only save variables, but argument (?P<position>\d+) is of type (?P<type>[\w.]+)",
        (FUNCTIONS, "save_for_backward or a ctx attribute"),
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
        (FUNCTIONS, "forward, setup_context, backward"),
        "The autograd.Function was instantiated and called, MyFunction()(x): PyTorch's style before "
        "1.3. A Function is a class whose forward and backward are static methods, used through "
        "the class.",
        "Call MyFunction.apply(x), never MyFunction()(x) or MyFunction.forward(...); write forward "
        "and backward as @staticmethod, with ctx as their first argument.",
    ),
    "custom_function_no_backward": Kind(
        "usage",
        r"You must implement either the backward or vjp method for your custom autograd\.Function",
        (FUNCTIONS, "forward, setup_context, backward"),
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
        (FUNCTIONS, "torch.func"),
        "Forward-mode AD (torch.func.jvp or jacfwd, dual tensors of torch.autograd.forward_ad) went "
        "through your autograd.Function, which has a backward (reverse mode) but no jvp.",
        "Use reverse mode (jacrev, vjp, grad), which uses backward; or write @staticmethod "
        "jvp(ctx, *tangents) (forward and setup_context written apart, ctx.save_for_forward(...)).",
        types=("NotImplementedError",),
    ),
    "custom_function_setup_context_signature": Kind(
        "usage",
        r"missing (?:a|\d+) required (?:positional )?argument",
        (FUNCTIONS, "forward, setup_context, backward"),
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
        (FUNCTIONS, "What backward returns"),
        "{function}() is called with one gradient per output of forward (after ctx): {given} "
        "arguments, and it takes {takes}.",
        "Give backward one argument per output of forward after ctx, def backward(ctx, grad_a, "
        "grad_b), or def backward(ctx, *grads); outputs marked non-differentiable get one too.",
        types=("TypeError",),
    ),
    "gradcheck_mismatch": Kind(
        "usage",
        r"Jacobian mismatch for output (?P<output>\d+) with respect to input (?P<input>\d+)",
        (FUNCTIONS, "gradcheck"),
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
        (FUNCTIONS, "gradcheck"),
        "gradcheck ran on inputs that are not float64: its finite differences in float32 are too "
        "imprecise, so numerical and analytical Jacobians differ even for a correct backward "
        "(output {output}, input {input}).",
        "Give gradcheck float64 inputs: torch.randn(3, dtype=torch.float64, requires_grad=True); "
        "only then does a mismatch mean that backward is wrong.",
    ),
    "gradgradcheck_mismatch": Kind(
        "usage",
        "",
        (FUNCTIONS, "gradgradcheck"),
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
        (FUNCTIONS, "gradcheck"),
        "gradcheck warns that an input is not float64: finite differences in float32 are too "
        "imprecise, and the check will likely fail even for a correct backward.",
        "Give gradcheck and gradgradcheck float64 inputs (dtype=torch.float64).",
    ),
    # chapter 10: hooks
}
