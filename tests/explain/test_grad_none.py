"""Is a .grad read as None explained from the tensor the failing frame holds, a comprehension's name included, and
where the code turned a Parameter's requires_grad off (a fixed mask), does the explanation give both readings and a
fix that keeps the mask fixed?"""

import pytest
import torch
from torch import nn

from autograder.explain import explain


class MaskedNet(nn.Module):
    """A layer whose outputs a fixed 0/1 mask multiplies; the mask is a Parameter told not to require grad."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(3, 3)
        self.mask = nn.Parameter(torch.tensor([1.0, 0.0, 1.0]), requires_grad=False)

    def forward(self, x):
        return self.fc(x) * self.mask


class BufferMaskedNet(MaskedNet):
    def __init__(self):
        super().__init__()
        del self.mask
        self.register_buffer("mask", torch.tensor([1.0, 0.0, 1.0]))


def _norms_of_every_gradient():
    net = MaskedNet()
    net(torch.ones(2, 3)).sum().backward()
    return [p.grad.norm() for p in net.parameters()]


def test_a_comprehensions_name_is_read_and_the_frozen_parameter_gets_both_readings():
    """Is `[p.grad.norm() for p in ...]` read as p.grad (not '[p.grad'), p found to be the module's mask, and the
    fix to skip it or make it a buffer (requires_grad_() only if it should train)?"""
    with pytest.raises(AttributeError) as info:
        _norms_of_every_gradient()
    e = explain(info.value)
    assert e.kind == "grad_is_none" and e.cause.startswith("The failing line reads p.grad,"), e.cause
    assert "p (mask of a module)" in e.cause and "intent" in e.cause
    assert "register_buffer" in e.fix and "p.grad is not None" in e.fix


def test_the_fixes_run_and_keep_the_mask_fixed():
    """Do both fixes run: skipping the None gradient, and the mask as a buffer, with the layer's gradient the mask
    times the input's column sums and no gradient on the mask?"""
    net = MaskedNet()
    net(torch.ones(2, 3)).sum().backward()
    norms = [p.grad.norm() for p in net.parameters() if p.grad is not None]
    buffered = BufferMaskedNet()
    buffered(torch.ones(2, 3)).sum().backward()
    expected = torch.tensor([1.0, 0.0, 1.0]).unsqueeze(1) * torch.full((3, 3), 2.0)
    torch.testing.assert_close(buffered.fc.weight.grad, expected)
    torch.testing.assert_close(norms[0], expected.norm())
    assert len(norms) == 2 and "mask" not in dict(buffered.named_parameters())


def _manual_loop(zero_first: bool):
    x, w = torch.tensor([[1.0, 2.0]]), torch.tensor([0.5, -0.5], requires_grad=True)
    grads = []
    for _ in range(2):
        if zero_first:
            w.grad.zero_()
        loss = (x @ w).pow(2).sum()
        loss.backward()
        grads.append(w.grad.clone())
        with torch.no_grad():
            w -= 0.1 * w.grad
        if not zero_first:
            w.grad.zero_()
    return grads, w.detach()


def test_a_grad_read_before_the_only_backward_is_named_and_the_fix_runs():
    """Is a .grad zeroed at the top of the loop, above the function's only backward(), explained as read before any
    backward (not the two-way list), and does zeroing it after the update give each step's own gradient?"""
    with pytest.raises(AttributeError) as info:
        _manual_loop(zero_first=True)
    e = explain(info.value)
    assert e.kind == "grad_is_none" and "only backward comes after the failing line (`loss.backward()`)" in e.cause
    assert "does not depend" not in e.cause and "requires_grad_()" not in e.fix
    grads, _ = _manual_loop(zero_first=False)
    x, w = torch.tensor([1.0, 2.0]), torch.tensor([0.5, -0.5])
    for got in grads:  # d/dw (x.w)^2 = 2 (x.w) x, each step from the weight the previous step left
        torch.testing.assert_close(got, 2 * (x @ w) * x)
        w = w - 0.1 * got


def test_a_buffer_read_as_a_gradient_is_skipped_not_made_trainable():
    """Is a buffer's None .grad (a loop over state_dict() values) explained as a buffer, with a fix that skips it, and
    does the fixed loop (parameters only) update the weight by its gradient and leave the mask as it is?"""
    net = BufferMaskedNet()
    net(torch.ones(2, 3)).sum().backward()
    mask = net.mask

    def update():
        for t in [net.fc.weight, mask]:
            t.data -= 0.1 * t.grad

    with pytest.raises(TypeError) as info:
        update()
    e = explain(info.value)
    assert "is the buffer net.mask" in e.cause and "requires_grad_()" not in e.fix
    before = net.fc.weight.detach().clone()
    for p in net.parameters():
        p.data -= 0.1 * p.grad
    torch.testing.assert_close(net.fc.weight.detach(), before - 0.1 * net.mask.expand(3, 3).T * 2)
    assert torch.equal(net.mask, torch.tensor([1.0, 0.0, 1.0]))


def _three_layers():
    torch.manual_seed(0)
    return nn.Linear(2, 2), nn.Linear(2, 1), nn.Linear(2, 2)  # the third is never called


def _sgd_step(skip: bool):
    enc, dec, unused = _three_layers()
    loss = dec(enc(torch.ones(1, 2))).sum()
    loss.backward()
    with torch.no_grad():
        for p in [*enc.parameters(), *dec.parameters(), *unused.parameters()]:
            if not skip or p.grad is not None:
                p -= 0.1 * p.grad
    return dec.bias.detach(), unused.weight.detach()


def test_a_parameter_the_backwarded_loss_does_not_reach_is_named_and_skipping_it_trains_the_rest():
    """Is a None .grad of a parameter of a module the loss never used explained by the loss's own graph (no path to
    it), not the two-way guess, and does skipping parameters whose .grad is None give the others their SGD step?"""
    with pytest.raises(TypeError) as info:
        _sgd_step(skip=False)
    e = explain(info.value)
    assert "the graph of loss (checked on it) has no path to it" in e.cause and "either" not in e.cause
    assert "requires_grad_()" not in e.fix
    _, dec, unused = _three_layers()
    bias, weight = _sgd_step(skip=True)
    torch.testing.assert_close(bias, dec.bias.detach() - 0.1)  # d loss / d bias = 1
    assert torch.equal(weight, unused.weight.detach())


def test_a_loss_rebuilt_by_torch_tensor_names_the_cut():
    """Where the backwarded loss was rebuilt with torch.tensor(..., requires_grad=True), is that call named as the
    cut, and does the fix (torch.stack) give w its gradient?"""
    w = torch.ones(2, requires_grad=True)
    losses = [(w * k).sum() for k in (1.0, 2.0)]

    def broken():
        loss = torch.tensor([x.item() for x in losses], requires_grad=True).sum()
        loss.backward()
        return w.grad * 2

    with pytest.raises(TypeError) as info:
        broken()
    assert "the graph was cut there: `torch.tensor(" in explain(info.value).cause
    torch.stack(losses).sum().backward()
    torch.testing.assert_close(w.grad, torch.full((2,), 3.0))


def _update_all(skip: bool):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 1), nn.Linear(2, 1))  # model[1] is never called
    model[0](torch.ones(1, 2)).sum().backward()  # no loss bound to a name: only the parameters tell
    before = [p.detach().clone() for p in model.parameters()]
    for p in model.parameters():
        if skip and p.grad is None:
            continue
        p.data -= 0.1 * p.grad
    return model, before


def test_a_none_grad_beside_filled_ones_is_a_parameter_the_loss_does_not_use():
    """Where no loss is bound but backward filled the .grad of the module's other parameters, is the None .grad told as
    a parameter the loss does not depend on (named, not the two-way guess), and does skipping it train the rest?"""
    with pytest.raises(TypeError) as info:
        _update_all(skip=False)
    e = explain(info.value)
    assert "a backward() did run" in e.cause and "model.1.weight, model.1.bias have none" in e.cause
    assert "either" not in e.cause and "if p.grad is None: continue" in e.fix
    model, before = _update_all(skip=True)
    torch.testing.assert_close(model[0].bias.detach(), before[1] - 0.1)  # d/db of sum(Wx + b) = 1
    assert torch.equal(model[1].weight.detach(), before[2])
