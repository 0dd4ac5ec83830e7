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
