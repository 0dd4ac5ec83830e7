"""The bounds a submitted notebook's bytes are held to before anything parses them.

One place for the figures the ways in share (an exchange folder, an LMS zip's entry, a hosted
grader's file): a notebook is at most ``MAX_NOTEBOOK_BYTES`` (the course's exercises weigh about
100 kB), its JSON nests at most ``MAX_DEPTH`` levels (a notebook's own structure is under ten;
widget state adds a few) and holds at most ``MAX_CONTAINERS`` objects and arrays (an exercise holds
a few thousand). Both are counted on the bytes, outside strings, with numpy, a megabyte at a time,
before ``json`` sees them: Python's parser recurses once per level (a file of a million ``[``
would end in ``RecursionError``), and 16 MiB of ``{},`` parse into 5.6 million dicts (400 MiB);
here each is one problem line. What a check adds to the process's peak is then at most about
260 MiB (16 MiB of short strings, the densest JSON that passes; ``tests/scripts/benchmark_zip_bounds.py``).
"""

from __future__ import annotations

import json

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

_CHUNK = 1 << 20  # bytes looked at together: a few MB of arrays at a time, whatever the file


def json_shape(data: bytes) -> tuple[int, int]:
    """``(deepest nesting, number of objects and arrays)`` of ``data`` outside JSON strings, in
    linear time, without recursion, and in a few MB of memory whatever ``data`` holds: chunk by
    chunk, carrying whether a string is open, how many backslashes end the chunk, and the depth."""
    depth = deepest = containers = inside = run = 0
    for start in range(0, len(data), _CHUNK):
        chunk = np.frombuffer(data, dtype=np.uint8, count=min(_CHUNK, len(data) - start), offset=start)
        at = np.arange(len(chunk), dtype=np.int32)
        last = np.maximum.accumulate(np.where(chunk == 92, np.int32(-1), at))  # the last byte that is no \\
        before = np.empty(len(chunk), dtype=np.int32)  # backslashes right before each byte
        before[0] = run
        before[1:] = np.where(last[:-1] >= 0, at[:-1] - last[:-1], at[1:] + run)
        quotes = (chunk == 34) & ((before & 1) == 0)  # a quote no backslash escapes opens or closes a string
        outside = ((inside + np.cumsum(quotes, dtype=np.int32)) & 1) == 0
        opens = ((chunk == 91) | (chunk == 123)) & outside  # [ {
        closes = ((chunk == 93) | (chunk == 125)) & outside  # ] }
        steps = np.flatnonzero(opens | closes)
        if steps.size:
            levels = depth + np.cumsum(np.where(opens[steps], 1, -1), dtype=np.int64)
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        containers += int(np.count_nonzero(opens))
        inside = 0 if outside[-1] else 1
        run = int(len(chunk) - 1 - last[-1]) if last[-1] >= 0 else run + len(chunk)
    return deepest, containers


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
