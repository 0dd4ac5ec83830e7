"""Is each cause the feedback states true of the answer in front of it? For each detector whose text states a
cause, the answer that makes the text false (``corpus_claims``) must fail exactly its questions, with its own
cause, and never the false one: in-process for every counterexample, and through ``python -m autograder grade``
(the class grader, its sandbox and its gradebook) for the answers the issue found graded or told wrong."""

import subprocess
import sys

import nbformat
import pytest
from nbgrader.api import Gradebook

from tests.grading import inprocess
from tests.grading.conftest import needs_sandbox
from tests.grading.corpus_claims import WRONG

ROOT = inprocess.ROOT


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
    submitted = tmp_path / "submitted"
    for exercise, student in THROUGH_GRADE:
        notebook = nbformat.read(ROOT / "exercises" / exercise / f"{exercise}.ipynb", as_version=4)
        answers = {**inprocess.solved_answers(exercise), **WRONG[exercise][student]["answers"]}
        for cell in notebook.cells:
            answer = answers.get(cell.metadata.get("nbgrader", {}).get("grade_id"))
            if answer is not None:
                cell.source = answer
        path = submitted / student / exercise / f"{exercise}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(notebook, path)
    out = tmp_path / "graded"
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(submitted), "--out", str(out), "--no-progress"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        for exercise, student in THROUGH_GRADE:
            case = WRONG[exercise][student]
            scores = {
                g.name: (g.score, g.max_score) for g in gb.find_submission_notebook(exercise, exercise, student).grades
            }
            comments = {
                c.name: c.auto_comment or "" for c in gb.find_submission_notebook(exercise, exercise, student).comments
            }
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
