"""A plan's repeated ``run()`` and a stream's ``synchronize()`` as one host call each, and
what sends them back through every check (``aclpyRelaunchFast``,
``aclpyStreamSynchronizeFast``): a freed array, an array used on another stream, another
thread, a closed stream; and a plan dropped with work queued keeps its executor until the
work is done."""

from __future__ import annotations

import collections
import gc
import sys
import threading
from typing import Any

import numpy as np
import pytest
from conftest import fired_faults
from helpers import in_thread

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py.engine import launch_cache as _launch_cache
from aclnn_py.engine.plans import Plan
from aclnn_py.runtime import streams as _streams

pytestmark = pytest.mark.emulator_only


def up(value: float, n: int = 64) -> aclnn_py.DeviceArray:
    return aclnn_py.to_device(np.full(n, value, np.float32))


def refuse(*_arguments):
    raise AssertionError("went through the stream's lock")


@pytest.fixture
def running():
    """A plan of mse_loss(x=3, y=1, "none") on the current stream, run twice (the second
    run needs no checks), with its arrays; everything released afterwards."""
    x, y = up(3.0), up(1.0)
    plan = aclnn_py.MseLossPlan(x, y, "none")
    plan.run()
    plan.run()
    yield plan, x, y
    plan.close()
    for array in (x, y):
        if not array.buffer.freed:
            array.free()


def test_a_repeated_run_and_its_wait_take_no_python_lock(monkeypatch):
    x, y = up(3.0), up(1.0)
    stream = _streams.current_stream()
    with aclnn_py.MseLossPlan(x, y, "none") as plan:
        plan.run()
        aclnn_py.synchronize()
        monkeypatch.setattr(_streams.Stream, "relaunch", refuse)
        monkeypatch.setattr(stream, "_synchronizing", refuse)
        for _ in range(3):
            out = plan.run()
            aclnn_py.synchronize()
        np.testing.assert_array_equal(out.numpy(), np.full(64, 4.0, np.float32))
        monkeypatch.undo()
    x.free()
    y.free()


def test_a_freed_bound_array_is_refused_by_the_next_run(running):
    plan, x, _ = running
    x.free()
    with pytest.raises(ValueError, match="x is a DeviceArray that was freed"):
        plan.run()


def test_a_run_after_another_stream_wrote_a_bound_array_waits_for_that_write(running):
    plan, x, y = running
    side = aclnn_py.Stream()
    aclnn_py.mse_loss(up(5.0), y, "none", out=x, stream=side)  # x = (5 - 1)^2 = 16
    out = plan.run()  # must wait for `side`'s write of x first
    np.testing.assert_array_equal(out.numpy(), np.full(64, 225.0, np.float32))
    side.close()


def test_a_run_from_another_thread_makes_the_device_current_there(running):
    plan, _, _ = running
    thread, box = in_thread(lambda: plan.run().numpy())
    thread.join(10)
    assert "error" not in box, box.get("error")
    np.testing.assert_array_equal(box["result"], np.full(64, 4.0, np.float32))


def test_a_run_on_a_closed_stream_is_refused():
    x, y = up(3.0), up(1.0)
    stream = aclnn_py.Stream()
    plan = aclnn_py.MseLossPlan(x, y, "none", stream=stream)
    plan.run()
    plan.run()
    stream.close()
    with pytest.raises(ValueError, match="stream is closed"):
        plan.run()
    plan.close()
    x.free()
    y.free()


def test_a_plan_dropped_with_work_queued_keeps_its_executor_until_the_work_is_done():
    x, y = up(3.0), up(1.0)
    aclnn_py.synchronize()
    before = aclnn_py.emulator.stats()["live_executors"]
    plan = aclnn_py.MseLossPlan(x, y, "none")
    plan.run()
    out = plan.run()  # queued: the emulator runs it at the next synchronisation
    del plan
    gc.collect()
    assert aclnn_py.emulator.stats()["live_executors"] == before + 1  # kept for the work
    np.testing.assert_array_equal(out.numpy(), np.full(64, 4.0, np.float32))
    aclnn_py.synchronize()
    assert aclnn_py.emulator.stats()["live_executors"] == before
    for array in (x, y, out):
        array.free()


@pytest.mark.parametrize("together", [False, True], ids=["run-then-wait", "run-waiting"])
def test_threads_running_one_plan_and_waiting_get_every_run_done(together):
    x, y = up(3.0), up(1.0)
    errors: list[BaseException] = []
    with aclnn_py.MseLossPlan(x, y, "none") as plan:
        def loop() -> None:
            try:
                for _ in range(200):
                    if together:
                        plan.run(synchronize=True)
                    else:
                        plan.run()
                        aclnn_py.synchronize()
            except BaseException as error:  # reported below
                errors.append(error)

        threads = [threading.Thread(target=loop) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not errors, errors
        np.testing.assert_array_equal(plan.out.numpy(), np.full(64, 4.0, np.float32))
    x.free()
    y.free()


def test_a_repeated_call_after_another_stream_wrote_an_input_waits_for_that_write():
    """A one-shot call repeated over the same inputs skips their checks (one C call) only
    while none of them may have moved: a write on another stream moves the epoch on."""
    x, y = up(3.0), up(1.0)
    aclnn_py.mse_loss(x, y, "none").free()
    aclnn_py.mse_loss(x, y, "none").free()  # the repeat that needs no checks
    side = aclnn_py.Stream()
    aclnn_py.mse_loss(up(5.0), y, "none", out=x, stream=side)  # x = (5 - 1)^2 = 16
    out = aclnn_py.mse_loss(x, y, "none")  # must wait for `side`'s write of x first
    np.testing.assert_array_equal(out.numpy(), np.full(64, 225.0, np.float32))
    side.close()
    for array in (x, y, out):
        array.free()


def test_an_array_freed_while_a_run_without_the_lock_is_being_queued_waits_for_that_run():
    """A free in another thread between a run's epoch check and its count (here: while the
    run records a fence, which it does under the stream state's mutex) must mark the block
    with a point that covers the run, or the block goes back to CANN before the run read it.

    The fence that run recorded (at the point before it) is then queried until done, and
    the host told so; the trim must keep x's block, and the run, waited for, must find its
    input still allocated."""
    from aclnn_py._c import host as _host
    from aclnn_py._c.core import RT

    x, y = up(3.0), up(1.0)
    stream = aclnn_py.Stream()
    plan = aclnn_py.MseLossPlan(x, y, "none", stream=stream)
    plan.run()
    plan.run()
    library = _host.host()
    fired: dict[str, int] = {}

    def free_x_meanwhile() -> None:
        thread, box = in_thread(x.buffer.free)
        thread.join(10)
        assert not thread.is_alive() and "error" not in box
        fired["point"] = point_before

    @_host.ffi.callback("aclError(aclrtEvent, aclrtStream)")
    def record(event, queue):
        if not fired and threading.current_thread() is threading.main_thread():
            fired["event"] = event
            free_x_meanwhile()
        return RT.aclrtRecordEvent(event, queue)

    def configure(record_event) -> None:
        library.aclpyStreamsConfigure(RT.aclrtCreateEvent, RT.aclrtDestroyEvent, record_event,
                                      RT.aclrtQueryEventStatus, _host.NULL,
                                      RT.aclrtSynchronizeStream)

    configure(record)
    try:
        for _ in range(600):  # a fence every 256 launches
            point_before = _host.stream_stats(stream.state)["point"]
            try:
                plan.run()  # queued over x, its block marked to cover it; or refused:
            except ValueError as error:
                assert fired and "x is a DeviceArray that was freed" in str(error)
            if fired:
                break
    finally:
        configure(RT.aclrtRecordEvent)
    assert "point" in fired
    status = _host.ffi.new("aclrtEventRecordedStatus *")
    for _ in range(2000):  # the emulator runs the work before a record queried long enough
        assert RT.aclrtQueryEventStatus(fired["event"], status) == 0
        if status[0] == 1:  # ACL_EVENT_RECORDED_STATUS_COMPLETE
            break
    assert status[0] == 1
    _host.stream_synced(stream.state, fired["point"])  # what a launch's look at it finds
    aclnn_py.empty_cache()  # gives back what no queued work may use
    stream.synchronize()  # the run read x: its block must still be allocated
    plan.close()
    stream.close()
    y.free()


def _interrupt_at_opcode(code, number: int) -> None:
    """Trace this thread: KeyboardInterrupt before the ``number``-th bytecode (from 0) that a
    frame of ``code`` executes."""
    count = [0]

    def local(frame, event, arg):
        if event == "opcode":
            count[0] += 1
            if count[0] == number + 1:
                raise KeyboardInterrupt
        return local

    def tracer(frame, event, arg):
        if frame.f_code is code:
            frame.f_trace_opcodes = True
            return local
        return None

    sys.settrace(tracer)


def test_a_rebinding_run_interrupted_at_any_bytecode_never_relaunches_an_array_let_go():
    """``run(x=x2)`` interrupted at each bytecode of ``Plan._run`` in turn, then x2 dropped
    and its block taken by a new array (100.0): the next ``run()`` computes over x (4.0) or,
    if the plan kept it, x2 (16.0), never over the memory it let go of (9801.0)."""
    code = Plan._run.__code__
    for number in range(1000):
        x, y = up(3.0), up(1.0)
        plan = aclnn_py.MseLossPlan(x, y, "none")
        plan.run()
        plan.run()
        x2 = up(5.0)
        _interrupt_at_opcode(code, number)
        try:
            plan.run(x=x2)
        except KeyboardInterrupt:
            interrupted = True
        else:
            interrupted = False
        finally:
            sys.settrace(None)
        aclnn_py.synchronize()
        del x2
        gc.collect()
        z = up(100.0)  # the pool's block of x2, if nothing holds it
        value = plan.run().numpy()[0]
        assert value in (4.0, 16.0), (number, value)
        plan.close()
        for array in (x, y, z):
            array.free()
        if not interrupted:
            break
    assert number > 10  # the run was interrupted at each of its bytecodes


def test_a_repeated_run_with_synchronize_is_one_c_call_done_when_it_returns(monkeypatch):
    x, y = up(3.0), up(1.0)
    stream = _streams.current_stream()
    with aclnn_py.MseLossPlan(x, y, "none") as plan:
        first = plan.run(synchronize=True)  # the first run goes through every check
        assert aclnn_py.emulator.stats()["pending_tasks"] == 0
        monkeypatch.setattr(_streams.Stream, "relaunch", refuse)
        monkeypatch.setattr(_streams.Stream, "synchronize", refuse)
        monkeypatch.setattr(stream, "_synchronizing", refuse)
        monkeypatch.setattr(stream, "_synchronizing_fast", refuse)
        for _ in range(3):
            out = plan.run(synchronize=True)
            assert aclnn_py.emulator.stats()["pending_tasks"] == 0  # done, not queued
            stats = ll.stream_stats(stream.state)
            assert stats["completed"] == stats["point"]  # the wait covered the run's point
        monkeypatch.undo()
        assert out is first
        np.testing.assert_array_equal(out.numpy(), np.full(64, 4.0, np.float32))
    x.free()
    y.free()


@pytest.mark.parametrize("value", [1, "yes", None])
def test_synchronize_must_be_a_bool(running, value):
    plan, _, _ = running
    with pytest.raises(TypeError, match="synchronize must be True or False"):
        plan.run(synchronize=value)


def test_a_run_with_synchronize_refuses_a_freed_array_and_waits_for_other_streams(running):
    plan, x, y = running
    side = aclnn_py.Stream()
    aclnn_py.mse_loss(up(5.0), y, "none", out=x, stream=side)  # x = (5 - 1)^2 = 16
    out = plan.run(synchronize=True)  # must wait for `side`'s write of x first
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0
    np.testing.assert_array_equal(out.numpy(), np.full(64, 225.0, np.float32))
    side.close()
    x.free()
    with pytest.raises(ValueError, match="x is a DeviceArray that was freed"):
        plan.run(synchronize=True)


def test_a_run_with_synchronize_on_a_stream_holding_work_lets_that_work_go():
    x, y = up(3.0), up(1.0)
    stream = _streams.current_stream()
    with aclnn_py.MseLossPlan(x, y, "none") as plan:
        plan.run(synchronize=True)
        plan.run(synchronize=True)
        other = up(2.0)
        foreign = aclnn_py.DeviceArray.from_pointer(other.data_ptr(), (64,), np.float32,
                                                    owner=other)
        held = aclnn_py.mse_loss(foreign, y, "none")  # memory not aclnn_py's: held
        assert stream._keepalive
        out = plan.run(synchronize=True)
        assert stream._keepalive == [] and aclnn_py.emulator.stats()["pending_tasks"] == 0
        np.testing.assert_array_equal(out.numpy(), np.full(64, 4.0, np.float32))
        out = plan.run(x=other, synchronize=True)  # a rebinding run, then the wait
        np.testing.assert_array_equal(out.numpy(), np.full(64, 1.0, np.float32))
    for array in (x, y, other, held):
        array.free()


@pytest.mark.parametrize("api", ["aclnnMseLoss", "aclrtSynchronizeStream"])
def test_a_failure_in_a_run_with_synchronize_names_the_call_and_the_plan_runs_again(running,
                                                                                    api):
    plan, _, _ = running
    plan.run(synchronize=True)  # the repeat that takes the one C call
    aclnn_py.emulator.inject_fault(api, 507899, nth=1)
    with pytest.raises(aclnn_py.AclError) as raised:
        plan.run(synchronize=True)
    assert raised.value.api == api and raised.value.status == 507899
    assert fired_faults() == [api]
    out = plan.run(synchronize=True)
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0
    np.testing.assert_array_equal(out.numpy(), np.full(64, 4.0, np.float32))


def test_a_closed_plan_refuses_a_run_with_synchronize(running):
    plan, _, _ = running
    plan.run(synchronize=True)
    plan.close()
    with pytest.raises(ValueError, match="closed"):
        plan.run(synchronize=True)


def test_threads_sharing_a_plan_each_get_their_own_wait_status():
    """Two threads run one plan with synchronize=True (one C record): an injected failure
    of a wait is raised once, naming aclrtSynchronizeStream, by the run whose wait failed,
    and no run reports another's status."""
    x, y = up(3.0, 4096), up(1.0, 4096)
    raised: collections.Counter[Any] = collections.Counter()
    with aclnn_py.MseLossPlan(x, y, "none") as plan:
        plan.run(synchronize=True)

        def loop(start: threading.Barrier) -> None:
            start.wait()
            for _ in range(40):
                try:
                    plan.run(synchronize=True)
                except aclnn_py.AclError as error:
                    raised[(error.api, error.status)] += 1

        for trial in range(60):
            raised.clear()
            aclnn_py.emulator.clear_faults()
            aclnn_py.emulator.inject_fault("aclrtSynchronizeStream", 507899, nth=1 + trial % 37)
            start = threading.Barrier(2)
            threads = [threading.Thread(target=loop, args=(start,)) for _ in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            assert fired_faults() == ["aclrtSynchronizeStream"]
            assert raised == {("aclrtSynchronizeStream", 507899): 1}, (trial, raised)
        aclnn_py.emulator.clear_faults()
        np.testing.assert_array_equal(plan.run(synchronize=True).numpy(), 4.0)
    x.free()
    y.free()


# ---- a one-shot call repeated over the same inputs: its result and launch in one C call ----


def test_a_repeated_one_shot_call_takes_its_result_and_launch_in_one_c_call(monkeypatch):
    """No pool call from Python and no launch under the stream's lock: the new result's
    block comes from the pool in the C call that launches into it (``aclpyRepeatNew``)."""
    x, y = up(3.0), up(1.0)
    aclnn_py.mse_loss(x, y, "none")
    aclnn_py.mse_loss(x, y, "none")  # the repeat that needs no checks (a free would move the
    # placement epoch on: dropped results go back to the pool in stream order instead)
    monkeypatch.setattr(_streams.Stream, "relaunch", refuse)
    monkeypatch.setattr(ll, "pool_take", refuse)
    results = [aclnn_py.mse_loss(x, y, "none") for _ in range(3)]
    monkeypatch.undo()
    assert len({result.buffer.pointer for result in results}) == 3  # each its own block
    for result in results:
        assert result.stream is _streams.current_stream()
        np.testing.assert_array_equal(result.numpy(), np.full(64, 4.0, np.float32))
        result.free()
    x.free()
    y.free()


@pytest.mark.parametrize("filled", [False, True], ids=["pool-empty", "block-filled"])
def test_a_declined_one_shot_repeat_launches_through_the_lock_into_a_result(monkeypatch,
                                                                            filled):
    """``aclpyRepeatNew`` declining (here: made to) leaves its block empty when the pool
    could not give one at once, and the result comes from the pool's full path; or filled,
    and the launch under the lock writes into that block."""
    x, y = up(3.0), up(1.0)
    aclnn_py.mse_loss(x, y, "none")
    aclnn_py.mse_loss(x, y, "none")
    stream = _streams.current_stream()
    given: list[Any] = []

    def declining(repeat, block):
        if filled:
            assert ll.host().aclpyPoolAllocateFor(repeat.pool, block, repeat.nbytes, 0,
                                                  repeat.state) == 0
        given.append(block)
        return ll.SLOW

    locked = collections.Counter()
    relaunch = _streams.Stream.relaunch

    def counted(self, *arguments):
        locked["launches"] += 1
        return relaunch(self, *arguments)

    monkeypatch.setattr(stream, "_repeating_new", declining)
    monkeypatch.setattr(_streams.Stream, "relaunch", counted)
    out = aclnn_py.mse_loss(x, y, "none")
    monkeypatch.undo()
    assert len(given) == 1 and locked["launches"] == 1
    assert (out.buffer._block is given[0]) is filled
    np.testing.assert_array_equal(out.numpy(), np.full(64, 4.0, np.float32))
    for array in (out, x, y):
        array.free()


@pytest.mark.parametrize("into", [False, True], ids=["new-result", "into-out"])
def test_a_one_shot_repeat_whose_launch_fails_names_the_call_and_the_next_call_runs(into):
    """The one C call (``aclpyRepeatNew``, or ``aclpyRepeatAgain`` into an out given)
    failing raises CANN's error naming the call; the failed executor is dropped."""
    x, y = up(3.0), up(1.0)
    given = {"out": up(0.0)} if into else {}
    aclnn_py.mse_loss(x, y, "none", **given)
    aclnn_py.mse_loss(x, y, "none", **given)
    stream = _streams.current_stream()
    name = "_repeating_again" if into else "_repeating_new"
    launches = collections.Counter()
    relaunch = getattr(stream, name)

    def counted(*arguments):
        launches["one C call"] += 1
        return relaunch(*arguments)

    setattr(stream, name, counted)
    aclnn_py.emulator.inject_fault("aclnnMseLoss", 507015, nth=1)
    try:
        with pytest.raises(aclnn_py.AclError, match="aclnnMseLoss") as raised:
            aclnn_py.mse_loss(x, y, "none", **given)
    finally:
        setattr(stream, name, relaunch)
    assert raised.value.status == 507015 and launches["one C call"] == 1
    out = aclnn_py.mse_loss(x, y, "none", **given)  # phase 1 again: the executor was dropped
    np.testing.assert_array_equal(out.numpy(), np.full(64, 4.0, np.float32))
    for array in (out, x, y):
        array.free()


def test_a_repeated_one_shot_call_with_an_empty_result_takes_no_block(monkeypatch):
    """An empty result has no block (``DeviceBuffer``'s rule), on a repeat too: the one C
    call, which takes its result's block from the pool, is not its route."""
    x, y = (aclnn_py.to_device(np.zeros((0, 4), np.float32)) for _ in range(2))
    aclnn_py.mse_loss(x, y, "none")
    monkeypatch.setattr(_streams.current_stream(), "_repeating_new", refuse)
    results = [aclnn_py.mse_loss(x, y, "none") for _ in range(3)]
    assert [(r.shape, r.buffer.nbytes, r.buffer.pointer == ll.NULL) for r in results] == \
        [((0, 4), 0, True)] * 3


def test_a_repeated_one_shot_call_into_the_same_out_is_one_c_call(monkeypatch):
    """A call repeated over the same arrays, ``out=`` included, needs none of the checks
    (its out was checked against the inputs when they were last launched) and launches in
    one C call (``aclpyRepeatAgain``)."""
    x, y, out = up(3.0), up(1.0), up(0.0)
    aclnn_py.mse_loss(x, y, "none", out=out)
    aclnn_py.mse_loss(x, y, "none", out=out)  # remembered: this out came back
    monkeypatch.setattr(_streams.Stream, "relaunch", refuse)
    monkeypatch.setattr(_launch_cache, "check_no_partial_overlap", refuse)
    for _ in range(3):
        assert aclnn_py.mse_loss(x, y, "none", out=out) is out
    monkeypatch.undo()
    assert out.stream is _streams.current_stream()
    np.testing.assert_array_equal(out.numpy(), np.full(64, 4.0, np.float32))
    for array in (x, y, out):
        array.free()


def test_a_repeat_into_the_same_out_after_another_stream_wrote_an_input_waits_for_it():
    """The one C call declines once an array may have moved (the placement epoch moved on):
    the call then goes through the checks, which wait for the other stream's write."""
    x, y, out = up(3.0), up(1.0), up(0.0)
    aclnn_py.mse_loss(x, y, "none", out=out)
    aclnn_py.mse_loss(x, y, "none", out=out)
    side = aclnn_py.Stream()
    aclnn_py.mse_loss(up(5.0), y, "none", out=x, stream=side)  # x = (5 - 1)^2 = 16
    aclnn_py.mse_loss(x, y, "none", out=out)  # must wait for `side`'s write of x first
    np.testing.assert_array_equal(out.numpy(), np.full(64, 225.0, np.float32))
    side.close()
    # the checked launch gave the same arrays' record its epoch: the next call is one C call
    (cached,) = [entry for entry in _launch_cache.cache_of(_streams.current_stream()).values()
                 if entry.key[0].function == "mse_loss" and entry.key[-1] == out.layout]
    record = cached._repeats_into[id(out)]
    aclnn_py.mse_loss(x, y, "none", out=out)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_streams.Stream, "relaunch", refuse)
        aclnn_py.mse_loss(x, y, "none", out=out)
    assert cached._repeats_into[id(out)] is record
    np.testing.assert_array_equal(out.numpy(), np.full(64, 225.0, np.float32))
    out.free()
    with pytest.raises(ValueError, match="out is a DeviceArray that was freed"):
        aclnn_py.mse_loss(x, y, "none", out=out)
    for array in (x, y):
        array.free()


def test_outs_taking_turns_each_repeat_in_one_c_call_and_a_one_off_out_is_not_remembered(
        monkeypatch):
    """Ping-pong outs each keep their last launch (a few per cached launch); an out given
    once is checked and launched under the lock, and leaves no record behind."""
    stream = aclnn_py.Stream()  # a cache of its own: no record of another test's outs
    x, y = up(3.0), up(1.0)
    first, second = up(0.0), up(0.0)
    for out in (first, second, first, second):  # each out given twice: remembered
        aclnn_py.mse_loss(x, y, "none", out=out, stream=stream)
    (cached,) = _launch_cache.cache_of(stream).values()
    remembered = dict(cached._repeats_into)
    assert set(remembered) == {id(first), id(second)}
    monkeypatch.setattr(_streams.Stream, "relaunch", refuse)
    for _ in range(3):
        for out in (first, second):
            assert aclnn_py.mse_loss(x, y, "none", out=out, stream=stream) is out
    monkeypatch.undo()
    once = up(0.0)
    aclnn_py.mse_loss(x, y, "none", out=once, stream=stream)
    assert dict(cached._repeats_into) == remembered  # no record for an out given once
    for out in (first, second, once):
        np.testing.assert_array_equal(out.numpy(), np.full(64, 4.0, np.float32))
    stream.close()
    for array in (x, y, first, second, once):
        array.free()
