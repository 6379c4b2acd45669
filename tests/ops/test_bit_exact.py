"""float16 and bfloat16 results compared bit for bit with a round-to-nearest-even reference.

The tolerance tests (``tests/tolerances.py``) accept a result one float16/bfloat16
step away from the correctly rounded value, so a kernel that truncated its float32
result when storing it would pass them. Here the reference is CANN's documented
formula (``grad * (x - y) * 2 / x.size`` for the backward's mean, ``grad * (x - y) * 2``
otherwise; ``(x - y) ** 2`` for ``mse_loss``, then its mean or sum) evaluated with
float32 intermediates and rounded once, to nearest even, to the result's dtype
(numpy's float32 -> float16 and ml_dtypes' float32 -> bfloat16 casts; when ``out``
has another dtype, rounded to the compute dtype and then to ``out``'s). Results
must match it bit for bit; any NaN matches any NaN.

Only cases whose reference cannot depend on how a kernel orders its float32
operations are used. Every operand is an integer times a power of two with few
significant bits, so that ``x - y``, its products with ``grad`` and with itself,
the factor 2 and a power-of-two mean divisor are exact in float32 in any order
(checked: every partial product, as a float64 number, must be a float32 number);
the sums of ``mse_loss`` are of integers below 2**24. The only rounding left is
the one to float16/bfloat16, and the data is chosen to exercise it: results below,
above and exactly at half a step, ties whose even neighbour is the upper one and
ties whose even neighbour is the lower one, both signs, float16 subnormals,
overflow to infinity and signed zeros. Every case set is checked to contain the
results where truncation and round-to-nearest-even disagree.
"""

from __future__ import annotations

from collections import Counter
from math import isqrt
from typing import Any

import numpy as np
import pytest
from ml_dtypes import bfloat16

import aclnn_py

F16 = np.dtype(np.float16)
BF16 = np.dtype(bfloat16)
F32 = np.dtype(np.float32)
HALVES = (F16, BF16)
HALF_IDS = ["float16", "bfloat16"]

# Significand bits (the implicit one included) and the exponent of the smallest normal number.
PRECISION = {F16: 11, BF16: 8}
MIN_EXPONENT = {F16: -14, BF16: -126}
ROUNDING_CASES = ("below half", "tie to the lower even", "tie to the upper even", "above half")


# --- the reference ------------------------------------------------------------------------

def float32_exact(value: Any) -> bool:
    """Whether every finite element of the float64 ``value`` is a float32 number."""
    value = np.asarray(value, np.float64)
    finite = np.isfinite(value)
    with np.errstate(over="ignore"):
        as32 = value.astype(np.float32).astype(np.float64)
    return bool(np.array_equal(as32[finite], value[finite]))


def rne(value: Any, *dtypes: Any) -> np.ndarray:
    """The float32 number ``value`` rounded to nearest even through each of ``dtypes``."""
    value = np.asarray(value, np.float64)
    assert float32_exact(value)
    result = value.astype(np.float32)
    with np.errstate(over="ignore"):
        for dtype in dtypes:
            result = result.astype(np.float32).astype(dtype)
    return result


def backward_reference(grad: Any, x: Any, y: Any, divisor: int = 1) -> np.ndarray:
    """``grad * (x - y) * 2 / divisor`` as float32, exact whatever the order of its steps.

    ``x - y`` is exact in float64 (the operands span fewer than 53 bits; checked with
    Knuth's two-sum error term), a product of two float32 numbers is exact in float64,
    and powers of two scale exactly; so each float64 value below is the exact one, and
    when all of them are float32 numbers any float32 evaluation order gives the result.
    """
    assert divisor > 0 and divisor & (divisor - 1) == 0, "only power-of-two divisors are exact"
    g, a, b = (np.asarray(v).astype(np.float64) for v in (grad, x, y))
    with np.errstate(invalid="ignore", over="ignore"):
        d = a - b
        swap = d - a
        error = (a - (d - swap)) + (-b - swap)
        assert np.all(error[np.isfinite(error)] == 0), "x - y is not exact"
        scale = 2.0 / divisor
        steps = [d, g, d * g, d * 2.0, g * 2.0, d / divisor, g / divisor, d * scale, g * scale,
                 d * g * 2.0, d * g / divisor]
        result = d * g * scale
    for step in steps:
        assert float32_exact(step), "an intermediate is not exact in float32"
    assert float32_exact(result)
    # the documented order in float32 gives the same numbers, bit for bit
    with np.errstate(invalid="ignore", over="ignore"):
        literal = (np.asarray(grad, np.float32) * (np.asarray(x, np.float32)
                   - np.asarray(y, np.float32)) * np.float32(2) / np.float32(divisor))
    np.testing.assert_array_equal(literal.astype(np.float64), result)
    return result.astype(np.float32)


def squares_reference(x: Any, y: Any) -> np.ndarray:
    """``(x - y) ** 2`` as float32, exact (see backward_reference)."""
    a, b = (np.asarray(v).astype(np.float64) for v in (x, y))
    with np.errstate(invalid="ignore", over="ignore"):
        d = a - b
        result = d * d
    assert float32_exact(d) and float32_exact(result)
    return result.astype(np.float32)


def rounding_case(exact: Any, dtype: Any) -> np.ndarray:
    """How each float32 number rounds to ``dtype``: "exact", "below half", ..., by a rule of
    its own (the neighbour toward zero, its step, the remainder); also checks that rne()
    rounds as that rule says."""
    dtype = np.dtype(dtype)
    value = np.asarray(exact, np.float64).reshape(-1)
    rounded = rne(value, dtype)
    magnitude = rounded.view(np.uint16).astype(np.int64) & 0x7FFF
    finite = np.isfinite(value)
    grew = np.zeros(value.shape, bool)
    grew[finite] = np.abs(rounded[finite].astype(np.float64)) > np.abs(value[finite])
    toward_zero = magnitude - grew
    lower = toward_zero.astype(np.uint16).view(dtype).astype(np.float64)
    _, exponent = np.frexp(lower)
    exponent = np.where(lower == 0, MIN_EXPONENT[dtype], np.maximum(exponent - 1,
                                                                    MIN_EXPONENT[dtype]))
    step = np.ldexp(1.0, exponent - PRECISION[dtype] + 1)
    with np.errstate(invalid="ignore"):
        remainder = np.abs(value) - lower
    odd = toward_zero % 2 == 1
    cases = np.select(
        [~finite, remainder == 0, remainder < step / 2, (remainder == step / 2) & ~odd,
         remainder == step / 2],
        ["special", "exact", "below half", "tie to the lower even", "tie to the upper even"],
        "above half")
    up = np.isin(cases, ("tie to the upper even", "above half"))
    assert np.array_equal((magnitude - toward_zero)[finite], up[finite].astype(np.int64)), \
        "the reference does not round to nearest even"
    return cases


def assert_exercises_rounding(exact: Any, dtype: Any, *, ties_up: bool = True,
                              signed: bool = True) -> None:
    """The float32 results, rounded to ``dtype``, include every rounding case, with both signs
    (when ``signed``) where the result is rounded up: there truncation gives another answer."""
    value = np.asarray(exact, np.float64).reshape(-1)
    cases = rounding_case(value, dtype)
    wanted = [c for c in ROUNDING_CASES if ties_up or c != "tie to the upper even"]
    seen = Counter(zip(cases, np.signbit(value)))
    signs = (False, True) if signed else (False,)
    missing = [(c, "-" if negative else "+") for c in wanted for negative in signs
               if c in ("tie to the upper even", "above half") and not seen[(c, negative)]]
    missing += [c for c in wanted if not any(seen[(c, s)] for s in (False, True))]
    assert not missing, f"the data does not exercise {missing}"


def assert_bits_equal(actual: Any, expected: Any) -> None:
    """Same dtype, shape and bits; any NaN matches any NaN."""
    assert isinstance(actual, np.ndarray), type(actual)
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    unsigned = np.dtype(f"u{actual.dtype.itemsize}")
    got = np.ascontiguousarray(actual).reshape(-1)
    want = np.ascontiguousarray(expected).reshape(-1)
    got_nan = np.isnan(got.astype(np.float32))
    want_nan = np.isnan(want.astype(np.float32))
    bad = np.flatnonzero((got_nan != want_nan) | (~want_nan & (got.view(unsigned)
                                                               != want.view(unsigned))))
    if bad.size:
        width = 2 * actual.dtype.itemsize
        lines = [f"  [{i}] got 0x{int(got.view(unsigned)[i]):0{width}x} ({got[i]!r}), expected "
                 f"0x{int(want.view(unsigned)[i]):0{width}x} ({want[i]!r})" for i in bad[:8]]
        pytest.fail(f"{bad.size} of {want.size} elements differ bitwise:\n" + "\n".join(lines))


# --- the data -----------------------------------------------------------------------------

def gradients(rng: np.random.Generator, dtype: Any, shape: tuple[int, ...],
              exponents: tuple[int, int] = (-3, 3)) -> np.ndarray:
    """Odd integers below 16 (4 bits: exact in every dtype), signed, times 2**e."""
    odd = 2 * rng.integers(0, 8, size=shape) + 1
    sign = rng.choice([-1.0, 1.0], size=shape)
    values = np.ldexp(sign * odd, rng.integers(*exponents, size=shape))
    return values.astype(dtype)


def operands(rng: np.random.Generator, dtype: Any, x_shape, y_shape, exponents,
             exponent_shape, bits: int | None = None):
    """x and y on a shared grid: the exponent of an element depends on exponent_shape's axes,
    which broadcast against both shapes, so x - y is an integer of at most bits + 1 bits times
    that power of two."""
    dtype = np.dtype(dtype)
    bits = PRECISION[dtype] if bits is None else bits
    e = rng.integers(*exponents, size=exponent_shape)
    out = []
    for shape in (x_shape, y_shape):
        k = rng.integers(-(2**bits) + 1, 2**bits, size=shape).astype(np.float64)
        values = np.ldexp(k, e)
        assert values.shape == shape, (values.shape, shape)
        cast = values.astype(dtype)
        assert np.array_equal(cast.astype(np.float64), values)
        out.append(cast)
    return out


# Exponent ranges keep float16 results finite (float16 operands are integers below 2**11
# times 2**e, grads up to 15 * 4) and reach float16's subnormals; bfloat16 has room to spare.
BACKWARD_EXPONENTS = {F16: (-14, -3), BF16: (-20, 20)}
MEAN_EXPONENTS = {F16: (-8, 5), BF16: (-20, 20)}
SQUARE_EXPONENTS = {F16: (-12, -5), BF16: (-30, 30)}


def backward_case(pattern: str, dtype: Any, seed: int):
    """grad, x, y for a broadcasting pattern: which kernel path runs (vector + tail,
    scalar grad, element by element)."""
    rng = np.random.default_rng(seed)
    exponents = BACKWARD_EXPONENTS[np.dtype(dtype)]
    if pattern == "same":  # contiguous: 4-lane body and a scalar tail (1027 = 4 * 256 + 3)
        x, y = operands(rng, dtype, (3, 1027), (3, 1027), exponents, (3, 1027))
        return gradients(rng, dtype, (3, 1027)), x, y
    if pattern == "scalar_grad":  # a 0-d grad: the kernel's broadcast-scalar path
        x, y = operands(rng, dtype, (2, 515), (2, 515), exponents, (2, 515))
        return np.asarray(-0.75, dtype), x, y
    if pattern == "python_grad":  # a Python number takes x's dtype
        x, y = operands(rng, dtype, (1030,), (1030,), exponents, (1030,))
        return 1.25, x, y
    if pattern == "column":  # x a column against the matrix y: element by element
        x, y = operands(rng, dtype, (96, 1), (96, 37), exponents, (96, 1))
        return gradients(rng, dtype, (96, 37)), x, y
    raise AssertionError(pattern)


def typed(grad: Any, dtype: Any) -> np.ndarray:
    return np.asarray(grad, dtype) if isinstance(grad, float) else grad


# --- the reference's own rounding ---------------------------------------------------------

def test_the_reference_casts_round_to_nearest_even():
    cases = {  # float32 value: its float16 / bfloat16 rounding
        F16: [(1 + 2**-11, 1.0), (1 + 3 * 2**-11, 1 + 2**-9), (1 + 2**-11 + 2**-20, 1 + 2**-10),
              (-(1 + 3 * 2**-11), -(1 + 2**-9)), (2.5 * 2**-24, 2 * 2**-24),
              (3.5 * 2**-24, 4 * 2**-24), (65520.0, np.inf), (65519.0, 65504.0)],
        BF16: [(1 + 2**-8, 1.0), (1 + 3 * 2**-8, 1 + 2**-6), (1 + 2**-8 + 2**-20, 1 + 2**-7),
               (-(1 + 3 * 2**-8), -(1 + 2**-6)), (511.0 * 2**119, np.inf)],
    }
    for dtype, pairs in cases.items():
        for value, expected in pairs:
            assert rne(value, dtype).astype(np.float64) == expected, (dtype, value)
            # the independent rule agrees (it asserts so itself)
            rounding_case(value, dtype)


# --- mse_loss_backward ----------------------------------------------------------------------

@pytest.mark.parametrize("reduction", ["none", "sum"])
@pytest.mark.parametrize("pattern", ["same", "scalar_grad", "python_grad", "column"])
@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
def test_backward_none_and_sum_round_to_nearest_even(dtype, pattern, reduction):
    grad, x, y = backward_case(pattern, dtype, seed=PRECISION[dtype] * 100 + len(pattern))
    exact = backward_reference(typed(grad, dtype), x, y)
    assert_exercises_rounding(exact, dtype)
    result = aclnn_py.mse_loss_backward(grad, x, y, reduction)
    assert_bits_equal(result, rne(exact, dtype))


@pytest.mark.parametrize("shapes", [((16, 64), (16, 64), (16, 64)), ((256,), (4, 256), ())],
                         ids=["same", "x_broadcast"])
@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
def test_backward_mean_with_a_power_of_two_size_rounds_to_nearest_even(dtype, shapes):
    x_shape, y_shape, grad_shape = shapes
    rng = np.random.default_rng(7 + PRECISION[dtype])
    x, y = operands(rng, dtype, x_shape, y_shape, MEAN_EXPONENTS[dtype], x_shape)
    grad = gradients(rng, dtype, grad_shape)
    exact = backward_reference(grad, x, y, divisor=x.size)  # the divisor is x.size
    assert_exercises_rounding(exact, dtype)
    result = aclnn_py.mse_loss_backward(grad, x, y, "mean")
    assert_bits_equal(result, rne(exact, dtype))


# grad, x, y (each exactly representable) and what the exact result is about
EDGES = {
    F16: [
        (3.0, 10920.0, 0.0),            # 65520: a tie between 65504 and infinity -> infinity
        (201.0, 163.0, 0.0),            # 65526: above half -> infinity
        (19.0, 1724.0, 0.0),            # 65512: below half -> 65504
        (1.0, 32752.0, 0.0),            # 65504 exactly
        (-3.0, 10920.0, 0.0),           # -65520 -> -infinity
        (1.25, 2.0**-24, 0.0),          # 2.5 subnormal steps -> 2 (even)
        (0.75, 2.0**-24, 0.0),          # 1.5 steps -> 2 (even)
        (1.75, 2.0**-24, 0.0),          # 3.5 steps -> 4 (even)
        (-1.75, 2.0**-24, 0.0),         # -3.5 steps -> -4
        (0.25, 2.0**-24, 0.0),          # 0.5 steps -> +0
        (-0.25, 2.0**-24, 0.0),         # -0.5 steps -> -0
        (23 * 2.0**-6, 89 * 2.0**-20, 0.0),  # halfway from the largest subnormal to 2**-14
        (1.0, 3.0, 3.0),                # +0
        (-1.0, 3.0, 3.0),               # -0
        (-2.0, -0.0, 0.0),              # (-0) * 2 * -2 = +0
        (1.0, np.inf, 1.0), (-1.0, np.inf, 1.0), (1.0, 1.0, -np.inf),
        (0.0, np.inf, 1.0), (1.0, np.inf, np.inf), (1.0, np.nan, 0.0), (np.nan, 1.0, 0.0),
    ],
    BF16: [
        (7.0, 73 * 2.0**118, 0.0),      # 511 * 2**119: a tie between the largest bfloat16 and inf
        (-7.0, 73 * 2.0**118, 0.0),
        (3.0, 43.0, 0.0),               # 258: exact
        (3.0, 43.0, 0.5),               # 255: exact
        (1.5, 1 + 2.0**-7, 0.0),        # 3 + 3 * 2**-7: above half
        (1.0, 3.0, 3.0), (-1.0, 3.0, 3.0), (-2.0, -0.0, 0.0),
        (1.0, np.inf, 1.0), (-1.0, np.inf, 1.0), (1.0, 1.0, -np.inf),
        (0.0, np.inf, 1.0), (1.0, np.inf, np.inf), (1.0, np.nan, 0.0), (np.nan, 1.0, 0.0),
    ],
}


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
def test_backward_edges_overflow_subnormals_zeros_and_specials(dtype):
    values = np.array(EDGES[dtype], np.float64)
    grad, x, y = (values[:, i].astype(dtype) for i in range(3))
    for typed_values, wanted in zip((grad, x, y), values.T):
        np.testing.assert_array_equal(typed_values.astype(np.float64), wanted)  # representable
    exact = backward_reference(grad, x, y)
    result = aclnn_py.mse_loss_backward(grad, x, y, "none")
    assert_bits_equal(result, rne(exact, dtype))
    if dtype == F16:
        assert np.isposinf(result[0]) and np.isneginf(result[4])
        assert result[11].view(np.uint16) == 0x0400  # the tie reaches the smallest normal
        assert [result[i].view(np.uint16) for i in (9, 10, 12, 13, 14)] == [0, 0x8000, 0,
                                                                             0x8000, 0]


# --- mse_loss -------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern", ["same", "column"])
@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
def test_loss_none_rounds_to_nearest_even(dtype, pattern):
    rng = np.random.default_rng(31 + PRECISION[dtype])
    if pattern == "same":
        x, y = operands(rng, dtype, (5, 203), (5, 203), SQUARE_EXPONENTS[dtype], (5, 203))
    else:
        x, y = operands(rng, dtype, (40, 1), (40, 23), SQUARE_EXPONENTS[dtype], (40, 1))
    exact = squares_reference(x, y)
    # (x - y)**2 is an odd square times a power of two: 1 mod 8, so it never ties upward
    assert_exercises_rounding(exact, dtype, ties_up=False, signed=False)
    result = aclnn_py.mse_loss(x, y, "none")
    assert_bits_equal(result, rne(exact, dtype))


def squares_summing_to(total: int, count: int = 4) -> list[int]:
    """``count`` non-negative integers whose squares add up to ``total`` (Lagrange: 4 suffice)."""
    def search(rest: int, left: int, cap: int) -> list[int] | None:
        if rest == 0:
            return [0] * left
        if left == 0:
            return None
        for a in range(min(isqrt(rest), cap), 0, -1):
            tail = search(rest - a * a, left - 1, a)
            if tail is not None:
                return [a, *tail]
        return None

    found = search(total, count, isqrt(total))
    assert found is not None and sum(a * a for a in found) == total
    return found


# float32 results (integers, exact in any summation order) and how they round
LOSS_TOTALS = {
    F16: [2049, 2051, 2050, 4097, 4099, 4098, 4102, 65519, 65520],
    BF16: [257, 259, 258, 513, 515, 514, 518],
}


@pytest.mark.parametrize("inputs", ["same", "float32"], ids=["half_inputs", "float32_inputs"])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
def test_loss_sum_and_mean_of_integers_round_to_nearest_even(dtype, reduction, inputs):
    n = 8  # mean: the broadcast size, a power of two, divides exactly
    totals = LOSS_TOTALS[dtype]
    assert_exercises_rounding(np.array(totals, np.float64), dtype, signed=False)
    rng = np.random.default_rng(5)
    input_dtype = dtype if inputs == "same" else F32
    for total in totals:
        differences = squares_summing_to(total * (n if reduction == "mean" else 1))
        signs = rng.choice([-1, 1], size=n)
        d = np.array(differences + [0] * (n - 4)) * signs
        y = rng.integers(-64, 65, size=n)
        x = y + d
        x_typed, y_typed = x.astype(input_dtype), y.astype(input_dtype)
        assert np.array_equal(x_typed.astype(np.int64), x)
        assert np.array_equal(y_typed.astype(np.int64), y)
        assert int(np.sum(d.astype(np.int64) ** 2)) < 2**24
        if inputs == "same":
            result = aclnn_py.mse_loss(x_typed, y_typed, reduction)
        else:
            result = aclnn_py.mse_loss(x_typed, y_typed, reduction, out=np.zeros((), dtype))
        assert_bits_equal(result, rne(total, dtype))


# --- out= of another dtype: CANN computes in the inputs' dtype, then casts ----------------

def float32_around_every_step(dtype: Any) -> np.ndarray:
    """For every finite ``dtype`` number v >= 0 (bfloat16: normal, below 2**127): v plus 0, 1/4,
    1/2 - 2**-12, 1/2, 1/2 + 2**-12 and 3/4 of its step, both signs: float32 numbers."""
    dtype = np.dtype(dtype)
    if dtype == F16:
        bits = np.arange(0x0000, 0x7C00, dtype=np.uint16)
    else:
        bits = np.arange(0x0080, 0x7F00, dtype=np.uint16)
    lower = bits.view(dtype).astype(np.float64)
    step = (bits + 1).astype(np.uint16).view(dtype).astype(np.float64) - lower
    if dtype == F16:
        step[-1] = 32.0  # beyond 65504 (infinity's bits) the step would be 32
    fractions = np.array([0, 0.25, 0.5 - 2**-12, 0.5, 0.5 + 2**-12, 0.75])
    values = (lower[:, None] + step[:, None] * fractions).reshape(-1)
    values = np.concatenate([values, -values])
    assert float32_exact(values)
    return values.astype(np.float32)


@pytest.mark.parametrize("out_dtype", HALVES, ids=HALF_IDS)
def test_backward_float32_inputs_cast_to_out_rounds_to_nearest_even(out_dtype):
    r = float32_around_every_step(out_dtype)
    grad, y = np.float32(0.5), np.float32(0)
    exact = backward_reference(grad, r, y)  # = r, in any order
    np.testing.assert_array_equal(exact, r)
    assert_exercises_rounding(exact, out_dtype)
    out = np.empty(r.shape, out_dtype)
    assert aclnn_py.mse_loss_backward(grad, r, y, "none", out=out) is out
    assert_bits_equal(out, rne(exact, out_dtype))


@pytest.mark.parametrize("out_dtype", HALVES, ids=HALF_IDS)
def test_loss_none_float32_inputs_cast_to_out_rounds_to_nearest_even(out_dtype):
    rng = np.random.default_rng(11)
    # |x|, |y| below 2**11 on one grid: (x - y)**2 has at most 24 bits
    x, y = operands(rng, F32, (9, 131), (9, 131), SQUARE_EXPONENTS[F16], (9, 131), bits=11)
    exact = squares_reference(x, y)
    assert_exercises_rounding(exact, out_dtype, ties_up=False, signed=False)
    out = np.empty(x.shape, out_dtype)
    assert aclnn_py.mse_loss(x, y, "none", out=out) is out
    assert_bits_equal(out, rne(exact, out_dtype))


@pytest.mark.parametrize(("dtype", "out_dtype"),
                         [(F16, BF16), (BF16, F16), (F16, F32), (BF16, F32)],
                         ids=["float16-bfloat16", "bfloat16-float16", "float16-float32",
                              "bfloat16-float32"])
def test_half_inputs_round_in_their_dtype_then_cast_to_out(dtype, out_dtype):
    grad, x, y = backward_case("same", dtype, seed=3)
    exact = backward_reference(grad, x, y)
    assert_exercises_rounding(exact, dtype)
    out = np.empty(exact.shape, out_dtype)
    assert aclnn_py.mse_loss_backward(grad, x, y, "none", out=out) is out
    assert_bits_equal(out, rne(exact, dtype, out_dtype))

    x, y = operands(np.random.default_rng(4), dtype, (7, 77), (7, 77), SQUARE_EXPONENTS[dtype],
                    (7, 77))
    exact = squares_reference(x, y)
    out = np.empty(exact.shape, out_dtype)
    assert aclnn_py.mse_loss(x, y, "none", out=out) is out
    assert_bits_equal(out, rne(exact, dtype, out_dtype))
