"""GPU check: measure activation checkpointing for real, and run every lesson and exercise on CUDA.

    python tests/scripts/gpu_check.py --out assets/          # on a machine with CUDA: about 2-3 min on one H200
    python tests/scripts/gpu_check.py --out /tmp/x --dry-run # anywhere: tiny sizes on the CPU, under a minute

Not a pytest test (pyproject keeps pytest out of ``tests/scripts/``; ``tests/test_gpu_check.py`` runs the dry run).
Self-contained: it finds the course root by walking up to the folder holding ``autograder/``, and
needs only torch and the course package; matplotlib, nbclient/nbformat, IPython and the grading
dependencies are optional and what is missing is reported as skipped. Prints progress with
timings, a summary, and ``RESULT: OK`` / ``RESULT: FAILED`` (exit code 0 / 1).

A. **Checkpointing for real** (``autograder.checkpoint_measure.measure_model``; see its NOTE for
   the warm-up: cuBLAS workspace and ``.grad`` tensors are allocated before any measured pass,
   ``reset_peak_memory_stats`` right before it). For each model, without checkpointing and with
   ``checkpoint_sequential(use_reentrant=False)`` in every segment count 1 .. n:

   * ``16 x Linear(4096)-Tanh``, batch 4096 (one activation: 64 MiB),
   * ``16 x transformer MLP`` (x + Linear(4d, d)(GELU(Linear(d, 4d)(LayerNorm(x)))), d = 1024,
     8192 tokens (32 MiB per activation, 128 MiB inside a block),
   * torchvision's ``resnet18`` (no weights downloaded), split into its 11 top-level modules, on
     128 images 3 x 224 x 224 -- or, without torchvision, a course CNN (stem, 8 blocks
     Conv(64, 64, 3)-BatchNorm-ReLU, pooling, Linear) on 128 images 64 x 64.

   With ``--dry-run`` (automatic without CUDA) the same three kinds are tiny and run on the CPU,
   where the allocator columns stay empty. Writes ``OUT/checkpointing_gpu.csv`` (on the CPU:
   ``OUT/checkpointing_dry_run.csv``, so that a dry run never passes for GPU figures), one row per
   model and segment count, columns ``autograder.checkpoint_measure.COLUMNS``:

   device, device_name, torch_version, cuda_version (the machine); model, blocks (n), input_bytes;
   segments (0 = none), checkpointed (segments >= 2); peak_allocated_bytes (max_memory_allocated
   during one forward + backward minus memory_allocated before it), baseline_allocated_bytes,
   reserved_bytes (memory_reserved after); saved_peak_bytes (SavedTensorMeter's peak: the
   prediction); seconds_median, seconds_min (CUDA events; repeats passes).

   and the plot ``OUT/checkpointing_gpu.png`` (``checkpointing_dry_run.png``): peak and prediction,
   and time, against segments, with the √n line (``autograder.figures.plot``).
B. **Lessons and exercises on CUDA** (skipped on a dry run, or with ``--skip-notebooks``):
   1. every lesson ``notebooks/*.ipynb`` and every solution ``solutions/*/*.ipynb`` is executed
      (nbclient, else IPython cell by cell in a subprocess); a cell fails when it raises (unless
      tagged ``raises-exception``); the lessons' text outputs (cells not tagged
      ``nbval-ignore-output``) are compared with the stored CPU outputs after ``tests/sanitize.cfg``.
      Report: ``OUT/gpu_check_notebooks.json``.
   2. a probe: does a grading fork (``autograder.grading.sandbox.runner.run_cells``, default memory limit
      and none) see CUDA? (CUDA reserves much address space, which the limit may refuse.)
   3. the demo class (solutions, blank releases and every typical mistake) is graded with
      ``grade_class``; each submission must fail exactly the tests the demo class expects (on the
      CPU). Report: ``OUT/gpu_check_grading.json``.
``--cpu-figures`` also rewrites ``OUT/checkpointing_cpu.csv/.png`` (saved bytes of 16 blocks
Linear(64)-Tanh on a [32, 64] batch, every segment count; a few seconds).
"""

from __future__ import annotations

import argparse
import configparser
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "autograder" / "__init__.py").is_file())
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from torch import nn  # noqa: E402

from autograder.checkpoint_measure import COLUMNS, measure_model  # noqa: E402

START = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - START:6.1f} s] {message}", flush=True)


# ---------------------------------------------------------------- A. checkpointing
class TransformerMLP(nn.Module):
    """x + Linear(4d, d)(GELU(Linear(d, 4d)(LayerNorm(x)))): the MLP half of a transformer block."""

    def __init__(self, d: int):
        super().__init__()
        self.norm, self.up = nn.LayerNorm(d), nn.Linear(d, 4 * d)
        self.act, self.down = nn.GELU(), nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(self.act(self.up(self.norm(x))))


def _conv_model(channels: int) -> tuple[str, nn.Sequential]:
    blocks = [
        nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU())
        for _ in range(8)
    ]
    return "course CNN (stem, 8 x Conv-BN-ReLU, head)", nn.Sequential(
        nn.Conv2d(3, channels, 3, padding=1), *blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10)
    )


def models(device: torch.device, dry: bool) -> list[tuple[str, nn.Sequential, torch.Tensor]]:
    """(label, model, input) triples, float32 on ``device``, fixed seeds (see the docstring)."""
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    width, rows, d, tokens, images, side = (64, 64, 32, 64, 4, 16) if dry else (4096, 4096, 1024, 8192, 128, 224)
    out = [
        (
            f"16 x Linear({width})-Tanh, batch {rows}",
            nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.Tanh()) for _ in range(16)]),
            torch.randn(rows, width, generator=gen),
        ),
        (
            f"16 x transformer MLP, d={d}, {tokens} tokens",
            nn.Sequential(*[TransformerMLP(d) for _ in range(16)]),
            torch.randn(tokens, d, generator=gen),
        ),
    ]
    try:
        import torchvision

        net = torchvision.models.resnet18(weights=None)
        cnn = (
            "resnet18 (torchvision, 11 modules)",
            nn.Sequential(
                net.conv1,
                net.bn1,
                net.relu,
                net.maxpool,
                net.layer1,
                net.layer2,
                net.layer3,
                net.layer4,
                net.avgpool,
                nn.Flatten(1),
                net.fc,
            ),
        )
    except ImportError:
        cnn = _conv_model(8 if dry else 64)
        side = 16 if dry else 64
    out.append((f"{cnn[0]}, {images} images {side}x{side}", cnn[1], torch.randn(images, 3, side, side, generator=gen)))
    return [(label, model.to(device), x.to(device)) for label, model, x in out]


def measure_all(device: torch.device, dry: bool, repeats: int) -> tuple[list[dict], list[str]]:
    """Rows of every model, and the invariants that failed (peak with checkpointing above plain)."""
    rows, problems = [], []
    for label, model, x in models(device, dry):
        log(f"A. {label}: {len(model)} blocks, input {x.nbytes / 2**20:.1f} MiB")
        mine = measure_model(label, model, x, repeats=repeats, progress=log)
        rows += mine
        key = "peak_allocated_bytes" if mine[0]["peak_allocated_bytes"] is not None else "saved_peak_bytes"
        if min(r[key] for r in mine if r["checkpointed"]) > mine[0][key]:
            problems.append(f"{label}: every checkpointed {key} exceeds the plain one")
        del model, x
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return rows, problems


def write_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    """One line per row; floats with 6 decimals, None as an empty cell."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            writer.writerow(
                {k: "" if r[k] is None else f"{r[k]:.6f}" if isinstance(r[k], float) else r[k] for k in columns}
            )


def plot(rows: list[dict], path: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from autograder.figures import plot as figures_plot
    except ImportError as error:
        return f"skipped the PNG ({error})"
    plt.close(figures_plot(rows, path))
    return f"wrote {path.name}"


def cpu_figures(out: Path) -> str:
    """Rewrite OUT/checkpointing_cpu.csv/.png (saved bytes; see the docstring)."""
    from autograder.explore.memory import segment_rows, stack
    from autograder.figures import cpu_rows

    torch.set_num_threads(1)  # small tensors: steadier timings
    rows = segment_rows(16, "tanh", width=64, batch=32)
    model, x = stack(16), torch.randn(32, 64, generator=torch.Generator().manual_seed(1))
    for r in rows:
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            (
                model(x)
                if r["segments"] == 0
                else torch.utils.checkpoint.checkpoint_sequential(model, r["segments"], x, use_reentrant=False)
            ).sum().backward()
            best = min(best, time.perf_counter() - start)
        r.update(peak_saved_bytes=r.pop("peak_bytes"), seconds=best, checkpointed=r["segments"] >= 2)
    write_csv(
        out / "checkpointing_cpu.csv",
        rows,
        ["segments", "peak_saved_bytes", "activations", "block_runs", "seconds", "checkpointed"],
    )
    return plot(cpu_rows(out / "checkpointing_cpu.csv"), out / "checkpointing_cpu.png")


# ---------------------------------------------------------------- B1. notebooks
def _sanitizers() -> list[tuple[re.Pattern, str]]:
    """The regex/replacement pairs of tests/sanitize.cfg, in order."""
    parser = configparser.ConfigParser(interpolation=None, comment_prefixes=("#",))
    parser.read(ROOT / "tests" / "sanitize.cfg", encoding="utf-8")
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


def _text(outputs: list, stdout_only: bool = False) -> str:
    """The comparable text of a cell's outputs: streams joined per name, then text/plain results
    (widget views left out; ``stdout_only``: the stdout stream alone)."""
    streams: dict[str, str] = {}
    rich = []
    for out in outputs:
        if stdout_only and out.get("name") != "stdout":
            continue
        if out.get("output_type") == "stream":
            text = out.get("text", "")
            name = out.get("name", "stdout")
            streams[name] = streams.get(name, "") + ("".join(text) if isinstance(text, list) else text)
        elif out.get("output_type") in ("execute_result", "display_data"):
            data = out.get("data", {})
            if "text/plain" in data and not any(k.startswith("application/vnd.jupyter.widget") for k in data):
                plain = data["text/plain"]
                rich.append("".join(plain) if isinstance(plain, list) else plain)
    return "\n".join([f"[{k}]\n{v}" for k, v in sorted(streams.items())] + rich)


def _sanitize(text: str, rules) -> str:
    for pattern, replace in rules:
        text = pattern.sub(replace, text)
    return text


_CELL_RUNNER = r"""
import json, sys
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
cells = json.load(sys.stdin)
shell = InteractiveShell.instance()
report = []
for source in cells:
    with capture_output() as captured:
        result = shell.run_cell(source, store_history=True)
    failure = result.error_before_exec or result.error_in_exec
    outputs = [{"output_type": "stream", "name": n, "text": t}
               for n, t in (("stdout", captured.stdout), ("stderr", captured.stderr)) if t]
    outputs += [{"output_type": "display_data", "data": {k: v for k, v in o.data.items() if k == "text/plain"}}
                for o in captured.outputs]
    report.append({"error": None if failure is None else f"{type(failure).__name__}: {failure}"[:300],
                   "outputs": outputs})
print("@@REPORT@@" + json.dumps(report))
"""


def _execute(path: Path, timeout: int) -> tuple[str, list[dict]]:
    """Execute a notebook; return (how, [{"error": str or None, "outputs": [...]}] per code cell)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), MPLBACKEND="Agg")
    try:
        import nbclient
        import nbformat
    except ImportError:
        nbclient = None
    if nbclient is not None:
        os.environ.update(env)
        node = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        client = nbclient.NotebookClient(
            node,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(path.parent)}},
        )
        client.execute()
        cells = []
        for cell in node.cells:
            if cell.cell_type != "code":
                continue
            errors = [o for o in cell.outputs if o.get("output_type") == "error"]
            cells.append(
                {
                    "error": f"{errors[0]['ename']}: {errors[0]['evalue']}"[:300] if errors else None,
                    "outputs": [dict(o) for o in cell.outputs if o.get("output_type") != "error"],
                }
            )
        return "nbclient", cells
    nb = json.loads(path.read_text(encoding="utf-8"))
    sources = [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in nb["cells"]
        if c["cell_type"] == "code"
    ]
    done = subprocess.run(
        [sys.executable, "-c", _CELL_RUNNER],
        input=json.dumps(sources),
        text=True,
        capture_output=True,
        cwd=path.parent,
        env=env,
        timeout=timeout,
    )
    marker = done.stdout.rfind("@@REPORT@@")
    if marker < 0:
        raise RuntimeError(f"the IPython runner failed: {(done.stderr or done.stdout)[-500:]}")
    return "IPython", json.loads(done.stdout[marker + len("@@REPORT@@") :])


def check_notebook(rel: str, timeout: int = 300) -> dict:
    """Execute one notebook (path relative to the root) and compare; one summary dict."""
    path, start = ROOT / rel, time.perf_counter()
    try:
        how, cells = _execute(path, timeout)
    except Exception as error:  # noqa: BLE001 -- report and go on with the next notebook
        return dict(
            notebook=rel,
            status=f"NOT RUN ({type(error).__name__}: {str(error)[:200]})",
            seconds=time.perf_counter() - start,
            problems=[],
            diffs=[],
        )
    rules = _sanitizers()
    stored = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    problems, diffs = [], []
    for index, (cell, ran) in enumerate(zip(stored, cells)):
        tags = cell.get("metadata", {}).get("tags", [])
        label = cell.get("id") or cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or index
        if "raises-exception" in tags:
            if ran["error"] is None:
                problems.append(f"cell {label}: expected an exception, none raised")
        elif ran["error"] is not None:
            problems.append(f"cell {label}: {ran['error']}")
        elif rel.startswith("notebooks/") and "nbval-ignore-output" not in tags:
            # Without a kernel (IPython runner) figures are not displayed: compare stdout only.
            want = _sanitize(_text(cell.get("outputs", []), how != "nbclient"), rules)
            got = _sanitize(_text(ran["outputs"], how != "nbclient"), rules)
            if want != got:
                diffs.append(f"cell {label}:\n      stored: {want[:300]!r}\n      on GPU: {got[:300]!r}")
    status = (
        "ok" if not problems and not diffs else f"{len(problems)} failing cell(s), {len(diffs)} output difference(s)"
    )
    return dict(
        notebook=rel, status=f"{status} ({how})", seconds=time.perf_counter() - start, problems=problems, diffs=diffs
    )


def run_notebooks(out: Path, workers: int) -> list[dict]:
    """Every lesson and solution, ``workers`` at a time (each in its own kernel process)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    names = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    names += [str(p.relative_to(ROOT)) for p in sorted((ROOT / "solutions").glob("*/*.ipynb"))]
    rows = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        for row in pool.map(check_notebook, names):
            log(f"B1. {row['notebook']}: {row['status']} ({row['seconds']:.1f} s)")
            for line in row["problems"] + row["diffs"]:
                print(f"      {line}")
            rows.append(row)
    (out / "gpu_check_notebooks.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return rows


# ---------------------------------------------------------------- B2, B3. grading
_PROBE = r"""
import json, sys, tempfile
from autograder.grading.sandbox.runner import run_cells
cell = ("import torch\nok = torch.cuda.is_available()\n"
        "print(ok, torch.ones(2, device='cuda').sum().item() if ok else '-')")
report = {}
for name, limit in (("default memory limit", 2 * 1024 ** 3), ("no memory limit", None)):
    with tempfile.TemporaryDirectory() as d:
        run = run_cells([cell], d, memory_limit=limit)
    c = run.cells[0]
    text = "".join(o.get("text", "") for o in c.outputs if o.get("output_type") == "stream").strip()
    report[name] = f"{run.status}; prints {text!r}" + (f"; {c.error[0]}: {c.error[1][:150]}" if c.error else "")
print("@@PROBE@@" + json.dumps(report))
"""


def probe_grading_fork() -> dict:
    """What a grading fork sees of CUDA, with the default memory limit and without one (run in a
    fresh process: a fork of a process that has used CUDA cannot use it)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], text=True, capture_output=True, cwd=ROOT, env=env, timeout=300
    )
    marker = done.stdout.rfind("@@PROBE@@")
    if marker < 0:
        return {"probe": f"FAILED: {(done.stderr or done.stdout)[-300:]}"}
    return json.loads(done.stdout[marker + len("@@PROBE@@") :])


def grade_demo_class(out: Path, jobs: int) -> tuple[str, list[str]]:
    """Grade the demo class; (status, mismatches against the expected failures)."""
    from autograder.grading.runs.batch import grade_class
    from autograder.grading.runs.demo import build_demo_class

    with tempfile.TemporaryDirectory(prefix="gpu-check-demo-") as tmp:
        expected = build_demo_class(Path(tmp) / "submitted")
        rows = grade_class(Path(tmp) / "submitted", Path(tmp) / "out", jobs=jobs, progress=False)
    mismatches = []
    for r in rows:
        want = set(expected[(r["student_id"], r["assignment_id"])]["fails"])
        got = set(r["failed"].split())
        if r["status"] != "graded" or want != got:
            mismatches.append(
                f"{r['student_id']}/{r['assignment_id']}: status {r['status']!r}, "
                f"failed {sorted(got)}, expected {sorted(want)}"
            )
    (out / "gpu_check_grading.json").write_text(
        json.dumps(dict(rows=rows, mismatches=mismatches), indent=1), encoding="utf-8"
    )
    return f"{len(rows)} submissions, {len(mismatches)} unexpected", mismatches


# ---------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        help="folder for the CSV, PNG and JSON files (default: assets/ on CUDA, a new temporary folder on a dry run)",
    )
    parser.add_argument("--dry-run", action="store_true", help="tiny sizes on the CPU (automatic without CUDA)")
    parser.add_argument("--skip-notebooks", action="store_true", help="skip part B (lessons, exercises, grading)")
    parser.add_argument("--cpu-figures", action="store_true", help="also rewrite OUT/checkpointing_cpu.csv/.png")
    parser.add_argument("--repeats", type=int, help="timed passes per segment count (default 5; 3 on a dry run)")
    parser.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1), help="parallel notebooks/graders")
    args = parser.parse_args(argv)
    cuda = torch.cuda.is_available()
    dry = args.dry_run or not cuda
    out = Path(args.out) if args.out else (Path(tempfile.mkdtemp(prefix="gpu-check-")) if dry else ROOT / "assets")
    out.mkdir(parents=True, exist_ok=True)
    device = torch.device("cpu" if dry else "cuda")
    if dry:
        torch.set_num_threads(1)  # tiny tensors: one thread is faster and steadier
    log(
        f"torch {torch.__version__}, CUDA {torch.version.cuda}, available: {cuda}"
        + (f" ({torch.cuda.get_device_name()})" if cuda else "")
        + f"; {'DRY RUN on the CPU' if dry else 'on CUDA'};"
        f" writing to {out}"
    )
    summary, failed = [], False

    def record(name, status, seconds=0.0, bad=False):
        nonlocal failed
        failed |= bad
        summary.append((name, status, seconds))

    start = time.perf_counter()
    try:
        rows, problems = measure_all(device, dry, args.repeats or (3 if dry else 5))
        stem = "checkpointing_dry_run" if dry else "checkpointing_gpu"
        write_csv(out / f"{stem}.csv", rows, COLUMNS)
        note = plot(rows, out / f"{stem}.png")
        log(f"A. wrote {stem}.csv; {note}")
        from autograder.figures import summary_text

        print(summary_text(rows))
        record(
            "A. checkpointing",
            f"{len(rows)} rows in {stem}.csv; {note}" + "".join(f"; {p}" for p in problems),
            time.perf_counter() - start,
            bool(problems),
        )
    except Exception as error:  # noqa: BLE001 -- report it in the summary
        record(
            "A. checkpointing", f"FAILED: {type(error).__name__}: {str(error)[:300]}", time.perf_counter() - start, True
        )

    if args.cpu_figures:
        start = time.perf_counter()
        record("CPU figures", cpu_figures(out), time.perf_counter() - start)

    if dry or args.skip_notebooks:
        why = "dry run" if dry else "--skip-notebooks"
        record("B. lessons, exercises, grading on CUDA", f"skipped ({why})")
    else:
        start = time.perf_counter()
        for row in run_notebooks(out, min(args.jobs, 4)):
            record(f"B1. {row['notebook']}", row["status"], row["seconds"], not row["status"].startswith("ok"))
        start = time.perf_counter()
        for name, status in probe_grading_fork().items():
            record(f"B2. grading fork, {name}", status, bad="True" not in status)
        log("B2. probe done")
        start = time.perf_counter()
        try:
            status, mismatches = grade_demo_class(out, args.jobs)
            for line in mismatches:
                print(f"      {line}")
            record("B3. demo class graded", status, time.perf_counter() - start, bool(mismatches))
        except ImportError as error:
            record("B3. demo class graded", f"skipped ({error})", time.perf_counter() - start)
        except Exception as error:  # noqa: BLE001
            record(
                "B3. demo class graded",
                f"FAILED: {type(error).__name__}: {str(error)[:300]}",
                time.perf_counter() - start,
                True,
            )

    print("\nSummary")
    width = max(len(name) for name, _, _ in summary)
    for name, status, seconds in summary:
        print(f"  {name:<{width}}  {status}" + (f"  ({seconds:.1f} s)" if seconds else ""))
    log(f"RESULT: {'FAILED' if failed else 'OK'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
