"""What ``torch.compile`` makes of a function: its graph breaks, and the forward and backward FX
graphs AOTAutograd traces for it, with the tensors the forward saves for backward.

Everything here runs on the CPU without a C compiler: Dynamo's ``explain`` and AOTAutograd with
"compilers" that only record the graphs they receive and run them as they are (the ``aot_eager``
way). Each function resets Dynamo first (``torch._dynamo.reset()``), so results do not depend on
what was compiled before.

* :func:`graph_breaks` - graphs, graph breaks and the first line of each break reason.
* :func:`capture_graphs` - the forward and backward graphs of one call, under a chosen partitioner.
* :func:`saved_tensors` / :func:`saved_bytes` - what a backward graph takes from its forward.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch._dynamo
from functorch.compile import default_partition, make_boxed_func, min_cut_rematerialization_partition
from torch._dynamo.backends.common import aot_autograd

__all__ = ["PARTITIONS", "Breaks", "Captured", "capture_graphs", "graph_breaks", "saved_bytes", "saved_tensors"]

# The two partitioners of torch._functorch.partitioners: "default" saves what eager autograd would
# save; "min_cut" (used by the aot_eager and inductor backends) may recompute cheap ops in backward.
PARTITIONS = {"default": default_partition, "min_cut": min_cut_rematerialization_partition}


@dataclass
class Breaks:
    """What ``torch._dynamo.explain`` reports for one call: ``graphs`` (int), ``breaks`` (int) and
    ``reasons`` (the first line of each break reason, ``str``; no file paths)."""

    graphs: int
    breaks: int
    reasons: list[str] = field(default_factory=list)


def graph_breaks(fn, *args, **kwargs) -> Breaks:
    """Run ``torch._dynamo.explain(fn)(*args, **kwargs)`` after a reset and keep its stable parts.

    Returns:
        :class:`Breaks`. A function that Dynamo skips entirely (it captures no graph, and runs as
        plain Python) has ``graphs == 0`` and ``breaks == 0`` (``explain`` says -1 then).
    """
    torch._dynamo.reset()
    out = torch._dynamo.explain(fn)(*args, **kwargs)
    reasons = [r.reason.strip().splitlines()[0] for r in out.break_reasons]
    torch._dynamo.reset()
    return Breaks(out.graph_count, max(out.graph_break_count, 0), reasons)


@dataclass
class Captured:
    """The graphs of one compiled call: ``forward`` and ``backward`` are ``torch.fx.GraphModule``s
    (the last ones compiled, ``None`` if none was), ``result`` is what ``fn`` returned, and
    ``count`` how many forward graphs were compiled (one per graph Dynamo captured)."""

    forward: torch.fx.GraphModule | None
    backward: torch.fx.GraphModule | None
    result: object
    count: int


def _leaves(outputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """The leaf tensors the graphs of ``outputs`` accumulate into (AccumulateGrad's variables)."""
    seen, leaves, stack = set(), [], [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves


def capture_graphs(fn, *args, partition: str = "min_cut", **kwargs) -> Captured:
    """Compile ``fn`` with AOTAutograd and a chosen partitioner, call it once on ``args``, run a
    backward (``torch.autograd.grad`` with ones as output gradients: no ``.grad`` is written) and
    keep the graphs.

    Args:
        partition: ``"min_cut"`` (what ``aot_eager`` and inductor use) or ``"default"``.

    Returns:
        :class:`Captured`. The backward graph is compiled only when a backward runs, which this does.

    Raises:
        KeyError: for an unknown ``partition``.
    """
    graphs: dict[str, list] = {"forward": [], "backward": []}

    def keep(kind):
        def compiler(gm, example_inputs):
            graphs[kind].append(gm)
            return make_boxed_func(gm.forward)  # run the graph as it is

        return compiler

    backend = aot_autograd(
        fw_compiler=keep("forward"), bw_compiler=keep("backward"), partition_fn=PARTITIONS[partition]
    )
    torch._dynamo.reset()
    result = torch.compile(fn, backend=backend)(*args, **kwargs)
    outs = [t for t in (result if isinstance(result, (tuple, list)) else [result]) if isinstance(t, torch.Tensor)]
    outs = [t for t in outs if t.requires_grad]
    leaves = _leaves(outs)
    if outs and leaves:
        torch.autograd.grad(outs, leaves, [torch.ones_like(t) for t in outs], allow_unused=True)
    torch._dynamo.reset()
    last = {kind: (found[-1] if found else None) for kind, found in graphs.items()}
    return Captured(last["forward"], last["backward"], result, len(graphs["forward"]))


def _base(node: torch.fx.Node) -> torch.fx.Node:
    """The node whose result ``node`` is a view of (itself if it is no view): follows ops whose
    schema says their result aliases their first argument (detach, t, view, expand, ...)."""
    while node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
        returns = node.target._schema.returns
        if not (returns and returns[0].alias_info is not None and not returns[0].alias_info.is_write):
            break
        node = node.args[0]
    return node


def saved_tensors(captured: Captured) -> list[tuple[str, str, tuple[int, ...], torch.dtype, int]]:
    """The tensors the backward graph receives from the forward graph, in order, each as
    ``(name, base, shape, dtype, bytes)``.

    They are the backward graph's inputs (placeholders) other than the output gradients (named
    ``tangents_*``), and the last outputs of the forward graph. ``base`` names the forward node
    whose result the saved tensor is a view of (its own name when it is no view: ``detach``,
    ``t``, ``view`` make views); ``bytes`` is ``numel * element_size`` of the saved tensor
    (``meta["val"]``, a fake tensor). Non-tensor inputs (symbolic sizes) are left out.
    """
    names = [
        n.name for n in captured.backward.graph.nodes if n.op == "placeholder" and not n.name.startswith("tangents")
    ]
    outputs = next(n for n in captured.forward.graph.nodes if n.op == "output").args[0]
    found = []
    for name, node in zip(names, outputs[len(outputs) - len(names) :]):
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor):
            found.append((name, _base(node).name, tuple(val.shape), val.dtype, val.numel() * val.element_size()))
    return found


def saved_bytes(captured: Captured) -> int:
    """Bytes the forward graph keeps for the backward graph, each base counted once (a view shares
    its base's storage, as ``SavedTensorMeter`` counts storages once): the sum over distinct bases
    of ``numel * element_size`` of the base's ``meta["val"]``."""
    nodes = {n.name: n for n in captured.forward.graph.nodes}
    total = 0
    for base in dict.fromkeys(base for _, base, *_ in saved_tensors(captured)):
        val = nodes[base].meta["val"]
        total += val.numel() * val.element_size()
    return total
