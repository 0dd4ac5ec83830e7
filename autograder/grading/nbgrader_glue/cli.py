"""Run plain nbgrader commands on the course (or on a throw-away copy of it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ...lessons import COURSE_ROOT

__all__ = ["nbgrader", "course_copy"]


def nbgrader(root: Path, *args: str) -> subprocess.CompletedProcess:
    """Run ``nbgrader ARGS`` in course folder ``root`` (which holds ``nbgrader_config.py``),
    with this interpreter's ``bin/`` first on PATH (nbgrader runs ``alembic`` from there).

    Raises:
        subprocess.CalledProcessError: nbgrader exited non-zero (stdout/stderr are attached).
    """
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    )


def course_copy(dest: Path, root: Path = COURSE_ROOT) -> Path:
    """Copy what nbgrader needs (``nbgrader_config.py``, ``solutions/``) to ``dest``, so plain
    nbgrader commands can run there without touching the course. Returns ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / "nbgrader_config.py", dest / "nbgrader_config.py")
    shutil.copytree(
        root / "solutions",
        dest / "solutions",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
    )
    return dest
