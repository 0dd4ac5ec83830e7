"""Are plain Python errors about what a training API returns (None from backward, step and zero_grad, a generator
from parameters(), a dict from state_dict(), the method itself when its call is missing, an attribute called like a
method, an L-BFGS closure that returns nothing) explained from the failing line and the statement that made its
names, as an exception, as a pasted traceback and in a notebook cell; does each fix, run on its trigger, give no
error and the right gradient?"""

import inspect
import textwrap
import traceback

import pytest
import torch
from torch import nn

from autograder.explain import KINDS, explain
from autograder.kinds.api_return import KINDS as API_RETURN
from tests.explain.test_training import run_in_notebook


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1)), torch.randn(4, 3)


# ---------------------------------------------------------------- each kind: the mistake, then its fix run
def api_returned_none():
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (w**2).sum()
    grads = loss.backward()
    return grads[0]


def api_returned_none_fixed():
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (w**2).sum()
    loss.backward()
    return w.grad, 2 * w.detach()


def api_returned_value():
    model = _net()[0]
    params = model.parameters()
    return params[0]


def api_returned_value_fixed():
    model, x = _net()
    params = list(model.parameters())
    model(x).sum().backward()
    return params[0].grad, model[0].weight.grad


def iterated_items_unpacked():
    model = _net()[0]
    for name, p in model.parameters():
        if name.startswith("0."):
            p.requires_grad_(False)


def iterated_items_unpacked_fixed():
    model, x = _net()
    for name, p in model.named_parameters():
        if name.startswith("0."):
            p.requires_grad_(False)
    model(x).sum().backward()
    fresh, _ = _net()  # the same seed: the same weights, nothing frozen
    reference = torch.autograd.grad(fresh(x).sum(), fresh[2].weight)[0]
    return (model[0].weight.grad is None, model[2].weight.grad), (True, reference)


def method_not_called():
    model = _net()[0]
    return torch.optim.SGD(model.parameters, lr=0.1)


def method_not_called_fixed():
    model, x = _net()
    before = model[2].bias.detach().clone()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(x).sum().backward()
    opt.step()
    return model[2].bias.detach(), before - 0.1 * 4  # d(sum of 4 outputs)/d(bias) = 4


class _Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors()
        return 2 * x * g


class _SquareFixed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


def saved_tensors_called():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    _Square.apply(x).sum().backward()


def saved_tensors_called_fixed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    _SquareFixed.apply(x).sum().backward()
    return x.grad, 2 * x.detach()


def attribute_called():
    h = torch.randn(4, 3, requires_grad=True)
    rows, cols = h.shape()
    return rows, cols


def attribute_called_fixed():
    h = torch.randn(4, 3, requires_grad=True)
    rows, cols = h.shape
    (h.sum(1) * torch.arange(rows)).sum().backward()
    return h.grad, torch.arange(rows, dtype=h.dtype)[:, None].expand(rows, cols)


def closure_returns_none():
    w = torch.zeros(3, requires_grad=True)
    target = torch.tensor([1.0, -2.0, 0.5])
    opt = torch.optim.LBFGS([w], lr=1)

    def closure():
        opt.zero_grad()
        loss = ((w - target) ** 2).sum()
        loss.backward()

    opt.step(closure)


def closure_returns_none_fixed():
    w = torch.zeros(3, requires_grad=True)
    target = torch.tensor([1.0, -2.0, 0.5])
    opt = torch.optim.LBFGS([w], lr=1)

    def closure():
        opt.zero_grad()
        loss = ((w - target) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach(), target  # a quadratic: L-BFGS reaches its minimum


def item_of_many():
    model, x = _net()
    losses = nn.functional.mse_loss(model(x), torch.zeros(4, 1), reduction="none")
    return losses.item()


def item_of_many_fixed():
    model, x = _net()
    losses = nn.functional.mse_loss(model(x), torch.zeros(4, 1), reduction="none")
    logged = losses.mean().item()
    return torch.tensor(logged), nn.functional.mse_loss(model(x), torch.zeros(4, 1)).detach()


def backward_positional_flag():
    w = torch.ones(3, requires_grad=True)
    loss = (w * 3).sum()
    loss.backward(True)
    loss.backward()


def backward_positional_flag_fixed():
    w = torch.ones(3, requires_grad=True)
    loss = (w * 3).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    return w.grad, torch.full((3,), 6.0)  # two backwards of d(3w)/dw, accumulated


def _backward_scaled_by_a_number():
    w = torch.ones(3, requires_grad=True)
    loss = (w * 3).sum()
    loss.backward(0.5)


CASES = {kind: (globals()[kind], globals()[f"{kind}_fixed"]) for kind in API_RETURN}


def _raised(program) -> BaseException:
    with pytest.raises(Exception) as info:
        program()
    return info.value


def test_every_kind_has_a_case():
    """Is every kind of this family here, with a program that makes the mistake and one with its fix?"""
    assert set(CASES) == set(API_RETURN) and set(API_RETURN) <= set(KINDS)


@pytest.mark.parametrize("kind", CASES)
def test_the_error_object_is_explained_from_its_frame(kind):
    """Is the live error explained as its kind from the frame, with no field left unfilled?"""
    e = explain(_raised(CASES[kind][0]))
    assert e.kind == kind, (e.kind, e.message, e.cause)
    assert "Seen in the failing frame" in e.cause
    assert "?" not in (e.cause + e.fix).split() and "{" not in e.cause + e.fix


@pytest.mark.parametrize("kind", CASES)
def test_the_pasted_traceback_is_explained_and_claims_no_object(kind):
    """Is the pasted traceback explained as the same kind, never claiming an object it cannot see?"""
    e = explain("".join(traceback.format_exception(_raised(CASES[kind][0]))))
    assert e.kind == kind, (e.kind, e.cause)
    assert "Seen in the failing frame" not in e.cause


@pytest.mark.parametrize("kind", CASES)
def test_the_fix_runs_and_gives_the_right_result(kind):
    """Does the fixed program run without an error and give the gradient (or values) computed another way?"""
    got, expected = CASES[kind][1]()
    torch.testing.assert_close(got, expected)


# ---------------------------------------------------------------- the same mistakes written otherwise
def _returned_by_step():
    model, x = _net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model(x).pow(2).mean().backward()
    result = opt.step()
    return result.item()


def _handle_as_tensor():
    x = torch.ones(2, requires_grad=True)
    h = x.register_hook(lambda g: g * 2)
    return h + 1


def _load_state_dict_assigned():
    model, x = _net()
    model = model.load_state_dict(model.state_dict())
    return model(x)


def _state_dict_unpacked():
    model, _x = _net()
    return {k: v.shape for k, v in model.state_dict()}


def _loop_over_method():
    model, _x = _net()
    return sum(p.numel() for p in model.parameters)


def _item_not_called():
    w = torch.ones(3, requires_grad=True)
    running = 0.0
    for step in range(2):
        running = running + (w * step).sum().item
    return running


def _own_loss_no_return():
    model, x = _net()

    def compute(out):
        out.pow(2).mean()

    loss = compute(model(x))
    return loss.item()


def _enumerate_three_names():
    model, _ = _net()
    return [(i, name) for i, name, _ in enumerate(model.named_parameters())]


def _param_group_attribute():
    model, _ = _net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for group in optimizer.param_groups:
        group.lr = group.lr * 0.5


def _optimizer_given_state_dict():
    model, _ = _net()
    return torch.optim.Adam(model.state_dict(), lr=1e-3)


def _load_state_dict_given_parameters():
    model, _ = _net()
    copy = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1))
    copy.load_state_dict(model.parameters())


def _closure_returns_a_vector():
    w = torch.zeros(3, requires_grad=True)
    opt = torch.optim.LBFGS([w])

    def closure():
        opt.zero_grad()
        per_coord = (w - 1) ** 2
        per_coord.sum().backward()
        return per_coord

    opt.step(closure)


def _zero_grad_then_step():
    model, _ = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad().step()


def _float_of_a_batch():
    model, x = _net()
    per_row = model(x).squeeze(1)
    return float(per_row)


@pytest.mark.parametrize("broken", [_load_state_dict_assigned, _returned_by_step, _zero_grad_then_step])
def test_a_variant_pasted_is_read_from_the_file_its_traceback_names(broken):
    """Is each variant's paste read as its object is (the same kind), the statement that made the name read from the
    file the traceback names (its name may stand anywhere on the line: called, iterated, read)?"""
    error = _raised(broken)
    assert explain("".join(traceback.format_exception(error))).kind == explain(error).kind


@pytest.mark.parametrize(
    ("broken", "kind", "words"),
    [
        (_returned_by_step, "api_returned_none", "`result = opt.step()`"),
        (_handle_as_tensor, "api_returned_value", "register_hook() returns a handle"),
        (_load_state_dict_assigned, "api_returned_value", "load_state_dict() loads in place"),
        (_state_dict_unpacked, "iterated_items_unpacked", ".state_dict().items()"),
        (_loop_over_method, "method_not_called", "model.parameters is the bound method"),
        (_item_not_called, "method_not_called", "(w * step).sum().item with no parentheses"),
        (_own_loss_no_return, "api_returned_none", "compute has no `return`"),
        (_enumerate_three_names, "iterated_items_unpacked", "through enumerate"),
        (_zero_grad_then_step, "api_returned_none", "zero_grad() returns None"),
        (_param_group_attribute, "api_returned_value", "a dict with keys 'params', 'lr'"),
        (_backward_scaled_by_a_number, "backward_positional_flag", "(loss * 0.5).backward()"),
        (_closure_returns_a_vector, "item_of_many", "Return one number from closure"),
        (_optimizer_given_state_dict, "api_returned_value", "torch.optim.Adam(model.parameters(), ...)"),
        (_load_state_dict_given_parameters, "api_returned_value", "target.load_state_dict(model.state_dict())"),
        (_float_of_a_batch, "item_of_many", "per_row is a tensor of shape [4]"),
    ],
)
def test_other_apis_and_loop_shapes_are_read_the_same_way(broken, kind, words):
    """Is each variant (another API of the family, another name, a comprehension or loop around it) read from its own
    frame as the same kind, naming what that frame shows?"""
    e = explain(_raised(broken))
    assert e.kind == kind and words in e.cause + e.fix, (e.kind, e.cause, e.fix)


def test_an_optimizer_given_the_method_is_not_told_it_was_given_the_module():
    """Is Adam(model.parameters) (no call) named as the bound method, not as the module beside it on the line?"""
    e = explain(_raised(method_not_called))
    assert "bound method Module.parameters" in e.cause and "given model itself" not in e.cause
    assert "SGD(model.parameters(), ...)" in e.fix


def test_a_module_given_to_an_optimizer_is_still_named_as_the_module():
    """Is an optimizer given the module itself still explained as such (the method rule takes nothing from it)?"""
    model, _x = _net()
    assert explain(_raised(lambda: torch.optim.SGD(model, lr=0.1))).kind == "optimizer_given_module"


def test_a_notebook_cell_is_explained_with_the_extension():
    """In IPython with %load_ext autograder, is each mistake's cell followed by its kind's explanation?"""
    cells = ["import torch\nfrom torch import nn"]
    cells += [textwrap.dedent(inspect.getsource(f)) for f in (_net, _Square)]
    calls = []
    for kind, (broken, _) in CASES.items():
        cells.append(textwrap.dedent(inspect.getsource(broken)))
        calls.append((kind, f"{broken.__name__}()"))
    parts, stderr = run_in_notebook(cells, calls)
    for kind in CASES:
        assert f"({kind})" in parts.get(kind, ""), (kind, parts.get(kind, stderr[-2000:])[-600:])


def test_the_variants_fixes_run_and_give_the_right_values():
    """Do the fixes the variants are given run: a group's lr set with g['lr'] is the one step() uses, the list of
    parameters has len() and [i], a state dict's items() give names and tensors?"""
    model, x = _net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for g in optimizer.param_groups:
        g["lr"] = g["lr"] * 0.5
    before = model[2].bias.detach().clone()
    model(x).sum().backward()
    optimizer.step()
    torch.testing.assert_close(model[2].bias.detach(), before - 0.05 * 4)  # d(sum of 4 outputs)/d(bias) = 4
    params = list(model.parameters())
    assert len(params) == 4 and params[0] is model[0].weight
    copy = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1))
    copy.load_state_dict(model.state_dict())
    torch.testing.assert_close(copy(x), model(x))
    assert len(torch.optim.Adam(model.parameters(), lr=1e-3).param_groups[0]["params"]) == 4
    w = torch.ones(3, requires_grad=True)
    ((w * 3).sum() * 0.5).backward()  # a loss scaled instead of a number passed as its gradient
    torch.testing.assert_close(w.grad, torch.full((3,), 1.5))
    w = torch.zeros(3, requires_grad=True)
    opt = torch.optim.LBFGS([w])

    def closure():  # the reduced loss returned, and the same one backwarded
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    torch.testing.assert_close(w.detach(), torch.ones(3))
    assert {name: t.shape for name, t in model.state_dict().items()}["2.bias"] == (1,)


_IPYTHON_PASTE = """---------------------------------------------------------------------------
TypeError                                 Traceback (most recent call last)
Cell In[4], line 1
----> 1 broken()

Cell In[3], line 12, in broken()
     10 loss = (w ** 2).sum()
     11 {made}
---> 12 print("dloss/dw", grads[0])

TypeError: 'NoneType' object is not subscriptable
"""


def test_a_notebook_traceback_pasted_is_read_from_the_lines_it_quotes():
    """Is a traceback copied from a notebook (IPython's numbered lines) read from the lines it quotes above the
    failing one, and, where the statement that made the name is not among them, is nothing claimed about it?"""
    e = explain(_IPYTHON_PASTE.format(made="grads = loss.backward()"))
    assert e.kind == "api_returned_none" and "Read from the lines the paste quotes" in e.cause
    assert "`grads = loss.backward()`" in e.cause
    assert explain(_IPYTHON_PASTE.format(made="print(loss)")).kind == "unknown"
