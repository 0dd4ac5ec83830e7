"""Not autograd's: a notebook's cells run out of order (the start page teaches them)."""

from __future__ import annotations

from .kind import Kind, taught

_SETUP_NAME = Kind(
    "notebook",
    "",
    taught(0, "How to use the course"),
    "{name} is defined by the notebook's set-up cell (the first code cell, which imports torch and "
    "the course's tools), and that cell has not run since the kernel started.",
    "Run the set-up cell first (the first code cell at the top of the notebook), then the cells "
    "above this one (Run > Run All Above Selected Cell), then this cell again.",
    types=("NameError",),
)
# Not autograd's, but the first error of many a notebook session: a cell run before the cell that
# defines what it uses (in an exercise, a check cell run before its answer cell).
KINDS: dict[str, Kind] = {}
KINDS["name_not_defined"] = Kind(
    "notebook",
    r"name '(?P<name>\w+)' is not defined",
    taught(0, "check an answer"),
    "{name} is not defined in this kernel (yet): the cell that defines it has not run since the kernel "
    "started (a restart forgets every name), or it raised before reaching the line that defines it.",
    "Run the cell that defines {name}, then this cell again: in a lesson, the cells above this one, top "
    "to bottom (Run > Run All Above Selected Cell); in an exercise, the set-up cell at the top, the "
    "question's answer cell and the code cell between its text and its answer, if it has one. If {name} "
    "is yours, check its spelling in the cell that defines it.",
    types=("NameError",),
)
KINDS["setup_not_run"] = _SETUP_NAME
# An exercise's check cell run before the folded cell of check helpers right above it.
KINDS["check_helpers_not_run"] = Kind(
    "notebook",
    "",
    taught(0, "How to check an answer"),
    "{name} is defined by this question's check helpers: the locked cell right above the check cell, "
    "shown folded (a bar with an ellipsis), which has not run since the kernel started.",
    "Run the check helpers (click the folded bar and press Shift-Enter; running the answer cell with "
    "Shift-Enter moves you there), then the check cell again. If {name} is a name of your own, check "
    "the cell that defines it.",
    types=("NameError",),
)
