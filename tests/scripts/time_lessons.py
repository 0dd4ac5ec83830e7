"""Benchmark: how long "Run All Cells" takes for each notebook of notebooks/, as a learner runs it.
Not a test; run it by hand from the repository root (the start page's times come from it):

    PYTHONPATH=$PWD .venv/bin/python tests/scripts/time_lessons.py [--repeat N] [NN ...]

Each notebook is executed by nbclient (the engine under `jupyter nbconvert --execute` and nbval) in
a fresh kernel, from a copy in a temporary folder, so the committed notebooks are not touched. The
kernel's start is left out (JupyterLab starts it when the notebook opens); every cell is counted,
folded "Going deeper" sections included, since Run All runs them. Prints, per notebook, the best
of ``--repeat`` runs in seconds and its slowest cell; on a shared machine take the best of 3.
``NN`` keeps the notebooks whose name starts with it (``00 13``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]


def run_all(path: Path) -> tuple[float, int, float]:
    """Execute a copy of the notebook at ``path``; return (seconds for all cells, index of the
    slowest cell, its seconds). The kernel's start is not counted."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "notebooks" / path.name
        copy.parent.mkdir()
        shutil.copy(path, copy)
        nb = nbformat.read(copy, as_version=4)
        started: dict[int, float] = {}
        took: dict[int, float] = {}
        first: list[float] = []

        def on_start(cell, cell_index, **_):
            started[cell_index] = time.monotonic()
            if not first:
                first.append(started[cell_index])

        def on_done(cell, cell_index, **_):
            took[cell_index] = time.monotonic() - started[cell_index]

        client = NotebookClient(
            nb,
            timeout=600,
            kernel_name="python3",
            resources={"metadata": {"path": str(copy.parent)}},
            on_cell_start=on_start,
            on_cell_executed=on_done,
        )
        client.execute()
        end = time.monotonic()
    slowest = max(took, key=took.get)
    return end - first[0], slowest, took[slowest]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prefixes", nargs="*", help="notebook name prefixes (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per notebook; the best is printed")
    args = parser.parse_args(argv)
    paths = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if args.prefixes:
        paths = [p for p in paths if p.name.startswith(tuple(args.prefixes))]
    print(f"{'notebook':<32}{'Run All (s)':>12}   slowest cell")
    for path in paths:
        runs = [run_all(path) for _ in range(args.repeat)]
        seconds, cell, cell_seconds = min(runs)
        print(f"{path.stem:<32}{seconds:>12.1f}   cell {cell}: {cell_seconds:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
