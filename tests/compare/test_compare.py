"""Does diagnose() name each typical autograd mistake? One test per diagnosis."""

import itertools

import pytest
import torch

from autograder.compare import diagnose, tolerances

REF = torch.tensor([1.0, -2.0, 3.0])


def test_equal_values_pass_with_relative_error():
    """Is a value within float32 tolerance accepted, with its relative error reported?"""
    d = diagnose(REF + 1e-7, REF)
    assert d.ok and d.kind == "ok" and d.rel_error < 1e-6


def test_none_gradient_asks_the_question_that_decides():
    """With nothing observed, does a None gradient say what is seen and ask the one question that decides between
    the ways a .grad stays None (a backward after the last reset, a leaf that requires grad on the loss's path),
    rather than list them all as likely?"""
    d = diagnose(None, REF, "w.grad")
    assert d.kind == "none" and "retain_grad" in d.message and "requires grad" in d.message
    assert "Likely causes" not in d.message and d.message.rstrip().endswith("?"), d.message


@pytest.mark.parametrize("k", [2, 3])
def test_integer_multiple_means_accumulation(k):
    """Is k x the reference said, and asked as a scale too large or k backward passes added into .grad?"""
    d = diagnose(k * REF, REF, "w.grad")
    assert d.kind == "multiple" and f"{k}x" in d.message and f"did {k} backward passes add into it" in d.message
    assert d.factor == pytest.approx(k)


def test_fraction_means_divided_twice():
    """Is 1/4 of the reference called out as divided once too often?"""
    d = diagnose(REF / 4, REF)
    assert d.kind == "fraction" and "1/4" in d.message


def test_all_zeros_means_cut_graph():
    """Is an all-zero gradient called out as a cut graph?"""
    d = diagnose(torch.zeros(3), REF)
    assert d.kind == "zeros" and "cut" in d.message


def test_opposite_sign():
    """Is the negative of the reference called out as a sign error?"""
    assert diagnose(-REF, REF).kind == "sign"


@pytest.mark.parametrize(
    "received,kind",
    [
        (torch.ones(2), "shape"),
        (REF.double(), "dtype"),
        ("3.0", "type"),
    ],
)
def test_shape_dtype_and_type_mismatches(received, kind):
    """Are a wrong shape, a wrong dtype and a non-tensor each named?"""
    assert diagnose(received, REF).kind == kind


def test_device_mismatch():
    """Is a tensor on another device named (meta device stands in for a GPU)?"""
    d = diagnose(torch.empty(3, device="meta"), REF)
    assert d.kind == "device"


@pytest.mark.parametrize(
    "received,expected,phrase",
    [
        (
            (5,),
            (),
            "extra dimension 0 (size 5). Averaged over it, it is the expected value",
        ),
        ((4, 3), (3,), "extra dimension 0 (size 4). Averaged over it, it is the expected value"),
        ((3,), (1,), "extra dimension 0 (size 3, not 1)"),
        ((), (5,), "lacks dimension 0 (size 5). That looks like a sum (or mean) over a dimension that should stay"),
        ((3,), (4, 3), "lacks dimension 0 (size 4)"),
        ((1, 3), (3,), "keepdim=True"),
        ((3, 1), (3,), "the same number of elements, arranged otherwise"),
    ],
)
def test_shape_differences_name_the_missing_reduction(received, expected, phrase):
    """Is a shape that differs by a broadcast dimension named as a missing (or extra) reduction over it?"""
    d = diagnose(torch.ones(received), torch.ones(expected), "b")
    assert d.kind == "shape" and phrase in d.message, d.message


def test_an_extra_dimension_is_read_from_the_values_not_the_shapes():
    """Is an extra dimension called a gradient not summed over it only where its sum is the expected value, a whole
    matrix only where its diagonal is, and otherwise asked about (the counterexample: values whose sum is not it)?"""
    e = torch.tensor([1.0, 2.0, 3.0])
    summed = diagnose(torch.stack([e / 4, 3 * e / 4]), e, "g")
    assert "Summed over it, it is the expected value: a gradient not summed" in summed.message, summed.message
    hessian = diagnose(torch.diag(e) + 0.5 * (1 - torch.eye(3)), e, "g")
    assert "Its diagonal is the expected value" in hessian.message and "not summed" not in hessian.message
    other = diagnose(torch.stack([e, -2 * e, e / 3]), e, "g")
    assert "not summed" not in other.message and other.message.endswith("should it be there at all?"), other.message
    assert "not summed" not in other.reason


def test_unrelated_shapes_get_no_reduction_story():
    """Does a shape that no broadcast explains get the plain statement, without a guessed cause?"""
    d = diagnose(torch.ones(2), torch.ones(3), "b")
    assert d.message == "b has shape (2,), expected (3,)."


@pytest.mark.parametrize(
    "factor,words",
    [
        (0.5, "is exactly 1/2 of the expected value: the factor 2 of the square's derivative forgotten"),
        (5, "is exactly 5x the expected value: the 1/N of the mean forgotten"),
        (-1, "has the opposite sign of the expected value: the residual's sign"),
        (0.2, "is exactly 1/5 of the expected value: the 1/N applied twice"),
        (0.75, "is 0.75x the expected value: three quarters"),
    ],
)
def test_causes_by_factor_replace_the_generic_cause(factor, words):
    """Does a factor the check names a cause for get that cause, in place of the generic guess?"""
    causes = {
        0.5: "the factor 2 of the square's derivative forgotten",
        5: "the 1/N of the mean forgotten",
        1 / 5: "the 1/N applied twice",
        -1: "the residual's sign",
        0.75: "three quarters",
    }
    d = diagnose(factor * REF, REF, "w", causes=causes)
    assert not d.ok and words in d.message, d.message
    assert "accumulate" not in d.message and "a mean taken where a sum was meant" not in d.message
    assert d.factor == pytest.approx(factor)


def test_factor_without_a_cause_keeps_the_generic_message():
    """Is a factor the causes do not mention still asked about generically (2x: a scale, or two passes into .grad)?"""
    d = diagnose(2 * REF, REF, "w", causes={0.5: "half"})
    assert d.kind == "multiple" and "without zeroing" in d.message and "half" not in d.message


@pytest.mark.parametrize(
    "received,kind,cause",
    [
        (None, "none", "h is not a leaf"),
        (torch.zeros(3), "zeros", "cut by this question's detach"),
        (REF.clone().requires_grad_(), "attached", "create_graph leaves it attached"),
        (REF + torch.tensor([0.0, 1.0, 0.0]), "mismatch", "tanh's derivative left out?"),
        (torch.ones(5), "shape", "b not summed over the rows"),
    ],
)
def test_causes_by_kind_name_this_questions_mistake(received, kind, cause):
    """Does a kind the check names a cause for (None, zeros, attached, mismatch, shape) give that cause?"""
    causes = {
        "none": "h is not a leaf",
        "zeros": "cut by this question's detach",
        "attached": "create_graph leaves it attached",
        "mismatch": "tanh's derivative left out?",
        "shape": "b not summed over the rows",
    }
    d = diagnose(received, REF, "x", causes=causes)
    assert d.kind == kind and cause in d.message, d.message
    assert "Likely causes:" not in d.message and "non-differentiable op" not in d.message


def test_causes_do_not_change_a_correct_answer():
    """Is a correct value still accepted when causes are given (a factor 1 key included)?"""
    assert diagnose(REF.clone(), REF, "w", causes={1: "n = 1", 0.5: "half"}).ok


def test_tensor_still_attached_to_graph():
    """Is a result that still requires grad called out, with how to detach it?"""
    w = torch.ones(3, requires_grad=True)
    d = diagnose(w * 2, REF)
    assert d.kind == "attached" and "MulBackward0" in d.message and ".detach()" in d.message
    assert diagnose((REF * 1).requires_grad_(), REF, allow_graph=True).ok


def test_other_differences_report_relative_error():
    """Is an unrelated difference a mismatch with its relative error?"""
    d = diagnose(torch.tensor([1.0, 0.0, 3.0]), REF)
    assert d.kind == "mismatch" and d.rel_error == pytest.approx(2 / 3)


def test_python_number_compared_with_scalar_tensor():
    """Is a Python float accepted where a one-element tensor is expected?"""
    assert diagnose(2.0, torch.tensor(2.0)).ok


def test_tolerances_depend_on_dtype():
    """Are float16 tolerances looser than float64's, and integers exact?"""
    assert tolerances(torch.float16)[0] > tolerances(torch.float64)[0]
    assert tolerances(torch.int64) == (0.0, 0.0)
    assert diagnose(torch.tensor([1, 2]), torch.tensor([1, 3])).kind == "mismatch"


PARTS = {"x": 128, "the ReLU output": 96}


@pytest.mark.parametrize(
    "received,kind,phrase",
    [
        (224, "ok", "correct"),
        (320, "double", "exactly the ReLU output counted twice"),
        (96, "missing", "exactly x left out"),
        (448, "double", "2x"),
        (896, "multiple", "exactly 4x the expected figure: 4 graphs"),
        (56, "fraction", "elements rather than bytes"),
        (224.0, "type", "int number of bytes"),
        (225, "mismatch", "+1 B"),
    ],
)
def test_memory_figures_name_the_slip(received, kind, phrase):
    """Is a byte count off by one saved storage, doubled, or in elements named as such?"""
    from autograder.compare import diagnose_bytes

    d = diagnose_bytes(received, 224, parts=PARTS, unsaved={})  # the check says nothing else is made
    assert d.kind == kind and phrase in d.message


@pytest.mark.parametrize(
    "received,kind,phrase",
    [
        (224 + 101, "mismatch", "+101 B"),
        (224 + 200, "steps", "exactly the size of 2 steps' graphs"),
        (224 + 40, "unsaved", "the sigmoid's input counted, though no Node saves it"),
        (224 + 96 + 40, "unsaved", "the sigmoid's input counted, though no Node saves it and the ReLU output counted"),
    ],
)
def test_byte_differences_are_decomposed(received, kind, phrase):
    """Is a byte count too high by steps' graphs, a tensor no Node saves, or a sum of such terms told so where
    that one reading fits, and said to be ambiguous where several do?"""
    from autograder.compare import diagnose_bytes

    d = diagnose_bytes(received, 224, parts=PARTS, unsaved={"the sigmoid's input": 40}, step=100)
    assert d.kind == kind and phrase in d.message, d.message


def test_a_part_is_named_only_where_one_reading_fits():
    """A figure too high by one step's graph, which is also the ReLU output counted twice and a tensor nobody saves
    (both 100 B), or too low by x, which two other parts also make: is each said to be ambiguous, its readings
    listed smallest first as possibilities, and named where the figure at other sizes (a probe) leaves one?"""
    from autograder.compare import diagnose_bytes

    parts, unsaved = {"x": 160, "the ReLU output": 100, "net(x) - y": 60}, {"the squared errors": 60}
    d = diagnose_bytes(420, 320, parts=parts, unsaved=unsaved, step=100)
    assert d.kind == "ambiguous" and d.cause.startswith("bytes.ambiguous.too_high"), d.message
    assert "possibilities" in d.message and "the ReLU output counted twice" in d.message
    # the squared errors (no Node saves them) and net(x) - y counted twice: the same 60 B, neither picked
    d = diagnose_bytes(380, 320, parts=parts, unsaved=unsaved)
    assert (
        d.kind == "ambiguous" and "the squared errors counted" in d.message and "net(x) - y counted twice" in d.message
    )
    # at other sizes the learner's figure is again the squared errors too high: 90 B, where net(x) - y is 90 too;
    # still both. At sizes where they differ, one reading is left and named.
    probe = {
        "received": 500 + 70,
        "expected": 500,
        "parts": {"x": 250, "the ReLU output": 160, "net(x) - y": 90},
        "unsaved": {"the squared errors": 70},
    }
    d = diagnose_bytes(380, 320, parts=parts, unsaved=unsaved, probes=[probe])
    assert d.kind == "unsaved" and "the squared errors counted, though no Node saves it" in d.message, d.message


def test_a_part_counted_in_another_dtype_is_a_reading():
    """Under autocast, two bfloat16 ReLU outputs counted at 4 B per element add what the bfloat16 copy of a weight
    of the same size would: is the figure ambiguous (the weight copy is not picked by its size alone)?"""
    from autograder.compare import diagnose_bytes

    parts = {"ReLU output 1": 32, "ReLU output 2": 32, "the bfloat16 copy of the weight of layer 3": 64, "x": 48}
    d = diagnose_bytes(176 + 64, 176, parts=parts, element_size=2)
    assert d.kind == "ambiguous", d.message
    assert "the bfloat16 copy of the weight of layer 3 counted twice" in d.message
    assert "ReLU output 1 counted twice (or at 4 B per element: it has 2 B)" in d.message
    assert "4 B" not in d.reason  # a hidden test's dtype is not said


def test_a_constant_factor_that_is_no_whole_number_is_said_only_where_elements_agree_on_it():
    """Is a gradient 5/7 of the reference everywhere (N written as 5, run with N = 7) said to be off by a
    constant factor, while a one-element value (any wrong number is a multiple of it) and a float32 rounding
    of a float64 reference (a factor of about 1) stay mismatches?"""
    ref = torch.tensor([0.3, -1.2, 2.0, 0.7], dtype=torch.float64)
    scaled = diagnose(ref * 5 / 7, ref, "w", causes={"mismatch": "a local derivative missing"})
    assert scaled.kind == "fraction" and scaled.cause == "tensor.scaled" and "a constant factor" in scaled.message
    assert "a local derivative missing" not in scaled.message and "constant multiple" in scaled.reason
    assert diagnose(torch.tensor(0.7), torch.tensor(1.3)).kind == "mismatch"
    assert diagnose((ref * (1 + 1e-6)), ref).kind == "mismatch"


def test_the_shapes_broadcast_as_torch_broadcasts_them():
    """Does the message's own broadcasting rule (no torch.fx, no SymPy to import) give what
    ``torch.broadcast_shapes`` gives, for every pair of these shapes (None: they do not broadcast)?"""
    from autograder.compare.shapes import _broadcast_shapes

    shapes = [(), (1,), (0,), (3,), (2, 3), (1, 3), (3, 1), (2, 1, 3), (0, 3), (1, 0), (4, 2, 3)]
    for a, b in itertools.product(shapes, repeat=2):
        try:
            theirs = tuple(torch.broadcast_shapes(a, b))
        except RuntimeError:
            theirs = None
        assert _broadcast_shapes(a, b) == theirs, (a, b)


def test_a_figure_counted_at_a_smaller_element_size_says_so():
    """Is a float32 figure counted at 2 B per element told so where no reading of one or two slips fits, with
    no dtype size in the hidden-test reason; and a float64 figure at 4 B per element, which is also one of its
    two equal parts left out, said to be ambiguous?"""
    from autograder.compare import diagnose_bytes

    n = 37
    uneven = {"x, three times its size": 3 * n * 4, "sigmoid(x)": n * 4}
    d = diagnose_bytes(4 * n * 2, 4 * n * 4, parts=uneven, element_size=4)
    assert d.kind == "element_size" and "2 B per element gives, where this dtype has 4" in d.message
    assert "2 B per element" in d.reason and "float64" not in d.reason, d.reason
    two = {"exp(x)": n * 8, "log1p(exp(x))": n * 8}
    d = diagnose_bytes(2 * n * 4, 2 * n * 8, parts=two, element_size=8)
    assert d.kind == "ambiguous" and "exp(x) left out" in d.message and "fewer bytes" in d.message, d.message


def test_a_figure_off_by_what_a_known_wrong_run_leaves_out_is_a_reading():
    """Is a figure too low by exactly a negative ``extra`` (what a known wrong run leaves out: a clone's storage)
    told that where no part has its size, ambiguous where one does, and an extra of the other sign not taken for
    it?"""
    from autograder.compare import diagnose_bytes

    parts = {"one [n, h] activation": 80, "x": 48}
    clone = {"the clone's storage, which the product saves": -72}
    low = diagnose_bytes(384 - 72, 384, parts=parts, extra=clone)
    assert low.kind == "extra" and "72 B too low: exactly the clone's storage" in low.message, low.message
    assert low.cause == "bytes.missing.the_clones_storage_which_the_product" and "too low" in low.reason
    high = diagnose_bytes(384 + 80, 384, parts=parts, extra=clone, unsaved={})
    assert high.kind == "double" and "clone" not in high.message, high.message
    same = diagnose_bytes(384 - 80, 384, parts=parts, extra={"the clone's storage": -80})
    assert same.kind == "ambiguous" and "the clone's storage" in same.message, same.message


def test_an_attached_tensor_without_grad_fn_is_not_called_a_leaf():
    """Is a tensor that requires grad but shows no grad_fn (a create_graph=True gradient sent back from
    the sandbox loses its grad_fn) told it is attached, without calling it a leaf?"""
    d = diagnose(torch.ones(2, requires_grad=True), torch.ones(2), "d loss / d h")
    assert d.kind == "attached" and "(requires_grad=True)" in d.message and "leaf" not in d.message, d.message


def test_an_excess_that_two_readings_explain_names_both_as_possibilities():
    """A figure too high by what two tensors no Node saves add up to, and also by what two saved storages add up
    to (a ReLU output counted again as the next Linear's input): are both readings said, as possibilities, since
    the figure cannot tell a storage counted twice from tensors nobody saves?"""
    from autograder.compare import diagnose_bytes

    parts = {"the ReLU output": 96, "the Tanh output": 192}
    unsaved = {"the first Linear's output": 96, "the second Linear's output": 192}
    d = diagnose_bytes(600 + 288, 600, parts=parts, unsaved=unsaved)
    assert d.kind == "ambiguous" and "possibilities" in d.message
    assert "the Tanh output" in d.given and "counted twice" in d.reason
    alone = diagnose_bytes(600 + 288, 600, parts={"x": 5}, unsaved=unsaved)
    assert "counted twice" not in alone.message and alone.kind == "unsaved"


def test_a_part_two_nodes_save_is_the_one_counted_twice():
    """Two parts of the same size, one saved by two Nodes, one by one: is an excess of that size read as the first
    counted twice (a count per Node), and both listed where the check does not say how many Nodes save each?"""
    from autograder.compare import diagnose_bytes

    parts = {"exp(x) (saved by exp and by log1p)": 400, "log1p(exp(x)) (saved by pow)": 400}
    unsure = diagnose_bytes(1200, 800, parts=parts)
    assert unsure.kind == "ambiguous", unsure.message
    told = diagnose_bytes(1200, 800, parts=parts, saved_by=dict(zip(parts, (2, 1))))
    assert told.kind == "double" and "exactly exp(x) (saved by exp and by log1p) counted twice" in told.message
