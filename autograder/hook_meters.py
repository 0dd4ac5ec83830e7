"""Two meters built on hooks, for chapter 10: bytes of ``.grad`` tensors alive at once during
backward, and bytes of what a pair of saved-tensor hooks keeps for backward.

NOTE [ How the figures are taken ]
  1. :class:`GradBytesMeter` registers a ``register_post_accumulate_grad_hook`` on each parameter.
     Such a hook runs right after AccumulateGrad has set that parameter's ``.grad``; hooks of one
     tensor run in the order they were registered, so a meter registered *before* other hooks
     (an optimizer step in backward, say) samples each ``.grad`` before they free it. At every
     sample it adds up the bytes of the ``.grad`` tensors alive (each storage once,
     ``untyped_storage().nbytes()``) and keeps the largest sum: ``peak_bytes``.
  2. :class:`PackedBytesMeter` installs ``torch.autograd.graph.saved_tensors_hooks`` that call
     *your* pack hook and hold what it returns. The bytes counted are those of the tensors in that
     returned value (a tensor, or a tuple/list/dict of them and other objects), each storage once,
     from pack until autograd drops the packed value (backward frees it, or the graph dies). So a
     pack hook that returns ``t.to(torch.bfloat16)`` costs half the bytes of ``t``, one that
     returns ``t`` itself costs ``t``'s storage (shared with any other saved view of it), and one
     that returns ``(t.device, t.cpu())`` for a CUDA tensor is counted on the CPU.
     Storages of tensors in ``exclude`` (the parameters) are not counted.
  3. Saved-tensor hooks nest and the innermost pair wins: a tensor saved inside an inner
     ``saved_tensors_hooks`` (``save_on_cpu``, checkpointing, :class:`autograder.memory.SavedTensorMeter`)
     never reaches an outer one. Use one meter at a time.
All figures are ``int`` bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch
from torch.utils._pytree import tree_flatten

from .memory import SavedTensorsHooksMeter

__all__ = ["GradBytesMeter", "PackedBytesMeter"]


def _key(t: torch.Tensor):
    # (device, data pointer) names a storage while it is alive.
    storage = t.untyped_storage()
    return (str(t.device), storage.data_ptr(), storage.nbytes())


class GradBytesMeter:
    """Context manager sampling the bytes of ``.grad`` tensors alive at once during backward
    (NOTE 1). Create it before registering other hooks on the parameters.

    Args:
        params: the parameters to watch (those with ``requires_grad=False`` are skipped).

    Attributes:
        peak_bytes: ``int``, the largest sum of ``.grad`` bytes seen at one of its samples.
        samples: ``int``, how many times a hook of the meter ran.

    Example::

        with GradBytesMeter(model.parameters()) as meter:
            model(x).sum().backward()
        meter.peak_bytes   # every parameter's .grad, alive at the end of backward
    """

    def __init__(self, params: Iterable[torch.Tensor]):
        self.params = [p for p in params if p.requires_grad]
        self.peak_bytes = self.samples = 0
        self._handles = [p.register_post_accumulate_grad_hook(self._sample) for p in self.params]

    def alive_bytes(self) -> int:
        """Bytes of the watched parameters' ``.grad`` tensors alive now (each storage once)."""
        keys = {_key(p.grad) for p in self.params if p.grad is not None}
        return sum(k[2] for k in keys)

    def _sample(self, param: torch.Tensor) -> None:
        self.samples += 1
        self.peak_bytes = max(self.peak_bytes, self.alive_bytes())

    def remove(self) -> None:
        """Remove the meter's hooks (safe to call twice)."""
        for handle in self._handles:
            handle.remove()

    def __enter__(self) -> GradBytesMeter:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"GradBytesMeter(peak_bytes={self.peak_bytes}, samples={self.samples})"


class _Held:
    """What autograd holds for one saved tensor while a :class:`PackedBytesMeter` is active: the
    value your pack hook returned, and the storages it counted."""

    __slots__ = ("keys", "meter", "packed")

    def __init__(self, packed, keys: list, meter: PackedBytesMeter):
        self.packed, self.keys, self.meter = packed, keys, meter

    def __del__(self):
        for key in self.keys:
            self.meter._release(key)


class PackedBytesMeter(SavedTensorsHooksMeter):
    """Context manager running your saved-tensor hooks and counting the bytes of what the pack
    hook returns (NOTE 2): the memory a graph keeps for backward *with* those hooks.

    Args:
        pack: ``pack(tensor) -> anything``, called for each tensor autograd saves.
        unpack: ``unpack(packed) -> tensor``, called when backward needs it.
        exclude: tensors whose storages are not counted (typically ``model.parameters()``).

    Attributes (``int``, bytes unless said):
        alive_bytes: bytes of packed values alive now; peak_bytes: the largest ``alive_bytes``;
        packed_tensors: how many tensors were packed (a count).

    Example::

        with PackedBytesMeter(lambda t: t.half(), lambda t: t.float()) as meter:
            loss = f(x)
        meter.alive_bytes   # half of what SavedTensorMeter counts, if f saves float32 tensors only
    """

    def __init__(self, pack: Callable, unpack: Callable, exclude: Iterable[torch.Tensor] = ()):
        self._inner_pack, self._inner_unpack = pack, unpack
        self._excluded = {_key(t) for t in exclude}
        self._live: dict = {}  # storage key -> number of packed values holding it
        self.alive_bytes = self.peak_bytes = self.packed_tensors = 0
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)

    def _pack(self, tensor: torch.Tensor) -> _Held:
        packed = self._inner_pack(tensor)
        self.packed_tensors += 1
        keys = []
        for t in tree_flatten(packed)[0]:
            if not isinstance(t, torch.Tensor):
                continue
            key = _key(t)
            if key in self._excluded or key[2] == 0 or key in keys:
                continue
            keys.append(key)
            if self._live.get(key, 0) == 0:
                self.alive_bytes += key[2]
                self.peak_bytes = max(self.peak_bytes, self.alive_bytes)
            self._live[key] = self._live.get(key, 0) + 1
        return _Held(packed, keys, self)

    def _unpack(self, held: _Held) -> torch.Tensor:
        return self._inner_unpack(held.packed)

    def _release(self, key) -> None:
        count = self._live.get(key, 0) - 1
        if count <= 0:
            self._live.pop(key, None)
            self.alive_bytes -= key[2]
        else:
            self._live[key] = count
