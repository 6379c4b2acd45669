"""Neural-network kernels: softmax and log-softmax with their backward operators, layer, group
and batch normalisation, more activations, the losses beyond the emulator's C ones, 2-d
convolution and pooling, embedding.

Everything computes in float32 for float16 and bfloat16 (CANN's kernels of these operators
widen too), statistics of normalisations included, and rounds once into each output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._c.codes import constant
from ...ops.dtypes import Dtypes
from . import (
    Refusal,
    broadcasts_to,
    check_output_shapes,
    output_shapes,
    store,
    tensor_format,
    view_copy_check,
    widen,
)
from .elementwise import (
    BLOCK,
    FLOATS,
    FLOATS64,
    apply,
    broadcast_check,
    compute_dtype,
    promote_types,
    real_value,
    same_shape,
    select,
)
from .elementwise import register as builtin

PARAM_NULLPTR = constant("ACLNN_ERR_PARAM_NULLPTR")  # 161001
INNER_NULLPTR = constant("ACLNN_ERR_INNER_NULLPTR")  # 561103
INDICES = Dtypes(("int64", "int32", "uint8"))
MASK = Dtypes(("int8",))  # aclnnMaxPool2dWithMask's indices


def _dim(x: np.ndarray, dim: int) -> int:
    if x.ndim == 0:
        return 0
    if not -x.ndim <= dim < x.ndim:
        raise ValueError(f"dim {dim} is out of range for a tensor of {x.ndim} dimensions")
    return dim % x.ndim


def _same(first: np.ndarray, out: np.ndarray, names: str = "self and out") -> None:
    if first.shape != out.shape:
        raise ValueError(f"{names} must have the same shape, got {first.shape} and {out.shape}")


def _softmax_rows(x: np.ndarray, target: np.ndarray, log: bool) -> None:
    """(Log-)softmax of each row of 2-d ``x`` into ``target``, rows at a time in blocks of
    about :data:`BLOCK` elements: the maximum subtracted, exp, the sum (numpy's pairwise),
    then divided by it (or its log subtracted)."""
    rows, length = x.shape
    step = max(1, BLOCK // max(length, 1))
    for start in range(0, rows, step):
        block = x[start:start + step]
        result = target[start:start + step]
        np.subtract(block, np.max(block, axis=1, keepdims=True), out=result)
        if log:
            total = np.sum(np.exp(result), axis=1, keepdims=True)
            np.subtract(result, np.log(total, out=total), out=result)
        else:
            np.exp(result, out=result)
            np.divide(result, np.sum(result, axis=1, keepdims=True), out=result)


def _softmax_into(self: np.ndarray, dim: int, out: np.ndarray, log: bool) -> None:
    """(Log-)softmax of ``self`` along ``dim`` into ``out``; a 0-d self is one element."""
    dtype = compute_dtype(self.dtype)
    x = self.reshape(1) if self.ndim == 0 else self
    axis = _dim(x, dim)
    last = axis == x.ndim - 1
    direct = (last and out.dtype == dtype and out.flags.c_contiguous
              and not np.may_share_memory(out, self))
    moved = np.moveaxis(x, axis, -1)
    rows = np.ascontiguousarray(moved, dtype).reshape(-1, x.shape[axis])
    if direct:
        _softmax_rows(rows, out.reshape(rows.shape), log)
        return
    result = np.empty(rows.shape, dtype)
    _softmax_rows(rows, result, log)
    store(out, np.moveaxis(result.reshape(moved.shape), -1, axis).reshape(out.shape))


def _log_softmax(x: np.ndarray, dim: int) -> Any:
    if x.ndim == 0:
        return np.zeros_like(x)
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


# The softmax family's checks are phase-1 rules (dtypes, dim's range, shapes); CANN returns
# before them for an empty input (ops-nn activation/softmax_v2/op_api/aclnn_softmax.cpp,
# softmax_grad/op_api/aclnn_softmax_backward.cpp, log_softmax_grad/op_api/), so an empty
# input computes nothing.


@builtin("aclnnSoftmax", dtypes=FLOATS64)
def softmax(self: np.ndarray, dim: int, out: np.ndarray) -> None:
    if self.size:
        _softmax_into(self, dim, out, log=False)


@builtin("aclnnLogSoftmax", dtypes=FLOATS64)
def log_softmax(self: np.ndarray, dim: int, out: np.ndarray) -> None:
    if self.size:  # aclnn_log_softmax.cpp casts self to out's dtype before LogSoftmaxV2
        _softmax_into(self.astype(out.dtype, copy=False), dim, out, log=True)


@builtin("aclnnSoftmaxBackward", dtypes=FLOATS64)
def softmax_backward(gradOutput: np.ndarray, output: np.ndarray, dim: int,
                     out: np.ndarray) -> None:
    if gradOutput.size == 0 or output.size == 0:
        return
    g, y = widen(gradOutput), widen(output)
    axis = _dim(y, dim)
    store(out, y * (g - np.sum(g * y, axis=axis, keepdims=True)))


@builtin("aclnnLogSoftmaxBackward", dtypes=FLOATS64)
def log_softmax_backward(gradOutput: np.ndarray, output: np.ndarray, dim: int,
                         out: np.ndarray) -> None:
    if gradOutput.size == 0 or output.size == 0:
        return
    g, y = widen(gradOutput), widen(output)
    axis = _dim(y, dim)
    store(out, g - np.exp(y) * np.sum(g, axis=axis, keepdims=True))


# ---- more activations ---------------------------------------------------------------------


def _run(out: np.ndarray, body: Any, *inputs: np.ndarray) -> None:
    """:func:`apply` in the inputs' promoted compute dtype (integral or bool ones in float32,
    as CANN's activations cast them)."""
    dtype = inputs[0].dtype
    for other in inputs[1:]:
        dtype = promote_types(dtype, other.dtype)
    if dtype.kind in "biu":
        dtype = np.dtype(np.float32)
    if out.size:
        apply(out, body, list(inputs), compute_dtype(dtype))


@builtin("aclnnHardsigmoid", dtypes=FLOATS, check=same_shape)
def hardsigmoid(self: np.ndarray, out: np.ndarray) -> None:
    def body(target: np.ndarray, x: np.ndarray) -> None:   # clip(x / 6 + 1/2, 0, 1)
        kind = target.dtype.type
        np.divide(x, kind(6), out=target)
        np.add(target, kind(0.5), out=target)
        np.maximum(kind(0), target, out=target)
        np.minimum(kind(1), target, out=target)
    _run(out, body, self)


def _hardtanh_check(self: np.ndarray, clipValueMin: Any, clipValueMax: Any,
                    out: np.ndarray) -> None:
    """clipValueMin <= clipValueMax, compared as integers when clipValueMin is one, else as
    floats (ops-math conversion/clip_by_value_v2/op_api/aclnn_hardtanh.cpp CheckMinMaxValue)."""
    low, high = np.asarray(clipValueMin), np.asarray(clipValueMax)
    first: float
    second: float
    if low.dtype.kind in "iu":
        first, second = int(low), int(high.astype(np.int64))
    else:
        first, second = float(low.astype(np.float64)), float(high.astype(np.float64))
    if first > second:
        raise ValueError(f"clipValueMin ({first}) is greater than clipValueMax ({second}): it "
                         "must not be")


@builtin("aclnnHardtanh", dtypes=FLOATS, check=_hardtanh_check)
def hardtanh(self: np.ndarray, clipValueMin: Any, clipValueMax: Any, out: np.ndarray) -> None:
    def body(target: np.ndarray, x: np.ndarray) -> None:
        kind = target.dtype.type
        np.maximum(kind(clipValueMin), x, out=target)   # the bound first: x on ties, -0.0 kept
        np.minimum(kind(clipValueMax), target, out=target)
    _run(out, body, self)


@builtin("aclnnLeakyRelu", dtypes=FLOATS)
def leaky_relu(self: np.ndarray, negativeSlope: Any, out: np.ndarray) -> None:
    slope = real_value(negativeSlope)

    def body(target: np.ndarray, x: np.ndarray) -> None:   # x where x > 0, else slope x
        scaled = np.multiply(x, target.dtype.type(slope), out=np.empty_like(target))
        select(target, np.greater(x, 0), np.broadcast_to(x, target.shape), scaled)
    _run(out, body, self)


def _elu_check(self: np.ndarray, alpha: Any, scale: Any, inputScale: Any,
               out: np.ndarray) -> None:
    """alpha, scale and inputScale cast to float32: no complex (ops-nn activation/elu/op_api/
    aclnn_elu.cpp CheckDtypeValid)."""
    for name, value in (("scale", scale), ("alpha", alpha), ("inputScale", inputScale)):
        if np.iscomplexobj(value):
            raise ValueError(f"{name} has dtype {np.asarray(value).dtype.name}, which cannot be "
                             "cast to float32")


@builtin("aclnnElu", dtypes=FLOATS, check=_elu_check)
def elu(self: np.ndarray, alpha: Any, scale: Any, inputScale: Any, out: np.ndarray) -> None:
    def body(target: np.ndarray, x: np.ndarray) -> None:
        # scale x where x > 0, else alpha scale (exp(inputScale x) - 1)
        kind = target.dtype.type
        negative = np.multiply(x, kind(inputScale), out=np.empty_like(target))
        np.expm1(negative, out=negative)
        np.multiply(negative, kind(alpha), out=negative)
        select(target, np.greater(x, 0), np.broadcast_to(x, target.shape), negative)
        np.multiply(target, kind(scale), out=target)
    _run(out, body, self)


@builtin("aclnnSoftplus", dtypes=FLOATS, check=same_shape)
def softplus(self: np.ndarray, beta: Any, threshold: Any, out: np.ndarray) -> None:
    def body(target: np.ndarray, x: np.ndarray) -> None:
        # x where beta x > threshold, else log(1 + exp(beta x)) / beta
        kind = target.dtype.type
        scaled = np.multiply(x, kind(beta), out=np.empty_like(target))
        above = np.greater(scaled, kind(threshold))
        np.exp(scaled, out=scaled)
        np.log1p(scaled, out=scaled)
        np.divide(scaled, kind(beta), out=scaled)
        select(target, above, np.broadcast_to(x, target.shape), scaled)
    _run(out, body, self)


def _halved(shape: tuple[int, ...], dim: int) -> tuple[int, ...]:
    """``shape`` with dimension ``dim`` halved; ValueError when that dimension is odd (dim's
    range is a phase-1 rule)."""
    axis = dim % len(shape)
    if shape[axis] % 2:
        raise ValueError(f"dimension {dim} of self has size {shape[axis]}: it must be even")
    return shape[:axis] + (shape[axis] // 2,) + shape[axis + 1:]


def _glu_check(self: np.ndarray, dim: int, out: np.ndarray) -> None:
    """The split dimension is even and out has self's shape with it halved (ops-nn
    activation/glu/op_host/op_api/aclnn_glu.cpp CheckParamsDataAndShape)."""
    _halved(self.shape, dim)  # (an odd dimension refused)
    check_output_shapes("aclnnGlu", {"self": self, "dim": dim}, {"out": out})


@builtin("aclnnGlu", dtypes=FLOATS, check=_glu_check)
def glu(self: np.ndarray, dim: int, out: np.ndarray) -> None:
    x = widen(self)
    a, b = np.split(x, 2, axis=_dim(x, dim))
    store(out, a / (1 + np.exp(-b)))


# ---- normalisation --------------------------------------------------------------------


def _refuse_null(name: str, why: str) -> None:
    """CANN refuses a NULL tensor its call needs with 161001 (ACLNN_ERR_PARAM_NULLPTR)."""
    raise Refusal(f"{name} is NULL, but {why}", PARAM_NULLPTR)


def _mask(outputMask: tuple[bool, ...], index: int) -> bool:
    return len(outputMask) > index and bool(outputMask[index])


def _channels(name: str, value: Any, channels: int) -> None:
    """A per-channel tensor is 1-d of C elements (CheckOtherShape of ops-nn norm/batch_norm_v3
    and batch_norm_grad_v3 op_host/op_api/)."""
    if value is not None and value.shape != (channels,):
        raise ValueError(f"{name} has shape {value.shape}: it must be 1-d of the "
                         f"{channels} channels of input")


def _layer_norm_check(input: np.ndarray, normalizedShape: tuple[int, ...], weightOptional: Any,
                      biasOptional: Any, eps: float, out: np.ndarray, meanOutOptional: Any,
                      rstdOutOptional: Any) -> None:
    """aclnnLayerNorm (ops-nn norm/layer_norm_v4/op_host/op_api/aclnn_layer_norm.cpp):
    weight and bias are float32 or input's dtype, and one dtype together (CheckInputDtype);
    normalizedShape names input's last dimensions, of at most 8 (CheckShape)."""
    for name, value in (("weightOptional", weightOptional), ("biasOptional", biasOptional)):
        if value is not None and value.dtype not in (np.float32, input.dtype):
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be float32 or "
                             f"input's dtype {input.dtype.name}")
    if (weightOptional is not None and biasOptional is not None
            and weightOptional.dtype != biasOptional.dtype):
        raise ValueError(f"weightOptional ({weightOptional.dtype.name}) and biasOptional "
                         f"({biasOptional.dtype.name}) must have the same dtype")
    count = len(normalizedShape)
    if count == 0 or count > 8 or count > input.ndim or \
            tuple(input.shape[-count:]) != tuple(normalizedShape):
        raise ValueError(f"normalizedShape {list(normalizedShape)} must be the last dimensions "
                         f"of input (1 to 8 of them), whose shape is {input.shape}")
    for name, value in (("weightOptional", weightOptional), ("biasOptional", biasOptional)):
        if value is not None and tuple(value.shape) != tuple(normalizedShape):
            raise ValueError(f"{name} must have shape {tuple(normalizedShape)}, got "
                             f"{value.shape}")
    shapes = output_shapes("aclnnLayerNorm", input=input, normalizedShape=normalizedShape)
    statistics = shapes["meanOutOptional"]
    for name, value in (("meanOutOptional", meanOutOptional),
                        ("rstdOutOptional", rstdOutOptional)):
        if value is not None and value.size and value.shape != statistics \
                and value.size != int(np.prod(statistics)):
            raise ValueError(f"{name} has shape {value.shape}: it must be {statistics} (input's "
                             "leading dimensions, then ones)")
    if out.shape != shapes["out"]:
        raise ValueError(f"input and out must have the same shape, got {input.shape} and "
                         f"{out.shape}")


@builtin("aclnnLayerNorm", dtypes=FLOATS, check=_layer_norm_check)
def layer_norm(input: np.ndarray, normalizedShape: tuple[int, ...], weightOptional: Any,
               biasOptional: Any, eps: float, out: np.ndarray, meanOutOptional: Any,
               rstdOutOptional: Any) -> None:
    """(x - mean) rstd weight + bias over the last dimensions, rstd = 1 / sqrt(var + eps) (the
    biased variance), rows at a time in cache-sized blocks, in float32 for float16 and
    bfloat16."""
    length = int(np.prod(normalizedShape))
    if input.size == 0:  # as CANN: nothing to normalise; over empty axes mean 0, rstd NaN
        if length == 0:
            for result, value in ((meanOutOptional, 0.0), (rstdOutOptional, np.nan)):
                if result is not None and result.size:
                    result[...] = value
        return
    dtype = compute_dtype(input.dtype)
    rows = np.ascontiguousarray(input).reshape(-1, length)
    weight = None if weightOptional is None else widen(weightOptional).reshape(-1)
    bias = None if biasOptional is None else widen(biasOptional).reshape(-1)
    result = np.empty(rows.shape, dtype)
    means = np.empty((rows.shape[0], 1), dtype)
    rstds = np.empty((rows.shape[0], 1), dtype)
    step = max(1, BLOCK // max(length, 1))
    for start in range(0, rows.shape[0], step):
        x = rows[start:start + step].astype(dtype, copy=False)
        y = result[start:start + x.shape[0]]
        mean = np.mean(x, axis=1, keepdims=True, dtype=dtype)
        np.subtract(x, mean, out=y)
        variance = np.mean(np.square(y), axis=1, keepdims=True, dtype=dtype)
        rstd = np.sqrt(variance + dtype.type(eps))
        np.reciprocal(rstd, out=rstd)
        np.multiply(y, rstd, out=y)
        if weight is not None:
            np.multiply(y, weight, out=y)
        if bias is not None:
            np.add(y, bias, out=y)
        means[start:start + x.shape[0]] = mean
        rstds[start:start + x.shape[0]] = rstd
    store(out, result.reshape(out.shape))
    for target, statistic in ((meanOutOptional, means), (rstdOutOptional, rstds)):
        if target is not None and target.size:
            store(target, statistic.reshape(target.shape))


def _group_norm_check(self: np.ndarray, gamma: Any, beta: Any, N: int, C: int, HxW: int,
                      group: int, eps: float, out: np.ndarray, meanOut: np.ndarray,
                      rstdOut: np.ndarray) -> None:
    """aclnnGroupNorm (ops-nn norm/group_norm/op_host/op_api/aclnn_group_norm.cpp CheckAttr,
    CheckShape): the attributes describe self, meanOut and rstdOut are (N, group)."""
    if group <= 0:
        raise ValueError(f"group is {group}: it must be greater than 0")
    if C % group:
        raise ValueError(f"C ({C}) must be divisible by group ({group})")
    if not eps > 0:
        raise ValueError(f"eps is {eps}: it must be greater than 0")
    check_output_shapes("aclnnGroupNorm", {"self": self, "N": N, "group": group},
                        {"meanOut": meanOut, "rstdOut": rstdOut}, "it must be (N, group) =")
    if self.shape[0] != N or self.shape[1] != C or int(np.prod(self.shape[2:])) != HxW:
        raise ValueError(f"self has shape {self.shape}: it must be (N, C, ...) with N {N}, "
                         f"C {C} and {HxW} (HxW) elements per channel")
    for name, value in (("gamma", gamma), ("beta", beta)):
        if value is not None and value.shape != (C,):
            raise ValueError(f"{name} has shape {value.shape}: it must be ({C},), the "
                             "channels of self")


@builtin("aclnnGroupNorm", dtypes=FLOATS, check=_group_norm_check)
def group_norm(self: np.ndarray, gamma: Any, beta: Any, N: int, C: int, HxW: int, group: int,
               eps: float, out: np.ndarray, meanOut: np.ndarray, rstdOut: np.ndarray) -> None:
    if self.size == 0:  # meanOut 0, rstdOut NaN (aclnn_group_norm.cpp)
        meanOut[...] = 0
        rstdOut[...] = np.nan
        return
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


def _batch_norm_check(input: np.ndarray, weight: Any, bias: Any, runningMean: Any,
                      runningVar: Any, training: bool, momentum: float, eps: float,
                      output: np.ndarray, saveMean: Any, saveInvstd: Any) -> None:
    """aclnnBatchNorm (ops-nn norm/batch_norm_v3/op_host/op_api/aclnn_batch_norm.cpp):
    training needs saveMean and saveInvstd (CheckNotNull); past an empty input, the
    per-channel tensors are 1-d of C (CheckOtherShape), and so are the saved statistics in
    training."""
    if training:
        for name, value in (("saveMean", saveMean), ("saveInvstd", saveInvstd)):
            if value is None:
                _refuse_null(name, "training needs it")
    if input.size == 0:
        return
    channels = input.shape[1]
    for name, value in (("weight", weight), ("bias", bias), ("runningMean", runningMean),
                        ("runningVar", runningVar)):
        _channels(name, value, channels)
    if training:
        _channels("saveMean", saveMean, channels)
        _channels("saveInvstd", saveInvstd, channels)


@builtin("aclnnBatchNorm", dtypes=FLOATS, check=_batch_norm_check)
def batch_norm(input: np.ndarray, weight: Any, bias: Any, runningMean: Any, runningVar: Any,
               training: bool, momentum: float, eps: float, output: np.ndarray,
               saveMean: Any, saveInvstd: Any) -> None:
    """Per channel (dimension 1): training normalises by the batch's mean and biased
    variance and updates the running statistics with the unbiased one; inference by the
    running statistics. The output is x scale + shift, scale = weight invstd, shift = bias -
    mean scale."""
    if input.size == 0:  # saveMean 0 and saveInvstd NaN, when given (aclnn_batch_norm.cpp)
        for result, value in ((saveMean, 0.0), (saveInvstd, np.nan)):
            if result is not None:
                result[...] = value
        return
    x = widen(input)
    channels = x.shape[1]
    planes = x.reshape(x.shape[0], channels, -1)
    if training:
        mean = np.mean(planes, axis=(0, 2))
        var = np.mean(np.square(planes - mean[:, None]), axis=(0, 2))
        count = x.size // channels
        if runningMean is not None:
            store(runningMean, (1 - momentum) * widen(runningMean) + momentum * mean)
        if runningVar is not None:
            unbiased = var * count / max(count - 1, 1)
            store(runningVar, (1 - momentum) * widen(runningVar) + momentum * unbiased)
    else:  # BatchNorm in aclnn_batch_norm.cpp: a NULL runningMean is 0, runningVar 1
        mean = widen(runningMean) if runningMean is not None else np.zeros(channels, np.float32)
        var = widen(runningVar) if runningVar is not None else np.ones(channels, np.float32)
    invstd = 1 / np.sqrt(var + np.float32(eps))
    scale = invstd * widen(weight) if weight is not None else invstd
    shift = -mean * scale
    if bias is not None:
        shift = shift + widen(bias)
    result = np.multiply(planes, scale.astype(planes.dtype)[:, None])
    np.add(result, shift.astype(planes.dtype)[:, None], out=result)
    store(output, result.reshape(output.shape))
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


def _fill_reduced(out: np.ndarray, reduction: int) -> None:
    """An empty input's loss: nothing for none, NaN for mean, 0 for sum (the Fill of ops-nn
    loss/binary_cross_entropy/op_api/ and sigmoid_cross_entropy_with_logits_v2/op_api/)."""
    if reduction:
        out[...] = np.nan if reduction == 1 else 0


def _loss_out(result: tuple[int, ...], out: np.ndarray) -> None:
    """out has the loss's shape, or both have one element (CheckReduceOutShape)."""
    if out.shape != result and not (out.size == 1 and int(np.prod(result)) == 1):
        raise ValueError(f"out has shape {out.shape}, but the loss has shape {result} (they "
                         "must be equal, or both of one element)")


def _bce_check(self: Any, target: Any, weight: Any, reduction: int, out: Any) -> None:
    """aclnnBinaryCrossEntropy (ops-nn loss/binary_cross_entropy/op_api/
    aclnn_binary_cross_entropy.cpp): a NULL self, target or out is 561103
    (ACLNN_ERR_INNER_NULLPTR); with a weight, target, weight and out have self's dtype; a
    non-empty self's loss has out's shape (CheckReduceOutShape)."""
    for name, value in (("self", self), ("target", target), ("out", out)):
        if value is None:
            raise Refusal(f"{name} is NULL", INNER_NULLPTR)
    if weight is not None:
        for name, value in (("target", target), ("weight", weight), ("out", out)):
            if value.dtype != self.dtype:
                raise ValueError(f"{name} has dtype {value.dtype.name} and self "
                                 f"{self.dtype.name}: with a weight they must have one dtype")
    if self.size:
        _loss_out(self.shape if reduction == 0 else (), out)


@builtin("aclnnBinaryCrossEntropy", dtypes=FLOATS, check=_bce_check)
def binary_cross_entropy(self: np.ndarray, target: np.ndarray, weight: Any, reduction: int,
                         out: np.ndarray) -> None:
    if self.size == 0:
        _fill_reduced(out, reduction)
        return
    p, t = widen(self), widen(target)
    loss = -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log1p(-p), -100))
    if weight is not None:
        loss = loss * widen(weight)
    result = np.asarray(_reduce(loss, reduction))
    store(out, result.reshape(out.shape) if result.size == out.size else result)


def _bce_logits_check(self: np.ndarray, target: np.ndarray, weightOptional: Any,
                      posWeightOptional: Any, reduction: int, out: np.ndarray) -> None:
    """aclnnBinaryCrossEntropyWithLogits (ops-nn loss/sigmoid_cross_entropy_with_logits_v2/
    op_api/aclnn_binary_cross_entropy_with_logits.cpp): weight and posWeight broadcast with a
    non-empty target (CheckShape); for reduction none, out has the loss's shape."""
    shapes = [target.shape]
    if target.size:
        for name, value in (("weightOptional", weightOptional),
                            ("posWeightOptional", posWeightOptional)):
            if value is None:
                continue
            try:
                np.broadcast_shapes(value.shape, target.shape)
            except ValueError:
                raise ValueError(f"{name} with shape {value.shape} does not broadcast with "
                                 f"target's {target.shape}") from None
            shapes.append(value.shape)
    if reduction == 0 and self.size:
        result = np.broadcast_shapes(*shapes)
        if out.shape != result:
            raise ValueError(f"out has shape {out.shape}; the loss has shape {result}")


@builtin("aclnnBinaryCrossEntropyWithLogits", dtypes=FLOATS, check=_bce_logits_check)
def binary_cross_entropy_with_logits(self: np.ndarray, target: np.ndarray, weightOptional: Any,
                                     posWeightOptional: Any, reduction: int,
                                     out: np.ndarray) -> None:
    """ops-nn loss/sigmoid_cross_entropy_with_logits_v2/docs/aclnnBinaryCrossEntropyWithLogits.md:
    -w (p t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))), which is
    w ((1 - t) x + (1 + (p - 1) t) softplus(-x)), softplus(-x) = log1p(exp(-|x|)) + max(-x, 0):
    computed as w (max(x, 0) - t x + log1p(exp(-|x|)) + (p - 1) t softplus(-x)), without
    overflow, log of 0 or cancellation."""
    if self.size == 0:
        _fill_reduced(out, reduction)
        return
    inputs = [self, target]
    for extra in (posWeightOptional, weightOptional):
        if extra is not None:
            inputs.append(extra)

    def body(result: np.ndarray, x: np.ndarray, t: np.ndarray, *rest: np.ndarray) -> None:
        # max(x, 0) - t x + log1p(exp(-|x|)) [+ (p - 1) t softplus(-x)]: no cancellation
        kind = result.dtype.type
        tail = np.abs(x, out=np.empty_like(result))
        np.negative(tail, out=tail)
        np.exp(tail, out=tail)
        np.log1p(tail, out=tail)                          # log1p(exp(-|x|))
        np.multiply(t, x, out=result)
        np.subtract(np.maximum(x, kind(0)), result, out=result)
        np.add(result, tail, out=result)
        extras = list(rest)
        if posWeightOptional is not None:
            extra = np.subtract(extras.pop(0), kind(1), out=np.empty_like(result))
            np.multiply(extra, t, out=extra)
            np.add(tail, np.maximum(np.negative(x), kind(0)), out=tail)   # softplus(-x)
            np.multiply(extra, tail, out=extra)
            np.add(result, extra, out=result)
        if weightOptional is not None:
            np.multiply(result, extras.pop(0), out=result)

    shape = np.broadcast_shapes(*(a.shape for a in inputs))
    if reduction == 0 and out.shape == shape:
        _run(out, body, *inputs)
        return
    loss = np.empty(shape, compute_dtype(self.dtype))
    _run(loss, body, *inputs)
    store(out, _reduce(loss, reduction))


def _nll_inputs_check(self: np.ndarray, target: np.ndarray, weight: np.ndarray) -> int:
    """aclnnNLLLoss's and its backward's self, target and weight: a 1-d self takes a 0-d
    target, a 2-d one a 1-d target of its batch; weight is 1-d of the classes, returned."""
    classes: int = self.shape[-1] if self.ndim else 0
    if not ((self.ndim == 1 and target.ndim == 0) or (
            self.ndim == 2 and target.ndim == 1 and self.shape[0] == target.shape[0])):
        raise ValueError(f"self has shape {self.shape} and target {target.shape}: a 1-d self "
                         "needs a 0-d target, a 2-d self a 1-d target of its first dimension")
    if weight.shape != (classes,):
        raise ValueError(f"weight has shape {weight.shape}: it must be ({classes},), the "
                         "classes of self")
    return classes


def _nll_loss_check(self: np.ndarray, target: np.ndarray, weight: np.ndarray, reduction: int,
                    ignoreIndex: int, out: np.ndarray, totalWeightOut: np.ndarray) -> None:
    """aclnnNLLLoss (ops-nn loss/nll_loss/op_api/aclnn_nll_loss.cpp CheckShape): a 1-d self
    takes a 0-d target, a 2-d one a 1-d target of its batch; weight is 1-d of the classes;
    out is the batch's losses (reduction none of a 2-d self) or one element; totalWeightOut
    one element."""
    classes = _nll_inputs_check(self, target, weight)
    if reduction == 0 and self.ndim == 2:
        if out.shape != (self.shape[0],):
            raise ValueError(f"out has shape {out.shape}; reduction none gives "
                             f"{(self.shape[0],)}")
    elif out.ndim > 1 or out.size != 1:
        raise ValueError(f"out has shape {out.shape}: it must be one element (0-d or 1-d)")
    if totalWeightOut.size != 1:
        raise ValueError(f"totalWeightOut has shape {totalWeightOut.shape}: it must be one "
                         "element")
    if self.size == 0 and classes == 0 and target.size:
        raise ValueError("target is out of bounds: self has no classes")


@builtin("aclnnNLLLoss", dtypes={"self": FLOATS, "target": INDICES, "weight": FLOATS},
         check=_nll_loss_check)
def nll_loss(self: np.ndarray, target: np.ndarray, weight: np.ndarray, reduction: int,
             ignoreIndex: int, out: np.ndarray, totalWeightOut: np.ndarray) -> None:
    if self.size == 0:  # NLLLossEmptyTensorCompute
        if reduction:
            _fill_reduced(out, reduction)
            totalWeightOut[...] = 0
        return
    x = widen(self)
    labels = target.astype(np.int64).reshape(-1)
    rows = x.reshape(-1, x.shape[-1]) if x.ndim > 1 else x.reshape(1, -1)
    classes = rows.shape[1]
    w = widen(weight)
    keep = labels != ignoreIndex
    valid_indices("target", labels[keep], 0, classes,
                  f"self has {classes} classes, and CANN's doc (ops-nn loss/nll_loss/docs/"
                  "aclnnNLLLoss.md) takes targets in [0, C - 1] (but ignoreIndex)")
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


def _nll_loss_backward_check(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                             weight: np.ndarray, reduction: int, ignoreIndex: int,
                             totalWeight: np.ndarray, out: np.ndarray) -> None:
    """aclnnNLLLossBackward (ops-nn loss/nll_loss_grad/docs/aclnnNLLLossBackward.md): self and
    target as for aclnnNLLLoss; gradOutput the forward's out (the batch's losses for
    reduction none of a 2-d self, else one element); totalWeight one element; out self's
    shape."""
    _nll_inputs_check(self, target, weight)
    if reduction == 0 and self.ndim == 2:
        if gradOutput.shape != (self.shape[0],):
            raise ValueError(f"gradOutput has shape {gradOutput.shape}; reduction none gives "
                             f"the batch's losses, {(self.shape[0],)}")
    elif gradOutput.size != 1:
        raise ValueError(f"gradOutput has shape {gradOutput.shape}: it must be one element")
    if totalWeight.size != 1:
        raise ValueError(f"totalWeight has shape {totalWeight.shape}: it must be one element")
    if out.shape != self.shape:
        raise ValueError(f"out has shape {out.shape}; it must be self's, {self.shape}")


@builtin("aclnnNLLLossBackward", dtypes={"gradOutput": FLOATS, "self": FLOATS,
                                          "target": INDICES, "weight": FLOATS,
                                          "totalWeight": FLOATS},
         check=_nll_loss_backward_check)
def nll_loss_backward(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                      weight: np.ndarray, reduction: int, ignoreIndex: int,
                      totalWeight: np.ndarray, out: np.ndarray) -> None:
    # out[n, t_n] = -gradOutput w[t_n] (gradOutput_n for reduction none), divided by
    # totalWeight for mean; 0 elsewhere and on rows whose target is ignoreIndex
    if out.size == 0:
        return
    rows = widen(self).reshape(-1, self.shape[-1])
    labels = target.astype(np.int64).reshape(-1)
    keep = labels != ignoreIndex
    valid_indices("target", labels[keep], 0, rows.shape[1],
                  f"self has {rows.shape[1]} classes (ops-nn loss/nll_loss_grad/docs/"
                  "aclnnNLLLossBackward.md: targets in [0, C - 1] but ignoreIndex)")
    safe = np.where(keep, labels, 0)
    grad = widen(gradOutput).reshape(-1)
    scale = -np.where(keep, widen(weight)[safe], 0) * (grad if reduction == 0 else grad[0])
    if reduction == 1:
        scale = scale / widen(totalWeight).reshape(-1)[0]
    result = np.zeros_like(rows)
    result[np.arange(rows.shape[0]), safe] = np.where(keep, scale, 0)
    store(out, result.reshape(out.shape))


# ---- convolution, pooling, embedding ----------------------------------------------------


def _pair(values: tuple[int, ...], default: int) -> tuple[int, int]:
    if not values:
        return (default, default)
    return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])


def _windows(x: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...],
             dilation: tuple[int, ...], out_size: tuple[int, ...]) -> Any:
    """(N, C, *out_size, *kernel) windows of a padded (N, C, *spatial) array."""
    n, c = x.shape[:2]
    spatial = x.strides[2:]
    return np.lib.stride_tricks.as_strided(
        x, (n, c, *out_size, *kernel),
        (x.strides[0], x.strides[1], *(s * k for s, k in zip(spatial, stride)),
         *(s * d for s, d in zip(spatial, dilation))),
        writeable=False)


def _pad_spatial(x: np.ndarray, pads: list[tuple[int, int]], value: float = 0.0) -> Any:
    """``x`` (N, C, *spatial) with each spatial dim padded by ``(before, after)``; a negative
    amount crops."""
    crop = tuple(slice(max(-b, 0), x.shape[2 + i] - max(-a, 0)) for i, (b, a) in enumerate(pads))
    x = x[(slice(None), slice(None), *crop)]
    widths = ((0, 0), (0, 0), *((max(b, 0), max(a, 0)) for b, a in pads))
    return np.pad(x, widths, constant_values=value)


def _c_div(a: int, b: int) -> int:
    """C's integer division (towards zero), as CANN's shape arithmetic does it."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b > 0) else -quotient


FORMAT_NAMES = {constant(f"ACL_FORMAT_{name}"): name for name in (
    "NCHW", "NHWC", "ND", "NC1HWC0", "FRACTAL_Z", "NC1HWC0_C04", "HWCN", "NDHWC", "FRACTAL_NZ",
    "NCDHW", "NDC1HWC0", "NC", "NCL", "FRACTAL_NZ_C0_16", "FRACTAL_NZ_C0_32", "FRACTAL_NZ_C0_2",
    "FRACTAL_NZ_C0_4", "FRACTAL_NZ_C0_8")} | {constant("ACL_FRACTAL_Z_3D"): "FRACTAL_Z_3D"}
NCL, NCHW, NCDHW, NDHWC, NHWC, ND, FRACTAL_Z = (constant(f"ACL_FORMAT_{name}") for name in (
    "NCL", "NCHW", "NCDHW", "NDHWC", "NHWC", "ND", "FRACTAL_Z"))
PARAM_NULLPTR = constant("ACLNN_ERR_PARAM_NULLPTR")


def _format_name(fmt: int) -> str:
    return FORMAT_NAMES.get(fmt, "UNDEFINED" if fmt < 0 else f"format {fmt}")


@dataclass(frozen=True)
class Layout:
    """A tensor read through its format's name, as CANN's convolution reads it (TensorMeta
    in ops-nn conv/convolution_forward/op_host/op_api/aclnn_convolution.cpp): N and C are the
    dims where the name has those letters (1 when it has none), the spatial dims follow N and C,
    or N alone when C is last."""

    n: int
    c: int
    spatial: tuple[int, ...]
    channel_last: bool

    @staticmethod
    def of(array: np.ndarray) -> Layout:
        name = _format_name(tensor_format(array))

        def letter(ch: str) -> int:
            index = name.find(ch)
            return int(array.shape[index]) if 0 <= index < array.ndim else 1

        last = name.find("C") == len(name) - 1
        start = 1 if last else 2
        return Layout(letter("N"), letter("C"), tuple(array.shape[start:start + array.ndim - 2]),
                      last)


def _conv_pads(padding: tuple[int, ...], rank: int, transposed: bool) -> list[tuple[int, int]]:
    """Each spatial dim's (before, after) padding: 1-d and 2-d convolutions (2-d transposed
    ones too) take one value per dim or two ([top, bottom, left, right] for 2-d)."""
    spatial = rank - 2
    if len(padding) == 2 * spatial and (rank == 3 and not transposed or rank == 4):
        return [(padding[2 * i], padding[2 * i + 1]) for i in range(spatial)]
    return [(padding[i], padding[i]) for i in range(spatial)]


def _conv_shape(input: Layout, weight: Layout, values: dict[str, Any]) -> tuple[int, ...]:
    """The output shape CANN infers: aclnnConvolution's output rule (aclnn_py.ops.outputs,
    ConvEngine::InferShape) over input and weight read through their formats, (N, C,
    spatial...), the result put back in input's layout."""
    def seen(layout: Layout) -> np.ndarray:
        return np.broadcast_to(np.empty((), np.float32), (layout.n, layout.c, *layout.spatial))

    n, channels, *sizes = output_shapes("aclnnConvolution", input=seen(input),
                                        weight=seen(weight), **values)["output"]
    if input.channel_last:
        return (n, *sizes, channels)
    return (n, channels, *sizes)


def _conv_check(input: np.ndarray, weight: np.ndarray, bias: Any, stride: tuple[int, ...],
                padding: tuple[int, ...], dilation: tuple[int, ...], transposed: bool,
                outputPadding: Any, groups: int, output: np.ndarray, cubeMathType: int) -> None:
    """aclnnConvolution's phase-1 checks, one group of rules after another (the first rule
    that fails decides the error): outputPadding given when transposed, the formats, bias's
    length, the lengths of the window's attributes, the kernel, the channels and groups, a
    transposed convolution's padding, the output."""
    # ops-nn conv/convolution_forward/op_host/op_api/aclnn_convolution.cpp CheckConvParams on
    # an Atlas A2 (DAV_2201): NullptrChecker, DimChecker, FormatChecker, ValueChecker,
    # ConvXdChecker. The rules have the dtypes, the ranks (3 to 5, one for input, weight and
    # output; bias 1-d), strides, dilations and groups positive, cubeMathType 0 to 4.
    if transposed and outputPadding is None:
        raise Refusal("outputPadding is NULL: a transposed convolution needs it", PARAM_NULLPTR)
    rank = input.ndim
    _conv_format_check(input, weight, bias, output, rank, transposed)
    x, w = Layout.of(input), Layout.of(weight)
    _conv_bias_check(bias, w, groups, transposed)
    _conv_attribute_lengths_check(stride, padding, dilation, outputPadding, rank, transposed)
    _conv_kernel_check(input, x, w, padding, dilation, rank, transposed)
    _conv_channels_check(x, w, stride, dilation, outputPadding, groups, transposed)
    if transposed and input.size and weight.size and output.size:
        _check_transposed_pads(w, padding, dilation, rank)
    _conv_output_check(input, weight, output, x, w,
                       {"stride": stride, "padding": padding, "dilation": dilation,
                        "transposed": transposed, "outputPadding": outputPadding,
                        "groups": groups})


def _conv_format_check(input: np.ndarray, weight: np.ndarray, bias: Any, output: np.ndarray,
                       rank: int, transposed: bool) -> None:
    """The formats: input's and output's one, bias's NCL, NCHW, NCDHW or ND, and input's,
    weight's and output's those of the rank (weight also FRACTAL_Z in a 2-d convolution that
    is not transposed)."""
    formats = {name: tensor_format(tensor) for name, tensor in
               (("input", input), ("weight", weight), ("output", output))}
    if formats["input"] != formats["output"]:
        raise ValueError(f"input has format {_format_name(formats['input'])} and output "
                         f"{_format_name(formats['output'])}: they must have the same format")
    if bias is not None and tensor_format(bias) not in (NCL, NCHW, NCDHW, ND):
        raise ValueError(f"bias has format {_format_name(tensor_format(bias))}; it must be "
                         "NCL, NCHW, NCDHW or ND")
    allowed = {3: (NCL,), 4: (NCHW,), 5: (NCDHW, NDHWC)}[rank]
    for name, fmt in formats.items():
        usable = allowed + ((FRACTAL_Z,) if name == "weight" and rank == 4 and not transposed
                            else ())
        if fmt not in usable:
            raise ValueError(f"{name} has format {_format_name(fmt)}; a {rank}-d convolution "
                             f"takes {' or '.join(_format_name(f) for f in usable)}")


def _conv_bias_check(bias: Any, weight: Layout, groups: int, transposed: bool) -> None:
    """bias, when given, holds one value per output channel: weight's N, or weight's C times
    groups when transposed."""
    channels = weight.c * groups if transposed else weight.n
    if bias is not None and bias.shape[0] != channels:
        raise ValueError(f"bias has shape [{bias.shape[0]}]; it must be [{channels}], the output "
                         "channels")


def _conv_attribute_lengths_check(stride: tuple[int, ...], padding: tuple[int, ...],
                                  dilation: tuple[int, ...], outputPadding: Any, rank: int,
                                  transposed: bool) -> None:
    """One stride, dilation and (when transposed) outputPadding value per spatial dim; one
    padding value per spatial dim, or two for 1-d and 2-d convolutions (2-d transposed ones
    too)."""
    spatial = rank - 2
    for name, values in (("stride", stride), ("dilation", dilation)):
        if len(values) != spatial:
            raise ValueError(f"{name} has {len(values)} values; a {rank}-d input needs {spatial}")
    two_sided = rank == 4 or (rank == 3 and not transposed)
    if len(padding) not in ((spatial, 2 * spatial) if two_sided else (spatial,)):
        raise ValueError(f"padding has {len(padding)} values; a {rank}-d "
                         f"{'transposed ' if transposed else ''}convolution takes {spatial}"
                         + (f" or {2 * spatial}" if two_sided else ""))
    if transposed and len(outputPadding) != spatial:
        raise ValueError(f"outputPadding has {len(outputPadding)} values; a {rank}-d input "
                         f"needs {spatial}")


def _conv_kernel_check(input: np.ndarray, x: Layout, w: Layout, padding: tuple[int, ...],
                       dilation: tuple[int, ...], rank: int, transposed: bool) -> None:
    """weight's spatial dims are positive, and (not transposed, input not empty) its dilated
    kernel fits in each padded spatial dim of input."""
    if any(k <= 0 for k in w.spatial):
        raise ValueError(f"weight's spatial dims {list(w.spatial)} must be greater than 0")
    pads = _conv_pads(padding, rank, transposed)
    if not transposed and input.size:
        for i, (size, k) in enumerate(zip(x.spatial, w.spatial)):
            if size + pads[i][0] + pads[i][1] - dilation[i] * (k - 1) - 1 < 0:
                raise ValueError(f"input's spatial dim {i} ({size}, padded by {pads[i]}) is "
                                 f"smaller than weight's dilated kernel")


def _conv_channels_check(x: Layout, w: Layout, stride: tuple[int, ...],
                         dilation: tuple[int, ...], outputPadding: Any, groups: int,
                         transposed: bool) -> None:
    """The channels and groups: weight's N is input's C when transposed (then each
    outputPadding value less than its stride or its dilation, and not negative), else
    weight's C times groups is input's C; weight's N divisible by groups; input's C not 0
    when transposed."""
    if transposed:
        if w.n != x.c:
            raise ValueError(f"weight's N ({w.n}) must be input's C ({x.c}) when transposed")
        for i, extra in enumerate(outputPadding):
            if extra >= stride[i] and extra >= dilation[i]:
                raise ValueError(f"outputPadding[{i}] ({extra}) must be less than stride[{i}] "
                                 f"or dilation[{i}]")
            if extra < 0:
                raise ValueError(f"outputPadding[{i}] ({extra}) must not be negative")
    elif w.c * groups != x.c:
        raise ValueError(f"input's C ({x.c}) must be weight's C ({w.c}) times groups ({groups})")
    if w.n % groups:
        raise ValueError(f"weight's N ({w.n}) must be divisible by groups ({groups})")
    if transposed and x.c == 0:
        raise ValueError("input's C must not be 0 when transposed")


def _conv_output_check(input: np.ndarray, weight: np.ndarray, output: np.ndarray, x: Layout,
                       w: Layout, values: dict[str, Any]) -> None:
    """output has the shape CANN infers (:func:`_conv_shape` of the window ``values``), and
    is empty when input or weight is."""
    shape = _conv_shape(x, w, values)
    if output.shape != shape:
        raise ValueError(f"output has shape {list(output.shape)}; it must be {list(shape)}")
    if (input.size == 0 or weight.size == 0) and output.size:
        raise ValueError("input or weight is empty: output must be empty too")


def _check_transposed_pads(weight: Layout, padding: tuple[int, ...],
                           dilation: tuple[int, ...], rank: int) -> None:
    """A transposed convolution's dilated kernel exceeds its padding by at most 255 (and by
    at least 0 in 3-d): aclnn_convolution.cpp GetPadBinaryValidFlag, which reads the L, or
    the H and W, dims with the padding at index 0 and 1 (1 and 2 in 3-d)."""
    limit = 255
    dims = range(rank - 2) if rank < 5 else range(1, 3)
    for i in dims:
        pad = padding[i] if len(padding) > i else padding[0]
        excess = (weight.spatial[i] - 1) * dilation[i] - pad
        if excess > limit or (rank == 5 and excess < 0):
            low = "0 <= " if rank == 5 else ""
            raise ValueError(f"transposed: {low}(weight's spatial dim {i} - 1) * dilation[{i}]"
                             f" - padding[{i}] <= {limit} does not hold ({excess})")


def _convolve(x: np.ndarray, w: np.ndarray, stride: tuple[int, ...], dilation: tuple[int, ...],
              pads: list[tuple[int, int]], groups: int) -> Any:
    """The cross-correlation of ``x`` (N, C, *spatial) with ``w`` (Cout, C / groups, *kernel)."""
    x = _pad_spatial(x, pads)
    kernel = w.shape[2:]
    sizes = tuple((x.shape[2 + i] - dilation[i] * (k - 1) - 1) // stride[i] + 1
                  for i, k in enumerate(kernel))
    letters = "xyz"[:len(kernel)], "ijk"[:len(kernel)]
    subscripts = f"nc{letters[0]}{letters[1]},oc{letters[1]}->no{letters[0]}"
    cout, cin = w.shape[0] // groups, w.shape[1]
    result = np.empty((x.shape[0], w.shape[0], *sizes), x.dtype)
    for g in range(groups):
        part = np.ascontiguousarray(x[:, g * cin:(g + 1) * cin])
        cols = _windows(part, kernel, stride, dilation, sizes)
        result[:, g * cout:(g + 1) * cout] = np.einsum(
            subscripts, cols, w[g * cout:(g + 1) * cout], optimize=True)
    return result


def _convolve_transposed(x: np.ndarray, w: np.ndarray, stride: tuple[int, ...],
                         dilation: tuple[int, ...], pads: list[tuple[int, int]],
                         outputPadding: tuple[int, ...], groups: int) -> Any:
    """The transposed convolution of ``x`` (N, C, *spatial) by ``w`` (C, Cout / groups,
    *kernel): the convolution of ``x`` spread by the stride with the flipped kernel."""
    kernel = w.shape[2:]
    spread = np.zeros((*x.shape[:2], *((n - 1) * s + 1 for n, s in zip(x.shape[2:], stride))),
                      x.dtype)
    spread[(slice(None), slice(None), *(slice(None, None, s) for s in stride))] = x
    cin = w.shape[0] // groups
    flipped = w[(slice(None), slice(None), *(slice(None, None, -1) for _ in kernel))]
    w_conv = np.concatenate([np.swapaxes(flipped[g * cin:(g + 1) * cin], 0, 1)
                             for g in range(groups)])
    outer = [(dilation[i] * (k - 1) - pads[i][0], dilation[i] * (k - 1) - pads[i][1]
              + outputPadding[i]) for i, k in enumerate(kernel)]
    return _convolve(spread, w_conv, (1,) * len(kernel), dilation, outer, groups)


def _channels_first(array: np.ndarray) -> Any:
    return np.moveaxis(array, -1, 1) if Layout.of(array).channel_last else array


@builtin("aclnnConvolution", dtypes=FLOATS, check=_conv_check)
def convolution(input: np.ndarray, weight: np.ndarray, bias: Any, stride: tuple[int, ...],
                padding: tuple[int, ...], dilation: tuple[int, ...], transposed: bool,
                outputPadding: Any, groups: int, output: np.ndarray,
                cubeMathType: int) -> None:
    # 1-, 2- and 3-d, transposed or not, with or without bias (NULL: 无bias场景), grouped,
    # dilated, padded on each side (negative pads crop); NDHWC tensors are channel-last.
    if output.size == 0:
        return
    if tensor_format(weight) == FRACTAL_Z:
        raise Refusal("weight is FRACTAL_Z: the emulator computes NCHW weights only")
    x, w = widen(_channels_first(input)), widen(_channels_first(weight))
    pads = _conv_pads(padding, input.ndim, transposed)
    if transposed:
        result = _convolve_transposed(x, w, stride, dilation, pads, outputPadding, groups)
    else:
        result = _convolve(x, w, stride, dilation, pads, groups)
    if bias is not None:
        result = result + widen(bias).reshape((1, -1) + (1,) * (result.ndim - 2))
    store(output, np.moveaxis(result, 1, -1) if Layout.of(output).channel_last else result)


def _conv_backward_check(gradOutput: np.ndarray, input: np.ndarray, weight: np.ndarray,
                         biasSizes: Any, stride: tuple[int, ...], padding: tuple[int, ...],
                         dilation: tuple[int, ...], transposed: bool, outputPadding: Any,
                         groups: int, outputMask: Any, cubeMathType: int, gradInput: Any,
                         gradWeight: Any, gradBias: Any) -> None:
    """The forward's checks on input, weight and the window (aclnnConvolution), gradOutput
    the forward's output shape, and each gradient outputMask asks for of its tensor's shape
    (ops-nn conv/convolution_backward/docs/aclnnConvolutionBackward.md)."""
    for name, tensor in (("gradOutput", gradOutput), ("input", input), ("weight", weight)):
        if not 3 <= tensor.ndim <= 5:
            raise ValueError(f"{name} has {tensor.ndim} dimensions; a convolution's tensors "
                             "have 3 to 5")
    for name, values in (("stride", stride), ("dilation", dilation)):
        if any(value <= 0 for value in values):
            raise ValueError(f"{name} {list(values)} must be positive")
    if groups <= 0:
        raise ValueError(f"groups ({groups}) must be positive")
    _conv_check(input, weight, None, stride, padding, dilation, transposed, outputPadding,
                groups, gradOutput, cubeMathType)
    wanted = _conv_shape(Layout.of(input), Layout.of(weight),
                         {"stride": stride, "padding": padding, "dilation": dilation,
                          "transposed": transposed, "outputPadding": outputPadding,
                          "groups": groups})
    if gradOutput.shape != wanted:
        raise ValueError(f"gradOutput has shape {list(gradOutput.shape)}; the convolution's "
                         f"output is {list(wanted)}")
    for name, grad, like in (("gradInput", gradInput, input.shape),
                             ("gradWeight", gradWeight, weight.shape),
                             ("gradBias", gradBias, (Layout.of(weight).c * groups if transposed
                                else Layout.of(weight).n,))):
        index = ("gradInput", "gradWeight", "gradBias").index(name)
        if outputMask[index] and grad is None:  # convolution_backward_checker.cpp CheckNotNull
            _refuse_null(name, f"outputMask[{index}] asks for it")
        if outputMask[index] and grad is not None and grad.shape != like:
            raise ValueError(f"{name} has shape {list(grad.shape)}; it must be {list(like)}")


def _scatter_windows(contributions: np.ndarray, padded_shape: tuple[int, ...],
                     stride: tuple[int, ...], dilation: tuple[int, ...]) -> Any:
    """The sum, into a (N, C, *padded spatial) array, of (N, C, *out, *kernel) window
    contributions: the adjoint of :func:`_windows`."""
    spatial = len(stride)
    out = contributions.shape[2:2 + spatial]
    kernel = contributions.shape[2 + spatial:]
    total = np.zeros(padded_shape, contributions.dtype)
    for position in np.ndindex(*kernel):
        target = tuple(slice(p * d, p * d + s * (o - 1) + 1, s)
                       for p, d, s, o in zip(position, dilation, stride, out))
        total[(slice(None), slice(None), *target)] += contributions[(..., *position)]
    return total


@builtin("aclnnConvolutionBackward", dtypes=FLOATS, check=_conv_backward_check)
def convolution_backward(gradOutput: np.ndarray, input: np.ndarray, weight: np.ndarray,
                         biasSizes: Any, stride: tuple[int, ...], padding: tuple[int, ...],
                         dilation: tuple[int, ...], transposed: bool, outputPadding: Any,
                         groups: int, outputMask: Any, cubeMathType: int, gradInput: Any,
                         gradWeight: Any, gradBias: Any) -> None:
    # The doc's formulas: gradInput the transposed convolution of gradOutput by weight,
    # gradWeight the correlation of the padded input with gradOutput, gradBias gradOutput
    # summed over the batch and the spatial dims; per group, NCHW-like layouts.
    g = widen(gradOutput)
    spatial = input.ndim - 2
    axes = (0, *range(2, 2 + spatial))
    if outputMask[2] and gradBias is not None:
        store(gradBias, g.sum(axis=axes))
    if not (outputMask[0] or outputMask[1]) or g.size == 0:
        for wanted, grad in ((outputMask[0], gradInput), (outputMask[1], gradWeight)):
            if wanted and grad is not None:
                store(grad, np.zeros(grad.shape))
        return
    x, w = widen(input), widen(weight)
    pads = _conv_pads(padding, input.ndim, transposed)
    if transposed:
        # y = the transposed convolution of x by w: x's gradient is the convolution of g by w,
        # w's the weight gradient of that convolution with g as its input and x its output's
        if outputMask[0] and gradInput is not None:
            store(gradInput, _convolve(g, w, stride, dilation, pads, groups)
                  [(..., *(slice(0, n) for n in x.shape[2:]))])
        if outputMask[1] and gradWeight is not None:
            store(gradWeight, _conv_gradients(g, x, w.shape, stride, dilation, pads, groups,
                                              False)[1])
        return
    grad_x, grad_w = _conv_gradients(x, g, w.shape, stride, dilation, pads, groups,
                                     bool(outputMask[0]), w if outputMask[0] else None)
    if outputMask[1] and gradWeight is not None:
        store(gradWeight, grad_w)
    if outputMask[0] and gradInput is not None:
        store(gradInput, grad_x)


def _conv_gradients(x: np.ndarray, g: np.ndarray, weight_shape: tuple[int, ...],
                    stride: tuple[int, ...], dilation: tuple[int, ...],
                    pads: list[tuple[int, int]], groups: int, want_input: bool,
                    w: np.ndarray | None = None) -> tuple[Any, Any]:
    """The gradients of the convolution of ``x`` (padded by ``pads``) by a weight of
    ``weight_shape`` whose output's gradient is ``g``: x's (when ``want_input``, from ``w``)
    and the weight's, per group, in float64."""
    padded = _pad_spatial(x, pads)
    spatial = x.ndim - 2
    out_size = g.shape[2:]
    kernel = weight_shape[2:]
    cin, cout = weight_shape[1], weight_shape[0] // groups
    letters = "xyz"[:spatial], "ijk"[:spatial]
    grad_padded = np.zeros(padded.shape, np.float64)
    grad_weight = np.zeros(weight_shape, np.float64)
    for group in range(groups):
        inputs = slice(group * cin, (group + 1) * cin)
        outputs = slice(group * cout, (group + 1) * cout)
        cols = _windows(np.ascontiguousarray(padded[:, inputs]), kernel, stride, dilation,
                        out_size)
        grad_weight[outputs] = np.einsum(
            f"nc{letters[0]}{letters[1]},no{letters[0]}->oc{letters[1]}", cols, g[:, outputs],
            optimize=True)
        if want_input and w is not None:
            contributions = np.einsum(f"no{letters[0]},oc{letters[1]}->nc{letters[0]}"
                                      f"{letters[1]}", g[:, outputs], w[outputs], optimize=True)
            grad_padded[:, inputs] = _scatter_windows(
                contributions, (x.shape[0], cin, *padded.shape[2:]), stride, dilation)
    if not want_input:
        return None, grad_weight
    # undo the padding (a negative pad cropped the input: those elements get 0)
    grad_x = np.zeros(x.shape, np.float64)
    inner = tuple(slice(max(b, 0), padded.shape[2 + i] - max(a, 0))
                  for i, (b, a) in enumerate(pads))
    where = tuple(slice(max(-b, 0), x.shape[2 + i] - max(-a, 0)) for i, (b, a) in enumerate(pads))
    grad_x[(slice(None), slice(None), *where)] = grad_padded[(slice(None), slice(None), *inner)]
    return grad_x, grad_weight


# ---- pooling ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pool:
    """A pooling's window over its spatial dims (2 for the 2-d pools, 3 for the 3-d ones):
    kernel, stride (the kernel's when none), padding, dilation."""

    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...] = (1, 1)

    @staticmethod
    def of(kernel: tuple[int, ...], stride: tuple[int, ...], padding: tuple[int, ...],
           dilation: tuple[int, ...] = (1,)) -> Pool:
        kh, kw = _pair(kernel, 1)
        return Pool((kh, kw), _pair(stride, kh) if stride else (kh, kw), _pair(padding, 0),
                    _pair(dilation, 1))


def _planes(x: np.ndarray) -> Any:
    """A 3-d (C, H, W) or 4-d (N, C, H, W) array as (N, C, H, W)."""
    return x if x.ndim == 4 else x[None]


def _pool_pads(spatial: tuple[int, ...], pool: Pool, out: tuple[int, ...]
               ) -> list[tuple[int, int]]:
    """(before, after) per spatial dim: the padding before, and after as far as the windows
    reach (ceil mode's last window may pass the padding)."""
    reach = [(out[i] - 1) * pool.stride[i] + pool.dilation[i] * (pool.kernel[i] - 1) + 1
             for i in range(len(pool.kernel))]
    return [(pool.padding[i], max(reach[i] - spatial[i] - pool.padding[i], 0))
            for i in range(len(pool.kernel))]


def _pool_windows(x: np.ndarray, pool: Pool, out_hw: tuple[int, ...], value: float) -> Any:
    """(N, C, *out, *kernel) windows of (N, C, *spatial), padded with ``value`` on every side
    as far as the windows reach."""
    padded = _pad_spatial(x, _pool_pads(x.shape[2:], pool, out_hw), value)
    return _windows(padded, pool.kernel, pool.stride, pool.dilation, out_hw)


def _pool_sums(x: np.ndarray, pool: Pool, out: tuple[int, ...]) -> Any:
    """The sums of the (N, C, *out) windows of (N, C, *spatial), zero-padded: dim by dim, each
    a sum of the kernel's strided slices (the same sums as :func:`_pool_windows`'s, in fewer
    passes)."""
    total = _pad_spatial(x, _pool_pads(x.shape[2:], pool, out), 0.0)
    for i in range(len(pool.kernel)):
        index: list[slice] = [slice(None)] * total.ndim
        span = pool.stride[i] * (out[i] - 1) + 1
        acc = None
        for k in range(pool.kernel[i]):
            start = k * pool.dilation[i]
            index[2 + i] = slice(start, start + span, pool.stride[i])
            part = total[tuple(index)]
            acc = np.array(part) if acc is None else np.add(acc, part, out=acc)
        total = acc
    return total


def _pool_scatter(contributions: np.ndarray, shape: tuple[int, ...], pool: Pool) -> Any:
    """The adjoint of :func:`_pool_windows`: (N, C, *out, *kernel) contributions summed into
    an (N, C, *spatial) array of ``shape`` (what lands in the padding dropped)."""
    rank = len(pool.kernel)
    pads = _pool_pads(shape[2:], pool, contributions.shape[2:2 + rank])
    padded = shape[:2] + tuple(n + b + a for n, (b, a) in zip(shape[2:], pads))
    total = _scatter_windows(contributions, padded, pool.stride, pool.dilation)
    return total[(slice(None), slice(None),
                  *(slice(b, b + n) for n, (b, _) in zip(shape[2:], pads)))]


def _avg_divisor(spatial: tuple[int, ...], pool: Pool, out: tuple[int, ...],
                 countIncludePad: bool, divisorOverride: int) -> Any:
    """Each window's divisor, as PyTorch's avg_pool2d and avg_pool3d take it: divisorOverride
    when not 0, else the window's elements within the padded input (countIncludePad) or
    within the input."""
    if divisorOverride:
        return float(divisorOverride)
    ones = np.ones((1, 1) + tuple(spatial), np.float32)
    if countIncludePad:
        ones = _pad_spatial(ones, [(p, p) for p in pool.padding], 1.0)
        pool = Pool(pool.kernel, pool.stride, (0,) * len(pool.kernel), pool.dilation)
    return _pool_windows(ones, pool, out, 0.0).sum(axis=tuple(range(-len(pool.kernel), 0)))


def _max_pool_shape(self: np.ndarray, pool: Pool, ceilMode: bool, channel_last: bool
                    ) -> tuple[int, ...]:
    planes, height, width = (self.shape[-1], *self.shape[-3:-1]) if channel_last \
        else self.shape[-3:]
    if 0 in (planes, height, width):
        raise ValueError(f"self has shape {list(self.shape)}: only its batch may be 0")
    # aclnnMaxPool2dWithIndices's output rule (PoolingOutShape), over self read as NCHW
    seen = np.broadcast_to(np.empty((), np.float32), (*self.shape[:-3], planes, height, width))
    oh, ow = output_shapes("aclnnMaxPool2dWithIndices", self=seen, kernelSize=pool.kernel,
                           stride=pool.stride, padding=pool.padding, dilation=pool.dilation,
                           ceilMode=ceilMode)["out"][-2:]
    if oh <= 0 or ow <= 0:
        raise ValueError(f"self {list(self.shape)} pools to {oh}x{ow}: it must be at least 1x1")
    batch = self.shape[:-3]
    return (*batch, oh, ow, planes) if channel_last else (*batch, planes, oh, ow)


def _max_pool_check(self: np.ndarray, kernelSize: tuple[int, ...], stride: tuple[int, ...],
                    padding: tuple[int, ...], dilation: tuple[int, ...], ceilMode: bool,
                    out: np.ndarray, indices: np.ndarray) -> None:
    # ops-nn pooling/max_pool3d_with_argmax_v2/op_api/aclnn_max_pool2d_with_indices.cpp
    # CheckParams on an Atlas A2 (not regbase, no mask): the rules have the dtypes (self's is
    # out's), the ranks, self's format not private, the lengths of kernelSize, stride,
    # padding and dilation, kernelSize and stride positive, dilation 1, indices' shape out's.
    if tensor_format(self) != tensor_format(out):
        raise ValueError(f"self has format {_format_name(tensor_format(self))} and out "
                         f"{_format_name(tensor_format(out))}: they must have the same format")
    pool = Pool.of(kernelSize, stride, padding, dilation)
    for i, name in enumerate(("H", "W")):
        if not 0 <= pool.padding[i] <= pool.kernel[i] // 2:
            raise ValueError(f"padding's {name} ({pool.padding[i]}) must be in [0, kernel's "
                             f"{name} // 2 = {pool.kernel[i] // 2}]")
    channel_last = tensor_format(self) == NHWC
    wanted = _max_pool_shape(self, pool, ceilMode, channel_last)
    if out.shape != wanted:
        raise ValueError(f"out has shape {list(out.shape)}; it must be {list(wanted)}")
    if channel_last:  # the kernel reads NCHW: its shape must be out's as well (CheckReduceOutShape)
        computed = _max_pool_shape(self, pool, ceilMode, False)
        if out.shape != computed and not (out.size == 1 and int(np.prod(computed)) == 1):
            raise ValueError(f"out has shape {list(out.shape)}; the kernel, reading self as "
                             f"NCHW, makes {list(computed)}")


@builtin("aclnnMaxPool2dWithIndices", dtypes=FLOATS, check=_max_pool_check)
def max_pool2d_with_indices(self: np.ndarray, kernelSize: tuple[int, ...],
                            stride: tuple[int, ...], padding: tuple[int, ...],
                            dilation: tuple[int, ...], ceilMode: bool, out: np.ndarray,
                            indices: np.ndarray) -> None:
    # Indices count within each plane (h * W + w), as PyTorch's CPU kernel picks them: the
    # padding never wins, the last NaN does, else the first maximum (so a window of -inf
    # gives its first element inside self).
    if self.size == 0 or out.size == 0:
        return
    x = _planes(widen(self))
    pool = Pool.of(kernelSize, stride, padding, dilation)
    values, best = _max_pool_best(x, pool, out.shape[-2:])
    store(out, values.reshape(out.shape))
    store(indices, _plane_index(pool, out.shape[-2:], best, x.shape[2:]).reshape(indices.shape))


def _max_pool_best(x: np.ndarray, pool: Pool, out_hw: tuple[int, ...]) -> tuple[Any, Any]:
    """The windows' maxima and, per output element, the window position (row-major in the
    kernel) that holds it, as MaxPool2dWithIndices picks it: the padding never wins, the last
    NaN does, else the first maximum. Any number of spatial dims."""
    rank = len(pool.kernel)
    count = int(np.prod(pool.kernel))
    out_hw = tuple(out_hw)
    flat = _pool_windows(x, pool, out_hw, -np.inf).reshape(x.shape[:2] + out_hw + (count,))
    inside = np.ones(out_hw + tuple(pool.kernel), bool)
    for i in range(rank):
        place = (np.arange(out_hw[i])[:, None] * pool.stride[i] - pool.padding[i]
                 + np.arange(pool.kernel[i])[None, :] * pool.dilation[i])   # (out_i, k_i)
        shape = [1] * (2 * rank)
        shape[i], shape[rank + i] = out_hw[i], pool.kernel[i]
        inside = inside & ((place >= 0) & (place < x.shape[2 + i])).reshape(shape)
    inside = inside.reshape(out_hw + (count,))
    nan = np.isnan(flat)
    top = np.max(np.where(nan, -np.inf, flat), axis=-1, keepdims=True)
    best = np.argmax((flat == top) & inside, axis=-1)
    any_nan = nan.any(axis=-1)
    if any_nan.any():
        last_nan = count - 1 - np.argmax(nan[..., ::-1], axis=-1)
        best = np.where(any_nan, last_nan, best)
    return np.take_along_axis(flat, best[..., None], -1)[..., 0], best


def _window_position(pool: Pool, out_hw: tuple[int, ...], best: Any) -> tuple[Any, ...]:
    """The input coordinates (one array per spatial dim) of each output element's window
    position ``best``."""
    rank = len(pool.kernel)
    offsets = np.unravel_index(best, tuple(pool.kernel))
    coordinates = []
    for i in range(rank):
        shape = [1] * rank
        shape[i] = out_hw[i]
        start = (np.arange(out_hw[i]) * pool.stride[i] - pool.padding[i]).reshape(shape)
        coordinates.append(start + offsets[i] * pool.dilation[i])
    return tuple(coordinates)


def _plane_index(pool: Pool, out_hw: tuple[int, ...], best: Any,
                 spatial: tuple[int, ...]) -> Any:
    """Each output element's input element as an index within its plane (h W + w, or
    d H W + h W + w), as PyTorch's max pools give their indices."""
    index = np.zeros(best.shape, np.int64)
    for coordinate, extent in zip(_window_position(pool, out_hw, best), spatial):
        index = index * extent + coordinate
    return index


def _max_pool_mask_check(self: np.ndarray, kernelSize: tuple[int, ...], stride: tuple[int, ...],
                         padding: tuple[int, ...], dilation: tuple[int, ...], ceilMode: bool,
                         out: np.ndarray, indices: np.ndarray) -> None:
    """As aclnnMaxPool2dWithIndices for self, the window and out on an Atlas A2 (ops-nn
    pooling/max_pool3d_grad_with_argmax/op_api/aclnn_max_pool2d_with_indices_backward.cpp
    CheckShape, which the forward shares; the rules refuse private formats): kernel and stride
    positive, padding in [0, kernel // 2], dilation 1; indices is the mask, INT8 of the shape
    the doc derives."""
    pool = Pool.of(kernelSize, stride, padding, dilation)
    for name, extents in (("kernelSize", pool.kernel), ("stride", pool.stride)):
        if min(extents) <= 0:
            raise ValueError(f"{name} {list(extents)} must be greater than 0")
    if pool.dilation != (1, 1):
        raise ValueError(f"dilation {list(pool.dilation)} must be 1")
    for i, name in enumerate(("H", "W")):
        if not 0 <= pool.padding[i] <= pool.kernel[i] // 2:
            raise ValueError(f"padding's {name} ({pool.padding[i]}) must be in [0, kernel's "
                             f"{name} // 2 = {pool.kernel[i] // 2}]")
    _max_pool_shape(self, pool, ceilMode, False)  # (its refusals)
    window = {"self": self, "kernelSize": kernelSize, "stride": stride, "padding": padding,
              "dilation": dilation, "ceilMode": ceilMode}
    check_output_shapes("aclnnMaxPool2dWithMask", window, {"out": out})
    check_output_shapes("aclnnMaxPool2dWithMask", window, {"indices": indices},
                        "the mask of this pooling ([N, C, kH kW, (ceil(OH OW / 16) + 1) 32]) "
                        "is")


@builtin("aclnnMaxPool2dWithMask", dtypes={"self": FLOATS, "out": FLOATS,
                                            "indices": MASK},
         check=_max_pool_mask_check)
def max_pool2d_with_mask(self: np.ndarray, kernelSize: tuple[int, ...], stride: tuple[int, ...],
                         padding: tuple[int, ...], dilation: tuple[int, ...], ceilMode: bool,
                         out: np.ndarray, indices: np.ndarray) -> None:
    # The maxima as MaxPool2dWithIndices; the mask (its bits CANN's own: "为自定义mask值")
    # here holds, in row k of an output plane's kH kW rows, bit j (little-endian in its
    # bytes) set when output element j took window position k. Only
    # aclnnMaxPool2dWithMaskBackward reads it.
    if out.size == 0:
        return
    x = _planes(widen(self))
    pool = Pool.of(kernelSize, stride, padding, dilation)
    out_hw = out.shape[-2:]
    values, best = _max_pool_best(x, pool, out_hw)
    store(out, values.reshape(out.shape))
    windows = pool.kernel[0] * pool.kernel[1]
    chosen = best.reshape(*best.shape[:2], -1)[:, :, None, :] == \
        np.arange(windows)[None, None, :, None]                      # (N, C, kHkW, OH OW)
    bits = np.packbits(chosen, axis=-1, bitorder="little")
    mask = np.zeros(x.shape[:2] + (windows, indices.shape[-1]), np.uint8)
    mask[..., :bits.shape[-1]] = bits
    store(indices, mask.view(np.int8).reshape(indices.shape))


def _max_pool_mask_backward_check(gradOutput: np.ndarray, self: np.ndarray, indices: np.ndarray,
                                  kernelSize: tuple[int, ...], stride: tuple[int, ...],
                                  padding: tuple[int, ...], dilation: tuple[int, ...],
                                  ceilMode: bool, gradInput: np.ndarray) -> None:
    """gradOutput the forward's out shape, indices its mask, gradInput self's shape; gradOutput
    and gradInput of self's dtype (OP_CHECK_DTYPE_NOT_SAME) and format."""
    for name, tensor in (("gradOutput", gradOutput), ("gradInput", gradInput)):
        if tensor.dtype != self.dtype:
            raise ValueError(f"{name} has dtype {tensor.dtype.name} and self "
                             f"{self.dtype.name}: they must be the same")
        if tensor_format(tensor) != tensor_format(self):
            raise ValueError(f"{name} has format {_format_name(tensor_format(tensor))} and self "
                             f"{_format_name(tensor_format(self))}: they must be the same")
    _max_pool_mask_check(self, kernelSize, stride, padding, dilation, ceilMode, gradOutput,
                         indices)
    if gradInput.shape != self.shape:
        raise ValueError(f"gradInput has shape {list(gradInput.shape)}; it must be self's, "
                         f"{list(self.shape)}")


@builtin("aclnnMaxPool2dWithMaskBackward", dtypes={"gradOutput": FLOATS, "self": FLOATS,
                                                    "indices": MASK, "gradInput": FLOATS},
         check=_max_pool_mask_backward_check)
def max_pool2d_with_mask_backward(gradOutput: np.ndarray, self: np.ndarray, indices: np.ndarray,
                                  kernelSize: tuple[int, ...], stride: tuple[int, ...],
                                  padding: tuple[int, ...], dilation: tuple[int, ...],
                                  ceilMode: bool, gradInput: np.ndarray) -> None:
    # each output element's gradient goes to the input element its mask bit names, summed
    # where windows overlap (ops-nn pooling/max_pool3d_grad_with_argmax/docs/
    # aclnnMaxPool2dWithMaskBackward.md)
    if gradInput.size == 0:
        return
    pool = Pool.of(kernelSize, stride, padding, dilation)
    grad = _planes(widen(gradOutput))
    out_hw = grad.shape[-2:]
    count = out_hw[0] * out_hw[1]
    windows = pool.kernel[0] * pool.kernel[1]
    mask = _planes(indices).reshape(*grad.shape[:2], windows, -1).view(np.uint8)
    chosen = np.unpackbits(mask, axis=-1, count=count, bitorder="little").astype(bool)
    best = np.argmax(chosen, axis=2).reshape(*grad.shape[:2], *out_hw)
    r, c = _window_position(pool, out_hw, best)
    planes = _planes(self).shape
    result = np.zeros(planes[:2] + (planes[2] * planes[3],), np.float64)
    flat = (r * planes[3] + c).reshape(*grad.shape[:2], -1)
    for n in range(grad.shape[0]):
        for ch in range(grad.shape[1]):
            np.add.at(result[n, ch], flat[n, ch], grad[n, ch].reshape(-1))
    store(gradInput, result.reshape(gradInput.shape))


def _avg_pool_size(size: int, kernel: int, pad: int, stride: int, ceil: bool) -> int:
    """aclnn_avgpool2d.cpp PoolingOutShape (C's integer division)."""
    out = _c_div(size + 2 * pad - kernel + (stride - 1 if ceil else 0), stride) + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _avg_pool_check(self: np.ndarray, kernelSize: tuple[int, ...], strides: tuple[int, ...],
                    paddings: tuple[int, ...], ceilMode: bool, countIncludePad: bool,
                    divisorOverride: int, cubeMathType: int, out: np.ndarray) -> None:
    # ops-nn pooling/avg_pool3_d/op_api/aclnn_avgpool2d.cpp CheckParams on an Atlas A2: the
    # rules have the dtypes (self's is out's), NCHW or NCL, the ranks (3 or 4, one for both),
    # the values and lengths of kernelSize, strides and paddings, cubeMathType 0 to 4.
    wanted = NCHW if self.ndim == 4 else NCL
    for name, tensor in (("self", self), ("out", out)):
        if tensor_format(tensor) != wanted:
            raise ValueError(f"{name} has format {_format_name(tensor_format(tensor))}; a "
                             f"{self.ndim}-d self and its out must be {_format_name(wanted)}")
    planes, height, width = self.shape[-3:]
    if 0 in (planes, height, width):
        raise ValueError(f"self has shape {list(self.shape)}: only its batch may be 0")
    pool = Pool.of(kernelSize, strides, paddings)
    for i, name in enumerate(("H", "W")):
        if pool.kernel[i] < 2 * pool.padding[i]:
            raise ValueError(f"padding's {name} ({pool.padding[i]}) must be at most half "
                             f"kernel's {name} ({pool.kernel[i]})")
    values = {"self": self, "kernelSize": kernelSize, "strides": strides,
              "paddings": paddings, "ceilMode": ceilMode}
    oh, ow = output_shapes("aclnnAvgPool2d", **values)["out"][-2:]
    if oh <= 0 or ow <= 0:
        raise ValueError(f"self {list(self.shape)} pools to {oh}x{ow}: it must be at least 1x1")
    check_output_shapes("aclnnAvgPool2d", values, {"out": out})
    if self.size and out.size and self.dtype == np.float32 and cubeMathType not in (0, 2) \
            and _avg_pool_uses_cube(planes, height, width, pool, ceilMode, divisorOverride):
        raise ValueError(f"cubeMathType {cubeMathType} cannot pool float32 on the cube unit "
                         "here: it takes 0 (KEEP_DTYPE) or 2 (USE_FP16)")


def _avg_pool_uses_cube(planes: int, height: int, width: int, pool: Pool, ceil: bool,
                        divisor: int) -> bool:
    """Whether aclnnAvgPool2d on an Atlas A2 pools a non-empty self on the cube unit (the
    global pooling, or the 2-d AvgPool): there ProcessDataTypeConvert takes float32 only with
    cubeMathType 0 or 2; the 3-d path it takes otherwise does not ask (aclnn_avgpool2d.cpp
    CheckGlobalPool, CheckNeedChangeTo3D, CheckAvgPool; an empty self returns before)."""
    (kh, kw), (ph, pw) = pool.kernel, pool.padding
    if (height, width) == (kh, kw) and ph == pw == 0:
        return True
    supported = kh * kw <= 255 or (kh <= 20 and kw <= 20)
    usable = supported and kh <= 255 and kw <= 255 and -255 <= divisor <= 255
    long_strip = width // height >= 2 or height // width >= 2
    return not long_strip and usable and not ceil and planes < 65536


@builtin("aclnnAvgPool2d", dtypes=FLOATS, check=_avg_pool_check)
def avg_pool2d(self: np.ndarray, kernelSize: tuple[int, ...], strides: tuple[int, ...],
               paddings: tuple[int, ...], ceilMode: bool, countIncludePad: bool,
               divisorOverride: int, cubeMathType: int, out: np.ndarray) -> None:
    # The divisor: divisorOverride when not 0, else the window's elements within the padded
    # self (countIncludePad) or within self, as PyTorch's avg_pool2d.
    if self.size == 0 or out.size == 0:
        return
    x = _planes(widen(self))
    pool = Pool.of(kernelSize, strides, paddings)
    out_hw = (out.shape[-2], out.shape[-1])
    sums = _pool_windows(x, pool, out_hw, 0.0).sum(axis=(-2, -1))
    divisor = _avg_divisor(x.shape[2:], pool, out_hw, countIncludePad, divisorOverride)
    store(out, (sums / divisor).reshape(out.shape))


INDEX_DTYPES = Dtypes(("int32", "int64"))


def _embedding_check(weight: np.ndarray, indices: np.ndarray, out: np.ndarray) -> None:
    """ops-nn index/embedding/op_api/aclnn_embedding.cpp: indices int32 or int64, out of
    weight's dtype and of indices' shape then one more dimension (weight's rows' length)."""
    if indices.dtype not in INDEX_DTYPES:
        raise ValueError(f"indices has dtype {indices.dtype.name}: it must be int32 or int64")
    if out.dtype != weight.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}, weight {weight.dtype.name}: they "
                         "must be equal")
    if weight.ndim != 2:
        raise ValueError(f"weight must be 2-d, got {weight.ndim}-d")
    check_output_shapes("aclnnEmbedding", {"weight": weight, "indices": indices}, {"out": out},
                        f"it must be indices' {list(indices.shape)} then weight's row length "
                        f"{weight.shape[1]},")


def valid_indices(name: str, index: np.ndarray, low: int, high: int, rule: str) -> np.ndarray:
    """``index`` as int64, or a Refusal naming the parameter, its first value outside
    [low, high) and where it is, and the rule (``rule``: from the operator's doc); the
    synchronisation that runs the kernel reports it (507015) after the operator's name."""
    values = np.asarray(index).astype(np.int64, copy=False)
    if values.size and (values.min() < low or values.max() >= high):
        outside = (values < low) | (values >= high)
        where = tuple(int(i) for i in np.argwhere(outside)[0])
        raise Refusal(f"{name} holds {int(values[where] if where else values)} at "
                      f"{list(where)}, outside [{low}, {high}): {rule}")
    return values


@builtin("aclnnEmbedding", check=_embedding_check)
def embedding(weight: np.ndarray, indices: np.ndarray, out: np.ndarray) -> None:
    rows = weight.shape[0]
    picked = valid_indices("indices", indices, 0, rows,
                           f"weight has {rows} rows, and CANN's doc (ops-nn index/embedding/"
                           "docs/aclnnEmbedding.md) says a negative index is an error and one "
                           "past the end reads undefined values")
    store(out, weight[picked])


def _dot_check(self: np.ndarray, tensor: np.ndarray, out: np.ndarray) -> None:
    """ops-math math/dot/docs/aclnnDot.md: two 1-d tensors of one length; out one element."""
    if self.ndim != 1 or tensor.ndim != 1 or self.shape != tensor.shape:
        raise ValueError(f"self {self.shape} and tensor {tensor.shape} must be 1-d of one "
                         "length")
    if out.size != 1:
        raise ValueError(f"out has shape {out.shape}: the dot product is one element")


@builtin("aclnnDot", dtypes=FLOATS, check=_dot_check)
def dot(self: np.ndarray, tensor: np.ndarray, out: np.ndarray) -> None:
    if self.dtype.kind in "iub":  # integers accumulate exactly, then wrap into out's dtype
        store(out, np.dot(self.astype(np.int64), tensor.astype(np.int64)).reshape(out.shape))
        return
    store(out, np.dot(widen(self), widen(tensor)).reshape(out.shape))


# ---- backward of activations and losses -------------------------------------------------


@builtin("aclnnHardswishBackward", dtypes=FLOATS, check=broadcast_check)
def hardswish_backward(gradOutput: np.ndarray, self: np.ndarray, out: np.ndarray) -> None:
    def body(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:
        # ops-nn activation/hard_swish_grad/docs/aclnnHardswishBackward.md: g times 0 below -3,
        # x / 3 + 0.5 in [-3, 3], 1 above
        kind = target.dtype.type
        inside = np.divide(x, kind(3), out=np.empty_like(target))
        np.add(inside, kind(0.5), out=inside)
        np.multiply(inside, g, out=inside)
        select(target, np.greater(x, kind(3)), np.broadcast_to(g, target.shape), inside)
        np.copyto(inside, target)
        select(target, np.logical_not(np.less(x, kind(-3))), inside, None)
    _run(out, body, gradOutput, self)


@builtin("aclnnHardsigmoidBackward", dtypes=FLOATS)
def hardsigmoid_backward(gradOutput: np.ndarray, self: np.ndarray, out: np.ndarray) -> None:
    def body(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:   # g / 6 in (-3, 3)
        kind = target.dtype.type
        sixth = np.divide(g, kind(6), out=np.empty_like(target))
        inside = np.greater(x, kind(-3))
        np.logical_and(inside, np.less(x, kind(3)), out=inside)
        select(target, inside, sixth, None)
    _run(out, body, gradOutput, self)


def _hardtanh_backward_check(gradOutput: np.ndarray, self: np.ndarray, min: Any, max: Any,
                             out: np.ndarray) -> None:
    """Its phase 1 checks no out shape (the rules hold what it checks), but its last step,
    ViewCopy of the result (self's shape) into out, fails on another one."""
    view_copy_check(self.shape, out)


@builtin("aclnnHardtanhBackward", dtypes=FLOATS, check=_hardtanh_backward_check)
def hardtanh_backward(gradOutput: np.ndarray, self: np.ndarray, min: Any, max: Any,
                      out: np.ndarray) -> None:
    def body(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:
        # ops-nn activation/hardtanh_grad/op_kernel/arch35/hardtanh_grad_dag.h: g where
        # min < x < max or x is NaN, else 0 (0 at the bounds)
        kind = target.dtype.type
        passes = np.greater(x, kind(real_value(min)))
        np.logical_and(passes, np.less(x, kind(real_value(max))), out=passes)
        np.logical_or(passes, np.isnan(x), out=passes)
        select(target, passes, np.broadcast_to(g, target.shape), None)
    _run(out, body, gradOutput, self)


def _leaky_relu_backward_check(gradOutput: np.ndarray, self: np.ndarray, negativeSlope: Any,
                               selfIsResult: bool, out: np.ndarray) -> None:
    """A negative negativeSlope cannot go with selfIsResult: the in-place forward's result does
    not tell the inputs' signs (ops-nn activation/leaky_relu_grad/op_api/
    aclnn_leaky_relu_backward.cpp CheckIsResult)."""
    slope = float(np.real(negativeSlope))
    if selfIsResult and slope < 0:
        raise ValueError(f"negativeSlope is {slope} with selfIsResult true: a negative slope "
                         "needs the out-of-place forward's input as self")


@builtin("aclnnLeakyReluBackward", dtypes=FLOATS, check=_leaky_relu_backward_check)
def leaky_relu_backward(gradOutput: np.ndarray, self: np.ndarray, negativeSlope: Any,
                        selfIsResult: bool, out: np.ndarray) -> None:
    def body(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:
        scaled = np.multiply(g, target.dtype.type(real_value(negativeSlope)),
                             out=np.empty_like(target))
        select(target, np.greater(x, 0), np.broadcast_to(g, target.shape), scaled)
    _run(out, body, gradOutput, self)


@builtin("aclnnSoftplusBackward", dtypes=FLOATS)
def softplus_backward(gradOutput: np.ndarray, self: np.ndarray, beta: Any, threshold: Any,
                      gradInput: np.ndarray) -> None:
    def body(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:
        # ops-nn activation/softplus_v2_grad/docs/aclnnSoftplusBackward.md: g where beta x >
        # threshold, else g / (1 + exp(-beta x))
        kind = target.dtype.type
        scaled = np.multiply(x, kind(-beta), out=np.empty_like(target))
        above = np.less(scaled, kind(-threshold))
        np.exp(scaled, out=scaled)
        np.add(scaled, kind(1), out=scaled)
        np.divide(g, scaled, out=scaled)
        select(target, above, np.broadcast_to(g, target.shape), scaled)
    _run(gradInput, body, gradOutput, self)


def _tanh_softplus(target: np.ndarray, x: np.ndarray) -> None:
    """tanh(softplus(x)), softplus as log1p(exp(x)) (infinite above 88, where tanh is 1)."""
    np.exp(x, out=target)
    np.log1p(target, out=target)
    np.tanh(target, out=target)


@builtin("aclnnMishBackward", dtypes=FLOATS)
def mish_backward(gradOutput: np.ndarray, self: np.ndarray, gradInput: np.ndarray) -> None:
    def body(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:
        # g (t + x sigmoid(x) (1 - t^2)), t = tanh(softplus(x))
        kind = target.dtype.type
        t = np.empty_like(target)
        _tanh_softplus(t, x)
        np.negative(x, out=target)
        np.exp(target, out=target)
        np.add(target, kind(1), out=target)
        np.divide(x, target, out=target)               # x sigmoid(x)
        square = np.multiply(t, t, out=np.empty_like(target))
        np.subtract(kind(1), square, out=square)
        np.multiply(target, square, out=target)
        np.add(target, t, out=target)
        np.multiply(target, g, out=target)
    _run(gradInput, body, gradOutput, self)


def _glu_backward_check(gradOut: np.ndarray, self: np.ndarray, dim: int,
                        out: np.ndarray) -> None:
    """The split dimension is even and gradOut has self's shape with it halved (ops-nn
    activation/glu_grad/op_api/aclnn_glu_backward.cpp CheckParamsDataAndShape)."""
    expected = _halved(self.shape, dim)
    if gradOut.shape != expected:
        raise ValueError(f"gradOut has shape {list(gradOut.shape)}: it must be "
                         f"{list(expected)}")


@builtin("aclnnGluBackward", dtypes=FLOATS, check=_glu_backward_check)
def glu_backward(gradOut: np.ndarray, self: np.ndarray, dim: int, out: np.ndarray) -> None:
    x, g = widen(self), widen(gradOut)
    axis = _dim(x, dim)
    a, b = np.split(x, 2, axis=axis)
    s = 1 / (1 + np.exp(-b))
    store(out, np.concatenate([g * s, g * a * s * (1 - s)], axis=axis))


def _bce_backward_check(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                        weightOptional: Any, reduction: int, out: np.ndarray) -> None:
    """aclnnBinaryCrossEntropyBackward (ops-nn loss/binary_cross_entropy_grad/op_api/
    aclnn_binary_cross_entropy_backward.cpp CheckShape): past an empty self, out has self's
    shape and target, weight and gradOutput broadcast to it."""
    if self.size == 0:
        return
    _same(self, out, "out and self")
    for name, value in (("target", target), ("weightOptional", weightOptional),
                        ("gradOutput", gradOutput)):
        if value is not None and not broadcasts_to(value.shape, self.shape):
            raise ValueError(f"{name} with shape {value.shape} does not broadcast to self's "
                             f"shape {self.shape}")


@builtin("aclnnBinaryCrossEntropyBackward", dtypes=FLOATS, check=_bce_backward_check)
def binary_cross_entropy_backward(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                                  weightOptional: Any, reduction: int, out: np.ndarray) -> None:
    if self.size == 0:
        return
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
    if features.size == 0 or labels.size == 0:  # nothing to compute (op_api returns)
        return
    x, y = widen(features), widen(labels)
    log_probability = _log_softmax(x, x.ndim - 1)
    store(loss, -np.sum(y * log_probability, axis=-1))
    store(backprop, np.exp(log_probability) - y)


def _layer_norm_backward_check(gradOut: np.ndarray, input: np.ndarray,
                               normalizedShape: tuple[int, ...], mean: np.ndarray,
                               rstd: np.ndarray, weightOptional: Any, biasOptional: Any,
                               outputMask: tuple[bool, ...], gradInputOut: Any,
                               gradWeightOut: Any, gradBiasOut: Any) -> None:
    """aclnnLayerNormBackward (ops-nn norm/layer_norm_grad_v3/op_host/op_api/
    aclnn_layer_norm_backward.cpp): outputMask has 3 values, each output it asks for is
    given; weight is float32 or input's dtype (CheckDtype); CheckShape's relations, M and N
    being the sizes before and from the normalized dimensions."""
    if len(outputMask) != 3:
        raise ValueError(f"outputMask has {len(outputMask)} values: it must have 3")
    for index, (name, value) in enumerate((("gradInputOut", gradInputOut),
                                           ("gradWeightOut", gradWeightOut),
                                           ("gradBiasOut", gradBiasOut))):
        if outputMask[index] and value is None:
            _refuse_null(name, f"outputMask[{index}] asks for it")
    if weightOptional is not None and weightOptional.dtype not in (np.float32, input.dtype):
        raise ValueError(f"weightOptional has dtype {weightOptional.dtype.name}: it must be "
                         f"float32 or input's dtype {input.dtype.name}")
    count = len(normalizedShape)
    if not 1 <= count <= 8 or input.ndim < count:
        raise ValueError(f"normalizedShape has {count} values: it must have 1 to 8, and input "
                         f"({input.ndim} dimensions) at least as many dimensions")
    begin = input.ndim - count
    # CheckShapeEqual compares normalizedShape[i] with the tensor's [i + begin] for i from
    # begin to count - 1 only (as CANN's loop does)
    for i in range(begin, count):
        if normalizedShape[i] != input.shape[i + begin]:
            raise ValueError(f"normalizedShape[{i}] is {normalizedShape[i]}, but input's "
                             f"dimension {i + begin} is {input.shape[i + begin]}")
    for name, value in (("weightOptional", weightOptional), ("biasOptional", biasOptional)):
        if value is None:
            continue
        if value.ndim != count or any(normalizedShape[i] != value.shape[i]
                                      for i in range(count)):
            raise ValueError(f"{name} has shape {value.shape}: it must be normalizedShape "
                             f"{tuple(normalizedShape)}")
    _same(gradOut, input, "gradOut and input")
    _same(mean, rstd, "mean and rstd")
    outer = int(np.prod(input.shape[:begin]))
    inner = int(np.prod(input.shape[begin:]))
    if mean.size != outer:
        raise ValueError(f"mean has {mean.size} elements: it must have {outer}, the size of "
                         "input's dimensions before the normalized ones")
    if outputMask[0]:
        _same(gradInputOut, input, "gradInputOut and input")
    for index, (name, value) in ((1, ("gradWeightOut", gradWeightOut)),
                                 (2, ("gradBiasOut", gradBiasOut))):
        if outputMask[index] and value.size != inner:
            raise ValueError(f"{name} has {value.size} elements: it must have {inner}, the "
                             "size of input's normalized dimensions")


@builtin("aclnnLayerNormBackward", dtypes=FLOATS, check=_layer_norm_backward_check)
def layer_norm_backward(gradOut: np.ndarray, input: np.ndarray, normalizedShape: tuple[int, ...],
                        mean: np.ndarray, rstd: np.ndarray, weightOptional: Any,
                        biasOptional: Any, outputMask: tuple[bool, ...], gradInputOut: Any,
                        gradWeightOut: Any, gradBiasOut: Any) -> None:
    """With xhat = (x - mean) rstd and gw = g weight over rows of n elements:
    gradInput = rstd / n (n gw - sum(gw) - xhat sum(gw xhat)), gradWeight = sum over rows of
    g xhat, gradBias = sum over rows of g; rows at a time in cache-sized blocks."""
    begin = input.ndim - len(normalizedShape)
    if input.size == 0:  # M 0 fills the parameters' gradients with 0; N 0 computes nothing
        if int(np.prod(input.shape[:begin])) == 0:
            for index, result in ((1, gradWeightOut), (2, gradBiasOut)):
                if outputMask[index]:
                    result[...] = 0
        return
    length = int(np.prod(normalizedShape))
    dtype = compute_dtype(input.dtype)
    rows = np.ascontiguousarray(input).reshape(-1, length)
    grads = np.ascontiguousarray(gradOut).reshape(-1, length)
    means = widen(mean).reshape(-1, 1)
    rstds = widen(rstd).reshape(-1, 1)
    weight = widen(weightOptional).reshape(-1) if weightOptional is not None else None
    wanted = [len(outputMask) > i and outputMask[i] and target is not None
              for i, target in enumerate((gradInputOut, gradWeightOut, gradBiasOut))]
    grad_input = np.empty(rows.shape, dtype) if wanted[0] else None
    grad_weight = np.zeros(length, np.float64) if wanted[1] else None
    grad_bias = np.zeros(length, np.float64) if wanted[2] else None
    step = max(1, BLOCK // max(length, 1))
    for start in range(0, rows.shape[0], step):
        x = rows[start:start + step].astype(dtype, copy=False)
        g = grads[start:start + step].astype(dtype, copy=False)
        r = rstds[start:start + step]
        xhat = np.subtract(x, means[start:start + step], dtype=dtype)
        np.multiply(xhat, r, out=xhat)
        if grad_weight is not None:
            grad_weight += np.sum(g * xhat, axis=0, dtype=np.float64)
        if grad_bias is not None:
            grad_bias += np.sum(g, axis=0, dtype=np.float64)
        if grad_input is not None:
            gw = np.multiply(g, weight) if weight is not None else g.copy()
            total = np.sum(gw, axis=1, keepdims=True)
            projected = np.sum(gw * xhat, axis=1, keepdims=True)
            block = grad_input[start:start + step]
            np.multiply(gw, dtype.type(length), out=block)
            np.subtract(block, total, out=block)
            np.multiply(xhat, projected, out=xhat)
            np.subtract(block, xhat, out=block)
            np.multiply(block, r / dtype.type(length), out=block)
    if grad_input is not None:
        store(gradInputOut, grad_input.reshape(gradInputOut.shape))
    if grad_weight is not None:
        store(gradWeightOut, grad_weight.reshape(gradWeightOut.shape))
    if grad_bias is not None:
        store(gradBiasOut, grad_bias.reshape(gradBiasOut.shape))


# C / group and C at most (CheckAttr of aclnn_group_norm_backward.cpp, on NpuArch DAV_2201:
# the Atlas A2 the emulator models)
GROUP_NORM_BACKWARD_GROUP_SIZE, GROUP_NORM_BACKWARD_CHANNELS = 8000, 240000


def _group_norm_backward_check(gradOut: np.ndarray, input: np.ndarray, mean: np.ndarray,
                               rstd: np.ndarray, gamma: Any, N: int, C: int, HxW: int,
                               group: int, outputMask: tuple[bool, ...], gradInput: Any,
                               gradGammaOut: Any, gradBetaOut: Any) -> None:
    """aclnnGroupNormBackward (ops-nn norm/group_norm_grad/op_host/op_api/
    aclnn_group_norm_backward.cpp): outputMask has 3 values and each output it asks for is
    given, of gradOut's dtype (CheckMaskNotNull, CheckDtypeValid: 161002 both); CheckAttr;
    CheckShape's element counts and shapes."""
    if len(outputMask) != 3:
        raise ValueError(f"outputMask has {len(outputMask)} values: it must have 3")
    outputs = (("gradInput", gradInput), ("gradGammaOut", gradGammaOut),
               ("gradBetaOut", gradBetaOut))
    for index, (name, value) in enumerate(outputs):
        if outputMask[index] and value is None:
            raise ValueError(f"{name} is NULL, but outputMask[{index}] asks for it")
    for index, (name, value) in enumerate(outputs):
        if outputMask[index] and value.dtype != gradOut.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must have gradOut's "
                             f"{gradOut.dtype.name}")
    if group <= 0:
        raise ValueError(f"group is {group}: it must be greater than 0")
    if C % group:
        raise ValueError(f"C ({C}) must be divisible by group ({group})")
    if C // group > GROUP_NORM_BACKWARD_GROUP_SIZE or C > GROUP_NORM_BACKWARD_CHANNELS:
        raise ValueError(f"C / group is {C // group} and C {C}: they must be at most "
                         f"{GROUP_NORM_BACKWARD_GROUP_SIZE} and {GROUP_NORM_BACKWARD_CHANNELS}")
    for name, value, expected in (("gradOut", gradOut, N * C * HxW),
                                  ("input", input, N * C * HxW),
                                  ("mean", mean, N * group), ("rstd", rstd, N * group)):
        if value.size != expected:
            raise ValueError(f"{name} has {value.size} elements: it must have {expected}")
    if gamma is not None and gamma.size != C:
        raise ValueError(f"gamma has {gamma.size} elements: it must have C ({C})")
    gamma_shape = gamma.shape if gamma is not None else (C,)
    for index, (name, value), wanted in zip(range(3), outputs,
                                           (input.shape, gamma_shape, gamma_shape)):
        if outputMask[index] and value.shape != wanted:
            raise ValueError(f"{name} has shape {value.shape}: it must be {wanted}")


@builtin("aclnnGroupNormBackward", dtypes=FLOATS, check=_group_norm_backward_check)
def group_norm_backward(gradOut: np.ndarray, input: np.ndarray, mean: np.ndarray,
                        rstd: np.ndarray, gamma: Any, N: int, C: int, HxW: int, group: int,
                        outputMask: tuple[bool, ...], gradInput: Any, gradGammaOut: Any,
                        gradBetaOut: Any) -> None:
    if gradOut.size == 0 or input.size == 0:  # nothing to compute (op_api returns)
        return
    x = widen(input).reshape(N, group, -1)
    g = widen(gradOut).reshape(N, C, -1)
    mu = widen(mean).reshape(N, group, 1)
    r = widen(rstd).reshape(N, group, 1)
    normalised = (x - mu) * r                                   # (N, group, C/group * HxW)
    if outputMask[0]:
        w = widen(gamma).reshape(1, C, 1) if gamma is not None else np.float32(1)
        gw = (g * w).reshape(N, group, -1)
        grad = r * (gw - np.mean(gw, axis=2, keepdims=True)
                    - normalised * np.mean(gw * normalised, axis=2, keepdims=True))
        store(gradInput, grad.reshape(gradInput.shape))
    by_channel = normalised.reshape(N, C, -1)
    if outputMask[1]:
        store(gradGammaOut, np.sum(g * by_channel, axis=(0, 2)).reshape(gradGammaOut.shape))
    if outputMask[2]:
        store(gradBetaOut, np.sum(g, axis=(0, 2)).reshape(gradBetaOut.shape))


def _batch_norm_backward_check(gradOut: np.ndarray, input: np.ndarray, weight: Any,
                               runningMean: Any, runningVar: Any, saveMean: Any,
                               saveInvstd: Any, training: bool, eps: float,
                               outputMask: tuple[bool, ...], gradInput: Any, gradWeight: Any,
                               gradBias: Any) -> None:
    """aclnnBatchNormBackward (ops-nn norm/batch_norm_grad_v3/op_host/op_api/
    aclnn_batch_norm_backward.cpp): past an empty input or gradOut, outputMask has a value
    and each output it asks for is given (CheckMaskNotNull: 161001 both); gradInput, when
    asked for, has gradOut's shape (CheckShape); the per-channel tensors are 1-d of C."""
    if input.size == 0 or gradOut.size == 0:
        return
    if not outputMask:
        raise Refusal("outputMask is empty: it must have at least one value", PARAM_NULLPTR)
    for index, (name, value) in enumerate((("gradInput", gradInput), ("gradWeight", gradWeight),
                                           ("gradBias", gradBias))):
        if _mask(outputMask, index) and value is None:
            _refuse_null(name, f"outputMask[{index}] asks for it")
    if _mask(outputMask, 0):
        if not 2 <= gradInput.ndim <= 8:
            raise ValueError(f"gradInput has {gradInput.ndim} dimensions: it must have 2 to 8")
        _same(gradInput, gradOut, "gradInput and gradOut")
    for name, value in (("weight", weight), ("runningMean", runningMean),
                        ("runningVar", runningVar)):
        _channels(name, value, input.shape[1])


@builtin("aclnnBatchNormBackward", dtypes=FLOATS, check=_batch_norm_backward_check)
def batch_norm_backward(gradOut: np.ndarray, input: np.ndarray, weight: Any, runningMean: Any,
                        runningVar: Any, saveMean: Any, saveInvstd: Any, training: bool,
                        eps: float, outputMask: tuple[bool, ...], gradInput: Any,
                        gradWeight: Any, gradBias: Any) -> None:
    if input.size == 0 or gradOut.size == 0:
        return
    x, g = widen(input), widen(gradOut)
    channels = x.shape[1]
    axes = tuple(i for i in range(x.ndim) if i != 1)
    shape = [1] * x.ndim
    shape[1] = channels

    def given(value: Any, default: float) -> Any:
        # BatchNormBackward's defaults for a NULL tensor: weight, runningVar and saveInvstd
        # 1, runningMean and saveMean 0
        return widen(value) if value is not None else np.full(channels, default, np.float32)

    if training:
        mean, invstd = given(saveMean, 0), given(saveInvstd, 1)
    else:
        mean = given(runningMean, 0)
        invstd = 1 / np.sqrt(given(runningVar, 1) + np.float32(eps))
    w = given(weight, 1)
    normalised = (x - mean.reshape(shape)) * invstd.reshape(shape)
    sum_g = np.sum(g, axis=axes)
    sum_gn = np.sum(g * normalised, axis=axes)
    if _mask(outputMask, 0):
        if training:
            n = x.size // channels
            grad = (w * invstd).reshape(shape) / n * (
                n * g - sum_g.reshape(shape) - normalised * sum_gn.reshape(shape))
        else:
            grad = g * (w * invstd).reshape(shape)
        store(gradInput, grad)
    if _mask(outputMask, 1):
        store(gradWeight, sum_gn.reshape(gradWeight.shape))
    if _mask(outputMask, 2):
        store(gradBias, sum_g.reshape(gradBias.shape))


def _fast_batch_norm_backward_check(gradOut: np.ndarray, input: np.ndarray, weight: Any,
                                    runningMean: Any, runningVar: Any, saveMean: Any,
                                    saveInvstd: Any, training: bool, eps: float,
                                    outputMask: tuple[bool, ...], version: int,
                                    gradInput: Any, gradWeight: Any, gradBias: Any) -> None:
    """aclnnFastBatchNormBackward (ops-nn norm/batch_norm_grad_v3/op_host/op_api/
    aclnn_fast_batch_norm_backward.cpp): aclnnBatchNormBackward's checks on the Atlas A2
    (CheckParams is the same there); version is not checked."""
    _batch_norm_backward_check(gradOut, input, weight, runningMean, runningVar, saveMean,
                               saveInvstd, training, eps, outputMask, gradInput, gradWeight,
                               gradBias)


@builtin("aclnnFastBatchNormBackward", dtypes=FLOATS, check=_fast_batch_norm_backward_check)
def fast_batch_norm_backward(gradOut: np.ndarray, input: np.ndarray, weight: Any,
                             runningMean: Any, runningVar: Any, saveMean: Any, saveInvstd: Any,
                             training: bool, eps: float, outputMask: tuple[bool, ...],
                             version: int, gradInput: Any, gradWeight: Any,
                             gradBias: Any) -> None:
    """aclnnBatchNormBackward's gradients (ops-nn norm/batch_norm_grad_v3/docs/
    aclnnFastBatchNormBackward.md gives the same formulas; version picks a device kernel)."""
    batch_norm_backward(gradOut, input, weight, runningMean, runningVar, saveMean, saveInvstd,
                        training, eps, outputMask, gradInput, gradWeight, gradBias)
