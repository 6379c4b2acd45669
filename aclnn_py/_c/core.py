"""Library access, the one status check and pointer helpers of the C layer.

Every status of every C call passes through :func:`check`, the only place that compares
return codes; a failure becomes an :class:`~aclnn_py.errors.AclError` carrying the code,
the API name and CANN's own message.
"""

from __future__ import annotations

import threading
from typing import Any

from ..errors import AclError, UnavailableError
from . import loader as _loader
from ._ffi import ffi
from .codes import constant

_new, _gc = ffi.new, ffi.gc  # the per-call allocation path looks them up once

NULL = ffi.NULL

ACL_SUCCESS = constant("ACL_SUCCESS")
ACL_ERROR_REPEAT_INITIALIZE = constant("ACL_ERROR_REPEAT_INITIALIZE")
ACLNN_ERR_INNER_NULLPTR = constant("ACLNN_ERR_INNER_NULLPTR")
MEMCPY_HOST_TO_DEVICE = constant("ACL_MEMCPY_HOST_TO_DEVICE")
MEMCPY_DEVICE_TO_HOST = constant("ACL_MEMCPY_DEVICE_TO_HOST")
MEMCPY_DEVICE_TO_DEVICE = constant("ACL_MEMCPY_DEVICE_TO_DEVICE")
MALLOC_HUGE_FIRST = constant("ACL_MEM_MALLOC_HUGE_FIRST")
FORMAT_ND = constant("ACL_FORMAT_ND")
# The format a plain (not private-format) tensor of each rank has, as CANN's main client
# describes it: torch_npu's op-plugin (op_plugin/utils/op_api_common, ConvertType) gives a
# 3-d tensor ACL_FORMAT_NCL, a 4-d one ACL_FORMAT_NCHW, a 5-d one ACL_FORMAT_NCDHW and any
# other ACL_FORMAT_ND; operators such as aclnnConvolution and aclnnAvgPool2d refuse ND.
PLAIN_FORMATS = {3: constant("ACL_FORMAT_NCL"), 4: constant("ACL_FORMAT_NCHW"),
                 5: constant("ACL_FORMAT_NCDHW")}



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




def recent_error_message() -> str:
    """CANN's error text for this thread, copied at once (the call clears it)."""
    text = RT.aclGetRecentErrMsg()
    if text == NULL:
        return ""
    message: str = ffi.string(text).decode("utf-8", errors="replace")
    return message


# ---- what a kernel raised that only its caller may raise (the emulator's Python kernels) ----

# By thread id: the exception that is not an Exception (KeyboardInterrupt, SystemExit) which a
# kernel run by that thread raised, kept until the C call that ran the kernel is back in Python.
# Nothing may unwind through C: the kernel handler keeps it (hold_interrupt) and fails, the
# call that ran the kernel fails in turn (the emulator aborts the kernel's stream:
# ACL_ERROR_RT_STREAM_ABORT), and check() raises it in that call's stead. Empty while no
# kernel was interrupted, so the per-call paths test it for nothing more than truth. Each
# entry carries a token the thread also keeps (_kept): a thread that ended with its
# interrupt kept (its C caller was not aclnn_py) hands nothing to a new one given its id.
interrupted: dict[int, tuple[object, BaseException]] = {}
_kept = threading.local()
_get_ident = threading.get_ident


def hold_interrupt(error: BaseException, where: str) -> None:
    """Keep ``error``, raised inside a kernel run by this thread (``where`` says which), for
    :func:`raise_interrupt`. Its traceback goes: its frames hold the kernel's arrays, views
    of device memory valid only during the kernel."""
    error.__traceback__ = None
    error.__context__ = error.__cause__ = None
    if isinstance(error, KeyboardInterrupt) and not error.args:
        error.args = (where,)
    token = _kept.token = object()
    interrupted[_get_ident()] = (token, error)


def _take() -> BaseException | None:
    """This thread's kept interrupt, taken out (None: none, or a dead thread's)."""
    entry = interrupted.pop(_get_ident(), None)
    if entry is None or entry[0] is not getattr(_kept, "token", None):
        return None
    _kept.token = None
    return entry[1]


def interrupt_pending() -> bool:
    """Whether a kernel run by this thread was interrupted and the interrupt not raised yet."""
    entry = interrupted.get(_get_ident())
    return entry is not None and entry[0] is getattr(_kept, "token", None)


def raise_interrupt() -> None:
    """Raise the exception kept by :func:`hold_interrupt` for this thread, if any."""
    error = _take()
    if error is not None:
        try:
            raise error
        finally:
            del error  # no cycle through this frame


def check(status: int, api: str, detail: str = "") -> None:
    """Raise the AclError for a non-zero ``status`` returned by ``api`` (``detail``, what
    aclnn_py adds, comes before CANN's own message); or, when the failure comes from a
    kernel this thread ran that was interrupted, that interrupt (:func:`hold_interrupt`)."""
    if status != ACL_SUCCESS:
        if interrupted:
            raise_interrupt()
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


_VOID_POINTER = ffi.typeof("void *")


def pointer_at(address: int) -> Any:
    """A ``void *`` at the integer ``address`` (memory someone else owns)."""
    return ffi.cast(_VOID_POINTER, address)


def c_string(text: str) -> Any:
    """A NUL-terminated UTF-8 copy of ``text`` (a ``char[]`` owned by the returned object)."""
    return ffi.new("char[]", text.encode())


def host_bytes(size: int) -> Any:
    """``size`` bytes of ordinary (pageable) host memory, owned by the returned object."""
    return _new("char[]", size)


def byte_offset(pointer: Any, offset: int) -> Any:
    """``pointer`` moved by ``offset`` bytes."""
    return ffi.cast("char *", pointer) + offset


def write_host(pointer: Any, array: Any) -> None:
    """Copy the C-contiguous numpy ``array`` into the host memory at ``pointer``."""
    ffi.memmove(pointer, ffi.from_buffer(array), array.nbytes)


def read_bytes(pointer: Any, size: int) -> bytes:
    """A copy of the ``size`` bytes of host memory at ``pointer``."""
    return bytes(ffi.buffer(pointer, size))


def host_pointer(array: Any, *, writable: bool = False) -> Any:
    """A C pointer to the first element of a numpy array (its memory, not a copy); the
    array must stay alive while the pointer is used."""
    if array.flags.c_contiguous:
        return ffi.from_buffer(array, require_writable=writable)
    if writable and not array.flags.writeable:
        raise ValueError("the array is read-only")
    return ffi.cast("void *", array.__array_interface__["data"][0])


def exported(name: str) -> bool:
    """Whether any loaded CANN library exports the C function ``name`` (declared to cffi or
    not: the dynamic linker is asked)."""
    import ctypes
    import os

    for family in (RT, META, OPS):
        try:
            getattr(family, name)
        except UnavailableError:
            continue
        return True
    installation = libraries().installation
    for path in (*installation.paths.values(), *installation.extra_ops):
        try:
            handle = ctypes.CDLL(str(path), mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            continue
        if hasattr(handle, name):
            return True
    return False


def optional(library: _Library, name: str) -> Any:
    """``library.name``, or NULL when the installed CANN lacks it."""
    try:
        return getattr(library, name)
    except UnavailableError:
        return NULL
