"""Root-mean-square normalisation kernels: aclnnRmsNorm, aclnnGemmaRmsNorm, aclnnAddRmsNorm and
aclnnInplaceAddRmsNorm.

Both normalise x over gamma's dimensions (x's last ones) by rstd = 1 / sqrt(mean(x^2) + eps)
and scale by gamma (RmsNorm) or 1 + gamma (GemmaRmsNorm), as ops-nn norm/rms_norm/docs/
aclnnRmsNorm.md and norm/gemma_rms_norm/docs/aclnnGemmaRmsNorm.md define them; AddRmsNorm
first adds x1 and x2 (norm/add_rms_norm/docs/aclnnAddRmsNorm.md). float16 and bfloat16
compute in float32 and round once into each output; rstdOut is float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.dtypes import Dtypes
from . import store, widen
from .elementwise import BLOCK, FLOATS
from .elementwise import register as builtin

_DTYPES: dict[str, Dtypes] = {"x": FLOATS, "gamma": FLOATS}


def _rms_norm_check(x: np.ndarray, gamma: np.ndarray, epsilon: float, yOut: np.ndarray,
                    rstdOut: np.ndarray) -> None:
    """The shapes of ops-nn norm/rms_norm/docs/aclnnRmsNorm.md (the same in
    norm/gemma_rms_norm/docs/aclnnGemmaRmsNorm.md): gamma is x's last dimensions
    (x_shape[n:], n < x's rank); yOut has x's shape; rstdOut has x's rank, gamma's
    dimensions as ones."""
    count = gamma.ndim
    if count == 0 or count > x.ndim or \
            tuple(x.shape[x.ndim - count:]) != tuple(gamma.shape):
        raise ValueError(f"gamma has shape {gamma.shape}: it must be the last dimensions of x, "
                         f"whose shape is {x.shape}")
    if yOut.shape != x.shape:
        raise ValueError(f"yOut has shape {yOut.shape}: it must be x's shape {x.shape}")
    expected = x.shape[:x.ndim - count] + (1,) * count
    if rstdOut.shape != expected:
        raise ValueError(f"rstdOut has shape {rstdOut.shape}: it must be {expected} (x's "
                         "leading dimensions, then ones)")
    if rstdOut.dtype != np.float32:
        raise ValueError(f"rstdOut has dtype {rstdOut.dtype.name}: it must be float32")


def _rms_norm(x: Any, gamma: np.ndarray, epsilon: float, yOut: np.ndarray,
              rstdOut: Any, offset: float) -> None:
    """y = x rstd (gamma + offset), rows in cache-sized blocks, float32 for 16-bit inputs."""
    if x.size == 0:
        return
    length = gamma.size
    dtype = np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)
    rows = np.ascontiguousarray(x).reshape(-1, length)  # x: float32 already for AddRmsNorm
    scale = widen(gamma).reshape(-1).astype(dtype) + dtype.type(offset)
    result = np.empty(rows.shape, dtype)
    rstds = np.empty((rows.shape[0], 1), dtype)
    step = max(1, BLOCK // max(length, 1))
    for start in range(0, rows.shape[0], step):
        block = rows[start:start + step].astype(dtype)
        rstd = np.asarray(np.mean(np.square(block), axis=1, keepdims=True, dtype=dtype))
        np.add(rstd, dtype.type(epsilon), out=rstd)
        np.sqrt(rstd, out=rstd)
        np.reciprocal(rstd, out=rstd)
        target = result[start:start + block.shape[0]]
        np.multiply(block, rstd, out=target)
        np.multiply(target, scale, out=target)
        rstds[start:start + block.shape[0]] = rstd
    store(yOut, result.reshape(yOut.shape))
    if rstdOut is not None:
        store(rstdOut, rstds.reshape(rstdOut.shape))


@builtin("aclnnRmsNorm", dtypes=_DTYPES, check=_rms_norm_check)
def rms_norm(x: np.ndarray, gamma: np.ndarray, epsilon: float, yOut: np.ndarray,
             rstdOut: np.ndarray) -> None:
    """x / sqrt(mean(x^2) + epsilon) gamma over gamma's dimensions."""
    _rms_norm(x, gamma, epsilon, yOut, rstdOut, 0.0)


@builtin("aclnnGemmaRmsNorm", dtypes=_DTYPES, check=_rms_norm_check)
def gemma_rms_norm(x: np.ndarray, gamma: np.ndarray, epsilon: float, yOut: np.ndarray,
                   rstdOut: np.ndarray) -> None:
    """x / sqrt(mean(x^2) + epsilon) (1 + gamma) over gamma's dimensions."""
    _rms_norm(x, gamma, epsilon, yOut, rstdOut, 1.0)


def _add_rms_norm_check(x1: np.ndarray, x2: np.ndarray, gamma: np.ndarray, epsilon: float,
                        yOut: np.ndarray, rstdOut: Any, xOut: Any) -> None:
    """ops-nn norm/add_rms_norm/docs/aclnnAddRmsNorm.md: x1, x2, gamma, yOut and xOut have one
    dtype (its table of combinations); x2, yOut and xOut have x1's shape; gamma is x1's last
    dimensions and rstdOut x1's leading ones followed by ones, as for aclnnRmsNorm."""
    for name, value in (("x2", x2), ("gamma", gamma), ("yOut", yOut), ("xOut", xOut)):
        if value is not None and value.dtype != x1.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be x1's dtype "
                             f"{x1.dtype.name}")
    for name, value in (("x2", x2), ("xOut", xOut)):
        if value is not None and value.shape != x1.shape:
            raise ValueError(f"{name} has shape {value.shape}: it must be x1's shape "
                             f"{x1.shape}")
    count = gamma.ndim
    if count == 0 or count > x1.ndim or tuple(x1.shape[x1.ndim - count:]) != gamma.shape:
        raise ValueError(f"gamma has shape {gamma.shape}: it must be the last dimensions of "
                         f"x1, whose shape is {x1.shape}")
    if yOut.shape != x1.shape:
        raise ValueError(f"yOut has shape {yOut.shape}: it must be x1's shape {x1.shape}")
    expected = x1.shape[:x1.ndim - count] + (1,) * count
    if rstdOut is not None and (rstdOut.shape != expected or rstdOut.dtype != np.float32):
        raise ValueError(f"rstdOut is {rstdOut.dtype.name} of shape {rstdOut.shape}: it must "
                         f"be float32 of shape {expected}")


@builtin("aclnnAddRmsNorm", dtypes=FLOATS, check=_add_rms_norm_check)
def add_rms_norm(x1: np.ndarray, x2: np.ndarray, gamma: np.ndarray, epsilon: float,
                 yOut: np.ndarray, rstdOut: Any, xOut: Any) -> None:
    """x = x1 + x2 (into xOut), then aclnnRmsNorm of x."""
    dtype = np.float64 if x1.dtype == np.float64 else np.float32
    x = np.add(x1.astype(dtype), x2.astype(dtype))
    if xOut is not None:
        store(xOut, x)
    _rms_norm(x, gamma, epsilon, yOut, rstdOut, 0.0)


def _inplace_add_rms_norm_check(x1Ref: np.ndarray, x2Ref: np.ndarray, gamma: np.ndarray,
                                epsilon: float, rstdOut: np.ndarray) -> None:
    """aclnnAddRmsNorm's check, x1Ref standing for yOut and x2Ref for xOut (ops-nn
    norm/inplace_add_rms_norm/docs/aclnnInplaceAddRmsNorm.md)."""
    _add_rms_norm_check(x1Ref, x2Ref, gamma, epsilon, x1Ref, rstdOut, x2Ref)


@builtin("aclnnInplaceAddRmsNorm", dtypes=FLOATS, check=_inplace_add_rms_norm_check)
def inplace_add_rms_norm(x1Ref: np.ndarray, x2Ref: np.ndarray, gamma: np.ndarray,
                         epsilon: float, rstdOut: np.ndarray) -> None:
    """x = x1Ref + x2Ref into x2Ref, its RmsNorm into x1Ref, rstd = 1 / Rms(x) into rstdOut
    (the operator's definition in ops-nn norm/inplace_add_rms_norm/op_graph/
    inplace_add_rms_norm_proto.h; the inputs are read before either is written)."""
    add_rms_norm(x1Ref.copy(), x2Ref.copy(), gamma, epsilon, x1Ref, rstdOut, x2Ref)
