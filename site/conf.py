"""Sphinx configuration of the course's site (built by ``site/build.py``, ``./course site``).

Sphinx reads the staging copy that build.py writes (``-c site`` points here). Everything a page
loads is served from the site itself: the theme's assets are in its ``_static/``, maths is MathML
written at build time (``course_site``'s renderer, with latex2mathml as the feedback pages), and
no ipywidgets scripts are added (the explorers are shown as their saved output).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

project = "The PyTorch autograd graph, hands on"
author = ""  # no "By ..." line in the footer
html_show_copyright = False
root_doc = "notebooks/00_start"
extensions = ["myst_nb", "course_site"]
exclude_patterns = ["**.ipynb_checkpoints"]

# MyST-NB: show the committed outputs, never execute; no widget scripts from a CDN.
nb_execution_mode = "off"
nb_ipywidgets_js = {}
nb_merge_streams = True
# Tracebacks carry ANSI colours; the course's short CheckFailed messages are not IPython tracebacks.
nb_render_error_lexer = "myst-ansi"
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "html_image"]
myst_heading_anchors = 6
myst_heading_slug_func = "course_site.jupyter_anchor"  # links written for JupyterLab resolve here
myst_dmath_double_inline = True
suppress_warnings = ["mystnb.unknown_mime_type"]

html_theme = "sphinx_book_theme"
templates_path = ["_templates"]  # the theme's search button, named by its visible label (WCAG 2.5.3)
html_title = "The PyTorch autograd graph, hands on"
html_math_renderer = "mathml"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "home_page_in_toc": True,
    "navigation_with_keys": False,
}
smartquotes = False  # ids and text as JupyterLab has them (its heading anchors keep straight quotes)
