"""Gradients of the activations: Hardshrink, Softshrink and Swish backward.

Each formula is its CANN doc's (ops-nn activation/<op>_grad/docs/aclnn<Op>Backward.md), with
PyTorch's autograd as the reference where the doc is silent (NaN, the edges of a piecewise
definition). Floating inputs compute in float32 (float16 and bfloat16 widened, rounded once
into gradInput) or float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .elementwise import compute_dtype, promote_types, real_value, register


def _grad_check(**arguments: Any) -> None:
    """gradOutput, self and gradInput (the first, second and last arguments) have one
    shape."""
    values = list(arguments.values())
    gradOutput, self, gradInput = values[0], values[1], values[-1]
    if not gradOutput.shape == self.shape == gradInput.shape:
        raise ValueError(f"gradOutput {list(gradOutput.shape)}, self {list(self.shape)} and "
                         f"gradInput {list(gradInput.shape)} must have one shape")


def _operands(gradOutput: np.ndarray, self: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gradOutput and self widened to the dtype they compute in."""
    dtype = compute_dtype(promote_types(gradOutput.dtype, self.dtype))
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float32)
    return gradOutput.astype(dtype), self.astype(dtype)


def _store(gradInput: np.ndarray, value: Any) -> None:
    gradInput[...] = np.asarray(value).astype(gradInput.dtype, copy=False)


def _shrink_backward(gradOutput: np.ndarray, self: np.ndarray, lambd: Any,
                     gradInput: np.ndarray) -> None:
    if gradInput.size == 0:
        return
    grad, x = np.broadcast_arrays(*_operands(gradOutput, self))
    bound = x.dtype.type(real_value(lambd))
    # grad outside [-lambd, lambd], 0 inside; a NaN x is outside (PyTorch's autograd)
    _store(gradInput, np.where((x >= -bound) & (x <= bound), x.dtype.type(0), grad))


def _broadcast_check(**arguments: Any) -> None:
    """gradOutput and self broadcast together to gradInput's shape (ops-nn activation/
    hard_shrink_grad/op_api/aclnn_hardshrink_backward.cpp CheckShapeBroadcast, soft_shrink_grad/
    op_api/aclnn_softshrink_backward.cpp CheckShape)."""
    values = list(arguments.values())
    gradOutput, self, gradInput = values[0], values[1], values[-1]
    shape = np.broadcast_shapes(gradOutput.shape, self.shape)
    if shape != gradInput.shape:
        raise ValueError(f"gradOutput {list(gradOutput.shape)} and self {list(self.shape)} "
                         f"broadcast to {list(shape)}, but gradInput has shape "
                         f"{list(gradInput.shape)}")


@register("aclnnHardshrinkBackward", check=_broadcast_check)
def hardshrink_backward(gradOutput: np.ndarray, self: np.ndarray, lambd: Any,
                        gradInput: np.ndarray) -> None:
    """gradOutput where |self| > lambd, else 0 (ops-nn activation/hard_shrink_grad/docs/
    aclnnHardshrinkBackward.md)."""
    _shrink_backward(gradOutput, self, lambd, gradInput)


@register("aclnnSoftshrinkBackward", check=_broadcast_check)
def softshrink_backward(**arguments: Any) -> None:
    """gradOutput where |self| > lambda, else 0 (ops-nn activation/soft_shrink_grad/docs/
    aclnnSoftshrinkBackward.md); its bound is named lambda, a Python keyword."""
    gradOutput, self, lambd, gradInput = arguments.values()
    _shrink_backward(gradOutput, self, lambd, gradInput)


@register("aclnnSwishBackward", check=_grad_check)
def swish_backward(gradOutput: np.ndarray, self: np.ndarray, betaOptional: Any,
                   gradInput: np.ndarray) -> None:
    """gradOutput sigmoid(beta x) (1 + beta x (1 - sigmoid(beta x))), beta 1 when left out
    (ops-nn activation/swish_grad/docs/aclnnSwishBackward.md)."""
    if gradInput.size == 0:
        return
    grad, x = _operands(gradOutput, self)
    beta = x.dtype.type(1.0 if betaOptional is None else real_value(betaOptional))
    sigmoid = 1 / (1 + np.exp(-beta * x))
    _store(gradInput, grad * sigmoid * (1 + beta * x * (1 - sigmoid)))
