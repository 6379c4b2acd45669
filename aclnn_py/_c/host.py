"""aclnn_py's own host library (``headers/aclnn_py_host.h``): ownership in C of memory
blocks, handles and staging, and the stream states that order their reuse."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from . import core
from ._fast_calls import lib as _fast
from ._ffi import ffi
from .core import ACL_SUCCESS, ACLNN_ERR_INNER_NULLPTR, MALLOC_HUGE_FIRST, META, NULL, RT, check

_new, _gc, _cast = ffi.new, ffi.gc, ffi.cast  # the per-call allocation path looks them up once
# The per-call cells' C types, resolved once: ``ffi.new`` given a type string looks it up on
# every call (190 against 240 ns a new block, before its ``ffi.gc``).
_BLOCK, _STAGING = ffi.typeof("aclpyBlock *"), ffi.typeof("aclpyStaging *")
buffer_pointer = ffi.from_buffer  # a contiguous numpy array's memory as a C pointer

HOST_LIBRARY = Path(__file__).resolve().parent.parent / "_native" / "libaclnn_py_host.so"
HANDLE_TENSOR = 1
HANDLE_EXECUTOR = 2
HANDLE_SCALAR = 3
HANDLE_INT_ARRAY = 4
HANDLE_FLOAT_ARRAY = 5
HANDLE_BOOL_ARRAY = 6
HANDLE_TENSOR_LIST = 7
HANDLE_SCALAR_LIST = 8

_host: Any = None
_collect_block: Any = None
_collect_handle: Any = None
_collect_staging: Any = None


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
                                      core.optional(META, "aclDestroyAclOpExecutor"),
                                      core.optional(META, "aclDestroyScalar"),
                                      core.optional(META, "aclDestroyIntArray"),
                                      core.optional(META, "aclDestroyFloatArray"),
                                      core.optional(META, "aclDestroyBoolArray"),
                                      core.optional(META, "aclDestroyTensorList"),
                                      core.optional(META, "aclDestroyScalarList"))
        # Fences: aclrtQueryEventStatus where the runtime has it, as torch_npu probes for it
        # (its values are the opposite of the deprecated aclrtQueryEvent's; hicann/runtime
        # include/external/acl/acl_rt.h, aclrtEventRecordedStatus and aclrtEventStatus).
        library.aclpyStreamsConfigure(RT.aclrtCreateEvent, RT.aclrtDestroyEvent,
                                      RT.aclrtRecordEvent,
                                      core.optional(RT, "aclrtQueryEventStatus"),
                                      core.optional(RT, "aclrtQueryEvent"),
                                      RT.aclrtSynchronizeStream)
        _collect_handle = library.aclpyHandleCollect
        _collect_staging = library.aclpyStagingCollect
        _fast.aclpyFastBind(*(ffi.cast("void *", getattr(library, name))
                                for name in FAST_CALLS))
        _collect_block = _fast.aclpyBlockCollect  # every block cell's destructor (ffi.gc)
        _host = library
    return _host


# The host library's per-call functions, called through the compiled module ``_fast_calls``
# (native/fast_calls.c, cffi's API mode): a direct call from Python, where the ABI-mode library
# object builds a libffi call each time. In the order of ``aclpyFastBind``'s parameters.
FAST_CALLS = ("aclpyRelaunchFast", "aclpyRelaunchFastWait", "aclpyRelaunchRun", "aclpyRepeatNew",
              "aclpyRepeatAgain", "aclpyStagedCall", "aclpyStreamSynchronizeFast",
              "aclpyStreamLaunching", "aclpyStreamSyncPoint", "aclpyBlockCollect")


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
    return _gc(_new(_STAGING), _collect_staging)


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
    staging = _gc(_new(_STAGING), _collect_staging)
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
    return _gc(_new(_BLOCK), _collect_block)


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
    block = _gc(_new(_BLOCK), _collect_block)
    if _host.aclpyPoolAllocateFor(pool, block, nbytes, MALLOC_HUGE_FIRST,
                                  stream_state) != ACL_SUCCESS:
        return None
    return block


def block_use(block: Any, stream_state: Any) -> None:
    """Mark ``block`` as used by work queued on the stream of ``stream_state`` (NULL: its
    work is known to be done), for stream-ordered reuse once it is released."""
    _host.aclpyBlockUse(block, stream_state)




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
    host()
    return _fast.aclpyStreamLaunching


def relaunch_run_function() -> Any:
    """``aclpyRelaunchRun(record, state, hold_mark, done, stream)``: rebind, count and
    launch in one call (the per-call path of a relaunch)."""
    host()
    return _fast.aclpyRelaunchRun


def relaunch_counted(record: Any, stream: Any) -> int:
    """``aclpyRelaunchCounted``: the rebinds and launch of a launch counted already; returns
    the status (the caller checks it)."""
    return int(_host.aclpyRelaunchCounted(record, stream))


# What the relaunch calls return besides CANN's statuses (aclnn_py_host.h): a retired record;
# a call the owner must make under its queueing lock instead (nothing was queued); a launch
# queued that found fences done.
RELAUNCH_RETIRED = -1
SLOW = -2
LAUNCHED_FENCE_DONE = -3


def relaunch_fast_function() -> Any:
    """``aclpyRelaunchFast(record)``: a relaunch of a record whose arrays did not change,
    without the owner's lock (the per-call path of ``Plan.run()``)."""
    host()
    return _fast.aclpyRelaunchFast


def relaunch_fast_wait_function() -> Any:
    """``aclpyRelaunchFastWait(record)``: :func:`relaunch_fast_function`'s relaunch and the
    stream's wait in one call (``Plan.run(synchronize=True)``); :class:`RelaunchWaited`
    reads its result."""
    host()
    return _fast.aclpyRelaunchFastWait


class RelaunchWaited(NamedTuple):
    """The two statuses ``aclpyRelaunchFastWait`` returns in one value: the relaunch's (as
    ``aclpyRelaunchFast`` returns it) and the wait's (``SLOW``: it did not wait)."""

    status: int
    waited: int

    @classmethod
    def of(cls, result: int) -> RelaunchWaited:
        """The statuses in ``result``: its low 32 bits as a signed value, then the rest."""
        low = result & 0xFFFFFFFF
        return cls(low - (1 << 32) if low >= 1 << 31 else low, result >> 32)


def epoch() -> int:
    """The arrays' placement epoch (``aclpyEpoch``)."""
    return int(host().aclpyEpoch())


def epoch_cell() -> Any:
    """The placement epoch's cell (``aclpyEpochCell``): ``cell[0]`` reads it without a call."""
    return host().aclpyEpochCell()


def repeat_new_function() -> Any:
    """``aclpyRepeatNew(repeat, block)``: a :class:`RepeatRecord`'s relaunch over its inputs
    and a new output, ``block`` filled from the record's pool in the same call, without the
    owner's lock."""
    host()
    return _fast.aclpyRepeatNew


def repeat_again_function() -> Any:
    """``aclpyRepeatAgain(repeat)``: a :class:`RepeatRecord`'s relaunch over the addresses of
    every array, inputs then outputs, without the owner's lock."""
    host()
    return _fast.aclpyRepeatAgain


class RepeatRecord:
    """An ``aclpyRepeat`` (``ffi.new``), everything one C call needs to repeat a launch of
    ``relaunch`` on the stream of ``state`` over the arrays at ``pointers`` (their owner
    checked them, and marked them as used on that stream, at placement ``epoch``), and what
    it points to, kept alive with it. With a ``pool`` (a C pool's handle), ``pointers`` are
    the inputs' and each repeat takes a new output of ``nbytes`` from it
    (:func:`repeat_new_function`); else they are every array's (:func:`repeat_again_function`).
    """

    __slots__ = ("repeat", "done", "_kept")

    def __init__(self, relaunch: RelaunchRecord, state: Any, epoch: int,
                 pointers: Sequence[Any], pool: Any = NULL, nbytes: int = 0) -> None:
        addresses = _new("void *[]", list(pointers))
        repeat = _new("aclpyRepeat *")
        repeat.record = relaunch.record
        repeat.state = state
        repeat.epoch = epoch
        repeat.addresses = addresses
        repeat.pool = pool
        repeat.nbytes = nbytes
        self.repeat = repeat
        self.done = ffi.addressof(repeat[0], "done")  # the fence mark of a launch, as a cell
        self._kept = (relaunch, state, addresses, pool)

    def renew(self, epoch: int) -> None:
        """The same arrays, checked again at placement ``epoch``."""
        self.repeat.epoch = epoch


def epoch_bump() -> None:
    """An array may have left the stream it was used on, or was freed: relaunches checked
    at an earlier epoch check again (``aclpyEpochBump``)."""
    host().aclpyEpochBump()


def stream_launched(state: Any) -> None:
    """The launch counted by ``aclpyStreamLaunching`` was queued, or failed."""
    _host.aclpyStreamLaunched(state)


def stream_synchronize_fast_function() -> Any:
    """``aclpyStreamSynchronizeFast(state)``, looked up once."""
    host()
    return _fast.aclpyStreamSynchronizeFast


STEP_UPLOAD, STEP_LAUNCH, STEP_DOWNLOAD, STEP_SYNCHRONIZE = 1, 2, 3, 4  # aclpyStagedCall's


def staged_call_function() -> Any:
    """``aclpyStagedCall(record, state, copies, addresses, step)``: a staged call of the numpy
    path (copies in, upload, relaunch, download, wait, copy out) without the owner's lock."""
    host()
    return _fast.aclpyStagedCall


def new_staged_copies(targets: Sequence[tuple[int, int]], host_data: int, device_data: int,
                      upload: int, result_host: int, result_device: int, result_bytes: int,
                      addresses: Sequence[int]) -> tuple[Any, Any, Any, Any]:
    """The fixed arguments of ``aclpyStagedCall`` over one pair of staging blocks: the
    ``aclpyStagedCopies`` (the runtime's aclrtMemcpyAsync; ``targets`` the ``(host address,
    bytes)`` of each packed input), its ``sources`` (one per target, filled per call), the
    launch's ``addresses`` and the step cell. The copies point into the others: keep all."""
    count = len(targets)
    copies = _new("aclpyStagedCopies *")
    sources = _new("void *[]", max(count, 1))
    cells = _new("void *[]", [_cast("void *", target) for target, _ in targets] or [NULL])
    sizes = _new("uint64_t[]", [nbytes for _, nbytes in targets] or [0])
    copies.memcpy_async = RT.aclrtMemcpyAsync
    copies.sources, copies.targets, copies.sizes, copies.count = sources, cells, sizes, count
    copies.host_data = _cast("void *", host_data)
    copies.device_data = _cast("void *", device_data)
    copies.upload = upload
    copies.result_host = _cast("void *", result_host)
    copies.result_device = _cast("void *", result_device)
    copies.result_bytes = result_bytes
    return (copies, sources, _new("void *[]", [_cast("void *", a) for a in addresses]),
            (_new("int32_t *"), cells, sizes))


def stream_close(state: Any) -> None:
    """Nothing launches or waits without the owner's lock from now on; returns once such
    waits under way ended (``aclpyStreamClose``)."""
    _host.aclpyStreamClose(state)


class RelaunchRecord:
    """An ``aclpyRelaunch`` and the C arrays it points to, all made by ``ffi.new`` and freed
    with this object; the executor, aclTensors and workspace stay owned by the caller, who
    keeps them alive as long as this record may launch (:meth:`retire` first)."""

    __slots__ = ("record", "next", "_tensors", "_bound")

    def __init__(self, executor: Any, phase2: Any, workspace: Any, workspace_size: int,
                 tensors: list[Any], addresses: list[Any], inputs: int) -> None:
        count = len(tensors)
        self._tensors = _new("aclTensor *[]", tensors)
        self._bound = _new("void *[]", addresses)
        self.next = _new("void *[]", count)  # this launch's addresses, filled by the caller
        record = _gc(_new("aclpyRelaunch *"), _host.aclpyRelaunchCollect)
        record.phase2 = phase2
        record.set_input = META.aclSetInputTensorAddr
        record.set_output = META.aclSetOutputTensorAddr
        record.workspace = workspace
        record.workspace_size = workspace_size
        record.arrays = count
        record.inputs = inputs
        record.tensors = self._tensors
        record.bound = self._bound
        record.next = self.next
        record.failed_rebind = -1
        record.executor = executor  # last: launchable from here on
        self.record = record

    def failed(self, operator: str) -> str:
        """The CANN function whose failure the last run reported: a rebind's, else
        ``operator``'s phase 2."""
        index, inputs = self.record.failed_rebind, self.record.inputs
        if index < 0:
            return operator
        return "aclSetOutputTensorAddr" if index >= inputs else "aclSetInputTensorAddr"

    def retire(self) -> None:
        """Refuse launches from now on (aclpyRelaunchRun returns RELAUNCH_RETIRED)."""
        record = self.record
        record.epoch = 0
        record.executor = NULL

    def allow_fast(self, state: Any, epoch: int) -> None:
        """Let ``aclpyRelaunchFast`` relaunch on the stream of ``state`` while the placement
        epoch is still ``epoch`` (0: never)."""
        record = self.record
        record.fast_state = state
        record.epoch = epoch

    def done(self) -> bool:
        """Whether the last launch of the record is known done (or it never launched)."""
        return bool(_host.aclpyRelaunchDone(self.record))


def new_mark() -> Any:
    """An ``int64_t`` cell for ``aclpyStreamRelaunch``'s fence mark."""
    return _new("int64_t *")


def stream_synchronize(state: Any, stream: Any, point: int) -> int:
    """``aclrtSynchronizeStream`` then the pools' record of ``point`` passed, in one call;
    returns the status (the caller checks it once its bookkeeping is done)."""
    return int(_host.aclpyStreamSynchronize(state, RT.aclrtSynchronizeStream, stream, point))


def stream_synchronize_functions() -> tuple[Any, Any]:
    """``aclpyStreamSynchronize`` and ``aclrtSynchronizeStream``, looked up once (the
    per-call path of a wait: :func:`stream_synchronize` without its lookups)."""
    return host().aclpyStreamSynchronize, RT.aclrtSynchronizeStream


def stream_uncount(state: Any) -> None:
    """The launch just counted queued nothing (``aclpyStreamUncount``)."""
    _host.aclpyStreamUncount(state)


def stream_sync_point_function() -> Any:
    """``aclpyStreamSyncPoint(state)``, looked up once (the per-call path of a wait)."""
    host()
    return _fast.aclpyStreamSyncPoint


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


def block_hand_back(block: Any) -> None:
    """Give ``block`` back to its pool as its collection does, with no status: a free CANN
    refuses leaves the block with the pool, which retries it at its next trim."""
    _collect_block(block)


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


def forked() -> None:
    """This process is a child forked after the runtime started: the parent's blocks and
    handles are left alone from now on (``aclpyForked``)."""
    if _host is not None:
        _host.aclpyForked()


def launch_consuming(owned: Any, phase2: Any, workspace: Any, workspace_size: int, stream: Any,
                     operator: str, extra: tuple[Any, ...] = ()) -> None:
    """Phase 2 on the non-repeatable executor ``owned`` holds (an ``aclpyHandle``), handed
    over in the same C call: CANN frees it inside phase 2 whether it succeeds or not.

    ``extra``: the arguments of a phase 2 that takes parameters besides the usual four
    (passed between the executor and the stream); the executor is then taken out of
    ``owned`` first (``aclpyHandleTake``) and phase 2 called with them."""
    if not extra:
        check(_host.aclpyHandleLaunch(owned, phase2, workspace, workspace_size, stream),
              operator)
        return
    executor = _host.aclpyHandleTake(owned)
    if executor == NULL:
        check(ACLNN_ERR_INNER_NULLPTR, operator)
    check(phase2(workspace, workspace_size, executor, *extra, stream), operator)
