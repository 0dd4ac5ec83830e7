"""Measure the memory an autograd graph keeps: bytes saved for backward, and CUDA allocator figures.

NOTE [ How saved bytes are counted ]
  1. Every tensor autograd saves for backward while the meter is active passes through a
     ``torch.autograd.graph.saved_tensors_hooks`` pack hook (PyTorch docs, "Hooks for saved
     tensors"). We wrap it in a small object; autograd holds that object until backward frees the
     saved tensors (or until the graph itself is garbage), and then our object dies too.
  2. Bytes are counted per *storage*, once: ``y = x.sigmoid(); z = y * y`` saves ``y`` twice and
     ``x[:2]`` is a view of ``x``'s storage, yet each storage costs its bytes only once. The figure
     is ``untyped_storage().nbytes()``: what is really kept alive, even through a small view.
  3. Storages of tensors in ``exclude`` (typically ``model.parameters()``) are not counted: they
     live anyway, whatever the graph does.
  4. Only the graph built inside the ``with`` block is seen; saved tensors of non-reentrant
     activation checkpointing are packed by checkpoint's own inner hooks and never reach ours:
     neither those it drops in the forward, nor those it recomputes and holds during backward.
     So for a checkpointed model ``peak_bytes`` is the forward's peak, not the step's (the whole
     model in one checkpoint shows only its input). For the bytes alive during backward, recomputed
     activations included, use ``autograder.live_memory`` (its NOTE says why in full).
  5. Under saved_tensors_hooks autograd does not compare version counters when it unpacks
     (an in-place change of a saved tensor would silently give wrong gradients), so the meter
     does that check itself and raises autograd's own "modified by an inplace operation" error
     (``explain.modified_inplace_message``), for excluded tensors too (a parameter that
     ``optimizer.step()`` changed after it was saved).
All figures are ``int`` bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch

from .kinds.kind import modified_inplace_message

__all__ = ["SavedTensorsHooksMeter", "SavedTensorMeter", "measure_saved", "CudaMemory", "cuda_memory"]


class _Packed:
    """What autograd holds instead of a saved tensor while the meter counts it (NOTE 1); ``key``
    is None for a tensor that is not counted (NOTE 3), which is kept only for the check of NOTE 5."""

    __slots__ = ("key", "meter", "tensor", "version")

    def __init__(self, tensor: torch.Tensor, key, meter: SavedTensorMeter):
        self.tensor, self.version, self.key, self.meter = tensor, tensor._version, key, meter

    def __del__(self):
        self.meter._release(self.key)


class SavedTensorsHooksMeter:
    """What meters built on ``saved_tensors_hooks`` share: entering and leaving the hooks
    (``self._hooks``) as a context manager, and a repr of ``alive_bytes``, ``peak_bytes`` and
    ``packed_tensors``. Subclasses: :class:`SavedTensorMeter`, ``hook_meters.PackedBytesMeter``."""

    def __enter__(self):
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._hooks.__exit__(*exc)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(alive_bytes={self.alive_bytes}, peak_bytes={self.peak_bytes}, "
            f"packed_tensors={self.packed_tensors})"
        )


class SavedTensorMeter(SavedTensorsHooksMeter):
    """Context manager counting the bytes a graph saves for backward (see NOTE above).

    Attributes (all ``int``, bytes unless said):
        alive_bytes: saved bytes still held by graphs now (drops when backward frees them).
        peak_bytes: the largest ``alive_bytes`` seen since entering.
        packed_tensors: number of tensors autograd saved (a count, not bytes).

    Example::

        with SavedTensorMeter(exclude=model.parameters()) as meter:
            loss = model(x).sum()
        meter.alive_bytes   # activations the graph holds
        loss.backward()
        meter.alive_bytes   # 0: backward freed them
    """

    def __init__(self, exclude: Iterable[torch.Tensor] = ()):
        self._excluded = {self._key(t) for t in exclude}
        self._live: dict = {}  # storage key -> [number of packed references, bytes]
        self.alive_bytes = self.peak_bytes = self.packed_tensors = 0
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)

    @staticmethod
    def _key(t: torch.Tensor):
        # (device, data pointer) names a storage while it is alive; packed tensors keep theirs alive.
        storage = t.untyped_storage()
        return (str(t.device), storage.data_ptr(), storage.nbytes())

    def _pack(self, tensor: torch.Tensor):
        key = self._key(tensor)
        self.packed_tensors += 1
        if key in self._excluded or key[2] == 0:  # not counted, but still version-checked (NOTE 5)
            return _Packed(tensor.detach(), None, self)
        entry = self._live.setdefault(key, [0, key[2]])
        if entry[0] == 0:
            self.alive_bytes += key[2]
            self.peak_bytes = max(self.peak_bytes, self.alive_bytes)
        entry[0] += 1
        # Hold a detached alias: the tensor itself may be an output whose grad_fn holds this very
        # object, a reference cycle that would keep the graph alive. detach() shares storage and
        # the version counter, so in-place checks still work.
        return _Packed(tensor.detach(), key, self)

    @staticmethod
    def _unpack(packed):
        if not isinstance(packed, _Packed):
            return packed
        t = packed.tensor
        if t._version != packed.version:  # NOTE 5: autograd skips this check under hooks
            message = modified_inplace_message(t.type(), t.shape, t._version, packed.version)
            raise RuntimeError(message + " (Checked by SavedTensorMeter.)")
        return t

    def _release(self, key) -> None:
        entry = self._live.get(key)
        if entry is None:
            return
        entry[0] -= 1
        if entry[0] == 0:
            self.alive_bytes -= entry[1]
            del self._live[key]


def measure_saved(fn, *args, exclude: Iterable[torch.Tensor] = (), **kwargs):
    """Run ``fn(*args, **kwargs)`` under a :class:`SavedTensorMeter`.

    Returns:
        ``(result, meter)``: keep ``result`` alive as long as you want its graph alive; the
        meter's ``alive_bytes`` right after the call is the bytes the graph saved (``int``).
    """
    with SavedTensorMeter(exclude=exclude) as meter:
        result = fn(*args, **kwargs)
    return result, meter


@dataclass
class CudaMemory:
    """CUDA caching-allocator figures of a block, in bytes (``int``), from
    ``torch.cuda.memory_allocated`` / ``max_memory_allocated`` (PyTorch docs, "CUDA semantics,
    memory management"). ``available`` is False on machines without CUDA, and then every figure
    stays 0."""

    available: bool = False
    before: int = 0
    after: int = 0
    peak: int = 0

    @property
    def delta(self) -> int:
        """Bytes still allocated after the block that were not before it."""
        return self.after - self.before

    @property
    def peak_delta(self) -> int:
        """Highest allocation during the block above what was allocated when it started."""
        return self.peak - self.before


class cuda_memory:
    """Context manager: ``with cuda_memory() as m: ...`` then ``m.peak_delta`` (bytes).

    Synchronizes the device before reading, so the figures include work still queued. On a
    machine without CUDA it does nothing and ``m.available`` is False.
    """

    def __init__(self, device: int | str | torch.device | None = None):
        self.device = device
        self.figures = CudaMemory(available=torch.cuda.is_available())

    def __enter__(self) -> CudaMemory:
        if self.figures.available:
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self.figures.before = torch.cuda.memory_allocated(self.device)
        return self.figures

    def __exit__(self, *exc) -> None:
        if self.figures.available:
            torch.cuda.synchronize(self.device)
            self.figures.after = torch.cuda.memory_allocated(self.device)
            self.figures.peak = torch.cuda.max_memory_allocated(self.device)
