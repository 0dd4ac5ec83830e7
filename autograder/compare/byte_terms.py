"""What a byte count's difference from the reference could be made of: every decomposition of it into the run's
own facts, so that a part is named only where one decomposition fits (``diagnose_bytes``).

NOTE [ decompositions of a byte difference ]
A learner's figure differs from the reference by ``diff`` bytes. Each *term* is one thing a count can do to one
tensor the check knows of, with the bytes it adds (negative: takes away):

1. a saved storage left out (``-b``) or counted twice (``+b``: saved by several Nodes, or through views, it is
   kept, and counted, once);
2. a saved storage counted at another element size (``b / e * (e' - e)`` for its ``e`` B per element: float32
   where autocast saved bfloat16, float64 where the model is float32);
3. a tensor the computation makes that no Node saves, counted (``+b``);
4. a view whose storage is already counted, counted as a storage of its own (``+b``);
5. what a known wrong run adds or leaves out, measured by the check (``extra``, signed).

A decomposition is a set of at most three terms, at most one per tensor, whose bytes add up to ``diff``; where
the check also ran the learner's figure at other sizes (``probes``: the same function, other inputs), the same
terms must add up to the difference there too, which rules out most coincidences of size. Decompositions are
compared by their complexity, their number of terms, plus one where they mix terms that add and terms that take
away (a part left out and another counted twice is two slips the other way round), plus two for a part counted
twice that one Node alone saves, where the check says how many save each (a count per Node counts twice what two
Nodes save, not what one does): those no more than one above the least complex are the readings of the figure (a
one-term coincidence does not beat a two-term truth it cannot tell apart from).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Term", "Facts", "complexity", "decompositions"]

# element sizes a part may have been counted at: the float dtypes' (1 B: no float dtype a lesson uses)
_SIZES = (2, 4, 8)
_MOST_TERMS = 3
# the search's bound: a question's parts, tensors nobody saves and known runs stay far below it
_MOST_CANDIDATES = 80


@dataclass(frozen=True)
class Term:
    """One thing a count did to one tensor: ``kind`` (missing, twice, dtype, unsaved, view, extra), the tensor's
    ``name``, ``size`` (the element size counted at, for ``dtype``; else 0)."""

    kind: str
    name: str
    size: int = 0


@dataclass(frozen=True)
class Facts:
    """The run's facts about a figure: bytes of each saved storage (``parts``), of tensors no Node saves
    (``unsaved``), of views of counted storages (``views``), of known wrong runs (``extra``, signed), the element
    size of each part where known (``element_sizes``)."""

    parts: Mapping[str, int]
    unsaved: Mapping[str, int]
    views: Mapping[str, int]
    extra: Mapping[str, int]
    element_sizes: Mapping[str, int]
    mixed: bool = False  # the parts have several dtypes (each part's element size given): another size is a slip
    saved_by: Mapping[str, int] = dataclasses.field(default_factory=dict)  # Nodes that save each part, where known

    def terms(self, diff: int) -> list[Term]:
        """The terms of this run, those that move the figure the way ``diff`` goes first (a search bound)."""
        found = [Term("extra", n) for n, s in self.extra.items() if s]
        for name, b in self.parts.items():
            if b <= 0:
                continue
            found += [Term("missing", name), Term("twice", name)]
            own = self.element_sizes.get(name)
            # in a figure of one dtype, one part counted at another size is no slip anyone makes (the whole figure
            # at another size is: diagnose_bytes reads it); at twice its size a part adds what counting it twice
            # adds: one term, "twice"
            if own and self.mixed and b % own == 0:
                found += [Term("dtype", name, e) for e in _SIZES if e not in (own, 2 * own)]
        found += [Term("unsaved", n) for n, b in self.unsaved.items() if b > 0]
        found += [Term("view", n) for n, b in self.views.items() if b > 0]
        found.sort(key=lambda t: (self.bytes(t) * diff < 0, abs(self.bytes(t) or 0)))
        return found[:_MOST_CANDIDATES]

    def bytes(self, term: Term) -> int | None:
        """What ``term`` adds to a figure of this run (None: this run has no such tensor)."""
        table = {"missing": self.parts, "twice": self.parts, "dtype": self.parts, "unsaved": self.unsaved}
        table.update(view=self.views, extra=self.extra)
        b = table[term.kind].get(term.name)
        if b is None:
            return None
        if term.kind == "missing":
            return -b
        if term.kind == "dtype":
            own = self.element_sizes.get(term.name)
            return None if not own else b // own * (term.size - own)
        return b


def _fits(combo: tuple[Term, ...], diff: int, facts: Facts, probes: list[tuple[int, Facts]]) -> bool:
    if sum(facts.bytes(t) or 0 for t in combo) != diff:
        return False
    for probe_diff, probe in probes:
        sizes = [probe.bytes(t) for t in combo]
        if all(s is not None for s in sizes) and sum(sizes) != probe_diff:
            return False
    return True


def complexity(combo: tuple[Term, ...], facts: Facts) -> int:
    """A decomposition's number of terms, plus one where its terms move the figure both ways, plus two for each
    part counted twice that the check knows one Node alone saves (NOTE above: a storage two Nodes save is the one
    a count per Node counts twice; a lone one counted twice is a slip no simpler reading needs)."""
    signs = {(facts.bytes(t) or 0) > 0 for t in combo}
    lone = sum(t.kind == "twice" and facts.saved_by.get(t.name) == 1 for t in combo)
    return len(combo) + (len(signs) > 1) + 2 * lone


def decompositions(diff: int, facts: Facts, probes: list[tuple[int, Facts]] = ()) -> list[tuple[Term, ...]]:
    """The readings of a difference of ``diff`` bytes (NOTE above): decompositions of at most three terms, at most
    one per tensor, that fit here and at every probe (``(difference there, facts there)``), of no more than one
    term above the fewest found; the fewest first, then those made of the smallest tensors."""
    if diff == 0:
        return []
    terms = facts.terms(diff)
    found: list[tuple[Term, ...]] = []
    for length in range(1, _MOST_TERMS + 1):
        if found and length > min(complexity(c, facts) for c in found) + 1:
            break
        for combo in itertools.combinations(terms, length):
            if len({t.name for t in combo}) == length and _fits(combo, diff, facts, list(probes)):
                found.append(combo)
    if not found:
        return []
    least = min(complexity(c, facts) for c in found)
    found = [c for c in found if complexity(c, facts) <= least + 1]
    return sorted(found, key=lambda c: (complexity(c, facts), max(abs(facts.bytes(t) or 0) for t in c)))
