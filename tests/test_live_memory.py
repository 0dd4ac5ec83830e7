"""Does the live-memory figure count what is alive during forward and backward, recomputed
activations included, as the allocator does?

The reference is the CPU allocator itself, as the profiler records it (``profile_memory=True``):
every allocation and free, in order, whose running sum above the start has a peak.
"""

import pytest
import torch
from torch import nn
from torch._C._profiler import _EventType
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

from autograder.live_memory import LiveMemory, peak_live_bytes
from autograder.memory import SavedTensorMeter

F32 = 4  # bytes per float32 element
WIDTH, BATCH, BLOCKS = 64, 32, 8


def allocator_peak(step) -> int:
    """Peak of the CPU allocator's bytes above their level at the start while step() runs, from the
    profiler's allocation events (in time order, frees negative)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = []

    def walk(nodes):
        for node in nodes:
            if node.tag == _EventType.Allocation and node.extra_fields.device.type == "cpu":
                events.append((node.start_time_ns, node.extra_fields.alloc_size))
            walk(node.children)

    walk(prof.profiler.kineto_results.experimental_event_tree())
    assert events, "the profiler recorded no allocation"
    level = peak = 0
    for _, size in sorted(events, key=lambda e: e[0]):
        level += size
        peak = max(peak, level)
    return peak


def make_model(blocks=BLOCKS, width=WIDTH, dropout=0.0):
    """blocks x (Linear-Tanh[-Dropout]), then Linear(width, 1), like exercise 8's model."""
    torch.manual_seed(0)
    layers = [
        nn.Sequential(nn.Linear(width, width), nn.Tanh(), *([nn.Dropout(dropout)] if dropout else []))
        for _ in range(blocks)
    ]
    return nn.Sequential(*layers, nn.Linear(width, 1))


def forward(model, x, how):
    """model(x) computed as `how` says: plain, whole (one checkpoint), seqN (checkpoint_sequential,
    N segments); no RNG state saved, so that every byte goes through the dispatcher."""
    if how == "plain":
        return model(x)
    if how == "whole":
        return checkpoint(model, x, use_reentrant=False, preserve_rng_state=False)
    return checkpoint_sequential(model, int(how[3:]), x, use_reentrant=False, preserve_rng_state=False)


def prepared(how):
    """(model, x, step): step() runs a forward and a backward; the .grad tensors exist already."""
    model = make_model()
    x = torch.randn(BATCH, WIDTH)

    def step():
        forward(model, x, how).pow(2).mean().backward()

    step()  # allocates the .grad tensors
    model.zero_grad(set_to_none=False)
    return model, x, step


HOWS = ["plain", "whole", "seq2", "seq3", "seq4", "seq9"]


@pytest.mark.parametrize("how", HOWS)
def test_live_peak_is_the_allocator_peak(how):
    """Is LiveMemory's peak over a forward and backward exactly the CPU allocator's peak, for the
    plain model, the whole model in one checkpoint and checkpoint_sequential?"""
    _, _, step = prepared(how)
    with LiveMemory() as live:
        step()
    assert live.peak_bytes == allocator_peak(step) > 0
    assert live.alive_bytes == 0, "everything made during the step is freed once it ends"


def test_the_saved_tensor_meter_misses_the_recomputation_the_tracker_sees():
    """With the whole model in one checkpoint, does SavedTensorMeter report little more than the
    input (blind to the recomputation), while the live figure, like the allocator, is the plain
    model's?"""
    _, _, plain_step = prepared("plain")
    model, x, whole_step = prepared("whole")
    with SavedTensorMeter(exclude=model.parameters()) as meter:
        whole_step()
    plain, whole = allocator_peak(plain_step), allocator_peak(whole_step)
    assert whole >= 0.95 * plain  # the allocator: checkpointing one segment saves nothing
    # the meter sees checkpoint's saved input, and the [BATCH, 1] output that pow(2) saves: no more
    assert meter.peak_bytes == x.nbytes + BATCH * F32
    assert peak_live_bytes(whole_step, params=model.parameters()) == whole


def test_checkpoint_sequential_peak_is_not_always_at_the_end_of_the_forward():
    """For 3 segments of this model (uneven: the last segment is 3 blocks and the head), is the
    true peak above the meter's, so that the meter is wrong even for checkpoint_sequential?"""
    model, _, step = prepared("seq3")
    with SavedTensorMeter(exclude=model.parameters()) as meter:
        step()
    assert allocator_peak(step) > meter.peak_bytes + BATCH * WIDTH * F32


@pytest.mark.parametrize("segments", [1, 2, 4])
def test_only_the_rng_state_escapes_the_tracker(segments):
    """With preserve_rng_state=True (the default), is the allocator's peak above LiveMemory's by
    exactly one CPU RNG state per checkpointed segment (torch.get_rng_state() is made outside the
    dispatcher, NOTE 4)?"""
    model = make_model(dropout=0.1)
    x = torch.randn(BATCH, WIDTH)

    def step():
        checkpoint_sequential(model, segments + 1, x, use_reentrant=False).pow(2).mean().backward()

    step()
    model.zero_grad(set_to_none=False)
    with LiveMemory() as live:
        step()
    assert allocator_peak(step) - live.peak_bytes == segments * torch.get_rng_state().nbytes


def test_backward_alone_is_seen():
    """Measured around loss.backward() only, does the tracker see the gradients the engine makes
    (ops run by the autograd engine go through the dispatch mode), as the allocator does?"""
    w = torch.randn(WIDTH, WIDTH, requires_grad=True)
    x = torch.randn(BATCH, WIDTH)
    losses = [(x @ w).tanh().sum() for _ in range(2)]
    with LiveMemory() as live:
        losses[0].backward()
    w.grad = None
    assert live.peak_bytes == allocator_peak(losses[1].backward) > 0


def test_reentrant_checkpoint_recomputation_is_seen():
    """Does the tracker also see the recomputation of the reentrant variant (which runs it inside
    the engine's backward, in a nested backward)?"""
    model = make_model()
    x = torch.randn(BATCH, WIDTH, requires_grad=True)

    def step():
        checkpoint(model, x, use_reentrant=True, preserve_rng_state=False).pow(2).mean().backward()

    step()
    model.zero_grad(set_to_none=False)
    x.grad.zero_()
    with LiveMemory() as live:
        step()
    assert live.peak_bytes == allocator_peak(step)


def test_each_storage_counts_once():
    """Do a view and an in-place result add nothing, and does a storage's death give its bytes back?"""
    with LiveMemory() as live:
        y = torch.ones(10)
        v = y[:2]
        y.add_(1)
        assert (live.alive_bytes, live.storages) == (10 * F32, 1)
        del y, v
        assert live.alive_bytes == 0
        z = torch.ones(3, dtype=torch.float64)
    assert (live.peak_bytes, live.alive_bytes, live.storages) == (10 * F32, 3 * 8, 2)
    del z
    assert live.alive_bytes == 0


def test_what_existed_before_does_not_count():
    """Do in-place changes of tensors made before the block (a parameter's .grad) count nothing?"""
    w = torch.randn(100)
    with LiveMemory() as live:
        w.mul_(2)
        w.t_()
    assert live.peak_bytes == 0


def test_peak_live_bytes_preallocates_gradients():
    """Does peak_live_bytes give every parameter a .grad first, so that the gradients are what
    a plain backward gives and their bytes are not in the figure, and give the same figure twice?"""
    model = make_model()
    x = torch.randn(BATCH, WIDTH)

    def step():
        model(x).pow(2).mean().backward()

    first = peak_live_bytes(step, params=model.parameters())
    grads = [p.grad.clone() for p in model.parameters()]
    assert first == peak_live_bytes(step, params=model.parameters())
    model.zero_grad(set_to_none=True)
    step()
    for p, g in zip(model.parameters(), grads):
        torch.testing.assert_close(p.grad, g)
    grad_bytes = sum(p.nbytes for p in model.parameters())
    with LiveMemory() as live:  # gradients not preallocated: they are new storages, kept
        model.zero_grad(set_to_none=True)
        step()
    assert live.alive_bytes == grad_bytes
    assert live.peak_bytes > first


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_figures_agree():
    """On CUDA, is LiveMemory's peak at most the allocator's (peak_live_bytes) and at most 512 bytes
    per storage below it (the allocator rounds each block up to 512 bytes), whole-model checkpoint
    included?"""
    model = make_model().cuda()
    x = torch.randn(BATCH, WIDTH, device="cuda")
    for how in ("plain", "whole", "seq3"):

        def step(how=how):
            forward(model, x, how).pow(2).mean().backward()

        peak = peak_live_bytes(step, params=model.parameters())
        with LiveMemory() as live:
            step()
        assert live.peak_bytes <= peak <= live.peak_bytes + 512 * live.storages, how


def test_history_is_the_alive_bytes_after_each_operation_and_peaks_at_the_peak():
    """With history=True, is there one point per operation (as a dispatch mode counting calls sees them), does
    its largest point equal peak_bytes (frees after the last operation are not points); without it, is history None?"""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        calls = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Count.calls += 1
            return func(*args, **(kwargs or {}))

    *_, step = prepared("whole")
    with LiveMemory(history=True) as live, Count():
        step()
    assert len(live.history) == Count.calls > 0
    assert max(live.history) == live.peak_bytes and live.history[-1] >= live.alive_bytes == 0
    with LiveMemory() as plain:
        step()
    assert plain.history is None
