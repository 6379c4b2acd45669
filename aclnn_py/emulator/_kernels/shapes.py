"""Kernels that move elements: concatenation, stacking and splitting, gathering and scattering,
indexing, flips and rolls, permutations and broadcasts, triangles, sorting and top-k, ranges
and copies. No arithmetic: values are copied exactly (converted to the output's dtype where
it differs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.dtypes import Dtypes, is_bfloat16
from . import check_output_shapes, output_shapes, report_extent, store, widen
from .elementwise import ANY, NUMBERS
from .elementwise import register as builtin
from .nn import valid_indices

INDEX_DTYPES = Dtypes(("int32", "int64"))


def _axis(ndim: int, dim: int) -> int:
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise ValueError(f"dim {dim} is out of range for a tensor of {ndim} dimensions")
    return dim % size


def _section_sizes(length: int, sections: int) -> list[int]:
    """SplitTensor's pieces: sections each, the last what is left."""
    if sections >= length:
        return [length]
    count = -(-length // sections)
    return [sections] * (count - 1) + [length - sections * (count - 1)]


def _flat_index(shape: tuple[int, ...], axis: int, values: np.ndarray) -> Any:
    """The flat indices into a C-contiguous array of ``shape`` of the elements that index
    ``values`` picks along ``axis`` (the other coordinates its own): values times the axis's
    stride plus the other coordinates' offsets."""
    strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
    flat = values * strides[axis]
    for d, size in enumerate(values.shape):
        if d != axis and size > 1:
            offsets = [1] * values.ndim
            offsets[d] = size
            flat += (np.arange(size) * strides[d]).reshape(offsets)
    return flat


def _scatter_values(self: np.ndarray, dim: int, index: np.ndarray) -> Any:
    n = self.shape[_axis(self.ndim, dim)] if self.ndim else 1
    return valid_indices("index", index, 0, n,
                         f"dim {dim} of self is {n}, and CANN's doc takes indices in "
                         f"[0, {n - 1}]")



def _cat_check(tensors: list[np.ndarray], dim: int, out: np.ndarray) -> None:
    """ops-math conversion/concat_d/op_api/aclnn_cat.cpp (dtypes, promotion, formats and the
    first member's rank are phase-1 rules): 1-d empty members are left out (nothing left: no
    check at all); dim in [-r, r) of the first member's rank r (a 0-d member has no dim to
    concatenate along); every member of that rank and of its extents but along dim."""
    shaped = [t for t in tensors if not (t.ndim == 1 and t.size == 0)]
    if not shaped:
        return
    rank = shaped[0].ndim
    if not -rank <= dim < rank:
        raise ValueError(f"dim {dim} is out of range for tensors[0], which has {rank} "
                         f"dimensions: it must be in [{-rank}, {rank - 1}]")
    axis = dim % rank
    for t in shaped:
        if t.ndim != rank or any(a != b for i, (a, b) in
                                 enumerate(zip(t.shape, shaped[0].shape)) if i != axis):
            raise ValueError(f"tensors must match in every dimension but dim {dim}: got "
                             f"{[x.shape for x in shaped]}")
    check_output_shapes("aclnnCat", {"tensors": tensors, "dim": dim}, {"out": out},
                        "the concatenation is")


@builtin("aclnnCat", dtypes=ANY, check=_cat_check)
def cat(tensors: list[np.ndarray], dim: int, out: np.ndarray) -> None:
    shaped = [t for t in tensors if not (t.ndim == 1 and t.size == 0)]
    if shaped:
        store(out, np.concatenate(shaped, axis=_axis(shaped[0].ndim, dim)))


def _one_or_same(shape: tuple[int, ...], other: tuple[int, ...]) -> bool:
    """CANN's CheckShapeAndScalarSame (ops-math common/inc/op_api/aclnn_check.h): equal
    shapes, or one element each."""
    return shape == other or (int(np.prod(shape)) == 1 and int(np.prod(other)) == 1)


def _stack_check(tensors: list[np.ndarray], dim: int, out: np.ndarray) -> None:
    """ops-math conversion/pack/op_api/aclnn_stack.cpp CheckShape: every member of the first's
    shape, dim in [-(r + 1), r]; then (unless nothing is computed: one empty member, or every
    member empty) out of the stacked shape."""
    if not tensors:
        raise ValueError("tensors is empty: there is nothing to stack")
    first = tensors[0].shape
    rank = len(first)
    if not -(rank + 1) <= dim <= rank:
        raise ValueError(f"dim {dim} is out of range [{-(rank + 1)}, {rank}] for tensors of "
                         f"{rank} dimensions")
    for i, tensor in enumerate(tensors[1:], 1):
        if tensor.ndim != rank or tensor.shape != first:
            raise ValueError(f"tensors[{i}] has shape {tensor.shape}, tensors[0] {first}: "
                             "they must be equal")
    if tensors[0].size == 0:
        return
    expected = output_shapes("aclnnStack", tensors=tensors, dim=dim)["out"]
    if not _one_or_same(expected, out.shape):
        raise ValueError(f"out has shape {out.shape}, the stacked shape is {expected}")


@builtin("aclnnStack", dtypes=ANY, check=_stack_check)
def stack(tensors: list[np.ndarray], dim: int, out: np.ndarray) -> None:
    if tensors[0].size:
        store(out, np.stack(tensors, axis=dim % (tensors[0].ndim + 1)).reshape(out.shape))


def _split_check(self: np.ndarray, sizes: list[int], dim: int, out: list[np.ndarray]) -> None:
    """The pieces' shapes against out (ops-math conversion/split_v/op_api: SplitV's results
    against out's members, CheckShapeAndScalarSame); nothing computed when self is empty."""
    if self.size == 0:
        return
    axis = dim % self.ndim
    if len(sizes) > len(out):
        raise ValueError(f"out has {len(out)} tensors; the split gives {len(sizes)}")
    for index, size in enumerate(sizes):
        expected = self.shape[:axis] + (size,) + self.shape[axis + 1:]
        if not _one_or_same(expected, out[index].shape):
            raise ValueError(f"out[{index}] has shape {out[index].shape}, the piece "
                             f"{expected}")


def _split_tensor_check(self: np.ndarray, splitSections: int, dim: int,
                        out: list[np.ndarray]) -> None:
    """ops-math conversion/split_v/op_api/aclnn_split_tensor.cpp CheckShape (ranks, dim: the
    phase-1 rules): splitSections 0 only for an extent of 0 along dim, and not 0 for one."""
    extent = self.shape[dim % self.ndim]
    if extent != 0 and splitSections == 0:
        raise ValueError(f"splitSections is 0; it must be positive (dim {dim} has extent "
                         f"{extent})")
    if extent == 0 and splitSections != 0:
        raise ValueError(f"splitSections is {splitSections}; it must be 0 since dim {dim} has "
                         "extent 0")
    if extent in (0, splitSections):  # nothing computed, or out[0] takes self whole
        return
    count = -(-extent // splitSections)
    sizes = [splitSections] * count
    sizes[-1] = extent - splitSections * (count - 1)
    _split_check(self, sizes, dim, out)


@builtin("aclnnSplitTensor", dtypes=ANY, check=_split_tensor_check)
def split_tensor(self: np.ndarray, splitSections: int, dim: int, out: list[np.ndarray]) -> None:
    if self.size == 0:
        return
    axis = _axis(self.ndim, dim)
    start = 0
    for piece, size in zip(out, _section_sizes(self.shape[axis], splitSections)):
        store(piece, np.take(self, range(start, start + size), axis=axis).reshape(piece.shape))
        start += size


def _split_with_size_check(self: np.ndarray, splitSize: tuple[int, ...], dim: int,
                           out: list[np.ndarray]) -> None:
    """ops-math conversion/split_v/op_api/aclnn_split_with_size.cpp CheckShape (ranks, dim:
    the phase-1 rules): splitSize sums to the extent along dim, one out tensor per size."""
    extent = self.shape[dim % self.ndim]
    if sum(splitSize) != extent:
        raise ValueError(f"splitSize {list(splitSize)} sums to {sum(splitSize)}; it must sum to "
                         f"{extent}, the extent of dim {dim}")
    if len(splitSize) != len(out):
        raise ValueError(f"splitSize has {len(splitSize)} values and out {len(out)} tensors: "
                         "they must be as many")
    if len(splitSize) > 1:
        _split_check(self, list(splitSize), dim, out)


@builtin("aclnnSplitWithSize", dtypes=ANY, check=_split_with_size_check)
def split_with_size(self: np.ndarray, splitSize: tuple[int, ...], dim: int,
                    out: list[np.ndarray]) -> None:
    axis = _axis(self.ndim, dim)
    start = 0
    for piece, size in zip(out, splitSize):
        store(piece, np.take(self, range(start, start + size), axis=axis).reshape(piece.shape))
        start += size


def _index_check(self: np.ndarray, dim: int, index: np.ndarray, out: np.ndarray) -> None:
    """ops-nn index/gather_v2/op_api/aclnn_index_select.cpp CheckShape (dtypes, formats, ranks
    and dim: the phase-1 rules): a 0-d self gives a 0-d out; out is self with dim's extent
    the index's length (unless self or index is empty)."""
    if self.ndim == 0:
        if out.ndim != 0:
            raise ValueError(f"out has shape {out.shape}; a 0-d self gives a 0-d out")
        return
    if self.size and index.size:
        check_output_shapes("aclnnIndexSelect", {"self": self, "dim": dim, "index": index},
                            {"out": out})


def _index_dtype(index: np.ndarray) -> None:
    if index.size and index.dtype not in (np.int32, np.int64):
        raise ValueError(f"index has dtype {index.dtype.name}; it must be int32 or int64")


def _gather_check(self: np.ndarray, dim: int, index: np.ndarray, out: np.ndarray) -> None:
    """ops-nn index/gather_elements_v2/op_host/op_api/aclnn_gather.cpp (self's dtypes, ranks,
    out's shape and dim: the phase-1 rules): a non-empty index is int32 or int64; self and
    index of one rank (0-d counting as 1-d); a non-empty index no larger than self but along
    dim, where self's extent must not be 0."""
    _index_dtype(index)
    if max(self.ndim, 1) != max(index.ndim, 1):
        raise ValueError(f"index has {index.ndim} dimensions and self {self.ndim}: they must "
                         "have the same rank")
    if index.size == 0 or self.ndim == 0:
        return
    axis = dim % self.ndim
    for i, (extent, length) in enumerate(zip(self.shape, index.shape)):
        if i != axis and length > extent:
            raise ValueError(f"index has extent {length} in dimension {i}, more than self's "
                             f"{extent}")
        if i == axis and extent == 0:
            raise ValueError(f"self has extent 0 in dimension {dim}: there is nothing to gather")


@builtin("aclnnGather", dtypes=ANY, check=_gather_check)
def gather(self: np.ndarray, dim: int, index: np.ndarray, out: np.ndarray) -> None:
    if index.size:
        axis = _axis(self.ndim, dim)
        n = self.shape[axis] if self.ndim else 1
        values = valid_indices("index", index, -n, n,
                               f"dim {dim} of self is {n}, and CANN's doc (ops-nn index/"
                               "gather_elements_v2/docs/aclnnGather.md) takes indices in "
                               f"[-{n}, {n - 1}]")
        if values.min() < 0:
            values = values % n
        source = self.reshape(self.shape or (1,))
        taken = np.take_along_axis(source, values.reshape(index.shape or (1,)), axis=axis)
        store(out, taken.reshape(out.shape))


def _gather_v2_check(self: np.ndarray, dim: int, index: np.ndarray, out: np.ndarray) -> None:
    """ops-nn index/gather_v2/op_api/aclnn_gather_v2.cpp CheckOutShape (dtypes, ranks and dim:
    the phase-1 rules): out is self's shape with dim replaced by index's (a 0-d index counts
    as one element; a 0-d self gives a 0-d out)."""
    check_output_shapes("aclnnGatherV2", {"self": self, "dim": dim, "index": index},
                        {"out": out})


@builtin("aclnnGatherV2", dtypes=ANY, check=_gather_v2_check)
def gather_v2(self: np.ndarray, dim: int, index: np.ndarray, out: np.ndarray) -> None:
    if self.size and index.size:
        axis = _axis(self.ndim, dim)
        n = (self.shape or (1,))[axis]
        # The doc says [0, n), but the op_api (ops-nn index/gather_v2/op_api/
        # aclnn_gather_v2.cpp) runs l0op::GatherV2 with negativeIndexSupport = true: a
        # negative index counts from the end, as CANN's own sample of it does.
        values = valid_indices("index", index, -n, n,
                               f"dim {dim} of self is {n}, and aclnnGatherV2 takes indices "
                               f"in [-{n}, {n}) (negativeIndexSupport)")
        taken = np.take(self.reshape(self.shape or (1,)), values, axis=axis)
        store(out, taken.reshape(out.shape))


@builtin("aclnnIndexSelect", dtypes=ANY, check=_index_check)
def index_select(self: np.ndarray, dim: int, index: np.ndarray, out: np.ndarray) -> None:
    axis = _axis(self.ndim, dim)
    n = self.shape[axis] if self.ndim else 1
    values = valid_indices("index", index.reshape(-1), 0, n,
                           f"dim {dim} of self is {n}, and CANN's doc (ops-nn index/gather_v2/"
                           f"docs/aclnnIndexSelect.md) takes indices in [0, {n})")
    store(out, np.take(self, values, axis=axis))


def _take_check(self: np.ndarray, index: np.ndarray, out: np.ndarray) -> None:
    """ops-nn index/gather_v2/op_api/aclnn_take.cpp CheckShape (the rest: the phase-1 rules):
    an empty self takes only an empty index."""
    if self.size == 0 and index.size:
        raise ValueError(f"self is empty (shape {self.shape}) and index is not: there is "
                         "nothing to take")


@builtin("aclnnTake", dtypes=ANY, check=_take_check)
def take(self: np.ndarray, index: np.ndarray, out: np.ndarray) -> None:
    values = valid_indices("index", index, 0, self.size,
                           f"self has {self.size} elements, and CANN's doc (ops-nn index/"
                           "gather_v2/docs/aclnnTake.md) takes no negative index, indices in "
                           f"[0, {self.size})")
    store(out, np.take(self.reshape(-1), values))


def _scatter_into(result: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray,
                  reduce: int) -> None:
    axis = _axis(result.ndim, dim)
    grid: list[Any] = list(np.indices(index.shape, sparse=True))
    grid[axis] = index
    values = src[tuple(slice(0, n) for n in index.shape)]
    if reduce == 1 and result.flags.c_contiguous:
        # one flat add.at (numpy's fast path for 1-d indices), not one over index tuples
        flat = _flat_index(result.shape, axis, index)
        np.add.at(result.reshape(-1), flat.reshape(-1), np.ascontiguousarray(values).reshape(-1))
    elif reduce == 1:
        np.add.at(result, tuple(grid), values)
    elif reduce == 2:
        np.multiply.at(result, tuple(grid), values)
    else:
        result[tuple(grid)] = values


def _scatter_check(self: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray,
                   out: np.ndarray) -> None:
    """ops-nn index/scatter_elements_v2/op_api/aclnn_scatter.cpp, shared by aclnnScatter and
    aclnnScatterAdd (self's dtypes and src's and out's: the phase-1 rules): an empty index
    copies self (no more checks); otherwise index is int32 or int64 (CheckDtypeValid), self,
    index and src of one rank (CheckTensorDim), out of self's shape unless 0-d, index no
    larger than src, nor than self but along dim, self at most 8 dimensions (CheckShape), dim
    in [-r, r) (CheckDimRange)."""
    _index_dtype(index)
    if index.size == 0:
        return
    if not self.ndim == index.ndim == src.ndim:
        raise ValueError(f"self, index and src have {self.ndim}, {index.ndim} and {src.ndim} "
                         "dimensions: they must have the same rank")
    if out.ndim and out.shape != self.shape:
        raise ValueError(f"out has shape {out.shape}; it must be self's {self.shape}")
    along = min(max(dim + self.ndim, 0) if dim < 0 else dim, self.ndim - 1)
    for i, length in enumerate(index.shape):
        if length > src.shape[i]:
            raise ValueError(f"index has extent {length} in dimension {i}, more than src's "
                             f"{src.shape[i]}")
        if i != along and length > self.shape[i]:
            raise ValueError(f"index has extent {length} in dimension {i}, more than self's "
                             f"{self.shape[i]}")
    if self.ndim > 8:
        raise ValueError(f"self has {self.ndim} dimensions; at most 8 are supported")
    if not -max(self.ndim, 1) <= dim < max(self.ndim, 1):
        raise ValueError(f"dim {dim} is out of range for self of {self.ndim} dimensions")


def _scatter_reduce_check(self: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray,
                          reduce: int, out: np.ndarray) -> None:
    _scatter_check(self, dim, index, src, out)


@builtin("aclnnScatter", dtypes=ANY, check=_scatter_reduce_check)
def scatter(self: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray, reduce: int,
            out: np.ndarray) -> None:
    """reduce: 0 none, 1 add, 2 multiply."""
    values = _scatter_values(self, dim, index)
    result = widen(self).copy()
    _scatter_into(result, dim, values, widen(src), reduce)
    store(out, result)


@builtin("aclnnScatterAdd", dtypes=ANY, check=_scatter_check)
def scatter_add(self: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray,
                out: np.ndarray) -> None:
    values = _scatter_values(self, dim, index)
    result = widen(self).copy()
    _scatter_into(result, dim, values, widen(src), 1)
    store(out, result)


@builtin("aclnnIndexFill", dtypes=ANY)
def index_fill(self: np.ndarray, dim: int, index: np.ndarray, value: Any,
               out: np.ndarray) -> None:
    """ops-nn index/index_fill_d/docs/aclnnIndexFill&aclnnInplaceIndexFill.md: a negative
    index counts from the end, one out of range is skipped."""
    result = self.copy()
    axis = _axis(self.ndim, dim)
    n = self.shape[axis] if self.ndim else 1
    values = index.astype(np.int64).reshape(-1)
    values = values[(values >= -n) & (values < n)] % max(n, 1)
    positions: list[Any] = [slice(None)] * self.ndim
    if self.ndim:
        positions[axis] = values
        result[tuple(positions)] = np.asarray(value).astype(self.dtype)
    elif values.size:
        result[...] = np.asarray(value).astype(self.dtype)
    store(out, result)


def _masked_select_check(self: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
    """CANN's CheckShape (hicann/ops-math conversion/masked_select_v3/op_api/
    aclnn_masked_select.cpp; dtypes, ranks, the broadcast and out's rank are phase-1 rules):
    out of as many elements as self and mask broadcast to (the most the data can select).
    CANN checks no contiguity of out (its UT ..._not_contiguous cases pass)."""
    shape = np.broadcast_shapes(self.shape, mask.shape)
    if out.size != int(np.prod(shape)):
        raise ValueError(f"out has {out.size} elements; it must have as many as self and mask "
                         f"broadcast to ({shape}: {int(np.prod(shape))})")


@builtin("aclnnMaskedSelect", dtypes={"self": ANY, "mask": Dtypes(("uint8", "bool"))},
         check=_masked_select_check)
def masked_select(self: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
    source, flags = np.broadcast_arrays(self, mask.astype(bool))
    selected = source[flags]
    store(out[:selected.size], selected)
    report_extent(out, (selected.size,))  # its view shape once the launch ran, as CANN's


@builtin("aclnnFlip", dtypes=ANY)
def flip(self: np.ndarray, dims: tuple[int, ...], out: np.ndarray) -> None:
    if self.ndim == 0:  # its one element stays (dims may name dimension 0 or -1)
        store(out, self)
    else:
        store(out, np.flip(self, axis=tuple(_axis(self.ndim, d) for d in dims)))


def _roll_check(x: np.ndarray, shifts: tuple[int, ...], dims: tuple[int, ...],
                out: np.ndarray) -> None:
    """ops-math conversion/roll/op_api/aclnn_roll.cpp (dtypes, out's shape, x's rank: the
    phase-1 rules): CheckArraySize (shifts and dims as long, or dims empty and one shift);
    an empty x is computed without more checks, a 0-d x takes one shift and no dims
    (HandleDimZeroTensor), any other x dims in [-r, r) (CheckDimsRange)."""
    if (len(shifts) != len(dims) and dims) or (not dims and len(shifts) != 1):
        raise ValueError(f"shifts has {len(shifts)} values and dims {len(dims)}: they must be "
                         "as many, or dims empty and one shift")
    if x.size == 0 and x.ndim:
        return
    if x.ndim == 0:
        if dims or len(shifts) != 1:
            raise ValueError("a 0-d x takes one shift and no dims")
        return
    for d in dims:
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"dims holds {d}, out of range for x of {x.ndim} dimensions: it "
                             f"must be in [{-x.ndim}, {x.ndim - 1}]")


@builtin("aclnnRoll", dtypes=ANY, check=_roll_check)
def roll(x: np.ndarray, shifts: tuple[int, ...], dims: tuple[int, ...], out: np.ndarray) -> None:
    if x.ndim == 0:
        store(out, x)
    elif dims:
        store(out, np.roll(x, shifts, axis=tuple(_axis(x.ndim, d) for d in dims)))
    else:
        store(out, np.roll(x.reshape(-1), shifts[0]).reshape(x.shape))


def _permute_check(self: np.ndarray, dims: tuple[int, ...], out: np.ndarray) -> None:
    """ops-math conversion/transpose/op_api/aclnn_permute.cpp CheckShapeValid (out of self's
    rank, dims of self's), CheckDimsRange (each dimension once), then the permuted shape
    against out (CheckShapeAndScalarSame: equal, or one element each)."""
    if out.ndim != self.ndim:
        raise ValueError(f"out has {out.ndim} dimensions; it must have self's {self.ndim}")
    axes = [_axis(self.ndim, d) for d in dims]
    if sorted(axes) != list(range(self.ndim)):
        raise ValueError(f"dims {list(dims)} must name each of self's {self.ndim} dimensions "
                         "once")
    expected = output_shapes("aclnnPermute", self=self, dims=dims)["out"]
    if not _one_or_same(expected, out.shape):
        raise ValueError(f"out has shape {out.shape}, the permuted shape is {expected}")


@builtin("aclnnPermute", dtypes=ANY, check=_permute_check)
def permute(self: np.ndarray, dims: tuple[int, ...], out: np.ndarray) -> None:
    store(out, np.transpose(self, [_axis(self.ndim, d) for d in dims]))


def _expand_check(self: np.ndarray, size: tuple[int, ...], out: np.ndarray) -> None:
    """ops-math math/expand/op_api/aclnn_expand.cpp CheckShape, CheckMaxDimension (dtypes:
    the phase-1 rules): size has at least self's rank; each of self's extents equals size's
    (aligned right) or is 1; out's shape is size (-1, CANN's keep, is taken only where self
    and size agree); self and out at most 8 dimensions."""
    if not (self.shape == tuple(size) and out.shape == tuple(size)):
        if len(size) < self.ndim:
            raise ValueError(f"size {list(size)} has fewer values than self has dimensions "
                             f"({self.ndim})")
        lead = len(size) - self.ndim
        for i, extent in enumerate(self.shape):
            if extent != size[lead + i] and extent != 1:
                raise ValueError(f"self's shape {self.shape} does not expand to size "
                                 f"{list(size)}")
        check_output_shapes("aclnnExpand", {"self": self, "size": size}, {"out": out},
                            "it must be size")
    for name, tensor in (("self", self), ("out", out)):
        if tensor.ndim > 8:
            raise ValueError(f"{name} has {tensor.ndim} dimensions; at most 8 are supported")


@builtin("aclnnExpand", dtypes=ANY, check=_expand_check)
def expand(self: np.ndarray, size: tuple[int, ...], out: np.ndarray) -> None:
    store(out, np.broadcast_to(self, out.shape))


def _repeat_check(self: np.ndarray, repeats: tuple[int, ...], out: np.ndarray) -> None:
    """ops-math math/tile/op_api/aclnn_repeat.cpp CheckParams (dtypes: the phase-1 rules):
    repeats has at least self's rank and no negative value; self and repeats at most 8
    dimensions; then (unless nothing is computed) out of the repeated shape."""
    if self.ndim > len(repeats):
        raise ValueError(f"repeats has {len(repeats)} values; it must have at least self's "
                         f"rank ({self.ndim})")
    if any(r < 0 for r in repeats):
        raise ValueError(f"repeats {list(repeats)} holds a negative value")
    if self.ndim > 8 or len(repeats) > 8:
        raise ValueError(f"self has {self.ndim} dimensions and repeats {len(repeats)} values; "
                         "at most 8 are supported")
    if self.size == 0 or out.size == 0 or 0 in repeats:
        return
    check_output_shapes("aclnnRepeat", {"self": self, "repeats": repeats}, {"out": out},
                        "the repeated shape is")


@builtin("aclnnRepeat", dtypes=ANY, check=_repeat_check)
def repeat(self: np.ndarray, repeats: tuple[int, ...], out: np.ndarray) -> None:
    store(out, np.tile(self, repeats))


@builtin("aclnnTril", dtypes=ANY)
def tril(self: np.ndarray, diagonal: int, out: np.ndarray) -> None:
    store(out, np.tril(self, diagonal))


def _triu_check(self: np.ndarray, diagonal: int, out: np.ndarray) -> None:
    """ops-math conversion/triu/op_api/aclnn_triu.cpp CheckShape: a self that is not empty has
    at least 2 dimensions (the rest: the phase-1 rules)."""
    if self.size > 0 and self.ndim < 2:
        raise ValueError(f"self has {self.ndim} dimensions; it must have at least 2")


@builtin("aclnnTriu", dtypes=ANY, check=_triu_check)
def triu(self: np.ndarray, diagonal: int, out: np.ndarray) -> None:
    if self.size:
        store(out, np.triu(self, diagonal))


def _sorted_order(x: np.ndarray, axis: int, descending: bool) -> Any:
    """A stable order of ``x`` along ``axis``: equal elements keep their order, NaN counts as
    the largest value (last ascending, first descending), as PyTorch's stable sort has it.
    Values are compared in their own dtype (int64 beyond 2**53 included); descending is the
    ascending order of the reversed array, reversed (which keeps equal elements in order)."""
    keys = x.astype(np.float32) if x.dtype == np.float16 or is_bfloat16(x.dtype) else x
    if not descending:
        return np.argsort(keys, axis=axis, kind="stable")
    n = keys.shape[axis]
    reversed_order = np.argsort(np.flip(keys, axis=axis), axis=axis, kind="stable")
    return n - 1 - np.flip(reversed_order, axis=axis)


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


def _argsort_check(self: np.ndarray, dim: int, descending: bool, out: np.ndarray) -> None:
    """ops-math math/sort/op_api/aclnn_argsort.cpp CheckDimValid (dim's range, the dtypes,
    formats and shapes: the phase-1 rules): off RegBase (the emulated Atlas A2 included), a
    bfloat16 self is not sorted along a dimension of extent 1."""
    if self.ndim and is_bfloat16(self.dtype) and self.shape[dim % self.ndim] == 1:
        raise ValueError(f"self is bfloat16 with extent 1 along dim {dim}: CANN does not sort "
                         "it")


@builtin("aclnnArgsort", dtypes=NUMBERS, check=_argsort_check)
def argsort(self: np.ndarray, dim: int, descending: bool, out: np.ndarray) -> None:
    if self.ndim == 0:
        store(out, np.zeros((), np.int64))
    else:
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
    """The k largest (smallest) along dim, in order, NaN counting as the largest: a partition
    picks them (which of several equal values at the k-th place is left unspecified, as
    PyTorch leaves it), then they are ordered stably."""
    if self.ndim == 0:
        store(valuesOut, self)
        store(indicesOut, np.zeros((), np.int64))
        return
    axis = _axis(self.ndim, dim)
    n = self.shape[axis]
    if k == 0:
        return
    keys = self.astype(np.float32) if self.dtype == np.float16 or is_bfloat16(self.dtype) \
        else self
    if 4 * k < n:
        picked = np.argpartition(keys, n - k if largest else k - 1, axis=axis)
        picked = np.take(picked, range(n - k, n) if largest else range(k), axis=axis)
        picked = np.sort(picked, axis=axis)          # ties then stay in their order
        order = np.take_along_axis(
            picked, _sorted_order(np.take_along_axis(keys, picked, axis), axis, largest), axis)
    else:
        order = np.take(_sorted_order(keys, axis, largest), range(k), axis=axis)
    store(valuesOut, np.take_along_axis(self, order, axis))
    store(indicesOut, order)


@builtin("aclnnArange")
def arange(start: Any, end: Any, step: Any, out: np.ndarray) -> None:
    """start + step i, i = 0, 1, ... out.size - 1, computed in float64 (PyTorch's accumulate
    type for float32) and rounded once into out."""
    values = np.arange(out.size, dtype=np.float64)
    values *= np.float64(step)
    values += np.float64(start)
    np.copyto(out, values.reshape(out.shape), casting="unsafe")


def _linspace_check(start: Any, end: Any, steps: int, out: np.ndarray) -> None:
    """ops-math math/lin_space/op_api/aclnn_linspace.cpp CheckParamsLogic: out has steps
    elements (any shape; steps >= 0: a phase-1 rule)."""
    if out.size != steps:
        raise ValueError(f"out has {out.size} elements; it must have steps ({steps})")


@builtin("aclnnLinspace", check=_linspace_check)
def linspace(start: Any, end: Any, steps: int, out: np.ndarray) -> None:
    """As ops-math math/lin_space/op_api/aclnn_linspace.cpp: start and end are converted to
    out's dtype first (an int64 out: to float32, OutPromoteType), the values cast to out's."""
    if not steps:
        return
    first, last = np.float64(start), np.float64(end)
    if out.dtype == np.int64:
        first, last = np.float64(np.float32(first)), np.float64(np.float32(last))
    elif out.dtype.kind in "iub":
        first, last = np.float64(np.trunc(first)), np.float64(np.trunc(last))
    store(out, np.linspace(first, last, int(steps)).reshape(out.shape))


def _eye_check(n: int, m: int, out: np.ndarray) -> None:
    """ops-math math/eye/op_api/aclnn_eye.cpp CheckShape: out has shape (n, m) (its rank and
    n, m >= 0: the phase-1 rules)."""
    check_output_shapes("aclnnEye", {"n": n, "m": m}, {"out": out})


@builtin("aclnnEye", check=_eye_check)
def eye(n: int, m: int, out: np.ndarray) -> None:
    """1 on the diagonal, 0 elsewhere, written in place."""
    out[...] = 0
    rows = min(out.shape[0], out.shape[1]) if out.ndim == 2 else 0
    out[np.arange(rows), np.arange(rows)] = 1


@builtin("aclnnInplaceCopy", dtypes=ANY)
def inplace_copy(selfRef: np.ndarray, src: np.ndarray) -> None:
    store(selfRef, np.broadcast_to(src, selfRef.shape))


def _pad_widths(ndim: int, pad: tuple[int, ...]) -> list[tuple[int, int]]:
    """(before, after) per dimension: pad's pairs from the last dimension backwards."""
    widths = [(0, 0)] * ndim
    for i in range(min(len(pad) // 2, ndim)):
        widths[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return widths


def _constant_pad_nd_check(self: np.ndarray, pad: tuple[int, ...], value: Any,
                           out: np.ndarray) -> None:
    """ops-math conversion/pad_v3/op_api/aclnn_constant_pad_nd.cpp CheckShape (dtypes, format,
    ranks: the phase-1 rules): pad of an even length covering at most self's rank; no
    dimension cropped below 0 by a negative width; out of the padded shape; no padded
    dimension left empty while some width is positive."""
    if len(pad) % 2:
        raise ValueError(f"pad has {len(pad)} values; it must have an even number")
    if len(pad) // 2 > self.ndim:
        raise ValueError(f"pad has {len(pad)} values: it covers more than self's "
                         f"{self.ndim} dimensions")
    widths = _pad_widths(self.ndim, pad)
    emptied = False
    for axis, ((before, after), extent) in enumerate(zip(widths, self.shape)):
        if extent + min(before, after, before + after) < 0:
            raise ValueError(f"pad ({before}, {after}) crops dimension {axis} (extent "
                             f"{extent}) below 0")
        covered = self.ndim - 1 - axis < len(pad) // 2
        emptied = emptied or (covered and extent + before + after == 0)
    check_output_shapes("aclnnConstantPadNd", {"self": self, "pad": pad}, {"out": out},
                        "padded, it is")
    if emptied and any(w > 0 for w in pad):
        raise ValueError("pad empties a dimension while it pads another: CANN refuses it")


@builtin("aclnnConstantPadNd", dtypes=ANY, check=_constant_pad_nd_check)
def constant_pad_nd(self: np.ndarray, pad: tuple[int, ...], value: Any, out: np.ndarray) -> None:
    """Negative widths crop (as PyTorch's constant_pad_nd), positive ones pad with value."""
    widths = _pad_widths(self.ndim, pad)
    cropped = self[tuple(slice(max(-b, 0), n - max(-a, 0))
                         for (b, a), n in zip(widths, self.shape))]
    positive = [(max(b, 0), max(a, 0)) for b, a in widths]
    store(out, np.pad(cropped, positive, constant_values=np.asarray(value).astype(self.dtype)))
