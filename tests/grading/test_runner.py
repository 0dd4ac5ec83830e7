"""Does the forked runner run cells in order, report what each did, and survive what they do?"""
from autograder.grading.runner import MAX_OUTPUT, run_cells, warm_up

warm_up()


def test_cells_share_a_namespace_and_report_outputs(tmp_path):
    """Do cells see each other's names, with stdout, stderr, results and errors reported per cell?"""
    run = run_cells(["x = 2\nprint('hi')", "import sys; print('w', file=sys.stderr)", "x * 3", "1 / 0"],
                    str(tmp_path))
    assert run.status == "ok" and all(c.finished for c in run.cells)
    assert run.cells[0].outputs == [{"output_type": "stream", "name": "stdout", "text": "hi\n"}]
    assert run.cells[1].outputs[0]["name"] == "stderr"
    assert "6" in run.cells[2].outputs[0]["text"]
    assert run.cells[3].error == ("ZeroDivisionError", "division by zero")
    assert run.cells[3].outputs[-1]["traceback"] == [], "tracebacks could quote hidden tests"


def test_checks_report_the_values_they_compared(tmp_path):
    """Does a check called in a cell report its received value as plain JSON?"""
    run = run_cells(["import torch\nfrom autograder import check",
                     "check.tensor(torch.tensor([2.0]), torch.tensor([2.0]), 'x.grad')"], str(tmp_path))
    (name, value, tolerance), = run.cells[1].exports
    assert name == "x.grad" and value["__tensor__"]["data"] == [2.0] and tolerance == {}


def test_crashes_and_timeouts_name_the_cell(tmp_path):
    """Are an os._exit, a segfault and an endless loop reported with the cell they happened in?"""
    for source, status in [("import os; os._exit(3)", "crashed (exit code 3)"),
                           ("import ctypes; ctypes.string_at(0)", "crashed (signal 11)"),
                           ("while True: pass", "timeout")]:
        run = run_cells(["x = 1", source, "y = 2"], str(tmp_path), cell_timeout=2)
        assert (run.status, run.cell) == (status, 1)
        assert [c.finished for c in run.cells] == [True, False, False]


def test_notebook_time_limit(tmp_path):
    """Does the whole-notebook limit stop cells that are each within the per-cell limit?"""
    run = run_cells(["import time; time.sleep(0.8)"] * 5, str(tmp_path), cell_timeout=5, total_timeout=2)
    assert run.status == "notebook time limit" and run.cell == 2


def test_memory_limit_turns_a_hog_into_an_error(tmp_path):
    """Does allocating past the memory limit raise in the cell instead of exhausting the machine?"""
    run = run_cells(["import torch\nx = torch.empty(2 ** 33)", "ok = True"], str(tmp_path), memory_limit=2 ** 30)
    assert run.status == "ok" and "can't allocate memory" in run.cells[0].error[1]


def test_huge_output_is_cut(tmp_path):
    """Is a cell's output cut at MAX_OUTPUT characters?"""
    run = run_cells(["print('x' * 10_000_000)"], str(tmp_path))
    assert len(run.cells[0].outputs[0]["text"]) < MAX_OUTPUT + 100


def test_later_cells_are_not_visible_to_earlier_ones(tmp_path):
    """Is a later cell's text (a hidden test) out of reach of code running before it?"""
    probe = ("import gc\nfound = any(isinstance(o, str) and 'SECRET-42' in o and 'probe' not in o\n"
             "            for o in gc.get_objects())\nprint(found)")
    run = run_cells([probe, "secret = 'SECRET-42'"], str(tmp_path))
    assert run.cells[0].outputs[0]["text"] == "False\n"
