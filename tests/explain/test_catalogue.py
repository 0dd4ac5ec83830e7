"""Does the explainer know PyTorch's own autograd messages (``autograder/kinds/catalogue.tsv``), each read from the
installed torch, and is a sample of them recognised when real code on this torch raises them?"""

import copy
import functools
import re
import tempfile
import warnings
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.checkpoint import checkpoint

from autograder.explain import KINDS, explain
from autograder.kinds import catalogued
from autograder.kinds.catalogued import catalogue

ROWS = catalogue()
TORCH = Path(torch.__file__).parent


@functools.cache
def _torch_file(where: str) -> bytes:
    return (TORCH / where).read_bytes()


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['kind']}:{r['fragment'][:30]}" for r in ROWS])
def test_each_entry_is_pytorchs_own_and_matches_its_message(row):
    """Is the entry's fragment in its message and in the installed torch's file it names, and does its pattern
    match its message?"""
    assert row["fragment"] in row["message"]
    assert row["fragment"].encode() in _torch_file(row["where"])
    assert re.search(row["pattern"], row["message"], re.IGNORECASE)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['kind']}:{r['fragment'][:30]}" for r in ROWS])
def test_each_message_is_explained_as_its_kind(row):
    """Is each message explained as its entry's kind, and one the course does not teach ("-") as unknown?"""
    assert row["kind"] == "-" or row["kind"] in KINDS
    assert explain(row["message"]).kind == (row["kind"] if row["kind"] != "-" else "unknown")


def test_coverage_is_measured():
    """Do most catalogued messages have a kind (the rest are named "-" on purpose)?"""
    with_kind = sum(r["kind"] != "-" for r in ROWS)
    assert with_kind / len(ROWS) >= 0.75, f"{with_kind}/{len(ROWS)}"


def _leaf():
    return torch.ones(2, requires_grad=True)


def _requires_grad_on_nonleaf():
    y = _leaf() * 2
    y.requires_grad = False


class _CachedInInit(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))
        self.c = self.w * 2


def _detach_a_view():
    (_leaf() * 2)[0].detach_()


def _inference_requires_grad():
    with torch.inference_mode():
        t = torch.ones(2)
    t.requires_grad_()


def _copy_construct():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.tensor(_leaf())


def _recomputed_differently():
    calls = []

    def block(x):
        calls.append(1)
        return x.sin() if len(calls) == 1 else x[:1].sin()

    checkpoint(block, _leaf(), use_reentrant=False).sum().backward()


def _compiled_double_backward():
    f = torch.compile(lambda x: (x.sin() ** 2).sum(), backend="aot_eager")
    x = _leaf()
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    g.sum().backward()


def _ddp(module, **kwargs):
    from torch.nn.parallel import DistributedDataParallel

    with tempfile.TemporaryDirectory() as folder:
        dist.init_process_group("gloo", init_method=f"file://{folder}/store", rank=0, world_size=1)
        try:
            DistributedDataParallel(module, **kwargs)
        finally:
            dist.destroy_process_group()


TRIGGERS = {
    "integer_requires_grad": lambda: torch.tensor([1, 2], requires_grad=True),
    "optimizer_nonleaf": lambda: torch.optim.SGD([_leaf() * 2], lr=1),
    "requires_grad_nonleaf": _requires_grad_on_nonleaf,
    "deepcopy_nonleaf": lambda: copy.deepcopy(_CachedInInit()),
    "retain_grad_no_grad": lambda: torch.ones(2).retain_grad(),
    "out_requires_grad": lambda: torch.sin(_leaf(), out=torch.empty(2)),
    "grad_output_shape": lambda: torch.autograd.grad((_leaf() * 2), _leaf(), grad_outputs=torch.ones(3)),
    "grad_assign_shape": lambda: setattr(_leaf(), "grad", torch.ones(3)),
    "detach_view_inplace": _detach_a_view,
    "inference_requires_grad": _inference_requires_grad,
    "copy_construct": _copy_construct,
    "checkpoint_recomputed_differently": _recomputed_differently,
    "gradcheck_no_input_grad": lambda: torch.autograd.gradcheck(torch.sin, (torch.ones(2, dtype=torch.double),)),
    "grad_input_no_grad": lambda: torch.autograd.grad(_leaf().sum(), torch.ones(2)),
    "hessian_not_scalar": lambda: torch.autograd.functional.hessian(lambda x: x * 2, torch.ones(2)),
    "forward_ad_no_level": lambda: torch.autograd.forward_ad.make_dual(torch.ones(2), torch.ones(2)),
    "jvp_tangent_shape": lambda: torch.func.jvp(torch.sin, (torch.ones(2),), (torch.ones(3),)),
    "compile_double_backward": _compiled_double_backward,
    "ddp_device_ids_cpu": lambda: _ddp(nn.Linear(2, 2), device_ids=[0]),
    "ddp_lazy_module": lambda: _ddp(nn.LazyLinear(2)),
}


def test_every_catalogued_kind_has_a_trigger():
    """Is every kind named from the catalogue raised by real code below?"""
    told_apart_on_none = {"grad_is_none", "grad_reset", "grad_none_nonleaf"}  # from the failing frame, not a message
    assert set(catalogued.KINDS) - {"compile_requires_grad_output", *told_apart_on_none} == set(TRIGGERS)


@pytest.mark.parametrize("kind", TRIGGERS)
def test_real_code_on_this_torch_is_explained(kind):
    """Does real code that makes this mistake on torch 2.13 raise a message explained as this kind, naming its
    family, with a fix worded as something to try or check?"""
    with pytest.raises(Exception) as info:
        TRIGGERS[kind]()
    e = explain(info.value)
    assert e.kind == _READ_FROM_THE_FRAME.get(kind, kind) and e.family == KINDS[kind].family
    assert re.search(r"\b(?:[Tt]ry|[Cc]heck|[Ff]or a|[Tt]o cut|[Mm]ake)\b", e.fix)


# kinds whose live error the failing frame's objects explain further (tests/explain/test_returned.py)
_READ_FROM_THE_FRAME = {"optimizer_nonleaf": "optimizer_nonleaf_seen"}


def test_an_error_in_torchs_own_unpack_hook_is_not_blamed_on_the_learners_hooks():
    """Is an unknown error raised in checkpoint's own unpack hook (not the learner's) left unknown, not explained as
    the learner's unpack hook failing?"""
    from autograder.explain.context import Context
    from autograder.explain.refine import refine

    calls = (
        "cell.py:<module>\n/x/site-packages/torch/autograd/graph.py:_engine_run_backward\n"
        "/x/site-packages/torch/utils/checkpoint.py:unpack_hook"
    )
    where = Context(calls=calls, source="loss.backward()", known=True)
    assert refine("unknown", {}, "CheckpointError: something new", where, None)[0] == "unknown"
    mine = Context(calls=calls + "\ncell.py:my_unpack", source="loss.backward()", known=True)
    assert refine("unknown", {}, "ValueError: bad", mine, None)[0] == "unpack_hook_backward"


def test_a_pasted_first_chapter_error_is_not_read_as_a_second_derivative():
    """Is a pasted "does not require grad" whose only backward call is the learner's (torch's own frames quote
    backward calls too) explained as the graph not built, not as a missing create_graph?"""
    import traceback

    def step():
        loss = torch.tensor([1.0, 2.0]).sum()
        loss.backward()

    with pytest.raises(RuntimeError) as info:
        step()
    pasted = "".join(traceback.format_exception(info.value))
    assert "torch.autograd.backward(" in pasted or "_engine_run_backward(" in pasted
    assert explain(pasted).kind == "not_built"


def _read_grad_of_a_nonleaf():
    y = _leaf() * 2
    (y**2).sum().backward()
    return y.grad.norm()


def _none_elsewhere():
    config = None
    return config.lr


def test_grad_is_none_is_explained_only_on_a_line_that_reads_grad():
    """Is an error on None explained with the list of reasons a .grad is None when its line reads .grad (as an
    exception and as a paste), and left unknown when it does not?"""
    import traceback

    with pytest.raises(AttributeError) as info:
        _read_grad_of_a_nonleaf()
    e = explain(info.value)
    assert e.kind == "grad_none_nonleaf" and "y is not a leaf" in e.cause and "retain_grad" in e.fix
    assert explain("".join(traceback.format_exception(info.value))).kind == "grad_is_none"
    with pytest.raises(AttributeError) as other:
        _none_elsewhere()
    assert explain(other.value).kind == "unknown"


def _grad_of(make):
    """The error of reading ``.grad`` of what ``make()`` returns after a backward that used it."""
    with pytest.raises((AttributeError, TypeError)) as info:
        make()
    return info.value


def _scaled_init():
    w = torch.randn(3, requires_grad=True) * 0.01  # an operation: w is not a leaf
    (w * 2).sum().backward()
    w.grad.zero_()


def _frozen():
    w = torch.ones(3)
    b = torch.ones(3, requires_grad=True)
    (w * b).sum().backward()
    return w.grad * 0.1


class _TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.used, self.unused = nn.Linear(2, 1), nn.Linear(2, 1)

    def forward(self, x):
        return self.used(x)


def _unused_module():
    net = _TwoHeads()
    net(torch.ones(1, 2)).sum().backward()
    return {n: p.grad.norm() for n, p in net.named_parameters()}


def test_grad_is_none_names_the_cause_it_sees_on_the_tensor_itself():
    """Where the failing frame holds the tensor whose .grad is None, is the cause the one that tensor shows (not a
    leaf: made by an operation, headed as a usage mistake since its graph was built; requires_grad False; a leaf
    the loss never reached, named as the module's parameter), and the list of all causes only where the tensor
    cannot be looked at (a paste)?"""
    import traceback

    nonleaf = explain(_grad_of(_scaled_init))
    assert (nonleaf.kind, nonleaf.family) == ("grad_none_nonleaf", "usage") and "never built" not in str(nonleaf)
    assert "w is not a leaf" in nonleaf.cause and "was built" in nonleaf.cause and "MulBackward0" in nonleaf.cause
    assert "requires_grad_()" in nonleaf.fix
    frozen = explain(_grad_of(_frozen))
    assert "w has requires_grad=False" in frozen.cause and "not a leaf" not in frozen.cause
    unused = explain(_grad_of(_unused_module))
    assert "unused.weight of a module" in unused.cause and "not a leaf" not in unused.cause
    pasted = explain("".join(traceback.format_exception(_grad_of(_scaled_init))))
    assert pasted.kind == "grad_is_none" and "check each" in pasted.cause


def _optimizer_reset_then_read():
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.ones(1, 2)).sum().backward()
    opt.zero_grad()
    for p in model.parameters():
        p.grad.zero_()


def _module_reset_then_log():
    net = _TwoHeads()
    net(torch.ones(1, 2)).sum().backward()
    net.zero_grad()
    return net.used.weight.grad.norm()


def _reset_then_backward_then_unused():
    net = _TwoHeads()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    opt.zero_grad()
    net(torch.ones(1, 2)).sum().backward()
    return net.unused.weight.grad.norm()


def _another_optimizer_reset():
    net, other = _TwoHeads(), nn.Linear(2, 1)
    opt = torch.optim.SGD(other.parameters(), lr=0.1)
    opt.zero_grad()
    return net.used.weight.grad.norm()


def test_a_grad_reset_by_zero_grad_is_not_called_a_graph_never_built():
    """Where the learner's code called zero_grad() on an optimizer or module that holds the tensor, after its
    last backward and before the failing line, is the explanation the reset (grad_reset, headed as a usage
    mistake, naming the zero_grad call), and not "the graph was never built"? And where a backward ran after
    the reset, or the zero_grad() belongs to an optimizer without the tensor, is it the plain grad_is_none?"""
    for make, call in ((_optimizer_reset_then_read, "opt.zero_grad()"), (_module_reset_then_log, "net.zero_grad()")):
        e = explain(_grad_of(make))
        assert (e.kind, e.family) == ("grad_reset", "usage"), (make.__name__, e.kind)
        assert f"`{call}` ran before this line" in e.cause and "set_to_none=True" in e.cause
        assert "never built" not in str(e) and "is not None" in e.fix
    after = explain(_grad_of(_reset_then_backward_then_unused))
    assert after.kind == "grad_is_none" and "unused.weight of a module" in after.cause
    elsewhere = explain(_grad_of(_another_optimizer_reset))
    assert elsewhere.kind == "grad_is_none" and "zero_grad()` ran" not in elsewhere.cause


def test_a_pasted_grad_reset_names_the_zero_grad_of_its_file_and_hedges():
    """Is a pasted traceback of a .grad read after zero_grad() explained as the reset, naming the zero_grad call read
    from the traceback's file, and saying it cannot check the tensor is among its parameters; and where a backward
    ran after the reset, is it not?"""
    import traceback

    text = "".join(traceback.format_exception(_grad_of(_optimizer_reset_then_read)))
    e = explain(text)
    assert e.kind == "grad_reset" and "`opt.zero_grad()` ran before this line" in e.cause
    assert "a paste does not show whether" in e.cause and "checked on" not in e.cause
    after = explain("".join(traceback.format_exception(_grad_of(_reset_then_backward_then_unused))))
    assert after.kind == "grad_is_none"


@pytest.mark.parametrize("kind", list(catalogued.KINDS))
def test_each_catalogued_kind_links_a_section_not_the_chapter_title(kind):
    """Does each kind named from the catalogue link a numbered section (or the Pitfalls) of its lesson?"""
    from autograder.lessons import lesson

    anchor = lesson(*catalogued.KINDS[kind].lesson).split("#")[1]
    assert not anchor.startswith("Chapter-"), anchor
