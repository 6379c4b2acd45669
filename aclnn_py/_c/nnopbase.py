"""``libnnopbase.so``: aclTensor, aclScalar, the aclnn arrays and tensor lists, and the
repeatable-executor API, one checked function per C function."""

from __future__ import annotations

from typing import Any

from . import core
from ._ffi import ffi
from .codes import constant
from .core import FORMAT_ND, META, NULL, check, check_created
from .host import host

_int64_arrays: dict[tuple[int, ...], Any] = {}


def _int64_array(values: tuple[int, ...]) -> Any:
    """A C int64_t array of ``values`` (cached: shapes and strides repeat across calls)."""
    if not values:
        return NULL
    array = _int64_arrays.get(values)
    if array is None:
        if len(_int64_arrays) >= 4096:
            _int64_arrays.clear()
        array = _int64_arrays[values] = ffi.new("int64_t[]", values)
    return array


def create_tensor(shape: tuple[int, ...], dtype: int, strides: tuple[int, ...], offset: int,
                  storage_shape: tuple[int, ...], data: Any, fmt: int = FORMAT_ND) -> Any:
    """aclCreateTensor. Shapes, strides and offset count elements; CANN copies the arrays."""
    handle = META.aclCreateTensor(_int64_array(shape), len(shape), dtype,
                                      _int64_array(strides), offset, fmt,
                                      _int64_array(storage_shape), len(storage_shape), data)
    return check_created(handle, "aclCreateTensor")


def create_owned_tensor(owned: Any, shape: tuple[int, ...], dtype: int,
                        strides: tuple[int, ...], offset: int, storage_shape: tuple[int, ...],
                        data: Any, fmt: int = FORMAT_ND) -> Any:
    """aclCreateTensor with the result stored straight into ``owned`` (an empty
    ``aclpyHandle``) by the host library: no moment exists where the tensor is unowned."""
    made = host().aclpyCreateTensor(owned, META.aclCreateTensor, _int64_array(shape), len(shape),
                                    dtype, _int64_array(strides), offset, fmt,
                                    _int64_array(storage_shape), len(storage_shape), data)
    check_created(owned.handle if made else NULL, "aclCreateTensor")
    return owned.handle


def create_owned_scalar(owned: Any, value: Any, dtype: int) -> Any:
    """aclCreateScalar of ``value`` as ``dtype``, stored straight into ``owned`` (an empty
    ``aclpyHandle``) by the host library. ``value``: a number for ACL_FLOAT or ACL_DOUBLE,
    else a one-element numpy array holding the value in that dtype."""
    if hasattr(value, "__array_interface__"):
        storage = ffi.from_buffer(value)
    else:
        storage = ffi.new("double *" if dtype == constant("ACL_DOUBLE") else "float *", value)
    made = host().aclpyCreateScalar(owned, META.aclCreateScalar, storage, dtype)
    check_created(owned.handle if made else NULL, "aclCreateScalar")
    return owned.handle


def create_owned_int_array(owned: Any, values: tuple[int, ...]) -> Any:
    """aclCreateIntArray of ``values`` (CANN copies them), stored straight into ``owned``."""
    array = ffi.new("int64_t[]", values) if values else NULL
    made = host().aclpyCreateIntArray(owned, META.aclCreateIntArray, array, len(values))
    check_created(owned.handle if made else NULL, "aclCreateIntArray")
    return owned.handle


def create_owned_float_array(owned: Any, values: tuple[float, ...]) -> Any:
    """aclCreateFloatArray of ``values`` (as C floats; CANN copies them), stored straight into
    ``owned``."""
    array = ffi.new("float[]", values) if values else NULL
    made = host().aclpyCreateFloatArray(owned, META.aclCreateFloatArray, array, len(values))
    check_created(owned.handle if made else NULL, "aclCreateFloatArray")
    return owned.handle


def create_owned_bool_array(owned: Any, values: tuple[bool, ...]) -> Any:
    """aclCreateBoolArray of ``values`` (CANN copies them), stored straight into ``owned``."""
    array = ffi.new("bool[]", values) if values else NULL
    made = host().aclpyCreateBoolArray(owned, META.aclCreateBoolArray, array, len(values))
    check_created(owned.handle if made else NULL, "aclCreateBoolArray")
    return owned.handle


def create_owned_tensor_list(owned: Any, members: list[Any]) -> Any:
    """aclCreateTensorList of the tensors the ``members`` handles hold, stored straight into
    ``owned``; on success the members are emptied in the same C call (the list destroys its
    tensors), on failure they still hold their tensors."""
    cells = ffi.new("aclpyHandle *[]", members) if members else NULL
    made = host().aclpyCreateTensorList(owned, META.aclCreateTensorList, cells, len(members))
    if made < 0:
        raise ValueError("aclCreateTensorList: a member is not a live aclTensor handle of this "
                         "runtime, or the host is out of memory")
    check_created(owned.handle if made else NULL, "aclCreateTensorList")
    return owned.handle


def destroy_tensor(tensor: Any) -> None:
    check(META.aclDestroyTensor(tensor), "aclDestroyTensor")


# CANN's repeatable-executor API, documented from CANN 8.0.RC3 (hiascend API references of
# 8.0.RC2 and 8.0.RC3; hicann/opbase docs aclSetAclOpExecutorRepeatable.md,
# aclDestroyAclOpExecutor.md, aclSetInputTensorAddr.md): in 8.0.RC2 aclSetAclOpExecutorRepeatable
# and aclDestroyAclOpExecutor were reserved, and rebinding had another name. Without all four,
# executors are not made repeatable: every launch runs phase 1 and hands its executor to
# phase 2 (``engine.launch.OneShotLaunch``).
REPEATABLE_API = ("aclSetAclOpExecutorRepeatable", "aclSetInputTensorAddr",
                  "aclSetOutputTensorAddr", "aclDestroyAclOpExecutor")
_repeatable_api_missing: tuple[str, ...] | None = None


def repeatable_api_missing() -> tuple[str, ...]:
    """The functions of :data:`REPEATABLE_API` the loaded libraries lack (resolved once,
    through :func:`core.optional`); empty from CANN 8.0.RC3 on."""
    global _repeatable_api_missing
    if _repeatable_api_missing is None:
        _repeatable_api_missing = tuple(name for name in REPEATABLE_API
                                        if core.optional(META, name) is NULL)
    return _repeatable_api_missing


def set_executor_repeatable(executor: Any) -> None:
    check(META.aclSetAclOpExecutorRepeatable(executor), "aclSetAclOpExecutorRepeatable")


def destroy_executor(executor: Any) -> None:
    check(META.aclDestroyAclOpExecutor(executor), "aclDestroyAclOpExecutor")


def set_input_tensor_addr(executor: Any, index: int, tensor: Any, data: Any) -> None:
    check(META.aclSetInputTensorAddr(executor, index, tensor, data), "aclSetInputTensorAddr")


def set_output_tensor_addr(executor: Any, index: int, tensor: Any, data: Any) -> None:
    check(META.aclSetOutputTensorAddr(executor, index, tensor, data), "aclSetOutputTensorAddr")


def create_scalar(value: Any, dtype: int) -> Any:
    """aclCreateScalar: ``value`` is a C pointer to one host value of ``dtype``; CANN copies it."""
    return check_created(META.aclCreateScalar(value, dtype), "aclCreateScalar")


def destroy_scalar(scalar: Any) -> None:
    check(META.aclDestroyScalar(scalar), "aclDestroyScalar")


def create_int_array(values: tuple[int, ...]) -> Any:
    """aclCreateIntArray of ``values`` (CANN copies them)."""
    array = ffi.new("int64_t[]", values) if values else NULL
    return check_created(META.aclCreateIntArray(array, len(values)), "aclCreateIntArray")


def destroy_int_array(array: Any) -> None:
    check(META.aclDestroyIntArray(array), "aclDestroyIntArray")


def create_float_array(values: tuple[float, ...]) -> Any:
    """aclCreateFloatArray of ``values`` as C floats (CANN copies them)."""
    array = ffi.new("float[]", values) if values else NULL
    return check_created(META.aclCreateFloatArray(array, len(values)), "aclCreateFloatArray")


def destroy_float_array(array: Any) -> None:
    check(META.aclDestroyFloatArray(array), "aclDestroyFloatArray")


def create_bool_array(values: tuple[bool, ...]) -> Any:
    """aclCreateBoolArray of ``values`` (CANN copies them)."""
    array = ffi.new("bool[]", values) if values else NULL
    return check_created(META.aclCreateBoolArray(array, len(values)), "aclCreateBoolArray")


def destroy_bool_array(array: Any) -> None:
    check(META.aclDestroyBoolArray(array), "aclDestroyBoolArray")


def create_tensor_list(tensors: list[Any]) -> Any:
    """aclCreateTensorList of ``tensors`` (CANN copies the pointers; the list then owns the
    tensors: :func:`destroy_tensor_list` destroys them, and they must not be destroyed
    otherwise)."""
    array = ffi.new("aclTensor *[]", tensors) if tensors else NULL
    return check_created(META.aclCreateTensorList(array, len(tensors)), "aclCreateTensorList")


def destroy_tensor_list(tensor_list: Any) -> None:
    """aclDestroyTensorList: the list and every tensor in it."""
    check(META.aclDestroyTensorList(tensor_list), "aclDestroyTensorList")
