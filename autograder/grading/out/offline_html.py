"""Feedback pages that a learner can read offline: an nbconvert HTML exporter whose template loads
nothing from the network (no MathJax, jQuery, require.js or mermaid) and whose markdown LaTeX
(``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``, ``\\begin{env}...\\end{env}``) becomes MathML
when the page is written; browsers render MathML natively. Both graders use it: our
``feedback.feedback_html`` and plain nbgrader's ``generate_feedback`` (see ``nbgrader_config.py``).
"""

from __future__ import annotations

import html
from pathlib import Path

from jinja2 import pass_context
from latex2mathml.converter import convert as _latex_to_mathml
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from traitlets import default

__all__ = ["OfflineHTMLExporter", "TEMPLATE_DIR", "TEMPLATE_NAME", "mathml"]

TEMPLATE_DIR = str(Path(__file__).parents[1] / "templates")  # holds the template folder below
TEMPLATE_NAME = "offline"


def mathml(latex: str, display: bool) -> str:
    """``latex`` as a MathML ``<math>`` element (str; ``display="block"`` when ``display``).
    LaTeX that latex2mathml cannot convert is shown as code, never dropped."""
    try:
        return _latex_to_mathml(latex, display="block" if display else "inline")
    except Exception:  # noqa: BLE001 (an unknown command must not cost the learner the page)
        delimiter = "$$" if display else "$"
        return f'<code class="tex">{html.escape(delimiter + latex + delimiter)}</code>'


class MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer, writing maths as MathML instead of text for MathJax."""

    def block_math(self, body: str) -> str:
        return mathml(body, display=True)

    def inline_math(self, body: str) -> str:
        return mathml(body, display=False)

    def latex_environment(self, name: str, body: str) -> str:
        return mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", display=True)


class OfflineHTMLExporter(HTMLExporter):
    """HTMLExporter with the course's ``offline`` template (one self-contained page, its styles
    inline, no scripts) and markdown maths converted to MathML."""

    @default("template_name")
    def _template_name_default(self):
        return TEMPLATE_NAME

    @default("extra_template_basedirs")
    def _extra_template_basedirs_default(self):
        return [TEMPLATE_DIR]

    @pass_context
    def markdown2html(self, context, source):
        """Markdown to HTML as HTMLExporter's filter does (which this overrides, so the template's
        ``markdown2html`` filter is this one), with maths as MathML."""
        cell = context.get("cell", {})
        renderer = MathMLRenderer(
            escape=False,
            attachments=cell.get("attachments", {}),
            embed_images=self.embed_images,
            path=context.get("resources", {}).get("metadata", {}).get("path", ""),
            anchor_link_text=self.anchor_link_text,
            exclude_anchor_links=self.exclude_anchor_links,
            **self.lexer_options,
        )
        return MarkdownWithMath(renderer=renderer).render(source)
