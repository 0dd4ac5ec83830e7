"""A shape that differs from the reference's, in words: a reduction missing (or extra) over a dimension
that broadcasting adds, a squeeze, or elements arranged otherwise."""

from __future__ import annotations

import math


def _broadcast_shapes(a: tuple, b: tuple) -> tuple | None:
    """``torch.broadcast_shapes(a, b)`` as a tuple, None where they do not broadcast; computed here,
    as PyTorch's rule says: ``torch.broadcast_shapes`` imports ``torch.fx``'s symbolic shapes and
    SymPy on its first call, a second of the grader's time for one message."""
    a, b = (1,) * (len(b) - len(a)) + a, (1,) * (len(a) - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        return None
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def _shape_message(name: str, got: tuple, want: tuple) -> tuple[str, str]:
    """The shape difference in words, naming a missing (or extra) reduction over a dimension that
    broadcasting adds: a tensor broadcast along a dimension gets the sum over it as its gradient;
    and which of these it is, as the end of its cause key (``arranged``, ``keepdim``, ...)."""
    plain = f"{name} has shape {got}, expected {want}"
    wider = _broadcast_shapes(tuple(got), tuple(want))
    if wider not in (got, want):  # not one shape broadcast to the other
        if math.prod(got) == math.prod(want):
            return (
                f"{plain}: the same number of elements, arranged otherwise (a missing squeeze() or reshape?).",
                "arranged",
            )
        return plain + ".", "other"
    extra, small = (got, want) if wider == got else (want, got)
    new = len(extra) - len(small)  # leading dimensions the smaller shape lacks altogether
    padded = (1,) * new + tuple(small)
    dims = [i for i, (a, b) in enumerate(zip(extra, padded)) if a != b or i < new]
    which = ", ".join(f"dimension {i} (size {extra[i]}{'' if i < new else ', not 1'})" for i in dims)
    if all(extra[i] == 1 for i in dims):
        how = (
            "a sum or mean with keepdim=True, or a missing squeeze()?"
            if wider == got
            else "squeezed or indexed where a dimension of size 1 should stay?"
        )
        return f"{plain}: they differ by {which}: {how}", "keepdim" if wider == got else "squeezed"
    if wider == got:
        return (
            f"{plain}: it has the extra {which}. That looks like a gradient not summed over the "
            "dimension it was broadcast along (a tensor broadcast along a dimension gets the sum over "
            "it as its gradient: .sum(dim)), or a value not reduced over it.",
            "not_summed",
        )
    return (
        f"{plain}: it lacks {which}. That looks like a sum (or mean) over a dimension that should "
        "stay: a tensor that was not broadcast along it gets one gradient entry per element there.",
        "summed_away",
    )


# what a shape difference is, by _shape_message's kind, said without the shapes (a hidden test's)
_SHAPE_REASONS = {
    "arranged": "has the wrong shape: the same number of elements, arranged otherwise (a missing squeeze() or "
    "reshape?).",
    "other": "has the wrong shape.",
    "keepdim": "has the wrong shape: an extra dimension of size 1 (a sum or mean with keepdim=True, or a missing "
    "squeeze()?).",
    "squeezed": "has the wrong shape: it lacks a dimension of size 1 (squeezed or indexed where a dimension of size 1 "
    "should stay?).",
    "not_summed": "has the wrong shape: an extra dimension. That looks like a gradient not summed over the dimension "
    "it was broadcast along (.sum(dim)), or a value not reduced over it.",
    "summed_away": "has the wrong shape: it lacks a dimension. That looks like a sum (or mean) over a dimension that "
    "should stay: a tensor that was not broadcast along it gets one gradient entry per element there.",
}


def _extra_dims(got: tuple, want: tuple) -> list[int]:
    """The dimensions of ``got`` that broadcasting ``want`` to it adds or widens."""
    padded = (1,) * (len(got) - len(want)) + tuple(want)
    return [i for i, (a, b) in enumerate(zip(got, padded)) if a != b or i < len(got) - len(want)]


def _reduced_is_expected(received, expected) -> str:
    """Which reduction of a ``received`` with extra dimensions gives ``expected`` (the values' evidence):
    ``"sum"``, ``"mean"``, ``"diagonal"`` or ``""``."""
    import torch

    from .diagnosis import tolerances

    rtol, atol = tolerances(expected.dtype)
    dims = _extra_dims(tuple(received.shape), tuple(expected.shape))

    def close(x) -> bool:
        return bool(torch.allclose(x.reshape(expected.shape).to(expected.dtype), expected, rtol=rtol, atol=atol))

    r = received.detach()
    if r.dim() == 2 and r.shape[0] == r.shape[1] and tuple(expected.shape) == (r.shape[0],) and close(r.diagonal()):
        return "diagonal"
    if dims and close(r.sum(dim=dims)):
        return "sum"
    if dims and close(r.mean(dim=dims)):
        return "mean"
    return ""


# what the values of a tensor with an extra dimension show, by the reduction that gives the expected value
_READ = {
    "sum": "Summed over it, it is the expected value: a gradient not summed over the dimension it was broadcast "
    "along (a tensor broadcast along a dimension gets the sum over it as its gradient: .sum(dim)), or a value not "
    "reduced over it.",
    "mean": "Averaged over it, it is the expected value: a value not reduced over it (.mean(dim)).",
    "diagonal": "Its diagonal is the expected value: a whole matrix (a Jacobian, a Hessian) where only its diagonal "
    "is asked for.",
    "": "Neither its sum nor its mean over it is the expected value: what makes that dimension, and should it be "
    "there at all?",
}


def shape_read(message: str, why: str, received, expected) -> tuple[str, str]:
    """A shape difference's ``message`` and hidden reason, where ``received`` has an extra dimension
    (``why == "not_summed"``), said from what its values show rather than from the shapes alone: which reduction
    of it, if any, is the expected value."""
    if why != "not_summed" or not (received.is_floating_point() and expected.is_floating_point()):
        return message, _SHAPE_REASONS[why]
    read = _READ[_reduced_is_expected(received, expected)]
    head = message.split(" That looks like", 1)[0]
    return f"{head} {read}", f"has the wrong shape: an extra dimension. {read}"
