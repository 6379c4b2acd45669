"""The emulator's own API, absent from real CANN: counters and injected faults."""

from __future__ import annotations

from typing import Any

from ..errors import UnavailableError
from ._ffi import ffi
from .core import NULL, RT, check


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


def emulator_fault_apis() -> tuple[str, ...]:
    """aclemuGetFaultApis: the API names a fault may be injected into."""
    count = ffi.new("int64_t *")
    check(RT.aclemuGetFaultApis(NULL, 0, count), "aclemuGetFaultApis")
    names = ffi.new("const char *[]", max(count[0], 1))
    check(RT.aclemuGetFaultApis(names, count[0], count), "aclemuGetFaultApis")
    return tuple(ffi.string(names[i]).decode() for i in range(count[0]))
