"""Device memory: a caching pool per device and the buffers it hands out.

In the spirit of CuPy's and PyTorch's pools: sizes are rounded up to 512 bytes,
freed blocks are cached for reuse, and reuse follows stream order. A block
released while work queued on stream S may still use it is marked with S: later
work on S may have it at once (S runs its work in order), while another stream,
or host code writing it with ``aclrtMemcpy`` (not stream-ordered), has it only
once S passed a point after the release: a fence (an event recorded on S,
``aclrtRecordEvent``, found done by ``aclrtQueryEventStatus``) or a
synchronisation. :func:`empty_cache` never frees a block still waiting so. The
buffers queued work uses are not kept alive by the stream; only CANN handles
and staging blocks are, until a fence or a synchronisation shows that work done.
When ``aclrtMalloc`` runs out, the pool synchronises the device, releases its
cache, collects garbage and retries before raising
:class:`~aclnn_py.OutOfMemoryError` with the requested, free and total bytes.
``ACLNN_PY_POOL=0`` allocates and frees directly.

Page-locked host memory (``aclrtMallocHost``), which the numpy path stages its
copies through, has a pool of its own per device, of the same kind and with the
same rules; :func:`take_staging` takes one block of each in one step.

The bookkeeping lives in C (``native/host.c``): each buffer owns an
``aclpyBlock`` whose block returns to the pool when the buffer is freed or
collected, in one C call. No Python lock is involved in taking or giving back a
block, so a garbage-collection pass or an interrupt at any point can neither
deadlock the pool nor lose a block. The one Python lock counts synchronous copies
(``DeviceBuffer.copy_sync``): a buffer freed while another thread copies it gives its
block back as that copy ends, and nothing is made while the lock is held.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
from collections.abc import Callable
from typing import Any, NoReturn, TypedDict, TypeVar

import numpy as np

from .. import _caches
from .._c import lowlevel as ll
from ..errors import OutOfMemoryError
from . import process as rt
from . import streams as rt_streams

logger = logging.getLogger("aclnn_py")

_HBM = ll.constant("ACL_HBM_MEM")


class MemoryPool:
    """Caching allocator of one device's memory, or of page-locked host memory used with
    that device (``host``): a C pool; see the module docstring."""

    def __init__(self, device: int, caching: bool, host: bool = False) -> None:
        self.device = device
        self.caching = caching
        self.host = host
        self.handle = (ll.host_pool_create if host else ll.pool_create)(device, caching)

    def allocate(self, block: Any, nbytes: int) -> None:
        """Fill the empty ``block`` with at least ``nbytes`` (> 0) bytes; the device is
        current in the calling thread."""
        self.recover(block, nbytes, ll.pool_allocate_status(self.handle, block, nbytes))

    def recover(self, block: Any, nbytes: int, status: int) -> None:
        """After an allocation into ``block`` returned ``status``: nothing when it
        succeeded; out of memory, wait for the device, collect garbage, empty the cache
        and retry once (then :class:`OutOfMemoryError` with the figures); any other
        failure raises its AclError."""
        if not status:
            return
        api = "aclrtMallocHost" if self.host else "aclrtMalloc"
        try:
            ll.check(status, api)
        except OutOfMemoryError:
            logger.info("%s out of memory for %d bytes: waiting for the device, emptying "
                        "the pool cache and collecting garbage", self._what(), nbytes)
        rt_streams.synchronize_device(self.device)  # blocks held for queued work come back
        gc.collect()
        for hook in _out_of_memory_hooks:  # blocks kept between calls come back
            hook(self.device, self.host)
        self.empty(raising=False)
        rt.activate(self.device)
        try:
            ll.pool_allocate(self.handle, block, nbytes, api)
        except OutOfMemoryError as error:
            if self.host:
                detail = (f"requested {nbytes} bytes of page-locked host memory "
                          f"({self.stats()['used_bytes']} held by aclnn_py)")
            else:
                free, total = ll.get_mem_info(_HBM)
                detail = (f"requested {nbytes} bytes on device {self.device}; {free} bytes "
                          f"free of {total} ({self.stats()['used_bytes']} held by live "
                          f"aclnn_py arrays)")
            raise OutOfMemoryError(error.status, error.api,
                                   f"{detail}. CANN: {error.message}") from None

    def _what(self) -> str:
        return f"page-locked host memory (device {self.device})" if self.host \
            else f"device {self.device}"

    def empty(self, *, raising: bool = True) -> int:
        """Return every cached block to CANN; returns the bytes freed. Blocks that CANN
        refuses to free stay cached, and one AclError reports them."""
        rt.activate(self.device)
        status, freed, kept = ll.pool_trim(self.handle)
        if raising:
            ll.check(status, "aclrtFreeHost" if self.host else "aclrtFree",
                     f"{kept} cached block(s) of {self._what()} could not be freed and stay "
                     f"cached ({freed} bytes were freed).")
        return freed

    def stats(self) -> dict[str, int]:
        return ll.pool_stats(self.handle)

    def forget(self) -> None:
        """Drop all bookkeeping (the runtime is being torn down)."""
        ll.pool_abandon(self.handle)


# What gives back blocks kept between calls before the pools' out-of-memory recovery retries
# (``on_out_of_memory``).
_out_of_memory_hooks: list[Callable[[int, bool], None]] = []


def on_out_of_memory(hook: Callable[[int, bool], None]) -> None:
    """Have ``hook(device, host)`` give back the blocks its layer keeps between calls on
    ``device`` whenever a pool of that device runs out of memory (``host``: its pool of
    page-locked host memory), before the pool is emptied and the allocation retried.
    Only that pool is emptied, so blocks kept for other devices would not help."""
    _out_of_memory_hooks.append(hook)


_pools: dict[int, MemoryPool] = {}
_host_pools: dict[int, MemoryPool] = {}
_pools_lock = threading.Lock()
_pool_enabled: bool | None = None


def pooling() -> bool:
    """Whether the pool is on (``ACLNN_PY_POOL`` is not ``0``), read once."""
    global _pool_enabled
    if _pool_enabled is None:
        _pool_enabled = os.environ.get("ACLNN_PY_POOL", "1").strip() not in ("0", "false", "no")
    return _pool_enabled


def pool(device: int) -> MemoryPool:
    """The device's pool (made on first use; without caching when ``ACLNN_PY_POOL=0``)."""
    return _pools.get(device) or _made(_pools, device, host=False)


def host_pool(device: int) -> MemoryPool:
    """The pool of page-locked host memory used with ``device`` (made on first use)."""
    return _host_pools.get(device) or _made(_host_pools, device, host=True)


def _made(pools: dict[int, MemoryPool], device: int, host: bool) -> MemoryPool:
    """``pools[device]``, made under the lock unless another thread made it first."""
    with _pools_lock:
        found = pools.get(device)
        if found is None:
            found = pools[device] = MemoryPool(device, pooling(), host=host)
            if not pooling():
                rt_streams.after_synchronize = _free_waiting
        return found


def _free_waiting(device: int) -> None:
    """Without caching: give CANN the blocks that waited for work a synchronisation just
    passed (their pool would otherwise free them at its next allocation)."""
    found = _pools.get(device)
    if found is not None:
        found.empty(raising=False)


def _forget_pools() -> None:
    """Return every cached block, then drop the bookkeeping of every pool; the first
    failure is raised once all are forgotten (teardown reports it)."""
    failure = None
    for each in [*_pools.values(), *_host_pools.values()]:
        try:
            each.empty()
        except Exception as error:
            failure = failure or error
        each.forget()
    if failure is not None:
        raise failure


rt.on_teardown(_forget_pools)


def empty_cache(device: int | None = None) -> int:
    """Release what aclnn_py caches (every cache of the registry, ``aclnn_py._caches``):
    executors kept for repeated calls first, then host-side tables, then the pools' unused
    blocks (returned to CANN). Returns the device bytes returned to CANN.

    Blocks and executors still held for queued work are released only once that
    work is done: synchronise first to include them.
    """
    return _caches.empty(device)


def _empty_pools(device: int | None) -> int:
    devices = list(_pools) if device is None else [device]
    return sum(pool(d).empty() for d in devices if d in _pools)


def _empty_host_pools(device: int | None) -> int:
    for each in [p for d, p in list(_host_pools.items()) if device is None or d == device]:
        each.empty()  # page-locked memory: not device bytes, not counted
    return 0


def _cached_bytes(pools: dict[int, MemoryPool]) -> int:
    return sum(each.stats()["cached_bytes"] for each in list(pools.values()))


_caches.register("device memory pool", holds="unused device blocks, by rounded size",
                 bound="device memory: a failed aclrtMalloc synchronises, empties the pool "
                       "and retries", size=lambda: _cached_bytes(_pools), empty=_empty_pools,
                 stage=_caches.POOL, unit="bytes")
_caches.register("page-locked pool", holds="unused page-locked host blocks the numpy path "
                 "stages through", bound="as the device pool (aclrtMallocHost)",
                 size=lambda: _cached_bytes(_host_pools), empty=_empty_host_pools,
                 stage=_caches.POOL, unit="bytes")


class MemoryInfo(TypedDict):
    """What :func:`memory_info` returns: byte counts and pool counters."""

    used_bytes: int
    cached_bytes: int
    device_free_bytes: int
    device_total_bytes: int
    pool_hits: int
    pool_misses: int
    pinned_used_bytes: int
    pinned_cached_bytes: int


def memory_info(device: int | None = None) -> MemoryInfo:
    """Device memory as aclnn_py sees it.

    Returns ``used_bytes`` (held by live buffers and queued work), ``cached_bytes``
    (kept by the pool for reuse), ``device_free_bytes`` and ``device_total_bytes``
    (from ``aclrtGetMemInfo``), ``pool_hits`` and ``pool_misses``, and the page-locked
    host memory the numpy path stages through: ``pinned_used_bytes`` and
    ``pinned_cached_bytes``.
    """
    device = rt.activate(device)
    free, total = ll.get_mem_info(_HBM)
    stats = pool(device).stats()
    pinned = _host_pools[device].stats() if device in _host_pools else None
    return {"used_bytes": stats["used_bytes"], "cached_bytes": stats["cached_bytes"],
            "device_free_bytes": free, "device_total_bytes": total,
            "pool_hits": stats["hits"], "pool_misses": stats["misses"],
            "pinned_used_bytes": pinned["used_bytes"] if pinned else 0,
            "pinned_cached_bytes": pinned["cached_bytes"] if pinned else 0}


def staging_pools(device: int) -> tuple[Any, Any]:
    """The C handles of ``device``'s page-locked and device pools, for ``ll.staging_take``
    (the per-call path; a failure goes on in :func:`take_staging`)."""
    return host_pool(device).handle, pool(device).handle


def take_staging(device: int, host_bytes: int, device_bytes: int, staging: Any = None,
                 status: int = 0) -> Any:
    """An ``aclpyStaging`` (see ``headers/aclnn_py_host.h``) holding ``host_bytes`` of
    page-locked memory and ``device_bytes`` of device memory from ``device``'s pools,
    which the calling thread has made current, with out-of-memory recovery; both blocks
    go back to their pools when the returned object is collected. The fields
    ``host_data`` and ``device_data`` give their addresses (offsets add to them).

    ``staging`` and ``status``: what a first ``ll.staging_take`` gave, carried on here."""
    host, memory = host_pool(device), pool(device)
    if staging is None:
        staging = ll.staging_cell()
        status = ll.staging_fill(staging, host.handle, host_bytes, memory.handle,
                                 device_bytes)
    try:
        while status:  # out-of-memory recovery for the block that failed, or its error
            which = staging.failed
            owner, nbytes = (host, host_bytes) if which == 1 else (memory, device_bytes)
            owner.recover(ll.staging_block(staging, which), nbytes, status)
            status = ll.staging_fill(staging, host.handle, host_bytes, memory.handle,
                                     device_bytes)
    except BaseException:
        ll.staging_release(staging)  # now, not whenever the traceback goes
        raise
    return staging


_new_buffer = object.__new__

# Synchronous copies (aclrtMemcpy) are not stream work, which a free waits for through the
# stream: each buffer counts its copies under way instead (``_copying``), under this lock,
# and a free while any is under way leaves the memory to the last of them (``_free_pending``).
# Nothing is made under the lock (no collection can run there, whose finalisers may free).
_copies_lock = threading.Lock()


def _refuse(buffer: DeviceBuffer, freeing: bool = False) -> bool:
    """Refuse ``buffer`` to copies and launches from now on (``pointer`` None, not NULL: a
    freed buffer matches no address bound anywhere, empty ones' included); then, ``freeing``
    it, whether its memory may go now: not while a copy is under way, whose end lets go of
    it instead (as it does for every free until then)."""
    with _copies_lock:
        buffer.freed = True
        buffer.pointer = None
        if freeing and buffer._copying:
            buffer._free_pending = True
            return False
    return True


_Buffer = TypeVar("_Buffer", bound="DeviceBuffer")


def _fill(buffer: _Buffer, device: int, nbytes: int, block: Any) -> _Buffer:
    """Set every field of ``buffer``: the one place a buffer is assembled."""
    buffer.device = device
    buffer.nbytes = nbytes
    buffer.freed = False
    buffer._copying = 0
    buffer._block = block
    buffer.pointer = ll.NULL if block is None else block.pointer
    return buffer


class DeviceBuffer:
    """Owns ``nbytes`` of device memory (none for 0 bytes: CANN rejects size 0).

    The memory comes from the device's pool. :meth:`free` gives it back now; when
    the buffer is collected, its ``aclpyBlock`` gives it back in C. Whoever queues
    work on it keeps the buffer alive until that work is done. A freed buffer
    points nowhere (``pointer`` is None).
    """

    __slots__ = ("pointer", "nbytes", "device", "freed", "_block", "_copying", "_free_pending")
    pointer: Any
    nbytes: int
    device: int
    freed: bool
    _block: Any
    _copying: int  # synchronous copies under way (under _copies_lock)
    _free_pending: bool  # freed while copies were under way (initialised as the first begins)

    def __init__(self, nbytes: int, device: int | None = None) -> None:
        device = rt.activate(device)
        nbytes = int(nbytes)
        block = None
        if nbytes:
            block = ll.new_block()
            pool(device).allocate(block, nbytes)
        _fill(self, device, nbytes, block)

    @classmethod
    def take(cls, owner: MemoryPool, nbytes: int, device: int,
             stream_state: Any = ll.NULL) -> DeviceBuffer | None:
        """A buffer of ``nbytes`` (> 0) from ``owner`` if the pool can give it at once, else
        None: no waiting for the device, no collection, no Python lock (usable while a
        stream's hold lock is held). ``stream_state``: the stream whose work will use it
        (NULL: host code or any stream)."""
        block = ll.pool_take(owner.handle, nbytes, stream_state)
        if block is None:
            return None
        return _fill(_new_buffer(cls), device, nbytes, block)

    @classmethod
    def holding(cls, block: Any, nbytes: int, device: int) -> DeviceBuffer:
        """A buffer over ``block``, which a C call filled with ``nbytes`` from the pool of
        ``device`` (the per-call path)."""
        return _fill(_new_buffer(cls), device, nbytes, block)

    @classmethod
    def from_pool(cls, owner: MemoryPool, nbytes: int, device: int,
                  stream_state: Any = ll.NULL) -> DeviceBuffer:
        """A buffer from ``owner``, the pool of ``device``, which the calling thread has
        made current, for work queued on the stream of ``stream_state`` (as :meth:`take`):
        the per-call path."""
        if nbytes == 0:
            return _fill(_new_buffer(cls), device, 0, None)
        block = ll.pool_take(owner.handle, nbytes, stream_state)
        if block is None:  # the pool's full path: out-of-memory recovery, or the error
            block = ll.new_block()
            owner.allocate(block, nbytes)
            if stream_state != ll.NULL:  # marked as the quick path marks it
                ll.block_use(block, stream_state)
        return _fill(_new_buffer(cls), device, nbytes, block)

    def copy_from_host(self, array: np.ndarray) -> None:
        """Synchronous host-to-device copy of a C-contiguous array."""
        if array.nbytes:
            self.copy_from_address(ll.host_pointer(array), array.nbytes)

    def copy_from_address(self, source: Any, nbytes: int) -> None:
        """Synchronous host-to-device copy of ``nbytes`` bytes at host pointer ``source``."""
        self.copy_sync(source, nbytes, ll.MEMCPY_HOST_TO_DEVICE)

    def copy_to_host(self, array: np.ndarray) -> None:
        """Synchronous device-to-host copy into a writable C-contiguous array."""
        if array.nbytes:
            self.copy_sync(ll.host_pointer(array, writable=True), array.nbytes,
                           ll.MEMCPY_DEVICE_TO_HOST)

    def copy_sync(self, address: Any, nbytes: int, kind: int, offset: int = 0) -> None:
        """``aclrtMemcpy`` of ``nbytes`` between ``address`` and this buffer from byte
        ``offset``, the buffer's device made current: from the buffer to ``address`` for
        ``kind`` device-to-host or device-to-device, else from ``address`` into the buffer.
        Such a copy is not stream work, so a :meth:`free` in another thread meanwhile leaves
        the memory to the copy, which lets go of it as it ends; once freed, the buffer is a
        ValueError."""
        rt.activate(self.device)
        with _copies_lock:
            pointer = self.pointer
            if pointer is not None:
                if not self._copying:
                    self._free_pending = False
                self._copying += 1
        if pointer is None:
            raise ValueError("this DeviceArray was freed")
        # (an interrupt right here leaves the count up: the memory then goes at collection)
        try:
            if offset:
                pointer = ll.byte_offset(pointer, offset)
            if kind == ll.MEMCPY_HOST_TO_DEVICE:
                ll.memcpy(pointer, nbytes, address, nbytes, kind)
            else:
                ll.memcpy(address, nbytes, pointer, nbytes, kind)
        finally:
            with _copies_lock:
                self._copying -= 1
                last = not self._copying and self._free_pending
            if last:  # freed meanwhile: the memory goes now
                self._let_go()

    def _let_go(self) -> None:
        """What a free gives back once no copy uses the buffer: its block, to the pool (as
        its collection would: a free CANN refuses stays with the pool, retried at a trim)."""
        block = self._block
        if block is not None:
            ll.block_hand_back(block)

    def use_on(self, stream_state: Any) -> None:
        """Note that work queued on the stream of ``stream_state`` uses the buffer (NULL:
        its work is known to be done): once released, the block is reused in that stream's
        order."""
        block = self._block
        if block is not None:
            ll.block_use(block, stream_state)

    def retire(self) -> None:
        """Refuse the buffer to launches and copies from now on; the memory stays until
        :meth:`free`."""
        _refuse(self)
        ll.epoch_bump()  # relaunches checked over it check again

    def free(self) -> None:
        """Give the memory back now: to work on the stream whose queued work may still
        use it at once, to anyone else once that work is done; while another thread copies
        it synchronously, as that copy ends. Safe to call twice; raises AclError if CANN
        refuses (the block then stays with the pool, which retries at :func:`empty_cache`)."""
        # Flags first: an interrupt below leaves a buffer that is refused, never one in use
        # after its block was handed on.
        now = _refuse(self, freeing=True)
        ll.epoch_bump()
        block = self._block
        if now and block is not None:
            rt.activate(self.device)
            ll.block_release(block)

    def __enter__(self) -> DeviceBuffer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.free()

    def __reduce__(self) -> NoReturn:
        raise TypeError("a DeviceBuffer cannot be pickled: it is device memory of this process")


class StagedBuffer(DeviceBuffer):
    """A range of a staging block's device memory (:func:`take_staging`). It owns nothing
    and keeps nothing alive: whoever queues work on it holds the staging itself.
    :meth:`free` only retires it."""

    __slots__ = ()

    def free(self) -> None:
        self.freed = True
        self.pointer = None
        ll.epoch_bump()


def staged_buffer(pointer: Any, nbytes: int, device: int) -> StagedBuffer:
    """A :class:`StagedBuffer` of ``nbytes`` at ``pointer``."""
    buffer = _fill(_new_buffer(StagedBuffer), device, nbytes, None)
    buffer.pointer = pointer
    return buffer


class BorrowedBuffer(DeviceBuffer):
    """Device memory someone else allocated and frees (another ACL user, torch_npu, a C
    extension): never freed here. It keeps ``owner`` alive as long as it lives, and so does
    queued work that uses it (a launch holds the arrays over memory the pools do not own).
    :meth:`free` only retires it and lets go of ``owner``."""

    __slots__ = ("owner",)
    owner: Any

    def free(self) -> None:
        now = _refuse(self, freeing=True)
        ll.epoch_bump()
        if now:
            self.owner = None

    def _let_go(self) -> None:
        self.owner = None


def borrowed_buffer(address: int, nbytes: int, device: int, owner: Any) -> BorrowedBuffer:
    """A :class:`BorrowedBuffer` of ``nbytes`` at the device address ``address``."""
    buffer = _fill(_new_buffer(BorrowedBuffer), device, nbytes, None)
    buffer.pointer = ll.pointer_at(address)
    buffer.owner = owner
    return buffer
