"""Device memory: a caching pool per device and the buffers it hands out.

In the spirit of CuPy's pool: sizes are rounded up to 512 bytes and freed
blocks are cached per stream. A block freed on a stream is reused only for
work queued later on the same stream (CANN runs a stream's work in order), or
on any stream once its stream has been synchronised. When ``aclrtMalloc``
runs out, the pool synchronises, releases its cache, collects garbage and
retries before raising :class:`~aclnn_py.OutOfMemoryError` with the requested,
free and total bytes. ``ACLNN_PY_POOL=0`` allocates and frees directly.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import weakref
from collections import defaultdict
from typing import Any

import numpy as np

from . import _lowlevel as ll
from . import _runtime as rt
from .errors import OutOfMemoryError

logger = logging.getLogger("aclnn_py")

ROUNDING = 512
_ANY_STREAM = 0  # free-list key of blocks whose last stream has been synchronised
_HBM = ll.constant("ACL_HBM_MEM")


def _round(nbytes: int) -> int:
    return -(-nbytes // ROUNDING) * ROUNDING


class MemoryPool:
    """Caching allocator of one device's memory."""

    def __init__(self, device: int) -> None:
        self.device = device
        self.lock = threading.Lock()
        # stream key -> block size -> cached pointers
        self.free: dict[int, dict[int, list[Any]]] = defaultdict(lambda: defaultdict(list))
        self.used_bytes = 0
        self.cached_bytes = 0
        self.hits = 0
        self.misses = 0

    def allocate(self, nbytes: int, stream_key: int) -> tuple[Any, int]:
        """A block of at least ``nbytes`` usable in order on the stream ``stream_key``."""
        size = _round(nbytes)
        with self.lock:
            for key in (stream_key, _ANY_STREAM):
                blocks = self.free.get(key, {}).get(size)
                if blocks:
                    self.cached_bytes -= size
                    self.used_bytes += size
                    self.hits += 1
                    return blocks.pop(), size
            self.misses += 1
        pointer = self._malloc(size, nbytes)
        with self.lock:
            self.used_bytes += size
        return pointer, size

    def release(self, pointer: Any, size: int, stream_key: int) -> None:
        with self.lock:
            self.free[stream_key][size].append(pointer)
            self.used_bytes -= size
            self.cached_bytes += size

    def empty(self) -> int:
        """Wait for the device, then return every cached block to CANN. Returns bytes freed."""
        rt.activate(self.device)
        ll.synchronize_device()
        with self.lock:
            blocks = [(p, size) for lists in self.free.values() for size, ps in lists.items()
                      for p in ps]
            self.free.clear()
            self.cached_bytes = 0
        for pointer, _ in blocks:
            ll.free(pointer)
        return sum(size for _, size in blocks)

    def forget(self) -> None:
        """Drop all bookkeeping (the runtime is being torn down)."""
        with self.lock:
            self.free.clear()
            self.cached_bytes = self.used_bytes = 0

    def _malloc(self, size: int, requested: int) -> Any:
        rt.activate(self.device)
        try:
            return ll.malloc(size)
        except OutOfMemoryError:
            logger.info("device %d out of memory for %d bytes: emptying the pool cache and "
                        "collecting garbage", self.device, size)
        self.empty()
        gc.collect()
        self.empty()
        try:
            return ll.malloc(size)
        except OutOfMemoryError as error:
            free, total = ll.get_mem_info(_HBM)
            raise OutOfMemoryError(
                error.status, error.api,
                f"requested {requested} bytes on device {self.device}; {free} bytes free of "
                f"{total} ({self.used_bytes} held by live aclnn_py arrays). CANN: {error.message}"
            ) from None


_pools: dict[int, MemoryPool] = {}
_pools_lock = threading.Lock()
_pool_enabled: bool | None = None


def pooling() -> bool:
    """Whether the pool is on (``ACLNN_PY_POOL`` is not ``0``), read once."""
    global _pool_enabled
    if _pool_enabled is None:
        _pool_enabled = os.environ.get("ACLNN_PY_POOL", "1").strip() not in ("0", "false", "no")
    return _pool_enabled


def pool(device: int) -> MemoryPool:
    found = _pools.get(device)
    if found is None:
        with _pools_lock:
            found = _pools.setdefault(device, MemoryPool(device))
    return found


def _forget_pools() -> None:
    for each in list(_pools.values()):
        try:
            each.empty()
        except Exception:
            logger.exception("aclnn_py teardown: emptying the memory pool")
        each.forget()


rt.on_teardown(_forget_pools)


def empty_cache(device: int | None = None) -> int:
    """Return the pool's cached (unused) blocks to CANN; returns the bytes released."""
    devices = list(_pools) if device is None else [device]
    return sum(pool(d).empty() for d in devices if d in _pools)


def memory_info(device: int | None = None) -> dict[str, int]:
    """Device memory as aclnn_py sees it.

    Returns ``used_bytes`` (held by live buffers), ``cached_bytes`` (kept by the
    pool for reuse), ``device_free_bytes`` and ``device_total_bytes`` (from
    ``aclrtGetMemInfo``), ``pool_hits`` and ``pool_misses``.
    """
    device = rt.activate(device)
    free, total = ll.get_mem_info(_HBM)
    each = pool(device)
    return {"used_bytes": each.used_bytes, "cached_bytes": each.cached_bytes,
            "device_free_bytes": free, "device_total_bytes": total,
            "pool_hits": each.hits, "pool_misses": each.misses}


class _DeferredFree:
    """Blocks to ``aclrtFree`` once nothing refers to this object (kept by a stream until
    its work is done)."""

    __slots__ = ("__weakref__",)

    def __init__(self, pointers: list[Any], device: int) -> None:
        weakref.finalize(self, _free_all, pointers, device, rt.generation())


def _free_all(pointers: list[Any], device: int, generation: int) -> None:
    if not rt.alive(generation):
        return
    for pointer in pointers:
        _release(None, pointer, 0, device, 0, generation)


class Scratch:
    """Device blocks for the duration of one operator call, given back together.

    With the pool, blocks return to the stream's cache at once: later work on
    the stream runs after the work that used them. Without it, they are freed
    at once if the stream's work is known to be done, else when it is.
    """

    __slots__ = ("stream", "pool", "blocks")

    def __init__(self, stream: rt.Stream) -> None:
        self.stream = stream
        self.pool = pool(stream.device) if pooling() else None
        self.blocks: list[tuple[Any, int]] = []

    def allocate(self, nbytes: int) -> Any:
        """A device pointer to ``nbytes`` bytes (NULL for none)."""
        if nbytes == 0:
            return ll.NULL
        if self.pool is not None:
            pointer, size = self.pool.allocate(nbytes, self.stream.key)
        else:
            pointer, size = ll.malloc(nbytes), nbytes
        self.blocks.append((pointer, size))
        return pointer

    def release(self, *, work_pending: bool) -> None:
        blocks, self.blocks = self.blocks, []
        if self.pool is not None:
            for pointer, size in blocks:
                self.pool.release(pointer, size, self.stream.key)
        elif work_pending:
            self.stream.keep_until_synchronized(
                _DeferredFree([p for p, _ in blocks], self.stream.device))
        else:
            for pointer, _ in blocks:
                ll.free(pointer)


def _release(pool_or_none: MemoryPool | None, pointer: Any, size: int, device: int,
             stream_key: int, generation: int, *, raising: bool = False) -> None:
    if not rt.alive(generation):
        return
    try:
        if pool_or_none is not None:
            pool_or_none.release(pointer, size, stream_key)
        else:
            rt.activate(device)
            ll.free(pointer)
    except Exception:
        if raising:
            raise
        logger.exception("aclnn_py: releasing device memory at 0x%x", ll.address(pointer))


class DeviceBuffer:
    """Owns ``nbytes`` of device memory (none for 0 bytes: CANN rejects size 0).

    The memory comes from the device's pool, cached for work queued on
    ``stream`` (default: the current stream), or straight from ``aclrtMalloc``
    with ``ACLNN_PY_POOL=0``. :meth:`free` or the garbage collector gives it back.
    """

    __slots__ = ("pointer", "nbytes", "device", "_finalizer", "__weakref__")

    def __init__(self, nbytes: int, device: int | None = None,
                 stream: rt.Stream | None = None) -> None:
        self.device = rt.activate(device)
        self.nbytes = int(nbytes)
        self._finalizer: weakref.finalize | None = None
        if self.nbytes == 0:
            self.pointer = ll.NULL
            return
        if pooling():
            key = (stream or rt.current_stream(self.device)).key
            owner = pool(self.device)
            self.pointer, size = owner.allocate(self.nbytes, key)
        else:
            key, owner, size = 0, None, self.nbytes
            self.pointer = ll.malloc(self.nbytes)
        self._finalizer = weakref.finalize(self, _release, owner, self.pointer, size,
                                           self.device, key, rt.generation())

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
        rt.activate(self.device)
        ll.memcpy(self.pointer, self.nbytes, source, nbytes, ll.MEMCPY_HOST_TO_DEVICE)

    def copy_to_host(self, array: np.ndarray) -> None:
        """Synchronous device-to-host copy into a writable C-contiguous array."""
        if array.nbytes == 0:
            return
        rt.activate(self.device)
        target = ll.ffi.from_buffer(array, require_writable=True)
        ll.memcpy(target, array.nbytes, self.pointer, array.nbytes, ll.MEMCPY_DEVICE_TO_HOST)

    @property
    def freed(self) -> bool:
        return self._finalizer is not None and not self._finalizer.alive

    def free(self) -> None:
        """Give the memory back now. Safe to call twice; raises AclError if CANN refuses."""
        if self._finalizer is not None:
            detached = self._finalizer.detach()
            if detached is not None:
                _, function, args, _ = detached
                function(*args, raising=True)

    def __enter__(self) -> DeviceBuffer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.free()
