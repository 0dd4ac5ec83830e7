"""Typical mistakes in ex12_higher_order: see the package docstring for the format."""

_RECORDED = {"A": False, "B": True, "C": False, "D": False, "E": True, "F": False, "G": True, "H": False}


def _graphs(**changes):
    return f"def graph_recorded():\n    return { ({**_RECORDED, **changes})!r}\n"


MISTAKES = {
    # Q2: create_graph forgotten: the value is right, but the gradient is a constant, so the
    # penalty gives the critic's parameters no gradient at all (and no error in a training loop).
    "ex12-q2-no-create-graph": {
        "answers": {
            "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat)
    return (torch.relu(g.norm(2, dim=1) - 1) ** 2).mean()
"""
        },
        "fails": {"q2_check": "compute the gradient inside it with create_graph=True"},
    },
    # Q2: the gradient detached before its norm: the same constant penalty.
    "ex12-q2-detached": {
        "answers": {
            "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return (torch.relu(g.detach().norm(2, dim=1) - 1) ** 2).mean()
"""
        },
        "fails": {"q2_check": "never detach it"},
    },
    # Q2: the gradient of the MEAN score: each sample's gradient divided by N.
    "ex12-q2-mean-of-scores": {
        "answers": {
            "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).mean(), x_hat, create_graph=True)
    return (torch.relu(g.norm(2, dim=1) - 1) ** 2).mean()
"""
        },
        "fails": {"q2_check": "that divides each sample's gradient by N"},
    },
    # Q2: one norm of the whole batch's gradient instead of one per sample.
    "ex12-q2-one-norm": {
        "answers": {
            "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return torch.relu(g.norm(2) - 1) ** 2
"""
        },
        "fails": {"q2_check": "its 2-norm per sample"},
    },
    # Q3: the loss reduced over the batch before grad: one gradient for all the samples.
    "ex12-q3-reduced-before-vmap": {
        "answers": {
            "q3_answer": """def per_sample_grads(model, loss_fn, x, y):
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    frozen = {name: p.detach() for name, p in model.named_parameters() if not p.requires_grad}

    def batch_loss(params, x, y):
        return loss_fn(functional_call(model, {**frozen, **params}, (x,)), y)

    return grad(batch_loss)(params, x, y)


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
"""
        },
        "fails": {"q3_check": "one gradient per sample needs a leading dimension of N"},
    },
    # Q3: the bytes predicted for every parameter, frozen ones included (visible model: right).
    "ex12-q3-bytes-of-frozen": {
        "answers": {
            "q3_answer": """def per_sample_grads(model, loss_fn, x, y):
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    frozen = {name: p.detach() for name, p in model.named_parameters() if not p.requires_grad}

    def sample_loss(params, xi, yi):
        return loss_fn(functional_call(model, {**frozen, **params}, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * p.element_size() for p in model.parameters())
"""
        },
        "fails": {"q3_check": "per-sample gradients of the frozen"},
    },
    # Q3: the bytes predicted as 4 per number: right for float32 only.
    "ex12-q3-bytes-float32": {
        "answers": {
            "q3_answer": """def per_sample_grads(model, loss_fn, x, y):
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    frozen = {name: p.detach() for name, p in model.named_parameters() if not p.requires_grad}

    def sample_loss(params, xi, yi):
        return loss_fn(functional_call(model, {**frozen, **params}, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * 4 for p in model.parameters() if p.requires_grad)
"""
        },
        "fails": {"q3_check": "per_sample_bytes(model, batch_size)"},
    },
    # Q5: the single where: the value is right, the gradient at a row of zeros is NaN.
    "ex12-q5-single-where": {
        "answers": {
            "q5_answer": """def thin_plate(v):
    r = v.norm(dim=1)
    return torch.where(r > 0, r**2 * torch.log(r), torch.zeros_like(r))
"""
        },
        "fails": {"q5_check": "torch.where's backward sends the unused branch a gradient of 0"},
    },
    # Q5: the formula as written: NaN value (0 * -inf) and NaN gradient at 0.
    "ex12-q5-formula-as-written": {
        "answers": {
            "q5_answer": """def thin_plate(v):
    r = v.norm(dim=1)
    return r**2 * torch.log(r)
"""
        },
        "fails": {"q5_check": "0 * log(0) = 0 * (-inf), which is NaN"},
    },
    # Q3: a loop over the samples, one autograd.grad each (the check's own reference): right values, not torch.func.
    "ex12-q3-loop": {
        "answers": {
            "q3_answer": """def per_sample_grads(model, loss_fn, x, y):
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    rows = [torch.autograd.grad(loss_fn(model(x[i:i+1]), y[i:i+1]), [p for _, p in named]) for i in range(len(x))]
    return {n: torch.stack([r[k] for r in rows]) for k, (n, _) in enumerate(named)}


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
"""
        },
        "fails": {"q3_check": "that is the loop the question forbids"},
    },
    # Q3: torch.func.grad, but in a loop over the samples instead of vmap.
    "ex12-q3-grad-in-a-loop": {
        "answers": {
            "q3_answer": """def per_sample_grads(model, loss_fn, x, y):
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
        "fails": {"q3_check": "ran the model once per sample"},
    },
    # Q2: the lesson's two-sided penalty where the one-sided one is asked.
    "ex12-q2-two-sided": {
        "answers": {
            "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return ((torch.linalg.vector_norm(g, dim=1) - 1) ** 2).mean()
"""
        },
        "fails": {"q2_check": "the two-sided penalty (the lesson's)"},
    },
    # Q1: the gradient autograd.grad returns under create_graph=True taken to carry no graph.
    "ex12-q1-create-graph-unrecorded": {
        "answers": {"q1_answer": _graphs(B=False)},
        "fails": {"q1_check": "rethink: B"},
    },
    # Q1: forward mode taken to record nothing even through parameters that require grad.
    "ex12-q1-forward-mode-records-nothing": {
        "answers": {"q1_answer": _graphs(E=False)},
        "fails": {"q1_check": "rethink: E"},
    },
    # Q4: forward mode in grad mode: the parameters require grad, so the reverse graph is recorded and saved too.
    "ex12-q4-grad-mode": {
        "answers": {
            "q4_answer": """def jvp_no_graph(model, x, v):
    with fwAD.dual_level():
        out, tangent = fwAD.unpack_dual(model(fwAD.make_dual(x, v)))
    return out.detach(), tangent.detach()
"""
        },
        "fails": {"q4_check": "Your forward-mode product saved tensors for backward"},
    },
    # Q4: the product by reverse mode (two backward passes): right values, tensors saved.
    "ex12-q4-reverse-mode": {
        "answers": {
            "q4_answer": """def jvp_no_graph(model, x, v):
    out, product = torch.autograd.functional.jvp(model, x, v)
    return out.detach(), product.detach()
"""
        },
        "fails": {"q4_check": "that is reverse mode"},
    },
    # Q4: the tangent read after leaving the dual level: there is none any more.
    "ex12-q4-tangent-outside-level": {
        "answers": {
            "q4_answer": """def jvp_no_graph(model, x, v):
    with torch.no_grad(), fwAD.dual_level():
        y = model(fwAD.make_dual(x, v))
    out, tangent = fwAD.unpack_dual(y)
    return out, tangent
"""
        },
        "fails": {"q4_check": "returned None as the JVP"},
    },
}
