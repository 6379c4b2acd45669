"""One numpy call across several devices (``devices=``).

The call is validated as a one-device numpy call is, and the device ids are checked,
before any device work. Then it is cut along the leading axis of the broadcast shape
(leading axes of length 1 dropped first), exactly as chunked calls are
(``engine.chunked.Split``): one range of rows per device, as even as the rows allow, the
first ``length % n`` devices taking one row more. A leading axis shorter than the
device list uses that many devices; a 0-d or empty result uses the first device.

Each range runs in a host thread of its own on its device, as a one-device numpy call
runs (``numpy_path.Layout``: one staged round trip, or chunks when it does not fit the
device), on that device's current stream in the calling thread: the stream of the
caller's innermost ``with stream:`` when it is on that device, else the device's
default stream. The C calls release the GIL (cffi does, for every call), so the
devices' copies and kernels overlap. Each thread binds its device's context
(``runtime.process.activate``) and waits for its stream before it ends; the calling thread
joins every thread, even when interrupted, before it returns or raises.

Results: ``"none"`` is written range by range into the result, bit for bit the
one-device result. A backward's ``"mean"`` runs the ranges with ``"sum"`` and each
thread multiplies its rows by one over the divisor of the whole call, in float32, as
chunked calls do (within a few float32 roundings of the one-device result, which
applies the divisor inside the kernel). A forward loss's ``"mean"`` and ``"sum"`` add
the ranges' results in float64 on the host, rounded once to the result's dtype.
With one device (or one range) the call is the one-device call, made in a thread on
that device: the same result, bit for bit, for every reduction.

An ``out`` whose memory may overlap an input's (``engine.chunked.overlaps``) is not written
range by range: a device would read input rows another device already overwrote. The
ranges write a temporary, copied into ``out`` once every device is done.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from ..ops.specs import OperatorSpec
from ..runtime.arrays import DeviceArray
from ..runtime.process import activate, device_count
from ..runtime.process import visible_devices as visible_value
from ..runtime.results import result_array
from ..runtime.streams import Stream, default_stream, innermost_stream
from . import chunked as _chunked
from . import numpy_path
from .dispatch import launch_on_host
from .validate import check_out, validated

logger = logging.getLogger("aclnn_py")

_ACCEPTED = 'a sequence of visible device ids (e.g. [0, 1]) or "all"'


def device_list(devices: Any) -> list[int]:
    """The visible device ids ``devices`` names, in order; TypeError or ValueError naming
    ``devices=`` otherwise."""
    count = device_count()
    if isinstance(devices, str):
        if devices != "all":
            raise ValueError(f"devices= must be {_ACCEPTED}, got {devices!r}")
        return list(range(count))
    if not isinstance(devices, Sequence):
        raise TypeError(f"devices= must be {_ACCEPTED}, got {type(devices).__name__}")
    ids: list[int] = []
    for device in devices:
        if isinstance(device, bool) or not isinstance(device, (int, np.integer)):
            raise TypeError(f"devices= holds device ids (ints), got {type(device).__name__}")
        device = int(device)
        if not 0 <= device < count:
            value = visible_value()
            where = f" (ASCEND_RT_VISIBLE_DEVICES={value!r})" if value is not None else ""
            raise ValueError(f"devices=: device {device} is not visible; {count} device(s) are "
                             f"visible{where}, as ids 0 to {count - 1}")
        if device in ids:
            raise ValueError(f"devices=: device {device} is named twice")
        ids.append(device)
    if not ids:
        raise ValueError('devices= is empty: name at least one device, or "all"')
    return ids


def _check_arguments(spec: OperatorSpec, inputs: Sequence[Any], out: Any,
                     stream: Stream | None) -> None:
    for name, value in zip(spec.inputs, inputs):
        if isinstance(value, DeviceArray):
            raise TypeError(f"devices= splits calls over numpy arrays; {name} is a DeviceArray "
                            f"on device {value.device} (call without devices=, or pass numpy)")
    if isinstance(out, DeviceArray):
        raise TypeError("devices= splits calls over numpy arrays; out is a DeviceArray")
    if stream is not None:
        raise ValueError("stream= cannot be given with devices=: each device runs on its own "
                         "current stream")
    if not spec.elementwise:
        raise ValueError(f"{spec.function} does not take devices=")


def _streams(ids: list[int]) -> list[Stream | None]:
    """The stream each device runs on: the caller's innermost ``with`` stream where it is
    on that device, else None (the device's default stream, taken in its thread)."""
    innermost = innermost_stream()
    if innermost is not None and innermost.device in ids and innermost.closed:
        raise ValueError(f"the current stream of device {innermost.device} is closed: work "
                         f"cannot be queued on it (leave its `with` block)")
    return [innermost if innermost is not None and innermost.device == device else None
            for device in ids]


def call(spec: OperatorSpec, inputs: Sequence[Any], attributes: tuple[Any, ...], out: Any,
         stream: Stream | None, devices: Any) -> np.ndarray:
    """``spec`` over numpy ``inputs``, cut across ``devices`` (see the module's notes)."""

    ids = device_list(devices)
    _check_arguments(spec, inputs, out, stream)
    named, c_attributes, shape, dtype = validated(spec, inputs, attributes)
    arrays: list[np.ndarray] = list(named.values())
    if out is not None:
        check_out(out, False, shape=shape, spec=spec)
    lanes = _streams(ids)
    host = out if out is not None else result_array(shape, dtype)
    split = _chunked.Split(spec, c_attributes, arrays, host)
    parts = min(len(ids), split.length) if split.splittable else 1

    if parts == 1:
        def whole(stream: Stream) -> None:
            launch_on_host(spec, c_attributes, inputs, attributes, arrays, [host], out, stream,
                           staged=True)

        _run([(ids[0], lanes[0], whole)])
        return host

    if out is not None and not split.reducing and _chunked.overlaps(out, arrays):
        # A device would read input rows another device's range already overwrote: the
        # ranges write a temporary, copied into ``out`` once every device is done.
        split = _chunked.Split(spec, c_attributes, arrays, np.empty(host.shape, host.dtype))
    base, extra = divmod(split.length, parts)
    bounds = [0]
    for index in range(parts):
        bounds.append(bounds[-1] + base + (index < extra))
    partials = [np.empty((), host.dtype) for _ in range(parts)] if split.reducing else []

    def part(index: int) -> Callable[[Stream], None]:
        start, stop = bounds[index], bounds[index + 1]

        def work(stream: Stream) -> None:
            rows = split.rows(start, stop)
            target = partials[index] if split.reducing else split.target[start:stop]
            layout = numpy_path.Layout(spec, split.attributes, rows, target, stream.device)
            layout.run(rows, target, stream)
            if not split.reducing:
                split.scale_rows(target, start, stop)

        return work

    _run([(ids[index], lanes[index], part(index)) for index in range(parts)])
    if split.reducing:
        for index, partial in enumerate(partials):
            split.add(float(partial), bounds[index], bounds[index + 1])
        split.finish()
    elif split.host is not host:
        np.copyto(host, split.host)
    return host


def _run(tasks: list[tuple[int, Stream | None, Callable[[Stream], None]]]) -> None:
    """Each ``work(stream)`` in a thread of its own, on its device; returns when every
    thread has ended. The first error raised in a thread is raised here, carrying the
    others as notes (logged before Python 3.11); an interrupt of the calling thread is
    raised once every thread has ended."""
    errors: list[tuple[int, BaseException]] = []
    lock = threading.Lock()

    def body(device: int, lane: Stream | None, work: Callable[[Stream], None]) -> None:
        try:
            activate(device)
            work(lane if lane is not None else default_stream(device))
        except BaseException as error:  # handed to the calling thread
            with lock:
                errors.append((device, error))

    threads = [threading.Thread(target=body, args=task, daemon=True,
                                name=f"aclnn_py devices= device {task[0]}") for task in tasks]
    interrupted: BaseException | None = None
    try:
        for thread in threads:
            thread.start()
    finally:
        for thread in threads:
            while thread.ident is not None:
                try:
                    thread.join()
                    break
                except BaseException as error:  # the threads still use the arrays: wait
                    interrupted = interrupted or error
    if interrupted is not None:
        try:
            raise interrupted
        finally:
            del interrupted, errors
    if errors:
        (_, first), others = errors[0], errors[1:]
        for device, other in others:
            text = f"devices=: device {device} failed too: {type(other).__name__}: {other}"
            if hasattr(first, "add_note"):
                first.add_note(text)
            else:
                logger.error("aclnn_py %s", text)
        try:
            raise first
        finally:  # no cycle through this frame: what the threads' frames hold goes now
            del first, others, errors
