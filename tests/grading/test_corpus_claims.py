"""Is each cause the feedback states true of the answer in front of it? For each detector whose text states a
cause, the answer that makes the text false (``corpus_claims``) must fail exactly its questions, with its own
cause, and never the false one: in-process for every counterexample, and through ``python -m autograder grade``
(the class grader, its sandbox and its gradebook) for the answers the issue found graded or told wrong."""

import re

import pytest

from tests.grading import inprocess, through_grade
from tests.grading.conftest import needs_sandbox
from tests.grading.corpus_claims import WRONG


@pytest.mark.parametrize("exercise,student", [(e, s) for e, cases in WRONG.items() for s in cases])
def test_a_counterexample_is_told_its_own_cause_and_not_the_false_one(exercise, student):
    """Does this answer fail exactly its questions, each message holding its own cause and not the false one?"""
    case = WRONG[exercise][student]
    result = inprocess.grade(inprocess.source(exercise), inprocess.solution_run(exercise), case["answers"])
    assert {gid for gid, message in result.items() if message} == set(case["fails"]), result
    for gid, phrase in case["fails"].items():
        assert phrase in result[gid], (case["cause"], result[gid])
        assert not [words for words in case["never"] if words in result[gid]], (case["cause"], result[gid])


# graded through the real entry point: the penalty's side effect (it got 13/13), the aliases of .grad zeroed
# in place (told "the graph was cut"), and float16 autocast (told to call unscale_ before clipping): the facts of
# the learner's run cross the sandbox with its records, and the causes are weighed on them there
THROUGH_GRADE = [
    ("ex12_higher_order", "c51-12-penalty-fills-grad"),
    ("ex03_backward", "c51-03-aliases-zeroed-in-place"),
    ("ex11_mixed_precision", "c51-11-float16-autocast"),
]


@needs_sandbox
def test_the_class_grader_takes_the_points_and_tells_the_cause(tmp_path):
    """Through ``python -m autograder grade`` (every other answer the solution's): does the penalty that fills .grad
    lose question 2's points (it got them all) and no other, and the dict of .grad aliases zeroed in place get its
    own cause, not a cut graph, in the gradebook?"""
    found = through_grade.graded(tmp_path, {(e, s): WRONG[e][s]["answers"] for e, s in THROUGH_GRADE})
    for exercise, student in THROUGH_GRADE:
        case, (scores, comments) = WRONG[exercise][student], found[exercise, student]
        for gid, phrase in case["fails"].items():
            assert scores[gid][0] == 0 < scores[gid][1], (student, scores)
            assert phrase in comments[gid] and not [w for w in case["never"] if w in comments[gid]], comments[gid]
        assert all(s == m for name, (s, m) in scores.items() if name not in case["fails"]), (student, scores)


def _claims(entry) -> list:
    """The claims with a test of their own (``compare.evidence``) in a check's hint or causes, at any depth."""
    from collections.abc import Mapping

    from autograder.compare import evidence

    if evidence.is_cause(entry):
        return [entry]
    if isinstance(entry, Mapping):
        return [c for value in entry.values() for c in _claims(value)]
    return [c for value in entry for c in _claims(value)] if isinstance(entry, (list, tuple)) else []


# facts the judge adds itself, from the received value (not in a check's record)
_JUDGES_OWN = {"non-finite values"}


@pytest.mark.parametrize("exercise", inprocess.EXERCISES)
def test_every_cause_a_check_carries_is_decided_by_the_run(exercise):
    """On the solution's own runs (visible and hidden), is each cause any check of the exercise may state decided by
    what that check observed (holds or contradicted on at least one run), so that no cause is one its check never
    tests (it could only ever be listed as a possibility, never stated or ruled out)?"""
    from autograder.compare import evidence

    undecided, decided = {}, set()
    for records in inprocess.solution_run(exercise).records.values():
        for record in records:
            options, received = record.options, record.received
            facts = evidence.facts_of(received[0]) if options.get("facts") and isinstance(received, tuple) else {}
            for claim in _claims([options.get("hint"), options.get("causes"), options.get("causes_by")]):
                if claim.get("evidence") in _JUDGES_OWN:
                    continue
                if evidence.verdict_of(claim, facts) is evidence.Verdict.NOT_OBSERVED:
                    undecided[claim["cause"]] = record.name
                else:
                    decided.add(claim["cause"])
    assert not {text: name for text, name in undecided.items() if text not in decided}


def _plain_texts(entry) -> list[str]:
    """The plain texts (no test of their own, not an observation or a question) of a hint, at any depth."""
    from collections.abc import Mapping

    from autograder.compare import evidence

    if isinstance(entry, str):
        return [entry] if entry else []
    if evidence.is_cause(entry) or (isinstance(entry, Mapping) and ({"observed", "asked"} & set(entry))):
        return []
    if isinstance(entry, Mapping):
        return [t for value in entry.values() for t in _plain_texts(value)]
    return [t for value in entry for t in _plain_texts(value)] if isinstance(entry, (list, tuple)) else []


# a check that counts the NaN or inf entries of what the learner's code made (its name says so)
_COUNTS_NON_FINITE = re.compile(r"\b(?:number|count) of (?:NaN|inf|non-finite)|\b(?:NaN|inf) entries", re.I)


@pytest.mark.parametrize("exercise", inprocess.EXERCISES)
def test_a_nan_or_inf_is_never_given_a_cause_from_the_symptom_alone(exercise):
    """On the solution's runs, does every check of a count of NaN or inf entries (a symptom many mechanisms give)
    carry its hint only as observations, causes with a test, and questions, so that the cause it states is one
    the learner's run showed (a NaN gradient was blamed on torch.where's masking in an answer with no where)?"""
    plain = {
        record.name: texts
        for records in inprocess.solution_run(exercise).records.values()
        for record in records
        if _COUNTS_NON_FINITE.search(record.name)
        for texts in [_plain_texts(record.options.get("hint"))]
        if texts
    }
    assert not plain
