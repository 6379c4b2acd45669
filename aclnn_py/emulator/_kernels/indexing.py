"""Kernels that index: adding, copying and filling along a dimension, advanced indexing with a
list of index tensors, scatters by value, by reduction and by n-d indices, puts, masked
scatters, repeat-interleave and its gradient, the embedding gradients and bags, medians and
k-th values, and the operators whose output size depends on the data (nonzero, unique).

The gathers, scatters and selections these build on (aclnnGather, aclnnScatter, aclnnIndexFill,
aclnnMaskedSelect ...) live in :mod:`.shapes`, whose checks are reused here. Values are copied
exactly; sums are computed as CANN's kernels do (float16 and bfloat16 widened to float32,
rounded once into the output). An output whose size depends on the data is as large as the
most the data can give; the kernel reports the real extent (:func:`report_extent`), which the
output's aclTensor then has, as CANN's launch gives it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import Refusal, check_output_shapes, report_extent, store, tensor_format, widen
from . import inplace as _inplace_forms
from .elementwise import ANY, FLOATS64, NUMBERS
from .elementwise import register as builtin
from .foreach import PRIVATE_FORMATS
from .nn import valid_indices
from .shapes import _axis, _index_dtype, _scatter_check, _scatter_into, _scatter_values
from .shapes import index_fill as _index_fill

MAX_DIMS = 8  # OP_CHECK_MAX_DIM(..., MAX_DIM_LEN) of the op_apis below


def _max_dims(**tensors: Any) -> None:
    for name, value in tensors.items():
        if value is not None and value.ndim > MAX_DIMS:
            raise ValueError(f"{name} has {value.ndim} dimensions: at most {MAX_DIMS} are "
                             "supported")


def _nd_formats(**tensors: Any) -> None:
    """CANN's CheckFormat of the operators below: no private format (NC1HWC0, FRACTAL_Z,
    FRACTAL_NZ ...: foreach.PRIVATE_FORMATS)."""
    for name, value in tensors.items():
        if value is not None and tensor_format(value) in PRIVATE_FORMATS:
            raise ValueError(f"{name} has a private format ({tensor_format(value)}): only ND "
                             "and the plain formats are supported")


def _dim_in_range(ndim: int, dim: int, name: str = "dim") -> int:
    """dim in [-r, r) for r dimensions, [-1, 0] for a 0-d tensor; the axis it names."""
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise ValueError(f"{name} {dim} is out of range for a tensor of {ndim} dimensions: it "
                         f"must be in [{-size}, {size - 1}]")
    return dim % size


def add_rows(target: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """target[rows[i]] += values[i] along the first axis, repeated rows summed in order.

    numpy's add.at over rows of many elements is slow: the rows are sorted (stably) and added
    in passes, the k-th occurrence of every row in pass k (no row twice in a pass), as many
    passes as a row repeats; past 64 repeats, each run is summed by one reduceat instead."""
    if rows.size == 0:
        return
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    lengths = np.diff(np.r_[starts, ordered.size])
    if lengths.max() > 64:
        sums = np.add.reduceat(values[order], starts, axis=0)
        target[ordered[starts]] += sums.astype(target.dtype, copy=False)
        return
    rank = np.arange(ordered.size) - np.repeat(starts, lengths)
    for k in range(int(lengths.max())):
        chosen = order[rank == k]
        target[rows[chosen]] += values[chosen].astype(target.dtype, copy=False)


def _along(array: np.ndarray, axis: int) -> np.ndarray:
    """``array`` (0-d as 1-d) with ``axis`` moved first."""
    return np.moveaxis(array.reshape(array.shape or (1,)), axis, 0)


# ---- index_add, index_copy, index_fill ------------------------------------------------------


def _index_add_check(self: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray,
                     alpha: Any, out: np.ndarray) -> None:
    """ops-nn index/inplace_scatter_add/op_host/op_api/aclnn_index_add.cpp CheckDtypeValid and
    CheckShape: index int32 or int64 of at most one dimension; self, source and out of one
    dtype; self and source at most 8 dimensions and of one rank (unless self is 0-d), equal
    but along dim; index's length source's extent along dim; out of self's shape; dim in
    [-r, r) ([-1, 0] for a 0-d self)."""
    if index.dtype not in (np.int32, np.int64):
        raise ValueError(f"index has dtype {index.dtype.name}: it must be int32 or int64")
    for name, value in (("source", source), ("out", out)):
        if value.dtype != self.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be self's "
                             f"{self.dtype.name}")
    _max_dims(self=self, source=source)
    axis = _dim_in_range(self.ndim, dim)
    if self.ndim and self.ndim != source.ndim:
        raise ValueError(f"source has {source.ndim} dimensions and self {self.ndim}: they must "
                         "have the same rank")
    for i in range(self.ndim):
        if i != axis and self.shape[i] != source.shape[i]:
            raise ValueError(f"source has extent {source.shape[i]} in dimension {i} and self "
                             f"{self.shape[i]}: they must match but along dim {dim}")
    if index.ndim > 1:
        raise ValueError(f"index has {index.ndim} dimensions: it must have at most one")
    along = (source.shape or (1,))[axis] if source.ndim > axis or source.ndim == 0 else 1
    if (index.shape or (1,))[0] != along:
        raise ValueError(f"index has {(index.shape or (1,))[0]} elements but source's extent "
                         f"along dim {dim} is {along}: they must be equal")
    if out.shape != self.shape:
        raise ValueError(f"out has shape {out.shape}: it must be self's {self.shape}")


def _index_add(self: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray, alpha: Any,
               out: np.ndarray) -> None:
    """out = self, then out[..., index[i], ...] += alpha source[..., i, ...] along dim."""
    axis = _axis(self.ndim, dim)
    n = (self.shape or (1,))[axis]
    result = widen(self).copy()
    values = valid_indices("index", index.reshape(-1), 0, n,
                           f"dim {dim} of self is {n}, and CANN's doc (ops-nn index/"
                           f"inplace_scatter_add/docs/aclnnIndexAdd.md) takes indices in [0, {n})")
    if values.size:
        added = widen(source).reshape(source.shape or (1,))
        if self.dtype == np.bool_:
            scaled = added.astype(bool) & bool(alpha)
            target = _along(result, axis)
            np.logical_or.at(target, values, _along(scaled, axis))
        else:
            scaled = added * np.asarray(alpha).astype(result.dtype)
            add_rows(_along(result, axis), values, _along(scaled.astype(result.dtype), axis))
    store(out, result.reshape(out.shape))


@builtin("aclnnIndexAdd", dtypes=ANY, check=_index_add_check)
def index_add(self: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray, alpha: Any,
              out: np.ndarray) -> None:
    _index_add(self, dim, index, source, alpha, out)


def _index_add_v2_check(self: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray,
                        alpha: Any, mode: int, out: np.ndarray) -> None:
    _index_add_check(self, dim, index, source, alpha, out)


@builtin("aclnnIndexAddV2", dtypes=ANY, check=_index_add_v2_check)
def index_add_v2(self: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray, alpha: Any,
                 mode: int, out: np.ndarray) -> None:
    """aclnnIndexAdd; mode chooses CANN's kernel (0 the fast one), not the result."""
    _index_add(self, dim, index, source, alpha, out)


def _index_copy_check(selfRef: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray,
                      outRef: np.ndarray) -> None:
    """ops-nn index/scatter_update/op_api/aclnn_index_copy.cpp CheckDtypeValid and CheckShape:
    index int32 or int64 of at most one dimension; source and out of self's dtype; self and
    source at most 8 dimensions; out of self's shape; a 0-d source with one index; self and
    source of one rank unless either is 0-d; dim in [-r, r) ([-1, 0] for a 0-d self); equal
    extents but along dim; as many indices as source's extent along dim."""
    if index.dtype not in (np.int32, np.int64):
        raise ValueError(f"index has dtype {index.dtype.name}: it must be int32 or int64")
    for name, value in (("source", source), ("outRef", outRef)):
        if value.dtype != selfRef.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be selfRef's "
                             f"{selfRef.dtype.name}")
    _max_dims(selfRef=selfRef, source=source)
    if index.ndim > 1:
        raise ValueError(f"index has {index.ndim} dimensions: it must have at most one")
    if outRef.shape != selfRef.shape:
        raise ValueError(f"outRef has shape {outRef.shape}: it must be selfRef's "
                         f"{selfRef.shape}")
    if source.ndim == 0 and index.size != 1:
        raise ValueError(f"source is 0-d: index must hold one element, not {index.size}")
    if selfRef.ndim != source.ndim and selfRef.ndim and source.ndim:
        raise ValueError(f"source has {source.ndim} dimensions and selfRef {selfRef.ndim}: "
                         "they must have the same rank")
    axis = _dim_in_range(selfRef.ndim, dim)
    if selfRef.ndim and source.ndim:
        for i in range(selfRef.ndim):
            if i != axis and selfRef.shape[i] != source.shape[i]:
                raise ValueError(f"source has extent {source.shape[i]} in dimension {i} and "
                                 f"selfRef {selfRef.shape[i]}: they must match but along dim "
                                 f"{dim}")
        if index.size != source.shape[axis]:
            raise ValueError(f"index has {index.size} elements but source's extent along dim "
                             f"{dim} is {source.shape[axis]}: they must be equal")


def _index_copy_into(target: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray
                     ) -> None:
    axis = _axis(target.ndim, dim)
    n = (target.shape or (1,))[axis]
    values = valid_indices("index", index.reshape(-1), 0, n,
                           f"dim {dim} of selfRef is {n}, and CANN's doc (ops-nn index/"
                           "scatter_update/docs/aclnnIndexCopy&aclnnInplaceIndexCopy.md) takes "
                           f"indices in [0, {n})")
    if values.size == 0:
        return
    view = _along(target, axis)
    if source.ndim == 0:
        view[values] = source.astype(target.dtype)
    else:
        view[values] = _along(source, axis).astype(target.dtype)


@builtin("aclnnIndexCopy", dtypes=ANY, check=_index_copy_check)
def index_copy(selfRef: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray,
               outRef: np.ndarray) -> None:
    """outRef = selfRef with source's slices along dim at index (the last of repeated ones)."""
    result = np.array(selfRef)
    _index_copy_into(result, dim, index, source)
    store(outRef, result)


def _inplace_index_copy_check(selfRef: np.ndarray, dim: int, index: np.ndarray,
                              source: np.ndarray) -> None:
    _index_copy_check(selfRef, dim, index, source, selfRef)


@builtin("aclnnInplaceIndexCopy", dtypes=ANY, check=_inplace_index_copy_check)
def inplace_index_copy(selfRef: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray
                       ) -> None:
    if selfRef.size:
        _index_copy_into(selfRef, dim, index, source)


def _index_fill_tensor_check(self: np.ndarray, dim: int, index: tuple[int, ...], value: Any,
                             out: np.ndarray) -> None:
    """ops-nn index/index_fill_d/docs/aclnnIndexFillTensor&aclnnInplaceIndexFillTensor.md: dim
    in [-r, r); every index in [-n, n) for dim's extent n (ops-nn index/index_fill_d/op_api/
    aclnn_index_fill_tensor.cpp, whose UT test_index_fill_exceed_negative_index and
    test_index_fill_index_illegal_out refuse one outside); out of self's dtype and shape."""
    axis = _dim_in_range(self.ndim, dim)
    n = (self.shape or (1,))[axis]
    outside = [i for i in index if not -n <= i < n] if self.size else []
    if outside:
        raise ValueError(f"index holds {outside[0]}, outside [{-n}, {n}) for dim {dim} of "
                         f"extent {n}")
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be self's {self.dtype.name}")
    if out.shape != self.shape:
        raise ValueError(f"out has shape {out.shape}: it must be self's {self.shape}")


@builtin("aclnnIndexFillTensor", dtypes=ANY, check=_index_fill_tensor_check)
def index_fill_tensor(self: np.ndarray, dim: int, index: tuple[int, ...], value: Any,
                      out: np.ndarray) -> None:
    """aclnnIndexFill with the indices as an integer array."""
    _index_fill(self=self, dim=dim, index=np.asarray(index, np.int64), value=value, out=out)


# ---- advanced indexing ----------------------------------------------------------------------


def _index_check(self: np.ndarray, indices: list[np.ndarray], out: np.ndarray) -> None:
    """ops-nn index/index/op_api/aclnn_index.cpp CheckDtypeValid and CheckShapeDim (the rest:
    the phase-1 rules): self and every index at most 8 dimensions; each index int64, int32,
    bool or uint8 (an empty one stands for the whole dimension); out of self's dtype."""
    _max_dims(self=self)
    _nd_formats(self=self, out=out)
    for position, index in enumerate(indices):
        if index.ndim > MAX_DIMS:
            raise ValueError(f"indices[{position}] has {index.ndim} dimensions: at most "
                             f"{MAX_DIMS} are supported")
        if index.dtype not in (np.int64, np.int32, np.bool_, np.uint8):
            raise ValueError(f"indices[{position}] has dtype {index.dtype.name}: it must be "
                             "int64, int32, bool or uint8")
        _nd_formats(**{f"indices[{position}]": index})
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be self's {self.dtype.name}")
    if self.size and out.size and all(i.dtype.kind == "i" for i in indices) \
            and len(indices) <= self.ndim:
        # the result's shape, the output rule's (integer indices only: a mask's depends on
        # its values)
        try:
            np.broadcast_shapes(*(i.shape for i in indices if i.size))
        except ValueError as error:
            raise ValueError(f"indices do not index self of shape {self.shape}: {error}") \
                from None
        check_output_shapes("aclnnIndex", {"self": self, "indices": indices}, {"out": out},
                            "self[indices] has")


def _advanced_key(self: np.ndarray, indices: list[np.ndarray]) -> tuple[Any, ...]:
    """numpy's key for PyTorch's ``self[indices]``: an empty index is the whole dimension, a
    bool or uint8 one a mask over as many dimensions as it has, an integer one counts from
    the end when negative."""
    key: list[Any] = []
    dim = 0
    for position, index in enumerate(indices):
        if index.size == 0 and index.dtype not in (np.bool_, np.uint8):
            key.append(slice(None))
            dim += 1
        elif index.dtype in (np.bool_, np.uint8):
            key.append(index.astype(bool))
            dim += max(index.ndim, 1)
        else:
            n = self.shape[dim] if dim < self.ndim else 1
            key.append(valid_indices(f"indices[{position}]", index, -n, n,
                                     f"dim {dim} of self is {n}: CANN's doc (ops-nn index/"
                                     f"index/docs/aclnnIndex.md) takes indices in [-{n}, {n})"))
            dim += 1
    return tuple(key)


@builtin("aclnnIndex", dtypes={"self": ANY}, check=_index_check)
def index(self: np.ndarray, indices: list[np.ndarray], out: np.ndarray) -> None:
    """out = self[indices], PyTorch's advanced indexing."""
    if self.size == 0 or out.size == 0:
        return
    result = self[_advanced_key(self, indices)]
    store(out, result.reshape(out.shape))


# ---- scatters -----------------------------------------------------------------------------


def _scatter_value_check(self: np.ndarray, dim: int, index: np.ndarray, value: Any,
                         reduce: int, out: np.ndarray) -> None:
    """ops-nn index/scatter_elements_v2/op_api/aclnn_scatter.cpp ExecScatterValueGetWorkspace
    Size: a complex value needs a complex self; then aclnnScatter's checks with the value
    broadcast to index's shape as src."""
    if np.iscomplexobj(value) and not np.iscomplexobj(self):
        raise ValueError("value is complex: self must then be complex")
    _scatter_check(self, dim, index, np.broadcast_to(np.zeros((), self.dtype), index.shape),
                   out)
    if reduce not in (0, 1, 2):
        raise ValueError(f"reduce is {reduce}: it must be 0 (none), 1 (add) or 2 (multiply)")


@builtin("aclnnScatterValue", dtypes=ANY, check=_scatter_value_check)
def scatter_value(self: np.ndarray, dim: int, index: np.ndarray, value: Any, reduce: int,
                  out: np.ndarray) -> None:
    """out = self with value written (reduce 0), added (1) or multiplied (2) at index."""
    if index.size == 0:
        store(out, self)
        return
    values = _scatter_values(self, dim, index)
    result = widen(self).copy()
    source = np.broadcast_to(np.asarray(value).astype(result.dtype), index.shape)
    _scatter_into(result.reshape(result.shape or (1,)), dim, values.reshape(index.shape or (1,)),
                  source.reshape(index.shape or (1,)), reduce)
    store(out, result)


def _scatter_reduce_check(self: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray,
                          reduce: int, includeSelf: bool, out: np.ndarray) -> None:
    """ops-nn index/scatter_elements_v2/op_api/aclnn_scatter.cpp aclnnScatterReduceGetWorkspace
    Size: on the Atlas A2 (DAV_2201) only float32 self, reduce 1 (add) and includeSelf; reduce
    in [0, 5] (IsValidScatterReduce); then aclnnScatter's checks."""
    if not (self.dtype == np.float32 and reduce == 1 and includeSelf):
        raise ValueError(f"scatter_reduce takes only a float32 self, reduce 1 (sum) and "
                         f"includeSelf true on this SoC: got {self.dtype.name}, reduce "
                         f"{reduce}, includeSelf {bool(includeSelf)}")
    _scatter_check(self, dim, index, src, out)


@builtin("aclnnScatterReduce", dtypes=ANY, check=_scatter_reduce_check)
def scatter_reduce(self: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray, reduce: int,
                   includeSelf: bool, out: np.ndarray) -> None:
    """out = self with src added at index along dim (the one form the SoC takes)."""
    if index.size == 0:
        store(out, self)
        return
    values = _scatter_values(self, dim, index)
    result = widen(self).copy()
    _scatter_into(result, dim, values, widen(src), 1)
    store(out, result)


def _nd_positions(data: np.ndarray, indices: np.ndarray, name: str) -> tuple[Any, ...]:
    """The key of each row of ``indices`` (its last dimension: that many leading dimensions of
    ``data``)."""
    depth = indices.shape[-1] if indices.ndim else 1
    rows = indices.reshape(-1, depth)
    columns = []
    for d in range(depth):
        n = data.shape[d]
        columns.append(valid_indices(name, rows[:, d], 0, n,
                                     f"dim {d} of the data is {n}: indices must be in "
                                     f"[0, {n})"))
    return tuple(columns)


def _scatter_nd_shapes(data: np.ndarray, indices: np.ndarray, updates: np.ndarray,
                       names: tuple[str, str, str]) -> None:
    """updates' shape is indices' less its last dimension, followed by data's dimensions past
    the indices' depth (TensorFlow's scatter_nd_update rule, ops-nn index/scatter_nd_update/
    docs/aclnnScatterNdUpdate.md)."""
    first, second, third = names
    if indices.ndim < 1:
        raise ValueError(f"{second} must have at least one dimension")
    if indices.dtype not in (np.int32, np.int64):
        raise ValueError(f"{second} has dtype {indices.dtype.name}: it must be int32 or int64")
    depth = indices.shape[-1]
    if depth > data.ndim:
        raise ValueError(f"{second}'s last dimension is {depth}: it must be at most {first}'s "
                         f"rank {data.ndim}")
    expected = indices.shape[:-1] + data.shape[depth:]
    if updates.shape != expected:
        raise ValueError(f"{third} has shape {updates.shape}: it must be {expected} ({second}'s "
                         f"shape less its last dimension, then {first}'s past {depth})")
    if updates.dtype != data.dtype:
        raise ValueError(f"{third} has dtype {updates.dtype.name}: it must be {first}'s "
                         f"{data.dtype.name}")


def _scatter_nd_check(data: np.ndarray, indices: np.ndarray, updates: np.ndarray,
                      out: np.ndarray) -> None:
    _max_dims(data=data, indices=indices, updates=updates)
    _scatter_nd_shapes(data, indices, updates, ("data", "indices", "updates"))
    if out.shape != data.shape or out.dtype != data.dtype:
        raise ValueError(f"out is {out.dtype.name} of shape {out.shape}: it must be data's "
                         f"{data.dtype.name} of shape {data.shape}")


@builtin("aclnnScatterNd", dtypes=ANY, check=_scatter_nd_check)
def scatter_nd(data: np.ndarray, indices: np.ndarray, updates: np.ndarray, out: np.ndarray
               ) -> None:
    """out = data, then out[indices[i]] = updates[i] (the rows of indices' last dimension)."""
    result = np.array(data)
    if updates.size:
        key = _nd_positions(data, indices, "indices")
        result[key] = updates.reshape((-1,) + data.shape[indices.shape[-1]:])
    store(out, result)


def _scatter_nd_update_check(varRef: np.ndarray, indices: np.ndarray, updates: np.ndarray
                             ) -> None:
    _max_dims(varRef=varRef, indices=indices, updates=updates)
    if varRef.size == 0 or indices.size == 0:  # nothing to update (its UT case_2)
        return
    _scatter_nd_shapes(varRef, indices, updates, ("varRef", "indices", "updates"))


@builtin("aclnnScatterNdUpdate", dtypes=ANY, check=_scatter_nd_update_check)
def scatter_nd_update(varRef: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> None:
    """varRef[indices[i]] = updates[i]."""
    if updates.size:
        key = _nd_positions(varRef, indices, "indices")
        varRef[key] = updates.reshape((-1,) + varRef.shape[indices.shape[-1]:])


def _tf_scatter_add_check(varRef: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> None:
    """ops-nn index/tf_scatter_add/docs/aclnnTfScatterAdd.md: indices int32 or int64; updates
    of varRef's dtype, its shape indices' followed by varRef's but the first."""
    _max_dims(varRef=varRef, updates=updates)
    _index_dtype(indices)
    if indices.dtype not in (np.int32, np.int64):
        raise ValueError(f"indices has dtype {indices.dtype.name}: it must be int32 or int64")
    if updates.dtype != varRef.dtype:
        raise ValueError(f"updates has dtype {updates.dtype.name}: it must be varRef's "
                         f"{varRef.dtype.name}")
    expected = indices.shape + varRef.shape[1:]
    if updates.shape != expected:
        raise ValueError(f"updates has shape {updates.shape}: it must be {expected} (indices' "
                         "shape, then varRef's but the first)")


@builtin("aclnnTfScatterAdd", dtypes=ANY, check=_tf_scatter_add_check)
def tf_scatter_add(varRef: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> None:
    """varRef[indices[i]] += updates[i] along varRef's first dimension."""
    if updates.size == 0 or varRef.size == 0:
        return
    n = varRef.shape[0]
    rows = valid_indices("indices", indices.reshape(-1), 0, n,
                         f"varRef's first dimension is {n}: indices must be in [0, {n})")
    added = widen(updates).reshape((-1,) + varRef.shape[1:])
    if widen(varRef[:0]).dtype == varRef.dtype:  # no rounding: added into varRef itself
        add_rows(varRef, rows, added.astype(varRef.dtype, copy=False))
        return
    result = widen(varRef).copy()
    add_rows(result, rows, added.astype(result.dtype))
    store(varRef, result)


def _inplace_put_check(selfRef: np.ndarray, index: np.ndarray, source: np.ndarray,
                       accumulate: bool) -> None:
    """ops-nn index/scatter_nd_update/docs/aclnnInplacePut.md: index int32 or int64 with as many
    elements as source; source of selfRef's dtype."""
    _max_dims(selfRef=selfRef, index=index, source=source)
    if index.dtype not in (np.int32, np.int64):
        raise ValueError(f"index has dtype {index.dtype.name}: it must be int32 or int64")
    if source.dtype != selfRef.dtype:
        raise ValueError(f"source has dtype {source.dtype.name}: it must be selfRef's "
                         f"{selfRef.dtype.name}")
    if index.size != source.size:
        raise ValueError(f"index has {index.size} elements and source {source.size}: they must "
                         "have as many")
    if selfRef.size == 0 and index.size:  # ops-nn index/scatter_nd_update/op_api/aclnn_put.cpp
        raise ValueError("selfRef is empty and index is not: nothing can be put into selfRef")


@builtin("aclnnInplacePut", dtypes=ANY, check=_inplace_put_check)
def inplace_put(selfRef: np.ndarray, index: np.ndarray, source: np.ndarray, accumulate: bool
                ) -> None:
    """selfRef's flat elements at index = source (accumulate: += source); a negative index
    counts from the end."""
    if index.size == 0 or selfRef.size == 0:
        return
    n = selfRef.size
    flat = valid_indices("index", index.reshape(-1), -n, n,
                         f"selfRef has {n} elements: index must be in [-{n}, {n})") % n
    result = widen(selfRef).reshape(-1).copy()
    values = widen(source).reshape(-1).astype(result.dtype)
    if accumulate:
        np.add.at(result, flat, values)
    else:
        result[flat] = values
    store(selfRef, result.reshape(selfRef.shape))


def _gather_v3_check(self: np.ndarray, dim: int, index: np.ndarray, batchDims: int, mode: int,
                     out: np.ndarray) -> None:
    """ops-nn index/gather_v2/docs/aclnnGatherV3.md: index int32 or int64; on the Atlas A2 dim 0
    and batchDims 0 only; out is self's shape with dim replaced by index's."""
    if index.dtype not in (np.int32, np.int64):
        raise ValueError(f"index has dtype {index.dtype.name}: it must be int32 or int64")
    _dim_in_range(self.ndim, dim)
    if batchDims != 0:
        raise ValueError(f"batchDims is {batchDims}: this SoC takes only 0")
    check_output_shapes("aclnnGatherV3", {"self": self, "dim": dim, "index": index,
                                          "batchDims": batchDims}, {"out": out})


@builtin("aclnnGatherV3", dtypes=ANY, check=_gather_v3_check)
def gather_v3(self: np.ndarray, dim: int, index: np.ndarray, batchDims: int, mode: int,
              out: np.ndarray) -> None:
    """out = self's slices along dim at index (mode picks CANN's kernel, not the result)."""
    if out.size == 0:
        return
    axis = _axis(self.ndim, dim)
    n = (self.shape or (1,))[axis]
    values = valid_indices("index", index, 0, n,
                           f"dim {dim} of self is {n}, and CANN's doc (ops-nn index/gather_v2/"
                           f"docs/aclnnGatherV3.md) takes indices in [0, {n})")
    store(out, np.take(self.reshape(self.shape or (1,)), values, axis=axis).reshape(out.shape))


# ---- masked scatter -------------------------------------------------------------------------


def _masked_scatter_check(selfRef: np.ndarray, mask: np.ndarray, source: np.ndarray) -> None:
    """ops-nn index/masked_scatter/op_api/aclnn_masked_scatter.cpp: mask bool (or uint8),
    broadcast to selfRef's shape; source of selfRef's dtype; each at most 8 dimensions."""
    _max_dims(selfRef=selfRef, mask=mask, source=source)
    try:
        shape = np.broadcast_shapes(selfRef.shape, mask.shape)
    except ValueError:
        shape = None
    if shape != selfRef.shape:
        raise ValueError(f"mask has shape {mask.shape}: it must broadcast to selfRef's "
                         f"{selfRef.shape}")
    if source.dtype != selfRef.dtype:
        raise ValueError(f"source has dtype {source.dtype.name}: it must be selfRef's "
                         f"{selfRef.dtype.name}")


@builtin("aclnnInplaceMaskedScatter", dtypes={"selfRef": ANY, "source": ANY},
         check=_masked_scatter_check)
def inplace_masked_scatter(selfRef: np.ndarray, mask: np.ndarray, source: np.ndarray) -> None:
    """selfRef's elements where mask is true, in C order, take source's first elements."""
    flags = np.broadcast_to(mask.astype(bool), selfRef.shape)
    count = int(flags.sum())
    if count == 0:
        return
    if count > source.size:
        raise Refusal(f"mask selects {count} elements but source holds {source.size}: it must "
                      "hold at least as many")
    selfRef[flags] = source.reshape(-1)[:count]


# ---- repeat_interleave ----------------------------------------------------------------------

_REPEATS_RULE = "ops-nn index/repeat_interleave/op_api/aclnn_repeat_interleave.cpp"


def _repeat_counts(repeats: Any, length: int) -> np.ndarray:
    counts = np.asarray(repeats).astype(np.int64).reshape(-1)
    if counts.size and counts.min() < 0:
        raise Refusal(f"repeats holds {int(counts.min())}: repeats cannot be negative")
    if counts.size == 1:
        counts = np.full(length, counts[0], np.int64)
    return counts


def _repeats_tensor_check(self: np.ndarray, repeats: np.ndarray, dim: int | None,
                          outputSize: int, out: np.ndarray) -> None:
    """aclnn_repeat_interleave.cpp CheckParams / CheckParamsDim: repeats int32 or int64 of at
    most one dimension; out of self's dtype; dim in [-r, r), none for a 0-d self; a 1-d
    repeats of one element or as many as self's elements (its extent along dim); self at most
    8 dimensions; without dim, an empty self takes only an empty or one-element repeats. An
    empty self or outputSize 0 is then done; else an empty repeats is refused, and out has the
    result's shape: self flattened to outputSize elements (with dim: dim's extent
    outputSize)."""
    if repeats.dtype not in (np.int32, np.int64):
        raise ValueError(f"repeats has dtype {repeats.dtype.name}: it must be int32 or int64")
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be self's {self.dtype.name}")
    if repeats.ndim > 1:
        raise ValueError(f"repeats has {repeats.ndim} dimensions: it must have at most one")
    if dim is None:
        length = self.size
    else:
        if self.ndim == 0:
            raise ValueError(f"dim {dim} is given but self has no dimensions")
        length = self.shape[_dim_in_range(self.ndim, dim)]
    if repeats.ndim == 1 and repeats.shape[0] not in (1, length):
        raise ValueError(f"repeats has {repeats.shape[0]} elements: it must have 1 or {length}")
    _max_dims(self=self)
    if dim is None and self.size == 0 and repeats.size > 1:
        raise ValueError(f"self is empty: repeats must be empty or hold one element, not "
                         f"shape {repeats.shape}")
    if self.size == 0 or outputSize == 0:
        return
    if repeats.size == 0:
        raise ValueError("repeats is empty: it must have as many elements as self along dim")
    _repeat_out_shape(self, repeats, dim, outputSize, out)


def _repeat_out_shape(self: np.ndarray, repeats: np.ndarray, dim: int | None, outputSize: int,
                      out: np.ndarray) -> None:
    """CheckRepeatresOutShape: out of the result's shape (when outputSize gives it), the
    output rule of aclnnRepeatInterleave (aclnnRepeatInterleaveWithDim with a dim)."""
    if outputSize <= 0:
        return
    operator = "aclnnRepeatInterleave" if dim is None else "aclnnRepeatInterleaveWithDim"
    check_output_shapes(operator, {"self": self, "repeats": repeats, "dim": dim,
                                   "outputSize": outputSize}, {"out": out}, "the result's is")


def _repeat_interleave_into(self: np.ndarray, counts: np.ndarray, dim: int | None,
                            out: np.ndarray) -> None:
    if dim is None:
        source = self.reshape(-1)
        axis = 0
    else:
        source = self
        axis = _axis(self.ndim, dim)
    if source.size == 0:
        return
    length = source.shape[axis]
    if counts.size == 1 or counts.size != length:
        counts = np.full(length, counts.reshape(-1)[0] if counts.size else 0, np.int64)
    result = np.repeat(source, counts, axis=axis)
    if result.size != out.size:
        raise Refusal(f"the result has {result.size} elements ({result.shape}) but out "
                      f"{out.size} ({out.shape}): out must have the result's shape")
    store(out, result.reshape(out.shape))


def _repeat_interleave_check(self: np.ndarray, repeats: np.ndarray, outputSize: int,
                             out: np.ndarray) -> None:
    _repeats_tensor_check(self, repeats, None, outputSize, out)


@builtin("aclnnRepeatInterleave", dtypes={"self": ANY}, check=_repeat_interleave_check)
def repeat_interleave(self: np.ndarray, repeats: np.ndarray, outputSize: int, out: np.ndarray
                      ) -> None:
    """self flattened, each element repeated repeats[i] times (one repeats for all)."""
    _repeat_interleave_into(self, _repeat_counts(repeats, self.size), None, out)


def _repeat_interleave_with_dim_check(self: np.ndarray, repeats: np.ndarray, dim: int,
                                      outputSize: int, out: np.ndarray) -> None:
    _repeats_tensor_check(self, repeats, dim, outputSize, out)


@builtin("aclnnRepeatInterleaveWithDim", dtypes={"self": ANY},
         check=_repeat_interleave_with_dim_check)
def repeat_interleave_with_dim(self: np.ndarray, repeats: np.ndarray, dim: int,
                               outputSize: int, out: np.ndarray) -> None:
    """self's slices along dim, each repeated repeats[i] times."""
    length = self.shape[_axis(self.ndim, dim)] if self.ndim else 1
    _repeat_interleave_into(self, _repeat_counts(repeats, length), dim, out)


def _repeats_int_check(self: np.ndarray, repeats: int, dim: int | None, out: np.ndarray) -> None:
    """aclnn_repeat_interleave.cpp CheckRepeatsValue: repeats not negative; the shape rules of
    the tensor form, and out of the result's shape."""
    _max_dims(self=self)
    if repeats < 0:
        raise ValueError(f"repeats is {repeats}: it cannot be negative")
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be self's {self.dtype.name}")
    if dim is not None:
        if self.ndim == 0:
            raise ValueError(f"dim {dim} is given but self has no dimensions")
        _dim_in_range(self.ndim, dim)
    operator = "aclnnRepeatInterleaveInt" if dim is None else "aclnnRepeatInterleaveIntWithDim"
    check_output_shapes(operator, {"self": self, "repeats": int(repeats), "dim": dim},
                        {"out": out}, "the result's is")


def _repeat_interleave_int_check(self: np.ndarray, repeats: int, outputSize: int,
                                 out: np.ndarray) -> None:
    _repeats_int_check(self, repeats, None, out)


@builtin("aclnnRepeatInterleaveInt", dtypes={"self": ANY}, check=_repeat_interleave_int_check)
def repeat_interleave_int(self: np.ndarray, repeats: int, outputSize: int, out: np.ndarray
                          ) -> None:
    """self flattened, each element repeated repeats times."""
    _repeat_interleave_into(self, np.array([repeats], np.int64), None, out)


def _repeat_interleave_int_with_dim_check(self: np.ndarray, repeats: int, dim: int,
                                          outputSize: int, out: np.ndarray) -> None:
    _repeats_int_check(self, repeats, dim, out)


@builtin("aclnnRepeatInterleaveIntWithDim", dtypes={"self": ANY},
         check=_repeat_interleave_int_with_dim_check)
def repeat_interleave_int_with_dim(self: np.ndarray, repeats: int, dim: int, outputSize: int,
                                   out: np.ndarray) -> None:
    """self's slices along dim, each repeated repeats times."""
    _repeat_interleave_into(self, np.array([repeats], np.int64), dim, out)


def _repeat_interleave_tensor_check(repeats: np.ndarray, outputSize: int, out: np.ndarray
                                    ) -> None:
    """aclnn_repeat_interleave.cpp: repeats int32 or int64 of at most one dimension; out of its
    dtype."""
    if repeats.dtype not in (np.int32, np.int64):
        raise ValueError(f"repeats has dtype {repeats.dtype.name}: it must be int32 or int64")
    if repeats.ndim > 1:
        raise ValueError(f"repeats has {repeats.ndim} dimensions: it must have at most one")


@builtin("aclnnRepeatInterleaveTensor", check=_repeat_interleave_tensor_check)
def repeat_interleave_tensor(repeats: np.ndarray, outputSize: int, out: np.ndarray) -> None:
    """i repeated repeats[i] times, for each i: PyTorch's ``repeat_interleave(repeats)``."""
    counts = _repeat_counts(repeats, 1)
    result = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    if result.size != out.size:
        raise Refusal(f"the result has {result.size} elements but out {out.size}: out must "
                      "have the result's shape")
    store(out, result.reshape(out.shape))


def _repeat_interleave_grad_check(yGrad: np.ndarray, repeats: np.ndarray, axis: int,
                                  out: np.ndarray) -> None:
    """ops-nn index/repeat_interleave_grad/docs/aclnnRepeatInterleaveGrad.md: repeats int32 or
    int64 of at most one dimension; axis in [-r, r); out of yGrad's dtype."""
    _max_dims(yGrad=yGrad)
    if repeats.dtype not in (np.int32, np.int64):
        raise ValueError(f"repeats has dtype {repeats.dtype.name}: it must be int32 or int64")
    if repeats.ndim > 1:
        raise ValueError(f"repeats has {repeats.ndim} dimensions: it must have at most one")
    _dim_in_range(yGrad.ndim, axis, "axis")
    if out.dtype != yGrad.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be yGrad's "
                         f"{yGrad.dtype.name}")


@builtin("aclnnRepeatInterleaveGrad", dtypes={"yGrad": FLOATS64},
         check=_repeat_interleave_grad_check)
def repeat_interleave_grad(yGrad: np.ndarray, repeats: np.ndarray, axis: int, out: np.ndarray
                           ) -> None:
    """yGrad summed along axis over consecutive runs of repeats[i] (one repeats: runs of that
    length)."""
    where = _axis(yGrad.ndim, axis)
    source = widen(yGrad).reshape(yGrad.shape or (1,))
    counts = np.asarray(repeats).astype(np.int64).reshape(-1)
    length = source.shape[where]
    if counts.size == 1:
        step = int(counts[0])
        counts = np.full(length // step if step else 0, step, np.int64)
    if int(counts.sum()) != length:
        raise Refusal(f"repeats sums to {int(counts.sum())} but yGrad's extent along axis "
                      f"{axis} is {length}: they must be equal")
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp)
    if source.size == 0 or counts.size == 0:
        result = np.zeros(source.shape[:where] + (counts.size,) + source.shape[where + 1:],
                          source.dtype)
    elif (counts == counts[0]).all():  # runs of one length: a reshape and a sum
        shape = source.shape[:where] + (counts.size, int(counts[0])) + source.shape[where + 1:]
        result = source.reshape(shape).sum(axis=where + 1)
    else:  # reduceat along the last (contiguous) axis: fast, unlike along another
        last = np.ascontiguousarray(np.moveaxis(source, where, -1))
        result = np.moveaxis(np.add.reduceat(last, starts, axis=-1), -1, where)
        empty = counts == 0  # reduceat gives the next element for an empty run
        if empty.any():
            positions: list[Any] = [slice(None)] * source.ndim
            positions[where] = np.nonzero(empty)[0]
            result[tuple(positions)] = 0
    store(out, result.reshape(out.shape))


# ---- embeddings -----------------------------------------------------------------------------


def _embedding_dense_backward_check(grad: np.ndarray, indices: np.ndarray, numWeights: int,
                                    paddingIdx: int, scaleGradByFreq: bool,
                                    out: np.ndarray) -> None:
    """ops-nn index/embedding_dense_grad_v2/docs/aclnnEmbeddingDenseBackward.md: out is
    (numWeights, grad's last extent) of float32, float16 or bfloat16; ops-nn index/
    embedding_dense_grad_v2/op_api/aclnn_embedding_dense_backward.cpp CheckDimension (grad's
    leading extents hold as many elements as indices, unless grad's last extent is 0) and
    CheckFormat (no private format)."""
    _nd_formats(grad=grad, indices=indices, out=out)
    if out.dtype.name not in ("float32", "float16", "bfloat16"):
        raise ValueError(f"out has dtype {out.dtype.name}: it must be float32, float16 or "
                         "bfloat16")
    if grad.ndim and grad.shape[-1] != 0 and int(np.prod(grad.shape[:-1])) != indices.size:
        raise ValueError(f"grad has shape {grad.shape} and indices {indices.shape}: grad's "
                         "leading extents must hold as many elements as indices")
    expected = (numWeights, grad.shape[-1] if grad.ndim else 1)
    if out.shape != expected:
        raise ValueError(f"out has shape {out.shape}: it must be {expected} (numWeights, then "
                         "grad's last extent)")


@builtin("aclnnEmbeddingDenseBackward", dtypes={"grad": FLOATS64},
         check=_embedding_dense_backward_check)
def embedding_dense_backward(grad: np.ndarray, indices: np.ndarray, numWeights: int,
                             paddingIdx: int, scaleGradByFreq: bool, out: np.ndarray) -> None:
    """out[w] = sum of grad's rows whose index is w (none for paddingIdx), each divided by
    w's count when scaleGradByFreq."""
    width = out.shape[1] if out.ndim == 2 else 1
    rows = valid_indices("indices", indices.reshape(-1), 0, numWeights,
                         f"numWeights is {numWeights}: CANN's doc takes indices in "
                         f"[0, {numWeights})")
    dtype = np.float64 if grad.dtype == np.float64 else np.float32
    values = grad.reshape(-1, width).astype(dtype)
    if paddingIdx < numWeights:
        keep = rows != paddingIdx
        rows, values = rows[keep], values[keep]
    if scaleGradByFreq and rows.size:
        counts = np.bincount(rows, minlength=numWeights)
        values = values / counts[rows, None].astype(dtype)
    result = np.zeros((numWeights, width), dtype)
    add_rows(result, rows, values)
    store(out, result.reshape(out.shape))


def _embedding_bag_check(weight: np.ndarray, indices: np.ndarray, offsets: np.ndarray,
                         scaleGradByFreq: bool, mode: int, sparse: bool,
                         perSampleWeights: Any, includeLastOffset: bool, paddingIdx: int,
                         output: np.ndarray, offset2bag: np.ndarray, bagSize: np.ndarray,
                         maxIndices: np.ndarray) -> None:
    """ops-nn index/embedding_bag/op_api/aclnn_embedding_bag.cpp CheckShape (the Atlas A2's
    branch): perSampleWeights only with mode 0 (sum), of as many elements as indices; output
    (bags, weight's columns), bags offsets' length less one with includeLastOffset;
    offset2bag empty or of indices' size; bagSize of the bags' count; maxIndices output's
    shape in max mode, else of the bags' count; perSampleWeights and output of weight's
    dtype."""
    for name, value in (("perSampleWeights", perSampleWeights), ("output", output)):
        if value is not None and value.dtype != weight.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be weight's "
                             f"{weight.dtype.name}")
    if mode != 0 and perSampleWeights is not None:
        raise ValueError("perSampleWeights is given only with mode 0 (sum)")
    if perSampleWeights is not None and perSampleWeights.size != indices.size:
        raise ValueError(f"perSampleWeights has {perSampleWeights.size} elements: it must have "
                         f"as many as indices ({indices.size})")
    bags = offsets.size - (1 if includeLastOffset else 0)
    columns = weight.shape[1] if weight.ndim == 2 else 1
    if output.shape != (bags, columns):
        raise ValueError(f"output has shape {output.shape}: it must be {(bags, columns)}")
    if offset2bag.size not in (0, indices.size):
        raise ValueError(f"offset2bag has {offset2bag.size} elements: it must have "
                         f"{indices.size} (or none)")
    length = offsets.shape[0] if offsets.ndim else 1
    if bagSize.size != length - (1 if includeLastOffset else 0):
        raise ValueError(f"bagSize has {bagSize.size} elements: it must have {bags}")
    if mode not in (0, 1):
        if maxIndices.shape != (bags, columns):
            raise ValueError(f"maxIndices has shape {maxIndices.shape}: it must be "
                             f"{(bags, columns)} in max mode")
    elif maxIndices.size != bags:
        raise ValueError(f"maxIndices has {maxIndices.size} elements: it must have {bags}")


@builtin("aclnnEmbeddingBag", dtypes={"weight": FLOATS64}, check=_embedding_bag_check)
def embedding_bag(weight: np.ndarray, indices: np.ndarray, offsets: np.ndarray,
                  scaleGradByFreq: bool, mode: int, sparse: bool, perSampleWeights: Any,
                  includeLastOffset: bool, paddingIdx: int, output: np.ndarray,
                  offset2bag: np.ndarray, bagSize: np.ndarray, maxIndices: np.ndarray) -> None:
    """output[b] = the sum (mode 0, each row times its perSampleWeights), mean (1) or maximum
    (others) of weight's rows indices[offsets[b]:offsets[b + 1]], rows at paddingIdx left out
    (an empty bag gives zeros); offset2bag the bag of each index, bagSize the rows each bag
    counts, maxIndices (max mode) the row each maximum came from, as PyTorch's
    ``_embedding_bag``."""
    if weight.size == 0 or indices.size == 0 or offsets.size == 0:
        return
    rows = weight.shape[0]
    picked = valid_indices("indices", indices.reshape(-1), 0, rows,
                           f"weight has {rows} rows: indices must be in [0, {rows})")
    starts = np.asarray(offsets).astype(np.int64).reshape(-1)
    bags = output.shape[0]
    starts = starts[:bags]
    if starts.size and (starts[0] != 0 or (np.diff(starts) < 0).any()
                        or starts[-1] > picked.size):
        raise Refusal(f"offsets {starts.tolist()} must start at 0 and rise to at most "
                      f"{picked.size}")
    bag_of = np.zeros(picked.size, np.int64)
    if starts.size > 1:
        np.add.at(bag_of, starts[1:][starts[1:] < picked.size], 1)
        bag_of = np.cumsum(bag_of)
    keep = picked != paddingIdx  # a negative paddingIdx: none (as PyTorch's aten operator)
    dtype = np.float64 if weight.dtype == np.float64 else np.float32
    table = weight.astype(dtype, copy=False)
    counts = np.bincount(bag_of[keep], minlength=bags)[:bags]
    columns = table.shape[1]
    # each bag's rows in passes, the k-th of every bag in pass k (no bag twice in a pass)
    kept = np.flatnonzero(keep)
    first = np.r_[0, np.cumsum(counts)[:-1]] if counts.size else counts
    rank = np.arange(kept.size) - np.repeat(first, counts)
    passes = [kept[rank == k] for k in range(int(counts.max()) if counts.size else 0)]
    if mode in (0, 1):
        scale = None if perSampleWeights is None or mode != 0 else \
            perSampleWeights.reshape(-1, 1).astype(dtype)
        sums = np.zeros((bags, columns), dtype)
        for chosen in passes:
            rows_ = table[picked[chosen]]
            sums[bag_of[chosen]] += rows_ if scale is None else rows_ * scale[chosen]
        if mode == 1:
            sums /= np.maximum(counts, 1)[:, None].astype(dtype)
        result = sums
        best = np.zeros(bags, np.int64)
    else:
        result = np.full((bags, columns), -np.inf, dtype)
        best = np.full((bags, columns), -1, np.int64)
        for chosen in passes:
            target = bag_of[chosen]
            rows_ = table[picked[chosen]]
            larger = rows_ > result[target]
            result[target] = np.where(larger, rows_, result[target])
            best[target] = np.where(larger, picked[chosen][:, None], best[target])
        result[counts == 0] = 0
        best[counts == 0] = 0
    store(output, result)
    if offset2bag.size:
        store(offset2bag, bag_of.reshape(offset2bag.shape))
    store(bagSize, counts.reshape(bagSize.shape))
    store(maxIndices, best.reshape(maxIndices.shape))


# ---- medians and k-th values ----------------------------------------------------------------


def _order_key(values: np.ndarray, axis: int) -> np.ndarray:
    """A stable ascending order along ``axis`` with NaN last (numpy's sort)."""
    return np.argsort(values, axis=axis, kind="stable")


def _median_check(self: np.ndarray, valuesOut: np.ndarray) -> None:
    """ops-nn index/gather_v2/docs/aclnnMedian.md: valuesOut of self's dtype, one element."""
    if valuesOut.dtype != self.dtype:
        raise ValueError(f"valuesOut has dtype {valuesOut.dtype.name}: it must be self's "
                         f"{self.dtype.name}")


def _global_median(self: np.ndarray, skip_nan: bool) -> Any:
    flat = self.reshape(-1)
    if flat.dtype.kind == "f" or flat.dtype.kind == "V" or flat.dtype == np.float16:
        wide = widen(flat)
        nans = np.isnan(wide)
        if nans.any():
            if not skip_nan:
                return np.float32("nan")
            wide = wide[~nans]
        flat = wide
    if flat.size == 0:
        return np.float32("nan")
    return np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2]


@builtin("aclnnMedian", dtypes=NUMBERS, check=_median_check)
def median(self: np.ndarray, valuesOut: np.ndarray) -> None:
    """The lower median of every element (NaN when self holds one), PyTorch's ``median()``."""
    if self.size:
        store(valuesOut, np.full(valuesOut.shape, _global_median(self, False)))


def _nan_median_check(self: np.ndarray, out: np.ndarray) -> None:
    _median_check(self, out)


@builtin("aclnnNanMedian", dtypes=NUMBERS, check=_nan_median_check)
def nan_median(self: np.ndarray, out: np.ndarray) -> None:
    """The lower median of the elements that are not NaN."""
    if self.size:
        store(out, np.full(out.shape, _global_median(self, True)))


def _dim_values_check(self: np.ndarray, dim: int, keepDim: bool, valuesOut: np.ndarray,
                      indicesOut: np.ndarray, k: int | None = None) -> None:
    """valuesOut of self's dtype, indicesOut int64; dim in [-r, r) ([-1, 0] for 0-d); both
    self's shape without dim (kept as 1 with keepDim); k in [1, extent] (kthvalue)."""
    _max_dims(self=self)
    axis = _dim_in_range(self.ndim, dim)
    if valuesOut.dtype != self.dtype:
        raise ValueError(f"valuesOut has dtype {valuesOut.dtype.name}: it must be self's "
                         f"{self.dtype.name}")
    if indicesOut.dtype != np.int64:
        raise ValueError(f"indicesOut has dtype {indicesOut.dtype.name}: it must be int64")
    shape = self.shape
    if self.size == 0:  # CANN's UT l2_kthvalue_test_nullptr_self: an empty self is not judged
        return
    expected = shape[:axis] + ((1,) if keepDim else ()) + shape[axis + 1:] if shape else ()
    for name, value in (("valuesOut", valuesOut), ("indicesOut", indicesOut)):
        if value.shape != expected:
            raise ValueError(f"{name} has shape {value.shape}: it must be {expected}")
    if k is not None:
        extent = shape[axis] if shape else 1
        if not 1 <= k <= max(extent, 1):
            raise ValueError(f"k is {k}: it must be in [1, {extent}] (self's extent along dim "
                             f"{dim})")


def _select_along(self: np.ndarray, dim: int, keepDim: bool, valuesOut: np.ndarray,
                  indicesOut: np.ndarray, rank: Any) -> None:
    """valuesOut/indicesOut = the element of ascending ``rank(count)`` (NaN largest) along dim,
    rank counted among the non-NaN ones when it says so."""
    if self.size == 0:
        return
    axis = _axis(self.ndim, dim)
    source = widen(self).reshape(self.shape or (1,))
    moved = np.moveaxis(source, axis, -1)
    order = _order_key(moved, -1)
    ranks = rank(moved)
    picked = np.take_along_axis(order, ranks[..., None], axis=-1)
    values = np.take_along_axis(moved, picked, axis=-1)[..., 0]
    indices = picked[..., 0]
    store(valuesOut, values.reshape(valuesOut.shape))
    store(indicesOut, indices.reshape(indicesOut.shape))


def _median_rank(skip_nan: bool) -> Any:
    def rank(moved: np.ndarray) -> np.ndarray:
        n = moved.shape[-1]
        if moved.dtype.kind != "f":
            return np.full(moved.shape[:-1], (n - 1) // 2, np.int64)
        nans = np.isnan(moved).sum(axis=-1)
        if skip_nan:
            valid = n - nans
            return np.where(valid > 0, (np.maximum(valid, 1) - 1) // 2, 0).astype(np.int64)
        # a row holding NaN gives NaN: its first NaN (NaN sorts last)
        picked: np.ndarray = np.where(nans > 0, n - nans, (n - 1) // 2).astype(np.int64)
        return picked
    return rank


def _median_dim_check(self: np.ndarray, dim: int, keepDim: bool, valuesOut: np.ndarray,
                      indicesOut: np.ndarray) -> None:
    """ops-nn index/gather_v2/docs/aclnnMedianDim.md."""
    _dim_values_check(self, dim, keepDim, valuesOut, indicesOut)


@builtin("aclnnMedianDim", dtypes=NUMBERS, check=_median_dim_check)
def median_dim(self: np.ndarray, dim: int, keepDim: bool, valuesOut: np.ndarray,
               indicesOut: np.ndarray) -> None:
    """The lower median along dim and its index (NaN, and its index, where a row holds one)."""
    _select_along(self, dim, keepDim, valuesOut, indicesOut, _median_rank(False))


def _nan_median_dim_check(self: np.ndarray, dim: int, keepDim: bool, valuesOut: np.ndarray,
                          indicesOut: np.ndarray) -> None:
    """ops-nn index/gather_v2/docs/aclnnNanMedianDim.md."""
    _dim_values_check(self, dim, keepDim, valuesOut, indicesOut)


@builtin("aclnnNanMedianDim", dtypes=NUMBERS, check=_nan_median_dim_check)
def nan_median_dim(self: np.ndarray, dim: int, keepDim: bool, valuesOut: np.ndarray,
                   indicesOut: np.ndarray) -> None:
    """The lower median along dim of the elements that are not NaN, and its index."""
    _select_along(self, dim, keepDim, valuesOut, indicesOut, _median_rank(True))


def _kthvalue_check(self: np.ndarray, k: int, dim: int, keepdim: bool, valuesOut: np.ndarray,
                    indicesOut: np.ndarray) -> None:
    """ops-nn index/gather_v2/docs/aclnnKthvalue.md."""
    _dim_values_check(self, dim, keepdim, valuesOut, indicesOut, k)


@builtin("aclnnKthvalue", dtypes=NUMBERS, check=_kthvalue_check)
def kthvalue(self: np.ndarray, k: int, dim: int, keepdim: bool, valuesOut: np.ndarray,
             indicesOut: np.ndarray) -> None:
    """The k-th smallest element along dim (NaN largest) and its index."""
    _select_along(self, dim, keepdim, valuesOut, indicesOut,
                  lambda moved: np.full(moved.shape[:-1], k - 1, np.int64))


# ---- outputs whose size depends on the data ------------------------------------------------


def _nonzero_check(self: np.ndarray, out: np.ndarray) -> None:
    """ops-nn index/non_zero/docs/aclnnNonzero.md: out int64 of two dimensions, (self's
    elements, self's rank) at most (the most the data can give)."""
    _max_dims(self=self)
    if out.dtype != np.int64:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be int64")
    if out.ndim != 2:
        raise ValueError(f"out has {out.ndim} dimensions: it must have 2")


@builtin("aclnnNonzero", dtypes=ANY, check=_nonzero_check)
def nonzero(self: np.ndarray, out: np.ndarray) -> None:
    """The coordinates of self's non-zero elements, one row each, in C order."""
    found = np.argwhere(self.reshape(self.shape) if self.ndim else self.reshape(1)) \
        if self.ndim else np.zeros((int(bool(self.reshape(-1)[0])) if self.size else 0, 0),
                                   np.int64)
    rows = found.shape[0]
    width = max(self.ndim, 0)
    if rows * width > out.size:
        raise Refusal(f"self has {rows} non-zero elements: out ({out.shape}) cannot hold them")
    store(out.reshape(-1)[:rows * width], found.reshape(-1))
    report_extent(out, (rows, width))


def _nonzero_v2_check(self: np.ndarray, out: np.ndarray) -> None:
    """ops-nn index/non_zero/docs/aclnnNonzeroV2.md: as aclnnNonzero, out (rank, count)."""
    _nonzero_check(self, out)


@builtin("aclnnNonzeroV2", dtypes=ANY, check=_nonzero_v2_check)
def nonzero_v2(self: np.ndarray, out: np.ndarray) -> None:
    """The coordinates of self's non-zero elements, one column each."""
    found = np.argwhere(self) if self.ndim else np.zeros((0, 0), np.int64)
    rows = found.shape[0]
    width = self.ndim
    if rows * width > out.size:
        raise Refusal(f"self has {rows} non-zero elements: out ({out.shape}) cannot hold them")
    store(out.reshape(-1)[:rows * width], found.T.reshape(-1))
    report_extent(out, (width, rows))


def _unique_check(self: np.ndarray, sorted: bool, returnInverse: bool,  # noqa: A002
                  valueOut: np.ndarray, inverseOut: Any) -> None:
    """ops-nn index/unique_consecutive/docs/aclnnUnique.md: valueOut of self's dtype and at
    least self's elements; inverseOut int64 of self's shape."""
    if valueOut.dtype != self.dtype:
        raise ValueError(f"valueOut has dtype {valueOut.dtype.name}: it must be self's "
                         f"{self.dtype.name}")
    _max_dims(self=self)
    if inverseOut is not None and returnInverse and inverseOut.dtype != np.int64:
        raise ValueError(f"inverseOut has dtype {inverseOut.dtype.name}: it must be int64")
    if inverseOut is not None and returnInverse and inverseOut.shape != self.shape:
        raise ValueError(f"inverseOut has shape {inverseOut.shape}: it must be self's "
                         f"{self.shape} (ops-nn index/unique_consecutive/op_api/aclnn_unique.cpp "
                         "CheckShapeValid)")


def _unique_flat(self: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values, inverse, counts = np.unique(self.reshape(-1), return_inverse=True,
                                        return_counts=True, equal_nan=False)
    return values, inverse.reshape(-1), counts


@builtin("aclnnUnique", dtypes=ANY, check=_unique_check)
def unique(self: np.ndarray, sorted: bool, returnInverse: bool,  # noqa: A002
           valueOut: np.ndarray, inverseOut: Any) -> None:
    """self's distinct elements in ascending order, and where each element of self is among
    them."""
    values, inverse, _ = _unique_flat(self)
    store(valueOut.reshape(-1)[:values.size], values)
    report_extent(valueOut, (values.size,))
    if returnInverse and inverseOut is not None and inverseOut.size == self.size:
        store(inverseOut, inverse.reshape(inverseOut.shape))


FLATTENED = 1000  # aclnnUniqueConsecutive's dim for "no dimension" (its doc)


def _unique_consecutive_check(self: np.ndarray, returnInverse: bool, returnCounts: bool,
                              dim: int, valueOut: np.ndarray, inverseOut: Any,
                              countsOut: Any) -> None:
    """ops-nn index/unique_consecutive/docs/aclnnUniqueConsecutive.md: dim in [-r, r) or 1000
    (flattened); valueOut of self's dtype; inverseOut and countsOut int64."""
    _max_dims(self=self)
    if dim != FLATTENED:
        _dim_in_range(self.ndim, dim)
    if valueOut.dtype != self.dtype:
        raise ValueError(f"valueOut has dtype {valueOut.dtype.name}: it must be self's "
                         f"{self.dtype.name}")
    for name, value in (("inverseOut", inverseOut), ("countsOut", countsOut)):
        if value is not None and value.dtype != np.int64:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be int64")


def _runs(rows: np.ndarray) -> np.ndarray:
    """Whether each row (first axis) starts a run of equal rows."""
    if rows.shape[0] == 0:
        return np.zeros(0, bool)
    flat = rows.reshape(rows.shape[0], -1)
    starts = np.ones(rows.shape[0], bool)
    if flat.shape[1] == 1:
        np.not_equal(flat[1:, 0], flat[:-1, 0], out=starts[1:])
    else:
        starts[1:] = np.any(flat[1:] != flat[:-1], axis=1)
    return starts


@builtin("aclnnUniqueConsecutive", dtypes=ANY, check=_unique_consecutive_check)
def unique_consecutive(self: np.ndarray, returnInverse: bool, returnCounts: bool, dim: int,
                       valueOut: np.ndarray, inverseOut: Any, countsOut: Any) -> None:
    """self with each run of equal elements (slices along dim) kept once; the run of each
    element; each run's length."""
    if dim == FLATTENED or self.ndim == 0:
        moved = self.reshape(-1)
        axis = 0
    else:
        axis = _axis(self.ndim, dim)
        moved = np.moveaxis(self, axis, 0)
    starts = _runs(moved)
    first = np.flatnonzero(starts)
    kept = moved[first]
    inverse = np.cumsum(starts, dtype=np.int64) - 1 if returnInverse else first
    counts = np.diff(first, append=moved.shape[0])
    values = kept if dim == FLATTENED or self.ndim == 0 else np.moveaxis(kept, 0, axis)
    store(valueOut.reshape(-1)[:values.size], np.ascontiguousarray(values).reshape(-1))
    report_extent(valueOut, values.shape)
    if returnInverse and inverseOut is not None:
        store(inverseOut.reshape(-1)[:inverse.size], inverse)
        report_extent(inverseOut, self.shape if dim == FLATTENED else (moved.shape[0],))
    if returnCounts and countsOut is not None:
        store(countsOut.reshape(-1)[:counts.size], counts)
        report_extent(countsOut, (counts.size,))


def _unique_dim_check(self: np.ndarray, sorted: bool, returnInverse: bool,  # noqa: A002
                      dim: int, valueOut: np.ndarray, inverseOut: Any, countsOut: Any) -> None:
    """ops-nn index/unique_with_counts_ext2/docs/aclnnUniqueDim.md: dim in [-r, r); valueOut
    of self's dtype; inverseOut and countsOut int64."""
    _unique_consecutive_check(self, returnInverse, True, dim, valueOut, inverseOut, countsOut)


@builtin("aclnnUniqueDim", dtypes=ANY, check=_unique_dim_check)
def unique_dim(self: np.ndarray, sorted: bool, returnInverse: bool,  # noqa: A002
               dim: int, valueOut: np.ndarray, inverseOut: Any, countsOut: Any) -> None:
    """self's distinct slices along dim in ascending (lexicographic) order, the slice each of
    self's is, and how many times each occurs."""
    axis = _axis(self.ndim, dim)
    moved: np.ndarray = np.moveaxis(self.reshape(self.shape or (1,)), axis, 0)
    flat: np.ndarray = moved.reshape(moved.shape[0], -1)
    if flat.shape[0]:
        found: Any = np.unique(flat, axis=0, return_inverse=True, return_counts=True)
        values, inverse, counts = found
    else:
        values = flat
        inverse = counts = np.zeros(0, np.int64)
    kept = np.moveaxis(values.reshape((-1,) + moved.shape[1:]), 0, axis)
    store(valueOut.reshape(-1)[:kept.size], np.ascontiguousarray(kept).reshape(-1))
    report_extent(valueOut, kept.shape)
    if inverseOut is not None:
        store(inverseOut.reshape(-1)[:inverse.size], inverse.reshape(-1))
        report_extent(inverseOut, (inverse.size,))
    if countsOut is not None:
        store(countsOut.reshape(-1)[:counts.size], counts)
        report_extent(countsOut, (counts.size,))


# ---- in-place forms -------------------------------------------------------------------------

INPLACE_OF = {"aclnnInplaceIndexFill": "aclnnIndexFill",
              "aclnnInplaceIndexFillTensor": "aclnnIndexFillTensor",
              "aclnnInplaceScatter": "aclnnScatter",
              "aclnnInplaceScatterValue": "aclnnScatterValue",
              "aclnnInplaceScatterReduce": "aclnnScatterReduce"}
for _name, _base in INPLACE_OF.items():
    _inplace_forms.inplace_form(_name, _base, elementwise=False)
