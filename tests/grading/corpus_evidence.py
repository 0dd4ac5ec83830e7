"""Wrong answers written for issue 39 (no cause named without evidence): realistic mistakes that are neither a
typical mistake of the course (``autograder/grading/mistakes``) nor an entry of the other corpora, several of
them showing a typical mistake's *symptom* through another mechanism. Graded through ``python -m autograder
grade`` before and after causes were made hypotheses the grader tests (``autograder.compare.evidence``).

``WRONG = {exercise: {student_id: {"cause", "answers", "fails", "never", "before", "after"}}}``: every other
answer cell is the solution's. ``fails``: each test cell that must fail, to words its message must hold;
``never``: words of a cause that is not the learner's, which no message may hold; ``before``/``after``: did the
message name the actual cause ("named", "partly", "not named" or "misleading"), before and after the change.
"""

WRONG = {
    "ex01_graph": {
        "e39-01-divides-by-numel": {
            "cause": "divides by x.numel() (N * D) instead of N: the gradient is 1/D of autograd's",
            "answers": {
                "q2_answer": """def grad_wb(w, b, x, y):
    p = torch.tanh(x @ w + b)
    dz = 2 * (p - y) / x.numel() * (1 - p * p)
    return {"w": x.T @ dz, "b": dz.sum()}
"""
            },
            "fails": {"q2_check": "1/3 of the expected value"},
            "never": [],
            "before": "partly",
            "after": "partly",
        },
        "e39-01-tanh-twice": {
            "cause": "writes tanh's derivative as 1 - tanh(p)**2, applying tanh to the output a second time",
            "answers": {
                "q2_answer": """def grad_wb(w, b, x, y):
    p = torch.tanh(x @ w + b)
    dz = 2 * (p - y) / y.numel() * (1 - torch.tanh(p) ** 2)
    return {"w": x.T @ dz, "b": dz.sum()}
"""
            },
            "fails": {"q2_check": "TanhBackward0 multiplies by 1 - p**2"},
            "never": [],
            "before": "partly",
            "after": "partly",
        },
    },
    "ex03_backward": {
        "e39-03-mean-for-derivatives": {
            "cause": "differentiates f(x).mean() instead of f(x).sum(): both derivatives are 1/N of the "
            "elementwise ones",
            "answers": {
                "q3_answer": """def derivatives(f, x):
    x = x.detach().requires_grad_()
    (first,) = torch.autograd.grad(f(x).mean(), x, create_graph=True)
    (second,) = torch.autograd.grad(first.mean(), x)
    return first.detach() * 1, second.detach()
"""
            },
            "fails": {"q3_check": "of the expected value"},
            "never": [],
            "before": "partly",
            "after": "partly",
        },
        "e39-03-second-from-detached-first": {
            "cause": "takes the second derivative of the first with create_graph=True but sums first * x, not first",
            "answers": {
                "q3_answer": """def derivatives(f, x):
    x = x.detach().requires_grad_()
    (first,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    (second,) = torch.autograd.grad((first * x).sum(), x)
    return first.detach(), second.detach()
"""
            },
            "fails": {"q3_check": "differs from the expected value"},
            "never": ["x.grad after a second backward"],
            "before": "misleading",
            "after": "not named",
        },
    },
    "ex04_accumulation": {
        "e39-04-one-backward-of-the-sum": {
            "cause": "adds up the micro-batches' weighted losses and calls backward once: right gradients, but every "
            "micro-batch's graph is alive at once",
            "answers": {
                "q2_answer": """def accumulate(model, x, y, micro_batch):
    total = 0
    for xb, yb in zip(x.split(micro_batch), y.split(micro_batch)):
        total = total + F.mse_loss(model(xb), yb) * len(xb) / len(x)
    total.backward()
"""
            },
            "fails": {
                "q2_check": "a micro-batch's forward ran while an earlier micro-batch's graph had not been backwarded"
            },
            "never": [".grad was reset"],
            "before": "named",
            "after": "named",
        },
        "e39-04-rescales-grad-each-step": {
            "cause": "keeps a running mean in .grad: after each micro-batch's backward, multiplies .grad by "
            "k / (k + 1) "
            "in place (a scale, not a reset)",
            "answers": {
                "q2_answer": """def accumulate(model, x, y, micro_batch):
    for k, (xb, yb) in enumerate(zip(x.split(micro_batch), y.split(micro_batch))):
        if k:
            for p in model.parameters():
                p.grad.mul_(k / (k + 1))
        (F.mse_loss(model(xb), yb) / (k + 1)).backward()
"""
            },
            "fails": {"q2_check": "multiplied by a number between micro-batches"},
            "never": [".grad was reset"],
            "before": "misleading",
            "after": "named",
        },
    },
    "ex05_inplace": {
        "e39-05-detached-gate": {
            "cause": "detaches the gate before writing into it, so no gradient flows through the sigmoid",
            "answers": {
                "q3_answer": """def gated_fixed(x, w, v):
    h = x @ w
    g = (torch.sigmoid(h) * 2).detach()
    g[:, 0] = 1
    out = g * torch.tanh(h)
    return ((out @ v) ** 2).mean()
"""
            },
            "fails": {"q3_check": "differs"},
            "never": [],
            "before": "partly",
            "after": "partly",
        },
        "e39-05-gate-not-doubled": {
            "cause": "rebuilds the gate out of place with torch.cat, forgetting the factor 2 on the other columns",
            "answers": {
                "q3_answer": """def gated_fixed(x, w, v):
    h = x @ w
    s = torch.sigmoid(h)
    g = torch.cat([torch.ones_like(s[:, :1]), s[:, 1:]], dim=1)
    out = g * torch.tanh(h)
    return ((out @ v) ** 2).mean()
"""
            },
            "fails": {"q3_check": "differs"},
            "never": [],
            "before": "not named",
            "after": "not named",
        },
    },
    "ex06_grad_modes": {
        "e39-06-target-from-online": {
            "cause": "computes the TD target with the online network (under no_grad) instead of the target network",
            "answers": {
                "q4_answer": """def td_loss(online, target, s, a, r, s2, gamma):
    q = online(s).gather(1, a[:, None]).squeeze(1)
    with torch.no_grad():
        y = r + gamma * online(s2).max(dim=1).values
    return F.mse_loss(q, y)
"""
            },
            "fails": {"q4_check": "differ"},
            "never": [],
            "before": "not named",
            "after": "not named",
        },
        "e39-06-tau-swapped": {
            "cause": "swaps the weights of the soft update: target <- tau * target + (1 - tau) * online",
            "answers": {
                "q5_answer": """def soft_update(target, online, tau):
    with torch.no_grad():
        for p_target, p_online in zip(target.parameters(), online.parameters()):
            p_target.mul_(tau).add_(p_online, alpha=1 - tau)
"""
            },
            "fails": {"q5_check": "target"},
            "never": [],
            "before": "not named",
            "after": "not named",
        },
    },
    "ex08_checkpoint": {
        "e39-08-reseeds-inside": {
            "cause": "calls torch.manual_seed(0) inside the checkpointed function: the forward and the recomputation "
            "agree, but the masks are not the plain model's (the RNG state is preserved)",
            "answers": {
                "q1_answer": """def forward_checkpointed(model, x):
    def run(segment, t):
        torch.manual_seed(0)
        return segment(t)
    h = x
    for segment in (model[:3], model[3:6]):
        h = checkpoint(run, segment, h, use_reentrant=False)
    return model[6:](h)
"""
            },
            "fails": {"q1_check": "Your forward reseeds the RNG"},
            "never": ["RNG state was not preserved", "RNG state is not preserved", "eval mode"],
            "before": "misleading",
            "after": "named",
        },
        "e39-08-eval-in-segment": {
            "cause": "switches each checkpointed segment to eval mode inside the function: dropout is off",
            "answers": {
                "q1_answer": """def forward_checkpointed(model, x):
    def run(segment, t):
        segment.eval()
        return segment(t)
    h = x
    for segment in (model[:3], model[3:6]):
        h = checkpoint(run, segment, h, use_reentrant=False)
    return model[6:](h)
"""
            },
            "fails": {"q1_check": "eval mode"},
            "never": ["RNG state was not preserved", "RNG state is not preserved"],
            "before": "misleading",
            "after": "named",
        },
    },
    "ex11_mixed_precision": {
        "e39-11-model-cast-to-bf16": {
            "cause": "casts a copy of the model to bfloat16 and runs it without autocast: no cast is recorded",
            "answers": {
                "q1_answer": """def count_casts(model, x):
    out = copy.deepcopy(model).to(torch.bfloat16)(x.to(torch.bfloat16))
    return trace(out).counts().get("ToCopyBackward0", 0)
"""
            },
            "fails": {"q1_check": "\"cdist\" not implemented for 'BFloat16'"},
            "never": ["grad mode off"],
            "before": "partly",
            "after": "partly",
        },
        "e39-11-inference-mode": {
            "cause": "runs the forward under torch.inference_mode() inside autocast: nothing is recorded, count 0",
            "answers": {
                "q1_answer": """def count_casts(model, x):
    with torch.autocast("cpu", dtype=torch.bfloat16), torch.inference_mode():
        out = model(x)
    return sum(1 for _ in [out.grad_fn] if _ is not None)
"""
            },
            "fails": {"q1_check": "grad mode off"},
            "never": ["outside autocast"],
            "before": "misleading",
            "after": "named",
        },
    },
    "ex14_distributed": {
        "e39-14-allreduce-output": {
            "cause": "all-reduces the model's output (averaged) before the loss: autograd does not record all_reduce, "
            "so backward gives the rank's own gradient of a loss on mixed outputs",
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    xs, ys = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    out = model(xs)
    dist.all_reduce(out)
    loss = nn.functional.mse_loss(out / world_size, ys)
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters()}
"""
            },
            "fails": {"q1_check": "autograd does not record all_reduce"},
            "never": ["rows that are not its own", "The ranks' gradients were combined"],
            "before": "misleading",
            "after": "named",
        },
        "e39-14-ddp-divides-by-batch": {
            "cause": "with DDP, sums the shard's squared errors and divides by the whole batch's size: DDP's averaging "
            "divides by world_size once more",
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    ddp = DDP(model)
    xs, ys = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    loss = ((ddp(xs) - ys) ** 2).sum() / y.numel()
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters()}
"""
            },
            "fails": {"q1_check": "of the expected value"},
            "never": ["rows that are not its own"],
            "before": "partly",
            "after": "partly",
        },
    },
}
