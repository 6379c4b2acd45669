"""The operators: one-line functions over the operator table, and their plans.

Each function is ``_dispatch.call`` with its row of the table (``_specs``):
validation, the numpy and device-array paths, the per-stream launch cache and
the plans all come from the row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Union, overload

from numpy.typing import ArrayLike, NDArray

from .engine.devices import call as devices_call
from .engine.dispatch import call
from .engine.plans import Plan
from .ops.specs import (
    ADD,
    L1_LOSS,
    L1_LOSS_BACKWARD,
    MSE_LOSS,
    MSE_LOSS_BACKWARD,
    SMOOTH_L1_LOSS,
    SMOOTH_L1_LOSS_BACKWARD,
    ReductionLike,
)
from .runtime.arrays import DeviceArray
from .runtime.streams import Stream

# What a one-shot call returns: numpy in, numpy out; any DeviceArray in, DeviceArray out.
# DeviceArray has ``__array__`` and so is an ``ArrayLike`` too: its overloads come first.
Result = Union[NDArray[Any], DeviceArray]


@overload
def mse_loss_backward(grad: DeviceArray, x: ArrayLike, y: ArrayLike,
                      reduction: ReductionLike = ..., *, out: DeviceArray | None = ...,
                      stream: Stream | None = ...) -> DeviceArray: ...
@overload
def mse_loss_backward(grad: ArrayLike, x: DeviceArray, y: ArrayLike,
                      reduction: ReductionLike = ..., *, out: DeviceArray | None = ...,
                      stream: Stream | None = ...) -> DeviceArray: ...
@overload
def mse_loss_backward(grad: ArrayLike, x: ArrayLike, y: DeviceArray,
                      reduction: ReductionLike = ..., *, out: DeviceArray | None = ...,
                      stream: Stream | None = ...) -> DeviceArray: ...
@overload
def mse_loss_backward(grad: ArrayLike, x: ArrayLike, y: ArrayLike,
                      reduction: ReductionLike = ..., *, out: NDArray[Any] | None = ...,
                      stream: Stream | None = ...,
                      devices: Sequence[int] | Literal["all"] | None = ...) -> NDArray[Any]: ...


def mse_loss_backward(grad: ArrayLike, x: ArrayLike, y: ArrayLike,
                      reduction: ReductionLike = "mean", *, out: Result | None = None,
                      stream: Stream | None = None,
        devices: Sequence[int] | Literal["all"] | None = None) -> Result:
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
    devices : sequence of int or "all", optional
        Numpy inputs only: split the call along the leading axis of the broadcast result
        across these visible devices, one host thread each, on each device's current
        stream; the rows are joined into one result. ``"none"`` equals the one-device
        result bit for bit; ``"mean"`` still divides by the whole ``x.size`` (each device
        computes ``"sum"`` and its rows are divided on the host, in float32). See the
        README, "Several NPUs and clusters".

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
        an unsuitable ``out``, arrays on several devices; for ``devices=``: ids not
        visible, repeated or none, or ``stream=`` given too (device-array inputs or a
        non-sequence are a TypeError).
    AclError
        CANN refused the call or failed; carries CANN's status and message.
    """
    if devices is not None:
        return devices_call(MSE_LOSS_BACKWARD, (grad, x, y), (reduction,), out, stream, devices)
    return call(MSE_LOSS_BACKWARD, (grad, x, y), (reduction,), out, stream)


@overload
def mse_loss(x: DeviceArray, y: ArrayLike, reduction: ReductionLike = ..., *,
             out: DeviceArray | None = ...,
             stream: Stream | None = ...) -> DeviceArray: ...
@overload
def mse_loss(x: ArrayLike, y: DeviceArray, reduction: ReductionLike = ..., *,
             out: DeviceArray | None = ...,
             stream: Stream | None = ...) -> DeviceArray: ...
@overload
def mse_loss(x: ArrayLike, y: ArrayLike, reduction: ReductionLike = ..., *,
             out: NDArray[Any] | None = ...,
             stream: Stream | None = ...,
             devices: Sequence[int] | Literal["all"] | None = ...) -> NDArray[Any]: ...


def mse_loss(x: ArrayLike, y: ArrayLike, reduction: ReductionLike = "mean", *,
             out: Result | None = None, stream: Stream | None = None,
        devices: Sequence[int] | Literal["all"] | None = None) -> Result:
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
    devices : sequence of int or "all", optional
        As for :func:`mse_loss_backward`; a ``"mean"`` or ``"sum"`` adds the devices'
        partial results in float64 on the host, rounded once to the result's dtype.

    Returns
    -------
    numpy.ndarray or DeviceArray
        The loss, in the promoted dtype (or ``out``).

    Raises
    ------
    TypeError, ValueError, AclError
        As for :func:`mse_loss_backward`.
    """
    if devices is not None:
        return devices_call(MSE_LOSS, (x, y), (reduction,), out, stream, devices)
    return call(MSE_LOSS, (x, y), (reduction,), out, stream)


class MseLossBackwardPlan(Plan):
    """A reusable ``aclnnMseLossBackward`` over device arrays.

    ``MseLossBackwardPlan(grad, x, y, reduction="mean", *, out=None, stream=None)``;
    ``plan.run(grad=None, x=None, y=None, out=None)`` relaunches, rebinding any arrays
    given (same shapes, dtypes and layouts), and returns ``out``. Arguments and results
    as for :func:`mse_loss_backward`.
    """

    spec = MSE_LOSS_BACKWARD

    if TYPE_CHECKING:
        def __init__(self, grad: DeviceArray, x: DeviceArray, y: DeviceArray,
                     reduction: ReductionLike = ..., *,
                     out: DeviceArray | None = ..., stream: Stream | None = ...) -> None: ...

        def run(self, grad: DeviceArray | None = ..., x: DeviceArray | None = ...,
                y: DeviceArray | None = ..., out: DeviceArray | None = ...) -> DeviceArray: ...


class MseLossPlan(Plan):
    """A reusable ``aclnnMseLoss`` over device arrays (see :class:`MseLossBackwardPlan`):
    ``MseLossPlan(x, y, reduction="mean", *, out=None, stream=None)``."""

    spec = MSE_LOSS

    if TYPE_CHECKING:
        def __init__(self, x: DeviceArray, y: DeviceArray, reduction: ReductionLike = ..., *,
                     out: DeviceArray | None = ..., stream: Stream | None = ...) -> None: ...

        def run(self, x: DeviceArray | None = ..., y: DeviceArray | None = ...,
                out: DeviceArray | None = ...) -> DeviceArray: ...


@overload
def l1_loss(x: DeviceArray, y: ArrayLike, reduction: ReductionLike = ..., *,
            out: DeviceArray | None = ...,
            stream: Stream | None = ...) -> DeviceArray: ...
@overload
def l1_loss(x: ArrayLike, y: DeviceArray, reduction: ReductionLike = ..., *,
            out: DeviceArray | None = ...,
            stream: Stream | None = ...) -> DeviceArray: ...
@overload
def l1_loss(x: ArrayLike, y: ArrayLike, reduction: ReductionLike = ..., *,
            out: NDArray[Any] | None = ...,
            stream: Stream | None = ...,
            devices: Sequence[int] | Literal["all"] | None = ...) -> NDArray[Any]: ...


def l1_loss(x: ArrayLike, y: ArrayLike, reduction: ReductionLike = "mean", *,
            out: Result | None = None, stream: Stream | None = None,
        devices: Sequence[int] | Literal["all"] | None = None) -> Result:
    """Mean absolute error between ``x`` and ``y`` (``aclnnL1Loss``).

    ``|x - y|`` elementwise for ``reduction="none"``; its mean (over the broadcast
    size) or sum, a 0-d array, otherwise. Arguments, dtypes (CANN's promotion),
    broadcasting, ``out``, ``stream``, ``devices``, results and errors as for :func:`mse_loss`.
    """
    if devices is not None:
        return devices_call(L1_LOSS, (x, y), (reduction,), out, stream, devices)
    return call(L1_LOSS, (x, y), (reduction,), out, stream)


@overload
def l1_loss_backward(grad: DeviceArray, x: ArrayLike, y: ArrayLike,
                     reduction: ReductionLike = ..., *, out: DeviceArray | None = ...,
                     stream: Stream | None = ...) -> DeviceArray: ...
@overload
def l1_loss_backward(grad: ArrayLike, x: DeviceArray, y: ArrayLike,
                     reduction: ReductionLike = ..., *, out: DeviceArray | None = ...,
                     stream: Stream | None = ...) -> DeviceArray: ...
@overload
def l1_loss_backward(grad: ArrayLike, x: ArrayLike, y: DeviceArray,
                     reduction: ReductionLike = ..., *, out: DeviceArray | None = ...,
                     stream: Stream | None = ...) -> DeviceArray: ...
@overload
def l1_loss_backward(grad: ArrayLike, x: ArrayLike, y: ArrayLike,
                     reduction: ReductionLike = ..., *, out: NDArray[Any] | None = ...,
                     stream: Stream | None = ...,
                     devices: Sequence[int] | Literal["all"] | None = ...) -> NDArray[Any]: ...


def l1_loss_backward(grad: ArrayLike, x: ArrayLike, y: ArrayLike,
                     reduction: ReductionLike = "mean", *, out: Result | None = None,
                     stream: Stream | None = None,
        devices: Sequence[int] | Literal["all"] | None = None) -> Result:
    """Gradient of the L1 loss with respect to ``x`` (``aclnnL1LossBackward``).

    ``grad * sign(x - y)`` (``sign(0) = 0``), divided for ``reduction="mean"`` by the
    number of elements of the result (the broadcast shape), as CANN documents it.
    ``grad`` may be a Python number (it takes ``x``'s dtype); the dtypes promote as
    CANN does. Other arguments (``devices`` too: "mean" still divides by the whole broadcast
    size), results and errors as for :func:`mse_loss_backward`.
    """
    if devices is not None:
        return devices_call(L1_LOSS_BACKWARD, (grad, x, y), (reduction,), out, stream, devices)
    return call(L1_LOSS_BACKWARD, (grad, x, y), (reduction,), out, stream)


@overload
def smooth_l1_loss(x: DeviceArray, y: ArrayLike, reduction: ReductionLike = ..., *,
                   beta: float = ..., out: DeviceArray | None = ...,
                   stream: Stream | None = ...) -> DeviceArray: ...
@overload
def smooth_l1_loss(x: ArrayLike, y: DeviceArray, reduction: ReductionLike = ..., *,
                   beta: float = ..., out: DeviceArray | None = ...,
                   stream: Stream | None = ...) -> DeviceArray: ...
@overload
def smooth_l1_loss(x: ArrayLike, y: ArrayLike, reduction: ReductionLike = ..., *,
                   beta: float = ..., out: NDArray[Any] | None = ...,
                   stream: Stream | None = ...,
                   devices: Sequence[int] | Literal["all"] | None = ...) -> NDArray[Any]: ...


def smooth_l1_loss(x: ArrayLike, y: ArrayLike, reduction: ReductionLike = "mean", *,
                   beta: float = 1.0, out: Result | None = None,
                   stream: Stream | None = None,
        devices: Sequence[int] | Literal["all"] | None = None) -> Result:
    """Smooth L1 loss (``aclnnSmoothL1Loss``), as PyTorch defines it with ``beta``.

    With ``d = x - y``: ``0.5 * d**2 / beta`` where ``|d| < beta``, else
    ``|d| - 0.5 * beta``; ``beta=0`` is the L1 loss. ``beta`` is a finite number >= 0,
    passed to CANN as a C ``float``. Reductions, dtypes and the rest as for
    :func:`l1_loss`.
    """
    if devices is not None:
        return devices_call(SMOOTH_L1_LOSS, (x, y), (reduction, beta), out, stream, devices)
    return call(SMOOTH_L1_LOSS, (x, y), (reduction, beta), out, stream)


@overload
def smooth_l1_loss_backward(grad: DeviceArray, x: ArrayLike, y: ArrayLike,
                            reduction: ReductionLike = ..., *, beta: float = ...,
                            out: DeviceArray | None = ...,
                            stream: Stream | None = ...) -> DeviceArray: ...
@overload
def smooth_l1_loss_backward(grad: ArrayLike, x: DeviceArray, y: ArrayLike,
                            reduction: ReductionLike = ..., *, beta: float = ...,
                            out: DeviceArray | None = ...,
                            stream: Stream | None = ...) -> DeviceArray: ...
@overload
def smooth_l1_loss_backward(grad: ArrayLike, x: ArrayLike, y: DeviceArray,
                            reduction: ReductionLike = ..., *, beta: float = ...,
                            out: DeviceArray | None = ...,
                            stream: Stream | None = ...) -> DeviceArray: ...
@overload
def smooth_l1_loss_backward(grad: ArrayLike, x: ArrayLike, y: ArrayLike,
                            reduction: ReductionLike = ..., *, beta: float = ...,
                            out: NDArray[Any] | None = ...,
                            stream: Stream | None = ...,
                            devices: Sequence[int] | Literal["all"] | None = ...
                            ) -> NDArray[Any]: ...


def smooth_l1_loss_backward(grad: ArrayLike, x: ArrayLike, y: ArrayLike,
                            reduction: ReductionLike = "mean", *, beta: float = 1.0,
                            out: Result | None = None, stream: Stream | None = None,
        devices: Sequence[int] | Literal["all"] | None = None) -> Result:
    """Gradient of :func:`smooth_l1_loss` with respect to ``x``
    (``aclnnSmoothL1LossBackward``).

    ``grad * d / beta`` where ``|d| < beta``, else ``grad * sign(d)``, broadcast, divided
    for ``reduction="mean"`` by ``x.size`` (CANN's kernels and PyTorch divide by the input's
    element count, not the broadcast size, unlike :func:`l1_loss_backward`). Arguments as
    for :func:`l1_loss_backward`, plus ``beta`` as for :func:`smooth_l1_loss`.
    """
    if devices is not None:
        return devices_call(SMOOTH_L1_LOSS_BACKWARD, (grad, x, y), (reduction, beta), out,
                            stream, devices)
    return call(SMOOTH_L1_LOSS_BACKWARD, (grad, x, y), (reduction, beta), out, stream)


@overload
def add(x: DeviceArray, y: ArrayLike, *, alpha: float = ...,
        out: DeviceArray | None = ...,
        stream: Stream | None = ...) -> DeviceArray: ...
@overload
def add(x: ArrayLike, y: DeviceArray, *, alpha: float = ...,
        out: DeviceArray | None = ...,
        stream: Stream | None = ...) -> DeviceArray: ...
@overload
def add(x: ArrayLike, y: ArrayLike, *, alpha: float = ...,
        out: NDArray[Any] | None = ...,
        stream: Stream | None = ...,
        devices: Sequence[int] | Literal["all"] | None = ...) -> NDArray[Any]: ...


def add(x: ArrayLike, y: ArrayLike, *, alpha: float = 1, out: Result | None = None,
        stream: Stream | None = None,
        devices: Sequence[int] | Literal["all"] | None = None) -> Result:
    """``x + alpha * y`` (``aclnnAdd``), broadcast, in CANN's promoted dtype.

    ``y`` may be a Python number (it takes ``x``'s dtype); ``alpha`` is a finite real
    number, passed to CANN as an ``aclScalar``. ``out``, ``stream``, ``devices``, results and
    errors as for :func:`mse_loss`.
    """
    if devices is not None:
        return devices_call(ADD, (x, y), (alpha,), out, stream, devices)
    return call(ADD, (x, y), (alpha,), out, stream)


class L1LossPlan(Plan):
    """A reusable ``aclnnL1Loss``: ``L1LossPlan(x, y, reduction="mean", *, out, stream)``."""

    spec = L1_LOSS

    if TYPE_CHECKING:
        def __init__(self, x: DeviceArray, y: DeviceArray, reduction: ReductionLike = ..., *,
                     out: DeviceArray | None = ..., stream: Stream | None = ...) -> None: ...

        def run(self, x: DeviceArray | None = ..., y: DeviceArray | None = ...,
                out: DeviceArray | None = ...) -> DeviceArray: ...


class L1LossBackwardPlan(Plan):
    """A reusable ``aclnnL1LossBackward``:
    ``L1LossBackwardPlan(grad, x, y, reduction="mean", *, out, stream)``."""

    spec = L1_LOSS_BACKWARD

    if TYPE_CHECKING:
        def __init__(self, grad: DeviceArray, x: DeviceArray, y: DeviceArray,
                     reduction: ReductionLike = ..., *,
                     out: DeviceArray | None = ..., stream: Stream | None = ...) -> None: ...

        def run(self, grad: DeviceArray | None = ..., x: DeviceArray | None = ...,
                y: DeviceArray | None = ..., out: DeviceArray | None = ...) -> DeviceArray: ...


class SmoothL1LossPlan(Plan):
    """A reusable ``aclnnSmoothL1Loss``:
    ``SmoothL1LossPlan(x, y, reduction="mean", beta=1.0, *, out, stream)``."""

    spec = SMOOTH_L1_LOSS

    if TYPE_CHECKING:
        def __init__(self, x: DeviceArray, y: DeviceArray, reduction: ReductionLike = ...,
                     beta: float = ..., *,
                     out: DeviceArray | None = ..., stream: Stream | None = ...) -> None: ...

        def run(self, x: DeviceArray | None = ..., y: DeviceArray | None = ...,
                out: DeviceArray | None = ...) -> DeviceArray: ...


class SmoothL1LossBackwardPlan(Plan):
    """A reusable ``aclnnSmoothL1LossBackward``:
    ``SmoothL1LossBackwardPlan(grad, x, y, reduction="mean", beta=1.0, *, out, stream)``."""

    spec = SMOOTH_L1_LOSS_BACKWARD

    if TYPE_CHECKING:
        def __init__(self, grad: DeviceArray, x: DeviceArray, y: DeviceArray,
                     reduction: ReductionLike = ..., beta: float = ..., *,
                     out: DeviceArray | None = ..., stream: Stream | None = ...) -> None: ...

        def run(self, grad: DeviceArray | None = ..., x: DeviceArray | None = ...,
                y: DeviceArray | None = ..., out: DeviceArray | None = ...) -> DeviceArray: ...


class AddPlan(Plan):
    """A reusable ``aclnnAdd``: ``AddPlan(x, y, alpha=1, *, out, stream)``."""

    spec = ADD

    if TYPE_CHECKING:
        def __init__(self, x: DeviceArray, y: DeviceArray, alpha: float = ..., *,
                     out: DeviceArray | None = ..., stream: Stream | None = ...) -> None: ...

        def run(self, x: DeviceArray | None = ..., y: DeviceArray | None = ...,
                out: DeviceArray | None = ...) -> DeviceArray: ...
