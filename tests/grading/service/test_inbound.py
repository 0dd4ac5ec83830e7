"""Is the exchange's inbound folder read as hostile: only complete folders, their names as data,
links, FIFOs, huge files and odd names refused without being opened, and the time that counts the
kernel's?"""

import os
import pwd
import stat
import time

import pytest

from autograder.grading.judge.grade_one import MAX_NOTEBOOK_BYTES
from autograder.grading.service import inbound


def folder(root, name, files=None, mode=0o777):
    path = root / name
    path.mkdir()
    for file, data in (files or {}).items():
        (path / file).write_bytes(data)
    os.chmod(path, mode)
    return path


def test_a_folder_is_taken_only_when_nbgrader_is_done_with_it(tmp_path):
    """A folder still being copied (no secret, nbgrader's final chmod not yet made, changed just
    now) is left for later; a complete one, or one untouched for SETTLE seconds, is taken."""
    folder(tmp_path, "ada+ex01+2026-01-01 10:00:00.000000 UTC+r1", {"ex01.ipynb": b"{}"}, mode=0o755)
    folder(tmp_path, "bob+ex01+2026-01-01 10:00:00.000000 UTC+r2", {"submission_secret.txt": b"s"})
    names = [e.name for e in inbound.scan(tmp_path, set(), {"ex01"})]
    assert names == ["bob+ex01+2026-01-01 10:00:00.000000 UTC+r2"]
    later = time.time() + inbound.SETTLE + 1
    assert len(inbound.scan(tmp_path, set(), {"ex01"}, now=later)) == 2
    assert inbound.scan(tmp_path, set(names), {"ex01"}) == []


@pytest.mark.parametrize(
    "name, problem",
    [
        ("ada\x1b]52;c;aGk=\x07+ex01+t+r", "refused: not a safe id"),
        ("ada+ex99+t+r", "refused: unknown assignment"),
        ("../../etc+ex01+t+r", "refused: not a safe id"),
        ("justaname", "not a submission's name (student+assignment+time+random)"),
        ("feedback.html+ex01+t+r", "refused: a student id the service's folder uses for its own files"),
        ("+A1+B1+ex01+t+r", "refused: not a safe id"),
    ],
)
def test_a_hostile_name_is_refused_as_data(tmp_path, name, problem):
    """A folder whose name holds terminal escapes, an unknown assignment, a path or no fields at all:
    is it refused with a reason, its ids never taken from it?"""
    folder(tmp_path, name.replace("/", "_"), {"submission_secret.txt": b"s"})
    (entry,) = inbound.scan(tmp_path, set(), {"ex01"})
    assert entry.problem == problem


def test_a_link_or_a_file_in_the_inbound_is_refused(tmp_path):
    """A symbolic link named as a submission (to a classmate's folder, or to /) and a plain file:
    are both refused as not folders?"""
    (tmp_path / "ada+ex01+t+r1").symlink_to("/")
    (tmp_path / "ada+ex01+t+r2").write_text("x")
    assert {e.problem for e in inbound.scan(tmp_path, set(), {"ex01"})} == {"refused: not a folder (a link or a file)"}


def test_only_notebooks_and_the_secret_are_taken_each_read_safely(tmp_path):
    """A submission holding a link to a secret file, a FIFO, a notebook over 16 MiB, a name with
    control characters and a data file: are the FIFO and the link never opened (nothing blocks,
    nothing outside is read), the huge notebook refused unread, and only the good notebook and the
    secret copied, with a timestamp.txt of the time that counts?"""
    source = folder(tmp_path, "ada+ex01+t+r", {"ex01.ipynb": b'{"cells": []}', "submission_secret.txt": b"abc",
                                               "data.csv": b"1,2"})  # fmt: skip
    os.chmod(source, 0o755)
    (tmp_path / "secret").write_text("the instructor's")
    (source / "linked.ipynb").symlink_to(tmp_path / "secret")
    os.mkfifo(source / "fifo.ipynb")
    with open(source / "huge.ipynb", "wb") as f:
        f.truncate(MAX_NOTEBOOK_BYTES + 1)
    (source / "bad\x1b[2J.ipynb").write_bytes(b"{}")
    taken = inbound.take(source, tmp_path / "dest")
    assert sorted(p.name for p in (tmp_path / "dest").iterdir()) == ["ex01.ipynb", "submission_secret.txt",
                                                                      "timestamp.txt"]  # fmt: skip
    assert taken.notebooks == ["ex01.ipynb"]
    problems = " | ".join(taken.problems)
    assert "'fifo.ipynb': not taken (not a regular file)" in problems
    assert "'huge.ipynb': not taken" in problems and "more than" in problems
    assert "'linked.ipynb': not taken" in problems
    assert "control characters" in problems and "\x1b" not in problems
    assert taken.submitted_at == max(os.lstat(p).st_ctime for p in [source, *source.iterdir()])
    assert (tmp_path / "dest" / "timestamp.txt").read_text() == inbound.nbgrader_time(taken.submitted_at)


def test_a_folder_not_owned_by_the_student_it_names_is_refused(tmp_path):
    """A folder that names a student who does not own it (a classmate spending their attempts):
    is it refused, naming both?"""
    path = folder(tmp_path, "nobody+ex01+t+r")
    owner = inbound.owner_problem(path, "nobody")
    assert owner.startswith("refused: handed in by ") and owner.endswith("not by nobody")
    if os.geteuid() != 0:
        pytest.skip("giving the folder to another user needs root")
    os.chown(path, 65534, 65534)
    assert inbound.owner_problem(path, pwd.getpwuid(65534).pw_name) == ""


def test_a_folder_of_many_entries_costs_a_bounded_look(tmp_path):
    """A submission folder of thousands of files: is only a bounded number of names looked at?"""
    source = folder(tmp_path, "ada+ex01+t+r")
    for i in range(inbound.MAX_ENTRIES + 50):
        (source / f"f{i:05}").touch()
    taken = inbound.take(source, tmp_path / "dest")
    assert f"more than {inbound.MAX_ENTRIES} entries" in taken.problems[0]
    assert stat.S_ISDIR(os.stat(tmp_path / "dest").st_mode)


def test_junk_comes_after_a_submission_and_names_its_owner(tmp_path):
    """Thousands of junk names made before a classmate's submission: does the scan put the
    submission first, and give each refused name its folder's owner (whose share it costs)?"""
    for i in range(300):
        (tmp_path / f"junk{i}").mkdir()
    folder(tmp_path, "ada+ex01+t+r", {"submission_secret.txt": b"s"})
    found = inbound.scan(tmp_path, set(), {"ex01"})
    assert found[0].name == "ada+ex01+t+r" and len(found) == 301
    assert {e.owner for e in found} == {os.getuid()}


def test_the_notebooks_of_a_submission_are_bounded_together_sparse_ones_at_their_length(tmp_path):
    """Eight sparse notebooks of 8 MiB each (no disk for the learner, 64 MiB for the service if
    copied): are only as many taken as fit in 16 MiB together, the others refused unread, and with
    ``notebooks=False`` (a submission over the limit) none copied but their names kept?"""
    source = folder(tmp_path, "ada+ex01+t+r", {"submission_secret.txt": b"s"})
    for i in range(8):
        with open(source / f"n{i}.ipynb", "wb") as f:
            f.truncate(MAX_NOTEBOOK_BYTES // 2)
    taken = inbound.take(source, tmp_path / "dest")
    assert taken.notebooks == ["n0.ipynb", "n1.ipynb"] and taken.size == MAX_NOTEBOOK_BYTES
    assert sum(p.stat().st_size for p in (tmp_path / "dest").iterdir()) < MAX_NOTEBOOK_BYTES + 1000
    assert sum("16 MiB together" in p for p in taken.problems) == 6
    names_only = inbound.take(source, tmp_path / "none", notebooks=False)
    assert len(names_only.notebooks) == 8 and not list((tmp_path / "none").glob("*.ipynb"))
