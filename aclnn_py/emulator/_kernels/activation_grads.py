"""Gradients of the activations: Hardshrink, Softshrink, Swish, Elu, Selu, LogSigmoid,
FastGelu, Gelu (V2), Hardswish (V2), Prelu backward, and LogitGrad.

Each formula is its CANN doc's (ops-nn activation/<op>_grad/docs/aclnn<Op>Backward.md), with
PyTorch's autograd as the reference where the doc is silent (NaN, the edges of a piecewise
definition). Floating inputs compute in float32 (float16 and bfloat16 widened, rounded once
into gradInput) or float64.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import tensor_format
from .elementwise import _erf, apply, compute_dtype, promote_types, real_value, register, select

FRACTAL_NZ = 29  # aclFormat ACL_FORMAT_FRACTAL_NZ (headers/acl_rt.h)


def _grad_check(**arguments: Any) -> None:
    """gradOutput, self and gradInput (the first, second and last arguments) have one
    shape."""
    values = list(arguments.values())
    gradOutput, self, gradInput = values[0], values[1], values[-1]
    if not gradOutput.shape == self.shape == gradInput.shape:
        raise ValueError(f"gradOutput {list(gradOutput.shape)}, self {list(self.shape)} and "
                         f"gradInput {list(gradInput.shape)} must have one shape")


def _operands(gradOutput: np.ndarray, self: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gradOutput and self widened to the dtype they compute in."""
    dtype = compute_dtype(promote_types(gradOutput.dtype, self.dtype))
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float32)
    return gradOutput.astype(dtype), self.astype(dtype)


def _grad_dtype(gradOutput: np.ndarray, self: np.ndarray) -> np.dtype:
    """The dtype gradOutput and self compute in (float32 for the halves and integers)."""
    dtype = compute_dtype(promote_types(gradOutput.dtype, self.dtype))
    return dtype if dtype.kind in "fc" else np.dtype(np.float32)


def _store(gradInput: np.ndarray, value: Any) -> None:
    gradInput[...] = np.asarray(value).astype(gradInput.dtype, copy=False)


def _shrink_backward(gradOutput: np.ndarray, self: np.ndarray, lambd: Any,
                     gradInput: np.ndarray) -> None:
    if gradInput.size == 0 or gradOutput.size == 0 or self.size == 0:
        return
    grad, x = np.broadcast_arrays(*_operands(gradOutput, self))
    bound = x.dtype.type(real_value(lambd))
    # grad outside [-lambd, lambd], 0 inside; a NaN x is outside (PyTorch's autograd)
    _store(gradInput, np.where((x >= -bound) & (x <= bound), x.dtype.type(0), grad))


def _broadcast_check(**arguments: Any) -> None:
    """gradOutput and self broadcast together to gradInput's shape (ops-nn activation/
    hard_shrink_grad/op_api/aclnn_hardshrink_backward.cpp CheckShapeBroadcast, soft_shrink_grad/
    op_api/aclnn_softshrink_backward.cpp CheckShape)."""
    values = list(arguments.values())
    gradOutput, self, gradInput = values[0], values[1], values[-1]
    shape = np.broadcast_shapes(gradOutput.shape, self.shape)
    if shape != gradInput.shape:
        raise ValueError(f"gradOutput {list(gradOutput.shape)} and self {list(self.shape)} "
                         f"broadcast to {list(shape)}, but gradInput has shape "
                         f"{list(gradInput.shape)}")


def _hardshrink_backward_check(gradOutput: np.ndarray, self: np.ndarray, lambd: Any,
                               gradInput: np.ndarray) -> None:
    """An empty gradOutput or self returns before the shapes are compared (ops-nn activation/
    hard_shrink_grad/op_api/aclnn_hardshrink_backward.cpp aclnnHardshrinkBackwardGetWorkspaceSize:
    the empty-tensor return precedes CheckShapeBroadcast)."""
    if gradOutput.size and self.size:
        _broadcast_check(gradOutput=gradOutput, self=self, gradInput=gradInput)


def _softshrink_backward_check(**arguments: Any) -> None:
    """The shapes, then lambd at least 0 (ops-nn activation/soft_shrink_grad/op_api/
    aclnn_softshrink_backward.cpp CheckParams)."""
    _broadcast_check(**arguments)
    lambd = list(arguments.values())[2]
    if real_value(lambd) < 0:
        raise ValueError(f"lambd is {real_value(lambd)}: it must be at least 0")


@register("aclnnHardshrinkBackward", check=_hardshrink_backward_check)
def hardshrink_backward(gradOutput: np.ndarray, self: np.ndarray, lambd: Any,
                        gradInput: np.ndarray) -> None:
    """gradOutput where |self| > lambd, else 0 (ops-nn activation/hard_shrink_grad/docs/
    aclnnHardshrinkBackward.md)."""
    _shrink_backward(gradOutput, self, lambd, gradInput)


@register("aclnnSoftshrinkBackward", check=_softshrink_backward_check)
def softshrink_backward(**arguments: Any) -> None:
    """gradOutput where |self| > lambda, else 0 (ops-nn activation/soft_shrink_grad/docs/
    aclnnSoftshrinkBackward.md); its bound is named lambda, a Python keyword."""
    gradOutput, self, lambd, gradInput = arguments.values()
    _shrink_backward(gradOutput, self, lambd, gradInput)


@register("aclnnSwishBackward", check=_grad_check)
def swish_backward(gradOutput: np.ndarray, self: np.ndarray, betaOptional: Any,
                   gradInput: np.ndarray) -> None:
    """gradOutput sigmoid(beta x) (1 + beta x (1 - sigmoid(beta x))), beta 1 when left out
    (ops-nn activation/swish_grad/docs/aclnnSwishBackward.md)."""
    if gradInput.size == 0:
        return
    grad, x = _operands(gradOutput, self)
    beta = x.dtype.type(1.0 if betaOptional is None else real_value(betaOptional))
    sigmoid = 1 / (1 + np.exp(-beta * x))
    _store(gradInput, grad * sigmoid * (1 + beta * x * (1 - sigmoid)))


# ---- Elu, Selu, LogSigmoid, FastGelu, Gelu V2, Hardswish V2, Prelu, Logit -------------------


def _elu_backward_check(gradOutput: np.ndarray, alpha: Any, scale: Any, inputScale: Any,
                        isResult: bool, selfOrResult: np.ndarray, gradInput: np.ndarray) -> None:
    """ops-nn activation/elu_grad_v2/op_api/aclnn_elu_backward.cpp: CheckShape (selfOrResult
    and gradInput have gradOutput's shape, at most 8 dimensions), CheckDtypeValid
    (selfOrResult has gradOutput's dtype, gradInput one it casts to), CheckAttr (alpha at least
    0 when isResult)."""
    _grad_check(gradOutput=gradOutput, selfOrResult=selfOrResult, gradInput=gradInput)
    if gradOutput.ndim > 8:
        raise ValueError(f"gradOutput has {gradOutput.ndim} dimensions: at most 8")
    if selfOrResult.dtype != gradOutput.dtype:
        raise ValueError(f"selfOrResult has dtype {selfOrResult.dtype.name} and gradOutput "
                         f"{gradOutput.dtype.name}: they must be equal")
    if gradInput.dtype.kind not in "fcV":   # float (bfloat16's kind is V) or complex
        raise ValueError(f"gradInput has dtype {gradInput.dtype.name}: gradOutput's "
                         f"{gradOutput.dtype.name} cannot be cast to it")
    if isResult and real_value(alpha) < 0:
        raise ValueError(f"alpha is {real_value(alpha)}: with isResult it must be at least 0")


@register("aclnnEluBackward", check=_elu_backward_check)
def elu_backward(gradOutput: np.ndarray, alpha: Any, scale: Any, inputScale: Any,
                 isResult: bool, selfOrResult: np.ndarray, gradInput: np.ndarray) -> None:
    """gradOutput scale where x > 0; else gradOutput inputScale (x + alpha scale) when x is the
    forward's result, gradOutput inputScale alpha scale exp(x inputScale) when it is its input
    (ops-nn activation/elu_grad_v2/docs/aclnnEluBackward.md)."""
    if gradInput.size == 0:
        return
    dtype = _grad_dtype(gradOutput, selfOrResult)
    kind = dtype.type
    a, s, i = kind(real_value(alpha)), kind(real_value(scale)), kind(real_value(inputScale))

    def compute(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:
        negative = np.empty_like(target)
        if isResult:
            np.add(x, a * s, out=negative)
            np.multiply(negative, i, out=negative)
        else:
            np.multiply(x, i, out=negative)
            np.exp(negative, out=negative)
            np.multiply(negative, i * a * s, out=negative)
        positive = np.full_like(target, s)
        select(target, np.greater(x, kind(0)), positive, negative)   # no branch on the data
        np.multiply(target, g, out=target)
    apply(gradInput, compute, [gradOutput, selfOrResult], dtype)


def _same_dtype_grad_check(**arguments: Any) -> None:
    """gradOutput, the forward's tensor and gradInput have one shape and one dtype."""
    _grad_check(**arguments)
    values = list(arguments.values())
    gradOutput, other, gradInput = values[0], values[1], values[-1]
    if not gradOutput.dtype == other.dtype == gradInput.dtype:
        raise ValueError(f"gradOutput ({gradOutput.dtype.name}), "
                         f"{list(arguments)[1]} ({other.dtype.name}) and gradInput "
                         f"({gradInput.dtype.name}) must have one dtype")


@register("aclnnSeluBackward", check=_same_dtype_grad_check)
def selu_backward(gradOutput: np.ndarray, result: np.ndarray, gradInput: np.ndarray) -> None:
    """gradOutput scale where result > 0, else gradOutput (result + alpha scale), from the
    forward's result (ops-nn activation/selu_grad/docs/aclnnSeluBackward.md; op_api
    aclnn_selu_backward.cpp CheckDtypeValid, CheckShape: one dtype, one shape)."""
    if gradInput.size == 0:
        return
    from .activations import SELU_ALPHA, SELU_SCALE

    grad, y = _operands(gradOutput, result)
    kind = y.dtype.type
    _store(gradInput, grad * np.where(y > 0, kind(SELU_SCALE),
                                      y + kind(SELU_ALPHA * SELU_SCALE)))


def _log_sigmoid_backward_check(gradOutput: np.ndarray, self: np.ndarray, buffer: np.ndarray,
                                gradInput: np.ndarray) -> None:
    """ops-nn activation/logsigmoid_grad/op_api/aclnn_logsigmoid_backward.cpp: gradOutput and
    self have gradInput's shape (CheckShapeValid) and dtype (CheckDtypeValid); buffer is not
    read."""
    _same_dtype_grad_check(gradOutput=gradOutput, self=self, gradInput=gradInput)


@register("aclnnLogSigmoidBackward", check=_log_sigmoid_backward_check)
def log_sigmoid_backward(gradOutput: np.ndarray, self: np.ndarray, buffer: np.ndarray,
                         gradInput: np.ndarray) -> None:
    """gradOutput / (1 + e^x) (ops-nn activation/logsigmoid_grad/docs/
    aclnnLogSigmoidBackward.md), as sigmoid(-x) without overflow."""
    if gradInput.size == 0:
        return

    def compute(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:
        # e = exp(-|x|); g e / (1 + e) for x > 0, g / (1 + e) otherwise
        np.abs(x, out=target)
        np.negative(target, out=target)
        np.exp(target, out=target)
        denominator = np.add(target, target.dtype.type(1))
        np.copyto(target, target.dtype.type(1), where=np.less_equal(x, 0))
        np.divide(target, denominator, out=target)
        np.multiply(target, g, out=target)
    apply(gradInput, compute, [gradOutput, self], _grad_dtype(gradOutput, self))


FAST_GELU = 1.702  # ops-nn activation/fast_gelu/docs/aclnnFastGelu.md


@register("aclnnFastGeluBackward", check=_same_dtype_grad_check)
def fast_gelu_backward(gradOutput: np.ndarray, self: np.ndarray, gradInput: np.ndarray) -> None:
    """dy ((s - 1) (-1.702 x) + 1) s, s = 1 / (e^(-1.702 x) + 1) (ops-nn activation/
    fast_gelu_grad/docs/aclnnFastGeluBackward.md; op_api aclnn_fast_gelu_backward.cpp
    CheckShape, CheckDtypeValid: one shape, one dtype)."""
    if gradInput.size == 0:
        return
    grad, x = _operands(gradOutput, self)
    kind = x.dtype.type
    s = 1 / (np.exp(kind(-FAST_GELU) * x) + 1)
    _store(gradInput, grad * ((s - 1) * (kind(-FAST_GELU) * x) + 1) * s)


def _gelu_backward_v2_check(gradOutput: np.ndarray, self: np.ndarray, approximate: Any,
                            gradInput: np.ndarray) -> None:
    """ops-nn activation/gelu_grad_v2/op_api/aclnn_gelu_backward_v2.cpp: approximate is
    "none" or "tanh" (CheckAttrValue, NULL refused by CheckNotNull); gradOutput and self
    broadcast to gradInput's shape (CheckShape); gradInput has their promoted dtype
    (CheckPromoteType)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate is {approximate!r}: it must be 'none' or 'tanh'")
    _broadcast_check(gradOutput=gradOutput, self=self, gradInput=gradInput)
    promoted = promote_types(gradOutput.dtype, self.dtype)
    if promoted != gradInput.dtype:
        raise ValueError(f"gradInput has dtype {gradInput.dtype.name}: it must be the promoted "
                         f"dtype of gradOutput and self, {promoted.name}")


@register("aclnnGeluBackwardV2", check=_gelu_backward_v2_check)
def gelu_backward_v2(gradOutput: np.ndarray, self: np.ndarray, approximate: Any,
                     gradInput: np.ndarray) -> None:
    """gradOutput (Phi(x) + x phi(x)) for "none" (erf), the tanh form's derivative for "tanh"
    (ops-nn activation/gelu_grad_v2/docs/aclnnGeluBackwardV2.md)."""
    if gradInput.size == 0:
        return
    dtype = _grad_dtype(gradOutput, self)
    if approximate == "tanh":
        from .elementwise import _gelu_tanh_backward

        apply(gradInput, _gelu_tanh_backward, [gradOutput, self], dtype)
        return

    def compute(target: np.ndarray, g: np.ndarray, v: np.ndarray) -> None:
        # Phi(x) + x phi(x), block by block
        kind = target.dtype.type
        scaled = np.multiply(v, kind(1 / math.sqrt(2)))
        _erf(target, scaled)
        np.add(target, kind(1), out=target)
        np.multiply(target, kind(0.5), out=target)
        np.multiply(v, v, out=scaled)
        np.multiply(scaled, kind(-0.5), out=scaled)
        np.exp(scaled, out=scaled)
        np.multiply(scaled, kind(1 / math.sqrt(2 * math.pi)), out=scaled)
        np.multiply(scaled, v, out=scaled)
        np.add(target, scaled, out=target)
        np.multiply(target, g, out=target)
    apply(gradInput, compute, [gradOutput, self], dtype)


def _hardswish_backward_v2_check(gradOutput: np.ndarray, self: np.ndarray,
                                 out: np.ndarray) -> None:
    """ops-nn activation/hard_swish_grad_v2/op_host/op_api/aclnn_hardswish_backward_v2.cpp
    CheckShapeValid (one shape, at most 8 dimensions) and CheckDtypeValid (one dtype)."""
    _same_dtype_grad_check(gradOutput=gradOutput, self=self, out=out)
    if self.ndim > 8:
        raise ValueError(f"self has {self.ndim} dimensions: at most 8")


@register("aclnnHardswishBackwardV2", check=_hardswish_backward_v2_check)
def hardswish_backward_v2(gradOutput: np.ndarray, self: np.ndarray, out: np.ndarray) -> None:
    """gradOutput times 0 for x <= -3, x / 3 + 0.5 in (-3, 3), 1 for x >= 3 (ops-nn
    activation/hard_swish_grad_v2/docs/aclnnHardswishBackwardV2.md)."""
    if out.size == 0:
        return

    def compute(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:
        # x / 3 + 0.5 in (-3, 3), 0 at and below -3, 1 at and above 3
        kind = target.dtype.type
        np.divide(x, kind(3), out=target)
        np.add(target, kind(0.5), out=target)
        np.copyto(target, kind(0), where=np.less_equal(x, kind(-3)))
        np.copyto(target, kind(1), where=np.greater_equal(x, kind(3)))
        np.multiply(target, g, out=target)
    apply(out, compute, [gradOutput, self], _grad_dtype(gradOutput, self))


def _prelu_channels(self: np.ndarray, weight: np.ndarray) -> int:
    """The channels of ops-nn activation/p_relu_grad_update/op_api/aclnn_prelu_backward.cpp
    CheckShape: one weight, or one per channel (self's dim 1; 1 for a 1-d self)."""
    if weight.size == 1:
        return 1
    if self.ndim < 1:
        raise ValueError("self must have at least 1 dimension when weight has more than one "
                         "element")
    channels = self.shape[1] if self.ndim > 1 else 1
    if weight.size != channels:
        raise ValueError(f"weight has {weight.size} elements: it must have 1 or self's "
                         f"channels, {channels}")
    return channels


def _prelu_backward_check(gradOutput: np.ndarray, self: np.ndarray, weight: np.ndarray,
                          gradInput: np.ndarray, gradWeight: np.ndarray) -> None:
    """ops-nn activation/p_relu_grad_update/op_api/aclnn_prelu_backward.cpp: one dtype
    (CheckDtypeValid); gradInput has self's shape, gradWeight weight's (the channels, 1-d,
    when weight has more than one element), gradOutput broadcasts to self (CheckShape), at
    most 8 dimensions each."""
    for name, value in (("gradOutput", gradOutput), ("weight", weight),
                        ("gradInput", gradInput), ("gradWeight", gradWeight)):
        if value.dtype != self.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name} and self {self.dtype.name}: "
                             "they must be equal")
        if value.ndim > 8:
            raise ValueError(f"{name} has {value.ndim} dimensions: at most 8")
    if gradInput.shape != self.shape:
        raise ValueError(f"gradInput has shape {list(gradInput.shape)}: it must be self's, "
                         f"{list(self.shape)}")
    channels = _prelu_channels(self, weight)
    if weight.size != 1 and gradWeight.shape != (channels,):
        raise ValueError(f"gradWeight has shape {list(gradWeight.shape)}: it must be "
                         f"[{channels}]")
    if weight.size == 1 and gradWeight.shape != weight.shape:
        raise ValueError(f"gradWeight has shape {list(gradWeight.shape)}: it must be weight's, "
                         f"{list(weight.shape)}")
    try:
        shape = np.broadcast_shapes(self.shape, gradOutput.shape)
    except ValueError:
        shape = None
    if shape != self.shape:
        raise ValueError(f"gradOutput {list(gradOutput.shape)} and self {list(self.shape)} "
                         "must broadcast to self's shape")


@register("aclnnPreluBackward", check=_prelu_backward_check)
def prelu_backward(gradOutput: np.ndarray, self: np.ndarray, weight: np.ndarray,
                   gradInput: np.ndarray, gradWeight: np.ndarray) -> None:
    """gradInput = gradOutput where x > 0, else gradOutput weight; gradWeight = the sum of
    gradOutput x where x <= 0, per channel (ops-nn activation/p_relu_grad_update/docs/
    aclnnPreluBackward.md)."""
    if self.size == 0 or weight.size == 0:
        if gradWeight.size:
            gradWeight[...] = 0
        return
    grad, x = _operands(gradOutput, self)
    grad = np.broadcast_to(grad, x.shape)
    w = weight.astype(x.dtype).reshape(-1)
    channels = _prelu_channels(self, weight)
    shape = [1] * x.ndim
    if channels > 1:
        shape[1] = channels
    slope = w.reshape(shape) if x.ndim else w.reshape(())
    negative = x <= 0
    _store(gradInput, np.where(negative, grad * slope, grad))
    contribution = np.where(negative, grad * x, x.dtype.type(0))
    if channels > 1:
        axes = tuple(a for a in range(x.ndim) if a != 1)
        total = np.sum(contribution, axis=axes, dtype=np.float64 if x.dtype == np.float64
                       else np.float32)
    else:
        total = np.sum(contribution)
    _store(gradWeight, np.asarray(total).reshape(gradWeight.shape))


def _logit_grad_check(x: np.ndarray, dy: np.ndarray, eps: float, out: np.ndarray) -> None:
    """ops-nn loss/logit_grad/op_host: dx has x's shape (logit_grad_infershape.cpp); dy and out
    share x's shape and dtype (logit_grad_def.cpp: one dtype for all three)."""
    for name, value in (("dy", dy), ("out", out)):
        if value.shape != x.shape:
            raise ValueError(f"{name} has shape {list(value.shape)}: it must be x's, "
                             f"{list(x.shape)}")
        if value.dtype != x.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name} and x {x.dtype.name}: they "
                             "must be equal")


@register("aclnnLogitGrad", check=_logit_grad_check)
def logit_grad(x: np.ndarray, dy: np.ndarray, eps: float, out: np.ndarray) -> None:
    """dy / (x (1 - x)); with eps >= 0, 0 outside [eps, 1 - eps]; with eps < 0, NaN outside
    [0, 1] (ops-nn loss/logit_grad/docs/aclnnLogitGrad.md)."""
    if out.size == 0:
        return

    def compute(target: np.ndarray, g: np.ndarray, z: np.ndarray) -> None:
        kind = target.dtype.type
        np.subtract(kind(1), z, out=target)
        np.multiply(target, z, out=target)
        np.divide(g, target, out=target)
        low, high = (kind(eps), kind(1 - eps)) if eps >= 0 else (kind(0), kind(1))
        outside = np.less(z, low)
        outside |= np.greater(z, high)
        np.copyto(target, kind(0) if eps >= 0 else kind(np.nan), where=outside)
    apply(out, compute, [dy, x], _grad_dtype(dy, x))


# ---- gradients of the gated linear units -----------------------------------------------------


def _glu_grad_check(grad: np.ndarray, grad_name: str, x: np.ndarray, x_name: str, dim: int,
                    result: np.ndarray, result_name: str) -> int:
    """``grad`` has x's shape with ``dim`` halved (an even size), ``result`` x's shape; the
    axis is returned."""
    from .activations import glu_dim, halved_shape

    axis = glu_dim(x, dim)
    expected = halved_shape(x, axis)
    if grad.shape != expected:
        raise ValueError(f"{grad_name} has shape {list(grad.shape)}: it must be {x_name}'s "
                         f"with dimension {axis} halved, {list(expected)}")
    if result.shape != x.shape:
        raise ValueError(f"{result_name} has shape {list(result.shape)}: it must be "
                         f"{x_name}'s, {list(x.shape)}")
    return axis


def _joined(x: np.ndarray, axis: int, first: Any, second: Any, interleaved: bool = False
            ) -> Any:
    """The two halves' gradients, each (pre, cut / 2), joined as x's (pre, cut) merge of
    :func:`.activations.glu_halves` splits it, in x's shape."""
    rows = np.empty((first.shape[0], first.shape[1] * 2), first.dtype)
    if interleaved:
        rows[:, 0::2], rows[:, 1::2] = first, second
    else:
        half = first.shape[1]
        rows[:, :half], rows[:, half:] = first, second
    return rows.reshape(x.shape)


def _rows(array: np.ndarray, dtype: np.dtype, pre: int) -> Any:
    return np.ascontiguousarray(array).astype(dtype).reshape(pre, -1)


def _swi_glu_grad_check(yGrad: np.ndarray, x: np.ndarray, dim: int, out: np.ndarray) -> None:
    """ops-nn activation/swi_glu_grad/docs/aclnnSwiGluGrad.md: yGrad x's shape with dim
    halved, out x's shape."""
    _glu_grad_check(yGrad, "yGrad", x, "x", dim, out, "out")


@register("aclnnSwiGluGrad", check=_swi_glu_grad_check)
def swi_glu_grad(yGrad: np.ndarray, x: np.ndarray, dim: int, out: np.ndarray) -> None:
    """dA = yGrad (s + s (1 - s) A) B, dB = yGrad s A, s = sigmoid(A) (ops-nn activation/
    swi_glu_grad/docs/aclnnSwiGluGrad.md)."""
    if out.size == 0:
        return
    from .activations import glu_dim, glu_halves

    axis = glu_dim(x, dim)
    a, b = glu_halves(x, axis)
    g = _rows(yGrad, a.dtype, a.shape[0])
    s = 1 / (1 + np.exp(-a))
    _store(out, _joined(x, axis, g * (s + s * (1 - s) * a) * b, g * s * a))


def _ge_glu_backward_check(gradOutput: np.ndarray, self: np.ndarray, gelu: np.ndarray,
                           dim: int, approximate: int, activateLeft: bool,
                           gradInput: np.ndarray) -> None:
    """ops-nn activation/ge_glu_grad_v2/op_host/op_api/aclnn_geglu_backward.cpp: approximate 0
    or 1 (CheckAttributeValue); dim in range; gradOutput and gelu self's shape with it halved,
    gradInput self's (CheckShape)."""
    if approximate not in (0, 1):
        raise ValueError(f"approximate is {approximate}: it must be 0 or 1")
    _glu_grad_check(gradOutput, "gradOutput", self, "self", dim, gradInput, "gradInput")
    if gelu.shape != gradOutput.shape:
        raise ValueError(f"gelu has shape {list(gelu.shape)}: it must be gradOutput's, "
                         f"{list(gradOutput.shape)}")


def _gelu_derivative(x: Any, tanh: bool) -> Any:
    """d Gelu(x) / dx: the tanh form's (as aclnnGeluBackward) or erf's."""
    from .elementwise import _gelu_tanh_backward

    ones = np.ones_like(x)
    if tanh:
        target = np.empty_like(x)
        _gelu_tanh_backward(target, ones, x)
        return target
    cdf = np.empty_like(x)
    _erf(cdf, x * x.dtype.type(1 / math.sqrt(2)))
    return (cdf + 1) * x.dtype.type(0.5) + x * np.exp(x * x * x.dtype.type(-0.5)) \
        * x.dtype.type(1 / math.sqrt(2 * math.pi))


def _ge_glu_backward(gradOutput: np.ndarray, self: np.ndarray, gelu: np.ndarray, dim: int,
                     approximate: int, activateLeft: bool, gradInput: np.ndarray) -> None:
    if gradInput.size == 0:
        return
    from .activations import glu_dim, glu_halves

    axis = glu_dim(self, dim)
    a, b = glu_halves(self, axis)
    gate, other = (a, b) if activateLeft else (b, a)
    g = _rows(gradOutput, a.dtype, a.shape[0])
    activated = _rows(gelu, a.dtype, a.shape[0])
    d_other = g * activated
    d_gate = g * other * _gelu_derivative(gate, approximate == 1)
    first, second = (d_gate, d_other) if activateLeft else (d_other, d_gate)
    _store(gradInput, _joined(self, axis, first, second))


@register("aclnnGeGluBackward",
          check=lambda **a: _ge_glu_backward_check(activateLeft=False, **a))
def ge_glu_backward(gradOutput: np.ndarray, self: np.ndarray, gelu: np.ndarray, dim: int,
                    approximate: int, gradInput: np.ndarray) -> None:
    """The gradient of aclnnGeGlu (A Gelu(B)): dA = gradOutput gelu, dB = gradOutput A
    Gelu'(B) (ops-nn activation/ge_glu_grad_v2/docs/aclnnGeGluBackward.md)."""
    _ge_glu_backward(gradOutput, self, gelu, dim, approximate, False, gradInput)


@register("aclnnGeGluV3Backward", check=_ge_glu_backward_check)
def ge_glu_v3_backward(gradOutput: np.ndarray, self: np.ndarray, gelu: np.ndarray, dim: int,
                       approximate: int, activateLeft: bool, gradInput: np.ndarray) -> None:
    """The gradient of aclnnGeGluV3 (ops-nn activation/ge_glu_grad_v2/docs/
    aclnnGeGluV3Backward.md): the activated half gets gradOutput other Gelu'(half), the other
    gradOutput gelu."""
    _ge_glu_backward(gradOutput, self, gelu, dim, approximate, activateLeft, gradInput)


def _clipped_swiglu_grad_check(gradY: np.ndarray, x: np.ndarray, groupIndexOptional: Any,
                               dim: int, alpha: float, limit: float, bias: float,
                               interleaved: bool, gradXOut: np.ndarray) -> None:
    """ops-nn activation/clipped_swiglu_grad/docs/aclnnClippedSwigluGrad.md: gradY x's shape
    with dim halved, gradXOut x's shape; groupIndex 1-d."""
    _glu_grad_check(gradY, "gradY", x, "x", dim, gradXOut, "gradXOut")
    if groupIndexOptional is not None and groupIndexOptional.ndim != 1:
        raise ValueError(f"groupIndexOptional has {groupIndexOptional.ndim} dimensions: it "
                         "must be 1-d")


@register("aclnnClippedSwigluGrad", check=_clipped_swiglu_grad_check)
def clipped_swiglu_grad(gradY: np.ndarray, x: np.ndarray, groupIndexOptional: Any, dim: int,
                        alpha: float, limit: float, bias: float, interleaved: bool,
                        gradXOut: np.ndarray) -> None:
    """The doc's steps (ops-nn activation/clipped_swiglu_grad/docs/aclnnClippedSwigluGrad.md):
    x0' = min(x0, l), x1' = clamp(x1, -l, l), s = sigmoid(alpha x0'); dx0 = gradY (x1' + bias)
    s (1 + alpha x0' (1 - s)) where x0 <= l, dx1 = gradY x0' s where -l <= x1 <= l; rows past
    sum(groupIndex) 0."""
    if gradXOut.size == 0:
        return
    from .activations import _group_rows as group_rows
    from .activations import glu_dim, glu_halves

    axis = glu_dim(x, dim)
    x0, x1 = glu_halves(x, axis, interleaved)
    kind = x0.dtype.type
    g = _rows(gradY, x0.dtype, x0.shape[0])
    bound = kind(limit)
    a, b = np.minimum(x0, bound), np.clip(x1, -bound, bound)
    s = 1 / (1 + np.exp(-kind(alpha) * a))
    d0 = np.where(x0 <= bound, g * (b + kind(bias)) * s * (1 + kind(alpha) * a * (1 - s)),
                  kind(0))
    d1 = np.where((x1 >= -bound) & (x1 <= bound), g * a * s, kind(0))
    kept = group_rows(groupIndexOptional, x0.shape[0])
    d0[kept:] = 0
    d1[kept:] = 0
    _store(gradXOut, _joined(x, axis, d0, d1, interleaved))


def _sech_squared(z: Any) -> Any:
    """1 - tanh(z)^2 without its cancellation where tanh(z) nears 1: 4 e / (1 + e)^2,
    e = exp(-2 |z|)."""
    e = np.exp(-2 * np.abs(z))
    return 4 * e / np.square(1 + e)


def _situ_glu_grad_check(gradY: np.ndarray, x: np.ndarray, dim: int, beta: float,
                         linearBeta: float, activateLeft: bool, out: np.ndarray) -> None:
    """ops-nn activation/situ_glu_grad/docs/aclnnSituGluGrad.md: gradY x's shape with dim
    halved, out x's shape."""
    _glu_grad_check(gradY, "gradY", x, "x", dim, out, "out")


@register("aclnnSituGluGrad", check=_situ_glu_grad_check)
def situ_glu_grad(gradY: np.ndarray, x: np.ndarray, dim: int, beta: float, linearBeta: float,
                  activateLeft: bool, out: np.ndarray) -> None:
    """t = tanh(gate / beta), s = sigmoid(gate); dgate = gradY up' s ((1 - t^2) + beta t
    (1 - s)); dup = gradY beta t s (1 - tanh(up / linearBeta)^2 when linearBeta > 0) (ops-nn
    activation/situ_glu_grad/docs/aclnnSituGluGrad.md)."""
    if out.size == 0:
        return
    from .activations import glu_dim, glu_halves

    axis = glu_dim(x, dim)
    a, b = glu_halves(x, axis)
    gate, up = (a, b) if activateLeft else (b, a)
    kind = gate.dtype.type
    g = _rows(gradY, gate.dtype, gate.shape[0])
    t = np.tanh(gate / kind(beta))
    s, rest = 1 / (1 + np.exp(-gate)), 1 / (1 + np.exp(gate))   # sigmoid, 1 - sigmoid
    if linearBeta > 0:
        u = np.tanh(up / kind(linearBeta))
        up_value, up_slope = kind(linearBeta) * u, _sech_squared(up / kind(linearBeta))
    else:
        up_value, up_slope = up, kind(1)
    d_gate = g * up_value * s * (_sech_squared(gate / kind(beta)) + kind(beta) * t * rest)
    d_up = g * kind(beta) * t * s * up_slope
    first, second = (d_gate, d_up) if activateLeft else (d_up, d_gate)
    _store(out, _joined(x, axis, first, second))


def _scaled_masked_softmax_backward_check(gradOutput: np.ndarray, y: np.ndarray, mask: Any,
                                          scale: float, fixTriuMask: bool,
                                          out: np.ndarray) -> None:
    """ops-nn vfusion/scaled_masked_softmax_grad_v2/op_host/op_api/
    aclnn_scaled_masked_softmax_backward.cpp CheckFormat (no FRACTAL_NZ) and CheckShape:
    gradOutput 4-d, its last dimension at most 4096; y and out its shape; mask (optional)
    4-d of its last two sizes, broadcasting in the first two; fixTriuMask false only."""
    from .activations import SOFTMAX_WIDTH, masked_softmax_mask_check

    if gradOutput.ndim != 4:
        raise ValueError(f"gradOutput has {gradOutput.ndim} dimensions: it must be 4-d")
    if gradOutput.shape[3] > SOFTMAX_WIDTH:
        raise ValueError(f"gradOutput's last dimension is {gradOutput.shape[3]}: at most "
                         f"{SOFTMAX_WIDTH}")
    for name, value in (("y", y), ("out", out)):
        if value.shape != gradOutput.shape:
            raise ValueError(f"{name} has shape {list(value.shape)}: it must be gradOutput's, "
                             f"{list(gradOutput.shape)}")
    if mask is not None:
        masked_softmax_mask_check(gradOutput, mask, "gradOutput")
    for name, value in (("gradOutput", gradOutput), ("y", y), ("out", out), ("mask", mask)):
        if value is not None and tensor_format(value) == FRACTAL_NZ:   # CheckFormat
            raise ValueError(f"{name} has format FRACTAL_NZ: the tensors must be ND")
    if fixTriuMask:
        raise ValueError("fixTriuMask must be false: CANN supports only false")


@register("aclnnScaledMaskedSoftmaxBackward", check=_scaled_masked_softmax_backward_check)
def scaled_masked_softmax_backward(gradOutput: np.ndarray, y: np.ndarray, mask: Any,
                                   scale: float, fixTriuMask: bool, out: np.ndarray) -> None:
    """(gradOutput y - sum(gradOutput y) y) scale over the last dimension, 0 where mask is true
    (ops-nn vfusion/scaled_masked_softmax_grad_v2/docs/aclnnScaledMaskedSoftmaxBackward.md)."""
    if out.size == 0:
        return
    g, p = gradOutput.astype(np.float32), y.astype(np.float32)
    product = g * p
    grad = (product - np.sum(product, axis=-1, keepdims=True) * p) * np.float32(scale)
    if mask is not None:
        grad[np.broadcast_to(mask.astype(bool), grad.shape)] = 0
    _store(out, grad)
