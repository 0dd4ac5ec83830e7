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
# kept its load average near 10, from `tests/scripts/where_the_time_goes.py` (CONTRIBUTING.md): what
# matters is their order; a unit not listed took under 100 s there.
SLOW_UNITS = {
    "tests/test_site.py": 959,
    "tests/test_browser.py": 920,
    "tests/test_course.py": 633,
    "tests/test_term.py": 624,
    "tests/grading/test_term_doors.py": 570,
    "tests/grading/judge/test_points.py": 363,
    "tests/grading/runs/test_batch.py": 337,
    "tests/hub/": 325,
    "tests/check/test_summary.py": 217,
    "tests/grading/intake/test_exchange.py": 190,
    "tests/grading/test_corpus.py": 176,
    "tests/grading/test_attacks.py": 162,
    "tests/grading/test_cluster.py": 159,
    "tests/grading/test_corpus_claims.py": 154,
    "tests/grading/store/test_gradebook.py": 139,
    "tests/test_formgrader.py": 133,
    "tests/grading/out/test_report.py": 130,
    "tests/grading/sandbox/test_runner.py": 107,
    "tests/grading/judge/test_references.py": 106,
    "tests/grading/runs/test_hosted.py": 106,
    "tests/grading/test_visible.py": 103,
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
