"""Reductions: sums, means, extrema and their indices, products, variance, norms and
cumulative sums.

float16 and bfloat16 accumulate in float32 (CANN's reduction kernels do, and so does PyTorch
on the CPU) and are rounded once into the output; float32 accumulates in float32 (numpy's
pairwise summation; CANN's order differs, so sums agree within the dtype's tolerance, not
bitwise). An empty ``dim`` array reduces every dimension, as PyTorch's ``sum(dim=[])`` does.

The phase-1 rules (``aclnn_py/data/phase1_rules.json``) check dtypes, ranks and the ranges of
``dim``; the checks here are the shape relations the rules cannot state, as the op_api sources
of hicann ops-math (``math/<operator>/op_api/aclnn_*.cpp``) and ops-nn
(``norm/lp_norm_v2/op_api/``) make them: most compare out with the reduced shape only after
an empty ``self`` has returned, and accept any two shapes of one element each
(CheckShapeAndScalarSame, ops-math ``common/inc/op_api/aclnn_check.h``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.dtypes import numpy_dtype
from . import check_output_shapes, output_shapes, store, widen
from .elementwise import ANY, FLOATS, FLOATS64, NUMBERS
from .elementwise import register as builtin

# The dtypes an empty self's output may be filled in (EMPTY_INPUT_DTYPE_SUPPORT_LIST of
# aclnn_reduce_sum.cpp, aclnn_mean.cpp and aclnn_prod.cpp): no complex one.
_INT_MAX = float(2**31 - 1)


def _axes(ndim: int, dims: tuple[int, ...] | None) -> tuple[int, ...]:
    if not dims:
        return tuple(range(ndim))
    axes = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise ValueError(f"dim {d} is out of range for a tensor of {ndim} dimensions")
        axes.append(d % max(ndim, 1))
    if len(set(axes)) != len(axes):
        raise ValueError(f"dim {dims} names a dimension twice")
    return tuple(a for a in axes if a < ndim)


def _check_out(operator: str, values: dict[str, Any], axes: tuple[int, ...], keep: bool,
               out: np.ndarray) -> None:
    """out has exactly the reduced shape (OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE) that the
    output rule of ``operator`` (aclnn_py.ops.outputs) gives for ``values``, whose ``axes``
    the caller checked."""
    self = values["self"]
    expected = output_shapes(operator, **values)["out"]
    if out.shape != expected:
        raise ValueError(f"out has shape {out.shape}; reducing self {self.shape} over "
                         f"{list(axes)} {'keeping' if keep else 'dropping'} those dimensions "
                         f"gives {expected}")


def _check_result(result: tuple[int, ...], out: np.ndarray) -> None:
    """out has the result's shape, or both have one element (CheckShapeAndScalarSame)."""
    if out.shape != result and not (out.size == 1 and int(np.prod(result)) == 1):
        raise ValueError(f"out has shape {out.shape}, but the result has shape {result} "
                         "(they must be equal, or both of one element)")


def _check_fillable(out: np.ndarray) -> None:
    """An empty self fills out, which CANN does for a non-complex dtype only (FillScalar)."""
    if out.dtype.kind == "c":
        raise ValueError(f"self is empty and out has dtype {out.dtype.name}: CANN fills the "
                         "output of an empty self in a real or bool dtype only")


def _put(out: np.ndarray, value: Any) -> None:
    """Store ``value`` in ``out``, a result of one element into an out of one of any shape."""
    value = np.asarray(value)
    if value.size == out.size and value.shape != out.shape:
        value = value.reshape(out.shape)
    store(out, value)


def _fill(out: np.ndarray, value: float) -> None:
    with np.errstate(invalid="ignore"):
        out[...] = np.asarray(value).astype(out.dtype)


def _as(self: np.ndarray, dtype: np.dtype | None) -> Any:
    """``self`` cast to ``dtype`` as CANN's Cast does before reducing (a complex value to a
    real dtype: its real part), then widened."""
    x = self
    if dtype is not None and x.dtype != dtype:
        x = (np.real(x) if x.dtype.kind == "c" and dtype.kind != "c" else x).astype(dtype)
    return widen(x)


# ---- sums and means -----------------------------------------------------------------------


def _sum_check(operator: str, values: dict[str, Any], dims: Any, out: np.ndarray) -> None:
    """aclnnReduceSum, aclnnMean: an empty self fills out whatever its shape; a 0-d self is
    copied."""
    self = values["self"]
    if self.size == 0:
        _check_fillable(out)
        return
    if self.ndim:
        _axes(self.ndim, dims)
        _check_result(output_shapes(operator, **values)["out"], out)


@builtin("aclnnReduceSum", dtypes=ANY, check=lambda self, dims, keepDims, dtype, out:
         _sum_check("aclnnReduceSum", {"self": self, "dims": dims, "keepDims": keepDims},
                    dims, out))
def reduce_sum(self: np.ndarray, dims: tuple[int, ...], keepDims: bool, dtype: int,
               out: np.ndarray) -> None:
    if self.size == 0:
        _fill(out, 0)
        return
    if self.ndim == 0:
        store(out, self)
        return
    axes = _axes(self.ndim, dims)
    x = _as(self, numpy_dtype(dtype))
    if out.dtype == np.bool_:  # a bool dtype reduces with ReduceAny
        _put(out, np.any(x, axis=axes, keepdims=keepDims))
        return
    _put(out, np.sum(x, axis=axes, keepdims=keepDims))


@builtin("aclnnMean", dtypes=FLOATS64, check=lambda self, dim, keepDim, dtype, out:
         _sum_check("aclnnMean", {"self": self, "dim": dim, "keepDim": keepDim}, dim, out))
def mean(self: np.ndarray, dim: tuple[int, ...], keepDim: bool, dtype: int,
         out: np.ndarray) -> None:
    if self.size == 0:  # aclnn_mean.cpp fills NaN
        _fill(out, np.nan)
        return
    x = _as(self, numpy_dtype(dtype))
    if x.dtype.kind in "iub":
        x = x.astype(np.float64)
    _put(out, np.mean(x, axis=_axes(self.ndim, dim), keepdims=keepDim))


# ---- extrema and their indices --------------------------------------------------------------


def _extremum(function: Any) -> Any:
    def compute(self: np.ndarray, dim: tuple[int, ...], keepDim: bool, out: np.ndarray) -> None:
        if self.size:
            store(out, function(self, axis=_axes(self.ndim, dim), keepdims=keepDim))
    return compute


def _extremum_check(operator: str) -> Any:
    def check(self: np.ndarray, dim: Any, keepDim: bool, out: np.ndarray) -> None:
        """aclnnAmax / aclnnAmin (CheckDimValid, CheckShape): a dim named must not have size
        0 (an empty dim array names none), and out has exactly the reduced shape."""
        for d in dim or ():
            if self.ndim and self.shape[d % self.ndim] == 0:
                raise ValueError(f"dim {d} of self has size 0: it has no extremum")
        _check_out(operator, {"self": self, "dim": dim, "keepDim": keepDim},
                   _axes(self.ndim, dim), keepDim, out)
    return check


builtin("aclnnAmax", dtypes=NUMBERS, check=_extremum_check("aclnnAmax"))(_extremum(np.max))
builtin("aclnnAmin", dtypes=NUMBERS, check=_extremum_check("aclnnAmin"))(_extremum(np.min))


def _arg(function: Any) -> Any:
    def compute(self: np.ndarray, dim: int, keepdim: bool, out: np.ndarray) -> None:
        if self.ndim == 0:
            _fill(out, 0)
            return
        if self.size == 0 or out.size == 0:
            return
        _put(out, function(widen(self), axis=dim % self.ndim, keepdims=keepdim))
    return compute


def _arg_result(self: np.ndarray, dim: int, keepdim: bool, out: np.ndarray) -> None:
    # (aclnnArgMax's rule and aclnnArgMin's are one)
    _check_result(output_shapes("aclnnArgMax", self=self, dim=dim, keepdim=keepdim)["out"],
                  out)


def _argmax_check(self: np.ndarray, dim: int, keepdim: bool, out: np.ndarray) -> None:
    """aclnnArgMax (aclnn_argmax.cpp): an empty self or out returns before the result's shape
    is compared with out's."""
    if self.ndim and self.size and out.size:
        _arg_result(self, dim, keepdim, out)


def _argmin_check(self: np.ndarray, dim: int, keepdim: bool, out: np.ndarray) -> None:
    """aclnnArgMin (aclnn_argmin.cpp): the reduced dim must not have size 0
    (CheckSelfDimSizeNonZreo); a 0-d or otherwise empty self returns before the result's
    shape is compared with out's."""
    if self.ndim == 0:
        return
    if self.shape[dim % self.ndim] == 0:
        raise ValueError(f"dim {dim} of self has size 0: it has no minimum")
    if self.size:
        _arg_result(self, dim, keepdim, out)


builtin("aclnnArgMax", dtypes=NUMBERS, check=_argmax_check)(_arg(np.argmax))
builtin("aclnnArgMin", dtypes=NUMBERS, check=_argmin_check)(_arg(np.argmin))


def _all_check(self: np.ndarray, out: np.ndarray) -> None:
    """aclnnMax / aclnnMin: out has one element unless self or out is empty (then nothing
    is computed)."""
    if self.size and out.size:
        _check_result((), out)


@builtin("aclnnMax", dtypes=NUMBERS, check=_all_check)
def max_all(self: np.ndarray, out: np.ndarray) -> None:
    if self.size and out.size:
        _put(out, np.max(self))


@builtin("aclnnMin", dtypes=NUMBERS, check=_all_check)
def min_all(self: np.ndarray, out: np.ndarray) -> None:
    if self.size and out.size:
        _put(out, np.min(self))


# ---- product, variance, norms -------------------------------------------------------------


def _prod_check(self: np.ndarray, dtype: int, out: np.ndarray) -> None:
    """aclnnProd (aclnn_prod.cpp): an empty self fills out (FillScalar, no complex dtype);
    otherwise the 0-d product goes into an out of one element."""
    if self.size == 0:
        _check_fillable(out)
    else:
        _check_result((), out)


@builtin("aclnnProd", dtypes=NUMBERS, check=_prod_check)
def prod(self: np.ndarray, dtype: int, out: np.ndarray) -> None:
    if self.size == 0:
        _fill(out, 1)
        return
    # ExecuteProd: self is cast to out's dtype (to float for a bool out) before ReduceProd
    x = _as(self, np.dtype(np.float32) if out.dtype == np.bool_ else out.dtype)
    _put(out, np.prod(x))


def _var_check(self: np.ndarray, dim: Any, unbiased: bool, keepdim: bool,
               out: np.ndarray) -> None:
    """aclnnVar (ReduceShapeGetWithVar, ops-math common/inc/op_api/level2_base_caculation.h):
    out has exactly the reduced shape; a NULL or empty dim reduces every dimension."""
    _check_out("aclnnVar", {"self": self, "dim": dim, "keepdim": keepdim},
               _axes(self.ndim, dim), keepdim, out)


@builtin("aclnnVar", dtypes=FLOATS, check=_var_check)
def var(self: np.ndarray, dim: tuple[int, ...] | None, unbiased: bool, keepdim: bool,
        out: np.ndarray) -> None:
    if self.size == 0:
        _fill(out, np.nan)
        return
    with np.errstate(divide="ignore", invalid="ignore"):
        _put(out, np.var(widen(self), axis=_axes(self.ndim, dim), ddof=int(unbiased),
                         keepdims=keepdim))


def _std_check(self: np.ndarray, dim: Any, correction: int, keepdim: bool,
               out: np.ndarray) -> None:
    """aclnnStd (aclnn_std.cpp CheckShape): out's shape is checked only when dim names
    dimensions; a NULL or empty dim reduces every dimension."""
    if dim:
        _check_out("aclnnStd", {"self": self, "dim": dim, "keepdim": keepdim},
                   _axes(self.ndim, dim), keepdim, out)


@builtin("aclnnStd", dtypes=FLOATS, check=_std_check)
def std(self: np.ndarray, dim: tuple[int, ...] | None, correction: int, keepdim: bool,
        out: np.ndarray) -> None:
    axes = _axes(self.ndim, dim)
    count = int(np.prod([self.shape[a] for a in axes]))
    # aclnn_std.cpp fills NaN for an empty self and for one element with a correction, and
    # infinity when a correction above 1 reaches the count
    if self.size == 0 or (count == 1 and count <= correction):
        _fill(out, np.nan)
        return
    if correction > 1 and count <= correction:
        _fill(out, np.inf)
        return
    _put(out, np.std(widen(self), axis=axes, ddof=correction, keepdims=keepdim))


def _norm(x: np.ndarray, p: float, axes: tuple[int, ...], keep: bool) -> Any:
    if p == np.inf:
        return np.max(np.abs(x), axis=axes, keepdims=keep)
    if p == -np.inf:
        return np.min(np.abs(x), axis=axes, keepdims=keep)
    if p == 0:
        return np.sum(x != 0, axis=axes, keepdims=keep).astype(x.dtype)
    return np.sum(np.abs(x) ** p, axis=axes, keepdims=keep) ** (1 / p)


def _order(value: Any) -> float:
    """The order as CANN's Atlas A2 path reads it (CalculateValP / CalculateOrdValue of
    ops-nn norm/lp_norm_v2/op_api/): INT_MAX stands for infinity, INT_MIN for minus it."""
    p = float(value)
    if abs(p - _INT_MAX) < 1e-6 * _INT_MAX:
        return np.inf
    if abs(p + _INT_MAX + 1) < 1e-6 * _INT_MAX:
        return -np.inf
    return p


def _norm_input(self: np.ndarray) -> Any:
    """self as the Atlas A2 path computes it: float16, float32 and bfloat16 as they are
    (widened), any other dtype cast to float32 first (a complex one's real part, as CANN's
    Cast of complex to float)."""
    if self.dtype in FLOATS:
        return widen(self)
    return np.real(self).astype(np.float32)


@builtin("aclnnNorm", dtypes=FLOATS, check=lambda self, pScalar, dim, keepdim, out:
         _check_out("aclnnNorm", {"self": self, "dim": dim, "keepdim": keepdim},
                    _axes(self.ndim, dim), keepdim, out))
def norm(self: np.ndarray, pScalar: Any, dim: tuple[int, ...], keepdim: bool,
         out: np.ndarray) -> None:
    if self.size == 0:  # aclnn_norm.cpp fills 0
        _fill(out, 0)
        return
    p = 2.0 if pScalar is None else _order(pScalar)
    store(out, _norm(_norm_input(self), p, _axes(self.ndim, dim), keepdim))


def _vector_norm_check(self: np.ndarray, ord: Any, dims: Any, keepDims: bool, dtype: int,
                       out: np.ndarray) -> None:
    """aclnnLinalgVectorNorm (aclnn_linalg_vector_norm.cpp): no complex self or out
    (CheckDtypeValid), out of exactly the reduced shape (CheckShape)."""
    for name, array in (("self", self), ("out", out)):
        if array.dtype.kind == "c":
            raise ValueError(f"{name} has dtype {array.dtype.name}: aclnnLinalgVectorNorm "
                             "does not support complex dtypes")
    _check_out("aclnnLinalgVectorNorm", {"self": self, "dims": dims, "keepDims": keepDims},
               _axes(self.ndim, dims), keepDims, out)


@builtin("aclnnLinalgVectorNorm", dtypes=FLOATS, check=_vector_norm_check)
def linalg_vector_norm(self: np.ndarray, ord: Any, dims: tuple[int, ...], keepDims: bool,
                       dtype: int, out: np.ndarray) -> None:
    if self.size == 0 or out.size == 0:  # zeros into a non-empty out (HandleOutNotEmpty)
        _fill(out, 0)
        return
    store(out, _norm(_norm_input(self), _order(ord), _axes(self.ndim, dims), keepDims))


# ---- cumulative sum -----------------------------------------------------------------------


def _cumsum_check(self: np.ndarray, dim: int, dtype: int, out: np.ndarray) -> None:
    """ops-math math/cumsum/op_api/aclnn_cumsum.cpp: out has dtype and self's shape, dim is in
    [-n, n - 1] (a 0-d self counts as 1-d)."""
    if numpy_dtype(dtype) != out.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}, but dtype is aclDataType {dtype}: "
                         "they must be equal")
    check_output_shapes("aclnnCumsum", {"self": self, "dim": dim}, {"out": out},
                        "it must be self's")
    rank = max(self.ndim, 1)
    if not -rank <= dim < rank:
        raise ValueError(f"dim {dim} is out of range [{-rank}, {rank - 1}] for a tensor of "
                         f"{self.ndim} dimensions")


_SCAN = 32  # elements summed at once by one product with a triangle of ones


def _scan_last(x: np.ndarray, result: np.ndarray) -> None:
    """Prefix sums along the last axis of C-contiguous floating ``x`` into ``result``.

    Each run of _SCAN elements is summed by one matrix product with an upper triangle of ones
    (BLAS does the adds of many runs at once, where a running sum waits on each add), then
    every run gets the total of the runs before it (summed in float64). A NaN or infinity
    anywhere, or an overflow, makes a total non-finite: then the plain running sum is taken,
    whose NaN and infinities are PyTorch's."""
    length = x.shape[-1]
    rows = x.reshape(-1, length)
    out = result.reshape(-1, length)
    runs = length // _SCAN
    if runs < 2:
        np.cumsum(rows, axis=1, out=out)
        return
    body = runs * _SCAN
    triangle = np.triu(np.ones((_SCAN, _SCAN), x.dtype))
    blocks = rows[:, :body].reshape(rows.shape[0], runs, _SCAN)
    scanned = np.matmul(blocks, triangle)
    totals = np.cumsum(scanned[:, :, -1], axis=1, dtype=np.float64)  # one per run: cheap
    if not np.isfinite(totals).all() or not np.isfinite(totals.astype(x.dtype)).all():
        np.cumsum(rows, axis=1, out=out)
        return
    scanned[:, 1:] += totals[:, :-1, None].astype(x.dtype)
    out[:, :body] = scanned.reshape(rows.shape[0], body)
    if body < length:
        np.cumsum(rows[:, body:], axis=1, out=out[:, body:])
        out[:, body:] += totals[:, -1:].astype(x.dtype)


@builtin("aclnnCumsum", dtypes=NUMBERS, check=_cumsum_check)
def cumsum(self: np.ndarray, dim: int, dtype: int, out: np.ndarray) -> None:
    """self cast to dtype (as CANN's does first), then summed along dim: floating dtypes in
    their compute dtype (float32 for float16 and bfloat16), integers wrapping around."""
    if self.size == 0:
        return
    x = widen(_as(self, out.dtype))  # aclnn_cumsum.cpp casts self to out's dtype first
    if x.ndim == 0:
        store(out, x)
        return
    axis = dim % x.ndim
    if x.dtype.kind != "f":
        store(out, np.cumsum(x, axis=axis))
        return
    x = np.ascontiguousarray(np.moveaxis(x, axis, -1))
    result = np.empty_like(x)
    _scan_last(x, result)
    store(out, np.moveaxis(result, -1, axis))
