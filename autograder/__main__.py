"""Command line: ``python -m autograder grade [SUBMITTED] --out OUT``, ``python -m autograder export``
(grades for an LMS), ``python -m autograder extension``, ``python -m autograder report``, ``python -m
autograder references``, ``grade-one`` and ``merge`` (past one machine), ``python -m autograder serve
--course DIR`` (grading on submit, a JupyterHub service) and ``attempts`` (its extra attempts), ``python
-m autograder release`` and ``python -m autograder explain [FILE]`` (an error text or pasted traceback;
stdin without FILE)."""

from __future__ import annotations

import argparse
import sys

from .commands import COMMANDS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add(commands)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
