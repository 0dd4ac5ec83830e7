"""Is the Kubernetes manifest (not run here) an Indexed Job whose pods grade one shard each, of as
many shards as it has completions, with the command the cluster test runs on Slurm?"""

import re
from pathlib import Path

import pytest
import yaml

from autograder.__main__ import main
from autograder.grading.runs import hosted

DEPLOY = Path(hosted.__file__).parents[1] / "deploy"


def test_the_kubernetes_indexed_job_grades_shard_index_of_completions(capsys):
    job = yaml.safe_load((DEPLOY / "kubernetes" / "grade-indexed-job.yaml").read_text())
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    command = " ".join(spec["template"]["spec"]["containers"][0]["args"])
    shards = re.search(r'--shard "\$JOB_COMPLETION_INDEX/(\d+)"', command)
    assert shards and int(shards.group(1)) == spec["completions"] == spec["parallelism"]
    assert "python -m autograder grade" in command and "--db" in command and "--references" in command
    # every option it passes is one `grade` knows (argparse exits 2 on an unknown one)
    options = re.findall(r"(--[a-z-]+)", command)
    with pytest.raises(SystemExit):
        main(["grade", "--help"])
    said = capsys.readouterr().out
    assert all(option in said for option in options), [o for o in options if o not in said]
