"""A real JupyterHub for the hub tests: JupyterHub 6.1.1 (PyPI) behind configurable-http-proxy 5.3.0
(npm), real Linux accounts made with ``useradd`` (each with a home), the local process spawner,
nbgrader's filesystem exchange with the permissions its commands give it, and the grading service
as a hub-managed service run under the instructor's account, configured by the README's
``jupyterhub_config.py`` lines as written (the test only fills in its own paths and ports).

Everything lives in a temporary folder of its own (homes, course, exchange, the hub's database
and logs) and listens on 127.0.0.1 at ports the OS gives: tests in parallel (pytest-xdist) do not
meet. Account names carry a random suffix. Nothing of the machine's own configuration is read or
written (``JUPYTER_CONFIG_PATH`` points at the folder's ``etc/jupyter``); the accounts and every
process they ran are removed afterwards.

The hub (started as the README starts it, with its default PAM login and each account's password),
the learners' servers and the service run the environment named by ``COURSE_HUB_VENV`` (default
``/opt/course-hub-venv``): a virtual environment on Debian's ``python3`` holding
``requirements.txt``, readable by every account (``.ci/run`` builds it). Into it the hub's set-up
installs the course's package as the README's root block does, with that block's own lines
(:func:`readme_environment_lines`; the learners' exercises import it from there, as nothing else of
the course is near them). :func:`hub_problem` says what is missing; ``COURSE_REQUIRE_HUB`` makes the
tests fail instead of skipping.
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import requests
from nbgrader.utils import notebook_hash

REPO = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("COURSE_HUB_VENV", "/opt/course-hub-venv"))
COURSE_ID = "torch101"
ASSIGNMENTS = ("ex01_graph", "ex02_leaves")
PASSWORD = "Pw-" + secrets.token_hex(8)  # every test account's, for the hub's PAM login


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hub_problem() -> str | None:
    """Why a hub with real accounts cannot run here (None: it can)."""
    if os.geteuid() != 0:
        return "the hub tests make Linux accounts and start servers as them: they need root"
    for tool in ("useradd", "userdel", "chpasswd", "runuser"):
        if shutil.which(tool) is None:
            return f"{tool} is missing"
    if shutil.which("configurable-http-proxy") is None:
        return "configurable-http-proxy is missing: npm install -g configurable-http-proxy@5.3.0 (.ci/run does)"
    for program in ("python", "jupyterhub", "jupyterhub-singleuser", "nbgrader"):
        if not (VENV / "bin" / program).exists():
            return (
                f"{VENV}/bin/{program} is missing: the learners' environment (python3 -m venv {VENV}; "
                f"{VENV}/bin/pip install -r requirements.txt; chmod -R a+rX {VENV}; .ci/run does)"
            )
    return None


README_VENV = "/opt/course-venv"  # the environment the README's root block makes


def readme_environment_lines() -> list[str]:
    """The lines of the README's root block (the ```bash block that makes the accounts) that fill
    the learners' environment once it exists: pip's into it, then the chmod that lets every account
    read it, as written (the block's ``python3 -m venv`` line is .ci/run's: ``COURSE_HUB_VENV``)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```bash\n(.*?)```", text, re.DOTALL) if "useradd" in b]
    assert len(blocks) == 1, "README.md has no (or more than one) ```bash block that makes the hub's accounts"
    lines = [line for line in blocks[0].splitlines() if line.startswith((f"{README_VENV}/bin/pip ", "chmod -R a+rX "))]
    installs = [line.split("#")[0].split() for line in lines if " install " in line]
    assert any("." in words for words in installs), f"the README installs no course package:\n{blocks[0]}"
    return lines


def readme_hub_config() -> str:
    """The README's ``jupyterhub_config.py`` (the ```python block that configures the service)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "c.JupyterHub.services" in b]
    assert len(blocks) == 1, "README.md has no (or more than one) ```python block with c.JupyterHub.services"
    return blocks[0]


class Hub:
    """The hub, its accounts, course and exchange (see the module docstring). ``names`` maps each
    role (``teacher``, ``ada``, ...) to its account's name; ``url`` is the hub's public URL."""

    def __init__(self, learners=("ada", "bob", "grace", "eve", "mal"), extra_options=()):
        self.root = Path(tempfile.mkdtemp(prefix="course-hub-"))
        os.chmod(self.root, 0o755)  # every account walks through it to its home
        suffix = secrets.token_hex(3)
        self.names = {role: f"{role}{suffix}" for role in ("teacher", *learners)}
        self.teacher = self.names["teacher"]
        self.port, self.service_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.etc = self.root / "etc" / "jupyter"
        self.exchange = self.root / "exchange"
        self.course = self.home(self.teacher) / "course"
        self.extra_options = list(extra_options)
        self.process = None
        self.log = self.root / "hub" / "hub.log"

    # -- accounts and files ------------------------------------------------------------------------

    def home(self, name: str) -> Path:
        return self.root / "home" / name

    def make(self) -> None:
        (self.root / "home").mkdir()
        os.chmod(self.root / "home", 0o755)
        for name in self.names.values():
            subprocess.run(
                ["useradd", "--create-home", "--home-dir", str(self.home(name)), "--shell", "/bin/bash", name],
                check=True, capture_output=True,
            )  # fmt: skip
        # each logs in with its Linux password: JupyterHub's default PAM authenticator, as in the README
        logins = "".join(f"{name}:{PASSWORD}\n" for name in self.names.values())
        subprocess.run(["chpasswd"], input=logins, text=True, check=True, capture_output=True)
        self.etc.mkdir(parents=True)
        settings = f"c.CourseDirectory.course_id = {COURSE_ID!r}\nc.Exchange.root = {str(self.exchange)!r}\n"
        # as the README's /etc/jupyter/nbgrader_config.py
        (self.etc / "nbgrader_config.py").write_text("c = get_config()\n" + settings, encoding="utf-8")
        os.chmod(self.etc / "nbgrader_config.py", 0o644)
        self.exchange.mkdir()
        os.chmod(self.exchange, 0o777)
        self.course.mkdir()
        parts = ("autograder", "solutions", "exercises", "nbgrader_config.py", "pyproject.toml", "requirements.txt")
        for part in parts:
            source = REPO / part
            if source.is_dir():
                shutil.copytree(source, self.course / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(source, self.course / part)
        # the README's root block, from the course's clone: the stack and the course's package into
        # the environment every account runs (this clone's package, so the learners run what is tested)
        for line in readme_environment_lines():
            done = subprocess.run(["bash", "-e", "-c", line.replace(README_VENV, str(VENV))], cwd=self.course,
                                  capture_output=True, text=True, timeout=900)  # fmt: skip
            assert done.returncode == 0, (line, done.stdout[-3000:], done.stderr[-3000:])
        subprocess.run(["chown", "-R", f"{self.teacher}:{self.teacher}", str(self.course)], check=True)
        steps = [["generate_assignment", a] for a in ASSIGNMENTS]
        self.nbgrader(self.teacher, *steps, *(["release_assignment", a, "--course", COURSE_ID] for a in ASSIGNMENTS),
                      cwd=self.course)  # fmt: skip

    def env_of(self, name: str) -> dict:
        return {
            "HOME": str(self.home(name)),
            "USER": name,
            "PATH": f"{VENV}/bin:/usr/bin:/bin",
            "JUPYTER_CONFIG_PATH": str(self.etc),
            "LANG": "C.UTF-8",
        }

    def run_as(self, name: str, command: str, cwd: Path | None = None, check: bool = True, timeout: float = 300):
        """``command`` (bash) run as the account ``name``, in its home unless ``cwd``."""
        env = [f"{k}={v}" for k, v in self.env_of(name).items()]
        done = subprocess.run(
            ["runuser", "-u", name, "--", "env", "-i", *env, "bash", "-c", command],
            cwd=cwd or self.home(name), capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        if check:
            assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
        return done

    def nbgrader(self, name: str, *steps, cwd: Path | None = None, check: bool = True):
        """Run nbgrader's commands as the account ``name``, in one process (each ``nbgrader ...``
        command line starts in seconds on a busy machine): each step is a command's arguments
        (``["submit", "ex01_graph", "--course", "torch101"]``, run by nbgrader's own application as
        ``nbgrader`` runs it) or ``["copy", SOURCE, DEST]`` (the learner saving a notebook)."""
        return self.run_as(name, f"python -c {shlex.quote(_NBGRADER_STEPS)} {shlex.quote(repr(steps))}", cwd, check)

    # -- the hub -----------------------------------------------------------------------------------

    def config(self) -> str:
        """The README's configuration with this hub's paths and ports, then what a test hub needs."""
        readme = readme_hub_config()
        for line, value in (("COURSE = ", self.course), ("VENV = ", VENV), ("GRADER = ", self.teacher)):
            readme = re.sub(rf"^{line}.*$", f"{line}{str(value)!r}", readme, count=1, flags=re.MULTILINE)
        learners = sorted(v for k, v in self.names.items() if k != "teacher")
        readme = re.sub(r"^LEARNERS = .*$", f"LEARNERS = {set(learners)!r}", readme, count=1, flags=re.MULTILINE)
        readme = readme.replace("http://127.0.0.1:10101", f"http://127.0.0.1:{self.service_port}")
        hub = self.root / "hub"
        return readme + "\n".join([
            "",
            "# the test's own hub: its ports, files and JUPYTER_CONFIG_PATH",
            f"c.JupyterHub.bind_url = 'http://127.0.0.1:{self.port}'",
            f"c.JupyterHub.hub_port = {free_port()}",
            f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{free_port()}'",
            f"c.ConfigurableHTTPProxy.pid_file = {str(hub / 'proxy.pid')!r}",
            f"c.JupyterHub.db_url = 'sqlite:///{hub / 'jupyterhub.sqlite'}'",
            f"c.JupyterHub.cookie_secret_file = {str(hub / 'cookie_secret')!r}",
            "c.Spawner.poll_interval = 2  # a stopped service is started again within seconds",
            "c.Spawner.start_timeout = c.Spawner.http_timeout = 180",
            f"c.Spawner.environment['JUPYTER_CONFIG_PATH'] = {str(self.etc)!r}",
            "service = c.JupyterHub.services[0]",
            f"service['environment']['JUPYTER_CONFIG_PATH'] = {str(self.etc)!r}",
            f"service['command'] += {self.extra_options!r}",
            "",
        ])  # fmt: skip

    def start(self, timeout: float = 240) -> None:
        hub = self.root / "hub"
        hub.mkdir()
        (hub / "jupyterhub_config.py").write_text(self.config(), encoding="utf-8")
        env = dict(os.environ, PATH=f"{VENV}/bin:{os.environ['PATH']}")
        env.pop("VIRTUAL_ENV", None)
        with open(self.log, "ab") as log:  # started as the README starts it, from the environment every account reads
            self.process = subprocess.Popen(
                [str(VENV / "bin" / "jupyterhub"), "-f", str(hub / "jupyterhub_config.py")],
                cwd=hub, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        self.wait_for(lambda: "serving torch101" in self.log_text(), timeout, "the service did not start")

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def wait_for(self, predicate, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            assert self.process is None or self.process.poll() is None, f"the hub stopped:\n{self.log_text()[-6000:]}"
            assert time.monotonic() < deadline, f"{what} within {timeout} s:\n{self.log_text()[-6000:]}"
            time.sleep(0.2)

    def login(self, role: str) -> requests.Session:
        """A browser-like session logged in to the hub as ``role``'s account."""
        session = requests.Session()
        session.get(f"{self.url}/hub/login", timeout=30)
        form = {"username": self.names[role], "password": PASSWORD, "_xsrf": session.cookies.get("_xsrf", "")}
        done = session.post(f"{self.url}/hub/login?next=", data=form, allow_redirects=False, timeout=60)
        assert done.status_code == 302, (done.status_code, done.text[:500])
        return session

    def service_pid(self) -> int | None:
        """The pid of the running grading service (its command names this hub's course)."""
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    command = (entry / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if b"serve" in command and str(self.course).encode() in command and b"autograder" in command:
                    return int(entry.name)
        return None

    # -- the end -----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the hub (it stops the proxy, the service and the learners' servers), then every
        process still run by the test's accounts, then the accounts and the folder."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        proxy = self.root / "hub" / "proxy.pid"
        if proxy.exists():
            try:
                os.kill(int(proxy.read_text().strip()), signal.SIGTERM)
            except (ValueError, ProcessLookupError):
                pass
        for name in self.names.values():
            try:
                uid = pwd.getpwnam(name).pw_uid
            except KeyError:
                continue
            for pid in _processes_of(uid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)
        shutil.rmtree(self.root, ignore_errors=True)


# -- learners -------------------------------------------------------------------------------------


def hand_in(hub, role: str, assignment: str, notebook: Path, times: int = 1) -> None:
    """As ``role``'s account, in one process: fetch ``assignment`` (the first time), save
    ``notebook`` in place of the release, and submit it (``times`` times, as fast as nbgrader can)."""
    name = hub.names[role]
    steps = [] if (hub.home(name) / assignment).exists() else [["fetch_assignment", assignment, "--course", COURSE_ID]]
    steps.append(["copy", str(notebook), str(hub.home(name) / assignment / f"{assignment}.ipynb")])
    steps += [["submit", assignment, "--course", COURSE_ID]] * times
    hub.nbgrader(name, *steps)


def released(hub, role: str, assignment: str) -> list[Path]:
    """The pages released for ``role``'s submissions of ``assignment`` so far, found as
    ``fetch_feedback`` finds them (each submission's secret, in the learner's cache, hashed with
    the notebook's name)."""
    cache = hub.home(hub.names[role]) / ".local" / "share" / "jupyter" / "nbgrader_cache" / COURSE_ID
    pages = []
    for submission in sorted(cache.glob(f"*+{assignment}+*")):
        secret = (submission / "submission_secret.txt").read_text()
        page = hub.exchange / COURSE_ID / "feedback" / f"{notebook_hash(secret=secret, notebook_id=assignment)}.html"
        pages.append(page if page.is_file() else None)
    return pages


def all_released(hub, role: str, assignment: str) -> bool:
    """Has ``role`` submitted ``assignment``, and is every submission's page released?"""
    pages = released(hub, role, assignment)
    return bool(pages) and all(pages)


def fetched(hub, role: str, assignment: str) -> list[Path]:
    """``nbgrader fetch_feedback`` as ``role``: the pages now in the learner's folder."""
    name = hub.names[role]
    hub.nbgrader(name, ["fetch_feedback", assignment, "--course", COURSE_ID])
    return sorted((hub.home(name) / assignment / "feedback").glob("*/*.html"))


def queue_rows(hub, **where) -> list[dict]:
    with sqlite3.connect(f"file:{hub.course / 'grading-service' / 'queue.db'}?mode=ro", uri=True) as db:
        db.row_factory = sqlite3.Row
        rows = [dict(r) for r in db.execute("SELECT * FROM attempts ORDER BY seq")]
    return [r for r in rows if all(r[k] == v for k, v in where.items())]


# nbgrader's command line (``nbgrader.apps.NbGraderApp``), once per step, in one process
_NBGRADER_STEPS = """
import ast, shutil, sys
from jupyter_core.application import NoStart
from nbgrader.apps import NbGraderApp
for step in ast.literal_eval(sys.argv[1]):
    if step[0] == "copy":
        shutil.copyfile(step[1], step[2])
        continue
    app = NbGraderApp.instance()
    app.initialize(step)
    try:
        app.start()
    except NoStart:  # the subcommand ran (launch_instance ends the same way)
        pass
    type(app.subapp).clear_instance()
    NbGraderApp.clear_instance()
"""


def _processes_of(uid: int) -> list[int]:
    """The pids of the processes run by the account ``uid`` (one of the test's own)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids
