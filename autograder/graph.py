"""Walk a tensor's autograd graph into plain, comparable records.

The graph PyTorch records is made of backward Nodes (``tensor.grad_fn``, instances of
``torch.autograd.graph.Node``); each Node's ``next_functions`` are the edges to the Nodes that
produced its inputs, and leaf tensors that require grad end in an ``AccumulateGrad`` Node whose
``.variable`` is the leaf. PyTorch's own Nodes expose what they saved for backward as ``_saved_<name>``
attributes (see ``torch/csrc/autograd/generated/python_functions.cpp``); the Node of a custom
``torch.autograd.Function`` (``<Name>Backward``, ``CompiledFunctionBackward`` for a compiled block) has
none: what it saved with ``ctx.save_for_backward`` is its ``saved_tensors``.

``trace`` turns that into a :class:`Graph` of :class:`NodeRecord` values. Names are given in visit
order (breadth first from the roots, following ``next_functions`` in order), never from ``id()``,
so the same code gives the same records and drawings on every run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import torch

from .explore.table import text_table
from .kinds.kind import MODIFIED_INPLACE

__all__ = ["SavedTensor", "NodeRecord", "Graph", "trace", "SAVED_PREFIX", "saved_attributes", "is_python_scalar"]

SAVED_PREFIX = "_saved_"
"""The prefix of the attributes through which a backward Node exposes what it saved
(``node._saved_self``, ``node._saved_result``)."""


@dataclass(frozen=True)
class SavedTensor:
    """One tensor a Node saved for backward.

    ``attr`` is the attribute without its ``_saved_`` prefix (``"self"``, ``"result"``, ``"mat1"``), or
    ``"saved_tensors[i]"`` for what a custom ``autograd.Function`` saved with ``ctx.save_for_backward``;
    ``shape`` a tuple of ints; ``dtype`` e.g. ``"float32"``; ``nbytes`` the tensor's own bytes
    (numel x element size, not its storage); ``version`` its version counter now; ``freed`` is
    True when backward already released it (then shape/dtype are unknown and nbytes is 0);
    ``scalar`` is True for a Python number autograd saved as a *wrapped number* (the 2 of ``x * 2``):
    a 0-dim CPU tensor of 8 bytes (int64/float64) that saved_tensors_hooks never see, so
    :class:`~autograder.memory.SavedTensorMeter` does not count it (see :func:`is_python_scalar`).
    ``modified`` is True when an in-place operation changed the tensor after it was saved (autograd
    then refuses to hand it out, and backward through this Node would raise): ``saved_version`` is
    the version it was saved at, and shape, dtype and bytes are read from autograd's message.
    """

    attr: str
    shape: tuple[int, ...] = ()
    dtype: str = ""
    nbytes: int = 0
    version: int = 0
    freed: bool = False
    scalar: bool = False
    modified: bool = False
    saved_version: int | None = None

    def __str__(self) -> str:
        if self.freed:
            return f"{self.attr}: freed"
        if self.modified:
            shape = "x".join(map(str, self.shape)) or "scalar"
            return (
                f"{self.attr}: {self.dtype}[{shape}] {self.nbytes} B MODIFIED in place: "
                f"saved at v{self.saved_version}, now v{self.version}"
            )
        if self.scalar:
            return f"{self.attr}: Python scalar ({self.nbytes} B, not seen by saved_tensors_hooks)"
        shape = "x".join(map(str, self.shape)) or "scalar"
        return f"{self.attr}: {self.dtype}[{shape}] {self.nbytes} B v{self.version}"


@dataclass(frozen=True)
class NodeRecord:
    """One backward Node: its stable ``name``, its ``kind`` (class name, e.g. ``"MulBackward0"``),
    the names of the Nodes it sends gradients to (``next``, in ``next_functions`` order, ``None``
    edges skipped), its saved tensors, and for ``AccumulateGrad`` the leaf it writes ``.grad`` to
    (``leaf``: the name given in ``trace(names=...)`` or ``"leaf[2x3]"``)."""

    name: str
    kind: str
    next: tuple[str, ...] = ()
    saved: tuple[SavedTensor, ...] = ()
    leaf: str | None = None

    @property
    def saved_bytes(self) -> int:
        """Bytes of this Node's saved tensors, each counted once per tensor (not per storage)."""
        return sum(s.nbytes for s in self.saved)


@dataclass(frozen=True)
class Graph:
    """A traced autograd graph: ``nodes`` in visit order and ``roots`` (names of the Nodes of
    the traced tensors; a tensor without ``grad_fn`` has no root)."""

    nodes: tuple[NodeRecord, ...]
    roots: tuple[str, ...] = field(default=())

    @property
    def edges(self) -> tuple[tuple[str, str], ...]:
        """(consumer, producer) pairs: gradient flows from consumer to producer."""
        return tuple((n.name, m) for n in self.nodes for m in n.next)

    def __getitem__(self, name: str) -> NodeRecord:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    def __len__(self) -> int:
        return len(self.nodes)

    def counts(self) -> dict[str, int]:
        """Number of Nodes of each kind, e.g. ``{"MulBackward0": 2, "AccumulateGrad": 1}``."""
        return dict(Counter(n.kind for n in self.nodes))

    def table(self) -> str:
        """The graph as a fixed-width text table (one row per Node), for terminals, screen
        readers and machines without Graphviz."""
        rows = [("node", "sends grad to", "saved for backward")]
        for n in self.nodes:
            target = ", ".join(n.next) or (f"-> {n.leaf}.grad" if n.leaf else "-")
            rows.append((n.name, target, "; ".join(map(str, n.saved)) or "-"))
        return text_table(rows)

    def __str__(self) -> str:
        return self.table()


def saved_attributes(node) -> list[str]:
    """The names of what backward Node ``node`` saved, without :data:`SAVED_PREFIX`, sorted
    (``["other", "self"]`` for a ``MulBackward0``); read each as ``getattr(node, SAVED_PREFIX + name)``."""
    return sorted(a[len(SAVED_PREFIX) :] for a in dir(node) if a.startswith(SAVED_PREFIX))


def is_python_scalar(t: torch.Tensor) -> bool:
    """Is ``t`` a Python number autograd saved as a *wrapped number* (the 2 of ``x * 2``)? It shows as
    a 0-dim int64/float64/complex128/bool CPU tensor without grad, whatever the device of the other
    operand; it has its own small storage (8 bytes for int64/float64), but PyTorch never hands it to
    saved_tensors_hooks, so :class:`~autograder.memory.SavedTensorMeter` does not count it."""
    return (
        t.dim() == 0
        and t.device.type == "cpu"
        and not t.requires_grad
        and t.dtype in (torch.int64, torch.float64, torch.complex128, torch.bool)
    )


def _modified(label: str, message: str) -> SavedTensor | None:
    """The record of a saved tensor that autograd refused to unpack because it was modified in
    place since it was saved, from autograd's ``message``; None for any other message."""
    m = MODIFIED_INPLACE.search(message)
    if m is None or m["version"] is None:
        return None
    shape = tuple(int(n) for n in m["shape"].replace(" ", "").split(",") if n)
    tensor_type = m["type"].rsplit(".", 1)[-1]  # torch.cuda.FloatTensor -> FloatTensor
    try:
        dtype = getattr(torch, tensor_type).dtype  # torch.FloatTensor.dtype is torch.float32
        size = torch.empty((), dtype=dtype).element_size()
    except (AttributeError, TypeError, RuntimeError):
        dtype, size = None, 0
    numel = 1
    for n in shape:
        numel *= n
    return SavedTensor(
        label,
        shape,
        str(dtype).replace("torch.", "") if dtype else tensor_type,
        numel * size,
        int(m["version"]),
        modified=True,
        saved_version=int(m["expected"]),
    )


FUNCTION_SAVED = "saved_tensors"
"""The label of what a custom ``torch.autograd.Function`` saved with ``ctx.save_for_backward``
(``saved_tensors[0]``, ...); its Node (a ``BackwardCFunction``, e.g. ``ProbeBackward`` or
``CompiledFunctionBackward``) has no ``_saved_*`` attributes."""

NO_VC_CHECK = "_tensors_no_vc_check"
"""The ``ctx`` attribute where AOTAutograd's ``CompiledFunction`` keeps the tensors it saves for backward
without a version check (beside those it passes to ``save_for_backward``)."""


def _record(label: str, t: torch.Tensor) -> SavedTensor:
    dtype = str(t.dtype).replace("torch.", "")
    return SavedTensor(label, tuple(t.shape), dtype, t.numel() * t.element_size(), t._version)


def _function_saved(node) -> list[SavedTensor]:
    """What the Node of a custom ``autograd.Function`` saved: ``ctx.saved_tensors`` (``None`` entries
    skipped, indices kept) and, for a compiled block, AOTAutograd's tensors saved without a version check.
    After backward PyTorch only says the buffers were freed, not how many there were: one ``freed`` record."""
    try:
        values = node.saved_tensors
    except RuntimeError as error:  # freed by backward, or modified in place since it was saved
        return [_modified(FUNCTION_SAVED, str(error)) or SavedTensor(FUNCTION_SAVED, freed=True)]
    saved = [_record(f"{FUNCTION_SAVED}[{i}]", t) for i, t in enumerate(values) if isinstance(t, torch.Tensor)]
    unchecked = getattr(node, NO_VC_CHECK, None) or ()
    saved += [_record(f"{NO_VC_CHECK}[{i}]", t) for i, t in enumerate(unchecked) if isinstance(t, torch.Tensor)]
    return saved


def _saved_tensors(node) -> tuple[SavedTensor, ...]:
    # A custom Function's tensors passed through save_for_backward, so saved_tensors_hooks saw them:
    # none is a wrapped Python number.
    saved = _function_saved(node) if isinstance(node, torch.autograd.function.BackwardCFunction) else []
    for attr in saved_attributes(node):
        try:
            value = getattr(node, SAVED_PREFIX + attr)
        except RuntimeError as error:  # freed by backward, or modified in place since it was saved
            saved.append(_modified(attr, str(error)) or SavedTensor(attr, freed=True))
            continue
        values = value if isinstance(value, (tuple, list)) else [value]
        for i, t in enumerate(v for v in values if isinstance(v, torch.Tensor)):
            label = attr + (f"[{i}]" if isinstance(value, (tuple, list)) else "")
            if is_python_scalar(t):  # `x * 2` keeps the 2 as a wrapped number the hooks never see
                dtype = str(t.dtype).replace("torch.", "")
                saved.append(SavedTensor(label, (), dtype, t.numel() * t.element_size(), 0, scalar=True))
                continue
            saved.append(_record(label, t))
    return tuple(saved)


def _leaf_name(variable: torch.Tensor, names: Mapping[str, torch.Tensor]) -> str:
    for name, tensor in names.items():
        if tensor is variable:
            return name
    return "leaf[" + "x".join(map(str, variable.shape)) + "]"


def trace(tensors: torch.Tensor | Iterable[torch.Tensor], names: Mapping[str, torch.Tensor] | None = None) -> Graph:
    """Walk the graph behind ``tensors`` into a :class:`Graph`.

    Args:
        tensors: a tensor or several (any shape, dtype, device). Tensors without ``grad_fn``
            (leaves, results computed under ``no_grad``) contribute no Nodes.
        names: optional ``{"w": w, ...}`` so ``AccumulateGrad`` Nodes show which leaf they feed.

    Returns:
        A :class:`Graph`. Each Node is named ``kind`` the first time its kind is met and
        ``kind.2``, ``kind.3`` ... after that, in breadth-first visit order.

    Raises:
        TypeError: if ``tensors`` holds something that is not a tensor.
    """
    roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
    for t in roots:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"trace() takes tensors, got {type(t).__name__}")
    names = dict(names or {})
    order, seen, queue = [], {}, [t.grad_fn for t in roots if t.grad_fn is not None]
    while queue:  # breadth first; `seen` is keyed by the Node object only while we walk
        node = queue.pop(0)
        if node in seen:
            continue
        seen[node] = None
        order.append(node)
        queue.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    kinds: Counter[str] = Counter()
    label = {}
    for node in order:
        kind = type(node).__name__
        kinds[kind] += 1
        label[node] = kind if kinds[kind] == 1 else f"{kind}.{kinds[kind]}"
    records = []
    for node in order:
        leaf = getattr(node, "variable", None)
        records.append(
            NodeRecord(
                name=label[node],
                kind=type(node).__name__,
                next=tuple(label[n] for n, _ in node.next_functions if n is not None),
                saved=_saved_tensors(node),
                leaf=_leaf_name(leaf, names) if isinstance(leaf, torch.Tensor) else None,
            )
        )
    root_names = tuple(dict.fromkeys(label[t.grad_fn] for t in roots if t.grad_fn is not None))
    return Graph(tuple(records), root_names)
