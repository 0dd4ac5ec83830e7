"""Instruments of the course on the PyTorch autograd graph.

graph    walk a tensor's graph into plain records        (trace)
memory   bytes saved for backward, CUDA allocator deltas (SavedTensorMeter, measure_saved, cuda_memory)
draw     Graphviz drawing with a text fallback           (autograder.draw.draw)
explore  ipywidgets explorers used in the lessons (chapters 1-2; explore_backward 3-4,
         explore_inplace 5, explore_grad_modes 6, explore_memory 7-8)
compare  compare with a reference and diagnose           (diagnose)
check    learner-facing checks used in exercises
explain  name the autograd mistake behind an error or warning (explain; %load_ext autograder)
grading  batch grading of a class                        (python -m autograder grade)

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

__all__ = ["check", "compare", "graph", "memory", "diagnose", "trace", "SavedTensorMeter",
           "cuda_memory", "measure_saved", "explain", "load_ipython_extension",
           "unload_ipython_extension"]

_SHORTCUTS = {"diagnose": "compare", "trace": "graph", "SavedTensorMeter": "memory",
              "cuda_memory": "memory", "measure_saved": "memory"}


def __getattr__(name: str):
    if name in _SHORTCUTS:
        return getattr(importlib.import_module(f".{_SHORTCUTS[name]}", __name__), name)
    if name in ("check", "compare", "graph", "memory", "draw", "explore", "explore_backward",
                "explore_inplace", "explore_grad_modes", "explore_memory", "grading", "lessons",
                "explain_ext"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")


def load_ipython_extension(ip) -> None:
    """``%load_ext autograder``: explain autograd errors and warnings under PyTorch's own."""
    importlib.import_module(".explain_ext", __name__).load_ipython_extension(ip)


def unload_ipython_extension(ip) -> None:
    """``%unload_ext autograder``: show errors and warnings as before loading."""
    importlib.import_module(".explain_ext", __name__).unload_ipython_extension(ip)
