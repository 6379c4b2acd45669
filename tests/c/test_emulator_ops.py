"""The emulator's operator registry through the low-level layer only: aclnnL1Loss,
aclnnL1LossBackward, aclnnSmoothL1Loss, aclnnSmoothL1LossBackward and aclnnAdd against
float64 numpy formulas, their validation status codes, and aclScalar / aclIntArray."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from conftest import LowLevelResources, run_python, status_of

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py._c._ffi import ffi
from aclnn_py.errors import AclError

# The emulator itself, its counters and fault injection: not portable to CANN.
pytestmark = pytest.mark.emulator_only

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
ACL_DTYPES = {
    np.dtype(np.float32): ll.constant("ACL_FLOAT"),
    np.dtype(np.float16): ll.constant("ACL_FLOAT16"),
    BFLOAT16: ll.constant("ACL_BF16"),
    np.dtype(np.float64): ll.constant("ACL_DOUBLE"),
    np.dtype(np.int64): ll.constant("ACL_INT64"),
    np.dtype(np.int32): ll.constant("ACL_INT32"),
    np.dtype(np.int8): ll.constant("ACL_INT8"),
    np.dtype(np.uint8): ll.constant("ACL_UINT8"),
    np.dtype(np.bool_): ll.constant("ACL_BOOL"),
}
FLOATS = (np.dtype(np.float32), np.dtype(np.float16), BFLOAT16)
# One rounding of a float32 computation to the result dtype, plus float32's own error.
RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2.0 ** -10, BFLOAT16: 2.0 ** -7}
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
# (first input shape, second input shape): the result shape is their broadcast
SHAPES = {"same": ((3, 4), (3, 4)), "row": ((3, 4), (4,)), "column": ((3, 1), (1, 4)),
          "zero_d": ((), (2, 3))}

PARAM_NULLPTR = 161001
PARAM_INVALID = 161002
INNER_NULLPTR = 561103


class Resources(LowLevelResources):
    """Device tensors, scalars and a stream for one test, all released at the end."""

    def tensor(self, array, *, strides=None):
        """A device copy of ``array`` as an aclTensor (C-contiguous unless ``strides``)."""
        array = np.array(array, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
        pointer = ll.NULL
        if array.nbytes:
            pointer = ll.malloc(array.nbytes)
            self.pointers.append(pointer)
            ll.memcpy(pointer, array.nbytes, ffi.from_buffer(array), array.nbytes,
                      ll.MEMCPY_HOST_TO_DEVICE)
        shape = array.shape
        if strides is None:
            strides = tuple(int(s) for s in np.cumprod((1,) + shape[::-1])[:-1][::-1])
        handle = ll.create_tensor(shape, ACL_DTYPES[array.dtype], tuple(strides), 0,
                                  (max(array.size, 1),) if array.size else (0,), pointer)
        self.tensors.append(handle)
        return handle

    def output(self, shape, dtype):
        """An output tensor filled with a sentinel, and a function reading it back."""
        dtype = np.dtype(dtype)
        sentinel = np.full(shape, 7, dtype)
        handle = self.tensor(sentinel)
        pointer = self.pointers[-1] if sentinel.nbytes else None

        def read() -> np.ndarray:
            result = np.empty(shape, dtype)
            if result.nbytes:
                ll.memcpy(ffi.from_buffer(result, require_writable=True), result.nbytes,
                          pointer, result.nbytes, ll.MEMCPY_DEVICE_TO_HOST)
            return result

        return handle, read

    def scalar(self, value, dtype):
        dtype = np.dtype(dtype)
        host = np.array([value], dtype)
        handle = ll.create_scalar(ffi.cast("void *", host.ctypes.data), ACL_DTYPES[dtype])
        self.scalars.append(handle)
        return handle

    def run(self, operator: str, *arguments) -> int:
        """Both phases of ``operator`` on ``arguments`` (the output last), synchronised;
        returns the workspace size phase 1 asked for."""
        size, executor = ll.operator_workspace_size(operator, *arguments)
        workspace = ll.malloc(size) if size else ll.NULL
        try:
            ll.operator_launch(operator, workspace, size, executor, self.stream)
            ll.synchronize_stream(self.stream)
        finally:
            if size:
                ll.free(workspace)
        return size

    def phase1_status(self, operator: str, *arguments) -> int:
        """The status phase 1 refuses ``arguments`` with."""
        with pytest.raises(AclError) as info:
            ll.operator_workspace_size(operator, *arguments)
        assert info.value.message  # the emulator always says why
        return info.value.status



def formula_grid(shapes=tuple(SHAPES)):
    """Parametrize a loss test over the ``shapes`` (names in SHAPES), every reduction and
    every float type (shapes innermost, as the ids read)."""
    def mark(test):
        test = pytest.mark.parametrize("shapes", shapes)(test)
        test = pytest.mark.parametrize("reduction", REDUCTIONS)(test)
        return pytest.mark.parametrize("dtype", FLOATS, ids=str)(test)
    return mark


@pytest.fixture
def s(device):
    resources = Resources()
    yield resources
    resources.release()


def data(shape, dtype, seed, low=-3.0, high=3.0) -> np.ndarray:
    values = np.random.default_rng(seed).uniform(low, high, shape)
    return values.astype(np.float32).astype(dtype)


def f64(array) -> np.ndarray:
    return np.asarray(array).astype(np.float64)


def reduce(values: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        return values
    if reduction == "sum":
        return np.asarray(values.sum())
    return np.asarray(values.mean() if values.size else np.nan)


def check(actual: np.ndarray, golden: np.ndarray, dtype) -> None:
    dtype = np.dtype(dtype)
    assert actual.shape == np.shape(golden)
    np.testing.assert_allclose(f64(actual), golden, rtol=RTOL[dtype], atol=1e-6)


# ---- float64 goldens ---------------------------------------------------------------------


def golden_l1(x, y, reduction):
    return reduce(np.abs(f64(x) - f64(y)), reduction)


def golden_l1_backward(g, x, y, reduction):
    values = np.broadcast_to(f64(g) * np.sign(f64(x) - f64(y)),
                             np.broadcast_shapes(np.shape(g), np.shape(x), np.shape(y)))
    return values / values.size if reduction == "mean" else values  # the result's count


def golden_smooth_l1(x, y, reduction, beta):
    d = f64(x) - f64(y)
    values = np.abs(d) if beta == 0 else np.where(np.abs(d) < beta, 0.5 * d * d / beta,
                                                  np.abs(d) - 0.5 * beta)
    return reduce(values, reduction)


def golden_smooth_l1_backward(g, x, y, reduction, beta):
    d = f64(x) - f64(y)
    slope = np.sign(d) if beta == 0 else np.where(np.abs(d) < beta, d / beta, np.sign(d))
    values = np.broadcast_to(f64(g) * slope,
                             np.broadcast_shapes(np.shape(g), np.shape(x), np.shape(y)))
    return values / np.size(x) if reduction == "mean" else values  # self's own count


# ---- aclnnL1Loss -------------------------------------------------------------------------


@formula_grid()
def test_l1_loss_matches_the_formula(s, dtype, reduction, shapes):
    xs, ys = SHAPES[shapes]
    x, y = data(xs, dtype, 1), data(ys, dtype, 2)
    golden = golden_l1(x, y, reduction)
    out, read = s.output(golden.shape, dtype)
    s.run("aclnnL1Loss", s.tensor(x), s.tensor(y), REDUCTIONS[reduction], out)
    check(read(), golden, dtype)


def test_l1_loss_promotes_and_casts_to_out(s):
    x, y = data((2, 5), np.float16, 3), data((5,), BFLOAT16, 4)  # float16 with bfloat16: float
    out, read = s.output((2, 5), np.float16)
    size = s.run("aclnnL1Loss", s.tensor(x), s.tensor(y), 0, out)
    assert size > 0  # both casts, the broadcast and the float result are staged
    check(read(), golden_l1(x, y, "none"), np.float16)


def test_l1_loss_on_int64_inputs_stays_integral(s):
    x = np.array([[5, -3, 7], [0, 2, -9]], np.int64)
    y = np.array([1, 4, -2], np.int32)  # int32 with int64 promotes to int64
    out, read = s.output((2, 3), np.int64)
    s.run("aclnnL1Loss", s.tensor(x), s.tensor(y), 0, out)
    assert read().tolist() == np.abs(x - y).tolist()
    out, read = s.output((), np.int64)
    s.run("aclnnL1Loss", s.tensor(x), s.tensor(y), 2, out)
    assert int(read()) == int(np.abs(x - y).sum())
    out, read = s.output((), np.float32)  # an int64 sum cast to a float out
    s.run("aclnnL1Loss", s.tensor(x), s.tensor(y), 2, out)
    assert float(read()) == float(np.abs(x - y).sum())
    # an integral self with a floating target computes in the float dtype
    out, read = s.output((), np.float32)
    s.run("aclnnL1Loss", s.tensor(x), s.tensor(y.astype(np.float32)), 1, out)
    check(read(), golden_l1(x, y, "mean"), np.float32)


@pytest.mark.parametrize("reduction, expected", [("mean", np.nan), ("sum", 0.0)])
def test_l1_loss_of_empty_inputs_fills_out(s, reduction, expected):
    out, read = s.output((), np.float32)
    s.run("aclnnL1Loss", s.tensor(np.zeros((0, 3), np.float32)), s.tensor(np.zeros(3, np.float32)),
          REDUCTIONS[reduction], out)
    np.testing.assert_equal(read(), np.float32(expected))
    out, read = s.output((0, 3), np.float32)
    assert s.run("aclnnL1Loss", s.tensor(np.zeros((0, 3), np.float32)),
                 s.tensor(np.zeros(3, np.float32)), 0, out) == 0


def test_l1_loss_refusals(s):
    f32 = np.zeros((2, 3), np.float32)
    x, y = s.tensor(f32), s.tensor(f32)
    out0, _ = s.output((2, 3), np.float32)
    scalar_out, _ = s.output((), np.float32)
    op = "aclnnL1Loss"
    assert s.phase1_status(op, ll.NULL, y, 0, out0) == PARAM_NULLPTR
    assert s.phase1_status(op, x, y, 0, ll.NULL) == PARAM_NULLPTR
    assert s.phase1_status(op, x, y, 3, out0) == PARAM_INVALID  # reduction
    assert s.phase1_status(op, x, y, -1, out0) == PARAM_INVALID
    ints = s.tensor(np.zeros((2, 3), np.int32))
    assert s.phase1_status(op, ints, y, 0, out0) == PARAM_INVALID  # none: int self, float target
    assert s.phase1_status(op, ints, ints, 1, scalar_out) == PARAM_INVALID  # mean of integers
    doubles = s.tensor(np.zeros((2, 3), np.float64))
    assert s.phase1_status(op, doubles, y, 0, out0) == PARAM_INVALID  # promotes to double
    int_out, _ = s.output((2, 3), np.int64)
    assert s.phase1_status(op, x, y, 0, int_out) == PARAM_INVALID  # float result, int out
    wrong, _ = s.output((3, 2), np.float32)
    assert s.phase1_status(op, x, y, 0, wrong) == PARAM_INVALID  # out shape
    one, _ = s.output((1,), np.float32)
    assert s.phase1_status(op, x, y, 1, one) == PARAM_INVALID  # mean/sum: out must be 0-d
    assert s.phase1_status(op, x, s.tensor(np.zeros(4, np.float32)), 0, out0) == PARAM_INVALID
    deep = s.tensor(np.zeros((1,) * 9, np.float32))
    assert s.phase1_status(op, deep, deep, 1, scalar_out) == PARAM_INVALID  # rank > 8


@pytest.mark.slow
def test_l1_loss_refuses_bfloat16_on_a_soc_without_it():
    done = run_python("""
        import numpy as np
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        from aclnn_py.errors import AclError
        ll.init(); ll.set_device(0)
        bf16, f32 = ll.constant("ACL_BF16"), ll.constant("ACL_FLOAT")
        t = lambda dtype: ll.create_tensor((2,), dtype, (1,), 0, (2,), ll.NULL)
        for name in ("aclnnL1Loss",):
            try:
                ll.operator_workspace_size(name, t(bf16), t(bf16), 0, t(f32))
            except AclError as error:
                print(error.status, "DT_BF16" in error.message)
        ll.operator_workspace_size("aclnnL1Loss", t(f32), t(f32), 0, t(f32))
        print("float32 ok")
    """, {"ACLNN_EMU_SOC": "Ascend310P3"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["161002 True", "float32 ok"]


# ---- aclnnL1LossBackward -----------------------------------------------------------------


@formula_grid()
def test_l1_loss_backward_matches_the_formula(s, dtype, reduction, shapes):
    xs, ys = SHAPES[shapes]
    g, x, y = data((), dtype, 5), data(xs, dtype, 6), data(ys, dtype, 7)
    golden = golden_l1_backward(g, x, y, reduction)
    out, read = s.output(golden.shape, dtype)
    s.run("aclnnL1LossBackward", s.tensor(g), s.tensor(x), s.tensor(y), REDUCTIONS[reduction], out)
    check(read(), golden, dtype)


def test_l1_loss_backward_mean_divides_by_the_result_count(s):
    g = np.array(1.0, np.float32)
    x = np.array([[1.0], [2.0], [3.0]], np.float32)  # self has 3 elements
    y = np.zeros(4, np.float32)  # the result has 12
    out, read = s.output((3, 4), np.float32)
    s.run("aclnnL1LossBackward", s.tensor(g), s.tensor(x), s.tensor(y), 1, out)
    np.testing.assert_array_equal(read(), np.full((3, 4), np.float32(1 / 12)))
    # sign(0) is 0
    out, read = s.output((3,), np.float32)
    z = np.array([0.0, 2.0, -2.0], np.float32)
    s.run("aclnnL1LossBackward", s.tensor(np.full(3, 2.0, np.float32)), s.tensor(z),
          s.tensor(np.zeros(3, np.float32)), 0, out)
    assert read().tolist() == [0.0, 2.0, -2.0]


def test_l1_loss_backward_refusals(s):
    f32 = np.zeros((2, 3), np.float32)
    g, x, y = s.tensor(f32), s.tensor(f32), s.tensor(f32)
    out, _ = s.output((2, 3), np.float32)
    op = "aclnnL1LossBackward"
    assert s.phase1_status(op, g, x, ll.NULL, 1, out) == PARAM_NULLPTR
    assert s.phase1_status(op, g, x, y, 1, ll.NULL) == PARAM_NULLPTR
    assert s.phase1_status(op, g, x, y, 5, out) == PARAM_INVALID
    int_out, _ = s.output((2, 3), np.int32)
    assert s.phase1_status(op, g, x, y, 1, int_out) == PARAM_INVALID
    ints = s.tensor(np.zeros((2, 3), np.int64))
    assert s.phase1_status(op, ints, ints, ints, 0, out) == PARAM_INVALID  # promotes to int64
    wrong, _ = s.output((2, 1), np.float32)
    assert s.phase1_status(op, g, x, y, 0, wrong) == PARAM_INVALID
    assert s.phase1_status(op, g, x, s.tensor(np.zeros(5, np.float32)), 0, out) == PARAM_INVALID
    # an integral gradOutput promotes with float self and target
    ones = s.tensor(np.ones((2, 3), np.int32))
    s.run(op, ones, x, y, 0, out)


# ---- aclnnSmoothL1Loss -------------------------------------------------------------------

BETAS = (0.0, 0.5, 1.0, 2.0)


@pytest.mark.parametrize("beta", BETAS)
@formula_grid(("same", "row", "zero_d"))
def test_smooth_l1_loss_matches_the_formula(s, beta, dtype, reduction, shapes):
    xs, ys = SHAPES[shapes]
    x, y = data(xs, dtype, 8), data(ys, dtype, 9)
    golden = golden_smooth_l1(x, y, reduction, beta)
    out, read = s.output(golden.shape, dtype)
    s.run("aclnnSmoothL1Loss", s.tensor(x), s.tensor(y), REDUCTIONS[reduction], beta, out)
    check(read(), golden, dtype)


def test_smooth_l1_loss_result_of_one_element(s):
    x, y = data((4, 5), np.float32, 10), data((4, 5), np.float32, 11)
    for shape in ((), (1,), (1, 1)):
        out, read = s.output(shape, np.float32)
        s.run("aclnnSmoothL1Loss", s.tensor(x), s.tensor(y), 2, 1.0, out)
        check(read(), np.reshape(golden_smooth_l1(x, y, "sum", 1.0), shape), np.float32)
    out, _ = s.output((2,), np.float32)  # CANN's ViewCopy of the loss into it fails
    assert s.phase1_status("aclnnSmoothL1Loss", s.tensor(x), s.tensor(y), 1, 1.0,
                           out) == INNER_NULLPTR
    empty_out, read = s.output((1,), np.float16)  # empty inputs: NaN for mean, in out's dtype
    s.run("aclnnSmoothL1Loss", s.tensor(np.zeros((0,), np.float32)),
          s.tensor(np.zeros((0,), np.float32)), 1, 1.0, empty_out)
    assert np.isnan(read()).all()


def test_smooth_l1_loss_refusals(s):
    f32 = np.zeros((2, 3), np.float32)
    x, y = s.tensor(f32), s.tensor(f32)
    out, _ = s.output((2, 3), np.float32)
    op = "aclnnSmoothL1Loss"
    assert s.phase1_status(op, x, ll.NULL, 0, 1.0, out) == PARAM_NULLPTR
    assert s.phase1_status(op, x, y, 0, -0.5, out) == PARAM_INVALID  # beta must be >= 0
    assert s.phase1_status(op, x, y, 0, float("nan"), out) == PARAM_INVALID
    assert s.phase1_status(op, x, y, 3, 1.0, out) == PARAM_INVALID
    ints = s.tensor(np.zeros((2, 3), np.int32))
    assert s.phase1_status(op, ints, y, 0, 1.0, out) == PARAM_INVALID  # self must be floating
    wrong, _ = s.output((6,), np.float32)
    assert s.phase1_status(op, x, y, 0, 1.0, wrong) == PARAM_INVALID
    assert s.phase1_status(op, x, s.tensor(np.zeros(2, np.float32)), 0, 1.0, out) == PARAM_INVALID
    int_out, _ = s.output((2, 3), np.int32)
    assert s.phase1_status(op, x, y, 0, 1.0, int_out) == PARAM_INVALID


# ---- aclnnSmoothL1LossBackward -----------------------------------------------------------


@pytest.mark.parametrize("beta", BETAS)
@formula_grid(("same", "column", "zero_d"))
def test_smooth_l1_loss_backward_matches_the_formula(s, beta, dtype, reduction, shapes):
    xs, ys = SHAPES[shapes]
    g, x, y = data((), dtype, 12), data(xs, dtype, 13), data(ys, dtype, 14)
    golden = golden_smooth_l1_backward(g, x, y, reduction, beta)
    out, read = s.output(golden.shape, dtype)
    s.run("aclnnSmoothL1LossBackward", s.tensor(g), s.tensor(x), s.tensor(y),
          REDUCTIONS[reduction], beta, out)
    check(read(), golden, dtype)


def test_smooth_l1_loss_backward_mean_divides_by_self_count(s):
    g = np.ones((3, 4), np.float32)
    x = np.array([[5.0], [-5.0], [0.25]], np.float32)  # self has 3 elements
    y = np.zeros(4, np.float32)  # the result has 12
    out, read = s.output((3, 4), np.float32)
    s.run("aclnnSmoothL1LossBackward", s.tensor(g), s.tensor(x), s.tensor(y), 1, 0.5, out)
    expected = np.broadcast_to(np.array([[1.0], [-1.0], [0.5]]) / 3, (3, 4))
    check(read(), expected, np.float32)


def test_smooth_l1_loss_backward_refusals(s):
    f32 = np.zeros((2, 3), np.float32)
    g, x, y = s.tensor(f32), s.tensor(f32), s.tensor(f32)
    out, _ = s.output((2, 3), np.float32)
    op = "aclnnSmoothL1LossBackward"
    assert s.phase1_status(op, ll.NULL, x, y, 0, 1.0, out) == PARAM_NULLPTR
    assert s.phase1_status(op, g, x, y, 0, -1.0, out) == PARAM_INVALID
    assert s.phase1_status(op, g, x, y, 7, 1.0, out) == PARAM_INVALID
    ints = s.tensor(np.zeros((2, 3), np.int32))
    assert s.phase1_status(op, ints, x, y, 0, 1.0, out) == PARAM_INVALID  # every dtype listed
    half_out, read = s.output((2, 3), np.float16)  # out may differ: cast at the end
    s.run(op, g, x, y, 0, 1.0, half_out)
    assert read().tolist() == np.zeros((2, 3)).tolist()
    wrong, _ = s.output((3, 2), np.float32)
    assert s.phase1_status(op, g, x, y, 0, 1.0, wrong) == PARAM_INVALID
    deep = s.tensor(np.zeros((1,) * 9, np.float32))
    assert s.phase1_status(op, g, deep, y, 0, 1.0, out) == PARAM_INVALID
    empty = s.tensor(np.zeros((0, 3), np.float32))
    empty_out, _ = s.output((0, 3), np.float32)
    scalar_g, row = s.tensor(np.ones((), np.float32)), s.tensor(np.zeros(3, np.float32))
    assert s.run(op, scalar_g, empty, row, 1, 1.0, empty_out) == 0


# ---- aclnnAdd ----------------------------------------------------------------------------

ALPHAS = {"int 1": (1, np.int64), "int -3": (-3, np.int64), "int32 2": (2, np.int32),
          "float 2.5": (2.5, np.float32), "double 0.1": (0.1, np.float64)}


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shapes", SHAPES)
def test_add_matches_the_formula(s, alpha, dtype, shapes):
    value, alpha_dtype = ALPHAS[alpha]
    xs, ys = SHAPES[shapes]
    x, y = data(xs, dtype, 15), data(ys, dtype, 16)
    golden = f64(x) + float(np.float32(value)) * f64(y)
    out, read = s.output(golden.shape, dtype)
    s.run("aclnnAdd", s.tensor(x), s.tensor(y), s.scalar(value, alpha_dtype), out)
    check(read(), golden, dtype)


@pytest.mark.parametrize("self_dtype, other_dtype, result_dtype", [
    (np.float16, np.float32, np.float32), (BFLOAT16, np.float32, np.float32),
    (np.float16, BFLOAT16, np.float32), (np.int32, np.float32, np.float32),
    (np.float16, np.int64, np.float16), (np.bool_, BFLOAT16, BFLOAT16)])
@pytest.mark.parametrize("alpha", (1.0, -2.0))
def test_add_promotes(s, self_dtype, other_dtype, result_dtype, alpha):
    x = data((2, 3), np.float32, 17).astype(self_dtype)
    y = data((3,), np.float32, 18).astype(other_dtype)
    golden = f64(x) + alpha * f64(y)
    out, read = s.output((2, 3), result_dtype)
    s.run("aclnnAdd", s.tensor(x), s.tensor(y), s.scalar(alpha, np.float32), out)
    check(read(), golden, result_dtype)


def test_add_mixed_float_dtypes_with_alpha_one_need_no_cast(s):
    x, y = data((4, 4), np.float16, 19), data((4, 4), np.float32, 20)
    out, read = s.output((4, 4), np.float32)
    assert s.run("aclnnAdd", s.tensor(x), s.tensor(y), s.scalar(1, np.int64), out) == 0
    check(read(), f64(x) + f64(y), np.float32)
    out, read = s.output((4, 4), np.float32)  # another alpha: both inputs cast to float32
    assert s.run("aclnnAdd", s.tensor(x), s.tensor(y), s.scalar(3, np.int64), out) > 0
    check(read(), f64(x) + 3 * f64(y), np.float32)


def test_add_casts_the_result_into_out(s):
    x, y = data((6, 4), np.float32, 21), data((4,), np.float32, 22)
    out, read = s.output((6, 4), np.float16)
    size = s.run("aclnnAdd", s.tensor(x), s.tensor(y), s.scalar(0.5, np.float64), out)
    assert size > 0  # the float32 result is staged before its cast to float16
    check(read(), f64(x) + 0.5 * f64(y), np.float16)


def test_add_reads_a_strided_view(s):
    base = data((4, 6), np.float32, 23)
    s.tensor(base)
    pointer = s.pointers[-1]
    view = ll.create_tensor((6, 4), ACL_DTYPES[np.dtype(np.float32)], (1, 6), 0, (24,), pointer)
    s.tensors.append(view)
    y = data((6, 1), np.float32, 24)
    out, read = s.output((6, 4), np.float32)
    assert s.run("aclnnAdd", view, s.tensor(y), s.scalar(2, np.int64), out) > 0  # Contiguous
    check(read(), f64(base.T) + 2 * f64(y), np.float32)


def test_add_refusals(s):
    f32 = np.zeros((2, 3), np.float32)
    x, y = s.tensor(f32), s.tensor(f32)
    out, _ = s.output((2, 3), np.float32)
    one = s.scalar(1.0, np.float32)
    op = "aclnnAdd"
    assert s.phase1_status(op, x, y, ll.NULL, out) == PARAM_NULLPTR
    assert s.phase1_status(op, x, ll.NULL, one, out) == PARAM_NULLPTR
    assert s.phase1_status(op, x, y, one, ll.NULL) == PARAM_NULLPTR
    gone = ll.create_scalar(ffi.new("float *", 1.0), ACL_DTYPES[np.dtype(np.float32)])
    ll.destroy_scalar(gone)
    assert s.phase1_status(op, x, y, gone, out) == PARAM_NULLPTR  # not a live aclScalar
    ints = s.tensor(np.zeros((2, 3), np.int32))
    int_out, _ = s.output((2, 3), np.int32)
    assert s.phase1_status(op, ints, ints, one, int_out) == PARAM_INVALID  # float alpha, int
    assert s.phase1_status(op, x, y, one, int_out) == PARAM_INVALID  # float result, int out
    # CANN computes integral, bool, double and complex sums (hicann/ops-math math/add/tests/ut/
    # op_api/test_aclnn_add.cpp case_003, case_008, case_011 expect ACLNN_SUCCESS)
    s.run(op, ints, ints, s.scalar(2, np.int64), int_out)
    doubles = s.tensor(np.zeros((2, 3), np.float64))
    s.run(op, doubles, y, one, out)
    narrow = ll.create_tensor((2, 3), ll.constant("ACL_HIFLOAT8"), (3, 1), 0, (6,), ll.NULL)
    s.tensors.append(narrow)  # CanCast lets float into it; the emulator does not compute it
    assert s.phase1_status(op, x, y, one, narrow) == PARAM_INVALID
    wrong, _ = s.output((3, 2), np.float32)
    assert s.phase1_status(op, x, y, one, wrong) == PARAM_INVALID
    assert s.phase1_status(op, x, s.tensor(np.zeros(2, np.float32)), one, out) == PARAM_INVALID
    deep = s.tensor(np.zeros((1,) * 9, np.float32))
    assert s.phase1_status(op, deep, y, one, out) == PARAM_INVALID
    handle = ll.create_tensor((2, 3), ll.constant("ACL_UINT16"), (3, 1), 0, (6,), ll.NULL)
    s.tensors.append(handle)
    assert s.phase1_status(op, handle, y, one, out) == PARAM_INVALID  # not in CANN's list
    empty_out, _ = s.output((0, 3), np.float32)
    row = s.tensor(np.zeros(3, np.float32))
    assert s.run(op, s.tensor(np.zeros((0, 3), np.float32)), row, one, empty_out) == 0


def test_add_nan_alpha_counts_as_one_as_in_cann(s):
    x, y = data((5,), np.float32, 25), data((5,), np.float32, 26)
    out, read = s.output((5,), np.float32)
    s.run("aclnnAdd", s.tensor(x), s.tensor(y), s.scalar(np.nan, np.float32), out)
    check(read(), f64(x) + f64(y), np.float32)


def test_a_repeatable_add_executor_rebinds_other(s):
    x, y1, y2 = (data((8,), np.float32, seed) for seed in (27, 28, 29))
    tx, ty = s.tensor(x), s.tensor(y1)
    s.tensor(y2)
    y2_pointer = s.pointers[-1]
    out, read = s.output((8,), np.float32)
    size, executor = ll.operator_workspace_size("aclnnAdd", tx, ty, s.scalar(2.0, np.float32), out)
    ll.set_executor_repeatable(executor)
    try:
        ll.operator_launch("aclnnAdd", ll.NULL, size, executor, s.stream)
        ll.synchronize_stream(s.stream)
        check(read(), f64(x) + 2 * f64(y1), np.float32)
        ll.set_input_tensor_addr(executor, 1, ty, y2_pointer)
        ll.operator_launch("aclnnAdd", ll.NULL, size, executor, s.stream)
        ll.synchronize_stream(s.stream)
        check(read(), f64(x) + 2 * f64(y2), np.float32)
    finally:
        ll.destroy_executor(executor)


# ---- determinism -------------------------------------------------------------------------


@pytest.mark.slow
def test_reductions_do_not_depend_on_the_thread_count():
    script = """
        import numpy as np
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        ll.init(); ll.set_device(0)
        x = np.random.default_rng(0).standard_normal(1_500_001).astype(np.float32)
        y = np.random.default_rng(1).standard_normal(1_500_001).astype(np.float32)
        def tensor(a):
            p = ll.malloc(a.nbytes)
            ll.memcpy(p, a.nbytes, ffi.from_buffer(a), a.nbytes, ll.MEMCPY_HOST_TO_DEVICE)
            return ll.create_tensor(a.shape, ll.constant("ACL_FLOAT"), (1,), 0, a.shape, p)
        tx, ty = tensor(x), tensor(y)
        for op, extra in (("aclnnL1Loss", ()), ("aclnnSmoothL1Loss", (0.5,))):
            for reduction in (1, 2):
                p = ll.malloc(4)
                out = ll.create_tensor((), ll.constant("ACL_FLOAT"), (), 0, (1,), p)
                size, ex = ll.operator_workspace_size(op, tx, ty, reduction, *extra, out)
                ll.operator_launch(op, ll.NULL, size, ex, ll.NULL)
                ll.synchronize_stream(ll.NULL)
                r = np.zeros(1, np.float32)
                ll.memcpy(ffi.from_buffer(r, require_writable=True), 4, p, 4,
                          ll.MEMCPY_DEVICE_TO_HOST)
                print(op, reduction, r.view(np.uint32)[0])
    """
    outputs = []
    for threads in ("1", "3", "16"):
        done = run_python(script, {"ACLNN_EMU_THREADS": threads})
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    assert len(outputs[0].splitlines()) == 4


# ---- aclScalar and aclIntArray -----------------------------------------------------------


def live() -> tuple[int, int]:
    stats = aclnn_py.emulator.stats()
    return stats["live_scalars"], stats["live_int_arrays"]


def test_scalars_are_counted_and_refuse_double_destroy(device):
    before = live()
    value = ffi.new("double *", 2.5)
    scalar = ll.create_scalar(value, ACL_DTYPES[np.dtype(np.float64)])
    value[0] = 7.0  # the scalar copied the value at creation
    assert live() == (before[0] + 1, before[1])
    ll.destroy_scalar(scalar)
    assert live() == before
    assert status_of(ll.destroy_scalar, scalar) == INNER_NULLPTR
    ll.destroy_scalar(ll.NULL)  # like CANN: NULL is accepted


def test_scalar_creation_refusals(device):
    before = live()
    with pytest.raises(AclError, match="value is NULL"):
        ll.create_scalar(ll.NULL, ACL_DTYPES[np.dtype(np.float32)])
    with pytest.raises(AclError, match="not supported"):
        ll.create_scalar(ffi.new("int64_t *", 1), ll.constant("ACL_STRING"))
    with pytest.raises(AclError, match="not supported"):
        ll.create_scalar(ffi.new("int64_t *", 1), 12345)
    assert live() == before


def test_the_scalar_value_is_copied_at_creation(s):
    value = ffi.new("float *", 3.0)
    alpha = ll.create_scalar(value, ACL_DTYPES[np.dtype(np.float32)])
    s.scalars.append(alpha)
    value[0] = 100.0
    x, y = np.ones(4, np.float32), np.ones(4, np.float32)
    out, read = s.output((4,), np.float32)
    s.run("aclnnAdd", s.tensor(x), s.tensor(y), alpha, out)
    assert read().tolist() == [4.0] * 4


def test_int_arrays_are_counted_and_refuse_double_destroy(device):
    before = live()
    arrays = [ll.create_int_array((1, 2, 3)), ll.create_int_array(())]
    assert live() == (before[0], before[1] + 2)
    for array in arrays:
        ll.destroy_int_array(array)
    assert live() == before
    assert status_of(ll.destroy_int_array, arrays[0]) == INNER_NULLPTR
    ll.destroy_int_array(ll.NULL)
    with pytest.raises(AclError, match="value is NULL but size is 3"):
        ll.check_created(ll.META.aclCreateIntArray(ll.NULL, 3), "aclCreateIntArray")
    assert live() == before


def test_scalar_and_int_array_faults(device):
    before = live()
    for api in ("aclCreateScalar", "aclCreateIntArray"):
        aclnn_py.emulator.inject_fault(api, 207001)
    with pytest.raises(AclError, match="injected"):
        ll.create_scalar(ffi.new("float *", 1.0), ACL_DTYPES[np.dtype(np.float32)])
    with pytest.raises(AclError, match="injected"):
        ll.create_int_array((1,))
    scalar = ll.create_scalar(ffi.new("float *", 1.0), ACL_DTYPES[np.dtype(np.float32)])
    array = ll.create_int_array((4,))
    aclnn_py.emulator.inject_fault("aclDestroyScalar", 507899)
    aclnn_py.emulator.inject_fault("aclDestroyIntArray", 507899)
    assert status_of(ll.destroy_scalar, scalar) == 507899
    assert status_of(ll.destroy_int_array, array) == 507899
    ll.destroy_scalar(scalar)  # the faults fired once: nothing was destroyed by them
    ll.destroy_int_array(array)
    assert live() == before


def test_new_operators_have_fault_points(s):
    x = s.tensor(np.ones(3, np.float32))
    out, _ = s.output((3,), np.float32)
    aclnn_py.emulator.inject_fault("aclnnSmoothL1LossGetWorkspaceSize", 161002)
    assert s.phase1_status("aclnnSmoothL1Loss", x, x, 0, 1.0, out) == 161002
    size, executor = ll.operator_workspace_size("aclnnL1Loss", x, x, 0, out)
    before = aclnn_py.emulator.stats()["live_executors"]
    aclnn_py.emulator.inject_fault("aclnnL1Loss", 507899)
    assert status_of(ll.operator_launch, "aclnnL1Loss", ll.NULL, size, executor, s.stream) == 507899
    assert aclnn_py.emulator.stats()["live_executors"] == before - 1  # consumed, as a failed launch


# ---- the shared staging: views, casts and broadcasts in each operator's order -------------


def transposed(s: Resources, array: np.ndarray):
    """A device tensor viewing ``array`` through a transposed (non-contiguous) layout."""
    s.tensor(np.ascontiguousarray(array.T))
    pointer = s.pointers[-1]
    strides = (1, array.shape[0])
    handle = ll.create_tensor(array.shape, ACL_DTYPES[array.dtype], strides, 0, (array.size,),
                              pointer)
    s.tensors.append(handle)
    return handle


@pytest.mark.parametrize("case", ["l1", "l1_int", "l1_backward", "smooth_l1", "smooth_l1_backward",
                                  "add"])
def test_views_casts_and_broadcasts_are_staged(s, case):
    x = data((3, 5), np.float16, 30)  # read through a transposed view
    y = data((5,), np.float32, 31)    # another dtype, broadcast
    g = np.full((3, 1), 2, np.int32)  # an integral gradient, broadcast
    result = np.float32
    if case == "l1":
        golden = golden_l1(x, y, "mean")
        args = ("aclnnL1Loss", transposed(s, x), s.tensor(y), 1)
    elif case == "l1_int":
        xi = np.arange(15, dtype=np.int8).reshape(3, 5)
        golden = golden_l1(xi, y, "sum")
        args = ("aclnnL1Loss", transposed(s, xi), s.tensor(y), 2)
    elif case == "l1_backward":
        golden = golden_l1_backward(g, x, y, "mean")
        args = ("aclnnL1LossBackward", s.tensor(g), transposed(s, x), s.tensor(y), 1)
    elif case == "smooth_l1":
        golden = golden_smooth_l1(x, y, "none", 0.5)
        args = ("aclnnSmoothL1Loss", transposed(s, x), s.tensor(y), 0, 0.5)
    elif case == "smooth_l1_backward":
        gf = g.astype(np.float16)
        golden = golden_smooth_l1_backward(gf, x, y, "mean", 2.0)
        args = ("aclnnSmoothL1LossBackward", s.tensor(gf), transposed(s, x), s.tensor(y), 1, 2.0)
    else:
        golden = f64(x) - 1.5 * f64(y)
        args = ("aclnnAdd", transposed(s, x), s.tensor(y), s.scalar(-1.5, np.float64))
    out, read = s.output(np.shape(golden), result)
    assert s.run(*args, out) > 0
    check(read(), golden, result)
