"""The quantisation family: ``AscendQuant`` and ``AscendQuantV3`` (floats to int8) and
``AscendAntiQuant`` (int8 to float16 or bfloat16).

Formulas (hicann ops-nn quant/ascend_quant_v2/docs/aclnnAscendQuant.md and
quant/ascend_anti_quant_v2/docs/aclnnAscendAntiQuant.md)::

    AscendQuant:      y = round(x * scale + offset)        (x * scale * scale when sqrtMode)
    AscendAntiQuant:  y = cast((x + offset) * scale)       (scale * scale when sqrtMode)

``AscendQuantV3`` (quant/ascend_quant_v2/docs/aclnnAscendQuantV3.md) has AscendQuant's formula
with ``scale`` and ``offset`` laid along ``x``'s dimension ``axis`` (one of the last two, as
op_api/aclnn_ascend_quant_v3.cpp CheckAxis checks). All compute in float32. AscendQuant
rounds as its roundMode says ("round" to nearest, ties to even, as the kernel's CAST_RINT of
ops-nn quant/ascend_quant_v2/op_kernel/ascend_quant_v2.h CastOut; "floor", "ceil", "trunc")
and saturates into int8. ``scale`` and ``offset`` broadcast against ``x`` as numpy
broadcasts; the other layouts the docs allow (a 1-d scale along ``x``'s axis -2 for
AscendAntiQuant) and the packed dtypes (int4, int32 holding eight int4) are not computed:
such a call stops at phase 1 with 561003 as an uncomputed operator does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.dtypes import Dtypes
from . import NO_KERNEL, Refusal, broadcasts_to, store, widen
from .elementwise import FLOATS, register

_ROUNDING = {"round": np.rint, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}
# dstType, an aclDataType: 2 INT8 (aclnnAscendQuant.md), 1 FLOAT16 and 27 BFLOAT16
# (aclnnAscendAntiQuant.md)
_QUANT_OUT = {2: "int8"}
_QUANT_PACKED = (3, 29)  # INT32 (eight int4 each) and INT4, not computed
_ANTI_QUANT_OUT = {1: "float16", 27: "bfloat16"}


def _broadcasts(x: np.ndarray, **factors: np.ndarray | None) -> None:
    for name, factor in factors.items():
        if factor is None or broadcasts_to(factor.shape, x.shape):
            continue
        if factor.ndim == 1 and x.ndim >= 2 and factor.shape[0] == x.shape[-2]:
            raise Refusal(f"{name} {list(factor.shape)} along x's axis -2 is not computed",
                          NO_KERNEL)
        raise ValueError(f"{name} {list(factor.shape)} does not broadcast to x "
                         f"{list(x.shape)}")


def _out_dtype(out: np.ndarray, dstType: int, wanted: dict[int, str]) -> None:
    if wanted is _QUANT_OUT and int(dstType) in _QUANT_PACKED:
        raise Refusal(f"dstType {dstType}, a packed int4 output, is not computed", NO_KERNEL)
    name = wanted.get(int(dstType))
    if name is None:
        raise ValueError(f"dstType {dstType} is not one of {sorted(wanted)}")
    if out.dtype.name != name:
        raise ValueError(f"out has dtype {out.dtype.name}; dstType {dstType} asks for {name}")


def _quant_check(x: np.ndarray, scale: np.ndarray, offset: np.ndarray | None, sqrtMode: bool,
                 roundMode: str | None, dstType: int, y: np.ndarray) -> None:
    # ops-nn quant/ascend_quant_v2/op_host/op_api/aclnn_ascend_quant.cpp CheckRoundMode
    if roundMode not in _ROUNDING:
        raise ValueError(f"roundMode {roundMode!r} is not one of 'round', 'floor', 'ceil', "
                         "'trunc'")
    # aclnn_ascend_quant.cpp CheckDtypeCompatible: a float16 or bfloat16 x takes a scale of
    # its own dtype
    # CheckDtypeValid: OP_CHECK_DTYPE_NOT_SAME(scale, offset)
    if offset is not None and offset.dtype != scale.dtype:
        raise ValueError(f"offset has dtype {offset.dtype.name}; it must be scale's, "
                         f"{scale.dtype.name}")
    if x.dtype != np.float32 and scale.dtype != x.dtype:
        raise ValueError(f"x of dtype {x.dtype.name} needs a scale of its dtype, not "
                         f"{scale.dtype.name}")
    _out_dtype(y, dstType, _QUANT_OUT)
    if y.shape != x.shape:
        raise ValueError(f"y has shape {list(y.shape)}; it must be x's, {list(x.shape)}")
    _broadcasts(x, scale=scale, offset=offset)


@register("aclnnAscendQuant", dtypes=FLOATS, check=_quant_check)
def ascend_quant(x: np.ndarray, scale: np.ndarray, offset: np.ndarray | None, sqrtMode: bool,
                 roundMode: str, dstType: int, y: np.ndarray) -> None:
    factor = widen(scale).astype(np.float32)
    if sqrtMode:
        factor = factor * factor
    value = widen(x).astype(np.float32) * factor
    if offset is not None:
        value = value + widen(offset).astype(np.float32)
    rounded = _ROUNDING[roundMode](value)
    info = np.iinfo(np.int8)
    store(y, np.clip(rounded, info.min, info.max))


def _anti_quant_check(x: np.ndarray, scale: np.ndarray, offset: np.ndarray | None,
                      dstType: int, sqrtMode: bool, y: np.ndarray) -> None:
    # aclnnAscendAntiQuant.md: dstType 1 (FLOAT16) or 27 (BFLOAT16), out of x's shape
    _out_dtype(y, dstType, _ANTI_QUANT_OUT)
    if y.shape != x.shape:
        raise ValueError(f"y has shape {list(y.shape)}; it must be x's, {list(x.shape)}")
    _broadcasts(x, scale=scale, offset=offset)


@register("aclnnAscendAntiQuant",
          dtypes={"x": Dtypes(("int8",)), "scale": Dtypes(("float32", "bfloat16")),
                  "offset": Dtypes(("float32", "bfloat16"))},
          check=_anti_quant_check)
def ascend_anti_quant(x: np.ndarray, scale: np.ndarray, offset: np.ndarray | None,
                      dstType: int, sqrtMode: bool, y: np.ndarray) -> None:
    value: Any = x.astype(np.float32)
    if offset is not None:
        value = value + widen(offset).astype(np.float32)
    factor = widen(scale).astype(np.float32)
    if sqrtMode:
        factor = factor * factor
    store(y, value * factor)


def _along(factor: np.ndarray | None, x: np.ndarray, axis: int) -> np.ndarray | None:
    """A 1-d ``factor`` laid along ``x``'s dimension ``axis`` (a scale of AscendQuantV3)."""
    if factor is None or factor.ndim != 1 or x.ndim < 2:
        return factor
    shape = [1] * x.ndim
    shape[axis] = factor.shape[0]
    return factor.reshape(shape)


def _quant_v3_check(x: np.ndarray, scale: np.ndarray, offset: np.ndarray | None, sqrtMode: bool,
                    roundMode: str | None, dstType: int, axis: int, y: np.ndarray) -> None:
    # ops-nn quant/ascend_quant_v2/op_host/op_api/aclnn_ascend_quant_v3.cpp CheckAxis: within
    # x's rank, one of its last two dimensions
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} exceeds the rank of x, {x.ndim}")
    if axis < -2 or 0 <= axis < x.ndim - 2:
        raise ValueError(f"axis {axis} must be one of the last two dimensions of x")
    _quant_check(x, _along(scale, x, axis), _along(offset, x, axis), sqrtMode,  # type: ignore[arg-type]
                 roundMode, dstType, y)


@register("aclnnAscendQuantV3", dtypes=FLOATS, check=_quant_v3_check)
def ascend_quant_v3(x: np.ndarray, scale: np.ndarray, offset: np.ndarray | None,
                    sqrtMode: bool, roundMode: str, dstType: int, axis: int,
                    y: np.ndarray) -> None:
    ascend_quant(x, _along(scale, x, axis), _along(offset, x, axis),
                 sqrtMode, roundMode, dstType, y)
