"""Does the README's term run as written in a fresh clone: three learners, two assignments, one
late (and then given an extension), one regraded, one handed in as a Canvas zip (the README's
sample, made by tests/scripts/sample_canvas_zip.py), through the
exchange, the gradebook, the exports and the feedback hand-out, with nothing lost?"""

import csv
import os
import re
import shutil
import subprocess
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.apps.api import NbGraderAPI

from autograder.grading.mistakes import MISTAKES
from autograder.grading.runs.batch import load_sources
from autograder.grading.runs.demo import build_demo_class
from autograder.grading.store.config import course_config

from .grading.conftest import require_sandbox
from .test_course import clean_clone

COURSE_ID = "torch101"


def readme_term_block() -> list[str]:
    """The commands of the README's term walkthrough (the ```bash block that grades --course .)."""
    text = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```bash\n(.*?)```", text, re.DOTALL) if "autograder grade --course ." in b]
    assert blocks, "README.md has no ```bash block with the term walkthrough"
    return [line for line in blocks[0].splitlines() if line.strip() and not line.lstrip().startswith("#")]


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


class Term:
    """A clone of the course, an exchange of its own, and learners who submit at chosen times."""

    def __init__(self, tmp: Path):
        self.clone = clean_clone(tmp / "course")
        self.exchange, self.learners, config = tmp / "exchange", tmp / "learners", tmp / "jupyter-config"
        for folder in (self.exchange, self.learners, config):
            folder.mkdir()
        # the machine's nbgrader configuration (where a JupyterHub puts Exchange.root)
        (config / "nbgrader_config.py").write_text(
            f"c = get_config()\nc.Exchange.root = {str(self.exchange)!r}\n", encoding="utf-8"
        )
        self.env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config))
        self.env.pop("PYTHONPATH", None)  # the clone's own autograder package, as for a fresh user
        self.demo = tmp / "demo"
        self.expected = build_demo_class(self.demo, root=self.clone)
        self.sources = load_sources(self.clone / "solutions")

    def run(self, command: str, cwd: Path | None = None, prefix: str = "") -> str:
        done = subprocess.run(
            ["bash", "-e", "-c", f"{prefix}\n{command}" if prefix else command],
            cwd=cwd or self.clone,
            env=self.env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
        return done.stdout + done.stderr

    def submit(self, student: str, assignment: str, demo_student: str, when: str) -> None:
        """The learner fetches the assignment, answers as ``demo_student`` of the demo class does
        and runs ``nbgrader submit``; the submission is then dated ``when`` (the test cannot wait
        for the calendar: timestamp.txt and the inbound folder's name say ``when``)."""
        home = self.learners / student
        home.mkdir(exist_ok=True)
        venv = f'export PATH="{self.clone}/.venv/bin:$PATH"'
        if not (home / assignment).exists():
            self.run(f"nbgrader fetch_assignment {assignment} --course {COURSE_ID}", home, venv)
        name = self.sources[assignment][0]
        shutil.copy2(self.demo / demo_student / assignment / name, home / assignment / name)
        inbound = self.exchange / COURSE_ID / "inbound"
        before = set(inbound.glob(f"{student}+{assignment}+*"))
        self.run(f"nbgrader submit {assignment} --course {COURSE_ID} --student={student}", home, venv)
        (folder,) = set(inbound.glob(f"{student}+{assignment}+*")) - before
        stamp = f"{when}.000000 UTC"
        (folder / "timestamp.txt").write_text(stamp, encoding="utf-8")
        _, _, _, random = folder.name.rsplit("+", 3)
        folder.rename(inbound / f"{student}+{assignment}+{stamp}+{random}")

    def full(self, assignment: str) -> float:
        _, source = self.sources[assignment]
        return sum(
            float(c.metadata.nbgrader.get("points", 0))
            for c in source.cells
            if c.metadata.get("nbgrader", {}).get("grade")
        )


def test_the_readmes_term_runs_as_written(tmp_path):
    require_sandbox()
    term = Term(tmp_path)
    lines = readme_term_block()
    assert lines[0].startswith("export PATH=")
    ex01, ex02 = "ex01_graph", "ex02_leaves"
    mistake = next(iter(MISTAKES[ex01]))
    lost = sum(
        float(c.metadata.nbgrader["points"])
        for c in term.sources[ex01][1].cells
        if c.metadata.get("nbgrader", {}).get("grade_id") in term.expected[(mistake, ex01)]["fails"]
    )
    full1, full2 = term.full(ex01), term.full(ex02)
    grades = term.clone / "grading-output" / "grades.csv"
    said = {}
    for line in lines[1:]:
        if line.startswith(f"nbgrader collect {ex01}"):  # the learners hand in through the exchange
            term.submit("ada", ex01, mistake, "2026-01-20 10:00:00")
            term.submit("bob", ex01, "correct", "2026-01-20 11:00:00")
            term.submit("grace", ex01, "correct", "2026-01-20 12:00:00")
            term.submit("ada", ex02, "correct", "2026-01-27 12:00:00")  # on time
            term.submit("bob", ex02, "correct", "2026-01-28 09:00:00")  # 16 h late
        if line.startswith("nbgrader collect --update"):  # ada fixes her answer and hands in again
            term.submit("ada", ex01, "correct", "2026-01-21 09:00:00")
            said["before regrade"] = grades.read_text(encoding="utf-8").splitlines()
        said[line] = term.run(line, prefix=lines[0])
        if line == "python -m autograder grade --course .":
            rows = {(r["student_id"], r["assignment_id"]): r for r in read_csv(grades)}
            assert float(rows[("ada", ex01)]["score"]) == full1 - lost
            assert float(rows[("bob", ex02)]["score"]) == 0 and float(rows[("bob", ex02)]["late_penalty"]) == full2
            assert float(rows[("ada", ex02)]["score"]) == full2
            # the table says why bob's correct answer scores 0: the late column, not an empty "failed"
            assert re.search(rf"^bob\s+{ex02}\s+0\s+{full2:g}\s+-{full2:g} \(late\)\s+graded$", said[line], re.M), said[
                line
            ]
        if "--from-zip" in line:
            assert "hoppergrace_103_5001_notes.txt: not a notebook (.ipynb), skipped" in said[line]
            # formgrader counts a zip's submission as it counts the exchange's (folders under submitted/)
            config = course_config(term.clone)  # as formgrader loads it: the course's, the machine's exchange
            config.CourseDirectory.root, config.Exchange.root = str(term.clone), str(term.exchange)
            api = NbGraderAPI(config=config)
            assert api.get_assignment(ex02)["num_submissions"] == 3  # ada, bob (exchange), grace (zip)
            with Gradebook(f"sqlite:///{term.clone / 'gradebook.db'}") as gb:
                assert len(gb.find_assignment(ex02).submissions) == 3
                assert (gb.find_student("grace").first_name, gb.find_student("grace").last_name) == ("Grace", "Hopper")
        if line.startswith("python -m autograder extension"):
            rows = {(r["student_id"], r["assignment_id"]): r for r in read_csv(grades)}
            assert float(rows[("bob", ex02)]["score"]) == full2

    regrade = next(v for k, v in said.items() if "--student ada" in k)
    assert f"regraded ada/{ex01}: {full1 - lost:g} → {full1:g}" in regrade
    after = grades.read_text(encoding="utf-8").splitlines()
    assert [r for r in after if not r.startswith(f"ada,{ex01},")] == [
        r for r in said["before regrade"] if not r.startswith(f"ada,{ex01},")
    ]

    canvas = list(csv.reader(open(term.clone / "grades-out" / "canvas.csv", newline="", encoding="utf-8")))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ex01, ex02]
    assert canvas[1][5:] == [f"{full1:g}", f"{full2:g}"]
    assert {row[3]: row[5:] for row in canvas[2:]} == {s: [f"{full1:g}", f"{full2:g}"] for s in ("ada", "bob", "grace")}
    # learners' names, from `nbgrader db student add` (ada) and the zip's roster (grace), as formgrader shows them
    assert {row[3]: row[0] for row in canvas[2:]} == {"ada": "Lovelace, Ada", "bob": "bob", "grace": "Hopper, Grace"}
    summary = {r["student_id"]: r["name"] for r in read_csv(term.clone / "grades-out" / "summary.csv")}
    assert summary == {"ada": "Lovelace, Ada", "bob": "", "grace": "Hopper, Grace"}

    ours = {(r["student_id"], r["assignment_id"]): float(r["score"]) for r in read_csv(grades)}
    theirs = {(r["student_id"], r["assignment"]): float(r["score"]) for r in read_csv(term.clone / "grades.csv")}
    assert theirs == ours and len(ours) == 6

    released = sorted((term.exchange / COURSE_ID / "feedback").glob("*.html"))
    assert len(released) == 5  # every exchange submission; grace's zip one is in grading-output/feedback
    venv = f'export PATH="{term.clone}/.venv/bin:$PATH"'
    term.run(f"nbgrader fetch_feedback {ex01} --course {COURSE_ID}", term.learners / "ada", venv)
    pages = sorted((term.learners / "ada" / ex01 / "feedback").glob(f"*/{ex01}.html"))
    assert pages and f"{full1:g} / {full1:g}" in pages[-1].read_text(encoding="utf-8")
