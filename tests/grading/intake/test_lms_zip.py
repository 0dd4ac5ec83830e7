"""Does an LMS bulk download land in nbgrader's layout, each learner under their id, with a line
for everything hostile or unplaceable and nothing written outside the scratch folder?"""

import hashlib
import stat
import zipfile

import nbformat
import pytest

from autograder.grading.intake.lms_zip import Limits, read_roster, unpack_lms_zip

from ..conftest import submission_of

NOTEBOOKS = {"ex01": "ex01.ipynb", "ex02": "ex02.ipynb"}


@pytest.fixture
def notebook(source):
    return nbformat.writes(submission_of(source, "def f():\n    return 1"))


def make_zip(path, entries):
    """``entries``: (name, bytes, date_time or None, ZipInfo attributes)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, when, attrs in entries:
            info = zipfile.ZipInfo(name, date_time=when or (2026, 1, 20, 12, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            for key, value in attrs.items():
                setattr(info, key, value)
            zf.writestr(info, data)
    return path


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_canvas_names_map_through_the_roster_and_the_latest_is_kept(tmp_path, notebook):
    """Are Canvas's `lastfirst_[LATE_]userid_subid_file` names placed under the roster's student
    id (Canvas's own gradebook export as roster), the latest resubmission kept, LATE said?"""
    roster = tmp_path / "canvas-export.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\n"
        '"Lovelace, Ada",101,S-1,ada,A\n"Hopper, Grace",102,S-2,grace,A\n',
        encoding="utf-8",
    )
    older = notebook.replace("return 1", "return 0")
    archive = make_zip(
        tmp_path / "submissions.zip",
        [
            ("lovelaceada_101_9001_ex01.ipynb", older, (2026, 1, 19, 10, 0, 0), {}),
            ("lovelaceada_101_9002_ex01-1.ipynb", notebook, (2026, 1, 20, 10, 0, 0), {}),
            ("hoppergrace_LATE_102_9003_ex01.ipynb", notebook, None, {}),
            ("turingalan_103_9004_ex01.ipynb", notebook, None, {}),
        ],
    )
    before = digest(archive)
    unpacked = unpack_lms_zip(archive, tmp_path / "scratch", NOTEBOOKS, read_roster(roster))
    assert sorted(unpacked.placed) == [("ada", "ex01"), ("grace", "ex01")]
    assert (tmp_path / "scratch" / "ada" / "ex01" / "ex01.ipynb").read_text(encoding="utf-8") == notebook
    stamp = tmp_path / "scratch" / "ada" / "ex01" / "timestamp.txt"  # the LMS's time: the late policy's
    assert stamp.read_text(encoding="utf-8") == "2026-01-20 10:00:00.000000 UTC"
    assert unpacked.problems == ["turingalan_103_9004_ex01.ipynb: Canvas user 103 (turingalan) is not in the roster"]
    assert "grace/ex01: Canvas marks it LATE" in unpacked.notes
    assert any("lovelaceada_101_9001_ex01.ipynb: an older submission of ada" in n for n in unpacked.notes)
    assert digest(archive) == before


def test_moodle_folders_and_flat_names_map_by_full_name(tmp_path, notebook):
    """Are Moodle's `Full Name_id_assignsubmission_file_` folders and flattened names placed
    through a roster of names (and a name not in it listed)?"""
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name\nada,Ada Lovelace\ngrace,Grace Hopper\n", encoding="utf-8")
    archive = make_zip(
        tmp_path / "moodle.zip",
        [
            ("Ada Lovelace_4711_assignsubmission_file_/ex02.ipynb", notebook, None, {}),
            ("Grace Hopper_4712_assignsubmission_file_ex02.ipynb", notebook, None, {}),
            ("Alan Turing_4713_assignsubmission_file_/ex02.ipynb", notebook, None, {}),
        ],
    )
    unpacked = unpack_lms_zip(archive, tmp_path / "scratch", NOTEBOOKS, read_roster(roster))
    assert sorted(unpacked.placed) == [("ada", "ex02"), ("grace", "ex02")]
    assert unpacked.problems == [
        "Alan Turing_4713_assignsubmission_file_/ex02.ipynb: Moodle participant 4713 (Alan Turing) is not in the roster"
    ]


def test_hostile_entries_each_get_a_line_and_the_rest_is_placed(tmp_path, notebook):
    """A `..` path, an absolute path, a symbolic link, a zip bomb, a file that is not a notebook,
    a notebook that is not JSON, an id that is not safe: is each refused with its line, nothing
    written outside the scratch folder, and the good notebook still placed?"""
    link = {"external_attr": (stat.S_IFLNK | 0o777) << 16, "create_system": 3}
    archive = make_zip(
        tmp_path / "hostile.zip",
        [
            ("../../evil_1_1_ex01.ipynb", notebook, None, {}),
            ("/tmp/abs_2_2_ex01.ipynb", notebook, None, {}),
            ("linked_3_3_ex01.ipynb", "/etc/passwd", None, link),
            ("bomb_4_4_ex01.ipynb", b"\0" * (80 * 1024**2), None, {}),
            ("notes_5_5_readme.txt", "hello", None, {}),
            ("broken_6_6_ex01.ipynb", '{"cells": [', None, {}),
            ("good_7_7_ex01.ipynb", notebook, None, {}),
        ],
    )
    scratch = tmp_path / "work" / "scratch"
    unpacked = unpack_lms_zip(archive, scratch, NOTEBOOKS)
    assert sorted(unpacked.placed) == [("7", "ex01")]
    problems = "\n".join(unpacked.problems)
    for line in [
        "../../evil_1_1_ex01.ipynb: refused, a path outside the zip's folder",
        "/tmp/abs_2_2_ex01.ipynb: refused, a path outside the zip's folder",
        "linked_3_3_ex01.ipynb: refused, a symbolic link",
        "bomb_4_4_ex01.ipynb: refused, expands",
        "notes_5_5_readme.txt: not a notebook (.ipynb), skipped",
        "broken_6_6_ex01.ipynb: not a notebook (not JSON: JSONDecodeError), skipped",
    ]:
        assert line in problems
    assert len(unpacked.problems) == 6
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    placed = ["work/scratch/7/ex01/ex01.ipynb", "work/scratch/7/ex01/timestamp.txt"]
    assert [str(p) for p in written] == ["hostile.zip", *placed]


def test_a_notebook_past_the_per_file_bound_is_refused(tmp_path, notebook):
    """Is a file larger than the per-file bound refused (the same bound is applied again to the
    bytes really read, for a zip that declares a false size)?"""
    archive = make_zip(tmp_path / "a.zip", [("ann_1_1_ex01.ipynb", notebook, None, {})])
    unpacked = unpack_lms_zip(archive, tmp_path / "s", NOTEBOOKS, limits=Limits(file_bytes=len(notebook) - 1))
    assert unpacked.placed == {} and "more than the bound" in unpacked.problems[0]


def test_a_rosters_names_are_read_as_data(tmp_path):
    """Does a roster give each student a (first, last) name, from Canvas's `Last, First` or a plain
    `First Last`, with control characters dropped and each part bounded?"""
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "student_id,canvas_id,name\n"
        'ada,101,"Lovelace, Ada"\n'
        "grace,102,Grace Brewster Hopper\n"
        "alan,103,Turing\n"
        f'eve,104,"\x1b]0;owned\x07Eve\u202e {"x" * 500}"\n'
        "bob,105,\n",
        encoding="utf-8",
    )
    names = read_roster(roster).names
    assert names["ada"] == ("Ada", "Lovelace")
    assert names["grace"] == ("Grace Brewster", "Hopper")
    assert names["alan"] == ("", "Turing")
    first, last = names["eve"]
    assert first == "]0;ownedEve" and last == "x" * 100
    assert "bob" not in names


def test_the_folder_moodle_wrote_decides_not_a_file_name_inside_it(tmp_path, notebook):
    """Finding 1's class: is a file named like a classmate's Moodle entry, inside its author's own
    Moodle folder, filed under its author; and are two learners of the zip that map to one student
    refused together with one line naming both?"""
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,moodle_id,name\nmal,501,Mal Ory\nbob,502,Bob Smith\nann,,Ann Lee\n", encoding="utf-8")
    archive = make_zip(
        tmp_path / "moodle.zip",
        [
            ("Mal Ory_501_assignsubmission_file_/Bob Smith_502_assignsubmission_file_ex01.ipynb", notebook, None, {}),
            ("Ann Lee_601_assignsubmission_file_/ex01.ipynb", notebook, None, {}),
            ("ANN LEE_602_assignsubmission_file_/ex01.ipynb", notebook, None, {}),
        ],
    )
    unpacked = unpack_lms_zip(archive, tmp_path / "scratch", NOTEBOOKS, read_roster(roster), assignment="ex01")
    assert sorted(unpacked.placed) == [("mal", "ex01")]
    (line,) = [p for p in unpacked.problems if "both map" in p]
    assert "Moodle participant 601 (Ann Lee)" in line and "Moodle participant 602 (ANN LEE)" in line


def test_an_entry_too_deep_or_without_a_date_is_one_line_and_the_rest_is_placed(tmp_path, notebook):
    """Finding 3's class: is JSON nested past the bound refused by counting (no RecursionError), a
    crafted entry time that is no date harmless, and the good notebook placed?"""
    deep = b'{"a":' * 10_000 + b"1" + b"}" * 10_000
    archive = make_zip(
        tmp_path / "a.zip",
        [
            ("deep_1_1_ex01.ipynb", deep, None, {}),
            ("good_2_2_ex01.ipynb", notebook, None, {}),
        ],
    )
    with zipfile.ZipFile(archive) as zf:
        data = {i.filename: zf.read(i) for i in zf.infolist()}
    with zipfile.ZipFile(archive, "w") as zf:  # a month 0 is no date, as a crafted zip may say
        for name, payload in data.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 20, 9, 0, 0))
            info.date_time = (2026, 0, 0, 0, 0, 0) if name.startswith("good") else info.date_time
            zf.writestr(info, payload)
    unpacked = unpack_lms_zip(archive, tmp_path / "scratch", NOTEBOOKS, limits=Limits(ratio=10_000))
    assert sorted(unpacked.placed) == [("2", "ex01")] and unpacked.times[("2", "ex01")] is None
    assert unpacked.problems == [
        "deep_1_1_ex01.ipynb: not a notebook (JSON nested 10000 levels deep (at most 64)), skipped"
    ]


def test_a_moodle_name_that_holds_moodles_pattern_twice_is_refused(tmp_path, notebook):
    """A learner who chose the display name `Bob Smith_502_assignsubmission_file_x` makes a folder
    and flattened names that could be read as bob's: is each refused, never filed as bob's?"""
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,moodle_id,name\nbob,502,Bob Smith\nmal,666,Mal\n", encoding="utf-8")
    crafted = "Bob Smith_502_assignsubmission_file_x_666_assignsubmission_file_"
    archive = make_zip(
        tmp_path / "moodle.zip",
        [(f"{crafted}/ex01.ipynb", notebook, None, {}), (f"{crafted}ex01.ipynb", notebook, None, {})],
    )
    unpacked = unpack_lms_zip(archive, tmp_path / "scratch", NOTEBOOKS, read_roster(roster), assignment="ex01")
    assert unpacked.placed == {} and len(unpacked.problems) == 2
    assert all("names two participants" in p for p in unpacked.problems)


def test_a_zip_of_too_many_entries_is_refused_before_they_are_read(tmp_path, notebook):
    """Is a zip whose end record states more entries than the bound refused before zipfile reads
    its directory (which it would hold whole in memory)?"""
    archive = make_zip(tmp_path / "many.zip", [(f"l_{i}_{i}_ex01.ipynb", "{}", None, {}) for i in range(30)])
    with pytest.raises(ValueError, match="30 entries"):
        unpack_lms_zip(archive, tmp_path / "s", NOTEBOOKS, limits=Limits(entries=20))
    assert not (tmp_path / "s").exists()


def test_an_email_local_part_two_moodle_learners_share_loses_no_one(tmp_path, notebook):
    """Moodle's worksheet as roster (the student id is the e-mail's local part): eve set her Moodle
    e-mail to carol@evil.example. Are both carol's and eve's submissions placed, each under its full
    e-mail (a stable id), with a line saying so, and bob still under his local part?"""
    roster = tmp_path / "worksheet.csv"
    roster.write_text(
        "Identifier,Full name,Email address,Status\nParticipant 301,Carol Jones,carol@uni.example,Submitted\n"
        "Participant 302,Eve Evil,Carol@evil.example,Submitted\nParticipant 303,Bob Blank,bob@uni.example,Submitted\n",
        encoding="utf-8",
    )
    archive = make_zip(
        tmp_path / "moodle.zip",
        [(f"{name}_{pid}_assignsubmission_file_/ex01.ipynb", notebook, None, {})
         for name, pid in [("Carol Jones", 301), ("Eve Evil", 302), ("Bob Blank", 303)]],
    )  # fmt: skip
    read = read_roster(roster)
    unpacked = unpack_lms_zip(archive, tmp_path / "scratch", NOTEBOOKS, read)
    assert sorted(unpacked.placed) == [("Carol@evil.example", "ex01"), ("bob", "ex01"), ("carol@uni.example", "ex01")]
    assert unpacked.problems == [] and len(read.problems) == 2
    assert "local part 'carol' is given to more than one row" in read.problems[0]
