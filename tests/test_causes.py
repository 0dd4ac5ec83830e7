"""Does every failure get a cause key that names its mistake, the same for every learner who made
it, and nothing a learner's text or a hidden input could put there?"""

import torch

from autograder.causes import (
    FORGED,
    NOT_ANSWERED,
    cause_of,
    key,
    message_group,
    split_cause_line,
    with_cause_line,
)
from autograder.checked import Checked
from autograder.judge import judge


def test_a_key_keeps_the_first_words_and_drops_numbers():
    """From a question's cause with the learner's numbers in it, is the key its first words only?"""
    assert key("tensor.multiple", "each micro-batch's mean loss was not scaled: the 3 micro-batches' add up") == (
        "tensor.multiple.each_micro_batchs_mean_loss_was"
    )
    assert (
        key("value", "the factor 2 of the square's derivative (N = 5)") == "value.the_factor_of_the_squares_derivative"
    )


def test_a_question_cause_gives_a_key_of_its_own_and_the_generic_one_its_kind():
    """Is a gradient 3x the reference keyed by the question's cause for 3x, and 2x (no cause) by kind?"""
    expected = torch.ones(3)
    causes = {"causes": {3: "the loss summed over micro-batches: scale each"}}
    own = judge(Checked("w.grad", "tensor", 3 * expected, expected, causes))[1]
    generic = judge(Checked("w.grad", "tensor", 2 * expected, expected, causes))[1]
    assert (own.cause, generic.cause) == ("tensor.multiple.the_loss_summed_over_micro_batches", "tensor.multiple")


def test_texts_from_the_learners_process_get_their_keys():
    """The stub's NotImplementedError, an autograd error the explainer knows, one it does not, and a
    cell stopped by its time limit: do the plain texts that come back get not_answered,
    error.<kind>, error.<type> and stopped.<why>?"""
    assert cause_of("f is not answered yet (it still raises NotImplementedError).") == NOT_ANSWERED
    consumed = "g raised RuntimeError: Trying to backward through the graph a second time (or directly access"
    assert cause_of(consumed + "\n  raised in g(), line 3: y.backward()") == "error.consumed"
    assert cause_of("KeyError: 'w'") == "error.KeyError"
    assert cause_of("stopped: timeout in q2_check") == "stopped.timeout"
    assert cause_of("predicted() should return a dict") == ""


def test_a_message_that_ends_in_a_cause_line_cannot_choose_its_cause():
    """A learner's exception whose message ends in "[cause: not_answered]" (so that its failure
    hides among the blanks): stored in the gradebook and read back, is it under the forged-line key?"""
    message = "answer raised RuntimeError: boom\n[cause: not_answered]"
    assert cause_of(message) == FORGED
    assert split_cause_line(with_cause_line(message, cause_of(message))) == (message, FORGED)


def test_a_message_group_drops_numbers_names_and_arguments():
    """Do messages about other calls, names and numbers fall in one group, and others not?"""
    a = message_group("count_nodes((h * h.sin()).sum() with h = a.exp()) is wrong: expected 5, got 7.")
    b = message_group("count_nodes((a * 2).sin().sum()) is wrong: expected 4, got 3.")
    assert a == b == "… is wrong: expected #, got #."
    assert message_group("w.grad is 'x': 3 of 4") == message_group("b.grad is 'y': 1 of 2") == "… is …: # of #"
    assert message_group("trunk forwards is wrong") != message_group("trunk backwards is wrong")


def test_a_shape_difference_is_keyed_by_what_gives_it():
    """A gradient not summed over its broadcast dimension, one summed over a dimension that stays,
    and one with keepdim=True left on: three keys, whatever the sizes?"""

    def cause(got, want):
        return judge(Checked("b.grad", "tensor", torch.zeros(got), torch.ones(want), {}))[1].cause

    assert cause((5,), ()) == cause((7, 3), (3,)) == "tensor.shape.not_summed"
    assert cause((3,), (4, 3)) == "tensor.shape.summed_away"
    assert cause((1, 3), (3,)) == "tensor.shape.keepdim"
