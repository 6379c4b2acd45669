"""Reliability: no silent corruption and no hang under dropped objects, failed calls,
garbage collection, interrupts, threads and faults. One test (or more) per defect class."""

from __future__ import annotations

import copy
import gc
import pickle
import sys
import threading
import weakref

import numpy as np
import pytest
from conftest import live_resources, run_python
from helpers import in_thread, up

import aclnn_py
from aclnn_py import AclError
from aclnn_py.runtime import streams as _streams

EMULATOR = {"ACLNN_PY_BACKEND": "emulator"}


# ---- 1. a plan dropped without close() -------------------------------------------------


def test_a_dropped_plan_keeps_everything_its_queued_run_uses():
    n = 262144
    grad, target = up(1.0, (512, 512)), up(0.0, (512, 512))
    # A transposed x: the operator stages a contiguous copy of it in its workspace.
    x = aclnn_py.to_device(np.full((512, 512), 3.0, np.float32).T)
    with aclnn_py.MseLossBackwardPlan(grad, x, target, "none") as probe:
        probe.run()  # phase 1 has run by now on every release (8.0.RC2: at the first run)
        workspace = probe.workspace_size
    assert workspace >= n * 4

    def run_and_drop() -> aclnn_py.DeviceArray:
        plan = aclnn_py.MseLossBackwardPlan(grad, x, target, "none")
        return plan.run()  # queued, not waited for; the plan goes out of scope

    out = run_and_drop()
    gc.collect()
    # Arrays the size of the workspace: one handed the workspace early would be overwritten.
    fresh = [aclnn_py.to_device(np.full(workspace // 4, 5.0, np.float32)) for _ in range(3)]
    np.testing.assert_array_equal(out.numpy(), np.full((512, 512), 6.0, np.float32))
    for array in fresh:
        np.testing.assert_array_equal(array.numpy(), np.full(array.shape, 5.0, np.float32))


@pytest.mark.emulator_only
def test_a_dropped_plan_is_released_once_its_work_is_done():
    before = live_resources()
    arrays = [up(1.0), up(2.0), up(0.0)]

    def run_and_drop(grad, x, target) -> None:
        aclnn_py.MseLossBackwardPlan(grad, x, target, "sum").run()

    run_and_drop(*arrays)
    gc.collect()
    assert aclnn_py.emulator.stats()["live_executors"] == before["live_executors"] + 1
    aclnn_py.synchronize()
    gc.collect()
    assert aclnn_py.emulator.stats()["live_executors"] == before["live_executors"]
    del arrays
    assert live_resources() == before


# ---- 2. a plan.run() refused part-way -------------------------------------------------


def test_a_refused_run_leaves_the_plan_exactly_as_it_was():
    grad, x, target = up(1.0), up(3.0), up(0.0)
    plan = aclnn_py.MseLossBackwardPlan(grad, x, target, "none")
    plan.run().synchronize()
    other_grad = up(-7.0)
    wrong_x = up(3.0, (5,))
    with pytest.raises(ValueError, match="x must match the planned array"):
        plan.run(grad=other_grad, x=wrong_x)
    other_grad.free()
    reused = [up(-7.0) for _ in range(4)]  # one of them takes other_grad's block
    np.testing.assert_array_equal(plan.run().numpy(), np.full(4096, 6.0, np.float32))
    plan.close()
    del reused


def test_a_freed_array_refused_by_run_rebinds_nothing():
    grad, x, target = up(1.0), up(3.0), up(0.0)
    with aclnn_py.MseLossBackwardPlan(grad, x, target, "none") as plan:
        other_grad, gone = up(-7.0), up(9.0)
        gone.free()
        with pytest.raises(ValueError, match="y is a DeviceArray that was freed"):
            plan.run(grad=other_grad, y=gone)
        other_grad.free()
        reused = [up(-7.0) for _ in range(4)]
        np.testing.assert_array_equal(plan.run().numpy(), np.full(4096, 6.0, np.float32))
        del reused


# ---- 3. garbage collection inside the pool -----------------------------------------


@pytest.mark.slow
def test_releases_made_during_garbage_collection_never_deadlock():
    """A collection can start at any allocation, inside the library's own bookkeeping too;
    the finalisers it runs give blocks back (played here by a gc callback freeing arrays)."""
    done = run_python("""
        import gc, random, numpy as np, aclnn_py
        victims = []
        chance = random.Random(3)
        def give_back_during_collection(phase, info):
            if phase == "start" and victims and chance.random() < 0.1:
                victims.pop(0).free()
        x = aclnn_py.to_device(np.ones(8, np.float32))
        gc.callbacks.append(give_back_during_collection)
        gc.set_threshold(1, 1, 1)  # a collection at almost every allocation
        for index in range(3000):
            size = 1 + index % 300 * 128  # many block sizes
            victims.extend(aclnn_py.to_device(np.ones(8, np.float32)) for _ in range(8))
            result = aclnn_py.mse_loss_backward(x, x, 0.0, "none")
            aclnn_py.empty((size,), np.float32)
        gc.callbacks.clear()
        del victims, result
        aclnn_py.synchronize()
        gc.collect()
        kept = aclnn_py.memory_info()["used_bytes"]
        aclnn_py.empty_cache()
        print("done", kept, aclnn_py.memory_info()["used_bytes"])
    """, EMULATOR, timeout=120)
    assert done.returncode == 0, done.stderr
    # x and the device constant kept for the number 0.0; once the caches are emptied, x alone
    assert done.stdout.split() == ["done", "1024", "512"]
    assert done.stderr == ""


# ---- 4. interrupts ---------------------------------------------------------------------


@pytest.mark.slow
def test_interrupts_at_random_moments_neither_hang_nor_lose_anything():
    """SIGALRM raising KeyboardInterrupt every few hundred microseconds during mixed calls,
    Python kernels included (a slow one, so that many interrupts land inside it)."""
    done = run_python("""
        import gc, random, signal, numpy as np, aclnn_py
        armed = False
        def interrupt(signum, frame):
            if armed:  # only inside the calls: the loop's own bookkeeping stays exact
                raise KeyboardInterrupt
        signal.signal(signal.SIGALRM, interrupt)
        @aclnn_py.emulator.kernel("aclnnNdtri", dtypes=["float32"])
        def slow_copy(self, out):
            for _ in range(100_000):  # a few milliseconds
                pass
            out[...] = self
        rng = random.Random(7)
        aclnn_py.runtime_info()
        host = np.arange(64, dtype=np.float32)
        aclnn_py.call("aclnnAbs", aclnn_py.call("aclnnNdtri", host))  # call()'s lazy imports
        aclnn_py.empty_cache()
        base = aclnn_py.emulator.stats()
        interrupts = in_kernels = completed = wrong = 0
        zero = aclnn_py.to_device(np.zeros(64, np.float32))
        y = None
        for step in range(6000):
            kind = step % 6
            delay = rng.uniform(20e-6, 3e-3 if kind >= 4 else 400e-6)
            try:
                armed = True
                signal.setitimer(signal.ITIMER_REAL, delay)
                if kind == 4:
                    result = aclnn_py.call("aclnnNdtri", host)
                    expected = host
                elif kind == 5:
                    x = aclnn_py.to_device(host)
                    y = aclnn_py.call("aclnnNdtri", x)
                    result = aclnn_py.call("aclnnAbs", y).numpy()
                    expected = host
                elif kind == 0:
                    result = aclnn_py.mse_loss_backward(1.0, host, 0.0, "none")
                    expected = host * 2
                elif kind == 1:
                    x = aclnn_py.to_device(host)
                    result = aclnn_py.mse_loss_backward(x, x, 0.0, "sum").numpy()
                    expected = host * host * 2
                elif kind == 2:
                    x = aclnn_py.to_device(host)
                    with aclnn_py.MseLossPlan(x, zero, "none") as plan:
                        result = plan.run().numpy()
                    expected = host * host
                else:
                    aclnn_py.empty_cache()
                    gc.collect()
                    result = expected = None
                armed = False
                completed += 1
                if result is not None and not np.array_equal(result, expected):
                    wrong += 1
            except KeyboardInterrupt as error:
                armed = False
                interrupts += 1
                in_kernels += "inside the kernel" in str(error)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        del x, y, zero, result, plan
        aclnn_py.synchronize()
        gc.collect()
        aclnn_py.empty_cache()
        final = aclnn_py.emulator.stats()
        keys = ("live_device_bytes", "live_tensors", "live_executors", "pending_tasks")
        print(interrupts, in_kernels, completed, wrong, *(final[k] - base[k] for k in keys))
    """, EMULATOR, timeout=240)
    assert done.returncode == 0, done.stderr
    interrupts, in_kernels, completed, wrong, *leaks = map(int, done.stdout.split())
    assert interrupts > 100 and completed > 100 and in_kernels > 10
    assert wrong == 0
    assert leaks == [0, 0, 0, 0]


# ---- 5. a stream closed by one thread while another waits on it ----------------------


def test_waiting_on_another_threads_stream_is_safe_against_its_close(monkeypatch):
    side = aclnn_py.Stream()
    x = up(2.0)
    result = aclnn_py.mse_loss_backward(x, x, 0.0, stream=side)
    asked, closed = threading.Event(), threading.Event()
    waiter = threading.get_ident()
    original = _streams.activate

    def activate_then_let_the_other_thread_close(device=None):
        if threading.get_ident() == waiter and not asked.is_set():
            asked.set()              # the other thread closes the stream right now...
            closed.wait(0.5)         # ...unless the stream's lock keeps it waiting
        return original(device)

    def close_when_asked() -> None:
        asked.wait(5)
        side.close()
        closed.set()

    fast_wait = side._synchronizing_fast  # the wait without the stream's lock

    def fast_wait_after_the_other_thread_closes():
        activate_then_let_the_other_thread_close()
        return fast_wait()  # declines once the stream is closing

    closer = threading.Thread(target=close_when_asked)
    closer.start()
    monkeypatch.setattr(_streams, "activate", activate_then_let_the_other_thread_close)
    monkeypatch.setattr(side, "_synchronizing_fast", fast_wait_after_the_other_thread_closes)
    try:
        value = result.numpy()       # waits on `side`, the stream that produced it
    finally:
        monkeypatch.setattr(_streams, "activate", original)
        closer.join()
    assert asked.is_set() and side.closed
    np.testing.assert_array_equal(value, np.full(4096, 4.0 * 2 / 4096, np.float32))


# ---- 6. plans check placement like one-shot calls --------------------------------------


@pytest.mark.slow
def test_plans_refuse_an_out_or_stream_on_another_device_at_construction():
    done = run_python("""
        import numpy as np, aclnn_py
        x = aclnn_py.to_device(np.ones(4, np.float32), device=0)
        out1 = aclnn_py.empty((4,), np.float32, device=1)
        stream1 = aclnn_py.Stream(device=1)
        for kwargs in ({"out": out1}, {"stream": stream1}):
            try:
                aclnn_py.MseLossBackwardPlan(x, x, x, "none", **kwargs)
            except ValueError as error:
                print(type(error).__name__, error)
            try:
                aclnn_py.mse_loss_backward(x, x, x, "none", **kwargs)
            except ValueError as error:
                print(type(error).__name__, error)
        print(aclnn_py.emulator.stats()["live_executors"])
    """, {**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": "2"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == lines[1] == "ValueError out is on device 1 but the inputs are on 0"
    assert lines[2] == lines[3] == "ValueError stream is on device 1 but the arrays are on 0"
    assert lines[4] == "0"


# ---- 7. no launch on a closed stream -----------------------------------------------------


@pytest.mark.emulator_only
def test_work_is_never_queued_on_a_closed_stream():
    x = up(1.0)
    stream = aclnn_py.Stream()
    with stream:
        aclnn_py.mse_loss_backward(x, x, x).synchronize()  # a cached launch on `stream`
        stream.close()
        launches = aclnn_py.emulator.stats()["kernel_launches"]
        with pytest.raises(ValueError, match="closed"):
            aclnn_py.mse_loss_backward(x, x, x)            # the cached fast path
        with pytest.raises(ValueError, match="closed"):
            aclnn_py.mse_loss_backward(x, x, x, "sum")     # a new signature
        with pytest.raises(ValueError, match="closed"):
            aclnn_py.mse_loss(np.ones(3, np.float32), 0.0)  # numpy in, numpy out
        assert aclnn_py.emulator.stats()["kernel_launches"] == launches
    plan_stream = aclnn_py.Stream()
    plan = aclnn_py.MseLossBackwardPlan(x, x, x, stream=plan_stream)
    plan_stream.close()
    with pytest.raises(ValueError, match="stream is closed"):
        plan.run()
    plan.close()


# ---- 8. empty_cache() with a failing aclrtFree ----------------------------------------


@pytest.mark.emulator_only
def test_one_failing_free_in_empty_cache_loses_no_other_block():
    before = live_resources()
    arrays = [aclnn_py.empty((1000 + 200 * i,), np.float32) for i in range(8)]
    del arrays  # eight blocks of eight sizes, all cached
    cached = aclnn_py.memory_info()["cached_bytes"]
    assert aclnn_py.emulator.stats()["live_allocations"] == before["live_allocations"] + 8
    aclnn_py.emulator.inject_fault("aclrtFree", 507899, nth=1)
    with pytest.raises(AclError) as raised:
        aclnn_py.empty_cache()
    assert raised.value.api == "aclrtFree" and raised.value.status == 507899
    assert "1 cached block(s) of device 0 could not be freed" in raised.value.message
    assert aclnn_py.emulator.stats()["live_allocations"] == before["live_allocations"] + 1
    assert 0 < aclnn_py.memory_info()["cached_bytes"] < cached
    assert live_resources() == before  # the block kept goes at the next try


# ---- 9. half-built objects make no noise -----------------------------------------------


@pytest.mark.slow
def test_refused_constructions_print_nothing():
    done = run_python("""
        import copy, numpy as np, aclnn_py
        try:
            aclnn_py.to_device(np.ones(4, np.float32), device=5)
        except ValueError as error:
            print(error)
        a = aclnn_py.to_device(np.arange(4, dtype=np.float32))
        b = copy.deepcopy(a)
        print(b.numpy().tolist())
        del a, b
        import gc; gc.collect()
    """, EMULATOR)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["device must be in [0, 1), got 5",
                                        "[0.0, 1.0, 2.0, 3.0]"]
    assert done.stderr == ""


# ---- 10. the smaller ones ------------------------------------------------------------------


def test_an_unhashable_reduction_gets_the_reduction_message_on_every_path():
    x = up(1.0, (3,))
    for args in ((x, x, x), (np.ones(3, np.float32),) * 3):
        with pytest.raises(ValueError, match="reduction must be 'none', 'mean', 'sum'"):
            aclnn_py.mse_loss_backward(*args, [1])
        with pytest.raises(ValueError, match="reduction must be"):
            aclnn_py.mse_loss(*args[:2], {"mean": 1})


@pytest.mark.slow
def test_to_device_never_silently_returns_an_array_of_another_device():
    done = run_python("""
        import numpy as np, aclnn_py
        x = aclnn_py.to_device(np.ones(4, np.float32), device=0)
        assert aclnn_py.to_device(x) is x and aclnn_py.to_device(x, device=0) is x
        try:
            aclnn_py.to_device(x, device=1)
        except ValueError as error:
            print(error)
    """, {**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": "2"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("array is a DeviceArray on device 0, not device 1")


def test_shapes_too_large_for_any_device_are_value_errors_and_merely_large_ones_oom():
    with pytest.raises(ValueError, match="more than any device address space"):
        aclnn_py.empty((2**40, 2**40), np.float32)
    with pytest.raises(aclnn_py.OutOfMemoryError, match="requested 4398046511104 bytes"):
        aclnn_py.empty((2**40,), np.float32)


def test_device_objects_refuse_pickling_and_arrays_deep_copy_to_independent_arrays():
    x = aclnn_py.to_device(np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2])
    stream, event = aclnn_py.Stream(), aclnn_py.Event()
    plan = aclnn_py.MseLossPlan(x, x, "none", stream=stream)
    for thing, name in ((x, "DeviceArray"), (stream, "Stream"), (event, "Event"),
                        (plan, "MseLossPlan")):
        with pytest.raises(TypeError, match=f"{name} cannot be pickled"):
            pickle.dumps(thing)
    for thing in (stream, event, plan):
        with pytest.raises(TypeError, match="cannot be pickled or copied"):
            copy.deepcopy(thing)
    twin = copy.deepcopy(x)
    assert twin.buffer is not x.buffer and twin.shape == x.shape and twin.strides == x.strides
    x.free()
    np.testing.assert_array_equal(twin.numpy(), [[0.0, 2.0], [3.0, 5.0]])
    plan.close()
    stream.close()
    event.close()


# ---- races found by an adversarial pass: each pins its interleaving with a pause ---------


def _paused_queue(stream: aclnn_py.Stream):
    """Make ``stream.queue``, ``stream.relaunch`` and ``stream.queue_steps`` (where a launch
    is about to be queued) wait until released."""
    entered, go = threading.Event(), threading.Event()

    def paused(real):
        def slow(*arguments):
            entered.set()
            go.wait(5)
            return real(*arguments)
        return slow

    stream.queue = paused(stream.queue)
    stream.relaunch = paused(stream.relaunch)
    stream.queue_steps = paused(stream.queue_steps)
    return entered, go


def test_a_launch_racing_the_close_of_its_stream_is_refused():
    x = up(2.0, (8,))
    stream = aclnn_py.Stream()
    aclnn_py.mse_loss(x, x, "none", stream=stream).synchronize()  # cached on `stream`
    entered, go = _paused_queue(stream)
    thread, box = in_thread(lambda: aclnn_py.mse_loss(x, 0.5, "none", stream=stream))
    assert entered.wait(5)
    stream.close()  # the launch has passed every earlier check
    go.set()
    thread.join()
    assert isinstance(box.get("error"), ValueError), box
    assert "stream is closed" in str(box["error"])


def test_an_array_freed_while_a_launch_on_it_is_being_queued_is_refused():
    x, y = up(2.0, (8,)), up(1.0, (8,))
    stream = aclnn_py.Stream()
    aclnn_py.mse_loss(x, y, "none", stream=stream).synchronize()
    entered, go = _paused_queue(stream)
    thread, box = in_thread(lambda: aclnn_py.mse_loss(x, y, "none", stream=stream))
    assert entered.wait(5)
    x.free()  # the launch passed its liveness check before this
    reused = [up(-1.0, (8,)) for _ in range(3)]
    go.set()
    thread.join()
    assert isinstance(box.get("error"), ValueError), box
    assert "x is a DeviceArray that was freed" in str(box["error"])
    stream.close()
    del reused


def test_closing_a_plan_while_another_thread_runs_it_never_frees_what_the_run_uses():
    n = 1024
    x0, x1 = up(0.0, (n,)), up(3.0, (n,))
    y = up(5.0, (1,))  # broadcast: the kernel stages y in its workspace
    stream = aclnn_py.Stream()
    plan = aclnn_py.MseLossPlan(x0, y, "none", stream=stream)
    entered, go = _paused_queue(stream)
    thread, box = in_thread(lambda: plan.run(x=x1))
    assert entered.wait(5)
    closer, _ = in_thread(plan.close)
    closer.join(0.3)  # close() may not finish while the run is being queued
    go.set()
    thread.join()
    closer.join()
    fresh = aclnn_py.to_device(np.arange(n, dtype=np.float32))  # same size as the workspace
    stream.close()
    np.testing.assert_array_equal(fresh.numpy(), np.arange(n, dtype=np.float32))
    if "result" in box:  # the run won the race: its result is right
        np.testing.assert_array_equal(box["result"].numpy(), np.full(n, 4.0, np.float32))
    else:
        assert isinstance(box["error"], ValueError), box


def test_a_plan_runs_from_any_thread():
    x = aclnn_py.to_device(np.arange(4, dtype=np.float32))
    with aclnn_py.MseLossBackwardPlan(up(1.0, (4,)), x, up(0.0, (4,)),
                                      "none") as plan:
        thread, box = in_thread(lambda: plan.run().numpy())
        thread.join()
    assert "error" not in box, box
    np.testing.assert_array_equal(box["result"], np.arange(4, dtype=np.float32) * 2)


@pytest.mark.slow
def test_an_event_refuses_a_stream_of_another_device():
    done = run_python("""
        import aclnn_py
        try:
            aclnn_py.Event(device=0).record(aclnn_py.Stream(device=1))
        except ValueError as error:
            print(error)
    """, {**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": "2"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "stream is on device 1 but the event is on device 0"


# ---- what a synchronisation releases -----------------------------------------------------


class _Held:
    """Something queued work holds (weakly observable)."""


def test_an_interrupt_after_a_launch_keeps_its_hold_until_the_next_synchronisation():
    stream = aclnn_py.Stream()
    held = _Held()
    alive = weakref.ref(held)

    def interrupted_after_queuing() -> None:  # (runs under the stream's lock)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stream.queue(held, interrupted_after_queuing)
    del held
    assert alive() is not None  # the work may be queued: held
    stream.synchronize()  # began after it: done
    assert alive() is None
    stream.close()


def _interrupting(number: int, skip: str = "") -> list[str]:
    """Profile this thread: KeyboardInterrupt as the ``number``-th call (from 0) starts, a
    function named ``skip`` not counted; returns the names of the calls counted."""
    entered: list[str] = []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_qualname != skip:
            entered.append(frame.f_code.co_qualname)
            if len(entered) == number + 1:
                raise KeyboardInterrupt  # the profiler is off from here on

    sys.setprofile(hook)
    return entered


def _live_streams() -> int:
    return aclnn_py.emulator.stats()["live_streams"]


@pytest.mark.emulator_only
@pytest.mark.parametrize("safe_point", ["synchronize_device", "new stream"])
def test_a_stream_whose_finaliser_is_interrupted_is_destroyed_at_the_next_safe_point(
        monkeypatch, caplog, safe_point):
    """A dropped stream's finaliser interrupted as each call in it starts, one at a time
    (the interrupt is reported as unraisable): the next safe point destroys the stream,
    exactly once."""
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: None)
    aclnn_py.synchronize()  # the default stream exists
    baseline = _live_streams()
    for number in range(500):
        stream = aclnn_py.Stream()
        aclnn_py.mse_loss(up(1.0), 0.0, "sum", stream=stream).numpy()
        entered = _interrupting(number)
        try:
            del stream  # the finaliser runs here
        finally:
            sys.setprofile(None)
        if safe_point == "synchronize_device":
            _streams.synchronize_device(0)
        else:
            aclnn_py.Stream().close()
        assert _live_streams() == baseline, f"interrupted at {entered[-1:]}"
        if len(entered) <= number:
            break  # every call of the finaliser was interrupted once
    assert number > 3
    assert "releasing a stream" not in caplog.text  # never destroyed twice


@pytest.mark.emulator_only
@pytest.mark.parametrize("then", ["close again", "drop"])
def test_a_stream_whose_close_is_interrupted_is_destroyed_by_a_later_close_or_safe_point(then):
    """close() interrupted as each call in it starts, one at a time: its queued work still
    finishes right, and closing again (the object alive), or dropping it and the next
    safe point, destroys the stream exactly once."""
    aclnn_py.synchronize()
    baseline = _live_streams()
    for number in range(500):
        stream = aclnn_py.Stream()
        result = aclnn_py.mse_loss(up(2.0), 0.0, "sum", stream=stream)
        entered = _interrupting(number, skip="Stream.close")
        try:
            stream.close()
        except KeyboardInterrupt:
            pass
        finally:
            sys.setprofile(None)
        assert float(result.numpy()) == 4.0 * 4096
        if then == "close again":
            stream.close()
            assert stream.closed
        else:
            del stream
            _streams.synchronize_device(0)
        assert _live_streams() == baseline, f"interrupted at {entered[-1:]}"
        if len(entered) <= number:
            break  # every call of close() was interrupted once
    assert number > 3
