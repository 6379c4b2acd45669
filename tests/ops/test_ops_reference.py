"""mse_loss_backward and mse_loss against a float64 reference (and PyTorch when installed).

Golden semantics and tolerances: ``tests/tolerances.py``. The PyTorch checks run
``torch.ops.aten.mse_loss_backward`` / ``F.mse_loss`` on float64 copies of the
inputs and round the result to the dtype, so they pin the semantics (divisor,
broadcasting, reductions) independently of the numpy reference.
"""

from __future__ import annotations

from typing import Any, Callable

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tolerances import (
    BFLOAT16,
    DTYPES,
    FLOAT16,
    FLOAT32,
    REDUCTIONS,
    assert_close,
    golden_backward,
    golden_loss,
    rounded,
    tolerance,
)

import aclnn_py

REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}
DTYPE_IDS = [d.name for d in DTYPES]


def random(shape: tuple[int, ...], dtype: Any, seed: int, low: float = -4.0,
           high: float = 4.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, size=shape).astype(dtype)


def check_backward(grad: Any, x: Any, y: Any, reduction: str, dtype: Any) -> np.ndarray:
    """Run mse_loss_backward, compare with the reference, check inputs are untouched."""
    inputs = [a for a in (grad, x, y) if isinstance(a, np.ndarray)]
    before = [a.copy() for a in inputs]
    result = aclnn_py.mse_loss_backward(grad, x, y, reduction)
    typed_grad = np.asarray(grad, dtype) if isinstance(grad, float) else grad
    assert_close(result, golden_backward(typed_grad, x, y, reduction), dtype)
    for original, copy in zip(inputs, before):
        assert original.tobytes() == copy.tobytes()  # bit for bit, NaNs included
        assert not np.shares_memory(result, original)
    return result


# --- broadcasting patterns ----------------------------------------------------------------

def _same(dtype):
    return random((3, 4), dtype, 1), random((3, 4), dtype, 2), random((3, 4), dtype, 3)


def _scalar_grad(dtype):  # what autograd passes for a "mean"/"sum" loss
    return random((), dtype, 1), random((3, 4), dtype, 2), random((3, 4), dtype, 3)


def _python_grad(dtype):  # a bare Python number takes x's dtype
    return 0.75, random((3, 4), dtype, 2), random((3, 4), dtype, 3)


def _column(dtype):  # y a column against the matrix x
    return random((3, 4), dtype, 1), random((3, 4), dtype, 2), random((3, 1), dtype, 3)


def _all_three(dtype):  # every input broadcast; x smaller than the result
    return random((1, 4), dtype, 1), random((3, 1), dtype, 2), random((2, 1, 1), dtype, 3)


PATTERNS: dict[str, Callable[[Any], tuple[Any, Any, Any]]] = {
    "same": _same, "scalar_grad": _scalar_grad, "python_grad": _python_grad,
    "column": _column, "all_three": _all_three,
}


@pytest.mark.parametrize("pattern", list(PATTERNS))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_backward_broadcasting_patterns(dtype, reduction, pattern):
    grad, x, y = PATTERNS[pattern](dtype)
    result = check_backward(grad, x, y, reduction, dtype)
    assert result.shape == np.broadcast_shapes(np.shape(grad), x.shape, y.shape)


def test_mean_divides_by_x_size_not_the_broadcast_size():
    x = np.full((3, 1), 2.0, np.float32)
    y = np.zeros((2, 3, 4), np.float32)
    result = aclnn_py.mse_loss_backward(np.float32(1), x, y, "mean")
    assert result.shape == (2, 3, 4)
    np.testing.assert_array_equal(result, np.full((2, 3, 4), 2 * 2.0 / 3, np.float32))


@pytest.mark.parametrize("pattern", list(PATTERNS))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_backward_matches_torch(dtype, reduction, pattern):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
    grad, x, y = PATTERNS[pattern](dtype)
    grad = np.asarray(grad, dtype)
    result = aclnn_py.mse_loss_backward(grad, x, y, reduction)
    expected = torch.ops.aten.mse_loss_backward(
        *(torch.from_numpy(a.astype(np.float64)) for a in (grad, x, y)), REDUCTION_ENUM[reduction])
    assert_close(result, expected.numpy(), dtype)


# --- ranks 0 to 8 -------------------------------------------------------------------------

def rank_shape(rank: int) -> tuple[int, ...]:
    return tuple((2, 3, 1, 2, 3, 1, 2, 2)[:rank])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("rank", range(9))
def test_backward_every_rank(rank, dtype, reduction):
    shape = rank_shape(rank)
    grad = random(() if reduction != "none" else shape, dtype, rank)
    check_backward(grad, random(shape, dtype, 10 + rank), random(shape, dtype, 20 + rank),
                   reduction, dtype)


@pytest.mark.parametrize("rank", range(9))
def test_backward_broadcasts_up_to_rank_8(rank):
    # x of the full rank, y a single row and grad a single column of it
    shape = rank_shape(rank)
    x = random(shape, np.float32, 1)
    y = random(shape[-1:], np.float32, 2)
    grad = random(shape[:-1] + (1,) if rank else (), np.float32, 3)
    check_backward(grad, x, y, "none", FLOAT32)


# --- layouts ------------------------------------------------------------------------------

def _layout_c(a):
    return np.ascontiguousarray(a)


def _layout_fortran(a):
    return np.asfortranarray(a)


def _layout_sliced(a):  # gaps: every other row, every third column of a larger array
    big = np.zeros((a.shape[0] * 2, a.shape[1] * 3), a.dtype)
    big[::2, 1::3] = a
    return big[::2, 1::3]


def _layout_transposed(a):
    return np.ascontiguousarray(a.T).T


def _layout_negative(a):  # negative strides on both axes
    return np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1]


def _layout_readonly(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def _layout_broadcast(a):  # zero strides: np.broadcast_to of the first row
    return np.broadcast_to(a[:1], a.shape)


LAYOUTS = {
    "C": _layout_c, "fortran": _layout_fortran, "sliced": _layout_sliced,
    "transposed": _layout_transposed, "negative_stride": _layout_negative,
    "read_only": _layout_readonly, "broadcast_to": _layout_broadcast,
}


@pytest.mark.parametrize("which", ["grad", "x", "y", "all"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_backward_layouts(dtype, layout, which):
    arrays = {name: random((5, 7), dtype, seed) for seed, name in enumerate(("grad", "x", "y"))}
    for name in arrays:
        if which in (name, "all"):
            arrays[name] = LAYOUTS[layout](arrays[name])
    if layout == "broadcast_to":
        assert 0 in arrays[which if which != "all" else "x"].strides
    for reduction in REDUCTIONS:
        check_backward(arrays["grad"], arrays["x"], arrays["y"], reduction, dtype)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_loss_layouts(layout):
    x = LAYOUTS[layout](random((5, 7), FLOAT32, 1))
    y = LAYOUTS[layout](random((5, 7), FLOAT32, 2))
    for reduction in REDUCTIONS:
        assert_close(aclnn_py.mse_loss(x, y, reduction), golden_loss(x, y, reduction), FLOAT32)


@pytest.mark.emulator_only
def test_scalar_expanded_to_a_large_shape_moves_only_one_element():
    x = np.broadcast_to(np.float32(3), (1000, 1000))
    y = np.zeros((1000, 1000), np.float32)
    aclnn_py.emulator.reset_counters()
    result = aclnn_py.mse_loss_backward(np.float32(1), x, y, "none")
    np.testing.assert_array_equal(result, np.full((1000, 1000), 6, np.float32))
    # y travels in full; x and grad only as single elements
    assert aclnn_py.emulator.stats()["h2d_bytes"] < y.nbytes + 1024


def test_backward_unaligned_arrays_and_out():
    def unaligned(n):
        return np.zeros(4 * n + 1, np.uint8)[1:].view(np.float32)

    x = unaligned(60)
    x[:] = random((60,), FLOAT32, 1)
    out = unaligned(20)
    assert not x.flags.aligned and not out.flags.aligned
    view = x[::-3]
    result = aclnn_py.mse_loss_backward(np.float32(0.5), view, np.float32(1), "none", out=out)
    assert result is out
    assert_close(out, golden_backward(0.5, view, 1.0, "none"), FLOAT32)


@pytest.mark.parametrize("dtype", [">f4", ">f2"])
def test_backward_non_native_byte_order(dtype):
    # numpy accepts big-endian float32 as float32; so must a numpy-facing operator, or it
    # must say the byte order is the problem -- never that float32 is unsupported
    x = random((3, 4), dtype, 1)
    y = random((3, 4), dtype, 2)
    try:
        result = aclnn_py.mse_loss_backward(np.ones((), dtype), x, y, "sum")
    except TypeError as error:
        assert "byte order" in str(error) or "endian" in str(error), str(error)
    else:
        assert_close(result.astype(result.dtype.newbyteorder("=")),
                     golden_backward(1.0, x, y, "sum"), np.dtype(dtype).newbyteorder("="))


# --- empty shapes -------------------------------------------------------------------------

EMPTY_CASES = {
    "1d": ((0,), (0,), (0,)),
    "2d": ((0, 3), (0, 3), (0, 3)),
    "middle": ((2, 0, 4), (2, 0, 4), (2, 0, 4)),
    "scalar_grad": ((), (0, 3), (0, 3)),
    "broadcast": ((1, 0, 1, 2), (1, 1, 0, 2), (1, 0, 1, 2)),  # -> (1, 0, 0, 2)
    "against_one": ((1,), (0,), (1,)),
}


@pytest.mark.parametrize("case", list(EMPTY_CASES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_backward_empty(dtype, reduction, case):
    shapes = EMPTY_CASES[case]
    grad, x, y = (np.ones(s, dtype) for s in shapes)
    result = aclnn_py.mse_loss_backward(grad, x, y, reduction)
    assert result.dtype == dtype
    assert result.shape == np.broadcast_shapes(*shapes) and result.size == 0


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 4)])
def test_loss_empty_gives_canns_results(shape, dtype):
    e = np.ones(shape, dtype)
    none = aclnn_py.mse_loss(e, e, "none")
    assert none.shape == shape and none.dtype == dtype
    mean = aclnn_py.mse_loss(e, e, "mean")
    assert mean.shape == () and mean.dtype == dtype and np.isnan(float(mean))
    total = aclnn_py.mse_loss(e, e, "sum")
    assert total.shape == () and total.dtype == dtype and float(total) == 0.0


def test_loss_empty_with_out_fills_it():
    e = np.ones((0, 2), np.float32)
    out = np.full((), 7.0, np.float32)
    assert aclnn_py.mse_loss(e, e, "mean", out=out) is out and np.isnan(out)
    assert aclnn_py.mse_loss(e, e, "sum", out=out) is out and out == 0


# --- special values -----------------------------------------------------------------------

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_backward_nan_and_infinities(dtype, reduction):
    # every pair of specials for x and y, against grads of 1, 0, inf and NaN
    values = np.array(SPECIALS)
    x, y = np.meshgrid(values, values, indexing="ij")
    x, y = x.astype(dtype), y.astype(dtype)
    for g in (1.0, 0.0, np.inf, np.nan):
        check_backward(np.asarray(g, dtype), x, y, reduction, dtype)
    check_backward(y, x, x, reduction, dtype)  # specials in grad


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_backward_subnormals(dtype):
    tiny = ml_dtypes.finfo(dtype).smallest_subnormal
    x = np.array([tiny, 3 * tiny, -tiny, 1.0], dtype)
    y = np.zeros(4, dtype)
    # 2 * subnormal is exact: no flush to zero, no tolerance needed
    result = check_backward(np.ones(4, dtype), x, y, "none", dtype)
    assert_close(result, golden_backward(np.ones(4), x, y, "none"), dtype, atol=0)
    assert result[0] != 0


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_backward_float16_overflow(reduction):
    # 2 * (60000 - -60000) overflows float16: inf unless the mean brings it back in range
    x = np.full(1000, 60000, np.float16)
    y = -x
    grad = np.ones(1000, np.float16)
    result = check_backward(grad, x, y, reduction, FLOAT16)
    if reduction == "mean":
        np.testing.assert_array_equal(result, np.full(1000, 240, np.float16))
    else:
        assert np.isposinf(result).all()


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_backward_large_values_in_range(dtype):
    big = float(ml_dtypes.finfo(dtype).max) / 8
    x = np.array([big, -big, big], dtype)
    y = np.array([0, 0, big / 2], dtype)
    check_backward(np.ones(3, dtype), x, y, "sum", dtype)


def test_loss_special_values():
    x = np.array([np.nan, np.inf, 1.0, 300.0], np.float16)
    y = np.array([0.0, np.inf, 1.0, 0.0], np.float16)
    none = aclnn_py.mse_loss(x, y, "none")
    assert_close(none, golden_loss(x, y, "none"), FLOAT16)
    assert np.isinf(none[3])  # 300**2 overflows float16
    assert np.isnan(aclnn_py.mse_loss(x, y, "mean"))
    assert np.isposinf(aclnn_py.mse_loss(x[2:], y[2:], "sum"))


# --- out= ---------------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("out_dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_backward_out_every_dtype(dtype, out_dtype, reduction):
    grad, x, y = _column(dtype)
    out = np.full((3, 4), 99, out_dtype)
    result = aclnn_py.mse_loss_backward(grad, x, y, reduction, out=out)
    assert result is out
    # CANN computes in the inputs' dtype, then casts to out's
    assert_close(out, golden_backward(grad, x, y, reduction), out_dtype, via=(dtype,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("out_dtype", DTYPES, ids=DTYPE_IDS)
def test_loss_out_every_dtype(out_dtype, reduction):
    x, y = random((3, 4), FLOAT16, 1), random((3, 1), FLOAT16, 2)
    out = np.zeros((3, 4) if reduction == "none" else (), out_dtype)
    assert aclnn_py.mse_loss(x, y, reduction, out=out) is out
    assert_close(out, golden_loss(x, y, reduction), out_dtype, via=(FLOAT16,))


def test_out_is_written_in_place_and_not_aliasing_inputs():
    x = random((4, 4), FLOAT32, 1)
    out = np.zeros((4, 4), np.float32)
    result = aclnn_py.mse_loss_backward(np.float32(1), x, np.float32(0), "none", out=out)
    assert result is out and not np.shares_memory(out, x)
    np.testing.assert_array_equal(out, 2 * x)


# --- mse_loss: reductions, promotion, 0-d results -----------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shapes", [((), ()), ((7,), (7,)), ((3, 4), (3, 1)),
                                    ((2, 1, 4), (3, 1)), ((1, 2, 1, 2, 1, 2, 1, 2), (2,))])
def test_loss_matches_reference(shapes, dtype, reduction):
    x, y = random(shapes[0], dtype, 1), random(shapes[1], dtype, 2)
    result = aclnn_py.mse_loss(x, y, reduction)
    assert result.shape == (np.broadcast_shapes(*shapes) if reduction == "none" else ())
    assert_close(result, golden_loss(x, y, reduction), dtype)
    assert not np.shares_memory(result, x) and not np.shares_memory(result, y)


@pytest.mark.parametrize(("first", "second", "promoted"), [
    (FLOAT16, BFLOAT16, FLOAT32), (BFLOAT16, FLOAT16, FLOAT32), (FLOAT32, FLOAT16, FLOAT32),
    (BFLOAT16, FLOAT32, FLOAT32), (FLOAT16, FLOAT16, FLOAT16), (BFLOAT16, BFLOAT16, BFLOAT16),
], ids=lambda v: v.name)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_loss_type_promotion(first, second, promoted, reduction):
    x, y = random((3, 4), first, 1), random((4,), second, 2)
    result = aclnn_py.mse_loss(x, y, reduction)
    assert_close(result, golden_loss(x, y, reduction), promoted)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_loss_python_number_target_takes_x_dtype(dtype):
    x = random((5,), dtype, 1)
    result = aclnn_py.mse_loss(x, 0.5, "sum")
    assert_close(result, golden_loss(x, np.asarray(0.5, dtype), "sum"), dtype)


def test_loss_of_a_large_array():
    x, y = random((1000, 1000), FLOAT32, 1), random((1000, 1000), FLOAT32, 2)
    for reduction in ("mean", "sum"):
        assert_close(aclnn_py.mse_loss(x, y, reduction), golden_loss(x, y, reduction), FLOAT32)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_loss_matches_torch(dtype, reduction):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
    x, y = random((3, 4), dtype, 1), random((3, 1), dtype, 2)
    result = aclnn_py.mse_loss(x, y, reduction)
    tx, ty = torch.broadcast_tensors(torch.from_numpy(x.astype(np.float64)),
                                     torch.from_numpy(y.astype(np.float64)))
    expected = torch.nn.functional.mse_loss(tx, ty, reduction=reduction)
    assert_close(result, expected.numpy(), dtype)


# --- hypothesis: random shapes, strides and broadcasts ------------------------------------

@st.composite
def strided_arrays(draw, shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    """An array of ``shape`` viewed through random steps, negative steps and a transpose."""
    steps = [draw(st.sampled_from([1, 1, 2, 3, -1, -2])) for _ in shape]
    order = draw(st.permutations(range(len(shape))))
    # build the base so that slicing it with ``steps`` then transposing gives ``shape``
    inner = tuple(shape[axis] for axis in np.argsort(order)) if shape else ()
    inner_steps = [steps[axis] for axis in np.argsort(order)] if shape else []
    base = random(tuple(max(n * abs(s), 1) for n, s in zip(inner, inner_steps)), dtype, seed)
    view = base[tuple(slice(None, None, s) for s in inner_steps)][...]
    view = np.transpose(view[tuple(slice(0, n) for n in inner)][...], order)
    assert view.shape == shape
    if draw(st.booleans()):
        view.flags.writeable = False
    return view


@st.composite
def broadcast_problems(draw):
    rank = draw(st.sampled_from(range(9)))
    limit = 5 if rank <= 4 else 3
    empty = draw(st.integers(0, 9)) == 0  # now and then a zero-length axis
    shape = tuple(draw(st.integers(1, limit)) for _ in range(rank))
    if empty and rank:
        shape = shape[:-1] + (0,)

    def operand_shape() -> tuple[int, ...]:
        drop = draw(st.integers(0, rank))  # fewer leading dimensions
        return tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in shape[drop:])

    dtype = draw(st.sampled_from(DTYPES))
    seeds = draw(st.lists(st.integers(0, 2**16), min_size=3, max_size=3))
    arrays = []
    for seed in seeds:
        s = operand_shape()
        if draw(st.integers(0, 4)) == 0 and s:  # a zero-stride view of a smaller array
            source = draw(strided_arrays(tuple(1 for _ in s), dtype, seed))
            arrays.append(np.broadcast_to(source, s))
        else:
            arrays.append(draw(strided_arrays(s, dtype, seed)))
    reduction = draw(st.sampled_from(REDUCTIONS))
    return dtype, reduction, arrays


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(broadcast_problems())
def test_backward_random_shapes_strides_broadcasts(problem):
    dtype, reduction, (grad, x, y) = problem
    check_backward(grad, x, y, reduction, dtype)


@settings(max_examples=30, deadline=None, database=None, derandomize=True)
@given(broadcast_problems())
def test_loss_random_shapes_strides_broadcasts(problem):
    dtype, reduction, (_, x, y) = problem
    before = (x.copy(), y.copy())
    result = aclnn_py.mse_loss(x, y, reduction)
    assert_close(result, golden_loss(x, y, reduction), dtype)
    assert x.tobytes() == before[0].tobytes() and y.tobytes() == before[1].tobytes()


def test_tolerances_are_tight_enough_to_fail():
    # The comparison would catch an off-by-one-ulp-of-the-wrong-dtype answer.
    golden = np.array([1.0, 3.0])
    wrong = (golden * (1 + 4 * tolerance(FLOAT32).rtol)).astype(np.float32)
    with pytest.raises(AssertionError):
        assert_close(wrong, golden, FLOAT32)
    assert rounded(np.array([65520.0]), FLOAT16)[0] == np.inf
