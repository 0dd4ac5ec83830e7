"""The hub tests' shared hub: one for all of them (starting one takes a minute or two on a busy
2-core machine), skipped with the reason where its components are missing, failed instead when
``COURSE_REQUIRE_HUB`` is set (CI sets it; ``.ci/run`` installs them)."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from autograder.grading.runs.demo import build_demo_class

from .hub import Hub, hub_problem


def require_hub() -> None:
    problem = hub_problem()
    if problem is None:
        return
    if os.environ.get("COURSE_REQUIRE_HUB"):
        pytest.fail(f"COURSE_REQUIRE_HUB is set but a hub with real accounts cannot run here: {problem}")
    pytest.skip(f"a hub with real accounts cannot run here: {problem}")


# The README's configuration gives every assignment 3 attempts; the tests also let ex02 be submitted
# without limit (the burst) and keep runaway cells short.
SERVICE_OPTIONS = ["--attempts", "ex02_leaves=unlimited", "--cell-timeout", "10", "--total-timeout", "30"]
# Each test has learners of its own, so that the tests sharing the hub do not depend on their order.
LEARNERS = ("ada", "bob", "grace", "eve", "mal", "zed", "ivy", "kim")


@pytest.fixture(scope="session")
def hub():
    """A started hub (``hub.Hub``), one for every hub test (tests/hub/*)."""
    require_hub()
    from ..grading.conftest import require_sandbox

    require_sandbox()
    running = Hub(learners=LEARNERS, extra_options=SERVICE_OPTIONS)
    try:
        running.make()
        running.start()
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="session")
def demo():
    """The demo class's notebooks (correct, blank, each typical mistake) and what each fails."""
    folder = Path(tempfile.mkdtemp(prefix="hub-demo-"))
    os.chmod(folder, 0o755)  # the learners copy from it as themselves
    try:
        yield folder, build_demo_class(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
