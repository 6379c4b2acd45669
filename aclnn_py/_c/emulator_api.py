"""The emulator's own API, absent from real CANN: counters and injected faults."""

from __future__ import annotations

from typing import Any

from ..errors import UnavailableError
from ._ffi import ffi
from .codes import constant
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


# ---- kernels of aclnn_py's own (headers/aclnn_emu.h, aclemuSetKernelHandler) ----

KERNEL_TENSOR, KERNEL_TENSOR_LIST, KERNEL_SCALAR, KERNEL_INT_ARRAY, KERNEL_BOOL_ARRAY, \
    KERNEL_FLOAT_ARRAY, KERNEL_STRING, KERNEL_INTEGER, KERNEL_BOOL, KERNEL_REAL = range(1, 11)

# The handler given to the emulator, kept for the life of the process: the emulator may call it
# from any thread, whenever a stream runs its work.
_handler: Any = None


def _tensor(arg: Any) -> tuple[Any, int, tuple[int, ...], tuple[int, ...], int]:
    """``(buffer over the bytes the view may touch, or None, aclDataType, shape, strides,
    offset)`` of a tensor argument (strides and offset in elements)."""
    ndim = int(arg.ndim)
    size = int(arg.storage_bytes)
    buffer = ffi.buffer(ffi.cast("char *", arg.data), size) if size and arg.data != NULL \
        else None
    return (buffer, int(arg.dtype), tuple(arg.dims[0:ndim]), tuple(arg.strides[0:ndim]),
            int(arg.offset))


def _argument(arg: Any) -> Any:
    """A handler argument as Python values: see :func:`set_kernel_handler`."""
    kind = int(arg.kind)
    if not arg.present:
        return (kind, None)
    if kind == KERNEL_TENSOR:
        return (kind, _tensor(arg))
    if kind == KERNEL_TENSOR_LIST:
        return (kind, [_tensor(arg.members[i]) for i in range(int(arg.length))])
    if kind == KERNEL_SCALAR:
        return (kind, (float(arg.real), int(arg.scalar_dtype)))
    length = int(arg.length)
    if kind == KERNEL_INT_ARRAY:
        return (kind, tuple(arg.integers[0:length]) if length else ())
    if kind == KERNEL_BOOL_ARRAY:
        return (kind, tuple(bool(v) for v in arg.bools[0:length]) if length else ())
    if kind == KERNEL_FLOAT_ARRAY:
        return (kind, tuple(arg.reals[0:length]) if length else ())
    if kind == KERNEL_STRING:
        return (kind, ffi.string(arg.string).decode("utf-8", "replace"))
    if kind == KERNEL_REAL:
        return (kind, float(arg.real))
    if kind == KERNEL_BOOL:
        return (kind, bool(arg.integer))
    return (kind, int(arg.integer))


def set_kernel_handler(handler: Any) -> None:
    """Have the emulator call ``handler(operator, phase, arguments)`` for the operators
    registered with :func:`register_kernel`: at phase 1 (``phase`` 1) to check a call, when
    the launch runs (2) to compute. ``arguments`` are ``(kind, value)`` pairs in the
    operator's parameter order, value None for a NULL pointer: a tensor as ``(buffer,
    aclDataType, shape, strides, offset)``, a tensor list as a list of those, a scalar as
    ``(value, aclDataType)``, arrays as tuples, a string as str, numbers as int, bool or
    float. ``handler`` returns None, or ``(status, message)`` to fail with. Set once per
    process (later calls replace the handler)."""
    global _handler

    def trampoline(op: Any, phase: int, args: Any, count: int, message: Any,
                   message_size: int) -> int:
        try:
            arguments = [_argument(args[i]) for i in range(count)]
            failed = handler(ffi.string(op).decode(), int(phase), arguments)
        except BaseException as error:  # noqa: BLE001 - nothing may unwind into C
            failed = (constant("ACLNN_ERR_INNER"),
                      f"the kernel raised {type(error).__name__}: {error}")
            if isinstance(error, KeyboardInterrupt):  # delivered again once back in Python
                import _thread
                _thread.interrupt_main()
        if not failed:
            return 0
        status, text = failed
        encoded = str(text).encode("utf-8", "replace")[:max(int(message_size) - 1, 0)]
        ffi.memmove(message, encoded + b"\0", len(encoded) + 1)
        return int(status)

    callback = ffi.callback("aclemuKernelHandler", trampoline)
    check(RT.aclemuSetKernelHandler(callback), "aclemuSetKernelHandler")
    _handler = callback


def register_kernel(operator: str, computed: bool = True) -> None:
    """Have the handler compute ``operator`` (or no longer)."""
    check(RT.aclemuRegisterKernel(operator.encode(), int(computed)), "aclemuRegisterKernel")
