"""One call given PyTorch NPU tensors or a torch stream: the tensors become DeviceArrays
over their own memory (``runtime.npu_tensors``), and the call runs as over DeviceArrays.

* Stream: the one given (an aclnn_py stream, or a torch NPU stream by its handle); else,
  with torch_npu imported, torch's current stream of the tensors' device, taken so
  that torch's queued work is flushed first, so the call is ordered after the torch work
  before it and before the torch work after it; else aclnn_py's current stream.
* Results the caller did not give are allocated by torch (``tensor.new_empty``, torch's
  allocator on the tensor's device), so torch tensors in give torch tensors out.
* On a torch stream given explicitly, every tensor of the call gets
  ``record_stream(stream)``, so torch's allocator does not hand its memory on before
  the work is done; on an aclnn_py stream, the launch holds the tensors until then.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime.arrays import DeviceArray, is_npu_tensor
from ..runtime.npu_tensors import (
    adopt,
    adopt_new,
    current_torch_stream,
    torch_dtype_of,
)
from ..runtime.streams import Stream, current_stream, is_torch_stream, torch_stream


def involved(values: Any, out: Any = None, stream: Any = None) -> bool:
    """Whether a call over ``values`` (and ``out``, lists looked into) on ``stream`` needs
    a :class:`TensorCall`: a torch NPU tensor or a torch stream is among them."""
    if stream is not None and is_torch_stream(stream):
        return True
    for value in (*values, out):
        if type(value) is DeviceArray or type(value) is np.ndarray or value is None:
            continue
        if isinstance(value, (list, tuple)):
            if involved(value):
                return True
        elif is_npu_tensor(value):
            return True
    return False


class TensorCall:
    """What one call does about torch: adopt its tensors, choose its stream, allocate its
    results with torch, map its DeviceArrays back to the tensors, record streams."""

    def __init__(self, stream: Any) -> None:
        self._given = stream
        self._record_on = stream if stream is not None and is_torch_stream(stream) else None
        self.like: Any = None  # the first tensor adopted: results are allocated like it
        self._like_device = 0  # its device
        self._current_of: int | None = None  # the device whose torch current stream is used
        self._tensors: dict[int, tuple[DeviceArray, Any]] = {}  # id(array) -> (array, tensor)

    def adopt(self, value: Any, argument: str) -> Any:
        """``value`` as the call takes it: a torch NPU tensor as a DeviceArray, else itself."""
        if type(value) is DeviceArray or type(value) is np.ndarray or not is_npu_tensor(value):
            return value
        array = adopt(value, argument)
        self._tensors[id(array)] = (array, value)
        if self.like is None:
            self.like = value
            self._like_device = array.device
        return array

    def stream(self, device: int | None) -> Stream | None:
        """The stream the call runs on (see the module docstring), for arrays on ``device``
        (None: no device array); None for the caller's default."""
        given = self._given
        if given is None:
            if self.like is None:
                return None
            found = current_torch_stream(device) if device is not None else None
            if found is not None:
                self._current_of = device
                return found
            return current_stream(device)
        if self._record_on is not None:
            return torch_stream(given)
        return given  # type: ignore[no-any-return]

    def flush(self) -> None:
        """Before a later launch on the stream :meth:`stream` chose (a plan's run): empty
        torch's task queue of that stream again, as choosing it did."""
        if self._record_on is not None:
            torch_stream(self._record_on)
        elif self._current_of is not None:
            current_torch_stream(self._current_of)

    def record(self, values: Any) -> None:
        """``record_stream`` for the torch tensors among ``values`` on a torch stream given
        explicitly (a plan's run)."""
        stream = self._record_on
        if stream is not None:
            for value in values:
                if is_npu_tensor(value):
                    value.record_stream(stream)

    def new_array(self, shape: tuple[int, ...], dtype: np.dtype) -> DeviceArray:
        """A result: a torch tensor like the first one adopted (on its device), as a
        DeviceArray."""
        torch_dtype = torch_dtype_of(dtype)
        tensor = self.like.new_empty(shape, dtype=torch_dtype)
        array = adopt_new(tensor, shape, torch_dtype, self._like_device)
        self._tensors[id(array)] = (array, tensor)
        return array

    def result(self, value: Any) -> Any:
        """``value`` as the caller gets it back: an adopted array as its torch tensor."""
        if type(value) is DeviceArray:
            found = self._tensors.get(id(value))
            if found is not None and found[0] is value:
                return found[1]
        return value

    def finish(self) -> None:
        """After the launch: ``record_stream`` on a torch stream given explicitly."""
        stream = self._record_on
        if stream is not None:
            for _, tensor in self._tensors.values():
                tensor.record_stream(stream)
