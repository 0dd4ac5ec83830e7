"""Remove hidden tests from everything a learner sees of a graded notebook: cell sources, error
tracebacks and any output line that quotes a hidden test's line. Used by both graders' feedback
(``feedback.feedback_notebook`` and, through ``nbgrader_plugins``, plain nbgrader's
``generate_feedback``)."""

from __future__ import annotations

import re

import nbformat

__all__ = ["BEGIN", "END", "HIDDEN_NOTE", "split_hidden", "hidden_lines", "scrub", "redact"]

# nbgrader's ClearHiddenTests markers: a line that contains BEGIN starts a hidden region, a line
# that contains END ends it (both marker lines belong to the region).
BEGIN, END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
HIDDEN_NOTE = "# (hidden tests ran here)"

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# How IPython quotes a source line in a traceback: "----> 12 code", "     13 code", "Cell In[3], line 5".
_TRACEBACK_PREFIX = re.compile(r"^\s*(?:-*>\s*)?\d+\s")  # linear: no nested spaces (a 100k-space line)


def split_hidden(source: str, note: str | None = HIDDEN_NOTE) -> tuple[list[str], list[str]]:
    """(visible lines, hidden lines) of a cell's source, split as nbgrader's ClearHiddenTests
    does; each hidden region leaves the line ``note`` (indented as its BEGIN marker) among the
    visible lines, or nothing when ``note`` is None (then the visible lines are the release's)."""
    visible, hidden, inside = [], [], False
    for line in source.split("\n"):
        if BEGIN in line and not inside:
            inside = True
            if note is not None:
                visible.append(line[: len(line) - len(line.lstrip())] + note)
            hidden.append(line)
        elif inside:
            hidden.append(line)
            inside = END not in line
        else:
            visible.append(line)
    return visible, hidden


def _is_test(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def hidden_lines(nb: nbformat.NotebookNode) -> set[str]:
    """The stripped lines of ``nb``'s hidden-test regions that say something (they hold a letter
    or digit) and that no visible part of the notebook also holds."""
    hidden, visible = set(), set()
    for cell in nb.cells:
        shown, secret = split_hidden(cell.get("source", ""))
        hidden.update(line.strip() for line in secret)
        visible.update(line.strip() for line in shown)
    return {line for line in hidden - visible if re.search(r"\w", line)}


def scrub(text: str, secret: set[str]) -> str:
    """``text`` without the lines that quote a line of ``secret`` (ANSI colours and traceback line
    numbers ignored), or that hold one of its longer lines anywhere (a learner's code may print the
    hidden test it is called from, with a prefix of its own)."""
    long = [s for s in secret if len(s) >= 12]

    def quotes(line: str) -> bool:
        plain = _ANSI.sub("", line)
        return _TRACEBACK_PREFIX.sub("", plain).strip() in secret or any(s in plain for s in long)

    return "\n".join(line for line in text.split("\n") if not quotes(line))


def redact(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove the hidden tests from ``nb`` in place and return it: each hidden region of a cell's
    source becomes the line ``# (hidden tests ran here)``; an error in a test cell keeps only
    ``Ename: message`` (a traceback quotes the lines around the failing one, hidden ones too);
    any other output line that quotes a hidden line (a traceback elsewhere, a warning's source
    line) is dropped."""
    secret = hidden_lines(nb)
    for cell in nb.cells:
        if BEGIN in cell.get("source", ""):
            cell.source = "\n".join(split_hidden(cell.source)[0])
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                if _is_test(cell):
                    out["traceback"] = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
                else:
                    out["traceback"] = [scrub(line, secret) for line in out.get("traceback", [])]
            elif out.get("output_type") == "stream":
                out["text"] = scrub(out.get("text", ""), secret)
            for mime, value in out.get("data", {}).items():
                if isinstance(value, str) and mime.startswith("text/"):
                    out["data"][mime] = scrub(value, secret)
    return nb
