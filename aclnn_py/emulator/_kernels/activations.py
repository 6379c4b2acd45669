"""More elementwise operators with a closed formula: activations (Selu, Celu, Softsign,
LogSigmoid, Swish, SquaredRelu, Hardshrink, Softshrink, Threshold, Prelu, AddRelu), inverse
hyperbolic functions, and Signbit, NanToNum, Heaviside, Logit, IsClose.

Each formula is its CANN doc's (ops-nn activation/<op>/docs/aclnn<Op>.md, ops-math
math/<op>/docs/...), with PyTorch as the reference where the doc is silent (NaN, the edges of
a piecewise definition). Floating inputs compute in float32 (float16 and bfloat16 widened,
rounded once into out) or float64; an integral input computes in float32.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .elementwise import apply, compute_dtype, promote_types, real_value, register, same_shape

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _floating(dtype: np.dtype) -> np.dtype:
    """The dtype a tensor of ``dtype`` computes in: float32 for the halves and the integers."""
    computed = compute_dtype(dtype)
    return computed if computed.kind in "fc" else np.dtype(np.float32)


def _compute(out: np.ndarray, value: Any) -> None:
    """Write ``value`` into ``out``, rounded once (out may have another dtype: a bool)."""
    if out.size:
        out[...] = np.asarray(value).astype(out.dtype, copy=False)


def _unary(function: Callable[[np.ndarray], Any]) -> Callable[..., None]:
    def kernel(**arguments: Any) -> None:
        source, out = arguments.values()
        if source.size:
            _compute(out, function(source.astype(_floating(source.dtype))))
    return kernel


def _selu(x: np.ndarray) -> Any:
    """scale (max(0, x) + min(0, alpha (e^x - 1)))."""
    kind = x.dtype.type
    return kind(SELU_SCALE) * np.where(x > 0, x, kind(SELU_ALPHA) * np.expm1(np.minimum(x, 0)))


def _log_sigmoid(x: np.ndarray) -> Any:
    """log(1 / (1 + e^-x)) = min(x, 0) - log1p(e^-|x|), without overflow."""
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


UNARY: dict[str, tuple[str, Callable[[np.ndarray], Any]]] = {
    # name: (the doc's formula, the function)
    "aclnnSelu": ("scale (max(0, x) + min(0, alpha (e^x - 1)))", _selu),
    "aclnnSoftsign": ("x / (1 + |x|)", lambda x: x / (1 + np.abs(x))),
    "aclnnLogSigmoid": ("log(1 / (1 + e^-x))", _log_sigmoid),
    "aclnnSquaredRelu": ("max(0, x)^2", lambda x: np.square(np.maximum(x.dtype.type(0), x))),
    "aclnnAcosh": ("ln(x + sqrt(x^2 - 1))", np.arccosh),
    "aclnnAsinh": ("ln(x + sqrt(x^2 + 1))", np.arcsinh),
}

for _name, (_, _function) in UNARY.items():
    register(_name, check=same_shape)(_unary(_function))


@register("aclnnCelu", check=same_shape)
def celu(self: np.ndarray, alpha: Any, out: np.ndarray) -> None:
    """max(0, x) + min(0, alpha (e^(x / alpha) - 1)) (ops-nn activation/celu_v2/docs/
    aclnnCelu&aclnnInplaceCelu.md)."""
    if self.size == 0:
        return
    x = self.astype(_floating(self.dtype))
    a = x.dtype.type(real_value(alpha))
    _compute(out, np.where(x > 0, x, a * np.expm1(np.minimum(x, 0) / a)))


def _lambd_check(self: np.ndarray, lambd: Any, out: np.ndarray) -> None:
    same_shape(self=self, out=out)
    if real_value(lambd) < 0:
        raise ValueError(f"lambd is {real_value(lambd)}: it must be at least 0")


@register("aclnnHardshrink", check=same_shape)
def hardshrink(self: np.ndarray, lambd: Any, out: np.ndarray) -> None:
    """x where |x| > lambd, else 0 (ops-nn activation/hard_shrink/docs/aclnnHardshrink.md)."""
    if self.size:
        x = self.astype(_floating(self.dtype))
        _compute(out, np.where(np.abs(x) > x.dtype.type(real_value(lambd)), x, 0))


@register("aclnnSoftshrink", check=_lambd_check)
def softshrink(self: np.ndarray, lambd: Any, out: np.ndarray) -> None:
    """x - lambd above lambd, x + lambd below -lambd, else 0 (ops-nn activation/
    softshrink/docs/aclnnSoftshrink.md); NaN stays NaN."""
    # x - clip(x, -lambd, lambd): 0 inside, x -+ lambd outside, NaN through clip
    if self.size:
        dtype = compute_dtype(_floating(self.dtype))
        bound = dtype.type(real_value(lambd))

        def compute(target: np.ndarray, x: np.ndarray) -> None:
            np.clip(x, -bound, bound, out=target)
            np.subtract(x, target, out=target)
        apply(out, compute, [self], dtype)


def _threshold(self: np.ndarray, threshold: Any, value: Any, out: np.ndarray) -> None:
    if self.size == 0:
        return
    dtype = compute_dtype(self.dtype)
    bound = np.asarray(real_value(threshold)).astype(dtype)[()]
    replacement = np.asarray(real_value(value)).astype(dtype)[()]

    if dtype.itemsize in (4, 8) and dtype.kind == "f":
        bits = np.dtype(f"int{8 * dtype.itemsize}")
        replaced = np.asarray(replacement, dtype).view(bits)[()]

        def compute(target: np.ndarray, x: np.ndarray) -> None:
            # x where x > threshold (or NaN: not x <= threshold), else value (PyTorch's
            # threshold), selected by bit masks: no branch on the data
            keep = np.less_equal(x, bound)
            mask = np.negative(keep.view(np.uint8), dtype=bits)      # -1 where replaced
            out_bits = target.view(bits)
            np.bitwise_and(mask, replaced, out=out_bits)
            np.invert(mask, out=mask)
            np.bitwise_and(mask, x.view(bits), out=mask)
            np.bitwise_or(out_bits, mask, out=out_bits)
    else:
        def compute(target: np.ndarray, x: np.ndarray) -> None:
            target[...] = np.where(np.less_equal(x, bound), replacement, x)
    apply(out, compute, [self], dtype)


@register("aclnnThreshold", check=same_shape)
def threshold(self: np.ndarray, threshold: Any, value: Any, out: np.ndarray) -> None:
    """self where self > threshold, else value (ops-nn activation/threshold/docs/
    aclnnThreshold&aclnnInplaceThreshold.md)."""
    _threshold(self, threshold, value, out)


@register("aclnnInplaceThreshold")
def inplace_threshold(selfRef: np.ndarray, threshold: Any, value: Any) -> None:
    """aclnnThreshold into selfRef."""
    _threshold(selfRef, threshold, value, selfRef)  # apply reads each block before writing


@register("aclnnSwish", check=same_shape)
def swish(self: np.ndarray, betaOptional: Any, out: np.ndarray) -> None:
    """x sigmoid(beta x), beta 1 when left out (ops-nn activation/swish/docs/aclnnSwish.md)."""
    if self.size == 0:
        return
    x = self.astype(_floating(self.dtype))
    beta = x.dtype.type(1.0 if betaOptional is None else real_value(betaOptional))
    _compute(out, x / (1 + np.exp(-beta * x)))


def _prelu_weight(self: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """weight as it broadcasts to self: one value, or one per channel (self's dim 1; dim 0
    of a 1-d self), as PyTorch's prelu."""
    if weight.size == 1:
        return weight.reshape(())
    if self.ndim == 0 or weight.size != self.shape[1 if self.ndim > 1 else 0]:
        raise ValueError(f"weight has {weight.size} elements: it must have 1 or one per "
                         f"channel of self (shape {list(self.shape)})")
    shape = [1] * self.ndim
    shape[1 if self.ndim > 1 else 0] = weight.size
    return weight.reshape(shape)


def _prelu_check(self: np.ndarray, weight: np.ndarray, out: np.ndarray) -> None:
    same_shape(self=self, out=out)
    _prelu_weight(self, weight)


@register("aclnnPrelu", check=_prelu_check)
def prelu(self: np.ndarray, weight: np.ndarray, out: np.ndarray) -> None:
    """max(0, x) + a min(0, x), a one weight per channel (ops-nn activation/p_relu/docs/
    aclnnPrelu.md)."""
    if self.size:
        dtype = compute_dtype(promote_types(self.dtype, weight.dtype))
        a = _prelu_weight(self, weight).astype(dtype)

        def compute(target: np.ndarray, x: np.ndarray, slope: np.ndarray) -> None:
            # max(x, 0) + a min(x, 0): NaN stays NaN
            np.minimum(x, 0, out=target)
            np.multiply(target, slope, out=target)
            target += np.maximum(x, 0)
        apply(out, compute, [self, a], dtype)


def _add_relu_check(self: np.ndarray, other: np.ndarray, alpha: Any, out: np.ndarray) -> None:
    shape = np.broadcast_shapes(self.shape, other.shape)
    if shape != out.shape:
        raise ValueError(f"out has shape {list(out.shape)}, but self and other broadcast to "
                         f"{list(shape)}")


def _add_relu(self: np.ndarray, other: np.ndarray, alpha: Any, out: np.ndarray) -> None:
    if out.size == 0:
        return
    dtype = compute_dtype(promote_types(self.dtype, other.dtype))
    a = np.asarray(np.real(alpha)).astype(dtype)
    total = self.astype(dtype) + a * other.astype(dtype)
    _compute(out, np.where(np.isnan(total), total, np.maximum(total, 0)))


@register("aclnnAddRelu", check=_add_relu_check)
def add_relu(self: np.ndarray, other: np.ndarray, alpha: Any, out: np.ndarray) -> None:
    """relu(self + alpha other) (ops-nn activation/add_relu/docs/aclnnAddRelu.md)."""
    _add_relu(self, other, alpha, out)


@register("aclnnInplaceAddRelu")
def inplace_add_relu(selfRef: np.ndarray, other: np.ndarray, alpha: Any) -> None:
    """aclnnAddRelu into selfRef."""
    _add_relu(selfRef.copy(), other, alpha, selfRef)


# ---- Signbit, NanToNum, Heaviside, Logit, IsClose -----------------------------------------


@register("aclnnSignbit", check=same_shape)
def signbit(self: np.ndarray, out: np.ndarray) -> None:
    """Whether the sign bit is set (-0.0 and negative NaN included; an integer below 0)."""
    if self.size:
        values = self if self.dtype.kind in "biu" else self.astype(np.float32)
        _compute(out, np.signbit(values) if values.dtype.kind == "f" else values < 0)


def _largest(dtype: np.dtype) -> float:
    """The largest finite value of a floating ``dtype`` (bfloat16's through ml_dtypes)."""
    try:
        return float(np.finfo(dtype).max)
    except ValueError:
        import ml_dtypes

        return float(ml_dtypes.finfo(dtype).max)  # type: ignore[no-untyped-call]


@register("aclnnNanToNum", check=same_shape)
def nan_to_num(self: np.ndarray, nan: float, posinf: float, neginf: float,
               out: np.ndarray) -> None:
    """NaN -> nan, +inf -> posinf, -inf -> neginf, the others kept (ops-math math/nan_to_num/
    docs/aclnnNanToNum&aclnnInplaceNanToNum.md); a replacement beyond out's range takes its
    largest finite value, as PyTorch's."""
    if self.size == 0:
        return
    if self.dtype.kind in "biu":
        _compute(out, self)
        return
    largest = _largest(out.dtype)

    def clipped(value: float) -> float:
        return value if math.isnan(value) else min(max(value, -largest), largest)

    dtype = compute_dtype(self.dtype)

    def compute(target: np.ndarray, x: np.ndarray) -> None:  # numpy's own, block by block
        np.copyto(target, np.nan_to_num(x, nan=clipped(nan), posinf=clipped(posinf),
                                         neginf=clipped(neginf)), casting="unsafe")
    apply(out, compute, [self], dtype)


def _heaviside_check(input: np.ndarray, values: np.ndarray, out: np.ndarray) -> None:  # noqa: A002
    shape = np.broadcast_shapes(input.shape, values.shape)
    if shape != out.shape:
        raise ValueError(f"out has shape {list(out.shape)}, but input and values broadcast to "
                         f"{list(shape)}")


@register("aclnnHeaviside", check=_heaviside_check)
def heaviside(input: np.ndarray, values: np.ndarray, out: np.ndarray) -> None:  # noqa: A002
    """0 where input < 0, values where input == 0, 1 where input > 0 (ops-nn activation/
    heaviside/docs/aclnnHeaviside.md); NaN gives 0, as PyTorch's."""
    if out.size:
        dtype = compute_dtype(promote_types(input.dtype, values.dtype))
        x = input.astype(dtype)
        _compute(out, np.where(x == 0, values.astype(dtype), (x > 0).astype(dtype)))


@register("aclnnLogit", check=same_shape)
def logit(input: np.ndarray, eps: float, out: np.ndarray) -> None:  # noqa: A002
    """ln(z / (1 - z)), z the input clamped to [eps, 1 - eps] when eps >= 0, else the input
    (ops-nn loss/logit/docs/aclnnLogit.md)."""
    if input.size == 0:
        return
    z = input.astype(_floating(input.dtype))
    if eps >= 0:
        z = np.clip(z, z.dtype.type(eps), z.dtype.type(1 - eps))
    _compute(out, np.log(z / (1 - z)))


def _is_close_check(self: np.ndarray, other: np.ndarray, rtol: float, atol: float,
                    equalNan: bool, out: np.ndarray) -> None:
    shape = np.broadcast_shapes(self.shape, other.shape)
    if shape != out.shape:
        raise ValueError(f"out has shape {list(out.shape)}, but self and other broadcast to "
                         f"{list(shape)}")
    if rtol < 0 or atol < 0:
        raise ValueError(f"rtol ({rtol}) and atol ({atol}) must be at least 0")


@register("aclnnIsClose", check=_is_close_check)
def is_close(self: np.ndarray, other: np.ndarray, rtol: float, atol: float, equalNan: bool,
             out: np.ndarray) -> None:
    """|self - other| <= atol + rtol |other| (ops-math math/is_close/docs/aclnnIsClose.md);
    equal values (infinities included) are close; NaN is close to NaN when equalNan."""
    if out.size == 0:
        return
    dtype = promote_types(self.dtype, other.dtype)
    if dtype.kind in "biu":
        _compute(out, self.astype(np.int64) == other.astype(np.int64)
                 if rtol == 0 and atol == 0 else
                 np.abs(self.astype(np.float64) - other.astype(np.float64))
                 <= atol + rtol * np.abs(other.astype(np.float64)))
        return
    a, b = self.astype(compute_dtype(dtype)), other.astype(compute_dtype(dtype))
    close = (a == b) | (np.isfinite(a) & np.isfinite(b)
                        & (np.abs(a - b) <= atol + rtol * np.abs(b)))
    if equalNan:
        close |= np.isnan(a) & np.isnan(b)
    _compute(out, close)
