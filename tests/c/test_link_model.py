"""The emulator's transfer model, ACLNN_EMU_LINK=<latency_us>:<GB/s> (read at aclInit).

Each case runs in a fresh interpreter, since the variable is read at aclInit. Times are
checked from below only: the model makes copies no faster than it says.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from conftest import run_python

pytestmark = [pytest.mark.emulator_only, pytest.mark.slow]

SETUP = """
    import json, time
    import numpy as np
    from aclnn_py._c import lowlevel as ll
    ll.init()
    ll.set_device(0)
    def elapsed(work):
        start = time.perf_counter()
        work()
        return time.perf_counter() - start
"""


def run(code: str, link: str | None) -> dict:
    env = {"ACLNN_PY_BACKEND": "emulator"}
    if link is not None:
        env["ACLNN_EMU_LINK"] = link
    done = run_python(textwrap.dedent(SETUP) + textwrap.dedent(code), env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("value", ["abc", "10", "10:", ":25", "10:0", "-1:25", "10:25:1", "1e3:25",
                                   "10:inf", " 10:25", "1.2.3:25"])
def test_a_malformed_value_fails_acl_init_with_a_message(value):
    done = run_python("""
        from aclnn_py._c import lowlevel as ll
        from aclnn_py.errors import AclError
        try:
            ll.init()
        except AclError as error:
            print(error.status, str(error))
        else:
            print("initialised")
    """, {"ACLNN_PY_BACKEND": "emulator", "ACLNN_EMU_LINK": value})
    assert done.returncode == 0, done.stderr
    status, _, message = done.stdout.partition(" ")
    assert status == "100000"
    assert f"ACLNN_EMU_LINK='{value}' is invalid" in message
    assert "<latency_us>:<GB/s>" in message


@pytest.mark.parametrize("value", ["", "0:1", "10:25", "2.5:0.5"])
def test_an_empty_or_well_formed_value_initialises(value):
    result = run("""
        host = np.arange(64, dtype=np.uint8)
        back = np.zeros_like(host)
        dev = ll.malloc(64)
        ll.memcpy(dev, 64, ll.host_pointer(host), 64, ll.MEMCPY_HOST_TO_DEVICE)
        ll.memcpy(ll.host_pointer(back, writable=True), 64, dev, 64, ll.MEMCPY_DEVICE_TO_HOST)
        print(json.dumps({"same": back.tolist() == host.tolist()}))
    """, value)
    assert result["same"]


def test_a_synchronous_copy_takes_the_latency_each_way():
    result = run("""
        host = np.ones(16, np.float32)
        dev = ll.malloc(64)
        h2d = elapsed(lambda: ll.memcpy(dev, 64, ll.host_pointer(host), 64,
                                        ll.MEMCPY_HOST_TO_DEVICE))
        d2h = elapsed(lambda: ll.memcpy(ll.host_pointer(host, writable=True), 64, dev, 64,
                                        ll.MEMCPY_DEVICE_TO_HOST))
        print(json.dumps({"h2d": h2d, "d2h": d2h}))
    """, "2000:1")
    assert result["h2d"] >= 2e-3
    assert result["d2h"] >= 2e-3


def test_bandwidth_adds_bytes_over_rate():
    # 0.001 GB/s = one byte per microsecond: 4000 bytes take at least 4 ms
    result = run("""
        host = np.zeros(4000, np.uint8)
        dev = ll.malloc(4000)
        print(json.dumps({"h2d": elapsed(lambda: ll.memcpy(dev, 4000, ll.host_pointer(host), 4000,
                                                           ll.MEMCPY_HOST_TO_DEVICE))}))
    """, "0:0.001")
    assert result["h2d"] >= 4e-3


def test_queued_copies_share_the_copy_engine_and_synchronisation_waits_for_them():
    result = run("""
        pinned = ll.malloc_host(4096)
        dev = ll.malloc(4096)
        stream = ll.create_stream()
        start, end = ll.create_event(), ll.create_event()
        def work():
            ll.record_event(start, stream)
            ll.memcpy_async(dev, 4096, pinned, 64, ll.MEMCPY_HOST_TO_DEVICE, stream)
            ll.memcpy_async(pinned, 4096, dev, 64, ll.MEMCPY_DEVICE_TO_HOST, stream)
            ll.record_event(end, stream)
            ll.synchronize_stream(stream)
        took = elapsed(work)
        event_ms = ll.event_elapsed_time(start, end)
        def through_event():
            ll.memcpy_async(dev, 4096, pinned, 64, ll.MEMCPY_HOST_TO_DEVICE, stream)
            ll.record_event(end, stream)
            ll.synchronize_event(end)
        event_wait = elapsed(through_event)
        def through_device():
            ll.memcpy_async(pinned, 4096, dev, 64, ll.MEMCPY_DEVICE_TO_HOST, stream)
            ll.synchronize_device()
        device_wait = elapsed(through_device)
        print(json.dumps({"took": took, "event_ms": event_ms, "event_wait": event_wait,
                          "device_wait": device_wait}))
    """, "2000:1")
    assert result["took"] >= 4e-3
    assert result["event_ms"] >= 4.0
    assert result["event_wait"] >= 2e-3
    assert result["device_wait"] >= 2e-3


def test_a_staged_numpy_call_pays_two_copies_an_unstaged_one_four():
    result = run("""
        import aclnn_py
        from aclnn_py.engine import numpy_path as _staging
        x = np.ones(4, np.float32)
        aclnn_py.mse_loss_backward(x, x, 0.0, "none")  # warm: pools, executors
        out = {}
        for enabled in (True, False):
            _staging.enabled = enabled
            aclnn_py.mse_loss_backward(x, x, 0.0, "none")
            before = aclnn_py.emulator.stats()["memcpy_calls"]
            took = elapsed(lambda: aclnn_py.mse_loss_backward(x, x, 0.0, "none"))
            out["staged" if enabled else "unstaged"] = (
                took, aclnn_py.emulator.stats()["memcpy_calls"] - before)
        print(json.dumps(out))
    """, "2000:1")
    staged, staged_copies = result["staged"]
    unstaged, unstaged_copies = result["unstaged"]
    assert (staged_copies, unstaged_copies) == (2, 4)
    assert staged >= 4e-3
    assert unstaged >= 8e-3
