"""The demo class's results for some assignments, judged in this process (a test aid).

Each demo student's answers (``autograder.grading.runs.demo``: correct, blank, one per typical mistake)
run with ``inprocess``, and every test cell becomes a ``QuestionResult`` as ``grade_one`` makes it:
the message a check raised in the learner's process, or the grader's verdict on its records, with
the cause key (``autograder.compare.causes``). Much faster than the sandboxed grader on 2 cores.
"""

from __future__ import annotations

import copy

from autograder.compare.causes import NOT_ANSWERED, error_cause
from autograder.grading.judge.assemble import grade_id, is_answer, questions
from autograder.grading.judge.grade_one import QuestionResult, Result
from autograder.grading.judge.stubs import release_answers, unanswered
from autograder.grading.judge.verdict import verdict
from autograder.grading.mistakes import MISTAKES
from autograder.grading.runs.demo import solution_answer

from . import inprocess


def demo_students(exercise: str) -> dict[str, dict]:
    """``{student_id: {"answers": {...}, "fails": {...}}}``: correct, blank and the typical mistakes."""
    source = inprocess.source(exercise)
    tests = [q.grade_id for q in questions(source)]
    return {
        "correct": {"answers": {}, "fails": {}},
        "blank": {"answers": release_answers(source), "fails": dict.fromkeys(tests, "")},
        **MISTAKES.get(exercise, {}),
    }


def demo_results(exercise: str) -> list[Result]:
    """One graded :class:`Result` per demo student of ``exercise``."""
    source = inprocess.source(exercise)
    solution = inprocess.run(source, withheld=False)
    solved = {grade_id(c): solution_answer(c.source) for c in source.cells if is_answer(c)}
    stubs = release_answers(source)
    results = []
    for student, mistake in demo_students(exercise).items():
        answers = {**solved, **mistake["answers"]}
        learner = inprocess.run(source, withheld=True, answers=answers)
        graded = copy.deepcopy(source)
        for cell in graded.cells:
            cell.source = answers.get(grade_id(cell), cell.source) if is_answer(cell) else cell.source
        blank = unanswered(graded, stubs)
        result = Result(student, exercise, "graded", [QuestionResult(q.grade_id, q.points) for q in questions(source)])
        for q in result.questions:
            records, expected = learner.records.get(q.grade_id, []), solution.records[q.grade_id]
            error = learner.errors.get(q.grade_id, "")
            if error.startswith("CheckFailed: "):  # as grade_one: the grader's verdict when it says the same
                judged, error = verdict(records, expected), error.removeprefix("CheckFailed: ")
                q.message = judged if judged == error else error
            else:
                q.message = error or verdict(records, expected)
            q.score = 0.0 if q.message else q.points
            # as grade_one: the verdict's own key, else only error.* from an error's text
            own = getattr(q.message, "cause", "") or error_cause(q.message)
            q.cause = NOT_ANSWERED if q.message and q.grade_id in blank else own
        results.append(result)
    return results
