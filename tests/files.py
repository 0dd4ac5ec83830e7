"""Helpers shared by the tests that copy the course or start Jupyter as a learner would."""

import subprocess
from pathlib import Path


def clone_files(root: Path) -> list[str]:
    """The paths (relative to ``root``, a git checkout) a fresh clone would hold: tracked files,
    plus new files git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name]


def fresh_jupyter_env(environ: dict, folder: Path) -> dict:
    """``environ`` with Jupyter's and IPython's configuration, runtime, settings and workspaces
    folders under ``folder`` (all empty: a learner's first day), and no ``JUPYTER_CONFIG_PATH``."""
    env = {
        **environ,
        "JUPYTER_CONFIG_DIR": str(folder / "config"),
        "JUPYTER_RUNTIME_DIR": str(folder / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(folder / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(folder / "workspaces"),
        "IPYTHONDIR": str(folder / "ipython"),
    }
    env.pop("JUPYTER_CONFIG_PATH", None)
    return env
