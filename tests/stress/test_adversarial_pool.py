"""Adversarial checks of stream-ordered reuse of device memory (the pools' stream marks,
fences and points, ``native/host.c``) and of how streams end.

Each test is a minimal reproducer of a defect found by attacking that design: it fails on
the code it was written against.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py._c._ffi import ffi
from aclnn_py.runtime import streams as rt_streams

pytestmark = pytest.mark.emulator_only

N = 1 << 16


def _host(seed: int, n: int = N) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def test_a_dropped_streams_fence_events_are_destroyed_with_it():
    """Fences are events recorded on the stream; close() destroys them (aclpyStreamClosed),
    but the finaliser of a stream dropped without close() destroyed only the stream, so
    every dropped stream that ever recorded a fence leaked up to 16 aclrtEvents."""
    x = aclnn_py.to_device(_host(1, 1024))
    aclnn_py.synchronize()
    base = aclnn_py.emulator.stats()["live_events"]
    for _ in range(3):
        stream = aclnn_py.Stream()
        for _ in range(300):  # results dropped: released blocks ask for fences
            aclnn_py.mse_loss_backward(x, x, x, stream=stream)
        assert ll.stream_stats(stream.state)["fences_recorded"] > 0
        x.synchronize()  # x no longer refers to the stream
        del stream
        gc.collect()
    assert aclnn_py.emulator.stats()["live_events"] == base


class _DestroyThenInterrupt:
    """``ll.RT`` with an ``aclrtDestroyStream`` that raises KeyboardInterrupt once the
    stream is destroyed: a SIGINT landing right after the C call returns."""

    def __init__(self, rt):
        self._rt = rt
        self.interrupted = 0

    def __getattr__(self, name):
        return getattr(self._rt, name)

    def aclrtDestroyStream(self, handle):
        assert self._rt.aclrtDestroyStream(handle) == 0
        self.interrupted += 1
        raise KeyboardInterrupt


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_interrupt_right_after_a_dropped_streams_destroy_leaves_no_fence_events(
        monkeypatch):
    """The finaliser of a dropped stream destroyed the stream, then its fence events: an
    interrupt landing between the two left up to 16 aclrtEvents to the process (the stress
    run's ``live_events: 16``)."""
    x = aclnn_py.to_device(_host(1, 1024))
    aclnn_py.synchronize()
    base = aclnn_py.emulator.stats()
    stream = aclnn_py.Stream()
    for _ in range(300):  # results dropped: released blocks ask for fences
        aclnn_py.mse_loss_backward(x, x, x, stream=stream)
    assert ll.stream_stats(stream.state)["fences_recorded"] > 0
    x.synchronize()  # x no longer refers to the stream
    rt = _DestroyThenInterrupt(ll.RT)
    monkeypatch.setattr(ll, "RT", rt)
    del stream
    gc.collect()
    monkeypatch.undo()
    assert rt.interrupted == 1
    rt_streams.release_dropped_streams()
    after = aclnn_py.emulator.stats()
    assert (after["live_streams"], after["live_events"]) == \
        (base["live_streams"], base["live_events"])


# The interrupt raised in the finaliser is the point: Python reports it as unraisable.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_interrupted_stream_finaliser_never_frees_blocks_its_pending_work_writes():
    """A stream dropped with work pending whose finaliser an interrupt cuts short stays
    registered and undestroyed (destroyed at the next safe point, running that work), but
    its pools' state was collected with the Stream object, which marks every point done:
    the blocks its pending kernel writes went to host code at once, and the kernel, run
    later, overwrote an array uploaded meanwhile."""
    aclnn_py.synchronize()
    stream = aclnn_py.Stream()
    grad, x, y = (aclnn_py.to_device(_host(seed)) for seed in (1, 2, 3))
    out = aclnn_py.mse_loss_backward(grad, x, y, stream=stream)  # pending on `stream`
    del out, grad, x, y  # their blocks go back marked with the stream

    real, interrupted = rt_streams.activate, []

    def activate_interrupted_once(device=None):
        if not interrupted:  # as a SIGINT landing in the finaliser's first call
            interrupted.append(True)
            raise KeyboardInterrupt
        return real(device)

    rt_streams.activate = activate_interrupted_once
    try:
        del stream
        gc.collect()
    finally:
        rt_streams.activate = real
    assert interrupted

    data = [_host(seed) for seed in range(10, 14)]
    mine = [aclnn_py.to_device(each) for each in data]
    rt_streams.release_dropped_streams()  # the stream is destroyed now; its kernel runs
    for each, array in zip(data, mine):
        np.testing.assert_array_equal(array.numpy(), each)


def test_a_result_allocated_on_the_pools_full_path_is_marked_with_its_stream():
    """A cached launch takes its result with the stream's mark (``DeviceBuffer.from_pool``);
    when the pool's quick path fails (out of memory, here one injected aclrtMalloc
    failure) the full path allocated an unmarked block, and ``_move_to`` never marks the
    result (it is already on the stream). Dropped while its kernel was pending, that block
    went at once to host code, and the kernel then overwrote the array uploaded into it."""
    aclnn_py.synchronize()
    aclnn_py.empty_cache()  # no cached block of the result's size: the pool must allocate
    grad, x, y = (aclnn_py.to_device(_host(seed)) for seed in (1, 2, 3))
    first = aclnn_py.mse_loss_backward(grad, x, y)  # the signature is cached from here on
    aclnn_py.synchronize()
    aclnn_py.emulator.inject_fault("aclrtMalloc", 207001)  # ACL_ERROR_RT_MEMORY_ALLOCATION
    out = aclnn_py.mse_loss_backward(grad, x, y)
    assert aclnn_py.emulator.faults()[0]["fired"]
    del out  # its kernel is still queued
    data = _host(4)
    mine = aclnn_py.to_device(data)
    aclnn_py.synchronize()
    np.testing.assert_array_equal(mine.numpy(), data)
    del first


def _interrupt_at(function, text: str):
    """A trace function raising KeyboardInterrupt once, right before the first line of
    ``function`` containing ``text`` runs (as a signal handler landing there would)."""
    import inspect

    lines, start = inspect.getsourcelines(function)
    target = start + next(i for i, line in enumerate(lines) if text in line)
    fired = []

    def local(frame, event, arg):
        if event == "line" and frame.f_lineno == target and not fired:
            fired.append(True)
            raise KeyboardInterrupt
        return local

    def tracer(frame, event, arg):
        return local if event == "call" and frame.f_code is function.__code__ else None

    return tracer, fired


@pytest.mark.parametrize("line", ["buffer.use_on(stream.state)", "tracked.stream = stream"])
def test_an_interrupt_in_move_to_never_leaves_an_array_on_a_stream_with_its_block_unmarked(line):
    """``move_to`` set ``array.stream`` before marking the block: interrupted between the
    two, the array counted as on the stream, so no later launch marked its block, and
    released while a kernel reading it was queued, it went to host code at once."""
    import sys

    from aclnn_py.runtime import arrays as _arrays

    aclnn_py.synchronize()
    grad, x, y = (aclnn_py.to_device(_host(seed)) for seed in (1, 2, 3))
    expected = aclnn_py.mse_loss_backward(grad.numpy(), x.numpy(), y.numpy())
    tracer, fired = _interrupt_at(_arrays.move_to, line)
    sys.settrace(tracer)
    try:
        with pytest.raises(KeyboardInterrupt):
            aclnn_py.mse_loss_backward(grad, x, y)
    finally:
        sys.settrace(None)
    assert fired
    out = aclnn_py.mse_loss_backward(grad, x, y)  # the call again: queued, reading grad
    del grad  # the first array moved, interrupted: released while that kernel is queued
    mine = [aclnn_py.to_device(_host(seed)) for seed in range(10, 14)]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=0)
    del mine


@pytest.mark.slow
def test_without_the_pool_a_synchronisation_gives_pending_blocks_back_to_cann():
    """``ACLNN_PY_POOL=0`` allocates and frees directly. A block released while queued
    work may use it is kept (marked with the stream) until that work is done; but it was
    given back to CANN only at the pool's next allocation or trim, so after the stream was
    synchronised the device memory of every dropped result was still allocated and
    ``memory_info()`` reported cached bytes with no cache."""
    from conftest import run_python

    done = run_python("""
        import numpy as np, aclnn_py
        x = aclnn_py.to_device(np.ones(1 << 16, np.float32))
        aclnn_py.synchronize()
        base = aclnn_py.emulator.stats()["live_allocations"]
        for _ in range(10):
            aclnn_py.mse_loss_backward(x, x, x)  # results dropped while their kernels queue
        aclnn_py.synchronize()
        print(aclnn_py.emulator.stats()["live_allocations"] - base,
              aclnn_py.memory_info()["cached_bytes"])
    """, {"ACLNN_PY_BACKEND": "emulator", "ACLNN_PY_POOL": "0"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "0"]


def test_a_failure_of_work_an_event_query_ran_is_reported_by_the_streams_next_sync():
    """A record polled 1024 times runs its stream's work from the query. A failure of that
    work was returned by that one query only (aclnn_py's fences read a failed query as
    "not done yet") and the stream's next synchronisation succeeded: the failure was lost,
    where the queue-depth bound keeps it for that synchronisation."""
    aclnn_py.memory_info()  # initialised, the device current
    stream = ll.create_stream()
    source, target = ll.malloc(4096), ll.malloc(4096)
    event = ffi.new("aclrtEvent *")
    try:
        ll.memcpy_async(target, 4096, source, 4096, ll.MEMCPY_DEVICE_TO_DEVICE, stream)
        ll.free(source)  # freed while the copy is pending: the copy fails when it runs
        assert ll.RT.aclrtCreateEvent(event) == 0
        assert ll.RT.aclrtRecordEvent(event[0], stream) == 0
        status = ffi.new("aclrtEventRecordedStatus *")
        results = {ll.RT.aclrtQueryEventStatus(event[0], status) for _ in range(1100)}
        assert 507013 in results  # the work ran from a query, and failed
        assert ll.RT.aclrtSynchronizeStream(stream) == 507013
    finally:
        ll.RT.aclrtSynchronizeStream(stream)
        ll.RT.aclrtDestroyEvent(event[0])
        ll.free(target)
        ll.destroy_stream(stream)
