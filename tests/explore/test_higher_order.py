"""Does the explorer of chapter 12 measure what a Jacobian costs in each mode, and where gradients
turn NaN?"""

import ipywidgets as widgets
import pytest

from autograder.explore.higher_order import (
    NAN_CASES,
    jacobian_cost,
    jacobian_explorer,
    jacobian_table,
    nan_facts,
    nan_table,
)
from tests.explore.test_shell import shown


@pytest.mark.parametrize(("n_in", "n_out"), [(2, 16), (16, 2), (3, 3)])
def test_each_mode_pays_for_its_side_of_the_jacobian(n_in, n_out):
    """Does reverse mode push one vector per output and forward mode one per input, with matmul
    FLOPs 2*n_out*n_out*n_in and 2*n_out*n_in*n_in, all three ways giving the same Jacobian?"""
    facts = jacobian_cost(n_in, n_out)
    assert [facts[k]["vectors"] for k in ("jacrev", "jacfwd", "loop")] == [n_out, n_in, n_out]
    assert facts["jacrev"]["flops"] == 2 * n_out * n_out * n_in
    assert facts["jacfwd"]["flops"] == 2 * n_out * n_in * n_in
    assert all(f["equal"] for f in facts.values())


def test_table_names_the_cheaper_mode():
    """Does the table say jacfwd for a tall Jacobian, jacrev for a wide one, neither for a square?"""
    assert jacobian_table(2, 64).endswith("jacfwd multiplies less")
    assert jacobian_table(64, 2).endswith("jacrev multiplies less")
    assert jacobian_table(8, 8).endswith("the same")


def test_nan_cases_and_their_fixes():
    """Is sqrt's gradient at 0 inf, are sqrt(x*x), sqrt(sum v*v), sqrt(sum v**2) and the single where
    NaN with the Node anomaly mode names (the square's Node: MulBackward0 for v * v, PowBackward0 for
    v ** 2), and are vector_norm, the double where and the clamp finite?"""
    assert nan_facts("sqrt(x) at 0")["grad"] == float("inf")
    assert nan_facts("sqrt(x) at 0")["anomaly"] is None
    named = {
        "sqrt(x * x) at 0": "MulBackward0",
        "sqrt(sum(v * v)) at 0": "MulBackward0",
        "sqrt(sum(v ** 2)) at 0": "PowBackward0",
        "where(x > 0, sqrt(x), 0) at 0": "SqrtBackward0",
        "where(x > 0, log(x), 0) at 0": "LogBackward0",
    }
    for case, node in named.items():
        facts = nan_facts(case)
        assert facts["grad"] != facts["grad"], case  # NaN
        assert f"Function '{node}' returned nan values" in facts["anomaly"], case
    for case in NAN_CASES:
        if "norm" in case or "where(x > 0, log(where" in case or "clamp" in case:
            assert nan_facts(case)["grad"] == 0.0 and nan_facts(case)["anomaly"] is None, case


def test_table_and_widget_show_the_same_text():
    """Does the widget show jacobian_table of its default sizes, and the NaN table list each case?"""
    assert isinstance(jacobian_explorer(), widgets.Widget)
    assert shown(jacobian_explorer) == jacobian_table(4, 256) + "\n"
    assert all(case in nan_table() for case in NAN_CASES)
