"""Reductions: sums, means, extrema and their indices, products, variance, norms and
cumulative sums.

float16 and bfloat16 accumulate in float32 (CANN's reduction kernels do, and so does PyTorch
on the CPU) and are rounded once into the output; float32 accumulates in float32 (numpy's
pairwise summation; CANN's order differs, so sums agree within the dtype's tolerance, not
bitwise). An empty ``dim`` array reduces every dimension, as PyTorch's ``sum(dim=[])`` does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import numpy_dtype
from . import builtin, store, widen
from .elementwise import ANY, FLOATS, FLOATS64, NUMBERS


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


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keep: bool) -> tuple[int, ...]:
    if keep:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _check_out(self: np.ndarray, axes: tuple[int, ...], keep: bool, out: np.ndarray) -> None:
    expected = _reduced_shape(self.shape, axes, keep)
    if out.shape != expected:
        raise ValueError(f"out has shape {out.shape}; reducing self {self.shape} over "
                         f"{list(axes)} {'keeping' if keep else 'dropping'} those dimensions "
                         f"gives {expected}")


def _accumulated(self: np.ndarray, dtype: np.dtype | None = None) -> Any:
    x = widen(self)
    if dtype is not None and dtype.kind == "f" and x.dtype.kind != "f":
        x = x.astype(np.float32 if dtype.itemsize < 8 else dtype)
    return x


def _sum_check(self: np.ndarray, dims: Any, keep: bool, dtype: int, out: np.ndarray) -> None:
    _check_out(self, _axes(self.ndim, dims), keep, out)


@builtin("aclnnReduceSum", dtypes=ANY, check=lambda self, dims, keepDims, dtype, out:
         _sum_check(self, dims, keepDims, dtype, out))
def reduce_sum(self: np.ndarray, dims: tuple[int, ...], keepDims: bool, dtype: int,
               out: np.ndarray) -> None:
    axes = _axes(self.ndim, dims)
    store(out, np.sum(_accumulated(self, numpy_dtype(dtype)), axis=axes, keepdims=keepDims))


@builtin("aclnnMean", dtypes=FLOATS64, check=lambda self, dim, keepDim, dtype, out:
         _sum_check(self, dim, keepDim, dtype, out))
def mean(self: np.ndarray, dim: tuple[int, ...], keepDim: bool, dtype: int,
         out: np.ndarray) -> None:
    axes = _axes(self.ndim, dim)
    store(out, np.mean(_accumulated(self), axis=axes, keepdims=keepDim))


def _extremum(function: Any) -> Any:
    def compute(self: np.ndarray, dim: tuple[int, ...], keepDim: bool, out: np.ndarray) -> None:
        store(out, function(self, axis=_axes(self.ndim, dim), keepdims=keepDim))
    return compute


def _extremum_check(self: np.ndarray, dim: Any, keepDim: bool, out: np.ndarray) -> None:
    axes = _axes(self.ndim, dim)
    if self.size == 0 and any(self.shape[a] == 0 for a in axes):
        raise ValueError("self is empty along a reduced dimension: it has no extremum")
    _check_out(self, axes, keepDim, out)


builtin("aclnnAmax", dtypes=NUMBERS, check=_extremum_check)(_extremum(np.max))
builtin("aclnnAmin", dtypes=NUMBERS, check=_extremum_check)(_extremum(np.min))


def _arg(function: Any) -> Any:
    def compute(self: np.ndarray, dim: int, keepdim: bool, out: np.ndarray) -> None:
        x = widen(self)
        if x.ndim == 0:
            store(out, np.zeros((), np.int64))
            return
        store(out, function(x, axis=dim % x.ndim, keepdims=keepdim))
    return compute


def _arg_check(self: np.ndarray, dim: int, keepdim: bool, out: np.ndarray) -> None:
    if self.ndim == 0:
        return
    axes = _axes(self.ndim, (dim,))
    if self.shape[axes[0]] == 0:
        raise ValueError(f"self is empty along dim {dim}")
    _check_out(self, axes, keepdim, out)


builtin("aclnnArgMax", dtypes=NUMBERS, check=_arg_check)(_arg(np.argmax))
builtin("aclnnArgMin", dtypes=NUMBERS, check=_arg_check)(_arg(np.argmin))


@builtin("aclnnMax", dtypes=NUMBERS)
def max_all(self: np.ndarray, out: np.ndarray) -> None:
    store(out, np.max(self))


@builtin("aclnnMin", dtypes=NUMBERS)
def min_all(self: np.ndarray, out: np.ndarray) -> None:
    store(out, np.min(self))


@builtin("aclnnProd", dtypes=NUMBERS)
def prod(self: np.ndarray, dtype: int, out: np.ndarray) -> None:
    store(out, np.prod(_accumulated(self, numpy_dtype(dtype))))


@builtin("aclnnVar", dtypes=FLOATS, check=lambda self, dim, unbiased, keepdim, out:
         _check_out(self, _axes(self.ndim, dim), keepdim, out))
def var(self: np.ndarray, dim: tuple[int, ...], unbiased: bool, keepdim: bool,
        out: np.ndarray) -> None:
    store(out, np.var(widen(self), axis=_axes(self.ndim, dim), ddof=int(unbiased),
                      keepdims=keepdim))


@builtin("aclnnStd", dtypes=FLOATS, check=lambda self, dim, correction, keepdim, out:
         _check_out(self, _axes(self.ndim, dim), keepdim, out))
def std(self: np.ndarray, dim: tuple[int, ...], correction: int, keepdim: bool,
        out: np.ndarray) -> None:
    store(out, np.std(widen(self), axis=_axes(self.ndim, dim), ddof=correction,
                      keepdims=keepdim))


def _norm(x: np.ndarray, p: float, axes: tuple[int, ...], keep: bool) -> Any:
    if p == np.inf:
        return np.max(np.abs(x), axis=axes, keepdims=keep)
    if p == -np.inf:
        return np.min(np.abs(x), axis=axes, keepdims=keep)
    if p == 0:
        return np.sum(x != 0, axis=axes, keepdims=keep).astype(x.dtype)
    return np.sum(np.abs(x) ** p, axis=axes, keepdims=keep) ** (1 / p)


@builtin("aclnnNorm", dtypes=FLOATS, check=lambda self, pScalar, dim, keepdim, out:
         _check_out(self, _axes(self.ndim, dim), keepdim, out))
def norm(self: np.ndarray, pScalar: Any, dim: tuple[int, ...], keepdim: bool,
         out: np.ndarray) -> None:
    p = 2.0 if pScalar is None else float(pScalar)
    store(out, _norm(widen(self), p, _axes(self.ndim, dim), keepdim))


@builtin("aclnnLinalgVectorNorm", dtypes=FLOATS,
         check=lambda self, ord, dims, keepDims, dtype, out:
         _check_out(self, _axes(self.ndim, dims), keepDims, out))
def linalg_vector_norm(self: np.ndarray, ord: Any, dims: tuple[int, ...], keepDims: bool,
                       dtype: int, out: np.ndarray) -> None:
    store(out, _norm(widen(self), float(ord), _axes(self.ndim, dims), keepDims))


@builtin("aclnnCumsum", dtypes=NUMBERS)
def cumsum(self: np.ndarray, dim: int, dtype: int, out: np.ndarray) -> None:
    x = _accumulated(self, numpy_dtype(dtype))
    if x.ndim == 0:
        store(out, x)
        return
    store(out, np.cumsum(x, axis=dim % x.ndim))


