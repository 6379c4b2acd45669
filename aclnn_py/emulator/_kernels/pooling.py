"""Pooling kernels whose windows follow the output's size: adaptive average pooling.

The fixed-window pools (MaxPool2dWithIndices, AvgPool2d, ...) live in :mod:`.nn`.
"""

from __future__ import annotations

import numpy as np

from . import store, tensor_format, widen
from .elementwise import FLOATS
from .elementwise import register as builtin
from .nn import NCHW, NCL, _format_name


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
    equal to out's)."""
    if self.ndim not in (3, 4):
        raise ValueError(f"self has {self.ndim} dims; it must have 3 or 4")
    if out.ndim != self.ndim:
        raise ValueError(f"out has {out.ndim} dims; it must have self's {self.ndim}")
    if out.shape[:-2] != self.shape[:-2]:
        raise ValueError(f"out's leading dims {out.shape[:-2]} must equal self's "
                         f"{self.shape[:-2]}")
    wanted = NCL if self.ndim == 3 else NCHW
    for name, tensor in (("self", self), ("out", out)):
        if tensor_format(tensor) != wanted:
            raise ValueError(f"{name} has format {_format_name(tensor_format(tensor))}; a "
                             f"{self.ndim}-d self and its out must be {_format_name(wanted)}")
    if len(outputSize) != 2:
        raise ValueError(f"outputSize has {len(outputSize)} values; it must have 2")
    if any(size <= 0 for size in outputSize) or tuple(outputSize) != out.shape[-2:]:
        raise ValueError(f"outputSize {tuple(outputSize)} must be above 0 and equal out's H "
                         f"and W {out.shape[-2:]}")


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
