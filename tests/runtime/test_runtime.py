"""Runtime state: threads, ownership, finalizers and teardown."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import run_python
from helpers import assert_8_5_libraries, run_interleaved

import aclnn_py
from aclnn_py.runtime import handles as _handles
from aclnn_py.runtime import memory as _memory


def run_in_threads(work, count: int = 4) -> None:
    """Run ``work(index)`` in ``count`` threads at once; re-raise the first failure."""
    errors: list[BaseException] = []

    def guarded(index: int) -> None:
        try:
            work(index)
        except BaseException as error:  # re-raised below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def test_threads_each_set_their_device_and_compute():
    results: dict[int, np.ndarray] = {}

    def work(index: int) -> None:
        x = np.full((64,), float(index), np.float32)
        for _ in range(20):
            results[index] = aclnn_py.mse_loss_backward(np.ones_like(x), x, np.zeros_like(x),
                                                        "sum")

    run_in_threads(work)
    assert len(results) == 4
    for index, result in results.items():
        np.testing.assert_array_equal(result, np.full(64, 2.0 * index, np.float32))


@pytest.mark.emulator_only
def test_dropped_buffers_are_given_back_by_their_finalizer():
    aclnn_py.empty_cache()
    before = aclnn_py.memory_info()
    buffer = _memory.DeviceBuffer(1000)
    assert aclnn_py.memory_info()["used_bytes"] == before["used_bytes"] + 1024  # rounded
    del buffer
    gc.collect()
    after = aclnn_py.memory_info()
    assert after["used_bytes"] == before["used_bytes"]
    assert after["cached_bytes"] == before["cached_bytes"] + 1024
    live = aclnn_py.emulator.stats()["live_allocations"]
    assert aclnn_py.empty_cache() == 1024
    assert aclnn_py.emulator.stats()["live_allocations"] == live - 1


def test_explicit_release_is_idempotent():
    with _memory.DeviceBuffer(64) as buffer:
        pass
    buffer.free()
    tensor = _handles.Handle("tensor", (2,), 0, (1,), 0, 2, aclnn_py._c.lowlevel.NULL)
    tensor.destroy()
    tensor.destroy()


@pytest.mark.slow
def test_exit_tears_down_in_order_and_late_finalizers_do_nothing():
    done = run_python("""
        import numpy as np, aclnn_py
        from aclnn_py.runtime import memory as _memory
        from aclnn_py.runtime import process as _runtime
        from aclnn_py.runtime import handles as _handles
        r = aclnn_py.mse_loss_backward(np.ones(3, np.float32), np.ones(3, np.float32),
                                       np.zeros(3, np.float32))
        kept = _memory.DeviceBuffer(256)   # still alive at exit
        _runtime.teardown()
        print(aclnn_py.emulator.stats()["live_allocations"])
        del kept                             # finalizer after teardown: a no-op
        _runtime.teardown()                  # twice is fine
        print("ok")
    """, {"ACLNN_PY_BACKEND": "emulator"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "ok"]
    assert done.stderr == ""


@pytest.mark.emulator_only
def test_runtime_info_describes_the_emulator():
    info = aclnn_py.runtime_info()
    assert info["backend"] == "emulator"
    assert info["root"] == aclnn_py.emulator.home()
    lib64 = Path(aclnn_py.emulator.home()) / "lib64"
    assert_8_5_libraries(info, lib64)  # libopapi.so only as what libopapi_nn.so links
    assert info["soc_name"] == "Ascend910B3"
    assert info["device_count"] == 1
    assert info["cann_version"] == "8.5.0"


def test_threads_with_their_own_streams_and_plans():
    results: dict[int, np.ndarray] = {}

    def work(index: int) -> None:
        with aclnn_py.Stream() as stream:
            x = aclnn_py.to_device(np.full(1000, float(index), np.float32))
            grad = aclnn_py.to_device(np.ones(1000, np.float32))
            target = aclnn_py.to_device(np.zeros(1000, np.float32))
            with aclnn_py.MseLossBackwardPlan(grad, x, target, "sum") as plan:
                for _ in range(25):
                    out = plan.run()
                results[index] = out.numpy()
            for array in (x, grad, target, out):
                array.free()
        stream.close()

    run_in_threads(work)
    for index in range(4):
        np.testing.assert_array_equal(results[index], np.full(1000, 2.0 * index, np.float32))


@pytest.mark.slow
def test_exit_with_queued_work_open_plans_and_live_arrays_is_clean():
    done = run_python("""
        import numpy as np, aclnn_py
        x = aclnn_py.to_device(np.ones(1000, np.float32))
        side = aclnn_py.Stream()
        pending = aclnn_py.mse_loss_backward(1.0, x, 0.0, stream=side)
        ones = [aclnn_py.to_device(np.ones(3, np.float32)) for _ in range(3)]
        plan = aclnn_py.MseLossBackwardPlan(*ones)
        plan.run()
        print(aclnn_py.emulator.stats()["pending_tasks"])
    """, {"ACLNN_PY_BACKEND": "emulator"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2"]
    assert done.stderr == ""


def test_live_streams_can_be_listed_while_another_thread_adds_one():
    """Streams made in one thread while another lists them (empty_cache, synchronize_device):
    the listing sees a consistent set and never raises "Set changed size during iteration"."""
    from aclnn_py.runtime.process import LiveObjects, _process

    assert isinstance(_process.streams, LiveObjects)

    class Item:
        pass

    live, kept, failures = LiveObjects(), [], []
    done = threading.Event()

    def add() -> None:
        for _ in range(100_000):
            item = Item()
            kept.append(item)
            live.add(item)
        done.set()

    def list_them() -> None:
        while not done.is_set():
            try:
                live.snapshot()
            except RuntimeError as error:
                failures.append(error)
                return

    run_interleaved(add, list_them)
    assert failures == []
    assert len(live.snapshot()) == len(kept)


FORKED_CHILDREN = '''
import json, multiprocessing, threading
import numpy as np
import aclnn_py

x = np.arange(4096, dtype=np.float32) / 4096


def call(queue):
    try:
        result = aclnn_py.mse_loss_backward(x[:4], x[:4], 0.0, "sum")
        queue.put(("computed", float(result[1])))
    except RuntimeError as error:
        queue.put(("refused", str(error)))


def children(method, count):
    context = multiprocessing.get_context(method)
    queue, found = context.Queue(), []
    for _ in range(count):
        child = context.Process(target=call, args=(queue,))
        child.start()
        child.join(60)
        if child.is_alive():
            child.kill()
            found.append(("hung", ""))
        else:
            found.append(queue.get(timeout=10))
    return found


def busy(stop):  # another thread in aclnn_py all along, its locks held at times
    while not stop.is_set():
        aclnn_py.mse_loss_backward(x, x, 0.0, "sum")
        aclnn_py.call("aclnnExp", x)


if __name__ == "__main__":
    before = children("fork", 1)  # aclnn_py has not started the runtime yet
    aclnn_py.mse_loss_backward(x, x, 0.0, "sum")
    stop = threading.Event()
    thread = threading.Thread(target=busy, args=(stop,))
    thread.start()
    after = children("fork", 8)
    spawned = children("spawn", 1)
    stop.set()
    thread.join()
    parent = float(aclnn_py.mse_loss_backward(x[:4], x[:4], 0.0, "sum")[1])
    print(json.dumps({"before": before, "after": after, "spawned": spawned, "parent": parent}))
'''


@pytest.mark.slow
def test_a_child_forked_after_the_runtime_started_refuses_clearly_and_never_hangs(tmp_path):
    """Forked before the first call, a child starts a runtime of its own and computes; forked
    after it, while another thread is inside aclnn_py, every child refuses its first call
    with the reason and the way out (spawn), none hangs on a lock the other thread held;
    spawned children and the parent go on computing."""
    script = tmp_path / "forked_children.py"  # a file: spawn imports the main module
    script.write_text(FORKED_CHILDREN)
    environment = {**os.environ, "ACLNN_PY_BACKEND": "emulator"}
    done = subprocess.run([sys.executable, str(script)], env=environment, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    expected = 2 * (1 / 4096) ** 2  # grad 2 (x - 0) at x[1], the gradient being x too
    assert report["before"] == [["computed", pytest.approx(expected)]]
    assert report["spawned"] == [["computed", pytest.approx(expected)]]
    assert report["parent"] == pytest.approx(expected)
    assert len(report["after"]) == 8
    for kind, message in report["after"]:
        assert kind == "refused", (kind, message)
        assert "it was forked from process" in message
        assert "multiprocessing.get_context('spawn')" in message
