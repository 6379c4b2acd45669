"""DeviceArray, streams and events: device-resident results that stay asynchronous."""

from __future__ import annotations

import gc
import re

import numpy as np
import pytest
from conftest import no_device_work, run_python
from helpers import mse_backward

import aclnn_py
from aclnn_py import DeviceArray


def test_round_trip_keeps_shape_dtype_and_values():
    for array in (np.arange(12, dtype=np.float32).reshape(3, 4),
                  np.arange(12, dtype=np.float16).reshape(4, 3).T,
                  np.float32(5.0) * np.ones(()),
                  np.zeros((0, 2), np.float32)):
        device = aclnn_py.to_device(array)
        assert device.shape == array.shape and device.dtype == array.dtype
        np.testing.assert_array_equal(device.numpy(), array)
        np.testing.assert_array_equal(np.asarray(device), array)
        device.free()


@pytest.mark.emulator_only
def test_zero_stride_views_travel_as_their_distinct_elements():
    aclnn_py.emulator.reset_counters()
    row = np.arange(5, dtype=np.float32)
    device = aclnn_py.to_device(np.broadcast_to(row, (1000, 5)))
    assert aclnn_py.emulator.stats()["h2d_bytes"] == row.nbytes
    assert device.strides == (0, 1)
    assert "strides=(0, 1)" in repr(device)
    np.testing.assert_array_equal(device.numpy(), np.broadcast_to(row, (1000, 5)))
    device.free()


@pytest.mark.emulator_only
def test_operators_on_device_arrays_do_not_wait():
    x = aclnn_py.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = aclnn_py.to_device(np.ones(3, np.float32))
    result = aclnn_py.mse_loss_backward(1.0, x, y, "sum")
    assert isinstance(result, DeviceArray) and result.shape == (2, 3)
    assert aclnn_py.emulator.stats()["pending_tasks"] >= 1
    assert "pending" in repr(result)
    np.testing.assert_allclose(result.numpy(), mse_backward(1.0, np.arange(6).reshape(2, 3),
                                                            np.ones(3), "sum"))
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0 and "ready" in repr(result)
    for array in (x, y, result):
        array.free()


def test_numpy_inputs_mixed_with_device_arrays_are_copied_up():
    x = aclnn_py.to_device(np.full(4, 3.0, np.float32))
    result = aclnn_py.mse_loss(x, np.ones(4, np.float32), "sum")
    assert isinstance(result, DeviceArray) and result.shape == ()
    assert float(result.numpy()) == 16.0
    x.free()
    result.free()


def test_device_out_is_filled_and_returned():
    x = aclnn_py.to_device(np.ones(3, np.float32))
    out = aclnn_py.empty((3,), np.float16)
    assert aclnn_py.mse_loss_backward(2.0, x, 0.0, "none", out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.full(3, 4.0, np.float16))
    with pytest.raises(TypeError, match="out must be an aclnn_py.DeviceArray"):
        aclnn_py.mse_loss_backward(2.0, x, 0.0, out=np.empty(3, np.float32))
    with pytest.raises(ValueError, match=r"out has shape \(4,\)"):
        aclnn_py.mse_loss_backward(2.0, x, 0.0, out=aclnn_py.empty(4, np.float32))
    x.free()
    out.free()


def test_a_chain_of_async_operators_on_one_stream_needs_no_sync_between():
    x = aclnn_py.to_device(np.arange(4, dtype=np.float32))
    grad = aclnn_py.mse_loss_backward(1.0, x, 0.0, "none")     # 2x
    twice = aclnn_py.mse_loss_backward(1.0, grad, 0.0, "none")  # 4x, reads pending work
    np.testing.assert_array_equal(twice.numpy(), 4 * np.arange(4, dtype=np.float32))
    for array in (x, grad, twice):
        array.free()


def test_work_on_another_stream_is_awaited_before_use():
    x = aclnn_py.to_device(np.arange(4, dtype=np.float32))
    side = aclnn_py.Stream()
    grad = aclnn_py.mse_loss_backward(1.0, x, 0.0, "none", stream=side)
    assert grad.stream is side
    result = aclnn_py.mse_loss_backward(1.0, grad, 0.0, "none")  # default stream
    np.testing.assert_array_equal(result.numpy(), 4 * np.arange(4, dtype=np.float32))
    for array in (x, grad, result):
        array.free()
    side.close()


@pytest.mark.emulator_only
def test_stream_context_makes_it_current_and_synchronize_waits():
    x = aclnn_py.to_device(np.ones(2, np.float32))
    with aclnn_py.Stream() as stream:
        result = aclnn_py.mse_loss_backward(1.0, x, 0.0, "none")
        assert result.stream is stream
        aclnn_py.synchronize()
        assert aclnn_py.emulator.stats()["pending_tasks"] == 0
    result.stream = None
    assert aclnn_py.mse_loss_backward(1.0, x, 0.0, "none").stream is not stream
    aclnn_py.synchronize()
    stream.close()
    stream.close()
    with pytest.raises(ValueError, match="stream is closed"):
        aclnn_py.mse_loss_backward(1.0, x, 0.0, stream=stream)
    with pytest.raises(TypeError, match="stream must be an aclnn_py.Stream"):
        aclnn_py.mse_loss_backward(1.0, x, 0.0, stream="default")
    x.free()
    result.free()
    gc.collect()


def test_events_time_queued_work():
    x = aclnn_py.to_device(np.ones(1000, np.float32))
    with aclnn_py.Event() as start, aclnn_py.Event() as end:
        start.record()
        result = aclnn_py.mse_loss_backward(1.0, x, 0.0)
        end.record()
        end.synchronize()
        assert end.elapsed_ms(end) == 0.0
        assert start.elapsed_ms(end) >= 0.0
    np.testing.assert_allclose(result.numpy(), np.full(1000, 2 / 1000, np.float32))
    x.free()
    result.free()


def test_free_waits_for_pending_work_and_is_idempotent():
    x = aclnn_py.to_device(np.ones(8, np.float32))
    result = aclnn_py.mse_loss_backward(1.0, x, 0.0)
    x.free()         # still read by queued work: kept until the stream is synchronised
    values = result.numpy()
    np.testing.assert_allclose(values, np.full(8, 0.25, np.float32))
    x.free()
    with result:
        pass
    assert "freed" in repr(result)


@pytest.mark.slow
def test_arrays_on_several_devices_are_refused():
    done = run_python("""
        import numpy as np, aclnn_py
        a = aclnn_py.to_device(np.ones(2, np.float32), device=0)
        b = aclnn_py.to_device(np.ones(2, np.float32), device=1)
        try:
            aclnn_py.mse_loss(a, b)
        except ValueError as error:
            print(error)
        s1 = aclnn_py.Stream(device=1)
        try:
            aclnn_py.mse_loss(a, a, stream=s1)
        except ValueError as error:
            print(error)
        r = aclnn_py.mse_loss(b, b, stream=s1)
        print(float(r.numpy()), r.device)
        try:
            aclnn_py.mse_loss(a, a, out=aclnn_py.empty((), np.float32, device=1))
        except ValueError as error:
            print(error)
    """, {"ACLNN_PY_BACKEND": "emulator", "ACLNN_EMU_DEVICE_COUNT": "2"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "device arrays must be on one device; got x 0, y 1"
    assert lines[1] == "stream is on device 1 but the arrays are on 0"
    assert lines[2] == "0.0 1"
    assert lines[3] == "out is on device 1 but the inputs are on 0"


def test_empty_and_bad_shapes():
    array = aclnn_py.empty((2, 0, 3), np.float32)
    assert array.nbytes == 0 and array.numpy().shape == (2, 0, 3)
    with pytest.raises(ValueError, match="negative"):
        aclnn_py.empty((2, -1), np.float32)
    with pytest.raises(TypeError, match="^dtype must be one of CANN's dtypes .*; got object$"):
        aclnn_py.empty(3, object)
    with pytest.raises(TypeError, match="^dtype must be one of CANN's dtypes .*; got float128$"):
        aclnn_py.empty(3, "float128")
    with pytest.raises(TypeError, match="^dtype must be one of CANN's dtypes .*; got 'nope'$"):
        aclnn_py.empty(3, "nope")


def test_memory_used_by_queued_work_is_not_reused_before_that_work_is_done():
    # to_device copies synchronously, outside stream order: a block still read by queued
    # work must not come back from the pool before that work has run.
    x = aclnn_py.to_device(np.full(256, 3.0, np.float32))
    scratch_result = aclnn_py.mse_loss_backward(1.0, x, 0.0, "none")  # queued, reads x
    del x                          # the stream still holds x's memory
    gc.collect()
    overwrite = aclnn_py.to_device(np.full(256, -7.0, np.float32))  # same block size
    np.testing.assert_array_equal(scratch_result.numpy(), np.full(256, 6.0, np.float32))
    overwrite.free()
    scratch_result.free()


@pytest.mark.emulator_only
def test_explicit_free_waits_for_queued_work_that_reads_the_array():
    x = aclnn_py.to_device(np.full(64, 2.0, np.float32))
    result = aclnn_py.mse_loss_backward(1.0, x, 0.0, "none")
    x.free()
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0  # free() waited
    again = aclnn_py.to_device(np.full(64, 5.0, np.float32))
    np.testing.assert_array_equal(result.numpy(), np.full(64, 4.0, np.float32))
    again.free()
    result.free()


@pytest.mark.parametrize("values", [np.array(["a", "b"]), np.array([1, "x"], dtype=object),
                                    np.array(["2020-01-01"], dtype="datetime64[D]"),
                                    np.array([1], dtype="timedelta64[s]")],
                         ids=["str", "object", "datetime", "timedelta"])
def test_dtypes_without_a_cann_counterpart_are_refused_before_any_device_work(values):
    named = f"has dtype {re.escape(values.dtype.name)}"
    with no_device_work(), pytest.raises(TypeError, match=named):
        aclnn_py.to_device(values)
    with no_device_work(), pytest.raises(TypeError, match="dtype must be one of CANN's dtypes "
                                                          r"\(float32, .*\); got "):
        aclnn_py.empty((2,), values.dtype)


def test_an_array_freed_by_another_thread_during_its_copy_is_a_value_error(monkeypatch):
    """numpy() checks the buffer, waits for its work, then copies: a free in another thread
    in between must be the ValueError of a freed array (the buffer's copies say so too)."""
    array = aclnn_py.to_device(np.ones(8, np.float32))
    freeing = array.buffer.free

    def wait_while_another_thread_frees(*_arguments):
        freeing()

    monkeypatch.setattr(type(array), "synchronize", wait_while_another_thread_frees)
    with pytest.raises(ValueError, match="was freed"):
        array.numpy()
    other = aclnn_py.to_device(np.ones(8, np.float32))
    with pytest.raises(ValueError, match="was freed"):
        other.buffer.free()
        other.buffer.copy_from_host(np.zeros(8, np.float32))
