"""Conversion kernels over whole tensors: diagonals (aclnnDiag, aclnnDiagFlat,
aclnnInplaceFillDiagonal), slices (aclnnSlice, aclnnSliceV2), aclnnFlatten,
aclnnChannelShuffle and aclnnChunkCat, as PyTorch's diag, diagflat, fill_diagonal_, slicing,
ONNX's Flatten, channel_shuffle and _chunk_cat define them (ops-math conversion/*/docs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import check_output_shapes, store
from .elementwise import ANY
from .elementwise import register as builtin


def _diag_shape(self: np.ndarray, diagonal: int) -> tuple[int, ...]:
    """torch.diag's result: a 1-d (or 0-d) self as the |diagonal|-th diagonal of a square
    matrix; a 2-d self's diagonal."""
    if self.ndim <= 1:
        side = self.size + abs(diagonal)
        return (side, side)
    rows, columns = self.shape
    length = min(rows, columns - diagonal) if diagonal >= 0 else min(rows + diagonal, columns)
    return (max(length, 0),)


def _diag_check(self: np.ndarray, diagonal: int, out: np.ndarray) -> None:
    """ops-math conversion/diag_v2/op_api/aclnn_diag.cpp CheckParams: out of self's dtype,
    self of at most 2 dims (CheckShape); out of the diagonal's shape, which the kernel
    writes."""
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name} and self {self.dtype.name}: they must "
                         "be the same")
    if self.ndim > 2:
        raise ValueError(f"self has {self.ndim} dims; it must have at most 2")
    if self.size == 0 or _diagonal_past_edge(self, diagonal):
        return  # CANN returns at once (or fills out with 0s) whatever out's shape
    wanted = _diag_shape(self, diagonal)
    if out.shape != wanted:
        raise ValueError(f"out has shape {list(out.shape)}; diag of self {list(self.shape)} "
                         f"with diagonal {diagonal} is {list(wanted)}")


def _matrix_of(values: np.ndarray, diagonal: int, out: np.ndarray) -> None:
    result = np.zeros(out.shape, out.dtype)
    index = np.arange(values.size)
    rows, columns = (index, index + diagonal) if diagonal >= 0 else (index - diagonal, index)
    result[rows, columns] = values.reshape(-1)
    store(out, result)


def _diagonal_past_edge(self: np.ndarray, diagonal: int) -> bool:
    """aclnn_diag.cpp CheckDiagonal: a 2-d self whose diagonal-th diagonal starts just past
    its last column (or row)."""
    return self.ndim == 2 and (0 < diagonal == self.shape[1] or 0 > diagonal == -self.shape[0])


@builtin("aclnnDiag", dtypes=ANY, check=_diag_check)
def diag(self: np.ndarray, diagonal: int, out: np.ndarray) -> None:
    if out.size == 0 or _diagonal_past_edge(self, diagonal) or (self.size == 0 and
                                                               diagonal == 0):
        return
    if self.size == 0:
        store(out, np.zeros(out.shape, out.dtype))
        return
    if self.ndim <= 1:
        _matrix_of(np.asarray(self), diagonal, out)
    else:
        store(out, np.diagonal(self, diagonal).copy())


def _diag_flat_check(self: np.ndarray, diagonal: int, out: np.ndarray) -> None:
    """ops-math conversion/diag_flat/op_api/aclnn_diag_flat.cpp CheckShape: self and out of at
    most 8 dims; out the square matrix of torch.diagflat (side: self's elements + |diagonal|),
    which the kernel writes."""
    if self.ndim > 8 or out.ndim > 8:
        raise ValueError(f"self ({self.ndim}-d) and out ({out.ndim}-d) must have at most 8 dims")
    side = self.size + abs(diagonal)
    if self.size and out.shape != (side, side):
        raise ValueError(f"out has shape {list(out.shape)}; diagflat of {self.size} elements "
                         f"with diagonal {diagonal} is {[side, side]}")


@builtin("aclnnDiagFlat", dtypes=ANY, check=_diag_flat_check)
def diag_flat(self: np.ndarray, diagonal: int, out: np.ndarray) -> None:
    if self.size == 0:  # CANN returns at once for an empty self
        return
    _matrix_of(np.asarray(self), diagonal, out)


def _fill_diagonal_check(selfRef: np.ndarray, fillValue: Any, wrap: bool) -> None:
    """ops-math conversion/fill_diagonal_v2/op_host/op_api/aclnn_fill_diagonal.cpp
    CheckNotOverflow: fillValue within the range of selfRef's dtype (float16, float32, double
    and the integers; bool and bfloat16 unchecked); CheckShapeValid: selfRef of 2 to 8 dims,
    all of one length when more than 2."""
    value = np.asarray(fillValue)
    kind = selfRef.dtype
    if kind.name in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"):
        limits: Any = np.finfo(kind) if kind.kind == "f" else np.iinfo(kind)
        number = float(value) if value.dtype.kind in "fc" else int(value)
        if np.isfinite(number) and not limits.min <= number <= limits.max:
            raise ValueError(f"fillValue {number} cannot be converted to {kind.name} without "
                             "overflow")
    if not 2 <= selfRef.ndim <= 8:
        raise ValueError(f"selfRef has {selfRef.ndim} dims; it must have 2 to 8")
    if selfRef.ndim > 2 and len(set(selfRef.shape)) != 1:
        raise ValueError(f"selfRef has shape {list(selfRef.shape)}: with more than 2 dims, all "
                         "must have one length")


@builtin("aclnnInplaceFillDiagonal", dtypes=ANY, check=_fill_diagonal_check)
def inplace_fill_diagonal(selfRef: np.ndarray, fillValue: Any, wrap: bool) -> None:
    """fillValue on the main diagonal (PyTorch's fill_diagonal_): every index equal; a tall
    2-d matrix with wrap starts again every columns + 1 rows."""
    if selfRef.size == 0:
        return
    value = np.asarray(fillValue).astype(selfRef.dtype)
    length = min(selfRef.shape)
    if not (wrap and selfRef.ndim == 2 and selfRef.shape[0] > selfRef.shape[1] + 1):
        diagonal = np.lib.stride_tricks.as_strided(selfRef, (length,), (sum(selfRef.strides),))
        diagonal[...] = value
        return
    step = selfRef.shape[1] + 1  # wrapped: flat positions 0, step, 2 step ... (C order)
    if selfRef.flags.c_contiguous:
        selfRef.reshape(-1)[::step] = value
    else:
        positions = np.arange(0, selfRef.size, step)
        selfRef[np.unravel_index(positions, selfRef.shape)] = value


def _flatten_check(self: np.ndarray, axis: int, out: np.ndarray) -> None:
    """ops-math conversion/flatten/op_host/op_api/aclnn_flatten.cpp CheckParams: out of self's
    dtype, self of at most 8 dims, axis in [-rank, rank) (0 or -1 for a 0-d or 1-d self), out
    2-d: (product of the dims before axis, product of the rest)."""
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name} and self {self.dtype.name}: they must "
                         "be the same")
    if self.ndim > 8:
        raise ValueError(f"self has {self.ndim} dims; it must have at most 8")
    rank = self.ndim
    wrapped = axis + max(rank, 1) if axis < 0 else axis
    if rank <= 1 and wrapped != 0 or rank > 1 and not 0 <= wrapped < rank:
        raise ValueError(f"axis {axis} is out of range for a {rank}-d self")
    check_output_shapes("aclnnFlatten", {"self": self, "axis": axis}, {"out": out},
                        f"flattened at axis {axis}, self is")


@builtin("aclnnFlatten", dtypes=ANY, check=_flatten_check)
def flatten(self: np.ndarray, axis: int, out: np.ndarray) -> None:
    if out.size:
        store(out, np.asarray(self).reshape(out.shape))


def _clamped(start: int, end: int, size: int) -> tuple[int, int]:
    """A slice's start and end, negatives from the end, clamped into [0, size] with end at
    least start (CalculateValuesSlice{Upper,Lower}ForSlice)."""
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end


def _slice_check(self: np.ndarray, dim: int, start: int, end: int, step: int,
                 out: np.ndarray) -> None:
    """ops-math conversion/slice/op_api/aclnn_slice.cpp CheckParams: out of self's dtype; self
    of 1 to 8 dims, dim in [-rank, rank), step above 0, out self's shape with dim's extent
    ceil((end - start) / step) after clamping (CheckShape)."""
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name} and self {self.dtype.name}: they must "
                         "be the same")
    if not 1 <= self.ndim <= 8:
        raise ValueError(f"self has {self.ndim} dims; it must have 1 to 8")
    if not -self.ndim <= dim < self.ndim:
        raise ValueError(f"dim {dim} must be in [{-self.ndim}, {self.ndim - 1}]")
    if step <= 0:
        raise ValueError(f"step {step} must be above 0")
    axis = dim % self.ndim
    first, last = _clamped(start, end, self.shape[axis])
    wanted = list(self.shape)
    wanted[axis] = (last - first + step - 1) // step
    if list(out.shape) != wanted:
        raise ValueError(f"out has shape {list(out.shape)}; the slice is {wanted}")


@builtin("aclnnSlice", dtypes=ANY, check=_slice_check)
def slice_(self: np.ndarray, dim: int, start: int, end: int, step: int, out: np.ndarray) -> None:
    if out.size == 0:
        return
    axis = dim % self.ndim
    first, last = _clamped(start, end, self.shape[axis])
    index = [slice(None)] * self.ndim
    index[axis] = slice(first, last, step)
    store(out, np.asarray(self)[tuple(index)])


def _slice_v2_plan(self: np.ndarray, starts: tuple[int, ...], ends: tuple[int, ...],
                   axes: tuple[int, ...], steps: tuple[int, ...]) -> tuple[slice, ...]:
    index = [slice(None)] * self.ndim
    for i in range(len(steps)):
        axis = axes[i] % self.ndim
        first, last = _clamped(starts[i], ends[i], self.shape[axis])
        index[axis] = slice(first, last, steps[i])
    return tuple(index)


def _slice_v2_check(self: np.ndarray, starts: tuple[int, ...], ends: tuple[int, ...],
                    axes: tuple[int, ...], steps: tuple[int, ...], out: np.ndarray) -> None:
    """ops-math conversion/strided_slice_v3/op_api/aclnn_slice_v2.cpp CheckParams: out of
    self's dtype; each axis in [-rank, rank) and none twice (CheckAxes); starts and ends as
    long as axes, steps above 0 (CheckArray); self of at most 8 dims; out of the sliced shape
    (CheckShape: the first len(steps) axes sliced)."""
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name} and self {self.dtype.name}: they must "
                         "be the same")
    seen = set()
    for axis in axes:
        if not -self.ndim <= axis < self.ndim:
            raise ValueError(f"axes' {axis} is out of range for a {self.ndim}-d self")
        if axis % self.ndim in seen:
            raise ValueError(f"axes names dim {axis % self.ndim} twice")
        seen.add(axis % self.ndim)
    if len(starts) != len(axes) or len(ends) != len(axes):
        raise ValueError(f"starts ({len(starts)}) and ends ({len(ends)}) must be as long as axes "
                         f"({len(axes)})")
    if any(step <= 0 for step in steps):
        raise ValueError(f"steps {list(steps)} must be above 0")
    if len(steps) > len(axes):
        raise ValueError(f"steps ({len(steps)}) must be at most as long as axes ({len(axes)})")
    if self.ndim > 8:
        raise ValueError(f"self has {self.ndim} dims; it must have at most 8")
    check_output_shapes("aclnnSliceV2", {"self": self, "starts": starts, "ends": ends,
                                         "axes": axes, "steps": steps}, {"out": out},
                        "the slice is")


@builtin("aclnnSliceV2", dtypes=ANY, check=_slice_v2_check)
def slice_v2(self: np.ndarray, starts: tuple[int, ...], ends: tuple[int, ...],
             axes: tuple[int, ...], steps: tuple[int, ...], out: np.ndarray) -> None:
    if out.size:
        store(out, np.asarray(self)[_slice_v2_plan(self, starts, ends, axes, steps)])


def _channel_shuffle_check(self: np.ndarray, groups: int, out: np.ndarray) -> None:
    """ops-math conversion/transpose/op_api/aclnn_channel_shuffle.cpp CheckParams: out of
    self's dtype; groups above 0 dividing the channels (dim 1, CheckAttrValid); out self's
    shape, self of 3 to 7 dims (CheckShape)."""
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name} and self {self.dtype.name}: they must "
                         "be the same")
    if groups <= 0:
        raise ValueError(f"groups {groups} must be above 0")
    if self.ndim >= 2 and self.shape[1] % groups:
        raise ValueError(f"groups {groups} must divide self's {self.shape[1]} channels")
    if out.shape != self.shape:
        raise ValueError(f"out has shape {list(out.shape)}; it must be self's "
                         f"{list(self.shape)}")
    if not 3 <= self.ndim <= 7:
        raise ValueError(f"self has {self.ndim} dims; it must have 3 to 7")


@builtin("aclnnChannelShuffle", dtypes=ANY, check=_channel_shuffle_check)
def channel_shuffle(self: np.ndarray, groups: int, out: np.ndarray) -> None:
    """(N, g, C / g, ...) transposed to (N, C / g, g, ...)."""
    if self.size == 0:
        return
    n, c = self.shape[:2]
    grouped = np.asarray(self).reshape((n, groups, c // groups) + self.shape[2:])
    store(out, grouped.swapaxes(1, 2).reshape(self.shape))


def _chunk_cat_check(tensors: list[np.ndarray], dim: int, numChunks: int,
                     out: np.ndarray) -> None:
    """ops-math conversion/chunk_cat/op_api/aclnn_chunk_cat.cpp: dim 0 only; the tensors of
    one dtype (CheckDtypeValid) and of 1 to 8 dims (CheckShape); numChunks above 0; out of
    torch._chunk_cat's shape (the rule of aclnn_py.ops.outputs)."""
    if dim != 0:
        raise ValueError(f"dim {dim}: only 0 is supported")
    if not tensors:
        return
    for index, tensor in enumerate(tensors):
        if tensor.dtype != tensors[0].dtype:
            raise ValueError(f"tensors[{index}] has dtype {tensor.dtype.name} and tensors[0] "
                             f"{tensors[0].dtype.name}: they must be the same")
        if not 1 <= tensor.ndim <= 8:
            raise ValueError(f"tensors[{index}] has {tensor.ndim} dims; it must have 1 to 8")
    if numChunks <= 0:
        raise ValueError(f"numChunks {numChunks} must be above 0")
    check_output_shapes("aclnnChunkCat", {"tensors": tensors, "dim": dim,
                                          "numChunks": numChunks}, {"out": out},
                        "the chunks make")


@builtin("aclnnChunkCat", dtypes=ANY, check=_chunk_cat_check)
def chunk_cat(tensors: list[np.ndarray], dim: int, numChunks: int, out: np.ndarray) -> None:
    """Each tensor cut along dim 0 into numChunks chunks (zero-padded to ceil(size /
    numChunks) rows), each chunk flattened; chunk i of every tensor in row i of out."""
    if not tensors or out.size == 0:
        return
    parts = []
    for tensor in tensors:
        rows = -(-tensor.shape[0] // numChunks)
        flat = np.zeros((rows * numChunks,) + tensor.shape[1:], out.dtype)
        flat[:tensor.shape[0]] = np.asarray(tensor).astype(out.dtype)
        parts.append(flat.reshape(numChunks, -1))
    store(out, np.concatenate(parts, axis=1))


def _im2col_size(extent: int, kernel: int, dilation: int, pad: int, stride: int) -> int:
    """aclnn_im2col.cpp CheckOutputDims: a division rounding down (div_rtn)."""
    return (extent + 2 * pad - (dilation * (kernel - 1) + 1)) // stride + 1


def _im2col_check(self: np.ndarray, kernelSize: tuple[int, ...], dilation: tuple[int, ...],
                  padding: tuple[int, ...], stride: tuple[int, ...], out: np.ndarray) -> None:
    """ops-math conversion/im2col/op_api/aclnn_im2col.cpp CheckParams: self 3-d or 4-d, its
    dims above 0 but a 4-d self's batch (CheckInputDims); kernelSize, dilation, padding and
    stride of 2 values, kernel, stride and dilation above 0, padding at least 0 (CheckArray);
    out ([N,] C kH kW, L) with L the blocks' count, at least 1 each way (CheckOutputDims)."""
    if self.ndim not in (3, 4):
        raise ValueError(f"self has {self.ndim} dims; it must have 3 or 4")
    if min(self.shape[self.ndim - 3:]) <= 0:
        raise ValueError(f"self has shape {list(self.shape)}: its C, H and W must be above 0")
    for name, values in (("kernelSize", kernelSize), ("dilation", dilation),
                         ("padding", padding), ("stride", stride)):
        if len(values) != 2:
            raise ValueError(f"{name} has {len(values)} values; it must have 2")
    if min(kernelSize) <= 0 or min(stride) <= 0 or min(dilation) <= 0:
        raise ValueError(f"kernelSize {list(kernelSize)}, stride {list(stride)} and dilation "
                         f"{list(dilation)} must be above 0")
    if min(padding) < 0:
        raise ValueError(f"padding {list(padding)} must be at least 0")
    blocks = [_im2col_size(self.shape[-2 + i], kernelSize[i], dilation[i], padding[i],
                           stride[i]) for i in range(2)]
    if min(blocks) < 1:
        raise ValueError(f"self {list(self.shape)} makes {blocks} blocks: at least 1 each way")
    check_output_shapes("aclnnIm2col", {"self": self, "kernelSize": kernelSize,
                                        "dilation": dilation, "padding": padding,
                                        "stride": stride}, {"out": out})


@builtin("aclnnIm2col", dtypes=ANY, check=_im2col_check)
def im2col(self: np.ndarray, kernelSize: tuple[int, ...], dilation: tuple[int, ...],
           padding: tuple[int, ...], stride: tuple[int, ...], out: np.ndarray) -> None:
    """Every (kH, kW) block of the zero-padded self as a column: out[n, c kH kW + i kW + j,
    l] (PyTorch's unfold)."""
    if out.size == 0:
        return
    from .nn import _pad_spatial, _windows
    x = np.asarray(self)
    x = x if x.ndim == 4 else x[None]
    blocks = tuple(_im2col_size(x.shape[2 + i], kernelSize[i], dilation[i], padding[i],
                                stride[i]) for i in range(2))
    padded = _pad_spatial(x, [(p, p) for p in padding], 0)
    windows = _windows(padded, tuple(kernelSize), tuple(stride), tuple(dilation), blocks)
    columns = windows.transpose(0, 1, 4, 5, 2, 3)  # (N, C, kH, kW, OH, OW)
    store(out, columns.reshape(out.shape))


def _unfold_grad_check(gradOut: np.ndarray, inputSizes: tuple[int, ...], dim: int, size: int,
                       step: int, gradIn: np.ndarray) -> None:
    """ops-math conversion/unfold_grad/op_api/aclnn_unfold_grad.cpp CheckParams: gradOut and
    gradIn of 1 to 8 dims, inputSizes one shorter than gradOut and gradIn of its shape
    (CheckShapeValid); dim in [0, gradOut's rank - 1), size and step above 0. gradOut must be
    the forward's shape (inputSizes with dim's extent (extent - size) / step + 1, then
    size)."""
    if not 1 <= gradOut.ndim <= 8 or not 1 <= gradIn.ndim <= 8:
        raise ValueError(f"gradOut ({gradOut.ndim}-d) and gradIn ({gradIn.ndim}-d) must have "
                         "1 to 8 dims")
    if len(inputSizes) != gradOut.ndim - 1:
        raise ValueError(f"inputSizes has {len(inputSizes)} values; it must have gradOut's "
                         f"rank - 1 = {gradOut.ndim - 1}")
    check_output_shapes("aclnnUnfoldGrad", {"gradOut": gradOut, "inputSizes": inputSizes},
                        {"gradIn": gradIn}, "it must be inputSizes")
    if not 0 <= dim < gradOut.ndim - 1:
        raise ValueError(f"dim {dim} must be in [0, {gradOut.ndim - 1})")
    if size <= 0 or step <= 0:
        raise ValueError(f"size {size} and step {step} must be above 0")
    wanted = list(inputSizes) + [size]
    wanted[dim] = max((inputSizes[dim] - size) // step + 1, 0)
    if list(gradOut.shape) != wanted:
        raise ValueError(f"gradOut has shape {list(gradOut.shape)}; unfolding inputSizes "
                         f"{list(inputSizes)} makes {wanted}")


@builtin("aclnnUnfoldGrad", dtypes=ANY, check=_unfold_grad_check)
def unfold_grad(gradOut: np.ndarray, inputSizes: tuple[int, ...], dim: int, size: int,
                step: int, gradIn: np.ndarray) -> None:
    """The gradient of Tensor.unfold(dim, size, step): each window's gradient summed back onto
    the elements it took."""
    if gradIn.size == 0:
        return
    from . import widen
    grad = np.moveaxis(widen(gradOut), dim, -2)  # (..., count, size)
    count = grad.shape[-2]
    result = np.zeros(grad.shape[:-2] + (inputSizes[dim],), grad.dtype)
    for k in range(size):
        result[..., k:k + step * (count - 1) + 1:step] += grad[..., k]
    store(gradIn, np.moveaxis(result, -1, dim))


def _assign_plan(varRef: np.ndarray, begin: tuple[int, ...], end: tuple[int, ...],
                 strides: tuple[int, ...], axesOptional: Any) -> tuple[slice, ...]:
    """The slice of varRef, per ops-math conversion/strided_slice_assign_v2/docs/
    aclnnStridedSliceAssignV2.md: axes (by default 0, 1, ...) negative from the end; begin and
    end negative from the end, then clamped into [0, the extent]."""
    axes = tuple(axesOptional) if axesOptional is not None else tuple(range(len(begin)))
    index = [slice(None)] * varRef.ndim
    for first, last, step, axis in zip(begin, end, strides, axes):
        size = varRef.shape[axis]
        first, last = (min(max(v + size if v < 0 else v, 0), size) for v in (first, last))
        index[axis % varRef.ndim] = slice(first, max(last, first), step)
    return tuple(index)


def _strided_slice_assign_check(varRef: np.ndarray, inputValue: np.ndarray,
                                begin: tuple[int, ...], end: tuple[int, ...],
                                strides: tuple[int, ...], axesOptional: Any) -> None:
    """ops-math conversion/strided_slice_assign_v2/docs/aclnnStridedSliceAssignV2.md (the
    checkout has no op_api): inputValue of varRef's dtype and of the slice's shape; begin, end
    and strides (and axesOptional) of one length; each axis in [-rank, rank); strides above
    0, 1 on varRef's last dim."""
    if inputValue.dtype != varRef.dtype:
        raise ValueError(f"inputValue has dtype {inputValue.dtype.name} and varRef "
                         f"{varRef.dtype.name}: they must be the same")
    axes = tuple(axesOptional) if axesOptional is not None else tuple(range(len(begin)))
    if not len(begin) == len(end) == len(strides) == len(axes):
        raise ValueError(f"begin ({len(begin)}), end ({len(end)}), strides ({len(strides)}) and "
                         f"axes ({len(axes)}) must have one length")
    for axis, step in zip(axes, strides):
        if not -varRef.ndim <= axis < varRef.ndim:
            raise ValueError(f"axis {axis} is out of range for a {varRef.ndim}-d varRef")
        if step <= 0:
            raise ValueError(f"strides {list(strides)} must be above 0")
        if axis % varRef.ndim == varRef.ndim - 1 and step != 1:
            raise ValueError(f"the stride of varRef's last dim must be 1, not {step}")
    wanted = np.empty(varRef.shape, np.bool_)[_assign_plan(varRef, begin, end, strides,
                                                           axesOptional)].shape
    if inputValue.shape != wanted:
        raise ValueError(f"inputValue has shape {list(inputValue.shape)}; the slice of varRef "
                         f"is {list(wanted)}")


@builtin("aclnnStridedSliceAssignV2", dtypes=ANY, check=_strided_slice_assign_check)
def strided_slice_assign_v2(varRef: np.ndarray, inputValue: np.ndarray,
                            begin: tuple[int, ...], end: tuple[int, ...],
                            strides: tuple[int, ...], axesOptional: Any) -> None:
    """varRef[the slice] = inputValue."""
    if inputValue.size:
        varRef[_assign_plan(varRef, begin, end, strides, axesOptional)] = inputValue
