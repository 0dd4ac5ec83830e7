"""Does the runner run cells in order in a fresh submission process of the sandbox, report what
each did, and survive what they do?"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import autograder
from autograder.check.checked import Checked
from autograder.grading import status
from autograder.grading.sandbox.boundary import CUT_NOTEBOOK, MAX_NOTEBOOK_OUTPUT, MAX_OUTPUT
from autograder.grading.sandbox.container import Sandbox
from autograder.grading.sandbox.limits import Limits
from autograder.grading.sandbox.runner import run_cells

# A cell that sleeps 600 s must be stopped at its 2 s deadline: well under this, however busy the machine.
HANG_SECONDS = 60


def test_cells_share_a_namespace_and_report_outputs(sandbox):
    """Do cells see each other's names, with stdout, stderr, results and errors reported per cell?"""
    run = run_cells(
        ["x = 2\nprint('hi')", "import sys; print('w', file=sys.stderr)", "x * 3", "1 / 0"], sandbox, Limits()
    )
    assert run.status == "ok" and run.cell is None and all(c.finished for c in run.cells)
    assert run.cells[0].outputs == [{"output_type": "stream", "name": "stdout", "text": "hi\n"}]
    assert run.cells[1].outputs[0]["name"] == "stderr"
    assert "6" in run.cells[2].outputs[0]["text"]
    assert run.cells[3].error == ("ZeroDivisionError", "division by zero")
    assert run.cells[3].outputs[-1]["traceback"] == [], "tracebacks could quote hidden tests"


def test_each_run_starts_from_a_fresh_process(sandbox):
    """Does a second run in the same sandbox see nothing the first one defined?"""
    run_cells(["leftover = 1"], sandbox, Limits())
    run = run_cells(["leftover"], sandbox, Limits())
    assert run.cells[0].error == ("NameError", "name 'leftover' is not defined")


def test_checks_report_the_values_they_compared(sandbox):
    """Does a check called in a cell come back as a Checked record (name, kind, received,
    expected, options), carried as plain JSON?"""
    run = run_cells(
        [
            "import torch\nfrom autograder import check",
            "check.tensor(torch.tensor([2.0]), torch.tensor([2.0]), 'x.grad')",
        ],
        sandbox,
        Limits(),
    )
    assert run.status == "ok" and run.cells[0].records == []
    (record,) = run.cells[1].records
    assert isinstance(record, Checked) and (record.name, record.kind) == ("x.grad", "tensor")
    assert torch.equal(record.received, torch.tensor([2.0])) and torch.equal(record.expected, torch.tensor([2.0]))
    assert record.options == {"show_values": True}
    assert run.cells[1].outputs[0]["text"].startswith("OK x.grad")


@pytest.mark.parametrize(
    "source,expected",
    [
        ("import os; os._exit(3)", "crashed (exit code 3)"),
        ("import ctypes; ctypes.string_at(0)", "crashed (signal 11)"),
        ("while True: pass", status.TIMEOUT),
    ],
)
def test_crashes_and_timeouts_name_the_cell(sandbox, source, expected):
    """Are an os._exit, a segfault and an endless loop reported with the cell they happened in,
    and does the sandbox still grade the next notebook?"""
    run = run_cells(["x = 1", source, "y = 2"], sandbox, Limits(cell_timeout=2))
    assert (run.status, run.cell) == (expected, 1)
    assert [c.finished for c in run.cells] == [True, False, False]
    assert run_cells(["x = 1"], sandbox, Limits()).status == "ok"


@pytest.mark.parametrize(
    "limits,total_timeout",
    [(Limits(cell_timeout=5, total_timeout=2), None), (Limits(cell_timeout=5, total_timeout=300), 2)],
)
def test_notebook_time_limit(sandbox, limits, total_timeout):
    """Does the whole-notebook limit (from the limits, or the run's own ``total_timeout``) stop
    cells that are each within the per-cell limit?"""
    run = run_cells(["import time; time.sleep(0.8)"] * 5, sandbox, limits, total_timeout=total_timeout)
    assert run.status == status.NOTEBOOK_TIME_LIMIT and run.cell == 2


def test_memory_limit_turns_a_hog_into_an_error(sandbox_available):
    """Does allocating past the memory limit raise in the cell instead of exhausting the machine?"""
    limits = Limits(memory=2**30)
    with Sandbox(limits) as small:
        run = run_cells(["import torch\nx = torch.empty(2 ** 33)", "ok = True"], small, limits)
    assert run.status == "ok" and "can't allocate memory" in run.cells[0].error[1]
    assert run.cells[1].finished and run.cells[1].error is None


def test_huge_output_is_cut(sandbox):
    """Is a cell's output cut at MAX_OUTPUT characters?"""
    run = run_cells(["print('x' * 10_000_000)"], sandbox, Limits())
    assert len(run.cells[0].outputs[0]["text"]) < MAX_OUTPUT + 100


def test_later_cells_are_not_visible_to_earlier_ones(sandbox):
    """Is a later cell's text (a hidden test) out of reach of code running before it?"""
    probe = (
        "import gc\nfound = any(isinstance(o, str) and 'SECRET-42' in o and 'probe' not in o\n"
        "            for o in gc.get_objects())\nprint(found)"
    )
    run = run_cells([probe, "secret = 'SECRET-42'"], sandbox, Limits())
    assert run.cells[0].outputs[0]["text"] == "False\n"


def test_a_course_under_tmp_is_seen_inside_the_sandbox(sandbox_available, tmp_path):
    """The container has its own /tmp: is a course checkout that lives under /tmp (a clone in a
    temporary folder, as CI may make) still bound inside it, left alone when /tmp is emptied, and
    read-only all the way down (no module can be planted next to it for the next submission)?"""
    copy = tmp_path / "course"
    shutil.copytree(Path(autograder.__file__).parent, copy / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    plant = (
        f"for folder in ({str(copy)!r}, {str(tmp_path)!r}):\n"
        "    try:\n"
        "        open(folder + '/planted.py', 'w').write('x')\n"
        "        print('planted in', folder)\n"
        "    except OSError as error:\n"
        "        print(type(error).__name__)\n"
    )
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from autograder.grading.sandbox.container import Sandbox\n"
        "from autograder.grading.sandbox.limits import Limits\n"
        "from autograder.grading.sandbox.runner import run_cells\n"
        "with Sandbox(Limits(cell_timeout=30)) as box:\n"
        "    for _ in range(2):\n"
        "        run = run_cells(['import autograder; print(autograder.__file__)'], box, Limits(cell_timeout=30))\n"
        "        print(run.status, run.cells[0].outputs[0]['text'].strip())\n"
        f"    print(run_cells([{plant!r}], box, Limits()).cells[0].outputs[0]['text'].strip())\n"
    )
    env = dict(os.environ, PYTHONPATH=str(copy))
    done = subprocess.run(
        [sys.executable, str(probe)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    lines = done.stdout.split("\n")
    assert lines[:2] == [f"ok {copy}/autograder/__init__.py"] * 2, done.stdout + done.stderr
    assert lines[2:4] == ["OSError", "OSError"], done.stdout + done.stderr  # read-only, not "planted in"


# One way each that a process of the fork server's user reaches its parent (see forkserver.py).
PARENT_CHANGES = {
    "address space": "import resource\nresource.prlimit(os.getppid(), resource.RLIMIT_AS, (1 << 26, 1 << 26))",
    "processes": "import resource\nresource.prlimit(os.getppid(), resource.RLIMIT_NPROC, (0, 0))",
    "open files": "import resource\nresource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (3, 3))",
    "nice": "os.setpriority(os.PRIO_PROCESS, os.getppid(), 19)",
    "nice of the user": "os.setpriority(os.PRIO_USER, 0, 19)",
    "affinity": "os.sched_setaffinity(os.getppid(), {min(os.sched_getaffinity(0))})",
    "policy": "os.sched_setscheduler(os.getppid(), os.SCHED_IDLE, os.sched_param(0))",
    "io priority": "import ctypes\nctypes.CDLL(None).syscall(251, 1, os.getppid(), 3 << 13)",  # ioprio_set IDLE
    "oom score": "open(f'/proc/{os.getppid()}/oom_score_adj', 'w').write('1000')",
    "timer slack": "open(f'/proc/{os.getppid()}/timerslack_ns', 'w').write('100000000')",
    "autogroup": "open(f'/proc/{os.getppid()}/autogroup', 'w').write('19')",
    "utilization clamp": "import ctypes, struct\n"  # sched_setattr: SCHED_FLAG_KEEP_ALL | UTIL_CLAMP_MAX, max 0
    "attr = struct.pack('=IIQiIQQQII', 56, 0, 0x18 | 0x40, 0, 0, 0, 0, 0, 0, 0)\n"
    "if ctypes.CDLL(None).syscall(314, os.getppid(), attr, 0) != 0:\n"
    "    print('not on this kernel')",
    "comm": "open(f'/proc/{os.getppid()}/comm', 'w').write('renamed')",
}
# RLIMIT_AS left out: what a process maps varies by a page; a lowered bound shows in the status
_STATE = (
    "import os, resource, ctypes\n"
    "print(sorted(resource.getrlimit(getattr(resource, n)) for n in dir(resource)"
    " if n.startswith('RLIMIT_') and n != 'RLIMIT_AS'),"
    " os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0)), os.sched_getscheduler(0),"
    " ctypes.CDLL(None).syscall(252, 1, 0), open('/proc/self/timerslack_ns').read())"
)


@pytest.mark.parametrize("change", sorted(PARENT_CHANGES))
def test_a_submission_cannot_change_the_next_ones_fork_server(sandbox, change):
    """After a submission changes its fork server's limits, priority, affinity, scheduling or
    /proc entries (the kernel lets a process of the same user), does the next submission start
    exactly as one from an untouched server would (its container replaced)?"""
    before = run_cells([_STATE], sandbox, Limits()).cells[0].outputs
    attack = run_cells(["import os\n" + PARENT_CHANGES[change]], sandbox, Limits())
    assert attack.cells[0].finished and attack.cells[0].error is None, attack.cells[0]
    if "not on this kernel" in str(attack.cells[0].outputs):
        pytest.skip(f"{change}: this kernel has no such setting (no CONFIG_UCLAMP_TASK)")
    after = run_cells([_STATE], sandbox, Limits())
    assert after.status == "ok" and after.cells[0].outputs == before


# A cell writes straight to its own channel: the grader reads whatever the learner's process sends.
_FRAME = (
    "import json, os, struct, time\n"
    "def channel():\n"
    "    for fd in os.listdir('/proc/self/fd'):\n"
    "        try:\n"
    "            if os.readlink(f'/proc/self/fd/{fd}').startswith('socket:'):\n"
    "                return int(fd)\n"
    "        except OSError:\n"
    "            pass\n"
    "def frame(body):\n"
    "    os.write(channel(), struct.pack('!i', len(body)) + body)\n"
    "def report(**fields):\n"
    "    frame(json.dumps(dict({'event': 'done', 'cell': 0, 'outputs': [], 'error': None, 'records': []}, **fields))"
    ".encode())\n"
)
FORGED_REPORTS = {
    "an output without its fields": "report(outputs=[{'output_type': 'stream'}])",
    "outputs that are not a list": "report(outputs={'a': 1})",
    "an output of another kind": "report(outputs=[{'output_type': 'execute_result', 'data': {}}])",
    "display data that is not text": "report(outputs=[{'output_type': 'display_data', 'data': {'text/plain': 1}}])",
    "too many outputs": "report(outputs=[{'output_type': 'stream', 'name': 'stdout', 'text': 'x'}] * 1000)",
    "a cell number that is a bool": "report(cell=False)",
    "an error of numbers": "report(error=[1, 2])",
    "records that are not a list": "report(records={'x': 1})",
    "records of too many values": "report(records=[{'__dict__': [[i, 0] for i in range(200_000)]}])",
    "not JSON": "frame(b'\\xff not json')",
    "JSON nested too deep": "frame(b'[' * 200000)",
    "a frame over the size limit": "os.write(channel(), struct.pack('!i', 2**31 - 1))\ntime.sleep(30)",
    "a 64-bit length": "os.write(channel(), struct.pack('!i', -1) + struct.pack('!Q', 2**40))\ntime.sleep(30)",
}


@pytest.mark.parametrize("forged", sorted(FORGED_REPORTS))
def test_a_forged_report_is_the_submissions_status(sandbox, forged):
    """Does a report of another shape than the fork server's, or over the size limit, end that
    run with ``crashed (malformed report)`` at once (the next run is normal)?"""
    run = run_cells([_FRAME + FORGED_REPORTS[forged], "y = 1"], sandbox, Limits(cell_timeout=20))
    assert (run.status, run.cell) == (status.MALFORMED_REPORT, 0)
    assert run_cells(["x = 1"], sandbox, Limits()).status == "ok"


def test_a_partial_frame_is_a_timeout(sandbox):
    """Does a length header followed by silence time out at the cell's deadline, not hang?"""
    started = time.monotonic()
    run = run_cells(
        [_FRAME + "os.write(channel(), struct.pack('!i', 1000) + b'{')\ntime.sleep(600)"],
        sandbox,
        Limits(cell_timeout=2),
    )
    assert run.status == status.TIMEOUT and time.monotonic() - started < HANG_SECONDS


def test_a_process_that_stops_reading_is_a_timeout(sandbox):
    """Does a cell that forges its own report and then never reads its channel again (the next
    cell, bigger than a socket buffer, cannot be sent) time out at the cell's deadline, not hang
    the grader on a full buffer?"""
    started = time.monotonic()
    forged = _FRAME + "report()\ntime.sleep(600)"
    run = run_cells([forged, "#" + "x" * 4_000_000, "y = 1"], sandbox, Limits(cell_timeout=2))
    assert (run.status, run.cell) == (status.TIMEOUT, 1) and time.monotonic() - started < HANG_SECONDS


def test_outputs_kept_for_a_notebook_are_bounded(sandbox):
    """Are a notebook's outputs cut at MAX_NOTEBOOK_OUTPUT characters in all, with a note, however
    many cells print?"""
    run = run_cells(["print('x' * 90_000)"] * 40, sandbox, Limits())
    texts = [o["text"] for c in run.cells for o in c.outputs]
    assert run.status == "ok" and sum(map(len, texts)) < MAX_NOTEBOOK_OUTPUT + 40 * 200
    assert texts[-1] == CUT_NOTEBOOK


_REACH_INTO_PARENT = """
import ctypes, os

libc, parent, reached = ctypes.CDLL(None, use_errno=True), os.getppid(), []
buffer = ctypes.create_string_buffer(64)
iov = (ctypes.c_void_p * 2)(ctypes.cast(buffer, ctypes.c_void_p), 64)
remote = (ctypes.c_void_p * 2)(0x400000, 64)
pidfd = libc.syscall(434, parent, 0)                                       # pidfd_open: allowed, a handle only
attempts = {
    "ptrace attach": lambda: libc.ptrace(16, parent, 0, 0),                # PTRACE_ATTACH
    "ptrace seize": lambda: libc.ptrace(0x4206, parent, 0, 0),             # PTRACE_SEIZE
    "process_vm_readv": lambda: libc.syscall(310, parent, iov, 1, remote, 1, 0),
    "process_vm_writev": lambda: libc.syscall(311, parent, iov, 1, remote, 1, 0),
    "pidfd_getfd": lambda: libc.syscall(438, pidfd, 3, 0),                 # its control socket is fd 3 or 4
    "pidfd_getfd 4": lambda: libc.syscall(438, pidfd, 4, 0),
    "kcmp": lambda: libc.syscall(312, os.getpid(), parent, 0, 0, 0),       # KCMP_FILE
}
for name, attempt in attempts.items():
    if attempt() >= 0:
        reached.append(name)
for path in ("mem", "environ", "maps", "cwd", "root"):
    try:
        open(f"/proc/{parent}/{path}", "rb").read(1)
        reached.append(path)
    except OSError:
        pass
for fd in os.listdir(f"/proc/{parent}/fd"):    # the numbers show (the owner's DAC); what they are does not
    for look in (os.readlink, lambda path: os.close(os.open(path, os.O_RDONLY))):
        try:
            look(f"/proc/{parent}/fd/{fd}")
            reached.append(f"fd {fd}")
        except OSError:
            pass
print(reached)
"""


def test_a_submission_cannot_reach_into_its_fork_server(sandbox):
    """Can a submission process (the server's user) not trace its fork server, read or write its
    memory, take its descriptors or see its files (it is not dumpable)?"""
    run = run_cells([_REACH_INTO_PARENT], sandbox, Limits())
    assert run.status == "ok" and run.cells[0].outputs[0]["text"] == "[]\n", run.cells[0]


# A submission's leftovers deeper than PATH_MAX (18 folders of 250-character names: 4,518
# characters), in a folder it made read-only, in both temporary folders.
_DEEP_RESIDUE = (
    "import os\n"
    "for top in ('/tmp', '/dev/shm'):\n"
    "    fd = os.open(top, os.O_RDONLY)\n"
    "    for i in range(18):\n"
    "        name = chr(97 + i) * 250\n"
    "        os.mkdir(name, dir_fd=fd)\n"
    "        fd = os.open(name, os.O_RDONLY, dir_fd=fd)\n"
    "    os.mkdir('locked', dir_fd=fd)\n"
    "    locked = os.open('locked', os.O_RDONLY, dir_fd=fd)\n"
    "    for n in range(3):\n"
    "        os.close(os.open(f'planted{n}', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=locked))\n"
    "    os.fchmod(locked, 0o500)\n"
    "    os.fchmod(fd, 0o500)\n"
)
_TEMPORARY_LEFT = (
    "import os\n"
    "kept = set(os.environ.get('AUTOGRADER_READ_ONLY', '').split(os.pathsep)) | {os.getcwd()}  # and its own\n"
    "print(sorted(e for top in ('/tmp', '/dev/shm') for e in os.listdir(top)"
    " if not any(k == os.path.join(top, e) or k.startswith(os.path.join(top, e) + '/') for k in kept)))\n"
)


def test_files_deeper_than_path_max_in_a_read_only_folder_do_not_reach_the_next_submission(sandbox):
    """A submission leaves files under a read-only folder deeper than 4,096 characters in /tmp and
    /dev/shm (where removing by path fails): does the next submission find both empty?"""
    attack = run_cells([_DEEP_RESIDUE], sandbox, Limits())
    assert attack.cells[0].finished and attack.cells[0].error is None, attack.cells[0]
    after = run_cells([_TEMPORARY_LEFT], sandbox, Limits())
    assert after.status == "ok" and after.cells[0].outputs[0]["text"].strip() == "[]", after.cells[0]


def test_what_is_left_in_a_temporary_folder_replaces_the_container(tmp_path, monkeypatch):
    """When emptying leaves an entry, or more blocks or inodes in use than when serving began, does
    the fork server's reap answer name it (so the grader replaces the container)?"""
    from autograder.grading.sandbox import scratch

    monkeypatch.setattr(scratch, "_SANDBOXED", True)
    monkeypatch.setattr(scratch, "TEMPORARY", (str(tmp_path),))
    monkeypatch.setattr(scratch, "_BASELINE", {str(tmp_path): (10, 5)})
    monkeypatch.setattr(scratch, "temporary_use", lambda: {str(tmp_path): (10, 5)})
    assert scratch.residue() == []
    (tmp_path / "left").write_text("x")
    assert scratch.residue() == [f"residue in {tmp_path}"]
    (tmp_path / "left").unlink()
    monkeypatch.setattr(scratch, "temporary_use", lambda: {str(tmp_path): (10, 6)})  # an inode more
    assert scratch.residue() == [f"residue in {tmp_path}"]


_LIMITS_SEEN = (
    "import resource\n"
    "print([resource.getrlimit(getattr(resource, n))[0] for n in "
    "('RLIMIT_NOFILE', 'RLIMIT_FSIZE', 'RLIMIT_CORE', 'RLIMIT_MSGQUEUE')])"
)


def test_every_submission_process_runs_its_first_cell_under_its_limits(sandbox):
    """The fork server forks the next notebook's process right after a reap, before the grader
    sends anything: does that process (and a first one) run its first cell with the limits
    already applied?"""
    limits = sandbox.limits
    want = f"{[limits.open_files, limits.file_size, 0, 0]}\n"
    for _ in range(3):  # the first process, then ones forked ahead after each reap
        run = run_cells([_LIMITS_SEEN], sandbox, Limits())
        assert run.status == "ok" and run.cells[0].outputs[0]["text"] == want, run.cells[0]


def test_a_process_whose_first_message_is_a_cell_runs_nothing(sandbox):
    """Does a submission process that gets a cell before its limits (the grader always sends the
    limits first) end without running it or answering?"""
    from autograder.grading.sandbox.boundary import Closed, receive, send

    sandbox.open_channel().close()  # its process started under limits; then reaped
    sandbox.reap()
    sandbox._settle()  # the reap's answer: the next process, forked ahead, not yet given its limits
    conn, sandbox._next = sandbox._next, None
    try:
        send(conn.fileno(), b'{"cell": 0, "source": "print(1)"}', time.monotonic() + 5)
        with pytest.raises(Closed):
            receive(conn.fileno(), time.monotonic() + 10)
    finally:
        conn.close()
        sandbox.reap()
    assert run_cells(["x = 1"], sandbox, Limits()).status == "ok"


def test_dynamo_is_imported_ahead_only_when_an_assignment_needs_it(sandbox_available):
    """Does the fork server import torch._dynamo only when the grader names ``dynamo`` (an
    assignment's source uses torch.compile), and ignore names it does not know?"""
    from autograder.grading.sandbox.container import extras_for

    assert extras_for(["y = torch.compile(f)(x)"]) == ("dynamo",) and extras_for(["y = f(x)"]) == ()
    probe = ["import sys\nprint('torch._dynamo' in sys.modules, 'os.system' in sys.modules)"]
    for extras, want in [((), "False False\n"), (("dynamo", "os.system"), "True False\n")]:
        with Sandbox(Limits(), extras=extras) as box:
            run = run_cells(probe, box, Limits())
        assert run.status == "ok" and run.cells[0].outputs[0]["text"] == want, (extras, run.cells[0])
