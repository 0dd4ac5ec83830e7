"""Do the explorers of chapters 3 and 4 show what the lessons say they show?"""

import ipywidgets as widgets

from autograder.explore.backward import (
    accumulation_explorer,
    accumulation_facts,
    accumulation_table,
    backward_explorer,
    backward_facts,
    backward_table,
)
from tests.explore.test_shell import shown


def test_backward_frees_saved_tensors_not_nodes():
    """Does backward free what sigmoid saved (marked freed, 0 alive bytes) but keep every Node,
    so that a second backward fails?"""
    f = backward_facts("x.sigmoid()")
    assert f["saved before"] == ["SigmoidBackward0.result: float32[3] 12 B v0"]
    assert f["saved after"] == ["SigmoidBackward0.result: freed"]
    assert f["nodes before"] == f["nodes after"] == 3
    assert (f["alive bytes after forward"], f["alive bytes after backward"]) == (12, 0)
    assert "backward through the graph a second time" in f["second backward"]


def test_second_backward_depends_on_what_was_saved():
    """Is a second backward fine for an addition (nothing saved) and with retain_graph, and does
    x * 2 (a saved Python number, 0 bytes) fail all the same?"""
    assert backward_facts("x + 1")["second backward"] == "ok"
    assert backward_facts("x + 1")["x.grad"] == [2.0, 2.0, 2.0]
    retained = backward_facts("x ** 2", retain_graph=True)
    assert retained["second backward"] == "ok" and retained["alive bytes after backward"] == 12
    assert retained["x.grad"] == [4.0, 8.0, 12.0]
    scalar = backward_facts("x * 2")
    assert scalar["alive bytes after forward"] == 0 and scalar["second backward"] != "ok"


def test_accumulation_matches_full_batch_only_when_scaled_right():
    """Do equal micro-batches divided by their count match the full batch, undivided ones give
    k times it, and an uneven split need weighting by size?"""
    assert accumulation_facts(micro_batch=3, scale="count")["diagnosis"] == "ok"
    undivided = accumulation_facts(micro_batch=3, scale="none")
    assert undivided["diagnosis"] == "multiple" and undivided["factor"] == 4.0
    assert accumulation_facts(micro_batch=5, scale="count")["diagnosis"] == "mismatch"
    assert accumulation_facts(micro_batch=5, scale="size")["diagnosis"] == "ok"
    assert accumulation_facts(reduction="sum", scale="none")["diagnosis"] == "ok"
    assert accumulation_facts(batchnorm=True)["diagnosis"] == "mismatch"


def test_accumulation_peak_is_one_micro_batch():
    """Is the peak of accumulation the saved bytes of one micro-batch (float64: x, tanh output,
    prediction and target), a quarter of the full batch's for four micro-batches?"""
    f = accumulation_facts(micro_batch=3)
    assert f["peak bytes accumulated"] == 3 * (4 + 8 + 1 + 1) * 8
    assert f["peak bytes full batch"] == 4 * f["peak bytes accumulated"]


def test_accumulation_reports_batchnorm_error():
    """Is BatchNorm with one-sample micro-batches reported as an error, not raised?"""
    assert "more than 1 value per channel" in accumulation_facts(micro_batch=1, batchnorm=True)["error"]
    assert "error:" in accumulation_table(micro_batch=1, batchnorm=True)


def test_chapter_3_and_4_widgets_show_their_tables():
    """Do the backward and accumulation explorers build without a running frontend and show
    their tables for the default choices?"""
    assert isinstance(backward_explorer(), widgets.Widget)
    assert shown(backward_explorer) == backward_table() + "\n"
    assert shown(accumulation_explorer) == accumulation_table() + "\n"
