"""Values reported by the checks of a graded notebook, as plain JSON, and their comparison.

A learner's notebook runs in its own process; the values its checks saw (a gradient, a dict of
predictions, a byte count) come back as JSON, never as pickles, and are compared here, in the
grader, with the values the instructor's solution gave for the same check. Comparison code the
learner can reach (``torch.allclose``, ``autograder.check`` in their kernel) plays no part.
"""
from __future__ import annotations

from typing import Any

__all__ = ["encode", "decode", "compare"]

_MAX_ELEMENTS = 100_000


def encode(value: Any, depth: int = 0) -> Any:
    """A JSON-safe form of ``value``: tensors become ``{"__tensor__": {...}}`` (dtype, shape,
    device type, requires_grad, flat data); dicts, lists and tuples are encoded inside; other
    objects become ``{"__object__": type name}``."""
    import torch

    if depth > 20:
        return {"__object__": "nested too deep"}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.numel() > _MAX_ELEMENTS or t.layout != torch.strided or t.is_complex() or t.device.type == "meta":
            return {"__object__": f"tensor that cannot be reported ({tuple(t.shape)}, {t.dtype})"}
        return {"__tensor__": {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
                               "device": t.device.type, "requires_grad": value.requires_grad,
                               "data": t.cpu().reshape(-1).tolist()}}
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [encode(v, depth + 1) for v in value]
    return {"__object__": type(value).__name__}


def decode(value: Any) -> Any:
    """Inverse of :func:`encode` (tensors come back on the CPU; a tensor that required grad comes
    back requiring grad, so a value left attached to the graph is still diagnosed).

    Raises:
        ValueError, TypeError, KeyError: the value is not something :func:`encode` makes.
    """
    import torch

    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tensor__" in value:
        spec = value["__tensor__"]
        t = torch.tensor(spec["data"], dtype=getattr(torch, spec["dtype"])).reshape(spec["shape"])
        return t.requires_grad_() if spec["requires_grad"] and t.is_floating_point() else t
    if "__dict__" in value:
        return {_hashable(decode(k)): decode(v) for k, v in value["__dict__"]}
    if "__object__" in value:
        return _Opaque(str(value["__object__"]))
    raise ValueError("not an encoded value")


class _Opaque(str):
    """An object that was not a tensor, number, string or container; equal only to itself."""


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def _plain(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return ("tensor", str(value.dtype), tuple(value.shape), value.detach().tolist())
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def compare(received: Any, reference: Any, name: str, tolerance: dict) -> tuple[bool, str]:
    """Compare an encoded learner value with the encoded reference value of the same check.

    Tensors are compared with :func:`autograder.compare.diagnose` (``tolerance``: the rtol/atol/
    allow_graph the instructor's check used); anything else must be equal.

    Returns:
        ``(ok, message)``; a value that cannot be decoded is not ok. Never raises.
    """
    from ..compare import diagnose

    try:
        got, want = decode(received), decode(reference)
    except (ValueError, TypeError, KeyError, AttributeError, RuntimeError):
        return False, f"{name}: the reported value could not be read"
    import torch

    if isinstance(want, torch.Tensor):
        options = {k: tolerance[k] for k in ("rtol", "atol", "allow_graph") if k in (tolerance or {})}
        result = diagnose(got, want, name, **options)
        return result.ok, result.message
    if _plain(got) == _plain(want):
        return True, f"{name} is correct."
    return False, f"{name} differs from the expected answer."
