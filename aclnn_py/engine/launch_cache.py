"""One-shot calls on device arrays, relaunched through cached repeatable executors.

Phase 1 runs once per call signature: the operator, its scalar arguments and
the layout of every array (shape, dtype, strides, offset, storage size,
device). Its executor is made repeatable (``aclSetAclOpExecutorRepeatable``)
and kept by the stream with its aclTensors and workspace. A later call with
the same signature on that stream rebinds only the device addresses that
changed (``aclSetInputTensorAddr`` / ``aclSetOutputTensorAddr``) and launches,
as the executor caches of Ascend's own frameworks do (ATB's aclnn executor
cache, MindSpore's op API cache). When CANN refuses to make the executor
repeatable (or lacks the API), the entry remembers that: each call with the
signature then runs phase 1 and an ordinary launch (``engine.launch.OneShotLaunch``),
and the refusal is not asked for again.

A cached launch the cache forgets keeps its executor and workspace until its
last launch is done (``RepeatableLaunch``: its record knows that launch's stream
point), so they are released only after their last work, whoever drops them.
Each stream remembers up to ``ACLNN_PY_LAUNCH_CACHE`` signatures (default 64), dropping the one it
learned first when full; 0 remembers none, so every call does phase 1.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, Protocol, cast

from .. import _caches
from .._c import lowlevel as ll
from ..ops.specs import OperatorSpec
from ..runtime.arrays import DeviceArray
from ..runtime.memory import DeviceBuffer, on_out_of_memory
from ..runtime.memory import pool as memory_pool
from ..runtime.streams import Stream, on_release_caches, release_caches, streams
from .launch import new_launch, placement_epoch
from .validate import check_no_partial_overlap

DEFAULT_CAPACITY = 64
REPEATED_OUTS = 4  # the outs given whose last launch each cached launch remembers

_capacity: int | None = None


def capacity() -> int:
    """How many signatures each stream remembers (``ACLNN_PY_LAUNCH_CACHE``), read once."""
    global _capacity
    if _capacity is None:
        text = os.environ.get("ACLNN_PY_LAUNCH_CACHE", "").strip()
        try:
            _capacity = max(int(text), 0) if text else DEFAULT_CAPACITY
        except ValueError:
            raise ValueError(f"ACLNN_PY_LAUNCH_CACHE must be a whole number of entries, "
                             f"got {text!r}") from None
    return _capacity


class Laid(Protocol):
    """What a call signature reads of an array: a DeviceArray or its ``Description``."""

    @property
    def layout(self) -> int: ...


def key(spec: OperatorSpec, c_attributes: Sequence[Any], inputs: Sequence[Laid],
        out: Laid | None) -> tuple[Any, ...]:
    """The key of a call signature, what phase 1 depends on: the operator, the attributes'
    C values, and the layout ids of the inputs and of ``out`` (None: a new result). The one
    key of the launch cache, its fast paths (dispatch's, the constants') and the numpy
    path's layouts."""
    signature = [spec, *c_attributes]
    for array in inputs:  # (a loop builds it faster than unpacking a map)
        signature.append(array.layout)
    signature.append(None if out is None else out.layout)
    return tuple(signature)


class _StreamCache:
    """One stream's cache, with a weak reference telling whether that stream is alive (a
    class with slots: read on every call, as fast as a tuple's item)."""

    __slots__ = ("stream", "launches")

    def __init__(self, stream: weakref.ref[Stream]) -> None:
        self.stream = stream
        self.launches: dict[tuple[Any, ...], CachedLaunch] = {}


# Each stream's cache by id(stream): an entry goes when its stream closes or dies, and
# whatever an interrupted finaliser left behind goes at the next release of any stream's
# cache (empty_cache()).
_by_stream: dict[int, _StreamCache] = {}


def cache_of(stream: Stream) -> dict[tuple[Any, ...], CachedLaunch]:
    """``stream``'s cache: call signature -> cached launch (made on first use)."""
    entry = _by_stream.get(id(stream))
    if entry is None or entry.stream() is not stream:
        entry = _by_stream[id(stream)] = _StreamCache(weakref.ref(stream))
        weakref.finalize(stream, _forget, id(stream), entry.stream)
    return entry.launches


def _forget(key: int, ref: weakref.ref[Stream]) -> None:
    entry = _by_stream.get(key)
    if entry is not None and entry.stream is ref:
        del _by_stream[key]


def lookup(stream: Stream, key: tuple[Any, ...]) -> CachedLaunch | None:
    """The launch ``stream`` cached for ``key``, if any (the per-call path)."""
    entry = _by_stream.get(id(stream))
    return None if entry is None else entry.launches.get(key)


def _release(stream: Stream) -> None:
    """Forget ``stream``'s cached launches (each goes once no queued work holds it), and
    the caches of streams that died without their entry going."""
    entry = _by_stream.get(id(stream))
    if entry is not None:
        entry.launches.clear()
    for key, other in list(_by_stream.items()):
        if other.stream() is None:
            _by_stream.pop(key, None)


on_release_caches(_release)


def _release_streams(device: int | None) -> int:
    for stream in streams(device):  # cached executors hold workspaces
        release_caches(stream)
    return 0


def _release_on_out_of_memory(device: int, host: bool) -> None:
    """A pool of ``device`` ran out of device memory: the workspaces of the launches its
    streams cache (and its constants) go back as ``empty_cache()`` gives them back; a launch
    under way keeps its own. They hold no page-locked memory (``host``)."""
    if not host:
        _release_streams(device)


on_out_of_memory(_release_on_out_of_memory)


_caches.register("launches", holds="per stream: the executor and workspace of a call "
                 "signature, relaunched on a repeat", bound=f"ACLNN_PY_LAUNCH_CACHE per stream "
                 f"(default {DEFAULT_CAPACITY}), the oldest signature dropped first",
                 size=lambda: sum(len(entry.launches) for entry in list(_by_stream.values())),
                 empty=_release_streams, stage=_caches.HOLDS_DEVICE_MEMORY)


class CachedLaunch:
    """The launch (``engine.launch.new_launch``) one stream keeps for one call signature, with
    the description of the result it makes when the call gives no ``out``."""

    __slots__ = ("key", "_spec", "_launcher", "_result", "_result_nbytes", "_pool", "_repeat",
                 "_repeats_into", "_outs_given")

    def __init__(self, key: tuple[Any, ...], spec: OperatorSpec, c_attributes: tuple[Any, ...],
                 inputs: Sequence[DeviceArray], result: DeviceArray, stream: Stream) -> None:
        self.key = key
        self._spec = spec
        self._result = result.description()
        self._result_nbytes = result.buffer.nbytes
        self._pool = memory_pool(stream.device)
        self._launcher = new_launch(spec, c_attributes, (*inputs, result), stream.device)
        # What a repeat in one C call follows: the last launch with a new result (None: no
        # such launch, or an empty result, which has no block) and, by id(out), the last
        # launches into each of a few outs given (ping-pong buffers take turns).
        self._repeat: _Repeat | None = None
        self._repeats_into: _caches.Bounded[int, _Repeat] = _caches.Bounded(REPEATED_OUTS)
        self._outs_given: _caches.Bounded[int, weakref.ref[DeviceArray]] = \
            _caches.Bounded(2 * REPEATED_OUTS)

    def launch(self, stream: Stream, inputs: Sequence[DeviceArray], out: DeviceArray | None,
               around: tuple[Any, Any, Any] | None = None, *, out_checked: bool = True
               ) -> DeviceArray:
        """Queue the call for ``inputs`` on ``stream``, the one whose cache holds this
        launch, writing ``out`` (default: a new array); returns the result, still computing.
        ``around``: ``(hold, before, after)`` for ``launch_around`` (the numpy path).
        ``out_checked``: False when ``out``'s memory is yet to be checked against the inputs'
        (no partial overlap), which a repeat over the same arrays as an earlier launch
        needs no more.
        """
        if out is not None:
            self._launch_into(stream, inputs, out, around, out_checked)
            return out
        repeat = self._repeat
        if around is None and repeat is not None and repeat.over(inputs, None):
            # the result's block filled and the launch queued in one C call
            block = ll.new_block()
            try:
                queued = stream.repeat(self._launcher, repeat.call, block)
            except BaseException as error:
                self._failed(stream, error)
                raise
            if queued or block.pointer != ll.NULL:
                out = DeviceArray.like(self._result, DeviceBuffer.holding(
                    block, self._result_nbytes, stream.device))
                out.stream = stream  # its block is marked so already
                if queued:
                    return out
            else:  # declined, the block empty: the pool's full path recovers
                out = self._new_result(stream)
        else:
            out = self._new_result(stream)
        # the addresses the launch checks (another thread may free an input since)
        pointers = [array.buffer.pointer for array in inputs] if around is None else None
        epoch = self._checked_launch(stream, (*inputs, out), around)
        if pointers is not None:
            self._repeat = self._remembered(stream, epoch, pointers, inputs, None) \
                if self._result_nbytes else None
        return out

    def _launch_into(self, stream: Stream, inputs: Sequence[DeviceArray], out: DeviceArray,
                     around: tuple[Any, Any, Any] | None, out_checked: bool) -> None:
        """:meth:`launch` writing the ``out`` given."""
        matched = None
        if around is None:
            repeat = self._repeats_into.get(id(out))
            if repeat is not None and repeat.over(inputs, out):
                # one C call, over arrays checked before (their overlap too), unless an array
                # may have moved since (the C call would decline: another thread moves them)
                if repeat.epoch == placement_epoch():
                    try:
                        if stream.repeat(self._launcher, repeat.call):
                            return
                    except BaseException as error:
                        self._failed(stream, error)
                        raise
                matched = repeat
        if matched is None and not out_checked:
            spec = self._spec
            check_no_partial_overlap((("out", out),), tuple(zip(spec.inputs, inputs)),
                                     spec.function)
        arrays = (*inputs, out)
        epoch = self._checked_launch(stream, arrays, around)
        # Remembered for a repeat (the epoch still current when the launch was queued: a
        # free or a move after that moves it on, which the repeat's C call sees), once an
        # out comes back (a one-off out is not worth the record). The record of the same
        # arrays takes the new epoch: their addresses stay theirs until a free.
        if not epoch:
            return
        if matched is not None:
            matched.renew(epoch)
        elif self._given_before(out):
            repeat = self._remembered(stream, epoch,
                                      [array.buffer.pointer for array in arrays], inputs, out)
            if repeat is not None:
                self._repeats_into.put(id(out), repeat)

    def _remembered(self, stream: Stream, epoch: int, pointers: list[Any],
                    inputs: Sequence[DeviceArray], out: DeviceArray | None) -> _Repeat | None:
        """What a repeat of a launch just queued on ``stream`` at placement ``epoch`` (0: none
        possible) over the arrays at ``pointers`` needs (the inputs', with a new result; with
        ``out``, every array's), else None (an array freed meanwhile, or no C record)."""
        record = self.relaunch_record()
        if not epoch or record is None or None in pointers:
            return None
        pool, nbytes = (ll.NULL, 0) if out is not None else \
            (self._pool.handle, self._result_nbytes)
        return _Repeat(epoch, ll.RepeatRecord(record, stream.state, epoch, pointers, pool,
                                              nbytes), inputs, out)

    def _given_before(self, out: DeviceArray) -> bool:
        """Whether ``out`` was given to this launch before (among the last few outs)."""
        ref = self._outs_given.get(id(out))
        if ref is not None and ref() is out:
            return True
        self._outs_given.put(id(out), weakref.ref(out))
        return False

    def _checked_launch(self, stream: Stream, arrays: tuple[DeviceArray, ...],
                        around: tuple[Any, Any, Any] | None) -> int:
        """The launch over ``arrays`` (inputs, then the result) through every check, under
        the stream's lock. Returns the placement epoch at which they were checked when they
        need no hold, else 0 (and 0 with ``around``)."""
        try:
            if around is not None:
                self._launcher.launch_around(stream, arrays, *around)
                return 0
            return self._launcher.launch(stream, arrays)
        except BaseException as error:
            self._failed(stream, error)
            raise

    def _failed(self, stream: Stream, error: BaseException) -> None:
        """A launch raised ``error``: unless it refused a freed argument or a closed stream
        or launch (ValueError, the executor fine), the executor is not trusted again."""
        if not isinstance(error, ValueError):
            self.forget(stream)

    def _new_result(self, stream: Stream) -> DeviceArray:
        """A new result from the pool, its block marked as used on ``stream``."""
        out = DeviceArray.like(self._result, DeviceBuffer.from_pool(
            self._pool, self._result_nbytes, stream.device, stream.state))
        out.stream = stream  # its block is marked so already
        return out

    def launch_staged(self, stream: Stream, arrays: tuple[DeviceArray, ...], hold: Any,
                      before: Any, after: Any) -> None:
        """Queue ``before``, the call over ``arrays`` (inputs, then the result), then
        ``after`` on ``stream`` (``launch_around``): the numpy path's repeated call."""
        try:
            self._launcher.launch_around(stream, arrays, hold, before, after)
        except BaseException as error:
            self._failed(stream, error)
            raise

    def relaunch_record(self) -> ll.RelaunchRecord | None:
        """The C record of a repeatable launch (None for another kind, or once closed)."""
        record: ll.RelaunchRecord | None = getattr(self._launcher, "record", None)
        return record

    @property
    def operator(self) -> str:
        """The operator's name, for errors."""
        name: str = self._launcher.operator
        return name

    def forget(self, stream: Stream) -> None:
        """Leave ``stream``'s cache (released once no queued work holds it)."""
        cache = cache_of(stream)
        if cache.get(self.key) is self:
            cache.pop(self.key, None)

    def __reduce__(self) -> NoReturn:
        raise TypeError("a launch cannot be pickled: it holds CANN executors of this process")


class _Repeat:
    """The last launch whose arrays needed no hold (a RepeatableLaunch's only): the placement
    epoch at which they were checked, the C record of its repeat (``ll.RepeatRecord``: the
    addresses of its inputs, with a new result, or of its inputs and ``out``), and those
    arrays, weakly. A repeat over the same arrays, nothing freed or moved since, needs none
    of the checks and launches in one C call (``Stream.repeat``, which also takes the
    result's block when there is no ``out``)."""

    __slots__ = ("epoch", "call", "inputs", "out")

    def __init__(self, epoch: int, call: ll.RepeatRecord, inputs: Sequence[DeviceArray],
                 out: DeviceArray | None) -> None:
        self.epoch = epoch
        self.call = call
        self.inputs = tuple(map(weakref.ref, inputs))
        self.out = None if out is None else weakref.ref(out)

    def renew(self, epoch: int) -> None:
        """The same arrays, launched again through every check at placement ``epoch``."""
        self.epoch = epoch
        self.call.renew(epoch)

    def over(self, inputs: Sequence[DeviceArray], out: DeviceArray | None) -> bool:
        """Whether ``inputs`` and ``out`` (None: a new result) are this launch's arrays."""
        refs = self.inputs
        count = len(refs)
        if count != len(inputs):
            return False
        index = 0
        while index < count:  # (faster than iterating over a zip)
            if refs[index]() is not inputs[index]:
                return False
            index += 1
        written = self.out
        return written is None if out is None else written is not None and written() is out


def launch(spec: OperatorSpec, c_attributes: tuple[Any, ...], inputs: Sequence[DeviceArray],
           out: DeviceArray | None, new_result: Callable[[], DeviceArray] | None,
           stream: Stream, around: tuple[Any, Any, Any] | None = None) -> DeviceArray:
    """Queue a validated call on ``stream``: through its cached executor when the
    signature was seen before, else after phase 1 (cached for next time).

    ``new_result()`` makes the result array when ``out`` is None; ``around`` as for
    :meth:`CachedLaunch.launch`.
    """
    signature = key(spec, c_attributes, inputs, out)
    cache = cache_of(stream)
    cached = cache.get(signature)
    if cached is not None:
        return cached.launch(stream, inputs, out, around)
    result = cast(Callable[[], DeviceArray], new_result)() if out is None else out
    cached = CachedLaunch(signature, spec, c_attributes, inputs, result, stream)
    limit = capacity()
    if limit:
        while len(cache) >= limit:
            try:
                cache.pop(next(iter(cache)), None)  # the oldest signature
            except (StopIteration, RuntimeError):  # emptied or changed by another thread
                break
        cache[signature] = cached
    return cached.launch(stream, inputs, result, around)
