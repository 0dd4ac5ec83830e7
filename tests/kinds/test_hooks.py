"""Does every fix the explainer suggests for a hook mistake make that mistake's program run?

Each hook kind (autograder/kinds/hooks.py) has a tiny program that makes the mistake (tests/explain's
TINY); here each fix is that program again, written as the explanation's Fix says. The code the fix
quotes is checked to stand, word for word, both in the explanation and in the fixed program, so a fix
whose text changes to code that does not work fails here.
"""

import inspect
import re
import warnings

import pytest
import torch
from torch import nn

from autograder.explain import explain
from autograder.kinds.hooks import KINDS, MORE
from tests.explain.test_explain import TINY, live


def _leaf():
    return torch.tensor([1.0, 2.0], requires_grad=True)


# ---------------------------------------------------------------- the fixed programs, one per fix
def _relu_made_not_inplace():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(inplace=True))
    model[0].register_full_backward_hook(lambda module, grad_input, grad_output: None)
    for m in model.modules():
        if isinstance(m, nn.ReLU):
            m.inplace = False
    model(torch.ones(1, 2)).sum().backward()


def _output_tensor_hooked_instead():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(inplace=True))
    seen = []

    def fn(g):
        seen.append(g)

    def forward_hook(m, args, out):
        out.register_hook(fn)

    model[0].register_forward_hook(forward_hook)
    model(torch.ones(1, 2)).sum().backward()
    assert len(seen) == 1


def _hook_returns_a_new_tensor():
    x = _leaf()
    y = x * 2
    y.register_hook(lambda g: g * 2)
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def _pack_hook_returns_a_copy():
    x = _leaf()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = (x * 2).sin()
    y.sum().backward()
    assert torch.allclose(x.grad, 2 * (x * 2).cos().detach())


def _hook_stores_the_statistic():
    norms = []
    y = _leaf() * 2

    def fn(g):
        norms.append(g.norm())

    y.register_hook(fn)
    y.sum().backward()
    assert len(norms) == 1


def _hook_on_a_tensor_that_requires_grad():
    x = torch.ones(2)
    x.requires_grad_()
    x.register_hook(lambda g: g)
    x.sum().backward()


def _intermediate_hooked_with_register_hook():
    y = _leaf() * 2
    seen = []

    def fn(g):
        seen.append(g)

    y.register_hook(fn)
    y.sum().backward()
    assert len(seen) == 1


def _first_layer_output_hooked_instead():
    layer = nn.Linear(2, 1)
    seen = []

    def fn(g):
        seen.append(g)

    def forward_hook(m, args, out):
        out.register_hook(fn)

    layer.register_forward_hook(forward_hook)
    layer(torch.ones(1, 2)).sum().backward()
    assert len(seen) == 1


def _full_backward_hook_instead():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append(grad_input)

    model.register_full_backward_hook(hook)
    model(_leaf().unsqueeze(0)).sum().backward()
    assert len(seen) == 1


def _clip_with_def_no_return():
    # the three gradients the `and None` lambda got wrong: several elements, a single 0, a single 5
    c = 1.0
    for w, scale in (
        (_leaf(), 2.0),
        (torch.tensor([3.0], requires_grad=True), 0.0),
        (torch.tensor([3.0], requires_grad=True), 5.0),
    ):
        # the fix's own one-line def, word for word
        # fmt: off
        def clip(p): p.grad.clamp_(-c, c)
        # fmt: on

        w.register_post_accumulate_grad_hook(clip)
        (w * scale).sum().backward()
        assert w.grad.abs().max().item() == min(abs(scale), c)


def _forward_hook_with_def_no_return():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
    seen = []

    def fn(g):
        seen.append(g)

    # the fix's own one-line def, word for word
    # fmt: off
    def hook(m, args, out): out.register_hook(fn)
    # fmt: on

    model[0].register_forward_hook(hook)
    model(torch.randn(2, 4)).sum().backward()
    assert len(seen) == 1


def _forward_hook_with_its_arguments():
    layer = nn.Linear(2, 2)
    layer.register_forward_hook(lambda module, args, output: None)
    layer(torch.ones(1, 2))


def _backward_hook_returns_a_tuple_like_grad_input():
    layer = nn.Linear(2, 2)
    x = torch.ones(1, 2, requires_grad=True)
    layer.register_full_backward_hook(
        lambda m, grad_input, grad_output: tuple(g * 2 if g is not None else None for g in grad_input)
    )
    layer(x).sum().backward()
    assert torch.equal(x.grad, 2 * layer.weight.detach().sum(0, keepdim=True))


def _backward_hook_returns_a_one_tuple():
    layer = nn.Linear(2, 2)
    x = torch.ones(1, 2, requires_grad=True)
    layer.register_full_backward_hook(lambda m, grad_input, grad_output: (grad_input[0] * 2,))
    layer(x).sum().backward()
    assert torch.equal(x.grad, 2 * layer.weight.detach().sum(0, keepdim=True))


def _unpack_returns_the_tensor():
    x = _leaf()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.to(torch.bfloat16), lambda t: t.float()):
        y = (x * 2).sin()
    y.sum().backward()


def _unpack_restores_the_dtype():
    x, w = torch.ones(2, 3, requires_grad=True), torch.ones(3, 3, requires_grad=True)

    def pack(t):
        return (t.dtype, t.to(torch.bfloat16))

    def unpack(saved):
        dtype, p = saved
        return p.to(dtype)

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x @ w).sum()
    y.backward()
    assert x.grad.dtype == torch.float32 and x.grad.tolist() == [[3.0] * 3] * 2


# kind -> (the code its fix quotes, the trigger written as the fix says)
FIXES = {
    "backward_hook_inplace": [
        (("isinstance(m, nn.ReLU)", "m.inplace = False"), _relu_made_not_inplace),
        (("out.register_hook(fn)",), _output_tensor_hooked_instead),
    ],
    "grad_overlap_inplace": [(("g * 2",), _hook_returns_a_new_tensor)],
    "pack_hook_inplace": [(("t.clone()",), _pack_hook_returns_a_copy)],
    "hook_changed_grad": [(("g.norm()",), _hook_stores_the_statistic)],
    "hook_no_grad_tensor": [(("requires_grad_()",), _hook_on_a_tensor_that_requires_grad)],
    "post_accumulate_nonleaf": [(("y.register_hook(fn)",), _intermediate_hooked_with_register_hook)],
    "full_backward_hook_no_input": [(("out.register_hook(fn)",), _first_layer_output_hooked_instead)],
    "nonfull_backward_hook": [(("register_full_backward_hook(hook)",), _full_backward_hook_instead)],
    "post_accumulate_returned": [(("def clip(p): p.grad.clamp_(-c, c)",), _clip_with_def_no_return)],
    "forward_hook_returned_value": [
        (("def hook(m, args, out): out.register_hook(fn)",), _forward_hook_with_def_no_return)
    ],
    "hook_signature": [(("module, args, output",), _forward_hook_with_its_arguments)],
    "backward_hook_count": [
        (
            ("tuple(g * 2 if g is not None else None for g in grad_input)",),
            _backward_hook_returns_a_tuple_like_grad_input,
        )
    ],
    "module_hook_changed_grad": [(("(grad_input[0] * 2,)",), _backward_hook_returns_a_one_tuple)],
    "unpack_hook_not_tensor": [(("unpack",), _unpack_returns_the_tensor)],
    "unpack_hook_backward": [(("(t.dtype, t.to(torch.bfloat16))", "p.to(dtype)"), _unpack_restores_the_dtype)],
}


def _explanation_of_trigger(kind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return explain(live(TINY[kind], kind))


def test_every_hook_kind_has_its_fix_run_here():
    assert set(FIXES) == set(KINDS) | set(MORE)


@pytest.mark.parametrize("kind", sorted(FIXES))
def test_the_fix_makes_the_mistake_run(kind):
    explanation = _explanation_of_trigger(kind)
    assert explanation.kind == kind
    for quoted, fixed in FIXES[kind]:
        source = inspect.getsource(fixed)
        for code in quoted:
            assert code in explanation.fix, f"{kind}: the fix no longer says {code!r}: {explanation.fix}"
            assert code in source, f"{fixed.__name__} does not do what the fix says ({code!r})"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fixed()
        assert not [w for w in caught if explain(w).kind == kind], [str(w.message)[:80] for w in caught]


def test_and_none_is_no_fix_for_a_post_accumulate_hook():
    """The trick the explainer once gave calls bool() on the gradient: it fails on the gradients the fix runs,
    so the fix must not tell the learner to add it."""
    fix = _explanation_of_trigger("post_accumulate_returned").fix
    assert not re.search(r"\b(?:add|end|append)\s+'?and None", fix), fix
    several = _leaf()
    several.register_post_accumulate_grad_hook(lambda p: p.grad.clamp_(-1, 1) and None)
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        (several * 2).sum().backward()
    zero = torch.tensor([3.0], requires_grad=True)
    zero.register_post_accumulate_grad_hook(lambda p: p.grad.clamp_(-1, 1) and None)
    with pytest.raises(RuntimeError, match="should return None"):
        (zero * 0).sum().backward()
