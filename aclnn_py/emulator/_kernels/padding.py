"""Padding kernels: reflection, replication and circular padding over the last 1, 2 or 3 dims,
and their gradients (aclnnConstantPadNd lives in :mod:`.shapes`).

padding lists (before, after) pairs from the last dim backwards, as PyTorch's pad: (left,
right) for 1-d, then (top, bottom), then (front, back). Each padded dim reads its input
through an index map (reflection: mirrored without repeating the edge; replication: the
edge repeated; circular: wrapped); a negative width crops (circular padding wraps over what
the crop leaves, as PyTorch's). Each gradient sums the output
gradient back through the same maps.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import output_shapes, store, tensor_format, widen
from .elementwise import ANY
from .elementwise import register as builtin
from .nn import _format_name

MODES = {"Reflection": "reflect", "Replication": "edge", "Circular": "wrap"}


def _source(size: int, before: int, after: int, mode: str) -> Any:
    """The input index each output position of a dim of ``size`` padded by (before, after)
    reads."""
    if mode == "wrap":  # a negative width crops first; the rest wraps over what is left
        start, kept = max(-before, 0), size - max(-before, 0) - max(-after, 0)
        return start + np.arange(-max(before, 0), kept + max(after, 0)) % max(kept, 1)
    position = np.arange(-before, size + after)
    if mode == "edge":
        return np.clip(position, 0, size - 1)
    if size == 1:
        return np.zeros_like(position)
    period = 2 * (size - 1)
    folded = np.abs(position) % period
    return np.where(folded > size - 1, period - folded, folded)


def _pairs(padding: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(padding[2 * i], padding[2 * i + 1]) for i in range(len(padding) // 2)]


def _pad_check(self: np.ndarray, padding: tuple[int, ...], out: np.ndarray, dims: int,
               mode: str, operator: str, name: str = "out") -> None:
    """ops-math conversion/mirror_pad/op_api/aclnn_reflection_pad{1,2,3}d.cpp, pad_v3/op_api/
    aclnn_replication_pad{1,2,3}d.cpp and circular_pad/op_host/op_api/circular_pad_common.h
    CheckShape: self of dims + 1 or dims + 2 dims, ``name`` of as many, padding of 2 dims
    values; for reflection every width below its dim's extent; ``name`` of the padded shape
    (``operator``'s output rule).
    Then the empty case: an empty self or out is refused unless only the batch (of a
    dims + 2-d self) is 0."""
    if self.ndim not in (dims + 1, dims + 2):
        raise ValueError(f"self has {self.ndim} dims; it must have {dims + 1} or {dims + 2}")
    target = out
    if target.ndim != self.ndim:
        raise ValueError(f"self and {name} must have the same rank: {self.ndim} and "
                         f"{target.ndim}")
    if len(padding) != 2 * dims:
        raise ValueError(f"padding has {len(padding)} values; it must have {2 * dims}")
    if mode == "reflect":
        for i, (before, after) in enumerate(_pairs(padding)):
            extent = self.shape[self.ndim - 1 - i]
            if before >= extent or after >= extent:
                raise ValueError(f"padding ({before}, {after}) must be below the extent "
                                 f"{extent} of self's dim {self.ndim - 1 - i}")
    wanted = output_shapes(operator, self=self, padding=padding)["out"]
    if tuple(target.shape) != wanted:
        raise ValueError(f"{name} has shape {list(target.shape)}; padded, self is "
                         f"{list(wanted)}")


def _empty_check(self: np.ndarray, out: np.ndarray, dims: int) -> None:
    if self.size and out.size:
        return
    if self.ndim == dims + 1 or 0 in self.shape[1:]:
        raise ValueError(f"self has shape {list(self.shape)}: only the batch of a "
                         f"{dims + 2}-d self may be 0")


def _backward_empty_check(kind: str, dims: int, gradOutput: np.ndarray,
                          self: np.ndarray) -> None:
    """The gradients' empty case: an empty gradOutput or self is refused when a non-batch dim
    of self is 0, and a self without batch is refused outright for the 3-d gradients, for
    ReplicationPad1dBackward (pad1d_backward_common.h Pad1dBwdHandleEmptyTensor) and for
    ReplicationPad2dBackward (aclnn_pad2d_backward.cpp, mode edge)."""
    if gradOutput.size and self.size:
        return
    unbatched = self.ndim == dims + 1
    if unbatched and (dims == 3 or (kind == "Replication" and dims in (1, 2))):
        raise ValueError(f"self has shape {list(self.shape)}: an empty {dims + 1}-d self is "
                         "refused")
    if 0 in self.shape[1:]:
        raise ValueError(f"self has shape {list(self.shape)}: only its first dim may be 0")


def _same(self: np.ndarray, **others: np.ndarray) -> None:
    for name, other in others.items():
        if other.dtype != self.dtype:
            raise ValueError(f"{name} has dtype {other.dtype.name} and self "
                             f"{self.dtype.name}: they must be the same")
        if tensor_format(other) != tensor_format(self):
            raise ValueError(f"{name} has format {_format_name(tensor_format(other))} and self "
                             f"{_format_name(tensor_format(self))}: they must be the same")


def _forward(self: np.ndarray, padding: tuple[int, ...], out: np.ndarray, mode: str) -> None:
    if self.size == 0 or out.size == 0:
        return
    result = np.asarray(self)
    for i, (before, after) in enumerate(_pairs(padding)):
        axis = self.ndim - 1 - i
        result = np.take(result, _source(self.shape[axis], before, after, mode), axis=axis)
    store(out, result)


def _backward(gradOutput: np.ndarray, self: np.ndarray, padding: tuple[int, ...],
              gradInput: np.ndarray, mode: str) -> None:
    """The adjoint of :func:`_forward`: per padded dim, the gradient times the one-hot
    (output, input) matrix of its index map."""
    if gradInput.size == 0:
        return
    result = widen(gradOutput)
    for i, (before, after) in enumerate(_pairs(padding)):
        axis = self.ndim - 1 - i
        size = self.shape[axis]
        source = _source(size, before, after, mode)
        matrix = np.zeros((source.size, size), result.dtype)
        matrix[np.arange(source.size), source] = 1
        result = np.moveaxis(np.tensordot(result, matrix, axes=([axis], [0])), -1, axis)
    store(gradInput, result)


def _register(kind: str, dims: int) -> None:
    mode = MODES[kind]
    name = f"aclnn{kind}Pad{dims}d"

    def check(self: np.ndarray, padding: tuple[int, ...], out: np.ndarray) -> None:
        _same(self, out=out)
        _pad_check(self, padding, out, dims, mode, name)
        _empty_check(self, out, dims)

    def compute(self: np.ndarray, padding: tuple[int, ...], out: np.ndarray) -> None:
        _forward(self, padding, out, mode)

    def backward_check(gradOutput: np.ndarray, self: np.ndarray, padding: tuple[int, ...],
                       gradInput: np.ndarray) -> None:
        """The gradients' op_apis (pad_v4_grad, pad_v3_grad_replicate's aclnn_pad2d_backward
        and aclnn_replication_pad1d_backward, pad_v3_grad_replication's aclnn_pad3d_backward,
        circular_pad_grad) CheckShape: gradInput of self's shape, gradOutput, self and
        gradInput of one rank (dims + 1 or dims + 2), dtype and format; padding of 2 dims
        values (reflection: each below its extent); gradOutput of the padded shape."""
        _same(self, gradOutput=gradOutput, gradInput=gradInput)
        if gradInput.shape != self.shape:
            raise ValueError(f"gradInput has shape {list(gradInput.shape)}; it must be self's "
                             f"{list(self.shape)}")
        _pad_check(self, padding, gradOutput, dims, mode, name, "gradOutput")
        _backward_empty_check(kind, dims, gradOutput, self)

    def backward(gradOutput: np.ndarray, self: np.ndarray, padding: tuple[int, ...],
                 gradInput: np.ndarray) -> None:
        _backward(gradOutput, self, padding, gradInput, mode)

    compute.__doc__ = f"self {kind.lower()}-padded over its last {dims} dims."
    backward.__doc__ = f"The gradient of aclnn{kind}Pad{dims}d."
    builtin(name, dtypes=ANY, check=check)(compute)
    builtin(f"{name}Backward", dtypes=ANY, check=backward_check)(backward)


for _kind, _dims in (("Reflection", 1), ("Reflection", 2), ("Reflection", 3),
                     ("Replication", 1), ("Replication", 2), ("Replication", 3),
                     ("Circular", 2), ("Circular", 3)):
    _register(_kind, _dims)
