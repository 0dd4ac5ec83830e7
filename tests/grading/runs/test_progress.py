"""Does a class run's progress show the solution runs as their own phase, and is the grading
estimate sensible from the first notebook (a thread's sandbox start not counted as a notebook's
time, the notebooks shared among the threads)?"""

import time

from autograder.grading.runs import batch
from autograder.grading.runs.progress import GradingBar, about

from ..classes import SMALL_CLASS, write_class
from ..conftest import needs_sandbox


def test_the_estimate_after_one_notebook_is_the_notebooks_left_shared_among_threads():
    """After one notebook of 0.05 s whose thread first spent 0.3 s starting its sandbox, is the
    estimate for 99 left with 2 threads about 99 x 0.05 s / 2, not 99 x 0.35 s?"""
    bar = GradingBar(100, workers=2, enabled=False)
    assert bar.estimate() is None
    bar.timed(lambda: time.sleep(0.05), before=lambda: time.sleep(0.3))()
    bar.advance()
    assert 99 * 0.05 / 2 <= bar.estimate() < 99 * 0.15 / 2


def test_the_estimate_counts_the_few_slow_notebooks():
    """With nine quick notebooks (0.01 s) and one stopped at a time limit (0.5 s) so far, is the
    estimate for 90 left (one thread) about 90 x their mean (0.059 s), not 90 x the median (0.01 s)?"""
    bar = GradingBar(100, workers=1, enabled=False)
    for seconds in [0.01] * 9 + [0.5]:
        bar.timed(lambda s=seconds: time.sleep(s))()
        bar.advance()
    assert 90 * 0.05 <= bar.estimate() < 90 * 0.09


def test_each_assignment_is_estimated_from_its_own_notebooks_else_from_its_solution():
    """A class ordered by assignment: after 10 quick ex01 notebooks (0.01 s), with 10 ex01 and 20
    ex13 left whose solution took 0.3 s, is the estimate (one thread) 10 x 0.01 + 20 x 0.3 s, not
    30 x 0.01 s (what the quick first assignment alone would say)?"""
    bar = GradingBar(40, workers=1, enabled=False, kinds={"ex01": 20, "ex13": 20}, seeds={"ex01": 0.2, "ex13": 0.3})
    assert bar.estimate() == 20 * 0.2 + 20 * 0.3  # before the first notebook: the solutions' times
    for _ in range(10):
        bar.timed(lambda submission: time.sleep(0.01), kind=lambda submission: submission)("ex01")
        bar.advance("ex01")
    assert 10 * 0.01 + 20 * 0.3 <= bar.estimate() < 10 * 0.05 + 20 * 0.3


def test_an_assignment_without_a_seed_is_estimated_from_every_notebook_so_far():
    """Saved references (no solution ran): is an assignment not yet graded estimated from the
    mean of the notebooks graded so far, and is nothing estimated before the first?"""
    bar = GradingBar(4, workers=2, enabled=False, kinds={"ex01": 2, "ex02": 2})
    assert bar.estimate() is None
    bar.timed(lambda submission: time.sleep(0.05), kind=lambda submission: submission)("ex01")
    bar.advance("ex01")
    assert 3 * 0.05 / 2 <= bar.estimate() < 3 * 0.15 / 2


def test_the_first_estimate_is_shown_at_once(capsys):
    """A small class can end before tqdm's next refresh: is the first estimate printed with the
    first notebook, and no estimate left on the finished bar?"""
    bar = GradingBar(3, workers=1, enabled=True)
    bar.timed(lambda: None)()
    bar.advance()
    assert "1/3" in capsys.readouterr().err.split("\r")[-1] and " left]" in bar.bar.__str__()
    for _ in range(2):
        bar.timed(lambda: None)()
        bar.advance()
    bar.close()
    assert capsys.readouterr().err.rstrip().endswith("3/3 [00:00]")


def test_an_estimate_reads_in_seconds_minutes_or_hours():
    assert [about(s) for s in (0.2, 42, 61, 3600 + 300)] == [
        "about 1 s left",
        "about 42 s left",
        "about 2 min left",
        "about 1 h 5 min left",
    ]


@needs_sandbox
def test_a_class_run_shows_the_solutions_then_the_notebooks_with_an_estimate(source, tmp_path, capsys):
    """Does the run's progress first count the solutions (2 assignments), then the 6 notebooks
    with an estimate of the time left?"""
    solutions, submitted = write_class(source, tmp_path, SMALL_CLASS)
    batch.grade_class(submitted, tmp_path / "out", solutions, jobs=2)
    said = capsys.readouterr().err
    assert "solutions: 2/2 assignments" in said
    assert "grading: " in said and "6/6" in said and " left]" in said
    assert said.index("solutions: 2/2") < said.index("grading: ")
