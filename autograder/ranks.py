"""Run a function in several processes joined in a ``torch.distributed`` process group (gloo, CPU).

``run_ranks(fn, world_size, *args)`` forks ``world_size`` processes; process ``rank`` joins a gloo
process group and returns ``fn(rank, world_size, *args)``. The parent gets the list of results,
ordered by rank. It is how chapter 14 runs ``DistributedDataParallel`` inside a notebook:

* **fork**, not spawn: a child starts as a copy of the parent, so functions defined in a notebook
  cell work (spawn would have to import them by name, and re-imports torch, about 2 s a process).
  CUDA must not be initialised in the parent before (a forked child cannot use it): the function
  refuses then.
* the group meets through a ``FileStore`` in a fresh temporary folder (no port to find), and gloo
  talks over the loopback interface (``GLOO_SOCKET_IFNAME``, unless already set), so it works with
  no network but ``lo``, as in the class grader's sandbox.
* each child uses one intra-op thread (``torch.set_num_threads(1)``): few threads, no
  oversubscription of the cores, no OpenMP pool inherited across the fork.
* what a rank prints comes back and is printed by the parent in rank order, ``rank R | ...``.
* a rank that raises makes the parent raise :class:`RankError` with that rank's exception type and
  message (the child's traceback in ``.traceback``), after the other ranks finished, failed or were
  stopped; a rank that hangs past ``timeout`` is stopped and reported.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import pickle
import shutil
import sys
import tempfile
import time
import traceback
from datetime import timedelta
from multiprocessing.connection import wait

__all__ = ["RankError", "run_ranks", "threads_of_this_process"]

# After the first failure, how long the other ranks get to finish or fail on their own (seconds)
# before they are stopped: a rank waiting in a collective for a failed one would wait for ever.
_GRACE = 2.0


class RankError(RuntimeError):
    """A rank of :func:`run_ranks` failed.

    The message is ``"rank R of N raised <Type>: <message>"`` (no paths, so it is the same on every
    machine). Attributes: ``rank`` (int), ``type_name`` (str, the child's exception class name),
    ``child_message`` (str), ``traceback`` (str, the child's formatted traceback, or ``""``).
    """

    def __init__(self, rank: int, world_size: int, type_name: str, message: str, tb: str = ""):
        super().__init__(f"rank {rank} of {world_size} raised {type_name}: {message}")
        self.rank, self.type_name, self.child_message, self.traceback = rank, type_name, message, tb


def threads_of_this_process() -> int:
    """The number of threads of the calling process (Linux ``/proc``; 0 where it cannot be read)."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))
    except (OSError, StopIteration, ValueError):
        return 0


def _loopback() -> str:
    return "lo0" if sys.platform == "darwin" else "lo"


def _child(conn, store_path: str, rank: int, world_size: int, timeout: float, fn, args, kwargs) -> None:
    # Runs in the forked process: join the group, run fn, send ("ok", (result, printed)) or
    # ("error", (type name, message, traceback)).
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", _loopback())
    # What fn prints goes back to the parent, which prints it in rank order (a notebook would
    # otherwise show the ranks' lines interleaved at random); C++ warnings written straight to the
    # file descriptors (with times and pids) are dropped.
    printed = io.StringIO()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout, sys.stderr = printed, io.StringIO()
    try:
        store = dist.FileStore(store_path, world_size)
        dist.init_process_group(
            "gloo", store=store, rank=rank, world_size=world_size, timeout=timedelta(seconds=timeout)
        )
        try:
            # every rank connected before fn's first collective, and none closing its connections while
            # another still reads from them: gloo's "Connection closed by peer" on a busy machine (pytorch#61396)
            dist.barrier()
            result = fn(rank, world_size, *args, **kwargs)
            dist.barrier()
        finally:
            dist.destroy_process_group()
        _send(conn, ("ok", (result, printed.getvalue())))
    except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent, with its words
        _send(conn, ("error", (type(e).__name__, str(e), traceback.format_exc())))
    finally:
        conn.close()


def _send(conn, message) -> None:
    # Plain pickle, not the Connection's: torch registers reductions on multiprocessing's pickler
    # that pass tensors as shared-memory descriptors, which would need this process alive.
    try:
        data = pickle.dumps(message)
    except Exception as e:  # noqa: BLE001 - an unpicklable result becomes the rank's error
        data = pickle.dumps(("error", ("PicklingError", f"the result cannot be pickled: {e}", "")))
    conn.send_bytes(data)


def run_ranks(fn, world_size: int = 2, *args, timeout: float = 60.0, **kwargs) -> list:
    """Run ``fn(rank, world_size, *args, **kwargs)`` in ``world_size`` forked processes joined in a gloo
    process group on the CPU, and return their results.

    Args:
        fn: a function (it may be defined in a notebook); it runs after
            ``torch.distributed.init_process_group("gloo", ...)`` in each process, and the group is
            destroyed after it returns. Its result must be picklable (tensors are fine). What it
            prints (``sys.stdout``) is printed by the parent after all ranks returned, each line
            as ``"rank R | line"``, rank 0's first; what it writes to stderr is dropped.
        world_size: the number of processes (ranks 0 .. world_size - 1), at least 1.
        *args: passed on to ``fn`` after ``rank`` and ``world_size`` (copied by the fork).
        **kwargs: passed on to ``fn`` as keyword arguments.
        timeout: seconds the whole run may take; also the process group's timeout for a
            collective.

    Returns:
        ``[fn(0, ...), fn(1, ...), ...]``, ordered by rank.

    Raises:
        ValueError: ``world_size`` below 1.
        RuntimeError: CUDA is initialised in this process (a forked child cannot use it), or the
            platform cannot fork.
        RankError: a rank raised (the lowest such rank is reported, a rank that only saw its peer
            go away excepted), exited without a result, or
            did not finish within ``timeout`` seconds.
    """
    import torch

    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    if torch.cuda.is_initialized():
        raise RuntimeError(
            "run_ranks forks: CUDA is already initialised in this process, and a forked child cannot use it"
        )
    if "fork" not in multiprocessing.get_all_start_methods():
        raise RuntimeError("run_ranks needs the 'fork' start method, which this platform lacks")
    # DistributedDataParallel imports torch._dynamo on first use (about 3 s): once here, before the
    # fork, rather than once in every child of every run.
    import torch._dynamo

    ctx = multiprocessing.get_context("fork")
    folder = tempfile.mkdtemp(prefix="ranks-")
    store_path = os.path.join(folder, "store")
    procs, conns = [], {}
    try:
        for rank in range(world_size):
            parent_end, child_end = ctx.Pipe(duplex=False)
            p = ctx.Process(
                target=_child, args=(child_end, store_path, rank, world_size, timeout, fn, args, kwargs), daemon=True
            )
            p.start()
            child_end.close()
            procs.append(p)
            conns[parent_end] = rank
        return _collect(procs, conns, world_size, timeout)
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
            p.join(5)
        for c in conns:
            c.close()
        shutil.rmtree(folder, ignore_errors=True)


def _collect(procs, conns: dict, world_size: int, timeout: float) -> list:
    # Read one message per rank; after the first failure wait _GRACE seconds more, then give up.
    results: dict[int, object] = {}
    printed: dict[int, str] = {}
    errors: dict[int, tuple] = {}
    pending = dict(conns)
    deadline = time.monotonic() + timeout
    while pending:
        left = deadline - time.monotonic()
        if errors:
            left = min(left, _GRACE)
        ready = wait(list(pending), timeout=max(left, 0))
        if not ready:
            break
        for conn in ready:
            rank = pending.pop(conn)
            try:
                status, value = pickle.loads(conn.recv_bytes())
            except EOFError:
                procs[rank].join(5)
                errors[rank] = ("ProcessExit", f"exited with code {procs[rank].exitcode} before returning a result", "")
                continue
            if status == "ok":
                results[rank], printed[rank] = value
            else:
                errors[rank] = value
        if errors and time.monotonic() > deadline:
            break
    if errors:
        # A rank whose peer died fails too, inside gloo ("Connection closed by peer"): report the
        # cause, i.e. the lowest rank among those whose error is not gloo's transport failing.
        rank = min(errors, key=lambda r: ("gloo/transport" in errors[r][1] or "closed by peer" in errors[r][1], r))
        raise RankError(rank, world_size, *errors[rank])
    if pending:
        late = sorted(pending.values())
        raise RankError(
            late[0], world_size, "TimeoutError", f"did not finish within {timeout:g} s (ranks {late} stopped)"
        )
    for rank in range(world_size):
        for line in printed[rank].splitlines():
            print(f"rank {rank} | {line}")
    return [results[r] for r in range(world_size)]
