"""aclnn_py.testing.assert_close: CANN's precision standard as defaults, the failure
report, the ratio mode and the bit-exact mode."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from tolerances import BFLOAT16, DTYPES, FLOAT16, FLOAT32, golden_backward

import aclnn_py
from aclnn_py.testing import Tolerance, assert_close, default_tolerance

RNG = np.random.default_rng(12)


def failure(*args, **kwargs) -> str:
    with pytest.raises(AssertionError) as raised:
        assert_close(*args, **kwargs)
    return str(raised.value)


def test_default_tolerances_are_the_standards_thresholds():
    assert default_tolerance(np.float16) == Tolerance(10 * 2**-10, 10 * 2**-10 * 1e-7, 2**-10)
    assert default_tolerance(ml_dtypes.bfloat16) == Tolerance(10 * 2**-7, 10 * 2**-7 * 1e-7,
                                                              2**-7)
    assert default_tolerance(np.float32) == Tolerance(10 * 2**-13, 10 * 2**-13 * 1e-7, 2**-13)
    assert default_tolerance(np.int32) == Tolerance(0.0, 0.0, None)
    with pytest.raises(TypeError, match="no default tolerance for float64.*pass rtol and atol"):
        default_tolerance(np.float64)
    assert "experimental_standard.md" in assert_close.__doc__


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_operator_results_pass_against_a_float64_golden(dtype):
    x = RNG.standard_normal((6, 7)).astype(dtype)
    y = RNG.standard_normal(7).astype(dtype)
    golden = golden_backward(1.0, x, y, "mean")
    assert_close(aclnn_py.mse_loss_backward(1.0, x, y), golden)
    device = aclnn_py.mse_loss_backward(1.0, aclnn_py.to_device(x), y)
    assert isinstance(device, aclnn_py.DeviceArray)
    assert_close(device, golden)  # a device array is copied back after its work
    if dtype != FLOAT32:  # computed in float32 and rounded once (seeded data: no tie cases)
        assert_close(device, golden, bit_exact=True)


def test_the_report_names_count_share_worst_element_and_tolerance():
    expected = np.linspace(1, 2, 200).reshape(10, 20)
    actual = expected.astype(np.float16)
    actual[3, 4] *= np.float16(1.02)
    actual[7, 1] *= np.float16(1.05)
    text = failure(actual, expected)
    assert "Not close: 2 of 200 elements (1.000%) differ beyond the tolerance." in text
    worst = re.search(r"Worst element at index \(7, 1\): actual (\S+), expected (\S+) "
                      r"\(abs error (\S+), rel error (\S+)\)\.", text)
    assert worst, text
    assert np.float16(worst[1]) == actual[7, 1] and float(worst[2]) == expected[7, 1]
    assert float(worst[3]) == pytest.approx(abs(float(actual[7, 1]) - expected[7, 1]), rel=1e-6)
    assert float(worst[4]) == pytest.approx(0.05, rel=0.05)
    assert "rtol=0.00976562, atol=9.76562e-10; mean relative error < 0.000976562" in text
    assert "float16 defaults of CANN's ecosystem-operator precision standard" in text
    assert "dtypes: actual float16, expected float64." in text


def test_the_looser_dtype_sets_the_defaults():
    expected = np.full(8, 1.0, ml_dtypes.bfloat16)
    actual = np.full(8, 1.0 + 2**-7, np.float32)  # one bfloat16 ulp off: within bfloat16's
    assert_close(actual, expected)
    assert "float32 defaults" in failure(actual, expected.astype(np.float64))


def test_a_systematic_bias_fails_the_mean_criterion():
    expected = np.linspace(1, 2, 1000)
    actual = (expected * (1 + 0.004)).astype(np.float16)  # each within 10 * 2**-10
    text = failure(actual, expected)
    assert text.startswith("Not close: every element is within the tolerance, but the mean "
                           "relative error 0.004")
    assert "is not below 0.000976562" in text
    assert_close(actual, expected, rtol=0.005, atol=0)  # given tolerances: elements only


def test_given_tolerances():
    expected = np.array([0.0, 1.0, 100.0])
    assert_close(expected + [1e-3, 1e-3, 0.1], expected, rtol=1e-3, atol=1e-3)
    text = failure(expected + [2e-3, 0, 0], expected, rtol=1e-3, atol=1e-3)
    assert "Worst element at index (0,): actual 0.002, expected 0.0 (abs error 0.002, rel " \
           "error inf)" in text
    assert "rtol=0.001, atol=0.001 (given)" in text
    with pytest.raises(ValueError, match="both rtol and atol, or neither"):
        assert_close(expected, expected, rtol=1e-3)
    with pytest.raises(TypeError, match="float64"):
        assert_close(expected, expected)  # no standard threshold for float64 vs float64


def test_integers_compare_exactly():
    assert_close(np.arange(5), np.arange(5))
    assert "Not close: 1 of 5" in failure(np.arange(5), np.array([0, 1, 2, 3, 5]))


def test_nan_and_infinities():
    a = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    assert_close(a, a.copy())
    assert "index (1,): actual nan, expected nan" in failure(a, a.copy(), equal_nan=False)
    assert "index (2,): actual inf, expected 3.4028235e+38" in failure(
        a, np.array([1, np.nan, np.finfo(np.float32).max, -np.inf], np.float32))


def test_shapes_must_match():
    assert failure(np.zeros((2, 3), np.float32), np.zeros(3)) == \
        "shapes differ: actual (2, 3), expected (3,)"


def test_ratio_mode():
    expected = np.linspace(1, 2, 10_000)
    actual = expected.astype(np.float32)
    actual[:5] += 0.1  # 0.05% fail the element check
    assert_close(actual, expected, rtol=1e-3, atol=1e-3, mismatch_ratio=1e-3)
    actual[:20] += 0.1  # 0.2% fail
    text = failure(actual, expected, rtol=1e-3, atol=1e-3, mismatch_ratio=1e-3)
    assert "20 of 10000 elements (0.200%) differ beyond the tolerance (at most 0.001 " \
           "allowed)" in text
    actual[:20] = expected[:20]
    actual[100] = np.nan  # never covered by the allowance
    assert "1 of 10000" in failure(actual, expected, rtol=1e-3, atol=1e-3, mismatch_ratio=0.5)


@pytest.mark.parametrize("dtype", [FLOAT16, BFLOAT16, FLOAT32], ids=str)
def test_bit_exact(dtype):
    golden = np.array([1 / 3, -2.5, 1e-3, 7.0])
    rounded = golden.astype(dtype)
    assert_close(rounded, golden, bit_exact=True)
    off = rounded.copy()
    off.view(np.uint16 if dtype.itemsize == 2 else np.uint32)[0] += 1  # one ulp up
    text = failure(off, golden, bit_exact=True)
    assert f"Not bit-exact: 1 of 4 elements (25.000%) differ (expected float64 rounded to " \
           f"{dtype.name})." in text
    assert "First differing element at index (0,)" in text
    assert "1 units in the last place apart" in text
    assert f"identical bit patterns of {dtype.name}" in text
    assert_close(off, golden, rtol=1e-2, atol=0)  # close, just not bit-exact


def test_bit_exact_signs_and_nans():
    zero = np.zeros(2, np.float16)
    assert "Not bit-exact" in failure(zero, -zero, bit_exact=True)
    nans = np.array([0x7E00, 0x7E01], np.uint16).view(np.float16)  # two NaN payloads
    assert_close(nans, nans[::-1].copy(), bit_exact=True)
    assert "Not bit-exact: 2 of 2" in failure(nans, nans[::-1].copy(), bit_exact=True,
                                              equal_nan=False)
    with pytest.raises(ValueError, match="rtol and atol do not apply"):
        assert_close(zero, zero, bit_exact=True, rtol=0, atol=0)
    with pytest.raises(TypeError, match="got float64"):
        assert_close(np.zeros(2), np.zeros(2), bit_exact=True)
