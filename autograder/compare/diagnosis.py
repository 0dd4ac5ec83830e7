"""What a comparison says (:class:`Diagnosis`), and the tolerances it compares within, per dtype."""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["Diagnosis", "tolerances", "NONE_GRAD_CAUSES"]

# rtol, atol per dtype: the defaults of torch.testing.assert_close (PyTorch docs, torch.testing).
_TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}

NONE_GRAD_CAUSES = (
    "backward() has not been called yet (or .grad was reset to None by zero_grad())",
    "the tensor is not a leaf: call .retain_grad() on it before backward(), or use a hook",
    "it has requires_grad=False (set it with requires_grad=True or .requires_grad_())",
    "it was moved or cast after requires_grad=True (x.to(...), x.double(), x * 1 give a non-leaf)",
    "the loss does not depend on it, or the path was cut by detach(), .data or torch.no_grad()",
)


def tolerances(dtype: torch.dtype) -> tuple[float, float]:
    """``(rtol, atol)`` used for ``dtype``; integer and bool dtypes compare exactly, (0, 0)."""
    return _TOLERANCES.get(dtype, (0.0, 0.0))


@dataclass(frozen=True)
class Diagnosis:
    """The outcome of a comparison: ``ok``, the ``kind`` of difference (see module docstring), a
    learner-facing ``message``, the relative error ``max|r - e| / max|e|`` (``None`` when the
    values could not be compared) and, for ``multiple``/``fraction``/``sign``, the ``factor``
    received / expected; ``cause``, when the question's own ``causes`` (or, for bytes, the parts
    named) tell more than the kind, its cause key (``autograder.compare.causes``): judge keys the rest by kind.

    ``reason`` is what a hidden test may say of the difference: the diagnosis without the values, shapes,
    dtypes, sizes or factor its inputs make (a predicate: "is all zeros but should not be: ..."), with
    ``given``, the question's own texts it quotes (a cause, the names of saved parts), which may hold an
    input (``"N = 7 rows here"``) and are cut to what does not (``grading.verdict``)."""

    ok: bool
    kind: str
    message: str
    rel_error: float | None = None
    factor: float | None = None
    cause: str = ""
    reason: str = ""
    given: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.message
