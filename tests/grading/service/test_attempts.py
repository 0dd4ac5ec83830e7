"""Are the attempt rules read from the options as written, and applied as the README says?"""

import pytest

from autograder.grading.service import attempts
from autograder.grading.service.queue import Attempt
from autograder.grading.service.settings import Policy, Rules


def graded(score, at=0.0, penalty=0.0, key="x"):
    return Attempt(key, key, "ada", "ex01", 1, at, at, "", "", "done", "graded", 1, 1, score, 10, penalty)


def test_options_give_each_assignment_its_rules():
    """``--attempts 3 --attempts ex02=5 --counts ex02=best --cooldown 60``: does every assignment
    get 3 attempts, latest, 60 s, and ex02 five, the best, 60 s?"""
    rules = Rules.parse(["3", "ex02=5"], ["ex02=best"], ["60"])
    assert rules.of("ex01") == Policy(3, "latest", 60.0)
    assert rules.of("ex02") == Policy(5, "best", 60.0)


@pytest.mark.parametrize(
    "option, value", [("attempts", "0"), ("attempts", "x=-1"), ("counts", "first"), ("cooldown", "nan"),
                      ("cooldown", "inf"), ("attempts", "bad id=2")],
)  # fmt: skip
def test_a_wrong_value_is_refused_naming_it(option, value):
    with pytest.raises(ValueError) as error:
        Rules.parse(**{option: [value]})
    assert repr(value) in str(error.value) or "refused assignment id" in str(error.value)


def test_the_limit_counts_extra_attempts_and_the_cooldown_says_when():
    """Two attempts used of a limit of 2: over the limit, unless one extra is granted; then a
    cooldown of 60 s refuses one 30 s after the last, saying from when."""
    policy = Policy(limit=2, cooldown=60)
    used = [graded(5, at=0), graded(7, at=100)]
    assert attempts.decide(policy, 0, used, 1000).outcome == "over limit"
    assert attempts.decide(policy, 1, used, 1000) == attempts.Decision(True, 3)
    soon = attempts.decide(policy, 1, used, 130)
    assert soon.outcome == "cooldown" and "1970-01-01 00:02:40 UTC" in soon.reason
    assert attempts.left(policy, 1, 2) == 1 and attempts.left(Policy(), 0, 9) is None


def test_the_best_attempt_is_the_highest_after_its_late_penalty_and_the_later_of_equals():
    used = [graded(8, key="a"), graded(9, penalty=2, key="b"), graded(8, key="c")]
    assert attempts.counting(Policy(counts="best"), used).id == "c"
    assert attempts.counting(Policy(), used).id == "c" and attempts.counting(Policy(), used[:2]).id == "b"
    assert attempts.counting(Policy(counts="best"), used[:2]).id == "a"
