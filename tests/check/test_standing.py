"""Does the table of where a learner stands (``check.progress()``, from ``my-work/.progress.json``) say
what the record holds, mark an edited exercise, survive a broken record, and read well for everyone
(axe-core in Chromium)? The command that writes the record is tested in tests/commands/test_progress.py."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from autograder.check.standing import (
    CHANGED,
    FAILED,
    NOT_ANSWERED,
    NOT_CHECKED,
    PASSED,
    RECORD,
    ExerciseStanding,
    QuestionStanding,
    digest,
    read_record,
    standing,
    write_record,
)

REPO = Path(__file__).resolve().parents[2]
EXERCISES = ("ex01_graph", "ex02_leaves", "ex03_backward")


@pytest.fixture
def mine(tmp_path) -> Path:
    """A learner's folder with three released exercises."""
    for exercise in EXERCISES:
        shutil.copytree(REPO / "exercises" / exercise, tmp_path / "exercises" / exercise)
    return tmp_path


def checked(mine: Path) -> list[ExerciseStanding]:
    """A record of the first two exercises: every result a question can have."""
    first = mine / "exercises" / EXERCISES[0] / f"{EXERCISES[0]}.ipynb"
    second = mine / "exercises" / EXERCISES[1] / f"{EXERCISES[1]}.ipynb"
    return [
        ExerciseStanding(
            EXERCISES[0],
            "Exercise 1: the graph is built as the code runs",
            digest(first),
            "graded",
            [
                QuestionStanding(1, 2.0, 2.0, PASSED),
                QuestionStanding(2, 3.0, 0.0, FAILED, "grad_wb's gradient of w is 2x the reference <here>"),
                QuestionStanding(3, 3.0, 0.0, NOT_ANSWERED),
            ],
        ),
        ExerciseStanding(
            EXERCISES[1],
            "Exercise 2",
            digest(second),
            "timeout in q1_answer",
            [QuestionStanding(1, 3.0, 0.0, FAILED, "its answer cell was stopped: timeout")],
        ),
    ]


def test_the_table_says_what_the_record_holds_and_the_rest_is_not_checked(mine):
    write_record(mine, checked(mine), "2026-12-07 10:00 UTC", "hidden")
    table = standing(mine)
    assert [e.exercise for e in table.exercises] == list(EXERCISES)
    text = table.text()
    assert "2 of 8 points" in text and "Question 2 (3 points): failed: grad_wb's gradient" in text
    assert "Question 3 (3 points): not answered yet" in text
    assert "(timeout in q1_answer)" in text
    assert table.exercises[2].status == NOT_CHECKED and f"points: {NOT_CHECKED}" in text
    assert "1 of 8 questions pass (2 of 22 points)" in table.heading() and "hidden tests" in table.heading()
    assert "&lt;here&gt;" in table.html() and "<here>" not in table.html()


def test_an_exercise_edited_after_its_check_reads_changed_since_checked(mine):
    write_record(mine, checked(mine), "2026-12-07 10:00 UTC", "visible")
    path = mine / "exercises" / EXERCISES[1] / f"{EXERCISES[1]}.ipynb"
    path.write_bytes(path.read_bytes() + b"\n")
    changed = [e.exercise for e in standing(mine).exercises if e.changed]
    assert changed == [EXERCISES[1]]
    assert CHANGED in standing(mine).text() and "checks you can see" in standing(mine).heading()


@pytest.mark.parametrize("broken", ["", "not json", '{"format": "another"}', '{"format": "autograder progress 1"}'])
def test_a_missing_or_broken_record_shows_every_exercise_not_checked(mine, broken):
    (mine / RECORD).write_text(broken)
    table = standing(mine)
    assert {e.status for e in table.exercises} == {NOT_CHECKED}
    assert table.checked == "" and "not checked yet" in table.heading()


def test_an_entry_of_another_shape_is_left_out_not_raised(mine):
    write_record(mine, checked(mine), "2026-12-07 10:00 UTC", "hidden")
    record = read_record(mine)
    record["exercises"][0]["questions"] = "many"
    (mine / RECORD).write_text(json.dumps(record))
    assert standing(mine).exercises[0].status == NOT_CHECKED


@pytest.mark.browser
def test_the_table_has_no_serious_wcag_violation(mine):
    """In a page of its own, as JupyterLab shows the cell's HTML output: no serious or critical WCAG
    2.0/2.1 A/AA violation (axe-core), with a row header per question and a header per exercise."""
    sync_api = pytest.importorskip("playwright.sync_api")
    from tests.accessibility import audit, print_lesser

    chromium = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")
    if not os.access(chromium, os.X_OK):
        if os.environ.get("COURSE_REQUIRE_BROWSER"):
            pytest.fail(f"COURSE_REQUIRE_BROWSER is set, but there is no Chromium at {chromium}")
        pytest.skip(f"no Chromium at {chromium}")
    write_record(mine, checked(mine), "2026-12-07 10:00 UTC", "hidden")
    document = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Where you stand</title></head>'
        f"<body><main><h1>Where you stand</h1>{standing(mine).html()}</main></body></html>"
    )
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox"])
        try:
            page = browser.new_page()
            page.set_content(document)
            serious, lesser = audit(page, "progress table")
            headers = page.eval_on_selector_all("th[scope=row]", "cells => cells.map(c => c.innerText)")
        finally:
            browser.close()
    print_lesser(lesser)
    assert serious == []
    assert headers == ["Question 1", "Question 2", "Question 3", "Question 1"]


def test_an_exercise_the_learner_deleted_after_its_check_is_still_listed_as_recorded(mine):
    write_record(mine, checked(mine), "2026-12-07 10:00 UTC", "hidden")
    shutil.rmtree(mine / "exercises" / EXERCISES[1])
    table = standing(mine)
    assert [e.exercise for e in table.exercises] == list(EXERCISES)
    assert table.exercises[1].changed and table.exercises[1].status == "timeout in q1_answer"
