"""Process and thread state of the CANN runtime, and the objects that own device resources.

* The process is initialised lazily (``aclInit``) and torn down at exit in
  CANN's documented order: streams, devices, ``aclFinalize``.
* Every thread that touches a device calls ``aclrtSetDevice`` for it once
  (:func:`activate`); each device has one default stream, created on first use.
* :class:`DeviceBuffer`, :class:`AclTensor`, :class:`Executor` and
  :class:`Stream` each own one C resource, release it deterministically
  (``free``/``destroy``/``close``, context managers) and carry a
  ``weakref.finalize`` safety net that does nothing once the runtime is torn down.
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from typing import Any

import numpy as np

from . import _lowlevel as ll

logger = logging.getLogger("aclnn_py")


class _Process:
    """Process-wide runtime state, guarded by ``lock``."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.initialized = False
        # Bumped by every teardown: resources of an older generation are already gone.
        self.generation = 0
        self.device_count = 0
        self.soc_name: str | None = None
        self.set_counts: dict[int, int] = {}
        self.default_streams: dict[int, Stream] = {}
        self.atexit_registered = False


_process = _Process()
_thread = threading.local()


def ensure_initialized() -> None:
    """aclInit once per process (a repeat by someone else counts as success)."""
    if _process.initialized:
        return
    with _process.lock:
        if _process.initialized:
            return
        ll.init()
        _process.device_count = ll.get_device_count()
        _process.initialized = True
        if not _process.atexit_registered:
            atexit.register(teardown)
            _process.atexit_registered = True


def device_count() -> int:
    ensure_initialized()
    return _process.device_count


def soc_name() -> str | None:
    """``aclrtGetSocName()`` (the SoC of device 0), read once per process."""
    ensure_initialized()
    if _process.soc_name is None:
        _process.soc_name = ll.get_soc_name() or ""
    return _process.soc_name or None


def activate(device: int | None = None) -> int:
    """Make ``device`` (default: this thread's current device, else 0) current here."""
    ensure_initialized()
    state = getattr(_thread, "state", None)
    current = state[1] if state is not None and state[0] == _process.generation else None
    if device is None:
        device = 0 if current is None else current
    if device == current:
        return device
    if not isinstance(device, (int, np.integer)) or isinstance(device, bool):
        raise TypeError(f"device must be an int, got {type(device).__name__}")
    device = int(device)
    if not 0 <= device < _process.device_count:
        raise ValueError(f"device must be in [0, {_process.device_count}), got {device}")
    ll.set_device(device)
    with _process.lock:
        _process.set_counts[device] = _process.set_counts.get(device, 0) + 1
    _thread.state = (_process.generation, device)
    return device


def _alive(generation: int) -> bool:
    return _process.initialized and _process.generation == generation


def teardown() -> None:
    """Release the default streams and devices, then aclFinalize. Safe to call twice."""
    with _process.lock:
        if not _process.initialized:
            return
        for device, stream in list(_process.default_streams.items()):
            try:
                ll.set_device(device)
                _process.set_counts[device] = _process.set_counts.get(device, 0) + 1
                stream.destroy()
            except Exception:  # teardown must go on
                logger.exception("aclnn_py teardown: releasing the stream of device %d", device)
        for device, count in _process.set_counts.items():
            for _ in range(count):
                try:
                    ll.reset_device(device)
                except Exception:
                    logger.exception("aclnn_py teardown: aclrtResetDevice(%d)", device)
                    break
        try:
            ll.finalize()
        except Exception:
            logger.exception("aclnn_py teardown: aclFinalize")
        _process.default_streams.clear()
        _process.set_counts.clear()
        _process.initialized = False
        _process.generation += 1


# ---- streams ---------------------------------------------------------------


def _destroy_stream(handle: Any, device: int, generation: int) -> None:
    if not _alive(generation):
        return
    try:
        activate(device)
        ll.destroy_stream(handle)
    except Exception:
        logger.exception("aclnn_py: destroying a stream of device %d", device)


class Stream:
    """Owns one ``aclrtStream`` of a device."""

    def __init__(self, device: int | None = None) -> None:
        self.device = activate(device)
        self.handle = ll.create_stream()
        self._finalizer = weakref.finalize(self, _destroy_stream, self.handle, self.device,
                                           _process.generation)

    def synchronize(self) -> None:
        """Wait for all work queued on this stream."""
        activate(self.device)
        ll.synchronize_stream(self.handle)

    def destroy(self) -> None:
        """Wait for the stream's work and release it. Safe to call twice."""
        if self._finalizer.detach() is not None:
            activate(self.device)
            ll.destroy_stream(self.handle)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.destroy()


def default_stream(device: int | None = None) -> Stream:
    """The device's default stream (created on first use), with the device made current."""
    device = activate(device)
    stream = _process.default_streams.get(device)
    if stream is None:
        with _process.lock:
            stream = _process.default_streams.get(device)
            if stream is None:
                stream = _process.default_streams[device] = Stream(device)
    return stream


# ---- device memory ---------------------------------------------------------


def _free_device_memory(pointer: Any, device: int, generation: int, *, raising: bool = False
                        ) -> None:
    if not _alive(generation):
        return
    try:
        activate(device)
        ll.free(pointer)
    except Exception:
        if raising:
            raise
        logger.exception("aclnn_py: freeing device memory at 0x%x", ll.address(pointer))


class DeviceBuffer:
    """Owns one ``aclrtMalloc`` allocation (none for 0 bytes: CANN rejects size 0)."""

    __slots__ = ("pointer", "nbytes", "device", "_finalizer", "__weakref__")

    def __init__(self, nbytes: int, device: int | None = None) -> None:
        self.device = activate(device)
        self.nbytes = int(nbytes)
        self._finalizer: weakref.finalize | None = None
        if self.nbytes == 0:
            self.pointer = ll.NULL
            return
        self.pointer = ll.malloc(self.nbytes)
        self._finalizer = weakref.finalize(self, _free_device_memory, self.pointer, self.device,
                                           _process.generation)

    @classmethod
    def from_host(cls, array: np.ndarray, device: int | None = None) -> DeviceBuffer:
        """A new buffer holding the bytes of a C-contiguous array."""
        buffer = cls(array.nbytes, device)
        try:
            buffer.copy_from_host(array)
        except BaseException:
            buffer.free()
            raise
        return buffer

    def copy_from_host(self, array: np.ndarray) -> None:
        """Synchronous host-to-device copy of a C-contiguous array."""
        if array.nbytes:
            self.copy_from_address(ll.ffi.from_buffer(array), array.nbytes)

    def copy_from_address(self, source: Any, nbytes: int) -> None:
        """Synchronous host-to-device copy of ``nbytes`` bytes at host pointer ``source``."""
        activate(self.device)
        ll.memcpy(self.pointer, self.nbytes, source, nbytes, ll.MEMCPY_HOST_TO_DEVICE)

    def copy_to_host(self, array: np.ndarray) -> None:
        """Synchronous device-to-host copy into a writable C-contiguous array."""
        if array.nbytes == 0:
            return
        activate(self.device)
        target = ll.ffi.from_buffer(array, require_writable=True)
        ll.memcpy(target, array.nbytes, self.pointer, array.nbytes, ll.MEMCPY_DEVICE_TO_HOST)

    def free(self) -> None:
        """Release the memory now. Safe to call twice; raises AclError if CANN refuses."""
        if self._finalizer is not None:
            detached = self._finalizer.detach()
            if detached is not None:
                _, function, args, _ = detached
                function(*args, raising=True)

    def __enter__(self) -> DeviceBuffer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.free()


# ---- aclTensor descriptors -------------------------------------------------


def _destroy_tensor(handle: Any, generation: int) -> None:
    if not _alive(generation):
        return
    try:
        ll.destroy_tensor(handle)
    except Exception:
        logger.exception("aclnn_py: destroying an aclTensor")


class AclTensor:
    """Owns one ``aclTensor`` descriptor (host-side; the data stays with its buffer).

    ``shape``, ``strides`` and ``offset`` count elements; the storage is described
    as one dimension of ``storage_size`` elements starting at ``data``.
    """

    __slots__ = ("handle", "_finalizer", "__weakref__")

    def __init__(self, shape: tuple[int, ...], acl_dtype: int, strides: tuple[int, ...],
                 offset: int, storage_size: int, data: Any) -> None:
        self.handle = ll.create_tensor(shape, acl_dtype, strides, offset, (storage_size,), data)
        self._finalizer = weakref.finalize(self, _destroy_tensor, self.handle, _process.generation)

    def destroy(self) -> None:
        """Release the descriptor now. Safe to call twice."""
        if self._finalizer.detach() is not None:
            ll.destroy_tensor(self.handle)

    def __enter__(self) -> AclTensor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.destroy()


# ---- executors (the two-phase aclnn call) ----------------------------------


def _destroy_executor(handle: Any, generation: int) -> None:
    if not _alive(generation):
        return
    try:
        ll.destroy_executor(handle)
    except Exception:
        logger.exception("aclnn_py: destroying an unlaunched aclOpExecutor")


class Executor:
    """Owns the ``aclOpExecutor`` that phase 1 of ``operator`` returned.

    This class is the one place that encodes who owns an executor: we own it
    from phase 1 until it is launched; launching a non-repeatable executor hands
    it to CANN, which frees it inside phase 2 whether the launch succeeds or not,
    so it must never be destroyed afterwards. An executor that is never launched
    is destroyed by :meth:`close` (or the finalizer).
    """

    def __init__(self, operator: str, *arguments: Any, keepalive: tuple[Any, ...] = ()) -> None:
        self.operator = operator
        self.device = activate()
        self.workspace_size, self.handle = ll.operator_workspace_size(operator, *arguments)
        # The executor refers to the aclTensors until phase 2 returns.
        self._keepalive = keepalive
        self._finalizer = weakref.finalize(self, _destroy_executor, self.handle,
                                           _process.generation)

    def launch(self, workspace: DeviceBuffer | None, stream: Stream) -> None:
        """Phase 2 on ``stream``; the executor then belongs to CANN."""
        if self._finalizer.detach() is None:
            raise RuntimeError(f"{self.operator}: this executor was already launched or closed")
        activate(stream.device)
        pointer = ll.NULL if workspace is None else workspace.pointer
        try:
            ll.operator_launch(self.operator, pointer, self.workspace_size, self.handle,
                               stream.handle)
        finally:
            self._keepalive = ()

    def close(self) -> None:
        """Destroy an executor that was never launched. Safe to call twice."""
        if self._finalizer.detach() is not None:
            ll.destroy_executor(self.handle)
        self._keepalive = ()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
