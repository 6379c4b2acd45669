"""Streams and events: the queues of device work and the markers in them.

Each device has one default stream, created on first use; ``with stream:`` makes a
stream the calling thread's current one. :class:`Stream` and :class:`Event` each own
one C resource and release it deterministically (``close``/``destroy``, context
managers); as they need their device current, their safety net is a
``weakref.finalize`` that does nothing once the runtime is torn down.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import threading
import weakref
from collections.abc import Sequence
from typing import Any, Callable, NoReturn

from .._c import kernel_calls
from .._c import lowlevel as ll
from .._c.lowlevel import interrupted as _interrupted
from ..errors import AclError
from .process import _process, _thread, activate, alive, logger, on_teardown

# Finaliser bodies that ran inside a kernel, where aclnn_py calls are refused: done at the
# next safe point (release_dropped_streams).
_deferred: list[tuple[Any, ...]] = []

_SLOW = ll.SLOW  # what the calls without the stream's lock return when they declined

# What a launch's executor uses (executor, aclTensors, workspace), by a weak reference to the
# launch, with its ``ll.RelaunchRecord`` (which knows the stream point of its last launch):
# a launch dropped while that launch may be queued keeps it here until the point passed,
# released at once when it is known done, else at a synchronisation or a fence found done
# (:func:`release_retired`). An entry leaves ``_owned_by`` only once released, so an
# interrupt anywhere leaves it for the next look (``empty_cache()`` looks at every one).
_owned_by: dict[weakref.ref[Any], tuple[Any, Any]] = {}
_dropped: list[weakref.ref[Any]] = []


def _launch_dropped(ref: weakref.ref[Any]) -> None:
    _dropped.append(ref)
    release_retired()


def keep_until_done(launch: Any, record: Any, owned: Any) -> weakref.ref[Any]:
    """Keep ``owned`` for ``launch`` until the last launch of ``record`` is done, once
    ``launch`` is dropped; returns the reference :func:`let_go` takes."""
    ref = weakref.ref(launch, _launch_dropped)
    _owned_by[ref] = (record, owned)
    return ref


def let_go(ref: weakref.ref[Any]) -> None:
    """The launch of ``ref`` releases what it uses itself (its work is done)."""
    _owned_by.pop(ref, None)


def release_retired() -> None:
    """Release what dropped launches used, once their last launch is done."""
    count = len(_dropped)
    if not count:
        return
    looked_at = _dropped[:count]
    pending = [ref for ref in looked_at
               if ref in _owned_by and not _owned_by[ref][0].done()]
    released = [_owned_by.pop(ref, None) for ref in looked_at if ref not in pending]
    del _dropped[:count]  # the callbacks only append: what was looked at comes first
    _dropped.extend(pending)
    del released  # released here, outside any lock


def _release_quietly(release: Callable[[Any], None], cell: Any, device: int | None,
                     generation: int, what: str) -> None:
    """Finalizer body: ``release`` the handle in ``cell`` (see ``ll.handle_cell``), if it
    holds one and the runtime still exists; log, never raise. Inside a kernel (a
    collection while it runs), deferred to the next safe point."""
    if kernel_calls.running() is not None:
        _deferred.append((release, cell, device, generation, what))
        return
    handle = cell[0]
    if handle == ll.NULL or not alive(generation):
        return
    try:
        if device is not None:
            activate(device)
        release(handle)
    except Exception:
        logger.exception("aclnn_py: releasing %s", what)


# Streams not destroyed yet, by key (the id of their handle's cell): (the stream, weakly;
# the cell; its device; its runtime generation; a list holding its pools' state once made).
# Whoever takes an entry destroys that stream; an entry left behind by an interrupted
# finaliser or close() is destroyed at the next safe point (:func:`release_dropped_streams`).
# The entry keeps the state: collecting it marks every point of the stream done, which is
# true only once the stream is destroyed (its work ran).
_undestroyed: dict[int, tuple[weakref.ref[Stream], Any, int, int, list[Any]]] = {}


def _destroy_stream(key: int) -> None:
    """Destroy the stream registered under ``key``, unless someone already took it.

    Taking the entry is a test, a read and a delete with no call between them, so neither
    an interrupt nor another thread can come in the middle; an interrupt before the
    destroy call puts the entry back, one after it (the only place left) does not."""
    if key not in _undestroyed:
        return
    entry = _undestroyed[key]
    del _undestroyed[key]
    destroying = False
    try:
        _, cell, device, generation, states = entry
        handle = cell[0]
        if handle == ll.NULL or not alive(generation):
            return  # never created, or gone with the runtime
        activate(device)
        # CANN's doc: synchronise before aclrtDestroyStream. A stream dropped with work
        # queued is waited for here (a failure ends that work too: nothing to report).
        ll.RT.aclrtSynchronizeStream(handle)
        if states:  # its work ran: blocks marked with it are free, its fence events go
            ll.stream_closed(states[0])  # (before the destroy: nothing is left after it)
        destroy = ll.RT.aclrtDestroyStream  # resolved before: its first lookup runs Python
        destroying = True
        status = destroy(handle)
    except BaseException:
        if not destroying:
            _undestroyed[key] = entry
        raise
    if _interrupted:  # a kernel of that work was interrupted (its work was dropped)
        ll.raise_interrupt()
    ll.check(status, "aclrtDestroyStream")


def _destroy_stream_quietly(key: int) -> None:
    """Finaliser of a stream: :func:`_destroy_stream`; logs, never raises. Inside a kernel
    (a collection while it runs), where aclnn_py calls are refused, the stream stays
    registered for the next safe point."""
    if kernel_calls.running() is not None:
        return
    try:
        _destroy_stream(key)
    except Exception:
        logger.exception("aclnn_py: releasing a stream")


def release_dropped_streams() -> bool:
    """Destroy the dropped streams whose release an interrupt cut short (a closed stream
    still referenced is finished by closing it again, or at exit), and release what
    finalisers left to a safe point (:func:`_release_quietly`). Returns whether there were
    any (their devices were made current)."""
    found = bool(_deferred)
    while _deferred:
        _release_quietly(*_deferred.pop())
    for key, (ref, *_) in list(_undestroyed.items()):
        if ref() is None:
            found = True
            _destroy_stream_quietly(key)
    return found


class Stream:
    """A queue of device work (``aclrtStream``) on one device.

    ``with stream:`` makes it the calling thread's current stream, which
    operators use when given no ``stream=``. :meth:`close` (or the garbage
    collector) releases it after waiting for its work.

    """

    def __init__(self, device: int | None = None) -> None:
        self.device = activate(device)
        if release_dropped_streams():
            activate(self.device)
        # Registered before the stream exists: an interrupt right after the creation, or in
        # the finaliser, leaves a handle that is still destroyed (release_dropped_streams).
        cell = ll.handle_cell("aclrtStream")
        self._key = id(cell)
        states: list[Any] = []
        _undestroyed[self._key] = (weakref.ref(self), cell, self.device, _process.generation,
                                   states)
        self._finalizer = weakref.finalize(self, _destroy_stream_quietly, self._key)
        self._finalizer.atexit = False  # at exit, teardown() releases streams in CANN's order
        self._start(ll.create_stream(cell), states)

    def _start(self, handle: Any, states: list[Any]) -> None:
        """Set up the bookkeeping of the stream ``handle`` (on ``self.device``, current);
        its pools' state joins ``states``."""
        self.handle = handle
        self.key = ll.address(self.handle)
        # The pools' record of this stream's progress (fences and points): blocks released
        # while its work may use them are reused in stream order (runtime.memory).
        self.state = ll.stream_state(self.handle, self.device)
        states.append(self.state)
        self._launching = ll.stream_launching_function()
        self._relaunching = ll.relaunch_run_function()
        self._sync_point = ll.stream_sync_point_function()
        self._synchronizing, self._runtime_synchronize = ll.stream_synchronize_functions()
        self._repeating_new = ll.repeat_new_function()
        self._repeating_again = ll.repeat_again_function()
        # The wait without the lock, as one call of no arguments (the per-call path).
        self._synchronizing_fast = functools.partial(ll.stream_synchronize_fast_function(),
                                                     self.state)
        self._done = ll.new_mark()
        # What queued work uses, oldest first; _released counts what was dropped from
        # the front, so a synchronisation drops only what was queued before it began, and
        # a fence found done drops what was queued before the fence.
        self._keepalive: list[Any] = []
        self._released = 0
        self._keepalive_lock = threading.Lock()
        self._state_lock = threading.RLock()  # closing against waiting
        self._closed = False
        _process.streams.add(self)

    @classmethod
    def from_handle(cls, handle: Any, device: int | None = None) -> Stream:
        """The stream of an ``aclrtStream`` someone else created (torch_npu, a C library):
        ``handle`` is its integer address (``torch.npu.Stream.npu_stream``, a ctypes
        ``c_void_p``'s ``value``), ``device`` the device it is on (default the current
        one). aclnn_py queues work on it and waits for it as on its own streams, but never
        destroys it: keep it alive while aclnn_py may use it. One object per handle."""
        return external_stream(handle, device)

    def synchronize(self) -> None:
        """Wait for all work queued on this stream (none once it is closed).

        With nothing held for queued work, one C call waits (``aclpyStreamSynchronizeFast``:
        it takes the point under the stream state's mutex, which launches and closing take
        too). Otherwise, or when that call declines (another device current, the stream
        closing, a launch being queued), under the stream's lock, so another thread cannot
        close the stream between the closed-check and the wait.
        """
        if not self._keepalive and not self._keepalive_lock.locked():
            # (a launch being queued under the lock is waited for as it always was, below)
            status = self._synchronizing_fast()
            if status != _SLOW:
                if status or _dropped or after_synchronize is not None:
                    self._after_wait(status)
                return
        with self._state_lock:
            if not self._closed:  # closing waited for its work
                self._wait()

    def holds_nothing(self) -> bool:
        """Whether nothing is held for queued work and no launch is being queued under the
        lock: a call that waits for its own work may then skip the lock (as
        :meth:`synchronize` does)."""
        return not self._keepalive and not self._keepalive_lock.locked()

    def waited(self, status: int) -> None:
        """After a wait that a C call made without the lock for its own work (the numpy
        path's staged call): what it let go of, and ``status`` checked."""
        if status or _dropped or after_synchronize is not None:
            self._after_wait(status)

    def _after_wait(self, status: int) -> None:
        """After a wait: what it let go of, and its status checked."""
        if _dropped:
            release_retired()
        hook = after_synchronize
        if hook is not None:
            hook(self.device)
        if status:
            ll.check(status, "aclrtSynchronizeStream")

    def _wait(self) -> None:
        activate(self.device)
        # Under the lock: a launch another thread is queuing right now (past its last
        # checks: a retired plan, a freed array) is queued before this wait begins.
        state = self.state
        lock = self._keepalive_lock
        with lock:
            mark = self._released + len(self._keepalive)  # as queued_mark()
            point = self._sync_point(state)
        # One call waits and records the point passed, even when the wait fails: a failed
        # sync ends the queued work too, so nothing is kept for it either way. Not in a
        # `finally`: an interrupt may come before the wait, and then the work is still
        # queued; what stays held goes at the next synchronisation.
        status = self._synchronizing(state, self._runtime_synchronize, self.handle, point)
        if mark > self._released:  # else nothing was held (_released only grows)
            with lock:  # as release_queued(mark)
                dropped = self._drop_held(mark)
            del dropped  # released outside the lock
        self._after_wait(status)

    def queue(self, hold: Any, launch: Callable[..., None], *arguments: Any) -> None:
        """``launch(*arguments)`` (which queues work on this stream), holding ``hold``
        until the work is known to be done: a synchronisation that began after it was
        queued, or a fence recorded after it found done.

        Holding and launching happen under the lock that synchronisations take their
        mark under (and that closing takes to mark the stream closed), so no
        synchronisation can count the hold without the work, and nothing is queued on
        a closing stream. The hold comes first, so an interrupt never leaves queued
        work unheld. ``launch`` raises ValueError or AclError only before its work is
        queued; the hold is then dropped.
        """
        dropped = None
        with self._keepalive_lock:
            done = self._hold(hold)
            try:
                launch(*arguments)
            except (AclError, ValueError):  # nothing was queued, nothing needs holding
                self._unhold()
                raise
            ll.stream_launched(self.state)
            if done > self._released:
                dropped = self._drop_held(done)
        del dropped  # released outside the lock
        if done >= 0 and _dropped:
            release_retired()

    def relaunch(self, hold: Any, arrays: Sequence[Any], launch: Any) -> None:
        """A repeatable executor relaunched on this stream in one C call
        (``aclpyRelaunchRun``): the addresses of ``arrays`` that changed are rebound, the
        launch is counted and queued, holding ``hold`` (None: nothing) as :meth:`queue`
        does. ``launch`` gives ``operator``, ``names`` and ``record`` (an
        ``ll.RelaunchRecord``, retired once the launch is closed), all read under the lock:
        an array freed, or a launch retired, by another thread is refused here or waited
        for by the synchronisation that follows it. A failed rebind or launch queues
        nothing and is raised. The record relaunches without the lock
        (``aclpyRelaunchFast``) no more until :meth:`allow_fast` says so again."""
        dropped = None
        with self._keepalive_lock:
            if self._closed:
                raise ValueError("stream is closed: work cannot be queued on it")
            record = launch.record
            if record is None:
                raise ValueError(f"{launch.operator}: this launch was closed")
            cells = record.next
            for index, array in enumerate(arrays):
                pointer = array.buffer.pointer
                if pointer is None:
                    array.require_live(launch.names[index])  # raises
                cells[index] = pointer
            keepalive = self._keepalive
            mark = self._released + len(keepalive)
            if hold is not None:
                keepalive.append(hold)  # first: an interrupt never leaves queued work unheld
            done = self._done
            status = self._relaunching(record.record, self.state, mark, done, self.handle)
            if status:  # nothing was queued, and the launch is not counted
                if hold is not None:
                    keepalive.pop()
                if status == ll.RELAUNCH_RETIRED:
                    raise ValueError(f"{launch.operator}: this launch was closed")
                ll.check(status, record.failed(launch.operator))
            record.allow_fast(self.state, 0)
            if done[0] > self._released:
                dropped = self._drop_held(done[0])
        del dropped  # released outside the lock
        if done[0] >= 0 and _dropped:
            release_retired()
        if _interrupted:  # a fence's work run here was interrupted (see _hold): it is
            ll.raise_interrupt()  # raised once the launch is queued and held

    def allow_fast(self, launch: Any, arrays: Sequence[Any], epoch: int,
                   bind: Callable[[Any], None]) -> None:
        """``bind(arrays)`` (the caller now holds them), then let ``launch``'s record relaunch
        without the lock (``aclpyRelaunchFast``) while the placement epoch is ``epoch``, if
        its last launch was over ``arrays``: both under the lock that launches rebind under,
        so a launch over other arrays by another thread comes wholly before (and the
        addresses differ) or after (and it turns the fast relaunch off again)."""
        with self._keepalive_lock:
            bind(arrays)
            record = launch.record
            if record is None:
                return
            cells = record.next
            if all(cells[index] == array.buffer.pointer for index, array in enumerate(arrays)):
                record.allow_fast(self.state, epoch)

    def repeat(self, launch: Any, repeat: ll.RepeatRecord, block: Any = None) -> bool:
        """Relaunch ``launch`` as ``repeat`` says, over arrays an earlier launch marked as used
        on this stream (the one of the record's state), without the stream's lock: with
        ``block`` (an empty one; the record made with a pool), into a new output that the
        same C call takes from that pool into the block (``aclpyRepeatNew``); else over the
        record's addresses of every array, inputs then outputs (``aclpyRepeatAgain``). False
        when it declines (nothing queued: the pool could not give the block at once, which
        then stays empty, or an array may have been freed or moved since, the stream is
        closing, a launch is under way under the lock); the caller then takes
        :meth:`relaunch`."""
        status = self._repeating_again(repeat.repeat) if block is None else \
            self._repeating_new(repeat.repeat, block)
        if status:
            return self._unlocked(status, launch, repeat)
        if _interrupted:  # a fence's work run here was interrupted: raised once queued
            ll.raise_interrupt()
        return True

    def _unlocked(self, status: int, launch: Any, repeat: ll.RepeatRecord) -> bool:
        """What a nonzero ``status`` of a relaunch without the lock means: False when it
        declined; True when it launched and found fences done (up to ``repeat.done[0]``);
        else the error: a closed launch, or CANN's status naming the call."""
        if status == _SLOW:
            return False
        if status == ll.LAUNCHED_FENCE_DONE:
            self.fences_done(repeat.done[0])
            if _interrupted:  # a fence's work run here was interrupted: raised once queued
                ll.raise_interrupt()
            return True
        if status == ll.RELAUNCH_RETIRED:
            raise ValueError(f"{launch.operator}: this launch was closed")
        ll.check(status, launch.record.failed(launch.operator))
        raise AssertionError("unreachable: ll.check raises for a nonzero status")

    def fences_done(self, mark: int) -> None:
        """A launch made without the lock found fences done: drop what was held before
        ``mark`` and release what launches let go of since."""
        if mark > self._released:
            self.release_queued(mark)
        if _dropped:
            release_retired()

    def queue_steps(self, hold: Any, *steps: tuple[Callable[..., None], tuple[Any, ...]] | None
                    ) -> None:
        """Queue several pieces of work in order, each ``(function, arguments)`` (None
        skipped), under one hold, as :meth:`queue` does for one.

        When a step fails (ValueError or AclError, raised before its own work was
        queued), the hold is dropped if nothing was queued yet; otherwise the stream is
        waited for first, so that the work already queued runs (or is dropped by a
        failing wait) and nothing stays queued behind the error. Then the error is raised.
        """
        queued = False
        dropped = None
        try:
            with self._keepalive_lock:
                done = self._hold(hold)
                try:
                    for step in steps:
                        if step is not None:
                            function, arguments = step
                            function(*arguments)
                            queued = True
                except (AclError, ValueError):
                    if not queued:
                        self._unhold()
                    else:
                        ll.stream_launched(self.state)
                    raise
                ll.stream_launched(self.state)
                if done > self._released:
                    dropped = self._drop_held(done)
        except (AclError, ValueError):
            if queued:
                with contextlib.suppress(AclError):  # the error raised is the one to report
                    self.synchronize()
            raise
        del dropped

    def _hold(self, hold: Any) -> int:
        """With the lock held: refuse a closed stream, count the launch about to be queued
        and hold ``hold`` for it; returns the mark the pools' last sync point reached."""
        if self._closed:
            raise ValueError("stream is closed: work cannot be queued on it")
        keepalive = self._keepalive
        done: int = self._launching(self.state, self._released + len(keepalive))
        if _interrupted and ll.interrupt_pending():
            # The fence it records (or looks at) ran the stream's oldest work, and a kernel
            # of it was interrupted: the stream's work was dropped, the interrupt is raised
            # here, nothing is queued.
            ll.stream_uncount(self.state)
            ll.raise_interrupt()
        keepalive.append(hold)
        return done

    def _unhold(self) -> None:
        """With the lock held: undo :meth:`_hold` for a launch that queued nothing."""
        self._keepalive.pop()
        ll.stream_uncount(self.state)

    def queued_mark(self) -> int:
        """A mark after everything held so far, for :meth:`release_queued` (taken under the
        lock, so a launch being queued is counted and queued first)."""
        with self._keepalive_lock:
            return self._released + len(self._keepalive)

    def queued_marks(self) -> tuple[int, int]:
        """:meth:`queued_mark` and the pools' point of the same moment, for a wait on the
        whole device."""
        with self._keepalive_lock:
            return self._released + len(self._keepalive), ll.stream_sync_point(self.state)

    def release_queued(self, mark: int) -> None:
        """Drop what was held before ``mark``: the work that used it is done. Whatever
        other threads queued since stays held."""
        with self._keepalive_lock:
            dropped = self._drop_held(mark)
        del dropped  # released outside the lock

    def _drop_held(self, mark: int) -> list[Any] | None:
        """Take what was held before ``mark`` out of the list, the lock held; the caller
        drops the returned list once the lock is released."""
        count = mark - self._released
        if count <= 0:
            return None
        keepalive = self._keepalive
        # Count first: interrupted between the two, later marks err towards holding.
        self._released += count
        if count == len(keepalive):  # the usual case: everything held so far
            self._keepalive = []
            return keepalive
        dropped = keepalive[:count]
        del keepalive[:count]
        return dropped

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Wait for the stream's work and release it. Safe to call twice, and from any
        thread while others wait on the stream; closing again finishes a close that an
        interrupt cut short."""
        with self._state_lock:
            if self._closed and self._key not in _undestroyed:
                return
            waited = False
            try:  # entered before the stream counts as closed: an interrupt cannot skip it
                with self._keepalive_lock:  # from here on nothing more is queued
                    self._closed = True
                ll.stream_close(self.state)  # nor launched or waited for without the lock
                self._wait()  # CANN's doc: synchronise before aclrtDestroyStream
                waited = True
            finally:
                if self._closed and not waited:  # interrupted before or in the wait
                    with contextlib.suppress(AclError):
                        self._wait()
                if self._closed:  # the destroy happens once, whoever else tries it
                    self._finalizer.detach()
                    activate(self.device)
                    ll.stream_closed(self.state)  # its fence events go with it
                    try:
                        _destroy_stream(self._key)
                    finally:
                        with self._keepalive_lock:
                            self._keepalive.clear()
                        release_caches(self)
                        release_retired()  # what launches on it let go of

    destroy = close

    def __enter__(self) -> Stream:
        stack = getattr(_thread, "streams", None)
        if stack is None:
            stack = _thread.streams = []
        stack.append(self)
        _thread.current = None
        return self

    def __exit__(self, *exc_info: object) -> None:
        stack = _thread.streams
        if stack and stack[-1] is self:
            stack.pop()
        elif self in stack:  # an earlier exit was interrupted before it could pop
            del stack[len(stack) - 1 - stack[::-1].index(self):]
        _thread.current = None

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Stream cannot be pickled or copied: it is a CANN stream of this "
                        "process")

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"0x{self.key:x}"
        return f"<aclnn_py.Stream device={self.device} {state}>"


class ExternalStream(Stream):
    """A stream aclnn_py did not create (:meth:`Stream.from_handle`): used and waited for
    like its own, never destroyed. :meth:`close` waits for its work and forgets it."""

    def __init__(self, address: int, device: int) -> None:
        self.device = activate(device)
        self._key = -address  # no entry in _undestroyed: nothing of it is destroyed here
        self._start(ll.pointer_at(address), [])

    def close(self) -> None:
        with self._state_lock:
            if self._closed:
                return
            with self._keepalive_lock:
                self._closed = True
            try:
                ll.stream_close(self.state)
                self._wait()
            finally:
                activate(self.device)
                ll.stream_closed(self.state)
                with self._keepalive_lock:
                    self._keepalive.clear()
                _external.pop((self.device, self.key), None)
                release_caches(self)

    destroy = close

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"0x{self.key:x}"
        return f"<aclnn_py.Stream device={self.device} {state}, not aclnn_py's>"


# The external streams by (device, handle address), for this runtime generation.
_external: dict[tuple[int, int], ExternalStream] = {}


def external_stream(handle: Any, device: int | None = None) -> ExternalStream:
    """The :class:`ExternalStream` of ``handle`` (an integer address) on ``device``."""
    try:
        address = operator.index(handle)
    except TypeError:
        raise TypeError(f"handle must be the int address of an aclrtStream, got "
                        f"{type(handle).__name__}") from None
    if address <= 0:
        raise ValueError(f"handle must be the address of an aclrtStream, got {address}; the "
                         "default stream (NULL) cannot be queued on with a hold")
    device = activate(device)
    found = _external.get((device, address))
    if found is None or found.closed:
        with _process.lock:
            found = _external.get((device, address))
            if found is None or found.closed:
                found = _external[(device, address)] = ExternalStream(address, device)
    return found


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


def current_stream(device: int | None = None) -> Stream:
    """The stream of the innermost ``with stream:`` in this thread, else the default stream.

    With ``device`` given, that device's: the innermost ``with`` stream if it is
    on ``device``, else the device's default stream. The device is made current.
    """
    # (generation, device, stream): what device=None gives while that device is current
    cached = getattr(_thread, "current", None)
    if cached is not None and cached[0] == _process.generation \
            and (device is None or device == cached[1]):
        found: Stream = cached[2]
        return found
    stack = getattr(_thread, "streams", None)
    stream: Stream
    if stack and (device is None or stack[-1].device == device):
        stream = stack[-1]
        activate(stream.device)
    else:
        stream = default_stream(device)
    if not stack or stream is stack[-1]:
        _thread.current = (_process.generation, stream.device, stream)
    return stream


def innermost_stream() -> Stream | None:
    """The stream of the innermost ``with stream:`` in this thread (None outside any), without
    making a device current."""
    stack = getattr(_thread, "streams", None)
    return stack[-1] if stack else None


def is_torch_stream(value: Any) -> bool:
    """Whether ``value`` is a torch NPU stream (it has an ``npu_stream`` handle)."""
    return hasattr(type(value), "npu_stream")  # the type: reading the attribute flushes


def torch_stream(value: Any) -> ExternalStream:
    """The stream of the torch NPU stream ``value``, by its ``npu_stream`` handle (reading
    it empties torch_npu's task queue of that stream: ``runtime.npu_tensors``)."""
    device = getattr(value, "device_index", None)
    if device is None:
        device = getattr(getattr(value, "device", None), "index", None)
    return external_stream(int(value.npu_stream), None if device is None else int(device))


def resolve_stream(stream: Any) -> Stream:
    """``stream`` (an aclnn_py Stream, a torch NPU stream, or None for the current stream)
    made ready for use."""
    if stream is None:
        return current_stream()
    found: Stream
    if isinstance(stream, Stream):
        found = stream
    elif is_torch_stream(stream):
        found = torch_stream(stream)
    else:
        raise TypeError(f"stream must be an aclnn_py.Stream, a torch NPU stream or None, got "
                        f"{type(stream).__name__}")
    if found.closed:
        raise ValueError("stream is closed")
    activate(found.device)
    return found


def streams(device: int | None = None) -> list[Stream]:
    """The live streams (of ``device``, when given)."""
    return [s for s in _process.streams.snapshot() if device is None or s.device == device]


def on_release_caches(hook: Callable[[Stream], None]) -> None:
    """Have ``hook(stream)`` drop what a higher layer caches for ``stream`` (the launch
    cache does): called when the stream closes, by ``empty_cache()`` and at teardown."""
    _process.cache_hooks.append(hook)


def release_caches(stream: Stream) -> None:
    """Drop what higher layers cache for ``stream``; queued work keeps what it uses."""
    for hook in _process.cache_hooks:
        try:
            hook(stream)
        except Exception:
            logger.exception("aclnn_py: releasing the caches of %r", stream)
    # What they dropped, once its work is done (and what an interrupt left behind).
    _dropped.extend(ref for ref in list(_owned_by) if ref() is None and ref not in _dropped)
    release_retired()


def synchronize_device(device: int) -> None:
    """Wait for all work on ``device`` and drop what its streams held for it (and destroy
    streams an interrupt left undestroyed)."""
    release_dropped_streams()
    activate(device)
    marks = [(stream, *stream.queued_marks()) for stream in _process.streams.snapshot()
             if stream.device == device]
    try:
        ll.synchronize_device()
    except AclError:  # the queued work ended with the failure
        _release_marks(marks)
        raise
    _release_marks(marks)  # not on an interrupt: the work may still be queued


def _release_marks(marks: list[tuple[Stream, int, int]]) -> None:
    for stream, mark, point in marks:
        ll.stream_synced(stream.state, point)
        stream.release_queued(mark)
    if _dropped:
        release_retired()
    if marks:
        _synchronized(marks[0][0].device)


# Called with a device once a synchronisation passed points of its streams; the pools
# without caching (ACLNN_PY_POOL=0, runtime.memory) set it to give blocks that waited for those
# points back to CANN then, not only at their next allocation.
after_synchronize: Callable[[int], None] | None = None


def _synchronized(device: int) -> None:
    hook = after_synchronize
    if hook is not None:
        hook(device)


def synchronize(stream: Stream | None = None) -> None:
    """Wait for the work of ``stream`` (default: the calling thread's current stream)."""
    if stream is None:  # current_stream()'s usual case, inline (the per-call path)
        cached = getattr(_thread, "current", None)
        found = cached[2] if cached is not None and cached[0] == _process.generation \
            else current_stream()
    else:
        found = resolve_stream(stream)
    found.synchronize()


class Event:
    """A marker in a stream's work (``aclrtEvent``), for ordering and timing."""

    def __init__(self, device: int | None = None) -> None:
        self.device = activate(device)
        cell = ll.handle_cell("aclrtEvent")  # as for streams: the finaliser comes first
        self._finalizer = weakref.finalize(self, _release_quietly, ll.destroy_event, cell,
                                           self.device, _process.generation, "an event")
        self._finalizer.atexit = False  # at exit, the device resets release events
        self.handle = ll.create_event(cell)

    def record(self, stream: Stream | None = None) -> Event:
        """Mark the current end of ``stream``'s queued work (a stream of the event's
        device; default: that device's current stream)."""
        stream = current_stream(self.device) if stream is None else resolve_stream(stream)
        if stream.device != self.device:
            raise ValueError(f"stream is on device {stream.device} but the event is on "
                             f"device {self.device}")
        ll.record_event(self.handle, stream.handle)
        return self

    def synchronize(self) -> None:
        """Wait until the work before the recorded point is done."""
        activate(self.device)
        ll.synchronize_event(self.handle)

    def elapsed_ms(self, end: Event) -> float:
        """Milliseconds from this event to ``end`` (both recorded and completed)."""
        activate(self.device)
        return ll.event_elapsed_time(self.handle, end.handle)

    def close(self) -> None:
        if self._finalizer.detach() is not None:
            activate(self.device)
            ll.destroy_event(self.handle)

    def __reduce__(self) -> NoReturn:
        raise TypeError("an Event cannot be pickled or copied: it is a CANN event of this "
                        "process")

    def __repr__(self) -> str:
        state = "closed" if not self._finalizer.alive else f"0x{ll.address(self.handle):x}"
        return f"<aclnn_py.Event device={self.device} {state}>"

    def __enter__(self) -> Event:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _release_stream_caches() -> None:
    """Teardown: destroy dropped streams, then drop what is cached for each live one."""
    release_dropped_streams()
    for stream in _process.streams.snapshot():
        release_caches(stream)


on_teardown(_release_stream_caches, streams=True)


# The classes a stream argument may have on the per-call paths (checked by exact type).
STREAM_TYPES = frozenset((Stream, ExternalStream))
