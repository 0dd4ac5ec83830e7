"""Does the memory instrument count exactly the bytes a graph saves, once per storage?"""

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from autograder.memory import SavedTensorMeter, cuda_memory, measure_saved

F32 = 4  # bytes per float32 element


def test_sigmoid_saves_its_output():
    """Does y = x.sigmoid() cost exactly the bytes of y (8 floats)?"""
    x = torch.randn(8, requires_grad=True)
    _, meter = measure_saved(torch.sigmoid, x)
    assert meter.alive_bytes == 8 * F32
    assert meter.packed_tensors == 1


def test_multiplying_by_a_python_number_saves_nothing():
    """Does y = x * 2 save no tensor at all (the 2 is kept as a scalar)?"""
    x = torch.randn(8, requires_grad=True)
    _, meter = measure_saved(lambda t: t * 2, x)
    assert meter.alive_bytes == 0 and meter.packed_tensors == 0


def test_a_tensor_saved_twice_is_counted_once():
    """Does x * x, which saves x as both operands, cost x's bytes once?"""
    x = torch.randn(6, requires_grad=True)
    _, meter = measure_saved(lambda t: t * t, x)
    assert meter.packed_tensors == 2
    assert meter.alive_bytes == 6 * F32


def test_a_saved_view_keeps_its_whole_storage():
    """Does saving a 2-element slice of a 10-element tensor keep all 10 elements' bytes?"""
    a = torch.randn(10, requires_grad=True)

    def f(a):
        b = a * 2
        return b[:2] * b[:2]

    _, meter = measure_saved(f, a)
    assert meter.alive_bytes == 10 * F32


def test_two_layer_network_hand_count():
    """Does Linear(4,3)-ReLU-Linear(3,2) on a [5,4] batch save x (80 B) and the ReLU output
    (60 B), parameters excluded, with the ReLU output shared by ReLU and the second addmm?"""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    x = torch.randn(5, 4)
    with SavedTensorMeter(exclude=model.parameters()) as meter:
        loss = model(x).sum()
    assert meter.alive_bytes == 5 * 4 * F32 + 5 * 3 * F32
    loss.backward()
    assert meter.alive_bytes == 0, "backward frees saved tensors"
    assert meter.peak_bytes == 140


def test_parameters_count_when_not_excluded():
    """Without exclude, does the second layer's weight (3x2 floats) count too?"""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    with SavedTensorMeter() as meter:
        loss = model(torch.randn(5, 4)).sum()
    assert meter.alive_bytes == 140 + 2 * 3 * F32
    del loss
    assert meter.alive_bytes == 0, "dropping the graph frees what it saved"


def test_retain_graph_keeps_saved_bytes_alive():
    """Does backward(retain_graph=True) leave the saved bytes alive until the graph is dropped?"""
    x = torch.randn(16, requires_grad=True)
    with SavedTensorMeter() as meter:
        loss = x.exp().sum()
    loss.backward(retain_graph=True)
    assert meter.alive_bytes == 16 * F32
    del loss
    assert meter.alive_bytes == 0


def test_peak_of_accumulation_is_one_micro_batch():
    """Is the peak over 4 micro-batches (backward after each) the bytes of one micro-batch?"""
    w = torch.randn(8, 8, requires_grad=True)
    batches = [torch.randn(3, 8) for _ in range(4)]  # separate storages, not views of one
    with SavedTensorMeter(exclude=[w]) as meter:
        for xb in batches:
            (xb @ w).tanh().sum().backward()
    one = 3 * 8 * F32 * 2  # xb (mm saves it) and the tanh output
    assert meter.peak_bytes == one
    assert meter.alive_bytes == 0


def test_float64_costs_twice_float32():
    """Are bytes counted by element size (float64 = 8 bytes)?"""
    x = torch.randn(8, dtype=torch.float64, requires_grad=True)
    _, meter = measure_saved(torch.sigmoid, x)
    assert meter.alive_bytes == 8 * 8


def test_cuda_memory_is_inert_without_cuda():
    """Without CUDA, are all CUDA figures zero and marked unavailable (no error)?"""
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: test_cuda_memory_counts_a_kept_tensor checks it")
    with cuda_memory() as figures:
        torch.randn(4).sum()
    assert figures.available is False and (figures.before, figures.after, figures.peak) == (0, 0, 0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_memory_counts_a_kept_tensor():
    """On CUDA, is the delta of a block that keeps one new tensor that tensor's bytes, rounded up
    to the caching allocator's 512-byte blocks, and the peak at least that?"""
    with cuda_memory() as figures:
        kept = torch.empty(1000, 3, device="cuda")
    rounded = -(-kept.nbytes // 512) * 512
    assert figures.available and figures.delta == rounded and figures.peak_delta >= rounded


def test_inplace_change_of_a_saved_tensor_still_raises():
    """Does autograd's version-counter error still reach the learner while the meter runs
    (saved_tensors_hooks alone would skip the check and give wrong gradients)?"""
    x = torch.randn(3, requires_grad=True)
    with SavedTensorMeter():
        y = x.sigmoid()
        y += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_gradients_are_unchanged_by_the_meter():
    """Are gradients computed under the meter the same as without it?"""
    x = torch.randn(5, requires_grad=True)
    with SavedTensorMeter():
        (x.sigmoid() * x.exp()).sum().backward()
    with_meter = x.grad.clone()
    x.grad = None
    (x.sigmoid() * x.exp()).sum().backward()
    torch.testing.assert_close(with_meter, x.grad)


def test_inplace_change_of_an_excluded_parameter_still_raises():
    """Does an optimizer step between a forward and its (retained) backward still raise the
    version error while the meter runs, for a parameter it does not count (exclude)?"""
    layer = nn.Linear(3, 2)
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    with SavedTensorMeter(exclude=layer.parameters()) as meter:
        loss = layer(torch.randn(4, 3, requires_grad=True)).pow(2).sum()
    loss.backward(retain_graph=True)
    opt.step()  # changes the weight addmm saved (transposed) to compute the input's gradient
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    assert meter.alive_bytes > 0  # the retained graph is still counted, weights apart


def test_a_whole_model_checkpoint_shows_only_its_input():
    """Is the meter blind to checkpoint's recomputation (NOTE 4): with the whole model in one
    non-reentrant checkpoint, is its peak over forward AND backward only the input's bytes, while
    the plain model's is every activation? (autograder.live_memory counts the step's real peak.)"""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh())
    x = torch.randn(5, 8)
    with SavedTensorMeter(exclude=model.parameters()) as plain:
        model(x).sum().backward()
    with SavedTensorMeter(exclude=model.parameters()) as whole:
        checkpoint(model, x, use_reentrant=False).sum().backward()
    assert plain.peak_bytes == 3 * x.nbytes  # x and the two Tanh outputs (Linear 2 saves the first too)
    assert whole.peak_bytes == x.nbytes
