"""Does `./course setup` say one line per step it did, with what it made and its seconds, and keep
the installers' own output (pip's progress, notices and warnings) in .venv/setup.log, showing that
log's end when a step fails? Run in a folder holding the course's `course` script and the files its
set-up reads, with a .venv/bin/python that stands in for pip (the real install takes minutes)."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from autograder.lessons import COURSE_ROOT

PIP_NOISE = "Collecting torch==2.13.0\n  Downloading torch-2.13.0.whl (800 MB)\nWARNING: Location ... is ignored\n"


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _course(tmp: Path, pip_exit: int) -> tuple[Path, dict]:
    """A folder with `course`, requirements.txt and pyproject.toml, a .venv whose python prints
    pip's kind of noise and exits ``pip_exit`` for `-m pip`, and dot and bwrap on PATH."""
    root = tmp / "course"
    for name in ("course", "requirements.txt", "pyproject.toml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(COURSE_ROOT / name, root / name)
    _executable(
        root / ".venv" / "bin" / "python", f"#!/bin/sh\nprintf '{PIP_NOISE}'\necho 'pip says' >&2\nexit {pip_exit}\n"
    )
    for tool in ("dot", "bwrap"):
        _executable(tmp / "bin" / tool, "#!/bin/sh\nexit 0\n")
    return root, dict(os.environ, PATH=f"{tmp / 'bin'}:{os.environ['PATH']}")


def test_a_setup_that_installs_prints_one_line_per_step_and_logs_pips_output(tmp_path):
    root, env = _course(tmp_path, pip_exit=0)
    done = subprocess.run(["./course", "setup"], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Set-up: installing the course's Python packages into .venv/"), lines
    assert re.fullmatch(r"Set-up: upgraded pip \(\d+ s\)", lines[1]), lines
    assert re.fullmatch(r"Set-up: installed requirements.txt .* into \.venv/ \(\d+ s\)", lines[2]), lines
    assert re.fullmatch(r"Set-up: removed rfc3987-syntax \(slow to import, unused\) \(\d+ s\)", lines[3]), lines
    assert len(lines) == 4 and "Collecting" not in done.stdout + done.stderr
    log = (root / ".venv" / "setup.log").read_text(encoding="utf-8")
    assert log.count("Collecting torch") == 3 and "pip says" in log  # stdout and stderr, every step
    again = subprocess.run(["./course", "setup"], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stdout == ""  # done before: a quiet start


def test_a_step_that_fails_shows_the_end_of_its_log_and_stops(tmp_path):
    root, env = _course(tmp_path, pip_exit=1)
    done = subprocess.run(["./course", "setup"], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "Set-up failed: upgraded pip. The end of .venv/setup.log:" in done.stderr
    assert "pip says" in done.stderr and "Collecting torch" in done.stderr
    assert not (root / ".venv" / ".course-installed").exists()  # the next run tries again


def test_the_courses_environment_imports_nbformat_without_jsonschemas_iri_parser():
    """Does a process of the set-up environment import nbformat (as Jupyter's servers, nbgrader and
    the grader do) without rfc3987-syntax, which builds its IRI parsers at import (1.4 CPU s)?"""
    python = COURSE_ROOT / ".venv" / "bin" / "python"
    if not (COURSE_ROOT / ".venv" / ".course-installed").is_file():
        pytest.skip("the course was not set up by ./course setup")
    probe = "import nbformat, sys; print('rfc3987_syntax' in sys.modules, 'jsonschema' in sys.modules)"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr
