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
