"""Does a class graded as a Slurm job array (one shard per task) give what one `grade` run gives:
into one PostgreSQL gradebook written by all tasks at once, and as part gradebooks that `merge`
combines? Same scores, statuses and feedback pages.

The test starts a one-node Slurm cluster (slurmctld, slurmd, munge) and a PostgreSQL server on
this machine (``servers.py``) and stops them after. Where Debian's ``slurm-wlm``, ``munge`` or
``postgresql`` are missing it is skipped with the reason, unless ``COURSE_REQUIRE_CLUSTER`` is
set (``.ci/run`` installs them and sets it): then it fails.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.__main__ import main
from autograder.grading.runs import hosted

from .classes import RIGHT, WRONG, outputs, write_class
from .conftest import tiny_source
from .servers import postgres_problem, postgres_server, slurm_cluster, slurm_problem

SCRIPT = Path(hosted.__file__).parents[1] / "deploy" / "slurm" / "grade-array.sbatch"
REPO = Path(hosted.__file__).resolve().parents[3]
# 5 students x 2 assignments, right, wrong and missing answers: 10 submissions over the shards
CLASS = {f"s{i}": {"ex01": RIGHT if i % 3 else WRONG, "ex02": RIGHT if i % 2 else None} for i in range(5)}


def require_cluster() -> None:
    problems = [p for p in (slurm_problem(), postgres_problem()) if p]
    if not problems:
        return
    if os.environ.get("COURSE_REQUIRE_CLUSTER"):
        pytest.fail(f"COURSE_REQUIRE_CLUSTER is set but the cluster test cannot run: {'; '.join(problems)}")
    pytest.skip(f"the cluster test cannot run here: {'; '.join(problems)}")


@pytest.fixture(scope="module")
def course(tmp_path_factory, sandbox_available):
    """The class, its references, and what one `grade` run of it writes (OUT)."""
    require_cluster()
    root = tmp_path_factory.mktemp("cluster")
    solutions, submitted = write_class(tiny_source(), root, CLASS)
    refs = root / "refs.json"
    assert main(["references", "--solutions", str(solutions), "--out", str(refs)]) == 0
    grade = ["grade", str(submitted), "--solutions", str(solutions), "--references", str(refs), "--jobs", "2"]
    assert main([*grade, "--out", str(root / "one-run"), "--no-progress"]) == 0
    return root, solutions, submitted, refs


@pytest.fixture(scope="module")
def cluster(course):
    with slurm_cluster(cpus=4) as env:
        yield env


def run_array(env: dict, logs: Path, tasks: int, submitted: Path, out: Path, *grade_args: str) -> None:
    """``sbatch --wait --array=0-(tasks-1) grade-array.sbatch SUBMITTED OUT ...``, as an instructor
    submits it from the course folder; fails with every task's log when a task fails."""
    logs.mkdir(parents=True, exist_ok=True)
    command = ["sbatch", "--wait", f"--array=0-{tasks - 1}", "--cpus-per-task=1", "--mem=2G"]
    command += ["--output", f"{logs}/task-%a.out", str(SCRIPT), str(submitted), str(out), *grade_args]
    env = dict(env, COURSE_DIR=str(REPO), PYTHON=sys.executable, PYTHONPATH=str(REPO))
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, cwd=REPO)
    said = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(logs.glob("task-*")))
    assert done.returncode == 0, f"{done.stdout}{done.stderr}\n{said}"


def test_a_slurm_array_grades_into_one_postgresql_gradebook_as_one_run_does(course, cluster):
    """4 tasks, each `grade --shard K/4 --db postgresql://...` at once: after `merge --db URL
    --out OUT` writes the views, are grades.csv and every feedback page those of one run?"""
    root, solutions, submitted, refs = course
    out = root / "array-postgresql"
    with postgres_server() as url:
        run_array(
            cluster,
            root / "logs-pg",
            4,
            submitted,
            out,
            "--solutions",
            str(solutions),
            "--references",
            str(refs),
            "--db",
            url,
        )
        assert not (out / "grades.csv").exists()  # a shard writes no view: the others may still be grading
        assert main(["merge", "--db", url, "--out", str(out)]) == 0
    assert outputs(out) == outputs(root / "one-run")


def test_a_slurm_array_into_part_gradebooks_merges_into_one_runs(course, cluster):
    """3 tasks without a server gradebook, each writing OUT/parts/shard-K-of-3.db: does `merge
    PARTS... --db TARGET --out OUT` give one run's grades.csv and feedback pages, and the same
    again when a shard is rerun and merged again?"""
    root, solutions, submitted, refs = course
    out = root / "array-parts"
    run_array(cluster, root / "logs-parts", 3, submitted, out, "--solutions", str(solutions), "--references", str(refs))
    parts = sorted(str(p) for p in (out / "parts").glob("shard-*-of-3.db"))
    assert len(parts) == 3
    target = str(out / "gradebook.db")
    assert main(["merge", *parts, "--db", target, "--out", str(out)]) == 0
    assert outputs(out) == outputs(root / "one-run")
    rerun = dict(cluster, SHARDS="3")
    run_array(rerun, root / "logs-rerun", 1, submitted, out, "--solutions", str(solutions), "--references", str(refs))
    assert main(["merge", *parts, "--db", target, "--out", str(out)]) == 0
    assert outputs(out) == outputs(root / "one-run")
