"""pytest's set-up for the whole repository (nbval's lesson runs included).

A lesson's slow cell (lesson 13's Inductor compilation, about a minute) runs under Run All only when the
learner sets its flag; the tests set ``COURSE_SLOW_CELLS=1`` so that nbval runs and checks it all the same.

``./course test`` runs the suite in parallel (pytest-xdist, one worker per core and one more, since most
slow tests wait on a kernel, a server or a sandbox rather than compute). A *unit* is what one worker runs
whole, in order: a test file or notebook, or a folder whose tests share one server (the hub tests share
one JupyterHub). Units run longest first, from the measured seconds below, so that the last one to
start is a short one. The slow units are also marked ``slow``: ``-m "not slow"`` is the fast part to run
while working (CONTRIBUTING.md, "Running tests").
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("COURSE_SLOW_CELLS", "1")

# Folders whose tests share a server started once per session: one unit, so one worker starts it.
SHARED_FOLDERS = ("tests/hub/",)

# Wall seconds of each slow unit in a parallel run (three workers) on the 2-core machine while other jobs
# kept its load average near 7, from `tests/scripts/where_the_time_goes.py` (CONTRIBUTING.md; the site's
# with its colour-contrast check sampled since): what matters is their order. A unit not listed took
# under 50 s there; the last three did too, and stay marked slow (a server, the class grader).
SLOW_UNITS = {
    "tests/test_browser.py": 628,
    "tests/test_course.py": 427,
    "tests/test_site.py": 357,
    "tests/test_term.py": 320,
    "tests/hub/": 169,
    "tests/grading/judge/test_points.py": 146,
    "tests/grading/test_cluster.py": 142,
    "tests/grading/test_term_doors.py": 131,
    "tests/grading/test_corpus.py": 101,
    "tests/grading/test_attacks.py": 97,
    "tests/grading/runs/test_batch.py": 90,
    "tests/grading/test_corpus_claims.py": 80,
    "tests/check/test_summary.py": 78,
    "tests/grading/service/test_loop.py": 61,
    "tests/commands/test_progress.py": 59,
    "tests/grading/test_corpus_classes.py": 59,
    "tests/grading/sandbox/test_runner.py": 58,
    "tests/grading/test_visible.py": 58,
    "tests/grading/intake/test_exchange.py": 55,
    "tests/grading/judge/test_references.py": 53,
    "tests/grading/runs/test_hosted.py": 50,
    "tests/test_formgrader.py": 40,
    "tests/grading/store/test_gradebook.py": 37,
    "tests/grading/out/test_report.py": 36,
}


def unit_of(nodeid: str) -> str:
    """The unit a test belongs to: its shared folder, or its file (``a/b.py::test_x[1]`` → ``a/b.py``)."""
    path = nodeid.split("::", 1)[0]
    return next((folder for folder in SHARED_FOLDERS if path.startswith(folder)), path)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a slow end-to-end unit (conftest.SLOW_UNITS); -m 'not slow' skips them")
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # keep the longest-first order made below


def pytest_collection_modifyitems(config, items):
    """Mark the slow units and put them first, longest first (the rest keep their order): every worker
    collects the same order, and the scheduler hands out units in it."""
    for item in items:
        if unit_of(item.nodeid) in SLOW_UNITS:
            item.add_marker(pytest.mark.slow)
    position = {id(item): i for i, item in enumerate(items)}
    items.sort(key=lambda item: (-SLOW_UNITS.get(unit_of(item.nodeid), 0), position[id(item)]))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Units (``unit_of``) as xdist's work units, whatever ``--dist`` says: a file's tests share their
    module fixtures and run in order on one worker, a shared folder's share their server."""
    from xdist.scheduler import LoadFileScheduling

    class UnitScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return UnitScheduling(config, log)
