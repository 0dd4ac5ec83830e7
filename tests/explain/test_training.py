"""Are ordinary Python errors that an autograd or training mistake causes explained from what the failing frame
holds, as an exception, as a pasted traceback and in a notebook cell, and does each kind's fix, run, give no error and
the right result?"""

import inspect
import io
import subprocess
import sys
import textwrap
import traceback

import pytest
import torch
from torch import nn

from autograder.explain import KINDS, explain
from autograder.kinds.training import KINDS as TRAINING
from autograder.lessons import COURSE_ROOT


def _x():
    return torch.tensor([1.0, -2.0, 3.0], requires_grad=True)


def _model_with_aux(x):
    return (x**2).sum(), x * 2  # the loss and the logits


# ---------------------------------------------------------------- each kind: the mistake, then its fix run
def backward_on_container():
    x = _x()
    out = _model_with_aux(x)
    out.backward()


def backward_on_container_fixed():
    x = _x()
    loss, _ = _model_with_aux(x)
    loss.backward()
    return x.grad, 2 * x.detach()


def backward_on_number():
    x = _x()
    loss = (x**2).sum().item()
    loss.backward()


def backward_on_number_fixed():
    x = _x()
    loss = (x**2).sum()
    loss.backward()
    return x.grad, 2 * x.detach()


def _logits_target():
    return torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3]], requires_grad=True), torch.tensor([0, 2])


def loss_module_given_data():
    logits, target = _logits_target()
    loss = nn.CrossEntropyLoss(logits, target)
    loss.backward()


def loss_module_given_data_fixed():
    logits, target = _logits_target()
    criterion = nn.CrossEntropyLoss()
    loss = criterion(logits, target)
    loss.backward()
    expected = (torch.softmax(logits.detach(), 1) - nn.functional.one_hot(target, 3)) / len(target)
    return logits.grad, expected


def context_manager_not_called():
    w = _x()
    (w**2).sum().backward()
    with torch.no_grad:
        w -= 0.1 * w.grad


def context_manager_not_called_fixed():
    w = _x()
    (w**2).sum().backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    assert w.is_leaf and w.requires_grad
    return w.detach(), _x().detach() * (1 - 0.1 * 2)


def _step(make_optimizer):
    """One SGD step of lr 0.1 on a linear model; (its weight after, the weight by hand)."""
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    before = model.weight.detach().clone()
    opt = make_optimizer(model)
    model(torch.ones(2, 3)).sum().backward()
    grad = model.weight.grad.clone()
    opt.step()
    return model.weight.detach(), before - 0.1 * grad


def optimizer_given_module():
    model = nn.Linear(3, 1)
    torch.optim.SGD(model, lr=0.1)


def optimizer_given_module_fixed():
    return _step(lambda model: torch.optim.SGD(model.parameters(), lr=0.1))


def optimizer_given_tensor():
    w = torch.zeros(3, requires_grad=True)
    torch.optim.SGD(w, lr=0.1)


def optimizer_given_tensor_fixed():
    return _step(lambda model: torch.optim.SGD([model.weight, model.bias], lr=0.1))


def optimizer_overlapping_groups():
    model = nn.Linear(3, 1)
    torch.optim.SGD([{"params": model.parameters()}, {"params": [model.bias], "lr": 1.0}], lr=0.1)


def optimizer_overlapping_groups_fixed():
    def split(model):
        head = set(model.parameters()) - {model.weight}
        groups = [{"params": [model.weight]}, {"params": list(head), "lr": 0.1}]
        return torch.optim.SGD(groups, lr=0.1)

    return _step(split)


class NoSuperInit(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(3, 1)


class SuperInit(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x)


def module_init_not_called():
    NoSuperInit()


def module_init_not_called_fixed():
    net, x = SuperInit(), torch.ones(2, 3)
    net(x).sum().backward()
    return net.fc.weight.grad, x.sum(0, keepdim=True)


def _hooked_model(store):
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU())

    def save(name):
        def hook(module, args, output):
            store[name] = output.detach()

        return hook

    model[0].register_forward_hook(save("fc1"))
    return model


def hook_never_ran():
    activations = {}
    model = _hooked_model(activations)  # noqa: F841 -- the model is built, never called
    print(activations["fc1"].shape)


def hook_never_ran_fixed():
    activations, x = {}, torch.ones(2, 3)
    model = _hooked_model(activations)
    model(x)
    return activations["fc1"], model[0](x).detach()


def _logged(model):
    def log_output(module, args, output):
        return None

    model.register_forward_hook(log_output)
    return model


def pickle_module_hook():
    model = _logged(nn.Linear(3, 1))
    torch.save(model, io.BytesIO())


def pickle_module_hook_fixed():
    torch.manual_seed(0)
    model, file = _logged(nn.Linear(3, 1)), io.BytesIO()
    torch.save(model.state_dict(), file)
    file.seek(0)
    again = nn.Linear(3, 1)
    again.load_state_dict(torch.load(file))
    return again.weight, model.weight


def wrapper_attribute():
    wrapped = nn.DataParallel(nn.Linear(3, 1))
    print(wrapped.in_features)


def wrapper_attribute_fixed():
    wrapped = nn.DataParallel(nn.Linear(3, 1))
    return torch.tensor(wrapped.module.in_features), torch.tensor(3)


def _prefixed(prefix):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    return model, (torch.compile(model) if prefix == "_orig_mod" else nn.DataParallel(model)).state_dict()


def compiled_state_dict_prefix():
    nn.Linear(3, 1).load_state_dict(_prefixed("_orig_mod")[1])


def compiled_state_dict_prefix_fixed():
    model, sd = _prefixed("_orig_mod")
    plain = nn.Linear(3, 1)
    plain.load_state_dict({k.removeprefix("_orig_mod."): v for k, v in sd.items()})
    return plain.weight, model.weight


def wrapper_state_dict_prefix():
    nn.Linear(3, 1).load_state_dict(_prefixed("module")[1])


def wrapper_state_dict_prefix_fixed():
    model, sd = _prefixed("module")
    plain = nn.Linear(3, 1)
    plain.load_state_dict({k.removeprefix("module."): v for k, v in sd.items()})
    return plain.weight, model.weight


def consumed_same_loss():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (w.sin() * 3).sum()
    for _ in range(2):
        loss.backward()


def consumed_same_loss_fixed():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        loss = (w.sin() * 3).sum()
        loss.backward()
    return w.grad, 2 * 3 * torch.cos(w.detach())


def consumed_carried_state():
    cell, h = nn.RNNCell(2, 2), torch.zeros(1, 2)
    for _ in range(2):
        h = cell(torch.ones(1, 2), h)
        loss = h.sum()
        loss.backward()


def consumed_carried_state_fixed():
    torch.manual_seed(0)
    cell, h = nn.RNNCell(2, 2), torch.zeros(1, 2)
    for _ in range(2):
        h = cell(torch.ones(1, 2), h)
        h.sum().backward()
        h = h.detach()
    last = cell.bias_ih.grad.clone()  # the second step's gradient, on the detached state, and the first's
    cell.zero_grad()
    torch.manual_seed(0)
    first = cell(torch.ones(1, 2), torch.zeros(1, 2))
    first.sum().backward()
    once = cell.bias_ih.grad.clone()
    cell.zero_grad()
    cell(torch.ones(1, 2), first.detach()).sum().backward()
    return last, once + cell.bias_ih.grad


def _trunk_and_heads():
    torch.manual_seed(0)
    return nn.Linear(3, 3), nn.Linear(3, 1), nn.Linear(3, 1), torch.ones(2, 3)


def consumed_shared_graph():
    trunk, head1, head2, x = _trunk_and_heads()
    features = torch.tanh(trunk(x))
    loss1, loss2 = head1(features).sum(), head2(features).sum()
    loss1.backward()
    loss2.backward()


def consumed_shared_graph_fixed():
    trunk, head1, head2, x = _trunk_and_heads()
    features = torch.tanh(trunk(x))
    loss1, loss2 = head1(features).sum(), head2(features).sum()
    (loss1 + loss2).backward()
    d = (1 - torch.tanh(trunk(x)).detach() ** 2) * (head1.weight + head2.weight).detach()  # d(sum)/d(pre-tanh)
    return trunk.weight.grad, d.T @ x


class _SamplesOfAParameter(torch.utils.data.Dataset):
    def __init__(self, detach):
        self.w, self.detach = torch.ones(3, requires_grad=True), detach

    def __len__(self):
        return 4

    def __getitem__(self, i):
        sample = self.w * i
        return sample.detach() if self.detach else sample


def dataset_requires_grad():
    for batch in torch.utils.data.DataLoader(_SamplesOfAParameter(False), batch_size=2, num_workers=1):
        print(batch.shape)


def dataset_requires_grad_fixed():
    batches = list(torch.utils.data.DataLoader(_SamplesOfAParameter(True), batch_size=2, num_workers=1))
    assert not any(b.requires_grad for b in batches)
    return torch.cat(batches), torch.arange(4.0).unsqueeze(1).expand(4, 3)


CASES = {kind: (globals()[kind], globals()[f"{kind}_fixed"]) for kind in TRAINING}


def _raised(program) -> BaseException:
    with pytest.raises(Exception) as info:
        program()
    return info.value


def test_every_kind_has_a_case():
    """Is every kind of this family here, with a program that makes the mistake and one with its fix?"""
    assert set(CASES) == set(TRAINING) and set(TRAINING) <= set(KINDS)


@pytest.mark.parametrize("kind", CASES)
def test_the_error_object_is_explained_from_its_frame(kind):
    """Is the live error explained as its kind, saying what the failing frame showed?"""
    e = explain(_raised(CASES[kind][0]))
    assert e.kind == kind, (e.kind, e.message)
    assert type(_raised(CASES[kind][0])).__name__ in KINDS[kind].types or isinstance(
        _raised(CASES[kind][0]), RuntimeError
    )
    assert "?" not in e.cause.split() and "{" not in e.cause
    if kind not in ("compiled_state_dict_prefix", "wrapper_state_dict_prefix"):  # the message shows the keys
        assert "Seen in the" in e.cause or "seen in the frame" in e.cause, e.cause


@pytest.mark.parametrize("kind", CASES)
def test_the_pasted_traceback_is_explained_and_says_what_it_could_not_see(kind):
    """Is the pasted traceback explained as the same kind (but a KeyError, whose dict a paste cannot show), and
    does it never claim to have seen an object?"""
    pasted = "".join(traceback.format_exception(_raised(CASES[kind][0])))
    e = explain(pasted)
    if kind == "hook_never_ran":  # the dict and its hooks are not in a paste: nothing is claimed
        assert e.kind == "unknown"
        return
    if kind == "dataset_requires_grad":  # the worker's message says it: a paste too
        assert e.kind == kind and "DataLoader worker" in e.cause
        return
    if kind.startswith("consumed_"):  # a paste quotes the failing line only: both causes are named
        assert e.kind == "consumed"
        return
    assert e.kind == kind, (e.kind, pasted[-300:])
    assert "Seen in the" not in e.cause and "seen in the frame" not in e.cause


@pytest.mark.parametrize("kind", CASES)
def test_the_fix_runs_and_gives_the_right_result(kind):
    """Does the fixed program run without an error and give the result computed another way (a gradient by hand,
    the weights a step by hand gives, the weights saved)?"""
    got, expected = CASES[kind][1]()
    torch.testing.assert_close(got, expected)


def test_an_error_on_objects_that_are_not_torchs_stays_unknown():
    """Does a plain Python mistake (a tuple of numbers, an empty dict without hooks) stay unexplained?"""
    store = {}
    assert explain(_raised(lambda: store["fc1"])).kind == "unknown"
    assert explain(_raised(lambda: (1, 2).backward())).kind == "backward_on_container"  # the message says so
    assert explain(_raised(lambda: len(1))).kind == "unknown"


def test_a_notebook_cell_is_explained_with_the_extension():
    """In IPython with %load_ext autograder, is each mistake's cell followed by its kind's explanation?"""
    cells = [
        textwrap.dedent(inspect.getsource(f)) for f in (_x, _model_with_aux, _logits_target, _hooked_model, _logged)
    ]
    cells.append("import io, torch\nfrom torch import nn")
    calls = []
    for kind, (broken, _) in CASES.items():
        if kind == "module_init_not_called":
            cells.append(inspect.getsource(NoSuperInit))
        if kind == "dataset_requires_grad":
            cells.append(inspect.getsource(_SamplesOfAParameter))
        if kind == "consumed_shared_graph":
            cells.append(textwrap.dedent(inspect.getsource(_trunk_and_heads)))
        if kind.endswith("state_dict_prefix"):
            cells.append(inspect.getsource(_prefixed))
        cells.append(textwrap.dedent(inspect.getsource(broken)))
        calls.append((kind, f"{broken.__name__}()"))
    parts, stderr = run_in_notebook(cells, calls)
    for kind in CASES:
        assert f"({kind})" in parts.get(kind, ""), (kind, parts.get(kind, stderr[-2000:])[-600:])


def run_in_notebook(cells: list[str], calls: list[tuple[str, str]]) -> tuple[dict, str]:
    """Run ``cells`` in an IPython shell with %load_ext autograder, then each ``(kind, call)``: ({kind: what the
    shell printed for its call}, the shell's stderr)."""
    script = textwrap.dedent(f"""
        from IPython.core.interactiveshell import InteractiveShell
        ip = InteractiveShell.instance()
        ip.run_line_magic("colors", "nocolor")
        ip.run_line_magic("load_ext", "autograder")
        for cell in {cells!r}:
            ip.run_cell(cell)
        for kind, call in {calls!r}:
            print("=== " + kind, flush=True)
            ip.run_cell(call)
    """)
    run = subprocess.run(
        [sys.executable, "-c", script], text=True, capture_output=True, cwd=COURSE_ROOT, timeout=240, check=False
    )
    return {p.split("\n", 1)[0]: p for p in run.stdout.split("=== ")[1:]}, run.stderr
