"""The hub tests' shared hub: one per test module (starting one takes a minute on a busy 2-core
machine), skipped with the reason where its components are missing, failed instead when
``COURSE_REQUIRE_HUB`` is set (CI sets it; ``.ci/run`` installs them)."""

import os

import pytest

from .hub import Hub, hub_problem


def require_hub() -> None:
    problem = hub_problem()
    if problem is None:
        return
    if os.environ.get("COURSE_REQUIRE_HUB"):
        pytest.fail(f"COURSE_REQUIRE_HUB is set but a hub with real accounts cannot run here: {problem}")
    pytest.skip(f"a hub with real accounts cannot run here: {problem}")


@pytest.fixture(scope="module")
def hub(request):
    """A started hub (``hub.Hub``); the module may give the service's extra options in its
    ``SERVICE_OPTIONS``."""
    require_hub()
    from ..grading.conftest import require_sandbox

    require_sandbox()
    running = Hub(
        learners=("ada", "bob", "grace", "eve", "mal", "zed"),
        extra_options=getattr(request.module, "SERVICE_OPTIONS", ()),
    )
    try:
        running.make()
        running.start()
        yield running
    finally:
        running.stop()
