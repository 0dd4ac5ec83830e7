"""Does the GPU check's dry run write the checkpointing CSV with the documented columns and sane figures?

The dry run (tiny models on the CPU) is what a GPU session runs at full size; it takes about 30 s
on 2 cores, so it runs once per module.
"""

import csv
import math
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.checkpoint_measure import COLUMNS
from autograder.figures import load_rows

SCRIPT = Path(__file__).resolve().parent / "scripts" / "gpu_check.py"


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    """(exit code, output folder) of ``python tests/scripts/gpu_check.py --out TMP --dry-run --repeats 2``."""
    out = tmp_path_factory.mktemp("gpu-check")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out), "--dry-run", "--repeats", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    print(done.stdout[-3000:], done.stderr[-3000:])
    return done.returncode, out


def test_dry_run_succeeds_and_never_writes_gpu_figures(dry_run):
    """Does the dry run exit 0 and write checkpointing_dry_run.csv, never checkpointing_gpu.csv?"""
    code, out = dry_run
    assert code == 0
    assert (out / "checkpointing_dry_run.csv").is_file()
    assert not (out / "checkpointing_gpu.csv").exists()


def test_csv_has_the_documented_columns(dry_run):
    """Are the CSV's columns exactly COLUMNS, each named in the script's docstring?"""
    _, out = dry_run
    with open(out / "checkpointing_dry_run.csv", newline="", encoding="utf-8") as f:
        assert csv.DictReader(f).fieldnames == COLUMNS
    doc = SCRIPT.read_text(encoding="utf-8").split('"""')[1]
    assert all(column in doc for column in COLUMNS)


def test_every_model_has_every_segment_count_and_the_machine(dry_run):
    """Does each model have the rows 0 .. blocks, the CPU named as the device, and no allocator figure?"""
    rows = load_rows(dry_run[1] / "checkpointing_dry_run.csv")
    models = dict.fromkeys(r["model"] for r in rows)
    assert len(models) == 3
    for model in models:
        mine = [r for r in rows if r["model"] == model]
        assert [r["segments"] for r in mine] == list(range(mine[0]["blocks"] + 1))
        assert all(r["checkpointed"] == (r["segments"] >= 2) for r in mine)
    assert {r["device"] for r in rows} == {"cpu"} and all(r["torch_version"] for r in rows)
    assert all(r["peak_allocated_bytes"] is None and r["reserved_bytes"] is None for r in rows)


def test_checkpointing_lowers_the_saved_bytes(dry_run):
    """For every model, is the smallest saved-bytes peak with checkpointing below the plain one, and
    does one segment (nothing recomputed) save exactly as much as none?"""
    rows = load_rows(dry_run[1] / "checkpointing_dry_run.csv")
    for model in dict.fromkeys(r["model"] for r in rows):
        saved = {r["segments"]: r["saved_peak_bytes"] for r in rows if r["model"] == model}
        assert min(v for s, v in saved.items() if s >= 2) < saved[0] == saved[1]


def test_linear_stack_is_smallest_at_sqrt_n(dry_run):
    """For the 16 Linear-Tanh blocks, is the saved-bytes peak smallest at √16 = 4 segments?"""
    rows = [r for r in load_rows(dry_run[1] / "checkpointing_dry_run.csv") if "Tanh" in r["model"]]
    best = min((r for r in rows if r["segments"] >= 1), key=lambda r: (r["saved_peak_bytes"], r["segments"]))
    assert best["segments"] == math.isqrt(16)


def test_times_are_positive(dry_run):
    """Is every time a positive number of seconds, the minimum at most the median?"""
    for r in load_rows(dry_run[1] / "checkpointing_dry_run.csv"):
        assert 0 < r["seconds_min"] <= r["seconds_median"] and r["repeats"] == 2


def test_plot_is_written(dry_run):
    """Is the PNG written next to the CSV (matplotlib is part of the course)?"""
    png = dry_run[1] / "checkpointing_dry_run.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
