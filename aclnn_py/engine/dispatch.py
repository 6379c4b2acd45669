"""One-shot calls of an operator in the table (``ops.specs``).

* All-numpy inputs: the inputs travel to the device, the operator runs, and
  the result comes back as a numpy array once the stream has finished, in one
  staged round trip (``numpy_path``); a repeated signature skips validation.
* Any :class:`DeviceArray` input: the result is a DeviceArray and the call
  returns as soon as the work is queued.
* A Python number or numpy scalar given with device arrays is kept on the device
  (``constants``) instead of being uploaded on every call; a repeat finds it and
  skips validation too.
* Either way phase 1 runs once per call signature on a stream; repeats
  relaunch the executor cached for it (``launch_cache``). On device arrays
  a repeat skips validation too: its signature was validated when first seen.
* A signature whose executor CANN will not make repeatable runs phase 1 on every
  launch instead (``launch.OneShotLaunch``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ops.specs import OperatorSpec
from ..runtime.arrays import DeviceArray, to_device
from ..runtime.memory import DeviceBuffer
from ..runtime.process import activate
from ..runtime.results import result_array
from ..runtime.streams import Stream, current_stream
from . import constants, launch_cache, numpy_path
from .validate import check_out, placement, validated


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
                cached = launch_cache.lookup(target, launch_cache.signature(
                    spec, fast, [array.layout for array in inputs],
                    None if out is None else out.layout))
                if cached is not None:
                    return cached.launch(target, inputs, out)
            return None
        for array in inputs:
            if type(array) is DeviceArray:
                return _with_constants(spec, inputs, attributes, out, stream)
    if (out is None or type(out) is np.ndarray) and numpy_path.enabled:
        # Fast path: numpy inputs of a signature laid out before (validated then).
        return numpy_path.fast_call(spec, inputs, attributes, out, stream)
    return None


def _with_constants(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...],
                    out: DeviceArray | None, stream: Stream | None) -> DeviceArray | None:
    """Device arrays with numbers or numpy scalars: the call over the constants kept for
    them (``constants``) when its signature ran before, else None. A number takes the
    dtype of the ``like`` input where the operator takes numbers, as validation types it."""
    fast = spec.fast_attributes(attributes)
    if fast is None:
        return None
    for array in inputs:
        if type(array) is DeviceArray:
            device = array.device
            break
    target = current_stream(device) if stream is None else _given_stream(device, stream)
    if target is None:
        return None
    arrays = list(inputs)
    for index, value in enumerate(inputs):
        kind = type(value)
        if kind is DeviceArray:
            continue
        if kind is float or kind is int or kind is np.float64:
            like = inputs[spec.like_index] if index in spec.number_indices else None
            if type(like) is not DeviceArray:
                return None
            found_key = constants.key(value, like.dtype)
        elif isinstance(value, np.generic):
            found_key = constants.key(value, value.dtype)
        else:
            return None
        found = constants.find(target, found_key) if found_key is not None else None
        if found is None:
            return None
        arrays[index] = found
    cached = launch_cache.lookup(target, launch_cache.signature(
        spec, fast, [array.layout for array in arrays], None if out is None else out.layout))
    if cached is None:
        return None
    return cached.launch(target, arrays, out)


def validated_call(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...],
                   out: Any, stream: Stream | None) -> np.ndarray | DeviceArray:
    """The call after validating every argument (the first call of a signature)."""
    arrays, c_attributes, shape, dtype = validated(spec, inputs, attributes)
    devices = [a.device for a in arrays.values() if isinstance(a, DeviceArray)]
    on_device = bool(devices)
    if out is not None:
        check_out(out, on_device, shape=shape, spec=spec)
    stream = placement(devices, out if on_device else None, stream)
    device = stream.device
    if not on_device:
        host = out if out is not None else result_array(shape, dtype)
        if numpy_path.enabled:
            return numpy_path.call(spec, c_attributes, inputs, attributes, list(arrays.values()),
                                 out, host, stream)
        unstaged(spec, c_attributes, list(arrays.values()), [host], stream)
        return host
    uploaded = [_uploaded(value, array, stream) for value, array in zip(inputs, arrays.values())]
    return launch_cache.launch(spec, c_attributes, uploaded, out,
                               lambda: _new_array(shape, dtype, device), stream)


def _uploaded(value: Any, array: np.ndarray | DeviceArray, stream: Stream) -> DeviceArray:
    """The device array a validated input ``array`` (given as ``value``) launches as: itself,
    the constant kept for a number or numpy scalar, else a copy made now."""
    if type(array) is DeviceArray:
        return array
    if type(array) is np.ndarray and array is not value and constants.key(
            value, array.dtype) is not None:
        return constants.constant(stream, value, array)
    return to_device(array, device=stream.device, stream=stream)


def unstaged(spec: OperatorSpec, c_attributes: tuple[Any, ...], arrays: Sequence[np.ndarray],
             outputs: Sequence[np.ndarray], stream: Stream, inplace: Sequence[int] = ()) -> None:
    """The numpy path without staging (``numpy_path.enabled = False``, for benchmarks, and
    ``call``'s other cases): one synchronous copy up per input, the launch, the wait, one
    copy back per output and per input updated in place (``inplace``: their indices)."""
    device = stream.device
    uploaded = [to_device(a, device=device, stream=stream) for a in arrays]
    results = [_new_array(host.shape, host.dtype, device) for host in outputs]
    flat = [*uploaded, *results]
    launch_cache.launch(spec, c_attributes, flat[:-1], flat[-1], None, stream)
    stream.synchronize()
    for index in inplace:
        uploaded[index].buffer.copy_to_host(arrays[index])
    for result, host in zip(results, outputs):
        result.buffer.copy_to_host(host)
    # the device arrays go back to the pool as they go out of scope
