"""Issue 51's open classes, graded as the class grader judges (``inprocess.grade``: the withheld run's records
against the solution's): does each wrong answer fail exactly its question with its own cause and never the false
one, and does each correct variant get full marks (``tests/grading/corpus_classes.py``)?"""

import pytest

from tests.grading import inprocess, through_grade
from tests.grading.conftest import needs_sandbox
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


# through the real entry point, sandbox and gradebook: the facts (where the NaN was made), the warnings and the
# hidden boundary case cross from the learner's process as they do in class grading
THROUGH_GRADE = [
    ("ex12_higher_order", "k51-12-q5-xlogy-own-nan"),
    ("ex06_grad_modes", "k51-06-q4-gather-unsqueezed"),
    ("ex14_distributed", "k51-14-q2-closes-past-the-cap"),
    ("ex09_functions", "k51-09-q2-mask-at-zero"),
    ("ex10_hooks", "k51-10-q2-handles-not-returned"),
    ("ex14_distributed", "k51-14-q3-hooks-never-removed"),
    ("ex06_grad_modes", "k51-06-q5-grad-mode-left-off"),
]


@needs_sandbox
def test_the_class_grader_grades_them_and_says_what_the_run_shows(tmp_path):
    """Through ``python -m autograder grade``: does each answer lose exactly its question's points, its comment
    holding what its run showed and never the false cause, and does the correct variant get full marks?"""
    wrong = {(e, s): WRONG[e][s]["answers"] for e, s in THROUGH_GRADE}
    right = {(e, s): case["answers"] for e, cases in CORRECT.items() for s, case in cases.items()}
    found = through_grade.graded(tmp_path, {**wrong, **right})
    for exercise, student in THROUGH_GRADE:
        case, (scores, comments) = WRONG[exercise][student], found[exercise, student]
        for gid, phrase in case["fails"].items():
            assert scores[gid][0] == 0 < scores[gid][1], (student, scores)
            assert phrase in comments[gid] and not [w for w in case["never"] if w in comments[gid]], comments[gid]
        assert all(s == m for name, (s, m) in scores.items() if name not in case["fails"]), (student, scores)
    for key in right:
        assert all(s == m for s, m in found[key][0].values()), (key, found[key][0])
