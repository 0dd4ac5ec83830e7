"""Typical mistakes in ex05_inplace: see the package docstring for the format."""

MISTAKES = {
    # Q1: a clone taken for a view of a: predicted to share a's counter.
    "ex05-q1-clone-shares": {
        "answers": {
            "q1_answer": """def versions():
    return {"a": 4, "b": 4, "c": 4, "d": 4, "e": 1, "f": 0, "g": 1}
"""
        },
        "fails": {"q1_check": "rethink: c"},
    },
    # Q1: .data taken to share a's version counter, like detach() (it has its own).
    "ex05-q1-data-shares": {
        "answers": {
            "q1_answer": """def versions():
    return {"a": 4, "b": 4, "c": 1, "d": 4, "e": 4, "f": 0, "g": 1}
"""
        },
        "fails": {"q1_check": "rethink: e"},
    },
    # Q1: a write that changes no value (g.add_(0)) taken not to count.
    "ex05-q1-noop-write": {
        "answers": {
            "q1_answer": """def versions():
    return {"a": 4, "b": 4, "c": 1, "d": 4, "e": 1, "f": 0, "g": 0}
"""
        },
        "fails": {"q1_check": "rethink: g"},
    },
    # Q2: the seed article's myth: `y = x * 2; y += 1` taken to raise.
    "ex05-q2-myth": {
        "answers": {
            "q2_answer": """def classify():
    return {"A": "raises", "B": "raises", "C": "fine", "D": "raises", "E": "raises", "F": "fine",
            "G": "raises", "H": "fine", "I": "raises", "J": "fine"}
"""
        },
        "fails": {"q2_check": "rethink: A"},
    },
    # Q2: .data taken to be caught like detach(), and the view's write taken not to count.
    "ex05-q2-data-caught": {
        "answers": {
            "q2_answer": """def classify():
    return {"A": "fine", "B": "raises", "C": "fine", "D": "raises", "E": "raises", "F": "raises",
            "G": "fine", "H": "fine", "I": "raises", "J": "fine"}
"""
        },
        "fails": {"q2_check": "rethink: F, G"},
    },
    # Q3: the error silenced with .data: the loss is right, the gradients silently wrong.
    "ex05-q3-data": {
        "answers": {
            "q3_answer": """def gated_fixed(x, w, v):
    h = x @ w
    g = torch.sigmoid(h)
    g.data *= 2
    g.data[:, 0] = 1
    out = g * torch.tanh(h)
    return ((out @ v) ** 2).mean()
"""
        },
        "fails": {"q3_check": "a change made through .data or under torch.no_grad() is not recorded"},
    },
    # Q3: clone() after the first in-place change: the sigmoid's output is already modified.
    "ex05-q3-clone-too-late": {
        "answers": {
            "q3_answer": """def gated_fixed(x, w, v):
    h = x @ w
    g = torch.sigmoid(h)
    g *= 2
    g = g.clone()
    g[:, 0] = 1
    out = g * torch.tanh(h)
    return ((out @ v) ** 2).mean()
"""
        },
        "fails": {"q3_check": "output 0 of Sigmoid"},
    },
    # Q4: the sigmoid's output counted twice in gated (it is also the product's saved input).
    "ex05-q4-counted-twice": {
        "answers": {
            "q4_answer": """def saved_bytes(n, d, h):
    before = 4 * (n * d + 4 * n * h + n)
    return {"before": before, "after": before}
"""
        },
        "fails": {"q4_check": "one [n, h] activation counted twice"},
    },
    # Q4: the clone taken to cost nothing for backward.
    "ex05-q4-clone-free": {
        "answers": {
            "q4_answer": """def saved_bytes(n, d, h):
    before = 4 * (n * d + 3 * n * h + n)
    return {"before": before, "after": before}
"""
        },
        "fails": {"q4_check": "the clone's storage: .clone() copies the sigmoid's output"},
    },
}
