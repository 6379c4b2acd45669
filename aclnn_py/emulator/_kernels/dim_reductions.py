"""Reductions of ops-math's ``math/`` directory not computed by :mod:`.reductions`: all and any,
the extrema along one dimension with their indices (max, min, aminmax), logsumexp, nansum,
the product along one dimension, the cumulative extrema and product, the elementwise extremum
of a tensor list, whole-tensor equality, and the exponentiated segment sums of Mamba2
(aclnnExpSegsum) with their gradient.

float16 and bfloat16 compute in float32 (:func:`widen`) and are rounded once into out, as in
:mod:`.reductions`; indices are int64 and name the first extremum along the dimension (NaN
counts as the extremum), as PyTorch's ``max(dim)`` does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.dtypes import Dtypes
from . import check_output_shapes, output_shapes, store, tensor_format, widen
from .elementwise import register
from .reductions import _axes


def _check_reduced(operator: str, values: dict[str, Any], **given: Any) -> None:
    """The outputs ``given`` of the shape of ``operator``'s output rule (aclnn_py.ops.outputs:
    the reduced shape, written once), its dims checked first by the caller."""
    check_output_shapes(operator, values, given, "the reduction gives")


def _one_axis(self: np.ndarray, dim: int) -> int:
    ndim = max(self.ndim, 1)
    if not -ndim <= dim < ndim:
        raise ValueError(f"dim {dim} is out of range for a tensor of {self.ndim} dimensions")
    return dim % ndim


# ---- all and any ----------------------------------------------------------------------------


def _logical_check(self: np.ndarray, dim: tuple[int, ...], keepdim: bool, out: np.ndarray
                   ) -> None:
    _axes(self.ndim, dim)
    _check_reduced("aclnnAll", {"self": self, "dim": dim, "keepdim": keepdim}, out=out)


@register("aclnnAll", check=_logical_check)
def all_(self: np.ndarray, dim: tuple[int, ...], keepdim: bool, out: np.ndarray) -> None:
    """Whether every element along dim is nonzero (ops-math math/reduce_all/docs/aclnnAll.md);
    an empty dim reduces every dimension."""
    axes = _axes(self.ndim, dim)
    store(out, np.all(self.astype(bool), axis=axes, keepdims=keepdim))


def _any_check(self: np.ndarray, dim: tuple[int, ...], keepdim: bool, out: np.ndarray
               ) -> None:
    """ops-math math/reduce_any/op_api/aclnn_any.cpp: an empty self fills out with false
    whatever out's shape (GetTensorWithValueFalse); otherwise out has the reduction's shape,
    or both hold one element (CheckShapeAndScalarSame, common/inc/op_api/aclnn_check.h)."""
    _axes(self.ndim, dim)
    values = {"self": self, "dim": dim, "keepdim": keepdim}
    expected = output_shapes("aclnnAny", **values)["out"]
    if self.size == 0 or (out.size == 1 and int(np.prod(expected)) == 1):
        return
    _check_reduced("aclnnAny", values, out=out)


@register("aclnnAny", check=_any_check)
def any_(self: np.ndarray, dim: tuple[int, ...], keepdim: bool, out: np.ndarray) -> None:
    """Whether some element along dim is nonzero (ops-math math/reduce_any/docs/aclnnAny.md)."""
    if self.size == 0:
        store(out, np.zeros(out.shape, bool))
        return
    axes = _axes(self.ndim, dim)
    store(out, np.any(self.astype(bool), axis=axes, keepdims=keepdim).reshape(out.shape))


# ---- extrema along one dimension, with their indices -----------------------------------------


def _extremum_along(self: np.ndarray, axis: int, keep: bool, largest: bool
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(values, int64 indices) of the first maximum (or minimum) along ``axis``; NaN wins."""
    x = widen(self) if self.ndim else widen(self).reshape(1)
    index = (np.argmax if largest else np.argmin)(x, axis=axis, keepdims=True)
    values = np.take_along_axis(x, index, axis=axis)
    if not keep or self.ndim == 0:
        values, index = np.squeeze(values, axis), np.squeeze(index, axis)
        if self.ndim == 0:
            values, index = values.reshape(()), index.reshape(())
    return values, index.astype(np.int64)


def _dim_check(operator: str) -> Any:
    def check(self: np.ndarray, dim: int, keepdim: bool, out: np.ndarray,
              indices: np.ndarray) -> None:
        _one_axis(self, dim)
        _check_reduced(operator, {"self": self, "dim": dim, "keepdim": keepdim}, out=out,
                       indices=indices)
    return check


def _max_min_dim(largest: bool) -> Any:
    def kernel(self: np.ndarray, dim: int, keepdim: bool, out: np.ndarray,
               indices: np.ndarray) -> None:
        if self.size == 0:
            return
        values, index = _extremum_along(self, _one_axis(self, dim), keepdim, largest)
        store(out, values)
        store(indices, index)
    return kernel


# ops-math math/arg_max_with_value/docs/aclnnMaxDim.md, arg_min_with_value/docs/aclnnMinDim.md
register("aclnnMaxDim", check=_dim_check("aclnnMaxDim"))(_max_min_dim(True))
register("aclnnMinDim", check=_dim_check("aclnnMinDim"))(_max_min_dim(False))


def _aminmax_into(self: np.ndarray, axes: tuple[int, ...], keep: bool, minOut: np.ndarray,
                  maxOut: np.ndarray) -> None:
    """min and max over ``axes`` (ops-math math/reduce_min/docs/aclnnAminmax.md); NaN
    propagates."""
    if self.size == 0:
        return
    x = widen(self)
    store(minOut, np.min(x, axis=axes, keepdims=keep).reshape(minOut.shape))
    store(maxOut, np.max(x, axis=axes, keepdims=keep).reshape(maxOut.shape))


def _aminmax_check(self: np.ndarray, dim: tuple[int, ...], keepDim: bool, minOut: np.ndarray,
                   maxOut: np.ndarray) -> None:
    _axes(self.ndim, dim)
    _check_reduced("aclnnAminmax", {"self": self, "dim": dim, "keepDim": keepDim},
                   minOut=minOut, maxOut=maxOut)


@register("aclnnAminmax", check=_aminmax_check)
def aminmax(self: np.ndarray, dim: tuple[int, ...], keepDim: bool, minOut: np.ndarray,
            maxOut: np.ndarray) -> None:
    _aminmax_into(self, _axes(self.ndim, dim), keepDim, minOut, maxOut)


def _aminmax_dim_check(self: np.ndarray, dim: int, keepDim: bool, minOut: np.ndarray,
                       maxOut: np.ndarray) -> None:
    _one_axis(self, dim)
    _check_reduced("aclnnAminmaxDim", {"self": self, "dim": dim, "keepDim": keepDim},
                   minOut=minOut, maxOut=maxOut)


@register("aclnnAminmaxDim", check=_aminmax_dim_check)
def aminmax_dim(self: np.ndarray, dim: int, keepDim: bool, minOut: np.ndarray,
                maxOut: np.ndarray) -> None:
    """ops-math math/reduce_min/docs/aclnnAminmaxDim.md: aclnnAminmax over one dimension."""
    axes = (_one_axis(self, dim),) if self.ndim else ()
    _aminmax_into(self, axes, keepDim, minOut, maxOut)


@register("aclnnAminmaxAll")
def aminmax_all(self: np.ndarray, minOut: np.ndarray, maxOut: np.ndarray) -> None:
    """ops-math math/reduce_min/docs/aclnnAminmaxAll.md: over every element, one-element
    outputs."""
    _aminmax_into(self, tuple(range(self.ndim)), False, minOut, maxOut)


# ---- logsumexp, nansum, product along one dimension ----------------------------------------


def _log_sum_exp_check(self: np.ndarray, dim: tuple[int, ...], keepDim: bool,
                       out: np.ndarray) -> None:
    _axes(self.ndim, dim)
    _check_reduced("aclnnLogSumExp", {"self": self, "dim": dim, "keepDim": keepDim}, out=out)


@register("aclnnLogSumExp", check=_log_sum_exp_check)
def log_sum_exp(self: np.ndarray, dim: tuple[int, ...], keepDim: bool, out: np.ndarray) -> None:
    """ln(sum exp(x)) over dim (ops-math math/reduce_log_sum_exp/docs/aclnnLogSumExp.md),
    computed as m + ln(sum exp(x - m)), m the maximum (m itself where it is infinite)."""
    if self.size == 0:
        return
    axes = _axes(self.ndim, dim)
    x = widen(self).astype(np.result_type(widen(self), np.float32))
    m = np.max(x, axis=axes, keepdims=True)
    shift = np.where(np.isfinite(m), m, 0)
    result = np.log(np.sum(np.exp(x - shift), axis=axes, keepdims=True)) + shift
    if not keepDim:
        result = np.squeeze(result, axis=axes)
    store(out, result)


def _nansum_check(self: np.ndarray, dim: tuple[int, ...], keepDim: bool, dtype: int,
                  out: np.ndarray) -> None:
    _axes(self.ndim, dim)
    _check_reduced("aclnnReduceNansum", {"self": self, "dim": dim, "keepDim": keepDim},
                   out=out)


@register("aclnnReduceNansum", check=_nansum_check)
def reduce_nansum(self: np.ndarray, dim: tuple[int, ...], keepDim: bool, dtype: int,
                  out: np.ndarray) -> None:
    """The sum over dim with NaN counted as 0 (ops-math math/reduce_nansum/docs/
    aclnnReduceNansum.md), accumulated in out's dtype (float32 for the halves)."""
    if self.size == 0:
        out[...] = 0
        return
    axes = _axes(self.ndim, dim)
    x = widen(self)
    accumulator = widen(np.empty(0, out.dtype)).dtype
    store(out, np.nansum(x.astype(accumulator), axis=axes, keepdims=keepDim))


def _prod_dim_check(self: np.ndarray, dim: int, keepDim: bool, dtype: int,
                    out: np.ndarray) -> None:
    _one_axis(self, dim)
    _check_reduced("aclnnProdDim", {"self": self, "dim": dim, "keepDim": keepDim}, out=out)


@register("aclnnProdDim", check=_prod_dim_check)
def prod_dim(self: np.ndarray, dim: int, keepDim: bool, dtype: int, out: np.ndarray) -> None:
    """The product along dim (ops-math math/reduce_prod/docs/aclnnProdDim.md), in out's dtype
    (float32 for the halves; integers wrap)."""
    accumulator = widen(np.empty(0, out.dtype)).dtype
    x = widen(self).astype(accumulator)
    if self.ndim == 0:
        store(out, x)
        return
    store(out, np.prod(x, axis=_one_axis(self, dim), keepdims=keepDim))


# ---- cumulative extrema and product ---------------------------------------------------------


def _cumulative_extremum(self: np.ndarray, dim: int, values: np.ndarray, indices: np.ndarray,
                         largest: bool) -> None:
    """values[i] = the extremum of x[..i] along dim, indices its last position (PyTorch's
    cummax updates on x >= the running maximum, and on NaN, which then stays)."""
    if self.size == 0:
        return
    axis = _one_axis(self, dim)
    x = np.moveaxis(widen(self) if self.ndim else widen(self).reshape(1), axis, 0)
    best = x[0].copy()
    where = np.zeros(best.shape, np.int64)
    found_values = np.empty_like(x)
    found_indices = np.empty(x.shape, np.int64)
    found_values[0], found_indices[0] = best, where
    floating = x.dtype.kind == "f"
    for i in range(1, x.shape[0]):
        current = x[i]
        better = current >= best if largest else current <= best
        if floating:
            better = (better & ~np.isnan(best)) | np.isnan(current)
        best = np.where(better, current, best)
        where = np.where(better, i, where)
        found_values[i], found_indices[i] = best, where
    store(values, np.moveaxis(found_values, 0, axis).reshape(values.shape))
    store(indices, np.moveaxis(found_indices, 0, axis).reshape(indices.shape))


def _cumulative_check(self: np.ndarray, dim: int, valuesOut: np.ndarray,
                      indicesOut: np.ndarray) -> None:
    _one_axis(self, dim)
    # aclnnCummin's output rule is aclnnCummax's
    check_output_shapes("aclnnCummax", {"self": self, "dim": dim},
                        {"valuesOut": valuesOut, "indicesOut": indicesOut}, "it must be self's")


@register("aclnnCummax", check=_cumulative_check)
def cummax(self: np.ndarray, dim: int, valuesOut: np.ndarray, indicesOut: np.ndarray) -> None:
    """ops-math math/cummax/docs/aclnnCummax.md."""
    _cumulative_extremum(self, dim, valuesOut, indicesOut, True)


@register("aclnnCummin", check=_cumulative_check)
def cummin(self: np.ndarray, dim: int, valuesOut: np.ndarray, indicesOut: np.ndarray) -> None:
    """ops-math math/cummin/docs/aclnnCummin.md."""
    _cumulative_extremum(self, dim, valuesOut, indicesOut, False)


def _cumprod_check(input: np.ndarray, dim: Any, dtype: int,  # noqa: A002
                   out: np.ndarray) -> None:
    _one_axis(input, int(dim))
    check_output_shapes("aclnnCumprod", {"input": input, "dim": dim}, {"out": out},
                        "it must be input's")


@register("aclnnCumprod", check=_cumprod_check)
def cumprod(input: np.ndarray, dim: Any, dtype: int, out: np.ndarray) -> None:  # noqa: A002
    """The running product along dim (ops-math math/cumprod/docs/
    aclnnCumprod&aclnnInplaceCumprod.md), in out's dtype (float32 for the halves)."""
    if input.size == 0:
        return
    accumulator = widen(np.empty(0, out.dtype)).dtype
    x = widen(input).astype(accumulator)
    if input.ndim == 0:
        store(out, x)
        return
    store(out, np.cumprod(x, axis=_one_axis(input, int(dim))))


def _inplace_cumprod_check(input: np.ndarray, dim: Any) -> None:  # noqa: A002
    """ops-math math/cumprod/op_api/aclnn_cumprod.cpp: aclnnInplaceCumprodGetWorkspaceSize is
    aclnnCumprod with input as out, in input's dtype."""
    _cumprod_check(input, dim, 0, input)


@register("aclnnInplaceCumprod", check=_inplace_cumprod_check)
def inplace_cumprod(input: np.ndarray, dim: Any) -> None:  # noqa: A002
    """input = the running product of input along dim."""
    cumprod(input.copy(), dim, 0, input)


# ---- a tensor list's elementwise extremum; equality -------------------------------------------


def _n_check(tensors: list[np.ndarray], out: np.ndarray) -> None:
    if not tensors:
        raise ValueError("tensors is empty")
    try:
        np.broadcast_shapes(*(t.shape for t in tensors))
    except ValueError:
        raise ValueError("the tensors' shapes do not broadcast") from None
    check_output_shapes("aclnnMaxN", {"tensors": tensors}, {"out": out},  # MinN's is MaxN's
                        "the broadcast gives")


def _extremum_n(function: Any) -> Any:
    def kernel(tensors: list[np.ndarray], out: np.ndarray) -> None:
        if out.size == 0:
            return
        result = widen(tensors[0])
        for tensor in tensors[1:]:
            result = function(result, widen(tensor))
        store(out, np.broadcast_to(result, out.shape))
    return kernel


# ops-math math/maximum/docs/aclnnMaxN.md, minimum/docs/aclnnMinN.md: NaN propagates
register("aclnnMaxN", check=_n_check)(_extremum_n(np.maximum))
register("aclnnMinN", check=_n_check)(_extremum_n(np.minimum))


@register("aclnnEqual")
def equal(self: np.ndarray, other: np.ndarray, out: np.ndarray) -> None:
    """True when self and other have the same shape and elements (ops-math math/tensor_equal/
    docs/aclnnEqual.md), as PyTorch's equal: NaN is unequal to itself."""
    same = self.shape == other.shape and bool(np.all(widen(self) == widen(other)))
    out[...] = same


# ---- the V2 reductions (dims left empty: the input itself when noop is set) -----------------


def _v2_axes(self: np.ndarray, dims: tuple[int, ...], noop: bool) -> tuple[int, ...] | None:
    """The axes reduced; None when dims is empty and noop is set (out = self)."""
    if not dims and noop:
        return None
    return _axes(self.ndim, dims)


def _v2_check(**arguments: Any) -> None:
    """(self, dims, keep, noop, out): out has the reduced shape, or self's for a no-op (the
    output rule of aclnnMaxV2, aclnnMeanV2 and aclnnReduceLogSum)."""
    self, dims, keep, noop, out = arguments.values()
    _v2_axes(self, dims, noop)
    *inputs, output = arguments      # the output: out, or aclnnReduceLogSum's reduce
    _check_reduced("aclnnMaxV2", {name: arguments[name] for name in inputs},
                   **{output: out})


def _v2(function: Any) -> Any:
    def kernel(**arguments: Any) -> None:
        self, dims, keep, noop, out = arguments.values()
        if self.size == 0:
            return
        axes = _v2_axes(self, dims, noop)
        x = widen(self)
        store(out, x if axes is None else function(x, axis=axes, keepdims=keep))
    return kernel


def _mean(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> Any:
    return np.mean(x.astype(np.result_type(x, np.float32)), axis=axis, keepdims=keepdims)


def _log_sum(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> Any:
    return np.log(np.sum(x, axis=axis, keepdims=keepdims))


# ops-math math/reduce_max/docs/aclnnMaxV2.md, reduce_mean/docs/aclnnMeanV2.md,
# reduce_log_sum/docs/aclnnReduceLogSum.md (ln of the sum over axes)
register("aclnnMaxV2", check=_v2_check)(_v2(np.max))
register("aclnnMeanV2", check=_v2_check)(_v2(_mean))
register("aclnnReduceLogSum", check=_v2_check)(_v2(_log_sum))


def _global_check(self: np.ndarray, out: np.ndarray) -> None:
    if self.ndim < 3:
        raise ValueError(f"self has {self.ndim} dimensions: it must have at least 3 (N, C and "
                         "the spatial ones)")
    # aclnnGlobalMaxPool's output rule is aclnnGlobalAveragePool's
    _check_reduced("aclnnGlobalAveragePool", {"self": self}, out=out)


@register("aclnnGlobalAveragePool", check=_global_check)
def global_average_pool(self: np.ndarray, out: np.ndarray) -> None:
    """The mean over the spatial dimensions, kept as 1 (ops-math math/reduce_mean/docs/
    aclnnGlobalAveragePool.md)."""
    if self.size:
        store(out, _mean(widen(self), tuple(range(2, self.ndim)), True))


@register("aclnnGlobalMaxPool", check=_global_check)
def global_max_pool(self: np.ndarray, out: np.ndarray) -> None:
    """The maximum over the spatial dimensions, kept as 1 (ops-math math/reduce_max/docs/
    aclnnGlobalMaxPool.md)."""
    if self.size:
        store(out, np.max(widen(self), axis=tuple(range(2, self.ndim)), keepdims=True))


# ---- variance or standard deviation with the mean -------------------------------------------


def _moments_check(**arguments: Any) -> None:
    """(self, dim, correction, keepdim, varOut or stdOut, meanOut): the outputs have the
    reduced shape (the output rules of aclnnVarMean and aclnnStdMeanCorrection)."""
    operator = "aclnnVarMean" if "varOut" in arguments else "aclnnStdMeanCorrection"
    _axes(arguments["self"].ndim, arguments["dim"])
    _check_reduced(operator, {"self": arguments["self"], "dim": arguments["dim"],
                              "keepdim": arguments["keepdim"]},
                   **{name: arguments[name] for name in list(arguments)[4:]})


def _moments(self: np.ndarray, dim: tuple[int, ...], correction: int, keepdim: bool,
             first: np.ndarray, meanOut: np.ndarray, root: bool) -> None:
    """sum (x - mean)^2 / max(N - correction, 0) over dim (an empty dim: every dimension),
    its square root for ``root``, and the mean."""
    if self.size == 0:
        return
    axes = _axes(self.ndim, dim)
    x = widen(self).astype(np.result_type(widen(self), np.float32))
    count = int(np.prod([self.shape[a] for a in axes])) if axes else 1
    mean = np.mean(x, axis=axes, keepdims=True)
    with np.errstate(all="ignore"):
        spread = np.sum(np.square(x - mean), axis=axes, keepdims=keepdim) / \
            x.dtype.type(max(count - correction, 0))
    store(first, np.sqrt(spread) if root else spread)
    store(meanOut, mean if keepdim else np.squeeze(mean, axis=axes))


@register("aclnnVarMean", check=_moments_check)
def var_mean(self: np.ndarray, dim: tuple[int, ...], correction: int, keepdim: bool,
             varOut: np.ndarray, meanOut: np.ndarray) -> None:
    """ops-math math/reduce_var/docs/aclnnVarMean.md."""
    _moments(self, dim, correction, keepdim, varOut, meanOut, False)


@register("aclnnStdMeanCorrection", check=_moments_check)
def std_mean_correction(self: np.ndarray, dim: tuple[int, ...], correction: int,
                        keepdim: bool, stdOut: np.ndarray, meanOut: np.ndarray) -> None:
    """ops-math math/reduce_std_with_mean/docs/aclnnStdMeanCorrection.md."""
    _moments(self, dim, correction, keepdim, stdOut, meanOut, True)


# ---- cumulative sum, exclusive or reversed ------------------------------------------------


def _cumsum_check(self: np.ndarray, dim: int, exclusive: bool, reverse: bool,
                  out: np.ndarray) -> None:
    _one_axis(self, dim)
    check_output_shapes("aclnnCumsumV2", {"self": self, "dim": dim}, {"out": out},
                        "it must be self's")


@register("aclnnCumsumV2", check=_cumsum_check)
def cumsum_v2(self: np.ndarray, dim: int, exclusive: bool, reverse: bool,
              out: np.ndarray) -> None:
    """The running sum along dim (ops-math math/cumsum/docs/aclnnCumsumV2.md): from the end
    when reverse, each element left out of its own sum when exclusive."""
    if self.size == 0:
        return
    x = widen(self)
    if self.ndim == 0:
        store(out, np.zeros_like(x) if exclusive else x)
        return
    axis = _one_axis(self, dim)
    if reverse:
        x = np.flip(x, axis)
    result = np.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        result = result - x
    store(out, np.flip(result, axis) if reverse else result)



# ---- aclnnExpSegsum, aclnnExpSegsumBackward --------------------------------------------------

_SEGSUM = Dtypes(("float32", "float16", "bfloat16"))
_ND = 2  # aclFormat ACL_FORMAT_ND


def _exp_segsum_check(self: np.ndarray, out: np.ndarray) -> None:
    """ops-math math/segsum/op_host/op_api/aclnn_segsum.cpp: an empty self is taken unchecked
    (aclnnExpSegsumGetWorkspaceSize); else CheckDtypeEqual (out of self's dtype), CheckShape
    (self 3-d or 4-d, out one more dimension: self's shape then its last size again) and
    CheckFormat (self and out ND)."""
    if self.size == 0:
        return
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be self's {self.dtype.name}")
    if self.ndim not in (3, 4):
        raise ValueError(f"self has {self.ndim} dimensions: it must have 3 or 4")
    expected = self.shape + self.shape[-1:]
    if out.shape != expected:
        raise ValueError(f"out has shape {list(out.shape)}: it must be {list(expected)} (self's "
                         "shape, then its last size again)")
    for name, value in (("self", self), ("out", out)):
        if tensor_format(value) != _ND:
            raise ValueError(f"{name} has aclFormat {tensor_format(value)}: it must be ND")


@register("aclnnExpSegsum", dtypes=_SEGSUM, check=_exp_segsum_check)
def exp_segsum(self: np.ndarray, out: np.ndarray) -> None:
    """out[..., i, j] = exp(self[..., j + 1] + ... + self[..., i]) for j <= i (1 on the
    diagonal), 0 above it: ops-math math/segsum/docs/aclnnExpSegsum.md's masked cumulative sum
    along dimension -2, then -inf above the diagonal and exp; float32 for the halves."""
    if self.size == 0:
        return
    length = self.shape[-1]
    below = np.tril(np.ones((length, length), np.bool_), -1)  # i > j
    values = widen(self).astype(np.float32, copy=False)
    spread = np.where(below, values[..., :, None], np.float32(0))
    sums = np.cumsum(spread, axis=-2)
    above = np.triu(np.ones((length, length), np.bool_), 1)  # j > i
    store(out, np.exp(np.where(above, -np.inf, sums)))


def _exp_segsum_backward_check(gradOutput: np.ndarray, gradSelf: np.ndarray,
                               gradInput: np.ndarray) -> None:
    """ops-math math/exp_segsum_grad/op_host/op_api/aclnn_exp_segsum_backward.cpp: an empty
    tensor is taken unchecked; else CheckDtypeEqual (gradInput of gradOutput's dtype),
    CheckShape (gradOutput 4-d or 5-d with equal last two sizes, gradSelf of its shape,
    gradInput one dimension fewer, of its leading sizes) and CheckFormat (all ND)."""
    if gradOutput.size == 0 or gradSelf.size == 0 or gradInput.size == 0:
        return
    if gradInput.dtype != gradOutput.dtype:
        raise ValueError(f"gradInput has dtype {gradInput.dtype.name}: it must be gradOutput's "
                         f"{gradOutput.dtype.name}")
    if gradOutput.ndim not in (4, 5):
        raise ValueError(f"gradOutput has {gradOutput.ndim} dimensions: it must have 4 or 5")
    if gradSelf.ndim != gradOutput.ndim:
        raise ValueError(f"gradSelf has {gradSelf.ndim} dimensions: it must have gradOutput's "
                         f"{gradOutput.ndim}")
    if gradInput.ndim != gradOutput.ndim - 1:
        raise ValueError(f"gradInput has {gradInput.ndim} dimensions: it must have one fewer "
                         f"than gradOutput's {gradOutput.ndim}")
    if gradOutput.shape[-1] != gradOutput.shape[-2]:
        raise ValueError(f"gradOutput has shape {list(gradOutput.shape)}: its last two sizes "
                         "must be equal")
    if gradSelf.shape != gradOutput.shape:
        raise ValueError(f"gradSelf has shape {list(gradSelf.shape)}: it must be gradOutput's "
                         f"{list(gradOutput.shape)}")
    if gradInput.shape != gradOutput.shape[:-1]:
        raise ValueError(f"gradInput has shape {list(gradInput.shape)}: it must be "
                         f"{list(gradOutput.shape[:-1])}")
    if tensor_format(gradOutput) != _ND:
        raise ValueError(f"gradOutput has aclFormat {tensor_format(gradOutput)}: it must be ND")
    for name, value in (("gradSelf", gradSelf), ("gradInput", gradInput)):
        if tensor_format(value) != tensor_format(gradOutput):
            raise ValueError(f"{name} has aclFormat {tensor_format(value)}: it must be "
                             f"gradOutput's {tensor_format(gradOutput)}")


@register("aclnnExpSegsumBackward", dtypes=_SEGSUM, check=_exp_segsum_backward_check)
def exp_segsum_backward(gradOutput: np.ndarray, gradSelf: np.ndarray,
                        gradInput: np.ndarray) -> None:
    """gradInput[..., i] = sum over j < i <= k of gradOutput[..., k, j] gradSelf[..., k, j]
    (ops-math math/exp_segsum_grad/docs/aclnnExpSegsumBackward.md: the product below the
    diagonal, summed from the last row up, kept below the diagonal, summed along each row);
    float32 for the halves."""
    if gradOutput.size == 0 or gradSelf.size == 0 or gradInput.size == 0:
        return
    length = gradOutput.shape[-1]
    below = np.tril(np.ones((length, length), np.bool_), -1)
    product = widen(gradOutput).astype(np.float32) * widen(gradSelf).astype(np.float32)
    product = np.where(below, product, np.float32(0))
    suffix = np.flip(np.cumsum(np.flip(product, axis=-2), axis=-2), axis=-2)
    store(gradInput, np.sum(np.where(below, suffix, np.float32(0)), axis=-1))
