"""Run a notebook's code cells in a fresh submission process of a sandbox, one cell at a time.

The grader sends each cell's text over the submission's channel and waits, within the cell's and
the notebook's time limits, for one JSON answer: the cell's outputs, its error and the records
its checks made. Nothing is unpickled; a process that dies, hangs or answers garbage ends the run
with a status, and everything it started is killed (``Sandbox.reap``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from . import status
from .limits import Limits
from .sandbox import Sandbox, SandboxError
from .values import decode_record

__all__ = ["CellRun", "Run", "run_cells"]

_MAX_MESSAGE = 50_000_000  # bytes of one answer; more is treated as a crash


@dataclass
class CellRun:
    """What one cell did: ``finished`` is False when it never completed (timeout, crash);
    ``outputs`` are nbformat output dicts; ``error`` is ``(ename, evalue)`` or None; ``records``
    the :class:`autograder.check.Checked` records its checks made (decoded; unreadable ones left out)."""

    finished: bool = False
    outputs: list = field(default_factory=list)
    error: tuple[str, str] | None = None
    records: list = field(default_factory=list)


@dataclass
class Run:
    """A whole notebook's run: ``status`` is ``"ok"`` or a status of :mod:`.status` (a timeout,
    the notebook time limit, a crash); ``cell`` is the index of the cell it stopped in."""

    cells: list[CellRun]
    status: str = "ok"
    cell: int | None = None


def _records(raw) -> list:
    records = []
    for item in raw if isinstance(raw, list) else []:
        try:
            records.append(decode_record(item))
        except (ValueError, TypeError, KeyError, RuntimeError, AttributeError, OverflowError):
            pass  # a forged or broken record earns nothing
    return records


def run_cells(sources: list[str], sandbox: Sandbox, limits: Limits, total_timeout: float | None = None) -> Run:
    """Run ``sources`` (code cell texts, in order) in a new submission process of ``sandbox``.

    Args:
        total_timeout: seconds for the whole run (default ``limits.total_timeout``).

    Returns:
        A :class:`Run`; cells after a timeout or crash stay ``finished=False``. Does not raise for
        anything the cells do; the submission's processes are gone when it returns.
    """
    run = Run([CellRun() for _ in sources])
    notebook_deadline = time.monotonic() + (limits.total_timeout if total_timeout is None else total_timeout)
    try:
        conn = sandbox.open_channel()
    except SandboxError:  # the last submission took its fork server down: a fresh container, once
        try:
            sandbox.start()
            conn = sandbox.open_channel()
        except SandboxError:
            sandbox.close()
            run.status, run.cell = status.SANDBOX_LOST, 0
            return run
    died = False
    try:
        for index, source in enumerate(sources):
            run.cell = index
            conn.send_bytes(json.dumps({"cell": index, "source": source}).encode())
            cell_deadline = time.monotonic() + limits.cell_timeout
            if not conn.poll(max(min(cell_deadline, notebook_deadline) - time.monotonic(), 0)):
                run.status = status.NOTEBOOK_TIME_LIMIT if notebook_deadline <= cell_deadline else status.TIMEOUT
                break
            try:
                message = json.loads(conn.recv_bytes(_MAX_MESSAGE))
                if not isinstance(message, dict) or message.get("event") != "done" or message.get("cell") != index:
                    raise ValueError("out of order")
            except EOFError:
                died = True
                break
            except (OSError, ValueError, TypeError, AttributeError, RecursionError):
                run.status = status.UNREADABLE_REPORT
                break
            cell = run.cells[index]
            cell.finished = True
            cell.outputs = [o for o in message.get("outputs") or [] if isinstance(o, dict)]
            error = message.get("error")
            cell.error = (str(error[0]), str(error[1])) if isinstance(error, list) and len(error) == 2 else None
            cell.records = _records(message.get("records"))
        else:
            run.cell = None
            conn.send_bytes(json.dumps({"stop": True}).encode())
    except (BrokenPipeError, OSError):  # the process died between two cells
        died = True
    finally:
        conn.close()
        exit_code = sandbox.reap(wait=died)
    if died:
        run.status = status.crashed(exit_code)
    return run
