"""One-shot calls on device arrays: cached repeatable executors per stream and call signature."""

from __future__ import annotations

import functools
import gc

import numpy as np
import pytest
from conftest import fired_faults, run_python
from helpers import mse_backward, mse_forward, run_interleaved, settle, upload

import aclnn_py
from aclnn_py import AclError
from aclnn_py._c import lowlevel as _lowlevel
from aclnn_py.engine import launch_cache as _launch_cache
from aclnn_py.runtime import streams as _streams

# The emulator itself, its counters and fault injection: not portable to CANN.
pytestmark = pytest.mark.emulator_only

PHASE_1 = "aclnnMseLossBackwardGetWorkspaceSize"
PHASE_2 = "aclnnMseLossBackward"
PARAM_INVALID = 161002
SET_INPUT = "aclSetInputTensorAddr"
SET_OUTPUT = "aclSetOutputTensorAddr"
EMULATOR = {"ACLNN_PY_BACKEND": "emulator"}


def stats() -> dict[str, int]:
    return aclnn_py.emulator.stats()


@pytest.fixture(autouse=True)
def baseline():
    """The counters before the test; afterwards no cached executor or aclTensor is left."""
    before = settle()
    yield before
    after = settle()
    assert after["live_executors"] == before["live_executors"]
    assert after["live_tensors"] == before["live_tensors"]


def default_cache() -> dict:
    return _launch_cache.cache_of(_streams.current_stream())


def free(*arrays: aclnn_py.DeviceArray) -> None:
    for array in arrays:
        array.free()


def operands(rng: np.random.Generator, shape=(2, 3), dtype=np.float32) -> list[np.ndarray]:
    return [rng.standard_normal(shape).astype(dtype) for _ in range(3)]


def uploaded_operands(seed: int) -> tuple[list[np.ndarray], list[aclnn_py.DeviceArray]]:
    """``operands`` of a generator seeded with ``seed``, and their device copies."""
    host = operands(np.random.default_rng(seed))
    return host, upload(*host)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_repeats_keep_one_executor_and_rebind_new_arrays(baseline, reduction):
    rng = np.random.default_rng(1)
    calls = []
    for _ in range(20):  # all queued before any result is read
        host = operands(rng)
        device = upload(*host)
        calls.append((host, device, aclnn_py.mse_loss_backward(*device, reduction)))
    after = stats()
    assert after["live_executors"] == baseline["live_executors"] + 1
    assert after["kernel_launches"] - baseline["kernel_launches"] == 20
    assert len(default_cache()) == 1
    for host, device, result in calls:
        np.testing.assert_allclose(result.numpy(), mse_backward(*host, reduction), rtol=1e-6)
        free(*device, result)


def test_a_repeat_rebinds_only_addresses_that_changed():
    """A result block the pool hands out again sits at the address the executor already
    has: nothing is rebound. New input buffers are rebound, and compute right. (The rebinds
    happen in the host library's one call of a relaunch: counted by armed faults, which
    fire at a given call of the C function.)"""
    rng = np.random.default_rng(3)
    host = operands(rng)
    device = upload(*host)
    aclnn_py.mse_loss_backward(*device).free()  # phase 1; the result block goes back
    aclnn_py.emulator.inject_fault(SET_INPUT, PARAM_INVALID, nth=1)
    aclnn_py.emulator.inject_fault(SET_OUTPUT, PARAM_INVALID, nth=1)
    for _ in range(5):
        result = aclnn_py.mse_loss_backward(*device)
        np.testing.assert_allclose(result.numpy(), mse_backward(*host, "mean"), rtol=1e-6)
        result.free()
    assert fired_faults() == []  # nothing was rebound
    aclnn_py.emulator.clear_faults()
    aclnn_py.emulator.inject_fault(SET_INPUT, PARAM_INVALID, nth=4)
    other = operands(rng)
    moved = upload(*other)
    result = aclnn_py.mse_loss_backward(*moved)
    np.testing.assert_allclose(result.numpy(), mse_backward(*other, "mean"), rtol=1e-6)
    assert fired_faults() == []  # at most the three inputs were rebound...
    aclnn_py.emulator.clear_faults()
    (entry,) = default_cache().values()
    record = entry._launcher.record
    assert [record.record.bound[i] for i in range(3)] == [a.buffer.pointer for a in moved]
    free(*device, *moved, result)  # ...and all three were


def test_a_failed_rebind_raises_with_canns_message_and_forgets_the_executor(baseline):
    """A rebind CANN refuses raises its AclError (the rebind's name, CANN's message); nothing
    is queued, and the executor is not trusted again: the next call runs phase 1."""
    rng = np.random.default_rng(4)
    device = upload(*operands(rng))
    aclnn_py.mse_loss_backward(*device).free()
    host = operands(rng)
    moved = upload(*host)
    launches = stats()["kernel_launches"]
    aclnn_py.emulator.inject_fault(SET_INPUT, PARAM_INVALID, nth=2)
    with pytest.raises(AclError) as raised:
        aclnn_py.mse_loss_backward(*moved)
    assert raised.value.api == SET_INPUT
    assert raised.value.status == PARAM_INVALID
    assert "injected fault" in str(raised.value)
    assert stats()["kernel_launches"] == launches
    assert len(default_cache()) == 0
    result = aclnn_py.mse_loss_backward(*moved)
    np.testing.assert_allclose(result.numpy(), mse_backward(*host, "mean"), rtol=1e-6)
    free(*device, *moved, result)


def test_a_repeat_skips_phase_1():
    rng = np.random.default_rng(2)
    first = upload(*operands(rng))
    aclnn_py.mse_loss_backward(*first).free()
    host = operands(rng)
    again = upload(*host)
    aclnn_py.emulator.inject_fault(PHASE_1, PARAM_INVALID, nth=1)
    result = aclnn_py.mse_loss_backward(*again)
    np.testing.assert_allclose(result.numpy(), mse_backward(*host, "mean"), rtol=1e-6)
    assert fired_faults() == []  # the repeat never called phase 1
    other = upload(*operands(rng, shape=(3, 2)))
    with pytest.raises(AclError) as raised:
        aclnn_py.mse_loss_backward(*other)
    assert fired_faults() == [PHASE_1]
    assert raised.value.api == PHASE_1
    assert raised.value.status == PARAM_INVALID
    assert raised.value.name == "ACLNN_ERR_PARAM_INVALID"
    assert len(default_cache()) == 1
    free(*first, *again, *other, result)


def test_reduction_spellings_share_one_entry(baseline):
    host, device = uploaded_operands(3)
    for reduction in ("sum", 2, aclnn_py.Reduction.SUM, np.int64(2)):
        result = aclnn_py.mse_loss_backward(*device, reduction)
        np.testing.assert_allclose(result.numpy(), mse_backward(*host, "sum"), rtol=1e-6)
        result.free()
    assert len(default_cache()) == 1
    assert stats()["live_executors"] == baseline["live_executors"] + 1
    free(*device)


def test_each_signature_has_its_own_entry(baseline):
    rng = np.random.default_rng(4)

    def plain():
        return [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3)]

    def transposed():
        grad, x, y = plain()
        return [grad, np.ascontiguousarray(x.T).T, y]  # x laid out column-major

    def half():
        return [array.astype(np.float16) for array in plain()]

    def wide():
        return [rng.standard_normal((3, 2)).astype(np.float32) for _ in range(3)]

    variants = [  # (make inputs, reduction, out dtype or None, tolerance)
        (plain, "mean", None, 1e-6),
        (plain, "sum", None, 1e-6),
        (half, "mean", None, 2e-3),
        (wide, "mean", None, 1e-6),
        (transposed, "mean", None, 1e-6),
        (plain, "mean", np.float32, 1e-6),
        (plain, "mean", np.float16, 2e-3),
    ]
    for count, (make, reduction, out_dtype, tolerance) in enumerate(variants, 1):
        for _ in range(3):
            host = make()
            device = upload(*host)
            if make is transposed:
                assert not device[1].is_contiguous
            out = None if out_dtype is None else aclnn_py.empty(host[1].shape, out_dtype)
            result = aclnn_py.mse_loss_backward(*device, reduction, out=out)
            assert out is None or result is out
            expected = mse_backward(*(a.astype(np.float64) for a in host), reduction)
            np.testing.assert_allclose(result.numpy(), expected, rtol=tolerance, atol=tolerance)
            free(*device, result)
        assert len(default_cache()) == count
        assert stats()["live_executors"] == baseline["live_executors"] + count


def test_alternating_outs_are_each_filled(baseline):
    rng = np.random.default_rng(5)
    outs = [aclnn_py.empty((2, 3), np.float32) for _ in range(2)]
    for step in range(6):
        host = operands(rng)
        device = upload(*host)
        out = outs[step % 2]
        assert aclnn_py.mse_loss_backward(*device, "none", out=out) is out
        np.testing.assert_allclose(out.numpy(), mse_backward(*host, "none"), rtol=1e-6)
        free(*device)
    assert len(default_cache()) == 1
    assert stats()["live_executors"] == baseline["live_executors"] + 1
    free(*outs)


def test_queued_repeats_into_alternating_outs_keep_their_own_values():
    rng = np.random.default_rng(6)
    outs = [aclnn_py.empty((2, 3), np.float32) for _ in range(2)]
    hosts = [operands(rng) for _ in range(2)]
    devices = [upload(*host) for host in hosts]
    for step in range(6):  # nothing waits in between
        aclnn_py.mse_loss_backward(*devices[step % 2], "sum", out=outs[step % 2])
    for out, host in zip(outs, hosts):
        np.testing.assert_allclose(out.numpy(), mse_backward(*host, "sum"), rtol=1e-6)
    free(*outs, *devices[0], *devices[1])


@pytest.mark.parametrize("name", ["grad", "x", "y"])
def test_a_freed_input_is_refused_on_a_first_call_and_on_a_repeat(name):
    rng = np.random.default_rng(7)
    index = ("grad", "x", "y").index(name)
    host = operands(rng)
    device = upload(*host)
    gone = aclnn_py.to_device(host[index])
    gone.free()
    arguments = list(device)
    arguments[index] = gone
    launches = stats()["kernel_launches"]
    with pytest.raises(ValueError, match=f"^{name} is a DeviceArray that was freed$"):
        aclnn_py.mse_loss_backward(*arguments)
    assert stats()["kernel_launches"] == launches
    assert len(default_cache()) == 0
    aclnn_py.mse_loss_backward(*device).free()  # the signature is cached now
    launches = stats()["kernel_launches"]
    with pytest.raises(ValueError, match=f"^{name} is a DeviceArray that was freed$"):
        aclnn_py.mse_loss_backward(*arguments)
    assert stats()["kernel_launches"] == launches
    aclnn_py.mse_loss_backward(*device).free()  # cached and bound to device's arrays
    device[index].free()
    launches = stats()["kernel_launches"]
    with pytest.raises(ValueError, match=f"^{name} is a DeviceArray that was freed$"):
        aclnn_py.mse_loss_backward(*device)
    assert stats()["kernel_launches"] == launches
    fresh = upload(*host)
    result = aclnn_py.mse_loss_backward(*fresh)
    np.testing.assert_allclose(result.numpy(), mse_backward(*host, "mean"), rtol=1e-6)
    free(*device, *fresh, result)


def test_a_freed_out_is_refused_on_a_first_call_and_on_a_repeat():
    host, device = uploaded_operands(8)
    out = aclnn_py.empty((2, 3), np.float32)
    out.free()
    launches = stats()["kernel_launches"]
    with pytest.raises(ValueError, match="^out is a DeviceArray that was freed$"):
        aclnn_py.mse_loss_backward(*device, out=out)
    assert stats()["kernel_launches"] == launches
    assert len(default_cache()) == 0
    out = aclnn_py.empty((2, 3), np.float32)
    aclnn_py.mse_loss_backward(*device, out=out)  # the signature is cached now
    out.free()
    launches = stats()["kernel_launches"]
    with pytest.raises(ValueError, match="^out is a DeviceArray that was freed$"):
        aclnn_py.mse_loss_backward(*device, out=out)
    assert stats()["kernel_launches"] == launches
    out = aclnn_py.empty((2, 3), np.float32)
    aclnn_py.mse_loss_backward(*device, out=out)
    np.testing.assert_allclose(out.numpy(), mse_backward(*host, "mean"), rtol=1e-6)
    free(*device, out)


def test_a_freed_empty_array_is_refused_on_a_first_call_and_on_a_repeat():
    empty = [aclnn_py.to_device(np.zeros((0, 3), np.float32)) for _ in range(3)]
    gone = aclnn_py.to_device(np.zeros((0, 3), np.float32))
    gone.free()
    launches = stats()["kernel_launches"]
    with pytest.raises(ValueError, match="^x is a DeviceArray that was freed$"):
        aclnn_py.mse_loss_backward(empty[0], gone, empty[2], "none")
    assert stats()["kernel_launches"] == launches
    result = aclnn_py.mse_loss_backward(*empty, "none")  # the signature is cached now
    assert result.numpy().shape == (0, 3)
    launches = stats()["kernel_launches"]
    with pytest.raises(ValueError, match="^x is a DeviceArray that was freed$"):
        aclnn_py.mse_loss_backward(empty[0], gone, empty[2], "none")
    assert stats()["kernel_launches"] == launches
    free(*empty, result)


def test_a_failed_launch_leaves_the_cache(baseline):
    rng = np.random.default_rng(10)
    first = upload(*operands(rng))
    aclnn_py.mse_loss_backward(*first).free()
    assert len(default_cache()) == 1
    aclnn_py.emulator.inject_fault(PHASE_2, 561000, nth=1)
    with pytest.raises(AclError) as raised:
        aclnn_py.mse_loss_backward(*first)
    assert (raised.value.api, raised.value.status) == (PHASE_2, 561000)
    del raised
    assert len(default_cache()) == 0
    aclnn_py.emulator.inject_fault(PHASE_1, PARAM_INVALID, nth=1)
    with pytest.raises(AclError, match=PHASE_1):  # the next call does phase 1 again
        aclnn_py.mse_loss_backward(*first)
    host = operands(rng)
    again = upload(*host)
    result = aclnn_py.mse_loss_backward(*again)
    np.testing.assert_allclose(result.numpy(), mse_backward(*host, "mean"), rtol=1e-6)
    assert len(default_cache()) == 1
    free(*first, *again, result)
    after = settle()
    assert after["live_executors"] == baseline["live_executors"]
    assert after["live_tensors"] == baseline["live_tensors"]


def test_a_failed_first_launch_caches_nothing(baseline):
    host, device = uploaded_operands(11)
    aclnn_py.emulator.inject_fault(PHASE_2, 561000, nth=1)
    with pytest.raises(AclError, match=PHASE_2):
        aclnn_py.mse_loss_backward(*device, "sum")
    assert len(default_cache()) == 0
    gc.collect()
    assert stats()["live_executors"] == baseline["live_executors"]
    result = aclnn_py.mse_loss_backward(*device, "sum")
    np.testing.assert_allclose(result.numpy(), mse_backward(*host, "sum"), rtol=1e-6)
    free(*device, result)


def test_each_stream_has_its_own_cache_and_close_releases_it(baseline):
    host, device = uploaded_operands(12)
    side = aclnn_py.Stream()
    for _ in range(3):
        result = aclnn_py.mse_loss_backward(*device, stream=side)
        np.testing.assert_allclose(result.numpy(), mse_backward(*host, "mean"), rtol=1e-6)
        result.free()
    with side:
        aclnn_py.mse_loss_backward(*device, "sum").free()
    assert len(_launch_cache.cache_of(side)) == 2
    assert len(default_cache()) == 0
    result = aclnn_py.mse_loss_backward(*device)
    np.testing.assert_allclose(result.numpy(), mse_backward(*host, "mean"), rtol=1e-6)
    assert len(default_cache()) == 1 and len(_launch_cache.cache_of(side)) == 2
    assert stats()["live_executors"] == baseline["live_executors"] + 3
    side.close()
    assert len(_launch_cache.cache_of(side)) == 0
    assert stats()["live_executors"] == baseline["live_executors"] + 1
    free(*device, result)


def test_a_dropped_stream_releases_its_cached_launches_at_once(baseline):
    host, device = uploaded_operands(17)
    side = aclnn_py.Stream()
    result = aclnn_py.mse_loss_backward(*device, stream=side)
    np.testing.assert_allclose(result.numpy(), mse_backward(*host, "mean"), rtol=1e-6)
    free(*device, result)  # the arrays no longer refer to the stream
    assert stats()["live_executors"] == baseline["live_executors"] + 1
    del side  # no reference cycle: released without waiting for the garbage collector
    assert stats()["live_executors"] == baseline["live_executors"]


def test_arrays_last_used_on_a_closed_stream_stay_usable():
    host, device = uploaded_operands(16)
    aclnn_py.mse_loss_backward(*device).free()  # the default stream's entry
    side = aclnn_py.Stream()
    on_side = aclnn_py.mse_loss_backward(*device, stream=side)
    side.close()  # waits for its work
    np.testing.assert_allclose(on_side.numpy(), mse_backward(*host, "mean"), rtol=1e-6)
    result = aclnn_py.mse_loss_backward(*device)  # a cached repeat
    np.testing.assert_allclose(result.numpy(), mse_backward(*host, "mean"), rtol=1e-6)
    free(*device, on_side, result)


def test_empty_cache_releases_every_cached_launch(baseline):
    rng = np.random.default_rng(13)
    side = aclnn_py.Stream()
    made = []
    for shape in ((2, 3), (4,), (3, 2)):
        host = operands(rng, shape)
        device = upload(*host)
        made += device
        made.append(aclnn_py.mse_loss_backward(*device, "none"))
        made.append(aclnn_py.mse_loss_backward(*device, "sum", stream=side))
    aclnn_py.synchronize(side)
    assert stats()["live_executors"] == baseline["live_executors"] + 6
    free(*made)
    aclnn_py.synchronize()
    aclnn_py.empty_cache()
    after = stats()
    assert len(default_cache()) == 0 and len(_launch_cache.cache_of(side)) == 0
    for key in ("live_executors", "live_tensors", "live_device_bytes"):
        assert after[key] == baseline[key], key
    side.close()


def test_empty_cache_keeps_what_queued_work_still_uses(baseline):
    host = [np.full((2, 3), 0.5, np.float32),
            np.arange(6, dtype=np.float32).reshape(3, 2).T,  # uses a workspace
            np.ones((2, 3), np.float32)]
    device = upload(*host)
    result = aclnn_py.mse_loss_backward(*device, "none")
    aclnn_py.empty_cache()
    assert len(default_cache()) == 0
    assert stats()["live_executors"] == baseline["live_executors"] + 1  # held for the work
    np.testing.assert_allclose(result.numpy(), mse_backward(*host, "none"), rtol=1e-6)
    assert stats()["live_executors"] == baseline["live_executors"]
    free(*device, result)


def test_threads_share_the_default_streams_entry(baseline):
    errors: list[BaseException] = []
    checked: list[int] = []

    def work(index: int) -> None:
        try:
            host = [np.full(16, 0.5 + index, np.float32),
                    np.arange(16, dtype=np.float32) * (index + 1),
                    np.full(16, float(index), np.float32)]
            device = upload(*host)
            expected = mse_backward(*host, "sum")
            results = [aclnn_py.mse_loss_backward(*device, "sum") for _ in range(50)]
            for result in results:
                np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)
                result.free()
            free(*device)
            checked.append(index)
        except BaseException as error:  # re-raised in the test's thread
            errors.append(error)

    run_interleaved(*(functools.partial(work, index) for index in range(4)))
    if errors:
        raise errors[0]
    assert sorted(checked) == [0, 1, 2, 3]
    aclnn_py.synchronize()
    gc.collect()
    assert len(default_cache()) == 1
    assert stats()["live_executors"] == baseline["live_executors"] + 1


def test_work_on_another_stream_is_awaited_before_a_cached_repeat():
    grad, x, zero, ones, zeros = upload(
        np.ones(4, np.float32), np.arange(4, dtype=np.float32), np.zeros(4, np.float32),
        np.ones(4, np.float32), np.zeros(4, np.float32))
    doubled, target = upload(*[np.full(4, -1.0, np.float32)] * 2)  # -1 until written
    aclnn_py.mse_loss_backward(ones, x, zeros, "none").free()  # the default stream's entries
    aclnn_py.mse_loss_backward(ones, x, zeros, "none", out=target)
    side = aclnn_py.Stream()
    aclnn_py.mse_loss_backward(grad, x, zero, "none", out=doubled, stream=side)
    assert doubled.stream is side
    aclnn_py.emulator.inject_fault(PHASE_1, PARAM_INVALID, nth=1)  # only a repeat succeeds
    result = aclnn_py.mse_loss_backward(ones, doubled, zeros, "none")
    assert fired_faults() == []
    aclnn_py.emulator.clear_faults()
    np.testing.assert_array_equal(result.numpy(), 4 * np.arange(4, dtype=np.float32))
    # An out still read by work on another stream is written only after that work.
    reading = aclnn_py.mse_loss_backward(grad, target, zero, "none", stream=side)
    aclnn_py.emulator.inject_fault(PHASE_1, PARAM_INVALID, nth=1)
    aclnn_py.mse_loss_backward(ones, zeros, zeros, "none", out=target)
    assert fired_faults() == []
    aclnn_py.emulator.clear_faults()
    np.testing.assert_array_equal(target.numpy(), np.zeros(4, np.float32))
    np.testing.assert_array_equal(reading.numpy(), 4 * np.arange(4, dtype=np.float32))
    free(grad, x, zero, ones, zeros, doubled, target, result, reading)
    side.close()


def test_mixed_numpy_and_device_inputs_repeat_through_one_entry(baseline):
    rng = np.random.default_rng(14)
    x_host = rng.standard_normal((2, 3)).astype(np.float32)
    x = aclnn_py.to_device(x_host)
    for step in range(5):
        y = rng.standard_normal(3).astype(np.float32)  # broadcast over the rows
        grad = float(step) + 0.5
        if step:
            aclnn_py.emulator.inject_fault(PHASE_1, PARAM_INVALID, nth=1)
        result = aclnn_py.mse_loss_backward(grad, x, y, "sum")
        assert fired_faults() == []
        aclnn_py.emulator.clear_faults()
        np.testing.assert_allclose(result.numpy(), mse_backward(grad, x_host, y, "sum"), rtol=1e-6)
        result.free()
    assert len(default_cache()) == 1
    assert stats()["live_executors"] == baseline["live_executors"] + 1
    x.free()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_forward_repeats_keep_one_executor(baseline, reduction):
    rng = np.random.default_rng(15)
    calls = []
    for _ in range(5):
        host = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2)]
        device = upload(*host)
        calls.append((host, device, aclnn_py.mse_loss(*device, reduction)))
    assert len(default_cache()) == 1
    assert stats()["live_executors"] == baseline["live_executors"] + 1
    for host, device, result in calls:
        assert result.shape == ((2, 3) if reduction == "none" else ())
        np.testing.assert_allclose(result.numpy(), mse_forward(*host, reduction), rtol=1e-6)
        free(*device, result)


@pytest.mark.slow
def test_a_small_capacity_keeps_the_most_recent_signatures():
    done = run_python("""
        import numpy as np, aclnn_py
        from aclnn_py.engine import launch_cache as _launch_cache
        from aclnn_py.runtime import process as _runtime
        from aclnn_py.runtime import streams as _streams
        ones = [aclnn_py.to_device(np.ones(n, np.float32)) for n in (2, 3, 4)]
        for array in ones:
            assert float(aclnn_py.mse_loss(array, 0.5, "sum").numpy()) == 0.25 * array.size
        aclnn_py.synchronize()
        cache = _launch_cache.cache_of(_streams.current_stream())
        print(aclnn_py.emulator.stats()["live_executors"], len(cache))
        aclnn_py.emulator.inject_fault("aclnnMseLossGetWorkspaceSize", 161002)
        print(float(aclnn_py.mse_loss(ones[2], 0.5, "sum").numpy()))
        try:
            aclnn_py.mse_loss(ones[0], 0.5, "sum")
        except aclnn_py.AclError as error:
            print(error.api)
    """, {**EMULATOR, "ACLNN_PY_LAUNCH_CACHE": "2"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["2 2", "1.0", "aclnnMseLossGetWorkspaceSize"]


@pytest.mark.slow
def test_a_capacity_of_zero_caches_nothing():
    done = run_python("""
        import numpy as np, aclnn_py
        from aclnn_py.engine import launch_cache as _launch_cache
        from aclnn_py.runtime import process as _runtime
        from aclnn_py.runtime import streams as _streams
        x = aclnn_py.to_device(np.arange(4, dtype=np.float32))
        ones = aclnn_py.to_device(np.ones(4, np.float32))
        for _ in range(3):
            print(aclnn_py.mse_loss_backward(ones, x, ones, "none").numpy().tolist())
        aclnn_py.synchronize()
        cache = _launch_cache.cache_of(_streams.current_stream())
        print(aclnn_py.emulator.stats()["live_executors"], len(cache))
        aclnn_py.emulator.inject_fault("aclnnMseLossBackwardGetWorkspaceSize", 161002)
        try:
            aclnn_py.mse_loss_backward(ones, x, ones, "none")
        except aclnn_py.AclError as error:
            print(error.api)
    """, {**EMULATOR, "ACLNN_PY_LAUNCH_CACHE": "0"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[-2.0, 0.0, 2.0, 4.0]"] * 3 + [
        "0 0", "aclnnMseLossBackwardGetWorkspaceSize"]


@pytest.mark.slow
def test_a_capacity_that_is_not_a_number_is_a_value_error():
    done = run_python("""
        import numpy as np, aclnn_py
        x = aclnn_py.to_device(np.ones(2, np.float32))
        try:
            aclnn_py.mse_loss(x, x)
        except ValueError as error:
            print(error)
        aclnn_py.synchronize()
        stats = aclnn_py.emulator.stats()
        print(stats["live_executors"], stats["live_tensors"])
    """, {**EMULATOR, "ACLNN_PY_LAUNCH_CACHE": "abc"})
    assert done.returncode == 0, done.stderr
    message, leftovers = done.stdout.splitlines()
    assert "ACLNN_PY_LAUNCH_CACHE" in message and "'abc'" in message
    assert leftovers == "0 0"


def test_a_call_queued_while_another_thread_synchronizes_keeps_its_inputs(monkeypatch):
    """A synchronisation releases only what was queued before its wait began."""
    grad, x = upload(np.ones(64, np.float32), np.arange(64, dtype=np.float32))
    aclnn_py.mse_loss_backward(grad, x, np.zeros(64, np.float32), "none").free()
    queued = []
    stream = _streams.current_stream()
    wait = stream._synchronizing  # the wait's one host call, looked up by the stream

    def wait_then_another_thread_calls(state, synchronize, handle, point):
        status = wait(state, synchronize, handle, point)
        if not queued:  # lands between the wait and the release of what it waited for
            queued.append(None)
            queued.append(aclnn_py.mse_loss_backward(grad, x, np.ones(64, np.float32), "none"))
        return status

    fast_wait = stream._synchronizing_fast  # the same wait when nothing is held

    def fast_wait_then_another_thread_calls():
        status = fast_wait()
        if not queued and status != _lowlevel.SLOW:
            queued.append(None)
            queued.append(aclnn_py.mse_loss_backward(grad, x, np.ones(64, np.float32), "none"))
        return status

    monkeypatch.setattr(stream, "_synchronizing", wait_then_another_thread_calls)
    monkeypatch.setattr(stream, "_synchronizing_fast", fast_wait_then_another_thread_calls)
    aclnn_py.synchronize()
    monkeypatch.undo()
    reuse = aclnn_py.to_device(np.full(64, 100.0, np.float32))  # a block of the same size
    result = queued[1]
    np.testing.assert_array_equal(result.numpy(), 2 * (np.arange(64, dtype=np.float32) - 1))
    free(grad, x, reuse, result)
