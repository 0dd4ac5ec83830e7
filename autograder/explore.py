"""ipywidgets explorers for the lessons. Each widget is a thin shell over a plain function that
returns text or records, so what a widget shows is also what the tests check."""
from __future__ import annotations

import warnings
from typing import Sequence

import ipywidgets as widgets
import torch
from IPython.display import display

from .draw import draw
from .graph import Graph, trace

__all__ = ["Explorer", "run_steps", "step_explorer", "leaf_facts", "leaf_table", "leaf_explorer",
           "backward_facts", "backward_table", "backward_explorer", "accumulation_facts",
           "accumulation_table", "accumulation_explorer", "INPLACE_OPS", "INPLACE_CHANGES",
           "inplace_facts", "inplace_table", "inplace_explorer", "GRAD_MODES", "grad_mode_facts",
           "grad_mode_table", "grad_mode_explorer"]


class Explorer(widgets.VBox):
    """The box an explorer returns: a ``VBox`` whose plain-text form says what it is. That text is
    what a notebook shows for the widget until its cell runs in a live kernel (a lesson just
    opened, GitHub, nbconvert), instead of ``VBox(children=(IntSlider(...), Output()))``."""

    def __init__(self, children, name: str):
        super().__init__(children)
        self.explorer_name = name

    def __repr__(self) -> str:
        return f"Interactive explorer ({self.explorer_name}): run this cell to use it."


def run_steps(lines: Sequence[str], steps: int, show: str, setup: str = "") -> tuple[dict, Graph]:
    """Execute ``setup`` then the first ``steps`` of ``lines`` in a fresh namespace.

    Returns:
        ``(namespace, graph)`` where ``graph`` traces the variable named ``show`` (an empty
        ``Graph`` when it does not exist yet or is not a tensor). Leaves are labelled with the
        names of the tensors in the namespace.

    Raises:
        Whatever the executed lines raise.
    """
    namespace: dict = {"torch": torch}
    exec(setup, namespace)
    for line in lines[:steps]:
        exec(line, namespace)
    target = namespace.get(show)
    if not isinstance(target, torch.Tensor):
        return namespace, Graph(())
    names = {k: v for k, v in namespace.items() if isinstance(v, torch.Tensor) and not k.startswith("_")}
    return namespace, trace(target, names)


def step_explorer(lines: Sequence[str], show: str, setup: str = "") -> widgets.Widget:
    """A slider that runs a program one statement at a time and draws the graph behind ``show``
    after each step: the graph is built as the code runs."""
    out = widgets.Output()

    def update(steps: int) -> None:
        out.clear_output(wait=True)
        with out:
            _, graph = run_steps(lines, steps, show, setup)
            print("\n".join(f"{'>>' if i == steps - 1 else '  '} {line}" for i, line in enumerate(lines[:steps])))
            display(draw(graph) if len(graph) else f"{show} has no grad_fn yet: no graph behind it")

    slider = widgets.IntSlider(value=1, min=1, max=len(lines), description="statements")
    widgets.interactive_output(update, {"steps": slider})
    return Explorer([slider, out], "step_explorer")


_LEAF_ROWS = ("x", "y", "z")


def leaf_facts(requires_grad: bool = True, no_grad: bool = False, detach: bool = False,
               retain_grad: bool = False, backward: bool = True) -> list[dict]:
    """Facts about ``x`` (a leaf), ``y = x * 2`` and ``z = (y ** 2).sum()`` under the chosen
    options (``x`` has shape [3], float32).

    Options: ``requires_grad`` for x; compute y under ``torch.no_grad()``; ``detach`` y before z;
    ``retain_grad`` on y; call ``z.backward()`` (skipped when z does not require grad).

    Returns:
        One dict per tensor with keys ``tensor, is_leaf, requires_grad, grad_fn, grad``
        (``grad_fn`` is the Node's class name or None; ``grad`` a list of floats or None).
    """
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=requires_grad)
    with torch.set_grad_enabled(not no_grad):
        y = x * 2
    if detach:
        y = y.detach()
    if retain_grad and y.requires_grad:
        y.retain_grad()
    z = (y ** 2).sum()
    if backward and z.requires_grad:
        z.backward()
    rows = []
    for name, t in zip(_LEAF_ROWS, (x, y, z)):
        with warnings.catch_warnings():  # reading a non-leaf's .grad warns; the table says why
            warnings.simplefilter("ignore")
            grad = t.grad
        rows.append(dict(tensor=name, is_leaf=t.is_leaf, requires_grad=t.requires_grad,
                         grad_fn=type(t.grad_fn).__name__ if t.grad_fn else None,
                         grad=grad.tolist() if grad is not None else None))
    return rows


def leaf_table(**options) -> str:
    """:func:`leaf_facts` under ``options`` as a fixed-width text table, one row per tensor:
    what :func:`leaf_explorer` shows for the same checkboxes."""
    lines = [f"{'tensor':<7}{'is_leaf':<9}{'requires_grad':<15}{'grad_fn':<14}grad"]
    for r in leaf_facts(**options):
        lines.append(f"{r['tensor']:<7}{str(r['is_leaf']):<9}{str(r['requires_grad']):<15}"
                     f"{str(r['grad_fn']):<14}{r['grad']}")
    return "\n".join(lines)


def leaf_explorer() -> widgets.Widget:
    """Checkboxes for :func:`leaf_facts`' options and a table of the resulting facts."""
    options = {k: widgets.Checkbox(value=v, description=k, indent=False) for k, v in
               dict(requires_grad=True, no_grad=False, detach=False, retain_grad=False, backward=True).items()}
    out = widgets.Output()

    def update(**chosen) -> None:
        out.clear_output(wait=True)
        with out:
            print(leaf_table(**chosen))

    widgets.interactive_output(update, options)
    return Explorer([widgets.HBox(list(options.values())), out], "leaf_explorer")


# Chapter 3: what backward frees, and when a second backward fails.
BACKWARD_OPS = {
    "x + 1": lambda x: x + 1,                  # saves nothing
    "x * 2": lambda x: x * 2,                  # saves the number 2 (0 bytes, freed all the same)
    "x * x": lambda x: x * x,                  # saves x twice: one storage
    "x ** 2": lambda x: x ** 2,                # saves its input
    "x.exp()": lambda x: x.exp(),              # saves its output
    "x.sigmoid()": lambda x: x.sigmoid(),      # saves its output
}


def backward_facts(op: str = "x.sigmoid()", retain_graph: bool = False) -> dict:
    """Run ``loss = OP(x).sum()`` for ``x = [1., 2., 3.]`` (float32, CPU), then ``loss.backward()``
    (with ``retain_graph``), then a second ``loss.backward()``.

    Args:
        op: a key of :data:`BACKWARD_OPS`.
        retain_graph: passed to the first backward.

    Returns:
        A dict: ``saved before`` / ``saved after`` (the saved tensors of every Node, as
        ``"Node.attr: ..."`` strings from :func:`~autograder.graph.trace`, before and after the first
        backward), ``nodes before`` / ``nodes after`` (number of Nodes), ``alive bytes`` after the
        forward and after the first backward (:class:`~autograder.memory.SavedTensorMeter`),
        ``second backward`` (``"ok"`` or the first line of the error) and ``x.grad`` (a list).
    """
    from .memory import SavedTensorMeter

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with SavedTensorMeter() as meter:
        loss = BACKWARD_OPS[op](x).sum()
    before, alive_forward = trace(loss, {"x": x}), meter.alive_bytes
    loss.backward(retain_graph=retain_graph)
    after, alive_backward = trace(loss, {"x": x}), meter.alive_bytes
    try:
        loss.backward()
        second = "ok"
    except RuntimeError as error:
        second = "RuntimeError: " + str(error).split(" (")[0]
    saved = lambda g: [f"{n.name}.{s}" for n in g.nodes for s in n.saved]
    return {"saved before": saved(before), "saved after": saved(after), "nodes before": len(before),
            "nodes after": len(after), "alive bytes after forward": alive_forward,
            "alive bytes after backward": alive_backward, "second backward": second,
            "x.grad": x.grad.tolist()}


def backward_table(**options) -> str:
    """:func:`backward_facts` under ``options`` as text: what :func:`backward_explorer` shows."""
    f = backward_facts(**options)
    lines = [f"loss = ({options.get('op', 'x.sigmoid()')}).sum(); "
             f"loss.backward(retain_graph={options.get('retain_graph', False)}); loss.backward()",
             f"Nodes before / after backward: {f['nodes before']} / {f['nodes after']}",
             "saved before backward: " + ("; ".join(f["saved before"]) or "nothing"),
             "saved after backward:  " + ("; ".join(f["saved after"]) or "nothing"),
             f"alive saved bytes: {f['alive bytes after forward']} B after forward, "
             f"{f['alive bytes after backward']} B after backward",
             f"second backward: {f['second backward']}", f"x.grad: {f['x.grad']}"]
    return "\n".join(lines)


def backward_explorer() -> widgets.Widget:
    """A menu of operations and a ``retain_graph`` box: what backward frees, and whether a second
    backward works (:func:`backward_table`)."""
    op = widgets.Dropdown(options=list(BACKWARD_OPS), value="x.sigmoid()", description="operation")
    retain = widgets.Checkbox(value=False, description="retain_graph", indent=False)
    out = widgets.Output()

    def update(op: str, retain_graph: bool) -> None:
        out.clear_output(wait=True)
        with out:
            print(backward_table(op=op, retain_graph=retain_graph))

    widgets.interactive_output(update, {"op": op, "retain_graph": retain})
    return Explorer([widgets.HBox([op, retain]), out], "backward_explorer")


# Chapter 4: when does gradient accumulation reproduce the full-batch gradient?
ACCUMULATION_SCALES = ("none", "count", "size")


def accumulation_facts(micro_batch: int = 3, scale: str = "count", reduction: str = "mean",
                       batchnorm: bool = False, batch: int = 12) -> dict:
    """Compare the gradient of one batch of ``batch`` samples with the gradient accumulated over
    micro-batches of ``micro_batch`` samples (the last one smaller when it does not divide).

    The model is ``Linear(4, 8) [-> BatchNorm1d(8)] -> Tanh -> Linear(8, 1)`` in float64 on the CPU
    (fixed seed), the loss ``F.mse_loss(..., reduction=reduction)``. Each micro-batch loss is
    multiplied by 1 (``scale="none"``), divided by the number of micro-batches (``"count"``), or
    weighted by its share of the samples, ``len(micro) / batch`` (``"size"``). Micro-batches are
    separate tensors (``clone()``), so each one's saved input is its own storage.

    Returns:
        A dict: ``sizes`` (the micro-batch sizes), ``diagnosis`` (:func:`~autograder.compare.diagnose`
        kind of the accumulated gradients against the full-batch ones, all parameters flattened
        together), ``factor`` (accumulated / full when one number fits, else None), and
        ``peak bytes accumulated`` / ``peak bytes full batch`` (saved-tensor peaks, parameters
        excluded); ``error`` (str or None) when a micro-batch cannot run (BatchNorm needs more
        than one sample per micro-batch in training).
    """
    from .compare import diagnose
    from .memory import SavedTensorMeter

    if scale not in ACCUMULATION_SCALES:
        raise ValueError(f"scale must be one of {ACCUMULATION_SCALES}, got {scale!r}")
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch, 4, generator=gen, dtype=torch.float64)
    y = torch.randn(batch, 1, generator=gen, dtype=torch.float64)
    layers = [torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8)] if batchnorm else [torch.nn.Linear(4, 8)]
    model = torch.nn.Sequential(*layers, torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64))
    params = list(model.parameters())
    loss_fn = lambda xb, yb: torch.nn.functional.mse_loss(model(xb), yb, reduction=reduction)
    sizes = [len(xb) for xb in x.split(micro_batch)]
    facts = {"sizes": sizes, "diagnosis": None, "factor": None, "peak bytes accumulated": None,
             "peak bytes full batch": None, "error": None}
    try:
        with SavedTensorMeter(exclude=params) as meter:
            loss_fn(x, y).backward()
        full = torch.cat([p.grad.flatten() for p in params])
        facts["peak bytes full batch"] = meter.peak_bytes
        model.zero_grad()
        with SavedTensorMeter(exclude=params) as meter:
            for xb, yb in zip(x.split(micro_batch), y.split(micro_batch)):
                weight = {"none": 1.0, "count": 1 / len(sizes), "size": len(xb) / batch}[scale]
                (loss_fn(xb.clone(), yb.clone()) * weight).backward()
        facts["peak bytes accumulated"] = meter.peak_bytes
    except (RuntimeError, ValueError) as error:
        facts["error"] = str(error).splitlines()[0]
        return facts
    result = diagnose(torch.cat([p.grad.flatten() for p in params]), full, "accumulated gradient")
    facts["diagnosis"] = result.kind
    facts["factor"] = 1.0 if result.ok else (round(result.factor, 4) if result.factor else None)
    return facts


def accumulation_table(**options) -> str:
    """:func:`accumulation_facts` under ``options`` as text: what :func:`accumulation_explorer` shows."""
    f = accumulation_facts(**options)
    lines = [f"micro-batch sizes: {f['sizes']}"]
    if f["error"]:
        return "\n".join(lines + [f"error: {f['error']}"])
    verdict = "equal to the full-batch gradient" if f["diagnosis"] == "ok" else f"{f['diagnosis']}"
    if f["diagnosis"] != "ok" and f["factor"] is not None:
        verdict += f" (accumulated = {f['factor']:g} x full batch)"
    lines += [f"accumulated gradient: {verdict}",
              f"peak saved bytes: accumulated {f['peak bytes accumulated']} B, "
              f"full batch {f['peak bytes full batch']} B"]
    return "\n".join(lines)


def accumulation_explorer() -> widgets.Widget:
    """Sliders and menus for :func:`accumulation_facts`: micro-batch size, scaling, reduction,
    BatchNorm; shows whether accumulation reproduces the full batch, and the peak saved bytes."""
    controls = {
        "micro_batch": widgets.IntSlider(value=3, min=1, max=12, description="micro-batch"),
        "scale": widgets.Dropdown(options=list(ACCUMULATION_SCALES), value="count", description="divide by"),
        "reduction": widgets.Dropdown(options=["mean", "sum"], value="mean", description="reduction"),
        "batchnorm": widgets.Checkbox(value=False, description="BatchNorm", indent=False),
    }
    out = widgets.Output()

    def update(**chosen) -> None:
        out.clear_output(wait=True)
        with out:
            print(accumulation_table(**chosen))

    widgets.interactive_output(update, controls)
    return Explorer([widgets.HBox(list(controls.values())), out], "accumulation_explorer")


# Chapter 5: which tensor an op saves, and what an in-place change of its result does.
INPLACE_OPS = ("y = x * 2", "y = x ** 2", "y = x.sin()", "y = x.sigmoid()", "y = x.exp()",
               "y = torch.relu(x)")
# Each in-place change and the same change written out of place (what the values now compute).
INPLACE_CHANGES = {"(none)": "", "y += 1": "y = y + 1", "y.mul_(2)": "y = y * 2",
                   "y[0] = 0": "y = torch.cat([torch.zeros(1), y[1:]])",
                   "y.detach().mul_(2)": "y = y * 2", "y.data.mul_(2)": "y = y * 2"}


def _saved_names(node, named: dict) -> list[str]:
    """``attr = name`` for each tensor ``node`` saved: a tensor of ``named`` (same storage) or a
    Python scalar."""
    from .graph import _is_python_scalar
    found = []
    for attr in sorted(a for a in dir(node) if a.startswith("_saved_")):
        t = getattr(node, attr)
        if not isinstance(t, torch.Tensor):
            continue
        if _is_python_scalar(t):
            found.append(f"{attr[7:]} = {t.item():g} (a Python number)")
            continue
        ptr = t.untyped_storage().data_ptr()
        name = next((n for n, v in named.items() if v.untyped_storage().data_ptr() == ptr),
                    "?")
        found.append(f"{attr[7:]} = {name}")
    return found


def inplace_facts(op: str, change: str) -> dict:
    """Run ``x = [0.5, 1.0, 2.0]`` (requires grad), ``op`` (one of :data:`INPLACE_OPS`), then
    ``change`` (a key of :data:`INPLACE_CHANGES`) and ``y.sum().backward()``.

    Returns:
        A dict: ``saved`` (what ``y.grad_fn`` saved, as ``"attr = x"``, ``"attr = y"`` or a Python
        number), ``version`` (``y._version`` after the change), ``outcome`` (``"ok"`` or the
        :func:`autograder.explain` kind of the error backward raised), ``grad`` (``x.grad`` as a
        list rounded to 4 decimals, or None), ``expected`` (``x.grad`` when the change is written
        out of place) and ``verdict``: ``"right"``, ``"raises"`` or ``"silently wrong"``.
    """
    from .explain import explain

    def run(change_code: str):
        ns = {"torch": torch, "x": torch.tensor([0.5, 1.0, 2.0], requires_grad=True)}
        exec(op, ns)
        saved = _saved_names(ns["y"].grad_fn, {"x": ns["x"], "y": ns["y"]})
        exec(change_code, ns)
        try:
            ns["y"].sum().backward()
            outcome = "ok"
        except RuntimeError as error:
            outcome = explain(error).kind
        grad = ns["x"].grad
        return saved, ns["y"]._version, outcome, None if grad is None else [round(g, 4) for g in grad.tolist()]

    saved, version, outcome, grad = run("" if change == "(none)" else change)
    expected = run(INPLACE_CHANGES[change])[3]
    verdict = "raises" if outcome != "ok" else "right" if grad == expected else "silently wrong"
    return dict(saved=saved, version=version, outcome=outcome, grad=grad, expected=expected,
                verdict=verdict)


def inplace_table(op: str) -> str:
    """:func:`inplace_facts` for ``op`` and every change, as a fixed-width text table: what
    :func:`inplace_explorer` shows for that op."""
    facts = {change: inplace_facts(op, change) for change in INPLACE_CHANGES}
    lines = [f"{op}   saves: {', '.join(facts['(none)']['saved']) or 'nothing'}",
             f"{'change':<20}{'y._version':<12}{'backward':<18}{'x.grad':<28}{'verdict'}"]
    for change, f in facts.items():
        should = f" (should be {f['expected']})" if f["verdict"] == "silently wrong" else ""
        lines.append(f"{change:<20}{f['version']:<12}{f['outcome']:<18}{str(f['grad']):<28}"
                     f"{f['verdict']}{should}")
    return "\n".join(lines)


def inplace_explorer() -> widgets.Widget:
    """A menu of ops; for the chosen one, :func:`inplace_table`: what it saves and what each
    in-place change of its result does to backward."""
    menu = widgets.Dropdown(options=INPLACE_OPS, value="y = x.sigmoid()", description="op")
    out = widgets.Output()

    def update(op: str) -> None:
        out.clear_output(wait=True)
        with out:
            print(inplace_table(op))

    widgets.interactive_output(update, {"op": menu})
    return Explorer([menu, out], "inplace_explorer")


# Chapter 6: grad modes, detach and eval() on a small model.
GRAD_MODES = ("grad mode", "no_grad", "inference_mode")


def grad_mode_facts(mode: str = "grad mode", train: bool = True, detach: bool = False) -> dict:
    """Run a small model (Linear, ReLU, Dropout(0.5), Linear) on a batch under ``mode`` (one of
    :data:`GRAD_MODES`), in training mode or after ``eval()``, and optionally ``detach()`` the
    output. The model and data are seeded; the global RNG is left as it was.

    Returns:
        A dict: ``requires_grad``, ``grad_fn`` (class name or None), ``is_inference`` of the
        output; ``saved_bytes`` (``int``: bytes the forward pass saved for backward, parameters
        excluded, read before ``detach``);
        ``repeatable`` (two forward passes give the same output: False while dropout is active);
        ``backward``: ``"ok"`` or the :func:`autograder.explain` kind of the error
        ``out.sum().backward()`` raises; ``reuse``: the same for ``(w * out).sum().backward()``
        with a new leaf ``w`` (the output used in a later computation that autograd records).
    """
    from .explain import explain
    from .memory import SavedTensorMeter

    context = {"grad mode": torch.enable_grad, "no_grad": torch.no_grad,
               "inference_mode": torch.inference_mode}[mode]

    def attempt(fn) -> str:
        try:
            fn()
            return "ok"
        except RuntimeError as error:
            return explain(error).kind

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Dropout(0.5),
                                    torch.nn.Linear(8, 2)).train(train)
        x = torch.randn(16, 4)
        with context():
            with SavedTensorMeter(exclude=model.parameters()) as meter:
                out = model(x)
            repeatable = torch.equal(out, model(x))
        saved_bytes = meter.alive_bytes  # what the forward saved; detach() below frees none of it
        if detach:
            out = out.detach()
        facts = dict(requires_grad=out.requires_grad,
                     grad_fn=type(out.grad_fn).__name__ if out.grad_fn is not None else None,
                     is_inference=out.is_inference(), saved_bytes=saved_bytes,
                     repeatable=repeatable)
        w = torch.ones(2, requires_grad=True)  # autograd.grad for w only: the model's graph stays
        facts["reuse"] = attempt(lambda: torch.autograd.grad((w * out).sum(), w))
        facts["backward"] = attempt(lambda: out.sum().backward())
    return facts


def grad_mode_table(train: bool = True, detach: bool = False) -> str:
    """:func:`grad_mode_facts` for the three modes, as a fixed-width text table: what
    :func:`grad_mode_explorer` shows for the same checkboxes."""
    keys = ("requires_grad", "grad_fn", "is_inference", "saved_bytes", "repeatable", "backward", "reuse")
    rows = [("", *keys)]
    for mode in GRAD_MODES:
        facts = grad_mode_facts(mode, train, detach)
        rows.append((mode, *(str(facts[k]) for k in keys)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(keys) + 1)]
    return "\n".join("  ".join(f"{c:<{w}}" for c, w in zip(r, widths)).rstrip() for r in rows)


def grad_mode_explorer() -> widgets.Widget:
    """Checkboxes ``train`` and ``detach``; the table of :func:`grad_mode_table` for them."""
    options = {"train": widgets.Checkbox(value=True, description="train() (untick: eval())",
                                         indent=False),
               "detach": widgets.Checkbox(value=False, description="detach the output", indent=False)}
    out = widgets.Output()

    def update(train: bool, detach: bool) -> None:
        out.clear_output(wait=True)
        with out:
            print(grad_mode_table(train, detach))

    widgets.interactive_output(update, options)
    return Explorer([widgets.HBox(list(options.values())), out], "grad_mode_explorer")
