"""Does the grader fail exactly the right questions of answers that show a typical mistake's symptom through
another mechanism, and never name a cause that is not the learner's (issue 39)?"""

import pytest

from tests.grading import inprocess
from tests.grading.corpus_evidence import WRONG


@pytest.mark.parametrize("exercise,student", [(e, s) for e, cases in WRONG.items() for s in cases])
def test_wrong_answer_is_told_its_own_cause_and_no_other(exercise, student):
    """Does this answer fail exactly its questions, each message holding its words and no cause not its own?"""
    case = WRONG[exercise][student]
    result = inprocess.grade(inprocess.source(exercise), inprocess.solution_run(exercise), case["answers"])
    assert {gid for gid, message in result.items() if message} == set(case["fails"]), result
    for gid, phrase in case["fails"].items():
        assert phrase in result[gid], (case["cause"], result[gid])
        assert not [words for words in case["never"] if words in result[gid]], (case["cause"], result[gid])


def test_corpus_is_neither_the_typical_mistakes_nor_another_corpus():
    """Is no answer here a shipped typical mistake or an entry of the other corpora?"""
    from autograder.grading.mistakes import MISTAKES
    from tests.grading.corpus import WRONG as OTHERS

    listed = {source for cases in MISTAKES.values() for case in cases.values() for source in case["answers"].values()}
    listed |= {s for cases in OTHERS.values() for case in cases.values() for s in case["answers"].values()}
    assert not [
        s for cases in WRONG.values() for case in cases.values() for s in case["answers"].values() if s in listed
    ]
