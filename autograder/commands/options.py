"""What several commands share: options (``--solutions``, ``--no-sandbox``, ``--shard``) and the
gradebook or saved references they name."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..lessons import COURSE_ROOT


def no_sandbox_option(parser) -> None:
    parser.add_argument(
        "--no-sandbox", action="store_true", help="run without the bubblewrap sandbox (only notebooks you trust)"
    )


def solutions_option(parser) -> None:
    parser.add_argument(
        "--solutions",
        default=str(COURSE_ROOT / "solutions"),
        help="the nbgrader source folder (default: the course's solutions/)",
    )


def shard(text: str) -> tuple[int, int]:
    from ..grading.runs.shards import parse_shard

    try:
        return parse_shard(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix(f"--shard {text!r}: ")) from None


def saved_references(args):
    """``--references FILE`` loaded (``saved_references.SavedReferences``), or None without it."""
    from ..grading.runs.saved_references import SavedReferences

    return SavedReferences.load(Path(args.references), Path(args.solutions)) if args.references else None


def store_of(args):
    """The gradebook that ``export`` and ``extension`` open: ``--db``, else ``--course``'s, else
    ``OUT/gradebook.db`` (where ``grade --out OUT`` put it)."""
    from ..grading.runs.batch import default_db_url
    from ..grading.store.config import course_config, course_paths
    from ..grading.store.gradebook import Store, sqlite_path

    config = course_config(Path(args.course).resolve()) if args.course else None
    if args.db is None and args.course:
        args.db = course_paths(Path(args.course))[1]
    url = args.db or default_db_url(Path(args.out))
    path = sqlite_path(url)
    if path is not None and not path.is_file():
        raise FileNotFoundError(f"no gradebook at {path} (grade first, or name it with --db or --course)")
    return Store(url, config)
