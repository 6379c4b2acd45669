"""The one table between numpy dtypes and CANN's aclDataType.

bfloat16 is ml_dtypes' dtype, and importing ml_dtypes costs more than the rest of
aclnn_py: it is imported only when bfloat16 is asked for (:func:`bfloat16_dtype`, or
this module's ``bfloat16`` attribute) or met (a dtype named "bfloat16", whose module has
then been imported already). Until then the tables know bfloat16 by name only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .._c.lowlevel import constant

# numpy dtype -> aclDataType member name (headers/acl_rt.h), bfloat16 by name.
_ACL_NAMES: dict[str, str] = {
    "float32": "ACL_FLOAT",
    "float16": "ACL_FLOAT16",
    "bfloat16": "ACL_BF16",
    "float64": "ACL_DOUBLE",
    "int8": "ACL_INT8",
    "int16": "ACL_INT16",
    "int32": "ACL_INT32",
    "int64": "ACL_INT64",
    "uint8": "ACL_UINT8",
    "uint16": "ACL_UINT16",
    "uint32": "ACL_UINT32",
    "uint64": "ACL_UINT64",
    "bool": "ACL_BOOL",
    "complex64": "ACL_COMPLEX64",
    "complex128": "ACL_COMPLEX128",
}
_BF16_VALUE = constant(_ACL_NAMES["bfloat16"])
# By dtype, for the hot path; bfloat16 joins once ml_dtypes is imported.
_ACL_VALUES: dict[np.dtype, int] = {np.dtype(name): constant(acl)
                                    for name, acl in _ACL_NAMES.items() if name != "bfloat16"}
_OTHERS = frozenset(_ACL_VALUES)  # the table's dtypes but bfloat16
_bfloat16: np.dtype | None = None


def bfloat16_dtype() -> np.dtype:
    """ml_dtypes' bfloat16 dtype (ml_dtypes is imported on the first call)."""
    global _bfloat16
    found = _bfloat16
    if found is None:
        import ml_dtypes

        found = np.dtype(ml_dtypes.bfloat16)
        _ACL_VALUES[found] = _BF16_VALUE
        _bfloat16 = found
    return found


def is_bfloat16(dtype: Any) -> bool:
    """Whether ``dtype`` is ml_dtypes' bfloat16 (in native byte order), without importing
    ml_dtypes for any other dtype (the table's others are told apart without reading
    ``dtype.name``, which numpy computes in Python)."""
    if dtype is _bfloat16:
        return True
    if dtype in _OTHERS:
        return False
    return getattr(dtype, "name", None) == "bfloat16" and dtype == bfloat16_dtype()


# aclDataType value -> numpy dtype name, for the emulator's kernels (the table read backwards).
_BY_VALUE: dict[int, str] = {constant(acl): name for name, acl in _ACL_NAMES.items()}


def dtype_named(name: str) -> np.dtype | None:
    """The numpy dtype the table knows as ``name`` ("float32", "bfloat16", as numpy and
    PyTorch both spell them); None for a name it lacks."""
    if name not in _ACL_NAMES:
        return None
    return bfloat16_dtype() if name == "bfloat16" else np.dtype(name)


def numpy_dtype(value: int) -> np.dtype | None:
    """The numpy dtype of aclDataType ``value``; None for one without (ACL_STRING, ...)."""
    name = _BY_VALUE.get(value)
    if name is None:
        return None
    return bfloat16_dtype() if name == "bfloat16" else np.dtype(name)


def __getattr__(name: str) -> Any:
    if name == "bfloat16":
        return bfloat16_dtype()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Dtypes:
    """A set of dtypes known by name, so that bfloat16 can be a member before ml_dtypes
    is imported: ``dtype in dtypes`` tests a dtype, ``names`` lists the members in order,
    iterating yields them as dtypes (bfloat16's imports ml_dtypes)."""

    __slots__ = ("names", "_plain", "_bfloat16")

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)
        self._plain = frozenset(np.dtype(n) for n in self.names if n != "bfloat16")
        self._bfloat16 = "bfloat16" in self.names

    def __contains__(self, dtype: object) -> bool:
        try:
            if dtype in self._plain:
                return True
        except TypeError:  # unhashable
            return False
        return self._bfloat16 and is_bfloat16(dtype)

    def __iter__(self) -> Iterator[np.dtype]:
        return (bfloat16_dtype() if n == "bfloat16" else np.dtype(n) for n in self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"Dtypes({', '.join(self.names)})"


_ALL = Dtypes(_ACL_NAMES)

FLOATING = Dtypes(("float32", "float16", "bfloat16"))


def all_dtypes() -> Dtypes:
    """Every numpy dtype that has an aclDataType."""
    return _ALL


def dtype_label(dtype: np.dtype) -> str:
    """A dtype's name as users write it ("float32", "bfloat16")."""
    name: str = np.dtype(dtype).name
    return name


def _names(dtypes: Iterable[np.dtype]) -> tuple[str, ...]:
    if isinstance(dtypes, Dtypes):
        return dtypes.names
    return tuple(dtype_label(d) for d in dtypes)


def acl_dtype(dtype: np.dtype, supported: Iterable[np.dtype] = FLOATING, *, argument: str = "array",
              python_value: bool = False) -> int:
    """aclDataType of ``dtype``; TypeError naming ``argument`` when it is not ``supported``,
    with the fix that fits the value given (an array, or with ``python_value`` a Python
    number or list, which has no ``astype``)."""
    value = _ACL_VALUES.get(dtype)
    if value is not None and (supported is _ALL or dtype in supported):
        return value
    dtype = np.dtype(dtype)
    is_bfloat16(dtype)  # at its first meeting, the table learns bfloat16's dtype
    value = _ACL_VALUES.get(dtype)
    if value is not None and dtype in supported:
        return value
    if not isinstance(supported, Dtypes):
        supported = tuple(supported)
    if not dtype.isnative and dtype.newbyteorder("=") in supported:
        raise TypeError(f"{argument} has dtype {dtype.str}, a non-native byte order; "
                        f"swap it first (array.astype(array.dtype.newbyteorder('=')))")
    listed = _names(supported)
    names = ", ".join(listed)
    hint = ""
    target = "float32" if "float32" in listed else listed[0] if listed else ""
    module = "ml_dtypes" if target == "bfloat16" else "numpy"
    if listed and (argument == "out" or argument.startswith("the out=")):
        hint = "; give an out= array of one of them (results are written in place)"
    elif listed and python_value:
        hint = (f"; pass numpy.asarray({argument}, dtype={module}.{target}) (Python values "
                f"take the dtype of the call's arrays; without one they are bool, int64 or "
                f"float32)")
    elif dtype == np.float64 and np.dtype(np.float32) in supported:
        hint = (f"; convert it with {argument}.astype(numpy.float32) (float64 is numpy's "
                "default float dtype)")
    elif listed:
        hint = f"; convert it with {argument}.astype({module}.{target})"
    raise TypeError(f"{argument} has dtype {dtype_label(dtype)}; supported dtypes are "
                    f"{names}{hint}")


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
