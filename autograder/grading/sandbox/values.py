"""Checked values as plain JSON: how a record crosses from a sandboxed process to the grader.

A notebook runs in its own sandboxed process; the records its checks made (``autograder.check.
Checked``) come back as JSON, never as pickles, so the grader never unpickles anything a learner
could forge. Tensors keep dtype, shape, device type and ``requires_grad``; tuples stay tuples.
"""

from __future__ import annotations

from typing import Any

__all__ = ["encode", "decode", "encode_record", "decode_record", "Opaque"]

_MAX_ELEMENTS = 100_000


class Opaque:
    """Stands for an object that was not a tensor, number, string or container. Equal only to
    itself: two opaque values that crossed separately never compare equal."""

    def __init__(self, description: str):
        self.description = description

    def __repr__(self) -> str:
        return f"<{self.description}>"


def encode(value: Any, depth: int = 0) -> Any:
    """A JSON-safe form of ``value``: tensors become ``{"__tensor__": {...}}`` (dtype, shape,
    device type, requires_grad, flat data); dicts, lists and tuples are encoded inside; other
    objects become ``{"__object__": type name}``. Never raises."""
    import torch

    if depth > 20:
        return {"__object__": "nested too deep"}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else {"__float__": repr(value)}
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.numel() > _MAX_ELEMENTS or t.layout != torch.strided or t.is_complex() or t.device.type == "meta":
            return {"__object__": f"tensor that cannot be reported ({tuple(t.shape)}, {t.dtype})"}
        return {
            "__tensor__": {
                "dtype": str(t.dtype).replace("torch.", ""),
                "shape": list(t.shape),
                "device": t.device.type,
                "requires_grad": value.requires_grad,
                "data": [encode(v) for v in t.cpu().reshape(-1).tolist()],
            }
        }
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, depth + 1) for v in value]}
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    return {"__object__": type(value).__name__}


def decode(value: Any) -> Any:
    """Inverse of :func:`encode` (tensors come back on the CPU; a tensor that required grad comes
    back requiring grad, so a value left attached to the graph is still diagnosed).

    Raises:
        ValueError, TypeError, KeyError, RuntimeError: the value is not something :func:`encode` makes.
    """
    import torch

    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tensor__" in value:
        spec = value["__tensor__"]
        # a dtype by name, looked up without torch's module __getattr__: a forged name such as
        # "_inductor" would import a torch submodule in the grader (seconds, memory)
        dtype = vars(torch).get(spec["dtype"]) if isinstance(spec["dtype"], str) else None
        if not isinstance(dtype, torch.dtype):
            raise ValueError("not a dtype")
        data = [decode(v) for v in spec["data"]]
        t = torch.tensor(data, dtype=dtype).reshape(spec["shape"])
        return t.requires_grad_() if spec["requires_grad"] and t.is_floating_point() else t
    if "__float__" in value:
        return float(value["__float__"])
    if "__dict__" in value:
        return {_hashable(decode(k)): decode(v) for k, v in value["__dict__"]}
    if "__tuple__" in value:
        return tuple(decode(v) for v in value["__tuple__"])
    if "__object__" in value:
        return Opaque(str(value["__object__"]))
    raise ValueError("not an encoded value")


def _hashable(key: Any) -> Any:
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


def encode_record(record) -> dict:
    """A :class:`autograder.check.Checked` as JSON-safe data."""
    return {
        "name": str(record.name),
        "kind": str(record.kind),
        "received": encode(record.received),
        "expected": encode(record.expected),
        "options": encode(record.options),
    }


def decode_record(data: Any):
    """A :class:`autograder.check.Checked` from :func:`encode_record`'s output.

    Raises:
        ValueError, TypeError, KeyError, RuntimeError: ``data`` is not such a record.
    """
    from ...check.checked import Checked

    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not isinstance(data.get("kind"), str):
        raise ValueError("not a record")
    options = decode(data.get("options") or {"__dict__": []})
    if not isinstance(options, dict):
        raise ValueError("options are not a dict")
    return Checked(data["name"], data["kind"], decode(data.get("received")), decode(data.get("expected")), options)
