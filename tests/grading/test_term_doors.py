"""Does every door of a term hold when what comes through it lies: a zip's names, a roster, a
timestamp, a part gradebook, a references file, a learner's message? One course (ex01, late work
scores 0) is graded through the real commands, as an instructor runs a term: the exchange's
``submitted/``, a Canvas zip, a Moodle zip, an extension, the class report, a shard and its merge,
``nbgrader export``. Beside each door's attacker or messy input sit an honest classmate (full
marks) and a blank one (0); after every run: nobody scores above blank but the honest, every
student has a row and a page, nothing under the submissions changed, and the grader kept its time
and memory bounds. Each test reads as one finding of issue 49, and asks for its class.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.grading.judge.assemble import grade_id
from autograder.grading.runs.demo import build_demo_class
from autograder.grading.runs.saved_references import _records_hash
from autograder.grading.sandbox.container import sandbox_problem
from autograder.grading.sandbox.values import decode_record
from autograder.lessons import COURSE_ROOT
from tests.measure import children_cpu_seconds

from .test_attacks import GRADER_MEMORY, PEAK_MEMORY, _tree_digest

pytestmark = pytest.mark.skipif(
    bool(sandbox_problem()) and not os.environ.get("COURSE_REQUIRE_SANDBOX"),
    reason=f"the grading sandbox cannot run here: {sandbox_problem()}",
)

EX = "ex01_graph"
FULL = 8.0
DUE = "2026-01-20 17:00:00 UTC"
ON_TIME, LATE = "2026-01-20 09:00:00.000000 UTC", "2026-01-20 18:00:00.000000 UTC"
RUN_SECONDS = 600  # CPU seconds of one grade run of this small class (the grader and all it starts)


def _answering(blank: nbformat.NotebookNode, question: str, text: str) -> nbformat.NotebookNode:
    """The blank notebook with answer cell ``question`` holding ``text``."""
    nb = nbformat.from_dict(json.loads(nbformat.writes(blank)))
    next(c for c in nb.cells if grade_id(c) == question).source = text
    return nb


def _raising(message: str) -> str:
    """An answer to question 2 whose function raises the course's own CheckFailed with ``message``."""
    return f"from autograder.check import CheckFailed\ndef grad_wb(w, b, x, y):\n    raise CheckFailed({message!r})\n"


class Course:
    """A course folder with ex01 only, late work scored 0, and the commands an instructor runs."""

    def __init__(self, root: Path):
        self.root, self.course = root, root / "course"
        demo_root = root / "demo-root"
        for top in ("solutions", "exercises"):
            shutil.copytree(COURSE_ROOT / top / EX, demo_root / top / EX)
        build_demo_class(root / "demo", root=demo_root)
        self.correct = nbformat.read(root / "demo" / "correct" / EX / f"{EX}.ipynb", as_version=4)
        self.blank = nbformat.read(root / "demo" / "blank" / EX / f"{EX}.ipynb", as_version=4)
        shutil.copytree(COURSE_ROOT / "solutions" / EX, self.course / "source" / EX)
        (self.course / "nbgrader_config.py").write_text(
            'c = get_config()\nc.LateSubmissionPlugin.penalty_method = "zero"\n', encoding="utf-8"
        )
        self.submitted = self.course / "submitted"
        self.refs = root / "refs.json"
        self.cli("references", "--solutions", str(self.course / "source"), "--out", str(self.refs))
        self.runs: list[dict] = []

    def hand_in(self, student: str, nb, when: str | None = ON_TIME) -> None:
        """What ``nbgrader collect`` leaves: the notebook and its ``timestamp.txt`` (``when`` as written)."""
        folder = self.submitted / student / EX
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{EX}.ipynb").write_text(nb if isinstance(nb, str) else nbformat.writes(nb), encoding="utf-8")
        if when is not None:
            (folder / "timestamp.txt").write_text(when, encoding="utf-8")

    def cli(self, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, "-m", "autograder", *args], capture_output=True, text=True, cwd=self.root, timeout=900
        )
        assert done.returncode in ok, (args, done.stdout[-3000:], done.stderr[-3000:])
        return done

    def grade(self, *args: str, out: str = "out", ok: tuple[int, ...] = (0,)) -> dict:
        """``grade --course COURSE --references refs.json --out OUT ARGS`` with its peak memory and
        time, nothing under submitted/ changed but what ``--from-zip`` keeps there."""
        before = _tree_digest(self.submitted) if self.submitted.exists() else {}
        command = [sys.executable, "-c", PEAK_MEMORY, "grade", "--course", str(self.course)]
        command += ["--references", str(self.refs), "--out", str(self.root / out), "--jobs", "2", *args]
        cpu = children_cpu_seconds()
        done = subprocess.run(command, capture_output=True, text=True, cwd=self.root, timeout=900)
        cpu = children_cpu_seconds() - cpu
        assert done.returncode in ok, (args, done.stdout[-3000:], done.stderr[-3000:])
        after = _tree_digest(self.submitted)
        changed = {k for k in before if after.get(k) != before[k]}
        peak = int(dict(re.findall(r"PEAK_(SELF)_KB=(\d+)", done.stderr)).get("SELF", 0)) * 1024
        run = dict(
            out=self.root / out, stdout=done.stdout, stderr=done.stderr, changed=changed, peak=peak, cpu_seconds=cpu
        )
        self.runs.append(run)
        return run

    def rows(self, out: str = "out") -> dict[str, dict]:
        with open(self.root / out / "grades.csv", newline="", encoding="utf-8") as f:
            return {r["student_id"]: r for r in csv.DictReader(f)}


def assert_fair(course: Course, run: dict, attackers: list[str], rows_in: str = "out") -> None:
    """The checks every door shares: the honest learner full, the blank one and every attacker at
    most blank, a row and a page each, submitted/ unchanged, the grader's time and memory bounded."""
    rows, honest = course.rows(rows_in), "correct"
    assert float(rows[honest]["score"]) == FULL, rows[honest]
    assert float(rows["blank"]["score"]) == 0
    for student in attackers:
        assert float(rows[student]["score"]) <= float(rows["blank"]["score"]), rows[student]
    pages = {p.parts[-2] for p in (run["out"] / "feedback").glob(f"*/{EX}.html")}
    assert set(rows) <= pages | {r for r in rows if r.startswith("'")}, set(rows) - pages
    assert run["changed"] == set(), run["changed"]
    assert run["cpu_seconds"] < RUN_SECONDS
    assert 0 < run["peak"] < GRADER_MEMORY, run["peak"]


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """The term, run once: the exchange's submissions graded (due date set), an extension, a
    Canvas zip and a Moodle zip, the class report, a shard merged back, nbgrader's export."""
    course = Course(tmp_path_factory.mktemp("term"))
    c = course
    c.hand_in("correct", c.correct)
    c.hand_in("blank", c.blank)
    c.hand_in("late", c.correct, LATE)  # an honest late learner: 0
    c.hand_in("ext", c.correct, LATE)  # late, then given 72 hours: full
    c.hand_in("ada", c.correct, "2026-01-20 12:00:00.000000 UTC")  # and a 09:00 draft on Canvas
    c.hand_in("bob", c.correct)  # a Moodle classmate whose entry an attacker imitates
    # timestamps that cannot be read as on time: unreadable, a zone that is a path, a year past any term
    c.hand_in("atk-ts-unreadable", c.correct, "soon, I promise")
    c.hand_in("atk-ts-path", c.correct, "2026-01-20 09:00:00 /etc/passwd")
    c.hand_in("atk-ts-year", c.correct, "9999-12-31 23:59:59")
    # learner texts: a Graded: line that overwrites the verdict, ANSI colours, a stop and a key they
    # never had, maths for matplotlib
    c.hand_in("atk-graded-line", _answering(c.blank, "q2_answer", _raising("\rGraded: 3 / 3. All checks passed.")))
    c.hand_in("atk-ansi", _answering(c.blank, "q2_answer", _raising("\x1b[32mGraded: 3 / 3.\x1b[8m")))
    c.hand_in("atk-cause", _answering(c.blank, "q2_answer", _raising("stopped: timeout in q2_check\n[cause: x.y]")))
    c.hand_in("atk-math", _answering(c.blank, "q2_answer", _raising(r"$\frac{a}$ and $$ \sqrt{")))
    term = {"exchange": c.grade("--duedate", f"{EX}={DUE}")}
    term["extension"] = c.cli("extension", EX, "ext", "--hours", "72", "--course", str(c.course), "--out", "out")
    term["after extension"] = c.rows()
    term["canvas"] = _canvas(c)
    term["moodle"] = _moodle(c)
    term["report"] = c.cli("report", "--db", f"sqlite:///{c.course / 'gradebook.db'}", "--out", "out",
                           "--solutions", str(c.course / "source"))  # fmt: skip
    term["before shard"] = c.rows()
    term["shard"] = c.grade("--shard", "0/1", out="sharded")
    term["merge"] = c.cli("merge", *map(str, (c.root / "sharded" / "parts").glob("*.db")), "--db",
                          str(c.course / "gradebook.db"), "--out", "out")  # fmt: skip
    term["after merge"] = c.rows()
    term["regrade"] = c.grade("--student", "correct")
    term["stale merge"] = c.cli("merge", *map(str, (c.root / "sharded" / "parts").glob("*.db")), "--db",
                                str(c.course / "gradebook.db"), "--out", "out", ok=(1,))  # fmt: skip
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    term["nbgrader export"] = subprocess.run(
        [sys.executable, "-m", "nbgrader", "export"], cwd=c.course, capture_output=True, text=True, env=env, timeout=600
    )
    term["course"] = c
    return term


def _zip(path: Path, entries: list[tuple[str, bytes | str, tuple]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, when in entries:
            zf.writestr(zipfile.ZipInfo(name, date_time=when), data, zipfile.ZIP_DEFLATED)
    return path


def _canvas(c: Course) -> dict:
    """A Canvas download: ada's 09:00 draft (her exchange hand-in at 12:00 is newer), the late
    learner's notebook uploaded again after the due date, a notebook nested 100,000 levels deep,
    one larger than the grader's notebook bound, and a roster whose names are CSV and formulas."""
    late = (c.submitted / "late" / EX / f"{EX}.ipynb").read_bytes()
    morning = (2026, 1, 20, 9, 0, 0)
    # 100,000 levels of objects under random keys: valid JSON, no zip bomb (it compresses about 2x)
    deep = b"".join(b'{"%s":' % os.urandom(6).hex().encode() for _ in range(100_000)) + b"1" + b"}" * 100_000
    entries = [
        ("lovelaceada_101_1_ex01_graph.ipynb", nbformat.writes(c.blank), morning),
        ("latelearner_102_2_ex01_graph.ipynb", late, (2026, 1, 20, 19, 0, 0)),
        ("deepdora_103_3_ex01_graph.ipynb", deep, morning),
        (
            "hugehal_104_4_ex01_graph.ipynb",
            b'{"a": "' + os.urandom(15 * 2**20).hex().encode() + b'"}',
            morning,
        ),
        ("joneseve_105_5_ex01_graph.ipynb", nbformat.writes(c.blank), morning),
        ("evilformula_106_6_ex01_graph.ipynb", nbformat.writes(c.blank), morning),
        # Canvas user 200 set their display name to the honest classmate's, who has no id in the roster
        ("correctcarol_200_7_ex01_graph.ipynb", nbformat.writes(c.blank), (2026, 1, 20, 12, 0, 0)),
        # a correct notebook uploaded after the due date (Canvas marks it LATE): the zip's time counts
        ("tardytom_LATE_107_8_ex01_graph.ipynb", nbformat.writes(c.correct), (2026, 1, 20, 19, 0, 0)),
    ]
    archive = _zip(c.root / "canvas.zip", entries)
    roster = c.root / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student_id", "canvas_id", "name"])
        for row in [
            ("ada", "101", "Lovelace, Ada"),
            ("late", "102", "Learner, Late"),
            ("dora", "103", "Deep, Dora"),
            ("hal", "104", "Huge, Hal"),
            ("eve", "105", "Jones, Eve,eve@uni.edu,8.0,0.0,8.0,8.0"),
            ("mallory", "106", '=HYPERLINK("http://evil.example","8")'),
            ("correct", "", "Correct, Carol"),  # a row with a name only, as the README allows
            ("tom", "107", "Tardy, Tom"),
        ]:
            writer.writerow(row)
    return c.grade("--from-zip", str(archive), "--roster", str(roster), out="out")


def _moodle(c: Course) -> dict:
    """A Moodle download: an attacker's file named like bob's Moodle entry, inside the attacker's
    own folder; two learners whose names fold to one; names in other scripts; a roster whose rows
    share a name and an id."""
    blank = nbformat.writes(c.blank)
    when = (2026, 1, 20, 9, 0, 0)
    archive = _zip(
        c.root / "moodle.zip",
        [
            ("Mal Ory_501_assignsubmission_file_/Bob Smith_502_assignsubmission_file_ex01_graph.ipynb", blank, when),
            ("José Ruiz_503_assignsubmission_file_/ex01_graph.ipynb", blank, when),
            ("Jose Ruiz_504_assignsubmission_file_/ex01_graph.ipynb", blank, when),
            ("李雷_505_assignsubmission_file_/ex01_graph.ipynb", blank, when),
            ("Ann Lee_506_assignsubmission_file_/ex01_graph.ipynb", blank, when),
            ("Sam Twin_507_assignsubmission_file_/ex01_graph.ipynb", blank, when),
        ],
    )
    roster = c.root / "moodle-roster.csv"
    roster.write_text(
        "student_id,moodle_id,name\n"
        "mal,501,Mal Ory\nbob,502,Bob Smith\njose1,,José Ruiz\njose2,,Jose Ruiz\nli,,李雷\n"
        "ann1,,Ann Lee\nann2,,ann  LEE\nsam1,507,Sam Twin\nsam2,507,Sam Twin\n",
        encoding="utf-8",
    )
    return c.grade("--from-zip", str(archive), "--roster", str(roster), "--assignment", EX, out="out")


# --- a classmate is harmed ----------------------------------------------------------------------


def test_a_moodle_file_named_like_a_classmate_is_its_authors(term):
    """Finding 1: is a file an attacker named like a classmate's Moodle entry filed under the
    attacker (the folder Moodle wrote), the classmate's exchange submission left in place and
    still full, and every name or id that maps to two people refused with one line naming both?"""
    c, run = term["course"], term["moodle"]
    rows = c.rows()
    assert float(rows["bob"]["score"]) == FULL and float(rows["mal"]["score"]) == 0
    assert not list((c.course / "submitted-replaced").glob("*/bob"))
    assert (c.submitted / "bob" / EX / "timestamp.txt").read_text(encoding="utf-8") == ON_TIME
    said = run["stdout"]
    assert "José Ruiz" in said and "Jose Ruiz" in said and "jose1" not in rows and "jose2" not in rows
    assert re.search(r"not one person: .*line 7 \(ann1.*line 8 \(ann2", said), said
    assert re.search(r"Moodle participant 507 .*not one person: .*sam1.*sam2", said), said
    assert {"sam1", "sam2", "ann1", "ann2"}.isdisjoint(rows)
    assert float(rows["li"]["score"]) == 0  # a name in another script finds its row
    assert_fair(c, run, ["mal", "li"])


def test_an_lms_and_an_exchange_submission_are_ordered_by_their_platforms_times(term):
    """Finding 2: does ada's 12:00 exchange hand-in stay graded beside her 09:00 Canvas draft (kept
    aside with its time), and does a late hand-in uploaded again to Canvas stay late?"""
    c, run = term["course"], term["canvas"]
    rows = c.rows()
    assert float(rows["ada"]["score"]) == FULL
    assert "ada/ex01_graph: the exchange's submission (2026-01-20 12:00 UTC) is newer than the zip's" in run["stdout"]
    (aside,) = (c.course / "submitted-replaced").glob(f"*/ada/{EX}")
    assert (aside / "timestamp.txt").read_text(encoding="utf-8").startswith("2026-01-20 09:00:00")
    assert (c.submitted / "ada" / EX / "timestamp.txt").read_text(encoding="utf-8").startswith("2026-01-20 12:00")
    assert float(rows["late"]["score"]) == 0 and float(rows["late"]["late_penalty"]) == FULL
    assert (c.submitted / "late" / EX / "timestamp.txt").read_text(encoding="utf-8") == LATE
    assert_fair(c, run, ["eve", "mallory"])


def test_a_display_name_never_replaces_a_classmates_submission(term):
    """Canvas user 200 named themselves like the honest learner, whose roster row has a name only,
    and uploaded a blank notebook after the honest on-time exchange hand-in: is the honest one still
    graded (full, its own time), the upload kept aside, and the instructor told to decide by id?"""
    c, run = term["course"], term["canvas"]
    assert float(c.rows()["correct"]["score"]) == FULL
    assert (c.submitted / "correct" / EX / "timestamp.txt").read_text(encoding="utf-8") == ON_TIME
    (aside,) = (c.course / "submitted-replaced").glob(f"*/correct/{EX}")
    assert nbformat.read(aside / f"{EX}.ipynb", as_version=4) == c.blank
    said = "refused to replace the submission there with the zip's, matched to correct by a display name"
    assert said in run["stdout"]


def test_an_lms_upload_after_the_due_date_is_late(term):
    """A correct notebook uploaded to Canvas two hours after the due date: is it late by the zip's
    time (the LMS's record), scored as a late exchange hand-in is (0 under the zero policy)?"""
    row = term["course"].rows()["tom"]
    assert float(row["score"]) == 0 and float(row["late_penalty"]) == FULL, row
    assert "tom/ex01_graph: Canvas marks it LATE" in term["canvas"]["stdout"]


# --- one input ends or poisons the run ----------------------------------------------------------


def test_a_deeply_nested_entry_is_one_line_and_the_run_goes_on(term):
    """Finding 3: is a notebook nested 100,000 levels deep refused with one line (no
    RecursionError), with everyone else graded and grades.csv written?"""
    run = term["canvas"]
    assert "deepdora_103_3_ex01_graph.ipynb: not a notebook (JSON nested" in run["stdout"], run["stdout"]
    assert "RecursionError" not in run["stdout"] + run["stderr"]
    assert "dora" not in term["course"].rows()
    assert_fair(term["course"], run, ["eve"])


def test_an_entry_past_the_notebook_bound_is_refused_before_it_is_read(term):
    """Finding 4: is an entry larger than the grader's notebook bound refused on its declared size,
    and does the grader's peak memory stay under its bound (GRADER_MEMORY) for the whole run?"""
    run = term["canvas"]
    assert "hugehal_104_4_ex01_graph.ipynb: refused, expands to" in run["stdout"], run["stdout"]
    assert "hal" not in term["course"].rows()
    print(f"canvas zip run: peak {run['peak'] / 2**20:.0f} MiB, {run['cpu_seconds']:.0f} CPU s")
    assert_fair(term["course"], run, [])


def test_a_timestamp_that_cannot_be_read_is_never_on_time(term):
    """Finding 5: does a timestamp.txt that cannot be read (or names a file for its zone, or a year
    past any term) score as late as the honest late learner, with a note each and the run whole?"""
    c, run = term["course"], term["exchange"]
    rows = term["after extension"]
    assert float(rows["late"]["score"]) == 0
    for student in ("atk-ts-unreadable", "atk-ts-path", "atk-ts-year"):
        assert float(rows[student]["score"]) == 0 and float(rows[student]["late_penalty"]) == FULL, rows[student]
        assert f"note: {student}/{EX}: unreadable timestamp.txt" in run["stdout"], run["stdout"]
    assert_fair(c, run, ["atk-ts-unreadable", "atk-ts-path", "atk-ts-year", "late"])


def test_maths_in_a_message_reaches_the_report_as_text(term):
    """Finding 6: does a message holding `$\\frac{a}$` leave report.html whole (report exits 0)?"""
    report = term["report"]
    page = (term["course"].root / "out" / "report.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in page and "Traceback" not in report.stderr
    assert "atk-math" in page


# --- shards, merge and deadlines --------------------------------------------------------------


def test_a_shard_and_its_merge_give_the_whole_class_run(term):
    """Finding 7: after a shard run and its merge, are the rows the whole-class run gave (late
    penalties and the 72-hour extension included), and is a part older than a later regrade
    refused, with nothing of it copied?"""
    before, after = term["before shard"], term["after merge"]
    keep = ("score", "max_score", "late_penalty", "status")
    assert {s: [r[k] for k in keep] for s, r in after.items()} == {s: [r[k] for k in keep] for s, r in before.items()}
    # every time read from a timestamp.txt is the same; one that could not be read is each run's own grading time
    unread = {s for s in before if s.startswith("atk-ts-")}
    assert {s: r["timestamp"] for s, r in after.items() if s not in unread} == {
        s: r["timestamp"] for s, r in before.items() if s not in unread
    }
    assert float(after["ext"]["score"]) == FULL and float(after["late"]["score"]) == 0
    assert float(term["after extension"]["ext"]["score"]) == FULL
    assert "was graded again here" in term["stale merge"].stderr, term["stale merge"].stderr
    assert_fair(term["course"], term["shard"], [], rows_in="out")  # a shard writes no grades.csv: the merge's


def test_an_extension_without_a_due_date_is_refused(tmp_path):
    """Finding 7's last door: an extension on an assignment with no due date changes nothing and says so."""
    from autograder.grading.store.gradebook import Store

    db = tmp_path / "gradebook.db"
    with Store(f"sqlite:///{db}") as store:
        store.gb.add_assignment("ex09")
        store.gb.add_student("ann")
        store.gb.add_submission("ex09", "ann")  # handed in, so only the missing due date can refuse it
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "extension", "ex09", "ann", "--hours", "24", "--db", f"sqlite:///{db}"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "has no due date" in done.stderr, done.stderr
    assert "nothing was changed" in done.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "autograder", "extension", "ex09", "ann", "--hours", "nan", "--db", f"sqlite:///{db}"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "--hours must be" in bad.stderr


# --- what the grader trusts ---------------------------------------------------------------------


def test_saved_references_are_complete_or_refused(term, tmp_path):
    """Finding 8: is a references file with the right header and no records, or without its hidden
    records, refused before anything is graded (wrong answers never judged against nothing)?"""
    c = term["course"]
    document = json.loads(c.refs.read_text(encoding="utf-8"))

    def visible_only(entry, rehash=False):
        entry["records"] = {k: [r for r in v if not _hidden(r)] for k, v in entry["records"].items()}
        if rehash:  # a file made consistent again by hand: its hash agrees, its records are still short
            entry["records_sha256"] = _records_hash(entry["records"])

    for name, cut in {
        "no records": lambda entry: entry.update(records={}),
        "no hidden records": visible_only,
        "no hidden records, hash made to agree": lambda entry: visible_only(entry, rehash=True),
    }.items():
        edited = json.loads(json.dumps(document))
        cut(edited["assignments"][EX])
        bad = tmp_path / f"{name}.json"
        bad.write_text(json.dumps(edited), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "autograder", "grade", str(c.submitted), "--solutions", str(c.course / "source"),
             "--references", str(bad), "--out", str(tmp_path / "out")],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 2 and "rebuild them" in done.stderr, (name, done.stderr)
        assert not (tmp_path / "out" / "grades.csv").exists()


def _hidden(encoded: dict) -> bool:
    """Whether an encoded record (``sandbox.values.encode_record``) is a hidden test's."""
    return bool(decode_record(encoded).options.get("hidden"))


def test_cause_keys_come_only_from_the_grader(term):
    """Finding 9: does a learner's message that reads like a stop and ends in a cause line give
    no such key anywhere (gradebook table, questions.csv, report), while a real failure keeps its key?"""
    c = term["course"]
    c.cli("export", "--course", str(c.course), "--out", "exports")
    with open(c.root / "exports" / "questions.csv", newline="", encoding="utf-8") as f:
        causes = {(r["student_id"], r["question"]): r["cause"] for r in csv.DictReader(f)}
    assert causes[("atk-cause", "q2_check")] == ""
    assert not [k for k, v in causes.items() if v.startswith("stopped.") or v == "x.y"]
    assert causes[("blank", "q2_check")] == "not_answered"
    with Gradebook(f"sqlite:///{c.course / 'gradebook.db'}") as gb:  # what formgrader shows: quoted, not a key line
        notebook = gb.find_submission_notebook(EX, EX, "atk-cause")
        comment = next(c.auto_comment for c in notebook.comments if c.cell.name == "q2_check")
    assert "[quoted cause: x.y]" in comment and "\n[cause:" not in comment, comment
    with open(c.root / "out" / "report.csv", newline="", encoding="utf-8") as f:
        reported = {r["cause"] for r in csv.DictReader(f)}  # an unkeyed message is grouped in quotes: “...”
    assert not [k for k in reported if k.startswith("stopped.") or k == "x.y"], reported


# --- learner text handed raw to tools that render it -------------------------------------------


def test_a_verdict_line_shows_control_characters_as_text(term):
    """Finding 10: in autograded/ (what formgrader and JupyterLab show), does the Graded: line of a
    message holding a carriage return or ANSI escapes show them as text, the score still 0?"""
    c = term["course"]
    for student in ("atk-graded-line", "atk-ansi"):
        nb = nbformat.read(c.course / "autograded" / student / EX / f"{EX}.ipynb", as_version=4)
        cell = next(cell for cell in nb.cells if grade_id(cell) == "q2_check")
        text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
        assert "Graded: 0 / 3." in text and not re.search(r"[\r\x1b]", text), text
        assert "\\r" in text or "\\x1b" in text
        assert float(term["after extension"][student]["score"]) == 0


def test_roster_names_reach_nbgrader_export_as_data(term):
    """Finding 11: does nbgrader's own export (which writes names unquoted) read back with every
    row whole, Eve at her score of 0, and no cell a formula?"""
    done = term["nbgrader export"]
    assert done.returncode == 0, done.stderr[-2000:]
    rows = list(csv.reader(io.StringIO((term["course"].course / "grades.csv").read_text(encoding="utf-8"))))
    assert len({len(r) for r in rows}) == 1, [r for r in rows if len(r) != len(rows[0])]
    header = rows[0]
    by_id = {r[header.index("student_id")]: r for r in rows[1:] if r[header.index("assignment")] == EX}
    assert float(by_id["eve"][header.index("score")]) == 0
    assert not [cell for r in rows for cell in r if cell.startswith(("=", "+", "@"))]
    with Gradebook(f"sqlite:///{term['course'].course / 'gradebook.db'}") as gb:
        mallory = gb.find_student("mallory")
        assert not (mallory.first_name + mallory.last_name).startswith("=")


# --- a learner's own work -----------------------------------------------------------------------


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _workspace(clone: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograder", "workspace", "--course", str(clone)], capture_output=True, text=True
    )


def test_answers_in_the_committed_exercises_stay_the_learners(tmp_path):
    """Finding 12: are answers typed into the committed exercises/ copied into my-work/ as the
    learner's own work (not "the release"), kept after `git checkout -- exercises`, and does a file
    of the learner's where a release adds a folder leave `workspace` exiting 0, said once per start?"""
    clone = tmp_path / "clone"
    exercise, lesson = "exercises/ex01/ex01.ipynb", "notebooks/01.ipynb"
    for name in (exercise, lesson):
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_text(json.dumps({"cells": [], "release": 1}), encoding="utf-8")
    (clone / ".gitignore").write_text("my-work/\n", encoding="utf-8")
    _git(clone, "init", "-q")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-qm", "release 1")
    (clone / exercise).write_text(json.dumps({"cells": ["my answer"], "release": 1}), encoding="utf-8")
    first = _workspace(clone)
    assert first.returncode == 0 and "your answers in exercises/ex01/ex01.ipynb" in first.stdout, first.stdout
    assert "my answer" in (clone / "my-work" / exercise).read_text(encoding="utf-8")
    _git(clone, "checkout", "--", "exercises")
    again = _workspace(clone)
    assert again.returncode == 0
    assert "my answer" in (clone / "my-work" / exercise).read_text(encoding="utf-8")
    # a release that adds exercises/ex02/ where the learner keeps a file named ex02
    (clone / "my-work" / "exercises" / "ex02").write_text("my notes", encoding="utf-8")
    (clone / "exercises" / "ex02").mkdir()
    (clone / "exercises" / "ex02" / "ex02.ipynb").write_text("{}", encoding="utf-8")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-qm", "release 2")
    for _ in range(2):
        started = _workspace(clone)
        assert started.returncode == 0, started.stdout + started.stderr
        assert "could not place exercises/ex02/ex02.ipynb" in started.stdout
    assert (clone / "my-work" / "exercises" / "ex02").read_text(encoding="utf-8") == "my notes"
    assert "my answer" in (clone / "my-work" / exercise).read_text(encoding="utf-8")
