"""Test cells without their reference code: what the class grader sends to a learner's process.

An exercise's test cell marks the code that computes expected values off in a region::

    ### BEGIN REFERENCE
    def reference(w, b, x, y):
        ...
    ### END REFERENCE

In a learner's notebook and under plain nbgrader the markers are comments and the region runs.
The class grader sends the cell with each region replaced by its imports (kept: no secret, and a
name a learner's answer may use too) and one line that binds every other name the region defines to
:data:`autograder.check.WITHHELD` (NOTE 1 in ``autograder/check/__init__.py``), so a
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
    statements = ast.parse(textwrap.dedent(body)).body
    imports = [node for node in statements if isinstance(node, (ast.Import, ast.ImportFrom))]
    imported = {(alias.asname or alias.name).split(".")[0] for node in imports for alias in node.names}
    # An import is no secret (a learner's process may import anything), and its name may be one the learner's
    # own answer uses (copy, math, peak_live_bytes): bound to WITHHELD, it would break a right answer.
    lines = [f"{indent}{ast.unparse(node)}  # an import of a reference region, kept\n" for node in imports]
    names = [name for name in bound_names(body) if name not in imported]
    if names:
        binding = ", ".join(f"WITHHELD as {name}" for name in names)
        lines.append(f"{indent}from autograder.check import {binding}  # reference code withheld by the grader\n")
    return "".join(lines) or f"{indent}pass  # reference code withheld by the grader\n"


def withhold(source: str) -> str:
    """``source`` with every REFERENCE region replaced by names bound to ``WITHHELD``.

    Raises:
        SyntaxError: a region is not valid Python on its own (an authoring error; a test checks
            every exercise).
    """
    return REFERENCE.sub(_replacement, source)
