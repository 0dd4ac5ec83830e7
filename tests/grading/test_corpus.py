"""Does the grader fail exactly the right questions of answers nobody listed as typical mistakes, with
feedback that names their actual cause, and give full marks to correct answers written in unusual ways?"""

import pytest

from tests.grading import inprocess
from tests.grading.corpus import CORRECT, WRONG


@pytest.mark.parametrize("exercise,student", [(e, s) for e, cases in WRONG.items() for s in cases])
def test_wrong_answer_loses_its_questions_and_is_told_why(exercise, student):
    """Does this wrong answer fail exactly its questions, each message naming the cause?"""
    case = WRONG[exercise][student]
    result = inprocess.grade(inprocess.source(exercise), inprocess.solution_run(exercise), case["answers"])
    assert {gid for gid, message in result.items() if message} == set(case["fails"]), result
    for gid, phrase in case["fails"].items():
        assert phrase in result[gid], (case["cause"], result[gid])


@pytest.mark.parametrize("exercise,student", [(e, s) for e, cases in CORRECT.items() for s in cases])
def test_unusual_correct_answer_gets_full_marks(exercise, student):
    """Does this correct answer, written in an unusual way, pass every question?"""
    result = inprocess.grade(
        inprocess.source(exercise), inprocess.solution_run(exercise), CORRECT[exercise][student]["answers"]
    )
    assert not any(result.values()), result


def test_corpus_is_not_the_typical_mistakes():
    """Is no corpus answer one of the shipped typical mistakes (the corpus tests what nobody listed)?"""
    from autograder.grading.mistakes import MISTAKES

    listed = {source for cases in MISTAKES.values() for case in cases.values() for source in case["answers"].values()}
    assert not [
        s for cases in WRONG.values() for case in cases.values() for s in case["answers"].values() if s in listed
    ]
