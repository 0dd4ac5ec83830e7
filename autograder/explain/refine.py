"""Tell apart the causes one message can have, from what the traceback and the learner's code show.

``refine(kind, details, text, where, error)`` takes the kind ``explain`` matched on the message
(``"unknown"`` when none), its details, the message ``text``, the :class:`~autograder.explain.context.Context`
``where`` and the error itself, and returns the kind and details to explain: the same, or one of the
causes listed in :mod:`autograder.kinds.table` without a pattern of their own. What it reads:

* which call raised (``torch.autograd.grad`` or ``backward``; the ``create_graph`` it was passed);
* whether a frame is the backward of a custom autograd.Function, or autograd's engine (backward);
* the learner's code around the error (``create_graph=True`` written? saved-tensor hooks? the
  order of the GradScaler calls; a hook or a checkpoint where Dynamo found a side effect);
* for a NameError, whether the name is one a notebook's set-up cell defines.

Where nothing tells the causes apart (a bare message), the matched kind's text names them all.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import linecache
import re
import types
from functools import lru_cache

from ..lessons import COURSE_ROOT
from .context import _LIBRARY, Context
from .frame import seen
from .grad_none import failing_frame, grad_is_none_evidence
from .made import code_at, loop_around, pasted_reset, per_pass_story
from .not_built import not_built_cause
from .unrun import bare_in_traceback

__all__ = ["refine", "setup_names", "check_helper_names"]

_SIXTEEN = re.compile(r"BFloat16|Half\b|float16|bfloat16", re.IGNORECASE)
_DTYPE = re.compile(r"\b(BFloat16|Half|Float|Double|float16|bfloat16|float32|float64|float|double)\b")
_SAVED_HOOKS = r"saved_tensors_hooks|save_on_cpu"
# a name GradScaler(...) is bound to (``gs = torch.amp.GradScaler("cpu")``, ``self.gs = GradScaler()``)
_SCALER_BOUND = re.compile(r"\b(\w+)\s*=\s*(?:[\w.]+\.)?GradScaler\s*\(")
# a string literal on one line or a triple-quoted one (a hint's text, a docstring): no call in it
_STRING = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')


def refine(kind: str, details: dict, text: str, where: Context, error) -> tuple[str, dict]:
    """The cause to explain: ``(kind, details)``, see the module's docstring. Never raises."""
    try:
        return _refine(kind, dict(details), text, where, error)
    except Exception:  # noqa: BLE001 -- a refinement must never cost the explanation
        return kind, details


def _refine(kind, d, text, where, error):
    # what the code does, not what its comments say ("# no scaler.update()")
    where = dataclasses.replace(
        where,
        source=_uncommented(where.source),
        sources=tuple(_uncommented(code) for code in where.sources),
    )
    written = where.source + "\n" + text  # Dynamo quotes the learner's line in its message
    if kind in ("unknown", "autocast_dtype_mismatch") and where.in_backward and not where.in_function_backward:
        # During backward, autograd computes with the tensors forward saved; what changes them there is
        # an unpack hook: seen in the code, in the stack (an error inside it), or, for a dtype mismatch
        # with a 16-bit tensor (autocast's results meet float32 in forward, not here), registered where
        # the forward ran.
        # a learner's unpack hook among the frames under the engine (torch's own, e.g. checkpoint's, are not evidence)
        engine = where.calls.find("_engine_run_backward")
        unpack_frame = engine >= 0 and any(
            re.search(r"[:\s]\w*unpack\w*\s*$", line) and not _LIBRARY.search(line)
            for line in where.calls[engine:].splitlines()
        )
        sixteen = kind == "autocast_dtype_mismatch" and _SIXTEEN.search(
            text.strip().splitlines()[-1] if text.strip() else ""
        )
        if re.search(_SAVED_HOOKS, where.source) or unpack_frame or sixteen:
            first = (text.strip().splitlines() or [""])[-1][:120]
            name = type(error).__name__ if isinstance(error, BaseException) else "error"
            what = "a dtype mismatch" if kind != "unknown" else f"{name}: {first}"
            return "unpack_hook_backward", {**d, "what": what}
    if kind == "autocast_dtype_mismatch":
        message = text.strip().splitlines()[-1] if text.strip() else text
        if where.in_function_backward and _SIXTEEN.search(message):
            return "custom_function_autocast", d
        dtypes = list(dict.fromkeys(_DTYPE.findall(message)))
        if dtypes and not _SIXTEEN.search(message):
            return "dtype_mismatch", {**d, "dtypes": " and ".join(dtypes)}
    elif kind == "not_built":
        return not_built_cause(d, where, _failing_line(error, where, learners=True), error)
    elif kind == "non_scalar_output":
        if where.called(r"autograd[/\\]__init__\.py(?::|\", line \d+, in )grad\b") or (
            not isinstance(error, BaseException) and "autograd.grad(" in text and ".backward(" not in text
        ):
            return "grad_outputs_missing", d
    elif kind == "backward_hook_count":
        which = d.get("which", "grad_input")
        return kind, {
            **d,
            "got": d.get("got", d.get("got_old", "?")),
            "expected": d.get("expected", d.get("expected_old", "?")),
            "which": which,
            "hook": "pre-hook" if "pre" in d or which == "grad_output" else "hook",
            "part": "output" if which == "grad_output" else "input",
        }
    elif kind == "hook_changed_grad":
        # PyTorch's wrapper of a module's full backward hooks is named "hook" (torch/utils/hooks.py)
        module_hooks = re.search(
            r"register_(?:full_)?backward_(?:pre_)?hook|register_module_full_backward", where.source
        )
        if d.get("hook") == "hook" and (module_hooks or not re.search(r"register_hook", where.source)):
            return "module_hook_changed_grad", d
    elif kind == "hook_signature":
        return _hook_signature(d, where)
    elif kind == "gradcheck_mismatch":
        if where.called(r"gradcheck\.py:gradgradcheck|in gradgradcheck\b"):
            return "gradgradcheck_mismatch", d
        if "numerical:" in text and not re.search(r"float64|double", text):
            return "gradcheck_float32", d
    elif kind == "func_captured_mutation":
        if where.called(r"batchnorm\.py") or re.search(r"BatchNorm|running_(?:mean|var)", written):
            return "func_buffer_mutation", d
    elif kind == "numpy_requires_grad":
        if where.called(r"_functorch|torch[/\\]func\b"):
            return "func_numpy", d
    elif kind == "compile_hook_side_effect":
        if re.search(r"\bcheckpoint\(", written) and not re.search(r"register_\w*hook", written):
            return "compile_checkpoint_side_effect", d
    elif kind == "lr_scheduler_order":
        if re.search(r"GradScaler|\bscaler\b", where.source):
            return "scaler_skipped_step", d
    elif kind == "grad_is_none":
        line = _failing_line(error, where)
        read = re.search(r"[\w.\]\[]*\.grad\b(?!_)|\bgrad_(?:input|output)\b", line)
        if not read:
            return "unknown", {}
        what = read.group(0).lstrip("[")  # [p.grad for p in ...]: the name, not the comprehension's bracket
        evidence = bare_in_traceback(error, what.removesuffix(".grad")) or grad_is_none_evidence(
            what, failing_frame(error)
        )
        evidence = {**evidence, **(pasted_reset(what, where, text) if where.pasted else {})}
        told = "grad_reset" if "reset" in evidence else "grad_none_nonleaf" if "nonleaf" in evidence else kind
        return told, {**d, "what": what, **evidence}
    elif kind == "name_not_defined":
        if d.get("name") in setup_names():
            return "setup_not_run", d
        # a helper's name (some are plain words: inputs, run) raised in a check cell, or with no code to read
        in_check = not where.source or re.search(r"\bcheck\.\w+\(", where.source)
        if d.get("name") in check_helper_names() and in_check:
            return "check_helpers_not_run", d
    elif kind in ("scaler_call_order", "scaler_not_scaled", "scaler_no_inf_checks", "scaler_update_before_step"):
        loop = loop_around(
            *code_at(seen(error) if isinstance(error, BaseException) else None, where, text)[:2], "update"
        )
        return kind, _scaler_order(kind, {**d, "loop": loop} if loop else d, where, _callees(error))
    elif kind == "func_output_type":
        what = (
            "a single value although has_aux=True was passed"
            if "aux" in d
            else f"a {d.get('type', 'non-tensor').strip('<>').replace('class ', '')}"
        )
        return kind, {**d, "what": what}
    return kind, d


def _failing_line(error, where: Context, learners: bool = False) -> str:
    """The line that raised: the last frame of ``error``'s traceback (``learners``: the last frame
    that is not PyTorch's or Python's, the learner's call into them), or a paste's last quoted line."""
    tb = getattr(error, "__traceback__", None)
    if tb is None:
        quoted = (x for x in where.source.splitlines() if x.startswith(" "))  # code, not the message
        lines = [x for x in quoted if x.strip() and not set(x.strip()) <= set("^~ ")]
        return lines[-1] if lines else ""
    line = ""
    while tb is not None:
        if not learners or not _LIBRARY.search(tb.tb_frame.f_code.co_filename):
            line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return line


def _uncommented(code: str) -> str:
    return re.sub(r"#[^\n]*", "", code)


_HOOKS = {
    # (during backward, arguments given): which hook, and its arguments
    (True, 3): ("A full backward hook (register_full_backward_hook)", "hook(module, grad_input, grad_output)."),
    (True, 2): ("A backward pre-hook (register_full_backward_pre_hook)", "hook(module, grad_output)."),
    (True, 1): (
        "A tensor hook (register_hook) or a post-accumulate-grad hook",
        "hook(grad) for register_hook, hook(param) for register_post_accumulate_grad_hook.",
    ),
    (False, 3): ("A forward hook (register_forward_hook)", "hook(module, args, output)."),
    (False, 4): ("A forward hook with with_kwargs=True", "hook(module, args, kwargs, output)."),
    (False, 2): ("A forward pre-hook (register_forward_pre_hook)", "hook(module, args)."),
}


# Where PyTorch calls hooks: a hook's signature error is raised there, not in the learner's code.
_HOOK_CALLERS = r"nn[/\\]modules[/\\]module\.py|utils[/\\]hooks\.py|_engine_run_backward|run_backward"


def _hook_signature(d: dict, where: Context):
    function = d.get("function", "")
    if function.endswith(".backward"):
        return "custom_function_backward_arity", d
    if re.search(r"(?:^|\.)forward$", function) or (
        where.innermost and not re.search(_HOOK_CALLERS, where.innermost)
    ):  # a module's forward, or a function of yours, called with other arguments: not a hook
        return "unknown", {}
    which, signatures = _HOOKS.get(
        (where.in_backward, int(d.get("given", 0))),
        (
            f"The hook {function}",
            "hook(module, args) / hook(module, args, output) in forward, hook(module, grad_output) / "
            "hook(module, grad_input, grad_output) in backward, hook(grad) on a tensor.",
        ),
    )
    name = function.rsplit(".", 1)[-1]
    factory = factory_fix = ""
    if int(d.get("takes", 0)) < int(d.get("given", 0)) and int(d.get("takes", 0)) <= 1 and name != "<lambda>":
        # register_forward_hook(get_activation): the function that makes the hook, not the hook
        factory = (
            f" If {name} is the function that makes the hook ({name}('name') returns it), it was registered itself."
        )
        factory_fix = (
            f" For a function that makes hooks, register what it returns: ...register_forward_hook({name}('fc'))."
        )
    return "hook_signature", {
        **d,
        "which": f"{which}, {name},",
        "signatures": signatures,
        "factory": factory,
        "factory_fix": factory_fix,
    }


def _scaler_calls(code: str, names: str) -> list[str]:
    """The GradScaler calls (scale, unscale_, step, update) ``code`` makes, in the order written: on
    a name with "scaler" in it or one of ``names`` (a regex of the names GradScaler(...) is bound
    to), outside string literals (a hint's text, a docstring, is not a call)."""
    code = _STRING.sub('""', code)
    return re.findall(rf"\b(?:\w*scaler\w*{names})\s*\.\s*(scale|unscale_|step|update)\s*\(", code, re.IGNORECASE)


def _callees(error, depth: int = 2, most: int = 20) -> list[str]:
    """The code of the learner's functions that the learner's frames of ``error``'s traceback refer
    to (by a global or local name), and of those they refer to, ``depth`` levels down: functions that
    ran and returned before the error (a loop's ``finish(scaler, opt)``), whose calls the traceback
    does not show. At most ``most``; [] for anything but an exception."""
    frames, tb = [], getattr(error, "__traceback__", None)
    while tb is not None and len(frames) < 200:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    found, seen = [], {frame.f_code for frame in frames}
    level = [
        (frame.f_code, {**frame.f_globals, **frame.f_locals})
        for frame in frames
        if not _LIBRARY.search(frame.f_code.co_filename)
    ]
    for _ in range(depth):
        below = []
        for code, scope in level:
            for name in (*code.co_names, *code.co_varnames, *code.co_freevars):
                fn = scope.get(name)
                fn = getattr(fn, "__func__", fn)  # a bound method: its function
                if not isinstance(fn, types.FunctionType) or fn.__code__ in seen or len(found) >= most:
                    continue
                seen.add(fn.__code__)
                if _LIBRARY.search(fn.__code__.co_filename):
                    continue
                try:
                    found.append(_uncommented(inspect.getsource(fn)))
                except (OSError, TypeError):
                    continue
                below.append((fn.__code__, fn.__globals__))
        level = below
    return found


def _scaler_order(kind: str, d: dict, where: Context, callees: list[str] = ()) -> dict:
    """The GradScaler calls in the learner's code (the traceback's, then ``callees``: see
    :func:`_callees`), in the order written, and what that order says: ``story``, a sentence naming
    what the code did where its calls show it, otherwise the causes the message itself allows (never
    one guessed); ``order``, the calls (kinds that say no more)."""
    # a pasted traceback quotes only the lines that raised: no evidence of what the code does not call
    sources = () if where.pasted else where.sources
    bound = {m for code in sources for m in _SCALER_BOUND.findall(_STRING.sub('""', code))}
    names = "".join(f"|{re.escape(name)}" for name in sorted(bound))
    per_code = [calls for calls in (_scaler_calls(code, names) for code in sources) if calls]
    # the functions of the learner's that ran and returned before the error: their calls happened too
    per_code += [calls for calls in (_scaler_calls(code, names) for code in callees) if calls]
    # the outermost code that calls the scaler (the loop, the cell), in the order it is written; the
    # iteration's order where one code holds both step and update (a loop may call a step function)
    calls = per_code[0] if per_code else []
    iteration = next((c for c in per_code if "step" in c and "update" in c), calls)
    called = {call for c in per_code for call in c}  # anywhere in the code that ran
    shown = ", ".join(iteration)
    d = dict(d)
    d["order"] = f" Your code calls, in this order: {', '.join(calls)}." if calls else ""
    if kind == "scaler_update_before_step":
        d["story"] = _update_without_checks(iteration, called, shown)
    if kind != "scaler_call_order":
        return d
    what = d.get("what", "")
    if not calls:  # a paste: its file may still show one call site in a loop
        story = per_pass_story(what, d.get("loop"), lambda c: _scaler_calls(c, names), pasted=True)
        story = story or _SCALER_ORDER_UNSEEN.get(next((m for m in _SCALER_ORDER_UNSEEN if m in what), ""), "")
    elif "unscale_() has already been called" in what:
        # each call once: a function's code is also inside the cell that defines it
        texts = [*sources, *callees]
        distinct = [
            t
            for i, t in enumerate(texts)
            if not any(t in u and (t != u or j < i) for j, u in enumerate(texts) if j != i)
        ]
        places = sum(_scaler_calls(t, names).count("unscale_") for t in distinct)
        rule = "once per optimizer and iteration is allowed, since a second one would divide the gradients by the scale"
        story = per_pass_story(what, d.get("loop"), lambda code: _scaler_calls(code, names)) or (
            f"unscale_ ran twice for this optimizer in one iteration (your code calls scaler.unscale_ in {places} "
            f"place{'s' if places != 1 else ''}"
            + (", and the code around it runs again before update()" if places == 1 else "")
            + f"): {rule} again; scaler.step knows whether it was done."
        )
    elif "update" in called and (story := per_pass_story(what, d.get("loop"), lambda c: _scaler_calls(c, names))):
        pass
    elif "update" not in called:
        story = (
            f"Your code never calls scaler.update() ({', '.join(calls)}), so the next iteration's "
            "unscale_ or step still comes after the previous step()."
        )
    elif "step" in iteration and "update" in iteration and iteration.index("update") < iteration.index("step"):
        story = (
            f"Your code calls update() before step() ({shown}): update() ends the iteration, so the "
            "step() after it is followed by the next iteration's calls with no update() between. Call "
            "step(), then update() once, at the end of the iteration."
        )
    elif iteration.count("step") > max(iteration.count("update"), 1):
        story = f"scaler.step is called {iteration.count('step')} times for one update() ({shown})."
    else:
        story = f"Your code calls, in this order: {shown}."
    d["story"] = story
    d["order"] = ""
    return d


def _update_without_checks(iteration: list[str], called: set, shown: str) -> str:
    """What the code shows of an update() that found no inf checks (see ``_scaler_order``)."""
    if not iteration:
        return (
            "So in this iteration update() comes before step(), or runs a second time (the first "
            "update() already ended the iteration), or no step() runs at all."
        )
    if "step" not in called and "unscale_" not in called:
        return f"Your code never calls scaler.step(optimizer) ({shown}): update() has nothing to read."
    steps = [i for i, call in enumerate(iteration) if call == "step"]
    updates = [i for i, call in enumerate(iteration) if call == "update"]
    if steps and updates and updates[0] < steps[0]:
        return (
            f"Your code calls update() before step() ({shown}): update() ends the iteration, so it "
            "must come last, after step()."
        )
    if len(updates) > max(len(steps), 1):
        return (
            f"Your code calls update() {len(updates)} times for {len(steps) or 'no'} step() ({shown}): the "
            "first update() ends the iteration, so the next one finds no inf checks."
        )
    return f"Your code calls, in this order: {shown}."


# what each order message of GradScaler allows, where the code does not show which it was
_SCALER_ORDER_UNSEEN = {
    "unscale_() has already been called": (
        "unscale_ ran twice for this optimizer in one iteration (two calls in your code, or one call run twice: in a "
        "loop, or in a function of yours called twice; torch's clip_grad_norm_ never unscales): a second one would "
        "divide the gradients by the scale again."
    ),
    "unscale_() is being called after step()": (
        "This optimizer's step() ran and no update() came after it: update() is missing at the end of "
        "the iteration, or it comes before step() (then nothing ends the iteration that step() is in)."
    ),
    "step() has already been called": (
        "step() ran twice for this optimizer with no update() between: update() is missing at the end "
        "of the iteration, or step() is called twice in it."
    ),
}


def _cells(path) -> list:
    """The cells of a course notebook as its JSON holds them; [] when it cannot be read."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return cells if isinstance(cells, list) else []


@lru_cache(maxsize=1)
def setup_names() -> frozenset:
    """The names that the set-up cells (first code cells) of the course's lessons and exercises
    define: imports, assignments, functions and classes."""
    names = set()
    for path in [*COURSE_ROOT.glob("notebooks/*.ipynb"), *COURSE_ROOT.glob("exercises/*/*.ipynb")]:
        code = next(("".join(c.get("source", "")) for c in _cells(path) if c.get("cell_type") == "code"), "")
        try:
            tree = ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
        except (SyntaxError, ValueError, TypeError):
            continue
        for node in tree.body:  # module level only: what the cell leaves defined
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.With, ast.For)):
                targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
                for target in filter(None, targets):  # not a, x, h: names a learner may mean as their own
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name) and len(n.id) > 2)
    return frozenset(names - {"*", "_"})


@lru_cache(maxsize=1)
def check_helper_names() -> frozenset:
    """The functions and classes that the exercises' check helpers (the folded, locked ``qN_helpers``
    cells above their check cells) define, outside their REFERENCE regions and inside them."""
    names = set()
    for path in COURSE_ROOT.glob("exercises/*/*.ipynb"):
        helpers = [
            "".join(c.get("source", ""))
            for c in _cells(path)
            if str(c.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")).endswith("_helpers")
        ]
        try:
            trees = [ast.parse(code) for code in helpers]
        except (SyntaxError, ValueError, TypeError):
            continue
        for tree in trees:
            names.update(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)))
    return frozenset(names)
