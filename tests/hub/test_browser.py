"""In Chromium, on the hub: does a learner who logs in, fetches ex01 and submits it from the
Assignments tab of their own JupyterLab (started by the hub as their account) have the feedback
there within seconds (Fetch Feedback, then "view feedback"), and does the service's page show them
the attempt with its score? Screenshots go to ``test-artifacts/hub/``."""

import os
import shutil
import time

import pytest

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine (the chromium fixture says so)
    sync_playwright = PlaywrightTimeout = None

from .hub import PASSWORD, REPO

ARTIFACTS = REPO / "test-artifacts" / "hub"
WITHIN = 30  # seconds from Submit to "view feedback", on a busy shared 2-core machine

pytestmark = [pytest.mark.hub, pytest.mark.browser]

# JupyterLab's user settings for the learner: no news or update pop-ups over the screenshots.
NOTIFICATIONS = '{"fetchNews": "false", "checkForUpdates": false}'


@pytest.fixture(scope="module")
def chromium():
    from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, _missing

    reason = _missing()
    if reason and os.environ.get("COURSE_REQUIRE_BROWSER"):
        pytest.fail(f"COURSE_REQUIRE_BROWSER is set, but {reason}")
    if reason:
        pytest.skip(reason)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def learner_settings(hub, name: str) -> None:
    folder = hub.home(name) / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    folder.mkdir(parents=True)
    (folder / "notification.jupyterlab-settings").write_text(NOTIFICATIONS, encoding="utf-8")
    uid, gid = hub.home(name).stat().st_uid, hub.home(name).stat().st_gid
    for path in [hub.home(name) / ".jupyter", *(hub.home(name) / ".jupyter").rglob("*")]:
        os.chown(path, uid, gid)


def test_a_learner_submits_from_the_assignments_tab_and_sees_the_feedback(hub, demo, chromium):
    from tests.test_browser import VIEWPORT

    folder, _ = demo
    name = hub.names["ivy"]
    learner_settings(hub, name)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = chromium.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        page.goto(f"{hub.url}/hub/login", timeout=120_000)
        page.fill("#username_input", name)
        page.fill("#password_input", PASSWORD)
        page.click("#login_submit")
        # the hub starts the learner's JupyterLab as their account: half a minute on a busy machine
        page.wait_for_selector("#jp-main-dock-panel", timeout=300_000)
        assert f"/user/{name}/lab" in page.url
        page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
        page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
        released = page.locator("#released_assignments_list .list_item", has_text="ex01_graph")
        released.locator("button", has_text="Fetch").click(timeout=120_000)
        fetched = page.locator("#fetched_assignments_list .list_item", has_text="ex01_graph")
        submit = fetched.locator("button", has_text="Submit")
        submit.wait_for(timeout=120_000)
        # the learner answers (the demo's correct notebook, saved over the fetched one as they would)
        target = hub.home(name) / "ex01_graph" / "ex01_graph.ipynb"
        shutil.copyfile(folder / "correct" / "ex01_graph" / "ex01_graph.ipynb", target)
        os.chown(target, hub.home(name).stat().st_uid, hub.home(name).stat().st_gid)
        page.screenshot(path=str(ARTIFACTS / "1-fetched.png"))
        submit.click()
        clicked = time.monotonic()
        submitted = page.locator("#submitted_assignments_list")
        fetch_feedback = submitted.locator("button", has_text="Fetch Feedback")
        available = submitted.locator(".nested_list_item", has_text="feedback available to fetch")
        while True:  # the learner presses the list's refresh button until the feedback is there
            page.click("#refresh_assignments_list")
            try:
                available.first.wait_for(timeout=3_000)
                break
            except PlaywrightTimeout:
                assert time.monotonic() - clicked < WITHIN, "no feedback to fetch within WITHIN seconds of Submit"
        fetch_feedback.first.click()
        view = submitted.locator("a", has_text="view feedback")
        view.first.wait_for(timeout=60_000)
        seconds = time.monotonic() - clicked
        page.screenshot(path=str(ARTIFACTS / "2-feedback-fetched.png"))
        assert seconds < WITHIN, f"view feedback appeared {seconds:.1f} s after Submit"

        (feedback,) = (hub.home(name) / "ex01_graph" / "feedback").glob("*/ex01_graph.html")
        relative = feedback.relative_to(hub.home(name))
        page.goto(f"{hub.url}/user/{name}/files/{relative}", timeout=120_000)
        page.screenshot(path=str(ARTIFACTS / "3-feedback-page.png"), full_page=False)
        assert "ex01_graph" in page.content()

        page.goto(f"{hub.url}/services/grader/", timeout=120_000)  # through the hub's OAuth, no second login
        page.wait_for_selector("h1", timeout=60_000)
        text = page.inner_text("body")
        page.screenshot(path=str(ARTIFACTS / "4-service-page.png"), full_page=True)
        assert f"Signed in as {name}" in text and "ex01_graph" in text
        assert "2 left" in text and "feedback page" in text
        for other in ("ada", "bob", "grace"):
            assert hub.names[other] not in text
    finally:
        context.close()
