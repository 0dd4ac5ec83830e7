"""Does the README run as written in a fresh clone? Its shell blocks are read from README.md and
run literally, line by line, in order, with nothing prepared that the README does not say: the
learner's (`./course lab` opens their copy of the start page) and the instructor's term (two
assignments, learners who fetch and submit through nbgrader's exchange, one late and then given an
extension, one regraded after a second submission, one handed in as a Canvas zip, the exports and
the feedback hand-out). Every output a line's comment quotes (``prints "..."``) must be in what
it printed; the grades, names and pages it makes are checked against the course's own sources."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import urllib.request
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.apps.api import NbGraderAPI

from autograder.grading.mistakes import MISTAKES
from autograder.grading.runs.batch import load_sources
from autograder.grading.runs.demo import build_demo_class
from autograder.grading.store.config import course_config
from autograder.lessons import COURSE_ROOT

from .course_lab import served
from .files import clone_files, fresh_jupyter_env
from .grading.conftest import require_sandbox
from .test_course import clean_clone

README = Path(__file__).parents[1] / "README.md"


def readme_blocks(heading: str) -> list[str]:
    """The ```bash blocks of the README's section ``## heading``, in order."""
    text = README.read_text(encoding="utf-8")
    sections = {s.split("\n", 1)[0].strip(): s for s in re.split(r"^## ", text, flags=re.MULTILINE)[1:]}
    assert heading in sections, f"README.md has no section '## {heading}'"
    return re.findall(r"^```bash\n(.*?)^```", sections[heading], re.DOTALL | re.MULTILINE)


def command_lines(block: str) -> list[str]:
    """The lines of a block that run something (comment-only and blank lines left out), as written."""
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def comment(line: str) -> str:
    """The shell comment at the end of ``line``: from the first ``#`` outside quotes after a space."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[i + 1 :]
    return ""


def quoted_outputs(line: str) -> list[str]:
    """What the line's comment says it prints: each "..." after the word ``prints``."""
    said = comment(line).partition("prints ")[2]
    return re.findall(r'"([^"]*)"', said)


def _words(text: str) -> str:
    """Whitespace collapsed: a table's column widths are the run's, its words the README's."""
    return " ".join(text.split())


def printed_as_quoted(line: str, output: str) -> None:
    for quote in quoted_outputs(line):
        assert _words(quote) in _words(output), f"README: {line}\nsays it prints {quote!r}; it printed:\n{output}"


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


class Clone:
    """A fresh clone of the course and a shell in it: no PYTHONPATH (its own autograder package),
    Jupyter's folders empty as on a learner's first day."""

    def __init__(self, tmp: Path):
        self.root = clean_clone(tmp / "course")
        files = [self.root / name for name in clone_files(COURSE_ROOT)]
        self.committed = {path: path.read_bytes() for path in files if path.is_file() and not path.is_symlink()}
        self.env = fresh_jupyter_env(os.environ, tmp / "jupyter")
        self.env.pop("PYTHONPATH", None)
        self.exported: list[str] = []  # the block's `export` lines, which later lines' shells inherit

    def run(self, line: str) -> str:
        """Run one README line as written (in a shell holding the block's earlier exports); its output."""
        if line.startswith("export "):
            self.exported.append(line)
        done = subprocess.run(
            ["bash", "-e", "-c", "\n".join([*self.exported, line])],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        said = done.stdout + done.stderr
        assert done.returncode == 0, f"README: {line}\nexited with {done.returncode}:\n{said[-4000:]}"
        assert "Outdated config" not in said, f"README: {line}\nwarns of the course's own configuration:\n{said}"
        printed_as_quoted(line, said)
        return said


def test_the_readme_quotes_are_read_from_each_lines_comment():
    """Does the reader of the README's comments find a quote after `prints`, and no `#` inside a
    quoted argument taken for a comment?"""
    line = """nbgrader db assignment add a --duedate "$(date '+%F #1')"   # due now: prints "x  y" and "z" """
    assert comment(line).startswith(" due now") and quoted_outputs(line) == ["x  y", "z"]
    assert quoted_outputs("python -m autograder grade --course .   # grade submitted/") == []


def test_the_learners_block_opens_their_copy_of_the_start_page(tmp_path):
    """`./course lab`, as the README's first block writes it: does it make the learner's copies
    (my-work/) and print the URL of their start page, which JupyterLab serves? (`./course test` is
    the whole suite: CI runs it as its own step.)"""
    clone = Clone(tmp_path)
    (block,) = readme_blocks("Two commands")
    lines = command_lines(block)
    assert [line.split("#")[0].strip() for line in lines] == ["./course lab", "./course test"]
    with served(["bash", "-c", lines[0]], clone.root, clone.env, tmp_path / "lab.log") as url:
        assert "/lab/tree/my-work/notebooks/00_start.ipynb?token=" in url
        with urllib.request.urlopen(url, timeout=60) as page:
            assert page.status == 200
        printed_as_quoted(lines[0], (tmp_path / "lab.log").read_text())
    assert (clone.root / "my-work" / "notebooks" / "00_start.ipynb").is_file()
    assert (clone.root / "my-work" / "exercises" / "ex01_graph" / "ex01_graph.ipynb").is_file()


def _points(source, grade_ids=None) -> float:
    """The points of ``source``'s graded cells (of ``grade_ids`` only, when given)."""
    graded = [c.metadata.nbgrader for c in source.cells if c.metadata.get("nbgrader", {}).get("grade")]
    return sum(float(m.get("points", 0)) for m in graded if grade_ids is None or m.grade_id in grade_ids)


def test_the_readmes_term_runs_as_written(tmp_path):
    require_sandbox()
    clone = Clone(tmp_path)
    blocks = [b for b in readme_blocks("A term with this course") if "autograder grade --course ." in b]
    assert len(blocks) == 1, "README.md's term section has no ```bash block that grades --course ."
    lines = command_lines(blocks[0])
    ex01, ex02 = "ex01_graph", "ex02_leaves"
    sources = load_sources(clone.root / "solutions")
    # ada's mistake, as the README names it, and the points it costs, from the course's own sources
    (mistake,) = re.findall(rf"sample_learners.py submit ada {ex01} --answers (\S+)", blocks[0])
    expected = build_demo_class(tmp_path / "demo", root=clone.root)
    assert mistake in MISTAKES[ex01]
    full1, full2 = _points(sources[ex01][1]), _points(sources[ex02][1])
    lost = _points(sources[ex01][1], expected[(mistake, ex01)]["fails"])
    grades = clone.root / "grading-output" / "grades.csv"
    said: dict[str, str] = {}
    for line in lines:
        if line.startswith("nbgrader collect --update"):
            said["before regrade"] = grades.read_text(encoding="utf-8")
        said[line] = clone.run(line)
        command = line.split("#")[0].strip()
        if command == "python -m autograder grade --course .":
            rows = {(r["student_id"], r["assignment_id"]): r for r in read_csv(grades)}
            assert float(rows[("ada", ex01)]["score"]) == full1 - lost > 0
            assert float(rows[("bob", ex01)]["score"]) == full1
            # bob's correct but late work: the penalty takes it all, and the table says why
            assert float(rows[("bob", ex02)]["score"]) == 0 and float(rows[("bob", ex02)]["late_penalty"]) == full2
            assert re.search(rf"^bob\s+{ex02}\s+0\s+{full2:g}\s+-{full2:g} \(late, 36 h\)\s+graded$", said[line], re.M)
        if "--from-zip" in command:
            # formgrader counts a zip's submission as it counts the exchange's (folders under submitted/)
            config = course_config(clone.root)  # as formgrader loads it
            config.CourseDirectory.root = str(clone.root)
            api = NbGraderAPI(config=config)
            assert api.exchange_is_functional  # the course id and the exchange: release and collect work
            assert api.get_assignment(ex02)["num_submissions"] == 2  # bob (exchange), grace (zip)
            with Gradebook(f"sqlite:///{clone.root / 'gradebook.db'}") as gb:
                assert len(gb.find_assignment(ex02).submissions) == 2
                assert (gb.find_student("grace").first_name, gb.find_student("grace").last_name) == ("Grace", "Hopper")
        if command.startswith("python -m autograder extension"):
            rows = {(r["student_id"], r["assignment_id"]): r for r in read_csv(grades)}
            assert float(rows[("bob", ex02)]["score"]) == full2 and rows[("bob", ex02)]["late"] == ""

    regrade = next(v for k, v in said.items() if "--student ada" in k)
    assert f"regraded ada/{ex01}: {full1 - lost:g} → {full1:g}" in regrade
    after = grades.read_text(encoding="utf-8").splitlines()
    assert [r for r in after if not r.startswith(f"ada,{ex01},")] == [
        r for r in said["before regrade"].splitlines() if not r.startswith(f"ada,{ex01},")
    ]

    canvas = list(csv.reader(open(clone.root / "grades-out" / "canvas.csv", newline="", encoding="utf-8")))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ex01, ex02]
    assert canvas[1][5:] == [f"{full1:g}", f"{full2:g}"]
    assert {row[3]: row[5:] for row in canvas[2:]} == {
        "ada": [f"{full1:g}", ""],
        "bob": [f"{full1:g}", f"{full2:g}"],
        "grace": ["", f"{full2:g}"],
    }
    # learners' names, from `nbgrader db student add` (ada) and the zip's roster (grace), as formgrader shows them
    assert {row[3]: row[0] for row in canvas[2:]} == {"ada": "Lovelace, Ada", "bob": "bob", "grace": "Hopper, Grace"}
    summary = {r["student_id"]: r["name"] for r in read_csv(clone.root / "grades-out" / "summary.csv")}
    assert summary == {"ada": "Lovelace, Ada", "bob": "", "grace": "Hopper, Grace"}

    ours = {(r["student_id"], r["assignment_id"]): float(r["score"]) for r in read_csv(grades)}
    theirs = {(r["student_id"], r["assignment"]): float(r["score"]) for r in read_csv(clone.root / "grades.csv")}
    assert len(ours) == 4 and {k: v for k, v in theirs.items() if k in ours} == ours
    assert all(v == 0 for k, v in theirs.items() if k not in ours)  # nbgrader's rows of work never handed in

    released = sorted((clone.root / "exchange" / "torch101" / "feedback").glob("*.html"))
    assert len(released) == 3  # every exchange submission; grace's zip one is in grading-output/feedback
    pages = sorted((clone.root / "sample-learners" / "ada" / ex01 / "feedback").glob(f"*/{ex01}.html"))
    assert pages and f"{full1:g} / {full1:g}" in pages[-1].read_text(encoding="utf-8")

    # nothing committed was changed on the way (no setting appended to nbgrader_config.py)
    changed = [path for path, data in clone.committed.items() if path.read_bytes() != data]
    assert changed == []
