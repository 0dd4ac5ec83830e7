"""Does merging part gradebooks (one per shard) give the gradebook one run gives, idempotently,
with a shard's rerun replacing its own results and the instructor's manual grades kept?"""

import functools
from datetime import datetime

import nbgrader.api
import pytest
from nbgrader.api import Comment, Gradebook
from sqlalchemy import Column, MetaData, String, Table, Text

from autograder.__main__ import main
from autograder.grading.runs.merge import db_url, merge_gradebooks
from autograder.grading.runs.shards import shard_of
from autograder.grading.store.gradebook import STATUS_TABLE, _alembic_on_path

STUDENTS = ["ann", "bob", "cy", "dee", "eve"]
ASSIGNMENTS = ["ex01", "ex02"]


@pytest.fixture(autouse=True)
def alembic_once(monkeypatch):
    """nbgrader asks the alembic command for its schema version for each new gradebook (seconds
    each); these tests make a dozen, so they ask once."""
    _alembic_on_path()
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", _ALEMBIC_VERSION)


_ALEMBIC_VERSION = functools.cache(nbgrader.api.get_alembic_version)


def _status_table(metadata=None):
    return Table(
        STATUS_TABLE,
        metadata or MetaData(),
        Column("submission_id", String(32), primary_key=True),
        Column("status", Text, nullable=False),
    )


def score(student, assignment, run=1):
    return float((len(student) + len(assignment) * run) % 3)


def populate(path, pairs, run=1):
    """A gradebook as the store writes one: the structure, and per submission a score, the failure
    message as the test cell's autograder comment, a timestamp and the grader's status."""
    with Gradebook(db_url(str(path))) as gb:
        for a in ASSIGNMENTS:
            gb.add_assignment(a, duedate="2026-12-01 12:00:00")
            gb.add_notebook(a, a)
            gb.add_grade_cell("q1_check", a, a, max_score=2, cell_type="code")
            gb.add_solution_cell("q1_answer", a, a)
            gb.add_source_cell("q1_answer", a, a, cell_type="code", source="def f(): ...", checksum="abc")
        table = _status_table()
        table.create(gb.engine)
        statuses = []
        for s, a in pairs:
            gb.update_or_create_student(s, first_name=s.title())
            sub = gb.add_submission(a, s, timestamp=datetime(2026, 11, 30, 10, len(s)))
            grade = gb.find_grade("q1_check", a, a, s)
            grade.auto_score, grade.needs_manual_grade = score(s, a, run), False
            gb.db.add(Comment(cell_id=grade.cell_id, notebook=grade.notebook, auto_comment=f"{s} {a} run {run}"))
            gb.db.commit()
            statuses.append({"submission_id": sub.id, "status": f"graded {run}"})
        with gb.engine.begin() as c:
            c.execute(table.insert(), statuses)


def dump(path):
    """Everything a view or formgrader reads of a gradebook, keyed by names (ids differ)."""
    with Gradebook(db_url(str(path))) as gb:
        with gb.engine.connect() as c:
            status = {r.submission_id: r.status for r in c.execute(_status_table().select())}
        found = {}
        for a in gb.assignments:
            cells = sorted(
                (c.type, c.name, c.max_score if hasattr(c, "max_score") else None) for c in a.notebooks[0].grade_cells
            )
            found[a.name] = (
                str(a.duedate),
                cells,
                [(c.name, c.source, c.checksum) for c in a.notebooks[0].source_cells],
            )
            for sub in a.submissions:
                nb = sub.notebooks[0]
                found[(sub.student.id, a.name)] = (
                    sub.student.first_name,
                    str(sub.timestamp),
                    sorted((g.cell.name, g.auto_score, g.manual_score, g.needs_manual_grade) for g in nb.grades),
                    sorted((c.cell.type, c.cell.name, c.auto_comment, c.manual_comment) for c in nb.comments),
                    status[sub.id],
                )
        return found


@pytest.fixture
def parts(tmp_path):
    """The class graded whole, and as 3 shards each into its own part gradebook."""
    pairs = [(s, a) for s in STUDENTS for a in ASSIGNMENTS]
    populate(tmp_path / "whole.db", pairs)
    paths = []
    for k in range(3):
        paths.append(tmp_path / f"shard-{k}-of-3.db")
        populate(paths[-1], [(s, a) for s, a in pairs if shard_of(s, a, 3) == k])
    return pairs, paths


def test_merged_parts_are_the_gradebook_of_one_run(parts, tmp_path):
    """Does `merge PARTS... --db TARGET` give what one run's gradebook holds, and the same again
    when merged twice?"""
    pairs, paths = parts
    target = tmp_path / "gradebook.db"
    assert main(["merge", *map(str, paths), "--db", str(target)]) == 0
    assert dump(target) == dump(tmp_path / "whole.db")
    assert merge_gradebooks([str(p) for p in paths], str(target)) == len(pairs)
    assert dump(target) == dump(tmp_path / "whole.db")


def test_a_rerun_shard_replaces_its_own_results_and_manual_grades_stay(parts, tmp_path):
    """After a shard is rerun (its part rewritten with new scores) and merged again, are that
    shard's submissions replaced, every other one unchanged, and a manual score kept?"""
    pairs, paths = parts
    target = tmp_path / "gradebook.db"
    merge_gradebooks([str(p) for p in paths], str(target))
    with Gradebook(db_url(str(target))) as gb:
        s, a = next(p for p in pairs if shard_of(*p, 3) == 1)
        gb.find_grade("q1_check", a, a, s).manual_score = 1.5
        gb.db.commit()
    before = dump(target)
    paths[1].unlink()
    rerun = [p for p in pairs if shard_of(*p, 3) == 1]
    populate(paths[1], rerun, run=2)
    merge_gradebooks([str(paths[1])], str(target))
    after = dump(target)
    for pair in pairs:
        if pair in rerun:
            assert after[pair][2][0][1] == score(*pair, run=2) and after[pair][4] == "graded 2"
        else:
            assert after[pair] == before[pair]
    assert after[(s, a)][2][0][2] == 1.5


def test_a_missing_part_is_refused_and_nothing_is_merged(parts, tmp_path, capsys):
    """Is a part path that does not exist named, before anything is copied?"""
    _, paths = parts
    target = tmp_path / "gradebook.db"
    assert main(["merge", str(paths[0]), str(tmp_path / "shard-9.db"), "--db", str(target)]) == 2
    assert "no such part gradebook" in capsys.readouterr().err
    assert not target.exists()
