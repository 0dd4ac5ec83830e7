"""Does every fix a kind's menu offers for an in-place change of a view, applied to its trigger, run without the
error and give the gradient of a reference computed another way (not only run)? A fix that changes what gets
differentiated (out-of-place on a view whose base is read later) must not lead, and says when it is right."""

import pytest
import torch

from autograder.explain import explain


def _inputs():
    torch.manual_seed(0)
    feats = torch.randn(4, 6, requires_grad=True)
    logits = torch.randn(4, 3, requires_grad=True)
    return feats, logits


def _reference():
    """h with its first three columns gated, built out of place: the gradient the learner meant."""
    feats, logits = _inputs()
    h = torch.cat([feats[:, :3] * torch.sigmoid(logits), feats[:, 3:]], dim=1)
    h.sum().backward()
    return feats.grad, logits.grad


def _views_under_no_grad():
    feats, logits = _inputs()
    h = feats * 1.0
    with torch.no_grad():
        first = h[:, :3]
    first.mul_(torch.sigmoid(logits))
    h.sum().backward()


def _views_under_no_grad_both_outside():
    feats, logits = _inputs()
    h = feats * 1.0
    first = h[:, :3]
    first.mul_(torch.sigmoid(logits))
    h.sum().backward()
    return feats.grad, logits.grad


def _split_view():
    feats, logits = _inputs()
    h = feats * 1.0
    first, _ = h.split(3, dim=1)
    first.mul_(torch.sigmoid(logits))
    h.sum().backward()


def _split_view_plain_slice():
    feats, logits = _inputs()
    h = feats * 1.0
    h[:, :3].mul_(torch.sigmoid(logits))
    h.sum().backward()
    return feats.grad, logits.grad


def _split_view_cat():
    feats, logits = _inputs()
    first, second = (feats * 1.0).split(3, dim=1)
    h = torch.cat([first * torch.sigmoid(logits), second], dim=1)
    h.sum().backward()
    return feats.grad, logits.grad


def _raised(program):
    with pytest.raises(RuntimeError) as info:
        program()
    return info.value


@pytest.mark.parametrize(
    ("broken", "fixed", "words"),
    [
        (_views_under_no_grad, _views_under_no_grad_both_outside, "outside the no_grad block"),
        (_split_view, _split_view_plain_slice, "x[:, :3].mul_(2)"),
        (_split_view, _split_view_cat, "torch.cat"),
    ],
)
def test_each_offered_fix_gives_the_gradient_the_code_meant(broken, fixed, words):
    """Is the fix offered for the trigger (named in the explanation), and does it run and give the reference's
    gradient for both the tensor and the gate?"""
    e = explain(_raised(broken))
    assert e.kind == "view_inplace" and words in e.fix, e.fix
    for got, expected in zip(fixed(), _reference(), strict=True):
        torch.testing.assert_close(got, expected)


def test_a_fix_that_changes_a_copy_does_not_lead_and_says_so():
    """Out-of-place or clone() on a view made under no_grad runs, but the base keeps its old values and the gate gets
    no gradient: is it offered only after the fix that keeps the base, with that said?"""
    e = explain(_raised(_views_under_no_grad))
    assert e.fix.index("outside the no_grad block") < e.fix.index("out-of-place")
    assert "change a copy" in e.fix
    feats, logits = _inputs()
    h = feats * 1.0
    with torch.no_grad():
        first = h[:, :3]
    first = first * torch.sigmoid(logits)  # runs, and is wrong: h never sees the gate
    h.sum().backward()
    assert logits.grad is None and not torch.equal(feats.grad, _reference()[0])
