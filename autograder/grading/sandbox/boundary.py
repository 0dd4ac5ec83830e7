"""What crosses back from a submission process, checked where it arrives.

The submission process is the learner's own code: it can send anything on its channel, in any
shape, at any pace. So the grader reads one frame with a deadline for the whole frame (a length
header and then silence is a timeout, not a hang) and a size limit checked before the body is
read (:func:`receive`), and accepts only a report of the shape the fork server writes
(:func:`cell_report`): outputs of three kinds with string fields, an error of two strings,
records in a list. Everything kept is rebuilt from those fields (nothing else of the message
survives), texts are cut to :data:`MAX_OUTPUT` characters and a notebook's outputs together to
:data:`MAX_NOTEBOOK_OUTPUT`, so the grader's memory per submission is bounded whatever it sends.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from dataclasses import dataclass

__all__ = [
    "Malformed",
    "Timeout",
    "Closed",
    "receive",
    "send",
    "cell_report",
    "OutputBudget",
    "MAX_FRAME",
    "MAX_OUTPUT",
    "MAX_NOTEBOOK_OUTPUT",
    "MAX_RECORD_VALUES",
]

MAX_FRAME = 16 * 1024**2  # bytes of one cell's report (its records' tensors are at most 100k elements each)
MAX_OUTPUT = 100_000  # characters of one output text kept (the fork server cuts there too)
MAX_NOTEBOOK_OUTPUT = 2_000_000  # characters of output kept for a whole notebook's page
MAX_OUTPUTS = 64  # outputs of one cell
MAX_RECORDS = 10_000  # check records of one cell
# JSON values (numbers, texts, lists, objects) in one cell's records: five tensors of the 100,000
# elements a record may hold. 16 MiB of small ints would be ~8M values, seconds of decoding in the
# grading thread and hundreds of MiB (two 550k-key dicts: +160 MiB, 2.7 s a cell).
MAX_RECORD_VALUES = 500_000
CUT = "\n... (output cut)"
CUT_NOTEBOOK = f"... (output cut: a page keeps at most {MAX_NOTEBOOK_OUTPUT:,} characters of a notebook's outputs)"
_MIME_KEPT = ("text/plain", "image/png", "image/jpeg")  # what a page can show; the rest is dropped here


class Malformed(ValueError):
    """The report is not of the shape the fork server writes, or is larger than allowed."""


class Timeout(Exception):
    """No whole frame arrived before the deadline."""


class Closed(EOFError):
    """The channel closed (the process died) before a whole frame arrived."""


def _read(fd: int, size: int, deadline: float) -> bytes:
    chunks, left = [], size
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while left:
        wait = deadline - time.monotonic()
        if wait <= 0 or not poller.poll(wait * 1000):
            raise Timeout
        try:
            chunk = os.read(fd, min(left, 1 << 20))
        except BlockingIOError:
            continue
        if not chunk:
            raise Closed
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(fd: int, deadline: float, limit: int = MAX_FRAME) -> bytes:
    """One frame of :class:`multiprocessing.connection.Connection`'s framing (a 4-byte big-endian
    length, or -1 and an 8-byte one, then the body) read from ``fd`` before ``deadline``
    (``time.monotonic()`` seconds).

    Raises:
        Timeout: the whole frame did not arrive in time (a partial frame included).
        Closed: the other end closed first.
        Malformed: the announced length is negative or over ``limit`` bytes (the body is not read).
    """
    (size,) = struct.unpack("!i", _read(fd, 4, deadline))
    if size == -1:
        (size,) = struct.unpack("!Q", _read(fd, 8, deadline))
    if size < 0 or size > limit:
        raise Malformed(f"a report of {size} bytes (at most {limit})")
    return _read(fd, size, deadline)


def send(fd: int, body: bytes, deadline: float) -> None:
    """Write ``body`` as one frame (the framing :func:`receive` reads) to ``fd`` before
    ``deadline``: a process that stops reading its channel (its cell still running after it
    forged that cell's report) cannot block the grader on a full socket buffer.

    Raises:
        Timeout: the whole frame could not be written in time.
        OSError: the other end is gone (``BrokenPipeError``, ``ConnectionResetError``).
    """
    header = struct.pack("!i", len(body)) if len(body) < 2**31 - 1 else struct.pack("!iQ", -1, len(body))
    data, poller = memoryview(header + body), select.poll()
    poller.register(fd, select.POLLOUT)
    blocking = os.get_blocking(fd)
    os.set_blocking(fd, False)  # a blocking write waits until all of it is queued: no deadline then
    try:
        while data:
            wait = deadline - time.monotonic()
            if wait <= 0 or not poller.poll(wait * 1000):
                raise Timeout
            try:
                data = data[os.write(fd, data[: 1 << 20]) :]
            except BlockingIOError:
                continue
    finally:
        os.set_blocking(fd, blocking)


class OutputBudget:
    """Characters of output still kept for one notebook (:data:`MAX_NOTEBOOK_OUTPUT` in all)."""

    def __init__(self, total: int = MAX_NOTEBOOK_OUTPUT):
        self.left = total

    def take(self, text: str) -> str:
        """``text`` cut to :data:`MAX_OUTPUT` and to what is left of the notebook's budget."""
        if len(text) > MAX_OUTPUT:
            text = text[:MAX_OUTPUT] + CUT
        if len(text) > self.left:
            text = text[: max(self.left, 0)] + CUT_NOTEBOOK if self.left > 0 else CUT_NOTEBOOK
        self.left -= len(text)
        return text


def _text(value) -> str:
    if not isinstance(value, str):
        raise Malformed("a text that is not a string")
    return value


def _output(raw, budget: OutputBudget) -> dict | None:
    if not isinstance(raw, dict):
        raise Malformed("an output that is not an object")
    kind = raw.get("output_type")
    if kind == "stream":
        name = raw.get("name")
        if name not in ("stdout", "stderr"):
            raise Malformed("a stream that is not stdout or stderr")
        return {"output_type": "stream", "name": name, "text": budget.take(_text(raw.get("text")))}
    if kind == "display_data":
        data = raw.get("data")
        if not isinstance(data, dict):
            raise Malformed("display data that is not an object")
        kept = {mime: budget.take(_text(value)) for mime, value in data.items() if mime in _MIME_KEPT}
        return {"output_type": "display_data", "data": kept, "metadata": {}} if kept else None
    if kind == "error":
        ename, evalue = _text(raw.get("ename")), _text(raw.get("evalue"))
        return {"output_type": "error", "ename": budget.take(ename), "evalue": budget.take(evalue), "traceback": []}
    raise Malformed("an output of an unknown kind")


@dataclass
class CellReport:
    """One cell's report as accepted: nbformat outputs, ``(ename, evalue)`` or None, raw records,
    and ``seconds``, the cell's time as its process says (0.0 when it says none; the submission's
    word: only the benchmark reads it, never grading)."""

    outputs: list
    error: tuple[str, str] | None
    records: list
    seconds: float = 0.0


def cell_report(frame: bytes, cell: int, budget: OutputBudget, keep_records: bool = True) -> CellReport:
    """The report of cell ``cell`` in ``frame`` (JSON), checked field by field and rebuilt.

    Args:
        budget: the notebook's :class:`OutputBudget` (texts are charged to it).
        keep_records: False drops the records (a cell whose checks nobody judges).

    Raises:
        Malformed: not valid JSON, not a "done" report for this cell, or a field of the wrong
            type or count.
    """
    try:
        message = json.loads(frame)
    except (ValueError, RecursionError) as error:
        raise Malformed(f"not JSON ({type(error).__name__})") from None
    if not isinstance(message, dict) or message.get("event") != "done":
        raise Malformed("not a report")
    if type(message.get("cell")) is not int or message["cell"] != cell:
        raise Malformed("a report of another cell")
    outputs, error, records = message.get("outputs"), message.get("error"), message.get("records")
    if not isinstance(outputs, list) or len(outputs) > MAX_OUTPUTS:
        raise Malformed("outputs that are not a list of at most 64")
    if not isinstance(records, list) or len(records) > MAX_RECORDS:
        raise Malformed("records that are not a list of at most 10,000")
    if _too_many_values(records, MAX_RECORD_VALUES):
        raise Malformed(f"records of more than {MAX_RECORD_VALUES:,} values")
    if error is not None and not (isinstance(error, list) and len(error) == 2):
        raise Malformed("an error that is not a name and a message")
    kept = [o for o in (_output(raw, budget) for raw in outputs) if o is not None]
    error = None if error is None else (budget.take(_text(error[0])), budget.take(_text(error[1])))
    seconds = message.get("seconds")
    seconds = float(seconds) if type(seconds) in (int, float) and 0 <= seconds < 1e9 else 0.0
    return CellReport(kept, error, records if keep_records else [], seconds)


def _too_many_values(value, limit: int) -> bool:
    """Does the parsed JSON ``value`` hold more than ``limit`` values (itself, and all inside it;
    an object's keys and values)? Stops counting at ``limit``."""
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > limit:
            return True
        if isinstance(item, list):
            stack += item
        elif isinstance(item, dict):
            seen += len(item)  # its keys
            stack += item.values()
    return False
