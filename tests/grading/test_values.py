"""Are checked values carried as plain JSON and compared like the checks compare them?"""
import json

import torch

from autograder.grading.values import compare, decode, encode


def test_tensors_round_trip_through_json():
    """Does a tensor come back with its dtype, shape, values and requires_grad?"""
    t = torch.arange(6, dtype=torch.float64).reshape(2, 3).requires_grad_()
    back = decode(json.loads(json.dumps(encode(t))))
    assert back.dtype == torch.float64 and back.shape == (2, 3) and back.requires_grad
    assert torch.equal(back.detach(), t.detach())


def test_containers_and_objects():
    """Do dicts, tuples and unknown objects encode to something JSON can carry?"""
    value = {"w": torch.ones(1), ("a", 1): [True, None], "f": object()}
    back = decode(json.loads(json.dumps(encode(value))))
    assert back[("a", 1)] == [True, None] and back["f"] == "object"


def test_tensor_comparison_uses_the_diagnosis():
    """Is a doubled gradient diagnosed, and an equal one accepted?"""
    assert compare(encode(torch.ones(2)), encode(torch.ones(2)), "g", {}) == (True, "g is correct (relative error 0.0e+00).")
    ok, message = compare(encode(2 * torch.ones(2)), encode(torch.ones(2)), "g", {})
    assert not ok and "exactly 2x" in message


def test_plain_values_must_be_equal():
    """Are predictions compared exactly?"""
    assert compare(encode({"a": True}), encode({"a": True}), "p", {})[0]
    assert not compare(encode({"a": False}), encode({"a": True}), "p", {})[0]


def test_forged_values_are_rejected_not_trusted():
    """Is a malformed report a failed comparison, never an exception?"""
    assert compare({"__tensor__": {"dtype": "os.system"}}, encode(torch.ones(1)), "g", {})[0] is False
    assert compare({"__nothing__": 1}, encode(1), "g", {})[0] is False
