"""Is the code in the one style the project agreed on? ``ruff check`` (lint) and ``ruff format --check``
(layout), configured in pyproject.toml, must report nothing, so a violation fails CI as a test does.
``ruff check --fix . && ruff format .`` fixes most findings (the pre-commit hooks run the same)."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """``ruff ARGS`` run from the repository root with the ruff of this Python's environment."""
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=REPO, input=stdin, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "args",
    [("check", "--no-fix", "--output-format", "concise"), ("format", "--check", "--output-format", "concise")],
    ids=["lint", "format"],
)
def test_ruff_finds_nothing_in_the_repository(args):
    """Does ruff report no violation anywhere in the repository?"""
    done = ruff(*args, ".")
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]


@pytest.mark.parametrize("args", [("check", "--no-fix"), ("format", "--check")], ids=["lint", "format"])
def test_ruff_flags_a_violation(args):
    """Can the test above fail: does ruff, with this configuration, flag an unused import and a
    line laid out by hand?"""
    done = ruff(*args, "--stdin-filename", "autograder/bad.py", "-", stdin="import os\nx=1\n")
    assert done.returncode == 1, done.stdout + done.stderr
