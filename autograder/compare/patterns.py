"""What a value that differs by no factor shows, observed from the two values alone (issue 51: say what the run
shows where no cause is known): the same offset at every element, the expected values one position later or earlier
along a dimension, reversed or transposed, the same values in another order, each row scaled by its own factor,
or every wrong element in a few rows. Observations, never causes: each is a fact about the received value."""

from __future__ import annotations

import torch

__all__ = ["pattern", "sequence_pattern", "combination"]


def _close(a: torch.Tensor, b: torch.Tensor, rtol: float, atol: float) -> bool:
    return a.shape == b.shape and bool(torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=False).all())


def _offset(r, e, rtol, atol) -> tuple[str, str] | None:
    d = (r - e).reshape(-1)
    if d.numel() < 2 or not _close(d, d[:1].expand_as(d), rtol, max(atol, rtol * float(e.abs().max()))):
        return None
    return (
        f"received - expected is {float(d[0]):+.4g} at every element (the same offset everywhere)",
        "it is off by the same amount at every element",
    )


def _moved(r, e, rtol, atol) -> tuple[str, str] | None:
    for dim in range(r.dim()):
        n = r.shape[dim]
        if n < 3:
            continue
        if _close(e.narrow(dim, 1, n - 1), e.narrow(dim, 0, n - 1), rtol, atol):
            continue  # constant along dim: a shift shows nothing
        for step, where in ((1, "later"), (-1, "earlier")):
            got = r.narrow(dim, 1, n - 1) if step == 1 else r.narrow(dim, 0, n - 1)
            want = e.narrow(dim, 0, n - 1) if step == 1 else e.narrow(dim, 1, n - 1)
            if _close(got, want, rtol, atol):
                shown = "received[i] is expected[i - 1]" if step == 1 else "received[i] is expected[i + 1]"
                return (
                    f"its values are the expected ones one position {where} along dimension {dim} ({shown})",
                    f"its values are the expected ones one position {where} along a dimension",
                )
        if _close(r, e.flip(dim), rtol, atol) and not _close(e, e.flip(dim), rtol, atol):
            return f"it is the expected value reversed along dimension {dim}", "it is the expected value reversed"
    if r.dim() == 2 and r.shape[0] == r.shape[1] and _close(r, e.T, rtol, atol):
        return "it is the transpose of the expected value", "it is the transpose of the expected value"
    return None


def _rows_moved(r, e, rtol, atol) -> tuple[str, str] | None:
    """Slices along one dimension (rows, columns) that are wrong, each its expected slice moved one position, the
    other slices right (a logged validation loss taken one step early)."""
    if r.dim() < 2:
        return None
    for dim in range(r.dim()):
        wrong = [i for i in range(r.shape[dim]) if not _close(r.select(dim, i), e.select(dim, i), rtol, atol)]
        if not wrong or len(wrong) == r.shape[dim]:
            continue
        found = [_moved(r.select(dim, i), e.select(dim, i), rtol, atol) for i in wrong]
        if not all(f and "position" in f[0] for f in found):
            continue
        where = "later" if "later" in found[0][0] else "earlier"
        listed = ", ".join(str(i) for i in wrong[:4]) + (", ..." if len(wrong) > 4 else "")
        return (
            f"at index {listed} of dimension {dim} it holds the expected values one position {where}, the rest is "
            "right",
            f"in part of it, it holds the expected values one position {where}, the rest is right",
        )
    return None


def _reordered(r, e, rtol, atol) -> tuple[str, str] | None:
    if r.numel() < 2 or not _close(r.reshape(-1).sort().values, e.reshape(-1).sort().values, rtol, atol):
        return None
    return "it holds the expected values, in another order", "it holds the expected values, in another order"


def _row_factors(r, e, rtol, atol) -> tuple[str, str] | None:
    if r.dim() < 2 or r.shape[0] < 2:
        return None
    rows, want = r.reshape(r.shape[0], -1), e.reshape(e.shape[0], -1)
    factors = []
    for got, ref in zip(rows, want):
        nonzero = ref.abs() > atol
        if not bool(nonzero.any()):
            return None
        f = float((got * ref).sum() / (ref * ref).sum())
        if not _close(got, f * ref, rtol * 10, atol * 10):
            return None
        factors.append(f)
    if max(factors) - min(factors) <= 1e-3 * max(abs(f) for f in factors):
        return None  # one factor for all: the factor diagnosis says it
    listed = ", ".join(f"{f:.4g}" for f in factors[:4]) + (", ..." if len(factors) > 4 else "")
    return (
        f"each row (dimension 0) is the expected row times a factor of its own: {listed}",
        "each row is the expected row times a factor of its own",
    )


def _few_rows(r, e, rtol, atol) -> tuple[str, str] | None:
    if r.dim() < 2 or r.shape[0] < 3:  # one dimension: the elements out of tolerance are listed already
        return None
    bad = ~torch.isclose(r, e, rtol=rtol, atol=atol, equal_nan=True).reshape(r.shape[0], -1).all(dim=1)
    wrong = [int(i) for i in bad.nonzero().reshape(-1)]
    if not wrong or len(wrong) > r.shape[0] // 2:
        return None
    listed = ", ".join(map(str, wrong[:4])) + (", ..." if len(wrong) > 4 else "")
    return (
        f"every wrong element is in row{'s' if len(wrong) > 1 else ''} {listed} of {r.shape[0]} (dimension 0); "
        "the other rows are right",
        "the wrong elements are in a few rows only; the other rows are right",
    )


def pattern(r: torch.Tensor, e: torch.Tensor, rtol: float, atol: float) -> tuple[str, str]:
    """The first pattern the received ``r`` shows against the expected ``e`` (same shape, floating, finite), as
    ``(said with values and indices, said without: a hidden test's form)``; ``("", "")`` when none shows."""
    if r.shape != e.shape or not (torch.isfinite(r).all() and torch.isfinite(e).all()):
        return "", ""
    r, e = r.detach().double(), e.detach().double()
    for find in (_offset, _moved, _rows_moved, _reordered, _row_factors, _few_rows):
        found = find(r, e, rtol, atol)
        if found:
            return found
    return "", ""


def _item(x) -> str:
    return repr(x)[:60]


def sequence_pattern(received, expected, show: bool = True) -> str:
    """What a received list or tuple shows against the expected one (``show``: with items and positions; else
    without, a hidden test's form): other items, fewer or more of them, the same items in another order (reversed,
    moved one position), or the positions that differ. "" where either is no list or tuple of items."""
    if not (isinstance(received, (list, tuple)) and isinstance(expected, (list, tuple))) or not expected:
        return ""
    got, want = list(received), list(expected)
    if len(got) != len(want):
        missing = [w for w in want if w not in got]
        extra = [g for g in got if g not in want]
        said = f"it has {len(got)} items where {len(want)} are expected" if show else "it has another number of items"
        if show and (missing or extra):
            said += (f"; missing: {', '.join(map(_item, missing[:4]))}" if missing else "") + (
                f"; not expected: {', '.join(map(_item, extra[:4]))}" if extra else ""
            )
        return said
    if sorted(map(repr, got)) == sorted(map(repr, want)):
        if got == want[::-1]:
            return "it holds the expected items in reverse order"
        first = next(i for i, (g, w) in enumerate(zip(got, want)) if g != w)
        if not show:
            return "it holds the expected items in another order"
        return (
            f"it holds the expected items in another order; the first out of place at position {first} "
            f"({_item(got[first])} where {_item(want[first])} is expected)"
        )
    if len(got) > 2 and got[1:] == want[:-1]:
        return "each item from the second on is the one expected one position earlier (moved one position later)"
    if len(got) > 2 and got[:-1] == want[1:]:
        return "each item but the last is the one expected one position later (moved one position earlier)"
    wrong = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    if not show:
        return "some of its items differ"
    first = wrong[0]
    return (
        f"{len(wrong)} of its {len(want)} items differ, the first at position {first} ({_item(got[first])} where "
        f"{_item(want[first])} is expected)"
    )


def combination(r: torch.Tensor, e: torch.Tensor, terms, rtol: float, atol: float) -> tuple[str, str]:
    """Where the received value is a weighted sum of the question's inputs (``terms``: ``{name: tensor}`` of its
    shape, at most three; a soft update, a moving average, a mix), the weights it has and those expected:
    ``(said with the weights, said without: a hidden test's)``; ``("", "")`` where it is none."""
    if not isinstance(terms, dict):
        return "", ""
    names = [n for n, t in terms.items() if isinstance(t, torch.Tensor) and t.shape == r.shape][:3]
    if not names or r.numel() <= len(names) + 1:
        return "", ""
    basis = torch.stack([terms[n].detach().double().reshape(-1) for n in names], 1)

    def weights(v: torch.Tensor):
        flat = v.detach().double().reshape(-1, 1)
        found = torch.linalg.lstsq(basis, flat).solution
        fits = torch.allclose(basis @ found, flat, rtol=10 * rtol, atol=10 * atol)
        return found.reshape(-1).tolist() if fits else None

    def words(ws) -> str:
        return " + ".join(f"{w:.4g} * {n}" for w, n in zip(ws, names) if abs(w) > 1e-9) or "0"

    got, want = weights(r), weights(e)
    if got is None:
        return "", ""
    expected = f", where {words(want)} is expected" if want is not None else ""
    return (
        f"it is {words(got)}{expected}",
        f"it is a weighted sum of {', '.join(names)}, with other weights than expected",
    )
