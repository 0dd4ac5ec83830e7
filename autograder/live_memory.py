"""Measure the bytes alive during a forward AND its backward, recomputed activations included.

:class:`autograder.memory.SavedTensorMeter` counts the tensors a graph saves for backward. That is
the right figure for the graph itself, but not the memory a training step needs: see NOTE 1. This
module gives the figure that is: on CUDA the caching allocator's peak, on any device a tracker of
the storages that operations create (:class:`LiveMemory`). :func:`peak_live_bytes` picks one and
prepares the parameters' gradients so that two steps are compared fairly.

NOTE [ Why SavedTensorMeter is blind to what checkpointing recomputes ]
  1. SavedTensorMeter sees a tensor only when autograd packs it through *its*
     ``saved_tensors_hooks``. Non-reentrant ``torch.utils.checkpoint`` installs its own hooks
     inside ours; the innermost hooks win, so every tensor saved inside a checkpointed segment is
     packed by checkpoint: dropped in the forward, and, when backward reaches the segment,
     recomputed and held by checkpoint's recomputation hooks until the segment's backward has used
     it. None of this reaches our hooks. So for a checkpointed model the meter's "peak over forward
     and backward" is the peak of the forward: ``checkpoint(model, x, use_reentrant=False)`` on a
     whole model shows only ``x``, while during backward the recomputation holds every activation
     of the plain model. Besides, saved tensors are not all that is alive: the gradient flowing
     backwards and an op's temporary outputs are not saved tensors either.
  2. :class:`LiveMemory` does not look at what autograd saves, but at what exists. It is a
     ``TorchDispatchMode`` (``torch.utils._python_dispatch``): every ATen operation that runs while
     it is active, in the forward, in the autograd engine's backward and in checkpoint's
     recomputation (dispatch modes are thread-local state, which the engine carries into
     backward), passes through ``__torch_dispatch__``. Each output storage that none of the op's
     inputs has is new: it is counted once (``untyped_storage().nbytes()``, so a view or an
     in-place result costs nothing more), and a ``weakref.finalize`` on the storage's Python object
     (one object per storage, kept as long as the storage lives) subtracts it when it dies.
  3. So the figure is the peak of the bytes of storages created inside the block and alive at the
     same time: the CPU allocator's peak above its level at the start, exactly, except for memory
     allocated outside the dispatcher (next point). It does not count what existed before the block
     (parameters, inputs, ``.grad`` tensors allocated earlier), nor memory that an earlier storage
     frees during the block, nor allocator rounding (CUDA rounds up to 512 bytes).
  4. Not seen: tensors made without an ATen operation, notably the RNG state that checkpoint saves
     per segment when ``preserve_rng_state=True`` (``torch.get_rng_state()``, 5056 bytes on the
     CPU) and Python numbers wrapped as tensors; workspaces that libraries allocate internally
     (cuBLAS); and a storage resized after its creation keeps the size it had when it was created.
     ``tests/test_live_memory.py`` checks the figure against the CPU allocator's, as the profiler
     records it.
All figures are ``int`` bytes.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["LiveMemory", "peak_live_bytes"]


def _storage_key(t: torch.Tensor):
    # (device, data pointer) names a storage while it is alive.
    return (str(t.device), t.untyped_storage().data_ptr())


class LiveMemory(TorchDispatchMode):
    """Context manager counting the bytes of storages created inside it that are still alive
    (NOTE 2-4 above); works on any device, and through backward and checkpoint's recomputation.

    Attributes (all ``int``, bytes unless said):
        alive_bytes: bytes of storages created inside the block and alive now.
        peak_bytes: the largest ``alive_bytes`` seen since entering: the peak above the start.
        storages: number of storages created inside the block (a count, not bytes).
        history: with ``LiveMemory(history=True)``, ``alive_bytes`` after each operation, in order (a list
            of ints: memory over the time of the block, one point per ATen operation); else ``None``.

    Example::

        with LiveMemory() as live:
            model(x).sum().backward()
        live.peak_bytes   # activations, recomputed ones included, gradients flowing back, ...

    Storages still alive after the block (a returned output, new ``.grad`` tensors) stay counted in
    ``alive_bytes`` until they die. Modes nest: an inner ``TorchDispatchMode`` of the measured code
    sees the operations first and ours sees what it runs.
    """

    def __init__(self, history: bool = False):
        super().__init__()
        self._live: dict = {}  # storage key -> bytes
        self.alive_bytes = self.peak_bytes = self.storages = 0
        self.history: list[int] | None = [] if history else None

    def _released(self, key) -> None:
        nbytes = self._live.pop(key, None)
        if nbytes is not None:
            self.alive_bytes -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self._count_new_storages(out, args, kwargs)
        if self.history is not None:
            self.history.append(self.alive_bytes)
        return out

    def _count_new_storages(self, out, args, kwargs) -> None:
        inputs = None
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor):
                continue
            storage = t.untyped_storage()
            nbytes = storage.nbytes()
            key = _storage_key(t)
            if nbytes == 0 or key in self._live:
                continue
            if inputs is None:  # views and in-place results share an input's storage: not new
                inputs = {_storage_key(a) for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)}
            if key in inputs:
                continue
            self._live[key] = nbytes
            self.storages += 1
            self.alive_bytes += nbytes
            self.peak_bytes = max(self.peak_bytes, self.alive_bytes)
            # The storage's Python object lives exactly as long as the storage (PyObject
            # preservation), so this runs when its memory goes back to the allocator.
            finalizer = weakref.finalize(storage, self._released, key)
            finalizer.atexit = False

    def __repr__(self) -> str:
        return f"LiveMemory(alive_bytes={self.alive_bytes}, peak_bytes={self.peak_bytes}, storages={self.storages})"


def _device_of(tensors: Iterable[torch.Tensor]) -> torch.device:
    for t in tensors:
        if isinstance(t, torch.Tensor):
            return t.device
    return torch.device("cpu")


def peak_live_bytes(
    step: Callable, *args, params: Iterable[torch.Tensor] = (), warmup: bool | None = None, **kwargs
) -> int:
    """Peak bytes alive above the start while ``step(*args, **kwargs)`` runs (typically a
    forward and a backward), recomputed activations included.

    Args:
        step: the code to measure; its return value is dropped before the figure is read.
        params: tensors whose ``.grad`` must not count (typically ``model.parameters()``): each
            gets a ``.grad`` before the measurement, zeros of its shape, or its existing ``.grad``
            zeroed in place, so that AccumulateGrad adds into it instead of keeping a new tensor.
            The gradient temporaries that are added into it are counted, as the allocator does.
        warmup: run ``step`` once before measuring (cuBLAS workspaces and lazy buffers are then
            allocated already); ``None`` means: only on CUDA. The parameters' gradients are zeroed
            again after it.

    Returns:
        ``int`` bytes. On CUDA (the device of the first tensor in ``params`` or ``args``): the
        caching allocator's ``max_memory_allocated`` minus ``memory_allocated`` at the start, after
        ``reset_peak_memory_stats``. Elsewhere: :class:`LiveMemory`'s ``peak_bytes`` (see the NOTE
        for what it does not count).
    """
    params = [p for p in params if p.requires_grad]
    device = _device_of([*params, *args])
    cuda = device.type == "cuda"

    def zero_grads() -> None:
        for p in params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            else:
                p.grad.detach_().zero_()

    zero_grads()
    if warmup if warmup is not None else cuda:
        step(*args, **kwargs)
        zero_grads()
    if cuda:
        from .memory import cuda_memory

        with cuda_memory(device) as figures:
            step(*args, **kwargs)
        return figures.peak_delta
    with LiveMemory() as live:
        step(*args, **kwargs)
    return live.peak_bytes
