"""Typical mistakes in ex14_distributed: see the package docstring for the format."""

_BUCKETS = """def default_buckets(model, find_unused_parameters):
    sizes = [p.numel() * p.element_size() for p in model.parameters()]
    order = {order}
    caps = {caps}
    buckets, current = [], 0
    for size in order:
        current += size
        if current >= caps[min(len(buckets), len(caps) - 1)]:
            buckets.append(current)
            current = 0
    if current:
        buckets.append(current)
    return {result}
"""
_FIRST_AND_CAP = "[dist._DEFAULT_FIRST_BUCKET_BYTES, 25 * 2**20]"


def _buckets(
    order="sizes if find_unused_parameters else sizes[::-1]",
    caps=_FIRST_AND_CAP,
    result="buckets[::-1] if find_unused_parameters else buckets",
):
    return _BUCKETS.format(order=order, caps=caps, result=result)


MISTAKES = {
    # Q1: the gradients averaged by hand, but summed: all_reduce's default op is a sum.
    "ex14-q1-summed": {
        "answers": {
            "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    shard_x, shard_y = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    nn.functional.mse_loss(model(shard_x), shard_y).backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    return {name: p.grad for name, p in model.named_parameters()}
"""
        },
        "fails": {"q1_check": "summed over the ranks instead of averaged"},
    },
    # Q1: no communication at all: each rank keeps the gradient of its own shard.
    "ex14-q1-own-shard": {
        "answers": {
            "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    shard_x, shard_y = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    nn.functional.mse_loss(model(shard_x), shard_y).backward()
    return {name: p.grad for name, p in model.named_parameters()}
"""
        },
        "fails": {"q1_check": "nothing combined the ranks' gradients"},
    },
    # Q1: no sharding and no communication: every rank runs the whole batch (right numbers, the
    # question not answered).
    "ex14-q1-whole-batch": {
        "answers": {
            "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    nn.functional.mse_loss(model(x), y).backward()
    return {name: p.grad for name, p in model.named_parameters()}
"""
        },
        "fails": {"q1_check": "runs forward on its own shard only"},
    },
    # Q1: the whole batch through the layers as plain functions, no communication: no module ran
    # forward (and the other ranks' rows are NaN in each rank, so the gradients are too).
    "ex14-q1-functional-whole-batch": {
        "answers": {
            "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    h = x
    for layer in model:
        h = nn.functional.linear(h, layer.weight, layer.bias) if isinstance(layer, nn.Linear) else torch.tanh(h)
    nn.functional.mse_loss(h, y).backward()
    return {name: p.grad for name, p in model.named_parameters()}
"""
        },
        "fails": {"q1_check": "runs forward on its own shard only"},
    },
    # Q2: one all-reduce per parameter instead of per bucket.
    "ex14-q2-per-parameter": {
        "answers": {
            "q2_answer": """def allreduce_per_step(model, bucket_cap_bytes, micro_batches, use_no_sync):
    params = list(model.parameters())
    syncs = 1 if use_no_sync else micro_batches
    return syncs * len(params), syncs * sum(p.numel() * p.element_size() for p in params)
"""
        },
        "fails": {"q2_check": "One call per parameter: DDP all-reduces buckets"},
    },
    # Q2: no_sync forgotten: every micro-batch counted as reducing.
    "ex14-q2-no-sync-ignored": {
        "answers": {
            "q2_answer": """def allreduce_per_step(model, bucket_cap_bytes, micro_batches, use_no_sync):
    buckets, current = [], 0
    for p in reversed(list(model.parameters())):
        current += p.numel() * p.element_size()
        if current >= bucket_cap_bytes:
            buckets.append(current)
            current = 0
    if current:
        buckets.append(current)
    return micro_batches * len(buckets), micro_batches * sum(buckets)
"""
        },
        "fails": {"q2_check": "under no_sync backward only accumulates"},
    },
    # Q2: buckets filled in the order of registration (forward), not in the order gradients are ready.
    "ex14-q2-registration-order": {
        "answers": {
            "q2_answer": """def allreduce_per_step(model, bucket_cap_bytes, micro_batches, use_no_sync):
    buckets, current = [], 0
    for p in model.parameters():
        current += p.numel() * p.element_size()
        if current >= bucket_cap_bytes:
            buckets.append(current)
            current = 0
    if current:
        buckets.append(current)
    syncs = 1 if use_no_sync else micro_batches
    return syncs * len(buckets), syncs * sum(buckets)
"""
        },
        "fails": {"q2_check": "in the order gradients become ready"},
    },
    # Q3: the reverse of the registration order: right for a Sequential only.
    "ex14-q3-registration-order": {
        "answers": {
            "q3_answer": """def grad_ready_order(model, x):
    return [name for name, _ in reversed(list(model.named_parameters()))]
"""
        },
        "fails": {"q3_check": "the reverse of the order of registration"},
    },
    # Q3: the hooks are left in place: a second call records every name twice.
    "ex14-q3-hooks-kept": {
        "answers": {
            "q3_answer": """def grad_ready_order(model, x):
    order = []
    for name, p in model.named_parameters():
        p.register_post_accumulate_grad_hook(lambda p, name=name: order.append(name))
    model(x).sum().backward()
    return order
"""
        },
        "fails": {"q3_check": "Remove your hooks before returning"},
    },
    # Q1: a forward on the shard for show, then the whole batch through the layers one by one, past the
    # model's own hook, and no communication (a deliberate evasion of the rows check; kept here as its test).
    "ex14-q1-layers-past-the-hook": {
        "answers": {
            "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    # counted rows on the shard, but the gradient of the whole batch, without communicating
    model(x.chunk(world_size)[rank])          # what the check counts
    h = x
    for layer in model:                       # the whole batch, past the model's own hook
        h = layer(h)
    nn.functional.mse_loss(h, y).backward()
    return {name: p.grad for name, p in model.named_parameters()}
"""
        },
        "fails": {"q1_check": "runs forward on its own shard only"},
    },
    # Q2: DDP run (in run_ranks, with a communication hook) instead of the prediction the question asks for.
    "ex14-q2-ran-ddp": {
        "answers": {
            "q2_answer": """def _measured(rank, world_size, model, cap, micro_batches, use_no_sync):
    ddp = DDP(model, bucket_cap_mb=cap / 2**20)
    log = []
    def hook(state, bucket):
        buf = bucket.buffer()
        log.append(buf.numel() * buf.element_size())
        buf.div_(world_size)
        return dist.all_reduce(buf, async_op=True).get_future().then(lambda fut: fut.value()[0])
    ddp.register_comm_hook(None, hook)
    width = next(model.parameters()).shape[1]
    ddp(torch.ones(2, width)).sum().backward()
    log.clear()
    for m in range(micro_batches):
        if use_no_sync and m < micro_batches - 1:
            with ddp.no_sync():
                ddp(torch.ones(2, width)).sum().backward()
        else:
            ddp(torch.ones(2, width)).sum().backward()
    return len(log), sum(log)


def allreduce_per_step(model, bucket_cap_bytes, micro_batches, use_no_sync):
    return run_ranks(_measured, 2, model, bucket_cap_bytes, micro_batches, use_no_sync)[0]
"""
        },
        "fails": {"q2_check": "without running DDP"},
    },
    # Q4: the lesson's one-cap rule: no 1 MiB first bucket at the default cap.
    "ex14-q4-one-cap": {
        "answers": {"q4_answer": _buckets(caps="[25 * 2**20]")},
        "fails": {"q4_check": "No 1 MiB first bucket"},
    },
    # Q4: the buckets taken to be rebuilt in the ready order whatever find_unused_parameters is.
    "ex14-q4-always-rebuilt": {
        "answers": {"q4_answer": _buckets(order="sizes[::-1]", result="buckets")},
        "fails": {"q4_check": "with find_unused_parameters=True DDP never rebuilds them"},
    },
    # Q4: find_unused_parameters=True's buckets filled in registration order, the list not reversed.
    "ex14-q4-not-reversed": {
        "answers": {"q4_answer": _buckets(result="buckets")},
        "fails": {"q4_check": "The buckets in the reverse of DDP's order"},
    },
}
