"""Do names from submissions stay data in CSV cells, terminals and stores?"""

import re
import sys
import unicodedata

import pytest

from autograder.grading.names import FORMAT_CHARACTERS, UnsafeId, check_id, csv_cell, gradebook_name, terminal


@pytest.mark.parametrize("good", ["ada", "s123", "ada.lovelace@uni.edu", "grace_h-2", "ex01_graph"])
def test_a_safe_id_is_kept(good):
    assert check_id(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "",
        ".hidden",
        "-rf",
        "../ada",
        "a/b",
        '=HYPERLINK("x")',
        "ada\x1b]52;c;aGk=\x07",
        "a b",
        "é" * 3,
        "x" * 101,
        "+A1+B1",
        "@A1",
        "\ufeff=A1",
    ],  # a formula start: nbgrader's export writes ids raw
)
def test_an_unsafe_id_is_refused_with_its_control_characters_escaped(bad):
    with pytest.raises(UnsafeId) as error:
        check_id(bad, "student id")
    assert "\x1b" not in str(error.value) and "\x07" not in str(error.value)


@pytest.mark.parametrize(
    "formula",
    [
        "=1+1",
        "+cmd",
        "-2+3",
        "@SUM(A1)",
        "\t=1",
        "\r=1",
        '=HYPERLINK("http://x")',
        "+inf",
        "+Infinity",
        "-inf",
        "-nan",
        "+1_000",
        "+1",
        "-1 ",
        "-\u0661",
        "-1e5+A1",
    ],
)
def test_a_cell_that_would_start_a_formula_is_quoted(formula):
    assert csv_cell(formula) == "'" + formula


@pytest.mark.parametrize(
    "value, cell", [(-1.5, "-1.5"), (3, "3"), (2.0, "2"), ("-2", "-2"), ("-1.5e-3", "-1.5e-3"), ("graded", "graded")]
)
def test_numbers_and_plain_text_are_unchanged(value, cell):
    assert csv_cell(value) == cell


def test_terminal_output_holds_no_control_character():
    shown = terminal("ada\x1b]52;c;aGk=\x07\nforged 8 8 graded\u202e")
    assert shown == "ada\\x1b]52;c;aGk=\\x07\\nforged 8 8 graded\\u202e"
    assert all(ch.isprintable() for ch in shown)


def test_every_format_character_is_dropped_from_a_roster_name():
    """Is every Unicode format character (category Cf: U+FEFF, the soft hyphen, tags) in the list,
    so that a name hiding ``=`` behind U+FEFF still gets its leading ``'`` in the gradebook?"""
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    listed = set(re.findall(f"[{FORMAT_CHARACTERS}]", every))
    assert listed == {c for c in every if unicodedata.category(c) == "Cf"}
    assert gradebook_name("\ufeff=HYPERLINK(1)") == "'=HYPERLINK(1)" and terminal("\ufeff") == "\\ufeff"
