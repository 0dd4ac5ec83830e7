"""Are drawings deterministic, labelled, and readable without Graphviz?"""

import base64
import re

import pytest
import torch

import autograder.draw as draw_module
from autograder.draw import INSTALL_DOT, Figure, describe, dot_available, draw
from autograder.graph import trace


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


def test_notes_stand_beside_their_nodes_and_in_the_text():
    """Does a note appear beside the Node it names, in the drawing and in its text version?"""
    w, out = graph_output()
    drawing = draw(out, names={"w": w}, notes={"MulBackward0": "a hook on w.sigmoid() runs here"})
    assert re.search(r'note0 \[label="a hook on w.sigmoid\(\) runs here"', drawing.digraph.source)
    assert re.search(r"note0 -> n\d+ \[arrowhead=none style=dotted\]", drawing.digraph.source)
    assert drawing.table.endswith("note at MulBackward0: a hook on w.sigmoid() runs here")


def test_a_note_on_a_node_the_graph_lacks_says_which_nodes_it_has():
    """Does a misspelt Node name fail with the names the graph has, rather than draw nothing?"""
    with pytest.raises(ValueError, match=r"no Node named MulBackward1 .* SumBackward0, MulBackward0"):
        draw(graph_output()[1], notes={"MulBackward1": "x"})


def test_saved_tensors_can_be_hidden():
    """With show_saved=False, are saved tensors left out?"""
    assert "result:" not in draw(graph_output()[1], show_saved=False).digraph.source


@pytest.mark.skipif(not draw_module.dot_available(), reason="Graphviz dot is not installed")
def test_svg_carries_a_text_alternative():
    """With dot installed, does the notebook get SVG plus the text table?"""
    bundle = draw(graph_output()[1])._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    assert "SigmoidBackward0" in bundle["text/plain"]


@pytest.mark.skipif(not draw_module.dot_available(), reason="Graphviz dot is not installed")
def test_html_figure_has_alt_text_and_a_table_of_nodes_and_saved_tensors():
    """Does the HTML figure (what JupyterLab shows) describe the graph for screen readers: alt text
    naming the Nodes and leaves, and a table with a row per Node and its saved tensors?"""
    w, out = graph_output()
    drawing = draw(out, names={"w": w})
    page = drawing._repr_mimebundle_()["text/html"]
    alt = describe(drawing.graph)
    assert alt == (
        "Autograd graph, 4 backward Nodes (SumBackward0, MulBackward0, SigmoidBackward0; "
        "AccumulateGrad for w) and 2 saved tensors. The text version lists every Node, "
        "where it sends its gradient and what it saved."
    )
    assert page.startswith('<figure class="autograd-drawing"><img src="data:image/svg+xml;base64,')
    assert f'alt="{alt}"' in page
    assert "<summary>Text version" in page and page.count("<tr>") == 1 + len(drawing.graph)
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", page)
    assert cells[6:9] == ["SigmoidBackward0", "AccumulateGrad", "result: float32[3] 12 B v0"]
    assert cells[10] == "-&gt; w.grad"
    svg = base64.b64decode(page.split("base64,")[1].split('"')[0]).decode()
    assert svg == drawing.svg()
    assert drawing._repr_mimebundle_()["image/svg+xml"].count(f'aria-label="{alt}"') == 1


def test_figure_escapes_its_texts():
    """Are alt text, caption and SVG label escaped, so a name with < or " cannot break the HTML?"""
    fig = Figure('<svg width="1"></svg>', alt='a "b" <c>', caption="x < y")
    page = fig.html()
    assert 'alt="a &quot;b&quot; &lt;c&gt;"' in page and "<figcaption>x &lt; y</figcaption>" in page
    assert fig.labelled_svg() == '<svg role="img" aria-label="a &quot;b&quot; &lt;c&gt;" width="1"></svg>'
    assert fig._repr_mimebundle_()["text/plain"] == 'a "b" <c>'


def test_an_empty_graph_is_described():
    """Does a tensor without grad_fn get a sentence rather than an empty alt text?"""
    assert describe(draw(torch.ones(2)).graph) == "An empty autograd graph: no backward Nodes."


def test_without_dot_the_table_and_install_line_are_shown(monkeypatch):
    """Without dot, is the graph shown as a table with the line that installs Graphviz?"""
    monkeypatch.setattr(draw_module, "dot_available", lambda: False)
    bundle = draw(graph_output()[1])._repr_mimebundle_()
    assert set(bundle) == {"text/plain"}
    assert bundle["text/plain"].startswith(INSTALL_DOT) and "SigmoidBackward0" in bundle["text/plain"]


@pytest.mark.skipif(not dot_available(), reason="needs Graphviz's dot")
def test_a_torchviz_drawing_shown_as_a_figure_carries_no_memory_address():
    """Does Figure.of_graph leave out the id()-based node names torchviz writes into the SVG (hover
    titles and comments), so that a lesson's stored drawing shows no address and stays the same
    from run to run, while the drawing itself keeps its boxes and labels?"""
    from torchviz import make_dot

    x = torch.ones(2, requires_grad=True)
    loss = (x * 2).sum()
    svg = make_dot(loss, params={"x": x}).pipe(format="svg", encoding="utf-8")
    assert re.search(r"\d{10,}", svg)  # torchviz's ids are there to begin with
    shown = Figure.of_graph(svg, trace(loss)).labelled_svg()
    assert not re.search(r"\d{10,}", shown), shown
    assert shown.count('<g id="node') == svg.count('<g id="node') and "MulBackward0" in shown


def test_the_text_alternative_does_not_count_freed_tensors_as_saved():
    """After backward, does the alt text say 0 saved tensors and how many Nodes backward freed (a custom Function's
    Node then says only 'freed', not how many tensors it held), rather than counting freed records as tensors?"""

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, x * 2)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, _ = ctx.saved_tensors
            return 2 * x * g

    x = torch.ones(3, requires_grad=True)
    y = Square.apply(x).sin().sum()
    assert "and 3 saved tensors." in describe(trace(y))  # Square's 2, sin's input
    y.backward()
    assert "and 0 saved tensors; backward has freed what 2 Nodes saved." in describe(trace(y))
