"""Does ``python -m autograder progress`` tell a learner where they stand across the exercises, as a
fresh run of each notebook shows it: solved, blank, a typical mistake, an answer that raises at
import, one that never ends (stopped at the cell time limit), one that worked only in the learner's
kernel; and does the record it leaves make the start page's table, with an edited notebook marked
"changed since checked"? With ``solutions/`` in the course folder it grades with the hidden tests;
without (a class image), with the visible checks only, and says which.

Each scenario is one exercise of the same learner's folder, so that one run of the command (one
warm fork server) checks them all, as it checks a learner's fourteen.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.check.standing import CHANGED, FAILED, NOT_ANSWERED, NOT_CHECKED, PASSED, RECORD, standing
from autograder.grading.judge.assemble import grade_id, is_answer
from autograder.grading.mistakes import MISTAKES
from autograder.grading.runs.demo import solution_answer

REPO = Path(__file__).resolve().parents[2]
MISTAKE = ("ex03_backward", "ex03-q2-no-retain")  # question 2 backs twice through a freed graph
CELL_TIMEOUT = "4"


def release(exercise: str) -> nbformat.NotebookNode:
    return nbformat.read(REPO / "exercises" / exercise / f"{exercise}.ipynb", as_version=4)


def solutions(exercise: str) -> dict[str, str]:
    """``{answer grade_id: the solution as a learner writes it}``."""
    source = nbformat.read(REPO / "solutions" / exercise / f"{exercise}.ipynb", as_version=4)
    return {grade_id(c): solution_answer(c.source) for c in source.cells if is_answer(c)}


def answered(exercise: str, answers: dict[str, str]) -> nbformat.NotebookNode:
    """The release of ``exercise`` with ``answers`` (by grade_id) written into its answer cells."""
    nb = release(exercise)
    for cell in nb.cells:
        if is_answer(cell) and grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    return nb


def save(mine: Path, exercise: str, nb: nbformat.NotebookNode) -> Path:
    path = mine / "exercises" / exercise / f"{exercise}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def learners_folder(course: Path) -> dict[str, str]:
    """Write the learner's exercises, one scenario each; ``{exercise: scenario}``."""
    mine = course / "my-work"
    save(mine, "ex01_graph", answered("ex01_graph", solutions("ex01_graph")))
    save(mine, "ex02_leaves", release("ex02_leaves"))
    exercise, mistake = MISTAKE
    save(mine, exercise, answered(exercise, {**solutions(exercise), **MISTAKES[exercise][mistake]["answers"]}))
    # An answer that imports what is not installed: its question fails with the import's error, the
    # other questions are still judged.
    broken = solutions("ex04_accumulation")
    broken["q2_answer"] = "import a_module_nobody_installed\n\n" + broken["q2_answer"]
    save(mine, "ex04_accumulation", answered("ex04_accumulation", broken))
    # An answer cell that never ends: stopped at the cell time limit, the rest graded without it.
    endless = solutions("ex05_inplace")
    endless["q1_answer"] = "while True:\n    pass\n\n" + endless["q1_answer"]
    save(mine, "ex05_inplace", answered("ex05_inplace", endless))
    # It worked in the learner's kernel: the answer uses a name from a cell since deleted, and the
    # saved output still shows the check's OK.
    session = solutions("ex06_grad_modes")
    assert "\n    return " in session["q1_answer"]
    session["q1_answer"] = session["q1_answer"].replace(
        "\n    return ", "\n    SCALE_FROM_A_DELETED_CELL\n    return ", 1
    )
    nb = answered("ex06_grad_modes", session)
    check = next(c for c in nb.cells if grade_id(c) == "q1_check")
    check.outputs = [nbformat.v4.new_output("stream", name="stdout", text="OK, it passed in my kernel\n")]
    save(mine, "ex06_grad_modes", nb)
    # A notebook cut off (an editor crashed while saving), and one the learner deleted (ex08_checkpoint).
    cut = mine / "exercises" / "ex07_memory" / "ex07_memory.ipynb"
    save(mine, "ex07_memory", release("ex07_memory"))
    cut.write_bytes(cut.read_bytes()[:3000])
    return {
        "ex07_memory": "cut off",
        "ex08_checkpoint": "deleted",
        "ex01_graph": "solved",
        "ex02_leaves": "blank",
        exercise: "mistake",
        "ex04_accumulation": "import",
        "ex05_inplace": "endless",
        "ex06_grad_modes": "session",
    }


def progress(course: Path, *extra: str) -> subprocess.CompletedProcess:
    """``python -m autograder progress`` as a learner types it, on the course folder ``course``."""
    command = [sys.executable, "-m", "autograder", "progress", "--course", str(course), "--cell-timeout", CELL_TIMEOUT]
    return subprocess.run([*command, *extra], capture_output=True, text=True, timeout=900, cwd=course)


def checked(course: Path, scenarios: dict[str, str], with_solutions: bool) -> tuple[Path, subprocess.CompletedProcess]:
    (course / "exercises").mkdir(parents=True)
    for exercise in scenarios:
        shutil.copytree(REPO / "exercises" / exercise, course / "exercises" / exercise)
        if with_solutions:
            shutil.copytree(REPO / "solutions" / exercise, course / "solutions" / exercise)
    done = progress(course)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return course / "my-work", done


@pytest.fixture(scope="module")
def hidden(tmp_path_factory):
    """The scenarios checked once with the hidden tests (``solutions/`` in the course folder)."""
    course = tmp_path_factory.mktemp("progress-hidden") / "course"
    scenarios = learners_folder(course)
    return (*checked(course, scenarios, with_solutions=True), scenarios)


@pytest.fixture(scope="module")
def visible(tmp_path_factory):
    """The first three scenarios checked in a class image: no ``solutions/``."""
    course = tmp_path_factory.mktemp("progress-visible") / "course"
    scenarios = {k: v for k, v in learners_folder(course).items() if v in ("solved", "blank", "mistake")}
    for extra in (course / "my-work" / "exercises").iterdir():
        if extra.name not in scenarios:
            shutil.rmtree(extra)
    return (*checked(course, scenarios, with_solutions=False), scenarios)


def by_scenario(mine: Path, scenarios: dict[str, str]) -> dict:
    record = json.loads((mine / RECORD).read_text())
    return {scenarios[e["exercise"]]: e for e in record["exercises"]}, record


def test_a_solved_exercise_passes_every_question_with_the_hidden_tests(hidden):
    mine, done, scenarios = hidden
    found, record = by_scenario(mine, scenarios)
    assert record["tests"] == "hidden"
    assert "with the hidden tests" in done.stdout
    solved = found["solved"]
    assert solved["status"] == "graded"
    assert {q["result"] for q in solved["questions"]} == {PASSED}
    assert sum(q["score"] for q in solved["questions"]) == sum(q["points"] for q in solved["questions"]) > 0


def test_a_blank_exercise_reads_not_answered_yet(hidden):
    mine, _, scenarios = hidden
    found, _ = by_scenario(mine, scenarios)
    blank = found["blank"]
    assert blank["questions"] and {q["result"] for q in blank["questions"]} == {NOT_ANSWERED}
    assert all(q["score"] == 0 for q in blank["questions"])


def test_a_typical_mistake_fails_its_question_with_the_first_line_of_its_cause(hidden):
    mine, done, scenarios = hidden
    found, _ = by_scenario(mine, scenarios)
    exercise, mistake = MISTAKE
    ((check_id, phrase),) = MISTAKES[exercise][mistake]["fails"].items()
    wrong = {f"q{q['number']}_check": q for q in found["mistake"]["questions"]}
    assert wrong[check_id]["result"] == FAILED and phrase in wrong[check_id]["cause"], wrong[check_id]
    assert "\n" not in wrong[check_id]["cause"]
    assert {q["result"] for gid, q in wrong.items() if gid != check_id} == {PASSED}
    assert f"Question {check_id[1]} ({wrong[check_id]['points']:g} points): failed: " in done.stdout


def test_an_answer_that_raises_at_import_fails_only_its_question(hidden):
    mine, _, scenarios = hidden
    found, _ = by_scenario(mine, scenarios)
    results = {q["number"]: q for q in found["import"]["questions"]}
    assert results[2]["result"] == FAILED
    assert "ModuleNotFoundError: No module named 'a_module_nobody_installed'" in results[2]["cause"], results[2]
    assert results[2]["cause"].startswith("its answer cell raised"), results[2]
    assert all(q["result"] == PASSED for n, q in results.items() if n != 2), results


def test_an_answer_that_never_ends_is_stopped_and_the_others_are_judged(hidden):
    mine, _, scenarios = hidden
    found, _ = by_scenario(mine, scenarios)
    endless = found["endless"]
    assert endless["status"] == "timeout in q1_answer", endless["status"]
    results = {q["number"]: q for q in endless["questions"]}
    assert results[1]["result"] == FAILED and results[1]["cause"].startswith("its answer cell was stopped"), results[1]
    assert f"{CELL_TIMEOUT} s" in results[1]["cause"], results[1]
    assert all(q["result"] == PASSED for n, q in results.items() if n != 1), results


def test_an_answer_that_worked_only_in_the_learners_kernel_fails_in_a_fresh_one(hidden):
    mine, _, scenarios = hidden
    found, _ = by_scenario(mine, scenarios)
    first = next(q for q in found["session"]["questions"] if q["number"] == 1)
    assert first["result"] == FAILED and "SCALE_FROM_A_DELETED_CELL" in first["cause"], first


def test_a_notebook_cut_off_or_deleted_is_said_so_and_the_others_are_checked(hidden):
    mine, done, scenarios = hidden
    found, _ = by_scenario(mine, scenarios)
    assert found["cut off"]["status"].startswith("unreadable: not a notebook's JSON"), found["cut off"]
    assert found["deleted"]["status"] == "no notebook"
    assert found["deleted"]["title"].startswith("Exercise 8"), "the title comes from the release"
    assert {q["result"] for q in found["cut off"]["questions"] + found["deleted"]["questions"]} == {FAILED}
    assert "Exercise 8: activation checkpointing: 0 of 10 points (no notebook)" in done.stdout


def test_the_table_is_the_record_and_an_edited_notebook_reads_changed_since_checked(hidden):
    mine, done, scenarios = hidden
    table = standing(mine)
    assert [e.exercise for e in table.exercises] == sorted(scenarios)
    assert not any(e.changed for e in table.exercises)
    assert table.text() in done.stdout
    path = mine / "exercises" / "ex01_graph" / "ex01_graph.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("print('one more try')"))
    nbformat.write(nb, path)
    after = {e.exercise: e for e in standing(mine).exercises}
    assert after["ex01_graph"].changed and not after["ex02_leaves"].changed
    assert f"({CHANGED})" in standing(mine).text().splitlines()[1]
    assert f"({CHANGED})" in standing(mine).html()


def test_an_exercise_never_checked_shows_its_questions_not_checked_yet(tmp_path):
    mine = tmp_path / "my-work"
    save(mine, "ex01_graph", release("ex01_graph"))
    table = standing(mine)
    (exercise,) = table.exercises
    assert exercise.title.startswith("Exercise 1")
    assert [q.result for q in exercise.questions] == [NOT_CHECKED] * len(exercise.questions) and exercise.questions
    assert "not checked yet" in table.heading()


def test_in_a_class_image_only_the_visible_checks_judge_and_it_says_so(visible):
    mine, done, scenarios = visible
    found, record = by_scenario(mine, scenarios)
    assert record["tests"] == "visible" and "with the checks you can see" in done.stdout
    assert {q["result"] for q in found["solved"]["questions"]} == {PASSED}
    assert {q["result"] for q in found["blank"]["questions"]} == {NOT_ANSWERED}
    exercise, mistake = MISTAKE
    ((check_id, phrase),) = MISTAKES[exercise][mistake]["fails"].items()
    wrong = next(q for q in found["mistake"]["questions"] if f"q{q['number']}_check" == check_id)
    assert wrong["result"] == FAILED and phrase in wrong["cause"], wrong


def test_checking_one_exercise_says_which_and_keeps_the_others(visible):
    """``--exercise ex01_graph``: does the closing line name the one exercise checked (not every
    exercise of the table), and does the table keep what the last whole check found of the others?"""
    mine, _, scenarios = visible
    before = {e.exercise: e for e in standing(mine).exercises}
    done = progress(mine.parent, "--visible-only", "--exercise", "ex01_graph")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"^Checked ex01_graph in [0-9.]+ s ", done.stdout, re.M), done.stdout
    after = {e.exercise: e for e in standing(mine).exercises}
    assert after.keys() == before.keys() == scenarios.keys()
    assert all(after[e] == before[e] for e in scenarios if e != "ex01_graph")


def test_an_unknown_exercise_is_refused_and_nothing_is_checked(visible):
    """``--exercise ex99``: does the command refuse (exit 2, argparse's status for a bad argument),
    name the exercises there are, and leave the record as it was?"""
    mine, _, _ = visible
    record = (mine / RECORD).read_bytes()
    done = progress(mine.parent, "--exercise", "ex01_graph", "--exercise", "ex99")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no exercise ex99" in done.stderr and "ex01_graph" in done.stderr and "Nothing was checked" in done.stderr
    assert done.stdout == "" and (mine / RECORD).read_bytes() == record


def test_a_learner_without_a_folder_is_told_how_to_make_it(tmp_path):
    done = progress(tmp_path)
    assert done.returncode == 1
    assert re.search(r"\./course lab makes your copies", done.stderr), done.stderr
