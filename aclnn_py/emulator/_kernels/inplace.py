"""In-place forms of operators the emulator computes out of place, and the clamps whose bounds
are tensors.

CANN's ``aclnnInplaceXxx`` computes what ``aclnnXxx`` computes with its first tensor as the
output (the docs of each pair are one page: ops-math math/cos/docs/aclnnCos&aclnnInplaceCos.md
and the like): ``selfRef = Xxx(selfRef, ...)``, the result cast to selfRef's dtype (a
comparison writes 1 or 0 in it, as PyTorch's ``eq_``). Each kernel here runs the out-of-place
kernel on a copy of selfRef, selfRef as its output; its check is the out-of-place kernel's, with
selfRef as the output, and the other tensors of an elementwise one must broadcast to
selfRef's shape (an in-place result cannot grow).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import KERNELS, broadcasts_to, parameters_of, store
from . import activations as _activations  # noqa: F401 - the out-of-place kernels, first
from . import bitwise as _bitwise  # noqa: F401
from . import matmul as _matmul  # noqa: F401
from . import nn as _nn  # noqa: F401
from . import norms as _norms  # noqa: F401
from . import pointwise_math as _pointwise_math  # noqa: F401
from . import random_fills as _random_fills  # noqa: F401
from . import shapes as _shapes  # noqa: F401
from . import vector_products as _vector_products  # noqa: F401
from .elementwise import _first_on_ties, apply, compute_dtype, promote_types, register

# in-place operator -> its out-of-place operator (the unary ones of elementwise.UNARY are
# listed in elementwise.INPLACE_UNARY)
INPLACE_OF: dict[str, str] = {
    "aclnnInplaceRenorm": "aclnnRenorm",
    **{f"aclnnInplace{name}": f"aclnn{name}" for name in (
        "Cos", "Sin", "Acos", "Atan", "Asin", "Tan", "Sinh", "Cosh", "Rsqrt", "Erf", "Erfinv",
        "Expm1", "Log2", "Log10", "Log1p", "Reciprocal", "Floor", "Ceil", "Trunc", "Round",
        "Mish", "Hardswish", "Hardsigmoid", "Hardtanh", "LeakyRelu", "Elu", "ClampMax",
        "Lerp", "Lerps", "Addcdiv", "Addcmul", "Tril", "Triu", "Addmm", "Baddbmm", "FloorDivide",
        "Atan2", "PowTensorScalar", "PowTensorTensor", "LogicalNot", "LogicalOr",
        "LogicalAnd", "ClampMinTensor", "ClampMaxTensor",
        # ops-math math/: the pointwise and bitwise families
        "Sinc", "Acosh", "Asinh", "Erfc", "Exp2", "Atanh", "RemainderTensorTensor",
        "RemainderTensorScalar", "RoundDecimals", "FmodTensor", "FmodScalar", "XLogYTensor",
        "XLogYScalarOther", "FloorDivides", "BitwiseAndTensor", "BitwiseAndScalar",
        "BitwiseOrTensor", "BitwiseOrScalar", "BitwiseXorTensor", "BitwiseXorScalar", "Addr",
        "Selu", "Celu", "Addbmm",
        # ops-math random/: the in-place Bernoulli draws (self is also the output)
        "Bernoulli", "BernoulliTensor")},
    **{f"aclnnInplace{name}{form}": f"aclnn{name}{form}"
       for name in ("Eq", "Ne", "Gt", "Ge", "Lt", "Le") for form in ("Scalar", "Tensor")},
}


# the products, whose operands do not broadcast to the result: their own checks judge shapes
PRODUCTS = frozenset({"aclnnAddmm", "aclnnBaddbmm", "aclnnAddr", "aclnnAddbmm"})


def _broadcasts_into(target: np.ndarray, arguments: dict[str, Any]) -> None:
    """Every tensor argument broadcasts to ``target``'s shape."""
    for name, value in arguments.items():
        if not isinstance(value, np.ndarray) or value is target:
            continue
        if not broadcasts_to(value.shape, target.shape):
            raise ValueError(f"{name} has shape {list(value.shape)}, which does not broadcast "
                             f"to the shape {list(target.shape)} of the tensor updated in "
                             "place")


def _base_arguments(base: str, inplace: tuple[str, ...], values: dict[str, Any],
                    copy: bool) -> dict[str, Any]:
    """The out-of-place kernel's arguments: its first tensor and its out are the in-place
    tensor (the first a copy when ``copy``), the others by position."""
    names = KERNELS[base].parameters
    target = values[inplace[0]]
    others = [name for name in names if name not in (names[0], "out")]
    given = [values[name] for name in inplace[1:]]
    arguments = dict(zip(others, given))
    arguments[names[0]] = target.copy() if copy else target
    arguments["out"] = target
    # in the kernel's parameter order: some kernels read their arguments by position
    return {name: arguments[name] for name in names}


def inplace_form(name: str, base: str, elementwise: bool = True) -> None:
    """Register ``name`` as the in-place form of ``base`` (computed by base's kernel on a copy
    of its first tensor, into it); ``elementwise``: the other tensors must broadcast to the
    first (false for operators whose operands have shapes of their own: products, indexing)."""
    inplace = parameters_of(name)
    names = KERNELS[base].parameters
    if inplace is None or "out" not in names or len(names) != len(inplace) + 1:
        raise RuntimeError(f"{name} does not take {base}'s parameters less out")
    base_check = KERNELS[base].check

    def check(**values: Any) -> None:
        target = values[inplace[0]]
        if elementwise:
            _broadcasts_into(target, {key: value for key, value in values.items()
                                      if key != inplace[0]})
        if base_check is not None:
            base_check(**_base_arguments(base, inplace, values, False))

    def compute(**values: Any) -> None:
        if values[inplace[0]].size:
            KERNELS[base].compute(**_base_arguments(base, inplace, values, True))

    register(name, dtypes=_renamed_dtypes(KERNELS[base].dtypes, names, inplace),
             check=check)(compute)


def _renamed_dtypes(dtypes: Any, names: tuple[str, ...], inplace: tuple[str, ...]) -> Any:
    """The out-of-place kernel's dtypes by the in-place operator's parameter names: its first
    tensor's (and out's) are the in-place tensor's, the others by position."""
    if not isinstance(dtypes, dict):
        return dtypes
    others = [name for name in names if name not in (names[0], "out")]
    renamed = {names[0]: inplace[0], **dict(zip(others, inplace[1:]))}
    return {renamed[key]: value for key, value in dtypes.items() if key in renamed}


# ---- clamps with tensor bounds -------------------------------------------------------------


def _clamp_tensors(target: np.ndarray, x: Any, low: Any, high: Any) -> None:
    """min(max(x, low), high); NaN in any operand propagates, as PyTorch's clamp with tensor
    bounds."""
    if low is None:
        _first_on_ties(np.minimum)(target, x, high)
        return
    _first_on_ties(np.maximum)(target, x, low)
    if high is not None:
        _first_on_ties(np.minimum)(target, target.copy(), high)


def _clamp_check(self: np.ndarray, low: np.ndarray | None, high: np.ndarray | None,
                 out: np.ndarray) -> None:
    shapes = [a.shape for a in (self, low, high) if a is not None]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"self, the bounds and out must broadcast: the shapes "
                         f"{', '.join(map(str, shapes))} do not") from None
    if shape != out.shape:
        raise ValueError(f"out has shape {list(out.shape)}, but self and the bounds broadcast "
                         f"to {list(shape)}")
    if low is None and high is None:
        raise ValueError("at least one of clipValueMin and clipValueMax must be given")


def _clamp_into(self: np.ndarray, low: np.ndarray | None, high: np.ndarray | None,
                out: np.ndarray) -> None:
    """The bounds promote with self (ops-math conversion/clamp/docs/aclnnClampTensor.md: self,
    clipValueMin and clipValueMax satisfy the promotion rules); computed in the promoted
    dtype (float32 for float16 and bfloat16), rounded once into out."""
    if out.size == 0:
        return
    dtype = self.dtype
    for bound in (low, high):
        if bound is not None:
            dtype = promote_types(dtype, bound.dtype)
    dtype = compute_dtype(dtype)
    operands: list[Any] = [self, low, high]
    apply(out, _clamp_tensors, operands, dtype)


def _clamp_tensor_check(self: np.ndarray, clipValueMin: np.ndarray | None,
                        clipValueMax: np.ndarray | None, out: np.ndarray) -> None:
    _clamp_check(self, clipValueMin, clipValueMax, out)


@register("aclnnClampTensor", check=_clamp_tensor_check)
def clamp_tensor(self: np.ndarray, clipValueMin: np.ndarray | None,
                 clipValueMax: np.ndarray | None, out: np.ndarray) -> None:
    """out = min(max(self, clipValueMin), clipValueMax), either bound may be left out."""
    _clamp_into(self, clipValueMin, clipValueMax, out)


def _clamp_min_check(self: np.ndarray, clipValueMin: np.ndarray, out: np.ndarray) -> None:
    _clamp_check(self, clipValueMin, None, out)


@register("aclnnClampMinTensor", check=_clamp_min_check)
def clamp_min_tensor(self: np.ndarray, clipValueMin: np.ndarray, out: np.ndarray) -> None:
    """out = max(self, clipValueMin)."""
    _clamp_into(self, clipValueMin, None, out)


def _clamp_max_check(self: np.ndarray, max: np.ndarray, out: np.ndarray) -> None:  # noqa: A002
    _clamp_check(self, None, max, out)


@register("aclnnClampMaxTensor", check=_clamp_max_check)
def clamp_max_tensor(self: np.ndarray, max: np.ndarray, out: np.ndarray) -> None:  # noqa: A002
    """out = min(self, max)."""
    _clamp_into(self, None, max, out)


# ---- fills with a tensor value -------------------------------------------------------------


def _fill_check(selfRef: np.ndarray, value: np.ndarray) -> None:
    if selfRef.ndim > 8:  # CANN's UT: case_019_MAX_DIM of ops-math's test_aclnn_fill_tensor.cpp
        raise ValueError(f"selfRef has {selfRef.ndim} dimensions: it may have at most 8")
    # ops-math conversion/fill/op_api/aclnn_fill_tensor.cpp CheckShape: 0-d, or 1-d of one
    if value.ndim > 1 or value.size != 1:
        raise ValueError(f"value has shape {list(value.shape)}: it must be 0-d or 1-d of one "
                         "element")


@register("aclnnInplaceFillTensor", check=_fill_check)
def inplace_fill_tensor(selfRef: np.ndarray, value: np.ndarray) -> None:
    """selfRef = value, a tensor of one element (ops-math tensor/fill/docs/
    aclnnInplaceFillTensor.md)."""
    store(selfRef, np.broadcast_to(value.reshape(()), selfRef.shape))


def _masked_fill_check(selfRef: np.ndarray, mask: np.ndarray, value: np.ndarray) -> None:
    _fill_check(selfRef, value)
    _broadcasts_into(selfRef, {"mask": mask})


@register("aclnnInplaceMaskedFillTensor", check=_masked_fill_check)
def inplace_masked_fill_tensor(selfRef: np.ndarray, mask: np.ndarray, value: np.ndarray
                               ) -> None:
    """selfRef = value where mask (broadcast to selfRef) is true."""
    selfRef[np.broadcast_to(mask.astype(bool), selfRef.shape)] = \
        value.reshape(()).astype(selfRef.dtype)


for _name, _base in INPLACE_OF.items():
    inplace_form(_name, _base, _base not in PRODUCTS)
