"""Does the explainer read the failing frame (its line, the objects it binds, how it made them) rather than text
elsewhere in the file or the cell?"""

import pytest
import torch
from torch import nn

from autograder.explain import explain
from autograder.explain.frame import assignments, describe, learner_frame, seen


def _raised(program) -> BaseException:
    with pytest.raises(Exception) as info:
        program()
    return info.value


def _penalty_elsewhere(model, x):
    """A gradient penalty: autograd.grad with create_graph=True, then backward, in another function."""
    (g,) = torch.autograd.grad(model(x).sum(), x, create_graph=True)
    (g.norm() ** 2).backward()


def _loss_under_no_grad_beside_a_penalty():
    model, x = nn.Linear(3, 1), torch.randn(4, 3, requires_grad=True)
    _penalty_elsewhere(model, x)
    if False:  # never runs: text of a second derivative in this very function
        (_g,) = torch.autograd.grad(model(x).sum(), x, create_graph=True)
    with torch.no_grad():
        loss = model(x).pow(2).mean()
    loss.backward()


def test_a_loss_made_under_no_grad_is_not_built_whatever_else_the_code_says():
    """Is backward() on a loss computed under no_grad explained as not built, naming the line and the block that
    made it, although the same code holds autograd.grad(..., create_graph=True) and another backward?"""
    e = explain(_raised(_loss_under_no_grad_beside_a_penalty))
    assert e.kind == "not_built", e.kind
    assert "loss = model(x).pow(2).mean()" in e.cause and "with torch.no_grad()" in e.cause


def _gradient_without_create_graph():
    x = torch.tensor(2.0, requires_grad=True)
    (dy,) = torch.autograd.grad(x**3, x)
    torch.autograd.grad(dy, x)


def test_a_gradient_differentiated_again_is_still_told_apart():
    """Is a gradient taken without create_graph, differentiated again, still the second-derivative cause?"""
    assert explain(_raised(_gradient_without_create_graph)).kind == "second_derivative_no_create_graph"


def test_assignments_follow_the_names_of_the_frame_only():
    """Does assignments() return how the failing frame made a name, through the names it read, nearest first?"""
    frame = learner_frame(_raised(_loss_under_no_grad_beside_a_penalty))[0].tb_frame
    made = assignments(frame, {"loss"})
    assert made[0] == "loss = model(x).pow(2).mean()"
    assert any(m.startswith("model, x =") for m in made) and not any("autograd.grad" in m for m in made)


def test_describe_states_what_autograd_reads():
    """Does describe() give a tensor's requires_grad, is_leaf and grad_fn, a wrapper's module and an optimizer's
    groups, and nothing for other objects?"""
    w = torch.ones(2, requires_grad=True)
    assert describe(w * 2) == (
        "a tensor of shape [2], dtype float32, requires_grad=True, is_leaf=False, grad_fn=MulBackward0"
    )
    assert "whose .module is a Linear" in describe(nn.DataParallel(nn.Linear(2, 2)))
    assert "1 param group(s) of 1 tensors" in describe(torch.optim.SGD([w], lr=0.1))
    assert describe("text") == describe({}) == ""
    assert describe(torch.no_grad) == "the class torch.no_grad itself, not an instance of it"


def test_seen_reads_the_learners_frame_not_torchs():
    """Is the frame read the learner's line that called into torch, with the objects it names?"""

    def learner():
        w = torch.zeros(3, requires_grad=True)
        torch.optim.SGD(w, lr=0.1)

    look = seen(_raised(learner))
    assert look.line == "torch.optim.SGD(w, lr=0.1)" and "w" in look.objects
    assert "optim" in look.library_called
