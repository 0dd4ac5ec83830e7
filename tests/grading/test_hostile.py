"""Do broken, runaway and hostile submissions of the real exercises get a fair grade and a status
a person understands, without changing the submission or earning more than their answers do?"""

import hashlib
import html
import json

import nbformat
import pytest

from autograder.grading import status
from autograder.grading.judge.assemble import is_answer, is_test
from autograder.grading.judge.grade_one import grade_notebook, solution_records
from autograder.grading.mistakes import MISTAKES
from autograder.grading.out.feedback import feedback_html
from autograder.grading.runs.batch import load_sources
from autograder.grading.runs.demo import build_demo_class
from autograder.grading.sandbox.container import Sandbox
from autograder.grading.sandbox.limits import Limits
from autograder.lessons import COURSE_ROOT

from .pages import hidden_test_lines

ASSIGNMENT = "ex01_graph"
SOURCE = load_sources(COURSE_ROOT / "solutions")[ASSIGNMENT][1]
FULL = sum(c.metadata["nbgrader"]["points"] for c in SOURCE.cells if is_test(c))


class Demo:
    """The demo class's ex01 notebooks: ``demo[student]`` reads a fresh copy each time."""

    def __init__(self, folder):
        self.paths = {p.parts[-3]: p for p in folder.glob(f"*/{ASSIGNMENT}/*.ipynb")}

    def __getitem__(self, student):
        return nbformat.read(self.paths[student], as_version=4)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo")
    build_demo_class(folder)
    return Demo(folder)


@pytest.fixture(scope="module")
def expected(sandbox):
    """The records of the solution's run of ex01, made once for the module."""
    return solution_records(SOURCE, sandbox, Limits())


def grade_file(folder, notebook, expected, sandbox, limits):
    """Grade `notebook` (a NotebookNode, or raw bytes) and check the file is left unchanged."""
    path = folder / f"{ASSIGNMENT}.ipynb"
    path.write_bytes(notebook if isinstance(notebook, bytes) else nbformat.writes(notebook).encode())
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    result = grade_notebook(path, SOURCE, expected, "student", ASSIGNMENT, sandbox, limits)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before, "the submission was modified"
    return result


@pytest.fixture
def grade(sandbox, expected, tmp_path):
    """``grade(notebook, limits=Limits(), box=the module's sandbox)``: :func:`grade_file` in
    ``tmp_path`` against the solution's records."""
    return lambda notebook, limits=Limits(), box=sandbox: grade_file(tmp_path, notebook, expected, box, limits)


def cells(nb, kind):
    return [i for i, c in enumerate(nb.cells) if kind(c)]


def answer(nb, n):
    return nb.cells[cells(nb, is_answer)[n]]


# --- structure edits: the answers are intact, so the marks are too --------------------------------


def delete_test_cell(nb):
    del nb.cells[cells(nb, is_test)[0]]


def turn_test_cell_into_markdown(nb):
    i = cells(nb, is_test)[0]
    nb.cells[i] = nbformat.v4.new_markdown_cell(nb.cells[i].source, metadata=nb.cells[i].metadata)


def move_test_above_answer(nb):
    i, j = cells(nb, is_test)[0], cells(nb, is_answer)[0]
    nb.cells.insert(j, nb.cells.pop(i))


def duplicate_answer(nb):
    i = cells(nb, is_answer)[0]
    nb.cells.insert(i + 1, nbformat.from_dict(json.loads(json.dumps(nb.cells[i]))))


def split_answer(nb):
    i = cells(nb, is_answer)[2]  # count_nodes: a helper in one cell, the function in the next
    first = nbformat.from_dict(json.loads(json.dumps(nb.cells[i])))
    first.source = "def _visit(node, seen):\n    return None\n"
    nb.cells.insert(i, first)


def rename_grade_id(nb):
    answer(nb, 1).metadata["nbgrader"]["grade_id"] = "my_answer"


def strip_metadata(nb):
    for cell in nb.cells:
        cell.metadata = {}


def raise_points(nb):
    for i in cells(nb, is_test):
        nb.cells[i].metadata["nbgrader"]["points"] = 100


def nbformat_44_without_ids(nb):
    nb.nbformat_minor = 4
    for cell in nb.cells:
        cell.pop("id", None)


def scratch_cells_that_raise(nb):
    for i in reversed(cells(nb, is_answer)):
        nb.cells.insert(i + 1, nbformat.v4.new_code_cell("1 / 0"))
        nb.cells.insert(i + 1, nbformat.v4.new_code_cell("undefined_name + 1"))


@pytest.mark.parametrize(
    "edit",
    [
        delete_test_cell,
        turn_test_cell_into_markdown,
        move_test_above_answer,
        duplicate_answer,
        split_answer,
        rename_grade_id,
        strip_metadata,
        raise_points,
        nbformat_44_without_ids,
        scratch_cells_that_raise,
    ],
)
def test_structure_edits_keep_the_marks_the_answers_earn(demo, grade, edit):
    """Is a correct notebook whose structure the learner edited still given full marks, and
    never more (points come from the source)?"""
    nb = demo["correct"]
    edit(nb)
    result = grade(nb)
    assert (result.status, result.score, result.max_score) == ("graded", FULL, FULL), [
        q.message for q in result.questions
    ]


def helper_cell(nb, gid):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)


def test_an_edited_check_helper_cell_is_graded_as_the_source_wrote_it(demo, grade):
    """Does a wrong prediction still fail when the learner rewrote the question's check helpers (the
    collapsed, locked cell above the test) so that the expected counts are the predicted ones? The
    graded notebook takes read-only cells from the source."""
    nb = demo["ex01-q1-accumulate-per-use"]
    helper_cell(nb, "q1_helpers").source = (
        "def counts_by_input(p):\n    return p\n\n"
        "def measured(x):\n    return predicted_counts()['x_a' if x[0] == 1 else 'x_b']\n\n"
        "def reasons(x):\n    return {}\n"
    )
    result = grade(nb)
    assert [q.score == 0 for q in result.questions] == [True, False, False], [q.message for q in result.questions]


def test_a_learners_cell_below_the_check_helpers_reaches_no_reference(demo, grade):
    """Does a cell the learner adds right below a question's check helpers find only placeholders where
    the helpers' references are (withheld from the learner's process, as in test cells)?"""
    nb = demo["correct"]
    index = nb.cells.index(helper_cell(nb, "q1_helpers"))
    probe = "print('probe', measured(torch.tensor([1.0, -1.0])) is check.WITHHELD, reasons is check.WITHHELD)"
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(probe))
    result = grade(nb)
    cell = next(c for c in result.notebook.cells if c.cell_type == "code" and c.source == probe)
    printed = [o.get("text", "") for o in cell.outputs]
    assert printed == ["probe True True\n"], printed
    assert result.score == FULL


# --- broken files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content", [b'{"cells": [{"cell_type": "code", "sou', b"\xff\xfe not utf-8 \x80", b"", b"[1, 2, 3]"]
)
def test_broken_files_get_an_unreadable_status(tmp_path, content):
    """Are truncated JSON, invalid UTF-8, an empty file and a non-notebook reported as
    unreadable, with 0 of the full points?"""
    result = grade_file(tmp_path, content, {}, None, Limits())  # nothing runs: no sandbox needed
    assert result.status.startswith("unreadable") and (result.score, result.max_score) == (0, FULL)
    assert "unreadable" in feedback_html(result)


def test_a_cut_off_notebook_is_said_to_be_cut_off():
    """Does the status of truncated JSON say in words what is wrong, beside nbformat's error type?"""
    with pytest.raises(ValueError) as raised:
        nbformat.reads('{"cells": [{"cell_type": "code", "sou', as_version=4)
    assert status.unreadable(raised.value) == (
        "unreadable: not a notebook's JSON: the file is cut off, or is not a notebook (NotJSONError)"
    )


# --- runaway code: the other questions are still graded ---------------------------------------


@pytest.mark.parametrize(
    "body,status",
    [
        ("while True:\n        pass", "timeout in q2_check"),
        ("import os\n    os._exit(3)", "crashed (exit code 3) in q2_check"),
        ("import ctypes\n    ctypes.string_at(0)", "crashed (signal 11) in q2_check"),
    ],
)
def test_runaway_answer_costs_only_its_question(demo, grade, body, status):
    """Does an answer that loops forever or kills its process lose its own question only, with a
    status naming where it stopped?"""
    nb = demo["correct"]
    answer(nb, 1).source = f"def grad_wb(w, b, x, y):\n    {body}\n"
    result = grade(nb, Limits(cell_timeout=3))
    assert result.status == status
    assert [q.score > 0 for q in result.questions] == [True, False, True]
    assert result.questions[1].message == f"stopped: {status.split(' in ')[0]}"


def test_whole_notebook_time_limit(demo, grade):
    """Does a notebook that is slow in every cell stop at the notebook's time limit?"""
    nb = demo["correct"]
    for i in cells(nb, is_answer):
        nb.cells[i].source += "\nimport time\ntime.sleep(2)\n"
    result = grade(nb, Limits(cell_timeout=10, total_timeout=3))
    assert "notebook time limit" in result.status and result.score < FULL


def test_memory_hog_fails_its_cell_only(demo, grade):
    """Does allocating far more than the memory limit fail with a memory error, not kill the
    grader, and leave the other answers' marks?"""
    nb = demo["correct"]
    answer(nb, 0).source += "\nhog = torch.empty(2 ** 34)\n"  # 64 GiB of float32
    limits = Limits(memory=2**30)
    with Sandbox(limits) as small:
        result = grade(nb, limits, small)
    assert result.status == "graded" and result.score == FULL


def test_huge_output_is_cut(demo, grade):
    """Is an answer that prints 20 MB graded normally, with its output cut?"""
    nb = demo["correct"]
    answer(nb, 0).source += "\nprint('x' * 20_000_000)\n"
    result = grade(nb)
    assert result.score == FULL
    assert max(len(o.get("text", "")) for c in result.notebook.cells for o in c.get("outputs", [])) < 200_000


# --- gaming: never more than the answers earn ---------------------------------------------------

GAMES = {
    "comparisons": "import math, torch, torch.testing\n"
    "torch.testing.assert_close = lambda *a, **k: None\n"
    "torch.allclose = lambda *a, **k: True\n"
    "torch.equal = lambda *a, **k: True\n"
    "math.isclose = lambda *a, **k: True\n",
    "autograder": "import autograder.check, autograder.compare\n"
    "for name in ('tensor', 'grads', 'value', 'nbytes', 'predictions'):\n"
    "    setattr(autograder.check, name, lambda *a, **k: print('OK'))\n"
    "autograder.check.call = lambda fn, *a, **k: None\n"
    "autograder.compare.diagnose = lambda *a, **k: None\n",
    "import": "import builtins, types\n_real = builtins.__import__\n"
    "fake = types.SimpleNamespace(**{n: (lambda *a, **k: None) for n in "
    "('call', 'tensor', 'grads', 'value', 'predictions')})\n"
    "builtins.__import__ = lambda name, *a, **k: fake if 'autograder' in name else _real(name, *a, **k)\n"
    "import sys\nsys.modules['autograder.check'] = fake\ncheck = fake\n",
    "run_cell": "from IPython.core.interactiveshell import InteractiveShell, ExecutionResult, ExecutionInfo\n"
    "def _skip(self, raw_cell, *a, **k):\n"
    "    return ExecutionResult(ExecutionInfo(raw_cell, False, False, False, None))\n"
    "InteractiveShell.run_cell = _skip\nget_ipython().run_cell = lambda *a, **k: _skip(None, *a)\n",
    "transformer": "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n",
    "reporter": "import autograder.check as _c\n_c.report_to(None)\n",
    # a hook that claims every check received what it expected; in the learner's process the
    # expected values are WITHHELD, so what it claims is the placeholder, never a reference
    "forged records": "import autograder.check as _c\n_hook = _c._hook\n"
    "def _forge(record):\n"
    "    record.received = record.expected\n"
    "    _hook(record)\n"
    "_c.report_to(_forge)\n",
}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_gaming_never_scores_above_the_answers(demo, grade, game):
    """Does a blank or wrong submission that replaces comparisons, autograder, imports, IPython's
    cell execution or the checks' reporting (dropping or forging records) score no more than the
    same answers without the trick?"""
    for student in ("blank", "ex01-q2-sign"):
        honest = grade(demo[student]).score
        nb = demo[student]
        answer(nb, 0).source = GAMES[game] + "\n" + answer(nb, 0).source
        assert grade(nb).score <= honest, (game, student)


def test_files_written_next_to_the_notebook_stay_in_a_scratch_folder(demo, grade, tmp_path):
    """Does an answer that writes and overwrites files next to the notebook change nothing
    under the submission's folder?"""
    nb = demo["correct"]
    answer(nb, 0).source += (
        "\nimport os\nfor name in os.listdir('.'):\n    open(name, 'w').write('')\n"
        f"open('{ASSIGNMENT}.ipynb', 'w').write('gone')\n"
    )
    result = grade(nb)
    assert result.score == FULL
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{ASSIGNMENT}.ipynb"]


# --- noise and privacy --------------------------------------------------------------------------


def test_warnings_and_stderr_never_zero_a_correct_answer(demo, grade):
    """Is a correct notebook that warns and prints on stderr in every answer given full marks?"""
    nb = demo["correct"]
    for i in cells(nb, is_answer):
        nb.cells[
            i
        ].source += "\nimport sys, warnings\nwarnings.warn('noise', UserWarning)\nprint('noise', file=sys.stderr)\n"
    assert grade(nb).score == FULL


@pytest.mark.parametrize("student", sorted(MISTAKES[ASSIGNMENT]))
def test_feedback_never_shows_hidden_tests(demo, grade, student):
    """Does no line of any hidden test appear in the feedback of a failing submission, while
    the page still names the failed question and why?"""
    result = grade(demo[student])
    page = html.unescape(feedback_html(result))
    hidden = hidden_test_lines(ASSIGNMENT)
    assert hidden and not [line for line in hidden if line in page]
    for gid, phrase in MISTAKES[ASSIGNMENT][student]["fails"].items():
        question = "Question " + gid.removeprefix("q").removesuffix("_check")  # q2_check -> Question 2
        assert f"<tr><td>{question}</td>" in page and phrase in page
