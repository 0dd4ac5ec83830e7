"""Instruments of the course on the PyTorch autograd graph.

graph    walk a tensor's graph into plain records       (trace)
memory   bytes saved for backward, CUDA allocator deltas (SavedTensorMeter, measure_saved, cuda_memory)
draw     Graphviz drawing with a text fallback           (draw)
explore  ipywidgets explorers used in the lessons
compare  compare with a reference and diagnose           (diagnose)
check    learner-facing checks used in exercises
grading  batch grading of a class (python -m autograder grade)
"""
from . import check, compare, graph, memory
from .compare import diagnose
from .graph import trace
from .memory import SavedTensorMeter, cuda_memory, measure_saved

__all__ = ["check", "compare", "graph", "memory", "diagnose", "trace", "SavedTensorMeter",
           "cuda_memory", "measure_saved"]
