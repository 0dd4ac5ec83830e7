"""Learner-facing checks, used in the exercises' visible and hidden test cells.

Every check either prints one line starting with ``OK`` or raises :class:`CheckFailed` (an
``AssertionError``, so nbgrader and our grader count the cell as failed) whose message says what
was expected, what came back and the likely autograd cause. Checks never print test code.

Each check builds one :class:`Checked` record (name, kind, received, expected, options) and
judges it with :func:`judge`. The class grader uses the same two pieces from outside the learner's
process (NOTE 1 below).

PyTorch warnings raised while a check runs the learner's code are printed on stdout, not stderr:
plain nbgrader scores any stderr output in a test cell as 0, and a warning is not a wrong answer.

NOTE 1 (class grading). In a learner's own notebook, and under plain nbgrader, a test cell computes
its references itself and the checks compare at once. The class grader instead replaces each
``### BEGIN REFERENCE`` ... ``### END REFERENCE`` region of a test cell by names bound to
:data:`WITHHELD` (``autograder.grading.judge.references``), installs a hook with :func:`report_to`, and
takes from the learner's process only what each check *received*. A check whose expected value or
options hold :data:`WITHHELD` reports its record and prints that it is checked when graded; the
grader then judges the learner's received value against the record of the same check (same name,
same occurrence in the cell) made when the instructor's solution ran, with :func:`judge`.
So no reference is ever computed in, or sent to, the process that runs learner code.
"""

from __future__ import annotations

import contextlib
import re
import textwrap
import traceback
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import torch

from ..compare.evidence import asked, cause, observed, shown
from ..explain import explain
from .checked import CHECKED_WHEN_GRADED, WITHHELD, Checked
from .judging import judge, passed_fact
from .learner_frames import function_name as _function_name
from .learner_frames import is_learner_file as _is_learner_file
from .learner_frames import learner_line as _learner_line
from .learner_frames import raising_function as _raising_function
from .raised import UNREADABLE, described
from .standing import progress
from .summary import cell_passed, judged, summary, watch
from .summary import clear_cell as _cell_facts_clear
from .summary import warned as _WARNED

__all__ = [
    "CheckFailed",
    "Checked",
    "cause",
    "shown",
    "observed",
    "asked",
    "answered",
    "WITHHELD",
    "at_most",
    "call",
    "tensor",
    "grads",
    "value",
    "nbytes",
    "predictions",
    "judge",
    "report_to",
    "summary",
    "progress",
    "warnings_to_stdout",
]

watch()  # check.summary() reads what the cells run from here on did


_hook: Callable[[Checked], None] | None = None


def report_to(hook: Callable[[Checked], None] | None) -> None:
    """Send every :class:`Checked` record made from now on to ``hook`` (None: stop). Used by the
    class grader in the process that runs a submission (NOTE 1)."""
    global _hook
    _hook = hook
    _cell_facts_clear()  # a new grading run: no check of a cell has passed yet


class CheckFailed(AssertionError):
    """A check that did not pass; its message is written for the learner."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback: the message is the whole story, and the
        # checker's own frame (never hidden by IPython, since it raised) would show a machine path.
        # Lines are wrapped at spaces here: JupyterLab breaks an error output's long lines anywhere,
        # even inside a word ("atol=1e-0|5").
        lines = []
        for line in f"CheckFailed: {self}".splitlines():
            indent = line[: len(line) - len(line.lstrip())] + "  "
            lines += textwrap.wrap(
                line, 88, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
            ) or [""]
        return lines


# warnings about an API's future, not about what the run computed: not said under a failure
_OLD_API = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


@contextlib.contextmanager
def warnings_to_stdout(seen: list | None = None):
    """Within the block, show warnings as ``Warning (Category): message`` lines on stdout; ``seen`` gets the first
    two, as ``Category: first line``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for w in caught:
                first = (str(w.message).splitlines() or [""])[0]  # a warning's message may be empty
                print(f"Warning ({w.category.__name__}): {first}")
                said = f"{w.category.__name__}: {first[:300]}"
                if seen is not None and len(seen) < 2 and said not in seen and not issubclass(w.category, _OLD_API):
                    seen.append(said)


_CHECKED_SINCE_CALL = [False]


def call(fn: Callable, *args, **kwargs) -> Any:
    """Call a learner's function and turn its failures into learner-facing messages.

    Raises:
        CheckFailed: the function still raises ``NotImplementedError`` (not answered yet), or
            raised anything else (the message names the exception, not the test's code).
    """
    __tracebackhide__ = True  # IPython shows the learner's frames, not the checker's
    if _CHECKED_SINCE_CALL[0]:  # warnings of the calls since the last check go with the checks after them
        _WARNED.clear()
        _CHECKED_SINCE_CALL[0] = False
    try:
        with warnings_to_stdout(_WARNED):
            return fn(*args, **kwargs)
    except CheckFailed:
        raise
    except BaseException as error:  # noqa: BLE001 -- learner code may raise anything (SystemExit, a class with no
        # name); whatever it is, it is a failure of this check, said in one line, never a pass
        kind, message = described(error)
        name = _raising_function(error.__traceback__, fn)
        unanswered = _unanswered(error) if message != UNREADABLE else None
        if unanswered is not None:
            raise CheckFailed(
                f"{unanswered or name} is not answered yet (it still raises NotImplementedError)."
            ) from None
        first = message.splitlines()[0] if message else ""
        where = _learner_line(error.__traceback__)
        said = f"{kind}: {first}" if first.strip() else kind  # no message: the name alone, never "Name: " then nothing
        raise CheckFailed(f"{name} raised {said}{where}{_explained(error, message)}") from None


def _explained(error: BaseException, message: str) -> str:
    """An autograd error's cause in learner terms, on a line of its own ("" for any other error, and
    for one whose message cannot be read: the explainer reads it)."""
    if message == UNREADABLE or not isinstance(error, Exception):
        return ""
    explained = explain(error)
    return f"\n{explained.cause}" if explained.kind != "unknown" else ""


def answered(name: str, namespace: Mapping[str, Any]) -> None:
    """Make sure the answer cell defined ``name`` (a class, say, whose released stub raises in its body,
    so the name never exists): a check cell calls it first, so that a blank answer reads "not answered
    yet", not a ``NameError``.

    Raises:
        CheckFailed: ``name`` is not defined in ``namespace`` (the notebook's globals).
    """
    __tracebackhide__ = True
    if name not in namespace:
        raise CheckFailed(_not_defined(name, namespace))


def _not_defined(name: str, namespace: Mapping[str, Any]) -> str:
    """Why ``name`` is missing, as IPython's input history (``In``: the cells run so far, this one
    last; the class grader's process keeps it too) tells: a cell that defines it ran and still holds
    the release's ``raise NotImplementedError()`` (not answered yet), ran and raised before defining
    it, or never ran. In a learner's kernel "never ran" means "run it"; under the class grader
    (``report_to`` set), which runs every cell, it means no cell defines it or the grader left the
    one that does out (the status names it). Without a history, it says the two likely causes."""
    ran = namespace.get("In")
    if not isinstance(ran, list) or not all(isinstance(cell, str) for cell in ran):
        return f"{name} is not answered yet: its answer cell still raises NotImplementedError (or has not been run)."
    bare = re.escape(name)
    defines = re.compile(rf"^[ \t]*(?:(?:async[ \t]+)?def|class)[ \t]+{bare}\b|^{bare}[ \t]*(?::|=(?!=))", re.MULTILINE)
    cells = [cell for cell in ran[:-1] if defines.search(cell)]  # ran[-1]: the check cell itself
    if cells and "raise NotImplementedError" in cells[-1]:
        return f"{name} is not answered yet: its answer cell still raises NotImplementedError."
    if cells:
        return f"{name} is not defined: its answer cell ran but stopped with an error before defining it."
    if _hook is not None:
        return f"{name} is not defined: no cell that ran defines it (a cell the grader stopped is named in the status)."
    return f"{name} is not defined yet: no cell run so far defines it (run its answer cell, then this check again)."


def _unanswered(error: BaseException) -> str | None:
    """None unless ``error`` is the release's bare ``raise NotImplementedError()`` in a learner's
    function; then that function's name ("" when unknown). A check often calls the learner's
    function through a helper of its own (or in other processes: ``ranks.RankError`` carries the
    child's traceback), so the name comes from where it was raised. A NotImplementedError with a
    message comes from a library (an op not implemented for a dtype): that is an error, not a blank."""
    if isinstance(error, NotImplementedError) and not str(error):
        frames = [frame for frame, _ in traceback.walk_tb(error.__traceback__)]
        if frames and _is_learner_file(frames[-1].f_code.co_filename):
            return _function_name(frames[-1].f_code)
        return None
    if getattr(error, "type_name", "") == "NotImplementedError" and not getattr(error, "child_message", "-"):
        names = re.findall(r"line \d+, in (\S+)", getattr(error, "traceback", ""))
        return names[-1] if names and not names[-1].startswith("<") else ""
    return None


def _check(record: Checked) -> None:
    """Report the record, then print OK or raise CheckFailed (or, class grading, defer: NOTE 1)."""
    __tracebackhide__ = True
    _CHECKED_SINCE_CALL[0] = True
    if _WARNED and record.kind in ("tensor", "grads", "value", "nbytes", "at_most"):
        record.options = {**record.options, "warned": list(_WARNED)}
    if _hook is not None:
        _hook(record)
    if record.withheld:
        print(f"{record.name}{CHECKED_WHEN_GRADED}")
        judged(withheld=True)
        return
    ok, message = judge(record, cell_passed())
    if not ok:
        raise CheckFailed(message)
    print(message)
    judged(withheld=False, fact=passed_fact(record))


def tensor(
    received,
    expected: torch.Tensor,
    name: str = "value",
    show_values: bool = True,
    causes: Mapping | None = None,
    choice: str | None = None,
    tolerance_by: Mapping[str, Mapping[str, float]] | None = None,
    facts: Mapping | None = None,
    **tolerance,
) -> None:
    """Check one tensor against a reference with :func:`autograder.compare.diagnose`.

    ``tolerance`` may hold ``rtol``/``atol``/``allow_graph``. With ``show_values`` the message
    includes both values (hidden tests pass False so hidden inputs stay hidden). ``causes`` names
    the likely cause of a difference in this question, by factor received / expected or by kind
    (``{0.5: "the factor 2 of the square's derivative forgotten", n: "...", "none": "..."}``, see
    :func:`~autograder.compare.diagnose`): plain numbers and strings, computed from the check's
    inputs (or inside a REFERENCE region when they depend on a reference).

    Where a question lets the learner choose (a dtype: ``"torch.bfloat16"``), ``choice`` is what the
    learner's code chose, as the check observed it, and ``tolerance_by`` the tolerance of each allowed
    choice (``{"torch.float16": {"rtol": 1e-2, "atol": 1e-3}, ...}``): the record then carries the
    choice with the value, so the class grader applies the tolerance of the learner's choice, not of
    the solution's; a choice not in ``tolerance_by`` fails.

    ``facts`` is what the check observed the learner's run do (``autograder.check.observe``): a cause given
    as ``compare.evidence.cause(text, evidence)`` is named only when its evidence holds there.

    Raises:
        CheckFailed: with the diagnosis when the values differ.
    """
    __tracebackhide__ = True  # IPython shows the learner's frames, not the checker's
    options = dict(tolerance, show_values=show_values)
    if causes:
        options["causes"] = _causes(causes)
    if tolerance_by is not None:
        options["tolerance_by"] = {str(k): dict(v) for k, v in tolerance_by.items()}
        received = (str(choice), received)
    _check(_with_facts(Checked(name, "tensor", received, expected, options), facts))


def _with_facts(record: Checked, facts: Mapping | None) -> Checked:
    """``record`` carrying the ``facts`` of the learner's run with its value (as ``choice`` and ``observed`` are
    carried): the class grader weighs the question's causes on the learner's run, not on the solution's."""
    if facts is None:
        return record
    plain = {str(k): tuple(v) for k, v in facts.items()}
    return Checked(
        record.name, record.kind, (plain, record.received), record.expected, {**record.options, "facts": True}
    )


def _causes(causes):
    """A check's ``causes`` as its record carries them: a copy, or ``WITHHELD`` as it is (a
    REFERENCE region's causes, which the grader fills in from the solution's record)."""
    return causes if causes is WITHHELD else dict(causes)


def grads(
    received: Mapping[str, Any],
    expected: Mapping[str, torch.Tensor],
    show_values: bool = True,
    name: str = "gradients",
    hint: str | Mapping[str, str] = "",
    causes: Mapping | None = None,
    observed: str | None = None,
    causes_by: Mapping[str, Mapping] | None = None,
    facts: Mapping | None = None,
) -> None:
    """Check several named gradients (``{"w": tensor, "b": tensor}``); all must match (keys of
    ``received`` that ``expected`` lacks are not judged). ``causes`` (as for :func:`tensor`)
    applies to each gradient. Where a cause depends on what the learner's code did, ``observed`` is
    what the check saw it do (``"DDP"``: a forward through a DDP module) and ``causes_by`` the causes
    each observation adds (``{"DDP": {0.5: "DDP already averages ..."}}``): the record carries the
    observation with the gradients (as :func:`tensor` carries a choice), so the class grader gives
    the causes of the learner's run, not of the solution's. Gradients wrong for the same cause get
    one message, which names the others ("(the same for b, c)"; gradients of different shapes that
    each lack the same dimension included); values are shown only for small tensors. ``hint``
    follows the list of problems: a sentence (always), or ``{kind: sentence}`` with kinds of
    :func:`~autograder.compare.diagnose` (``"shape"``, ``"zeros"``, ...) or ``"missing"`` (a name
    absent from ``received``), and ``"otherwise"``: only the sentences of the kinds found. A cause or a
    hint sentence may be ``compare.evidence.cause(text, evidence)`` (or a list of texts and causes): with
    ``facts``, what the check observed the learner's run do, it is named only when its evidence holds.

    Raises:
        CheckFailed: listing each name that is missing or wrong, with its diagnosis, then ``hint``.
    """
    __tracebackhide__ = True
    if not isinstance(received, Mapping):
        raise CheckFailed(f"expected a dict of gradients, got {type(received).__name__}")
    options = {"show_values": show_values, "hint": hint}
    if causes:
        options["causes"] = _causes(causes)
    received = dict(received)
    if causes_by is not None:
        options["causes_by"] = {str(k): dict(v) for k, v in causes_by.items()}
        received = (str(observed), received)
    _check(_with_facts(Checked(name, "grads", received, expected, options), facts))


def value(
    received,
    expected,
    name: str = "value",
    hint: str | Mapping[Any, str] = "",
    show_values: bool = True,
    facts: Mapping | None = None,
) -> None:
    """Check a plain value (an int, bool, string or tuple of them) for equality, type included
    (``True`` is not accepted for ``1``). ``hint`` is a sentence for the learner, or, for numbers,
    ``{"too high": ..., "too low": ...}``: the one that fits the received value is shown; or
    ``{received value: sentence, "otherwise": sentence}``, for a received value that describes
    what the learner's code did (``"the graph was kept after backward"``): the hint then says
    only what the submission shows. A hint may be ``compare.evidence.cause(text, evidence)`` or a list of
    texts and causes: with ``facts`` (what the check observed the learner's run do) a cause is named only when
    its evidence holds; otherwise the received value is said, and the causes listed as things to check.

    Raises:
        CheckFailed: naming the value, with both values when ``show_values``, then ``hint``.
    """
    __tracebackhide__ = True
    _check(_with_facts(Checked(name, "value", received, expected, {"hint": hint, "show_values": show_values}), facts))


def nbytes(
    received,
    expected: int,
    name: str = "saved bytes",
    parts: dict[str, int] | None = None,
    show_values: bool = True,
    unsaved: dict[str, int] | None = None,
    step: int | None = None,
    extra: dict[str, int] | None = None,
    element_size: int | None = None,
    element_sizes: dict[str, int] | None = None,
    views: dict[str, int] | None = None,
    probes: list[tuple] | None = None,
    saved: bool | None = None,
    saved_by: dict[str, int] | None = None,
) -> None:
    """Check a memory figure in bytes (an ``int``), exactly, with
    :func:`autograder.compare.diagnose_bytes`, which names what a difference is made of where one reading of it
    fits the run's facts (else lists the readings as possibilities): ``parts``, bytes of each storage the
    reference counts, by name; ``unsaved``, bytes of tensors the computation makes but no Node saves; ``step``,
    bytes of one step's graph (a loop); ``extra``, bytes a known wrong run adds (negative: leaves out), named by
    what does it; ``element_size``, bytes per element of the figure's dtype when it has one, or
    ``element_sizes``, each part's; ``views``, bytes of views whose storage is already counted; ``probes``, the
    learner's figure at other inputs with the facts there, ``[(figure, {"expected": int, "parts": ..., "unsaved":
    ..., ...}), ...]``, which tell apart readings that one size cannot (the record carries the learner's figures
    with its value, as ``facts`` are carried, so the class grader reads them, and the facts from the solution's
    record); ``saved``: whether the parts are tensors saved for backward (None: where ``unsaved`` or ``saved_by`` is
    given, since a figure of ``.grad`` or of a result is no Node's); ``saved_by``: how many Nodes save each
    part, where known (a part one Node saves is an unlikely one to be counted twice).

    Raises:
        CheckFailed: with the diagnosis.
    """
    __tracebackhide__ = True
    options = {
        "parts": parts or {},
        "unsaved": unsaved or {},
        "step": step,
        "extra": extra or {},
        "element_size": element_size,
        "element_sizes": element_sizes or {},
        "views": views or {},
        "saved": saved,
        "saved_by": saved_by or {},
        "show_values": show_values,
    }
    if probes:
        options.update(probes=[facts for _, facts in probes], probed=True)
        received = (received, tuple(figure for figure, _ in probes))
    _check(Checked(name, "nbytes", received, expected, options))


def at_most(received, limit, name: str, hint="", show_values: bool = True, facts: Mapping | None = None) -> None:
    """Check that a number (a memory figure in bytes, say) is at most ``limit``. ``hint``: a sentence, or a
    ``compare.evidence`` cause (``check.cause``/``check.shown``) or a list of them, named only where its
    evidence holds on ``facts`` (what the check observed the learner's run do).

    Raises:
        CheckFailed: naming the figure, with both numbers when ``show_values``, then ``hint``.
    """
    __tracebackhide__ = True
    _check(_with_facts(Checked(name, "at_most", received, limit, {"hint": hint, "show_values": show_values}), facts))


def predictions(
    received: Mapping[str, Any],
    expected: Mapping[str, Any],
    what: str = "predictions",
    reasons: Mapping[str, str] | None = None,
) -> None:
    """Check a dict of predicted facts (``{"y.is_leaf": False, ...}``) against computed ones.

    The message names the wrong entries but not their right values, so a learner can rethink them;
    ``reasons`` (``{key: sentence}``, computed from the run in the reference region) adds, for each
    wrong entry only, a sentence that points at the mechanism (which Node saved what, which tensor
    is a leaf, ...) without giving the value away.

    Raises:
        CheckFailed: when ``received`` is not a dict, or an entry is missing or wrong.
    """
    __tracebackhide__ = True
    if not isinstance(received, Mapping):
        raise CheckFailed(f"{what} should be a dict, got {type(received).__name__}")
    _check(Checked(what, "predictions", dict(received), expected, {"reasons": reasons or {}}))
