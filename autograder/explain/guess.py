"""A guess at an unknown message's family, from where torch raised it: the innermost torch frame of the traceback
(or the last ``File`` line of a paste) says which part of torch refused (the backward engine, checkpoint, the
func transforms, compile, distributed, amp, custom Functions, hooks, the optimizer), hence which chapter and
which kind of mistake is most likely. Always marked as a guess: the message itself is not one the explainer knows."""

from __future__ import annotations

import re

from ..kinds.kind import LESSONS, taught
from .context import Context

__all__ = ["family_guess"]

# (a regex on a torch frame's file, chapter's notebook, what fails there, where to look)
_FAMILIES = (
    (
        r"torch[/\\]utils[/\\]checkpoint\.py",
        LESSONS[8],
        "activation checkpointing (torch.utils.checkpoint): its arguments, or a recomputation in backward that "
        "differs from the forward",
        "compare what the checkpointed function does in forward and when it is recomputed (randomness, "
        "in-place changes, global state), and pass use_reentrant=False",
    ),
    (
        r"torch[/\\](?:_dynamo|_inductor|_functorch[/\\]_aot_autograd)[/\\]",
        LESSONS[13],
        "torch.compile (Dynamo tracing the function, AOTAutograd, a backend)",
        "run the function without torch.compile first; then torch._dynamo.explain(fn)(*args) lists the graph "
        "breaks and their reasons",
    ),
    (
        r"torch[/\\](?:_functorch|func)[/\\]",
        LESSONS[12],
        "a torch.func transform (vmap, grad, jacrev, functional_call)",
        "check that the function is pure (no in-place change of captured tensors, no .item(), no Python "
        "branch on values) and that the transform's arguments (in_dims, argnums) fit its inputs",
    ),
    (
        r"torch[/\\](?:distributed|nn[/\\]parallel)[/\\]",
        LESSONS[14],
        "torch.distributed or DistributedDataParallel (the process group, a collective, DDP's reducer)",
        "check that every rank joined the same group and runs the same model and the same collectives in the "
        "same order",
    ),
    (
        r"torch[/\\](?:amp|cuda[/\\]amp|cpu[/\\]amp)[/\\]",
        LESSONS[11],
        "mixed precision (autocast or GradScaler)",
        "check the order scale, backward, unscale_, step, update, and the dtypes under autocast",
    ),
    (
        r"torch[/\\]autograd[/\\](?:function|gradcheck)\.py",
        LESSONS[9],
        "a custom autograd.Function or gradcheck",
        "check what forward saves and what backward returns: one gradient per input of forward, of its shape",
    ),
    (
        r"torch[/\\]utils[/\\]hooks\.py",
        LESSONS[10],
        "a hook (a module's or a tensor's)",
        "check the hook's arguments and what it returns (None, or a value of the same shape)",
    ),
    (
        r"torch[/\\]optim[/\\]lr_scheduler\.py",
        taught(11, "A skipped step"),
        "a learning-rate scheduler (how it was made on its optimizer, last_epoch, when step() is called), not the "
        "optimizer's update",
        "make the scheduler after the optimizer with last_epoch left at -1 on a fresh run, call scheduler.step() "
        "after optimizer.step(), and to resume load the optimizer's and the scheduler's state dicts",
    ),
    (
        r"torch[/\\]optim[/\\]",
        taught(2, "Optimizers take leaves only"),
        "an optimizer (what it was given, its step or zero_grad)",
        "check what it was given: a list of leaf tensors (model.parameters(), made again for each optimizer: a "
        "generator is used up after one pass), not a module, not empty",
    ),
    (
        r"_engine_run_backward|torch[/\\]autograd[/\\](?:__init__|graph)\.py",
        LESSONS[3],
        "the backward pass (autograd's engine running the graph's nodes)",
        "check the loss's graph: what it saved (retain_graph, in-place changes), and the hooks it runs",
    ),
)


# an optimizer's step() on the stack (a live frame's "file:step", a paste's "file", line N, in step): its own advice
_STEP = re.compile(r"torch[/\\]optim[/\\]\w+\.py(?::|\", line \d+, in )step\b")
_STEP_GUESS = (
    "an optimizer's step() (the closure it was given, or the gradients it reads)",
    "if step() was given a closure (L-BFGS), check that the closure recomputes the loss, calls backward() and "
    "returns the loss; without one, check that backward() ran before step(), so that each parameter's .grad is set",
)


def family_guess(where: Context, text: str = "", error=None) -> dict | None:
    """``{"module", "what", "look", "lesson", "said"}`` for the part of torch that raised, or None (no torch frame,
    or one no family fits). Read from the innermost frame in torch, then the frames above it. ``said`` quotes the
    message's own key clause (from ``text``); advice the frames of ``error`` show already satisfied is left out."""
    frames = [line for line in where.calls.splitlines() if re.search(r"[/\\]torch[/\\]", line)]
    for frame in reversed(frames):
        for pattern, notebook, what, look in _FAMILIES:
            if re.search(pattern, frame):
                module = re.search(r"torch[/\\][\w/\\.]+?\.py", frame)
                step = look.startswith("check what it was given") and any(map(_STEP.search, frames))
                what, look = _STEP_GUESS if step else (what, _satisfied(pattern, error) or look)
                return {
                    "module": module.group(0).replace("\\", "/") if module else "torch",
                    "what": what,
                    "look": look,
                    "said": key_clause(text),
                    "lesson": notebook if isinstance(notebook, tuple) else (notebook, "Pitfalls"),
                }
    return None


def key_clause(text: str) -> str:
    """The message's own words that name the problem: its last line without the exception's name, up to the first
    sentence's end (at most 200 characters)."""
    lines = [x.strip() for x in text.strip().splitlines() if x.strip() and not x.startswith((" ", "\t", "^"))]
    last = re.sub(r"^[\w.]*(?:Error|Exception|Warning|Unsupported):\s*", "", lines[-1] if lines else "")
    first = re.split(r"(?<=[a-z0-9)'\]])\.\s", last, maxsplit=1)[0].rstrip(".")
    return first[:200] + ("..." if len(first) > 200 else "")


def _satisfied(pattern: str, error) -> str:
    """Where the frames show the family's first advice already holds, what they show instead ("" otherwise): an
    optimizer whose every parameter group holds leaf tensors was given what it needs."""
    import sys

    if "optim[/\\\\]" not in pattern or "lr_scheduler" in pattern or "torch" not in sys.modules:
        return ""
    import torch

    tb = getattr(error, "__traceback__", None)
    while tb is not None:
        opt = tb.tb_frame.f_locals.get("self")
        if isinstance(opt, torch.optim.Optimizer):
            params = [p for g in getattr(opt, "param_groups", []) for p in g.get("params", [])]
            if params and all(isinstance(p, torch.Tensor) and p.is_leaf for p in params):
                return (
                    f"the optimizer holds {len(params)} leaf tensors in {len(opt.param_groups)} group(s), so what it "
                    "was given is fine: the call or the argument PyTorch's words name is the place to look"
                )
        tb = tb.tb_next
    return ""
