"""One numpy call across several devices (``devices=``, ``aclnn_py/engine/devices.py``): every
operator and reduction against the one-device call, the cut along the leading axis, the
visible ids, chunking within each device, the errors, and the work each device did
(``aclnn_py.emulator.device_stats``). The emulator reads its device count at aclInit, so
the calls run in subprocesses."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from conftest import run_python
from helpers import import_paths

import aclnn_py
from aclnn_py.engine import devices as _devices

TESTS = import_paths()  # sys.path of the subprocesses

# Broadcast patterns by operator arity; the leading axis of the broadcast shape is the cut one.
SHAPES = {
    "same": lambda n: [(12, 5)] * n,
    "uneven": lambda n: [(7, 3, 2)] * n,
    "column": lambda n: [(11, 4)] * (n - 1) + [(11, 1)],
    "row_broadcast": lambda n: [(1, 6)] + [(9, 6)] * (n - 1),
    "lower_rank": lambda n: [(5, 4)] * (n - 1) + [(4,)],
    "all_broadcast": lambda n: [(1, 5), (8, 1), (3, 1, 1)][:n] if n == 3 else [(8, 1), (1, 5)],
    "short": lambda n: [(2, 9)] * n,
    "leading_one": lambda n: [(1, 10, 3)] * n,
    "one_row": lambda n: [(1, 7)] * n,
    "scalar": lambda n: [()] * n,
    "empty": lambda n: [(0, 3)] * n,
}

# Runs in the subprocess: every operator, reduction, dtype and pattern, on `ids` and alone.
_COMPARE = """
import json, sys
import numpy as np
sys.path[:0] = {tests!r}
import aclnn_py
from aclnn_py.ops.specs import SPECS
from test_devices import SHAPES
from test_operator_table import CASES, _call
from tolerances import DTYPES, tolerance

ids = {ids!r}
found = dict(compared=0, mismatches=[], idle=[], busy=[])
for row, reduction, attributes in CASES:
    spec = SPECS[row.function]
    for dtype in DTYPES:
        for pattern, shapes in SHAPES.items():
            rng = np.random.default_rng(7)
            inputs = [rng.uniform(-3, 3, size=s).astype(dtype)
                      for s in shapes(len(spec.inputs))]
            one = np.asarray(_call(row, inputs, reduction, attributes))
            before = [aclnn_py.emulator.device_stats(d)["kernels_executed"] for d in ids]
            several = _call(row, inputs, reduction, attributes, devices={devices!r})
            after = [aclnn_py.emulator.device_stats(d)["kernels_executed"] for d in ids]
            name = f"{{row.function}}-{{reduction}}-{{attributes}}-{{dtype.name}}-{{pattern}}"
            if type(several) is not np.ndarray or several.shape != one.shape \\
                    or several.dtype != one.dtype:
                found["mismatches"].append([name, "kind"])
                continue
            if reduction in (None, "none"):
                same = several.tobytes() == one.tobytes()
            else:
                rtol, atol = tolerance(one.dtype)
                same = bool(np.allclose(several.astype(np.float64), one.astype(np.float64),
                                        rtol=rtol, atol=atol, equal_nan=True))
            if not same:
                found["mismatches"].append([name, one.tolist(), several.tolist()])
            ran = [b - a for a, b in zip(before, after)]
            broadcast = np.broadcast_shapes(*(a.shape for a in inputs))
            while len(broadcast) > 1 and broadcast[0] == 1:
                broadcast = broadcast[1:]
            rows = broadcast[0] if broadcast and 0 not in broadcast else 1
            used = min(len(ids), rows)
            if any(k == 0 for k in ran[:used]) and 0 not in broadcast:
                found["idle"].append([name, ran])
            if any(k for k in ran[used:]):
                found["busy"].append([name, ran])
            found["compared"] += 1
print(json.dumps(found))
"""


def compare(count: int, devices, ids: list[int], env: dict[str, str] | None = None) -> dict:
    done = run_python(_COMPARE.format(tests=TESTS, ids=ids, devices=devices),
                      {"ACLNN_EMU_DEVICE_COUNT": str(count), **(env or {})}, timeout=600)
    assert done.returncode == 0, done.stderr
    found: dict = json.loads(done.stdout.strip().splitlines()[-1])
    return found


@pytest.mark.slow
@pytest.mark.emulator_only
@pytest.mark.parametrize(("count", "devices", "ids"), [
    (2, [0, 1], [0, 1]),
    (3, "all", [0, 1, 2]),
    (3, [2, 0], [2, 0]),
    (2, [1], [1]),
], ids=["two", "three-all", "three-two-reordered", "one-device"])
def test_every_operator_and_reduction_matches_the_one_device_call(count, devices, ids):
    from test_operator_table import CASES
    from tolerances import DTYPES

    found = compare(count, devices, ids)
    assert found["compared"] == len(CASES) * len(DTYPES) * len(SHAPES)
    assert found["mismatches"] == []
    assert found["idle"] == []  # every device with rows to compute ran kernels
    assert found["busy"] == []  # and the ones without rows ran none


@pytest.mark.slow
@pytest.mark.emulator_only
def test_each_device_streams_its_part_in_chunks():
    found = compare(2, "all", [0, 1], {"ACLNN_PY_CHUNK_BYTES": "4096"})
    assert found["mismatches"] == [] and found["idle"] == [] and found["busy"] == []
    code = """
import json
import numpy as np
import aclnn_py
from aclnn_py.engine import chunked as _chunked
rng = np.random.default_rng(3)
grad, x, y = (rng.standard_normal((64, 40), dtype=np.float32) for _ in range(3))
found = {}
for reduction in ("none", "mean", "sum"):
    one = aclnn_py.mse_loss_backward(grad, x, y, reduction)
    before = [aclnn_py.emulator.device_stats(d) for d in (0, 1)]
    _chunked.last_count = 0
    several = aclnn_py.mse_loss_backward(grad, x, y, reduction, devices=[0, 1])
    after = [aclnn_py.emulator.device_stats(d) for d in (0, 1)]
    found[reduction] = dict(
        chunks=_chunked.last_count,
        kernels=[b["kernels_executed"] - a["kernels_executed"] for a, b in zip(before, after)],
        h2d=[b["h2d_bytes"] - a["h2d_bytes"] for a, b in zip(before, after)],
        same=several.tobytes() == one.tobytes(),
        close=bool(np.allclose(several, one, rtol=1e-6, atol=1e-12)))
print(json.dumps(found))
"""
    done = run_python(code, {"ACLNN_EMU_DEVICE_COUNT": "2", "ACLNN_PY_CHUNK_BYTES": "4096"})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    half = 3 * 32 * 40 * 4  # each device's rows of the three inputs, each element once
    for reduction, entry in found.items():
        assert entry["chunks"] >= 2, entry  # a device's part did not fit: it chunked
        assert all(k >= 2 for k in entry["kernels"]), entry
        assert entry["h2d"] == [half, half], entry
        assert entry["close"], entry
        if reduction != "mean":
            assert entry["same"], entry


@pytest.mark.slow
@pytest.mark.emulator_only
def test_visible_devices_are_the_ids_devices_names():
    code = """
import json
import numpy as np
import aclnn_py
x = np.arange(40, dtype=np.float32).reshape(8, 5)
found = {"count": aclnn_py.runtime_info()["device_count"]}
several = aclnn_py.add(x, 1.0, devices="all")
found["same"] = several.tobytes() == aclnn_py.add(x, 1.0).tobytes()
found["kernels"] = [aclnn_py.emulator.device_stats(d)["kernels_executed"] for d in (0, 1)]
try:
    aclnn_py.add(x, 1.0, devices=[0, 2])
except ValueError as error:
    found["error"] = str(error)
print(json.dumps(found))
"""
    done = run_python(code, {"ACLNN_EMU_DEVICE_COUNT": "3", "ASCEND_RT_VISIBLE_DEVICES": "1,2"})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["count"] == 2 and found["same"]
    assert found["kernels"] == [2, 1]  # the one-device call, then one part each
    assert "device 2 is not visible" in found["error"]
    assert "ASCEND_RT_VISIBLE_DEVICES='1,2'" in found["error"]


_ERRORS = """
import json
import numpy as np
import aclnn_py
x = np.ones((6, 4), np.float32)
aclnn_py.empty_cache()
found = {}
before = aclnn_py.emulator.stats()
cases = {
    "empty": dict(devices=[]), "twice": dict(devices=[1, 1]), "invisible": dict(devices=[0, 2]),
    "negative": dict(devices=[-1]), "word": dict(devices="each"), "number": dict(devices=1),
    "set": dict(devices={0, 1}), "bool": dict(devices=[True]), "float": dict(devices=[0.0]),
    "stream": dict(devices=[0, 1], stream=aclnn_py.Stream(1)),
    "device out": dict(devices=[0, 1], out=aclnn_py.empty((6, 4), np.float32)),
    "bad out": dict(devices=[0, 1], out=np.empty((6, 5), np.float32)),
    "bad shapes": dict(devices=[0, 1], y=np.ones((5, 4), np.float32)),
    "bad reduction": dict(devices=[0, 1], reduction="average"),
}
on_device = aclnn_py.to_device(x)
aclnn_py.synchronize()
before = aclnn_py.emulator.stats()
for name, arguments in cases.items():
    y = arguments.pop("y", x)
    reduction = arguments.pop("reduction", "none")
    try:
        aclnn_py.mse_loss_backward(x, x, y, reduction, **arguments)
    except (TypeError, ValueError) as error:
        found[name] = [type(error).__name__, str(error)]
try:
    aclnn_py.mse_loss_backward(1.0, on_device, x, "none", devices=[0, 1])
except TypeError as error:
    found["device input"] = [type(error).__name__, str(error)]
after = aclnn_py.emulator.stats()
found["work"] = [after[k] - before[k] for k in ("malloc_calls", "h2d_bytes", "kernel_launches")]
print(json.dumps(found))
"""


@pytest.mark.slow
@pytest.mark.emulator_only
def test_refused_arguments_name_devices_and_do_no_device_work():
    done = run_python(_ERRORS, {"ACLNN_EMU_DEVICE_COUNT": "2"})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found.pop("work") == [0, 0, 0]
    kinds = {"empty": "ValueError", "twice": "ValueError", "invisible": "ValueError",
             "negative": "ValueError", "word": "ValueError", "number": "TypeError",
             "set": "TypeError", "bool": "TypeError", "float": "TypeError",
             "stream": "ValueError", "device out": "TypeError", "bad out": "ValueError",
             "bad shapes": "ValueError", "bad reduction": "ValueError",
             "device input": "TypeError"}
    assert {name: kind for name, (kind, _) in found.items()} == kinds
    for name in ("empty", "twice", "invisible", "negative", "word", "number", "set", "bool",
                 "float", "stream", "device out", "device input"):
        assert "devices=" in found[name][1], found[name]
    assert "device 2 is not visible" in found["invisible"][1]
    assert "named twice" in found["twice"][1]
    assert "DeviceArray" in found["device input"][1]


_FAILURES = """
import json, sys, threading
import numpy as np
import aclnn_py
sys.path[:0] = {tests!r}
from conftest import live_resources
api = "aclnnMseLossBackwardGetWorkspaceSize"
found = {{}}
for failing in (1, 2):
    x = np.ones((4 + 2 * failing, 4), np.float32)  # a new signature: phase 1 on each device
    for nth in range(1, failing + 1):
        aclnn_py.emulator.inject_fault(api, 561103, nth=nth)
    try:
        aclnn_py.mse_loss_backward(x, x, x * 0, "none", devices=[0, 1])
    except aclnn_py.AclError as error:
        found[failing] = dict(status=error.status,
                              notes=[n for n in getattr(error, "__notes__", [])])
    aclnn_py.emulator.clear_faults()
    found[f"threads {{failing}}"] = threading.active_count()
result = aclnn_py.mse_loss_backward(x, x, x * 0, "none", devices=[0, 1])
found["after"] = result.tolist() == (2 * x * x).tolist()
found["live"] = live_resources()
print(json.dumps(found))
"""


@pytest.mark.slow
@pytest.mark.emulator_only
def test_a_failing_device_raises_once_every_device_is_done():
    done = run_python(_FAILURES.format(tests=TESTS), {"ACLNN_EMU_DEVICE_COUNT": "2"})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["1"]["status"] == found["2"]["status"] == 561103
    assert found["threads 1"] == found["threads 2"] == 1  # every device thread ended
    if hasattr(BaseException, "add_note"):
        assert found["1"]["notes"] == []
        assert len(found["2"]["notes"]) == 1 and "failed too" in found["2"]["notes"][0]
    assert found["after"]  # the devices work on
    assert set(found["live"].values()) == {0}


def test_every_device_thread_ends_before_an_error_is_raised():
    finished = threading.Event()
    started = threading.Event()

    def fails(stream):
        started.wait()
        raise KeyboardInterrupt

    def slow(stream):
        started.set()
        for _ in range(50):  # still at work when the other thread has failed
            time.sleep(0.002)
        finished.set()

    with pytest.raises(KeyboardInterrupt):
        _devices._run([(0, None, fails), (0, None, slow)])
    assert finished.is_set()


def test_an_interrupt_of_the_caller_waits_for_the_device_threads(monkeypatch):
    # Ctrl-C while the caller waits (the first join raises, as an interrupt there does):
    # the threads still use the arrays, so it is raised only once they have ended.
    finished = threading.Event()
    waiting = threading.Event()

    def slow(stream):
        waiting.wait(5)
        time.sleep(0.05)
        finished.set()

    join = threading.Thread.join
    joins = []

    def interrupted_join(self, timeout=None):
        joins.append(self.name)
        if len(joins) == 1:
            waiting.set()
            raise KeyboardInterrupt
        return join(self, timeout)

    monkeypatch.setattr(threading.Thread, "join", interrupted_join)
    with pytest.raises(KeyboardInterrupt):
        _devices._run([(0, None, slow)])
    assert finished.is_set() and len(joins) == 2


def test_one_device_is_the_plain_call():
    x = np.linspace(-2, 2, 30, dtype=np.float32).reshape(6, 5)
    y = np.float32(0.25) * x[::-1]
    for reduction in ("none", "mean", "sum"):
        one = aclnn_py.mse_loss_backward(x, x, y, reduction)
        assert aclnn_py.mse_loss_backward(x, x, y, reduction, devices=[0]).tobytes() == \
            one.tobytes()
        if aclnn_py.runtime_info()["device_count"] == 1:
            assert aclnn_py.mse_loss_backward(x, x, y, reduction, devices="all").tobytes() == \
                one.tobytes()


def test_out_is_filled_across_devices():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = np.full((4, 6), np.nan, np.float32)
    assert aclnn_py.add(x, x, alpha=2, out=out, devices="all") is out
    assert np.array_equal(out, 3 * x)


def test_the_with_stream_of_a_device_is_the_one_used():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    with aclnn_py.Stream(0) as stream:
        assert np.array_equal(aclnn_py.l1_loss(x, 0.0, "none", devices=[0]), x)
        stream.close()
        with pytest.raises(ValueError, match="closed"):
            aclnn_py.l1_loss(x, 0.0, "none", devices=[0])


@pytest.mark.emulator_only
def test_device_stats_counts_one_device_and_refuses_others():
    x = np.ones((4, 4), np.float32)
    before = aclnn_py.emulator.device_stats(0)
    aclnn_py.add(x, x)
    after = aclnn_py.emulator.device_stats(0)
    assert after["kernels_executed"] == before["kernels_executed"] + 1
    assert after["h2d_bytes"] > before["h2d_bytes"] and after["d2h_bytes"] > before["d2h_bytes"]
    count = aclnn_py.runtime_info()["device_count"]
    with pytest.raises(ValueError, match="not a visible device"):
        aclnn_py.emulator.device_stats(count)
    with pytest.raises(TypeError, match="int"):
        aclnn_py.emulator.device_stats(True)
