"""The emulator's generic operator path: every operator of CANN's headers exported with its
real prototype, computed by a Python kernel (aclnn_py's or a user's), refused clearly when
it has none; phase 1 refuses a bad call before anything runs; kernels run when the stream
runs its work and count like the C kernels."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from conftest import no_device_work

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py.ops import kernels as _kernels

pytestmark = pytest.mark.emulator_only

UNCOMPUTED = "aclnnSinc"  # declared by the emulator's headers, no kernel of aclnn_py's


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
    assert "self has dtype int32" in info.value.message
    after = aclnn_py.emulator.stats()
    assert after["kernel_launches"] == before["kernel_launches"]
    assert after["kernels_executed"] == before["kernels_executed"]
    assert after["live_executors"] == before["live_executors"]


def test_a_kernel_check_refuses_a_wrong_shape_with_cann_s_status():
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.call("aclnnMm", np.ones((2, 3), np.float32), np.ones((4, 5), np.float32),
                      cubeMathType=0, out=np.empty((2, 5), np.float32))
    assert info.value.status == 161002 and "cannot be multiplied" in info.value.message


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
                    z = aclnn_py.call("aclnnSquare", y, stream=stream)
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


def test_an_interrupt_inside_a_kernel_reaches_the_main_thread_and_leaves_nothing_behind(
        user_kernels):
    import time

    calls = []

    @aclnn_py.emulator.kernel("aclnnSinc", dtypes=["float32"])
    def ctrl_c(self, out):
        calls.append(1)
        raise KeyboardInterrupt  # as a Ctrl-C arriving while the kernel computes

    x = np.linspace(0.5, 2.0, 8, dtype=np.float32)
    aclnn_py.synchronize()
    before = aclnn_py.emulator.stats()
    message, interrupted = "", False
    try:  # no exception kept: its frames would hold the call's arrays
        try:
            aclnn_py.call(UNCOMPUTED, x)
        except aclnn_py.AclError as error:  # the kernel's failure, then the interrupt
            message = error.message
            for _ in range(500):  # the interrupt arrives at the next bytecode, within moments
                time.sleep(0.01)
    except KeyboardInterrupt:
        interrupted = True
    assert interrupted and calls == [1]
    assert "the kernel raised KeyboardInterrupt" in message
    aclnn_py.empty_cache()  # the launch cache's executor and staging blocks
    after = aclnn_py.emulator.stats()
    assert after["pending_tasks"] == 0
    for key in ("live_executors", "live_allocations", "live_host_allocations", "live_tensors"):
        assert after[key] == before[key], key

    @aclnn_py.emulator.kernel("aclnnSinc", dtypes=["float32"])
    def sinc(self, out):
        out[...] = np.sinc(self / np.pi)

    np.testing.assert_allclose(aclnn_py.call(UNCOMPUTED, x), np.sin(x) / x, rtol=1e-6)
