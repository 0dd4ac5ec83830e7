"""The fork server: the process inside a grading sandbox that forks one process per submission.

Run as ``python -m autograder.grading.sandbox.forkserver CONTROL_FD [EXTRA ...]`` by :mod:`.sandbox`. It
imports torch, IPython and the course's public package once, then waits on its control socket. It holds
nothing a learner may not see: no source notebook, no solution, no hidden test, no reference value,
nothing of other students, and no open descriptor but its control socket (see the process map in
``autograder/grading/__init__.py``).

Requests on the control socket (one JSON datagram each, answered by one):
- ``{"op": "fork", "tmp": ...}`` with one descriptor attached (the submission's channel): fork a
  submission process that sets itself up (its own folder under ``tmp``, or the container's
  ``/tmp`` when None) and then waits on that channel for its limits, the first message there,
  before any cell; answers ``{"forked": true}``.
- ``{"op": "reap"}``: kill every process a submission started, wherever it went (this process is
  a child subreaper, so orphans come back to it), remove the System V IPC objects and keys it left
  (:mod:`.ipc`), empty ``/tmp`` and ``/dev/shm`` (through descriptors: no path length or mode a
  submission left stops it); answers ``{"reaped": n, "exit_code": ..., "changed": [...]}``, where
  ``changed`` also names a temporary folder that is not back to what it held when serving began
  (an entry left, more blocks or inodes in use: :func:`residue`). With a descriptor attached and
  ``"fork"`` set, once all that is checked and nothing changed it forks the next submission
  process as ``fork`` does (``"forked": true`` in the answer): the next notebook's process sets
  itself up while the grader judges the last one.

The fork server imports torch, IPython and the course package; ``python -m
autograder.grading.sandbox.forkserver CONTROL_FD [EXTRA ...]`` also imports, for each EXTRA that is a
name of :data:`EXTRAS` (a fixed allow-list; anything else is ignored), its modules: ``dynamo``
(``torch._dynamo``, about a second) only when an assignment graded needs ``torch.compile``.

A submission process runs as the same user as this server, so the kernel lets it change some of
this process's state from outside: its resource limits (``prlimit``), nice value, CPU affinity,
scheduling policy, I/O priority, ``oom_score_adj``, timer slack and autogroup nice value; every
later fork would inherit them (a classmate graded at nice 19 on one CPU, or unable to start at
all). It cannot read or write this process's memory or descriptors (not dumpable: no ptrace,
``/proc/<pid>/mem`` or ``pidfd_getfd``). So this server notes that state when it starts
(:func:`state`) and compares it after every reap and before every fork: when anything differs it
answers with what changed (``"changed"``, or ``{"error": "changed", ...}`` to a fork) and exits,
and the grader replaces the whole container (``Sandbox``). A fatal or stopping signal ends or
freezes it, and a server that does not answer is replaced too.

A submission process: its own session (and session keyring), resource limits (address space,
processes, open files, file size, no core dumps, no POSIX message queues), stdin/stdout/stderr on
``/dev/null``, a fresh folder under ``/tmp``; it builds IPython's ``InteractiveShell``, applies
the limits the grader sends first on its channel, then runs each cell it receives and answers
with JSON only (with ``seconds``, the cell's own time in this process: for the benchmark; the
grader does not use it).
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import platform
import resource
import select
import signal
import socket
import sys
import tempfile
import time
from multiprocessing.connection import Connection

from .boundary import MAX_OUTPUT  # characters of an output text sent (the grader cuts there too)
from .ipc import clear_user_keyrings, own_session_keyring, remove_system_v_objects
from .scratch import _SANDBOXED, TEMPORARY, empty, empty_temporary, note_baseline, residue

_PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 4, 36


def _prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


# The syscalls' numbers: ioprio_get, sched_getattr (policy, nice, priorities, utilization clamps).
_IOPRIO_GET, _SCHED_GETATTR = {"x86_64": (252, 315), "aarch64": (31, 275)}.get(platform.machine(), (None, None))
_PROC_STATE = ("oom_score_adj", "timerslack_ns", "autogroup", "comm")  # /proc/self files others may write


def state() -> dict:
    """What another process of this user can change in this one from outside (see the module
    doc): every resource limit, nice value, CPU affinity, scheduling policy and priority, I/O
    priority and the writable ``/proc/self`` entries, as JSON-safe values."""
    found: dict = {
        name: list(resource.getrlimit(getattr(resource, name)))
        for name in sorted(dir(resource))
        if name.startswith("RLIMIT_")
    }
    found["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
    found["affinity"] = sorted(os.sched_getaffinity(0))
    found["policy"] = os.sched_getscheduler(0)
    found["priority"] = os.sched_getparam(0).sched_priority
    if _IOPRIO_GET is not None:
        libc = ctypes.CDLL(None, use_errno=True)
        found["ioprio"] = libc.syscall(_IOPRIO_GET, 1, 0)  # IOPRIO_WHO_PROCESS, self
        attr = ctypes.create_string_buffer(56)  # struct sched_attr (SCHED_ATTR_SIZE_VER1)
        found["sched_attr"] = attr.raw.hex() if libc.syscall(_SCHED_GETATTR, 0, attr, 56, 0) == 0 else None
    for entry in _PROC_STATE:
        try:
            with open(f"/proc/self/{entry}") as f:
                found[entry] = f.read().strip()
        except OSError:
            found[entry] = None  # absent on this kernel (or no autogroup): then it stays absent
    return found


def changed(baseline: dict) -> list[str]:
    """The names of the entries of :func:`state` that differ from ``baseline`` (sorted)."""
    now = state()
    return sorted(key for key in baseline.keys() | now.keys() if baseline.get(key) != now.get(key))


# What every submission process needs: the course's package, torch, and what IPython's shell and
# a first cell import (each fork would import them again, some 50 ms, before its first cell).
WARM = (
    "torch",
    "torch._subclasses.schema_check_mode",
    "autograder.check",
    "autograder.graph",
    "autograder.memory",
    "autograder.grading.sandbox.values",
    "IPython.core.interactiveshell",
    "IPython.core.application",
    "IPython.core.completer",
    "IPython.core.completerlib",
    "IPython.core.crashhandler",
    "IPython.core.logger",
    "IPython.core.magics",
    "IPython.core.oinspect",
    "IPython.utils.capture",
    "bdb",
)
# What an EXTRA on the command line may add to the warm-up: names the grader chooses from the
# assignments' sources, never module names from a submission or the command line.
EXTRAS = {"dynamo": ("torch._dynamo", "autograder.compiled_graphs")}


def warm_up(extras: tuple[str, ...] = ()) -> None:
    """Import :data:`WARM` once, so forks start with it loaded; and the modules of each name of
    ``extras`` that is a key of :data:`EXTRAS` (others are ignored)."""
    for module in WARM + tuple(m for name in extras for m in EXTRAS.get(name, ())):
        importlib.import_module(module)
    import torch

    torch.set_num_threads(1)  # an OpenMP pool inherited through fork is not safe to use


def build_shell():
    """IPython's ``InteractiveShell`` (history off: cells, a solution's too, are never written to
    disk), built in a temporary IPython folder that is removed at once. The server builds it once,
    before serving, so that each submission process starts with its own copy-on-write copy of a
    shell that has never run a cell (some 20 ms of set-up less per notebook); the server never
    runs a cell in it."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    folder = tempfile.mkdtemp(prefix="ipython-")
    os.environ["IPYTHONDIR"] = folder
    try:
        config = Config()
        config.HistoryManager.enabled = False
        return InteractiveShell.instance(config=config)
    finally:
        empty(folder)
        os.rmdir(folder)
        del os.environ["IPYTHONDIR"]


def _clip(text: str) -> str:
    return text if len(text) <= MAX_OUTPUT else text[:MAX_OUTPUT] + "\n... (output cut)"


def _outputs(captured, error) -> list:
    outputs = [
        {"output_type": "stream", "name": name, "text": _clip(text)}
        for name, text in (("stdout", captured.stdout), ("stderr", captured.stderr))
        if text
    ]
    for rich in captured.outputs[:20]:
        data = {k: _clip(v) for k, v in rich.data.items() if isinstance(v, str) and k.startswith(("text/", "image/"))}
        if data:
            outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
    if error is not None:
        outputs.append({"output_type": "error", "ename": error[0], "evalue": _clip(error[1]), "traceback": []})
    return outputs


def _mapped() -> int:
    """Bytes of address space this process maps now."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _limit(limits: dict, mapped: int) -> None:
    """Resource limits of a submission process (``limits``: see ``Limits.for_process``; ``mapped``:
    what it mapped before its shell was built, which the memory limit comes on top of)."""
    settings = {
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_MSGQUEUE: 0,  # no POSIX message queue: it would outlive the submission (see .ipc)
        resource.RLIMIT_NOFILE: limits.get("open_files"),
        resource.RLIMIT_FSIZE: limits.get("file_size"),
        resource.RLIMIT_NPROC: limits.get("processes"),
        resource.RLIMIT_AS: mapped + limits["memory"] if limits.get("memory") else None,
    }
    for kind, value in settings.items():
        if value is not None:
            resource.setrlimit(kind, (value, value))


def _submission(channel_fd: int, tmp: str | None, shell) -> None:
    """The submission process: set up, take its limits (the channel's first message), then run
    cells from the channel, in its copy of the server's ``shell`` (:func:`build_shell`), until told
    to stop. No cell runs before the limits are applied."""
    os.setsid()
    if _SANDBOXED:
        own_session_keyring()
    try:  # at the container's memory bound the kernel kills a submission's process, not this server
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass
    os.closerange(3, channel_fd)
    os.closerange(channel_fd + 1, 65536)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # C-level prints and crash dumps go nowhere
        os.dup2(null, fd)
    os.close(null)
    workdir = tempfile.mkdtemp(prefix="notebook-", dir=tmp or None)
    os.chdir(workdir)
    os.environ["IPYTHONDIR"] = os.path.join(workdir, ".ipython")  # never the machine's profile
    mapped = _mapped()
    conn = Connection(channel_fd)

    from IPython.utils.capture import capture_output

    import autograder.check as check
    from autograder.check.raised import described

    from . import values

    shell._showtraceback = lambda *args, **kwargs: None  # tracebacks would quote hidden tests
    run_cell = shell.run_cell  # bound now: a cell that replaces shell.run_cell changes nothing here
    send = conn.send_bytes
    records: list = []
    check.report_to(lambda record: records.append(values.encode_record(record)))
    first = json.loads(conn.recv_bytes())  # the grader's, before any cell: this process's limits
    if not isinstance(first, dict) or not isinstance(first.get("limits"), dict):
        return  # never a cell without them
    _limit(first["limits"], mapped)
    clock = time.perf_counter
    while True:  # cells arrive one at a time: later cells are not in memory before they run
        request = json.loads(conn.recv_bytes())
        if "source" not in request:
            return
        records.clear()
        started = clock()
        with capture_output() as captured:
            result = run_cell(request["source"], store_history=True)
        seconds = clock() - started
        failure = result.error_before_exec if result.error_before_exec is not None else result.error_in_exec
        error = None if failure is None else described(failure)  # never raises, whatever the cell raised
        send(
            json.dumps(
                {
                    "event": "done",
                    "cell": request["cell"],
                    "outputs": _outputs(captured, error),
                    "error": error,
                    "records": list(records),
                    "seconds": seconds,
                }
            ).encode()
        )


def descendants(root: int | None = None) -> list[int]:
    """Every process below ``root`` (default: this one): its children, theirs, ..., read from /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
                parents[int(entry)] = int(stat[stat.rindex(")") + 2 :].split()[1])
            except (OSError, ValueError, IndexError):
                pass  # it ended while we looked
    found, frontier = [], [os.getpid() if root is None else root]
    while frontier:
        below = [pid for pid, parent in parents.items() if parent in frontier and pid not in found]
        found += below
        frontier = below
    return found


def _exit_code(wait_status: int) -> int:
    return os.waitstatus_to_exitcode(wait_status)


def _await_ends(pids: list[int], timeout: float) -> None:
    """Wait until every process of ``pids`` has ended (a zombie has), or ``timeout`` seconds:
    each through a pidfd (``pidfd_open``), without polling; where there is none (a kernel before
    5.3), a 2 ms sleep."""
    fds = []
    for pid in pids:
        try:
            fds.append(os.pidfd_open(pid))
        except (OSError, AttributeError):  # it is gone already, or no pidfds here
            if not hasattr(os, "pidfd_open"):
                time.sleep(0.002)
                return
    poller, deadline = select.poll(), time.monotonic() + timeout
    for fd in fds:
        poller.register(fd, select.POLLIN)
    try:
        left = set(fds)
        while left and (wait := deadline - time.monotonic()) > 0:
            for fd, _ in poller.poll(wait * 1000):
                poller.unregister(fd)
                left.discard(fd)
    finally:
        for fd in fds:
            os.close(fd)


def reap(submission: int | None, wait: bool, tmp: str | None = None) -> tuple[int, int | None]:
    """Kill and reap every descendant (orphans are re-parented here, a child subreaper, so none
    escapes) and empty the temporary folders (without the sandbox: ``tmp``, the grader's folder
    for its submissions, when given). With ``wait``, first give the submission process a second
    to end by itself (it closed its channel: it is dying), so its own exit code is known.
    Returns (processes killed, the submission's exit code or None)."""
    killed, quiet, code = 0, 0, None
    if wait and submission:
        _await_ends([submission], 1.0)
        try:
            pid, wait_status = os.waitpid(submission, os.WNOHANG)
            if pid:
                code, submission = _exit_code(wait_status), None
        except ChildProcessError:
            pass
    while quiet < 2:  # twice in a row nothing left: a process forked during a pass is caught next
        pids = descendants()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        if pids:  # until they have ended (their children are then re-parented here, seen next pass)
            _await_ends(pids, 0.05)
        while True:  # collect the dead (never block: an orphan may still be on its way here)
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == submission:
                code = _exit_code(wait_status)
        quiet = 0 if pids else quiet + 1
    if _SANDBOXED:  # the container's own IPC namespace and user: nothing of the machine's
        remove_system_v_objects()
        clear_user_keyrings()
    for folder in TEMPORARY if _SANDBOXED else ():
        empty_temporary(folder)
    if tmp and not _SANDBOXED:  # the machine's: a folder the grader made for this server, 0700
        try:
            os.chmod(tmp, 0o700)
        except OSError:
            pass
        empty(tmp)
    return killed, code


def _fork(channel: int, tmp: str | None, control: socket.socket, shell) -> int:
    """Fork a submission process on ``channel`` (closed here once forked) that runs cells in its copy
    of ``shell``; its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            control.close()
            _prctl(_PR_SET_DUMPABLE, 0)
            _submission(channel, tmp, shell)
        finally:
            os._exit(0)
    os.close(channel)
    return pid


def serve(control: socket.socket, shell) -> None:
    """Answer fork and reap requests until the control socket closes, or until this process's
    state is no longer what it was when serving began (then it answers once more and returns).
    Submission processes run their cells in their copies of ``shell`` (:func:`build_shell`)."""
    submission, baseline = None, state()
    note_baseline()  # what the server's own mount points use, before any submission
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 65536, 1)
        except OSError:
            return
        if not message:
            return
        request = json.loads(message)
        tmp = request.get("tmp") if isinstance(request.get("tmp"), str) else None
        if request.get("op") == "fork" and fds:
            if different := changed(baseline):  # never fork a submission from a changed server
                for fd in fds:
                    os.close(fd)
                control.send(json.dumps({"error": "changed", "changed": different}).encode())
                return
            submission = _fork(fds[0], tmp, control, shell)
            for fd in fds[1:]:
                os.close(fd)
            control.send(b'{"forked": true}')
        elif request.get("op") == "reap":
            killed, code = reap(submission, bool(request.get("wait")), tmp)
            submission, different = None, changed(baseline) + residue()
            forked = bool(request.get("fork") and fds and not different)
            if forked:  # checked just now, as before any fork: the next notebook's process
                submission = _fork(fds[0], tmp, control, shell)
            for fd in fds[1:] if forked else fds:
                os.close(fd)
            answer = {"reaped": killed, "exit_code": code, "changed": different, "forked": forked}
            control.send(json.dumps(answer).encode())
            if different:
                return
        else:
            for fd in fds:
                os.close(fd)
            control.send(b'{"error": "unknown request"}')


def main(argv: list[str]) -> None:
    control = socket.socket(fileno=int(argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the grader's terminal: the grader decides
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_DUMPABLE, 0)  # submissions (same uid) cannot read this process's memory
    os.environ["MPLBACKEND"] = "Agg"
    warm_up(tuple(argv[2:]))
    shell = build_shell()
    # What the server holds now never changes: out of the collector's sight, a submission's
    # collections neither scan it nor copy its pages (copy-on-write) by touching their headers.
    gc.freeze()
    control.send(b'{"ready": true}')
    serve(control, shell)


if __name__ == "__main__":
    main(sys.argv)
