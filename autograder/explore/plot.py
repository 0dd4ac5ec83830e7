"""Line plots for the lessons: a picture with a text alternative written from its data.

A lesson that measures something over steps (bytes alive during backward, a peak against the
segment count, a gradient's norm over iterations) shows it with :func:`line_plot`. The result is a
:class:`autograder.draw.Figure`: an SVG drawn by matplotlib, alt text that says what the plot is for
and what the lines do (start, end, lowest and highest, where), a caption, and the same numbers as a
table folded under "Text version" (and as plain text, which nbval compares exactly). The SVG is made
byte-identical from run to run (fixed ids, no date), so a re-executed lesson prints the same output.
"""

from __future__ import annotations

import html
import io
from collections.abc import Mapping, Sequence
from itertools import pairwise

from ..draw import Figure
from .table import text_table

__all__ = ["line_plot", "heatmap", "timeline", "describe_series"]

# Fixed ids and no date: the same data gives the same SVG bytes on every run.
_STYLE = {"svg.hashsalt": "autograd-course", "svg.fonttype": "none", "font.size": 10}


def _number(value: float) -> str:
    """A figure as a lesson prints it: integers with thousands separators, others to 4 digits."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:.4g}"


def _where(xs: Sequence, indices: list[int]) -> str:
    """The x values at ``indices`` (sorted), runs of neighbours as "x to y": ``"4"``, ``"1 and 9 to 16"``."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    said = [f"{xs[r[0]]}" if len(r) == 1 else f"{xs[r[0]]} to {xs[r[-1]]}" for r in runs]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def describe_series(name: str, xs: Sequence, ys: Sequence[float], unit: str = "") -> str:
    """One sentence on one line of a plot: where it starts and ends, and its extremes: its lowest and
    highest values and every x where each is reached ("16 x Linear-Tanh starts at 17 at 1, is lowest,
    8, at 4, highest, 17, at 1 and 9 to 16, ends at 17 at 16."); a line whose extremes are its ends,
    that it rises or falls from one to the other; a line that never changes, its value.

    ``xs`` and ``ys`` have the same length (at least 1); ``unit`` is appended to each value."""
    if not ys:
        return f"{name}: no points."
    suffix = f" {unit}" if unit else ""
    low, high = min(ys), max(ys)
    if low == high:
        return f"{name} stays at {_number(low)}{suffix} from {xs[0]} to {xs[-1]}."
    lows, highs = [i for i, y in enumerate(ys) if y == low], [i for i, y in enumerate(ys) if y == high]
    last = len(ys) - 1
    if (lows, highs) in (([0], [last]), ([last], [0])):  # the extremes are its two ends
        way = "rises" if lows == [0] else "falls"
        first, end = ("lowest", "highest") if lows == [0] else ("highest", "lowest")
        return (
            f"{name} {way} from {_number(ys[0])}{suffix} at {xs[0]}, its {first}, "
            f"to {_number(ys[-1])}{suffix} at {xs[-1]}, its {end}."
        )
    lowest, highest = _where(xs, lows), _where(xs, highs)
    return (
        f"{name} starts at {_number(ys[0])}{suffix} at {xs[0]}, is lowest, {_number(low)}{suffix}, at {lowest}, "
        f"highest, {_number(high)}{suffix}, at {highest}, ends at {_number(ys[-1])}{suffix} at {xs[-1]}."
    )


def _positions(xs: Sequence) -> list[float]:
    """Where each x value goes on the axis: at the value itself when the values are numbers that are not evenly
    spaced (1, 2, 4, 8 layers: evenly spaced ticks would make linear growth look exponential), else at
    0, 1, 2, ... (labels such as Node names, steps, or evenly spaced numbers)."""
    numeric = all(isinstance(x, int | float) and not isinstance(x, bool) for x in xs)
    gaps = {round(b - a, 12) for a, b in pairwise(xs)} if numeric else set()
    return [float(x) for x in xs] if len(gaps) > 1 else list(range(len(xs)))


def _svg(series: Mapping[str, Sequence[float]], xs: Sequence, xlabel: str, ylabel: str, title: str, step: bool) -> str:
    import matplotlib
    from matplotlib.figure import Figure as MatplotlibFigure  # not pyplot: the notebook's backend stays as it is

    with matplotlib.rc_context(_STYLE):
        fig = MatplotlibFigure(figsize=(6.4, 3.2))
        ax = fig.subplots()
        positions = _positions(xs)
        markers = "osd^v<>"
        for i, (name, ys) in enumerate(series.items()):
            if step:
                ax.step(positions, ys, where="post", label=name)
            else:
                ax.plot(positions, ys, marker=markers[i % len(markers)], label=name)
        crowded = len(xs) > 6  # long labels such as Node names overlap when level
        ax.set_xticks(
            positions, [str(x) for x in xs], rotation=30 if crowded else 0, ha="right" if crowded else "center"
        )
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        if len(series) > 1:
            ax.legend()
        return _svg_text(fig)


def _svg_text(fig, fit: bool = False) -> str:
    """A matplotlib figure as its ``<svg>`` element alone (as graphviz's drawings are embedded), no date;
    ``fit`` grows the canvas to hold long tick labels."""
    fig.tight_layout()
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None}, bbox_inches="tight" if fit else None)
    text = out.getvalue()
    return text[text.index("<svg") :]


def _table_html(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    left = ' style="text-align: left"'
    return (
        "<table><thead><tr>"
        + "".join(f"<th{left}>{html.escape(h)}</th>" for h in header)
        + "</tr></thead><tbody>"
        + "".join("<tr>" + "".join(f"<td{left}>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
        + "</tbody></table>"
    )


def line_plot(
    series: Mapping[str, Sequence[float]],
    x: Sequence | None = None,
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    purpose: str,
    unit: str = "",
    caption: str = "",
    step: bool = False,
) -> Figure:
    """A line plot of one or more series against the same x values, with its text alternative: alt text
    that opens with the title and what the plot is for, then each line's start, end and extremes
    (:func:`describe_series`), written from the data, as the folded table of numbers is.

    Args:
        series: ``{"bytes alive": [0, 4096, ...], ...}``, each the same length as ``x``.
        x: the x values (labels: steps, Node names, segment counts); ``0, 1, ...`` when None. Numbers that
            are not evenly spaced are placed at their values, so the axis keeps their proportions.
        xlabel, ylabel, title: the axes' labels and the plot's title (the title opens the alt text).
        purpose: what a reader looks at the plot for, one sentence ("Which segment count gives the
            lowest peak?"): a reader who cannot see it learns first what to listen for.
        unit: the values' unit in the alt text and table header (e.g. ``"B"``).
        caption: a visible caption under the picture.
        step: draw steps (a value holds until the next x), for figures that change at events.

    Returns:
        A :class:`~autograder.draw.Figure`; displayed in Jupyter as the picture, its caption and
        the folded table; its plain text (``str(fig.text)``) is the table.

    Raises:
        ValueError: no series, or a series whose length differs from ``x``.
    """
    if not series:
        raise ValueError("line_plot needs at least one series")
    length = len(next(iter(series.values())))
    xs = list(range(length)) if x is None else list(x)
    for name, ys in series.items():
        if len(ys) != len(xs):
            raise ValueError(f"series {name!r} has {len(ys)} values for {len(xs)} x values")
    suffix = f" ({unit})" if unit else ""
    if not purpose.strip():
        raise ValueError("line_plot needs a purpose: what a reader looks at the plot for")
    # the alt text describes the numbers as the table shows them (to 4 digits), so that both say the same
    shown = {name: [float(_number(y).replace(",", "")) for y in ys] for name, ys in series.items()}
    alt = f"{title}: {ylabel} against {xlabel}. {purpose.strip()} " + " ".join(
        describe_series(name, xs, ys, unit) for name, ys in shown.items()
    )
    header = [xlabel, *(f"{name}{suffix}" for name in series)]
    rows = [[str(xv), *(_number(ys[i]) for ys in series.values())] for i, xv in enumerate(xs)]
    svg = _svg(series, xs, xlabel, ylabel, title, step)
    return Figure(
        svg,
        alt,
        caption,
        details_html=_table_html(header, rows),
        text=text_table([header, *rows], align="<>"),
        details_summary="Text version: the numbers plotted",
    )


def heatmap(
    matrix: Sequence[Sequence[float]],
    row_labels: Sequence[str],
    column_labels: Sequence[str],
    *,
    title: str,
    caption: str = "",
) -> Figure:
    """A matrix (a Jacobian, a Hessian) as a grid of coloured cells, each with its value written in it,
    and its text alternative: the alt text names the shape and the largest entry, the table the numbers.

    Args:
        matrix: rows of numbers (a list of lists, or a 2-D tensor's ``.tolist()``), ``len(row_labels)`` rows
            of ``len(column_labels)`` values.
        row_labels, column_labels: what each row and column stands for (``"g0"``, ``"x1"``).
        title: the picture's title (it opens the alt text); caption: a visible caption under it.

    Raises:
        ValueError: the matrix's shape differs from the labels'.
    """
    rows = [list(map(float, r)) for r in matrix]
    if len(rows) != len(row_labels) or any(len(r) != len(column_labels) for r in rows):
        raise ValueError(f"heatmap: {len(row_labels)} x {len(column_labels)} labels for a matrix of other shape")
    import matplotlib
    from matplotlib.figure import Figure as MatplotlibFigure

    with matplotlib.rc_context(_STYLE):
        fig = MatplotlibFigure(figsize=(1.6 + 0.9 * len(column_labels), 1.2 + 0.7 * len(row_labels)))
        ax = fig.subplots()
        bound = max((abs(v) for r in rows for v in r), default=1.0) or 1.0
        image = ax.imshow(rows, cmap="RdBu_r", vmin=-bound, vmax=bound)  # white at 0, red > 0, blue < 0
        for i, r in enumerate(rows):
            for j, v in enumerate(r):
                ax.text(
                    j,
                    i,
                    _number(round(v, 3)),
                    ha="center",
                    va="center",
                    color="white" if abs(v) > 0.6 * bound else "black",
                )
        ax.set_xticks(range(len(column_labels)), list(column_labels))
        ax.set_yticks(range(len(row_labels)), list(row_labels))
        ax.set_title(title)
        fig.colorbar(image, ax=ax, shrink=0.8)
        svg = _svg_text(fig, fit=True)
    i, j = max(
        ((i, j) for i in range(len(rows)) for j in range(len(column_labels))), key=lambda ij: abs(rows[ij[0]][ij[1]])
    )
    alt = (
        f"{title}: a {len(rows)} by {len(column_labels)} grid, rows {', '.join(row_labels)}, columns "
        f"{', '.join(column_labels)}; the largest entry in size is {_number(round(rows[i][j], 3))} at "
        f"{row_labels[i]}, {column_labels[j]}."
    )
    header = ["", *column_labels]
    table = [[label, *(_number(round(v, 4)) for v in r)] for label, r in zip(row_labels, rows, strict=True)]
    return Figure(
        svg,
        alt,
        caption,
        details_html=_table_html(header, table),
        text=text_table([header, *table], align="<>"),
        details_summary="Text version: the numbers in the grid",
    )


def timeline(
    lanes: Mapping[str, Sequence[tuple[float, float, str]]],
    ticks: Sequence[str],
    *,
    xlabel: str,
    title: str,
    caption: str = "",
) -> Figure:
    """What ran when, one lane per worker (the engine computing gradients, the all-reduces of DDP's buckets):
    each bar spans from its start to its end, labelled, and the same bars as a table.

    Args:
        lanes: ``{"backward": [(0, 1, "2.bias"), ...], "all-reduce": [(4, 7, "bucket 0"), ...]}``: each bar's
            start and end on the x axis and its label; lanes are drawn top to bottom in this order.
        ticks: the x axis's labels at 0, 1, 2, ... (the events that start and end the bars).
        xlabel, title: the axis label and the picture's title (it opens the alt text); caption: under it.

    Raises:
        ValueError: no lanes, or a bar that ends before it starts or outside the ticks.
    """
    bars = [(lane, start, end, label) for lane, spans in lanes.items() for start, end, label in spans]
    if not lanes or any(not 0 <= start <= end <= len(ticks) - 1 for _, start, end, _ in bars):
        raise ValueError("timeline: every bar must start and end on the ticks, its end not before its start")
    import matplotlib
    from matplotlib.figure import Figure as MatplotlibFigure

    with matplotlib.rc_context(_STYLE):
        fig = MatplotlibFigure(figsize=(7.2, 1.6 + 0.6 * len(lanes)))
        ax = fig.subplots()
        colours = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
        for row, spans in enumerate(lanes.values()):
            y = len(lanes) - 1 - row
            for start, end, label in spans:
                colour = colours[row % len(colours)]
                ax.broken_barh([(start, end - start)], (y - 0.35, 0.7), color=colour, alpha=0.75, edgecolor="white")
                ax.text((start + end) / 2, y, label, ha="center", va="center", fontsize=9)
        ax.set_yticks(range(len(lanes)), list(reversed(list(lanes))))
        ax.set_xticks(range(len(ticks)), list(ticks), rotation=30, ha="right")
        ax.set_xlim(-0.2, len(ticks) - 0.8)
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(axis="x", alpha=0.3)
        svg = _svg_text(fig, fit=True)
    alt = f"{title}. " + " ".join(
        f"{lane}: " + "; ".join(f"{label} from {ticks[int(a)]} to {ticks[int(b)]}" for a, b, label in spans) + "."
        for lane, spans in lanes.items()
    )
    header = ["lane", "bar", "from", "to"]
    rows = [[lane, label, ticks[int(start)], ticks[int(end)]] for lane, start, end, label in bars]
    return Figure(
        svg,
        alt,
        caption,
        details_html=_table_html(header, rows),
        text=text_table([header, *rows]),
        details_summary="Text version: the bars",
    )
