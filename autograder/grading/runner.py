"""Run a notebook's code cells in a fresh, limited process and collect what each cell did.

Why not a Jupyter kernel per submission: starting one and importing torch in it costs about 2 s
per notebook on 2 cores, more than grading the answers. Instead the grading worker imports torch
and IPython once, and each submission runs in a *fork* of it: a new process, with its own memory
(copy-on-write), that learner code cannot use to reach the worker or other submissions. The
fork runs the cells with IPython's ``InteractiveShell`` (so magics and ``display`` work) and
reports over a pipe, in JSON only: the worker never unpickles anything a learner could forge.

Limits: ``cell_timeout`` seconds per cell, ``total_timeout`` for the whole notebook, and
``memory_limit`` bytes of address space on top of what the worker already maps; outputs are cut
at ``MAX_OUTPUT`` characters per cell. A fork that dies (``os._exit``, a segfault) is reported.
"""
from __future__ import annotations

import faulthandler
import json
import multiprocessing
import os
import resource
import time
from dataclasses import dataclass, field

from . import values

__all__ = ["CellRun", "Run", "run_cells", "warm_up", "MAX_OUTPUT"]

MAX_OUTPUT = 100_000  # characters of output kept per cell
_MAX_MESSAGE = 50_000_000  # bytes of one message from the fork; more is treated as a crash


@dataclass
class CellRun:
    """What one cell did: ``finished`` is False when it never completed (timeout, crash);
    ``outputs`` are nbformat output dicts; ``error`` is ``(ename, evalue)`` or None;
    ``exports`` the values the course's checks reported, as ``[name, encoded value, tolerance]``."""

    finished: bool = False
    outputs: list = field(default_factory=list)
    error: tuple[str, str] | None = None
    exports: list = field(default_factory=list)


@dataclass
class Run:
    """A whole notebook's run: ``status`` is ``"ok"``, ``"timeout"`` (one cell ran too long),
    ``"notebook time limit"``, ``"crashed (signal 9)"``/``"crashed (exit code 3)"`` (the process
    died) or ``"crashed (unreadable report)"``; ``cell`` is the index of the cell it stopped in."""

    cells: list[CellRun]
    status: str = "ok"
    cell: int | None = None


def warm_up() -> None:
    """Import what every notebook needs once, in the worker, so forks start with it loaded."""
    import IPython.core.interactiveshell  # noqa: F401
    import torch  # noqa: F401
    import torch._dynamo  # noqa: F401  (the first optimizer or checkpoint imports it: about 3 s)

    import autograder.check  # noqa: F401
    import autograder.graph  # noqa: F401
    import autograder.memory  # noqa: F401


def _clip(text: str) -> str:
    return text if len(text) <= MAX_OUTPUT else text[:MAX_OUTPUT] + "\n... (output cut)"


def _outputs(captured, error) -> list:
    outputs = [{"output_type": "stream", "name": name, "text": _clip(text)}
               for name, text in (("stdout", captured.stdout), ("stderr", captured.stderr)) if text]
    for rich in captured.outputs[:20]:
        data = {k: _clip(v) for k, v in rich.data.items() if isinstance(v, str) and k.startswith(("text/", "image/"))}
        if data:
            outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
    if error is not None:
        outputs.append({"output_type": "error", "ename": error[0], "evalue": _clip(error[1]), "traceback": []})
    return outputs


def _child(conn, workdir: str, memory_limit: int | None) -> None:
    def send(message: dict) -> None:
        conn.send_bytes(json.dumps(message).encode())

    os.chdir(workdir)
    faulthandler.disable()  # a crash dump would go to the parent's stderr (pytest's, say)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # C-level prints and crash dumps do not reach the grader's terminal
        os.dup2(null, fd)
    if memory_limit:
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (mapped + memory_limit, mapped + memory_limit))
    os.environ["MPLBACKEND"] = "Agg"
    import torch

    torch.set_num_threads(1)  # an OpenMP pool inherited through fork is not safe to use
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    import autograder.check as check

    shell = InteractiveShell.instance()
    shell._showtraceback = lambda *args, **kwargs: None  # tracebacks would quote hidden tests
    run_cell = shell.run_cell  # bound now: a cell that replaces shell.run_cell changes nothing here
    exports: list = []
    check._EXPORT = lambda name, value, tolerance: exports.append([name, values.encode(value), tolerance])
    while True:  # cells arrive one at a time: later cells (tests) are not in memory before they run
        request = json.loads(conn.recv_bytes())
        if "source" not in request:
            break
        index, source = request["cell"], request["source"]
        exports.clear()
        with capture_output() as captured:
            result = run_cell(source, store_history=True)
        failure = getattr(result, "error_before_exec", None) or getattr(result, "error_in_exec", None)
        error = None if failure is None else (type(failure).__name__, str(failure))
        send({"event": "done", "cell": index, "outputs": _outputs(captured, error), "error": error,
              "exports": list(exports)})


def run_cells(sources: list[str], workdir: str, cell_timeout: float = 60, total_timeout: float = 300,
              memory_limit: int | None = 2 * 1024 ** 3) -> Run:
    """Run ``sources`` (code cell texts, in order) in a fresh fork with ``workdir`` as its
    current folder.

    Args:
        cell_timeout, total_timeout: seconds.
        memory_limit: bytes of extra address space the fork may map (None: no limit).

    Returns:
        A :class:`Run`; cells after a timeout or crash stay ``finished=False``. Does not raise
        for anything the cells do.
    """
    run = Run([CellRun() for _ in sources])
    context = multiprocessing.get_context("fork")
    conn, child_conn = context.Pipe(duplex=True)
    process = context.Process(target=_child, args=(child_conn, workdir, memory_limit), daemon=True)
    process.start()
    child_conn.close()
    notebook_deadline = time.monotonic() + total_timeout
    try:
        for index, source in enumerate(sources):
            run.cell = index
            conn.send_bytes(json.dumps({"cell": index, "source": source}).encode())
            cell_deadline = time.monotonic() + cell_timeout
            wait = min(cell_deadline, notebook_deadline) - time.monotonic()
            if not conn.poll(max(wait, 0)):
                run.status = "notebook time limit" if notebook_deadline <= cell_deadline else "timeout"
                break
            try:
                message = json.loads(conn.recv_bytes(_MAX_MESSAGE))
                if message.get("event") != "done" or message.get("cell") != index:
                    raise ValueError("out of order")
            except EOFError:
                process.join(1)
                code = process.exitcode
                run.status = f"crashed ({f'signal {-code}' if code is not None and code < 0 else f'exit code {code}'})"
                break
            except (OSError, ValueError, TypeError, AttributeError):
                run.status = "crashed (unreadable report)"
                break
            cell = run.cells[index]
            cell.finished = True
            cell.outputs = message.get("outputs") or []
            cell.error = tuple(message["error"]) if message.get("error") else None
            cell.exports = message.get("exports") or []
        else:
            run.cell = None
            conn.send_bytes(json.dumps({"stop": True}).encode())
    except (BrokenPipeError, OSError):  # the process died between two cells
        process.join(1)
        run.status = f"crashed (exit code {process.exitcode})"
    finally:
        conn.close()
        if process.is_alive():
            process.kill()
        process.join()
    return run
