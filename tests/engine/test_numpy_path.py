"""The numpy path at device speed: staged transfers through page-locked memory.

Every operator of the table, over numpy arrays: one asynchronous copy each way through
one page-locked block and one device block, one synchronisation per call, the minimum
bytes (plus alignment padding of the packed block), no rebinding on a repeat; large
arrays straight from and to the caller's memory; failures and interrupts at any step
leak nothing and return no wrong data.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np
import pytest
from conftest import LEAK_KEYS, fired_faults, live_resources
from tolerances import GOLDEN, assert_close

import aclnn_py
from aclnn_py._c import lowlevel as _lowlevel
from aclnn_py.engine import numpy_path as _staging
from aclnn_py.errors import AclError, OutOfMemoryError
from aclnn_py.ops.specs import REDUCTION, SPECS

SPEC_IDS = list(SPECS)
NEVER = 1_000_000


def _counters() -> dict[str, int]:
    return dict(aclnn_py.emulator.stats())


def _delta(before: dict[str, int]) -> dict[str, int]:
    after = aclnn_py.emulator.stats()
    return {key: after[key] - before[key] for key in before}


def _operands(spec, n: int = 4, seed: int = 0) -> list[np.ndarray]:
    """The spec's inputs as float32 arrays of shape (3, n); the last is a broadcast row
    (zero stride on axis 0), so only its distinct elements must travel."""
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-2, 2, size=(3, n)).astype(np.float32) for _ in spec.inputs]
    row = rng.uniform(-2, 2, size=n).astype(np.float32)
    arrays[-1] = np.broadcast_to(row, (3, n))
    return arrays


def _minimum_bytes(arrays: list[np.ndarray]) -> int:
    """Bytes of the distinct elements of every input (zero strides counted once)."""
    total = 0
    for array in arrays:
        distinct = 1
        for extent, stride in zip(array.shape, array.strides):
            if stride:
                distinct *= extent
        total += distinct * array.itemsize if array.size else 0
    return total


def _call(spec, arrays: list[Any], reduction: str | None, **kwargs: Any) -> np.ndarray:
    extra = (reduction,) if reduction is not None else ()
    return getattr(aclnn_py, spec.function)(*arrays, *extra, **kwargs)


def _reductions(spec) -> list[str | None]:
    return ["none", "mean"] if REDUCTION in spec.attributes else [None]


CASES = [(name, reduction) for name, spec in SPECS.items() for reduction in _reductions(spec)]
CASE_IDS = [f"{name}-{reduction}" for name, reduction in CASES]


# ---- counters ---------------------------------------------------------------------------


@pytest.mark.emulator_only
def test_the_emulator_counts_copies_and_synchronisations(device):
    from aclnn_py._c import lowlevel as ll

    aclnn_py.emulator.reset_counters()
    assert (_counters()["memcpy_calls"], _counters()["sync_calls"]) == (0, 0)
    block = ll.malloc(64)
    host = np.zeros(16, np.float32)
    ll.memcpy(block, 64, ll.host_pointer(host), 64, ll.MEMCPY_HOST_TO_DEVICE)
    with pytest.raises(AclError):  # refused calls count too: every call made
        ll.memcpy(block, 64, ll.host_pointer(host), 128, ll.MEMCPY_HOST_TO_DEVICE)
    stream = ll.create_stream()
    ll.memcpy_async(ll.host_pointer(host, writable=True), 64, block, 64,
                    ll.MEMCPY_DEVICE_TO_HOST, stream)
    ll.synchronize_stream(stream)
    ll.synchronize_stream_with_timeout(stream, -1)
    event = ll.create_event()
    ll.record_event(event, stream)
    ll.synchronize_event(event)
    ll.synchronize_device()
    stats = _counters()
    assert (stats["memcpy_calls"], stats["sync_calls"]) == (3, 4)
    aclnn_py.emulator.reset_counters()
    assert (_counters()["memcpy_calls"], _counters()["sync_calls"]) == (0, 0)
    ll.destroy_event(event)
    ll.destroy_stream(stream)
    ll.free(block)


# ---- every operator: copies, synchronisations, bytes --------------------------------------


@pytest.mark.emulator_only
@pytest.mark.parametrize(("name", "reduction"), CASES, ids=CASE_IDS)
def test_a_staged_call_copies_once_each_way_and_waits_once(name, reduction):
    spec = SPECS[name]
    arrays = _operands(spec)
    expected = GOLDEN[name](*arrays, *((reduction,) if reduction else ()))
    _call(spec, arrays, reduction)  # first call: phase 1, pools filled
    for _ in range(2):  # repeats, through the layout and the cached launch
        before = _counters()
        result = _call(spec, arrays, reduction)
        moved = _delta(before)
        assert moved["memcpy_calls"] <= 2
        assert moved["sync_calls"] == 1
        minimum = _minimum_bytes(arrays)
        padding = moved["h2d_bytes"] - minimum
        assert 0 <= padding < 512 * (len(arrays) - 1), (moved["h2d_bytes"], minimum)
        assert moved["d2h_bytes"] == result.nbytes
        assert moved["malloc_calls"] == 0 and moved["kernel_launches"] == 1
        assert_close(result, expected, np.float32)


@pytest.mark.emulator_only
@pytest.mark.parametrize("n", [1, 1000, 40_000], ids=["1", "1K", "40K-direct"])
@pytest.mark.parametrize(("name", "reduction"), CASES, ids=CASE_IDS)
def test_one_synchronisation_and_the_minimum_bytes_at_any_size(name, reduction, n):
    """Arrays above the direct-copy size travel straight, one synchronous copy each (no
    padding); the rest are staged; one wait per call either way."""
    spec = SPECS[name]
    arrays = _operands(spec, n, seed=n)
    _call(spec, arrays, reduction)
    before = _counters()
    result = _call(spec, arrays, reduction)
    moved = _delta(before)
    assert moved["sync_calls"] == 1
    sizes = [_minimum_bytes([a]) for a in arrays]
    direct = [size for size in sizes if size > _staging.DIRECT_BYTES]
    staged = [size for size in sizes if size <= _staging.DIRECT_BYTES]
    assert moved["memcpy_calls"] == len(direct) + bool(staged) + bool(result.nbytes)
    assert 0 <= moved["h2d_bytes"] - sum(sizes) < 512 * max(len(staged) - 1, 1)
    if len(staged) <= 1:
        assert moved["h2d_bytes"] == sum(sizes)  # nothing packed after another: no padding
    assert moved["d2h_bytes"] == result.nbytes
    if n == 40_000:
        assert direct
    assert_close(result, GOLDEN[name](*arrays, *((reduction,) if reduction else ())),
                 np.float32)


@pytest.mark.emulator_only
def test_a_repeat_rebinds_nothing_and_runs_no_phase_1():
    """The staged arrays' addresses follow from the signature: a repeat that gets the same
    blocks from the pools binds the same addresses."""
    x = np.random.default_rng(1).random((4, 5), dtype=np.float32)
    aclnn_py.mse_loss_backward(1.0, x, 0.5, "none")
    for api in ("aclSetInputTensorAddr", "aclSetOutputTensorAddr",
                "aclnnMseLossBackwardGetWorkspaceSize", "aclrtMalloc", "aclrtMallocHost"):
        aclnn_py.emulator.inject_fault(api, 507899, nth=NEVER)
    for _ in range(5):
        result = aclnn_py.mse_loss_backward(1.0, x, 0.5, "none")
    calls = {f["api"]: NEVER - f["remaining"] for f in aclnn_py.emulator.faults()}
    assert set(calls.values()) == {0}, calls
    np.testing.assert_allclose(result, 2 * (x - 0.5), rtol=1e-6)


@pytest.mark.emulator_only
def test_asynchronous_copies_use_page_locked_512_byte_aligned_memory(monkeypatch):
    """Every aclrtMemcpyAsync of the numpy path meets CANN's rules before 8.5: host memory
    from aclrtMallocHost, both sides 64-byte aligned (here: every staged array at 512)."""
    copies = []
    real = _lowlevel.memcpy_async

    def recording(dst, dst_max, src, count, kind, stream):
        copies.append((_lowlevel.address(dst), _lowlevel.address(src), count, kind))
        real(dst, dst_max, src, count, kind, stream)

    monkeypatch.setattr(_lowlevel, "memcpy_async", recording)
    grad = np.float32(3.0)
    x = np.arange(7, dtype=np.float32)
    y = np.arange(7, dtype=np.float32)[::-1]  # negative strides: compacted, then staged
    result = aclnn_py.mse_loss_backward(np.asarray(grad), x, y, "none")
    np.testing.assert_allclose(result, 3.0 * (x - y[::1].copy()) * 2, rtol=1e-6)
    assert [kind for *_, kind in copies] == [_lowlevel.MEMCPY_HOST_TO_DEVICE,
                                             _lowlevel.MEMCPY_DEVICE_TO_HOST]
    (up_dst, up_src, up_count, _), (down_dst, down_src, down_count, _) = copies
    assert up_count == 512 * 2 + 7 * 4 and down_count == 7 * 4
    for address in (up_dst, up_src, down_dst, down_src):
        assert address % 512 == 0
    info = aclnn_py.memory_info()
    assert info["pinned_cached_bytes"] >= up_count + down_count  # the block went back
    assert aclnn_py.emulator.stats()["live_host_allocations"] >= 1


# ---- layouts and the fast path --------------------------------------------------------------


@pytest.mark.emulator_only
def test_layouts_of_every_kind_give_the_unstaged_paths_bits():
    """C and Fortran order, transposes, slices with gaps, negative strides, zero strides,
    0-d, empty, byte-swapped and read-only inputs, Python numbers and ``out=``: the staged
    path matches the unstaged one bit for bit, with fewer copies."""
    rng = np.random.default_rng(3)
    base = rng.uniform(-2, 2, size=(6, 8)).astype(np.float32)
    readonly = base.copy()
    readonly.flags.writeable = False
    layouts = [base, np.asfortranarray(base), base.T.copy().T, base[::2, ::3],
               base[::-1, ::-2], np.broadcast_to(base[0], (6, 8)), readonly,
               base.astype(">f4")]
    for x in layouts:
        for y in (0.25, np.float32(0.5) * np.ones((1, x.shape[1]), np.float32), x[:, :1]):
            before = _counters()
            staged = aclnn_py.mse_loss_backward(1.5, x, y, "none")
            again = aclnn_py.mse_loss_backward(1.5, x, y, "none")
            moved = _delta(before)
            assert moved["memcpy_calls"] == 4 and moved["sync_calls"] == 2
            _staging.enabled = False
            try:
                unstaged = aclnn_py.mse_loss_backward(1.5, x, y, "none")
            finally:
                _staging.enabled = True
            assert staged.tobytes() == unstaged.tobytes() == again.tobytes()
    empty = np.zeros((0, 3), np.float32)
    before = _counters()
    assert aclnn_py.mse_loss_backward(empty, empty, empty).shape == (0, 3)
    moved = _delta(before)
    assert (moved["memcpy_calls"], moved["sync_calls"], moved["h2d_bytes"]) == (0, 1, 0)


def test_the_fast_path_refuses_what_validation_refuses():
    """A signature seen before skips validation; the checks that depend on more than the
    signature still run."""
    x = np.ones((2, 3), np.float32)
    out = np.empty((2, 3), np.float32)
    assert aclnn_py.mse_loss_backward(x, x, x, "none", out=out) is out
    frozen = np.empty((2, 3), np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        aclnn_py.mse_loss_backward(x, x, x, "none", out=frozen)
    closed = aclnn_py.Stream()
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        aclnn_py.mse_loss_backward(x, x, x, "none", stream=closed)
    with pytest.raises(TypeError):
        aclnn_py.mse_loss_backward(x, x, x, "none", stream="default")
    assert (aclnn_py.mse_loss_backward(2, x, 1, "none") == 2 * (x - 1) * 2).all()
    assert _staging.fast_key(SPECS["mse_loss_backward"], (x, x, x), ("none",), out, 0) \
        in _staging._layouts


# ---- failures, interrupts, memory --------------------------------------------------------


def _warm(x: np.ndarray) -> np.ndarray:
    result = aclnn_py.mse_loss_backward(x, x, 0.0, "none")
    aclnn_py.empty_cache()  # allocations go to CANN, not the pools' caches
    return result


@pytest.mark.emulator_only
@pytest.mark.parametrize(("api", "nth"), [("aclrtMallocHost", 1), ("aclrtMalloc", 1),
                                          ("aclrtMemcpyAsync", 1), ("aclrtMemcpyAsync", 2),
                                          ("aclnnMseLossBackward", 1),
                                          ("aclrtSynchronizeStream", 1)])
def test_a_failure_at_any_step_raises_waits_and_leaks_nothing(api, nth):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    expected = _warm(x)
    aclnn_py.emulator.inject_fault(api, 507899, nth=nth)
    try:
        aclnn_py.mse_loss_backward(x, x, 0.0, "none")
    except AclError as error:
        assert error.api == api and error.status == 507899
    else:
        pytest.fail(f"the fault at call {nth} of {api} did not make the call fail")
    assert fired_faults() == [api]
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0  # nothing left queued
    assert _unkept_pinned_bytes() == 0  # the staging blocks came back
    aclnn_py.emulator.clear_faults()
    assert live_resources() == dict.fromkeys(LEAK_KEYS, 0)
    assert aclnn_py.mse_loss_backward(x, x, 0.0, "none").tobytes() == expected.tobytes()


def _counting_staged_calls(monkeypatch) -> list[int]:
    """The statuses of the one-C-call staged calls made from now on."""
    statuses: list[int] = []
    real = _staging._call_staged or _lowlevel.staged_call_function()  # (looked up at first use)

    def counted(*arguments: Any) -> int:
        status = real(*arguments)
        statuses.append(status)
        return int(status)

    monkeypatch.setattr(_staging, "_call_staged", counted)
    return statuses


@pytest.mark.emulator_only
def test_a_repeated_staged_call_is_one_c_call_without_a_hold(monkeypatch):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    expected = aclnn_py.mse_loss_backward(x, x, 0.0, "none")
    statuses = _counting_staged_calls(monkeypatch)
    before = _counters()
    for _ in range(3):
        assert aclnn_py.mse_loss_backward(x, x, 0.0, "none").tobytes() == expected.tobytes()
    assert statuses == [0, 0, 0]
    delta = _delta(before)
    assert (delta["memcpy_calls"], delta["sync_calls"], delta["kernel_launches"]) == (6, 3, 3)
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0
    assert _kept_pairs() == 1  # the signature keeps its staging blocks for the next call
    aclnn_py.empty_cache()
    assert aclnn_py.memory_info()["pinned_used_bytes"] == 0  # given back with the layouts


def _kept() -> list[Any]:
    """The staging blocks numpy call signatures keep between calls (a pair each)."""
    return [layout.spare[0] for layout in list(_staging._layouts.values()) if layout.spare]


def _kept_pairs() -> int:
    return len(_kept())


def _unkept_pinned_bytes() -> int:
    """Page-locked bytes in use but not kept by a signature for its next call."""
    return aclnn_py.memory_info()["pinned_used_bytes"] - sum(
        staging.host.size for staging in _kept())


@pytest.mark.emulator_only
def test_a_small_signature_reuses_its_kept_staging_blocks_until_memory_is_short():
    x = np.linspace(-1, 1, 12, dtype=np.float32)
    aclnn_py.empty_cache()  # no layout, so none keeps blocks
    expected = aclnn_py.mse_loss_backward(x, x, 0.0, "none")
    before, counters = aclnn_py.memory_info(), _counters()
    for _ in range(5):
        assert aclnn_py.mse_loss_backward(x, x, 0.0, "none").tobytes() == expected.tobytes()
    after = aclnn_py.memory_info()
    # neither pool handed out a block: the pair kept after the first call served every repeat
    assert (after["pool_hits"], after["pool_misses"]) == (before["pool_hits"],
                                                          before["pool_misses"])
    assert _delta(counters)["live_host_allocations"] == 0
    assert _kept_pairs() == 1 and after["pinned_used_bytes"] > 0
    # out of device memory: the recovery takes the kept blocks back before it retries
    aclnn_py.emulator.inject_fault("aclrtMalloc", 207001, nth=1)
    held = aclnn_py.to_device(np.ones(1 << 16, np.float32))
    assert fired_faults() == ["aclrtMalloc"]
    assert _kept_pairs() == 0 and aclnn_py.memory_info()["pinned_used_bytes"] == 0
    held.free()
    assert aclnn_py.mse_loss_backward(x, x, 0.0, "none").tobytes() == expected.tobytes()
    assert _kept_pairs() == 1


@pytest.mark.emulator_only
def test_a_signature_above_the_spare_size_keeps_no_staging_blocks():
    x = np.ones(_staging.SPARE_BYTES // 4 + 1, np.float32)  # staged, each block too big to keep
    aclnn_py.empty_cache()  # no layout, so none keeps blocks
    for _ in range(3):
        aclnn_py.mse_loss_backward(x, x, 0.0, "none")
    assert _kept_pairs() == 0
    assert aclnn_py.memory_info()["pinned_used_bytes"] == 0


@pytest.mark.parametrize("number", [3.0, np.float64(3.0), 3], ids=["float", "float64", "int"])
def test_a_repeat_converts_a_number_at_the_like_input_as_validation_did(number):
    """A number where the operator takes the dtype numbers follow (mse's x, add's x) takes
    another input's dtype; a repeat, which skips validation, must convert it the same way."""
    g, y = np.full(4, 2, np.float32), np.ones(4, np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(aclnn_py.mse_loss_backward(g, number, y, "none"),
                                      g * (np.float32(number) - y) * 2)
        np.testing.assert_array_equal(aclnn_py.add(number, y), np.float32(number) + y)


def test_a_repeat_refuses_a_number_its_dtype_cannot_hold_as_a_first_call_does():
    x = np.ones(4, np.float16)
    aclnn_py.mse_loss_backward(1.0, x, x, "none")  # the signature, with a number
    aclnn_py.add(x, 1)
    with pytest.raises(ValueError, match="cannot hold"):
        aclnn_py.mse_loss_backward(1e6, x, x, "none")
    with pytest.raises(ValueError, match="cannot hold"):
        aclnn_py.add(x, 10**6)
    np.testing.assert_array_equal(aclnn_py.mse_loss_backward(2.0, x, 0.0, "none"), x * 4)
    y = np.ones(2, np.float32)
    aclnn_py.add(y, 3)  # an int number's signature: one numpy reads as object is refused
    with pytest.raises(TypeError, match="object"):
        aclnn_py.add(y, 2**70)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint64", "float16",
                                   "float32", "float64"])
@pytest.mark.parametrize("kind", [int, float])
def test_the_exact_range_a_repeat_converts_by_is_what_validation_converts_as_it_is(dtype, kind):
    """A repeat converts a number inside ``exact_range`` itself (``numpy.asarray``) and gives
    the rest to validation: at the bounds the two must agree, and just past a bound that is
    the dtype's own limit validation refuses (where the repeat's conversion would not)."""
    from aclnn_py.engine.validate import as_array, exact_range

    dtype = np.dtype(dtype)
    if kind is float and dtype.kind in "iu":  # refused whatever the value: never repeated
        with pytest.raises(TypeError, match="Python float numbers"):
            as_array(1.0, dtype, "x")
        return
    low, high = exact_range(dtype, kind)
    for bound in (low, high):
        number = kind(bound)
        converted = as_array(number, dtype, "x")
        assert converted.dtype == dtype
        assert converted == np.asarray(number, dtype=dtype)
    if dtype.kind in "iu":
        past = (low - 1, high + 1)
    elif high == float(np.finfo(dtype).max) and dtype.itemsize < 8:
        past = (kind(2 * low), kind(2 * high))
    else:
        return  # the bound is int64's, or float64's (past it a Python float is infinite)
    for number in past:
        with pytest.raises((ValueError, TypeError)):
            as_array(number, dtype, "x")


@pytest.mark.emulator_only
def test_a_pair_a_call_took_is_not_kept_when_the_pairs_were_given_back_meanwhile(monkeypatch):
    """Out-of-memory recovery or teardown in another thread gives the kept pairs back while
    a call holds one: that call must not keep it (after a teardown its blocks are freed)."""
    x = np.linspace(-1, 1, 12, dtype=np.float32)
    aclnn_py.empty_cache()
    expected = aclnn_py.mse_loss_backward(x, x, 0.0, "none")
    assert _kept_pairs() == 1
    real = _staging._staged_call

    def giving_back_meanwhile(*args: Any) -> bool:
        _staging.drop_spares()
        return real(*args)

    monkeypatch.setattr(_staging, "_staged_call", giving_back_meanwhile)
    assert aclnn_py.mse_loss_backward(x, x, 0.0, "none").tobytes() == expected.tobytes()
    assert _kept_pairs() == 0


def test_with_the_pool_turned_off_a_small_signature_keeps_no_staging_blocks(monkeypatch):
    from aclnn_py.runtime import memory

    x = np.linspace(-1, 1, 12, dtype=np.float32)
    aclnn_py.empty_cache()  # no layout, so the next call makes one under the setting below
    monkeypatch.setattr(memory, "_pool_enabled", False)  # as ACLNN_PY_POOL=0 reads it
    try:
        for _ in range(3):
            aclnn_py.mse_loss_backward(x, x, 0.0, "none")
        assert _kept_pairs() == 0
    finally:
        aclnn_py.empty_cache()  # no layout made with the pool off outlives the test


@pytest.mark.emulator_only
@pytest.mark.parametrize(("api", "nth"), [("aclrtMemcpyAsync", 1), ("aclrtMemcpyAsync", 2),
                                          ("aclnnMseLossBackward", 1),
                                          ("aclrtSynchronizeStream", 1)])
def test_a_failure_of_the_one_c_call_raises_waits_and_leaks_nothing(monkeypatch, api, nth):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    expected = aclnn_py.mse_loss_backward(x, x, 0.0, "none")  # cached: the repeat is one call
    statuses = _counting_staged_calls(monkeypatch)
    aclnn_py.emulator.inject_fault(api, 507899, nth=nth)
    with pytest.raises(AclError) as info:
        aclnn_py.mse_loss_backward(x, x, 0.0, "none")
    assert info.value.api == api and info.value.status == 507899
    del info
    assert statuses == [507899]  # it failed inside the one C call
    assert fired_faults() == [api]
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0  # nothing left queued
    assert _unkept_pinned_bytes() == 0  # the staging blocks came back
    aclnn_py.emulator.clear_faults()
    assert aclnn_py.mse_loss_backward(x, x, 0.0, "none").tobytes() == expected.tobytes()
    aclnn_py.empty_cache()
    assert live_resources() == dict.fromkeys(LEAK_KEYS, 0)


@pytest.mark.emulator_only
def test_out_of_page_locked_memory_retries_then_says_how_much():
    x = np.ones(5, np.float32)
    _warm(x)
    aclnn_py.emulator.inject_fault("aclrtMallocHost", 207001, nth=1)
    aclnn_py.emulator.inject_fault("aclrtMallocHost", 207001, nth=2)
    with pytest.raises(OutOfMemoryError, match="page-locked host memory") as info:
        aclnn_py.mse_loss_backward(x, x, 0.0, "none")
    assert info.value.api == "aclrtMallocHost"
    assert fired_faults() == ["aclrtMallocHost", "aclrtMallocHost"]
    del info
    aclnn_py.emulator.clear_faults()
    assert live_resources() == dict.fromkeys(LEAK_KEYS, 0)
    aclnn_py.emulator.inject_fault("aclrtMallocHost", 207001, nth=1)  # one failure: recovered
    assert (aclnn_py.mse_loss_backward(x, x, 0.0, "none") == 2 * x).all()


@pytest.mark.emulator_only
@pytest.mark.parametrize("step", ["upload", "download"])
def test_an_interrupt_after_the_upload_leaves_queued_work_held(monkeypatch, step):
    """KeyboardInterrupt while the call queues its work: what was queued stays held (its
    blocks are not reused) until the next synchronisation, then everything goes back."""
    x = np.linspace(-1, 1, 9, dtype=np.float32)
    expected = _warm(x)
    real = _lowlevel.memcpy_async
    kind = {"upload": _lowlevel.MEMCPY_HOST_TO_DEVICE,
            "download": _lowlevel.MEMCPY_DEVICE_TO_HOST}[step]

    def interrupted(dst, dst_max, src, count, copy_kind, stream):
        if copy_kind == kind:
            raise KeyboardInterrupt
        real(dst, dst_max, src, count, copy_kind, stream)

    monkeypatch.setattr(_lowlevel, "memcpy_async", interrupted)
    with pytest.raises(KeyboardInterrupt):
        aclnn_py.mse_loss_backward(x, x, 0.0, "none")
    monkeypatch.setattr(_lowlevel, "memcpy_async", real)
    pending = aclnn_py.emulator.stats()["pending_tasks"]
    assert pending == (0 if step == "upload" else 2)  # the upload and the kernel
    info = aclnn_py.memory_info()
    held = info["used_bytes"], info["pinned_used_bytes"]
    if step == "download":
        assert all(held)  # the blocks are held for the queued work, not back in the pools
    other = aclnn_py.mse_loss_backward(x + 1, x, 0.0, "none")  # another block pair
    np.testing.assert_allclose(other, 2 * (x + 1) * x, rtol=1e-6)
    aclnn_py.synchronize()
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0
    assert live_resources() == dict.fromkeys(LEAK_KEYS, 0)
    assert aclnn_py.mse_loss_backward(x, x, 0.0, "none").tobytes() == expected.tobytes()


@pytest.mark.emulator_only
def test_page_locked_blocks_are_pooled_and_given_back_by_empty_cache():
    x = np.ones(_staging.SPARE_BYTES // 4 + 1, np.float32)  # no signature keeps them
    aclnn_py.empty_cache()
    for _ in range(3):
        aclnn_py.mse_loss(x, x, "none")
    stats = aclnn_py.emulator.stats()
    info = aclnn_py.memory_info()
    assert stats["live_host_allocations"] == 1  # one block, reused
    assert info["pinned_used_bytes"] == 0 and info["pinned_cached_bytes"] > 0
    aclnn_py.empty_cache()
    assert aclnn_py.emulator.stats()["live_host_allocations"] == 0
    assert aclnn_py.memory_info()["pinned_cached_bytes"] == 0


@pytest.mark.emulator_only
def test_threads_share_the_staging_pools_and_get_their_own_results():
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        own = aclnn_py.Stream() if seed % 2 else None
        try:
            for _ in range(50):
                x = rng.uniform(-1, 1, size=int(rng.integers(1, 300))).astype(np.float32)
                y = rng.uniform(-1, 1, size=x.shape).astype(np.float32)
                result = aclnn_py.mse_loss_backward(1.0, x, y, "none", stream=own)
                np.testing.assert_allclose(result, 2 * (x - y), rtol=1e-5, atol=1e-7)
        except BaseException as error:  # reported by the main thread
            errors.append(error)
        finally:
            if own is not None:
                own.close()

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    # every page-locked block still in use is a pair a signature keeps for its next call
    assert _kept_pairs() > 0 and _unkept_pinned_bytes() == 0
    assert live_resources() == dict.fromkeys(LEAK_KEYS, 0)


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def test_large_results_reuse_the_memory_of_dropped_ones_and_views_keep_theirs(monkeypatch):
    from aclnn_py.runtime import results as _result_cache

    aclnn_py.empty_cache()
    x = np.arange(1 << 19, dtype=np.float32)  # 2 MiB
    first = aclnn_py.mse_loss_backward(x, x, 0.0, "none")
    address = _address(first)
    del first
    second = aclnn_py.mse_loss_backward(x, x, 1.0, "none")
    assert _address(second) == address  # the dropped result's block, taken again
    np.testing.assert_allclose(second, 2 * (x - 1) * x, rtol=1e-6)
    view = second[::2]
    expected = view.copy()
    del second
    third = aclnn_py.mse_loss_backward(x, x, 2.0, "none")
    assert _address(third) != address  # the view still holds the block
    assert np.array_equal(view, expected)
    del third, view
    assert _result_cache.cached_result_bytes() == 2 * x.nbytes
    aclnn_py.empty_cache()
    assert _result_cache.cached_result_bytes() == 0
    monkeypatch.setattr(_result_cache, "RESULT_CACHE_BYTES", 3 * x.nbytes)
    results = [aclnn_py.mse_loss_backward(x, x, float(k), "none") for k in range(5)]
    del results
    assert _result_cache.cached_result_bytes() == 3 * x.nbytes  # the oldest went beyond the limit


# The functions of the result cache (by qualified name, nested ones included).
_RESULT_CACHE = ("_Lease.", "_give_back", "_drop", "_remove", "result_array", "empty_results",
                 "cached_result_bytes")


def _interrupt_at_call(number: int, filename: str) -> list[str]:
    """Raise KeyboardInterrupt as the ``number``-th call (from 0) of a result-cache function
    starts, where CPython also runs signal handlers; returns the names of those entered."""
    entered: list[str] = []

    def hook(frame, event, arg):
        code = frame.f_code
        if event == "call" and code.co_filename == filename \
                and code.co_qualname.startswith(_RESULT_CACHE):
            entered.append(code.co_qualname)
            if len(entered) == number + 1:
                raise KeyboardInterrupt  # the profiler is off from here on
    sys.setprofile(hook)
    return entered


@pytest.mark.slow
def test_an_interrupt_anywhere_in_the_result_cache_breaks_no_later_call(monkeypatch):
    """Each function of the cache interrupted as it starts, one call at a time, through a
    take, two give-backs (the second dropping the oldest block beyond the limit) and an
    emptying: later calls of that size still work, reuse blocks and give right results."""
    from aclnn_py.runtime import results as _result_cache

    x = np.arange(1 << 19, dtype=np.float32)  # 2 MiB results
    monkeypatch.setattr(_result_cache, "RESULT_CACHE_BYTES", 3 * x.nbytes // 2)  # one block fits
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: None)  # in __del__
    def steps():
        first = aclnn_py.mse_loss_backward(x, x, 0.0, "none")  # takes the cached block
        second = aclnn_py.mse_loss_backward(x, x, 1.0, "none")  # a fresh one
        del first, second  # back, the older dropped
        aclnn_py.empty_cache()

    interrupted = set()
    for number in range(100):
        aclnn_py.empty_cache()
        np.asarray(aclnn_py.mse_loss_backward(x, x, 0.0, "none")).sum()  # one block cached
        entered = _interrupt_at_call(number, _result_cache.__file__)
        try:
            steps()
        except KeyboardInterrupt:
            pass
        finally:
            sys.setprofile(None)
        if len(entered) <= number:
            break  # every call on the path was interrupted once
        interrupted.add(entered[-1])
        for k in range(3):
            result = aclnn_py.mse_loss_backward(x, x, float(k), "none")
            np.testing.assert_allclose(result, 2 * (x - k) * x, rtol=1e-6)
            address = _address(result)
            del result
            again = aclnn_py.mse_loss_backward(x, x, float(k), "none")
            assert _address(again) == address, f"interrupted at {entered[-1]}"
            del again
        assert _result_cache.cached_result_bytes() <= _result_cache.RESULT_CACHE_BYTES
        aclnn_py.empty_cache()
        assert _result_cache.cached_result_bytes() == 0
    assert {"_give_back", "result_array", "empty_results"} <= interrupted
    assert live_resources() == dict.fromkeys(LEAK_KEYS, 0)


def test_small_results_and_out_arrays_own_their_memory():
    x = np.ones(1000, np.float32)
    assert aclnn_py.mse_loss_backward(x, x, x, "none").flags.owndata
    big = np.ones(1 << 19, np.float32)
    out = np.empty_like(big)
    assert aclnn_py.mse_loss_backward(big, big, big, "none", out=out) is out
    assert not aclnn_py.mse_loss_backward(big, big, big, "none").flags.owndata
