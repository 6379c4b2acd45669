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
from . import (
    INNER_NULLPTR,
    NO_KERNEL,
    Refusal,
    broadcasts_to,
    check_output_shapes,
    store,
    tensor_format,
    widen,
)
from .elementwise import FLOATS, register
from .matmul import FRACTAL_NZ, weight

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
    packed = int(dstType) == 3
    if packed:
        _packed_shape(x, y)
    else:
        _out_dtype(y, dstType, _QUANT_OUT)
        if y.shape != x.shape:
            raise ValueError(f"y has shape {list(y.shape)}; it must be x's, {list(x.shape)}")
    _broadcasts(x, scale=scale, offset=offset)
    if packed:
        raise Refusal(f"dstType {dstType}, a packed int4 output, is not computed", NO_KERNEL)


def _packed_shape(x: np.ndarray, y: np.ndarray) -> None:
    """An int32 y holding eight int4 each: dstType names y's dtype, y has x's dimensions but
    the last, an eighth of x's (ops-nn quant/ascend_quant_v2/op_host/op_api/
    aclnn_ascend_quant.cpp CheckDtypeValid, CheckInt32OutputShape), checked before the refusal
    of the packed output so that a wrong shape is refused as CANN does."""
    if y.dtype != np.int32:
        raise ValueError(f"y has dtype {y.dtype.name}; dstType 3 asks for int32")
    if x.ndim == 0:
        raise ValueError("an int32 y (eight int4 each) takes no 0-d x")
    if y.ndim != x.ndim or y.shape[:-1] != x.shape[:-1] or y.shape[-1] * 8 != x.shape[-1]:
        raise ValueError(f"y has shape {list(y.shape)}; an int32 y of eight int4 each must "
                         f"have x's {list(x.shape)} with an eighth of its last dimension")


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
    # CheckDim: offset of scale's shape; scale 1-d or of x's rank, of x's size or 1 along axis
    # and 1 elsewhere
    if offset is not None and offset.shape != scale.shape:
        raise ValueError(f"offset has shape {list(offset.shape)}; it must be scale's, "
                         f"{list(scale.shape)}")
    if scale.ndim not in (1, x.ndim):
        raise ValueError(f"scale has {scale.ndim} dimensions; it must have 1 or x's {x.ndim}")
    along = scale.shape[0 if scale.ndim == 1 else axis]
    if along not in (1, x.shape[axis]) or scale.size != along:
        raise ValueError(f"scale {list(scale.shape)} must have x's size {x.shape[axis]} or 1 "
                         f"along axis {axis} and 1 elsewhere")
    _quant_check(x, _along(scale, x, axis), _along(offset, x, axis), sqrtMode,  # type: ignore[arg-type]
                 roundMode, dstType, y)


@register("aclnnAscendQuantV3", dtypes=FLOATS, check=_quant_v3_check)
def ascend_quant_v3(x: np.ndarray, scale: np.ndarray, offset: np.ndarray | None,
                    sqrtMode: bool, roundMode: str, dstType: int, axis: int,
                    y: np.ndarray) -> None:
    ascend_quant(x, _along(scale, x, axis), _along(offset, x, axis),
                 sqrtMode, roundMode, dstType, y)


# ---- TransQuantParamV2 / V3: float32 scales (and offsets) packed into uint64 ------------------

# hicann ops-nn quant/trans_quant_param_v2/op_kernel/trans_quant_param_v2.h: the scale flag
# (bit 46), roundMode 0 keeping the float32's top 19 bits (DEQ_SCALE_MUL), the offset rounded to
# nearest even (CAST_RINT), clamped into int9 [-256, 255] and put at bit 37.
_SCALE_FLAG = np.uint64(1 << 46)
_SCALE_BITS = np.uint32(0xFFFFE000)
_OFFSET_SHIFT = np.uint64(37)


def _fp19(bits: np.ndarray) -> np.ndarray:
    """roundMode 1 (CalQuantPreScaleValue): float32 bits rounded to nearest even at 10
    mantissa bits (sign, 8 exponent bits, 10 mantissa bits, then shifted back by 13),
    exponents 0 (zero kept signed) and 255 (inf, NaN) truncated, an overflow saturating."""
    bits = bits.astype(np.uint64)
    sign = (bits >> np.uint64(31)) & np.uint64(1)
    exponent = (bits >> np.uint64(23)) & np.uint64(0x1FF)
    mantissa = bits & np.uint64(0x7FFFFF)
    fraction = mantissa >> np.uint64(13)
    round_bit = (mantissa >> np.uint64(12)) & np.uint64(1)
    sticky = mantissa & np.uint64(0xFFF)
    up = (round_bit != 0) & ((sticky != 0) | ((fraction & np.uint64(1)) != 0)) \
        & (exponent != 0) & (exponent != 0x1FF)
    fraction = fraction + up.astype(np.uint64)
    carry = fraction >= np.uint64(1 << 10)
    fraction = np.where(carry, np.uint64(0), fraction)
    exponent = exponent + carry.astype(np.uint64)
    result = (sign << np.uint64(18)) | (exponent << np.uint64(10)) | fraction
    result = np.where(exponent == 0, sign << np.uint64(18), result)
    result = np.where(exponent > 0x1FF, (sign << np.uint64(18)) | np.uint64(0x1FF << 10), result)
    return (result << np.uint64(13)).astype(np.uint64)


def _trans_quant_check(scale: np.ndarray, offset: np.ndarray | None, roundMode: int,
                       out: np.ndarray) -> None:
    # ops-nn quant/trans_quant_param_v2/op_host/op_api/aclnn_trans_quant_param_v2.cpp
    # CheckShape (Atlas A2): scale (n,) or (1, n), n > 0; offset (n,) or (1, n), a 1-d scale
    # and offset of lengths above 1 equal; roundMode 0 or 1. aclnnTransQuantParamV2.md: out
    # 1-d of max(scale, offset) for a 1-d scale, else scale's shape.
    if not ((scale.ndim == 1 and scale.shape[0] > 0)
            or (scale.ndim == 2 and scale.shape[0] == 1 and scale.shape[1] > 0)):
        raise ValueError(f"scale has shape {list(scale.shape)}; it must be (n,) or (1, n), "
                         "n > 0")
    if offset is not None:
        if not ((offset.ndim == 1 and offset.shape[0] > 0)
                or (offset.ndim == 2 and offset.shape[0] == 1 and offset.shape[1] > 0)):
            raise ValueError(f"offset has shape {list(offset.shape)}; it must be (n,) or "
                             "(1, n), n > 0")
        if offset.ndim == 1 and scale.shape[0] > 1 and offset.shape[0] > 1 \
                and scale.shape[0] != offset.shape[0]:
            raise ValueError(f"scale ({scale.shape[0]}) and offset ({offset.shape[0]}) must "
                             "have the same length when both exceed 1")
    if roundMode not in (0, 1):
        raise ValueError(f"roundMode {roundMode} must be 0 or 1")


def _trans_quant(scale: np.ndarray, offset: np.ndarray | None, roundMode: int,
                 out: np.ndarray) -> None:
    lengths = [scale.size] + ([] if offset is None else [offset.size])
    count = max(lengths)
    bits = np.broadcast_to(np.ascontiguousarray(scale, np.float32).reshape(-1).view(np.uint32),
                           (count,)) if scale.size in (1, count) else None
    if bits is None or out.size != count:
        raise Refusal(f"out has {out.size} elements; scale and offset give {count}",
                      INNER_NULLPTR)
    if roundMode == 0:
        packed = (bits & _SCALE_BITS).astype(np.uint64) | _SCALE_FLAG
    else:
        packed = _fp19(bits) | _SCALE_FLAG
    if offset is not None:
        values = np.clip(np.rint(offset.astype(np.float32).reshape(-1)), -256, 255)
        nine = values.astype(np.int64).astype(np.uint64) & np.uint64(0x1FF)
        packed = packed | (np.broadcast_to(nine, (count,)) << _OFFSET_SHIFT)
    out[...] = packed.reshape(out.shape).astype(out.dtype)


_PARAM_DTYPES = {"scale": Dtypes(("float32",)), "offset": Dtypes(("float32",)),
                 "out": Dtypes(("uint64", "int64"))}


@register("aclnnTransQuantParamV2", dtypes=_PARAM_DTYPES,
          check=lambda scale, offset, out: _trans_quant_check(scale, offset, 0, out))
def trans_quant_param_v2(scale: np.ndarray, offset: np.ndarray | None, out: np.ndarray) -> None:
    _trans_quant(scale, offset, 0, out)


@register("aclnnTransQuantParamV3", dtypes=_PARAM_DTYPES, check=_trans_quant_check)
def trans_quant_param_v3(scale: np.ndarray, offset: np.ndarray | None, roundMode: int,
                         out: np.ndarray) -> None:
    _trans_quant(scale, offset, roundMode, out)


# ---- QuantMatmulV3 / V4 / WeightNz: int8 x int8 -> int32, dequantised -------------------------
#
# hicann ops-nn matmul/quant_batch_matmul_v3/docs/aclnnQuantMatmulV4.md (Atlas A2):
#   out = (x1 @ x2 + bias) * scale + offset       bias int32 (offset only for an int8 out)
#   out = x1 @ x2 * scale + bias                   bias bfloat16, float16 or float32
#   pertokenScaleOptional multiplies each row (x1's m) after scale.
# x1 @ x2 is exact in int32 (wrapping as the cube's int32 accumulator); a uint64 or int64 scale
# (aclnnTransQuantParamV2) is its low 32 bits as float32 (the top 19 bits of the float kept);
# the float part computes in float32 and rounds once into out (an int8 out: to nearest even,
# saturated). transposeX1 / transposeX2 give x1 as [k, m] / x2 as [n, k]. An int4 x1 or x2
# (packed in int32) is not computed: 561003.


def _scales(scale: np.ndarray) -> np.ndarray:
    if scale.dtype in (np.uint64, np.int64):
        low = (scale.astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        return np.asarray(low.view(np.float32), np.float32).reshape(-1)
    return np.asarray(widen(scale), np.float32).reshape(-1)


def _quant_operands(x1: np.ndarray, x2: np.ndarray, transposeX1: bool, transposeX2: bool
                    ) -> tuple[np.ndarray, np.ndarray]:
    if x1.dtype != np.int8 or x2.dtype != np.int8:
        raise Refusal(f"x1 {x1.dtype.name} and x2 {x2.dtype.name}: only int8 operands are "
                      "computed (int4 packed in int32 is not)", NO_KERNEL)
    a = np.swapaxes(x1, -1, -2) if transposeX1 else x1
    b = weight(x2)
    b = np.swapaxes(b, -1, -2) if transposeX2 else b
    return a, b


def _quant_matmul_check(x1: np.ndarray, x2: np.ndarray, transposeX1: bool, transposeX2: bool,
                        out: np.ndarray, operator: str = "aclnnQuantMatmulV4") -> None:
    if x1.ndim < 2 or x2.ndim < 2:
        raise ValueError(f"x1 and x2 must have 2 dimensions or more, got {x1.ndim} and "
                         f"{x2.ndim}")
    k1 = x1.shape[-2] if transposeX1 else x1.shape[-1]
    k2 = x2.shape[-1] if transposeX2 else x2.shape[-2]
    if k1 != k2:
        raise ValueError(f"the k-axis of x1 {list(x1.shape)} ({k1}) and x2 {list(x2.shape)} "
                         f"({k2}) differ")
    try:
        np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        raise ValueError(f"the batch dims of x1 {list(x1.shape)} and x2 {list(x2.shape)} do "
                         "not broadcast") from None
    check_output_shapes(operator, {"x1": x1, "x2": x2, "transposeX1": transposeX1,
                                   "transposeX2": transposeX2}, {"out": out})


def quant_matmul(x1: np.ndarray, x2: np.ndarray, scale: np.ndarray | None,
                 offset: np.ndarray | None, pertoken: np.ndarray | None,
                 bias: np.ndarray | None, transposeX1: bool, transposeX2: bool,
                 out: np.ndarray) -> None:
    """The formulas above."""
    a, b = _quant_operands(x1, x2, transposeX1, transposeX2)
    if out.size == 0:
        return
    # float64 BLAS: every partial sum of int8 products is an integer below 2**53 (k < 2**38),
    # so exact; then as int64
    product = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.int64)
    integer_bias = bias is not None and bias.dtype == np.int32
    if integer_bias:
        product = product + bias.astype(np.int64).reshape(-1)  # type: ignore[union-attr]
    accumulated = product.astype(np.int32)  # the cube's int32 accumulator wraps
    if out.dtype == np.int32:
        out[...] = accumulated
        return
    value: Any = accumulated.astype(np.float32)
    if scale is not None:
        value = value * _scales(scale)
    if pertoken is not None:
        value = value * widen(pertoken).astype(np.float32).reshape(-1)[:, None]
    if bias is not None and not integer_bias:
        value = value + widen(bias).astype(np.float32).reshape(-1)
    if out.dtype == np.int8:
        if offset is not None:
            value = value + widen(offset).astype(np.float32).reshape(-1)
        info = np.iinfo(np.int8)
        out[...] = np.clip(np.rint(value), info.min, info.max).astype(np.int8)
        return
    store(out, value)


_QUANT_MM = {"x1": Dtypes(("int8", "int32")), "x2": Dtypes(("int8", "int32"))}


@register("aclnnQuantMatmulV3", dtypes=_QUANT_MM,
          check=lambda x1, x2, scale, offset, bias, transposeX1, transposeX2, out:
          _quant_matmul_check(x1, x2, transposeX1, transposeX2, out, "aclnnQuantMatmulV3"))
def quant_matmul_v3(x1: np.ndarray, x2: np.ndarray, scale: np.ndarray, offset: Any,
                    bias: Any, transposeX1: bool, transposeX2: bool, out: np.ndarray) -> None:
    quant_matmul(x1, x2, scale, offset, None, bias, transposeX1, transposeX2, out)


@register("aclnnQuantMatmulV4", dtypes=_QUANT_MM,
          check=lambda x1, x2, scale, offset, pertokenScaleOptional, bias, transposeX1,
          transposeX2, out: _quant_matmul_check(x1, x2, transposeX1, transposeX2, out))
def quant_matmul_v4(x1: np.ndarray, x2: np.ndarray, scale: np.ndarray, offset: Any,
                    pertokenScaleOptional: Any, bias: Any, transposeX1: bool,
                    transposeX2: bool, out: np.ndarray) -> None:
    quant_matmul(x1, x2, scale, offset, pertokenScaleOptional, bias, transposeX1, transposeX2,
                 out)


def _weight_nz_check(x1: np.ndarray, x2: np.ndarray, x1Scale: Any, x2Scale: Any, yScale: Any,
                     x1Offset: Any, x2Offset: Any, yOffset: Any, bias: Any, transposeX1: bool,
                     transposeX2: bool, groupSize: int, out: np.ndarray) -> None:
    if tensor_format(x2) != FRACTAL_NZ:
        raise ValueError("x2 must have format FRACTAL_NZ (made by aclnnTransMatmulWeight)")
    if x2Scale.dtype.name not in ("uint64", "int64", "float32", "bfloat16"):
        raise ValueError(f"x2Scale has dtype {x2Scale.dtype.name}; it must be uint64, int64, "
                         "float32 or bfloat16")
    if out.dtype.name not in ("float16", "int8", "bfloat16", "int32"):
        raise ValueError(f"out has dtype {out.dtype.name}; it must be float16, int8, bfloat16 "
                         "or int32")
    if yScale is not None or yOffset is not None or x1Offset is not None:
        raise Refusal("yScale, yOffset and x1Offset are not computed", NO_KERNEL)
    _quant_matmul_check(x1, x2, transposeX1, transposeX2, out, "aclnnQuantMatmulWeightNz")


@register("aclnnQuantMatmulWeightNz", dtypes=_QUANT_MM, check=_weight_nz_check)
def quant_matmul_weight_nz(x1: np.ndarray, x2: np.ndarray, x1Scale: Any, x2Scale: Any,
                           yScale: Any, x1Offset: Any, x2Offset: Any, yOffset: Any, bias: Any,
                           transposeX1: bool, transposeX2: bool, groupSize: int,
                           out: np.ndarray) -> None:
    """aclnnQuantMatmulWeightNz.md: aclnnQuantMatmulV4's formulas, x2Scale its scale,
    x1Scale its per-token scale, x2Offset its offset."""
    quant_matmul(x1, x2, x2Scale, x2Offset, x1Scale, bias, transposeX1, transposeX2, out)


# ---- QuantMatmulV2: int8 x int8 (+ int32 bias) -> float16, deqScale per column --------------
#
# hicann ops-nn matmul/quant_matmul/docs/aclnnQuantMatmulV2.md: out = (x1 @ x2 + bias) * deqScale.
# Its checks (matmul/quant_matmul/op_host/op_api/aclnn_quant_matmul.cpp CheckParamsV2): x1, x2
# int8 of 2 or 3 dims, bias int32 of 1 dim (n long), deqScale uint64 of 1 dim whose length is n
# rounded up to a multiple of 16 (CheckShapeValidV2), out float16; x1's batch dims equal to x2's
# (CheckShapeValid), the k axes equal, out (batch, m, n) (CheckOutShape). adjX1 / adjX2
# transpose x1 / x2. deqScale's first n values are the columns' scales (aclnnTransQuantParam's
# encoding, as QuantMatmulV3's uint64 scale).
_DEQ_ALIGN = 16


def _quant_matmul_v2_check(x1: np.ndarray, x2: np.ndarray, bias: np.ndarray | None,
                           deqScale: np.ndarray, adjX1: bool, adjX2: bool,
                           out: np.ndarray) -> None:
    for name, array in (("x1", x1), ("x2", x2)):
        if not 2 <= array.ndim <= 3:
            raise ValueError(f"{name} has {array.ndim} dimensions; it must have 2 or 3")
    if bias is not None and bias.ndim != 1:
        raise ValueError(f"bias has {bias.ndim} dimensions; it must have 1")
    if deqScale.ndim != 1:
        raise ValueError(f"deqScale has {deqScale.ndim} dimensions; it must have 1")
    if any(x1.shape[i] != x2.shape[i] for i in range(x1.ndim - 2)):  # CheckShapeValid's loop
        raise ValueError(f"x1 {list(x1.shape)} and x2 {list(x2.shape)} must have the same "
                         "batch dims")
    k1 = x1.shape[-2] if adjX1 else x1.shape[-1]
    k2 = x2.shape[-1] if adjX2 else x2.shape[-2]
    if k1 != k2:
        raise ValueError(f"the k-axis of x1 {list(x1.shape)} ({k1}) and x2 {list(x2.shape)} "
                         f"({k2}) differ")
    n = x2.shape[-2] if adjX2 else x2.shape[-1]
    if bias is not None and bias.shape[0] != n:
        raise ValueError(f"bias has length {bias.shape[0]}; it must be x2's n ({n})")
    aligned = -(-n // _DEQ_ALIGN) * _DEQ_ALIGN
    if deqScale.shape[0] != aligned:
        raise ValueError(f"deqScale has length {deqScale.shape[0]}; it must be x2's n ({n}) "
                         f"rounded up to a multiple of {_DEQ_ALIGN} ({aligned})")
    check_output_shapes("aclnnQuantMatmulV2", {"x1": x1, "x2": x2, "adjX1": adjX1,
                                               "adjX2": adjX2}, {"out": out})


@register("aclnnQuantMatmulV2",
          dtypes={"x1": Dtypes(("int8",)), "x2": Dtypes(("int8",)), "bias": Dtypes(("int32",)),
                  "deqScale": Dtypes(("uint64",)), "out": Dtypes(("float16",))},
          check=_quant_matmul_v2_check)
def quant_matmul_v2(x1: np.ndarray, x2: np.ndarray, bias: np.ndarray | None,
                    deqScale: np.ndarray, adjX1: bool, adjX2: bool, out: np.ndarray) -> None:
    """out = (x1 @ x2 + bias) * deqScale[:n]."""
    n = out.shape[-1]
    quant_matmul(x1, x2, deqScale[:n], None, None, bias, adjX1, adjX2, out)


# ---- DynamicQuant / DynamicQuantV2: per-row int8 quantisation with the scale computed ----------
#
# hicann ops-nn quant/dynamic_quant/docs/aclnnDynamicQuant.md and
# quant/dynamic_quant_v2/docs/aclnnDynamicQuantV2.md, in float32 as the kernel
# (quant/dynamic_quant/op_kernel/dynamic_quant.h) computes them, over x's last dimension:
#   input = x * smoothScales (the group's row of them, groupIndex holding each group's last row
#           + 1, cumulatively)
#   symmetric:  s = 127 / row_max(|input|); scaleOut = 1 / s; y = rint(input * s)
#   asymmetric (offsetOut given): scaleOut = max((row_max - row_min) / 255, 1e-12);
#               offsetOut = 127 - row_max / scaleOut; y = rint(input * (1 / scaleOut) + offsetOut)
# rint rounds ties to even (CAST_RINT); y saturates into int8. An int32 y holds eight int4
# (127 and 255 become 7 and 15, the range [-8, 7]), the first in the lowest four bits
# (ops-nn matmul/convert_weight_to_int4_pack/op_host/op_api/aclnn_convert_weight_to_int4_pack.cpp
# PackToINT8: the even element in the low nibble of each byte). An int4 y (dstType 29) has no
# numpy dtype: refused.
_INT8_DST = 2
_INT32_DST = 3


def pack_int4(values: np.ndarray) -> np.ndarray:
    """int4 values (the last dim a multiple of 8) packed eight to an int32, the first in the
    lowest four bits."""
    nibbles = (values.astype(np.int64) & 0xF).reshape(values.shape[:-1] + (-1, 8))
    shifts = np.arange(0, 32, 4, dtype=np.int64)
    packed: np.ndarray = (nibbles << shifts).sum(axis=-1).astype(np.uint32)
    return packed.view(np.int32)


def _dynamic_quant_check(x: np.ndarray, smoothScalesOptional: np.ndarray | None,
                         groupIndexOptional: np.ndarray | None, dstType: int, yOut: np.ndarray,
                         scaleOut: np.ndarray, offsetOut: np.ndarray | None) -> None:
    # ops-nn quant/dynamic_quant/op_host/op_api/aclnn_dynamic_quant.cpp CheckDtype, CheckShape
    if yOut.dtype not in (np.int8, np.int32):
        raise ValueError(f"yOut has dtype {yOut.dtype.name}; it must be int8 or int32 (eight "
                         "int4 each)")
    if not 1 < x.ndim < 9:
        raise ValueError(f"The dimNum[{x.ndim}] of x should be greater than 1 and less than 9")
    if smoothScalesOptional is not None:
        if smoothScalesOptional.dtype != x.dtype:
            raise ValueError("The dtypes of x and smooth_scales are not equal")
        if groupIndexOptional is not None:
            if groupIndexOptional.ndim != 1:
                raise ValueError(f"The dimNum[{groupIndexOptional.ndim}] of group_indexs should "
                                 "be equal to one")
        elif smoothScalesOptional.ndim != 1 or smoothScalesOptional.shape[0] != x.shape[-1]:
            raise ValueError(f"smooth_scales {list(smoothScalesOptional.shape)} must be 1-d of "
                             f"x's last dim, {x.shape[-1]}")
    if yOut.dtype == np.int32:  # CheckInt32OutputShape: the last dim an eighth of x's
        if yOut.shape[:-1] != x.shape[:-1] or yOut.shape[-1] * 8 != x.shape[-1]:
            raise ValueError(f"yOut {list(yOut.shape)} of int32 must be x's shape "
                             f"{list(x.shape)} with the last dim divided by 8")
    elif yOut.shape != x.shape:
        raise ValueError("The shapes of x and y are inconsistent")
    if scaleOut.shape != x.shape[:-1]:
        raise ValueError("The shapes of x and scale should be consistent except for the last "
                         "dimension of x")
    if scaleOut.dtype != np.float32:
        raise ValueError(f"scaleOut has dtype {scaleOut.dtype.name}; it must be float32")
    if offsetOut is not None and (offsetOut.shape != scaleOut.shape
                                  or offsetOut.dtype != np.float32):
        raise ValueError("offsetOut must be float32 of scaleOut's shape")
    if int(dstType) not in (_INT8_DST, _INT32_DST):
        raise Refusal(f"dstType {dstType}: an int8 y or int4 packed in int32 is computed",
                      NO_KERNEL)


def dynamic_quant(x: np.ndarray, smooth: np.ndarray | None, group: np.ndarray | None,
                  yOut: np.ndarray, scaleOut: np.ndarray, offsetOut: np.ndarray | None) -> None:
    """The formulas above."""
    if x.size == 0:
        return
    length = x.shape[-1]
    rows = np.asarray(widen(x), np.float32).reshape(-1, length)
    if smooth is not None:
        factors = np.asarray(widen(smooth), np.float32).reshape(-1, length)
        if group is not None and factors.shape[0] > 1:
            ends = group.astype(np.int64).reshape(-1)
            which = np.searchsorted(ends, np.arange(rows.shape[0]), side="right")
            factors = factors[np.minimum(which, factors.shape[0] - 1)]
        rows = rows * factors
    four = yOut.dtype == np.int32
    low_end, high_end = (-8, 7) if four else (-128, 127)
    if offsetOut is None:
        largest = np.max(np.abs(rows), axis=1)
        step = np.float32(high_end) / largest
        scale = np.float32(1) / step
        values = rows * step[:, None]
        offset = None
    else:
        high, low = np.max(rows, axis=1), np.min(rows, axis=1)
        span = np.float32(15 if four else 255)
        scale = np.maximum((high - low) / span, np.float32(1e-12))
        offset = np.float32(high_end) - high / scale
        values = rows * (np.float32(1) / scale)[:, None] + offset[:, None]
    quantised = np.clip(np.nan_to_num(np.rint(values), nan=0.0), low_end, high_end)
    if four:
        yOut[...] = pack_int4(quantised).reshape(yOut.shape)
    else:
        yOut[...] = quantised.astype(np.int8).reshape(yOut.shape)
    scaleOut[...] = scale.reshape(scaleOut.shape)
    if offsetOut is not None and offset is not None:
        offsetOut[...] = offset.reshape(offsetOut.shape)


_DYNAMIC = {"x": FLOATS, "smoothScalesOptional": FLOATS}


@register("aclnnDynamicQuant", dtypes=_DYNAMIC,
          check=lambda x, smoothScalesOptional, yOut, scaleOut: _dynamic_quant_check(
              x, smoothScalesOptional, None, _INT8_DST, yOut, scaleOut, None))
def dynamic_quant_v1(x: np.ndarray, smoothScalesOptional: np.ndarray | None, yOut: np.ndarray,
                     scaleOut: np.ndarray) -> None:
    dynamic_quant(x, smoothScalesOptional, None, yOut, scaleOut, None)


@register("aclnnDynamicQuantV2", dtypes=_DYNAMIC, check=_dynamic_quant_check)
def dynamic_quant_v2(x: np.ndarray, smoothScalesOptional: np.ndarray | None,
                     groupIndexOptional: np.ndarray | None, dstType: int, yOut: np.ndarray,
                     scaleOut: np.ndarray, offsetOut: np.ndarray | None) -> None:
    dynamic_quant(x, smoothScalesOptional, groupIndexOptional, yOut, scaleOut, offsetOut)


# ---- FakeQuantPerTensorAffineCachemask / PerChannel -------------------------------------------
#
# hicann ops-nn quant/fake_quant_affine_cachemask/docs/aclnnFakeQuantPerTensorAffineCachemask.md,
# in float32 as its op_kernel (fake_quant_affine_cachemask_fp16.h / _fp32.h) computes:
#   qval = rint(self * (1 / scale)) + zero_point   (an int32 zero point; a float one is added
#          before rounding: rint(self * (1 / scale) + zero_point))
#   mask = quant_min <= qval <= quant_max;  out = (clamp(qval, quant_min, quant_max) - zero_point)
#          * scale
# rint ties to even. Per tensor with fakeQuantEnabled < 1 (op_api): out = self, mask all true.
_FAKE = Dtypes(("float32", "float16"))


def _fake_quant(self: np.ndarray, scale: np.ndarray, zero: np.ndarray, quantMin: int,
                quantMax: int, out: np.ndarray, mask: np.ndarray) -> None:
    x = np.asarray(widen(self), np.float32)
    factor = np.asarray(widen(scale), np.float32)
    inverse = np.float32(1) / factor
    if zero.dtype.kind in "iu":
        qval = np.rint(x * inverse) + zero.astype(np.float32)
    else:
        qval = np.rint(x * inverse + np.asarray(widen(zero), np.float32))
    mask[...] = (qval >= quantMin) & (qval <= quantMax)
    shift = zero.astype(np.float32) if zero.dtype.kind in "iu" else np.rint(
        np.asarray(widen(zero), np.float32))
    store(out, (np.clip(qval, quantMin, quantMax) - shift) * factor)


def _fake_check(self: np.ndarray, quantMin: int, quantMax: int, out: np.ndarray,
                mask: np.ndarray) -> None:
    if quantMin > quantMax:
        raise ValueError("`quantMin` should be less than or equal to `quantMax`")
    if out.shape != self.shape or mask.shape != self.shape:
        raise ValueError(f"out {list(out.shape)} and mask {list(mask.shape)} must have self's "
                         f"shape {list(self.shape)}")
    if mask.dtype != np.bool_:
        raise ValueError(f"mask has dtype {mask.dtype.name}; it must be bool")


def _per_tensor_check(self: np.ndarray, scale: np.ndarray, zeroPoint: np.ndarray,
                      fakeQuantEnabled: float, quantMin: int, quantMax: int, out: np.ndarray,
                      mask: np.ndarray) -> None:
    # ops-nn quant/fake_quant_affine_cachemask/op_api/
    # aclnn_fake_quant_per_tensor_affine_cachemask.cpp: CheckDtypeValid (zeroPoint int32),
    # CheckShape (scale and zeroPoint of one element), CheckQuantValue
    if zeroPoint.dtype != np.int32:
        raise ValueError(f"zeroPoint has dtype {zeroPoint.dtype.name}; it must be int32")
    for name, value in (("scale", scale), ("zeroPoint", zeroPoint)):
        if value.size != 1:
            raise ValueError(f"{name}: a Tensor with {value.size} elements cannot be converted "
                             "to Scalar")
    _fake_check(self, quantMin, quantMax, out, mask)


@register("aclnnFakeQuantPerTensorAffineCachemask", dtypes={"self": _FAKE, "scale": _FAKE},
          check=_per_tensor_check)
def fake_quant_per_tensor(self: np.ndarray, scale: np.ndarray, zeroPoint: np.ndarray,
                          fakeQuantEnabled: float, quantMin: int, quantMax: int,
                          out: np.ndarray, mask: np.ndarray) -> None:
    if self.size == 0:
        return
    if fakeQuantEnabled < 1.0:
        store(out, self)
        mask[...] = True
        return
    _fake_quant(self, scale.reshape(()), zeroPoint.reshape(()), quantMin, quantMax, out, mask)


def _per_channel_check(self: np.ndarray, scale: np.ndarray, zeroPoint: np.ndarray, axis: int,
                       quantMin: int, quantMax: int, out: np.ndarray, mask: np.ndarray) -> None:
    # aclnn_fake_quant_per_channel_affine_cachemask.cpp CheckShape: scale and zeroPoint 1-d of
    # self's size along axis (within its rank), CheckQuantValue; zeroPoint int32, float16 or
    # float32
    if zeroPoint.dtype.name not in ("int32", "float16", "float32"):
        raise ValueError(f"zeroPoint has dtype {zeroPoint.dtype.name}; it must be int32, "
                         "float16 or float32")
    if scale.ndim != 1:
        raise ValueError("scale should be a 1-D tensor")
    if zeroPoint.ndim != 1:
        raise ValueError("zero point should be a 1-D tensor")
    if scale.shape[0] != zeroPoint.shape[0]:
        raise ValueError("scale and zeroPoint need to have the same dimensions")
    rank = max(self.ndim, 1)
    if not -rank <= axis < rank:
        raise ValueError(f"Dimension out of range (expected to be in range of [{-rank}, "
                         f"{rank - 1}], but got {axis})")
    size = self.shape[axis] if self.ndim else 1
    if scale.shape[0] != size:
        raise ValueError("dimensions of scale and zero-point are not consistant with input "
                         "tensor")
    _fake_check(self, quantMin, quantMax, out, mask)


@register("aclnnFakeQuantPerChannelAffineCachemask", dtypes={"self": _FAKE, "scale": _FAKE},
          check=_per_channel_check)
def fake_quant_per_channel(self: np.ndarray, scale: np.ndarray, zeroPoint: np.ndarray,
                           axis: int, quantMin: int, quantMax: int, out: np.ndarray,
                           mask: np.ndarray) -> None:
    if self.size == 0:
        return
    shape = [1] * self.ndim
    if self.ndim:
        shape[axis] = scale.shape[0]
    _fake_quant(self, scale.reshape(shape), zeroPoint.reshape(shape), quantMin, quantMax, out,
                mask)


# ---- aclnnQuantize: x / scales + zeroPoints, rounded, along one axis ---------------------------

# aclDataType of out (ops-nn quant/quantize/op_host/op_api/aclnn_quantize.cpp, the Atlas A2's
# DTYPE_SUPPORT_INT_LIST): 2 INT8, 4 UINT8, 3 INT32
_QUANTIZE_OUT = {2: "int8", 4: "uint8", 3: "int32"}
_QUANTIZE_ZERO_POINTS = Dtypes(("int8", "uint8", "int32", "bfloat16"))


def _quantize_check(x: np.ndarray, scales: np.ndarray, zeroPoints: Any, dtype: int, axis: int,
                    out: np.ndarray) -> None:
    """aclnn_quantize.cpp: CheckShapeValid (_quantize_check_shapes), CheckDtypeValid
    (_quantize_check_dtypes), CheckFormat (no private format)."""
    from .foreach import PRIVATE_FORMATS
    _quantize_check_shapes(x, scales, zeroPoints, axis, out)
    _quantize_check_dtypes(x, scales, zeroPoints, dtype, out)
    for label, value in (("x", x), ("scales", scales), ("zeroPoints", zeroPoints), ("out", out)):
        if value is not None and tensor_format(value) in PRIVATE_FORMATS:
            raise ValueError(f"{label} has a private format (aclFormat {tensor_format(value)})")


def _quantize_check_shapes(x: np.ndarray, scales: np.ndarray, zeroPoints: Any, axis: int,
                           out: np.ndarray) -> None:
    """CheckShapeValid: x of at most 8 dimensions, out of x's shape, scales and zeroPoints 1-d
    of one size; past one value, axis within x's rank and scales of x's size there."""
    if x.ndim > 8:
        raise ValueError(f"x has {x.ndim} dimensions: at most 8")
    if out.shape != x.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be x's {list(x.shape)}")
    if scales.ndim != 1:
        raise ValueError(f"scales has {scales.ndim} dimensions: it must have 1")
    if zeroPoints is not None:
        if zeroPoints.ndim != 1:
            raise ValueError(f"zeroPoints has {zeroPoints.ndim} dimensions: it must have 1")
        if zeroPoints.shape[0] != scales.shape[0]:
            raise ValueError(f"zeroPoints has {zeroPoints.shape[0]} values: it must have "
                             f"scales' {scales.shape[0]}")
    if scales.shape[0] != 1:
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"axis is {axis}: it must be in [{-x.ndim}, {x.ndim - 1}]")
        if scales.shape[0] != x.shape[axis]:
            raise ValueError(f"scales has {scales.shape[0]} values: it must have 1 or x's "
                             f"{x.shape[axis]} along axis {axis}")


def _quantize_check_dtypes(x: np.ndarray, scales: np.ndarray, zeroPoints: Any, dtype: int,
                           out: np.ndarray) -> None:
    """CheckDtypeValid on the Atlas A2: zeroPoints int8, uint8, int32 or bfloat16; dtype and
    out int8, uint8 or int32, out of dtype; a bfloat16 scales or zeroPoints with x, scales and
    zeroPoints all bfloat16."""
    if zeroPoints is not None and zeroPoints.dtype not in _QUANTIZE_ZERO_POINTS:
        raise ValueError(f"zeroPoints has dtype {zeroPoints.dtype.name}: it must be int8, "
                         "uint8, int32 or bfloat16")
    name = _QUANTIZE_OUT.get(int(dtype))
    if name is None:
        raise ValueError(f"dtype {dtype} is not one of {sorted(_QUANTIZE_OUT)} (INT8, INT32, "
                         "UINT8)")
    if out.dtype.name != name:
        raise ValueError(f"out has dtype {out.dtype.name}: dtype {dtype} asks for {name}")
    if any(v is not None and v.dtype.name == "bfloat16" for v in (scales, zeroPoints)):
        for label, value in (("x", x), ("scales", scales), ("zeroPoints", zeroPoints)):
            if value is not None and value.dtype.name != "bfloat16":
                raise ValueError(f"{label} has dtype {value.dtype.name}: with a bfloat16 scales "
                                 "or zeroPoints, x, scales and zeroPoints are bfloat16")


@register("aclnnQuantize", dtypes={"x": FLOATS, "scales": FLOATS}, check=_quantize_check)
def quantize(x: np.ndarray, scales: np.ndarray, zeroPoints: Any, dtype: int, axis: int,
             out: np.ndarray) -> None:
    """out = round(x / scales + zeroPoints) (ops-nn quant/quantize/docs/aclnnQuantize.md),
    scales and zeroPoints along x's dimension axis (or one value for all), in float32, rounded
    to nearest even (the kernel's CAST_RINT) and saturated into out's dtype."""
    if x.size == 0 or scales.size == 0 or out.size == 0 or \
            (zeroPoints is not None and zeroPoints.size == 0):
        return
    shape = [1] * x.ndim
    if scales.shape[0] != 1:
        shape[axis] = scales.shape[0]
    value = widen(x).astype(np.float32) / widen(scales).astype(np.float32).reshape(shape)
    if zeroPoints is not None:
        value = value + widen(zeroPoints).astype(np.float32).reshape(shape)
    info = np.iinfo(out.dtype)
    # the bounds of int32 are not float32 values: saturate it in float64
    rounded = np.rint(value).astype(np.float64 if out.dtype == np.int32 else np.float32,
                                    copy=False)
    np.nan_to_num(rounded, copy=False, nan=0.0)
    store(out, np.clip(rounded, info.min, info.max, out=rounded))
