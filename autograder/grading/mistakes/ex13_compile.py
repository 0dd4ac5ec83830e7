"""Typical mistakes in ex13_compile: see the package docstring for the format."""

MISTAKES = {
    # Q1: graphs counted instead of breaks (one more for every function).
    "ex13-q1-graphs-not-breaks": {
        "answers": {
            "q1_answer": """def predicted_breaks():
    return {"a": 1, "b": 2, "c": 1, "d": 1, "e": 2, "f": 3, "g": 2, "h": 2}
"""
        },
        "fails": {"q1_check": "(breaks, not graphs) of a and b"},
    },
    # Q1: every Python construct taken for a break: the loop over range() and the if on a shape.
    "ex13-q1-python-breaks": {
        "answers": {
            "q1_answer": """def predicted_breaks():
    return {"a": 0, "b": 1, "c": 3, "d": 1, "e": 1, "f": 2, "g": 1, "h": 1}
"""
        },
        "fails": {"q1_check": "a loop over range, a test on a shape) runs while tracing"},
    },
    # Q1: int(tensor) not recognised as .item().
    "ex13-q1-int-not-item": {
        "answers": {
            "q1_answer": """def predicted_breaks():
    return {"a": 0, "b": 1, "c": 0, "d": 0, "e": 1, "f": 2, "g": 1, "h": 0}
"""
        },
        "fails": {"q1_check": "int() or float() of a tensor"},
    },
    # Q1: one break per function that prints, however many times it prints.
    "ex13-q1-one-break-per-print-function": {
        "answers": {
            "q1_answer": """def predicted_breaks():
    return {"a": 0, "b": 1, "c": 0, "d": 0, "e": 1, "f": 1, "g": 1, "h": 1}
"""
        },
        "fails": {"q1_check": "the graph ends at a print call"},
    },
    # Q2: every tensor a Node saves counted, not each storage once (eager), the compiled figure right.
    "ex13-q2-per-tensor": {
        "answers": {
            "q2_answer": """def predict_saved_bytes(block, n, dtype):
    size = n * torch.empty((), dtype=dtype).element_size()
    if block == "softplus_cubed":
        return {"eager": 3 * size, "aot_eager": 1 * size}
    return {"eager": 5 * size, "aot_eager": 2 * size}
"""
        },
        "fails": {"q2_check": "exp(x) (saved by exp and by log1p: one storage) counted twice"},
    },
    # Q2: compiled taken to save what eager saves.
    "ex13-q2-same-as-eager": {
        "answers": {
            "q2_answer": """def predict_saved_bytes(block, n, dtype):
    size = n * torch.empty((), dtype=dtype).element_size()
    if block == "softplus_cubed":
        return {"eager": 2 * size, "aot_eager": 2 * size}
    return {"eager": 4 * size, "aot_eager": 4 * size}
"""
        },
        "fails": {"q2_check": "min-cut recomputes in the backward graph"},
    },
    # Q2: 4 bytes per element assumed: right for float32, wrong for the hidden float64 inputs.
    "ex13-q2-float32-only": {
        "answers": {
            "q2_answer": """def predict_saved_bytes(block, n, dtype):
    size = n * 4
    if block == "softplus_cubed":
        return {"eager": 2 * size, "aot_eager": 1 * size}
    return {"eager": 4 * size, "aot_eager": 2 * size}
"""
        },
        "fails": {"q2_check": "torch.float64"},
    },
    # Q3: the scale kept as a tensor without detach(): one graph, but gradient flows through the scale.
    "ex13-q3-scale-not-detached": {
        "answers": {
            "q3_answer": """def scaled_loss_one_graph(x, w):
    h = torch.tanh(x @ w)
    h = torch.where(h.sum() > 0, h + 1, h)
    scale = h.abs().max()
    return (h / scale).pow(2).sum()
"""
        },
        "fails": {"q3_check": "no gradient flows through it"},
    },
    # Q3: .item() kept for the scale: compiles under fullgraph=True (the number is captured), but
    # explain() reports a graph break.
    "ex13-q3-item-kept": {
        "answers": {
            "q3_answer": """def scaled_loss_one_graph(x, w):
    h = torch.tanh(x @ w)
    h = torch.where(h.sum() > 0, h + 1, h)
    scale = h.abs().max().item()
    return (h / scale).pow(2).sum()
"""
        },
        "fails": {"q3_check": "(graphs, breaks) reported by explain"},
    },
    # Q3: the branch dropped (always taken): right on inputs where h.sum() > 0 only.
    "ex13-q3-branch-dropped": {
        "answers": {
            "q3_answer": """def scaled_loss_one_graph(x, w):
    h = torch.tanh(x @ w) + 1
    scale = h.abs().max().detach()
    return (h / scale).pow(2).sum()
"""
        },
        "fails": {"q3_check": "both branches of its if"},
    },
    # Q1: the counts measured with graph_breaks on the eight functions instead of predicted.
    "ex13-q1-measured": {
        "answers": {
            "q1_answer": """def predicted_breaks():
    import contextlib, io
    with contextlib.redirect_stdout(io.StringIO()):
        return {name: graph_breaks(fn, torch.randn(8)).breaks for name, fn in FUNCTIONS.items()}
"""
        },
        "fails": {"q1_check": "predicted_breaks() measured the functions"},
    },
    # Q2: the bytes measured around the block (eager and compiled) instead of computed from n and dtype.
    "ex13-q2-measured": {
        "answers": {
            "q2_answer": """def predict_saved_bytes(block, n, dtype):
    x = torch.randn(n, dtype=dtype, requires_grad=True)
    out, meter = measure_saved(BLOCKS[block], x)
    eager = meter.alive_bytes
    torch._dynamo.reset()
    out, meter = measure_saved(torch.compile(BLOCKS[block], backend="aot_eager"), x)
    return {"eager": eager, "aot_eager": meter.alive_bytes}
"""
        },
        "fails": {"q2_check": "Your function measured the block"},
    },
    # Q1: measured once and the result kept (a cache): the swapped functions are measured first, so the
    # kept counts are theirs.
    "ex13-q1-measured-once": {
        "answers": {
            "q1_answer": """import functools


@functools.cache
def predicted_breaks():
    return {name: graph_breaks(fn, torch.randn(8)).breaks for name, fn in FUNCTIONS.items()}
"""
        },
        "fails": {"q1_check": "predicted break counts (breaks, not graphs) of a and b"},
    },
}
