"""A cause is a hypothesis the grader tests: each cause a check may name carries the evidence that must hold on
the learner's own run before the feedback names it (COURSE.md §4, "No cause without evidence").

A check observes what the learner's run did and reports it as *facts*: plain data, ``{fact: (what was seen,
...)}``, carried with the received value (``facts=`` of ``check.tensor``, ``check.grads``, ``check.value``;
``autograder.check.observe`` gathers the common ones). A cause is ``cause(text, evidence)``: its text, and
the name of a test in :data:`EVIDENCE`, the table below. Weighed against the facts, each test says:

- ``True``: the run shows the mechanism: the cause is named, as the cause;
- ``None``: the run was not observed on that point: the cause is a candidate, listed after the symptom as
  something to check ("possible causes, to check: ..."), never as a verdict;
- ``False``: the run contradicts it (the learner's forward ran under autocast; .grad was scaled, not reset):
  it is never stated.

A value that equals what a typical mistake gives is one line of evidence (the factor, the count); where that
number fits other mechanisms as well, the cause also names its mechanism's test here, so that a learner whose
run shows another mechanism is told the symptom, not a story that is not theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["EVIDENCE", "cause", "is_cause", "weigh", "said", "texts_of", "facts_of"]

# Fact names (a check's observer writes them; a test below reads them). Each fact's value is a tuple of
# what was seen, once per occurrence in the run (one entry per forward, per checkpoint call, ...).
GRAD_MODE = "grad mode at the forward"  # True: grad mode on; False: no_grad/inference_mode
AUTOCAST = "autocast at the forward"  # True: an autocast region was active
TRAINING = "module mode at the forward"  # "train" / "eval" (any module of the model)
RNG = "preserve_rng_state of the checkpoints"  # True / False, one per checkpoint call
GRAD_BETWEEN = ".grad between backward passes"  # "kept", "set to None", "zeroed", "scaled", "changed"
ALL_REDUCED = "tensors all-reduced"  # "a .grad", "a tensor autograd recorded", "another tensor"
RESEEDS = "torch.manual_seed calls"  # how many times the run reseeded the RNG (one entry: the count)
BACKWARDS = "backward() calls"  # how many times backward() ran (one entry: the count)
NON_FINITE = "non-finite values received"  # True / False: NaN or inf in what the check received (the judge adds it)


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
    "rng reseeded": _at_least(RESEEDS, 1),
}


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
    """Whether ``entry`` is a :func:`cause` (a cause with its evidence) rather than a plain text."""
    return isinstance(entry, Mapping) and isinstance(entry.get("cause"), str) and entry.get("evidence") in EVIDENCE


def facts_of(value) -> dict:
    """``value`` as facts, if it is a ``{str: tuple}`` mapping (what crossed from a learner's process is data:
    anything else is no fact); else ``{}``."""
    if not isinstance(value, Mapping):
        return {}
    return {k: tuple(v) for k, v in value.items() if isinstance(k, str) and isinstance(v, (tuple, list))}


def _test(entry, facts: Mapping) -> bool | None:
    """A candidate's verdict on the facts: a plain text (no test of its own) is None: a candidate only."""
    return EVIDENCE[entry["evidence"]](facts) if is_cause(entry) else None


def weigh(candidates, facts: Mapping) -> tuple[list[str], list[str]]:
    """``(named, possible)``: the texts of the candidates (:func:`cause` or plain texts) whose evidence holds on
    the facts, and of those the facts neither show nor contradict; contradicted ones are in neither."""
    named, possible = [], []
    for entry in candidates:
        verdict = _test(entry, facts)
        text = entry["cause"] if is_cause(entry) else str(entry)
        if verdict is True:
            named.append(text)
        elif verdict is None and text not in possible:
            possible.append(text)
    return named, possible


def texts_of(entry) -> list[str]:
    """The texts a question's cause entry holds (a text, a :func:`cause`, or a list of them)."""
    entries = entry if isinstance(entry, list) else [entry]
    return [e["cause"] if is_cause(e) else str(e) for e in entries]


def said(entry, facts: Mapping | None) -> tuple[str, bool]:
    """What a check says for a question's cause ``entry`` (a text, a :func:`cause`, or a list of them), weighed on
    the learner's run: ``(text, named)``. A plain text is stated: the difference that selected it (the factor, the
    count that mistake gives) is its evidence, or it states the symptom. A cause with a test is stated when its
    evidence holds; when none holds, those the run was not observed on are listed as things to check ("Possible
    cause, to check: ..."); one the run contradicts is left out. ``named``: whether something was stated as a cause
    or symptom (not only listed); ``("", False)`` when nothing is left to say."""
    entries = entry if isinstance(entry, list) else [entry]
    named, possible = weigh([e for e in entries if is_cause(e)], facts or {})
    plain = [str(e) for e in entries if not is_cause(e) and e]
    if named or not possible:
        return " ".join(plain + named), bool(plain or named)
    many = len(possible) > 1
    listed = f"Possible cause{'s' if many else ''}, to check: " + " Or: ".join(possible)
    return " ".join([*plain, listed]), False
