"""aclnn_py.mse_loss_backward over numpy, on the emulator."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import LEAK_KEYS, fired_faults, live_resources, no_device_work
from helpers import mse_backward

import aclnn_py
from aclnn_py import AclError


@pytest.mark.parametrize("reduction", ["none", "mean", "sum", 0, 1, 2, aclnn_py.Reduction.MEAN])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (2, 3, 4), (1, 2, 1, 2, 1, 2, 1, 2)])
def test_matches_the_formula(shape, reduction):
    rng = np.random.default_rng(len(shape))
    grad, x, y = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    result = aclnn_py.mse_loss_backward(grad, x, y, reduction=reduction)
    assert result.dtype == np.float32 and result.shape == shape
    np.testing.assert_allclose(result, mse_backward(grad, x, y, reduction), rtol=1e-5, atol=1e-7)


def test_empty_arrays_give_an_empty_result():
    empty = np.zeros((0, 3), np.float32)
    result = aclnn_py.mse_loss_backward(empty, empty, empty)
    assert result.shape == (0, 3) and result.dtype == np.float32


def test_results_are_new_arrays_and_inputs_are_untouched():
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    grad = np.ones(4, np.float32)
    copies = [a.copy() for a in (grad, x, y)]
    result = aclnn_py.mse_loss_backward(grad, x, y, "none")
    for original, copy in zip((grad, x, y), copies):
        np.testing.assert_array_equal(original, copy)
        assert not np.shares_memory(result, original)


def test_non_contiguous_host_arrays_are_accepted():
    x = np.arange(12, dtype=np.float32).reshape(3, 4).T
    y = np.ones((4, 3), np.float32)
    grad = np.full((4, 3), 0.5, np.float32)
    np.testing.assert_allclose(aclnn_py.mse_loss_backward(grad, x, y, "sum"),
                               mse_backward(grad, x, y, "sum"), rtol=1e-6)


@pytest.mark.parametrize("bad", [np.float64, np.int32, np.bool_, np.complex64])
def test_unsupported_dtypes_are_a_type_error_naming_the_argument(bad):
    good = np.ones(3, np.float32)
    with pytest.raises(TypeError, match=r"^y has dtype .*; supported dtypes are float32"):
        aclnn_py.mse_loss_backward(good, good, np.ones(3, bad))


def test_shape_mismatch_is_a_value_error_naming_the_shapes():
    with pytest.raises(ValueError, match=r"grad \(3,\), x \(4,\), y \(3,\)"):
        aclnn_py.mse_loss_backward(np.ones(3, np.float32), np.ones(4, np.float32),
                                   np.ones(3, np.float32))


@pytest.mark.parametrize("reduction", ["avg", 3, -1, 1.0, None, True])
def test_bad_reduction_is_a_value_error_listing_the_choices(reduction):
    a = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="reduction must be 'none', 'mean', 'sum', 0, 1, 2"):
        aclnn_py.mse_loss_backward(a, a, a, reduction)


@pytest.mark.parametrize("reduction", ["Mean", "SUM", "None"])
def test_reduction_names_are_exact(reduction):
    """Enumerated strings are matched exactly, never silently case-folded."""
    a = np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"got '\w+' \(the names are lower case, exactly\)$"):
        aclnn_py.mse_loss_backward(a, a, a, reduction)


def test_bad_input_does_no_device_work():
    aclnn_py.mse_loss_backward(np.ones(1, np.float32), np.ones(1, np.float32),
                               np.ones(1, np.float32))
    with no_device_work(), pytest.raises(TypeError):
        aclnn_py.mse_loss_backward(np.ones(3), np.ones(3), np.ones(3))


# Every C call on the operator's path, in order, with how many times one call of the
# operator makes it (after the warm-up below): a failure at any of them must raise AclError
# for that call and leave nothing behind. A fault armed for a later call than the last never
# fires, so only nth values up to the count are tested.
# The numpy path stages its copies: one page-locked block and one device block (plus the
# workspace), one asynchronous copy each way.
CALL_SEQUENCE = {"aclrtMallocHost": 1, "aclrtMalloc": 2, "aclrtMemcpyAsync": 2,
                 "aclCreateTensor": 4, "aclnnMseLossBackwardGetWorkspaceSize": 1,
                 "aclnnMseLossBackward": 1, "aclrtSynchronizeStream": 1}
FAULTS = [(api, nth) for api, calls in CALL_SEQUENCE.items() for nth in (1, 2, 4) if nth <= calls]


def _operands():
    x = np.arange(4, dtype=np.float32).reshape(2, 2).T  # non-contiguous host input
    ones = np.ones((2, 2), np.float32)
    aclnn_py.mse_loss_backward(ones, x, ones)  # warm up: default stream exists
    aclnn_py.empty_cache()  # allocations go to aclrtMalloc, not the pool's cache
    return ones, x


@pytest.mark.emulator_only
def test_the_operator_path_makes_each_call_as_often_as_listed():
    ones, x = _operands()
    never = 1_000_000
    for api in CALL_SEQUENCE:
        aclnn_py.emulator.inject_fault(api, 507899, nth=never)
    aclnn_py.mse_loss_backward(ones, x, ones)
    calls = {f["api"]: never - f["remaining"] for f in aclnn_py.emulator.faults()}
    assert calls == CALL_SEQUENCE


@pytest.mark.emulator_only
@pytest.mark.parametrize("api, nth", FAULTS)
def test_a_failure_at_any_call_raises_and_leaks_nothing(api, nth):
    ones, x = _operands()
    status = 507899
    aclnn_py.emulator.inject_fault(api, status, nth=nth)
    try:
        aclnn_py.mse_loss_backward(ones, x, ones)
    except AclError as error:  # (its traceback, which holds the call's frames, dies here)
        assert error.api == api
        # A NULL-returning creator has no status of its own: CANN's text carries it.
        assert error.status == (561103 if api == "aclCreateTensor" else status)
        assert f"injected fault, status {status}" in error.message
    else:
        pytest.fail(f"the fault at call {nth} of {api} did not make the operator fail")
    assert fired_faults() == [api]
    aclnn_py.emulator.clear_faults()
    assert live_resources() == dict.fromkeys(LEAK_KEYS, 0)
    np.testing.assert_allclose(aclnn_py.mse_loss_backward(ones, x, ones),
                               mse_backward(ones, x, ones, "mean"), rtol=1e-6)


def test_broadcast_rule_agrees_with_numpy():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from aclnn_py.engine.validate import broadcast_shapes

    shapes = st.lists(st.lists(st.integers(0, 3), max_size=5).map(tuple), min_size=1, max_size=3)

    @settings(max_examples=500, database=None, derandomize=True)
    @given(shapes)
    def agrees(candidate):
        try:
            expected = np.broadcast_shapes(*candidate)
        except ValueError:
            expected = None
        assert broadcast_shapes(candidate) == expected

    agrees()
