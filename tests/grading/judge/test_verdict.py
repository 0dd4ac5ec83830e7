"""Does a hidden check's failure say what its diagnosis found without showing what its inputs made of it?"""

import re

import torch

from autograder.check.checked import Checked
from autograder.check.judging import judge
from autograder.grading.judge.verdict import HIDDEN_WRONG, verdict


def causes(n):
    """ex01 question 2's causes, for N = n rows: two carry n, two are the question's constants."""
    return {
        1 / n: f"the 1/N of the mean applied twice (N = {n} rows here).",
        n: f"the 1/N of the mean forgotten (N = {n} rows here): L is a mean, so dL/dp = 2 * (p - y) / N.",
        0.5: "the factor 2 of the square's derivative forgotten: d(p - y)**2 / dp = 2 * (p - y).",
        "mismatch": "A local derivative is missing or wrong in the chain.",
    }


ROWS = (5, 7, 1, 32)  # the visible run's N, then the hidden runs'


def solution():
    """The solution's records of one check: visible at N = 5, hidden at N = 7, 1 and 32."""
    gen = torch.Generator().manual_seed(0)
    records = []
    for n in ROWS:
        grads = {"w": torch.randn(3, generator=gen, dtype=torch.float64), "b": torch.randn((), generator=gen)}
        options = {"show_values": n == 5, "hint": "", "causes": causes(n)}
        records.append(Checked("gradients", "grads", grads, grads, options if n == 5 else dict(options, hidden=True)))
    return records


def failing(records, n, change):
    """The learner's records: right everywhere but at N = n, where ``change`` makes each gradient."""
    return [
        Checked(r.name, r.kind, {k: change(v) if m == n else v for k, v in r.expected.items()}, None, {})
        for r, m in zip(records, ROWS)
    ]


def test_a_cause_without_inputs_is_said_whole():
    """Does a hidden failure whose cause holds no input say it whole, numbers of the question's own
    included (the visible run shows them too), with the cause key of the full diagnosis?"""
    records = solution()
    learner = failing(records, 7, lambda g: g * 0.5)
    message = verdict(learner, records)
    assert message.startswith(HIDDEN_WRONG.format(name="gradients"))
    assert message.endswith(f"A gradient is a constant multiple of the expected value: {causes(7)[0.5]}")
    full = judge(Checked("gradients", "grads", learner[1].received, records[1].expected, records[1].options))[1]
    assert message.cause == full.cause == "tensor.fraction.the_factor_of_the_squares_derivative"
    mismatch = verdict(failing(records, 32, lambda g: g + 0.3), records)
    assert mismatch.endswith("differs from the expected value. A local derivative is missing or wrong in the chain.")


def test_a_cause_that_holds_a_hidden_input_does_not_show_it():
    """Does a hidden failure whose cause names its input ("N = 7 rows here") say the cause without
    the number (no digit of N = 7 or N = 32 anywhere), the question's constants kept?"""
    records = solution()
    for n, change, said in [
        (7, lambda g: g / 7, "the 1/N of the mean applied twice."),
        (32, lambda g: g * 32, "the 1/N of the mean forgotten: L is a mean, so dL/dp = 2 * (p - y) / N."),
    ]:
        message = verdict(failing(records, n, change), records)
        assert message.endswith(f"A gradient is a constant multiple of the expected value: {said}"), message
        assert not re.search(rf"\b{n}\b|N = \d", message), message
        assert message.cause.endswith("the_n_of_the_mean_applied" if n == 7 else "the_n_of_the_mean_forgotten")


def test_a_hidden_figure_names_its_parts_never_their_sizes():
    """Does a hidden bytes check's failure name the saved part it is off by, with no size or figure?"""
    parts = {"x (the batch)": 4 * 7 * 3, "the Tanh output": 4 * 7 * 16}
    hidden = Checked("peak", "nbytes", 560, 560, {"parts": parts, "unsaved": {}, "show_values": False, "hidden": True})
    message = verdict([Checked("peak", "nbytes", 560 + 448, None, {})], [hidden])
    assert message.endswith(
        "The figure is too high by exactly the Tanh output counted twice. A storage saved by several Nodes (or "
        "through views) is kept, and counted, once."
    ), message
    assert not re.search(r"\d", message.split("(a hidden test")[-1]), message
    assert not re.search(r"\d", message) and message.cause == "bytes.double.the_tanh_output"
