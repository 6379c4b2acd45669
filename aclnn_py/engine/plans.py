"""Plans: phase 1 of one operator once, relaunched with rebound device arrays."""

from __future__ import annotations

from typing import Any, NoReturn, TypeVar

from .._c import lowlevel as ll
from .._c.lowlevel import interrupted as _interrupted
from ..ops.specs import OperatorSpec
from ..runtime.arrays import DeviceArray, empty, is_npu_tensor, to_device
from ..runtime.npu_tensors import adopt
from ..runtime.process import activate
from .launch import Launch, RepeatableLaunch, new_launch
from .tensors import TensorCall, involved
from .validate import arguments, check_no_partial_overlap, placed

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
    launches (``engine.launch.new_launch``), so whatever a queued run uses stays
    alive until it is done, even when the plan is dropped without :meth:`close`.
    :meth:`close` lets go of everything the plan holds (executor, workspace, ``out``
    and the arrays bound): keep what ``run()`` returns to use ``out`` afterwards.
    """

    spec: OperatorSpec

    def __init__(self, *args: Any, out: Any = None, stream: Any = None, **kwargs: Any) -> None:
        self._launcher: Launch | None = None
        # run() without arguments: one C call relaunching the arrays of the last run, while
        # none of them moved or was freed (RepeatableLaunch.fast_call), else None.
        self._relaunch: Any = None
        self._relaunch_waiting: Any = None  # the same, then the stream's wait, in one C call
        spec = self.spec
        inputs, attributes = _bind(spec, args, kwargs)
        # torch NPU tensors or a torch stream (engine.tensors): the plan runs over the
        # tensors' memory, on torch's stream, and torch allocates its out.
        self._torch = TensorCall(stream) if involved(inputs, out, stream) else None
        if self._torch is not None:
            inputs = tuple(self._torch.adopt(value, name)
                           for value, name in zip(inputs, spec.inputs))
            out = self._torch.adopt(out, "out")
            devices = [a.device for a in (*inputs, out) if type(a) is DeviceArray]
            stream = self._torch.stream(devices[0] if devices else None)
        call = placed(spec, inputs, attributes, out, stream, on_device=True)
        stream = call.stream
        if out is None:
            if self._torch is not None and self._torch.like is not None:
                out = self._torch.new_array(call.shape, call.dtype)
            else:
                out = empty(call.shape, call.dtype, device=stream.device)
        self.stream = stream
        self._names = spec.names  # the arrays' names, inputs then out (run() reads them)
        # Host inputs go up once: the plan owns their device copies (run() rebinds them).
        # Empty once the plan is closed.
        self._arrays: tuple[DeviceArray, ...] = (
            *(to_device(a, device=stream.device, stream=stream) for a in call.arrays.values()),
            out)
        # What run() returns for each array: the torch tensor it is over, or itself.
        self._given: tuple[Any, ...] = self._arrays if self._torch is None else tuple(
            self._torch.result(a) for a in self._arrays)
        self._described = ", ".join(f"{name}={array.shape} {array.dtype.name}"
                                    for name, array in zip(spec.names, self._arrays))
        launcher = self._launcher = new_launch(spec, call.c_attributes, self._arrays,
                                               stream.device)
        if self._torch is None and isinstance(launcher, RepeatableLaunch):
            self._relaunch = launcher.fast_call()
            self._relaunch_waiting = launcher.fast_wait_call()

    @property
    def out(self) -> Any:
        """The array every run writes, a torch tensor when the plan was given torch tensors
        (ValueError once the plan is closed: it let go of it)."""
        given = self._given
        if not given:
            raise ValueError(f"{type(self).__name__} is closed: it no longer holds its out "
                             "(keep what run() returns)")
        return given[-1]

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

    def run(self, *arrays: Any, **named: Any) -> Any:
        """Relaunch, first rebinding the arrays given (by position in the operator's input
        order, then ``out``, or by name; None keeps the bound one); returns ``out``, still
        computing, or with ``synchronize`` done: the plan's stream waited for, as its
        ``synchronize()`` waits (a repeated run without arguments does both in one C
        call). (``synchronize`` comes in ``named``: the generated subclasses' signatures
        then override this one.)"""
        if named and "synchronize" in named:
            synchronize = named.pop("synchronize")
            if type(synchronize) is not bool:
                raise TypeError(f"synchronize must be True or False; got {synchronize!r}")
            if synchronize:
                return self._run_and_wait(arrays, named)
        relaunch = self._relaunch
        if relaunch is not None and not arrays and not named:
            given = self._given  # before the call: close() empties it after retiring
            status = relaunch()  # the checks of the last run still hold, or it declines
            if not status and given:
                if _interrupted:
                    ll.raise_interrupt()
                return given[-1]
            if status == ll.LAUNCHED_FENCE_DONE and given:
                launcher = self._launcher
                if isinstance(launcher, RepeatableLaunch):
                    self.stream.fences_done(launcher.fences_done_mark())
                return given[-1]
            if status != ll.SLOW:  # retired (closed meanwhile) or CANN's error: as below
                self._failed(status)
        return self._run(arrays, named)

    def _run_and_wait(self, arrays: tuple[Any, ...], named: dict[str, Any]) -> Any:
        """:meth:`run` with ``synchronize``."""
        relaunch = self._relaunch_waiting
        stream = self.stream
        # (work the stream holds is let go of by its own wait only: as synchronize() does)
        if relaunch is not None and not arrays and not named and stream.holds_nothing():
            given = self._given  # before the call: close() empties it after retiring
            result = relaunch()
            if not result and given:  # launched and waited for
                stream.waited(0)  # what the wait let go of
                if _interrupted:
                    ll.raise_interrupt()
                return given[-1]
            statuses = ll.RelaunchWaited.of(result)
            if statuses.status != ll.SLOW:
                self._waited(statuses, given)
                return given[-1]
        result = self.run(*arrays, **named)
        stream.synchronize()
        return result

    def _waited(self, statuses: ll.RelaunchWaited, given: tuple[Any, ...]) -> None:
        """After a relaunch and wait that did not both succeed plainly: the fences the
        launch found done, then the wait's failure, the launch's failure, or a plan closed
        meanwhile, raised."""
        if statuses.waited != ll.SLOW:  # launched, then waited
            launcher = self._launcher
            if statuses.status == ll.LAUNCHED_FENCE_DONE and \
                    isinstance(launcher, RepeatableLaunch):
                # (the record's mark, which a racing run may have moved on: also done)
                self.stream.fences_done(launcher.fences_done_mark())
            self.stream.waited(statuses.waited)  # raises when the wait failed
            if given:
                if _interrupted:
                    ll.raise_interrupt()
                return
        self._failed(statuses.status)

    def _failed(self, status: int) -> None:
        """What a declined or failed relaunch without arguments raises."""
        launcher = self._open()  # raises once closed
        if status == ll.RELAUNCH_RETIRED:
            raise ValueError(f"{launcher.operator}: this launch was closed")
        record = getattr(launcher, "record", None)
        ll.check(status, launcher.operator if record is None else record.failed(
            launcher.operator))

    def _run(self, arrays: tuple[Any, ...], named: dict[str, Any]) -> Any:
        """:meth:`run` through every check: rebinds, placement, torch's ordering."""
        # The arrays first: close() lets go of the launcher first, so arrays read before
        # it did come with a launcher that is open (or refuses the launch once retired).
        bound, given = self._arrays, self._given
        launcher = self._launcher
        if launcher is None:
            launcher = self._open()  # raises
        if arrays or named:
            bound, given = self._rebound(bound, given, arrays, named)
            names = self._names
            check_no_partial_overlap(((names[-1], bound[-1]),), tuple(zip(names, bound[:-1])),
                                     self.spec.function)
        stream = self.stream
        activate(stream.device)  # any thread may run a plan
        torch = self._torch
        if torch is not None:
            torch.flush()  # torch's queued work first (engine.tensors)
        # Not fast yet: run() may repeat the launch in one C call only once the plan holds
        # the arrays it relaunches (an interrupt in between leaves it off, never on over
        # arrays the plan let go of).
        epoch = launcher.launch(stream, bound)  # torch's memory: held until the run is done
        if torch is not None:
            torch.record(given)
            self._arrays, self._given = bound, given
        elif isinstance(launcher, RepeatableLaunch) and epoch:
            stream.allow_fast(launcher, bound, epoch, self._bind)
        else:
            self._arrays, self._given = bound, given
        if self._launcher is None:  # closed by another thread meanwhile: let go again
            self._arrays = self._given = ()
        return given[-1]

    def _bind(self, bound: tuple[DeviceArray, ...]) -> None:
        """Hold ``bound`` as the plan's arrays (their given values are themselves)."""
        self._arrays = self._given = bound

    def _rebound(self, bound: tuple[DeviceArray, ...], given: tuple[Any, ...],
                 arrays: tuple[Any, ...], named: dict[str, Any]
                 ) -> tuple[tuple[DeviceArray, ...], tuple[Any, ...]]:
        names = self._names
        values = arguments("run()", names, arrays, named)
        new_bound, new_given = [], []
        for name, each, was in zip(names, bound, given):
            value = values.get(name)
            if value is None:
                new_bound.append(each)
                new_given.append(was)
                continue
            array = adopt(value, name) if is_npu_tensor(value) else value
            new_bound.append(_like(name, array, each))
            new_given.append(value)
        return tuple(new_bound), tuple(new_given)

    def close(self) -> None:
        """Wait for the plan's work, then destroy the executor, release the workspace and
        let go of ``out`` and the arrays bound (queued work holds what it uses until it
        is done). Safe to call twice."""
        self._relaunch = None
        launcher, self._launcher = self._launcher, None
        self._arrays = self._given = ()  # no call between: no interrupt between them
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


def _bind(spec: OperatorSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
          ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A plan's arguments, as (inputs, attribute values)."""
    values = arguments(spec.function, (*spec.inputs, *(a.name for a in spec.attributes)),
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
