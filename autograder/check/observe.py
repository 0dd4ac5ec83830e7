"""What a learner's run did, observed while a check runs it: the facts a cause's evidence is tested on
(``autograder.compare.evidence``). Each observer is a context manager that adds to a ``facts`` dict
(``{fact: [what was seen, ...]}``, one entry per occurrence); pass that dict as a check's ``facts=``.

Observers only watch: they change no value, no gradient and no order of the learner's run, and take away
what they installed when the block ends (also when the learner's code raised).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

import torch
import torch.utils.checkpoint as checkpointing

from ..compare.evidence import AUTOCAST, BACKWARDS, GRAD_BETWEEN, GRAD_MODE, RESEEDS, RNG, TRAINING

__all__ = ["forward_modes", "checkpoint_calls", "backward_calls", "grad_between_backwards", "grad_change"]


def _add(facts: dict, fact: str, seen) -> None:
    facts.setdefault(fact, [])
    if seen not in facts[fact]:
        facts[fact].append(seen)


def _autocast_on() -> bool:
    return any(torch.is_autocast_enabled(device) for device in ("cpu", "cuda"))


@contextlib.contextmanager
def forward_modes(model: torch.nn.Module, facts: dict):
    """Within the block, at each forward of ``model`` or of one of its modules: whether grad mode was on
    (``torch.no_grad()``/``inference_mode`` turn it off), whether autocast was active, and the module's
    mode (``"train"``/``"eval"``)."""

    def seen(module, args):
        _add(facts, GRAD_MODE, torch.is_grad_enabled())
        _add(facts, AUTOCAST, _autocast_on())
        _add(facts, TRAINING, "train" if module.training else "eval")

    hooks = [module.register_forward_pre_hook(seen) for module in model.modules()]
    try:
        yield facts
    finally:
        for hook in hooks:
            hook.remove()


@contextlib.contextmanager
def checkpoint_calls(facts: dict):
    """Within the block, each ``torch.utils.checkpoint`` call's ``preserve_rng_state`` (reentrant or not; also
    through ``checkpoint_sequential``, and however the learner imported ``checkpoint``: both variants go through
    these two internals), and how many times ``torch.manual_seed`` reseeded the RNG."""
    generator, function = checkpointing._checkpoint_without_reentrant_generator, checkpointing.CheckpointFunction
    apply, manual_seed = function.apply, torch.manual_seed
    facts[RESEEDS] = [0]

    def reseeded(seed):
        facts[RESEEDS] = [facts[RESEEDS][0] + 1]
        return manual_seed(seed)

    def watched_generator(fn, preserve_rng_state=True, *args, **kwargs):
        _add(facts, RNG, bool(preserve_rng_state))
        return generator(fn, preserve_rng_state, *args, **kwargs)

    def watched_apply(run_function, preserve_rng_state, *args):
        _add(facts, RNG, bool(preserve_rng_state))
        return apply(run_function, preserve_rng_state, *args)

    checkpointing._checkpoint_without_reentrant_generator, function.apply = watched_generator, watched_apply
    torch.manual_seed = reseeded
    try:
        yield facts
    finally:
        checkpointing._checkpoint_without_reentrant_generator, function.apply = generator, apply
        torch.manual_seed = manual_seed


@contextlib.contextmanager
def backward_calls(facts: dict):
    """Within the block, how many times ``backward()`` ran (``Tensor.backward`` and ``torch.autograd.backward``;
    ``torch.autograd.grad`` is not a backward into ``.grad``)."""
    backward = torch.autograd.backward
    count = [0]
    facts[BACKWARDS] = [0]

    def counted(*args, **kwargs):
        count[0] += 1
        facts[BACKWARDS] = [count[0]]
        return backward(*args, **kwargs)

    torch.autograd.backward = counted
    try:
        yield facts
    finally:
        torch.autograd.backward = backward


def grad_change(before: torch.Tensor, now: torch.Tensor | None) -> str:
    """What happened to a ``.grad`` between the end of one accumulation into it (``before``) and the next
    backward's arrival (``now``): ``"kept"``, ``"set to None"``, ``"zeroed"``, ``"scaled"`` (multiplied by one
    number, in place or not) or ``"changed"``."""
    if now is None:
        return "set to None"
    if now.shape != before.shape:
        return "changed"
    if torch.equal(now, before):
        return "kept"
    if not now.any():
        return "zeroed"
    square = (before * before).sum()
    if square > 0:
        factor = (now * before).sum() / square
        if torch.allclose(now, factor * before, rtol=1e-5, atol=1e-7):
            return "scaled"
    return "changed"


@contextlib.contextmanager
def grad_between_backwards(parameters: Iterable[torch.Tensor], facts: dict):
    """Within the block, for each parameter: what its ``.grad`` went through between one backward's accumulation
    into it and the next backward's (:func:`grad_change`; ``"kept"`` when accumulation found it as it was left)."""
    held, hooks = {}, []

    def accumulated(p):
        held[p] = p.grad.detach().clone()

    def arriving(p):
        def hook(grad):
            if p in held:
                _add(facts, GRAD_BETWEEN, grad_change(held[p], p.grad))

        return hook

    for p in parameters:
        hooks += [p.register_hook(arriving(p)), p.register_post_accumulate_grad_hook(accumulated)]
    try:
        yield facts
    finally:
        for hook in hooks:
            hook.remove()
