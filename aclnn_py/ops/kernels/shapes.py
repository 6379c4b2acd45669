"""Kernels that move elements: concatenation, stacking and splitting, gathering and scattering,
indexing, flips and rolls, permutations and broadcasts, triangles, sorting and top-k, ranges
and copies. No arithmetic: values are copied exactly (converted to the output's dtype where
it differs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import Dtypes
from . import builtin, report_extent, store, widen
from .elementwise import ANY, NUMBERS


def _axis(ndim: int, dim: int) -> int:
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise ValueError(f"dim {dim} is out of range for a tensor of {ndim} dimensions")
    return dim % size


def _cat_check(tensors: list[np.ndarray], dim: int, out: np.ndarray) -> None:
    shaped = [t for t in tensors if not (t.ndim == 1 and t.size == 0)]
    if not shaped:
        return
    axis = _axis(shaped[0].ndim, dim)
    expected = list(shaped[0].shape)
    expected[axis] = sum(t.shape[axis] for t in shaped)
    for t in shaped:
        if t.ndim != len(expected) or any(a != b for i, (a, b) in
                                          enumerate(zip(t.shape, shaped[0].shape)) if i != axis):
            raise ValueError(f"tensors must match in every dimension but dim {dim}: got "
                             f"{[x.shape for x in shaped]}")
    if tuple(expected) != out.shape:
        raise ValueError(f"out has shape {out.shape}, the concatenation {tuple(expected)}")


@builtin("aclnnCat", dtypes=ANY, check=_cat_check)
def cat(tensors: list[np.ndarray], dim: int, out: np.ndarray) -> None:
    shaped = [t for t in tensors if not (t.ndim == 1 and t.size == 0)]
    if shaped:
        store(out, np.concatenate(shaped, axis=_axis(shaped[0].ndim, dim)))


@builtin("aclnnStack", dtypes=ANY)
def stack(tensors: list[np.ndarray], dim: int, out: np.ndarray) -> None:
    store(out, np.stack(tensors, axis=_axis(tensors[0].ndim + 1, dim)))


@builtin("aclnnSplitTensor", dtypes=ANY)
def split_tensor(self: np.ndarray, splitSections: int, dim: int, out: list[np.ndarray]) -> None:
    axis = _axis(self.ndim, dim)
    bounds = range(0, self.shape[axis], max(int(splitSections), 1))
    for piece, start in zip(out, bounds):
        store(piece, np.take(self, range(start, min(start + splitSections, self.shape[axis])),
                             axis=axis))


@builtin("aclnnSplitWithSize", dtypes=ANY)
def split_with_size(self: np.ndarray, splitSize: tuple[int, ...], dim: int,
                    out: list[np.ndarray]) -> None:
    axis = _axis(self.ndim, dim)
    start = 0
    for piece, size in zip(out, splitSize):
        store(piece, np.take(self, range(start, start + size), axis=axis))
        start += size


def _index_check(self: np.ndarray, dim: int, index: np.ndarray, out: np.ndarray) -> None:
    if index.dtype.kind not in "iu":
        raise ValueError(f"index must have an integer dtype, got {index.dtype.name}")
    axis = _axis(self.ndim, dim)
    if index.size and (index.min() < -self.shape[axis] or index.max() >= self.shape[axis]):
        raise ValueError(f"index holds values outside [0, {self.shape[axis]})")


@builtin("aclnnGather", dtypes=ANY)
def gather(self: np.ndarray, dim: int, index: np.ndarray, out: np.ndarray) -> None:
    store(out, np.take_along_axis(self, index.astype(np.int64), axis=_axis(self.ndim, dim)))


@builtin("aclnnGatherV2", dtypes=ANY)
def gather_v2(self: np.ndarray, dim: int, index: np.ndarray, out: np.ndarray) -> None:
    store(out, np.take(self, index.astype(np.int64), axis=_axis(self.ndim, dim)))


@builtin("aclnnIndexSelect", dtypes=ANY, check=_index_check)
def index_select(self: np.ndarray, dim: int, index: np.ndarray, out: np.ndarray) -> None:
    store(out, np.take(self, index.astype(np.int64).reshape(-1), axis=_axis(self.ndim, dim)))


@builtin("aclnnTake", dtypes=ANY)
def take(self: np.ndarray, index: np.ndarray, out: np.ndarray) -> None:
    store(out, np.take(self.reshape(-1), index.astype(np.int64)))


def _scatter_into(result: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray,
                  reduce: int) -> None:
    axis = _axis(result.ndim, dim)
    grid: list[Any] = list(np.indices(index.shape, sparse=True))
    grid[axis] = index.astype(np.int64)
    values = src[tuple(slice(0, n) for n in index.shape)]
    if reduce == 1:
        np.add.at(result, tuple(grid), values)
    elif reduce == 2:
        np.multiply.at(result, tuple(grid), values)
    else:
        result[tuple(grid)] = values


@builtin("aclnnScatter", dtypes=ANY)
def scatter(self: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray, reduce: int,
            out: np.ndarray) -> None:
    """reduce: 0 none, 1 add, 2 multiply."""
    result = widen(self).copy()
    _scatter_into(result, dim, index, widen(src), reduce)
    store(out, result)


@builtin("aclnnScatterAdd", dtypes=ANY)
def scatter_add(self: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray,
                out: np.ndarray) -> None:
    result = widen(self).copy()
    _scatter_into(result, dim, index, widen(src), 1)
    store(out, result)


@builtin("aclnnIndexFill", dtypes=ANY)
def index_fill(self: np.ndarray, dim: int, index: np.ndarray, value: Any,
               out: np.ndarray) -> None:
    result = self.copy()
    positions: list[Any] = [slice(None)] * self.ndim
    positions[_axis(self.ndim, dim)] = index.astype(np.int64).reshape(-1)
    result[tuple(positions)] = np.asarray(value).astype(self.dtype)
    store(out, result)


def _masked_select_check(self: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
    """CANN's checks (hicann/ops-math conversion/masked_select_v3/op_api/
    aclnn_masked_select.cpp CheckDtypeValid, CheckShape): out 1-d, of as many elements as
    self and mask broadcast to (the most the data can select), of a dtype self may have; and
    contiguous, which its doc requires (docs/aclnnMaskedSelect.md)."""
    if out.dtype not in ANY:
        raise ValueError(f"out has dtype {out.dtype.name}, which aclnnMaskedSelect does not "
                         f"support: it supports {', '.join(ANY.names)}")
    for name, tensor in (("self", self), ("mask", mask)):
        if tensor.ndim > 8:
            raise ValueError(f"{name} has {tensor.ndim} dimensions; at most 8 are supported")
    shape = np.broadcast_shapes(self.shape, mask.shape)
    if out.ndim != 1:
        raise ValueError(f"out must be 1-d (of the {int(np.prod(shape))} elements self and mask "
                         f"broadcast to), got shape {out.shape}")
    if out.size != int(np.prod(shape)):
        raise ValueError(f"out has {out.size} elements; it must have as many as self and mask "
                         f"broadcast to ({shape}: {int(np.prod(shape))})")
    if out.size > 1 and out.strides[0] != out.itemsize:
        raise ValueError("out must be contiguous (aclnnMaskedSelect does not support a "
                         "non-contiguous out)")


@builtin("aclnnMaskedSelect", dtypes={"self": ANY, "mask": Dtypes(("uint8", "bool"))},
         check=_masked_select_check)
def masked_select(self: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
    source, flags = np.broadcast_arrays(self, mask.astype(bool))
    selected = source[flags]
    store(out[:selected.size], selected)
    report_extent(out, (selected.size,))  # its view shape once the launch ran, as CANN's


@builtin("aclnnFlip", dtypes=ANY)
def flip(self: np.ndarray, dims: tuple[int, ...], out: np.ndarray) -> None:
    store(out, np.flip(self, axis=tuple(_axis(self.ndim, d) for d in dims)))


@builtin("aclnnRoll", dtypes=ANY)
def roll(x: np.ndarray, shifts: tuple[int, ...], dims: tuple[int, ...], out: np.ndarray) -> None:
    if dims:
        store(out, np.roll(x, shifts, axis=tuple(_axis(x.ndim, d) for d in dims)))
    else:
        store(out, np.roll(x.reshape(-1), shifts[0]).reshape(x.shape))


def _permute_check(self: np.ndarray, dims: tuple[int, ...], out: np.ndarray) -> None:
    axes = [_axis(self.ndim, d) for d in dims]
    if sorted(axes) != list(range(self.ndim)):
        raise ValueError(f"dims {list(dims)} must name each of self's {self.ndim} dimensions "
                         "once")


@builtin("aclnnPermute", dtypes=ANY, check=_permute_check)
def permute(self: np.ndarray, dims: tuple[int, ...], out: np.ndarray) -> None:
    store(out, np.transpose(self, [_axis(self.ndim, d) for d in dims]))


@builtin("aclnnExpand", dtypes=ANY)
def expand(self: np.ndarray, size: tuple[int, ...], out: np.ndarray) -> None:
    lead = len(size) - self.ndim
    shape = tuple(self.shape[i - lead] if n == -1 else n for i, n in enumerate(size))
    store(out, np.broadcast_to(self, shape))


@builtin("aclnnRepeat", dtypes=ANY)
def repeat(self: np.ndarray, repeats: tuple[int, ...], out: np.ndarray) -> None:
    store(out, np.tile(self, repeats))


@builtin("aclnnTril", dtypes=ANY)
def tril(self: np.ndarray, diagonal: int, out: np.ndarray) -> None:
    store(out, np.tril(self, diagonal))


@builtin("aclnnTriu", dtypes=ANY)
def triu(self: np.ndarray, diagonal: int, out: np.ndarray) -> None:
    store(out, np.triu(self, diagonal))


def _sorted_order(x: np.ndarray, axis: int, descending: bool) -> Any:
    """A stable order of ``x`` along ``axis``: equal elements keep their order, NaN counts as
    the largest value (last ascending, first descending), as PyTorch's stable sort has it."""
    keys = widen(x).astype(np.float64)
    if descending:
        keys = np.where(np.isnan(keys), -np.inf, -keys)
    return np.argsort(keys, axis=axis, kind="stable")


@builtin("aclnnSort", dtypes=NUMBERS)
def sort(self: np.ndarray, stable: bool, dim: int, descending: bool, valuesOut: np.ndarray,
         indicesOut: np.ndarray) -> None:
    if self.ndim == 0:
        store(valuesOut, self)
        store(indicesOut, np.zeros((), np.int64))
        return
    axis = _axis(self.ndim, dim)
    order = _sorted_order(self, axis, descending)
    store(valuesOut, np.take_along_axis(self, order, axis))
    store(indicesOut, order)


@builtin("aclnnArgsort", dtypes=NUMBERS)
def argsort(self: np.ndarray, dim: int, descending: bool, out: np.ndarray) -> None:
    store(out, _sorted_order(self, _axis(self.ndim, dim), descending))


def _topk_check(self: np.ndarray, k: int, dim: int, largest: bool, sorted: bool,
                valuesOut: np.ndarray, indicesOut: np.ndarray) -> None:
    axis = _axis(self.ndim, dim)
    length = self.shape[axis] if self.ndim else 1
    if not 0 <= k <= length:
        raise ValueError(f"k must be in [0, {length}] (the size of dim {dim}), got {k}")


@builtin("aclnnTopk", dtypes=NUMBERS, check=_topk_check)
def topk(self: np.ndarray, k: int, dim: int, largest: bool, sorted: bool,
         valuesOut: np.ndarray, indicesOut: np.ndarray) -> None:
    if self.ndim == 0:
        store(valuesOut, self)
        store(indicesOut, np.zeros((), np.int64))
        return
    axis = _axis(self.ndim, dim)
    order = np.take(_sorted_order(self, axis, largest), range(k), axis=axis)
    store(valuesOut, np.take_along_axis(self, order, axis))
    store(indicesOut, order)


@builtin("aclnnArange")
def arange(start: Any, end: Any, step: Any, out: np.ndarray) -> None:
    first, stride = np.float64(start), np.float64(step)
    store(out, first + stride * np.arange(out.size, dtype=np.float64))


@builtin("aclnnLinspace")
def linspace(start: Any, end: Any, steps: int, out: np.ndarray) -> None:
    store(out, np.linspace(float(start), float(end), int(steps)))


@builtin("aclnnEye")
def eye(n: int, m: int, out: np.ndarray) -> None:
    store(out, np.eye(n, m))


@builtin("aclnnInplaceCopy", dtypes=ANY)
def inplace_copy(selfRef: np.ndarray, src: np.ndarray) -> None:
    store(selfRef, np.broadcast_to(src, selfRef.shape))


@builtin("aclnnConstantPadNd", dtypes=ANY)
def constant_pad_nd(self: np.ndarray, pad: tuple[int, ...], value: Any, out: np.ndarray) -> None:
    widths = [(0, 0)] * self.ndim
    for i in range(len(pad) // 2):  # pairs from the last dimension backwards, as PyTorch's
        widths[self.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    store(out, np.pad(self, widths, constant_values=np.asarray(value).astype(self.dtype)))
