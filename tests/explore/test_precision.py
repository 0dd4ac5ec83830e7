"""Does the explorer of chapter 11 show what CPU bfloat16 autocast does to dtypes, Nodes and saved bytes?"""

import re

import ipywidgets as widgets
import torch

from autograder.explore.precision import OPS, precision_explorer, precision_facts, precision_table
from tests.explore.test_shell import shown

BF16, FP32 = torch.finfo(torch.bfloat16).bits // 8, torch.finfo(torch.float32).bits // 8  # bytes per element


def test_linear_runs_in_bfloat16_under_autocast_and_casts_both_inputs():
    """Is linear's result bfloat16 under autocast, with one ToCopyBackward0 per float32 input that
    requires grad (the parameter always, the input only when it requires grad)?"""
    assert precision_facts("linear", autocast=False)["output"] == "float32"
    facts = precision_facts("linear")
    assert (facts["output"], facts["casts"]) == ("bfloat16", 2)
    assert precision_facts("linear", input_requires_grad=False)["casts"] == 1
    assert (precision_facts("conv1d")["output"], precision_facts("matmul")["output"]) == ("bfloat16", "bfloat16")


def test_saved_bytes_are_the_bfloat16_copies():
    """Does linear under autocast save the bfloat16 copies of x [4, 8] and w [8, 8] (w's copy is
    not the parameter, so it is counted), while without autocast only x (float32) is counted?"""
    assert precision_facts("linear", autocast=False)["saved_bytes"] == 4 * 8 * FP32
    assert precision_facts("linear")["saved_bytes"] == (4 * 8 + 8 * 8) * BF16
    assert all("bfloat16" in s for s in precision_facts("linear")["saved"])


def test_some_ops_upcast_a_bfloat16_input_to_float32():
    """Do mse_loss and cross_entropy turn a bfloat16 input into float32 under CPU autocast (a
    cast), while relu and softmax keep the input's dtype?"""
    for op in ("mse_loss", "cross_entropy"):
        facts = precision_facts(op, torch.bfloat16)
        assert (facts["output"], facts["casts"]) == ("float32", 1)
    for op in ("relu", "softmax"):
        assert precision_facts(op, torch.bfloat16)["output"] == "bfloat16"
        assert precision_facts(op)["output"] == "float32"


def test_bfloat16_input_outside_autocast_is_a_dtype_error():
    """Does a bfloat16 input to linear outside autocast give PyTorch's dtype-mismatch error, shown
    in the table?"""
    facts = precision_facts("linear", torch.bfloat16, autocast=False)
    assert facts["output"] == "error" and "same dtype" in facts["error"]
    assert "RuntimeError:" in precision_table(torch.bfloat16)
    assert "RuntimeError:" not in precision_table()


def test_table_and_widget_show_the_same_text():
    """Does the table have a row per op, and does the widget show precision_table of its defaults?"""
    table = precision_table()
    assert all(any(line.startswith(op + " ") for line in table.splitlines()) for op in OPS)
    assert isinstance(precision_explorer(), widgets.Widget)
    assert shown(precision_explorer) == table + "\n"


def test_each_error_in_the_table_says_which_runs_raised_it():
    """Does every 'error [k]' cell of the table have a note [k] below it naming that op and mode,
    with PyTorch's message once?"""
    table = precision_table(torch.bfloat16)
    for k in sorted(set(re.findall(r"error \[(\d+)\]", table))):
        (note,) = [line for line in table.splitlines() if line.startswith(f"[{k}] ")]
        assert "(no autocast)" in note and "RuntimeError: " in note
    assert "[1] linear (no autocast), matmul (no autocast): RuntimeError: expected m1" in table
