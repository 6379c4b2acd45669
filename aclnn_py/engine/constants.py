"""Small constants kept on the device: Python numbers and numpy scalars given with device
arrays, uploaded once instead of on every call.

A constant is the 0-d device array the validated call would upload (the value typed
as ``validate.as_array`` types it), kept per stream and value in one LRU of
:data:`CAPACITY` entries. Per stream, not merely per device: the kernels only read a
constant, but the pool hands a released block on in the order of the one stream that
used it last, and a launch waits for another stream's work on an array it takes. So
each stream has its own copy, which, once dropped, goes back to its pool in that
stream's order, as any array does, and no call waits for another stream.

Values are told apart by their bytes (-0.0 is not 0.0; NaN, which equals nothing,
finds its entry), with the type they were given as and the dtype they take. A
stream's constants go when it closes or dies, at ``empty_cache()`` and at teardown; a
constant names its stream weakly, so keeping it keeps no stream alive.

The LRU is a plain dict (insertion order, a hit moved to the end by taking it out and
putting it back): each of its operations is one step, whereas an ``OrderedDict``
assignment that a finaliser or another thread interrupts between its dict and its
linked list raises KeyError for the key being added.
"""

from __future__ import annotations

import struct
import weakref
from typing import Any, Callable

import numpy as np

from .. import _caches
from ..runtime.arrays import DeviceArray, to_device
from ..runtime.process import on_teardown
from ..runtime.streams import Stream, on_release_caches

CAPACITY = 256

_pack = struct.Struct("<d").pack
_FLOAT64 = np.float64

# (id of the stream, key()) -> (the stream, weakly; its constant), the least recently used
# first.
_entries: dict[tuple[Any, ...], tuple[weakref.ref[Stream], DeviceArray]] = {}
# The streams with constants, by id (each with a finaliser that forgets its entries).
_streams: dict[int, weakref.ref[Stream]] = {}


class _Constant(DeviceArray):
    """A kept constant: it names the stream whose work last used it weakly, so that keeping
    it keeps no stream alive (it is only ever used on that one stream)."""

    __slots__ = ("_stream",)
    _stream: Callable[[], Stream | None]  # a weak reference, or _no_stream

    @property
    def stream(self) -> Stream | None:
        return self._stream()

    @stream.setter
    def stream(self, stream: Stream | None) -> None:
        self._stream = _no_stream if stream is None else weakref.ref(stream)


def _no_stream() -> None:
    return None


def key(value: Any, dtype: np.dtype) -> tuple[Any, ...] | None:
    """What tells ``value``, typed as ``dtype``, apart from every other constant: None when
    it is neither a number nor a numpy scalar."""
    kind = type(value)
    if kind is int:
        return (dtype, kind, value)
    if kind is float or kind is _FLOAT64:
        return (dtype, kind, _pack(value))
    if isinstance(value, np.generic):
        try:  # numpy's stubs do not declare the buffer protocol of its scalars
            return (dtype, kind, bytes(memoryview(value)))  # type: ignore[arg-type]
        except TypeError:  # a scalar type without it
            return (dtype, kind, value.tobytes())
    return None


def find(stream: Stream, found_key: tuple[Any, ...]) -> DeviceArray | None:
    """The constant of ``found_key`` (:func:`key`) kept for ``stream``, if any (the per-call
    path: nothing is uploaded here)."""
    full = (id(stream), found_key)
    entry = _entries.pop(full, None)
    if entry is None:
        return None
    if entry[0]() is not stream:  # a dead stream's, whose id this one took
        return None
    _entries[full] = entry  # now the most recently used
    return entry[1]


def constant(stream: Stream, value: Any, array: np.ndarray) -> DeviceArray:
    """The device copy of ``array``, the 0-d array that ``value`` became, for ``stream``:
    the kept one, else uploaded now and kept (the least recently used one goes when
    :data:`CAPACITY` are kept)."""
    found_key = key(value, array.dtype)
    if found_key is None:
        return to_device(array, device=stream.device, stream=stream)
    found = find(stream, found_key)
    if found is not None:
        return found
    uploaded = to_device(array, device=stream.device, stream=stream)
    made = _Constant.like(uploaded.description(), uploaded.buffer)
    ref = _streams.get(id(stream))
    if ref is None or ref() is not stream:
        ref = _streams[id(stream)] = weakref.ref(stream)
        weakref.finalize(stream, _forget_id, id(stream), ref)
    while len(_entries) >= CAPACITY:
        try:
            _entries.pop(next(iter(_entries)), None)  # the least recently used
        except (StopIteration, RuntimeError):  # emptied or changed by another thread
            break
    _entries[(id(stream), found_key)] = (ref, made)
    return made


def _drop(stream_id: int) -> None:
    """Drop the constants of the stream with ``stream_id``; each goes back to its pool in
    that stream's order."""
    for entry_key in [k for k in list(_entries) if k[0] == stream_id]:
        _entries.pop(entry_key, None)


def _forget_id(stream_id: int, ref: weakref.ref[Stream]) -> None:
    """A stream's finaliser: drop its constants and its record (only while ``ref`` is its
    reference: the id may have been reused)."""
    if _streams.get(stream_id) is ref:
        _streams.pop(stream_id, None)
        _drop(stream_id)


def _release(stream: Stream) -> None:
    """Forget ``stream``'s constants (it keeps its record and finaliser for later ones),
    and those of streams that died without theirs going."""
    _drop(id(stream))
    for stream_id, ref in list(_streams.items()):
        if ref() is None:
            _forget_id(stream_id, ref)


def clear() -> None:
    """Forget every constant."""
    _streams.clear()
    _entries.clear()


def count() -> int:
    """How many constants are kept."""
    return len(_entries)


def _empty(device: int | None) -> int:
    """``empty_cache()``: forget the constants (of ``device``'s streams, when given); their
    blocks go back to the pools, emptied after."""
    for entry_key, (_, array) in list(_entries.items()):
        if device is None or array.device == device:
            _entries.pop(entry_key, None)
    return 0


on_release_caches(_release)
on_teardown(clear, streams=True)
_caches.register("device constants", holds="per stream: a number or numpy scalar given with "
                 "device arrays, as the 0-d device array it stands for",
                 bound=f"{CAPACITY} in all, the least recently used dropped first",
                 size=count, empty=_empty, stage=_caches.HOLDS_DEVICE_MEMORY)
