"""Can an instructor tell from the class report which misconception to re-teach, and whom to write to,
without it showing anything a submission could abuse or a hidden test holds?"""

from __future__ import annotations

import csv
import datetime
import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from nbgrader.api import Gradebook

from autograder.check.checked import Checked
from autograder.check.judging import judge
from autograder.compare.causes import NOT_ANSWERED
from autograder.grading import status
from autograder.grading.judge.grade_one import QuestionResult, Result, grade_notebook, solution_records, unscored
from autograder.grading.out.redact import hidden_lines
from autograder.grading.out.report import (
    Row,
    after_grade,
    late_from_gradebook,
    report_from_gradebook,
    report_from_results,
    rows_from_gradebook,
    rows_from_results,
    summarize,
    terminal_summary,
    write_report,
)
from autograder.grading.runs.batch import load_sources
from autograder.grading.runs.demo import build_demo_class
from autograder.grading.sandbox.limits import Limits
from autograder.grading.store.gradebook import Store
from autograder.lessons import COURSE_ROOT

from ..demo_results import demo_results, demo_students

# three assignments of the demo class, judged in this process (seconds, not the grader's minutes)
DEMO = ["ex01_graph", "ex04_accumulation", "ex05_inplace"]


@pytest.fixture(scope="module")
def sources():
    return load_sources(COURSE_ROOT / "solutions")


@pytest.fixture(scope="module")
def demo(sources):
    """(results, summary) of the demo class's DEMO assignments."""
    results = [result for exercise in DEMO for result in demo_results(exercise)]
    return results, summarize(rows_from_results(results), sources)


def _failed(message: str, cause: str = "", student: str = "s", question: str = "q1_check", points: float = 1) -> Row:
    return Row(student, "ex01_graph", question, 0.0, points, message, cause, "graded")


def _message(record: Checked) -> str:
    ok, message = judge(record)
    assert not ok
    return message


def test_every_typical_mistake_is_under_its_cause_with_exactly_the_students_who_made_it(demo):
    """In each question, is each student who made a typical mistake there under exactly one cause, a
    keyed one, whose example message says what the mistakes module says that mistake gets, and is
    every student listed under a cause one whose mistake it is?"""
    _, summary = demo
    checked = 0
    for q in summary.questions:
        students = demo_students(q.assignment_id).items()
        made = {s: m["fails"][q.question] for s, m in students if s != "blank" and q.question in m["fails"]}
        listed = [s for c in q.causes for s in c.students if s != "blank"]
        assert sorted(listed) == sorted(made), f"{q.assignment_id} {q.question}: who failed"
        for c in q.causes:
            if c.cause == NOT_ANSWERED:
                continue
            assert not c.cause.startswith("“"), f"{q.assignment_id} {q.question}: {c.students} have no cause key"
            assert c.students == sorted(s for s, phrase in made.items() if phrase in c.example), (
                f"{q.assignment_id} {q.question} {c.cause}"
            )
            checked += len(c.students)
    assert checked >= 25


def test_the_correct_student_is_under_no_cause_and_the_blank_one_under_not_answered(demo):
    """Does the correct student appear under no cause at all, and the blank student under "not
    answered" in every question and under nothing else?"""
    results, summary = demo
    assert "correct" not in summary.students
    assert summary.students["blank"] == {NOT_ANSWERED: [(q.assignment_id, q.question) for q in summary.questions]}
    assert summary.cause_students(NOT_ANSWERED) == ["blank"]
    assert all(q.cause == "" for r in results if r.student_id == "correct" for q in r.questions)


def test_one_mistake_with_other_numbers_is_one_cause():
    """Two learners whose gradients are 2x and 3x the reference (generic diagnosis), and two whose
    check cell raised the same sentence about different names and counts (no key): one cause each?"""
    expected = torch.tensor([1.0, -2.0, 0.5])
    twice, thrice = (_message(Checked("w.grad", "tensor", k * expected, expected, {})) for k in (2, 3))
    assert twice != thrice and twice.cause == thrice.cause == "tensor.multiple"
    rows = [
        _failed(twice, twice.cause, "ada"),
        _failed(thrice, thrice.cause, "bo"),
        _failed("count_nodes(a.exp()) is wrong: expected 5, got 7.", student="cy", question="q3_check"),
        _failed("count_nodes((h * h).sum()) is wrong: expected 4, got 3.", student="dee", question="q3_check"),
    ]
    summary = summarize(rows)
    assert [(c.cause, c.students) for q in summary.questions for c in q.causes] == [
        ("tensor.multiple", ["ada", "bo"]),
        ("“… is wrong: expected #, got #.”", ["cy", "dee"]),
    ]


def test_two_causes_worded_alike_stay_apart():
    """A byte count too high by the Tanh output and one too high by the input, and two predictions
    wrong in different entries, read almost the same: are they four causes, not two?"""
    parts = {"the input": 96, "the Tanh output": 128}
    options = {"parts": parts, "unsaved": {}, "step": None, "extra": {}, "show_values": True}
    by_tanh, by_input = (_message(Checked("saved bytes", "nbytes", 1000 + n, 1000, options)) for n in (128, 96))
    reasons = {"reasons": {}}
    wrong_b, wrong_e = (
        _message(Checked("predictions", "predictions", {"b": 1, "e": 1, k: 0}, {"b": 0, "e": 0}, reasons)) for k in "be"
    )
    rows = [_failed(m, m.cause, f"s{i}") for i, m in enumerate([by_tanh, by_input, wrong_b, wrong_e])]
    causes = [c.cause for q in summarize(rows).questions for c in q.causes]
    assert sorted(causes) == sorted(
        [
            "bytes.double.the_tanh_output",
            "bytes.double.the_input",
            "prediction.predictions.e",
            "prediction.predictions.b",
        ]
    )


def _gradebook(db_url: str, results: list[Result], sources: dict) -> None:
    """Write ``results`` into nbgrader's gradebook through the course's store (the assignment's
    structure as generate_assignment records it, each submission's scores, comments and the cause
    keys in the grader's own table)."""
    with Store(db_url) as store:
        for assignment in sorted({r.assignment_id for r in results}):
            store.prepare(assignment, *sources[assignment])
        store.record_all([(r, sources[r.assignment_id][0], None) for r in results])


@pytest.fixture
def alembic_on_path(monkeypatch):
    """nbgrader runs ``alembic`` (installed beside this Python) when it creates a gradebook."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def test_the_report_command_reads_what_the_gradebook_holds(demo, sources, tmp_path, alembic_on_path):
    """Written into nbgrader's gradebook and read back through nbgrader's API, are the rows the
    grade run's own; and does `python -m autograder report --db URL --out OUT` write both files and
    say which question has the lowest pass rate, with its top cause, or, as in the demo class where
    every mistake is one student's, that its causes tie?"""
    results, summary = demo
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    _gradebook(db_url, results, sources)
    stored = rows_from_gradebook(db_url)
    key = lambda r: (r.assignment_id, r.student_id, r.question)  # noqa: E731
    assert sorted((key(r), r.score, r.message, r.cause, r.status) for r in stored) == sorted(
        (key(r), r.score, r.message, r.cause, r.status) for r in rows_from_results(results)
    )
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "report", "--db", db_url, "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    lowest = min(summary.questions, key=lambda q: (q.pass_rate, q.question))
    assert run.stdout.splitlines()[1].startswith(f"  {lowest.assignment_id} {lowest.question}: ")
    line = run.stdout.splitlines()[1]
    tied = sorted(c.cause for c in lowest.causes if c.count == lowest.causes[0].count)
    if len(tied) == 1:
        assert f"top cause: {tied[0]} ({lowest.causes[0].count})" in line
    else:
        assert "top cause:" not in line and "; ".join(tied[:3]) in line
        assert f"causes: {len(tied)} different, each once: " in line or "(tied, " in line
    assert f"{out / 'report.html'}" in run.stdout
    # what `grade` prints at its end is the same summary, of the same gradebook
    assert after_grade(tmp_path / "again", db_url).strip() == run.stdout.strip().replace(
        str(out), str(tmp_path / "again")
    )
    assert after_grade(tmp_path / "nothing graded") == ""
    with open(out / "report.csv", newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    blank = [r for r in table if r["cause"] == NOT_ANSWERED]
    assert len(blank) == len(summary.questions) and all(r["students"] == "blank" for r in blank)


def test_a_late_learner_who_passed_every_question_is_named_late_not_only_passed(
    demo, sources, tmp_path, alembic_on_path
):
    """A learner whose every question passed but whose submissions came 36 h after the due date,
    one with a late-submission penalty and one without (nbgrader's default policy): does the report
    say so beside their name, with how late and what it cost?"""
    results, _ = demo
    correct = [r for r in results if r.student_id == "correct"]
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    _gradebook(db_url, correct, sources)
    penalised, unpenalised = sorted(correct, key=lambda r: r.assignment_id)[:2]
    with Gradebook(db_url) as gb:
        for result in (penalised, unpenalised):
            submission = gb.find_submission(result.assignment_id, "correct")
            submission.timestamp = datetime.datetime(2026, 1, 22, 5)
            submission.assignment.duedate = submission.timestamp - datetime.timedelta(hours=36)
        notebook = sources[penalised.assignment_id][0].removesuffix(".ipynb")
        submitted = gb.find_submission_notebook(notebook, penalised.assignment_id, "correct")
        submitted.late_submission_penalty = penalised.max_score
        gb.db.commit()
    words = {
        penalised.assignment_id: f"-{penalised.max_score:g} (late, 36 h)",
        unpenalised.assignment_id: "late (36 h, no penalty)",
    }
    assert late_from_gradebook(db_url) == {"correct": sorted(words.items())}
    report_from_gradebook(db_url, tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    row = next(r for r in page.split("<tr>") if r.startswith('<td data-label="student">correct</td>'))
    assert "every question passed" in row
    assert "late: " + ", ".join(f"{a} {w}" for a, w in sorted(words.items())) in row


def test_a_submission_with_no_notebook_has_an_example_message_that_says_so(sources, tmp_path, alembic_on_path):
    """carol's folder held no notebook: is her failure's example message on the page (from the run's
    results and from the gradebook) "no notebook handed in", not an empty cell?"""
    source = sources["ex01_graph"][1]
    results = [unscored(source, "carol", "ex01_graph", status.NO_NOTEBOOK)]
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    _gradebook(db_url, results, sources)
    for written in (report_from_results(results, tmp_path / "run"), report_from_gradebook(db_url, tmp_path / "db")):
        examples = {c.example for q in written.questions for c in q.causes}
        assert examples == {"no notebook handed in"}, examples
    for out in ("run", "db"):
        page = (tmp_path / out / "report.html").read_text(encoding="utf-8")
        assert '<pre class="example">no notebook handed in</pre>' in page
        assert '<pre class="example"></pre>' not in page


def test_the_report_command_without_a_gradebook_says_so(tmp_path):
    """Asked for a report where no gradebook exists, does it say so and create nothing?"""
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "report", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 2 and "no gradebook at" in run.stderr
    assert not (tmp_path / "gradebook.db").exists() and not (tmp_path / "out").exists()


def _class(counts: dict[str, int], question: str = "q1_check") -> list[Row]:
    """Failed rows of one question: ``counts[cause]`` students each, named after their cause."""
    return [_failed("wrong.", cause, f"{cause}-{i}", question) for cause, n in counts.items() for i in range(n)]


@pytest.mark.parametrize(
    "counts, says",
    [
        ({"error.consumed": 3, "tensor.multiple": 1}, "top cause: error.consumed (3) (+1 more cause)"),
        ({"error.consumed": 2}, "top cause: error.consumed (2)"),
        ({"value.c": 1, "value.a": 1, "value.b": 1}, "causes: 3 different, each once: value.a; value.b; value.c"),
        ({"value.b": 2, "value.a": 2}, "causes: 2 different, 2 each: value.a; value.b"),
        (
            {"value.z": 1, "value.b": 2, "value.a": 2, "value.y": 1},
            "top causes (tied, 2 each): value.a; value.b (+2 more causes)",
        ),
        ({f"value.{c}": 1 for c in "edcba"}, "causes: 5 different, each once: value.a; value.b; value.c; and 2 more"),
    ],
)
def test_the_terminal_names_one_top_cause_only_when_one_leads(counts, says):
    """Does `grade`'s closing summary name a single "top cause" only when one cause is more frequent
    than every other, and otherwise say that the causes tie, naming them in a fixed order (not the
    order the students were met in)?"""
    for rows in (_class(counts), _class(counts)[::-1]):
        lines = terminal_summary(summarize(rows)).splitlines()
        assert lines[1].endswith(f"passed (0%); {says}"), lines[1]


def test_a_long_cause_is_cut_between_words_with_an_ellipsis_and_the_report_has_it_whole(tmp_path):
    """A cause longer than the terminal's line (the first line of a message nobody keyed): is it cut
    between two words and ended with "…", never mid-word as if it were the whole message, with the
    class report named as where it is whole, and is it whole on the report page?"""
    cause = "Some parameters got no gradient (…): your model's forward never used them " * 3
    rows = _class({cause.strip(): 2, "error.consumed": 1})
    summary = write_report(rows, tmp_path)
    lines = terminal_summary(summary, tmp_path).splitlines()
    shown = re.search(r"top cause: (.*) \(2\)", lines[1]).group(1)
    assert shown.endswith("…") and len(shown) <= 90 and cause.startswith(shown.removesuffix("…"))
    assert cause[len(shown) - 1] == " ", "cut mid-word"
    assert lines[-1].endswith("(and report.csv): the causes cut short above (…) are whole there")
    assert html.escape(cause.strip()) in (tmp_path / "report.html").read_text(encoding="utf-8")
    assert not terminal_summary(write_report(_class({"error.consumed": 1}), tmp_path), tmp_path).endswith("there")


def _plot_alt(page: str) -> str:
    return html.unescape(re.search(r'<img src="data:image/png;base64,[^"]*" alt="([^"]*)"', page).group(1))


@pytest.mark.parametrize(
    "counts, says",
    [
        ({"e.a": 3, "e.b": 2, "e.c": 1}, "Top 3 causes: e.a (3); e.b (2); e.c (1)."),
        ({f"e.{c}": 1 for c in "gfedcba"}, "5 of 7 causes, each once: e.a (1); e.b (1); e.c (1); e.d (1); e.e (1)."),
        (
            {"e.z": 4, "e.y": 3, **{f"e.{c}": 1 for c in "edcba"}},
            "Top 5 of 7 causes (+2 more tied, 1 each): e.z (4); e.y (3); e.a (1); e.b (1); e.c (1).",
        ),
        ({"e.a": 2, "e.b": 2}, "2 causes, 2 each: e.a (2); e.b (2)."),
    ],
)
def test_the_report_plot_says_when_its_top_causes_are_cut_among_ties(tmp_path, counts, says):
    """On the class report page, does an assignment's plot of its most frequent causes (and its text
    alternative) say when the causes it shows tie with causes it leaves out, and pick the ones shown
    in a fixed order?"""
    for rows in (_class(counts), _class(counts)[::-1]):
        write_report(rows, tmp_path)
        assert _plot_alt((tmp_path / "report.html").read_text(encoding="utf-8")).endswith(says)


HOSTILE = '<img src=x onerror="alert(1)">'


def test_hostile_ids_and_messages_are_text_and_no_formula(tmp_path):
    """A student id and a message that hold markup, a formula and terminal control characters: are
    they shown as text on the page, as no formula in the CSV, and escaped in the terminal?"""
    rows = [
        Row(HOSTILE, "ex01_graph", "q1_check", 0.0, 1.0, f'=HYPERLINK("http://x")\n{HOSTILE}</pre>', "", "graded"),
        Row("bo\x1b]52;c;evil\x07", "ex01_graph\x1b[2J", "q1_check", 0.0, 1.0, "f() is wrong.", "value.x", ""),
    ]
    summary = write_report(rows, tmp_path)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert HOSTILE not in page and "<script" not in page.lower() and html.escape(HOSTILE) in page
    with open(tmp_path / "report.csv", newline="", encoding="utf-8") as f:
        cells = [cell for row in csv.reader(f) for cell in row]
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)
    text = terminal_summary(summary, tmp_path)
    assert "\x1b" not in text and "\x07" not in text and "\\x1b" in text


def test_no_hidden_test_line_or_input_reaches_the_report(demo, sources, tmp_path):
    """Does the report hold no line of any hidden test, even when a failure's message quotes one (a
    learner's code can print the hidden test it is called from), and no hidden input in a key?"""
    results, _ = demo
    secret = sorted(hidden_lines(sources["ex04_accumulation"][1]), key=len)[-1]
    quoting = Result("eve", "ex04_accumulation", "graded", [QuestionResult("q2_check", 4, 0.0, f"oops\n{secret}", "")])
    write_report(rows_from_results([*results, quoting]), tmp_path, sources)
    page = html.unescape((tmp_path / "report.html").read_text(encoding="utf-8"))
    table = (tmp_path / "report.csv").read_text(encoding="utf-8")
    for exercise in DEMO:
        for line in hidden_lines(sources[exercise][1]):
            if len(line) >= 12:
                assert line not in page and line not in table, line
    # a key holds words only (a prediction's also the names of its entries): no number that a hidden
    # test's input could have given
    keys = {q.cause for r in results for q in r.questions if q.cause}
    assert keys and not [k for k in keys if not k.startswith("prediction.") and re.search(r"\d", k)]


@pytest.mark.browser
def test_the_page_renders_offline_in_chromium_at_1280_px_and_on_a_phone(demo, sources, tmp_path):
    """Opened from its file path in headless Chromium, does the page ask for nothing but itself and
    its data: images, show every plot, and fit a phone's width (tables scroll in their own box)?
    Screenshots go to test-artifacts/report/."""
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")
    if not os.access(chromium, os.X_OK):
        if os.environ.get("COURSE_REQUIRE_BROWSER"):
            pytest.fail(f"COURSE_REQUIRE_BROWSER is set, but there is no Chromium at {chromium}")
        pytest.skip(f"no Chromium at {chromium} (apt-get install chromium)")
    results, _ = demo
    report_from_results(results, tmp_path, COURSE_ROOT / "solutions")  # as after an in-memory grade run
    page_url = (tmp_path / "report.html").as_uri()
    artifacts = Path(__file__).resolve().parents[3] / "test-artifacts" / "report"
    artifacts.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            for width, name in ((1280, "desktop"), (390, "phone")):
                page = browser.new_page(viewport={"width": width, "height": 900})
                requested = []
                page.on("request", lambda request, seen=requested: seen.append(request.url))
                page.goto(page_url)
                page.wait_for_load_state("load")
                assert [url for url in requested if not url.startswith("data:")] == [page_url]
                assert page.locator("h1").inner_text() == "What the class got wrong"
                plots = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.complete && i.naturalWidth > 0)")
                assert plots and all(plots), "a plot did not render"
                assert page.evaluate("document.documentElement.scrollWidth") <= width, "wider than the screen"
                page.screenshot(path=str(artifacts / f"{name}.png"))
                page.close()
        finally:
            browser.close()


def test_the_sandboxed_grader_gives_each_demo_student_the_same_causes(demo, sources, sandbox, tmp_path):
    """Graded as `grade` grades them (a sandboxed process per notebook, records judged outside),
    do the demo students of one assignment get the causes the in-process run gives: the keys of
    checks judged outside, of checks judged inside the learner's process (their reference was not
    withheld), of errors raised in the learner's code, and not_answered for the blank student?"""
    exercise = "ex04_accumulation"
    name, source = sources[exercise]
    build_demo_class(tmp_path / "class")
    references = solution_records(source, sandbox, Limits())
    graded = {
        r.student_id: {q.grade_id: q.cause for q in r.questions}
        for r in (
            grade_notebook(path, source, references, path.parts[-3], exercise, sandbox, Limits())
            for path in sorted((tmp_path / "class").glob(f"*/{exercise}/{name}"))
        )
    }
    results, _ = demo
    assert graded == {
        r.student_id: {q.grade_id: q.cause for q in r.questions} for r in results if r.assignment_id == exercise
    }
    assert graded["blank"] == dict.fromkeys(graded["blank"], NOT_ANSWERED)
    assert graded["ex04-q2-one-backward"]["q2_check"].startswith("value.")  # judged in the learner's process
