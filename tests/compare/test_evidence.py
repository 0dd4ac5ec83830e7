"""Is a cause named only when the learner's run shows its mechanism, listed as something to check when the run
was not observed on that point, and never stated when the run contradicts it?"""

import pytest
import torch

from autograder.compare import diagnose
from autograder.compare.evidence import AUTOCAST, EVIDENCE, GRAD_BETWEEN, GRAD_MODE, cause, said, weigh

OUTSIDE = cause("your forward ran outside autocast", "forward outside autocast")
NO_GRAD = cause("your forward ran with grad mode off", "forward with grad mode off")


def test_a_cause_whose_evidence_holds_is_named():
    assert said([OUTSIDE, NO_GRAD], {AUTOCAST: (True,), GRAD_MODE: (False,)}) == (
        "your forward ran with grad mode off",
        True,
    )


def test_a_cause_the_run_contradicts_is_never_stated():
    text, named = said([OUTSIDE], {AUTOCAST: (True,)})
    assert (text, named) == ("", False)


def test_causes_the_run_was_not_observed_on_are_listed_as_things_to_check():
    text, named = said([OUTSIDE, NO_GRAD], {})
    assert not named and text.startswith("Possible causes, to check:") and "outside autocast" in text


def test_a_plain_text_is_stated_as_it_is():
    assert said("the factor 2 forgotten", {}) == ("the factor 2 forgotten", True)


def test_weigh_drops_contradicted_and_keeps_unobserved():
    reset = cause(".grad was reset", ".grad reset between backward passes")
    scaled = cause(".grad was scaled", ".grad scaled between backward passes")
    held, possible = weigh([reset, scaled], {GRAD_BETWEEN: ("scaled",)})
    assert [h.text for h in held] == [".grad was scaled"] and possible == []
    assert weigh([reset, scaled], {}) == ([], [".grad was reset", ".grad was scaled"])


def test_a_cause_names_a_known_test():
    with pytest.raises(KeyError):
        cause("anything", "no such mechanism")
    assert all(EVIDENCE[name]({}) is None for name in EVIDENCE)  # nothing observed: no verdict


def test_a_factor_that_fits_a_mistake_whose_mechanism_is_not_shown_is_a_symptom():
    expected = torch.tensor([1.0, 2.0, 3.0])
    reset = cause(".grad was reset between micro-batches", ".grad reset between backward passes")
    shown = diagnose(expected / 3, expected, "w.grad", causes={1 / 3: reset}, facts={GRAD_BETWEEN: ("zeroed",)})
    unseen = diagnose(expected / 3, expected, "w.grad", causes={1 / 3: reset}, facts={})
    other = diagnose(expected / 3, expected, "w.grad", causes={1 / 3: reset}, facts={GRAD_BETWEEN: ("kept",)})
    assert shown.message.startswith("w.grad is exactly 1/3 of the expected value: .grad was reset")
    assert "Possible cause, to check: .grad was reset" in unseen.message and unseen.cause == "tensor.fraction"
    assert "reset" not in other.message and other.kind == "fraction"


def test_a_nan_story_is_told_only_for_non_finite_values():
    expected = torch.tensor([1.0, 2.0, 3.0])
    nan = cause("NaN gradients: the rank used rows that are not its own.", "non-finite values")
    finite = diagnose(torch.tensor([1.0, 5.0, 3.0]), expected, "g", causes={"mismatch": [nan]})
    broken = diagnose(torch.tensor([1.0, float("nan"), 3.0]), expected, "g", causes={"mismatch": [nan]})
    assert "NaN" not in finite.message and "rows that are not its own" in broken.message
