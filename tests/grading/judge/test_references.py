"""Are references withheld from a learner's process, and do the exercises follow the REFERENCE convention?

``autograder.grading.judge.references.withhold`` replaces each ``### BEGIN REFERENCE`` ... ``### END
REFERENCE`` region of a test cell by names bound to ``check.WITHHELD``; the class grader judges what
the checks received against the solution run's records (AUTHORING.md, "Checks", rule 3).
"""

from __future__ import annotations

import ast
import functools
import os

import pytest

from autograder import check
from autograder.grading.judge.assemble import HIDDEN_TESTS, grade_id, is_read_only, is_test
from autograder.grading.judge.references import REFERENCE, bound_names, withhold

from ..inprocess import EXERCISES, blank_answers, grade, run, source


def run_cell(code: str) -> dict:
    """Execute code in a fresh namespace and return it."""
    namespace: dict = {}
    exec(compile(code, "<cell>", "exec"), namespace)
    return namespace


# --- withhold itself -------------------------------------------------------------------------------

CELL = """before = 1
### BEGIN REFERENCE
def reference(x):
    return x * 2
expected = reference(3)
### END REFERENCE
after = 2
"""


def test_a_region_becomes_names_bound_to_withheld():
    """Does a region's def and assignment become names bound to WITHHELD, the code around it kept?"""
    text = withhold(CELL)
    assert "x * 2" not in text and "reference(3)" not in text and "BEGIN REFERENCE" not in text
    namespace = run_cell(text)
    assert namespace["reference"] is check.WITHHELD and namespace["expected"] is check.WITHHELD
    assert (namespace["before"], namespace["after"]) == (1, 2)


def test_the_cell_runs_as_written_without_the_grader():
    """Do the markers stay plain comments, so a learner's notebook computes the references itself?"""
    assert run_cell(CELL)["expected"] == 6


def test_an_indented_region_keeps_its_indentation():
    """Does a region inside a function and inside an `if` become a line at the same indentation?"""
    code = (
        "def f():\n    a = 1\n    ### BEGIN REFERENCE\n    b = a + 1\n    ### END REFERENCE\n    return b\n"
        "if True:\n        ### BEGIN REFERENCE\n        c = 3\n        ### END REFERENCE\n        d = c\n"
    )
    namespace = run_cell(withhold(code))
    assert namespace["f"]() is check.WITHHELD and namespace["d"] is check.WITHHELD


def test_tuple_assignment_and_loop_targets_bind_every_name():
    """Are all names of a tuple, starred or nested assignment (and a loop's target) withheld?"""
    code = "### BEGIN REFERENCE\na, (b, *c) = 1, (2, 3, 4)\nfor i, j in [(5, 6)]:\n    k = 7\n### END REFERENCE\n"
    assert bound_names(code.split("\n", 1)[1].rsplit("###", 1)[0]) == ["a", "b", "c", "i", "j"]
    namespace = run_cell(withhold(code))
    assert all(namespace[name] is check.WITHHELD for name in "abcij")


def test_imports_in_a_region_are_kept_and_the_rest_withheld():
    """Is an import inside a region kept (a learner's answer may import the same name: ex08's
    peak_live_bytes, copy, math), at its indentation, while the names the region computes are withheld?"""
    code = (
        "import copy\ndef answer(x):\n    return copy.deepcopy(x)\n"
        "### BEGIN REFERENCE\nimport copy, os.path\nfrom autograder.memory import measure_saved as meter\n"
        "expected = meter\n### END REFERENCE\n"
        "if True:\n    ### BEGIN REFERENCE\n    import math\n    ### END REFERENCE\n"
    )
    text = withhold(code)
    namespace = run_cell(text)
    assert namespace["answer"]([1]) == [1] and namespace["os"].path is os.path and namespace["math"].pi > 3
    assert namespace["meter"].__name__ == "measure_saved" and namespace["expected"] is check.WITHHELD


def test_a_region_that_binds_nothing_becomes_pass():
    """Does a region without names (a print, say) vanish into a `pass` line?"""
    text = withhold("if True:\n    ### BEGIN REFERENCE\n    print('reference')\n    ### END REFERENCE\n")
    assert "print" not in text and "pass" in text
    run_cell(text)


def test_a_region_inside_hidden_tests():
    """Is a region inside hidden tests withheld in the graded cell, and gone with them from the release?"""
    code = (
        "x = 1\n### BEGIN HIDDEN TESTS\nif True:\n    ### BEGIN REFERENCE\n    hidden = x * 5\n"
        "    ### END REFERENCE\n    y = hidden\n### END HIDDEN TESTS\n"
    )
    text = withhold(code)
    assert "x * 5" not in text and "### BEGIN HIDDEN TESTS" in text
    assert run_cell(text)["y"] is check.WITHHELD
    assert "REFERENCE" not in HIDDEN_TESTS.sub("", code)


def test_every_region_of_a_cell_is_replaced():
    """Are two regions replaced separately, the code between them kept?"""
    code = "### BEGIN REFERENCE\na = 1\n### END REFERENCE\nb = 2\n### BEGIN REFERENCE\nc = 3\n### END REFERENCE\n"
    namespace = run_cell(withhold(code))
    assert namespace["a"] is namespace["c"] is check.WITHHELD and namespace["b"] == 2


def test_a_region_that_is_not_python_on_its_own_raises():
    """Is a region cut in the middle of a statement an authoring error (SyntaxError)?"""
    with pytest.raises(SyntaxError):
        withhold("x = (\n### BEGIN REFERENCE\n1)\n### END REFERENCE\n")


def test_withheld_values_reach_a_check_as_withheld():
    """Does a check whose expected value comes from a withheld reference (called, indexed) report,
    instead of judging, what it received?"""
    records = []
    check.report_to(records.append)
    try:
        namespace = run_cell(
            withhold("from autograder import check\n" + CELL + "check.value(6, reference(3)[0], 'six')\n")
        )
    finally:
        check.report_to(None)
    assert namespace["expected"] is check.WITHHELD
    assert [(r.name, r.received, r.withheld) for r in records] == [("six", 6, True)]


def test_a_checks_causes_from_a_withheld_reference_are_reported_too():
    """Do a tensor check's and a gradient check's ``causes`` (the factor each likely mistake gives,
    computed in a REFERENCE region) reach the record as withheld, in a moment, where dict() of the
    placeholder would never end?"""
    code = (
        "import torch\nfrom autograder import check\n### BEGIN REFERENCE\nwant = {'loss': torch.ones(()), "
        "'causes': {2.0: 'doubled'}}\n### END REFERENCE\n"
        "check.tensor(torch.ones(()), want['loss'], name='loss', causes=want['causes'])\n"
        "check.grads({'x': torch.ones(2)}, {'x': want['loss']}, causes=want['causes'])\n"
    )
    records = []
    check.report_to(records.append)
    try:
        run_cell(withhold(code))
    finally:
        check.report_to(None)
    assert [(r.name, r.withheld) for r in records] == [("loss", True), ("gradients", True)]
    assert all(r.options["causes"] is check.WITHHELD for r in records)


# --- the exercises ---------------------------------------------------------------------------------


def cells_of(exercise):
    """(grade_id, text) of each question of the exercise's source: its test cell's source, after the
    sources of the read-only cells right above it (its check helpers, collapsed: AUTHORING.md), which
    the grader withholds the same way."""
    found, helpers = [], []
    for cell in source(exercise).cells:
        if is_test(cell):
            found.append((grade_id(cell), "\n\n".join([*helpers, cell.source])))
        if cell.cell_type == "code":
            helpers = [*helpers, cell.source] if is_read_only(cell) and "_helpers" in (grade_id(cell) or "") else []
    return found


def test_a_questions_text_includes_its_helper_cells():
    """Is a question's text (what these tests read) its check helpers' cells and then its test cell?"""
    (gid, text), *_ = cells_of("ex01_graph")
    assert gid == "q1_check"
    assert text.index("def measured") < text.index("check.predictions")


@functools.cache
def solution_runs(exercise):
    """The solution's plain run (the grader's records) and its withheld run, in this process."""
    nb = source(exercise)
    return run(nb, withheld=False), run(nb, withheld=True)


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_test_cell_has_a_reference_region_and_parses_withheld(exercise):
    """Does every question mark its references off in at least one region (in its test cell or its
    check helpers), and is what the grader sends (regions withheld) valid Python without any region left?"""
    for gid, text in cells_of(exercise):
        assert REFERENCE.search(text), f"{exercise} {gid}: no REFERENCE region"
        withheld = withhold(text)
        ast.parse(withheld)
        assert "BEGIN REFERENCE" not in withheld and "END REFERENCE" not in withheld, f"{exercise} {gid}"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_test_cell_makes_a_withheld_check(exercise):
    """With its references withheld, does every test cell of the solution make at least one check whose
    expected value is withheld (evidence that only a real answer can give), and none fail in-process?"""
    plain, withheld = solution_runs(exercise)
    assert not plain.errors and not withheld.errors, (plain.errors, withheld.errors)
    for gid, _ in cells_of(exercise):
        assert any(record.withheld for record in withheld.records[gid]), f"{exercise} {gid}: nothing withheld"
        assert not any(record.withheld for record in plain.records[gid]), f"{exercise} {gid}"


_BUILTINS = {
    "len",
    "bool",
    "int",
    "float",
    "str",
    "repr",
    "abs",
    "min",
    "max",
    "sum",
    "sorted",
    "round",
    "list",
    "tuple",
    "set",
    "dict",
    "iter",
    "next",
    "print",
    "format",
    "any",
    "all",
    "enumerate",
    "zip",
}


def misuses(text: str) -> list[str]:
    """Uses outside the regions of a name a region binds (or of a name assigned from one) other than
    calling it, indexing it, reading an attribute or passing it on: computing with a reference there
    would need its value in the learner's process (AUTHORING.md, rule 3)."""
    tainted = {name for match in REFERENCE.finditer(text) for name in bound_names(match.group(2))}
    tree = ast.parse(withhold(text))
    parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: list[str] = []
    changed = True
    while changed:
        changed, found = False, []
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in tainted):
                continue
            top = node  # climb through calls, indexing, attributes and containers: the value is passed on
            while (
                (isinstance(parent.get(top), (ast.Call,)) and parent[top].func is top)
                or (isinstance(parent.get(top), (ast.Subscript, ast.Attribute)) and parent[top].value is top)
                or isinstance(parent.get(top), (ast.List, ast.Tuple))
                or (isinstance(parent.get(top), ast.Dict) and top in parent[top].values)
                or (isinstance(parent.get(top), (ast.DictComp,)) and parent[top].value is top)
                or (isinstance(parent.get(top), (ast.ListComp,)) and parent[top].elt is top)
            ):
                top = parent[top]
            up = parent.get(top)
            if isinstance(up, ast.keyword):
                up = parent[up]
            if isinstance(up, ast.Call) and top is not up.func:
                if isinstance(up.func, ast.Name) and up.func.id in _BUILTINS:
                    found.append(f"line {node.lineno}: {node.id} passed to {up.func.id}()")
            elif isinstance(up, ast.Assign) and all(isinstance(t, ast.Name) for t in up.targets):
                new = {t.id for t in up.targets} - tainted
                changed |= bool(new)
                tainted |= new
            elif not isinstance(up, (ast.Return, ast.Expr, ast.Lambda)):
                found.append(f"line {node.lineno}: {node.id} used in {type(up).__name__}")
    return found


def test_misuses_are_found():
    """Does the scan find arithmetic, comparison, formatting and unpacking of a reference, and accept
    calling, indexing and passing it on?"""
    region = "### BEGIN REFERENCE\nplain_peak = 10\nreference = dict\n### END REFERENCE\n"
    assert (
        misuses(
            region + "check.at_most(3, reference(a=plain_peak)['a'], 'peak')\nwant = reference()\n"
            "check.value(1, {'a': [want['b']]}, 'x')\n"
        )
        == []
    )
    for bad in [
        "limit = 0.6 * plain_peak",
        "if plain_peak: pass",
        "print(f'{plain_peak}')",
        "a, b = reference()",
        "n = len(reference())",
        "want = plain_peak\nok = want > 3",
        "for k in reference(): pass",
    ]:
        assert misuses(region + bad + "\n"), bad


@pytest.mark.parametrize("exercise", EXERCISES)
def test_references_are_only_called_indexed_or_passed_on(exercise):
    """Outside its regions, does every test cell use a reference only to reach a check (never compute
    with it, format it, test it or unpack it)?"""
    for gid, text in cells_of(exercise):
        assert misuses(text) == [], f"{exercise} {gid}"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_the_solution_passes_every_question_when_withheld(exercise):
    """Judged against its own plain run, as the grader judges a learner, does the solution run with its
    references withheld pass every question?"""
    plain, _ = solution_runs(exercise)
    assert grade(source(exercise), plain) == dict.fromkeys(plain.records, "")


@pytest.mark.parametrize("exercise", EXERCISES)
def test_the_blank_release_fails_every_question(exercise):
    """Do the release's unanswered stubs fail every question when graded that way?"""
    plain, _ = solution_runs(exercise)
    verdicts = grade(source(exercise), plain, blank_answers(exercise))
    assert all(verdicts.values()), {gid: "passed" for gid, why in verdicts.items() if not why}


# --- check cells a learner can read ----------------------------------------------------------------

MAX_CHECK_LINES = 12  # a test cell's visible lines: the docstring and the checks, nothing to scroll past


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_test_cell_shows_the_learner_only_a_few_lines(exercise):
    """Is every test cell, as the release shows it (hidden tests removed), at most a few lines long, its
    helpers and references in the collapsed check-helper cell above it?"""
    long = {
        grade_id(c): n
        for c in source(exercise).cells
        if is_test(c) and (n := len(HIDDEN_TESTS.sub("", c.source).strip().splitlines())) > MAX_CHECK_LINES
    }
    assert not long, f"{exercise}: test cells longer than {MAX_CHECK_LINES} visible lines: {long}"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_check_helper_cells_are_locked_collapsed_and_above_their_test(exercise):
    """Is every check-helper cell (qN_helpers) locked and read-only, collapsed in JupyterLab, free of
    hidden tests (nbgrader removes those from test cells only), right above its own test cell, and
    does it end by printing that it ran (JupyterLab shows no execution count beside a folded cell)?"""
    cells = [c for c in source(exercise).cells if c.cell_type == "code"]
    for index, cell in enumerate(cells):
        gid = grade_id(cell) or ""
        if not gid.endswith("_helpers"):
            continue
        assert is_read_only(cell), f"{exercise} {gid}: not a locked read-only cell"
        assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, f"{exercise} {gid}: not collapsed"
        assert "HIDDEN TESTS" not in cell.source, f"{exercise} {gid}: hidden tests belong in the test cell"
        below = cells[index + 1] if index + 1 < len(cells) else None
        assert below is not None and grade_id(below) == gid.replace("_helpers", "_check"), f"{exercise} {gid}"
        loaded = f'print("Question {gid.removeprefix("q").removesuffix("_helpers")}\'s check helpers loaded.")'
        assert cell.source.rstrip().endswith(f"\n{loaded}"), f"{exercise} {gid}: does not end with {loaded}"


def test_a_right_answer_that_imports_what_a_region_imports_gets_its_points():
    """ex08 q2 as a learner writes it, peak_live_bytes imported at the top of the answer cell (q2's check helpers
    import it again inside their REFERENCE region): sent as the class grader sends the cells, does it pass every
    check (before, the region's import rebound the learner's peak_live_bytes to WITHHELD: 0 of 3 points)?"""
    from tests.grading import inprocess

    answer = (
        "from autograder.live_memory import peak_live_bytes\n\n\n"
        "def best_segments(model, x):\n"
        "    def peak(s):\n"
        "        run = lambda: checkpoint_sequential(model, s, x, use_reentrant=False).sum().backward()  # noqa: E731\n"
        "        return peak_live_bytes(run, params=model.parameters())\n\n"
        "    peaks = {s: peak(s) for s in range(1, len(model) + 1)}\n"
        "    return min(peaks, key=lambda s: (peaks[s], s))\n"
    )
    exercise = "ex08_checkpoint"
    result = inprocess.grade(inprocess.source(exercise), inprocess.solution_run(exercise), {"q2_answer": answer})
    assert not [message for message in result.values() if message], result
