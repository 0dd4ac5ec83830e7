"""Round 10's held-out answers for issue 39: written from the exercises alone (before reading any check),
each with the cause its author states. Run ``python tests/grading/heldout/round10_run.py`` to rerun them."""

CASES = [
    # (case, exercise, answer cell, kind, stated cause, source)
    (
        "ex02q2-retain-late",
        "ex02_leaves",
        "q2_answer",
        "wrong",
        "retain_grad() called after backward(), so h.grad is None",
        """def grad_of_hidden(x, w1, w2):
    h, loss = forward(x, w1, w2)
    loss.backward()
    h.retain_grad()
    return h.grad
""",
    ),
    (
        "ex02q2-grad-of-detached",
        "ex02_leaves",
        "q2_answer",
        "wrong",
        "differentiates with respect to h.detach(), a new tensor the loss's graph does not use",
        """def grad_of_hidden(x, w1, w2):
    h, loss = forward(x, w1, w2)
    return torch.autograd.grad(loss, h.detach())[0]
""",
    ),
    (
        "ex02q3-parameter-float32",
        "ex02_leaves",
        "q3_answer",
        "wrong",
        "nn.Parameter of torch.randn's default float32, not float64",
        """def make_param(*shape):
    return torch.nn.Parameter(0.1 * torch.randn(*shape))
""",
    ),
    (
        "ex02q3-correct-normal_",
        "ex02_leaves",
        "q3_answer",
        "correct",
        "correct (in-place normal_ then requires_grad_)",
        """def make_param(*shape):
    return torch.empty(*shape, dtype=torch.float64).normal_(0.0, 0.1).requires_grad_()
""",
    ),
    (
        "ex03q2-reset-between-passes",
        "ex03_backward",
        "q2_answer",
        "wrong",
        "grads_two_passes sets .grad to None between the two passes: only loss2's gradient is left",
        """def grads_summed(trunk, head1, head2, x, y1, y2):
    l1, l2 = losses(trunk, head1, head2, x, y1, y2)
    (l1 + l2).backward()
    return {k: p.grad.detach().clone() for k, p in named_parameters(trunk, head1, head2).items()}


def grads_two_passes(trunk, head1, head2, x, y1, y2):
    l1, l2 = losses(trunk, head1, head2, x, y1, y2)
    params = named_parameters(trunk, head1, head2)
    l1.backward(retain_graph=True)
    for p in params.values():
        p.grad = None
    l2.backward()
    return {k: (torch.zeros_like(p) if p.grad is None else p.grad.detach().clone()) for k, p in params.items()}
""",
    ),
    (
        "ex03q3-detached-first",
        "ex03_backward",
        "q3_answer",
        "wrong",
        "detaches the first derivative before differentiating it again (no graph to take f'' from)",
        """def derivatives(f, x):
    x = x.clone().requires_grad_()
    first = torch.autograd.grad(f(x).sum(), x, create_graph=True)[0].detach()
    second = torch.autograd.grad(first.sum(), x)[0]
    return first, second
""",
    ),
    (
        "ex03q3-correct-functorch",
        "ex03_backward",
        "q3_answer",
        "correct",
        "correct (torch.func.grad composed, vmapped)",
        """def derivatives(f, x):
    g = torch.func.grad(lambda t: f(t))
    return torch.func.vmap(g)(x).detach(), torch.func.vmap(torch.func.grad(g))(x).detach()
""",
    ),
    (
        "ex03q4-retain-accumulates",
        "ex03_backward",
        "q4_answer",
        "wrong",
        "believes retain_graph keeps every step's graph alive (steps x one step), "
        "but each graph is freed when loss is rebound",
        """def loop_bytes(n, d, h, steps):
    one = 4 * n * (d + h + 1)
    return {"peak without retain_graph": one, "alive after the loop with retain_graph": steps * one,
            "peak with retain_graph": steps * one}
""",
    ),
    (
        "ex03q4-relu-counted-twice",
        "ex03_backward",
        "q4_answer",
        "wrong",
        "counts the ReLU output and the second Linear's saved input (one storage) twice",
        """def loop_bytes(n, d, h, steps):
    one = 4 * n * (d + 2 * h + 1)
    return {"peak without retain_graph": one, "alive after the loop with retain_graph": one,
            "peak with retain_graph": 2 * one}
""",
    ),
    (
        "ex04q2-by-count",
        "ex04_accumulation",
        "q2_answer",
        "wrong",
        "weights each micro-batch loss by 1/number of micro-batches, wrong when the last micro-batch is smaller",
        """def accumulate(model, x, y, micro_batch):
    chunks = list(zip(x.split(micro_batch), y.split(micro_batch)))
    for xb, yb in chunks:
        (F.mse_loss(model(xb), yb) / len(chunks)).backward()
""",
    ),
    (
        "ex04q2-one-backward",
        "ex04_accumulation",
        "q2_answer",
        "wrong",
        "sums the weighted micro-batch losses and backwards once: every micro-batch's graph is alive at once",
        """def accumulate(model, x, y, micro_batch):
    total = 0
    for xb, yb in zip(x.split(micro_batch), y.split(micro_batch)):
        total = total + F.mse_loss(model(xb), yb) * (len(xb) / len(x))
    total.backward()
""",
    ),
    (
        "ex04q2-correct-sum-reduction",
        "ex04_accumulation",
        "q2_answer",
        "correct",
        "correct (reduction='sum' / N)",
        """def accumulate(model, x, y, micro_batch):
    for i in range(0, len(x), micro_batch):
        (F.mse_loss(model(x[i:i + micro_batch]), y[i:i + micro_batch], reduction="sum") / y.numel()).backward()
""",
    ),
    (
        "ex06q3-eval",
        "ex06_grad_modes",
        "q3_answer",
        "wrong",
        "backbone.eval() is taken for 'no gradients': the backbone still records and gets .grad",
        """def head_loss(backbone, head, x, target):
    backbone.eval()
    return F.cross_entropy(head(backbone(x)), target)
""",
    ),
    (
        "ex06q3-detach-after",
        "ex06_grad_modes",
        "q3_answer",
        "wrong",
        "detaches the features after the backbone ran with grad on: no .grad in backbone, but it saved tensors",
        """def head_loss(backbone, head, x, target):
    feats = backbone(x).detach()
    return F.cross_entropy(head(feats), target)
""",
    ),
    (
        "ex06q4-target-not-detached",
        "ex06_grad_modes",
        "q4_answer",
        "wrong",
        "the target network's max is not detached (no no_grad): gradients reach the target network",
        """def td_loss(online, target, s, a, r, s2, gamma):
    q = online(s).gather(1, a.unsqueeze(1)).squeeze(1)
    y = r + gamma * target(s2).max(dim=1).values
    return F.mse_loss(q, y)
""",
    ),
    (
        "ex06q4-online-detached",
        "ex06_grad_modes",
        "q4_answer",
        "wrong",
        "detaches the online prediction too (detach in the wrong place): no gradient reaches the online network",
        """def td_loss(online, target, s, a, r, s2, gamma):
    q = online(s).detach().gather(1, a.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        y = r + gamma * target(s2).max(dim=1).values
    return F.mse_loss(q.requires_grad_(), y)
""",
    ),
    (
        "ex10q1-containers",
        "ex10_hooks",
        "q1_answer",
        "wrong",
        "hooks every module named_modules() gives, containers included, so extra (and nested) names are logged",
        """def attach_grad_norm_hooks(model, log):
    handles = []
    for name, m in model.named_modules():
        handles.append(m.register_full_backward_hook(
            lambda mod, gin, gout, name=name: log.append((name, gout[0].norm().item()))))
    return handles
""",
    ),
    (
        "ex10q1-grad-input",
        "ex10_hooks",
        "q1_answer",
        "wrong",
        "logs grad_input[0] (gradient w.r.t. the module's input) instead of grad_output[0]",
        """def attach_grad_norm_hooks(model, log):
    handles = []
    for name, m in model.named_modules():
        if not list(m.children()):
            handles.append(m.register_full_backward_hook(
                lambda mod, gin, gout, name=name: log.append((name, gin[0].norm().item()))))
    return handles
""",
    ),
    (
        "ex10q2-module-hook",
        "ex10_hooks",
        "q2_answer",
        "wrong",
        "a module full backward hook clips the gradient w.r.t. module inputs, not the parameters' .grad",
        """def attach_clip_hooks(model, clip):
    return [m.register_full_backward_hook(lambda mod, gin, gout: tuple(
        None if g is None else g.clamp(-clip, clip) for g in gin)) for m in model.modules()
        if not list(m.children())]
""",
    ),
    (
        "ex10q2-correct-replace-grad",
        "ex10_hooks",
        "q2_answer",
        "correct",
        "correct (post-accumulate hook that clamps in place under no_grad)",
        """def attach_clip_hooks(model, clip):
    def hook(p):
        with torch.no_grad():
            p.grad.clamp_(-clip, clip)
    return [p.register_post_accumulate_grad_hook(hook) for p in model.parameters()]
""",
    ),
    (
        "ex10q3-grad-not-freed",
        "ex10_hooks",
        "q3_answer",
        "wrong",
        "fused step does not set p.grad = None, so every .grad stays alive (peak = plain peak, grads left)",
        """def fuse_sgd_into_backward(model, lr):
    def hook(p):
        with torch.no_grad():
            p.add_(p.grad, alpha=-lr)
    return [p.register_post_accumulate_grad_hook(hook) for p in model.parameters()]


def peak_grad_bytes(model, fused):
    sizes = [p.numel() * p.element_size() for p in model.parameters() if p.requires_grad]
    return max(sizes) if fused else sum(sizes)
""",
    ),
    (
        "ex10q3-fused-zero",
        "ex10_hooks",
        "q3_answer",
        "wrong",
        "predicts 0 bytes fused: each gradient is alive until its own hook frees it (the largest one is the peak)",
        """def fuse_sgd_into_backward(model, lr):
    def hook(p):
        with torch.no_grad():
            p.add_(p.grad, alpha=-lr)
        p.grad = None
    return [p.register_post_accumulate_grad_hook(hook) for p in model.parameters()]


def peak_grad_bytes(model, fused):
    return 0 if fused else sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
""",
    ),
    (
        "ex10q4-unpack-keeps-half",
        "ex10_hooks",
        "q4_answer",
        "wrong",
        "unpack returns the 16-bit tensor, not the original dtype (float32)",
        """def half_precision_hooks(params):
    ids = {p.data_ptr() for p in params}
    def pack(t):
        return t if t.data_ptr() in ids else t.to(torch.bfloat16)
    def unpack(t):
        return t
    return pack, unpack
""",
    ),
    (
        "ex10q4-dtype-by-name",
        "ex10_hooks",
        "q4_answer",
        "wrong",
        "param test by `t in params` after params (a generator) is consumed: weights are copied to 16 bits too",
        """def half_precision_hooks(params):
    def pack(t):
        if any(t is p for p in params):
            return t
        return (t.dtype, t.to(torch.float16))
    def unpack(packed):
        return packed if isinstance(packed, torch.Tensor) else packed[1].to(packed[0])
    return pack, unpack
""",
    ),
]
