"""Memory reused in stream order, holds given back at fences, and the emulator's queue depth.

A loop that never synchronises must keep device memory bounded: a block released while
work on its stream may still use it is handed to later work on that stream at once, and to
another stream only once a fence or a synchronisation shows that work done.
"""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py._c._ffi import ffi
from aclnn_py.runtime import streams as rt_streams

pytestmark = pytest.mark.emulator_only

N = 1 << 20  # elements of each array


def _inputs(n: int = N) -> tuple[aclnn_py.DeviceArray, ...]:
    rng = np.random.default_rng(7)
    grad = rng.standard_normal(n).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    return tuple(aclnn_py.to_device(a) for a in (grad, x, y))


def _expected(grad: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return (grad * (x - y) * np.float32(2) / np.float32(x.size)).astype(np.float32)


def test_a_loop_that_never_synchronises_keeps_the_pool_bounded() -> None:
    grad, x, y = _inputs()
    aclnn_py.synchronize()
    peak = 0
    for _ in range(1000):
        out = aclnn_py.mse_loss_backward(grad, x, y)
        peak = max(peak, aclnn_py.memory_info()["used_bytes"])
        del out
    last = aclnn_py.mse_loss_backward(grad, x, y)
    aclnn_py.synchronize()
    assert peak < 64 << 20, f"{peak} bytes in use at the peak"
    expected = _expected(grad.numpy(), x.numpy(), y.numpy())
    np.testing.assert_allclose(last.numpy(), expected, rtol=1e-6, atol=0)


def test_work_still_queued_gives_its_holds_back_at_fences() -> None:
    grad, x, y = _inputs(1024)
    stream = rt_streams.current_stream()
    aclnn_py.synchronize()
    for _ in range(3000):  # past the queue depth of 2048: the oldest work runs meanwhile
        aclnn_py.mse_loss_backward(grad, x, y)
    held = len(stream._keepalive)
    stats = ll.stream_stats(stream.state)
    aclnn_py.synchronize()
    assert held < 2048 + 256, f"{held} holds kept for 3000 launches"
    assert stats["fences_done"] > 0
    assert len(stream._keepalive) == 0


def test_a_block_released_on_one_stream_waits_for_it_before_another_stream_has_it() -> None:
    grad, x, y = _inputs()
    expected = _expected(grad.numpy(), x.numpy(), y.numpy())
    aclnn_py.synchronize()
    s, t = aclnn_py.Stream(), aclnn_py.Stream()
    try:
        # Queued on S: a kernel reading x. x is then released while that work is queued.
        x_on_s = aclnn_py.to_device(x.numpy())
        address = int(ll.address(x_on_s.buffer.pointer))
        result_s = aclnn_py.mse_loss_backward(grad, x_on_s, y, stream=s)
        del x_on_s
        # At once, on T: a block of the same size, written by a kernel on T (over arrays
        # of its own: sharing S's inputs would make T wait for S).
        a, b, c = _inputs()
        written = []
        for _ in range(4):
            out_t = aclnn_py.mse_loss_backward(a, b, c, stream=t)
            written.append(int(ll.address(out_t.buffer.pointer)))
            written.append(out_t)
        t.synchronize()
        s.synchronize()
        assert address not in written[0::2], "T was handed S's block before S's work was done"
        np.testing.assert_allclose(result_s.numpy(), expected, rtol=1e-6, atol=0)
    finally:
        t.close()
        s.close()


def test_a_block_released_while_queued_is_reused_at_once_on_the_same_stream() -> None:
    grad, x, y = _inputs()
    aclnn_py.synchronize()
    first = aclnn_py.mse_loss_backward(grad, x, y)
    address = int(ll.address(first.buffer.pointer))
    del first  # its kernel is still queued
    second = aclnn_py.mse_loss_backward(grad, x, y)
    assert int(ll.address(second.buffer.pointer)) == address
    np.testing.assert_allclose(second.numpy(), _expected(grad.numpy(), x.numpy(), y.numpy()),
                               rtol=1e-6, atol=0)


def test_empty_cache_never_frees_a_block_whose_stream_has_not_passed_its_release() -> None:
    grad, x, y = _inputs()
    aclnn_py.synchronize()
    aclnn_py.empty_cache()
    out = aclnn_py.mse_loss_backward(grad, x, y)
    nbytes = out.buffer.nbytes
    del out  # marked with the stream, whose kernel is still queued
    aclnn_py.empty_cache()
    assert aclnn_py.memory_info()["cached_bytes"] >= nbytes
    aclnn_py.synchronize()
    aclnn_py.empty_cache()
    assert aclnn_py.memory_info()["cached_bytes"] == 0


def test_host_writes_never_get_a_block_queued_work_may_still_read() -> None:
    grad, x, y = _inputs()
    expected = _expected(grad.numpy(), x.numpy(), y.numpy())
    aclnn_py.synchronize()
    x_copy = aclnn_py.to_device(x.numpy())
    result = aclnn_py.mse_loss_backward(grad, x_copy, y)
    del x_copy  # read by the queued kernel
    # to_device writes with a synchronous aclrtMemcpy, which is not stream-ordered.
    overwrite = aclnn_py.to_device(np.full(N, 1e6, np.float32))
    aclnn_py.synchronize()
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6, atol=0)
    del overwrite


def test_freeing_an_array_after_its_wait_makes_its_block_free_for_every_stream() -> None:
    grad, x, y = _inputs()
    out = aclnn_py.mse_loss_backward(grad, x, y)
    nbytes = out.buffer.nbytes
    out.free()  # waits for its work first
    aclnn_py.empty_cache()
    assert aclnn_py.memory_info()["cached_bytes"] == 0, nbytes


# ---- the emulator: queue depth and event queries ---------------------------------------------


def test_the_emulator_runs_the_oldest_work_past_the_queue_depth_only() -> None:
    grad, x, y = _inputs(256)
    aclnn_py.synchronize()
    aclnn_py.emulator.reset_counters()
    for _ in range(100):
        aclnn_py.mse_loss_backward(grad, x, y)
    assert aclnn_py.emulator.device_stats(0)["kernels_executed"] == 0  # still deferred
    for _ in range(2100):
        aclnn_py.mse_loss_backward(grad, x, y)
    ran = aclnn_py.emulator.device_stats(0)["kernels_executed"]
    pending = aclnn_py.emulator.stats()["pending_tasks"]
    aclnn_py.synchronize()
    assert ran > 0
    assert pending <= 2048 + 8  # fences are tasks too


def _event_status(event: aclnn_py.Event) -> tuple[int, int]:
    new = ffi.new("aclrtEventRecordedStatus *")
    old = ffi.new("aclrtEventStatus *")
    ll.check(ll.RT.aclrtQueryEventStatus(event.handle, new), "aclrtQueryEventStatus")
    ll.check(ll.RT.aclrtQueryEvent(event.handle, old), "aclrtQueryEvent")
    return int(new[0]), int(old[0])


def test_event_queries_report_pending_work_with_cann_s_two_sets_of_values() -> None:
    assert ll.constant("ACL_EVENT_RECORDED_STATUS_NOT_READY") == 0
    assert ll.constant("ACL_EVENT_RECORDED_STATUS_COMPLETE") == 1
    assert ll.constant("ACL_EVENT_STATUS_COMPLETE") == 0
    assert ll.constant("ACL_EVENT_STATUS_NOT_READY") == 1
    grad, x, y = _inputs(256)
    aclnn_py.synchronize()
    with aclnn_py.Event() as event:
        assert _event_status(event) == (1, 0)  # never recorded: nothing to wait for
        aclnn_py.mse_loss_backward(grad, x, y)
        event.record()
        assert _event_status(event) == (0, 1)  # a query does not run the work
        assert _event_status(event) == (0, 1)
        event.synchronize()
        assert _event_status(event) == (1, 0)


def test_a_record_polled_long_enough_completes_so_polling_loops_end() -> None:
    grad, x, y = _inputs(256)
    aclnn_py.synchronize()
    with aclnn_py.Event() as event:
        out = aclnn_py.mse_loss_backward(grad, x, y)
        event.record()
        polls = 0
        while _event_status(event)[0] == 0:
            polls += 1
            assert polls < 5000
        assert polls > 100  # deferred until then
        np.testing.assert_allclose(out.numpy(), _expected(grad.numpy(), x.numpy(), y.numpy()),
                                   rtol=1e-6, atol=0)


def test_a_launch_refused_before_queuing_leaves_its_blocks_free_and_no_fence() -> None:
    grad, x, y = _inputs(4096)
    aclnn_py.synchronize()
    aclnn_py.empty_cache()
    stream = rt_streams.current_stream()
    before = ll.stream_stats(stream.state)
    for _ in range(40):
        x_copy = aclnn_py.to_device(x.numpy())
        aclnn_py.emulator.inject_fault("aclnnMseLossBackward", 561103)  # phase 2
        with pytest.raises(aclnn_py.AclError):
            aclnn_py.mse_loss_backward(grad, x_copy, y, reduction="sum")
        del x_copy
    after = ll.stream_stats(stream.state)
    assert after["point"] == before["point"]  # nothing counted stays
    assert after["fences_recorded"] == before["fences_recorded"]
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0
    aclnn_py.empty_cache()
    assert aclnn_py.memory_info()["cached_bytes"] == 0
