"""Are mistakes about what torch returns and accepts (a tuple used as a tensor, a tensor assigned over a Parameter, an
empty parameter list, a scheduler resuming nothing) and a graph cut by a call explained from what the failing frame
holds, as an exception, as a pasted traceback and in a notebook cell; does each fix, run, give no error and the right
gradient; and does no fix set requires_grad on what is not meant to train?"""

import inspect
import textwrap
import traceback
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from autograder.explain import KINDS, explain
from autograder.kinds.returned import KINDS as RETURNED
from tests.explain.test_training import run_in_notebook


def _critic_input():
    torch.manual_seed(0)
    return nn.Linear(2, 1), torch.randn(4, 2, requires_grad=True)


# ---------------------------------------------------------------- each kind: the mistake, then its fix run
def grad_returns_tuple():
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    g = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    penalty = g.pow(2).sum()
    penalty.backward()


def grad_returns_tuple_fixed():
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    penalty = g.pow(2).sum()
    penalty.backward()
    return x.grad, 36 * x.detach() ** 3  # d/dx of sum((3x^2)^2)


def _record_into(shapes, fixed):
    def record(module, args, output):
        shapes.append(args[0].shape if fixed else args.shape)

    return record


def hook_args_tuple():
    model, shapes = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1)), []
    model[1].register_forward_hook(_record_into(shapes, False))
    model(torch.ones(2, 3)).sum().backward()


def hook_args_tuple_fixed():
    model, shapes = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1)), []
    model[1].register_forward_hook(_record_into(shapes, True))
    model(torch.ones(2, 3)).sum().backward()
    return torch.tensor(shapes[0]), torch.tensor([2, 4])


def _loss_and_logits(w):
    logits = w * 2
    return (logits**2).sum(), logits


def tuple_as_tensor():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    out = _loss_and_logits(w)
    out.mul(0.5).backward()


def tuple_as_tensor_fixed():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss, _ = _loss_and_logits(w)
    loss.mul(0.5).backward()
    return w.grad, 4 * w.detach()  # d/dw of 0.5 * sum((2w)^2)


def _mse(w, x, y, give_back):
    loss = ((x * w).sum() - y) ** 2
    if give_back:
        return loss


def backward_on_none():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = _mse(w, torch.tensor([1.0, 1.0]), 1.0, give_back=False)
    loss.backward()


def backward_on_none_fixed():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = _mse(w, torch.tensor([1.0, 1.0]), 1.0, give_back=True)
    loss.backward()
    return w.grad, 2 * (3.0 - 1.0) * torch.tensor([1.0, 1.0])


def tensor_hook_returned_type():
    x = torch.tensor([3.0, 4.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g.norm().item())
    y.sum().backward()


def tensor_hook_returned_type_fixed():
    x, norms = torch.tensor([3.0, 4.0], requires_grad=True), []
    y = x * 2
    y.register_hook(lambda g: norms.append(g.norm().item()))
    y.sum().backward()
    assert norms == [pytest.approx(2**0.5)]
    return x.grad, torch.full((2,), 2.0)


class UnitNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.tensor([3.0, 4.0]))

    def forward(self, x):
        self.weight = self.weight / self.weight.norm()
        return (self.weight * x).sum()


class UnitNormFixed(UnitNorm):
    def forward(self, x):
        w = self.weight / self.weight.norm()
        return (w * x).sum()


def parameter_assigned_tensor():
    UnitNorm()(torch.ones(2)).backward()


def parameter_assigned_tensor_fixed():
    m = UnitNormFixed()
    m(torch.ones(2)).backward()
    w = torch.tensor([3.0, 4.0])
    n = w.norm()
    return m.weight.grad, torch.ones(2) / n - w * (w.sum()) / n**3  # d/dw of sum(w / |w|)


def optimizer_empty_params():
    model = nn.Linear(3, 1)
    params = model.parameters()
    torch.optim.SGD(params, lr=0.1)
    torch.optim.Adam(params, lr=0.1)


def optimizer_empty_params_fixed():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    params = list(model.parameters())
    sgd, adam = torch.optim.SGD(params, lr=0.1), torch.optim.Adam(params, lr=0.1)
    before = model.weight.detach().clone()
    model(torch.ones(1, 3)).sum().backward()
    sgd.step()
    assert len(adam.param_groups[0]["params"]) == 2
    return model.weight.detach(), before - 0.1 * torch.ones(1, 3)


def scheduler_initial_lr():
    opt = torch.optim.SGD(nn.Linear(3, 1).parameters(), lr=1.0)
    start_epoch = 2
    torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5, last_epoch=start_epoch)


def scheduler_initial_lr_fixed():
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(2):
        model(torch.ones(1, 3)).sum().backward()
        opt.step()
        sched.step()
    return torch.tensor(sched.get_last_lr()), torch.tensor([0.25])


def _classifier():
    torch.manual_seed(0)
    return nn.Linear(3, 2), torch.tensor([[1.0, 0.0, 2.0], [0.5, -1.0, 0.0]]), torch.tensor([1, 0])


def _cross_entropy_grad(model, x, y):
    p = torch.softmax(model(x).detach(), 1) - F.one_hot(y, 2)
    return p.T @ x / len(y)


def optimizer_nonleaf_seen():
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True) * 0.01
    torch.optim.SGD([w], lr=0.1)


def optimizer_nonleaf_seen_fixed():
    torch.manual_seed(0)
    w = (torch.randn(3) * 0.01).requires_grad_()
    before = w.detach().clone()
    opt = torch.optim.SGD([w], lr=0.1)
    (w * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    opt.step()
    return w.detach(), before - 0.1 * torch.tensor([1.0, 2.0, 3.0])


def graph_cut():
    model, x, y = _classifier()
    accuracy = (model(x).argmax(1) == y).float().mean()
    (1 - accuracy).backward()


def graph_cut_fixed():
    model, x, y = _classifier()
    F.cross_entropy(model(x), y).backward()
    return model.weight.grad, _cross_entropy_grad(model, x, y)


def nondifferentiable_requires_grad():
    model, x, _ = _classifier()
    predicted = model(x).argmax(dim=1)
    predicted.requires_grad_()


def nondifferentiable_requires_grad_fixed():
    return graph_cut_fixed()


CASES = {kind: (globals()[kind], globals()[f"{kind}_fixed"]) for kind in RETURNED}
# what a paste alone shows: the objects that tell these apart are not in it
PASTED = {  # the traceback's file is read where its line still reads as quoted: there autograd.grad made g
    "tuple_as_tensor": "tuple_as_tensor",
    "graph_cut": "not_built",
    "nondifferentiable_requires_grad": "integer_requires_grad",
    "optimizer_nonleaf_seen": "optimizer_nonleaf",
}


def _raised(program) -> BaseException:
    with pytest.raises(Exception) as info:
        program()
    return info.value


def test_every_kind_has_a_case():
    """Is every kind of this family here, with a program that makes the mistake and one with its fix?"""
    assert set(CASES) == set(RETURNED) and set(RETURNED) <= set(KINDS)


@pytest.mark.parametrize("kind", CASES)
def test_the_error_object_is_explained_from_its_frame(kind):
    """Is the live error explained as its kind, saying what the failing frame (or torch's) showed, with no field
    left unfilled?"""
    e = explain(_raised(CASES[kind][0]))
    assert e.kind == kind, (e.kind, e.message, e.cause)
    assert "?" not in (e.cause + e.fix).split() and "{" not in e.cause + e.fix
    if kind != "tensor_hook_returned_type":  # autograd's engine called the hook: no frame of it, the message says it
        assert "Seen in the" in e.cause or "seen in the failing frame" in e.cause, e.cause


@pytest.mark.parametrize("kind", CASES)
def test_the_pasted_traceback_is_explained_and_claims_no_object(kind):
    """Is the pasted traceback explained as the same kind, or as the kind its message alone gives where only the
    frame's objects tell them apart, never claiming an object it cannot see?"""
    e = explain("".join(traceback.format_exception(_raised(CASES[kind][0]))))
    assert e.kind == PASTED.get(kind, kind), (e.kind, e.cause)
    assert "Seen in the failing frame" not in e.cause and "seen in the failing frame" not in e.cause


@pytest.mark.parametrize("kind", CASES)
def test_the_fix_runs_and_gives_the_right_gradient(kind):
    """Does the fixed program run without an error and give the result computed another way?"""
    got, expected = CASES[kind][1]()
    torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("kind", ["graph_cut", "nondifferentiable_requires_grad", "not_built", "integer_requires_grad"])
def test_no_fix_of_a_cut_graph_sets_requires_grad_on_it(kind):
    """Does no fix of a graph that was cut (or of a value that has no gradient) propose requires_grad on the result,
    the fix that runs and trains nothing?"""
    fix = KINDS[kind].fix
    assert "requires_grad_()" not in fix.replace(
        "Setting requires_grad on the result (torch.tensor(..., requires_grad=True), .requires_grad_()) is no fix", ""
    )
    assert "t.float().requires_grad_()" not in fix


def test_a_tuple_multiplied_is_read_from_the_frame_only():
    """Is `tuple * float` (Python says "sequence", a list would say the same) a tuple_as_tensor from the object, and
    left unknown from a paste, which cannot tell a tuple from a list?"""

    def broken():
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        out = _loss_and_logits(w)
        return out * 0.5

    error = _raised(broken)
    assert explain(error).kind == "tuple_as_tensor" and "made by `out = _loss_and_logits(w)`" in explain(error).cause
    assert explain("".join(traceback.format_exception(error))).kind == "unknown"


def test_the_call_that_cut_the_graph_is_named_with_its_evidence():
    """Is `torch.tensor(list_of_losses)` named as the cut, with the list of tensors that had a grad_fn, and is the fix
    torch.stack, which, run, gives every head its gradient?"""
    heads = nn.ModuleList(nn.Linear(2, 1) for _ in range(3))
    losses = [h(torch.ones(1, 2)).sum() for h in heads]

    def broken():
        total = torch.tensor(losses).sum()
        total.backward()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = explain(_raised(broken))
    assert e.kind == "graph_cut" and "`torch.tensor(losses)`" in e.cause and "losses is a list of 3" in e.cause
    assert "torch.stack(losses)" in e.fix
    torch.stack(losses).sum().backward()
    assert all(torch.equal(h.weight.grad, torch.ones(1, 2)) for h in heads)


def test_a_paste_whose_warning_quotes_the_cut_names_it():
    """Does a paste with the scalar-conversion warning above the not-built error name the line the warning quotes
    (torch.tensor of the losses) and give torch.stack?"""
    heads = [nn.Linear(2, 1) for _ in range(2)]
    losses = [h(torch.ones(1, 2)).sum() for h in heads]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        total = torch.tensor(losses).sum()
    message = "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    message += "Consider using tensor.detach() first."  # torch warns once per process: its words, as Python prints them
    line = "    total = torch.tensor(losses).sum()  # per-head losses\n"
    text = warnings.formatwarning(UserWarning(message), UserWarning, "train.py", 20, line)
    error = "".join(traceback.format_exception(_raised(total.backward)))
    e = explain(text + error)
    assert e.kind == "graph_cut" and "torch.tensor(losses)" in e.cause and "Seen in the paste" in e.cause
    assert "torch.stack(losses)" in e.fix


def test_an_exhausted_generator_and_a_list_of_layers_are_told_apart():
    """Is a model whose layers sit in a plain list (no parameters at all) told apart from a used-up generator?"""

    class Listed(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(2, 2)]

    model = Listed()
    e = explain(_raised(lambda: torch.optim.SGD(model.parameters(), lr=0.1)))
    assert e.kind == "optimizer_empty_params" and "self.layers" not in e.cause and "layers" in e.cause
    assert "nn.ModuleList" in e.fix
    e = explain(_raised(optimizer_empty_params))
    assert "went through it before this line" in e.cause and "torch.optim.SGD(params" in e.cause


def test_a_scheduler_error_is_guessed_as_a_schedulers_not_an_optimizers():
    """Is an unknown error raised in lr_scheduler.py guessed as the scheduler's, not given the optimizer's advice?"""
    from autograder.explain.context import Context
    from autograder.explain.guess import family_guess

    where = Context(calls="/x/site-packages/torch/optim/lr_scheduler.py:__init__")
    guess = family_guess(where)
    assert "scheduler" in guess["what"] and "last_epoch" in guess["look"] and "leaf" not in guess["look"]


def test_a_notebook_cell_is_explained_with_the_extension():
    """In IPython with %load_ext autograder, is each mistake's cell followed by its kind's explanation?"""
    helpers = (_critic_input, _record_into, _loss_and_logits, _classifier, _cross_entropy_grad, _mse)
    cells = ["import torch\nimport torch.nn.functional as F\nfrom torch import nn"]
    cells += [textwrap.dedent(inspect.getsource(f)) for f in helpers]
    cells.append(inspect.getsource(UnitNorm))
    calls = []
    for kind, (broken, _) in CASES.items():
        cells.append(textwrap.dedent(inspect.getsource(broken)))
        calls.append((kind, f"{broken.__name__}()"))
    parts, stderr = run_in_notebook(cells, calls)
    for kind in CASES:
        assert f"({kind})" in parts.get(kind, ""), (kind, parts.get(kind, stderr[-2000:])[-600:])


def test_a_pasted_inplace_error_names_no_optimizer_its_lines_do_not_show():
    """Does a pasted in-place error on a transposed weight, whose quoted lines show no optimizer, list the in-place
    updates a paste cannot tell apart instead of claiming an optimizer.step()?"""

    def broken():
        w = torch.ones(3, 2, requires_grad=True)
        loss = (torch.ones(4, 2, requires_grad=True) @ w.T).sum()
        with torch.no_grad():
            w.mul_(0.5)
        loss.backward()

    e = explain("".join(traceback.format_exception(_raised(broken))))
    assert e.kind == "modified_inplace" and "an optimizer.step() ran" not in e.cause
    assert "the paste does not show which" in e.cause


def test_a_non_leaf_handed_to_an_optimizer_is_traced_to_the_parameter_it_views():
    """Are the rows that `*net.parameters()` unpacks, and a slice of a weight, named as views of that parameter, with a
    fix that hands over the parameters (which, run, the optimizer accepts whole)?"""
    import itertools

    net, W = nn.Linear(3, 2), torch.zeros(2, 2, requires_grad=True)
    e = explain(_raised(lambda: torch.optim.SGD(itertools.chain(*net.parameters(), W), lr=0.1)))
    assert e.kind == "optimizer_nonleaf_seen" and "a row of net.weight" in e.cause and "unpacks" in e.cause
    opt = torch.optim.SGD(itertools.chain(net.parameters(), [W]), lr=0.1)
    assert [p.shape for p in opt.param_groups[0]["params"]] == [(2, 3), (2,), (2, 2)]
    unpack = _raised(lambda: torch.optim.SGD(itertools.chain(*net.parameters(), W), lr=0.1))
    pasted = explain("".join(traceback.format_exception(unpack)))
    assert pasted.kind == "optimizer_nonleaf_seen" and "A paste shows no objects" in pasted.cause
    e = explain(_raised(lambda: torch.optim.SGD([net.weight[:, :2]], lr=0.1)))
    assert e.kind == "optimizer_nonleaf_seen" and "a view (slice) of net.weight" in e.cause


def test_a_loss_function_without_return_is_named():
    """Where the None came from a function with no `return` of a value, is that function named, and does its fix
    (return the loss) give the gradient?"""

    def compute_loss(w):
        loss = (w**2).sum()  # noqa: F841 -- the mistake: computed, never returned

    def broken():
        w = torch.ones(2, requires_grad=True)
        loss = compute_loss(w)
        loss.backward()

    e = explain(_raised(broken))
    assert e.kind == "backward_on_none" and "compute_loss has no `return` of a value" in e.cause
    assert "return loss" in e.fix
    w = torch.ones(2, requires_grad=True)
    (w**2).sum().backward()
    torch.testing.assert_close(w.grad, 2 * torch.ones(2))


def test_a_forward_hook_that_returns_a_tuple_is_named_where_the_output_is_used():
    """Is the tuple a forward hook's return put in place of a module's output traced to that hook, and does a hook
    that returns None leave the output (and its gradient) as it was?"""
    m = nn.Linear(2, 1)
    m.register_forward_hook(lambda mod, args, out: (out, out.detach()))
    e = explain(_raised(lambda: m(torch.ones(1, 2)).sum().backward()))
    assert e.kind == "tuple_as_tensor" and "forward hook" in e.cause and "return None" in e.fix
    kept = []
    n = nn.Linear(2, 1)
    n.register_forward_hook(lambda mod, args, out: kept.append(out.detach()))
    n(torch.ones(1, 2)).sum().backward()
    torch.testing.assert_close(n.weight.grad, torch.ones(1, 2))


def test_a_paste_whose_file_no_longer_matches_reads_only_its_lines():
    """Is a pasted traceback whose file is gone (or whose line changed since) read from its quoted lines alone: the
    tuple named, its origin not claimed?"""
    with pytest.raises(AttributeError) as info:
        grad_returns_tuple()
    text = "".join(traceback.format_exception(info.value)).replace(__file__, "/nowhere/gone.py")
    e = explain(text)
    assert e.kind == "tuple_as_tensor" and "where g was made is not in it" in e.cause


def test_a_pasted_gradient_tuple_behind_an_operator_is_traced_to_autograd_grad():
    """Is a paste of `w -= lr * g` (g what torch.autograd.grad returned) traced to autograd.grad from the traceback's
    file, though Python's message (a sequence times a float) names no tuple; and does the unpacked fix run and step
    by the gradient?"""

    def broken():
        w = torch.ones(3, requires_grad=True)
        step_grad = torch.autograd.grad((w**2).sum(), w)
        with torch.no_grad():
            w -= 0.1 * step_grad

    with pytest.raises(TypeError) as info:
        broken()
    e = explain("".join(traceback.format_exception(info.value)))
    assert e.kind == "grad_returns_tuple" and "step_grad was made by" in e.cause
    w = torch.ones(3, requires_grad=True)
    (step_grad,) = torch.autograd.grad((w**2).sum(), w)
    with torch.no_grad():
        w -= 0.1 * step_grad
    torch.testing.assert_close(w.detach(), torch.full((3,), 0.8))
