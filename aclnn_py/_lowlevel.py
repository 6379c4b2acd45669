"""The low-level layer: one checked Python function per C function.

It keeps C's semantics (handles are cffi pointers, sizes are bytes, nothing is
owned here) but returns results instead of out-parameters, and every status
passes through :func:`check`, the only place that compares return codes.
Higher layers import this module, never the cffi library objects.
"""

from __future__ import annotations

import ctypes
import json
import os
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from . import _loader
from ._ffi import ffi
from .errors import AclError, UnavailableError

_new, _gc = ffi.new, ffi.gc  # the per-call allocation path looks them up once

NULL = ffi.NULL

_enum_values: dict[str, int] = {}
for _type in ("aclDataType", "aclFormat", "aclrtMemcpyKind", "aclrtMemMallocPolicy",
              "aclrtMemAttr", "aclrtStreamStatus", "aclrtEventStatus", "aclrtEventRecordedStatus",
              "aclErrorCode", "aclnnStatusCode"):
    _enum_values.update(ffi.typeof(_type).relements)


def constant(name: str) -> int:
    """The value of a CANN enum member declared in headers/ (e.g. "ACL_FLOAT")."""
    return _enum_values[name]


ACL_SUCCESS = constant("ACL_SUCCESS")
ACL_ERROR_REPEAT_INITIALIZE = constant("ACL_ERROR_REPEAT_INITIALIZE")
ACLNN_ERR_INNER_NULLPTR = constant("ACLNN_ERR_INNER_NULLPTR")
MEMCPY_HOST_TO_DEVICE = constant("ACL_MEMCPY_HOST_TO_DEVICE")
MEMCPY_DEVICE_TO_HOST = constant("ACL_MEMCPY_DEVICE_TO_HOST")
MEMCPY_DEVICE_TO_DEVICE = constant("ACL_MEMCPY_DEVICE_TO_DEVICE")
MALLOC_HUGE_FIRST = constant("ACL_MEM_MALLOC_HUGE_FIRST")
FORMAT_ND = constant("ACL_FORMAT_ND")


# ---- library access --------------------------------------------------------

def libraries() -> _loader.Libraries:
    """The loaded libraries (loading them on first use; the loader keeps them)."""
    return _loader.load()


class _Library:
    """The C functions of one library family, each resolved on first use, then an attribute."""

    def __init__(self, family: str) -> None:
        self._family = family

    def __getattr__(self, name: str) -> Any:
        libs = libraries()
        candidates = [getattr(libs, self._family)]
        if self._family == "ops":  # CANN >= 8.5: one operator library per repository
            candidates.extend(libs.extra_ops)
        for library in candidates:
            try:
                function = getattr(library, name)
            except (AttributeError, ffi.error):  # cffi raises ffi.error for a missing symbol
                continue
            setattr(self, name, function)
            return function
        searched = [libs.installation.paths[self._family]]
        if self._family == "ops":
            searched.extend(libs.installation.extra_ops)
        raise UnavailableError(name, " or ".join(str(path) for path in searched))


RT = _Library("runtime")
META = _Library("meta")
OPS = _Library("ops")


# ---- the one check ---------------------------------------------------------


def recent_error_message() -> str:
    """CANN's error text for this thread, copied at once (the call clears it)."""
    text = RT.aclGetRecentErrMsg()
    if text == NULL:
        return ""
    message: str = ffi.string(text).decode("utf-8", errors="replace")
    return message


def check(status: int, api: str, detail: str = "") -> None:
    """Raise the AclError for a non-zero ``status`` returned by ``api`` (``detail``, what
    aclnn_py adds, comes before CANN's own message)."""
    if status != ACL_SUCCESS:
        message = recent_error_message()
        raise AclError.from_status(status, api, f"{detail} CANN: {message}" if detail else message)


def check_created(handle: Any, api: str) -> Any:
    """Raise for a NULL returned by a creator (``api`` reports no status of its own)."""
    if handle == NULL:
        raise AclError.from_status(ACLNN_ERR_INNER_NULLPTR, api, recent_error_message())
    return handle


def address(pointer: Any) -> int:
    """The integer address of a cffi pointer."""
    return int(ffi.cast("uintptr_t", pointer))


def c_string(text: str) -> Any:
    """A NUL-terminated UTF-8 copy of ``text`` (a ``char[]`` owned by the returned object)."""
    return ffi.new("char[]", text.encode())


def host_pointer(array: Any, *, writable: bool = False) -> Any:
    """A C pointer to the first element of a numpy array (its memory, not a copy); the
    array must stay alive while the pointer is used."""
    if array.flags.c_contiguous:
        return ffi.from_buffer(array, require_writable=writable)
    if writable and not array.flags.writeable:
        raise ValueError("the array is read-only")
    return ffi.cast("void *", array.__array_interface__["data"][0])


# ---- initialisation, devices, contexts -------------------------------------


def init(config_path: str | None = None) -> bool:
    """aclInit. Returns False when the process was already initialised (100002)."""
    status = RT.aclInit(config_path.encode() if config_path else NULL)
    if status == ACL_ERROR_REPEAT_INITIALIZE:
        recent_error_message()  # CANN counts a repeat as an error; drop its text
        return False
    check(status, "aclInit")
    return True


def finalize() -> None:
    check(RT.aclFinalize(), "aclFinalize")


def finalize_reference() -> int | None:
    """aclFinalizeReference: give back one aclInit, de-initialising only when it was the
    last (CANN >= 8.5). Returns the references left, or None when the runtime lacks it."""
    try:
        function = RT.aclFinalizeReference
    except UnavailableError:
        return None
    remaining = ffi.new("uint64_t *")
    check(function(remaining), "aclFinalizeReference")
    return int(remaining[0])


def get_soc_name() -> str | None:
    name = RT.aclrtGetSocName()
    return None if name == NULL else ffi.string(name).decode("utf-8", errors="replace")


def set_device(device_id: int) -> None:
    check(RT.aclrtSetDevice(device_id), "aclrtSetDevice")


def reset_device(device_id: int) -> None:
    check(RT.aclrtResetDevice(device_id), "aclrtResetDevice")


def get_device() -> int:
    out = ffi.new("int32_t *")
    check(RT.aclrtGetDevice(out), "aclrtGetDevice")
    device: int = out[0]
    return device


def get_device_count() -> int:
    out = ffi.new("uint32_t *")
    check(RT.aclrtGetDeviceCount(out), "aclrtGetDeviceCount")
    count: int = out[0]
    return count


def logical_device_id(device: int) -> int | None:
    """aclrtGetLogicDevIdByUserDevId (CANN >= 8.5): the id ``ASCEND_RT_VISIBLE_DEVICES`` gives
    visible device ``device`` (the device itself when the variable is unset); None when the
    runtime lacks the function."""
    return _device_id("aclrtGetLogicDevIdByUserDevId", device)


def physical_device_id(device: int) -> int | None:
    """aclrtGetPhyDevIdByLogicDevId (CANN >= 8.5): the chip id of visible device ``device``
    (equal to its logical id outside containers); None when the runtime lacks the function.

    It takes a visible (user) device id, whatever its parameter is called (hicann/runtime
    src/runtime/api/impl/api_error.cc, ApiErrorDecorator::GetDevicePhyIdByIndex, converts it
    with ChgUserDevIdToDeviceId; docs/zh/api_ref/04_device_management.md says so too).
    """
    return _device_id("aclrtGetPhyDevIdByLogicDevId", device)


def _device_id(api: str, device: int) -> int | None:
    try:
        function = getattr(RT, api)
    except UnavailableError:
        return None
    out = ffi.new("int32_t *")
    check(function(device, out), api)
    found: int = out[0]
    return found


def synchronize_device() -> None:
    check(RT.aclrtSynchronizeDevice(), "aclrtSynchronizeDevice")


def create_context(device_id: int) -> Any:
    out = ffi.new("aclrtContext *")
    check(RT.aclrtCreateContext(out, device_id), "aclrtCreateContext")
    return out[0]


def destroy_context(context: Any) -> None:
    check(RT.aclrtDestroyContext(context), "aclrtDestroyContext")


def set_current_context(context: Any) -> None:
    check(RT.aclrtSetCurrentContext(context), "aclrtSetCurrentContext")


def get_current_context() -> Any:
    out = ffi.new("aclrtContext *")
    check(RT.aclrtGetCurrentContext(out), "aclrtGetCurrentContext")
    return out[0]


# ---- streams and events ----------------------------------------------------


def handle_cell(c_type: str) -> Any:
    """An empty (NULL) cell for a handle of ``c_type`` (e.g. "aclrtStream"), for a creator
    to write into: whoever holds the cell holds the handle from the moment it exists."""
    return ffi.new(c_type + " *")


def create_stream(cell: Any = None) -> Any:
    out = ffi.new("aclrtStream *") if cell is None else cell
    check(RT.aclrtCreateStream(out), "aclrtCreateStream")
    return out[0]


def destroy_stream(stream: Any) -> None:
    check(RT.aclrtDestroyStream(stream), "aclrtDestroyStream")


def synchronize_stream(stream: Any) -> None:
    check(RT.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")


def synchronize_stream_with_timeout(stream: Any, timeout_ms: int) -> None:
    check(RT.aclrtSynchronizeStreamWithTimeout(stream, timeout_ms),
          "aclrtSynchronizeStreamWithTimeout")


def stream_query(stream: Any) -> int:
    """aclrtStreamQuery: an aclrtStreamStatus value."""
    out = ffi.new("aclrtStreamStatus *")
    check(RT.aclrtStreamQuery(stream, out), "aclrtStreamQuery")
    return int(out[0])


def create_event(cell: Any = None) -> Any:
    out = ffi.new("aclrtEvent *") if cell is None else cell
    check(RT.aclrtCreateEvent(out), "aclrtCreateEvent")
    return out[0]


def destroy_event(event: Any) -> None:
    check(RT.aclrtDestroyEvent(event), "aclrtDestroyEvent")


def record_event(event: Any, stream: Any) -> None:
    check(RT.aclrtRecordEvent(event, stream), "aclrtRecordEvent")


def synchronize_event(event: Any) -> None:
    check(RT.aclrtSynchronizeEvent(event), "aclrtSynchronizeEvent")


def event_elapsed_time(start: Any, end: Any) -> float:
    """Milliseconds between two completed events."""
    out = ffi.new("float *")
    check(RT.aclrtEventElapsedTime(out, start, end), "aclrtEventElapsedTime")
    return float(out[0])


# ---- memory ----------------------------------------------------------------


def malloc(size: int, policy: int = MALLOC_HUGE_FIRST) -> Any:
    """aclrtMalloc: a device pointer of ``size`` (> 0) bytes."""
    out = ffi.new("void **")
    check(RT.aclrtMalloc(out, size, policy), "aclrtMalloc")
    return out[0]


def free(pointer: Any) -> None:
    check(RT.aclrtFree(pointer), "aclrtFree")


def malloc_host(size: int) -> Any:
    out = ffi.new("void **")
    check(RT.aclrtMallocHost(out, size), "aclrtMallocHost")
    return out[0]


def free_host(pointer: Any) -> None:
    check(RT.aclrtFreeHost(pointer), "aclrtFreeHost")


def memcpy(dst: Any, dst_max: int, src: Any, count: int, kind: int) -> None:
    check(RT.aclrtMemcpy(dst, dst_max, src, count, kind), "aclrtMemcpy")


def memcpy_async(dst: Any, dst_max: int, src: Any, count: int, kind: int, stream: Any) -> None:
    """aclrtMemcpyAsync. Before CANN 8.5 the host side of a host<->device copy must come from
    :func:`malloc_host` and both addresses must be 64-byte aligned (ordinary host memory is
    undefined behaviour there); aclnn_py's own copies are synchronous (:func:`memcpy`)."""
    check(RT.aclrtMemcpyAsync(dst, dst_max, src, count, kind, stream), "aclrtMemcpyAsync")


def memset(pointer: Any, max_count: int, value: int, count: int) -> None:
    check(RT.aclrtMemset(pointer, max_count, value, count), "aclrtMemset")


def get_mem_info(attribute: int) -> tuple[int, int]:
    """aclrtGetMemInfo: (free, total) bytes of the current device."""
    free_bytes = ffi.new("size_t *")
    total_bytes = ffi.new("size_t *")
    check(RT.aclrtGetMemInfo(attribute, free_bytes, total_bytes), "aclrtGetMemInfo")
    return int(free_bytes[0]), int(total_bytes[0])


# ---- aclTensor and executors -----------------------------------------------


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
# phase 2 (``_launch.OneShotLaunch``). The names: data/emulator_ops.json, which the emulator's
# build reads too.
REPEATABLE_API: tuple[str, ...] = tuple(json.loads(
    (resources.files("aclnn_py") / "data" / "emulator_ops.json").read_text(encoding="utf-8")
)["repeatable_executor_api"])
_repeatable_api_missing: tuple[str, ...] | None = None


def repeatable_api_missing() -> tuple[str, ...]:
    """The functions of :data:`REPEATABLE_API` the loaded libraries lack (resolved once,
    through :func:`_optional`); empty from CANN 8.0.RC3 on."""
    global _repeatable_api_missing
    if _repeatable_api_missing is None:
        _repeatable_api_missing = tuple(name for name in REPEATABLE_API
                                        if _optional(META, name) is NULL)
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


# ---- operators (the two-phase aclnn call) ----------------------------------


# Operators bound from a library by path (aclnn_py.call): (library, C name) -> C function.
_bound_functions: dict[tuple[str, str], Any] = {}


def _operator_function(library: str, name: str) -> Any:
    """``name`` from the loaded operator libraries (``library`` ""), else as bound by
    :func:`bind_operator` from ``library``."""
    if library:
        return _bound_functions[(library, name)]
    return getattr(OPS, name)


def symbol_address(library: Path, name: str) -> int | None:
    """The address of the exported symbol ``name`` of the already loaded ``library``, or
    None when it does not export it."""
    return symbol_finder(library)(name)


def symbol_finder(library: Path) -> Callable[[str], int | None]:
    """:func:`symbol_address` of many names in one loaded ``library``, opened once."""
    try:
        handle = ctypes.CDLL(str(library), mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return lambda name: None

    def find(name: str) -> int | None:
        try:
            function = getattr(handle, name)
        except AttributeError:
            return None
        address = ctypes.cast(function, ctypes.c_void_p).value
        return int(address) if address else None

    return find


def bind_operator(library: Path, operator: str, phase1_types: tuple[str, ...]) -> None:
    """Make ``operator``'s phase 1 (declared with the C ``phase1_types``) and phase 2 from
    the loaded ``library`` callable by the functions below with ``library=str(library)``.

    The header's declaration is the function type: a C type the binding's declarations
    (``headers/``) lack cannot be called, and the error names it.
    """
    key = str(library)
    for name, types in ((operator + "GetWorkspaceSize", phase1_types),
                        (operator, ("void *", "uint64_t", "aclOpExecutor *", "aclrtStream"))):
        if (key, name) in _bound_functions:
            continue
        address = symbol_address(library, name)
        if address is None:
            raise UnavailableError(name, key)
        try:
            function_type = ffi.typeof(f"aclnnStatus(*)({', '.join(types)})")
        except ffi.error as error:
            raise TypeError(f"{name}: its parameter types ({', '.join(types)}) include a C type "
                            f"aclnn_py does not know ({error})") from None
        _bound_functions[(key, name)] = ffi.cast(function_type, address)


def operator_workspace_size(operator: str, *arguments: Any, owner: Any = None,
                            library: str = "") -> tuple[int, Any]:
    """Phase 1, ``<operator>GetWorkspaceSize(*arguments, &size, &executor)``.

    Returns (workspace bytes, executor handle). With ``owner`` (an ``aclpyHandle``),
    CANN writes the executor straight into it, so it is owned from the moment it exists.
    """
    api = operator + "GetWorkspaceSize"
    size = ffi.new("uint64_t *")
    if owner is None:
        executor = ffi.new("aclOpExecutor **")
    else:
        executor = ffi.cast("aclOpExecutor **", ffi.addressof(owner, "handle"))
    check(_operator_function(library, api)(*arguments, size, executor), api)
    return int(size[0]), executor[0]


def operator_launch(operator: str, workspace: Any, workspace_size: int, executor: Any,
                    stream: Any) -> None:
    """Phase 2, ``<operator>(workspace, size, executor, stream)``."""
    check(getattr(OPS, operator)(workspace, workspace_size, executor, stream), operator)


def operator_phase2(operator: str, library: str = "") -> Any:
    """The C function of phase 2, ``<operator>``, for :func:`launch_consuming`."""
    return _operator_function(library, operator)


def launch_consuming(owned: Any, phase2: Any, workspace: Any, workspace_size: int, stream: Any,
                     operator: str) -> None:
    """Phase 2 on the non-repeatable executor ``owned`` holds (an ``aclpyHandle``), handed
    over in the same C call: CANN frees it inside phase 2 whether it succeeds or not."""
    check(_host.aclpyHandleLaunch(owned, phase2, workspace, workspace_size, stream), operator)


def operator_launcher(operator: str, library: str = "") -> Any:
    """Phase 2, ``<operator>(workspace, size, executor, stream)``, as a function looked
    up once (launches are the per-call path)."""
    function = _operator_function(library, operator)

    def launch(workspace: Any, workspace_size: int, executor: Any, stream: Any) -> None:
        check(function(workspace, workspace_size, executor, stream), operator)

    return launch


# ---- aclnn_py's host library: ownership in C (headers/aclnn_py_host.h) -----

HOST_LIBRARY = Path(__file__).resolve().parent / "_native" / "libaclnn_py_host.so"
HANDLE_TENSOR = 1
HANDLE_EXECUTOR = 2
HANDLE_SCALAR = 3
HANDLE_INT_ARRAY = 4
HANDLE_FLOAT_ARRAY = 5
HANDLE_BOOL_ARRAY = 6
HANDLE_TENSOR_LIST = 7

_host: Any = None
_collect_block: Any = None
_collect_handle: Any = None
_collect_staging: Any = None


def _optional(library: _Library, name: str) -> Any:
    """``library.name``, or NULL when the installed CANN lacks it."""
    try:
        return getattr(library, name)
    except UnavailableError:
        return NULL


def host() -> Any:
    """The host library, loaded and given the CANN destroy functions on first use."""
    global _host, _collect_block, _collect_handle, _collect_staging
    if _host is None:
        try:
            # Never unloaded: blocks and handles still alive while the interpreter shuts
            # down call into it when they are collected.
            library = ffi.dlopen(str(HOST_LIBRARY), ffi.RTLD_NOW | ffi.RTLD_NODELETE)
        except OSError as error:
            raise ImportError(f"aclnn_py's host library {HOST_LIBRARY} is missing or broken "
                              f"({error}); reinstall aclnn_py") from None
        # aclDestroyAclOpExecutor may be missing (CANN 8.0.RC2): the host library then gives
        # up executors it would destroy (aclpyHandlesUndestroyable counts them).
        library.aclpyHandlesConfigure(META.aclDestroyTensor,
                                      _optional(META, "aclDestroyAclOpExecutor"),
                                      _optional(META, "aclDestroyScalar"),
                                      _optional(META, "aclDestroyIntArray"),
                                      _optional(META, "aclDestroyFloatArray"),
                                      _optional(META, "aclDestroyBoolArray"),
                                      _optional(META, "aclDestroyTensorList"))
        # Fences: aclrtQueryEventStatus where the runtime has it, as torch_npu probes for it
        # (its values are the opposite of the deprecated aclrtQueryEvent's; hicann/runtime
        # include/external/acl/acl_rt.h, aclrtEventRecordedStatus and aclrtEventStatus).
        library.aclpyStreamsConfigure(RT.aclrtCreateEvent, RT.aclrtDestroyEvent,
                                      RT.aclrtRecordEvent,
                                      _optional(RT, "aclrtQueryEventStatus"),
                                      _optional(RT, "aclrtQueryEvent"))
        _collect_block = library.aclpyBlockCollect
        _collect_handle = library.aclpyHandleCollect
        _collect_staging = library.aclpyStagingCollect
        _host = library
    return _host


def pool_create(device: int, caching: bool) -> Any:
    """A C pool of ``device``'s memory (lives as long as the process)."""
    pool = host().aclpyPoolCreate(device, int(caching), RT.aclrtMalloc, RT.aclrtFree)
    if pool == NULL:
        raise MemoryError("out of host memory for a device memory pool")
    return pool


def host_pool_create(device: int, caching: bool) -> Any:
    """A C pool of page-locked host memory (``aclrtMallocHost``), used with ``device``
    current (lives as long as the process)."""
    pool = host().aclpyHostPoolCreate(device, int(caching), RT.aclrtMallocHost,
                                      RT.aclrtFreeHost)
    if pool == NULL:
        raise MemoryError("out of host memory for a page-locked memory pool")
    return pool


def staging_cell() -> Any:
    """An empty ``aclpyStaging`` whose blocks go back when the cdata dies."""
    return _gc(_new("aclpyStaging *"), _collect_staging)


def staging_fill(staging: Any, host_pool: Any, host_bytes: int, device_pool: Any,
                 device_bytes: int) -> int:
    """Fill ``staging`` with ``host_bytes`` of page-locked memory and ``device_bytes`` of
    device memory (blocks it holds already are kept). Returns 0, or the failing
    allocator's status, unchecked (``staging.failed`` says which; the owning pool passes it
    to :func:`check`, whose out-of-memory error it recovers from)."""
    status: int = _host.aclpyStagingTake(staging, host_pool, host_bytes, device_pool,
                                         device_bytes)
    return status


def staging_take(host_pool: Any, host_bytes: int, device_pool: Any, device_bytes: int
                 ) -> tuple[Any, int]:
    """``(staging, status)``: a new ``aclpyStaging`` and :func:`staging_fill`'s status for it
    (the per-call path; on a failure the caller's pool recovers, or raises)."""
    staging = _gc(_new("aclpyStaging *"), _collect_staging)
    return staging, staging_fill(staging, host_pool, host_bytes, device_pool, device_bytes)


def staging_release(staging: Any) -> None:
    """Give both blocks of ``staging`` back now (as its collection would; safe twice)."""
    _collect_staging(staging)


def staging_block(staging: Any, which: int) -> Any:
    """A pointer to the ``host`` (1) or ``device`` (2) block of an ``aclpyStaging``."""
    return ffi.addressof(staging, "host" if which == 1 else "device")


# A host-to-host copy, copy_host(destination, source, nbytes): each side a C pointer or a
# buffer (a C-contiguous numpy array, writable for the destination); no CANN call.
copy_host = ffi.memmove


def new_block() -> Any:
    """An empty ``aclpyBlock`` whose block goes back to its pool when the cdata dies."""
    return _gc(_new("aclpyBlock *"), _collect_block)


def pool_allocate(pool: Any, block: Any, nbytes: int, api: str = "aclrtMalloc") -> None:
    """Fill the empty ``block`` from ``pool`` (``api`` names the pool's allocator)."""
    check(_host.aclpyPoolAllocate(pool, block, nbytes, MALLOC_HUGE_FIRST), api)


def pool_allocate_status(pool: Any, block: Any, nbytes: int) -> int:
    """:func:`pool_allocate` returning the status unchecked, for the pool to pass to
    :func:`check` (its out-of-memory recovery catches that error)."""
    status: int = _host.aclpyPoolAllocate(pool, block, nbytes, MALLOC_HUGE_FIRST)
    return status


def pool_take(pool: Any, nbytes: int, stream_state: Any = NULL) -> Any:
    """A new block of at least ``nbytes`` (> 0) from ``pool`` (as :func:`new_block` and
    :func:`pool_allocate` in one step) for work queued on the stream of ``stream_state``
    (NULL: for host code or any stream), or None when the pool could not provide it;
    :func:`pool_allocate` then reports why. The per-call path."""
    block = _gc(_new("aclpyBlock *"), _collect_block)
    if _host.aclpyPoolAllocateFor(pool, block, nbytes, MALLOC_HUGE_FIRST,
                                  stream_state) != ACL_SUCCESS:
        return None
    return block


def block_use(block: Any, stream_state: Any) -> None:
    """Mark ``block`` as used by work queued on the stream of ``stream_state`` (NULL: its
    work is known to be done), for stream-ordered reuse once it is released."""
    _host.aclpyBlockUse(block, stream_state)


# ---- stream states (stream-ordered reuse; headers/aclnn_py_host.h) ---------------------------


def stream_state(stream: Any, device: int) -> Any:
    """The host library's record of ``stream``'s progress (fences and points), released when
    the cdata dies."""
    state = host().aclpyStreamStateCreate(stream, device)
    if state == NULL:
        raise MemoryError("out of host memory for a stream's state")
    return ffi.gc(state, _host.aclpyStreamStateCollect)


def stream_launching_function() -> Any:
    """``aclpyStreamLaunching(state, hold_mark)``: called right before each launch (the
    per-call path)."""
    return host().aclpyStreamLaunching


def stream_uncount(state: Any) -> None:
    """The launch just counted queued nothing (``aclpyStreamUncount``)."""
    _host.aclpyStreamUncount(state)


def stream_sync_point(state: Any) -> int:
    return int(_host.aclpyStreamSyncPoint(state))


def stream_synced(state: Any, point: int) -> None:
    _host.aclpyStreamSynced(state, point)


def stream_closed(state: Any) -> None:
    """The stream was synchronised for its destruction (the device current)."""
    _host.aclpyStreamClosed(state)


def stream_stats(state: Any) -> dict[str, int]:
    stats = ffi.new("aclpyStreamStats *")
    _host.aclpyStreamGetStats(state, stats)
    return {field: int(getattr(stats, field))
            for field, _ in ffi.typeof("aclpyStreamStats").fields}


def block_release(block: Any) -> None:
    check(_host.aclpyBlockRelease(block), "aclrtFree")


def pool_trim(pool: Any) -> tuple[int, int, int]:
    """Return the pool's cache to CANN: (first failing status or 0, bytes freed, blocks kept)."""
    freed = ffi.new("uint64_t *")
    kept = ffi.new("uint64_t *")
    status = _host.aclpyPoolTrim(pool, freed, kept)
    return status, int(freed[0]), int(kept[0])


def pool_stats(pool: Any) -> dict[str, int]:
    stats = ffi.new("aclpyPoolStats *")
    _host.aclpyPoolGetStats(pool, stats)
    return {field: int(getattr(stats, field)) for field, _ in ffi.typeof("aclpyPoolStats").fields}


def note_thread_device(device: int) -> None:
    """Record the device made current in this thread (for releases made in C)."""
    host().aclpyThreadDevice(device)


def pool_abandon(pool: Any) -> None:
    _host.aclpyPoolAbandon(pool)


def new_handle(kind: int) -> Any:
    """An empty ``aclpyHandle`` of ``kind``; a handle stored in it is destroyed with it."""
    if _collect_handle is None:
        host()
    owned = ffi.gc(ffi.new("aclpyHandle *"), _collect_handle)
    owned.handle = NULL
    owned.kind = kind
    owned.generation = _host.aclpyHandlesGeneration()
    return owned


def handle_release(owned: Any, api: str) -> None:
    """Destroy the handle ``owned`` holds, once (``api`` names the destroy function)."""
    check(_host.aclpyHandleRelease(owned), api)


def handles_undestroyable() -> int:
    """Handles given up since load because the loaded CANN cannot destroy their kind."""
    return int(host().aclpyHandlesUndestroyable())


def handles_abandon() -> None:
    if _host is not None:
        _host.aclpyHandlesAbandon()


# ---- the emulator's own API (absent from real CANN) ------------------------


def emulator_loaded() -> bool:
    """Whether the loaded runtime is aclnn_py's emulator: only it exports aclemuGetStats."""
    try:
        RT.aclemuGetStats  # noqa: B018 - resolving the symbol is the question
    except UnavailableError:
        return False
    return True


def emulator_stats() -> dict[str, int]:
    stats = ffi.new("aclemuStats *")
    check(RT.aclemuGetStats(stats), "aclemuGetStats")
    return {field: int(getattr(stats, field)) for field, _ in ffi.typeof("aclemuStats").fields}


def emulator_device_stats(device: int) -> dict[str, int]:
    stats = ffi.new("aclemuDeviceStats *")
    check(RT.aclemuGetDeviceStats(device, stats), "aclemuGetDeviceStats")
    return {field: int(getattr(stats, field))
            for field, _ in ffi.typeof("aclemuDeviceStats").fields}


def emulator_reset_counters() -> None:
    check(RT.aclemuResetCounters(), "aclemuResetCounters")


def emulator_inject_fault(api: str, nth: int, status: int) -> None:
    check(RT.aclemuInjectFault(api.encode(), nth, status), "aclemuInjectFault")


def emulator_clear_faults() -> None:
    check(RT.aclemuClearFaults(), "aclemuClearFaults")


def emulator_faults() -> list[dict[str, Any]]:
    """aclemuGetFaults: every fault armed since the last clear, fired ones included."""
    count = ffi.new("int64_t *")
    check(RT.aclemuGetFaults(NULL, 0, count), "aclemuGetFaults")
    while True:
        capacity = count[0]
        faults = ffi.new("aclemuFault[]", max(capacity, 1))
        check(RT.aclemuGetFaults(faults, capacity, count), "aclemuGetFaults")
        if count[0] <= capacity:  # else faults were armed meanwhile: ask again
            break
    return [{"api": ffi.string(f.api).decode(), "status": int(f.status), "nth": int(f.nth),
             "fired": bool(f.fired), "remaining": int(f.remaining)}
            for f in faults[0:count[0]]]


def exported(name: str) -> bool:
    """Whether any loaded CANN library exports the C function ``name``."""
    for family in (RT, META, OPS):
        try:
            getattr(family, name)
        except UnavailableError:
            continue
        return True
    return False


def emulator_fault_apis() -> tuple[str, ...]:
    """aclemuGetFaultApis: the API names a fault may be injected into."""
    count = ffi.new("int64_t *")
    check(RT.aclemuGetFaultApis(NULL, 0, count), "aclemuGetFaultApis")
    names = ffi.new("const char *[]", max(count[0], 1))
    check(RT.aclemuGetFaultApis(names, count[0], count), "aclemuGetFaultApis")
    return tuple(ffi.string(names[i]).decode() for i in range(count[0]))
