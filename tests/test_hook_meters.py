"""Do the hook meters count the bytes of .grad tensors alive at once, and of what a pack hook keeps?"""

import torch
from torch import nn

from autograder.hook_meters import GradBytesMeter, PackedBytesMeter
from autograder.memory import measure_saved


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))


def test_plain_backward_keeps_every_grad():
    """After a plain backward, is the peak the bytes of every parameter (float32: 4 bytes each)?"""
    model = _model()
    with GradBytesMeter(model.parameters()) as meter:
        model(torch.randn(3, 8)).sum().backward()
    assert meter.peak_bytes == 4 * sum(p.numel() for p in model.parameters())
    assert meter.samples == 4


def test_step_in_backward_keeps_one_grad_at_a_time():
    """With a hook that steps and frees each .grad (registered after the meter), is the peak the
    largest parameter's bytes, and are the parameters those of a plain SGD step?"""
    model, plain = _model(), _model()
    meter = GradBytesMeter(model.parameters())

    def step(p):
        with torch.no_grad():
            p -= 0.1 * p.grad
        p.grad = None

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step)
    x = torch.randn(3, 8)
    model(x).sum().backward()
    plain(x).sum().backward()
    torch.optim.SGD(plain.parameters(), lr=0.1).step()
    assert meter.peak_bytes == 4 * max(p.numel() for p in model.parameters())
    assert all(torch.allclose(a, b) for a, b in zip(model.parameters(), plain.parameters()))
    assert all(p.grad is None for p in model.parameters())


def test_meter_removed_stops_sampling():
    """Does leaving the block remove the meter's hooks?"""
    model = _model()
    with GradBytesMeter(model.parameters()) as meter:
        pass
    model(torch.randn(3, 8)).sum().backward()
    assert meter.samples == 0


def test_identity_pack_counts_what_saved_tensor_meter_counts():
    """Does an identity pack cost what SavedTensorMeter counts, and does backward free it?"""
    model, x = _model(), torch.randn(3, 8)
    _, plain = measure_saved(lambda: model(x).sum(), exclude=model.parameters())
    with PackedBytesMeter(lambda t: t, lambda t: t, exclude=model.parameters()) as meter:
        loss = model(x).sum()
    assert meter.alive_bytes == plain.alive_bytes > 0
    loss.backward()
    assert meter.alive_bytes == 0


def test_half_precision_pack_halves_and_tuples_are_read():
    """Does a pack returning (dtype, 16-bit copy) for activations (parameters kept) cost half,
    with gradients close to the plain ones?"""
    model, x = _model(), torch.randn(3, 8)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    _, plain = measure_saved(lambda: model(x).sum(), exclude=model.parameters())

    def pack(t):
        return t if t.untyped_storage().data_ptr() in params else (t.dtype, t.half())

    def unpack(packed):
        return packed if isinstance(packed, torch.Tensor) else packed[1].to(packed[0])

    with PackedBytesMeter(pack, unpack, exclude=model.parameters()) as meter:
        loss = model(x).sum()
    assert meter.alive_bytes * 2 == plain.alive_bytes
    got = torch.autograd.grad(loss, list(model.parameters()))
    want = torch.autograd.grad(model(x).sum(), list(model.parameters()))
    assert all(torch.allclose(a, b, rtol=1e-2, atol=1e-3) for a, b in zip(got, want))
