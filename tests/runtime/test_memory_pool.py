"""The device memory pool: reuse after warm-up, OOM recovery, direct mode."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import run_python

import aclnn_py


@pytest.mark.emulator_only
def test_repeated_calls_allocate_nothing_new_after_warm_up():
    x = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    aclnn_py.mse_loss_backward(1.0, x, 0.0)
    aclnn_py.emulator.reset_counters()
    hits = aclnn_py.memory_info()["pool_hits"]
    for _ in range(10):
        aclnn_py.mse_loss_backward(1.0, x, 0.0)
    assert aclnn_py.emulator.stats()["malloc_calls"] == 0
    assert aclnn_py.memory_info()["pool_hits"] > hits
    assert aclnn_py.memory_info()["used_bytes"] == 0


def test_memory_info_reports_used_cached_and_device_totals():
    aclnn_py.empty_cache()
    info = aclnn_py.memory_info()
    assert info["cached_bytes"] == 0
    assert 0 < info["device_free_bytes"] <= info["device_total_bytes"]
    array = aclnn_py.to_device(np.ones(1000, np.float32))
    assert aclnn_py.memory_info()["used_bytes"] == info["used_bytes"] + 4096
    array.free()
    assert aclnn_py.memory_info()["cached_bytes"] == 4096
    assert aclnn_py.empty_cache() == 4096


@pytest.mark.slow
def test_out_of_memory_empties_the_cache_then_raises_with_the_numbers():
    done = run_python("""
        import gc, numpy as np, aclnn_py
        a = aclnn_py.to_device(np.ones(150_000, np.float32))   # 600 kB of 1 MB
        a.free()                                               # cached, not returned
        b = aclnn_py.to_device(np.ones(125_000, np.float32))   # 500 kB: needs the cache emptied
        print("recovered", aclnn_py.memory_info()["cached_bytes"])
        try:
            aclnn_py.to_device(np.ones(300_000, np.float32))
        except aclnn_py.OutOfMemoryError as error:
            print(error.status, isinstance(error, MemoryError))
            print(error.message.split(". CANN")[0])
    """, {"ACLNN_PY_BACKEND": "emulator", "ACLNN_EMU_DEVICE_MEMORY": "1M"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "recovered 0"
    assert lines[1] == "207001 True"
    assert lines[2].startswith("requested 1200000 bytes on device 0; ")
    assert "bytes free of 1048576" in lines[2]


@pytest.mark.slow
def test_pool_can_be_turned_off():
    done = run_python("""
        import numpy as np, aclnn_py
        for _ in range(3):
            aclnn_py.mse_loss_backward(1.0, np.ones(4, np.float32), 0.0)
        stats = aclnn_py.emulator.stats()
        info = aclnn_py.memory_info()
        print(stats["malloc_calls"], stats["live_allocations"], stats["live_host_allocations"],
              info["cached_bytes"], info["pinned_cached_bytes"])
    """, {"ACLNN_PY_BACKEND": "emulator", "ACLNN_PY_POOL": "0"})
    assert done.returncode == 0, done.stderr
    # one device block a call (the staged grad, x, y and the result) and one page-locked
    # block, none kept
    assert done.stdout.split() == ["3", "0", "0", "0", "0"]


def test_device_buffers_are_64_byte_aligned_as_async_copies_before_cann_8_5_require():
    from aclnn_py._c import lowlevel as ll

    arrays = [aclnn_py.to_device(np.ones(n, np.float32)) for n in (1, 3, 17, 1000, 4097)]
    arrays += [aclnn_py.empty((5, 7), np.float16), aclnn_py.empty((3,), np.float32)]
    try:
        assert all(ll.address(a.buffer.pointer) % 64 == 0 for a in arrays)
    finally:
        for array in arrays:
            array.free()


@pytest.mark.slow
@pytest.mark.emulator_only
def test_out_of_memory_recovery_gives_back_the_workspaces_of_cached_launches():
    # Calls whose executors keep workspaces (a broadcast row) leave device memory in use
    # with no array alive; an allocation that fits the device once they are gone succeeds,
    # as it does after empty_cache().
    done = run_python("""
        import numpy as np, aclnn_py
        x = np.ones((1024, 512), np.float32)  # 2 MiB an array, on a 16 MiB device
        row = np.ones(512, np.float32)
        for reduction in ("none", "sum", "mean"):
            aclnn_py.mse_loss(x, row, reduction)
        held = aclnn_py.memory_info()["used_bytes"]
        big = aclnn_py.empty((14 * 2**20 // 4,), np.float32)
        print(held, big.nbytes)
    """, {"ACLNN_PY_BACKEND": "emulator", "ACLNN_EMU_DEVICE_MEMORY": "16M"})
    assert done.returncode == 0, done.stderr
    held, allocated = (int(word) for word in done.stdout.split())
    assert held >= 4 * 2**20 and allocated == 14 * 2**20  # it was held, and came back


@pytest.mark.slow
@pytest.mark.emulator_only
def test_out_of_memory_recovery_on_one_device_leaves_what_other_devices_keep():
    # Each device keeps a numpy signature's staging pair and a cached launch's workspace
    # (a broadcast row); device 0 running out gives back its own only: device 1's pool is
    # not emptied, so its blocks would not help.
    done = run_python("""
        import json
        import numpy as np, aclnn_py
        from aclnn_py.engine import numpy_path
        x = np.linspace(-1, 1, 12, dtype=np.float32)
        for device in (0, 1):
            stream = aclnn_py.Stream(device)
            aclnn_py.mse_loss_backward(x, x, 0.0, "none", stream=stream)
            rows = aclnn_py.to_device(np.ones((64, 512), np.float32), device=device)
            row = aclnn_py.to_device(np.ones(512, np.float32), device=device)
            aclnn_py.mse_loss(rows, row, "none", stream=stream)
            stream.synchronize()
            del rows, row
        def kept(device):
            return sum(1 for layout in list(numpy_path._layouts.values())
                       if layout.device == device and layout.spare)
        before = [(kept(d), aclnn_py.memory_info(d)["used_bytes"]) for d in (0, 1)]
        aclnn_py.emulator.inject_fault("aclrtMalloc", 207001, nth=1)
        aclnn_py.empty(1 << 16, np.float32, device=0)
        after = [(kept(d), aclnn_py.memory_info(d)["used_bytes"]) for d in (0, 1)]
        print(json.dumps([before, after]))
    """, {"ACLNN_PY_BACKEND": "emulator", "ACLNN_EMU_DEVICE_COUNT": "2"})
    assert done.returncode == 0, done.stderr
    [(kept0, used0), (kept1, used1)], [(kept0_after, used0_after), (kept1_after, used1_after)] \
        = json.loads(done.stdout)
    assert kept0 == kept1 == 1 and used0 > 0 and used1 > 0
    assert kept0_after == 0 and used0_after < used0  # device 0 gave back its own
    assert (kept1_after, used1_after) == (kept1, used1)  # device 1 kept what it had
