"""The feedback page as HTML, written directly: every text that came from a submission is escaped.

Nothing a learner's process sent, and nothing a student's folder is named, is read as markdown or
HTML: outputs, error messages, verdicts, the summary's lines and the code are escaped text in
``<pre>`` or table cells, so the page holds no tag, attribute or link of theirs and costs time
linear in what it shows (a markdown renderer is quadratic on a long run of ``[``). Only the
instructor's own markdown cells (from the source notebook) are rendered as markdown, maths as
MathML, once per distinct text. Images are PNG or JPEG data URLs whose payload is checked to be
base64. A ``Content-Security-Policy`` forbids scripts, frames and every load but those data URLs,
a second wall should anything slip through. Redaction is the last step: every text on the page
passes ``redact.scrub`` against the hidden tests' lines. The page is at most :data:`MAX_PAGE`
characters: cells past it are left out with a note (the summary always comes first).
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from functools import lru_cache
from pathlib import Path

import nbformat

from .redact import scrub

__all__ = ["CSP", "MAX_PAGE", "MAX_SOURCE", "page"]

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
MAX_PAGE = 6_000_000  # characters of one page
MAX_SOURCE = 100_000  # characters of one cell's code shown
_STYLE = (Path(__file__).parents[1] / "templates" / "offline" / "style.css").read_text(encoding="utf-8")
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
_IMAGE_BYTES = 2_000_000  # an image bigger than this is not shown


def _e(text: str, secret: set[str]) -> str:
    """``text`` redacted (the last step), then escaped for HTML text and attribute values."""
    return html.escape(scrub(text, secret), quote=True)


@lru_cache(maxsize=512)
def _markdown(source: str) -> str:
    """The instructor's markdown (a source notebook's cell) as HTML, maths as MathML."""
    from nbconvert.filters.markdown_mistune import MarkdownWithMath

    from .offline_html import MathMLRenderer

    return MarkdownWithMath(renderer=MathMLRenderer(escape=False)).render(source)


def _image(mime: str, data: str) -> str:
    payload = "".join(data.split())
    if len(payload) > _IMAGE_BYTES * 4 // 3 or not _BASE64.fullmatch(payload):
        return '<div class="note">(an image that cannot be shown)</div>'
    try:
        base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return '<div class="note">(an image that cannot be shown)</div>'
    return f'<img alt="output" src="data:{mime};base64,{payload}">'


def _output(out: dict, secret: set[str]) -> str:
    kind = out.get("output_type")
    if kind == "stream":
        css = "output_stderr" if out.get("name") == "stderr" else "output_stdout"
        body = (
            f'<div class="output_subarea output_stream {css}"><pre>{_e(str(out.get("text", "")), secret)}</pre></div>'
        )
    elif kind == "error":
        lines = out.get("traceback") or [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
        body = f'<div class="output_subarea output_error"><pre>{_e(chr(10).join(map(str, lines)), secret)}</pre></div>'
    else:
        data = out.get("data") or {}
        image = next((m for m in ("image/png", "image/jpeg") if isinstance(data.get(m), str)), None)
        if image:
            body = f'<div class="output_subarea output_png">{_image(image, data[image])}</div>'
        else:
            text = _e(str(data.get("text/plain", "")), secret)
            body = f'<div class="output_subarea output_text"><pre>{text}</pre></div>'
    return f'<div class="output_area"><div class="prompt"></div>{body}</div>'


def _cell(cell, secret: set[str]) -> str:
    if cell.get("cell_type") == "markdown":  # only the source's: assemble takes none from a submission
        return f'<div class="cell text_cell"><div class="inner_cell rendered_html">{_markdown(cell.source)}</div></div>'
    if cell.get("cell_type") != "code":
        return ""
    source = cell.get("source", "")
    if len(source) > MAX_SOURCE:
        source = source[:MAX_SOURCE] + f"\n# ... (cut: a cell shows at most {MAX_SOURCE:,} characters)"
    count = cell.get("execution_count")
    prompt = f"In&nbsp;[{count}]:" if isinstance(count, int) else "In&nbsp;[&nbsp;]:"
    outputs = "".join(_output(o, secret) for o in cell.get("outputs", []) if isinstance(o, dict))
    code = f"<pre>{_e(source, secret)}</pre>"
    jupyter = cell.get("metadata", {}).get("jupyter", {})
    if isinstance(jupyter, dict) and jupyter.get("source_hidden"):  # a source's check helpers: folded, as in JupyterLab
        code = f"<details><summary>{_e(source.partition(chr(10))[0], secret)}</summary>{code}</details>"
    return (
        f'<div class="cell code_cell"><div class="input"><div class="prompt">{prompt}</div>'
        f'<div class="inner_cell"><div class="input_area">{code}</div></div></div>'
        f'<div class="output_wrapper">{outputs}</div></div>'
    )


def page(title: str, summary: str, nb: nbformat.NotebookNode, secret: set[str]) -> str:
    """The whole page (str): ``title`` (text), ``summary`` (HTML already built from escaped
    parts), then ``nb``'s cells, each text redacted against ``secret`` and escaped; cells past
    :data:`MAX_PAGE` characters are replaced by one note."""
    head = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1.0">\n'
        f"<title>{_e(title, secret)}</title>\n<style>\n{_STYLE}</style>\n</head>\n"
        f'<body>\n<main id="notebook">\n{summary}\n'
    )
    parts, size = [head], len(head)
    for cell in nb.cells:
        text = _cell(cell, secret)
        if size + len(text) > MAX_PAGE:
            parts.append(
                f'<div class="note">(the rest of the notebook is not shown: a feedback page holds at most '
                f"{MAX_PAGE:,} characters)</div>"
            )
            break
        parts.append(text)
        size += len(text)
    parts.append("\n</main>\n</body>\n</html>\n")
    return "".join(parts)
