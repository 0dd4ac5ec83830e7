"""Does explain() name the autograd mistake behind each live error and warning of this PyTorch?

Every kind is produced here by running a tiny program, and again by a realistic training loop; the
messages are never pasted, except to check that older PyTorch wordings still match (their stable
parts) and for the command line, which reads pasted tracebacks.
"""

import dataclasses
import html
import os
import re
import subprocess
import sys
import textwrap
import traceback
import warnings

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from autograder.explain import KINDS, MODIFIED_INPLACE, explain, modified_inplace_message
from autograder.lessons import COURSE_ROOT, anchor_of_cell, heading_ids

# The oracle: kind -> family, as the course promises it (independent of the KINDS table).
FAMILY = {
    "not_built": "not built",
    "consumed": "consumed",
    "modified_inplace": "changed",
    "view_inplace": "changed",
    "leaf_inplace": "changed",
    "inference_tensor": "changed",
    "inference_version": "changed",
    "create_graph_cycle": "kept alive",
    "nonleaf_grad": "usage",
    "checkpoint_use_reentrant": "usage",
    "checkpoint_no_grad_input": "usage",
    "checkpoint_reentrant_grad": "usage",
    "non_scalar_output": "usage",
    "custom_function_gradients": "usage",
    # chapter 9
    "custom_function_view_inplace": "changed",
    "once_differentiable": "usage",
    "custom_function_non_tensor_grad": "usage",
    "custom_function_grad_shape": "usage",
    "function_transform": "usage",
    "unknown": "unknown",
}
WARNING_KINDS = {"nonleaf_grad", "checkpoint_use_reentrant", "checkpoint_no_grad_input", "create_graph_cycle"}


def raised(program) -> Exception:
    """The exception that ``program()`` raises."""
    with pytest.raises(Exception) as info:
        program()
    return info.value


def warned(program, kind: str) -> warnings.WarningMessage:
    """The warning of ``kind`` that ``program()`` emits (every warning recorded, none shown; C++
    warnings that PyTorch gives once per process are given every time)."""
    warn_always = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            program()
    finally:
        torch.set_warn_always(warn_always)
    found = [w for w in caught if explain(w).kind == kind]
    assert found, f"no {kind} warning among {[str(w.message)[:60] for w in caught]}"
    return found[0]


def live(program, kind: str):
    return warned(program, kind) if kind in WARNING_KINDS else raised(program)


# ---------------------------------------------------------------- tiny programs, one per kind
def _leaf():
    return torch.tensor([1.0, 2.0], requires_grad=True)


class Two(torch.autograd.Function):
    """A custom Function of two inputs whose backward forgets the second gradient."""

    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, grad):
        return grad


def _view_split():
    a, _ = (_leaf() * 1).split(1)
    a.mul_(2)


def _inference_saved():
    with torch.inference_mode():
        t = torch.ones(2)
    (_leaf() * t).sum().backward()


def _inference_tensor():
    with torch.inference_mode():
        return torch.ones(2)


def _reentrant_checkpoint_with_grad():
    x = _leaf()
    y = checkpoint(torch.sin, x, use_reentrant=True)
    torch.autograd.grad(y.sum(), x)


def _backward_in_inference_mode():
    """backward() inside inference_mode fills w.grad with an inference tensor; the next ordinary
    backward accumulates into it in place."""
    w = _leaf()
    loss = (w * 2).sum()
    with torch.inference_mode():
        loss.backward()
    assert w.grad.is_inference()
    (w * 2).sum().backward()


def _modified_sigmoid():
    y = _leaf().sigmoid()
    y += 1
    y.sum().backward()


def _backward(loss):
    loss.backward()


def _consumed():
    """The same graph backwarded twice, by a helper: the failing frame's code does not show which cause it is (the
    frame picks it where it does: tests/explain/test_training.py)."""
    y = _leaf().sigmoid()
    _backward(y.sum())
    (y * 2).sum().backward()


# ---- chapter 9: custom autograd Functions
class ReturnsInput(torch.autograd.Function):
    """Changes its input in place and returns it, without ctx.mark_dirty."""

    @staticmethod
    def forward(ctx, x):
        return x.add_(1)

    @staticmethod
    def backward(ctx, grad):
        return grad


class SquareOnce(torch.autograd.Function):
    """x ** 2 with a backward marked @once_differentiable."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


class GradForNumber(torch.autograd.Function):
    """forward(ctx, x, k) = x * k; backward returns a gradient for the number k."""

    @staticmethod
    def forward(ctx, x, k):
        return x * k

    @staticmethod
    def backward(ctx, grad):
        return grad * 2, grad


class SumNotExpanded(torch.autograd.Function):
    """x.sum() whose backward returns the 0-dim incoming gradient as it is."""

    @staticmethod
    def forward(ctx, x):
        return x.sum()

    @staticmethod
    def backward(ctx, grad):
        return grad


class OldStyleSin(torch.autograd.Function):
    """forward(ctx, x): no setup_context, so torch.func cannot transform it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()


class SinWithoutVmap(torch.autograd.Function):
    """forward and setup_context apart, but no vmap rule."""

    @staticmethod
    def forward(x):
        return x.sin()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()


def _second_derivative_through_once_differentiable():
    x = _leaf()
    (g,) = torch.autograd.grad((SquareOnce.apply(x) ** 2).sum(), x, create_graph=True)
    g.sum().backward()


CHAPTER_9_TINY = {
    "custom_function_view_inplace": lambda: ReturnsInput.apply(_leaf() * 1).mul_(2),
    "once_differentiable": _second_derivative_through_once_differentiable,
    "custom_function_non_tensor_grad": lambda: GradForNumber.apply(_leaf(), 2.0).sum().backward(),
    "custom_function_grad_shape": lambda: SumNotExpanded.apply(_leaf()).backward(),
    "function_transform": lambda: torch.func.grad(OldStyleSin.apply)(torch.tensor(1.0)),
}


TINY = {
    "not_built": lambda: torch.tensor([1.0, 2.0]).sum().backward(),
    "consumed": _consumed,
    "modified_inplace": _modified_sigmoid,
    "view_inplace": _view_split,
    "leaf_inplace": lambda: _leaf().add_(1),
    "inference_tensor": _inference_saved,
    "inference_version": lambda: _inference_tensor()._version,
    "nonleaf_grad": lambda: (_leaf() * 2).grad,
    "checkpoint_use_reentrant": lambda: checkpoint(nn.Linear(2, 2), torch.ones(1, 2)),
    "checkpoint_no_grad_input": lambda: checkpoint(torch.sin, torch.ones(2), use_reentrant=True),
    "checkpoint_reentrant_grad": _reentrant_checkpoint_with_grad,
    "create_graph_cycle": lambda: (_leaf() ** 2).sum().backward(create_graph=True),
    "non_scalar_output": lambda: (_leaf() * 3).backward(),
    "custom_function_gradients": lambda: Two.apply(_leaf(), _leaf()).sum().backward(),
    "unknown": lambda: torch.ones(2, 3) @ torch.ones(2, 3),
    **CHAPTER_9_TINY,
}


# ---------------------------------------------------------------- chapter 10: hooks, tiny programs
def _full_backward_hook_then_inplace_relu():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(inplace=True))
    model[0].register_full_backward_hook(lambda module, grad_input, grad_output: None)
    model(torch.ones(1, 2))


def _hook_scales_its_argument_in_place():
    y = _leaf() * 2
    y.register_hook(lambda g: g.mul_(10))  # the gradient of sum() is expanded: stride 0
    y.sum().backward()


def _pack_hook_changes_its_input():
    def pack(t):
        return t.mul_(1)

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        (_leaf() * 2).sin()


def _hook_returns_the_norm():
    y = _leaf() * 2
    y.register_hook(lambda g: g.norm())
    y.sum().backward()


def _first_layer_full_backward_hook():
    layer = nn.Linear(2, 1)
    layer.register_full_backward_hook(lambda module, grad_input, grad_output: None)
    layer(torch.ones(1, 2)).sum().backward()


def _old_backward_hook():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    model.register_backward_hook(lambda module, grad_input, grad_output: None)
    model(_leaf().unsqueeze(0)).sum().backward()


FAMILY.update(
    {
        "backward_hook_inplace": "changed",
        "grad_overlap_inplace": "changed",
        "pack_hook_inplace": "changed",
        "hook_no_grad_tensor": "not built",
        "hook_changed_grad": "usage",
        "post_accumulate_nonleaf": "usage",
        "full_backward_hook_no_input": "usage",
        "nonfull_backward_hook": "usage",
    }
)
WARNING_KINDS.update({"full_backward_hook_no_input", "nonfull_backward_hook"})
TINY.update(
    {
        "backward_hook_inplace": _full_backward_hook_then_inplace_relu,
        "grad_overlap_inplace": _hook_scales_its_argument_in_place,
        "pack_hook_inplace": _pack_hook_changes_its_input,
        "hook_no_grad_tensor": lambda: torch.ones(2).register_hook(lambda g: g),
        "hook_changed_grad": _hook_returns_the_norm,
        "post_accumulate_nonleaf": lambda: (_leaf() * 2).register_post_accumulate_grad_hook(lambda p: None),
        "full_backward_hook_no_input": _first_layer_full_backward_hook,
        "nonfull_backward_hook": _old_backward_hook,
    }
)


def test_backward_hook_inplace_wins_over_view_inplace():
    """Is the full-backward-hook error told apart from other in-place changes of views, in
    PyTorch 2.13's wording and in the older one users report ("BackwardHookFunctionBackward")?"""
    assert explain(raised(_full_backward_hook_then_inplace_relu)).kind == "backward_hook_inplace"
    older = (
        "Output 0 of BackwardHookFunctionBackward is a view and is being modified inplace. This view was "
        "created inside a custom Function (or because an input was returned as-is)"
    )
    assert explain(older).kind == "backward_hook_inplace"


def test_hook_changed_grad_names_the_hook_and_what_changed():
    """Does the cause name the hook and say it changed the size (or the type) of the gradient?"""
    e = explain(raised(_hook_returns_the_norm))
    assert e.details == {"hook": "<lambda>", "what": "size"} and "<lambda>" in e.cause
    y = _leaf() * 2
    y.register_hook(lambda g: g.double())
    assert explain(raised(lambda: y.sum().backward())).details["what"] == "type"


@pytest.mark.parametrize("kind", TINY)
def test_live_message_is_recognised(kind):
    """Is the message of a tiny program that makes this mistake recognised, with its family?"""
    e = explain(live(TINY[kind], kind))
    assert (e.kind, e.family) == (kind, FAMILY[kind])
    assert e.cause and e.fix and e.lesson.count("#") == 1
    flat = " ".join(str(e).split())
    assert flat.startswith("autograder explains:") and " ".join(e.cause.split()) in flat


def test_every_kind_is_tested_and_has_a_family():
    """Does the table hold exactly the kinds the course promises, each in its family?"""
    from autograder.kinds.api_return import KINDS as API_RETURN  # tested in test_api_return.py
    from autograder.kinds.catalogued import KINDS as CATALOGUED  # tested in test_catalogue.py
    from autograder.kinds.plain import KINDS as PLAIN  # tested in test_plain.py
    from autograder.kinds.python_layer import KINDS as PYTHON_LAYER  # tested in tests/kinds/test_python_layer.py
    from autograder.kinds.returned import KINDS as RETURNED  # tested in test_returned.py
    from autograder.kinds.training import KINDS as TRAINING  # tested in test_training.py

    assert (
        (
            set(KINDS)
            - set(CATALOGUED)
            - set(TRAINING)
            - set(PYTHON_LAYER)
            - set(RETURNED)
            - set(PLAIN)
            - set(API_RETURN)
        )
        | {"unknown"}
        == set(FAMILY)
        == set(TINY)
    )
    assert all(KINDS[kind].family == FAMILY[kind] for kind in FAMILY if kind != "unknown")


# ---------------------------------------------------------------- the specifics of each message
def test_inplace_cause_names_shape_op_and_versions():
    """Does the in-place error's cause name the shape, the op that made the tensor, both versions?"""
    e = explain(raised(_modified_sigmoid))
    assert "Seen in the failing frames: y has that shape and is at version 1." in e.cause  # the frame's tensor
    assert {k: v for k, v in e.details.items() if k != "seen"} == {
        "type": "torch.FloatTensor",
        "shape": "2",
        "output": "0",
        "op": "Sigmoid",
        "version": "1",
        "expected": "0",
    }
    for words in ("[2]", "Sigmoid", "version 0", "version 1", "1 in-place change"):
        assert words in e.cause


def test_inplace_on_a_plain_tensor_says_no_op_made_it():
    """Is a changed tensor that no op made (no 'which is output') called so, with a hint at weights?"""

    def program():
        w, a = _leaf(), torch.tensor([3.0, 4.0])
        y = w * a
        a.add_(1)
        y.sum().backward()

    e = explain(raised(program))
    assert e.kind == "modified_inplace" and "op" not in e.details
    assert "no recorded operation produced" in e.cause
    # no optimizer in the frames: the hint on optimizer.step() is not given, and the explanation says why
    assert "No optimizer is bound in the failing frames" in e.cause and "if this is one" not in e.cause


def test_not_built_names_the_element():
    """Does the not-built cause say which output had no graph (element 0)?"""
    assert "element 0" in explain(raised(TINY["not_built"])).cause


def test_view_cause_names_the_multi_view_op():
    """Does the view error name the op that returned several views, and which output?"""
    e = explain(raised(_view_split))
    assert e.details == {"output": "0", "op": "Split"} and "Output 0 of Split" in e.cause


def test_view_made_under_no_grad():
    """Is a view made in no_grad and changed outside it explained with its own fix?"""

    def program():
        y = _leaf() * 1
        with torch.no_grad():
            v = y[:1]
        v.mul_(2)

    e = explain(raised(program))
    assert e.kind == "view_inplace" and "no_grad" in e.cause and "both outside" in e.fix


def test_leaf_view_is_a_leaf_error():
    """Is changing w[:1] of a leaf w that requires grad reported as a leaf error on a view?"""
    e = explain(raised(lambda: _leaf()[:1].mul_(2)))
    assert e.kind == "leaf_inplace" and e.details == {"view": True} and "view of a leaf" in e.cause


def test_inference_tensor_changed_outside_inference_mode():
    """Is an in-place update of an inference tensor outside inference mode recognised?"""

    def program():
        with torch.inference_mode():
            t = torch.ones(2)
        t.add_(1)

    e = explain(raised(program))
    assert e.kind == "inference_tensor" and "changed in place" in e.cause


def test_backward_in_inference_mode_spoils_grad():
    """Is the error of the next backward after a backward() inside inference_mode explained as a
    .grad made an inference tensor (not as a tensor of the learner's changed in place), also from
    a pasted traceback?"""
    error = raised(_backward_in_inference_mode)
    e = explain(error)
    assert e.kind == "inference_tensor" and e.details == {"inference_grad": True}
    assert ".grad" in e.cause and "inside torch.inference_mode()" in e.cause
    assert "p.grad = None" in e.fix
    pasted = "".join(traceback.format_exception(error))
    assert explain(pasted).details == {"inference_grad": True}
    assert explain(str(error)).details == {}  # no traceback: nothing says backward


def test_inference_version_says_inference_tensors_have_none():
    """Does reading ._version of an inference tensor point at inference_mode and its way out?"""
    e = explain(raised(TINY["inference_version"]))
    assert "._version" in e.cause and "is_inference()" in e.fix and "no_grad" in e.fix


def test_reentrant_checkpoint_with_autograd_grad():
    """Is autograd.grad (or backward(inputs=...)) through a reentrant checkpoint explained with the
    non-reentrant fix?"""

    def backward_with_inputs():
        x = _leaf()
        checkpoint(torch.sin, x, use_reentrant=True).sum().backward(inputs=[x])

    for program in (_reentrant_checkpoint_with_grad, backward_with_inputs):
        e = explain(raised(program))
        assert e.kind == "checkpoint_reentrant_grad" and "use_reentrant=False" in e.fix


def test_custom_function_names_function_and_counts():
    """Does the cause name the Function and the expected and returned numbers of gradients?"""
    e = explain(raised(TINY["custom_function_gradients"]))
    assert e.details == {"function": "Two", "expected": "2", "got": "1"}
    assert "Two returned 1 gradient" in e.cause and "2 inputs" in e.cause


def test_chapter_9_causes_name_the_function_and_its_mistake():
    """Do the custom Function kinds name the Function, the position or shape, and the way out?"""
    view = explain(raised(CHAPTER_9_TINY["custom_function_view_inplace"]))
    assert "Output 0 of your autograd.Function ReturnsInput" in view.cause and "mark_dirty" in view.fix
    number = explain(raised(CHAPTER_9_TINY["custom_function_non_tensor_grad"]))
    assert (
        number.details == {"function": "GradForNumber", "position": "2"} and "Return None at position 2" in number.fix
    )
    shape = explain(raised(CHAPTER_9_TINY["custom_function_grad_shape"]))
    assert shape.details == {"function": "SumNotExpanded", "index": "0", "got": "", "want": "2"}
    assert "shape [] for input 0" in shape.cause
    once = explain(raised(CHAPTER_9_TINY["once_differentiable"]))
    assert "@once_differentiable" in once.cause and "gradgradcheck" in once.fix
    old = explain(raised(CHAPTER_9_TINY["function_transform"]))
    assert "setup_context" in old.fix
    vmapped = explain(raised(lambda: torch.func.vmap(SinWithoutVmap.apply)(torch.ones(3))))
    assert vmapped.kind == "function_transform" and "SinWithoutVmap" in vmapped.cause
    assert "generate_vmap_rule = True" in vmapped.fix


def test_mark_dirty_on_a_leaf_is_a_leaf_error():
    """Is a custom Function that marks a leaf dirty (PyTorch's 'has been used' wording) a leaf_inplace?"""

    class AddOne(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.add_(1)

        @staticmethod
        def backward(ctx, grad):
            return grad

    assert explain(raised(lambda: AddOne.apply(_leaf()))).kind == "leaf_inplace"


def test_chapter_9_kinds_point_to_chapter_9():
    """Does every custom Function kind, the older custom_function_gradients included, link to a
    section of chapter 9's lesson?"""
    for kind in ("custom_function_gradients", *CHAPTER_9_TINY):
        assert explain(raised(TINY[kind])).lesson.startswith("notebooks/09_custom_functions.ipynb#"), kind


# ---------------------------------------------------------------- realistic training loops
def gan_step_between_backwards():
    """GAN: D's output on the fakes is reused for G's loss after D's optimizer stepped."""
    G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
    opt_g, opt_d = torch.optim.Adam(G.parameters()), torch.optim.Adam(D.parameters())
    bce, real = nn.BCEWithLogitsLoss(), torch.randn(16, 2)
    for _ in range(2):
        d_fake = D(G(torch.randn(16, 4)))
        d_loss = bce(D(real), torch.ones(16, 1)) + bce(d_fake, torch.zeros(16, 1))
        opt_d.zero_grad()
        d_loss.backward(retain_graph=True)
        opt_d.step()  # changes D's weights in place
        g_loss = bce(d_fake, torch.ones(16, 1))  # ... which this graph saved
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()


def rnn_hidden_state_not_detached():
    """RNN: the hidden state carries the previous step's (already backwarded) graph."""
    cell = nn.RNNCell(3, 5)
    opt = torch.optim.SGD(cell.parameters(), lr=0.1)
    h = torch.zeros(2, 5)
    for _ in range(3):
        h = cell(torch.randn(2, 3), h)  # h = h.detach() is missing
        loss = h.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def frozen_backbone():
    """Fine-tuning where every parameter was frozen by mistake."""
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    for p in model.parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        loss = model(torch.randn(8, 3)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def vae_clamps_logvar_in_place():
    """VAE: the encoder output is chunked and one chunk clamped in place."""
    encoder = nn.Linear(4, 6)
    for _ in range(2):
        mu, logvar = encoder(torch.randn(3, 4)).chunk(2, dim=1)
        logvar.clamp_(-5, 5)
        (mu.pow(2) + logvar.exp()).sum().backward()


def manual_sgd_without_no_grad():
    """Hand-written SGD update outside torch.no_grad()."""
    model = nn.Linear(3, 1)
    for _ in range(2):
        model(torch.randn(4, 3)).pow(2).mean().backward()
        for p in model.parameters():
            p -= 0.1 * p.grad


def evaluation_backward_in_inference_mode():
    """An evaluation helper that also calls backward (to log gradient norms) under inference_mode;
    the next training step fails."""
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_step():
        loss = model(torch.randn(4, 3)).pow(2).mean()
        opt.zero_grad(set_to_none=False)  # keeps .grad, zeroes it in place
        loss.backward()
        opt.step()

    train_step()
    loss = model(torch.randn(4, 3)).pow(2).mean()
    with torch.inference_mode():
        model.weight.grad = None  # the evaluation's own gradient, freshly made ...
        loss.backward()  # ... as an inference tensor
    train_step()


def versions_logged_on_cached_features():
    """A debugging loop that logs the version counter of its inputs, features cached under
    inference_mode."""
    backbone, head = nn.Linear(4, 4), nn.Linear(4, 2)
    with torch.inference_mode():
        features = backbone(torch.randn(8, 4))
    for _ in range(2):
        print("input version", features._version)
        head(features.clone()).sum().backward()


def gradient_penalty_through_reentrant_checkpoint():
    """A gradient penalty (autograd.grad on the input) through a reentrant checkpointed block."""
    block = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
    for _ in range(2):
        x = torch.randn(8, 4, requires_grad=True)
        out = checkpoint(block, x, use_reentrant=True)
        (grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
        (out.pow(2).mean() + grad_x.pow(2).mean()).backward()


def features_cached_in_inference_mode():
    """Linear probe trained on features computed once under inference_mode."""
    backbone, head = nn.Linear(4, 4), nn.Linear(4, 2)
    with torch.inference_mode():
        features = backbone(torch.randn(8, 4))
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    for _ in range(2):
        loss = nn.functional.cross_entropy(head(features), torch.zeros(8, dtype=torch.long))
        opt.zero_grad()
        loss.backward()
        opt.step()


def logging_activation_gradients():
    """A loop that logs the gradient norm of the hidden activation."""
    l1, l2 = nn.Linear(3, 4), nn.Linear(4, 1)
    for _ in range(2):
        hidden = torch.relu(l1(torch.randn(5, 3)))
        l2(hidden).pow(2).mean().backward()
        _ = hidden.grad  # None: hidden is not a leaf


class Block(nn.Module):
    """A checkpointed linear layer; ``reentrant`` None: use_reentrant not passed."""

    def __init__(self, reentrant=None):
        super().__init__()
        self.layer, self.kwargs = nn.Linear(4, 4), ({} if reentrant is None else {"use_reentrant": reentrant})

    def forward(self, x):
        return checkpoint(self.layer, x, **self.kwargs)


def _train(model, steps=2):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def gradient_penalty_with_backward_create_graph():
    """Gradient-norm penalty computed from .grad after backward(create_graph=True)."""
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        loss = model(torch.randn(4, 3)).pow(2).mean()
        opt.zero_grad()
        loss.backward(create_graph=True)
        penalty = sum(p.grad.pow(2).sum() for p in model.parameters())
        penalty.backward()
        opt.step()


def per_sample_loss():
    """A loss left per sample (reduction='none') and backwarded directly."""
    model = nn.Linear(3, 1)
    for _ in range(2):
        nn.MSELoss(reduction="none")(model(torch.randn(4, 3)), torch.zeros(4, 1)).backward()


class ScaledClamp(torch.autograd.Function):
    """Straight-through clamp with a learnable scale; backward forgets the scale's gradient."""

    @staticmethod
    def forward(ctx, x, scale):
        return (x * scale).clamp(-1, 1)

    @staticmethod
    def backward(ctx, grad):
        return grad


def custom_activation_in_a_model():
    layer, scale = nn.Linear(3, 3), nn.Parameter(torch.ones(3))
    for _ in range(2):
        ScaledClamp.apply(layer(torch.randn(4, 3)), scale).sum().backward()


def shape_mismatch():
    """Not an autograd mistake: the wrong input width."""
    _train(nn.Linear(3, 1))


REALISTIC = {
    "not_built": frozen_backbone,
    "consumed": lambda: [_backward(loss) for loss in [nn.Linear(3, 1)(torch.randn(2, 3)).pow(2).mean()] * 2],
    "modified_inplace": gan_step_between_backwards,
    "view_inplace": vae_clamps_logvar_in_place,
    "leaf_inplace": manual_sgd_without_no_grad,
    "inference_tensor": features_cached_in_inference_mode,
    "inference_version": versions_logged_on_cached_features,
    "nonleaf_grad": logging_activation_gradients,
    "checkpoint_use_reentrant": lambda: _train(nn.Sequential(nn.Linear(4, 4), Block())),
    "checkpoint_no_grad_input": lambda: _train(nn.Sequential(Block(reentrant=True), nn.Linear(4, 1))),
    "checkpoint_reentrant_grad": gradient_penalty_through_reentrant_checkpoint,
    "create_graph_cycle": gradient_penalty_with_backward_create_graph,
    "non_scalar_output": per_sample_loss,
    "custom_function_gradients": custom_activation_in_a_model,
    "unknown": shape_mismatch,
}


# ---------------------------------------------------------------- chapter 10: hooks, realistic
def gradcam_on_a_model_with_inplace_relu():
    """Grad-CAM style: a full backward hook on a conv block of a model built with inplace ReLUs."""
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(inplace=True), nn.Conv2d(4, 4, 3), nn.ReLU(inplace=True))
    grads = []
    model[2].register_full_backward_hook(lambda module, grad_input, grad_output: grads.append(grad_output[0]))
    model(torch.randn(1, 3, 8, 8)).mean().backward()


def clipping_hooks_that_clamp_in_place():
    """Gradient clipping on activations: forward hooks register tensor hooks that clamp each
    layer's output gradient in place; the last one receives sum()'s expanded gradient."""
    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2))

    def clip_output_gradient(module, args, out):
        out.register_hook(lambda g: g.clamp_(-0.1, 0.1))

    for layer in model:
        layer.register_forward_hook(clip_output_gradient)
    model(torch.randn(8, 4)).sum().backward()


REALISTIC.update(
    {
        "backward_hook_inplace": gradcam_on_a_model_with_inplace_relu,
        "grad_overlap_inplace": clipping_hooks_that_clamp_in_place,
    }
)


@pytest.mark.parametrize("kind", REALISTIC)
def test_realistic_loop_is_recognised(kind):
    """Is the mistake recognised when it happens inside a realistic training loop?"""
    e = explain(live(REALISTIC[kind], kind))
    assert (e.kind, e.family) == (kind, FAMILY[kind])


def test_realistic_backward_in_inference_mode():
    """In a loop whose evaluation ran backward() under inference_mode, is the next training step's
    error (raised by zero_grad here) explained as a .grad spoiled by that backward?"""
    e = explain(raised(evaluation_backward_in_inference_mode))
    assert e.kind == "inference_tensor" and e.details == {"inference_grad": True}


def test_gan_step_points_at_the_optimizer():
    """In the GAN step, does the cause give the saved weight's shape, versions and optimizer.step()?"""
    e = explain(raised(gan_step_between_backwards))
    assert e.details["shape"] in ("8, 1", "1, 8")  # D's last weight, maybe transposed
    assert int(e.details["version"]) > int(e.details["expected"])
    assert "optimizer.step()" in e.cause and "optimizer.step()" in e.fix


def test_rnn_loop_fix_says_detach():
    """Does the RNN loop's explanation tell the learner to detach the hidden state?"""
    assert "h = h.detach()" in explain(raised(rnn_hidden_state_not_detached)).fix


# ---------------------------------------------------------------- other PyTorch versions
OLDER_MESSAGES = {  # wordings of earlier PyTorch releases, as users reported them in issues
    "modified_inplace": (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [64, 109]], which is output 0 of SigmoidBackward0, is at "
        "version 1; expected version 0 instead. Hint: the backtrace further above shows the "
        "operation that failed to compute its gradient. The variable in question was changed in "
        "there or anywhere later. Good luck!"
    ),
    "consumed": (
        "Trying to backward through the graph a second time, but the saved intermediate results "
        "have already been freed. Specify retain_graph=True when calling backward the first time."
    ),
    "checkpoint_use_reentrant": (
        "torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False "
        "explicitly. The default value of use_reentrant will be updated to be False in the "
        "future."
    ),
    "view_inplace": (
        "Output 0 of UnbindBackward0 is a view and is being modified inplace. This view is the "
        "output of a function that returns multiple views."
    ),
}


@pytest.mark.parametrize("kind", OLDER_MESSAGES)
def test_older_wordings_match_on_their_stable_parts(kind):
    """Is an older PyTorch's wording of the same message still recognised, with its details?"""
    e = explain(OLDER_MESSAGES[kind])
    assert e.kind == kind
    if "op" in e.details:
        assert e.details["op"] in ("Sigmoid", "Unbind")  # the Backward0 suffix is dropped


def test_anomaly_mode_hint_does_not_matter():
    """Is the in-place error still fully read when anomaly detection changes its hint?"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            e = explain(raised(_modified_sigmoid))
    assert e.kind == "modified_inplace" and e.details["version"] == "1"


# ---------------------------------------------------------------- inputs of every sort
@pytest.mark.parametrize("garbage", [None, 42, b"\xff\xfe", RuntimeError(), "", object(), ["x"]])
def test_explain_never_raises(garbage):
    """Does explain() answer 'unknown' for anything but an autograd message, without raising?"""
    e = explain(garbage)
    assert e.kind == "unknown" and e.family == "unknown" and str(e)


def test_an_object_whose_str_fails_is_unknown():
    """Does explain() survive an exception whose message cannot even be turned into text?"""

    class Broken(Exception):
        def __str__(self):
            raise ValueError("no")

    assert explain(Broken()).kind == "unknown"


def test_warning_forms_are_equivalent():
    """Do a WarningMessage, the warning itself and its text give the same explanation?"""
    w = warned(TINY["nonleaf_grad"], "nonleaf_grad")
    assert explain(w) == explain(w.message) == explain(str(w.message))


def test_a_wrapped_error_is_explained_by_its_cause():
    """Is an autograd error re-raised by a framework ('raise ... from e') still recognised?"""
    try:
        try:
            _consumed()
        except RuntimeError as inner:
            raise ValueError("training step 3 failed") from inner
    except ValueError as outer:
        assert explain(outer).kind == "consumed"


def test_the_package_exposes_explain():
    """Is autograder.explain the function (not its module), even after the module was imported?"""
    import autograder.explain.ext

    assert autograder.explain is explain and "explain" in autograder.__all__


# ---------------------------------------------------------------- lessons
# Kinds no chapter teaches: their lesson is PyTorch's documentation (none at present).
DOCUMENTED_ELSEWHERE: dict[str, str] = {}


@pytest.mark.parametrize("kind", TINY)
def test_lesson_exists(kind):
    """Does the lesson of each kind exist in the checkout, with the section its anchor names (or,
    for a kind no chapter teaches, is it PyTorch's page on the subject)?"""
    where, anchor = explain(live(TINY[kind], kind)).lesson.split("#")
    if kind in DOCUMENTED_ELSEWHERE:
        assert where == DOCUMENTED_ELSEWHERE[kind] and anchor
        return
    assert (COURSE_ROOT / where).is_file(), where
    assert anchor in heading_ids(COURSE_ROOT / where)


@pytest.mark.parametrize("folder", ["notebooks", "exercises/ex05_inplace", "."])
def test_lesson_link_is_relative_to_the_explaining_notebook(folder):
    """From the folder of the notebook that explains (a lesson, an exercise, the course root), does
    the HTML explanation link to the lesson file and its heading, relative to that folder?"""
    e = explain(raised(_modified_sigmoid))
    start = COURSE_ROOT / folder
    href = e.href(start)
    path, fragment = href.split("#")
    assert not os.path.isabs(path) and (start / path).resolve() == (COURSE_ROOT / e.lesson.split("#")[0])
    # the form JupyterLab follows in a lesson it has just opened: the id of the heading's cell
    notebook, anchor = e.lesson.split("#")
    assert fragment.startswith("cell-id=") and anchor_of_cell(COURSE_ROOT / notebook, fragment[8:]) == anchor
    cwd = os.getcwd()
    try:
        os.chdir(start)  # Jupyter starts a kernel in its notebook's folder
        page = e._repr_html_()
    finally:
        os.chdir(cwd)
    link = re.search(r'Lesson:</span><span><a href="([^"]+)">([^<]+)</a>', page)
    assert link and tuple(map(html.unescape, link.groups())) == (href, e.lesson), page
    # the same words as the text version, laid out by the browser instead of in 100-character lines
    assert html.unescape(re.sub(r"<[^>]+>", " ", page)).split() == str(e).split()


def test_a_url_lesson_is_linked_as_it_is():
    """Is a lesson that is a URL (PyTorch's documentation) linked unchanged from any folder?"""
    e = dataclasses.replace(
        explain(raised(TINY["custom_function_gradients"])),
        lesson="https://docs.pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd",
    )
    assert e.href(COURSE_ROOT / "notebooks") == e.lesson and f'href="{e.lesson}"' in e._repr_html_()


# ---------------------------------------------------------------- the command line
PASTED = """Traceback (most recent call last):
  File "train.py", line 41, in <module>
    g_loss.backward()
  File "/usr/lib/python3/site-packages/torch/_tensor.py", line 581, in backward
    torch.autograd.backward(
RuntimeError: {message}
"""


def test_command_explains_a_pasted_traceback():
    """Does `python -m autograder explain` read a traceback on stdin and print its explanation?"""
    error = raised(gan_step_between_backwards)
    text = PASTED.format(message=error)
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "explain"],
        input=text,
        text=True,
        capture_output=True,
        cwd=COURSE_ROOT,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "(modified_inplace)" in run.stdout and "optimizer.step()" in run.stdout
    assert f"[{explain(error).details['shape']}]" in run.stdout


def test_command_reads_a_file_and_says_unknown_otherwise(tmp_path):
    """Does the command read FILE, and answer 'unknown' (exit 0) for a non-autograd error?"""
    path = tmp_path / "error.txt"
    path.write_text("".join(traceback.format_exception(raised(TINY["unknown"]))))
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "explain", str(path)],
        text=True,
        capture_output=True,
        cwd=COURSE_ROOT,
        timeout=60,
    )
    assert run.returncode == 0 and "(unknown)" in run.stdout


# ---------------------------------------------------------------- the IPython extension
SHELL_SCRIPT = textwrap.dedent("""
    import sys, warnings
    from IPython.core.interactiveshell import InteractiveShell
    ip = InteractiveShell.instance()
    ip.run_line_magic("colors", "nocolor")
    warnings.simplefilter("always")
    ip.run_cell("import torch, autograder")
    ERROR = "torch.tensor([1.0, 2.0]).sum().backward()"
    WARNING = "(torch.ones(2, requires_grad=True) * 2).grad"
    def run(state, cells):
        for label, cell in cells:
            print(f"=== {state} {label}", flush=True)
            print(f"=== {state} {label}", file=sys.stderr, flush=True)
            ip.run_cell(cell)
    run("before", [("error", ERROR), ("syntax", "x = (1,")])
    ip.run_line_magic("load_ext", "autograder")
    VALUE_ERROR = "torch.distributed.barrier()"  # outside a process group: a ValueError
    # a forward hook that returns a handle (TypeError); update() before any step() (AssertionError)
    TYPE_ERROR = ("m = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())\\n"
                  "m[0].register_forward_hook(lambda mod, a, o: o.register_hook(print))\\nm(torch.ones(1, 2))")
    ASSERTION = ("s = torch.amp.GradScaler('cpu')\\n"
                 "s.scale(torch.ones(1, requires_grad=True).sum()).backward()\\ns.update()")
    SKIPPED_STEP = ("net = torch.nn.Linear(2, 1)\\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\\n"
                    "sched = torch.optim.lr_scheduler.StepLR(opt, 1)\\n"
                    "scaler = torch.amp.GradScaler('cpu', init_scale=1e38)\\n"
                    "scaler.scale(net(torch.full((1, 2), 10.0)).sum()).backward()\\n"
                    "scaler.step(opt)\\nscaler.update()\\nsched.step()")
    # a check's own failure (an AssertionError) quoting an autograd message: the check explains itself
    CHECK_FAILED = ("from autograder.check import CheckFailed\\n"
                    "raise CheckFailed('element 0 of tensors does not require grad and does not have a grad_fn')")
    run("loaded", [("error", ERROR), ("other", "1 / 0"), ("warning", WARNING),
                   ("syntax", "x = (1,"), ("value error", VALUE_ERROR), ("other value error", "int('x')"),
                   ("name error", "count_casts(1)"), ("type error", TYPE_ERROR), ("assertion", ASSERTION),
                   ("other type error", "len(1)"), ("skipped step", SKIPPED_STEP),
                   ("check failed", CHECK_FAILED)])
    ip.run_line_magic("unload_ext", "autograder")
    run("unloaded", [("error", ERROR), ("warning", WARNING)])
    print("=== restored"); print(ip.custom_exceptions, warnings.showwarning.__module__)
""")


def _sections(text: str) -> dict:
    parts = text.split("=== ")[1:]
    return {p.split("\n", 1)[0]: p.split("\n", 1)[1] if "\n" in p else "" for p in parts}


def test_ipython_extension_adds_explanations_after_tracebacks_and_warnings():
    """With %load_ext autograder, does the explanation follow PyTorch's traceback and warning, and
    does %unload_ext remove it?"""
    run = subprocess.run(
        [sys.executable, "-c", SHELL_SCRIPT], text=True, capture_output=True, cwd=COURSE_ROOT, timeout=120
    )
    out, err = _sections(run.stdout), _sections(run.stderr)
    explains = "autograder explains"
    assert "RuntimeError" in out["before error"] and explains not in out["before error"]
    assert out["loaded syntax"] == out["before syntax"] and "SyntaxError" in out["loaded syntax"]
    loaded = out["loaded error"]
    assert "RuntimeError" in loaded and "(not_built)" in loaded
    assert loaded.index("does not require grad") < loaded.index(explains)
    assert "ZeroDivisionError" in out["loaded other"] and explains not in out["loaded other"]
    value_error = out["loaded value error"]  # PyTorch raises some (DDP, GradScaler) as ValueError
    assert "ValueError" in value_error and "(ddp_no_process_group)" in value_error
    assert "ValueError" in out["loaded other value error"] and explains not in out["loaded other value error"]
    assert "NameError" in out["loaded name error"] and "(name_not_defined)" in out["loaded name error"]
    type_error, assertion = out["loaded type error"], out["loaded assertion"]  # not only RuntimeErrors
    assert "TypeError" in type_error and "(forward_hook_returned_value)" in type_error
    assert "AssertionError" in assertion and "(scaler_update_before_step)" in assertion
    assert "TypeError" in out["loaded other type error"] and explains not in out["loaded other type error"]
    assert "CheckFailed" in out["loaded check failed"] and explains not in out["loaded check failed"]
    # a warning is told apart by the cell that warned: the scheduler after a step GradScaler skipped
    assert "(scaler_skipped_step)" in err["loaded skipped step"]
    warning = err["loaded warning"]
    assert warning.index("UserWarning") < warning.index(explains) and "(nonleaf_grad)" in warning
    assert "RuntimeError" in out["unloaded error"] and explains not in out["unloaded error"]
    assert "UserWarning" in err["unloaded warning"] and explains not in err["unloaded warning"]
    assert out["restored"].strip() == "() warnings"  # IPython's handler and warnings' own


def test_extension_in_a_jupyter_kernel():
    """In a real Jupyter kernel (as JupyterLab runs it), is the explanation an output placed after the
    error output, only while the extension is loaded?"""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [
        "%load_ext autograder",
        "import torch\nloss = torch.tensor([1.0, 2.0]).sum()",
        "loss.backward()",
        "%unload_ext autograder",
        "loss.backward()",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(COURSE_ROOT)}}
    ).execute()
    loaded, unloaded = nb.cells[2].outputs, nb.cells[4].outputs
    assert [o.output_type for o in loaded] == ["error", "display_data"]
    assert loaded[0].ename == "RuntimeError" and "(not_built)" in loaded[1].data["text/plain"]
    # the kernel runs in the course root here, so the lesson link is ./notebooks/01_...#cell-id=<the
    # Pitfalls heading's cell>
    page = loaded[1].data["text/html"]
    link = re.search(r'Lesson:</span><span><a href="\./notebooks/01_dynamic_graph\.ipynb#cell-id=([^"]*)"', page)
    assert link and "Pitfalls" in anchor_of_cell(COURSE_ROOT / "notebooks/01_dynamic_graph.ipynb", link[1]), link
    assert [o.output_type for o in unloaded] == ["error"]


def test_the_modified_inplace_message_is_written_as_pytorch_writes_it():
    """Does the message SavedTensorMeter raises (modified_inplace_message) match PyTorch's own
    wording with the same details, so trace() and explain() read both alike?"""
    x = torch.randn(2, 3, requires_grad=True)
    y = x.sigmoid()
    y.add_(1)
    with pytest.raises(RuntimeError) as pytorch:
        y.sum().backward()
    ours = modified_inplace_message(y.type(), y.shape, y._version, 0)
    details = ("type", "shape", "version", "expected")
    theirs = MODIFIED_INPLACE.search(str(pytorch.value))
    assert [MODIFIED_INPLACE.search(ours)[k] for k in details] == [theirs[k] for k in details]
    assert explain(ours).kind == "modified_inplace" and explain(ours).details["shape"] == "2, 3"


# ---------------------------------------------------------------- chapter 12: torch.func, NaN gradients
def _vmap_calls_item():
    torch.func.vmap(lambda x: x / x.abs().max().item())(torch.ones(3, 2))


def _vmap_branches_on_a_value():
    torch.func.vmap(lambda x: x if x.sum() > 0 else -x)(torch.ones(3, 2))


def _vmap_fills_an_unbatched_buffer():
    def fill(x):
        out = torch.zeros(2)
        out[:] = x * 2
        return out

    torch.func.vmap(fill)(torch.ones(3, 2))


def _backward_inside_grad():
    def loss_fn(w):
        loss = (w**2).sum()
        loss.backward()
        return loss

    torch.func.grad(loss_fn)(torch.ones(2))


def _nan_found_by_anomaly_mode():
    x = torch.tensor([0.0, 4.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anomaly mode's own warnings
        with torch.autograd.detect_anomaly():
            torch.where(x > 0, x.sqrt(), torch.zeros_like(x)).sum().backward()


def _second_derivative_without_create_graph():
    x = _leaf()
    (g,) = torch.autograd.grad((x**3).sum(), x)
    torch.autograd.grad(g.sum(), x)


CHAPTER_12_TINY = {
    "vmap_item": _vmap_calls_item,
    "vmap_control_flow": _vmap_branches_on_a_value,
    "vmap_inplace": _vmap_fills_an_unbatched_buffer,
    "backward_in_transform": _backward_inside_grad,
    "func_grad_not_scalar": lambda: torch.func.grad(lambda w: w * 2)(torch.ones(3)),
    "anomaly_nan": _nan_found_by_anomaly_mode,
}
FAMILY.update(dict.fromkeys(CHAPTER_12_TINY, "usage"))
TINY.update(CHAPTER_12_TINY)


def test_chapter_12_errors_are_runtime_errors_pointing_to_chapter_12():
    """Are the errors of chapter 12 RuntimeErrors (so %load_ext autograder explains them), each
    explained with a link to chapter 12's Pitfalls?"""
    for kind, program in CHAPTER_12_TINY.items():
        error = raised(program)
        assert isinstance(error, RuntimeError), (kind, type(error))
        e = explain(error)
        assert e.kind == kind and e.lesson.startswith("notebooks/12_higher_order.ipynb#"), kind


def test_anomaly_nan_names_the_node_and_the_where_fix():
    """Does the explanation of anomaly mode's NaN name the Node (SqrtBackward0, in full) and give
    the double-where fix?"""
    e = explain(raised(_nan_found_by_anomaly_mode))
    assert e.details["node"] == "SqrtBackward0" and "SqrtBackward0" in e.cause
    assert "torch.where(x > 0, torch.where(x > 0, x, 1)" in e.fix


def test_second_derivative_without_create_graph_is_not_built_and_says_create_graph():
    """Is differentiating a gradient computed without create_graph (the code differentiates twice and
    passes no create_graph) a graph not built, whose fix says to pass create_graph=True?"""
    e = explain(raised(_second_derivative_without_create_graph))
    assert (e.kind, e.family) == ("second_derivative_no_create_graph", "not built")
    assert "create_graph=True" in e.fix and "create_graph=True" in e.cause


def test_func_grad_not_scalar_gives_the_dimensions():
    """Does the explanation of torch.func.grad on a non-scalar say how many dimensions it got?"""
    e = explain(raised(lambda: torch.func.grad(lambda w: w.outer(w))(torch.ones(3))))
    assert e.details["dims"] == "2" and "2 dimension(s)" in e.cause


# ---------------------------------------------------------------- chapter 11: mixed precision
def _bfloat16_result_meets_float32_layer():
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = nn.Linear(2, 3)(torch.ones(1, 2))
    nn.Linear(3, 1)(h)  # after the region: nothing casts h


def _scaler_step(unscale_twice=False, steps=1):
    net = nn.Linear(2, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    for _ in range(steps):
        scaler.scale(net(torch.ones(1, 2)).sum()).backward()
        scaler.unscale_(opt)
        if unscale_twice:
            scaler.unscale_(opt)
        scaler.step(opt)  # no scaler.update()


def _scaler_on_half_parameters():
    net = nn.Linear(2, 1).half()
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(net(torch.ones(1, 2).half()).float().sum()).backward()
    scaler.unscale_(torch.optim.SGD(net.parameters(), lr=0.1))


def _cuda_autocast_everywhere():
    """autocast('cuda') and GradScaler('cuda') where no GPU is usable (warnings); on a machine with a
    GPU, torch.cuda.is_available() is made to say False, as it does on a machine without one."""
    from unittest import mock  # here, so that chapter 11's tests stay at the end of the file

    with mock.patch.object(torch.cuda, "is_available", lambda: False):
        with torch.autocast("cuda", dtype=torch.float16):
            pass
        torch.amp.GradScaler("cuda")


FAMILY.update(
    {
        "autocast_dtype_mismatch": "usage",
        "scaler_call_order": "usage",
        "scaler_fp16_grads": "usage",
        "amp_device_unavailable": "usage",
    }
)
WARNING_KINDS.add("amp_device_unavailable")
CHAPTER_11_TINY = {
    "autocast_dtype_mismatch": _bfloat16_result_meets_float32_layer,
    "scaler_call_order": lambda: _scaler_step(unscale_twice=True),
    "scaler_fp16_grads": _scaler_on_half_parameters,
    "amp_device_unavailable": _cuda_autocast_everywhere,
}
TINY.update(CHAPTER_11_TINY)


@pytest.mark.parametrize("kind", CHAPTER_11_TINY)
def test_mixed_precision_kinds_are_recognised_and_link_chapter_11(kind):
    """Is each mixed-precision mistake, raised live, recognised with its family, and does its lesson
    link the Pitfalls of chapter 11?"""
    e = explain(live(CHAPTER_11_TINY[kind], kind))
    assert (e.kind, e.family) == (kind, FAMILY[kind])
    where, anchor = e.lesson.split("#")
    assert where == "notebooks/11_mixed_precision.ipynb" and anchor in heading_ids(COURSE_ROOT / where)


def test_every_dtype_mismatch_wording_of_autocast_is_one_kind():
    """Are the messages of linear, matmul, conv and an indexed write of a bfloat16 result into float32
    all autocast_dtype_mismatch, and a shape mismatch of the same ops not?"""
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = nn.Linear(4, 4)(torch.ones(2, 4))
    programs = [
        lambda: h @ torch.ones(4, 4),
        lambda: nn.functional.conv1d(h.unsqueeze(0), torch.ones(3, 2, 1)),
        lambda: torch.zeros(5, 4).index_put_((torch.tensor([0, 1]),), h),
    ]
    assert [explain(raised(p)).kind for p in programs] == ["autocast_dtype_mismatch"] * 3
    assert explain(raised(lambda: h.float() @ torch.ones(3, 4))).kind == "unknown"


def test_scaler_call_order_names_the_call():
    """Does a forgotten update() (the next unscale_ comes after step()) give scaler_call_order too,
    and does the cause quote which call came out of order?"""
    e = explain(raised(lambda: _scaler_step(steps=2)))
    assert e.kind == "scaler_call_order" and "unscale_() is being called after step()" in e.cause
    assert "has already been called" in explain(raised(lambda: _scaler_step(unscale_twice=True))).cause


# ---------------------------------------------------------------- chapter 13: torch.compile
# Dynamo's graph breaks, raised by torch.compile(fullgraph=True) or under
# torch._dynamo.error_on_graph_break(True); its errors subclass RuntimeError.
def _compiled(fn, fullgraph=True):
    """A program that compiles ``fn`` (backend "eager": no C compiler) and runs it on a 4-element
    input, raising at the first graph break (fullgraph=True, or error_on_graph_break without it)."""

    def program():
        import logging

        torch._logging.set_logs(dynamo=logging.ERROR)  # the graph-break warnings print file paths
        torch._dynamo.reset()
        try:
            with torch._dynamo.error_on_graph_break(True):
                torch.compile(fn, fullgraph=fullgraph, backend="eager")(torch.randn(4, requires_grad=True))
        finally:
            torch._dynamo.reset()

    return program


def _prints(x):
    y = x.sin()
    print("inside")
    return y.cos()


def _if_on_item(x):
    y = x.sin()
    if y.sum().item() > 0:
        return y * 2
    return y - 1


def _if_on_tensor(x):
    y = x.sin()
    if y.sum() > 0:
        return y * 2
    return y - 1


def _retains(x):
    y = x.sin()
    y.retain_grad()
    return y.cos()


FAMILY.update(
    {
        "compile_builtin": "usage",
        "compile_item": "usage",
        "compile_data_dependent": "usage",
        "compile_retain_grad": "usage",
    }
)
TINY.update(
    {
        "compile_builtin": _compiled(_prints),
        "compile_item": _compiled(_if_on_item, fullgraph=False),
        "compile_data_dependent": _compiled(_if_on_tensor),
        "compile_retain_grad": _compiled(_retains),
    }
)


def test_compile_errors_are_runtime_errors():
    """Are Dynamo's graph-break errors RuntimeErrors (so that %load_ext autograder, whose handler
    is set for RuntimeError, explains them), and is an .item() branch under fullgraph=True (where
    .item() is captured and the if on it fails) explained as data-dependent?"""
    for program in (_compiled(_prints), _compiled(_if_on_item)):
        assert isinstance(raised(program), RuntimeError)
    assert explain(raised(_compiled(_if_on_item))).kind == "compile_data_dependent"


def test_compile_item_graph_break_reason():
    """Is the reason torch._dynamo.explain gives for an .item() graph break (without fullgraph)
    explained as compile_item?"""
    import logging

    torch._logging.set_logs(dynamo=logging.ERROR)
    torch._dynamo.reset()
    reasons = torch._dynamo.explain(_if_on_item)(torch.randn(4)).break_reasons
    torch._dynamo.reset()
    assert explain(reasons[0].reason).kind == "compile_item"


# ---------------------------------------------------------------- chapter 14: DDP (live, in 2 processes)
def _ddp_two_iterations(rank, world_size, reentrant_checkpoint, find_unused):
    from torch.nn.parallel import DistributedDataParallel

    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.unused = nn.Linear(4, 4), nn.Linear(4, 1), nn.Linear(4, 1)

        def forward(self, x):
            h = checkpoint(self.a, x, use_reentrant=True) if reentrant_checkpoint else self.a(x)
            return self.b(h)

    ddp = DistributedDataParallel(Net(), find_unused_parameters=find_unused)
    for _ in range(2):
        ddp(torch.ones(2, 4, requires_grad=True)).sum().backward()


def _ddp(reentrant_checkpoint, find_unused):
    from autograder.ranks import run_ranks

    return lambda: run_ranks(_ddp_two_iterations, 2, reentrant_checkpoint, find_unused)


def _ddp_without_a_group():
    from torch.nn.parallel import DistributedDataParallel

    DistributedDataParallel(nn.Linear(2, 2))


FAMILY.update({"ddp_ready_twice": "usage", "ddp_unused_parameters": "usage", "ddp_no_process_group": "usage"})
TINY.update(
    {
        "ddp_ready_twice": _ddp(True, True),
        "ddp_unused_parameters": _ddp(False, False),
        "ddp_no_process_group": _ddp_without_a_group,
    }
)


def test_ddp_errors_come_back_from_the_ranks_and_are_explained():
    """Do DDP's two errors, raised in the ranks and re-raised by run_ranks (RankError, a
    RuntimeError), keep PyTorch's words and get their own kinds, and does the fix of each
    (use_reentrant=False; find_unused_parameters=True) run?"""
    from autograder.ranks import RankError

    for program, kind in ((_ddp(True, True), "ddp_ready_twice"), (_ddp(False, False), "ddp_unused_parameters")):
        error = raised(program)
        assert isinstance(error, RankError) and isinstance(error, RuntimeError)
        assert explain(error).kind == kind
    _ddp(False, True)()


# ---------------------------------------------------------------- not autograd's: a cell run too early
FAMILY["name_not_defined"] = "notebook"
TINY["name_not_defined"] = lambda: count_casts  # noqa: F821 -- the point: an answer cell not run yet


def test_a_name_not_defined_says_which_cell_to_run():
    """Is a NameError (a check cell run before its answer cell) explained as a cell run too early,
    naming the missing name and linking the start page's 'How to check an answer'?"""
    e = explain(raised(TINY["name_not_defined"]))
    assert (e.kind, e.family) == ("name_not_defined", "notebook")
    assert "count_casts is not defined" in e.cause and "Run the cell that defines count_casts" in e.fix
    where, anchor = e.lesson.split("#")
    assert where == "notebooks/00_start.ipynb" and "check-an-answer" in anchor.lower()


# ---------------------------------------------------------------- chapters 9-14: the errors learners meet
# Collected from the lessons' pitfalls, the exercises' typical mistakes and the messages most reported
# on PyTorch's tracker and forums for each topic. Each program raises (or warns) live; where one
# message has several causes, one program per cause, each with what tells it apart.
def _function(backward, forward=None, setup_context=None):
    """An autograd.Function ``F`` with these staticmethods (forward(ctx, x): x * 2 by default)."""
    body = {"forward": staticmethod(forward or (lambda ctx, x: x * 2)), "backward": staticmethod(backward)}
    if setup_context:
        body["setup_context"] = staticmethod(setup_context)
    return type("F", (torch.autograd.Function,), body)


def _saves_a_number():
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x, k)
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    Scale.apply(_leaf(), 2)


def _function_instantiated():
    _function(lambda ctx, g: g * 2)()(_leaf())


def _function_without_backward():
    F = type("F", (torch.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x * 2)})
    F.apply(_leaf()).sum().backward()


def _function_under_forward_mode():
    import torch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        _function(lambda ctx, g: g * 2).apply(fwAD.make_dual(torch.ones(2), torch.ones(2)))


def _forward_with_ctx_and_setup_context():
    _function(lambda ctx, g: g * 2, setup_context=lambda ctx, inputs, output: None).apply(_leaf())


def _two_outputs_one_gradient():
    class Pair(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a, b = Pair.apply(_leaf())
    (a + b).sum().backward()


class _SquareMissingTwo(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # should be 2 * g * x


def _gradcheck_wrong_backward():
    torch.autograd.gradcheck(_SquareMissingTwo.apply, (torch.randn(3, dtype=torch.float64, requires_grad=True),))


class _Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


def _gradcheck_in_float32():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.autograd.gradcheck(_Square.apply, (torch.randn(3, requires_grad=True),), eps=1e-6)


class _SquareDetached(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x.detach()  # correct once, not differentiable again


def _gradgradcheck_detached_backward():
    torch.autograd.gradgradcheck(_SquareDetached.apply, (torch.randn(3, dtype=torch.float64, requires_grad=True),))


def _gradcheck_warns_on_float32():
    try:
        torch.autograd.gradcheck(_Square.apply, (torch.randn(3, requires_grad=True),))
    except RuntimeError:
        pass


def _post_accumulate_hook_clamps():
    w = _leaf()
    w.register_post_accumulate_grad_hook(lambda p: p.grad.clamp_(-1, 1))
    (w * 2).sum().backward()


def _forward_hook_returns_a_handle():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
    model[0].register_forward_hook(lambda m, args, out: out.register_hook(print))
    model(torch.randn(2, 4))


def _forward_hook_without_args():
    layer = nn.Linear(2, 2)
    layer.register_forward_hook(lambda module, output: None)
    layer(torch.ones(1, 2))


def _backward_hook_without_grad_input():
    layer = nn.Linear(2, 2)
    layer.register_full_backward_hook(lambda module, grad_output: None)
    layer(torch.ones(1, 2)).sum().backward()


def _backward_hook_returns_two():
    layer = nn.Linear(2, 2)
    layer.register_full_backward_hook(lambda m, grad_input, grad_output: (grad_input[0], grad_input[0]))
    layer(torch.ones(1, 2, requires_grad=True)).sum().backward()


def _backward_pre_hook_returns_two():
    layer = nn.Linear(2, 2)
    layer.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0], grad_output[0]))
    layer(torch.ones(1, 2, requires_grad=True)).sum().backward()


def _backward_hook_returns_a_bare_tensor():
    layer = nn.Linear(2, 2)
    layer.register_full_backward_hook(lambda m, grad_input, grad_output: grad_input[0] * 2)
    layer(torch.ones(1, 2, requires_grad=True)).sum().backward()


def test_module_backward_hooks_returning_the_wrong_thing():
    """A backward pre-hook returning two gradients for one output names grad_output; a full backward
    hook returning a bare tensor (TransformerLens#1160) is the module hook's, not a tensor hook's."""
    pre = explain(raised(_backward_pre_hook_returns_two))
    assert pre.kind == "backward_hook_count" and "pre-hook returned 2" in pre.cause and "grad_output" in pre.cause
    bare = explain(raised(_backward_hook_returns_a_bare_tensor))
    assert bare.kind == "module_hook_changed_grad" and "(grad_input[0] * 2,)" in bare.fix
    assert explain(raised(_hook_returns_the_norm)).kind == "hook_changed_grad"  # a tensor hook: its own kind


def _unpack_returns_a_key():
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 1):
        y = (_leaf() * 2).sin()
    y.sum().backward()


def _unpack_hook_keeps_bfloat16():
    x, w = torch.ones(2, 3, requires_grad=True), torch.ones(3, 3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.to(torch.bfloat16), lambda t: t):
        y = (x @ w).sum()
    y.backward()  # no autocast anywhere: the unpack hook returned bfloat16


def _unpack_hook_loses_the_key():
    store = {}
    with torch.autograd.graph.saved_tensors_hooks(lambda t: len(store), lambda key: store[key]):
        y = (_leaf() * 2).sin()
    y.sum().backward()


class _MatmulFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.t(), x.t() @ g


def _function_backward_under_autocast():
    x, w = torch.ones(2, 3, requires_grad=True), torch.ones(3, 3, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = _MatmulFunction.apply(nn.Linear(3, 3)(x), w)
    y.float().sum().backward()


def _float64_data_meets_float32_layer():
    import numpy as np

    nn.Linear(3, 1)(torch.from_numpy(np.ones((2, 3))))


def _step_without_scale():
    net = nn.Linear(2, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    net(torch.ones(1, 2)).sum().backward()
    scaler.step(opt)


def _scaler_steps_another_model():
    net, other = nn.Linear(2, 1), nn.Linear(2, 1)
    opt = torch.optim.SGD(other.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(net(torch.ones(1, 2)).sum()).backward()
    scaler.step(opt)


def _scaler_update_then_step():
    net = nn.Linear(2, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(net(torch.ones(1, 2)).sum()).backward()
    scaler.update()
    scaler.step(opt)


def _scaler_unscale_update_step():
    net = nn.Linear(2, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    for _ in range(2):
        scaler.scale(net(torch.ones(1, 2)).sum()).backward()
        scaler.unscale_(opt)
        scaler.update()
        scaler.step(opt)


def _scaler_updates_twice():
    net = nn.Linear(2, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(net(torch.ones(1, 2)).sum()).backward()
    scaler.step(opt)
    scaler.update()
    scaler.update()


def _finish_iteration(gs, opt):
    gs.update()
    gs.step(opt)


def _loop_calls_a_function_that_updates_then_steps():
    net = nn.Linear(2, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    gs = torch.amp.GradScaler("cpu")  # a name without "scaler" in it
    for _ in range(2):
        gs.scale(net(torch.ones(1, 2)).sum()).backward()
        gs.unscale_(opt)
        _finish_iteration(gs, opt)


def _loop_forgets_update_that_a_string_names():
    net = nn.Linear(2, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    plan = "scale, then scaler.step(opt), then scaler.update()"
    for _ in range(2):
        scaler.scale(net(torch.ones(1, 2)).sum()).backward()
        scaler.step(opt)
    return plan


def _mask_filled_with_minus_1e9():
    with torch.autocast("cpu", dtype=torch.float16):
        scores = torch.ones(2, 2) @ torch.ones(2, 2)
    scores.masked_fill_(torch.ones(2, 2, dtype=torch.bool), -1e9)


def _cuda_amp_old_names():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # no GPU here: GradScaler disables itself
        warnings.simplefilter("always", FutureWarning)
        torch.cuda.amp.GradScaler()


def _cpu_autocast_in_float64():
    with torch.autocast("cpu", dtype=torch.float64):
        pass


def _scheduler_before_optimizer():
    opt = torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=0.1)
    torch.optim.lr_scheduler.StepLR(opt, 1).step()


def _grad_under_save_on_cpu():
    with torch.autograd.graph.save_on_cpu():
        torch.func.grad(lambda x: x.sin().sum())(torch.ones(2))


def _vmap_over_dropout():
    torch.func.vmap(nn.Dropout(0.5))(torch.ones(3, 4))


def _grad_mutates_a_global():
    total = torch.zeros(3)

    def loss(x):
        total.add_(x)
        return (x * total).sum()

    torch.func.grad(loss)(torch.ones(3))


def _grad_over_batch_norm_in_training():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    params = dict(model.named_parameters())
    torch.func.grad(lambda p, x: torch.func.functional_call(model, p, (x,)).sum())(params, torch.randn(8, 4))


def _vmap_maps_the_parameters_too():
    torch.func.vmap(lambda w, x: (w * x).sum())(torch.ones(3, 2), torch.ones(4, 2))


def _vmap_in_dims_too_short():
    torch.func.vmap(lambda w, x: (w * x).sum(), in_dims=(0,))(torch.ones(3, 2), torch.ones(3, 2))


def _grad_wrt_an_unused_parameter():
    x, unused = _leaf(), _leaf()
    torch.autograd.grad((x * 2).sum(), [x, unused])


def _grad_of_a_pair():
    torch.func.grad(lambda x: (x.sum(), x))(torch.ones(2))


def _numpy_of_a_parameter():
    nn.Linear(2, 2).weight.numpy()


def _numpy_inside_grad():
    torch.func.grad(lambda x: torch.tensor(x.numpy()).sum())(torch.ones(2))


def _logging_hook(x):
    y = x.sin()
    y.register_hook(lambda g: _LOG.append(g.norm()))
    return y.cos()


_LOG = []


def _backward_inside(x):
    loss = x.sin().sum()
    loss.backward()
    return loss


def _inductor_without_a_compiler():
    import torch._inductor.config as inductor_config

    torch._dynamo.reset()
    old, inductor_config.cpp.cxx = inductor_config.cpp.cxx, ("no-such-compiler",)
    try:
        torch.compile(lambda x: x.sin() + 1, backend="inductor")(torch.ones(3))
    finally:
        inductor_config.cpp.cxx = old
        torch._dynamo.reset()


def _port_taken():
    import socket
    from datetime import timedelta

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        torch.distributed.TCPStore("127.0.0.1", s.getsockname()[1], 1, is_master=True, timeout=timedelta(seconds=5))


def _ddp_rank(rank, world_size, case):
    from torch.nn.parallel import DistributedDataParallel

    if case == "frozen":
        DistributedDataParallel(nn.Linear(2, 2).requires_grad_(False))
    elif case == "mismatch":
        DistributedDataParallel(nn.Linear(2, 2 + rank))
    elif case == "static":

        class Branchy(nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)

            def forward(self, x, i):
                return self.a(x) if i % 2 else self.b(self.a(x))

        ddp = DistributedDataParallel(Branchy(), static_graph=True)
        for i in range(4):
            ddp(torch.ones(1, 2), i).sum().backward()


def _ddp_case(case):
    from autograder.ranks import run_ranks

    return lambda: run_ranks(_ddp_rank, 2, case)


def _setup_cell_skipped():
    return error_of  # noqa: F821 -- a name the lessons' set-up cells define, never run here


class _CastSeparately(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu")
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        return g * 2


def _custom_fwd_with_setup_context():
    _CastSeparately.apply(_leaf()).sum().backward()


def _vmap_over_batch_norm_in_training():
    torch.func.vmap(nn.BatchNorm1d(4))(torch.randn(3, 8, 4))


def _vmap_copies_into_a_fresh_tensor():
    def fill(y):
        out = torch.zeros(5)
        out.copy_(y)
        return out

    torch.func.vmap(fill)(torch.randn(3, 5))


CHAPTERS_9_14 = {
    "custom_fwd_setup_context": _custom_fwd_with_setup_context,
    "vmap_batch_norm": _vmap_over_batch_norm_in_training,
    "custom_function_save_non_tensor": _saves_a_number,
    "custom_function_legacy": _function_instantiated,
    "custom_function_no_backward": _function_without_backward,
    "custom_function_no_jvp": _function_under_forward_mode,
    "custom_function_setup_context_signature": _forward_with_ctx_and_setup_context,
    "custom_function_backward_arity": _two_outputs_one_gradient,
    "gradcheck_mismatch": _gradcheck_wrong_backward,
    "gradcheck_float32": _gradcheck_in_float32,
    "gradcheck_not_double": _gradcheck_warns_on_float32,
    "gradgradcheck_mismatch": _gradgradcheck_detached_backward,
    "post_accumulate_returned": _post_accumulate_hook_clamps,
    "forward_hook_returned_value": _forward_hook_returns_a_handle,
    "hook_signature": _forward_hook_without_args,
    "backward_hook_count": _backward_hook_returns_two,
    "unpack_hook_not_tensor": _unpack_returns_a_key,
    "module_hook_changed_grad": _backward_hook_returns_a_bare_tensor,
    "unpack_hook_backward": _unpack_hook_keeps_bfloat16,
    "custom_function_autocast": _function_backward_under_autocast,
    "dtype_mismatch": _float64_data_meets_float32_layer,
    "scaler_not_scaled": _step_without_scale,
    "scaler_no_inf_checks": _scaler_steps_another_model,
    "scaler_update_before_step": _scaler_update_then_step,
    "half_overflow": _mask_filled_with_minus_1e9,
    "amp_deprecated_api": _cuda_amp_old_names,
    "cpu_autocast_dtype": _cpu_autocast_in_float64,
    "lr_scheduler_order": _scheduler_before_optimizer,
    "func_saved_tensor_hooks": _grad_under_save_on_cpu,
    "vmap_randomness": _vmap_over_dropout,
    "func_captured_mutation": _grad_mutates_a_global,
    "func_buffer_mutation": _grad_over_batch_norm_in_training,
    "vmap_mapped_sizes": _vmap_maps_the_parameters_too,
    "vmap_in_dims": _vmap_in_dims_too_short,
    "grad_unused_input": _grad_wrt_an_unused_parameter,
    "func_output_type": _grad_of_a_pair,
    "numpy_requires_grad": _numpy_of_a_parameter,
    "func_numpy": _numpy_inside_grad,
    "compile_hook_side_effect": _compiled(_logging_hook),
    "compile_autograd_call": _compiled(_backward_inside),
    "compile_no_cxx": _inductor_without_a_compiler,
    "ddp_static_graph_changed": _ddp_case("static"),
    "ddp_model_mismatch": _ddp_case("mismatch"),
    "ddp_no_trainable_parameters": _ddp_case("frozen"),
    "dist_address_in_use": _port_taken,
    "setup_not_run": _setup_cell_skipped,
}
WARNING_KINDS.update({"gradcheck_not_double", "amp_deprecated_api", "cpu_autocast_dtype", "lr_scheduler_order"})
FAMILY.update({kind: "notebook" if kind == "setup_not_run" else "usage" for kind in CHAPTERS_9_14})
TINY.update(CHAPTERS_9_14)


def _second_derivative_forgotten():
    x = torch.tensor(2.0, requires_grad=True)
    (dy,) = torch.autograd.grad(x**3, x)
    torch.autograd.grad(dy, x)


def _second_derivative_of_a_linear_function():
    x = _leaf()
    (g,) = torch.autograd.grad((3 * x).sum(), x, create_graph=True)
    torch.autograd.grad(g.sum(), x)


def _second_derivative_of_a_detached_gradient():
    x = _leaf().detach().requires_grad_()  # a detached start is not the cut
    first = torch.autograd.grad((x.sin() * x).sum(), x, create_graph=True)[0]
    g = first.detach()
    torch.autograd.grad(g.sum(), x)


class _GradInsideBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        y = x.sin()
        (d,) = torch.autograd.grad(y.sum(), x)  # backward runs in no_grad mode: y has no graph
        return g * d


def _autograd_grad_inside_a_function_backward():
    _GradInsideBackward.apply(_leaf()).sum().backward()


def _autograd_grad_of_a_vector():
    x = _leaf()
    torch.autograd.grad(x * 2, x)


def _scaler_skips_and_the_scheduler_warns():
    net = nn.Linear(2, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, 1)
    scaler = torch.amp.GradScaler("cpu", init_scale=1e38)  # the first scaled gradients overflow
    scaler.scale(net(torch.full((1, 2), 10.0)).sum()).backward()
    scaler.step(opt)  # skipped: inf in the gradients
    scaler.update()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as `python -W error` does: the warning raised where it is given
        scheduler.step()


def _checkpointed_counter(x):
    def block(t):
        _LOG.append(1)
        return t.sin()

    return checkpoint(block, x, use_reentrant=False).cos()


CAUSES = {
    "second_derivative_no_create_graph": _second_derivative_forgotten,
    "second_derivative_constant": _second_derivative_of_a_linear_function,
    "second_derivative_cut": _second_derivative_of_a_detached_gradient,
    "function_backward_no_grad": _autograd_grad_inside_a_function_backward,
    "grad_outputs_missing": _autograd_grad_of_a_vector,
    "compile_checkpoint_side_effect": _compiled(_checkpointed_counter),
    "scaler_skipped_step": _scaler_skips_and_the_scheduler_warns,
}
FAMILY.update({kind: "not built" if kind.startswith(("second", "function_backward")) else "usage" for kind in CAUSES})
TINY.update(CAUSES)


def test_scaler_order_names_the_order_the_code_used():
    """Does each GradScaler order mistake name the calls in the order the code makes them: update()
    before step(), update() missing, unscale_ twice?"""
    before = explain(raised(_scaler_unscale_update_step))
    assert before.kind == "scaler_call_order"
    assert "update() before step() (scale, unscale_, update, step)" in before.cause
    missing = explain(raised(lambda: _scaler_step(steps=2)))
    assert "never calls scaler.update() (scale, unscale_" in missing.cause
    twice = explain(raised(lambda: _scaler_step(unscale_twice=True)))
    assert "unscale_ ran twice" in twice.cause and "update() was forgotten" not in twice.cause
    update_first = explain(raised(_scaler_update_then_step))
    assert update_first.kind == "scaler_update_before_step"
    assert "Your code calls update() before step() (scale, update, step)" in update_first.cause


def test_scaler_order_is_named_only_where_the_code_shows_it():
    """Does update() before step() read as that (not a forgotten update()) when the loop calls a
    function of its own that updates, then steps, on a scaler named gs; is update() called twice told
    apart from update() before step(); does a string naming scaler.update() count as no call; and does
    a bare message (no code to read) name each order its message allows, and none as the code's?"""
    split = explain(raised(_loop_calls_a_function_that_updates_then_steps))
    assert split.kind == "scaler_call_order"
    assert "update() before step() (update, step)" in split.cause and "never calls" not in split.cause
    twice = explain(raised(_scaler_updates_twice))
    assert twice.kind == "scaler_update_before_step"
    assert "update() 2 times for 1 step() (scale, step, update, update)" in twice.cause
    assert "before step()" not in twice.cause
    said = explain(raised(_loop_forgets_update_that_a_string_names))
    assert "never calls scaler.update() (scale, step)" in said.cause
    for message in ("unscale_() is being called after step().", "No inf checks were recorded prior to update."):
        bare = explain(f"RuntimeError: {message}")
        assert "Your code" not in bare.cause
        assert "before step()" in bare.cause and ("missing" in bare.cause or "a second time" in bare.cause)


def test_vmap_inplace_covers_every_inplace_op():
    """Is a copy_ into an unbatched tensor under vmap (functorch#105's message) vmap_inplace too?"""
    assert explain(raised(_vmap_copies_into_a_fresh_tensor)).kind == "vmap_inplace"


def test_hook_signature_says_which_hook():
    """Is a forward hook without ``args`` told apart from a full backward hook without grad_input (the
    same TypeError), and is a module's forward called with a wrong argument count not a hook's?"""
    forward = explain(raised(_forward_hook_without_args))
    assert "A forward hook (register_forward_hook)" in forward.cause and "hook(module, args, output)" in forward.fix
    backward = explain(raised(_backward_hook_without_grad_input))
    assert backward.kind == "hook_signature" and "hook(module, grad_input, grad_output)" in backward.fix
    assert explain(raised(lambda: nn.Linear(2, 2)(torch.ones(1, 2), 3))).kind == "unknown"

    class CallsAHelper(nn.Module):
        def forward(self, x):
            return self.helper(x, 2)

        def helper(self, x):
            return x

    assert explain(raised(lambda: CallsAHelper()(torch.ones(1)))).kind == "unknown"  # inside forward, not a hook


def test_errors_in_backward_under_saved_tensor_hooks_point_at_the_unpack_hook():
    """Are a dtype mismatch that the learner's own unpack hook caused (no autocast anywhere) and a
    KeyError raised inside an unpack hook explained as the unpack hook's, not autocast's?"""
    dtype = explain(raised(_unpack_hook_keeps_bfloat16))
    assert dtype.kind == "unpack_hook_backward" and "autocast" not in dtype.cause and "dtype mismatch" in dtype.cause
    key = explain(raised(_unpack_hook_loses_the_key))
    assert key.kind == "unpack_hook_backward" and "KeyError" in key.cause


def _forward_under_bfloat16_hooks():
    x, w = torch.ones(2, 3, requires_grad=True), torch.ones(3, 3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.to(torch.bfloat16), lambda t: t):
        return (x @ w).sum()


def _backward_in_another_cell():
    loss = _forward_under_bfloat16_hooks()  # a cell above entered the hooks; this one only backwards
    loss.backward()


def _unpack(key):
    return {}[key]


def _backward_with_an_unpack_hook_from_another_cell():
    with torch.autograd.graph.saved_tensors_hooks(id, _unpack):
        loss = (_leaf() * 2).sin().sum()
    return loss


def test_unpack_hook_errors_are_found_when_the_hooks_were_entered_elsewhere():
    """A dtype mismatch in backward (no custom Function) and an error raised inside an unpack hook
    point at the unpack hook when the code that raised does not show the hooks (another cell), in a
    live traceback and in a pasted one."""
    assert explain(raised(_backward_in_another_cell)).kind == "unpack_hook_backward"
    loss = _backward_with_an_unpack_hook_from_another_cell()
    error = raised(loss.backward)
    assert explain(error).kind == "unpack_hook_backward"
    assert explain("".join(traceback.format_exception(error))).kind == "unpack_hook_backward"


def test_dtype_mismatch_causes_are_told_apart():
    """One message, three causes: a 16-bit autocast result after the region, a custom Function's
    backward under autocast (custom_fwd/custom_bwd), float64 data (no 16-bit tensor)."""
    assert explain(raised(_bfloat16_result_meets_float32_layer)).kind == "autocast_dtype_mismatch"
    function = explain(raised(_function_backward_under_autocast))
    assert function.kind == "custom_function_autocast" and "custom_bwd" in function.fix
    pasted = "".join(traceback.format_exception(raised(_function_backward_under_autocast)))
    assert explain(pasted).kind == "custom_function_autocast"  # a pasted traceback shows the frame too
    data = explain(raised(_float64_data_meets_float32_layer))
    assert data.kind == "dtype_mismatch" and "Double and Float" in data.cause


def test_not_built_causes_are_told_apart():
    """The not-built message: no graph at all, a second derivative without create_graph, with
    create_graph but a constant first gradient, inside a custom Function's backward."""
    kinds = [
        explain(raised(p)).kind
        for p in (
            lambda: torch.tensor([1.0, 2.0]).sum().backward(),
            _second_derivative_forgotten,
            _second_derivative_of_a_linear_function,
            _autograd_grad_inside_a_function_backward,
        )
    ]
    assert kinds == ["not_built", "second_derivative_no_create_graph", "second_derivative_constant",
                     "function_backward_no_grad"]  # fmt: skip
    # a gradient cut from the graph is named by the line that cut it, never called constant
    cut = explain(raised(_second_derivative_of_a_detached_gradient))
    assert cut.kind == "second_derivative_cut" and "g = first.detach()" in cut.cause, cut.cause
    assert "linear" not in cut.cause
    assert "not_built" == explain(str(raised(_second_derivative_forgotten))).kind  # a bare message: one of these


def test_non_scalar_output_names_the_call():
    """backward() on a vector is told to reduce or pass gradient=; autograd.grad is told grad_outputs."""
    assert "gradient=" in explain(raised(lambda: (_leaf() * 2).backward())).fix
    assert "grad_outputs=" in explain(raised(_autograd_grad_of_a_vector)).fix


def test_compile_retain_grad_explanation_says_side_effecting_hooks_break_the_graph():
    """Does compile_retain_grad no longer claim that any hook inside a compiled function works, and is a
    logging hook under fullgraph=True the graph break it describes?"""
    fix = " ".join(KINDS["compile_retain_grad"].fix.split())
    assert "HOP: Unsafe side effect" in fix and "is traced and works" not in fix
    assert explain(raised(_compiled(_logging_hook))).kind == "compile_hook_side_effect"


def test_a_name_from_the_set_up_cell_says_run_the_set_up_cell():
    """A NameError for torch (a notebook opened and a cell run without its set-up cell) says to run
    the set-up cell first; a learner's own name still says which cell defines it."""
    e = explain(NameError("name 'torch' is not defined"))
    assert (e.kind, e.family) == ("setup_not_run", "notebook") and "Run the set-up cell first" in e.fix
    assert explain(NameError("name 'my_answer' is not defined")).kind == "name_not_defined"


def _check_helpers_skipped():
    from autograder import check

    return check.grads(by_hand(), {})  # noqa: F821 -- ex01's check cell run before its folded check helpers


def _own_name_like_a_helpers():
    return inputs  # noqa: F821 -- a learner's own name that a check helper also defines


FAMILY["check_helpers_not_run"] = "notebook"
TINY["check_helpers_not_run"] = _check_helpers_skipped


def test_a_name_from_a_questions_check_helpers_says_run_them():
    """A NameError for a function that an exercise's folded check helpers define (the check cell run
    before the cell above it) says to run those helpers; a learner's own name still says which cell."""
    e = explain(NameError("name 'by_hand' is not defined"))
    assert (e.kind, e.family) == ("check_helpers_not_run", "notebook")
    assert "Run the check helpers" in e.fix and "by_hand" in e.cause
    assert explain(NameError("name 'my_answer' is not defined")).kind == "name_not_defined"
    assert explain(raised(_check_helpers_skipped)).kind == "check_helpers_not_run"
    assert explain(raised(_own_name_like_a_helpers)).kind == "name_not_defined"


def test_every_kind_comes_as_a_type_the_extension_explains():
    """Is each live error's type one that the notebook extension routes to the explainer?"""
    import builtins

    from autograder.kinds.table import EXCEPTION_TYPES

    routed = tuple(getattr(builtins, name) for name in EXCEPTION_TYPES)
    for kind, program in TINY.items():
        if kind not in WARNING_KINDS and kind != "unknown":
            error = raised(program)
            assert isinstance(error, routed) or isinstance(error, Warning), (kind, type(error))
