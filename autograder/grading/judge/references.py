"""Test cells without their reference code: what the class grader sends to a learner's process.

An exercise's test cell marks the code that computes expected values off in a region::

    ### BEGIN REFERENCE
    def reference(w, b, x, y):
        ...
    ### END REFERENCE

In a learner's notebook and under plain nbgrader the markers are comments and the region runs.
The class grader sends the cell with each region replaced by one line that binds every name the
region defines to :data:`autograder.check.WITHHELD` (NOTE 1 in ``autograder/check/__init__.py``), so a
learner's process never holds reference code nor a reference value; the grader judges what the
checks received against the records of the instructor's solution run.
"""

from __future__ import annotations

import ast
import re
import textwrap

__all__ = ["REFERENCE", "bound_names", "withhold"]

REFERENCE = re.compile(
    r"^([ \t]*)### BEGIN REFERENCE[^\n]*\n(.*?)^[ \t]*### END REFERENCE[^\n]*(\n|\Z)", re.MULTILINE | re.DOTALL
)


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [name for element in node.elts for name in _targets(element)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return []  # an attribute or subscript binds no new name


def bound_names(code: str) -> list[str]:
    """The names a block of code binds at its own level (defs, classes, assignments, imports,
    loop and ``with`` targets), in order, each once.

    Raises:
        SyntaxError: the block is not valid Python on its own.
    """
    names: list[str] = []
    for node in ast.parse(textwrap.dedent(code)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found = [node.name]
        elif isinstance(node, ast.Assign):
            found = [n for target in node.targets for n in _targets(target)]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For)):
            found = _targets(node.target)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found = [(alias.asname or alias.name).split(".")[0] for alias in node.names]
        elif isinstance(node, ast.With):
            found = [n for item in node.items if item.optional_vars for n in _targets(item.optional_vars)]
        else:
            found = []
        names.extend(n for n in found if n not in names)
    return names


def _replacement(match: re.Match) -> str:
    indent, body = match.group(1), match.group(2)
    names = bound_names(body)
    if not names:
        return f"{indent}pass  # reference code withheld by the grader\n"
    binding = ", ".join(f"WITHHELD as {name}" for name in names)
    return f"{indent}from autograder.check import {binding}  # reference code withheld by the grader\n"


def withhold(source: str) -> str:
    """``source`` with every REFERENCE region replaced by names bound to ``WITHHELD``.

    Raises:
        SyntaxError: a region is not valid Python on its own (an authoring error; a test checks
            every exercise).
    """
    return REFERENCE.sub(_replacement, source)
