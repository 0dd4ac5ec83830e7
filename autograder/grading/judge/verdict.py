"""The verdict on one test cell: the learner's checked values against the solution's records.

Records are matched by name: the k-th check called ``"d loss / d h"`` in the learner's run of a
cell is judged against the k-th check of that name in the solution's run of the same cell, with
the solution's kind, expected value and options (``autograder.check.judge``). What the learner's
process said about kinds, expected values or options plays no part.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from difflib import SequenceMatcher

from ...check.checked import Checked
from ...check.judging import judge, passed_fact
from ...compare.causes import Diagnosed
from ...compare.evidence import facts_of, is_cause, said, texts_of

__all__ = ["keyed", "verdict", "NOT_ALL_RAN", "HIDDEN_WRONG"]

NOT_ALL_RAN = (
    "the checks of this question did not all run (the notebook changed how cells or checks run), so it earns no points"
)


HIDDEN_WRONG = "{name} is wrong on a hidden test (a hidden test shows neither its inputs nor its values)."


# what a hidden tensor, gradients or bytes check's reason is said of
_SUBJECT = {"tensor": "It", "grads": "A gradient", "nbytes": "The figure"}
# a number, a word, a run of spaces, or one other character: what a question's text is compared by
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W\d]+|\s+|[^\w\s]")
# a text of another run of the check this much like this run's (difflib's ratio, by tokens) is its variant:
# the same sentence with other numbers in it is far above, another cause of the question far below
_SIMILAR = 0.75


def _texts(options: dict) -> list[str]:
    """The question's own texts in a record's options: its causes, and the names of its parts."""
    causes = options.get("causes")
    found = [t for v in causes.values() for t in texts_of(v)] if isinstance(causes, dict) else []
    by = options.get("causes_by")  # check.grads' causes by what the learner's run did
    found += (
        [t for added in by.values() if isinstance(added, dict) for v in added.values() for t in texts_of(v)]
        if isinstance(by, dict)
        else []
    )
    for field in ("parts", "unsaved", "extra"):
        if isinstance(options.get(field), dict):
            found += [str(k) for k in options[field]]
    return found


def _matched(tokens: list[str], other: str) -> set[int]:
    """The positions of ``tokens`` that the text ``other`` holds in the same order (``difflib``)."""
    matcher = SequenceMatcher(None, tokens, _TOKEN.findall(other), autojunk=False)
    return {block.a + i for block in matcher.get_matching_blocks() for i in range(block.size)}


def _without_inputs(text: str, variants: list[tuple[bool, list[str]]]) -> str:
    """A question's text (a cause) with what this run's inputs made of it left out: the other runs of the
    same check (``(visible, their texts)``) have the text with their own inputs ("N = 5 rows here" for
    "N = 7 rows here"); what differs in one of them came from the inputs. A number is kept only where a
    visible run of the check shows it too (a question's constant: "2 * (p - y)"); with no visible run, no
    number is. Parentheses holding a left-out part go; any other left-out part reads "…"."""
    tokens = _TOKEN.findall(text)
    kept, shown = set(range(len(tokens))), False
    for visible, texts in variants:
        similar = [(SequenceMatcher(None, tokens, _TOKEN.findall(t), autojunk=False).ratio(), t) for t in texts]
        ratio, like = max(similar, default=(0.0, ""))
        if ratio < _SIMILAR:
            continue  # no variant of this text in that run (another cause): it tells nothing
        kept &= _matched(tokens, like)
        shown |= visible
    if not shown:
        kept -= {i for i, t in enumerate(tokens) if t[0].isdigit()}
    out = [t if i in kept or t.isspace() else "…" for i, t in enumerate(tokens)]
    # a parenthesis with a left-out part says nothing else: drop it whole
    start, drop = [], []
    for i, t in enumerate(out):
        if t == "(":
            start.append(i)
        elif t == ")" and start:
            opened = start.pop()
            if "…" in out[opened:i]:
                drop.append((opened, i))
    gone = {i for a, b in drop for i in range(a, b + 1)}
    text = "".join(t for i, t in enumerate(out) if i not in gone)
    text = re.sub(r"…(?:\s*…)+", "…", text)
    return re.sub(r"\s+([.,;:])", r"\1", re.sub(r" {2,}", " ", text)).strip()


def _hidden_message(reference: Checked, received, others: list[Checked] = (), passed: dict | None = None) -> str:
    """A hidden check's failure without what the grader computes from its inputs: no values, no
    shapes, no factor (a factor of 7 is "N = 7 rows here"). What the diagnosis found is said as far
    as it cannot show an input (``compare.Diagnosis.reason``): its own sentences, which hold none, and
    the question's texts it quotes (a cause, a saved part's name) cut to what the check's other runs,
    ``others`` (records of the same name in the same cell), share (:func:`_without_inputs`). What the
    author wrote for the learner stays: a figure's or a prediction's own message (which side,
    which named entries, their reasons) and a check's ``hint``; an author who puts an input into
    those (an f-string) shows it."""
    options = {k: v for k, v in reference.options.items() if k != "causes"}
    if reference.kind in ("value", "at_most", "predictions"):
        _, message = judge(
            Checked(reference.name, reference.kind, received, reference.expected, dict(options, show_values=False)),
            passed,
        )
        return f"{message} (a hidden test: its inputs are not shown)"
    _, full = judge(
        Checked(
            reference.name, reference.kind, received, reference.expected, dict(reference.options, show_values=False)
        ),
        passed,
    )
    variants = [(not other.options.get("hidden"), _texts(other.options)) for other in others]
    said = []
    for reason, given in getattr(full, "reasons", ()):
        for text in sorted(set(given), key=len, reverse=True):  # the longest first: a name may hold another
            if text and text in reason:
                reason = reason.replace(text, _without_inputs(text, variants))
        said.append(f"{_SUBJECT.get(reference.kind, 'It')} {reason}")
    hint = _hint(options, received, passed or {})
    return " ".join([HIDDEN_WRONG.format(name=reference.name), *dict.fromkeys(said), *([hint] if hint else [])])


def _hint(options: dict, received, passed: dict) -> str:
    """A check's hint as a hidden test says it: a sentence as written; a cause with its evidence (or a list of them)
    weighed on the facts of the learner's run the record carries and on what the cell's checks that passed before
    it stated (``passed``; ``compare.evidence``); a hint by kind: none."""
    hint = options.get("hint")
    if isinstance(hint, str) or not (isinstance(hint, list) or is_cause(hint)):
        return hint if isinstance(hint, str) else ""
    carried = options.get("facts") and isinstance(received, tuple) and len(received) == 2
    return said(hint, {**facts_of(passed), **(facts_of(received[0]) if carried else {})})[0]


def keyed(records: list[Checked]) -> dict[tuple[str, int], Checked]:
    """``{(name, occurrence): record}``: occurrence counts from 0 for each name, in call order."""
    seen: Counter = Counter()
    result = {}
    for record in records:
        result[(record.name, seen[record.name])] = record
        seen[record.name] += 1
    return result


def _not_a_number_like(received, expected) -> bool:
    """True when the solution checked a finite number and the learner's record holds a value that
    is not one of the same kind: ``-inf`` or NaN (forged, or computed), or a bool for a number."""
    if isinstance(expected, bool) or not isinstance(expected, (int, float)):
        return False
    if isinstance(received, bool) or not isinstance(received, (int, float)):
        return False  # a string or None is judged (and fails) as it is, with the judge's own message
    try:
        return math.isfinite(expected) and not math.isfinite(received)
    except OverflowError:  # an int too large for a float is not a figure any check expects
        return True


def verdict(received: list[Checked], solution: list[Checked]) -> str:
    """Empty when every check of the solution's run has a matching learner record that passes;
    otherwise the first reason, in learner terms (the solution's ``show_values`` decides whether
    values appear). Never raises."""
    learner = keyed(received)
    passed: dict = {}  # what the checks that passed so far state: a later failure's causes are weighed on it too
    for key, reference in keyed(solution).items():
        others = [r for r in solution if r.name == reference.name and r is not reference]
        mine = learner.get(key)
        if mine is None:
            return NOT_ALL_RAN
        if _not_a_number_like(mine.received, reference.expected):
            return f"{reference.name} should be a finite number, got {mine.received!r}"
        # of the learner's options, only what their run warned crosses (check.call's ``warned``: an observation
        # said under a failure, its numbers left out where it is said); kinds, references and causes are the solution's
        warned = mine.options.get("warned") if isinstance(mine.options, dict) else None
        if isinstance(warned, list):
            reference = Checked(
                reference.name,
                reference.kind,
                reference.received,
                reference.expected,
                {**reference.options, "warned": [str(w)[:300] for w in warned[:2]]},
            )
        record = Checked(reference.name, reference.kind, mine.received, reference.expected, reference.options)
        ok, message = judge(record, passed)
        passed.update(passed_fact(record) if ok else {})
        if not ok:
            if reference.options.get("hidden"):  # the cause key (for the gradebook) is the full diagnosis's
                hidden = _hidden_message(reference, mine.received, others, passed)
                return Diagnosed(hidden, getattr(message, "cause", ""))
            return message
    return ""
