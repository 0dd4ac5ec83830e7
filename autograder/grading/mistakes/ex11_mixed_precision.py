"""Typical mistakes in ex11_mixed_precision: see the package docstring for the format."""

_STEP = """def scaled_step(model, optimizer, scaler, x, y, max_norm):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
{body}"""

MISTAKES = {
    # Q1: one cast per parameter (and one for an input that requires grad), whatever the op: right
    # on an MLP, too high with LayerNorm, whose parameters are never cast.
    "ex11-q1-every-parameter": {
        "answers": {
            "q1_answer": """def count_casts(model, x):
    return sum(1 for p in model.parameters() if p.requires_grad) + int(x.requires_grad)
"""
        },
        "fails": {"q1_check": "LayerNorm's parameters"},
    },
    # Q1: the input counted as cast with a Node even when it needs no grad.
    "ex11-q1-input-always": {
        "answers": {
            "q1_answer": """def count_casts(model, x):
    return sum(1 for p in model.parameters() if p.requires_grad) + 1
"""
        },
        "fails": {"q1_check": "x needs no grad here, so its cast records none"},
    },
    # Q1: the graph walked, but of a forward run without autocast: no cast at all.
    "ex11-q1-no-autocast": {
        "answers": {
            "q1_answer": """def count_casts(model, x):
    return trace(model(x)).counts().get("ToCopyBackward0", 0)
"""
        },
        "fails": {"q1_check": "forward outside autocast"},
    },
    # Q2: the bytes of a float32 run: 4 bytes per element.
    "ex11-q2-float32": {
        "answers": {
            "q2_answer": """def saved_bytes_bf16(widths, batch):
    activations = batch * sum(widths[:-1]) * 4
    weight_copies = sum(widths[i] * widths[i + 1] for i in range(1, len(widths) - 1)) * 4
    return activations + weight_copies
"""
        },
        "fails": {"q2_check": "was each element counted at 4 B, where the dtype has 2"},
    },
    # Q2: the copies of the weights taken for parameters (excluded): only the activations counted.
    "ex11-q2-no-weight-copies": {
        "answers": {
            "q2_answer": """def saved_bytes_bf16(widths, batch):
    return batch * sum(widths[:-1]) * 2
"""
        },
        "fails": {"q2_check": "the bfloat16 copy of the weight of layer"},
    },
    # Q2: every weight's copy counted, the first layer's too (its input needs no grad: not saved).
    "ex11-q2-first-weight": {
        "answers": {
            "q2_answer": """def saved_bytes_bf16(widths, batch):
    activations = batch * sum(widths[:-1]) * 2
    weight_copies = sum(widths[i] * widths[i + 1] for i in range(len(widths) - 1)) * 2
    return activations + weight_copies
"""
        },
        "fails": {"q2_check": "the first layer's weight"},
    },
    # Q3: clipping the scaled gradients, then unscale_: the step is about 65536 times too small.
    "ex11-q3-clip-before-unscale": {
        "answers": {
            "q3_answer": _STEP.format(
                body="""    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
"""
            )
        },
        "fails": {"q3_check": "before clip_grad_norm_"},
    },
    # Q3: no scaler.update(): the next iteration's unscale_ comes "after step()", and GradScaler raises.
    "ex11-q3-no-update": {
        "answers": {
            "q3_answer": _STEP.format(
                body="""    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
"""
            )
        },
        "fails": {"q3_check": "unscale_() is being called after step()"},
    },
    # Q3: optimizer.step() instead of scaler.step(optimizer): the step on inf gradients is taken.
    "ex11-q3-optimizer-step": {
        "answers": {
            "q3_answer": _STEP.format(
                body="""    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scaler.update()
"""
            )
        },
        "fails": {"q3_check": "optimizer.step() itself never does"},
    },
    # Q2: the figure measured (the question's own snippet) instead of predicted from widths and batch.
    "ex11-q2-measured": {
        "answers": {
            "q2_answer": """def saved_bytes_bf16(widths, batch):
    model, x = mlp(widths), torch.randn(batch, widths[0])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, meter = measure_saved(model, x, exclude=model.parameters())
    return meter.alive_bytes
"""
        },
        "fails": {"q2_check": "without building or running the model"},
    },
}
