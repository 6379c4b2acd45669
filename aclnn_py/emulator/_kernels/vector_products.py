"""Products of vectors from ops-math's ``math/`` directory: the outer product (ger), its scaled
sum with a matrix (addr), and the cross product of 3-vectors along a dimension.

The operands promote as PyTorch's ``promote_types``; float16 and bfloat16 compute in float32
and are rounded once into out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import broadcasts_to, store
from .elementwise import compute_dtype, promote_types, register


def _outer_check(**arguments: Any) -> None:
    vectors = [v for v in arguments.values() if isinstance(v, np.ndarray)][:-1]
    out = list(arguments.values())[-1]
    first, second = vectors[-2], vectors[-1]
    for name, vector in (("the first vector", first), ("the second vector", second)):
        if vector.ndim != 1:
            raise ValueError(f"{name} has {vector.ndim} dimensions: it must have 1")
    if out.shape != (first.shape[0], second.shape[0]):
        raise ValueError(f"out has shape {out.shape}; the outer product of vectors of "
                         f"{first.shape[0]} and {second.shape[0]} elements has "
                         f"{(first.shape[0], second.shape[0])}")


@register("aclnnGer", check=_outer_check)
def ger(self: np.ndarray, vec2: np.ndarray, out: np.ndarray) -> None:
    """out[i, j] = self[i] vec2[j] (ops-math math/ger/docs/aclnnGer.md)."""
    dtype = compute_dtype(promote_types(self.dtype, vec2.dtype))
    store(out, np.outer(self.astype(dtype), vec2.astype(dtype)))


def _addr_check(self: np.ndarray, vec1: np.ndarray, vec2: np.ndarray, betaOptional: Any,
                alphaOptional: Any, out: np.ndarray) -> None:
    """ops-math math/addr/op_api/aclnn_addr.cpp: CheckBetaAndAlphaDtyeValid (a bool beta or
    alpha only for a bool result; no floating beta or alpha with integral tensors), CheckShape
    (1-d vectors; self broadcasts to the outer product's shape, is that shape in place); out is
    checked only when neither vector is empty (an empty one returns before the product)."""
    result = promote_types(promote_types(self.dtype, vec1.dtype), vec2.dtype)
    integral = all(t.dtype.kind in "biu" for t in (self, vec1, vec2))
    for name, scalar in (("betaOptional", betaOptional), ("alphaOptional", alphaOptional)):
        if scalar is None:
            continue
        kind = np.asarray(scalar).dtype.kind
        if kind == "b" and result.kind != "b":
            raise ValueError(f"{name} is bool: a bool scalar takes only a bool result")
        if integral and kind not in "biu":
            raise ValueError(f"{name} is {np.asarray(scalar).dtype}: integral tensors take no "
                             "floating scalar")
    for name, vector in (("vec1", vec1), ("vec2", vec2)):
        if vector.ndim != 1:
            raise ValueError(f"{name} has {vector.ndim} dimensions: it must have 1")
    outer = (vec1.shape[0], vec2.shape[0])
    if not broadcasts_to(self.shape, outer) or (self is out and self.shape != outer):
        raise ValueError(f"self has shape {self.shape}, which does not broadcast to the outer "
                         f"product's {outer}")
    if vec1.size and vec2.size:
        _outer_check(vec1=vec1, vec2=vec2, out=out)


@register("aclnnAddr", check=_addr_check)
def addr(self: np.ndarray, vec1: np.ndarray, vec2: np.ndarray, betaOptional: Any,
         alphaOptional: Any, out: np.ndarray) -> None:
    """beta self + alpha (vec1 outer vec2) (ops-math math/addr/docs/aclnnAddr&aclnnInplaceAddr.md),
    beta and alpha 1 when left out; with beta 0, self is not read (its NaN does not pass), as
    in PyTorch's addr."""
    if vec1.size == 0 or vec2.size == 0:
        return
    dtype = compute_dtype(promote_types(promote_types(self.dtype, vec1.dtype), vec2.dtype))
    beta = 1 if betaOptional is None else betaOptional
    alpha = 1 if alphaOptional is None else alphaOptional
    kind = dtype.type
    product = np.outer(vec1.astype(dtype), vec2.astype(dtype))
    if dtype.kind == "b":
        result = np.logical_or(np.logical_and(bool(beta), self.astype(bool)),
                               np.logical_and(bool(alpha), product))
    else:
        result = kind(alpha) * product
        if beta != 0:
            result = result + kind(beta) * self.astype(dtype)
    store(out, np.broadcast_to(result, out.shape))


def _cross_axis(self: np.ndarray, other: np.ndarray, dim: int, rank: int) -> int:
    """The broadcast shape's axis dim names (ops-math math/cross/op_api/aclnn_linalg_cross.cpp
    aclnnLinalgCrossGetWorkspaceSize): dim counts in self, so a non-negative dim moves by the
    dimensions broadcasting adds in front of a self of fewer dimensions than other."""
    axis = dim
    if self.shape != other.shape and dim >= 0 and self.ndim < other.ndim:
        axis += other.ndim - self.ndim
    return axis + rank if axis < 0 else axis


def _cross_check(self: np.ndarray, other: np.ndarray, dim: int, out: np.ndarray) -> None:
    """CheckParams (dim within self's dimensions, out the broadcast shape), then, unless out is
    empty, the size-3 check on the broadcast shape: ops-math math/cross/op_api/
    aclnn_linalg_cross.cpp."""
    try:
        shape = np.broadcast_shapes(self.shape, other.shape)
    except ValueError:
        raise ValueError(f"self {self.shape} and other {other.shape} do not broadcast") from None
    if out.shape != shape:
        raise ValueError(f"out has shape {out.shape}, the broadcast shape is {shape}")
    if not -self.ndim <= dim < self.ndim:
        raise ValueError(f"dim {dim} is out of range for self's {self.ndim} dimensions")
    if out.size == 0:
        return
    if shape[_cross_axis(self, other, dim, len(shape))] != 3:
        raise ValueError(f"dim {dim} must name a dimension of size 3 of the shape {shape}")


@register("aclnnLinalgCross", check=_cross_check)
def linalg_cross(self: np.ndarray, other: np.ndarray, dim: int, out: np.ndarray) -> None:
    """The cross product of the 3-vectors along dim (ops-math math/cross/docs/
    aclnnLinalgCross.md), after broadcasting."""
    if out.size == 0:
        return
    dtype = compute_dtype(promote_types(self.dtype, other.dtype))
    a, b = np.broadcast_arrays(self.astype(dtype), other.astype(dtype))
    store(out, np.cross(a, b, axis=_cross_axis(self, other, dim, out.ndim)))
