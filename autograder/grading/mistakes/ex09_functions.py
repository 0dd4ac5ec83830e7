"""Typical mistakes in ex09_functions: see the package docstring for the format."""

_SOFTPLUS = """class StableSoftplus(Function):
    @staticmethod
    def forward(x, beta):
        z = beta * x
        return {forward}

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, beta = inputs
        {save}
        ctx.beta = beta

    @staticmethod
    {decorator}def backward(ctx, grad_y):
        {load}
        return {grad}
"""
_STABLE = "(z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta"
_SAVE, _LOAD = "ctx.save_for_backward(x)", "(x,) = ctx.saved_tensors"
_GRAD = "grad_y * torch.sigmoid(ctx.beta * x), None"


def _softplus(forward=_STABLE, save=_SAVE, load=_LOAD, grad=_GRAD, decorator=""):
    return _SOFTPLUS.format(forward=forward, save=save, load=load, grad=grad, decorator=decorator)


_LEAKY = """class LeanLeakyReLU(Function):
    @staticmethod
    def forward(x, slope):
        return torch.where(x > 0, x, slope * x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, slope = inputs
        ctx.save_for_backward({saved})
        ctx.slope = slope

    @staticmethod
    {decorator}def backward(ctx, grad_y):
        (saved,) = ctx.saved_tensors
        return torch.where({mask}, grad_y, ctx.slope * grad_y), None
"""


def _alive(**changes):
    answer = {"x": False, "w": True, "h": True, "g": False, "y_after_del": True, **changes}
    return f"def alive():\n    return {answer!r}\n"


_ONCE = "@torch.autograd.function.once_differentiable\n    "

_SOFTCLIP = """@torch.library.custom_op("ex09::softclip", mutates_args=())
def softclip(x: torch.Tensor, limit: float) -> torch.Tensor:
    return limit * torch.tanh(x / limit)


{fake}def softclip_setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.limit = inputs[1]


def softclip_backward(ctx, grad_y):
    (y,) = ctx.saved_tensors
    return {grad}


softclip.register_autograd(softclip_backward, setup_context=softclip_setup_context)
"""
_FAKE = """@softclip.register_fake
def _(x, limit):
    return torch.empty_like(x)


"""


def _softclip(fake=_FAKE, grad="grad_y * (1 - (y / ctx.limit) ** 2), None"):
    return _SOFTCLIP.format(fake=fake, grad=grad)


MISTAKES = {
    # Q1: backward forgets the None for the number beta.
    "ex09-q1-missing-none": {
        "answers": {"q1_answer": _softplus(grad="grad_y * torch.sigmoid(ctx.beta * x)")},
        "fails": {"q1_check": "returned an incorrect number of gradients (expected 2, got 1)"},
    },
    # Q1: the formula as it reads: inf for large beta * x (only the hidden inputs are that large).
    "ex09-q1-naive-forward": {
        "answers": {"q1_answer": _softplus(forward="torch.log1p(torch.exp(z)) / beta")},
        "fails": {"q1_check": "Is forward stable (no inf or nan)"},
    },
    # Q1: x kept as a ctx attribute: gradients right, nothing saved for backward.
    "ex09-q1-ctx-attribute": {
        "answers": {"q1_answer": _softplus(save="ctx.x = x", load="x = ctx.x")},
        "fails": {"q1_check": "a tensor stored as a ctx attribute (ctx.x = x) is not saved for backward"},
    },
    # Q1: backward marked once_differentiable: the second derivative raises.
    "ex09-q1-once-differentiable": {
        "answers": {"q1_answer": _softplus(decorator=_ONCE)},
        "fails": {"q1_check": "@once_differentiable"},
    },
    # Q1: backward detaches x: the second derivative silently loses a term.
    "ex09-q1-detached-backward": {
        "answers": {"q1_answer": _softplus(grad="grad_y * torch.sigmoid(ctx.beta * x.detach()), None")},
        "fails": {"q1_check": "part of backward is not recorded under create_graph=True"},
    },
    # Q2: the input saved instead of a mask: 4 (or 8) bytes per element instead of 1.
    "ex09-q2-save-input": {
        "answers": {"q2_answer": _LEAKY.format(saved="x", mask="saved > 0", decorator="")},
        "fails": {"q2_check": "More than a bool mask is saved"},
    },
    # Q2: backward marked once_differentiable.
    "ex09-q2-once-differentiable": {
        "answers": {"q2_answer": _LEAKY.format(saved="x > 0", mask="saved", decorator=_ONCE)},
        "fails": {"q2_check": "@once_differentiable"},
    },
    # Q3: ctx attributes taken to be freed by backward, like saved tensors.
    "ex09-q3-attributes-freed": {
        "answers": {"q3_answer": _alive(h=False)},
        "fails": {"q3_check": "rethink: h"},
    },
    # Q3: the cycle through ctx.y missed: del y taken to free the output.
    "ex09-q3-no-cycle": {
        "answers": {"q3_answer": _alive(y_after_del=False)},
        "fails": {"q3_check": "rethink: y_after_del"},
    },
    # Q4: the chain rule's 1/limit forgotten: the gradient limit times too large.
    "ex09-q4-chain-rule": {
        "answers": {"q4_answer": _softclip(grad="grad_y * ctx.limit * (1 - (y / ctx.limit) ** 2), None")},
        "fails": {"q4_check": "limit times too large"},
    },
    # Q4: no fake function: eager values and gradients right, torch.compile cannot trace the op.
    "ex09-q4-no-fake": {
        "answers": {"q4_answer": _softclip(fake="")},
        "fails": {"q4_check": "opcheck found no fake function"},
    },
    # Q4: backward returns the gradient for x only, no None for the number limit.
    "ex09-q4-missing-none": {
        "answers": {"q4_answer": _softclip(grad="grad_y * (1 - (y / ctx.limit) ** 2)")},
        "fails": {"q4_check": "must return one value per input of the op"},
    },
    # Q4: a plain function (autograd differentiates its body): right numbers, not an operator.
    "ex09-q4-plain-function": {
        "answers": {"q4_answer": "def softclip(x, limit):\n    return limit * torch.tanh(x / limit)\n"},
        "fails": {"q4_check": "softclip is a plain Python function"},
    },
}
