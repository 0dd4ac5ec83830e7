"""Are a notebook's bytes held to their bounds before any parser sees them (size, JSON depth),
linearly and without recursion?"""

import json
import time

from autograder.grading.intake.bounds import MAX_DEPTH, json_depth, json_problem


def test_depth_counts_brackets_outside_strings():
    assert json_depth(b'{"a": [1, {"b": "[[[[{{{{"}]}') == 3
    assert json_depth(b'"\\"[[[["') == 0 and json_depth(b"") == 0


def test_a_million_levels_are_one_problem_line_quickly():
    started = time.monotonic()
    problem = json_problem(b"[" * 1_000_000 + b"]" * 1_000_000)
    assert problem.startswith("JSON nested 1000000 levels deep") and time.monotonic() - started < 5


def test_a_notebook_within_its_bounds_passes():
    assert json_problem(json.dumps({"cells": [{"outputs": [{"data": {"a": [[1]]}}]}]}).encode()) == ""
    assert json_problem(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) == "not JSON of a notebook (not an object)"
    assert json_problem(b'{"cells": [') == "not JSON: JSONDecodeError"


def test_millions_of_objects_are_refused_before_they_are_built():
    """16 MiB of `{},` parse into 5.6 million dicts (430 MB): is it one line, counted on the bytes?"""
    problem = json_problem(b'{"a": [' + b"{}," * 5_000_000 + b"{}]}")
    assert problem == "JSON of 5000003 objects and arrays (at most 200000)"  # the outer object and array too


def test_the_shape_is_the_same_whatever_the_chunks_and_escapes(monkeypatch):
    """Is the count the same as a plain reading's, with strings holding brackets, quotes and runs of
    backslashes, whichever bytes the chunks end on?"""
    import random
    import re

    from autograder.grading.intake import bounds

    def plain(data: bytes) -> tuple[int, int]:
        depth = deepest = containers = 0
        for byte in re.sub(rb'"(?:[^"\\]|\\.)*"', b"", data, flags=re.DOTALL):
            depth += byte in b"[{"
            containers += byte in b"[{"
            depth -= byte in b"]}"
            deepest = max(deepest, depth)
        return deepest, containers

    def value(rng, level=0):
        if level > 5 or rng.random() < 0.3:
            return rng.choice(['a"b', "[{", "\\", '\\"[', '\\\\"', "x" * rng.randint(0, 5), 3, None])
        if rng.random() < 0.5:
            return [value(rng, level + 1) for _ in range(rng.randint(0, 4))]
        return {rng.choice(["k[", 'k"', "k\\", "k"]) + str(i): value(rng, level + 1) for i in range(rng.randint(0, 4))}

    rng = random.Random(7)
    for chunk in (1, 2, 3, 7, 1 << 20):
        monkeypatch.setattr(bounds, "_CHUNK", chunk)
        for _ in range(100):
            data = json.dumps(value(rng)).encode()
            assert bounds.json_shape(data) == plain(data), (chunk, data)
