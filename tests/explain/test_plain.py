"""Are plain Python errors that an autograd or training mistake causes (a None gradient used as a tensor, a renamed
keyword argument, an optimizer's missing state, a loss passed to step) and the Python-layer messages that name their
problem (an optimizer state dict of other parameters, a vjp's cotangents) explained from what the failing frames hold,
as an exception, as a pasted traceback and in a notebook cell; does each fix, run on its trigger, give no error and
the right result?"""

import inspect
import sys
import textwrap
import traceback
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from autograder.explain import KINDS, explain
from autograder.kinds.plain import KINDS as PLAIN
from tests.explain.test_training import run_in_notebook


def _two_heads():
    torch.manual_seed(0)
    return nn.Linear(2, 1), nn.Linear(2, 1), torch.tensor([[1.0, 2.0]])


# ---------------------------------------------------------------- each kind: the mistake, then its fix run
def unused_input_none_grad():
    used, unused, x = _two_heads()
    loss = used(x).sum()
    grads = torch.autograd.grad(loss, list(used.parameters()) + list(unused.parameters()), allow_unused=True)
    return [g.norm() for g in grads]


def unused_input_none_grad_fixed():
    used, unused, x = _two_heads()
    loss = used(x).sum()
    grads = torch.autograd.grad(loss, list(used.parameters()) + list(unused.parameters()), allow_unused=True)
    norms = [g.norm() for g in grads if g is not None]
    return torch.stack(norms), torch.stack([x.norm(), torch.tensor(1.0)])  # d/dW (Wx + b) = x, d/db = 1


def unexpected_keyword():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x**2).sum()
    loss.backward(retain_variables=True)


def unexpected_keyword_fixed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x**2).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    return x.grad, 4 * x.detach()


def _adam_one_step(model, x):
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    model[0](x).sum().backward()  # model[1] is never used
    opt.step()
    return opt


def optimizer_state_missing():
    model, x = nn.Sequential(nn.Linear(2, 1), nn.Linear(2, 1)), torch.ones(1, 2)
    opt = _adam_one_step(model, x)
    return [opt.state[p]["exp_avg"] for p in model.parameters()]


def optimizer_state_missing_fixed():
    model, x = nn.Sequential(nn.Linear(2, 1), nn.Linear(2, 1)), torch.ones(1, 2)
    opt = _adam_one_step(model, x)
    averages = [opt.state[p]["exp_avg"] for p in model.parameters() if opt.state.get(p)]
    return averages[0], 0.1 * model[0].weight.grad  # beta1 = 0.9: (1 - 0.9) * grad after one step


def optimizer_step_closure():
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torch.ones(1, 2)).sum()
    loss.backward()
    opt.step(loss)


def optimizer_step_closure_fixed():
    model = nn.Linear(2, 1)
    before = model.weight.detach().clone()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torch.ones(1, 2)).sum()
    loss.backward()
    opt.step()
    return model.weight.detach(), before - 0.1


def _saved_while_frozen():
    """A model whose first layer was frozen when its optimizer's state was saved, unfrozen since."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    model[0].requires_grad_(False)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1, momentum=0.9)
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    saved = opt.state_dict()
    model[0].requires_grad_(True)
    return model, saved


def optimizer_state_dict_groups():
    model, saved = _saved_while_frozen()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1, momentum=0.9)
    opt.load_state_dict(saved)


def optimizer_state_dict_groups_fixed():
    model, saved = _saved_while_frozen()
    opt = torch.optim.SGD(model[1].parameters(), lr=0.1, momentum=0.9)
    opt.load_state_dict(saved)
    opt.add_param_group({"params": model[0].parameters()})
    buffer = opt.state[model[1].weight]["momentum_buffer"]
    return buffer, model[1].weight.grad  # the saved momentum of the first step: the gradient itself


def _sin_and_cos(x):
    return x.sin(), x.cos()


def vjp_cotangent_structure():
    x = torch.tensor([0.0, 1.0])
    _, vjp_fn = torch.func.vjp(_sin_and_cos, x)
    vjp_fn(torch.ones(2))


def vjp_cotangent_structure_fixed():
    x = torch.tensor([0.0, 1.0])
    _, vjp_fn, _ = torch.func.vjp(_sin_and_cos, x, has_aux=True)
    (g,) = vjp_fn(torch.ones(2))
    return g, x.cos()


def softmax_implicit_dim():
    logits = torch.randn(2, 3, 4)  # [batch, sequence, classes]
    return F.softmax(logits)


def softmax_implicit_dim_fixed():
    logits = torch.randn(2, 3, 4)
    return F.softmax(logits, dim=-1).sum(-1), torch.ones(2, 3)


CASES = {kind: (globals()[kind], globals()[f"{kind}_fixed"]) for kind in PLAIN}
WARNINGS = {"softmax_implicit_dim"}
# what a paste alone shows: the line that called autograd.grad is not quoted, so the None's origin is not in it
PASTED = {"unused_input_none_grad": "unknown"}


def _raised(program) -> BaseException:
    with pytest.raises(Exception) as info:
        program()
    return info.value


def _warned_explained(program):
    """The explanation the notebook extension gives of the warning ``program`` raises, while it is shown (with the
    stack that warned), and the warning's text."""
    found = []

    def show(message, category, filename, lineno, file=None, line=None):
        found.append((explain(message, sys._getframe(1)), warnings.formatwarning(message, category, filename, lineno)))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        program()
    return found[0]


def test_every_kind_has_a_case():
    """Is every kind of this family here, with a program that makes the mistake and one with its fix?"""
    assert set(CASES) == set(PLAIN) and set(PLAIN) <= set(KINDS)


@pytest.mark.parametrize("kind", CASES)
def test_the_error_object_is_explained_from_its_frame(kind):
    """Is the live error (or the warning while it is shown) explained as its kind, with no field left unfilled?"""
    if kind in WARNINGS:
        e, _ = _warned_explained(CASES[kind][0])
    else:
        e = explain(_raised(CASES[kind][0]))
    assert e.kind == kind, (e.kind, e.message, e.cause)
    assert "?" not in (e.cause + e.fix).split() and "{" not in e.cause + e.fix


@pytest.mark.parametrize("kind", CASES)
def test_the_pasted_traceback_is_explained_and_claims_no_object(kind):
    """Is the pasted traceback (or warning) explained as the same kind, or as what its lines alone show, never
    claiming an object it cannot see?"""
    if kind in WARNINGS:
        text = _warned_explained(CASES[kind][0])[1]
    else:
        text = "".join(traceback.format_exception(_raised(CASES[kind][0])))
    e = explain(text)
    assert e.kind == PASTED.get(kind, kind), (e.kind, e.cause)
    assert "Seen in the failing frame" not in e.cause and "Seen in the calling frame" not in e.cause


@pytest.mark.parametrize("kind", CASES)
def test_the_fix_runs_and_gives_the_right_result(kind):
    """Does the fixed program run without an error (and without the warning) and give the result computed another
    way?"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, expected = CASES[kind][1]()
    torch.testing.assert_close(got, expected)


def test_the_unused_inputs_are_named():
    """Are the inputs autograd.grad gave None for named as the parameters of the module the loss does not use?"""
    e = explain(_raised(unused_input_none_grad))
    assert "2 are None (unused.weight, unused.bias)" in e.cause and "allow_unused=True" in e.cause


def test_a_grad_of_a_parameter_the_forward_never_used_is_named():
    """Is a None read from .grad on an earlier line (a list of grads flattened) traced to the parameters no backward
    reached, named, while the others' .grad are filled?"""

    def broken():
        model = nn.Sequential(nn.Linear(2, 1), nn.Linear(2, 1))
        model[0](torch.ones(1, 2)).sum().backward()
        grads = [p.grad for p in model.parameters()]
        return torch.cat([g.flatten() for g in grads])

    e = explain(_raised(broken))
    assert e.kind == "unused_input_none_grad" and "model.1.weight, model.1.bias" in e.cause
    model = nn.Sequential(nn.Linear(2, 1), nn.Linear(2, 1))
    model[0](torch.ones(1, 2)).sum().backward()
    flat = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])  # the fix, run
    assert flat.shape == (3,)


@pytest.mark.parametrize(
    ("call", "suggested"),
    [
        (lambda: torch.ones(2).to("cpu", **{"async": True}), "non_blocking="),
        (lambda: torch.autograd.grad(torch.ones(1, requires_grad=True).sum(), [], retain_variables=1), "retain_graph="),
        (lambda: torch.tensor([1.0], volatile=True), "torch.no_grad()"),
    ],
)
def test_a_renamed_keyword_is_matched_on_the_real_signature(call, suggested):
    """Is a keyword a torch function does not take answered with its real parameters and the close match (read with
    inspect, its docstring or torch's own list of overloads), or with dropping it where none is close?"""
    e = explain(_raised(call))
    assert e.kind == "unexpected_keyword" and suggested in e.fix, (e.cause, e.fix)


def test_the_renamed_keywords_fixes_run():
    """Do the suggested replacements run: non_blocking=, and torch.no_grad() for volatile=True?"""
    assert torch.ones(2).to("cpu", non_blocking=True).sum() == 2
    with torch.no_grad():
        assert not (torch.ones(2, requires_grad=True) * 2).requires_grad


def test_a_keyword_of_a_function_not_torchs_is_left_alone():
    """Is an unexpected keyword of the learner's own function not explained as torch's?"""

    def mine(a):
        return a

    def grad(f, x):  # the learner's own, named like torch.autograd.grad
        return f(x)

    assert explain(_raised(lambda: mine(1, retain_variables=True))).kind != "unexpected_keyword"
    assert explain(_raised(lambda: grad(abs, 1.0, retain_variables=True))).kind != "unexpected_keyword"


def test_the_softmax_names_the_dimension_it_chose():
    """Does the implicit-dim warning on a 3-D input say it normalised over dim 0, the batch (torch's rule), and
    does the fix dim=-1 make each sample's classes sum to 1 where the implicit one did not?"""
    e, _ = _warned_explained(softmax_implicit_dim)
    assert "shape [2, 3, 4]" in e.cause and "dim 0, the batch" in e.cause and "dim=-1" in e.fix
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        implicit = softmax_implicit_dim()
    assert torch.allclose(implicit.sum(0), torch.ones(3, 4))


def test_max_then_backward_fix_goes_one_step_further():
    """Is `t.max(dim).backward()` told to unpack and then reduce, and does that run where unpacking alone would
    raise the non-scalar error?"""

    def broken():
        x = torch.tensor([[1.0, 3.0], [4.0, 2.0]], requires_grad=True)
        out = x.max(1)
        out.backward()

    e = explain(_raised(broken))
    assert e.kind == "tuple_as_tensor" and ".sum().backward()" in e.fix
    x = torch.tensor([[1.0, 3.0], [4.0, 2.0]], requires_grad=True)
    values, _ = x.max(1)
    assert explain(_raised(values.backward)).kind == "non_scalar_output"
    values.sum().backward()
    assert torch.equal(x.grad, torch.tensor([[0.0, 1.0], [1.0, 0.0]]))


def test_autograd_grad_in_a_compiled_function_is_fixed_by_running_it_eagerly():
    """Is torch.autograd.grad inside torch.compile(fullgraph=True) answered with running that function eagerly, and
    does that run and give the second derivative?"""

    def penalty(x):
        (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
        return g.pow(2).sum()

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    e = explain(_raised(lambda: torch.compile(penalty, fullgraph=True)(x)))
    assert e.kind == "compile_autograd_call" and "without torch.compile" in e.fix
    penalty(x).backward()
    torch.testing.assert_close(x.grad, 36 * x.detach() ** 3)


def test_a_notebook_cell_is_explained_with_the_extension():
    """In IPython with %load_ext autograder, is each mistake's cell followed by its kind's explanation (a warning's on
    stderr)?"""
    helpers = (_two_heads, _adam_one_step, _saved_while_frozen, _sin_and_cos)
    cells = ["import torch\nimport torch.nn.functional as F\nfrom torch import nn"]
    cells += [textwrap.dedent(inspect.getsource(f)) for f in helpers]
    calls = []
    for kind, (broken, _) in CASES.items():
        cells.append(textwrap.dedent(inspect.getsource(broken)))
        calls.append((kind, f"{broken.__name__}()"))
    parts, stderr = run_in_notebook(cells, calls)
    for kind in CASES:
        shown = stderr if kind in WARNINGS else parts.get(kind, "")
        assert f"({kind})" in shown, (kind, parts.get(kind, stderr[-2000:])[-600:])
    assert "dim 0, the batch" in stderr
