"""PyTorch NPU tensors (torch_npu) as DeviceArrays over the memory they live in.

A tensor is recognised by its protocol, never by importing torch or torch_npu: its
``device.type`` is ``"npu"`` and it has ``data_ptr()``, ``stride()``,
``storage_offset()`` and ``untyped_storage()``. :func:`adopt` describes it as it is:
``data_ptr()`` (which includes the storage offset) less the offset's bytes is the
storage's address, ``untyped_storage().nbytes()`` its size, the strides and offset are
the tensor's own, in elements, on the tensor's device index. Nothing is copied; the
array keeps the tensor alive, and so does queued work that uses it.

torch's streams: the ``npu_stream`` attribute of a ``torch.npu.Stream`` is its
``aclrtStream``. torch_npu computes it with ``NPUStream::stream()``, which first empties
the stream's task queue (``MakeSureQueueEmpty``) when ``TASK_QUEUE_ENABLE`` queues
torch's work on the host (Ascend/pytorch: torch_npu/csrc/npu/Stream.cpp,
``THNPStream_get_npu_stream``; torch_npu/csrc/core/npu/NPUStream.cpp,
``NPUStream::stream``). So reading it, after the torch work the call depends on, orders
that work before aclnn_py's. ``torch_npu._C._npu_getCurrentRawStream(device)`` returns the
current stream's handle through the same ``stream()`` (unlike ``..._NoWait``), without
building a ``torch.npu.Stream`` (about 0.2 µs against 12).

:func:`asnumpy` reads any of them back, DeviceArrays included.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

import numpy as np

from .. import _caches
from ..ops.dtypes import dtype_label, dtype_named
from .arrays import (
    Description,
    DeviceArray,
    contiguous_strides,
    host_array,
    is_npu_tensor,
    span,
)
from .memory import borrowed_buffer
from .process import activate
from .streams import ExternalStream, external_stream, synchronize_device, torch_stream

# aclFormat values of the layouts an aclTensor built from strides describes (headers/acl_rt.h:
# ACL_FORMAT_NCHW 0, ACL_FORMAT_NHWC 1, ACL_FORMAT_ND 2, ACL_FORMAT_NDHWC 27,
# ACL_FORMAT_NCDHW 30); torch_npu's private formats (NC1HWC0, FRACTAL_NZ, ...) are not.
_PLAIN_FORMATS = frozenset((0, 1, 2, 27, 30))


_numpy_dtypes: dict[Any, np.dtype] = {}  # torch dtype -> numpy dtype, as met


def numpy_dtype_of(torch_dtype: Any, argument: str) -> np.dtype:
    """The numpy dtype of a torch dtype, by name; TypeError naming ``argument`` for one
    without an aclDataType in aclnn_py's table."""
    found = _numpy_dtypes.get(torch_dtype)
    if found is None:
        found = dtype_named(str(torch_dtype).removeprefix("torch."))
        if found is None:
            raise TypeError(f"{argument} is a torch NPU tensor of dtype {torch_dtype}, which "
                            "has no aclDataType aclnn_py describes; convert it with .to(...) "
                            "first")
        _numpy_dtypes[torch_dtype] = found
    return found


_torch_dtypes: dict[np.dtype, Any] = {}  # numpy dtype -> torch dtype, as met


def torch_dtype_of(dtype: np.dtype) -> Any:
    """The torch dtype named as the numpy ``dtype`` is (torch is imported already: a torch
    tensor was given)."""
    found = _torch_dtypes.get(dtype)
    if found is None:
        found = _torch_dtypes[dtype] = getattr(sys.modules["torch"], dtype_label(dtype))
    return found


# What a torch NPU tensor's DeviceArray description depends on, as torch gives it: (torch
# dtype, sizes, strides, offset in elements, storage bytes, device index). A plain tuple: it
# is built for every tensor of a call, and a named tuple's constructor costs 0.4 µs more.
TensorLayout = tuple[Any, tuple[int, ...], tuple[int, ...], int, int, Optional[int]]

# The DeviceArray description of each tensor layout, checked once: tensors of one layout
# repeat from call to call.
_descriptions: _caches.Bounded[TensorLayout, Description] = _caches.bounded(
    "torch tensor layouts", 4096, holds="the DeviceArray description of each torch NPU "
    "tensor layout met", of="layouts")


def adopt(tensor: Any, argument: str) -> DeviceArray:
    """A DeviceArray over the torch NPU ``tensor``'s memory (no copy); errors name
    ``argument``."""
    offset, nbytes = tensor.storage_offset(), tensor.untyped_storage().nbytes()
    layout = (tensor.dtype, tuple(tensor.shape), tuple(tensor.stride()), offset, nbytes,
              tensor.device.index)
    description = _descriptions.get(layout)
    if description is None:
        description = _described(layout, argument)
    _check_format(tensor, argument)
    return _over(tensor, description, offset, nbytes)


def adopt_new(tensor: Any, shape: tuple[int, ...], torch_dtype: Any, device: int
              ) -> DeviceArray:
    """:func:`adopt` of a ``tensor`` torch has just made as ``new_empty(shape,
    dtype=torch_dtype)`` on ``device``: C-contiguous from offset 0 in the base format, so
    only its storage size and address are read."""
    nbytes = tensor.untyped_storage().nbytes()
    layout = (torch_dtype, shape, contiguous_strides(shape), 0, nbytes, device)
    description = _descriptions.get(layout)
    if description is None:
        description = _described(layout, "the result")
    return _over(tensor, description, 0, nbytes)


def _over(tensor: Any, description: Description, offset: int, nbytes: int) -> DeviceArray:
    """The DeviceArray over ``tensor``, described so: its storage of ``nbytes`` starts
    ``offset`` elements before ``data_ptr()``."""
    address = tensor.data_ptr() - offset * description.dtype.itemsize if nbytes else 0
    return DeviceArray.like(description,
                            borrowed_buffer(address, nbytes, description.device, tensor))


def _described(layout: TensorLayout, argument: str) -> Description:
    """The description of a tensor ``layout``, checked."""
    torch_dtype, shape, strides, offset, nbytes, device = layout
    dtype = numpy_dtype_of(torch_dtype, argument)
    shape = tuple(int(n) for n in shape)
    strides = tuple(int(s) for s in strides)
    if any(s < 0 for s in strides):
        raise ValueError(f"{argument} has negative strides {strides}, which CANN does not "
                         "take; pass tensor.contiguous()")
    if device is None:
        raise ValueError(f"{argument} is an NPU tensor without a device index")
    if int(offset) + span(shape, strides) > int(nbytes) // dtype.itemsize:
        raise ValueError(f"{argument} reaches past its storage: offset {offset} and strides "
                         f"{strides} over {nbytes} bytes")
    activate(device)
    found = DeviceArray(borrowed_buffer(0, int(nbytes), device, None), shape, dtype, strides,
                        int(offset)).description()
    return _descriptions.put(layout, found)


# (the torch_npu module, how to read a tensor's format with it): found once per module.
_format_reader: list[Any] = [None, None]


def _format_of(torch_npu: Any) -> Any:
    """How to read a tensor's aclFormat under ``torch_npu``: the registered operator
    ``torch.ops.npu.get_npu_format`` (its overload, which the Python wrapper
    ``torch_npu.get_npu_format`` calls through two more layers; the overload's own
    ``__call__`` is one more, which only calls its bound operator ``_op``: 1.1 µs
    against 1.5) when torch has it, else ``torch_npu.get_npu_format`` as it is at each call
    (None without it)."""
    if _format_reader[0] is torch_npu:
        return _format_reader[1]
    try:
        overload = sys.modules["torch"].ops.npu.get_npu_format.default
        reader = getattr(overload, "_op", overload)  # (torch/_ops.py, OpOverload.__call__)
    except (KeyError, AttributeError, RuntimeError):  # no torch, or no such operator
        def reader(tensor: Any) -> Any:
            get_format = getattr(torch_npu, "get_npu_format", None)
            return None if get_format is None else get_format(tensor)
    _format_reader[:] = [torch_npu, reader]
    return reader


def _check_format(tensor: Any, argument: str) -> None:
    """TypeError for a tensor torch_npu keeps in a private format (the strides do not
    describe its memory)."""
    torch_npu = sys.modules.get("torch_npu")
    if torch_npu is None:
        return
    read = _format_of(torch_npu)(tensor)
    if read is None:
        return
    found = int(read)
    if found not in _PLAIN_FORMATS:
        raise TypeError(f"{argument} is kept in torch_npu's internal format {found}, which "
                        "its strides do not describe; pass torch_npu.npu_format_cast(tensor, 2) "
                        "(ND)")


def current_torch_stream(device: int) -> ExternalStream | None:
    """torch's current stream of ``device`` with its task queue emptied (module docstring);
    None without torch_npu imported."""
    torch_npu = sys.modules.get("torch_npu")
    if torch_npu is None:
        return None
    raw = getattr(getattr(torch_npu, "_C", None), "_npu_getCurrentRawStream", None)
    if raw is not None:  # NPUStream::stream() as npu_stream reads it, without the Stream object
        return external_stream(raw(device), device)
    return torch_stream(torch_npu.npu.current_stream(device))


def asnumpy(a: Any) -> np.ndarray:
    """``a``'s values as a numpy array, as ``cupy.asnumpy``: a DeviceArray's once its queued
    work is done, a torch NPU tensor's once the work on its device is (torch's queued work
    flushed first), anything else as ``numpy.asarray`` reads it (CPU tensors included)."""
    if isinstance(a, DeviceArray):
        return a.numpy()
    if is_npu_tensor(a):
        array = adopt(a, "a")
        current_torch_stream(array.device)  # torch's task queue goes to the device first
        synchronize_device(array.device)
        return array.numpy()
    return host_array(a, "a")
