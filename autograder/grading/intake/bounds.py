"""The bounds a submitted notebook's bytes are held to before anything parses them.

One place for the figures the ways in share (an exchange folder, an LMS zip's entry, a hosted
grader's file): a notebook is at most ``MAX_NOTEBOOK_BYTES`` (the course's exercises weigh about
100 kB) and its JSON nests at most ``MAX_DEPTH`` levels (a notebook's own structure is under ten;
widget state adds a few). Depth is counted on the bytes, outside strings, with numpy, before
``json`` sees them: Python's parser recurses once per level and a file of a million ``[`` would
end in ``RecursionError``; here it is one problem line.
"""

from __future__ import annotations

import json
import re

import numpy as np

__all__ = ["MAX_NOTEBOOK_BYTES", "MAX_DEPTH", "json_depth", "json_problem"]

MAX_NOTEBOOK_BYTES = 16 * 1024**2
MAX_DEPTH = 64

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPEN, _CLOSE = frozenset(b"[{"), frozenset(b"]}")
_OTHERS = bytes(b for b in range(256) if b not in _OPEN | _CLOSE)


def json_depth(data: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in ``data`` outside JSON strings (linear time, no recursion)."""
    brackets = _STRING.sub(b"", data).translate(None, _OTHERS)
    if not brackets:
        return 0
    steps = np.frombuffer(brackets, dtype=np.uint8)
    depth = np.cumsum(np.where(np.isin(steps, np.frombuffer(bytes(_OPEN), dtype=np.uint8)), 1, -1), dtype=np.int64)
    return int(depth.max())


def json_problem(data: bytes) -> str:
    """Why ``data`` is not a notebook's JSON ("" when it parses into an object): its size, its depth,
    or the parser's error by name. Never raises for what ``data`` holds."""
    if len(data) > MAX_NOTEBOOK_BYTES:
        return f"more than {MAX_NOTEBOOK_BYTES} bytes"
    if (depth := json_depth(data)) > MAX_DEPTH:
        return f"JSON nested {depth} levels deep (at most {MAX_DEPTH})"
    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError, MemoryError) as error:
        return f"not JSON: {type(error).__name__}"
    return "" if isinstance(parsed, dict) else "not JSON of a notebook (not an object)"
