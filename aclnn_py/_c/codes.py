"""CANN's enum values and status names, read from the C declarations in ``headers/``.

The one table of codes: the checked C calls, the dtype table and the typed errors all
take their numbers from here. It imports nothing but the cffi declarations, so
:mod:`aclnn_py.errors` can name a status without loading any library.
"""

from __future__ import annotations

from ._ffi import ffi

_enum_values: dict[str, int] = {}
for _type in ("aclDataType", "aclFormat", "aclrtMemcpyKind", "aclrtMemMallocPolicy",
              "aclrtMemAttr", "aclrtStreamStatus", "aclrtEventStatus", "aclrtEventRecordedStatus",
              "aclErrorCode", "aclnnStatusCode"):
    _enum_values.update(ffi.typeof(_type).relements)


def constant(name: str) -> int:
    """The value of a CANN enum member declared in headers/ (e.g. "ACL_FLOAT")."""
    return _enum_values[name]


STATUS_NAMES: dict[int, str] = {
    **ffi.typeof("aclErrorCode").elements,
    **ffi.typeof("aclnnStatusCode").elements,
}
STATUS_NAMES[0] = "ACL_SUCCESS"

# Statuses that mean "device memory exhausted" (runtime and acl families).
OUT_OF_MEMORY = frozenset(
    constant(name)
    for name in ("ACL_ERROR_BAD_ALLOC", "ACL_ERROR_RT_MEMORY_ALLOCATION", "ACL_ERROR_RT_DEVICE_OOM")
)

_DTYPE_NAMES: dict[int, str] = dict(ffi.typeof("aclDataType").elements)


def dtype_name(value: int) -> str:
    """The aclDataType member named ``value`` ("ACL_FLOAT4_E2M1"), or "not an aclDataType"."""
    return _DTYPE_NAMES.get(value, "not an aclDataType")
