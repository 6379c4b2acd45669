"""CANN's dtype inference for the arithmetic and comparison operators, as their op_api
sources state it on Atlas A2 (NpuArch DAV_2201, the SoC the emulator models), for the Python
kernels' phase-1 checks and their compute.

opbase's ``PromoteType`` and ``CanCast`` (hicann/opbase include/nnopbase/opdev/
data_type_utils.h) are the emulator's C ones too (emulator/src/ops_core.c, whose table the C
phase-1 rules use): :func:`promote_type` reads the same table over the dtypes numpy has, and
``tests/ops/test_binary_family.py`` checks that both agree on every pair
of the dtypes aclnnInplaceFillScalar takes.

A tensor with a scalar does not promote as two tensors do: each operator's op_api source says
which dtype the pair computes in (the tensor's, unless the scalar is of a higher category...),
and each does it a little differently. One function per source, named after the operators
that share it; each returns None where CANN finds no dtype (phase 1 refuses the call).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._c import lowlevel as ll
from ..._c.codes import constant
from ...ops.dtypes import acl_dtype, all_dtypes, bfloat16_dtype, is_bfloat16
from . import Refusal

PARAM_NULLPTR = constant("ACLNN_ERR_PARAM_NULLPTR")  # 161001
INNER_NULLPTR = constant("ACLNN_ERR_INNER_NULLPTR")  # 561103

# opbase's kPromoteTypesLookup over the dtypes numpy has, in the letters of ops_core.c's copy:
# f float32, h float16, 1 int8, 4 int32, u uint8, 2 int16, v uint16, w uint32, 8 int64,
# x uint64, d float64, ? bool, c complex64, C complex128, b bfloat16; "." no promotion.
_LETTERS = "fh14u2vw8xd?cCb"
_NAMES = {"f": "float32", "h": "float16", "1": "int8", "4": "int32", "u": "uint8", "2": "int16",
          "v": "uint16", "w": "uint32", "8": "int64", "x": "uint64", "d": "float64", "?": "bool",
          "c": "complex64", "C": "complex128", "b": "bfloat16"}
_TABLE = (
    #         fh14u2vw8xd?cCb
    "ffffff..f.dfcCf",  # f
    "fhhhhh..h.dhcCf",  # h
    "fh1422..8.d1cCb",  # 1
    "fh4444..8.d4cCb",  # 4
    "fh24u2..8.ducCb",  # u
    "fh2422..8.d2cCb",  # 2
    "......v.....cC.",  # v
    ".......w....cC.",  # w
    "fh8888..8.d8cCb",  # 8
    ".........x..CC.",  # x
    "dddddd..d.ddCCd",  # d
    "fh14u2..8.d?cCb",  # ?
    "cccccc..c.CccCc",  # c
    "CCCCCC..C.CCCCC",  # C
    "ffbbbb..b.dbcCb",  # b
)


def _letter(dtype: np.dtype) -> str | None:
    name = "bfloat16" if is_bfloat16(dtype) else np.dtype(dtype).name
    return next((k for k, v in _NAMES.items() if v == name), None)


def _dtype(letter: str) -> np.dtype:
    return bfloat16_dtype() if letter == "b" else np.dtype(_NAMES[letter])


def promote_type(first: Any, second: Any) -> np.dtype | None:
    """opbase's PromoteType: the dtype two dtypes compute in, None where there is none."""
    a: np.dtype = np.dtype(first)
    b: np.dtype = np.dtype(second)
    if a == b:
        return a
    i, j = _letter(a), _letter(b)
    if i is None or j is None:
        return None
    found = _TABLE[_LETTERS.index(i)][_LETTERS.index(j)]
    return None if found == "." else _dtype(found)


def is_floating(dtype: Any) -> bool:
    """opbase's IsFloatingType (over numpy's dtypes: float16, float32, float64, bfloat16)."""
    return is_bfloat16(dtype) or np.dtype(dtype).kind == "f"


def is_complex(dtype: Any) -> bool:
    return bool(np.dtype(dtype).kind == "c")


def is_integral(dtype: Any, include_bool: bool = False) -> bool:
    kind = np.dtype(dtype).kind
    return kind in "iu" or (include_bool and kind == "b")


def can_cast(source: Any, target: Any) -> bool:
    """opbase's CanCast: not complex to real, floating to integral, nor anything but bool to
    bool."""
    if is_complex(source) and not is_complex(target):
        return False
    if is_floating(source) and is_integral(target):
        return False
    return not (np.dtype(target).kind == "b" and np.dtype(source).kind != "b")


def dtype_name(dtype: Any) -> str:
    """CANN's name of a dtype in messages ("DT_FLOAT")."""
    return "DT_" + ll.dtype_name(acl_dtype(np.dtype(dtype), all_dtypes()))[len("ACL_"):]


_FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)


def _of(value: Any) -> np.dtype:
    return np.asarray(value).dtype


# ---- tensor with scalar, operator by operator ------------------------------------------


def add_scalar_type(self: np.dtype, other: Any, out: np.dtype) -> np.dtype | None:
    """aclnnAdds / aclnnSubs (and their in-place forms): PromoteTypeScalar of hicann/ops-math
    math/add/op_api/aclnn_add.cpp and math/sub/op_api/aclnn_sub.cpp off the regbase
    architecture: a complex operand promotes; else a floating tensor keeps its dtype; a double
    scalar with a float32 out computes in float32; a floating scalar or a bool tensor promotes;
    else the tensor's dtype."""
    scalar = _of(other)
    if is_complex(self) or is_complex(scalar):
        return promote_type(self, scalar)
    if is_floating(self):
        return np.dtype(self)
    if scalar == _FLOAT64 and out == _FLOAT32:
        return _FLOAT32
    if is_floating(scalar) or np.dtype(self).kind == "b":
        return promote_type(self, scalar)
    return np.dtype(self)


def mul_scalar_type(self: np.dtype, other: Any, out: np.dtype) -> np.dtype | None:
    """aclnnMuls (and aclnnInplaceMuls): InferTensorScalarDtype of hicann/ops-math
    math/mul/op_api/aclnn_mul.cpp off the regbase architecture: as :func:`add_scalar_type`,
    but bfloat16 computes in float32, and a bool tensor with a double scalar in float32."""
    scalar = _of(other)
    if is_complex(self) or is_complex(scalar):
        return promote_type(self, scalar)
    if is_floating(self):
        return _FLOAT32 if is_bfloat16(self) else np.dtype(self)
    if scalar == _FLOAT64 and (np.dtype(self).kind == "b" or out == _FLOAT32):
        return _FLOAT32
    if is_floating(scalar) or np.dtype(self).kind == "b":
        return promote_type(self, scalar)
    return np.dtype(self)


def pow_scalar_type(self: np.dtype, exponent: Any, out: np.dtype) -> np.dtype | None:
    """aclnnPowTensorScalar: InferTensorScalarDtype of hicann/ops-math math/pow/op_api/
    aclnn_pow.cpp off the regbase architecture: a double exponent with a float32 out computes
    in float32; a complex exponent promotes; a floating tensor keeps its dtype; a floating
    exponent or a bool tensor promotes; else the tensor's dtype."""
    scalar = _of(exponent)
    if scalar == _FLOAT64 and out == _FLOAT32:
        return _FLOAT32
    if is_complex(scalar):
        return promote_type(self, scalar)
    if is_floating(self):
        return np.dtype(self)
    if is_floating(scalar) or np.dtype(self).kind == "b":
        return promote_type(self, scalar)
    return np.dtype(self)


def equal_scalar_type(self: np.dtype, other: Any, out: Any = None) -> np.dtype | None:
    """aclnnEqScalar / aclnnNeScalar: PromoteTypeScalar of hicann/ops-math math/equal/op_api/
    aclnn_eq_scalar.cpp and math/not_equal/op_api/aclnn_ne_scalar.cpp off the regbase
    architecture: a complex tensor keeps its dtype, a floating one too unless the scalar is
    complex; a bool tensor or a floating or complex scalar promotes; else the tensor's
    dtype."""
    scalar = _of(other)
    if is_complex(self):
        return np.dtype(self)
    if not is_complex(scalar) and is_floating(self):
        return np.dtype(self)
    if np.dtype(self).kind == "b" or is_floating(scalar) or is_complex(scalar):
        return promote_type(self, scalar)
    return np.dtype(self)


def less_equal_scalar_type(self: np.dtype, other: Any, out: Any = None) -> np.dtype | None:
    """aclnnLeScalar: PromoteTypeScalar of hicann/ops-math math/less_equal/op_api/
    aclnn_le_scalar.cpp off the regbase architecture: a floating tensor keeps its dtype, a
    double scalar computes in float32, else the pair promotes."""
    scalar = _of(other)
    if is_floating(self):
        return np.dtype(self)
    if scalar == _FLOAT64:
        return _FLOAT32
    return promote_type(self, scalar)


def less_scalar_operand(self: np.dtype, other: Any) -> np.dtype:
    """aclnnLtScalar: the dtype its scalar becomes a tensor of before the checks (hicann/
    ops-math math/less/op_api/aclnn_lt_scalar.cpp off the regbase architecture): a floating
    tensor's, float32 for a double scalar, else the scalar's own."""
    scalar = _of(other)
    if is_floating(self):
        return np.dtype(self)
    return _FLOAT32 if scalar == _FLOAT64 else scalar


def greater_scalar_type(self: np.dtype, other: Any, out: Any = None) -> np.dtype | None:
    """aclnnGtScalar / aclnnGeScalar: hicann/ops-math math/greater/op_api/aclnn_gt_scalar.cpp
    and math/greater_equal/op_api/aclnn_ge_scalar.cpp off the regbase architecture: the pair
    promotes (bool as int8), except that a double scalar a floating tensor's dtype holds (to
    float32's epsilon) compares in that dtype."""
    scalar = _of(other)
    promoted = promote_type(self, scalar)
    if promoted is not None and promoted.kind == "b":
        promoted = np.dtype(np.int8)
    if scalar == _FLOAT64 and is_floating(self):
        value = float(other)
        held = float(np.asarray(value).astype(np.float16 if self == np.float16 else
                                              np.float32 if self == np.float32 else np.float64))
        if abs(held - value) <= float(np.finfo(np.float32).eps):
            return np.dtype(self)
    return promoted


def division_scalar_type(self: np.dtype, other: Any, out: Any = None) -> np.dtype:
    """aclnnDivs (and aclnnInplaceDivs) on Atlas A2: the dtype the quotient is computed in
    (hicann/ops-math math/div/op_api/aclnn_div.cpp, isDivsMixDtypeSupport and
    CompatibleInferDivsDtype, then RealDiv, math/real_div/op_api/realdiv.cpp): float16,
    bfloat16 and float32 tensors with a floating scalar divide in their own dtype; a floating
    or complex tensor keeps its dtype (a complex scalar promotes it); an int32 tensor with an
    int32 scalar divides into a float32 quotient (the emulator computes it exactly in float64
    and rounds once); a bool tensor with a bool scalar too, into float32; any other integral
    tensor is cast to float32 first."""
    scalar = _of(other)
    if is_complex(scalar):
        return promote_type(self, scalar) or np.dtype(self)
    if is_floating(self) or is_complex(self):
        return np.dtype(self)
    if self == np.int32 and scalar == np.int32:
        return _FLOAT64
    return _FLOAT32


def division_type(self: np.dtype, other: np.dtype, out: Any = None) -> np.dtype:
    """aclnnDiv (and aclnnInplaceDiv) on Atlas A2: the dtype the quotient is computed in
    (hicann/ops-math math/div/op_api/aclnn_div.cpp, isMixDtypeTensorSupport and
    CompatibleInferDivDtype, then RealDiv): the pair promotes; an integral result is computed
    in float32, but int32 with int32 (RealDiv's int32 kernel on Atlas A2, into a float32
    quotient: the emulator computes it exactly in float64 and rounds once); bool with bool
    divides into float32."""
    promoted = promote_type(self, other) or _FLOAT32
    if is_floating(promoted) or is_complex(promoted):
        return promoted
    if self == np.int32 and other == np.int32:
        return _FLOAT64
    return _FLOAT32


def atan2_type(self: np.dtype, other: np.dtype, out: Any = None) -> np.dtype:
    """aclnnAtan2: InferDtype of hicann/ops-math math/atan2/op_api/aclnn_atan2.cpp: the
    promoted dtype when it is floating (float16, float32, float64, bfloat16), else float32."""
    promoted = promote_type(self, other)
    return promoted if promoted is not None and is_floating(promoted) else _FLOAT32


def floor_divide_type(self: np.dtype, other: np.dtype, out: Any = None) -> np.dtype | None:
    """aclnnFloorDivide: the pair promotes, bool with bool dividing in float32 (hicann/ops-math
    math/floor_div/op_api/aclnn_floor_divide.cpp CalcFloorDivide)."""
    promoted = promote_type(self, other)
    return _FLOAT32 if promoted is not None and promoted.kind == "b" else promoted


def less_scalar_type(self: np.dtype, other: Any, out: Any = None) -> np.dtype | None:
    """aclnnLtScalar: self with the tensor its scalar becomes (:func:`less_scalar_operand`)."""
    return promote_type(self, less_scalar_operand(self, other))


# The dtype each operator computes self with other in, where it is not opbase's PromoteType
# of the pair (the tensor forms' default); None: no such dtype (phase 1 refuses the call).
_COMPUTED: dict[str, Any] = {
    "aclnnAdds": add_scalar_type, "aclnnInplaceAdds": add_scalar_type,
    "aclnnSubs": add_scalar_type, "aclnnInplaceSubs": add_scalar_type,
    "aclnnMuls": mul_scalar_type, "aclnnInplaceMuls": mul_scalar_type,
    "aclnnDivs": division_scalar_type, "aclnnInplaceDivs": division_scalar_type,
    "aclnnDiv": division_type, "aclnnInplaceDiv": division_type,
    "aclnnAtan2": atan2_type, "aclnnFloorDivide": floor_divide_type,
    "aclnnPowTensorScalar": pow_scalar_type,
    "aclnnEqScalar": equal_scalar_type, "aclnnNeScalar": equal_scalar_type,
    "aclnnGtScalar": greater_scalar_type, "aclnnGeScalar": greater_scalar_type,
    "aclnnLtScalar": less_scalar_type, "aclnnLeScalar": less_equal_scalar_type,
}


def computes_in(operator: str, self: np.ndarray, other: Any, out: np.ndarray) -> np.dtype:
    """The dtype ``operator`` computes ``self`` with ``other`` (a tensor or a scalar) in, on
    Atlas A2, before float16 and bfloat16 widen to float32 (phase 1 refused the calls that
    have none)."""
    infer = _COMPUTED.get(operator)
    second = other.dtype if isinstance(other, np.ndarray) else other
    found = (infer(self.dtype, second, out.dtype) if infer is not None
             else promote_type(self.dtype, second if isinstance(other, np.ndarray) else _of(other)))
    if found is None:
        raise ValueError(f"{operator}: self ({dtype_name(self.dtype)}) and other have no dtype "
                         "to compute in")
    return found


# ---- the phase-1 checks the rule table cannot express ----------------------------------


def _refuse_undefined(self: np.dtype, other: Any, computed: np.dtype | None) -> np.dtype:
    if computed is None:
        raise Refusal(f"self ({dtype_name(self)}) and other ({dtype_name(_of(other))}) have no "
                      "dtype to compute in: CANN's promotion of the pair has none")
    return computed


def _check_alpha(alpha: Any, computed: np.dtype) -> None:
    """CheckPromoteType of aclnnAdd and aclnnSub: alpha casts to the computation's dtype (an
    integral or bool alpha for a bool one)."""
    kind = _of(alpha)
    fits = is_integral(kind, True) if computed.kind == "b" else can_cast(kind, computed)
    if not fits:
        raise Refusal(f"alpha has dtype {dtype_name(kind)}, which cannot be cast to the dtype the "
                      f"operator computes in, {dtype_name(computed)}")


def _check_cast_to(computed: np.dtype, target: np.ndarray, name: str) -> None:
    if not can_cast(computed, target.dtype):
        raise Refusal(f"the operator computes in {dtype_name(computed)}, which cannot be cast to "
                      f"{name}'s dtype {dtype_name(target.dtype)}")


def check_scalar_sum(self: np.ndarray, other: Any, alpha: Any, out: np.ndarray,
                     name: str = "out") -> None:
    """aclnnAdds / aclnnSubs: the pair's dtype (:func:`add_scalar_type`) exists, alpha casts
    to it and it casts to out (CheckParamsScalar, CheckPromoteType of hicann/ops-math
    math/add/op_api/aclnn_add.cpp and math/sub/op_api/aclnn_sub.cpp)."""
    computed = _refuse_undefined(self.dtype, other, add_scalar_type(self.dtype, other, out.dtype))
    _check_alpha(alpha, computed)
    _check_cast_to(computed, out, name)


def check_inplace_scalar_sum(selfRef: np.ndarray, other: Any, alpha: Any) -> None:
    """aclnnInplaceAdds / aclnnInplaceSubs: :func:`check_scalar_sum` with selfRef as out."""
    check_scalar_sum(selfRef, other, alpha, selfRef, "selfRef")


def check_tensor_alpha(**arguments: Any) -> None:
    """aclnnSub / aclnnInplaceSub (self or selfRef, other, alpha[, out]): alpha casts to the
    pair's promoted dtype (the rules check that there is one and that it casts to out)."""
    self, other, alpha = list(arguments.values())[:3]
    computed = promote_type(self.dtype, other.dtype)
    if computed is not None:
        _check_alpha(alpha, computed)


def check_muls(**arguments: Any) -> None:
    """aclnnMuls / aclnnInplaceMuls (self or selfRef, other[, out]): off the regbase
    architecture CANN checks no promotion at phase 1, but where :func:`mul_scalar_type` finds
    no dtype (a bool or complex tensor with a uint16, uint32 or uint64 scalar) the casts of its
    graph fail: ACLNN_ERR_INNER_NULLPTR (hicann/ops-math math/mul/op_api/aclnn_mul.cpp
    aclnnMulsGetWorkspaceSize)."""
    values = list(arguments.values())
    self, other, out = values[0], values[1], values[-1]
    if mul_scalar_type(self.dtype, other, out.dtype) is None:
        raise Refusal(f"self ({dtype_name(self.dtype)}) and other ({dtype_name(_of(other))}) "
                      "have no dtype to compute in: casting them failed", INNER_NULLPTR)


def check_pow_tensors(self: np.ndarray, exponent: np.ndarray, out: np.ndarray) -> None:
    """aclnnPowTensorTensor: self and exponent are not both bool (hicann/ops-math math/pow/
    op_api/aclnn_pow_tensor_tensor.cpp CheckDtypeValid)."""
    if self.dtype.kind == "b" and exponent.dtype.kind == "b":
        raise Refusal("self and exponent are both DT_BOOL, which pow does not take")


def check_pow_scalar(self: np.ndarray, exponent: Any, out: np.ndarray) -> None:
    """aclnnPowTensorScalar: CheckPromoteType of hicann/ops-math math/pow/op_api/aclnn_pow.cpp
    over :func:`pow_scalar_type`: a dtype exists, self and exponent are not both bool, and it
    casts to out."""
    computed = pow_scalar_type(self.dtype, exponent, out.dtype)
    if computed is None:
        raise Refusal(f"self ({dtype_name(self.dtype)}) and exponent "
                      f"({dtype_name(_of(exponent))}) have no dtype to compute in")
    if self.dtype.kind == "b" and _of(exponent).kind == "b":
        raise Refusal("self and exponent are both DT_BOOL, which pow does not take")
    _check_cast_to(computed, out, "out")


# The inputs' lists of aclnnGeScalar and aclnnLtScalar on Atlas A2/A3 (hicann/ops-math
# math/greater_equal/op_api/aclnn_ge_scalar.cpp ASCEND910B_DTYPE_DTYPE_SUPPORT_LIST,
# math/less/op_api/aclnn_lt_scalar.cpp ASCEND910B_DTYPE_SUPPORT_LIST).
_GE_SCALAR = ("float32", "int32", "float16", "int8", "float64", "int16", "int64", "uint64",
              "uint32", "uint16", "uint8", "bfloat16")
_LT_SCALAR = ("float32", "int32", "int64", "float16", "int16", "int8", "uint8", "float64",
              "uint32", "uint64", "bool", "uint16", "bfloat16")


def _named(dtype: np.dtype) -> str:
    return "bfloat16" if is_bfloat16(dtype) else np.dtype(dtype).name


def check_greater_scalar(self: np.ndarray, other: Any, out: np.ndarray) -> None:
    """aclnnGtScalar: the pair has a dtype to compare in (:func:`greater_scalar_type`)."""
    _refuse_undefined(self.dtype, other, greater_scalar_type(self.dtype, other))


def check_greater_equal_scalar(self: np.ndarray, other: Any, out: np.ndarray) -> None:
    """aclnnGeScalar: as :func:`check_greater_scalar`, and that dtype is in its list."""
    computed = _refuse_undefined(self.dtype, other, greater_scalar_type(self.dtype, other))
    if _named(computed) not in _GE_SCALAR:
        raise Refusal(f"self and other compare in {dtype_name(computed)}, which aclnnGeScalar "
                      "does not take")


def check_less_scalar(self: np.ndarray | None, other: Any, out: np.ndarray) -> None:
    """aclnnLtScalar: a NULL other or self is ACLNN_ERR_INNER_NULLPTR (561103); the scalar
    becomes a tensor of :func:`less_scalar_operand`'s dtype, which must be in the list and
    promote with self (hicann/ops-math math/less/op_api/aclnn_lt_scalar.cpp)."""
    for name, value in (("other", other), ("self", self)):
        if value is None:
            raise Refusal(f"{name} is NULL", INNER_NULLPTR)
    assert self is not None
    operand = less_scalar_operand(self.dtype, other)
    if _named(operand) not in _LT_SCALAR:
        raise Refusal(f"other becomes a {dtype_name(operand)} tensor, which is not supported; "
                      "supported dtypes: " + ", ".join(_LT_SCALAR))
    if promote_type(self.dtype, operand) is None:
        raise Refusal(f"self ({dtype_name(self.dtype)}) and other ({dtype_name(operand)}) "
                      "cannot be promoted to a common dtype")
    if out.shape != self.shape:
        raise Refusal(f"out has shape {out.shape}, self {self.shape}: they must be equal")


def check_less_equal_scalar(self: np.ndarray, other: Any, out: np.ndarray) -> None:
    """aclnnLeScalar: the pair has a dtype to compare in (:func:`less_equal_scalar_type`)."""
    _refuse_undefined(self.dtype, other, less_equal_scalar_type(self.dtype, other))


def _check_clamp_cast(self: np.ndarray, out: np.ndarray) -> None:
    """Off the regbase architecture Clamp computes in out's dtype: self must cast to it, unless
    self is empty (hicann/ops-math conversion/clip_by_value_v2/op_api/aclnn_clamp.cpp
    aclnnClampCommon, CheckSelfCanCastOut after the empty return)."""
    if self.size and not can_cast(self.dtype, out.dtype):
        raise Refusal(f"self has dtype {dtype_name(self.dtype)}, which cannot be cast to out's "
                      f"dtype {dtype_name(out.dtype)}")


def check_clamp(self: np.ndarray, clipValueMin: Any, clipValueMax: Any, out: np.ndarray) -> None:
    """aclnnClamp: not both bounds NULL (161001, CheckNotNull), then self casts to out."""
    if clipValueMin is None and clipValueMax is None:
        raise Refusal("clipValueMin and clipValueMax are both NULL: one at least is required",
                      PARAM_NULLPTR)
    _check_clamp_cast(self, out)


def check_clamp_bound(**arguments: Any) -> None:
    """aclnnClampMin / aclnnClampMax (self, the bound, out): self casts to out."""
    self, _, out = arguments.values()
    _check_clamp_cast(self, out)


# The Python kernels' phase-1 checks of the family, by operator (after the rules; an operator
# not listed has none: its rules say everything).
CHECKS: dict[str, Any] = {
    "aclnnAdds": check_scalar_sum, "aclnnSubs": check_scalar_sum,
    "aclnnInplaceAdds": check_inplace_scalar_sum, "aclnnInplaceSubs": check_inplace_scalar_sum,
    "aclnnSub": check_tensor_alpha, "aclnnInplaceSub": check_tensor_alpha,
    "aclnnMuls": check_muls, "aclnnInplaceMuls": check_muls,
    "aclnnPowTensorTensor": check_pow_tensors, "aclnnPowTensorScalar": check_pow_scalar,
    "aclnnGtScalar": check_greater_scalar, "aclnnGeScalar": check_greater_equal_scalar,
    "aclnnLtScalar": check_less_scalar, "aclnnLeScalar": check_less_equal_scalar,
}
