"""GPU check of chapters 7 and 8: run their notebooks on CUDA, and measure checkpointing for real.

    python tests/gpu_check.py --out assets/

Not a pytest test (pytest collects ``test_*.py`` only): a standalone script for a machine with a GPU,
which also runs, more briefly, on a machine without one. No interactive input; it prints a summary
table and exits with 1 when something failed.

1. **Notebooks** (CUDA only). Executes ``notebooks/07_graph_memory.ipynb``,
   ``notebooks/08_checkpointing.ipynb`` and the solutions ``solutions/ex07_memory`` and
   ``solutions/ex08_checkpoint`` (whose hidden tests then run their CUDA branches) with nbclient, or,
   without nbclient, cell by cell in IPython in a subprocess. A cell fails when it raises (other than
   a cell tagged ``raises-exception``, which must raise). For the lessons, the text output of every
   cell not tagged ``nbval-ignore-output`` is compared with the stored (CPU) output, sanitized with
   ``tests/sanitize.cfg``: the lessons promise the same printed output on both devices (without
   nbclient, only what the cells print on stdout is compared).
2. **Checkpointing on the GPU** (CUDA only). A stack of 16 transformer-like MLP blocks (LayerNorm,
   Linear(d, 4d), GELU, Linear(4d, d), residual; d = 1024 on 8192 tokens: one activation is 32 MiB)
   and, for the √n rule, 16 blocks Linear(4096, 4096)-Tanh on 8192 rows (128 MiB per activation):
   the peak bytes above the start of one forward and backward (``cuda_memory().peak_delta``, the
   ``.grad`` tensors allocated beforehand) and its best time in seconds, without checkpointing
   (segments 0) and with ``checkpoint_sequential`` in 1, 2, 4, 8 and 16 segments. Writes
   ``OUT/checkpointing_gpu.csv`` (columns gpu_name, segments, peak_bytes, seconds, checkpointed,
   model; ``checkpointed`` is True when at least one segment is recomputed, so not for 0 or 1) and
   ``OUT/checkpointing_gpu.png``.
3. **Checkpointing on the CPU** (always; a few seconds). The saved-bytes peak over forward and
   backward (``SavedTensorMeter``, see ``autograder.explore_memory.checkpoint_peak``) of 16 blocks
   Linear(64, 64)-Tanh on a [32, 64] batch, for every segment count, and the time of one forward and
   backward: ``OUT/checkpointing_cpu.csv`` (columns segments, peak_saved_bytes, activations,
   block_runs, seconds, checkpointed) and ``OUT/checkpointing_cpu.png``.

Optional packages (nbclient, IPython, matplotlib) are imported only where used; what is missing is
reported and skipped. On one H200 the whole run takes about 1 to 2 minutes.
"""
from __future__ import annotations

import argparse
import configparser
import csv
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.checkpoint import checkpoint_sequential  # noqa: E402

LESSONS = ["notebooks/07_graph_memory.ipynb", "notebooks/08_checkpointing.ipynb"]
SOLUTIONS = ["solutions/ex07_memory/ex07_memory.ipynb", "solutions/ex08_checkpoint/ex08_checkpoint.ipynb"]
SEGMENTS = [0, 1, 2, 4, 8, 16]


# ---------------------------------------------------------------- 1. notebooks
def _sanitizers() -> list[tuple[re.Pattern, str]]:
    """The regex/replacement pairs of tests/sanitize.cfg, in order."""
    parser = configparser.ConfigParser(interpolation=None, comment_prefixes=("#",))
    parser.read(ROOT / "tests" / "sanitize.cfg", encoding="utf-8")
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


def _text(outputs: list, stdout_only: bool = False) -> str:
    """The comparable text of a cell's outputs: streams joined per name, then text/plain results
    (``stdout_only``: the stdout stream alone)."""
    streams: dict[str, str] = {}
    rich = []
    for out in outputs:
        if stdout_only and out.get("name") != "stdout":
            continue
        if out.get("output_type") == "stream":
            text = out.get("text", "")
            streams[out.get("name", "stdout")] = streams.get(out.get("name", "stdout"), "") + (
                "".join(text) if isinstance(text, list) else text)
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


_CELL_RUNNER = r'''
import json, sys, traceback
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
'''


def _execute(path: Path, timeout: int) -> tuple[str, list[dict]]:
    """Execute a notebook; return (how, [{"error": str or None, "outputs": [...]}] per code cell)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    nb = json.loads(path.read_text(encoding="utf-8"))
    try:
        import nbclient
        import nbformat
    except ImportError:
        nbclient = None
    if nbclient is not None:
        os.environ.update(env)
        node = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        client = nbclient.NotebookClient(node, timeout=timeout, kernel_name="python3", allow_errors=True,
                                         resources={"metadata": {"path": str(path.parent)}})
        client.execute()
        cells = []
        for cell in node.cells:
            if cell.cell_type != "code":
                continue
            errors = [o for o in cell.outputs if o.get("output_type") == "error"]
            cells.append({"error": f"{errors[0]['ename']}: {errors[0]['evalue']}"[:300] if errors else None,
                          "outputs": [dict(o) for o in cell.outputs if o.get("output_type") != "error"]})
        return "nbclient", cells
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
               for c in nb["cells"] if c["cell_type"] == "code"]
    done = subprocess.run([sys.executable, "-c", _CELL_RUNNER], input=json.dumps(sources), text=True,
                          capture_output=True, cwd=path.parent, env=dict(env, MPLBACKEND="Agg"),
                          timeout=timeout)
    marker = done.stdout.rfind("@@REPORT@@")
    if marker < 0:
        raise RuntimeError(f"the IPython runner failed: {(done.stderr or done.stdout)[-500:]}")
    return "IPython", json.loads(done.stdout[marker + len("@@REPORT@@"):])


def run_notebooks(out: Path, timeout: int = 300) -> list[dict]:
    """Execute the lessons and solutions; return one summary row per notebook."""
    rules = _sanitizers()
    rows = []
    for rel in LESSONS + SOLUTIONS:
        path = ROOT / rel
        start = time.perf_counter()
        try:
            how, cells = _execute(path, timeout)
        except Exception as error:  # noqa: BLE001 -- report and go on with the next notebook
            rows.append(dict(notebook=rel, status=f"NOT RUN ({type(error).__name__}: {str(error)[:200]})",
                             seconds=time.perf_counter() - start))
            continue
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
            elif rel in LESSONS and "nbval-ignore-output" not in tags:
                # Without a kernel (IPython runner) figures are not displayed: compare stdout only.
                want = _sanitize(_text(cell.get("outputs", []), how != "nbclient"), rules)
                got = _sanitize(_text(ran["outputs"], how != "nbclient"), rules)
                if want != got:
                    diffs.append(f"cell {label}:\n      stored: {want[:300]!r}\n      on GPU: {got[:300]!r}")
        status = "ok" if not problems and not diffs else \
            f"{len(problems)} failing cell(s), {len(diffs)} output difference(s)"
        rows.append(dict(notebook=rel, status=f"{status} ({how})", seconds=time.perf_counter() - start,
                         problems=problems, diffs=diffs))
    (out / "gpu_check_notebooks.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return rows


# ---------------------------------------------------------------- 2. checkpointing on the GPU
class TransformerMLP(nn.Module):
    """x + Linear(4d, d)(GELU(Linear(d, 4d)(LayerNorm(x)))): the MLP half of a transformer block."""

    def __init__(self, d: int):
        super().__init__()
        self.norm, self.up = nn.LayerNorm(d), nn.Linear(d, 4 * d)
        self.act, self.down = nn.GELU(), nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(self.act(self.up(self.norm(x))))


def gpu_models() -> dict:
    """{name: (model, input)} on CUDA, float32, with fixed seeds."""
    torch.manual_seed(0)
    transformer = nn.Sequential(*[TransformerMLP(1024) for _ in range(16)]).cuda()
    tanh = nn.Sequential(*[nn.Sequential(nn.Linear(4096, 4096), nn.Tanh()) for _ in range(16)]).cuda()
    gen = torch.Generator(device="cuda").manual_seed(1)
    return {"16 x transformer MLP, d=1024, 8192 tokens":
            (transformer, torch.randn(8192, 1024, device="cuda", generator=gen)),
            "16 x Linear(4096)-Tanh, 8192 rows":
            (tanh, torch.randn(8192, 4096, device="cuda", generator=gen))}


def _pass(model, x, segments: int) -> None:
    out = model(x) if segments == 0 else checkpoint_sequential(model, segments, x, use_reentrant=False)
    out.float().mean().backward()


def measure_gpu(repeat: int = 3) -> list[dict]:
    """Peak bytes and best seconds of one forward and backward per segment count, per model."""
    from autograder.memory import cuda_memory

    name = torch.cuda.get_device_name()
    rows = []
    for model_name, (model, x) in gpu_models().items():
        _pass(model, x, 0)                                   # .grad tensors, cuBLAS workspaces, kernels
        _pass(model, x, 2)
        for segments in SEGMENTS:
            peaks, times = [], []
            for _ in range(repeat):
                model.zero_grad(set_to_none=False)
                torch.cuda.synchronize()
                start = time.perf_counter()
                with cuda_memory() as figures:
                    _pass(model, x, segments)
                times.append(time.perf_counter() - start)    # cuda_memory synchronizes on exit
                peaks.append(figures.peak_delta)
            rows.append(dict(gpu_name=name, segments=segments, peak_bytes=max(peaks), seconds=min(times),
                             checkpointed=segments >= 2, model=model_name))
        del model, x
        torch.cuda.empty_cache()
    return rows


# ---------------------------------------------------------------- 3. checkpointing on the CPU
def measure_cpu(repeat: int = 5) -> list[dict]:
    """Saved-bytes peak (exact) and best seconds per segment count of 16 Linear(64, 64)-Tanh blocks."""
    from autograder.explore_memory import segment_rows, stack

    torch.set_num_threads(1)          # small tensors: steadier timings
    rows = segment_rows(16, "tanh", width=64, batch=32)
    model, x = stack(16), torch.randn(32, 64, generator=torch.Generator().manual_seed(1))
    for r in rows:
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            _pass(model, x, r["segments"])
            best = min(best, time.perf_counter() - start)
        r.update(peak_saved_bytes=r.pop("peak_bytes"), seconds=best, checkpointed=r["segments"] >= 2)
    return rows


def write_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: (f"{r[k]:.6f}" if isinstance(r[k], float) else r[k]) for k in columns})


def plot(path: Path, series: dict, ylabel: str, title: str) -> str:
    """Peak memory (left) and seconds (right) against segments, one line per series
    ({label: (segments, memory values, seconds)}); returns what happened."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib missing: no PNG"
    fig, (ax_mem, ax_time) = plt.subplots(1, 2, figsize=(11, 4))
    for label, (segments, memory, seconds) in series.items():
        ax_mem.plot(segments, memory, "o-", label=label)
        ax_time.plot(segments, [1000 * s for s in seconds], "o-", label=label)
    ticks = sorted({s for segments, _, _ in series.values() for s in segments})
    for ax in (ax_mem, ax_time):
        ax.set_xticks(ticks)
        ax.set_xlabel("segments (0 = no checkpointing)")
        ax.grid(alpha=0.3)
    n = 16
    ax_mem.axvline(math.sqrt(n), color="tab:red", linestyle="--", label=f"√n = {math.isqrt(n)}")
    ax_mem.set_ylim(bottom=0)
    ax_mem.set_ylabel(ylabel)
    ax_mem.set_title(title)
    ax_mem.legend(fontsize=8)
    ax_time.set_ylim(bottom=0)
    ax_time.set_ylabel("one forward + backward (ms)")
    ax_time.set_title("Time")
    ax_time.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"wrote {path}"


def _best(rows: list[dict], key: str) -> int:
    checkpointed = [r for r in rows if r["segments"] >= 1]
    return min(checkpointed, key=lambda r: (r[key], r["segments"]))["segments"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "assets"), help="folder for the CSV and PNG files")
    parser.add_argument("--skip-notebooks", action="store_true", help="do not execute the notebooks")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cuda = torch.cuda.is_available()
    print(f"torch {torch.__version__}, CUDA available: {cuda}"
          + (f" ({torch.cuda.get_device_name()})" if cuda else ""))
    summary, failed = [], False

    start = time.perf_counter()
    cpu_rows = measure_cpu()
    write_csv(out / "checkpointing_cpu.csv", cpu_rows,
              ["segments", "peak_saved_bytes", "activations", "block_runs", "seconds", "checkpointed"])
    note = plot(out / "checkpointing_cpu.png",
                {"16 x Linear(64)-Tanh, batch 32 (CPU)": ([r["segments"] for r in cpu_rows],
                                                        [r["activations"] for r in cpu_rows],
                                                        [r["seconds"] for r in cpu_rows])},
                "peak saved bytes (activations of [32, 64])", "Saved-bytes peak on the CPU")
    print(f"\nCPU: 16 blocks Linear(64, 64)-Tanh, batch 32 ({note})")
    print(f"{'segments':>8} {'peak saved B':>13} {'activations':>12} {'block runs':>11} {'ms':>8}")
    for r in cpu_rows:
        print(f"{r['segments'] or 'none':>8} {r['peak_saved_bytes']:>13} {r['activations']:>12.1f} "
              f"{r['block_runs']:>11} {1000 * r['seconds']:>8.2f}")
    best = _best(cpu_rows, "peak_saved_bytes")
    sqrt_ok = best == math.isqrt(16)
    failed |= not sqrt_ok
    summary.append(("CPU saved-bytes peaks", f"smallest at {best} segments; √n = 4: "
                    f"{'confirmed' if sqrt_ok else 'NOT confirmed'}", time.perf_counter() - start))

    if not cuda:
        summary.append(("GPU checkpointing", "skipped: no CUDA on this machine", 0.0))
        summary.append(("notebooks on CUDA", "skipped: no CUDA on this machine", 0.0))
    else:
        start = time.perf_counter()
        try:
            gpu_rows = measure_gpu()
            write_csv(out / "checkpointing_gpu.csv", gpu_rows,
                      ["gpu_name", "segments", "peak_bytes", "seconds", "checkpointed", "model"])
            series = {}
            for r in gpu_rows:
                segs, mem, secs = series.setdefault(r["model"], ([], [], []))
                segs.append(r["segments"]), mem.append(r["peak_bytes"] / 2 ** 30), secs.append(r["seconds"])
            note = plot(out / "checkpointing_gpu.png", series, "peak allocated above the start (GiB)",
                        f"Real peak on {gpu_rows[0]['gpu_name']}")
            print(f"\nGPU: {gpu_rows[0]['gpu_name']} ({note})")
            print(f"{'model':<44} {'segments':>8} {'peak MiB':>9} {'ms':>8}")
            for r in gpu_rows:
                print(f"{r['model']:<44} {r['segments'] or 'none':>8} {r['peak_bytes'] / 2 ** 20:>9.0f} "
                      f"{1000 * r['seconds']:>8.1f}")
            for model_name in dict.fromkeys(r["model"] for r in gpu_rows):
                mine = [r for r in gpu_rows if r["model"] == model_name]
                plain = next(r for r in mine if r["segments"] == 0)
                best = _best(mine, "peak_bytes")
                low = next(r for r in mine if r["segments"] == best)
                summary.append((f"GPU {model_name}", f"smallest peak at {best} segments (√n = 4): "
                                f"{low['peak_bytes'] / 2 ** 20:.0f} MiB vs {plain['peak_bytes'] / 2 ** 20:.0f} MiB "
                                f"plain, {low['seconds'] / plain['seconds']:.2f}x the time", 0.0))
            summary.append(("GPU checkpointing", "measured", time.perf_counter() - start))
        except Exception as error:  # noqa: BLE001 -- report it in the summary
            failed = True
            summary.append(("GPU checkpointing", f"FAILED: {type(error).__name__}: {str(error)[:200]}",
                            time.perf_counter() - start))
        if args.skip_notebooks:
            summary.append(("notebooks on CUDA", "skipped (--skip-notebooks)", 0.0))
        else:
            for row in run_notebooks(out):
                bad = not row["status"].startswith("ok")
                failed |= bad
                summary.append((row["notebook"], row["status"], row["seconds"]))
                for line in row.get("problems", []) + row.get("diffs", []):
                    print(f"  {row['notebook']}: {line}")

    print("\nSummary")
    width = max(len(name) for name, _, _ in summary)
    for name, status, seconds in summary:
        print(f"  {name:<{width}}  {status}" + (f"  ({seconds:.1f} s)" if seconds else ""))
    print("\nRESULT:", "FAILED" if failed else "OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
