"""Typical mistakes in ex07_memory: see the package docstring for the format."""

_TRAIN = '''def train_and_log(model, opt, batches, val_x, val_y):
    """One epoch of training; returns one (training loss, validation loss) pair of floats per batch."""
    log = []
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
{evaluate}
        log.append({logged})
    return log
'''

MISTAKES = {
    # Q1: the input x is data, so the student thinks it is not saved; the first Linear saves it.
    "ex07-q1-input-not-saved": {
        "answers": {
            "q1_answer": """def saved_bytes(n, d, h1, h2):
    return n * h1 * 4 + n * h2 * 4 + n * 4
"""
        },
        "fails": {"q1_check": "exactly x (saved by the first Linear) left out"},
    },
    # Q1: the loss's own saved tensor (the input of ** 2) is forgotten.
    "ex07-q1-loss-forgotten": {
        "answers": {
            "q1_answer": """def saved_bytes(n, d, h1, h2):
    return n * d * 4 + n * h1 * 4 + n * h2 * 4
"""
        },
        "fails": {"q1_check": "exactly net(x) - y (saved by ** 2) left out"},
    },
    # Q1: the ReLU output counted twice, once per Node that saves it (ReLU and the second Linear).
    "ex07-q1-shared-counted-twice": {
        "answers": {
            "q1_answer": """def saved_bytes(n, d, h1, h2):
    return n * d * 4 + 2 * n * h1 * 4 + n * h2 * 4 + n * 4
"""
        },
        "fails": {"q1_check": "the ReLU output (saved by ReLU and by the second Linear) counted twice"},
    },
    # Q1: numbers counted, not bytes.
    "ex07-q1-elements": {
        "answers": {
            "q1_answer": """def saved_bytes(n, d, h1, h2):
    return n * d + n * h1 + n * h2 + n
"""
        },
        "fails": {"q1_check": "elements rather than bytes"},
    },
    # Q2: the leaking loop unchanged in substance: the validation loss, computed with grad mode on and
    # never backwarded, is still logged as a tensor.
    "ex07-q2-val-loss-tensor": {
        "answers": {
            "q2_answer": _TRAIN.format(
                evaluate="        val_loss = F.mse_loss(model(val_x), val_y)", logged="(loss.item(), val_loss)"
            )
        },
        "fails": {"q2_check": "still alive while the log is kept"},
    },
    # Q2: numbers logged, but the evaluation still records a graph (no torch.no_grad()).
    "ex07-q2-eval-with-grad": {
        "answers": {
            "q2_answer": _TRAIN.format(
                evaluate="        val_loss = F.mse_loss(model(val_x), val_y)", logged="(loss.item(), val_loss.item())"
            )
        },
        "fails": {"q2_check": "ran the validation forward with grad mode on: it records a graph nobody will backward"},
    },
    # Q2: the training loss tensor is kept after backward: no saved tensors, but Nodes and a tensor.
    "ex07-q2-loss-tensor-kept": {
        "answers": {
            "q2_answer": _TRAIN.format(
                evaluate="        with torch.no_grad():\n            val_loss = F.mse_loss(model(val_x), val_y)",
                logged="(loss, val_loss.item())",
            )
        },
        "fails": {"q2_check": "a loss tensor kept after backward still pins its graph's Nodes"},
    },
    # Q3: the myth that a stored loss keeps its whole graph even after backward (A and G).
    "ex07-q3-stored-loss-myth": {
        "answers": {
            "q3_answer": """def steps_alive():
    return {"A": 4, "B": 4, "C": 1, "D": 4, "E": 4, "F": 0, "G": 4}
"""
        },
        "fails": {"q3_check": "rethink: A"},
    },
    # Q3: retain_graph=True thought to keep every step's graph even when nothing refers to it.
    "ex07-q3-retain-keeps-all": {
        "answers": {
            "q3_answer": """def steps_alive():
    return {"A": 0, "B": 4, "C": 4, "D": 4, "E": 4, "F": 0, "G": 0}
"""
        },
        "fails": {"q3_check": "rethink: C"},
    },
    # Q3: the running sums E and G confused: only the visible A, B, C are right.
    "ex07-q3-running-sums": {
        "answers": {
            "q3_answer": """def steps_alive():
    return {"A": 0, "B": 4, "C": 1, "D": 4, "E": 1, "F": 0, "G": 4}
"""
        },
        "fails": {"q3_check": "rethink: E, G"},
    },
}
