"""Answers for the classes of issue 51 still open after the third held-out set, each with the run where a text
would be false or a grade wrong (the counterexample), graded by ``tests/grading/test_corpus_classes.py``:

1. a cause told from the symptom alone (a NaN gradient blamed on ``torch.where``'s masking in an answer that has
   no ``torch.where``): the cause only where the run shows it, else where the NaN first appears;
2. grades: a tolerance tighter than what a correct variant gives (clip_grad_norm_'s epsilon on the scaled norm),
   a boundary no hidden test had (a bucket that reaches the cap exactly);
4. value-only messages where the check holds the cause (which gradient differs, by what factor).

``WRONG = {exercise: {student_id: {"cause", "answers", "fails", "never"}}}`` as in ``corpus_claims``;
``CORRECT = {exercise: {student_id: {"why", "answers"}}}``: answers that must get full marks.
"""

_DDP_Q2 = """def allreduce_per_step(model, bucket_cap_bytes, micro_batches, use_no_sync):
    buckets, current = [], 0
    for p in reversed(list(model.parameters())):
        current += p.numel() * p.element_size()
        if current > bucket_cap_bytes:
            buckets.append(current)
            current = 0
    if current:
        buckets.append(current)
    syncs = 1 if use_no_sync else micro_batches
    return syncs * len(buckets), syncs * sum(buckets)
"""

_DDP_Q4 = """def default_buckets(model, find_unused_parameters):
    sizes = [p.numel() * p.element_size() for p in model.parameters()]
    order = sizes if find_unused_parameters else sizes[::-1]
    caps = [dist._DEFAULT_FIRST_BUCKET_BYTES, 25 * 2**20]
    buckets, current = [], 0
    for size in order:
        current += size
        if current > caps[min(len(buckets), 1)]:
            buckets.append(current)
            current = 0
    if current:
        buckets.append(current)
    return buckets[::-1] if find_unused_parameters else buckets
"""

WRONG = {
    "ex14_distributed": {
        "k51-14-q2-closes-past-the-cap": {
            "cause": "closes a bucket only once it passes the cap (>), DDP at the cap (>=): differs only where a "
            "bucket reaches the cap exactly, which no test had",
            "answers": {"q2_answer": _DDP_Q2},
            "fails": {"q2_check": "Buckets closed only once they pass the cap"},
            "never": ["registration order", "One call per parameter"],
        },
        "k51-14-q4-closes-past-the-cap": {
            "cause": "the same strict comparison for the default caps: differs only where the first bucket holds "
            "exactly 1 MiB",
            "answers": {"q4_answer": _DDP_Q4},
            "fails": {"q4_check": "Buckets closed only once they pass the cap"},
            "never": ["No 1 MiB first bucket"],
        },
    },
}

CORRECT = {
    "ex11_mixed_precision": {
        "k51-11-clip-the-scaled-at-scaled-norm": {
            "why": "clips the scaled gradients at max_norm * scale, then lets scaler.step unscale: the same clip but "
            "for clip_grad_norm_'s 1e-6 epsilon, added to the scaled norm (the ratio moves by up to 1e-6 / max_norm)",
            "answers": {
                "q3_answer": """def scaled_step(model, optimizer, scaler, x, y, max_norm):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm * scaler.get_scale())
    scaler.step(optimizer)
    scaler.update()
"""
            },
        },
    },
}
