"""Where the test suite's time goes: the table in CONTRIBUTING.md ("Running tests").

    COURSE_CPU_LOG=/tmp/times.jsonl ./course test -p tests.scripts.cpu_per_test
    .venv/bin/python tests/scripts/where_the_time_goes.py /tmp/times.jsonl [--units 25]

Prints wall and CPU seconds by part of the suite (lessons under nbval, browser, cluster, ...) and the
slowest units (a file, or a folder sharing one server: ``conftest.unit_of``) with their wall seconds,
the figures ``conftest.SLOW_UNITS`` holds.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from conftest import unit_of

# The parts of the suite, first match wins (a prefix of the unit).
PARTS = (
    ("lessons under nbval", "notebooks/"),
    ("browser (JupyterLab in Chromium)", "tests/test_browser.py"),
    ("JupyterHub, grading on submit", "tests/hub/"),
    ("cluster (Slurm, PostgreSQL)", "tests/grading/test_cluster.py"),
    ("README's term walkthrough", "tests/test_term.py"),
    ("course end to end (demo class, set-up, lab)", "tests/test_course.py"),
    ("the term's doors (zips, rosters, shards)", "tests/grading/test_term_doors.py"),
    ("attacks and hostile submissions", "tests/grading/test_attacks.py"),
    ("site build and its pages", "tests/test_site.py"),
    ("grading (other)", "tests/grading/"),
    ("unit tests (other)", "tests/"),
)


def part_of(unit: str) -> str:
    return next((name for name, prefix in PARTS if unit.startswith(prefix)), "other")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--units", type=int, default=25, help="how many of the slowest units to list")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.log.read_text(encoding="utf-8").splitlines() if line.strip()]
    # wall, CPU of what was reaped, CPU of the whole process tree (older logs have no "tree"), tests
    units = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for row in rows:
        unit = units[unit_of(row["nodeid"])]
        for i, key in enumerate(("wall", "cpu", "tree")):
            unit[i] += row.get(key, 0.0)
        unit[3] += 1
    parts = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for unit, figures in units.items():
        part = parts[part_of(unit)]
        for i, figure in enumerate(figures):
            part[i] += figure
    totals = [sum(u[i] for u in units.values()) for i in range(3)]
    print(
        f"{len(rows)} tests, {totals[0]:.0f} s of wall time in tests, {totals[1]:.0f} CPU s reaped, "
        f"{totals[2]:.0f} CPU s in the process trees"
    )
    header = "| tests | wall s | CPU s | tree CPU s |\n|---|---:|---:|---:|---:|"
    print(f"\n| part {header}")
    for name, (wall, cpu, tree, n) in sorted(parts.items(), key=lambda p: -p[1][0]):
        print(f"| {name} | {n} | {wall:.0f} | {cpu:.0f} | {tree:.0f} |")
    print(f"\n| slowest units {header}")
    for unit, (wall, cpu, tree, n) in sorted(units.items(), key=lambda u: -u[1][0])[: args.units]:
        print(f"| `{unit}` | {n} | {wall:.0f} | {cpu:.0f} | {tree:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
