"""Calls and plans of any operator in the table (``_specs``).

Every entry point validates its arguments completely (TypeError or ValueError
naming the argument and the rule) before any device work.

* All-numpy inputs: the inputs travel to the device, the operator runs, and
  the result comes back as a numpy array once the stream has finished, in one
  staged round trip (``_staging``); a repeated signature skips validation.
* Any :class:`DeviceArray` input: the result is a DeviceArray and the call
  returns as soon as the work is queued.
* Either way phase 1 runs once per call signature on a stream; repeats
  relaunch the executor cached for it (``_launch_cache``). On device arrays
  a repeat skips validation too: its signature was validated when first seen.
* A :class:`Plan` does phase 1 once and relaunches with rebound arrays.
* A signature whose executor CANN will not make repeatable runs phase 1 on every
  launch instead, for calls and plans alike (``_launch.OneShotLaunch``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NoReturn, TypeVar

import numpy as np

from ..ops.dtypes import BFLOAT16_PRODUCTS, acl_dtype, bfloat16, soc_supports_bfloat16
from ..ops.specs import OperatorSpec
from ..runtime.arrays import DeviceArray, empty, host_array, to_device
from ..runtime.memory import DeviceBuffer, result_array
from ..runtime.process import Stream, activate, current_stream, resolve_stream, soc_name
from . import launch_cache, numpy_path
from .launch import Launch, new_launch

ArrayLike = Any  # numpy.ndarray, anything numpy.asarray takes, a CPU PyTorch tensor or DLPack
#                 exporter (_arrays.host_array), or a DeviceArray

# ---- validation -------------------------------------------------------------------


def _as_array(value: Any, like: np.dtype | None = None, argument: str = "array"
              ) -> np.ndarray | DeviceArray:
    """``value`` (the argument named ``argument``) as an array (device arrays stay); a
    bare Python number takes ``like``.

    Non-native byte order is swapped here: the device reads native numbers.
    """
    if isinstance(value, DeviceArray):
        return value
    if like is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        return np.asarray(value, dtype=like)
    array = host_array(value, argument)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array


def _check_dtype(dtype: np.dtype, argument: str, spec: OperatorSpec) -> None:
    acl_dtype(dtype, spec.dtypes, argument=argument)
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


def _arrays(spec: OperatorSpec, inputs: Sequence[Any]) -> dict[str, Any]:
    """The inputs as arrays by name; Python numbers take the dtype of ``spec.like``."""
    like = None
    if spec.like:
        like = _as_array(inputs[spec.inputs.index(spec.like)], argument=spec.like)
    arrays = {}
    for name, value in zip(spec.inputs, inputs):
        if name == spec.like:
            arrays[name] = like
        elif name in spec.numbers and like is not None:
            if isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and like.dtype not in spec.dtypes:
                # A Python number has no dtype of its own: the array it would take it from
                # is the one to blame.
                acl_dtype(like.dtype, spec.dtypes, argument=spec.like)
            arrays[name] = _as_array(value, like.dtype, name)
        else:
            arrays[name] = _as_array(value, argument=name)
    return arrays


def _check_inputs(arrays: dict[str, Any], spec: OperatorSpec) -> tuple[int, ...]:
    """Validate dtypes, ranks and devices; return the broadcast shape."""
    values = list(arrays.values())
    supported = spec.dtypes
    for name, array in arrays.items():
        if array.dtype not in supported:
            acl_dtype(array.dtype, supported, argument=name)  # raises the TypeError
    if spec.same_dtype and len({a.dtype for a in values}) > 1:
        raise TypeError(f"{', '.join(arrays)} must share one dtype (CANN does not promote for "
                        f"this operator); got {_describe(arrays, 'dtype')}")
    device = None
    for name, array in arrays.items():
        if array.dtype == bfloat16:
            _check_dtype(array.dtype, name, spec)
        if len(array.shape) > spec.max_rank:
            raise ValueError(f"{name} has {array.ndim} dimensions (shape {array.shape}); "
                             f"at most {spec.max_rank} are supported")
        if isinstance(array, DeviceArray):
            array.require_live(name)
            if device is not None and array.device != device:
                raise ValueError("device arrays must be on one device; got "
                                 f"{_describe(arrays, 'device')}")
            device = array.device
    shapes: list[tuple[int, ...]] = [a.shape for a in values]
    shape = shapes[0]
    if all(s == shape for s in shapes):
        return shape
    broadcast = _broadcast_shapes(shapes)
    if broadcast is None:
        raise ValueError(f"shapes do not broadcast together: {_describe(arrays, 'shape')}")
    return broadcast


def _check_out(out: Any, shape: tuple[int, ...], on_device: bool, spec: OperatorSpec) -> None:
    kind: Any = DeviceArray if on_device else np.ndarray
    if not isinstance(out, kind):
        wanted = "an aclnn_py.DeviceArray (the inputs include device arrays)" if on_device \
            else "a numpy.ndarray"
        raise TypeError(f"out must be {wanted}, got {type(out).__name__}")
    if on_device:
        out.require_live("out")
    _check_dtype(out.dtype, "out", spec)
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


def _validated(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...]
               ) -> tuple[dict[str, Any], tuple[Any, ...], tuple[int, ...], np.dtype]:
    """(arrays by name, C attributes, result shape, result dtype) of a call."""
    c_attributes = spec.convert_attributes(attributes)
    arrays = _arrays(spec, inputs)
    shape = _check_inputs(arrays, spec)
    dtype = spec.result_dtype([a.dtype for a in arrays.values()])
    return arrays, c_attributes, spec.result_shape(shape, c_attributes), dtype


# ---- one-shot calls -------------------------------------------------------------------


def _new_array(shape: tuple[int, ...], dtype: np.dtype, device: int) -> DeviceArray:
    return DeviceArray(DeviceBuffer(math.prod(shape) * dtype.itemsize, device), shape, dtype)


def _given_stream(device: int, stream: Any) -> Stream | None:
    """``stream`` made current when it is a usable stream of ``device``, else None."""
    if type(stream) is Stream and stream.device == device and not stream.closed:
        activate(device)
        return stream
    return None


def call(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...], out: Any,
         stream: Stream | None) -> np.ndarray | DeviceArray:
    """Run ``spec`` over ``inputs``: synchronous over numpy, asynchronous over device arrays."""
    result = fast_call(spec, inputs, attributes, out, stream)
    if result is not None:
        return result
    return validated_call(spec, inputs, attributes, out, stream)


def fast_call(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...], out: Any,
              stream: Stream | None) -> np.ndarray | DeviceArray | None:
    """The call when its signature ran before (and so was validated), else None."""
    if out is None or type(out) is DeviceArray:
        # Fast path: device arrays whose signature this stream has run before need no
        # validation (the cache holds validated signatures only).
        for array in inputs:
            if type(array) is not DeviceArray:
                break
        else:
            fast = spec.fast_attributes(attributes)
            device = inputs[0].device
            target = current_stream(device) if stream is None else _given_stream(device, stream)
            if fast is not None and target is not None:
                cached = launch_cache.lookup(target, (
                    spec, *fast, *[array.layout for array in inputs],
                    None if out is None else out.layout))
                if cached is not None:
                    return cached.launch(target, inputs, out)
    if (out is None or type(out) is np.ndarray) and numpy_path.enabled:
        # Fast path: numpy inputs of a signature laid out before (validated then).
        return numpy_path.fast_call(spec, inputs, attributes, out, stream)
    return None


def validated_call(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...],
                   out: Any, stream: Stream | None) -> np.ndarray | DeviceArray:
    """The call after validating every argument (the first call of a signature)."""
    arrays, c_attributes, shape, dtype = _validated(spec, inputs, attributes)
    devices = [a.device for a in arrays.values() if isinstance(a, DeviceArray)]
    on_device = bool(devices)
    if out is not None:
        _check_out(out, shape, on_device, spec)
    stream = _placement(devices, out if on_device else None, stream)
    device = stream.device
    if not on_device:
        host = out if out is not None else result_array(shape, dtype)
        if numpy_path.enabled:
            return numpy_path.call(spec, c_attributes, inputs, attributes, list(arrays.values()),
                                 out, host, stream)
        return _unstaged(spec, c_attributes, list(arrays.values()), host, stream)
    uploaded = [to_device(a, device=device, stream=stream) for a in arrays.values()]
    return launch_cache.launch(spec, c_attributes, uploaded, out,
                                lambda: _new_array(shape, dtype, device), stream)


def _unstaged(spec: OperatorSpec, c_attributes: tuple[Any, ...], arrays: list[np.ndarray],
              host: np.ndarray, stream: Stream) -> np.ndarray:
    """The numpy path without staging (``numpy_path.enabled = False``, for benchmarks): one
    synchronous copy per input, the launch, the wait, one copy back."""
    device = stream.device
    uploaded = [to_device(a, device=device, stream=stream) for a in arrays]
    result = _new_array(host.shape, host.dtype, device)
    launch_cache.launch(spec, c_attributes, uploaded, result, None, stream)
    stream.synchronize()
    result.buffer.copy_to_host(host)
    return host  # the device arrays go back to the pool as they go out of scope


# ---- plans ------------------------------------------------------------------------------

_PlanT = TypeVar("_PlanT", bound="Plan")


class Plan:
    """Phase 1 of one operator once, with a repeatable executor; :meth:`run` relaunches it.

    When CANN will not make the executor repeatable (an executor from its executor
    cache, or CANN 8.0.RC2, which lacks the API), each run does phase 1 and an
    ordinary launch instead, with the same results; on 8.0.RC2 phase 1, and so
    CANN's own argument checks, first run at the first :meth:`run`.

    Subclasses name their operator: ``class MseLossBackwardPlan(Plan): spec = ...``.
    The arrays and attributes given at construction (what the operator's function
    takes: device arrays, numpy arrays and Python numbers, the latter two copied to the
    device once, here) fix the shapes, dtypes and layouts; ``run()`` may rebind any
    array, by position or name, to another device array of the same description.
    Every argument is checked before anything is rebound: a refused ``run()`` leaves
    the plan exactly as it was. Plans and one-shot calls launch through the same
    launches (``_launch.new_launch``), so whatever a queued run uses stays
    alive until it is done, even when the plan is dropped without :meth:`close`.
    :meth:`close` lets go of everything the plan holds (executor, workspace, ``out``
    and the arrays bound): keep what ``run()`` returns to use ``out`` afterwards.
    """

    spec: OperatorSpec

    def __init__(self, *args: Any, out: DeviceArray | None = None,
                 stream: Stream | None = None, **kwargs: Any) -> None:
        self._launcher: Launch | None = None
        spec = self.spec
        inputs, attributes = _bind(spec, args, kwargs)
        arrays, c_attributes, shape, dtype = _validated(spec, inputs, attributes)
        if out is not None:
            _check_out(out, shape, True, spec)
        stream = _placement([a.device for a in arrays.values() if isinstance(a, DeviceArray)],
                            out, stream)
        if out is None:
            out = empty(shape, dtype, device=stream.device)
        self.stream = stream
        # Host inputs go up once: the plan owns their device copies (run() rebinds them).
        # Empty once the plan is closed.
        self._arrays: tuple[DeviceArray, ...] = (
            *(to_device(a, device=stream.device, stream=stream) for a in arrays.values()), out)
        self._described = ", ".join(f"{name}={array.shape} {array.dtype.name}"
                                    for name, array in zip(spec.names, self._arrays))
        self._launcher = new_launch(spec, c_attributes, self._arrays, stream.device)

    @property
    def out(self) -> DeviceArray:
        """The array every run writes (ValueError once the plan is closed: it let go of it)."""
        arrays = self._arrays
        if not arrays:
            raise ValueError(f"{type(self).__name__} is closed: it no longer holds its out "
                             "(keep what run() returns)")
        return arrays[-1]

    @property
    def workspace_size(self) -> int:
        """Bytes of device workspace phase 1 asked for (allocated once, with the plan;
        0 until the first run on a CANN without repeatable executors)."""
        return self._open().workspace_size

    def _open(self) -> Launch:
        launcher = self._launcher
        if launcher is None:
            raise ValueError(f"{type(self).__name__} is closed")
        return launcher

    def run(self, *arrays: Any, **named: Any) -> DeviceArray:
        """Relaunch, first rebinding the arrays given (by position in the operator's input
        order, then ``out``, or by name; None keeps the bound one); returns ``out``,
        still computing."""
        # The arrays first: close() lets go of the launcher first, so arrays read before
        # it did come with a launcher that is open (or refuses the launch once retired).
        bound = self._arrays
        launcher = self._launcher
        if launcher is None:
            launcher = self._open()  # raises
        if arrays or named:
            bound = self._rebound(bound, arrays, named)
        stream = self.stream
        activate(stream.device)  # any thread may run a plan
        launcher.launch(stream, bound)  # the stream holds what the run uses until it is done
        self._arrays = bound
        if self._launcher is None:  # closed by another thread meanwhile: let go again
            self._arrays = ()
        return bound[-1]

    def _rebound(self, bound: tuple[DeviceArray, ...], arrays: tuple[Any, ...],
                 named: dict[str, Any]) -> tuple[DeviceArray, ...]:
        given = _arguments("run()", self.spec.names, arrays, named)
        return tuple(each if given.get(name) is None else _like(name, given[name], each)
                     for name, each in zip(self.spec.names, bound))

    def close(self) -> None:
        """Wait for the plan's work, then destroy the executor, release the workspace and
        let go of ``out`` and the arrays bound (queued work holds what it uses until it
        is done). Safe to call twice."""
        launcher, self._launcher = self._launcher, None
        self._arrays = ()  # no call between the two: no interrupt can come between them
        if launcher is not None:
            launcher.retire()  # a run racing this close is refused or waited for below
            self.stream.synchronize()
            launcher.close()

    def __enter__(self: _PlanT) -> _PlanT:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __reduce__(self) -> NoReturn:
        raise TypeError(f"a {type(self).__name__} cannot be pickled or copied: it holds a CANN "
                        "executor and device memory of this process")

    def __repr__(self) -> str:
        arrays = getattr(self, "_described", "")
        launcher = self._launcher
        state = "closed" if launcher is None else f"workspace {launcher.workspace_size} bytes"
        stream = getattr(self, "stream", None)
        where = f"device {stream.device}, " if stream is not None else ""
        return f"<aclnn_py.{type(self).__name__} {self.spec.cann}: {arrays}; {where}{state}>"


def _arguments(caller: str, names: tuple[str, ...], args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> dict[str, Any]:
    """Positional and keyword arguments matched to ``names``, as Python matches them."""
    if len(args) > len(names):
        raise TypeError(f"{caller} takes at most {len(names)} arguments ({', '.join(names)}), "
                        f"got {len(args)}")
    values = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"{caller} got an unexpected argument {name!r}; it takes "
                            f"{', '.join(names)}")
        if name in values:  # given by position too (None included), as Python refuses
            raise TypeError(f"{caller} got {name!r} twice")
        values[name] = value
    return values


def _bind(spec: OperatorSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
          ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A plan's arguments, as (inputs, attribute values)."""
    values = _arguments(spec.function, (*spec.inputs, *(a.name for a in spec.attributes)),
                        args, kwargs)
    missing = [name for name in spec.inputs if name not in values]
    if missing:
        raise TypeError(f"{spec.function} is missing {', '.join(missing)}")
    return (tuple(values[name] for name in spec.inputs),
            tuple(values.get(a.name, a.default) for a in spec.attributes))


def _like(name: str, array: Any, bound: DeviceArray) -> DeviceArray:
    """``array`` when it can take ``bound``'s place in a plan; else the error naming ``name``."""
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
