"""The operators: one-line functions over the operator table, and their plans.

Each function is ``_dispatch.call`` with its row of the table (``_specs``):
validation, the numpy and device-array paths, the per-stream launch cache and
the plans all come from the row.
"""

from __future__ import annotations

from typing import Any

from ._dispatch import ArrayLike, Plan, call
from ._runtime import Stream
from ._specs import MSE_LOSS, MSE_LOSS_BACKWARD, ReductionLike


def mse_loss_backward(grad: ArrayLike, x: ArrayLike, y: ArrayLike,
                      reduction: ReductionLike = "mean", *, out: Any = None,
                      stream: Stream | None = None) -> Any:
    """Gradient of the mean squared error with respect to ``x`` (``aclnnMseLossBackward``).

    Computes ``grad * (x - y) * 2 / x.size`` for ``reduction="mean"`` and
    ``grad * (x - y) * 2`` for ``"none"`` and ``"sum"``, on the device.

    Parameters
    ----------
    grad : array_like, DeviceArray or float
        Gradient of the loss: an array broadcastable with ``x`` and ``y`` (a 0-d
        array for a "mean" or "sum" loss), or a Python number, which takes
        ``x``'s dtype.
    x, y : array_like or DeviceArray
        Input and target. ``grad``, ``x`` and ``y`` share one dtype: float32,
        float16 or bfloat16 (``ml_dtypes.bfloat16``; Atlas A2/A3 and Ascend 950
        only). Each has 0 to 8 dimensions; the three broadcast together.
    reduction : {"none", "mean", "sum"}, int or Reduction
        The reduction the forward loss used. The mean divisor is ``x.size``.
    out : numpy.ndarray or DeviceArray, optional
        C-contiguous (and writable) array of the broadcast shape and a supported
        dtype, which may differ from the inputs' (CANN computes in the input
        dtype and casts); a DeviceArray when any input is one. Filled and returned.
    stream : Stream, optional
        Where the work is queued; default: this thread's current stream on the arrays' device.

    Returns
    -------
    numpy.ndarray or DeviceArray
        The gradient, of the broadcast shape and the inputs' dtype (or ``out``).
        A numpy result is complete; a DeviceArray result may still be computing
        (its ``numpy()`` waits).

    Raises
    ------
    TypeError
        Unsupported or mismatched dtypes, bfloat16 on an SoC without it, an
        ``out`` of the wrong kind.
    ValueError
        Unknown reduction, more than 8 dimensions, shapes that do not broadcast,
        an unsuitable ``out``, arrays on several devices.
    AclError
        CANN refused the call or failed; carries CANN's status and message.
    """
    return call(MSE_LOSS_BACKWARD, (grad, x, y), (reduction,), out, stream)


def mse_loss(x: ArrayLike, y: ArrayLike, reduction: ReductionLike = "mean", *,
             out: Any = None, stream: Stream | None = None) -> Any:
    """Mean squared error between ``x`` and ``y`` (``aclnnMseLoss``).

    ``(x - y) ** 2`` elementwise for ``reduction="none"``; its mean or sum (a
    0-d array) otherwise. For empty inputs CANN returns NaN ("mean") or 0 ("sum").

    Parameters
    ----------
    x, y : array_like or DeviceArray
        float32, float16 or bfloat16 arrays of 0 to 8 dimensions that broadcast
        together; different dtypes are promoted as CANN does (float16 with
        bfloat16 gives float32). A Python number for ``y`` takes ``x``'s dtype.
    reduction : {"none", "mean", "sum"}, int or Reduction
    out : numpy.ndarray or DeviceArray, optional
        C-contiguous (and writable) array of the result's shape (the broadcast
        shape, or ``()``) and a supported dtype. Filled and returned.
    stream : Stream, optional
        Where the work is queued; default: this thread's current stream on the arrays' device.

    Returns
    -------
    numpy.ndarray or DeviceArray
        The loss, in the promoted dtype (or ``out``).

    Raises
    ------
    TypeError, ValueError, AclError
        As for :func:`mse_loss_backward`.
    """
    return call(MSE_LOSS, (x, y), (reduction,), out, stream)


class MseLossBackwardPlan(Plan):
    """A reusable ``aclnnMseLossBackward`` over device arrays.

    ``MseLossBackwardPlan(grad, x, y, reduction="mean", *, out=None, stream=None)``;
    ``plan.run(grad=None, x=None, y=None, out=None)`` relaunches, rebinding any arrays
    given (same shapes, dtypes and layouts), and returns ``out``. Arguments and results
    as for :func:`mse_loss_backward`.
    """

    spec = MSE_LOSS_BACKWARD


class MseLossPlan(Plan):
    """A reusable ``aclnnMseLoss`` over device arrays (see :class:`MseLossBackwardPlan`):
    ``MseLossPlan(x, y, reduction="mean", *, out=None, stream=None)``."""

    spec = MSE_LOSS
