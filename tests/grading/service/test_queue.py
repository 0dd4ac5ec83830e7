"""Is the queue fair to every learner, durable, and does it record each submission once?"""

import subprocess
import sys

from autograder.grading.service.queue import DONE, Queue, fair_order


def test_one_learners_fifty_submissions_wait_behind_everyone_elses_first(tmp_path):
    """Fifty submissions from eve, then one each from ada and bob: are ada's and bob's taken right
    after eve's first, and eve's in the order she sent them?"""
    queue = Queue(tmp_path / "queue.db")
    for i in range(50):
        queue.add(f"e{i}", f"eve+ex01+t+{i}", "eve", "ex01")
    queue.add("a", "ada+ex01+t+a", "ada", "ex01")
    queue.add("b", "bob+ex02+t+b", "bob", "ex02")
    order = [a.id for a in queue.queued()]
    assert order[:4] == ["e0", "a", "b", "e1"]
    assert order[3:] == [f"e{i}" for i in range(1, 50)]


def test_fair_order_is_by_rank_then_arrival():
    """Each learner's first submissions, in the order received, then each one's second, ...?"""
    from autograder.grading.service.queue import Attempt

    rows = [Attempt(str(i), str(i), s, "ex01", i, 0, 0, "", "", "queued") for i, s in enumerate("aabbca")]
    assert [r.id for r in fair_order(rows)] == ["0", "2", "4", "1", "3", "5"]


def test_a_submission_seen_again_is_not_a_second_row(tmp_path):
    """The same inbound name added twice (a service restarted between copying and recording): one row?"""
    queue = Queue(tmp_path / "queue.db")
    assert queue.add("x", "ada+ex01+t+r", "ada", "ex01")
    assert not queue.add("x2", "ada+ex01+t+r", "ada", "ex01")
    assert len(queue.of()) == 1


def test_a_kill_mid_transaction_leaves_the_row_as_it_was(tmp_path):
    """A process killed with SIGKILL inside the transaction that finishes a row and records the
    standing: is the row still queued, and no standing recorded (both or neither)?"""
    path = tmp_path / "queue.db"
    queue = Queue(path)
    queue.add("x", "ada+ex01+t+r", "ada", "ex01")
    queue.close()
    code = (
        "import os, signal, sys; from pathlib import Path\n"
        "from autograder.grading.service.queue import Queue\n"
        f"q = Queue(Path({str(path)!r}))\n"
        "with q.atomic():\n"
        "    q.finish('x', outcome='graded', counted=1)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "    q.stand('ada', 'ex01', 'x')\n"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == -9
    queue = Queue(path)
    assert queue.get("x").state != DONE and queue.standing("ada", "ex01") is None
