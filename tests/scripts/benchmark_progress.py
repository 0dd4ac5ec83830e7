"""Benchmark: ``python -m autograder progress`` on a learner's fourteen exercises, as typed. Not a
test; run it by hand from the repository root:

    .venv/bin/python tests/scripts/benchmark_progress.py [--answers blank|solved] [--repeat N] [--kernels]

It copies ``exercises/`` and ``solutions/`` into a temporary course folder, writes the learner's
``my-work/exercises/`` (every exercise blank, as released, or solved with the solutions' answers),
and times the command end to end (the interpreter's start included) three ways:

- hidden tests, the first time: the solutions run once for their records (saved in ``my-work/``);
- hidden tests again: the records are read back, only the learner's notebooks run;
- visible checks only (a class image, ``--visible-only``).

Each is the best of ``--repeat`` runs (a shared machine is noisy), with the command's own split
(start-up, the solutions' records, the notebooks). ``--kernels`` also times what the command
replaces: each notebook executed in a fresh Jupyter kernel, one after the other (``jupyter nbconvert
--execute``, fourteen cold starts and fourteen ``import torch``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from autograder.grading.judge.assemble import grade_id, is_answer  # noqa: E402
from autograder.grading.runs.demo import solution_answer  # noqa: E402


def course_folder(root: Path, answers: str) -> Path:
    """A course folder with the release, the sources and the learner's fourteen exercises."""
    course = root / "course"
    for top in ("exercises", "solutions"):
        shutil.copytree(REPO / top, course / top, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for notebook in sorted((REPO / "exercises").glob("*/*.ipynb")):
        nb = nbformat.read(notebook, as_version=4)
        if answers == "solved":
            source = nbformat.read(REPO / "solutions" / notebook.parent.name / notebook.name, as_version=4)
            solved = {grade_id(c): solution_answer(c.source) for c in source.cells if is_answer(c)}
            for cell in nb.cells:
                if is_answer(cell):
                    cell.source = solved[grade_id(cell)]
        mine = course / "my-work" / "exercises" / notebook.parent.name / notebook.name
        mine.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, mine)
    return course


def timed(command: list[str], cwd: Path) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", choices=("blank", "solved"), default="solved")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--kernels", action="store_true", help="also time fourteen fresh Jupyter kernels")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchmark-progress-") as tmp:
        course = course_folder(Path(tmp), args.answers)
        progress = [sys.executable, "-m", "autograder", "progress", "--course", str(course)]
        runs = ("hidden tests, records made", "hidden tests, records saved", "visible checks only")
        best = {}
        for _ in range(args.repeat):
            for name in runs:
                saved = course / "my-work" / ".references.json"
                if name.endswith("made") and saved.exists():
                    saved.unlink()  # the solutions run again for their records
                command = [*progress, "--visible-only"] if name.startswith("visible") else progress
                seconds, out = timed(command, course)
                split = re.search(r"Checked 14 exercises in .*", out)
                head = out.splitlines()[0]
                if name not in best or seconds < best[name][0]:
                    best[name] = (seconds, split[0] if split else "?", head)
        print(f"python -m autograder progress, 14 exercises ({args.answers}), best of {args.repeat}:")
        for name, (seconds, split, head) in best.items():
            print(f"  {name:<28} {seconds:6.1f} s   {split}\n  {'':<28} {head}")
        if args.kernels:
            notebooks = sorted((course / "my-work" / "exercises").glob("*/*.ipynb"))
            started = time.monotonic()
            for notebook in notebooks:
                subprocess.run(
                    [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                     "--allow-errors", "--output", str(Path(tmp) / notebook.name), str(notebook)],
                    capture_output=True, check=True,
                )  # fmt: skip
            seconds = time.monotonic() - started
            print(f"  14 fresh Jupyter kernels (nbconvert --execute, visible checks) {seconds:6.1f} s")


if __name__ == "__main__":
    main()
