"""Can a message template state a cause whose test did not return "holds"? Every template of the comparison is
walked: with no cause of the question's and nothing observed, each says what it sees and asks the question that
decides, and a cause reaches a template only as a ``Held`` (issue 51)."""

import pytest
import torch

from autograder.compare import diagnose, diagnose_bytes
from autograder.compare.evidence import (
    EVIDENCE,
    GRAD_BETWEEN,
    Held,
    Verdict,
    because,
    cause,
    holding,
    matched,
    shown,
    verdict_of,
)

E = torch.tensor([1.0, -2.0, 3.0, 0.5])

# every kind of tensor difference diagnose knows, made with no cause of the question's and no fact of the run
TENSOR_TEMPLATES = {
    "none": (None, E),
    "type": ("a string", E),
    "attached": (E.clone().requires_grad_(), E),
    "shape": (E[:3], E),
    "dtype": (E.double(), E),
    "zeros": (torch.zeros(4), E),
    "sign": (-E, E),
    "multiple": (3 * E, E),
    "fraction": (E / 4, E),
    "scaled": (E * 5 / 7, E),
    "mismatch": (E + torch.tensor([0.0, 1.0, 0.0, 0.0]), E),
}
# claims about the learner's run a generic template would state without a test (the false causes)
UNTESTED_CLAIMS = ["the graph was cut", "gradients accumulate in .grad, so", "Or the loss is", ": divided by"]


@pytest.mark.parametrize("kind", list(TENSOR_TEMPLATES))
def test_a_tensor_template_with_nothing_observed_states_no_cause(kind):
    """Does each kind's message, with no cause given and nothing observed, state no claim about the run, asking the
    deciding question where a cause could be guessed?"""
    received, expected = TENSOR_TEMPLATES[kind]
    d = diagnose(received, expected, "g")
    assert not d.ok and not [claim for claim in UNTESTED_CLAIMS if claim in d.message], d.message
    if kind in ("zeros", "sign", "multiple", "fraction", "scaled"):
        assert d.message.rstrip().endswith("?"), d.message  # the deciding question, not a verdict


BYTE_TEMPLATES = {
    "one reading": dict(received=224 + 96, expected=224, parts={"x": 128, "h": 96}, unsaved={"h's input": 64}),
    "nothing else listed": dict(received=224 + 96, expected=224, parts={"x": 128, "h": 96}),
    "two readings": dict(received=224 + 96, expected=224, parts={"x": 128, "h": 96}, unsaved={"h's input": 96}),
    "whole twice": dict(received=448, expected=224, parts={"x": 128, "h": 96}),
    "steps": dict(received=224 + 200, expected=224, parts={"x": 128, "h": 96}, step=100),
    "elements": dict(received=56, expected=224, parts={"x": 128, "h": 96}, element_size=4),
    "nothing fits": dict(received=225, expected=224, parts={"x": 128, "h": 96}),
}


@pytest.mark.parametrize("name", list(BYTE_TEMPLATES))
def test_a_byte_template_names_a_part_only_where_one_reading_fits(name):
    """Does each byte template name what the excess is made of only where one reading fits, list the readings as
    possibilities where several do, and say only the difference where none does?"""
    d = diagnose_bytes(**BYTE_TEMPLATES[name])
    if name == "two readings":
        assert d.kind == "ambiguous" and "possibilities" in d.message and "h counted twice" in d.message
    elif name == "nothing else listed":  # the counterexample: a tensor the check did not list fits the size as well
        assert d.kind == "ambiguous" and "h counted twice" in d.message and "another tensor of 96 B" in d.message
    elif name == "nothing fits":
        assert d.kind == "mismatch" and "+1 B" in d.message
    else:
        assert d.kind != "ambiguous" and "possibilities" not in d.message, d.message


def test_a_cause_reaches_a_template_only_as_a_held():
    """Can a template be handed a plain string as a cause, or a Held be made without a test that returned holds?"""
    with pytest.raises(TypeError):
        because("g is all zeros", ["the graph was cut"])
    with pytest.raises(TypeError):
        Held("the graph was cut", "a test that never ran")
    assert (
        because("g is all zeros", [], "which path carries no gradient?")
        == "g is all zeros. which path carries no gradient?"
    )
    held = matched("the factor 2 forgotten", "the factor a question names")
    assert because("g is 1/2 of the expected value", [held]) == "g is 1/2 of the expected value: the factor 2 forgotten"


@pytest.mark.parametrize("name", sorted(EVIDENCE))
def test_every_test_of_a_cause_returns_holds_contradicted_or_not_observed(name):
    """Does each evidence test give NOT_OBSERVED on a run observed on nothing, and is its cause held only then when
    it returns HOLDS?"""
    claim = cause("a claim", name)
    assert verdict_of(claim, {}) is Verdict.NOT_OBSERVED and holding(claim, {}) is None


def test_a_claim_of_the_checks_own_observation_holds_only_where_the_run_shows_it():
    """Does a ``shown`` claim hold where its fact shows the value, and is it contradicted where the fact shows
    another?"""
    claim = shown(".grad was zeroed in place", GRAD_BETWEEN, "zeroed")
    assert verdict_of(claim, {GRAD_BETWEEN: ("zeroed",)}) is Verdict.HOLDS
    assert verdict_of(claim, {GRAD_BETWEEN: ("kept",)}) is Verdict.CONTRADICTED
    assert holding(claim, {GRAD_BETWEEN: ("kept",)}) is None
    assert holding(claim, {GRAD_BETWEEN: ("zeroed",)}).text == ".grad was zeroed in place"


def test_a_figure_no_node_saves_is_never_asked_which_node_saves_it():
    """Is a missing part of a figure of .grad bytes or of a result (no ``unsaved``, no ``saved_by``: the check did
    not say what Nodes save) asked whether it is alive at that moment, never which Node saves it, while a saved
    tensors' figure (``unsaved`` given) still is?"""
    grads = diagnose_bytes(received=0, expected=2048, name="peak .grad bytes", parts={"the largest .grad": 2048})
    assert grads.kind == "missing" and "Node" not in grads.message and "alive" in grads.message, grads.message
    saved = diagnose_bytes(received=0, expected=2048, parts={"h": 2048}, unsaved={"the loss": 4})
    assert "Which Node saves it" in saved.message, saved.message


def test_a_difference_with_no_cause_says_what_is_observed():
    """Does a difference of no known kind say what the values show (how many elements are out of tolerance, the
    first of them, NaN or inf where the expected values are finite), and its hidden form the NaN without values?"""
    nan = diagnose(torch.tensor([1.0, float("nan"), 3.0, 0.5]), E, "g")
    assert "out of tolerance: 1 of 4, the first at index 1 (NaN where -2 is expected)" in nan.message, nan.message
    assert "1 NaN where the expected values are finite" in nan.message and "NaN where" in nan.reason
    assert "-2" not in nan.reason
    inf = diagnose(torch.tensor([[1.0, -2.0], [float("inf"), 0.5]]), E.reshape(2, 2), "g")
    assert "index (1, 0) (inf where 3 is expected)" in inf.message and "overflow" in inf.message, inf.message
    plain = diagnose(E + torch.tensor([0.0, 0.0, 0.0, 0.25]), E, "g")
    assert "1 of 4, the first at index 3" in plain.message and "NaN" not in plain.message, plain.message


def test_all_zeros_blames_a_zero_loss_only_where_every_backward_ran_on_one():
    """Is an all-zero gradient said to come from a loss of exactly 0 only where the run shows every backward() ran on
    0, and otherwise (the counterexample: a nonzero loss, a gradient cut elsewhere) asked which path carries none?"""
    from autograder.compare.evidence import ZERO_LOSS

    zero = diagnose(torch.zeros(4), E, "g", facts={ZERO_LOSS: (True,)})
    assert "ran on a loss that is exactly 0" in zero.message, zero.message
    for seen in ((False,), (True, False), None):
        other = diagnose(torch.zeros(4), E, "g", facts={ZERO_LOSS: seen} if seen else {})
        assert "exactly 0" not in other.message and "which path" in other.message, other.message
