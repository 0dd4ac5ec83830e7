"""The corpus of ``tests/grading/corpus.py`` for chapters 9 to 14: wrong answers written from the lessons
(not from the checks' messages), none among the typical mistakes, each with the words of the feedback that
name its actual cause; and correct answers written in unusual ways, which must get full marks."""

WRONG = {
    "ex09_functions": {
        "h-09-float-mask": {
            "cause": "saves the mask converted to x's dtype ((x > 0).to(x.dtype)): 4 or 8 bytes per element, "
            "not a torch.bool mask",
            "answers": {
                "q2_answer": """class LeanLeakyReLU(Function):
    @staticmethod
    def forward(ctx, x, slope):
        mask = (x > 0).to(x.dtype)
        ctx.save_for_backward(mask)
        ctx.slope = slope
        return x * (mask + (1 - mask) * slope)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad * (mask + (1 - mask) * ctx.slope), None
"""
            },
            "fails": {"q2_check": "Your mask is saved as torch.float32 (4 bytes per element), not torch.bool"},
        },
        "c09-one-gradient": {
            "cause": "backward returns only the gradient for x, no None for the number beta",
            "answers": {
                "q1_answer": """class StableSoftplus(Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x)
        ctx.beta = beta
        z = beta * x
        return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        return grad_y * torch.sigmoid(ctx.beta * x)
"""
            },
            "fails": {"q1_check": "backward must return one value per input"},
        },
        "c09-ctx-attribute": {
            "cause": "keeps x as a ctx attribute instead of saving it with save_for_backward",
            "answers": {
                "q1_answer": """class StableSoftplus(Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.x, ctx.beta = x, beta
        z = beta * x
        return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta

    @staticmethod
    def backward(ctx, grad_y):
        return grad_y * torch.sigmoid(ctx.beta * ctx.x), None
"""
            },
            "fails": {"q1_check": "a tensor stored as a ctx attribute (ctx.x = x) is not saved for backward"},
        },
        "c09-detached-backward": {
            "cause": "backward computes the sigmoid of a detached x: the second derivative loses its term",
            "answers": {
                "q1_answer": """class StableSoftplus(Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x)
        ctx.beta = beta
        z = beta * x
        return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        return grad_y * torch.sigmoid(ctx.beta * x.detach()), None
"""
            },
            "fails": {"q1_check": "part of backward is not recorded under create_graph=True (a .detach()"},
        },
        "c09-saves-x": {
            "cause": "the leaky ReLU saves x (float) and builds the mask in backward",
            "answers": {
                "q2_answer": """class LeanLeakyReLU(Function):
    @staticmethod
    def forward(ctx, x, slope):
        ctx.save_for_backward(x)
        ctx.slope = slope
        return torch.where(x > 0, x, slope * x)

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        return torch.where(x > 0, grad_y, ctx.slope * grad_y), None
"""
            },
            "fails": {"q2_check": "More than a bool mask is saved"},
        },
        "c09-w-freed": {
            "cause": "thinks w, saved with save_for_backward, is freed by backward like x and g",
            "answers": {
                "q3_answer": """def alive():
    return {"x": False, "w": False, "h": True, "g": False, "y_after_del": True}
"""
            },
            "fails": {"q3_check": "it is a leaf that requires grad"},
        },
        "c09-q4-fake-one-row": {
            "cause": "the fake function returns one row fewer dimensions than the op (x.new_empty(x.shape[:-1]))",
            "answers": {
                "q4_answer": """@torch.library.custom_op("ex09::softclip", mutates_args=())
def softclip(x: torch.Tensor, limit: float) -> torch.Tensor:
    return limit * torch.tanh(x / limit)


@softclip.register_fake
def _(x, limit):
    return x.new_empty(x.shape[:-1])


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.limit = inputs[1]


def backward(ctx, grad_y):
    (s,) = ctx.saved_tensors
    return grad_y * (1 - (s / ctx.limit) ** 2), None


softclip.register_autograd(backward, setup_context=setup_context)
""",
            },
            "fails": {"q4_check": "found another shape"},
        },
        "c09-q4-output-formula-on-x": {
            "cause": "saves x but applies the output's formula 1 - (y / limit)^2 to it",
            "answers": {
                "q4_answer": """@torch.library.custom_op("ex09::softclip", mutates_args=())
def softclip(x: torch.Tensor, limit: float) -> torch.Tensor:
    return limit * torch.tanh(x / limit)


@softclip.register_fake
def _(x, limit):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.limit = inputs[1]


def backward(ctx, grad_y):
    (s,) = ctx.saved_tensors
    return grad_y * (1 - (s / ctx.limit) ** 2), None


softclip.register_autograd(backward, setup_context=setup_context)
""",
            },
            "fails": {"q4_check": "which is 1 - (y / limit)**2 for the output y"},
        },
        "c09-q4-divided-by-limit": {
            "cause": "divides the derivative by limit once more",
            "answers": {
                "q4_answer": """@torch.library.custom_op("ex09::softclip", mutates_args=())
def softclip(x: torch.Tensor, limit: float) -> torch.Tensor:
    return limit * torch.tanh(x / limit)


@softclip.register_fake
def _(x, limit):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.limit = inputs[1]


def backward(ctx, grad_y):
    (s,) = ctx.saved_tensors
    return grad_y * (1 - (s / ctx.limit) ** 2) / ctx.limit, None


softclip.register_autograd(backward, setup_context=setup_context)
""",
            },
            "fails": {"q4_check": "1/limit too small"},
        },
    },
    "ex10_hooks": {
        "h-10-unpack-as-stored": {
            "cause": "unpack hands back the float16 copy as it is: backward meets float32 with float16",
            "answers": {
                "q4_answer": """def half_precision_hooks(params):
    keep = {id(p) for p in params}

    def pack(t):
        return t if id(t) in keep else (t.dtype, t.half())

    def unpack(packed):
        return packed if isinstance(packed, torch.Tensor) else packed[1]

    return pack, unpack
"""
            },
            "fails": {"q4_check": "calls your unpack hook for each saved tensor"},
        },
        "c10-named-children": {
            "cause": "walks named_children() (one level), so nested modules are never hooked",
            "answers": {
                "q1_answer": """def attach_grad_norm_hooks(model, log):
    handles = []
    for name, module in model.named_children():
        def forward_hook(module, args, out, name=name):
            out.register_hook(lambda g: log.append((name, g.norm().item())))
        handles.append(module.register_forward_hook(forward_hook))
    return handles
"""
            },
            "fails": {"q1_check": "a nested module is named by its path"},
        },
        "c10-hook-returns-tensor": {
            "cause": "a post-accumulate-grad hook that returns the clamped tensor (it must return None)",
            "answers": {
                "q2_answer": """def attach_clip_hooks(model, clip):
    return [p.register_post_accumulate_grad_hook(lambda p: p.grad.clamp_(-clip, clip)) for p in model.parameters()]
"""
            },
            "fails": {"q2_check": "Tensor post accumulate grad hooks should return None"},
        },
        "c10-frozen-hooked": {
            "cause": "registers the fused step on every parameter, frozen ones too",
            "answers": {
                "q3_answer": """def fuse_sgd_into_backward(model, lr):
    def step(p):
        with torch.no_grad():
            p.add_(p.grad, alpha=-lr)
        p.grad = None
    return [p.register_post_accumulate_grad_hook(step) for p in model.parameters()]


def peak_grad_bytes(model, fused):
    sizes = [p.numel() * p.element_size() for p in model.parameters() if p.requires_grad]
    return max(sizes) if fused else sum(sizes)
"""
            },
            "fails": {"q3_check": "a tensor with requires_grad=False"},
        },
        "c10-fused-peak-is-sum": {
            "cause": "predicts the fused peak to be every gradient at once, as without fusing",
            "answers": {
                "q3_answer": """def fuse_sgd_into_backward(model, lr):
    def step(p):
        with torch.no_grad():
            p.add_(p.grad, alpha=-lr)
        p.grad = None
    return [p.register_post_accumulate_grad_hook(step) for p in model.parameters() if p.requires_grad]


def peak_grad_bytes(model, fused):
    return sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
"""
            },
            "fails": {"q3_check": "with the step fused, each .grad is freed before the next one is made"},
        },
        "c10-params-halved-too": {
            "cause": "the pack hook stores every saved tensor in 16 bits, the parameters too",
            "answers": {
                "q4_answer": """def half_precision_hooks(params):
    def pack(t):
        return (t.dtype, t.to(torch.bfloat16))

    def unpack(packed):
        dtype, half = packed
        return half.to(dtype)

    return pack, unpack
"""
            },
            "fails": {"q4_check": "a 16-bit copy of a weight is extra memory"},
        },
    },
    "ex11_mixed_precision": {
        "c11-cache-off": {
            "cause": "counts under an autocast region with its cast cache switched off",
            "answers": {
                "q1_answer": """def count_casts(model, x):
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
        out = model(x)
    return trace(out).counts().get("ToCopyBackward0", 0)
"""
            },
            "fails": {"q1_check": "a parameter used twice is cast once"},
        },
        "c11-output-cast-back": {
            "cause": "casts the output back to float32 inside the region and counts that cast too",
            "answers": {
                "q1_answer": """def count_casts(model, x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x).float()
    return trace(out).counts().get("ToCopyBackward0", 0)
"""
            },
            "fails": {"q1_check": "cast back to float32 (.float()) counted"},
        },
        "c11-input-in-float32": {
            "cause": "counts x in float32 (4 B) where its bfloat16 copy is saved",
            "answers": {
                "q2_answer": """def saved_bytes_bf16(widths, batch):
    x = batch * widths[0] * 4
    relus = batch * sum(widths[1:-1]) * 2
    weights = sum(widths[i] * widths[i + 1] for i in range(1, len(widths) - 1)) * 2
    return x + relus + weights
"""
            },
            "fails": {"q2_check": "the bfloat16 copy of x (2 B per element) counted twice (or at 4 B per element"},
        },
        "c11-biases-counted": {
            "cause": "counts the bfloat16 copies of the biases, which addmm's backward does not need",
            "answers": {
                "q2_answer": """def saved_bytes_bf16(widths, batch):
    activations = batch * sum(widths[:-1]) * 2
    weights = sum(widths[i] * widths[i + 1] for i in range(1, len(widths) - 1)) * 2
    biases = sum(widths[1:]) * 2
    return activations + weights + biases
"""
            },
            "fails": {"q2_check": "the bias of layer 1 (addmm's backward needs no bias)"},
        },
        "c11-update-before-step": {
            "named": "partly: the order is named, but the explainer guesses update() was forgotten",
            "cause": "calls scaler.update() before scaler.step(optimizer)",
            "answers": {
                "q3_answer": """def scaled_step(model, optimizer, scaler, x, y, max_norm):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.update()
    scaler.step(optimizer)
"""
            },
            "fails": {"q3_check": "here a call came out of that order"},
        },
    },
    "ex12_higher_order": {
        "h-12-bytes-float32": {
            "cause": "per_sample_bytes assumes 4 bytes per element (float32) instead of each parameter's "
            "element_size()",
            "answers": {
                "q3_answer": """def per_sample_grads(model, loss_fn, x, y):
    trainable = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    fixed = {n: p.detach() for n, p in model.named_parameters() if not p.requires_grad}
    fixed.update(dict(model.named_buffers()))

    def loss_one(params, xi, yi):
        out = functional_call(model, {**params, **fixed}, (xi.unsqueeze(0),))
        return loss_fn(out, yi.unsqueeze(0))

    return vmap(grad(loss_one), in_dims=(None, 0, 0))(trainable, x, y)


def per_sample_bytes(model, batch_size):
    return sum(batch_size * p.numel() * 4 for p in model.parameters() if p.requires_grad)
"""
            },
            "fails": {"q3_check": "take each tensor's size from its dtype: numel() * element_size()"},
        },
        "c12-no-create-graph": {
            "cause": "takes the inner gradient without create_graph: the penalty does not reach the critic",
            "answers": {
                "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat)
    return (torch.relu(g.norm(dim=1) - 1) ** 2).mean()
"""
            },
            "fails": {"q2_check": "create_graph=True"},
        },
        "c12-mean-of-scores": {
            "cause": "differentiates the mean of the scores: each sample's gradient is divided by N",
            "answers": {
                "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).mean(), x_hat, create_graph=True)
    return (torch.relu(g.norm(dim=1) - 1) ** 2).mean()
"""
            },
            "fails": {"q2_check": "not the mean: that divides each sample's gradient by N"},
        },
        "c12-batch-loss": {
            "cause": "vmaps grad over a loss of the whole batch, not of one sample",
            "answers": {
                "q3_answer": """def per_sample_grads(model, loss_fn, x, y):
    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    def loss(params):
        return loss_fn(functional_call(model, params, (x,)), y)
    g = grad(loss)(params)
    return {n: t.expand(len(x), *t.shape).clone() for n, t in g.items()}


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
"""
            },
            "fails": {"q3_check": "a loss reduced over the whole batch"},
        },
        "c12-where-only": {
            "cause": "masks r ** 2 * log(r) with torch.where only: the unused branch's gradient is NaN",
            "answers": {
                "q5_answer": """def thin_plate(v):
    r = v.norm(dim=1)
    return torch.where(r > 0, r ** 2 * torch.log(r), torch.zeros_like(r))
"""
            },
            "fails": {"q5_check": "torch.where's backward sends the unused branch a gradient of 0"},
        },
        "c12-q1-func-grad-records": {
            "cause": "takes torch.func.grad's result to carry a graph, as create_graph=True does",
            "answers": {
                "q1_answer": """def graph_recorded():
    return {"A": False, "B": True, "C": True, "D": False, "E": True, "F": False, "G": True, "H": False}
""",
            },
            "fails": {"q1_check": "rethink: C"},
        },
        "c12-q1-forward-mode-never-records": {
            "cause": "takes forward mode to record nothing, whatever requires grad",
            "answers": {
                "q1_answer": """def graph_recorded():
    return {"A": False, "B": True, "C": False, "D": False, "E": False, "F": False, "G": False, "H": False}
""",
            },
            "fails": {"q1_check": "rethink: E, G"},
        },
        "c12-q2-wrong-side": {
            "cause": "penalises the norms below 1 instead of above",
            "answers": {
                "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return (torch.clamp(1 - g.norm(dim=1), min=0) ** 2).mean()
""",
            },
            "fails": {"q2_check": "the wrong side: norms BELOW 1 penalised"},
        },
        "c12-q2-unsquared": {
            "cause": "leaves out the square of max(norm - 1, 0)",
            "answers": {
                "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return torch.clamp(g.norm(dim=1) - 1, min=0).mean()
""",
            },
            "fails": {"q2_check": "the square left out"},
        },
        "c12-q4-finite-difference": {
            "cause": "approximates J v by a finite difference under no_grad: no forward-mode AD",
            "answers": {
                "q4_answer": """def jvp_no_graph(model, x, v):
    with torch.no_grad():
        out = model(x)
        return out, (model(x + 1e-3 * v) - out) / 1e-3
""",
            },
            "fails": {"q4_check": "No dual tensor reached the model: the product was not computed by forward-mode AD"},
        },
        "c12-q4-vjp": {
            "cause": "computes a vector-Jacobian product by a backward (reverse mode) instead of J v",
            "answers": {
                "q4_answer": """def jvp_no_graph(model, x, v):
    x = x.detach().requires_grad_()
    out = model(x)
    (g,) = torch.autograd.grad(out, x, torch.ones_like(out))
    return out.detach(), g * v
""",
            },
            "fails": {"q4_check": "that is reverse mode"},
        },
        "c12-q4-frozen-parameters": {
            "cause": "switches requires_grad off for the parameters instead of using no_grad",
            "answers": {
                "q4_answer": """def jvp_no_graph(model, x, v):
    model.requires_grad_(False)
    with fwAD.dual_level():
        out, tangent = fwAD.unpack_dual(model(fwAD.make_dual(x, v)))
    return out, tangent
""",
            },
            "fails": {"q4_check": "switched off requires_grad of the model's parameters"},
        },
    },
    "ex13_compile": {
        "h-13-four-bytes": {
            "cause": "uses 4 bytes per element whatever the dtype (forgets float64 is 8 bytes); "
            "the counts of saved tensors are right",
            "answers": {
                "q2_answer": """def predict_saved_bytes(block, n, dtype):
    size = 4
    if block == "softplus_cubed":
        return {"eager": 2 * n * size, "aot_eager": n * size}
    return {"eager": 4 * n * size, "aot_eager": 2 * n * size}
"""
            },
            "fails": {"q2_check": "each element counted at fewer bytes than its dtype has"},
        },
        "c13-loop-breaks": {
            "cause": "thinks each pass of a Python loop over range breaks the graph",
            "answers": {
                "q1_answer": """def predicted_breaks():
    return {"a": 0, "b": 1, "c": 3, "d": 0, "e": 1, "f": 2, "g": 1, "h": 1}
"""
            },
            "fails": {"q1_check": "a loop over range"},
        },
        "c13-shared-counted-twice": {
            "cause": "counts exp's result once for exp and once for log1p (one storage)",
            "answers": {
                "q2_answer": """def predict_saved_bytes(block, n, dtype):
    size = n * torch.empty((), dtype=dtype).element_size()
    if block == "softplus_cubed":
        return {"eager": 3 * size, "aot_eager": size}
    return {"eager": 4 * size, "aot_eager": 2 * size}
"""
            },
            "fails": {"q2_check": "exp(x) (saved by exp and by log1p: one storage) counted twice"},
        },
        "c13-scale-not-detached": {
            "cause": "keeps the scale a tensor without detach(): a gradient flows through it",
            "answers": {
                "q3_answer": """def scaled_loss_one_graph(x, w):
    h = torch.tanh(x @ w)
    h = torch.where(h.sum() > 0, h + 1, h)
    return (h / h.abs().max()).pow(2).sum()
"""
            },
            "fails": {"q3_check": "A tensor scale needs detach()"},
        },
    },
    "ex14_distributed": {
        "h-14-ddp-divides-again": {
            "cause": "wraps the model in DDP and also divides the loss by world_size: DDP already averages",
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    ddp = DDP(model)
    out = ddp(x.chunk(world_size)[rank])
    loss = nn.functional.mse_loss(out, y.chunk(world_size)[rank], reduction="mean") / world_size
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters()}
"""
            },
            "fails": {"q1_check": "DDP already averages the gradients"},
        },
        "h-14-all-reduce-divides-twice": {
            "cause": "all-reduces the gradients and divides both the loss and the sum by world_size",
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    xs, ys = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    (nn.functional.mse_loss(model(xs), ys) / world_size).backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad.div_(world_size)
    return {name: p.grad for name, p in model.named_parameters()}
"""
            },
            "fails": {"q1_check": "divided by world_size twice"},
        },
        "c14-ddp-unused": {
            "cause": "wraps the model in DDP but runs the forward through the plain module",
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    ddp = DDP(model)
    nn.functional.mse_loss(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank]).backward()
    return {name: p.grad for name, p in model.named_parameters()}
"""
            },
            "fails": {"q1_check": "the forward ran through the plain model (model(x), not ddp(x))"},
        },
        "c14-all-reduce-copies": {
            "cause": "all-reduces copies of the gradients and never writes them back",
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    nn.functional.mse_loss(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank]).backward()
    for p in model.parameters():
        g = p.grad.clone()
        dist.all_reduce(g)
        g /= world_size
    return {name: p.grad for name, p in model.named_parameters()}
"""
            },
            "fails": {"q1_check": "all_reduce works in place on the tensor it is given"},
        },
        "c14-closed-early": {
            "cause": "closes a bucket before adding the gradient that would take it past the cap",
            "answers": {
                "q2_answer": """def allreduce_per_step(model, bucket_cap_bytes, micro_batches, use_no_sync):
    buckets, current = [], 0
    for p in reversed(list(model.parameters())):
        size = p.numel() * p.element_size()
        if current and current + size > bucket_cap_bytes:
            buckets.append(current)
            current = 0
        current += size
    if current:
        buckets.append(current)
    syncs = 1 if use_no_sync else micro_batches
    return syncs * len(buckets), syncs * sum(buckets)
"""
            },
            "fails": {"q2_check": "closed before the gradient that would take them past the"},
        },
        "c14-sorted-names": {
            "cause": "returns the parameter names sorted, as if backward went through them alphabetically",
            "answers": {
                "q3_answer": """def grad_ready_order(model, x):
    model(x).sum().backward()
    return sorted(name for name, p in model.named_parameters() if p.grad is not None)
"""
            },
            "fails": {"q3_check": "That is the names sorted"},
        },
        "c14-q4-elements": {
            "cause": "counts the buckets' elements, not their bytes",
            "answers": {
                "q4_answer": """def default_buckets(model, find_unused_parameters):
    sizes = [p.numel() for p in model.parameters()]
    order = sizes if find_unused_parameters else sizes[::-1]
    buckets, current = [], 0
    for size in order:
        current += size
        if current * 4 >= (2**20 if not buckets else 25 * 2**20):
            buckets.append(current)
            current = 0
    if current:
        buckets.append(current)
    return buckets[::-1] if find_unused_parameters else buckets
""",
            },
            "fails": {"q4_check": "Elements counted, not bytes"},
        },
        "c14-q4-closed-early": {
            "cause": "closes a bucket before adding the gradient that would take it past the cap",
            "answers": {
                "q4_answer": """def default_buckets(model, find_unused_parameters):
    sizes = [p.numel() * p.element_size() for p in model.parameters()]
    order = sizes if find_unused_parameters else sizes[::-1]
    buckets, current = [], 0
    for size in order:
        cap = dist._DEFAULT_FIRST_BUCKET_BYTES if not buckets else 25 * 2**20
        if current and current + size > cap:
            buckets.append(current)
            current = 0
        current += size
    if current:
        buckets.append(current)
    return buckets[::-1] if find_unused_parameters else buckets
""",
            },
            "fails": {"q4_check": "closed before the gradient that would take them past the cap"},
        },
        "c14-q4-iteration-zero": {
            "cause": "gives the default DDP iteration 0's single bucket, as if never rebuilt",
            "answers": {
                "q4_answer": """def default_buckets(model, find_unused_parameters):
    sizes = [p.numel() * p.element_size() for p in model.parameters()]
    if not find_unused_parameters:
        return [sum(sizes)]
    buckets, current = [], 0
    for size in sizes:
        current += size
        if current >= (dist._DEFAULT_FIRST_BUCKET_BYTES if not buckets else 25 * 2**20):
            buckets.append(current)
            current = 0
    return (buckets + [current] * (current > 0))[::-1]
""",
            },
            "fails": {"q4_check": "that is iteration 0, before the rebuild"},
        },
    },
}

CORRECT = {
    "ex09_functions": {
        "u09-mask-arithmetic": {
            "answers": {
                "q2_answer": """class LeanLeakyReLU(Function):
    @staticmethod
    def forward(ctx, x, slope):
        mask = x.gt(0)
        ctx.save_for_backward(mask)
        ctx.slope = slope
        return x * (mask + slope * ~mask)

    @staticmethod
    def backward(ctx, grad_y):
        (mask,) = ctx.saved_tensors
        return grad_y * (mask + ctx.slope * ~mask), None
"""
            }
        },
        "u09-q4-saves-x": {
            "answers": {
                "q4_answer": """@torch.library.custom_op("ex09::softclip", mutates_args=())
def softclip(x: torch.Tensor, limit: float) -> torch.Tensor:
    return torch.tanh(x / limit).mul(limit)


softclip.register_fake(lambda x, limit: x.new_empty(x.shape))


def setup_context(ctx, inputs, output):
    x, limit = inputs
    ctx.save_for_backward(x)
    ctx.limit = limit


def backward(ctx, grad_y):
    (x,) = ctx.saved_tensors
    return grad_y / torch.cosh(x / ctx.limit) ** 2, None


softclip.register_autograd(backward, setup_context=setup_context)
""",
            }
        },
    },
    "ex10_hooks": {
        "u10-clip-in-place-data": {
            "answers": {
                "q2_answer": """def attach_clip_hooks(model, clip):
    def hook(p):
        with torch.no_grad():
            p.grad.copy_(p.grad.clamp(-clip, clip))
    return [p.register_post_accumulate_grad_hook(hook) for p in model.parameters()]
"""
            }
        }
    },
    "ex11_mixed_precision": {
        "u11-loop-formula": {
            "answers": {
                "q2_answer": """def saved_bytes_bf16(widths, batch):
    total = 0
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        total += 2 * batch * a            # the Linear's bfloat16 input (x's copy, or the ReLU output)
        if i > 0:
            total += 2 * a * b            # its weight's copy, saved for the gradient of its input
    return total
"""
            }
        }
    },
    "ex12_higher_order": {
        "u12-squared-norm": {
            "answers": {
                "q5_answer": """def thin_plate(v):
    r2 = (v * v).sum(dim=1)
    safe = torch.where(r2 > 0, r2, torch.ones_like(r2))
    return torch.where(r2 > 0, 0.5 * safe * torch.log(safe), torch.zeros_like(r2))
"""
            }
        },
        "u12-q2-clamp": {
            "answers": {
                "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat), x_hat, torch.ones(len(x_hat), 1, dtype=x_hat.dtype), create_graph=True)
    return (g.norm(dim=1).clamp(min=1) - 1).pow(2).mean()
""",
            }
        },
        "u12-q4-func-jvp": {
            "answers": {
                "q4_answer": """def jvp_no_graph(model, x, v):
    with torch.no_grad():
        return jvp(model, (x,), (v,))
""",
            }
        },
    },
    "ex13_compile": {
        "u13-arithmetic-branch": {
            "answers": {
                "q3_answer": """def scaled_loss_one_graph(x, w):
    h = torch.tanh(x @ w)
    h = h + (h.sum() > 0).to(h.dtype)
    return (h / h.detach().abs().amax()).pow(2).sum()
"""
            }
        }
    },
    "ex14_distributed": {
        "u14-tensor-hooks": {
            "answers": {
                "q3_answer": """def grad_ready_order(model, x):
    order = []
    names = {p: n for n, p in model.named_parameters()}
    handles = [p.register_post_accumulate_grad_hook(lambda p: order.append(names[p])) for p in names]
    try:
        model(x).sum().backward()
    finally:
        for h in handles:
            h.remove()
    return list(order)
"""
            }
        },
        "u14-q4-caps-as-a-list": {
            "answers": {
                "q4_answer": """def default_buckets(model, find_unused_parameters):
    params = list(model.parameters())
    if not find_unused_parameters:
        params.reverse()                      # rebuilt in the order gradients become ready
    caps = iter([dist._DEFAULT_FIRST_BUCKET_BYTES])
    buckets, filled = [], 0
    cap = next(caps)
    for p in params:
        filled += p.numel() * p.element_size()
        if filled >= cap:
            buckets.append(filled)
            filled, cap = 0, next(caps, 25 * 1024 * 1024)
    buckets += [filled] if filled else []
    return list(reversed(buckets)) if find_unused_parameters else buckets
""",
            }
        },
    },
}
