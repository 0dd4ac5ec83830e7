"""Typical mistakes in ex08_checkpoint: see the package docstring for the format."""

MISTAKES = {
    # Q1: the reentrant variant on data that does not require grad: the first segment's parameters
    # get no gradient (PyTorch only warns).
    "ex08-q1-reentrant": {
        "answers": {
            "q1_answer": """def forward_checkpointed(model, x):
    return checkpoint_sequential(model, 3, x, use_reentrant=True)
"""
        },
        "fails": {"q1_check": "do not require grad: it records nothing for backward; pass use_reentrant=False"},
    },
    # Q1: use_reentrant left out: in PyTorch 2.13 that is still the reentrant variant, with a warning.
    "ex08-q1-use-reentrant-left-out": {
        "answers": {
            "q1_answer": """def forward_checkpointed(model, x):
    for block in model[:-1]:
        x = checkpoint(block, x)
    return model[-1](x)
"""
        },
        "fails": {"q1_check": "do not require grad: it records nothing for backward; pass use_reentrant=False"},
    },
    # Q1: the RNG state not preserved: the recomputation draws other dropout masks, so the gradients
    # silently differ from the plain model's.
    "ex08-q1-rng-not-preserved": {
        "answers": {
            "q1_answer": """def forward_checkpointed(model, x):
    for block in model[:-1]:
        x = checkpoint(block, x, use_reentrant=False, preserve_rng_state=False)
    return model[-1](x)
"""
        },
        "fails": {"q1_check": "Dropout drew new masks in the recomputation: the RNG state was not preserved"},
    },
    # Q1: one segment: checkpoint_sequential never checkpoints its last segment, so nothing is saved.
    "ex08-q1-one-segment": {
        "answers": {
            "q1_answer": """def forward_checkpointed(model, x):
    return checkpoint_sequential(model, 1, x, use_reentrant=False)
"""
        },
        "fails": {"q1_check": "peak live bytes at most 60 % of the plain model's is too high"},
    },
    # Q1: the whole model in one non-reentrant checkpoint: the gradients are right and the forward
    # keeps only x, but backward recomputes every activation at once, so the peak is the plain
    # model's (SavedTensorMeter, blind to the recomputation, used to give it full marks).
    "ex08-q1-whole-model-one-checkpoint": {
        "answers": {
            "q1_answer": """def forward_checkpointed(model, x):
    return checkpoint(model, x, use_reentrant=False)
"""
        },
        "fails": {"q1_check": "One checkpoint ran, around the whole model"},
    },
    # Q2: every block its own segment, "the most checkpointing saves the most memory".
    "ex08-q2-every-block": {
        "answers": {
            "q2_answer": """def best_segments(model, x):
    return len(model)
"""
        },
        "fails": {"q2_check": "one segment per block still keeps every block's input alive"},
    },
    # Q2: the sqrt(n) rule of thumb without measuring: right for Linear-Tanh stacks, wrong for MLP blocks.
    "ex08-q2-sqrt-rule": {
        "answers": {
            "q2_answer": """def best_segments(model, x):
    return math.isqrt(len(model))
"""
        },
        "fails": {
            "q2_check": "the sqrt(n) rule assumes a block saves about as much as its input, "
            "which this model's blocks do not"
        },
    },
    # Q2: measured, but the last of several equal peaks kept instead of the first.
    "ex08-q2-last-of-ties": {
        "answers": {
            "q2_answer": """def best_segments(model, x):
    best, best_peak = 1, None
    for segments in range(1, len(model) + 1):
        with SavedTensorMeter(exclude=model.parameters()) as meter:
            checkpoint_sequential(model, segments, x, use_reentrant=False).sum().backward()
        if best_peak is None or meter.peak_bytes <= best_peak:
            best, best_peak = segments, meter.peak_bytes
    return best
"""
        },
        "fails": {"q2_check": "of equal peaks keep the first, the smallest count"},
    },
    # Q3: the reentrant variant believed to work like the non-reentrant one.
    "ex08-q3-reentrant-works": {
        "answers": {
            "q3_answer": """def predictions():
    works = {"h.requires_grad": True, "block grad is None": False, "head grad is None": False}
    return {"A": dict(works), "B": dict(works), "C": dict(works), "D": dict(works)}
"""
        },
        "fails": {"q3_check": "rethink: A: h.requires_grad, D: h.requires_grad"},
    },
    # Q3: leaving use_reentrant out believed to mean use_reentrant=False.
    "ex08-q3-default-non-reentrant": {
        "answers": {
            "q3_answer": """def predictions():
    broken = {"h.requires_grad": False, "block grad is None": True, "head grad is None": False}
    works = {"h.requires_grad": True, "block grad is None": False, "head grad is None": False}
    return {"A": broken, "B": dict(works), "C": dict(works), "D": dict(works)}
"""
        },
        "fails": {"q3_check": "rethink: D: h.requires_grad"},
    },
    # Q3: the head believed to lose its gradient too when the checkpointed block before it does.
    "ex08-q3-head-loses-grad": {
        "answers": {
            "q3_answer": """def predictions():
    broken = {"h.requires_grad": False, "block grad is None": True, "head grad is None": True}
    works = {"h.requires_grad": True, "block grad is None": False, "head grad is None": False}
    return {"A": dict(broken), "B": dict(works), "C": dict(works), "D": dict(broken)}
"""
        },
        "fails": {"q3_check": "rethink: A: head grad is None, D: head grad is None"},
    },
}
