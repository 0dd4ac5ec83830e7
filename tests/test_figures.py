"""Does the figures module read a checkpointing CSV and summarize it right?

The CSV comes from the real measuring code (``measure_model`` on tiny CPU models), written by
``tests/scripts/gpu_check.py``'s own writer; allocator peaks, which only CUDA has, are filled in by the
tests from known values to check the arithmetic.
"""

import copy
import importlib.util
from pathlib import Path

import pytest
import torch

from autograder import figures
from autograder.checkpoint_measure import COLUMNS, measure_model
from autograder.explore.memory import stack

SCRIPT = Path(__file__).resolve().parent / "scripts" / "gpu_check.py"


@pytest.fixture(scope="module")
def rows_csv(tmp_path_factory):
    """A CSV of 8 Linear(16)-Tanh blocks on a [8, 16] batch, every segment count (CPU)."""
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    rows = measure_model("8 x Linear(16)-Tanh", stack(8, width=16), torch.randn(8, 16), repeats=1)
    path = tmp_path_factory.mktemp("figures") / "checkpointing.csv"
    script.write_csv(path, rows, COLUMNS)
    return path, rows, script


def test_load_rows_round_trips_the_measured_rows(rows_csv):
    """Does load_rows give back exactly the rows written (ints, floats to 1e-6, None, booleans)?"""
    path, rows, _ = rows_csv
    loaded = figures.load_rows(path)
    assert [{k: v for k, v in r.items() if not k.startswith("seconds")} for r in loaded] == [
        {k: v for k, v in r.items() if not k.startswith("seconds")} for r in rows
    ]
    assert all(abs(a["seconds_median"] - b["seconds_median"]) < 1e-6 for a, b in zip(loaded, rows))


def test_absent_file_gives_none_and_the_message(tmp_path):
    """Without the CSV, is there no row, and does the summary say no GPU figures were measured?"""
    assert figures.load_rows(tmp_path / "absent.csv") is None
    assert figures.summary_text(None) == figures.NO_GPU_FIGURES
    assert "No GPU figures" in figures.NO_GPU_FIGURES


def test_a_csv_without_the_columns_is_refused(tmp_path):
    """Does a CSV lacking columns raise ValueError naming them?"""
    path = tmp_path / "old.csv"
    path.write_text("segments,peak_bytes\n0,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="saved_peak_bytes"):
        figures.load_rows(path)


def test_cpu_rows_summarize_on_saved_bytes(rows_csv):
    """On CPU rows, is the basis the saved bytes, with the best count the smallest saved peak?"""
    _, rows, _ = rows_csv
    (s,) = figures.summarize(rows)
    saved = {r["segments"]: r["saved_peak_bytes"] for r in rows}
    assert s.basis == "saved bytes" and s.measured_minus_saved is None
    assert s.best_peak == min(v for k, v in saved.items() if k >= 1) == saved[s.best_segments]
    assert s.plain_peak == saved[0] and s.sqrt_segments == 2 and s.sqrt_peak == saved[2]
    assert s.time_overhead == pytest.approx(rows[s.best_segments]["seconds_median"] / rows[0]["seconds_median"])


def test_allocator_peaks_take_precedence(rows_csv):
    """With allocator peaks (as on CUDA), are the best count, peaks and the excess over the
    prediction computed from them?"""
    _, rows, _ = rows_csv
    cuda = copy.deepcopy(rows)
    for r in cuda:  # an allocator peak with its minimum at 3 segments, saved bytes unchanged
        r.update(device="cuda", device_name="a GPU", peak_allocated_bytes=1000 + 100 * abs(r["segments"] - 3))
    (s,) = figures.summarize(cuda)
    assert s.basis == "allocator" and s.best_segments == 3 and s.best_peak == 1000
    assert s.plain_peak == 1300 and s.measured_minus_saved == 1000 - rows[3]["saved_peak_bytes"]
    text = figures.summary_text(cuda)
    assert "a GPU (cuda)" in text and "smallest at 3 segments" in text and "saved-bytes prediction" in text


def test_summarize_needs_a_plain_row(rows_csv):
    """Does a model without its segments-0 row raise ValueError?"""
    _, rows, _ = rows_csv
    with pytest.raises(ValueError):
        figures.summarize(rows[1:])


def test_committed_cpu_figures_have_the_same_shape():
    """Does the committed CPU CSV load in the same shape and summarize to its √16 minimum?"""
    rows = figures.cpu_rows()
    assert rows is not None and set(rows[0]) == set(COLUMNS)
    (s,) = figures.summarize(rows)
    assert s.best_segments == 4 and s.basis == "saved bytes"


def test_plot_has_two_axes_per_model_and_the_sqrt_line(rows_csv, tmp_path):
    """Does plot draw memory and time axes per model, with a √n line, and save the PNG?"""
    import matplotlib

    matplotlib.use("Agg")
    _, rows, _ = rows_csv
    fig = figures.plot(rows + [dict(r, model="other") for r in rows], tmp_path / "f.png")
    assert len(fig.axes) == 4 and (tmp_path / "f.png").is_file()
    assert any("√n" in t.get_text() for t in fig.axes[0].get_legend().get_texts())


def test_table_has_a_line_per_segment_count(rows_csv):
    """Does table print a header and one line per segment count, the saved peak in inputs?"""
    _, rows, _ = rows_csv
    lines = figures.table(rows).splitlines()
    assert len(lines) == 2 + len(rows) and lines[2].split()[0] == "none"
    assert float(lines[2].split()[-2]) == pytest.approx(rows[0]["saved_peak_bytes"] / rows[0]["input_bytes"], abs=0.05)


def test_gpu_rows_refuse_figures_not_measured_on_cuda(rows_csv, tmp_path):
    """Does gpu_rows return None without the file, and refuse a CPU (dry-run) CSV?"""
    path, _, _ = rows_csv
    assert figures.gpu_rows(tmp_path / "absent.csv") is None
    with pytest.raises(ValueError, match="not measured on a GPU"):
        figures.gpu_rows(path)


def test_gpu_rows_read_cuda_figures(rows_csv, tmp_path):
    """Does gpu_rows give back rows measured on CUDA (here: CPU rows given allocator figures)?"""
    _, rows, script = rows_csv
    cuda = [
        dict(
            r,
            device="cuda",
            device_name="a GPU",
            peak_allocated_bytes=r["saved_peak_bytes"] + 7,
            baseline_allocated_bytes=1,
            reserved_bytes=2,
        )
        for r in rows
    ]
    script.write_csv(tmp_path / "gpu.csv", cuda, COLUMNS)
    loaded = figures.gpu_rows(tmp_path / "gpu.csv")
    assert [r["peak_allocated_bytes"] for r in loaded] == [r["saved_peak_bytes"] + 7 for r in rows]
