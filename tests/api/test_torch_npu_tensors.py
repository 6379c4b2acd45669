"""torch NPU tensors (torch_npu) passed as they are: no copy, torch's streams, torch results.

torch_npu cannot be installed without CANN and an NPU, so the tensors here are the
stand-in of ``npu_standin.py``: exactly the protocol aclnn_py reads, with real torch
dtypes, over memory another ACL user allocated through the emulator's C API. The
conformance report (``python -m aclnn_py.conformance``) runs the same checks with
torch_npu itself on an Ascend host.
"""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py.ops.dtypes import bfloat16_dtype

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
from npu_standin import NpuStream, NpuTensor, install  # noqa: E402 (the stand-in needs torch)

pytestmark = pytest.mark.skipif(not aclnn_py.emulator.loaded(),
                                reason="the stand-in allocates through the emulator")

RNG = np.random.default_rng(7)


def tensor(values, dtype=torch.float32):
    return NpuTensor.from_numpy(np.asarray(values), dtype)


def copies() -> int:
    return aclnn_py.emulator.stats()["memcpy_calls"]


@pytest.fixture
def torch_current(monkeypatch):
    """A torch_npu module whose current stream of device 0 is a stand-in stream."""
    stream = NpuStream()
    install(monkeypatch, {0: stream})
    yield stream
    stream.close()


@pytest.fixture(autouse=True)
def _recorded():
    NpuTensor.recorded.clear()
    yield
    NpuTensor.recorded.clear()


def test_curated_operator_reads_and_writes_tensors_where_they_live_without_a_copy():
    x = tensor(RNG.standard_normal((3, 4)).astype(np.float32))
    y = tensor(RNG.standard_normal((3, 4)).astype(np.float32))
    grad = tensor(np.ones((3, 4), np.float32))
    expected = (x.numpy() + 2 * y.numpy(), 2 * (x.numpy() - y.numpy()) / 12)
    before = copies()
    added = aclnn_py.add(x, y, alpha=2.0)
    gradient = aclnn_py.mse_loss_backward(grad, x, y)
    again = aclnn_py.add(x, y, alpha=2.0)  # the launch cache's path
    assert copies() == before  # nothing went through the host
    for result in (added, gradient, again):
        assert isinstance(result, NpuTensor)  # allocated by torch (new_empty), not a DeviceArray
        assert result.device == x.device
    np.testing.assert_allclose(added.numpy(), expected[0], rtol=1e-6)
    np.testing.assert_allclose(again.numpy(), expected[0], rtol=1e-6)
    np.testing.assert_allclose(gradient.numpy(), expected[1], rtol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64,
                                   torch.int8, torch.int16, torch.int32, torch.int64,
                                   torch.uint8, torch.bool, torch.complex64, torch.complex128])
def test_every_dtype_is_described_as_it_is(dtype):
    values = RNG.integers(0, 3, (2, 5)).astype(np.float32)
    x = tensor(values, dtype)
    array = aclnn_py.runtime.npu_tensors.adopt(x, "x")
    assert array.dtype == x.numpy_dtype
    assert array.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(aclnn_py.asnumpy(x), values.astype(x.numpy_dtype))
    if dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64):
        result = aclnn_py.call("aclnnMul", x, x)
        assert isinstance(result, NpuTensor) and result.dtype == dtype
        np.testing.assert_array_equal(result.numpy(), (values * values).astype(x.numpy_dtype))


def test_strided_and_offset_views_are_passed_through_their_strides():
    base = tensor(np.arange(48, dtype=np.float32).reshape(6, 8))
    host = base.numpy()
    transposed = base.as_strided((8, 6), (1, 8), 0)           # base.T
    sliced = base.as_strided((3, 4), (16, 2), 9)              # base[1::2, 1::2]
    before = copies()
    sum_t = aclnn_py.call("aclnnAdd", transposed, transposed, 1)
    sum_s = aclnn_py.add(sliced, sliced)
    assert copies() == before
    np.testing.assert_array_equal(sum_t.numpy(), 2 * host.T)
    np.testing.assert_array_equal(sum_s.numpy(), 2 * host[1::2, 1::2])


def test_out_and_in_place_tensors_are_written_where_they_live():
    x = tensor(np.arange(6, dtype=np.float32))
    y = tensor(np.full(6, 3, np.float32))
    out = NpuTensor.empty((6,), torch.float32)
    before = copies()
    assert aclnn_py.add(x, y, out=out) is out
    assert aclnn_py.call("aclnnMul", x, y, out=out) is out
    updated = aclnn_py.call("aclnnInplaceAdd", x, y, 2.0)
    assert copies() == before
    assert updated is x
    np.testing.assert_array_equal(out.numpy(), np.arange(6) * 3)
    np.testing.assert_array_equal(x.numpy(), np.arange(6) + 6)


def test_mixing_tensors_device_arrays_and_numpy():
    x = tensor(np.arange(4, dtype=np.float32))
    d = aclnn_py.to_device(np.full(4, 10, np.float32))
    mixed = aclnn_py.add(x, d)
    assert isinstance(mixed, NpuTensor)  # a torch tensor in, a torch tensor out
    np.testing.assert_array_equal(mixed.numpy(), np.arange(4) + 10)
    with_host = aclnn_py.add(np.ones(4, np.float32), x)  # the numpy input is copied up
    np.testing.assert_array_equal(with_host.numpy(), np.arange(4) + 1)
    into_device = aclnn_py.add(x, x, out=aclnn_py.empty(4, np.float32))
    assert isinstance(into_device, aclnn_py.DeviceArray)
    np.testing.assert_array_equal(into_device.numpy(), 2 * np.arange(4))


def test_without_torch_npu_the_work_goes_on_aclnn_pys_current_stream():
    x = tensor(np.ones(4, np.float32))
    with aclnn_py.Stream() as mine:
        aclnn_py.add(x, x)
        held = mine.queued_mark()
    assert held == 1  # queued on `mine`, the tensors held until it is done
    mine.close()


def test_with_torch_npu_the_work_goes_on_torchs_current_stream_flushed_first(torch_current):
    x = tensor(np.ones(4, np.float32))
    reads = torch_current.reads
    result = aclnn_py.add(x, x)
    ours = aclnn_py.Stream.from_handle(torch_current.handle.value)
    assert torch_current.reads == reads + 1  # npu_stream read: torch_npu's queue emptied
    assert ours.queued_mark() == 1  # the work is on torch's stream
    assert NpuTensor.recorded == []  # torch's own current stream: nothing to record
    np.testing.assert_array_equal(result.numpy(), np.full(4, 2))
    aclnn_py.call("aclnnAdd", x, x, 1)
    assert torch_current.reads > reads + 1  # flushed again (twice on a first signature)
    reads = torch_current.reads
    aclnn_py.call("aclnnAdd", x, x, 1)  # the repeated call's path
    assert torch_current.reads == reads + 1


def test_torch_npus_raw_current_stream_getter_is_used_when_it_has_one(monkeypatch, torch_current):
    import sys
    import types

    module = sys.modules["torch_npu"]
    asked = []

    def raw(device):
        asked.append(device)
        return torch_current.npu_stream  # read: torch_npu's queue emptied, as stream() does

    def no_stream_object(device=None):
        raise AssertionError("a torch.npu.Stream was built")

    monkeypatch.setattr(module, "_C", types.SimpleNamespace(_npu_getCurrentRawStream=raw),
                        raising=False)
    monkeypatch.setattr(module.npu, "current_stream", no_stream_object)
    x = tensor(np.ones(4, np.float32))
    grad, y = tensor(np.ones(4, np.float32)), tensor(np.zeros(4, np.float32))
    for _ in range(2):  # a first signature, then the launch cache's route
        reads = torch_current.reads
        result = aclnn_py.mse_loss_backward(grad, x, y)
        assert torch_current.reads > reads  # flushed before the launch
        np.testing.assert_allclose(result.numpy(), np.full(4, 0.5))
    assert asked and set(asked) == {0}
    assert aclnn_py.Stream.from_handle(torch_current.handle.value).queued_mark() >= 1


def test_the_inputs_formats_are_asked_and_the_result_torch_allocated_is_not(monkeypatch,
                                                                            torch_current):
    import sys

    asked = []
    monkeypatch.setattr(sys.modules["torch_npu"], "get_npu_format",
                        lambda t: asked.append(id(t)) or 2, raising=False)
    grad, x, y = (tensor(np.full(4, v, np.float32)) for v in (1, 1, 0))
    for _ in range(2):
        asked.clear()
        result = aclnn_py.mse_loss_backward(grad, x, y)
        assert sorted(asked) == sorted(map(id, (grad, x, y)))
        np.testing.assert_allclose(result.numpy(), np.full(4, 0.5))


def test_a_torch_stream_given_is_used_and_every_tensor_recorded_on_it():
    x, y = tensor(np.ones(4, np.float32)), tensor(np.full(4, 2, np.float32))
    side = NpuStream()
    try:
        result = aclnn_py.add(x, y, stream=side)
        ours = aclnn_py.Stream.from_handle(side.handle.value)
        assert ours.queued_mark() >= 1
        recorded = {identity for identity, stream in NpuTensor.recorded if stream is side}
        assert recorded == {id(x), id(y), id(result)}
        ours.synchronize()
        np.testing.assert_array_equal(result.numpy(), np.full(4, 3))
        # DeviceArrays on a torch stream: no tensor to record, the stream is still used
        d = aclnn_py.to_device(np.ones(4, np.float32))
        assert isinstance(aclnn_py.add(d, d, stream=side), aclnn_py.DeviceArray)
    finally:
        side.close()


def test_a_tensor_freed_by_its_owner_while_the_work_is_queued_stays_until_it_is_done():
    """On an aclnn_py stream torch cannot record: the launch holds the tensor instead, so
    the memory is not given back (the emulator refuses aclrtFree of memory in use)."""
    stream = aclnn_py.Stream()
    x = tensor(np.arange(8, dtype=np.float32))
    result = aclnn_py.add(x, x, stream=stream)
    storage = x.untyped_storage()
    del x
    assert storage.pointer.value  # still allocated: the queued launch keeps the tensor
    del storage
    stream.synchronize()
    np.testing.assert_array_equal(result.numpy(), 2 * np.arange(8))
    stream.close()


def test_plans_take_tensors_and_rebind_them():
    x, y = tensor(np.arange(4, dtype=np.float32)), tensor(np.ones(4, np.float32))
    plan = aclnn_py.AddPlan(x, y, alpha=3.0)
    assert isinstance(plan.out, NpuTensor)
    other = tensor(np.full(4, 5, np.float32))
    before = copies()
    assert plan.run() is plan.out
    plan.run(x=other)
    assert copies() == before
    np.testing.assert_array_equal(plan.out.numpy(), np.full(4, 8))
    with pytest.raises(ValueError, match="must match the planned array"):
        plan.run(x=tensor(np.ones(5, np.float32)))
    plan.close()


def test_a_plan_on_torchs_stream_flushes_it_at_every_run(torch_current):
    x = tensor(np.ones(4, np.float32))
    plan = aclnn_py.AddPlan(x, x)
    reads = torch_current.reads
    plan.run()
    plan.run()
    assert torch_current.reads == reads + 2
    np.testing.assert_array_equal(plan.out.numpy(), np.full(4, 2))
    plan.close()


def test_refusals_name_the_argument_and_the_rule():
    x = tensor(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="x has dtype int32; supported"):
        aclnn_py.mse_loss(tensor(np.ones(4), torch.int32), x)
    negative = x.as_strided((4,), (-1,), 3)
    with pytest.raises(ValueError, match="x has negative strides"):
        aclnn_py.add(negative, x)
    past = x.as_strided((4,), (2,), 0)
    with pytest.raises(ValueError, match="y reaches past its storage"):
        aclnn_py.add(x, past)
    with pytest.raises(TypeError, match="no aclDataType"):
        aclnn_py.add(NpuTensor.empty((2,), torch.float8_e4m3fn), x)
    with pytest.raises(ValueError, match="shapes do not broadcast"):
        aclnn_py.add(x, tensor(np.ones(3, np.float32)))


def test_a_private_npu_format_is_refused(monkeypatch, torch_current):
    import sys

    x = tensor(np.ones(4, np.float32))
    monkeypatch.setattr(sys.modules["torch_npu"], "get_npu_format", lambda t: 29, raising=False)
    with pytest.raises(TypeError, match="internal format 29.*npu_format_cast"):
        aclnn_py.add(x, x)
    monkeypatch.setattr(sys.modules["torch_npu"], "get_npu_format", lambda t: 2)
    np.testing.assert_array_equal(aclnn_py.add(x, x).numpy(), np.full(4, 2))


def test_bfloat16_values_round_trip():
    values = np.array([1.5, -2.25, 3.0], bfloat16_dtype())
    x = NpuTensor.from_numpy(values, torch.bfloat16)
    result = aclnn_py.add(x, x)
    np.testing.assert_array_equal(result.numpy(), (values.astype(np.float32) * 2).astype(
        bfloat16_dtype()))


def test_nothing_is_left_behind():
    from conftest import live_resources

    aclnn_py.synchronize()  # what earlier tests queued is done: aclnn_py lets go of it
    before = live_resources()
    x = tensor(np.ones(64, np.float32))
    for _ in range(5):
        aclnn_py.add(x, x)
        aclnn_py.call("aclnnMul", x, x)
    aclnn_py.synchronize()
    del x
    assert live_resources() == before


def test_synchronize_and_events_take_a_torch_stream():
    side = NpuStream()
    try:
        x = tensor(np.ones(4, np.float32))
        result = aclnn_py.add(x, x, stream=side)
        ours = aclnn_py.Stream.from_handle(side.handle.value)
        assert ours.queued_mark() > 0
        aclnn_py.synchronize(side)  # the torch stream itself
        start, end = aclnn_py.Event(), aclnn_py.Event()
        start.record(side)
        aclnn_py.add(x, x, stream=side)
        end.record(side)
        end.synchronize()
        assert start.elapsed_ms(end) >= 0
        np.testing.assert_array_equal(result.numpy(), np.full(4, 2))
    finally:
        side.close()


def test_to_device_of_an_npu_tensor_says_what_to_do():
    with pytest.raises(TypeError, match="operators take NPU tensors as they are"):
        aclnn_py.to_device(tensor(np.ones(2, np.float32)))


def test_a_data_dependent_result_is_a_view_of_the_torch_result_s_real_extent():
    x = tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    mask = tensor(np.array([True, False, True]), torch.bool)
    got = aclnn_py.call("aclnnMaskedSelect", x, mask)
    assert isinstance(got, NpuTensor) and tuple(got.shape) == (4,)
    assert got.numpy().tolist() == [0.0, 2.0, 3.0, 5.0]


def test_a_torch_devices_kind_is_read_once_and_other_devices_each_time():
    """``device.type`` builds a string per read: a torch.device's kind is kept (it compares
    by value), so CPU tensors stay host tensors from the table; a device object of another
    kind, such as the stand-in's or one that does not hash, is read each time."""
    from aclnn_py.runtime import arrays

    cpu = torch.ones(2)
    assert not arrays.is_npu_tensor(cpu)
    assert arrays._npu_devices.get(torch.device("cpu")) is False
    assert not arrays.is_npu_tensor(cpu)

    class Unhashable:
        type = "npu"
        index = 0
        __hash__ = None  # type: ignore[assignment]

    class Tensor:
        device = Unhashable()

        def untyped_storage(self) -> None: ...

    assert arrays.is_npu_tensor(Tensor())
    tensor = NpuTensor.empty((2,), torch.float32)
    assert arrays.is_npu_tensor(tensor) and tensor.device not in arrays._npu_devices
