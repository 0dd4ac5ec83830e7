"""Which frames of a traceback run the learner's own code (a notebook cell), not the course's
package, PyTorch, the standard library or an installed package: what a check's message quotes
when the learner's code raised."""

from __future__ import annotations

import contextlib
import linecache
import os
import traceback
from collections.abc import Callable

import torch

__all__ = ["is_learner_file", "raising_function", "function_name", "learner_line"]

# Frames from these folders are not the learner's: the course's package, PyTorch, the standard
# library and installed packages. (Under a class grader, a learner's cell is compiled with an
# IPython cell name such as "<ipython-input-3-...>" or "/tmp/ipykernel_12/....py".)
_NOT_LEARNER = tuple(
    os.path.dirname(os.path.abspath(path)) + os.sep
    for path in (os.path.dirname(__file__), torch.__file__, os.__file__, contextlib.__file__)
)


def is_learner_file(filename: str) -> bool:
    if filename.startswith("<ipython-input-") or "ipykernel_" in filename:
        return True
    if filename.startswith("<") or "site-packages" in filename or "dist-packages" in filename:
        # other pseudo-files ("<frozen ...>", "<string>") are not shown; "<q1_answer>" (a cell run by
        # the course's tests) is a learner's cell
        return filename.startswith("<") and filename.endswith("_answer>")
    return not os.path.abspath(filename).startswith(_NOT_LEARNER)


def raising_function(tb, fn: Callable) -> str:
    """The name of the learner's function that raised: ``fn``'s, unless ``fn`` is a helper of the
    check cell that called the learner's function (then the innermost frame of another notebook
    cell, the answer cell). Where nothing tells, ``fn``'s name."""
    name = getattr(fn, "__name__", "your code")
    home = getattr(getattr(fn, "__code__", None), "co_filename", None)
    for frame, _ in traceback.walk_tb(tb):
        code = frame.f_code
        if home is not None and code.co_filename != home and is_learner_file(code.co_filename):
            name = function_name(code) or name
    return name


def function_name(code) -> str:
    """The name of the function ``code`` runs, as its author wrote it (``Class.method``; no
    ``outer.<locals>.``), or "" for a cell's own top-level code or a lambda ("<module>")."""
    name = getattr(code, "co_qualname", code.co_name).split("<locals>.")[-1]
    return "" if name.startswith("<") else name


def learner_line(tb) -> str:
    """``"\n  raised in fn(), line N: <source>"`` for the innermost frame of ``tb`` that runs the
    learner's own code (a notebook cell, not the course's package, PyTorch or another library);
    empty when there is none."""
    found = ""
    for frame, lineno in traceback.walk_tb(tb):
        filename = frame.f_code.co_filename
        if not is_learner_file(filename):
            continue
        text = linecache.getline(filename, lineno, frame.f_globals).strip()
        found = f"\n  raised in {frame.f_code.co_name}(), line {lineno}" + (f": {text}" if text else "")
    return found
