"""Does `grade` say so when its OUT held another gradebook's results (the demo class's and a
course's both default to grading-output/), and stay quiet when it grades the same one again?"""

from autograder.commands.grade import _late, _other_gradebooks_output, _own_output


def test_a_run_into_another_gradebooks_output_names_the_one_it_replaces(tmp_path):
    out = tmp_path / "grading-output"
    demo = f"sqlite:///{out.resolve()}/gradebook.db"
    course = "sqlite:///course/gradebook.db"
    assert _other_gradebooks_output(out, None) is None and not out.exists()  # reading writes nothing
    out.mkdir()
    _own_output(out, None)  # the demo class graded
    assert _other_gradebooks_output(out, None) is None  # the demo class again: the same gradebook
    assert _other_gradebooks_output(out, course) == demo
    _own_output(out, course)
    assert _other_gradebooks_output(out, course) is None


def test_the_tables_late_column_says_the_points_taken_off():
    assert _late({"late_penalty": "8"}) == "-8 (late)"
    assert _late({"late_penalty": "0"}) == "" and _late({}) == ""
