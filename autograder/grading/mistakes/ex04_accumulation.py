"""Typical mistakes in ex04_accumulation: see the package docstring for the format."""

MISTAKES = {
    # Q1: backward taken to overwrite .grad: b is the second gradient alone.
    "ex04-q1-overwrite": {
        "answers": {
            "q1_answer": """def predicted_grads():
    return {"a": [3.0, 3.0], "b": [2.0, -4.0], "c": [0.0, 0.0], "d": [3.0, 12.0],
            "e": None, "f": [4.0, 4.0], "g": [3.0, 12.0]}
"""
        },
        "fails": {"q1_check": "rethink: b"},
    },
    # Q1: zero_grad() taken to fill zeros (the default before PyTorch 2.0).
    "ex04-q1-zeros-not-none": {
        "answers": {
            "q1_answer": """def predicted_grads():
    return {"a": [3.0, 3.0], "b": [5.0, -1.0], "c": [0.0, 0.0], "d": [3.0, 12.0],
            "e": [0.0, 0.0], "f": [4.0, 4.0], "g": [3.0, 12.0]}
"""
        },
        "fails": {"q1_check": "rethink: e"},
    },
    # Q1: the logged .grad taken for a snapshot of its value when it was logged.
    "ex04-q1-logged-copy": {
        "answers": {
            "q1_answer": """def predicted_grads():
    return {"a": [3.0, 3.0], "b": [5.0, -1.0], "c": [0.0, 0.0], "d": [3.0, 12.0],
            "e": None, "f": [4.0, 4.0], "g": [3.0, 3.0]}
"""
        },
        "fails": {"q1_check": "rethink: g"},
    },
    # Q2: micro-batch losses not divided: k times the full-batch gradient (3 micro-batches visible).
    "ex04-q2-not-divided": {
        "answers": {
            "q2_answer": """def accumulate(model, x, y, micro_batch):
    for xb, yb in zip(x.split(micro_batch), y.split(micro_batch)):
        F.mse_loss(model(xb), yb).backward()
"""
        },
        "fails": {"q2_check": "is exactly 3x the expected value: each micro-batch's mean loss was not scaled"},
    },
    # Q2: divided by the number of micro-batches: right for equal ones, wrong when the last micro-batch
    # is smaller (the second visible split, 4 + 4 + 3 samples, and hidden ones).
    "ex04-q2-divide-by-count": {
        "answers": {
            "q2_answer": """def accumulate(model, x, y, micro_batch):
    chunks = list(zip(x.split(micro_batch), y.split(micro_batch)))
    for xb, yb in chunks:
        (F.mse_loss(model(xb), yb) / len(chunks)).backward()
"""
        },
        "fails": {"q2_check": "Dividing each loss by the number of micro-batches is right only when"},
    },
    # Q2: zero_grad() inside the loop: only the last micro-batch's gradient is left.
    "ex04-q2-zero-inside": {
        "answers": {
            "q2_answer": """def accumulate(model, x, y, micro_batch):
    n = len(x)
    for xb, yb in zip(x.split(micro_batch), y.split(micro_batch)):
        model.zero_grad()
        (F.mse_loss(model(xb), yb) * (len(xb) / n)).backward()
"""
        },
        "fails": {"q2_check": ".grad was reset between micro-batches (zero_grad(), or .grad set to None"},
    },
    # Q2: the micro-batch losses summed and backwarded once: right gradients, but every micro-batch's
    # graph is alive at the same time, as with the full batch.
    "ex04-q2-one-backward": {
        "answers": {
            "q2_answer": """def accumulate(model, x, y, micro_batch):
    n = len(x)
    total = 0
    for xb, yb in zip(x.split(micro_batch), y.split(micro_batch)):
        total = total + F.mse_loss(model(xb), yb) * (len(xb) / n)
    total.backward()
"""
        },
        "fails": {"q2_check": "run backward() on each micro-batch before the next forward"},
    },
    # Q3: the accumulation peak taken to be the full batch's (3 micro-batches visible).
    "ex04-q3-full-for-accumulation": {
        "answers": {
            "q3_answer": """def accumulation_bytes(n, micro_batch, d, h):
    per_sample = 4 * (d + h + 1 + 1)
    return {"full batch peak": n * per_sample, "accumulation peak": n * per_sample}
"""
        },
        "fails": {"q3_check": "is exactly 3x the expected figure"},
    },
    # Q3: the target left out: mse_loss saves it along with the prediction.
    "ex04-q3-no-target": {
        "answers": {
            "q3_answer": """def accumulation_bytes(n, micro_batch, d, h):
    per_sample = 4 * (d + h + 1)
    return {"full batch peak": n * per_sample, "accumulation peak": min(micro_batch, n) * per_sample}
"""
        },
        "fails": {"q3_check": "too low: exactly the prediction (or the target"},
    },
    # Q3: the Tanh output counted twice (Tanh and the second Linear both save it: one storage).
    "ex04-q3-tanh-twice": {
        "answers": {
            "q3_answer": """def accumulation_bytes(n, micro_batch, d, h):
    per_sample = 4 * (d + 2 * h + 1 + 1)
    return {"full batch peak": n * per_sample, "accumulation peak": min(micro_batch, n) * per_sample}
"""
        },
        "fails": {"q3_check": "the Tanh output counted twice"},
    },
    # Q3: the accumulation peak taken on the last micro-batch: the same as the first when micro_batch divides n,
    # smaller when it does not (the visible check's second batch, 11 samples in 4, 4 and 3).
    "ex04-q3-last-micro-batch": {
        "answers": {
            "q3_answer": """def accumulation_bytes(n, micro_batch, d, h):
    per_sample = 4 * (d + h + 1 + 1)
    last = n - (len(range(0, n, micro_batch)) - 1) * micro_batch
    return {"full batch peak": n * per_sample, "accumulation peak": last * per_sample}
"""
        },
        "fails": {"q3_check": "the peak is the largest micro-batch's"},
    },
}
