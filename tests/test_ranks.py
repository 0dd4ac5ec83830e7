"""Does run_ranks run a function in several processes joined by gloo, and report failures clearly?"""

import os

import pytest
import torch
import torch.distributed as dist

from autograder.ranks import RankError, run_ranks, threads_of_this_process


def _sum_of_ranks(rank, world_size, offset):
    t = torch.tensor([float(rank + offset)])
    dist.all_reduce(t)
    return rank, world_size, t.item(), os.getpid()


def test_each_rank_runs_in_its_own_process_and_collectives_work():
    """Do the ranks get their rank and world size, run in distinct processes (not this one), and
    does an all_reduce across them give the sum?"""
    results = run_ranks(_sum_of_ranks, 3, 10)
    assert [r[:2] for r in results] == [(0, 3), (1, 3), (2, 3)]
    assert {r[2] for r in results} == {float(sum(range(10, 13)))}
    pids = {r[3] for r in results}
    assert len(pids) == 3 and os.getpid() not in pids


def test_a_function_defined_here_and_tensors_come_back():
    """Does a function defined inside a test (as in a notebook) work, and do tensors come back whole?"""

    def local(rank, world_size):
        return torch.full((2, 2), float(rank))

    a, b = run_ranks(local, 2)
    assert torch.equal(a, torch.zeros(2, 2)) and torch.equal(b, torch.ones(2, 2))


def test_printed_lines_come_back_in_rank_order(capsys):
    """Is what each rank prints printed by the parent, rank 0 first, prefixed by its rank?"""

    def talk(rank, world_size):
        print(f"hello from {rank}")

    run_ranks(talk, 2)
    assert capsys.readouterr().out == "rank 0 | hello from 0\nrank 1 | hello from 1\n"


def test_a_failing_rank_raises_its_error_with_the_child_traceback():
    """When one rank raises, does the parent raise RankError naming that rank, the exception type
    and message, with the child's traceback, without waiting for the timeout?"""

    def fail_on_one(rank, world_size):
        if rank == 1:
            raise ValueError("no such thing")
        dist.barrier()  # rank 0 waits for rank 1, which never comes

    with pytest.raises(RankError, match=r"^rank 1 of 2 raised ValueError: no such thing$") as caught:
        run_ranks(fail_on_one, 2, timeout=30)
    assert caught.value.rank == 1 and "fail_on_one" in caught.value.traceback


def test_a_hanging_rank_is_stopped_at_the_timeout():
    """Is a rank that never returns stopped after the timeout, with a RankError that says so?"""

    def hang(rank, world_size):
        if rank == 0:
            import time

            time.sleep(60)

    with pytest.raises(RankError, match="did not finish within 2 s"):
        run_ranks(hang, 2, timeout=2)


def test_children_use_few_threads_and_world_size_is_checked():
    """Does a child use one intra-op thread and a handful of threads in all, and is a world size
    of 0 refused?"""

    def threads(rank, world_size):
        return torch.get_num_threads(), threads_of_this_process()

    for intra, total in run_ranks(threads, 2):
        assert intra == 1 and 0 < total <= 8
    with pytest.raises(ValueError):
        run_ranks(threads, 0)


def test_keyword_arguments_reach_the_function():
    """Are keyword arguments (other than timeout) passed on to fn in every rank?"""

    def scaled(rank, world_size, base, factor=1):
        return base * factor + rank

    assert run_ranks(scaled, 2, 10, factor=3) == [30, 31]


def test_a_rank_that_dies_is_reported_with_its_exit_code():
    """When a rank's process ends without a result (os._exit), does the parent say so?"""

    def die(rank, world_size):
        if rank == 1:
            os._exit(3)

    with pytest.raises(RankError, match="rank 1 of 2 raised ProcessExit: exited with code 3"):
        run_ranks(die, 2, timeout=30)


def test_cuda_initialised_here_is_refused(monkeypatch):
    """Does run_ranks refuse to fork when CUDA is initialised in this process (a child could not use it)?"""
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    with pytest.raises(RuntimeError, match="CUDA is already initialised"):
        run_ranks(_sum_of_ranks, 2, 0)
