"""Answers for the classes of issue 51 still open after the third held-out set, each with the run where a text
would be false or a grade wrong (the counterexample), graded by ``tests/grading/test_corpus_classes.py``:

1. a cause told from the symptom alone (a NaN gradient blamed on ``torch.where``'s masking in an answer that has
   no ``torch.where``): the cause only where the run shows it, else where the NaN first appears;
2. grades: a tolerance tighter than what a correct variant gives (clip_grad_norm_'s epsilon on the scaled norm),
   a boundary no hidden test had (a bucket that reaches the cap exactly, a mask ``x >= 0`` where ``x > 0`` is meant);
3. side effects: a function that leaves hooks behind that only a later backward would reveal (handles not returned,
   or not removed where the function should leave the model as it found it);
4. value-only messages where the check holds the cause (which gradient differs, by what factor).

``WRONG = {exercise: {student_id: {"cause", "answers", "fails", "never"}}}`` as in ``corpus_claims``;
``CORRECT = {exercise: {student_id: {"why", "answers"}}}``: answers that must get full marks.
"""

_DDP_Q2 = """def allreduce_per_step(model, bucket_cap_bytes, micro_batches, use_no_sync):
    buckets, current = [], 0
    for p in reversed(list(model.parameters())):
        current += p.numel() * p.element_size()
        if current > bucket_cap_bytes:
            buckets.append(current)
            current = 0
    if current:
        buckets.append(current)
    syncs = 1 if use_no_sync else micro_batches
    return syncs * len(buckets), syncs * sum(buckets)
"""

_DDP_Q4 = """def default_buckets(model, find_unused_parameters):
    sizes = [p.numel() * p.element_size() for p in model.parameters()]
    order = sizes if find_unused_parameters else sizes[::-1]
    caps = [dist._DEFAULT_FIRST_BUCKET_BYTES, 25 * 2**20]
    buckets, current = [], 0
    for size in order:
        current += size
        if current > caps[min(len(buckets), 1)]:
            buckets.append(current)
            current = 0
    if current:
        buckets.append(current)
    return buckets[::-1] if find_unused_parameters else buckets
"""

_CLIP_LOST_HANDLES = """def attach_clip_hooks(model, clip):
    def clip_grad(p):
        p.grad.clamp_(-clip, clip)

    handles = []
    for p in model.parameters():
        p.register_post_accumulate_grad_hook(clip_grad)
    return handles
"""

_FUSED_NO_HANDLES = """def fuse_sgd_into_backward(model, lr):
    def step(p):
        with torch.no_grad():
            p.add_(p.grad, alpha=-lr)
        p.grad = None

    for p in model.parameters():
        if p.requires_grad:
            p.register_post_accumulate_grad_hook(step)


def peak_grad_bytes(model, fused):
    sizes = [p.numel() * p.element_size() for p in model.parameters() if p.requires_grad]
    return max(sizes) if fused else sum(sizes)
"""

_READY_ORDER_HOOKS_LEFT = """def grad_ready_order(model, x):
    order = []
    for name, p in model.named_parameters():
        p.register_post_accumulate_grad_hook(lambda p, name=name: order.append(name))
    model(x).sum().backward()
    return list(dict.fromkeys(order))
"""

_LEAKY_AT_ZERO = """class LeanLeakyReLU(Function):
    @staticmethod
    def forward(x, slope):
        return torch.where(x >= 0, x, slope * x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, slope = inputs
        ctx.save_for_backward(x >= 0)
        ctx.slope = slope

    @staticmethod
    def backward(ctx, grad_y):
        (mask,) = ctx.saved_tensors
        return torch.where(mask, grad_y, ctx.slope * grad_y), None
"""

WRONG = {
    "ex09_functions": {
        "k51-09-q2-mask-at-zero": {
            "cause": "the mask x >= 0 where LeakyReLU's is x > 0: the value is the same everywhere, the derivative "
            "differs only at x == 0 exactly (1 instead of the slope), which no input had",
            "answers": {"q2_answer": _LEAKY_AT_ZERO},
            "fails": {"q2_check": "your mask counts x == 0 with the positive side"},
            "never": [],
        },
    },
    "ex10_hooks": {
        "k51-10-q2-handles-not-returned": {
            "cause": "registers the clipping hooks but returns an empty list: the caller cannot remove them, and they "
            "clip every later backward; only a later backward would show it",
            "answers": {"q2_answer": _CLIP_LOST_HANDLES},
            "fails": {"q2_check": "post-accumulate-grad hooks left on 0.weight"},
            "never": [],
        },
        "k51-10-q3-handles-not-returned": {
            "cause": "the fused SGD step's hooks registered and no handle returned: every later backward steps the "
            "parameters again",
            "answers": {"q3_answer": _FUSED_NO_HANDLES},
            "fails": {"q3_check": "post-accumulate-grad hooks left on 0.weight"},
            "never": [],
        },
    },
    "ex04_accumulation": {
        "k51-04-q3-micro-batch-past-the-batch": {
            "cause": "the accumulation peak as micro_batch samples, where a micro-batch larger than the batch holds "
            "only n: right for every micro_batch <= n, wrong past that boundary, which no test had",
            "answers": {
                "q3_answer": """def accumulation_bytes(n, micro_batch, d, h):
    per_sample = 4 * (d + h + 2)
    return {"full batch peak": n * per_sample, "accumulation peak": micro_batch * per_sample}
"""
            },
            "fails": {"q3_check": "the saved tensors of samples the batch does not have"},
            "never": ["Tanh output counted twice"],
        },
        "k51-04-q2-weight-rounds-to-zero": {
            "cause": "weights each micro-batch's loss by micro_batch // n, an integer division that is 0: every "
            "backward runs on a loss of 0, so every gradient is 0; the run shows it (what backward() ran on)",
            "answers": {
                "q2_answer": """def accumulate(model, x, y, micro_batch):
    n = len(x)
    for start in range(0, n, micro_batch):
        xb, yb = x[start:start + micro_batch], y[start:start + micro_batch]
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        (loss * (micro_batch // n)).backward()
"""
            },
            "fails": {"q2_check": "every backward() of your run ran on a loss that is exactly 0"},
            "never": ["One cut from the graph"],
        },
    },
    "ex06_grad_modes": {
        "k51-06-q5-grad-mode-left-off": {
            "cause": "torch.set_grad_enabled(False) as a call, not a with block: the update is right, but grad mode "
            "stays off after soft_update returns, so the caller's next training step records no graph",
            "answers": {
                "q5_answer": """def soft_update(target, online, tau):
    torch.set_grad_enabled(False)
    for p_target, p_online in zip(target.parameters(), online.parameters()):
        p_target.mul_(1 - tau).add_(p_online, alpha=tau)
"""
            },
            "fails": {"q5_check": "grad mode left off"},
            "never": [],
        },
        "k51-06-q5-weights-swapped": {
            "cause": "keeps tau of the target and takes 1 - tau of online: the message gives the weights the values "
            "have and those expected",
            "answers": {
                "q5_answer": """def soft_update(target, online, tau):
    with torch.no_grad():
        for p_target, p_online in zip(target.parameters(), online.parameters()):
            p_target.copy_(tau * p_target + (1 - tau) * p_online)
"""
            },
            "fails": {"q5_check": "it is 0.25 * the target before + 0.75 * online, where 0.75 * the target before"},
            "never": [],
        },
        "k51-06-q4-gather-unsqueezed": {
            "cause": "gather without squeeze: Q(s) has shape [N, 1] and the target [N], so mse_loss broadcasts them to "
            "[N, N] (PyTorch warns about the sizes): the loss differs, and the message says what the run warned",
            "answers": {
                "q4_answer": """def td_loss(online, target, s, a, r, s2, gamma):
    q = online(s).gather(1, a.unsqueeze(1))
    with torch.no_grad():
        y = r + gamma * target(s2).max(dim=1).values
    return F.mse_loss(q, y)
"""
            },
            "fails": {"q4_check": "While your code ran, Python warned: UserWarning: Using a target size"},
            "never": [],
        },
    },
    "ex07_memory": {
        "k51-07-q2-left-in-eval-mode": {
            "cause": "switches the model to eval mode to validate and never back: every number logged is right (no "
            "dropout here), but the caller's next epoch trains in eval mode",
            "answers": {
                "q2_answer": """def train_and_log(model, opt, batches, val_x, val_y):
    log = []
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            val_loss = F.mse_loss(model(val_x), val_y)
        log.append((loss.item(), val_loss.item()))
    return log
"""
            },
            "fails": {"q2_check": "model left in eval mode"},
            "never": [],
        },
        "k51-07-q2-validation-before-step": {
            "cause": "the validation loss is taken before opt.step(), so each is the previous step's: the logged "
            "validation losses are the expected ones one step late, which the message says as an observation",
            "answers": {
                "q2_answer": """def train_and_log(model, opt, batches, val_x, val_y):
    log = []
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        with torch.no_grad():
            val_loss = F.mse_loss(model(val_x), val_y)
        opt.step()
        log.append((loss.item(), val_loss.item()))
    return log
"""
            },
            "fails": {"q2_check": "one position later, the rest is right"},
            "never": [],
        },
    },
    "ex12_higher_order": {
        "k51-12-q5-xlogy-own-nan": {
            "cause": "torch.xlogy(r**2, r): its value is 0 at r = 0, but its backward divides r**2 by r, 0/0, at rows "
            "of zeros; no torch.where anywhere, so masking is not the cause",
            "answers": {
                "q5_answer": """def thin_plate(v):
    r = torch.linalg.vector_norm(v, dim=1)
    return torch.xlogy(r**2, r)
"""
            },
            "fails": {"q5_check": "made by the backward of XlogyBackward0"},
            "never": ["torch.where's backward", "under a torch.where"],
        },
        "k51-12-q5-where-masked-log": {
            "cause": "torch.where masks log's value at 0 but not its gradient: the counterpart run, where the "
            "masking cause holds",
            "answers": {
                "q5_answer": """def thin_plate(v):
    r = torch.linalg.vector_norm(v, dim=1)
    return torch.where(r > 0, r**2 * torch.log(r), torch.zeros_like(r))
"""
            },
            "fails": {"q5_check": "torch.where's backward sends the unused branch a gradient of 0"},
            "never": ["What does that Node's backward compute"],
        },
    },
    "ex14_distributed": {
        "k51-14-q2-closes-past-the-cap": {
            "cause": "closes a bucket only once it passes the cap (>), DDP at the cap (>=): differs only where a "
            "bucket reaches the cap exactly, which no test had",
            "answers": {"q2_answer": _DDP_Q2},
            "fails": {"q2_check": "Buckets closed only once they pass the cap"},
            "never": ["registration order", "One call per parameter"],
        },
        "k51-14-q4-closes-past-the-cap": {
            "cause": "the same strict comparison for the default caps: differs only where the first bucket holds "
            "exactly 1 MiB",
            "answers": {"q4_answer": _DDP_Q4},
            "fails": {"q4_check": "Buckets closed only once they pass the cap"},
            "never": ["No 1 MiB first bucket"],
        },
        "k51-14-q3-hooks-never-removed": {
            "cause": "never removes its hooks, and returns a copy of the list: the later backward's names go to a list "
            "nobody reads, so the count of names gained stays 0, but the hooks stay on every parameter",
            "answers": {"q3_answer": _READY_ORDER_HOOKS_LEFT},
            "fails": {"q3_check": "post-accumulate-grad hooks left on"},
            "never": [],
        },
    },
}

CORRECT = {
    "ex06_grad_modes": {
        "k51-06-q5-grad-mode-restored": {
            "why": "turns grad mode off by a call and back to what it was before returning",
            "answers": {
                "q5_answer": """def soft_update(target, online, tau):
    was = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    for p_target, p_online in zip(target.parameters(), online.parameters()):
        p_target.copy_((1 - tau) * p_target + tau * p_online)
    torch.set_grad_enabled(was)
"""
            },
        },
    },
    "ex07_memory": {
        "k51-07-q2-eval-then-train": {
            "why": "validates in eval mode and puts the model back in train mode before the next batch",
            "answers": {
                "q2_answer": """def train_and_log(model, opt, batches, val_x, val_y):
    log = []
    for x, y in batches:
        model.train()
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            val_loss = F.mse_loss(model(val_x), val_y)
        model.train()
        log.append((loss.item(), val_loss.item()))
    return log
"""
            },
        },
    },
    "ex09_functions": {
        "k51-09-q2-mask-as-factor": {
            "why": "saves x > 0 and multiplies grad_y by where(mask, 1, slope): the same derivative, 0 on the slope's "
            "side",
            "answers": {
                "q2_answer": """class LeanLeakyReLU(Function):
    @staticmethod
    def forward(x, slope):
        return torch.where(x > 0, x, x * slope)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0] > 0)
        ctx.slope = inputs[1]

    @staticmethod
    def backward(ctx, grad_y):
        (positive,) = ctx.saved_tensors
        return grad_y * torch.where(positive, 1.0, ctx.slope), None
"""
            },
        },
    },
    "ex10_hooks": {
        "k51-10-q2-handles-in-a-loop": {
            "why": "registers each clipping hook in a loop and returns every handle: the caller removes them all",
            "answers": {
                "q2_answer": """def attach_clip_hooks(model, clip):
    def clip_grad(p):
        p.grad.clamp_(-clip, clip)

    handles = []
    for p in model.parameters():
        if p.requires_grad:
            handles.append(p.register_post_accumulate_grad_hook(clip_grad))
    return handles
"""
            },
        },
    },
    "ex14_distributed": {
        "k51-14-q3-removed-in-finally": {
            "why": "removes its hooks in a finally block and returns a copy of the list: nothing left behind",
            "answers": {
                "q3_answer": """def grad_ready_order(model, x):
    order, handles = [], []
    try:
        for name, p in model.named_parameters():
            handles.append(p.register_post_accumulate_grad_hook(lambda p, name=name: order.append(name)))
        model(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    return list(order)
"""
            },
        },
    },
    "ex11_mixed_precision": {
        "k51-11-clip-the-scaled-at-scaled-norm": {
            "why": "clips the scaled gradients at max_norm * scale, then lets scaler.step unscale: the same clip but "
            "for clip_grad_norm_'s 1e-6 epsilon, added to the scaled norm (the ratio moves by up to 1e-6 / max_norm)",
            "answers": {
                "q3_answer": """def scaled_step(model, optimizer, scaler, x, y, max_norm):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm * scaler.get_scale())
    scaler.step(optimizer)
    scaler.update()
"""
            },
        },
    },
}
