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

from ..compare.evidence import (
    AUTOCAST,
    AUTOCAST_DTYPE,
    BACKWARDS,
    CHECKPOINT_COVER,
    CHECKPOINTS,
    GRAD_BETWEEN,
    GRAD_MODE,
    NONFINITE_AT,
    NONFINITE_NODE,
    NONFINITE_UNDER_WHERE,
    RESEEDS,
    RNG,
    TRAINING,
    ZERO_LOSS,
)

__all__ = [
    "forward_modes",
    "checkpoint_calls",
    "backward_calls",
    "grad_between_backwards",
    "grad_change",
    "side_effects",
    "gradient_origin",
    "rows_in_words",
]


def _add(facts: dict, fact: str, seen) -> None:
    facts.setdefault(fact, [])
    if seen not in facts[fact]:
        facts[fact].append(seen)


def _autocast_on() -> bool:
    return any(torch.is_autocast_enabled(device) for device in ("cpu", "cuda"))


def _autocast_dtypes() -> list[str]:
    """The dtype of each active autocast region (``"torch.bfloat16"``), one per device where one is active."""
    return [str(torch.get_autocast_dtype(d)) for d in ("cpu", "cuda") if torch.is_autocast_enabled(d)]


@contextlib.contextmanager
def forward_modes(model: torch.nn.Module, facts: dict):
    """Within the block, at each forward of ``model`` or of one of its modules: whether grad mode was on
    (``torch.no_grad()``/``inference_mode`` turn it off), whether autocast was active and in which dtype, and the
    module's mode (``"train"``/``"eval"``)."""

    def seen(module, args):
        _add(facts, GRAD_MODE, torch.is_grad_enabled())
        _add(facts, AUTOCAST, _autocast_on())
        for dtype in _autocast_dtypes():
            _add(facts, AUTOCAST_DTYPE, dtype)
        _add(facts, TRAINING, "train" if module.training else "eval")

    hooks = [module.register_forward_pre_hook(seen) for module in model.modules()]
    try:
        yield facts
    finally:
        for hook in hooks:
            hook.remove()


@contextlib.contextmanager
def checkpoint_calls(facts: dict, model: torch.nn.Module | None = None):
    """Within the block, each ``torch.utils.checkpoint`` call's ``preserve_rng_state`` (reentrant or not; also
    through ``checkpoint_sequential``, and however the learner imported ``checkpoint``: both variants go through
    these two internals), how many checkpoints ran (``"no checkpoint ran"``, ``"one checkpoint ran"``, ``"several
    checkpoints ran"``; ``checkpoint_sequential`` with one segment runs none), and how many times
    ``torch.manual_seed`` reseeded the RNG. With ``model``: what the checkpoints covered (``CHECKPOINT_COVER``),
    from whether each leaf module of ``model`` ran inside a checkpoint at its first call (the forward; a
    recomputation in backward is a later call)."""
    generator, function = checkpointing._checkpoint_without_reentrant_generator, checkpointing.CheckpointFunction
    apply, manual_seed = function.apply, torch.manual_seed
    facts[RESEEDS], count, depth = [0], [0], [0]
    facts[CHECKPOINTS] = ["no checkpoint ran"]
    first: dict[torch.nn.Module, bool] = {}  # leaf module -> whether its first call ran inside a checkpoint

    def reseeded(seed):
        facts[RESEEDS] = [facts[RESEEDS][0] + 1]
        return manual_seed(seed)

    def counted(preserve_rng_state) -> None:
        _add(facts, RNG, bool(preserve_rng_state))
        count[0] += 1
        facts[CHECKPOINTS] = ["one checkpoint ran" if count[0] == 1 else "several checkpoints ran"]

    def inside(inner):  # the generator yields once, before the checkpointed function runs, then ends after it
        depth[0] += 1
        try:
            yield from inner
        finally:
            depth[0] -= 1

    def watched_generator(fn, preserve_rng_state=True, *args, **kwargs):
        counted(preserve_rng_state)
        return inside(generator(fn, preserve_rng_state, *args, **kwargs))

    def watched_apply(run_function, preserve_rng_state, *args):
        counted(preserve_rng_state)
        depth[0] += 1
        try:
            return apply(run_function, preserve_rng_state, *args)
        finally:
            depth[0] -= 1

    leaves = [m for m in model.modules() if not list(m.children())] if model is not None else []

    def seen(module, args) -> None:  # returns None: a pre-hook's result would replace the module's input
        first.setdefault(module, depth[0] > 0)

    hooks = [m.register_forward_pre_hook(seen) for m in leaves]
    checkpointing._checkpoint_without_reentrant_generator, function.apply = watched_generator, watched_apply
    torch.manual_seed = reseeded
    try:
        yield facts
    finally:
        checkpointing._checkpoint_without_reentrant_generator, function.apply = generator, apply
        torch.manual_seed = manual_seed
        for hook in hooks:
            hook.remove()
        if model is not None:
            facts[CHECKPOINT_COVER] = [_cover(count[0], first)]


def _cover(checkpoints: int, first: dict) -> str:
    """What the checkpoints covered, in the words of ``CHECKPOINT_COVER``'s values."""
    if not checkpoints:
        return "no checkpoint ran"
    outside = [m for m, inside in first.items() if not inside]
    if any(next(m.parameters(), None) is not None for m in outside):
        return "modules with parameters outside every checkpoint"
    if outside:
        return "only modules without parameters outside every checkpoint"
    return "one checkpoint around every module" if checkpoints == 1 else "several checkpoints around every module"


@contextlib.contextmanager
def backward_calls(facts: dict):
    """Within the block, how many times ``backward()`` ran (``Tensor.backward`` and ``torch.autograd.backward``;
    ``torch.autograd.grad`` is not a backward into ``.grad``), and whether each ran on a loss of exactly 0
    (``ZERO_LOSS``: a factor that is 0, an integer division that gives 0)."""
    backward = torch.autograd.backward
    count = [0]
    facts[BACKWARDS] = [0]

    def counted(*args, **kwargs):
        count[0] += 1
        facts[BACKWARDS] = [count[0]]
        losses = kwargs.get("tensors", args[0] if args else None)
        losses = [losses] if isinstance(losses, torch.Tensor) else list(losses or ())
        if losses and all(isinstance(t, torch.Tensor) for t in losses):
            _add(facts, ZERO_LOSS, all(not bool(t.detach().any()) for t in losses))
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


def _hooks(module: torch.nn.Module) -> int:
    """How many module hooks ``module`` itself holds (forward, forward pre-, backward, backward pre-hooks)."""
    kinds = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
    return sum(len(getattr(module, kind, {}) or {}) for kind in kinds)


def _tensor_hooks(t: torch.Tensor) -> tuple[int, int]:
    """(tensor hooks, post-accumulate-grad hooks) on ``t``: what ``t.register_hook`` and
    ``t.register_post_accumulate_grad_hook`` add (``t._backward_hooks``, ``t._post_accumulate_grad_hooks``)."""
    return (len(getattr(t, "_backward_hooks", None) or {}), len(getattr(t, "_post_accumulate_grad_hooks", None) or {}))


def _module_hooks(modules: dict[str, torch.nn.Module]) -> dict[str, int]:
    """Module hooks held by each module of ``modules`` and by each of its submodules, by path (``"model.0"``)."""
    return {
        f"{name}.{path}" if path else name: _hooks(sub)
        for name, module in modules.items()
        for path, sub in module.named_modules(remove_duplicate=False)
    }


def _topmost(names: list[str]) -> list[str]:
    """``names`` without the submodules of a module listed too (``model.eval()`` is said once, of ``model``)."""
    return [n for n in names if not any(n.startswith(f"{m}.") for m in names)]


def _named(names: list[str]) -> str:
    return ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")


@contextlib.contextmanager
def side_effects(
    tensors: dict[str, torch.Tensor],
    left: list,
    modules: dict[str, torch.nn.Module] | None = None,
    rng: bool = False,
    grads: bool = True,
):
    """Within the block, what a learner's function leaves behind that its result does not show; ``left`` gets, when
    the block ends, one phrase per kind of thing left (empty: nothing):

    - ``".grad written on <names>"``: a tensor of ``tensors`` (by name) whose ``.grad`` is not what it was (a
      ``backward()`` inside the function accumulates into ``.grad``; ``torch.autograd.grad`` does not); not watched
      with ``grads=False`` (a block that runs a backward of its own);
    - ``"requires_grad changed on <names>"``;
    - ``"<names> left in eval mode"`` / ``"<names> left in train mode"``: a module of ``modules`` (by name) or one
      of its submodules (by path, ``"model.0"``) whose ``.training`` changed;
    - ``"hooks left on <names>"``: a module or submodule that holds more module hooks than before (forward,
      forward pre-, backward, backward pre-hooks: they run on every later forward or backward through it);
    - ``"tensor hooks left on <names> (register_hook: ...)"``, ``"post-accumulate-grad hooks left on <names> (...)"``:
      a tensor of ``tensors`` that holds more hooks than before, which every later backward runs;
    - ``"grad mode left off"`` / ``"grad mode left on"``: ``torch.set_grad_enabled`` not restored;
    - with ``rng``: ``"the global RNG advanced"``: the function drew random numbers from (or reseeded) the global
      CPU generator, so what the caller draws next changes (dropout masks, sampled batches).

    Names are listed in the order given, at most four, then "..."."""
    modules = modules or {}
    before = {name: (t.grad.detach().clone() if t.grad is not None else None) for name, t in tensors.items()}
    requires = {name: t.requires_grad for name, t in tensors.items()}
    subs = {f"{n}.{p}" if p else n: s for n, m in modules.items() for p, s in m.named_modules(remove_duplicate=False)}
    modes = {name: m.training for name, m in subs.items()}
    hooks, tensor_hooks = _module_hooks(modules), {name: _tensor_hooks(t) for name, t in tensors.items()}
    grad_mode = torch.is_grad_enabled()
    state = torch.get_rng_state() if rng else None
    try:
        yield left
    finally:

        def changed(name: str) -> bool:
            was, now = before[name], tensors[name].grad
            if was is None or now is None:
                return (was is None) != (now is None)
            return now.shape != was.shape or not torch.equal(now.detach(), was)

        now_hooks, now_tensor = _module_hooks(modules), {name: _tensor_hooks(t) for name, t in tensors.items()}
        found = [
            (".grad written on {}", [n for n in tensors if grads and changed(n)]),
            ("requires_grad changed on {}", [n for n in tensors if tensors[n].requires_grad != requires[n]]),
            ("{} left in eval mode", _topmost([n for n, m in subs.items() if modes[n] and not m.training])),
            ("{} left in train mode", _topmost([n for n, m in subs.items() if not modes[n] and m.training])),
            ("hooks left on {}", [n for n in hooks if now_hooks.get(n, 0) > hooks[n]]),
            (
                "tensor hooks left on {} (register_hook: every later backward through them runs them)",
                [n for n in tensors if now_tensor[n][0] > tensor_hooks[n][0]],
            ),
            (
                "post-accumulate-grad hooks left on {} (register_post_accumulate_grad_hook: every later backward runs "
                "them after accumulating into .grad)",
                [n for n in tensors if now_tensor[n][1] > tensor_hooks[n][1]],
            ),
        ]
        left[:] = [text.format(_named(names)) for text, names in found if names]
        if torch.is_grad_enabled() != grad_mode:
            left.append(f"grad mode left {'on' if torch.is_grad_enabled() else 'off'}")
        if state is not None and not torch.equal(torch.get_rng_state(), state):
            left.append("the global RNG advanced")


def _graph(root) -> list:
    """The Nodes reachable from ``root`` (a ``grad_fn``) through ``next_functions``, each once."""
    seen, stack = {}, [root] if root is not None else []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen[node] = None
        stack += [n for n, _ in node.next_functions]
    return list(seen)


def _below_where(nodes: list) -> set:
    """The Nodes that lie in a branch under a ``WhereBackward0`` (reachable from one)."""
    below: set = set()
    for where in (n for n in nodes if type(n).__name__ == "WhereBackward0"):
        below |= set(_graph(where)) - {where}
    return below


def rows_in_words(x: torch.Tensor, bad: torch.Tensor, name: str) -> str:
    """Which rows (first dimension) of ``x`` the mask ``bad`` (of ``x``'s first dimension, or its shape) marks, in
    words without indices or values: "rows of v that are all zeros and rows that are not zero"."""
    rows = bad.reshape(bad.shape[0], -1).any(dim=1) if bad.dim() else bad.reshape(1)
    flat = x.detach().reshape(x.shape[0], -1) if x.dim() else x.detach().reshape(1, 1)
    zero = ~flat.any(dim=1)
    kinds = [("all zeros", bool((rows & zero).any())), ("not zero", bool((rows & ~zero).any()))]
    return f"rows of {name} that are " + " and rows that are ".join(k for k, present in kinds if present)


def gradient_origin(output: torch.Tensor, inputs: torch.Tensor, facts: dict, name: str = "the input"):
    """``torch.autograd.grad(output, inputs)[0]``, the same gradient, while observing where a NaN or inf in it was
    made: the first Node whose backward turned finite incoming gradients into a NaN or inf (``NONFINITE_NODE``),
    whether that Node lies in a branch under a ``torch.where`` (``NONFINITE_UNDER_WHERE``), and which rows of
    ``inputs`` (called ``name``) get a NaN or inf gradient, in words (``NONFINITE_AT``). ``output``: a scalar."""
    nodes = _graph(output.grad_fn)
    below, made = _below_where(nodes), []

    def hook(node):
        def seen(grad_inputs, grad_outputs):
            def finite(grads):
                return all(g is None or bool(torch.isfinite(g).all()) for g in grads)

            if not made and finite(grad_outputs) and not finite(grad_inputs):
                made.append(node)

        return seen

    handles = [node.register_hook(hook(node)) for node in nodes]
    try:
        (gradient,) = torch.autograd.grad(output, inputs)
    finally:
        for handle in handles:
            handle.remove()
    bad = ~torch.isfinite(gradient)
    facts[NONFINITE_NODE] = [type(made[0]).__name__ if made else "no Node: the gradient is finite"]
    facts[NONFINITE_UNDER_WHERE] = [bool(made) and made[0] in below]
    if bool(bad.any()):
        facts[NONFINITE_AT] = [rows_in_words(inputs, bad, name)]
    return gradient
