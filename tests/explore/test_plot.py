"""Does a lesson's line plot say in words what it shows, and draw the same bytes on every run?"""

import hashlib
import subprocess
import sys

import pytest

from autograder.explore.plot import describe_series, line_plot

SERIES = {"bytes alive": [0, 4096, 8192, 4096, 0], "saved": [0, 4096, 4096, 0, 0]}
STEPS = ["start", "fwd1", "fwd2", "bwd1", "end"]
PURPOSE = "When are the most bytes alive?"


def _plot():
    return line_plot(
        SERIES, STEPS, xlabel="step", ylabel="bytes", title="Memory during one step", purpose=PURPOSE, unit="B"
    )


def test_alt_text_says_what_the_plot_is_for_then_each_lines_ends_and_extremes():
    alt = _plot().alt
    assert alt.startswith(f"Memory during one step: bytes against step. {PURPOSE} ")
    assert "bytes alive starts at 0 B at start, is lowest, 0 B, at start and end, highest, 8,192 B, at fwd2" in alt
    assert "saved starts at 0 B at start, is lowest, 0 B, at start and end to end" not in alt
    assert (
        "saved starts at 0 B at start, is lowest, 0 B, at start and bwd1 to end, highest, 4,096 B, at fwd1 to fwd2"
        in (alt)
    )


def test_the_lowest_point_is_said_even_inside_the_line():
    """Lesson 8's plot is there for its minimum: 8 activations at 4 segments, between 17 at both ends."""
    peaks = [17, 10, 9, 8, 9, 12, 11, 10, 17, 17, 17, 17, 17, 17, 17, 17]
    said = describe_series("16 x Linear-Tanh", list(range(1, 17)), peaks)
    assert said == (
        "16 x Linear-Tanh starts at 17 at 1, is lowest, 8, at 4, highest, 17, at 1 and 9 to 16, ends at 17 at 16."
    )


@pytest.mark.parametrize(
    ("ys", "said"),
    [
        ([3.0, 2.0, 1.0], "loss falls from 3 at 0, its highest, to 1 at 2, its lowest."),
        ([1.0, 2.0, 3.0], "loss rises from 1 at 0, its lowest, to 3 at 2, its highest."),
        ([2.0, 2.0, 2.0], "loss stays at 2 from 0 to 2."),
        (
            [1.5, 0.25, 1.5],
            "loss starts at 1.5 at 0, is lowest, 0.25, at 1, highest, 1.5, at 0 and 2, ends at 1.5 at 2.",
        ),
    ],
)
def test_a_line_whose_extremes_are_its_ends_is_said_to_rise_or_fall(ys, said):
    assert describe_series("loss", [0, 1, 2], ys) == said


def test_a_plot_without_a_purpose_is_refused():
    with pytest.raises(ValueError, match="purpose"):
        line_plot({"a": [1, 2]}, [0, 1], xlabel="x", ylabel="y", title="t", purpose=" ")


def test_the_plain_text_is_the_table_of_numbers():
    lines = _plot().text.splitlines()
    assert lines[0].split() == ["step", "bytes", "alive", "(B)", "saved", "(B)"]
    assert lines[3].split() == ["fwd2", "8,192", "4,096"]


def test_the_html_shows_picture_alt_and_folded_numbers():
    page = _plot().html()
    assert 'alt="Memory during one step: bytes against step.' in page
    assert "<summary>Text version: the numbers plotted</summary>" in page
    assert '<td style="text-align: left">8,192</td>' in page


def test_the_svg_is_the_same_bytes_in_another_process():
    code = (
        "import hashlib, sys; sys.path.insert(0, '.');"
        "from tests.explore.test_plot import _plot;"
        "print(hashlib.sha256(_plot().svg.encode()).hexdigest())"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert other == hashlib.sha256(_plot().svg.encode()).hexdigest()


def test_a_series_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="'saved' has 2 values for 5 x values"):
        line_plot(
            {"bytes alive": SERIES["bytes alive"], "saved": [0, 1]},
            STEPS,
            xlabel="s",
            ylabel="b",
            title="t",
            purpose="p",
        )


def test_plotting_leaves_the_notebooks_matplotlib_backend_alone():
    """After line_plot, does pyplot still draw with the backend it had (a lesson's inline plots after it)?"""
    program = (
        "import matplotlib; matplotlib.use('svg'); import matplotlib.pyplot as plt\n"
        "from autograder.explore.plot import line_plot\n"
        "line_plot({'a': [1, 2]}, [0, 1], xlabel='x', ylabel='y', title='t', purpose='p')\n"
        "print(matplotlib.get_backend())"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "svg"


def test_numbers_that_are_not_evenly_spaced_keep_their_proportions_on_the_axis():
    """Are 1, 2, 4, 8 layers placed at 1, 2, 4, 8 (linear growth must not look exponential), while evenly
    spaced numbers and labels keep evenly spaced positions (and the same picture as before)?"""
    from autograder.explore.plot import _positions

    assert _positions([1, 2, 4, 8]) == [1.0, 2.0, 4.0, 8.0]
    assert _positions([0.5, 1, 3]) == [0.5, 1.0, 3.0]
    assert _positions([1, 2, 3, 4]) == [0, 1, 2, 3]
    assert _positions(["1", "2", "4", "8"]) == [0, 1, 2, 3]
    assert _positions([True, False, True]) == [0, 1, 2]
    axes = {"xlabel": "layers", "ylabel": "bytes", "title": "t", "purpose": "p"}
    uneven = line_plot({"bytes": [1, 2, 4, 8]}, [1, 2, 4, 8], **axes)
    labels = line_plot({"bytes": [1, 2, 4, 8]}, ["1", "2", "4", "8"], **axes)
    assert uneven.svg != labels.svg


def test_a_heatmap_writes_each_value_and_says_its_shape_and_largest_entry():
    """Does heatmap() put each entry in the picture and the table, and name the shape and largest entry in the alt
    text (a Jacobian's rows and columns, not lines between categories)?"""
    from autograder.explore.plot import heatmap

    fig = heatmap([[2.0, 1.0, 0.0], [0.0, 4.0, -3.0]], ["g0", "g1"], ["x0", "x1", "x2"], title="J")
    assert "2 by 3 grid" in fig.alt and "largest entry in size is 4 at g1, x1" in fig.alt
    assert fig.text.splitlines()[2].split() == ["g1", "0", "4", "-3"]
    assert all(f">{v}</text>" in fig.svg for v in ("-3", "4", "2", "0"))
    assert heatmap([[1.0]], ["a"], ["b"], title="t").svg == heatmap([[1.0]], ["a"], ["b"], title="t").svg
    with pytest.raises(ValueError):
        heatmap([[1.0, 2.0]], ["a"], ["b"], title="t")


def test_a_timeline_says_each_bar_of_each_lane_from_its_start_to_its_end():
    """Does timeline() list every bar with its lane and the events it spans (alt text and table), draw the same
    bytes twice, and refuse a bar that ends before it starts?"""
    from autograder.explore.plot import timeline

    lanes = {"backward": [(0, 1, "2.bias"), (1, 3, "0.weight")], "all-reduce": [(2, 3, "bucket 0")]}
    ticks = ["start", "2.bias ready", "bucket 0 sent", "returned"]
    fig = timeline(lanes, ticks, xlabel="event", title="T")
    assert "backward: 2.bias from start to 2.bias ready; 0.weight from 2.bias ready to returned." in fig.alt
    assert "all-reduce: bucket 0 from bucket 0 sent to returned." in fig.alt
    assert fig.text.splitlines()[-1].split() == ["all-reduce", "bucket", "0", "bucket", "0", "sent", "returned"]
    assert fig.svg == timeline(lanes, ticks, xlabel="event", title="T").svg
    with pytest.raises(ValueError):
        timeline({"a": [(2, 1, "x")]}, ticks, xlabel="event", title="T")
