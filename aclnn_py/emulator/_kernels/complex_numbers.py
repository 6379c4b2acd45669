"""Complex numbers of ops-math math/: aclnnComplex, aclnnReal, aclnnPolar and aclnnAngleV2.

The formulas are the docs' (ops-math math/<op>/docs/): complex = real + i imag, real part,
polar = abs (cos angle + i sin angle), angle = atan2(imag, real). complex32 has no numpy
dtype, so the emulator takes complex64 and complex128 (and their float32 and float64 parts).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.dtypes import Dtypes
from . import store
from .elementwise import register

_MAX_RANK = 8
_PAIRS = {np.dtype(np.float32): np.dtype(np.complex64),
          np.dtype(np.float64): np.dtype(np.complex128)}


def _broadcast_into(out: np.ndarray, **tensors: np.ndarray) -> None:
    """At most 8 dimensions; the tensors broadcast, to out's shape."""
    for name, value in tensors.items():
        if value.ndim > _MAX_RANK:
            raise ValueError(f"{name} has {value.ndim} dimensions: at most {_MAX_RANK}")
    try:
        shape = np.broadcast_shapes(*(value.shape for value in tensors.values()))
    except ValueError:
        raise ValueError(f"{' and '.join(tensors)} do not broadcast: shapes "
                         f"{', '.join(str(list(v.shape)) for v in tensors.values())}") from None
    if out.shape != shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be {list(shape)}")


def _complex_check(real: np.ndarray, imag: np.ndarray, out: np.ndarray) -> None:
    """ops-math math/complex/op_api/aclnn_complex.cpp: CheckDtypeValid (real and imag of one
    dtype, out its complex pair: float32 -> complex64, float64 -> complex128) and
    CheckOutShape (out is the broadcast shape); an empty real or imag returns before them."""
    if real.size == 0 or imag.size == 0:
        return
    if imag.dtype != real.dtype:
        raise ValueError(f"imag has dtype {imag.dtype.name}: it must be real's "
                         f"{real.dtype.name}")
    if _PAIRS.get(real.dtype) != out.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}: real {real.dtype.name} pairs with "
                         f"{_PAIRS.get(real.dtype, 'no complex dtype')}")
    _broadcast_into(out, real=real, imag=imag)


@register("aclnnComplex", dtypes={"real": Dtypes(("float32", "float64")),
                                  "imag": Dtypes(("float32", "float64"))},
          check=_complex_check)
def complex_(real: np.ndarray, imag: np.ndarray, out: np.ndarray) -> None:
    """out = real + i imag, broadcast."""
    if out.size and real.size and imag.size:
        result = np.empty(out.shape, out.dtype)
        result.real, result.imag = real, imag
        store(out, result)


def _real_check(self: np.ndarray, out: np.ndarray) -> None:
    """ops-math math/real/op_api/aclnn_real.cpp: CheckShape (out has self's shape, at most 8
    dimensions) and the dtype pairs of DTYPE_SUPPORT_LIST (complex64 -> float32, complex128 ->
    float64; a real self keeps its dtype)."""
    if self.ndim > _MAX_RANK:
        raise ValueError(f"self has {self.ndim} dimensions: at most {_MAX_RANK}")
    if out.shape != self.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be self's "
                         f"{list(self.shape)}")
    wanted = np.empty(0, self.dtype).real.dtype if self.dtype.kind == "c" else self.dtype
    if out.dtype != wanted:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be {wanted.name} for a "
                         f"{self.dtype.name} self")


@register("aclnnReal", dtypes=Dtypes(("float32", "float16", "complex64", "complex128")),
          check=_real_check)
def real(self: np.ndarray, out: np.ndarray) -> None:
    """out = the real part of self (self itself when real)."""
    if out.size:
        store(out, np.real(self))


def _polar_check(input: np.ndarray, angle: np.ndarray, out: np.ndarray) -> None:
    """ops-math math/polar/op_api/aclnn_polar.cpp: input and angle float32 of one dtype, out
    complex64 (CheckDtypeValid); out of their broadcast shape (CheckShape)."""
    if angle.dtype != input.dtype:
        raise ValueError(f"angle has dtype {angle.dtype.name}: it must be input's "
                         f"{input.dtype.name}")
    _broadcast_into(out, input=input, angle=angle)


@register("aclnnPolar", dtypes={"input": Dtypes(("float32",)), "angle": Dtypes(("float32",)),
                                "out": Dtypes(("complex64",))},
          check=_polar_check)
def polar(input: np.ndarray, angle: np.ndarray, out: np.ndarray) -> None:
    """out = input (cos angle + i sin angle), broadcast (float32 parts)."""
    if out.size:
        result = np.empty(out.shape, out.dtype)
        result.real = input * np.cos(angle)
        result.imag = input * np.sin(angle)
        store(out, result)


# ops-math math/angle_v2/docs/aclnnAngleV2.md: x's and out's dtypes
_ANGLE_X = Dtypes(("bool", "uint8", "int8", "int16", "int32", "int64", "bfloat16", "float16",
                   "float32", "complex64"))


def _angle_check(x: np.ndarray, out: np.ndarray) -> None:
    """ops-math math/angle_v2/docs/aclnnAngleV2.md: out has x's shape."""
    if x.ndim > _MAX_RANK:
        raise ValueError(f"x has {x.ndim} dimensions: at most {_MAX_RANK}")
    if out.shape != x.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be x's {list(x.shape)}")


def _angle(x: np.ndarray) -> Any:
    if x.dtype.kind == "c":
        return np.angle(x)
    values = x.astype(np.float32)
    # a real number's angle: pi when negative, 0 otherwise, NaN kept (torch.angle)
    return np.where(np.isnan(values), values, np.where(values < 0, np.float32(np.pi),
                                                       np.float32(0)))


@register("aclnnAngleV2", dtypes={"x": _ANGLE_X,
                                  "out": Dtypes(("float16", "float32", "bfloat16"))},
          check=_angle_check)
def angle_v2(x: np.ndarray, out: np.ndarray) -> None:
    """out = angle(x) = atan2(imag x, real x)."""
    if out.size:
        store(out, _angle(x))
