"""The numpy path for calls larger than the device: chunks along the broadcast result.

When the device bytes of a numpy call (its inputs' distinct elements and its result)
exceed what the device has free, the pool's cache counted as free, whatever their size,
the call streams through in chunks of rows of the leading axis of the broadcast shape
(leading axes of length 1 dropped first):

* the check is cheap for most calls: a call of at most half of what was free at the
  device's latest reading (:data:`unchecked`) is not checked; a larger one reads
  ``aclrtGetMemInfo`` again (:func:`needed`, which resets the bound). A call under the
  bound that runs out of memory all the same (more was allocated since the reading) is
  checked then, and chunks when it does not fit (``engine.numpy_path.Layout.run``), as
  does a call whose arrays fit but whose kernels' workspace does not;
* an ``out`` whose memory may overlap an input's (:func:`overlaps`) is not written chunk
  by chunk: a later chunk would read input rows an earlier one overwrote. The chunks
  write a temporary, copied into ``out`` once every chunk is done;
* an input that varies along that axis travels chunk by chunk, each element once; an
  input that does not (lower rank, length 1 there, or a zero stride) is copied up
  **once**, with a synchronous ``aclrtMemcpy`` before anything is queued, and stays
  on the device for the whole call; so the host-to-device bytes are exactly the
  distinct input bytes, as unchunked (each chunk's arrays go with one copy each, so
  no alignment padding travels);
* two sets of buffers (device, and page-locked host for what is staged) take turns on
  two streams, the call's and a helper stream of the device. An array whose share of a
  full chunk is at most the numpy path's ``DIRECT_BYTES`` is staged: packed into the set's
  page-locked block, uploaded (or downloaded) with ``aclrtMemcpyAsync`` on the set's
  stream. A larger one travels as unchunked large arrays do, straight from (and to)
  the caller's memory with a synchronous ``aclrtMemcpy``: no host pass. Chunk ``k``'s
  uploads go first, then its kernel is queued on stream ``k % 2``, so on a device the
  copies of chunk ``k + 1`` run while the kernel of chunk ``k`` does. The host waits
  for one stream per chunk, then copies that chunk's result out and sends chunk
  ``k + 2`` into the freed set: ``sync_calls`` is the chunk count;
* the sets and the resident inputs come from the pool: a repeated call finds them in
  its cache. When the pool cannot give them at once, its cache is returned to CANN
  first, then the pool's out-of-memory recovery applies;
* reductions: ``"none"`` is elementwise, bit for bit the unchunked result. A
  backward's ``"mean"`` runs the chunks with ``"sum"`` (no division) and multiplies
  each chunk's rows once on the host, in float32, by one over the operator's divisor
  over the whole call (``x.size`` for MSE and smooth L1, the result's size for L1),
  rounded to float32. A forward loss's ``"sum"`` adds the chunks' sums in float64;
  its ``"mean"`` runs the chunks with ``"mean"`` (a partial mean cannot overflow
  where the whole mean does not) and adds each times its element count in float64,
  then divides by the broadcast size. The total is rounded once to the result's dtype.

``ACLNN_PY_CHUNK_BYTES`` (read once) sets the device bytes of one chunk's buffer set
and makes every numpy call above that size chunk, whatever the free memory: for tests.
Calls with device arrays never come here.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import _caches
from .._c import lowlevel as ll
from ..errors import OutOfMemoryError
from ..ops.specs import REDUCTION, Reduction
from ..runtime.arrays import DeviceArray, array_description, contiguous_strides, host_layout
from ..runtime.memory import DeviceBuffer, pool, staged_buffer, staging_pools, take_staging
from ..runtime.streams import Stream
from . import launch_cache

_H2D = ll.MEMCPY_HOST_TO_DEVICE
_D2H = ll.MEMCPY_DEVICE_TO_HOST
_HBM = ll.constant("ACL_HBM_MEM")
ALIGNMENT = 512


def _read_chunk_bytes() -> int | None:
    value = os.environ.get("ACLNN_PY_CHUNK_BYTES", "").strip()
    if not value:
        return None
    try:
        nbytes = int(value)
    except ValueError:
        raise ValueError(f"ACLNN_PY_CHUNK_BYTES must be a number of bytes, got {value!r}") \
            from None
    if nbytes <= 0:
        raise ValueError(f"ACLNN_PY_CHUNK_BYTES must be positive, got {value!r}")
    return nbytes


CHUNK_BYTES = _read_chunk_bytes()

last_count = 0  # internal, for tests: the chunks of this process's latest chunked call

# Calls of at most this many device bytes are not checked against the free memory until
# the device's first reading; with ACLNN_PY_CHUNK_BYTES, never (they never chunk).
CHECK_BYTES = CHUNK_BYTES if CHUNK_BYTES is not None else 0

# By device: calls of at most this many device bytes go unchecked, half of the free memory
# (the pool's cache counted) at the latest reading. The other half covers what is
# allocated before the next reading; a call that still does not fit runs out of memory,
# and the staging path then reads again (``needed``) and chunks.
unchecked: dict[int, int] = {}


def _aligned(offset: int) -> int:
    return -(-offset // ALIGNMENT) * ALIGNMENT


def overlaps(out: np.ndarray, arrays: Sequence[np.ndarray]) -> bool:
    """Whether ``out`` may share memory with one of ``arrays``: their address ranges
    overlap (``np.may_share_memory``, a bounds check; a false positive costs one copy)."""
    return any(np.may_share_memory(out, array) for array in arrays)


def free_bytes(device: int) -> int:
    """The device's free memory plus what its pool caches, read now (the device is current
    in the calling thread); it also resets the device's :data:`unchecked` bound."""
    free, _ = ll.get_mem_info(_HBM)
    free += pool(device).stats()["cached_bytes"]
    unchecked[device] = free // 2
    return free


def needed(device_bytes: int, device: int) -> bool:
    """Whether a numpy call of ``device_bytes`` must chunk: above ``ACLNN_PY_CHUNK_BYTES``
    when set, else above the device's free memory plus what the pool caches."""
    if CHUNK_BYTES is not None:
        return device_bytes > CHUNK_BYTES
    return device_bytes > free_bytes(device)


_helpers: dict[int, Stream] = {}
_helpers_lock = threading.Lock()
_caches.register("chunking streams", holds="the second stream of chunked calls",
                 bound="one per device", size=lambda: len(_helpers), empty=None)


def _helper(device: int) -> Stream:
    """The second stream of chunked calls on ``device`` (made on first use)."""
    with _helpers_lock:
        found = _helpers.get(device)
        if found is None or found.closed:
            found = _helpers[device] = Stream(device)
        return found


def _copies(copies: Sequence[tuple[Any, ...]]) -> None:
    for arguments in copies:
        ll.memcpy_async(*arguments)


def _view(pointer: Any, shape: tuple[int, ...], dtype: np.dtype, strides: tuple[int, ...],
          nbytes: int, device: int) -> DeviceArray:
    return DeviceArray.like(array_description(shape, dtype, strides, nbytes, device),
                            staged_buffer(pointer if nbytes else ll.NULL, nbytes, device))


def _buffers(device: int, resident_bytes: int, host_bytes: int, set_bytes: int,
             count: int) -> tuple[DeviceBuffer, list[Any]]:
    """The resident buffer and ``count`` buffer sets. When the pool cannot give them at once
    (its cache holds blocks of other sizes), its cache goes back to CANN first: then only a
    failure after that waits for the device (the pool's out-of-memory recovery)."""
    memory = pool(device)
    resident = DeviceBuffer.take(memory, resident_bytes, device) if resident_bytes \
        else DeviceBuffer.from_pool(memory, 0, device)
    sets: list[Any] = []
    if resident is not None:
        host_handle, device_handle = staging_pools(device)
        while len(sets) < count:
            staging, status = ll.staging_take(host_handle, host_bytes, device_handle,
                                              set_bytes)
            if status:
                ll.staging_release(staging)
                break
            sets.append(staging)
    if resident is not None and len(sets) == count:
        return resident, sets
    if resident is not None:
        resident.free()
    for staging in sets:
        ll.staging_release(staging)
    memory.empty(raising=False)
    return (DeviceBuffer.from_pool(memory, resident_bytes, device),
            [take_staging(device, host_bytes, set_bytes) for _ in range(count)])


class Split:
    """A numpy call cut along the leading axis of its broadcast shape (leading axes of
    length 1 dropped first) into ranges of rows: what each range computes, and how the
    ranges' results make the call's. Chunked calls and calls over several devices
    (``engine.devices``) both cut this way.

    ``attributes`` are the C attributes each range runs with. A backward's ``"mean"``
    becomes ``"sum"``, and :meth:`scale_rows` then divides each range's rows by the whole
    call's divisor, in float32; over float16 or bfloat16, whose undivided values can
    overflow where the mean does not, each range keeps ``"mean"`` (divided by its own
    divisor) and :meth:`scale_rows` rescales its rows to the whole call's. A forward
    loss's partial results go to :meth:`add` and :meth:`finish`.
    """

    def __init__(self, spec: Any, c_attributes: tuple[Any, ...], arrays: Sequence[np.ndarray],
                 host: np.ndarray) -> None:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        self.total_elements = math.prod(shape)
        self.elementwise = host.shape == shape
        self.host = host
        arrays = list(arrays)
        target = host
        while len(shape) > 1 and shape[0] == 1:
            arrays = [a[0] if a.ndim == len(shape) else a for a in arrays]
            if self.elementwise:
                target = target[0]
            shape = shape[1:]
        self.arrays, self.target, self.shape = arrays, target, shape
        self.length = shape[0] if shape else 0
        self.inner = self.total_elements // self.length if self.length else 0
        self.varying = [self.cut(a) and a.strides[0] != 0 for a in arrays]

        where = next((i for i, a in enumerate(spec.attributes) if a is REDUCTION), None)
        self.reduction = Reduction.NONE if where is None else c_attributes[where]
        self.attributes = c_attributes
        self.scale = None  # a backward's mean: one over the divisor of the whole call, float32
        # A backward's mean run as "mean" per range: the elements each row of the range adds
        # to the range's divisor (0: x is whole in every range, so each range divides by the
        # whole call's divisor already; None: the ranges run with "sum", or no mean)
        self.row_divisor: int | None = None
        if where is not None and self.reduction == Reduction.MEAN and not spec.reduces:
            if spec.mean_divisor == "x.size":
                x = arrays[spec.inputs.index("x")]
                self.divisor = max(x.size, 1)
                # x's rows as rows() cuts them (zero-stride ones too: their views take the
                # range's extent)
                row_divisor = x.size // self.length if self.length and self.cut(x) else 0
            else:
                self.divisor = max(self.total_elements, 1)
                row_divisor = self.inner
            if min(a.dtype.itemsize for a in (*arrays, host)) < 4:  # float16, bfloat16
                self.row_divisor = row_divisor
            else:
                self.attributes = (*c_attributes[:where], int(Reduction.SUM),
                                   *c_attributes[where + 1:])
                self.scale = np.float32(1.0 / self.divisor)
        self.reducing = spec.reduces and self.reduction != Reduction.NONE
        self.total = 0.0

    @property
    def splittable(self) -> bool:
        """Whether there are at least two rows to cut, and elements in them."""
        return self.length >= 2 and self.total_elements > 0

    def cut(self, array: np.ndarray) -> bool:
        """Whether :meth:`rows` cuts ``array`` (one of :attr:`arrays`) into its rows, where
        each range otherwise takes it whole: it spans the leading axis of the shape."""
        return bool(self.shape) and array.ndim == len(self.shape) and \
            array.shape[0] == self.length

    def rows(self, start: int, stop: int) -> list[np.ndarray]:
        """The inputs of rows ``start:stop`` (an input that does not vary there, whole)."""
        return [a[start:stop] if self.cut(a) else a for a in self.arrays]

    def scale_rows(self, rows: np.ndarray, start: int, stop: int) -> None:
        """A backward's ``"mean"``: ``rows`` (rows ``start:stop`` of the result) divided by
        the whole call's divisor, from the range's sum or from the range's own mean."""
        scale = self.scale
        if self.row_divisor:  # (0: the range divided by the whole call's divisor already)
            scale = np.float32(self.row_divisor * (stop - start) / self.divisor)
        if scale is not None:
            np.multiply(rows, scale, out=rows, dtype=np.float32, casting="unsafe")

    def add(self, value: float, start: int, stop: int) -> None:
        """A forward loss's result over rows ``start:stop`` (their mean or sum)."""
        self.total += value * ((stop - start) * self.inner) if self.reduction == Reduction.MEAN \
            else value

    def finish(self) -> None:
        """A forward loss's result over every row, rounded once, into the host result."""
        if self.reducing:
            total = self.total
            if self.reduction == Reduction.MEAN:
                total /= self.total_elements
            self.host[...] = np.asarray(total).astype(self.host.dtype)


def run(spec: Any, c_attributes: tuple[Any, ...], arrays: Sequence[np.ndarray],
        host: np.ndarray, stream: Stream, direct: int) -> np.ndarray | None:
    """The call over ``arrays`` in chunks, written into ``host``; None when it cannot be
    chunked (a 0-d or one-row broadcast shape, or one row alone does not fit), and the
    caller then goes the unchunked way. Arrays whose full chunk is above ``direct`` bytes
    travel without staging.

    The chunks' size leaves a sixteenth of the free memory for the kernels' workspaces,
    whose size phase 1 tells only once a chunk's tensors exist; a call that runs out of
    memory all the same (a workspace as large as a chunk) runs again with half the rows
    per chunk; at one row the error stands."""
    most_rows = 0  # (0: as many as fit)
    while True:
        tried = _Tried()
        try:
            return _run(spec, c_attributes, arrays, host, stream, direct, most_rows, tried)
        except OutOfMemoryError:
            if CHUNK_BYTES is not None or tried.rows <= 1:  # a size set on purpose, or one row
                raise
        # (here, past the handler: the failed attempt's blocks are gone)
        most_rows = tried.rows // 2


class _Tried:
    """The rows per chunk an attempt of :func:`_run` took (0: it failed before choosing)."""

    __slots__ = ("rows",)

    def __init__(self) -> None:
        self.rows = 0


def _run(spec: Any, c_attributes: tuple[Any, ...], arrays: Sequence[np.ndarray],
         host: np.ndarray, stream: Stream, direct: int, most_rows: int, tried: _Tried
         ) -> np.ndarray | None:
    """:func:`run` with chunks of at most ``most_rows`` rows (0: as many as fit), their
    number written to ``tried``."""
    device = stream.device
    given = host
    if overlaps(host, arrays):
        # Later chunks would read input rows that earlier chunks' results overwrote: the
        # chunks write a temporary, copied into ``host`` once every chunk is done.
        host = np.empty(host.shape, host.dtype)
    split = Split(spec, c_attributes, arrays, host)
    if not split.splittable:
        return None
    residents = _residents(split)
    rows = _chunk_rows(split, host.dtype, residents.nbytes, device, most_rows)
    if rows is None:
        return None
    tried.rows = rows
    count = -(-split.length // rows)
    global last_count
    last_count = count
    layout = _set_layout(split, rows, host.dtype, direct)
    resident, sets = _buffers(device, residents.nbytes, layout.host_bytes, layout.set_bytes,
                              min(count, 2))
    for entry in residents.arrays:
        if entry is not None and entry.nbytes:
            ll.memcpy(resident.pointer + entry.offset, entry.nbytes, ll.host_pointer(entry.core),
                      entry.nbytes, _H2D)
    streams = (stream, _helper(device)) if count > 1 else (stream,)
    _Chunks(spec, split, host.dtype, residents, resident, layout, rows, count, sets,
            streams).run()
    split.finish()
    if given is not host:
        np.copyto(given, host)
    return given


class _Resident(NamedTuple):
    """An input that does not vary along the chunked axis: its host core and strides,
    copied up once to ``offset`` in the resident block (``nbytes`` of it)."""

    core: np.ndarray
    strides: tuple[int, ...]
    nbytes: int
    offset: int


class _Residents(NamedTuple):
    """Each input's :class:`_Resident` (None for an input that travels chunk by chunk), and
    the bytes of the block that holds them."""

    arrays: list[_Resident | None]
    nbytes: int


def _residents(split: Split) -> _Residents:
    """The inputs of ``split`` that do not vary along the chunked axis, laid out in one
    block: copied up once."""
    residents: list[_Resident | None] = []
    nbytes = 0
    for array, varies in zip(split.arrays, split.varying):
        if varies:
            residents.append(None)
            continue
        core, strides = host_layout(array)
        size = core.size * core.itemsize if array.size else 0
        residents.append(_Resident(core, strides, size, nbytes))
        nbytes = _aligned(nbytes + size)
    return _Residents(residents, nbytes)


def _chunk_rows(split: Split, result_dtype: np.dtype, resident_bytes: int, device: int,
                most_rows: int) -> int | None:
    """The rows per chunk: as many as one of two buffer sets holds in the device's free
    memory (a set of ``CHUNK_BYTES`` when that is set), at most ``most_rows`` (0: no
    bound); None when not one row fits."""
    length = split.length
    row_bytes = split.inner * result_dtype.itemsize if split.elementwise else 0
    fixed = 0 if split.elementwise else result_dtype.itemsize
    for array, varies in zip(split.arrays, split.varying):
        if varies:
            row_bytes += host_layout(array[:1])[0].size * array.itemsize
    slack = ALIGNMENT * (len(split.arrays) + 1)
    if CHUNK_BYTES is not None:
        budget = CHUNK_BYTES
    else:
        # The pool's cache counts as free: a repeated call finds its blocks there (else
        # the pool empties its cache and retries when CANN runs out).
        free = free_bytes(device)
        # Two buffer sets; a sixteenth is left for workspaces and rounding.
        budget = (free - free // 16 - _aligned(resident_bytes)) // 2
    rows = (budget - slack - fixed) // row_bytes if row_bytes else length
    if rows < 1:
        if CHUNK_BYTES is None:
            return None
        rows = 1
    return min(rows, length, most_rows or length)


class _SetLayout(NamedTuple):
    """Where a full chunk's arrays sit in a buffer set: the staged ones first (through the
    page-locked block, of ``host_bytes``), then those that travel straight from and to the
    caller's memory (a full chunk above the direct size). ``offsets``: each input's (-1:
    resident)."""

    offsets: list[int]
    direct_inputs: list[bool]
    result_offset: int
    direct_result: bool
    host_bytes: int
    set_bytes: int


def _set_layout(split: Split, rows: int, result_dtype: np.dtype, direct: int) -> _SetLayout:
    """The layout of a buffer set for chunks of ``rows`` rows."""
    result_bytes = rows * split.inner * result_dtype.itemsize if split.elementwise \
        else result_dtype.itemsize
    direct_result = result_bytes > direct
    sizes = [host_layout(array[:rows])[0].size * array.itemsize if varies else -1
             for array, varies in zip(split.arrays, split.varying)]
    direct_inputs = [size > direct for size in sizes]
    offsets = [-1] * len(sizes)
    offset = result_offset = host_bytes = 0
    for staged in (True, False):
        for index, size in enumerate(sizes):
            if size >= 0 and direct_inputs[index] != staged:
                offsets[index] = offset
                offset = _aligned(offset + size)
        if direct_result != staged:
            result_offset = offset
            offset = _aligned(offset + result_bytes)
        if staged:
            host_bytes = max(offset, 1)
    return _SetLayout(offsets, direct_inputs, result_offset, direct_result, host_bytes,
                      max(offset, 1))


class _ChunkInputs(NamedTuple):
    """A chunk's input views, and the uploads (``aclrtMemcpyAsync`` arguments) its launch
    waits for."""

    views: list[DeviceArray]
    uploads: list[tuple[Any, ...]]


class _Chunks:
    """The chunks of one call: two buffer sets take turns on (up to) two streams; chunk
    ``k + 2`` goes into the set chunk ``k``'s result has just left."""

    def __init__(self, spec: Any, split: Split, result_dtype: np.dtype, residents: _Residents,
                 resident: DeviceBuffer, layout: _SetLayout, rows: int, count: int,
                 sets: list[Any], streams: tuple[Stream, ...]) -> None:
        self.spec, self.split, self.result_dtype = spec, split, result_dtype
        self.residents, self.resident, self.layout = residents, resident, layout
        self.rows, self.count, self.sets, self.streams = rows, count, sets, streams
        self.result_bytes = [0] * self.count  # each chunk's
        self.partial = np.empty((), result_dtype)

    def run(self) -> None:
        """Queue the first two chunks, then collect each in turn, queuing the next; on an
        error nothing stays queued behind it."""
        streams = self.streams
        try:
            for k in range(min(self.count, 2)):
                self.queue(k)
            for k in range(self.count):
                streams[k % 2].synchronize()
                self.collect(k)
                if k + 2 < self.count:
                    self.queue(k + 2)
        except BaseException:
            for lane in streams:
                with contextlib.suppress(Exception):  # the error raised is the one to report
                    lane.synchronize()
            raise

    def _bounds(self, k: int) -> tuple[int, int]:
        return k * self.rows, min(self.split.length, (k + 1) * self.rows)

    def queue(self, k: int) -> None:
        """Chunk ``k``'s uploads, then its launch (and its result's download), on its
        stream."""
        split, layout, dtype = self.split, self.layout, self.result_dtype
        staging, lane = self.sets[k % 2], self.streams[k % 2]
        start, stop = self._bounds(k)
        inputs = self._inputs(staging, lane, start, stop)
        device, result_offset = lane.device, layout.result_offset
        if split.elementwise:
            shape = (stop - start, *split.shape[1:])
            nbytes = (stop - start) * split.inner * dtype.itemsize
        else:
            shape, nbytes = (), dtype.itemsize
        self.result_bytes[k] = nbytes
        out = _view(staging.device_data + result_offset, shape, dtype, contiguous_strides(shape),
                    nbytes, device)
        before = (_copies, (tuple(inputs.uploads),)) if inputs.uploads else None
        after = None if layout.direct_result else (
            ll.memcpy_async, (staging.host_data + result_offset, nbytes,
                              staging.device_data + result_offset, nbytes, _D2H, lane.handle))
        launch_cache.launch(self.spec, split.attributes, inputs.views, out, None, lane,
                            ((staging, self.resident), before, after))

    def _inputs(self, staging: Any, lane: Stream, start: int, stop: int) -> _ChunkInputs:
        """The inputs' views for rows ``start:stop`` and the uploads they wait for: the
        varying inputs' rows copied into the set (the direct ones uploaded now, the staged
        ones packed), the resident ones viewed where they stay."""
        split, layout, device = self.split, self.layout, lane.device
        host_data, device_data = staging.host_data, staging.device_data
        views, copies = [], []
        for index, array in enumerate(split.arrays):
            resident = self.residents.arrays[index]
            if resident is not None:
                view_shape = array.shape
                if split.cut(array):  # cut, with a zero stride there: its view spans the rows
                    view_shape = (stop - start, *array.shape[1:])
                views.append(_view(self.resident.pointer + resident.offset, view_shape,
                                   array.dtype, resident.strides, resident.nbytes, device))
                continue
            core, strides = host_layout(array[start:stop])
            nbytes = core.size * core.itemsize
            at = layout.offsets[index]
            if layout.direct_inputs[index]:  # from the caller's memory, before the launch
                ll.memcpy(device_data + at, nbytes, ll.host_pointer(core), nbytes, _H2D)
            else:
                ll.copy_host(host_data + at, ll.host_pointer(core), nbytes)
                copies.append((device_data + at, nbytes, host_data + at, nbytes, _H2D,
                               lane.handle))
            views.append(_view(device_data + at, (stop - start, *array.shape[1:]), array.dtype,
                               strides, nbytes, device))
        return _ChunkInputs(views, copies)

    def collect(self, k: int) -> None:
        """Chunk ``k``'s result, its stream done: its rows into the result, or its partial
        value added."""
        staging, layout, split = self.sets[k % 2], self.layout, self.split
        source = staging.host_data + layout.result_offset
        start, stop = self._bounds(k)
        if not split.elementwise:
            ll.copy_host(ll.host_pointer(self.partial, writable=True), source,
                         self.result_dtype.itemsize)
            split.add(float(self.partial), start, stop)
            return
        rows_out = split.target[start:stop]
        nbytes = self.result_bytes[k]
        if layout.direct_result:  # straight into the result
            ll.memcpy(ll.host_pointer(rows_out, writable=True), nbytes,
                      staging.device_data + layout.result_offset, nbytes, _D2H)
        else:
            ll.copy_host(ll.host_pointer(rows_out, writable=True), source, nbytes)
        split.scale_rows(rows_out, start, stop)
