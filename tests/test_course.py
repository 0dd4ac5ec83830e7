"""Does the course hold together: do the solutions pass their own hidden tests, does a blank
release score 0, does each typical mistake get partial marks and a diagnosis that names it, is
exercises/ generated from solutions/, and do plain nbgrader commands work on the course?"""

import copy
import csv
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.grading.judge.assemble import is_test
from autograder.grading.judge.grade_one import solution_records
from autograder.grading.mistakes import MISTAKES
from autograder.grading.nbgrader_glue.release import stale
from autograder.grading.runs.batch import grade_class, load_sources
from autograder.grading.runs.demo import build_demo_class
from autograder.grading.sandbox.container import Sandbox
from autograder.grading.sandbox.limits import Limits
from autograder.lessons import COURSE_ROOT
from tests.files import clone_files

from .grading.conftest import require_sandbox

MISTAKE_CASES = [(student, assignment) for assignment, students in MISTAKES.items() for student in students]


@pytest.fixture(scope="module")
def sandbox():
    """One grading sandbox for the module (skipped where bubblewrap cannot run, failed instead
    when COURSE_REQUIRE_SANDBOX is set)."""
    require_sandbox()
    with Sandbox(Limits()) as box:
        yield box


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo class, built and graded once: (expected, rows by (student, assignment), out)."""
    require_sandbox()
    tmp = tmp_path_factory.mktemp("demo")
    expected = build_demo_class(tmp / "submitted")
    rows = grade_class(tmp / "submitted", tmp / "out", COURSE_ROOT / "solutions", jobs=2, progress=False)
    return expected, {(r["student_id"], r["assignment_id"]): r for r in rows}, tmp / "out"


def test_every_solution_passes_its_hidden_tests(demo):
    """Does the student who submits the solutions get full marks on every assignment?"""
    _, rows, _ = demo
    for assignment in MISTAKES:
        row = rows[("correct", assignment)]
        assert row["status"] == "graded" and row["score"] == row["max_score"] != "0", row


def test_unchanged_release_scores_zero(demo):
    """Does an untouched release score 0 without crashing the grader?"""
    _, rows, _ = demo
    for assignment in MISTAKES:
        row = rows[("blank", assignment)]
        assert row["status"] == "graded" and row["score"] == "0", row


@pytest.mark.parametrize("student,assignment", MISTAKE_CASES)
def test_typical_mistake_gets_partial_marks_and_a_named_diagnosis(demo, student, assignment):
    """Does each typical mistake fail exactly its question, with feedback naming the mistake?"""
    expected, rows, out = demo
    row = rows[(student, assignment)]
    fails = expected[(student, assignment)]["fails"]
    assert 0 < float(row["score"]) < float(row["max_score"]), row
    assert set(row["failed"].split()) == set(fails), row
    page = html.unescape((out / "feedback" / student / f"{assignment}.html").read_text(encoding="utf-8"))
    for phrase in fails.values():
        assert phrase in page
    assert "BEGIN HIDDEN TESTS" not in page


def test_exercises_are_generated_from_solutions():
    """Is every notebook in exercises/ what nbgrader generates from solutions/ now?"""
    assert stale() == [], "run: python -m autograder release"


PLAIN_ASSIGNMENT = "ex01_graph"  # the assignment the README's plain nbgrader steps name


def readme_instructor_block() -> str:
    """The README's shell block of plain nbgrader steps (the ```bash block that runs autograde)."""
    text = (COURSE_ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```bash\n(.*?)```", text, re.DOTALL) if "nbgrader autograde" in b]
    assert blocks, "README.md has no ```bash block with the plain nbgrader steps"
    return blocks[0]


def clean_clone(dest: Path) -> Path:
    """What a fresh clone holds (tracked files, plus new files not ignored), with .venv linked to
    the environment running the tests."""
    for rel in clone_files(COURSE_ROOT):
        if (COURSE_ROOT / rel).is_file() and not (COURSE_ROOT / rel).is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(COURSE_ROOT / rel, dest / rel)
    (dest / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return dest


def careless(notebook: nbformat.NotebookNode, tampered: str) -> nbformat.NotebookNode:
    """The correct notebook with the locked check cell ``tampered`` edited by hand and the first
    answered function wrapped so that it makes PyTorch warn each time the checks call it."""
    nb = copy.deepcopy(notebook)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == tampered)
    cell.source = "# the learner's note in a locked cell\n" + cell.source
    answer = next(
        c
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("solution") and re.search(r"^def (\w+)", c.source, re.MULTILINE)
    )
    name = re.search(r"^def (\w+)", answer.source, re.MULTILINE).group(1)
    answer.source += (
        f"\n\n_answer = {name}\n\ndef {name}(*args, **kwargs):\n"
        "    torch.tensor(torch.ones(1))  # UserWarning: copy-constructing a tensor\n"
        f"    return _answer(*args, **kwargs)\n"
    )
    return nb


def page_text(page: str) -> str:
    """What a browser shows of an HTML page: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_exercises_open_unchanged_in_jupyterlab():
    """Does every exercise (source and release) carry the kernelspec and language_info the lessons'
    kernel wrote? JupyterLab rewrites both when they differ from its kernel's, so an exercise with
    nbgrader's bare "Python 3" opened as unsaved before the learner typed anything."""
    lesson = nbformat.read(COURSE_ROOT / "notebooks" / "01_dynamic_graph.ipynb", as_version=4).metadata
    for path in sorted((COURSE_ROOT / "solutions").glob("ex*/*.ipynb")) + sorted(
        (COURSE_ROOT / "exercises").glob("ex*/*.ipynb")
    ):
        meta = nbformat.read(path, as_version=4).metadata
        for key in ("kernelspec", "language_info"):
            assert meta.get(key) == lesson[key], (path.relative_to(COURSE_ROOT), key, meta.get(key))


def test_readme_plain_nbgrader_steps_grade_a_class_from_a_clean_clone(tmp_path):
    """Do the README's plain nbgrader commands, run as written in a fresh clone, grade a correct,
    a wrong, a blank and a careless submission (a PyTorch warning, a locked cell edited) as the
    solution's points say, warn about changed checksums only for the edited cell, write grades.csv
    where the README says, and give feedback pages that hold no hidden-test line, load nothing
    from the network and show the maths as MathML?"""
    block = readme_instructor_block()
    clone = clean_clone(tmp_path / "course")
    assignment = PLAIN_ASSIGNMENT
    name, source = load_sources(clone / "solutions")[assignment]
    points = {
        c.metadata.nbgrader["grade_id"]: float(c.metadata.nbgrader["points"])
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("grade")
    }
    tampered = next(c.metadata.nbgrader["grade_id"] for c in source.cells if is_test(c))
    expected = build_demo_class(tmp_path / "demo")
    wrong = next(s for s in MISTAKES[assignment])
    submissions = {"correct": "correct", "blank": "blank", "wrong": wrong}
    where = f"submitted/<student_id>/{assignment}/{name}"
    assert where in block, f"the README should say where submissions go: {where}"
    for student, demo_student in submissions.items():
        target = clone / "submitted" / student / assignment / name
        target.parent.mkdir(parents=True)
        shutil.copy2(tmp_path / "demo" / demo_student / assignment / name, target)
    (clone / "submitted" / "careless" / assignment).mkdir(parents=True)
    correct = nbformat.read(clone / "submitted" / "correct" / assignment / name, as_version=4)
    nbformat.write(careless(correct, tampered), clone / "submitted" / "careless" / assignment / name)

    run = subprocess.run(["bash", "-e", "-c", block], cwd=clone, capture_output=True, text=True)
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-4000:]
    assert re.findall(r"Attribute 'checksum' for cell (\S+) has changed", log) == [tampered], log[-4000:]

    with open(clone / "grades.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f) if r["assignment"] == assignment}
    full = sum(points.values())
    lost = sum(points[g] for g in expected[(wrong, assignment)]["fails"])
    want = {"correct": full, "careless": full, "blank": 0.0, "wrong": full - lost}
    assert {s: float(r["score"]) for s, r in rows.items()} == want, rows
    assert all(float(r["max_score"]) == full for r in rows.values()), rows

    secret = {
        line.strip()
        for cell in source.cells
        for region in re.findall(
            r"BEGIN HIDDEN TESTS.*?\n(.*?)^[^\n]*END HIDDEN TESTS", cell.source, re.DOTALL | re.MULTILINE
        )
        for line in region.splitlines()
        if re.search(r"\w", line)
    }
    assert secret, "the assignment should have hidden tests"
    for student in submissions.keys() | {"careless"}:
        submitted = nbformat.read(clone / "submitted" / student / assignment / name, as_version=4)
        public = {line.strip() for cell in submitted.cells for line in cell.source.splitlines()}
        page = (clone / "feedback" / student / assignment / name.replace(".ipynb", ".html")).read_text(encoding="utf-8")
        text = page_text(page)
        leaked = sorted(line for line in secret - public if line in text)
        assert not leaked, (student, leaked)
        assert "<script" not in page and not re.search(r"(src|href)=\"https?:", page), student
        assert "<math" in page and "$$" not in text, student
    wrong_page = page_text(
        (clone / "feedback" / "wrong" / assignment / name.replace(".ipynb", ".html")).read_text(encoding="utf-8")
    )
    for phrase in expected[(wrong, assignment)]["fails"].values():
        assert phrase in wrong_page


@pytest.mark.parametrize("assignment", sorted(MISTAKES))
def test_every_test_cell_reports_values_for_the_outside_recheck(sandbox, assignment):
    """Does every test cell of the solution report at least one checked value, so the grader can
    re-check it outside the learner's process (a cell that only finishes proves nothing)?"""
    _, source = load_sources(COURSE_ROOT / "solutions")[assignment]
    records = solution_records(source, sandbox, Limits())
    assert records and all(records.values()), {k: len(v) for k, v in records.items()}
