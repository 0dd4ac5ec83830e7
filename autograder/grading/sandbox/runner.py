"""Run a notebook's code cells in a fresh submission process of a sandbox, one cell at a time.

The grader sends each cell's text over the submission's channel and waits, within the cell's and
the notebook's time limits, for one JSON answer: the cell's outputs, its error and the records
its checks made, read and checked by :mod:`.boundary` (a deadline for the whole frame, a size
limit, a schema). Nothing is unpickled; a process that dies, hangs, stalls in the middle of a
frame or answers garbage ends the run with a status, and everything it started is killed
(``Sandbox.reap``) before the next submission's process is forked.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from .. import status
from .boundary import Closed, Malformed, OutputBudget, Timeout, cell_report, receive, send
from .container import Sandbox, SandboxError
from .limits import Limits
from .values import decode_record

__all__ = ["CellRun", "Run", "run_cells"]


@dataclass
class CellRun:
    """What one cell did: ``finished`` is False when it never completed (timeout, crash);
    ``outputs`` are nbformat output dicts; ``error`` is ``(ename, evalue)`` or None; ``records``
    the :class:`autograder.check.Checked` records its checks made (decoded; unreadable ones left out);
    ``seconds`` its own time as its process reported it (for the benchmark; never graded)."""

    finished: bool = False
    outputs: list = field(default_factory=list)
    error: tuple[str, str] | None = None
    records: list = field(default_factory=list)
    seconds: float = 0.0


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


def run_cells(
    sources: list[str],
    sandbox: Sandbox,
    limits: Limits,
    total_timeout: float | None = None,
    keep_records: set[int] | None = None,
) -> Run:
    """Run ``sources`` (code cell texts, in order) in a new submission process of ``sandbox``.

    Args:
        total_timeout: seconds for the whole run (default ``limits.total_timeout``).
        keep_records: indices of the cells whose check records are kept (default all); the
            others' are dropped as they arrive (nobody judges them: memory kept for nothing).

    Returns:
        A :class:`Run`; cells after a timeout or crash stay ``finished=False``. Does not raise for
        anything the cells do. When it returns the fork server has been asked to kill every
        process of the submission (``Sandbox.reap``); it has done so before it forks another.
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
    died, budget = False, OutputBudget()
    try:
        for index, source in enumerate(sources):
            run.cell = index
            cell_deadline = time.monotonic() + limits.cell_timeout
            deadline = min(cell_deadline, notebook_deadline)
            try:  # deadlines for whole frames, both ways: a process that stops reading or writing is a timeout
                send(conn.fileno(), json.dumps({"cell": index, "source": source}).encode(), deadline)
                frame = receive(conn.fileno(), deadline)
                report = cell_report(frame, index, budget, keep_records is None or index in keep_records)
            except Timeout:
                run.status = status.NOTEBOOK_TIME_LIMIT if notebook_deadline <= cell_deadline else status.TIMEOUT
                break
            except (Closed, ConnectionResetError, BrokenPipeError):  # it died before, or while, answering
                died = True
                break
            except Malformed:
                run.status = status.MALFORMED_REPORT
                break
            except OSError:
                run.status = status.UNREADABLE_REPORT
                break
            cell = run.cells[index]
            cell.finished, cell.outputs, cell.error, cell.seconds = True, report.outputs, report.error, report.seconds
            cell.records = _records(report.records)
        else:
            run.cell = None
            send(conn.fileno(), json.dumps({"stop": True}).encode(), time.monotonic() + 1)
    except (BrokenPipeError, OSError):  # the process died between two cells
        died = True
    except Timeout:  # it stopped reading its channel once its cells were done: it is killed below
        pass
    finally:
        conn.close()
        exit_code = sandbox.reap(wait=died)
    if died:
        run.status = status.crashed(exit_code)
    return run
