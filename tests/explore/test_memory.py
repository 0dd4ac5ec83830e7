"""Do the explorers of chapters 7 and 8 show what the lessons say they show?"""

import math

import ipywidgets as widgets
import pytest
import torch

from autograder.explore.memory import (
    POLICIES,
    checkpoint_peak,
    leak_explorer,
    leak_table,
    loop_memory,
    loop_table,
    measured_plots,
    segment_explorer,
    segment_rows,
    segment_table,
    stack,
)
from tests.explore.test_shell import shown

ONE_STEP = 8 * 16 * 4 + 8 * 32 * 4 + 2 * 8 * 4 * 4  # x, ReLU output, prediction, target


def alive(policy, steps=4):
    return [r["alive_bytes"] for r in loop_memory(policy, steps)]


def test_logging_numbers_keeps_nothing():
    """With .item() logging, is nothing alive after any step, and the peak one step's graph?"""
    rows = loop_memory("loss.item()", 4)
    assert [r["alive_bytes"] for r in rows] == [0] * 4 and rows[-1]["peak_bytes"] == ONE_STEP
    assert [r["nodes"] for r in rows] == [0] * 4


def test_a_loss_kept_after_backward_keeps_nodes_only():
    """Does a loss tensor kept after backward hold no saved bytes but a growing skeleton of Nodes
    (6 per step, plus the 4 AccumulateGrad Nodes the steps share)?"""
    rows = loop_memory("loss tensor after backward", 4)
    assert [r["alive_bytes"] for r in rows] == [0] * 4
    assert [r["nodes"] for r in rows] == [4 + 6 * k for k in range(1, 5)]


def test_never_backwarded_or_retained_graphs_grow_one_step_each():
    """Do a validation loss kept with grad mode on and a retained loss kept each add one step?"""
    assert alive("val loss without no_grad") == [ONE_STEP * k for k in range(1, 5)]
    assert alive("retain_graph, loss kept") == [ONE_STEP * k for k in range(1, 5)]


def test_retain_graph_without_keeping_holds_one_graph_and_peaks_at_two():
    """With retain_graph=True and only the variable `loss`, is one graph alive and the peak two?"""
    rows = loop_memory("retain_graph, loss dropped", 4)
    assert [r["alive_bytes"] for r in rows] == [ONE_STEP] * 4 and rows[-1]["peak_bytes"] == 2 * ONE_STEP


def test_unknown_policy_is_refused():
    """Is a misspelled policy an error rather than a silent default?"""
    with pytest.raises(KeyError):
        loop_memory("loss.itme()")


def test_loop_table_lists_every_policy():
    """Does the text table have a row per policy with one figure per step?"""
    lines = loop_table(3).splitlines()
    assert len(lines) == 1 + len(POLICIES)
    assert all(len(line.split()) >= 3 for line in lines[1:])


def test_checkpointing_one_block_keeps_only_its_input():
    """Does a one-block checkpoint keep its input and the unchecked block's saved tensors only?"""
    model, x = stack(2, width=8), torch.randn(4, 8)
    one = 4 * 8 * 4
    assert checkpoint_peak(model, x, 0) == 3 * one  # x and two Tanh outputs
    assert checkpoint_peak(model, x, 2) == 3 * one  # x (checkpoint's input), block 2's input and output


def test_sqrt_rule_holds_for_tanh_blocks():
    """For 16 Linear-Tanh blocks, is the smallest peak at 4 segments, s + n/s activations where s
    divides n, and are the block runs 16 plus the checkpointed blocks?"""
    rows = segment_rows(16, "tanh", width=8, batch=4)
    peak = {r["segments"]: r["activations"] for r in rows}
    assert min(range(1, 17), key=lambda s: (peak[s], s)) == math.isqrt(16)
    assert all(peak[s] == s + 16 // s for s in (2, 4, 8, 16)) and peak[0] == peak[1] == 17
    assert all(
        r["block_runs"] == 16 + ((r["segments"] - 1) * (16 // r["segments"]) if r["segments"] else 0) for r in rows
    )


def test_heavier_blocks_want_more_segments():
    """For 16 MLP blocks (a ReLU output 4x wider than the input), is the best count 8, not 4?"""
    peak = {r["segments"]: r["peak_bytes"] for r in segment_rows(16, "mlp", width=8, batch=4)}
    assert min(range(1, 17), key=lambda s: (peak[s], s)) == 8


def test_segment_table_marks_the_minimum_and_sqrt():
    """Does the text table mark the smallest peak and the √n row?"""
    table = segment_table(9, "tanh", width=8, batch=4)
    assert "<- min (√n)" in table and len(table.splitlines()) == 2 + 10


def test_stack_rejects_unknown_kinds_and_keeps_the_random_state():
    """Is an unknown block kind refused, and does building a stack leave the global RNG alone?"""
    with pytest.raises(ValueError):
        stack(2, "conv")
    torch.manual_seed(5)
    expected = torch.rand(1)
    torch.manual_seed(5)
    stack(3)
    assert torch.equal(torch.rand(1), expected)


def test_widgets_show_their_tables():
    """Do both explorers build as widgets without a running frontend, showing the table of their
    default choices?"""
    assert isinstance(leak_explorer(), widgets.Widget)
    assert shown(leak_explorer) == leak_table("loss.item()", 6) + "\n"
    assert shown(segment_explorer) == segment_table(9, "tanh", width=32, batch=16) + "\n"


def test_leak_table_bars_follow_the_alive_bytes():
    """Does the leak table print the policy, a header and one row per step, with a bar as long as
    the alive bytes allow (full at the peak of a growing graph)?"""
    lines = leak_table("val loss without no_grad", 3).splitlines()
    assert lines[0] == POLICIES["val loss without no_grad"] and len(lines) == 2 + 3
    assert lines[-1].endswith("#" * 40) and lines[2].count("#") < lines[-1].count("#")


def test_the_checkpointing_figures_are_plots_whose_alt_text_names_the_lowest_peak():
    """Lesson 8's figures (the CPU's saved bytes here): a peak plot and a time plot per model, each saying
    what it is for, the peak plot naming the segment count ``figures.summarize`` finds lowest."""
    from autograder import figures

    rows = figures.cpu_rows()
    (summary,) = figures.summarize(rows)
    peak, time = measured_plots(rows)
    assert "Which segment count gives the lowest peak" in peak.alt and "cost in time" in time.alt
    assert f", at {summary.best_segments}, highest" in peak.alt, peak.alt
    assert "Text version" in peak.html() and "segments (0 = no checkpointing)" in peak.text
