"""``libnnopbase.so``: aclTensor, aclScalar, the aclnn arrays, tensor and scalar lists, and the
repeatable-executor API, one checked function per C function."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from .. import _caches
from . import core
from ._ffi import ffi
from .codes import constant
from .core import FORMAT_ND, META, NULL, PLAIN_FORMATS, check, check_created
from .host import host

# Not in the registry: empty_cache() is not to free arrays an aclTensor being made reads.
_int64_arrays: _caches.Bounded[tuple[int, ...], Any] = _caches.Bounded(4096)


def _int64_array(values: tuple[int, ...]) -> Any:
    """A C int64_t array of ``values`` (cached: shapes and strides repeat across calls)."""
    if not values:
        return NULL
    array = _int64_arrays.get(values)
    if array is None:
        array = _int64_arrays.put(values, ffi.new("int64_t[]", values))
    return array


def _c_array(c_type: str, values: Sequence[Any]) -> Any:
    """A new C array of ``values`` (NULL for none: CANN takes a NULL pointer with size 0)."""
    return ffi.new(f"{c_type}[]", values) if values else NULL


def _stored(owned: Any, made: int, api: str) -> Any:
    """The object the host library stored into ``owned``, or the error of ``api``."""
    check_created(owned.handle if made else NULL, api)
    return owned.handle


def create_tensor(shape: tuple[int, ...], dtype: int, strides: tuple[int, ...], offset: int,
                  storage_shape: tuple[int, ...], data: Any, fmt: int = FORMAT_ND) -> Any:
    """aclCreateTensor. Shapes, strides and offset count elements; CANN copies the arrays."""
    handle = META.aclCreateTensor(_int64_array(shape), len(shape), dtype,
                                      _int64_array(strides), offset, fmt,
                                      _int64_array(storage_shape), len(storage_shape), data)
    return check_created(handle, "aclCreateTensor")


def create_owned_tensor(owned: Any, shape: tuple[int, ...], dtype: int,
                        strides: tuple[int, ...], offset: int, storage_shape: tuple[int, ...],
                        data: Any, fmt: int | None = None) -> Any:
    """aclCreateTensor with the result stored straight into ``owned`` (an empty
    ``aclpyHandle``) by the host library: no moment exists where the tensor is unowned.
    ``fmt``: the aclFormat, by default the plain one of the shape's rank (PLAIN_FORMATS)."""
    if fmt is None:
        fmt = PLAIN_FORMATS.get(len(shape), FORMAT_ND)
    made = host().aclpyCreateTensor(owned, META.aclCreateTensor, _int64_array(shape), len(shape),
                                    dtype, _int64_array(strides), offset, fmt,
                                    _int64_array(storage_shape), len(storage_shape), data)
    return _stored(owned, made, "aclCreateTensor")


def create_owned_scalar(owned: Any, value: Any, dtype: int) -> Any:
    """aclCreateScalar of ``value`` as ``dtype``, stored straight into ``owned`` (an empty
    ``aclpyHandle``) by the host library. ``value``: a number for ACL_FLOAT or ACL_DOUBLE,
    else a one-element numpy array holding the value in that dtype."""
    if hasattr(value, "__array_interface__"):
        storage = ffi.from_buffer(value)
    else:
        storage = ffi.new("double *" if dtype == constant("ACL_DOUBLE") else "float *", value)
    return _stored(owned, host().aclpyCreateScalar(owned, META.aclCreateScalar, storage, dtype),
                   "aclCreateScalar")


def _owned_array_function(kind: str, c_type: str) -> Callable[[Any, Sequence[Any]], Any]:
    """``aclCreate<kind>Array`` of the values as ``c_type`` (CANN copies them), stored
    straight into ``owned`` (an empty ``aclpyHandle``) by the host library."""
    api, store = f"aclCreate{kind}Array", f"aclpyCreate{kind}Array"

    def create_owned(owned: Any, values: Sequence[Any]) -> Any:
        made = getattr(host(), store)(owned, getattr(META, api), _c_array(c_type, values),
                                      len(values))
        return _stored(owned, made, api)

    create_owned.__doc__ = f"{api} of ``values`` as C {c_type}, stored straight into ``owned``."
    return create_owned


create_owned_int_array = _owned_array_function("Int", "int64_t")
create_owned_float_array = _owned_array_function("Float", "float")
create_owned_bool_array = _owned_array_function("Bool", "bool")


def _owned_list_function(kind: str) -> Callable[[Any, list[Any]], Any]:
    """``aclCreate<kind>List`` of what the ``members`` handles hold (aclTensors or aclScalars),
    stored straight into ``owned``; on success the members are emptied in the same C call
    (the list destroys them), on failure they still hold theirs."""
    api, store = f"aclCreate{kind}List", f"aclpyCreate{kind}List"

    def create_owned(owned: Any, members: list[Any]) -> Any:
        made = getattr(host(), store)(owned, getattr(META, api),
                                      _c_array("aclpyHandle *", members), len(members))
        if made < 0:
            raise ValueError(f"{api}: a member is not a live acl{kind} handle of this "
                             "runtime, or the host is out of memory")
        return _stored(owned, made, api)

    create_owned.__doc__ = f"{api} of what the ``members`` handles hold, stored into ``owned``."
    return create_owned


create_owned_tensor_list = _owned_list_function("Tensor")
create_owned_scalar_list = _owned_list_function("Scalar")


def destroy_tensor(tensor: Any) -> None:
    check(META.aclDestroyTensor(tensor), "aclDestroyTensor")


_libc_free: Any = None


def _release_array(values: Any) -> None:
    """Free an array CANN's getters allocated. CANN allocates it with ``new int64_t[]`` and
    documents that the caller releases it (hicann/opbase acl_op_api.cpp, aclGetViewShape.md);
    libstdc++'s ``new[]`` of a type without destructor is ``malloc`` with nothing before the
    elements, so the C library's ``free`` releases it."""
    global _libc_free
    if _libc_free is None:
        import ctypes

        _libc_free = ctypes.CDLL(None).free
        _libc_free.argtypes = [ctypes.c_void_p]
        _libc_free.restype = None
    _libc_free(int(ffi.cast("uintptr_t", values)))


def _tensor_array(api: str, tensor: Any) -> tuple[int, ...]:
    values = ffi.new("int64_t **")
    count = ffi.new("uint64_t *")
    check(getattr(META, api)(tensor, values, count), api)
    try:
        return tuple(values[0][0:count[0]]) if count[0] else ()
    finally:
        if values[0] != NULL:
            _release_array(values[0])


def get_view_shape(tensor: Any) -> tuple[int, ...]:
    """aclGetViewShape: the tensor's view shape, which an operator whose output size depends
    on the data (aclnnMaskedSelect) sets to the real one when its launch ran."""
    return _tensor_array("aclGetViewShape", tensor)


def get_view_strides(tensor: Any) -> tuple[int, ...]:
    """aclGetViewStrides: the tensor's view strides, in elements."""
    return _tensor_array("aclGetViewStrides", tensor)


def get_storage_shape(tensor: Any) -> tuple[int, ...]:
    """aclGetStorageShape: the tensor's storage shape."""
    return _tensor_array("aclGetStorageShape", tensor)


def get_data_type(tensor: Any) -> int:
    """aclGetDataType: the tensor's aclDataType (ACL_DT_UNDEFINED for a value that is none)."""
    dtype = ffi.new("aclDataType *")
    check(META.aclGetDataType(tensor, dtype), "aclGetDataType")
    return int(dtype[0])


# CANN's repeatable-executor API, documented from CANN 8.0.RC3 (hiascend API references of
# 8.0.RC2 and 8.0.RC3; hicann/opbase docs aclSetAclOpExecutorRepeatable.md,
# aclDestroyAclOpExecutor.md, aclSetInputTensorAddr.md): in 8.0.RC2 aclSetAclOpExecutorRepeatable
# and aclDestroyAclOpExecutor were reserved, and rebinding had another name. Without all four,
# executors are not made repeatable: every launch runs phase 1 and hands its executor to
# phase 2 (``engine.launch.OneShotLaunch``).
# The names: data/emulator_ops.json, which the emulator's build reads too.
REPEATABLE_API: tuple[str, ...] = tuple(json.loads(
    (resources.files("aclnn_py") / "data" / "emulator_ops.json").read_text(encoding="utf-8")
)["repeatable_executor_api"])
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


def _array_functions(kind: str, c_type: str) -> tuple[Callable[[Sequence[Any]], Any],
                                                      Callable[[Any], None]]:
    """``aclCreate<kind>Array`` of the values as ``c_type`` (CANN copies them) and
    ``aclDestroy<kind>Array``, checked."""
    create_api, destroy_api = f"aclCreate{kind}Array", f"aclDestroy{kind}Array"

    def create(values: Sequence[Any]) -> Any:
        return check_created(getattr(META, create_api)(_c_array(c_type, values), len(values)),
                             create_api)

    def destroy(array: Any) -> None:
        check(getattr(META, destroy_api)(array), destroy_api)

    create.__doc__ = f"{create_api} of ``values`` as C {c_type} (CANN copies them)."
    destroy.__doc__ = f"{destroy_api}."
    return create, destroy


create_int_array, destroy_int_array = _array_functions("Int", "int64_t")
create_float_array, destroy_float_array = _array_functions("Float", "float")
create_bool_array, destroy_bool_array = _array_functions("Bool", "bool")


def create_tensor_list(tensors: list[Any]) -> Any:
    """aclCreateTensorList of ``tensors`` (CANN copies the pointers; the list then owns the
    tensors: :func:`destroy_tensor_list` destroys them, and they must not be destroyed
    otherwise)."""
    return check_created(META.aclCreateTensorList(_c_array("aclTensor *", tensors), len(tensors)),
                         "aclCreateTensorList")


def destroy_tensor_list(tensor_list: Any) -> None:
    """aclDestroyTensorList: the list and every tensor in it."""
    check(META.aclDestroyTensorList(tensor_list), "aclDestroyTensorList")
