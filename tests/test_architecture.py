"""Does the code keep the architecture that pyproject.toml's ``[tool.importlinter]`` contracts state
(the package's layers, grading's stages), and do the counts the tree is kept to hold?"""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "autograder"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def test_every_import_goes_down_the_layers():
    """Does ``lint-imports`` (import-linter, from the course's venv) find every contract kept? A
    wrong-way import (an instrument importing the checks, the sandbox importing the store) fails here."""
    if not LINT_IMPORTS.exists():
        pytest.fail(f"{LINT_IMPORTS} is missing: ./course setup installs import-linter (requirements.txt)")
    run = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "broken" in run.stdout and " 0 broken" in run.stdout, run.stdout[-2000:]


def _modules(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.py"))


def test_the_tops_hold_few_modules():
    """Does the package's top hold at most 14 modules, and grading's top at most 8 (the rest in
    packages named for what they do)?"""
    assert len(_modules(PACKAGE)) <= 14, _modules(PACKAGE)
    assert len(_modules(PACKAGE / "grading")) <= 8, _modules(PACKAGE / "grading")


# Data tables, long by nature: the typical mistakes and the explainer's kinds.
_DATA = ("grading/mistakes/", "kinds/")


def test_no_module_but_data_tables_is_over_450_lines():
    """Is every module that is not a data table at most 450 lines?"""
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if not str(p.relative_to(PACKAGE)).startswith(_DATA)
        and (n := len(p.read_text(encoding="utf-8").splitlines())) > 450
    }
    assert not long, long


def test_every_package_says_its_job():
    """Does every package of autograder open with a docstring (its job, and what it may import)?"""
    import ast

    silent = [
        str(init.relative_to(PACKAGE))
        for init in PACKAGE.rglob("__init__.py")
        if not ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    ]
    assert not silent, silent
