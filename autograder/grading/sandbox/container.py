"""A grading sandbox: a bubblewrap container around a warm fork server, seen from the grader.

The container (``bwrap``, the sandbox Flatpak uses) has new user, PID, network, IPC, UTS and
cgroup namespaces: no network (its loopback reaches nothing of the machine's), no capabilities,
no new user namespaces inside, a new session (no terminal to type into), and it dies with the
grader. Its file system is read-only and holds only the system's libraries (``/usr``), the Python
environment and the course package's code; not ``solutions/``, the submissions, the output folder,
the rest of the checkout nor the home folder. It writes only to its own ``/tmp`` (a tmpfs of
``Limits.tmp_size`` bytes), emptied after every submission. When grading as root, the container
also goes into a ``pids`` cgroup, where the kernel limits processes (RLIMIT_NPROC does not bind
root; as another user, RLIMIT_NPROC does), and a ``memory`` cgroup that bounds all its processes
together (``Limits.container_memory``; RLIMIT_AS bounds each one alone); see ``cgroups.py``.

:class:`Sandbox` starts one container per grading thread, once; :meth:`Sandbox.open_channel`
forks a submission process in it and returns the grader's end of that process's channel;
:meth:`Sandbox.reap` kills everything the submission started; a fork server whose own state the
submission changed (its limits, priority, affinity...: see ``forkserver.py``) says so, and its
container is replaced before anyone else is forked from it. ``Sandbox(sandboxed=False)`` (the
``--no-sandbox`` option) runs the same fork server as a plain process, for trusted notebooks.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

from .boundary import Timeout, send
from .cgroups import container_cgroups, remove_cgroup
from .forkserver import EXTRAS
from .limits import Limits
from .scratch import empty

__all__ = ["Sandbox", "SandboxError", "sandbox_problem", "bwrap_command", "extras_for"]

_START_TIMEOUT = 120.0  # seconds for the fork server to import torch (2-4 s; slow machines, cold disks)
_ANSWER_TIMEOUT = 10.0  # seconds for a fork or reap request


class SandboxError(RuntimeError):
    """The sandbox could not start, or stopped answering."""


def _package_dir() -> Path:
    return Path(__file__).resolve().parents[2]


def _read_only_binds() -> list[str]:
    """Paths the container sees, read-only: system libraries, Python, the course package."""
    paths = ["/usr", sys.base_prefix, sys.prefix, str(_package_dir())]
    paths += [
        p
        for p in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/alternatives")
        if os.path.exists(p)
    ]
    args = []
    bound = list(dict.fromkeys(os.path.realpath(p) for p in paths))
    for path in bound:
        args += ["--ro-bind", path, path]
    # A path reached through a symlink (a venv that is a link, /home linked elsewhere) is named
    # unresolved by sys.executable, which the container runs: give it the same link inside.
    for path in dict.fromkeys(os.path.abspath(p) for p in paths):
        real = os.path.realpath(path)
        if path != real and not any(path == b or path.startswith(b.rstrip("/") + "/") for b in bound):
            args += ["--symlink", real, path]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):  # merged /usr: symlinks into it
        link = f"/{top}"
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    return args


def bwrap_command(limits: Limits) -> list[str]:
    """The ``bwrap`` command line that runs the fork server in a container (see module doc)."""
    python = sys.executable  # the environment's own interpreter (its realpath would leave the venv)
    binds = _read_only_binds()
    # A course under /tmp (a clone in a temporary folder) is bound inside the container's own /tmp;
    # the folders bwrap makes to hold it would be writable there, a place to plant a module for the
    # next submission: give each its own tmpfs and make it read-only once the binds are in.
    targets = [binds[i + 2] for i in range(0, len(binds), 3)]
    held = sorted({"/".join(t.split("/")[:3]) for t in targets if t.startswith(("/tmp/", "/dev/shm/"))})
    return [
        "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        # the writable tmpfs first: a checkout (or venv) under /tmp is then bound on top of it, not hidden
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(limits.tmp_size),
        "--tmpfs",
        "/tmp",
        "--size",
        str(limits.tmp_size),
        "--tmpfs",
        "/dev/shm",
        *[arg for top in held for arg in ("--tmpfs", top)],
        *binds,
        *[arg for top in held for arg in ("--remount-ro", top)],
        "--remount-ro",  # the root: a submission writes only to /tmp and /dev/shm, nothing another sees
        "/",
        "--clearenv",
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "USER",
        "learner",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "PYTHONPATH",
        str(_package_dir().parent),
        "--setenv",
        "PYTHONDONTWRITEBYTECODE",
        "1",
        "--setenv",
        "MPLBACKEND",
        "Agg",
        "--setenv",
        "AUTOGRADER_SANDBOX",
        "bwrap",
        "--setenv",
        "AUTOGRADER_READ_ONLY",  # what the fork server must not try to empty out of /tmp
        os.pathsep.join(targets),
        "--chdir",
        "/tmp",
        python,
        "-m",
        "autograder.grading.sandbox.forkserver",
    ]


def sandbox_problem() -> str | None:
    """None when a sandbox can start here; otherwise why not and how to fix it (one paragraph)."""
    if not sys.platform.startswith("linux"):
        return (
            "the grading sandbox needs Linux (bubblewrap and its namespaces); grade on a Linux "
            "machine, or pass --no-sandbox for notebooks you trust"
        )
    if shutil.which("bwrap") is None:
        return (
            "bubblewrap is not installed: `sudo apt-get install bubblewrap` (the course's set-up "
            "does this as root), or pass --no-sandbox for notebooks you trust"
        )
    probe = subprocess.run(
        ["bwrap", "--unshare-all", "--unshare-user", "--die-with-parent", "--ro-bind", "/", "/", "true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        return (
            f"bubblewrap cannot create its namespaces here ({why}); unprivileged user namespaces "
            "may be disabled: `sudo sysctl -w kernel.unprivileged_userns_clone=1` (Debian) or "
            "`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 24.04), or pass "
            "--no-sandbox for notebooks you trust"
        )
    return None


# What in an assignment's source needs an extra import in the fork server (forkserver.EXTRAS).
_NEEDS = {"dynamo": ("torch.compile", "torch._dynamo", "compiled_graphs")}


def extras_for(texts) -> tuple[str, ...]:
    """The names of ``forkserver.EXTRAS`` that the instructor's sources ``texts`` (notebooks'
    JSON or their cells' code; never a submission's) need: ``("dynamo",)`` when one uses
    ``torch.compile``. A submission that imports more than its assignment's source does still
    runs (it imports it itself, in its own process)."""
    texts = list(texts)
    return tuple(name for name, words in _NEEDS.items() if name in EXTRAS and any(w in t for t in texts for w in words))


def _own_processes() -> int:
    """How many processes this user has now (RLIMIT_NPROC counts them all)."""
    uid, count = os.getuid(), 0
    for entry in os.listdir("/proc"):
        try:
            count += entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid
        except OSError:
            pass
    return count


class Sandbox:
    """One warm fork server, in a bubblewrap container (``sandboxed=True``) or not.

    ``extras``: names of ``forkserver.EXTRAS`` the server also imports (:func:`extras_for`).
    After each reap the server forks the next submission process at once (its set-up overlaps
    with the grader's judging of the last notebook); the grader reads the reap's answer when it
    next needs the sandbox, unless the submission died (then its exit code is read at once).

    Raises:
        SandboxError: from :meth:`start` when the container or the fork server does not start.
    """

    def __init__(self, limits: Limits, sandboxed: bool = True, extras: tuple[str, ...] = ()):
        self.limits, self.sandboxed, self.extras = limits, sandboxed, tuple(extras)
        self._process: subprocess.Popen | None = None
        self._control: socket.socket | None = None
        self._cgroups: list[Path] = []
        self._tmp: str | None = None
        self._starting = False  # launched, its "ready" not read yet
        self._asked = False  # a request sent whose answer is not read yet
        self._next: socket.socket | None = None  # the grader's end of the channel of a process forked, or asked for
        self.last_error = ""  # why the last start failed (bwrap's own message), for the grader to show

    def start(self) -> None:
        """Start the container and wait until the fork server has imported torch."""
        self.launch()
        self.ready()

    def launch(self) -> None:
        """Start the container without waiting for it (:meth:`open_channel` waits): several
        sandboxes then import torch at once, while the grader does its own start-up."""
        self.close()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        command = (
            [*bwrap_command(self.limits)]
            if self.sandboxed
            else [sys.executable, "-m", "autograder.grading.sandbox.forkserver"]
        )
        env = None if self.sandboxed else dict(os.environ, MPLBACKEND="Agg")
        if self.sandboxed and os.getuid() == 0:
            self._cgroups = container_cgroups(self.limits)
        for group in self._cgroups:  # join them before bwrap starts, so that everything inside is in them
            command = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group / "cgroup.procs"), *command]
        self._process = subprocess.Popen(
            [*command, str(theirs.fileno()), *self.extras],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        theirs.close()
        self._control, self._starting = ours, True
        if not self.sandboxed:
            self._tmp = tempfile.mkdtemp(prefix="autograder-nosandbox-")

    def ready(self) -> None:
        """Wait until a :meth:`launch`\\ ed fork server has imported what it imports (no-op once it
        has, or when none was launched).

        Raises:
            SandboxError: it did not start (the message is bwrap's, also in ``last_error``).
        """
        if not self._starting:
            return
        self._starting = False
        try:
            self._answer(_START_TIMEOUT)
        except SandboxError:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            error = self._process.stderr.read().decode(errors="replace")[-2000:]
            self.close()
            self.last_error = f"the grading sandbox did not start: {error.strip() or 'no answer'}"
            raise SandboxError(self.last_error) from None

    def _answer(self, timeout: float) -> dict:
        self._control.settimeout(timeout)
        try:
            message = self._control.recv(65536)
        except (TimeoutError, OSError):
            message = b""
        if not message:
            raise SandboxError("the fork server stopped answering")
        return json.loads(message)

    def _ask(self, request: dict, fork: bool) -> None:
        """Send ``request`` (with a new channel for the next submission process when ``fork``);
        its answer is read by :meth:`_settle`."""
        if fork:
            if self._next is not None:  # a process forked ahead and not used: the server kills it first
                self._next.close()
                self._next = None
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                socket.send_fds(self._control, [json.dumps(request).encode()], [theirs.fileno()])
            except OSError:
                ours.close()
                raise
            finally:
                theirs.close()
            self._next = ours
        else:
            self._control.send(json.dumps(request).encode())
        self._asked = True

    def _settle(self, timeout: float = _ANSWER_TIMEOUT) -> dict | None:
        """The answer to the request in flight; None when the server did not answer (then the
        container is closed). A process not forked (a changed server) leaves no channel."""
        if not self._asked:
            return {}
        self._asked = False
        try:
            answer = self._answer(timeout)
        except (SandboxError, ValueError):
            self.close()
            return None
        if not isinstance(answer, dict):
            answer = {"changed": ["an answer that is not an object"]}
        if not answer.get("forked") and self._next is not None:
            self._next.close()
            self._next = None
        if answer.get("changed") or answer.get("error"):  # the server exits: so does its container
            self.close()
        return answer

    def _channel_limits(self) -> dict:
        processes = self.limits.processes if os.getuid() == 0 else _own_processes() + self.limits.processes
        return dict(self.limits.for_process(self._tmp), processes=None if os.getuid() == 0 else processes)

    def open_channel(self) -> Connection:
        """Fork a submission process (or take the one forked after the last reap), send it its
        limits, and return the grader's end of its channel (length-framed messages,
        :class:`multiprocessing.connection.Connection`).

        Raises:
            SandboxError: the fork server did not answer, or refused (the caller replaces the sandbox).
        """
        if self._asked:  # the last reap's answer: its next process, or a container closed
            self._settle()
        if self._process is None or self._process.poll() is not None:
            self.start()
        self.ready()
        if self._next is None:
            try:
                self._ask({"op": "fork", "tmp": self._tmp}, fork=True)
            except OSError:
                raise SandboxError("the fork server stopped answering") from None
            answer = self._settle()
            if answer is None:
                raise SandboxError("the fork server stopped answering")
            if self._next is None:  # a server whose state changed: replaced
                raise SandboxError("the fork server refused to fork")
        ours, self._next = self._next, None
        try:  # its first message, before any cell: its limits, counted now (no process of the last one is left)
            send(ours.fileno(), json.dumps({"limits": self._channel_limits()}).encode(), time.monotonic() + 1)
        except (OSError, Timeout):
            ours.close()
            raise SandboxError("the submission process did not take its limits") from None
        return Connection(ours.detach())

    def reap(self, wait: bool = False) -> int | None:
        """Kill every process the last submission started and empty its temporary files (the
        fork server then forks the next submission process); when the fork server does not
        answer, replace the whole container (which kills everything in it). With ``wait``, the
        submission process (whose channel closed) gets a second to end by itself, and the answer
        is read now: its exit code (negative: the signal that ended it), else None. Without, the
        answer is read by the next :meth:`open_channel` (or :meth:`close`) and this returns None.
        Never raises."""
        if self._asked:  # never two requests in flight
            self._settle()
        if self._control is None:
            self.close()
            return None
        try:
            self._ask({"op": "reap", "wait": wait, "fork": True, "tmp": self._tmp}, fork=True)
        except OSError:
            self.close()
            return None
        if not wait:
            return None
        answer = self._settle(_ANSWER_TIMEOUT + 1)
        code = (answer or {}).get("exit_code")
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    def close(self) -> None:
        """Stop the container and everything in it. Never raises."""
        if self._next is not None:
            self._next.close()
            self._next = None
        if self._control is not None and not self.sandboxed:  # no PID namespace: reap them one by one
            try:
                if not self._starting:  # (still importing: nothing forked yet, killed with its group)
                    if self._asked:
                        self._answer(_ANSWER_TIMEOUT)
                    self._control.send(json.dumps({"op": "reap", "tmp": self._tmp}).encode())
                    self._answer(_ANSWER_TIMEOUT)
            except (OSError, SandboxError, ValueError):
                pass
        self._asked = self._starting = False
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._process is not None:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self._process.wait()
            if self._process.stderr:
                self._process.stderr.close()
            self._process = None
        for group in self._cgroups:
            remove_cgroup(group)
        self._cgroups = []
        if self._tmp:
            with contextlib.suppress(OSError):
                os.chmod(self._tmp, 0o700)  # a submission may have taken its bits off
            empty(self._tmp)
            with contextlib.suppress(OSError):
                os.rmdir(self._tmp)
            self._tmp = None

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()
