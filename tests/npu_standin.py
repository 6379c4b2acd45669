"""A stand-in for torch_npu's tensors and streams, for testing aclnn_py's torch path here.

torch_npu needs CANN and an NPU, so it cannot be installed where these tests run. This
module implements exactly the protocol aclnn_py reads (``runtime/npu_tensors.py``) with
real ``torch`` dtypes, over memory that another ACL user in the process allocates: it
calls the emulator's own ``aclrtMalloc``/``aclrtMemcpy``/``aclrtCreateStream`` through
ctypes, as torch_npu calls CANN's. ``record_stream`` and the reads of ``npu_stream`` are
logged, so tests can check what aclnn_py did with them.
"""

from __future__ import annotations

import ctypes
import math
import sys
import types
from typing import Any

import numpy as np
import torch

from aclnn_py._c import lowlevel as ll
from aclnn_py.ops.dtypes import dtype_named

H2D, D2H = 1, 2


_opened: dict[str, ctypes.CDLL] = {}


def _runtime() -> ctypes.CDLL:
    """The runtime library aclnn_py loaded (the emulator's), opened again through ctypes,
    initialised as torch_npu initialises ACL (``aclInit``, counted with aclnn_py's own)."""
    path = str(ll.libraries().installation.paths["runtime"])
    runtime = _opened.get(path)
    if runtime is None:
        runtime = ctypes.CDLL(path)
        status = runtime.aclInit(None)
        assert status in (0, 100002), status  # 100002: ACL was initialised already
        _opened[path] = runtime
    return runtime


def _on(device: int) -> ctypes.CDLL:
    """The runtime with ``device`` current in this thread. The device is never reset, as
    torch_npu keeps its devices for the process (a reset to zero would release their
    memory and streams); CANN counts every ``aclrtSetDevice``."""
    runtime = _runtime()
    assert runtime.aclrtSetDevice(device) == 0
    return runtime


class NpuDevice:
    """``tensor.device``: type "npu" and an index, as torch.device("npu", index) is."""

    type = "npu"

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"npu:{self.index}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NpuDevice) and other.index == self.index

    def __hash__(self) -> int:
        return hash(("npu", self.index))


class Storage:
    """``untyped_storage()``: device memory from ``aclrtMalloc``, freed with ``aclrtFree``
    when the last tensor over it goes (as torch's allocator would give it back)."""

    def __init__(self, nbytes: int, device: int) -> None:
        self.runtime = _runtime()
        self.device = device
        self._nbytes = nbytes
        self.pointer = ctypes.c_void_p()
        if nbytes:
            _on(device)
            status = self.runtime.aclrtMalloc(ctypes.byref(self.pointer), ctypes.c_size_t(nbytes),
                                              0)
            assert status == 0, status

    def nbytes(self) -> int:
        return self._nbytes

    def data_ptr(self) -> int:
        return self.pointer.value or 0

    def __del__(self) -> None:
        if self.pointer.value:
            self.runtime.aclrtFree(self.pointer)
            self.pointer = ctypes.c_void_p()


class NpuTensor:
    """The protocol of a torch NPU tensor, and what tests need to fill and read one."""

    recorded: list[tuple[int, Any]] = []  # (id of the tensor, stream) per record_stream call

    def __init__(self, storage: Storage, shape: tuple[int, ...], dtype: torch.dtype,
                 strides: tuple[int, ...] | None = None, offset: int = 0) -> None:
        self._storage = storage
        self.shape = torch.Size(shape)
        self.dtype = dtype
        steps, step = [], 1
        for extent in reversed(shape):
            steps.insert(0, step)
            step *= max(extent, 1)
        self._strides = tuple(steps) if strides is None else tuple(strides)
        self._offset = offset
        self.device = NpuDevice(storage.device)

    @classmethod
    def empty(cls, shape: tuple[int, ...], dtype: torch.dtype, device: int = 0) -> NpuTensor:
        itemsize = torch.empty((), dtype=dtype).element_size()
        return cls(Storage(math.prod(shape) * itemsize, device), tuple(shape), dtype)

    @classmethod
    def from_numpy(cls, array: np.ndarray, dtype: torch.dtype, device: int = 0) -> NpuTensor:
        """A contiguous tensor with ``array``'s values (cast to ``dtype``), copied up."""
        tensor = cls.empty(array.shape, dtype, device)
        host = np.ascontiguousarray(array, dtype=tensor.numpy_dtype)
        if host.nbytes:
            runtime = _on(device)
            assert runtime.aclrtMemcpy(ctypes.c_void_p(tensor.data_ptr()), ctypes.c_size_t(
                host.nbytes), host.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(
                host.nbytes), H2D) == 0
        return tensor

    @property
    def numpy_dtype(self) -> np.dtype:
        return dtype_named(str(self.dtype).removeprefix("torch."))

    def element_size(self) -> int:
        return self.numpy_dtype.itemsize

    def stride(self) -> tuple[int, ...]:
        return self._strides

    def storage_offset(self) -> int:
        return self._offset

    def untyped_storage(self) -> Storage:
        return self._storage

    def data_ptr(self) -> int:
        base = self._storage.data_ptr()
        return base + self._offset * self.element_size() if base else 0

    def dim(self) -> int:
        return len(self.shape)

    def new_empty(self, shape: Any, *, dtype: torch.dtype | None = None) -> NpuTensor:
        return NpuTensor.empty(tuple(shape), self.dtype if dtype is None else dtype,
                               self.device.index)

    def record_stream(self, stream: Any) -> None:
        NpuTensor.recorded.append((id(self), stream))

    def as_strided(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int
                   ) -> NpuTensor:
        """A view over the same storage (as ``torch.as_strided``)."""
        return NpuTensor(self._storage, shape, self.dtype, strides, offset)

    def numpy(self) -> np.ndarray:
        """The values, read back through the storage (a test's own D2H copy)."""
        storage = np.zeros(self._storage.nbytes() // self.element_size(), self.numpy_dtype)
        if storage.nbytes:
            runtime = _on(self.device.index)
            assert runtime.aclrtSynchronizeDevice() == 0
            assert runtime.aclrtMemcpy(storage.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(
                storage.nbytes), ctypes.c_void_p(self._storage.data_ptr()), ctypes.c_size_t(
                storage.nbytes), D2H) == 0
        itemsize = self.element_size()
        return np.lib.stride_tricks.as_strided(
            storage[self._offset:], tuple(self.shape),
            tuple(s * itemsize for s in self._strides)).copy()


class NpuStream:
    """A torch NPU stream: its ``aclrtStream`` (created through ctypes) as ``npu_stream``;
    every read of it is counted (torch_npu flushes its task queue there)."""

    def __init__(self, device: int = 0) -> None:
        self.runtime = _runtime()
        self.device_index = device
        self.device = NpuDevice(device)
        self.handle = ctypes.c_void_p()
        _on(device)
        assert self.runtime.aclrtCreateStream(ctypes.byref(self.handle)) == 0
        self.reads = 0

    @property
    def npu_stream(self) -> int:
        self.reads += 1
        return self.handle.value

    def close(self) -> None:
        """Destroy the stream, telling aclnn_py first (as a C library's owner of a stream
        would: aclnn_py never destroys a stream it did not create)."""
        if self.handle.value:
            import aclnn_py

            aclnn_py.Stream.from_handle(self.handle.value, self.device_index).close()
            self.runtime.aclrtSynchronizeStream(self.handle)
            self.runtime.aclrtDestroyStream(self.handle)
            self.handle = ctypes.c_void_p()


def fake_torch_npu(current: dict[int, NpuStream]) -> types.ModuleType:
    """A ``torch_npu`` module with what aclnn_py uses of it: ``npu.current_stream(device)``
    returning ``current[device]``."""
    module = types.ModuleType("torch_npu")
    module.npu = types.SimpleNamespace(current_stream=lambda device=None: current[device or 0])
    return module


def install(monkeypatch: Any, current: dict[int, NpuStream]) -> types.ModuleType:
    module = fake_torch_npu(current)
    monkeypatch.setitem(sys.modules, "torch_npu", module)
    return module
