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
