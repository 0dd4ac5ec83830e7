"""Do saved references (refs.json) grade a class exactly as running the solutions does, and are
references that no longer match their solution refused with how to rebuild them?"""

import json

import nbformat
import pytest

from autograder.__main__ import main
from autograder.grading.runs import saved_references
from autograder.grading.runs.batch import grade_class
from autograder.grading.runs.saved_references import SavedReferences, StaleReferences, build, write

from ..classes import SMALL_CLASS, outputs, write_class
from ..conftest import needs_sandbox


@pytest.fixture
def small_class(source, tmp_path):
    return write_class(source, tmp_path, SMALL_CLASS)


@needs_sandbox
def test_a_class_graded_with_saved_references_is_graded_as_with_solution_runs(small_class, tmp_path):
    """Do `references --out` then `grade --references` give the same grades.csv and feedback
    pages as a `grade` run that runs the solutions, without the solutions running again?"""
    solutions, submitted = small_class
    refs = tmp_path / "refs.json"
    assert main(["references", "--solutions", str(solutions), "--out", str(refs), "--jobs", "1"]) == 0
    args = ["grade", str(submitted), "--solutions", str(solutions), "--jobs", "2"]
    assert main([*args, "--out", str(tmp_path / "run")]) == 0
    calls = []
    original = saved_references.SavedReferences.records
    saved_references.SavedReferences.records = lambda self, a: calls.append(a) or original(self, a)
    try:
        assert main([*args, "--out", str(tmp_path / "saved"), "--references", str(refs)]) == 0
    finally:
        saved_references.SavedReferences.records = original
    assert sorted(set(calls)) == ["ex01", "ex02"]  # read (and checked before grading), never run
    assert outputs(tmp_path / "saved") == outputs(tmp_path / "run")
    assert "bob,ex01,0,2,graded,q1_check" in (tmp_path / "saved" / "grades.csv").read_text()


@needs_sandbox
def test_saved_references_are_json_with_each_solutions_hash_and_the_course_version(small_class):
    """Is the file plain JSON (no pickle) naming each solution's SHA-256 and the grader's version,
    and do its records read back as the solution's run gave them?"""
    solutions, _ = small_class
    document = json.loads(json.dumps(build(solutions, jobs=1)))
    assert document["course_version"] == saved_references.course_version()
    entry = document["assignments"]["ex01"]
    assert entry["sha256"] == saved_references.notebook_hash(solutions / "ex01" / "ex01.ipynb")
    assert [r["name"] for r in entry["records"]["q1_check"]] == ["f() is not None", "f()"]


@needs_sandbox
def test_references_of_a_changed_solution_refuse_to_grade(small_class, tmp_path, capsys):
    """After the instructor edits a solution, does `grade --references` refuse, name the
    assignment, say how to rebuild, and write nothing?"""
    solutions, submitted = small_class
    refs = tmp_path / "refs.json"
    write(build(solutions, jobs=1), refs)
    nb = nbformat.read(solutions / "ex02" / "ex02.ipynb", as_version=4)
    nb.cells[1].source += " (edited)"
    nbformat.write(nb, solutions / "ex02" / "ex02.ipynb")
    out = tmp_path / "out"
    args = ["grade", str(submitted), "--solutions", str(solutions), "--out", str(out), "--references", str(refs)]
    assert main(args) == 2
    said = capsys.readouterr().err
    assert "the solution of ex02" in said and "python -m autograder references --out" in said
    assert not out.exists()
    with pytest.raises(StaleReferences, match="changed since"):
        grade_class(submitted, out, solutions, jobs=1, progress=False, references=SavedReferences.load(refs, solutions))


def test_references_from_another_grader_or_not_references_at_all_are_refused(tmp_path):
    """Is a file saved by a grader whose records code differs, or a file that is not JSON, refused
    with how to rebuild it?"""
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({"format": saved_references.FORMAT, "course_version": "0.0.1", "assignments": {}}))
    with pytest.raises(StaleReferences, match=r"saved by grader '0\.0\.1'.*rebuild them"):
        SavedReferences.load(refs, tmp_path)
    refs.write_bytes(b"\x80not json")
    with pytest.raises(StaleReferences, match="not a references file"):
        SavedReferences.load(refs, tmp_path)
    version = saved_references.course_version()
    refs.write_text(json.dumps({"format": saved_references.FORMAT, "course_version": version}))
    with pytest.raises(StaleReferences, match="no references for ex01"):
        SavedReferences.load(refs, tmp_path).check(["ex01"])
