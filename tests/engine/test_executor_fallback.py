"""Executors CANN will not make repeatable: calls and plans fall back to the ordinary
two-phase launch (phase 1 on every launch, the executor consumed by phase 2).

CANN refuses ``aclSetAclOpExecutorRepeatable`` (561000) for an executor from its
executor cache: phase 1 of an operator and signature that already ran non-repeatably
in the process hands one out. The emulator models that with ``ACLNN_EMU_OP_CACHE=1``
(read at ``aclInit``, so those tests run in a subprocess); an injected fault is the
other way to make it refuse. CANN 8.0.RC2 lacks the repeatable API altogether,
simulated by making ``_core.optional`` report its functions missing.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from conftest import fired_faults, run_python
from helpers import settle, upload

import aclnn_py
from aclnn_py import AclError
from aclnn_py._c import lowlevel as _lowlevel
from aclnn_py._c import nnopbase as _nnopbase
from aclnn_py.engine import launch as _launch
from aclnn_py.engine import launch_cache as _launch_cache
from aclnn_py.engine import plans as _plans
from aclnn_py.ops.specs import SPECS, OperatorSpec
from aclnn_py.runtime import handles as _handles
from aclnn_py.runtime import streams as _streams

# Refusals come from the emulator (its executor cache, injected faults): not portable.
pytestmark = pytest.mark.emulator_only

SET_REPEATABLE = "aclSetAclOpExecutorRepeatable"
INNER = 561000  # ACLNN_ERR_INNER: CANN's refusal
FAILED = 507899
NEVER = 10**9  # a fault armed this far out never fires: its "remaining" counts the calls
ATTRIBUTES = {"reduction": "sum", "beta": 0.5, "alpha": 2.5}  # not the defaults
SEEDS = (0, 1, 2)
LIVE = ("live_executors", "live_tensors", "live_scalars", "live_device_bytes", "pending_tasks")
SPEC_IDS = list(SPECS)


def plan_class(spec: OperatorSpec) -> type:
    return next(cls for cls in _plans.Plan.__subclasses__() if cls.spec is spec)


def keywords(spec: OperatorSpec) -> dict[str, Any]:
    return {attribute.name: ATTRIBUTES[attribute.name] for attribute in spec.attributes}


def host_inputs(spec: OperatorSpec, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-3, 3, size=(2, 6)).astype(np.float32) for _ in spec.inputs]


def call(spec: OperatorSpec, arrays: list[Any]) -> Any:
    return getattr(aclnn_py, spec.function)(*arrays, **keywords(spec))


def references(spec: OperatorSpec) -> list[bytes]:
    """The results of the repeatable path for each of SEEDS, bit for bit."""
    results = [call(spec, upload(*host_inputs(spec, seed))).numpy().tobytes() for seed in SEEDS]
    settle(LIVE)  # the launch cache forgets the signature: phase 1 runs again
    return results


def arm_counters(*apis: str) -> None:
    for api in apis:
        aclnn_py.emulator.inject_fault(api, FAILED, nth=NEVER)


def calls(api: str) -> int:
    """How often ``api`` was called since :func:`arm_counters` armed it."""
    return sum(NEVER - fault["remaining"] for fault in aclnn_py.emulator.faults()
               if fault["api"] == api and fault["nth"] == NEVER)


def refuse_once(spec: OperatorSpec) -> None:
    """The next aclSetAclOpExecutorRepeatable refuses, as CANN does a cached executor;
    both it and phase 1 are counted."""
    aclnn_py.emulator.inject_fault(SET_REPEATABLE, INNER, nth=1)
    arm_counters(SET_REPEATABLE, spec.cann + "GetWorkspaceSize")


@pytest.fixture(autouse=True)
def no_leak():
    """Every test leaves the emulator's live counts as it found them."""
    before = settle(LIVE)
    yield
    assert settle(LIVE) == before


# ---- a refused executor, in this process (injected refusal) -----------------------------


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPEC_IDS)
def test_one_shot_device_calls_fall_back_and_remember_it(spec):
    expected = references(spec)
    refuse_once(spec)
    results = [call(spec, upload(*host_inputs(spec, seed))).numpy().tobytes() for seed in SEEDS]
    assert results == expected
    assert fired_faults() == [SET_REPEATABLE]
    # asked once for the signature; phase 1 on every launch (the refused executor is the
    # first launch's)
    assert calls(SET_REPEATABLE) == 1
    assert calls(spec.cann + "GetWorkspaceSize") == len(SEEDS)
    cached = _launch_cache.cache_of(_streams.current_stream())
    assert [type(entry._launcher) for entry in cached.values()] == [_launch.OneShotLaunch]


def test_a_workspace_the_pool_cannot_give_at_once_is_allocated_outside_the_lock(monkeypatch):
    """Phase 1 runs under the stream's hold lock, where the pool must not wait for the
    device: a workspace it cannot hand out at once is allocated outside and the launch
    retried (the first executor is discarded)."""
    from aclnn_py.runtime import memory as _memory

    spec = SPECS["mse_loss_backward"]
    expected = references(spec)
    inputs = upload(*host_inputs(spec, SEEDS[0]))
    refused = {"count": 0}
    take = _memory.DeviceBuffer.take

    def take_nothing_once(*arguments):
        if refused["count"] == 0:
            refused["count"] += 1
            return None
        return take(*arguments)

    monkeypatch.setattr(_memory.DeviceBuffer, "take", take_nothing_once)
    monkeypatch.setattr(_lowlevel, "repeatable_api_missing", lambda: True)  # 8.0.RC2's way
    # a transposed x: the kernel stages a contiguous copy in its workspace
    x = host_inputs(spec, SEEDS[0])[1]
    transposed = aclnn_py.to_device(np.ascontiguousarray(x.T).T)
    result = call(spec, [inputs[0], transposed, inputs[2]])
    assert result.numpy().tobytes() == expected[0]
    assert refused["count"] == 1
    again = call(spec, [inputs[0], transposed, inputs[2]])  # the workspace is kept
    assert again.numpy().tobytes() == expected[0]
    first = result
    for array in (*inputs, transposed, first, again):
        array.free()


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPEC_IDS)
def test_numpy_calls_fall_back(spec):
    expected = references(spec)
    refuse_once(spec)
    results = [call(spec, host_inputs(spec, seed)).tobytes() for seed in SEEDS]
    assert results == expected
    assert (calls(SET_REPEATABLE), calls(spec.cann + "GetWorkspaceSize")) == (1, len(SEEDS))


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPEC_IDS)
def test_plans_fall_back_and_rebind_every_array(spec):
    expected = references(spec)
    refuse_once(spec)
    first = upload(*host_inputs(spec, SEEDS[0]))
    with plan_class(spec)(*first, **keywords(spec)) as plan:
        assert isinstance(plan._launcher, _launch.OneShotLaunch)
        results = [plan.run().numpy().tobytes()]  # launches the refused executor
        for seed in SEEDS[1:]:  # by position: the inputs, then out
            arrays = [*upload(*host_inputs(spec, seed)), aclnn_py.empty(plan.out.shape,
                                                                       plan.out.dtype)]
            results.append(plan.run(*arrays).numpy().tobytes())
            assert plan.out is arrays[-1]
        assert results == expected
        assert calls(SET_REPEATABLE) == 1
        assert calls(spec.cann + "GetWorkspaceSize") == len(SEEDS)


def test_a_plan_whose_first_run_rebinds_drops_the_refused_executor():
    spec = SPECS["smooth_l1_loss_backward"]
    expected = references(spec)
    refuse_once(spec)
    plan = plan_class(spec)(*upload(*host_inputs(spec, 5)), **keywords(spec))
    live = aclnn_py.emulator.stats()["live_executors"]
    result = plan.run(*upload(*host_inputs(spec, SEEDS[0]))).numpy()
    assert result.tobytes() == expected[0]
    assert aclnn_py.emulator.stats()["live_executors"] == live - 1  # destroyed, not launched
    assert calls(spec.cann + "GetWorkspaceSize") == 2
    plan.close()


def test_a_plan_closed_or_dropped_before_running_leaks_nothing():
    spec = SPECS["add"]
    refuse_once(spec)
    plan = plan_class(spec)(*upload(*host_inputs(spec, 1)), alpha=2.5)
    assert aclnn_py.emulator.stats()["live_executors"] == 1
    plan.close()
    plan.close()
    assert aclnn_py.emulator.stats()["live_executors"] == 0
    aclnn_py.emulator.inject_fault(SET_REPEATABLE, INNER, nth=1)
    plan = plan_class(spec)(*upload(*host_inputs(spec, 1)), alpha=2.5)
    del plan  # the autouse fixture checks that nothing is left


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPEC_IDS)
def test_a_failed_phase_2_consumes_the_executor_and_leaks_nothing(spec):
    expected = references(spec)
    refuse_once(spec)
    aclnn_py.emulator.inject_fault(spec.cann, INNER, nth=2)  # the second launch fails
    device = upload(*host_inputs(spec, SEEDS[0]))
    assert call(spec, device).numpy().tobytes() == expected[0]
    with pytest.raises(AclError) as raised:
        call(spec, device)
    assert (raised.value.api, raised.value.status) == (spec.cann, INNER)
    del raised
    failed_deletes = _lowlevel.host().aclpyHandlesFailedDeletes()
    assert settle(LIVE)["live_executors"] == 0
    # never destroyed by us once phase 2 had it: no destroy failed on a freed executor
    assert _lowlevel.host().aclpyHandlesFailedDeletes() == failed_deletes
    assert call(spec, device).numpy().tobytes() == expected[0]  # a new entry works


def test_a_failed_plan_run_leaves_the_plan_usable():
    spec = SPECS["mse_loss_backward"]
    expected = references(spec)
    refuse_once(spec)
    with plan_class(spec)(*upload(*host_inputs(spec, SEEDS[1])), **keywords(spec)) as plan:
        aclnn_py.emulator.inject_fault(spec.cann, FAILED, nth=1)
        with pytest.raises(AclError, match=spec.cann):
            plan.run()
        assert aclnn_py.emulator.stats()["live_executors"] == 0  # consumed by the failure
        assert plan.run().numpy().tobytes() == expected[1]
        assert calls(spec.cann + "GetWorkspaceSize") == 2


@pytest.mark.parametrize("when", ["before phase 2", "after phase 2"])
def test_an_interrupted_launch_leaks_nothing_and_destroys_nothing_twice(monkeypatch, when):
    spec = SPECS["l1_loss_backward"]
    expected = references(spec)
    launch_once = _handles.Executor.launch_once

    def interrupted(self, workspace, stream_handle):
        if when == "after phase 2":
            launch_once(self, workspace, stream_handle)
        raise KeyboardInterrupt

    refuse_once(spec)
    device = upload(*host_inputs(spec, SEEDS[0]))
    out = aclnn_py.empty((2, 6), np.float32)
    failed_deletes = _lowlevel.host().aclpyHandlesFailedDeletes()
    monkeypatch.setattr(_handles.Executor, "launch_once", interrupted)
    with pytest.raises(KeyboardInterrupt):
        getattr(aclnn_py, spec.function)(*device, **keywords(spec), out=out)
    monkeypatch.undo()
    assert settle(LIVE)["live_executors"] == 0
    assert _lowlevel.host().aclpyHandlesFailedDeletes() == failed_deletes
    if when == "after phase 2":  # the work was queued and held: it ran
        assert out.numpy().tobytes() == expected[0]
    result = getattr(aclnn_py, spec.function)(*device, **keywords(spec), out=out)
    assert result.numpy().tobytes() == expected[0]


def test_a_freed_array_is_refused_before_phase_1():
    spec = SPECS["mse_loss"]
    refuse_once(spec)
    device = upload(*host_inputs(spec, 3))
    call(spec, device).synchronize()
    device[1].free()
    with pytest.raises(ValueError, match="^y is a DeviceArray that was freed$"):
        call(spec, device)
    assert calls(spec.cann + "GetWorkspaceSize") == 1


def test_the_missing_repeatable_api_falls_back_without_asking(monkeypatch):
    """The Python side of CANN 8.0.RC2 (the whole seam runs in a subprocess below)."""
    spec = SPECS["smooth_l1_loss"]
    expected = references(spec)
    monkeypatch.setattr(_nnopbase, "_repeatable_api_missing", _lowlevel.REPEATABLE_API)
    arm_counters(*_lowlevel.REPEATABLE_API, spec.cann + "GetWorkspaceSize")
    first = upload(*host_inputs(spec, SEEDS[0]))
    with plan_class(spec)(*first, **keywords(spec)) as plan:
        assert plan.workspace_size == 0  # no phase 1 before the first run
        assert calls(spec.cann + "GetWorkspaceSize") == 0
        assert plan.run().numpy().tobytes() == expected[0]
    results = [call(spec, upload(*host_inputs(spec, seed))).numpy().tobytes() for seed in SEEDS]
    assert results == expected
    assert [calls(api) for api in _lowlevel.REPEATABLE_API] == [0, 0, 0, 0]
    assert calls(spec.cann + "GetWorkspaceSize") == 1 + len(SEEDS)


# ---- in a subprocess: ACLNN_EMU_OP_CACHE=1, and a CANN without the repeatable API -------


_COMMON = """
    import gc, json
    import numpy as np
    import aclnn_py
    from aclnn_py.engine import plans as _plans
    from aclnn_py._c import core as _core
    from aclnn_py._c import lowlevel as _lowlevel
    from aclnn_py._c import nnopbase as _nnopbase
    from aclnn_py.ops.specs import SPECS
    emulator = aclnn_py.emulator
    NEVER, SEEDS, ATTRIBUTES = {never}, {seeds}, {attributes}

    def plan_class(spec):
        return next(c for c in _plans.Plan.__subclasses__() if c.spec is spec)

    def keywords(spec):
        return {{a.name: ATTRIBUTES[a.name] for a in spec.attributes}}

    def host_inputs(spec, seed):
        rng = np.random.default_rng(seed)
        return [rng.uniform(-3, 3, size=(2, 6)).astype(np.float32) for _ in spec.inputs]

    def upload(arrays):
        return [aclnn_py.to_device(a) for a in arrays]

    def call(spec, arrays):
        return getattr(aclnn_py, spec.function)(*arrays, **keywords(spec))

    def arm(*apis):
        emulator.clear_faults()
        for api in apis:
            emulator.inject_fault(api, 507899, nth=NEVER)

    def calls(api):
        return sum(NEVER - f["remaining"] for f in emulator.faults()
                   if f["api"] == api and f["nth"] == NEVER)

    def three_ways(spec, counted):
        # one-shot device calls, numpy calls, a plan: each from a fresh launch cache
        report = {{}}
        aclnn_py.empty_cache()
        arm(*counted)
        report["device"] = [call(spec, upload(host_inputs(spec, s))).numpy().tobytes().hex()
                            for s in SEEDS]
        report["device_calls"] = [calls(api) for api in counted]
        aclnn_py.empty_cache()
        arm(*counted)
        report["numpy"] = [call(spec, host_inputs(spec, s)).tobytes().hex() for s in SEEDS]
        report["numpy_calls"] = [calls(api) for api in counted]
        aclnn_py.empty_cache()
        arm(*counted)
        with plan_class(spec)(*upload(host_inputs(spec, SEEDS[0])), **keywords(spec)) as plan:
            results = [plan.run().numpy().tobytes().hex()]
            for s in SEEDS[1:]:
                out = aclnn_py.empty(plan.out.shape, plan.out.dtype)
                results.append(plan.run(*upload(host_inputs(spec, s)), out).numpy()
                               .tobytes().hex())
        report["plan"] = results
        report["plan_calls"] = [calls(api) for api in counted]
        emulator.clear_faults()
        return report

    def live():
        aclnn_py.synchronize()
        aclnn_py.empty_cache()
        gc.collect()
        stats = emulator.stats()
        return {{key: stats[key] for key in {live}}}
"""


def _script(body: str) -> str:
    common = _COMMON.format(never=NEVER, seeds=SEEDS, attributes=ATTRIBUTES, live=LIVE)
    return common + body


def _report(done) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS.values(), ids=SPEC_IDS)
def test_cached_executors_of_every_operator_fall_back(spec):
    """ACLNN_EMU_OP_CACHE=1: once the signature ran non-repeatably, phase 1 hands out
    cached executors, which CANN refuses to make repeatable; calls and plans still give
    the repeatable path's results, ask once per signature and leak nothing."""
    expected = [value.hex() for value in references(spec)]
    done = run_python(_script(f"""
    spec = SPECS[{spec.function!r}]
    phase1 = spec.cann + "GetWorkspaceSize"
    # one ordinary (non-repeatable) run of the signature: the refusal injected once
    emulator.inject_fault("{SET_REPEATABLE}", {INNER})
    call(spec, upload(host_inputs(spec, SEEDS[0]))).numpy()
    assert [f["fired"] for f in emulator.faults()] == [True]
    emulator.clear_faults()
    before = emulator.stats()["cached_executors"]
    report = three_ways(spec, ["{SET_REPEATABLE}", phase1])
    report["cached"] = emulator.stats()["cached_executors"] - before
    report["live"] = live()
    print(json.dumps(report))
    """), {"ACLNN_EMU_OP_CACHE": "1"})
    report = _report(done)
    assert report["device"] == expected
    assert report["numpy"] == expected
    assert report["plan"] == expected
    # [aclSetAclOpExecutorRepeatable calls, phase 1 calls]: asked once per signature
    for way in ("device", "numpy", "plan"):
        assert report[way + "_calls"] == [1, len(SEEDS)], way
    assert report["cached"] == 3 * len(SEEDS)  # every phase 1 came from the emulated cache
    assert report["live"] == dict.fromkeys(LIVE, 0)


@pytest.mark.slow
def test_without_the_op_cache_a_non_repeatable_run_changes_nothing():
    """The control: the same sequence without ACLNN_EMU_OP_CACHE keeps repeatable executors
    (phase 1 once per cache entry)."""
    done = run_python(_script(f"""
    spec = SPECS["mse_loss_backward"]
    emulator.inject_fault("{SET_REPEATABLE}", {INNER})
    call(spec, upload(host_inputs(spec, SEEDS[0]))).numpy()
    report = three_ways(spec, ["{SET_REPEATABLE}", spec.cann + "GetWorkspaceSize"])
    report["cached"] = emulator.stats()["cached_executors"]
    print(json.dumps(report))
    """))
    report = _report(done)
    assert [report[way + "_calls"] for way in ("device", "numpy", "plan")] == [[1, 1]] * 3
    assert report["cached"] == 0


@pytest.mark.slow
def test_every_operator_runs_on_a_cann_without_the_repeatable_api():
    """CANN 8.0.RC2: the four functions are missing from the loaded libraries. Nothing
    calls them, aclDestroyAclOpExecutor included (the host library gets NULL), results
    are the usual ones, and no executor is left unlaunched."""
    expected = {name: [value.hex() for value in references(spec)]
                for name, spec in SPECS.items()}
    done = run_python(_script("""
    optional = _core.optional
    def without_repeatable_api(library, name):
        return _lowlevel.NULL if name in _lowlevel.REPEATABLE_API else optional(library, name)
    _core.optional = without_repeatable_api
    api = list(_lowlevel.REPEATABLE_API)
    reports = {}
    for name, spec in SPECS.items():
        reports[name] = three_ways(spec, [*api, spec.cann + "GetWorkspaceSize"])
    reports["missing"] = list(_lowlevel.repeatable_api_missing())
    reports["undestroyable"] = _lowlevel.handles_undestroyable()
    reports["live"] = live()
    print(json.dumps(reports))
    """))
    reports = _report(done)
    assert reports.pop("missing") == list(_lowlevel.REPEATABLE_API)
    assert reports.pop("undestroyable") == 0
    assert reports.pop("live") == dict.fromkeys(LIVE, 0)
    for name, report in reports.items():
        for way in ("device", "numpy", "plan"):
            assert report[way] == expected[name], (name, way)
            assert report[way + "_calls"] == [0, 0, 0, 0, len(SEEDS)], (name, way)


@pytest.mark.slow
def test_without_a_destroy_function_an_unlaunched_executor_is_given_up():
    """aclpyHandlesConfigure accepts a NULL aclDestroyAclOpExecutor: releasing an executor
    then gives it up (counted), and never calls through NULL."""
    done = run_python("""
    import aclnn_py, numpy as np
    from aclnn_py._c import core as _core
    from aclnn_py._c import lowlevel as _lowlevel
    from aclnn_py._c import nnopbase as _nnopbase
    from aclnn_py.runtime import process as _runtime
    from aclnn_py.runtime import handles as _handles
    from aclnn_py.runtime import streams as _streams
    optional = _core.optional
    _core.optional = lambda library, name: (
        _lowlevel.NULL if name == "aclDestroyAclOpExecutor" else optional(library, name))
    x = aclnn_py.to_device(np.ones(3, np.float32))
    tensors = [x.tensor(), x.tensor(), x.tensor()]
    executor = _handles.Executor("aclnnMseLoss", tensors[0].handle, tensors[1].handle, 0,
                                 tensors[2].handle)
    executor.close()
    print(_lowlevel.handles_undestroyable(), aclnn_py.emulator.stats()["live_executors"],
          _lowlevel.repeatable_api_missing())
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["1", "1"]  # given up, so still live: the documented leak
    assert "aclDestroyAclOpExecutor" in done.stdout


# ---- the emulator's executor cache ---------------------------------------------------------


@pytest.mark.slow
def test_the_emulated_op_cache_refuses_cached_executors_and_stays_strict():
    done = run_python("""
    import numpy as np, aclnn_py
    from aclnn_py import AclError
    from aclnn_py._c import lowlevel as ll
    from aclnn_py.runtime import process as rt
    from aclnn_py.runtime import handles as rt_handles
    from aclnn_py.runtime import streams as rt_streams
    stream = rt_streams.default_stream()
    x = aclnn_py.to_device(np.ones((2, 3), np.float32))
    y = aclnn_py.to_device(np.zeros((2, 3), np.float32))
    out = aclnn_py.empty((2, 3), np.float32)
    kept = []

    def phase1(reduction=0, shape=(2, 3)):  # aclnnMseLossBackward(x, x, y, reduction, out)
        tensors = [x.tensor(), x.tensor(), y.tensor(), out.tensor()]
        if shape != (2, 3):
            kept.append(aclnn_py.to_device(np.zeros(shape, np.float32)))
            tensors[2] = kept[-1].tensor()
        kept.append(tensors)
        return rt_handles.Executor("aclnnMseLossBackward", *[t.handle for t in tensors[:3]],
                                   reduction, tensors[3].handle)

    def status(function, *args):
        try:
            function(*args)
        except AclError as error:
            return error.status, error.message
        return 0, ""

    def cached():
        return aclnn_py.emulator.stats()["cached_executors"]

    first = phase1()
    assert first.make_repeatable()  # a repeatable run does not fill the cache
    first.launch(ll.NULL, stream)
    first.close()
    assert phase1().make_repeatable() and cached() == 0
    once = phase1()
    once.launch_once(ll.NULL, stream.handle)  # the non-repeatable run
    again = phase1()
    assert cached() == 1
    code, message = status(ll.set_executor_repeatable, again.handle)
    print("refused", code, "executor cache" in message)
    print("other reduction", phase1(reduction=2).make_repeatable(),
          "other shape", phase1(shape=(1, 3)).make_repeatable())
    assert not again.make_repeatable()
    handle = again.handle
    again.launch_once(ll.NULL, stream.handle)  # it launches, once
    print("relaunch", status(ll.operator_launch, "aclnnMseLossBackward", ll.NULL, 0, handle,
                             stream.handle)[0],
          "destroy", status(ll.destroy_executor, handle)[0])
    stream.synchronize()
    print("result", out.numpy().tolist() == np.full((2, 3), 2.0).tolist())
    """, {"ACLNN_EMU_OP_CACHE": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "refused 561000 True",
        "other reduction True other shape True",
        "relaunch 561103 destroy 561103",
        "result True",
    ]


@pytest.mark.slow
def test_the_op_cache_variable_is_checked_at_init():
    done = run_python("""
    import aclnn_py
    try:
        aclnn_py.runtime_info()
    except aclnn_py.AclError as error:
        print(error.api, error.status, error.message)
    """, {"ACLNN_EMU_OP_CACHE": "yes"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("aclInit 100000 ")
    assert "ACLNN_EMU_OP_CACHE='yes' is invalid" in done.stdout


def test_a_consuming_launch_of_an_empty_handle_launches_nothing():
    owned = _lowlevel.new_handle(_lowlevel.HANDLE_EXECUTOR)
    launches = aclnn_py.emulator.stats()["kernel_launches"]
    with pytest.raises(AclError) as raised:
        _lowlevel.launch_consuming(owned, _lowlevel.operator_phase2("aclnnAdd"), _lowlevel.NULL,
                                   0, _streams.current_stream().handle, "aclnnAdd")
    assert raised.value.status == 561103
    assert aclnn_py.emulator.stats()["kernel_launches"] == launches
