"""The host emulator is strict: one test per rule, each failing if the rule is removed."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import LowLevelResources, fired_faults, run_python, status_of

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py._c._ffi import ffi
from aclnn_py.errors import AclError

# The emulator itself, its counters and fault injection: not portable to CANN.
pytestmark = pytest.mark.emulator_only

FLOAT = ll.constant("ACL_FLOAT")
FLOAT16 = ll.constant("ACL_FLOAT16")
HOST_TO_HOST = ll.constant("ACL_MEMCPY_HOST_TO_HOST")


class Resources(LowLevelResources):
    """Device buffers, tensors and a stream for one test, all released at the end."""

    def upload(self, array: np.ndarray):
        pointer = ll.malloc(array.nbytes)
        self.pointers.append(pointer)
        ll.memcpy(pointer, array.nbytes, ffi.from_buffer(array), array.nbytes,
                  ll.MEMCPY_HOST_TO_DEVICE)
        return pointer

    def download(self, pointer, like: np.ndarray) -> np.ndarray:
        result = np.empty_like(like)
        ll.memcpy(ffi.from_buffer(result, require_writable=True), result.nbytes, pointer,
                  result.nbytes, ll.MEMCPY_DEVICE_TO_HOST)
        return result

    def tensor(self, pointer, shape, dtype=FLOAT, strides=None, offset=0, storage=None):
        if strides is None:
            strides = tuple(int(s) for s in np.cumprod((1,) + tuple(shape[::-1]))[:-1][::-1])
        storage = storage if storage is not None else (int(np.prod(shape)),)
        handle = ll.create_tensor(tuple(shape), dtype, tuple(strides), offset, storage, pointer)
        self.tensors.append(handle)
        return handle

    def operands(self, shape=(4,), out_dtype=FLOAT):
        """Device grad, self, target (float32) and out, with their host copies."""
        grad = np.full(shape, 0.5, np.float32)
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        y = np.ones(shape, np.float32)
        pointers = [self.upload(a) for a in (grad, x, y)]
        out_host = np.zeros(shape, np.float32 if out_dtype == FLOAT else np.float16)
        pointers.append(self.upload(out_host))
        tensors = [self.tensor(p, shape) for p in pointers[:3]]
        tensors.append(self.tensor(pointers[3], shape, out_dtype))
        expected = grad * (x - y) * 2 / x.size
        return tensors, pointers, out_host, expected

    def workspace(self, size: int):
        """A device workspace of ``size`` bytes filled with junk, and that junk on the host."""
        pointer = ll.malloc(size)
        self.pointers.append(pointer)
        junk = np.full(size, 0xAB, np.uint8)
        ll.memcpy(pointer, size, ffi.from_buffer(junk), size, ll.MEMCPY_HOST_TO_DEVICE)
        return pointer, junk

    def plan(self, tensors, reduction=1):
        return ll.operator_workspace_size("aclnnMseLossBackward", *tensors[:3], reduction,
                                          tensors[3])



@pytest.fixture
def res(device):
    resources = Resources()
    yield resources
    resources.release()


def aligned_host(values: np.ndarray) -> np.ndarray:
    """A copy of ``values`` in 64-byte aligned host memory: only its being on the host is wrong."""
    raw = np.zeros(values.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    copy = raw[start:start + values.nbytes].view(values.dtype).reshape(values.shape)
    copy[...] = values
    return copy


# ---- initialisation and contexts -------------------------------------------


def test_runtime_calls_before_acl_init_work_as_in_cann():
    # No aclrt*Impl of hicann/runtime checks aclInit (torch_npu counts devices before it):
    # the runtime starts on first use, and aclInit afterwards keeps what it holds.
    done = run_python("""
        from aclnn_py._c import lowlevel as ll
        print("count", ll.get_device_count(), ll.get_soc_name())
        ll.set_device(1)
        pointer = ll.malloc(64)
        stream = ll.create_stream()
        ll.synchronize_stream(stream)
        print("first init", ll.init(), "device", ll.get_device())
        ll.destroy_stream(stream)
        ll.free(pointer)
        ll.finalize()
    """, {"ACLNN_EMU_DEVICE_COUNT": "2", "ACLNN_EMU_SOC": "Ascend910B4"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["count 2 Ascend910B4", "first init True device 1"]


def test_first_runtime_call_reports_a_bad_configuration():
    done = run_python("""
        from aclnn_py._c import lowlevel as ll
        from aclnn_py.errors import AclError
        try:
            ll.get_device_count()
        except AclError as error:
            print(error.api, error.status, "ACLNN_EMU_DEVICE_COUNT='0'" in str(error))
    """, {"ACLNN_EMU_DEVICE_COUNT": "0"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["aclrtGetDeviceCount 100000 True"]


def test_finalize_ends_acl_not_the_runtime():
    # CANN's aclFinalize ends ACL, not the runtime (hicann/runtime src/acl/aclrt_impl/acl.cpp,
    # aclFinalizeInternal): devices, streams and memory stay and the runtime calls go on
    # working; its first aclFinalize of a process succeeds even before aclInit
    # (aclFinalizeFlag starts false), a repeat returns 100037; only the dump API needs aclInit
    # in effect (toolchain/dump.cpp: 100001), and a second aclInit starts ACL again.
    done = run_python("""
        from aclnn_py._c import lowlevel as ll
        from aclnn_py.errors import AclError
        import ctypes, os
        import aclnn_py
        ll.get_device_count()  # loads the runtime; needs no aclInit
        runtime = ctypes.CDLL(os.path.join(aclnn_py.emulator.home(), "lib64", "libacl_rt.so"))
        print("dump before init", runtime.aclmdlInitDump())
        ll.set_device(0)
        kept, stream = ll.malloc(64), ll.create_stream()
        ll.finalize()
        print("first finalize ok")
        try:
            ll.finalize()
        except AclError as error:
            print(error.api, error.status)
        ll.memset(kept, 64, 7, 64)
        ll.synchronize_stream(stream)
        print("after finalize", ll.get_device(), ll.get_device_count() >= 1)
        print("dump after finalize", runtime.aclmdlInitDump())
        print("init again", ll.init())
        print("dump after init", runtime.aclmdlInitDump())
        ll.destroy_stream(stream)
        ll.free(kept)
        ll.reset_device(0)
        print("released", aclnn_py.emulator.stats()["live_allocations"])
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["dump before init 100001", "first finalize ok",
                                        "aclFinalize 100037", "after finalize 0 True",
                                        "dump after finalize 100001", "init again True",
                                        "dump after init 207000", "released 0"]


def test_repeat_acl_init_is_reported_and_counted_as_success(device):
    assert ll.init() is False


def test_thread_without_device_has_no_context(device):
    seen = {}

    def worker():
        for name, call, args in (("malloc", ll.malloc, (64,)), ("device", ll.get_device, ()),
                                 ("stream", ll.create_stream, ()),
                                 ("sync", ll.synchronize_stream, (ll.NULL,))):
            try:
                call(*args)
            except AclError as error:
                seen[name] = error.status

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == {"malloc": 107002, "device": 107002, "stream": 107002, "sync": 107002}


def test_invalid_device_id_is_refused(device):
    assert status_of(ll.set_device, 1) == 107001


# ---- device memory ---------------------------------------------------------


def test_malloc_is_aligned_device_only_and_refuses_size_zero(device):
    pointers = [ll.malloc(size) for size in (1, 3, 100, 4096)]
    try:
        assert all(ll.address(p) % 64 == 0 for p in pointers)
        assert aclnn_py.emulator.stats()["live_allocations"] == 4
    finally:
        for p in pointers:
            ll.free(p)
    assert status_of(ll.malloc, 0) == 100000


def test_bad_and_double_frees_fail(device):
    pointer = ll.malloc(256)
    assert status_of(ll.free, ffi.cast("char *", pointer) + 64) == 107000  # not a base
    ll.free(pointer)
    assert status_of(ll.free, pointer) == 107000  # double free
    host = np.zeros(16, np.uint8)
    assert status_of(ll.free, ffi.from_buffer(host)) == 107000  # host memory


@pytest.mark.slow
def test_device_memory_capacity_is_enforced_like_cann_oom():
    done = run_python("""
        import aclnn_py
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        ll.init(); ll.set_device(0)
        print(ll.get_mem_info(ll.constant("ACL_HBM_MEM")))
        keep = ll.malloc(600_000)
        try:
            ll.malloc(600_000)
        except aclnn_py.OutOfMemoryError as error:
            print(error.status, "MemoryError" if isinstance(error, MemoryError) else "")
        ll.free(keep)
        print(ll.get_mem_info(ll.constant("ACL_HBM_MEM")))
        ll.free(ll.malloc(600_000))  # freed memory is available again
        print("reallocated")
    """, {"ACLNN_EMU_DEVICE_MEMORY": "1M"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "(1048576, 1048576)"
    assert lines[1] == "207001 MemoryError"
    assert lines[2:] == ["(1048576, 1048576)", "reallocated"]


@pytest.mark.slow
def test_device_count_is_configurable():
    done = run_python("""
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        from aclnn_py.errors import AclError
        ll.init()
        print(ll.get_device_count())
        ll.set_device(2); print(ll.get_device())
        try:
            ll.set_device(3)
        except AclError as error:
            print(error.status)
    """, {"ACLNN_EMU_DEVICE_COUNT": "3"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3", "2", "107001"]


# ---- copies ----------------------------------------------------------------


def test_memcpy_checks_kind_against_both_pointers_and_bounds(device):
    host = np.zeros(64, np.uint8)
    other_host = np.zeros(64, np.uint8)
    h, h2 = ffi.from_buffer(host, require_writable=True), ffi.from_buffer(other_host)
    d = ll.malloc(64)
    odd = ll.malloc(100)  # its block is padded to 128 bytes: overruns land in mapped padding
    try:
        cases = [
            (h, 64, h2, 64, ll.MEMCPY_HOST_TO_DEVICE),    # dst is host memory
            (d, 64, d, 64, ll.MEMCPY_HOST_TO_DEVICE),     # src is device memory
            (h, 64, h2, 64, ll.MEMCPY_DEVICE_TO_HOST),    # src is host memory
            (d, 64, h2, 64, ll.MEMCPY_DEVICE_TO_HOST),    # dst is device memory
            (d, 64, h2, 65, ll.MEMCPY_HOST_TO_DEVICE),    # count > destMax
            (d, 32, h2, 64, ll.MEMCPY_HOST_TO_DEVICE),    # count > destMax, inside the allocation
            # past the end (first into padding, so a missing check fails here, not by a crash)
            (odd, 128, h2, 101, ll.MEMCPY_HOST_TO_DEVICE),
            (ffi.cast("char *", odd) + 110, 4, h2, 4, ll.MEMCPY_HOST_TO_DEVICE),  # starts there
            (d, 128, h2, 65, ll.MEMCPY_HOST_TO_DEVICE),
            (ffi.cast("char *", d) + 32, 64, h2, 64, ll.MEMCPY_HOST_TO_DEVICE),
            (h, 64, d, 64, HOST_TO_HOST),                 # device memory is never host memory
            (d, 64, h2, 64, HOST_TO_HOST),
            (d, 64, h2, 64, ll.MEMCPY_DEVICE_TO_DEVICE),  # src is host memory
            (h, 64, d, 64, ll.MEMCPY_DEVICE_TO_DEVICE),   # dst is host memory
        ]
        for dst, dst_max, src, count, kind in cases:
            assert status_of(ll.memcpy, dst, dst_max, src, count, kind) == 100000
            assert ll.recent_error_message() == ""  # the check consumed the message
        ll.memcpy(d, 64, h2, 64, ll.MEMCPY_HOST_TO_DEVICE)  # the right way works
    finally:
        ll.free(d)
        ll.free(odd)


def test_memcpy_checks_the_bounds_of_pinned_host_memory(device):
    pinned = ll.malloc_host(100)
    d = ll.malloc(128)
    try:
        tail = ffi.cast("char *", pinned) + 64  # 36 bytes of the pinned block remain
        assert status_of(ll.memcpy, d, 128, tail, 64, ll.MEMCPY_HOST_TO_DEVICE) == 100000
        assert status_of(ll.memcpy, tail, 64, d, 64, ll.MEMCPY_DEVICE_TO_HOST) == 100000
        ll.memcpy(d, 128, tail, 36, ll.MEMCPY_HOST_TO_DEVICE)
    finally:
        ll.free(d)
        ll.free_host(pinned)


def test_reading_an_output_before_the_stream_sync_sees_stale_data(res):
    tensors, pointers, out_host, expected = res.operands()
    size, executor = res.plan(tensors)
    ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, res.stream)
    assert aclnn_py.emulator.stats()["pending_tasks"] >= 1
    early = res.download(pointers[3], out_host)
    np.testing.assert_array_equal(early, np.zeros_like(out_host))  # memcpy did not wait
    ll.synchronize_stream(res.stream)
    np.testing.assert_allclose(res.download(pointers[3], out_host), expected, rtol=1e-6)


def test_kernel_whose_buffer_was_freed_while_pending_fails_at_sync(res):
    tensors, pointers, _, _ = res.operands()
    size, executor = res.plan(tensors)
    ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, res.stream)
    ll.free(pointers[1])
    res.pointers.remove(pointers[1])
    with pytest.raises(AclError) as info:
        ll.synchronize_stream(res.stream)
    assert info.value.status == 507015
    assert "self" in info.value.message


def test_kernel_whose_workspace_was_freed_while_pending_fails_at_sync(res):
    tensors, pointers, _, _ = res.operands(shape=(2, 2))
    transposed = res.tensor(pointers[1], (2, 2), strides=(1, 2))
    size, executor = res.plan([tensors[0], transposed, tensors[2], tensors[3]])
    workspace, _ = res.workspace(size)
    ll.operator_launch("aclnnMseLossBackward", workspace, size, executor, res.stream)
    ll.free(workspace)
    res.pointers.remove(workspace)
    with pytest.raises(AclError) as info:
        ll.synchronize_stream(res.stream)
    assert info.value.status == 507015
    assert "workspace" in info.value.message


def _destroy_stream(res, stream):
    ll.destroy_stream(stream)


def _synchronize_event(res, stream):
    event = ll.create_event()
    try:
        ll.record_event(event, stream)
        ll.synchronize_event(event)
    finally:
        ll.destroy_event(event)


@pytest.mark.parametrize("wait", [
    lambda res, stream: ll.synchronize_stream(stream),
    lambda res, stream: ll.synchronize_stream_with_timeout(stream, 1000),
    _synchronize_event,
    lambda res, stream: ll.synchronize_device(),
    _destroy_stream,
], ids=["stream", "stream_with_timeout", "event", "device", "destroy_stream"])
def test_every_synchronising_call_runs_the_pending_kernel(res, wait):
    tensors, pointers, out_host, expected = res.operands()
    stream = ll.create_stream()
    try:
        size, executor = res.plan(tensors)
        ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, stream)
        np.testing.assert_array_equal(res.download(pointers[3], out_host), np.zeros_like(out_host))
        wait(res, stream)
        assert aclnn_py.emulator.stats()["pending_tasks"] == 0
        np.testing.assert_allclose(res.download(pointers[3], out_host), expected, rtol=1e-6)
    finally:
        if wait is not _destroy_stream:
            ll.destroy_stream(stream)


def test_an_event_sync_runs_only_the_work_recorded_before_it(res):
    tensors, pointers, out_host, expected = res.operands()
    event = ll.create_event()
    try:
        ll.record_event(event, res.stream)
        size, executor = res.plan(tensors)
        ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, res.stream)
        ll.synchronize_event(event)
        np.testing.assert_array_equal(res.download(pointers[3], out_host), np.zeros_like(out_host))
        ll.synchronize_stream(res.stream)
        np.testing.assert_allclose(res.download(pointers[3], out_host), expected, rtol=1e-6)
    finally:
        ll.destroy_event(event)


def test_stream_query_never_claims_completion_of_unrun_work(res):
    tensors, pointers, out_host, expected = res.operands()
    size, executor = res.plan(tensors)
    ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, res.stream)
    complete = ll.constant("ACL_STREAM_STATUS_COMPLETE")
    assert ll.stream_query(res.stream) != complete
    while ll.stream_query(res.stream) != complete:
        pass
    np.testing.assert_allclose(res.download(pointers[3], out_host), expected, rtol=1e-6)


def test_events_order_work_and_time_it(res):
    tensors, pointers, out_host, expected = res.operands()
    start, end = ll.create_event(), ll.create_event()
    try:
        ll.record_event(start, res.stream)
        size, executor = res.plan(tensors)
        ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, res.stream)
        ll.record_event(end, res.stream)
        ll.synchronize_event(end)
        np.testing.assert_allclose(res.download(pointers[3], out_host), expected, rtol=1e-6)
        assert ll.event_elapsed_time(start, end) >= 0.0
    finally:
        ll.destroy_event(start)
        ll.destroy_event(end)


# ---- tensors must point at live device memory ------------------------------


def test_host_pointers_are_refused_as_tensor_data(res):
    tensors, _, _, _ = res.operands()
    host = aligned_host(np.ones(4, np.float32))  # aligned: only its being host memory is wrong
    host_tensor = res.tensor(ffi.from_buffer(host), (4,))
    with pytest.raises(AclError) as info:
        res.plan([tensors[0], host_tensor, tensors[2], tensors[3]])
    assert info.value.status == 161002
    assert "self" in info.value.message and "not device memory" in info.value.message


def test_a_host_address_bound_after_phase_one_fails_when_the_kernel_runs(res):
    tensors, pointers, out_host, _ = res.operands()
    size, executor = res.plan(tensors)
    ll.set_executor_repeatable(executor)
    host = aligned_host(np.full(4, 3.0, np.float32))
    try:
        ll.set_input_tensor_addr(executor, 1, tensors[1], ffi.from_buffer(host))
        ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, res.stream)
        with pytest.raises(AclError) as info:
            ll.synchronize_stream(res.stream)
        assert info.value.status == 507015 and "self" in info.value.message
        np.testing.assert_array_equal(res.download(pointers[3], out_host), np.zeros_like(out_host))
    finally:
        ll.destroy_executor(executor)


def test_a_view_past_its_allocation_is_refused(res):
    tensors, pointers, _, _ = res.operands()
    too_long = res.tensor(pointers[2], (4,), offset=1)  # elements 1..4 of a 4-element buffer
    with pytest.raises(AclError) as info:
        res.plan([tensors[0], tensors[1], too_long, tensors[3]])
    assert info.value.status == 161002 and "target" in info.value.message


# ---- executors -------------------------------------------------------------


def test_phase_two_consumes_a_non_repeatable_executor(res):
    tensors, _, _, _ = res.operands()
    size, executor = res.plan(tensors)
    before = aclnn_py.emulator.stats()["live_executors"]
    ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, res.stream)
    assert aclnn_py.emulator.stats()["live_executors"] == before - 1
    with pytest.raises(AclError) as relaunch:
        ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, res.stream)
    assert relaunch.value.status == 561103
    assert status_of(ll.destroy_executor, executor) == 561103
    ll.synchronize_stream(res.stream)


def test_unlaunched_and_repeatable_executors_are_counted_until_destroyed(res):
    tensors, pointers, out_host, expected = res.operands()
    before = aclnn_py.emulator.stats()["live_executors"]
    _, forgotten = res.plan(tensors)
    size, repeatable = res.plan(tensors)
    ll.set_executor_repeatable(repeatable)
    assert aclnn_py.emulator.stats()["live_executors"] == before + 2
    for _ in range(3):
        ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, repeatable, res.stream)
    ll.synchronize_stream(res.stream)
    np.testing.assert_allclose(res.download(pointers[3], out_host), expected, rtol=1e-6)
    assert aclnn_py.emulator.stats()["live_executors"] == before + 2
    ll.destroy_executor(forgotten)
    ll.destroy_executor(repeatable)
    assert aclnn_py.emulator.stats()["live_executors"] == before


def test_repeatable_executor_rebinds_addresses(res):
    tensors, pointers, out_host, _ = res.operands()
    size, executor = res.plan(tensors)
    ll.set_executor_repeatable(executor)
    try:
        other = np.full(4, 3.0, np.float32)
        ll.set_input_tensor_addr(executor, 1, tensors[1], res.upload(other))
        ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, res.stream)
        ll.synchronize_stream(res.stream)
        expected = np.full(4, 0.5 * (3.0 - 1.0) * 2 / 4, np.float32)
        np.testing.assert_allclose(res.download(pointers[3], out_host), expected, rtol=1e-6)
        assert status_of(ll.set_input_tensor_addr, executor, 3, tensors[1], pointers[1]) == 161002
    finally:
        ll.destroy_executor(executor)


# ---- workspace -------------------------------------------------------------


def test_non_contiguous_input_needs_a_workspace_that_is_really_used(res):
    tensors, pointers, out_host, _ = res.operands(shape=(2, 2))
    # self read transposed: a non-contiguous view
    transposed = res.tensor(pointers[1], (2, 2), strides=(1, 2))
    size, executor = res.plan([tensors[0], transposed, tensors[2], tensors[3]])
    assert size > 0
    workspace, junk = res.workspace(size)
    ll.operator_launch("aclnnMseLossBackward", workspace, size, executor, res.stream)
    ll.synchronize_stream(res.stream)
    x = np.arange(4, dtype=np.float32).reshape(2, 2).T
    expected = 0.5 * (x - 1.0) * 2 / 4
    np.testing.assert_allclose(res.download(pointers[3], out_host), expected, rtol=1e-6)
    assert not np.array_equal(res.download(workspace, junk), junk)  # the kernel wrote it


def test_cast_to_another_out_dtype_needs_a_workspace_that_is_really_used(res):
    tensors, pointers, out_host, expected = res.operands(out_dtype=FLOAT16)
    size, executor = res.plan(tensors)
    assert size > 0
    workspace, junk = res.workspace(size)
    ll.operator_launch("aclnnMseLossBackward", workspace, size, executor, res.stream)
    ll.synchronize_stream(res.stream)
    np.testing.assert_allclose(res.download(pointers[3], out_host), expected.astype(np.float16),
                               rtol=1e-3)
    assert not np.array_equal(res.download(workspace, junk), junk)  # the kernel wrote it


def test_missing_or_undersized_workspace_is_refused(res):
    tensors, pointers, _, _ = res.operands(shape=(2, 2))
    transposed = res.tensor(pointers[1], (2, 2), strides=(1, 2))
    operands = [tensors[0], transposed, tensors[2], tensors[3]]
    size, executor = res.plan(operands)
    with pytest.raises(AclError) as missing:
        ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, res.stream)
    assert missing.value.status == 161001
    size, executor = res.plan(operands)
    small = ll.malloc(size)
    res.pointers.append(small)
    with pytest.raises(AclError) as undersized:
        ll.operator_launch("aclnnMseLossBackward", small, size - 1, executor, res.stream)
    assert undersized.value.status == 161002
    size, executor = res.plan(operands)
    host = np.zeros(size, np.uint8)
    with pytest.raises(AclError) as on_host:
        ll.operator_launch("aclnnMseLossBackward", ffi.from_buffer(host), size, executor,
                           res.stream)
    assert on_host.value.status == 161002
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0


# ---- error messages --------------------------------------------------------


def test_recent_error_message_is_per_thread_and_cleared_on_read(device):
    runtime = ll.libraries().runtime  # the raw C functions, so a failure is not consumed
    messages = {}

    def fail_then_read():
        ll.set_device(0)
        try:
            status = runtime.aclrtMalloc(ffi.new("void **"), 0, 0)  # unchecked on purpose
            assert status == 100000
            messages["other thread first read"] = ll.recent_error_message()
            messages["other thread second read"] = ll.recent_error_message()
        finally:
            ll.reset_device(0)

    status = runtime.aclrtFree(ffi.cast("void *", 64))
    assert status == 107000
    thread = threading.Thread(target=fail_then_read)
    thread.start()
    thread.join()
    mine = ll.recent_error_message()
    assert mine.startswith("aclrtFree") and "size must be" not in mine
    assert messages["other thread first read"].startswith("aclrtMalloc: size must be")
    assert messages["other thread second read"] == ""
    assert ll.recent_error_message() == ""


# ---- SoC -------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("soc, bf16", [("Ascend910B3", True), ("Ascend910_9391", True),
                                       ("Ascend950PR_9599", True), ("Ascend950DT_95A1", True),
                                       ("Ascend910_95", True), ("Ascend310P3", False),
                                       ("Ascend310B1", False), ("Ascend910A", False)])
def test_the_emulated_soc_decides_bfloat16_support(soc, bf16):
    done = run_python("""
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        from aclnn_py.errors import AclError
        ll.init(); ll.set_device(0)
        print(ll.get_soc_name())
        bf = ll.constant("ACL_BF16")
        p = ll.malloc(64)
        t = [ll.create_tensor((4,), bf, (1,), 0, (4,), p) for _ in range(4)]
        try:
            size, executor = ll.operator_workspace_size("aclnnMseLossBackward", *t[:3], 1, t[3])
            ll.destroy_executor(executor)
            print("accepted")
        except AclError as error:
            print(error.status, "BF16" in error.message or "bf16" in error.message.lower())
    """, {"ACLNN_EMU_SOC": soc})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == soc
    assert lines[1] == ("accepted" if bf16 else "161002 True")


@pytest.mark.slow
@pytest.mark.parametrize("soc", ["Ascend999", "ascend910b3", "Ascend910B9"])
def test_an_unknown_emulated_soc_is_refused_with_the_known_names(soc):
    done = run_python("""
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        from aclnn_py.errors import AclError
        try:
            ll.init()
        except AclError as error:
            print(error.status)
            print(error.message)
    """, {"ACLNN_EMU_SOC": soc})
    assert done.returncode == 0, done.stderr
    status, message = done.stdout.split("\n", 1)
    assert status == "100000"
    assert f"ACLNN_EMU_SOC='{soc}' is not a SoC CANN knows" in message
    assert "Ascend910B3" in message and "Ascend950PR_9599" in message


@pytest.mark.parametrize("soc, bf16", [("Ascend910B3", True), ("Ascend910_9391", True),
                                       ("Ascend950DT_9591", True), ("Ascend910_95", True),
                                       ("Ascend310P3", False), ("Ascend910ProB", False),
                                       (None, False), ("", False)])
def test_the_binding_reads_bfloat16_support_from_the_soc_name_like_the_emulator(soc, bf16):
    from aclnn_py.ops.dtypes import soc_supports_bfloat16

    assert soc_supports_bfloat16(soc) is bf16


# ---- introspection and faults ----------------------------------------------


def test_stats_count_traffic_calls_kernels_and_live_resources(res):
    tensors, pointers, _, _ = res.operands()
    aclnn_py.emulator.reset_counters()
    before = aclnn_py.emulator.stats()
    array = np.ones(10, np.float32)
    pointer = res.upload(array)                   # 1 malloc, 40 bytes host to device
    res.download(pointer, array[:2])              # 8 bytes device to host
    ll.memcpy(pointers[3], 16, pointer, 16, ll.MEMCPY_DEVICE_TO_DEVICE)
    big = ll.malloc(1 << 20)
    ll.free(big)
    extra = res.tensor(pointer, (10,))
    size, executor = res.plan(tensors)
    ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, res.stream)
    stats = aclnn_py.emulator.stats()
    assert (stats["h2d_bytes"], stats["d2h_bytes"], stats["d2d_bytes"]) == (40, 8, 16)
    assert stats["malloc_calls"] == 2
    assert stats["live_allocations"] == before["live_allocations"] + 1
    assert stats["live_device_bytes"] == before["live_device_bytes"] + 40
    assert stats["peak_device_bytes"] >= before["live_device_bytes"] + 40 + (1 << 20)
    assert stats["live_tensors"] == before["live_tensors"] + 1
    kernels = ("kernel_launches", "kernels_executed", "pending_tasks")
    assert [stats[key] for key in kernels] == [1, 0, 1]  # launched, not run until the sync
    ll.synchronize_stream(res.stream)
    ll.destroy_tensor(extra)
    res.tensors.remove(extra)
    stats = aclnn_py.emulator.stats()
    assert [stats[key] for key in kernels] == [1, 1, 0]
    assert stats["live_tensors"] == before["live_tensors"]


def test_fault_injection_fires_on_the_nth_call_only(device):
    aclnn_py.emulator.inject_fault("aclrtMalloc", 507899, nth=2)
    first = ll.malloc(64)
    try:
        ll.get_device()  # other functions neither count towards nth nor fail
        ll.memset(first, 64, 0, 64)
        [armed] = aclnn_py.emulator.faults()
        assert (armed["fired"], armed["remaining"]) == (False, 1)
        assert status_of(ll.malloc, 64) == 507899
        assert fired_faults() == ["aclrtMalloc"]
        third = ll.malloc(64)
        ll.free(third)
    finally:
        ll.free(first)


# ---- freed device memory: quarantine, poison, allocation ids ----------------


def _launch_reading_a_transposed_input(res):
    """aclnnMseLossBackward queued on res.stream with a workspace (self is read transposed).

    Returns {buffer name: (device pointer, bytes)} and the output's host twin.
    """
    tensors, pointers, out_host, _ = res.operands(shape=(2, 2))
    transposed = res.tensor(pointers[1], (2, 2), strides=(1, 2))
    size, executor = res.plan([tensors[0], transposed, tensors[2], tensors[3]])
    workspace, _ = res.workspace(size)
    ll.operator_launch("aclnnMseLossBackward", workspace, size, executor, res.stream)
    buffers = {"self": (pointers[1], 16), "out": (pointers[3], 16), "workspace": (workspace, size)}
    return buffers, out_host


@pytest.mark.parametrize("buffer, label", [("self", "input 1 (self)"), ("out", "output 0 (out)"),
                                           ("workspace", "workspace")])
def test_a_launch_whose_buffer_is_freed_before_the_sync_fails_and_touches_nothing(res, buffer,
                                                                                   label):
    buffers, out_host = _launch_reading_a_transposed_input(res)
    victim, nbytes = buffers[buffer]
    freed = ll.address(victim)
    ll.free(victim)
    res.pointers.remove(victim)
    sentinel = np.full(nbytes, 0x5A, np.uint8)
    successor = res.upload(sentinel)  # same size, right after the free
    assert ll.address(successor) != freed  # the freed block is quarantined, not reused
    with pytest.raises(AclError) as info:
        ll.synchronize_stream(res.stream)
    assert info.value.status == 507015
    message = info.value.message
    assert f"MseLossBackward queued on stream {hex(ll.address(res.stream))}" in message
    assert f"{label} at {hex(freed)} ({nbytes} bytes)" in message
    assert "device memory was freed (aclrtFree) while the work was pending" in message
    np.testing.assert_array_equal(res.download(successor, sentinel), sentinel)
    if buffer != "out":
        out = buffers["out"][0]
        np.testing.assert_array_equal(res.download(out, out_host), np.zeros_like(out_host))
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0


@pytest.mark.slow
def test_a_launch_whose_input_was_freed_and_its_address_reused_fails_at_sync():
    # No quarantine: the next aclrtMalloc of the size gets the freed address back, so only
    # the allocation id tells the new block from the one the launch was given.
    done = run_python("""
        import numpy as np
        import aclnn_py
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        from aclnn_py.errors import AclError
        ll.init(); ll.set_device(0)
        stream = ll.create_stream()
        def upload(array):
            pointer = ll.malloc(array.nbytes)
            ll.memcpy(pointer, array.nbytes, ffi.from_buffer(array), array.nbytes,
                      ll.MEMCPY_HOST_TO_DEVICE)
            return pointer
        pointers = [upload(np.full(4, v, np.float32)) for v in (0.5, 3.0, 1.0, 0.0)]
        tensors = [ll.create_tensor((4,), ll.constant("ACL_FLOAT"), (1,), 0, (4,), p)
                   for p in pointers]
        size, executor = ll.operator_workspace_size("aclnnMseLossBackward", *tensors[:3], 1,
                                                    tensors[3])
        ll.operator_launch("aclnnMseLossBackward", ll.NULL, size, executor, stream)
        freed = ll.address(pointers[1])
        ll.free(pointers[1])
        successor = upload(np.full(4, 7.0, np.float32))
        print(ll.address(successor) == freed)
        try:
            ll.synchronize_stream(stream)
            print("synchronised")
        except AclError as error:
            print(error.status)
            print(error.message.splitlines()[-1])
        out = np.empty(4, np.float32)
        ll.memcpy(ffi.from_buffer(out, require_writable=True), 16, pointers[3], 16,
                  ll.MEMCPY_DEVICE_TO_HOST)
        print(out.tolist(), aclnn_py.emulator.stats()["kernels_executed"])
    """, {"ACLNN_EMU_QUARANTINE": "0"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["True", "507015"]
    assert "MseLossBackward queued on stream" in lines[2] and "input 1 (self) at" in lines[2]
    assert "its address now belongs to another allocation" in lines[2]
    assert lines[3] == "[0.0, 0.0, 0.0, 0.0] 0"  # nothing ran, nothing was written


def test_an_async_copy_whose_source_is_freed_before_the_sync_fails(res):
    src = res.upload(np.arange(16, dtype=np.float32))
    zeros = np.zeros(16, np.float32)
    dst = res.upload(zeros)
    ll.memcpy_async(dst, 64, src, 64, ll.MEMCPY_DEVICE_TO_DEVICE, res.stream)
    freed = ll.address(src)
    ll.free(src)
    res.pointers.remove(src)
    successor = res.upload(np.ones(16, np.float32))
    assert ll.address(successor) != freed
    with pytest.raises(AclError) as info:
        ll.synchronize_stream(res.stream)
    assert info.value.status == 507013
    assert (f"aclrtMemcpyAsync queued on stream {hex(ll.address(res.stream))}: src at "
            f"{hex(freed)} (64 bytes): device memory was freed") in info.value.message
    np.testing.assert_array_equal(res.download(dst, zeros), zeros)


def test_an_async_copy_from_pinned_host_memory_freed_before_the_sync_fails(res):
    pinned = ll.malloc_host(64)
    zeros = np.zeros(16, np.float32)
    dst = res.upload(zeros)
    ll.memcpy_async(dst, 64, pinned, 64, ll.MEMCPY_HOST_TO_DEVICE, res.stream)
    ll.free_host(pinned)
    with pytest.raises(AclError) as info:
        ll.synchronize_stream(res.stream)
    assert info.value.status == 507013
    assert "src at" in info.value.message
    assert "pinned host memory was freed (aclrtFreeHost)" in info.value.message
    np.testing.assert_array_equal(res.download(dst, zeros), zeros)


def test_freed_device_addresses_are_not_handed_out_again_at_once(device):
    before = aclnn_py.emulator.stats()
    pointer = ll.malloc(4096)
    freed = ll.address(pointer)
    ll.free(pointer)
    stats = aclnn_py.emulator.stats()
    assert stats["live_allocations"] == before["live_allocations"]
    assert stats["live_device_bytes"] == before["live_device_bytes"]
    assert stats["quarantined_allocations"] >= 1 and stats["quarantined_bytes"] >= 4096
    later = [ll.malloc(4096) for _ in range(8)]
    try:
        assert freed not in [ll.address(p) for p in later]
        # the freed address stays recognisable: a second free or a copy names it as freed
        assert status_of(ll.free, pointer) == 107000
        assert ll.recent_error_message() == ""
        ll.libraries().runtime.aclrtFree(pointer)
        assert "already freed (double free" in ll.recent_error_message()
        host = np.zeros(16, np.uint8)
        copy = (ffi.from_buffer(host, require_writable=True), 16, pointer, 16,
                ll.MEMCPY_DEVICE_TO_HOST)
        assert ll.libraries().runtime.aclrtMemcpy(*copy) == 100000
        assert "already freed with aclrtFree" in ll.recent_error_message()
    finally:
        for p in later:
            ll.free(p)


@pytest.mark.slow
def test_freed_device_memory_is_poisoned():
    done = run_python("""
        import numpy as np
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        ll.init(); ll.set_device(0)
        pointer = ll.malloc(64)
        data = np.arange(16, dtype=np.float32)
        ll.memcpy(pointer, 64, ffi.from_buffer(data), 64, ll.MEMCPY_HOST_TO_DEVICE)
        ll.free(pointer)
        # What a stale reader would see (the emulator's device memory is host memory).
        stale = bytes(ffi.buffer(ffi.cast("char *", pointer), 64))
        print(stale[:4].hex(), bool(np.isnan(np.frombuffer(stale, np.float32)).all()))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ffffffff", "True"]


@pytest.mark.slow
def test_quarantined_memory_counts_neither_as_used_nor_against_the_capacity():
    done = run_python("""
        import aclnn_py
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        ll.init(); ll.set_device(0)
        hbm = ll.constant("ACL_HBM_MEM")
        addresses = set()
        for _ in range(5):
            pointer = ll.malloc(1 << 20)  # the whole device
            addresses.add(ll.address(pointer))
            ll.free(pointer)
            print(ll.get_mem_info(hbm))
        stats = aclnn_py.emulator.stats()
        print(len(addresses), stats["live_device_bytes"], stats["live_allocations"],
              stats["quarantined_allocations"], stats["quarantined_bytes"])
    """, {"ACLNN_EMU_DEVICE_MEMORY": "1M"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:5] == ["(1048576, 1048576)"] * 5
    assert lines[5] == f"5 0 0 5 {5 << 20}"


@pytest.mark.slow
def test_an_allocation_the_host_cannot_map_releases_the_quarantine_first():
    # Each freed GiB keeps its address range reserved; with 3 GiB of address space to
    # spare, the third allocation fits only once the oldest freed ranges are released.
    done = run_python("""
        import resource
        import aclnn_py
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        ll.init(); ll.set_device(0)
        ll.free(ll.malloc(64))
        with open("/proc/self/status") as status:
            vm = next(int(l.split()[1]) for l in status if l.startswith("VmSize:")) * 1024
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        resource.setrlimit(resource.RLIMIT_AS, (vm + (3 << 30), hard))
        for _ in range(6):
            ll.free(ll.malloc(1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        print("allocated", aclnn_py.emulator.stats()["quarantined_allocations"] <= 3)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["allocated", "True"]


# ---- fault injection reports what fired ------------------------------------


def test_faults_are_listed_armed_then_fired(device):
    aclnn_py.emulator.inject_fault("aclrtGetDevice", 507899, nth=2)
    aclnn_py.emulator.inject_fault("aclrtMalloc", 207001, nth=3)
    armed = [{"api": "aclrtGetDevice", "status": 507899, "nth": 2, "fired": False, "remaining": 2},
             {"api": "aclrtMalloc", "status": 207001, "nth": 3, "fired": False, "remaining": 3}]
    assert aclnn_py.emulator.faults() == armed
    ll.get_device()
    assert aclnn_py.emulator.faults()[0]["remaining"] == 1
    assert status_of(ll.get_device) == 507899
    ll.get_device()  # a fault fires once
    assert aclnn_py.emulator.faults() == [{**armed[0], "fired": True, "remaining": 0}, armed[1]]
    assert fired_faults() == ["aclrtGetDevice"]
    aclnn_py.emulator.clear_faults()
    assert aclnn_py.emulator.faults() == []


def test_faults_into_apis_the_emulator_lacks_are_refused():
    with pytest.raises(ValueError, match="aclrtMallocc"):
        aclnn_py.emulator.inject_fault("aclrtMallocc", 507899)
    with pytest.raises(AclError) as info:  # the C check, which the Python one mirrors
        ll.emulator_inject_fault("aclnnNoSuchOperator", 1, 507899)
    assert info.value.status == 100000 and "aclnnNoSuchOperator" in info.value.message
    assert aclnn_py.emulator.faults() == []


def _library_paths() -> list[Path]:
    installation = ll.libraries().installation
    paths = installation.paths
    return [*(Path(paths[family]) for family in ("runtime", "meta", "ops")),
            *installation.extra_ops]


@pytest.mark.slow
def test_the_fault_apis_are_exactly_the_cann_apis_the_libraries_export():
    import ctypes

    names = aclnn_py.emulator.fault_apis()
    assert len(set(names)) == len(names)
    libraries = [ctypes.CDLL(str(path)) for path in _library_paths()]
    for name in names:
        assert any(hasattr(library, name) for library in libraries), name
    if shutil.which("nm") is None:
        pytest.skip("no nm to list the exports")
    exported = set()
    for path in _library_paths():
        listing = subprocess.run(["nm", "-D", "--defined-only", str(path)], check=True,
                                 capture_output=True, text=True).stdout
        exported.update(line.split()[-1] for line in listing.splitlines() if line.strip())
    # The operators of the generic path (ops_generic.c) have no fault points of their own.
    generic = {f"{op.name}{phase}" for op in _generic_operators()
               for phase in ("GetWorkspaceSize", "")}
    cann = {name for name in exported if name.startswith("acl") and not name.startswith("aclemu")}
    # The sample programs' helpers have no fault points: the float16 conversions return a
    # value, not a status, and the weight-size and quant-param helpers of the per-repository
    # libraries are no part of the API aclnn_py binds.
    helpers = {"aclFloatToFloat16", "aclFloat16ToFloat", "aclnnCalculateMatmulWeightSize",
               "aclnnCalculateMatmulWeightSizeV2", "aclnnCalculateConvolutionWeightSize",
               "aclnnTransQuantParam"}
    # The aclop path's host objects (tensor descriptions, data buffers, attributes) and the
    # log hook return no device status either (rt_frameworks.c).
    host_objects = {"aclAppLog", "aclCreateTensorDesc", "aclDestroyTensorDesc",
                    "aclGetTensorDescType", "aclGetTensorDescFormat", "aclGetTensorDescNumDims",
                    "aclGetTensorDescDimV2", "aclSetTensorDescName", "aclSetTensorFormat",
                    "aclSetTensorShape", "aclSetTensorPlaceMent", "aclCreateDataBuffer",
                    "aclDestroyDataBuffer", "aclGetDataBufferAddr", "aclGetDataBufferSizeV2",
                    "aclDataTypeSize"}
    host_objects |= {name for name in cann if name.startswith("aclop")}
    # The profiler's step records are host objects returned without a status.
    host_objects |= {"aclprofCreateStepInfo", "aclprofDestroyStepInfo"}
    # aclprofCreateConfig returns its configuration (NULL here: the profiler is out of scope).
    host_objects.add("aclprofCreateConfig")
    # The features out of scope return "not supported" whatever the arguments (rt_unsupported.c).
    unsupported = Path(__file__).resolve().parents[2] / "emulator" / "src" / "rt_unsupported.c"
    host_objects |= set(re.findall(r"^EMU_UNSUPPORTED\((\w+),", unsupported.read_text(),
                                   re.MULTILINE))
    assert cann - generic - helpers - host_objects == set(names)


def _generic_operators():
    import importlib.util
    import sys

    from helpers import ROOT

    spec = importlib.util.spec_from_file_location("emulator_build_for_faults",
                                                  ROOT / "emulator" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.generic_operators()


@pytest.mark.slow
def test_every_fault_api_fails_with_its_injected_status():
    # Arguments do not matter: an armed fault fails the call before it looks at them.
    done = run_python("""
        import aclnn_py
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        def lookup(name):
            for library in (ll.RT, ll.META, ll.OPS):
                try:
                    return getattr(library, name)
                except Exception:  # not this library's
                    pass
        for name in aclnn_py.emulator.fault_apis():
            function = lookup(name)
            kind = ffi.typeof(function)
            arguments = [ll.NULL if a.kind in ("pointer", "function") else 0 for a in kind.args]
            aclnn_py.emulator.inject_fault(name, 507899)
            result = function(*arguments)
            failed = result == ll.NULL if kind.result.kind == "pointer" else result == 507899
            print(name, aclnn_py.emulator.faults()[0]["fired"], failed)
            aclnn_py.emulator.clear_faults()
    """)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(aclnn_py.emulator.fault_apis())
    assert all(line.endswith(" True True") for line in lines), lines


def _vm_flags(address: int) -> list[str]:
    """The VmFlags of the mapping of this process holding ``address`` (/proc/self/smaps)."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and ":" not in head:
            low, high = (int(part, 16) for part in head.split("-"))
            inside = low <= address < high
        elif inside and head == "VmFlags:":
            return line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux /proc")
def test_huge_page_policies_ask_the_host_for_huge_pages_above_1_mib(device):
    """ACL_MEM_MALLOC_HUGE_FIRST takes 2M pages above 1M (hicann/runtime
    docs/api_docs/aclrtMemMallocPolicy.md): the emulator advises huge pages there."""
    cases = [(ll.MALLOC_HUGE_FIRST, 4 << 20, True),
             (ll.constant("ACL_MEM_MALLOC_NORMAL_ONLY"), 4 << 20, False),
             (ll.MALLOC_HUGE_FIRST, 1 << 20, False)]
    for policy, size, huge in cases:
        pointer = ll.malloc(size, policy)
        try:
            flags = _vm_flags(int(ffi.cast("uintptr_t", pointer)))
            assert ("hg" in flags) == huge, (policy, size, flags)
        finally:
            ll.free(pointer)


def test_a_later_acl_init_must_bring_the_first_ones_configuration(tmp_path):
    # hicann/runtime src/acl/aclrt_impl/acl.cpp, aclInitImpl: the first aclInit's configuration
    # content (none reads as empty) is kept; after aclFinalize, an aclInit whose file holds
    # something else is ACL_ERROR_INVALID_PARAM, the same content starts ACL again.
    first, other, same = tmp_path / "first.json", tmp_path / "other.json", tmp_path / "same.json"
    first.write_text('{"dump": {}}')
    other.write_text("{}")
    same.write_text('{"dump": {}}')
    done = run_python(f"""
        from aclnn_py._c import lowlevel as ll
        from aclnn_py.errors import AclError
        print(ll.init({str(first)!r}))
        ll.finalize()
        for path in ({str(other)!r}, None, {str(same)!r}):
            try:
                print(ll.init(path))
            except AclError as error:
                print(error.api, error.status, "differs" in error.message)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True", "aclInit 100000 True", "aclInit 100000 True",
                                        "True"]
