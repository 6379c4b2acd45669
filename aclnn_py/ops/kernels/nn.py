"""Neural-network kernels: softmax and log-softmax with their backward operators, layer, group
and batch normalisation, more activations, the losses beyond the emulator's C ones, 2-d
convolution and pooling, embedding.

Everything computes in float32 for float16 and bfloat16 (CANN's kernels of these operators
widen too), statistics of normalisations included, and rounds once into each output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import Dtypes
from . import builtin, store, widen
from .elementwise import FLOATS, FLOATS64

REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
INDICES = Dtypes(("int64", "int32", "uint8"))


def _dim(x: np.ndarray, dim: int) -> int:
    if x.ndim == 0:
        return 0
    if not -x.ndim <= dim < x.ndim:
        raise ValueError(f"dim {dim} is out of range for a tensor of {x.ndim} dimensions")
    return dim % x.ndim


def _same(first: np.ndarray, out: np.ndarray, names: str = "self and out") -> None:
    if first.shape != out.shape:
        raise ValueError(f"{names} must have the same shape, got {first.shape} and {out.shape}")


def _softmax(x: np.ndarray, dim: int) -> Any:
    if x.ndim == 0:
        return np.ones_like(x)
    shifted = x - np.max(x, axis=dim, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax(x: np.ndarray, dim: int) -> Any:
    if x.ndim == 0:
        return np.zeros_like(x)
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


def _softmax_check(self: np.ndarray, dim: int, out: np.ndarray) -> None:
    _dim(self, dim)
    _same(self, out)


@builtin("aclnnSoftmax", dtypes=FLOATS64, check=_softmax_check)
def softmax(self: np.ndarray, dim: int, out: np.ndarray) -> None:
    x = widen(self)
    store(out, _softmax(x, _dim(x, dim)))


@builtin("aclnnLogSoftmax", dtypes=FLOATS64, check=_softmax_check)
def log_softmax(self: np.ndarray, dim: int, out: np.ndarray) -> None:
    x = widen(self)
    store(out, _log_softmax(x, _dim(x, dim)))


@builtin("aclnnSoftmaxBackward", dtypes=FLOATS64)
def softmax_backward(gradOutput: np.ndarray, output: np.ndarray, dim: int,
                     out: np.ndarray) -> None:
    g, y = widen(gradOutput), widen(output)
    axis = _dim(y, dim)
    store(out, y * (g - np.sum(g * y, axis=axis, keepdims=True)))


@builtin("aclnnLogSoftmaxBackward", dtypes=FLOATS64)
def log_softmax_backward(gradOutput: np.ndarray, output: np.ndarray, dim: int,
                         out: np.ndarray) -> None:
    g, y = widen(gradOutput), widen(output)
    axis = _dim(y, dim)
    store(out, g - np.exp(y) * np.sum(g, axis=axis, keepdims=True))


# ---- more activations ---------------------------------------------------------------------


@builtin("aclnnHardsigmoid", dtypes=FLOATS)
def hardsigmoid(self: np.ndarray, out: np.ndarray) -> None:
    store(out, np.clip(widen(self) / 6 + 0.5, 0, 1))


@builtin("aclnnHardtanh", dtypes=FLOATS)
def hardtanh(self: np.ndarray, clipValueMin: Any, clipValueMax: Any, out: np.ndarray) -> None:
    store(out, np.clip(widen(self), float(clipValueMin), float(clipValueMax)))


@builtin("aclnnLeakyRelu", dtypes=FLOATS)
def leaky_relu(self: np.ndarray, negativeSlope: Any, out: np.ndarray) -> None:
    x = widen(self)
    store(out, np.where(x > 0, x, x * np.float32(negativeSlope)))


@builtin("aclnnElu", dtypes=FLOATS)
def elu(self: np.ndarray, alpha: Any, scale: Any, inputScale: Any, out: np.ndarray) -> None:
    x = widen(self)
    a, s, i = (np.float32(v) for v in (alpha, scale, inputScale))
    store(out, s * np.where(x > 0, x, a * (np.exp(x * i) - 1)))


@builtin("aclnnSoftplus", dtypes=FLOATS)
def softplus(self: np.ndarray, beta: Any, threshold: Any, out: np.ndarray) -> None:
    x = widen(self)
    b, t = np.float32(beta), np.float32(threshold)
    store(out, np.where(x * b > t, x, np.log1p(np.exp(x * b)) / b))


@builtin("aclnnGlu", dtypes=FLOATS)
def glu(self: np.ndarray, dim: int, out: np.ndarray) -> None:
    x = widen(self)
    a, b = np.split(x, 2, axis=_dim(x, dim))
    store(out, a / (1 + np.exp(-b)))


# ---- normalisation --------------------------------------------------------------------


def _layer_norm_check(input: np.ndarray, normalizedShape: tuple[int, ...], weightOptional: Any,
                      biasOptional: Any, eps: float, out: np.ndarray, meanOutOptional: Any,
                      rstdOutOptional: Any) -> None:
    count = len(normalizedShape)
    if count == 0 or count > input.ndim or tuple(input.shape[-count:]) != tuple(normalizedShape):
        raise ValueError(f"normalizedShape {list(normalizedShape)} must be the last dimensions "
                         f"of input, whose shape is {input.shape}")
    _same(input, out, "input and out")
    for name, value in (("weightOptional", weightOptional), ("biasOptional", biasOptional)):
        if value is not None and tuple(value.shape) != tuple(normalizedShape):
            raise ValueError(f"{name} must have shape {tuple(normalizedShape)}, got "
                             f"{value.shape}")


@builtin("aclnnLayerNorm", dtypes=FLOATS, check=_layer_norm_check)
def layer_norm(input: np.ndarray, normalizedShape: tuple[int, ...], weightOptional: Any,
               biasOptional: Any, eps: float, out: np.ndarray, meanOutOptional: Any,
               rstdOutOptional: Any) -> None:
    x = widen(input)
    axes = tuple(range(x.ndim - len(normalizedShape), x.ndim))
    mean = np.mean(x, axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(np.mean((x - mean) ** 2, axis=axes, keepdims=True) + np.float32(eps))
    y = (x - mean) * rstd
    if weightOptional is not None:
        y = y * widen(weightOptional)
    if biasOptional is not None:
        y = y + widen(biasOptional)
    store(out, y)
    for result, value in ((meanOutOptional, mean), (rstdOutOptional, rstd)):
        if result is not None:
            store(result, value.reshape(result.shape))


@builtin("aclnnGroupNorm", dtypes=FLOATS)
def group_norm(self: np.ndarray, gamma: Any, beta: Any, N: int, C: int, HxW: int, group: int,
               eps: float, out: np.ndarray, meanOut: np.ndarray, rstdOut: np.ndarray) -> None:
    x = widen(self).reshape(N, group, -1)
    mean = np.mean(x, axis=2, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=2, keepdims=True)
    rstd = 1 / np.sqrt(var + np.float32(eps))
    y = ((x - mean) * rstd).reshape(N, C, -1)
    if gamma is not None:
        y = y * widen(gamma).reshape(1, C, 1)
    if beta is not None:
        y = y + widen(beta).reshape(1, C, 1)
    store(out, y.reshape(self.shape))
    store(meanOut, mean.reshape(meanOut.shape))
    store(rstdOut, rstd.reshape(rstdOut.shape))


@builtin("aclnnBatchNorm", dtypes=FLOATS)
def batch_norm(input: np.ndarray, weight: Any, bias: Any, runningMean: Any, runningVar: Any,
               training: bool, momentum: float, eps: float, output: np.ndarray,
               saveMean: Any, saveInvstd: Any) -> None:
    x = widen(input)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    shape = [1] * x.ndim
    shape[1] = x.shape[1]
    if training:
        mean = np.mean(x, axis=axes)
        var = np.mean((x - mean.reshape(shape)) ** 2, axis=axes)
        count = x.size // x.shape[1]
        if runningMean is not None:
            store(runningMean, (1 - momentum) * widen(runningMean) + momentum * mean)
        if runningVar is not None:
            unbiased = var * count / max(count - 1, 1)
            store(runningVar, (1 - momentum) * widen(runningVar) + momentum * unbiased)
    else:
        mean, var = widen(runningMean), widen(runningVar)
    invstd = 1 / np.sqrt(var + np.float32(eps))
    y = (x - mean.reshape(shape)) * invstd.reshape(shape)
    if weight is not None:
        y = y * widen(weight).reshape(shape)
    if bias is not None:
        y = y + widen(bias).reshape(shape)
    store(output, y)
    if saveMean is not None and saveMean.size:
        store(saveMean, mean if training else np.zeros_like(mean))
    if saveInvstd is not None and saveInvstd.size:
        store(saveInvstd, invstd if training else np.zeros_like(invstd))


# ---- losses ---------------------------------------------------------------------------


def _reduce(loss: np.ndarray, reduction: int, divisor: Any = None) -> Any:
    if reduction == 0:
        return loss
    total = np.sum(loss)
    if reduction == 1:
        return total / (loss.size if divisor is None else divisor)
    return total


def _reduction_check(reduction: int) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}")


@builtin("aclnnBinaryCrossEntropy", dtypes=FLOATS,
         check=lambda self, target, weight, reduction, out: _reduction_check(reduction))
def binary_cross_entropy(self: np.ndarray, target: np.ndarray, weight: Any, reduction: int,
                         out: np.ndarray) -> None:
    p, t = widen(self), widen(target)
    loss = -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log1p(-p), -100))
    if weight is not None:
        loss = loss * widen(weight)
    store(out, _reduce(loss, reduction))


@builtin("aclnnBinaryCrossEntropyWithLogits", dtypes=FLOATS,
         check=lambda self, target, weightOptional, posWeightOptional, reduction, out:
         _reduction_check(reduction))
def binary_cross_entropy_with_logits(self: np.ndarray, target: np.ndarray, weightOptional: Any,
                                     posWeightOptional: Any, reduction: int,
                                     out: np.ndarray) -> None:
    x, t = widen(self), widen(target)
    log_sigmoid = -np.logaddexp(0, -x)
    log_one_minus = -np.logaddexp(0, x)
    pos = 1 if posWeightOptional is None else widen(posWeightOptional)
    loss = -(pos * t * log_sigmoid + (1 - t) * log_one_minus)
    if weightOptional is not None:
        loss = loss * widen(weightOptional)
    store(out, _reduce(loss, reduction))


@builtin("aclnnNLLLoss", dtypes={"self": FLOATS, "target": INDICES, "weight": FLOATS})
def nll_loss(self: np.ndarray, target: np.ndarray, weight: Any, reduction: int,
             ignoreIndex: int, out: np.ndarray, totalWeightOut: np.ndarray) -> None:
    x = widen(self)
    labels = target.astype(np.int64).reshape(-1)
    rows = x.reshape(-1, x.shape[-1]) if x.ndim > 1 else x.reshape(1, -1)
    classes = rows.shape[1]
    w = np.ones(classes, np.float32) if weight is None else widen(weight)
    keep = labels != ignoreIndex
    safe = np.where(keep, labels, 0)
    picked = rows[np.arange(rows.shape[0]), safe]
    weights = np.where(keep, w[safe], 0).astype(np.float32)
    loss = -picked * weights
    total = np.sum(weights)
    if reduction == 0:
        store(out, loss.reshape(out.shape))
    else:
        store(out, np.sum(loss) / total if reduction == 1 else np.sum(loss))
    store(totalWeightOut, total)


# ---- convolution, pooling, embedding ----------------------------------------------------


def _pair(values: tuple[int, ...], default: int) -> tuple[int, int]:
    if not values:
        return (default, default)
    return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])


def _windows(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
             dilation: tuple[int, int], out_hw: tuple[int, int]) -> Any:
    """(N, C, OH, OW, KH, KW) windows of a padded NCHW array."""
    n, c = x.shape[:2]
    sn, sc, sh, sw = x.strides
    return np.lib.stride_tricks.as_strided(
        x, (n, c, out_hw[0], out_hw[1], kernel[0], kernel[1]),
        (sn, sc, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1]),
        writeable=False)


@builtin("aclnnConvolution", dtypes=FLOATS)
def convolution(input: np.ndarray, weight: np.ndarray, bias: Any, stride: tuple[int, ...],
                padding: tuple[int, ...], dilation: tuple[int, ...], transposed: bool,
                outputPadding: tuple[int, ...], groups: int, output: np.ndarray,
                cubeMathType: int) -> None:
    if transposed or input.ndim != 4:
        raise ValueError("the emulator computes 2-d, non-transposed convolutions only")
    x, w = widen(input), widen(weight)
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride, 1), _pair(padding, 0), _pair(dilation, 1)
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = output.shape[2], output.shape[3]
    cout, cin_g, kh, kw = w.shape
    result = np.empty((x.shape[0], cout, oh, ow), np.float32 if x.dtype != np.float64
                      else np.float64)
    cout_g = cout // groups
    for g in range(groups):
        part = np.ascontiguousarray(x[:, g * cin_g:(g + 1) * cin_g])
        cols = _windows(part, (kh, kw), (sh, sw), (dh, dw), (oh, ow))
        result[:, g * cout_g:(g + 1) * cout_g] = np.einsum(
            "nchwij,ocij->nohw", cols, w[g * cout_g:(g + 1) * cout_g], optimize=True)
    if bias is not None:
        result += widen(bias).reshape(1, -1, 1, 1)
    store(output, result)


@builtin("aclnnMaxPool2dWithIndices", dtypes=FLOATS)
def max_pool2d_with_indices(self: np.ndarray, kernelSize: tuple[int, ...],
                            stride: tuple[int, ...], padding: tuple[int, ...],
                            dilation: tuple[int, ...], ceilMode: bool, out: np.ndarray,
                            indices: np.ndarray) -> None:
    x = widen(self)
    batched = x.reshape((-1,) + x.shape[-3:]) if x.ndim == 4 else x[None]
    kh, kw = _pair(kernelSize, 1)
    sh, sw = _pair(stride, kh) if stride else (kh, kw)
    ph, pw = _pair(padding, 0)
    dh, dw = _pair(dilation, 1)
    oh, ow = out.shape[-2], out.shape[-1]
    h, w = batched.shape[-2:]
    padded = np.pad(batched, ((0, 0), (0, 0), (ph, ph + sh), (pw, pw + sw)),
                    constant_values=-np.inf)
    cols = _windows(padded, (kh, kw), (sh, sw), (dh, dw), (oh, ow))
    flat = cols.reshape(cols.shape[:4] + (-1,))
    best = np.argmax(flat, axis=-1)
    store(out, np.take_along_axis(flat, best[..., None], -1)[..., 0].reshape(out.shape))
    rows = np.arange(oh)[:, None] * sh - ph + (best // kw) * dh
    columns = np.arange(ow)[None, :] * sw - pw + (best % kw) * dw
    store(indices, (rows * w + columns).reshape(indices.shape))
    del h


@builtin("aclnnAvgPool2d", dtypes=FLOATS)
def avg_pool2d(self: np.ndarray, kernelSize: tuple[int, ...], strides: tuple[int, ...],
               paddings: tuple[int, ...], ceilMode: bool, countIncludePad: bool,
               divisorOverride: int, cubeMathType: int, out: np.ndarray) -> None:
    x = widen(self)
    batched = x if x.ndim == 4 else x[None]
    kh, kw = _pair(kernelSize, 1)
    sh, sw = _pair(strides, kh) if strides else (kh, kw)
    ph, pw = _pair(paddings, 0)
    oh, ow = out.shape[-2], out.shape[-1]
    padded = np.pad(batched, ((0, 0), (0, 0), (ph, ph + sh), (pw, pw + sw)))
    ones = np.pad(np.ones(batched.shape[-2:], np.float32), ((ph, ph + sh), (pw, pw + sw)))
    sums = _windows(padded, (kh, kw), (sh, sw), (1, 1), (oh, ow)).sum(axis=(-2, -1))
    if divisorOverride:
        divisor: Any = float(divisorOverride)
    elif countIncludePad:
        inside = np.pad(np.ones(batched.shape[-2:], np.float32), ((ph, ph), (pw, pw)),
                        constant_values=1)
        inside = np.pad(inside, ((0, sh), (0, sw)))
        divisor = _windows(inside[None, None], (kh, kw), (sh, sw), (1, 1),
                           (oh, ow)).sum(axis=(-2, -1))
    else:
        divisor = _windows(ones[None, None], (kh, kw), (sh, sw), (1, 1),
                           (oh, ow)).sum(axis=(-2, -1))
    store(out, (sums / divisor).reshape(out.shape))


@builtin("aclnnEmbedding")
def embedding(weight: np.ndarray, indices: np.ndarray, out: np.ndarray) -> None:
    store(out, weight[indices.astype(np.int64)])


@builtin("aclnnDot", dtypes=FLOATS)
def dot(self: np.ndarray, tensor: np.ndarray, out: np.ndarray) -> None:
    store(out, np.dot(widen(self), widen(tensor)))


# ---- backward of activations and losses -------------------------------------------------


@builtin("aclnnHardswishBackward", dtypes=FLOATS)
def hardswish_backward(gradOutput: np.ndarray, self: np.ndarray, out: np.ndarray) -> None:
    x, g = widen(self), widen(gradOutput)
    store(out, np.where(x < -3, 0, np.where(x <= 3, g * (2 * x + 3) / 6, g)))


@builtin("aclnnHardsigmoidBackward", dtypes=FLOATS)
def hardsigmoid_backward(gradOutput: np.ndarray, self: np.ndarray, out: np.ndarray) -> None:
    x = widen(self)
    store(out, np.where((x > -3) & (x < 3), widen(gradOutput) / 6, 0))


@builtin("aclnnHardtanhBackward", dtypes=FLOATS)
def hardtanh_backward(gradOutput: np.ndarray, self: np.ndarray, min: Any, max: Any,
                      out: np.ndarray) -> None:
    x = widen(self)
    store(out, np.where((x <= float(min)) | (x >= float(max)), 0, widen(gradOutput)))


@builtin("aclnnLeakyReluBackward", dtypes=FLOATS)
def leaky_relu_backward(gradOutput: np.ndarray, self: np.ndarray, negativeSlope: Any,
                        selfIsResult: bool, out: np.ndarray) -> None:
    x, g = widen(self), widen(gradOutput)
    store(out, np.where(x > 0, g, g * np.float32(negativeSlope)))


@builtin("aclnnSoftplusBackward", dtypes=FLOATS)
def softplus_backward(gradOutput: np.ndarray, self: np.ndarray, beta: Any, threshold: Any,
                      gradInput: np.ndarray) -> None:
    x, g = widen(self), widen(gradOutput)
    b, t = np.float32(beta), np.float32(threshold)
    z = np.exp(x * b)
    store(gradInput, np.where(x * b > t, g, g * z / (z + 1)))


@builtin("aclnnMishBackward", dtypes=FLOATS)
def mish_backward(gradOutput: np.ndarray, self: np.ndarray, gradInput: np.ndarray) -> None:
    x, g = widen(self), widen(gradOutput)
    sigmoid = 1 / (1 + np.exp(-x))
    tanh_softplus = np.tanh(np.logaddexp(0, x))
    store(gradInput, g * (tanh_softplus + x * sigmoid * (1 - tanh_softplus * tanh_softplus)))


@builtin("aclnnGluBackward", dtypes=FLOATS)
def glu_backward(gradOut: np.ndarray, self: np.ndarray, dim: int, out: np.ndarray) -> None:
    x, g = widen(self), widen(gradOut)
    axis = _dim(x, dim)
    a, b = np.split(x, 2, axis=axis)
    s = 1 / (1 + np.exp(-b))
    store(out, np.concatenate([g * s, g * a * s * (1 - s)], axis=axis))


@builtin("aclnnBinaryCrossEntropyBackward", dtypes=FLOATS)
def binary_cross_entropy_backward(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                                  weightOptional: Any, reduction: int, out: np.ndarray) -> None:
    p, t, g = widen(self), widen(target), widen(gradOutput)
    grad = g * (p - t) / np.maximum((1 - p) * p, np.float32(1e-12))
    if weightOptional is not None:
        grad = grad * widen(weightOptional)
    if reduction == 1:
        grad = grad / p.size
    store(out, grad)


@builtin("aclnnSoftmaxCrossEntropyWithLogits", dtypes=FLOATS)
def softmax_cross_entropy_with_logits(features: np.ndarray, labels: np.ndarray,
                                      loss: np.ndarray, backprop: np.ndarray) -> None:
    x, y = widen(features), widen(labels)
    log_probability = _log_softmax(x, x.ndim - 1)
    store(loss, -np.sum(y * log_probability, axis=-1))
    store(backprop, np.exp(log_probability) - y)


@builtin("aclnnLayerNormBackward", dtypes=FLOATS)
def layer_norm_backward(gradOut: np.ndarray, input: np.ndarray, normalizedShape: tuple[int, ...],
                        mean: np.ndarray, rstd: np.ndarray, weightOptional: Any,
                        biasOptional: Any, outputMask: tuple[bool, ...], gradInputOut: Any,
                        gradWeightOut: Any, gradBiasOut: Any) -> None:
    x, g = widen(input), widen(gradOut)
    count = len(normalizedShape)
    axes = tuple(range(x.ndim - count, x.ndim))
    outer = tuple(range(x.ndim - count))
    shape = x.shape[:x.ndim - count] + (1,) * count
    mu, r = widen(mean).reshape(shape), widen(rstd).reshape(shape)
    normalised = (x - mu) * r
    w = widen(weightOptional) if weightOptional is not None else np.float32(1)
    gw = g * w
    n = np.prod([x.shape[a] for a in axes])
    if outputMask[0] and gradInputOut is not None:
        grad = r / n * (n * gw - np.sum(gw, axis=axes, keepdims=True)
                        - normalised * np.sum(gw * normalised, axis=axes, keepdims=True))
        store(gradInputOut, grad)
    if len(outputMask) > 1 and outputMask[1] and gradWeightOut is not None:
        store(gradWeightOut, np.sum(g * normalised, axis=outer))
    if len(outputMask) > 2 and outputMask[2] and gradBiasOut is not None:
        store(gradBiasOut, np.sum(g, axis=outer))


@builtin("aclnnGroupNormBackward", dtypes=FLOATS)
def group_norm_backward(gradOut: np.ndarray, input: np.ndarray, mean: np.ndarray,
                        rstd: np.ndarray, gamma: Any, N: int, C: int, HxW: int, group: int,
                        outputMask: tuple[bool, ...], gradInput: Any, gradGammaOut: Any,
                        gradBetaOut: Any) -> None:
    x = widen(input).reshape(N, group, -1)
    g = widen(gradOut).reshape(N, C, -1)
    mu = widen(mean).reshape(N, group, 1)
    r = widen(rstd).reshape(N, group, 1)
    normalised = (x - mu) * r                                   # (N, group, C/group * HxW)
    if outputMask[0] and gradInput is not None:
        w = widen(gamma).reshape(1, C, 1) if gamma is not None else np.float32(1)
        gw = (g * w).reshape(N, group, -1)
        grad = r * (gw - np.mean(gw, axis=2, keepdims=True)
                    - normalised * np.mean(gw * normalised, axis=2, keepdims=True))
        store(gradInput, grad.reshape(gradInput.shape))
    by_channel = normalised.reshape(N, C, -1)
    if len(outputMask) > 1 and outputMask[1] and gradGammaOut is not None:
        store(gradGammaOut, np.sum(g * by_channel, axis=(0, 2)).reshape(gradGammaOut.shape))
    if len(outputMask) > 2 and outputMask[2] and gradBetaOut is not None:
        store(gradBetaOut, np.sum(g, axis=(0, 2)).reshape(gradBetaOut.shape))


@builtin("aclnnBatchNormBackward", dtypes=FLOATS)
def batch_norm_backward(gradOut: np.ndarray, input: np.ndarray, weight: Any, runningMean: Any,
                        runningVar: Any, saveMean: Any, saveInvstd: Any, training: bool,
                        eps: float, outputMask: tuple[bool, ...], gradInput: Any,
                        gradWeight: Any, gradBias: Any) -> None:
    x, g = widen(input), widen(gradOut)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    shape = [1] * x.ndim
    shape[1] = x.shape[1]
    if training:
        mean, invstd = widen(saveMean), widen(saveInvstd)
    else:
        mean = widen(runningMean)
        invstd = 1 / np.sqrt(widen(runningVar) + np.float32(eps))
    w = widen(weight) if weight is not None else np.ones(x.shape[1], np.float32)
    normalised = (x - mean.reshape(shape)) * invstd.reshape(shape)
    sum_g = np.sum(g, axis=axes)
    sum_gn = np.sum(g * normalised, axis=axes)
    if outputMask[0] and gradInput is not None:
        if training:
            n = x.size // x.shape[1]
            grad = (w * invstd).reshape(shape) / n * (
                n * g - sum_g.reshape(shape) - normalised * sum_gn.reshape(shape))
        else:
            grad = g * (w * invstd).reshape(shape)
        store(gradInput, grad)
    if outputMask[1] and gradWeight is not None:
        store(gradWeight, sum_gn)
    if outputMask[2] and gradBias is not None:
        store(gradBias, sum_g)
