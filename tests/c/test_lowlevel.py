"""The C API driven through the low-level layer, as CANN's documented sample does it."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import run_interleaved

from aclnn_py import AclError, UnavailableError
from aclnn_py._c import lowlevel as ll
from aclnn_py._c._ffi import ffi
from aclnn_py.runtime import handles as _handles

FLOAT = ll.constant("ACL_FLOAT")


def contiguous_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def release(tensors, pointers, stream) -> None:
    """The sample's clean-up: descriptors, then device memory, then the stream."""
    for tensor in tensors:
        ll.destroy_tensor(tensor)
    for pointer in pointers:
        ll.free(pointer)
    ll.destroy_stream(stream)


def test_documented_sample_sequence(device):
    """aclInit, set device, stream, malloc, H2D, tensors, two phases, sync, D2H, release."""
    shape = (2, 4)
    grad = np.ones(shape, np.float32)
    self_ = np.arange(8, dtype=np.float32).reshape(shape)
    target = np.full(shape, 2.0, np.float32)
    stream = ll.create_stream()
    pointers, tensors = [], []
    try:
        for array in (grad, self_, target, np.zeros(shape, np.float32)):
            pointer = ll.malloc(array.nbytes)
            pointers.append(pointer)
            ll.memcpy(pointer, array.nbytes, ffi.from_buffer(array), array.nbytes,
                      ll.MEMCPY_HOST_TO_DEVICE)
            tensors.append(ll.create_tensor(shape, FLOAT, contiguous_strides(shape), 0, shape,
                                            pointer))
        size, executor = ll.operator_workspace_size("aclnnMseLossBackward", *tensors[:3], 1,
                                                    tensors[3])
        workspace = ll.malloc(size) if size else ll.NULL
        if size:
            pointers.append(workspace)
        ll.operator_launch("aclnnMseLossBackward", workspace, size, executor, stream)
        ll.synchronize_stream(stream)
        result = np.empty(shape, np.float32)
        ll.memcpy(ffi.from_buffer(result, require_writable=True), result.nbytes,
                  pointers[3], result.nbytes, ll.MEMCPY_DEVICE_TO_HOST)
    finally:
        release(tensors, pointers, stream)
    np.testing.assert_allclose(result, grad * (self_ - target) * 2 / self_.size, rtol=1e-6)


def test_mse_loss_forward_through_the_same_machinery(device):
    shape = (3,)
    x = np.array([1.0, 2.0, 4.0], np.float32)
    y = np.array([0.0, 0.0, 1.0], np.float32)
    stream = ll.create_stream()
    pointers = [ll.malloc(a.nbytes) for a in (x, y)] + [ll.malloc(4)]
    for pointer, array in zip(pointers, (x, y)):
        ll.memcpy(pointer, array.nbytes, ffi.from_buffer(array), array.nbytes,
                  ll.MEMCPY_HOST_TO_DEVICE)
    tensors = [ll.create_tensor(shape, FLOAT, (1,), 0, shape, p) for p in pointers[:2]]
    tensors.append(ll.create_tensor((), FLOAT, (), 0, (1,), pointers[2]))
    try:
        size, executor = ll.operator_workspace_size("aclnnMseLoss", tensors[0], tensors[1], 1,
                                                    tensors[2])
        assert size == 0
        ll.operator_launch("aclnnMseLoss", ll.NULL, 0, executor, stream)
        ll.synchronize_stream(stream)
        result = np.empty((), np.float32)
        ll.memcpy(ffi.from_buffer(result, require_writable=True), 4, pointers[2], 4,
                  ll.MEMCPY_DEVICE_TO_HOST)
    finally:
        release(tensors, pointers, stream)
    assert result == pytest.approx((1 + 4 + 9) / 3)


def test_device_queries(device):
    assert ll.get_device() == 0
    assert ll.get_device_count() >= 1
    free, total = ll.get_mem_info(ll.constant("ACL_HBM_MEM"))
    assert 0 < free <= total
    assert ll.get_soc_name()


def test_a_function_the_library_lacks_is_an_unavailable_error():
    with pytest.raises(UnavailableError, match="aclCreateTensor is not exported by"):
        getattr(ll.RT, "aclCreateTensor")  # noqa: B009 (declared; exported by the meta library)


@pytest.mark.emulator_only
@pytest.mark.parametrize(("make", "key"), [
    (lambda: _handles.Handle("scalar", 2.5, ll.constant("ACL_FLOAT")), "live_scalars"),
    (lambda: _handles.Handle("int_array", (3, 1, 4)), "live_int_arrays")],
    ids=["aclScalar", "aclIntArray"])
def test_scalars_and_int_arrays_are_owned_like_tensors(make, key):
    import gc

    import aclnn_py

    aclnn_py.runtime_info()
    gc.collect()
    before = aclnn_py.emulator.stats()[key]
    made = [make() for _ in range(3)]
    assert aclnn_py.emulator.stats()[key] == before + 3
    made[0].destroy()
    made[0].destroy()  # once only
    assert aclnn_py.emulator.stats()[key] == before + 2
    del made  # the others are destroyed in C when collected
    assert aclnn_py.emulator.stats()[key] == before


@pytest.mark.parametrize("nbytes", [(1 << 20) + 37, (9 << 20) + 5])  # one piece, split
def test_large_copies_are_exact_whatever_the_alignment_and_the_destination(device, nbytes):
    """Every direction, from and to odd offsets (asynchronous copies aligned, as CANN before
    8.5 requires), into warm and into freshly mapped host memory."""
    source = np.random.default_rng(5).integers(0, 256, nbytes + 64, dtype=np.uint8)
    pointers = [ll.malloc(nbytes + 64) for _ in range(2)]
    pinned = ll.malloc_host(nbytes + 64)
    stream = ll.create_stream()
    try:
        first, second = ffi.cast("char *", pointers[0]) + 3, pointers[1]
        ll.memcpy(first, nbytes, ffi.from_buffer(source[1:]), nbytes, ll.MEMCPY_HOST_TO_DEVICE)
        ll.memcpy(second, nbytes, first, nbytes, ll.MEMCPY_DEVICE_TO_DEVICE)
        ll.memcpy_async(pinned, nbytes, second, nbytes, ll.MEMCPY_DEVICE_TO_HOST, stream)
        ll.synchronize_stream(stream)
        got = np.frombuffer(ffi.buffer(pinned, nbytes), np.uint8).copy()
        assert np.array_equal(got, source[1:nbytes + 1])
        for host in (np.full(nbytes + 64, 7, np.uint8), np.empty(nbytes + 64, np.uint8)):
            ll.memcpy(ffi.from_buffer(host[5:], require_writable=True), nbytes, second,
                      nbytes, ll.MEMCPY_DEVICE_TO_HOST)
            assert np.array_equal(host[5:nbytes + 5], source[1:nbytes + 1])
    finally:
        for pointer in pointers:
            ll.free(pointer)
        ll.free_host(pinned)
        ll.destroy_stream(stream)


@pytest.mark.emulator_only
def test_asynchronous_copies_run_while_other_threads_allocate_and_free(device):
    """A queued aclrtMemcpyAsync checks, when it runs, that its memory is still the allocation
    it was queued with. Other threads allocating and freeing meanwhile (as in any program with
    a pool) must not make that check see a freed block: it looks the blocks up under the
    runtime's lock."""
    stop = time.monotonic() + 3
    failures: list[str] = []
    rounds = []

    def churn() -> None:
        ll.set_device(0)
        kept = [ll.malloc(512) for _ in range(2000)]  # long block lists: slower to update
        try:
            step = 0
            while time.monotonic() < stop and not failures:
                blocks = [ll.malloc(512 * (1 + (step + k) % 40)) for k in range(16)]
                for block in blocks:
                    ll.free(block)
                step += 1
        finally:
            for block in kept:
                ll.free(block)
            ll.reset_device(0)

    def copy() -> None:
        ll.set_device(0)
        stream = ll.create_stream()
        host, memory = ll.malloc_host(4096), ll.malloc(4096)
        try:
            while time.monotonic() < stop and not failures:
                for _ in range(8):
                    ll.memcpy_async(memory, 4096, host, 4096, ll.MEMCPY_HOST_TO_DEVICE, stream)
                ll.synchronize_stream(stream)
                rounds.append(1)
        except AclError as error:
            failures.append(str(error))
        finally:
            ll.free(memory)
            ll.free_host(host)
            ll.destroy_stream(stream)
            ll.reset_device(0)

    run_interleaved(churn, churn, copy)
    assert failures == []
    assert len(rounds) > 100
