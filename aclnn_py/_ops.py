"""The numpy-facing operators, over the two-phase aclnn machinery in _runtime."""

from __future__ import annotations

import enum
from contextlib import ExitStack
from typing import Any, Union

import numpy as np

from ._dtypes import acl_dtype
from ._runtime import AclTensor, DeviceBuffer, Executor, default_stream


class Reduction(enum.IntEnum):
    """How a loss reduces over elements; the values are CANN's (and PyTorch's)."""

    NONE = 0
    MEAN = 1
    SUM = 2


ReductionLike = Union[str, int, Reduction]


def _reduction(value: ReductionLike) -> Reduction:
    accepted = "'none', 'mean', 'sum', 0, 1, 2 or aclnn_py.Reduction"
    if isinstance(value, str):
        try:
            return Reduction[value.upper()]
        except KeyError:
            raise ValueError(f"reduction must be {accepted}, got {value!r}") from None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        try:
            return Reduction(int(value))
        except ValueError:
            raise ValueError(f"reduction must be {accepted}, got {value!r}") from None
    raise ValueError(f"reduction must be {accepted}, got {value!r}")


class _DeviceOperand:
    """A C-contiguous copy of a host array on the device, described by an aclTensor."""

    def __init__(self, array: np.ndarray, acl_type: int, stack: ExitStack) -> None:
        array = np.asarray(array, order="C")  # ascontiguousarray would make 0-d arrays 1-d
        self.buffer = stack.enter_context(DeviceBuffer.from_host(array))
        self.tensor = stack.enter_context(
            _describe(self.buffer, array.shape, array.dtype, acl_type))


def _describe(buffer: DeviceBuffer, shape: tuple[int, ...], dtype: np.dtype, acl_type: int
              ) -> AclTensor:
    """An aclTensor for a C-contiguous array of ``shape`` at the start of ``buffer``."""
    return AclTensor(shape, acl_type, _contiguous_strides(shape), 0,
                     buffer.nbytes // dtype.itemsize, buffer.pointer)


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = []
    step = 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _run(operator: str, arguments: tuple[Any, ...], tensors: tuple[AclTensor, ...]) -> None:
    """Phase 1, workspace, phase 2 on the default stream, and a sync before returning."""
    stream = default_stream()
    with ExitStack() as stack:
        executor = stack.enter_context(Executor(operator, *arguments, keepalive=tensors))
        workspace = stack.enter_context(DeviceBuffer(executor.workspace_size))
        executor.launch(workspace if workspace.nbytes else None, stream)
        stream.synchronize()


def mse_loss_backward(grad: Any, x: Any, y: Any, reduction: ReductionLike = "mean"
                      ) -> np.ndarray:
    """Gradient of the mean squared error loss with respect to ``x`` (``aclnnMseLossBackward``).

    Computes ``grad * (x - y) * 2 / x.size`` for ``reduction="mean"`` and
    ``grad * (x - y) * 2`` for ``"none"`` and ``"sum"``, on the device.

    Parameters
    ----------
    grad, x, y : array_like
        float32 arrays of one shape: the gradient of the loss, the input and the target.
    reduction : {"none", "mean", "sum"}, int or Reduction
        The reduction the forward loss used.

    Returns
    -------
    numpy.ndarray
        A new float32 array of the inputs' shape.
    """
    mode = _reduction(reduction)
    arrays = {"grad": np.asarray(grad), "x": np.asarray(x), "y": np.asarray(y)}
    float32 = np.dtype(np.float32)
    acl_types = {name: acl_dtype(a.dtype, (float32,), argument=name) for name, a in arrays.items()}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1:
        described = ", ".join(f"{name} {a.shape}" for name, a in arrays.items())
        raise ValueError(f"grad, x and y must have one shape, got {described}")
    result = np.empty(arrays["x"].shape, float32)
    with ExitStack() as stack:
        operands = [_DeviceOperand(arrays[name], acl_types[name], stack)
                    for name in ("grad", "x", "y")]
        out_buffer = stack.enter_context(DeviceBuffer(result.nbytes))
        out = stack.enter_context(_describe(out_buffer, result.shape, float32, acl_types["x"]))
        tensors = tuple(o.tensor for o in operands) + (out,)
        _run("aclnnMseLossBackward",
             (operands[0].tensor.handle, operands[1].tensor.handle, operands[2].tensor.handle,
              int(mode), out.handle),
             tensors)
        out_buffer.copy_to_host(result)
    return result
