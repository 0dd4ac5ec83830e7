"""Are executions counted, not call sites: is one scaler.unscale_ call inside a gradient-accumulation loop (with no
update() in that loop) said to run once per pass, with no second caller invented; and does moving it out of the loop
run and give the gradients of the same steps taken without a scaler?"""

import traceback

import pytest
import torch
from torch import nn

from autograder.explain import explain
from autograder.explain.made import loop_around


def _accumulating(unscale_in_loop: bool):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    for micro in range(2):
        part = slice(2 * micro, 2 * micro + 2)
        scaler.scale(nn.functional.mse_loss(model(x[part]), y[part]) / 2).backward()
        if unscale_in_loop:
            scaler.unscale_(opt)
    if not unscale_in_loop:
        scaler.unscale_(opt)
    grads = [p.grad.clone() for p in model.parameters()]
    scaler.step(opt)
    scaler.update()
    return grads


def test_one_call_site_in_a_loop_is_said_to_run_per_pass():
    """Is the failing unscale_ named as inside the loop, run per pass, with no helper offered as a second caller?"""
    with pytest.raises(RuntimeError) as info:
        _accumulating(unscale_in_loop=True)
    e = explain(info.value)
    assert e.kind == "scaler_call_order" and "inside the loop `for micro in range(2):`" in e.cause
    assert "once per pass" in e.cause and "helper" not in e.cause
    pasted = explain("".join(traceback.format_exception(info.value)))
    assert "inside the loop `for micro in range(2):`" in pasted.cause and "read from the code" in pasted.cause


def test_the_unscale_moved_out_of_the_loop_gives_the_plain_gradients():
    """Does one unscale_ after the loop run, and give the gradients of the two micro-batches summed (no scaler)?"""
    got = _accumulating(unscale_in_loop=False)
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    for micro in range(2):
        part = slice(2 * micro, 2 * micro + 2)
        (nn.functional.mse_loss(model(x[part]), y[part]) / 2).backward()
    for g, p in zip(got, model.parameters(), strict=True):
        torch.testing.assert_close(g, p.grad)


def test_the_loop_around_a_line_and_what_its_body_calls():
    """Does loop_around find the innermost loop holding a line, and whether its body calls update()?"""
    source = "for a in b:\n    for c in d:\n        s.unscale_(o)\n    s.update()\n"
    assert loop_around(source, 3, "update")[:2] == ("for c in d:", False)
    assert loop_around(source, 4, "update")[:2] == ("for a in b:", True)
    assert loop_around("x = 1\n", 1, "update") is None


def _batches():
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    return model, torch.optim.SGD(model.parameters(), lr=0.1), [torch.randn(2, 2) for _ in range(3)]


def _step_per_batch_update_after():
    model, opt, batches = _batches()
    scaler = torch.amp.GradScaler("cpu")
    for xb in batches:
        opt.zero_grad()
        scaler.scale(model(xb).sum()).backward()
        scaler.step(opt)
    scaler.update()


def _step_and_update_per_batch():
    model, opt, batches = _batches()
    scaler = torch.amp.GradScaler("cpu")
    for xb in batches:
        opt.zero_grad()
        scaler.scale(model(xb).sum()).backward()
        scaler.step(opt)
        scaler.update()
    return model


def test_one_scaler_step_in_a_loop_is_said_to_run_per_pass_and_its_fix_runs():
    """Is a scaler.step inside a loop with update() after it named as running per pass; does its first fix (update()
    after each step) run and give the plain SGD steps on the same batches, computed without a scaler?"""
    with pytest.raises(RuntimeError) as info:
        _step_per_batch_update_after()
    e = explain(info.value)
    assert "inside the loop `for xb in batches:`" in e.cause and "right after scaler.step(opt)" in e.cause
    model = _step_and_update_per_batch()
    plain, _, batches = _batches()
    for xb in batches:
        plain.zero_grad()
        plain(xb).sum().backward()
        with torch.no_grad():
            for p in plain.parameters():
                p -= 0.1 * p.grad
    for got, expected in zip(model.parameters(), plain.parameters(), strict=True):
        torch.testing.assert_close(got, expected)
