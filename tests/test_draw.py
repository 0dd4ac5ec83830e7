"""Are drawings deterministic, labelled, and readable without Graphviz?"""
import pytest
import torch

import autograder.draw as draw_module
from autograder.draw import INSTALL_DOT, draw


def graph_output():
    w = torch.ones(3, requires_grad=True)
    return w, (w.sigmoid() * 2).sum()


def test_dot_source_is_identical_from_run_to_run():
    """Is the Graphviz source the same for two runs of the same code (no id()-based names)?"""
    assert draw(graph_output()[1]).digraph.source == draw(graph_output()[1]).digraph.source


def test_drawing_labels_nodes_leaves_and_saved_tensors():
    """Does the drawing name each Node, the leaf's .grad and the saved output?"""
    w, out = graph_output()
    source = draw(out, names={"w": w}).digraph.source
    for text in ("SigmoidBackward0", "-> w.grad", "result: float32[3] 12 B v0", "output"):
        assert text in source


def test_saved_tensors_can_be_hidden():
    """With show_saved=False, are saved tensors left out?"""
    assert "result:" not in draw(graph_output()[1], show_saved=False).digraph.source


@pytest.mark.skipif(not draw_module.dot_available(), reason="Graphviz dot is not installed")
def test_svg_carries_a_text_alternative():
    """With dot installed, does the notebook get SVG plus the text table?"""
    bundle = draw(graph_output()[1])._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    assert "SigmoidBackward0" in bundle["text/plain"]


def test_without_dot_the_table_and_install_line_are_shown(monkeypatch):
    """Without dot, is the graph shown as a table with the line that installs Graphviz?"""
    monkeypatch.setattr(draw_module, "dot_available", lambda: False)
    bundle = draw(graph_output()[1])._repr_mimebundle_()
    assert set(bundle) == {"text/plain"}
    assert bundle["text/plain"].startswith(INSTALL_DOT) and "SigmoidBackward0" in bundle["text/plain"]
