"""Measure what the densest notebook-sized JSON costs the grader before and after its bounds.

usage: python tests/scripts/benchmark_zip_bounds.py [--entries 8]

For each shape of 16 MiB (the grader's notebook bound, ``intake.bounds.MAX_NOTEBOOK_BYTES``) it
prints what ``json.loads`` alone would add to the process's peak memory and what the course's
check (``bounds.json_problem``: shape counted first, then parsed only within the bounds) adds, each
in a fresh process (VmHWM, so one shape's peak does not hide the next). Then it unpacks a zip of
``--entries`` such entries with ``lms_zip.unpack_lms_zip`` and prints its peak. Run from the course
folder with the course's Python.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

SHAPES = {
    "dicts": "b'{\"a\":[' + b'{},' * (16 * 2**20 // 3 - 10) + b'{}]}'",
    "short strings": "b'{\"a\":[' + b'\"ab\",' * (16 * 2**20 // 5 - 10) + b'\"ab\"]}'",
    "floats": "b'{\"a\":[' + b'1.5,' * (16 * 2**20 // 4 - 10) + b'1.5]}'",
    "nested": "b'[' * (8 * 2**20) + b']' * (8 * 2**20)",
}
PEAK = "int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) // 1024"


def peak_of(statement: str, shape: str) -> int:
    """MiB the process's peak grows by while ``statement`` runs on ``data`` (the shape)."""
    code = (
        "import json, re\nfrom autograder.grading.intake.bounds import json_problem\n"
        f"data = {SHAPES[shape]}\nbefore = {PEAK}\n"
        f"try:\n    {statement}\nexcept Exception:\n    pass\nprint({PEAK} - before)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=8)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path.cwd()))
    print(f"{'shape (16 MiB)':<16} {'json.loads':>12} {'json_problem':>14}")
    for shape in SHAPES:
        print(f"{shape:<16} {peak_of('json.loads(data)', shape):>9} MiB {peak_of('json_problem(data)', shape):>11} MiB")
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "zip.zip"
        code = (
            "import re, sys, zipfile\nfrom pathlib import Path\n"
            "from autograder.grading.intake.lms_zip import Limits, unpack_lms_zip\n"
            f"data = {SHAPES['short strings']}\n"
            f"with zipfile.ZipFile({str(archive)!r}, 'w', zipfile.ZIP_DEFLATED) as zf:\n"
            f"    for i in range({args.entries}):\n"
            "        zf.writestr(f'learner{i}_{i + 1}_{i + 1}_ex01.ipynb', data)\n"
            f"before = {PEAK}\n"
            f"unpacked = unpack_lms_zip(Path({str(archive)!r}), Path({tmp!r}) / 's', {{'ex01': 'ex01.ipynb'}},"
            " limits=Limits(ratio=10_000))\n"
            f"print(len(unpacked.placed), {PEAK} - before)"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        placed, grown = done.stdout.split()[-2:]
        print(f"unpack_lms_zip of {args.entries} entries of 16 MiB short strings: {placed} placed, +{grown} MiB peak")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
