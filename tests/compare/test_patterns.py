"""Does a difference of no known factor say what the values show, and only what they show?"""

import pytest
import torch

from autograder.compare.patterns import pattern

E = torch.tensor([[1.0, -2.0, 3.0, 0.5], [0.3, 0.2, -1.0, 2.0], [4.0, 1.5, -0.5, 0.25]])


def _later(e: torch.Tensor) -> torch.Tensor:
    moved = e.clone()
    moved[:, 1:] = e[:, :-1]
    return moved


def _column_later(e: torch.Tensor) -> torch.Tensor:
    moved = e.clone()
    moved[1:, 1] = e[:-1, 1]
    return moved


@pytest.mark.parametrize(
    "received,phrase",
    [
        (E + 0.7, "received - expected is +0.7 at every element"),
        (_later(E), "one position later along dimension 1"),
        (E.flip(1), "reversed along dimension 1"),
        (_column_later(E), "at index 1 of dimension 1 it holds the expected values one position later"),
        (E * torch.tensor([[1.0], [2.0], [0.5]]), "times a factor of its own: 1, 2, 0.5"),
        (E.reshape(-1)[torch.tensor([1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 11, 10])].reshape(3, 4), "in another order"),
    ],
)
def test_a_pattern_the_values_show_is_said(received, phrase):
    """Is each pattern said, with its numbers where the test is visible and without them in its hidden form?"""
    said, hidden = pattern(received, E, 1.3e-6, 1e-5)
    assert phrase in said, said
    assert hidden and not any(ch.isdigit() for ch in hidden), hidden


def test_values_that_show_no_pattern_say_none():
    """Is nothing said of values that differ with no pattern (the counterexample: a shift that is not one)?"""
    noise = E + torch.tensor([[0.1, -0.3, 0.0, 0.2], [0.0, 0.5, 0.1, -0.1], [0.3, 0.0, 0.0, 0.7]])
    assert pattern(noise, E, 1.3e-6, 1e-5) == ("", "")


@pytest.mark.parametrize(
    "received,expected,phrase",
    [
        (["b", "a", "c"], ["a", "b", "c"], "in another order; the first out of place at position 0"),
        (["c", "b", "a"], ["a", "b", "c"], "in reverse order"),
        ([0.9, 1.0, 1.1, 1.2], [1.0, 1.1, 1.2, 1.3], "moved one position later"),
        (["a", "b"], ["a", "b", "c"], "it has 2 items where 3 are expected; missing: 'c'"),
        ([1, 2, 9, 4], [1, 2, 3, 4], "1 of its 4 items differ, the first at position 2 (9 where 3 is expected)"),
    ],
)
def test_a_list_says_what_its_items_show(received, expected, phrase):
    """Does a wrong list say whether it holds the expected items in another order, moved, fewer, or which differ,
    and its hidden form no item or position?"""
    from autograder.compare.patterns import sequence_pattern

    assert phrase in sequence_pattern(received, expected), sequence_pattern(received, expected)
    hidden = sequence_pattern(received, expected, show=False)
    assert hidden and not any(ch.isdigit() for ch in hidden) and "'" not in hidden, hidden


def test_a_weighted_sum_of_the_inputs_is_said_with_its_weights():
    """Is a value that is another weighted sum of the question's inputs said with its weights and the expected ones,
    its hidden form without them, and nothing said of a value that is no such sum (the counterexample)?"""
    from autograder.compare.patterns import combination

    old, new = E, E.flip(0) * 0.5 + 1.0
    said, hidden = combination(0.25 * old + 0.75 * new, 0.75 * old + 0.25 * new, {"old": old, "new": new}, 1e-6, 1e-5)
    assert "it is 0.25 * old + 0.75 * new, where 0.75 * old + 0.25 * new is expected" in said, said
    assert "other weights" in hidden and not any(ch.isdigit() for ch in hidden)
    assert combination(old * new, 0.75 * old + 0.25 * new, {"old": old, "new": new}, 1e-6, 1e-5) == ("", "")
