"""Are a zip's notebooks kept in the course's submitted/ folder, where formgrader counts them,
with an earlier different submission moved aside (never lost) and a linked folder left alone?"""

from datetime import datetime
from pathlib import Path

from autograder.grading.intake.collected import keep_in_course


def scratch_with(tmp_path: Path, student: str, text: str) -> Path:
    scratch = tmp_path / "scratch"
    (scratch / student / "ex01").mkdir(parents=True, exist_ok=True)
    (scratch / student / "ex01" / "ex01.ipynb").write_text(text, encoding="utf-8")
    return scratch


def test_a_zip_submission_is_kept_where_collect_would_put_it(tmp_path):
    """Does a placed notebook land at submitted/<student>/<assignment>/ with the same bytes, and is
    the same notebook kept again without a word?"""
    scratch = scratch_with(tmp_path, "ada", "{}")
    submitted = tmp_path / "course" / "submitted"
    assert keep_in_course(scratch, submitted, {("ada", "ex01"): "entry"}) == []
    assert (submitted / "ada" / "ex01" / "ex01.ipynb").read_text(encoding="utf-8") == "{}"
    assert keep_in_course(scratch, submitted, {("ada", "ex01"): "entry"}) == []


def test_an_earlier_different_submission_is_moved_aside_not_lost(tmp_path):
    """Is an exchange submission already in submitted/ moved to submitted-replaced/ (and said)
    before the zip's notebook takes its place?"""
    submitted = tmp_path / "course" / "submitted"
    (submitted / "ada" / "ex01").mkdir(parents=True)
    (submitted / "ada" / "ex01" / "ex01.ipynb").write_text("earlier", encoding="utf-8")
    (submitted / "ada" / "ex01" / "timestamp.txt").write_text("2026-01-20 10:00:00", encoding="utf-8")
    later = {("ada", "ex01"): datetime(2026, 1, 20, 11)}  # the zip's time, after the exchange's
    notes = keep_in_course(scratch_with(tmp_path, "ada", "later"), submitted, {("ada", "ex01"): "entry"}, later)
    assert len(notes) == 1 and "ada/ex01: the earlier submission (2026-01-20 10:00 UTC" in notes[0]
    (aside,) = (tmp_path / "course" / "submitted-replaced").glob("*/ada/ex01")
    assert (aside / "ex01.ipynb").read_text(encoding="utf-8") == "earlier"
    assert (aside / "timestamp.txt").is_file()
    assert (submitted / "ada" / "ex01" / "ex01.ipynb").read_text(encoding="utf-8") == "later"


def test_a_linked_folder_is_not_written_through(tmp_path):
    """Is a student folder in submitted/ that is a symbolic link (to anywhere) left alone, with a
    note, and nothing written where it points?"""
    submitted = tmp_path / "course" / "submitted"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    submitted.mkdir(parents=True)
    (submitted / "ada").symlink_to(elsewhere, target_is_directory=True)
    notes = keep_in_course(scratch_with(tmp_path, "ada", "{}"), submitted, {("ada", "ex01"): "entry"})
    assert len(notes) == 1 and "symbolic link" in notes[0]
    assert list(elsewhere.iterdir()) == []


def test_the_newer_of_an_exchange_and_a_zip_submission_is_graded_the_other_kept(tmp_path):
    """Finding 2's class: is an exchange hand-in newer than the zip's draft kept and graded (the
    draft kept aside with its time), the zip's copy of the very same notebook harmless, and a newer
    zip notebook kept over the exchange's with its own time?"""
    submitted = tmp_path / "course" / "submitted"
    for student, text in (("ada", "exchange"), ("late", "same")):
        (submitted / student / "ex01").mkdir(parents=True)
        (submitted / student / "ex01" / "ex01.ipynb").write_text(text, encoding="utf-8")
        (submitted / student / "ex01" / "timestamp.txt").write_text("2026-01-20 12:00:00.000000 UTC", encoding="utf-8")
    scratch = scratch_with(tmp_path, "ada", "draft")
    scratch_with(tmp_path, "late", "same")
    scratch_with(tmp_path, "cy", "newer")
    (submitted / "cy" / "ex01").mkdir(parents=True)
    (submitted / "cy" / "ex01" / "ex01.ipynb").write_text("older", encoding="utf-8")
    (submitted / "cy" / "ex01" / "timestamp.txt").write_text("2026-01-20 08:00:00 UTC", encoding="utf-8")
    times = {(s, "ex01"): datetime(2026, 1, 20, 9) for s in ("ada", "late", "cy")}
    notes = keep_in_course(scratch, submitted, dict.fromkeys(times, "entry"), times)
    assert (scratch / "ada" / "ex01" / "ex01.ipynb").read_text(encoding="utf-8") == "exchange"  # graded this run
    assert (submitted / "ada" / "ex01" / "ex01.ipynb").read_text(encoding="utf-8") == "exchange"
    (draft,) = (tmp_path / "course" / "submitted-replaced").glob("*/ada/ex01")
    assert (draft / "ex01.ipynb").read_text(encoding="utf-8") == "draft"
    assert (draft / "timestamp.txt").read_text(encoding="utf-8").startswith("2026-01-20 09:00:00")
    assert (scratch / "late" / "ex01" / "timestamp.txt").read_text(encoding="utf-8").startswith("2026-01-20 12:00")
    assert (submitted / "cy" / "ex01" / "ex01.ipynb").read_text(encoding="utf-8") == "newer"
    assert (submitted / "cy" / "ex01" / "timestamp.txt").read_text(encoding="utf-8").startswith("2026-01-20 09:00")
    assert len(notes) == 2 and any("ada/ex01: the exchange's submission" in n for n in notes)
