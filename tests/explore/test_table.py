"""Do text tables line up their columns, and do bars scale?"""

from autograder.explore.table import bar, text_table


def test_columns_are_as_wide_as_their_widest_cell():
    """Is each column as wide as its widest cell, two spaces apart, with no trailing spaces?"""
    assert text_table([("a", "bb", "c"), ("ccc", "d", "")]).splitlines() == ["a    bb  c", "ccc  d"]


def test_alignment_per_column_and_the_last_one_repeats():
    """Does ``align="<>"`` left-align the first column and right-align all the others?"""
    assert text_table([("x", 1, 100), ("yy", 22, 3)], align="<>").splitlines() == ["x    1  100", "yy  22    3"]


def test_rows_may_differ_in_length_and_cells_are_str():
    """Are short rows and non-string cells (None, numbers) shown as str() without error?"""
    assert text_table([("a", None), ("bb",)]) == "a   None\nbb"


def test_bar_scales_with_the_top_and_is_empty_for_zero():
    """Is a bar ``width`` long for ``top``, proportional below it, and empty when top is 0?"""
    assert bar(10, 10, 8) == "#" * 8 and bar(5, 10, 8) == "#" * 4 and bar(3, 0) == ""
