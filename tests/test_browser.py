"""What a learner sees: the course in JupyterLab, in headless Chromium.

nbval checks what the notebooks print; these tests check what a learner sees in the browser. A
JupyterLab server starts on loopback with a fresh configuration, serving a temporary copy of the
course (so nothing is ever saved into the repository), and Chromium (Debian's ``chromium``
package, driven by Playwright's Python package) opens the start page and every lesson, runs all
cells and asserts: every cell ran and the kernel is idle at the end; no error output (nor anything
on stderr) outside the cells tagged ``raises-exception``; every explorer widget renders and
responds to one interaction; every graph drawing and plot is visible, and every drawing carries its
text version. A second test does an exercise as a learner would: a correct answer, then a typical
mistake, and reads what the check cell says each time.

Screenshots of each notebook go to ``test-artifacts/browser/`` (a long notebook is cut into several
pages: ``NAME.png``, ``NAME-2.png``, ...), with the server's log; under CI only a failure's
(``WHOLE_SCREENSHOTS``). Select or leave out these tests
with ``-m browser`` / ``-m "not browser"``. They skip, saying why, when Playwright or Chromium is
missing (``apt-get install chromium``; ``COURSE_CHROMIUM`` may point to another Chromium binary),
and fail instead when ``COURSE_REQUIRE_BROWSER`` is set, as in CI.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from autograder.grading.mistakes.ex01_graph import MISTAKES
from autograder.lessons import anchor_of_cell
from tests.course_lab import course_lab as course_lab_server
from tests.course_lab import free_port, stop
from tests.files import clone_files, fresh_jupyter_env

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts" / "browser"
CHROMIUM = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}
SCREENSHOT_PAGE = 15000  # pixels of notebook per screenshot (Chromium's limit is about 16000)
LESSONS = sorted(p.name for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
EXERCISE = "ex01_graph"
MISTAKE = "ex01-q2-sign"  # a typical mistake in question 2 (autograder/grading/mistakes/ex01_graph.py)


def _missing() -> str | None:
    if sync_playwright is None:
        return "Playwright is not installed: pip install -r requirements.txt"
    if not os.access(CHROMIUM, os.X_OK):
        return (
            f"Chromium is not installed at {CHROMIUM}: install it with `apt-get install chromium` "
            "(Debian/Ubuntu; .ci/run does), or set COURSE_CHROMIUM to a Chromium binary"
        )
    return None


pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def _browser_available():
    """Skip, saying why, without Playwright or Chromium; fail instead where COURSE_REQUIRE_BROWSER
    is set (.ci/run sets it, so that CI cannot pass by skipping these tests)."""
    reason = _missing()
    if reason and os.environ.get("COURSE_REQUIRE_BROWSER"):
        pytest.fail(f"COURSE_REQUIRE_BROWSER is set, but {reason}")
    if reason:
        pytest.skip(reason)


# JupyterLab user settings for the test: no news or update pop-ups over the screenshots, every
# cell attached to the page (not only those in view), and no autosave.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none", "scrollPastEnd": False},
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
}

# --- JavaScript run in the page (JupyterLab exposes its application as window.jupyterapp) ---------

NOTEBOOK_READY = """(path) => {
    const app = window.jupyterapp, w = app && app.shell.currentWidget;
    const s = w && w.sessionContext, k = s && s.session && s.session.kernel;
    return !!(w && w.content && w.context && w.context.path === path && w.context.isReady &&
              k && k.status === 'idle' && w.content.widgets.length > 0);
}"""
KERNEL_IDLE = """() => {
    const s = window.jupyterapp.shell.currentWidget.sessionContext;
    return !!(s.session && s.session.kernel && s.session.kernel.status === 'idle');
}"""
# The kernel is idle and no cell is running or waiting to run (the kernel is idle for a moment
# between two cells of a Run All).
# Done: the kernel idle, no cell running, and either the last code cell has run or a cell stopped Run All
# with an error it was not tagged to raise. (Idle with nothing running alone is also true between two
# cells of Run All, for longer on a busy machine: the rest of the notebook was then taken as not run.)
ALL_DONE = """() => {
    const w = window.jupyterapp.shell.currentWidget, s = w.sessionContext;
    const idle = !!(s.session && s.session.kernel && s.session.kernel.status === 'idle');
    const code = w.content.widgets.filter(c => c.model.type === 'code' && c.model.sharedModel.getSource().trim());
    const running = code.some(c => c.model.executionState === 'running');
    const last = code.length ? code[code.length - 1].model.executionCount !== null : true;
    const stopped = code.some(c => !(c.model.getMetadata('tags') || []).includes('raises-exception')
        && c.model.outputs.toJSON().some(o => o.output_type === 'error'));
    return idle && !running && (last || stopped);
}"""
# Run All; its promise settles when every cell has run, or at the first error output (the later
# cells still run: a cell tagged raises-exception does not stop the kernel's queue), hence ALL_DONE.
RUN_ALL = """async (ms) => {
    const run = window.jupyterapp.commands.execute('notebook:run-all-cells');
    const late = new Promise(resolve => setTimeout(() => resolve('timeout'), ms));
    return await Promise.race([run, late]);
}"""
CELLS = """() => window.jupyterapp.shell.currentWidget.content.widgets.map((c, i) => ({
    index: i, type: c.model.type, source: c.model.sharedModel.getSource(),
    count: c.model.type === 'code' ? c.model.executionCount : null,
    tags: c.model.getMetadata('tags') || [],
    grade_id: (c.model.getMetadata('nbgrader') || {}).grade_id || null,
    outputs: c.model.type === 'code' ? c.model.outputs.toJSON() : [],
}))"""
# What each cell shows: its output text, its pictures, and its explorer widgets (top-level widget
# views, each marked with data-course-widget so Playwright can find it again).
RENDERED = """() => {
    const cells = window.jupyterapp.shell.currentWidget.content.widgets;
    let widget = 0;
    return cells.map((c, i) => {
        const outputs = Array.from(c.node.querySelectorAll('.jp-OutputArea-output'));
        const roots = Array.from(c.node.querySelectorAll('.jp-OutputArea-output > .jupyter-widgets'))
            .filter(el => !el.parentElement.closest('.jupyter-widgets'));
        const widgets = roots.map(el => { el.setAttribute('data-course-widget', String(widget)); return widget++; });
        const images = Array.from(c.node.querySelectorAll('.jp-OutputArea-output img')).map(img => {
            const r = img.getBoundingClientRect(), figure = img.closest('figure.autograd-drawing');
            return {alt: img.alt, loaded: img.complete && img.naturalWidth > 0, width: r.width, height: r.height,
                    shown: img.checkVisibility({checkOpacity: true, checkVisibilityCSS: true}),
                    in_widget: !!img.closest('.jupyter-widgets'), drawing: !!figure,
                    table_rows: figure ? figure.querySelectorAll('details table tr').length : 0};
        });
        return {index: i, text: outputs.filter(o => !o.closest('.jupyter-widgets')).map(o => o.innerText).join('\\n'),
                all_text: outputs.map(o => o.innerText).join('\\n'), images, widgets};
    });
}"""
SCROLLER = "window.jupyterapp.shell.currentWidget.node.querySelector('.jp-WindowedPanel-outer')"
SCROLL_INFO = f"() => {{ const o = {SCROLLER}; return [o.scrollHeight, o.clientHeight, window.innerHeight]; }}"
SCROLL_TO = f"(top) => {{ {SCROLLER}.scrollTop = top; }}"
# Messages JupyterLab or ipywidgets show instead of an output they cannot render.
RENDER_FAILURES = (
    "Cannot display",
    "Error displaying widget",
    "Loading widget",
    "No renderer could be found",
    "Javascript Error",
    "[Open Browser Console",
)


@dataclass
class Lab:
    """A running JupyterLab: its address, token, served folder and process."""

    url: str
    token: str
    root: Path
    process: subprocess.Popen

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on 127.0.0.1 with a fresh configuration, serving a temporary copy of the course's
    notebooks and exercises (the autograder package comes from the environment)."""
    tmp = tmp_path_factory.mktemp("lab")
    root = tmp / "course"
    for folder in ("notebooks", "exercises", "assets"):
        if (REPO / folder).is_dir():
            shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for plugin, values in LAB_SETTINGS.items():
        file = tmp / "settings" / f"{plugin}.jupyterlab-settings"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(values))
    env = fresh_jupyter_env(os.environ, tmp)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",
        "--allow-root",
    ]
    log_path = ARTIFACTS / "jupyterlab.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    server = Lab(f"http://127.0.0.1:{port}", token, root, process)
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                pytest.fail(f"JupyterLab exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                server.api("/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer in 90 s:\n{log_path.read_text()[-3000:]}")
                time.sleep(0.3)
        yield server
    finally:
        stop(process, lambda: server.api("/api/shutdown", method="POST"))


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium with a fresh profile."""
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=VIEWPORT,
        )
        context.set_default_timeout(60_000)
        yield context
        context.close()


@pytest.fixture(scope="module")
def lab_page(lab, browser):
    """One JupyterLab tab for all the tests of this module (loading JupyterLab takes seconds)."""
    page = browser.new_page()
    page.goto(f"{lab.url}/lab?reset&token={lab.token}")
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell)", timeout=120_000)
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    yield page
    page.close()


@pytest.fixture
def open_notebook(lab, lab_page):
    """A function opening a notebook (path relative to the served root) in JupyterLab, once its
    kernel is idle; afterwards the notebook is closed unsaved and its kernel shut down."""

    def open_(path: str):
        lab_page.evaluate(
            "async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }", path
        )
        lab_page.wait_for_function(NOTEBOOK_READY, arg=path, timeout=120_000)
        lab_page.evaluate("() => { window.jupyterapp.shell.collapseLeft(); window.jupyterapp.shell.collapseRight(); }")
        return lab_page

    yield open_
    lab_page.evaluate("""async () => {
        for (const w of Array.from(window.jupyterapp.shell.widgets('main'))) {
            if (w.sessionContext) { await w.sessionContext.shutdown(); }
            w.dispose();                 // closes without saving (and without asking)
        }
    }""")
    for session in lab.api("/api/sessions"):
        lab.api(f"/api/sessions/{session['id']}", method="DELETE")


# A whole-notebook screenshot makes Chromium lay out every cell at up to 15000 pixels: seconds of CPU
# each, for a person to look at. Under CI (CI set), where nobody does, only a failure's is taken;
# COURSE_SCREENSHOTS=1 (or 0) decides either way.
WHOLE_SCREENSHOTS = os.environ.get("COURSE_SCREENSHOTS", "0" if os.environ.get("CI") else "1") == "1"


def screenshot(page, name: str, failure: bool = False) -> list[Path]:
    """The whole notebook in ``ARTIFACTS/name.png`` (and ``name-2.png``, ... for a long one); none
    (``[]``) unless ``WHOLE_SCREENSHOTS`` or ``failure``."""
    if not (WHOLE_SCREENSHOTS or failure):
        return []
    for old in ARTIFACTS.glob(f"{name}*.png"):
        if re.fullmatch(rf"{re.escape(name)}(-\d+)?\.png", old.name):
            old.unlink()
    total, inner, window = page.evaluate(SCROLL_INFO)
    chrome = window - inner  # menu, tabs, toolbar and status bar
    paths = []
    try:
        for k, top in enumerate(range(0, total, SCREENSHOT_PAGE)):
            height = min(SCREENSHOT_PAGE, total - top)
            page.set_viewport_size({"width": VIEWPORT["width"], "height": height + chrome})
            page.wait_for_function(f"() => {SCROLLER}.clientHeight === {height}")  # laid out again
            page.evaluate(SCROLL_TO, top)
            page.wait_for_function(f"() => Math.abs({SCROLLER}.scrollTop - {top}) <= 1")
            page.wait_for_timeout(300)
            path = ARTIFACTS / (f"{name}.png" if k == 0 else f"{name}-{k + 1}.png")
            page.screenshot(path=str(path))
            paths.append(path)
    finally:
        page.set_viewport_size(VIEWPORT)
        page.evaluate(SCROLL_TO, 0)
    return paths


def output_problems(cells: list[dict]) -> list[str]:
    """Cells that did not run, and error or stderr output outside the cells tagged raises-exception."""
    problems = []
    for cell in cells:
        if cell["type"] != "code" or not cell["source"].strip():
            continue
        if cell["count"] is None:
            problems.append(f"cell {cell['index']} did not run")
        if "raises-exception" in cell["tags"]:
            continue
        for out in cell["outputs"]:
            if out["output_type"] == "error":
                problems.append(f"cell {cell['index']} shows an error: {out['ename']}: {out['evalue'][:300]}")
            elif out["output_type"] == "stream" and out["name"] == "stderr":
                problems.append(f"cell {cell['index']} prints on stderr: {''.join(out['text'])[:300]}")
    return problems


def picture_problems(cells: list[dict], shown: list[dict]) -> list[str]:
    """Pictures that are missing, not loaded or hidden, drawings without a text version, outputs
    JupyterLab could not render."""
    problems = []
    for cell, view in zip(cells, shown):
        i = cell["index"]
        expected = sum(
            1 for out in cell["outputs"] if out.get("data", {}).keys() & {"image/svg+xml", "image/png", "image/jpeg"}
        )
        for out in cell["outputs"]:
            if "image/svg+xml" in out.get("data", {}) and "text/html" not in out["data"]:
                problems.append(f"cell {i}: an SVG drawing without a text version (use draw() or Figure)")
        pictures = [img for img in view["images"] if not img["in_widget"]]
        if len(pictures) < expected:
            problems.append(f"cell {i}: {expected} pictures in its outputs, {len(pictures)} shown")
        for img in view["images"]:
            if not (img["loaded"] and img["shown"] and img["width"] > 10 and img["height"] > 10):
                problems.append(f"cell {i}: a picture is not visible ({img})")
            if img["drawing"] and not (img["alt"] and img["table_rows"] > 1):
                problems.append(f"cell {i}: a graph drawing without alt text or table of Nodes")
        for phrase in RENDER_FAILURES:
            if phrase in view["all_text"]:
                problems.append(f"cell {i} shows {phrase!r}: {view['all_text'][:300]}")
    return problems


def interact(root) -> str:
    """One learner action on an explorer: tick its first checkbox, else choose another entry of its
    first drop-down menu, else move its first slider to the other end. Says what it did."""
    boxes = root.locator("input[type=checkbox]")
    if boxes.count():
        boxes.first.click()
        return "clicked a checkbox"
    menus = root.locator("select")
    if menus.count():
        menu = menus.first
        current = menu.input_value()
        other = next(v for v in menu.locator("option").evaluate_all("os => os.map(o => o.value)") if v != current)
        menu.select_option(other)
        return f"chose {other!r} in a menu"
    handles = root.locator(".noUi-handle")
    if handles.count():
        handle = handles.first
        at_end = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
        handle.focus()
        handle.press("Home" if at_end else "End")
        return "moved a slider"
    raise AssertionError("an explorer without a checkbox, menu or slider")


def widget_problems(page, shown: list[dict]) -> list[str]:
    """Each explorer must answer one interaction with new output and no error."""
    problems = []
    for view in shown:
        for n in view["widgets"]:
            root = page.locator(f'[data-course-widget="{n}"]')
            outputs = root.locator(".widget-output")
            if not root.is_visible() or not outputs.count():
                problems.append(f"cell {view['index']}: explorer {n} is not visible or has no output area")
                continue
            before = outputs.first.inner_text()
            root.scroll_into_view_if_needed()
            action = interact(root)
            try:
                page.wait_for_function(
                    "([el, before]) => el.innerText.trim() !== '' && el.innerText !== before",
                    arg=[outputs.first.element_handle(), before],
                    timeout=30_000,
                )
                page.wait_for_function(KERNEL_IDLE, timeout=30_000)
                page.wait_for_timeout(300)
            except Exception:  # noqa: BLE001 (a timeout of any kind is the finding)
                problems.append(f"cell {view['index']}: explorer {n} did not change after it {action}")
                continue
            after = outputs.first.inner_text()
            failed = root.locator('[data-mime-type="application/vnd.jupyter.stderr"]')
            if after == before or failed.count():
                problems.append(
                    f"cell {view['index']}: explorer {n} {action} and then showed "
                    f"{'an error' if failed.count() else 'the same output'}: {after[:300]}"
                )
    return problems


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_runs_and_shows_everything(open_notebook, name):
    """Opened, are the stored drawings visible (not an error)? Then Run All: does every cell run,
    leaving the kernel idle, with no unexpected error, every picture visible, every drawing with
    its text version, and every explorer rendered and responding to one interaction?
    (Screenshot: test-artifacts/browser/<lesson>.png.)"""
    stem = name.removesuffix(".ipynb")
    for old in ARTIFACTS.glob(f"{stem}-failed*.png"):
        old.unlink()
    page = open_notebook(f"notebooks/{name}")
    # The "Going deeper" sections open collapsed (tested below); here every section is opened, as a
    # learner who reads them does, so that their pictures and explorers are checked too.
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:expand-all-headings')")
    page.wait_for_timeout(500)
    # What a learner sees on opening the lesson, before running anything: the stored outputs of a
    # notebook JupyterLab does not trust yet (it refuses to show a bare SVG output then).
    unrun = [f"before running: {p}" for p in picture_problems(page.evaluate(CELLS), page.evaluate(RENDERED))]
    status = page.evaluate(RUN_ALL, 240_000)
    assert status != "timeout", f"{name}: Run All did not finish in 240 s"
    for _ in range(2):  # done, and still done a moment later
        page.wait_for_function(ALL_DONE, timeout=240_000)
        page.wait_for_timeout(500)  # let the last outputs and widgets render
    cells, shown = page.evaluate(CELLS), page.evaluate(RENDERED)
    screenshot(page, stem)
    problems = unrun + output_problems(cells) + picture_problems(cells, shown)
    widgets = sum(len(view["widgets"]) for view in shown)
    expected_widgets = sum(
        1
        for cell in cells
        for out in cell["outputs"]
        if "application/vnd.jupyter.widget-view+json" in out.get("data", {})
    )
    if widgets != expected_widgets:
        problems.append(f"{expected_widgets} widget outputs, {widgets} explorers rendered")
    if not name.startswith("00_") and not expected_widgets:
        problems.append("no explorer widget in this lesson")
    problems += widget_problems(page, shown)
    if not page.evaluate(ALL_DONE):
        problems.append("the kernel is not idle at the end")
    if problems:
        screenshot(page, f"{stem}-failed", failure=True)
    assert not problems, f"{name}:\n" + "\n".join(problems)


# What the course adds to JupyterLab's page: the rendered markdown of its cells and their outputs
# (pictures, tables, explorers, check messages). Everything else (editors, prompts, toolbars,
# menus, side panels) is JupyterLab's own.
COURSE_PARTS = ["[data-course-current] .jp-RenderedMarkdown", "[data-course-current] .jp-OutputArea-output"]


@pytest.mark.parametrize("path", ["notebooks/00_start.ipynb", "notebooks/01_dynamic_graph.ipynb"])
def test_a_lesson_open_in_jupyterlab_has_no_serious_wcag_violation_in_what_the_course_adds(open_notebook, path):
    """With a lesson open in JupyterLab (its stored outputs: pictures, explorers' saved views, the start
    page's progress table) and its folded sections opened, does axe-core find no serious or critical
    WCAG 2.0/2.1 A/AA violation in what the course adds (its markdown and outputs)? JupyterLab's own
    findings on the same page are listed, not hidden: printed and written to
    test-artifacts/browser/axe-jupyterlab-<lesson>.txt."""
    from tests.accessibility import audit, by_rule, said, violations

    page = open_notebook(path)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:expand-all-headings')")
    page.wait_for_timeout(500)
    _current(page)
    ours, lesser = audit(page, path, {"include": [[part] for part in COURSE_PARTS]})
    theirs = violations(page, {"exclude": [[part] for part in COURSE_PARTS]})
    stem = Path(path).stem
    (ARTIFACTS / f"axe-jupyterlab-{stem}.txt").write_text("\n".join(said(theirs, "JupyterLab") or ["none"]) + "\n")
    print("\n".join([f"JupyterLab's own findings with {path} open:", *by_rule(theirs, "JupyterLab"), *lesser]))
    assert ours == [], "\n".join(ours)


def _cell(cells: list[dict], grade_id: str) -> dict:
    return next(cell for cell in cells if cell["grade_id"] == grade_id)


def _run(page, index: int, keys: str = "Shift+Enter") -> None:
    """Run cell ``index`` as a learner does (Shift-Enter from its editor) and wait until it ran."""
    before = max((c["count"] or 0) for c in page.evaluate(CELLS))
    page.evaluate(
        "(i) => { const nb = window.jupyterapp.shell.currentWidget.content; "
        "nb.activeCellIndex = i; nb.mode = 'command'; nb.activeCell.node.focus(); }",
        index,
    )
    page.keyboard.press(keys)
    page.wait_for_function(
        """([i, before]) => {
        const w = window.jupyterapp.shell.currentWidget, c = w.content.widgets[i];
        const k = w.sessionContext.session.kernel;
        return c.model.executionCount > before && k.status === 'idle';
    }""",
        arg=[index, before],
        timeout=60_000,
    )
    page.wait_for_timeout(300)


def _type_answer(page, index: int, source: str) -> None:
    """Replace the source of cell ``index`` by typing ``source`` into its editor."""
    _current(page)  # other notebooks may be open, in hidden tabs
    editor = page.locator("[data-course-current] .jp-Notebook .jp-Cell").nth(index).locator(".cm-content")
    editor.scroll_into_view_if_needed()
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)
    typed = page.evaluate(
        "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel.getSource()", index
    )
    assert typed == source, f"the editor holds something else than what was typed:\n{typed}"


def _solution_answer(grade_id: str) -> str:
    """The solution of an answer cell as a learner would write it (no nbgrader markers)."""
    notebook = nbformat.read(REPO / "solutions" / EXERCISE / f"{EXERCISE}.ipynb", as_version=4)
    source = next(c.source for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return "\n".join(
        line for line in source.splitlines() if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")
    )


def test_exercise_check_accepts_a_right_answer_and_diagnoses_a_mistake(open_notebook):
    """In the learner's copy of exercise 1: the question's check helpers show folded between the
    answer and its short check cell; run with Shift-Enter from the answer down, the folded helpers
    show a line saying they were loaded (JupyterLab shows no execution count beside a folded cell),
    a right answer to question 2 makes the check cell print OK, a typical mistake (the residual's
    sign flipped) makes it name the mistake. (Screenshots: test-artifacts/browser/ex01_graph-right.png
    and ex01_graph-mistake.png.)"""
    ((answer_id, mistake),) = MISTAKES[MISTAKE]["answers"].items()
    ((check_id, phrase),) = MISTAKES[MISTAKE]["fails"].items()
    page = open_notebook(f"exercises/{EXERCISE}/{EXERCISE}.ipynb")
    cells = page.evaluate(CELLS)
    _run(page, _cell(cells, "setup")["index"])
    answer, check = _cell(cells, answer_id)["index"], _cell(cells, check_id)["index"]
    helpers = _cell(cells, check_id.replace("_check", "_helpers"))["index"]
    assert answer < helpers == check - 1
    hidden = "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].inputHidden"
    assert page.evaluate(hidden, helpers) and not page.evaluate(hidden, check), "the helpers are not folded"
    for label, source, expected in (("right", _solution_answer(answer_id), None), ("mistake", mistake, phrase)):
        _type_answer(page, answer, source)
        for index in range(answer, check + 1):  # Shift-Enter from the answer: the helpers, then the check
            _run(page, index)
        shown = page.evaluate(RENDERED)[check]["text"]
        outputs = page.evaluate(CELLS)[check]["outputs"]
        screenshot(page, f"{EXERCISE}-{label}")
        loaded = page.evaluate(RENDERED)[helpers]["text"].strip()
        assert loaded == f"Question {check_id[1:].removesuffix('_check')}'s check helpers loaded.", loaded
        if expected is None:
            assert re.search(r"^OK\b", shown, re.M), f"no OK line after a right answer:\n{shown}"
            assert not any(o["output_type"] == "error" for o in outputs), shown
        else:
            # (the message is wrapped at spaces for the output area)
            assert " ".join(expected.split()) in " ".join(shown.split()), f"no {expected!r} after the mistake:\n{shown}"
            assert "CheckFailed" in shown, shown


# --- The learner's first hour: the course started exactly as `./course lab` starts it -------------

# `./course lab` opens the learner's own copies (my-work/, made from notebooks/ and exercises/ on the
# first start), so that a learner's answers never touch the committed files.
MINE = "my-work/"
START_PAGE = f"{MINE}notebooks/00_start.ipynb"
# nbgrader's instructor tools and JupyterLab's news must not reach a learner (jupyter/learner/):
# the commands those plugins would register, and the words they would show.
INSTRUCTOR_COMMANDS = ["nbgrader:open-create-assignment", "nbgrader:open-formgrader", "nbgrader:open-course-list"]
INSTRUCTOR_WORDS = ["Create Assignment", "Formgrader", "Nbgrader", "Course List"]


def course_copy(destination: Path) -> Path:
    """A copy of the working tree as git sees it (tracked files, and untracked ones git does not
    ignore), with ``.venv`` a link to the real environment, so that nothing the test does is saved
    into the repository. Skips when the course was never set up: `./course` would then install."""
    stamp = REPO / ".venv" / ".course-installed"
    if not stamp.is_file():
        reason = "the course is not set up (no .venv/.course-installed): run ./course setup first"
        if os.environ.get("COURSE_REQUIRE_BROWSER"):
            pytest.fail(reason)
        pytest.skip(reason)
    for name in clone_files(REPO):
        source = REPO / name
        if name == ".venv" or name.startswith(".venv/") or not source.is_file():
            continue  # the link itself; deleted files still in the index
        (destination / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination / name)
    (destination / ".venv").symlink_to((REPO / ".venv").resolve())
    # `./course` reinstalls when requirements.txt or pyproject.toml is newer than the stamp of the
    # last set-up; a copy must never do that (into the shared environment), so they are made older.
    before = stamp.stat().st_mtime - 1
    for name in ("requirements.txt", "pyproject.toml"):
        if (destination / name).stat().st_mtime >= before + 1:
            os.utime(destination / name, (before, before))
    return destination


COURSE_LAB_ROOT: dict[str, Path] = {}  # the folder the course_lab fixture serves (its copy of the course)


@pytest.fixture(scope="module")
def course_lab(tmp_path_factory):
    """`./course lab --no-browser --port PORT` in a copy of the course, as a learner types it (one
    more argument, passed through to JupyterLab: expose_app_in_browser, so that the test can wait
    for kernels; it changes nothing on the screen), with a fresh Jupyter configuration and user
    settings, as on a learner's first day. Yields the URL the command printed."""
    tmp = tmp_path_factory.mktemp("course-lab")
    root = course_copy(tmp / "course")
    COURSE_LAB_ROOT["root"] = root
    env = {**fresh_jupyter_env(os.environ, tmp), "PYTHONPATH": str(root)}
    with course_lab_server(root, env, ARTIFACTS / "course-lab.log", "--LabApp.expose_app_in_browser=True") as url:
        yield url


OPENED_OR_REFUSED = """(path) => {
    const dialog = document.querySelector('.jp-Dialog');
    if (dialog) { return 'dialog: ' + dialog.innerText; }
    const app = window.jupyterapp, w = app && app.shell.currentWidget;
    const s = w && w.sessionContext, k = s && s.session && s.session.kernel;
    return (w && w.context && w.context.path === path && w.context.isReady && k && k.status === 'idle' &&
            w.content.widgets.length > 0) ? 'open' : '';
}"""


def _opened(page, path: str) -> None:
    """Wait until the notebook at ``path`` is the open tab with an idle kernel; fail with what
    JupyterLab said instead (a "File Load Error" dialog for a link to a missing file)."""
    said = page.wait_for_function(OPENED_OR_REFUSED, arg=path, timeout=120_000).json_value()
    if said != "open":
        page.screenshot(path=str(ARTIFACTS / "learner-failed.png"))
    assert said == "open", f"opening {path}: {said}"
    page.wait_for_timeout(500)


def _click_link_to(page, path: str, row: str) -> str:
    """Click, as a learner does, a link to ``path`` (relative to the course root): in the open
    notebook if it has one, otherwise in the start page's contents table (its row starting with
    ``row``). Says where the link was."""
    here = _current(page)
    links = page.locator(f'[data-course-current] .jp-RenderedMarkdown a[href*="/files/{path}"]')
    for _ in range(5):  # JupyterLab renders only the cells in view: scroll down as a reader does
        if links.count():
            break
        page.evaluate("""async () => {
            const nb = window.jupyterapp.shell.currentWidget.content;
            await nb.scrollToItem(nb.widgets.length - 1);
        }""")
        page.wait_for_timeout(700)
    if links.count():
        _scroll_to(page, links.first)
        links.first.click()
        return here
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="00_start.ipynb").click()
    page.wait_for_function("(p) => window.jupyterapp.shell.currentWidget.context.path === p", arg=START_PAGE)
    _current(page)
    link = page.locator("[data-course-current] .jp-RenderedMarkdown tr", has_text=row).locator("a")
    _scroll_to(page, link)
    link.click()
    return START_PAGE


def _current(page) -> str:
    """Mark the notebook in front (other tabs stay in the page, hidden) with data-course-current,
    and say its path."""
    return page.evaluate("""() => {
        document.querySelectorAll('[data-course-current]').forEach(n => n.removeAttribute('data-course-current'));
        const w = window.jupyterapp.shell.currentWidget;
        w.node.setAttribute('data-course-current', '');
        return w.context.path;
    }""")


def _scroll_to(page, link) -> None:
    """Scroll the notebook to ``link`` as a learner scrolls (a tab brought back to the front shows
    its cells only once they are scrolled to, so Playwright would wait for them forever)."""
    link.evaluate("a => a.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(500)


def _no_instructor_tools_nor_news(page) -> list[str]:
    """What a learner should not see: nbgrader's instructor tools, a news or update pop-up."""
    problems = [
        f"the command {c} exists"
        for c in INSTRUCTOR_COMMANDS
        if page.evaluate("(c) => window.jupyterapp.commands.hasCommand(c)", c)
    ]
    for words in INSTRUCTOR_WORDS:
        shown = page.get_by_text(words, exact=True)
        if any(shown.nth(i).is_visible() for i in range(shown.count())):
            problems.append(f"{words!r} is on the screen")
    toasts = page.locator(".Toastify__toast")
    problems += [
        f"a notification is shown: {toasts.nth(i).inner_text()[:200]}"
        for i in range(toasts.count())
        if toasts.nth(i).is_visible()
    ]
    return problems


def test_learner_first_hour_through_course_lab(course_lab, browser):
    """Started as `./course lab --no-browser` starts it: does the URL it prints open the start
    page, with the whole course served (lessons and exercises), no instructor tools and no news
    pop-up? Then, clicking as a learner: start page -> lesson 1 -> exercise 1, where a right answer
    passes its check, -> lesson 2. (Screenshots: test-artifacts/browser/learner-*.png.)"""
    parts = urllib.parse.urlsplit(course_lab)
    assert parts.path == f"/lab/tree/{START_PAGE}", f"./course lab printed {course_lab}, not the start page's URL"
    token = urllib.parse.parse_qs(parts.query)["token"][0]
    for old in ARTIFACTS.glob("learner-*.png"):
        old.unlink()
    page = browser.new_page()
    try:
        page.goto(course_lab)
        page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell)", timeout=120_000)
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        _opened(page, START_PAGE)
        page.wait_for_timeout(3000)  # JupyterLab asks about news a moment after start
        page.screenshot(path=str(ARTIFACTS / "learner-1-start.png"))
        problems = _no_instructor_tools_nor_news(page)
        formgrader = urllib.request.Request(
            f"{parts.scheme}://{parts.netloc}/formgrader", headers={"Authorization": f"token {token}"}
        )
        try:
            urllib.request.urlopen(formgrader, timeout=10).close()
            problems.append("the server answers /formgrader")
        except urllib.error.HTTPError as error:
            assert error.code == 404, error
        assert not problems, "\n".join(problems)

        lesson = f"{MINE}notebooks/01_dynamic_graph.ipynb"
        _click_link_to(page, lesson, "Lesson 1:")
        _opened(page, lesson)
        page.screenshot(path=str(ARTIFACTS / "learner-2-lesson1.png"))

        exercise = f"{MINE}exercises/{EXERCISE}/{EXERCISE}.ipynb"
        assert _click_link_to(page, exercise, "Exercise 1:") == lesson, "lesson 1 has no link to exercise 1"
        _opened(page, exercise)
        page.wait_for_timeout(1500)  # JupyterLab rewrites metadata that differs from its kernel's
        assert not page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty"), (
            "exercise 1 opens as unsaved: its kernelspec or language_info differs from the kernel's"
        )
        cells = page.evaluate(CELLS)
        _run(page, _cell(cells, "setup")["index"])
        ((answer_id, _),) = MISTAKES[MISTAKE]["answers"].items()
        ((check_id, _),) = MISTAKES[MISTAKE]["fails"].items()
        answer, check = _cell(cells, answer_id)["index"], _cell(cells, check_id)["index"]
        _type_answer(page, answer, _solution_answer(answer_id))
        for index in range(answer, check + 1):  # Shift-Enter from the answer: its folded check helpers, the check
            _run(page, index)
        shown = page.evaluate(RENDERED)[check]["text"]
        page.locator("[data-course-current] .jp-Notebook .jp-Cell").nth(check).scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "learner-3-exercise1-check.png"))
        assert re.search(r"^OK\b", shown, re.M), f"no OK line after a right answer:\n{shown}"

        assert _click_link_to(page, f"{MINE}notebooks/02_leaf_tensors.ipynb", "Lesson 2:") == exercise, (
            "exercise 1 has no link to lesson 2"
        )
        _opened(page, f"{MINE}notebooks/02_leaf_tensors.ipynb")
        page.screenshot(path=str(ARTIFACTS / "learner-4-lesson2.png"))
        problems = _no_instructor_tools_nor_news(page)
        assert not problems, "\n".join(problems)
    finally:
        page.close()


def test_the_start_page_shows_where_the_learner_stands_from_the_progress_record(course_lab, browser):
    """After `python -m autograder progress` checked exercise 1 in the learner's folder (as released:
    nothing answered), does the start page's last cell, when run, show its questions from
    the record (not answered yet, 0 of its points) and the rest not checked yet, with no serious
    WCAG violation in the table (axe-core)? (Screenshot: test-artifacts/browser/learner-progress.png.)"""
    from tests.accessibility import audit

    root = COURSE_LAB_ROOT["root"]
    command = ["progress", "--course", str(root), "--exercise", EXERCISE, "--visible-only"]
    done = subprocess.run(
        [sys.executable, "-m", "autograder", *command],
        capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(root)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    page = browser.new_page()
    try:
        page.goto(course_lab)
        page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell)", timeout=120_000)
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        _opened(page, START_PAGE)
        cells = page.evaluate(CELLS)
        last = max(c["index"] for c in cells if c["type"] == "code")
        assert "check.progress()" in cells[last]["source"], "the start page's last code cell is not the progress table"
        # run it as the Run menu does (its cell may be out of view, where a key press would not reach it)
        page.evaluate(
            "async (i) => { const w = window.jupyterapp.shell.currentWidget; w.content.activeCellIndex = i;"
            " await w.content.scrollToItem(i); await window.jupyterapp.commands.execute('notebook:run-cell'); }",
            last,
        )
        page.wait_for_function(
            "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.outputs.length > 0",
            arg=last,
            timeout=180_000,
        )
        page.wait_for_timeout(500)
        shown = page.evaluate(RENDERED)[last]["text"]
        _current(page)
        page.locator("[data-course-current] .jp-Notebook .jp-Cell").nth(last).scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "learner-progress.png"))
        serious, _ = audit(page, "progress table", {"include": [[part] for part in COURSE_PARTS]})
    finally:
        page.close()
    assert "Exercise 1: the graph is built as the code runs: 0 of 8 points" in shown, shown
    assert "Question 1" in shown and "not answered yet" in shown, shown
    assert "Exercise 2: leaf and non-leaf tensors: 3 questions, 8 points: not checked yet" in shown, shown
    assert serious == [], serious


# A lesson's "Going deeper" heading cell (tests/test_going_deeper.py) and the cells it folds.
FOLD_STATE = """(i) => {
    const cells = window.jupyterapp.shell.currentWidget.content.widgets;
    return {heading: cells[i].isHidden, collapsed: cells[i].headingCollapsed, body: cells[i + 1].isHidden};
}"""


def test_a_lessons_going_deeper_section_opens_collapsed_and_a_click_expands_it(course_lab, browser):
    """Opened in `./course lab`, does the first lesson with a "Going deeper" section show that
    heading with the cells under it hidden, and does a click on its "N cells hidden" button show them?
    (Screenshots: test-artifacts/browser/going-deeper-*.png.)"""
    from tests.test_going_deeper import GOING_DEEPER, LESSONS

    found = [
        (lesson, index)
        for lesson in LESSONS
        for index, cell in enumerate(nbformat.read(lesson, as_version=4).cells)
        if cell.cell_type == "markdown" and GOING_DEEPER.search(cell.source)
    ]
    assert found, "no lesson has a Going deeper section"
    lesson, index = found[0]
    path = lesson.relative_to(REPO).as_posix()
    page = browser.new_page()
    try:
        page.goto(course_lab)
        page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell)", timeout=120_000)
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        _opened(page, START_PAGE)  # the URL opens the start page: let it, then open the lesson
        page.evaluate("async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }", path)
        _opened(page, path)
        _current(page)
        heading = page.locator("[data-course-current] .jp-Notebook .jp-Cell").nth(index)
        heading.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "going-deeper-1-collapsed.png"))
        assert page.evaluate(FOLD_STATE, index) == {"heading": False, "collapsed": True, "body": True}
        heading.locator(".jp-showHiddenCellsButton").click()  # "+ N cells hidden", under the heading
        page.wait_for_function(f"() => !({FOLD_STATE})({index}).body", timeout=10_000)
        page.screenshot(path=str(ARTIFACTS / "going-deeper-2-expanded.png"))
        assert page.evaluate(FOLD_STATE, index) == {"heading": False, "collapsed": False, "body": False}
    finally:
        page.close()


# Whether the cell of nbformat id ``cell`` of the notebook in front is in the visible part of its
# scrolling area (a cell far down a long notebook is put on the page only once scrolled to).
CELL_SHOWN = """(cell) => {
    const w = window.jupyterapp.shell.currentWidget, outer = w.node.querySelector('.jp-WindowedPanel-outer');
    const c = w.content.widgets.find(c => c.model.id === cell);
    if (!c || !c.node.isConnected) { return false; }
    const box = c.node.getBoundingClientRect(), view = outer.getBoundingClientRect();
    return box.top >= view.top - 1 && box.top < view.bottom - 40;
}"""
# Close every tab, unsaved or not, as a learner's later session starts from none of them.
CLOSE_ALL = """() => { for (const w of Array.from(window.jupyterapp.shell.widgets('main'))) {
    if (w.context) { w.context.model.dirty = false; } w.close(); } }"""


def test_the_explainers_lesson_link_opens_the_lesson_at_its_section(course_lab, browser):
    """In a notebook of the learner's own (my-work/), an autograd error's explanation links to the
    lesson: does a click open the learner's copy of that lesson, not open before, at the section the
    link names, its last one, and again when the lesson is already open, scrolled back to its top?
    (JupyterLab 4.6 applies a #heading-id or #heading=id fragment before
    the lesson it opens has rendered its headings, so it stayed at the first cell; the link names
    the heading's cell, #cell-id=..., which it finds at once: tried both in Chromium.)
    (Screenshots: test-artifacts/browser/explainer-link-*.png.)"""
    parts = urllib.parse.urlsplit(course_lab)
    token = urllib.parse.parse_qs(parts.query)["token"][0]
    path = f"{MINE}notebooks/first-try.ipynb"
    error = "import torch\ntorch.ones(2).sum().backward()"  # lesson 1's last section: the graph was not built
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(error)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    request = urllib.request.Request(
        f"{parts.scheme}://{parts.netloc}/api/contents/{path}",
        data=json.dumps({"type": "notebook", "content": notebook}).encode(),
        method="PUT",
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=30).close()
    page = browser.new_page()
    try:
        page.goto(course_lab)
        page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell)", timeout=120_000)
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        _opened(page, START_PAGE)
        page.evaluate(CLOSE_ALL)  # the lesson must not be open already: other tests open lesson 1
        page.evaluate("async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }", path)
        _opened(page, path)
        _current(page)
        _run(page, 0)
        link = page.locator("[data-course-current] .autograder-explanation a")
        link.wait_for(timeout=30_000)
        target = f"{MINE}notebooks/01_dynamic_graph.ipynb"  # the learner's own copy, where they work
        href = urllib.parse.urlsplit(link.get_attribute("href"))  # as JupyterLab rewrote it: /files/...
        assert href.path.endswith(f"/files/{target}") and href.fragment.startswith("cell-id="), href
        lesson = REPO / "notebooks" / "01_dynamic_graph.ipynb"
        anchor = anchor_of_cell(lesson, href.fragment.removeprefix("cell-id="))  # the section it names
        cells = nbformat.read(lesson, as_version=4).cells
        assert anchor and anchor.startswith("10.-Pitfalls"), anchor
        page.screenshot(path=str(ARTIFACTS / "explainer-link-1-error.png"))
        cell = href.fragment.removeprefix("cell-id=")
        link.click()
        _opened(page, target)
        shown = []
        for _ in range(30):  # JupyterLab scrolls once the lesson's cells exist; it must stay there
            shown.append(page.evaluate(CELL_SHOWN, cell))
            if shown[-4:] == [True] * 4:
                break
            page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "explainer-link-2-lesson-section.png"))
        assert shown[-4:] == [True] * 4, f"the lesson did not open at {anchor} (in view, every 0.5 s: {shown})"
        height, seen, _ = page.evaluate(SCROLL_INFO)
        assert len(cells) > 40 and height > 3 * seen, (
            "the lesson fits on a screen or two: this test would not tell a followed link from the top"
        )
        # The lesson already open, read back to its top: the same link, clicked again in the
        # learner's notebook, brings its tab to the front at the section (not only the tab).
        page.evaluate(SCROLL_TO, 0)
        page.wait_for_timeout(500)
        assert not page.evaluate(CELL_SHOWN, cell)
        page.evaluate("async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }", path)
        _opened(page, path)
        _current(page)
        _scroll_to(page, link)
        link.click()
        _opened(page, target)
        again = []
        for _ in range(10):
            again.append(page.evaluate(CELL_SHOWN, cell))
            if again[-2:] == [True] * 2:
                break
            page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "explainer-link-3-already-open.png"))
        assert again[-2:] == [True] * 2, f"the open lesson was not brought to {anchor} (in view, every 0.5 s: {again})"
    finally:
        page.close()
