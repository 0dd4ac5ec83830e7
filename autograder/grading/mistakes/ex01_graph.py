"""Typical mistakes in ex01_graph: see the package docstring for the format."""

MISTAKES = {
    # Q1: w is used twice, so the student counts one AccumulateGrad per use.
    "ex01-q1-accumulate-per-use": {
        "answers": {
            "q1_answer": '''def predicted_counts():
    """Return {"x_a": {kind: count}, "x_b": {kind: count}}: the Nodes in the graphs of f(x_a, w, b)
    and f(x_b, w, b)."""
    return {
        "x_a": {"SumBackward0": 1, "MulBackward0": 4, "TanhBackward0": 1, "AddBackward0": 1,
                "AccumulateGrad": 3},
        "x_b": {"SumBackward0": 1, "MulBackward0": 2, "TanhBackward0": 1, "AddBackward0": 1,
                "AccumulateGrad": 3},
    }
'''
        },
        "fails": {"q1_check": "rethink: AccumulateGrad"},
    },
    # Q1: the Nodes recorded by the loop condition h.abs().max() counted too; they are not reachable
    # from the result, so they are not in its graph.
    "ex01-q1-condition-nodes": {
        "answers": {
            "q1_answer": '''def predicted_counts():
    """Return {"x_a": {kind: count}, "x_b": {kind: count}}: the Nodes in the graphs of f(x_a, w, b)
    and f(x_b, w, b)."""
    return {
        "x_a": {"SumBackward0": 1, "MulBackward0": 4, "TanhBackward0": 1, "AddBackward0": 1,
                "AccumulateGrad": 2, "AbsBackward0": 3, "MaxBackward1": 3},
        "x_b": {"SumBackward0": 1, "MulBackward0": 2, "TanhBackward0": 1, "AddBackward0": 1,
                "AccumulateGrad": 2, "AbsBackward0": 1, "MaxBackward1": 1},
    }
'''
        },
        "fails": {"q1_check": "rethink: AbsBackward0, MaxBackward1"},
    },
    # Q2: residual written y - p: the opposite sign.
    "ex01-q2-sign": {
        "answers": {
            "q2_answer": """def grad_wb(w, b, x, y):
    p = torch.tanh(x @ w + b)
    dL_dz = 2 * (y - p) / y.numel() * (1 - p ** 2)
    return {"w": x.T @ dL_dz, "b": dL_dz.sum()}
"""
        },
        "fails": {"q2_check": "has the opposite sign of the expected value: check the residual"},
    },
    # Q2: the 1/N of the mean forgotten: N (= 5 at the visible point) times too large.
    "ex01-q2-sum-not-mean": {
        "answers": {
            "q2_answer": """def grad_wb(w, b, x, y):
    p = torch.tanh(x @ w + b)
    dL_dz = 2 * (p - y) * (1 - p ** 2)
    return {"w": x.T @ dL_dz, "b": dL_dz.sum()}
"""
        },
        "fails": {"q2_check": "is exactly 5x the expected value: the 1/N of the mean forgotten (N = 5 rows here)"},
    },
    # Q2: the 2 of the square forgotten: half the gradient.
    "ex01-q2-half": {
        "answers": {
            "q2_answer": """def grad_wb(w, b, x, y):
    p = torch.tanh(x @ w + b)
    dL_dz = (p - y) / y.numel() * (1 - p ** 2)
    return {"w": x.T @ dL_dz, "b": dL_dz.sum()}
"""
        },
        "fails": {
            "q2_check": "is exactly 1/2 of the expected value: the factor 2 of the square's derivative forgotten"
        },
    },
    # Q2: the local derivative of TanhBackward0 left out of the chain.
    "ex01-q2-no-tanh": {
        "answers": {
            "q2_answer": """def grad_wb(w, b, x, y):
    p = torch.tanh(x @ w + b)
    dL_dz = 2 * (p - y) / y.numel()
    return {"w": x.T @ dL_dz, "b": dL_dz.sum()}
"""
        },
        "fails": {"q2_check": "TanhBackward0 multiplies by 1 - p**2"},
    },
    # Q2: b's gradient not summed over the N rows it was broadcast along: shape [N], not [].
    "ex01-q2-b-not-summed": {
        "answers": {
            "q2_answer": """def grad_wb(w, b, x, y):
    p = torch.tanh(x @ w + b)
    dL_dz = 2 * (p - y) / y.numel() * (1 - p ** 2)
    return {"w": x.T @ dL_dz, "b": dL_dz}
"""
        },
        "fails": {
            "q2_check": "b has shape (5,), expected (): it has the extra dimension 0 (size 5). Summed over it, it "
            "is the expected value: a gradient not summed over the dimension it was broadcast along"
        },
    },
    # Q2: autograd used anyway; the check runs the function under torch.no_grad().
    "ex01-q2-autograd": {
        "answers": {
            "q2_answer": """def grad_wb(w, b, x, y):
    w, b = w.clone().requires_grad_(), b.clone().requires_grad_()
    loss = ((torch.tanh(x @ w + b) - y) ** 2).mean()
    loss.backward()
    return {"w": w.grad, "b": b.grad}
"""
        },
        "fails": {"q2_check": "element 0 of tensors does not require grad"},
    },
    # Q3: recursion without a set of seen Nodes: a Node reached by two paths is counted twice.
    "ex01-q3-no-dedup": {
        "answers": {
            "q3_answer": """def count_nodes(t):
    def walk(node):
        if node is None:
            return 0
        return 1 + sum(walk(nxt) for nxt, _ in node.next_functions)
    return walk(t.grad_fn)
"""
        },
        "fails": {"q3_check": "count it once"},
    },
    # Q3: AccumulateGrad Nodes left out, as if only operations were Nodes.
    "ex01-q3-no-accumulate": {
        "answers": {
            "q3_answer": """def count_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen or type(node).__name__ == "AccumulateGrad":
            continue
        seen.add(node)
        stack.extend(nxt for nxt, _ in node.next_functions)
    return len(seen)
"""
        },
        "fails": {"q3_check": "AccumulateGrad too"},
    },
}
