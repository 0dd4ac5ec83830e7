"""The warnings a pasted text holds, apart from its final error: Python prints a warning as
``file:line: CategoryWarning: message`` (then the warning's source line, indented), often above the traceback of
the error that followed. ``explain`` reads the error without them and explains each warning on its own, so that a
warning is neither lost under a known error nor taken for the error's cause."""

from __future__ import annotations

import re

__all__ = ["split_warnings"]

# Python's warning line (warnings.formatwarning), a Jupyter path form included; its source line follows, indented
_WARNING = re.compile(r"^(?P<where>\S[^\n]*?):(?P<line>\d+): (?P<category>\w*Warning): (?P<message>[^\n]*)$", re.M)


def split_warnings(text: str) -> tuple[str, list[str]]:
    """``(text without its warnings, each warning's message)``: a warning's block is its line and the indented
    lines under it (the source line Python quotes). Text without a warning line is returned as it is."""
    if not isinstance(text, str) or "Warning: " not in text:
        return text, []
    found, kept, lines, skipping = [], [], text.splitlines(keepends=True), False
    for line in lines:
        match = _WARNING.match(line.rstrip("\n"))
        if match:
            found.append(match["message"])
            skipping = True
            continue
        if skipping and line.startswith((" ", "\t")) and line.strip():
            if not line.lstrip().startswith("File "):
                continue
        skipping = False
        kept.append(line)
    return "".join(kept), found
