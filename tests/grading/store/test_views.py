"""How is a late submission said beside its score (grade's table, grades.csv, the exports, the
report, the feedback page): how late, in words a person reads, and what it cost?"""

import pytest

from autograder.grading.store.views import duration, late_words


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (20, "1 min"),
        (1800, "30 min"),
        (3600, "1 h"),
        (7.5 * 3600, "7.5 h"),
        (36.1 * 3600, "36 h"),
        (36.6 * 3600, "37 h"),
    ],
)
def test_a_duration_reads_in_minutes_then_hours_then_whole_hours(seconds, said):
    """36 h 6 min is "36 h", not "36.1 h": whole hours from 10 h on."""
    assert duration(seconds) == said


def test_late_words_say_how_late_and_the_penalty_or_that_there_was_none():
    assert late_words(36 * 3600, 8) == "-8 (late, 36 h)"
    assert late_words(36 * 3600, 0) == "late (36 h, no penalty)"  # nbgrader's default policy, none
    assert late_words(0, 0) == "" and late_words(-5, 3) == ""  # on time, an extension included
