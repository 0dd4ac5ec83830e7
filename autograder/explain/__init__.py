"""Explain an autograd error or warning: which of three things went wrong, what to write instead.

``explain(error)`` takes an exception, a warning (or a ``warnings.WarningMessage``) or a message
string (a whole pasted traceback is fine) and returns an :class:`Explanation`. It never raises, and
it needs no torch: it reads PyTorch's message only.

Each kind is keyed to a pattern on PyTorch's own message: ``KINDS``, in :mod:`autograder.kinds.table`,
which lists them by family.

Where the course teaches each kind is ``Explanation.lesson``: a notebook path relative to the
repository root with JupyterLab's heading anchor, or a URL of PyTorch's documentation where no
chapter teaches it yet. In a notebook the explanation shows it as a link (``_repr_html_``) relative
to the notebook's folder, so it opens from ``notebooks/`` as from ``exercises/<id>/``.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import os
import re
import string
import textwrap
import traceback
import warnings
from dataclasses import dataclass, field

from ..kinds.table import KINDS, MODIFIED_INPLACE, UNKNOWN, Kind, modified_inplace_message
from ..lessons import COURSE_ROOT, lab_fragment, learner_root, lesson
from .catalogue import catalogued_kind
from .context import context
from .graph_cut import pasted_cut
from .guess import family_guess
from .pasted import split_warnings
from .refine import refine
from .returned import returned_kind
from .training import training_kind

__all__ = ["Explanation", "explain", "told_kind", "KINDS", "MODIFIED_INPLACE", "modified_inplace_message"]

_HEADLINE = {
    "not built": "the graph was never built",
    "consumed": "the graph was already consumed",
    "changed": "the graph was changed behind autograd's back",
    "kept alive": "the graph is kept alive behind autograd's back",
    "usage": "an autograd call was used the wrong way",
    "notebook": "a cell ran before the cell it needs",
    "unknown": "not an autograd error this explainer knows",
}


# Kinds without a pattern are causes that explain_refine tells apart from a matched kind's message.
_PATTERNS = {kind: re.compile(k.pattern, re.IGNORECASE) for kind, k in KINDS.items() if k.pattern}


def _values(kind: str, d: dict, text: str) -> dict:
    """The fields of ``kind``'s cause and fix templates, from the ``details`` ``d`` of the match."""
    d, op = dict(d), d.get("op", "an operation")
    if kind == "second_derivative_no_create_graph":  # the not-built message names the output; a penalty says more
        d.setdefault("which", f" (element {d.get('index', '?')} of the outputs)")
        d.setdefault("penalty", "")
    if kind == "modified_inplace":
        shape = "[" + d["shape"] + "]" if "shape" in d else None
        # an optimizer is named where the frames bind one (or were not read), hedged where a paste shows none
        hedge = " where the code has one" if "unseen_update" in d else ""
        none = "No optimizer is bound" in d.get("seen", "")  # training's reading of the frames
        d["or_step"] = ", or w -= lr * w.grad" if none else f", or optimizer.step(){hedge}"
        d["step_rule"] = "" if none else f"; {hedge[1:] + ', ' if hedge else ''}run every backward "
        d["step_rule"] += "of a forward before optimizer.step()" if d["step_rule"] else ""
        weight = (op in ("AsStrided", "T", "Transpose", "Permute") or "output" not in d) and "seen" not in d
        d["hint"] = d.get("seen", "") + weight * (
            " A weight is saved as it is or as a transposed view (T, AsStrided): "
            + (
                "if this is one, something updated it in place between the forward and this backward (an "
                "optimizer's step() where the code has one, w -= lr * w.grad, clamp_, copy_): the paste does not "
                "show which."
                if "unseen_update" in d
                else "if this is one, an optimizer.step() ran between the forward and this backward."
            )
        )
        if shape is None:
            d.update(tensor="a tensor", saved_at="", now_at="", it="that tensor")
        else:
            made = (
                f", output {d['output']} of {op},"
                if "output" in d
                else ", which no recorded operation produced (a leaf or a tensor of yours),"
            )
            number = ", a single number" if shape == "[]" else ""
            n = int(d["version"]) - int(d["expected"])
            d.update(
                tensor=f"a tensor of shape {shape} ({d['type']}{number}){made}",
                saved_at=f" when it was at version {d['expected']}",
                now_at=f": it is now at version {d['version']} ({n} in-place change{'s' * (n != 1)})",
                it=f"the {shape} tensor" + (f" that {op} returned" if "output" in d else ""),
            )
    elif kind == "view_inplace":
        if "mode" in d:
            d.update(
                what="You modified in place a view (a tensor sharing memory with another) "
                "that was made in no_grad mode, with grad mode on.",
                why="Autograd cannot tell whether that change should be recorded.",
                fix="Make the view with grad mode on: take the slice (or split) outside the no_grad block, "
                "then change it in place; autograd records the change into the base, so what reads the base "
                "gets the new values and the gradient flows through the change (both outside). Not "
                "out-of-place or clone(): those change a copy, the base keeps its old values, and its gradient "
                "misses the change. Both inside no_grad only if the change is not to be differentiated.",
            )
        else:
            view = f"Output {d['output']} of {op} is a view (it shares memory with another tensor)"
            d.update(
                what=f"{view}, and its base or another view of that base was modified in place after it was made."
                if "base" in d
                else f"{view}, and you modified it in place.",
                fix="Use the out-of-place version (a = a * 2 instead of a.mul_(2)) on what the Function "
                "returned, or clone() it before changing it in place."
                if "custom Function" in text
                else "If later code reads the view itself: the out-of-place version (a = a * 2 instead of "
                "a.mul_(2)), or clone() it first. If the change must reach the base (the tensor you split): "
                "change a plain slice of the base instead, x[:, :3].mul_(2) (indexing makes one view, which "
                "autograd records), or build the new base out of place with torch.cat of the pieces.",
                why="A custom Function returned it (or returned an input as it is), and "
                "autograd cannot record an in-place change on that."
                if "custom Function" in text
                else f"{op} returns several views at once (like split, chunk, unbind), and "
                "autograd cannot record an in-place change on one of them.",
            )
    elif kind == "custom_function_view_inplace":
        view = re.search(r"Output (?P<output>\d+) of (?P<op>\w+) is a view", text)
        d.update(view.groupdict() if view else {})
    elif kind == "function_transform":
        if "setup" in d:
            d["what"] = (
                "torch.func transforms (grad, vmap, jvp, jacrev, ...) call an autograd.Function's "
                "forward without ctx and ask its setup_context for what to save; a Function written "
                "as forward(ctx, ...) has no setup_context, so it cannot be transformed."
            )
            d["fix"] = (
                "Split forward in two: @staticmethod forward(x, ...) without ctx, and "
                "@staticmethod setup_context(ctx, inputs, output) that calls ctx.save_for_backward(...); "
                "for vmap also set generate_vmap_rule = True on the class (or write a vmap staticmethod)."
            )
        else:
            name = d.get("function", "?")
            d["what"] = f"vmap must run the autograd.Function {name} on a batch and has no rule for it."
            d["fix"] = (
                "With forward and setup_context written apart, set generate_vmap_rule = True on the "
                "class (vmap then runs forward and backward on the batch); or write a vmap staticmethod."
            )
    elif kind == "leaf_inplace":
        d["what"] = "a view of a leaf tensor (w[0], w[:, 1], ...)" if "view" in d else "a leaf tensor"
    elif kind == "inference_tensor":
        if "saved" in d:
            what = (
                "A tensor created under torch.inference_mode() was used in a computation that "
                "autograd records and had to be saved for backward."
            )
        elif "inference_grad" in d:
            what = (
                "An earlier backward() ran inside torch.inference_mode(), so the .grad it "
                "filled for a leaf (a parameter) is an inference tensor. Now, outside "
                "inference mode, that .grad is changed in place (the next backward() adds "
                "to it, zero_grad(set_to_none=False) zeroes it), which is refused."
            )
        else:
            what = "A tensor created under torch.inference_mode() was changed in place outside it."
        d["what"] = what
        d["fix"] = (
            "Never call backward() inside torch.inference_mode() (or no_grad): a backward "
            "belongs to training. Throw away the spoiled gradients with p.grad = None for "
            "every parameter (optimizer.zero_grad(set_to_none=True)) before the next "
            "backward."
            if "inference_grad" in d
            else "Compute tensors you will train on under torch.no_grad() instead of "
            "torch.inference_mode(), or make a normal tensor of it outside inference "
            "mode: t = t.clone()."
        )
    return d


@dataclass(frozen=True)
class Explanation:
    """What went wrong (``kind``, ``family``), why in learner terms (``cause``), what to write
    instead (``fix``), where the course teaches it (``lesson``: notebook path relative to the
    repository root, ``#`` JupyterLab's heading anchor; or a URL where no chapter teaches it),
    PyTorch's ``message`` and the ``details`` read from it (shape, op, versions, ...).

    ``str()`` is the text version; in Jupyter the HTML version (``_repr_html_``) is the same text
    with the lesson as a link that opens the lesson's section (see ``href``)."""

    kind: str
    family: str
    cause: str
    fix: str
    lesson: str
    message: str = ""
    details: dict = field(default_factory=dict, hash=False)
    # the explanations of the warnings a pasted text printed before its error (see autograder.explain.pasted)
    warned: tuple = field(default=(), hash=False, compare=False)

    def __str__(self) -> str:
        def wrap(label, text):
            return textwrap.fill(
                text,
                100,
                initial_indent=f"  {label:<8}",
                subsequent_indent=" " * 10,
                break_long_words=False,
                break_on_hyphens=False,
            )

        return "\n".join(
            [
                f"autograder explains: {_HEADLINE[self.family]} ({self.kind})",
                wrap("Cause:", self.cause),
                wrap("Fix:", self.fix),
                wrap("Lesson:", self.lesson),
                *(wrap("Warned:", _warned_line(w)) for w in self.warned),
            ]
        )

    def href(self, start: str | os.PathLike | None = None) -> str:
        """The lesson as a link relative to the folder ``start`` (default: the current folder,
        which Jupyter sets to the folder of the notebook that runs): from ``notebooks/``
        ``../notebooks/05_....ipynb#anchor``, from ``exercises/<id>/``
        ``../../notebooks/05_....ipynb#anchor``; inside the learner's folder (``my-work/``), to the
        learner's own copy of the lesson. A URL is returned as it is.

        The anchor is written ``#cell-id=<the heading cell's id>`` (``lessons.lab_fragment``):
        the one form JupyterLab follows in a lesson it has just opened (the course site turns it
        back into the section's anchor)."""
        if re.match(r"[a-z]+://", self.lesson):
            return self.lesson
        notebook, _, anchor = self.lesson.partition("#")
        fragment = lab_fragment(notebook, anchor) if anchor else ""
        try:
            start = os.getcwd() if start is None else start
            root = os.path.relpath(learner_root(start), start)
        except ValueError:  # another drive (Windows): no relative link exists
            return COURSE_ROOT.joinpath(notebook).as_uri() + fragment
        return f"{root}/{notebook}".replace(os.sep, "/") + fragment

    def _repr_html_(self) -> str:
        """The text version laid out for a browser: a headline, then Cause, Fix and Lesson as
        label-and-paragraph rows that wrap at spaces to the output's width (the text version's
        fixed 100-character lines would be wrapped a second time in a narrower output area), its
        lesson a link (JupyterLab opens a relative link to a notebook in a tab of its own and
        scrolls to the heading its anchor names)."""
        esc = html.escape
        link = self.lesson
        if self.lesson:
            link = f'<a href="{esc(self.href(), quote=True)}">{esc(self.lesson)}</a>'
        rows = "".join(
            f"<span>{label}</span><span>{text}</span>"
            for label, text in (
                ("Cause:", esc(self.cause)),
                ("Fix:", esc(self.fix)),
                ("Lesson:", link),
                *(("Warned:", esc(_warned_line(w))) for w in self.warned),
            )
        )
        return (
            f'<div class="autograder-explanation" style="{_BOX_STYLE}">'
            f"<div>autograder explains: {esc(_HEADLINE[self.family])} ({esc(self.kind)})</div>"
            f'<div style="{_ROWS_STYLE}">{rows}</div></div>'
        )


# Monospace like the error above it; rows of a label and a paragraph that wraps at spaces.
_BOX_STYLE = "font-family: var(--jp-code-font-family, monospace); font-size: var(--jp-code-font-size, 13px)"
_ROWS_STYLE = (
    "display: grid; grid-template-columns: max-content 1fr; column-gap: 1ch; padding-left: 2ch; overflow-wrap: anywhere"
)


def _warned_line(w: Explanation) -> str:
    """One warning printed above the error, explained: its headline and kind, cause, fix and lesson."""
    return f"a warning above it: {_HEADLINE[w.family]} ({w.kind}). {w.cause} Fix: {w.fix} Lesson: {w.lesson}"


def _message(error) -> str:
    """The text to read: for an exception, the messages of the exceptions it was raised from (or
    while handling) first, its own last."""
    if isinstance(error, warnings.WarningMessage):
        error = error.message
    if isinstance(error, bytes):
        return error.decode("utf-8", "replace")
    texts, seen = [], set()
    while isinstance(error, BaseException) and id(error) not in seen and len(seen) < 8:
        seen.add(id(error))
        texts.insert(0, str(error))
        error = error.__cause__ or error.__context__
    return "\n".join(texts) if texts else "" if error is None else str(error)


def explain(error, stack=None) -> Explanation:
    """Explain ``error``: an exception, a warning, a ``warnings.WarningMessage`` or a message text.
    ``stack`` (a frame, optional) is where a warning is being shown from: its callers are read as an
    exception's traceback would be.

    In a pasted traceback the last recognised message wins (chained errors end with the real one).
    Where a message has several causes, the traceback (which call raised, the learner's code around
    it) tells them apart (:mod:`autograder.explain.refine`). Returns kind ``unknown`` for anything
    else, including ``None``; never raises.
    """
    try:
        rest, warnings_text = split_warnings(error) if isinstance(error, str) else (error, [])
        if warnings_text:
            known = [w for w in map(explain, warnings_text) if w.kind != "unknown"]
            known = [w for i, w in enumerate(known) if w.kind not in {k.kind for k in known[:i]}]
            main = explain(rest) if rest.strip() else None
            cut = pasted_cut(error) if main is not None and main.kind == "not_built" else None
            if cut:  # a warning above quotes the line that copied the graph's values out
                main = _explanation("graph_cut", KINDS["graph_cut"], cut, cut, main.message)
            if main is None or main.kind == "unknown":
                main, known = (known[0], known[1:]) if known else (main or explain(""), [])
            return dataclasses.replace(main, message=error, warned=tuple(w for w in known if w.kind != main.kind))
        text = _message(error)
        where = context(stack if stack is not None else error)
        found = [
            (m.start(), -i, kind, m)
            for i, (kind, p) in enumerate(_PATTERNS.items())
            if not KINDS[kind].where or where.called(KINDS[kind].where)
            for m in p.finditer(text)
        ]
        kind, details = "unknown", {}
        if found:
            _, _, kind, match = max(found, key=lambda f: f[:2])
            details = {k: v for k, v in match.groupdict().items() if v is not None}
        elif catalogued_kind(text) in KINDS:  # another wording, or a kind named from PyTorch's own messages
            kind = catalogued_kind(text)
        for key in ("op", "function"):  # SigmoidBackward0 -> Sigmoid, TwoBackward -> Two
            if key in details:
                details[key] = re.sub(r"Backward\d*$", "", details[key]) or details[key]
        details.update({flag: True for flag in ("view", "base", "saved") if flag in details})
        if kind == "inference_tensor" and "saved" not in details and _on_grad(error, text):
            details["inference_grad"] = True
        kind, details = training_kind(kind, details, text, where, error)
        kind, details = returned_kind(kind, details, text, where, error if stack is None else stack)
        kind, details = refine(kind, details, text, where, error)
        if kind == "unknown":
            guess = family_guess(where, text, error)
            if guess is None:
                return _explanation("unknown", UNKNOWN, {}, {}, text)
            explained = _explanation("family_guess", KINDS["family_guess"], guess, guess, text)
            return dataclasses.replace(explained, lesson=lesson(*guess["lesson"]))
        return _explanation(kind, KINDS[kind], details, _values(kind, details, text), text)
    except Exception:  # noqa: BLE001 -- the explainer must never add an error of its own
        return _explanation("unknown", UNKNOWN, {}, {}, "")


# A cause with fewer fixed letters than this (``"{what}"``) says too little to tell which kind wrote it.
_TOLD_LETTERS = 40


@functools.cache
def _told_templates() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(kind, fixed texts)`` of each kind's cause template, between and around its fields (a field at
    either end leaves an empty text there); most fixed letters first."""
    found = []
    for kind, k in KINDS.items():
        parsed = list(string.Formatter().parse(k.cause))
        texts = [literal for literal, *_ in parsed] + ([""] if parsed and parsed[-1][1] is not None else [])
        if sum(map(len, texts)) >= _TOLD_LETTERS:
            found.append((kind, tuple(texts)))
    return tuple(sorted(found, key=lambda f: -sum(map(len, f[1]))))


def _fits(line: str, texts: tuple[str, ...]) -> bool:
    """Does ``line`` read as these fixed texts with anything between them? Each middle text is taken
    where it first occurs (leftmost is enough when the first and last are anchored): linear, whatever
    the line holds."""
    if len(texts) == 1:
        return line == texts[0]
    if not line.startswith(texts[0]):
        return False
    at = len(texts[0])
    for text in texts[1:-1]:
        found = line.find(text, at)
        if found < 0:
            return False
        at = found + len(text)
    return line.endswith(texts[-1]) and len(line) - len(texts[-1]) >= at


def told_kind(line: str) -> str:
    """The kind whose cause, as :func:`explain` writes it, is the whole of ``line`` ("" when none): what a
    message that quotes an explanation (``check.call``'s) was explained as, where its error was raised, with
    its traceback (its kind may be a cause told apart there, which the bare message does not show)."""
    if "\n" in line:
        return ""
    return next((kind for kind, texts in _told_templates() if _fits(line, texts)), "")


def _on_grad(error, text: str) -> bool:
    """Was the error raised while autograd or an optimizer changed a ``.grad`` (a backward pass
    accumulating into it, zero_grad zeroing it)? Read from the exception's traceback, or from a
    pasted traceback's text."""
    frames, seen = [], set()
    while isinstance(error, BaseException) and id(error) not in seen and len(seen) < 8:
        seen.add(id(error))
        frames += [f.name for f in traceback.extract_tb(error.__traceback__)]
        error = error.__cause__ or error.__context__
    return bool({"_engine_run_backward", "zero_grad"} & set(frames)) or bool(
        re.search(r"_engine_run_backward|in (?:backward|zero_grad)\b|\.(?:backward|zero_grad)\(", text)
    )


def _explanation(kind: str, k: Kind, details: dict, values: dict, text: str) -> Explanation:
    values = _Defaults(values)
    taught = details.get("lesson", k.lesson)  # a section nearer the case than the kind's (a rule may name one)
    where = taught if isinstance(taught, str) else lesson(*taught)
    return Explanation(kind, k.family, k.cause.format_map(values), k.fix.format_map(values), where, text, details)


class _Defaults(dict):
    """Template values; a field a message did not provide reads ``?`` instead of failing."""

    def __missing__(self, key):
        return "?"
