"""Is the demo class built from solutions/ whatever a learner did to exercises/?"""

import shutil

import nbformat

from autograder.grading.judge.assemble import grade_id, is_answer
from autograder.grading.runs.demo import build_demo_class, solution_answer
from autograder.lessons import COURSE_ROOT


def test_the_blank_student_stays_blank_after_a_learner_answered_in_exercises(tmp_path):
    """A learner who works in exercises/ saves answers (and outputs) there: does the demo class's
    blank student still submit only the release's stubs, and nobody the learner's outputs?"""
    course = tmp_path / "course"
    shutil.copytree(COURSE_ROOT / "solutions", course / "solutions")
    shutil.copytree(COURSE_ROOT / "exercises", course / "exercises")
    name = "ex01_graph"
    source = nbformat.read(course / "solutions" / name / f"{name}.ipynb", as_version=4)
    solved = {grade_id(c): solution_answer(c.source) for c in source.cells if is_answer(c)}
    release_path = course / "exercises" / name / f"{name}.ipynb"
    release = nbformat.read(release_path, as_version=4)
    stubs = {grade_id(c): c.source for c in release.cells if is_answer(c)}
    for cell in release.cells:
        if is_answer(cell):
            cell.source = solved[grade_id(cell)]
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", text="a learner's output\n")]
    nbformat.write(release, release_path)

    build_demo_class(tmp_path / "demo", root=course)

    blank = nbformat.read(tmp_path / "demo" / "blank" / name / f"{name}.ipynb", as_version=4)
    assert {grade_id(c): c.source for c in blank.cells if is_answer(c)} == stubs
    assert all("NotImplementedError" in text for text in stubs.values())
    for path in (tmp_path / "demo").glob(f"*/{name}/{name}.ipynb"):
        notebook = nbformat.read(path, as_version=4)
        assert not [c for c in notebook.cells if c.cell_type == "code" and c.outputs]


def test_the_readme_gives_the_demo_class_its_true_size(tmp_path):
    """Does the README's description of the demo class give as many students and submissions as
    build_demo_class (what `grade` with no SUBMITTED grades) makes, and the assignments each
    hands in?"""
    build_demo_class(tmp_path / "demo")
    submissions = sorted(p.relative_to(tmp_path / "demo").parts[:2] for p in (tmp_path / "demo").glob("*/*/*.ipynb"))
    students = {s for s, _ in submissions}
    assignments = {a for _, a in submissions}
    readme = " ".join((COURSE_ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"It has {len(students)} students and {len(submissions)} submissions" in readme
    everything = [s for s in students if sum(who == s for who, _ in submissions) == len(assignments)]
    assert sorted(everything) == ["blank", "correct"]
    assert f"hand in all {len(assignments)} assignments, each other student one)" in readme
    assert len(submissions) == 2 * len(assignments) + len(students) - 2
