"""The course's static site (``./course site``, ``site/build.py``): built once per session from the
committed notebooks into a temporary folder, then read as a reader's browser reads it.

The build is the first check: Sphinx runs with ``-W --keep-going -n`` (a broken cross-reference, a
missing image, maths latex2mathml cannot convert fails it), and within two minutes. Then the built
files: no hidden test and no solution line anywhere in them, nothing loaded from outside the site,
every internal link and anchor resolves, every page says how to run it and links to its notebook
in ``./course lab``, explorers show their saved output, maths is MathML, one page per chapter's
summary, the search index holds every page. The browser test (marked ``browser``) walks the site
in headless Chromium by its own "next" links with every request outside the site refused, and
saves a screenshot of each page under ``test-artifacts/site/``.
"""

from __future__ import annotations

import contextlib
import functools
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from autograder.grading.out.redact import hidden_lines
from autograder.kinds.table import KINDS
from tests.measure import children_cpu_seconds

REPO = Path(__file__).resolve().parents[1]
LAB_URL = "http://localhost:8888/lab/tree/"
START = REPO / "notebooks" / "00_start.ipynb"
LESSONS = sorted(p for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb") if p != START)
EXERCISES = sorted((REPO / "exercises").glob("*/*.ipynb"))
SOLUTION = re.compile(r"^[ \t]*### BEGIN SOLUTION.*?^[ \t]*### END SOLUTION[^\n]*$", re.MULTILINE | re.DOTALL)
BUILD_LIMIT_S = 120  # CPU seconds of ./course site and all it starts (a busy machine's wall time is no bound)
ARTIFACTS = REPO / "test-artifacts" / "site"
# What a page loads (as opposed to links it shows): these tags' attributes, and <link> by its rel.
LOADED = {"script": "src", "img": "src", "source": "src", "iframe": "src", "video": "src", "audio": "src",
          "embed": "src", "object": "data", "track": "src", "image": "href", "use": "href"}  # fmt: skip
LOADED_LINK_RELS = {
    "stylesheet",
    "icon",
    "preload",
    "modulepreload",
    "prefetch",
    "preconnect",
    "manifest",
    "dns-prefetch",
}


def page_of(notebook: Path) -> str:
    """The site's page of a notebook, relative to the site's root."""
    return notebook.relative_to(REPO).with_suffix(".html").as_posix()


@dataclass
class Page:
    """What a built HTML page holds: its text (lines as shown), the URLs it loads and links to, its ids."""

    text: str = ""
    loads: list[tuple[str, str]] = field(default_factory=list)  # (tag, url)
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (tag, url, class)
    ids: set[str] = field(default_factory=set)
    styles: list[str] = field(default_factory=list)  # <style> blocks and style attributes


class _Parser(HTMLParser):
    BLOCK = frozenset(
        {"p", "div", "li", "tr", "br", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "section", "table", "dt", "dd"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page, self.chunks, self.skip, self.in_style = Page(), [], 0, False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in self.BLOCK:
            self.chunks.append("\n")
        if tag in ("script", "style"):
            self.skip += 1
            self.in_style = tag == "style"
        if "id" in attrs:
            self.page.ids.add(attrs["id"])
        if attrs.get("style"):
            self.page.styles.append(attrs["style"])
        for name in ("src", "href", "data", "xlink:href", "srcset"):
            value = attrs.get(name)
            if value is None:
                continue
            rels = set((attrs.get("rel") or "").split())
            if (
                (LOADED.get(tag) == name.removeprefix("xlink:"))
                or name == "srcset"
                or (tag == "link" and rels & LOADED_LINK_RELS)
            ):
                for url in value.split(",") if name == "srcset" else [value]:
                    self.page.loads.append((tag, url.strip().split(" ")[0]))
            elif name == "href":
                self.page.links.append((tag, value, attrs.get("class") or ""))

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skip -= 1
        if tag in self.BLOCK:
            self.chunks.append("\n")

    def handle_data(self, data):
        if self.skip and self.in_style:
            self.page.styles.append(data)
        if not self.skip:
            self.chunks.append(data)


def parse(path: Path) -> Page:
    parser = _Parser()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.page.text = "".join(parser.chunks)
    return parser.page


def _lines(text: str) -> set[str]:
    return {line.strip() for line in text.split("\n") if line.strip()}


def public_lines() -> set[str]:
    """Every line a learner is given anyway: the lessons' and the releases' sources and outputs, the README."""
    lines = _lines((REPO / "README.md").read_text(encoding="utf-8"))
    for path in [START, *LESSONS, *EXERCISES]:
        for cell in nbformat.read(path, as_version=4).cells:
            lines |= _lines(cell.source)
            for out in cell.get("outputs", []):
                lines |= _lines(str(out.get("text", "")))
                lines |= _lines("\n".join(str(v) for v in out.get("data", {}).values()))
                lines |= _lines("\n".join(out.get("traceback", [])))
    return lines


def secret_lines() -> set[str]:
    """The lines of the hidden tests and of the solution regions (``### BEGIN SOLUTION``) of every
    source notebook in ``solutions/`` that no lesson, release or README line also holds (in full or
    as a part)."""
    secret = set()
    for path in sorted((REPO / "solutions").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        secret |= hidden_lines(nb)
        for cell in nb.cells:
            for region in SOLUTION.finditer(cell.source):
                secret |= _lines("\n".join(region[0].split("\n")[1:-1]))
    public = "\n".join(public_lines())  # a line in a public line (a docstring that quotes it) is public
    return {line for line in secret if re.search(r"\w", line) and line not in public}


def leaks(texts: dict[str, str], secret: set[str]) -> list[tuple[str, str]]:
    """(file, secret line) for every line of ``texts`` that is a secret line, or that holds a
    secret line of 20 characters or more."""
    long = [s for s in secret if len(s) >= 20]
    found = []
    for name, text in texts.items():
        for line in _lines(text):
            hits = [line] if line in secret else [s for s in long if s in line]
            found += [(name, hit) for hit in hits]
    return found


@dataclass
class Site:
    root: Path
    seconds: float
    log: str

    def pages(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*.html") if "_static" not in p.relative_to(self.root).parts)


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Site:
    """The site, built into a temporary folder by ``./course site --out DIR`` as typed, in a copy
    of the course (``.venv`` linked, so its set-up finds everything installed); where the course
    was not set up by ``./course`` (no stamp), by ``site/build.py``, which ``./course site`` runs."""
    from tests.test_browser import course_copy

    folder = tmp_path_factory.mktemp("course-site")
    out = folder / "site"
    if (REPO / ".venv" / ".course-installed").is_file():
        command, cwd = ["./course", "site", "--out", str(out)], course_copy(folder / "course")
    else:
        command, cwd = [sys.executable, "site/build.py", "--out", str(out)], REPO
    cpu = children_cpu_seconds()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    seconds = children_cpu_seconds() - cpu
    log = done.stdout + done.stderr
    if done.returncode:
        pytest.fail(f"{' '.join(command[:2])} failed (exit {done.returncode}):\n{log[-6000:]}")
    return Site(out, seconds, log)


def test_the_site_builds_with_no_warning_in_under_two_minutes_of_cpu(site):
    assert site.seconds < BUILD_LIMIT_S, f"the build took {site.seconds:.0f} CPU s"
    assert "WARNING" not in site.log
    assert (site.root / "index.html").is_file()
    assert 'url=notebooks/00_start.html"' in (site.root / "index.html").read_text(encoding="utf-8")


def test_every_lesson_and_exercise_is_a_page_listed_in_course_order(site):
    start = parse(site.root / "notebooks" / "00_start.html")
    expected = [page_of(p) for p in [*LESSONS, *EXERCISES]]
    listed = []
    for _tag, url, _cls in start.links:
        target = (site.root / "notebooks" / urlsplit(url).path).resolve()
        name = target.relative_to(site.root.resolve()).as_posix() if target.is_relative_to(site.root.resolve()) else ""
        if name in expected and name not in listed:
            listed.append(name)
    assert listed == expected
    assert all((site.root / name).is_file() for name in expected)
    assert not list(site.root.rglob("*solution*")), "no page comes from solutions/"


def test_no_hidden_test_or_solution_line_reaches_the_site(site):
    secret = secret_lines()
    assert len(secret) > 100  # the solutions' own lines: the check below has something to find
    texts = {}
    for path in site.root.rglob("*"):
        if path.suffix == ".html":
            texts[path.name] = parse(path).text
        elif path.is_file() and path.suffix in {".js", ".txt", ".ipynb", ".md", ".json", ".inv"}:
            texts[path.name] = path.read_text(encoding="utf-8", errors="replace")
    assert leaks(texts, secret) == []


def test_the_leak_check_finds_a_solution_line_put_into_a_page(tmp_path):
    secret = secret_lines()
    line = max(secret, key=len)  # as Pygments writes code: split into spans, escaped
    (tmp_path / "page.html").write_text(
        f'<pre><span class="n">{html.escape(line[:10])}</span>{html.escape(line[10:])}</pre>'
    )
    assert leaks({"page.html": parse(tmp_path / "page.html").text}, secret) == [("page.html", line)]


def _remote(url: str) -> bool:
    parts = urlsplit(url.strip())
    return bool(parts.netloc) or (parts.scheme not in ("", "data"))


def test_nothing_is_loaded_from_outside_the_site(site):
    remote = []
    css_remote = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"]?)\s*(?:https?:)?//""", re.IGNORECASE)
    for path in site.pages():
        page = parse(path)
        remote += [(path.name, tag, url) for tag, url in page.loads if _remote(url)]
        remote += [(path.name, "style", style[:80]) for style in page.styles if css_remote.search(style)]
    for css in site.root.rglob("*.css"):
        remote += [(css.name, "css", m[0]) for m in css_remote.finditer(css.read_text(encoding="utf-8"))]
    assert remote == []
    assert not list(site.root.rglob("*mathjax*")), "maths is MathML: no MathJax"


def test_every_internal_link_image_and_anchor_resolves(site):
    broken = []
    ids = {}
    for path in site.pages():
        page = parse(path)
        ids[path.resolve()] = page.ids
    for path in site.pages():
        page = parse(path)
        for tag, url, _cls in [(t, u, "") for t, u in page.loads] + page.links:
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or url.startswith("data:"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path.resolve()
            if not target.exists():
                broken.append((path.relative_to(site.root).as_posix(), tag, url))
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in ids[target]:
                broken.append((path.relative_to(site.root).as_posix(), tag, url))
    assert broken == []


def test_the_explainers_lesson_links_land_on_their_sections(site):
    lesson = parse(site.root / "notebooks" / "03_backward_consumes.html")
    links = [url for _t, url, _c in lesson.links if "#6.-Pitfalls" in url]
    assert links, "the explainer's output in lesson 3 links to its Pitfalls section"
    assert all(url.startswith("../notebooks/03_backward_consumes.html#") for url in links)


@pytest.mark.parametrize("notebook", [START, *LESSONS, *EXERCISES], ids=lambda p: p.stem)
def test_every_notebook_page_says_how_to_run_it_and_opens_it_in_the_lab(site, notebook):
    page = parse(site.root / page_of(notebook))
    relpath = notebook.relative_to(REPO).as_posix()
    assert "./course lab" in page.text and "./course test" in page.text
    opens = [url for tag, url, cls in page.links if "open-in-lab" in cls.split()]  # the banner's link
    buttons = [url for tag, url, cls in page.links if "btn-lab" in cls.split()]  # the header's button
    assert opens == buttons == [LAB_URL + relpath]


def test_the_guide_pages_say_how_to_run_the_course(site):
    for name in ["explainer", "instructors", "summaries", "summary_01"]:
        page = parse(site.root / "guide" / f"{name}.html")
        assert "./course lab" in page.text, name
        assert [url for _t, url, cls in page.links if "btn-lab" in cls.split()] == [
            LAB_URL + "notebooks/00_start.ipynb"
        ]


def _saved_explorer_text(nb) -> list[str]:
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    lines = []
    for model in state.values():
        if model.get("model_name") == "OutputModel":
            for out in model["state"].get("outputs", []):
                lines += [line.strip() for line in out.get("text", "").split("\n") if line.strip()]
    return lines


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_each_explorer_shows_what_it_printed_when_the_lesson_was_saved(site, lesson):
    nb = nbformat.read(lesson, as_version=4)
    saved = _saved_explorer_text(nb)
    assert saved, "the lesson was saved with its explorer's output"
    markup = (site.root / page_of(lesson)).read_text(encoding="utf-8")
    assert markup.count('class="static-widget"') == sum(
        "application/vnd.jupyter.widget-view+json" in out.get("data", {})
        for c in nb.cells
        for out in c.get("outputs", [])
    )
    text = _lines(parse(site.root / page_of(lesson)).text)
    assert [line for line in saved if line not in text] == []
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    controls = [m["state"]["description"] for m in state.values() if m["state"].get("description")]
    notes = " ".join(line for line in text if "In JupyterLab this cell shows controls" in line)
    assert controls and [c for c in controls if f"{c} = " not in notes] == []
    assert "widget-state" not in markup and "require.js" not in markup


def test_maths_is_mathml_written_when_the_site_is_built(site):
    with_maths = [
        p
        for p in [START, *LESSONS]
        if any("$" in c.source for c in nbformat.read(p, 4).cells if c.cell_type == "markdown")
    ]
    assert len(with_maths) > 5
    for notebook in with_maths:
        markup = (site.root / page_of(notebook)).read_text(encoding="utf-8")
        assert "<math" in markup, notebook.name
        assert 'class="tex"' not in markup  # what latex2mathml could not convert
        assert "\\(" not in parse(site.root / page_of(notebook)).text


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_each_chapter_has_a_summary_page(site, lesson):
    chapter = int(lesson.name[:2])
    page = parse(site.root / "guide" / f"summary_{chapter:02d}.html")
    markdown = "\n".join(c.source for c in nbformat.read(lesson, 4).cells if c.cell_type == "markdown")
    summary = re.search(r"^## Summary\s*$(.*?)(?=^## |\Z)", markdown, re.MULTILINE | re.DOTALL)[1]
    first = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", summary.strip().split("\n\n")[0]).split("$")[0]
    first = re.sub(r"`([^`]*)`", lambda m: m[1].replace("*", "\0"), first)  # a star in code stays
    words = " ".join(re.sub(r"^\s*(\d+\.|[-*])\s", "", first).replace("*", "").replace("\0", "*").split()[:6])
    assert words in " ".join(page.text.split())
    assert any(url == f"../notebooks/{lesson.stem}.html" for _t, url, _c in page.links)


def test_the_search_index_holds_every_page(site):
    text = (site.root / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    expected = {p.relative_to(REPO).with_suffix("").as_posix() for p in [START, *LESSONS, *EXERCISES]}
    assert expected <= set(index["docnames"])
    assert {"accumulategrad", "checkpoint", "hook"} <= set(index["terms"])


def test_the_instructor_and_explainer_pages_hold_the_readme_sections(site):
    instructors = parse(site.root / "guide" / "instructors.html").text
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "What a submission can and cannot do" in instructors and "How a submission runs" in instructors
    assert "<table" in (site.root / "guide" / "instructors.html").read_text(encoding="utf-8")
    assert "JupyterHub" in instructors and "JupyterHub" in readme
    explainer = parse(site.root / "guide" / "explainer.html").text
    assert [kind for kind in KINDS if kind not in explainer] == []


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # not a line per file on the test's output
        pass


# --- In a browser --------------------------------------------------------------------------------

# In each page: images that did not load, maths that takes no room, the lab link.
PAGE_PROBE = """() => ({
    brokenImages: [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src.slice(0, 80)),
    images: document.images.length,
    maths: document.querySelectorAll('math').length,
    flatMaths: [...document.querySelectorAll('math')].filter(m => m.getBoundingClientRect().height < 4).length,
    lab: [...document.querySelectorAll('a.open-in-lab')].map(a => a.href),
    next: (document.querySelector('a.right-next') || {}).href || null,
})"""


def _need_browser() -> None:
    """Skip, saying why, without Playwright or Chromium (fail where COURSE_REQUIRE_BROWSER is set)."""
    from tests.test_browser import _missing

    reason = _missing()
    if reason and os.environ.get("COURSE_REQUIRE_BROWSER"):
        pytest.fail(f"COURSE_REQUIRE_BROWSER is set, but {reason}")
    if reason:
        pytest.skip(reason)


@contextlib.contextmanager
def _served(folder: Path):
    """``folder`` served on loopback as any web server serves it; yields its root URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.browser
def test_no_page_of_the_site_has_a_serious_wcag_violation(site):
    """Does axe-core find no serious or critical WCAG 2.0/2.1 A or AA violation on any page of the
    site, its folded sections opened (their content is read too)? Lesser ones are printed."""
    _need_browser()
    from playwright.sync_api import sync_playwright

    from tests.accessibility import audit, print_lesser
    from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT

    pages = [p.relative_to(site.root).as_posix() for p in site.pages()]
    found, lesser = [], []
    with _served(site.root) as root, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            for name in pages:
                page.goto(f"{root}/{name}")
                if name == "index.html":  # it moves on to the start page
                    page.wait_for_url("**/notebooks/00_start.html")
                page.wait_for_load_state("load")
                serious, less = audit(page, name)
                found, lesser = found + serious, lesser + less
        finally:
            browser.close()
    print_lesser(lesser)
    assert len(pages) > 40, pages
    assert found == []


# The theme's page furniture before course_site and site/_templates named it: a search button whose
# name leaves out its visible "Ctrl+K", and a navigation toggle with nothing but an icon.
THEME_NAV = """<nav aria-label="Main"><ul><li class="has-children"><a href="a.html">Summaries</a><details>
<summary><span class="toctree-toggle" role="presentation"><i class="fa-solid fa-chevron-down"></i></span></summary>
<ul><li><a href="b.html">b</a></li></ul></details></li></ul></nav>"""
THEME_BUTTON = '<button aria-label="Search"><span>Search</span> <kbd>Ctrl</kbd>+<kbd>K</kbd></button>'


@pytest.mark.browser
def test_the_accessibility_check_fails_on_the_themes_two_findings_and_the_fix_removes_them():
    """Would the site's axe check fail on a new serious violation? On the theme's search button and
    navigation toggle as they were, it finds both (label in name, a summary with no name); the
    same navigation as the site now writes it (``course_site._named_toggles``) and the button as
    ``site/_templates/search-button-field.html`` writes it have neither."""
    _need_browser()
    from jinja2 import Template
    from playwright.sync_api import sync_playwright

    from tests.accessibility import audit
    from tests.test_browser import CHROMIUM, CHROMIUM_ARGS

    sys.path.insert(0, str(REPO / "site"))
    try:
        import course_site
    finally:
        sys.path.remove(str(REPO / "site"))
    button = Template((REPO / "site" / "_templates" / "search-button-field.html").read_text()).render(_=str)

    def page_of(body: str) -> str:
        return f'<!doctype html><html lang="en"><head><title>t</title></head><body><main>{body}</main></body></html>'

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.set_content(page_of(THEME_NAV + THEME_BUTTON))
            before, _ = audit(page, "theme")
            page.set_content(page_of(course_site._named_toggles(THEME_NAV) + button))
            after, _ = audit(page, "site")
        finally:
            browser.close()
    assert {line.split(":")[1].split()[0] for line in before} == {"summary-name", "label-content-name-mismatch"}
    assert after == []


@pytest.mark.browser
def test_the_contrast_check_reading_one_element_per_style_still_finds_each_low_contrast_text():
    """Colour contrast is checked on one element of each text style (``tests.accessibility``): among
    hundreds of spans of good contrast, does it still find one pale span, and the same dark span
    class where it sits on a dark background (same class, another background: another style)?"""
    _need_browser()
    from playwright.sync_api import sync_playwright

    from tests.accessibility import CONTRAST, violations
    from tests.test_browser import CHROMIUM, CHROMIUM_ARGS

    good = '<span class="k">def</span> <span class="n">f</span>(x): ' * 150
    dark = '<span class="k">def</span> <span class="n">name</span> ' * 100
    body = (
        f'<pre style="color:#222;background:#fff">{good}<span style="color:#ccc">pale</span>{good}</pre>'
        f'<div style="background:#111"><pre>{dark}</pre></div>'
    )
    styles = "<style>.k{color:#005}.n{color:#333}</style>"
    head = f"<head><title>t</title>{styles}</head>"
    html_page = f'<!doctype html><html lang="en">{head}<body><main>{body}</main></body></html>'
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.set_content(html_page)
            found = [v for v in violations(page) if v["id"] == CONTRAST]
            on_main = [v for v in violations(page, "main") if v["id"] == CONTRAST]
        finally:
            browser.close()
    for result in (found, on_main):
        html_of = [node["html"] for v in result for node in v["nodes"]]
        assert any("pale" in h for h in html_of), html_of
        assert any('class="k"' in h for h in html_of) and any('class="n"' in h for h in html_of), html_of
        assert len(html_of) == 3, html_of  # one element per failing style, not each of their 300 twins


@pytest.mark.browser
def test_a_reader_walks_the_site_offline_from_the_home_page_by_its_links(site):
    """From index.html, served on loopback as any web server serves the folder, by each page's
    own "next" link, through every lesson, exercise, summary and guide page, with every request
    that leaves the site refused: each page's images load, its maths renders (MathML with a
    height), it links to its notebook in the lab; then a search with the theme's search field."""
    _need_browser()
    from playwright.sync_api import sync_playwright

    from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT

    if ARTIFACTS.exists():
        shutil.rmtree(ARTIFACTS)
    ARTIFACTS.mkdir(parents=True)
    outside, errors, visited, problems = [], [], [], []
    served = contextlib.ExitStack()
    root = served.enter_context(_served(site.root))

    def refuse(route) -> None:
        outside.append(route.request.url)
        route.abort()

    own = re.compile(rf"^(?:{re.escape(root)}/|data:|about:|blob:)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=VIEWPORT, service_workers="block")
            context.route(lambda url: not own.match(url), refuse)
            context.on("request", lambda r: None if own.match(r.url) else outside.append(r.url))
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{root}/index.html")
            page.wait_for_url("**/notebooks/00_start.html")
            while True:
                page.wait_for_load_state("load")
                name = page.url.removeprefix(root + "/").split("#")[0]
                if name in visited:
                    problems.append(f"{name}: visited twice (the next links loop)")
                    break
                visited.append(name)
                probe = page.evaluate(PAGE_PROBE)
                if probe["brokenImages"] or probe["flatMaths"]:
                    problems.append(f"{name}: {probe}")
                page.screenshot(path=str(ARTIFACTS / (name.removesuffix(".html").replace("/", "__") + ".png")))
                if name.startswith(("notebooks/", "exercises/")):
                    relpath = name.removesuffix(".html") + ".ipynb"
                    if probe["lab"] != [LAB_URL + relpath]:
                        problems.append(f"{name}: lab link {probe['lab']}")
                if not probe["next"]:
                    break
                page.click("a.right-next")
                page.wait_for_url(probe["next"])
            # Pictures worth a look: an explorer's saved output, display maths, a drawing.
            page.goto(f"{root}/notebooks/01_dynamic_graph.html")
            page.locator(".static-widget").first.locator(
                "xpath=ancestor::div[contains(@class,'cell_output')]"
            ).screenshot(path=str(ARTIFACTS / "explorer-lesson-01.png"))
            page.goto(f"{root}/notebooks/04_gradient_accumulation.html")
            page.locator("div.math").first.screenshot(path=str(ARTIFACTS / "maths-lesson-04.png"))
            page.goto(f"{root}/notebooks/03_backward_consumes.html")
            page.locator("math").first.locator("xpath=ancestor::p").screenshot(
                path=str(ARTIFACTS / "maths-lesson-03.png")
            )
            # The theme's search, offline: type into the search field, press Enter, read the results.
            page.goto(f"{root}/notebooks/00_start.html")
            page.keyboard.press("Control+k")
            page.keyboard.type("AccumulateGrad")
            page.keyboard.press("Enter")
            page.wait_for_url("**/search.html?q=AccumulateGrad*")
            page.wait_for_selector("#search-results li", timeout=30000)
            results = page.locator("#search-results li a").evaluate_all("links => links.map(a => a.href)")
            page.screenshot(path=str(ARTIFACTS / "search.png"))
        finally:
            browser.close()
            served.close()
    expected = [page_of(p) for p in [START, *LESSONS, *EXERCISES]]
    assert [name for name in visited if name in expected] == expected
    assert {"guide/summaries.html", "guide/explainer.html", "guide/instructors.html"} <= set(visited)
    assert problems == []
    assert sorted(set(outside)) == [], "the site asked the network for these"
    assert errors == []
    assert any(url.endswith("notebooks/01_dynamic_graph.html") for url in results)


def test_a_markdown_link_written_for_jupyterlab_resolves_on_the_site(tmp_path):
    """JupyterLab's heading anchors (``#2.-Two:-b``) in a lesson's markdown resolve under Sphinx's
    ``-n -W`` (the site's slug function is JupyterLab's), and a missing one fails the build."""
    source = tmp_path / "src" / "notebooks"
    source.mkdir(parents=True)
    toctree = "```{toctree}\n:hidden:\n\nother\n```"
    other = [nbformat.v4.new_markdown_cell("# Other\n\n## 1. One\n\nText.")]
    nbformat.write(nbformat.v4.new_notebook(cells=other), source / "other.ipynb")
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(REPO / "site"), "-W", "-n", "-q"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def build(links: str, out: str) -> subprocess.CompletedProcess:
        cells = [nbformat.v4.new_markdown_cell(f"# Start\n\n## 2. Two: `b`\n\n{links}\n\n{toctree}")]
        nbformat.write(nbformat.v4.new_notebook(cells=cells), source / "00_start.ipynb")
        return subprocess.run(
            [*command, str(tmp_path / "src"), str(tmp_path / out)], capture_output=True, text=True, env=env
        )

    done = build("See [two](#2.-Two:-b) and [one](other.ipynb#1.-One).", "ok")
    assert done.returncode == 0, done.stderr
    pages = {name: parse(tmp_path / "ok" / "notebooks" / f"{name}.html") for name in ("00_start", "other")}
    links = [urlsplit(url) for _t, url, cls in pages["00_start"].links if "reference internal" in cls]
    links = [link for link in links if link.fragment]
    targets = [(Path(link.path).stem or "00_start", link.fragment) for link in links]
    assert {"00_start", "other"} <= {name for name, _ in targets}
    assert all(fragment in pages[name].ids for name, fragment in targets)
    failed = build("See [nothing](#3.-Three).", "broken")
    assert failed.returncode != 0 and "3.-Three" in failed.stderr


def _build_module(repo: Path):
    """``site/build.py`` loaded as a module whose repository is ``repo``."""
    import importlib.util

    sys.path.insert(0, str(REPO / "site"))
    try:
        spec = importlib.util.spec_from_file_location("site_build_under_test", REPO / "site" / "build.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(REPO / "site"))
    module.REPO = repo
    return module


def test_answers_saved_in_an_exercise_never_reach_the_site(tmp_path, capsys):
    """A learner (or an instructor trying the course) saved answers into exercises/: the site shows
    the committed release, and the build says that the working copy differs."""
    repo = tmp_path / "course"
    release = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("# YOUR CODE HERE\nraise NotImplementedError()")]
    )
    path = repo / "exercises" / "ex01_graph" / "ex01_graph.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(release, path)
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "release"], check=True)
    answered = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def grad_wb(w, b, x, y):  # my answer")])
    nbformat.write(answered, path)
    shown = _build_module(repo).committed(path)
    assert shown.cells[0].source == release.cells[0].source
    assert "has changes that are not committed" in capsys.readouterr().err


def _folded(html_text: str) -> list[str]:
    """The text inside each closed ``<details>`` of a page's HTML (an ``open`` one is not folded)."""
    regions = re.findall(r"<details(?![^>]*\bopen\b)[^>]*>(.*?)</details>", html_text, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", " ", region)) for region in regions]


def test_a_going_deeper_section_is_folded_on_the_site_and_nothing_else_is(tmp_path):
    """A "Going deeper: ..." section (its subsections included) is shown as a closed ``<details>``
    under its visible heading; the core path before and after it is not folded."""
    source = tmp_path / "src" / "notebooks"
    source.mkdir(parents=True)
    cells = [
        nbformat.v4.new_markdown_cell("# Lesson\n\n## 1. Core\n\nCore words."),
        nbformat.v4.new_markdown_cell("## Going deeper: internals", metadata={"jp-MarkdownHeadingCollapsed": True}),
        nbformat.v4.new_markdown_cell("Deep words.\n\n### A subsection\n\nDeeper words."),
        nbformat.v4.new_code_cell("print('deep code')"),
        nbformat.v4.new_markdown_cell("## 2. Next\n\nNext words."),
    ]
    python = {"language_info": {"name": "python"}}  # code cells need a lexer
    nbformat.write(nbformat.v4.new_notebook(cells=cells, metadata=python), source / "00_start.ipynb")
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(REPO / "site"), "-W", "-n", "-q"]
    done = subprocess.run(
        [*command, str(tmp_path / "src"), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "out" / "notebooks" / "00_start.html").read_text(encoding="utf-8")
    (folded,) = _folded(page)
    assert all(words in folded for words in ("Deep words.", "A subsection", "Deeper words.", "deep code"))
    assert not any(words in folded for words in ("Core words.", "Next words.", "Going deeper: internals"))
    assert "Going deeper: internals" in parse(tmp_path / "out" / "notebooks" / "00_start.html").text


def test_each_lessons_going_deeper_sections_are_folded_on_its_page(site):
    """Every "Going deeper" heading of a lesson is on its page, followed by a closed ``<details>``."""
    problems = []
    for lesson in LESSONS:
        headings = [
            line.lstrip("#").strip()
            for cell in nbformat.read(lesson, as_version=4).cells
            if cell.cell_type == "markdown"
            for line in cell.source.splitlines()
            if re.match(r"#{1,6}\s+going deeper", line, re.I)
        ]
        page = (site.root / page_of(lesson)).read_text(encoding="utf-8")
        shown = len(re.findall(r"</h\d>\s*<details class=\"going-deeper\">", page))
        if shown != len(headings):
            problems.append(f"{lesson.name}: {len(headings)} Going deeper headings, {shown} folded sections")
    assert problems == []
