"""Do learners' names reach nbgrader's gradebook (which formgrader and the exports read), without
adding anyone and without replacing a name the instructor gave?"""

from nbgrader.api import Gradebook

from autograder.grading.store.student_names import name_students


def test_names_fill_in_graded_students_only_and_keep_given_names(tmp_path):
    url = f"sqlite:///{tmp_path}/gradebook.db"
    with Gradebook(url) as gb:
        gb.add_student("ada", first_name="Augusta Ada", last_name="King")  # corrected by the instructor
        gb.add_student("grace")
    named = name_students(url, {"ada": ("Ada", "Lovelace"), "grace": ("Grace", "Hopper"), "alan": ("Alan", "Turing")})
    assert named == ["grace"]
    with Gradebook(url) as gb:
        assert sorted((s.id, s.first_name, s.last_name) for s in gb.students) == [
            ("ada", "Augusta Ada", "King"),
            ("grace", "Grace", "Hopper"),
        ]
