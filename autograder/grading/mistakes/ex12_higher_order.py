"""Typical mistakes in ex12_higher_order: see the package docstring for the format."""

MISTAKES = {
    # Q1: create_graph forgotten: the value is right, but the gradient is a constant, so the
    # penalty gives the critic's parameters no gradient at all (and no error in a training loop).
    "ex12-q1-no-create-graph": {
        "answers": {
            "q1_answer": """def gradient_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat)
    return ((g.norm(2, dim=1) - 1) ** 2).mean()
"""
        },
        "fails": {"q1_check": "compute the gradient inside it with create_graph=True"},
    },
    # Q1: the gradient detached before its norm: the same constant penalty.
    "ex12-q1-detached": {
        "answers": {
            "q1_answer": """def gradient_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return ((g.detach().norm(2, dim=1) - 1) ** 2).mean()
"""
        },
        "fails": {"q1_check": "never detach it"},
    },
    # Q1: the gradient of the MEAN score: each sample's gradient divided by N.
    "ex12-q1-mean-of-scores": {
        "answers": {
            "q1_answer": """def gradient_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).mean(), x_hat, create_graph=True)
    return ((g.norm(2, dim=1) - 1) ** 2).mean()
"""
        },
        "fails": {"q1_check": "that divides each sample's gradient by N"},
    },
    # Q1: one norm of the whole batch's gradient instead of one per sample.
    "ex12-q1-one-norm": {
        "answers": {
            "q1_answer": """def gradient_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return (g.norm(2) - 1) ** 2
"""
        },
        "fails": {"q1_check": "its 2-norm per sample"},
    },
    # Q2: the loss reduced over the batch before grad: one gradient for all the samples.
    "ex12-q2-reduced-before-vmap": {
        "answers": {
            "q2_answer": """def per_sample_grads(model, loss_fn, x, y):
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    frozen = {name: p.detach() for name, p in model.named_parameters() if not p.requires_grad}

    def batch_loss(params, x, y):
        return loss_fn(functional_call(model, {**frozen, **params}, (x,)), y)

    return grad(batch_loss)(params, x, y)


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
"""
        },
        "fails": {"q2_check": "one gradient per sample needs a leading dimension of N"},
    },
    # Q2: the bytes predicted for every parameter, frozen ones included (visible model: right).
    "ex12-q2-bytes-of-frozen": {
        "answers": {
            "q2_answer": """def per_sample_grads(model, loss_fn, x, y):
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    frozen = {name: p.detach() for name, p in model.named_parameters() if not p.requires_grad}

    def sample_loss(params, xi, yi):
        return loss_fn(functional_call(model, {**frozen, **params}, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * p.element_size() for p in model.parameters())
"""
        },
        "fails": {"q2_check": "per-sample gradients of the frozen"},
    },
    # Q2: the bytes predicted as 4 per number: right for float32 only.
    "ex12-q2-bytes-float32": {
        "answers": {
            "q2_answer": """def per_sample_grads(model, loss_fn, x, y):
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    frozen = {name: p.detach() for name, p in model.named_parameters() if not p.requires_grad}

    def sample_loss(params, xi, yi):
        return loss_fn(functional_call(model, {**frozen, **params}, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * 4 for p in model.parameters() if p.requires_grad)
"""
        },
        "fails": {"q2_check": "per_sample_bytes(model, batch_size)"},
    },
    # Q3: the single where: the value is right, the gradient at a row of zeros is NaN.
    "ex12-q3-single-where": {
        "answers": {
            "q3_answer": """def thin_plate(v):
    r = v.norm(dim=1)
    return torch.where(r > 0, r**2 * torch.log(r), torch.zeros_like(r))
"""
        },
        "fails": {"q3_check": "torch.where's backward sends the unused branch a gradient of 0"},
    },
    # Q3: the formula as written: NaN value (0 * -inf) and NaN gradient at 0.
    "ex12-q3-formula-as-written": {
        "answers": {
            "q3_answer": """def thin_plate(v):
    r = v.norm(dim=1)
    return r**2 * torch.log(r)
"""
        },
        "fails": {"q3_check": "0 * log(0) = 0 * (-inf), which is NaN"},
    },
    # Q2: a loop over the samples, one autograd.grad each (the check's own reference): right values, not torch.func.
    "ex12-q2-loop": {
        "answers": {
            "q2_answer": """def per_sample_grads(model, loss_fn, x, y):
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    rows = [torch.autograd.grad(loss_fn(model(x[i:i+1]), y[i:i+1]), [p for _, p in named]) for i in range(len(x))]
    return {n: torch.stack([r[k] for r in rows]) for k, (n, _) in enumerate(named)}


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
"""
        },
        "fails": {"q2_check": "that is the loop the question forbids"},
    },
    # Q2: torch.func.grad, but in a loop over the samples instead of vmap.
    "ex12-q2-grad-in-a-loop": {
        "answers": {
            "q2_answer": """def per_sample_grads(model, loss_fn, x, y):
    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    frozen = {n: p.detach() for n, p in model.named_parameters() if not p.requires_grad}
    def loss(params, xi, yi):
        return loss_fn(functional_call(model, {**frozen, **params}, (xi,)), yi)
    rows = [grad(loss)(params, x[i:i+1], y[i:i+1]) for i in range(len(x))]
    return {n: torch.stack([r[n] for r in rows]) for n in params}


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
"""
        },
        "fails": {"q2_check": "ran the model once per sample"},
    },
}
