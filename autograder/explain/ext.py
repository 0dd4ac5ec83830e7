"""IPython extension: ``%load_ext autograder`` explains autograd errors and warnings below PyTorch's.

Loading installs two hooks, and ``%unload_ext autograder`` puts back what was there before:

* a custom exception handler for every exception type a known kind comes as
  (``explain_kinds.EXCEPTION_TYPES``: RuntimeError, TypeError, ValueError, AssertionError,
  NotImplementedError, NameError, ...; ``InteractiveShell.set_custom_exc``) that first
  shows the usual traceback (``showtraceback``), then the explanation when ``explain`` knows it;
* a wrapper around ``warnings.showwarning`` that shows the warning as before, then its explanation.

Nothing is hidden, errors and warnings that ``explain`` does not know look exactly as without the
extension, and nothing happens unless the extension is loaded. In a Jupyter kernel the explanation
is a display output (HTML, with a text version) placed after the error or warning output, whose
"Lesson:" line is a link to the lesson's section; in a terminal it is text (warnings' on stderr).
"""

from __future__ import annotations

import builtins
import sys
import warnings

from ..kinds.table import EXCEPTION_TYPES
from . import explain

__all__ = ["load_ipython_extension", "unload_ipython_extension"]

_state: dict = {"on": False}  # "on"; what loading replaced: "custom_exc", "showwarning"


def _show_error(shell, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler: the usual traceback, then the explanation."""
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)
    if hasattr(value, "_render_traceback_"):  # a check's CheckFailed (an AssertionError) says it all
        return
    explanation = explain(value)
    if _state["on"] and explanation.kind != "unknown":
        _display(explanation)


def _in_kernel() -> bool:
    """Is this a Jupyter kernel (whose front end renders HTML), not a terminal IPython?"""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def _display(explanation) -> None:
    """In a Jupyter kernel, the explanation as HTML with its lesson linked (and its text version
    for other front ends); elsewhere its text on stdout."""
    if _in_kernel():
        from IPython.display import display

        display({"text/plain": str(explanation), "text/html": explanation._repr_html_()}, raw=True)
    else:
        print(explanation)


def _showwarning(message, category, filename, lineno, file=None, line=None):
    """``warnings.showwarning`` as before, then the explanation (same file; stderr by default)."""
    _state["showwarning"](message, category, filename, lineno, file, line)
    explanation = explain(message, sys._getframe(1))  # the caller's code tells causes apart
    target = file if file is not None else sys.stderr
    if _state["on"] and explanation.kind != "unknown" and target is not None:
        try:
            if file is None and _in_kernel():
                _display(explanation)
            else:
                print(explanation, file=target)
        except (OSError, ValueError):  # a closed or read-only stream: the warning was shown anyway
            pass


def load_ipython_extension(ip) -> None:
    """Install both hooks on the shell ``ip`` (loading twice is harmless)."""
    if _state["on"]:
        return
    _state.update(on=True, custom_exc=(ip.custom_exceptions, ip.CustomTB), showwarning=warnings.showwarning)
    # The types PyTorch raises its messages as (most are RuntimeErrors; DDP outside a process group
    # and GradScaler on float16 parameters are ValueErrors, GradScaler's order AssertionErrors, a
    # custom Function's signature TypeErrors). Not (Exception,): IPython would then also route
    # syntax errors of a cell through the handler, and show them with its own frames.
    ip.set_custom_exc(tuple(getattr(builtins, name) for name in EXCEPTION_TYPES), _show_error)
    warnings.showwarning = _showwarning


def unload_ipython_extension(ip) -> None:
    """Remove both hooks, restoring the previous exception handler and ``warnings.showwarning``.
    If something wrapped ``showwarning`` after us, our wrapper stays in its chain, silent."""
    if not _state["on"]:
        return
    _state["on"] = False
    ip.custom_exceptions, ip.CustomTB = _state.pop("custom_exc")
    if warnings.showwarning is _showwarning:
        warnings.showwarning = _state["showwarning"]
