"""Does a roster map platform ids and names to student ids without guessing: a key two rows give
to different students refused with both rows named, a bad row one line, names folded across scripts?"""

from autograder.grading.intake.roster import fold, read_roster


def roster_of(tmp_path, text: str):
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    return read_roster(path)


def test_names_fold_across_case_accents_spacing_and_scripts():
    assert fold("José  RUIZ") == fold("jose ruiz") == "joseruiz"
    assert fold("李雷") == "李雷" and fold("Ελένη") == "ελενη"
    assert fold("--- !!") == ""


def test_an_id_decides_and_a_name_only_where_the_roster_gives_no_id(tmp_path):
    roster = roster_of(tmp_path, "student_id,canvas_id,moodle_id,name\nbob,201,502,Bob Smith\nli,,,李雷\n")
    assert roster.find("moodle", "502", "Anyone") == ("bob", "")
    assert roster.find("moodle", "777", "李雷") == ("li", "")
    student, why = roster.find("moodle", "666", "Bob Smith")  # another participant who calls themself Bob Smith
    assert student is None and "another moodle id" in why
    student, why = roster.find("canvas", "9", "???")
    assert student is None and "no letters" in why


def test_a_key_two_rows_give_to_different_students_is_refused_naming_both(tmp_path):
    roster = roster_of(
        tmp_path,
        "student_id,canvas_id,name\nann1,,Ann Lee\nann2,,ann  LEE\nx1,305,X One\nx2,305,X Two\n"
        "dup,401,Dee One\ndup,402,Dee Two\n",
    )
    student, why = roster.find("canvas", "", "Ann Lee")
    assert student is None and "line 2 (ann1, 'Ann Lee') and line 3 (ann2, 'ann  LEE')" in why
    student, why = roster.find("canvas", "305", "X One")
    assert student is None and "x1" in why and "x2" in why
    assert ("student", "dup") in roster.ambiguous  # one login, two people: whoever maps to it is refused


def test_a_row_that_cannot_be_read_is_one_line_and_the_others_stand(tmp_path):
    roster = roster_of(
        tmp_path,
        f'student_id,canvas_id,name\n=evil(),1,Eve\nok,2,"{"x" * 200_000}"\nfine,3,Fine Person\n+A1+B1,4,P\n@A1,5,A\n',
    )  # nbgrader's own export writes ids raw: an id may not start a formula
    assert roster.find("canvas", "3", "") == ("fine", "")
    assert any("line 2" in p and "refused student id" in p for p in roster.problems), roster.problems
    assert any("line 3" in p and "not read" in p for p in roster.problems), roster.problems
    assert [p[:30] for p in roster.problems[-2:]] == [f"roster line {n}: refused student" for n in (5, 6)]


def test_moodles_grading_worksheet_is_a_roster(tmp_path):
    roster = roster_of(
        tmp_path, "Identifier,Full name,Email address,Status\nParticipant 502,Bob Smith,bob@uni.edu,Submitted\n"
    )
    assert roster.find("moodle", "502", "Bob Smith") == ("bob", "")
    assert roster.names["bob"] == ("Bob", "Smith")


def test_names_reach_the_gradebook_without_commas_quotes_or_formulas(tmp_path):
    roster = roster_of(
        tmp_path,
        'student_id,name\neve,"Jones, Eve,eve@uni.edu,8.0"\nmal,"=HYPERLINK(""http://x"",""8"")"\nq,"""Quoted"" Q"\n',
    )
    assert roster.names["eve"] == ("Eve eve@uni.edu 8.0", "Jones")
    assert not any(p.startswith(("=", "+", "@", "-")) for p in roster.names["mal"])
    assert all("," not in p and '"' not in p for name in roster.names.values() for p in name)


def test_an_instructors_spreadsheet_ids_and_names_find_their_learners(tmp_path):
    """Messy data: ids a spreadsheet turned into numbers (`201.0`, `2.01E+02`), Moodle's worksheet in
    another language, and a plain `First Last` name against Canvas's `lastfirst`: each still finds its row?"""
    from autograder.grading.intake.roster import platform_id

    assert [platform_id(t) for t in ("201.0", "2.01E+02", " Participant 201 ", "Teilnehmer/in 201", "")] == [
        "201",
        "201",
        "201",
        "201",
        "",
    ]
    roster = roster_of(tmp_path, "student_id,canvas_id,name\nada,101.0,Ada Lovelace\ngrace,,Grace Brewster Hopper\n")
    assert roster.find("canvas", "101", "lovelaceada") == ("ada", "")
    assert roster.find("canvas", "102", "hoppergracebrewster") == ("grace", "")


def test_a_roster_saved_by_a_spreadsheet_in_another_locale_is_read(tmp_path):
    """Messy data: Excel's `sep=;` first line, semicolons, Windows-1252 bytes: are the rows read,
    accented names matching the zip's?"""
    path = tmp_path / "roster.csv"
    path.write_bytes(
        "sep=;\r\nstudent_id;canvas_id;name\r\njose;;José Ruiz\r\nada;101;Ada Lovelace\r\n".encode("cp1252")
    )
    roster = read_roster(path)
    assert roster.find("moodle", "503", "José Ruiz") == ("jose", "")
    assert roster.find("canvas", "101", "") == ("ada", "") and roster.problems == []
