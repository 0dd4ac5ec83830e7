"""The widget shell every explorer uses: controls, an output area redrawn on each change, and a
plain-text form that says to run the cell."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import ipywidgets as widgets

__all__ = ["Explorer", "explorer"]


class Explorer(widgets.VBox):
    """The box an explorer returns: a ``VBox`` whose plain-text form says what it is. That text is
    what a notebook shows for the widget until its cell runs in a live kernel (a lesson just
    opened, GitHub, nbconvert), instead of ``VBox(children=(IntSlider(...), Output()))``."""

    def __init__(self, children, name: str):
        super().__init__(children)
        self.explorer_name = name

    def __repr__(self) -> str:
        return f"Interactive explorer ({self.explorer_name}): run this cell to use it."


def explorer(name: str, controls: Mapping[str, widgets.Widget], show: Callable[..., str | None]) -> Explorer:
    """An :class:`Explorer` named ``name``: the ``controls`` (one alone, several in a row) above an
    output area that is cleared and redrawn by ``show(**values)`` whenever a control changes
    (``values`` maps each key of ``controls`` to the control's value). What ``show`` prints or
    displays appears in the output area; a string it returns is printed.

    Example::

        explorer("leaf_explorer", {"detach": widgets.Checkbox(description="detach")},
                 lambda detach: leaf_table(detach=detach))
    """
    out = widgets.Output()

    def update(**values) -> None:
        out.clear_output(wait=True)
        with out:
            text = show(**values)
            if text is not None:
                print(text)

    widgets.interactive_output(update, dict(controls))
    boxes = list(controls.values())
    return Explorer([boxes[0] if len(boxes) == 1 else widgets.HBox(boxes), out], name)
