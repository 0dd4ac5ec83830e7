"""Round 11's wrong answers for issue 51, written by the helper who changed the checks (so NOT a fresh set: its
author had read the checks, the typical mistakes and the corpora), each with its cause stated before any run and
marked "like" a listed typical mistake or "unlike" any, as that author judged. Run
``python tests/grading/heldout/round11_run.py OUT`` to grade them through ``python -m autograder grade``."""

CASES = [
    # (case, exercise, answer cell, like/unlike, stated cause, source)
    (
        "r11-01-tanh-derivative-squared-wrong",
        "ex01_graph",
        "q2_answer",
        "unlike",
        "tanh's derivative written as (1 - p)**2 instead of 1 - p**2",
        """def grad_wb(w, b, x, y):
    p = torch.tanh(x @ w + b)
    dz = 2 * (p - y) / len(y) * (1 - p) ** 2
    return {"w": x.T @ dz, "b": dz.sum()}
""",
    ),
    (
        "r11-01-count-every-path",
        "ex01_graph",
        "q3_answer",
        "unlike",
        "counts a Node once per path that reaches it (no set of visited Nodes): shared Nodes counted several times",
        """def count_nodes(t):
    def walk(node):
        if node is None:
            return 0
        return 1 + sum(walk(child) for child, _ in node.next_functions)
    return walk(t.grad_fn)
""",
    ),
    (
        "r11-02-grad-of-a-recomputed-h",
        "ex02_leaves",
        "q2_answer",
        "unlike",
        "differentiates with respect to a second h computed apart from the loss's graph: autograd.grad raises "
        "(a tensor not used in the graph)",
        """def grad_of_hidden(x, w1, w2):
    h, loss = forward(x, w1, w2)
    h_again = torch.tanh(x @ w1)
    return torch.autograd.grad(loss, h_again)[0]
""",
    ),
    (
        "r11-02-scaled-after-requires-grad",
        "ex02_leaves",
        "q3_answer",
        "like",
        "requires_grad=True given to randn, then scaled: the result is a non-leaf (MulBackward0)",
        """def make_param(*shape):
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True) * 0.1
""",
    ),
    (
        "r11-03-second-without-create-graph",
        "ex03_backward",
        "q3_answer",
        "like",
        "the first derivative taken without create_graph=True: the second autograd.grad raises (no grad_fn)",
        """def derivatives(f, x):
    x = x.detach().requires_grad_()
    (first,) = torch.autograd.grad(f(x).sum(), x)
    (second,) = torch.autograd.grad(first.sum(), x)
    return first.detach(), second.detach()
""",
    ),
    (
        "r11-04-one-backward-at-the-end",
        "ex04_accumulation",
        "q2_answer",
        "unlike",
        "sums the micro-batches' losses and calls backward once: every micro-batch's graph alive at once",
        """def accumulate(model, x, y, micro_batch):
    n = len(x)
    total = 0
    for xb, yb in zip(x.split(micro_batch), y.split(micro_batch)):
        total = total + F.mse_loss(model(xb), yb) * (len(xb) / n)
    total.backward()
""",
    ),
    (
        "r11-05-first-column-under-no-grad",
        "ex05_inplace",
        "q3_answer",
        "unlike",
        "writes the first column under torch.no_grad(): the write is not recorded, so the gradient still flows "
        "into column 0 through the sigmoid",
        """def gated_fixed(x, w, v):
    h = x @ w
    g = torch.sigmoid(h) * 2
    with torch.no_grad():
        g[:, 0] = 1
    out = g * torch.tanh(h)
    return ((out @ v) ** 2).mean()
""",
    ),
    (
        "r11-06-requires-grad-off-on-features",
        "ex06_grad_modes",
        "q3_answer",
        "unlike",
        "calls requires_grad_(False) on the backbone's output, a non-leaf: PyTorch raises",
        """def head_loss(backbone, head, x, target):
    features = backbone(x)
    features.requires_grad_(False)
    return F.cross_entropy(head(features), target)
""",
    ),
    (
        "r11-06-online-network-as-target",
        "ex06_grad_modes",
        "q4_answer",
        "unlike",
        "computes the target with the online network (not detached): gradients flow through the target too",
        """def td_loss(online, target, s, a, r, s2, gamma):
    q = online(s).gather(1, a[:, None]).squeeze(1)
    y = r + gamma * online(s2).max(dim=1).values
    return F.mse_loss(q, y)
""",
    ),
    (
        "r11-07-validation-logged-as-tensor",
        "ex07_memory",
        "q2_answer",
        "like",
        "logs the validation loss as a tensor (no .item()): the log holds tensors, not floats",
        """def train_and_log(model, opt, batches, val_x, val_y):
    log = []
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            val_loss = F.mse_loss(model(val_x), val_y)
        log.append((loss.item(), val_loss))
    return log
""",
    ),
    (
        "r11-07-counts-the-squared-errors",
        "ex07_memory",
        "q1_answer",
        "unlike",
        "counts (net(x) - y) ** 2 too, which no Node saves (mean saves nothing): n * 4 B too many",
        """def saved_bytes(n, d, h1, h2):
    return 4 * (n * d + n * h1 + n * h2 + n + n)
""",
    ),
    (
        "r11-11-relu-outputs-in-float32",
        "ex11_mixed_precision",
        "q2_answer",
        "unlike",
        "counts the ReLU outputs at 4 B per element (they are bfloat16: the Linear before ran under autocast)",
        """def saved_bytes_bf16(widths, batch):
    x_copy = batch * widths[0] * 2
    relus = batch * sum(widths[1:-1]) * 4
    weight_copies = sum(widths[i] * widths[i + 1] for i in range(1, len(widths) - 1)) * 2
    return x_copy + relus + weight_copies
""",
    ),
    (
        "r11-12-penalty-divided-by-features",
        "ex12_higher_order",
        "q2_answer",
        "unlike",
        "divides the sum of the samples' penalties by the number of features (x_hat.shape[1]) instead of N",
        """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return (torch.relu(g.norm(2, dim=1) - 1) ** 2).sum() / x_hat.shape[1]
""",
    ),
    (
        "r11-12-penalty-reads-x-hat-grad",
        "ex12_higher_order",
        "q2_answer",
        "unlike",
        "takes the gradient by backward(create_graph=True) and reads x_hat.grad: .grad of the critic's "
        "parameters (and x_hat) is filled as a side effect",
        """def one_sided_penalty(critic, x_hat):
    critic(x_hat).sum().backward(create_graph=True)
    g = x_hat.grad
    return (torch.relu(g.norm(2, dim=1) - 1) ** 2).mean()
""",
    ),
    (
        "r11-12-norm-by-hand-nan",
        "ex12_higher_order",
        "q5_answer",
        "unlike",
        "the norm written by hand, sqrt of the sum of squares, masked with where: sqrt's backward at 0 gives NaN",
        """def thin_plate(v):
    r = (v ** 2).sum(dim=1).sqrt()
    safe = torch.where(r > 0, r, torch.ones_like(r))
    return torch.where(r > 0, safe ** 2 * torch.log(safe), torch.zeros_like(r))
""",
    ),
    (
        "r11-14-average-op-on-gloo",
        "ex14_distributed",
        "q1_answer",
        "correct",
        "all-reduces each .grad with ReduceOp.AVG (written as a mistake, 'gloo does not support AVG', before it was "
        "run: gloo does support it in torch 2.13, so the answer is correct and must get full marks)",
        """def rank_grads(rank, world_size, model, x, y):
    xs, ys = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    nn.functional.mse_loss(model(xs), ys).backward()
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
    return {name: p.grad for name, p in model.named_parameters()}
""",
    ),
]
