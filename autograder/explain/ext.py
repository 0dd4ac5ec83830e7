"""IPython extension: ``%load_ext autograder`` explains autograd errors and warnings below PyTorch's.

Loading installs two hooks, and ``%unload_ext autograder`` puts back what was there before:

* a custom exception handler for every exception type a known kind comes as
  (``explain_kinds.EXCEPTION_TYPES``: RuntimeError, TypeError, ValueError, AssertionError,
  NotImplementedError, NameError, ...) and every other builtin exception but syntax errors and
  warnings (``InteractiveShell.set_custom_exc``) that first
  shows the usual traceback (``showtraceback``), then the explanation when ``explain`` knows it;
* a wrapper around ``warnings.showwarning`` that shows the warning as before, then its explanation.

Nothing is lost, errors and warnings that ``explain`` does not know look exactly as without the
extension, and nothing happens unless the extension is loaded. In a Jupyter kernel the explanation
is a display output (HTML, with a text version) placed after the error or warning output, whose
"Lesson:" line is a link to the lesson's section; in a terminal it is text (warnings' on stderr).
In a kernel whose tracebacks show frames (IPython's default ``%xmode Context``), a known error's
output is its last line alone (as ``%xmode Minimal`` shows it) and PyTorch's frames are folded
under the explanation (an HTML ``<details>``; in the text version, after it): the explanation is
what the learner sees first, not thirty lines of ``torch/_tensor.py``. Loading again (a set-up
cell run a second time) is silent: ``%load_ext autograder`` then prints no "already loaded".
"""

from __future__ import annotations

import builtins
import html
import re
import sys
import warnings

from ..kinds.table import EXCEPTION_TYPES
from . import explain

__all__ = ["load_ipython_extension", "unload_ipython_extension"]

_state: dict = {"on": False}  # "on"; what loading replaced: "custom_exc", "showwarning"


def _show_error(shell, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler: the usual traceback, then the explanation (in a kernel
    whose tracebacks show frames, the error's last line, then the explanation with the frames
    folded under it)."""
    explanation = None if hasattr(value, "_render_traceback_") else explain(value)  # a CheckFailed says it all
    known = explanation is not None and _state["on"] and explanation.kind != "unknown"
    tracebacks = shell.InteractiveTB
    if not (known and _in_kernel() and tracebacks.mode != "Minimal"):
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)
        if known:
            _display(explanation)
        return
    frames = _plain("\n".join(tracebacks.structured_traceback(etype, value, tb, tb_offset=tb_offset)))
    mode = tracebacks.mode
    tracebacks.set_mode("Minimal")  # the error output: its last line (sys.last_* and %debug as usual)
    try:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)
    finally:
        tracebacks.set_mode(mode)
    _display(explanation, frames)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _plain(text: str) -> str:
    """A traceback as text: IPython's colour codes taken out."""
    return _ANSI.sub("", text)


def _in_kernel() -> bool:
    """Is this a Jupyter kernel (whose front end renders HTML), not a terminal IPython?"""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def _display(explanation, frames: str = "") -> None:
    """In a Jupyter kernel, the explanation as HTML with its lesson linked (and its text version
    for other front ends), ``frames`` (PyTorch's traceback as text) folded under it; elsewhere its
    text on stdout."""
    if _in_kernel():
        from IPython.display import display

        text, page = str(explanation), explanation._repr_html_()
        if frames:
            lines = frames.count("\n") + 1
            text += f"\n\nThe traceback ({lines} lines):\n{frames}"
            page += (
                f"<details><summary>The traceback ({lines} lines): where PyTorch raised it</summary>"
                f'<pre style="{_FRAMES_STYLE}">{html.escape(frames)}</pre></details>'
            )
        display({"text/plain": text, "text/html": page}, raw=True)
    else:
        print(explanation)


_FRAMES_STYLE = "font-size: var(--jp-code-font-size, 13px); white-space: pre-wrap; margin: 0.5em 0 0 2ch"


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


_NAMES = ("autograder", "autograder.explain_ext")  # what %load_ext loads this extension by


def _quiet_load_ext(ip):
    """IPython's ``%load_ext``, silent for this extension when IPython has it loaded already under
    that name (a set-up cell run again): it is switched on, if it was off, and nothing is printed
    instead of "The autograder extension is already loaded. To reload it, use: ...". The first
    load under each name goes to IPython as before, so that ``%unload_ext`` finds it; any other
    extension as before."""
    manager = ip.magics_manager
    # IPython's own function, not the table's entry: from IPython 9 that may be a lazy stand-in that
    # looks the name up in the table again when called, where it would find this wrapper
    find = getattr(manager, "find", None)
    original = find("line", "load_ext") if find is not None else manager.magics["line"]["load_ext"]

    def load_ext(line):
        if line.strip() in _NAMES and line.strip() in ip.extension_manager.loaded:
            load_ipython_extension(ip)
            return None
        return original(line)

    load_ext.__doc__ = original.__doc__
    return original, load_ext


def _routed() -> tuple:
    """The exception types the handler takes: those the kinds come as, and every other builtin exception but syntax
    errors (a family guess or a plain-Python kind, a StopIteration from next(model.parameters()), is shown too)."""
    named = {getattr(builtins, name) for name in EXCEPTION_TYPES}
    others = {
        t
        for t in vars(builtins).values()
        if isinstance(t, type)
        and issubclass(t, Exception)
        and t is not Exception
        and not issubclass(t, SyntaxError | Warning)
    }
    return tuple(sorted(named | others, key=lambda t: t.__name__))


def load_ipython_extension(ip) -> None:
    """Install both hooks on the shell ``ip`` (loading twice is harmless, and silent)."""
    if _state["on"]:
        return
    _state.update(on=True, custom_exc=(ip.custom_exceptions, ip.CustomTB), showwarning=warnings.showwarning)
    if getattr(ip, "magics_manager", None) is not None and "load_ext" in ip.magics_manager.magics["line"]:
        _state["load_ext"], quiet = _quiet_load_ext(ip)
        ip.magics_manager.magics["line"]["load_ext"] = quiet
    # The types PyTorch raises its messages as (most are RuntimeErrors; DDP outside a process group
    # and GradScaler on float16 parameters are ValueErrors, GradScaler's order AssertionErrors, a
    # custom Function's signature TypeErrors). Not (Exception,): IPython would then also route
    # syntax errors of a cell through the handler, and show them with its own frames.
    ip.set_custom_exc(_routed(), _show_error)
    warnings.showwarning = _showwarning


def unload_ipython_extension(ip) -> None:
    """Remove both hooks, restoring the previous exception handler and ``warnings.showwarning``.
    If something wrapped ``showwarning`` after us, our wrapper stays in its chain, silent."""
    if not _state["on"]:
        return
    _state["on"] = False
    ip.custom_exceptions, ip.CustomTB = _state.pop("custom_exc")
    if "load_ext" in _state:
        ip.magics_manager.magics["line"]["load_ext"] = _state.pop("load_ext")
    if warnings.showwarning is _showwarning:
        warnings.showwarning = _state["showwarning"]
