"""Is an unknown message raised inside torch given a family guess from the part of torch that raised it, marked as a
guess, linking the chapter; and is a message with no torch frame left unknown?"""

import traceback

import pytest
import torch
from torch.utils.checkpoint import checkpoint

from autograder.explain import explain


def _checkpoint_options_that_clash():
    x = torch.ones(2, requires_grad=True)
    checkpoint(torch.sin, x, use_reentrant=False, debug=True, context_fn=lambda: (None, None))


def test_an_unknown_checkpoint_error_is_guessed_as_checkpointing():
    """Does an unknown error raised in torch/utils/checkpoint.py get chapter 8's family, as a guess, as an object
    and pasted?"""
    with pytest.raises(ValueError) as info:
        _checkpoint_options_that_clash()
    e = explain(info.value)
    assert e.kind == "family_guess" and e.cause.startswith("A guess") and "torch/utils/checkpoint.py" in e.cause
    assert e.lesson.startswith("notebooks/08_checkpointing.ipynb#") and "Pitfalls" in e.lesson
    assert explain("".join(traceback.format_exception(info.value))).kind == "family_guess"


def test_no_torch_frame_no_guess():
    """Does a message with no traceback, or one raised outside torch, stay unknown?"""
    assert explain("debug=True is incompatible with non-default context_fn").kind == "unknown"
    with pytest.raises(ZeroDivisionError) as info:
        _ = 1 / 0
    assert explain(info.value).kind == "unknown"


def test_the_guess_quotes_the_messages_own_words():
    """Does a guess quote the clause of PyTorch's message that names the problem, as an object and pasted?"""
    with pytest.raises(ValueError) as info:
        _checkpoint_options_that_clash()
    for e in (explain(info.value), explain("".join(traceback.format_exception(info.value)))):
        assert "\u201cdebug=True is incompatible with non-default context_fn\u201d" in e.cause, e.cause


def test_the_guess_leaves_out_advice_the_frames_show_satisfied():
    """Is an unknown optimizer error whose optimizer holds leaf parameters not told to check that it was given
    leaves (not a module, not empty), while the same error pasted, where no optimizer is seen, still is?"""
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(KeyError) as info:
        opt.load_state_dict({"state": {}})
    e = explain(info.value)
    assert e.kind == "family_guess" and "holds 2 leaf tensors in 1 group(s)" in e.fix and "not empty" not in e.fix
    pasted = explain("".join(traceback.format_exception(info.value)))
    assert pasted.kind == "family_guess" and "not empty" in pasted.fix


def test_an_unknown_error_inside_step_points_at_the_closure_not_at_what_the_optimizer_was_given():
    """Is an unknown error raised inside an optimizer's step() (an L-BFGS closure returning a list) guessed with
    step()'s own advice (what the closure returns), not with the constructor's (a module, a used-up generator), as an
    object and pasted; and does the closure that returns the loss run and reach the minimum?"""
    w = torch.zeros(2, requires_grad=True)
    opt = torch.optim.LBFGS([w])

    def closure():
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return [loss]

    with pytest.raises(TypeError) as info:
        opt.step(closure)
    for e in (explain(info.value), explain("".join(traceback.format_exception(info.value)))):
        assert e.kind == "family_guess" and "returns the loss" in e.fix and "generator" not in e.fix, e.fix

    def fixed():
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss

    opt.step(fixed)
    torch.testing.assert_close(w.detach(), torch.ones(2))
