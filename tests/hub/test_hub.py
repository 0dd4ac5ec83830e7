"""On a real JupyterHub with real accounts (``hub.Hub``): does a learner who submits through
nbgrader's exchange get the grade and the feedback page within seconds, from the grading service
the hub runs as the instructor, with the attempt limit held, nobody reading another's results,
nothing lost when the service is killed mid-burst, and a hostile submission costing nobody else?

Learners run nbgrader's own commands as themselves (``runuser``): ``fetch_assignment``,
``submit`` and ``fetch_feedback``, with the configuration every account reads. The browser test
(``test_browser.py``) submits from the Assignments tab of a learner's own JupyterLab.
"""

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from autograder.grading.mistakes import MISTAKES

from .hub import COURSE_ID, VENV, all_released, fetched, hand_in, queue_rows, released

WITHIN = 30  # seconds from submit to the page in the learner's hands, on a busy shared 2-core machine

pytestmark = pytest.mark.hub


def test_each_learner_has_the_grade_and_page_within_seconds(hub, demo):
    """Ada (correct), bob (a typical mistake) and grace (blank) submit ex01: does each have, within
    WITHIN seconds, the page in their own Assignments folder (``fetch_feedback``, as themselves)
    with the score the grader gives that notebook, and is the gradebook's row that score?"""
    folder, expected = demo
    mistake = next(iter(MISTAKES["ex01_graph"]))
    who = {"ada": "correct", "bob": mistake, "grace": "blank"}
    threads = [threading.Thread(target=hand_in, args=(hub, role, "ex01_graph", folder / kind / "ex01_graph" /
                                                      "ex01_graph.ipynb")) for role, kind in who.items()]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    submitted = time.monotonic()  # every submit has returned: the page must follow within WITHIN
    for role in who:
        hub.wait_for(lambda role=role: all_released(hub, role, "ex01_graph"), WITHIN, f"{role}'s page")
    assert time.monotonic() - submitted < WITHIN
    pages = {}
    fetching = [threading.Thread(target=lambda role=role: pages.setdefault(role, fetched(hub, role, "ex01_graph")))
                for role in who]  # fmt: skip
    for thread in fetching:
        thread.start()
    for thread in fetching:
        thread.join()
    for role, kind in who.items():
        (page,) = pages[role]
        (row,) = queue_rows(hub, student=hub.names[role], assignment="ex01_graph")
        assert row["outcome"] == "graded" and row["number"] == 1
        failed = {q["grade_id"] for q in json.loads(row["questions"]) if q["score"] < q["points"]}
        assert failed == set(expected[(kind, "ex01_graph")]["fails"])
        assert page.read_bytes() == released(hub, role, "ex01_graph")[0].read_bytes()
        assert f"{row['score']:g} / {row['max_score']:g}" in page.read_text()


def test_a_learner_runs_the_fetched_exercise_and_its_checks_in_the_hubs_environment(hub, demo):
    """Kim fetches ex01, saves her answers (one question with a typical mistake) and runs the
    notebook top to bottom as herself, in her own folder, with the environment the hub gives her
    server (the README's: the course's package installed into it; no course folder near her): does
    the set-up cell import the course's ``autograder`` from that environment, does every check cell
    run its check (OK for her right answers, the mistake's cause for the wrong one, never a
    ModuleNotFoundError or NameError), and does ``check.summary()`` count them?"""
    import nbformat

    folder, expected = demo
    mistake = next(iter(MISTAKES["ex01_graph"]))
    fails = MISTAKES["ex01_graph"][mistake]["fails"]
    assert set(fails) == set(expected[(mistake, "ex01_graph")]["fails"])
    name = hub.names["kim"]
    mine = hub.home(name) / "ex01_graph" / "ex01_graph.ipynb"
    answers = folder / mistake / "ex01_graph" / "ex01_graph.ipynb"
    hub.nbgrader(name, ["fetch_assignment", "ex01_graph", "--course", COURSE_ID], ["copy", str(answers), str(mine)])
    where = hub.run_as(name, "cd ex01_graph && python -c 'import autograder; print(autograder.__file__)'")
    assert where.stdout.startswith(f"{VENV}/lib/"), where.stdout
    hub.run_as(name, "cd ex01_graph && jupyter nbconvert --to notebook --execute --allow-errors --output ran "
                     "--ExecutePreprocessor.timeout=300 ex01_graph.ipynb", timeout=600)  # fmt: skip
    ran = nbformat.read(mine.parent / "ran.ipynb", as_version=4)
    said = {}  # grade_id: (the errors it raised, what it printed)
    for cell in ran.cells:
        if cell.cell_type == "code" and "grade_id" in cell.metadata.get("nbgrader", {}):
            errors = [(o.ename, o.evalue) for o in cell.outputs if o.output_type == "error"]
            said[cell.metadata.nbgrader.grade_id] = (errors, "".join(o.get("text", "") for o in cell.outputs))
    assert said["setup"] == ([], ""), said["setup"]
    checks = [c.metadata.nbgrader.grade_id for c in ran.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert checks and set(fails) < set(checks)
    for check in checks:
        errors, printed = said[check]
        if check in fails:
            ((ename, evalue),) = errors
            assert ename == "CheckFailed" and fails[check] in evalue, (check, errors)
        else:
            assert errors == [] and printed.startswith("OK"), (check, said[check])
    assert not [e for errors, _ in said.values() for e in errors if e[0] in ("ModuleNotFoundError", "NameError")]
    passing = len(checks) - len(fails)
    assert f"{passing} of {len(checks)} questions pass here" in said["where_you_stand"][1], said["where_you_stand"]


def with_answer(demo_folder: Path, code: str, name: str) -> Path:
    """The demo's correct ex01 with its first answer cell replaced by ``code`` (a hostile learner)."""
    import nbformat

    nb = nbformat.read(demo_folder / "correct" / "ex01_graph" / "ex01_graph.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code")
    cell.source = code
    path = demo_folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    os.chmod(path, 0o644)
    return path


def test_the_attempt_limit_holds(hub, demo):
    """The README's configuration allows 3 attempts: does eve's fourth submission stay ungraded,
    kept and marked, with a page in her Assignments folder that says why?"""
    folder, _ = demo
    hand_in(hub, "eve", "ex01_graph", folder / "blank" / "ex01_graph" / "ex01_graph.ipynb", times=4)
    hub.wait_for(lambda: len([p for p in released(hub, "eve", "ex01_graph") if p]) == 4, WITHIN * 2, "eve's pages")
    rows = queue_rows(hub, student=hub.names["eve"], assignment="ex01_graph")
    assert [(r["outcome"], r["number"]) for r in rows] == [("graded", 1), ("graded", 2), ("graded", 3),
                                                           ("over limit", None)]  # fmt: skip
    pages = [p.read_text() for p in fetched(hub, "eve", "ex01_graph")]
    assert sum("all 3 attempts used" in page for page in pages) == 1
    assert (hub.course / "grading-service" / "attempts" / rows[3]["id"] / hub.names["eve"] / "ex01_graph").is_dir()


def test_nobody_reads_anothers_results(hub, demo):
    """Mal and bob each submit ex02. Through the hub's login, does mal's page and API show only
    mal's attempts, is bob's feedback page refused to mal (404) and given to bob and the
    instructor, does the instructor see both, and can mal list neither the exchange's inbound nor
    its feedback folder?"""
    folder, _ = demo
    for role in ("mal", "bob"):
        hand_in(hub, role, "ex02_leaves", folder / "correct" / "ex02_leaves" / "ex02_leaves.ipynb")
    for role in ("mal", "bob"):
        hub.wait_for(lambda role=role: all_released(hub, role, "ex02_leaves"), WITHIN, f"{role}'s page")
    (bobs,) = queue_rows(hub, student=hub.names["bob"], assignment="ex02_leaves")[:1]
    service = f"{hub.url}/services/grader/"
    mal, bob, teacher = hub.login("mal"), hub.login("bob"), hub.login("teacher")
    mine = mal.get(service + "api/attempts", timeout=60).json()
    assert mine["user"] == hub.names["mal"] and not mine["instructor"]
    assert {a["student"] for a in mine["attempts"]} == {hub.names["mal"]}
    assert hub.names["bob"] not in mal.get(service, timeout=60).text
    assert mal.get(service + f"feedback/{bobs['id']}", timeout=60).status_code == 404
    assert bob.get(service + f"feedback/{bobs['id']}", timeout=60).status_code == 200
    assert teacher.get(service + f"feedback/{bobs['id']}", timeout=60).status_code == 200
    everyone = teacher.get(service + "api/attempts", timeout=60).json()
    assert everyone["instructor"] and {hub.names["mal"], hub.names["bob"]} <= {
        a["student"] for a in everyone["attempts"]
    }
    import requests

    anonymous = requests.get(service + "api/attempts", timeout=60, allow_redirects=False)
    assert anonymous.status_code in (302, 403) and "token" not in anonymous.text
    for folder in ("inbound", "feedback"):
        listing = hub.run_as(hub.names["mal"], f"ls {hub.exchange / COURSE_ID / folder}", check=False)
        assert listing.returncode != 0 and "Permission denied" in listing.stderr


def test_a_service_killed_mid_burst_loses_nothing(hub, demo):
    """Ada, bob and grace each submit ex02 four times at once; the service is killed with SIGKILL
    as soon as the first is graded, and the hub starts it again. Is every submission graded and
    its page released, each recorded once (attempts 1-4 of each learner, one row per folder)?"""
    folder, _ = demo
    roles = ("ada", "bob", "grace")
    before = {role: len(queue_rows(hub, student=hub.names[role], assignment="ex02_leaves")) for role in roles}
    first = hub.service_pid()
    threads = [threading.Thread(target=hand_in, args=(hub, role, "ex02_leaves", folder / ("correct", "blank")[i % 2]
                                                      / "ex02_leaves" / "ex02_leaves.ipynb", 4))
               for i, role in enumerate(roles)]  # fmt: skip
    for thread in threads:
        thread.start()
    done = lambda: [r for r in queue_rows(hub, assignment="ex02_leaves", state="done") if r["student"] in  # noqa: E731
                    {hub.names[x] for x in roles}]  # fmt: skip
    hub.wait_for(lambda: len(done()) > sum(before.values()), WITHIN * 2, "a first graded submission")
    os.kill(first, signal.SIGKILL)
    killed_at = len(done())
    for thread in threads:
        thread.join()
    hub.wait_for(lambda: (pid := hub.service_pid()) and pid != first, 60, "the hub starting the service again")
    total = sum(before.values()) + 12
    hub.wait_for(lambda: len(done()) == total, WITHIN * 4, "every submission graded after the restart")
    assert killed_at < total, "the burst was over before the kill: nothing was tested"
    for role in roles:
        rows = queue_rows(hub, student=hub.names[role], assignment="ex02_leaves")
        assert [r["number"] for r in rows] == list(range(1, len(rows) + 1)) and len(rows) == before[role] + 4
        assert len({r["inbound"] for r in rows}) == len(rows)
        hub.wait_for(lambda role=role: all_released(hub, role, "ex02_leaves"), WITHIN, f"{role}'s pages")
    finished = [line for line in hub.log_text().splitlines() if "/ex02_leaves attempt " in line]
    assert len(finished) == len(set(finished)), "a submission was recorded twice"


def test_a_hostile_submission_costs_nobody_else(hub, demo):
    """Mal hands in a fork bomb, zed a notebook that prints 180 MB, and mal also plants
    folders in the exchange: one named with terminal escapes, a link to /etc, and one that names
    grace as its student. Meanwhile grace submits. Does grace get her page within WITHIN seconds,
    are the hostile notebooks graded with a status (the service still the same process), the
    planted folders refused, and does grace keep her attempts?"""
    folder, _ = demo
    pid = hub.service_pid()
    bomb = with_answer(folder, "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
                       "bomb")  # fmt: skip
    flood = with_answer(folder, "print('spam' * 25_000_000)\nprint('and more' * 10_000_000)", "flood")
    grace = hub.names["grace"]
    graces = len(queue_rows(hub, student=grace, assignment="ex01_graph"))
    inbound = hub.exchange / COURSE_ID / "inbound"
    forged = f"{inbound}/{grace}+ex01_graph+forged+z"
    plant = (
        f"mkdir {inbound}/$'\\e]0;owned\\a+ex01_graph+t+x' && "
        f"ln -s /etc {inbound}/{hub.names['mal']}+ex01_graph+link+y && "
        f"mkdir {forged} && cp {bomb} {forged}/ex01_graph.ipynb && echo secret > {forged}/submission_secret.txt"
        f" && chmod 777 {forged}"
    )
    hub.run_as(hub.names["mal"], plant)
    hostile = [threading.Thread(target=hand_in, args=(hub, role, "ex01_graph", notebook))
               for role, notebook in (("mal", bomb), ("zed", flood))]  # fmt: skip
    for thread in hostile:
        thread.start()
    hand_in(hub, "grace", "ex01_graph", folder / "correct" / "ex01_graph" / "ex01_graph.ipynb")
    submitted = time.monotonic()
    hub.wait_for(lambda: len([p for p in released(hub, "grace", "ex01_graph") if p]) == graces + 1, WITHIN,
                 "grace's page beside the hostile submissions")  # fmt: skip
    assert time.monotonic() - submitted < WITHIN
    for thread in hostile:
        thread.join()
    rows = {}
    for role in ("mal", "zed"):
        hub.wait_for(lambda role=role: all_released(hub, role, "ex01_graph"), 120, f"{role}'s page")
        (rows[role],) = queue_rows(hub, student=hub.names[role], assignment="ex01_graph", outcome="graded")
    assert "timeout" in rows["mal"]["status"], rows["mal"]["status"]  # the bomb's cell, left out; the rest graded
    assert rows["zed"]["score"] < rows["zed"]["max_score"]
    (flooded,) = released(hub, "zed", "ex01_graph")
    assert flooded.stat().st_size < 8_000_000  # the page is bounded, whatever was printed
    refused = {r["reason"] for r in queue_rows(hub, outcome="refused")}
    assert {"refused: not a safe id", "refused: not a folder (a link or a file)"} <= refused
    assert f"refused: handed in by {hub.names['mal']}, not by {grace}" in refused
    rows = queue_rows(hub, student=grace, assignment="ex01_graph", outcome="graded")
    assert len(rows) == graces + 1 and rows[-1]["score"] == rows[-1]["max_score"]
    assert hub.service_pid() == pid
    assert "\x1b]0;owned" not in hub.log_text()  # the planted name reached the log escaped
