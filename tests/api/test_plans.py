"""Plans: phase 1 once with a repeatable executor, then relaunch with rebound arrays."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py


@pytest.fixture
def arrays():
    made = {"grad": aclnn_py.to_device(np.full((2, 3), 0.5, np.float32)),
            "x": aclnn_py.to_device(np.arange(6, dtype=np.float32).reshape(2, 3)),
            "y": aclnn_py.to_device(np.ones((2, 3), np.float32))}
    yield made
    for array in made.values():
        array.free()


def expected(grad, x, y, divisor):
    return (2.0 / divisor) * (x - y) * grad


@pytest.mark.emulator_only
def test_plan_runs_repeatedly_with_one_executor_and_workspace(arrays):
    before = aclnn_py.emulator.stats()
    with aclnn_py.MseLossBackwardPlan(arrays["grad"], arrays["x"], arrays["y"]) as plan:
        assert aclnn_py.emulator.stats()["live_executors"] == before["live_executors"] + 1
        for _ in range(5):
            out = plan.run()
        assert out is plan.out
        host = {k: v.numpy() for k, v in arrays.items()}
        np.testing.assert_allclose(out.numpy(), expected(host["grad"], host["x"], host["y"], 6))
        stats = aclnn_py.emulator.stats()
        assert stats["kernel_launches"] - before["kernel_launches"] == 5
        assert stats["live_executors"] == before["live_executors"] + 1
    assert aclnn_py.emulator.stats()["live_executors"] == before["live_executors"]
    out.free()


def test_run_rebinds_inputs_and_output(arrays):
    plan = aclnn_py.MseLossBackwardPlan(arrays["grad"], arrays["x"], arrays["y"], "sum")
    other_x = aclnn_py.to_device(np.full((2, 3), 4.0, np.float32))
    other_out = aclnn_py.empty((2, 3), np.float32)
    result = plan.run(x=other_x, out=other_out)
    assert result is other_out
    np.testing.assert_allclose(result.numpy(), np.full((2, 3), 2 * 3.0 * 0.5))
    plan.close()
    plan.close()
    with pytest.raises(ValueError, match="closed"):
        plan.run()
    with pytest.raises(ValueError, match="closed"):
        plan.out  # noqa: B018 - closing let go of it
    for array in (other_x, other_out):
        array.free()


def test_rebinding_a_different_description_is_a_value_error(arrays):
    with aclnn_py.MseLossBackwardPlan(arrays["grad"], arrays["x"], arrays["y"]) as plan:
        for wrong in (aclnn_py.to_device(np.ones((3, 2), np.float32)),
                      aclnn_py.to_device(np.ones((2, 3), np.float16)),
                      aclnn_py.to_device(np.ones((3, 2), np.float32).T)):
            with pytest.raises(ValueError, match=r"x must match the planned array: shape \(2, 3\)"):
                plan.run(x=wrong)
            wrong.free()
        with pytest.raises(TypeError, match="must be an aclnn_py.DeviceArray"):
            plan.run(y=np.ones((2, 3), np.float32))
        with pytest.raises(TypeError, match="unexpected"):
            plan.run(z=arrays["x"])


def test_plans_take_what_one_shot_calls_take(arrays):
    """numpy arrays and Python numbers are copied to the device once, at construction."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones(3, np.float32)
    with aclnn_py.MseLossBackwardPlan(2.0, x, y, "none") as plan:
        first = plan.run().numpy()
        x[...] = 0  # the plan holds its own copy
        second = plan.run().numpy()
        plan.run(x=arrays["x"])
        rebound = plan.out.numpy()
    expected = 2.0 * 2 * (np.arange(6, dtype=np.float32).reshape(2, 3) - 1.0)
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, expected)
    np.testing.assert_array_equal(rebound, 2.0 * 2 * (arrays["x"].numpy() - 1.0))
    assert first.dtype == np.float32
    mixed = aclnn_py.AddPlan(arrays["x"], np.ones((2, 3), np.float32), alpha=3)
    np.testing.assert_array_equal(mixed.run().numpy(), arrays["x"].numpy() + 3)
    mixed.close()
    with pytest.raises(TypeError, match="x has dtype float64"):
        aclnn_py.MseLossBackwardPlan(1.0, np.ones(3), np.ones(3, np.float32))


def test_forward_plan(arrays):
    with aclnn_py.MseLossPlan(arrays["x"], arrays["y"], "mean") as plan:
        value = float(plan.run().numpy())
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    assert value == pytest.approx(np.mean((x - 1) ** 2))


def test_plan_over_a_non_contiguous_view_uses_and_keeps_its_workspace(arrays):
    transposed = aclnn_py.to_device(np.arange(6, dtype=np.float32).reshape(3, 2).T)
    assert transposed.strides == (1, 2)
    with aclnn_py.MseLossBackwardPlan(arrays["grad"], transposed, arrays["y"], "none") as plan:
        first = plan.run().numpy()
        assert plan.workspace_size > 0  # known once phase 1 ran (at the first run on 8.0.RC2)
        second = plan.run().numpy()
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, 0.5 * 2 * (np.arange(6).reshape(3, 2).T - 1.0))
    transposed.free()


def _used_bytes() -> int:
    aclnn_py.synchronize()
    return aclnn_py.memory_info()["used_bytes"]


def test_a_closed_plan_holds_no_device_memory(arrays):
    """close() lets go of the executor, the workspace, out and the arrays bound (numpy
    inputs' device copies included); what run() returned stays valid."""
    baseline = _used_bytes()
    plan = aclnn_py.MseLossBackwardPlan(2.0, arrays["x"], np.ones((2, 3), np.float32), "none")
    out = plan.run()
    plan.close()  # right after run(), without synchronising
    np.testing.assert_allclose(out.numpy(), 2.0 * 2 * (arrays["x"].numpy() - 1.0))
    del out
    assert _used_bytes() == baseline
    assert "closed" in repr(plan) and "x=(2, 3) float32" in repr(plan)
    with pytest.raises(ValueError, match="closed"):
        plan.run()


def test_an_interrupt_anywhere_in_close_leaves_nothing_held_after_the_next_wait(arrays):
    """KeyboardInterrupt as each call inside close() starts, one at a time: the plan lets go
    of everything all the same, queued work finishes right, and the next synchronisation
    gives every byte back."""
    import sys

    baseline = _used_bytes()
    x = arrays["x"].numpy()
    for number in range(1000):
        plan = aclnn_py.MseLossPlan(arrays["x"], arrays["y"], "none")
        out = plan.run()
        entered: list[str] = []

        def hook(frame, event, arg, entered=entered, number=number):
            if event == "call" and frame.f_code.co_qualname != "Plan.close":
                entered.append(frame.f_code.co_qualname)  # the calls close() makes
                if len(entered) == number + 1:
                    raise KeyboardInterrupt

        sys.setprofile(hook)
        try:
            plan.close()
        except KeyboardInterrupt:
            pass
        finally:
            sys.setprofile(None)
        with pytest.raises(ValueError, match="closed"):
            plan.run()
        np.testing.assert_allclose(out.numpy(), (x - 1.0) ** 2)
        del out
        assert _used_bytes() == baseline, f"interrupted at {entered[-1]}"  # the plan kept
        del plan
        if len(entered) <= number:
            break  # every call made by close() was interrupted once
    assert number > 3


@pytest.mark.emulator_only
def test_a_run_whose_rebind_fails_queues_nothing_and_the_next_run_rebinds_again(arrays):
    """The rebinds happen in the host library's one call of a relaunch: a rebind CANN refuses
    raises its AclError with CANN's message and queues nothing, and the plan does not trust
    the half-done rebind: the next run binds every changed address again."""
    x1 = aclnn_py.to_device(np.full((2, 3), 4.0, np.float32))
    with aclnn_py.MseLossBackwardPlan(arrays["grad"], arrays["x"], arrays["y"]) as plan:
        plan.run()
        launches = aclnn_py.emulator.stats()["kernel_launches"]
        aclnn_py.emulator.inject_fault("aclSetInputTensorAddr", 161002)
        with pytest.raises(aclnn_py.AclError) as raised:
            plan.run(x=x1)
        assert raised.value.api == "aclSetInputTensorAddr"
        assert "injected fault" in str(raised.value)
        assert aclnn_py.emulator.stats()["kernel_launches"] == launches
        host = {k: v.numpy() for k, v in arrays.items()}
        out = plan.run(x=x1)
        np.testing.assert_allclose(out.numpy(), expected(host["grad"], 4.0, host["y"], 6))
        out = plan.run(x=arrays["x"])
        np.testing.assert_allclose(out.numpy(), expected(host["grad"], host["x"], host["y"], 6))
    aclnn_py.emulator.clear_faults()
    x1.free()
    out.free()
