"""``diagnose_bytes``: a byte count (saved for backward, alive at a peak) compared with the reference's,
and what was left out or counted twice named from the parts the question lists."""

from __future__ import annotations

import dataclasses
import itertools

from .causes import key as cause_key
from .diagnosis import Diagnosis

__all__ = ["diagnose_bytes"]


def _sum_matches(target: int, items: dict[str, int], most: int = 3, rank=lambda combo: 0) -> list[tuple[str, ...]]:
    """The smallest combinations (each item at most once, up to ``most`` items) of ``items`` whose
    sizes add up to ``target``: of the shortest length found, those of the lowest ``rank``."""
    names = [name for name, size in items.items() if size > 0]
    for length in range(1, min(most, len(names)) + 1):
        found = [combo for combo in itertools.combinations(names, length) if sum(items[n] for n in combo) == target]
        if found:
            best = min(map(rank, found))
            return [combo for combo in found if rank(combo) == best]
    return []


def _named(combos: list[tuple[str, ...]]) -> str:
    return " or ".join(" + ".join(combo) for combo in combos)


def _names_in(combos: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The part names ``combos`` hold, each once: the question's texts a reason quotes."""
    return tuple(dict.fromkeys(str(n) for combo in combos for n in combo))


# when a graph's saved tensors go, true with and without retain_graph=True
_GRAPH_GOES = (
    "A graph's saved tensors go when backward frees them, or, with retain_graph=True, only when nothing "
    "references the graph any more (its loss rebound to the next step's)."
)


def _or_twice(unsaved: Diagnosis, twice: list[tuple[str, ...]]) -> Diagnosis:
    """``unsaved``'s diagnosis (tensors no Node saves, counted), with, where saved storages of the same
    total size exist (``twice``), the other reading of the same excess: those counted twice. The
    figure alone cannot tell them apart, so both are said, as questions."""
    if not twice:
        return unsaved
    also = (
        f" Or was {_named(twice)} counted twice? A storage saved by several Nodes (or through views, or as one "
        "layer's output and the next one's input) is kept, and counted, once."
    )
    return dataclasses.replace(
        unsaved, message=unsaved.message + also, reason=unsaved.reason + also, given=unsaved.given + _names_in(twice)
    )


# what a figure counted at k B per element, where the dtype has more, is said to have taken (no hidden dtype named)
_ASSUMED = {4: "4 B per element where float64 has 8?", 2: "2 B per element, a 16-bit dtype's, where this one has more?"}


def diagnose_bytes(
    received,
    expected: int,
    name: str = "saved bytes",
    parts: dict[str, int] | None = None,
    unsaved: dict[str, int] | None = None,
    step: int | None = None,
    extra: dict[str, int] | None = None,
    element_size: int | None = None,
) -> Diagnosis:
    """Compare a memory figure (``int`` bytes) with the reference, exactly, and name what the
    difference is made of.

    Args:
        received: the learner's figure.
        expected: the reference figure, in bytes.
        parts: bytes of each storage the reference really saves, by name (``{"x": 128, "the ReLU
            output": 96}``): a figure too low by some of them left them out; too high by some of
            them counted them twice.
        unsaved: bytes of tensors the computation makes but no Node saves, by name (``{"the
            sigmoid's input": 96}``): a figure too high by one of them counted a tensor that is
            not kept for backward.
        step: bytes of one step's graph, when the figure is about a loop: a figure off by k of
            them counted k steps' graphs too many (or too few) at that moment.
        extra: bytes that a known wrong run adds, named by what adds them (a measured figure:
            ``{"what the backbone saves when it runs in grad mode": 1536}``), or, negative, leaves out
            (``{"the clone's storage": -80}``): a figure off by exactly one of them is said to be that.
        element_size: bytes per element of the dtype the figure counts, when there is one: a figure
            1/k of the reference is said to count elements only when k is that size (a figure in
            float32 that is 1/2 of the reference is not elements: 2 B is no float32 size).

    The difference is matched first against one part, one unsaved tensor or one step's graph,
    then the ratios (2x: everything counted twice; 8x: bits; k x: k graphs where one is alive),
    then k steps' graphs and sums of up to three parts (saved or not), then 1/2, 1/4, 1/8
    (elements for bytes). Only saved parts are ever said to be counted twice.

    Returns:
        A :class:`Diagnosis` (``kind``: ok, type, element_size, double, missing, unsaved, steps,
        extra, multiple, fraction, mismatch); never raises.
    """
    parts, unsaved, extra = dict(parts or {}), dict(unsaved or {}), dict(extra or {})
    if isinstance(received, bool) or not isinstance(received, int):
        hint = " (use .item() or int(...))" if hasattr(received, "item") else ""
        said = f"should be an int number of bytes, got {type(received).__name__}{hint}."
        return Diagnosis(False, "type", f"{name} {said}", reason=said)
    if received == expected:
        return Diagnosis(True, "ok", f"{name} is correct.", 0.0)
    rel = abs(received - expected) / expected if expected else float(abs(received))
    diff = received - expected
    size = abs(diff)
    side = "too high" if diff > 0 else "too low"

    def steps_message(k: int) -> Diagnosis:
        graphs = "one step's graph" if k == 1 else f"{k} steps' graphs"
        why = (
            "Is a graph counted that backward() already freed, or that nothing references any more?"
            if diff > 0
            else "Which graph is still alive at that moment (retain_graph=True, or a loss still referenced)?"
        )
        return Diagnosis(
            False,
            "steps",
            f"{name} is {size} B {side}: exactly the size of {graphs}. {why}",
            rel,
            float(k),
            cause=cause_key("bytes.steps", side),
            reason=f"is {side} by exactly the size of a whole number of steps' graphs. {why}",  # k: the steps
        )

    def saved_message(combos: list[tuple[str, ...]]) -> Diagnosis:
        if diff > 0:
            return Diagnosis(
                False,
                "double",
                f"{name} is {size} B too high: exactly the size of "
                f"{_named(combos)}. Was it counted twice? A storage saved by several Nodes "
                "(or through views) is kept, and counted, once.",
                rel,
                cause=cause_key("bytes.double", _named(combos)),
                reason=f"is too high by exactly the size of {_named(combos)}. Was it counted twice? A storage "
                "saved by several Nodes (or through views) is kept, and counted, once.",
                given=_names_in(combos),
            )
        return Diagnosis(
            False,
            "missing",
            f"{name} is {size} B too low: exactly the size of {_named(combos)}. Which Node saves it for backward?",
            rel,
            cause=cause_key("bytes.missing", _named(combos)),
            reason=f"is too low by exactly the size of {_named(combos)}. Which Node saves it for backward?",
            given=_names_in(combos),
        )

    def unsaved_message(combos: list[tuple[str, ...]]) -> Diagnosis:
        names = sorted({n for combo in combos for n in combo if n in unsaved})
        listed = " and ".join(names)
        said = (
            f"exactly the size of {_named(combos)}; {listed} {'is' if len(names) == 1 else 'are'} not saved for "
            "backward by any Node: count only what backward needs (check what each Node saves)."
        )
        return Diagnosis(
            False,
            "unsaved",
            f"{name} is {size} B too high: {said}",
            rel,
            cause=cause_key("bytes.unsaved", listed),
            reason=f"is too high by {said}",
            given=_names_in(combos),
        )

    # one thing, by its own name: what a known wrong run adds or leaves out, a saved storage, a tensor nobody
    # saves, or one step's graph
    if known := [n for n, s in extra.items() if s == diff]:
        message = f"{name} is {size} B {side}: exactly {' or '.join(known)}."
        return Diagnosis(
            False,
            "extra",
            message,
            rel,
            cause=cause_key("bytes.extra" if diff > 0 else "bytes.missing", " or ".join(known)),
            reason=f"is {side} by exactly {' or '.join(known)}.",
            given=tuple(known),
        )

    def smaller_element(sizes: tuple[int, ...]) -> Diagnosis | None:
        """Every element counted at one of ``sizes`` bytes, fewer than the dtype's ``element_size``."""
        assumed = [
            k
            for k in sizes
            if element_size and diff < 0 and k < element_size and received * element_size == expected * k
        ]
        if not assumed:
            return None
        fix = "take each tensor's size from its dtype: numel() * element_size()."
        return Diagnosis(
            False,
            "element_size",
            f"{name} is {size} B too low: exactly what {assumed[0]} B per element gives, where this dtype has "
            f"{element_size} B per element: {fix}",
            rel,
            received / expected,
            cause=cause_key("bytes.element_size", "fewer bytes per element than the dtype has"),
            # no sizes: they would name a hidden test's dtype
            reason=f"is too low by a whole fraction: each element counted at fewer bytes than its dtype has "
            f"({_ASSUMED[assumed[0]]}): {fix}",
        )

    # 4 B per element (float32's) where the dtype has more: said before a part of the same size, since a
    # check runs its float32 cases first, where a missing part shows; other sizes only after the parts
    if wide := smaller_element((4,)):
        return wide
    single = [(n,) for n, s in parts.items() if s == size]
    not_saved = [(n,) for n, s in unsaved.items() if s == size] if diff > 0 else []
    if single and not_saved:  # the same size: a saved storage counted twice, or a tensor nobody saves
        twice = saved_message(single)
        also = f" Or is it {_named(not_saved)}, which no Node saves for backward?"
        return Diagnosis(
            False,
            "double",
            twice.message + also,
            rel,
            cause=twice.cause,
            reason=twice.reason + also,
            given=twice.given + _names_in(not_saved),
        )
    if single:
        return saved_message(single)
    if not_saved:
        return unsaved_message(not_saved)
    if step and size == step:
        return steps_message(1)
    # ratios: the whole figure counted twice, in bits, or once per graph
    if expected and received == 2 * expected:
        return Diagnosis(
            False,
            "double",
            f"{name} is exactly 2x the expected figure: was each saved storage counted twice?",
            rel,
            2.0,
            reason="is exactly 2x the expected figure: was each saved storage counted twice?",
        )
    if expected and received == 8 * expected:
        said = "is 8x the expected figure: bits, not bytes?"
        return Diagnosis(False, "multiple", f"{name} {said}", rel, 8.0, reason=said)
    if expected > 0 and received > 2 * expected and received % expected == 0:
        k = received // expected
        return Diagnosis(
            False,
            "multiple",
            f"{name} is exactly {k}x the expected figure: {k} graphs (iterations, micro-batches) counted, "
            f"where fewer are alive at that moment? {_GRAPH_GOES}",
            rel,
            float(k),
            reason="is a whole multiple of the expected figure: several graphs (iterations, micro-batches) counted, "
            f"where fewer are alive at that moment? {_GRAPH_GOES}",
        )
    if step and size % step == 0 and size // step <= 64:
        return steps_message(size // step)
    # sums of a few parts: saved ones only for a figure too low
    # (a tensor nobody saves is the likelier slip than a saved one counted twice: fewest saved first)
    if combos := _sum_matches(
        size, parts if diff < 0 else {**parts, **unsaved}, rank=lambda combo: sum(n in parts for n in combo)
    ):
        if any(n in unsaved for combo in combos for n in combo):
            # the same excess may also be saved storages counted twice: say both, never pick one unseen
            return _or_twice(unsaved_message(combos), _sum_matches(size, parts) if diff > 0 else [])
        return saved_message(combos)
    if narrow := smaller_element((2,)):
        return narrow
    for factor in (2, 4, 8) if element_size is None else (element_size,):
        if expected and received * factor == expected:
            return Diagnosis(
                False,
                "fraction",
                f"{name} is 1/{factor} of the expected figure: elements "
                f"rather than bytes? Multiply by element_size() ({factor} B"
                f"{' here' if element_size else ' here?'}).",
                rel,
                reason="is a whole fraction of the expected figure: elements rather than bytes? Multiply by "
                "element_size().",  # the factor is the dtype's size, and a dtype may be what a hidden test changes
            )
    return Diagnosis(
        False,
        "mismatch",
        f"{name} differs from the expected figure by {diff:+d} B.",
        rel,
        reason=f"is {side}, by no known part or whole multiple.",
    )
