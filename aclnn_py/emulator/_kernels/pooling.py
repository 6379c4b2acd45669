"""Pooling kernels: the adaptive pools, the 3-d pools, the pools' gradients, ONNX's MaxPool
and the max-unpooling gradients.

The 2-d fixed-window forward pools (MaxPool2dWithIndices, AvgPool2d, ...) live in :mod:`.nn`,
with the window code (:class:`.nn.Pool`, ``_pool_windows`` and its adjoint ``_pool_scatter``,
``_max_pool_best``) every pool here reuses.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.dtypes import Dtypes
from ...ops.outputs import max_pool3d_geometry
from . import (
    INNER_NULLPTR,
    Refusal,
    check_output_shapes,
    output_shapes,
    store,
    tensor_format,
    widen,
)
from .elementwise import FLOATS
from .elementwise import register as builtin
from .foreach import PRIVATE_FORMATS
from .nn import (
    NCDHW,
    NCHW,
    NCL,
    Pool,
    _avg_divisor,
    _avg_pool_size,
    _format_name,
    _max_pool_best,
    _max_pool_shape,
    _plane_index,
    _planes,
    _pool_scatter,
    _pool_sums,
)

INT64 = Dtypes(("int64",))
INT32 = Dtypes(("int32",))
INDICES = Dtypes(("int32", "int64"))


def _window(index: int, size_in: int, size_out: int) -> slice:
    """The input range adaptive pooling gives output ``index``: from floor(index I / O) to
    ceil((index + 1) I / O), as PyTorch's adaptive_avg_pool2d (ops-nn
    pooling/adaptive_avg_pool2d/op_api/aclnn_adaptive_avg_pool2d.cpp computes an output of
    1 x 1 as the mean over H and W, as at::mean_out does)."""
    return slice(index * size_in // size_out, -(-(index + 1) * size_in // size_out))


def _adaptive_avg_pool2d_check(self: np.ndarray, outputSize: tuple[int, ...],
                               out: np.ndarray) -> None:
    """ops-nn pooling/adaptive_avg_pool2d/op_api/aclnn_adaptive_avg_pool2d.cpp:
    CheckInputOutputShape (self of 3 or 4 dims, out of as many, the leading dims equal; H and
    W of self above 0 only on a regbase SoC, not on the emulated Atlas A2), CheckFormat (self
    and out both NCL for 3 dims, NCHW for 4) and CheckOutputSize (two sizes, each above 0 and
    equal to out's; out's shape: the output rule's)."""
    if self.ndim not in (3, 4):
        raise ValueError(f"self has {self.ndim} dims; it must have 3 or 4")
    if out.ndim != self.ndim:
        raise ValueError(f"out has {out.ndim} dims; it must have self's {self.ndim}")
    wanted = NCL if self.ndim == 3 else NCHW
    for name, tensor in (("self", self), ("out", out)):
        if tensor_format(tensor) != wanted:
            raise ValueError(f"{name} has format {_format_name(tensor_format(tensor))}; a "
                             f"{self.ndim}-d self and its out must be {_format_name(wanted)}")
    if len(outputSize) != 2:
        raise ValueError(f"outputSize has {len(outputSize)} values; it must have 2")
    if any(size <= 0 for size in outputSize):
        raise ValueError(f"outputSize {tuple(outputSize)} must be above 0")
    check_output_shapes("aclnnAdaptiveAvgPool2d", {"self": self, "outputSize": outputSize},
                        {"out": out}, "it must be self's leading dims and outputSize,")


@builtin("aclnnAdaptiveAvgPool2d", dtypes=FLOATS, check=_adaptive_avg_pool2d_check)
def adaptive_avg_pool2d(self: np.ndarray, outputSize: tuple[int, ...], out: np.ndarray) -> None:
    if self.size == 0:  # an empty self: CANN returns at once (the op_api's IsEmpty)
        return
    x = widen(self)
    height, width = x.shape[-2:]
    out_h, out_w = outputSize
    result = np.empty(x.shape[:-2] + (out_h, out_w), x.dtype)
    for i in range(out_h):
        rows = _window(i, height, out_h)
        for j in range(out_w):
            cols = _window(j, width, out_w)
            result[..., i, j] = x[..., rows, cols].mean(axis=(-2, -1), dtype=x.dtype)
    store(out, result)


# ---- shared: adaptive windows, the 3-d window, gradients scattered by index -----------------


def _bounds(size_in: int, size_out: int) -> tuple[Any, Any]:
    """Every adaptive window's start and end (as :func:`_window`), as arrays."""
    index = np.arange(size_out)
    return index * size_in // size_out, -(-(index + 1) * size_in // size_out)


def _adaptive_matrix(size_in: int, size_out: int, dtype: Any) -> Any:
    """(O, I): row o averages the input range of output o (1 / its length there)."""
    starts, ends = _bounds(size_in, size_out)
    column = np.arange(size_in)[None, :]
    inside = (column >= starts[:, None]) & (column < ends[:, None])
    return (inside / np.maximum(ends - starts, 1)[:, None]).astype(dtype)


_LETTERS = "abc"


def _adaptive_mean(x: np.ndarray, sizes: tuple[int, ...], backward: bool = False) -> Any:
    """The adaptive means of ``x`` over its last len(sizes) dims into ``sizes`` (or, with
    ``backward``, their adjoint: a gradient of ``sizes`` spread back over the input windows,
    ``sizes`` then the input's extents)."""
    rank = len(sizes)
    spatial = "xyz"[:rank]
    letters = _LETTERS[:rank]
    operands = []
    for i in range(rank):
        if backward:
            operands.append(_adaptive_matrix(sizes[i], x.shape[x.ndim - rank + i], x.dtype))
        else:
            operands.append(_adaptive_matrix(x.shape[x.ndim - rank + i], sizes[i], x.dtype))
    terms = ",".join(f"{letters[i]}{spatial[i]}" for i in range(rank))
    if backward:
        return np.einsum(f"...{letters},{terms}->...{spatial}", x, *operands, optimize=True)
    return np.einsum(f"...{spatial},{terms}->...{letters}", x, *operands, optimize=True)


def _adaptive_max(x: np.ndarray, sizes: tuple[int, ...]) -> tuple[Any, Any]:
    """The maxima of the adaptive windows of ``x`` (N, C, *spatial) and their indices within a
    plane (h W + w, or d H W + h W + w), as PyTorch's adaptive max pools pick them: the
    first maximum, or the last NaN."""
    rank = len(sizes)
    spatial = x.shape[2:]
    windows: Any = x
    valid = np.ones((1,) * (2 * rank), bool)
    starts = []
    for i in range(rank):
        start, end = _bounds(spatial[i], sizes[i])
        length = int((end - start).max())
        index = start[:, None] + np.arange(length)[None, :]          # (O_i, L_i)
        ok = index < end[:, None]
        shape = [1] * (2 * rank)
        shape[2 * i], shape[2 * i + 1] = sizes[i], length
        valid = valid & ok.reshape(shape)
        take = np.minimum(index, spatial[i] - 1).reshape(-1)
        windows = np.take(windows, take, axis=2 + 2 * i).reshape(
            windows.shape[:2 + 2 * i] + (sizes[i], length) + windows.shape[3 + 2 * i:])
        starts.append(start)
    order = (0, 1, *range(2, 2 + 2 * rank, 2), *range(3, 3 + 2 * rank, 2))
    lengths = windows.shape[3:3 + 2 * rank:2]
    flat = np.ascontiguousarray(windows.transpose(order)).reshape(
        windows.shape[:2] + tuple(sizes) + (-1,))
    valid = valid.transpose(tuple(o - 2 for o in order[2:])).reshape(tuple(sizes) + (-1,))
    if not valid.all():
        np.copyto(flat, -np.inf, where=~valid)
    best = np.argmax(flat, axis=-1)  # the first maximum, when no NaN and no window all -inf
    if np.isnan(x).any() or np.isneginf(np.take_along_axis(flat, best[..., None], -1)).any():
        nan = np.isnan(flat)
        top = np.max(np.where(nan, -np.inf, flat), axis=-1, keepdims=True)
        best = np.argmax((flat == top) & valid, axis=-1)
        any_nan = nan.any(axis=-1)
        best = np.where(any_nan, flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1), best)
    values = np.take_along_axis(flat, best[..., None], -1)[..., 0]
    offsets = np.unravel_index(best, lengths)
    index = np.zeros(best.shape, np.int64)
    for i in range(rank):
        shape = [1] * rank
        shape[i] = sizes[i]
        index = index * spatial[i] + starts[i].reshape(shape) + offsets[i]
    return values, index


def _scatter_by_index(grad: np.ndarray, indices: np.ndarray, shape: tuple[int, ...],
                      rank: int) -> Any:
    """An array of ``shape`` whose planes (its last ``rank`` dims) each receive their
    gradient's elements at the plane indices ``indices`` names, summed where several name one
    element; an index outside the plane is dropped."""
    plane = int(np.prod(shape[len(shape) - rank:]))
    planes = int(np.prod(shape[:len(shape) - rank]))
    index = np.asarray(indices, np.int64).reshape(planes, -1)
    flat = index + (np.arange(planes, dtype=np.int64) * plane)[:, None]
    weights = np.asarray(grad).reshape(planes, -1)
    if index.size and (index.min() < 0 or index.max() >= plane):
        keep = (index >= 0) & (index < plane)
        flat, weights = flat[keep], weights[keep]
    return np.bincount(flat.reshape(-1), weights.reshape(-1), planes * plane).reshape(shape)


def _triple(values: tuple[int, ...], default: tuple[int, int, int]) -> tuple[int, int, int]:
    """A 3-d pool's kernel, stride or padding: one value for all three dims, or three (none:
    ``default``)."""
    if not values:
        return default
    if len(values) == 1:
        return (values[0],) * 3
    return (values[0], values[1], values[2])


def _check_lengths(allowed: dict[str, tuple[int, ...]], given: dict[str, tuple[int, ...]]
                   ) -> None:
    for name, lengths in allowed.items():
        if len(given[name]) not in lengths:
            raise ValueError(f"{name} has {len(given[name])} values; it must have "
                             f"{' or '.join(str(n) for n in lengths)}")


def _same_dtype(reference: str, tensor: np.ndarray, **others: Any) -> None:
    for name, other in others.items():
        if other is not None and other.dtype != tensor.dtype:
            raise ValueError(f"{name} has dtype {other.dtype.name} and {reference} "
                             f"{tensor.dtype.name}: they must be the same")


def _shape_is(name: str, tensor: np.ndarray, shape: tuple[int, ...], what: str) -> None:
    if tuple(tensor.shape) != tuple(shape):
        raise ValueError(f"{name} has shape {list(tensor.shape)}; it must be {what} "
                         f"{list(shape)}")


# ---- average pooling's gradient, 2-d and 3-d ------------------------------------------------


def _avg_pool2d_backward_check(gradOutput: np.ndarray, self: np.ndarray,
                               kernelSize: tuple[int, ...], stride: tuple[int, ...],
                               padding: tuple[int, ...], ceilMode: bool, countIncludePad: bool,
                               divisorOverride: int, cubeMathType: int,
                               gradInput: np.ndarray) -> None:
    """ops-nn pooling/avg_pool3_d_grad/op_api/aclnn_avgpool2d_backward.cpp CheckParams on an
    Atlas A2: gradOutput's dtype gradInput's (CheckDtypeVaild); NCHW or NCL, both NCHW when
    4-d (CheckFormatVaild); gradOutput and gradInput both 3-d or both 4-d, kernelSize of 1 or 2
    values above 0, stride of at most 2 above 0, padding of at most 2 (CheckDimsVaild), not
    empty and at most half the kernel (CheckPaddingValidAvgPool2D); cubeMathType 0 to 3;
    gradInput of self's shape (CheckOutputShape). gradOutput must have the forward's out shape
    (its values are read as such)."""
    _same_dtype("gradOutput", gradOutput, gradInput=gradInput)
    for name, tensor in (("gradOutput", gradOutput), ("self", self), ("gradInput", gradInput)):
        if tensor_format(tensor) not in (NCHW, NCL):
            raise ValueError(f"{name} has format {_format_name(tensor_format(tensor))}; it "
                             "must be NCHW or NCL")
    if gradOutput.ndim == 4 and NCHW not in (tensor_format(gradOutput), tensor_format(gradInput)) \
            or gradOutput.ndim == 4 and tensor_format(gradOutput) != tensor_format(gradInput):
        raise ValueError("gradOutput and gradInput must be NCHW when 4-d")
    if gradOutput.ndim != gradInput.ndim or gradOutput.ndim not in (3, 4):
        raise ValueError(f"gradOutput ({gradOutput.ndim}-d) and gradInput ({gradInput.ndim}-d) "
                         "must both be 3-d or both 4-d")
    _check_lengths({"kernelSize": (1, 2), "stride": (0, 1, 2), "padding": (1, 2)},
                   {"kernelSize": kernelSize, "stride": stride, "padding": padding})
    if min(kernelSize) <= 0 or (stride and min(stride) <= 0):
        raise ValueError(f"kernelSize {list(kernelSize)} and stride {list(stride)} must be "
                         "above 0")
    pool = Pool.of(kernelSize, stride, padding)
    for i, name in enumerate(("H", "W")):
        if pool.kernel[i] < 2 * pool.padding[i]:
            raise ValueError(f"padding's {name} ({pool.padding[i]}) must be at most half "
                             f"kernel's {name} ({pool.kernel[i]})")
    if cubeMathType not in (0, 1, 2, 3):
        raise ValueError(f"cubeMathType {cubeMathType} must be 0, 1, 2 or 3")
    _shape_is("gradInput", gradInput, self.shape, "self's shape")
    out = tuple(_avg_pool_size(n, pool.kernel[i], pool.padding[i], pool.stride[i], ceilMode)
                for i, n in enumerate(self.shape[-2:]))
    _shape_is("gradOutput", gradOutput, (*self.shape[:-2], *out), "the forward's out shape")


def _avg_pool_backward(gradOutput: np.ndarray, self: np.ndarray, pool: Pool,
                       countIncludePad: bool, divisorOverride: int, gradInput: np.ndarray,
                       rank: int) -> None:
    """Each output gradient divided by its window's divisor and summed back over the window."""
    if gradInput.size == 0:
        return
    if gradOutput.size == 0:
        store(gradInput, np.zeros(gradInput.shape, np.float32))
        return
    grad = widen(gradOutput)
    grad = grad.reshape((-1, 1) + grad.shape[grad.ndim - rank:])
    shape = (grad.shape[0], 1) + self.shape[self.ndim - rank:]
    out = grad.shape[2:]
    divisor = _avg_divisor(shape[2:], pool, out, countIncludePad, divisorOverride)
    share = (grad / np.asarray(divisor, grad.dtype)).astype(grad.dtype)
    contributions = np.broadcast_to(share.reshape(share.shape + (1,) * rank),
                                    share.shape + tuple(pool.kernel))
    store(gradInput, _pool_scatter(contributions, shape, pool).reshape(gradInput.shape))


@builtin("aclnnAvgPool2dBackward", dtypes=FLOATS, check=_avg_pool2d_backward_check)
def avg_pool2d_backward(gradOutput: np.ndarray, self: np.ndarray, kernelSize: tuple[int, ...],
                        stride: tuple[int, ...], padding: tuple[int, ...], ceilMode: bool,
                        countIncludePad: bool, divisorOverride: int, cubeMathType: int,
                        gradInput: np.ndarray) -> None:
    _avg_pool_backward(gradOutput, self, Pool.of(kernelSize, stride, padding), countIncludePad,
                       divisorOverride, gradInput, 2)


def _pool3(kernelSize: tuple[int, ...], stride: tuple[int, ...], padding: tuple[int, ...],
           dilation: tuple[int, ...] = ()) -> Pool:
    kernel = _triple(kernelSize, (1, 1, 1))
    return Pool(kernel, _triple(stride, kernel), _triple(padding, (0, 0, 0)),
                _triple(dilation, (1, 1, 1)))


def _avg_pool3d_shape(self: np.ndarray, kernelSize: tuple[int, ...], stride: tuple[int, ...],
                      padding: tuple[int, ...], ceilMode: bool) -> tuple[int, ...]:
    """ops-nn pooling/avg_pool3_d/op_api/aclnn_avgpool3d.cpp CheckShape: self 4-d or 5-d;
    kernelSize of 1 or 3 values, padding of 1 or 3, stride of 0, 1 or 3; per dim the kernel in
    (0, the input's extent], the stride above 0, the padding in [0, kernel / 2]
    (CheckAttrValue); the out shape of PoolingOutShape: aclnnAvgPool3d's output rule (C's
    division is floor division once those values hold)."""
    if self.ndim not in (4, 5):
        raise ValueError(f"self has {self.ndim} dims; it must have 4 or 5")
    _check_lengths({"kernelSize": (1, 3), "padding": (1, 3), "stride": (0, 1, 3)},
                   {"kernelSize": kernelSize, "padding": padding, "stride": stride})
    pool = _pool3(kernelSize, stride, padding)
    for i, extent in enumerate(self.shape[-3:]):
        kernel, step, pad = pool.kernel[i], pool.stride[i], pool.padding[i]
        if not 0 < kernel <= extent:
            raise ValueError(f"kernelSize's value {kernel} must be in (0, {extent}]")
        if step <= 0:
            raise ValueError(f"stride's value {step} must be above 0")
        if not 0 <= pad <= kernel // 2:
            raise ValueError(f"padding's value {pad} must be in [0, kernel / 2 = {kernel // 2}]")
    return output_shapes("aclnnAvgPool3d", self=self, kernelSize=pool.kernel, stride=pool.stride,
                         padding=pool.padding, ceilMode=ceilMode)["out"]


def _avg_pool3d_check(self: np.ndarray, kernelSize: tuple[int, ...], stride: tuple[int, ...],
                      padding: tuple[int, ...], ceilMode: bool, countIncludePad: bool,
                      divisorOverride: int, out: np.ndarray) -> None:
    """aclnn_avgpool3d.cpp CheckParams: self's dtype and format out's (CheckDtypeValid,
    CheckFormat), then CheckShape (:func:`_avg_pool3d_shape`)."""
    _same_dtype("self", self, out=out)
    if tensor_format(self) != tensor_format(out):
        raise ValueError(f"self has format {_format_name(tensor_format(self))} and out "
                         f"{_format_name(tensor_format(out))}: they must be the same")
    if out.ndim != self.ndim:
        raise ValueError(f"out has {out.ndim} dims; it must have self's {self.ndim}")
    _shape_is("out", out, _avg_pool3d_shape(self, kernelSize, stride, padding, ceilMode),
              "the pooled shape")


@builtin("aclnnAvgPool3d", dtypes=FLOATS, check=_avg_pool3d_check)
def avg_pool3d(self: np.ndarray, kernelSize: tuple[int, ...], stride: tuple[int, ...],
               padding: tuple[int, ...], ceilMode: bool, countIncludePad: bool,
               divisorOverride: int, out: np.ndarray) -> None:
    if self.size == 0 or out.size == 0:
        return
    x = widen(self)
    x = x.reshape((-1, 1) + x.shape[-3:])
    pool = _pool3(kernelSize, stride, padding)
    size = tuple(out.shape[-3:])
    sums = _pool_sums(x, pool, size)
    divisor = _avg_divisor(x.shape[2:], pool, size, countIncludePad, divisorOverride)
    store(out, (sums / np.asarray(divisor, sums.dtype)).reshape(out.shape))


def _avg_pool3d_backward_check(gradOutput: np.ndarray, self: np.ndarray,
                               kernelSize: tuple[int, ...], stride: tuple[int, ...],
                               padding: tuple[int, ...], ceilMode: bool, countIncludePad: bool,
                               divisorOverride: int, output: np.ndarray) -> None:
    """ops-nn pooling/avg_pool3_d_grad/op_api/aclnn_avgpool3d_backward.cpp: gradOutput, self
    and output of one dtype, self 4-d or 5-d, the window's values as for aclnnAvgPool3d,
    gradOutput the forward's out shape, output self's shape."""
    _same_dtype("self", self, gradOutput=gradOutput, output=output)
    _shape_is("gradOutput", gradOutput, _avg_pool3d_shape(self, kernelSize, stride, padding,
                                                          ceilMode), "the forward's out shape")
    _shape_is("output", output, self.shape, "self's shape")


@builtin("aclnnAvgPool3dBackward", dtypes=FLOATS, check=_avg_pool3d_backward_check)
def avg_pool3d_backward(gradOutput: np.ndarray, self: np.ndarray, kernelSize: tuple[int, ...],
                        stride: tuple[int, ...], padding: tuple[int, ...], ceilMode: bool,
                        countIncludePad: bool, divisorOverride: int, output: np.ndarray) -> None:
    _avg_pool_backward(gradOutput, self, _pool3(kernelSize, stride, padding), countIncludePad,
                       divisorOverride, output, 3)


# ---- adaptive average pooling: its gradient, and the 3-d forms -------------------------------


def _adaptive_avg_pool2d_backward_check(gradOutput: np.ndarray, self: np.ndarray,
                                        out: np.ndarray) -> None:
    """ops-nn pooling/adaptive_avg_pool2d_grad/op_api/aclnn_adaptive_avg_pool2d_backward.cpp
    CheckParams: gradOutput of self's rank (CheckInputDims), out 3-d or 4-d of self's rank,
    the leading dims of out and gradOutput self's (CheckInputOutputShape), gradOutput of
    self's dtype (CheckDtypeValid) and format (CheckFormat). out is written with self's
    shape."""
    if gradOutput.ndim != self.ndim:
        raise ValueError(f"gradOutput has {gradOutput.ndim} dims; it must have self's "
                         f"{self.ndim}")
    if out.ndim not in (3, 4) or out.ndim != self.ndim:
        raise ValueError(f"out has {out.ndim} dims; it must have self's, 3 or 4")
    for name, tensor in (("out", out), ("gradOutput", gradOutput)):
        if tensor.shape[:-2] != self.shape[:-2]:
            raise ValueError(f"{name}'s leading dims {list(tensor.shape[:-2])} must be self's "
                             f"{list(self.shape[:-2])}")
    _same_dtype("self", self, gradOutput=gradOutput)
    if tensor_format(gradOutput) != tensor_format(self):
        raise ValueError(f"gradOutput has format {_format_name(tensor_format(gradOutput))} and "
                         f"self {_format_name(tensor_format(self))}: they must be the same")
    _shape_is("out", out, self.shape, "self's shape")


def _adaptive_avg_backward(gradOutput: np.ndarray, out: np.ndarray, rank: int) -> None:
    if out.size == 0:
        return
    if gradOutput.size == 0:
        store(out, np.zeros(out.shape, np.float32))
        return
    store(out, _adaptive_mean(widen(gradOutput), tuple(out.shape[-rank:]), backward=True))


@builtin("aclnnAdaptiveAvgPool2dBackward", dtypes=FLOATS,
         check=_adaptive_avg_pool2d_backward_check)
def adaptive_avg_pool2d_backward(gradOutput: np.ndarray, self: np.ndarray,
                                 out: np.ndarray) -> None:
    # each output's gradient shared equally over its adaptive window
    _adaptive_avg_backward(gradOutput, out, 2)


def _adaptive3d_check(self: np.ndarray, outputSize: tuple[int, ...], out: np.ndarray,
                      name: str = "out") -> None:
    """ops-nn pooling/adaptive_avg_pool3d/op_api/aclnn_adaptive_avg_pool3d.cpp and
    adaptive_max_pool3d/op_api/aclnn_adaptive_max_pool3d.cpp on an Atlas A2: self 4-d or
    5-d, ``name`` of self's rank (CheckInputOutputDims), outputSize of 3 values above 0, and
    ``name`` of self's leading dims then outputSize (CheckOutShape); self and ``name`` of one
    format (CheckFormat)."""
    if self.ndim not in (4, 5):
        raise ValueError(f"self has {self.ndim} dims; it must have 4 or 5")
    if out.ndim != self.ndim:
        raise ValueError(f"{name} has {out.ndim} dims; it must have self's {self.ndim}")
    _check_lengths({"outputSize": (3,)}, {"outputSize": outputSize})
    if min(outputSize) <= 0:
        raise ValueError(f"outputSize {list(outputSize)} must be above 0")
    operator = "aclnnAdaptiveAvgPool3d" if name == "out" else "aclnnAdaptiveMaxPool3d"
    check_output_shapes(operator, {"self": self, "outputSize": outputSize}, {name: out},
                        "it must be self's leading dims, then outputSize,")
    if tensor_format(out) != tensor_format(self):
        raise ValueError(f"self has format {_format_name(tensor_format(self))} and {name} "
                         f"{_format_name(tensor_format(out))}: they must be the same")


def _adaptive_avg_pool3d_check(self: np.ndarray, outputSize: tuple[int, ...],
                               out: np.ndarray) -> None:
    """:func:`_adaptive3d_check`, out of self's dtype, and every dim of self above 0 (the
    batch too on an Atlas A2: CheckInputOutputDims)."""
    _same_dtype("self", self, out=out)
    if 0 in self.shape:
        raise ValueError(f"self has shape {list(self.shape)}: every dim must be above 0")
    _adaptive3d_check(self, outputSize, out)


@builtin("aclnnAdaptiveAvgPool3d", dtypes=FLOATS, check=_adaptive_avg_pool3d_check)
def adaptive_avg_pool3d(self: np.ndarray, outputSize: tuple[int, ...], out: np.ndarray) -> None:
    if self.size == 0 or out.size == 0:
        return
    store(out, _adaptive_mean(widen(self), tuple(out.shape[-3:])))


def _adaptive_avg_pool3d_backward_check(gradOutput: np.ndarray, self: np.ndarray,
                                        out: np.ndarray) -> None:
    """ops-nn pooling/adaptive_avg_pool3d_grad/op_api/aclnn_adaptive_avg_pool3d_backward.cpp on
    an Atlas A2: self 4-d or 5-d, gradOutput and out of its rank, every dim of self above 0
    and out self's shape, gradOutput with self's leading dims and its D, H, W above 0
    (CheckInputDims); float32, float16 and bfloat16, double too when gradOutput's D, H and W
    are all 1, one dtype for all three (CheckDtypeValid); one format (CheckFormat)."""
    if self.ndim not in (4, 5):
        raise ValueError(f"self has {self.ndim} dims; it must have 4 or 5")
    if gradOutput.ndim != self.ndim or out.ndim != self.ndim:
        raise ValueError(f"gradOutput ({gradOutput.ndim}-d), self ({self.ndim}-d) and out "
                         f"({out.ndim}-d) must have one rank")
    if 0 in self.shape:
        raise ValueError(f"self has shape {list(self.shape)}: every dim must be above 0")
    _shape_is("out", out, self.shape, "self's shape")
    if gradOutput.shape[:-3] != self.shape[:-3]:
        raise ValueError(f"gradOutput's leading dims {list(gradOutput.shape[:-3])} must be "
                         f"self's {list(self.shape[:-3])}")
    if min(gradOutput.shape[-3:]) <= 0:
        raise ValueError(f"gradOutput has shape {list(gradOutput.shape)}: its D, H and W must "
                         "be above 0")
    allowed: tuple[str, ...] = ("float32", "float16", "bfloat16")
    if gradOutput.shape[-3:] == (1, 1, 1):
        allowed += ("float64",)
    for name, tensor in (("gradOutput", gradOutput), ("self", self)):
        if tensor.dtype.name not in allowed:
            raise ValueError(f"{name} has dtype {tensor.dtype.name}; it must be one of "
                             f"{', '.join(allowed)}")
    _same_dtype("self", self, gradOutput=gradOutput, out=out)
    for name, tensor in (("gradOutput", gradOutput), ("out", out)):
        if tensor_format(tensor) != tensor_format(self):
            raise ValueError(f"{name} has format {_format_name(tensor_format(tensor))} and self "
                             f"{_format_name(tensor_format(self))}: they must be the same")


@builtin("aclnnAdaptiveAvgPool3dBackward", dtypes=None,
         check=_adaptive_avg_pool3d_backward_check)
def adaptive_avg_pool3d_backward(gradOutput: np.ndarray, self: np.ndarray,
                                 out: np.ndarray) -> None:
    _adaptive_avg_backward(gradOutput, out, 3)


# ---- adaptive max pooling and its gradient ----------------------------------------------------


def _adaptive_max_pool2d_check(self: np.ndarray, outputSize: tuple[int, ...],
                               outputOut: np.ndarray, indicesOut: np.ndarray) -> None:
    """ops-nn pooling/adaptive_max_pool2d/docs/aclnnAdaptiveMaxPool2d.md and its op_api:
    self 3-d or 4-d, outputSize of 2 values above 0, outputOut of self's dtype and of self's
    leading dims then outputSize, indicesOut int64 (the rules) of outputOut's shape."""
    if self.ndim not in (3, 4):
        raise ValueError(f"self has {self.ndim} dims; it must have 3 or 4")
    _check_lengths({"outputSize": (2,)}, {"outputSize": outputSize})
    if min(outputSize) <= 0:
        raise ValueError(f"outputSize {list(outputSize)} must be above 0")
    _same_dtype("self", self, outputOut=outputOut)
    check_output_shapes("aclnnAdaptiveMaxPool2d", {"self": self, "outputSize": outputSize},
                        {"outputOut": outputOut, "indicesOut": indicesOut},
                        "it must be self's leading dims, then outputSize,")


def _adaptive_max_into(self: np.ndarray, sizes: tuple[int, ...], values: np.ndarray,
                  indices: np.ndarray) -> None:
    if self.size == 0 or values.size == 0:
        return
    rank = len(sizes)
    x = widen(self)
    x = x.reshape((-1, 1) + x.shape[x.ndim - rank:])
    best, index = _adaptive_max(x, sizes)
    store(values, best.reshape(values.shape))
    store(indices, index.reshape(indices.shape))


@builtin("aclnnAdaptiveMaxPool2d", dtypes={"self": FLOATS, "outputOut": FLOATS,
                                           "indicesOut": INT64},
         check=_adaptive_max_pool2d_check)
def adaptive_max_pool2d(self: np.ndarray, outputSize: tuple[int, ...], outputOut: np.ndarray,
                        indicesOut: np.ndarray) -> None:
    # the maximum of each adaptive window and its index h W + w in the plane
    _adaptive_max_into(self, tuple(outputSize), outputOut, indicesOut)


def _adaptive_max_pool3d_check(self: np.ndarray, outputSize: tuple[int, ...],
                               outputOut: np.ndarray, indicesOut: np.ndarray) -> None:
    """ops-nn pooling/adaptive_max_pool3d/op_api/aclnn_adaptive_max_pool3d.cpp: as
    aclnnAdaptiveAvgPool3d for self and outputSize; outputOut of self's dtype; self NCDHW or
    NCHW on an Atlas A2 (CheckFormat); indicesOut of outputOut's shape."""
    _same_dtype("self", self, outputOut=outputOut)
    if tensor_format(self) not in (NCDHW, NCHW):
        raise ValueError(f"self has format {_format_name(tensor_format(self))}; it must be "
                         "NCDHW or NCHW")
    _adaptive3d_check(self, outputSize, outputOut, "outputOut")
    _shape_is("indicesOut", indicesOut, outputOut.shape, "outputOut's shape")


@builtin("aclnnAdaptiveMaxPool3d", dtypes={"self": FLOATS, "outputOut": FLOATS,
                                           "indicesOut": INDICES},
         check=_adaptive_max_pool3d_check)
def adaptive_max_pool3d(self: np.ndarray, outputSize: tuple[int, ...], outputOut: np.ndarray,
                        indicesOut: np.ndarray) -> None:
    # the maximum of each adaptive window and its index d H W + h W + w in the plane
    _adaptive_max_into(self, tuple(outputOut.shape[-3:]), outputOut, indicesOut)


def _index_backward_check(gradOutput: np.ndarray, self: np.ndarray, indices: np.ndarray,
                          gradInput: np.ndarray, ranks: tuple[int, ...]) -> None:
    """ops-nn pooling/adaptive_max_pool3d_grad/op_api/adaptive_max_pool_common.cpp CheckParams
    (self, gradOutput, gradInput and indices of one rank, gradOutput indices' shape, gradInput
    self's; gradOutput and gradInput of self's dtype), then aclnn_adaptive_max_pool{2,3}d_
    backward.cpp: one format for all four, self of ``ranks`` dims, self's H W (D H W) at most
    2^31 - 1 elements (CheckSelfShapeSupport)."""
    if len({self.ndim, gradOutput.ndim, gradInput.ndim, indices.ndim}) != 1:
        raise ValueError(f"self ({self.ndim}-d), gradOutput ({gradOutput.ndim}-d), gradInput "
                         f"({gradInput.ndim}-d) and indices ({indices.ndim}-d) must have one rank")
    _shape_is("indices", indices, gradOutput.shape, "gradOutput's shape")
    _shape_is("gradInput", gradInput, self.shape, "self's shape")
    _same_dtype("self", self, gradOutput=gradOutput, gradInput=gradInput)
    for name, tensor in (("gradOutput", gradOutput), ("gradInput", gradInput),
                         ("indices", indices)):
        if tensor_format(tensor) != tensor_format(self):
            raise ValueError(f"{name} has format {_format_name(tensor_format(tensor))} and self "
                             f"{_format_name(tensor_format(self))}: they must be the same")
    if self.ndim not in ranks:
        raise ValueError(f"self has {self.ndim} dims; it must have "
                         f"{' or '.join(str(r) for r in ranks)}")
    plane = int(np.prod(self.shape[-(ranks[0] - 1):]))
    if plane > 2 ** 31 - 1:
        raise ValueError(f"self's planes have {plane} elements: at most 2^31 - 1")


def _index_backward(gradOutput: np.ndarray, indices: np.ndarray, gradInput: np.ndarray,
                    rank: int) -> None:
    if gradInput.size == 0:
        return
    store(gradInput, _scatter_by_index(widen(gradOutput), indices, gradInput.shape, rank))


@builtin("aclnnAdaptiveMaxPool2dBackward", dtypes={"gradOutput": FLOATS, "self": FLOATS,
                                                   "indices": INDICES, "gradInput": FLOATS},
         check=lambda gradOutput, self, indices, gradInput: _index_backward_check(
             gradOutput, self, indices, gradInput, (3, 4)))
def adaptive_max_pool2d_backward(gradOutput: np.ndarray, self: np.ndarray, indices: np.ndarray,
                                 gradInput: np.ndarray) -> None:
    # each output's gradient to the input element its index names, summed where shared
    _index_backward(gradOutput, indices, gradInput, 2)


@builtin("aclnnAdaptiveMaxPool3dBackward", dtypes={"gradOutput": FLOATS, "self": FLOATS,
                                                   "indices": INDICES, "gradInput": FLOATS},
         check=lambda gradOutput, self, indices, gradInput: _index_backward_check(
             gradOutput, self, indices, gradInput, (4, 5)))
def adaptive_max_pool3d_backward(gradOutput: np.ndarray, self: np.ndarray, indices: np.ndarray,
                                 gradInput: np.ndarray) -> None:
    _index_backward(gradOutput, indices, gradInput, 3)


# ---- max pooling with indices: the 2-d gradient, the 3-d forms -------------------------------


def _max_pool2d_indices_backward_check(gradOutput: np.ndarray, self: np.ndarray,
                                       indices: np.ndarray, kernelSize: tuple[int, ...],
                                       stride: tuple[int, ...], padding: tuple[int, ...],
                                       dilation: tuple[int, ...], ceilMode: bool,
                                       gradInput: np.ndarray) -> None:
    """ops-nn pooling/max_pool3d_grad_with_argmax/op_api/
    aclnn_max_pool2d_with_indices_backward.cpp CheckParams on an Atlas A2: gradOutput and
    gradInput of self's dtype (CheckDtypeValid); gradOutput and gradInput of self's format
    (CheckFormat; the private formats the rules refuse); CheckShape:
    kernelSize, padding and dilation of 1 or 2 values, stride of 0 to 2; kernel and stride
    above 0, padding in [0, kernel / 2], dilation 1; gradInput of self's shape; gradOutput and
    indices of the forward's out shape."""
    _same_dtype("self", self, gradOutput=gradOutput, gradInput=gradInput)
    for name, tensor in (("gradOutput", gradOutput), ("gradInput", gradInput)):
        if tensor_format(tensor) != tensor_format(self):
            raise ValueError(f"{name} has format {_format_name(tensor_format(tensor))} and self "
                             f"{_format_name(tensor_format(self))}: they must be the same")
    for name, tensor in (("self", self), ("indices", indices)):
        if tensor_format(tensor) in PRIVATE_FORMATS:
            raise ValueError(f"{name} has the private format "
                             f"{_format_name(tensor_format(tensor))}: ND or NCHW only")
    _check_lengths({"kernelSize": (1, 2), "stride": (0, 1, 2), "padding": (1, 2),
                    "dilation": (1, 2)},
                   {"kernelSize": kernelSize, "stride": stride, "padding": padding,
                    "dilation": dilation})
    pool = Pool.of(kernelSize, stride, padding, dilation)
    if min(pool.kernel) <= 0 or min(pool.stride) <= 0:
        raise ValueError(f"kernel {list(pool.kernel)} and stride {list(pool.stride)} must be "
                         "above 0")
    for i, name in enumerate(("H", "W")):
        if not 0 <= pool.padding[i] <= pool.kernel[i] // 2:
            raise ValueError(f"padding's {name} ({pool.padding[i]}) must be in [0, kernel's "
                             f"{name} // 2 = {pool.kernel[i] // 2}]")
    if pool.dilation != (1, 1):
        raise ValueError(f"dilation {list(pool.dilation)} must be 1")
    if self.ndim not in (3, 4):
        raise ValueError(f"self has {self.ndim} dims; it must have 3 or 4")
    _shape_is("gradInput", gradInput, self.shape, "self's shape")
    wanted = _max_pool_shape(self, pool, ceilMode, False)
    _shape_is("gradOutput", gradOutput, wanted, "the forward's out shape")
    _shape_is("indices", indices, wanted, "the forward's out shape")


@builtin("aclnnMaxPool2dWithIndicesBackward",
         dtypes={"gradOutput": FLOATS, "self": FLOATS, "indices": INDICES,
                 "gradInput": FLOATS},
         check=_max_pool2d_indices_backward_check)
def max_pool2d_with_indices_backward(gradOutput: np.ndarray, self: np.ndarray,
                                     indices: np.ndarray, kernelSize: tuple[int, ...],
                                     stride: tuple[int, ...], padding: tuple[int, ...],
                                     dilation: tuple[int, ...], ceilMode: bool,
                                     gradInput: np.ndarray) -> None:
    # each output's gradient to the element h W + w its index names, summed where shared
    _index_backward(gradOutput, indices, gradInput, 2)


def _max_pool3d_shape(self: np.ndarray, pool: Pool, ceilMode: bool) -> tuple[int, ...]:
    """The 3-d max pool's out shape: aclnnMaxPool3dWithArgmax's output rule (PoolingOutShape,
    a division rounding down, as the 2-d one's)."""
    shape = output_shapes("aclnnMaxPool3dWithArgmax", self=self, kernelSize=pool.kernel,
                          stride=pool.stride, padding=pool.padding, dilation=pool.dilation,
                          ceilMode=ceilMode)["out"]
    out = shape[-3:]
    if min(out) <= 0:
        raise ValueError(f"self {list(self.shape)} pools to {list(out)}: it must be at least "
                         "1 in each dim")
    return (*self.shape[:-3], *out)


def _max_pool3d_window_check(self: np.ndarray, kernelSize: tuple[int, ...],
                             stride: tuple[int, ...], padding: tuple[int, ...],
                             dilation: tuple[int, ...]) -> Pool:
    """ops-nn pooling/max_pool3d_with_argmax_v2/op_api/aclnn_max_pool3d_with_argmax.cpp on an
    Atlas A2: self 4-d or 5-d, none of its C, D, H, W 0; kernelSize, padding and dilation of 1
    or 3 values, stride of 0, 1 or 3; kernel and stride above 0, padding in [0, kernel / 2],
    dilation 1 (the doc's Atlas A2 note)."""
    if self.ndim not in (4, 5):
        raise ValueError(f"self has {self.ndim} dims; it must have 4 or 5")
    if 0 in self.shape[-4:]:
        raise ValueError(f"self has shape {list(self.shape)}: only its batch may be 0")
    _check_lengths({"kernelSize": (1, 3), "stride": (0, 1, 3), "padding": (1, 3),
                    "dilation": (1, 3)},
                   {"kernelSize": kernelSize, "stride": stride, "padding": padding,
                    "dilation": dilation})
    pool = _pool3(kernelSize, stride, padding, dilation)
    if min(pool.kernel) <= 0 or min(pool.stride) <= 0:
        raise ValueError(f"kernel {list(pool.kernel)} and stride {list(pool.stride)} must be "
                         "above 0")
    for i in range(3):
        if not 0 <= pool.padding[i] <= pool.kernel[i] // 2:
            raise ValueError(f"padding {list(pool.padding)} must be in [0, kernel / 2]")
    if pool.dilation != (1, 1, 1):
        raise ValueError(f"dilation {list(pool.dilation)} must be 1")
    return pool


def _max_pool3d_argmax_check(self: np.ndarray, kernelSize: tuple[int, ...],
                             stride: tuple[int, ...], padding: tuple[int, ...],
                             dilation: tuple[int, ...], ceilMode: bool, out: np.ndarray,
                             indices: np.ndarray) -> None:
    """aclnn_max_pool3d_with_argmax.cpp: out of self's dtype; self, out and indices of one
    format (CheckFormat); the window (:func:`_max_pool3d_window_check`); out and indices of
    the pooled shape."""
    _same_dtype("self", self, out=out)
    for name, tensor in (("out", out), ("indices", indices)):
        if tensor_format(tensor) != tensor_format(self):
            raise ValueError(f"{name} has format {_format_name(tensor_format(tensor))} and self "
                             f"{_format_name(tensor_format(self))}: they must be the same")
    pool = _max_pool3d_window_check(self, kernelSize, stride, padding, dilation)
    wanted = _max_pool3d_shape(self, pool, ceilMode)
    _shape_is("out", out, wanted, "the pooled shape")
    _shape_is("indices", indices, wanted, "the pooled shape")


@builtin("aclnnMaxPool3dWithArgmax", dtypes={"self": FLOATS, "out": FLOATS, "indices": INT32},
         check=_max_pool3d_argmax_check)
def max_pool3d_with_argmax(self: np.ndarray, kernelSize: tuple[int, ...],
                           stride: tuple[int, ...], padding: tuple[int, ...],
                           dilation: tuple[int, ...], ceilMode: bool, out: np.ndarray,
                           indices: np.ndarray) -> None:
    # the maximum of each window and its index d H W + h W + w in the plane, picked as
    # aclnnMaxPool2dWithIndices picks it
    if self.size == 0 or out.size == 0:
        return
    x = widen(self)
    x = x.reshape((-1, 1) + x.shape[-3:])
    pool = _pool3(kernelSize, stride, padding, dilation)
    size = tuple(out.shape[-3:])
    values, best = _max_pool_best(x, pool, size)
    store(out, values.reshape(out.shape))
    store(indices, _plane_index(pool, size, best, x.shape[2:]).reshape(indices.shape))


def _max_pool3d_argmax_backward_check(gradOutput: np.ndarray, self: np.ndarray,
                                      indices: np.ndarray, kernelSize: tuple[int, ...],
                                      stride: tuple[int, ...], padding: tuple[int, ...],
                                      dilation: tuple[int, ...], ceilMode: bool,
                                      gradInput: np.ndarray) -> None:
    """ops-nn pooling/max_pool3d_grad_with_argmax/op_api/
    aclnn_max_pool3d_with_argmax_backward.cpp: the window as the forward's, gradOutput and
    gradInput of self's dtype, gradOutput and indices of the forward's out shape, gradInput
    of self's."""
    _same_dtype("self", self, gradOutput=gradOutput, gradInput=gradInput)
    pool = _max_pool3d_window_check(self, kernelSize, stride, padding, dilation)
    wanted = _max_pool3d_shape(self, pool, ceilMode)
    _shape_is("gradOutput", gradOutput, wanted, "the forward's out shape")
    _shape_is("indices", indices, wanted, "the forward's out shape")
    _shape_is("gradInput", gradInput, self.shape, "self's shape")


@builtin("aclnnMaxPool3dWithArgmaxBackward",
         dtypes={"gradOutput": FLOATS, "self": FLOATS, "indices": INT32, "gradInput": FLOATS},
         check=_max_pool3d_argmax_backward_check)
def max_pool3d_with_argmax_backward(gradOutput: np.ndarray, self: np.ndarray,
                                    indices: np.ndarray, kernelSize: tuple[int, ...],
                                    stride: tuple[int, ...], padding: tuple[int, ...],
                                    dilation: tuple[int, ...], ceilMode: bool,
                                    gradInput: np.ndarray) -> None:
    _index_backward(gradOutput, indices, gradInput, 3)


# ---- ONNX's MaxPool -------------------------------------------------------------------------


def _onnx_pads(pads: tuple[int, ...]) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) of MaxPool's pads: one for all, (H, W), or ONNX's
    (top, left, bottom, right)."""
    if not pads:
        return (0, 0, 0, 0)
    if len(pads) == 1:
        return (pads[0],) * 4
    if len(pads) == 2:
        return (pads[0], pads[0], pads[1], pads[1])
    return (pads[0], pads[2], pads[1], pads[3])


def _max_pool_onnx_shape(self: np.ndarray, kernelShape: tuple[int, ...],
                         strides: tuple[int, ...], pads: tuple[int, ...], ceilMode: int
                         ) -> tuple[tuple[int, ...], Pool]:
    kh = kernelShape[0]
    kw = kh if len(kernelShape) == 1 else kernelShape[1]
    sh = strides[0] if strides else 1
    sw = sh if len(strides) == 1 else strides[1] if strides else 1
    if kh <= 0 or kw <= 0:
        raise ValueError(f"kernelShape {list(kernelShape)} must be above 0")
    if sh <= 0 or sw <= 0:
        raise ValueError(f"strides {list(strides)} must be above 0")
    top, bottom, left, right = _onnx_pads(pads)
    if top + bottom > kh or left + right > kw:
        raise ValueError(f"pads {list(pads)}: the two pads of a dim must sum to at most its "
                         f"kernel {[kh, kw]}")
    planes, height, width = self.shape[-3:]
    if 0 in (planes, height, width):
        raise ValueError(f"self has shape {list(self.shape)}: only its batch may be 0")
    shape = output_shapes("aclnnMaxPool", self=self, kernelShape=kernelShape, strides=strides,
                          pads=pads, ceilMode=ceilMode)["out"]
    if min(shape[-2:]) <= 0:
        raise ValueError(f"self {list(self.shape)} pools to {list(shape[-2:])}: it must be at "
                         "least 1x1")
    return shape, Pool((kh, kw), (sh, sw), (top, left))


def _max_pool_onnx_check(self: np.ndarray, kernelShape: tuple[int, ...],
                         strides: tuple[int, ...], autoPad: int, pads: tuple[int, ...],
                         dilations: tuple[int, ...], ceilMode: int, out: np.ndarray) -> None:
    """ops-nn pooling/max_pool_v3/op_api/aclnn_max_pool.cpp CheckParams: self's dtype and
    format out's, NCHW (or ND) of 3 or 4 dims; kernelShape of 1 or 2 values, strides of 0 to
    2, pads of 0, 1, 2 or 4, dilations of 0, 1, 2 or 4; autoPad 0 (NOTSET), dilations 1;
    CheckShape: kernel and strides above 0, each dim's two pads summing to at most its
    kernel, out of PoolingOutShape's shape."""
    _same_dtype("self", self, out=out)
    if tensor_format(self) != tensor_format(out):
        raise ValueError(f"self has format {_format_name(tensor_format(self))} and out "
                         f"{_format_name(tensor_format(out))}: they must be the same")
    if self.ndim not in (3, 4) or out.ndim != self.ndim:
        raise ValueError(f"self ({self.ndim}-d) and out ({out.ndim}-d) must both be 3-d or 4-d")
    _check_lengths({"kernelShape": (1, 2), "strides": (0, 1, 2), "pads": (0, 1, 2, 4),
                    "dilations": (0, 1, 2, 4)},
                   {"kernelShape": kernelShape, "strides": strides, "pads": pads,
                    "dilations": dilations})
    if autoPad != 0:
        raise ValueError(f"autoPad {autoPad} must be 0 (NOTSET)")
    if any(d != 1 for d in dilations):
        raise ValueError(f"dilations {list(dilations)} must be 1")
    wanted, _ = _max_pool_onnx_shape(self, kernelShape, strides, pads, ceilMode)
    _shape_is("out", out, wanted, "the pooled shape")


@builtin("aclnnMaxPool", dtypes=FLOATS, check=_max_pool_onnx_check)
def max_pool(self: np.ndarray, kernelShape: tuple[int, ...], strides: tuple[int, ...],
             autoPad: int, pads: tuple[int, ...], dilations: tuple[int, ...], ceilMode: int,
             out: np.ndarray) -> None:
    # each window's maximum; the padding (top and left first) never wins
    if self.size == 0 or out.size == 0:
        return
    _, pool = _max_pool_onnx_shape(self, kernelShape, strides, pads, ceilMode)
    values, _ = _max_pool_best(_planes(widen(self)), pool, tuple(out.shape[-2:]))
    store(out, values.reshape(out.shape))


# ---- the max-unpooling gradients --------------------------------------------------------------


def _max_unpool_backward_check(gradOutput: np.ndarray, self: np.ndarray, indices: np.ndarray,
                               outputSize: tuple[int, ...], out: np.ndarray, rank: int) -> None:
    """ops-nn index/gather_elements/op_api/aclnn_max_unpool{2,3}d_backward.cpp: gradOutput of
    self's dtype (out is cast to); indices of self's shape; gradOutput with self's leading dims;
    out of self's shape; outputSize gradOutput's last dims (CheckShape); an empty gradOutput
    only with an empty self."""
    _same_dtype("self", self, gradOutput=gradOutput)
    if self.ndim not in (rank + 1, rank + 2):
        raise ValueError(f"self has {self.ndim} dims; it must have {rank + 1} or {rank + 2}")
    if gradOutput.ndim != self.ndim or gradOutput.shape[:-rank] != self.shape[:-rank]:
        raise ValueError(f"gradOutput has shape {list(gradOutput.shape)}: it must have self's "
                         f"rank and leading dims {list(self.shape[:-rank])}")
    _shape_is("indices", indices, self.shape, "self's shape")
    _shape_is("out", out, self.shape, "self's shape")
    if len(outputSize) != rank or tuple(outputSize) != gradOutput.shape[-rank:]:
        raise ValueError(f"outputSize {list(outputSize)} must be {rank} values, gradOutput's "
                         f"last dims {list(gradOutput.shape[-rank:])}")
    if gradOutput.size == 0 and self.size != 0:
        raise ValueError("gradOutput is empty: self must be empty too")


def _max_unpool_backward(gradOutput: np.ndarray, indices: np.ndarray, out: np.ndarray,
                         rank: int) -> None:
    """out = gradOutput at indices, plane by plane (an index outside the plane gives 0)."""
    if out.size == 0:
        return
    grad = widen(gradOutput)
    planes = int(np.prod(out.shape[:-rank]))
    grad = grad.reshape(planes, -1)
    index = np.asarray(indices, np.int64).reshape(planes, -1)
    inside = (index >= 0) & (index < grad.shape[1])
    taken = np.take_along_axis(grad, np.where(inside, index, 0), axis=1)
    store(out, np.where(inside, taken, 0).reshape(out.shape))


@builtin("aclnnMaxUnpool2dBackward", dtypes={"indices": INDICES},  # the rest: the rules
         check=lambda gradOutput, self, indices, outputSize, out: _max_unpool_backward_check(
             gradOutput, self, indices, outputSize, out, 2))
def max_unpool2d_backward(gradOutput: np.ndarray, self: np.ndarray, indices: np.ndarray,
                          outputSize: tuple[int, ...], out: np.ndarray) -> None:
    _max_unpool_backward(gradOutput, indices, out, 2)


def _max_unpool3d_backward_check(gradOutput: np.ndarray, self: np.ndarray, indices: np.ndarray,
                                 outputSize: tuple[int, ...], stride: tuple[int, ...],
                                 padding: tuple[int, ...], out: np.ndarray) -> None:
    """As the 2-d one's, then ops-nn common/inc/op_api/level2_base.h
    CheckIntArrayShapeMaxUnPool3D: outputSize, stride and padding of 3 values, stride and
    outputSize above 0, outputSize holding at least self's D H W elements."""
    _max_unpool_backward_check(gradOutput, self, indices, outputSize, out, 3)
    _check_lengths({"stride": (3,), "padding": (3,)}, {"stride": stride, "padding": padding})
    if min(stride) <= 0 or min(outputSize) <= 0:
        raise ValueError(f"stride {list(stride)} and outputSize {list(outputSize)} must be "
                         "above 0")
    if int(np.prod(outputSize)) < int(np.prod(self.shape[-3:])):
        raise ValueError(f"outputSize {list(outputSize)} must hold at least self's "
                         f"{list(self.shape[-3:])} elements")


@builtin("aclnnMaxUnpool3dBackward", dtypes={"indices": INDICES},  # the rest: the rules
         check=lambda gradOutput, self, indices, outputSize, stride, padding, out:
         _max_unpool3d_backward_check(gradOutput, self, indices, outputSize, stride, padding,
                                      out))
def max_unpool3d_backward(gradOutput: np.ndarray, self: np.ndarray, indices: np.ndarray,
                          outputSize: tuple[int, ...], stride: tuple[int, ...],
                          padding: tuple[int, ...], out: np.ndarray) -> None:
    _max_unpool_backward(gradOutput, indices, out, 3)


# ---- MaxPool3D: TensorFlow-style 3-d max pooling (ops-nn experimental) ----------------------
#
# hicann ops-nn experimental/pooling/max_pool3_d/docs/aclnnMaxPool3D.md: y(n, c, od, oh, ow) =
# max of x over the window of ksize, strides, padding, pads and dilation; padding takes no part.
# op_host/op_api/aclnn_max_pool3_d.cpp CheckParams: x float16, float32 or bfloat16, out x's
# dtype; pads default six zeros, dilation ones, dataFormatOptional "NDHWC" (else "NCDHW").
# The output geometry is aclnn_py.ops.outputs.max_pool3d_geometry's (op_host/
# max_pool3_d_infershape.cpp); a failure there is l0op::MaxPool3D's nullptr: 561103.
def _max_pool3d_geometry(*arguments: Any) -> tuple[bool, list[tuple[int, int, int, int, int]]]:
    try:
        return max_pool3d_geometry(*arguments)
    except ValueError as error:  # l0op::MaxPool3D's infershape failed: nullptr
        raise Refusal(str(error), INNER_NULLPTR) from None


def _max_pool3d_check(x: np.ndarray, ksize: tuple[int, ...], strides: tuple[int, ...],
                      padding: str, padsOptional: Any, dilationOptional: Any, ceilMode: int,
                      dataFormatOptional: Any, out: np.ndarray) -> None:
    if out.dtype != x.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}; it must be x's {x.dtype.name}")
    if x.size == 0 or out.size == 0:
        return  # the op_api returns before inferring
    _max_pool3d_geometry(x.shape, ksize, strides, padding, padsOptional, dilationOptional,
                         ceilMode, dataFormatOptional)
    check_output_shapes("aclnnMaxPool3D", {"x": x, "ksize": ksize, "strides": strides,
                                           "padding": padding, "padsOptional": padsOptional,
                                           "dilationOptional": dilationOptional,
                                           "ceilMode": ceilMode,
                                           "dataFormatOptional": dataFormatOptional},
                        {"out": out})


@builtin("aclnnMaxPool3D", dtypes=Dtypes(("float16", "float32", "bfloat16")),
         check=_max_pool3d_check)
def max_pool3d(x: np.ndarray, ksize: tuple[int, ...], strides: tuple[int, ...], padding: str,
               padsOptional: Any, dilationOptional: Any, ceilMode: int, dataFormatOptional: Any,
               out: np.ndarray) -> None:
    """The maximum over each window, padding (-inf) taking no part; NaN propagates."""
    if x.size == 0 or out.size == 0:
        return
    last, geometry = _max_pool3d_geometry(x.shape, ksize, strides, padding, padsOptional,
                                          dilationOptional, ceilMode, dataFormatOptional)
    value = np.asarray(widen(x))
    value = np.moveaxis(value, 4, 1) if last else value  # as NCDHW
    widths = []
    for i, (k, s, d, before, count) in enumerate(geometry):
        size = value.shape[2 + i]
        span = d * (k - 1) + 1
        needed = (count - 1) * s + span if count else 0
        widths.append((before, max(needed - before - size, 0)))
    padded = np.pad(value, ((0, 0), (0, 0), *widths), constant_values=-np.inf)
    result = padded
    for i, (k, s, d, _before, count) in enumerate(geometry):
        axis = 2 + i
        span = d * (k - 1) + 1
        windows = np.lib.stride_tricks.sliding_window_view(result, span, axis=axis)
        windows = np.take(windows, np.arange(count) * s, axis=axis)[..., ::d]
        result = windows.max(axis=-1)  # separable: the max over a box is max of maxes
    result = np.moveaxis(result, 1, 4) if last else result
    store(out, result)
