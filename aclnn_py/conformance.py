"""``python -m aclnn_py --conformance``: does the installed CANN behave as aclnn_py assumes?

Nobody on the project has an NPU: the emulator encodes what CANN's documents and sources
say. This report checks those assumptions where CANN runs, through the same public and
low-level API the binding uses, so the first user with an NPU can tell us in one command.

* **cases**: the curated operators (and ``call("aclnnInplaceAdd", ...)``) on fixed, seeded
  float32/float16/bfloat16 inputs (broadcasting, reductions, empty and 0-d), each compared
  with the float64 reference of :mod:`aclnn_py.ops.reference` rounded to the result's dtype,
  within the tolerance the test suite uses.
* **checks**: the behaviours the emulator models (``aclInit`` counting shared with another
  ACL user, repeatable executors and rebinding, the executor-cache refusal,
  ``aclrtMemcpyAsync``'s host-memory rules by release, device visibility, and the role
  table of the installed headers, torch_npu tensors and streams where torch_npu is
  installed). Each is a list of expectations (what, expected,
  observed, ok); a check passes when all hold. Checks that would disturb this process
  (``aclFinalize``, ``ASCEND_RT_VISIBLE_DEVICES``, memory CANN documents as unpredictable)
  run their probes in a fresh interpreter.

:func:`run` returns the report (JSON-ready); :func:`format_report` is its text form and
:func:`main` the command (exit status 0 when nothing failed, 1 otherwise).
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ._c import loader
from ._c import lowlevel as ll
from ._version import __version__
from .errors import AclError
from .ops import catalog
from .ops import reference as _reference
from .ops import roles as _roles
from .ops.dtypes import soc_supports_bfloat16

__all__ = ["CASES", "CHECKS", "REFERENCES", "Case", "Check", "Skip", "format_report", "main",
           "run"]

SCHEMA = 1
PASS, FAIL, SKIPPED = "pass", "fail", "skipped"

# Status codes the checks expect, from headers/ (the one table of codes).
REPEAT_INITIALIZE = ll.ACL_ERROR_REPEAT_INITIALIZE
UNINITIALIZE = ll.constant("ACL_ERROR_UNINITIALIZE")
INVALID_PARAM = ll.constant("ACL_ERROR_INVALID_PARAM")
NO_DEVICE = ll.constant("ACL_ERROR_RT_NO_DEVICE")
EXECUTOR_REFUSED = ll.constant("ACLNN_ERR_INNER")

# CANN releases as comparable tuples (see release()): where the documented behaviour changes.
REPEATABLE_SINCE = (8, 0, -97)       # 8.0.RC3: aclSetAclOpExecutorRepeatable and rebinding
COUNTED_FINALIZE_SINCE = (8, 5, -100)  # 8.5: aclFinalizeReference
PAGEABLE_ASYNC_SINCE = (8, 5, -100)    # 8.5: aclrtMemcpyAsync accepts malloc'ed host memory

PROBE_TIMEOUT = 120.0


def release(version: str | None) -> tuple[int, int, int] | None:
    """``"8.0.RC2"`` -> ``(8, 0, -98)``, ``"8.5.0"`` -> ``(8, 5, 0)``: release candidates
    sort before the GA release of their version. None when unknown or unreadable."""
    found = re.match(r"(\d+)\.(\d+)(?:\.(RC)?(\d+))?", version or "")
    if found is None:
        return None
    major, minor, rc, number = found.groups()
    patch = int(number or 0) - (100 if rc else 0)
    return int(major), int(minor), patch


# ---- operator cases ------------------------------------------------------------------------


def _inplace_add(x: np.ndarray, y: np.ndarray, alpha: float) -> np.ndarray:
    """``call("aclnnInplaceAdd", x, y, alpha)`` on a copy of ``x``, which it updates."""
    import aclnn_py

    target: np.ndarray = x.copy()
    result = aclnn_py.call("aclnnInplaceAdd", target, y, alpha)
    if result is not target:
        raise AssertionError("aclnnInplaceAdd did not return the array it updated")
    return np.asarray(target)


def _curated(name: str) -> Callable[..., Any]:
    """A call of ``aclnn_py.<name>``, looked up when called (importing aclnn_py here would
    be circular)."""
    def call(*arguments: Any, **keywords: Any) -> Any:
        import aclnn_py

        return getattr(aclnn_py, name)(*arguments, **keywords)

    return call


# The function each case calls, by name, and its reference formula (float64); a test may
# replace a reference to see the report fail.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{name: _curated(name) for name in _reference.GOLDEN},
    "inplace_add": _inplace_add,
}
REFERENCES: dict[str, Callable[..., np.ndarray]] = {
    **_reference.GOLDEN, "inplace_add": _reference.golden_add}


@dataclass(frozen=True)
class Case:
    """One operator call: ``function`` over seeded inputs of ``shapes`` (None: the Python
    number 0.75) in ``dtype``, with keyword ``attributes`` (reduction, beta, alpha)."""

    function: str
    label: str
    dtype: str
    shapes: tuple[tuple[int, ...] | None, ...]
    attributes: dict[str, Any] = field(default_factory=dict)
    seed: int = 0

    @property
    def name(self) -> str:
        return f"{self.function}/{self.dtype}/{self.label}"

    def inputs(self) -> list[Any]:
        rng = np.random.default_rng(self.seed)
        dtype = np.dtype(_reference.BFLOAT16 if self.dtype == "bfloat16" else self.dtype)
        return [0.75 if shape is None else rng.uniform(-3, 3, size=shape).astype(dtype)
                for shape in self.shapes]


Shapes = tuple[tuple[int, ...] | None, ...]

# (function, label, input shapes, attributes) of every dtype's cases ...
_EVERY_DTYPE: tuple[tuple[str, str, Shapes, dict[str, Any]], ...] = (
    ("mse_loss_backward", "same-mean", ((3, 4), (3, 4), (3, 4)), {"reduction": "mean"}),
    ("mse_loss_backward", "scalar-grad-column-sum", ((), (3, 4), (3, 1)), {"reduction": "sum"}),
    ("mse_loss_backward", "broadcast-all-none", ((1, 4), (3, 1), (2, 1, 1)),
     {"reduction": "none"}),
    ("mse_loss_backward", "python-grad-mean", (None, (2, 3), (2, 3)), {"reduction": "mean"}),
    ("mse_loss", "row-mean", ((3, 4), (4,)), {"reduction": "mean"}),
    ("mse_loss", "sum", ((2, 3, 4), (2, 3, 4)), {"reduction": "sum"}),
    ("mse_loss", "column-none", ((3, 4), (3, 1)), {"reduction": "none"}),
    ("l1_loss", "row-mean", ((3, 4), (4,)), {"reduction": "mean"}),
    ("l1_loss", "sum", ((5,), (5,)), {"reduction": "sum"}),
    ("l1_loss_backward", "broadcast-mean", ((), (3, 1), (1, 4)), {"reduction": "mean"}),
    ("smooth_l1_loss", "beta-sum", ((3, 4), (3, 4)), {"reduction": "sum", "beta": 0.5}),
    ("smooth_l1_loss", "row-none", ((3, 4), (4,)), {"reduction": "none", "beta": 1.0}),
    ("smooth_l1_loss_backward", "broadcast-mean", ((3, 4), (3, 4), (4,)),
     {"reduction": "mean", "beta": 0.5}),
    ("add", "broadcast-alpha", ((2, 3), (3,)), {"alpha": 2.5}),
    ("inplace_add", "broadcast-alpha", ((2, 3), (3,)), {"alpha": 2.0}),
)
# ... and float32's on CANN's empty and 0-d paths.
_FLOAT32_ONLY: tuple[tuple[str, str, Shapes, dict[str, Any]], ...] = (
    ("mse_loss", "empty-mean-nan", ((0, 3), (0, 3)), {"reduction": "mean"}),
    ("mse_loss", "empty-sum-zero", ((0, 3), (3,)), {"reduction": "sum"}),
    ("mse_loss_backward", "empty-none", ((0, 3), (0, 3), (0, 3)), {"reduction": "none"}),
    ("mse_loss_backward", "0d-mean", ((), (), ()), {"reduction": "mean"}),
    ("l1_loss_backward", "0d-sum", ((), (), ()), {"reduction": "sum"}),
    ("add", "0d", ((), ()), {"alpha": 1.0}),
    ("add", "empty", ((2, 0), (0,)), {"alpha": 3.0}),
)


def _cases() -> tuple[Case, ...]:
    specs = [(dtype, spec) for dtype in ("float32", "float16", "bfloat16")
             for spec in (_EVERY_DTYPE + _FLOAT32_ONLY if dtype == "float32" else _EVERY_DTYPE)]
    return tuple(Case(function, label, dtype, shapes, attributes, seed=seed)
                 for seed, (dtype, (function, label, shapes, attributes)) in enumerate(specs))


CASES: tuple[Case, ...] = _cases()


def _number(value: float) -> float | str:
    """A float for JSON: finite as is, else ``"inf"``/``"nan"`` (strict JSON has neither)."""
    return value if np.isfinite(value) else str(value)


def compare(actual: Any, golden: Any, dtype: np.dtype) -> dict[str, Any]:
    """``actual`` against ``golden`` (float64) rounded to ``dtype``, by the tolerance the
    tests use: per element ``|a - g| <= atol + rtol * |g|``, NaN meeting NaN, infinities
    equal; dtype and shape must match too."""
    tolerance = _reference.TOLERANCES[dtype]
    expected = _reference.rounded(golden, dtype)
    found: dict[str, Any] = {
        "tolerance": {"rtol": tolerance.rtol, "atol": tolerance.atol},
        "dtype": str(np.asarray(actual).dtype), "shape": list(np.shape(actual)),
        "expected_shape": list(expected.shape)}
    array = np.asarray(actual)
    if array.dtype != dtype or array.shape != expected.shape:
        found.update(ok=False, max_abs_error=None, max_rel_error=None, mismatches=None)
        return found
    a = array.astype(np.float64)
    with np.errstate(invalid="ignore"):
        difference = np.atleast_1d(np.abs(a - expected))
    a, e = np.atleast_1d(a), np.atleast_1d(expected)
    difference = np.where((np.isnan(a) & np.isnan(e)) | (np.isinf(e) & (a == e)), 0.0,
                          difference)
    difference = np.where(np.isnan(difference), np.inf, difference)  # one side NaN
    expected = e
    bound = tolerance.atol + tolerance.rtol * np.abs(np.nan_to_num(expected))
    mismatches = int(np.count_nonzero(difference > bound))
    nonzero = np.isfinite(expected) & (expected != 0)
    relative = difference[nonzero] / np.abs(expected[nonzero])
    found.update(ok=mismatches == 0, mismatches=mismatches,
                 max_abs_error=_number(float(difference.max())) if difference.size else 0.0,
                 max_rel_error=_number(float(relative.max())) if relative.size else 0.0)
    return found


def run_case(case: Case, bfloat16: bool) -> dict[str, Any]:
    """One case's entry in the report (``result`` pass, fail or skipped)."""
    entry: dict[str, Any] = {"name": case.name, "function": case.function, "dtype": case.dtype,
                             "shapes": [None if s is None else list(s) for s in case.shapes],
                             "attributes": case.attributes, "seed": case.seed}
    if case.dtype == "bfloat16" and not bfloat16:
        return {**entry, "result": SKIPPED, "reason": "this SoC has no bfloat16 aclnn kernels"}
    inputs = case.inputs()
    dtype = next(np.dtype(a.dtype) for a in inputs if isinstance(a, np.ndarray))
    typed = [np.asarray(a, dtype) if isinstance(a, float) else a for a in inputs]
    try:
        golden = REFERENCES[case.function](*typed, **case.attributes)
        actual = FUNCTIONS[case.function](*inputs, **case.attributes)
    except Exception as error:  # reported: a case that cannot run fails
        return {**entry, "result": FAIL, "reason": f"{type(error).__name__}: {error}"}
    found = compare(actual, golden, dtype)
    ok = found.pop("ok")
    reason = None if ok else (
        f"{found['mismatches']} element(s) outside the tolerance" if found["mismatches"] else
        f"got {found['dtype']} {found['shape']}, expected {dtype.name} {found['expected_shape']}")
    return {**entry, **found, "result": PASS if ok else FAIL, "reason": reason}


# ---- checks --------------------------------------------------------------------------------


class Skip(Exception):
    """A check that cannot apply here (its reason is reported)."""


@dataclass
class Findings:
    """What a check expected and observed, and figures worth reporting."""

    expectations: list[dict[str, Any]] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    def expect(self, what: str, observed: Any, expected: Any,
               ok: bool | None = None) -> bool:
        """Record ``observed`` against ``expected`` (equal unless ``ok`` says otherwise)."""
        passed = bool(observed == expected) if ok is None else ok
        self.expectations.append({"what": what, "expected": expected, "observed": observed,
                                  "ok": passed})
        return passed


@dataclass(frozen=True)
class Context:
    """What the checks know of the installation (from the parent process)."""

    backend: str
    emulator: bool
    root: str
    cann_version: str | None
    device_count: int
    logical_ids: list[int] | None
    visible_devices: str | None

    @property
    def release(self) -> tuple[int, int, int] | None:
        return release(self.cann_version)


@dataclass(frozen=True)
class Check:
    """A named check: ``function(context, findings)`` records expectations or raises Skip."""

    name: str
    description: str
    function: Callable[[Context, Findings], None]


def _status(function: Callable[..., Any], *arguments: Any) -> int:
    """The status of a low-level call: 0, or that of the AclError it raised."""
    try:
        function(*arguments)
    except AclError as error:
        return error.status
    return 0


# Probes gather observations in a fresh interpreter (see _probe); the checks judge them.
PROBES: dict[str, Callable[[], dict[str, Any]]] = {}


def _probe_function(function: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    PROBES[function.__name__.removeprefix("_probe_")] = function
    return function


def _child_environment(context: Context, changes: dict[str, str | None]) -> dict[str, str]:
    """This process's environment, the loaded installation pinned, then ``changes`` (None
    removes a variable)."""
    environment = dict(os.environ)
    if context.backend == "emulator":
        environment[loader.ENV_BACKEND] = "emulator"
    else:
        environment.update({loader.ENV_BACKEND: "cann", loader.ENV_CANN_HOME: context.root})
    for name, value in changes.items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return environment


def _probe(name: str, context: Context, changes: dict[str, str | None] | None = None
           ) -> dict[str, Any]:
    """Run probe ``name`` in a fresh interpreter; its observations (a dict)."""
    command = [sys.executable, "-c", "import sys; from aclnn_py.conformance import "
               "_probe_main; sys.exit(_probe_main(sys.argv[1]))", name]
    done = subprocess.run(command, env=_child_environment(context, changes or {}),
                          cwd=tempfile.gettempdir(), capture_output=True, text=True,
                          timeout=PROBE_TIMEOUT)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"probe {name} exited with {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()[-2000:]}")
    observed: dict[str, Any] = json.loads(lines[-1])
    return observed


def _probe_main(name: str) -> int:
    """The child's side of :func:`_probe`: print the probe's observations as JSON."""
    observed = PROBES[name]()
    sys.stdout.flush()
    print(json.dumps(observed))
    return 0


def _mse_ok() -> bool:
    """Whether a tiny mse_loss_backward gives numpy's answer (ACL still works)."""
    import aclnn_py

    x = np.arange(6, dtype=np.float32)
    y = np.ones(6, np.float32)
    got = aclnn_py.mse_loss_backward(1.0, x, y, "sum")
    return bool(np.allclose(got, 2 * (x - y), rtol=1e-6))


@_probe_function
def _probe_acl_init() -> dict[str, Any]:
    """aclnn_py initialises; "another user" calls aclInit through the same runtime, gives
    it back where aclFinalizeReference exists, then calls aclFinalize; aclnn_py's teardown
    follows."""
    import aclnn_py
    from aclnn_py.runtime import process as _runtime

    aclnn_py.runtime_info()
    observed: dict[str, Any] = {"aclnn_py_owns_init": _runtime._process.owns_init}
    observed["second_init"] = int(ll.RT.aclInit(ll.NULL))
    ll.recent_error_message()  # a repeat counts as an error: drop its text
    observed["finalize_reference_exported"] = ll.exported("aclFinalizeReference")
    if observed["finalize_reference_exported"]:
        observed["references_left"] = ll.finalize_reference()
    observed["works_after_give_back"] = _mse_ok()
    observed["other_finalize"] = int(ll.RT.aclFinalize())
    ll.recent_error_message()
    observed["set_device_after_finalize"] = int(ll.RT.aclrtSetDevice(0))
    if observed["set_device_after_finalize"] == 0:
        ll.RT.aclrtResetDevice(0)  # as often as set: aclnn_py's own count stays
    observed["dump_after_finalize"] = int(ll.RT.aclmdlInitDump())
    ll.recent_error_message()
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("aclnn_py").addHandler(handler)
    try:
        _runtime.teardown()
        observed["teardown_error"] = None
    except Exception as error:  # reported
        observed["teardown_error"] = f"{type(error).__name__}: {error}"
    observed["teardown_log"] = records
    return observed


def check_acl_init(context: Context, findings: Findings) -> None:
    """aclInit counting shared with another ACL user of the process."""
    observed = _probe("acl_init", context)
    findings.figures.update(observed)
    findings.expect("a second aclInit in the process returns ACL_ERROR_REPEAT_INITIALIZE",
                    observed["second_init"], REPEAT_INITIALIZE)
    counted = observed["finalize_reference_exported"]
    if context.release is not None:
        findings.expect("aclFinalizeReference exported exactly from CANN 8.5", counted,
                        context.release >= COUNTED_FINALIZE_SINCE)
    if counted:
        findings.expect("aclFinalizeReference after the second aclInit leaves aclnn_py's "
                        "reference", observed["references_left"], 1)
    findings.expect("aclnn_py still works after the other user's aclInit (and its give-back)",
                    observed["works_after_give_back"], True)
    findings.expect("the other user's aclFinalize succeeds", observed["other_finalize"], 0)
    # hicann/runtime src/acl/aclrt_impl/acl.cpp (aclFinalizeInternal) ends ACL, not the
    # runtime: no aclrt*Impl asks GetAclInitFlag(), only toolchain/dump.cpp's dump API does.
    findings.expect("aclFinalize ends ACL, not the runtime: aclrtSetDevice then succeeds",
                    observed["set_device_after_finalize"], 0)
    findings.expect("aclFinalize de-initialises for every user: aclmdlInitDump then returns "
                    "ACL_ERROR_UNINITIALIZE", observed["dump_after_finalize"], UNINITIALIZE)
    findings.expect("aclnn_py's teardown after that is silent",
                    (observed["teardown_error"], observed["teardown_log"]), (None, []))


class _MseProblem:
    """aclnnMseLossBackward over device arrays, by hand: phase 1 through the Executor, the
    workspace allocated when CANN asks for one. ``shape`` keeps its signature its own."""

    def __init__(self, shape: tuple[int, ...], seed: int) -> None:
        import aclnn_py

        rng = np.random.default_rng(seed)
        self.host = [rng.uniform(-3, 3, size=shape).astype(np.float32) for _ in range(3)]
        self.arrays = [aclnn_py.to_device(a) for a in self.host]
        self.out = aclnn_py.empty(shape, np.float32)
        self.tensors = [a.tensor() for a in (*self.arrays, self.out)]

    def executor(self) -> Any:
        from aclnn_py.runtime import handles as _handles

        handles = [t.handle for t in self.tensors]
        return _handles.Executor("aclnnMseLossBackward", *handles[:3], 2, handles[3],
                                 keepalive=tuple(self.tensors))

    def workspace(self, executor: Any) -> tuple[Any, Any]:
        """A device buffer of the executor's workspace size (None and NULL for none)."""
        import aclnn_py

        if not executor.workspace_size:
            return None, ll.NULL
        buffer = aclnn_py.empty((executor.workspace_size,), np.uint8)
        return buffer, buffer.buffer.pointer

    def expected(self, host: list[np.ndarray]) -> np.ndarray:
        return _reference.rounded(REFERENCES["mse_loss_backward"](*host, "sum"), np.float32)

    def close(self) -> None:
        for tensor in self.tensors:
            tensor.destroy()


def _close_enough(actual: np.ndarray, expected: np.ndarray) -> bool:
    tolerance = _reference.TOLERANCES[np.dtype(np.float32)]
    return bool(np.allclose(actual, expected, rtol=tolerance.rtol, atol=tolerance.atol))


def check_executor_repeatable(context: Context, findings: Findings) -> None:
    """A repeatable executor, launched, rebound to other addresses and launched again."""
    import aclnn_py
    from aclnn_py.runtime import streams as _streams

    missing = ll.repeatable_api_missing()
    findings.figures["missing_api"] = list(missing)
    if missing:
        if context.release is None or context.release < REPEATABLE_SINCE:
            raise Skip(f"this CANN lacks {', '.join(missing)} (documented from 8.0.RC3); "
                       "aclnn_py launches every call the ordinary way here")
        findings.expect("the repeatable-executor API is exported (documented from 8.0.RC3)",
                        list(missing), [])
        return
    problem = _MseProblem((3, 5), seed=101)
    stream = _streams.default_stream()
    executor = problem.executor()
    try:
        findings.figures["workspace_size"] = executor.workspace_size
        repeatable = executor.make_repeatable()
        if not findings.expect("aclSetAclOpExecutorRepeatable accepts a fresh executor",
                               repeatable, True):
            return
        keep, workspace = problem.workspace(executor)
        executor.launch(workspace, stream)
        stream.synchronize()
        first = problem.out.numpy()
        findings.expect("the first launch is right", _close_enough(
            first, problem.expected(problem.host)), True)
        rng = np.random.default_rng(102)
        host = [problem.host[0], *(rng.uniform(-3, 3, size=(3, 5)).astype(np.float32)
                                   for _ in range(2))]
        moved = [aclnn_py.to_device(a) for a in host[1:]]
        out = aclnn_py.empty((3, 5), np.float32)
        for index, array in ((1, moved[0]), (2, moved[1])):
            ll.set_input_tensor_addr(executor.handle, index, problem.tensors[index].handle,
                                     array.buffer.pointer)
        ll.set_output_tensor_addr(executor.handle, 0, problem.tensors[3].handle,
                                  out.buffer.pointer)
        executor.launch(workspace, stream)
        executor.launch(workspace, stream)  # the same addresses again: still right
        stream.synchronize()
        findings.expect("after aclSetInputTensorAddr/aclSetOutputTensorAddr the relaunch "
                        "reads and writes the new addresses",
                        _close_enough(out.numpy(), problem.expected(host)), True)
        findings.expect("the first output is left as it was",
                        bool(np.array_equal(problem.out.numpy(), first)), True)
        del keep
    finally:
        executor.close()
        problem.close()


@_probe_function
def _probe_executor_cache() -> dict[str, Any]:
    """Phase 1 of a signature that already ran non-repeatably, then
    aclSetAclOpExecutorRepeatable on the executor it returned."""
    from aclnn_py.runtime import streams as _streams

    missing = ll.repeatable_api_missing()
    if missing:
        return {"missing_api": list(missing)}
    problem = _MseProblem((4, 3), seed=201)
    stream = _streams.default_stream()
    once = problem.executor()
    keep, workspace = problem.workspace(once)
    once.launch_once(workspace, stream.handle)  # the non-repeatable run
    stream.synchronize()
    again = problem.executor()
    keep_again, workspace = problem.workspace(again)
    status = _status(ll.set_executor_repeatable, again.handle)
    if status == 0:
        again.repeatable = True
        again.launch(workspace, stream)
    else:
        again.launch_once(workspace, stream.handle)
    stream.synchronize()
    result_ok = _close_enough(problem.out.numpy(), problem.expected(problem.host))
    again.close()
    problem.close()
    del keep, keep_again
    return {"missing_api": [], "status": status, "result_ok": result_ok}


def check_executor_cache(context: Context, findings: Findings) -> None:
    """The executor-cache refusal: 561000 from aclSetAclOpExecutorRepeatable, and the
    refused executor still launches once."""
    # the emulator models CANN's executor cache when asked to; CANN ignores the variable
    observed = _probe("executor_cache", context, {"ACLNN_EMU_OP_CACHE": "1"})
    findings.figures.update(observed)
    if observed["missing_api"]:
        if context.release is None or context.release < REPEATABLE_SINCE:
            raise Skip(f"this CANN lacks {', '.join(observed['missing_api'])} (documented "
                       "from 8.0.RC3): no executor is made repeatable, none refused")
        findings.expect("the repeatable-executor API is exported (documented from 8.0.RC3)",
                        observed["missing_api"], [])
        return
    status = observed["status"]
    findings.figures["refused"] = status == EXECUTOR_REFUSED
    if context.emulator:
        findings.expect("the emulated executor cache refuses with ACLNN_ERR_INNER", status,
                        EXECUTOR_REFUSED)
    else:
        findings.expect("the executor of a signature that ran non-repeatably is accepted (0) "
                        "or refused with ACLNN_ERR_INNER, which aclnn_py falls back on",
                        status, [0, EXECUTOR_REFUSED], ok=status in (0, EXECUTOR_REFUSED))
    findings.expect("that executor, launched (once if refused), gives the right result",
                    observed["result_ok"], True)


@_probe_function
def _probe_async_copies() -> dict[str, Any]:
    """aclrtMemcpyAsync with each kind of host memory, each result read back."""
    ll.init()
    ll.set_device(0)
    stream = ll.create_stream()
    size = 256
    device = ll.malloc(1024)
    pinned = ll.malloc_host(1024)
    ordinary = ll.host_bytes(2048)  # ordinary (pageable) memory
    aligned = ll.byte_offset(ordinary, -ll.address(ordinary) % 64)
    hosts = {"pinned": ll.byte_offset(pinned, 0), "ordinary": aligned,
             "pinned_misaligned": ll.byte_offset(pinned, 8)}
    pattern = bytes((i * 7 + 3) % 256 for i in range(size))
    back = ll.host_bytes(size)
    observed: dict[str, Any] = {}
    for name, host in hosts.items():
        ll.copy_host(host, pattern, size)
        ll.memset(device, 1024, 0, size)
        status = _status(ll.memcpy_async, device, 1024, host, size, ll.MEMCPY_HOST_TO_DEVICE,
                         stream)
        _status(ll.synchronize_stream, stream)
        ll.memcpy(back, size, device, size, ll.MEMCPY_DEVICE_TO_HOST)
        observed[f"h2d_{name}"] = {"status": status,
                                   "data_ok": ll.read_bytes(back, size) == pattern}
        ll.memcpy(device, 1024, pattern, size, ll.MEMCPY_HOST_TO_DEVICE)
        ll.copy_host(host, bytes(size), size)
        status = _status(ll.memcpy_async, host, size, device, size, ll.MEMCPY_DEVICE_TO_HOST,
                         stream)
        _status(ll.synchronize_stream, stream)
        observed[f"d2h_{name}"] = {"status": status,
                                   "data_ok": ll.read_bytes(host, size) == pattern}
    ll.recent_error_message()
    ll.free_host(pinned)
    ll.free(device)
    ll.destroy_stream(stream)
    ll.reset_device(0)
    return observed


def check_async_copies(context: Context, findings: Findings) -> None:
    """aclrtMemcpyAsync's host-memory rules by release: aclrtMallocHost memory always;
    ordinary (malloc) and misaligned memory from 8.5 (before, CANN documents it as
    unpredictable without an error; the emulator refuses it with ACL_ERROR_INVALID_PARAM)."""
    observed = _probe("async_copies", context)
    findings.figures.update(observed)
    for name in ("h2d_pinned", "d2h_pinned"):
        findings.expect(f"{name}: accepted and copied", observed[name],
                        {"status": 0, "data_ok": True})
    others = [name for name in observed if not name.endswith("_pinned")]
    if context.release is None:
        findings.figures["note"] = ("CANN version unknown: the ordinary-memory rules were not "
                                    "judged")
        return
    if context.release >= PAGEABLE_ASYNC_SINCE:
        for name in others:
            findings.expect(f"{name}: accepted and copied (CANN >= 8.5)", observed[name],
                            {"status": 0, "data_ok": True})
    elif context.emulator:
        for name in others:
            findings.expect(f"{name}: refused by the emulator's strict pre-8.5 rules",
                            observed[name]["status"], INVALID_PARAM)
    else:
        for name in others:
            status = observed[name]["status"]
            findings.expect(f"{name}: refused (ACL_ERROR_INVALID_PARAM) or accepted without "
                            "an error (CANN < 8.5 documents it as unpredictable)", status,
                            [0, INVALID_PARAM], ok=status in (0, INVALID_PARAM))


@_probe_function
def _probe_devices() -> dict[str, Any]:
    """The devices this process sees (or the error that says why none), and a tiny
    operator on the last one."""
    import aclnn_py

    try:
        info = aclnn_py.runtime_info()
    except AclError as error:
        return {"status": error.status, "api": error.api}
    count = info["device_count"]
    work_ok = None
    if count:
        x = np.arange(4, dtype=np.float32)
        on_last = aclnn_py.to_device(x, device=count - 1)
        work_ok = aclnn_py.add(on_last, on_last).numpy().tolist() == (2 * x).tolist()
    return {"status": 0, "count": count, "logical_ids": [d["logical_id"]
                                                         for d in info["devices"]],
            "work_ok": work_ok}


def check_device_visibility(context: Context, findings: Findings) -> None:
    """``ASCEND_RT_VISIBLE_DEVICES`` over the devices this process sees: the named ones are
    renumbered from 0 (their logical ids reported from 8.5); a value naming no device, or
    ids out of ascending order, fail aclrtGetDeviceCount with ACL_ERROR_RT_NO_DEVICE."""
    ids = context.logical_ids
    findings.figures.update(device_count=context.device_count, logical_ids=ids,
                            visible_devices=context.visible_devices)
    if ids is None:
        raise Skip(f"the logical ids of ASCEND_RT_VISIBLE_DEVICES={context.visible_devices} "
                   "cannot be told before CANN 8.5; run with it unset")
    if not ids:
        raise Skip("no device visible to this process")
    reported = context.release is not None and context.release >= COUNTED_FINALIZE_SINCE

    def visible(value: str, expected: list[int]) -> None:
        observed = _probe("devices", context, {"ASCEND_RT_VISIBLE_DEVICES": value})
        findings.figures[f"visible={value}"] = observed
        want: dict[str, Any] = {"status": 0, "count": len(expected), "work_ok": True}
        got = {key: observed.get(key) for key in want}
        if reported:
            want["logical_ids"], got["logical_ids"] = expected, observed.get("logical_ids")
        findings.expect(f"ASCEND_RT_VISIBLE_DEVICES={value}", got, want)

    def refused(value: str) -> None:
        observed = _probe("devices", context, {"ASCEND_RT_VISIBLE_DEVICES": value})
        findings.figures[f"visible={value}"] = observed
        findings.expect(f"ASCEND_RT_VISIBLE_DEVICES={value} fails aclrtGetDeviceCount",
                        (observed.get("api"), observed["status"]),
                        ("aclrtGetDeviceCount", NO_DEVICE))

    visible(str(ids[-1]), [ids[-1]])
    if len(ids) >= 2:
        visible(f"{ids[0]},{ids[-1]}", [ids[0], ids[-1]])
        refused(f"{ids[-1]},{ids[0]}")  # out of ascending order
    refused("-1")


def check_roles(context: Context, findings: Findings) -> None:
    """The installed headers' operators against aclnn_py's role table (generated from
    CANN's operator docs): each operator the table knows must have the parameter names
    the table lists, so that its roles are the documented ones and not a fallback."""
    agreement = catalog.role_agreement()
    table = _roles.table()
    findings.figures.update(agreement)
    findings.figures["table"] = {name: entry["commit"]
                                 for name, entry in sorted(table["repositories"].items())}
    findings.expect("table entries that do not apply (parameter names differ)",
                    agreement["names_differ"], [])
    findings.expect("headers of table operators that cannot be read", agreement["refused"], [])


@_probe_function
def _probe_torch_npu() -> dict[str, Any]:
    """torch_npu tensors through aclnn_py (the path the test suite checks with a stand-in):
    each observation is whether one behaviour held on the NPU."""
    import importlib

    try:
        # untyped here: aclnn_py's hints do not name torch
        torch: Any = importlib.import_module("torch")
        importlib.import_module("torch_npu")  # registers the "npu" device
    except ImportError as error:
        return {"missing": str(error)}
    import aclnn_py

    device = "npu:0"
    torch.manual_seed(5)
    x, y = (torch.randn(8, 16, device=device) for _ in range(2))
    x_cpu, y_cpu = x.cpu(), y.cpu()
    pointers = (x.data_ptr(), y.data_ptr())
    observed: dict[str, Any] = {}
    added = aclnn_py.add(x, y, alpha=2.0)
    observed["result is a torch NPU tensor"] = bool(
        isinstance(added, torch.Tensor) and added.device.type == "npu")
    observed["curated add right"] = bool(torch.allclose(added.cpu(), x_cpu + 2 * y_cpu))
    observed["inputs not moved"] = (x.data_ptr(), y.data_ptr()) == pointers
    scaled = x * 3  # queued by torch (TASK_QUEUE_ENABLE) right before aclnn_py's launch
    observed["ordered after torch's queued work"] = bool(torch.allclose(
        aclnn_py.call("aclnnAdd", scaled, scaled, 1).cpu(), 6 * x_cpu, atol=1e-5))
    view = x.t()[2:, 1::2]
    observed["strided and offset views"] = bool(torch.allclose(
        aclnn_py.call("aclnnMul", view, view).cpu(), x_cpu.t()[2:, 1::2] ** 2, atol=1e-6))
    out = torch.empty_like(x)
    written = aclnn_py.add(x, y, out=out)
    observed["out= written in place"] = bool(written is out and torch.allclose(
        out.cpu(), x_cpu + y_cpu))
    target = x.clone()
    updated = aclnn_py.call("aclnnInplaceAdd", target, y, 1.0)
    observed["in-place tensor updated"] = bool(updated is target and torch.allclose(
        target.cpu(), x_cpu + y_cpu))
    side = torch.npu.Stream()
    side.wait_stream(torch.npu.current_stream())
    on_side = aclnn_py.add(x, y, stream=side)
    side.synchronize()
    observed["a torch stream given"] = bool(torch.allclose(on_side.cpu(), x_cpu + y_cpu))
    plan = aclnn_py.AddPlan(x, y)
    plan.run(x=y)
    observed["a plan rebinding tensors"] = bool(torch.allclose(plan.out.cpu(), 2 * y_cpu))
    plan.close()
    for dtype in (torch.float16, torch.bfloat16, torch.int32):
        a = (torch.arange(12, device=device) % 5).to(dtype)
        observed[f"{dtype} tensors"] = bool(torch.equal(
            aclnn_py.call("aclnnMul", a, a).cpu(), a.cpu() * a.cpu()))
    observed["asnumpy"] = bool(np.allclose(aclnn_py.asnumpy(x), x_cpu.numpy()))
    torch.npu.synchronize()
    return {"missing": None, "observed": observed}


def check_torch_npu(context: Context, findings: Findings) -> None:
    """torch_npu's tensors and streams through aclnn_py, as the stand-in tests assume."""
    if context.emulator:
        raise Skip("torch_npu needs a real CANN; on the emulator the torch path is tested "
                   "with the stand-in tensors of tests/npu_standin.py")
    found = _probe("torch_npu", context)
    if found["missing"]:
        raise Skip(f"torch_npu is not importable ({found['missing']}): pip install torch_npu "
                   "to check the torch path")
    for what, ok in found["observed"].items():
        findings.expect(what, ok, True)


CHECKS: tuple[Check, ...] = (
    Check("acl_init_counting", "aclInit/aclFinalize shared with another ACL user",
          check_acl_init),
    Check("executor_repeatable", "repeatable executor: rebind addresses and relaunch",
          check_executor_repeatable),
    Check("executor_cache_refusal", "cached executor refused with ACLNN_ERR_INNER (561000), "
          "launched once", check_executor_cache),
    Check("memcpy_async_host_memory", "aclrtMemcpyAsync's host-memory rules by release",
          check_async_copies),
    Check("device_visibility", "ASCEND_RT_VISIBLE_DEVICES and device ids",
          check_device_visibility),
    Check("roles", "installed headers' roles against the role table", check_roles),
    Check("torch_npu_tensors", "torch_npu tensors and streams passed as they are",
          check_torch_npu),
)


def run_check(check: Check, context: Context) -> dict[str, Any]:
    """One check's entry in the report."""
    findings = Findings()
    started = time.perf_counter()
    result, reason = PASS, None
    try:
        check.function(context, findings)
        failed = [e["what"] for e in findings.expectations if not e["ok"]]
        if failed:
            result, reason = FAIL, "; ".join(failed)
        elif not findings.expectations:
            result, reason = FAIL, "the check recorded no expectation"
    except Skip as skip:
        result, reason = SKIPPED, str(skip)
    except Exception as error:  # reported: a check that cannot run fails
        result, reason = FAIL, f"{type(error).__name__}: {error}"
        findings.figures["traceback"] = traceback.format_exc()
    return {"name": check.name, "description": check.description, "result": result,
            "reason": reason, "figures": findings.figures,
            "expectations": findings.expectations,
            "seconds": round(time.perf_counter() - started, 3)}


# ---- the report ----------------------------------------------------------------------------


def _count(entries: list[dict[str, Any]]) -> dict[str, int]:
    return {"passed": sum(e["result"] == PASS for e in entries),
            "failed": sum(e["result"] == FAIL for e in entries),
            "skipped": sum(e["result"] == SKIPPED for e in entries)}


def _logical_ids(devices: Sequence[Any], visible: str | None) -> list[int] | None:
    """The ids ``ASCEND_RT_VISIBLE_DEVICES`` names this process's devices by: reported from
    CANN 8.5; before, read from the variable (its first ids), or 0..n-1 when it is unset;
    None when the variable cannot be read so."""
    if all(d["logical_id"] is not None for d in devices):
        return [int(d["logical_id"]) for d in devices]
    if visible is None:
        return [int(d["device"]) for d in devices]
    fields = visible.split(",")[:len(devices)]
    if len(fields) < len(devices) or not all(f.isdigit() for f in fields):
        return None
    return [int(f) for f in fields]


def run(checks: Sequence[str] | None = None, *, cases: bool = True,
        backend: str | None = None) -> dict[str, Any]:
    """Run the operator cases (unless ``cases`` is False) and the named ``checks`` (default:
    all of :data:`CHECKS`) on the backend aclnn_py loads (``backend`` sets
    ``ACLNN_PY_BACKEND`` first, before anything is loaded); the JSON-ready report."""
    from .runtime.info import runtime_info, versions

    loader.request_backend(backend)
    known = [check.name for check in CHECKS]
    unknown = sorted(set(checks or ()) - set(known))
    if unknown:
        raise ValueError(f"unknown checks {unknown}; known: {', '.join(known)}")
    info = runtime_info()
    emulator = ll.emulator_loaded()
    ids = _logical_ids(info["devices"], info["visible_devices"])
    context = Context(backend=info["backend"], emulator=emulator, root=info["root"],
                      cann_version=info["cann_version"], device_count=info["device_count"],
                      logical_ids=ids, visible_devices=info["visible_devices"])
    bfloat16 = soc_supports_bfloat16(info["soc_name"])
    found = versions()
    report: dict[str, Any] = {
        "schema": SCHEMA, "aclnn_py_version": __version__,
        "cann_version": info["cann_version"], "backend": info["backend"],
        "emulator": emulator, "root": info["root"], "libraries": info["libraries"],
        "soc_name": info["soc_name"], "bfloat16": bfloat16,
        "device_count": info["device_count"], "devices": info["devices"],
        "visible_devices": info["visible_devices"],
        "python": found["python"], "numpy": found["numpy"], "versions": found,
        "cases": [run_case(case, bfloat16) for case in CASES] if cases else [],
        "checks": [run_check(check, context) for check in CHECKS
                   if checks is None or check.name in checks],
    }
    summary = _count(report["cases"] + report["checks"])
    report["summary"] = {**summary, "cases": _count(report["cases"]),
                         "checks": _count(report["checks"])}
    report["ok"] = summary["failed"] == 0
    return report


def format_report(report: dict[str, Any]) -> str:
    """A short human summary of :func:`run`'s report."""
    kind = " (aclnn_py's emulator)" if report["emulator"] else ""
    lines = [f"aclnn_py {report['aclnn_py_version']} conformance on {report['backend']}{kind}, "
             f"CANN {report['cann_version'] or 'unknown'}, SoC {report['soc_name'] or 'unknown'}"
             f", {report['device_count']} device(s)", f"  root {report['root']}", ""]
    counts = report["summary"]["cases"]
    lines.append(f"operator cases: {counts['passed']} passed, {counts['failed']} failed, "
                 f"{counts['skipped']} skipped")
    for case in report["cases"]:
        if case["result"] == FAIL:
            lines.append(f"  FAIL {case['name']}: {case['reason']} (max abs error "
                         f"{case.get('max_abs_error')}, max rel error "
                         f"{case.get('max_rel_error')})")
    lines.append("checks:")
    for check in report["checks"]:
        lines.append(f"  {check['result'].upper():<7} {check['name']}: {check['description']}")
        if check["result"] != PASS:
            lines.append(f"          {check['reason']}")
    summary = report["summary"]
    lines += ["", f"result: {summary['passed']} passed, {summary['failed']} failed, "
              f"{summary['skipped']} skipped -- " + ("OK" if report["ok"] else "FAILED")]
    return "\n".join(lines)


def main(output: str | None = None, *, as_json: bool = False,
         backend: str | None = None) -> int:
    """``python -m aclnn_py --conformance``: print the summary (or the JSON), write the
    JSON to ``output`` if given; 0 when nothing failed, 1 otherwise."""
    try:
        report = run(backend=backend)
    except Exception as error:  # no backend to check: the doctor says why
        print(f"conformance could not start: {type(error).__name__}: {error}\n"
              "run `python -m aclnn_py` (the doctor) to see why", file=sys.stderr)
        return 1
    text = json.dumps(report, indent=2, default=str)
    if output is not None:
        with open(output, "w", encoding="utf-8") as file:
            file.write(text + "\n")
    print(text if as_json else format_report(report))
    if output is not None and not as_json:
        print(f"report written to {output} (attach it to an issue)")
    return 0 if report["ok"] else 1
