"""An ``out=`` that shares memory with an input gives the unchunked one-device result on
every numpy path: plain, chunked (by ``ACLNN_PY_CHUNK_BYTES`` and by a small device) and
``devices=``. Exact aliasing, shifted views, reversed and strided views. The emulator
reads its memory size and device count at start, so the calls run in subprocesses."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import numpy as np
import pytest
from conftest import run_python
from helpers import import_paths
from tolerances import tolerance

import aclnn_py

pytestmark = pytest.mark.slow

TESTS = import_paths()  # sys.path of the subprocesses

SMALL = (64, 33)  # chunks of a few rows under ACLNN_PY_CHUNK_BYTES=4096
LARGE = (1024, 1024)  # 4 MiB a float32 array: an add needs 12 MiB of device memory


def _random(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-3, 3, size=shape).astype(np.float32)


def overlap_case(name: str, shape: tuple[int, int]) -> tuple[str, list[np.ndarray], dict[str, Any],
                                                              np.ndarray]:
    """(function, inputs, attributes, out) of the case ``name``: ``out`` shares memory
    with at least one input. The same arrays in every process (a fixed seed)."""
    rows, cols = shape
    rng = np.random.default_rng(sum(map(ord, name)))
    half = rows // 2
    if name == "out_is_x":
        x, y = _random(rng, shape), _random(rng, shape)
        return "add", [x, y], {"alpha": 2}, x
    if name == "out_is_x_is_y":
        x = _random(rng, shape)
        return "add", [x, x], {"alpha": 2}, x
    if name == "out_ahead_of_x":  # out starts half way down x
        buffer = _random(rng, (rows + half, cols))
        return "add", [buffer[:rows], _random(rng, shape)], {"alpha": 2}, buffer[half:]
    if name == "out_behind_x":
        buffer = _random(rng, (rows + half, cols))
        return "add", [buffer[half:], _random(rng, shape)], {"alpha": 2}, buffer[:rows]
    if name == "y_reversed_x":  # out is x; y is x upside down
        x = _random(rng, shape)
        return "add", [x, x[::-1]], {"alpha": 2}, x
    if name == "x_every_other_row":  # out is the second half of the rows x strides over
        buffer = _random(rng, (2 * rows, cols))
        return "add", [buffer[::2], _random(rng, shape)], {"alpha": 2}, buffer[rows:]
    if name == "x_every_other_column":
        buffer = _random(rng, (rows, 2 * cols))
        out = buffer.reshape(-1)[rows * cols // 2:][:rows * cols].reshape(shape)
        return "add", [buffer[:, ::2], _random(rng, shape)], {"alpha": 2}, out
    if name == "y_reversed_column":  # a column of out, upside down, broadcast along rows
        out = _random(rng, shape)
        return "add", [_random(rng, shape), out[::-1, :1]], {"alpha": 2}, out
    if name == "mean_out_ahead_of_grad":  # a backward's mean: its rows are scaled on the host
        buffer = _random(rng, (rows + half, cols))
        inputs = [buffer[:rows], _random(rng, shape), _random(rng, shape)]
        return "mse_loss_backward", inputs, {"reduction": "mean"}, buffer[half:]
    raise KeyError(name)


CASES = ["out_is_x", "out_is_x_is_y", "out_ahead_of_x", "out_behind_x", "y_reversed_x",
         "x_every_other_row", "x_every_other_column", "y_reversed_column",
         "mean_out_ahead_of_grad"]


def numpy_reference(function: str, inputs: list[np.ndarray]) -> np.ndarray:
    a = [array.astype(np.float64) for array in inputs]
    if function == "add":
        return a[0] + 2 * a[1]
    grad, x, y = a
    return 2 * (x - y) * grad / x.size


# Runs in the subprocess: every case, twice (validated, then the repeat's fast path; the
# devices= cases three times), the results saved.
_RUN = """
import json, sys
import numpy as np
sys.path[:0] = {tests!r}
import aclnn_py
from aclnn_py.engine import chunked as _chunked
from test_overlap import CASES, overlap_case

results, chunks = {{}}, {{}}
for name in CASES:
    for repeat in range({repeats}):
        function, inputs, attributes, out = overlap_case(name, {shape!r})
        _chunked.last_count = 0
        returned = getattr(aclnn_py, function)(*inputs, **attributes, out=out,
                                               devices={devices!r})
        assert returned is out, name
        results[f"{{name}}-{{repeat}}"] = out.copy()
        chunks[f"{{name}}-{{repeat}}"] = _chunked.last_count
np.savez({path!r}, **results)
print(json.dumps(chunks))
"""

PATHS = {
    "plain": ({}, SMALL, None),
    "chunked": ({"ACLNN_PY_CHUNK_BYTES": "4096"}, SMALL, None),
    "small_device": ({"ACLNN_EMU_DEVICE_MEMORY": "8M"}, LARGE, None),
    "devices": ({"ACLNN_EMU_DEVICE_COUNT": "3"}, SMALL, "all"),
    "devices_chunked": ({"ACLNN_EMU_DEVICE_COUNT": "2", "ACLNN_PY_CHUNK_BYTES": "4096"},
                        SMALL, "all"),
    "devices_small_devices": ({"ACLNN_EMU_DEVICE_COUNT": "2", "ACLNN_EMU_DEVICE_MEMORY": "8M"},
                              LARGE, "all"),
}


@pytest.mark.emulator_only
@pytest.mark.parametrize("path", list(PATHS))
def test_out_sharing_memory_with_an_input_gives_the_unchunked_result(path):
    env, shape, devices = PATHS[path]
    repeats = 3 if devices else 2
    with tempfile.TemporaryDirectory() as folder:
        saved = os.path.join(folder, "results.npz")
        done = run_python(_RUN.format(tests=TESTS, repeats=repeats, shape=shape,
                                      devices=devices, path=saved), env, timeout=600)
        assert done.returncode == 0, done.stderr
        chunks = json.loads(done.stdout.strip().splitlines()[-1])
        results = dict(np.load(saved))
    wrong, off = {}, {}
    for name in CASES:
        function, inputs, attributes, _ = overlap_case(name, shape)
        copies = [np.array(array) for array in inputs]  # share nothing
        unchunked = getattr(aclnn_py, function)(*copies, **attributes)  # one device, whole
        golden = numpy_reference(function, copies)
        for repeat in range(repeats):
            key = f"{name}-{repeat}"
            if path in ("chunked", "small_device"):
                assert chunks[key] >= 2, (key, chunks[key])  # the call did chunk
            elif path == "plain":
                assert chunks[key] == 0, (key, chunks[key])
            found = results[key]
            if attributes.get("reduction") == "mean" and path != "plain":
                # Chunks and ranges are scaled on the host: within float32 roundings.
                rtol, atol = tolerance(np.dtype(np.float32))
                bad = ~np.isclose(found, unchunked, rtol=rtol, atol=atol)
            else:  # bit for bit
                bad = found.view(np.uint32) != unchunked.view(np.uint32)
            if bad.any():
                wrong[key] = int(bad.sum())
            if not np.allclose(found, golden, rtol=1e-5, atol=1e-6):
                off[key] = int((~np.isclose(found, golden, rtol=1e-5, atol=1e-6)).sum())
    assert not wrong, f"elements unlike the unchunked one-device result: {wrong}"
    assert not off, f"elements unlike numpy: {off}"
