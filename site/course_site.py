"""The course site's Sphinx extension: maths as MathML, and JupyterLab's heading anchors.

- ``html_math_renderer = "mathml"``: every ``$...$`` and ``$$...$$`` is written as a MathML
  ``<math>`` element when the page is built (``autograder.grading.out.offline_html.mathml``, the same
  conversion as the feedback pages), which browsers render without a script or the network. LaTeX
  that latex2mathml cannot convert is a build warning (so the build fails) and shows as code.
- Each page's header gets a button that opens its notebook (a guide page: the start page) in a
  running ``./course lab``, beside the theme's own buttons.
- Each section also gets the id JupyterLab gives its heading (its text with spaces as ``-``, see
  ``autograder.lessons``), so links written for JupyterLab (the explainer's "Lesson:" links,
  ``lesson.ipynb#3.-Title``) land on the same section of the page.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util import logging

from autograder.grading.out.offline_html import mathml

logger = logging.getLogger(__name__)


def _convert(node, display: bool) -> str:
    latex = node.astext()
    text = mathml(latex, display)
    if not text.startswith("<math"):
        logger.warning("maths that latex2mathml cannot convert: %r", latex, location=node)
    return text


def visit_math(self, node) -> None:
    self.body.append(f'<span class="math notranslate">{_convert(node, False)}</span>')
    raise nodes.SkipNode


def visit_math_block(self, node) -> None:
    # focusable: a wide equation scrolls sideways, and a scrolling region must be reachable by keyboard
    self.body.append(self.starttag(node, "div", CLASS="math notranslate", tabindex="0"))
    if node.get("number"):
        self.body.append(f'<span class="eqno">({node["number"]})</span>')
    self.body.append(_convert(node, True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def jupyter_anchor(heading: str) -> str:
    """JupyterLab's id of a heading of text ``heading`` (as rendered): spaces become ``-``. Also
    MyST's slug function here (``myst_heading_slug_func``), so that a markdown link written for
    JupyterLab (``[see](#3.-Title)``, ``[see](lesson.ipynb#3.-Title)``) resolves on the site too."""
    return heading.replace(" ", "-")


def jupyter_anchors(app, doctree) -> None:
    """Add JupyterLab's id of each section's heading to the section's ids."""
    taken = set(doctree.ids)
    for section in doctree.findall(nodes.section):
        titles = [child for child in section.children if isinstance(child, nodes.title)]
        if not titles:
            continue
        anchor = jupyter_anchor(titles[0].astext())
        if anchor not in taken:
            section["ids"].append(anchor)
            taken.add(anchor)


GOING_DEEPER = "going deeper"  # a heading starting with these words (any case) opens optional depth
FOLD_OPEN = '<details class="going-deeper"><summary>Optional: show this section</summary>\n'


def fold_going_deeper(app, doctree) -> None:
    """Fold the body of each "Going deeper: ..." section (everything under its heading, its own
    subsections included) into a closed ``<details>``."""
    for section in doctree.findall(nodes.section):
        titles = [i for i, child in enumerate(section.children) if isinstance(child, nodes.title)]
        if not titles or not section.children[titles[0]].astext().lower().startswith(GOING_DEEPER):
            continue
        section.insert(titles[0] + 1, nodes.raw("", FOLD_OPEN, format="html"))
        section.append(nodes.raw("", "</details>\n", format="html"))


LAB_URL = "http://localhost:8888/lab/tree/"  # ./course lab's default port and its server root


def lab_button(app, pagename, templatename, context, doctree) -> None:
    """Add "Open in JupyterLab" to sphinx-book-theme's header buttons of the page."""
    if doctree is None or "header_buttons" not in context:
        return
    notebook = pagename + ".ipynb" if context.get("page_source_suffix") == ".ipynb" else app.config.root_doc + ".ipynb"
    context["header_buttons"].insert(
        0,
        {
            "type": "link",
            "url": LAB_URL + notebook,
            "tooltip": f"Open {notebook} in the JupyterLab that ./course lab started",
            "icon": "fas fa-rocket",
            "text": "Open in JupyterLab",
            "label": "lab",
        },
    )


def _named_toggles(html: str) -> str:
    """The theme's navigation ``html`` with a name on each ``<summary>`` that shows or hides the pages
    under a link (the theme's holds only a decorative chevron, and a control needs a name: WCAG
    4.1.2): "Pages under <link text>"."""
    from bs4 import BeautifulSoup  # the theme's own dependency

    soup = BeautifulSoup(html, "html.parser")
    for summary in soup.select("li.has-children > details > summary"):
        if summary.get_text(strip=True) or summary.get("aria-label"):
            continue
        link = summary.find_parent("li").find("a", recursive=False)
        summary["aria-label"] = f"Pages under {link.get_text(' ', strip=True)}" if link else "Pages under this one"
    return str(soup)


def name_navigation_toggles(app, pagename, templatename, context, doctree) -> None:
    """Wrap the theme's ``generate_toctree_html`` (which its templates call for the side navigation)
    so that its disclosure toggles have names (:func:`_named_toggles`)."""
    generate = context.get("generate_toctree_html")
    if generate is None:
        return
    from markupsafe import Markup

    context["generate_toctree_html"] = lambda *args, **kwargs: Markup(_named_toggles(str(generate(*args, **kwargs))))


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_math_block, None))
    app.connect("doctree-read", jupyter_anchors)
    app.connect("doctree-read", fold_going_deeper)
    app.connect("html-page-context", lab_button, priority=502)  # after the theme's own buttons
    app.connect("html-page-context", name_navigation_toggles, priority=503)  # after the theme set it
    return {"parallel_read_safe": True, "parallel_write_safe": True}
