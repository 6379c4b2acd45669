"""The ACL runtime (``libascendcl.so``, ``libacl_rt.so`` from CANN 8.5): initialisation,
devices, contexts, streams, events and memory, one checked function per C function."""

from __future__ import annotations

from typing import Any

from ..errors import UnavailableError
from ._ffi import ffi
from .core import (
    ACL_ERROR_REPEAT_INITIALIZE,
    MALLOC_HUGE_FIRST,
    NULL,
    RT,
    check,
    recent_error_message,
)


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






def set_current_context(context: Any) -> None:
    check(RT.aclrtSetCurrentContext(context), "aclrtSetCurrentContext")


def get_current_context() -> Any:
    out = ffi.new("aclrtContext *")
    check(RT.aclrtGetCurrentContext(out), "aclrtGetCurrentContext")
    return out[0]




def handle_cell(c_type: str) -> Any:
    """An empty (NULL) cell for a handle of ``c_type`` (e.g. "aclrtStream"), for a creator
    to write into: whoever holds the cell holds the handle from the moment it exists."""
    return ffi.new(c_type + " *")


def _created(c_type: str, api: str, cell: Any) -> Any:
    """A handle made by ``api(c_type *out)``, written into ``cell`` when given."""
    out = ffi.new(c_type + " *") if cell is None else cell
    check(getattr(RT, api)(out), api)
    return out[0]


def create_stream(cell: Any = None) -> Any:
    return _created("aclrtStream", "aclrtCreateStream", cell)


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
    return _created("aclrtEvent", "aclrtCreateEvent", cell)


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
