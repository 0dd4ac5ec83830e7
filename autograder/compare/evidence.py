"""A cause is a claim with a test: each sentence that states *why* the learner's answer is wrong is made only
from a :class:`Held`, and a ``Held`` is made only where the claim's test returned :attr:`Verdict.HOLDS` on the
learner's own run (COURSE.md §4, "No cause without evidence").

A check observes what the learner's run did and reports it as *facts*: plain data, ``{fact: (what was seen,
...)}``, carried with the received value (``facts=`` of ``check.tensor``, ``check.grads``, ``check.value``;
``autograder.check.observe`` gathers the common ones). A claim is plain data too, so it travels in a check's
record to the class grader:

- ``cause(text, evidence)``: its text and the name of a test in :data:`EVIDENCE`, the table below;
- ``shown(text, fact, *values)``: its text, holding where the run showed one of ``values`` for ``fact`` (a
  check's own observation: "the gradients of rank 1 are rank 0's");
- a plain text that a check selected because the learner's value is *exactly* what that mistake gives on the
  same inputs (a factor a question names, a received value a hint is keyed by): the match is its test, made
  by the one who matched (:func:`matched`).

Weighed against the facts, each test returns a :class:`Verdict`:

- ``HOLDS``: the run shows the mechanism: the claim is minted as a :class:`Held` and may be stated;
- ``NOT_OBSERVED``: the run was not observed on that point: a candidate, listed after the symptom as something
  to check, and only beside others ("possible causes, to check: A. Or: B"): a single unobserved candidate is
  not said, since a lone guess reads as the cause; the symptom and the deciding question are said instead;
- ``CONTRADICTED``: the run contradicts it: it is never stated.

Message templates take a cause only as a ``Held`` (:func:`because`): a plain string there is a ``TypeError``,
so a template cannot state a cause its evidence did not return ``HOLDS`` for (``tests/compare/test_templates``
walks every template of the package).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence

__all__ = [
    "EVIDENCE",
    "Verdict",
    "Held",
    "cause",
    "shown",
    "observed",
    "asked",
    "is_cause",
    "verdict_of",
    "holding",
    "matched",
    "because",
    "weigh",
    "said",
    "texts_of",
    "facts_of",
]


class Verdict(enum.Enum):
    """What a claim's test says of the learner's run."""

    HOLDS = "holds"
    CONTRADICTED = "contradicted"
    NOT_OBSERVED = "not observed"


_MINT = object()  # only this module's functions hold it: a Held is made by a test that returned HOLDS


class Held:
    """A sentence that states why, whose test returned :attr:`Verdict.HOLDS` on the learner's run: the only
    thing a message template accepts as a cause (:func:`because`). Made by :func:`holding` (a claim weighed on
    the facts) or :func:`matched` (a value equal to what that mistake gives); constructing one otherwise raises
    ``TypeError``. ``text``: the sentence; ``test``: what showed it (an evidence name, or the match)."""

    __slots__ = ("test", "text")

    def __init__(self, text: str, test: str, mint=None):
        if mint is not _MINT:
            raise TypeError("a Held is made only by a test that returned HOLDS (evidence.holding or evidence.matched)")
        self.text, self.test = str(text), str(test)

    def __repr__(self) -> str:
        return f"Held({self.text!r}, test={self.test!r})"


# Fact names (a check's observer writes them; a test below reads them). Each fact's value is a tuple of
# what was seen, once per occurrence in the run (one entry per forward, per checkpoint call, ...).
GRAD_MODE = "grad mode at the forward"  # True: grad mode on; False: no_grad/inference_mode
AUTOCAST = "autocast at the forward"  # True: an autocast region was active
AUTOCAST_DTYPE = "autocast dtype at the forward"  # "torch.bfloat16", "torch.float16": where autocast was active
TRAINING = "module mode at the forward"  # "train" / "eval" (any module of the model)
RNG = "preserve_rng_state of the checkpoints"  # True / False, one per checkpoint call
GRAD_BETWEEN = ".grad between backward passes"  # "kept", "set to None", "zeroed", "scaled", "changed"
ALL_REDUCED = "tensors all-reduced"  # "a .grad", "a tensor autograd recorded", "another tensor"
CHECKPOINTS = "checkpoint calls"  # "no checkpoint ran", "one checkpoint ran", "several checkpoints ran"
# what ran inside a checkpoint at the forward (the model's leaf modules, each at its first call): "no checkpoint
# ran", "modules with parameters outside every checkpoint", "only modules without parameters outside every
# checkpoint", "one checkpoint around every module", "several checkpoints around every module"
CHECKPOINT_COVER = "what the checkpoints covered"
RESEEDS = "torch.manual_seed calls"  # how many times the run reseeded the RNG (one entry: the count)
BACKWARDS = "backward() calls"  # how many times backward() ran (one entry: the count)
ZERO_LOSS = "backward() on a loss of exactly 0"  # True / False, once per kind seen: what each backward() ran on
NON_FINITE = "non-finite values received"  # True / False: NaN or inf in what the check received (the judge adds it)
# where a gradient's first NaN or inf was made (``check.observe.gradient_origin``): the Node whose backward turned
# finite incoming gradients into a NaN or inf ("XlogyBackward0"; "no Node: the gradient is finite"), whether that
# Node lies in a branch under a torch.where (True / False; False also where nothing was made), and which input
# elements' gradients are not finite, in words ("rows of v that are all zeros")
NONFINITE_NODE = "the Node whose backward first made a NaN or inf"
NONFINITE_UNDER_WHERE = "a NaN or inf made in a branch under a torch.where"
NONFINITE_AT = "the inputs whose gradient is NaN or inf"


def _seen(fact: str, *values) -> Callable[[Mapping], bool | None]:
    """The test "the run showed one of ``values`` for ``fact``": None when the fact was not observed."""

    def test(facts: Mapping) -> bool | None:
        seen = facts.get(fact)
        if not isinstance(seen, (tuple, list)):
            return None
        return any(v in seen for v in values)

    return test


def _at_least(fact: str, least: int) -> Callable[[Mapping], bool | None]:
    """The test "the run counted ``fact`` at least ``least`` times": None when it was not counted."""

    def test(facts: Mapping) -> bool | None:
        seen = facts.get(fact)
        if not isinstance(seen, (tuple, list)) or not seen or not isinstance(seen[-1], int):
            return None
        return seen[-1] >= least

    return test


def _only(fact: str, value) -> Callable[[Mapping], bool | None]:
    """The test "every occurrence of ``fact`` in the run was ``value``": None when the fact was not observed."""

    def test(facts: Mapping) -> bool | None:
        seen = facts.get(fact)
        if not isinstance(seen, (tuple, list)) or not seen:
            return None
        return all(v == value for v in seen)

    return test


# cause's mechanism -> its test on the learner's run. Names are what a cause's `evidence` refers to.
EVIDENCE: dict[str, Callable[[Mapping], bool | None]] = {
    "forward outside autocast": _seen(AUTOCAST, False),
    "forward with grad mode off": _seen(GRAD_MODE, False),
    "forward in eval mode": _seen(TRAINING, "eval"),
    "rng state not preserved": _seen(RNG, False),
    ".grad reset between backward passes": _seen(GRAD_BETWEEN, "set to None", "zeroed"),
    ".grad scaled between backward passes": _seen(GRAD_BETWEEN, "scaled"),
    ".grad changed between backward passes": _seen(GRAD_BETWEEN, "set to None", "zeroed", "scaled", "changed"),
    "gradients all-reduced": _seen(ALL_REDUCED, "a .grad"),
    "all_reduce on a tensor autograd recorded": _seen(ALL_REDUCED, "a tensor autograd recorded"),
    "non-finite values": _seen(NON_FINITE, True),
    "backward ran twice": _at_least(BACKWARDS, 2),
    "every backward on a zero loss": _only(ZERO_LOSS, True),
    "rng reseeded": _at_least(RESEEDS, 1),
}


def shown(text: str, fact: str, *values) -> dict:
    """A cause that holds where the learner's run showed one of ``values`` for ``fact`` (a fact the check itself
    observed and passes in ``facts=``): plain data, like :func:`cause`. Contradicted where the fact was observed
    with none of them; not observed where the check did not report it."""
    if not values:
        raise ValueError("shown(text, fact, *values) needs at least one value the fact must show")
    return {"cause": str(text), "fact": str(fact), "seen": list(values)}


def observed(text: str, fact: str) -> dict:
    """What the run showed for ``fact``, said as an observation, never a cause: ``text`` holds ``{}``, where the
    values seen go ("the first NaN was made by the backward of {}"); said only where the fact was observed."""
    return {"observed": str(text), "fact": str(fact)}


def asked(text: str) -> dict:
    """The question that decides between the possible causes: said only where no cause held."""
    return {"asked": str(text)}


def _said_observed(entries, facts: Mapping) -> list[str]:
    """The texts of the :func:`observed` entries whose fact the run showed (values joined by ", ")."""
    said = []
    for entry in entries:
        if isinstance(entry, Mapping) and isinstance(entry.get("observed"), str):
            seen = facts.get(entry.get("fact"))
            if isinstance(seen, (tuple, list)) and seen:
                said.append(entry["observed"].format(", ".join(map(str, seen))))
    return said


def _is_note(entry) -> bool:
    """Whether ``entry`` is an :func:`observed` or :func:`asked` (neither a cause nor a plain text)."""
    return isinstance(entry, Mapping) and ("observed" in entry or "asked" in entry)


def cause(text: str, evidence: str) -> dict:
    """A cause a check may name: its ``text`` and the name of its test in :data:`EVIDENCE` (plain data: it
    travels in a check's record).

    Raises:
        KeyError: ``evidence`` names no test (an author's typo fails where the check is written).
    """
    if evidence not in EVIDENCE:
        raise KeyError(f"no evidence test named {evidence!r}: the tests are {sorted(EVIDENCE)}")
    return {"cause": str(text), "evidence": evidence}


def is_cause(entry) -> bool:
    """Whether ``entry`` is a :func:`cause` or a :func:`shown` (a cause with its test) rather than a plain text."""
    if not (isinstance(entry, Mapping) and isinstance(entry.get("cause"), str)):
        return False
    return entry.get("evidence") in EVIDENCE or (
        isinstance(entry.get("fact"), str) and isinstance(entry.get("seen"), (list, tuple))
    )


def facts_of(value) -> dict:
    """``value`` as facts, if it is a ``{str: tuple}`` mapping (what crossed from a learner's process is data:
    anything else is no fact); else ``{}``."""
    if not isinstance(value, Mapping):
        return {}
    return {k: tuple(v) for k, v in value.items() if isinstance(k, str) and isinstance(v, (tuple, list))}


def verdict_of(entry, facts: Mapping) -> Verdict:
    """A claim's verdict on the facts: a plain text (no test of its own) is NOT_OBSERVED."""
    if not is_cause(entry):
        return Verdict.NOT_OBSERVED
    if "evidence" in entry and entry["evidence"] in EVIDENCE:
        seen = EVIDENCE[entry["evidence"]](facts)
    else:
        seen = _seen(entry["fact"], *entry["seen"])(facts)
    return Verdict.NOT_OBSERVED if seen is None else Verdict.HOLDS if seen else Verdict.CONTRADICTED


def holding(entry, facts: Mapping) -> Held | None:
    """``entry`` (a :func:`cause` or :func:`shown`) as a :class:`Held` where its test holds on ``facts``."""
    if verdict_of(entry, facts) is not Verdict.HOLDS:
        return None
    return Held(entry["cause"], entry.get("evidence") or f"{entry['fact']}: {entry['seen']}", _MINT)


def matched(text: str, how: str) -> Held:
    """A plain text selected because the learner's value is exactly what that mistake gives on the same inputs
    (``how``: "the factor a question names", "the received value a hint is keyed by"): the match is its test.
    Only the comparisons that did the matching call this (``compare.tensors``, ``check.judging``)."""
    return Held(text, how, _MINT)


def because(observed: str, causes: Sequence[Held] = (), question: str = "") -> str:
    """A message: what the run shows (``observed``), then the causes that hold, or, with none, the question that
    decides between the possibilities. A cause that is not a :class:`Held` raises ``TypeError``: a template
    cannot state a cause its evidence did not return HOLDS for."""
    causes = list(causes)
    if any(not isinstance(c, Held) for c in causes):
        raise TypeError("because() states a cause only as a Held (a claim whose test returned HOLDS)")
    if causes:
        return f"{observed}: {' '.join(c.text for c in causes)}"
    return f"{observed}. {question}" if question else f"{observed}."


def weigh(candidates, facts: Mapping) -> tuple[list[Held], list[str]]:
    """``(held, possible)``: the candidates (:func:`cause`/:func:`shown` or plain texts) whose test holds on the
    facts, as :class:`Held`, and the texts of those the facts neither show nor contradict; contradicted ones are
    in neither. A plain text is never held here: its test, a match, is the caller's (:func:`matched`)."""
    named, possible = [], []
    for entry in candidates:
        verdict = verdict_of(entry, facts)
        text = entry["cause"] if is_cause(entry) else str(entry)
        if verdict is Verdict.HOLDS:
            named.append(holding(entry, facts))
        elif verdict is Verdict.NOT_OBSERVED and text not in possible:
            possible.append(text)
    return named, possible


def texts_of(entry) -> list[str]:
    """The texts a question's cause entry holds (a text, a :func:`cause`, or a list of them)."""
    entries = entry if isinstance(entry, list) else [entry]
    return [e["cause"] if is_cause(e) else str(e) for e in entries if not _is_note(e)]


def said(entry, facts: Mapping | None) -> tuple[str, bool]:
    """What a check says for a question's cause ``entry`` (a text, a :func:`cause`/:func:`shown`, or a list of
    them), weighed on the learner's run: ``(text, named)``. A plain text is stated: the difference that selected
    it (the factor, the received value that mistake gives) is its test (:func:`matched`), or, selected by a kind
    of difference ("zeros"), it is the question's rule for that kind, written as a rule or a question, never as a
    claim about the run (``tests/compare/test_templates`` reads every one). A claim with a test is stated when it
    holds; when none holds, those the run was not observed on are listed as things to check ("Possible cause, to
    check: ..."); one the run contradicts is left out. ``named``: whether something was stated as a cause or
    symptom (not only listed); ``("", False)`` when nothing is left to say. :func:`observed` entries are said first,
    where the run showed their fact; :func:`asked` questions only where no cause held."""
    entries = entry if isinstance(entry, list) else [entry]
    notes, entries = [e for e in entries if _is_note(e)], [e for e in entries if not _is_note(e)]
    seen = _said_observed(notes, facts or {})
    held, possible = weigh([e for e in entries if is_cause(e)], facts or {})
    held = [matched(str(e), "the difference that selected it") for e in entries if not is_cause(e) and e] + held
    if held or not possible:
        questions = [] if held else [n["asked"] for n in notes if "asked" in n]
        return " ".join([*seen, *(h.text for h in held), *questions]), bool(held or seen)
    many = len(possible) > 1
    return " ".join([*seen, f"Possible cause{'s' if many else ''}, to check: " + " Or: ".join(possible)]), bool(seen)
