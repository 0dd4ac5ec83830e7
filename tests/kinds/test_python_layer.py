"""Is the Python layer's catalogue (``python_layer.tsv``) the installed torch's, every statement with a kind or a
reason, and is each kind of :mod:`autograder.kinds.python_layer` explained as an error object or warning, as a
paste and in a notebook cell, with a fix that, run, gives no error or warning and the right result?"""

import json
import math
import os
import subprocess
import sys
import textwrap
import traceback
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from autograder.explain import KINDS, explain
from autograder.kinds import python_layer
from autograder.lessons import COURSE_ROOT
from tests.explain.test_explain import raised, warned

TORCH = Path(torch.__file__).parent
ROWS = python_layer.catalogue()


def test_the_catalogue_is_the_installed_torchs():
    """Does the script that reads torch's Python modules write exactly the committed catalogue and coverage table
    (every raise and warn, each kind the explainer names today)?"""
    run = subprocess.run(
        [sys.executable, "tests/scripts/python_layer_catalogue.py", "--check"],
        cwd=COURSE_ROOT,
        env={**os.environ, "PYTHONPATH": str(COURSE_ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, (
        "stale: run tests/scripts/python_layer_catalogue.py\n" + run.stdout[-1500:] + run.stderr[-1500:]
    )


def test_every_statement_has_a_kind_or_a_reason_and_its_words_are_torchs():
    """Has each row a kind of the explainer or a reason for none, and is its fragment in its torch file?"""
    for row in ROWS:
        assert (row["kind"] in KINDS) != bool(row["reason"]), row
        if row["fragment"]:
            assert row["fragment"] in " ".join((TORCH / row["module"]).read_text(encoding="utf-8").split()), row


def test_the_coverage_table_counts_the_catalogue():
    """Does the coverage table per module add up to the catalogue's rows?"""
    for row in python_layer.coverage():
        mine = [r for r in ROWS if r["module"] == row["module"]]
        assert int(row["statements"]) == len(mine)
        assert int(row["with_kind"]) == sum(r["kind"] != "-" for r in mine)


# ---------------------------------------------------------------- each kind: the mistake, then its fix run
def clip_grad_nonfinite():
    x = torch.zeros(2, requires_grad=True)
    x.sqrt().sum().backward()
    nn.utils.clip_grad_norm_([x], 1.0, error_if_nonfinite=True)


def clip_grad_nonfinite_fixed():
    x = torch.zeros(2, requires_grad=True)
    (x + 1e-12).sqrt().sum().backward()
    nn.utils.clip_grad_norm_([x], 1.0, error_if_nonfinite=True)
    g = torch.full((2,), 0.5 / math.sqrt(1e-12))
    return x.grad, g / (g.norm() + 1e-6)


def _regression():
    torch.manual_seed(0)
    return nn.Linear(3, 1), torch.randn(4, 3), torch.randn(4)


def loss_broadcast():
    model, x, y = _regression()
    nn.MSELoss()(model(x), y).backward()


def loss_broadcast_fixed():
    model, x, y = _regression()
    out = model(x)
    out.retain_grad()
    nn.MSELoss()(out.squeeze(-1), y).backward()
    return out.grad, (2 * (out.detach().squeeze(-1) - y) / 4).unsqueeze(-1)


def _scaled(t, scale):
    return t * scale


def checkpoint_unexpected_kwargs():
    x = torch.ones(3, requires_grad=True)
    checkpoint(_scaled, x, scal=2.0, use_reentrant=False)


def checkpoint_unexpected_kwargs_fixed():
    x = torch.ones(3, requires_grad=True)
    checkpoint(lambda t: _scaled(t, scale=2.0), x, use_reentrant=False).sum().backward()
    return x.grad, torch.full((3,), 2.0)


class _SinUnpackedTwice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.sin()

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        print(ctx.saved_tensors[0].shape)  # a second unpack
        return grad * a.cos()


class _Sin(_SinUnpackedTwice):
    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        print(a.shape)
        return grad * a.cos()


def checkpoint_unpacked_twice():
    x = torch.ones(3, requires_grad=True)
    checkpoint(lambda t: _SinUnpackedTwice.apply(t * 2), x, use_reentrant=False).sum().backward()


def checkpoint_unpacked_twice_fixed():
    x = torch.ones(3, requires_grad=True)
    checkpoint(lambda t: _Sin.apply(t * 2), x, use_reentrant=False).sum().backward()
    return x.grad, 2 * torch.cos(2 * x.detach())


class _Drifting(torch.autograd.Function):
    calls = 0

    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        _Drifting.calls += 1
        return grad * 2 + _Drifting.calls * 1e-3


class _Double(_Drifting):
    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def gradcheck_nondeterministic():
    torch.autograd.gradcheck(_Drifting.apply, (torch.ones(2, dtype=torch.double, requires_grad=True),))


def gradcheck_nondeterministic_fixed():
    x = torch.ones(2, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(_Double.apply, (x,))
    _Double.apply(x).sum().backward()
    return x.grad, torch.full((2,), 2.0, dtype=torch.double)


def vmap_output_not_tensor():
    torch.func.vmap(lambda a: (a * 2, 3))(torch.ones(2, 3))


def vmap_output_not_tensor_fixed():
    doubled, three = torch.func.vmap(lambda a: (a * 2, 3), out_dims=(0, None))(torch.ones(2, 3))
    assert three == 3
    return doubled, torch.full((2, 3), 2.0)


def functional_call_not_dict():
    model = nn.Linear(3, 1)
    torch.func.functional_call(model, model.parameters(), (torch.ones(2, 3),))


def functional_call_not_dict_fixed():
    model, x = nn.Linear(3, 1), torch.ones(2, 3)

    def loss(params):
        return torch.func.functional_call(model, params, (x,)).sum()

    grads = torch.func.grad(loss)(dict(model.named_parameters()))
    model(x).sum().backward()
    return grads["weight"], model.weight.grad


def volatile_removed():
    torch.autograd.Variable(torch.ones(2), volatile=True)


def volatile_removed_fixed():
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = w * 2
    assert not y.requires_grad
    return y, torch.full((2,), 2.0)


def typed_storage_deprecated():
    torch.ones(4).storage()


def typed_storage_deprecated_fixed():
    t = torch.ones(4)
    return torch.tensor(t.untyped_storage().nbytes()), torch.tensor(t.numel() * t.element_size())


class _SavedVariables(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_variables
        return grad * 2 * a


class _SavedTensors(_SavedVariables):
    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * 2 * a


def saved_variables_deprecated():
    _SavedVariables.apply(torch.ones(2, requires_grad=True)).sum().backward()


def saved_variables_deprecated_fixed():
    x = torch.tensor([1.0, 3.0], requires_grad=True)
    _SavedTensors.apply(x).sum().backward()
    return x.grad, 2 * x.detach()


def scalar_of_requires_grad():
    w, x = torch.tensor([3.0, 4.0], requires_grad=True), torch.ones(2)
    ((x * w).sum() + float(w.norm())).backward()


def scalar_of_requires_grad_fixed():
    w, x = torch.tensor([3.0, 4.0], requires_grad=True), torch.ones(2)
    ((x * w).sum() + w.norm()).backward()
    return w.grad, x + w.detach() / 5


def complex_loss():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    z = x * (1 + 2j)
    (z * z).sum().mean().backward()


def complex_loss_fixed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    z = x * (1 + 2j)
    z.abs().pow(2).sum().backward()
    return x.grad, 2 * abs(1 + 2j) ** 2 * x.detach()


def _body_and_head():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1))


def optimizer_duplicate_params():
    model = _body_and_head()
    torch.optim.SGD(list(model.parameters()) + list(model[2].parameters()), lr=0.1)


def optimizer_duplicate_params_fixed():
    model = _body_and_head()
    base = [p for n, p in model.named_parameters() if not n.startswith("2.")]
    opt = torch.optim.SGD([{"params": base}, {"params": model[2].parameters(), "lr": 0.2}], lr=0.1)
    before = model[2].bias.detach().clone()
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    return model[2].bias.detach(), before - 0.2 * model[2].bias.grad  # one step of the head's lr, not two


CASES = {kind: (globals()[kind], globals()[f"{kind}_fixed"]) for kind in python_layer.KINDS if kind in globals()}
WARNINGS = {"loss_broadcast", "volatile_removed", "typed_storage_deprecated", "saved_variables_deprecated"}
WARNINGS |= {"scalar_of_requires_grad", "optimizer_duplicate_params"}
DISTRIBUTED = {"process_group_env", "allreduce_no_autograd", "ddp_grad_strides"}  # in a process of their own


def _live(kind):
    return warned(CASES[kind][0], kind) if kind in WARNINGS else raised(CASES[kind][0])


def _pasted(kind, found) -> str:
    if kind in WARNINGS:
        return warnings.formatwarning(found.message, found.category, found.filename, found.lineno)
    return "".join(traceback.format_exception(found))


def test_every_kind_has_a_case():
    assert set(CASES) | DISTRIBUTED | {"family_guess"} == set(python_layer.KINDS)  # guess: tests/explain/test_guess.py


@pytest.mark.parametrize("kind", CASES)
def test_the_live_error_or_warning_and_its_paste_are_explained(kind):
    """Is the live error or warning explained as its kind, and so is its pasted form?"""
    found = _live(kind)
    assert explain(found).kind == kind
    assert explain(_pasted(kind, found)).kind == kind


@pytest.mark.parametrize("kind", CASES)
def test_the_fix_runs_without_the_error_or_the_warning(kind):
    """Does the fixed program run with no error and no warning of this kind, and give the result computed another
    way?"""
    torch.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got, expected = CASES[kind][1]()
    finally:
        torch.set_warn_always(False)
    assert [w for w in caught if explain(w).kind == kind] == []
    torch.testing.assert_close(got, expected)


DISTRIBUTED_SCRIPT = textwrap.dedent("""
    import json, os, traceback, warnings
    import torch, torch.distributed as dist
    from torch import nn
    from autograder.explain import explain
    torch.set_warn_always(True)
    warnings.simplefilter("always")
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        os.environ.pop(var, None)
    try:
        dist.init_process_group("gloo")
    except ValueError as e:
        found = {"process_group_env": [explain(e).kind, explain("".join(traceback.format_exception(e))).kind]}
    dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())  # the fix
    def seen(program):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = program()
        return [explain(w).kind for w in caught], result
    def mistake():
        x = torch.ones(3, requires_grad=True)
        y = x * 2
        dist.all_reduce(y)
        y.sum().backward()
    def fixed():
        import torch.distributed.nn.functional as F
        x = torch.ones(3, requires_grad=True)
        F.all_reduce(x * 2).sum().backward()
        return x.grad.tolist()
    found["allreduce_no_autograd"] = [seen(mistake)[0], *seen(fixed)]
    def strides(before):
        conv = nn.Conv2d(3, 4, 3)
        if before:
            conv = conv.to(memory_format=torch.channels_last)
        ddp = nn.parallel.DistributedDataParallel(conv)
        if not before:
            conv.weight.data = conv.weight.data.contiguous(memory_format=torch.channels_last)
        x = torch.ones(1, 3, 5, 5)
        ddp(x).sum().backward()
        return (conv.weight.grad - torch.ones(4, 3, 3, 3) * 9).abs().max().item()
    found["ddp_grad_strides"] = [seen(lambda: strides(False))[0], *seen(lambda: strides(True))]
    dist.destroy_process_group()
    print(json.dumps(found))
""")


def test_distributed_kinds_in_a_process_group_of_one():
    """In a process of its own: is init_process_group without torchrun's variables explained (object and paste) and
    fixed by passing rank and world size; the all_reduce of a graph's tensor and the strides changed after DDP
    explained as their warnings, and their fixes free of them with the right gradients?"""
    run = subprocess.run(
        [sys.executable, "-c", DISTRIBUTED_SCRIPT], cwd=COURSE_ROOT, capture_output=True, text=True, timeout=240
    )
    assert run.returncode == 0, run.stderr[-2000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["process_group_env"] == ["process_group_env", "process_group_env"]
    kinds, fixed_kinds, grad = found["allreduce_no_autograd"]
    assert "allreduce_no_autograd" in kinds and "allreduce_no_autograd" not in fixed_kinds and grad == [2.0] * 3
    kinds, fixed_kinds, error = found["ddp_grad_strides"]
    assert "ddp_grad_strides" in kinds and "ddp_grad_strides" not in fixed_kinds and error < 1e-5


def test_the_old_cpu_autocast_name_is_explained_with_its_device():
    """Is torch.cpu.amp.autocast's deprecation explained with the CPU's new name?"""
    e = explain(warned(lambda: torch.cpu.amp.autocast(), "amp_deprecated_api"))
    assert "torch.amp.autocast('cpu'" in e.fix


def test_a_notebook_cell_is_explained_with_the_extension():
    """In IPython with %load_ext autograder, is each mistake's cell (errors and warnings) followed by its kind?"""
    script = textwrap.dedent(f"""
        import sys, warnings, torch
        from IPython.core.interactiveshell import InteractiveShell
        ip = InteractiveShell.instance()
        ip.run_line_magic("colors", "nocolor")
        ip.run_line_magic("load_ext", "autograder")
        warnings.simplefilter("always")
        torch.set_warn_always(True)
        ip.run_cell("from tests.kinds.test_python_layer import *")
        for kind in {sorted(CASES)!r}:
            print("=== " + kind, flush=True)
            print("=== " + kind, file=sys.stderr, flush=True)
            ip.run_cell(kind + "()")
    """)
    run = subprocess.run(
        [sys.executable, "-c", script], text=True, capture_output=True, cwd=COURSE_ROOT, timeout=240, check=False
    )
    out = {p.split("\n", 1)[0]: p for p in run.stdout.split("=== ")[1:]}
    err = {p.split("\n", 1)[0]: p for p in run.stderr.split("=== ")[1:]}
    for kind in CASES:
        shown = out.get(kind, "") + err.get(kind, "")
        assert f"({kind})" in shown, (kind, shown[-800:])
