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
* PyTorch NPU tensors, or a torch stream: the call over DeviceArrays on the tensors' own
  memory, with torch's stream and allocator (``tensors``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _caches
from ..ops.specs import OperatorSpec
from ..runtime.arrays import DeviceArray, is_npu_tensor, to_device
from ..runtime.memory import DeviceBuffer
from ..runtime.process import activate
from ..runtime.results import result_array
from ..runtime.streams import STREAM_TYPES, Stream, current_stream
from . import constants, launch_cache, numpy_path
from .tensors import TensorCall, involved
from .validate import placed, validated


def _new_array(shape: tuple[int, ...], dtype: np.dtype, device: int) -> DeviceArray:
    return DeviceArray(DeviceBuffer(math.prod(shape) * dtype.itemsize, device), shape, dtype)


def _given_stream(device: int, stream: Any) -> Stream | None:
    """``stream`` made current when it is a usable stream of ``device``, else None."""
    if type(stream) in STREAM_TYPES and stream.device == device and not stream.closed:
        activate(device)
        usable: Stream = stream
        return usable
    return None


def call(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...], out: Any,
         stream: Any) -> np.ndarray | DeviceArray:
    """Run ``spec`` over ``inputs``: synchronous over numpy, asynchronous over device arrays
    and torch NPU tensors (a torch tensor back for those, typed as the DeviceArray it
    stands for: aclnn_py's hints do not name torch)."""
    first = inputs[0] if inputs else None
    if type(first) is not np.ndarray and type(first) is not DeviceArray and \
            first is not None and is_npu_tensor(first):  # no fast path takes a tensor
        tensor: DeviceArray = _tensor_call(spec, inputs, attributes, out, stream)
        return tensor
    result = fast_call(spec, inputs, attributes, out, stream)
    if result is not None:
        return result
    if involved(inputs, out, stream):
        tensor = _tensor_call(spec, inputs, attributes, out, stream)
        return tensor
    return validated_call(spec, inputs, attributes, out, stream)


def _tensor_call(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...],
                 out: Any, stream: Any) -> Any:
    """The call given torch NPU tensors or a torch stream (``tensors``): over DeviceArrays
    on the tensors' memory, its result a torch tensor when the inputs include one."""
    adopted = TensorCall(stream)
    arrays = [adopted.adopt(value, name) for value, name in zip(inputs, spec.inputs)]
    out_array = adopted.adopt(out, "out")
    devices = [a.device for a in (*arrays, out_array) if type(a) is DeviceArray]
    target = adopted.stream(devices[0] if devices else None)
    result: np.ndarray | DeviceArray | None = None
    if out_array is None and adopted.like is not None:
        out_array = adopted.new_array(*_result_layout(spec, arrays, attributes))
        result = _fresh_result_call(spec, arrays, attributes, out_array, target)
    if result is None:
        result = call(spec, arrays, attributes, out_array, target)
    adopted.finish()
    return adopted.result(result)


def _fresh_result_call(spec: OperatorSpec, arrays: Sequence[Any], attributes: tuple[Any, ...],
                       out: DeviceArray, stream: Stream | None) -> DeviceArray | None:
    """The launch into ``out``, a result torch has just allocated, when the launch cache
    has the signature; else None. ``fast_call`` without its overlap check: memory torch
    just handed out is none of the live tensors read."""
    fast = spec.fast_attributes(attributes)
    if fast is None or stream is None or not arrays:
        return None
    for array in arrays:
        if type(array) is not DeviceArray:
            return None
    target = _given_stream(arrays[0].device, stream)
    if target is None:
        return None
    cached = launch_cache.lookup(target, launch_cache.key(spec, fast, arrays, out))
    if cached is None:
        return None
    launched: DeviceArray = cached.launch(target, arrays, out)
    return launched


# (operator, attributes, inputs' layouts) -> (result shape, result dtype): what a result
# allocated by torch must be, known without validating again.
_result_layouts: _caches.Bounded[tuple[Any, ...], tuple[tuple[int, ...], np.dtype]] = \
    _caches.bounded("torch result layouts", 4096, holds="the result shape and dtype of each "
                    "call signature given torch tensors", of="signatures")


def _result_layout(spec: OperatorSpec, arrays: Sequence[Any], attributes: tuple[Any, ...]
                   ) -> tuple[tuple[int, ...], np.dtype]:
    fast = spec.fast_attributes(attributes)
    key = None if fast is None else (spec, *fast, *(
        a.layout if type(a) is DeviceArray else
        (type(a), getattr(a, "dtype", None), getattr(a, "shape", None)) for a in arrays))
    found = None if key is None else _result_layouts.get(key)
    if found is None:
        call = validated(spec, arrays, attributes)
        found = (call.shape, call.dtype)
        if key is not None:
            _result_layouts.put(key, found)
    return found


def fast_call(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...], out: Any,
              stream: Stream | None) -> np.ndarray | DeviceArray | None:
    """The call when its signature ran before (and so was validated), else None; in the
    one order of the fast paths: numpy inputs whose layout is kept (``numpy_path``; first,
    at once, when the first input is a numpy array, since no other path takes that call),
    device arrays whose launch the stream has cached, device arrays with numbers over the
    constants kept for them."""
    if inputs and type(inputs[0]) is not np.ndarray and \
            (out is None or type(out) is DeviceArray):  # (aclnnRange has no tensor in)
        # Device arrays whose signature this stream has run before need no validation
        # (the cache holds validated signatures only).
        for array in inputs:
            if type(array) is not DeviceArray:
                break
        else:
            fast = spec.fast_attributes(attributes)
            device = inputs[0].device
            target = current_stream(device) if stream is None else _given_stream(device, stream)
            if fast is not None and target is not None:
                cached = launch_cache.lookup(target, launch_cache.key(spec, fast, inputs, out))
                if cached is not None:  # (an out's layout matches; its memory is checked)
                    return cached.launch(target, inputs, out, out_checked=False)
            return None
        for array in inputs:
            if type(array) is DeviceArray:
                return _with_constants(spec, inputs, attributes, out, stream)
    if (out is None or type(out) is np.ndarray) and numpy_path.enabled:
        # numpy inputs (and numbers) of a signature laid out before (validated then)
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
    cached = launch_cache.lookup(target, launch_cache.key(spec, fast, arrays, out))
    if cached is None:
        return None
    return cached.launch(target, arrays, out, out_checked=False)


def validated_call(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...],
                   out: Any, stream: Stream | None) -> np.ndarray | DeviceArray:
    """The call after validating every argument (the first call of a signature)."""
    call = placed(spec, inputs, attributes, out, stream)
    arrays = list(call.arrays.values())
    if not call.on_device:
        host = out if out is not None else result_array(call.shape, call.dtype)
        launch_on_host(spec, call.c_attributes, inputs, attributes, arrays, [host], out,
                       call.stream, staged=True)
        return host
    if out is not None:
        return launch_on_device(spec, call.c_attributes, inputs, arrays, [out], call.stream)
    shape, dtype, device = call.shape, call.dtype, call.stream.device
    return launch_on_device(spec, call.c_attributes, inputs, arrays, [], call.stream,
                            lambda: _new_array(shape, dtype, device))


def launch_on_device(spec: OperatorSpec, c_attributes: tuple[Any, ...], values: Sequence[Any],
                     arrays: Sequence[np.ndarray | DeviceArray], outputs: Sequence[DeviceArray],
                     stream: Stream, new_result: Callable[[], DeviceArray] | None = None
                     ) -> DeviceArray:
    """The launch step of a validated call on the device, for every route (the curated
    functions' and ``call``'s): ``arrays``, the inputs given as ``values``, go up (numbers
    as the constants kept for them), then the call is queued through the launch cache on
    ``stream`` writing ``outputs`` and, given ``new_result``, a last output it makes (none
    at all: the last input is updated in place). Returns the last array written."""
    flat = [*(_uploaded(value, array, stream) for value, array in zip(values, arrays)),
            *outputs]
    if new_result is not None:
        return launch_cache.launch(spec, c_attributes, flat, None, new_result, stream)
    return launch_cache.launch(spec, c_attributes, flat[:-1], flat[-1], None, stream)


def launch_on_host(spec: OperatorSpec, c_attributes: tuple[Any, ...], values: Sequence[Any],
                   attributes: tuple[Any, ...], arrays: Sequence[np.ndarray],
                   outputs: Sequence[np.ndarray], out: np.ndarray | None, stream: Stream, *,
                   staged: bool, inplace: Sequence[int] = ()) -> None:
    """The launch step of a validated numpy call, for every route, writing ``outputs``:
    staged (``numpy_path``, whose fast path keys on the ``values`` and ``attributes`` as
    given; one output, nothing updated in place) when ``staged`` and the numpy path is on,
    else unstaged (``inplace``: the indices of the inputs updated in place, copied back)."""
    if staged and numpy_path.enabled:
        numpy_path.call(spec, c_attributes, values, attributes, arrays, out, outputs[0], stream)
    else:
        unstaged(spec, c_attributes, arrays, outputs, stream, inplace)


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
