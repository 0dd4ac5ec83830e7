"""Typical mistakes in ex03_backward: see the package docstring for the format."""

MISTAKES = {
    # Q1: a Python number taken for "nothing saved": (a * 3) predicted to backward twice.
    "ex03-q1-number-not-saved": {
        "answers": {
            "q1_answer": """def second_backward():
    return {"A": "ok", "B": "ok", "C": "error", "D": "ok",
            "E": "ok", "F": "error", "G": "error", "H": "ok"}
"""
        },
        "fails": {"q1_check": "rethink: D"},
    },
    # Q1: every second backward taken to fail, as if backward destroyed the whole graph.
    "ex03-q1-always-error": {
        "answers": {
            "q1_answer": """def second_backward():
    return {name: "error" for name in "ABCDEFGH"}
"""
        },
        "fails": {"q1_check": "rethink: A, B"},
    },
    # Q2: the first backward without retain_graph: the second one meets the freed trunk.
    "ex03-q2-no-retain": {
        "answers": {
            "q2_answer": """def grads_summed(trunk, head1, head2, x, y1, y2):
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    (loss1 + loss2).backward()
    return {name: p.grad.detach().clone() for name, p in named_parameters(trunk, head1, head2).items()}


def grads_two_passes(trunk, head1, head2, x, y1, y2):
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    loss1.backward()
    loss2.backward()
    return {name: p.grad.detach().clone() for name, p in named_parameters(trunk, head1, head2).items()}
"""
        },
        "fails": {"q2_check": "Trying to backward through the graph a second time"},
    },
    # Q2: the second pass backwards the total: loss1's gradient is counted twice (head 1: exactly 2x).
    "ex03-q2-total-second": {
        "answers": {
            "q2_answer": """def grads_summed(trunk, head1, head2, x, y1, y2):
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    (loss1 + loss2).backward()
    return {name: p.grad.detach().clone() for name, p in named_parameters(trunk, head1, head2).items()}


def grads_two_passes(trunk, head1, head2, x, y1, y2):
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    loss1.backward(retain_graph=True)
    (loss1 + loss2).backward()
    return {name: p.grad.detach().clone() for name, p in named_parameters(trunk, head1, head2).items()}
"""
        },
        "fails": {"q2_check": "head1.weight is exactly 2x the expected value"},
    },
    # Q2: gradients reset between the two passes, as if each loss needed a clean .grad: only loss2's
    # gradient is left, and head 1 has none.
    "ex03-q2-reset-between": {
        "answers": {
            "q2_answer": """def grads_summed(trunk, head1, head2, x, y1, y2):
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    (loss1 + loss2).backward()
    return {name: p.grad.detach().clone() for name, p in named_parameters(trunk, head1, head2).items()}


def grads_two_passes(trunk, head1, head2, x, y1, y2):
    params = named_parameters(trunk, head1, head2)
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    loss1.backward(retain_graph=True)
    for p in params.values():
        p.grad = None
    loss2.backward()
    return {name: None if p.grad is None else p.grad.detach().clone() for name, p in params.items()}
"""
        },
        "fails": {"q2_check": ".grad was reset between the backward passes"},
    },
    # Q2: the forward run twice, once per loss: the same gradients, but not one graph used by two backward passes.
    "ex03-q2-two-forwards": {
        "answers": {
            "q2_answer": """def grads_summed(trunk, head1, head2, x, y1, y2):
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    (loss1 + loss2).backward()
    return {name: p.grad.detach().clone() for name, p in named_parameters(trunk, head1, head2).items()}


def grads_two_passes(trunk, head1, head2, x, y1, y2):
    loss1, _ = losses(trunk, head1, head2, x, y1, y2)
    loss1.backward()
    _, loss2 = losses(trunk, head1, head2, x, y1, y2)
    loss2.backward()
    return {name: p.grad.detach().clone() for name, p in named_parameters(trunk, head1, head2).items()}
"""
        },
        "fails": {"q2_check": "grads_two_passes ran the trunk's forward more than once"},
    },
    # Q3: the first gradient taken without create_graph=True: nothing left to differentiate.
    "ex03-q3-no-create-graph": {
        "answers": {
            "q3_answer": """def derivatives(f, x):
    x = x.detach().requires_grad_()
    (first,) = torch.autograd.grad(f(x).sum(), x)
    (second,) = torch.autograd.grad(first.sum(), x)
    return first, second
"""
        },
        "fails": {"q3_check": "does not require grad and does not have a grad_fn"},
    },
    # Q3: the first derivative returned with its graph (create_graph=True), not detached.
    "ex03-q3-attached": {
        "answers": {
            "q3_answer": """def derivatives(f, x):
    x = x.detach().requires_grad_()
    (first,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    (second,) = torch.autograd.grad(first.sum(), x)
    return first, second
"""
        },
        "fails": {"q3_check": "create_graph=True, which the second derivative needs, leaves f'(x) in the graph"},
    },
    # Q3: backward(create_graph=True) twice into x.grad: the "second derivative" is f' + f''
    # (two backward passes summed in .grad), and PyTorch warns about the reference cycle.
    "ex03-q3-backward-into-grad": {
        "answers": {
            "q3_answer": """def derivatives(f, x):
    x = x.detach().requires_grad_()
    f(x).sum().backward(create_graph=True)
    first = x.grad.detach().clone()
    x.grad.sum().backward()
    return first, x.grad.detach()
"""
        },
        "fails": {"q3_check": "x.grad then holds f'(x) + f''(x)"},
    },
    # Q4: the ReLU output counted twice (ReLU and the second Linear both save it: one storage).
    "ex03-q4-relu-twice": {
        "answers": {
            "q4_answer": """def loop_bytes(n, d, h, steps):
    graph = 4 * (n * d + 2 * n * h + n)
    return {"peak without retain_graph": graph,
            "alive after the loop with retain_graph": graph,
            "peak with retain_graph": 2 * graph}
"""
        },
        "fails": {"q4_check": "the ReLU output counted twice"},
    },
    # Q4: the input batch left out, as if only layer outputs were saved.
    "ex03-q4-no-input": {
        "answers": {
            "q4_answer": """def loop_bytes(n, d, h, steps):
    graph = 4 * (n * h + n)
    return {"peak without retain_graph": graph,
            "alive after the loop with retain_graph": graph,
            "peak with retain_graph": 2 * graph}
"""
        },
        "fails": {"q4_check": "exactly x (the batch) left out"},
    },
    # Q4: retain_graph taken to keep every step's graph (memory growing with the steps).
    "ex03-q4-grows": {
        "answers": {
            "q4_answer": """def loop_bytes(n, d, h, steps):
    graph = 4 * (n * d + n * h + n)
    return {"peak without retain_graph": graph,
            "alive after the loop with retain_graph": steps * graph,
            "peak with retain_graph": steps * graph}
"""
        },
        "fails": {"q4_check": "is exactly 3x the expected figure"},
    },
    # Q4: the peak with retain_graph taken as one graph: the previous step's graph is forgotten.
    "ex03-q4-peak-one-graph": {
        "answers": {
            "q4_answer": """def loop_bytes(n, d, h, steps):
    graph = 4 * (n * d + n * h + n)
    return {"peak without retain_graph": graph,
            "alive after the loop with retain_graph": graph,
            "peak with retain_graph": graph}
"""
        },
        "fails": {"q4_check": "too low: exactly the size of one step's graph"},
    },
}
