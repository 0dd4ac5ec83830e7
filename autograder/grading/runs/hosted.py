"""One notebook for hosted graders: ``python -m autograder grade-one NOTEBOOK --assignment ID``.

Gradescope and PrairieLearn grade one submission per container: the platform puts the learner's
files in a folder, runs a script, and reads one JSON file back. :func:`grade_single` grades one
notebook as a class run grades it (same sandbox, same references, same score); the results are
written in each platform's format:

* Gradescope (``run_autograder``: ``/autograder/submission`` in, ``/autograder/results/results.json``
  out): ``score``, and one test per question with ``name``, ``score``, ``max_score``, ``output``
  and ``visibility``.
* PrairieLearn's external grader (``/grade/student`` and ``/grade/data/data.json`` in,
  ``/grade/results/results.json`` out): ``score`` in [0, 1], ``gradable``, and one test per
  question with ``points`` and ``max_points``.

A question's output is its feedback message, except when the check that failed is one of the
question's hidden tests: then it only says that a hidden test failed (the points still show).
The scripts for both platforms are in ``deploy/gradescope`` and ``deploy/prairielearn``.
"""

from __future__ import annotations

import ast
import textwrap
from contextlib import nullcontext
from pathlib import Path

from .. import status
from ..judge.assemble import grade_id, is_test
from ..judge.grade_one import QuestionResult, Result, SolutionFails, grade_notebook, solution_records, unscored
from ..out.redact import split_hidden
from ..sandbox.container import Sandbox, extras_for
from ..sandbox.limits import Limits
from .batch import load_sources

__all__ = ["HIDDEN_OUTPUT", "find_notebook", "grade_single", "hidden_check_names", "gradescope", "prairielearn"]

HIDDEN_OUTPUT = "A hidden test of this question failed; what it checked is not shown."
_NOT_GRADABLE = (status.NO_NOTEBOOK, status.LINKED)


def find_notebook(path: Path, name: str) -> Path | None:
    """The notebook to grade: ``path`` itself, or in a folder the one named ``name`` (as in the
    source), else the only ``.ipynb`` there (None: none, or several)."""
    if not path.is_dir():
        return path if path.exists() or path.is_symlink() else None
    notebooks = sorted(path.glob("*.ipynb"))
    return path / name if (path / name).exists() else (notebooks[0] if len(notebooks) == 1 else None)


def grade_single(
    notebook: Path,
    assignment: str,
    solutions: Path,
    references=None,
    limits: Limits = Limits(),
    sandboxed: bool = True,
    student_id: str = "learner",
    sandbox: Sandbox | None = None,
) -> tuple[Result, object]:
    """Grade one submitted notebook (or the notebook in a folder, :func:`find_notebook`) of
    ``assignment`` in one sandbox, as ``batch.grade_class`` grades it in a class.

    Args:
        references: ``saved_references.SavedReferences`` (refs.json): the solution does not run.
        sandbox: a started sandbox to grade in (the caller closes it; ``grade-one`` starts it
            while this process imports torch); None: one of its own, closed before returning.

    Returns:
        ``(Result, source notebook)``.

    Raises:
        KeyError: ``solutions`` has no such assignment (the message lists those it has).
        StaleReferences: ``references`` were not saved from this solution.
        SandboxError: the sandbox could not start.
    """
    sources = load_sources(solutions) if solutions.is_dir() else {}
    if assignment not in sources:
        raise KeyError(f"no assignment {assignment!r} in {solutions} (it has: {', '.join(sources) or 'none'})")
    name, source = sources[assignment]
    path = find_notebook(notebook, name)
    if references is not None:  # refuse stale references before the sandbox starts
        references.check([assignment])
    own = None if sandbox is not None else Sandbox(limits, sandboxed, extras_for(c.source for c in source.cells))
    with own or nullcontext(sandbox) as sandbox:
        try:
            expected = references.records(assignment) if references else solution_records(source, sandbox, limits)
        except SolutionFails as error:
            result = unscored(source, student_id, assignment, status.not_graded(str(error)))
        else:
            if path is not None and (path.is_symlink() or notebook.is_symlink()):  # as find_submissions refuses
                result = unscored(source, student_id, assignment, status.LINKED)
            else:
                result = grade_notebook(path, source, expected, student_id, assignment, sandbox, limits)
    if not sandboxed:
        result.status = status.unsandboxed(result.status)
    return result, source


def _check_names(code: str) -> set[str]:
    """The literal names given to ``check.*`` calls in ``code`` (the third argument or
    ``name=``); a block that does not parse on its own gives none."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "check"):
            continue
        given = [k.value for k in node.keywords if k.arg == "name"] + node.args[2:3]
        names.update(g.value for g in given if isinstance(g, ast.Constant) and isinstance(g.value, str))
    return names


def hidden_check_names(source) -> dict[str, set[str]]:
    """``{test grade_id: names of the checks made only in its hidden-test regions}``."""
    found = {}
    for cell in source.cells:
        if is_test(cell):
            visible, hidden = split_hidden(cell.source, note=None)
            found[grade_id(cell)] = _check_names("\n".join(hidden[1:-1])) - _check_names("\n".join(visible))
    return found


def _output(result: Result, question: QuestionResult, hidden: set[str]) -> str:
    failure = result.failure(question)
    if not failure:
        return "All checks passed."
    if question.message and any(question.message.startswith(name) for name in hidden):
        return HIDDEN_OUTPUT
    return failure


def _name(question: QuestionResult) -> str:
    number = question.grade_id.removesuffix("_check").removeprefix("q")
    return f"Question {number} ({question.grade_id})" if number.isdigit() else question.grade_id


def gradescope(result: Result, source) -> dict:
    """Gradescope's ``results.json`` for ``result``: the total ``score``, and per question a test
    with ``name``, ``score``, ``max_score``, ``output`` and ``visibility``."""
    hidden = hidden_check_names(source)
    return {
        "score": result.score,
        "output": f"{result.assignment_id}: {result.score:g} / {result.max_score:g} points. Status: {result.status}.",
        "visibility": "visible",
        "tests": [
            {
                "name": _name(q),
                "score": q.score,
                "max_score": q.points,
                "output": _output(result, q, hidden.get(q.grade_id, set())),
                "visibility": "visible",
            }
            for q in result.questions
        ],
    }


def prairielearn(result: Result, source) -> dict:
    """PrairieLearn's external-grader ``results.json``: ``score`` as a fraction of the points,
    ``gradable`` false when there was no notebook to grade (the attempt is then not counted), and
    per question a test with ``points`` and ``max_points``."""
    hidden = hidden_check_names(source)
    gradable = result.status.removesuffix(" (no sandbox)") not in _NOT_GRADABLE
    results = {
        "gradable": gradable,
        "score": result.score / result.max_score if result.max_score else 0.0,
        "message": f"{result.score:g} / {result.max_score:g} points. Status: {result.status}.",
        "tests": [
            {
                "name": _name(q),
                "points": q.score,
                "max_points": q.points,
                "message": _output(result, q, hidden.get(q.grade_id, set())),
            }
            for q in result.questions
        ],
    }
    if not gradable:
        results["format_errors"] = [f"no notebook to grade ({result.status})"]
    return results
