"""Elementwise kernels: math and activations with their backward operators, arithmetic and
comparisons in their tensor, scalar and in-place forms, logical operators, clamp, select and
cast.

Inputs broadcast as CANN's (and PyTorch's) rules say. Tensor and tensor: the dtypes promote as
PyTorch's ``promote_types`` does (float16 with bfloat16 gives float32); tensor and scalar: the
tensor's dtype, unless the scalar is of a higher category (a float with an integer tensor:
float32). Floating results are computed in float32 for float16 and bfloat16 and rounded once,
into the output's dtype.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..dtypes import Dtypes, is_bfloat16, numpy_dtype
from . import builtin, store, widen

FLOATS = Dtypes(("float32", "float16", "bfloat16"))
FLOATS64 = Dtypes(("float32", "float16", "bfloat16", "float64"))
NUMBERS = Dtypes(("float32", "float16", "bfloat16", "float64", "int8", "int16", "int32",
                  "int64", "uint8"))
ANY = Dtypes(("float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64",
              "uint8", "bool"))

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2}

# The loops below that register one kernel per table row
_name: str
_unary_name: str
_short: str
_function: Callable[..., Any]
_dtypes: Dtypes


def _category(dtype: np.dtype) -> int:
    return 2 if is_bfloat16(dtype) else _CATEGORY.get(dtype.kind, 2)


def promote_types(first: np.dtype, second: np.dtype) -> np.dtype:
    """PyTorch's ``promote_types`` over the dtypes CANN's kernels take."""
    if first == second:
        return first
    halves = {np.dtype(np.float16).name, "bfloat16"}
    if {first.name, second.name} == halves:
        return np.dtype(np.float32)
    if is_bfloat16(first) or is_bfloat16(second):
        other = second if is_bfloat16(first) else first
        return first if is_bfloat16(first) and _category(other) < 2 else \
            second if _category(other) < 2 else np.promote_types(other, np.float32)
    return np.promote_types(first, second)


def scalar_result_type(tensor: np.dtype, scalar: Any) -> np.dtype:
    """The dtype of a tensor-scalar operation: the tensor's, unless the scalar's category is
    higher (then float32 for a float scalar, int64 for an integer one with a bool tensor)."""
    kind = np.asarray(scalar).dtype
    if _category(kind) <= _category(tensor):
        return tensor
    return np.dtype(np.float32) if _category(kind) == 2 else np.dtype(np.int64)


def _computed(values: np.ndarray, dtype: np.dtype) -> Any:
    """``values`` as ``dtype`` computes: float16 and bfloat16 in float32."""
    return widen(np.asarray(values).astype(dtype, copy=False))


def _value(scalar: Any, dtype: np.dtype) -> Any:
    """A scalar argument as the operation's compute dtype takes it."""
    return widen(np.asarray(scalar).astype(dtype))[()]


# ---- unary math and activations: (input, out) -------------------------------------------


# erf in float64 without a per-element loop: its Maclaurin series below |x| = 0.5 (exact to
# double precision in 14 terms there), else 1 - erfc(|x|) from the Chebyshev fit of erfc of
# Numerical Recipes (2nd ed., section 6.2, fractional error below 1.2e-7 everywhere), whose
# relative error is at most that where erf >= 0.52.
_ERFC_FIT = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
             -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def _erf(x: Any) -> Any:
    values = np.asarray(x, np.float64)
    small = np.abs(values) < 0.5
    series = np.zeros_like(values)
    term = values.copy()
    for n in range(14):  # sum (-1)^n x^(2n+1) / (n! (2n+1))
        series += term / (2 * n + 1)
        term = -term * values * values / (n + 1)
    series *= 2 / np.sqrt(np.pi)
    a = np.abs(values)
    t = 1 / (1 + 0.5 * a)
    poly = np.zeros_like(values)
    for coefficient in reversed(_ERFC_FIT):
        poly = poly * t + coefficient
    erfc = t * np.exp(-a * a + poly)
    large = np.copysign(1 - erfc, values)
    return np.where(small, series, large).astype(np.asarray(x).dtype)


def _gelu(x: np.ndarray) -> Any:
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(np.asarray(2.0, x.dtype))))


def _gelu_tanh(x: np.ndarray) -> Any:
    inner = np.sqrt(np.asarray(2.0 / np.pi, x.dtype)) * (x + x.dtype.type(0.044715) * x ** 3)
    return 0.5 * x * (1.0 + np.tanh(inner))


def _erfinv(x: np.ndarray) -> Any:
    # Newton's method on erf(y) = x from Giles' single-precision approximation's start.
    w = -np.log((1.0 - x) * (1.0 + x))
    y = np.where(w < 5.0, x * (1.0 + 0.25 * w), x * (1.0 + 0.1 * w))
    for _ in range(30):
        err = _erf(y) - x
        y = y - err / (2.0 / np.sqrt(np.pi) * np.exp(-y * y))
    return np.where(np.abs(x) == 1, np.copysign(np.inf, x), y).astype(x.dtype)


UNARY: dict[str, tuple[Callable[..., Any], Dtypes]] = {
    "aclnnAbs": (np.abs, NUMBERS),
    "aclnnNeg": (np.negative, NUMBERS),
    "aclnnExp": (np.exp, FLOATS64),
    "aclnnExpm1": (np.expm1, FLOATS64),
    "aclnnLog": (np.log, FLOATS64),
    "aclnnLog2": (np.log2, FLOATS64),
    "aclnnLog10": (np.log10, FLOATS64),
    "aclnnLog1p": (np.log1p, FLOATS64),
    "aclnnSqrt": (np.sqrt, FLOATS64),
    "aclnnRsqrt": (lambda x: 1 / np.sqrt(x), FLOATS64),
    "aclnnReciprocal": (lambda x: 1 / x, FLOATS64),
    "aclnnSquare": (np.square, NUMBERS),
    "aclnnSin": (np.sin, FLOATS64),
    "aclnnCos": (np.cos, FLOATS64),
    "aclnnTan": (np.tan, FLOATS64),
    "aclnnAsin": (np.arcsin, FLOATS64),
    "aclnnAcos": (np.arccos, FLOATS64),
    "aclnnAtan": (np.arctan, FLOATS64),
    "aclnnSinh": (np.sinh, FLOATS64),
    "aclnnCosh": (np.cosh, FLOATS64),
    "aclnnTanh": (np.tanh, FLOATS64),
    "aclnnErf": (_erf, FLOATS64),
    "aclnnErfinv": (_erfinv, FLOATS64),
    "aclnnSigmoid": (lambda x: 1 / (1 + np.exp(-x)), FLOATS64),
    "aclnnRelu": (lambda x: np.maximum(x, x.dtype.type(0)), NUMBERS),
    "aclnnSilu": (lambda x: x / (1 + np.exp(-x)), FLOATS),
    "aclnnGelu": (_gelu, FLOATS),
    "aclnnMish": (lambda x: x * np.tanh(np.logaddexp(x.dtype.type(0), x)), FLOATS),
    "aclnnHardswish": (lambda x: x * np.clip(x + 3, 0, 6) / 6, FLOATS),
    "aclnnFloor": (np.floor, FLOATS64),
    "aclnnCeil": (np.ceil, FLOATS64),
    "aclnnTrunc": (np.trunc, FLOATS64),
    "aclnnRound": (np.round, FLOATS64),  # half to even, as torch.round
    "aclnnSign": (np.sign, NUMBERS),
}


def _unary(function: Callable[..., Any]) -> Callable[..., None]:
    def compute(**arguments: Any) -> None:
        source, out = arguments.values()
        store(out, function(widen(source)))
    return compute


def _same_shape(**arguments: Any) -> None:
    """The output (the last argument) has the shape of the input (the first)."""
    values = list(arguments.values())
    source, out = values[0], values[-1]
    if source.shape != out.shape:
        raise ValueError(f"out has shape {out.shape}, the input {source.shape}: they must be "
                         "equal")


for _name, (_function, _dtypes) in UNARY.items():
    builtin(_name, dtypes=_dtypes, check=_same_shape)(_unary(_function))


@builtin("aclnnGeluV2", dtypes=FLOATS)
def gelu_v2(x: np.ndarray, approximate: int, y: np.ndarray) -> None:
    """approximate: 0 'none' (erf), 1 'tanh'."""
    store(y, (_gelu_tanh if approximate == 1 else _gelu)(widen(x)))


@builtin("aclnnLogicalNot", dtypes=ANY)
def logical_not(self: np.ndarray, out: np.ndarray) -> None:
    store(out, np.logical_not(self))


# ---- backward of activations: (gradOutput, saved, gradInput) ------------------------------


@builtin("aclnnSigmoidBackward", dtypes=FLOATS)
def sigmoid_backward(gradOutput: np.ndarray, output: np.ndarray, gradInput: np.ndarray) -> None:
    y = widen(output)
    store(gradInput, widen(gradOutput) * y * (1 - y))


@builtin("aclnnTanhBackward", dtypes=FLOATS)
def tanh_backward(gradOutput: np.ndarray, output: np.ndarray, gradInput: np.ndarray) -> None:
    y = widen(output)
    store(gradInput, widen(gradOutput) * (1 - y * y))


@builtin("aclnnSiluBackward", dtypes=FLOATS)
def silu_backward(gradOutput: np.ndarray, self: np.ndarray, gradInput: np.ndarray) -> None:
    x = widen(self)
    s = 1 / (1 + np.exp(-x))
    store(gradInput, widen(gradOutput) * s * (1 + x * (1 - s)))


@builtin("aclnnGeluBackward", dtypes=FLOATS)
def gelu_backward(gradOutput: np.ndarray, self: np.ndarray, gradInput: np.ndarray) -> None:
    x = widen(self)
    cdf = 0.5 * (1 + _erf(x / np.sqrt(np.asarray(2.0, x.dtype))))
    pdf = np.exp(-0.5 * x * x) / np.sqrt(np.asarray(2 * np.pi, x.dtype))
    store(gradInput, widen(gradOutput) * (cdf + x * pdf))


@builtin("aclnnThresholdBackward", dtypes=FLOATS)
def threshold_backward(gradOutput: np.ndarray, self: np.ndarray, threshold: Any,
                       out: np.ndarray) -> None:
    x = widen(self)
    store(out, np.where(x <= _value(threshold, x.dtype), 0, widen(gradOutput)))


# ---- binary: tensor with tensor, tensor with scalar, in place -----------------------------


def _binary_dtype(self: np.ndarray, other: Any) -> np.dtype:
    if isinstance(other, np.ndarray):
        return promote_types(self.dtype, other.dtype)
    return scalar_result_type(self.dtype, other)


def _operands(self: np.ndarray, other: Any) -> tuple[np.ndarray, Any]:
    dtype = _binary_dtype(self, other)
    if isinstance(other, np.ndarray):
        return _computed(self, dtype), _computed(other, dtype)
    return _computed(self, dtype), _value(other, dtype)


def _broadcasts_to(out: np.ndarray, *operands: Any) -> None:
    shapes = [np.shape(o) for o in operands if isinstance(o, np.ndarray)]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"the inputs' shapes {', '.join(map(str, shapes))} do not "
                         "broadcast") from None
    if tuple(shape) != out.shape:
        raise ValueError(f"out has shape {out.shape}, the broadcast shape of the inputs is "
                         f"{tuple(shape)}")


ARITHMETIC: dict[str, Callable[..., Any]] = {
    "Mul": np.multiply,
    "Div": np.true_divide,
    "Maximum": np.maximum,
    "Minimum": np.minimum,
    "FloorDivide": np.floor_divide,
    "Atan2": np.arctan2,
    "PowTensorTensor": np.power,
    "PowTensorScalar": np.power,
    "Muls": np.multiply,
    "Divs": np.true_divide,
}

COMPARISONS: dict[str, Callable[..., Any]] = {
    "Eq": np.equal, "Ne": np.not_equal, "Gt": np.greater, "Ge": np.greater_equal,
    "Lt": np.less, "Le": np.less_equal,
}


def _arithmetic(function: Callable[..., Any]) -> Callable[..., None]:
    def compute(**arguments: Any) -> None:
        self, other, out = arguments.values()
        a, b = _operands(self, other)
        store(out, function(a, b))
    return compute


def _binary_check(**arguments: Any) -> None:
    values = list(arguments.values())
    _broadcasts_to(values[-1], *values[:-1])


for _short, _function in ARITHMETIC.items():
    _dtypes = FLOATS64 if _short in ("Div", "Divs", "Atan2") else NUMBERS
    builtin(f"aclnn{_short}", dtypes=_dtypes, check=_binary_check)(_arithmetic(_function))

for _short, _function in COMPARISONS.items():
    for _form in ("Tensor", "Scalar"):
        builtin(f"aclnn{_short}{_form}", dtypes=ANY, check=_binary_check)(
            _arithmetic(_function))


def _add(sign: int) -> Callable[..., None]:
    def compute(self: np.ndarray, other: Any, alpha: Any, out: np.ndarray) -> None:
        a, b = _operands(self, other)
        scale = _value(alpha, np.asarray(a).dtype) if alpha is not None else 1
        store(out, a + sign * scale * b)
    return compute


for _short, _sign in (("Sub", -1), ("Adds", 1), ("Subs", -1)):  # aclnnAdd is a C kernel
    builtin(f"aclnn{_short}", dtypes=NUMBERS, check=_binary_check)(_add(_sign))


def _inplace_add(sign: int) -> Callable[..., None]:
    def compute(selfRef: np.ndarray, other: Any, alpha: Any) -> None:
        a, b = _operands(selfRef, other)
        scale = _value(alpha, np.asarray(a).dtype) if alpha is not None else 1
        store(selfRef, a + sign * scale * b)
    return compute


def _inplace_check(**arguments: Any) -> None:
    values = list(arguments.values())
    target, other = values[0], values[1]
    if isinstance(other, np.ndarray):
        _broadcasts_to(target, target, other)


for _short, _sign in (("InplaceSub", -1), ("InplaceAdds", 1),  # InplaceAdd: a C kernel
                      ("InplaceSubs", -1)):
    builtin(f"aclnn{_short}", dtypes=NUMBERS, check=_inplace_check)(_inplace_add(_sign))


def _inplace(function: Callable[..., Any]) -> Callable[..., None]:
    def compute(**arguments: Any) -> None:
        selfRef, other = arguments.values()
        a, b = _operands(selfRef, other)
        store(selfRef, function(a, b))
    return compute


for _short, _function in (("InplaceMul", np.multiply), ("InplaceMuls", np.multiply),
                          ("InplaceDiv", np.true_divide), ("InplaceDivs", np.true_divide)):
    builtin(f"aclnn{_short}", dtypes=NUMBERS, check=_inplace_check)(_inplace(_function))


def _logical(function: Callable[..., Any]) -> Callable[..., None]:
    def compute(self: np.ndarray, other: np.ndarray, out: np.ndarray) -> None:
        store(out, function(self.astype(bool), other.astype(bool)))
    return compute


for _short, _function in (("LogicalAnd", np.logical_and), ("LogicalOr", np.logical_or),
                          ("LogicalXor", np.logical_xor)):
    builtin(f"aclnn{_short}", dtypes=ANY, check=_binary_check)(_logical(_function))


# ---- three operands -----------------------------------------------------------------------


@builtin("aclnnSWhere", dtypes=ANY, check=_binary_check)
def s_where(condition: np.ndarray, self: np.ndarray, other: np.ndarray, out: np.ndarray) -> None:
    a, b = _operands(self, other)
    store(out, np.where(condition.astype(bool), a, b))


@builtin("aclnnLerp", dtypes=FLOATS, check=_binary_check)
def lerp(self: np.ndarray, end: np.ndarray, weight: np.ndarray, out: np.ndarray) -> None:
    a, b, w = widen(self), widen(end), widen(weight)
    store(out, a + w * (b - a))


@builtin("aclnnAddcmul", dtypes=FLOATS, check=_binary_check)
def addcmul(self: np.ndarray, tensor1: np.ndarray, tensor2: np.ndarray, value: Any,
            out: np.ndarray) -> None:
    a = widen(self)
    store(out, a + _value(value, a.dtype) * widen(tensor1) * widen(tensor2))


@builtin("aclnnAddcdiv", dtypes=FLOATS, check=_binary_check)
def addcdiv(self: np.ndarray, tensor1: np.ndarray, tensor2: np.ndarray, value: Any,
            out: np.ndarray) -> None:
    a = widen(self)
    store(out, a + _value(value, a.dtype) * widen(tensor1) / widen(tensor2))


# ---- clamp, fill, cast --------------------------------------------------------------------


@builtin("aclnnClamp", dtypes=NUMBERS, check=_same_shape)
def clamp(self: np.ndarray, clipValueMin: Any, clipValueMax: Any, out: np.ndarray) -> None:
    x = widen(self)
    low = None if clipValueMin is None else _value(clipValueMin, x.dtype)
    high = None if clipValueMax is None else _value(clipValueMax, x.dtype)
    result = x
    if low is not None:
        result = np.maximum(result, low)
    if high is not None:
        result = np.minimum(result, high)
    store(out, result)


@builtin("aclnnClampMin", dtypes=NUMBERS, check=_same_shape)
def clamp_min(self: np.ndarray, clipValueMin: Any, out: np.ndarray) -> None:
    x = widen(self)
    store(out, np.maximum(x, _value(clipValueMin, x.dtype)))


@builtin("aclnnClampMax", dtypes=NUMBERS, check=_same_shape)
def clamp_max(self: np.ndarray, clipValueMax: Any, out: np.ndarray) -> None:
    x = widen(self)
    store(out, np.minimum(x, _value(clipValueMax, x.dtype)))


@builtin("aclnnInplaceFillScalar", dtypes=ANY)
def inplace_fill_scalar(selfRef: np.ndarray, value: Any) -> None:
    store(selfRef, np.asarray(value))


@builtin("aclnnInplaceZero", dtypes=ANY)
def inplace_zero(selfRef: np.ndarray) -> None:
    selfRef[...] = 0


@builtin("aclnnInplaceMaskedFillScalar", dtypes=ANY)
def inplace_masked_fill_scalar(selfRef: np.ndarray, mask: np.ndarray, value: Any) -> None:
    selfRef[np.broadcast_to(mask.astype(bool), selfRef.shape)] = \
        np.asarray(value).astype(selfRef.dtype)


def _cast_check(self: np.ndarray, dtype: int, out: np.ndarray) -> None:
    if self.shape != out.shape:
        raise ValueError(f"out has shape {out.shape}, self {self.shape}: they must be equal")
    if numpy_dtype(dtype) != out.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}, but dtype is aclDataType {dtype}")


@builtin("aclnnCast", dtypes=ANY, check=_cast_check)
def cast(self: np.ndarray, dtype: int, out: np.ndarray) -> None:
    store(out, self)


@builtin("aclnnInplaceOne", dtypes=ANY)
def inplace_one(selfRef: np.ndarray) -> None:
    selfRef[...] = 1


# In-place forms of the unary operators: (selfRef) or, as CANN names it for InplaceSqrt, (self).
INPLACE_UNARY = {"aclnnInplaceRelu": "aclnnRelu", "aclnnInplaceSigmoid": "aclnnSigmoid",
                 "aclnnInplaceTanh": "aclnnTanh", "aclnnInplaceExp": "aclnnExp",
                 "aclnnInplaceSqrt": "aclnnSqrt", "aclnnInplaceNeg": "aclnnNeg",
                 "aclnnInplaceLog": "aclnnLog"}


def _inplace_unary(function: Callable[..., Any]) -> Callable[..., None]:
    def compute(**arguments: Any) -> None:
        (target,) = arguments.values()
        store(target, function(widen(target)))
    return compute


for _name, _unary_name in INPLACE_UNARY.items():
    _function, _dtypes = UNARY[_unary_name]
    builtin(_name, dtypes=_dtypes)(_inplace_unary(_function))
