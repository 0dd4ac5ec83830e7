"""Fixed-width text tables: what the explorers print, readable in a terminal, by a screen reader
and by a test."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["text_table", "bar"]


def text_table(rows: Iterable[Sequence], align: str = "<", gap: int = 2) -> str:
    """``rows`` (the first one usually the header) as lines of columns, each as wide as its widest
    cell, separated by ``gap`` spaces; trailing spaces are removed.

    Args:
        rows: sequences of cells; each cell is shown as ``str(cell)``. Rows may differ in length.
        align: one character per column, ``"<"`` (left) or ``">"`` (right); the last character
            applies to the columns after it (``"<"``: all left, ``"<>"``: first left, rest right).

    Returns:
        The table as one string, lines joined by ``"\\n"`` (no trailing newline).
    """
    cells = [[str(c) for c in row] for row in rows]
    columns = max((len(r) for r in cells), default=0)
    widths = [max((len(r[i]) for r in cells if i < len(r)), default=0) for i in range(columns)]
    sides = [align[min(i, len(align) - 1)] for i in range(columns)]
    return "\n".join((" " * gap).join(f"{c:{sides[i]}{widths[i]}}" for i, c in enumerate(r)).rstrip() for r in cells)


def bar(value: float, top: float, width: int = 40) -> str:
    """A text bar of ``#``: ``width`` characters for ``top``, in proportion for ``value``
    (empty when ``top`` is 0)."""
    return "#" * (round(width * value / top) if top else 0)
