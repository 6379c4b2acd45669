"""The operators: functions over numpy or device arrays, and reusable plans.

Each entry point validates its arguments completely (TypeError or ValueError
naming the argument and the rule) before any device work.

* All-numpy inputs: the inputs travel to the device, the operator runs, and
  the result comes back as a numpy array once the stream has finished.
* Any :class:`DeviceArray` input: the result is a DeviceArray and the call
  returns as soon as the work is queued.
* Either way phase 1 runs once per call signature on a stream; repeats
  relaunch the executor cached for it (``_launch_cache``). On device arrays,
  a repeat skips validation too: its signature was validated when first seen.
* A plan (:class:`MseLossBackwardPlan`, :class:`MseLossPlan`) does phase 1
  once, with a repeatable executor and one workspace, and relaunches with
  rebound arrays.
"""

from __future__ import annotations

import enum
import math
from typing import Any, Union

import numpy as np

from . import _launch_cache
from ._arrays import DeviceArray, empty, to_device
from ._dtypes import (
    BFLOAT16_PRODUCTS,
    FLOATING,
    FLOATING_SET,
    acl_dtype,
    bfloat16,
    promote,
    soc_supports_bfloat16,
)
from ._launch import RepeatableLaunch
from ._memory import DeviceBuffer
from ._runtime import (
    Stream,
    activate,
    current_stream,
    resolve_stream,
    soc_name,
)

MAX_RANK = 8  # CANN's rank limit for these operators' inputs

ArrayLike = Any


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


# ---- validation ---------------------------------------------------------------


def _as_array(value: Any, like: np.dtype | None = None) -> np.ndarray | DeviceArray:
    """``value`` as an array (device arrays stay); a bare Python number takes ``like``.

    Non-native byte order is swapped here: the device reads native numbers.
    """
    if isinstance(value, DeviceArray):
        return value
    if like is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        return np.asarray(value, dtype=like)
    array = np.asarray(value)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array


def _check_dtype(dtype: np.dtype, argument: str) -> None:
    acl_dtype(dtype, FLOATING, argument=argument)
    if dtype == bfloat16 and not soc_supports_bfloat16(soc_name()):
        raise TypeError(f"{argument} is bfloat16, which this SoC ({soc_name()}) does not support "
                        f"for aclnn operators; bfloat16 needs {BFLOAT16_PRODUCTS}")


def _describe(arrays: dict[str, Any], attribute: str) -> str:
    return ", ".join(f"{name} {getattr(a, attribute)}" for name, a in arrays.items())


def _broadcast_shapes(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    """numpy's broadcast of ``shapes``, or None when they do not broadcast."""
    ndim = max(len(shape) for shape in shapes)
    result = [1] * ndim
    for shape in shapes:
        start = ndim - len(shape)
        for axis, extent in enumerate(shape, start):
            current = result[axis]
            if extent != current:
                if current == 1:
                    result[axis] = extent
                elif extent != 1:
                    return None
    return tuple(result)


def _check_inputs(arrays: dict[str, Any], *, same_dtype: bool) -> tuple[int, ...]:
    """Validate dtypes, ranks and devices; return the broadcast shape."""
    values = list(arrays.values())
    for name, array in arrays.items():
        if array.dtype not in FLOATING_SET:
            acl_dtype(array.dtype, FLOATING, argument=name)  # raises the TypeError
    if same_dtype and len({a.dtype for a in values}) > 1:
        raise TypeError(f"{', '.join(arrays)} must share one dtype (CANN does not promote for "
                        f"this operator); got {_describe(arrays, 'dtype')}")
    device = None
    for name, array in arrays.items():
        if array.dtype == bfloat16:
            _check_dtype(array.dtype, name)
        if len(array.shape) > MAX_RANK:
            raise ValueError(f"{name} has {array.ndim} dimensions (shape {array.shape}); "
                             f"at most {MAX_RANK} are supported")
        if isinstance(array, DeviceArray):
            array.require_live(name)
            if device is not None and array.device != device:
                raise ValueError("device arrays must be on one device; got "
                                 f"{_describe(arrays, 'device')}")
            device = array.device
    shapes = [a.shape for a in values]
    shape = shapes[0]
    if all(s == shape for s in shapes):
        return shape
    shape = _broadcast_shapes(shapes)
    if shape is None:
        raise ValueError(f"shapes do not broadcast together: {_describe(arrays, 'shape')}")
    return shape


def _check_out(out: Any, shape: tuple[int, ...], on_device: bool) -> None:
    kind = DeviceArray if on_device else np.ndarray
    if not isinstance(out, kind):
        wanted = "an aclnn_py.DeviceArray (the inputs include device arrays)" if on_device \
            else "a numpy.ndarray"
        raise TypeError(f"out must be {wanted}, got {type(out).__name__}")
    if on_device:
        out.require_live("out")
    _check_dtype(out.dtype, "out")
    if out.shape != shape:
        raise ValueError(f"out has shape {out.shape}; the result has shape {shape}")
    if on_device:
        if not out.is_contiguous:
            raise ValueError("out must be a C-contiguous device array")
        return
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous (results are written in place, never "
                         "through a hidden copy)")


# ---- running ----------------------------------------------------------------------


def _call(operator: str, arrays: dict[str, Any], scalars: tuple[int, ...],
          shape: tuple[int, ...], dtype: np.dtype, out: Any, stream: Stream | None) -> Any:
    """Run a validated call: synchronous over numpy, asynchronous over device arrays."""
    devices = [a.device for a in arrays.values() if isinstance(a, DeviceArray)]
    on_device = bool(devices)
    if out is not None:
        _check_out(out, shape, on_device)
    stream = _placement(devices, out if on_device else None, stream)
    device = stream.device
    uploaded = [to_device(a, device=device, stream=stream) for a in arrays.values()]
    if on_device:
        return _launch_cache.launch(operator, scalars, tuple(arrays), uploaded, out,
                                    lambda: _new_array(shape, dtype, device), stream)
    host = out if out is not None else np.empty(shape, dtype)
    result = _new_array(host.shape, host.dtype, device)
    _launch_cache.launch(operator, scalars, tuple(arrays), uploaded, result, None, stream)
    stream.synchronize()
    result.buffer.copy_to_host(host)
    return host  # the device arrays go back to the pool as they go out of scope


def _placement(devices: list[int], out: DeviceArray | None, stream: Stream | None) -> Stream:
    """The stream a call runs on, checked against where its device arrays live.

    ``devices`` are the devices of the device-array inputs (all one, already checked);
    default stream: the current stream of that device (else of the current device).
    """
    if stream is None:
        stream = current_stream(devices[0] if devices else None)
        if stream.closed:
            raise ValueError("the current stream is closed: work cannot be queued on it "
                             "(leave its `with` block, or pass stream=)")
    else:
        stream = resolve_stream(stream)
    device = devices[0] if devices else stream.device
    if stream.device != device:
        raise ValueError(f"stream is on device {stream.device} but the arrays are on {device}")
    if out is not None and out.device != device:
        raise ValueError(f"out is on device {out.device} but the inputs are on {device}")
    return stream


def _new_array(shape: tuple[int, ...], dtype: np.dtype, device: int) -> DeviceArray:
    return DeviceArray(DeviceBuffer(math.prod(shape) * dtype.itemsize, device), shape, dtype)


def _given_stream(device: int, stream: Any) -> Stream | None:
    """``stream`` made current when it is a usable stream of ``device``, else None."""
    if type(stream) is Stream and stream.device == device and not stream.closed:
        activate(device)
        return stream
    return None


# Reductions the fast paths recognise without _reduction(); others take the long way.
_FAST_MODES = {(str, "mean"): 1, (str, "none"): 0, (str, "sum"): 2,
               **{(Reduction, mode): int(mode) for mode in Reduction},
               **{(int, int(mode)): int(mode) for mode in Reduction}}


def _fast_mode(reduction: Any) -> int | None:
    """The CANN value of a common reduction spelling; None sends the call the long way."""
    try:
        return _FAST_MODES.get((type(reduction), reduction))
    except TypeError:  # unhashable: _reduction() explains what is accepted
        return None


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
    if type(x) is DeviceArray and type(grad) is DeviceArray and type(y) is DeviceArray \
            and (out is None or type(out) is DeviceArray):
        # Fast path: a signature this stream has run before needs no validation.
        mode = _fast_mode(reduction)
        target = current_stream(x.device) if stream is None else _given_stream(x.device, stream)
        if mode is not None and target is not None:
            cached = target.launch_cache.get((
                "aclnnMseLossBackward", mode, grad.layout, x.layout, y.layout,
                None if out is None else out.layout))
            if cached is not None:
                return cached.launch(target, (grad, x, y), out)
    mode = _reduction(reduction)
    x = _as_array(x)
    arrays = {"grad": _as_array(grad, x.dtype), "x": x, "y": _as_array(y, x.dtype)}
    shape = _check_inputs(arrays, same_dtype=True)
    return _call("aclnnMseLossBackward", arrays, (int(mode),), shape, x.dtype, out, stream)


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
    if type(x) is DeviceArray and type(y) is DeviceArray \
            and (out is None or type(out) is DeviceArray):
        mode = _fast_mode(reduction)
        target = current_stream(x.device) if stream is None else _given_stream(x.device, stream)
        if mode is not None and target is not None:
            cached = target.launch_cache.get((
                "aclnnMseLoss", mode, x.layout, y.layout, None if out is None else out.layout))
            if cached is not None:
                return cached.launch(target, (x, y), out)
    mode = _reduction(reduction)
    x = _as_array(x)
    arrays = {"x": x, "y": _as_array(y, x.dtype)}
    shape = _check_inputs(arrays, same_dtype=False)
    dtype = promote(x.dtype, arrays["y"].dtype)
    result_shape = shape if mode == Reduction.NONE else ()
    return _call("aclnnMseLoss", arrays, (int(mode),), result_shape, dtype, out, stream)


# ---- plans -------------------------------------------------------------------------


class _Plan:
    """Phase 1 once with a repeatable executor; :meth:`run` relaunches it.

    Plans and the one-shot calls' cache launch through the same
    :class:`~aclnn_py._launch.RepeatableLaunch`, so whatever a queued run uses
    stays alive until it is done, even when the plan is dropped without
    :meth:`close`.

    The arrays bound at construction fix the shapes, dtypes and layouts;
    ``run()`` may rebind any of them to other device arrays of the same
    description. Every argument is checked before anything is rebound: a
    refused ``run()`` leaves the plan exactly as it was.
    """

    operator = ""

    def __init__(self, arrays: dict[str, Any], scalars: tuple[int, ...], out: Any,
                 shape: tuple[int, ...], dtype: np.dtype, stream: Stream | None) -> None:
        self._launcher: RepeatableLaunch | None = None
        _check_plan_arrays(arrays)
        if out is not None:
            _check_out(out, shape, on_device=True)
        stream = _placement([a.device for a in arrays.values()], out, stream)
        if out is None:
            out = empty(shape, dtype, device=stream.device)
        self.stream = stream
        self._names = (*arrays, "out")
        self._arrays = (*arrays.values(), out)
        self._launcher = RepeatableLaunch(self.operator, self._names, scalars, self._arrays,
                                          stream.device)

    @property
    def out(self) -> DeviceArray:
        return self._arrays[-1]

    @property
    def workspace_size(self) -> int:
        """Bytes of device workspace phase 1 asked for (allocated once, with the plan)."""
        return self._open().workspace_size

    def _open(self) -> RepeatableLaunch:
        launcher = self._launcher
        if launcher is None:
            raise ValueError(f"{type(self).__name__} is closed")
        return launcher

    def _run(self, rebind: tuple[DeviceArray | None, ...] | None) -> DeviceArray:
        """Launch again, first rebinding the arrays given (None: keep); returns ``out``
        (still computing)."""
        launcher = self._open()
        arrays = self._arrays
        if rebind is not None:
            arrays = tuple(bound if array is None else self._checked(name, array, bound)
                           for name, array, bound in zip(self._names, rebind, arrays))
        launcher.launch(self.stream, arrays)
        self._arrays = arrays
        return arrays[-1]

    @staticmethod
    def _checked(name: str, array: Any, bound: DeviceArray) -> DeviceArray:
        if not isinstance(array, DeviceArray):
            raise TypeError(f"{name} must be an aclnn_py.DeviceArray, got {type(array).__name__}")
        array.require_live(name)
        same = (array.shape, array.dtype, array.strides, array.offset, array.device) == \
            (bound.shape, bound.dtype, bound.strides, bound.offset, bound.device)
        if not same or array.storage_size < bound.storage_size:
            raise ValueError(f"{name} must match the planned array: shape {bound.shape}, dtype "
                             f"{bound.dtype}, strides {bound.strides}, offset {bound.offset}, "
                             f"device {bound.device}; got {array!r}")
        return array

    def close(self) -> None:
        """Wait for the plan's work, then destroy the executor and release the workspace.
        Safe to call twice."""
        launcher, self._launcher = self._launcher, None
        if launcher is not None:
            self.stream.synchronize()
            launcher.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __reduce__(self):
        raise TypeError(f"a {type(self).__name__} cannot be pickled or copied: it holds a CANN "
                        "executor and device memory of this process")


def _check_plan_arrays(arrays: dict[str, Any]) -> None:
    for name, array in arrays.items():
        if not isinstance(array, DeviceArray):
            raise TypeError(f"{name} must be an aclnn_py.DeviceArray (plans work on device "
                            f"arrays; use aclnn_py.to_device), got {type(array).__name__}")


class MseLossBackwardPlan(_Plan):
    """A reusable ``aclnnMseLossBackward`` over device arrays.

    ``plan.run(grad=None, x=None, y=None, out=None)`` relaunches, rebinding any
    arrays given (same shapes, dtypes and layouts), and returns ``out``.
    Arguments and results as for :func:`mse_loss_backward`.
    """

    operator = "aclnnMseLossBackward"

    def __init__(self, grad: DeviceArray, x: DeviceArray, y: DeviceArray,
                 reduction: ReductionLike = "mean", *, out: DeviceArray | None = None,
                 stream: Stream | None = None) -> None:
        mode = _reduction(reduction)
        arrays = {"grad": grad, "x": x, "y": y}
        _check_plan_arrays(arrays)
        shape = _check_inputs(arrays, same_dtype=True)
        super().__init__(arrays, (int(mode),), out, shape, x.dtype, stream)

    def run(self, grad: DeviceArray | None = None, x: DeviceArray | None = None,
            y: DeviceArray | None = None, out: DeviceArray | None = None) -> DeviceArray:
        """Relaunch, rebinding any arrays given; returns ``out`` (still computing)."""
        if grad is None and x is None and y is None and out is None:
            return self._run(None)
        return self._run((grad, x, y, out))


class MseLossPlan(_Plan):
    """A reusable ``aclnnMseLoss`` over device arrays (see :class:`MseLossBackwardPlan`)."""

    operator = "aclnnMseLoss"

    def __init__(self, x: DeviceArray, y: DeviceArray, reduction: ReductionLike = "mean", *,
                 out: DeviceArray | None = None, stream: Stream | None = None) -> None:
        mode = _reduction(reduction)
        arrays = {"x": x, "y": y}
        _check_plan_arrays(arrays)
        shape = _check_inputs(arrays, same_dtype=False)
        result_shape = shape if mode == Reduction.NONE else ()
        super().__init__(arrays, (int(mode),), out, result_shape, promote(x.dtype, y.dtype),
                         stream)

    def run(self, x: DeviceArray | None = None, y: DeviceArray | None = None,
            out: DeviceArray | None = None) -> DeviceArray:
        """Relaunch, rebinding any arrays given; returns ``out`` (still computing)."""
        if x is None and y is None and out is None:
            return self._run(None)
        return self._run((x, y, out))
