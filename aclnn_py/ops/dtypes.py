"""The one table between numpy dtypes and CANN's aclDataType."""

from __future__ import annotations

from collections.abc import Iterable

import ml_dtypes
import numpy as np

from .._c.lowlevel import constant

bfloat16 = np.dtype(ml_dtypes.bfloat16)

# numpy dtype -> aclDataType member name (headers/acl_rt.h).
_ACL_NAMES: dict[np.dtype, str] = {
    np.dtype(np.float32): "ACL_FLOAT",
    np.dtype(np.float16): "ACL_FLOAT16",
    bfloat16: "ACL_BF16",
    np.dtype(np.float64): "ACL_DOUBLE",
    np.dtype(np.int8): "ACL_INT8",
    np.dtype(np.int16): "ACL_INT16",
    np.dtype(np.int32): "ACL_INT32",
    np.dtype(np.int64): "ACL_INT64",
    np.dtype(np.uint8): "ACL_UINT8",
    np.dtype(np.uint16): "ACL_UINT16",
    np.dtype(np.uint32): "ACL_UINT32",
    np.dtype(np.uint64): "ACL_UINT64",
    np.dtype(np.bool_): "ACL_BOOL",
    np.dtype(np.complex64): "ACL_COMPLEX64",
    np.dtype(np.complex128): "ACL_COMPLEX128",
}
_ACL_VALUES: dict[np.dtype, int] = {dt: constant(name) for dt, name in _ACL_NAMES.items()}
_ALL = tuple(_ACL_VALUES)

FLOATING = (np.dtype(np.float32), np.dtype(np.float16), bfloat16)
FLOATING_SET = frozenset(FLOATING)


def all_dtypes() -> tuple[np.dtype, ...]:
    """Every numpy dtype that has an aclDataType."""
    return _ALL


def dtype_label(dtype: np.dtype) -> str:
    """A dtype's name as users write it ("float32", "bfloat16")."""
    name: str = np.dtype(dtype).name
    return name


def acl_dtype(dtype: np.dtype, supported: Iterable[np.dtype] = FLOATING, *, argument: str = "array"
              ) -> int:
    """aclDataType of ``dtype``; TypeError naming ``argument`` when it is not ``supported``."""
    value = _ACL_VALUES.get(dtype)
    if value is not None and dtype in supported:
        return value
    dtype = np.dtype(dtype)
    supported = tuple(supported)
    if not dtype.isnative and dtype.newbyteorder("=") in supported:
        raise TypeError(f"{argument} has dtype {dtype.str}, a non-native byte order; "
                        f"swap it first (array.astype(array.dtype.newbyteorder('=')))")
    if dtype not in supported:
        names = ", ".join(dtype_label(d) for d in supported)
        hint = ""
        if dtype == np.float64 and np.dtype(np.float32) in supported:
            hint = (f"; convert it with {argument}.astype(numpy.float32) (numpy makes Python "
                    "floats and lists of them float64)")
        raise TypeError(f"{argument} has dtype {dtype_label(dtype)}; supported dtypes are "
                        f"{names}{hint}")
    return _ACL_VALUES[dtype]


# SoCs whose aclnn kernels take bfloat16: Atlas A2 (Ascend910B*), Atlas A3
# (Ascend910_93*) and the Ascend 950 family (Ascend950*, and Ascend910_95*, the short
# name CANN's own code uses for it) -- "DAV_2201 or regbase" in hicann/ops-nn
# common/inc/op_api/level2_base.h (GetDtypeSupportListV2).
BFLOAT16_SOC_PREFIXES = ("Ascend910B", "Ascend910_93", "Ascend950", "Ascend910_95")
BFLOAT16_PRODUCTS = ("Atlas A2 and Atlas A3 series (Ascend910B*, Ascend910_93*) and the "
                     "Ascend 950 family (Ascend950*, Ascend910_95*)")


def soc_supports_bfloat16(soc_name: str | None) -> bool:
    """Whether aclnn operators accept bfloat16 on the SoC called ``soc_name``."""
    return soc_name is not None and soc_name.startswith(BFLOAT16_SOC_PREFIXES)


def promote(first: np.dtype, second: np.dtype) -> np.dtype:
    """CANN's type promotion among float32, float16 and bfloat16 (mixed halves -> float32)."""
    return first if first == second else np.dtype(np.float32)
