"""The emulator's generic operator path: every operator of CANN's headers exported with its
real prototype, computed by a Python kernel (aclnn_py's or a user's), refused clearly when
it has none; phase 1 refuses a bad call before anything runs; kernels run when the stream
runs its work and count like the C kernels."""

from __future__ import annotations

import json
import signal
import threading
import traceback

import numpy as np
import pytest
from conftest import live_resources, no_device_work, run_python

import aclnn_py
from aclnn_py._c import core as _core
from aclnn_py._c import lowlevel as ll
from aclnn_py.emulator import _kernels

pytestmark = pytest.mark.emulator_only

UNCOMPUTED = "aclnnNdtri"  # declared by the emulator's headers, no kernel of aclnn_py's


@pytest.fixture
def user_kernels():
    """Kernels the test registers are removed again afterwards."""
    before = dict(_kernels.table())  # every family loaded: only the test's kernels go
    yield
    for name in set(_kernels.KERNELS) - set(before):
        del _kernels.KERNELS[name]
        ll.register_kernel(name, False)
    _kernels.KERNELS.update(before)


def test_kernels_lists_the_c_and_the_python_kernels():
    names = aclnn_py.emulator.kernels()
    assert names == sorted(names) and len(names) >= 150
    assert {"aclnnMseLossBackward", "aclnnAdd", "aclnnSoftmax", "aclnnMatmul",
            "aclnnLayerNorm", "aclnnTopk", "aclnnCast"} <= set(names)
    assert UNCOMPUTED not in names


def test_an_operator_without_a_kernel_says_how_to_give_it_one():
    x = aclnn_py.to_device(np.ones(3, np.float32))
    out = aclnn_py.empty((3,), np.float32)
    before = aclnn_py.emulator.stats()
    with no_device_work(), pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.call(UNCOMPUTED, x, out=out)
    error = info.value
    assert error.status == ll.constant("ACLNN_ERR_INNER_FIND_KERNEL_ERROR") == 561003
    assert error.api == f"{UNCOMPUTED}GetWorkspaceSize"
    assert "does not compute" in error.message
    assert f'aclnn_py.emulator.kernel("{UNCOMPUTED}")' in error.message
    assert aclnn_py.emulator.stats()["live_executors"] == before["live_executors"]


def test_a_bad_dtype_is_refused_at_phase_1_before_anything_runs():
    x = aclnn_py.to_device(np.arange(6, dtype=np.int32).reshape(2, 3))
    out = aclnn_py.empty((2, 3), np.int32)
    aclnn_py.synchronize()
    before = aclnn_py.emulator.stats()
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.call("aclnnSoftmax", x, 1, out=out)
    assert info.value.status == 161002
    assert "self has dtype DT_INT32" in info.value.message  # the phase-1 rules (its doc)
    after = aclnn_py.emulator.stats()
    assert after["kernel_launches"] == before["kernel_launches"]
    assert after["kernels_executed"] == before["kernels_executed"]
    assert after["live_executors"] == before["live_executors"]


def test_a_kernel_check_refuses_a_wrong_shape_with_cann_s_status():
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.call("aclnnMm", np.ones((2, 3), np.float32), np.ones((4, 5), np.float32),
                      cubeMathType=0, out=np.empty((2, 5), np.float32))
    # ops-nn matmul/mat_mul_v3/op_host/op_api/aclnn_mm.cpp CheckShapeValid: the k-axes differ
    assert info.value.status == 161002 and "k-axis of self [2, 3] and mat2 [4, 5] differ" \
        in info.value.message


def test_a_python_kernel_runs_when_the_stream_runs_its_work():
    x = aclnn_py.to_device(np.array([-1.5, 2.0, -3.0], np.float32))
    aclnn_py.synchronize()
    before = aclnn_py.emulator.stats()["kernels_executed"]
    on_device = aclnn_py.emulator.device_stats(0)["kernels_executed"]
    y = aclnn_py.call("aclnnAbs", x)
    assert aclnn_py.emulator.stats()["kernels_executed"] == before  # queued, not run
    np.testing.assert_array_equal(y.numpy(), [1.5, 2.0, 3.0])
    assert aclnn_py.emulator.stats()["kernels_executed"] == before + 1
    assert aclnn_py.emulator.device_stats(0)["kernels_executed"] == on_device + 1


def test_a_repeated_call_relaunches_its_executor_with_new_addresses():
    first = aclnn_py.to_device(np.array([-1.0, 2.0], np.float32))
    second = aclnn_py.to_device(np.array([3.0, -4.0], np.float32))
    outs = [aclnn_py.call("aclnnNeg", array) for array in (first, second, first)]
    assert [o.numpy().tolist() for o in outs] == [[1.0, -2.0], [-3.0, 4.0], [1.0, -2.0]]


def test_a_kernel_that_fails_fails_the_synchronisation_with_its_message(user_kernels):
    @aclnn_py.emulator.kernel(UNCOMPUTED)
    def broken(self, out):
        raise ValueError("this kernel is broken on purpose")

    x = aclnn_py.to_device(np.ones(2, np.float32))
    aclnn_py.call(UNCOMPUTED, x)
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.synchronize()
    assert "this kernel is broken on purpose" in str(info.value)


def test_a_user_kernel_computes_an_operator_aclnn_py_has_none_for(user_kernels):
    seen = []

    @aclnn_py.emulator.kernel(UNCOMPUTED, dtypes=["float32"])
    def sinc(self, out):
        seen.append((self.shape, self.flags.writeable, out.flags.writeable))
        out[...] = np.sinc(self / np.pi)

    assert UNCOMPUTED in aclnn_py.emulator.kernels()
    x = np.array([0.5, 1.0, 2.0], np.float32)
    np.testing.assert_allclose(aclnn_py.call(UNCOMPUTED, x), np.sin(x) / x, rtol=1e-6)
    assert seen == [((3,), False, True)]
    with pytest.raises(aclnn_py.AclError, match="self has dtype float16"):
        aclnn_py.call(UNCOMPUTED, x.astype(np.float16))


def test_a_user_kernel_s_check_refuses_at_phase_1(user_kernels):
    def positive(self, out):
        if (self <= 0).any():
            raise aclnn_py.emulator.Refusal("self must be positive")

    @aclnn_py.emulator.kernel(UNCOMPUTED, check=positive)
    def sinc(self, out):
        out[...] = self

    with pytest.raises(aclnn_py.AclError, match="self must be positive") as info:
        aclnn_py.call(UNCOMPUTED, np.array([1.0, -1.0], np.float32))
    assert info.value.status == 161002


def test_a_c_kernel_cannot_be_replaced():
    with pytest.raises(ValueError, match="C kernel"):
        aclnn_py.emulator.kernel("aclnnMseLoss")(lambda **a: None)


def test_a_launch_runs_the_kernel_registered_when_its_stream_runs_it(user_kernels):
    @aclnn_py.emulator.kernel(UNCOMPUTED)
    def first(self, out):
        out[...] = 1

    x = aclnn_py.to_device(X)
    queued = aclnn_py.call(UNCOMPUTED, x)

    @aclnn_py.emulator.kernel(UNCOMPUTED)
    def second(self, out):
        out[...] = 2

    np.testing.assert_array_equal(queued.numpy(), np.full(8, 2, np.float32))


def test_a_launch_whose_kernel_was_removed_meanwhile_fails_its_synchronisation(user_kernels):
    @aclnn_py.emulator.kernel(UNCOMPUTED)
    def sinc(self, out):
        out[...] = self

    x = aclnn_py.to_device(X)
    aclnn_py.call(UNCOMPUTED, x)
    ll.register_kernel(UNCOMPUTED, False)
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.synchronize()
    assert info.value.status == 507015
    assert "its kernel was unregistered after phase 1" in info.value.message
    # Registered with the emulator but gone from the table: phase 1 fails as for an
    # operator without a kernel.
    ll.register_kernel(UNCOMPUTED)
    del _kernels.KERNELS[UNCOMPUTED]
    aclnn_py.empty_cache()  # no cached executor: phase 1 runs
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.call(UNCOMPUTED, x)
    assert info.value.status == 561003
    assert "aclnnNdtri has no Python kernel (it was removed)" in info.value.message
    ll.register_kernel(UNCOMPUTED, False)


def _generator(self, out):
    yield


@pytest.mark.parametrize("name, options, function, error, words", [
    (123, {}, None, TypeError, "name must be an operator name such as 'aclnnSinc', got int"),
    ("Sinc", {}, None, ValueError, "name must be an operator name 'aclnn<Name>'"),
    ("aclnnNoSuchOperator", {}, None, ValueError,
     "no installed header declares it, and aclnn_py's operator table does not list it; give "
     "its C parameter names with parameters=[...]"),
    (UNCOMPUTED, {"parameters": ["self"]}, None, ValueError,
     "parameters has 1 names but the operator takes 2 arguments at phase 1 (self, out;"),
    (UNCOMPUTED, {"parameters": "self"}, None, TypeError,
     "parameters must be a list of C parameter names, not the string 'self'"),
    (UNCOMPUTED, {"parameters": ["self", "self"]}, None, ValueError, "names a parameter twice"),
    (UNCOMPUTED, {"parameters": ["self", 2]}, None, ValueError,
     "parameters must be C parameter names (identifiers), got 2"),
    (UNCOMPUTED, {"dtypes": "float32"}, None, TypeError,
     "dtypes must be a list of dtype names such as ['float32'], not the string 'float32'"),
    (UNCOMPUTED, {"dtypes": ["float32", "floaty"]}, None, ValueError,
     "dtypes: 'floaty' is not the name of a dtype a tensor can have; the names are float32,"),
    (UNCOMPUTED, {"dtypes": [object]}, None, ValueError, "is not the name of a dtype"),
    (UNCOMPUTED, {"dtypes": []}, None, ValueError, "dtypes is empty, so every call would be "
                                                   "refused"),
    (UNCOMPUTED, {"dtypes": 5}, None, TypeError, "dtypes must be a list of dtype names"),
    (UNCOMPUTED, {"check": 5}, None, TypeError, "check of aclnnNdtri must be callable, got int"),
    (UNCOMPUTED, {"check": lambda x: None}, None, TypeError,
     "check of aclnnNdtri is called with the keyword arguments self, out, but its signature (x) "
     "does not accept them"),
    (UNCOMPUTED, {}, 5, TypeError, "the kernel of aclnnNdtri must be callable, got int"),
    (UNCOMPUTED, {}, lambda x: None, TypeError,
     "the kernel of aclnnNdtri is called with the keyword arguments self, out, but its "
     "signature (x) does not accept them"),
    (UNCOMPUTED, {}, _generator, TypeError, "is a generator or a coroutine function"),
])
def test_a_bad_registration_is_refused_at_once_naming_the_argument(user_kernels, name, options,
                                                                  function, error, words):
    with pytest.raises(error) as info:
        register = aclnn_py.emulator.kernel(name, **options)
        if function is not None:
            register(function)
    assert words in str(info.value)
    assert UNCOMPUTED not in aclnn_py.emulator.kernels()


def test_dtypes_may_be_given_as_numpy_dtypes(user_kernels):
    @aclnn_py.emulator.kernel(UNCOMPUTED, dtypes=[np.float32, np.dtype("float16"), "bfloat16"])
    def sinc(self, out, **rest):
        out[...] = self

    assert _kernels.table()[UNCOMPUTED].dtypes.names == ("float32", "float16", "bfloat16")


def test_python_kernels_on_several_threads_and_streams_never_deadlock():
    results: dict[int, list] = {}
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            with aclnn_py.Stream() as stream:
                x = aclnn_py.to_device(np.full((64,), float(index), np.float32))
                values = []
                for _ in range(20):
                    y = aclnn_py.call("aclnnSqrt", x, stream=stream)
                    # y * y: aclnnSquare runs on Ascend 950 only (ops-math math/square/op_api/
                    # aclnn_square.cpp CheckDtypeValid)
                    z = aclnn_py.call("aclnnMul", y, y, stream=stream)
                    values.append(float(z.numpy()[0]))
                results[index] = values
            stream.close()
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i + 1,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"
    assert not errors, errors[0]
    for index, values in results.items():
        np.testing.assert_allclose(values, [float(index)] * 20, rtol=1e-6)


# ---- interrupts inside kernels ---------------------------------------------------------

ABORT = 107023  # ACL_ERROR_RT_STREAM_ABORT (hicann/runtime rt_error_codes.h)


def _ctrl_c() -> None:
    """A Ctrl-C arriving while the kernel computes: SIGINT raised at the process, whose
    handler (KeyboardInterrupt) Python runs in the main thread at its next bytecode; the
    loop, bounded by a count (not a time), is never finished when the signal arrives."""
    signal.raise_signal(signal.SIGINT)
    for _ in range(10_000_000):
        pass
    raise AssertionError("SIGINT was not delivered inside the kernel")


@pytest.fixture
def sigint():
    """Python's own SIGINT handler (KeyboardInterrupt) for the test, whatever ran before."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.fixture
def stoppable(user_kernels, sigint):
    """UNCOMPUTED computed by a user kernel (a sinc); while ``stop[0]`` is set, its next run
    is stopped by it instead: "ctrl-c" (a real SIGINT), or an exception to raise ("signal
    only" raises SIGINT and computes). ``runs`` counts the kernel's runs."""
    stop: list = [None]
    runs: list = []

    @aclnn_py.emulator.kernel(UNCOMPUTED, dtypes=["float32"])
    def sinc(self, out):
        runs.append(1)
        what, stop[0] = stop[0], None
        if what == "ctrl-c":
            _ctrl_c()
        elif what == "signal only":
            signal.raise_signal(signal.SIGINT)
        elif what is not None:
            raise what
        out[...] = np.sinc(self / np.pi)

    yield stop, runs


def _sinc(x):
    return np.sin(x) / x


X = np.linspace(0.5, 2.0, 8, dtype=np.float32)


@pytest.mark.parametrize("how", ["ctrl-c", KeyboardInterrupt])
def test_an_interrupt_inside_a_kernel_is_raised_by_the_call_that_ran_it(stoppable, how):
    """The numpy path synchronises inside the call: the call raises KeyboardInterrupt (not an
    AclError first and the interrupt later), leaves nothing behind, and the next call on
    the same stream computes."""
    stop, runs = stoppable
    aclnn_py.call(UNCOMPUTED, X)  # its launch cached, its blocks pooled: the baseline
    before = live_resources()
    stop[0] = how
    with pytest.raises(KeyboardInterrupt) as info:
        aclnn_py.call(UNCOMPUTED, X)
    assert type(info.value) is KeyboardInterrupt
    assert "inside the kernel of aclnnNdtri" in str(info.value)
    # the kernel's frames, which hold views of device memory, are not kept
    frames = {frame.f_code.co_name for frame, _ in traceback.walk_tb(info.value.__traceback__)}
    assert not frames & {"sinc", "_ctrl_c"}
    del info
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0
    assert live_resources() == before
    np.testing.assert_allclose(aclnn_py.call(UNCOMPUTED, X), _sinc(X), rtol=1e-6)
    assert len(runs) == 3


def test_an_interrupted_kernel_drops_the_work_queued_after_it_on_its_stream(stoppable):
    """Device arrays: the kernel runs at ``numpy()``, which raises KeyboardInterrupt; the
    stream's later work was dropped unrun (its output never written), other streams keep
    theirs, and the stream works afterwards."""
    stop, runs = stoppable
    x = aclnn_py.to_device(X)
    with aclnn_py.Stream() as other:
        elsewhere = aclnn_py.call("aclnnNeg", aclnn_py.to_device(X), stream=other)
    aclnn_py.synchronize()
    stop[0] = "ctrl-c"
    first = aclnn_py.call(UNCOMPUTED, x)
    second = aclnn_py.call("aclnnNeg", x)  # queued behind the interrupted kernel
    marker = aclnn_py.to_device(np.full(8, 7.0, np.float32))
    aclnn_py.call("aclnnNeg", x, out=marker)  # would overwrite the 7s
    executed = aclnn_py.emulator.stats()["kernels_executed"]
    with pytest.raises(KeyboardInterrupt):
        first.numpy()
    assert aclnn_py.emulator.stats()["pending_tasks"] == 1  # the other stream's, kept
    assert aclnn_py.emulator.stats()["kernels_executed"] == executed  # none ran to its end
    np.testing.assert_array_equal(marker.numpy(), np.full(8, 7.0, np.float32))
    np.testing.assert_array_equal(elsewhere.numpy(), -X)
    np.testing.assert_allclose(aclnn_py.call(UNCOMPUTED, x).numpy(), _sinc(X), rtol=1e-6)
    np.testing.assert_array_equal(aclnn_py.call("aclnnNeg", x).numpy(), -X)
    del second
    other.close()
    assert len(runs) == 2


def test_an_interrupt_reaches_a_numpy_call_whose_synchronisation_ran_the_kernel(stoppable):
    """A curated operator's numpy call synchronises the stream, and so runs a kernel queued
    before it: the interrupt is raised by that call, whose own work was dropped, and the
    next one computes."""
    stop, _ = stoppable
    grad, x, y = 1.0, X, np.zeros(8, np.float32)
    expected = aclnn_py.mse_loss_backward(grad, x, y, "none")
    before = live_resources()
    stop[0] = "ctrl-c"
    pending = aclnn_py.call(UNCOMPUTED, aclnn_py.to_device(X))
    with pytest.raises(KeyboardInterrupt):
        aclnn_py.mse_loss_backward(grad, x, y, "none")
    del pending
    assert live_resources() == before
    np.testing.assert_array_equal(aclnn_py.mse_loss_backward(grad, x, y, "none"), expected)


def test_a_plan_whose_stream_was_interrupted_runs_again(stoppable):
    stop, _ = stoppable
    x = aclnn_py.to_device(X)
    zero = aclnn_py.to_device(np.zeros(8, np.float32))
    with aclnn_py.MseLossPlan(x, zero, "none") as plan:
        stop[0] = KeyboardInterrupt
        aclnn_py.call(UNCOMPUTED, x)
        result = plan.run()
        with pytest.raises(KeyboardInterrupt):
            result.numpy()
        np.testing.assert_array_equal(plan.run().numpy(), X * X)


def test_an_interrupted_event_synchronisation_raises_it_and_the_event_then_reads_done(
        stoppable):
    stop, _ = stoppable
    x = aclnn_py.to_device(X)
    stop[0] = KeyboardInterrupt
    aclnn_py.call(UNCOMPUTED, x)
    event = aclnn_py.Event().record()
    with pytest.raises(KeyboardInterrupt):
        event.synchronize()
    event.synchronize()  # its record was dropped with the work: nothing to wait for
    aclnn_py.synchronize()
    event.close()


def test_an_interrupt_in_a_kernel_run_by_a_launch_past_the_queue_depth_is_raised_by_it(
        stoppable):
    """2048 tasks queued: the next launch first runs the oldest, the interrupted kernel; it
    raises KeyboardInterrupt, and everything queued, its own task included, is dropped."""
    stop, runs = stoppable
    x = aclnn_py.to_device(X)
    out = aclnn_py.empty((8,), np.float32)
    aclnn_py.synchronize()
    before = live_resources()
    stop[0] = KeyboardInterrupt
    aclnn_py.call(UNCOMPUTED, x, out=out)
    launched = 1
    with pytest.raises(KeyboardInterrupt):
        for _ in range(4096):
            aclnn_py.call("aclnnNeg", x, out=out)
            launched += 1
    assert launched <= 2048  # the 2049th task (fences count) ran the oldest
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0
    aclnn_py.synchronize()
    assert live_resources() == before
    aclnn_py.call(UNCOMPUTED, x, out=out)
    np.testing.assert_allclose(out.numpy(), _sinc(X), rtol=1e-6)
    assert len(runs) == 2


def test_an_interrupt_kept_for_the_thread_is_raised_by_its_next_launch():
    """The fence a launch records, or looks at, may run the stream's oldest work (past the
    queue's depth), and a kernel of it may be interrupted, which the host library does not
    report. The interrupt kept for the thread is then raised by the launch itself: before
    anything is queued (the numpy path's steps), or once its relaunch is queued and held."""
    x = aclnn_py.to_device(X)
    np.testing.assert_array_equal(aclnn_py.call("aclnnNeg", X), -X)  # cached, pooled
    aclnn_py.call("aclnnNeg", x).numpy()
    before = live_resources()
    _core.hold_interrupt(KeyboardInterrupt("kept"), "")
    with pytest.raises(KeyboardInterrupt, match="kept"):
        aclnn_py.call("aclnnNeg", X)
    assert aclnn_py.emulator.stats()["pending_tasks"] == 0
    assert live_resources() == before
    result = aclnn_py.empty((8,), np.float32)
    aclnn_py.call("aclnnNeg", x, out=result)  # cached for these addresses: a relaunch next
    x.copy_from(2 * X)
    _core.hold_interrupt(KeyboardInterrupt("kept"), "")
    with pytest.raises(KeyboardInterrupt, match="kept"):
        aclnn_py.call("aclnnNeg", x, out=result)
    np.testing.assert_array_equal(result.numpy(), -2 * X)  # it was queued, and ran
    assert not ll.interrupted


def test_an_interrupt_kept_for_a_thread_that_ended_reaches_no_other_thread():
    """A thread whose kernel was interrupted by a caller that is not aclnn_py ends with its
    interrupt kept; a later thread given the same id gets nothing of it."""
    def interrupted_then_gone() -> None:
        _core.hold_interrupt(KeyboardInterrupt("left behind"), "")

    worker = threading.Thread(target=interrupted_then_gone)
    worker.start()
    worker.join()
    ll.interrupted[threading.get_ident()] = ll.interrupted.pop(worker.ident)  # the id reused
    x = aclnn_py.to_device(X)
    np.testing.assert_array_equal(aclnn_py.call("aclnnNeg", x).numpy(), -X)
    assert not ll.interrupt_pending()
    ll.raise_interrupt()  # nothing to raise
    assert not ll.interrupted


def test_an_interrupt_inside_a_check_is_raised_by_phase_1_and_queues_nothing(user_kernels,
                                                                            sigint):
    def interrupted(self, out):
        _ctrl_c()

    @aclnn_py.emulator.kernel(UNCOMPUTED, check=interrupted)
    def sinc(self, out):
        raise AssertionError("never queued, never run")

    x = aclnn_py.to_device(X)
    aclnn_py.synchronize()
    before = aclnn_py.emulator.stats()
    with pytest.raises(KeyboardInterrupt, match="inside the check of aclnnNdtri"):
        aclnn_py.call(UNCOMPUTED, x)
    after = aclnn_py.emulator.stats()
    for key in ("kernel_launches", "live_executors", "pending_tasks"):
        assert after[key] == before[key], key


@pytest.mark.parametrize("kind, args", [(SystemExit, (3,)), (GeneratorExit, ())])
def test_other_exceptions_that_are_not_errors_are_raised_again_as_they_are(stoppable, kind,
                                                                          args):
    stop, _ = stoppable
    stop[0] = raised = kind(*args)
    with pytest.raises(kind) as info:
        aclnn_py.call(UNCOMPUTED, X)
    assert info.value is raised and info.value.args == args
    assert info.value.__context__ is None
    np.testing.assert_allclose(aclnn_py.call(UNCOMPUTED, X), _sinc(X), rtol=1e-6)


@pytest.mark.parametrize("kind", [MemoryError, RuntimeError, ArithmeticError])
def test_a_kernel_s_error_fails_its_task_only(stoppable, kind):
    """An Exception is the kernel failing (507015, as CANN's default failure mode, which goes
    on with the stream's later work): the next task on the stream still runs."""
    stop, _ = stoppable
    x = aclnn_py.to_device(X)
    stop[0] = raised = kind("the kernel's own words")
    aclnn_py.call(UNCOMPUTED, x)
    after = aclnn_py.call("aclnnNeg", x)
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.synchronize()
    assert info.value.status == 507015
    assert f"raised {type(raised).__name__}: {raised}" in info.value.message
    np.testing.assert_array_equal(after.numpy(), -X)


def test_a_kernel_interrupted_in_another_thread_raises_there_and_only_there(stoppable):
    """Kernels run in the synchronising thread: a KeyboardInterrupt raised inside one that a
    worker thread runs is raised by the worker's call, not delivered to the main thread."""
    stop, _ = stoppable
    stop[0] = KeyboardInterrupt
    seen: list = []

    def work() -> None:
        try:
            with aclnn_py.Stream() as stream:
                aclnn_py.call(UNCOMPUTED, X, stream=stream)
            stream.close()
        except BaseException as error:  # noqa: BLE001 - what the worker got, checked below
            seen.append(type(error))

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert seen == [KeyboardInterrupt]


def test_a_ctrl_c_during_a_worker_thread_s_kernel_reaches_the_main_thread(stoppable):
    """Python runs signal handlers in the main thread only: a SIGINT that arrives while a
    worker runs a kernel leaves that kernel alone (the worker's call computes) and is
    raised in the main thread, as anywhere in Python."""
    stop, _ = stoppable
    results: list = []

    def work() -> None:
        with aclnn_py.Stream() as stream:
            results.append(aclnn_py.call(UNCOMPUTED, X, stream=stream))
        stream.close()

    stop[0] = "signal only"
    worker = threading.Thread(target=work)
    interrupted = False
    try:
        worker.start()
        worker.join()  # the kernel raised SIGINT before the worker ended
        for _ in range(10_000_000):  # the handler runs at the main thread's next bytecode
            pass
    except KeyboardInterrupt:
        interrupted = True
    worker.join()
    assert interrupted
    np.testing.assert_allclose(results[0], _sinc(X), rtol=1e-6)


# ---- a kernel calling aclnn_py -----------------------------------------------------------

REENTRANT = {
    "call": "aclnn_py.call('aclnnAbs', np.ones(2, np.float32))",
    "curated": "aclnn_py.mse_loss(np.ones(2, np.float32), np.zeros(2, np.float32))",
    "to_device": "aclnn_py.to_device(np.ones(2, np.float32))",
    "empty": "aclnn_py.empty((2,), np.float32)",
    "synchronize": "aclnn_py.synchronize()",
    "numpy": "outside.numpy()",
    "stream": "aclnn_py.Stream()",
    "empty_cache": "aclnn_py.empty_cache()",
    "register": "aclnn_py.emulator.kernel('aclnnSinh')(lambda self, out: None)",
}


@pytest.mark.slow
def test_a_kernel_that_calls_aclnn_py_fails_its_call_and_never_hangs():
    """Each call below, made from inside a kernel (its compute, and its check), raises
    RuntimeError saying that a kernel must not call aclnn_py; the operator's call then fails
    with that message, even when the kernel catches the error. In a subprocess with a
    timeout: such a call used to wait forever for the work it runs inside."""
    done = run_python(f"""
        import json, numpy as np, aclnn_py
        results = {{}}
        outside = aclnn_py.to_device(np.ones(2, np.float32))
        for name, code in {REENTRANT!r}.items():
            for where in ("compute", "check", "caught"):
                seen = []
                def kernel(self, out, code=code, where=where):
                    try:
                        exec(code)
                    except RuntimeError as error:
                        seen.append(str(error))
                        if where != "caught":
                            raise
                    out[...] = self
                def check(self, out, code=code):
                    exec(code)
                aclnn_py.emulator.kernel("aclnnNdtri", check=check if where == "check" else None)(
                    kernel)
                try:
                    aclnn_py.call("aclnnNdtri", np.ones(3, np.float32))
                    results[name + "/" + where] = "no error"
                except aclnn_py.AclError as error:
                    results[name + "/" + where] = [error.status, error.message]
        print(json.dumps(results))
    """, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    for name in REENTRANT:
        for where in ("compute", "check", "caught"):
            status, message = results[f"{name}/{where}"]
            assert status == (561000 if where == "check" else 507015), (name, where, status)
            assert "a kernel must not call aclnn_py" in message, (name, where, message)
