"""Does the explorer of chapter 13 show graph breaks, and saved bytes that eager and the default
partitioner agree on while min-cut saves less where it can recompute?"""

import logging

import ipywidgets as widgets
import torch

from autograder.explore.compile import BLOCKS, compile_explorer, compile_facts, compile_table
from tests.explore.test_shell import shown

torch._logging.set_logs(dynamo=logging.ERROR)  # graph-break warnings name files


def test_pointwise_chain_min_cut_saves_less():
    """On sin -> cos -> tanh (1000 float32), do eager and the default partition save 3 tensors of
    4000 bytes, and min-cut two?"""
    saved = compile_facts("sin cos tanh", 1000)["saved"]
    assert saved["eager"][0] == saved["default"][0] == 3 * 4000
    assert saved["min_cut"][0] == 2 * 4000 and len(saved["min_cut"][1]) == 2


def test_breaking_blocks_have_two_graphs_and_no_saved_rows():
    """Does each block with a print, an .item() branch or a tensor if have two graphs, one break and
    no saved-bytes rows, while torch.where is one graph?"""
    for block in ("print between ops", "if on .item()", "if on a tensor"):
        facts = compile_facts(block, 10)
        assert (facts["graphs"], facts["breaks"], facts["saved"]) == (2, 1, {}), block
        assert len(facts["reasons"]) == 1
    assert compile_facts("torch.where instead of if", 10)["breaks"] == 0


def test_table_names_each_way_of_running():
    """Does the table have a row for eager, default and min_cut with bytes, and the break reason?"""
    text = compile_table("exp, then * 2", 10)
    assert all(word in text for word in ("eager", "default", "min_cut", "40"))
    assert "builtin operator" in compile_table("print between ops", 10)


def test_explorer_shows_the_table():
    """Does the widget display what compile_table returns for its default controls, and offer every block?"""
    assert shown(compile_explorer) == compile_table() + "\n"
    widget = compile_explorer()
    assert isinstance(widget, widgets.Widget)
    dropdowns = [w for w in widget.children[0].children if isinstance(w, widgets.Dropdown)]
    assert set(BLOCKS) == set(dropdowns[0].options)
