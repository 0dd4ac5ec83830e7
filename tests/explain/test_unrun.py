"""Does the explainer read what the code above the failing line shows, before any stock cause: a ``.backward`` written
without parentheses (so a ``.grad`` is None, not because of zero_grad), and a gradient penalty whose
``torch.autograd.grad`` lacks ``create_graph=True`` (so "backward through the graph a second time" is that, not the
same loss twice, and retain_graph=True is not the fix)? As an object, a paste and a notebook cell; each fix run."""

import inspect
import textwrap
import traceback

import pytest
import torch
from torch import nn

from autograder.explain import explain
from tests.explain.test_training import run_in_notebook


def _bare_backward_then_step():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    opt.zero_grad()
    objective = net(torch.ones(5, 4)).pow(2).mean()
    objective.backward  # noqa: B018 -- the mistake under test
    return [w.grad.norm() for w in net.parameters()]


def _bare_backward_manual(fixed: bool = False):
    weight = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
    x = torch.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, -1.0]])
    err = ((x @ weight) - 1.0).square().sum()
    if fixed:
        err.backward()
    else:
        err.backward  # noqa: B018 -- the mistake under test
    return weight.grad * 1.0


def _helper_reads(model):
    return sum(p.grad.abs().sum() for p in model.parameters())


def _bare_backward_before_a_helper():
    model = nn.Linear(2, 2)
    optimiser = torch.optim.Adam(model.parameters())
    optimiser.zero_grad()
    cost = model(torch.ones(3, 2)).sum()
    cost.backward  # noqa: B018 -- the mistake under test
    return _helper_reads(model)


def _raised(program, *args) -> BaseException:
    with pytest.raises(Exception) as info:
        program(*args)
    return info.value


@pytest.mark.parametrize("program", [_bare_backward_then_step, _bare_backward_manual, _bare_backward_before_a_helper])
def test_a_backward_without_parentheses_is_named_not_zero_grad(program):
    """Is the `X.backward` statement named as why .grad is None, with the call as the fix, and neither zero_grad
    blamed nor a `.grad is not None` guard offered (it would leave the model untrained)? Object and paste."""
    error = _raised(program)
    for given in (error, "".join(traceback.format_exception(error))):
        e = explain(given)
        assert e.kind == "grad_is_none", (e.kind, e.cause)
        assert "no parentheses" in e.cause and ".backward`" in e.cause, e.cause
        assert ".backward()" in e.fix and "is not None" not in e.fix and "zero_grad" not in e.fix, e.fix
        assert "ran before this line" not in e.cause


def test_the_called_backward_gives_the_gradient_by_hand():
    """Does the fix (the call with parentheses) run and give 2 x^T (x w - 1), the gradient by hand?"""
    weight = torch.tensor([1.0, -2.0, 0.5])
    x = torch.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, -1.0]])
    torch.testing.assert_close(_bare_backward_manual(fixed=True), 2 * x.T @ (x @ weight - 1.0))


def test_a_reset_after_a_real_backward_is_still_grad_reset():
    """Does a zero_grad() after a called backward keep its own explanation (the bare check claims nothing there)?"""

    def reset():
        model = nn.Linear(2, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.ones(1, 2)).sum().backward()
        opt.zero_grad()
        return model.weight.grad.norm()

    assert explain(_raised(reset)).kind == "grad_reset"


def _critic():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(3, 4), nn.Softplus(), nn.Linear(4, 1))


def _penalised_step():
    critic = _critic()
    points = torch.randn(6, 3, requires_grad=True)
    score = critic(points)
    (slope,) = torch.autograd.grad(score.sum(), points)
    gp = ((slope.norm(dim=1) - 1) ** 2).mean()
    total = score.mean() + 10.0 * gp
    total.backward()
    return torch.cat([p.grad.flatten() for p in critic.parameters()])


def _penalised_step_fixed():
    critic = _critic()
    points = torch.randn(6, 3, requires_grad=True)
    score = critic(points)
    (slope,) = torch.autograd.grad(score.sum(), points, create_graph=True)
    gp = ((slope.norm(dim=1) - 1) ** 2).mean()
    total = score.mean() + 10.0 * gp
    total.backward()
    return torch.cat([p.grad.flatten() for p in critic.parameters()])


def _penalty_in_one_line():
    critic = _critic()
    inputs = torch.randn(4, 3).requires_grad_()
    out = critic(inputs)
    grads = torch.autograd.grad(outputs=out, inputs=inputs, grad_outputs=torch.ones_like(out), create_graph=False)[0]
    (out.sum() + grads.pow(2).sum()).backward()
    return torch.cat([p.grad.flatten() for p in critic.parameters()])


def _penalty_in_one_line_fixed():
    critic = _critic()
    inputs = torch.randn(4, 3).requires_grad_()
    out = critic(inputs)
    grads = torch.autograd.grad(outputs=out, inputs=inputs, grad_outputs=torch.ones_like(out), create_graph=True)[0]
    (out.sum() + grads.pow(2).sum()).backward()
    return torch.cat([p.grad.flatten() for p in critic.parameters()])


def _penalty_with_grad_imported():
    from torch.autograd import grad

    critic = _critic()
    z = torch.randn(5, 3, requires_grad=True)
    d = critic(z).sum()
    dz = grad(d, z, retain_graph=False)[0]
    regulariser = dz.square().sum(dim=1).mean()
    objective = d + regulariser
    objective.backward()


@pytest.mark.parametrize("program", [_penalised_step, _penalty_in_one_line, _penalty_with_grad_imported])
def test_a_penalty_without_create_graph_is_named_not_retain_graph(program):
    """Is "backward through the graph a second time" after a gradient penalty explained by its autograd.grad
    without create_graph=True, the fix create_graph=True, and retain_graph=True said not to be one? Object, paste."""
    error = _raised(program)
    assert "second time" in str(error)
    for given in (error, "".join(traceback.format_exception(error))):
        e = explain(given)
        assert e.kind == "second_derivative_no_create_graph", (e.kind, e.cause)
        assert "grad(" in e.cause and "create_graph=True" in e.fix and "?" not in e.cause.split()
        assert "retain_graph=True" not in e.fix and "retain_graph=True would silence" in e.cause


@pytest.mark.parametrize("program", [_penalised_step_fixed, _penalty_in_one_line_fixed])
def test_create_graph_gives_the_penalty_its_gradient(program):
    """Does the fix (create_graph=True) run and give the critic the gradient torch.func computes for loss + penalty,
    while retain_graph=True alone runs but gives a different (penalty-less) gradient?"""
    got = program()
    critic = _critic()
    torch.manual_seed(1)  # the same points as the program: _critic() drew its weights first
    _critic()
    params = dict(critic.named_parameters())
    points = torch.randn(6 if program is _penalised_step_fixed else 4, 3)

    def total(p):
        f = lambda x: torch.func.functional_call(critic, p, (x,)).squeeze(-1)  # noqa: E731
        slope = torch.func.vmap(torch.func.grad(f))(points)
        out = f(points)
        if program is _penalised_step_fixed:
            return out.mean() + 10.0 * ((slope.norm(dim=1) - 1) ** 2).mean()
        return out.sum() + slope.pow(2).sum()

    expected = torch.cat([g.flatten() for g in torch.func.grad(total)(params).values()])
    torch.testing.assert_close(got, expected)


def test_retain_graph_runs_but_leaves_the_penalty_untrained():
    """Is retain_graph=True (without create_graph) wrong here: it runs, and the critic's gradient equals the one of
    the score alone, as if there were no penalty?"""
    critic = _critic()
    points = torch.randn(6, 3, requires_grad=True)
    score = critic(points)
    (slope,) = torch.autograd.grad(score.sum(), points, retain_graph=True)
    (score.mean() + 10.0 * ((slope.norm(dim=1) - 1) ** 2).mean()).backward()
    got = torch.cat([p.grad.flatten() for p in critic.parameters()])
    critic.zero_grad()
    critic(points).mean().backward()
    torch.testing.assert_close(got, torch.cat([p.grad.flatten() for p in critic.parameters()]))
    assert not torch.allclose(got, _penalised_step_fixed())


def test_a_notebook_cell_is_explained_with_the_extension():
    """In IPython with %load_ext autograder, are both mistakes named from the cell's own code?"""
    cells = ["import torch\nfrom torch import nn"]
    cells += [textwrap.dedent(inspect.getsource(f)) for f in (_critic, _penalised_step, _bare_backward_manual)]
    calls = [("second_derivative_no_create_graph", "_penalised_step()"), ("grad_is_none", "_bare_backward_manual()")]
    parts, stderr = run_in_notebook(cells, calls)
    assert "(second_derivative_no_create_graph)" in parts.get("second_derivative_no_create_graph", ""), stderr[-2000:]
    assert "no parentheses" in parts.get("grad_is_none", ""), parts.get("grad_is_none", stderr[-2000:])
