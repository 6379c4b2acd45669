"""Device memory: a caching pool per device and the buffers it hands out.

In the spirit of CuPy's pool: sizes are rounded up to 512 bytes and freed
blocks are cached for reuse. A block goes back to the cache only once the
work queued before its release has finished: blocks still used by queued work
are held by that stream until it is synchronised (the copies aclnn_py makes
with ``aclrtMemcpy`` are not stream-ordered, so earlier reuse would race).
When ``aclrtMalloc`` runs out, the pool synchronises the device, releases its
cache, collects garbage and retries before raising
:class:`~aclnn_py.OutOfMemoryError` with the requested, free and total bytes.
``ACLNN_PY_POOL=0`` allocates and frees directly.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
from collections import defaultdict
from typing import Any

import numpy as np

from . import _lowlevel as ll
from . import _runtime as rt
from .errors import OutOfMemoryError

logger = logging.getLogger("aclnn_py")

ROUNDING = 512
_HBM = ll.constant("ACL_HBM_MEM")


def _round(nbytes: int) -> int:
    return (nbytes + ROUNDING - 1) & -ROUNDING


class MemoryPool:
    """Caching allocator of one device's memory.

    Its lock is taken with acquire/release: on the per-call path a ``with``
    block costs twice as much.
    """

    def __init__(self, device: int) -> None:
        self.device = device
        self.lock = threading.Lock()
        self.free: dict[int, list[Any]] = defaultdict(list)  # block size -> cached pointers
        self.used_bytes = 0
        self.cached_bytes = 0
        self.hits = 0
        self.misses = 0

    def allocate(self, nbytes: int) -> tuple[Any, int]:
        """A block of at least ``nbytes``: (pointer, block size)."""
        size = _round(nbytes)
        lock = self.lock
        lock.acquire()
        try:
            blocks = self.free.get(size)
            if blocks:
                self.cached_bytes -= size
                self.used_bytes += size
                self.hits += 1
                return blocks.pop(), size
            self.misses += 1
        finally:
            lock.release()
        pointer = self._malloc(size, nbytes)
        with lock:
            self.used_bytes += size
        return pointer, size

    def release(self, pointer: Any, size: int) -> None:
        """Cache a block whose users have all finished."""
        lock = self.lock
        lock.acquire()
        try:
            self.free[size].append(pointer)
            self.used_bytes -= size
            self.cached_bytes += size
        finally:
            lock.release()

    def empty(self) -> int:
        """Return every cached block to CANN. Returns the bytes freed."""
        with self.lock:
            blocks = [(p, size) for size, ps in self.free.items() for p in ps]
            self.free.clear()
            self.cached_bytes = 0
        rt.activate(self.device)
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
            logger.info("device %d out of memory for %d bytes: waiting for the device, emptying "
                        "the pool cache and collecting garbage", self.device, size)
        rt.synchronize_device(self.device)  # blocks held for queued work come back
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
    """The device's pool (made on first use)."""
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
    """Release what aclnn_py caches: executors kept for repeated calls, then the pool's
    unused blocks (returned to CANN). Returns the bytes returned to CANN.

    Blocks and executors still held for queued work are released only once that
    work is done: synchronise first to include them.
    """
    rt.drop_launch_caches(device)
    devices = list(_pools) if device is None else [device]
    return sum(pool(d).empty() for d in devices if d in _pools)


def memory_info(device: int | None = None) -> dict[str, int]:
    """Device memory as aclnn_py sees it.

    Returns ``used_bytes`` (held by live buffers and queued work), ``cached_bytes``
    (kept by the pool for reuse), ``device_free_bytes`` and ``device_total_bytes``
    (from ``aclrtGetMemInfo``), ``pool_hits`` and ``pool_misses``.
    """
    device = rt.activate(device)
    free, total = ll.get_mem_info(_HBM)
    each = pool(device)
    return {"used_bytes": each.used_bytes, "cached_bytes": each.cached_bytes,
            "device_free_bytes": free, "device_total_bytes": total,
            "pool_hits": each.hits, "pool_misses": each.misses}


def _release(pool_or_none: MemoryPool | None, pointer: Any, size: int, device: int,
             generation: int, *, raising: bool = False) -> None:
    if not rt.alive(generation):
        return
    try:
        if pool_or_none is not None:
            pool_or_none.release(pointer, size)
        else:
            rt.activate(device)
            ll.free(pointer)
    except Exception:
        if raising:
            raise
        logger.exception("aclnn_py: releasing device memory at 0x%x", ll.address(pointer))


class DeviceBuffer:
    """Owns ``nbytes`` of device memory (none for 0 bytes: CANN rejects size 0).

    The memory comes from the device's pool, or straight from ``aclrtMalloc``
    with ``ACLNN_PY_POOL=0``. :meth:`free` or the garbage collector gives it
    back; whoever queues work on it keeps the buffer alive until that work is done.
    A freed buffer points nowhere (``pointer`` is None).
    """

    # The safety net is __del__ rather than weakref.finalize: operators make a
    # buffer per call, and a finalize object costs ten times as much.
    __slots__ = ("pointer", "nbytes", "device", "freed", "_pool", "_size", "_generation")

    def __init__(self, nbytes: int, device: int | None = None) -> None:
        device = rt.activate(device)
        self._claim(int(nbytes), device, pool(device) if pooling() else None, rt.generation())

    @classmethod
    def from_pool(cls, owner: MemoryPool | None, nbytes: int, device: int,
                  generation: int) -> DeviceBuffer:
        """A buffer from ``owner`` (None: ``aclrtMalloc``) on ``device``, which the calling
        thread has made current in runtime ``generation``: the per-call path."""
        buffer = cls.__new__(cls)
        buffer._claim(nbytes, device, owner, generation)
        return buffer

    def _claim(self, nbytes: int, device: int, owner: MemoryPool | None,
               generation: int) -> None:
        self.device = device
        self.nbytes = nbytes
        self.freed = False
        self._generation = generation
        self._pool = owner
        self._size = 0  # of the block held; 0 once given back
        if nbytes == 0:
            self.pointer = ll.NULL
        elif owner is not None:
            self.pointer, self._size = owner.allocate(nbytes)
        else:
            self.pointer, self._size = ll.malloc(nbytes), nbytes

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

    def free(self) -> None:
        """Give the memory back now; the caller makes sure no queued work uses it.
        Safe to call twice; raises AclError if CANN refuses."""
        self.freed = True
        self._give_back(raising=True)

    def _give_back(self, *, raising: bool) -> None:
        size, self._size = self._size, 0
        # None, not NULL: a freed buffer matches no address bound anywhere, empty ones' included
        pointer, self.pointer = self.pointer, None
        if size:
            _release(self._pool, pointer, size, self.device, self._generation, raising=raising)

    def __del__(self) -> None:
        size = self._size
        if size:
            try:
                _release(self._pool, self.pointer, size, self.device, self._generation)
            except Exception:  # never raise from a destructor (e.g. late in interpreter exit)
                return

    def __enter__(self) -> DeviceBuffer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.free()
