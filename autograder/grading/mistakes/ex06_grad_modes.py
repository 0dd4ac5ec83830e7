"""Typical mistakes in ex06_grad_modes: see the package docstring for the format."""

MISTAKES = {
    # Q1: eval() taken for a grad mode: the output of an eval-mode model predicted not to require grad.
    "ex06-q1-eval-stops-grad": {
        "answers": {
            "q1_answer": """def predictions():
    return {"a": True, "b": False, "c": True, "layer.weight": True, "d": True, "e": False, "f": True,
            "g": False, "h": False, "k": False}
"""
        },
        "fails": {"q1_check": "rethink: k"},
    },
    # Q1: everything created inside no_grad taken not to require grad, even when asked for.
    "ex06-q1-created-in-no-grad": {
        "answers": {
            "q1_answer": """def predictions():
    return {"a": True, "b": False, "c": False, "layer.weight": False, "d": True, "e": False, "f": True,
            "g": False, "h": False, "k": True}
"""
        },
        "fails": {"q1_check": "rethink: c, layer.weight"},
    },
    # Q2: inference tensors taken to be unusable in any recorded computation (w + t works).
    "ex06-q2-inference-never": {
        "answers": {
            "q2_answer": """def errors():
    return {"A": "not_built", "B": "inference_tensor", "C": "inference_tensor", "D": "inference_tensor",
            "E": None, "F": "modified_inplace", "G": "leaf_inplace", "H": None, "I": "consumed", "J": None,
            "K": None, "L": "not_built"}
"""
        },
        "fails": {"q2_check": "rethink: C"},
    },
    # Q2: enable_grad taken to revive a value computed under no_grad; eval() taken to stop backward.
    "ex06-q2-enable-grad-revives": {
        "answers": {
            "q2_answer": """def errors():
    return {"A": "not_built", "B": "inference_tensor", "C": None, "D": "inference_tensor", "E": None,
            "F": "modified_inplace", "G": "leaf_inplace", "H": None, "I": "consumed", "J": None,
            "K": "not_built", "L": None}
"""
        },
        "fails": {"q2_check": "rethink: K, L"},
    },
    # Q3: the features computed under inference_mode: the head must save them for backward.
    "ex06-q3-inference-mode": {
        "answers": {
            "q3_answer": """def head_loss(backbone, head, x, target):
    with torch.inference_mode():
        features = backbone(x)
    return F.cross_entropy(head(features), target)
"""
        },
        "fails": {"q3_check": "Inference tensors cannot be saved for backward"},
    },
    # Q3: detach() after a forward in grad mode: right gradients, but the backbone's graph was built
    # and its activations saved.
    "ex06-q3-detach": {
        "answers": {
            "q3_answer": """def head_loss(backbone, head, x, target):
    features = backbone(x).detach()
    return F.cross_entropy(head(features), target)
"""
        },
        "fails": {"q3_check": "a detach() after it cuts the gradient, not what was saved"},
    },
    # Q3: no_grad around the whole step: no graph for the loss either.
    "ex06-q3-no-grad-everything": {
        "answers": {
            "q3_answer": """def head_loss(backbone, head, x, target):
    with torch.no_grad():
        return F.cross_entropy(head(backbone(x)), target)
"""
        },
        "fails": {"q3_check": "does not require grad and does not have a grad_fn"},
    },
    # Q3: nothing frozen: the backbone gets gradients too.
    "ex06-q3-not-frozen": {
        "answers": {
            "q3_answer": """def head_loss(backbone, head, x, target):
    return F.cross_entropy(head(backbone(x)), target)
"""
        },
        "fails": {
            "q3_check": "The backbone's forward recorded a graph: its output has a grad_fn, so the backbone saved"
        },
    },
    # Q4: the target computed with the graph: gradients flow into the target network.
    "ex06-q4-target-attached": {
        "answers": {
            "q4_answer": """def td_loss(online, target, s, a, r, s2, gamma):
    q = online(s).gather(1, a[:, None]).squeeze(1)
    y = r + gamma * target(s2).max(dim=1).values
    return F.mse_loss(q, y)
"""
        },
        "fails": {"q4_check": "A gradient reached the target network: the target value was computed in grad mode"},
    },
    # Q4: detach in the wrong place: on the online side, so no gradient reaches the online network.
    "ex06-q4-detach-online": {
        "answers": {
            "q4_answer": """def td_loss(online, target, s, a, r, s2, gamma):
    q = online(s).detach().gather(1, a[:, None]).squeeze(1)
    y = r + gamma * target(s2).max(dim=1).values
    return F.mse_loss(q, y)
"""
        },
        "fails": {"q4_check": "the online network's Q(s) was cut from the graph"},
    },
    # Q5: the update written in place without no_grad: refused on leaves that require grad.
    "ex06-q5-no-no-grad": {
        "answers": {
            "q5_answer": """def soft_update(target, online, tau):
    for p_target, p_online in zip(target.parameters(), online.parameters()):
        p_target.mul_(1 - tau).add_(p_online, alpha=tau)
"""
        },
        "fails": {"q5_check": "a leaf Variable that requires grad is being used in an in-place operation"},
    },
    # Q5: new parameters instead of an update in place: an optimizer would keep the old ones.
    "ex06-q5-new-parameters": {
        "answers": {
            "q5_answer": """def soft_update(target, online, tau):
    new = [torch.nn.Parameter((1 - tau) * p_t.detach() + tau * p_o.detach())
           for p_t, p_o in zip(target.parameters(), online.parameters())]
    names = [name for name, _ in target.named_parameters()]
    for name, p in zip(names, new):
        module_name, attr = name.rsplit(".", 1)
        setattr(target.get_submodule(module_name), attr, p)
"""
        },
        "fails": {"q5_check": "the same tensor objects (updated in place)"},
    },
}
