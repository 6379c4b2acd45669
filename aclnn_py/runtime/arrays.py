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
import sys
from typing import Any, NoReturn

import numpy as np

from .. import _caches
from .._c import lowlevel as ll
from ..ops.dtypes import acl_dtype, all_dtypes, bfloat16_dtype, dtype_label
from .handles import Handle
from .memory import DeviceBuffer
from .streams import Stream

# Byte sizes beyond this do not fit a size_t (aclrtMalloc's size) on 64-bit hosts.
MAX_BYTES = 2**63 - 1

_contiguous: dict[tuple[int, ...], tuple[int, ...]] = {}


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """C-order strides of ``shape``, in elements (remembered: shapes repeat across calls)."""
    strides = _contiguous.get(shape)
    if strides is None:
        steps = [0] * len(shape)
        step = 1
        for axis in range(len(shape) - 1, -1, -1):
            steps[axis] = step
            step *= max(shape[axis], 1)
        if len(_contiguous) >= 4096:
            _contiguous.clear()
        strides = _contiguous[shape] = tuple(steps)
    return strides


def _is_dense(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether positive element ``strides`` lay ``shape`` out gap-free in some axis order."""
    step = 1
    for stride, extent in sorted((s, n) for n, s in zip(shape, strides) if n > 1):
        if stride != step:
            return False
        step *= extent
    return True


_layout_ids: dict[tuple[Any, ...], int] = {}
_next_layout_id = itertools.count(1)


def layout_id(shape: tuple[int, ...], acl_type: int, strides: tuple[int, ...], offset: int,
              storage_size: int, device: int) -> int:
    """A small int naming one array layout, so call signatures compare cheaply.

    Ids are never reused: a forgotten layout gets a new id, never another's.
    """
    key = (shape, acl_type, strides, offset, storage_size, device)
    found = _layout_ids.get(key)
    if found is None:
        if len(_layout_ids) >= 1 << 16:
            _layout_ids.clear()
        found = _layout_ids.setdefault(key, next(_next_layout_id))
    return found


_caches.register("contiguous strides", holds="C-order strides by shape", bound="4096 shapes, "
                 "then cleared", size=lambda: len(_contiguous),
                 empty=_caches.emptied(_contiguous.clear))
_caches.register("array layout ids", holds="the id of each array layout seen",
                 bound="65536 layouts, then cleared (ids are never reused)",
                 size=lambda: len(_layout_ids), empty=_caches.emptied(_layout_ids.clear))


def array_description(shape: tuple[int, ...], dtype: np.dtype, strides: tuple[int, ...],
                 nbytes: int, device: int) -> tuple[Any, ...]:
    """The ``DeviceArray.description()`` of an array over ``nbytes`` of device memory."""
    acl_type = acl_dtype(dtype, all_dtypes())
    layout = layout_id(shape, acl_type, strides, 0, nbytes // dtype.itemsize, device)
    return (shape, dtype, acl_type, strides, 0, device, layout)


class DeviceArray:
    """An array in device memory: a buffer plus shape, dtype, element strides and offset.

    Made by :func:`to_device` and :func:`empty`, and returned by operators given
    device inputs. Work that writes it may still be queued (operators on device
    arrays do not wait); :meth:`numpy` waits for it first.
    """

    __slots__ = ("buffer", "shape", "dtype", "strides", "offset", "device", "stream",
                 "acl_dtype", "layout", "__weakref__")

    def __init__(self, buffer: DeviceBuffer, shape: tuple[int, ...], dtype: np.dtype,
                 strides: tuple[int, ...] | None = None, offset: int = 0) -> None:
        self.buffer = buffer
        self.shape = shape
        self.dtype = dtype
        self.acl_dtype = acl_dtype(dtype, all_dtypes())
        self.strides = contiguous_strides(shape) if strides is None else strides
        self.offset = offset
        self.device = buffer.device
        # The stream whose queued work last used this array (None: nothing pending).
        self.stream: Stream | None = None
        self.layout = layout_id(shape, self.acl_dtype, self.strides, offset,
                                self.storage_size, self.device)

    def description(self) -> tuple[Any, ...]:
        """What :meth:`like` copies: everything but the buffer and pending work."""
        return (self.shape, self.dtype, self.acl_dtype, self.strides, self.offset, self.device,
                self.layout)

    @classmethod
    def like(cls, description: tuple[Any, ...], buffer: DeviceBuffer) -> DeviceArray:
        """A new array over ``buffer`` with a :meth:`description` taken earlier (no checks)."""
        array = cls.__new__(cls)
        (array.shape, array.dtype, array.acl_dtype, array.strides, array.offset, array.device,
         array.layout) = description
        array.buffer = buffer
        array.stream = None
        return array

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
        return self.offset == 0 and all(
            n == 1 or s == c for n, s, c in zip(self.shape, self.strides,
                                                 contiguous_strides(self.shape)))

    def tensor(self, min_rank: int = 0) -> Handle:
        """A new aclTensor describing this array, owned by the caller; a 0-d array is
        described as shape [1] when the operator's smallest rank (``min_rank``) is 1."""
        if min_rank and not self.shape:
            return Handle("tensor", (1,), self.acl_dtype, (1,), self.offset, self.storage_size,
                             self.buffer.pointer)
        return Handle("tensor", self.shape, self.acl_dtype, self.strides, self.offset,
                         self.storage_size, self.buffer.pointer)

    def require_live(self, name: str) -> None:
        """ValueError naming the argument ``name`` if this array was freed."""
        if self.buffer.freed:
            raise ValueError(f"{name} is a DeviceArray that was freed")

    def synchronize(self) -> None:
        """Wait for queued work that uses this array."""
        stream = self.stream
        if stream is not None:
            stream.synchronize()
            self.stream = None

    def numpy(self) -> np.ndarray:
        """A new host array with this array's contents (waiting for pending work first)."""
        if self.buffer.freed:
            raise ValueError("this DeviceArray was freed")
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

    def free(self) -> None:
        """Give the device memory back now (after pending work on it). Safe to call twice.

        The array is refused by launches first, then the work queued on it is waited
        for, then the memory goes: a launch racing this free in another thread is either
        refused or waited for."""
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
            ll.memcpy(buffer.pointer, buffer.nbytes, self.buffer.pointer, buffer.nbytes,
                      ll.MEMCPY_DEVICE_TO_DEVICE)
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
        state = "freed" if self.buffer.freed else (
            "pending" if self.stream is not None else "ready")
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


def host_array(value: Any, argument: str = "array") -> np.ndarray:
    """``value`` as a numpy array, without a copy where it can: anything ``numpy.asarray``
    takes, CPU PyTorch tensors (``requires_grad`` and ``torch.bfloat16`` ones too; PyTorch
    is not imported for this) and other objects exporting CPU memory through DLPack.
    Errors name ``argument``."""
    if isinstance(value, np.ndarray):
        return value
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
    """A new C-contiguous device array with undefined contents."""
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"shape must not have negative extents, got {shape}")
    dtype = np.dtype(dtype)
    acl_dtype(dtype, all_dtypes(), argument="dtype")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > MAX_BYTES:
        raise ValueError(f"shape {shape} of {dtype_label(dtype)} needs {nbytes} bytes, more than "
                         f"any device address space ({MAX_BYTES} bytes)")
    return DeviceArray(DeviceBuffer(nbytes, device), shape, dtype)
