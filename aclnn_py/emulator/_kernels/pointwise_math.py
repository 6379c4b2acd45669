"""Pointwise math of ops-math's ``math/`` directory not computed by :mod:`.elementwise`: special
functions (erfc, lgamma, digamma, sinc), exp2 and atanh, the floating-point class tests
(isfinite, isinf and its signed forms), logaddexp, xlogy, the remainders (fmod, remainder), the
scalar floor division, gcd and rounding to decimals; aclnnScale (x times a scale, plus a bias,
aligned on an axis).

Dtypes follow :mod:`.elementwise`: two tensors promote as PyTorch's ``promote_types``, a tensor
and a scalar take the tensor's dtype unless the scalar's category is higher; float16 and
bfloat16 compute in float32 and round once into out. The special functions without a numpy
ufunc compute in float64 and round once into out's dtype.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ...ops.dtypes import Dtypes, is_bfloat16
from . import store
from .elementwise import (
    _category,
    _erf64,
    _erfc_fraction,
    _floor_divide,
    apply,
    broadcast_check,
    compute_dtype,
    promote_types,
    register,
    same_shape,
    scalar_result_type,
)


def _floating(dtype: np.dtype, out: np.dtype) -> np.dtype:
    """The dtype a floating function computes an input of ``dtype`` in, into ``out``: a float
    input its own (float32 for the halves), an integer or bool one out's when out is floating,
    else float32 (CANN's op_api casts integral inputs to a float before its kernel)."""
    if dtype.kind == "f" or is_bfloat16(dtype):
        return compute_dtype(dtype)
    if out.kind == "f" or is_bfloat16(out):
        return compute_dtype(out)
    return np.dtype(np.float32)


def _wide(function: Callable[[np.ndarray], Any]) -> Callable[..., None]:
    """A compute of ``apply`` evaluating ``function`` in float64, stored once into target."""
    def compute(target: np.ndarray, x: np.ndarray) -> None:
        target[...] = function(np.asarray(np.broadcast_to(x, target.shape), np.float64))
    return compute


# ---- special functions ----------------------------------------------------------------------


def _erfc64(x: np.ndarray) -> Any:
    """erfc in float64: 1 - erf(x) below |x| = 1.5, Laplace's continued fraction above (no
    cancellation where erfc is small), 2 - erfc(-x) for negative x."""
    a = np.abs(x)
    result = np.empty_like(a)
    small = a < 1.5
    result[small] = 1.0 - _erf64(x[small])
    large = ~small & ~np.isnan(a)
    if large.any():
        tail = _erfc_fraction(a[large], 90)
        result[large] = np.where(x[large] < 0, 2.0 - tail, tail)
    result[np.isnan(a)] = np.nan
    return result


_lgamma_each = np.frompyfunc(lambda v: math.lgamma(v) if v == v else v, 1, 1)


def _lgamma64(x: np.ndarray) -> Any:
    """ln|Gamma(x)|: Python's math.lgamma element by element; +inf at the poles (0 and the
    negative integers) and at +-inf, as PyTorch's lgamma."""
    result = np.empty_like(x)
    finite = np.isfinite(x)
    poles = finite & (x <= 0) & (x == np.floor(x))
    regular = finite & ~poles
    if regular.any():
        result[regular] = _lgamma_each(x[regular]).astype(np.float64)
    result[poles] = np.inf
    result[np.isinf(x)] = np.inf
    result[np.isnan(x)] = np.nan
    return result


# digamma's asymptotic series psi(x) ~ ln x - 1/(2x) - sum B_2k / (2k x^2k), B_2k Bernoulli
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma64(x: np.ndarray) -> Any:
    """psi(x) = Gamma'(x) / Gamma(x) in float64: the reflection psi(1 - x) - pi / tan(pi x)
    below 0.5, the recurrence psi(x) = psi(x + 1) - 1/x up to 10, then the asymptotic series.
    Poles (0 and the negative integers): PyTorch gives -inf at 0 (-0.0: +inf) and NaN at the
    negative integers; -inf gives NaN."""
    x = np.asarray(x, np.float64)
    reflect = x < 0.5
    y = np.where(reflect, 1.0 - x, x)
    shift = np.zeros_like(y)
    for _ in range(10):
        low = y < 10
        if not low.any():
            break
        shift = np.where(low, shift - 1.0 / np.where(low, y, 1.0), shift)
        y = np.where(low, y + 1.0, y)
    inverse_square = 1.0 / (y * y)
    series = np.zeros_like(y)
    for c in reversed(_DIGAMMA_SERIES):
        series = series * inverse_square + c
    result = np.log(y) - 0.5 / y - series * inverse_square + shift
    with np.errstate(all="ignore"):
        reflected = result - math.pi / np.tan(math.pi * x)
    result = np.where(reflect, reflected, result)
    negative_integer = (x < 0) & (x == np.floor(x))
    result[negative_integer] = np.nan
    zero = x == 0
    result[zero] = np.where(np.signbit(x[zero]), np.inf, -np.inf)
    result[x == np.inf] = np.inf
    result[x == -np.inf] = np.nan
    return result


def _sinc64(x: np.ndarray) -> Any:
    """sin(pi x) / (pi x), 1 at 0 (ops-math math/sinc/docs/aclnnSinc&aclnnInplaceSinc.md)."""
    product = math.pi * x
    with np.errstate(all="ignore"):
        result = np.sin(product) / product
    result[x == 0] = 1.0
    return result


UNARY: dict[str, Callable[..., None]] = {
    # ops-math math/erfc/docs/aclnnErfc&aclnnInplaceErfc.md: 1 - erf(x)
    "aclnnErfc": _wide(_erfc64),
    # ops-math math/pow/docs/aclnnExp2&aclnnInplaceExp2.md: 2^x
    "aclnnExp2": lambda target, x: np.exp2(x, out=target),
    "aclnnSinc": _wide(_sinc64),
    # ops-math math/lgamma/docs/aclnnLgamma.md: ln|Gamma(x)|
    "aclnnLgamma": _wide(_lgamma64),
    # ops-math math/digamma/docs/aclnnDigamma.md: the derivative of ln Gamma(x)
    "aclnnDigamma": _wide(_digamma64),
    # ops-math math/atanh/docs/aclnnAtanh&aclnnInplaceAtanh.md: (1/2) ln((1 + x) / (1 - x))
    "aclnnAtanh": lambda target, x: np.arctanh(x, out=target),
}


def _unary(compute: Callable[..., None]) -> Callable[..., None]:
    def kernel(**arguments: Any) -> None:
        source, out = arguments.values()
        if source.size:
            apply(out, compute, [source], _floating(source.dtype, out.dtype))
    return kernel


_name: str
_compute: Callable[..., None]
for _name, _compute in UNARY.items():
    register(_name, check=same_shape)(_unary(_compute))


# ---- floating-point classes: bool results --------------------------------------------------


def _classify(test: Callable[[np.ndarray], Any], integral: bool) -> Callable[..., None]:
    """out = test(x) for a floating x; an integral or bool x (which has no inf or NaN) gives
    ``integral`` everywhere."""
    def kernel(**arguments: Any) -> None:
        source, out = arguments.values()
        if source.size == 0:
            return
        if source.dtype.kind in "biu":
            out[...] = integral
        else:
            out[...] = test(source.astype(compute_dtype(source.dtype)))
    return kernel


CLASSES: dict[str, tuple[Callable[[np.ndarray], Any], bool]] = {
    # ops-math math/is_finite/docs/aclnnIsFinite.md, is_inf/docs/aclnnIsInf.md,
    # is_pos_inf/docs/aclnnIsPosInf.md, is_neg_inf/docs/aclnnIsNegInf.md
    "aclnnIsFinite": (np.isfinite, True),
    "aclnnIsInf": (np.isinf, False),
    "aclnnIsPosInf": (np.isposinf, False),
    "aclnnIsNegInf": (np.isneginf, False),
}

_test: Callable[[np.ndarray], Any]
_integral: bool
for _name, (_test, _integral) in CLASSES.items():
    register(_name, check=same_shape)(_classify(_test, _integral))


# ---- two operands ---------------------------------------------------------------------------


def _pair_dtype(self: Any, other: Any) -> np.dtype:
    """The promoted dtype of a tensor with a tensor or a scalar (either side)."""
    if isinstance(self, np.ndarray) and isinstance(other, np.ndarray):
        return promote_types(self.dtype, other.dtype)
    if isinstance(self, np.ndarray):
        return scalar_result_type(self.dtype, other)
    return scalar_result_type(other.dtype, self)


def _operand(value: Any, dtype: np.dtype) -> Any:
    """A tensor as it is (apply casts it), a scalar cast to the compute dtype."""
    if isinstance(value, np.ndarray):
        return value
    return np.asarray(value).astype(dtype)[()]


def _binary(compute: Callable[..., None], floating: bool) -> Callable[..., None]:
    """A kernel of (a, b, out) over ``compute`` (of :func:`apply`): in the pair's promoted
    dtype, or for a ``floating`` function a float one (an integral pair in out's float dtype,
    else float32)."""
    def kernel(**arguments: Any) -> None:
        self, other, out = arguments.values()
        if any(isinstance(v, np.ndarray) and v.size == 0 for v in (self, other)):
            return
        dtype = _pair_dtype(self, other)
        dtype = _floating(dtype, out.dtype) if floating else compute_dtype(dtype)
        apply(out, compute, [_operand(self, dtype), _operand(other, dtype)], dtype)
    return kernel


def _log_add_exp(target: np.ndarray, x: Any, y: Any) -> None:
    """m + ln(1 + e^-|x - y|), m = max(x, y) (ops-math math/log_add_exp/docs/
    aclnnLogAddExp.md); numpy's logaddexp evaluates that form, equal infinities included."""
    np.logaddexp(x, y, out=target)


def _log_add_exp2(target: np.ndarray, x: Any, y: Any) -> None:
    """log2(2^x + 2^y) (ops-math math/log_add_exp/docs/aclnnLogAddExp2.md)."""
    np.logaddexp2(x, y, out=target)


def _xlogy(target: np.ndarray, x: Any, y: Any) -> None:
    """x ln y (ops-math math/xlogy/docs/aclnnXLogYTensor&aclnnInplaceXLogYTensor.md), with
    0 where x is 0 and y is not NaN, as CANN's kernel selects (ops-math math/xlogy/op_kernel/
    arch35/xlogy_kernel.h XlogyVF) and PyTorch's xlogy."""
    kind = target.dtype.type
    product = np.multiply(x, np.log(y))
    zero = np.logical_and(np.equal(x, kind(0)), np.logical_not(np.isnan(y)))
    target[...] = np.where(zero, kind(0), product)


def _fmod(target: np.ndarray, x: Any, y: Any) -> None:
    """x - trunc(x / y) y, the sign of x (ops-math math/mod/docs/
    aclnnFmodTensor&aclnnInplaceFmodTensor.md); numpy's fmod computes it exactly."""
    np.fmod(x, y, out=target)


def _remainder(target: np.ndarray, x: Any, y: Any) -> None:
    """x - floor(x / y) y, the sign of y (ops-math math/floor_mod/docs/
    aclnnRemainderTensorTensor&aclnnInplaceRemainderTensorTensor.md); numpy's remainder."""
    np.remainder(x, y, out=target)


def _gcd(target: np.ndarray, x: Any, y: Any) -> None:
    """The greatest common divisor, non-negative, gcd(0, 0) = 0 (ops-math math/gcd/docs/
    aclnnGcd.md: integer operands)."""
    np.gcd(x, y, out=target)


BINARY: dict[str, tuple[Callable[..., None], bool]] = {
    "aclnnLogAddExp": (_log_add_exp, True),
    "aclnnLogAddExp2": (_log_add_exp2, True),
    "aclnnXLogYTensor": (_xlogy, True),
    "aclnnXLogYScalarSelf": (_xlogy, True),
    "aclnnXLogYScalarOther": (_xlogy, True),
    "aclnnFmodTensor": (_fmod, False),
    "aclnnFmodScalar": (_fmod, False),
    "aclnnRemainderTensorTensor": (_remainder, False),
    "aclnnRemainderTensorScalar": (_remainder, False),
    "aclnnRemainderScalarTensor": (_remainder, False),
    # ops-math math/floor_div/docs/aclnnFloorDivides&aclnnInplaceFloorDivides.md: floor(x / y)
    "aclnnFloorDivides": (_floor_divide, False),
    "aclnnGcd": (_gcd, False),
}


# ---- the remainders' phase-1 checks (ops-math math/floor_mod/op_api/aclnn_remainder.cpp) ----

# ASCEND910B_DTYPE_DTYPE_SUPPORT_LIST (the Atlas A2's, regbase's too): the dtypes the remainder
# computes in
_REMAINDER_DTYPES = frozenset({"int32", "int64", "float16", "float32", "float64", "bfloat16"})


def _rank(dtype: np.dtype) -> int:
    """CANN's cast ranks: bool < integers < floats < complex (CanCast goes up or level)."""
    return 3 if dtype.kind == "c" else _category(dtype)


def _can_cast(source: np.dtype, target: np.dtype) -> bool:
    return _rank(source) <= _rank(target)


def _single(shape: tuple[int, ...]) -> bool:
    """0-d, or 1-d of one element (CheckShapeIsSpecial)."""
    return shape == () or shape == (1,)


def _remainder_tensor_tensor_check(self: np.ndarray, other: np.ndarray, out: np.ndarray) -> None:
    """CheckBroadcastShape off regbase: out has the broadcast shape of self and other, except
    that out of the form [] or [1] takes a broadcast shape of that form (not in place: the
    in-place form passes selfRef as out, which must keep its shape)."""
    try:
        shape = tuple(np.broadcast_shapes(self.shape, other.shape))
    except ValueError:
        raise ValueError(f"self {list(self.shape)} and other {list(other.shape)} do not "
                         "broadcast") from None
    if shape == out.shape or (out is not self and _single(shape) and _single(out.shape)):
        return
    raise ValueError(f"out has shape {list(out.shape)}, the broadcast shape of self and other "
                     f"is {list(shape)}")


def _no_complex(self: Any, other: Any) -> None:
    for name, value in (("self", self), ("other", other)):
        if np.asarray(value).dtype.kind == "c":
            raise ValueError(f"{name} is complex: the remainder does not take complex numbers")


def _remainder_tensor_scalar_check(self: np.ndarray, other: Any, out: np.ndarray) -> None:
    """CheckPromoteTypeTensorScalar off regbase: no complex; the dtype computed in is self's,
    or for an integral or bool self with a floating scalar (or a bool self) the two's
    promotion (PromoteTypeScalar); self casts to it, it is one of the remainder's dtypes and
    casts to out."""
    same_shape(self=self, out=out)
    _no_complex(self, other)
    scalar = np.asarray(other).dtype
    dtype = self.dtype
    if _category(dtype) < 2 and (_category(scalar) == 2 or dtype.kind == "b"):
        dtype = promote_types(dtype, scalar)
    if dtype.name not in _REMAINDER_DTYPES:
        raise ValueError(f"self ({self.dtype}) with a {scalar} scalar computes in {dtype}, "
                         f"which is not supported; supported: {sorted(_REMAINDER_DTYPES)}")
    if not _can_cast(dtype, out.dtype):
        raise ValueError(f"the result's dtype {dtype} cannot be cast to out's {out.dtype}")


def _remainder_scalar_tensor_check(self: Any, other: np.ndarray, out: np.ndarray) -> None:
    """CheckPromoteTypeScalarTensor off regbase: no complex; other casts to out, and out is
    one of the remainder's dtypes (the scalar's dtype is not checked)."""
    same_shape(other=other, out=out)
    _no_complex(self, other)
    if not _can_cast(other.dtype, out.dtype):
        raise ValueError(f"other's dtype {other.dtype} cannot be cast to out's {out.dtype}")
    if out.dtype.name not in _REMAINDER_DTYPES:
        raise ValueError(f"out has dtype {out.dtype}, which is not supported; supported: "
                         f"{sorted(_REMAINDER_DTYPES)}")


_CHECKS: dict[str, Callable[..., None]] = {
    "aclnnRemainderTensorTensor": _remainder_tensor_tensor_check,
    "aclnnRemainderTensorScalar": _remainder_tensor_scalar_check,
    "aclnnRemainderScalarTensor": _remainder_scalar_tensor_check,
}

_floats_only: bool
for _name, (_compute, _floats_only) in BINARY.items():
    register(_name, check=_CHECKS.get(_name, broadcast_check))(_binary(_compute, _floats_only))


# ---- rounding to decimals -------------------------------------------------------------------


def _round_decimals(decimals: int) -> Callable[..., None]:
    """x rounded to ``decimals`` decimal places, ties to even (ops-math math/round/docs/
    aclnnRoundDecimals&aclnnInplaceRoundDecimals.md), as PyTorch's round(decimals=):
    round(x 10^d) / 10^d for d >= 0, round(x / 10^-d) 10^-d below."""
    def compute(target: np.ndarray, x: np.ndarray) -> None:
        kind = target.dtype.type
        scale = kind(10.0 ** abs(decimals))
        if decimals >= 0:
            np.multiply(x, scale, out=target)
            np.round(target, out=target)
            np.divide(target, scale, out=target)
        else:
            np.divide(x, scale, out=target)
            np.round(target, out=target)
            np.multiply(target, scale, out=target)
    return compute


def _round_decimals_check(self: np.ndarray, decimals: int, out: np.ndarray) -> None:
    same_shape(self=self, out=out)


@register("aclnnRoundDecimals", check=_round_decimals_check)
def round_decimals(self: np.ndarray, decimals: int, out: np.ndarray) -> None:
    """An integral self is its own result (nothing below the units to round)."""
    if self.size == 0:
        return
    if self.dtype.kind in "biu":
        np.copyto(out, self, casting="unsafe")
        return
    apply(out, _round_decimals(int(decimals)), [self], compute_dtype(self.dtype))



# ---- aclnnScale -----------------------------------------------------------------------------

_SCALE = Dtypes(("float32", "float16", "bfloat16"))


def _scale_view(x: np.ndarray, scale: np.ndarray, axis: int, numAxes: int,
                scaleFromBlob: bool) -> tuple[int, ...]:
    """The shape broadcasting scale over x: scale's dimensions from axis on, ones elsewhere;
    one value broadcasts whole."""
    start = axis % x.ndim if x.ndim else 0
    if scale.size == 1 and (scaleFromBlob and numAxes == 0 or not scaleFromBlob
                            and scale.ndim <= 1):
        return (1,) * x.ndim
    return (1,) * start + scale.shape + (1,) * (x.ndim - start - scale.ndim)


def _scale_check(x: np.ndarray, scale: np.ndarray, bias: Any, axis: int, numAxes: int,
                 scaleFromBlob: bool, y: np.ndarray) -> None:
    """ops-math math/scale/op_api/aclnn_scale.cpp: CheckDtypeValid and CheckShape
    (_scale_check_layouts), CheckDim (axis in [-rank, rank), numAxes at least -1), then
    CheckShapeFromBlob or CheckShapeNoFromBlob (_scale_check_from_blob, _scale_check_along)."""
    _scale_check_layouts(x, scale, bias, y)
    rank = x.ndim
    if not -rank <= axis < rank:
        raise ValueError(f"axis is {axis}: it must be in [{-rank}, {rank})")
    if numAxes < -1:
        raise ValueError(f"numAxes is {numAxes}: it must be at least -1")
    if scaleFromBlob:
        _scale_check_from_blob(x, scale, axis, numAxes)
    else:
        _scale_check_along(x, scale, axis)


def _scale_check_layouts(x: np.ndarray, scale: np.ndarray, bias: Any, y: np.ndarray) -> None:
    """CheckDtypeValid (scale, bias and y of x's dtype) and CheckShape (y of x's shape, bias
    of scale's, at most 8 dimensions)."""
    for name, value in (("scale", scale), ("y", y)):
        if value.dtype != x.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be x's "
                             f"{x.dtype.name}")
    if bias is not None and bias.dtype != scale.dtype:
        raise ValueError(f"bias has dtype {bias.dtype.name}: it must be scale's "
                         f"{scale.dtype.name}")
    if y.shape != x.shape:
        raise ValueError(f"y has shape {list(y.shape)}: it must be x's {list(x.shape)}")
    if bias is not None and bias.shape != scale.shape:
        raise ValueError(f"bias has shape {list(bias.shape)}: it must be scale's "
                         f"{list(scale.shape)}")
    for name, value in (("x", x), ("scale", scale)):
        if value.ndim > 8:
            raise ValueError(f"{name} has {value.ndim} dimensions: at most 8")


def _scale_check_from_blob(x: np.ndarray, scale: np.ndarray, axis: int, numAxes: int) -> None:
    """CheckShapeFromBlob: numAxes 0 takes one scale value; else scale is x's
    shape[axis:axis + numAxes], numAxes -1 reaching the last axis."""
    rank = x.ndim
    start = axis + rank if axis < 0 else axis
    if numAxes == 0:
        if scale.size != 1:
            raise ValueError("numAxes is 0: scale must hold one value, not shape "
                             f"{list(scale.shape)}")
        return
    length = rank - start if numAxes == -1 else numAxes
    if length + start > rank or length <= 0:
        raise ValueError(f"axis {axis} and numAxes {numAxes} reach past x's {rank} "
                         "dimensions")
    expected = x.shape[start:start + length]
    if scale.shape != expected:
        raise ValueError(f"scale has shape {list(scale.shape)}: it must be "
                         f"{list(expected)} (x's dimensions from axis, numAxes of them)")


def _scale_check_along(x: np.ndarray, scale: np.ndarray, axis: int) -> None:
    """CheckShapeNoFromBlob: scale is x's shape from axis on, or one value."""
    rank = x.ndim
    start = axis + rank if axis < 0 else axis
    if scale.ndim + start > rank:
        raise ValueError(f"axis {axis} and scale's {scale.ndim} dimensions reach past x's "
                         f"{rank}")
    if scale.size == 1 and scale.ndim <= 1:
        return
    if scale.shape != x.shape[start:start + scale.ndim]:
        raise ValueError(f"scale has shape {list(scale.shape)}: it must be x's dimensions from "
                         f"axis {axis}, {list(x.shape[start:start + scale.ndim])}")


@register("aclnnScale", dtypes=_SCALE, check=_scale_check)
def scale(x: np.ndarray, scale: np.ndarray, bias: Any, axis: int, numAxes: int,
          scaleFromBlob: bool, y: np.ndarray) -> None:
    """y = x scale (+ bias), scale and bias laid along x's dimensions from axis (ops-math
    math/scale/docs/aclnnScale.md), in float32 for the halves."""
    if x.size == 0:
        return
    view = _scale_view(x, scale, axis, numAxes, scaleFromBlob)
    dtype = compute_dtype(x.dtype)
    result = x.astype(dtype) * scale.astype(dtype).reshape(view)
    if bias is not None:
        result += bias.astype(dtype).reshape(view)
    store(y, result)
