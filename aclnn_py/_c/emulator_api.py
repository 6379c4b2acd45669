"""The emulator's own API, absent from real CANN: counters and injected faults."""

from __future__ import annotations

from typing import Any

from ..errors import UnavailableError
from ._ffi import ffi
from .codes import constant
from .core import NULL, OPS, RT, check, hold_interrupt


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

_KINDS = ffi.typeof("aclemuArgKind").relements
KERNEL_TENSOR, KERNEL_TENSOR_LIST, KERNEL_SCALAR, KERNEL_INT_ARRAY, KERNEL_BOOL_ARRAY, \
    KERNEL_FLOAT_ARRAY, KERNEL_STRING, KERNEL_INTEGER, KERNEL_BOOL, KERNEL_REAL, \
    KERNEL_SCALAR_LIST = (
        _KINDS[f"ACLEMU_ARG_{kind}"] for kind in (
            "TENSOR", "TENSOR_LIST", "SCALAR", "INT_ARRAY", "BOOL_ARRAY", "FLOAT_ARRAY", "STRING",
            "INTEGER", "BOOL", "REAL", "SCALAR_LIST"))

# The aclemuArgKind of each C parameter type of an operator's phase 1, const removed (the
# emulator's build has the same table for the operators it exports).
ARGUMENT_KINDS = {"aclTensor *": KERNEL_TENSOR, "aclTensorList *": KERNEL_TENSOR_LIST,
                  "aclScalar *": KERNEL_SCALAR, "aclIntArray *": KERNEL_INT_ARRAY,
                  "aclBoolArray *": KERNEL_BOOL_ARRAY, "aclFloatArray *": KERNEL_FLOAT_ARRAY,
                  "char *": KERNEL_STRING, "bool": KERNEL_BOOL, "double": KERNEL_REAL,
                  "float": KERNEL_REAL, "aclScalarList *": KERNEL_SCALAR_LIST,
                  **dict.fromkeys(("int64_t", "int", "int32_t", "int16_t", "int8_t", "uint64_t",
                                   "uint32_t", "uint16_t", "uint8_t", "aclDataType"),
                                  KERNEL_INTEGER)}

# The handler given to the emulator, kept for the life of the process: the emulator may call it
# from any thread, whenever a stream runs its work.
_handler: Any = None

# Integers travel as int64 (aclemuKernelArg's integer): a 64-bit unsigned value from 2**63
# arrives negative. The parameters of that C type of the operators described at run time
# (aclemuGenericGetWorkspaceSize), by operator: their values are given back unsigned.
_UNSIGNED_64 = frozenset({"uint64_t", "size_t", "unsigned long", "unsigned long long"})
_described_unsigned: dict[str, frozenset[int]] = {}


# The most dims a kernel may report for an output whose extent depends on the data
# (aclemuKernelArg's view_dims: CANN's rank limit for operators).
MAX_REPORTED_DIMS = 8
# The size of aclemuKernelArg's scalar_bytes: a complex128.
_SCALAR_BYTES = 16


class _Call:
    """One handler call: whether it is still running (what an output's ``report`` checks)."""

    __slots__ = ("running",)

    def __init__(self) -> None:
        self.running = True


def _reporter(arg: Any, call: _Call) -> Any:
    """``report(shape)`` for an output whose real extent the kernel tells (phase 2): it writes
    aclemuKernelArg's view_ndim and view_dims, while the handler call runs."""
    def report(shape: tuple[int, ...]) -> None:
        if not call.running:
            raise RuntimeError("an output's extent can be reported only while its kernel runs")
        dims = tuple(int(n) for n in shape)
        if len(dims) > MAX_REPORTED_DIMS or any(n < 0 for n in dims):
            raise ValueError(f"an output's extent must be at most {MAX_REPORTED_DIMS} "
                             f"non-negative dims, got {dims}")
        for index, extent in enumerate(dims):
            arg.view_dims[index] = extent
        arg.view_ndim[0] = len(dims)

    return report


def _tensor(arg: Any, call: _Call | None = None) -> tuple[Any, ...]:
    """``(buffer over the bytes the view may touch, or None, aclDataType, shape, strides,
    offset, aclFormat)`` of a tensor argument (strides and offset in elements), and for an
    output whose kernel may report its real extent (phase 2) a seventh item,
    ``report(shape)``."""
    ndim = int(arg.ndim)
    size = int(arg.storage_bytes)
    buffer = ffi.buffer(ffi.cast("char *", arg.data), size) if size and arg.data != NULL \
        else None
    described = (buffer, int(arg.dtype), tuple(arg.dims[0:ndim]), tuple(arg.strides[0:ndim]),
                 int(arg.offset), int(arg.format))
    if call is not None and arg.view_ndim != NULL:
        return (*described, _reporter(arg, call))
    return described


def _scalar(arg: Any) -> tuple[bytes, int]:
    """A scalar argument (or a scalar list's member): the value's bytes, exact for every dtype
    (int64, float16, ...), and its aclDataType."""
    value = ffi.buffer(arg.scalar_bytes, _SCALAR_BYTES)[:] if arg.scalar_bytes != NULL else b""
    return (value, int(arg.scalar_dtype))


def _argument(arg: Any, call: _Call) -> tuple[int, Any, str]:
    """A handler argument as Python values: see :func:`set_kernel_handler`."""
    kind = int(arg.kind)
    return (kind, _value(arg, kind, call) if arg.present else None, arg.role.decode("ascii"))


def _value(arg: Any, kind: int, call: _Call) -> Any:
    if kind == KERNEL_TENSOR:
        return _tensor(arg, call)
    if kind == KERNEL_TENSOR_LIST:
        return [_tensor(arg.members[i]) for i in range(int(arg.length))]
    if kind == KERNEL_SCALAR:
        return _scalar(arg)
    length = int(arg.length)
    if kind == KERNEL_SCALAR_LIST:
        return [_scalar(arg.members[i]) for i in range(length)]
    if kind == KERNEL_INT_ARRAY:
        return tuple(arg.integers[0:length]) if length else ()
    if kind == KERNEL_BOOL_ARRAY:
        return tuple(bool(v) for v in arg.bools[0:length]) if length else ()
    if kind == KERNEL_FLOAT_ARRAY:
        return tuple(arg.reals[0:length]) if length else ()
    if kind == KERNEL_STRING:
        return ffi.string(arg.string).decode("utf-8", "replace")
    if kind == KERNEL_REAL:
        return float(arg.real)
    if kind == KERNEL_BOOL:
        return bool(arg.integer)
    return int(arg.integer)


# What the handler returns for a kernel interrupted at phase 2: the emulator then aborts the
# kernel's stream, and the call that ran the kernel fails with it (headers/aclnn_emu.h).
_STREAM_ABORT = constant("ACL_ERROR_RT_STREAM_ABORT")
_INNER = constant("ACLNN_ERR_INNER")


def _interrupted(error: BaseException, operator: str, phase: int) -> tuple[int, str]:
    """The handler's failure for ``error``, an exception that is not an Exception
    (KeyboardInterrupt, SystemExit) raised inside the kernel of ``operator``: kept for the
    call that ran the kernel to raise (``core.hold_interrupt``). At phase 2 the emulator
    aborts the kernel's stream; at phase 1 the operator's phase 1 fails, nothing queued."""
    name = type(error).__name__
    if phase == 1:
        hold_interrupt(error, f"raised inside the check of {operator} (its phase 1): nothing "
                              "was queued")
        return _INNER, f"the check of {operator} was interrupted by {name}"
    hold_interrupt(error, f"raised inside the kernel of {operator}: its stream's work was "
                          "aborted, and the work queued after it dropped")
    return _STREAM_ABORT, f"the kernel of {operator} was interrupted by {name}"


def _escaped(kind: Any, error: BaseException, traceback: Any) -> int:
    """cffi's ``onerror`` of the handler: an exception that escaped it (an interrupt that
    arrived outside its ``try``) is kept as :func:`_interrupted` keeps one."""
    if isinstance(error, Exception):
        return _INNER
    hold_interrupt(error, "raised while the emulator ran a kernel: its stream's work was "
                          "aborted")
    return _STREAM_ABORT


def set_kernel_handler(handler: Any) -> None:
    """Have the emulator call ``handler(operator, phase, arguments)`` for the operators
    registered with :func:`register_kernel`: at phase 1 (``phase`` 1) to check a call, when
    the launch runs (2) to compute. ``arguments`` are ``(kind, value, role)`` in the
    operator's parameter order (role ``"i"`` read, ``"o"`` written, ``"u"`` updated in
    place), value None for a NULL pointer: a tensor as ``(buffer, aclDataType, shape,
    strides, offset, aclFormat)`` (an output at phase 2 with a seventh item,
    ``report(shape)``, telling its real extent when the data decides it), a tensor list as a
    list of those, a scalar as ``(value bytes, aclDataType)`` (the value exactly, in the host's
    representation of its dtype, 16 bytes of which the dtype's size count), a scalar list as a
    list of those, arrays as tuples,
    a string as str, numbers as int, bool or float. ``handler`` returns None, or ``(status,
    message)`` to fail with. Set once per process (later calls replace the handler).

    Nothing may unwind into C: an Exception ``handler`` lets through fails the call with
    561000 (ACLNN_ERR_INNER); any other exception (KeyboardInterrupt, SystemExit) is kept and
    raised again by the call that ran the kernel, once back from C (``core.check``), after
    the emulator aborted the kernel's stream (phase 2: ACL_ERROR_RT_STREAM_ABORT)."""
    global _handler

    def trampoline(op: Any, phase: int, args: Any, count: int, message: Any,
                   message_size: int) -> int:
        call = _Call()
        operator = ffi.string(op).decode()
        try:
            arguments = [_argument(args[i], call) for i in range(count)]
            for index in _described_unsigned.get(operator, ()):
                kind, value, role = arguments[index]
                if kind == KERNEL_INTEGER and value < 0:
                    arguments[index] = (kind, value + (1 << 64), role)
            failed = handler(operator, int(phase), arguments)
        except Exception as error:  # noqa: BLE001 - nothing may unwind into C
            failed = (_INNER, f"the kernel raised {type(error).__name__}: {error}")
        except BaseException as error:  # raised again once the call is back in Python
            failed = _interrupted(error, operator, int(phase))
        finally:
            call.running = False
        if not failed:
            return 0
        status, text = failed
        encoded = str(text).encode("utf-8", "replace")[:max(int(message_size) - 1, 0)]
        ffi.memmove(message, encoded + b"\0", len(encoded) + 1)
        return int(status)

    # An interrupt arriving outside the try above (cffi then calls _escaped) aborts as well.
    callback = ffi.callback("aclemuKernelHandler", trampoline, error=_STREAM_ABORT,
                            onerror=_escaped)
    check(RT.aclemuSetKernelHandler(callback), "aclemuSetKernelHandler")
    _handler = callback


def register_kernel(operator: str, computed: bool = True) -> None:
    """Have the handler compute ``operator`` (or no longer)."""
    check(RT.aclemuRegisterKernel(operator.encode(), int(computed)), "aclemuRegisterKernel")


# ---- operators no library here exports (aclemuGenericGetWorkspaceSize) ----

_PHASE2_TYPE = "aclnnStatus(*)(void *, uint64_t, aclOpExecutor *, aclrtStream)"


def argument_kind(c_type: str) -> int | None:
    """The aclemuArgKind of a phase-1 parameter's C type, None for one the emulator cannot
    describe."""
    return ARGUMENT_KINDS.get(" ".join(c_type.replace("const", " ").split()))


class _DescribedPhase1:
    """Phase 1 of a described operator, called as a bound phase 1 is:
    ``phase1(*arguments, workspace_size, executor)``. Owns the description it passes."""

    __slots__ = ("_name", "_names", "_params", "_kinds")

    def __init__(self, operator: str, parameters: list[tuple[str, str, str, bool]]) -> None:
        _described_unsigned[operator] = frozenset(
            index for index, (c_type, *_) in enumerate(parameters)
            if " ".join(c_type.replace("const", " ").split()) in _UNSIGNED_64)
        self._name = ffi.new("char[]", operator.encode())
        self._names = [ffi.new("char[]", name.encode()) for _, name, _, _ in parameters]
        self._params = ffi.new("aclemuGenericParam[]", max(len(parameters), 1))
        self._kinds = []
        for index, (c_type, _, role, optional) in enumerate(parameters):
            kind = argument_kind(c_type)
            if kind is None:
                raise TypeError(f"{operator}: the emulator cannot pass a parameter of C type "
                                f"{c_type!r} to a kernel")
            self._kinds.append(kind)
            cell = self._params[index]
            cell.name, cell.kind, cell.role = self._names[index], kind, role.encode()
            cell.optional = b"\x01" if optional else b"\x00"

    def __call__(self, *arguments: Any) -> int:
        count = len(self._kinds)
        values = ffi.new("aclemuGenericValue[]", max(count, 1))
        for index, (kind, value) in enumerate(zip(self._kinds, arguments[:count])):
            if kind == KERNEL_REAL:
                values[index].real = value
            elif kind in (KERNEL_INTEGER, KERNEL_BOOL):  # a uint64_t travels as its bits
                number = int(value)
                values[index].integer = number - (1 << 64) if number >= 1 << 63 else number
            else:
                values[index].pointer = NULL if value is None else value
        return int(OPS.aclemuGenericGetWorkspaceSize(self._name, count, self._params, values,
                                                     *arguments[count:]))


def described_operator(operator: str, parameters: list[tuple[str, str, str, bool]]
                       ) -> tuple[Any, Any]:
    """Phase 1 and phase 2 of ``operator`` through the emulator's generic entry points, for
    an operator a header declares but no library exports. ``parameters``: ``(C type, name,
    role, optional)`` in order, role ``"i"``, ``"o"`` or ``"u"``. Phase 2 is a C function
    pointer, as a bound phase 2 is."""
    return _DescribedPhase1(operator, parameters), ffi.cast(_PHASE2_TYPE, OPS.aclemuGenericRun)
