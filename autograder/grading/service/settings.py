"""What the service is told: each assignment's attempt rules, and where nbgrader's exchange is.

The rules come from ``serve``'s options, each either for every assignment (``--attempts 3``) or for
one (``--attempts ex01_graph=5``); the exchange from nbgrader's own configuration files, read in
nbgrader's order (every Jupyter configuration folder, then the course folder), so the service
watches the very ``Exchange.root`` and ``CourseDirectory.course_id`` that ``nbgrader submit`` uses.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_core.paths import jupyter_config_path
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from ..names import check_id

__all__ = ["Policy", "Rules", "Exchange", "exchange_of", "DEFAULT_EXCHANGE_ROOT"]

DEFAULT_EXCHANGE_ROOT = "/usr/local/share/nbgrader/exchange"  # nbgrader's Exchange.root default
COUNTS = ("latest", "best")


@dataclass(frozen=True)
class Policy:
    """One assignment's attempt rules.

    Attributes:
        limit: attempts that may be graded (None: unlimited); later ones are kept, not graded.
        counts: which graded attempt the gradebook holds: ``"latest"`` or ``"best"`` (the highest
            score after any late penalty; of equal ones, the later).
        cooldown: seconds (float) from one graded attempt's submission to the next one's; one
            sooner is kept, not graded, and the learner told when the next may come.
        hold_hidden: until the due date, a learner's page and feedback give the score and the
            messages of the checks the learner can see; hidden tests' results wait for the due date.
    """

    limit: int | None = None
    counts: str = "latest"
    cooldown: float = 0.0
    hold_hidden: bool = False


@dataclass(frozen=True)
class Rules:
    """The policy of every assignment: ``default``, replaced field by field for those named."""

    default: Policy = Policy()
    named: dict[str, Policy] = field(default_factory=dict)

    def of(self, assignment: str) -> Policy:
        return self.named.get(assignment, self.default)

    @classmethod
    def parse(
        cls, attempts=(), counts=(), cooldown=(), hold_hidden: bool = False
    ) -> Rules:  # fmt: skip
        """Rules from ``serve``'s options: each value ``VALUE`` or ``ASSIGNMENT=VALUE``
        (``--attempts 3 --attempts ex14_distributed=5 --counts best --cooldown 60``).

        Raises:
            ValueError: a value that is not of its kind (the message names it).
        """
        fields: dict[str | None, dict] = {}
        for option, values, read in (
            ("limit", attempts, _count),
            ("counts", counts, _counts),
            ("cooldown", cooldown, _seconds),
        ):
            for text in values:
                name, _, value = text.rpartition("=")
                if name:
                    check_id(name, "assignment id")
                fields.setdefault(name or None, {})[option] = read(value, text)
        default = dataclasses.replace(Policy(hold_hidden=hold_hidden), **fields.pop(None, {}))
        return cls(default, {name: dataclasses.replace(default, **values) for name, values in fields.items()})


def _count(value: str, text: str) -> int | None:
    if value in ("", "unlimited"):
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"--attempts wants a whole number of at least 1 (or ASSIGNMENT=N), not {text!r}")
    return int(value)


def _counts(value: str, text: str) -> str:
    if value not in COUNTS:
        raise ValueError(f"--counts wants latest or best (or ASSIGNMENT=latest|best), not {text!r}")
    return value


def _seconds(value: str, text: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        raise ValueError(f"--cooldown wants seconds, 0 or more (or ASSIGNMENT=SECONDS), not {text!r}")
    return seconds


@dataclass(frozen=True)
class Exchange:
    """nbgrader's filesystem exchange as the course's configuration names it: ``root``
    (``Exchange.root``), ``course_id`` and the whole ``config`` (for nbgrader's own classes)."""

    root: Path
    course_id: str
    config: Config

    @property
    def inbound(self) -> Path:
        return self.root / self.course_id / "inbound"

    @property
    def feedback(self) -> Path:
        return self.root / self.course_id / "feedback"


def exchange_of(course: Path) -> Exchange:
    """The exchange of ``course``: nbgrader's configuration read as ``nbgrader`` reads it (each
    Jupyter configuration folder's ``nbgrader_config.py``, the most general first, then the course
    folder's), its ``CourseDirectory.root`` set to ``course``.

    Raises:
        ValueError: no ``CourseDirectory.course_id`` is configured (``nbgrader submit`` needs one too).
    """
    config = Config()
    for folder in [*reversed(jupyter_config_path()), str(course)]:
        if (Path(folder) / "nbgrader_config.py").is_file():
            config.merge(PyFileConfigLoader("nbgrader_config.py", path=folder).load_config())
    config.CourseDirectory.root = str(course)
    course_id = config.CourseDirectory.get("course_id", "")
    if not course_id:
        raise ValueError(
            "no course id: set c.CourseDirectory.course_id in nbgrader_config.py (the id nbgrader submit uses)"
        )
    return Exchange(Path(config.Exchange.get("root", DEFAULT_EXCHANGE_ROOT)), check_id(course_id, "course id"), config)
