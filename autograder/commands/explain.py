"""``python -m autograder explain [FILE]``: the explanation of an autograd error or warning (a pasted
traceback) read from FILE or stdin."""

from __future__ import annotations

import sys
from pathlib import Path


def run(args) -> int:
    from ..explain import explain

    if args.file in (None, "-"):
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.file).read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    print(explain(text))
    return 0


def add(commands) -> None:
    explain = commands.add_parser(
        "explain", help="explain an autograd error or warning (a pasted traceback) read from FILE or stdin"
    )
    explain.add_argument("file", nargs="?", help="a file holding the error text (default: stdin)")
    explain.set_defaults(run=run)
