"""Issue 51's open classes, graded as the class grader judges (``inprocess.grade``: the withheld run's records
against the solution's): does each wrong answer fail exactly its question with its own cause and never the false
one, and does each correct variant get full marks (``tests/grading/corpus_classes.py``)?"""

import pytest

from tests.grading import inprocess
from tests.grading.corpus_classes import CORRECT, WRONG


@pytest.mark.parametrize("exercise,student", [(e, s) for e, cases in WRONG.items() for s in cases])
def test_a_wrong_answer_is_graded_wrong_and_told_what_its_run_shows(exercise, student):
    """Does this answer fail exactly its questions, each message holding its own cause and not the false one?"""
    case = WRONG[exercise][student]
    result = inprocess.grade(inprocess.source(exercise), inprocess.solution_run(exercise), case["answers"])
    assert {gid for gid, message in result.items() if message} == set(case["fails"]), result
    for gid, phrase in case["fails"].items():
        assert phrase in result[gid], (case["cause"], result[gid])
        assert not [words for words in case["never"] if words in result[gid]], (case["cause"], result[gid])


@pytest.mark.parametrize("exercise,student", [(e, s) for e, cases in CORRECT.items() for s in cases])
def test_a_correct_variant_gets_full_marks(exercise, student):
    """Does this correct answer, whose numbers differ from the solution's only as its order of operations allows,
    pass every question?"""
    case = CORRECT[exercise][student]
    result = inprocess.grade(inprocess.source(exercise), inprocess.solution_run(exercise), case["answers"])
    assert not any(result.values()), (case["why"], result)
