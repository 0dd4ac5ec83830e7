"""A held-out set: 20 errors of the kind learners report publicly, chapters 1-14, each a small runnable snippet, and
the kind a right explanation names. Run by hand (not collected by pytest):

    python tests/explain/heldout_errors.py

It prints, per snippet, the kind explained (exception and pasted traceback) and counts right / wrong / silent (a
"vague" answer would be a kind that names the family but not the mistake; it is judged by reading the lines)."""

from __future__ import annotations

import copy
import traceback

import torch
from torch import nn


def _w():
    return torch.randn(3, requires_grad=True)


def ch1_loss_from_argmax():
    logits = nn.Linear(4, 3)(torch.randn(2, 4))
    loss = logits.argmax(1).float().mean()
    loss.backward()


def ch1_per_sample_loss():
    nn.MSELoss(reduction="none")(nn.Linear(2, 1)(torch.randn(4, 2)), torch.zeros(4, 1)).backward()


def ch2_param_moved_after_requires_grad():
    w = torch.randn(3, requires_grad=True).double()
    torch.optim.Adam([w])


def ch2_long_weights():
    torch.arange(5).requires_grad_()


def ch2_grad_is_none():
    w = torch.randn(3, requires_grad=True)
    y = w * 2
    (y**2).sum().backward()
    print(y.grad.norm())


def ch3_rnn_state_reused():
    cell, h = nn.RNNCell(2, 2), torch.zeros(1, 2)
    for _ in range(2):
        h = cell(torch.randn(1, 2), h)
        h.sum().backward()


def ch4_grad_assign():
    p = nn.Linear(2, 2).weight
    p.grad = torch.zeros(2)


def ch5_relu_inplace_after_sigmoid():
    x = _w()
    y = torch.sigmoid(x)
    y.add_(1)
    y.sum().backward()


def ch5_update_param_without_no_grad():
    w = _w()
    (w**2).sum().backward()
    w -= 0.1 * w.grad


def ch6_inference_then_train():
    with torch.inference_mode():
        x = torch.randn(1, 2)
    x.requires_grad_(True)


def ch6_numpy_of_output():
    nn.Linear(2, 2)(torch.randn(1, 2)).numpy()


def ch7_deepcopy_model_with_cached_tensor():
    m = nn.Linear(2, 2)
    m.scaled = m.weight * 0.5
    copy.deepcopy(m)


def ch8_checkpoint_branch_changes():
    from torch.utils.checkpoint import checkpoint

    state = {"n": 0}

    def block(x):
        state["n"] += 1
        return x.exp() if state["n"] == 1 else x[:2].exp()

    checkpoint(block, _w(), use_reentrant=False).sum().backward()


def ch9_gradcheck_without_grad():
    torch.autograd.gradcheck(torch.tanh, (torch.randn(3, dtype=torch.float64),))


def ch9_backward_returns_too_few():
    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    Mul.apply(_w(), _w()).sum().backward()


def ch10_hook_returns_norm():
    w = _w()
    w.register_hook(lambda g: g.norm())
    (w * 2).sum().backward()


def ch11_scaler_step_twice():
    m = nn.Linear(2, 2)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(m(torch.randn(1, 2)).sum()).backward()
    scaler.step(opt)
    scaler.step(opt)


def ch12_grad_wrt_constant():
    x = torch.randn(3)
    y = (x**2).sum()
    torch.autograd.grad(y, x)


def ch12_hessian_of_vector():
    torch.autograd.functional.hessian(lambda x: x.sin(), torch.randn(3))


def ch14_ddp_cpu_device_ids():
    import tempfile

    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    with tempfile.TemporaryDirectory() as d:
        dist.init_process_group("gloo", init_method=f"file://{d}/s", rank=0, world_size=1)
        try:
            DistributedDataParallel(nn.Linear(2, 2), device_ids=[0])
        finally:
            dist.destroy_process_group()


# the kind a right explanation names (a set where two are right)
EXPECTED = {
    ch1_loss_from_argmax: {"not_built"},
    ch1_per_sample_loss: {"non_scalar_output"},
    ch2_param_moved_after_requires_grad: {"optimizer_nonleaf"},
    ch2_long_weights: {"integer_requires_grad"},
    ch2_grad_is_none: {"grad_none_nonleaf", "grad_is_none"},
    ch3_rnn_state_reused: {"consumed", "consumed_carried_state"},  # the case picked from the frame
    ch4_grad_assign: {"grad_assign_shape"},
    ch5_relu_inplace_after_sigmoid: {"modified_inplace"},
    ch5_update_param_without_no_grad: {"leaf_inplace"},
    ch6_inference_then_train: {"inference_requires_grad"},
    ch6_numpy_of_output: {"numpy_requires_grad"},
    ch7_deepcopy_model_with_cached_tensor: {"deepcopy_nonleaf"},
    ch8_checkpoint_branch_changes: {"checkpoint_recomputed_differently"},
    ch9_gradcheck_without_grad: {"gradcheck_no_input_grad"},
    ch9_backward_returns_too_few: {"custom_function_gradients"},
    ch10_hook_returns_norm: {"hook_changed_grad"},
    ch11_scaler_step_twice: {"scaler_call_order"},
    ch12_grad_wrt_constant: {"not_built", "grad_input_no_grad"},
    ch12_hessian_of_vector: {"hessian_not_scalar"},
    ch14_ddp_cpu_device_ids: {"ddp_device_ids_cpu"},
}


def main() -> None:
    from autograder.explain import explain

    counts = {"right": 0, "wrong": 0, "silent": 0}
    for snippet, expected in EXPECTED.items():
        try:
            snippet()
            got = pasted = "(no error)"
        except Exception as error:  # noqa: BLE001 -- every error is what is measured
            got = explain(error).kind
            pasted = explain("".join(traceback.format_exception(error))).kind
        for kind in (got, pasted):
            counts["right" if kind in expected else "silent" if kind == "unknown" else "wrong"] += 1
        print(f"{snippet.__name__:40} exception: {got:32} pasted: {pasted:32} expected: {'/'.join(expected)}")
    print(f"{counts} (of {2 * len(EXPECTED)}: each snippet as an exception and as a pasted traceback)")


if __name__ == "__main__":
    main()
