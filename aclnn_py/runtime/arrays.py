"""Arrays in device memory, and numpy arrays moved there with as few bytes as possible.

A host array is described to CANN as the view it is: its own shape, element
strides and offset over a device copy of the memory it really spans.

* Zero-stride axes (``numpy.broadcast_to``, scalars expanded) are kept as zero
  strides: only the distinct elements travel.
* A dense view whose strides are a permutation of C order (Fortran order,
  transposes) is uploaded as the memory block it is, without a host copy;
  CANN makes it contiguous on the device.
* Anything else (gaps from slicing, negative strides) is compacted on the host
  first, since CANN documents only non-negative strides.
"""

from __future__ import annotations

import itertools
import math
import operator
import sys
import threading
from collections.abc import Sequence
from typing import Any, Callable, NamedTuple, NoReturn

import numpy as np

from .. import _caches
from .._c import lowlevel as ll
from ..ops.dtypes import acl_dtype, all_dtypes, bfloat16_dtype, dtype_label
from . import process as rt
from .handles import Handle
from .memory import DeviceBuffer, borrowed_buffer, take_staging
from .streams import Stream, current_stream, resolve_stream

# The alignment aclCreateTensor wants of tensor data (see DeviceArray.from_pointer), and
# the one aclrtMemcpyAsync wants of both addresses before CANN 8.5 (DeviceArray.copy_from).
_TENSOR_ALIGNMENT = 32
_ASYNC_COPY_ALIGNMENT = 64

# Byte sizes beyond this do not fit a size_t (aclrtMalloc's size) on 64-bit hosts.
MAX_BYTES = 2**63 - 1

_contiguous: _caches.Bounded[tuple[int, ...], tuple[int, ...]] = _caches.bounded(
    "contiguous strides", 4096, holds="C-order strides by shape", of="shapes")


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """C-order strides of ``shape``, in elements (remembered: shapes repeat across calls)."""
    strides = _contiguous.get(shape)
    if strides is None:
        steps = [0] * len(shape)
        step = 1
        for axis in range(len(shape) - 1, -1, -1):
            steps[axis] = step
            step *= max(shape[axis], 1)
        strides = _contiguous.put(shape, tuple(steps))
    return strides


def _is_dense(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether positive element ``strides`` lay ``shape`` out gap-free in some axis order."""
    step = 1
    for stride, extent in sorted((s, n) for n, s in zip(shape, strides) if n > 1):
        if stride != step:
            return False
        step *= extent
    return True


_layout_ids: _caches.Bounded[tuple[Any, ...], int] = _caches.bounded(
    "array layout ids", 1 << 16, holds="the id of each array layout seen", of="layouts",
    note=" (ids are never reused)")
_next_layout_id = itertools.count(1)


def layout_id(shape: tuple[int, ...], acl_type: int, strides: tuple[int, ...], offset: int,
              storage_size: int, device: int) -> int:
    """A small int naming one array layout, so call signatures compare cheaply.

    Ids are never reused: a forgotten layout gets a new id, never another's.
    """
    key = (shape, acl_type, strides, offset, storage_size, device)
    found = _layout_ids.get(key)
    if found is None:
        found = _layout_ids.put(key, next(_next_layout_id))
    return found




def _integer(value: Any, argument: str) -> int:
    """``value`` as an int when it is an integer (a Python or numpy int, or anything with
    ``__index__``); TypeError naming ``argument`` for anything else, bools included, as
    numpy refuses floats, strings and bools for extents and axes."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{argument} must be integers, got the bool {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{argument} must be integers, got {value!r} "
                        f"({type(value).__name__})") from None


def _shape(shape: Any, argument: str) -> tuple[int, ...]:
    """``shape`` (an integer, or a sequence or 1-d array of integers) as a tuple; TypeError
    naming ``argument`` for anything else (floats, strings and bools: numpy refuses them),
    ValueError for a negative extent."""
    if isinstance(shape, (str, bytes)):
        raise TypeError(f"{argument} must be an int or a sequence of ints, got {shape!r}")
    if isinstance(shape, Sequence) or (isinstance(shape, np.ndarray) and shape.ndim):
        extents = tuple(_integer(n, argument) for n in shape)
    else:
        extents = (_integer(shape, argument),)
    if any(n < 0 for n in extents):
        raise ValueError(f"{argument} must not have negative extents, got {extents}")
    return extents


def span(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements of storage from the first element to the last one a view reaches, inclusive
    (0 for an empty view)."""
    if 0 in shape:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def _reshaped_strides(shape: tuple[int, ...], strides: tuple[int, ...],
                      new_shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Strides that show the elements of ``shape``/``strides`` in C order as ``new_shape``
    over the same memory, or None when no strides can (a copy would be needed)."""
    if 0 in shape:
        return contiguous_strides(new_shape)
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    result = [1] * len(new_shape)
    i = j = 0  # the next old axis, the next new axis
    while i < len(old) and j < len(new_shape):
        # The smallest run of old axes and of new axes holding the same number of elements.
        old_end, new_end = i + 1, j + 1
        old_count, new_count = old[i][0], new_shape[j]
        while old_count != new_count:
            if new_count < old_count:
                new_count *= new_shape[new_end]
                new_end += 1
            else:
                old_count *= old[old_end][0]
                old_end += 1
        for k in range(i, old_end - 1):  # the run must be one C-ordered block
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        result[new_end - 1] = old[old_end - 1][1]
        for k in range(new_end - 1, j, -1):
            result[k - 1] = result[k] * new_shape[k]
        i, j = old_end, new_end
    return tuple(result)


def _shape_with_unknown(shape: Any, size: int) -> tuple[int, ...]:
    """A reshape target: ``shape`` with its one -1 extent, if any, worked out from ``size``."""
    if isinstance(shape, (str, bytes)):
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}")
    extents = [_integer(n, "shape") for n in (
        shape if isinstance(shape, Sequence) or (isinstance(shape, np.ndarray) and shape.ndim)
        else (shape,))]
    unknown = [axis for axis, n in enumerate(extents) if n == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension (-1)")
    if any(n < -1 for n in extents):
        raise ValueError(f"shape must not have negative extents, got {tuple(extents)}")
    if unknown:
        known = math.prod(n for n in extents if n != -1)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape an array of {size} elements into shape "
                             f"{tuple(extents)}")
        extents[unknown[0]] = size // known
    return tuple(extents)


def _axis(axis: Any, ndim: int) -> int:
    """``axis`` of an array of ``ndim`` axes (negative ones count from the end), as numpy
    checks it: AxisError (a ValueError and an IndexError) out of range."""
    index = _integer(axis, "axes")
    if not -ndim <= index < ndim:
        raise _AXIS_ERROR(f"axis {index} is out of bounds for array of dimension {ndim}")
    return index % ndim


# numpy's AxisError: numpy.exceptions from numpy 1.25, the numpy namespace before.
_AXIS_ERROR: Any = getattr(getattr(np, "exceptions", np), "AxisError")  # noqa: B009


def dense_c_order(array: DeviceArray) -> bool:
    """Whether ``array``'s elements lie in C order one after the other (an offset allowed)."""
    return all(n == 1 or s == c for n, s, c in zip(array.shape, array.strides,
                                                   contiguous_strides(array.shape)))


# What DeviceArray.astype computes with, set by the layer that has the operators.
cast_through: Callable[[DeviceArray, np.dtype], DeviceArray] | None = None


# Held from a move of arrays onto a stream (``move_to``) until the work over them is queued
# there: an array records one stream, so another thread's move of the same array, which waits
# for the stream the array is on, must find that work queued, not still to come.
placing = threading.RLock()


def freed_error(name: str = "") -> ValueError:
    """The error for a DeviceArray used after it was freed, naming the argument ``name``."""
    return ValueError(f"{name} is a DeviceArray that was freed" if name else
                      "this DeviceArray was freed")


def move_to(stream: Stream, arrays: Sequence[DeviceArray]) -> Any:
    """Wait for other streams' work on ``arrays`` (on any view of their memory), then mark
    them used by ``stream``, their blocks too (reused in its order once released). Returns
    what work queued on ``stream`` over them must hold: nothing when each owns a pool block
    or no memory, else the arrays (memory someone else frees, or a staging block's). The
    caller holds :data:`placing` until that work is queued."""
    held = None
    for array in arrays:
        buffer = array.buffer
        tracked = array if array.base is None else array.base
        other = tracked.stream
        if other is not stream:
            if other is not None:
                tracked.synchronize()
            # The block first: interrupted between the two, the array is not on the
            # stream yet and the next launch marks it again (never on it, unmarked).
            buffer.use_on(stream.state)
            tracked.stream = stream
        if buffer._block is None and buffer.nbytes:  # memory the pools do not own
            held = arrays
    return held


class Description(NamedTuple):
    """Everything of a :class:`DeviceArray` but its buffer and pending work: what
    :meth:`DeviceArray.like` makes an array over a buffer from."""

    shape: tuple[int, ...]
    dtype: np.dtype
    acl_dtype: int
    strides: tuple[int, ...]
    offset: int
    device: int
    layout: int  # layout_id: what a call signature compares


def array_description(shape: tuple[int, ...], dtype: np.dtype, strides: tuple[int, ...],
                      nbytes: int, device: int) -> Description:
    """The ``DeviceArray.description()`` of an array over ``nbytes`` of device memory."""
    acl_type = acl_dtype(dtype, all_dtypes())
    layout = layout_id(shape, acl_type, strides, 0, nbytes // dtype.itemsize, device)
    return Description(shape, dtype, acl_type, strides, 0, device, layout)


class DeviceArray:
    """An array in device memory: a buffer plus shape, dtype, element strides and offset.

    Made by :func:`to_device`, :func:`empty` and :meth:`from_pointer`, and returned by
    operators given device inputs. Work that writes it may still be queued (operators on
    device arrays do not wait); :meth:`numpy` waits for it first. :meth:`reshape`,
    :meth:`transpose` and indexing give views that share the memory; operators take them
    through their strides. ``==`` is identity, as for any Python object: compare contents
    with ``numpy()``.
    """

    __slots__ = ("buffer", "shape", "dtype", "strides", "offset", "device", "stream",
                 "acl_dtype", "layout", "base", "__weakref__")

    def __init__(self, buffer: DeviceBuffer, shape: tuple[int, ...], dtype: np.dtype,
                 strides: tuple[int, ...] | None = None, offset: int = 0) -> None:
        self.buffer = buffer
        self.shape = shape
        self.dtype = dtype
        self.acl_dtype = acl_dtype(dtype, all_dtypes())
        self.strides = contiguous_strides(shape) if strides is None else strides
        self.offset = offset
        self.device = buffer.device
        # The stream whose queued work last used this array (None: nothing pending); a
        # view's is its base's, so work through any view of the memory is waited for.
        self.stream: Stream | None = None
        # The array a view was made from (None: not a view).
        self.base: DeviceArray | None = None
        self.layout = layout_id(shape, self.acl_dtype, self.strides, offset,
                                self.storage_size, self.device)

    def description(self) -> Description:
        """What :meth:`like` copies: everything but the buffer and pending work."""
        return Description(self.shape, self.dtype, self.acl_dtype, self.strides, self.offset,
                           self.device, self.layout)

    @classmethod
    def like(cls, description: Description, buffer: DeviceBuffer) -> DeviceArray:
        """A new array over ``buffer`` with a :meth:`description` taken earlier (no checks)."""
        array = cls.__new__(cls)
        (array.shape, array.dtype, array.acl_dtype, array.strides, array.offset, array.device,
         array.layout) = description
        array.buffer = buffer
        array.stream = None
        array.base = None
        return array

    @classmethod
    def from_pointer(cls, pointer: Any, shape: Any, dtype: Any, *,
                     strides: Sequence[int] | None = None, device: int | None = None,
                     owner: Any = None) -> DeviceArray:
        """An array over device memory that someone else allocated (another ACL user in the
        process, a C extension): ``pointer`` is its integer device address, ``strides``
        are in elements (default C order), ``device`` the device it is on (default the
        current one). The memory is never freed here; ``owner`` is kept alive as long as
        the array, or queued work using it, lives. Work queued through the array is
        waited for by its own :meth:`synchronize` (or :func:`aclnn_py.synchronize`), not
        by other arrays over the same memory. ValueError for a null pointer, a negative
        extent or stride, or a span that does not fit an address space."""
        try:
            if isinstance(pointer, (bool, np.bool_)):
                raise TypeError
            address = operator.index(pointer)
        except TypeError:
            raise TypeError(f"pointer must be an int device address, got "
                            f"{type(pointer).__name__}") from None
        if address == 0:
            raise ValueError("pointer is null: from_pointer wraps allocated device memory")
        if address < 0:
            raise ValueError(f"pointer must be a non-negative address, got {address}")
        shape = _shape(shape, "shape")
        dtype = np.dtype(dtype)
        acl_dtype(dtype, all_dtypes(), argument="dtype")
        if strides is None:
            steps = contiguous_strides(shape)
        else:
            if isinstance(strides, (str, bytes)):
                raise TypeError(f"strides must be a sequence of ints (in elements), got "
                                f"{strides!r}")
            try:
                steps = tuple(_integer(s, "strides") for s in strides)
            except TypeError:
                raise TypeError(f"strides must be a sequence of ints (in elements), got "
                                f"{strides!r}") from None
            if len(steps) != len(shape):
                raise ValueError(f"strides {steps} must have one entry per axis of shape "
                                 f"{shape}")
            if any(s < 0 for s in steps):
                raise ValueError(f"strides must not be negative (CANN takes non-negative "
                                 f"strides only), got {steps}")
        nbytes = span(shape, steps) * dtype.itemsize
        if nbytes > MAX_BYTES or address + nbytes > 2**64:
            raise ValueError(f"shape {shape} with strides {steps} of {dtype_label(dtype)} at "
                             f"0x{address:x} spans {nbytes} bytes, beyond any device address "
                             "space")
        # aclCreateTensor wants its data address 32-byte aligned (the emulator's ops_core.h,
        # after CANN's aclCreateTensor doc): an address inside an allocation (aclrtMalloc
        # aligns those) is described as the aligned address before it plus an offset.
        offset = 0
        below = address % _TENSOR_ALIGNMENT
        if below and below % dtype.itemsize == 0:
            address -= below
            offset = below // dtype.itemsize
            nbytes += below
        device = rt.activate(device)
        return cls(borrowed_buffer(address, nbytes, device, owner), shape, dtype, steps, offset)

    def data_ptr(self) -> int:
        """The device address of the first element (as ``torch.Tensor.data_ptr()``); 0 for
        an array without memory. With :attr:`nbytes`, what other code needs to use it."""
        pointer = self.buffer.pointer
        if pointer is None:
            raise freed_error()
        if pointer == ll.NULL:
            return 0
        return ll.address(pointer) + self.offset * self.dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the elements the view shows (zero-stride repeats counted)."""
        return self.size * self.dtype.itemsize

    @property
    def storage_size(self) -> int:
        """Elements of device storage the view spans."""
        return self.buffer.nbytes // self.dtype.itemsize

    @property
    def is_contiguous(self) -> bool:
        return self.offset == 0 and dense_c_order(self)

    def tensor(self, min_rank: int = 0, name: str = "") -> Handle:
        """A new aclTensor describing this array, owned by the caller; a 0-d array is
        described as shape [1] when the operator's smallest rank (``min_rank``) is 1.
        ValueError naming the argument ``name`` if the array was freed, here or by another
        thread since its checks."""
        pointer = self.buffer.pointer  # read once
        if pointer is None:
            raise freed_error(name)
        if min_rank and not self.shape:
            return Handle("tensor", (1,), self.acl_dtype, (1,), self.offset, self.storage_size,
                             pointer)
        return Handle("tensor", self.shape, self.acl_dtype, self.strides, self.offset,
                         self.storage_size, pointer)

    def require_live(self, name: str) -> None:
        """ValueError naming the argument ``name`` if this array was freed."""
        if self.buffer.freed:
            raise freed_error(name)

    def synchronize(self) -> None:
        """Wait for queued work that uses this array (or any view of its memory)."""
        tracked = self if self.base is None else self.base
        stream = tracked.stream
        if stream is not None:
            # Before the wait: a relaunch without the stream's lock that saw the old epoch
            # (under the stream state's mutex) is queued before the wait takes its point.
            ll.epoch_bump()  # off the stream: relaunches checked over it check again
            stream.synchronize()
            with placing:  # unless another thread moved it to its stream meanwhile
                if tracked.stream is stream:
                    tracked.stream = None

    def numpy(self) -> np.ndarray:
        """A new host array with this array's contents (waiting for pending work first)."""
        if self.buffer.freed:
            raise freed_error()
        self.synchronize()
        result = np.empty(self.shape, self.dtype)
        if self.size == 0:
            return result
        if self.is_contiguous and self.buffer.nbytes >= result.nbytes:
            self.buffer.copy_to_host(result)
            return result
        storage = np.empty(self.storage_size, self.dtype)
        self.buffer.copy_to_host(storage)
        itemsize = self.dtype.itemsize
        view = np.lib.stride_tricks.as_strided(
            storage[self.offset:], self.shape, tuple(s * itemsize for s in self.strides))
        result[...] = view
        return result

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if copy is False:  # numpy 2's protocol: refuse what cannot be done without a copy
            raise ValueError("a DeviceArray's data is in device memory, so numpy.array(..., "
                             "copy=False) cannot avoid a copy; use numpy.asarray(array) or "
                             "array.numpy()")
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def item(self) -> Any:
        """The one element as a Python scalar (waiting for pending work first); ValueError
        unless the array has exactly one element."""
        if self.size != 1:
            raise ValueError(f"item() needs an array of one element; this one has shape "
                             f"{self.shape} ({self.size} elements)")
        return self.numpy().item()

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def _scalar(self, kind: str) -> Any:
        if self.shape:
            raise TypeError(f"only 0-d DeviceArrays convert to Python {kind}s; this one has "
                            f"shape {self.shape} (use .item() for one element, or .numpy())")
        return self.item()

    def reshape(self, *shape: Any) -> DeviceArray:
        """A view of the same memory with another shape (one extent may be -1), in C order
        as numpy's; ValueError when the strides cannot show it without a copy."""
        wanted = shape[0] if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) \
            else shape
        extents = list(_shape_with_unknown(wanted, self.size))
        new_shape = tuple(extents)
        if math.prod(new_shape) != self.size:
            raise ValueError(f"cannot reshape an array of {self.size} elements (shape "
                             f"{self.shape}) into shape {new_shape}")
        strides = _reshaped_strides(self.shape, self.strides, new_shape)
        if strides is None:
            raise ValueError(f"shape {new_shape} cannot view this array (shape {self.shape}, "
                             f"strides {self.strides}) without a copy; make a C-contiguous "
                             f"copy first: array.astype(array.dtype).reshape(...)")
        return self._view(new_shape, strides, self.offset)

    def transpose(self, *axes: Any) -> DeviceArray:
        """A view with the axes permuted (reversed without ``axes``), as numpy's."""
        order = axes[0] if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)) \
            else axes
        if order is None or not order:
            permutation = tuple(range(self.ndim - 1, -1, -1))
        else:
            permutation = tuple(_axis(a, self.ndim) for a in order)
            if sorted(permutation) != list(range(self.ndim)):
                raise ValueError(f"axes {tuple(order)} are not a permutation of the "
                                 f"{self.ndim} axes")
        return self._view(tuple(self.shape[a] for a in permutation),
                          tuple(self.strides[a] for a in permutation), self.offset)

    @property
    def T(self) -> DeviceArray:  # noqa: N802 (numpy's name)
        """The axes reversed: :meth:`transpose`."""
        return self.transpose()

    def __getitem__(self, key: Any) -> DeviceArray:
        """A view of the same memory: integers, slices (positive steps), ``...`` and None
        index as in numpy; anything else would need a copy and raises TypeError."""
        items = key if isinstance(key, tuple) else (key,)
        if sum(item is Ellipsis for item in items) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        real = sum(item is not None and item is not Ellipsis for item in items)
        if real > self.ndim:
            raise IndexError(f"too many indices for an array of {self.ndim} dimensions: "
                             f"{real} were given")
        if any(item is Ellipsis for item in items):
            at = next(i for i, item in enumerate(items) if item is Ellipsis)
            items = (*items[:at], *(slice(None),) * (self.ndim - real), *items[at + 1:])
        shape: list[int] = []
        strides: list[int] = []
        offset = self.offset
        axis = 0
        for item in items:
            if item is None:
                shape.append(1)
                strides.append(0)
                continue
            extent, stride = self.shape[axis], self.strides[axis]
            if isinstance(item, slice):
                start, stop, step = item.indices(extent)
                if step < 0:
                    raise ValueError("a negative step would need a negative stride, which "
                                     "CANN does not take; index the numpy() copy instead")
                length = len(range(start, stop, step))
                if length:
                    offset += start * stride
                shape.append(length)
                strides.append(stride * step)
            elif isinstance(item, (bool, np.bool_)) or not (
                    isinstance(item, (int, np.integer)) or (
                        isinstance(item, np.ndarray) and item.ndim == 0
                        and item.dtype.kind in "iu")):
                raise TypeError(f"DeviceArray indices are integers, slices, '...' and None "
                                f"(views of the same memory); got {type(item).__name__}, "
                                "which would need a copy: index array.numpy() instead")
            else:
                index = operator.index(item)
                if not -extent <= index < extent:
                    raise IndexError(f"index {index} is out of bounds for axis {axis} with "
                                     f"size {extent}")
                offset += (index % extent) * stride
            axis += 1
        shape += self.shape[axis:]
        strides += self.strides[axis:]
        return self._view(tuple(shape), tuple(strides), offset)

    def _view(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int
              ) -> DeviceArray:
        self.require_live("the array")
        view = DeviceArray(self.buffer, shape, self.dtype, strides, offset)
        view.base = self if self.base is None else self.base
        return view

    def copy_from(self, source: Any, *, stream: Stream | None = None) -> DeviceArray:
        """Copy the host array ``source`` (broadcast to this array's shape, cast as numpy's
        ``copyto`` does with ``casting="same_kind"``) into this array, queued on
        ``stream`` (default the current stream of the array's device) after the work
        queued on it so far; the host data is staged first, so the caller may change it
        at once. Into a view that does not start 64-byte aligned the copy is synchronous
        instead (CANN before 8.5 refuses such asynchronous copies). Returns this array."""
        self.require_live("the array")
        if isinstance(source, DeviceArray):
            raise TypeError("copy_from copies host data; for a device array use copy()")
        source = host_array(source, "source")
        staged = np.empty(self.shape, self.dtype)
        try:
            np.copyto(staged, source, casting="same_kind")
        except (TypeError, ValueError) as error:
            raise type(error)(f"source cannot be copied into this array (shape "
                              f"{self.shape}, dtype {dtype_label(self.dtype)}): {error}"
                              ) from None
        if not self.size:
            return self
        if not dense_c_order(self):
            raise ValueError(f"copy_from writes a C-contiguous array or view; this one has "
                             f"strides {self.strides}: copy into a contiguous array and pass "
                             "it to an operator")
        stream = current_stream(self.device) if stream is None else resolve_stream(stream)
        if stream.device != self.device:
            raise ValueError(f"stream is on device {stream.device} but the array is on "
                             f"{self.device}")
        pointer = self.buffer.pointer
        if pointer is None:  # freed by another thread since the check above
            raise freed_error()
        target = ll.byte_offset(pointer, self.offset * self.dtype.itemsize)
        if ll.address(target) % _ASYNC_COPY_ALIGNMENT:
            # Before CANN 8.5 an asynchronous copy needs both addresses 64-byte aligned
            # (engine.numpy_path): into a view that starts elsewhere, the copy is
            # synchronous, after the work queued on the array.
            self.synchronize()
            self.buffer.copy_sync(ll.host_pointer(staged), staged.nbytes,
                                  ll.MEMCPY_HOST_TO_DEVICE, self.offset * self.dtype.itemsize)
            return self
        staging = take_staging(self.device, staged.nbytes, 0)
        ll.write_host(staging.host_data, staged)
        with placing:
            move_to(stream, (self,))
            stream.queue((staging, self), self._queue_copy_in, staging.host_data,
                         staged.nbytes, stream.handle)
        return self

    def _queue_copy_in(self, host_data: Any, nbytes: int, stream_handle: Any) -> None:
        """Queue the copy of the ``nbytes`` staged at ``host_data`` into this array, the
        address read under the stream's lock (``Stream.queue``), as a launch reads it: freed
        by another thread since, the array is refused here, or its free waits for the copy."""
        pointer = self.buffer.pointer
        if pointer is None:
            raise freed_error()
        ll.memcpy_async(ll.byte_offset(pointer, self.offset * self.dtype.itemsize), nbytes,
                        host_data, nbytes, ll.MEMCPY_HOST_TO_DEVICE, stream_handle)

    def astype(self, dtype: Any) -> DeviceArray:
        """A new device array of ``dtype`` with this array's values (through ``aclnnCast``
        where CANN has it, else through the host), queued as operators are."""
        dtype = np.dtype(dtype)
        acl_dtype(dtype, all_dtypes(), argument="dtype")
        self.require_live("the array")
        if cast_through is None:
            raise RuntimeError("astype needs aclnn_py imported whole")
        return cast_through(self, dtype)

    def free(self) -> None:
        """Give the device memory back now (after pending work on it; after a synchronous
        copy another thread has under way, as that copy ends). Safe to call twice.

        The array is refused by launches first, then the work queued on it is waited
        for, then the memory goes: a launch racing this free in another thread is either
        refused or waited for."""
        if self.base is not None:
            raise ValueError("this DeviceArray is a view: its memory belongs to the array it "
                             "was made from (.base); free that one")
        buffer = self.buffer
        if not buffer.freed:
            buffer.retire()
            self.synchronize()
            buffer.use_on(ll.NULL)  # waited for, and refused to launches since: done
        buffer.free()

    def copy(self) -> DeviceArray:
        """An independent device copy (same device, layout and contents), made once the
        work queued on this array is done."""
        self.require_live("the array")
        self.synchronize()
        buffer = DeviceBuffer(self.buffer.nbytes, self.device)
        if buffer.nbytes:
            try:
                self.buffer.copy_sync(buffer.pointer, buffer.nbytes, ll.MEMCPY_DEVICE_TO_DEVICE)
            except BaseException:
                buffer.free()
                raise
        return DeviceArray(buffer, self.shape, self.dtype, self.strides, self.offset)

    def __copy__(self) -> DeviceArray:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> DeviceArray:
        return self.copy()

    def __reduce__(self) -> NoReturn:
        raise TypeError("a DeviceArray cannot be pickled: its data lives in this process's "
                        "device memory; pickle array.numpy() and send it with to_device()")

    def __enter__(self) -> DeviceArray:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.free()

    def __repr__(self) -> str:
        tracked = self if self.base is None else self.base
        state = "freed" if self.buffer.freed else (
            "pending" if tracked.stream is not None else "ready")
        layout = "" if self.is_contiguous else f", strides={self.strides}, offset={self.offset}"
        return (f"DeviceArray(shape={self.shape}, dtype={dtype_label(self.dtype)}, "
                f"device={self.device}{layout}, {state})")


def host_layout(array: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
    """What of a host array travels, and the element strides that describe it on the device.

    Returns ``(core, strides)``: ``core`` is an array whose memory block (from
    its first element, ``core.size`` elements long) is copied up as is;
    ``strides`` gives ``array``'s view over that block, 0 on broadcast axes.
    """
    if array.flags.c_contiguous:
        return array, contiguous_strides(array.shape)
    shape, itemsize = array.shape, array.itemsize
    broadcast = tuple(s == 0 and n > 1 for n, s in zip(shape, array.strides))
    # The distinct elements: one index along each zero-stride axis.
    core = array[tuple(slice(0, 1) if b else slice(None) for b in broadcast)]
    strides = tuple(s // itemsize for s in core.strides)
    dense = all(s % itemsize == 0 and (s > 0 or n == 1)
                for n, s in zip(core.shape, core.strides)) and _is_dense(core.shape, strides)
    if not dense:
        core = np.ascontiguousarray(core)
    if core.flags.c_contiguous:  # also normalises the strides of length-1 axes
        strides = contiguous_strides(core.shape)
    return core, tuple(0 if b else max(s, 0) for b, s in zip(broadcast, strides))


# torch devices met on tensors -> whether each is an NPU: ``device.type`` builds a new string
# on every read, and a torch.device hashes and compares by its type and index.
_npu_devices: _caches.Bounded[Any, bool] = _caches.bounded(
    "torch devices", 256, holds="whether each torch.device met on a tensor is an NPU",
    of="devices")


def is_npu_tensor(value: Any) -> bool:
    """Whether ``value`` is a tensor on an NPU (torch_npu's, or anything with its protocol:
    ``runtime.npu_tensors``)."""
    device = getattr(value, "device", None)
    try:
        npu = _npu_devices.get(device)
    except TypeError:  # a device that does not hash
        npu = None
    if npu is None:
        npu = getattr(device, "type", None) == "npu"
        kind = type(device)
        if kind.__name__ == "device" and kind.__module__ == "torch":  # (compared by value)
            _npu_devices.put(device, npu)
    return npu and hasattr(value, "untyped_storage")


def host_array(value: Any, argument: str = "array") -> np.ndarray:
    """``value`` as a numpy array, without a copy where it can: anything ``numpy.asarray``
    takes, CPU PyTorch tensors (``requires_grad`` and ``torch.bfloat16`` ones too; PyTorch
    is not imported for this) and other objects exporting CPU memory through DLPack.
    Errors name ``argument``."""
    if isinstance(value, np.ndarray):
        return value
    if is_npu_tensor(value):
        raise TypeError(f"{argument}: a tensor on {value.device} cannot be read from the host; "
                        "operators take NPU tensors as they are, and aclnn_py.asnumpy() reads "
                        "one")
    if type(value).__module__.split(".", 1)[0] == "torch":
        return _torch_array(value, argument)
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (TypeError, ValueError, BufferError, RuntimeError) as error:
            raise TypeError(f"{argument}: {type(value).__name__} exports DLPack, but numpy "
                            f"cannot read it ({error}); pass a numpy array") from None
    try:
        return np.asarray(value)
    except ValueError as error:  # ragged nesting, for one
        raise ValueError(f"{argument}: numpy cannot make an array of it ({error})") from None


def _torch_array(tensor: Any, argument: str) -> np.ndarray:
    tensor = tensor.detach()  # read, not differentiated: the result is a numpy array
    if tensor.device.type != "cpu":
        raise TypeError(f"{argument}: a PyTorch tensor on {tensor.device} cannot be read from "
                        "the host; move it with .cpu() first")
    torch = sys.modules["torch"]
    array: np.ndarray
    if tensor.dtype == torch.bfloat16:  # numpy has no bfloat16: the bits, viewed as ml_dtypes'
        array = tensor.view(torch.int16).numpy().view(bfloat16_dtype())
    else:
        array = tensor.resolve_conj().resolve_neg().numpy()
    return array


def to_device(array: Any, *, device: int | None = None, stream: Stream | None = None
              ) -> DeviceArray:
    """Copy a host array to the device (its distinct elements, once).

    The copy is synchronous, so it is complete before any work queued later on
    any stream; ``stream`` is accepted for symmetry with the operators.

    Examples
    --------
    >>> import numpy as np
    >>> import aclnn_py
    >>> x = aclnn_py.to_device(np.array([1.0, 2.0], np.float32))
    >>> aclnn_py.mse_loss(x, 0.0).numpy()
    array(2.5, dtype=float32)
    """
    if isinstance(array, DeviceArray):
        if device is not None and device != array.device:
            raise ValueError(f"array is a DeviceArray on device {array.device}, not device "
                             f"{device}; copy it through the host: "
                             f"to_device(array.numpy(), device={device})")
        return array
    array = host_array(array)
    acl_dtype(array.dtype, all_dtypes(), argument="array")
    if array.size == 0:
        return DeviceArray(DeviceBuffer(0, device), array.shape, array.dtype)
    core, strides = host_layout(array)
    nbytes = core.size * core.itemsize
    buffer = DeviceBuffer(nbytes, device)
    try:
        buffer.copy_from_address(ll.host_pointer(core), nbytes)
    except BaseException:
        buffer.free()
        raise
    return DeviceArray(buffer, array.shape, array.dtype, strides)


def empty(shape: Any, dtype: Any, *, device: int | None = None,
          stream: Stream | None = None) -> DeviceArray:
    """A new C-contiguous device array with undefined contents. ``shape``: an integer or a
    sequence of integers (Python or numpy ints; a float, string or bool is a TypeError, as
    for ``numpy.empty``).

    Examples
    --------
    >>> import numpy as np
    >>> import aclnn_py
    >>> aclnn_py.empty((2, 3), np.float16).shape
    (2, 3)
    """
    shape = _shape(shape, "shape")
    given = repr(dtype)
    try:
        given = dtype_label(np.dtype(dtype))
        dtype = np.dtype(dtype)
        acl_dtype(dtype, all_dtypes())
    except TypeError:
        names = ", ".join(dtype_label(d) for d in all_dtypes())
        raise TypeError(f"dtype must be one of CANN's dtypes ({names}); got {given}") from None
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > MAX_BYTES:
        raise ValueError(f"shape {shape} of {dtype_label(dtype)} needs {nbytes} bytes, more than "
                         f"any device address space ({MAX_BYTES} bytes)")
    return DeviceArray(DeviceBuffer(nbytes, device), shape, dtype)
