"""Chapter 14's kinds: several processes, DistributedDataParallel (lesson 14)."""

from __future__ import annotations

from .kind import Kind, taught

_DDP = taught(14, "Pitfalls")
KINDS: dict[str, Kind] = {
    "ddp_ready_twice": Kind(
        "usage",
        r"Expected to mark a variable ready only once",
        _DDP,
        "DistributedDataParallel hooks each parameter's AccumulateGrad and expects it to fire "
        "once per backward. It fired twice: typically a reentrant activation checkpoint "
        "(use_reentrant=True) together with find_unused_parameters=True, where the block's "
        "backward runs as a separate, nested backward; or a parameter used again outside "
        "forward, or shared by two forwards before one backward.",
        "Use checkpoint(..., use_reentrant=False) (the recommended variant), or drop "
        "find_unused_parameters if every parameter is used; DDP(..., static_graph=True) is a "
        "workaround when the graph is the same in every iteration.",
    ),
    "ddp_no_process_group": Kind(
        "usage",
        r"Default process group has not been initialized",
        _DDP,
        "DistributedDataParallel (or a collective such as dist.all_reduce) was called in a "
        "process that has not joined a process group: typically the notebook's own process, "
        "outside the function that every rank runs.",
        "In a script: call torch.distributed.init_process_group() before DDP, and start the "
        "script with torchrun --nproc_per_node=N. In a notebook: put the DDP code in a function "
        "fn(rank, world_size, ...) and run it with autograder.ranks.run_ranks(fn, world_size, ...), "
        "which starts the processes and joins each to a gloo group first.",
        types=("ValueError", "RuntimeError"),
    ),
    "ddp_unused_parameters": Kind(
        "usage",
        r"Expected to have finished reduction in the prior iteration before starting a new one",
        _DDP,
        "Some parameters of the model wrapped in DistributedDataParallel got no gradient in the "
        "last backward (a layer the forward skipped, an output not in the loss). DDP waits for "
        "every parameter's gradient before it all-reduces the last bucket, so that reduction "
        "never finished, and the next forward refuses to start.",
        "Pass find_unused_parameters=True to DistributedDataParallel (it then walks the graph "
        "after each forward to mark unused parameters ready), or remove the unused parameters "
        "from the model, or make every output take part in the loss.",
    ),
}
# Collected later, from the lessons' pitfalls, the exercises' typical mistakes and the messages most
# reported on PyTorch's issue tracker and forums (kinds.table lists them after every chapter's KINDS).
# A kind whose pattern is "" is a cause that explain_refine tells apart from another kind's message.
MORE: dict[str, Kind] = {
    "ddp_static_graph_changed": Kind(
        "usage",
        r"Your training graph has changed in this iteration",
        _DDP,
        "DistributedDataParallel(..., static_graph=True) was promised the same graph in every "
        "iteration, and a parameter used in one iteration was unused in another (a branch, a "
        "skipped layer).",
        "Drop static_graph=True and pass find_unused_parameters=True, or make the forward use the "
        "same parameters in every iteration.",
    ),
    "ddp_model_mismatch": Kind(
        "usage",
        r"DDP expects same model across all ranks|appears not to match sizes of the same param in process",
        _DDP,
        "The ranks built different models (another number or shape of parameters): DDP checks "
        "at construction that each rank holds the same parameters, since it reduces them bucket "
        "by bucket.",
        "Build the same model in every rank (no rank-dependent layers or sizes); vary the data by rank, not the model.",
    ),
    "ddp_no_trainable_parameters": Kind(
        "usage",
        r"DistributedDataParallel is not needed when a module doesn't have any parameter that "
        r"requires a gradient",
        _DDP,
        "The module wrapped in DistributedDataParallel has no parameter that requires grad (all "
        "frozen, or none at all): there is nothing to all-reduce.",
        "Unfreeze what should train before wrapping (p.requires_grad_()), or do not wrap a frozen module in DDP.",
    ),
    "dist_address_in_use": Kind(
        "usage",
        r"address already in use|EADDRINUSE",
        _DDP,
        "The process group's rendezvous port (MASTER_PORT, the store's port) is already taken: a "
        "previous run that did not exit, or another notebook using the same port.",
        "Use another port (MASTER_PORT, init_method='tcp://127.0.0.1:<port>'), or end the old "
        "processes (restart that notebook's kernel); run_ranks needs no port (its ranks meet through a "
        "FileStore).",
    ),
}
