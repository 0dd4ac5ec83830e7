"""The bounds a submitted notebook's bytes are held to before anything parses them.

One place for the figures the ways in share (an exchange folder, an LMS zip's entry, a hosted
grader's file): a notebook is at most ``MAX_NOTEBOOK_BYTES`` (the course's exercises weigh about
100 kB), its JSON nests at most ``MAX_DEPTH`` levels (a notebook's own structure is under ten;
widget state adds a few) and holds at most ``MAX_CONTAINERS`` objects and arrays (an exercise holds
a few thousand). Both are counted on the bytes, outside strings, with numpy, before ``json`` sees
them: Python's parser recurses once per level (a file of a million ``[`` would end in
``RecursionError``), and 16 MiB of ``{},`` parse into 5.6 million dicts, 430 MB; here each is one
problem line, and what one parse may hold stays near 200 MB (short strings are then the densest).
"""

from __future__ import annotations

import json
import re

import numpy as np

__all__ = [
    "MAX_NOTEBOOK_BYTES",
    "MAX_DEPTH",
    "MAX_CONTAINERS",
    "json_depth",
    "json_shape",
    "json_problem",
    "shape_problem",
]

MAX_NOTEBOOK_BYTES = 16 * 1024**2
MAX_DEPTH = 64
MAX_CONTAINERS = 200_000

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPEN, _CLOSE = frozenset(b"[{"), frozenset(b"]}")
_OTHERS = bytes(b for b in range(256) if b not in _OPEN | _CLOSE)


def json_shape(data: bytes) -> tuple[int, int]:
    """``(deepest nesting, number of objects and arrays)`` of ``data`` outside JSON strings (linear
    time, no recursion)."""
    brackets = _STRING.sub(b"", data).translate(None, _OTHERS)
    if not brackets:
        return 0, 0
    opens = np.isin(np.frombuffer(brackets, dtype=np.uint8), np.frombuffer(bytes(_OPEN), dtype=np.uint8))
    depth = np.cumsum(np.where(opens, 1, -1), dtype=np.int64)
    return int(depth.max()), int(np.count_nonzero(opens))


def json_depth(data: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in ``data`` outside JSON strings."""
    return json_shape(data)[0]


def shape_problem(data: bytes) -> str:
    """Why ``data`` nests too deep or holds too many objects and arrays to parse ("" when it does not)."""
    depth, containers = json_shape(data)
    if depth > MAX_DEPTH:
        return f"JSON nested {depth} levels deep (at most {MAX_DEPTH})"
    if containers > MAX_CONTAINERS:
        return f"JSON of {containers} objects and arrays (at most {MAX_CONTAINERS})"
    return ""


def json_problem(data: bytes) -> str:
    """Why ``data`` is not a notebook's JSON ("" when it parses into an object): its size, its shape
    (:func:`shape_problem`), or the parser's error by name. Never raises for what ``data`` holds."""
    if len(data) > MAX_NOTEBOOK_BYTES:
        return f"more than {MAX_NOTEBOOK_BYTES} bytes"
    if problem := shape_problem(data):
        return problem
    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError, MemoryError) as error:
        return f"not JSON: {type(error).__name__}"
    return "" if isinstance(parsed, dict) else "not JSON of a notebook (not an object)"
