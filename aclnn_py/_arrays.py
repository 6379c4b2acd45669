"""Host numpy arrays as aclTensors on the device, moving as few bytes as possible.

An input array is described to CANN as the view it is: its own shape, element
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

from contextlib import ExitStack
from typing import Any

import numpy as np

from . import _lowlevel as ll
from ._memory import DeviceBuffer
from ._runtime import AclTensor, Executor, Stream, default_stream


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """C-order strides of ``shape``, in elements."""
    strides = [0] * len(shape)
    step = 1
    for axis in range(len(shape) - 1, -1, -1):
        strides[axis] = step
        step *= max(shape[axis], 1)
    return tuple(strides)


def _is_dense(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether positive element ``strides`` lay ``shape`` out gap-free in some axis order."""
    axes = sorted((s, n) for n, s in zip(shape, strides) if n > 1)
    step = 1
    for stride, extent in axes:
        if stride != step:
            return False
        step *= extent
    return True


class DeviceOperand:
    """A host array's data on the device plus the aclTensor describing its view."""

    __slots__ = ("buffer", "tensor")

    def __init__(self, array: np.ndarray, acl_dtype: int, stack: ExitStack) -> None:
        shape = array.shape
        itemsize = array.itemsize
        if array.size == 0:
            self.buffer = DeviceBuffer(0)
            self.tensor = stack.enter_context(
                AclTensor(shape, acl_dtype, contiguous_strides(shape), 0, 0, ll.NULL))
            return
        broadcast = tuple(s == 0 and n > 1 for n, s in zip(shape, array.strides))
        # The distinct elements: one index along each zero-stride axis.
        core = array[tuple(slice(0, 1) if b else slice(None) for b in broadcast)]
        strides = tuple(s // itemsize for s in core.strides)
        dense = all(s > 0 or n == 1 for n, s in zip(core.shape, strides)) and \
            _is_dense(core.shape, strides) and all(s % itemsize == 0 for s in core.strides)
        if not dense:
            core = np.ascontiguousarray(core)
        if core.flags.c_contiguous:  # also normalises the strides of length-1 axes
            strides = contiguous_strides(core.shape)
        strides = tuple(0 if b else max(s, 0) for b, s in zip(broadcast, strides))
        self.buffer = stack.enter_context(DeviceBuffer(core.size * itemsize))
        address = core.__array_interface__["data"][0]
        self.buffer.copy_from_address(ll.ffi.cast("void *", address), core.size * itemsize)
        self.tensor = stack.enter_context(
            AclTensor(shape, acl_dtype, strides, 0, core.size, self.buffer.pointer))


class DeviceResult:
    """Device memory for an operator's C-contiguous result, copied into ``host`` after the run."""

    __slots__ = ("buffer", "tensor", "host")

    def __init__(self, host: np.ndarray, acl_dtype: int, stack: ExitStack) -> None:
        self.host = host
        self.buffer = stack.enter_context(DeviceBuffer(host.nbytes))
        self.tensor = stack.enter_context(
            AclTensor(host.shape, acl_dtype, contiguous_strides(host.shape), 0, host.size,
                      self.buffer.pointer))

    def fetch(self) -> np.ndarray:
        self.buffer.copy_to_host(self.host)
        return self.host


def run_operator(operator: str, arguments: tuple[Any, ...], tensors: tuple[AclTensor, ...],
                 stream: Stream | None = None) -> None:
    """Phase 1, workspace, phase 2 on ``stream`` (default stream), then wait for it."""
    stream = stream or default_stream()
    with ExitStack() as stack:
        executor = stack.enter_context(Executor(operator, *arguments, keepalive=tensors))
        workspace = stack.enter_context(DeviceBuffer(executor.workspace_size))
        executor.launch(workspace.pointer, stream)
        stream.synchronize()
