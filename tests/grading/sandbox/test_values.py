"""Are checked values carried as plain JSON, and judged after crossing like the checks judge them?"""

import json
import subprocess
import sys

import pytest
import torch

from autograder.check.checked import Checked
from autograder.check.judging import judge
from autograder.grading.judge.verdict import verdict
from autograder.grading.sandbox.values import Opaque, decode, decode_record, encode, encode_record


def crossed(value):
    """``value`` as the grader receives it from a submission process."""
    return decode(json.loads(json.dumps(encode(value))))


def test_tensors_round_trip_through_json():
    """Does a tensor come back with its dtype, shape, values and requires_grad?"""
    t = torch.arange(6, dtype=torch.float64).reshape(2, 3).requires_grad_()
    back = crossed(t)
    assert back.dtype == torch.float64 and back.shape == (2, 3) and back.requires_grad
    assert torch.equal(back.detach(), t.detach())


def test_containers_and_objects():
    """Do dicts, tuples and unknown objects encode to something JSON can carry, an unknown
    object coming back as an Opaque that names its type?"""
    value = {"w": torch.ones(1), ("a", 1): [True, None], "f": object()}
    back = crossed(value)
    assert back[("a", 1)] == [True, None] and torch.equal(back["w"], torch.ones(1))
    assert isinstance(back["f"], Opaque) and back["f"].description == "object"


def test_opaque_values_are_equal_only_to_themselves():
    """Is an object that crossed as JSON never equal to another one of the same type, nor to its
    type's name, so that two unknown objects cannot pass a check as equal?"""
    first, second = crossed(object()), crossed(object())
    assert first == first
    assert first != second and first != "object" and first != Opaque("object")
    ok, _ = judge(Checked("the result", "value", first, second))
    assert not ok


def test_records_round_trip_through_json():
    """Does a Checked record come back with its name, kind, received and expected values and options?"""
    record = Checked(
        "d loss / d w", "grads", {"w": torch.ones(2)}, {"w": 2 * torch.ones(2)}, {"show_values": False, "rtol": 1e-3}
    )
    back = decode_record(json.loads(json.dumps(encode_record(record))))
    assert (back.name, back.kind, back.options) == (record.name, record.kind, record.options)
    assert torch.equal(back.received["w"], record.received["w"])
    assert torch.equal(back.expected["w"], record.expected["w"])


def test_tensor_comparison_uses_the_diagnosis():
    """After crossing, is a doubled gradient diagnosed, and an equal one accepted?"""
    assert judge(Checked("g", "tensor", crossed(torch.ones(2)), torch.ones(2))) == (True, "OK g")
    ok, message = judge(Checked("g", "tensor", crossed(2 * torch.ones(2)), torch.ones(2)))
    assert not ok and "exactly 2x" in message


def test_plain_values_must_be_equal():
    """Are predictions compared exactly after crossing?"""
    assert judge(Checked("p", "predictions", crossed({"a": True}), {"a": True}))[0]
    assert not judge(Checked("p", "predictions", crossed({"a": False}), {"a": True}))[0]


@pytest.mark.parametrize(
    "forged",
    [
        {"name": "g", "kind": "tensor", "received": {"__tensor__": {"dtype": "os.system"}}},
        {"name": "g", "kind": "tensor", "received": {"__nothing__": 1}},
        {"name": 3, "kind": "tensor"},
        {"name": "g", "kind": "tensor", "options": [1, 2]},
        "not a record",
    ],
)
def test_forged_records_are_rejected_not_trusted(forged):
    """Is a malformed record refused with an error the runner catches (it is then left out)?"""
    with pytest.raises((ValueError, TypeError, KeyError, RuntimeError, AttributeError)):
        decode_record(forged)


def test_a_received_value_built_to_break_comparisons_is_just_wrong():
    """Is a received value that is not what the solution's check expects a failed verdict,
    never an exception?"""
    solution = [Checked("g", "tensor", torch.ones(2), torch.ones(2), {"show_values": True})]
    for received in (crossed(object()), "a string", {"w": 1}, None):
        message = verdict([Checked("g", "tensor", received, received)], solution)
        assert message and "g" in message, received


@pytest.mark.parametrize("received", [float("-inf"), float("nan"), float("inf"), 10**400, True])
@pytest.mark.parametrize("kind,expected", [("at_most", 1000), ("value", 3), ("value", 2.5)])
def test_a_received_value_that_is_not_a_finite_number_fails(kind, expected, received):
    """Does a forged or broken figure (-inf is below every bound, NaN compares false, an int too
    large for a float, a bool for a number) fail a check of a finite number, after crossing?"""
    solution = [Checked("peak bytes", kind, None, expected, {})]
    mine = decode_record(json.loads(json.dumps(encode_record(Checked("peak bytes", kind, received, None, {})))))
    assert verdict([mine], solution) != ""
    assert not judge(Checked("peak bytes", kind, received, expected, {}))[0]


def test_a_forged_dtype_imports_nothing_in_the_grader():
    """Is a tensor record whose dtype names a lazily imported torch submodule ("_inductor": seconds
    and memory in the grader) refused without importing it?"""
    probe = (
        "import sys, torch\n"
        "from autograder.grading.sandbox.values import decode\n"
        "try:\n"
        "    decode({'__tensor__': {'dtype': '_inductor', 'shape': [1], 'device': 'cpu',"
        " 'requires_grad': False, 'data': [1.0]}})\n"
        "except ValueError:\n"
        "    print('refused', 'torch._inductor' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "refused False", done.stderr[-2000:]
