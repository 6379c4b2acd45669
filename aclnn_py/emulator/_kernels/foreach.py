"""The foreach family: one elementwise operation over each tensor of a tensor list (what
PyTorch's optimizers call through ``torch._foreach_*``).

Each operator of ops-nn ``foreach/*`` computes, for i = 0 .. n-1, ``y_i = f(x_i, ...)``
(ops-nn foreach/<name>/docs/aclnnForeach<Name>.md); the per-tensor operation is the one of
the matching single-tensor kernel (:mod:`.elementwise`), so each tensor computes as that
operator does (float16 and bfloat16 widened to float32, rounded once into out). A scalar given
as an aclTensor holds one element (``scalar``, ``alpha``, ``roundMode``), or one per tensor of
the list (``scalars`` of the Addcdiv/Addcmul List and ScalarList forms); the Add, Sub, Mul,
Div, Maximum, Minimum and Pow ScalarList forms take an aclScalarList, one scalar per tensor.

Every list has as many tensors as the first; an output tensor has the dtype of its input
and at least its number of elements (the docs' "shape size大于等于"): the result fills its first
elements in C order when its shape differs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import Refusal, tensor_format
from .elementwise import (
    UNARY,
    _first_on_ties,
    _lerp,
    _ufunc,
    _unary_dtype,
    apply,
    compute_dtype,
    register,
)
from .pointwise_math import _erfc64

# ---- the checks ---------------------------------------------------------------------------


def _lists(first: str, tensors: list[np.ndarray], **others: list[np.ndarray] | None) -> None:
    """Every list of ``others`` has as many tensors as ``tensors`` (the list named ``first``),
    and every tensor of ``tensors`` has its dtype (the docs: 所有Tensor的数据类型保持一致)."""
    if not tensors:
        raise ValueError(f"{first} is an empty tensor list: it must hold at least one tensor")
    dtype = tensors[0].dtype
    for index, tensor in enumerate(tensors):
        if tensor.dtype != dtype:
            raise ValueError(f"{first}[{index}] has dtype {tensor.dtype.name} but {first}[0] "
                             f"{dtype.name}: the tensors of a list must have one dtype")
    for name, members in others.items():
        if members is not None and len(members) != len(tensors):
            raise ValueError(f"{name} holds {len(members)} tensors and {first} {len(tensors)}: "
                             "they must hold as many")


# The private formats, which CANN's foreach operators refuse (ops-nn foreach/foreach_pow_scalar/
# op_host/op_api/aclnn_foreach_pow_scalar_v2.cpp CheckFormat: IsPrivateFormat of each tensor);
# aclFormat values of headers/acl_rt.h: NC1HWC0, FRACTAL_Z, NC1HWC0_C04, FRACTAL_NZ, NDC1HWC0,
# FRACTAL_Z_3D and the FRACTAL_NZ_C0_* ones.
PRIVATE_FORMATS = frozenset({3, 4, 12, 29, 32, 33, 50, 51, 52, 53, 54})


def _plain_formats(**lists: list[np.ndarray] | None) -> None:
    for name, members in lists.items():
        for index, tensor in enumerate(members or ()):
            if tensor_format(tensor) in PRIVATE_FORMATS:
                raise ValueError(f"{name}[{index}] has a private format (aclFormat "
                                 f"{tensor_format(tensor)}): the format must be ND, NCHW, NHWC, "
                                 "HWCN, NDHWC or NCDHW")


def _outputs(first: str, tensors: list[np.ndarray], out: list[np.ndarray],
             name: str = "out", same_dtype: bool = True) -> None:
    """out[i] has x[i]'s shape (CheckShape of the op_api: OP_CHECK_SHAPE_NOT_EQUAL, although
    the docs allow a larger out) and dtype; no tensor has a private format."""
    _lists(first, tensors, **{name: out})
    _plain_formats(**{first: tensors, name: out})
    for index, (x, y) in enumerate(zip(tensors, out)):
        if same_dtype and y.dtype != x.dtype:
            raise ValueError(f"{name}[{index}] has dtype {y.dtype.name} and {first}[{index}] "
                             f"{x.dtype.name}: they must be equal")
        if y.shape != x.shape:
            raise ValueError(f"{name}[{index}] has shape {list(y.shape)} and {first}[{index}] "
                             f"{list(x.shape)}: they must be equal")


def _scalar_kind(name: str, tensors: list[np.ndarray], scalar: Any) -> None:
    """An aclScalar operand's dtype by the list's (the V2 forms: aclnn_foreach_pow_scalar_v2.cpp
    CheckDtypePowScalar and its siblings): float32 or double for float32 and bfloat16, float16
    or double for float16, int32 or int64 for an integral list."""
    if scalar is None or isinstance(scalar, np.ndarray) or not tensors:
        return
    dtype, kind = tensors[0].dtype, np.asarray(scalar).dtype
    if dtype == np.float16:
        allowed = ("float16", "float64")
    elif dtype.kind in "biu":
        allowed = ("int32", "int64")
    else:
        allowed = ("float32", "float64")
    if kind.name not in allowed:
        raise ValueError(f"{name} has dtype {kind.name}, which a list of {dtype.name} does not "
                         f"take: it takes {' or '.join(allowed)}")


def _same_shapes(first: str, tensors: list[np.ndarray], **others: list[np.ndarray]) -> None:
    """The tensors of the other input lists have the shapes of ``tensors``'."""
    for name, members in others.items():
        for index, (x, y) in enumerate(zip(tensors, members)):
            if x.shape != y.shape:
                raise ValueError(f"{name}[{index}] has shape {list(y.shape)} and {first}"
                                 f"[{index}] {list(x.shape)}: they must be equal")


def _one_element(name: str, tensor: np.ndarray | None, count: int = 1) -> None:
    if tensor is not None and tensor.size != count:
        raise ValueError(f"{name} has {tensor.size} elements: it must have {count}")


def _target(out: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Where a result of ``shape`` goes in ``out``: out itself, or its first elements."""
    if out.shape == shape:
        return out
    if not out.flags.c_contiguous:
        raise Refusal(f"an output of shape {list(out.shape)} for a result of shape "
                      f"{list(shape)} must be contiguous")
    return out.reshape(-1)[:int(np.prod(shape))].reshape(shape)


def _item(tensor: np.ndarray, index: int = 0) -> Any:
    """Element ``index`` of a scalar given as a tensor, as a numpy scalar of its dtype."""
    return tensor.reshape(-1)[index]


def _in(dtype: np.dtype) -> np.dtype:
    """The dtype an operation on a tensor of ``dtype`` computes in: float32 for float16 and
    bfloat16, int32 for the narrower integers (the docs' scalar dtypes for them)."""
    if dtype.kind in "iu" and dtype.itemsize < 4:
        return np.dtype(np.int32)
    return compute_dtype(dtype)


def _number(value: Any, dtype: np.dtype) -> Any:
    """A scalar operand in the compute dtype (a float with an integral tensor is truncated)."""
    return np.asarray(value).real.astype(dtype)[()]


# ---- unary: (x, out) ----------------------------------------------------------------------


# erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), z >= 0: the Chebyshev fit of W. H. Press
# et al., Numerical Recipes (2nd ed., 6.2, "erfcc"), fractional error below 1.2e-7 (1.05e-7
# measured against math.erfc on [-8, 8]): P's coefficients from the constant term up.
_ERFC_FIT = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
             -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def _erfc(target: np.ndarray, x: np.ndarray) -> None:
    """erfc(x) = 1 - erf(x) without the cancellation: into a float64 target, aclnnErfc's
    float64 erfc (pointwise_math._erfc64); into float32 (float16 and
    bfloat16 compute in it), the fit above, evaluated in float64 and rounded once. 2 - erfc(-x)
    for negative x."""
    if target.dtype != np.float64:
        values = np.asarray(x, np.float64)
        z = np.abs(values.reshape(-1))
        t = np.multiply(z, 0.5)
        t += 1.0
        np.reciprocal(t, out=t)
        p = np.full_like(t, _ERFC_FIT[-1])
        for coefficient in reversed(_ERFC_FIT[:-1]):
            p *= t
            p += coefficient
        p -= np.square(z, out=z)
        np.exp(p, out=p)
        p *= t
        np.subtract(2.0, p, out=p, where=values.reshape(-1) < 0)
        np.copyto(target, np.broadcast_to(p.reshape(values.shape), target.shape),
                  casting="unsafe")
        return
    np.copyto(target, _erfc64(np.asarray(np.broadcast_to(x, target.shape), np.float64)),
              casting="unsafe")


# The single-tensor operator each unary foreach operator computes per tensor
FOREACH_UNARY: dict[str, str] = {
    name: name for name in ("Abs", "Acos", "Asin", "Atan", "Cos", "Cosh", "Erf", "Exp",
                            "Expm1", "Log", "Log10", "Log1p", "Log2", "Neg", "Reciprocal",
                            "Sigmoid", "Sign", "Sin", "Sinh", "Sqrt", "Tan", "Tanh")
}


def _unary_check(x: list[np.ndarray], out: list[np.ndarray]) -> None:
    _outputs("x", x, out)


def _copy_check(x: list[np.ndarray], out: list[np.ndarray]) -> None:
    """out may have another dtype, which the copy casts to (CANN's UT: float32 into float16)."""
    _outputs("x", x, out, same_dtype=False)


def _foreach_unary(compute: Callable[..., None], integers: Callable[..., np.dtype] | None
                   ) -> Callable[..., None]:
    def kernel(x: list[np.ndarray], out: list[np.ndarray]) -> None:
        for source, result in zip(x, out):
            if source.size == 0:
                continue
            dtype = compute_dtype(integers(source.dtype)) if integers is not None \
                and source.dtype.kind in "biu" else compute_dtype(source.dtype)
            apply(_target(result, source.shape), compute, [source], dtype)
    return kernel


for _short in FOREACH_UNARY:
    _unary = UNARY[f"aclnn{_short}"]
    register(f"aclnnForeach{_short}", check=_unary_check)(_foreach_unary(
        _unary.compute, lambda dtype, unary=_unary: _unary_dtype(unary, dtype, dtype)))
register("aclnnForeachErfc", check=_unary_check)(_foreach_unary(_erfc, None))


def _copy(target: np.ndarray, x: np.ndarray) -> None:
    np.copyto(target, x)


@register("aclnnForeachCopy", check=_copy_check)
def foreach_copy(x: list[np.ndarray], out: list[np.ndarray]) -> None:
    """y_i = x_i (ops-nn foreach/foreach_copy/docs/aclnnForeachCopy.md)."""
    for source, result in zip(x, out):
        if source.size:
            np.copyto(_target(result, source.shape), source, casting="unsafe")


def _zero_check(x: list[np.ndarray]) -> None:
    _lists("x", x)


@register("aclnnForeachZeroInplace", check=_zero_check)
def foreach_zero_inplace(x: list[np.ndarray]) -> None:
    """x_i = 0 (ops-nn foreach/foreach_zero_inplace/docs/aclnnForeachZeroInplace.md)."""
    for tensor in x:
        tensor[...] = 0


# ---- with a scalar: (x, scalar, out) ------------------------------------------------------


def _scaled(sign: int) -> Callable[..., None]:
    """target = a + sign * alpha * b."""
    def compute(target: np.ndarray, a: Any, b: Any, alpha: Any) -> None:
        np.multiply(b, alpha, out=target)
        (np.subtract if sign < 0 else np.add)(a, target, out=target)
    return compute


def _pow_checked(target: np.ndarray, a: Any, b: Any) -> None:
    """a ** b; an integral base with a negative integral exponent gives 0 (1 for a base of 1,
    +-1 for -1), as PyTorch's integer pow, where numpy refuses it."""
    if target.dtype.kind in "iu" and np.any(np.asarray(b) < 0):
        base, exponent = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        negative = exponent < 0
        np.power(base, np.where(negative, 0, exponent), out=target)
        ones = np.where((base == -1) & (exponent % 2 != 0), -1, 1)
        target[negative] = np.where(np.abs(base[negative]) == 1, ones[negative], 0)
        return
    np.power(a, b, out=target)


def _divide(target: np.ndarray, a: Any, b: Any) -> None:
    np.true_divide(a, b, out=target)


BINARY: dict[str, Callable[..., None]] = {
    "Mul": _ufunc(np.multiply), "Div": _divide, "Maximum": _first_on_ties(np.maximum),
    "Minimum": _first_on_ties(np.minimum), "Pow": _pow_checked,
}


def _scalar_check(x: list[np.ndarray], scalar: Any, out: list[np.ndarray]) -> None:
    _outputs("x", x, out)
    if isinstance(scalar, np.ndarray):
        _one_element("scalar", scalar)
    _scalar_kind("scalar", x, scalar)


def _binary_dtype(short: str, dtype: np.dtype) -> np.dtype:
    """Div of integers divides in float32 (the quotient truncated into out)."""
    computed = _in(dtype)
    return np.dtype(np.float32) if short == "Div" and computed.kind in "iu" else computed


def _apply_binary(short: str, compute: Any, source: np.ndarray, value: Any,
                  result: np.ndarray) -> None:
    """result = source <short> value, in source's compute dtype (Add and Sub through the
    scaled form, the others through BINARY's function); nothing for an empty source."""
    if source.size == 0:
        return
    dtype = _binary_dtype(short, source.dtype)
    number = _number(value, dtype)
    target = _target(result, source.shape)
    if compute is None:  # Add, Sub
        apply(target, _scaled(1 if short == "Add" else -1), [source, number, dtype.type(1)],
              dtype)
    else:
        apply(target, compute, [source, number], dtype)


def _foreach_scalar(short: str) -> Callable[..., None]:
    compute = BINARY.get(short)

    def kernel(x: list[np.ndarray], scalar: Any, out: list[np.ndarray]) -> None:
        value = _item(scalar) if isinstance(scalar, np.ndarray) else scalar
        for source, result in zip(x, out):
            _apply_binary(short, compute, source, value, result)
    return kernel


for _short in ("Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Pow"):
    for _suffix in ("Scalar", "ScalarV2"):
        register(f"aclnnForeach{_short}{_suffix}", check=_scalar_check)(_foreach_scalar(_short))


# ---- with a scalar list: (x, scalars, out) ------------------------------------------------
#
# CANN generates these operators' aclnn API from their OpDef (ops-nn foreach/foreach_<name>_
# scalar_list/op_host/foreach_<name>_scalar_list_def.cpp, ``.ScalarList()`` without a dtype of
# its own): the call passes the aclScalarList to NnopbaseAddScalarListInput, which makes it one
# host tensor (hicann/opbase aa3cd74 src/nnopbase/individual_op/executor/indv_executor_ext.cpp,
# NnopbaseExecutorAddScalarListInput): its dtype is the first scalar's, a DOUBLE scalar is
# stored as FLOAT (and makes the list FLOAT), any other scalar is converted to the list's
# dtype. The (x, scalars, y) dtypes must then be one of the OpDef's combinations (161002,
# the ascend910b binary configs op_host/config/ascend910b/*_binary.json agree): a float16,
# float32 or bfloat16 list with FLOAT scalars, an int32 list with INT64 ones, y of x's dtype.
# The A2 tiling (ops-nn foreach/foreach_utils/op_host/foreach_tiling_class.h,
# ForeachCommonTiling with TYPE_SCALARS_TENSOR) refuses with 561002 (TILING_ERROR, the docs'
# table of statuses): as many scalars as tensors (CheckScalarsTenorShapeInfo), an output
# per tensor of x's dtype holding at least its elements (CheckOutputShapeAndDtype), at most 8
# dims (CheckInputTensorlistShape), one dtype in the list (CheckTensorListDtype).

TILING_ERROR = 561002  # ACLNN_ERR_INNER_TILING_ERROR (ops-nn docs/zh/context/aclnn_return_code.md)
_SCALAR_LIST_DTYPES = {  # the OpDefs' x dtypes
    **{short: ("float16", "float32", "bfloat16", "int32")
       for short in ("Add", "Sub", "Mul", "Maximum", "Minimum", "Pow")},
    "Div": ("float16", "float32", "bfloat16"),
}


def _scalar_list_dtype(scalars: list[Any]) -> np.dtype:
    """The dtype nnopbase gives a scalar list: the first scalar's, float32 when a scalar is
    a double (NnopbaseExecutorAddScalarListInput)."""
    if any(np.asarray(value).dtype == np.float64 for value in scalars):
        return np.dtype(np.float32)
    return np.asarray(scalars[0]).dtype


def _scalar_list_check(short: str) -> Callable[..., None]:
    def check(x: list[np.ndarray], scalars: list[Any], out: list[np.ndarray]) -> None:
        if not x:
            raise ValueError("x is an empty tensor list: it must hold at least one tensor")
        dtype = x[0].dtype
        if dtype.name not in _SCALAR_LIST_DTYPES[short]:
            raise ValueError(f"x has dtype {dtype.name}, which aclnnForeach{short}ScalarList "
                             f"does not support: it supports "
                             f"{', '.join(_SCALAR_LIST_DTYPES[short])}")
        _plain_formats(x=x, out=out)
        if scalars:
            wanted = np.dtype(np.int64 if dtype.kind in "iu" else np.float32)
            given = _scalar_list_dtype(scalars)
            if given != wanted:
                raise ValueError(f"scalars has dtype {given.name} (its first scalar's; a "
                                 f"double is taken as float32), which a list of {dtype.name} "
                                 f"does not take: it takes {wanted.name}")
        for index, (source, result) in enumerate(zip(x, out)):
            if result.dtype != source.dtype:
                raise ValueError(f"out[{index}] has dtype {result.dtype.name} and x[{index}] "
                                 f"{source.dtype.name}: they must be equal")
        if len(scalars) != len(x):
            raise Refusal(f"scalars holds {len(scalars)} scalars and x {len(x)} tensors: it "
                          "must hold one per tensor", TILING_ERROR)
        if len(out) != len(x):
            raise Refusal(f"out holds {len(out)} tensors and x {len(x)}: they must hold as "
                          "many", TILING_ERROR)
        for index, (source, result) in enumerate(zip(x, out)):
            if source.ndim > 8:
                raise Refusal(f"x[{index}] has {source.ndim} dims: at most 8", TILING_ERROR)
            if source.dtype != dtype:
                raise Refusal(f"x[{index}] has dtype {source.dtype.name} but x[0] "
                              f"{dtype.name}: the tensors of a list must have one dtype",
                              TILING_ERROR)
            if result.shape != source.shape and result.size < source.size:
                raise Refusal(f"out[{index}] has {result.size} elements and x[{index}] "
                              f"{source.size}: it must hold at least as many", TILING_ERROR)
    check.__name__ = f"check_foreach_{short.lower()}_scalar_list"
    return check


def _foreach_scalar_list(short: str) -> Callable[..., None]:
    compute = BINARY.get(short)

    def kernel(x: list[np.ndarray], scalars: list[Any], out: list[np.ndarray]) -> None:
        stored = _scalar_list_dtype(scalars)  # what nnopbase hands the kernel
        for source, value, result in zip(x, scalars, out):
            _apply_binary(short, compute, source, _number(value, stored), result)
    kernel.__name__ = f"foreach_{short.lower()}_scalar_list"
    return kernel


for _short in ("Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Pow"):
    register(f"aclnnForeach{_short}ScalarList", check=_scalar_list_check(_short))(
        _foreach_scalar_list(_short))


def _pow_scalar_and_tensor_check(scalar: Any, x: list[np.ndarray], out: list[np.ndarray]
                                 ) -> None:
    _outputs("x", x, out)


def _reversed_pow(target: np.ndarray, a: Any, b: Any) -> None:
    _pow_checked(target, b, a)


@register("aclnnForeachPowScalarAndTensor", check=_pow_scalar_and_tensor_check)
def foreach_pow_scalar_and_tensor(scalar: Any, x: list[np.ndarray], out: list[np.ndarray]
                                  ) -> None:
    """y_i = scalar ** x_i (ops-nn foreach/foreach_pow_scalar_and_tensor/docs/
    aclnnForeachPowScalarAndTensor.md)."""
    for source, result in zip(x, out):
        if source.size:
            dtype = _in(source.dtype)
            apply(_target(result, source.shape), _reversed_pow,
                  [source, _number(scalar, dtype)], dtype)


# ---- two lists: (x1, x2[, alpha], out) ----------------------------------------------------


def _list_check(x1: list[np.ndarray], x2: list[np.ndarray], out: list[np.ndarray],
                alpha: Any = None) -> None:
    _outputs("x1", x1, out)
    _lists("x1", x1, x2=x2)
    _plain_formats(x2=x2)
    _same_shapes("x1", x1, x2=x2)
    if isinstance(alpha, np.ndarray):
        _one_element("alpha", alpha)
    _scalar_kind("alpha", x1, alpha)


def _foreach_list(short: str) -> Callable[..., None]:
    compute = BINARY.get(short)

    def run(x1: list[np.ndarray], x2: list[np.ndarray], alpha: Any,
            out: list[np.ndarray]) -> None:
        value = _item(alpha) if isinstance(alpha, np.ndarray) else alpha
        for a, b, result in zip(x1, x2, out):
            if a.size == 0:
                continue
            dtype = _binary_dtype(short, a.dtype)
            target = _target(result, a.shape)
            if compute is None:
                apply(target, _scaled(1 if short == "Add" else -1),
                      [a, b, _number(1 if value is None else value, dtype)], dtype)
            else:
                apply(target, compute, [a, b], dtype)
    return run


def _with_alpha(run: Callable[..., None]) -> tuple[Callable[..., None], Callable[..., None]]:
    def kernel(x1: list[np.ndarray], x2: list[np.ndarray], alpha: Any,
               out: list[np.ndarray]) -> None:
        run(x1, x2, alpha, out)

    def check(x1: list[np.ndarray], x2: list[np.ndarray], alpha: Any,
              out: list[np.ndarray]) -> None:
        _list_check(x1, x2, out, alpha)
    return kernel, check


def _without_alpha(run: Callable[..., None]
                   ) -> tuple[Callable[..., None], Callable[..., None]]:
    def kernel(x1: list[np.ndarray], x2: list[np.ndarray], out: list[np.ndarray]) -> None:
        run(x1, x2, None, out)

    def check(x1: list[np.ndarray], x2: list[np.ndarray], out: list[np.ndarray]) -> None:
        _list_check(x1, x2, out)
    return kernel, check


for _short in ("Add", "Sub"):
    for _suffix in ("List", "ListV2"):
        _kernel, _check = _with_alpha(_foreach_list(_short))
        register(f"aclnnForeach{_short}{_suffix}", check=_check)(_kernel)
for _short in ("Mul", "Div", "Maximum", "Minimum", "Pow"):
    _kernel, _check = _without_alpha(_foreach_list(_short))
    register(f"aclnnForeach{_short}List", check=_check)(_kernel)


# ---- three lists: Addcdiv and Addcmul -----------------------------------------------------


def _addc(divide: bool) -> Callable[..., None]:
    """target = a + value * (b / c or b * c)."""
    def compute(target: np.ndarray, a: Any, b: Any, c: Any, value: Any) -> None:
        (np.divide if divide else np.multiply)(b, c, out=target)
        np.multiply(target, value, out=target)
        np.add(target, a, out=target)
    return compute


def _foreach_addc(divide: bool, per_tensor: bool, name: str
                  ) -> tuple[Callable[..., None], Callable[..., None]]:
    parameter = "scalars" if per_tensor else "scalar"

    def check(**arguments: Any) -> None:
        x1, x2, x3 = arguments["x1"], arguments["x2"], arguments["x3"]
        _outputs("x1", x1, arguments["out"])
        _lists("x1", x1, x2=x2, x3=x3)
        _plain_formats(x2=x2, x3=x3)
        _same_shapes("x1", x1, x2=x2, x3=x3)
        scalar = arguments[parameter]
        if isinstance(scalar, np.ndarray):
            _one_element(parameter, scalar, len(x1) if per_tensor else 1)
        _scalar_kind(parameter, x1, scalar)

    def kernel(**arguments: Any) -> None:
        x1, x2, x3, out = (arguments[key] for key in ("x1", "x2", "x3", "out"))
        scalar = arguments[parameter]
        for index, (a, b, c, result) in enumerate(zip(x1, x2, x3, out)):
            if a.size == 0:
                continue
            value = _item(scalar, index if per_tensor else 0) \
                if isinstance(scalar, np.ndarray) else scalar
            dtype = _binary_dtype("Div" if divide else "Mul", a.dtype)
            apply(_target(result, a.shape), _addc(divide), [a, b, c, _number(value, dtype)],
                  dtype)
    kernel.__name__ = check.__name__ = name
    return kernel, check


for _short, _divide_it in (("Addcdiv", True), ("Addcmul", False)):
    for _suffix, _per_tensor in (("List", True), ("ScalarList", True), ("Scalar", False),
                                 ("ScalarV2", False)):
        _name = f"aclnnForeach{_short}{_suffix}"
        _kernel, _check = _foreach_addc(_divide_it, _per_tensor, _name)
        register(_name, check=_check)(_kernel)


# ---- Lerp ---------------------------------------------------------------------------------


def _lerp_list_check(x1: list[np.ndarray], x2: list[np.ndarray], weight: list[np.ndarray],
                     out: list[np.ndarray]) -> None:
    _outputs("x1", x1, out)
    _lists("x1", x1, x2=x2, weight=weight)
    _same_shapes("x1", x1, x2=x2, weight=weight)


@register("aclnnForeachLerpList", check=_lerp_list_check)
def foreach_lerp_list(x1: list[np.ndarray], x2: list[np.ndarray], weight: list[np.ndarray],
                      out: list[np.ndarray]) -> None:
    """y_i = x1_i + weight_i (x2_i - x1_i), as aclnnLerp computes it."""
    for a, b, w, result in zip(x1, x2, weight, out):
        if a.size:
            apply(_target(result, a.shape), _lerp, [a, b, w], compute_dtype(a.dtype))


def _lerp_scalar_check(x1: list[np.ndarray], x2: list[np.ndarray], weight: Any,
                       out: list[np.ndarray]) -> None:
    _outputs("x1", x1, out)
    _lists("x1", x1, x2=x2)
    _same_shapes("x1", x1, x2=x2)


@register("aclnnForeachLerpScalar", check=_lerp_scalar_check)
def foreach_lerp_scalar(x1: list[np.ndarray], x2: list[np.ndarray], weight: Any,
                        out: list[np.ndarray]) -> None:
    """y_i = x1_i + weight (x2_i - x1_i), as aclnnLerp computes it."""
    for a, b, result in zip(x1, x2, out):
        if a.size:
            dtype = compute_dtype(a.dtype)
            apply(_target(result, a.shape), _lerp,
                  [a, b, np.asarray(_number(weight, dtype)).reshape(1)], dtype)


# ---- Norm, NonFiniteCheckAndUnscale, RoundOffNumber ---------------------------------------


def _norm_check(x: list[np.ndarray], scalar: Any, out: list[np.ndarray]) -> None:
    _lists("x", x, out=out)
    for index, (source, result) in enumerate(zip(x, out)):
        if result.dtype != source.dtype:
            raise ValueError(f"out[{index}] has dtype {result.dtype.name} and x[{index}] "
                             f"{source.dtype.name}: they must be equal")
        if result.size != 1:
            raise ValueError(f"out[{index}] has {result.size} elements: it must have 1")


@register("aclnnForeachNorm", check=_norm_check)
def foreach_norm(x: list[np.ndarray], scalar: Any, out: list[np.ndarray]) -> None:
    """y_i = (sum |x_i|^p)^(1/p) over the elements of x_i, p the scalar (ops-nn foreach/
    foreach_norm/docs/aclnnForeachNorm.md); p = inf gives max |x_i|, p = 0 the count of
    non-zero elements, as PyTorch's vector norm (the reference where the doc is silent).
    Summed in float64, rounded once."""
    p = float(np.real(scalar))
    for source, result in zip(x, out):
        if p == 2 and source.size:  # one float64 pass and a dot product, no |x| array
            flat = np.asarray(source, np.float64).reshape(-1)
            value = math.sqrt(float(np.dot(flat, flat)))
            result.reshape(-1)[0] = np.asarray(value).astype(result.dtype)
            continue
        a = np.abs(np.asarray(source, np.float64))
        if a.size == 0:
            value = 0.0
        elif math.isinf(p):
            value = float(a.max() if p > 0 else a.min())
        elif p == 0:
            value = float(np.count_nonzero(a))
        elif p == 1:
            value = float(a.sum())
        elif p == 2:
            value = float(np.sqrt(np.square(a).sum()))
        else:
            value = float(np.power(np.power(a, p).sum(), 1.0 / p))
        result.reshape(-1)[0] = np.asarray(value).astype(result.dtype)


def _non_finite_check(scaledGrads: list[np.ndarray], foundInf: np.ndarray,
                      invScale: np.ndarray) -> None:
    _lists("scaledGrads", scaledGrads)
    _one_element("foundInf", foundInf)
    _one_element("invScale", invScale)


def _unscale(target: np.ndarray, x: np.ndarray, scale: Any) -> None:
    np.multiply(x, scale, out=target)


@register("aclnnForeachNonFiniteCheckAndUnscale", check=_non_finite_check)
def foreach_non_finite_check_and_unscale(scaledGrads: list[np.ndarray], foundInf: np.ndarray,
                                         invScale: np.ndarray) -> None:
    """foundInf = 1 when a tensor of scaledGrads holds an inf or a NaN (else it stays); every
    scaledGrads_i is multiplied by invScale in place (ops-nn foreach/
    foreach_non_finite_check_and_unscale/docs/aclnnForeachNonFiniteCheckAndUnscale.md)."""
    scale = np.float32(_item(invScale))
    for grad in scaledGrads:
        if grad.size == 0:
            continue
        if not np.isfinite(grad).all():
            foundInf.reshape(-1)[0] = 1
        apply(grad, _unscale, [grad, scale], compute_dtype(grad.dtype))


# roundMode -> the rounding (ops-nn foreach/foreach_round_off_number/op_kernel/
# foreach_round_off_number.h ConvertRoundMode): 1 ties to even, 2 floor, 3 ceil, 4 ties away
# from zero, 5 trunc, 7 the fraction x - trunc(x); any other value leaves x as it is.
def _round_away(x: np.ndarray) -> Any:
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


ROUNDINGS: dict[int, Callable[[np.ndarray], Any]] = {
    1: np.rint, 2: np.floor, 3: np.ceil, 4: _round_away, 5: np.trunc,
    7: lambda x: x - np.trunc(x),
}


def _round_off_check(x: list[np.ndarray], roundMode: Any, out: list[np.ndarray]) -> None:
    _outputs("x", x, out)
    if isinstance(roundMode, np.ndarray):
        _one_element("roundMode", roundMode)


def _round_off(x: list[np.ndarray], roundMode: Any, out: list[np.ndarray]) -> None:
    mode = int(np.real(_item(roundMode) if isinstance(roundMode, np.ndarray) else roundMode))
    rounding = ROUNDINGS.get(mode)
    for source, result in zip(x, out):
        if source.size == 0:
            continue
        target = _target(result, source.shape)
        if source.dtype.kind in "iu":  # integers: themselves, a fraction of 0
            target[...] = 0 if mode == 7 else source
        elif rounding is None:
            np.copyto(target, source)
        else:
            np.copyto(target, rounding(np.asarray(source, np.float32)), casting="unsafe")


for _name in ("aclnnForeachRoundOffNumber", "aclnnForeachRoundOffNumberV2"):
    register(_name, check=_round_off_check)(_round_off)
