"""The emulator's random fills (kernels/random_fills.py), judged statistically.

Random outputs cannot equal PyTorch's (nor the device's) bit for bit: each operator is checked
for what its doc promises, the mean, variance and bounds of its distribution and a
Kolmogorov-Smirnov test against its distribution function, always with fixed seeds so a test
never flakes, and for CANN's seed and offset contract: the same seed and offset give the same
numbers, another seed or offset other numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import aclnn_py
from aclnn_py.emulator._kernels.random_fills import RANDOM, mask_bytes

pytestmark = pytest.mark.emulator_only
PARAM_INVALID = 161002
COUNT = 20000
# The Kolmogorov-Smirnov statistic's critical value at the 0.1% level, 1.95 / sqrt(n)
KS_LIMIT = 1.95 / math.sqrt(COUNT)


def ks_statistic(sample: np.ndarray, cdf) -> float:
    """sup |F_n(x) - F(x)| of ``sample`` against the distribution function ``cdf``."""
    values = np.sort(np.asarray(sample, np.float64).reshape(-1))
    n = values.size
    expected = cdf(values)
    above = np.arange(1, n + 1) / n - expected
    below = expected - np.arange(n) / n
    return float(max(above.max(), below.max()))


def normal_cdf(mean: float, std: float):
    erf = np.vectorize(math.erf)
    return lambda x: 0.5 * (1.0 + erf((x - mean) / (std * math.sqrt(2.0))))


def fresh(dtype=np.float32, shape=(COUNT,)) -> np.ndarray:
    return np.zeros(shape, dtype)


# ---- normal ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_inplace_normal_follows_its_distribution(dtype) -> None:
    x = fresh(dtype)
    aclnn_py.call("aclnnInplaceNormal", x, 1.5, 2.0, 1234, 0)
    values = x.astype(np.float64)
    assert abs(values.mean() - 1.5) < 4 * 2.0 / math.sqrt(COUNT)
    assert abs(values.std() - 2.0) < 0.05
    tolerance = 0.002 if dtype == np.float16 else 0.0  # float16's rounding moves the steps
    assert ks_statistic(values, normal_cdf(1.5, 2.0)) < KS_LIMIT + tolerance


def test_same_seed_and_offset_repeat_and_others_differ() -> None:
    first, again, seed, offset = fresh(), fresh(), fresh(), fresh()
    aclnn_py.call("aclnnInplaceNormal", first, 0.0, 1.0, 7, 0)
    aclnn_py.call("aclnnInplaceNormal", again, 0.0, 1.0, 7, 0)
    aclnn_py.call("aclnnInplaceNormal", seed, 0.0, 1.0, 8, 0)
    aclnn_py.call("aclnnInplaceNormal", offset, 0.0, 1.0, 7, 4)
    np.testing.assert_array_equal(first, again)
    assert (first != seed).mean() > 0.99
    assert (first != offset).mean() > 0.99


def test_tensor_forms_read_seed_and_offset_tensors_plus_offset() -> None:
    """The seed and offset tensors give the numbers of the same seed and offset, offset
    added to offsetTensor's value (ops-math dsa_random_normal aclnn_normal.cpp)."""
    by_value, by_tensor = fresh(), fresh()
    aclnn_py.call("aclnnInplaceNormal", by_value, 0.0, 1.0, 11, 6)
    aclnn_py.call("aclnnInplaceNormalTensor", by_tensor, 0.0, 1.0, np.array([11], np.int64),
                  np.array([4], np.int64), 2)
    np.testing.assert_array_equal(by_value, by_tensor)
    uniform, uniform_tensor = fresh(), fresh()
    aclnn_py.call("aclnnInplaceUniform", uniform, 0.0, 1.0, 3, 5)
    aclnn_py.call("aclnnInplaceUniformTensor", uniform_tensor, 0.0, 1.0,
                  np.array([3], np.int64), np.array([5], np.int64), 0)
    np.testing.assert_array_equal(uniform, uniform_tensor)
    ints, ints_tensor = fresh(np.int32), fresh(np.int32)
    aclnn_py.call("aclnnInplaceRandom", ints, 0, 10, 3, 5)
    aclnn_py.call("aclnnInplaceRandomTensor", ints_tensor, 0, 10, np.array([3], np.int64),
                  np.array([5], np.int64), 0)
    np.testing.assert_array_equal(ints, ints_tensor)


def test_normal_out_forms_broadcast_mean_and_std() -> None:
    mean = np.array([[-10.0], [0.0], [10.0]], np.float32)
    std = np.array([[0.5, 1.0, 2.0, 4.0]], np.float32)
    out = aclnn_py.call("aclnnNormalTensorTensor", np.repeat(mean, 1, 1), std, 5, 0,
                        out=np.empty((3, 4), np.float32))
    assert out.shape == (3, 4)
    big = np.empty((COUNT,), np.float32)
    aclnn_py.call("aclnnNormalFloatFloat", -3.0, 0.5, 9, 0, out=big)
    assert ks_statistic(big, normal_cdf(-3.0, 0.5)) < KS_LIMIT
    stds = np.full((COUNT,), 3.0, np.float32)
    aclnn_py.call("aclnnNormalFloatTensor", 2.0, stds, 9, 1, out=big)
    assert ks_statistic(big, normal_cdf(2.0, 3.0)) < KS_LIMIT
    means = np.full((COUNT,), 4.0, np.float64)
    wide = np.empty((COUNT,), np.float64)
    aclnn_py.call("aclnnNormalTensorFloat", means, 0.25, 9, 2, out=wide)
    assert ks_statistic(wide, normal_cdf(4.0, 0.25)) < KS_LIMIT


def test_normal_refuses_a_negative_std_and_out_of_another_shape() -> None:
    with pytest.raises(aclnn_py.AclError) as error:
        aclnn_py.call("aclnnInplaceNormal", fresh(), 0.0, -1.0, 1, 0)
    assert error.value.status == PARAM_INVALID
    with pytest.raises(aclnn_py.AclError):
        aclnn_py.call("aclnnNormalTensorTensor", np.zeros((3, 1), np.float32),
                      np.ones((1, 4), np.float32), 1, 0, out=np.empty((3, 5), np.float32))
    with pytest.raises(aclnn_py.AclError):
        aclnn_py.call("aclnnInplaceNormalTensor", fresh(), 0.0, 1.0, np.array([1], np.int32),
                      np.array([0], np.int64), 0)


def test_empty_tensors_are_left_alone() -> None:
    for name, arguments in (("aclnnInplaceNormal", (0.0, 1.0, 1, 0)),
                            ("aclnnInplaceUniform", (0.0, 1.0, 1, 0)),
                            ("aclnnInplaceRandom", (0, 4, 1, 0))):
        empty = np.zeros((0, 3), np.float32)
        aclnn_py.call(name, empty, *arguments)
        assert empty.shape == (0, 3)


# ---- uniform and random integers ------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_inplace_uniform_stays_in_its_bounds_and_is_uniform(dtype) -> None:
    x = fresh(dtype)
    aclnn_py.call("aclnnInplaceUniform", x, -2.0, 6.0, 99, 0)
    values = x.astype(np.float64)
    assert values.min() >= -2.0 and values.max() < 6.0
    assert abs(values.mean() - 2.0) < 4 * 8 / math.sqrt(12 * COUNT)
    assert abs(values.var() - 64 / 12) < 0.15
    tolerance = 0.004 if dtype == np.float16 else 0.0
    assert ks_statistic(values, lambda v: (v + 2.0) / 8.0) < KS_LIMIT + tolerance


def test_inplace_uniform_refuses_from_above_to() -> None:
    with pytest.raises(aclnn_py.AclError) as error:
        aclnn_py.call("aclnnInplaceUniform", fresh(), 2.0, 1.0, 1, 0)
    assert error.value.status == PARAM_INVALID


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.uint8])
def test_inplace_random_draws_every_integer_of_its_range_evenly(dtype) -> None:
    x = fresh(dtype)
    aclnn_py.call("aclnnInplaceRandom", x, 3, 13, 5, 0)
    values = x.astype(np.int64)
    assert values.min() == 3 and values.max() == 12
    counts = np.bincount(values - 3, minlength=10)
    expected = COUNT / 10
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 27.9  # chi-square with 9 degrees of freedom at the 0.1% level


def test_inplace_random_refuses_an_empty_range() -> None:
    with pytest.raises(aclnn_py.AclError):
        aclnn_py.call("aclnnInplaceRandom", fresh(np.int32), 5, 5, 1, 0)


# ---- bernoulli ------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_bernoulli_draws_ones_with_probability_p(p) -> None:
    out = aclnn_py.call("aclnnBernoulli", fresh(), p, 21, 0, out=np.empty((COUNT,), np.float32))
    assert set(np.unique(out)) <= {0.0, 1.0}
    assert abs(out.mean() - p) < 4 * math.sqrt(p * (1 - p) / COUNT) + 1e-12
    target = fresh()
    aclnn_py.call("aclnnInplaceBernoulli", target, p, 21, 0)
    np.testing.assert_array_equal(target, out)


def test_bernoulli_tensor_takes_each_elements_probability() -> None:
    prob = np.tile(np.array([0.1, 0.5, 0.9], np.float32), (COUNT // 3, 1))
    out = aclnn_py.call("aclnnBernoulliTensor", np.zeros(prob.shape, np.float32), prob, 2, 0,
                        out=np.empty(prob.shape, np.float32))
    np.testing.assert_allclose(out.mean(axis=0), [0.1, 0.5, 0.9], atol=0.02)
    target = np.zeros(prob.shape, np.float32)
    aclnn_py.call("aclnnInplaceBernoulliTensor", target, prob, 2, 0)
    np.testing.assert_array_equal(target, out)


def test_bernoulli_refuses_a_probability_outside_0_1() -> None:
    with pytest.raises(aclnn_py.AclError) as error:
        aclnn_py.call("aclnnBernoulli", fresh(), 1.5, 1, 0, out=np.empty((COUNT,), np.float32))
    assert error.value.status == PARAM_INVALID


# ---- dropout --------------------------------------------------------------------------------


def test_dropout_mask_keeps_one_minus_prob_and_do_mask_scales() -> None:
    shape = (100, 200)
    size = mask_bytes(100 * 200)
    mask = aclnn_py.call("aclnnDropoutGenMaskV2Tensor", list(shape), 0.25,
                         np.array([5], np.int64), np.array([0], np.int64), 0, np.float32,
                         out=np.empty((size,), np.uint8))
    bits = np.unpackbits(mask, bitorder="little")
    assert abs(bits[:20000].mean() - 0.75) < 0.015
    assert not bits[20000:].any()
    again = aclnn_py.call("aclnnDropoutGenMask", list(shape), 0.25, 5, 0,
                          out=np.empty((size,), np.uint8))
    np.testing.assert_array_equal(mask, again)
    v2 = aclnn_py.call("aclnnDropoutGenMaskV2", list(shape), 0.25, 5, 0, np.float16,
                       out=np.empty((size,), np.uint8))
    np.testing.assert_array_equal(mask, v2)
    x = np.ones(shape, np.float32)
    out = aclnn_py.call("aclnnDropoutDoMask", x, mask, 0.25, out=np.empty(shape, np.float32))
    kept = bits[:20000].reshape(shape).astype(bool)
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    assert not out[~kept].any()


def test_dropout_mask_refuses_a_mask_of_another_size() -> None:
    with pytest.raises(aclnn_py.AclError):
        aclnn_py.call("aclnnDropoutGenMask", [10], 0.5, 1, 0, out=np.empty((8,), np.uint8))
    with pytest.raises(aclnn_py.AclError):
        aclnn_py.call("aclnnDropoutDoMask", np.ones((300,), np.float32),
                      np.zeros((16,), np.uint8), 0.5, out=np.empty((300,), np.float32))


# ---- multinomial and randperm ---------------------------------------------------------------


def test_multinomial_with_replacement_follows_the_weights() -> None:
    weights = np.array([[1.0, 2.0, 7.0], [0.0, 1.0, 0.0]], np.float32)
    out = aclnn_py.call("aclnnMultinomial", weights, COUNT, True, 4, 0,
                        out=np.empty((2, COUNT), np.int64))
    np.testing.assert_allclose(np.bincount(out[0], minlength=3) / COUNT, [0.1, 0.2, 0.7],
                               atol=0.015)
    assert (out[1] == 1).all()


def test_multinomial_without_replacement_draws_distinct_categories() -> None:
    weights = np.ones((50, 8), np.float32)
    out = aclnn_py.call("aclnnMultinomialTensor", weights, 8, False, np.array([1], np.int64),
                        np.array([0], np.int64), 0, out=np.empty((50, 8), np.int64))
    assert (np.sort(out, axis=1) == np.arange(8)).all()
    with pytest.raises(aclnn_py.AclError):
        aclnn_py.call("aclnnMultinomial", weights, 9, False, 1, 0,
                      out=np.empty((50, 9), np.int64))


def test_randperm_is_a_permutation() -> None:
    out = aclnn_py.call("aclnnRandperm", 1000, 3, 0, out=np.empty((1000,), np.int64))
    np.testing.assert_array_equal(np.sort(out), np.arange(1000))
    assert (out != np.arange(1000)).mean() > 0.9
    with pytest.raises(aclnn_py.AclError):
        aclnn_py.call("aclnnRandperm", 10, 3, 0, out=np.empty((9,), np.int64))


def test_every_random_kernel_is_tested_here() -> None:
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    for name in RANDOM:
        assert f'"{name}"' in source, name
