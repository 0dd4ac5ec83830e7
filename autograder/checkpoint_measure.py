"""Measure activation checkpointing for real: allocator peak, time and saved-bytes prediction.

One function, :func:`measure_model`, runs one forward and backward of ``model(x).float().mean()``
without checkpointing and with ``checkpoint_sequential(model, s, x, use_reentrant=False)`` for
each segment count ``s``, and returns one row per count with the columns of :data:`COLUMNS`
(``tests/scripts/gpu_check.py`` writes them to ``assets/checkpointing_gpu.csv``; lesson 08 measures with
it on a GPU and reads the CSV with :mod:`autograder.figures`).

NOTE [ What the peak is, and why the warm-up ]
  1. On CUDA the peak is ``torch.cuda.max_memory_allocated()`` during one forward and backward,
     minus ``memory_allocated()`` when it starts: the parameters, their ``.grad`` tensors, the
     input and the cuBLAS workspace are allocated BEFORE (warm-up passes, then
     ``zero_grad(set_to_none=False)`` keeps the gradients), so the peak is what the graph costs:
     saved activations, the recomputed segment, gradients flowing backwards, temporaries.
  2. The first matmul on a stream allocates cuBLAS's workspace through the caching allocator, and
     the first passes pick kernels (cuDNN for convolutions): both happen in the warm-up, never in a
     measured pass.
  3. Time: CUDA events around the pass (median of ``repeats``); on the CPU ``perf_counter``.
  4. The prediction is the peak of :class:`~autograder.memory.SavedTensorMeter` over the same pass:
     the bytes autograd saves outside checkpoints (parameters and buffers excluded). It does not
     see the recomputed segment or the gradients, so the allocator's peak is higher.
All byte figures are ``int``; seconds are ``float``; a figure that does not exist on the device
(the allocator's, on the CPU) is ``None``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint_sequential

from .memory import SavedTensorMeter

__all__ = ["COLUMNS", "environment", "measure_model"]

COLUMNS = [
    "device",  # "cuda" or "cpu"
    "device_name",  # torch.cuda.get_device_name(), or "cpu"
    "torch_version",  # torch.__version__
    "cuda_version",  # torch.version.cuda ("" for a CPU build)
    "model",  # a label, e.g. "16 x Linear(4096)-Tanh, batch 4096"
    "blocks",  # len(model): the n of the √n rule
    "input_bytes",  # bytes of the input x (one activation for the width-keeping stacks)
    "segments",  # 0 = no checkpointing; 1 = checkpoint_sequential in one segment (nothing recomputed)
    "checkpointed",  # True when some segment is recomputed (segments >= 2)
    "peak_allocated_bytes",  # max_memory_allocated during the pass minus memory_allocated before (CUDA; empty on CPU)
    "baseline_allocated_bytes",  # memory_allocated before the pass: parameters, grads, input, workspace (CUDA)
    "reserved_bytes",  # memory_reserved after the pass: what the caching allocator holds (CUDA)
    "saved_peak_bytes",  # SavedTensorMeter peak over the pass: the saved-bytes prediction
    "seconds_median",  # median seconds of one forward and backward
    "seconds_min",  # fastest of them
    "repeats",  # how many timed passes
]


def environment(device: torch.device | str) -> dict:
    """The columns that name the machine: ``device``, ``device_name``, ``torch_version``,
    ``cuda_version`` (strings)."""
    device = torch.device(device)
    cuda = device.type == "cuda"
    return dict(
        device=device.type,
        device_name=torch.cuda.get_device_name(device) if cuda else "cpu",
        torch_version=torch.__version__,
        cuda_version=torch.version.cuda or "",
    )


def _step(model: nn.Sequential, x: torch.Tensor, segments: int) -> None:
    out = model(x) if segments == 0 else checkpoint_sequential(model, segments, x, use_reentrant=False)
    out.float().mean().backward()


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def warm_up(model: nn.Sequential, x: torch.Tensor) -> None:
    """NOTE 2: a first matmul (cuBLAS workspace), then a plain and a checkpointed pass (kernels,
    the parameters' ``.grad`` tensors)."""
    device = x.device
    a = torch.ones(64, 64, device=device)
    (a @ a).sum().item()
    _step(model, x, 0)
    _step(model, x, min(2, len(model)))
    _sync(device)


def _peak(model, x, segments) -> tuple[int | None, int | None, int | None]:
    """(peak above the start, allocated at the start, reserved after) in bytes; Nones on the CPU."""
    if x.device.type != "cuda":
        _step(model, x, segments)
        return None, None, None
    torch.cuda.synchronize(x.device)
    torch.cuda.reset_peak_memory_stats(x.device)
    before = torch.cuda.memory_allocated(x.device)
    _step(model, x, segments)
    torch.cuda.synchronize(x.device)
    return torch.cuda.max_memory_allocated(x.device) - before, before, torch.cuda.memory_reserved(x.device)


def _seconds(model, x, segments, repeats) -> list[float]:
    times = []
    for _ in range(repeats):
        model.zero_grad(set_to_none=False)
        if x.device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            _step(model, x, segments)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1000)  # elapsed_time is in milliseconds
        else:
            start = time.perf_counter()
            _step(model, x, segments)
            times.append(time.perf_counter() - start)
    return times


def measure_model(
    label: str,
    model: nn.Sequential,
    x: torch.Tensor,
    segment_counts: Iterable[int] | None = None,
    repeats: int = 5,
    progress=None,
) -> list[dict]:
    """Measure ``model`` (an ``nn.Sequential`` on ``x``'s device) without and with checkpointing.

    Args:
        label: the ``model`` column.
        model: its blocks are what ``checkpoint_sequential`` splits; ``len(model)`` is ``blocks``.
        x: the input batch (any shape the model takes; float).
        segment_counts: default ``0 .. len(model)`` (0 = no checkpointing).
        repeats: timed passes per segment count (their median and minimum are kept).
        progress: optional callable receiving one line of text per segment count.

    Returns:
        One dict per segment count with the keys of :data:`COLUMNS` (see NOTE). Gradients
        accumulate into the parameters' ``.grad`` (they are zeroed, not freed, between passes).

    Raises:
        ValueError: a segment count outside ``0 .. len(model)``.
    """
    n = len(model)
    counts = list(range(n + 1) if segment_counts is None else segment_counts)
    if any(not 0 <= s <= n for s in counts):
        raise ValueError(f"segment counts must lie in 0 .. {n}, got {counts}")
    exclude = list(model.parameters()) + list(model.buffers())
    warm_up(model, x)
    rows = []
    for segments in counts:
        model.zero_grad(set_to_none=False)
        with SavedTensorMeter(exclude=exclude) as meter:
            _step(model, x, segments)
        model.zero_grad(set_to_none=False)
        peak, before, reserved = _peak(model, x, segments)
        times = _seconds(model, x, segments, repeats)
        row = dict(
            environment(x.device),
            model=label,
            blocks=n,
            input_bytes=x.nbytes,
            segments=segments,
            checkpointed=segments >= 2,
            peak_allocated_bytes=peak,
            baseline_allocated_bytes=before,
            reserved_bytes=reserved,
            saved_peak_bytes=meter.peak_bytes,
            seconds_median=statistics.median(times),
            seconds_min=min(times),
            repeats=repeats,
        )
        rows.append(row)
        if progress is not None:
            progress(
                f"  segments {segments:>2}: peak "
                + ("-" if peak is None else f"{peak / 2**20:.0f} MiB")
                + f", saved {meter.peak_bytes / 2**20:.1f} MiB, {1000 * row['seconds_median']:.1f} ms"
            )
    return rows
