"""What the traceback of an error shows, beyond its message: which calls raised it, and the
learner's code around it. ``explain`` reads it to tell apart the causes one message can have
(was the call ``torch.autograd.grad``? was ``create_graph=True`` written? is the raising frame a
custom Function's backward? did it happen during backward, with saved-tensor hooks in the code?).

:func:`context` takes an exception (its traceback and those it was raised from) or a pasted
traceback's text. It never raises and needs no torch.
"""

from __future__ import annotations

import inspect
import linecache
import re
import traceback
import types
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Context", "context"]

# Frames of these files are PyTorch's or Python's own; the others are the learner's.
_LIBRARY = re.compile(
    r"[/\\](?:site-packages|dist-packages|lib[/\\]python\d[\d.]*)[/\\]|^<frozen |^"
    + re.escape(str(Path(__file__).parents[1]))  # the autograder package
)
_MAX_FRAMES, _MAX_SOURCE, _MODULE_LINES = 200, 200_000, 40
_AUTOGRAD_CALL = re.compile(r"autograd[/\\]__init__\.py:(?:grad|backward)$")


@dataclass(frozen=True)
class Context:
    """``calls``: ``"file:function"`` of every frame of the traceback (outermost first, also those of
    the exceptions it was raised from; a pasted traceback's text as it is); ``source``: the code of
    the learner's frames (each whole function, or the whole cell or script at module level; a
    pasted traceback's text); ``known``: whether there was a traceback or text to read at all;
    ``in_function_backward``: whether a frame is the backward (or jvp) of a custom autograd.Function;
    ``create_graph``: the create_graph argument of the torch.autograd.grad or backward call that
    raised (None when none did)."""

    calls: str = ""
    source: str = ""
    known: bool = False
    in_function_backward: bool = False
    create_graph: bool | None = None  # what the failing torch.autograd.grad/backward was passed
    innermost: str = ""  # "file:function" of the frame that raised (a pasted traceback: its last File line)
    sources: tuple = ()  # the code of each learner frame apart, outermost (the cell, the loop) first
    pasted: bool = False  # read from a pasted traceback's text: it quotes only the lines that ran into the error

    def called(self, pattern: str) -> bool:
        """Does a frame's ``file:function`` match ``pattern`` (a regex)?"""
        return re.search(pattern, self.calls) is not None

    def wrote(self, pattern: str) -> bool:
        """Does the learner's code match ``pattern`` (a regex)?"""
        return re.search(pattern, self.source) is not None

    @property
    def in_backward(self) -> bool:
        """Was it raised while autograd's engine ran a backward pass (backward() or autograd.grad)?"""
        return self.called(r"_engine_run_backward|run_backward|in (?:backward|grad)\b")


def _source(frame) -> str:
    """The code of ``frame``: its whole function; at module level its whole cell (or a short
    script), or the lines around the current one in a long script."""
    code = frame.f_code
    try:
        if code.co_name == "<module>":
            lines = linecache.getlines(code.co_filename)
            if len(lines) > _MODULE_LINES:
                start = max(frame.f_lineno - _MODULE_LINES // 2, 0)
                lines = lines[start : start + _MODULE_LINES]
            return "".join(lines)[:_MAX_SOURCE]
        return inspect.getsource(code)
    except (OSError, TypeError, IndexError):
        return ""


# a frame's header in a pasted traceback: Python's ``File "...", line N, in f`` or IPython's ``File ~/...:N, in f``
# and ``Cell In[3], line 4``
_FRAME_HEADER = re.compile(r"^\s*(?:File [\"~/\\]|Cell In\[)", re.MULTILINE)


def _learners_lines(text: str) -> str:
    """The code a pasted traceback quotes from the learner's frames (not torch's, Python's or the course's): the
    lines under each frame header whose file is not a library's. A text with no frame header is returned as is."""
    starts = [m.start() for m in _FRAME_HEADER.finditer(text)]
    if not starts:
        return text
    blocks = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    mine = []
    for block in blocks:
        header, _, body = block.partition("\n")
        path = re.search(r'File "([^"]+)"|File (\S+?):\d+', header)
        if not path or not _LIBRARY.search(path.group(1) or path.group(2)):
            mine.append(body)
    return "\n".join(mine)


def _is_function_backward(frame) -> bool:
    """Is ``frame`` the backward (or jvp/vjp) of a custom autograd.Function? Its ``ctx`` is then the
    Node autograd made for the Function (a ``BackwardCFunction``)."""
    if frame.f_code.co_name not in ("backward", "jvp", "vjp"):
        return False
    ctx = frame.f_locals.get("ctx")
    return type(ctx).__name__.endswith("Backward") or "BackwardCFunction" in {c.__name__ for c in type(ctx).__mro__}


def context(error) -> Context:
    """What ``error``'s traceback shows (an exception), what a pasted traceback says (a str), or
    what the stack above a frame holds (a frame: where a warning is being shown from). Anything
    else gives an empty Context (``known`` False)."""
    try:
        if isinstance(error, str):
            files = re.findall(r'File "([^"]+)", line \d+, in (\S+)', error)
            innermost = f"{files[-1][0]}:{files[-1][1]}" if files else ""
            # a frame "in backward" of the learner's file, called by autograd's engine: a Function's backward
            engine = error.find("_engine_run_backward")
            backward = engine >= 0 and any(
                name in ("backward", "jvp") and not _LIBRARY.search(file)
                for file, name in re.findall(r'File "([^"]+)", line \d+, in (\S+)', error[engine:])
            )
            mine = _learners_lines(error)
            return Context(
                error, mine, bool(error.strip()), backward, innermost=innermost, sources=(mine,), pasted=True
            )
        calls, sources, function_backward, create_graph, seen = [], [], False, None, set()
        innermost = ""
        stack = error if isinstance(error, types.FrameType) else None
        while (stack or isinstance(error, BaseException)) and id(error) not in seen and len(seen) < 8:
            seen.add(id(error))
            frames = []
            if stack is not None:  # a warning being shown: the stack that warned, outermost first
                while stack is not None and len(frames) < _MAX_FRAMES:
                    frames.insert(0, stack)
                    stack = stack.f_back
            else:
                tb = error.__traceback__
                while tb is not None and len(frames) < _MAX_FRAMES:
                    frames.append(tb.tb_frame)
                    tb = tb.tb_next
            if frames and not innermost:  # the error itself (not those it was raised from)
                innermost = f"{frames[-1].f_code.co_filename}:{frames[-1].f_code.co_name}"
            for frame in frames:
                filename = frame.f_code.co_filename
                calls.append(f"{filename}:{frame.f_code.co_name}")
                function_backward = function_backward or _is_function_backward(frame)
                if _AUTOGRAD_CALL.search(calls[-1]) and isinstance(frame.f_locals.get("create_graph"), bool):
                    create_graph = frame.f_locals["create_graph"]
                if not _LIBRARY.search(filename):
                    text = _source(frame)
                    if text and text not in sources:
                        sources.append(text)
            if isinstance(error, BaseException):
                # a rank's error (RankError) carries the rank's traceback as text in its message
                calls.extend(traceback.format_exception_only(type(error), error))
                error = error.__cause__ or error.__context__
            else:
                error = None
        return Context(
            "\n".join(calls),
            "\n".join(sources),
            bool(calls),
            function_backward,
            create_graph,
            innermost,
            tuple(sources),
        )
    except Exception:  # noqa: BLE001 -- reading a traceback must never add an error of its own
        return Context()
