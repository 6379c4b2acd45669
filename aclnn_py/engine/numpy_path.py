"""The numpy path: one call over host arrays in one staged round trip.

Per call, with every input's distinct elements (``runtime.arrays.host_layout``):

1. inputs of at most :data:`DIRECT_BYTES` are packed into one page-locked host
   block (``aclrtMallocHost``, pooled like device memory), each at a 512-byte
   aligned offset, and sent with **one** ``aclrtMemcpyAsync`` into one device
   block from the pool, laid out the same way; a larger input is copied straight
   from the caller's memory with a synchronous ``aclrtMemcpy`` (one copy, no host
   pass) before anything is queued;
2. the operator is launched through the launch cache on views of the device
   block; the offsets follow from the call signature, so a repeated call that gets
   the same block from the pool rebinds nothing;
3. the result comes back with **one** ``aclrtMemcpyAsync`` into the host block,
   then **one** ``aclrtSynchronizeStream``, then it is copied into the returned
   array (or ``out``). A result above :data:`DIRECT_BYTES` is instead copied
   straight into that array with a synchronous ``aclrtMemcpy`` after the wait.

A signature whose blocks are small (:data:`SPARE_BYTES`) keeps its last pair
for the next call instead of returning it to the pools (``Layout.spare``).

Before CANN 8.5, ``aclrtMemcpyAsync`` between host and device needs page-locked
host memory from ``aclrtMallocHost`` and 64-byte aligned addresses on both sides
(hiascend's aclrtMemcpyAsync reference up to 8.2; its 8.5 and 9.x pages allow pageable
memory, copied before the call returns). Staged arrays sit at 512-byte offsets of blocks that
come from ``aclrtMallocHost`` and ``aclrtMalloc``, so every asynchronous copy here
meets the older rule; direct copies are synchronous, which every era allows from
pageable memory.

A repeated call whose staged inputs are contiguous, whose result is staged (or empty) and
whose executor is repeatable does all of this in one C call without the stream's lock
(``aclpyStagedCall``): it packs the inputs, queues the upload, the relaunch and the download,
waits for the stream (also after a failure once something was queued) and copies the result
out. It needs no hold: nothing it queued is still queued when it returns, and an interrupt
comes before it (nothing queued) or after it (everything done). It declines, and the path
below runs, while the stream holds anything or a launch is being queued under its lock.

Otherwise the upload, the launch and the download are queued under one hold
(``Stream.queue_steps``), registered before the upload: the staging blocks, the
launch and its views stay alive until a synchronisation that began after it. A
failure after the upload was queued waits for the stream before raising, so nothing
stays queued behind an error; an interrupt leaves the queued work held until the
stream's next synchronisation. Results are read only after the wait.

A call that does not fit the device's free memory, or whose kernels' workspace does not fit
beside its blocks, streams through in chunks instead (``engine.chunked``, which also says
how cheaply that is checked). Here every input is read before the result is written, so an
``out`` that shares memory with an input gets the same result as one that does not.

``enabled = False`` restores the unstaged path (one synchronous copy per array and
the result), kept for benchmark comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import numpy as np

from .. import _caches
from .._c import lowlevel as ll
from ..errors import OutOfMemoryError
from ..ops.specs import OperatorSpec
from ..runtime.arrays import (
    Description,
    DeviceArray,
    array_description,
    contiguous_strides,
    host_layout,
)
from ..runtime.memory import (
    on_out_of_memory,
    pooling,
    staged_buffer,
    staging_pools,
    take_staging,
)
from ..runtime.process import activate, on_teardown
from ..runtime.results import RESULT_MIN_BYTES, result_array
from ..runtime.streams import STREAM_TYPES, Stream, current_stream
from . import chunked as _chunked
from . import launch_cache
from .validate import as_array, exact_range

# Arrays above this many bytes travel straight from (and to) the caller's memory: past it,
# the extra host pass costs more than the copy calls that packing saves. Measured on the
# emulator with ``benchmarks/bench.py --crossover`` (the page numpy-path-and-performance.md).
DIRECT_BYTES = 64 * 1024

ALIGNMENT = 512  # of every staged array; CANN before 8.5 needs 64 for asynchronous copies

# A signature whose staging blocks are this small (each) keeps one pair between its calls, so
# a repeated call takes no blocks from the pools: at most 8 KiB page-locked and 8 KiB of device
# memory for each of the (at most ``_MAX_LAYOUTS``) signatures (calls racing on one may keep a
# pair each), given back by ``empty_cache()``, by the pools' out-of-memory recovery of their
# device and at teardown. With the pool turned off (``ACLNN_PY_POOL=0``) nothing is kept: every
# block is freed after its call.
SPARE_BYTES = 8 * 1024

enabled = True  # internal: False runs the unstaged path (benchmarks compare the two)

_SLOW = ll.SLOW
_interrupted = ll.interrupted  # kernels interrupted: the locked path sees to them
_from_buffer = ll.buffer_pointer
# aclpyStagedCall, looked up at the first staged call (importing aclnn_py loads no library).
_call_staged: Any = None
_H2D = ll.MEMCPY_HOST_TO_DEVICE
_D2H = ll.MEMCPY_DEVICE_TO_HOST

# How an array travels.
EMPTY, STAGED, DIRECT = 0, 1, 2


def _aligned(offset: int) -> int:
    return -(-offset // ALIGNMENT) * ALIGNMENT


class Placed(NamedTuple):
    """Where one array of a :class:`Layout` sits and how it travels."""

    kind: int                 # EMPTY, STAGED or DIRECT
    offset: int               # in the device block (and, staged, in the host block)
    nbytes: int
    description: Description  # of its device view


class NumberInput(NamedTuple):
    """An input a signature takes as a Python number: the dtype validation gave it, and the
    range of values that dtype holds as they are (None: any value goes through validation's
    conversion, which refuses what the dtype cannot hold)."""

    position: int  # among the inputs
    name: str
    dtype: np.dtype
    low: int | float | None
    high: int | float | None


def _number_input(position: int, name: str, dtype: np.dtype, kind: type) -> NumberInput:
    """The record of a number of Python type ``kind`` that validation typed as ``dtype``."""
    bounds = exact_range(dtype, kind)
    if bounds is None:
        return NumberInput(position, name, dtype, None, None)
    return NumberInput(position, name, dtype, *bounds)


class Views:
    """What a call over one pair of staging blocks needs (see :meth:`Layout._views`). A
    class with slots, not a named tuple: read on every call, and a slot is read as fast as
    a tuple's item, a named tuple's field more slowly."""

    __slots__ = ("device_data", "host_data", "arrays", "host_result", "packs", "others",
                 "staged")

    def __init__(self, device_data: int, host_data: int, arrays: tuple[DeviceArray, ...],
                 host_result: int | None, packs: tuple[tuple[int, int, int], ...],
                 others: tuple[tuple[int, int, int, int], ...]) -> None:
        self.device_data = device_data
        self.host_data = host_data
        self.arrays = arrays            # the inputs' and the result's device views
        self.host_result = host_result  # where the staged result lands on the host
        self.packs = packs              # (input, host address, bytes)
        self.others = others            # (input, kind, address, bytes)
        self.staged: Staged | None = None  # the one-C-call form, when the call fits it


class Staged:
    """The C arguments of :func:`_staged_call` over one pair of staging blocks (used by one
    call at a time: a call holds its blocks)."""

    __slots__ = ("copies", "sources", "addresses", "step", "slots", "result", "_kept")

    def __init__(self, views: Views, upload: int, result_bytes: int) -> None:
        packs = views.packs
        self.slots = tuple(enumerate(index for index, _, _ in packs))  # (source, input)
        self.result = bool(result_bytes)  # a result to copy out
        self.copies, self.sources, self.addresses, (self.step, *self._kept) = \
            ll.new_staged_copies([(target, nbytes) for _, target, nbytes in packs],
                                 views.host_data, views.device_data, upload,
                                 views.host_result or 0, views.arrays[-1].buffer.pointer,
                                 result_bytes, [array.buffer.pointer for array in views.arrays])


class Layout:
    """Where the arrays of one call signature sit in the staging blocks, computed once.

    ``inputs`` and ``result`` are :class:`Placed` records. Staged
    inputs sit at the same offsets in the host block (the first ``upload_bytes`` are
    sent); the staged result at ``result_host_offset``. ``key`` is the views' launch-
    cache signature: a repeat that gets the same device block from the pool binds the
    same addresses.
    """

    __slots__ = ("spec", "c_attributes", "inputs", "contiguous", "result", "result_host_offset",
                 "result_shape", "result_dtype", "upload_bytes", "host_bytes", "device_bytes",
                 "key", "numbers", "views", "pools", "chunkable", "small_result",
                 "spare", "device")

    def __init__(self, spec: OperatorSpec, c_attributes: tuple[Any, ...],
                 arrays: Sequence[np.ndarray], result: np.ndarray, device: int,
                 numbers: tuple[tuple[int, type], ...] = ()) -> None:
        self.spec = spec
        self.device = device
        self.c_attributes = c_attributes
        # The inputs given as Python numbers, each converted on a repeat to the dtype its
        # validation gave it (which depends on the signature only, not on the value)
        self.numbers = tuple(_number_input(index, spec.inputs[index], arrays[index].dtype, kind)
                             for index, kind in numbers)
        self.contiguous = tuple(bool(a.flags.c_contiguous) for a in arrays)
        self.result_shape = result.shape
        self.result_dtype = result.dtype
        entries: list[Placed | None] = [None] * len(arrays)
        direct = []
        offset = upload = 0
        for index, array in enumerate(arrays):
            core, strides = host_layout(array)
            nbytes = core.size * core.itemsize if array.size else 0
            description = array_description(array.shape, array.dtype, strides, nbytes, device)
            if nbytes > DIRECT_BYTES:
                direct.append((index, nbytes, description))
            elif nbytes:
                entries[index] = Placed(STAGED, offset, nbytes, description)
                upload = offset + nbytes
                offset = _aligned(upload)
            else:
                entries[index] = Placed(EMPTY, 0, 0, description)
        self.upload_bytes = upload
        self.result_host_offset = offset  # after the staged inputs, in the host block
        for index, nbytes, description in direct:
            entries[index] = Placed(DIRECT, offset, nbytes, description)
            offset = _aligned(offset + nbytes)
        self.inputs: tuple[Placed, ...] = tuple(cast(list[Placed], entries))
        nbytes = result.nbytes
        self.small_result = nbytes < RESULT_MIN_BYTES  # a plain np.empty (see result_array)
        kind = EMPTY if not nbytes else STAGED if nbytes <= DIRECT_BYTES else DIRECT
        self.result = Placed(kind, offset if nbytes else 0, nbytes,
                             array_description(result.shape, result.dtype,
                                               contiguous_strides(result.shape), nbytes, device))
        self.device_bytes = offset + nbytes
        self.host_bytes = self.result_host_offset + nbytes if kind == STAGED else upload
        self.key = launch_cache.key(spec, c_attributes,
                                    [entry.description for entry in self.inputs],
                                    self.result.description)
        self.views: Views | None = None
        self.pools = staging_pools(device)
        self.chunkable = spec.elementwise  # a call that does not fit the device chunks
        # The staging blocks of the last call, kept for the next one (at most one pair, and
        # only small ones: see SPARE_BYTES); None when the signature keeps none. A list, so
        # that taking the pair (pop) and giving it back (append) are each one atomic step.
        self.spare: list[Any] | None = [] if pooling() and \
            max(self.host_bytes, self.device_bytes) <= SPARE_BYTES else None

    def _views(self, staging: Any) -> Views:
        """What a call over the blocks ``staging`` holds needs. Its ``arrays`` are the
        inputs' and the result's device views; ``packs`` lists the contiguous staged
        inputs, ``others`` the rest that carry bytes.

        Made for the first pair of blocks, and again whenever the pools hand out others.
        The views do not keep the blocks alive: every launch that uses them holds
        ``staging`` itself, and they never leave this module.
        """
        device_data, host_data = staging.device_data, staging.host_data
        device = self.device

        def view(offset: int, nbytes: int, description: Description) -> DeviceArray:
            pointer = device_data + offset if nbytes else ll.NULL
            return DeviceArray.like(description, staged_buffer(pointer, nbytes, device))

        views = tuple(view(offset, nbytes, description)
                      for _, offset, nbytes, description in (*self.inputs, self.result))
        packs: list[tuple[int, int, int]] = []
        others: list[tuple[int, int, int, int]] = []
        for index, ((kind, offset, nbytes, _), contiguous) in enumerate(
                zip(self.inputs, self.contiguous)):
            if kind == STAGED and contiguous:
                packs.append((index, host_data + offset, nbytes))
            elif kind != EMPTY:
                others.append((index, kind, host_data + offset if kind == STAGED
                               else views[index].buffer.pointer, nbytes))
        host_result = host_data + self.result_host_offset \
            if self.result.kind == STAGED else None
        found = self.views = Views(device_data, host_data, views, host_result, tuple(packs),
                                   tuple(others))
        if not others and self.result.kind != DIRECT:
            found.staged = Staged(found, self.upload_bytes,
                                  self.result.nbytes if self.result.kind == STAGED else 0)
        return found

    def _views_of(self, staging: Any) -> Views:
        """The views over the blocks ``staging`` holds: the last call's when it had them."""
        found = self.views
        if found is None or found.device_data != staging.device_data \
                or found.host_data != staging.host_data:
            found = self._views(staging)
        return found

    def run(self, arrays: Sequence[np.ndarray], host: np.ndarray, stream: Stream) -> np.ndarray:
        """The call over ``arrays`` (laid out as this signature says) on ``stream`` (its
        device current), writing ``host``; returns ``host`` once the stream is done."""
        device = stream.device
        if self.device_bytes > _chunked.unchecked.get(device, _chunked.CHECK_BYTES) \
                and self.chunkable and _chunked.needed(self.device_bytes, device):
            done = _chunked.run(self.spec, self.c_attributes, arrays, host, stream, DIRECT_BYTES)
            if done is not None:
                return done
        spare = self.spare
        staging = spare.pop() if spare else None
        if staging is None:
            host_pool, device_pool = self.pools
            staging, status = ll.staging_take(host_pool, self.host_bytes, device_pool,
                                              self.device_bytes)
            if status:  # out of memory (recovered from there), or the error
                staging, done = self._recovered(staging, status, arrays, host, stream)
                if done is not None:
                    return done
        found = self._views_of(staging)
        failure: OutOfMemoryError | None = None
        try:
            if found.staged is None or not _staged_call(found.staged, self.key, arrays, host,
                                                        stream):
                self._run_locked(found, staging, arrays, host, stream)
        except OutOfMemoryError as error:
            # The blocks fit, the kernels' workspace did not (phase 1 tells its size only
            # once the tensors exist): in chunks, which leave room for it, when the call can
            # be cut.
            if not self.chunkable:
                raise
            failure = error
        if failure is not None:  # chunked outside the handler, the blocks let go of first
            del staging, found
            return self._chunked_after(failure, arrays, host, stream)
        if spare is not None and not spare:  # nothing queued uses the blocks any more
            spare.append(staging)  # (calls racing on one signature may keep one pair each)
        return host

    def _chunked_after(self, failure: OutOfMemoryError, arrays: Sequence[np.ndarray],
                       host: np.ndarray, stream: Stream) -> np.ndarray:
        """The call in chunks after ``failure`` ran it out of memory whole; ``failure``
        raised when it cannot be chunked."""
        try:
            done = _chunked.run(self.spec, self.c_attributes, arrays, host, stream,
                                DIRECT_BYTES)
            if done is None:  # one row alone does not fit
                raise failure
            return done
        finally:  # no cycle through this frame
            del failure

    def _recovered(self, staging: Any, status: int, arrays: Sequence[np.ndarray],
                   host: np.ndarray, stream: Stream) -> tuple[Any, np.ndarray | None]:
        """After the pools failed with ``status``: ``(staging, None)`` once out-of-memory
        recovery filled the blocks; ``(None, host)`` when the call ran in chunks instead
        (it no longer fits the device); else the error."""
        device = stream.device
        failure: OutOfMemoryError | None = None
        try:
            return take_staging(device, self.host_bytes, self.device_bytes, staging,
                                status), None
        except OutOfMemoryError as error:
            # Less is free than at the device's latest reading: read again, and chunk
            # when the call does not fit (else the error stands).
            if not (self.chunkable and _chunked.needed(self.device_bytes, device)):
                raise
            failure = error
        # chunked outside the handler: no chained traceback
        return None, self._chunked_after(failure, arrays, host, stream)

    def _run_locked(self, found: Views, staging: Any, arrays: Sequence[np.ndarray],
                    host: np.ndarray, stream: Stream) -> None:
        """The call under the stream's lock (``Stream.queue_steps``), waited for: the form
        every call can take."""
        device_data, host_data, views = found.device_data, found.host_data, found.arrays
        host_result, packs, others = found.host_result, found.packs, found.others
        copy = ll.copy_host
        for index, target, nbytes in packs:
            copy(target, arrays[index], nbytes)
        for index, kind, target, nbytes in others:
            core = host_layout(arrays[index])[0]
            if kind == STAGED:
                copy(target, ll.host_pointer(core), nbytes)
            else:  # from the caller's memory, before anything is queued
                ll.memcpy(target, nbytes, ll.host_pointer(core), nbytes, _H2D)
        handle = stream.handle
        upload = self.upload_bytes
        before = (ll.memcpy_async, (device_data, upload, host_data, upload, _H2D, handle)) \
            if upload else None
        kind, _, nbytes, _ = self.result
        result = views[-1].buffer.pointer
        after = (ll.memcpy_async, (host_result, nbytes, result, nbytes, _D2H, handle)) \
            if kind == STAGED else None
        cached = launch_cache.lookup(stream, self.key)
        if cached is not None:
            cached.launch_staged(stream, views, staging, before, after)
        else:
            launch_cache.launch(self.spec, self.c_attributes, views[:-1], views[-1], None,
                                 stream, (staging, before, after))
        stream.synchronize()
        if kind == STAGED:
            copy(host, host_result, nbytes)
        elif kind == DIRECT:
            ll.memcpy(ll.host_pointer(host, writable=True), nbytes, result, nbytes, _D2H)


def _staged_call(staged: Staged, key: tuple[Any, ...], arrays: Sequence[np.ndarray],
                 host: np.ndarray, stream: Stream) -> bool:
    """The call in one C call without the stream's lock (``aclpyStagedCall``: the inputs
    packed, the upload, the relaunch, the download, the wait for the stream, the result
    copied into ``host``), when the stream holds nothing and caches a repeatable launch for
    ``key``; False when it did not run (nothing done), for the locked path.

    It waits for its own work before returning, even after a failure once something was
    queued, so nothing stays queued over the staging blocks: they need no hold."""
    if _interrupted or not stream.holds_nothing():
        return False
    cached = launch_cache.lookup(stream, key)
    if cached is None:
        return False
    relaunch = cached.relaunch_record()
    if relaunch is None:
        return False
    sources = staged.sources
    buffers = []
    for slot, index in staged.slots:
        buffer = _from_buffer(arrays[index])
        sources[slot] = buffer
        buffers.append(buffer)  # alive until the call returned
    copies = staged.copies
    if staged.result:
        # ``host`` is writable: a caller's out was checked (fast_call, check_out), any other
        # host array is the call's own. (require_writable=True would cost 0.4 µs a call.)
        out = _from_buffer(host)
        copies.out = out
    global _call_staged
    if _call_staged is None:
        _call_staged = ll.staged_call_function()
    status = _call_staged(relaunch.record, stream.state, copies, staged.addresses, staged.step)
    if status == _SLOW:
        return False
    if not status:
        stream.waited(0)
        if _interrupted:  # a fence's work run here was interrupted: raised once done
            ll.raise_interrupt()
        return True
    step = staged.step[0]
    if step == ll.STEP_SYNCHRONIZE:  # the work was queued: the executor is fine
        stream.waited(status)  # raises
    stream.waited(0)
    cached.forget(stream)  # a failed executor is not trusted again
    ll.check(status, relaunch.failed(cached.operator) if step == ll.STEP_LAUNCH
             else "aclrtMemcpyAsync")
    return True  # not reached: check raised


# Layouts by fast_key: the signature of a numpy call as its arguments show it.
_MAX_LAYOUTS = 4096
_layouts: _caches.Bounded[tuple[Any, ...], Layout] = _caches.bounded(
    "numpy call layouts", _MAX_LAYOUTS, holds="where a numpy call signature's arrays sit in "
    "the staging blocks", of="signatures")

# What validation types as a number, taking the dtype of the operator's ``like`` input where
# the operator takes numbers (``validate.as_array``): numpy.float64 is a float. Any other
# numpy scalar is a 0-d array of its own dtype, and shares that array's key and layout.
NUMBERS = (float, int, np.float64)
_FLOAT64 = np.float64


def drop_spares(device: int | None = None) -> None:
    """Give back the staging blocks the signatures keep between calls on ``device`` (None:
    on every device): the pools' out-of-memory recovery and teardown (``empty_cache()``
    drops the layouts themselves)."""
    for layout in list(_layouts.values()):
        if layout.spare is not None and (device is None or layout.device == device):
            # A new list, not the old one emptied: a call under way that took the pair gives
            # it back to the old list, which nothing keeps (its blocks go back to the pools).
            layout.spare = []


def _drop_spares_on_out_of_memory(device: int, host: bool) -> None:
    """A staging pool of ``device`` ran out of memory: its kept pairs hold blocks of both
    (``host`` or not)."""
    drop_spares(device)


on_out_of_memory(_drop_spares_on_out_of_memory)
on_teardown(drop_spares, streams=True)


def set_direct_bytes(nbytes: int) -> None:
    """Internal, for benchmarks: change :data:`DIRECT_BYTES` (layouts made before are
    forgotten)."""
    global DIRECT_BYTES
    DIRECT_BYTES = int(nbytes)
    _layouts.clear()


def fast_key(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...],
             out: Any, device: int) -> tuple[Any, ...] | None:
    """What the validation of a numpy call depends on, as a flat tuple: the operator,
    the attributes' C values, each input's dtype, shape and strides (a number's type; a
    numpy scalar's as the 0-d array it becomes), ``out``'s and the device; None when the
    call has no such key (other input types, uncommon attribute spellings)."""
    fast = spec.fast_attributes(attributes)
    if fast is None:
        return None
    key: list[Any] = [spec, device, *fast]
    for value in inputs:
        kind = type(value)
        if kind is np.ndarray:
            key += (value.dtype, value.shape, value.strides)
        elif kind in NUMBERS:
            key += (kind, None, None)
        elif isinstance(value, np.generic):
            key += (value.dtype, (), ())
        else:
            return None
    if out is not None:
        key += (out.dtype, out.shape, out.strides)
    return tuple(key)


def _as_laid_out(layout: Layout, inputs: Sequence[Any], scalars: bool) -> list[Any]:
    """``inputs`` with their numpy scalars as 0-d arrays (when ``scalars``) and their
    numbers as arrays of the dtypes ``layout`` gives them, as validation made them."""
    arrays = list(inputs)
    if scalars:
        for index, value in enumerate(arrays):
            if isinstance(value, np.generic) and type(value) is not _FLOAT64:
                arrays[index] = np.asarray(value)
    for number in layout.numbers:
        value = arrays[number.position]
        if number.low is not None and number.low <= value <= number.high:
            arrays[number.position] = np.asarray(value, dtype=number.dtype)
        else:  # out of range, NaN or infinite: validation's rule converts or refuses
            arrays[number.position] = as_array(value, number.dtype, number.name)
    return arrays


def fast_call(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...],
              out: np.ndarray | None, stream: Stream | None) -> np.ndarray | None:
    """The call, when its signature was validated and laid out before; else None (the
    caller then validates, and :func:`call` lays the signature out). Builds the same key
    as :func:`fast_key`, inline (the per-call path)."""
    if stream is None:
        stream = current_stream()
        if stream.closed:
            return None
    elif type(stream) in STREAM_TYPES and not stream.closed:
        activate(stream.device)
    else:
        return None
    fast = spec.fast_attributes(attributes)
    if fast is None:
        return None
    key: list[Any] = [spec, stream.device, *fast]
    numbers = scalars = False
    for value in inputs:
        kind = type(value)
        if kind is np.ndarray:
            key += (value.dtype, value.shape, value.strides)
        elif kind is float or kind is int or kind is _FLOAT64:
            key += (kind, None, None)
            numbers = True
        elif isinstance(value, np.generic):
            key += (value.dtype, (), ())
            scalars = True
        else:
            return None
    if out is not None:
        if not out.flags.writeable:
            return None
        key += (out.dtype, out.shape, out.strides)
    layout = _layouts.get(tuple(key))
    if layout is None:
        return None
    if numbers or scalars:
        inputs = _as_laid_out(layout, inputs, scalars)
    if out is None:
        out = np.empty(layout.result_shape, layout.result_dtype) if layout.small_result \
            else result_array(layout.result_shape, layout.result_dtype)
    return layout.run(inputs, out, stream)


def call(spec: OperatorSpec, c_attributes: tuple[Any, ...], inputs: Sequence[Any],
         attributes: tuple[Any, ...], arrays: Sequence[np.ndarray], out: np.ndarray | None,
         host: np.ndarray, stream: Stream) -> np.ndarray:
    """A validated numpy call (``arrays``: the inputs as arrays) writing ``host``; the
    signature's layout is remembered for :func:`fast_call` when the inputs were used as
    given (native byte order, numbers at the places that take them, numpy scalars as their
    0-d arrays)."""
    numbers = tuple((index, type(value)) for index, value in enumerate(inputs)
                    if type(value) in NUMBERS)
    layout = Layout(spec, c_attributes, arrays, host, stream.device, numbers)
    key = fast_key(spec, inputs, attributes, out, stream.device)
    if key is not None and all(array is value for array, value in zip(arrays, inputs)
                               if type(value) is np.ndarray):
        _layouts.put(key, layout)
    return layout.run(arrays, host, stream)
