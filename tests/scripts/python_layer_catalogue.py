"""Read every ``raise`` and ``warnings.warn`` (and ``@deprecated``) of the installed torch's Python modules that the
fourteen chapters call, and write the Python layer's catalogue: ``autograder/kinds/python_layer.tsv`` (each
statement's message, with each computed part written ``X``, the kind ``explain`` names for it, or the reason it
names none) and ``autograder/kinds/python_layer_coverage.tsv`` (per module: statements, with a kind, without).

    .venv/bin/python tests/scripts/python_layer_catalogue.py          # write both files, print the table
    .venv/bin/python tests/scripts/python_layer_catalogue.py --check  # exit 1 when they differ from this torch's

A message is explained as learners meet it: as a pasted traceback whose last frame is the statement's own line (a
warning: Python's one-line warning form), so that a kind that needs its raising module (``where``) can match.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import re
import sys
from pathlib import Path

import torch

from autograder.explain import explain
from autograder.kinds.python_layer import CATALOGUE_PATH, COVERAGE_PATH

TORCH = Path(torch.__file__).parent
# (group as the issue names it, file under torch/, "all" statements or only "warn" ones)
MODULES = [
    ("autograd", "autograd/__init__.py", "all"),
    ("autograd", "autograd/function.py", "all"),
    ("autograd", "autograd/graph.py", "all"),
    ("autograd", "autograd/gradcheck.py", "all"),
    ("autograd", "autograd/functional.py", "all"),
    ("autograd", "autograd/forward_ad.py", "all"),
    ("autograd", "autograd/grad_mode.py", "all"),
    ("autograd", "autograd/anomaly_mode.py", "all"),
    ("autograd", "_tensor.py", "all"),
    ("utils.checkpoint", "utils/checkpoint.py", "all"),
    ("func", "_functorch/apis.py", "all"),
    ("func", "_functorch/vmap.py", "all"),
    ("func", "_functorch/eager_transforms.py", "all"),
    ("func", "_functorch/functional_call.py", "all"),
    ("func", "_functorch/autograd_function.py", "all"),
    ("nn.utils.clip_grad", "nn/utils/clip_grad.py", "all"),
    ("optim", "optim/optimizer.py", "all"),
    ("optim", "optim/lr_scheduler.py", "all"),
    ("optim", "optim/sgd.py", "all"),
    ("optim", "optim/adam.py", "all"),
    ("amp", "amp/autocast_mode.py", "all"),
    ("amp", "amp/grad_scaler.py", "all"),
    ("amp", "cpu/amp/autocast_mode.py", "all"),
    ("amp", "cuda/amp/autocast_mode.py", "all"),
    ("amp", "cuda/amp/grad_scaler.py", "all"),
    ("nn.parallel.distributed", "nn/parallel/distributed.py", "all"),
    ("distributed (process groups)", "distributed/distributed_c10d.py", "all"),
    ("distributed (process groups)", "distributed/rendezvous.py", "all"),
    ("_dynamo (user errors)", "_dynamo/exc.py", "all"),
    ("_dynamo (user errors)", "_dynamo/eval_frame.py", "all"),
    ("nn.Module", "nn/modules/module.py", "all"),
    ("warnings of the chapters", "storage.py", "warn"),
    ("warnings of the chapters", "nn/modules/loss.py", "warn"),
    ("warnings of the chapters", "nn/functional.py", "warn"),
]
FIELDS = ["module", "line", "statement", "type", "fragment", "message", "kind", "reason"]
_NONE = ("unknown", "family_guess")


def _dotted(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def _parts(node, scope, depth=0) -> list:
    """The message's parts: literal strings, and None for each computed part."""
    if depth > 4 or node is None:
        return [None]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [v.value if isinstance(v, ast.Constant) else None for v in node.values]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _parts(node.left, scope, depth + 1) + _parts(node.right, scope, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return [re.sub(r"%[-\d.]*[sdrfi]", "\0", p) if p else p for p in _parts(node.left, scope, depth + 1)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return [re.sub(r"\{[^{}]*\}", "\0", p) if p else p for p in _parts(node.func.value, scope, depth + 1)]
    if isinstance(node, ast.Name) and scope is not None:
        values = [
            n.value
            for n in ast.walk(scope)
            if isinstance(n, ast.Assign | ast.AugAssign)
            and n.lineno < node.lineno
            and any(
                isinstance(t, ast.Name) and t.id == node.id
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            )
        ]
        found = []
        for value in values[-3:]:
            found += _parts(value, scope, depth + 1)
        return found or [None]
    return [None]


def _message(parts) -> str:
    text = "".join("X" if p is None else p for p in parts).replace("\0", "X")
    return " ".join(text.split())


def _made_by_helper(exc, helpers):
    """``raise _env_error("RANK")``: the exception the module's helper returns (its ``return ValueError(...)``),
    the helper's argument written into it where the message reads it; ``exc`` itself otherwise."""
    if not (isinstance(exc, ast.Call) and isinstance(exc.func, ast.Name) and exc.func.id in helpers):
        return exc
    returned = [n.value for n in ast.walk(helpers[exc.func.id]) if isinstance(n, ast.Return) and n.value is not None]
    return returned[0] if returned and isinstance(returned[0], ast.Call) else exc


def _statements(path: Path, only: str):
    """``(line, statement, type, parts, function)`` of each raise and warn in the file."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    helpers = {n.name: n for n in scopes}

    def scope_of(node):
        inside = [s for s in scopes if s.lineno <= node.lineno <= (s.end_lineno or s.lineno)]
        return min(inside, key=lambda s: (s.end_lineno or 0) - s.lineno) if inside else None

    for node in ast.walk(tree):
        if not isinstance(node, ast.Raise | ast.Call):
            continue
        scope = scope_of(node)
        name = scope.name if scope else "<module>"
        if isinstance(node, ast.Raise) and only == "all":
            exc = _made_by_helper(node.exc, helpers)
            kind = _dotted(exc).rsplit(".", 1)[-1] if exc is not None else ""
            args = exc.args if isinstance(exc, ast.Call) else []
            parts = _parts(args[0], scope) if args else []
            yield node.lineno, "raise", kind, parts, name
        elif isinstance(node, ast.Call):
            called = _dotted(node.func)
            if called in ("warnings.warn", "warn") or called.endswith("deprecated"):
                category = next((k.value for k in node.keywords if k.arg == "category"), None)
                if category is None and len(node.args) > 1 and called != "deprecated":
                    category = node.args[1]
                kind = _dotted(category).rsplit(".", 1)[-1] if category is not None else "UserWarning"
                if called.endswith("deprecated") and category is None:
                    kind = "DeprecationWarning"
                yield node.lineno, "warn", kind, _parts(node.args[0], scope) if node.args else [], name


def _reason(statement: str, kind: str, message: str) -> str:
    if not message.replace("X", "").strip(" .:"):
        return "a re-raise or a message built elsewhere: explained by the text it carries"
    if re.search(
        r"internal|should (?:not|never) happen|(?:report|file) (?:a|an|this) (?:bug|issue)|unreachable|"
        r"INTERNAL ASSERT|this is a bug",
        message,
        re.IGNORECASE,
    ):
        return "torch's own invariant, not a learner's mistake"
    if kind == "NotImplementedError":
        return "a feature torch does not implement: the message names it"
    if statement == "warn" and kind in ("FutureWarning", "DeprecationWarning"):
        return "a deprecation: the message names the replacement"
    if re.search(
        r"invalid|expected|must|should|got|only|not supported|unsupported|cannot|can't|unknown|requires?|"
        r"not (?:a )?valid|out of range|positive|non-negative",
        message,
        re.IGNORECASE,
    ):
        return "an argument check: the message names the argument and what it accepts"
    return "not a mistake the fourteen chapters teach"


def _kind(module: str, line: int, function: str, statement: str, kind: str, message: str) -> str:
    path = TORCH / module
    if statement == "warn":
        text = f"{path}:{line}: {kind}: {message}"
    else:
        text = f'Traceback (most recent call last):\n  File "{path}", line {line}, in {function}\n{kind}: {message}'
    found = explain(text).kind
    return "-" if found in _NONE else found


def rows() -> list[dict]:
    found = []
    for _, module, only in MODULES:
        source = (TORCH / module).read_text(encoding="utf-8")
        for line, statement, kind, parts, function in sorted(_statements(TORCH / module, only), key=lambda s: s[0]):
            message = _message(parts)
            literals = sorted((p for p in parts if p and p.strip() and p in source), key=len, reverse=True)
            fragment = " ".join(literals[0].split()) if literals else ""
            fragment = fragment if fragment in source else ""
            named = _kind(module, line, function, statement, kind, message) if message.strip(" X") else "-"
            found.append(
                {
                    "module": module,
                    "line": line,
                    "statement": statement,
                    "type": kind,
                    "fragment": fragment[:160],
                    "message": message[:400],
                    "kind": named,
                    "reason": "" if named != "-" else _reason(statement, kind, message),
                }
            )
    return found


def coverage(found: list[dict]) -> list[dict]:
    table = []
    for group, module, _ in MODULES:
        mine = [r for r in found if r["module"] == module]
        kinds = sum(r["kind"] != "-" for r in mine)
        table.append(
            {
                "group": group,
                "module": module,
                "statements": len(mine),
                "with_kind": kinds,
                "without_kind": len(mine) - kinds,
                "kinds": " ".join(sorted({r["kind"] for r in mine} - {"-"})),
            }
        )
    return table


def _tsv(records: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, list(records[0]), delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files, write nothing")
    args = parser.parse_args()
    found = rows()
    table = coverage(found)
    texts = {CATALOGUE_PATH: _tsv(found), COVERAGE_PATH: _tsv(table)}
    for row in table:
        print(f"{row['module']:<36} {row['statements']:>4} statements, {row['with_kind']:>3} with a kind")
    total = sum(r["statements"] for r in table)
    print(f"{'all':<36} {total:>4} statements, {sum(r['with_kind'] for r in table):>3} with a kind")
    if args.check:
        stale = [p.name for p, text in texts.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
        print("stale: " + ", ".join(stale) if stale else "up to date")
        return 1 if stale else 0
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
