"""Validation of a call's arguments, shared by the curated operators, plans and ``call``.

Every check raises TypeError or ValueError naming the argument and the rule, before
any device work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..ops.dtypes import (
    BFLOAT16_PRODUCTS,
    acl_dtype,
    all_dtypes,
    dtype_label,
    is_bfloat16,
    soc_supports_bfloat16,
)
from ..ops.specs import OperatorSpec
from ..runtime.arrays import DeviceArray, dense_c_order, host_array, span
from ..runtime.memory import DeviceBuffer
from ..runtime.process import soc_name
from ..runtime.streams import Stream, current_stream, resolve_stream

ArrayLike = Any  # numpy.ndarray, anything numpy.asarray takes, a CPU PyTorch tensor or DLPack
#                 exporter (named_arrays.host_array), or a DeviceArray

# Python values have no dtype of their own; without an array in the call to take one from,
# these are theirs (float32, not numpy's float64, which few of CANN's operators take).
PYTHON_DTYPES = {"b": np.dtype(np.bool_), "i": np.dtype(np.int64), "u": np.dtype(np.uint64),
                 "f": np.dtype(np.float32), "c": np.dtype(np.complex64)}


def is_python_value(value: Any) -> bool:
    """Whether ``value`` is a Python number or a (nested) list or tuple: a value whose
    dtype the call chooses (:func:`as_array`)."""
    return isinstance(value, (bool, int, float, complex, list, tuple))


def as_array(value: Any, like: np.dtype | None = None, argument: str = "array"
             ) -> np.ndarray | DeviceArray:
    """``value`` (the tensor argument named ``argument``) as an array, by the one input rule
    of every call (curated functions and ``call`` alike; the page api.md states it):

    - device arrays stay; numpy arrays, CPU PyTorch tensors and DLPack exporters are read
      without a copy and keep their dtype; a numpy scalar is a 0-d array of its dtype;
    - a Python number, or a (nested) list or tuple of them, has no dtype of its own: it
      takes ``like`` (the dtype of the call's array the operator relates it to), else
      bool, int64 or float32;
    - None and anything else are a TypeError naming ``argument``.

    Non-native byte order is swapped here: the device reads native numbers.
    """
    if isinstance(value, DeviceArray):
        return value
    if value is None:
        raise TypeError(f"{argument} is a required tensor; got None")
    if is_python_value(value):
        return _python_array(value, like, argument)
    array = host_array(value, argument)  # (a numpy scalar: a 0-d array of its dtype)
    if array.dtype.kind in "OUSMm":  # (ml_dtypes' bfloat16 is of kind V)
        of = f" of dtype {array.dtype}" if isinstance(value, np.ndarray) else ""
        raise TypeError(f"{argument} must be an array or numbers; got "
                        f"{type(value).__name__}{of}")
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array


def _python_array(value: Any, like: np.dtype | None, argument: str) -> np.ndarray:
    """A Python number or (nested) list of them as an array: of ``like``, else of the
    Python values' own kind (:data:`PYTHON_DTYPES`)."""
    try:
        plain = np.asarray(value)
    except ValueError as error:  # ragged nesting, for one
        raise ValueError(f"{argument}: numpy cannot make an array of it ({error})") from None
    kind = plain.dtype.kind
    if kind not in PYTHON_DTYPES:
        what = "list" if isinstance(value, list) else type(value).__name__
        raise TypeError(f"{argument} must be an array or numbers; got a {what} numpy reads as "
                        f"{plain.dtype}")
    if like is None:
        return plain.astype(PYTHON_DTYPES[kind])
    if kind == "b" and like.kind != "b":
        raise TypeError(f"{argument} holds Python bools, which a call of dtype "
                        f"{dtype_label(like)} does not take as numbers; pass numbers or an array")
    if kind in "fc" and like.kind in "biu" or kind == "c" and like.kind == "f":
        what = "complex" if kind == "c" else "float"
        raise TypeError(f"{argument} holds Python {what} numbers, which the call's dtype "
                        f"{dtype_label(like)} cannot hold; pass an array of the dtype meant "
                        f"(numpy.asarray({argument}, dtype=...))")
    try:
        with np.errstate(over="raise", invalid="raise"):
            return np.asarray(value, dtype=like)
    except (OverflowError, FloatingPointError):
        raise ValueError(f"{argument} holds a number that {dtype_label(like)}, the call's "
                         "dtype, cannot hold") from None


_INT64 = np.iinfo(np.int64)


def exact_range(dtype: np.dtype, kind: type) -> tuple[int | float, int | float] | None:
    """The (low, high) bounds of the Python numbers of type ``kind`` (int, float or
    numpy.float64) that :func:`as_array` converts to ``dtype`` as they are, with no
    overflow and no refusal; None where that takes its whole conversion (bool, bfloat16).
    An int beyond int64 is an object to numpy, which :func:`as_array` refuses."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    if dtype.kind == "f":
        largest = float(np.finfo(dtype).max)
        if kind is int:
            return max(-largest, int(_INT64.min)), min(largest, int(_INT64.max))
        return -largest, largest
    return None


def reference_dtype(values: Sequence[Any]) -> np.dtype | None:
    """The dtype Python values among ``values`` (a call's tensors) take: that of the first
    given as an array; without one, the widest of the Python values' own kinds (bool, int64,
    float32, complex64), so ``[1, 2]`` and ``[0.5, 1.5]`` together are float32."""
    found = _array_dtype(values)
    if found is not None:
        return found
    kinds = "".join(_python_kind(value) for value in values if is_python_value(value))
    for kind in "cfuib":
        if kind in kinds:
            return PYTHON_DTYPES[kind]
    return None


def _python_kind(value: Any) -> str:
    try:
        return str(np.asarray(value).dtype.kind)
    except ValueError:
        return ""  # ragged: as_array names it


def _array_dtype(values: Sequence[Any]) -> np.dtype | None:
    """The dtype of the first of ``values`` given as an array."""
    for value in values:
        if value is None or is_python_value(value):
            continue
        dtype = getattr(value, "dtype", None)
        if isinstance(dtype, np.dtype):
            return dtype if dtype.isnative else dtype.newbyteorder("=")  # as as_array swaps
        if dtype is not None:  # a PyTorch tensor, whose dtype numpy reads through its array
            try:
                return host_array(value).dtype
            except (TypeError, ValueError):
                continue
    return None


def check_dtype(dtype: np.dtype, argument: str, spec: OperatorSpec) -> None:
    acl_dtype(dtype, spec.dtypes, argument=argument)
    if is_bfloat16(dtype) and not soc_supports_bfloat16(soc_name()):
        raise TypeError(f"{argument} is bfloat16, which this SoC ({soc_name()}) does not support "
                        f"for aclnn operators; bfloat16 needs {BFLOAT16_PRODUCTS}")


def describe(arrays: dict[str, Any], attribute: str) -> str:
    return ", ".join(f"{name} {getattr(a, attribute)}" for name, a in arrays.items())


def broadcast_shapes(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
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


def named_arrays(spec: OperatorSpec, inputs: Sequence[Any]) -> dict[str, Any]:
    """The inputs as arrays by name (:func:`as_array`): Python values take the dtype of
    ``spec.like``, or of the first input given as an array."""
    source, like = _reference(spec, inputs)
    arrays: dict[str, Any] = {}
    for name, value in zip(spec.inputs, inputs):
        if name in arrays:
            continue
        if not is_python_value(value):
            arrays[name] = as_array(value, argument=name)
            continue
        if source and like is not None and like not in spec.dtypes:
            # A Python value has no dtype of its own: the array it would take it from is the
            # one to blame.
            acl_dtype(like, spec.dtypes, argument=source)
        array = arrays[name] = as_array(value, like, name)
        if not source and array.dtype not in spec.dtypes:
            acl_dtype(array.dtype, spec.dtypes, argument=name, python_value=True)
    return arrays


def _reference(spec: OperatorSpec, inputs: Sequence[Any]) -> tuple[str, np.dtype | None]:
    """(name, dtype) of the input whose dtype a call's Python values take: ``spec.like``
    when given as an array, else the first input given as one; ("", the Python values'
    own dtype) without one (:func:`reference_dtype`)."""
    order = list(zip(spec.inputs, inputs))
    if spec.like:
        order.insert(0, (spec.like, inputs[spec.like_index]))
    for name, value in order:
        if value is not None and not is_python_value(value):
            dtype = _array_dtype((value,))
            if dtype is not None:
                return name, dtype
    return "", reference_dtype(inputs)


def check_inputs(arrays: dict[str, Any], spec: OperatorSpec) -> tuple[int, ...]:
    """Validate dtypes, ranks and devices; return the broadcast shape."""
    values = list(arrays.values())
    supported = spec.dtypes
    for name, array in arrays.items():
        if array.dtype not in supported:
            acl_dtype(array.dtype, supported, argument=name)  # raises the TypeError
    if spec.same_dtype and len({a.dtype for a in values}) > 1:
        raise TypeError(f"{', '.join(arrays)} must share one dtype (CANN does not promote for "
                        f"this operator); got {describe(arrays, 'dtype')}")
    device = None
    for name, array in arrays.items():
        if is_bfloat16(array.dtype):
            check_dtype(array.dtype, name, spec)
        if len(array.shape) > spec.max_rank:
            raise ValueError(f"{name} has {array.ndim} dimensions (shape {array.shape}); "
                             f"at most {spec.max_rank} are supported")
        if isinstance(array, DeviceArray):
            array.require_live(name)
            if device is not None and array.device != device:
                raise ValueError("device arrays must be on one device; got "
                                 f"{describe(arrays, 'device')}")
            device = array.device
    shapes: list[tuple[int, ...]] = [a.shape for a in values]
    shape = shapes[0]
    if all(s == shape for s in shapes):
        return shape
    broadcast = broadcast_shapes(shapes)
    if broadcast is None:
        raise ValueError(f"shapes do not broadcast together: {describe(arrays, 'shape')}")
    return broadcast


def check_out(out: Any, on_device: bool, *, name: str = "out", shape: tuple[int, ...] | None = None,
              spec: OperatorSpec | None = None, operator: str = "") -> None:
    """``out`` (for the output ``name``) as an array a result can be written into: a live
    DeviceArray when the call is on the device, else a writable C-contiguous numpy array
    (results are written in place, never through a hidden copy); of ``shape`` when given.

    With ``spec`` (a curated operator) its dtypes are the rule and a device ``out`` must be
    C-contiguous; without (``call``), any dtype CANN has and, on the device, any layout
    the tensor can describe. ``operator`` prefixes the messages.
    """
    where = f"{operator}: the out= array for {name}" if operator else name
    kind: Any = DeviceArray if on_device else np.ndarray
    if not isinstance(out, kind):
        wanted = "an aclnn_py.DeviceArray (the inputs include device arrays)" if on_device \
            else "a numpy.ndarray"
        raise TypeError(f"{where} must be {wanted}, got {type(out).__name__}")
    if on_device:
        out.require_live(name)
    if spec is not None:
        check_dtype(out.dtype, name, spec)
    elif not on_device:
        acl_dtype(out.dtype, all_dtypes(), argument=name)
    if shape is not None and out.shape != shape:
        raise ValueError(f"{where} has shape {out.shape}; the result has shape {shape}")
    if on_device:
        if spec is not None and not dense_c_order(out):
            raise ValueError(f"{where} must be a C-contiguous device array")
        return
    if not out.flags.writeable:
        raise ValueError(f"{where} is read-only")
    if not out.flags.c_contiguous:
        raise ValueError(f"{where} must be C-contiguous (results are written in place, never "
                         "through a hidden copy)")


# How much work numpy may spend proving two strided views share no element
# (numpy.shares_memory's max_work, which its type hints restrict to -1 and 0 though any
# positive bound is documented); beyond it they count as overlapping.
_OVERLAP_WORK = 100_000
_shares_memory: Callable[..., bool] = np.shares_memory


def _byte_view(array: DeviceArray, start: int) -> np.ndarray:
    """A numpy array of ``array``'s bytes at its device address ``start``, for
    ``numpy.shares_memory``, which only does arithmetic on the addresses (nothing is read)."""
    itemsize = array.dtype.itemsize

    class Described:
        __array_interface__ = {"version": 3, "data": (start, True), "typestr": "|u1",
                               "shape": (*array.shape, itemsize),
                               "strides": (*(s * itemsize for s in array.strides), 1)}

    return np.asarray(Described())


def _device_span(name: str, array: Any) -> tuple[str, DeviceArray, int, int] | None:
    """(name, array, first byte, end byte) of a device array with memory, else None."""
    if not isinstance(array, DeviceArray) or not array.size or array.buffer.pointer is None:
        return None
    start = array.data_ptr()
    if not start:
        return None
    return name, array, start, start + span(array.shape, array.strides) * array.dtype.itemsize


def check_no_partial_overlap(written: Sequence[tuple[str, Any]],
                             read: Sequence[tuple[str, Any]], operator: str = "") -> None:
    """Refuse device arrays a call writes (``written``, by argument name) that share memory
    with an array it reads (``read``) other than as the very same view, or with another one
    it writes. The device reads and writes them in an order nothing promises, so the result
    would depend on it; PyTorch refuses the same (``at::assert_no_partial_overlap``). An
    output that is exactly an input (same address, dtype, shape and strides: in place) is
    fine; views whose elements interleave without sharing any are too. Host arrays travel
    as copies and never overlap."""
    if len(written) == 1:  # the usual case, quickly: blocks of the pools never overlap
        owned = written[0][1].buffer if type(written[0][1]) is DeviceArray else None
        if type(owned) is DeviceBuffer:
            for _, array in read:
                if type(array) is DeviceArray and (array.buffer is owned or
                                                   type(array.buffer) is not DeviceBuffer):
                    break
            else:
                return
    outputs = [found for found in (_device_span(n, a) for n, a in written) if found]
    if not outputs:
        return
    inputs = [found for found in (_device_span(n, a) for n, a in read) if found]
    for index, (name, array, start, end) in enumerate(outputs):
        others = [(entry, False) for entry in outputs[index + 1:]] + \
            [(entry, True) for entry in inputs]
        for (other, each, other_start, other_end), in_place_ok in others:
            if other_start >= end or start >= other_end:
                continue
            if in_place_ok and start == other_start and each.dtype == array.dtype and \
                    each.shape == array.shape and each.strides == array.strides:
                continue  # in place: the output is that input
            try:
                disjoint = not _shares_memory(_byte_view(array, start),
                                              _byte_view(each, other_start),
                                              max_work=_OVERLAP_WORK)
            except np.exceptions.TooHardError:
                disjoint = False
            if disjoint:
                continue
            where = f"{operator}: " if operator else ""
            raise ValueError(
                f"{where}{name} (written) and {other} share memory without being the same "
                f"view ({name}: shape {array.shape}, strides {array.strides}, at "
                f"{start:#x}; {other}: shape {each.shape}, strides {each.strides}, at "
                f"{other_start:#x}): the device would read and write them in no promised "
                "order. An output may be an input only as the very same view (in place); "
                "copy one of them first")


def placement(devices: list[int], out: DeviceArray | None, stream: Stream | None) -> Stream:
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


class Validated(NamedTuple):
    """A call whose arguments passed every check: its arrays by name (numpy arrays and
    DeviceArrays), the attributes' C values, and the result's shape and dtype."""

    arrays: dict[str, Any]
    c_attributes: tuple[Any, ...]
    shape: tuple[int, ...]
    dtype: np.dtype


def validated(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...]
              ) -> Validated:
    """Every argument of a call checked (``Validated``)."""
    c_attributes = spec.convert_attributes(attributes)
    arrays = named_arrays(spec, inputs)
    shape = check_inputs(arrays, spec)
    dtype = spec.result_dtype([a.dtype for a in arrays.values()])
    return Validated(arrays, c_attributes, spec.result_shape(shape, c_attributes), dtype)


class Placed(NamedTuple):
    """A validated call (``Validated``'s fields) with where it runs: on device arrays or
    numpy ones, and the stream."""

    arrays: dict[str, Any]
    c_attributes: tuple[Any, ...]
    shape: tuple[int, ...]
    dtype: np.dtype
    on_device: bool
    stream: Stream


def placed(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...], out: Any,
           stream: Stream | None, on_device: bool | None = None) -> Placed:
    """The checks of a curated call before it launches, for one-shot calls and plans alike:
    the arguments (:func:`validated`), ``out`` against the result (:func:`check_out`, no
    partial overlap with an input) and the stream against where the device arrays live
    (:func:`placement`). ``on_device``: whether the call runs on device arrays (default:
    when an input is one)."""
    call = validated(spec, inputs, attributes)
    devices = [a.device for a in call.arrays.values() if isinstance(a, DeviceArray)]
    if on_device is None:
        on_device = bool(devices)
    if out is not None:
        check_out(out, on_device, shape=call.shape, spec=spec)
        check_no_partial_overlap((("out", out),), tuple(call.arrays.items()), spec.function)
    return Placed(*call, on_device, placement(devices, out if on_device else None, stream))


def arguments(caller: str, names: tuple[str, ...], args: tuple[Any, ...],
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
