"""The process's CANN runtime state: initialisation, devices and teardown.

* The process is initialised lazily (``aclInit``) and torn down at exit in
  CANN's documented order: streams, devices, then aclnn_py's own ``aclInit``
  given back (:func:`teardown`: other ACL users in the process keep theirs).
* A device is set once per process (``aclrtSetDevice``); every other thread
  that touches it binds the context that made current (:func:`activate`).
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import threading
import weakref
from typing import Any, Callable

import numpy as np

from .._c import kernel_calls
from .._c import lowlevel as ll
from ..errors import AclError

logger = logging.getLogger("aclnn_py")

VISIBLE_DEVICES = "ASCEND_RT_VISIBLE_DEVICES"


class LiveObjects:
    """Objects held weakly, added and listed under a lock: a bare ``WeakSet`` raises
    "Set changed size during iteration" when one thread lists it while another adds."""

    def __init__(self) -> None:
        self._objects: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = threading.RLock()  # a collection in the middle may add from this thread

    def add(self, item: Any) -> None:
        with self._lock:
            self._objects.add(item)

    def snapshot(self) -> list[Any]:
        """The live objects, as a list taken at one moment."""
        with self._lock:
            return list(self._objects)


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
        self.default_streams: dict[int, Any] = {}  # streams.Stream by device
        self.streams = LiveObjects()  # every live streams.Stream
        self.atexit_registered = False
        # The parent's pid in a child forked after the runtime started: aclnn_py refuses to
        # run there (see _after_fork_in_child).
        self.forked_from: int | None = None
        # Called first at teardown, in this order, while devices are still set: what the
        # streams' caches keep, then the rest (e.g. the memory pool).
        self.stream_teardown_hooks: list[Callable[[], None]] = []
        self.teardown_hooks: list[Callable[[], None]] = []
        self.cache_hooks: list[Callable[[Any], None]] = []


_process = _Process()
_thread = threading.local()


def ensure_initialized() -> None:
    """aclInit once per process (a repeat by someone else counts as success)."""
    if _process.initialized:
        return
    _refuse_if_forked()
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
        if ll.emulator_loaded():  # the operators without a C kernel compute in Python
            kernel_calls.install_kernels()
        _process.initialized = True
        if not _process.atexit_registered:
            atexit.register(teardown)
            _process.atexit_registered = True


def _refuse_if_forked() -> None:
    """Raise in a child forked after the runtime started (:func:`_after_fork_in_child`)."""
    if _process.forked_from is not None:
        raise RuntimeError(
            f"aclnn_py cannot run in this process: it was forked from process "
            f"{_process.forked_from} after aclnn_py had started CANN's runtime there, and the "
            f"parent's devices, streams and memory do not carry over to a forked child. Start "
            f"worker processes with multiprocessing.get_context('spawn') (torch_npu asks the "
            f"same), or fork before the first aclnn_py call.")


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
    if state is not None and (device is None or (type(device) is int and device == state[1])) \
            and state[0] == _process.generation and _process.initialized:
        current: int = state[1]
        return current
    return _activate(device)


def _activate(device: int | None) -> int:
    _refuse_if_forked()
    if kernel_calls.running() is not None:  # see _enter_kernel
        raise kernel_calls.refuse_call("an aclnn_py call")
    ensure_initialized()
    state = getattr(_thread, "state", None)
    current = state[1] if state is not None and state[0] == _process.generation else None
    if device is None:
        device = 0 if current is None else current
    elif not isinstance(device, (int, np.integer)) or isinstance(device, (bool, np.bool_)):
        raise TypeError(f"device must be an int, got {type(device).__name__}")
    device = int(device)
    if device == current:
        return device
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


def _enter_kernel() -> Callable[[], None]:
    """A kernel starts in this thread (the emulator's kernel dispatch): the device and stream this
    thread made current are set aside until it ends, so that every aclnn_py call from inside
    it reaches :func:`_activate`, which refuses it (the per-call paths, which skip
    ``_activate`` while they are set, test nothing more)."""
    state = getattr(_thread, "state", None)
    current = getattr(_thread, "current", None)
    _thread.state = _thread.current = None

    def leave() -> None:
        _thread.state, _thread.current = state, current

    return leave


kernel_calls.on_kernel(_enter_kernel)


def on_teardown(hook: Callable[[], None], *, streams: bool = False) -> None:
    """Run ``hook`` at teardown, before streams and devices are released (with
    ``streams``: before every other hook, as what streams cache must go first)."""
    (_process.stream_teardown_hooks if streams else _process.teardown_hooks).append(hook)


def alive(generation: int) -> bool:
    """Whether resources made in runtime ``generation`` still exist (no teardown since)."""
    return _process.initialized and _process.generation == generation


def generation() -> int:
    return _process.generation


def _after_fork_in_child() -> None:
    """In a child forked after the runtime started: every device call refuses with the
    reason (``_activate``: the bumped generation sends each cached path there), nothing of
    the parent's is released (not even at exit), and locks another thread of the parent
    may have held at the fork are made anew."""
    if not _process.initialized:
        return  # forked before the first call: the child starts its own runtime
    _process.forked_from = os.getppid()
    _process.lock = threading.RLock()
    _process.initialized = False
    _process.generation += 1
    ll.forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


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
        # What the streams' caches keep goes before pools and devices.
        steps: list[tuple[str, Callable[[], Any]]] = [
            (f"stream teardown hook {hook!r}", hook) for hook in _process.stream_teardown_hooks]
        for hook in _process.teardown_hooks:
            steps.append((f"teardown hook {hook!r}", hook))
        for stream in _process.streams.snapshot():  # the default ones and any still alive
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
