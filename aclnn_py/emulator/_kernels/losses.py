"""Loss kernels beyond nn.py's: KL divergence and its two gradients, the soft margin loss and
its gradient, the gradient of binary cross entropy with logits, the 2-d negative log
likelihood and its gradient, cross entropy (with label smoothing) and its gradient, and the
multilabel margin loss.

Each formula is its CANN doc's (ops-nn loss/<op>/docs/aclnn<Op>.md, ops-math math/kl_div_v2/
docs/aclnnKlDiv.md), with PyTorch as the reference where the doc is silent. Inputs compute in
float32 (float16 and bfloat16 widened, rounded once into each output); reductions sum in
float32. ``reduction`` is CANN's int64 (0 none, 1 mean, 2 sum; 3 batchmean for KL).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import broadcasts_to, check_output_shapes, store, tensor_format, widen
from .elementwise import FLOATS, apply, register
from .nn import _fill_reduced, _loss_out, valid_indices

MAX_DIMS = 8  # OP_CHECK_MAX_DIM of every op_api below


def _float(array: np.ndarray) -> Any:
    """``array`` in its compute dtype (float32, or float64 for float64)."""
    values = widen(array)
    return values if values.dtype.kind == "f" else values.astype(np.float32)


def _max_dims(**tensors: Any) -> None:
    for name, value in tensors.items():
        if value is not None and value.ndim > MAX_DIMS:
            raise ValueError(f"{name} has {value.ndim} dimensions: at most {MAX_DIMS}")


def _reduction(reduction: int, highest: int = 2) -> None:
    if not 0 <= reduction <= highest:
        raise ValueError(f"reduction is {reduction}: it must be 0 (none), 1 (mean), 2 (sum)"
                         + (" or 3 (batchmean)" if highest == 3 else ""))


def _broadcast(name: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{name}: shapes {', '.join(map(str, map(list, shapes)))} do not "
                         "broadcast together") from None


def _reduced(loss: Any, reduction: int, out: np.ndarray, batch: int = 0) -> None:
    """The loss into out: as it is (none), its mean, sum, or sum / batch (batchmean)."""
    if reduction == 0:
        store(out, np.broadcast_to(loss, out.shape))
        return
    total = np.sum(loss, dtype=loss.dtype)
    if reduction == 1:
        total = total / loss.size
    elif reduction == 3:
        total = total / batch
    store(out, np.asarray(total).reshape(out.shape))


# ---- KL divergence ----------------------------------------------------------------------------


def _kl_div_check(self: np.ndarray, target: np.ndarray, reduction: int, logTarget: bool,
                  out: np.ndarray) -> None:
    """ops-math math/kl_div_v2/op_api/aclnn_kl_div.cpp: at most 8 dimensions (CheckShape),
    reduction 0 to 3 (CheckReduction); self and target broadcast, out the loss's shape for
    none (a 0-d pair gives a 0-d out), one element otherwise (CheckReduceOutShape)."""
    _max_dims(self=self, target=target)
    _reduction(reduction, 3)
    if self.size == 0 or target.size == 0:
        return
    shape = _broadcast("self and target", self.shape or (1,), target.shape or (1,))
    if reduction == 0:
        expected = () if self.ndim == 0 and target.ndim == 0 else shape
        if out.shape != expected:
            raise ValueError(f"out has shape {list(out.shape)}: reduction none gives "
                             f"{list(expected)}")
    else:
        _loss_out((), out)


@register("aclnnKlDiv", check=_kl_div_check)
def kl_div(self: np.ndarray, target: np.ndarray, reduction: int, logTarget: bool,
           out: np.ndarray) -> None:
    """target (log target - self), 0 where target is 0 (the kernel's select, ops-math
    math/kl_div_v2/op_kernel/kl_div_v2_dag.h), or e^target (target - self) when logTarget;
    then none, mean, sum or sum / self.size(0) (batchmean)."""
    if self.size == 0 or target.size == 0:
        if reduction == 3:
            out[...] = np.nan if self.ndim and self.shape[0] == 0 else 0
        else:
            _fill_reduced(out, reduction)
        return
    x, t = _float(self), _float(target)
    if logTarget:
        loss = np.exp(t) * (t - x)
    else:
        loss = t * (np.log(np.where(t == 0, t.dtype.type(1), t)) - x)
    _reduced(loss, reduction, out, (self.shape or (1,))[0])


def _kl_backward_check(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                       reduction: int, logTarget: bool, result: np.ndarray, name: str,
                       like: np.ndarray, like_name: str) -> None:
    """ops-nn loss/kl_div_loss_grad/op_api/aclnn_kl_div_backward.cpp and
    kl_div_target_loss_grad/op_api/aclnn_kl_div_target_backward.cpp CheckShape: at most 8
    dimensions; self and target broadcast, gradOutput with them; the result has the shape of
    self (KlDivBackward) or target (KlDivTargetBackward)."""
    _max_dims(gradOutput=gradOutput, self=self, target=target, **{name: result})
    shape = _broadcast("self and target", self.shape, target.shape)
    if not broadcasts_to(gradOutput.shape, shape):
        raise ValueError(f"gradOutput has shape {list(gradOutput.shape)}: it must broadcast to "
                         f"self's and target's broadcast shape, {list(shape)}")
    if result.shape != like.shape:
        raise ValueError(f"{name} has shape {list(result.shape)}: it must be {like_name}'s, "
                         f"{list(like.shape)}")


def _kl_scale(reduction: int, shape: tuple[int, ...]) -> float:
    if reduction == 1:
        return 1.0 / max(int(np.prod(shape)), 1)
    if reduction == 3:
        return 1.0 / shape[0] if shape else 1.0
    return 1.0


def _sum_to(value: Any, shape: tuple[int, ...]) -> Any:
    """``value`` (of a broadcast shape) summed back to ``shape``."""
    value = np.asarray(value)
    while value.ndim > len(shape):
        value = value.sum(axis=0)
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and value.shape[i] != 1)
    return value.sum(axis=axes, keepdims=True) if axes else value


def _kl_div_backward_check(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                           reduction: int, logTarget: bool, out: np.ndarray) -> None:
    _kl_backward_check(gradOutput, self, target, reduction, logTarget, out, "out", self, "self")


@register("aclnnKlDivBackward", check=_kl_div_backward_check)
def kl_div_backward(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                    reduction: int, logTarget: bool, out: np.ndarray) -> None:
    """-target gradOutput (-e^target gradOutput when logTarget), divided by the element count
    for mean and by the batch for batchmean (ops-nn loss/kl_div_loss_grad/docs/
    aclnnKlDivBackward.md: the gradient of aclnnKlDiv)."""
    if out.size == 0:
        return
    g, x, t = _float(gradOutput), _float(self), _float(target)
    shape = np.broadcast_shapes(g.shape, x.shape, t.shape)
    scale = g.dtype.type(_kl_scale(reduction, np.broadcast_shapes(x.shape, t.shape)))
    grad = -(np.exp(t) if logTarget else t) * (g * scale)
    store(out, _sum_to(np.broadcast_to(grad, shape), out.shape).reshape(out.shape))


def _kl_div_target_backward_check(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                                  reduction: int, logTarget: bool,
                                  gradTarget: np.ndarray) -> None:
    _kl_backward_check(gradOutput, self, target, reduction, logTarget, gradTarget,
                       "gradTarget", target, "target")


@register("aclnnKlDivTargetBackward", check=_kl_div_target_backward_check)
def kl_div_target_backward(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                           reduction: int, logTarget: bool, gradTarget: np.ndarray) -> None:
    """gradOutput (log target - self + 1), or gradOutput e^target (target - self + 1) when
    logTarget (ops-nn loss/kl_div_target_loss_grad/docs/aclnnKlDivTargetBackward.md), the
    gradient divided first by the element count (mean) or the batch (batchmean), as its
    op_api does; without logTarget, g log t - g self + g t / t as the op_api computes it
    (NaN where target is 0)."""
    if gradTarget.size == 0:
        return
    g, x, t = _float(gradOutput), _float(self), _float(target)
    shape = np.broadcast_shapes(g.shape, x.shape, t.shape)
    g = g * g.dtype.type(_kl_scale(reduction, np.broadcast_shapes(x.shape, t.shape)))
    if logTarget:
        e = np.exp(t)
        grad = g * (t - x) * e + g * e
    else:
        grad = g * np.log(t) - g * x + g * t / t
    store(gradTarget,
          _sum_to(np.broadcast_to(grad, shape), gradTarget.shape).reshape(gradTarget.shape))


# ---- soft margin --------------------------------------------------------------------------


def _soft_margin_check(self: np.ndarray, target: np.ndarray, reduction: int,
                       out: np.ndarray) -> None:
    """ops-nn loss/soft_margin_loss/op_api/aclnn_soft_margin_loss.cpp CheckShape: at most 8
    dimensions; self and target broadcast; out their shape for none, else 0-d."""
    _max_dims(self=self, target=target)
    shape = _broadcast("self and target", self.shape, target.shape)
    if reduction == 0:
        if out.shape != shape:
            raise ValueError(f"out has shape {list(out.shape)}: reduction none gives "
                             f"{list(shape)}")
    elif out.ndim >= 1:
        raise ValueError(f"out has shape {list(out.shape)}: a reduced loss is 0-d")


def _softplus(z: Any) -> Any:
    """log(1 + e^z) without overflow."""
    return np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))


@register("aclnnSoftMarginLoss", check=_soft_margin_check)
def soft_margin_loss(self: np.ndarray, target: np.ndarray, reduction: int,
                     out: np.ndarray) -> None:
    """log(1 + e^(-target self)), then none, mean or sum (ops-nn loss/soft_margin_loss/docs/
    aclnnSoftMarginLoss.md); an empty input gives NaN (mean) or 0 (sum)."""
    if self.size == 0 or target.size == 0:
        _fill_reduced(out, reduction)
        return
    loss = _softplus(-_float(target) * _float(self))
    _reduced(loss, reduction, out)


def _soft_margin_backward_check(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                                reduction: int, out: np.ndarray) -> None:
    """ops-nn loss/soft_margin_loss_grad/op_api/aclnn_soft_margin_loss_backward.cpp
    CheckShape: at most 8 dimensions; out is the broadcast shape of gradOutput, self and
    target."""
    _max_dims(gradOutput=gradOutput, self=self, target=target)
    shape = _broadcast("gradOutput, self and target", gradOutput.shape, self.shape,
                       target.shape)
    if out.shape != shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be {list(shape)}")


@register("aclnnSoftMarginLossBackward", check=_soft_margin_backward_check)
def soft_margin_loss_backward(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                              reduction: int, out: np.ndarray) -> None:
    """-target gradOutput sigmoid(-target self), divided by the element count for mean
    (ops-nn loss/soft_margin_loss_grad/docs/aclnnSoftMarginLossBackward.md)."""
    if out.size == 0:
        return
    g, x, t = _float(gradOutput), _float(self), _float(target)
    z = -t * x
    e = np.exp(-np.abs(z))
    sigmoid = np.where(z >= 0, 1 / (1 + e), e / (1 + e))
    grad = -t * sigmoid * g
    if reduction == 1:
        grad = grad / grad.dtype.type(np.prod(np.broadcast_shapes(x.shape, t.shape)))
    store(out, np.broadcast_to(grad, out.shape))


# ---- binary cross entropy with logits, backward --------------------------------------------


def _bce_logits_backward_check(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                               weightOptional: Any, posWeightOptional: Any, reduction: int,
                               out: np.ndarray) -> None:
    """ops-nn loss/sigmoid_cross_entropy_with_logits_grad_v2/op_api/
    aclnn_binary_cross_entropy_with_logits_backward.cpp: at most 8 dimensions
    (CheckInputDimension); every tensor float16, float32 or bfloat16 and out of target's dtype
    (CheckDtypeValid); target and out of self's format (CheckFormat); for a non-empty self,
    target and out have self's shape and gradOutput, weight and posWeight broadcast to it
    (CheckShape); reduction 0 to 2 (CheckReduction)."""
    _max_dims(gradOutput=gradOutput, self=self, target=target, weightOptional=weightOptional,
              posWeightOptional=posWeightOptional, out=out)
    for name, value in (("gradOutput", gradOutput), ("self", self), ("target", target),
                        ("weightOptional", weightOptional),
                        ("posWeightOptional", posWeightOptional), ("out", out)):
        if value is not None and value.dtype not in FLOATS:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be one of "
                             f"{', '.join(FLOATS.names)}")
    for name, value in (("target", target), ("out", out)):   # CheckFormat
        if tensor_format(value) != tensor_format(self):
            raise ValueError(f"{name}'s format {tensor_format(value)} is not self's "
                             f"{tensor_format(self)}: they must be equal")
    if out.dtype != target.dtype:
        raise ValueError(f"out has dtype {out.dtype.name} and target {target.dtype.name}: they "
                         "must be equal")
    if self.size:
        for name, value in (("target", target), ("out", out)):
            if value.shape != self.shape:
                raise ValueError(f"{name} has shape {list(value.shape)}: it must be self's, "
                                 f"{list(self.shape)}")
        for name, value in (("gradOutput", gradOutput), ("weightOptional", weightOptional),
                            ("posWeightOptional", posWeightOptional)):
            if value is not None and not broadcasts_to(value.shape, self.shape):
                raise ValueError(f"{name} has shape {list(value.shape)}: it must broadcast "
                                 f"to self's, {list(self.shape)}")
    _reduction(reduction)


@register("aclnnBinaryCrossEntropyWithLogitsBackward", check=_bce_logits_backward_check)
def binary_cross_entropy_with_logits_backward(gradOutput: np.ndarray, self: np.ndarray,
                                              target: np.ndarray, weightOptional: Any,
                                              posWeightOptional: Any, reduction: int,
                                              out: np.ndarray) -> None:
    """gradOutput w ((1 + (p - 1) t) sigmoid(x) - p t), p the posWeight (1 when left out),
    divided by the element count for mean: the gradient of aclnnBinaryCrossEntropyWithLogits
    (ops-nn loss/sigmoid_cross_entropy_with_logits_grad_v2/docs/
    aclnnBinaryCrossEntropyWithLogitsBackward.md)."""
    if out.size == 0:
        return
    dtype = np.dtype(np.float64) if self.dtype == np.float64 else np.dtype(np.float32)
    scale = dtype.type(1.0 / self.size if reduction == 1 else 1.0)
    inputs = [gradOutput, self, target]
    for extra in (posWeightOptional, weightOptional):
        if extra is not None:
            inputs.append(extra)

    def compute(result: np.ndarray, g: np.ndarray, x: np.ndarray, t: np.ndarray,
                *rest: np.ndarray) -> None:
        kind = result.dtype.type
        np.negative(x, out=result)
        np.exp(result, out=result)
        np.add(result, kind(1), out=result)
        np.reciprocal(result, out=result)                 # sigmoid(x)
        extras = list(rest)
        if posWeightOptional is None:
            np.subtract(result, t, out=result)
        else:
            p = extras.pop(0)
            factor = np.subtract(p, kind(1))
            factor = np.multiply(factor, t)
            np.add(factor, kind(1), out=factor)           # 1 + (p - 1) t
            np.multiply(result, factor, out=result)
            np.subtract(result, np.multiply(p, t), out=result)
        if weightOptional is not None:
            np.multiply(result, extras.pop(0), out=result)
        np.multiply(result, g, out=result)
        if scale != 1:
            np.multiply(result, scale, out=result)
    apply(out, compute, inputs, dtype)


# ---- 2-d negative log likelihood -------------------------------------------------------------


def _nll2d_inputs(self: np.ndarray, target: np.ndarray, weight: np.ndarray) -> None:
    """self (N, C, H, W), target (N, H, W), weight of C elements (ops-nn loss/nll_loss/op_api/
    aclnn_nll_loss2d.cpp CheckShape2D, nll_loss_grad/op_api/aclnn_nll_loss2d_backward.cpp
    CheckShape)."""
    if self.ndim != 4:
        raise ValueError(f"self has {self.ndim} dimensions: it must be 4-d (N, C, H, W)")
    if target.ndim != 3:
        raise ValueError(f"target has {target.ndim} dimensions: it must be 3-d (N, H, W)")
    n, c, h, w = self.shape
    if target.shape != (n, h, w):
        raise ValueError(f"target has shape {list(target.shape)}: it must be {[n, h, w]} "
                         f"for self {list(self.shape)}")
    if weight.size != c:
        raise ValueError(f"weight has {weight.size} elements: it must have self's {c} classes")


def _nll_loss2d_check(self: np.ndarray, target: np.ndarray, weight: np.ndarray,
                      reduction: int, ignoreIndex: int, out: np.ndarray,
                      totalWeightOut: np.ndarray) -> None:
    """ops-nn loss/nll_loss/op_api/aclnn_nll_loss2d.cpp: weight has self's dtype
    (CheckDtypeValid2D), reduction 0 to 2 (CheckReduction); out has target's shape for none,
    else one element; totalWeightOut one element (CheckShape2D)."""
    if weight.dtype != self.dtype:
        raise ValueError(f"weight has dtype {weight.dtype.name} and self {self.dtype.name}: "
                         "they must be equal")
    _reduction(reduction)
    _nll2d_inputs(self, target, weight)
    if reduction == 0:
        if out.shape != target.shape:
            raise ValueError(f"out has shape {list(out.shape)}: reduction none gives target's "
                             f"shape, {list(target.shape)}")
    elif out.size != 1:
        raise ValueError(f"out has shape {list(out.shape)}: it must be one element")
    if totalWeightOut.size != 1:
        raise ValueError(f"totalWeightOut has shape {list(totalWeightOut.shape)}: it must be "
                         "one element")


def _nll_picked(self: np.ndarray, target: np.ndarray, weight: np.ndarray, ignoreIndex: int
                ) -> tuple[Any, Any, Any, Any]:
    """Rows (N H W, C) of self, the labels (ignored ones as 0), their weights (0 where
    ignored) and the mask of kept rows."""
    rows = np.moveaxis(_float(self), 1, -1).reshape(-1, self.shape[1])
    labels = target.astype(np.int64).reshape(-1)
    keep = labels != ignoreIndex
    valid_indices("target", labels[keep], 0, rows.shape[1],
                  f"self has {rows.shape[1]} classes: targets are in [0, C - 1] (but "
                  "ignoreIndex)")
    safe = np.where(keep, labels, 0)
    weights = np.where(keep, _float(weight).reshape(-1)[safe], 0).astype(rows.dtype)
    return rows, safe, weights, keep


@register("aclnnNLLLoss2d", check=_nll_loss2d_check)
def nll_loss2d(self: np.ndarray, target: np.ndarray, weight: np.ndarray, reduction: int,
               ignoreIndex: int, out: np.ndarray, totalWeightOut: np.ndarray) -> None:
    """-w[t] self[n, t, h, w] per position (0 where t is ignoreIndex); mean divides the sum by
    the sum of the weights taken, totalWeightOut (ops-nn loss/nll_loss/docs/
    aclnnNLLLoss2d.md)."""
    if self.size == 0 or target.size == 0 or weight.size == 0:
        if reduction:
            _fill_reduced(out, reduction)
        totalWeightOut[...] = 0
        return
    labels = target.astype(np.int64)
    keep = labels != ignoreIndex
    valid_indices("target", labels[keep], 0, self.shape[1],
                  f"self has {self.shape[1]} classes: targets are in [0, C - 1] (but "
                  "ignoreIndex)")
    safe = np.where(keep, labels, 0)
    picked = _float(np.take_along_axis(self, safe[:, None], axis=1)[:, 0])  # only N H W values
    weights = np.where(keep, _float(weight).reshape(-1)[safe], 0).astype(picked.dtype)
    loss = (-picked * weights).reshape(-1)
    weights = weights.reshape(-1)
    total = np.sum(weights)
    if reduction == 0:
        store(out, loss.reshape(out.shape))
    else:
        value = np.sum(loss)
        store(out, np.asarray(value / total if reduction == 1 else value).reshape(out.shape))
    store(totalWeightOut, np.asarray(total).reshape(totalWeightOut.shape))


def _nll_loss2d_backward_check(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                               weight: np.ndarray, reduction: int, ignoreIndex: int,
                               totalWeight: np.ndarray, out: np.ndarray) -> None:
    """ops-nn loss/nll_loss_grad/op_api/aclnn_nll_loss2d_backward.cpp: gradOutput, weight,
    totalWeight and out have self's dtype (CheckDtypeValid); reduction 0 to 2; gradOutput has
    target's shape for none, else one element of at most 1 dimension; out self's shape;
    totalWeight one element (CheckShape)."""
    for name, value in (("gradOutput", gradOutput), ("weight", weight),
                        ("totalWeight", totalWeight), ("out", out)):
        if value.dtype != self.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name} and self "
                             f"{self.dtype.name}: they must be equal")
    _reduction(reduction)
    if reduction == 0:
        if gradOutput.shape != target.shape:
            raise ValueError(f"gradOutput has shape {list(gradOutput.shape)}: reduction none "
                             f"takes target's, {list(target.shape)}")
    elif gradOutput.ndim > 1 or gradOutput.size != 1:
        raise ValueError(f"gradOutput has shape {list(gradOutput.shape)}: it must be a single "
                         "element")
    _nll2d_inputs(self, target, weight)
    if out.shape != self.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be self's, "
                         f"{list(self.shape)}")
    if totalWeight.size != 1:
        raise ValueError(f"totalWeight has shape {list(totalWeight.shape)}: it must be one "
                         "element")


@register("aclnnNLLLoss2dBackward", check=_nll_loss2d_backward_check)
def nll_loss2d_backward(gradOutput: np.ndarray, self: np.ndarray, target: np.ndarray,
                        weight: np.ndarray, reduction: int, ignoreIndex: int,
                        totalWeight: np.ndarray, out: np.ndarray) -> None:
    """out[n, t, h, w] = -w[t] gradOutput (per position for none), divided by totalWeight for
    mean; 0 elsewhere and where t is ignoreIndex (ops-nn loss/nll_loss_grad/docs/
    aclnnNLLLoss2dBackward.md)."""
    if out.size == 0:
        return
    rows, safe, weights, keep = _nll_picked(self, target, weight, ignoreIndex)
    grad = _float(gradOutput).reshape(-1)
    scale = -weights * (grad if reduction == 0 else grad[0])
    if reduction == 1:
        scale = scale / _float(totalWeight).reshape(-1)[0]
    result = np.zeros_like(rows)
    result[np.arange(rows.shape[0]), safe] = np.where(keep, scale, 0)
    n, c, h, w = self.shape
    store(out, np.moveaxis(result.reshape(n, h, w, c), -1, 1))


# ---- cross entropy ----------------------------------------------------------------------------

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_name(reductionOptional: Any) -> int:
    """CANN's reduction string (NULL: mean), as its number; ValueError for another string."""
    name = "mean" if reductionOptional is None else reductionOptional
    if name not in _REDUCTIONS:
        raise ValueError(f"reductionOptional is {name!r}: it must be 'mean', 'sum' or 'none'")
    return _REDUCTIONS[name]


def _cross_entropy_check(input: np.ndarray, target: np.ndarray, weightOptional: Any,  # noqa: A002
                         reductionOptional: Any, ignoreIndex: int, labelSmoothing: float,
                         lseSquareScaleForZloss: float, returnZloss: bool, lossOut: np.ndarray,
                         logProbOut: np.ndarray, zlossOut: Any, lseForZlossOut: Any) -> None:
    """ops-nn loss/cross_entropy_loss/docs/aclnnCrossEntropyLoss.md: input (N, C), C > 0;
    target (N); weight (C); reduction mean, sum or none; labelSmoothing in [0, 1]; lossOut
    (N) for none, else one element; logProbOut input's shape."""
    reduction = _reduction_name(reductionOptional)
    if input.ndim != 2 or input.shape[1] == 0:
        raise ValueError(f"input has shape {list(input.shape)}: it must be (N, C), C > 0")
    n, c = input.shape
    if target.shape != (n,):
        raise ValueError(f"target has shape {list(target.shape)}: it must be [{n}]")
    if weightOptional is not None and weightOptional.shape != (c,):
        raise ValueError(f"weightOptional has shape {list(weightOptional.shape)}: it must be "
                         f"[{c}]")
    if not 0.0 <= labelSmoothing <= 1.0:
        raise ValueError(f"labelSmoothing is {labelSmoothing}: it must be in [0, 1]")
    if reduction == 0:
        if lossOut.shape != (n,):
            raise ValueError(f"lossOut has shape {list(lossOut.shape)}: reduction none gives "
                             f"[{n}]")
    elif lossOut.size != 1:
        raise ValueError(f"lossOut has shape {list(lossOut.shape)}: it must be one element")
    if logProbOut.shape != input.shape:
        raise ValueError(f"logProbOut has shape {list(logProbOut.shape)}: it must be input's, "
                         f"{list(input.shape)}")


def _log_softmax_rows(x: Any) -> tuple[Any, Any]:
    """log-softmax of each row and its log-sum-exp."""
    top = np.max(x, axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    lse = np.log(np.sum(np.exp(x - top), axis=1, keepdims=True)) + top
    return x - lse, lse


@register("aclnnCrossEntropyLoss", check=_cross_entropy_check)
def cross_entropy_loss(input: np.ndarray, target: np.ndarray, weightOptional: Any,  # noqa: A002
                       reductionOptional: Any, ignoreIndex: int, labelSmoothing: float,
                       lseSquareScaleForZloss: float, returnZloss: bool, lossOut: np.ndarray,
                       logProbOut: np.ndarray, zlossOut: Any, lseForZlossOut: Any) -> None:
    """-w[y_n] logProb[n, y_n] (0 where y_n is ignoreIndex), then none, sum, or mean over the
    weights taken; with labelSmoothing e, (1 - e) of it plus e / C times -sum_c w_c
    logProb[n, c] (reduced the same way), as PyTorch's cross_entropy; logProb = x - lse
    (ops-nn loss/cross_entropy_loss/docs/aclnnCrossEntropyLoss.md). The zloss outputs are
    "not supported yet" there: left as they are."""
    reduction = _reduction_name(reductionOptional)
    if input.size == 0:
        _fill_reduced(lossOut, reduction)
        return
    log_prob, _ = _log_softmax_rows(_float(input))
    store(logProbOut, log_prob)
    n, c = log_prob.shape
    labels = target.astype(np.int64).reshape(-1)
    keep = labels != ignoreIndex
    valid_indices("target", labels[keep], 0, c,
                  f"input has {c} classes: targets are in [0, C) (or ignoreIndex)")
    safe = np.where(keep, labels, 0)
    w = np.ones(c, log_prob.dtype) if weightOptional is None else \
        _float(weightOptional).astype(log_prob.dtype)
    weights = np.where(keep, w[safe], 0).astype(log_prob.dtype)
    loss = -log_prob[np.arange(n), safe] * weights
    smooth = np.where(keep, -np.sum(log_prob * w, axis=1), 0).astype(log_prob.dtype)
    e = log_prob.dtype.type(labelSmoothing)
    if reduction == 0:
        store(lossOut, (1 - e) * loss + e / c * smooth)
        return
    total, smooth_total = np.sum(loss), np.sum(smooth)
    if reduction == 1:
        taken = np.sum(weights)
        total, smooth_total = total / taken, smooth_total / taken
    store(lossOut, np.asarray((1 - e) * total + e / c * smooth_total).reshape(lossOut.shape))


def _cross_entropy_grad_check(gradLoss: np.ndarray, logProb: np.ndarray, target: np.ndarray,
                              weightOptional: Any, gradZlossOptional: Any,
                              lseForZlossOptional: Any, reductionOptional: Any,
                              ignoreIndex: int, labelSmoothing: float,
                              lseSquareScaleForZloss: float, out: np.ndarray) -> None:
    """ops-nn loss/cross_entropy_loss_grad/docs/aclnnCrossEntropyLossGrad.md: gradLoss (N) for
    none, else one element; logProb (N, C); target (N); weight (C); out logProb's shape and
    gradLoss's dtype."""
    reduction = _reduction_name(reductionOptional)
    if logProb.ndim != 2 or logProb.shape[1] == 0:
        raise ValueError(f"logProb has shape {list(logProb.shape)}: it must be (N, C), C > 0")
    n, c = logProb.shape
    if reduction == 0 and gradLoss.shape != (n,):
        raise ValueError(f"gradLoss has shape {list(gradLoss.shape)}: reduction none takes "
                         f"[{n}]")
    if reduction != 0 and gradLoss.size != 1:
        raise ValueError(f"gradLoss has shape {list(gradLoss.shape)}: it must be one element")
    if target.shape != (n,):
        raise ValueError(f"target has shape {list(target.shape)}: it must be [{n}]")
    if weightOptional is not None and weightOptional.shape != (c,):
        raise ValueError(f"weightOptional has shape {list(weightOptional.shape)}: it must be "
                         f"[{c}]")
    if out.shape != logProb.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be logProb's, "
                         f"{list(logProb.shape)}")
    if out.dtype != gradLoss.dtype:
        raise ValueError(f"out has dtype {out.dtype.name} and gradLoss {gradLoss.dtype.name}: "
                         "they must be equal")


@register("aclnnCrossEntropyLossGrad", check=_cross_entropy_grad_check)
def cross_entropy_loss_grad(gradLoss: np.ndarray, logProb: np.ndarray, target: np.ndarray,
                            weightOptional: Any, gradZlossOptional: Any,
                            lseForZlossOptional: Any, reductionOptional: Any, ignoreIndex: int,
                            labelSmoothing: float, lseSquareScaleForZloss: float,
                            out: np.ndarray) -> None:
    """The doc's formula (ops-nn loss/cross_entropy_loss_grad/docs/
    aclnnCrossEntropyLossGrad.md): with p = exp(logProb), g the loss gradient per row (divided
    by the weights taken for mean) and m the rows not ignored, out = p w[t] g (1 - e) m minus
    w[t] g (1 - e) m at the target, plus the smoothing part p sum(s w) - s w, s = g e / C m;
    and, with lseForZloss and a nonzero scale, p 2 scale lse m (g + gradZloss) (divided by the
    rows kept for mean)."""
    reduction = _reduction_name(reductionOptional)
    if out.size == 0:
        return
    log_prob = _float(logProb)
    n, c = log_prob.shape
    kind = log_prob.dtype.type
    labels = target.astype(np.int64).reshape(-1)
    keep = labels != ignoreIndex
    valid_indices("target", labels[keep], 0, c,
                  f"logProb has {c} classes: targets are in [0, C) (or ignoreIndex)")
    safe = np.where(keep, labels, 0)
    mask = keep.astype(log_prob.dtype)
    w = np.ones(c, log_prob.dtype) if weightOptional is None else \
        _float(weightOptional).astype(log_prob.dtype)
    g = np.broadcast_to(_float(gradLoss).reshape(-1), (n,)).astype(log_prob.dtype)
    e = kind(labelSmoothing)
    taken = np.sum(w[safe] * mask) if reduction == 1 else kind(1)
    nll = g * (1 - e) / taken * mask * w[safe]
    p = np.exp(log_prob)
    grad = p * nll[:, None]
    grad[np.arange(n), safe] -= nll
    smooth = (g / taken * e / kind(c) * mask)[:, None] * w[None, :]
    grad += p * np.sum(smooth, axis=1, keepdims=True) - smooth
    if lseSquareScaleForZloss and lseForZlossOptional is not None:
        gz = g if gradZlossOptional is None else \
            g + np.broadcast_to(_float(gradZlossOptional).reshape(-1), (n,))
        if reduction == 1:
            gz = gz / np.sum(mask)
        lse = _float(lseForZlossOptional).reshape(-1)
        grad += p * (2 * kind(lseSquareScaleForZloss) * lse * mask * gz)[:, None]
    store(out, grad)


# ---- multilabel margin ------------------------------------------------------------------------


def _multilabel_check(self: np.ndarray, target: np.ndarray, reduction: int, out: np.ndarray,
                      isTarget: np.ndarray) -> None:
    """ops-nn loss/multilabel_margin_loss/op_api/aclnn_multilabel_margin_loss.cpp: out and
    isTarget have self's dtype (CheckDtypeValid); CheckShape: self a non-empty vector, a
    matrix of nonzero columns, or 0-d; target self's shape (one element per class); out the
    batch's losses for none of a matrix, else one element; isTarget target's shape."""
    for name, value in (("out", out), ("isTarget", isTarget)):
        if value.dtype != self.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name} and self "
                             f"{self.dtype.name}: they must be equal")
    if not ((self.ndim == 2 and self.shape[1] != 0) or (self.ndim == 1 and self.shape[0] != 0)
            or self.ndim == 0):
        raise ValueError(f"self has shape {list(self.shape)}: it must be a non-empty vector or "
                         "a matrix (its batch may be 0), or 0-d")
    if self.ndim <= 1:
        classes = self.shape[0] if self.ndim else 1
        if target.ndim > 1 or target.size != classes:
            raise ValueError(f"target has shape {list(target.shape)}: inconsistent with self's "
                             f"{list(self.shape)}")
    elif target.shape != self.shape:
        raise ValueError(f"target has shape {list(target.shape)}: inconsistent with self's "
                         f"{list(self.shape)}")
    if reduction == 0 and self.ndim == 2:
        if out.shape != (self.shape[0],):
            raise ValueError(f"out has shape {list(out.shape)}: it must be [{self.shape[0]}]")
    elif out.ndim > 1 or out.size != 1:
        raise ValueError(f"out has shape {list(out.shape)}: it must be a single element")
    if self.ndim == 2 and self.shape[0] == 0:
        if isTarget.ndim > 2 or isTarget.size:
            raise ValueError(f"isTarget has shape {list(isTarget.shape)}: it must be empty")
    elif isTarget.shape != target.shape:
        raise ValueError(f"isTarget has shape {list(isTarget.shape)}: it must be target's, "
                         f"{list(target.shape)}")


@register("aclnnMultilabelMarginLoss", check=_multilabel_check)
def multilabel_margin_loss(self: np.ndarray, target: np.ndarray, reduction: int,
                           out: np.ndarray, isTarget: np.ndarray) -> None:
    """l_n = sum over the labels j before target's first -1 and the classes i not among them of
    max(0, 1 - (x[j] - x[i])) / C; isTarget marks the labels (ops-nn loss/
    multilabel_margin_loss/docs/aclnnMultilabelMarginLoss.md, with PyTorch's margin
    1 - (x[j] - x[i]))."""
    if self.size == 0:
        return
    x = _float(self).reshape(-1, self.shape[-1] if self.ndim else 1)
    labels = target.astype(np.int64).reshape(x.shape)
    classes = x.shape[1]
    listed = np.cumprod(labels >= 0, axis=1).astype(bool)   # before the first -1
    valid_indices("target", labels[listed], 0, classes,
                  f"self has {classes} classes: labels are in [-1, C - 1]")
    rows = np.arange(x.shape[0])[:, None]
    marks = np.zeros(x.shape, bool)
    marks[np.broadcast_to(rows, labels.shape)[listed], labels[listed]] = True
    picked = x[rows, np.where(listed, labels, 0)]             # x[j] per listed label
    margins = np.maximum(1 - picked[:, :, None] + x[:, None, :], 0)
    margins *= (listed[:, :, None] & ~marks[:, None, :])
    loss = margins.sum(axis=(1, 2)) / x.dtype.type(classes)
    store(isTarget, marks.reshape(isTarget.shape))
    if reduction == 0 and self.ndim == 2:
        store(out, loss)
    else:
        total = loss.sum() / (loss.size if reduction == 1 else 1)
        store(out, np.asarray(total).reshape(out.shape))


# ---- connectionist temporal classification -------------------------------------------------------

def _ctc_check(logProbs: np.ndarray, targets: np.ndarray, inputLengths: tuple[int, ...],
               targetlengths: tuple[int, ...], blank: int, zeroInfinity: bool,
               negLogLikelihoodOut: np.ndarray, logAlphaOut: np.ndarray) -> None:
    """ops-nn loss/ctc_loss_v2/op_api/aclnn_ctc_loss.cpp CheckShapeAndParameterValue and
    CheckTargetAndOutShapeParameterValue: logProbs (T, N, C) or (T, C), T > 0; blank in
    [0, C); N input and target lengths, the inputs' at most T; targets (N, >= the longest
    target) or (the lengths' sum); negLogLikelihoodOut (N) (0-d for a 2-d logProbs);
    logAlphaOut (N, T, 2 max + 1 rounded up to 8); both of logProbs' dtype (CheckDtypeValid)."""
    if logProbs.ndim not in (2, 3):
        raise ValueError(f"logProbs has {logProbs.ndim} dimensions: it must have 2 or 3")
    if logProbs.shape[0] == 0:
        raise ValueError("logProbs has no time steps (T is 0)")
    steps, classes = logProbs.shape[0], logProbs.shape[-1]
    batch = logProbs.shape[1] if logProbs.ndim == 3 else 1
    if not 0 <= blank < classes:
        raise ValueError(f"blank is {blank}: it must be in [0, {classes})")
    if len(inputLengths) != batch or (inputLengths and max(inputLengths) > steps):
        raise ValueError(f"inputLengths has {len(inputLengths)} values (at most "
                         f"{max(inputLengths, default=0)}): it must have {batch}, each at most "
                         f"{steps}")
    if len(targetlengths) != batch:
        raise ValueError(f"targetlengths has {len(targetlengths)} values: it must have {batch}")
    longest = max((int(n) for n in targetlengths), default=0)
    if targets.ndim == 2:
        if targets.shape[0] != batch or targets.shape[1] < longest:
            raise ValueError(f"targets has shape {list(targets.shape)}: it must be [{batch}, "
                             f">= {longest}]")
    elif targets.ndim == 1:
        if targets.shape[0] != sum(int(n) for n in targetlengths):
            raise ValueError(f"targets has shape {list(targets.shape)}: it must be "
                             f"[{sum(int(n) for n in targetlengths)}], the lengths' sum")
    else:
        raise ValueError(f"targets has {targets.ndim} dimensions: it must have 1 or 2")
    check_output_shapes("aclnnCtcLoss", {"logProbs": logProbs,
                                         "targetlengths": targetlengths},
                        {"negLogLikelihoodOut": negLogLikelihoodOut,
                         "logAlphaOut": logAlphaOut})
    for name, value in (("negLogLikelihoodOut", negLogLikelihoodOut),
                        ("logAlphaOut", logAlphaOut)):
        if value.dtype != logProbs.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name} and logProbs "
                             f"{logProbs.dtype.name}: they must be equal")


@register("aclnnCtcLoss", check=_ctc_check)
def ctc_loss(logProbs: np.ndarray, targets: np.ndarray, inputLengths: tuple[int, ...],
             targetlengths: tuple[int, ...], blank: int, zeroInfinity: bool,
             negLogLikelihoodOut: np.ndarray, logAlphaOut: np.ndarray) -> None:
    """-log p(l | x) by the forward variables alpha over the targets with blanks between
    (ops-nn loss/ctc_loss_v2/docs/aclnnCtcLoss.md; PyTorch's ctc_loss): alpha[t, s] =
    logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2] unless l'[s] is blank or
    l'[s-2]) + logProbs[t, l'[s]]; every sample and position at once, a loop over time.
    logAlphaOut holds alpha, -inf outside each sample's lengths; zeroInfinity turns an
    infinite loss into 0."""
    lp = _float(logProbs)
    if lp.ndim == 2:
        lp = lp[:, None, :]
    steps, batch, _ = lp.shape
    kind = lp.dtype.type
    lengths = np.asarray(targetlengths, np.int64).reshape(batch)
    inputs = np.asarray(inputLengths, np.int64).reshape(batch)
    longest = int(lengths.max(initial=0))
    labels = np.zeros((batch, longest), np.int64)
    if targets.ndim == 2:
        labels[:, :] = targets[:, :longest].astype(np.int64)
    else:
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        for n in range(batch):   # one row per sample (not per element)
            labels[n, :lengths[n]] = targets[starts[n]:starts[n] + lengths[n]].astype(np.int64)
    width = 2 * longest + 1
    extended = np.full((batch, width), blank, np.int64)
    extended[:, 1::2] = labels
    positions = np.arange(width)
    valid = positions[None, :] < (2 * lengths + 1)[:, None]
    skip = np.zeros((batch, width), bool)
    skip[:, 2:] = (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])
    rows = np.arange(batch)[:, None]
    minus = kind(-np.inf)
    alpha = np.full((steps, batch, width), minus, lp.dtype)
    first = lp[0][rows, extended]
    alpha[0][:, :min(2, width)] = first[:, :min(2, width)]
    alpha[0][~valid] = minus
    for t in range(1, steps):
        previous = alpha[t - 1]
        shifted1 = np.concatenate([np.full((batch, 1), minus), previous[:, :-1]], axis=1)
        shifted2 = np.concatenate([np.full((batch, 2), minus), previous[:, :-2]], axis=1)
        shifted2 = np.where(skip, shifted2, minus)
        top = np.maximum(np.maximum(previous, shifted1), shifted2)
        safe = np.where(np.isfinite(top), top, kind(0))
        total = np.exp(previous - safe) + np.exp(shifted1 - safe) + np.exp(shifted2 - safe)
        step = np.where(np.isfinite(top), np.log(total) + safe, minus) + lp[t][rows, extended]
        active = valid & (t < inputs)[:, None]
        alpha[t] = np.where(active, step, minus)
    last = np.maximum(inputs - 1, 0)
    ends = alpha[last, np.arange(batch)]                       # (batch, width)
    end_a = ends[np.arange(batch), 2 * lengths]
    end_b = np.where(lengths > 0, ends[np.arange(batch), np.maximum(2 * lengths - 1, 0)], minus)
    top = np.maximum(end_a, end_b)
    safe = np.where(np.isfinite(top), top, kind(0))
    loss = -(np.log(np.exp(end_a - safe) + np.exp(end_b - safe)) + safe)
    loss = np.where(np.isfinite(top), loss, kind(np.inf))
    if zeroInfinity:
        loss = np.where(np.isinf(loss), kind(0), loss)
    store(negLogLikelihoodOut, loss.reshape(negLogLikelihoodOut.shape))
    result = np.full(logAlphaOut.shape, minus, lp.dtype)
    result[:, :, :width] = np.transpose(alpha, (1, 0, 2))
    store(logAlphaOut, result)
