"""Counterexamples of causes (issue 51): for each detector whose text states a cause, a wrong answer whose run
makes that text false, and the answers the issue found told a false cause (a penalty's side effect graded
13/13, .grad aliases zeroed in place called a cut graph, a broadcast called "each rank kept its own shard", many
checkpoints told to use several segments, a fake that aliases its input told of another shape, a byte excess
matched to a part by its size alone).

``WRONG = {exercise: {student_id: {"cause", "answers", "fails", "never"}}}``: every other answer cell is the
solution's. ``fails``: each test cell that must fail, to words its message must hold; ``never``: words of a cause
that is false for this answer, which no message may hold.
"""

WRONG = {
    "ex03_backward": {
        "c51-03-aliases-zeroed-in-place": {
            "cause": "returns p.grad itself (not a copy), then zeroes .grad in place: the dict it returned is all 0",
            "answers": {
                "q2_answer": """def grads_summed(trunk, head1, head2, x, y1, y2):
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    (loss1 + loss2).backward()
    return {k: p.grad.detach().clone() for k, p in named_parameters(trunk, head1, head2).items()}


def grads_two_passes(trunk, head1, head2, x, y1, y2):
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    params = named_parameters(trunk, head1, head2)
    loss1.backward(retain_graph=True)
    loss2.backward()
    grads = {k: p.grad for k, p in params.items()}
    for p in params.values():
        p.grad.zero_()
    return grads
"""
            },
            "fails": {"q2_check": "returned .grad itself"},
            "never": ["the graph was cut", "detach(), .data"],
        },
    },
    "ex04_accumulation": {
        "c51-04-drop-last-partial": {
            "cause": "loops over n // micro_batch micro-batches, each weighted by len(xb) / n: the last, smaller "
            "micro-batch never runs (the weights are right; no loss is divided by the number of micro-batches)",
            "answers": {
                "q2_answer": """def accumulate(model, x, y, micro_batch):
    n = len(x)
    for i in range(n // micro_batch):
        xb, yb = x[i * micro_batch : (i + 1) * micro_batch], y[i * micro_batch : (i + 1) * micro_batch]
        (F.mse_loss(model(xb), yb) * (len(xb) / n)).backward()
"""
            },
            "fails": {"q2_check": "Fewer samples reached the model than the batch holds"},
            "never": ["Dividing each loss by the number of micro-batches", "weighted by its share"],
        },
        "c51-04-whole-batch-per-micro-batch": {
            "cause": "runs the whole batch once per micro-batch: 3x the gradient, as an unscaled micro-batch loss "
            "would give, but every loss is the batch's mean and no micro-batch ran",
            "answers": {
                "q2_answer": """def accumulate(model, x, y, micro_batch):
    for _ in range(0, len(x), micro_batch):
        F.mse_loss(model(x), y).backward()
"""
            },
            "fails": {"q2_check": "backward passes add into it"},
            "never": ["micro-batch's mean loss was not scaled", "summed (reduction='sum')"],
        },
    },
    "ex06_grad_modes": {
        "c51-06-head-under-no-grad-too": {
            "cause": "runs the head under no_grad too and makes the scores require grad again: the loss has a graph, "
            "but it reaches no parameter, so the head's .grad stays None",
            "answers": {
                "q3_answer": """def head_loss(backbone, head, x, target):
    with torch.no_grad():
        scores = head(backbone(x))
    return F.cross_entropy(scores.requires_grad_(), target)
"""
            },
            "fails": {"q3_check": "No gradient reached the head's parameters: the graph of the loss you returned"},
            "never": ["rethink", ".grad is None facts"],
        },
    },
    "ex08_checkpoint": {
        "c51-08-two-checkpoints-then-the-rest-plain": {
            "cause": "checkpoints the first two blocks and runs the rest of the model plainly: several checkpoints "
            "ran (no checkpoint_sequential), but most activations are saved as without checkpointing",
            "answers": {
                "q1_answer": """def forward_checkpointed(model, x):
    h = checkpoint(model[0], x, use_reentrant=False)
    h = checkpoint(model[1], h, use_reentrant=False)
    return model[2:](h)
"""
            },
            "fails": {"q1_check": "Modules with parameters ran outside every checkpoint"},
            "never": ["checkpoint_sequential never checkpoints", "One checkpoint ran", "No checkpoint ran"],
        },
        "c51-08-checkpoint-linear-only": {
            "cause": "checkpoints each Linear alone and runs Tanh and Dropout plainly: several checkpoints, each "
            "keeping its input, and the activations and masks saved as without checkpointing",
            "answers": {
                "q1_answer": """def forward_checkpointed(model, x):
    for module in model.modules():
        if not list(module.children()):
            x = checkpoint(module, x, use_reentrant=False) if isinstance(module, nn.Linear) else module(x)
    return x
"""
            },
            "fails": {"q1_check": "the modules without parameters (activations, dropout) ran outside every checkpoint"},
            "never": ["One checkpoint ran", "No checkpoint ran", "around the whole model", "several segments"],
        },
        "c51-08-head-only": {
            "cause": "loops over the model's top level and checkpoints what is an nn.Linear: only the head (the "
            "blocks are Sequentials), so one checkpoint ran, around the head, not around most of the model",
            "answers": {
                "q1_answer": """def forward_checkpointed(model, x):
    for module in model:
        x = checkpoint(module, x, use_reentrant=False) if isinstance(module, nn.Linear) else module(x)
    return x
"""
            },
            "fails": {"q1_check": "Modules with parameters ran outside every checkpoint"},
            "never": ["One checkpoint ran", "around the whole model", "(most of) the model"],
        },
    },
    "ex14_distributed": {
        "c51-14-broadcast-from-rank-0": {
            "cause": "broadcasts rank 0's .grad to the other ranks instead of averaging: rank 0 keeps its own shard's "
            "gradient, rank 1 holds rank 0's (not each rank its own)",
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    xs, ys = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    nn.functional.mse_loss(model(xs), ys).backward()
    for p in model.parameters():
        dist.broadcast(p.grad, src=0)
    return {name: p.grad for name, p in model.named_parameters()}
"""
            },
            "fails": {"q1_check": "a broadcast copies one rank's tensor to the others"},
            "never": ["Each rank kept its own shard's gradient"],
        },
        "c51-14-target-squeezed": {
            "cause": "squeezes the target to [n]: mse_loss broadcasts [n, 1] against [n] into [n, n], so each rank's "
            "own gradient is wrong before DDP averages them (DDP's averaging is right)",
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    ddp = DDP(model)
    xs, ys = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    nn.functional.mse_loss(ddp(xs), ys.squeeze()).backward()
    return {name: p.grad for name, p in model.named_parameters()}
"""
            },
            "fails": {"q1_check": "is not the gradient of its shard's loss"},
            "never": ["combined, but not into the mean", "how were they combined"],
        },
        "c51-14-every-rank-takes-shard-0": {
            "cause": "every rank takes x.chunk(world_size)[0]: rank 0 uses its own rows, the others rank 0's (NaN "
            "here), so the average is NaN; rank 0's own gradient and DDP's averaging are right",
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    ddp = DDP(model)
    xs, ys = x.chunk(world_size)[0], y.chunk(world_size)[0]
    nn.functional.mse_loss(ddp(xs), ys).backward()
    return {name: p.grad for name, p in model.named_parameters()}
"""
            },
            "fails": {"q1_check": "a rank used rows that are not its own"},
            "never": ["how were they combined", "the rank used rows"],
        },
    },
    "ex09_functions": {
        "c51-09-fake-returns-its-input": {
            "cause": "the fake function returns x itself: an output that aliases the input (opcheck's "
            "outputs_alias_inputs), not another shape or dtype",
            "answers": {
                "q4_answer": """@torch.library.custom_op("ex09::softclip", mutates_args=())
def softclip(x: torch.Tensor, limit: float) -> torch.Tensor:
    return limit * torch.tanh(x / limit)


@softclip.register_fake
def _(x, limit):
    return x


def softclip_setup_context(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.limit = inputs[1]


def softclip_backward(ctx, grad_y):
    (y,) = ctx.saved_tensors
    return grad_y * (1 - (y / ctx.limit) ** 2), None


softclip.register_autograd(softclip_backward, setup_context=softclip_setup_context)
"""
            },
            "fails": {"q4_check": "returns its input"},
            "never": ["another shape, dtype or layout"],
        },
    },
    "ex10_hooks": {
        "c51-10-pack-keeps-the-original-too": {
            "cause": "the pack hook returns the 16-bit copy and the activation itself: the activations stay whole; "
            "no parameter is copied",
            "answers": {
                "q4_answer": """def half_precision_hooks(params):
    kept = {p.untyped_storage().data_ptr() for p in params}

    def pack(t):
        if t.untyped_storage().data_ptr() in kept:
            return t
        return (t, t.to(torch.float16))

    def unpack(packed):
        if isinstance(packed, torch.Tensor):
            return packed
        original, half = packed
        return half.to(original.dtype)

    return pack, unpack
"""
            },
            "fails": {"q4_check": "returned the activation's own storage"},
            "never": ["copy of a weight"],
        },
        "c51-10-fused-peak-zero": {
            "cause": "predicts 0 B of .grad alive with the fused step: each gradient is alive until its hook frees "
            "it, so the peak is the largest .grad (no Node saves a .grad)",
            "answers": {
                "q3_answer": """def fuse_sgd_into_backward(model, lr):
    def step(p):
        with torch.no_grad():
            p.add_(p.grad, alpha=-lr)
        p.grad = None

    return [p.register_post_accumulate_grad_hook(step) for p in model.parameters() if p.requires_grad]


def peak_grad_bytes(model, fused):
    if fused:
        return 0
    return sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
"""
            },
            "fails": {"q3_check": "Is it alive at the moment the figure describes?"},
            "never": ["Which Node saves it", "Node"],
        },
    },
    "ex11_mixed_precision": {
        "c51-11-float16-autocast": {
            "cause": "runs the forward under float16 autocast where bfloat16 is asked, the scaler's order right: the "
            "gradients differ by float16's rounding, not by a clip before unscale_ or a missing zero_grad",
            "answers": {
                "q3_answer": """def scaled_step(model, optimizer, scaler, x, y, max_norm):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
"""
            },
            "fails": {"q3_check": "Your forward ran under float16 autocast"},
            "never": ["call scaler.unscale_(optimizer) before clip_grad_norm_", "set the gradients to None"],
        },
        "c51-11-gradients-never-reset": {
            "cause": "never resets .grad: the second batch's inf stays in .grad, so the third step is skipped too and "
            "the scale halves again, though update() runs once per iteration",
            "answers": {
                "q3_answer": """def scaled_step(model, optimizer, scaler, x, y, max_norm):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
"""
            },
            "fails": {"q3_check": "A backward added into gradients an earlier iteration left in .grad"},
            "never": ["Call scaler.update() once", "did not call scaler.update()"],
        },
    },
    "ex12_higher_order": {
        "c51-12-penalty-fills-grad": {
            "cause": "a backward(create_graph=True) inside the penalty fills .grad of every critic parameter: in a "
            "critic step that gradient is added to the loss's (the value and its gradients are right)",
            "answers": {
                "q2_answer": """def one_sided_penalty(critic, x_hat):
    critic(x_hat).sum().backward(create_graph=True)
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return (torch.relu(torch.linalg.vector_norm(g, dim=1) - 1) ** 2).mean()
"""
            },
            "fails": {"q2_check": "filled .grad of the critic's parameters"},
            "never": [],
        },
        "c51-12-penalty-draws-random-numbers": {
            "cause": "the penalty draws torch.rand from the global generator (unused in its value): value and "
            "gradients right, but the caller's next random draws change",
            "answers": {
                "q2_answer": """def one_sided_penalty(critic, x_hat):
    noise = torch.rand(len(x_hat), 1)
    (g,) = torch.autograd.grad(critic(x_hat + 0 * noise).sum(), x_hat, create_graph=True)
    return (torch.relu(torch.linalg.vector_norm(g, dim=1) - 1) ** 2).mean()
"""
            },
            "fails": {"q2_check": "drew random numbers from the global generator"},
            "never": ["filled .grad"],
        },
        "c51-12-no-functional-call": {
            "cause": "differentiates a loss that calls model(x_i) directly: the params grad differentiates never reach "
            "the model, so every per-sample gradient is 0 (nothing was reduced over the batch)",
            "answers": {
                "q3_answer": """def per_sample_grads(model, loss_fn, x, y):
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}

    def sample_loss(params, xi, yi):
        return loss_fn(model(xi.unsqueeze(0)), yi.unsqueeze(0))

    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
"""
            },
            "fails": {"q3_check": "does the loss you differentiate depend on the tensors grad differentiates"},
            "never": ["reduced over the whole batch", "reduced over the batch"],
        },
        "c51-12-params-never-reach-the-model": {
            "cause": "passes the parameters under names functional_call does not know: the model uses its own, so "
            "every per-sample gradient is 0 (not the batch's gradient repeated)",
            "answers": {
                "q3_answer": """def per_sample_grads(model, loss_fn, x, y):
    params = {name.replace(".", "_"): p.detach() for name, p in model.named_parameters() if p.requires_grad}

    def sample_loss(params, xi, yi):
        return loss_fn(functional_call(model, params, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    got = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)
    return {name.replace("_", ".", 1): g for name, g in got.items()}


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
"""
            },
            "fails": {"q3_check": "Every sample's gradient is 0"},
            "never": ["reduced over the whole batch", "reduced over the batch"],
        },
        "c51-12-grad-mode-left-off": {
            "cause": "torch.set_grad_enabled(False) as a call, never set back: grad mode stays off after the function",
            "answers": {
                "q4_answer": """def jvp_no_graph(model, x, v):
    torch.set_grad_enabled(False)
    with fwAD.dual_level():
        out, tangent = fwAD.unpack_dual(model(fwAD.make_dual(x, v)))
    return out, tangent
"""
            },
            "fails": {"q4_check": "left grad mode off"},
            "never": [],
        },
    },
    "ex13_compile": {
        "c51-13-scale-left-in-the-graph": {
            "cause": "the scale h.abs().max() is not detached: a gradient flows through it",
            "answers": {
                "q3_answer": """def scaled_loss_one_graph(x, w):
    h = torch.tanh(x @ w)
    h = torch.where(h.sum() > 0, h + 1, h)
    return (h / h.abs().max()).pow(2).sum()
"""
            },
            "fails": {"q3_check": "exactly those of a scale left in the graph"},
            "never": [],
        },
        "c51-13-h-cut-from-the-graph": {
            "cause": "h is taken out of the graph (detach) before the loss: the loss is right, no gradient reaches x "
            "or w (nothing flows through the scale)",
            "answers": {
                "q3_answer": """def scaled_loss_one_graph(x, w):
    h = torch.tanh(x @ w)
    h = torch.where(h.sum() > 0, h + 1, h)
    scale = h.abs().max().detach()
    return (h.detach() / scale).pow(2).sum() + 0 * (x.sum() + w.sum())
"""
            },
            "fails": {"q3_check": "x is all zeros but should not be"},
            "never": ["scale left in the graph", "flows through the scale", "the graph was cut"],
        },
    },
}
