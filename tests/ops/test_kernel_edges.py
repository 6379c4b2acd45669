"""The emulator's Python kernels at the edges: exact float64 special functions, integer
wrap-around, NaN, infinities and signed zeros, empty tensors, the formulas CANN's docs and
kernels define where they differ from PyTorch's, and what phase 1 refuses (from shapes, dtypes
and attributes only) or a synchronisation reports (from index values).

References: ``math`` (libm, correctly rounded to within an ulp) and mpmath for the special
functions, PyTorch CPU where CANN's doc and implementation are silent, and CANN's own formula
where they are not (each test names its source).
"""

from __future__ import annotations

import math
import weakref

import numpy as np
import pytest

import aclnn_py

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
pytestmark = pytest.mark.emulator_only

F = torch.nn.functional
PARAM_INVALID = 161002
KERNEL_FAILED = 507015


def same(actual, expected) -> None:
    """Equal element by element, NaN with NaN and each zero with its sign."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if actual.dtype.kind == "f":
        both_nan = np.isnan(actual) & np.isnan(expected)
        equal = (actual == expected) & (np.signbit(actual) == np.signbit(expected))
        bad = ~(both_nan | equal)
    else:
        bad = actual != expected
    assert not bad.any(), (actual[bad], expected[bad])


ND = 2  # ACL_FORMAT_ND (headers/acl_rt.h)


INNER_NULLPTR = 561103  # ACLNN_ERR_INNER_NULLPTR (CANN's aclnn/aclnn_base.h)


def refused(call, *args, status: int = PARAM_INVALID, **kwargs) -> str:
    """The message of the ``status`` (161002 unless told) ``call`` must raise at phase 1."""
    with pytest.raises(aclnn_py.AclError) as info:
        call(*args, **kwargs)
    assert info.value.status == status, info.value
    assert "GetWorkspaceSize" in info.value.api, info.value
    return info.value.message


def relative_error(actual, expected) -> float:
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    scale = np.where(expected == 0, 1.0, np.abs(expected))
    return float(np.max(np.abs(actual - expected) / scale))


# ---- erf and erfinv -----------------------------------------------------------------


def test_erf_in_float64_is_exact_to_double_precision() -> None:
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-7, 7, 4000), rng.uniform(-1e-3, 1e-3, 200),
                        [0.5, 1.4999999999, 1.5, 2.0, 3.0, 5.9, 26.0, 27.5, 1e-300, 5e-324]])
    result = aclnn_py.call("aclnnErf", x)
    assert relative_error(result, [math.erf(v) for v in x]) <= 1e-15


def test_erfinv_in_float64_is_refused_as_cann_refuses_it() -> None:
    # ops-nn activation/erfinv/op_api/aclnn_erfinv.cpp: its dtype lists have no DOUBLE
    assert "self has dtype DT_DOUBLE" in refused(aclnn_py.call, "aclnnErfinv",
                                                  np.zeros(3, np.float64))


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_erf_and_erfinv_give_their_limits_without_a_warning(dtype) -> None:
    if dtype == np.float32:  # CANN has no float64 Erfinv
        x = np.array([1.0, -1.0, 1.5, -2.0, np.nan, 0.0, -0.0], dtype)
        same(aclnn_py.call("aclnnErfinv", x),
             np.array([np.inf, -np.inf, np.nan, np.nan, np.nan, 0.0, -0.0], dtype))
    y = np.array([np.inf, -np.inf, np.nan, 40.0, -40.0, -0.0], dtype)
    same(aclnn_py.call("aclnnErf", y), np.array([1.0, -1.0, np.nan, 1.0, -1.0, -0.0], dtype))


def test_erf_in_float32_is_within_4_ulp_and_never_beyond_one() -> None:
    x = np.linspace(-6, 6, 240001, dtype=np.float32)
    result = aclnn_py.call("aclnnErf", x)
    expected = np.array([math.erf(float(v)) for v in x])
    ulp = np.spacing(np.abs(expected).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(result - expected) / ulp) <= 4
    assert np.all(np.abs(result) <= 1)
    assert np.all(np.diff(result) >= 0)  # monotonic, as erf


def test_erfinv_in_float32_is_within_1e_6_relative() -> None:
    mpmath = pytest.importorskip("mpmath", reason="pip install mpmath")
    x = np.linspace(-1, 1, 20001, dtype=np.float32)[1:-1]
    x = np.concatenate([x, 1 - np.float32(2.0) ** -np.arange(1, 25, dtype=np.float32)])
    result = aclnn_py.call("aclnnErfinv", x)
    assert relative_error(result, [float(mpmath.erfinv(float(v))) for v in x]) <= 1e-6


# ---- integer arithmetic wraps, as on the device ---------------------------------------


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int32, np.int64])
def test_integer_subtraction_wraps(dtype) -> None:
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, 0, 1, 7], dtype)
    b = np.array([1, info.max, 3, 2, 200 if dtype != np.int8 else 100], dtype)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    same(aclnn_py.call("aclnnSub", a, b, 2), torch.sub(ta, tb, alpha=2).numpy())
    same(aclnn_py.call("aclnnSubs", a, dtype(3), 1), torch.sub(ta, 3).numpy())
    same(aclnn_py.call("aclnnAdds", a, dtype(3), 2), torch.add(ta, 3, alpha=2).numpy())
    same(aclnn_py.call("aclnnInplaceSub", a.copy(), b, 1), torch.sub(ta, tb).numpy())
    same(aclnn_py.call("aclnnInplaceSubs", a.copy(), dtype(5), 3),
         torch.sub(ta, 5, alpha=3).numpy())


# ---- formulas of CANN's docs and kernels --------------------------------------------


def test_gelu_is_the_tanh_form_of_canns_doc() -> None:
    # ops-nn activation/gelu/docs/aclnnGelu.md: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    # (against the formula in float64: in float32 1 + tanh(u) rounds to 0 below x = -5.3,
    # where CANN's kernel, x / (1 + exp(-2u)), keeps the tail)
    x = np.linspace(-6, 6, 1201, dtype=np.float32)
    result = aclnn_py.call("aclnnGelu", x)
    expected = F.gelu(torch.from_numpy(x).double(), approximate="tanh").numpy()
    np.testing.assert_allclose(result, expected, rtol=3e-5, atol=1e-12)


def test_gelu_backward_is_the_derivative_of_the_tanh_form() -> None:
    # ops-nn activation/gelu_grad/op_kernel/arch35/gelu_grad_dag.h computes the tanh form's
    x = np.linspace(-8, 8, 1601, dtype=np.float32)
    g = np.linspace(0.5, 1.5, 1601, dtype=np.float32)
    result = aclnn_py.call("aclnnGeluBackward", g, x, out=np.empty_like(x))
    expected = torch.ops.aten.gelu_backward(torch.from_numpy(g), torch.from_numpy(x),
                                            approximate="tanh").numpy()
    np.testing.assert_allclose(result, expected, rtol=3e-5, atol=1e-6)
    big = np.array([-np.inf, -1e30, 1e30, np.inf], np.float32)
    ones = np.ones(4, np.float32)
    same(aclnn_py.call("aclnnGeluBackward", ones, big, out=np.empty_like(big)),
         np.array([0.0, 0.0, 1.0, 1.0], np.float32))


@pytest.mark.parametrize(("approximate", "form"), [(0, "none"), (1, "tanh"), (7, "none")])
def test_gelu_v2_takes_the_form_its_attribute_names(approximate, form) -> None:
    # ops-nn activation/gelu_v2/op_api/aclnn_gelu_v2.cpp: 1 is tanh, any other value none
    x = np.linspace(-6, 6, 601, dtype=np.float32)
    result = aclnn_py.call("aclnnGeluV2", x, approximate)
    expected = F.gelu(torch.from_numpy(x).double(), approximate=form).numpy()
    np.testing.assert_allclose(result, expected, rtol=3e-5, atol=3e-7 if form == "none" else 1e-12)


def test_lerp_is_exact_at_both_ends() -> None:
    # ops-math math/lerp/op_kernel/arch35: start + w (end - start) where w < 0.5, else
    # end - (end - start) (1 - w)
    start = np.array([1e8, -3.5, 1e-3, 7.0], np.float32)
    end = np.array([1.0, 2.25, 1e8, -7.0], np.float32)
    same(aclnn_py.call("aclnnLerp", start, end, np.ones(4, np.float32)), end)
    same(aclnn_py.call("aclnnLerp", start, end, np.zeros(4, np.float32)), start)
    w = np.array([0.25, 0.5, 0.75, np.nan], np.float32)
    d = end - start
    expected = np.where(w < 0.5, start + w * d, end - d * (1 - w))
    same(aclnn_py.call("aclnnLerp", start, end, w), expected)


def test_clamp_of_integers_with_float_bounds_into_a_float_out_keeps_the_fractions() -> None:
    # ops-math conversion/clip_by_value_v2/op_api/aclnn_clamp.cpp: the clip runs in out's dtype
    x = np.array([1, 5, 9, -4], np.int32)
    expected = torch.clamp(torch.from_numpy(x), 2.5, 7.5).numpy()
    same(aclnn_py.call("aclnnClamp", x, 2.5, 7.5, out=np.empty(4, np.float32)), expected)
    same(aclnn_py.call("aclnnClampMin", x, -2.5, out=np.empty(4, np.float32)),
         np.array([1, 5, 9, -2.5], np.float32))
    same(aclnn_py.call("aclnnClampMax", x, 4.5, out=np.empty(4, np.float32)),
         np.array([1, 4.5, 4.5, -4], np.float32))
    same(aclnn_py.call("aclnnClamp", x, 2.5, 7.5, out=np.empty(4, np.int32)),
         np.array([2, 5, 7, 2], np.int32))


def test_clamp_refuses_a_float_self_into_an_integer_out() -> None:
    message = refused(aclnn_py.call, "aclnnClamp", np.ones(3, np.float32), 0.0, 1.0,
                      out=np.empty(3, np.int32))
    assert "cannot be cast" in message


def test_signed_zeros_and_nan_as_pytorch() -> None:
    a = np.array([-0.0, 0.0, np.nan, 1.0, -0.0], np.float32)
    b = np.array([0.0, -0.0, 1.0, np.nan, -0.0], np.float32)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    same(aclnn_py.call("aclnnMaximum", a, b), torch.maximum(ta, tb).numpy())
    same(aclnn_py.call("aclnnMinimum", a, b), torch.minimum(ta, tb).numpy())
    same(aclnn_py.call("aclnnRelu", a), torch.relu(ta).numpy())
    same(aclnn_py.call("aclnnClamp", a, 0.0, 0.0, out=np.empty_like(a)),
         torch.clamp(ta, 0.0, 0.0).numpy())
    same(aclnn_py.call("aclnnSign", a), torch.sign(ta).numpy())


UNARY = {"Abs": torch.abs, "Neg": torch.neg, "Exp": torch.exp, "Expm1": torch.expm1,
         "Log": torch.log, "Log2": torch.log2, "Log10": torch.log10, "Sqrt": torch.sqrt,
         "Rsqrt": torch.rsqrt, "Reciprocal": torch.reciprocal,
         "Sin": torch.sin, "Cos": torch.cos, "Tan": torch.tan, "Asin": torch.asin,
         "Acos": torch.acos, "Atan": torch.atan, "Sinh": torch.sinh, "Cosh": torch.cosh,
         "Tanh": torch.tanh, "Erf": torch.erf, "Erfinv": torch.erfinv,
         "Sigmoid": torch.sigmoid, "Relu": torch.relu, "Silu": F.silu,
         "Gelu": lambda x: F.gelu(x, approximate="tanh"), "Mish": F.mish,
         "Hardswish": F.hardswish, "Floor": torch.floor, "Ceil": torch.ceil,
         "Trunc": torch.trunc, "Round": torch.round, "Sign": torch.sign}


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("short", sorted(UNARY))
def test_unary_operators_at_nan_infinities_and_zeros(short) -> None:
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e30, 88.0, -88.0, 100.0,
                  -100.0, 0.5, -0.5, 3.0, -3.0], np.float32)
    result = aclnn_py.call(f"aclnn{short}", x)
    expected = UNARY[short](torch.from_numpy(x)).numpy()
    if short == "Hardswish":  # CANN's kernel clamps x to -3 first (ops-nn activation/
        expected[x == -np.inf] = 0.0  # hard_swish/op_kernel/arch35/hard_swish.h): 0, not NaN
    with np.errstate(invalid="ignore"):
        close = np.abs(result - expected) <= 2e-5 * np.abs(expected)
    exact = (np.isnan(result) & np.isnan(expected)) | (
        (result == expected) & (np.signbit(result) == np.signbit(expected)))
    assert (exact | close).all(), (x[~(exact | close)], result[~(exact | close)],
                                   expected[~(exact | close)])


# ---- empty tensors --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["aclnnSoftmax", "aclnnLogSoftmax"])
def test_softmax_over_an_empty_dimension_computes_nothing(name) -> None:
    # ops-nn activation/softmax_v2 and log_softmax_v2 op_api: an empty self succeeds as it is
    for shape, dim in (((3, 0), -1), ((0, 4), 1), ((2, 0, 3), 0)):
        result = aclnn_py.call(name, np.zeros(shape, np.float32), dim)
        assert result.shape == shape


def test_products_of_empty_and_out_shapes_of_all_element_reductions() -> None:
    # ops-math math/reduce_max, reduce_min, reduce_prod op_api: out holds one element; an
    # empty self computes nothing (Prod: the empty product, 1)
    x = np.ones((2, 3), np.float32)
    for name in ("aclnnMax", "aclnnMin"):
        assert "one element" in refused(aclnn_py.call, name, x, out=np.empty((2,), np.float32))
        same(aclnn_py.call(name, x, out=np.empty((1, 1), np.float32)),
             np.ones((1, 1), np.float32))
    assert "one element" in refused(aclnn_py.call, "aclnnProd", x, np.float32,
                                    out=np.empty((3,), np.float32))
    same(aclnn_py.call("aclnnProd", np.zeros((0, 3), np.float32), np.float32,
                       out=np.empty((), np.float32)), np.array(1.0, np.float32))


# ---- phase 1: shapes, dtypes and attributes -------------------------------------------


def test_cumsum_refuses_a_dim_out_of_range() -> None:
    # ops-math math/cumsum/docs/aclnnCumsum.md: dim in [-self.dim(), self.dim() - 1]
    x = np.ones((2, 3), np.float32)
    for dim in (2, -3, 5):
        assert "out of range" in refused(aclnn_py.call, "aclnnCumsum", x, dim, np.float32,
                                         out=np.empty_like(x))
    assert "dtype" in refused(aclnn_py.call, "aclnnCumsum", x, 1, np.float16,
                              out=np.empty_like(x))
    same(aclnn_py.call("aclnnCumsum", x, -2, np.float32, out=np.empty_like(x)),
         np.cumsum(x, axis=0))


def test_roll_refuses_shifts_and_dims_of_different_lengths() -> None:
    # ops-math conversion/roll/op_api/aclnn_roll.cpp, CheckArraySize and CheckDimsRange
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert "as many" in refused(aclnn_py.call, "aclnnRoll", x, [1, 2], [0])
    assert "one shift" in refused(aclnn_py.call, "aclnnRoll", x, [1, 2], [])
    assert "out of range" in refused(aclnn_py.call, "aclnnRoll", x, [1], [2])
    same(aclnn_py.call("aclnnRoll", x, [1, 2], [0, 0]),
         torch.roll(torch.from_numpy(x), (1, 2), (0, 0)).numpy())


def test_stack_split_and_layer_norm_shapes_are_refused_at_phase_1() -> None:
    a = np.ones((2, 3), np.float32)
    assert "stacked shape" in refused(aclnn_py.call, "aclnnStack", [a, a], 0,
                                      out=np.empty((3, 3), np.float32))
    assert "tensors[1]" in refused(aclnn_py.call, "aclnnStack", [a, np.ones((3, 2), np.float32)],
                                   0, out=np.empty((2, 2, 3), np.float32))
    x = np.ones((5, 2), np.float32)
    assert "out[1]" in refused(aclnn_py.call, "aclnnSplitTensor", x, 2, 0,
                               out=[np.empty((2, 2), np.float32), np.empty((3, 2), np.float32),
                                    np.empty((1, 2), np.float32)])
    assert "the split gives 3" in refused(aclnn_py.call, "aclnnSplitTensor", x, 2, 0,
                               out=[np.empty((2, 2), np.float32)])
    assert "must sum to 5" in refused(aclnn_py.call, "aclnnSplitWithSize", x, [1, 3], 0,
                                out=[np.empty((1, 2), np.float32), np.empty((3, 2), np.float32)])
    assert "as many" in refused(aclnn_py.call, "aclnnSplitWithSize", x, [2, 3], 0,
                                out=[np.empty((5, 2), np.float32)])
    y = np.ones((4, 6), np.float32)
    outs = (np.empty((4, 6), np.float32), np.empty((4, 2), np.float32), None)
    assert "meanOutOptional" in refused(aclnn_py.call, "aclnnLayerNorm", y, [6], None, None,
                                        1e-5, out=outs)


def test_split_with_the_pieces_of_canns_rules() -> None:
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    pieces = aclnn_py.call("aclnnSplitTensor", x, 2, 0,
                           out=[np.empty((2, 2), np.float32), np.empty((2, 2), np.float32),
                                np.empty((1, 2), np.float32)])
    for piece, expected in zip(pieces, np.split(x, [2, 4])):
        same(piece, expected)


def test_matmul_phase_1_works_out_shapes_without_multiplying() -> None:
    # shapes of 2**20 x 2**20: a product of anything that size would never fit in memory
    from aclnn_py.emulator import _kernels as kernels

    def described(*shape: int) -> np.ndarray:
        """As phase 1 gives a kernel a tensor: its shape and dtype, and (the checks read it)
        its format, ND."""
        array = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape, (0,) * len(shape))
        kernels._formats.current[id(array)] = (weakref.ref(array), ND)
        return array

    huge, column, out = described(1 << 20, 1 << 20), described(1 << 20, 3), described(1 << 20, 3)
    for name in ("aclnnMm", "aclnnMatmul"):
        kernels.table()[name].check(self=huge, mat2=column, out=out, cubeMathType=0)
    batch = described(4, 1 << 20, 1 << 20)
    kernels.table()["aclnnBatchMatMul"].check(self=batch, mat2=batch, out=batch, cubeMathType=0)
    with pytest.raises(ValueError, match="out has shape"):
        kernels.table()["aclnnBatchMatMul"].check(self=batch, mat2=batch,
                                                  out=described(4, 1 << 20, 3), cubeMathType=0)


def test_matmul_shapes_are_refused_at_phase_1() -> None:
    a = np.ones((3, 4), np.float32)
    assert "k-axis" in refused(aclnn_py.call, "aclnnMm", a, a, 0,
                                             out=np.empty((3, 4), np.float32))
    # CANN's Matmul reshapes the product into out and that reshape fails (561103)
    assert "the product" in refused(aclnn_py.call, "aclnnMatmul", a, a.T.copy(), 0,
                                    out=np.empty((4, 4), np.float32), status=INNER_NULLPTR)
    assert "broadcast" in refused(aclnn_py.call, "aclnnAddmm", np.ones((2, 5), np.float32), a,
                                  a.T.copy(), 1.0, 1.0, out=np.empty((3, 3), np.float32),
                                  cubeMathType=0)


# ---- beta and alpha of Addmm and Baddbmm ------------------------------------------------


def test_addmm_and_baddbmm_with_beta_0_leave_self_out() -> None:
    # ops-nn matmul/mat_mul_v3/op_host/op_api/aclnn_addmm.cpp and batch_mat_mul_v3's
    # aclnn_baddbmm.cpp: beta 0 computes alpha (a @ b) alone; Addmm's alpha 0 beta self alone
    a, b = np.ones((2, 3), np.float32), np.full((3, 2), 2.0, np.float32)
    bad = np.array([[np.nan, np.inf], [-np.inf, 1.0]], np.float32)
    same(aclnn_py.call("aclnnAddmm", bad, a, b, 0.0, 1.5, out=np.empty((2, 2), np.float32),
                       cubeMathType=0), np.full((2, 2), 9.0, np.float32))
    same(aclnn_py.call("aclnnAddmm", np.full((2, 2), 4.0, np.float32), a * np.nan, b, 0.5,
                       0.0, out=np.empty((2, 2), np.float32), cubeMathType=0),
         np.full((2, 2), 2.0, np.float32))
    same(aclnn_py.call("aclnnBaddbmm", bad[None], a[None], b[None], 0.0, 2.0,
                       out=np.empty((1, 2, 2), np.float32), cubeMathType=0),
         np.full((1, 2, 2), 12.0, np.float32))


# ---- sorting int64 exactly ------------------------------------------------------------


def test_sort_argsort_and_topk_order_int64_beyond_2_53_exactly() -> None:
    big = 2 ** 53
    x = np.array([big + 1, big, big + 2, -big - 1, -big, big + 1, np.iinfo(np.int64).min,
                  np.iinfo(np.int64).max], np.int64)
    t = torch.from_numpy(x)
    for descending in (False, True):
        values, indices = aclnn_py.call("aclnnSort", x, True, 0, descending,
                                        out=(np.empty(8, np.int64), np.empty(8, np.int64)))
        expected = torch.sort(t, stable=True, descending=descending)
        same(values, expected.values.numpy())
        same(indices, expected.indices.numpy())
        same(aclnn_py.call("aclnnArgsort", x, 0, descending, out=np.empty(8, np.int64)),
             torch.sort(t, stable=True, descending=descending).indices.numpy())
    values, indices = aclnn_py.call("aclnnTopk", x, 3, 0, True, True,
                                    out=(np.empty(3, np.int64), np.empty(3, np.int64)))
    same(values, np.array([np.iinfo(np.int64).max, big + 2, big + 1], np.int64))
    same(indices, np.array([7, 2, 0], np.int64))


def test_sort_puts_nan_last_ascending_and_first_descending_keeping_ties_in_order() -> None:
    x = np.array([1.0, np.nan, -0.0, 0.0, np.nan, 1.0, -np.inf], np.float32)
    t = torch.from_numpy(x)
    for descending in (False, True):
        values, indices = aclnn_py.call("aclnnSort", x, True, 0, descending,
                                        out=(np.empty(7, np.float32), np.empty(7, np.int64)))
        expected = torch.sort(t, stable=True, descending=descending)
        same(values, expected.values.numpy())
        same(indices, expected.indices.numpy())


# ---- index values: checked when the kernel runs ---------------------------------------


def failed_at_synchronisation(call, *args, **kwargs) -> str:
    """The message of the 507015 that running ``call`` must report (phase 1 accepted it)."""
    with pytest.raises(aclnn_py.AclError) as info:
        call(*args, **kwargs)
    assert info.value.status == KERNEL_FAILED, info.value
    assert "Synchronize" in info.value.api, info.value
    return info.value.message


WEIGHT = np.arange(12, dtype=np.float32).reshape(4, 3)


@pytest.mark.parametrize("bad", [-1, 4, 100])
def test_embedding_refuses_an_index_outside_its_table(bad) -> None:
    # ops-nn index/embedding/docs/aclnnEmbedding.md: indices in [0, weight.shape[0])
    indices = np.array([[0, bad]], np.int64)
    message = failed_at_synchronisation(aclnn_py.call, "aclnnEmbedding", WEIGHT, indices,
                                        out=np.empty((1, 2, 3), np.float32))
    assert "aclnnEmbedding" in message and f"indices holds {bad} at [0, 1]" in message


def test_an_index_outside_is_reported_by_the_synchronisation_of_a_device_call() -> None:
    weight = aclnn_py.to_device(WEIGHT)
    indices = aclnn_py.to_device(np.array([1, -2], np.int32))
    out = aclnn_py.empty((2, 3), np.float32)
    aclnn_py.call("aclnnEmbedding", weight, indices, out=out)   # phase 1 reads no index
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.synchronize()
    assert info.value.status == KERNEL_FAILED
    assert "aclnnEmbedding" in info.value.message and "indices holds -2" in info.value.message


def test_index_operators_take_the_range_of_their_docs() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    # Gather: [-n, n - 1] (ops-nn index/gather_elements_v2/docs/aclnnGather.md)
    same(aclnn_py.call("aclnnGather", x, 1, np.array([[-1], [0], [-4]], np.int64),
                       out=np.empty((3, 1), np.float32)),
         np.array([[3.0], [4.0], [8.0]], np.float32))
    # GatherV2: [-n, n) (its op_api runs GatherV2 with negativeIndexSupport)
    same(aclnn_py.call("aclnnGatherV2", x, 0, np.array([-3, -1, 2], np.int64),
                       out=np.empty((3, 4), np.float32)), x[[0, 2, 2]])
    for name, args, out in (
            ("aclnnGather", (x, 1, np.array([[4], [0], [0]], np.int64)), np.empty((3, 1))),
            ("aclnnGather", (x, 1, np.array([[-5], [0], [0]], np.int64)), np.empty((3, 1))),
            ("aclnnIndexSelect", (x, 1, np.array([-1], np.int64)), np.empty((3, 1))),
            ("aclnnIndexSelect", (x, 0, np.array([3], np.int32)), np.empty((1, 4))),
            ("aclnnGatherV2", (x, 0, np.array([-4], np.int64)), np.empty((1, 4))),
            ("aclnnGatherV2", (x, 0, np.array([3], np.int64)), np.empty((1, 4))),
            ("aclnnTake", (x, np.array([12], np.int64)), np.empty((1,))),
            ("aclnnTake", (x, np.array([-1], np.int64)), np.empty((1,))),
            ("aclnnScatter", (x, 0, np.array([[-1, 0, 0, 0]], np.int64), x, 0), np.empty((3, 4))),
            ("aclnnScatterAdd", (x, 1, np.array([[4]], np.int64), x), np.empty((3, 4)))):
        message = failed_at_synchronisation(aclnn_py.call, name, *args,
                                            out=np.empty(out.shape, np.float32))
        assert name in message and "index holds" in message, message


def test_nll_loss_refuses_a_target_outside_its_classes_but_ignore_index() -> None:
    x = np.log(np.full((2, 3), 1 / 3, np.float32))
    target = np.array([0, 3], np.int64)
    weight = np.ones(3, np.float32)
    message = failed_at_synchronisation(
        aclnn_py.call, "aclnnNLLLoss", x, target, weight, 1, -100,
        out=(np.empty((), np.float32), np.empty((), np.float32)))
    assert "target holds 3" in message
    result, _ = aclnn_py.call("aclnnNLLLoss", x, np.array([0, -100], np.int64), weight, 1, -100,
                              out=(np.empty((), np.float32), np.empty((), np.float32)))
    assert np.isclose(result, math.log(3))


def test_index_fill_wraps_negative_indices_and_skips_those_out_of_range() -> None:
    # ops-nn index/index_fill_d/docs/aclnnIndexFill&aclnnInplaceIndexFill.md
    x = np.zeros((2, 4), np.float32)
    result = aclnn_py.call("aclnnIndexFill", x, 1, np.array([-1, 7, -9, 1], np.int64), 5.0,
                           out=np.empty_like(x))
    same(result, np.array([[0, 5, 0, 5], [0, 5, 0, 5]], np.float32))


# ---- indexing (kernels/indexing.py) -------------------------------------------------------


def test_index_add_sums_repeated_indices_in_integers_and_halves() -> None:
    x = np.zeros((3, 2), np.int32)
    source = np.full((4, 2), 2**30, np.int32)
    result = aclnn_py.call("aclnnIndexAdd", x, -2, np.array([1, 1, 0, 1], np.int64), source,
                           1, out=np.empty_like(x))  # dim -2: rows; int32 wraps as PyTorch's
    expected = torch.index_add(torch.zeros(3, 2, dtype=torch.int32), 0,
                               torch.tensor([1, 1, 0, 1]), torch.from_numpy(source)).numpy()
    same(result, expected)
    half = np.full((2, 3), 1024, np.float16)
    result = aclnn_py.call("aclnnIndexAdd", half, 1, np.array([0, 0], np.int64),
                           np.full((2, 2), 0.5, np.float16), 1.0, out=np.empty_like(half))
    same(result[:, 0], np.full(2, 1025, np.float16))  # 0.5 + 0.5 summed in float32, then rounded
    assert "dim" in refused(aclnn_py.call, "aclnnIndexAdd", x, 2, np.array([0], np.int64),
                            source[:1], 1, out=np.empty_like(x))


def test_index_takes_negative_and_mixed_indices_and_empty_self() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    full = np.zeros((0,), np.int64)
    result = aclnn_py.call("aclnnIndex", x, [full, np.array([-1, 0], np.int64)],
                           out=np.empty((2, 2, 4), np.float32))
    same(result, x[:, [-1, 0]])
    assert "shape" in refused(aclnn_py.call, "aclnnIndex", x, [np.array([0], np.int64)],
                              out=np.empty((2, 2), np.float32))


def test_medians_and_kthvalue_follow_pytorch_with_nan() -> None:
    x = np.array([[3.0, np.nan, 1.0, 2.0], [4.0, 0.0, 8.0, 6.0]], np.float32)
    values, indices = aclnn_py.call("aclnnMedianDim", x, -1, False,
                                    out=(np.empty(2, np.float32), np.empty(2, np.int64)))
    expected = torch.median(torch.from_numpy(x), -1)
    same(values, expected.values.numpy())
    same(indices, expected.indices.numpy())
    values, indices = aclnn_py.call("aclnnNanMedianDim", x, 1, True,
                                    out=(np.empty((2, 1), np.float32),
                                         np.empty((2, 1), np.int64)))
    same(values, np.array([[2.0], [4.0]], np.float32))
    same(indices, np.array([[3], [0]]))
    assert np.isnan(aclnn_py.call("aclnnMedian", x, out=np.empty((), np.float32)))
    same(aclnn_py.call("aclnnNanMedian", x, out=np.empty((), np.float32)),
         np.array(3.0, np.float32))
    assert "k is 5" in refused(aclnn_py.call, "aclnnKthvalue", x, 5, 1, False,
                               out=(np.empty(2, np.float32), np.empty(2, np.int64)))


def test_nonzero_and_unique_report_their_real_extent() -> None:
    x = np.array([[0, 2], [3, 0], [0, 0]], np.int32)
    same(aclnn_py.call("aclnnNonzero", x, out=np.empty((6, 2), np.int64)),
         np.array([[0, 1], [1, 0]]))
    same(aclnn_py.call("aclnnNonzeroV2", np.zeros((2, 2), np.float32),
                       out=np.empty((2, 4), np.int64)), np.zeros((2, 0), np.int64))
    values, inverse = aclnn_py.call("aclnnUnique", x, True, True,
                                    out=(np.empty(6, np.int32), np.empty((3, 2), np.int64)))
    same(values, np.array([0, 2, 3], np.int32))
    same(inverse, np.array([[0, 1], [2, 0], [0, 0]]))
    values, inverse, counts = aclnn_py.call(
        "aclnnUniqueConsecutive", x, True, True, 0,
        out=(np.empty((3, 2), np.int32), np.empty(3, np.int64), np.empty(3, np.int64)))
    same(values, x)
    same(counts, np.array([1, 1, 1]))


def test_repeat_interleave_refuses_negative_repeats_and_a_wrong_out() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert "negative" in refused(aclnn_py.call, "aclnnRepeatInterleaveInt", x, -1, 0,
                                 out=np.empty(0, np.float32))
    assert "shape" in refused(aclnn_py.call, "aclnnRepeatInterleaveIntWithDim", x, 2, 1, 6,
                              out=np.empty((2, 5), np.float32))
    empty = np.zeros((0, 3), np.float32)
    same(aclnn_py.call("aclnnRepeatInterleaveIntWithDim", empty, 2, 0, 0,
                       out=np.empty((0, 3), np.float32)), np.zeros((0, 3), np.float32))


def test_embedding_dense_backward_skips_padding_and_scales_by_frequency() -> None:
    grad = np.ones((4, 2), np.float32)
    indices = np.array([0, 2, 2, 1], np.int64)
    result = aclnn_py.call("aclnnEmbeddingDenseBackward", grad, indices, 3, 1, True,
                           out=np.empty((3, 2), np.float32))
    same(result, np.array([[1, 1], [0, 0], [1, 1]], np.float32))
    assert "leading" in refused(aclnn_py.call, "aclnnEmbeddingDenseBackward", grad,
                                indices[:2], 3, 1, False, out=np.empty((3, 2), np.float32))


# ---- max pooling ------------------------------------------------------------------------


@pytest.mark.parametrize(("shape", "kernel", "stride", "padding", "ceil"), [
    ((1, 2, 5, 5), 2, 2, 1, False), ((1, 1, 6, 7), 3, 2, 1, True), ((2, 3, 4, 4), 2, 1, 0, False),
    ((3, 7, 5), 3, 3, 1, True)])
def test_max_pool_matches_pytorch_with_inf_nan_and_ties(shape, kernel, stride, padding,
                                                        ceil) -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(-2, 3, shape).astype(np.float32)      # ties in every window
    x.reshape(-1)[rng.choice(x.size, x.size // 3, replace=False)] = -np.inf
    x.reshape(-1)[rng.choice(x.size, 3, replace=False)] = np.nan
    x[..., :2, :2] = -np.inf                                # a window of -inf and padding
    values, indices = F.max_pool2d(torch.from_numpy(x), kernel, stride, padding,
                                   ceil_mode=ceil, return_indices=True)
    result, where = aclnn_py.call(
        "aclnnMaxPool2dWithIndices", x, [kernel], [stride], [padding], [1], ceil,
        out=(np.empty(tuple(values.shape), np.float32), np.empty(tuple(values.shape), np.int64)))
    same(result, values.numpy())
    same(where, indices.numpy())


def test_max_pool_refuses_shapes_and_attributes_of_its_doc() -> None:
    # ops-nn pooling/max_pool3d_with_argmax_v2/docs/aclnnMaxPool2dWithIndices.md
    x = np.ones((1, 1, 4, 4), np.float32)
    outs = (np.empty((1, 1, 2, 2), np.float32), np.empty((1, 1, 2, 2), np.int64))
    assert "it must be [1, 1, 3, 3]" in refused(aclnn_py.call, "aclnnMaxPool2dWithIndices", x,
                                                [2], [1], [0], [1], False, out=outs)
    assert "padding" in refused(aclnn_py.call, "aclnnMaxPool2dWithIndices", x, [2], [2], [2],
                                [1], False, out=outs)
    assert "dilation" in refused(aclnn_py.call, "aclnnMaxPool2dWithIndices", x, [2], [2], [0],
                                 [2], False, out=(np.empty((1, 1, 1, 1), np.float32),
                                                  np.empty((1, 1, 1, 1), np.int64)))


def test_adaptive_max_pool_matches_pytorch_with_inf_nan_and_ties() -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(-2, 3, (2, 3, 7, 5)).astype(np.float32)   # ties in every window
    x.reshape(-1)[rng.choice(x.size, x.size // 3, replace=False)] = -np.inf
    x.reshape(-1)[rng.choice(x.size, 4, replace=False)] = np.nan
    x[0, 0] = -np.inf                                          # whole windows of -inf
    values, indices = F.adaptive_max_pool2d(torch.from_numpy(x), (3, 2), return_indices=True)
    result, where = aclnn_py.call("aclnnAdaptiveMaxPool2d", x, [3, 2],
                                  out=(np.empty((2, 3, 3, 2), np.float32),
                                       np.empty((2, 3, 3, 2), np.int64)))
    same(result, values.numpy())
    same(where, indices.numpy())


def test_pool_gradients_of_empty_batches_and_refusals() -> None:
    # ops-nn pooling/avg_pool3_d_grad/op_api/aclnn_avgpool2d_backward.cpp CheckOutputShape;
    # pooling/max_pool3d_grad_with_argmax/op_api/aclnn_max_pool2d_with_indices_backward.cpp
    grad = aclnn_py.call("aclnnAdaptiveAvgPool2dBackward", np.ones((0, 2, 2, 2), np.float32),
                         np.ones((0, 2, 4, 4), np.float32), out=np.empty((0, 2, 4, 4), np.float32))
    assert grad.shape == (0, 2, 4, 4)
    g, x = np.ones((1, 1, 2, 2), np.float32), np.ones((1, 1, 4, 4), np.float32)
    assert "dilation" in refused(aclnn_py.call, "aclnnMaxPool2dWithIndicesBackward", g, x,
                                 np.zeros((1, 1, 2, 2), np.int32), [2], [2], [0], [2], False,
                                 out=np.empty((1, 1, 4, 4), np.float32))
    assert "self's shape" in refused(aclnn_py.call, "aclnnAdaptiveAvgPool2dBackward", g, x,
                                     out=np.empty((1, 1, 4, 5), np.float32))


def test_padding_crops_with_negative_widths_and_refuses_wide_reflections() -> None:
    # ops-math conversion/mirror_pad/op_api/aclnn_reflection_pad1d.cpp CheckShape: each width
    # below its dim's extent; negative widths crop as in PyTorch
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    for name, mode in (("aclnnReflectionPad1d", "reflect"), ("aclnnReplicationPad1d",
                                                            "replicate")):
        expected = F.pad(torch.from_numpy(x), [-1, 3], mode=mode).numpy()
        same(aclnn_py.call(name, x, [-1, 3], out=np.empty(expected.shape, np.float32)),
             expected)
    x2 = x.reshape(1, 2, 5)
    expected = F.pad(torch.from_numpy(x2), [3, -1, -1, 1], mode="circular").numpy()
    same(aclnn_py.call("aclnnCircularPad2d", x2, [3, -1, -1, 1],
                       out=np.empty(expected.shape, np.float32)), expected)
    assert "below the extent" in refused(aclnn_py.call, "aclnnReflectionPad1d", x, [5, 0],
                                         out=np.empty((2, 10), np.float32))
    assert "padded, self is" in refused(aclnn_py.call, "aclnnReplicationPad1d", x, [1, 1],
                                        out=np.empty((2, 8), np.float32))


def test_slices_flatten_and_diag_at_their_edges() -> None:
    # ops-math conversion/slice/op_api/aclnn_slice.cpp (clamped start and end, negative dim),
    # flatten/op_host/op_api/aclnn_flatten.cpp (a 0-d self, axis 0), diag_v2/op_api/
    # aclnn_diag.cpp CheckDiagonal (a diagonal just past the edge: nothing to compute)
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    same(aclnn_py.call("aclnnSlice", x, -1, 5, 9, 1, out=np.empty((3, 0), np.int32)),
         x[:, 5:9])
    same(aclnn_py.call("aclnnSlice", x, -2, -10, 2, 2, out=np.empty((1, 4), np.int32)),
         x[-10:2:2])
    assert "step" in refused(aclnn_py.call, "aclnnSlice", x, 0, 0, 3, 0,
                             out=np.empty((3, 4), np.int32))
    same(aclnn_py.call("aclnnFlatten", np.array(7.0, np.float32), 0,
                       out=np.empty((1, 1), np.float32)), np.array([[7.0]], np.float32))
    assert "out of range" in refused(aclnn_py.call, "aclnnFlatten", x, 2,
                                     out=np.empty((12, 1), np.int32))
    same(aclnn_py.call("aclnnDiag", x.astype(np.float32), 1, out=np.empty((3,), np.float32)),
         np.diagonal(x, 1).astype(np.float32))
    assert "at most 2" in refused(aclnn_py.call, "aclnnDiag", np.ones((2, 2, 2), np.float32), 0,
                                  out=np.empty((2,), np.float32))
    same(aclnn_py.call("aclnnSliceV2", x, [-2], [100], [-1], [1],
                       out=np.empty((3, 2), np.int32)), x[:, -2:])
    assert "twice" in refused(aclnn_py.call, "aclnnSliceV2", x, [0, 0], [1, 1], [1, -1], [1, 1],
                              out=np.empty((3, 1), np.int32))


# ---- the block driver and the faster forms ----------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_elementwise_kernels_over_many_blocks_in_place_and_broadcast(dtype) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="pip install ml_dtypes")
    numpy_dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    torch_dtype = getattr(torch, dtype)
    rng = np.random.default_rng(5)
    n = 3 * (1 << 16) + 7                                  # blocks and a ragged end
    x = rng.uniform(-4, 4, n).astype(np.float32).astype(numpy_dtype)
    y = rng.uniform(-4, 4, (1, 1 << 10)).astype(np.float32).astype(numpy_dtype)

    def t(array):
        return torch.from_numpy(np.asarray(array, np.float32)).to(torch_dtype)

    def close(actual, expected_tensor):
        # one unit in the last place of the dtype, against PyTorch's own rounding
        expected = expected_tensor.float().numpy()
        tolerance = {"float32": 2.0 ** -22, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}[dtype]
        assert np.asarray(actual).dtype == numpy_dtype
        np.testing.assert_allclose(np.asarray(actual, np.float32), expected, rtol=tolerance,
                                   atol=1e-6)

    close(aclnn_py.call("aclnnInplaceSigmoid", x.copy()), torch.sigmoid(t(x)))
    close(aclnn_py.call("aclnnGelu", x), F.gelu(t(x).float(), approximate="tanh"))
    grid = rng.uniform(-4, 4, (300, 1 << 10)).astype(np.float32).astype(numpy_dtype)
    close(aclnn_py.call("aclnnMul", grid, y), t(grid) * t(y))
    strided = grid[:, ::2]
    close(aclnn_py.call("aclnnTanh", strided), torch.tanh(t(strided)))


def test_topk_of_a_few_among_many_matches_pytorch() -> None:
    rng = np.random.default_rng(6)
    x = rng.permutation(3 * 200).reshape(3, 200).astype(np.float32)
    x[1, 17] = np.nan
    for largest in (True, False):
        values, indices = aclnn_py.call("aclnnTopk", x, 5, 1, largest, True,
                                        out=(np.empty((3, 5), np.float32),
                                             np.empty((3, 5), np.int64)))
        expected = torch.topk(torch.from_numpy(x), 5, 1, largest=largest)
        same(values, expected.values.numpy())
        same(indices, expected.indices.numpy())


def test_floor_divide_of_floats_floors_the_exact_quotient() -> None:
    a = np.array([1.0, -1.0, 7.5, -7.5, 0.0, -0.0, 1.0, -1.0, np.inf, 5.0, 1e30, 0.3, -5.0,
                  np.nan, 0.0], np.float32)
    b = np.array([0.1, 0.1, 2.0, 2.0, 3.0, 3.0, 0.0, 0.0, 2.0, np.inf, 3e-10, -1e10, np.inf,
                  1.0, -2.0], np.float32)
    same(aclnn_py.call("aclnnFloorDivide", a, b),
         torch.floor_divide(torch.from_numpy(a), torch.from_numpy(b)).numpy())


def test_binary_cross_entropy_with_logits_is_stable_at_large_logits() -> None:
    x = np.array([-100.0, -20.0, -1.0, 0.0, 1.0, 20.0, 100.0], np.float32)
    t = np.array([1.0, 0.0, 0.3, 0.5, 0.7, 1.0, 0.0], np.float32)
    pos = np.full(7, 2.5, np.float32)
    result = aclnn_py.call("aclnnBinaryCrossEntropyWithLogits", x, t, None, pos, 0)
    expected = F.binary_cross_entropy_with_logits(
        torch.from_numpy(x).double(), torch.from_numpy(t).double(),
        pos_weight=torch.from_numpy(pos).double(), reduction="none").numpy()
    np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_every_computed_operator_has_its_formula() -> None:
    from aclnn_py.emulator._kernels.formulas import FORMULAS

    assert set(FORMULAS) == set(aclnn_py.emulator.kernels())


def test_constant_pad_crops_with_negative_widths_and_refuses_what_canns_check_refuses() -> None:
    # ops-math conversion/pad_v3/op_api/aclnn_constant_pad_nd.cpp, CheckShape
    v = np.arange(20, dtype=np.float32).reshape(4, 5)
    for pad in ([-1, 2], [1, -2, -1, 0], [0, 0, 2, -3]):
        expected = F.pad(torch.from_numpy(v), pad, value=0.5).numpy()
        same(aclnn_py.call("aclnnConstantPadNd", v, pad, 0.5, out=np.empty_like(expected)),
             expected)
    assert "even" in refused(aclnn_py.call, "aclnnConstantPadNd", v, [1], 0.0,
                             out=np.empty((4, 6), np.float32))
    assert "below 0" in refused(aclnn_py.call, "aclnnConstantPadNd", v, [-6, 0], 0.0,
                                 out=np.empty((4, 0), np.float32))
    assert "padded, it is [4, 7]" in refused(aclnn_py.call, "aclnnConstantPadNd", v, [1, 1], 0.0,
                                     out=np.empty((4, 5), np.float32))


A = np.ones((3, 4), np.float32)
WRONG_OUT = {  # operator -> its arguments, with an out of the wrong shape
    "aclnnHardsigmoid": ((A,), np.empty((4, 3), np.float32)),
    "aclnnLeakyRelu": ((A, 0.1), np.empty((3, 5), np.float32)),
    "aclnnSoftplus": ((A, 1.0, 20.0), np.empty((2, 4), np.float32)),
    "aclnnGeluBackward": ((A, A), np.empty((3, 5), np.float32)),
    "aclnnSigmoidBackward": ((A, A), np.empty((4,), np.float32)),
    "aclnnHardtanhBackward": ((A, A, -1.0, 1.0), np.empty((3, 3), np.float32)),
    "aclnnSoftmaxBackward": ((A, A, 1), np.empty((4, 3), np.float32)),
    "aclnnGlu": ((A, 1), np.empty((3, 4), np.float32)),
    "aclnnDot": ((A[0], A[0]), np.empty((2,), np.float32)),
    "aclnnFlip": ((A, [0]), np.empty((4, 3), np.float32)),
    "aclnnTril": ((A, 0), np.empty((3, 3), np.float32)),
    "aclnnExpand": ((A[:1], [5, 4]), np.empty((3, 4), np.float32)),
    "aclnnRepeat": ((A, [2, 1]), np.empty((3, 4), np.float32)),
    "aclnnArgsort": ((A, 1, False), np.empty((3, 3), np.int64)),
}


@pytest.mark.parametrize("name", sorted(WRONG_OUT))
def test_out_shapes_are_refused_at_phase_1(name) -> None:
    arguments, out = WRONG_OUT[name]
    # HardtanhBackward's out is checked only by the final ViewCopy, whose failure is 561103
    status = INNER_NULLPTR if name == "aclnnHardtanhBackward" else PARAM_INVALID
    message = refused(aclnn_py.call, name, *arguments, out=out, status=status)
    assert "shape" in message or "dimensions" in message


def test_signbit_writes_into_any_out_its_soc_lists_and_refuses_others():
    # ops-math math/signbit/op_api/aclnn_signbit.cpp: out takes the same dtype list as self
    # (BOOL cast to it), as CANN's sample does with a FLOAT out
    x = np.array([-1.0, 0.0, -0.0, 2.0, -np.inf], np.float32)
    out = aclnn_py.call("aclnnSignbit", x, out=np.empty(5, np.float32))
    assert out.tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.call("aclnnSignbit", x, out=np.empty(5, np.complex64))
    assert info.value.status == 161002


def test_any_takes_the_outs_its_op_api_takes() -> None:
    """aclnnAny: an empty self fills any out with false; one-element results go into any
    one-element out (ops-math math/reduce_any/op_api/aclnn_any.cpp); other shapes refused."""
    out = np.ones((1, 1), np.bool_)
    aclnn_py.call("aclnnAny", np.zeros((2, 0, 4), np.bool_), [0, 1, 2], False, out=out)
    assert out.shape == (1, 1) and not out.any()
    x = np.zeros((4, 5), np.float32)
    x[3, 2] = 1.0
    out = np.zeros((1,), np.uint8)
    aclnn_py.call("aclnnAny", x, [0, 1], False, out=out)
    assert out.tolist() == [1]
    with pytest.raises(aclnn_py.AclError, match="the reduction gives"):
        aclnn_py.call("aclnnAny", x, [0], False, out=np.zeros((4,), np.bool_))
# ---- losses, activation gradients and gated linear units (kernels/losses.py, ...) ---------


@pytest.mark.parametrize(("reduction", "expected"), [(1, np.nan), (2, 0.0), (3, np.nan)])
def test_kl_div_of_an_empty_input_fills_as_its_op_api_does(reduction, expected) -> None:
    # ops-math math/kl_div_v2/op_api/aclnn_kl_div.cpp: mean NaN, sum 0, batchmean NaN for a
    # batch of 0
    empty = np.zeros((0, 3), np.float32)
    result = aclnn_py.call("aclnnKlDiv", empty, empty, reduction, False,
                           out=np.empty((), np.float32))
    same(result, np.array(expected, np.float32))


def test_kl_div_takes_zero_targets_as_zero_and_negative_ones_as_nan() -> None:
    # ops-math math/kl_div_v2/op_kernel/kl_div_v2_dag.h: a target of 0 selects 1 before the log
    x, t = np.array([0.5, 0.5, 0.5], np.float32), np.array([0.0, 0.25, -1.0], np.float32)
    result = aclnn_py.call("aclnnKlDiv", x, t, 0, False, out=np.empty(3, np.float32))
    expected = F.kl_div(torch.from_numpy(x), torch.from_numpy(t), reduction="none").numpy()
    np.testing.assert_array_equal(result, expected)  # 0 * (0 - x): -0.0 where PyTorch has 0


def test_soft_margin_loss_refuses_a_reduced_out_of_one_dimension() -> None:
    # ops-nn loss/soft_margin_loss/op_api/aclnn_soft_margin_loss.cpp CheckShape: 0-d only
    x = np.ones((2, 3), np.float32)
    assert "0-d" in refused(aclnn_py.call, "aclnnSoftMarginLoss", x, x, 1,
                            out=np.empty((1,), np.float32))
    same(aclnn_py.call("aclnnSoftMarginLoss", np.zeros((0, 3), np.float32),
                       np.zeros((0, 3), np.float32), 1, out=np.empty((), np.float32)),
         np.array(np.nan, np.float32))


def test_cross_entropy_of_only_ignored_targets_is_nan_for_mean_as_pytorch() -> None:
    x, t = np.ones((2, 3), np.float32), np.array([-100, -100], np.int64)
    loss, log_prob, _, _ = aclnn_py.call(
        "aclnnCrossEntropyLoss", x, t, None, "mean", -100, 0.0, 0.0, False,
        out=(np.empty((), np.float32), np.empty((2, 3), np.float32),
             np.zeros((), np.float32), np.zeros((2,), np.float32)))
    assert np.isnan(loss)
    np.testing.assert_allclose(log_prob, np.full((2, 3), -np.log(3), np.float32), rtol=1e-6)


def test_nll_loss2d_reports_a_target_outside_the_classes_at_the_launch() -> None:
    # ops-nn loss/nll_loss/docs/aclnnNLLLoss2d.md: targets in [0, C - 1] (CANN's own sample
    # passes a 2 with C = 2: loss/nll_loss/examples/test_aclnn_nll_loss_2d.cpp)
    x = np.zeros((1, 2, 1, 2), np.float32)
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.call("aclnnNLLLoss2d", x, np.array([[[0, 2]]], np.int64),
                      np.ones(2, np.float32), 0, -100,
                      out=(np.empty((1, 1, 2), np.float32), np.empty((1,), np.float32)))
    assert info.value.status == KERNEL_FAILED and "outside [0, 2)" in str(info.value)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_of_an_impossible_alignment_is_inf_or_zero(zero_infinity) -> None:
    # a target of 3 labels cannot be emitted in 2 steps: PyTorch's inf, 0 with zeroInfinity
    log_probs = np.log(np.full((2, 1, 4), 0.25, np.float32))
    targets = np.array([[1, 2, 3]], np.int64)
    loss, alpha = aclnn_py.call("aclnnCtcLoss", log_probs, targets, [2], [3], 0, zero_infinity,
                                out=(np.empty((1,), np.float32), np.empty((1, 2, 8), np.float32)))
    same(loss, np.array([0.0 if zero_infinity else np.inf], np.float32))
    assert np.isneginf(alpha[:, :, 7:]).all()


def test_gated_units_refuse_an_odd_split() -> None:
    # ops-nn activation/ge_glu_v2/op_host/op_api/aclnn_geglu.cpp CheckSliceDimSizes: even
    x = np.ones((2, 5), np.float32)
    assert "even" in refused(aclnn_py.call, "aclnnSwiGlu", x, -1,
                             out=np.empty((2, 2), np.float32))
    assert "even" in refused(aclnn_py.call, "aclnnGeGlu", x, -1, 0,
                             out=(np.empty((2, 2), np.float32), np.empty((2, 2), np.float32)))


def test_situ_glu_grad_keeps_precision_where_the_sigmoid_saturates() -> None:
    # CANN's sample (ops-nn activation/situ_glu_grad/examples) runs gates up to 15: 1 - s
    # computed as sigmoid(-gate), not by subtraction
    x = np.concatenate([np.full(2, 12.0), np.ones(2)]).astype(np.float32).reshape(1, 4)
    g = np.ones((1, 2), np.float32)
    result = aclnn_py.call("aclnnSituGluGrad", g, x, -1, 1.0, 0.0, True,
                           out=np.empty((1, 4), np.float32))
    source = torch.from_numpy(x.astype(np.float64)).requires_grad_()
    gate, up = source.chunk(2, 1)
    (torch.tanh(gate) * torch.sigmoid(gate) * up).backward(torch.ones(1, 2, dtype=torch.float64))
    assert relative_error(result, source.grad.numpy()) < 1e-5
def test_trans_matmul_weight_leaves_fractal_nz_blocks_a_client_reads_back() -> None:
    """aclnnTransMatmulWeight's phase 1 gives the weight the FRACTAL_NZ storage shape
    [ceil(n / 16), ceil(k / 16), 16, 16] of a float16 [k, n] (ops-math conversion/trans_data/
    op_api/aclnn_trans_matmul_weight.cpp), its launch the blocks, padding zeros; a second call
    is refused, the weight no longer ND (CheckFormatValid)."""
    from helpers import _trans_matmul_weight

    from aclnn_py._c import lowlevel as ll
    from aclnn_py._c._ffi import ffi
    from aclnn_py.runtime.process import activate

    activate()
    weight = np.arange(20 * 24, dtype=np.float16).reshape(20, 24)
    padded = np.zeros((32, 32), np.float16)
    padded[:20, :24] = weight
    expected = padded.reshape(2, 16, 2, 16).transpose(2, 0, 1, 3)
    stream = ll.create_stream()
    pointer = ll.malloc(expected.nbytes)
    tensor = None
    try:
        ll.memcpy(pointer, weight.nbytes, ffi.from_buffer(weight), weight.nbytes,
                  ll.MEMCPY_HOST_TO_DEVICE)
        tensor = ll.create_tensor((20, 24), ll.constant("ACL_FLOAT16"), (24, 1), 0, (480,),
                                  pointer, ll.constant("ACL_FORMAT_ND"))
        _trans_matmul_weight(tensor, stream)
        assert ll.get_storage_shape(tensor) == (2, 2, 16, 16)
        assert ll.get_view_shape(tensor) == (20, 24)
        back = np.empty(expected.shape, np.float16)
        ll.memcpy(ffi.from_buffer(back, require_writable=True), back.nbytes, pointer,
                  back.nbytes, ll.MEMCPY_DEVICE_TO_HOST)
        np.testing.assert_array_equal(back, expected)
        with pytest.raises(aclnn_py.AclError, match="ND"):
            _trans_matmul_weight(tensor, stream)
    finally:
        if tensor is not None:
            ll.destroy_tensor(tensor)
        ll.free(pointer)
        ll.destroy_stream(stream)


# ---- the foreach ScalarList operators (an aclScalarList: one scalar per tensor) ----------
# The scalar list's dtype is nnopbase's (hicann/opbase aa3cd74 src/nnopbase/individual_op/
# executor/indv_executor_ext.cpp, NnopbaseExecutorAddScalarListInput): the first scalar's, a
# double stored as float32; the A2 tiling's checks answer 561002 (ops-nn foreach/foreach_utils/
# op_host/foreach_tiling_class.h).

TILING_ERROR = 561002


def test_foreach_scalar_list_on_int32_takes_int64_scalars_and_wraps_as_torch() -> None:
    x = [np.array([2, -3, 2**31 - 1], np.int32), np.array([[5, 7]], np.int32)]
    for op, function in (("Add", torch.add), ("Sub", torch.sub), ("Mul", torch.mul),
                         ("Maximum", torch.maximum), ("Minimum", torch.minimum),
                         ("Pow", torch.pow)):
        got = aclnn_py.call(f"aclnnForeach{op}ScalarList", x=x, scalars=[2, -1 if op != "Pow"
                                                                         else 3],
                            out=[np.empty_like(t) for t in x])
        for tensor, value, result in zip(x, [2, -1 if op != "Pow" else 3], got):
            same(result, function(torch.from_numpy(tensor),
                                  torch.tensor(value, dtype=torch.int32)).numpy())


def test_foreach_scalar_list_nan_inf_empty_and_a_larger_out() -> None:
    x = [np.array([np.nan, 1.0, -np.inf], np.float32), np.zeros((0, 3), np.float32)]
    out = [np.full(5, 7.0, np.float32), np.empty((0, 3), np.float32)]
    got = aclnn_py.call("aclnnForeachMaximumScalarList", x=x, scalars=[0.5, 1.0], out=out)
    # out may hold more elements than x (the tiling's CheckOutputShapeAndDtype): the result
    # fills its first ones
    same(got[0][:3], np.array([np.nan, 1.0, 0.5], np.float32))
    assert got[1].shape == (0, 3)
    got = aclnn_py.call("aclnnForeachDivScalarList", x=[np.array([1.0, -1.0, 0.0], np.float16)],
                        scalars=[0.0], out=[np.empty(3, np.float16)])
    same(got[0], np.array([np.inf, -np.inf, np.nan], np.float16))


def test_foreach_scalar_list_stores_doubles_as_float32_and_converts_the_others() -> None:
    x = [np.array([1.0], np.float32), np.array([1.0], np.float32)]
    # 0.1 as a double, stored as float32; an int64 scalar after a double is taken as float32
    got = aclnn_py.call("aclnnForeachMulScalarList", x=x, scalars=[0.1, np.int64(3)],
                        out=[np.empty(1, np.float32), np.empty(1, np.float32)])
    same(got[0], np.array([np.float32(0.1)], np.float32))
    same(got[1], np.array([3.0], np.float32))
    # float32 scalars as the sample gives them; a float16 list takes FLOAT scalars too
    got = aclnn_py.call("aclnnForeachSubScalarList", x=[np.array([1.0], np.float16)],
                        scalars=[np.float32(0.25)], out=[np.empty(1, np.float16)])
    same(got[0], np.array([0.75], np.float16))


@pytest.mark.parametrize("scalars, out, status, message", [
    ([1.0], [np.empty(2, np.float32)] * 2, TILING_ERROR, "scalars holds 1 scalars and x 2"),
    ([1.0, 2.0], [np.empty(2, np.float32)], TILING_ERROR, "out holds 1 tensors and x 2"),
    ([1.0, 2.0], [np.empty(1, np.float32)] * 2, TILING_ERROR, "at least as many"),
    ([1.0, 2.0], [np.empty(2, np.float16)] * 2, PARAM_INVALID, "out\\[0\\] has dtype float16"),
    ([1, 2], [np.empty(2, np.float32)] * 2, PARAM_INVALID, "scalars has dtype int64"),
    ([np.float16(1), 2.0], [np.empty(2, np.float32)] * 2, PARAM_INVALID,
     "scalars has dtype float32"),  # a double anywhere makes the list float32: accepted
])
def test_foreach_scalar_list_refusals(scalars, out, status, message) -> None:
    x = [np.ones(2, np.float32), np.ones(2, np.float32)]
    if message == "scalars has dtype float32":
        aclnn_py.call("aclnnForeachAddScalarList", x=x, scalars=scalars, out=out)
        return
    with pytest.raises(aclnn_py.AclError, match=message) as raised:
        aclnn_py.call("aclnnForeachAddScalarList", x=x, scalars=scalars, out=out)
    assert raised.value.status == status


def test_foreach_scalar_list_refuses_int32_div_and_mixed_lists() -> None:
    with pytest.raises(aclnn_py.AclError, match="x(\\[0\\])? has dtype (DT_INT32|int32)") as raised:
        aclnn_py.call("aclnnForeachDivScalarList", x=[np.ones(2, np.int32)], scalars=[2],
                      out=[np.empty(2, np.int32)])
    assert raised.value.status == PARAM_INVALID
    with pytest.raises(aclnn_py.AclError, match="one dtype") as raised:
        aclnn_py.call("aclnnForeachMulScalarList",
                      x=[np.ones(2, np.float32), np.ones(2, np.float16)], scalars=[2.0, 2.0],
                      out=[np.empty(2, np.float32), np.empty(2, np.float16)])
    assert raised.value.status == TILING_ERROR
def test_bincount_edges_follow_the_op_api() -> None:
    # ops-math math/bincount/op_api/aclnn_bincount.cpp: an empty self fills out with 0 only
    # when minlength > 0; the bins are max(out's size, minlength); self is 1-d
    out = aclnn_py.to_device(np.full(4, 7.0, np.float32))
    aclnn_py.call("aclnnBincount", np.zeros(0, np.int32), None, 3, out=out)
    same(out.numpy(), np.zeros(4, np.float32))
    out = aclnn_py.to_device(np.full(4, 7.0, np.float32))
    aclnn_py.call("aclnnBincount", np.zeros(0, np.int32), None, 0, out=out)
    same(out.numpy(), np.full(4, 7.0, np.float32))
    # values outside the bins (negative, or past out's size) are not counted
    values = np.array([-1, 0, 2, 2, 9], np.int64)
    same(aclnn_py.call("aclnnBincount", values, None, 0, out=np.empty(4, np.int64)),
         np.array([1, 0, 2, 0], np.int64))
    weights = np.array([5, 1, 2, 3, 4], np.int32)  # integer weights sum in float64
    same(aclnn_py.call("aclnnBincount", values, weights, 0, out=np.empty(3, np.float64)),
         np.array([1.0, 0.0, 5.0]))
    assert "1" in refused(aclnn_py.call, "aclnnBincount", np.zeros((2, 2), np.int32), None, 0,
                          out=np.empty(3, np.float32))
    assert "shape" in refused(aclnn_py.call, "aclnnBincount", np.zeros(3, np.int32),
                              np.ones(2, np.float32), 0, out=np.empty(3, np.float32))


def test_cdist_backward_is_zero_where_the_distance_is_zero_and_takes_p_minus_one() -> None:
    # PyTorch's _cdist_backward: no NaN where x1's row equals x2's; CANN's op_api takes p -1
    # (ops-math math/cdist_grad/op_api/aclnn_cdist_backward.cpp CheckParams) as the inf norm
    x1 = np.array([[1.0, 2.0], [0.0, 0.0]], np.float32)
    x2 = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    grad = np.ones((2, 2), np.float32)
    for p, torch_p in ((2.0, 2.0), (0.5, 0.5), (-1.0, math.inf), (1.0, 1.0), (0.0, 0.0)):
        cdist = torch.cdist(torch.from_numpy(x1), torch.from_numpy(x2), p=torch_p)
        expected = torch.ops.aten._cdist_backward(torch.from_numpy(grad), torch.from_numpy(x1),
                                                  torch.from_numpy(x2), torch_p, cdist)
        found = aclnn_py.call("aclnnCdistBackward", grad, x1, x2, cdist.numpy(), p,
                              out=np.empty_like(x1))
        assert not np.isnan(found).any()
        np.testing.assert_allclose(found, expected.numpy(), rtol=1e-6, atol=1e-6)
    assert "negative" in refused(aclnn_py.call, "aclnnCdistBackward", grad, x1, x2, grad, -2.0,
                                 out=np.empty_like(x1))


def test_batch_norm_reduce_backward_writes_only_what_its_mask_asks_for() -> None:
    # ops-nn norm/sync_batch_norm_backward_reduce/op_api: OutputParamCastAndViewCopy copies
    # sumDy and sumDyXmu with inputG, gradWeight with weightG, gradBias with biasG
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    g = np.ones_like(x)
    mean, invstd = np.zeros(3, np.float32), np.full(3, 2.0, np.float32)
    outs = tuple(aclnn_py.to_device(np.full(3, -5.0, np.float32)) for _ in range(4))
    aclnn_py.call("aclnnBatchNormReduceBackward", g, x, mean, invstd, None, False, True, False,
                  out=outs)
    same(outs[0].numpy(), np.full(3, -5.0, np.float32))
    same(outs[2].numpy(), x.sum((0, 2)) * 2)
    same(outs[3].numpy(), np.full(3, -5.0, np.float32))


def test_sync_batch_norm_gather_stats_refuses_no_devices_and_skips_no_channels() -> None:
    # aclnn_sync_batch_norm_gather_stats.cpp: dimension 0 of totalSum 0 refused, dimension 1
    # of 0 returns at once
    empty = np.zeros((0, 3), np.float32)
    assert "devices" in refused(
        aclnn_py.call, "aclnnSyncBatchNormGatherStats", empty, empty, np.zeros(0, np.int32),
        np.zeros(3, np.float32), np.zeros(3, np.float32), 0.1, 1e-5,
        out=(np.empty(3, np.float32), np.empty(3, np.float32)))
    none = np.zeros((2, 0), np.float32)
    aclnn_py.call("aclnnSyncBatchNormGatherStats", none, none, np.ones(2, np.int32),
                  np.zeros(0, np.float32), np.zeros(0, np.float32), 0.1, 1e-5,
                  out=(np.empty(0, np.float32), np.empty(0, np.float32)))
