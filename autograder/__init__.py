"""Instruments of the course on the PyTorch autograd graph.

graph               walk a tensor's graph into plain records        (trace)
memory              bytes saved for backward, CUDA allocator deltas (SavedTensorMeter, measure_saved, cuda_memory)
live_memory         bytes alive during forward and backward, recomputation included (peak_live_bytes)
hook_meters         peak .grad bytes during backward, bytes kept by your own pack/unpack hooks
compiled_graphs     Dynamo's graph breaks; AOTAutograd's forward/backward graphs and their saved bytes
ranks               run a function in N forked processes joined by gloo (run_ranks), for DDP on the CPU
checkpoint_measure  time and memory of checkpointed models, for lesson 08 and the GPU check
figures             read and plot the checkpointing measurements (assets/*.csv)
draw                Graphviz drawing with a text fallback           (autograder.draw.draw)
lessons             where the course's files are and how to link to a lesson's heading
kinds               data: the kinds of mistakes explain knows, one module per chapter, and PyTorch's
                    in-place message (kinds.kind), which graph and memory read

The checks and the explainer, above the instruments:

check/              learner-facing checks used in exercises (check), the record a check makes
                    (check.checked), and judging a record (check.judging: the one comparison of a
                    notebook's checks and the class grader)
compare/            compare with a reference and diagnose (diagnose, diagnose_bytes), one module per
                    thing diagnosed (tensors, shapes, factors, byte_counts), and the cause keys (causes)
explain/            name the autograd mistake behind an error or warning (explain), its table (KINDS),
                    what the learner ran (context), kinds told apart (refine), the IPython extension (ext)
explain_ext         %load_ext autograder and the kernel's --ext=autograder.explain_ext (explain.ext)
explain_kinds       the mistakes explain knows (kinds.table), as lessons import them
explore/            ipywidgets explorers of the lessons, one module per chapter (explore.graph,
                    explore.backward, ..., explore.engine); above the checks: they show diagnose's
                    and explain's words (explore.table, a plain text table, serves graph too)

Above them:

grading/            batch grading of a class, one package per stage (see its docstring)
commands/           the command line, one module per command (python -m autograder grade, ...)

Each layer imports only the layers below it (``[tool.importlinter]`` in pyproject.toml keeps it so).

Submodules are imported on first use (``explain`` at once), so the grading command starts without
importing torch.
``%load_ext autograder`` in IPython/Jupyter shows ``explain``'s explanation under autograd errors
and warnings; ``%unload_ext autograder`` turns it off (see ``explain_ext``).
"""

import importlib

# Imported now, not on first use: the function must shadow its module's name for good (importing a
# submodule later would set autograder.explain to the module). explain needs no torch and is light;
# its table is reached with ``from autograder.explain import KINDS``.
from .explain import explain

__all__ = ["check", "compare", "graph", "memory", "explain", "load_ipython_extension", "unload_ipython_extension"]

# Submodules reached as attributes (``autograder.memory``) import on first use.
_MODULES = (
    "check",
    "compare",
    "graph",
    "memory",
    "live_memory",
    "hook_meters",
    "compiled_graphs",
    "ranks",
    "checkpoint_measure",
    "figures",
    "draw",
    "explore",
    "grading",
    "lessons",
    "explain_ext",
)


def __getattr__(name: str):
    if name in _MODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")


def load_ipython_extension(ip) -> None:
    """``%load_ext autograder``: explain autograd errors and warnings under PyTorch's own."""
    importlib.import_module(".explain_ext", __name__).load_ipython_extension(ip)


def unload_ipython_extension(ip) -> None:
    """``%unload_ext autograder``: show errors and warnings as before loading."""
    importlib.import_module(".explain_ext", __name__).unload_ipython_extension(ip)
