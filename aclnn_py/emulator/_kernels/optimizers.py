"""Optimizer kernels: aclnnApplyAdamWV2, aclnnFusedAdamw, aclnnFusedSgd, aclnnApplyFusedEmaAdam
and aclnnAmpUpdateScale.

Each updates its state tensors in place (the ``...Ref`` parameters) as CANN's kernels do: every
tensor widened to float32, the update computed with the scalars rounded to float32, and each
state rounded once into its own dtype. The formulas and the order of the steps are those of
ops-nn optim/apply_adam_w_v2/op_kernel/apply_adam_w_v2_fp.h, optim/fused_adamw/op_kernel/
fused_adamw_kernel.h, optim/fused_sgd/op_kernel/fused_sgd_f32.h, optim/apply_fused_ema_adam/
docs/aclnnApplyFusedEmaAdam.md and ops-math math/amp_update_scale/op_kernel/amp_update_scale.h.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._c.codes import constant
from ...ops.dtypes import Dtypes
from . import Refusal, store
from .elementwise import FLOATS
from .elementwise import register as builtin

_F32 = np.float32
_NULLPTR = constant("ACLNN_ERR_PARAM_NULLPTR")  # 161001
_STEPS = Dtypes(("float32", "int64"))


def _f32(array: Any) -> Any:
    """A float32 copy of ``array`` (always a copy: the kernels update it)."""
    return np.array(array, dtype=_F32)


def _same_shapes(reference: str, shape: tuple[int, ...], **tensors: Any) -> None:
    for name, value in tensors.items():
        if value is not None and value.shape != shape:
            raise ValueError(f"{name} has shape {value.shape}: it must be {reference}'s shape "
                             f"{shape}")


def _one_element(name: str, value: Any) -> None:
    if value is not None and value.size != 1:
        raise ValueError(f"{name} has {value.size} elements: it must have exactly one")


def _adamw(var: Any, m: Any, v: Any, max_sq: Any, grad: Any, step: float, lr: float,
           beta1: float, beta2: float, weight_decay: float, eps: float, maximize: bool) -> Any:
    """One AdamW step over float32 arrays, step already counted (1 on the first); returns the
    new (var, m, v, max_sq)."""
    b1, b2 = _F32(beta1), _F32(beta2)
    correction1 = _F32(1) - np.power(b1, _F32(step))
    correction2 = _F32(1) - np.power(b2, _F32(step))
    step_size = _F32(lr) / correction1
    inverse_sqrt2 = _F32(1) / np.sqrt(correction2)
    if maximize:
        grad = -grad
    var *= _F32(1) - _F32(lr) * _F32(weight_decay)  # the arrays are the kernel's own copies
    m += (grad - m) * (_F32(1) - b1)
    v *= b2
    v += np.square(grad) * (_F32(1) - b2)
    if max_sq is not None:
        np.maximum(max_sq, v, out=max_sq)
    denom = np.sqrt(max_sq if max_sq is not None else v)
    denom *= inverse_sqrt2
    denom += _F32(eps)
    np.divide(m, denom, out=denom)
    denom *= step_size
    var -= denom
    return var, m, v, max_sq


# ---- aclnnApplyAdamWV2 ----------------------------------------------------------------------

def _apply_adam_w_v2_check(varRef: np.ndarray, mRef: np.ndarray, vRef: np.ndarray,
                           maxGradNormOptionalRef: Any, grad: np.ndarray, step: np.ndarray,
                           lr: float, beta1: float, beta2: float, weightDecay: float,
                           eps: float, amsgrad: bool, maximize: bool) -> None:
    """ops-nn optim/apply_adam_w_v2/op_host/op_api/aclnn_apply_adam_w_v2.cpp: CheckNotNull
    (maxGradNormOptionalRef given when amsgrad) and CheckShape (mRef, vRef,
    maxGradNormOptionalRef and grad of varRef's shape; step of one element)."""
    if amsgrad and maxGradNormOptionalRef is None:
        raise Refusal("maxGradNormOptionalRef is null: it must be given when amsgrad is true",
                      _NULLPTR)
    _same_shapes("varRef", varRef.shape, mRef=mRef, vRef=vRef,
                 maxGradNormOptionalRef=maxGradNormOptionalRef, grad=grad)
    _one_element("step", step)


@builtin("aclnnApplyAdamWV2", dtypes={"varRef": FLOATS, "mRef": FLOATS, "vRef": FLOATS,
                                      "maxGradNormOptionalRef": FLOATS, "grad": FLOATS,
                                      "step": _STEPS},
         check=_apply_adam_w_v2_check)
def apply_adam_w_v2(varRef: np.ndarray, mRef: np.ndarray, vRef: np.ndarray,
                    maxGradNormOptionalRef: Any, grad: np.ndarray, step: np.ndarray, lr: float,
                    beta1: float, beta2: float, weightDecay: float, eps: float, amsgrad: bool,
                    maximize: bool) -> None:
    """AdamW, the kernel counting this step (step + 1); maxGradNormOptionalRef, the running
    maximum of v, only with amsgrad (aclnn_apply_adam_w_v2.cpp: any dtype mix is computed in
    float32 and cast back)."""
    if varRef.size == 0:
        return
    max_sq = _f32(maxGradNormOptionalRef) if amsgrad else None
    var, m, v, max_sq = _adamw(_f32(varRef), _f32(mRef), _f32(vRef), max_sq, _f32(grad),
                               float(_F32(np.asarray(step).reshape(-1)[0])) + 1.0, lr, beta1,
                               beta2, weightDecay, eps, maximize)
    store(varRef, var)
    store(mRef, m)
    store(vRef, v)
    if max_sq is not None:
        store(maxGradNormOptionalRef, max_sq)


# ---- aclnnFusedAdamw ------------------------------------------------------------------------

def _fused_adamw_check(paramsRef: list[np.ndarray], grads: list[np.ndarray],
                       expAvgsRef: list[np.ndarray], expAvgSqsRef: list[np.ndarray],
                       maxExpAvgSqsRef: Any, stateSteps: list[np.ndarray],
                       gradScaleOptional: Any, foundInfOptional: Any, lr: float, beta1: float,
                       beta2: float, weightDecay: float, eps: float, amsgrad: bool,
                       maximize: bool) -> None:
    """ops-nn optim/fused_adamw/op_api/aclnn_fused_adamw.cpp: CheckAttr (lr, beta1, beta2 and
    weightDecay not negative; maxExpAvgSqsRef given with amsgrad), CheckTensorListCount (a
    non-empty paramsRef; every list as long), CheckDtype (one dtype, float32, float16 or
    bfloat16, over the tensors; stateSteps float32 or int64, all alike) and CheckShape (each
    tensor of its param's shape)."""
    for name, value in (("lr", lr), ("beta1", beta1), ("beta2", beta2),
                        ("weightDecay", weightDecay)):
        if value < 0:
            raise ValueError(f"{name} is {value}: it must be greater than or equal to 0")
    if amsgrad and maxExpAvgSqsRef is None:
        raise ValueError("maxExpAvgSqsRef is null: it must be given when amsgrad is true")
    if not paramsRef:
        raise ValueError("paramsRef is an empty tensor list")
    lists = {"grads": grads, "expAvgsRef": expAvgsRef, "expAvgSqsRef": expAvgSqsRef,
             "stateSteps": stateSteps, "maxExpAvgSqsRef": maxExpAvgSqsRef}
    for name, value in lists.items():
        if value is not None and len(value) != len(paramsRef):
            raise ValueError(f"{name} has {len(value)} tensors: it must have paramsRef's "
                             f"{len(paramsRef)}")
    dtype = paramsRef[0].dtype
    if dtype not in FLOATS:
        raise ValueError(f"paramsRef has dtype {dtype.name}: it must be float32, float16 or "
                         "bfloat16")
    if stateSteps[0].dtype not in _STEPS or \
            any(s.dtype != stateSteps[0].dtype for s in stateSteps):
        raise ValueError("stateSteps must all have one dtype, float32 or int64")
    for name, members in (("paramsRef", paramsRef), ("grads", grads),
                          ("expAvgsRef", expAvgsRef), ("expAvgSqsRef", expAvgSqsRef),
                          ("maxExpAvgSqsRef", maxExpAvgSqsRef)):
        if members is not None and any(t.dtype != dtype for t in members):
            raise ValueError(f"{name}'s tensors must have paramsRef's dtype {dtype.name}")
    for index, param in enumerate(paramsRef):
        for name, members in (("grads", grads), ("expAvgsRef", expAvgsRef),
                              ("expAvgSqsRef", expAvgSqsRef)):
            if members[index].shape != param.shape:
                raise ValueError(f"{name}[{index}] has shape {members[index].shape}: it must be "
                                 f"paramsRef[{index}]'s shape {param.shape}")


def _scalar_of(tensor: Any) -> float | None:
    """The value of an optional one-element tensor, None when absent or empty (CANN's
    CheckOptionalTensorEmpty takes an empty one for none)."""
    if tensor is None or tensor.size == 0:
        return None
    return float(_F32(np.asarray(tensor).reshape(-1)[0]))


@builtin("aclnnFusedAdamw", dtypes=None, check=_fused_adamw_check)
def fused_adamw(paramsRef: list[np.ndarray], grads: list[np.ndarray],
                expAvgsRef: list[np.ndarray], expAvgSqsRef: list[np.ndarray],
                maxExpAvgSqsRef: Any, stateSteps: list[np.ndarray], gradScaleOptional: Any,
                foundInfOptional: Any, lr: float, beta1: float, beta2: float,
                weightDecay: float, eps: float, amsgrad: bool, maximize: bool) -> None:
    """AdamW over each list entry, its step stateSteps[i] + 1; grads divided by
    gradScaleOptional first; no update at all when foundInfOptional is 1."""
    if _scalar_of(foundInfOptional) == 1.0:
        return
    scale = _scalar_of(gradScaleOptional)
    for index, param in enumerate(paramsRef):
        if param.size == 0:
            continue
        grad = _f32(grads[index])
        if scale is not None:
            grad = grad * (_F32(1) / _F32(scale))
        max_sq = _f32(maxExpAvgSqsRef[index]) if amsgrad else None
        step = float(_F32(np.asarray(stateSteps[index]).reshape(-1)[0])) + 1.0
        var, m, v, max_sq = _adamw(_f32(param), _f32(expAvgsRef[index]),
                                   _f32(expAvgSqsRef[index]), max_sq, grad, step, lr, beta1,
                                   beta2, weightDecay, eps, maximize)
        store(param, var)
        store(expAvgsRef[index], m)
        store(expAvgSqsRef[index], v)
        if max_sq is not None:
            store(maxExpAvgSqsRef[index], max_sq)


# ---- aclnnFusedSgd --------------------------------------------------------------------------

_SGD_EPS = 1e-6  # aclnn_fused_sgd.cpp CheckAttr: |x| < 1e-6 counts as 0


def _fused_sgd_check(paramsRef: list[np.ndarray], gradsRef: list[np.ndarray],
                     momentumBufferListOptionalRef: Any, gradScaleOptional: Any,
                     weightDecay: float, momentum: float, lr: float, dampening: float,
                     nesterov: bool, maximize: bool, isFirstStep: bool) -> None:
    """ops-nn optim/fused_sgd/op_api/aclnn_fused_sgd.cpp: CheckAttr (weightDecay, momentum
    and lr not negative; nesterov needs momentum > 0 and dampening 0; momentum 0 without a
    momentum list and > 0 with one, an empty list counting as none), CheckTensorListCount,
    CheckDtype (one dtype, float32, float16 or bfloat16) and CheckShape (rank at most 8, each
    grad and buffer of its param's shape)."""
    buffers = momentumBufferListOptionalRef or None
    _fused_sgd_attribute_check(buffers, weightDecay, momentum, lr, dampening, nesterov)
    _fused_sgd_count_check(paramsRef, gradsRef, buffers)
    _fused_sgd_dtype_check(paramsRef, gradsRef, buffers)
    _fused_sgd_shape_check(paramsRef, gradsRef, buffers)


def _fused_sgd_attribute_check(buffers: list[np.ndarray] | None, weightDecay: float,
                               momentum: float, lr: float, dampening: float,
                               nesterov: bool) -> None:
    """CheckAttr: weightDecay, momentum and lr not negative; nesterov needs momentum > 0 and
    dampening 0; momentum 0 without a momentum list (``buffers`` None) and > 0 with one."""
    for name, value in (("weightDecay", weightDecay), ("momentum", momentum), ("lr", lr)):
        if value < 0:
            raise ValueError(f"{name} is {value}: it must be greater than or equal to 0")
    if nesterov and (momentum <= 0 or abs(dampening) >= _SGD_EPS):
        raise ValueError(f"nesterov needs momentum > 0 and dampening 0, not momentum "
                         f"{momentum} and dampening {dampening}")
    if buffers is None and abs(momentum) >= _SGD_EPS:
        raise ValueError(f"momentum is {momentum}: it must be 0 without "
                         "momentumBufferListOptionalRef")
    if buffers is not None and abs(momentum) < _SGD_EPS:
        raise ValueError(f"momentum is {momentum}: it must be greater than 0 with "
                         "momentumBufferListOptionalRef")


def _fused_sgd_count_check(paramsRef: list[np.ndarray], gradsRef: list[np.ndarray],
                           buffers: list[np.ndarray] | None) -> None:
    """CheckTensorListCount: paramsRef not empty, gradsRef and the momentum list (when
    given) as long as paramsRef."""
    if not paramsRef:
        raise ValueError("paramsRef is an empty tensor list")
    for name, members in (("gradsRef", gradsRef), ("momentumBufferListOptionalRef", buffers)):
        if members is not None and len(members) != len(paramsRef):
            raise ValueError(f"{name} has {len(members)} tensors: it must have paramsRef's "
                             f"{len(paramsRef)}")


def _fused_sgd_dtype_check(paramsRef: list[np.ndarray], gradsRef: list[np.ndarray],
                           buffers: list[np.ndarray] | None) -> None:
    """CheckDtype: every tensor of the lists of one dtype, float32, float16 or bfloat16."""
    dtype = paramsRef[0].dtype
    if dtype not in FLOATS:
        raise ValueError(f"paramsRef has dtype {dtype.name}: it must be float32, float16 or "
                         "bfloat16")
    for name, members in (("paramsRef", paramsRef), ("gradsRef", gradsRef),
                          ("momentumBufferListOptionalRef", buffers)):
        if members is not None and any(t.dtype != dtype for t in members):
            raise ValueError(f"{name}'s tensors must have paramsRef's dtype {dtype.name}")


def _fused_sgd_shape_check(paramsRef: list[np.ndarray], gradsRef: list[np.ndarray],
                           buffers: list[np.ndarray] | None) -> None:
    """CheckShape: each param of rank at most 8, its grad and buffer of its shape."""
    for index, param in enumerate(paramsRef):
        if param.ndim > 8:
            raise ValueError(f"paramsRef[{index}] has rank {param.ndim}: at most 8")
        for name, members in (("gradsRef", gradsRef), ("momentumBufferListOptionalRef", buffers)):
            if members is not None and members[index].shape != param.shape:
                raise ValueError(f"{name}[{index}] has shape {members[index].shape}: it must be "
                                 f"paramsRef[{index}]'s shape {param.shape}")


@builtin("aclnnFusedSgd", dtypes=None, check=_fused_sgd_check)
def fused_sgd(paramsRef: list[np.ndarray], gradsRef: list[np.ndarray],
              momentumBufferListOptionalRef: Any, gradScaleOptional: Any, weightDecay: float,
              momentum: float, lr: float, dampening: float, nesterov: bool, maximize: bool,
              isFirstStep: bool) -> None:
    """SGD with momentum: grad / gradScale (written back to gradsRef), negated with maximize,
    plus weightDecay param; the buffer grad on the first step, else momentum buf +
    (1 - dampening) grad; nesterov steps by grad + momentum buf, else by buf;
    param -= lr step."""
    buffers = momentumBufferListOptionalRef or None
    scale = _scalar_of(gradScaleOptional)
    for index, param in enumerate(paramsRef):
        if param.size == 0:
            continue
        grad = _f32(gradsRef[index])
        if scale is not None:
            grad = grad * (_F32(1) / _F32(scale))
            store(gradsRef[index], grad)
        if maximize:
            grad = -grad
        value = _f32(param)
        if weightDecay != 0.0:
            grad = grad + value * _F32(weightDecay)
        if buffers is not None:
            if isFirstStep:
                buf = grad
            else:
                buf = _f32(buffers[index]) * _F32(momentum) + grad * (_F32(1) - _F32(dampening))
            store(buffers[index], buf)
            grad = grad + buf * _F32(momentum) if nesterov else buf
        store(param, value - grad * _F32(lr))


# ---- aclnnApplyFusedEmaAdam -----------------------------------------------------------------

def _ema_adam_check(grad: np.ndarray, varRef: np.ndarray, mRef: np.ndarray, vRef: np.ndarray,
                    sRef: np.ndarray, step: np.ndarray, lr: float, emaDecay: float,
                    beta1: float, beta2: float, eps: float, mode: int, biasCorrection: bool,
                    weightDecay: float) -> None:
    """ops-nn optim/apply_fused_ema_adam/docs/aclnnApplyFusedEmaAdam.md: varRef, mRef, vRef
    and sRef of grad's dtype and shape; step one int64 element; mode 0 or 1."""
    for name, value in (("varRef", varRef), ("mRef", mRef), ("vRef", vRef), ("sRef", sRef)):
        if value.dtype != grad.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be grad's dtype "
                             f"{grad.dtype.name}")
    _same_shapes("grad", grad.shape, varRef=varRef, mRef=mRef, vRef=vRef, sRef=sRef)
    _one_element("step", step)
    if mode not in (0, 1):
        raise ValueError(f"mode is {mode}: it must be 0 (L2 weight decay) or 1 (AdamW)")


@builtin("aclnnApplyFusedEmaAdam", dtypes={"grad": FLOATS, "step": Dtypes(("int64",))},
         check=_ema_adam_check)
def apply_fused_ema_adam(grad: np.ndarray, varRef: np.ndarray, mRef: np.ndarray,
                         vRef: np.ndarray, sRef: np.ndarray, step: np.ndarray, lr: float,
                         emaDecay: float, beta1: float, beta2: float, eps: float, mode: int,
                         biasCorrection: bool, weightDecay: float) -> None:
    """Adam (mode 0: weight decay added to grad; 1: to the update) then the EMA
    s = emaDecay s + (1 - emaDecay) var, with step as given (the kernel does not count it)."""
    if grad.size == 0:
        return
    b1, b2 = _F32(beta1), _F32(beta2)
    count = _F32(np.asarray(step).reshape(-1)[0])
    correction1 = _F32(1) - np.power(b1, count) if biasCorrection else _F32(1)
    correction2 = _F32(1) - np.power(b2, count) if biasCorrection else _F32(1)
    g, var = _f32(grad), _f32(varRef)
    if mode == 0:
        g = g + var * _F32(weightDecay)
    m = _f32(mRef) * b1 + g * (_F32(1) - b1)
    v = _f32(vRef) * b2 + g * g * (_F32(1) - b2)
    update = (m / correction1) / (np.sqrt(v / correction2) + _F32(eps))
    if mode == 1:
        update = update + var * _F32(weightDecay)
    var = var - update * _F32(lr)
    s = _f32(sRef) * _F32(emaDecay) + var * (_F32(1) - _F32(emaDecay))
    store(mRef, m)
    store(vRef, v)
    store(varRef, var)
    store(sRef, s)


# ---- aclnnAmpUpdateScale --------------------------------------------------------------------

def _amp_update_scale_check(currentScale: np.ndarray, growthTracker: np.ndarray,
                            foundInf: np.ndarray, growthFactor: float, backoffFactor: float,
                            growthInterval: int, updatedScale: np.ndarray,
                            updatedGrowthTracker: np.ndarray) -> None:
    """ops-math math/amp_update_scale/docs/aclnnAmpUpdateScale.md and op_host/
    amp_update_scale_tiling.cpp: every tensor one element of shape [1]; growthTracker and
    updatedGrowthTracker int32; foundInf and updatedScale of currentScale's dtype;
    growthInterval in [1, INT32_MAX]."""
    for name, value in (("currentScale", currentScale), ("growthTracker", growthTracker),
                        ("foundInf", foundInf), ("updatedScale", updatedScale),
                        ("updatedGrowthTracker", updatedGrowthTracker)):
        if value.size != 1 or value.ndim > 1:
            raise ValueError(f"{name} has shape {value.shape}: it must be [1]")
    for name, value in (("growthTracker", growthTracker),
                        ("updatedGrowthTracker", updatedGrowthTracker)):
        if value.dtype != np.int32:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be int32")
    for name, value in (("foundInf", foundInf), ("updatedScale", updatedScale)):
        if value.dtype != currentScale.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be currentScale's "
                             f"dtype {currentScale.dtype.name}")
    if not 1 <= growthInterval <= 2**31 - 1:
        raise ValueError(f"growthInterval is {growthInterval}: it must be in [1, INT32_MAX]")


@builtin("aclnnAmpUpdateScale", dtypes={"currentScale": FLOATS, "foundInf": FLOATS,
                                        "growthTracker": Dtypes(("int32",))},
         check=_amp_update_scale_check)
def amp_update_scale(currentScale: np.ndarray, growthTracker: np.ndarray, foundInf: np.ndarray,
                     growthFactor: float, backoffFactor: float, growthInterval: int,
                     updatedScale: np.ndarray, updatedGrowthTracker: np.ndarray) -> None:
    """Dynamic loss scaling: scale backoffFactor and tracker 0 when foundInf is not 0; else
    the tracker counts, and at growthInterval scale growthFactor (kept when not finite) and
    tracker 0; scale in float32."""
    scale = _F32(np.asarray(currentScale).reshape(-1)[0])
    tracker = int(np.asarray(growthTracker).reshape(-1)[0])
    if _F32(np.asarray(foundInf).reshape(-1)[0]) != 0:
        scale, tracker = scale * _F32(backoffFactor), 0
    elif tracker + 1 == growthInterval:
        grown = scale * _F32(growthFactor)
        scale, tracker = (grown if np.isfinite(grown) else scale), 0
    else:
        tracker += 1
    store(updatedScale, np.full(updatedScale.shape, scale, _F32))
    updatedGrowthTracker[...] = np.int32(tracker)
