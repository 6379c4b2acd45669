"""Numpy calls larger than the device stream through in chunks (``aclnn_py/engine/chunked.py``):
results match the unchunked call (bit for bit for "none"), the host-to-device bytes are
the minimum and a chunked call waits once per chunk. The variables are read at start,
so the chunked calls run in subprocesses."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from helpers import import_paths, run_json
from test_operator_table import CASE_IDS, CASES, _call
from tolerances import DTYPES, tolerance

import aclnn_py
from aclnn_py.ops.specs import SPECS

pytestmark = pytest.mark.slow

# Shapes by pattern (the broadcast shape's leading axis is the chunked one).
CHUNK_PATTERNS = {
    "same": lambda n: [(64, 33)] * n,
    "column": lambda n: [(64, 33)] * (n - 1) + [(64, 1)],
    "scalar_first": lambda n: [()] + [(64, 33)] * (n - 1),
    "all_broadcast": lambda n: [(1, 33), (64, 1), (3, 1, 1)][:n] if n == 3
    else [(2048, 1), (1, 33)],
    "leading_one": lambda n: [(1, 64, 33)] * n,
}


def _inputs(spec, pattern: str, dtype: np.dtype) -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    if pattern == "zero_stride":  # a numpy broadcast view: its rows travel once
        shapes = CHUNK_PATTERNS["same"](len(spec.inputs))
        arrays = [rng.uniform(-3, 3, size=s).astype(dtype) for s in shapes]
        arrays[0] = np.broadcast_to(arrays[0][:1], arrays[0].shape)
        return arrays
    return [rng.uniform(-3, 3, size=s).astype(dtype)
            for s in CHUNK_PATTERNS[pattern](len(spec.inputs))]


PATTERN_NAMES = [*CHUNK_PATTERNS, "zero_stride"]

# Runs in the subprocess: every case of one operator, chunked, with the counters.
_CHUNKED = """
import json, sys
import numpy as np
sys.path[:0] = {tests!r}
import aclnn_py
from aclnn_py.engine import chunked as _chunked
from aclnn_py.runtime.arrays import host_layout
from aclnn_py.ops.specs import SPECS
from test_chunked import PATTERN_NAMES, _inputs
from test_operator_table import CASES, _call
from tolerances import DTYPES

assert _chunked.CHUNK_BYTES == 4096
results, counts = {{}}, {{}}
for number, (row, reduction, attributes) in enumerate(CASES):
    if row.function != {function!r}:
        continue
    spec = SPECS[row.function]
    for dtype in DTYPES:
        for pattern in PATTERN_NAMES:
            inputs = _inputs(spec, pattern, dtype)
            _chunked.last_count = 0
            before = aclnn_py.emulator.stats()
            result = _call(row, inputs, reduction, attributes)
            after = aclnn_py.emulator.stats()
            name = f"{{number}}-{{dtype.name}}-{{pattern}}"
            results[name] = np.asarray(result).astype(np.float64)
            results[name + "-bytes"] = np.frombuffer(np.ascontiguousarray(result).tobytes(),
                                                     np.uint8)
            minimum = sum(host_layout(a)[0].size * a.itemsize for a in inputs)
            counts[name] = dict(chunks=_chunked.last_count,
                                syncs=after["sync_calls"] - before["sync_calls"],
                                h2d=after["h2d_bytes"] - before["h2d_bytes"],
                                minimum=minimum)
np.savez({path!r}, **results)
print(json.dumps(counts))
"""


@pytest.mark.emulator_only
@pytest.mark.parametrize("function", list(SPECS))
def test_every_operator_matches_the_unchunked_call(function):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "chunked.npz")
        counts = run_json(_CHUNKED.format(tests=import_paths(), function=function, path=path),
                          {"ACLNN_PY_CHUNK_BYTES": "4096"}, timeout=300)
        chunked = dict(np.load(path))
    seen = 0
    for number, (row, reduction, attributes) in enumerate(CASES):
        if row.function != function:
            continue
        spec = SPECS[function]
        for dtype in DTYPES:
            for pattern in PATTERN_NAMES:
                name = f"{number}-{dtype.name}-{pattern}"
                inputs = _inputs(spec, pattern, dtype)
                unchunked = np.asarray(_call(row, inputs, reduction, attributes))
                count = counts[name]
                assert count["chunks"] >= 2, (name, count)  # it did chunk
                assert count["syncs"] <= count["chunks"], (name, count)
                assert count["h2d"] == count["minimum"], (name, count)
                actual = chunked[name]
                assert actual.shape == unchunked.shape, name
                if reduction in (None, "none"):
                    assert chunked[name + "-bytes"].tobytes() == \
                        np.ascontiguousarray(unchunked).tobytes(), name
                else:
                    rtol, atol = tolerance(unchunked.dtype)
                    np.testing.assert_allclose(actual, unchunked.astype(np.float64),
                                               rtol=rtol, atol=atol, equal_nan=True,
                                               err_msg=name)
                seen += 1
    assert seen == len([c for c in CASES if c[0].function == function]) * len(DTYPES) * \
        len(PATTERN_NAMES)


_LARGE = """
import json
import numpy as np
import aclnn_py
from aclnn_py.engine import chunked as _chunked
n = 96 * 1024 * 1024 // 4
rng = np.random.default_rng(0)
grad, x, y = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
a, b, g = x.astype(np.float64), y.astype(np.float64), grad.astype(np.float64)
found, results = {}, {}
for reduction in ("none", "mean", "sum"):
    before = aclnn_py.emulator.stats()
    result = results[reduction] = aclnn_py.mse_loss_backward(grad, x, y, reduction)
    after = aclnn_py.emulator.stats()
    norm = 2.0 / n if reduction == "mean" else 2.0
    golden = (norm * (a - b) * g).astype(np.float32).astype(np.float64)
    close = bool(np.allclose(result, golden, rtol=1e-4, atol=1e-9))
    found["backward-" + reduction] = dict(
        close=close, chunks=_chunked.last_count,
        syncs=after["sync_calls"] - before["sync_calls"],
        h2d=after["h2d_bytes"] - before["h2d_bytes"], d2h=after["d2h_bytes"] - before["d2h_bytes"])
before = aclnn_py.emulator.stats()
repeat = aclnn_py.mse_loss_backward(grad, x, y, "none")
after = aclnn_py.emulator.stats()
info = aclnn_py.memory_info()
found["repeat"] = dict(
    same=bool(np.array_equal(repeat, results["none"])),
    chunks=_chunked.last_count, mallocs=after["malloc_calls"] - before["malloc_calls"],
    copies=after["memcpy_calls"] - before["memcpy_calls"],
    syncs=after["sync_calls"] - before["sync_calls"],
    pinned=info["pinned_used_bytes"] + info["pinned_cached_bytes"])
squares = (a - b) ** 2
for reduction, golden in (("mean", squares.mean()), ("sum", squares.sum())):
    before = aclnn_py.emulator.stats()
    result = aclnn_py.mse_loss(x, y, reduction)
    after = aclnn_py.emulator.stats()
    found["forward-" + reduction] = dict(
        close=bool(abs(float(result) - golden) <= 1e-4 * abs(golden)),
        dtype=str(result.dtype), shape=list(result.shape), chunks=_chunked.last_count,
        syncs=after["sync_calls"] - before["sync_calls"],
        h2d=after["h2d_bytes"] - before["h2d_bytes"])
part = 6 * 1024 * 1024  # 24 MiB each: the inputs fit, the result does not
x_device, y_device = aclnn_py.to_device(x[:part]), aclnn_py.to_device(y[:part])
try:
    aclnn_py.mse_loss_backward(1.0, x_device, y_device, "none")
except aclnn_py.OutOfMemoryError:
    found["device arrays"] = "OutOfMemoryError"
print(json.dumps(found))
"""


@pytest.mark.emulator_only
def test_three_96_mib_inputs_on_a_64_mib_device():
    found = run_json(_LARGE, {"ACLNN_EMU_DEVICE_MEMORY": "64M"}, timeout=600)
    size = 96 * 1024 * 1024
    for reduction in ("none", "mean", "sum"):
        entry = found["backward-" + reduction]
        assert entry["close"], entry
        assert entry["chunks"] >= 2 and entry["syncs"] <= entry["chunks"], entry
        assert entry["h2d"] == 3 * size and entry["d2h"] == size, entry
    # A repeat finds its buffers in the pool; every chunk's arrays (7 MiB each) travel
    # straight from and to the caller's memory, one copy each, no page-locked block.
    repeat = found["repeat"]
    assert repeat["same"] and repeat["mallocs"] == 0, repeat
    assert repeat["syncs"] <= repeat["chunks"], repeat
    assert repeat["copies"] == 4 * repeat["chunks"] and repeat["pinned"] < 1 << 20, repeat
    for reduction in ("mean", "sum"):
        entry = found["forward-" + reduction]
        assert entry["close"], entry
        assert entry["dtype"] == "float32" and entry["shape"] == [], entry
        assert entry["chunks"] >= 2 and entry["syncs"] <= entry["chunks"], entry
        assert entry["h2d"] == 2 * size, entry
    # Device-array calls never chunk: they run out of memory as before.
    assert found["device arrays"] == "OutOfMemoryError"


_SMALL_DEVICE = """
import json
import numpy as np
import aclnn_py
from aclnn_py.engine import chunked as _chunked
found = {}
for mib in (3, 5, 6, 7, 12):  # an add's device bytes: two inputs and the result
    n = mib * 1024 * 1024 // 12
    rng = np.random.default_rng(mib)
    x, y = rng.standard_normal((2, n // 64, 64), dtype=np.float32)
    _chunked.last_count = 0
    try:
        result = aclnn_py.add(x, y, alpha=2)
    except aclnn_py.OutOfMemoryError as error:
        found[mib] = dict(error=str(error))
        continue
    golden = (x + np.float32(2) * y)
    found[mib] = dict(chunks=_chunked.last_count, exact=bool(np.array_equal(result, golden)))
print(json.dumps(found))
"""


@pytest.mark.emulator_only
def test_every_call_larger_than_a_small_device_chunks_whatever_its_size():
    found = run_json(_SMALL_DEVICE, {"ACLNN_EMU_DEVICE_MEMORY": "4M"})
    assert found["3"] == dict(chunks=0, exact=True), found  # fits: one round trip
    for mib in ("5", "6", "7", "12"):
        assert found[mib].get("exact") and found[mib]["chunks"] >= 2, (mib, found[mib])


_LESS_FREE = """
import json
import numpy as np
import aclnn_py
from aclnn_py.engine import chunked as _chunked
rng = np.random.default_rng(5)
x, y = rng.standard_normal((2, 2048, 256), dtype=np.float32)  # 2 MiB each: 6 MiB a call
found = {}
_chunked.last_count = 0
first = aclnn_py.add(x, y, alpha=2)
found["first"] = _chunked.last_count
held = [aclnn_py.empty((256, 1024), np.float32) for _ in range(27)]  # 27 of the 32 MiB
second = aclnn_py.add(x, y, alpha=2)
found["second"] = _chunked.last_count
found["same"] = bool(np.array_equal(first, second))
print(json.dumps(found))
"""


@pytest.mark.emulator_only
def test_a_call_that_no_longer_fits_after_device_allocations_chunks():
    found = run_json(_LESS_FREE, {"ACLNN_EMU_DEVICE_MEMORY": "32M"})
    assert found["first"] == 0, found  # it fitted then
    assert found["second"] >= 2 and found["same"], found


_RANGES = """
import json
import numpy as np
import aclnn_py
from aclnn_py.engine import chunked as _chunked
rng = np.random.default_rng(8)
x, y = rng.standard_normal((2, 4096, 256), dtype=np.float32)  # 12 MiB a call, 6 per device
_chunked.last_count = 0
result = aclnn_py.add(x, y, alpha=2, devices="all")
print(json.dumps(dict(chunks=_chunked.last_count,
                      exact=bool(np.array_equal(result, x + np.float32(2) * y)))))
"""


@pytest.mark.emulator_only
def test_each_device_range_chunks_when_it_does_not_fit_its_device():
    found = run_json(_RANGES, {"ACLNN_EMU_DEVICE_COUNT": "2", "ACLNN_EMU_DEVICE_MEMORY": "4M"})
    assert found["exact"] and found["chunks"] >= 2, found


_NARROW_MEAN = """
import json
import numpy as np
import aclnn_py
from aclnn_py.engine import chunked as _chunked
found = {}
for name, size, devices, zero_stride in (("chunked", (2048, 512), None, False),
                                         ("devices", (6, 4), "all", False),
                                         ("chunked, x of zero stride", (2048, 512), None, True),
                                         ("devices, x of zero stride", (6, 4), "all", True)):
    x = np.full(size, 30000, np.float16)  # x - y overflows float16; the mean does not
    if zero_stride:  # one row seen in every row: each range's view of x spans its rows
        x = np.broadcast_to(x[:1], size)
    _chunked.last_count = 0
    got = aclnn_py.mse_loss_backward(1.0, x, -x.copy(), "mean", devices=devices)
    expected = np.float32(60000) * 2 / x.size
    found[name] = dict(chunks=_chunked.last_count, finite=bool(np.isfinite(got).all()),
                       close=bool(np.allclose(got.astype(np.float32), expected, rtol=2e-3)))
print(json.dumps(found))
"""


@pytest.mark.emulator_only
def test_a_float16_mean_gradient_whose_sum_overflows_is_right_in_chunks_and_on_devices():
    # The ranges' undivided values overflow float16 where the whole call's mean does not.
    found = run_json(_NARROW_MEAN, {"ACLNN_EMU_DEVICE_COUNT": "2",
                                    "ACLNN_EMU_DEVICE_MEMORY": "4M"})
    for name, result in found.items():
        assert result["finite"] and result["close"], (name, found)
        if name.startswith("chunked"):
            assert result["chunks"] >= 2, (name, found)


_WORKSPACE = """
import json
import numpy as np
import aclnn_py
from aclnn_py.engine import chunked as _chunked
rng = np.random.default_rng(3)
x = rng.standard_normal((2048, 512), dtype=np.float32)  # 4 MiB on an 8 MiB device
row = rng.standard_normal(512, dtype=np.float32)  # broadcast: the kernels take a workspace
found = {}
for name, got, expected in (
        ("l1_loss_backward", lambda: aclnn_py.l1_loss_backward(1.0, x, row, "none"),
         lambda: np.sign(x - row)),
        ("mse_loss", lambda: aclnn_py.mse_loss(x, row, "none"), lambda: (x - row) ** 2),
        # the arrays fit (a 0-d result), the workspace beside them does not
        ("mse_loss_mean", lambda: aclnn_py.mse_loss(x, row, "mean"),
         lambda: ((x - row) ** 2).mean())):
    _chunked.last_count = 0
    close = bool(np.allclose(got(), expected(), rtol=1e-6, atol=0))
    found[name] = dict(chunks=_chunked.last_count, close=close)
print(json.dumps(found))
"""


@pytest.mark.emulator_only
def test_a_chunked_call_whose_workspace_does_not_fit_beside_its_chunks_runs_in_smaller_ones():
    found = run_json(_WORKSPACE, {"ACLNN_EMU_DEVICE_MEMORY": "8M"})
    for name, result in found.items():
        assert result["close"] and result["chunks"] >= 2, (name, found)


def test_repeated_small_calls_do_not_read_the_free_memory(monkeypatch):
    from aclnn_py._c import lowlevel as _lowlevel

    x = np.ones((4, 4), np.float32)
    aclnn_py.mse_loss_backward(x, x, x, "none")  # the first call on a device may read it
    reads = []
    real = _lowlevel.get_mem_info

    def counted(attribute):
        reads.append(attribute)
        return real(attribute)

    monkeypatch.setattr(_lowlevel, "get_mem_info", counted)
    for _ in range(20):
        aclnn_py.mse_loss_backward(x, x, x, "none")
    assert reads == []


@pytest.mark.parametrize(("row", "reduction", "attributes"), CASES[:1], ids=CASE_IDS[:1])
def test_unchunked_results_are_unchanged(row, reduction, attributes):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(_call(row, [x, x, x * 0], reduction, attributes),
                          2 * x * x / (x.size if reduction == "mean" else 1))


def test_a_chunked_call_out_of_memory_at_every_size_halves_its_rows_and_stops_at_one(
        monkeypatch):
    """Each attempt takes half the rows of the one before, and at one row the error stands.
    Here all 64 rows fit the free memory read, so chunks cut only by the budget would try
    64 rows again and again."""
    from aclnn_py.engine import chunked as _chunked
    from aclnn_py.errors import OutOfMemoryError
    from aclnn_py.runtime.streams import current_stream

    device = current_stream().device
    monkeypatch.setattr(_chunked, "needed", lambda device_bytes, device: True)
    monkeypatch.setitem(_chunked.unchecked, device, 0)
    monkeypatch.setattr(_chunked, "free_bytes", lambda device: 1 << 40)
    set_bytes = []

    def out_of_memory(device, resident_bytes, host_bytes, set_size, count):
        set_bytes.append(set_size)
        raise OutOfMemoryError(207001, "aclrtMalloc", "injected")

    monkeypatch.setattr(_chunked, "_buffers", out_of_memory)
    x = np.ones((64, 33), np.float32)
    with pytest.raises(OutOfMemoryError, match="injected"):
        aclnn_py.mse_loss_backward(x, x, x, "none")
    # each set: grad, x, y and the result rows, at 512-byte aligned offsets
    rows = [64, 32, 16, 8, 4, 2, 1]
    assert set_bytes == [4 * (-(-r * 33 * 4 // 512) * 512) for r in rows], set_bytes
