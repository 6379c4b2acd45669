"""The one launch path: a repeatable executor, rebound to new arrays and relaunched.

A :class:`RepeatableLaunch` owns what phase 1 made for one call signature
(the aclTensors, the repeatable executor, the workspace). Plans hold one;
the per-stream launch cache holds one per signature. Each launch queues a
hold on the stream for this object and its arrays, so everything a queued
launch uses stays alive until the stream is synchronised, whichever owner is
dropped first.

The order inside :meth:`RepeatableLaunch.launch` is what keeps results right
when a call fails or is interrupted part-way:

1. work on other streams that used the arrays is waited for;
2. only changed addresses are rebound, each marked unknown until CANN has
   taken it, so a later launch never trusts a half-done rebind;
3. the arrays are marked as used by the stream, and the hold is queued,
   *before* the launch (``Stream.queue``), so queued work is never left
   unprotected, and no synchronisation that began earlier can drop the hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _lowlevel as ll
from ._arrays import DeviceArray
from ._memory import DeviceBuffer
from ._runtime import AclScalar, AclTensor, Executor, Stream
from ._specs import OperatorSpec

# aclScalar attributes travel as float32 values: CANN casts them to the computation dtype.
_SCALAR_DTYPE = ll.constant("ACL_FLOAT")

# A bound address that equals no pointer, a freed buffer's None included.
_UNKNOWN = object()


class RepeatableLaunch:
    """Phase 1 of ``operator`` over ``arrays`` (its inputs, then its one output), kept
    for relaunching on any stream of the arrays' device."""

    __slots__ = ("operator", "names", "_tensors", "_scalars", "_executor", "_handle", "_launch",
                 "_workspace", "_workspace_pointer", "_workspace_size", "_addresses",
                 "__weakref__")

    def __init__(self, spec: OperatorSpec, c_attributes: tuple[Any, ...],
                 arrays: Sequence[DeviceArray], device: int) -> None:
        self.operator = spec.cann
        self.names = spec.names
        self._tensors: list[AclTensor] = []
        self._scalars: list[AclScalar] = []
        self._handle = None
        try:
            for array in arrays:
                self._tensors.append(array.tensor(spec.min_cann_rank))
            handles = [tensor.handle for tensor in self._tensors]
            arguments = []
            for attribute, value in zip(spec.attributes, c_attributes):
                if attribute.c_type == "const aclScalar *":
                    scalar = AclScalar(value, _SCALAR_DTYPE)
                    self._scalars.append(scalar)
                    value = scalar.handle
                arguments.append(value)
            self._executor = Executor(spec.cann, *handles[:-1], *arguments, handles[-1],
                                      keepalive=(*self._tensors, *self._scalars))
            self._executor.make_repeatable()
            self._workspace = DeviceBuffer(self._executor.workspace_size, device)
        except BaseException:
            self._release()
            raise
        self._workspace_pointer = self._workspace.pointer
        self._workspace_size = self._executor.workspace_size
        self._launch = self._executor.launcher
        self._addresses = [array.buffer.pointer for array in arrays]
        self._handle = self._executor.handle

    @property
    def workspace_size(self) -> int:
        return self._executor.workspace_size

    def launch(self, stream: Stream, arrays: Sequence[DeviceArray]) -> None:
        """Queue the call on ``stream`` over ``arrays``, laid out as the ones given at
        construction (the caller checked that)."""
        for array in arrays:
            other = array.stream
            if other is not stream:
                if other is not None:
                    array.synchronize()
                array.stream = stream
        stream.queue((self, arrays), self._bind_and_launch, arrays, stream.handle)

    def _bind_and_launch(self, arrays: Sequence[DeviceArray], stream_handle: Any) -> None:
        """Rebind what changed, then launch. Runs under the stream's hold lock, which also
        orders every launch of this object (a plan or a cache entry launches on one
        stream only): an array freed by another thread is refused here or waited for by
        its free, and a retired launch is refused here or waited for by the retiring
        synchronisation."""
        handle = self._handle
        if handle is None:
            raise ValueError(f"{self.operator}: this launch was closed")
        for index, (array, address) in enumerate(zip(arrays, self._addresses)):
            pointer = array.buffer.pointer
            # By address when not the same pointer object: the pool reuses blocks.
            if pointer is not address and pointer != address:
                self._rebind(handle, index, array)
        self._launch(self._workspace_pointer, self._workspace_size, handle, stream_handle)

    def _rebind(self, handle: Any, index: int, array: DeviceArray) -> None:
        array.require_live(self.names[index])
        pointer = array.buffer.pointer
        addresses = self._addresses
        addresses[index] = _UNKNOWN  # until CANN has taken the new address
        tensor = self._tensors[index].handle
        if index == len(addresses) - 1:
            ll.set_output_tensor_addr(handle, 0, tensor, pointer)
        else:
            ll.set_input_tensor_addr(handle, index, tensor, pointer)
        addresses[index] = pointer

    def retire(self) -> None:
        """Refuse launches from now on; one being queued on the stream right now is
        waited for by the next synchronisation of that stream."""
        self._handle = None

    def close(self) -> None:
        """Retire, then release the executor, workspace and aclTensors now; the caller
        has made sure no queued work uses them. Safe to call twice."""
        self._handle = None
        self._release()

    def _release(self) -> None:
        executor = getattr(self, "_executor", None)
        if executor is not None:
            executor.close()
        workspace = getattr(self, "_workspace", None)
        if workspace is not None:
            workspace.free()
        for handle in (*self._tensors, *self._scalars):
            handle.destroy()

    def __reduce__(self):
        raise TypeError("a launch cannot be pickled: it holds CANN executors of this process")
