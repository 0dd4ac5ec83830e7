"""``diagnose_bytes``: a byte count (saved for backward, alive at a peak) compared with the reference's, and what
the difference is made of named only where one reading of it fits the run's facts (NOTE in ``byte_terms``);
otherwise the figure is said to be ambiguous, and its readings listed as possibilities."""

from __future__ import annotations

from dataclasses import dataclass

from .byte_terms import Facts, Term, complexity, decompositions
from .causes import key as cause_key
from .diagnosis import Diagnosis

__all__ = ["diagnose_bytes"]

# when a graph's saved tensors go, true with and without retain_graph=True
_GRAPH_GOES = (
    "A graph's saved tensors go when backward frees them, or, with retain_graph=True, only when nothing "
    "references the graph any more (its loss rebound to the next step's)."
)
_ONCE = "A storage saved by several Nodes (or through views) is kept, and counted, once."
_FROM_DTYPE = "take each tensor's size from its dtype: numel() * element_size()."
# readings of a figure listed when it is ambiguous
_LISTED = 3


@dataclass(frozen=True)
class _Reading:
    """One way the learner's figure may have been made: ``terms`` (a decomposition), or a whole-figure slip
    (``whole``: "twice", "bits", "graphs", "steps", "elements", "narrow"; ``k`` its number)."""

    terms: tuple[Term, ...] = ()
    whole: str = ""
    k: int = 0

    complexity: int = 1  # of a decomposition: byte_terms.complexity


def _term_words(term: Term, facts: Facts, hidden: bool) -> str:
    """A term in words (``hidden``: without the element sizes, which would name a hidden test's dtype)."""
    own = facts.element_sizes.get(term.name)
    twice = f"{term.name} counted twice" + (
        ""
        if not own or 2 * own not in (4, 8)
        else " (or at twice its element size)"
        if hidden
        else f" (or at {2 * own} B per element: it has {own} B)"
    )
    counted = (
        "counted at another element size than its dtype's"
        if hidden
        else f"counted at {term.size} B per element (it has {own} B)"
    )
    return {
        "missing": f"{term.name} left out",
        "twice": twice,
        "dtype": f"{term.name} {counted}",
        "unsaved": f"{term.name} counted, though no Node saves it",
        "view": f"{term.name} counted as a storage of its own (a view shares its base's storage)",
        "extra": term.name,
    }[term.kind]


def _graphs(k: int, hidden: bool) -> str:
    """k steps' graphs in words (``hidden``: no number, a hidden test's steps)."""
    return (
        "a whole number of steps' graphs"
        if hidden
        else "one step's graph"
        if abs(k) == 1
        else f"{abs(k)} steps' graphs"
    )


def _whole_words(reading: _Reading, element_size: int | None, hidden: bool) -> str:
    k = reading.k
    return {
        "twice": "each saved storage counted twice",
        "bits": "bits counted, not bytes",
        "graphs": f"{'several' if hidden else k} graphs (iterations, micro-batches) counted, where fewer are alive",
        "steps": _graphs(k, hidden) + (" counted too many" if k > 0 else " too few counted"),
        "elements": "elements counted rather than bytes",
        "narrow": "each element counted at fewer bytes than its dtype has"
        + ("" if hidden else f" ({k} B, where it has {element_size})"),
        "other": ("another tensor of that size" if hidden else f"another tensor of {k} B")
        + " counted, one the figure leaves out (no Node saves it, or it is not alive at that moment)",
    }[reading.whole]


def _words(reading: _Reading, facts: Facts, element_size: int | None, hidden: bool = False) -> str:
    if reading.whole:
        return _whole_words(reading, element_size, hidden)
    return " and ".join(_term_words(t, facts, hidden) for t in reading.terms)


def _wholes(received: int, expected: int, diff: int, step: int | None, element_size: int | None) -> list[_Reading]:
    """The readings of the figure as a whole: everything twice, bits, k graphs, k steps, elements, fewer bytes."""
    found = []
    if expected and received == 8 * expected:
        found.append(_Reading(whole="bits", k=8))
    graphs = expected > 0 and received > 2 * expected and received % expected == 0 and received != 8 * expected
    if graphs:
        found.append(_Reading(whole="graphs", k=received // expected))
    # k graphs where one step's graph is the whole figure is k - 1 steps' graphs too many: one reading, said once
    if step and diff % step == 0 and abs(diff) // step <= 64 and not (graphs and step == expected):
        found.append(_Reading(whole="steps", k=diff // step))  # signed: too many (> 0) or too few
    if expected and received == 2 * expected:  # after a step's graph: in a loop, the likelier reading first
        found.append(_Reading(whole="twice", k=2))
    for e in (element_size,) if element_size else (2, 4, 8):
        if expected and received * e == expected:
            found.append(_Reading(whole="elements", k=e))
    # float64 counted at float32's 4 B is a slip people make; 2 B per element is read only where nothing else fits
    if element_size == 8 and diff < 0 and received * 8 == expected * 4:
        found.append(_Reading(whole="narrow", k=4))
    return found


def _same_as_whole(terms: tuple[Term, ...], facts: Facts, wholes: list[_Reading]) -> bool:
    """Whether a decomposition is a whole-figure reading spelled part by part (every part twice, every part at
    the same other element size): said once, as the whole."""
    every = {n for n, b in facts.parts.items() if b > 0}
    if not every or {t.name for t in terms} != every:
        return False
    kinds = {(t.kind, t.size) for t in terms}
    return len(kinds) == 1 and any(w.whole in ("twice", "narrow", "elements") for w in wholes)


def _readings(received, expected, diff, facts, step, element_size, probes) -> list[_Reading]:
    wholes = _wholes(received, expected, diff, step, element_size)
    parts = [
        _Reading(terms=c, complexity=complexity(c, facts))
        for c in decompositions(diff, facts, probes)
        if not _same_as_whole(c, facts, wholes)
    ]
    every = wholes + parts
    # each element at a 16-bit dtype's 2 B: read where no reading of one or two slips fits
    narrow = element_size and element_size > 2 and diff < 0 and received * element_size == expected * 2
    if narrow and min((r.complexity for r in every), default=3) > 2:
        return [_Reading(whole="narrow", k=2)]
    if not every:
        return []
    least = min(r.complexity for r in every)
    return sorted((r for r in every if r.complexity <= least + 1), key=lambda r: r.complexity)


def _named(reading: _Reading, name: str, size: int, side: str, diff: int, facts, element_size, saved: bool) -> tuple:
    """The message, reason, kind and cause key of the one reading that fits."""
    said = _words(reading, facts, element_size)
    hidden = _words(reading, facts, element_size, hidden=True)
    if reading.whole:
        return _whole_named(reading, name, size, side, diff, element_size)
    kinds = [t.kind for t in reading.terms]
    sentences = []
    if "twice" in kinds:
        sentences.append(_ONCE)
    if "missing" in kinds:
        sentences.append(
            "Which Node saves it for backward?"
            if saved
            else "Is it alive at the moment the figure describes? Which tensors are, then?"
        )
    if "unsaved" in kinds:
        sentences.append("Count only what backward needs (check what each Node saves).")
    if "dtype" in kinds:
        sentences.append(_FROM_DTYPE.capitalize())
    if "view" in kinds:
        sentences.append("Count each storage once (tensor.untyped_storage()).")
    tail = " ".join(sentences)
    first = {"twice": "double", "missing": "missing", "unsaved": "unsaved", "extra": "extra"}
    kind = first.get(kinds[0], kinds[0])
    names = " + ".join(t.name for t in reading.terms)
    head = {"extra": "bytes.extra" if diff > 0 else "bytes.missing", "double": "bytes.double"}
    cause = cause_key(head.get(kind, f"bytes.{kind}"), names)
    message = f"{name} is {size} B {side}: exactly {said}." + (f" {tail}" if tail else "")
    return message, f"is {side} by exactly {hidden}." + (f" {tail}" if tail else ""), kind, cause


def _whole_named(reading: _Reading, name: str, size: int, side: str, diff: int, element_size) -> tuple:
    """The message, reason, kind and cause key of a whole-figure reading, the one that fits."""
    k = abs(reading.k)
    if reading.whole == "twice":
        said = "is exactly 2x the expected figure: was each saved storage counted twice?"
        if element_size:  # or each element at twice its dtype's size (float32's 4 B where autocast saved 2)
            said = (
                f"is exactly 2x the expected figure: was each element counted at {2 * element_size} B, where the "
                f"dtype has {element_size}, or each saved storage counted twice?"
            )
            hidden = (
                "is exactly 2x the expected figure: was each element counted at twice its dtype's size, or each "
                "saved storage counted twice?"
            )
            return f"{name} {said}", hidden, "double", ""
        return f"{name} {said}", said, "double", ""
    if reading.whole == "bits":
        said = "is 8x the expected figure: bits, not bytes?"
        return f"{name} {said}", said, "multiple", ""
    if reading.whole == "graphs":
        message = (
            f"{name} is exactly {k}x the expected figure: {k} graphs (iterations, micro-batches) counted, where fewer "
            f"are alive at that moment? {_GRAPH_GOES}"
        )
        reason = (
            "is a whole multiple of the expected figure: several graphs (iterations, micro-batches) counted, where "
            f"fewer are alive at that moment? {_GRAPH_GOES}"
        )
        return message, reason, "multiple", ""
    if reading.whole == "steps":
        why = (
            "Is a graph counted that backward() already freed, or that nothing references any more?"
            if diff > 0
            else "Which graph is still alive at that moment (retain_graph=True, or a loss still referenced)?"
        )
        message = f"{name} is {size} B {side}: exactly the size of {_graphs(k, False)}. {why}"
        reason = f"is {side} by exactly the size of a whole number of steps' graphs. {why}"
        return message, reason, "steps", cause_key("bytes.steps", side)
    if reading.whole == "elements":
        here = "here" if element_size else "here?"
        message = (
            f"{name} is 1/{k} of the expected figure: elements rather than bytes? Multiply by element_size() "
            f"({k} B {here})."
        )
        reason = "is a whole fraction of the expected figure: elements rather than bytes? Multiply by element_size()."
        return message, reason, "fraction", ""
    message = (
        f"{name} is {size} B too low: exactly what {k} B per element gives, where this dtype has {element_size} B "
        f"per element: {_FROM_DTYPE}"
    )
    reason = (
        "is too low by a whole fraction: each element counted at fewer bytes than its dtype has "
        f"({_ASSUMED.get(k, '')}): {_FROM_DTYPE}"
    )
    return (
        message,
        reason,
        "element_size",
        cause_key("bytes.element_size", "fewer bytes per element than the dtype has"),
    )


# what a figure counted at k B per element, where the dtype has more, is said to have taken (no hidden dtype named)
_ASSUMED = {4: "4 B per element where float64 has 8?", 2: "2 B per element, a 16-bit dtype's, where this one has more?"}


def _ambiguous(readings, name, size, side, facts, element_size) -> tuple[str, str]:
    """The message and reason of a figure that more than one reading fits: the readings, smallest first, each a
    possibility, and the question that decides."""
    shown = readings[:_LISTED]
    more = len(readings) - len(shown)
    tail = f" (and {more} more)" if more else ""
    ask = " Which of them is in your count? Work the figure out tensor by tensor."
    listed = "; or ".join(_words(r, facts, element_size) for r in shown)
    hidden = "; or ".join(_words(r, facts, element_size, hidden=True) for r in shown)
    lead = f"is {side}, by a figure that more than one reading of your count gives exactly (possibilities):"
    return (
        f"{name} is {size} B {side}, by a figure that more than one reading of your count gives exactly "
        f"(possibilities): {listed}{tail}.{ask}",
        f"{lead} {hidden}{tail}.{ask}",
    )


def diagnose_bytes(
    received,
    expected: int,
    name: str = "saved bytes",
    parts: dict[str, int] | None = None,
    unsaved: dict[str, int] | None = None,
    step: int | None = None,
    extra: dict[str, int] | None = None,
    element_size: int | None = None,
    element_sizes: dict[str, int] | None = None,
    views: dict[str, int] | None = None,
    probes: list[dict] | None = None,
    saved: bool | None = None,
    saved_by: dict[str, int] | None = None,
) -> Diagnosis:
    """Compare a memory figure (``int`` bytes) with the reference, exactly, and name what the difference is made
    of where one reading of it fits (NOTE in ``autograder.compare.byte_terms``).

    Args:
        received: the learner's figure.
        expected: the reference figure, in bytes.
        parts: bytes of each storage the reference counts, by name (``{"x": 128, "the ReLU output": 96}``).
        unsaved: bytes of tensors the computation makes but no Node saves, by name; ``{}`` where it makes none.
            Where none of ``unsaved``, ``views`` and ``saved_by`` is given, an excess whose one reading is a part
            counted twice is ambiguous: a tensor of that size outside the figure fits as well.
        step: bytes of one step's graph, when the figure is about a loop.
        extra: bytes that a known wrong run adds (or, negative, leaves out), named by what does it (measured).
        element_size: bytes per element of the dtype the figure counts, when it has one dtype: every part's
            element size unless ``element_sizes`` names the part's own.
        element_sizes: bytes per element of each part, by name, where the parts have several dtypes.
        views: bytes of views whose storage the figure already counts (a transposed weight), by name.
        probes: the same figure at other inputs, to tell readings apart: ``[{"received": int, "expected": int,
            "parts": ..., "unsaved": ..., "extra": ..., "views": ..., "element_sizes": ...}]`` (names as here).
        saved: whether the parts are tensors saved for backward (False: ``.grad``, a result, what is alive). None
            (the default): saved only where the check said what no Node saves (``unsaved``) or which Nodes save
            each part (``saved_by``); a figure of ``.grad`` bytes or of a result is never said to be saved by a
            Node, so its missing part is never asked "which Node saves it?".
        saved_by: how many Nodes save each part, by name, where known: a part one Node saves is an unlikely one to
            be counted twice (its reading is one step more complex).

    Returns:
        A :class:`Diagnosis` (``kind``: ok, type, double, missing, unsaved, dtype, view, extra, steps,
        element_size, multiple, fraction, ambiguous, mismatch); never raises.
    """
    if isinstance(received, bool) or not isinstance(received, int):
        hint = " (use .item() or int(...))" if hasattr(received, "item") else ""
        said = f"should be an int number of bytes, got {type(received).__name__}{hint}."
        return Diagnosis(False, "type", f"{name} {said}", reason=said)
    if received == expected:
        return Diagnosis(True, "ok", f"{name} is correct.", 0.0)
    rel = abs(received - expected) / expected if expected else float(abs(received))
    diff = received - expected
    size, side = abs(diff), "too high" if diff > 0 else "too low"
    facts = _facts(parts, unsaved, views, extra, element_sizes, element_size, saved_by)
    if saved is None:  # a Node is named only where the check told what Nodes save
        saved = bool(facts.unsaved or facts.saved_by)
    tried = []
    for probe in probes or ():
        if (
            isinstance(probe, dict)
            and isinstance(probe.get("received"), int)
            and isinstance(probe.get("expected"), int)
        ):
            there = _facts(
                *(probe.get(k) for k in ("parts", "unsaved", "views", "extra", "element_sizes")), element_size
            )
            tried.append((probe["received"] - probe["expected"], there))
    readings = _readings(received, expected, diff, facts, step, element_size, tried)
    listed = any(table is not None for table in (unsaved, views, saved_by))  # the check told what lies outside
    if not listed and _unlisted_could_fit(readings, diff):
        readings = [*readings, _Reading(whole="other", k=diff, complexity=readings[0].complexity)]
    given = tuple(dict.fromkeys(t.name for r in readings[:_LISTED] for t in r.terms))
    if len(readings) == 1:
        message, reason, kind, cause = _named(readings[0], name, size, side, diff, facts, element_size, saved)
        factor = float(abs(readings[0].k)) if readings[0].whole else None
        return Diagnosis(False, kind, message, rel, factor, cause=cause, reason=reason, given=given)
    if readings:
        message, reason = _ambiguous(readings, name, size, side, facts, element_size)
        # its identity: which way, and the readings it lists (each a possibility): two slips that read alike are
        # two causes of the class report, never one
        first = " + ".join(t.name for t in readings[0].terms) or readings[0].whole
        cause = f"{cause_key('bytes.ambiguous', side)}.{cause_key('or', first).removeprefix('or.')}"
        return Diagnosis(False, "ambiguous", message, rel, cause=cause, reason=reason, given=given)
    return Diagnosis(
        False,
        "mismatch",
        f"{name} differs from the expected figure by {diff:+d} B.",
        rel,
        reason=f"is {side}, by no known part or whole multiple.",
    )


def _unlisted_could_fit(readings: list[_Reading], diff: int) -> bool:
    """Whether the one reading of an excess is a part counted twice, in a figure whose check did not say what lies
    outside it (none of ``unsaved``, ``views``, ``saved_by`` given, not even empty): a tensor of the same size that
    no Node saves, or that is not alive then, fits as well, so the part is not named (a size alone names no part)."""
    lone = len(readings) == 1 and readings[0].terms and all(t.kind == "twice" for t in readings[0].terms)
    return bool(lone and diff > 0)


def _facts(parts, unsaved, views, extra, element_sizes, element_size, saved_by=None) -> Facts:
    """The run's facts, as plain dicts of ``{str: int}`` (anything else in a record is left out)."""

    def clean(table) -> dict[str, int]:
        if not isinstance(table, dict):
            return {}
        return {str(k): v for k, v in table.items() if isinstance(v, int) and not isinstance(v, bool)}

    parts = clean(parts)
    sizes = dict.fromkeys(parts, element_size) if element_size else {}
    own = {k: v for k, v in clean(element_sizes).items() if v > 0}
    sizes.update(own)
    mixed = len(set(own.values())) > 1
    return Facts(parts, clean(unsaved), clean(views), clean(extra), sizes, mixed=mixed, saved_by=clean(saved_by))
