"""The one launch path: phase 1 once per call signature, then relaunches.

:func:`new_launch` runs phase 1 for a plan or a launch-cache entry and decides,
once for that signature, how it will launch:

* :class:`RepeatableLaunch` (the usual case) owns what phase 1 made (the
  aclTensors, the executor made repeatable, the workspace) and relaunches it,
  rebinding the addresses that changed;
* :class:`OneShotLaunch` when CANN will not make the executor repeatable: it
  refuses executors from its executor cache (the same operator and signature
  already ran non-repeatably in the process, as under torch_npu), AI CPU kernels
  and same-address view copies, and CANN 8.0.RC2 lacks the API. Each launch then
  runs phase 1 and hands the executor to phase 2, which frees it.

Whatever a queued launch uses stays alive until the stream passed it, whichever
owner is dropped first: a one-shot launch queues a hold on the stream for its
executor, aclTensors, workspace and arrays; a repeatable launch's C record knows
the stream point of its last launch, and a launch dropped before that point keeps
what its executor uses until then (``streams.keep_until_done``), so its relaunches
need no hold (arrays over memory the pools do not own are still held). That is
what lets a plan's repeated ``run()`` be one C call (``aclpyRelaunchFast``), which
declines to the full path whenever an array may have moved or been freed since
the last checked run (the placement epoch, ``aclpyEpoch``).

The order inside a launch is what keeps results right when a call fails or is
interrupted part-way:

1. work on other streams that used the arrays is waited for;
2. only changed addresses are rebound, each marked unknown until CANN has
   taken it, so a later launch never trusts a half-done rebind (repeatable);
   a one-shot launch does phase 1 over the current addresses instead;
3. the arrays are marked as used by the stream, and any hold is queued,
   *before* the launch (``Stream.queue``, ``Stream.relaunch``), so queued work is
   never left unprotected, and no synchronisation that began earlier can drop
   the hold.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import Any, NoReturn, Union

import numpy as np

from .._c import lowlevel as ll
from ..errors import AclError
from ..ops.specs import OperatorSpec
from ..runtime.arrays import DeviceArray, freed_error, move_to, placing
from ..runtime.handles import CString, Executor, Handle
from ..runtime.memory import DeviceBuffer
from ..runtime.memory import pool as memory_pool
from ..runtime.streams import Stream, keep_until_done, let_go

logger = logging.getLogger("aclnn_py")

# The placement epoch's cell (``aclpyEpoch``, read as ``_epoch[0]`` without a call), looked up
# with the first repeatable launch (importing aclnn_py loads no library).
_epoch: Any = None


def placement_epoch() -> int:
    """The placement epoch now, read from its cell (once a repeatable launch was made: the
    only kind whose launch returns an epoch to compare it with)."""
    return int(_epoch[0])

# aclScalar attributes travel as float32 values: CANN casts them to the computation dtype.
_SCALAR_DTYPE = ll.constant("ACL_FLOAT")


def _phase1(spec: OperatorSpec, c_attributes: tuple[Any, ...], arrays: Sequence[DeviceArray]
            ) -> tuple[Executor, list[Handle], list[Any]]:
    """Phase 1 of ``spec`` over ``arrays`` (its inputs, then its outputs): the executor,
    and the aclTensors and other C objects (scalars, arrays, tensor lists) it refers to, all
    owned by the caller. The aclTensors of a tensor list's arrays are handed to the list,
    which destroys them."""
    tensors: list[Handle] = []
    owned: list[Any] = []
    try:
        names = spec.names
        for index, array in enumerate(arrays):
            tensors.append(array.tensor(spec.min_cann_rank,
                                        names[index] if index < len(names) else ""))
        handles = [tensor.handle for tensor in tensors]
        values = [_c_attribute(attribute.c_type, value, owned)
                  for attribute, value in zip(spec.attributes, c_attributes)]
        lists: dict[int, Any] = {}  # a tensor list made once, for both phases
        if spec.order:
            arguments = [_ordered_argument(entry, handles, values, tensors, owned, lists)
                         for entry in spec.order]
        else:
            outputs = len(spec.outputs)
            arguments = [*handles[:-outputs], *values, *handles[-outputs:]]
        # A phase 2 with parameters of its own is given phase 1's objects again.
        extra = tuple(_ordered_argument(entry, handles, values, tensors, owned, lists)
                      for entry in spec.phase2)
        executor = Executor(spec.cann, *arguments, keepalive=(*tensors, *owned),
                            library=spec.library, phase2_arguments=extra)
    except BaseException:
        _destroy(tensors, owned)
        raise
    return executor, tensors, owned


def _ordered_argument(entry: tuple[str, int] | tuple[str, int, int], handles: list[Any],
                      values: list[Any], tensors: list[Handle], owned: list[Any],
                      lists: dict[int, Any]) -> Any:
    """The C argument of one ``spec.order`` (or ``spec.phase2``) entry; a tensor list is made
    here once (and added to ``owned``, and to ``lists`` by its first array) from the
    aclTensors of its arrays."""
    kind, index = entry[0], entry[1]
    if kind == "tensor":
        return handles[index]
    if kind == "attribute":
        return values[index]
    if kind == "list":
        if index not in lists:
            made = Handle("tensor_list", tensors[index:index + entry[-1]])
            owned.append(made)
            lists[index] = made.handle
        return lists[index]
    return ll.NULL


def _c_attribute(c_type: str, value: Any, owned: list[Any]) -> Any:
    """The C argument for an attribute's converted ``value``; C objects it needs are made
    here and added to ``owned``. aclScalars come as ``(aclDataType, numpy dtype, value)``,
    or as a float (float32); aclScalarLists as a tuple of the former; arrays as tuples;
    strings as str."""
    if value is None:  # an optional argument left out
        return ll.NULL
    c_type = c_type.removesuffix("const").rstrip()
    if c_type == "const aclScalar *" or c_type == "aclScalar *":
        if isinstance(value, tuple):
            made: Any = Handle("scalar", np.array([value[2]], value[1]), value[0])
        else:
            made = Handle("scalar", value, _SCALAR_DTYPE)
    elif c_type in ("const aclScalarList *", "aclScalarList *"):
        scalars = [Handle("scalar", np.array([item], dtype), code) for code, dtype, item in value]
        try:
            made = Handle("scalar_list", scalars)
        finally:  # those the list did not take over
            for scalar in scalars:
                scalar.destroy()
    elif c_type in ("const aclIntArray *", "aclIntArray *"):
        made = Handle("int_array", value)
    elif c_type in ("const aclFloatArray *", "aclFloatArray *"):
        made = Handle("float_array", value)
    elif c_type in ("const aclBoolArray *", "aclBoolArray *"):
        made = Handle("bool_array", value)
    elif c_type in ("const char *", "char *"):
        made = CString(value)
    else:
        return value
    owned.append(made)
    return made.handle


def _destroy(tensors: Sequence[Handle], owned: Sequence[Any]) -> None:
    handles: tuple[Any, ...] = (*tensors, *owned)
    for handle in handles:
        handle.destroy()


def _discard(executor: Executor) -> None:
    """Destroy an executor that was never launched (a no-op once phase 2 took it)."""
    try:
        executor.close()
    except AclError:  # it stays owned by its handle, which tries again when collected
        logger.warning("aclnn_py: destroying an unused %s executor failed", executor.operator,
                       exc_info=True)


def new_launch(spec: OperatorSpec, c_attributes: tuple[Any, ...],
               arrays: Sequence[DeviceArray], device: int) -> Launch:
    """Phase 1 of ``spec`` over ``arrays`` (inputs, then the output) for a plan or a cache
    entry, and the way this signature launches from now on: a :class:`RepeatableLaunch`
    when CANN makes the executor repeatable, else a :class:`OneShotLaunch`."""
    if ll.repeatable_api_missing() or not spec.repeatable:
        # CANN 8.0.RC2: no executor may wait for a launch (it could not be destroyed), so
        # phase 1 waits for the first launch.
        return OneShotLaunch(spec, c_attributes, device)
    try:
        executor, tensors, owned = _phase1(spec, c_attributes, arrays)
    except AclError:
        # CANN may refuse an address another thread freed after phase 1 read it: that free
        # is the error to report, as a launch refuses a freed array
        for name, array in zip(spec.names, arrays):
            array.require_live(name)
        raise
    try:
        repeatable = executor.make_repeatable()
        if repeatable:
            return RepeatableLaunch(spec, executor, tensors, owned, arrays, device)
        # Refused: the first launch over the same addresses consumes this executor.
        pending = (executor, tensors, owned, [array.buffer.pointer for array in arrays])
        return OneShotLaunch(spec, c_attributes, device, pending)
    except BaseException:
        _discard(executor)
        _destroy(tensors, owned)
        raise


class RepeatableLaunch:
    """Phase 1 of ``operator`` over ``arrays`` (its inputs, then its one output) with a
    repeatable executor, kept for relaunching on any stream of the arrays' device.

    What a relaunch needs lives in a C record (``ll.RelaunchRecord``: the executor, phase 2,
    the workspace, the aclTensors and the addresses they are bound to), so a relaunch is
    one C call (``Stream.relaunch``): rebind what changed, count the stream point, launch.
    The record also knows the stream point of its last launch: dropped without
    :meth:`close`, the launch hands what its executor uses to the streams' retiring list
    (``streams.keep_until_done``), released once that point passed. So no launch needs
    holding it, and a plan's repeated run can be one C call (:meth:`fast_call`).
    """

    # What Stream.relaunch reads, under the stream's lock: operator, names and record.
    __slots__ = ("operator", "names", "record", "_tensors", "_owned", "_executor",
                 "_workspace", "_kept", "__weakref__")

    def __init__(self, spec: OperatorSpec, executor: Executor, tensors: list[Handle],
                 owned: list[Any], arrays: Sequence[DeviceArray], device: int) -> None:
        """Take ``executor`` (repeatable) and what it refers to from :func:`_phase1`."""
        global _epoch
        if _epoch is None:
            _epoch = ll.epoch_cell()
        self.operator = spec.cann
        self.names = spec.names
        self._tensors = tensors
        self._owned = owned
        self._executor = executor
        self.record: ll.RelaunchRecord | None = None
        try:
            self._workspace = DeviceBuffer(executor.workspace_size, device)
        except BaseException:
            self._release()
            raise
        try:
            pointers = [array.buffer.pointer for array in arrays]
            for index, pointer in enumerate(pointers):
                if pointer is None:  # freed by another thread since phase 1
                    raise freed_error(self.names[index])
            self.record = ll.RelaunchRecord(
                executor.handle, ll.operator_phase2(spec.cann, spec.library),
                self._workspace.pointer, executor.workspace_size,
                [tensor.handle for tensor in tensors], pointers, len(spec.inputs))
        except BaseException:
            self._release()
            raise
        # Dropped without close(), what the executor uses waits for its last launch.
        self._kept = keep_until_done(self, self.record,
                                     (executor, self._workspace, tensors, owned))

    @property
    def workspace_size(self) -> int:
        return self._executor.workspace_size

    def launch(self, stream: Stream, arrays: Sequence[DeviceArray]) -> int:
        """Queue the call on ``stream`` over ``arrays``, laid out as the ones given at
        construction (the caller checked that): one C call. Returns the placement epoch at
        which the arrays were checked when they need no holding (pool memory) and it is
        still the epoch once the launch is queued (nothing freed or moved meanwhile), for
        the repeats without the lock (``Stream.repeat``, ``Stream.allow_fast``);
        else 0: such a repeat would decline."""
        epoch: int = _epoch[0]  # before the checks: a change during them counts
        with placing:
            held = move_to(stream, arrays)
            stream.relaunch(held, arrays, self)
        return epoch if held is None and epoch == _epoch[0] else 0

    def fast_call(self) -> Any:
        """A call without arguments that relaunches the arrays of the last :meth:`launch`
        with ``fast``, on its stream (``aclpyRelaunchFast``), and returns its status: 0,
        ``ll.LAUNCHED_FENCE_DONE`` (:meth:`fences_done_mark` says up to which hold mark),
        ``ll.SLOW`` when :meth:`launch` must check again, ``ll.RELAUNCH_RETIRED`` or CANN's
        status."""
        return functools.partial(ll.relaunch_fast_function(), self._open_record().record)

    def fast_wait_call(self) -> Any:
        """:meth:`fast_call` that also waits for the stream once the launch is queued
        (``aclpyRelaunchFastWait``), returning 0 when both succeeded, else both statuses
        in one value (``ll.RelaunchWaited.of`` reads them)."""
        return functools.partial(ll.relaunch_fast_wait_function(), self._open_record().record)

    def _open_record(self) -> ll.RelaunchRecord:
        record = self.record
        if record is None:
            raise ValueError(f"{self.operator}: this launch was closed")
        return record

    def fences_done_mark(self) -> int:
        """The hold mark of the fences the last :meth:`fast_call` found done."""
        record = self.record
        return -1 if record is None else int(record.record.done)

    def launch_around(self, stream: Stream, arrays: Sequence[DeviceArray], hold: Any,
                      before: tuple[Any, ...] | None, after: tuple[Any, ...] | None) -> None:
        """Queue ``before``, the call over ``arrays``, then ``after`` (each ``(function,
        arguments)`` queuing work on ``stream``, or None) under one hold that also keeps
        ``hold``: the numpy path's copies around its launch. The arrays are its own, fresh
        views of a staging block: no other stream's work uses them."""
        stream.queue_steps((self, arrays, hold), before,
                           (self._bind_and_launch, (arrays, stream.handle)), after)

    def _bind_and_launch(self, arrays: Sequence[DeviceArray], stream_handle: Any) -> None:
        """Rebind what changed, then launch (without counting: ``queue_steps`` counted).
        Runs under the stream's hold lock, which also orders every launch of this object
        (a plan or a cache entry launches on one stream only): an array freed by another
        thread is refused here or waited for by its free, and a retired launch is refused
        here or waited for by the retiring synchronisation."""
        record = self._open_record()
        fill_addresses(record.next, arrays, self.names)
        status = ll.relaunch_counted(record.record, stream_handle)  # queue_steps counted it
        if status:
            if status == ll.RELAUNCH_RETIRED:
                raise ValueError(f"{self.operator}: this launch was closed")
            ll.check(status, record.failed(self.operator))

    def retire(self) -> None:
        """Refuse launches from now on; one being queued on the stream right now is
        waited for by the next synchronisation of that stream."""
        record = self.record
        if record is not None:
            record.retire()

    def close(self) -> None:
        """Retire, then release the executor, workspace and aclTensors now; the caller
        has made sure no queued work uses them. Safe to call twice."""
        self.retire()
        kept = getattr(self, "_kept", None)
        if kept is not None:
            let_go(kept)
        self._release()

    def _release(self) -> None:
        executor = getattr(self, "_executor", None)
        if executor is not None:
            executor.close()
        workspace = getattr(self, "_workspace", None)
        if workspace is not None:
            workspace.free()
        handles: tuple[Any, ...] = (*self._tensors, *self._owned)
        for handle in handles:
            handle.destroy()

    def __reduce__(self) -> NoReturn:
        raise TypeError("a launch cannot be pickled: it holds CANN executors of this process")


def fill_addresses(cells: Any, arrays: Sequence[DeviceArray], names: Sequence[str]) -> None:
    """Put the arrays' device addresses in ``cells`` (a record's ``next``), refusing a
    freed array by its name."""
    for index, array in enumerate(arrays):
        pointer = array.buffer.pointer
        if pointer is None:
            array.require_live(names[index])  # raises
        cells[index] = pointer


class _WorkspaceNeeded(Exception):
    """Phase 1 asked for more workspace than the pool could give without waiting."""

    def __init__(self, nbytes: int) -> None:
        super().__init__(nbytes)
        self.nbytes = nbytes


class OneShotLaunch:
    """A call signature whose executors are not repeatable: each launch runs phase 1 over
    the arrays and hands the executor to phase 2, which frees it (success or not).

    Plans and the launch cache keep it where they would keep a :class:`RepeatableLaunch`,
    so a signature is found not repeatable once. The workspace is kept and reused (the
    launches of one plan or cache entry are ordered on one stream); phase 2 follows
    phase 1 at once, as without ``aclDestroyAclOpExecutor`` (CANN 8.0.RC2) an executor
    whose phase 2 never runs cannot be released.
    """

    __slots__ = ("operator", "names", "view_shapes", "_spec", "_c_attributes", "_device",
                 "_pending", "_workspace", "_open", "_read_shapes", "__weakref__")

    def __init__(self, spec: OperatorSpec, c_attributes: tuple[Any, ...], device: int,
                 pending: tuple[Executor, list[Handle], list[Any], list[Any]]
                 | None = None, *, read_shapes: int = 0) -> None:
        """``pending``: the refused executor of :func:`new_launch`, what it refers to and
        the addresses it was made for. ``read_shapes``: for an operator whose outputs'
        extents depend on the data, how many of the last arrays are such outputs: after each
        launch, :attr:`view_shapes` has their aclTensors' view shapes (``aclGetViewShape``),
        which CANN sets before that operator's phase 2 returns (it waits for the stream)."""
        self.operator = spec.cann
        self.names = spec.names
        self.view_shapes: list[tuple[int, ...]] = []
        self._read_shapes = read_shapes
        self._spec = spec
        self._c_attributes = c_attributes
        self._device = device
        self._pending = [] if pending is None else [pending]  # popped atomically
        self._open = True
        self._workspace = DeviceBuffer(0 if pending is None else pending[0].workspace_size,
                                       device)

    @property
    def workspace_size(self) -> int:
        """Bytes of the workspace kept (the largest phase 1 asked for so far)."""
        return self._workspace.nbytes

    def launch(self, stream: Stream, arrays: Sequence[DeviceArray]) -> int:
        """Phase 1 over ``arrays`` (laid out as the signature says; the caller checked
        that), then phase 2 queued on ``stream``.

        Phase 1 runs under the stream's hold lock, after the last checks, right before
        phase 2: a launch refused there (stream closed, an array freed by another thread)
        has made no executor, which matters when CANN lacks ``aclDestroyAclOpExecutor``.
        """
        self.launch_around(stream, arrays, None, None, None, track=True)
        return 0

    def launch_around(self, stream: Stream, arrays: Sequence[DeviceArray], hold: Any,
                      before: tuple[Any, ...] | None, after: tuple[Any, ...] | None,
                      track: bool = False) -> None:
        """As :meth:`RepeatableLaunch.launch_around`; ``track`` (:meth:`launch`) first waits
        for other streams' work on the arrays and marks them used by ``stream``."""
        if not self._open:
            raise ValueError(f"{self.operator}: this launch was closed")
        if track:
            with placing:
                self._queue(stream, arrays, move_to(stream, arrays), hold, before, after)
        else:
            self._queue(stream, arrays, arrays, hold, before, after)

    def _queue(self, stream: Stream, arrays: Sequence[DeviceArray], kept: Any, hold: Any,
               before: tuple[Any, ...] | None, after: tuple[Any, ...] | None) -> None:
        """:meth:`launch_around` once the arrays are placed, holding ``kept`` (what
        ``move_to`` said the arrays need held) and ``hold``."""
        for _ in range(2):
            workspace = self._workspace
            held = [self, workspace, kept, hold]  # the launch adds its executor
            try:
                stream.queue_steps(held, before, (self._phase1_and_launch, (
                    held, workspace, arrays, stream.handle)), after)
                return
            except _WorkspaceNeeded as needed:  # allocated here, where the pool may wait
                self._workspace = DeviceBuffer(needed.nbytes, self._device)
        raise RuntimeError(f"{self.operator}: phase 1 asked for more workspace on every try")

    def _phase1_and_launch(self, hold: list[Any], workspace: DeviceBuffer,
                           arrays: Sequence[DeviceArray], stream_handle: Any) -> None:
        """Checks, phase 1 and phase 2 under the stream's hold lock (see :meth:`launch`)."""
        if not self._open:
            raise ValueError(f"{self.operator}: this launch was closed")
        for name, array in zip(self.names, arrays):
            array.require_live(name)
        executor, tensors, owned = self._executor_for(arrays)
        hold.append((executor, tensors, owned))
        try:
            needed = executor.workspace_size
            if needed > workspace.nbytes:
                bigger = DeviceBuffer.take(memory_pool(self._device), needed, self._device)
                if bigger is None:
                    # The executor cannot wait for the pool's out-of-memory recovery, which
                    # synchronises streams, this one included: it is discarded (without
                    # aclDestroyAclOpExecutor, CANN keeps it) and the launch tried again.
                    raise _WorkspaceNeeded(needed)
                hold.append(bigger)
                self._workspace = workspace = bigger
            executor.launch_once(workspace.pointer, stream_handle)
        except BaseException:
            _discard(executor)  # unless phase 2 took it
            raise
        if self._read_shapes:
            self.view_shapes = [ll.get_view_shape(tensor.handle)
                                for tensor in tensors[-self._read_shapes:]]

    def _executor_for(self, arrays: Sequence[DeviceArray]
                      ) -> tuple[Executor, list[Handle], list[Any]]:
        """The pending executor when it was made for these addresses, else phase 1."""
        try:
            executor, tensors, owned, addresses = self._pending.pop()
        except IndexError:
            return _phase1(self._spec, self._c_attributes, arrays)
        if all(array.buffer.pointer == address for array, address in zip(arrays, addresses)):
            return executor, tensors, owned
        _discard(executor)
        _destroy(tensors, owned)
        return _phase1(self._spec, self._c_attributes, arrays)

    def retire(self) -> None:
        """Refuse launches from now on (one being queued is waited for, as above)."""
        self._open = False

    def close(self) -> None:
        """Retire, then release the pending executor and the workspace now; the caller
        has made sure no queued work uses them. Safe to call twice."""
        self._open = False
        while self._pending:
            try:
                executor, tensors, owned, _ = self._pending.pop()
            except IndexError:
                break
            _discard(executor)
            _destroy(tensors, owned)
        self._workspace.free()

    def __reduce__(self) -> NoReturn:
        raise TypeError("a launch cannot be pickled: it holds CANN executors of this process")


Launch = Union[RepeatableLaunch, OneShotLaunch]
