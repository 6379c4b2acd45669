"""Process and thread state of the CANN runtime, and the objects that own device resources.

* The process is initialised lazily (``aclInit``) and torn down at exit in
  CANN's documented order: streams, devices, then aclnn_py's own ``aclInit``
  given back (:func:`teardown`: other ACL users in the process keep theirs).
* A device is set once per process (``aclrtSetDevice``); every other thread
  that touches it binds the context that made current (:func:`activate`).
  Each device has one default stream, created on first use.
* :class:`Stream`, :class:`Event`, :class:`AclTensor` and :class:`Executor`
  each own one C resource (device memory is owned in ``_memory``) and release it
  deterministically (``free``/``destroy``/``close``, context managers). Their
  safety nets do nothing once the runtime is torn down: aclTensors and executors
  sit in an ``aclpyHandle`` of the host library, destroyed in C when collected
  (no Python code, so no lock or interrupt can get in the way); streams and
  events, which need their device current, keep a ``weakref.finalize``.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import os
import threading
import weakref
from collections.abc import Sequence
from typing import Any, Callable, NoReturn

import numpy as np

from .._c import lowlevel as ll
from ..errors import AclError

logger = logging.getLogger("aclnn_py")

VISIBLE_DEVICES = "ASCEND_RT_VISIBLE_DEVICES"


class _Process:
    """Process-wide runtime state, guarded by ``lock``."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.initialized = False
        # Bumped by every teardown: resources of an older generation are already gone.
        self.generation = 0
        self.device_count = 0
        self.visible_devices: str | None = None
        self.soc_name: str | None = None
        # Whether our aclInit started ACL (0), rather than joining another user's (100002).
        self.owns_init = False
        # Our aclrtSetDevice calls per device, each reset at teardown, and the context the
        # first one made current: other threads bind it instead of setting the device again.
        self.set_counts: dict[int, int] = {}
        self.contexts: dict[int, Any] = {}
        self.default_streams: dict[int, Stream] = {}
        self.streams: weakref.WeakSet[Stream] = weakref.WeakSet()
        self.atexit_registered = False
        # Called first at teardown, while devices are still set (e.g. the memory pool).
        self.teardown_hooks: list[Callable[[], None]] = []
        self.cache_hooks: list[Callable[[Stream], None]] = []


_process = _Process()
_thread = threading.local()


def ensure_initialized() -> None:
    """aclInit once per process (a repeat by someone else counts as success)."""
    if _process.initialized:
        return
    with _process.lock:
        if _process.initialized:
            return
        owns_init = ll.init()
        try:
            # Where CANN checks ASCEND_RT_VISIBLE_DEVICES: aclInit succeeds whatever it says.
            _process.device_count = ll.get_device_count()
        except AclError:
            _give_back_failed_init(owns_init)
            raise
        _process.owns_init = owns_init
        _process.visible_devices = os.environ.get(VISIBLE_DEVICES)
        _process.initialized = True
        if not _process.atexit_registered:
            atexit.register(teardown)
            _process.atexit_registered = True


def _give_back_failed_init(owns_init: bool) -> None:
    _process.owns_init = owns_init
    try:
        _finalize()
    except AclError:
        logger.exception("aclnn_py: giving back aclInit after a failed start")
    finally:
        _process.owns_init = False


def device_count() -> int:
    ensure_initialized()
    return _process.device_count


def visible_devices() -> str | None:
    """``ASCEND_RT_VISIBLE_DEVICES`` as it was when aclnn_py initialised ACL (None: unset)."""
    ensure_initialized()
    return _process.visible_devices


def device_ids(device: int) -> tuple[int | None, int | None]:
    """The logical id (what ``ASCEND_RT_VISIBLE_DEVICES`` names) and the physical id of
    visible device ``device``; None where the runtime does not expose them (CANN < 8.5)."""
    ensure_initialized()
    if not 0 <= device < _process.device_count:
        raise ValueError(f"device must be in [0, {_process.device_count}), got {device}")
    return ll.logical_device_id(device), ll.physical_device_id(device)


def soc_name() -> str | None:
    """``aclrtGetSocName()`` (the SoC of device 0), read once per process."""
    ensure_initialized()
    if _process.soc_name is None:
        _process.soc_name = ll.get_soc_name() or ""
    return _process.soc_name or None


def activate(device: int | None = None) -> int:
    """Make ``device`` (default: this thread's current device, else 0) current here."""
    state = getattr(_thread, "state", None)
    if state is not None and (device is None or device == state[1]) \
            and state[0] == _process.generation and _process.initialized:
        current: int = state[1]
        return current
    return _activate(device)


def _activate(device: int | None) -> int:
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
    _bind_device(device)
    ll.note_thread_device(device)
    _thread.state = (_process.generation, device)
    _thread.current = None  # the cached current stream belonged to the previous device
    return device


def _bind_device(device: int) -> None:
    """Make ``device`` current in this thread, setting it once per process.

    ``aclrtSetDevice`` is counted by CANN per call, and every count must be matched by an
    ``aclrtResetDevice`` before the device is released, for every user of ACL in the
    process. So the first activation sets the device and keeps the context it made
    current (the device's default context); later ones, in any thread, bind that context
    with ``aclrtSetCurrentContext``, which also switches the thread's device (hicann/runtime
    docs/zh/api_ref/05_context_management.md, aclrtSetCurrentContext: a context may be
    used from other threads; it must not be one whose device was reset).
    """
    context = _process.contexts.get(device)
    if context is not None:
        ll.set_current_context(context)
        return
    with _process.lock:
        context = _process.contexts.get(device)
        if context is not None:
            ll.set_current_context(context)
            return
        ll.set_device(device)
        _process.set_counts[device] = _process.set_counts.get(device, 0) + 1
        _process.contexts[device] = ll.get_current_context()


def on_teardown(hook: Callable[[], None]) -> None:
    """Run ``hook`` at teardown, before streams and devices are released."""
    _process.teardown_hooks.append(hook)


def alive(generation: int) -> bool:
    """Whether resources made in runtime ``generation`` still exist (no teardown since)."""
    return _process.initialized and _process.generation == generation


def generation() -> int:
    return _process.generation


def teardown() -> None:
    """Release what aclnn_py holds (caches, pools, default streams), reset the devices it
    set, and give back its ``aclInit``. Safe to call twice; registered with ``atexit``.

    ACL is shared by everyone in the process (torch_npu, MindSpore, other bindings), so
    aclnn_py ends only its own part. CANN counts ``aclInit`` calls, a repeat included
    (which returns 100002), but one ``aclFinalize`` de-initialises for every user at once;
    ``aclFinalizeReference`` (CANN >= 8.5) takes away one count and de-initialises only at
    zero (hicann/runtime src/acl/aclrt_impl/acl.cpp, docs/zh/api_ref/
    02_initialization_and_deinitialization.md). So: ``aclFinalizeReference`` where the
    runtime has it; else ``aclFinalize`` only when aclnn_py's own ``aclInit`` started ACL;
    else nothing. Devices are reset exactly as often as aclnn_py set them. When another
    user already de-initialised ACL, the remaining steps are skipped without a word.
    """
    with _process.lock:
        if not _process.initialized:
            return
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("releasing dropped streams", release_dropped_streams)]
        for stream in list(_process.streams):  # what caches keep goes before pools and devices
            steps.append(("releasing the caches of a stream", functools.partial(
                release_caches, stream)))
        for hook in _process.teardown_hooks:
            steps.append((f"teardown hook {hook!r}", hook))
        for stream in list(_process.streams):  # the default ones and any still alive
            steps.append((f"releasing {stream!r}", stream.close))
        for device, count in _process.set_counts.items():
            steps.extend((f"aclrtResetDevice({device})", functools.partial(ll.reset_device, device))
                         for _ in range(count))
        steps.append(("giving back aclInit", _finalize))
        try:
            for what, step in steps:
                try:
                    step()
                except AclError as error:
                    if error.status in _ACL_ENDED:
                        logger.debug("aclnn_py teardown: ACL was already de-initialised by "
                                     "another user in this process (%s)", error)
                        break
                    logger.exception("aclnn_py teardown: %s", what)
                except Exception:  # teardown must go on
                    logger.exception("aclnn_py teardown: %s", what)
        finally:
            ll.handles_abandon()  # aclTensors and executors still owned are gone with ACL
            _process.default_streams.clear()
            _process.set_counts.clear()
            _process.contexts.clear()
            _process.initialized = False
            _process.owns_init = False
            _process.generation += 1


# What calls return once ACL was de-initialised under aclnn_py (another user's aclFinalize).
_ACL_ENDED = (ll.constant("ACL_ERROR_UNINITIALIZE"), ll.constant("ACL_ERROR_REPEAT_FINALIZE"))


def _finalize() -> None:
    if ll.finalize_reference() is None and _process.owns_init:
        ll.finalize()


# ---- streams and events -----------------------------------------------------


def _release_quietly(release: Callable[[Any], None], cell: Any, device: int | None,
                     generation: int, what: str) -> None:
    """Finalizer body: ``release`` the handle in ``cell`` (see ``ll.handle_cell``), if it
    holds one and the runtime still exists; log, never raise."""
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
        destroy = ll.RT.aclrtDestroyStream  # resolved before: its first lookup runs Python
        destroying = True
        status = destroy(handle)
    except BaseException:
        if not destroying:
            _undestroyed[key] = entry
        raise
    if states:  # its work ran: blocks marked with it are free, its fence events go too
        ll.stream_closed(states[0])
    ll.check(status, "aclrtDestroyStream")


def _destroy_stream_quietly(key: int) -> None:
    """Finaliser of a stream: :func:`_destroy_stream`; logs, never raises."""
    try:
        _destroy_stream(key)
    except Exception:
        logger.exception("aclnn_py: releasing a stream")


def release_dropped_streams() -> bool:
    """Destroy the dropped streams whose release an interrupt cut short (a closed stream
    still referenced is finished by closing it again, or at exit). Returns whether there
    were any (their devices were made current)."""
    found = False
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
        self.handle = ll.create_stream(cell)
        self.key = ll.address(self.handle)
        # The pools' record of this stream's progress (fences and points): blocks released
        # while its work may use them are reused in stream order (_memory).
        self.state = ll.stream_state(self.handle, self.device)
        states.append(self.state)
        self._launching = ll.stream_launching_function()
        # What queued work uses, oldest first; _released counts what was dropped from
        # the front, so a synchronisation drops only what was queued before it began, and
        # a fence found done drops what was queued before the fence.
        self._keepalive: list[Any] = []
        self._released = 0
        self._keepalive_lock = threading.Lock()
        self._state_lock = threading.RLock()  # closing against waiting
        self._closed = False
        _process.streams.add(self)

    def synchronize(self) -> None:
        """Wait for all work queued on this stream (none once it is closed).

        Under the stream's lock, so another thread cannot close the stream between
        the closed-check and the wait.
        """
        with self._state_lock:
            if not self._closed:  # closing waited for its work
                self._wait()

    def _wait(self) -> None:
        activate(self.device)
        # Under the lock: a launch another thread is queuing right now (past its last
        # checks: a retired plan, a freed array) is queued before this wait begins.
        with self._keepalive_lock:
            mark = self._released + len(self._keepalive)  # as queued_mark()
            point = ll.stream_sync_point(self.state)
        try:
            ll.synchronize_stream(self.handle)
        except AclError:  # a failed sync ends the queued work too: nothing to keep for it
            ll.stream_synced(self.state, point)
            self.release_queued(mark)
            _synchronized(self.device)
            raise
        # Not in a `finally`: an interrupt may have come before the wait, and then the
        # work is still queued. What stays held goes at the next synchronisation.
        ll.stream_synced(self.state, point)
        if mark > self._released:  # else nothing was held (_released only grows)
            self.release_queued(mark)
        _synchronized(self.device)

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
            if self._closed:
                raise ValueError("stream is closed: work cannot be queued on it")
            keepalive = self._keepalive
            done = self._launching(self.state, self._released + len(keepalive))
            keepalive.append(hold)
            try:
                launch(*arguments)
            except (AclError, ValueError):  # nothing was queued, nothing needs holding
                keepalive.pop()
                ll.stream_uncount(self.state)
                raise
            if done > self._released:
                dropped = self._drop_held(done)
        del dropped  # released outside the lock

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
                if self._closed:
                    raise ValueError("stream is closed: work cannot be queued on it")
                keepalive = self._keepalive
                done = self._launching(self.state, self._released + len(keepalive))
                keepalive.append(hold)
                try:
                    for step in steps:
                        if step is not None:
                            function, arguments = step
                            function(*arguments)
                            queued = True
                except (AclError, ValueError):
                    if not queued:
                        keepalive.pop()
                        ll.stream_uncount(self.state)
                    raise
                if done > self._released:
                    dropped = self._drop_held(done)
        except (AclError, ValueError):
            if queued:
                with contextlib.suppress(AclError):  # the error raised is the one to report
                    self.synchronize()
            raise
        del dropped

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


def resolve_stream(stream: Stream | None) -> Stream:
    """``stream`` made ready for use, or the current stream when None."""
    if stream is None:
        return current_stream()
    if not isinstance(stream, Stream):
        raise TypeError(f"stream must be an aclnn_py.Stream or None, got {type(stream).__name__}")
    if stream.closed:
        raise ValueError("stream is closed")
    activate(stream.device)
    return stream


def streams(device: int | None = None) -> list[Stream]:
    """The live streams (of ``device``, when given)."""
    return [s for s in list(_process.streams) if device is None or s.device == device]


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


def synchronize_device(device: int) -> None:
    """Wait for all work on ``device`` and drop what its streams held for it (and destroy
    streams an interrupt left undestroyed)."""
    release_dropped_streams()
    activate(device)
    marks = [(stream, *stream.queued_marks()) for stream in list(_process.streams)
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
    if marks:
        _synchronized(marks[0][0].device)


# Called with a device once a synchronisation passed points of its streams; the pools
# without caching (ACLNN_PY_POOL=0, _memory) set it to give blocks that waited for those
# points back to CANN then, not only at their next allocation.
after_synchronize: Callable[[int], None] | None = None


def _synchronized(device: int) -> None:
    hook = after_synchronize
    if hook is not None:
        hook(device)


def synchronize(stream: Stream | None = None) -> None:
    """Wait for the work of ``stream`` (default: the calling thread's current stream)."""
    (current_stream() if stream is None else resolve_stream(stream)).synchronize()


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


# ---- aclTensor descriptors -------------------------------------------------


class _HandleOwner:
    """Owns one CANN object through an ``aclpyHandle`` (``_owned``), which destroys it in C
    when the owner is collected without :meth:`destroy`; ``handle`` is the object."""

    __slots__ = ("handle", "_owned")
    handle: Any
    _owned: Any
    _destroy_api = ""  # the CANN function that destroys it

    def destroy(self) -> None:
        """Release the object now. Safe to call twice."""
        ll.handle_release(self._owned, self._destroy_api)


class AclTensor(_HandleOwner):
    """Owns one ``aclTensor`` descriptor (host-side; the data stays with its buffer).

    ``shape``, ``strides`` and ``offset`` count elements; the storage is described
    as one dimension of ``storage_size`` elements starting at ``data``. The
    descriptor is held by an ``aclpyHandle``, which destroys it in C when the
    object is collected without :meth:`destroy`.
    """

    __slots__ = ()
    _destroy_api = "aclDestroyTensor"

    def __init__(self, shape: tuple[int, ...], acl_dtype: int, strides: tuple[int, ...],
                 offset: int, storage_size: int, data: Any) -> None:
        owned = self._owned = ll.new_handle(ll.HANDLE_TENSOR)
        self.handle = ll.create_owned_tensor(owned, shape, acl_dtype, strides, offset,
                                             (storage_size,), data)

    def __enter__(self) -> AclTensor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.destroy()


class AclScalar(_HandleOwner):
    """Owns one ``aclScalar`` (a host value CANN copies at creation), destroyed in C
    when the object is collected without :meth:`destroy`."""

    __slots__ = ()
    _destroy_api = "aclDestroyScalar"

    def __init__(self, value: Any, acl_dtype: int) -> None:
        """``value``: a float for ACL_FLOAT / ACL_DOUBLE, else a one-element numpy array
        of the dtype."""
        owned = self._owned = ll.new_handle(ll.HANDLE_SCALAR)
        self.handle = ll.create_owned_scalar(owned, value, acl_dtype)


class AclIntArray(_HandleOwner):
    """Owns one ``aclIntArray`` (CANN copies the values), destroyed in C when the object
    is collected without :meth:`destroy`."""

    __slots__ = ()
    _destroy_api = "aclDestroyIntArray"

    def __init__(self, values: tuple[int, ...]) -> None:
        owned = self._owned = ll.new_handle(ll.HANDLE_INT_ARRAY)
        self.handle = ll.create_owned_int_array(owned, tuple(int(v) for v in values))


class AclFloatArray(_HandleOwner):
    """Owns one ``aclFloatArray`` (CANN copies the values, as C floats), destroyed in C when
    the object is collected without :meth:`destroy`."""

    __slots__ = ()
    _destroy_api = "aclDestroyFloatArray"

    def __init__(self, values: tuple[float, ...]) -> None:
        owned = self._owned = ll.new_handle(ll.HANDLE_FLOAT_ARRAY)
        self.handle = ll.create_owned_float_array(owned, tuple(float(v) for v in values))


class AclBoolArray(_HandleOwner):
    """Owns one ``aclBoolArray`` (CANN copies the values), destroyed in C when the object is
    collected without :meth:`destroy`."""

    __slots__ = ()
    _destroy_api = "aclDestroyBoolArray"

    def __init__(self, values: tuple[bool, ...]) -> None:
        owned = self._owned = ll.new_handle(ll.HANDLE_BOOL_ARRAY)
        self.handle = ll.create_owned_bool_array(owned, tuple(bool(v) for v in values))


class AclTensorList(_HandleOwner):
    """Owns one ``aclTensorList`` and, through it, its tensors: CANN's
    ``aclDestroyTensorList`` destroys the tensors of a list, so the :class:`AclTensor` objects
    given are emptied when the list is made (their :meth:`AclTensor.destroy` then does
    nothing). If the list cannot be made they keep their tensors."""

    __slots__ = ()
    _destroy_api = "aclDestroyTensorList"

    def __init__(self, tensors: Sequence[AclTensor]) -> None:
        owned = self._owned = ll.new_handle(ll.HANDLE_TENSOR_LIST)
        self.handle = ll.create_owned_tensor_list(owned, [tensor._owned for tensor in tensors])
        for tensor in tensors:
            tensor.handle = ll.NULL


class CString:
    """A NUL-terminated copy of a str for a ``const char *`` argument, kept as long as the
    executor that may read it."""

    __slots__ = ("handle",)

    def __init__(self, text: str) -> None:
        self.handle = ll.c_string(text)

    def destroy(self) -> None:
        """Nothing to release in CANN: the memory goes with this object."""


# ---- executors (the two-phase aclnn call) ----------------------------------


class Executor:
    """Owns the ``aclOpExecutor`` that phase 1 of ``operator`` returned.

    This class is the one place that encodes who owns an executor. We own it
    from phase 1 (CANN writes it straight into an ``aclpyHandle``, which
    destroys it in C if the object is collected). Then either:

    * :meth:`make_repeatable` succeeds: the executor stays ours across any number
      of launches (:attr:`launcher`) until :meth:`close` (or collection) destroys it;
    * or it does not (CANN refuses executors from its executor cache, among others,
      and CANN 8.0.RC2 lacks the API): :meth:`launch_once` hands it to phase 2, which
      frees it whether the launch succeeds or not. It is never launched or destroyed
      by us afterwards. One never launched is destroyed by :meth:`close`; without
      ``aclDestroyAclOpExecutor`` (8.0.RC2) it cannot be, which is why callers launch
      right after phase 1.
    """

    __slots__ = ("operator", "library", "device", "repeatable", "workspace_size", "handle",
                 "_launcher", "_keepalive", "_owned")

    def __init__(self, operator: str, *arguments: Any, keepalive: tuple[Any, ...] = (),
                 library: str = "") -> None:
        """Phase 1 of ``operator`` over the C ``arguments``; ``library``: where it was bound
        from (``ll.bind_operator``), "" for the operators of the loaded CANN libraries."""
        self.operator = operator
        self.library = library
        self.device = activate()
        self.repeatable = False
        self._launcher: Any = None
        # The executor refers to the aclTensors: until phase 2 returns, or for as long as
        # it lives when repeatable.
        self._keepalive = keepalive
        self._owned = ll.new_handle(ll.HANDLE_EXECUTOR)
        self.workspace_size, self.handle = ll.operator_workspace_size(
            operator, *arguments, owner=self._owned, library=library)

    def make_repeatable(self) -> bool:
        """Allow any number of launches (``aclSetAclOpExecutorRepeatable``); False when the
        loaded CANN lacks that API or refuses this executor, which stays a one-shot one.

        A refusal is an answer, not an error: CANN returns 561000 for an executor from its
        executor cache (the same operator and signature already ran non-repeatably in
        the process), for AI CPU kernels and same-address view copies (hicann/opbase
        ``acl_op_api.cpp``, ``op_cache.cpp``, docs ``aclSetAclOpExecutorRepeatable.md``);
        Huawei's ATB then launches the executor the ordinary way (hicann/ascend-
        transformer-boost ``src/atb/runner/aclnn_runner.cpp``), as aclnn_py does.
        """
        if ll.repeatable_api_missing():
            return False
        try:
            ll.set_executor_repeatable(self.handle)
        except AclError as refusal:
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug("%s: no repeatable executor (%s); launching it once", self.operator,
                             refusal)
            return False
        self.repeatable = True
        return True

    @property
    def launcher(self) -> Any:
        """Phase 2 of a repeatable executor, ``launcher(workspace, workspace_size, handle,
        stream_handle)``, looked up once (launches are the per-call path)."""
        launcher = self._launcher
        if launcher is None:
            launcher = self._launcher = ll.operator_launcher(self.operator, self.library)
        return launcher

    def launch(self, workspace: Any, stream: Stream) -> None:
        """Phase 2 of a repeatable executor on ``stream`` with ``workspace`` (a device
        pointer, or NULL for none)."""
        if not self.repeatable:  # cleared by close()
            raise RuntimeError(f"{self.operator}: this executor is closed or not repeatable")
        self.launcher(workspace, self.workspace_size, self.handle, stream.handle)

    def launch_once(self, workspace: Any, stream_handle: Any) -> None:
        """Phase 2 of a one-shot executor, which hands it to CANN in the same C call
        (``aclpyHandleLaunch``): CANN frees it inside phase 2, success or not."""
        if self.repeatable:
            raise RuntimeError(f"{self.operator}: a repeatable executor is launched by launch()")
        ll.launch_consuming(self._owned, ll.operator_phase2(self.operator, self.library), workspace,
                            self.workspace_size, stream_handle, self.operator)

    def close(self) -> None:
        """Destroy the executor if it is still ours (not handed to a launch_once). Safe to
        call twice."""
        self.repeatable = False  # no launch may reach a destroyed executor
        ll.handle_release(self._owned, "aclDestroyAclOpExecutor")
        self._keepalive = ()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
