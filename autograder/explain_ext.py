"""``--ext=autograder.explain_ext`` (the course's kernel) and ``%load_ext autograder``: the explainer as
an IPython extension. The public name of :mod:`autograder.explain.ext`, which holds it."""

from .explain.ext import load_ipython_extension, unload_ipython_extension

__all__ = ["load_ipython_extension", "unload_ipython_extension"]
