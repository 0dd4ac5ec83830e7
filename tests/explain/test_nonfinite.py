"""Is a non-finite gradient norm refused by clip_grad_norm_ traced to the operation of the learner's code that made it
(a log, a sqrt or a division whose input holds zeros, named with its line), not answered with the list of every
possible source; does the fix it names run and give finite gradients equal to a reference computed another way?"""

import traceback

import pytest
import torch

from autograder.explain import explain


def _masked_probabilities():
    w = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    return w, torch.sigmoid(w) * (w > 0).float()  # exactly 0 where w == 0


def log_of_zero():
    w, p = _masked_probabilities()
    loss = -torch.log(p).sum()
    loss.backward()
    torch.nn.utils.clip_grad_norm_([w], 1.0, error_if_nonfinite=True)


def sqrt_at_zero():
    weights = torch.zeros(3, requires_grad=True)
    dist = (weights**2).sum(0, keepdim=True)
    dist.sqrt().sum().backward()
    torch.nn.utils.clip_grad_norm_([weights], 5.0, error_if_nonfinite=True)


def division_by_zero():
    scale = torch.tensor([1.0, 0.0], requires_grad=True)
    counts = scale.detach().clone()
    for _ in range(1):
        (scale / counts).sum().backward()
    torch.nn.utils.clip_grad_norm_([scale], 1.0, error_if_nonfinite=True)


def _raised(program):
    with pytest.raises(RuntimeError) as info:
        program()
    return info.value


@pytest.mark.parametrize(
    ("broken", "words", "fix"),
    [
        (log_of_zero, "takes log of p, and p holds 1 zero(s)", "p.clamp_min(1e-12)"),
        (sqrt_at_zero, "takes sqrt of dist, and dist holds 1 zero(s)", "add an eps inside"),
        (division_by_zero, "takes div of counts, and counts holds 1 zero(s)", "add an eps to the divisor"),
    ],
)
def test_the_operation_that_made_it_is_named_from_the_frame(broken, words, fix):
    """Is the operation whose input holds zeros named, with its line, and its own fix put first?"""
    e = explain(_raised(broken))
    assert e.kind == "clip_grad_nonfinite" and words in e.cause and e.fix.startswith("Here: ") and fix in e.fix


def test_a_paste_names_the_operations_of_its_file_and_hedges():
    """Does a paste name the log its file's code takes, and say it cannot see the values?"""
    e = explain("".join(traceback.format_exception(_raised(log_of_zero))))
    assert e.kind == "clip_grad_nonfinite" and "log(p)" in e.cause and "does not show the values" in e.cause
    assert "Seen in" not in e.cause and e.fix.startswith("If it is that log: clamp")


def test_the_clamp_fix_gives_the_gradient_of_the_masked_log():
    """Does log(p.clamp_min(eps)) run through the clip without the error, with the gradient -(1 - sigmoid(w)) where
    p > 0 (computed by hand) and 0 where the clamp holds p at eps?"""
    w, p = _masked_probabilities()
    loss = -torch.log(p.clamp_min(1e-12)).sum()
    loss.backward()
    torch.nn.utils.clip_grad_norm_([w], 1e9, error_if_nonfinite=True)  # a bound above the norm: nothing clipped
    s = torch.sigmoid(w.detach())
    expected = torch.where(w.detach() > 0, -(1 - s), torch.zeros_like(s))
    torch.testing.assert_close(w.grad, expected)
