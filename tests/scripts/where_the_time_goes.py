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
    units = defaultdict(lambda: [0.0, 0.0, 0])
    for row in rows:
        unit = units[unit_of(row["nodeid"])]
        unit[0] += row["wall"]
        unit[1] += row["cpu"]
        unit[2] += 1
    parts = defaultdict(lambda: [0.0, 0.0, 0])
    for unit, (wall, cpu, n) in units.items():
        part = parts[part_of(unit)]
        part[0] += wall
        part[1] += cpu
        part[2] += n
    print(
        f"{len(rows)} tests, {sum(u[0] for u in units.values()):.0f} s of wall time in tests, "
        f"{sum(u[1] for u in units.values()):.0f} CPU s"
    )
    print("\n| part | tests | wall s | CPU s |\n|---|---:|---:|---:|")
    for name, (wall, cpu, n) in sorted(parts.items(), key=lambda p: -p[1][0]):
        print(f"| {name} | {n} | {wall:.0f} | {cpu:.0f} |")
    print("\n| slowest units | tests | wall s | CPU s |\n|---|---:|---:|---:|")
    for unit, (wall, cpu, n) in sorted(units.items(), key=lambda u: -u[1][0])[: args.units]:
        print(f"| `{unit}` | {n} | {wall:.0f} | {cpu:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
