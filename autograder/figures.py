"""Read the committed checkpointing figures (``assets/checkpointing_*.csv``) and summarize them.

``tests/scripts/gpu_check.py`` measures on a GPU and writes ``assets/checkpointing_gpu.csv`` (columns:
:data:`autograder.checkpoint_measure.COLUMNS`); until a GPU session has done so the file is absent,
and :func:`load_rows` returns None. ``assets/checkpointing_cpu.csv`` holds the saved-bytes figures of
the CPU (:func:`cpu_rows` gives them the same shape, with no allocator peak). Lesson 08 and
exercise questions use :func:`summarize` and :func:`plot`. Bytes are ``int``, seconds ``float``.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from .checkpoint_measure import COLUMNS
from .lessons import COURSE_ROOT

__all__ = [
    "GPU_CSV",
    "CPU_CSV",
    "NO_GPU_FIGURES",
    "load_rows",
    "gpu_rows",
    "cpu_rows",
    "ModelSummary",
    "summarize",
    "summary_text",
    "table",
    "plot",
]

GPU_CSV = COURSE_ROOT / "assets" / "checkpointing_gpu.csv"
CPU_CSV = COURSE_ROOT / "assets" / "checkpointing_cpu.csv"
NO_GPU_FIGURES = (
    "No GPU figures have been measured yet: assets/checkpointing_gpu.csv is absent "
    "(a session with a GPU writes it with: python tests/scripts/gpu_check.py --out assets/)."
)

_INTS = {
    "blocks",
    "input_bytes",
    "segments",
    "peak_allocated_bytes",
    "baseline_allocated_bytes",
    "reserved_bytes",
    "saved_peak_bytes",
    "repeats",
}
_FLOATS = {"seconds_median", "seconds_min"}


def _value(column: str, text: str):
    if column in _INTS:
        return int(text) if text != "" else None
    if column in _FLOATS:
        return float(text) if text != "" else None
    if column == "checkpointed":
        return text == "True"
    return text


def load_rows(path: Path | str | None = None) -> list[dict] | None:
    """The rows of a CSV written by ``tests/scripts/gpu_check.py``, typed (empty cells become None).

    Returns:
        None when the file does not exist.

    Raises:
        ValueError: the file lacks some column of :data:`~autograder.checkpoint_measure.COLUMNS`.
    """
    path = Path(GPU_CSV if path is None else path)
    if not path.is_file():
        return None
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path.name} lacks the columns {missing}")
        return [{c: _value(c, r[c]) for c in COLUMNS} for r in reader]


def gpu_rows(path: Path | str | None = None) -> list[dict] | None:
    """:func:`load_rows` of ``assets/checkpointing_gpu.csv`` (or ``path``), None when absent.

    Raises:
        ValueError: some row was not measured on CUDA (a dry run's CSV copied there by mistake).
    """
    rows = load_rows(path)
    if rows is not None and any(r["device"] != "cuda" or r["peak_allocated_bytes"] is None for r in rows):
        raise ValueError("these figures were not measured on a GPU (device is not 'cuda')")
    return rows


def cpu_rows(path: Path | str = CPU_CSV, blocks: int = 16, input_bytes: int = 32 * 64 * 4) -> list[dict] | None:
    """``assets/checkpointing_cpu.csv`` (16 blocks Linear(64, 64)-Tanh on a [32, 64] batch) in the
    shape of :func:`load_rows`: ``saved_peak_bytes`` and ``seconds_*`` filled, the allocator
    columns None. None when the file does not exist."""
    path = Path(path)
    if not path.is_file():
        return None
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [
        dict(
            device="cpu",
            device_name="cpu",
            torch_version="",
            cuda_version="",
            model=f"{blocks} x Linear(64)-Tanh, batch 32 (CPU, saved bytes only)",
            blocks=blocks,
            input_bytes=input_bytes,
            segments=int(r["segments"]),
            checkpointed=r["checkpointed"] == "True",
            peak_allocated_bytes=None,
            baseline_allocated_bytes=None,
            reserved_bytes=None,
            saved_peak_bytes=int(r["peak_saved_bytes"]),
            seconds_median=float(r["seconds"]),
            seconds_min=float(r["seconds"]),
            repeats=None,
        )
        for r in rows
    ]


@dataclass
class ModelSummary:
    """What one model's rows say. ``basis`` is ``"allocator"`` when the peaks are measured
    (``peak_allocated_bytes``, CUDA) and ``"saved bytes"`` otherwise (then ``*_peak`` are the
    saved-bytes figures and ``measured_minus_saved`` is None).

    Attributes:
        best_segments: the segment count (>= 1) with the smallest peak (the fewest segments on ties).
        plain_peak, best_peak, sqrt_peak: peaks (bytes) without checkpointing, at ``best_segments``
            and at ``sqrt_segments`` = ``isqrt(blocks)``.
        best_saved: the saved-bytes prediction at ``best_segments`` (bytes).
        measured_minus_saved: ``best_peak - best_saved``: what the meter does not see (bytes).
        time_overhead: median seconds at ``best_segments`` over those without checkpointing.
        seconds: ``{segments: median seconds}``.
    """

    model: str
    device: str
    device_name: str
    basis: str
    blocks: int
    sqrt_segments: int
    best_segments: int
    plain_peak: int
    best_peak: int
    sqrt_peak: int
    best_saved: int
    measured_minus_saved: int | None
    time_overhead: float
    seconds: dict


def _peak_of(row: dict) -> int:
    return row["peak_allocated_bytes"] if row["peak_allocated_bytes"] is not None else row["saved_peak_bytes"]


def summarize(rows: list[dict]) -> list[ModelSummary]:
    """One :class:`ModelSummary` per model, in the order of the rows.

    Raises:
        ValueError: a model has no row with ``segments == 0`` or none with ``segments >= 1``.
    """
    summaries = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = {r["segments"]: r for r in rows if r["model"] == model}
        if 0 not in mine or len(mine) < 2:
            raise ValueError(f"{model!r} needs rows without checkpointing and with it")
        plain, first = mine[0], next(iter(mine.values()))
        measured = all(r["peak_allocated_bytes"] is not None for r in mine.values())
        peak = _peak_of if measured else (lambda r: r["saved_peak_bytes"])
        best = min((s for s in mine if s >= 1), key=lambda s: (peak(mine[s]), s))
        root = math.isqrt(first["blocks"])
        summaries.append(
            ModelSummary(
                model=model,
                device=first["device"],
                device_name=first["device_name"],
                basis="allocator" if measured else "saved bytes",
                blocks=first["blocks"],
                sqrt_segments=root,
                best_segments=best,
                plain_peak=peak(plain),
                best_peak=peak(mine[best]),
                sqrt_peak=peak(mine[root]) if root in mine else None,
                best_saved=mine[best]["saved_peak_bytes"],
                measured_minus_saved=peak(mine[best]) - mine[best]["saved_peak_bytes"] if measured else None,
                time_overhead=mine[best]["seconds_median"] / plain["seconds_median"],
                seconds={s: r["seconds_median"] for s, r in sorted(mine.items())},
            )
        )
    return summaries


def _mib(n: int | None) -> str:
    if n is None:
        return "-"
    return f"{n / 2**20:.1f} MiB" if abs(n) >= 2**20 else f"{n / 2**10:.1f} KiB"


def summary_text(rows: list[dict] | None) -> str:
    """A few lines per model (peaks in MiB, the time overhead); :data:`NO_GPU_FIGURES` when
    ``rows`` is None."""
    if rows is None:
        return NO_GPU_FIGURES
    lines = []
    for s in summarize(rows):
        where = f"{s.device_name} ({s.device})" if s.device == "cuda" else "the CPU"
        lines.append(f"{s.model}, on {where}, peaks from the {s.basis}:")
        lines.append(
            f"  without checkpointing {_mib(s.plain_peak)}; smallest at {s.best_segments} segments: "
            f"{_mib(s.best_peak)} ({s.best_peak / s.plain_peak:.2f} x); "
            f"at √n = {s.sqrt_segments} segments: {_mib(s.sqrt_peak)}"
        )
        if s.measured_minus_saved is not None:
            lines.append(
                f"  saved-bytes prediction at {s.best_segments} segments {_mib(s.best_saved)}: "
                f"the allocator's peak is {_mib(s.measured_minus_saved)} above it"
            )
        lines.append(f"  time at {s.best_segments} segments: {s.time_overhead:.2f} x the time without checkpointing")
    return "\n".join(lines)


def table(rows: list[dict]) -> str:
    """One line per model and segment count: the allocator's peak and the saved-bytes prediction
    (MiB, or KiB for small models, and in units of ``input_bytes``), and the median time (ms)."""
    lines = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model]
        scale, name = (2**20, "MiB") if max(r["saved_peak_bytes"] for r in mine) >= 2**20 else (2**10, "KiB")
        lines.append(f"{model}: one input = {_mib(mine[0]['input_bytes'])}")
        lines.append(
            f"{'segments':>8} {'peak ' + name:>9} {'(inputs)':>8} {'saved ' + name:>10} {'(inputs)':>8} {'ms':>8}"
        )
        for r in mine:
            peak, unit = r["peak_allocated_bytes"], r["input_bytes"]
            lines.append(
                f"{r['segments'] or 'none':>8} {'-' if peak is None else f'{peak / scale:.1f}':>9} "
                f"{'' if peak is None else f'{peak / unit:.1f}':>8} {r['saved_peak_bytes'] / scale:>10.1f} "
                f"{r['saved_peak_bytes'] / unit:>8.1f} {1000 * r['seconds_median']:>8.2f}"
            )
    return "\n".join(lines)


def plot(rows: list[dict], path: Path | str | None = None):
    """Peak memory (left; measured peak and saved-bytes prediction, MiB) and median time (right,
    ms) against the segment count, one row of axes per model, with a dashed line at √n.
    Saves a PNG to ``path`` when given. Returns the matplotlib Figure (imported here only)."""
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, axes = plt.subplots(len(models), 2, figsize=(11, 3.4 * len(models)), squeeze=False)
    for (ax_mem, ax_time), model in zip(axes, models):
        mine = sorted((r for r in rows if r["model"] == model), key=lambda r: r["segments"])
        segs = [r["segments"] for r in mine]
        if all(r["peak_allocated_bytes"] is not None for r in mine):
            ax_mem.plot(segs, [r["peak_allocated_bytes"] / 2**20 for r in mine], "o-", label="allocator peak")
        ax_mem.plot(segs, [r["saved_peak_bytes"] / 2**20 for r in mine], "s--", label="saved-bytes prediction")
        ax_time.plot(segs, [1000 * r["seconds_median"] for r in mine], "o-", color="tab:green", label="median time")
        root = math.sqrt(mine[0]["blocks"])
        for ax in (ax_mem, ax_time):
            ax.axvline(root, color="tab:red", linestyle=":", label=f"√n = {root:.2g}")
            ax.set_xlabel("segments (0 = no checkpointing)")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        ax_mem.set_ylabel("MiB above the start")
        ax_time.set_ylabel("ms per forward + backward")
        where = mine[0]["device_name"] if mine[0]["device"] == "cuda" else "CPU"
        ax_mem.set_title(f"{model} ({where})", fontsize=9)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
