"""The class report's numbers: one :class:`Row` per graded question of a submission in, a
:class:`Summary` out (per question, per student, per cause). ``report`` fills them and
``report_page`` draws them; both import this module, neither the other's way round."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...compare.causes import key, message_group
from .. import status as statuses

__all__ = ["Row", "CauseCount", "QuestionSummary", "Summary", "each"]


@dataclass(frozen=True)
class Row:
    """One graded question of one submission: ``score`` of ``points``; when it failed, the
    ``message`` the learner saw and its ``cause`` key ("" when none); the submission's ``status``."""

    student_id: str
    assignment_id: str
    question: str
    score: float
    points: float
    message: str = ""
    cause: str = ""
    status: str = ""

    @property
    def passed(self) -> bool:
        return self.score >= self.points

    @property
    def group(self) -> str:
        """What the failure is counted under: its cause key; else its message's first line with
        numbers and names taken out, in quotes; else the submission's status (``status.<words>``)."""
        if self.cause:
            return self.cause
        if self.message.strip():
            return f"“{message_group(self.message)}”"
        return key("status", self.status) if self.status else "status.not_graded"

    @property
    def said(self) -> str:
        """What the learner was told about this failure: its message; for a question left unscored
        without one, why (``no notebook handed in``, ``not graded: <status>``); "" when unknown."""
        if self.message.strip():
            return self.message
        if self.status == statuses.NO_NOTEBOOK:
            return "no notebook handed in"
        return f"not graded: {self.status}" if self.status and self.status != statuses.GRADED else ""


@dataclass
class CauseCount:
    """One cause of a question's failures: how many submissions, whose, and one example message."""

    cause: str
    count: int
    students: list[str]
    example: str


@dataclass
class QuestionSummary:
    """One question of one assignment: every submission's score, and the causes of its failures,
    most frequent first."""

    assignment_id: str
    question: str
    points: float
    scores: list[float]
    causes: list[CauseCount]

    @property
    def submissions(self) -> int:
        return len(self.scores)

    @property
    def passed(self) -> int:
        return sum(score >= self.points for score in self.scores)

    @property
    def pass_rate(self) -> float:
        """Passed / submissions (0 when none)."""
        return self.passed / self.submissions if self.submissions else 0.0

    @property
    def mean(self) -> float:
        return sum(self.scores) / self.submissions if self.submissions else 0.0


@dataclass
class Summary:
    """The class report's numbers. ``students``: ``{student: {cause: [(assignment, question)]}}``;
    ``causes``: ``{cause: {(assignment, question): count}}``, most frequent cause first;
    ``late``: ``{student: [(assignment, how late: store.views.late_words)]}``, only late
    submissions (read from a gradebook; empty for an in-memory run)."""

    questions: list[QuestionSummary]
    students: dict[str, dict[str, list[tuple[str, str]]]]
    causes: dict[str, dict[tuple[str, str], int]]
    all_students: list[str] = field(default_factory=list)
    late: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def cause_students(self, cause: str) -> list[str]:
        """The students who hit ``cause`` anywhere, sorted."""
        return sorted(s for s, hit in self.students.items() if cause in hit)


def shortened(text: str, width: int) -> str:
    """``text`` when it fits in ``width`` characters, else cut at the last space before
    ``width - 1`` (mid-word only for a word longer than half of it) and ended with ``…``, so that a
    cut is never taken for the whole message."""
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip(" ,;:(") + "…"


def each(count: int) -> str:
    """How often each of several tied causes occurs: ``each once``, ``2 each``."""
    return "each once" if count == 1 else f"{count} each"
