"""Instruments of the course on the PyTorch autograd graph.

graph    walk a tensor's graph into plain records        (trace)
memory   bytes saved for backward, CUDA allocator deltas (SavedTensorMeter, measure_saved, cuda_memory)
draw     Graphviz drawing with a text fallback           (autograder.draw.draw)
explore  ipywidgets explorers used in the lessons
compare  compare with a reference and diagnose           (diagnose)
check    learner-facing checks used in exercises
grading  batch grading of a class                        (python -m autograder grade)

Submodules are imported on first use, so the grading command starts without importing torch.
"""
import importlib

__all__ = ["check", "compare", "graph", "memory", "diagnose", "trace", "SavedTensorMeter",
           "cuda_memory", "measure_saved"]

_SHORTCUTS = {"diagnose": "compare", "trace": "graph", "SavedTensorMeter": "memory",
              "cuda_memory": "memory", "measure_saved": "memory"}


def __getattr__(name: str):
    if name in _SHORTCUTS:
        return getattr(importlib.import_module(f".{_SHORTCUTS[name]}", __name__), name)
    if name in ("check", "compare", "graph", "memory", "draw", "explore", "grading"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")
