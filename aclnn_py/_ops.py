"""The numpy-facing operators.

Each function validates its arguments completely (raising TypeError or
ValueError that name the argument and the rule) before any device work, then
runs the operator through the shared two-phase machinery in ``_arrays``.
"""

from __future__ import annotations

import enum
from contextlib import ExitStack
from typing import Any, Union

import numpy as np

from ._arrays import DeviceOperand, DeviceResult, run_operator
from ._dtypes import (
    BFLOAT16_PRODUCTS,
    FLOATING,
    acl_dtype,
    bfloat16,
    promote,
    soc_supports_bfloat16,
)
from ._runtime import soc_name

MAX_RANK = 8  # CANN's rank limit for these operators' inputs


class Reduction(enum.IntEnum):
    """How a loss reduces over elements; the values are CANN's (and PyTorch's)."""

    NONE = 0
    MEAN = 1
    SUM = 2


ReductionLike = Union[str, int, Reduction]
_ACCEPTED_REDUCTIONS = "'none', 'mean', 'sum', 0, 1, 2 or aclnn_py.Reduction"


def _reduction(value: ReductionLike) -> Reduction:
    try:
        if isinstance(value, str):
            return Reduction[value.upper()]
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return Reduction(int(value))
    except (KeyError, ValueError):
        pass
    raise ValueError(f"reduction must be {_ACCEPTED_REDUCTIONS}, got {value!r}")


def _as_array(value: Any, like: np.dtype) -> np.ndarray:
    """``value`` as an array; a bare Python number takes the dtype ``like``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return np.asarray(value, dtype=like)
    return np.asarray(value)


def _check_dtype(dtype: np.dtype, argument: str) -> None:
    acl_dtype(dtype, FLOATING, argument=argument)
    if dtype == bfloat16 and not soc_supports_bfloat16(soc_name()):
        raise TypeError(f"{argument} is bfloat16, which this SoC ({soc_name()}) does not support "
                        f"for aclnn operators; bfloat16 needs {BFLOAT16_PRODUCTS}")


def _describe(arrays: dict[str, np.ndarray], attribute: str) -> str:
    return ", ".join(f"{name} {getattr(a, attribute)}" for name, a in arrays.items())


def _check_inputs(arrays: dict[str, np.ndarray], *, same_dtype: bool) -> tuple[int, ...]:
    """Validate dtypes and ranks; return the broadcast shape."""
    for name, array in arrays.items():
        acl_dtype(array.dtype, FLOATING, argument=name)
    if same_dtype and len({a.dtype for a in arrays.values()}) > 1:
        raise TypeError(f"{', '.join(arrays)} must share one dtype (CANN does not promote for "
                        f"this operator); got {_describe(arrays, 'dtype')}")
    for name, array in arrays.items():
        _check_dtype(array.dtype, name)
        if array.ndim > MAX_RANK:
            raise ValueError(f"{name} has {array.ndim} dimensions (shape {array.shape}); "
                             f"at most {MAX_RANK} are supported")
    try:
        return np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        raise ValueError(f"shapes do not broadcast together: {_describe(arrays, 'shape')}"
                         ) from None


def _result(out: np.ndarray | None, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The array the result goes to: a new one, or a checked ``out``."""
    if out is None:
        return np.empty(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy.ndarray, got {type(out).__name__}")
    _check_dtype(out.dtype, "out")
    if out.shape != shape:
        raise ValueError(f"out has shape {out.shape}; the result has shape {shape}")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous (results are written in place, never "
                         "through a hidden copy)")
    return out


def _run(operator: str, inputs: dict[str, np.ndarray], scalars: tuple[int, ...],
         result: np.ndarray) -> np.ndarray:
    """Upload ``inputs``, run ``operator(*inputs, *scalars, out)`` and fetch the result."""
    with ExitStack() as stack:
        operands = [DeviceOperand(a, acl_dtype(a.dtype), stack) for a in inputs.values()]
        target = DeviceResult(result, acl_dtype(result.dtype), stack)
        tensors = tuple(o.tensor for o in operands) + (target.tensor,)
        arguments = (*(o.tensor.handle for o in operands), *scalars, target.tensor.handle)
        run_operator(operator, arguments, tensors)
        return target.fetch()


def mse_loss_backward(grad: Any, x: Any, y: Any, reduction: ReductionLike = "mean", *,
                      out: np.ndarray | None = None) -> np.ndarray:
    """Gradient of the mean squared error with respect to ``x`` (``aclnnMseLossBackward``).

    Computes ``grad * (x - y) * 2 / x.size`` for ``reduction="mean"`` and
    ``grad * (x - y) * 2`` for ``"none"`` and ``"sum"``, on the device.

    Parameters
    ----------
    grad : array_like or float
        Gradient of the loss: an array broadcastable with ``x`` and ``y`` (a 0-d
        array for a "mean" or "sum" loss), or a Python number, which takes
        ``x``'s dtype.
    x, y : array_like
        Input and target. ``grad``, ``x`` and ``y`` share one dtype: float32,
        float16 or bfloat16 (``ml_dtypes.bfloat16``; Atlas A2/A3 and Ascend 950
        only). Each has 0 to 8 dimensions; the three broadcast together.
    reduction : {"none", "mean", "sum"}, int or Reduction
        The reduction the forward loss used. The mean divisor is ``x.size``.
    out : numpy.ndarray, optional
        Writable C-contiguous array of the broadcast shape and a supported dtype
        (which may differ from the inputs': CANN computes in the input dtype
        and casts). Filled and returned.

    Returns
    -------
    numpy.ndarray
        The gradient, of the broadcast shape and the inputs' dtype (or ``out``).

    Raises
    ------
    TypeError
        Unsupported or mismatched dtypes, bfloat16 on an SoC without it, ``out``
        not an array.
    ValueError
        Unknown reduction, more than 8 dimensions, shapes that do not broadcast,
        an unsuitable ``out``.
    AclError
        CANN refused the call or failed; carries CANN's status and message.
    """
    mode = _reduction(reduction)
    x = np.asarray(x)
    arrays = {"grad": _as_array(grad, x.dtype), "x": x, "y": _as_array(y, x.dtype)}
    shape = _check_inputs(arrays, same_dtype=True)
    result = _result(out, shape, x.dtype)
    return _run("aclnnMseLossBackward", arrays, (int(mode),), result)


def mse_loss(x: Any, y: Any, reduction: ReductionLike = "mean", *,
             out: np.ndarray | None = None) -> np.ndarray:
    """Mean squared error between ``x`` and ``y`` (``aclnnMseLoss``).

    ``(x - y) ** 2`` elementwise for ``reduction="none"``; its mean or sum (a
    0-d array) otherwise. For empty inputs CANN returns NaN ("mean") or 0 ("sum").

    Parameters
    ----------
    x, y : array_like
        float32, float16 or bfloat16 arrays of 0 to 8 dimensions that broadcast
        together; different dtypes are promoted as CANN does (float16 with
        bfloat16 gives float32). A Python number for ``y`` takes ``x``'s dtype.
    reduction : {"none", "mean", "sum"}, int or Reduction
    out : numpy.ndarray, optional
        Writable C-contiguous array of the result's shape (the broadcast shape,
        or ``()``) and a supported dtype. Filled and returned.

    Returns
    -------
    numpy.ndarray
        The loss, in the promoted dtype (or ``out``).

    Raises
    ------
    TypeError, ValueError, AclError
        As for :func:`mse_loss_backward`.
    """
    mode = _reduction(reduction)
    x = np.asarray(x)
    arrays = {"x": x, "y": _as_array(y, x.dtype)}
    shape = _check_inputs(arrays, same_dtype=False)
    dtype = promote(x.dtype, arrays["y"].dtype)
    result = _result(out, shape if mode == Reduction.NONE else (), dtype)
    return _run("aclnnMseLoss", arrays, (int(mode),), result)
