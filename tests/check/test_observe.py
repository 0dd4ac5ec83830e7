"""Do the observers report what the learner's run did (grad mode, autocast, module mode, checkpoints, backward
calls, what happened to .grad between backward passes), and leave nothing installed behind?"""

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from autograder.check import observe
from autograder.compare.evidence import (
    AUTOCAST,
    AUTOCAST_DTYPE,
    BACKWARDS,
    GRAD_BETWEEN,
    GRAD_MODE,
    RESEEDS,
    RNG,
    TRAINING,
)


def test_forward_modes_sees_no_grad_autocast_and_eval():
    model, facts = nn.Sequential(nn.Linear(2, 2)), {}
    with observe.forward_modes(model, facts):
        model.eval()
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            model(torch.randn(1, 2))
    assert facts[GRAD_MODE] == [False] and facts[AUTOCAST] == [True] and facts[TRAINING] == ["eval"]
    assert facts[AUTOCAST_DTYPE] == ["torch.bfloat16"]
    assert not model._forward_pre_hooks and not model[0]._forward_pre_hooks


def test_checkpoint_calls_sees_preserve_rng_state_however_checkpoint_was_imported():
    facts, w = {}, torch.randn(2, requires_grad=True)
    with observe.checkpoint_calls(facts):
        checkpoint(torch.sin, w, use_reentrant=False, preserve_rng_state=False)
        checkpoint(torch.sin, w, use_reentrant=True)
    assert facts[RNG] == [False, True]


def test_backward_calls_counts_backward_not_autograd_grad():
    facts, w = {}, torch.randn(2, requires_grad=True)
    with observe.backward_calls(facts):
        torch.autograd.grad(w.sum(), w)
        w.sum().backward()
        w.sum().backward()
    assert facts[BACKWARDS] == [2]


def test_grad_between_backwards_tells_a_scale_from_a_reset():
    w = torch.ones(3, requires_grad=True)
    scaled, reset = {}, {}
    with observe.grad_between_backwards([w], scaled):
        (2 * w).sum().backward()
        w.grad.mul_(0.5)
        (2 * w).sum().backward()
    w.grad = None
    with observe.grad_between_backwards([w], reset):
        (2 * w).sum().backward()
        w.grad.zero_()
        (2 * w).sum().backward()
    assert scaled[GRAD_BETWEEN] == ["scaled"] and reset[GRAD_BETWEEN] == ["zeroed"]


def test_checkpoint_calls_counts_reseeds_and_restores_manual_seed():
    facts, seed = {}, torch.manual_seed
    with observe.checkpoint_calls(facts):
        torch.manual_seed(3)
    assert facts[RESEEDS] == [1] and torch.manual_seed is seed


def test_side_effects_sees_grad_written_modes_hooks_and_grad_mode_left_behind():
    """Does side_effects report a .grad a function's backward() wrote, a module left in eval mode, a hook left on a
    module and grad mode left off, and nothing for a function that leaves nothing (torch.autograd.grad)?"""
    critic = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    x = torch.randn(4, 2, requires_grad=True)
    named = {**dict(critic.named_parameters()), "x_hat": x}
    left = []
    with observe.side_effects(named, left, {"critic": critic}):
        torch.autograd.grad(critic(x).sum(), x, create_graph=True)
    assert left == []
    with observe.side_effects(named, left, {"critic": critic}):
        critic(x).sum().backward(create_graph=True)
        critic.eval()
        critic.register_forward_hook(lambda *args: None)
        torch.set_grad_enabled(False)
    torch.set_grad_enabled(True)
    assert left == [
        ".grad written on 0.weight, 0.bias, 2.weight, 2.bias, ...",
        "critic left in eval mode",
        "hooks left on critic",
        "grad mode left off",
    ]


def test_side_effects_sees_tensor_hooks_and_a_submodules_hooks_and_mode_left_and_not_those_removed():
    """Does side_effects report a tensor hook and a post-accumulate-grad hook left on a parameter, a hook and eval
    mode left on a submodule (by its path), without the .grad a backward wrote when told not to watch it, and
    nothing once every handle is removed?"""
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    named, left = dict(model.named_parameters()), []
    with observe.side_effects(named, left, {"model": model}, grads=False):
        handles = [
            model[0].weight.register_post_accumulate_grad_hook(lambda p: None),
            model[2].bias.register_hook(lambda g: g),
            model[1].register_forward_hook(lambda *args: None),
        ]
        model[2].eval()
        model(torch.randn(4, 2)).sum().backward()
    assert [item.split(" (")[0] for item in left] == [
        "model.2 left in eval mode",
        "hooks left on model.1",
        "tensor hooks left on 2.bias",
        "post-accumulate-grad hooks left on 0.weight",
    ]
    model.train()
    with observe.side_effects(named, left, {"model": model}):
        handles += [model[0].bias.register_hook(lambda g: g)]
        for handle in handles:
            handle.remove()
    assert left == []


def test_side_effects_sees_the_global_rng_advanced_only_when_asked():
    """With ``rng=True``, does side_effects report a function that drew from the global generator (torch.randn,
    dropout) and not one that drew from its own generator, and say nothing of the RNG without ``rng``?"""
    x = torch.randn(4, 2)
    for draw, asked, said in [
        (lambda: torch.randn(3), True, ["the global RNG advanced"]),
        (lambda: nn.functional.dropout(x, 0.5), True, ["the global RNG advanced"]),
        (lambda: torch.randn(3, generator=torch.Generator().manual_seed(0)), True, []),
        (lambda: torch.randn(3), False, []),
    ]:
        left = []
        with observe.side_effects({"x": x}, left, rng=asked):
            draw()
        assert left == said


def test_checkpoint_calls_counts_the_checkpoints_that_ran():
    """Does checkpoint_calls say no checkpoint ran for checkpoint_sequential with one segment (it checkpoints none),
    one for two segments, several for one checkpoint per layer, and count none again in backward's recomputation?"""
    from torch.utils.checkpoint import checkpoint_sequential

    from autograder.compare.evidence import CHECKPOINTS

    model, x = nn.Sequential(*[nn.Linear(3, 3) for _ in range(4)]), torch.randn(2, 3, requires_grad=True)

    def per_layer():
        h = x
        for layer in model:
            h = checkpoint(layer, h, use_reentrant=False)
        return h

    seen = []
    for run in (
        lambda: checkpoint_sequential(model, 1, x, use_reentrant=False),
        lambda: checkpoint_sequential(model, 2, x, use_reentrant=False),
        per_layer,
    ):
        facts = {}
        with observe.checkpoint_calls(facts):
            run().sum().backward()
        seen.append(facts[CHECKPOINTS])
    assert seen == [["no checkpoint ran"], ["one checkpoint ran"], ["several checkpoints ran"]]


def test_checkpoint_calls_says_what_the_checkpoints_covered():
    """Given the model, does checkpoint_calls tell a checkpoint around the whole model (reentrant or not) from
    checkpoints around its layers with parameters only, from a forward whose layers with parameters partly ran
    plainly (checkpoint_sequential's last segment), each read at the forward (not the recomputation), and leave no
    hook on the model?"""
    from torch.utils.checkpoint import checkpoint_sequential

    from autograder.compare.evidence import CHECKPOINT_COVER

    def make():
        return nn.Sequential(*[nn.Sequential(nn.Linear(3, 3), nn.Tanh()) for _ in range(3)], nn.Linear(3, 1))

    def linear_only(model, x):
        for module in model.modules():
            if not list(module.children()):
                x = checkpoint(module, x, use_reentrant=False) if isinstance(module, nn.Linear) else module(x)
        return x

    runs = {
        "one checkpoint around every module": lambda m, x: checkpoint(m, x, use_reentrant=False),
        "one checkpoint around every module ": lambda m, x: checkpoint(m, x.requires_grad_(), use_reentrant=True),
        "only modules without parameters outside every checkpoint": linear_only,
        "modules with parameters outside every checkpoint": lambda m, x: checkpoint_sequential(
            m, 2, x, use_reentrant=False
        ),
        "no checkpoint ran": lambda m, x: m(x),
    }
    for said, run in runs.items():
        model, facts = make(), {}
        with observe.checkpoint_calls(facts, model):
            run(model, torch.randn(2, 3)).sum().backward()
        assert facts[CHECKPOINT_COVER] == [said.strip()], said
        assert not any(m._forward_pre_hooks for m in model.modules())


def _thin_plate_runs():
    """Three ways to write r^2 log r of each row's norm: xlogy (its own backward is 0/0 at r = 0), a where that masks
    log's value but not its gradient, and the double where (finite everywhere)."""

    def xlogy(v):
        r = v.norm(dim=1)
        return torch.xlogy(r**2, r)

    def masked(v):
        r = v.norm(dim=1)
        return torch.where(r > 0, r**2 * torch.log(r), torch.zeros_like(r))

    def double_where(v):
        r = v.norm(dim=1)
        safe = torch.where(r > 0, r, torch.ones_like(r))
        return torch.where(r > 0, safe**2 * torch.log(safe), torch.zeros_like(r))

    return xlogy, masked, double_where


def test_gradient_origin_names_the_node_that_made_the_nan_and_whether_a_where_masked_it():
    """Does gradient_origin return the same gradient, name the first Node whose backward turned finite gradients into
    NaN (xlogy's own, under no where; a product under a where), say at which rows (those all zeros), and report
    nothing made where the gradient is finite?"""
    v = torch.tensor([[1.0, 2.0], [0.0, 0.0], [3.0, 0.5]])
    xlogy, masked, double_where = _thin_plate_runs()
    seen = {}
    for f in (xlogy, masked, double_where):
        facts, x = {}, v.clone().requires_grad_()
        got = observe.gradient_origin(f(x).sum(), x, facts, "v")
        (plain,) = torch.autograd.grad(f(y := v.clone().requires_grad_()).sum(), y)
        assert torch.equal(got.isnan(), plain.isnan()) and torch.allclose(got.nan_to_num(), plain.nan_to_num())
        seen[f.__name__] = facts
    assert seen["xlogy"][observe.NONFINITE_NODE] == ["XlogyBackward0"]
    assert seen["xlogy"][observe.NONFINITE_UNDER_WHERE] == [False]
    assert seen["xlogy"][observe.NONFINITE_AT] == ["rows of v that are all zeros"]
    assert seen["masked"][observe.NONFINITE_UNDER_WHERE] == [True]
    assert seen["double_where"][observe.NONFINITE_UNDER_WHERE] == [False]
    assert observe.NONFINITE_AT not in seen["double_where"]
