"""The repository as repo2docker builds it (Binder, JupyterHub images): its files name Graphviz,
Python and the start page, and ``postBuild``, run as repo2docker runs it (in a fresh virtual
environment: no container runtime runs here), installs the course's package and the learner's
JupyterLab configuration and leaves no solutions in the image."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_repo2docker_files_name_graphviz_and_python_and_postbuild_runs():
    assert "graphviz" in (REPO / "apt.txt").read_text(encoding="utf-8").split()
    assert re.fullmatch(r"python-3\.1[1-9]\s*", (REPO / "runtime.txt").read_text(encoding="utf-8"))
    assert os.access(REPO / "postBuild", os.X_OK)


def test_postbuild_installs_the_package_and_the_learners_jupyterlab_configuration(tmp_path):
    """repo2docker's step after ``requirements.txt``, in a fresh virtual environment (no container
    runtime runs here): the pinned stack is borrowed from this environment (a .pth file), postBuild
    runs as repo2docker runs it, and Jupyter in that environment must then find the course's
    package, the learner's configuration and the start page as its default URL."""
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    site_packages = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    here = subprocess.run(
        [sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site_packages, "course-stack.pth").write_text(here + "\n", encoding="utf-8")
    repo = tmp_path / "repo"  # repo2docker copies the repository into the image ($REPO_DIR)
    shutil.copytree(
        REPO,
        repo,
        ignore=shutil.ignore_patterns(".venv", ".git", "build", "test-artifacts", "*.egg-info", "__pycache__"),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHON", "VIRTUAL_ENV"))}
    env |= {"PATH": f"{env_dir / 'bin'}:{os.environ['PATH']}", "NB_PYTHON_PREFIX": str(env_dir), "REPO_DIR": str(repo)}
    env |= {"HOME": str(tmp_path / "home"), "PIP_NO_BUILD_ISOLATION": "0", "PIP_NO_INDEX": "1"}
    done = subprocess.run(["bash", "./postBuild"], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (repo / "solutions").exists(), "the learner's image holds no solutions or hidden tests"
    assert (REPO / "solutions").is_dir()
    probe = (
        "import json, autograder, jupyter_core.paths as p\n"
        "from jupyter_server.serverapp import ServerApp\n"
        "from jupyterlab.labapp import LabApp\n"
        "from jupyterlab_server.config import get_static_page_config\n"
        "app = ServerApp()\n"
        "app.load_config_file()\n"
        "lab = LabApp()\n"
        "lab.load_config_file()\n"
        "print(json.dumps({'package': autograder.__file__, 'default_url': [app.default_url, lab.default_url],\n"
        "    'extensions': app.jpserver_extensions, 'disabled': get_static_page_config().get('disabledExtensions')}))\n"
    )
    found = subprocess.run([python, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    found = json.loads(found.stdout.strip().splitlines()[-1])
    assert Path(found["package"]).resolve().is_relative_to(repo.resolve())
    assert found["default_url"] == ["/lab/tree/notebooks/00_start.ipynb"] * 2
    learner = json.loads((REPO / "jupyter/learner/jupyter_server_config.json").read_text(encoding="utf-8"))
    assert found["extensions"] == learner["ServerApp"]["jpserver_extensions"]
    page_config = json.loads((REPO / "jupyter/learner/labconfig/page_config.json").read_text(encoding="utf-8"))
    assert found["disabled"] == page_config["disabledExtensions"]
