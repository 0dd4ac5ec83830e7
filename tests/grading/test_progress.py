"""Does a class run's progress show the solution runs as their own phase, and is the grading
estimate sensible from the first notebook (a thread's sandbox start not counted as a notebook's
time, the notebooks shared among the threads)?"""

import time

from autograder.grading import batch
from autograder.grading.progress import GradingBar, about

from .classes import SMALL_CLASS, write_class
from .conftest import needs_sandbox


def test_the_estimate_after_one_notebook_is_the_notebooks_left_shared_among_threads():
    """After one notebook of 0.05 s whose thread first spent 0.3 s starting its sandbox, is the
    estimate for 99 left with 2 threads 50 rounds of about 0.05 s, not 99 x 0.35 s?"""
    bar = GradingBar(100, workers=2, enabled=False)
    assert bar.estimate() is None
    bar.timed(lambda: time.sleep(0.05), before=lambda: time.sleep(0.3))()
    bar.advance()
    assert 50 * 0.05 <= bar.estimate() < 50 * 0.15


def test_the_estimate_counts_the_few_slow_notebooks():
    """With nine quick notebooks (0.01 s) and one stopped at a time limit (0.5 s) so far, is the
    estimate for 90 left (one thread) about 90 x their mean (0.059 s), not 90 x the median (0.01 s)?"""
    bar = GradingBar(100, workers=1, enabled=False)
    for seconds in [0.01] * 9 + [0.5]:
        bar.timed(lambda s=seconds: time.sleep(s))()
        bar.advance()
    assert 90 * 0.05 <= bar.estimate() < 90 * 0.09


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
