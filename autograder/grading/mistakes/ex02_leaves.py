"""Typical mistakes in ex02_leaves: see the package docstring for the format."""

MISTAKES = {
    # Q1: v = randn(requires_grad=True).double() taken for a leaf that gets its .grad.
    "ex02-q1-cast-is-leaf": {
        "answers": {
            "q1_answer": """def predictions():
    return {
        "is_leaf":       {"w": True,  "v": True,  "u": True,  "h": False, "g": False, "s": True,  "k": True},
        "requires_grad": {"w": True,  "v": True,  "u": True,  "h": True,  "g": True,  "s": False, "k": False},
        "grad is None":  {"w": False, "v": False, "u": True,  "h": False, "g": True,  "s": True,  "k": True},
    }
"""
        },
        "fails": {"q1_check": "rethink: v.is_leaf"},
    },
    # Q1: s (computed under no_grad) predicted as a non-leaf that does not require grad.
    "ex02-q1-inconsistent": {
        "answers": {
            "q1_answer": """def predictions():
    return {
        "is_leaf":       {"w": True,  "v": False, "u": True,  "h": False, "g": False, "s": False, "k": True},
        "requires_grad": {"w": True,  "v": True,  "u": True,  "h": True,  "g": True,  "s": False, "k": False},
        "grad is None":  {"w": False, "v": True,  "u": True,  "h": False, "g": True,  "s": True,  "k": True},
    }
"""
        },
        "fails": {"q1_check": "it is always a leaf"},
    },
    # Q1: s, computed under torch.no_grad(), taken for a tracked result of w * 2.
    "ex02-q1-no-grad-tracked": {
        "answers": {
            "q1_answer": """def predictions():
    return {
        "is_leaf":       {"w": True,  "v": False, "u": True,  "h": False, "g": False, "s": False, "k": True},
        "requires_grad": {"w": True,  "v": True,  "u": True,  "h": True,  "g": True,  "s": True,  "k": False},
        "grad is None":  {"w": False, "v": True,  "u": True,  "h": False, "g": True,  "s": True,  "k": True},
    }
"""
        },
        "fails": {"q1_check": "rethink: s.is_leaf, s.requires_grad"},
    },
    # Q2: h.grad read without retain_grad(): None, because h is not a leaf.
    "ex02-q2-no-retain": {
        "answers": {
            "q2_answer": """def grad_of_hidden(x, w1, w2):
    h, loss = forward(x, w1, w2)
    loss.backward()
    return h.grad
"""
        },
        "fails": {
            "q2_check": "d loss / d h is None: is it h.grad, read without h.retain_grad() before loss.backward()?"
        },
    },
    # Q2: create_graph=True copied from a higher-order example: the result is still attached.
    "ex02-q2-create-graph": {
        "answers": {
            "q2_answer": """def grad_of_hidden(x, w1, w2):
    h, loss = forward(x, w1, w2)
    return torch.autograd.grad(loss, h, create_graph=True)[0]
"""
        },
        "fails": {"q2_check": "Was the gradient taken with create_graph=True"},
    },
    # Q2: two backward passes (the first with retain_graph=True): the retained .grad sums them.
    "ex02-q2-backward-twice": {
        "answers": {
            "q2_answer": """def grad_of_hidden(x, w1, w2):
    h, loss = forward(x, w1, w2)
    h.retain_grad()
    loss.backward(retain_graph=True)  # a first look at the gradients
    loss.backward()
    return h.grad.detach()
"""
        },
        "fails": {"q2_check": "is exactly 2x the expected value: backward() ran twice"},
    },
    # Q3: scaled after requires_grad=True: a non-leaf (MulBackward0) whose .grad stays None.
    "ex02-q3-scaled-after": {
        "answers": {
            "q3_answer": """def make_param(*shape):
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True) * 0.1
"""
        },
        "fails": {"q3_check": "not a leaf (grad_fn=MulBackward0)"},
    },
    # Q3: cast after requires_grad_(): a non-leaf (ToCopyBackward0).
    "ex02-q3-cast-after": {
        "answers": {
            "q3_answer": """def make_param(*shape):
    return (0.1 * torch.randn(*shape)).requires_grad_().double()
"""
        },
        "fails": {"q3_check": "not a leaf (grad_fn=ToCopyBackward0)"},
    },
    # Q3: requires_grad never set.
    "ex02-q3-no-requires-grad": {
        "answers": {
            "q3_answer": """def make_param(*shape):
    return 0.1 * torch.randn(*shape, dtype=torch.float64)
"""
        },
        "fails": {"q3_check": "requires_grad=False"},
    },
    # Q3: a float32 leaf: right kind of tensor, wrong dtype.
    "ex02-q3-float32": {
        "answers": {
            "q3_answer": """def make_param(*shape):
    return (0.1 * torch.randn(*shape)).requires_grad_()
"""
        },
        "fails": {"q3_check": "expected torch.float64"},
    },
}
