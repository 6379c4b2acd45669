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

from ...ops.dtypes import Dtypes
from . import store, tensor_format, widen
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


# ---- LogSigmoidForward, FastGelu, Shrink ----------------------------------------------------


def _log_sigmoid_forward_check(self: np.ndarray, out: np.ndarray, buffer: Any) -> None:
    """ops-nn activation/log_sigmoid/op_api/aclnn_logsigmoid.cpp: out has self's shape and
    dtype (CheckDtypeValid: OP_CHECK_DTYPE_NOT_MATCH); buffer is written nothing."""
    same_shape(self=self, out=out)
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name} and self {self.dtype.name}: they must "
                         "be equal")


@register("aclnnLogSigmoidForward", check=_log_sigmoid_forward_check)
def log_sigmoid_forward(self: np.ndarray, out: np.ndarray, buffer: Any) -> None:
    """log(1 / (1 + e^-x)) (ops-nn activation/log_sigmoid/docs/aclnnLogSigmoidForward.md);
    buffer "holds the forward's intermediate results, unused for now": left as it is."""
    if self.size:
        _compute(out, _log_sigmoid(self.astype(_floating(self.dtype))))


def _same_dtype_and_shape(self: np.ndarray, out: np.ndarray) -> None:
    same_shape(self=self, out=out)
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name} and self {self.dtype.name}: they must "
                         "be equal")
    if self.ndim > 8:
        raise ValueError(f"self has {self.ndim} dimensions: at most 8")


@register("aclnnFastGelu", check=_same_dtype_and_shape)
def fast_gelu(self: np.ndarray, out: np.ndarray) -> None:
    """x / (1 + e^(-1.702 x)) (ops-nn activation/fast_gelu/docs/aclnnFastGelu.md; op_api
    aclnn_fast_gelu.cpp CheckDtypeValid, CheckShape: out has self's dtype and shape)."""
    if self.size:
        x = self.astype(_floating(self.dtype))
        _compute(out, x / (1 + np.exp(x.dtype.type(-1.702) * x)))


def _shrink_check(self: np.ndarray, lambd: Any, bias: Any, out: np.ndarray) -> None:
    """ops-nn activation/shrink/op_api/aclnn_shrink.cpp: out has self's shape (CheckShape),
    lambd is at least 0 (CheckLambd)."""
    same_shape(self=self, out=out)
    if real_value(lambd) < 0:
        raise ValueError(f"lambd is {real_value(lambd)}: it must be at least 0")


@register("aclnnShrink", check=_shrink_check)
def shrink(self: np.ndarray, lambd: Any, bias: Any, out: np.ndarray) -> None:
    """self - bias above lambd, self + bias below -lambd, 0 between (ops-nn activation/
    shrink/docs/aclnnShrink.md); NaN stays NaN."""
    if self.size == 0:
        return
    dtype = compute_dtype(_floating(self.dtype))
    bound, offset = dtype.type(real_value(lambd)), dtype.type(real_value(bias))

    def compute(target: np.ndarray, x: np.ndarray) -> None:
        # s = x - clip(x, -lambd, lambd) (0 inside, x -+ lambd outside), then
        # s + (lambd - bias) sign(s): x -+ bias outside, 0 inside; NaN stays NaN
        np.clip(x, -bound, bound, out=target)
        np.subtract(x, target, out=target)
        step = np.sign(target)
        np.multiply(step, bound - offset, out=step)
        np.add(target, step, out=target)
    apply(out, compute, [self], dtype)


# ---- gated linear units: GeluMul, FatreluMul, SwiGlu, GeGlu, ClippedSwiglu, SituGlu, ... ----


def glu_dim(x: np.ndarray, dim: int, name: str = "dim") -> int:
    """``dim`` of ``x`` as a non-negative axis, or ValueError naming the range."""
    if not -x.ndim <= dim < max(x.ndim, 1):
        raise ValueError(f"{name} is {dim}: it must be in [{-x.ndim}, {x.ndim - 1}] for a "
                         f"tensor of {x.ndim} dimensions")
    return dim % x.ndim if x.ndim else 0


def halved_shape(x: np.ndarray, dim: int) -> tuple[int, ...]:
    """x's shape with ``dim`` halved; ValueError when its size is odd."""
    if x.shape[dim] % 2:
        raise ValueError(f"x's dimension {dim} has size {x.shape[dim]}: it must be even")
    shape = list(x.shape)
    shape[dim] //= 2
    return tuple(shape)


def glu_halves(x: np.ndarray, dim: int, interleaved: bool = False) -> tuple[Any, Any]:
    """The two halves of ``x`` merged to (pre, cut) at ``dim`` (pre the product of the
    dimensions before it; cut the rest, contiguous), as ops-nn activation/clipped_swiglu/docs/
    aclnnClippedSwiglu.md defines them: the front and back halves of cut, or its even and odd
    elements when ``interleaved``; in x's compute dtype."""
    pre = int(np.prod(x.shape[:dim], dtype=np.int64))
    rows = np.ascontiguousarray(x).reshape(pre, -1).astype(_floating(x.dtype))
    if interleaved:
        return rows[:, 0::2], rows[:, 1::2]
    half = rows.shape[1] // 2
    return rows[:, :half], rows[:, half:]


def _glu_out_check(x: np.ndarray, dim: int, out: np.ndarray, name: str = "out") -> None:
    axis = glu_dim(x, dim)
    expected = halved_shape(x, axis)
    if out.shape != expected:
        raise ValueError(f"{name} has shape {list(out.shape)}: it must be x's with dimension "
                         f"{axis} halved, {list(expected)}")


def _silu(a: Any) -> Any:
    return a / (1 + np.exp(-a))


def _gelu(a: Any, tanh: bool) -> Any:
    from .elementwise import _gelu_erf, _gelu_tanh

    target = np.empty(np.shape(a), a.dtype)
    (_gelu_tanh if tanh else _gelu_erf)(target, a)
    return target


def _gelu_mul_check(input: np.ndarray, approximateOptional: Any, out: np.ndarray) -> None:  # noqa: A002
    """ops-nn activation/gelu_mul/docs/aclnnGeluMul.md: the last dimension of input is split in
    two (even), out is input's shape with it halved and input's dtype; approximate "none" or
    "tanh" (NULL: "none")."""
    if approximateOptional not in (None, "none", "tanh"):
        raise ValueError(f"approximateOptional is {approximateOptional!r}: it must be 'none' "
                         "or 'tanh'")
    if input.ndim < 1:
        raise ValueError("input must have at least 1 dimension")
    _glu_out_check(input, -1, out)
    if out.dtype != input.dtype:
        raise ValueError(f"out has dtype {out.dtype.name} and input {input.dtype.name}: they "
                         "must be equal")


@register("aclnnGeluMul", check=_gelu_mul_check)
def gelu_mul(input: np.ndarray, approximateOptional: Any, out: np.ndarray) -> None:  # noqa: A002
    """Gelu(x1) x2, x1 and x2 the halves of input's last dimension (ops-nn activation/gelu_mul/
    docs/aclnnGeluMul.md); Gelu's tanh form for "tanh", erf's otherwise."""
    if out.size:
        a, b = glu_halves(input, input.ndim - 1)
        _compute(out, (_gelu(a, approximateOptional == "tanh") * b).reshape(out.shape))


def _fatrelu_mul_check(input: np.ndarray, threshold: np.ndarray, out: np.ndarray) -> None:  # noqa: A002
    """ops-nn activation/fatrelu_mul/docs/aclnnFatreluMul.md: input's last dimension is split
    in two, out its shape with it halved; threshold one element."""
    if input.ndim < 1:
        raise ValueError("input must have at least 1 dimension")
    _glu_out_check(input, -1, out)
    if threshold.size != 1:
        raise ValueError(f"threshold has shape {list(threshold.shape)}: it must be one element")


@register("aclnnFatreluMul", check=_fatrelu_mul_check)
def fatrelu_mul(input: np.ndarray, threshold: np.ndarray, out: np.ndarray) -> None:  # noqa: A002
    """Threshold(x1) x2: x1 where x1 >= threshold, else 0, times x2 (ops-nn activation/
    fatrelu_mul/docs/aclnnFatreluMul.md)."""
    if out.size:
        a, b = glu_halves(input, input.ndim - 1)
        bound = np.asarray(threshold).astype(a.dtype).reshape(-1)[0]
        _compute(out, (np.where(a < bound, a.dtype.type(0), a) * b).reshape(out.shape))


def _swi_glu_check(x: np.ndarray, dim: int, out: np.ndarray) -> None:
    """ops-nn activation/swi_glu/docs/aclnnSwiGlu.md: dim in range, x's size there even, out
    x's shape with it halved."""
    _glu_out_check(x, dim, out)


@register("aclnnSwiGlu", check=_swi_glu_check)
def swi_glu(x: np.ndarray, dim: int, out: np.ndarray) -> None:
    """Swish(A) B, A and B the halves of x along dim (ops-nn activation/swi_glu/docs/
    aclnnSwiGlu.md)."""
    if out.size:
        a, b = glu_halves(x, glu_dim(x, dim))
        _compute(out, (_silu(a) * b).reshape(out.shape))


def _ge_glu_check(self: np.ndarray, dim: int, approximate: int, activateLeft: bool,
                  out: np.ndarray, outGelu: np.ndarray) -> None:
    """ops-nn activation/ge_glu_v2/op_host/op_api/aclnn_geglu.cpp: approximate 0 or 1
    (checkApproximate); dim in range, self's size there even, out and outGelu self's shape
    with it halved (CheckSliceDimSizes, CheckOtherDimsMatch); outGelu has self's dtype."""
    if approximate not in (0, 1):
        raise ValueError(f"approximate is {approximate}: it must be 0 (none) or 1 (tanh)")
    _glu_out_check(self, dim, out)
    _glu_out_check(self, dim, outGelu, "outGelu")
    if outGelu.dtype != self.dtype:
        raise ValueError(f"outGelu has dtype {outGelu.dtype.name} and self "
                         f"{self.dtype.name}: they must be equal")


def _ge_glu(self: np.ndarray, dim: int, approximate: int, activateLeft: bool,
            out: np.ndarray, outGelu: np.ndarray) -> None:
    if out.size == 0:
        return
    a, b = glu_halves(self, glu_dim(self, dim))
    gate, other = (a, b) if activateLeft else (b, a)
    gelu = _gelu(gate, approximate == 1)
    _compute(outGelu, gelu.reshape(outGelu.shape))
    _compute(out, (gelu * other).reshape(out.shape))


@register("aclnnGeGlu", check=lambda **a: _ge_glu_check(activateLeft=False, **a))
def ge_glu(self: np.ndarray, dim: int, approximate: int, out: np.ndarray,
           outGelu: np.ndarray) -> None:
    """A Gelu(B), A and B the halves of self along dim; outGelu = Gelu(B); approximate 1 the
    tanh form, 0 erf's (ops-nn activation/ge_glu_v2/docs/aclnnGeGlu.md)."""
    _ge_glu(self, dim, approximate, False, out, outGelu)


@register("aclnnGeGluV3", check=_ge_glu_check)
def ge_glu_v3(self: np.ndarray, dim: int, approximate: int, activateLeft: bool,
              out: np.ndarray, outGelu: np.ndarray) -> None:
    """Gelu(A) B when activateLeft, else A Gelu(B) (ops-nn activation/ge_glu_v2/docs/
    aclnnGeGluV3.md)."""
    _ge_glu(self, dim, approximate, activateLeft, out, outGelu)


def _group_rows(groupIndexOptional: Any, rows: int) -> int:
    """The rows a group index keeps: the sum of its counts, at most ``rows`` (all without
    one)."""
    if groupIndexOptional is None:
        return rows
    total = int(np.sum(np.asarray(groupIndexOptional).astype(np.int64)))
    return max(0, min(total, rows))


def _clipped_swiglu_check(x: np.ndarray, groupIndexOptional: Any, dim: int, alpha: float,
                          limit: float, bias: float, interleaved: bool,
                          out: np.ndarray, clampMode: int = 0) -> None:
    """ops-nn activation/clipped_swiglu/docs/aclnnClippedSwiglu.md: dim in range, x's size
    there even, out x's shape with it halved and x's dtype; groupIndex 1-d; clampMode 0 or
    1 (aclnnClippedSwigluV2.md)."""
    _glu_out_check(x, dim, out)
    if out.dtype != x.dtype:
        raise ValueError(f"out has dtype {out.dtype.name} and x {x.dtype.name}: they must be "
                         "equal")
    if groupIndexOptional is not None and groupIndexOptional.ndim != 1:
        raise ValueError(f"groupIndexOptional has {groupIndexOptional.ndim} dimensions: it "
                         "must be 1-d")
    if clampMode not in (0, 1):
        raise ValueError(f"clampMode is {clampMode}: it must be 0 or 1")


def _clipped_swiglu(x: np.ndarray, groupIndexOptional: Any, dim: int, alpha: float,
                    limit: float, bias: float, interleaved: bool, out: np.ndarray,
                    clampMode: int) -> None:
    if out.size == 0:
        return
    a, b = glu_halves(x, glu_dim(x, dim), interleaved)
    kind = a.dtype.type
    bound = kind(limit)
    b = np.clip(b, -bound, bound)
    if clampMode == 0:
        a = np.minimum(a, bound)
        y = a / (1 + np.exp(-kind(alpha) * a)) * (b + kind(bias))
    else:
        y = np.minimum(_silu(a), bound) * b
    y[_group_rows(groupIndexOptional, y.shape[0]):] = 0
    _compute(out, y.reshape(out.shape))


@register("aclnnClippedSwiglu", check=_clipped_swiglu_check)
def clipped_swiglu(x: np.ndarray, groupIndexOptional: Any, dim: int, alpha: float,
                   limit: float, bias: float, interleaved: bool, out: np.ndarray) -> None:
    """A' sigmoid(alpha A') (B' + bias), A' = min(A, limit), B' = clamp(B, -limit, limit), A and
    B the halves (or even and odd elements) of x merged to (pre, cut) at dim; only the first
    sum(groupIndex) rows (the others 0) (ops-nn activation/clipped_swiglu/docs/
    aclnnClippedSwiglu.md)."""
    _clipped_swiglu(x, groupIndexOptional, dim, alpha, limit, bias, interleaved, out, 0)


@register("aclnnClippedSwigluV2", check=_clipped_swiglu_check)
def clipped_swiglu_v2(x: np.ndarray, groupIndexOptional: Any, dim: int, alpha: float,
                      limit: float, bias: float, interleaved: bool, clampMode: int,
                      out: np.ndarray) -> None:
    """aclnnClippedSwiglu for clampMode 0; for 1, min(silu(A), limit) clamp(B, -limit, limit)
    (ops-nn activation/clipped_swiglu/docs/aclnnClippedSwigluV2.md)."""
    _clipped_swiglu(x, groupIndexOptional, dim, alpha, limit, bias, interleaved, out, clampMode)


def _situ_glu_check(x: np.ndarray, dim: int, beta: float, linearBeta: float,
                    activateLeft: bool, out: np.ndarray) -> None:
    """ops-nn activation/situ_glu/docs/aclnnSituGlu.md: dim in range, x's size there even, out
    x's shape with it halved."""
    _glu_out_check(x, dim, out)


@register("aclnnSituGlu", check=_situ_glu_check)
def situ_glu(x: np.ndarray, dim: int, beta: float, linearBeta: float, activateLeft: bool,
             out: np.ndarray) -> None:
    """beta tanh(gate / beta) sigmoid(gate) up', up' = linearBeta tanh(up / linearBeta) when
    linearBeta > 0, else up; gate the left half when activateLeft (ops-nn activation/situ_glu/
    docs/aclnnSituGlu.md)."""
    if out.size == 0:
        return
    a, b = glu_halves(x, glu_dim(x, dim))
    gate, up = (a, b) if activateLeft else (b, a)
    kind = gate.dtype.type
    situ = kind(beta) * np.tanh(gate / kind(beta)) / (1 + np.exp(-gate))
    if linearBeta > 0:
        up = kind(linearBeta) * np.tanh(up / kind(linearBeta))
    _compute(out, (situ * up).reshape(out.shape))


def _swiglu_group_check(x: np.ndarray, weightOptional: Any, groupIndexOptional: Any,
                        clampLimit: float, out: np.ndarray) -> None:
    """ops-nn activation/swiglu_group/docs/aclnnSwigluGroup.md: x's last dimension is split in
    two, out x's shape with it halved; weight one value per token (x's leading elements)."""
    if x.ndim < 1:
        raise ValueError("x must have at least 1 dimension")
    _glu_out_check(x, -1, out)
    tokens = int(np.prod(x.shape[:-1], dtype=np.int64))
    if weightOptional is not None and weightOptional.size != tokens:
        raise ValueError(f"weightOptional has {weightOptional.size} elements: it must have one "
                         f"per token, {tokens}")


@register("aclnnSwigluGroup", check=_swiglu_group_check)
def swiglu_group(x: np.ndarray, weightOptional: Any, groupIndexOptional: Any,
                 clampLimit: float, out: np.ndarray) -> None:
    """silu(A) B, A = min(A, clampLimit) and B clamped to [-clampLimit, clampLimit] when
    clampLimit > 0, times the token's weight; only the first min(sum(groupIndex), tokens)
    tokens (the others 0) (ops-nn activation/swiglu_group/docs/aclnnSwigluGroup.md)."""
    if out.size == 0:
        return
    a, b = glu_halves(x, x.ndim - 1)
    kind = a.dtype.type
    if clampLimit > 0:
        a = np.minimum(a, kind(clampLimit))
        b = np.clip(b, -kind(clampLimit), kind(clampLimit))
    y = _silu(a) * b
    if weightOptional is not None:
        y = y * np.asarray(weightOptional).astype(a.dtype).reshape(-1, 1)
    y[_group_rows(groupIndexOptional, y.shape[0]):] = 0
    _compute(out, y.reshape(out.shape))


# ---- ScaledMaskedSoftmax ----------------------------------------------------------------------

MASKED = -10000.0  # ops-nn vfusion/scaled_masked_softmax_v2/op_kernel: MASK_VAL
SOFTMAX_WIDTH = 4096  # op_api D_LIMIT: the last dimension's bound off Regbase


def masked_softmax_mask_check(x: np.ndarray, mask: np.ndarray, x_name: str) -> None:
    """mask is 4-d, of x's last two sizes, its first two x's or 1 (ops-nn vfusion/
    scaled_masked_softmax_v2/op_host/op_api/aclnn_scaled_masked_softmax.cpp CheckShape,
    scaled_masked_softmax_grad_v2/.../aclnn_scaled_masked_softmax_backward.cpp CheckShape)."""
    if mask.ndim != 4:
        raise ValueError(f"mask has {mask.ndim} dimensions: it must be 4-d")
    if mask.shape[2:] != x.shape[2:]:
        raise ValueError(f"mask has shape {list(mask.shape)}: its last two sizes must be "
                         f"{x_name}'s, {list(x.shape[2:])}")
    for axis in (0, 1):
        if mask.shape[axis] not in (1, x.shape[axis]):
            raise ValueError(f"mask has shape {list(mask.shape)}: it must broadcast to "
                             f"{x_name}'s {list(x.shape)} (dimension {axis} 1 or equal)")


def _scaled_masked_softmax_check(x: np.ndarray, mask: np.ndarray, scale: float,
                                 fixedTriuMask: bool, y: np.ndarray) -> None:
    """ops-nn vfusion/scaled_masked_softmax_v2/op_host/op_api/aclnn_scaled_masked_softmax.cpp:
    y has x's dtype (CheckDtypeValid); x, mask and y are 4-d (CheckTensorDim); the mask's
    shape (CheckShape); x's last dimension in (0, 4096]; fixedTriuMask false only."""
    if y.dtype != x.dtype:
        raise ValueError(f"y has dtype {y.dtype.name} and x {x.dtype.name}: they must be equal")
    for name, value in (("x", x), ("y", y)):
        if value.ndim != 4:
            raise ValueError(f"{name} has {value.ndim} dimensions: it must be 4-d")
    masked_softmax_mask_check(x, mask, "x")
    if not 0 < x.shape[3] <= SOFTMAX_WIDTH:
        raise ValueError(f"x's last dimension is {x.shape[3]}: it must be in (0, "
                         f"{SOFTMAX_WIDTH}]")
    if y.shape != x.shape:
        raise ValueError(f"y has shape {list(y.shape)}: it must be x's, {list(x.shape)}")
    if fixedTriuMask:
        raise ValueError("fixedTriuMask must be false: CANN supports only false")


@register("aclnnScaledMaskedSoftmax", check=_scaled_masked_softmax_check)
def scaled_masked_softmax(x: np.ndarray, mask: np.ndarray, scale: float, fixedTriuMask: bool,
                          y: np.ndarray) -> None:
    """softmax over the last dimension of scale x, -10000 where mask is true (ops-nn vfusion/
    scaled_masked_softmax_v2/docs/aclnnScaledMaskedSoftmax.md; the kernel's MASK_VAL)."""
    if y.size == 0:
        return
    z = x.astype(np.float32) * np.float32(scale)
    z = np.where(np.broadcast_to(mask.astype(bool), z.shape), np.float32(MASKED), z)
    z = z - np.max(z, axis=-1, keepdims=True)
    e = np.exp(z)
    _compute(y, e / np.sum(e, axis=-1, keepdims=True))


# ---- RReluWithNoise ----------------------------------------------------------------------------


def _rrelu_check(self: np.ndarray, noise: np.ndarray, lower: Any, upper: Any, training: bool,
                 seed: int, offset: int, out: np.ndarray) -> None:
    """ops-nn activation/leaky_relu/op_api/aclnn_rrelu_with_noise.cpp: noise and out have self's
    dtype (CheckDtypeValid); at most 32 dimensions and the output's format (CheckFormatValid);
    out has self's shape,
    and in training noise holds at least self's elements (CheckShapeValid)."""
    for name, value in (("noise", noise), ("out", out)):
        if value.dtype != self.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name} and self {self.dtype.name}: "
                             "they must be equal")
    for name, value in (("self", self), ("noise", noise)):
        if value.ndim > 32:
            raise ValueError(f"{name} has {value.ndim} dimensions: at most 32")
        if value is not out and tensor_format(value) != tensor_format(out):
            raise ValueError(f"{name}'s format {tensor_format(value)} is not the output's "
                             f"{tensor_format(out)}: they must be equal")
    if out.shape != self.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be self's, "
                         f"{list(self.shape)}")
    if training and self.size > noise.size:
        raise ValueError(f"noise has {noise.size} elements, fewer than self's {self.size}: in "
                         "training it holds one slope per element")


def _rrelu(self: np.ndarray, noise: np.ndarray, lower: Any, upper: Any, training: bool,
           seed: int, offset: int, out: np.ndarray) -> None:
    """In training, a ~ U(lower, upper) per element where self < 0 (1 elsewhere), written into
    noise's first elements, out = self a; otherwise out = self (lower + upper) / 2 where
    self < 0 (ops-nn activation/leaky_relu/docs/aclnnRReluWithNoise&aclnnInplaceRReluWithNoise.md,
    op_api ComputeTrainingMode: Less(self, 0), SelectV2, Mul). The draws are numpy's PCG64
    seeded by (seed, offset): statistically CANN's, not its bits."""
    if self.size == 0 or noise.size == 0:
        return
    x = self.astype(_floating(self.dtype))
    low, high = real_value(lower), real_value(upper)
    if training:
        generator = np.random.default_rng([seed % (1 << 64), offset % (1 << 64)])
        drawn = generator.uniform(low, high, x.size).astype(x.dtype).reshape(x.shape)
        slope = np.where(x < 0, drawn, x.dtype.type(1))
        flat = noise.reshape(-1) if noise.flags.c_contiguous else None
        if flat is not None:
            flat[:x.size] = slope.reshape(-1).astype(noise.dtype)
        else:
            values = np.array(noise).reshape(-1)
            values[:x.size] = slope.reshape(-1).astype(noise.dtype)
            noise[...] = values.reshape(noise.shape)
        _compute(out, x * slope)
    else:
        _compute(out, np.where(x < 0, x * x.dtype.type((low + high) / 2), x))


@register("aclnnRReluWithNoise", check=_rrelu_check)
def rrelu_with_noise(self: np.ndarray, noise: np.ndarray, lower: Any, upper: Any,
                     training: bool, seed: int, offset: int, out: np.ndarray) -> None:
    """See :func:`_rrelu`."""
    _rrelu(self, noise, lower, upper, training, seed, offset, out)


@register("aclnnInplaceRReluWithNoise",
          check=lambda self, noise, lower, upper, training, seed, offset: _rrelu_check(
              self, noise, lower, upper, training, seed, offset, self))
def inplace_rrelu_with_noise(self: np.ndarray, noise: np.ndarray, lower: Any, upper: Any,
                             training: bool, seed: int, offset: int) -> None:
    """aclnnRReluWithNoise into self."""
    _rrelu(self.copy(), noise, lower, upper, training, seed, offset, self)


# ---- SwigluClamp (ops-nn experimental) ---------------------------------------------------------
#
# hicann ops-nn experimental/activation/swiglu_clamp/README.md: x [..., 2N] split into gate
# (the first N) and up (the last N); y = min(silu(gate), limit) * clamp(up, -limit, limit).
# Float16 and bfloat16 compute in float32 and round once (op_kernel/swiglu_clamp.h). The checks
# (op_host/op_api/aclnn_swiglu_clamp.cpp CheckParams): x float32, float16 or bfloat16 (Atlas A2),
# y x's dtype; x and y at most 8 dims (MAX_SUPPORT_DIMS_NUMS, common/inc/op_api/
# op_api_def_nn.h), of one rank, y's last dim half x's, the others equal (CheckShape; a 0-d x
# passes it); limit above 0.
def _swiglu_clamp_check(x: np.ndarray, limit: float, y: np.ndarray) -> None:
    if y.dtype != x.dtype:
        raise ValueError(f"y has dtype {y.dtype.name}; it must be x's {x.dtype.name}")
    for name, value in (("x", x), ("y", y)):
        if value.ndim > 8:
            raise ValueError(f"{name} has {value.ndim} dimensions; it must have at most 8")
    if x.ndim != y.ndim:
        raise ValueError(f"x has {x.ndim} dimensions and y {y.ndim}; they must be equal")
    if x.ndim:
        if x.shape[-1] != 2 * y.shape[-1]:
            raise ValueError(f"x's last dim ({x.shape[-1]}) must be twice y's ({y.shape[-1]})")
        if x.shape[:-1] != y.shape[:-1]:
            raise ValueError(f"y has shape {list(y.shape)}; its leading dims must be x's "
                             f"{list(x.shape[:-1])}")
    if not limit > 0:
        raise ValueError(f"limit must be above 0, got {limit}")


@register("aclnnSwigluClamp", dtypes=Dtypes(("float32", "float16", "bfloat16")),
          check=_swiglu_clamp_check)
def swiglu_clamp(x: np.ndarray, limit: float, y: np.ndarray) -> None:
    """The formula above."""
    if x.ndim == 0 or y.size == 0:
        return
    wide = np.asarray(widen(x))
    half = wide.shape[-1] // 2
    gate, up = wide[..., :half], wide[..., half:]
    bound = np.float32(limit)
    silu = gate / (np.float32(1) + np.exp(-gate))
    store(y, np.minimum(silu, bound) * np.clip(up, -bound, bound))
