"""Is a warning pasted above an error read again: explained beside the error (never lost under a known error, never
taken for an unknown error's cause without saying it is a warning), and in a notebook cell that warns, then raises,
are both explained?"""

import subprocess
import sys
import textwrap
import traceback
import warnings

import torch
from torch import nn

from autograder.explain import explain
from autograder.explain.pasted import split_warnings
from autograder.lessons import COURSE_ROOT


def _broadcast_warning() -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.MSELoss()(torch.ones(4, 1, requires_grad=True), torch.ones(4))
    w = caught[0]
    return warnings.formatwarning(w.message, w.category, w.filename, w.lineno)


def _traceback(program) -> str:
    try:
        program()
    except Exception as e:  # noqa: BLE001 -- any error, as a learner pastes it
        return "".join(traceback.format_exception(e))
    raise AssertionError("no error")


def test_split_keeps_the_error_and_takes_the_warning_out():
    """Does split_warnings return the traceback without the warning's lines, and the warning's message?"""
    error = _traceback(lambda: torch.tensor([1.0]).sum().backward())
    rest, found = split_warnings(_broadcast_warning() + error)
    assert rest == error and len(found) == 1 and found[0].startswith("Using a target size")
    assert split_warnings(error) == (error, [])


def test_a_known_error_keeps_its_kind_and_explains_the_warning_above_it():
    """Is the error explained as its own kind, with the warning above it explained beside it?"""
    e = explain(_broadcast_warning() + _traceback(lambda: torch.tensor([1.0]).sum().backward()))
    assert e.kind == "not_built" and [w.kind for w in e.warned] == ["loss_broadcast"]
    assert "Warned:" in str(e) and "(loss_broadcast)" in str(e) and "Warned:" in e._repr_html_()


def test_an_unknown_error_is_explained_by_the_warning_it_follows_and_says_so():
    """Under an error it does not know, is the warning explained, marked as a warning above the error?"""
    e = explain(_broadcast_warning() + _traceback(lambda: {}["fc1"]))
    assert e.kind == "loss_broadcast" and e.warned == ()
    assert explain(_broadcast_warning()).kind == "loss_broadcast"  # a warning pasted alone


def test_a_notebook_cell_that_warns_then_raises_explains_both():
    """In IPython with %load_ext autograder, does a cell that warns (a broadcast loss) and then raises (backward
    on a float) show both explanations?"""
    cell = (
        "import torch\\nfrom torch import nn\\n"
        "loss = nn.MSELoss()(torch.ones(4, 1, requires_grad=True), torch.ones(4)).item()\\nloss.backward()"
    )
    script = textwrap.dedent(f"""
        import warnings
        from IPython.core.interactiveshell import InteractiveShell
        ip = InteractiveShell.instance()
        ip.run_line_magic("colors", "nocolor")
        ip.run_line_magic("load_ext", "autograder")
        warnings.simplefilter("always")
        ip.run_cell("{cell}")
    """)
    run = subprocess.run(
        [sys.executable, "-c", script], text=True, capture_output=True, cwd=COURSE_ROOT, timeout=120, check=False
    )
    assert "(loss_broadcast)" in run.stderr, run.stderr[-1500:]
    assert "(backward_on_number)" in run.stdout, run.stdout[-1500:]
