#!/usr/bin/env python3
"""Per-call cost of aclnn_py's ``mse_loss_backward`` against a C floor, numpy and PyTorch.

Usage::

    python benchmarks/bench.py              # full run: a table on stdout, results/latest.json
    python benchmarks/bench.py --quick      # smoke run: fewer repetitions, no 16 M or chunked case
    python benchmarks/bench.py --profile    # cProfile of the 1-element Python call paths
    python benchmarks/bench.py --crossover  # staged against direct copies, by array size
    python benchmarks/bench.py --chunked    # only the calls larger than a 64 MiB device
    python benchmarks/bench.py --link 10:25 # with the emulator's transfer model (10 µs, 25 GB/s)
    python benchmarks/bench.py --ray        # examples/ray_npus.py: tasks per second, 1 and 2 NPUs
    python benchmarks/bench.py --headers    # reading pathological headers at 40 KB and 1 MB
    python benchmarks/bench.py --catalog    # first operators() and signature() over 1000 headers
    python benchmarks/bench.py --unsynced   # 1000 calls never synchronised: memory and time
    python benchmarks/bench.py --imports    # import aclnn_py against import numpy, fresh processes
    python benchmarks/bench.py --scalars    # a number or numpy scalar grad against a 0-d array
    python benchmarks/bench.py --emulated   # every computed operator against PyTorch, 1 M float32
    python benchmarks/bench.py --torch-npu  # real torch_npu tensors against DeviceArrays, 1 element
    python benchmarks/bench.py --peers      # beside CuPy and PyTorch on a CUDA GPU, own C floors

For 1, 1 K, 1 M and 16 M elements, in float32 and float16, with ``grad`` a 0-d array,
``x`` and ``y`` of shape ``(n,)`` and ``reduction="mean"``, the median wall time per call of

a.  numpy -> numpy ``aclnn_py.mse_loss_backward(grad, x, y)``: the staged numpy path (inputs
    packed into page-locked memory, one copy each way, one synchronisation); (a_u) the same
    call on the unstaged path kept for comparison (one synchronous copy per array);
b.  DeviceArray one-shot: ``mse_loss_backward(grad_d, x_d, y_d)`` then ``aclnn_py.synchronize()``
    (the result is a new DeviceArray each call, dropped at once);
c.  ``MseLossBackwardPlan.run()`` then ``aclnn_py.synchronize()``;
d.  ``benchmarks/c_floor.c``: the same C call sequences against the same libraries, with no
    Python: (d_a) uploads + one-shot + download, (d_b) one-shot (tensors, both phases, sync,
    tensors destroyed), (d_c) relaunch of a repeatable executor + sync, (d_r) the C relaunch
    floor: ``aclSetOutputTensorAddr`` to one of two output buffers, alternating every call,
    then relaunch of a repeatable executor + sync, which is what (b) runs on a repeat call
    (aclnn_py caches a repeatable executor per stream and call signature and rebinds only
    changed addresses; the alternation makes the rebind real every call, its worst case),
    (d_s) what (a) runs, one-shot: grad, x and y packed into one page-locked block, one
    ``aclrtMemcpyAsync`` up, the one-shot call over one device block, one
    ``aclrtMemcpyAsync`` down, one synchronisation, the result copied out (arrays above
    aclnn_py's direct-copy size travel with synchronous ``aclrtMemcpy`` calls, as in (a));
e.  the numpy formula ``grad * (x - y) * (2 / x.size)`` (docs/operators.md's, constant folded: in
    float16 ``x.size`` overflows beyond 65504 elements);
f.  PyTorch CPU ``torch.ops.aten.mse_loss_backward`` when torch imports, else n/a.

Every timed call includes dropping its result and, for (b) and (c), a stream
synchronisation. Modes run interleaved in rounds so that load from other processes
hits them alike; each round starts with a short c_floor process for the same case, after
which each Python mode is warmed up again before its share of timed calls.

Also reported: overhead over the floor (µs and ratio; a against d_s, the target's floor, and
d_a; b against both d_b and d_r); bytes moved host<->device per call against the minimum
(staging pads each packed array to 512 bytes: counted, and marked ``~``), copies and
synchronisations per call of (a), pool hits and misses and ``aclrtMalloc`` calls per call
after warm-up (from ``aclnn_py.emulator.stats()`` and
``aclnn_py.memory_info()``); leaks (live device memory, tensors and executors back to their
baseline after each case); peak resident memory of the 16 M case, measured first, in a
subprocess per mode (``resource.getrusage().ru_maxrss``, and on Linux ``VmHWM`` reset
before the calls; on the emulator, device memory is host memory and counts too).

At 16 M elements, (a_g) and (e_g) are (a) and (e) with a ``grad`` of ``x``'s shape, as a
chain rule hands it on inside a model.

Larger than the device: ``mse_loss_backward(grad, x, y, reduction)`` over three 96 MiB
float32 arrays (``grad`` of ``x``'s shape), numpy -> numpy, with ``reduction`` "mean" and
"none", on a 64 MiB device (``ACLNN_EMU_DEVICE_MEMORY=64M``: the call runs in chunks) and
on the default one (it does not), one subprocess per device and reduction, taking turns
over three rounds; the median per call after one untimed call, the chunk count, and the
copies, synchronisations and allocations per call (``--no-chunked`` skips it).

``--link <latency_us>:<GB/s>`` sets ``ACLNN_EMU_LINK`` for this run and its c_floor and RSS
processes: every host<->device copy then costs the emulator's transfer model (a latency and a
bandwidth on a per-device copy engine, see ``aclnn_py.emulator``), which shows what the copy
count of (a) against (a_u) and the overlap of copies with kernels are worth.

``--ray`` runs ``examples/ray_npus.py`` on a local Ray cluster of 1, then 2 emulated NPUs
(``ACLNN_EMU_DEVICE_COUNT``), interleaved over a few rounds, and reports the median tasks per
second it measured (from submitting the tasks to having every result; cluster start-up not
included; each task runs in a fresh worker process, as the example asks of Ray).

``--devices N`` times one large numpy call (``mse_loss_backward`` over three 16 M float32
arrays, ``"none"`` and ``"mean"``) split over N emulated devices (``devices="all"``) against
the same call on one device, in subprocesses taking turns (``ACLNN_EMU_DEVICE_COUNT`` is
read at aclInit), with the bytes each device copied. The emulator runs device work under one
lock, so only the host's share (packing, result scaling, Python) can overlap; with
``--link`` each device's copy engine is modelled apart, and the modelled transfers overlap.

Reading headers (``--headers`` runs it alone, ``--no-headers`` skips it): for each kind of
pathological header, at 40 KB and at 1 MB, the median time of ``ops.headers.operator_names``
(what ``operators()`` reads of every header) and ``ops.headers.parse`` (every prototype), and
their ratio, which is about 25 when reading is linear: a line of escaped quotes with no
closing quote, a string continued over many lines that never ends, a ``//`` comment
continued over many lines then a ``/*`` comment that never ends, one-line prototypes (20,000
at 1 MB), prototypes each under ``__attribute__((visibility("default")))``, as generated
custom headers write them, ``static inline`` helpers whose bodies call ``aclnn`` functions,
braces nested 500,000 deep and a line of apostrophes that open no character literal. The
operators found are checked against the kind's.

A catalog of a thousand headers (``--catalog`` runs it alone, ``--no-catalog`` skips it):
1000 made-up headers in the styles of CANN's ``op_api/aclnn_*.h`` (2 to 10 KB, Chinese
doxygen comments naming the operators and their ``GetWorkspaceSize``, several operators
each) added to a copy of the emulator tree; in fresh processes, the median time of
``import aclnn_py``, of the first ``operators()``, of a cold ``signature()`` and of
``operators(callable=True)``, with the quick scan of names and, as the baseline in the same
run, with every header cleaned in full as before; both must list the same operators.

Importing (``--imports`` runs it alone, ``--no-imports`` skips it): in fresh Python processes
taking turns, the wall time of ``import numpy`` and of ``import aclnn_py`` (which imports
numpy), medians, their difference and ratio, and whether ``import aclnn_py`` imported
ml_dtypes (it should not: bfloat16 brings it in when asked for). The children write their
bytecode to a temporary cache (``PYTHONPYCACHEPREFIX``; one untimed run of each first), as
an installed package has it, whatever ``PYTHONDONTWRITEBYTECODE`` says here.

Scalars (``--scalars`` runs it alone, ``--no-scalars`` skips it): ``mse_loss_backward(grad,
x, y)`` at 1 element, float32, with ``grad`` a 0-d array, a ``numpy.float32`` scalar, a
Python float and a ``numpy.float64`` scalar (which, like a Python float, takes ``x``'s
dtype): numpy ``x``, ``y`` (returning numpy) and device ``x``, ``y`` (a 0-d DeviceArray
as the baseline; then ``synchronize()``), timed in interleaved rounds, as ratios to the
0-d grad of the same kind; every result is checked to equal the baseline's bit for bit.

Every computed operator (``--emulated`` runs it alone, ``--no-emulated`` skips it): for each
operator of ``aclnn_py.emulator.kernels()``, at about 1 M float32 elements, the best time of
``aclnn_py.call(name, ..., out=...)`` on device arrays then ``synchronize()`` and of PyTorch CPU
on one thread computing the same, taken call by call in interleaved rounds, and their ratio;
the 19 operators of the 4x goal are marked (``EMULATED_GOAL``), the others aim within 10x.
numpy's BLAS uses every core unless ``OPENBLAS_NUM_THREADS`` is set: 1 compares like with like.

Real torch_npu tensors (``--torch-npu`` runs it alone, ``--no-torch-npu`` skips it): with
torch 2.13.0 here, torch-npu 2.13.0 is installed once (``pip install --no-deps --target``,
into ``~/.cache/aclnn_py-bench`` or ``$ACLNN_BENCH_TORCH_NPU_SITE``) and a process of its own
with only the emulator 8.5 tree's ``set_env.sh`` environment (as
tests/frameworks/test_real_torch_npu.py runs it) times the 1-element float32
``mse_loss_backward(g, x, y)`` on torch_npu tensors then ``torch.npu.synchronize()`` (and
then torch's current stream's ``synchronize()``) against the same on DeviceArrays then
``aclnn_py.synchronize()``: the best over interleaved rounds of the median per call, the
overhead against the target of +1 µs. Skipped with a line saying why when it cannot be set up.

Peers (``--peers`` runs it alone, ``--no-peers`` skips it): Python's cost over its own C floor
for the 1-element float32 call, in one run: CuPy's ``ElementwiseKernel(..., out)`` and
PyTorch's ``aten.mse_loss_backward(..., grad_input=out)``, each then synchronised, on a CUDA
GPU, against ``benchmarks/cuda_floor.c`` (the same kernel as PTX, launched from C through the
CUDA driver and waited for); and aclnn_py's one-shot on device arrays, ``plan.run()`` (then
``synchronize()``), ``plan.run(synchronize=True)`` and numpy call against c_floor.c's one-shot,
relaunch and staged sequences. Every figure is the best over the rounds of the median per
call. A peer without CuPy, a CUDA-enabled PyTorch or a CUDA driver is a row saying why.

The targets of the issue are reported, never asserted. ``ACLNN_PY_BACKEND`` defaults to
``emulator`` here. Needs a C compiler (``$CC`` or ``cc``) for column d.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import importlib
import io
import json
import os
import platform
import pstats
import random
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np

HERE = Path(__file__).resolve().parent
C_SOURCE = HERE / "c_floor.c"
CUDA_SOURCE = HERE / "cuda_floor.c"
DEFAULT_OUTPUT = HERE / "results" / "latest.json"

SIZES = (1, 1024, 1 << 20, 1 << 24)
DTYPES = ("float32", "float16")
SIZE_LABELS = {1: "1", 1024: "1K", 1 << 20: "1M", 1 << 24: "16M"}
DTYPE_CODES = {"float32": "f32", "float16": "f16"}


class Reps:
    """How long to measure one mode of one case."""

    def __init__(self, warmup: int, budget_s: float, min_reps: int, max_reps: int,
                 rounds: int, account: int) -> None:
        self.warmup = warmup          # untimed calls first
        self.budget_s = budget_s      # timed seconds per mode, spread over the rounds
        self.min_reps = min_reps
        self.max_reps = max_reps
        self.rounds = rounds          # interleaving rounds
        self.account = account        # extra calls counted for bytes / pool statistics


def reps_for(n: int, quick: bool) -> Reps:
    scale = 0.25 if quick else 1.0
    if n <= 1024:
        return Reps(200, 0.5 * scale, 50, int(4000 * scale), 10, 20)
    if n <= 1 << 20:
        return Reps(3, 0.6 * scale, 10, 200, 5, 3)
    return Reps(1, 0.0, 9, 9, 3, 1)


# ---- small helpers --------------------------------------------------------------------


def fmt_time(ns: float | None) -> str:
    if ns is None:
        return "n/a"
    us = ns / 1e3
    if us < 1000:
        return f"{us:.1f}µs" if us < 100 else f"{us:.0f}µs"
    if us < 1e6:
        return f"{us / 1e3:.2f}ms" if us < 1e5 else f"{us / 1e3:.0f}ms"
    return f"{us / 1e6:.2f}s"


def fmt_over(ns: float | None, floor: float | None) -> str:
    if ns is None or floor is None or floor <= 0:
        return "n/a"
    return f"{(ns - floor) / 1e3:+.1f} ({ns / floor:.1f}x)"


def loadavg() -> list[float] | None:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None


def emulator_stats(aclnn_py: Any) -> dict[str, int] | None:
    try:
        return aclnn_py.emulator.stats()
    except Exception:  # a real CANN has no emulator counters
        return None


def inputs(n: int, dtype: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    grad = np.asarray(rng.random(dtype=np.float32), dtype=dtype)   # 0-d
    x = rng.random(n, dtype=np.float32).astype(dtype)
    y = rng.random(n, dtype=np.float32).astype(dtype)
    return grad, x, y


def numpy_formula(grad: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # docs/operators.md's grad * (x - y) * 2 / x.size with the constant folded: in float16, x.size
    # itself overflows to inf beyond 65504 elements.
    return grad * (x - y) * (2 / x.size)


def reference(grad: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    wide = [a.astype(np.float64) for a in (grad, x, y)]
    return (wide[0] * (wide[1] - wide[2]) * 2 / x.size).astype(x.dtype)


def load_torch() -> tuple[Any, str]:
    try:
        import torch
    except Exception as error:  # not installed, or broken
        return None, f"n/a ({type(error).__name__})"
    return torch, torch.__version__


# ---- the C floor ------------------------------------------------------------------------


def build_c_floor(workdir: Path, source: Path = C_SOURCE) -> tuple[Path | None, str]:
    """``source`` (default c_floor.c) built into ``workdir``: (the binary, the command), or
    (None, why not)."""
    binary = workdir / source.stem
    cc = shlex.split(os.environ.get("CC", "cc"))
    command = [*cc, "-std=gnu11", "-O2", str(source), "-o", str(binary), "-ldl"]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or str(error)
        return None, f"build failed: {' '.join(command)}: {detail.strip()}"
    return binary, " ".join(command)


def run_c_floor(binary: Path, lib_dir: str, n: int, dtype: str, warmup: int, budget_s: float,
                min_reps: int, max_reps: int, direct_bytes: int) -> dict[str, Any]:
    """One c_floor process for one case; returns its case record with every sample."""
    command = [str(binary), lib_dir, f"{n}:{DTYPE_CODES[dtype]}", "--samples", "1",
               "--warmup", str(warmup), "--budget-ms", f"{budget_s * 1e3:.3f}",
               "--min-reps", str(min_reps), "--max-reps", str(max_reps),
               "--direct-bytes", str(direct_bytes)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                          env=c_floor_environment())
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr}")
    return json.loads(done.stdout)["cases"][0]


_library_path: list[str] = []


def c_floor_libraries(aclnn_py: Any) -> str:
    """The folder of the runtime library aclnn_py loaded (c_floor's argument), after noting
    it and its dependencies' folders for :func:`c_floor_environment`."""
    info = aclnn_py.runtime_info()
    lib_dir = str(Path(info["libraries"]["runtime"]).parent)
    _library_path[:] = [lib_dir, *(str(Path(p).parent) for p in info["dependencies"])]
    return lib_dir


def c_floor_environment() -> dict[str, str]:
    """This environment with the folders of the libraries aclnn_py loaded, and of their
    dependencies, first on LD_LIBRARY_PATH: CANN's libraries (and the emulator's) carry no
    RUNPATH, so a C program finds their dependencies only there, as after set_env.sh."""
    environment = dict(os.environ)
    folders = [*_library_path, *filter(None, environment.get("LD_LIBRARY_PATH", "").split(":"))]
    environment["LD_LIBRARY_PATH"] = ":".join(dict.fromkeys(folders))
    return environment


FLOOR_KEYS = {"oneshot": "d_b", "plan": "d_c", "relaunch": "d_r", "numpy_path": "d_a",
              "staged": "d_s"}


# ---- timing -------------------------------------------------------------------------------


def summarize(values: list[int], cpu_ns: float, cpu_calls: int) -> dict[str, Any]:
    values.sort()
    return {"median_ns": float(statistics.median(values)), "reps": len(values),
            "p10_ns": float(values[len(values) // 10]),
            "p90_ns": float(values[(len(values) * 9) // 10]),
            "cpu_mean_ns": cpu_ns / cpu_calls if cpu_calls else None}


# Untimed calls of each mode after each round's floor process (at most; fewer when the
# case's own warm-up is shorter).
REWARM_CALLS = 200


def time_modes(modes: dict[str, Callable[[], Any]], reps: Reps,
               floor: Callable[[int], dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """Warm up each mode, then time single calls in interleaved rounds; medians in ns.

    Each round first runs ``floor(round)`` (a c_floor process, whose samples join the
    columns d_a, d_b, d_c, d_r, d_s), then a share of each Python mode's calls, each mode
    warmed up again first (``REWARM_CALLS``). Besides the
    per-call wall samples, the process CPU time of each chunk gives a mean per call.
    """
    clock, cpu_clock = time.perf_counter_ns, time.process_time_ns
    estimate: dict[str, float] = {}
    for name, call in modes.items():
        for _ in range(max(reps.warmup - 1, 0)):
            call()
        start = clock()
        call()
        estimate[name] = max(clock() - start, 1)
    target = {name: int(min(max(reps.budget_s * 1e9 / est, reps.min_reps), reps.max_reps))
              for name, est in estimate.items()}
    samples: dict[str, list[int]] = {name: [] for name in modes}
    cpu = {name: [0, 0] for name in [*modes, *FLOOR_KEYS.values()]}
    rewarm = min(max(reps.warmup, 1), REWARM_CALLS)
    for round_ in range(reps.rounds):
        if floor is not None:
            record = floor(round_)
            for key, column in FLOOR_KEYS.items():
                samples.setdefault(column, []).extend(record["samples"][key])
                cpu[column][0] += record["cpu_ns"][key] * record["reps"][key]
                cpu[column][1] += record["reps"][key]
        for name, call in modes.items():
            want = (target[name] * (round_ + 1)) // reps.rounds - len(samples[name])
            bucket = samples[name]
            if floor is not None:
                # Untimed calls first: right after the floor process, caches and the CPU's
                # frequency are cold, which would time the mode slower than it runs.
                for _ in range(rewarm if want > 0 else 0):
                    call()
            cpu_start = cpu_clock()
            for _ in range(want):
                start = clock()
                call()
                bucket.append(clock() - start)
            cpu[name][0] += cpu_clock() - cpu_start
            cpu[name][1] += max(want, 0)
    return {name: summarize(values, *cpu[name]) for name, values in samples.items()}


def account(aclnn_py: Any, call: Callable[[], Any], count: int) -> dict[str, Any]:
    """Per-call host<->device bytes, pool hits/misses and aclrtMalloc calls after warm-up."""
    aclnn_py.synchronize()
    before_stats, before_mem = emulator_stats(aclnn_py), aclnn_py.memory_info()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(count):
        call()
    aclnn_py.synchronize()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    after_stats, after_mem = emulator_stats(aclnn_py), aclnn_py.memory_info()
    out: dict[str, Any] = {
        "calls": count,
        "minor_page_faults": faults / count,
        "pool_hits": (after_mem["pool_hits"] - before_mem["pool_hits"]) / count,
        "pool_misses": (after_mem["pool_misses"] - before_mem["pool_misses"]) / count,
        "used_bytes_delta": after_mem["used_bytes"] - before_mem["used_bytes"],
    }
    if before_stats is not None and after_stats is not None:
        for key in ("h2d_bytes", "d2h_bytes", "d2d_bytes", "malloc_calls", "memcpy_calls",
                    "sync_calls"):
            out[key] = (after_stats[key] - before_stats[key]) / count
        out["sync_calls"] -= 1 / count  # the accounting's own wait after the calls
        for key in ("live_tensors", "live_executors", "live_allocations"):
            out[key + "_delta"] = after_stats[key] - before_stats[key]
    return out


def live_counts(aclnn_py: Any) -> dict[str, int]:
    gc.collect()
    aclnn_py.synchronize()
    aclnn_py.empty_cache()
    counts = {"used_bytes": aclnn_py.memory_info()["used_bytes"]}
    stats = emulator_stats(aclnn_py)
    if stats is not None:
        for key in ("live_device_bytes", "live_allocations", "live_host_allocations",
                    "live_tensors", "live_executors", "pending_tasks"):
            counts[key] = stats[key]
    return counts


# ---- one case ---------------------------------------------------------------------------


def unstaged_mode(staging: Any, call: Callable[..., Any], *args: Any) -> Callable[[], None]:
    """A mode calling ``call(*args)`` with ``staging`` (``aclnn_py.engine.numpy_path``) off:
    one synchronous copy per array, the path before staging."""
    def mode() -> None:
        staging.enabled = False
        try:
            call(*args)
        finally:
            staging.enabled = True
    return mode


def mse_modes(aclnn_py: Any, n: int, dtype: str, grad: np.ndarray, x: np.ndarray,
              y: np.ndarray, *, gd: Any, xd: Any, yd: Any, plan: Any,
              out_d: Any) -> dict[str, Callable[[], Any]]:
    """The Python modes of one case, (a) to (e), each one call and what it waits for: over the
    host inputs ``grad``, ``x``, ``y``, their device copies ``gd``, ``xd``, ``yd``, ``plan``
    (an ``MseLossBackwardPlan`` over those) and ``out_d`` (an out= for b_out). Above 1 M
    elements, b_out is left out and a_g and e_g come in."""
    staging = aclnn_py.engine.numpy_path
    mse = aclnn_py.mse_loss_backward
    sync = aclnn_py.synchronize

    def mode_a() -> None:
        mse(grad, x, y)

    mode_a_u = unstaged_mode(staging, mse, grad, x, y)

    def mode_b() -> None:
        mse(gd, xd, yd)
        sync()

    def mode_b_out() -> None:
        mse(gd, xd, yd, out=out_d)
        sync()

    def mode_c() -> None:
        plan.run()
        sync()

    def mode_c_w() -> None:
        plan.run(synchronize=True)

    def mode_e() -> None:
        numpy_formula(grad, x, y)

    modes: dict[str, Callable[[], Any]] = {"a": mode_a, "a_u": mode_a_u, "b": mode_b,
                                           "b_out": mode_b_out, "c": mode_c, "c_w": mode_c_w,
                                           "e": mode_e}
    if n > 1 << 20:
        del modes["b_out"]  # an extra, skipped where calls are slow
        full_grad = inputs(n, dtype, seed=1)[1]  # a grad of x's shape, as in a chain rule

        def mode_a_g() -> None:
            mse(full_grad, x, y)

        def mode_e_g() -> None:
            numpy_formula(full_grad, x, y)

        modes.update(a_g=mode_a_g, e_g=mode_e_g)
    return modes


def run_case(aclnn_py: Any, torch: Any, floor_binary: Path | None, lib_dir: str, n: int,
             dtype: str, reps: Reps) -> dict[str, Any]:
    case: dict[str, Any] = {"n": n, "dtype": dtype, "loadavg_start": loadavg()}
    baseline = live_counts(aclnn_py)

    floor_info: dict[str, Any] = {}

    def floor(round_: int) -> dict[str, Any]:
        share = -(-reps.min_reps // reps.rounds), -(-reps.max_reps // reps.rounds)
        # each process starts cold: a full warm-up first, a short one in later rounds
        warmup = reps.warmup if round_ == 0 else max(1, min(reps.warmup, 20))
        record = run_c_floor(floor_binary, lib_dir, n, dtype, warmup,
                             reps.budget_s / reps.rounds, *share, staging.DIRECT_BYTES)
        floor_info["workspace_bytes"] = record["workspace_bytes"]
        return record

    staging = aclnn_py.engine.numpy_path
    grad, x, y = inputs(n, dtype)
    mse = aclnn_py.mse_loss_backward
    gd, xd, yd = (aclnn_py.to_device(a) for a in (grad, x, y))
    plan = aclnn_py.MseLossBackwardPlan(gd, xd, yd)
    out_d = aclnn_py.empty(x.shape, x.dtype)

    # correctness, once
    expected = reference(grad, x, y)
    rtol, atol = (1e-5, 1e-30) if dtype == "float32" else (1e-2, 2.0**-23)
    checks = {"a": mse(grad, x, y), "b": mse(gd, xd, yd).numpy(), "c": plan.run().numpy(),
              "c_w": plan.run(synchronize=True).numpy()}
    case["check"] = {k: bool(np.allclose(v, expected, rtol=rtol, atol=atol))
                     for k, v in checks.items()}
    del checks, expected

    modes = mse_modes(aclnn_py, n, dtype, grad, x, y, gd=gd, xd=xd, yd=yd, plan=plan,
                      out_d=out_d)
    if torch is not None:
        gt, xt, yt = (torch.from_numpy(a) for a in (grad, x, y))  # grad stays 0-d
        aten = torch.ops.aten.mse_loss_backward
        try:
            aten(gt, xt, yt, 1)
        except Exception as error:
            case["torch_error"] = f"{type(error).__name__}: {error}"
        else:
            def mode_f() -> None:
                aten(gt, xt, yt, 1)

            modes["f"] = mode_f

    case["timing"] = time_modes(modes, reps, floor if floor_binary is not None else None)
    case["floor"] = floor_info or None
    case["accounting"] = {name: account(aclnn_py, modes[name], reps.account)
                          for name in ("a", "a_u", "b", "b_out", "c") if name in modes}

    plan_out = plan.out
    plan.close()
    for array in (gd, xd, yd, out_d, plan_out):
        array.free()
    modes.clear()
    after = live_counts(aclnn_py)
    case["leaks"] = {key: after[key] - baseline.get(key, 0) for key in after}

    t = {name: v["median_ns"] for name, v in case["timing"].items()}
    itemsize = np.dtype(dtype).itemsize
    case["min_bytes"] = {"a": {"h2d": (1 + 2 * n) * itemsize, "d2h": n * itemsize},
                         "b": {"h2d": 0, "d2h": 0}, "c": {"h2d": 0, "d2h": 0}}
    # staging pads each packed array but the last to 512 bytes (counted)
    case["max_padding"] = {"a": (staging.ALIGNMENT - 1) * 2}
    if "d_b" in t:
        # keyed by mode, except "b_d_r" and "b_out_d_r": modes b and b_out over the C
        # relaunch floor
        case["overhead"] = {
            name: {"mode": mode, "floor": key, "over_us": (t[mode] - t[key]) / 1e3,
                   "ratio": t[mode] / t[key] if t[key] > 0 else None}
            for name, mode, key in (("a", "a", "d_a"), ("a_d_s", "a", "d_s"),
                                    ("a_u", "a_u", "d_a"), ("b", "b", "d_b"), ("b_d_r", "b", "d_r"),
                                    ("b_out", "b_out", "d_b"), ("b_out_d_r", "b_out", "d_r"),
                                    ("c", "c", "d_c"),
                                    ("c_w", "c_w", "d_c"))
            if mode in t and key in t}
    case["loadavg_end"] = loadavg()
    return case


# ---- the other operators of the table, against mse_loss_backward in the same run ------

# (function, plan, number of tensor inputs, positional attributes)
OTHER_OPERATORS = (
    ("l1_loss_backward", "L1LossBackwardPlan", 3, ("mean",)),
    ("smooth_l1_loss_backward", "SmoothL1LossBackwardPlan", 3, ("mean",)),
    ("l1_loss", "L1LossPlan", 2, ("mean",)),
    ("add", "AddPlan", 2, ()),
)


def run_operator_cases(aclnn_py: Any, sizes: list[int], quick: bool) -> list[dict[str, Any]]:
    """Per-call medians of a (numpy in/out), b (DeviceArray one-shot) and c (plan.run) for
    each operator of OTHER_OPERATORS and for mse_loss_backward, timed in interleaved rounds
    (every operator goes through the same table-driven path)."""
    rows = []
    for n in sizes:
        modes: dict[str, Callable[[], Any]] = {}
        plans = []
        for name, plan_name, arity, attributes in (("mse_loss_backward", "MseLossBackwardPlan",
                                                     3, ("mean",)), *OTHER_OPERATORS):
            host = list(inputs(n, "float32"))[3 - arity:]
            device = [aclnn_py.to_device(a) for a in host]
            plans.append(getattr(aclnn_py, plan_name)(*device, *attributes))
            for mode, call in _operator_modes(aclnn_py, getattr(aclnn_py, name), host, device,
                                              plans[-1], attributes).items():
                modes[f"{name}:{mode}"] = call
        timing = time_modes(modes, reps_for(n, quick), None)
        for plan in plans:
            plan.close()
        for name in dict.fromkeys(key.split(":")[0] for key in modes):
            rows.append({"operator": name, "n": n,
                         **{m: timing[f"{name}:{m}"]["median_ns"] for m in ("a", "b", "c")}})
    return rows


def _operator_modes(aclnn_py: Any, function: Callable[..., Any], host: list[np.ndarray],
                    device: list[Any], plan: Any, attributes: tuple[Any, ...]
                    ) -> dict[str, Callable[[], Any]]:
    sync = aclnn_py.synchronize

    def mode_a() -> None:
        function(*host, *attributes)

    def mode_b() -> None:
        function(*device, *attributes)
        sync()

    def mode_c() -> None:
        plan.run()
        sync()

    return {"a": mode_a, "b": mode_b, "c": mode_c}


def print_operator_rows(rows: list[dict[str, Any]]) -> None:
    print("\nother operators, float32, median per call (ratio to mse_loss_backward, same size):")
    print(f"{'operator':<24}{'n':>9}  {'a np→np':>16}  {'b dev':>16}  {'c plan':>16}")
    base = {row["n"]: row for row in rows if row["operator"] == "mse_loss_backward"}
    for row in rows:
        cells = []
        for mode in ("a", "b", "c"):
            ratio = row[mode] / base[row["n"]][mode] if base[row["n"]][mode] else 0.0
            cells.append(f"{fmt_time(row[mode])} ({ratio:.2f}x)")
        print(f"{row['operator']:<24}{SIZE_LABELS.get(row['n'], row['n']):>9}  "
              + "  ".join(f"{cell:>16}" for cell in cells))


# ---- a Python-kernel operator next to a C one (the emulator) -------------------------------

# (label, operator, where the emulator computes it): the same elementwise shape of work
KERNEL_OPERATORS = (("aclnnAdd", "C kernel"), ("aclnnSub", "Python kernel"),
                    ("aclnnMul", "Python kernel"))


def run_kernel_comparison(aclnn_py: Any, sizes: list[int], quick: bool
                          ) -> list[dict[str, Any]]:
    """Median per call of ``aclnn_py.call(op, x_d, y_d[, alpha])`` then a synchronisation,
    on device arrays, for an operator the emulator computes in C and for two it computes
    with Python kernels, timed in interleaved rounds; empty off the emulator."""
    if not aclnn_py.emulator.loaded():
        return []
    call, sync = aclnn_py.call, aclnn_py.synchronize
    rows = []
    for n in sizes:
        x, y = (aclnn_py.to_device(a) for a in inputs(n, "float32")[1:])
        modes: dict[str, Callable[[], Any]] = {}
        for operator, _ in KERNEL_OPERATORS:
            extra = () if operator == "aclnnMul" else (1,)

            def mode(operator: str = operator, arrays: tuple[Any, ...] = (x, y, *extra)
                     ) -> None:
                call(operator, *arrays)
                sync()

            modes[operator] = mode
        timing = time_modes(modes, reps_for(n, quick), None)
        base = timing["aclnnAdd"]["median_ns"]
        for operator, where in KERNEL_OPERATORS:
            median = timing[operator]["median_ns"]
            rows.append({"operator": operator, "kernel": where, "n": n, "median_ns": median,
                         "ratio": median / base if base else None})
        x.free()
        y.free()
    return rows


def print_kernel_rows(rows: list[dict[str, Any]]) -> None:
    print("\nemulated kernels: aclnn_py.call on device arrays + synchronize(), float32, median "
          "per call (ratio to aclnnAdd's C kernel, same size):")
    for row in rows:
        print(f"  {row['operator']:<10} {row['kernel']:<14}{SIZE_LABELS.get(row['n'], row['n']):>6}"
              f"  {fmt_time(row['median_ns']):>9} ({row['ratio']:.2f}x)")


# ---- torch NPU tensors against DeviceArrays -----------------------------------------------


def run_torch_tensors(aclnn_py: Any, quick: bool) -> list[dict[str, Any]]:
    """Median per call (then a synchronisation) of ``add`` and ``call("aclnnAdd")`` with
    ``out=`` on torch NPU tensors against the same on DeviceArrays, 1 element float32, in
    interleaved rounds. Off an NPU the tensors are the test suite's stand-in (its Python
    methods count in); empty without PyTorch, or on CANN without torch_npu."""
    try:
        import torch
    except ImportError:
        return []
    try:
        import torch_npu  # noqa: F401

        def tensor() -> Any:
            return torch.ones(1, device="npu")
    except ImportError:
        if not aclnn_py.emulator.loaded():
            return []
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from npu_standin import NpuTensor

        def tensor() -> Any:
            return NpuTensor.from_numpy(np.ones(1, np.float32), torch.float32)
    x, out = tensor(), tensor()
    xd, outd = aclnn_py.to_device(np.ones(1, np.float32)), aclnn_py.empty(1, np.float32)
    add, call, sync = aclnn_py.add, aclnn_py.call, aclnn_py.synchronize
    modes: dict[str, Callable[[], Any]] = {
        "add, DeviceArrays": lambda: (add(xd, xd, out=outd), sync()),
        "add, torch tensors": lambda: (add(x, x, out=out), sync()),
        "call, DeviceArrays": lambda: (call("aclnnAdd", xd, xd, 1, out=outd), sync()),
        "call, torch tensors": lambda: (call("aclnnAdd", x, x, 1, out=out), sync()),
    }
    timing = time_modes(modes, reps_for(1, quick), None)
    rows = []
    for name in modes:
        base = timing[name.split(",")[0] + ", DeviceArrays"]["median_ns"]
        median = timing[name]["median_ns"]
        rows.append({"mode": name, "median_ns": median, "ratio": median / base if base else None})
    return rows


def print_torch_rows(rows: list[dict[str, Any]]) -> None:
    print("\ntorch NPU tensors (out= given), 1 element float32, + synchronize(), median per call "
          "(ratio to the same on DeviceArrays):")
    for row in rows:
        print(f"  {row['mode']:<22} {fmt_time(row['median_ns']):>9} ({row['ratio']:.2f}x)")


# ---- the real torch_npu: its tensors against DeviceArrays -----------------------------------

TORCH_NPU_VERSION = "2.13.0"
TORCH_NPU_SITE = Path(os.environ.get("ACLNN_BENCH_TORCH_NPU_SITE") or (
    Path.home() / ".cache" / "aclnn_py-bench" / f"torch_npu-{TORCH_NPU_VERSION}"))
TORCH_NPU_TARGET_NS = 1000  # issue 36: a torch_npu-tensor call at most +1 µs over DeviceArrays


def torch_npu_setup() -> tuple[dict[str, str] | None, str]:
    """The environment of a process that imports the real torch_npu on the emulator's 8.5
    tree, as tests/frameworks/test_real_torch_npu.py makes it: torch_npu installed with
    ``pip install --no-deps --target`` (into ``TORCH_NPU_SITE``, kept for the next run) and
    only the tree's ``set_env.sh`` environment (torch imports every installed device backend
    at ``import torch``, so torch_npu stays out of this process). (None, why) when it cannot
    be set up."""
    import aclnn_py

    try:
        import torch
    except ImportError:
        return None, f"PyTorch is not installed: pip install torch=={TORCH_NPU_VERSION}"
    if torch.__version__.split("+")[0] != TORCH_NPU_VERSION:
        return None, f"torch_npu {TORCH_NPU_VERSION} needs torch {TORCH_NPU_VERSION}, this " \
                     f"is {torch.__version__}"
    if not aclnn_py.emulator.loaded():
        return None, "the setup is the emulator's 8.5 tree; this run is on a real CANN"
    if not (TORCH_NPU_SITE / "torch_npu").is_dir():
        install = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                                  "--target", str(TORCH_NPU_SITE),
                                  f"torch-npu=={TORCH_NPU_VERSION}"],
                                 capture_output=True, text=True, timeout=900)
        if install.returncode != 0:
            last = (install.stderr.strip().splitlines() or ["no message"])[-1]
            return None, f"torch-npu {TORCH_NPU_VERSION} cannot be installed here: {last}"
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    script = Path(aclnn_py.emulator.home("8.5")) / "set_env.sh"
    listing = subprocess.run(["bash", "-c", f'source "{script}" && env -0'], env=base,
                             check=True, capture_output=True).stdout.decode()
    env = dict(item.split("=", 1) for item in listing.split("\0") if "=" in item)
    env["PYTHONPATH"] = str(TORCH_NPU_SITE)
    return env, f"torch_npu {TORCH_NPU_VERSION} from {TORCH_NPU_SITE}"


def run_torch_npu(aclnn_py: Any, quick: bool) -> dict[str, Any]:
    """The 1-element float32 ``mse_loss_backward(g, x, y)`` + synchronisation on real
    torch_npu tensors against DeviceArrays, timed in a process set up by
    :func:`torch_npu_setup` (``--torch-npu-child``); {"skipped": why} when it cannot be."""
    env, how = torch_npu_setup()
    if env is None:
        return {"skipped": how}
    rounds, calls = (5, 400) if quick else (9, 2000)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()),
                           "--torch-npu-child", f"{rounds}:{calls}"], env=env,
                          cwd=str(TORCH_NPU_SITE), capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        return {"skipped": f"the torch_npu process failed ({done.returncode}): "
                           f"{done.stderr.strip()[-600:]}"}
    row: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    row["setup"] = how
    return row


def torch_npu_child(rounds: int, calls: int) -> None:
    """In the torch_npu process: per mode, the best over ``rounds`` interleaved rounds of the
    median of ``calls`` timed calls; one JSON line on stdout."""
    import torch
    import torch_npu  # noqa: F401 (registers the npu device)

    import aclnn_py

    g, x, y = inputs(1, "float32")
    gt, xt, yt = (torch.from_numpy(a).npu() for a in (g, x, y))  # g stays 0-d, as gd
    gd, xd, yd = (aclnn_py.to_device(a) for a in (g, x, y))
    mse, sync = aclnn_py.mse_loss_backward, aclnn_py.synchronize
    torch_sync, stream = torch.npu.synchronize, torch.npu.current_stream()
    expected = mse(gd, xd, yd).numpy()
    got = mse(gt, xt, yt)
    same = isinstance(got, torch.Tensor) and got.device.type == "npu" and bool(
        np.array_equal(got.cpu().numpy().view(np.uint32), expected.view(np.uint32)))
    modes: dict[str, Callable[[], Any]] = {
        "DeviceArrays + aclnn_py.synchronize()": lambda: (mse(gd, xd, yd), sync()),
        "torch_npu tensors + torch.npu.synchronize()": lambda: (mse(gt, xt, yt), torch_sync()),
        "torch_npu tensors + stream.synchronize()": lambda: (mse(gt, xt, yt),
                                                             stream.synchronize()),
        "torch.npu.synchronize() alone": torch_sync,
        "aclnn_py.synchronize() alone": sync,
    }
    clock = time.perf_counter_ns
    best = {name: float("inf") for name in modes}
    for call in modes.values():
        for _ in range(200):
            call()
    gc.disable()
    try:
        for _ in range(rounds):
            for name, call in modes.items():
                samples = []
                for _ in range(calls):
                    start = clock()
                    call()
                    samples.append(clock() - start)
                best[name] = min(best[name], statistics.median(samples))
    finally:
        gc.enable()
    print(json.dumps({"median_ns": best, "bit_identical": same, "rounds": rounds,
                      "calls": calls, "torch": torch.__version__,
                      "torch_npu": getattr(torch_npu, "__version__", "?")}))


def print_torch_npu(row: dict[str, Any]) -> None:
    if "skipped" in row:
        print(f"\ntorch_npu tensors against DeviceArrays: skipped: {row['skipped']}")
        return
    medians = row["median_ns"]
    base = medians["DeviceArrays + aclnn_py.synchronize()"]
    print(f"\nmse_loss_backward(g, x, y), 1 element float32, real {row['setup']} (torch "
          f"{row['torch']}), best of {row['rounds']} interleaved rounds of the median per call "
          f"({row['calls']} calls); result bit-identical to DeviceArrays': "
          f"{'yes' if row['bit_identical'] else 'NO'}:")
    for name, ns in medians.items():
        over = "" if "alone" in name or ns == base else f"  ({(ns - base) / 1e3:+.1f}µs)"
        print(f"  {name:<46}{fmt_time(ns):>9}{over}")
    overhead = min(medians["torch_npu tensors + torch.npu.synchronize()"],
                   medians["torch_npu tensors + stream.synchronize()"]) - base
    mark = "met " if overhead <= TORCH_NPU_TARGET_NS else "MISS"
    print(f"  [{mark}] torch_npu-tensor call <= +1 µs over DeviceArrays "
          f"(+{overhead / 1e3:.1f}µs, the cheaper synchronisation)")


# ---- aclnn_py.call against the curated operators ------------------------------------------

CALL_OPERATORS = (  # (function, CANN name, arity, arguments after the arrays: curated, call)
    ("mse_loss_backward", "aclnnMseLossBackward", 3, {"reduction": "none"}, (0,)),
    ("l1_loss_backward", "aclnnL1LossBackward", 3, {"reduction": "none"}, (0,)),
    ("smooth_l1_loss_backward", "aclnnSmoothL1LossBackward", 3, {"reduction": "none"}, (0, 1.0)),
    ("l1_loss", "aclnnL1Loss", 2, {"reduction": "none"}, (0,)),
    ("add", "aclnnAdd", 2, {}, (1,)),
)


def run_call_comparison(aclnn_py: Any, quick: bool) -> list[dict[str, Any]]:
    """Median per one-shot call at 1 element of each curated operator and of the same
    operator through ``aclnn_py.call``, numpy in/out (a) and on device arrays (b), all
    modes timed in interleaved rounds."""
    sync = aclnn_py.synchronize
    modes: dict[str, Callable[[], Any]] = {}
    for function, cann, arity, curated_args, call_args in CALL_OPERATORS:
        host = list(inputs(1, "float32"))[3 - arity:]
        device = [aclnn_py.to_device(a) for a in host]
        curated = getattr(aclnn_py, function)

        def curated_a(f: Any = curated, h: Any = host, k: Any = curated_args) -> None:
            f(*h, **k)

        def call_a(c: str = cann, h: Any = host, a: Any = call_args) -> None:
            aclnn_py.call(c, *h, *a)

        def curated_b(f: Any = curated, d: Any = device, k: Any = curated_args) -> None:
            f(*d, **k)
            sync()

        def call_b(c: str = cann, d: Any = device, a: Any = call_args) -> None:
            aclnn_py.call(c, *d, *a)
            sync()

        modes.update({f"{function}:curated a": curated_a, f"{function}:call a": call_a,
                      f"{function}:curated b": curated_b, f"{function}:call b": call_b})
    timing = time_modes(modes, reps_for(1, quick), None)
    rows = []
    for function, cann, *_ in CALL_OPERATORS:
        row: dict[str, Any] = {"operator": cann}
        for mode in ("curated a", "call a", "curated b", "call b"):
            row[mode] = timing[f"{function}:{mode}"]["median_ns"]
        rows.append(row)
    return rows


def print_call_comparison(rows: list[dict[str, Any]]) -> None:
    print("\naclnn_py.call against the curated function, float32, 1 element, median per "
          "one-shot call (ratio call / curated):")
    print(f"{'operator':<28}{'curated a':>11}{'call a':>11}{'ratio':>7}"
          f"{'curated b':>12}{'call b':>11}{'ratio':>7}")
    for row in rows:
        print(f"{row['operator']:<28}{fmt_time(row['curated a']):>11}{fmt_time(row['call a']):>11}"
              f"{row['call a'] / row['curated a']:>6.2f}x{fmt_time(row['curated b']):>12}"
              f"{fmt_time(row['call b']):>11}{row['call b'] / row['curated b']:>6.2f}x")
    print("a: numpy in, numpy out; b: DeviceArray in, DeviceArray out, then synchronize()")


# ---- peers: CuPy and PyTorch on a CUDA GPU beside aclnn_py, each over its own C floor ------

PEER_ROUNDS = 5
PEER_ROWS = {"cuda": "CUDA kernel from C, launch + synchronise",
             "cupy": "ElementwiseKernel(..., out) + synchronise",
             "torch": "aten.mse_loss_backward(..., grad_input=out) + synchronise"}


class Peer(NamedTuple):
    """One peer's timed call (None when it cannot run), its row's label and why not."""

    call: Callable[[], Any] | None
    label: str
    why: str | None = None


def best_of_rounds(modes: dict[str, Callable[[], Any]], rounds: int, calls: int
                   ) -> dict[str, float]:
    """The best over ``rounds`` interleaved rounds of each mode's median wall time per call
    (ns), each round's calls after a tenth as many untimed ones."""
    clock = time.perf_counter_ns
    best = dict.fromkeys(modes, float("inf"))
    for _ in range(rounds):
        for name, call in modes.items():
            for _ in range(max(calls // 10, 1)):
                call()
            samples = []
            for _ in range(calls):
                start = clock()
                call()
                samples.append(clock() - start)
            best[name] = min(best[name], float(statistics.median(samples)))
    return best


def cupy_peer() -> Peer:
    """CuPy's 1-element float32 mse_loss_backward: an ``ElementwiseKernel`` writing ``out``,
    then the current stream synchronised."""
    label = f"CuPy {PEER_ROWS['cupy']}"
    try:
        import cupy
    except Exception as error:  # not installed, or no CUDA runtime for it
        return Peer(None, label, f"CuPy is not available ({type(error).__name__}: {error})")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return Peer(None, label, f"CuPy {cupy.__version__} sees no CUDA device")
    except Exception as error:
        return Peer(None, label, f"CuPy {cupy.__version__} sees no CUDA device "
                                 f"({type(error).__name__})")
    grad, x, y = inputs(1, "float32")
    kernel = cupy.ElementwiseKernel("T grad, T x, T y, T scale", "T out",
                                    "out = grad * (x - y) * scale", "mse_loss_backward")
    g, xd, yd = (cupy.asarray(a) for a in (grad, x, y))
    out = cupy.empty_like(xd)
    scale = np.float32(2 / x.size)
    synchronize = cupy.cuda.get_current_stream().synchronize

    def call() -> None:
        kernel(g, xd, yd, scale, out)
        synchronize()

    call()
    if not np.allclose(cupy.asnumpy(out), reference(grad, x, y), rtol=1e-5):
        return Peer(None, label, f"CuPy computed {cupy.asnumpy(out)}, not "
                                 f"{reference(grad, x, y)}")
    return Peer(call, f"CuPy {cupy.__version__} {PEER_ROWS['cupy']}")


def torch_peer(torch: Any, device: str = "cuda") -> Peer:
    """PyTorch's 1-element float32 ``aten.mse_loss_backward(..., grad_input=out)`` on
    ``device``, then, on a CUDA device, its current stream synchronised."""
    label = f"PyTorch {PEER_ROWS['torch']}"
    if torch is None:
        return Peer(None, label, "PyTorch is not installed")
    if device == "cuda" and not torch.cuda.is_available():
        return Peer(None, label, f"PyTorch {torch.__version__} sees no CUDA device")
    grad, x, y = inputs(1, "float32")
    g, xd, yd = (torch.from_numpy(a).to(device) for a in (grad, x, y))  # grad stays 0-d
    out = torch.empty_like(xd)
    aten = torch.ops.aten.mse_loss_backward
    # the current stream's wait, as CuPy's row and the C floor wait for their stream
    synchronize = torch.cuda.current_stream().synchronize if device == "cuda" else None

    def call() -> None:
        aten(g, xd, yd, 1, grad_input=out)  # reduction 1: at::Reduction::Mean
        if synchronize is not None:
            synchronize()

    call()
    if not np.allclose(out.cpu().numpy(), reference(grad, x, y), rtol=1e-5):
        return Peer(None, label, f"PyTorch computed {out.cpu().numpy()}, not "
                                 f"{reference(grad, x, y)}")
    return Peer(call, f"PyTorch {torch.__version__} {PEER_ROWS['torch']}")


def cuda_floor(binary: Path | None, how: str, rounds: int, calls: int
               ) -> tuple[float | None, str | None]:
    """The CUDA C floor (cuda_floor.c), best of ``rounds`` medians: (ns, None), or (None,
    why not)."""
    if binary is None:
        return None, how
    try:
        done = subprocess.run([str(binary), "--rounds", str(rounds), "--calls", str(calls)],
                              capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, "cuda_floor did not finish in 600 s"
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    try:
        record = json.loads(done.stdout)
    except json.JSONDecodeError:
        return None, f"cuda_floor printed {done.stdout.strip()[:200]!r}"
    if record["value"] is None or not np.isclose(record["value"], record["expected"],
                                                 rtol=1e-6):
        return None, f"the C kernel computed {record['value']}, not {record['expected']}"
    return float(min(record["median_ns"])), None


def run_peers(aclnn_py: Any, quick: bool) -> list[dict[str, Any]]:
    """The issue's table: 1-element float32 mse_loss_backward (grad 0-d, "mean") through
    CuPy and PyTorch on a CUDA GPU against a CUDA kernel launched from C, and through
    aclnn_py against c_floor.c on the same CANN (or emulator); every figure the best over
    ``PEER_ROUNDS`` rounds of the median per call, in one run. Peers without a CUDA
    device are rows saying why."""
    torch, _ = load_torch()
    rounds = 2 if quick else PEER_ROUNDS
    calls = 300 if quick else 2000
    lib_dir = c_floor_libraries(aclnn_py)
    with tempfile.TemporaryDirectory(prefix="aclnn_peers_") as workdir:
        c_binary, c_how = build_c_floor(Path(workdir))
        cuda_binary, cuda_how = build_c_floor(Path(workdir), CUDA_SOURCE)
        cuda_ns, cuda_why = cuda_floor(cuda_binary, cuda_how, rounds, calls)
        floors: dict[str, float] = {}
        for _ in range(rounds):
            if c_binary is None:
                break
            record = run_c_floor(c_binary, lib_dir, 1, "float32", 200, 0.2 if quick else 1.0,
                                 calls, calls, aclnn_py.engine.numpy_path.DIRECT_BYTES)
            for key, samples in record["samples"].items():
                median = float(statistics.median(samples))
                floors[key] = min(floors.get(key, median), median)
    # (row label, C floor, timed call or None, why not): the CUDA floor, the peers, ours
    planned: list[tuple[str, float | None, Callable[[], Any] | None, str | None]] = [
        (PEER_ROWS["cuda"], cuda_ns, None, cuda_why)]
    for name, key, make in (("CuPy", "cupy", cupy_peer),
                            ("PyTorch", "torch", lambda: torch_peer(torch))):
        try:
            peer = make()
        except Exception as error:  # a CUDA failure setting the peer up: its row says so
            peer = Peer(None, f"{name} {PEER_ROWS[key]}", f"{type(error).__name__}: {error}")
        planned.append((peer.label, cuda_ns, peer.call, peer.why))
    grad, x, y = inputs(1, "float32")
    gd, xd, yd = (aclnn_py.to_device(a) for a in (grad, x, y))
    plan = aclnn_py.MseLossBackwardPlan(gd, xd, yd)
    # the main table's modes b, c, c_w and a (its b_out unused here: no out= given)
    modes = mse_modes(aclnn_py, 1, "float32", grad, x, y, gd=gd, xd=xd, yd=yd, plan=plan,
                      out_d=None)
    for label, floor, mode in (
            ("aclnn_py one-shot on device arrays + synchronize()", "oneshot", "b"),
            ("aclnn_py plan.run() + synchronize()", "plan", "c"),
            ("aclnn_py plan.run(synchronize=True)", "plan", "c_w"),
            ("aclnn_py 1-element numpy call (staged C floor)", "staged", "a")):
        call = modes[mode]
        planned.append((label, floors.get(floor), call, None if floors else c_how))
    try:
        timing = best_of_rounds({label: call for label, _, call, _ in planned
                                 if call is not None}, rounds, calls)
    finally:
        plan_out = plan.out
        plan.close()
        for array in (gd, xd, yd, plan_out):
            array.free()
    return [{"row": label, "floor_ns": floor_ns, "call_ns": timing.get(label), "why": why}
            for label, floor_ns, _, why in planned]


def print_peers(rows: list[dict[str, Any]]) -> None:
    print("\nPython's cost over its own C floor: 1-element float32 mse_loss_backward, best of "
          "the rounds' medians per call:")
    width = max(len(row["row"]) for row in rows)
    print(f"{'':<{width}}  {'C floor':>9}  {'Python call':>11}  {'overhead':>9}")
    for row in rows:
        floor, call = row["floor_ns"], row["call_ns"]
        over = f"{(call - floor) / 1e3:+.1f} µs" if floor is not None and call is not None \
            else "–"
        line = f"{row['row']:<{width}}  {fmt_time(floor) if floor is not None else '–':>9}  " \
               f"{fmt_time(call) if call is not None else '–':>11}  {over:>9}"
        if row["why"]:
            line += f"  (n/a: {row['why']})"
        print(line)


# ---- a loop that never synchronises: memory and time per call ------------------------------

UNSYNCED_N = 1 << 20
UNSYNCED_CALLS = 1000


def run_unsynced(aclnn_py: Any, quick: bool) -> dict[str, Any]:
    """``UNSYNCED_CALLS`` ``mse_loss_backward`` calls on 1 M-element float32 device arrays
    whose results are dropped, never synchronised until the end, against the same loop
    synchronising every call: the device pool's peak bytes in use (``memory_info()``, read
    after each call) and the time per call, each loop timed whole, the best of a few runs."""
    grad, x, y = (aclnn_py.to_device(a) for a in inputs(UNSYNCED_N, "float32"))
    aclnn_py.synchronize()
    base = aclnn_py.memory_info()["used_bytes"]
    mse, sync, info = aclnn_py.mse_loss_backward, aclnn_py.synchronize, aclnn_py.memory_info

    def unsynced() -> int:
        peak = 0
        for _ in range(UNSYNCED_CALLS):
            out = mse(grad, x, y)
            peak = max(peak, info()["used_bytes"])
            del out
        sync()
        return peak

    def synced() -> int:
        peak = 0
        for _ in range(UNSYNCED_CALLS):
            out = mse(grad, x, y)
            sync()
            peak = max(peak, info()["used_bytes"])
            del out
        return peak

    times: dict[str, float] = {}
    peaks: dict[str, int] = {}
    for _ in range(2 if quick else 5):
        for name, loop in (("unsynchronised", unsynced), ("synchronised", synced)):
            started = time.perf_counter_ns()
            peak = loop()
            elapsed = (time.perf_counter_ns() - started) / UNSYNCED_CALLS
            times[name] = min(times.get(name, elapsed), elapsed)
            peaks[name] = max(peaks.get(name, 0), peak)
    return {"calls": UNSYNCED_CALLS, "n": UNSYNCED_N, "inputs_bytes": base,
            "peak_used_bytes": peaks, "ns_per_call": times,
            "ratio": times["unsynchronised"] / times["synchronised"]}


def print_unsynced(row: dict[str, Any]) -> None:
    print(f"\n{row['calls']} mse_loss_backward calls on 1 M-element float32 device arrays, "
          "results dropped (best loop; peak of memory_info()['used_bytes'] after each call, "
          f"inputs {row['inputs_bytes'] / 2**20:.1f} MiB of it):")
    for name in ("unsynchronised", "synchronised"):
        print(f"  {name:<16} {fmt_time(row['ns_per_call'][name]):>10} per call, peak "
              f"{row['peak_used_bytes'][name] / 2**20:7.1f} MiB in use")
    print(f"  unsynchronised / synchronised per call: {row['ratio']:.2f}x")


# ---- import time, fresh processes ----------------------------------------------------------

IMPORT_CHILD = """
import sys, time
started = time.perf_counter()
import {module}
elapsed = time.perf_counter() - started
print(elapsed, int("ml_dtypes" in sys.modules))
"""


def run_imports(aclnn_py: Any, quick: bool) -> dict[str, Any]:
    """Median wall time of ``import numpy`` and of ``import aclnn_py`` in fresh processes
    taking turns (bytecode cached in a temporary folder, one untimed run of each first),
    and whether importing aclnn_py imported ml_dtypes."""
    rounds = 7 if quick else 21
    modules = ("numpy", "aclnn_py")
    times: dict[str, list[float]] = {module: [] for module in modules}
    ml_dtypes_imported = False
    with tempfile.TemporaryDirectory(prefix="aclnn_imports_") as workdir:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(workdir) / "pycache")
        for round_ in range(rounds + 1):
            for module in modules:
                done = subprocess.run([sys.executable, "-c", IMPORT_CHILD.format(module=module)],
                                      env=env, cwd=workdir, capture_output=True, text=True,
                                      timeout=120, check=True)
                elapsed, ml = done.stdout.split()
                if round_:  # the first round fills the bytecode cache
                    times[module].append(float(elapsed))
                if module == "aclnn_py":
                    ml_dtypes_imported |= ml == "1"
    medians = {module: statistics.median(values) for module, values in times.items()}
    return {"rounds": rounds, "median_s": medians,
            "difference_s": medians["aclnn_py"] - medians["numpy"],
            "ratio": medians["aclnn_py"] / medians["numpy"],
            "ml_dtypes_imported": ml_dtypes_imported,
            "targets": {"aclnn_py_le_150ms": medians["aclnn_py"] <= 0.150,
                        "within_100ms_of_numpy": medians["aclnn_py"] - medians["numpy"] <= 0.100,
                        "no_ml_dtypes": not ml_dtypes_imported}}


def print_imports(row: dict[str, Any]) -> None:
    med = row["median_s"]
    print(f"\nimport time, fresh processes, median of {row['rounds']} each (bytecode cached):")
    print(f"  import numpy     {med['numpy'] * 1e3:7.1f} ms")
    print(f"  import aclnn_py  {med['aclnn_py'] * 1e3:7.1f} ms  "
          f"({row['difference_s'] * 1e3:+.1f} ms, {row['ratio']:.2f}x numpy); ml_dtypes imported: "
          f"{'yes' if row['ml_dtypes_imported'] else 'no'}")
    marks = {True: "met ", False: "MISS"}
    targets = row["targets"]
    print(f"  [{marks[targets['aclnn_py_le_150ms']]}] import aclnn_py <= 150 ms; "
          f"[{marks[targets['within_100ms_of_numpy']]}] within 100 ms of import numpy; "
          f"[{marks[targets['no_ml_dtypes']]}] no ml_dtypes")


# ---- scalars against 0-d arrays --------------------------------------------------------------


def run_scalars(aclnn_py: Any, quick: bool) -> dict[str, Any]:
    """``mse_loss_backward(grad, x, y)`` at 1 element float32 with ``grad`` a 0-d array, a
    numpy.float32 scalar, a Python float and a numpy.float64 scalar, over numpy and over
    device ``x``, ``y``; medians per call in interleaved rounds, ratios to the 0-d array
    grad of the same kind, and whether each result equals the baseline's bit for bit."""
    grad, x, y = inputs(1, "float32")
    value = float(grad)
    mse, sync = aclnn_py.mse_loss_backward, aclnn_py.synchronize
    xd, yd = aclnn_py.to_device(x), aclnn_py.to_device(y)
    grads = {"0-d array": grad, "np.float32": np.float32(value), "float": value,
             "np.float64": np.float64(value)}
    device_grads = {"0-d array": aclnn_py.to_device(grad), **{k: v for k, v in grads.items()
                                                              if k != "0-d array"}}
    modes: dict[str, Callable[[], Any]] = {}
    same: dict[str, bool] = {}
    for name, g in grads.items():
        modes[f"numpy:{name}"] = lambda g=g: mse(g, x, y)
    for name, g in device_grads.items():
        def device_mode(g: Any = g) -> None:
            mse(g, xd, yd)
            sync()
        modes[f"device:{name}"] = device_mode
    expected = mse(grad, x, y)
    expected_d = mse(device_grads["0-d array"], xd, yd).numpy()
    for name, g in grads.items():
        same[f"numpy:{name}"] = bool(np.array_equal(mse(g, x, y).view(np.uint32),
                                                    expected.view(np.uint32)))
    for name, g in device_grads.items():
        same[f"device:{name}"] = bool(np.array_equal(mse(g, xd, yd).numpy().view(np.uint32),
                                                     expected_d.view(np.uint32)))
    timing = time_modes(modes, reps_for(1, quick), None)
    medians = {name: timing[name]["median_ns"] for name in modes}
    ratios = {name: medians[name] / medians[name.split(":")[0] + ":0-d array"]
              for name in modes}
    for array in (xd, yd, device_grads["0-d array"]):
        array.free()
    return {"median_ns": medians, "ratio": ratios, "bit_identical": same,
            "targets": {"numpy_scalars_le_1.2x": all(
                ratios[f"numpy:{k}"] <= 1.2 for k in grads if k != "0-d array"),
                "device_numbers_le_1.3x": all(
                ratios[f"device:{k}"] <= 1.3 for k in device_grads if k != "0-d array")}}


def print_scalars(row: dict[str, Any]) -> None:
    print("\nmse_loss_backward(grad, x, y), 1 element float32, by kind of grad; median per "
          "call (ratio to a 0-d array grad of the same kind; = bit-identical results):")
    print(f"{'grad':<12}{'numpy x, y':>20}{'device x, y + sync':>24}")
    for kind in ("0-d array", "np.float32", "float", "np.float64"):
        cells = []
        for where in ("numpy", "device"):
            name = f"{where}:{kind}"
            mark = "=" if row["bit_identical"][name] else "!"
            cells.append(f"{fmt_time(row['median_ns'][name])} ({row['ratio'][name]:.2f}x){mark}")
        print(f"{kind:<12}{cells[0]:>20}{cells[1]:>24}")
    marks = {True: "met ", False: "MISS"}
    targets = row["targets"]
    print(f"  [{marks[targets['numpy_scalars_le_1.2x']]}] numpy x, y: a scalar or number grad "
          "within 1.2x of a 0-d array; "
          f"[{marks[targets['device_numbers_le_1.3x']]}] device x, y: within 1.3x of a 0-d "
          "device grad")


# ---- staged against direct copies, by array size ------------------------------------------

CROSSOVER_SIZES = (16, 256, 1024, 4096, 8192, 16384, 32768, 65536, 262144, 1 << 20)


def run_crossover(aclnn_py: Any, quick: bool) -> list[dict[str, Any]]:
    """numpy -> numpy ``mse_loss_backward(grad, x, y)`` (float32, grad 0-d) for each size of
    CROSSOVER_SIZES with every array staged (packed into page-locked memory, one copy each
    way), every array direct (one synchronous copy each, straight from and to the caller's
    arrays) and on the unstaged path; the direct-copy size of ``aclnn_py.engine.numpy_path`` is
    switched per mode (the first call after a switch lays the signature out again)."""
    staging = aclnn_py.engine.numpy_path
    saved = staging.DIRECT_BYTES
    try:
        return [_crossover_case(aclnn_py, n, quick) for n in CROSSOVER_SIZES]
    finally:
        staging.set_direct_bytes(saved)


def _crossover_case(aclnn_py: Any, n: int, quick: bool) -> dict[str, Any]:
    staging = aclnn_py.engine.numpy_path
    mse = aclnn_py.mse_loss_backward
    grad, x, y = inputs(n, "float32")

    def with_direct_bytes(nbytes: int) -> Callable[[], None]:
        def call() -> None:
            if nbytes != staging.DIRECT_BYTES:
                staging.set_direct_bytes(nbytes)
            mse(grad, x, y)
        return call

    unstaged = unstaged_mode(staging, mse, grad, x, y)

    modes = {"staged": with_direct_bytes(1 << 62), "direct": with_direct_bytes(0),
             "unstaged": unstaged}
    timing = time_modes(modes, reps_for(n, quick), None)
    return {"n": n, "array_bytes": n * 4, **{mode: timing[mode]["median_ns"] for mode in modes}}


def print_crossover(rows: list[dict[str, Any]]) -> None:
    print("\nstaged against direct copies, mse_loss_backward float32, grad 0-d, x and y of n "
          "elements; median per call:")
    print(f"{'n':>9} {'bytes/array':>12} {'staged':>10} {'direct':>10} {'unstaged':>10}  faster")
    for row in rows:
        faster = "direct" if row["direct"] < row["staged"] else "staged"
        print(f"{row['n']:>9} {row['array_bytes']:>12} {fmt_time(row['staged']):>10} "
              f"{fmt_time(row['direct']):>10} {fmt_time(row['unstaged']):>10}  {faster}")
    crossing = next((row["array_bytes"] for i, row in enumerate(rows)
                     if all(r["direct"] < r["staged"] for r in rows[i:])), None)
    print("direct copies are faster from "
          + (f"{crossing} bytes per array on" if crossing else "no measured size on"))


# ---- reading headers: linear in their size -----------------------------------------------

HEADER_SIZES = (40_000, 1_000_000)
_FOO = ("aclnnStatus aclnnFooGetWorkspaceSize(const aclTensor *self, aclTensor *out,\n"
        "    uint64_t *workspaceSize, aclOpExecutor **executor);\n"
        "aclnnStatus aclnnFoo(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,\n"
        "    aclrtStream stream);\n")
_BAR = _FOO.replace("Foo", "Bar")
_GHOST = "aclnnStatus aclnnGhostGetWorkspaceSize(const aclTensor *self);"


def _filled(head: str, unit: str, tail: str, size: int) -> str:
    """``head``, ``unit`` repeated, ``tail``: about ``size`` characters."""
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


# Each kind: a header of about n characters, and the operators aclnn_py reads in it.
HEADER_KINDS: dict[str, tuple[Callable[[int], str], int | None]] = {
    "escaped quotes": (lambda n: _filled(_FOO + '#define QUOTES "', '\\"', "\n" + _BAR, n), 2),
    "unterminated string": (lambda n: _filled(
        _FOO + '#define TEXT "say ', '  \\"' + _GHOST.replace('"', '\\"') + '\\" \\\n',
        "  the end\n" + _BAR, n), 2),
    "unterminated comments": (lambda n: _filled(
        _FOO + "// the old spelling: \\\n", _GHOST + " \\\n", "\n" + _BAR + "/* ", n), 2),
    "prototypes": (lambda n: "".join(f"aclnnStatus aclnnP{i:05d}GetWorkspaceSize(int *ws);\n"
                                     for i in range(n // 50)), None),
    "with attributes": (lambda n: "".join(
        f'__attribute__((visibility("default")))\naclnnStatus aclnnP{i:05d}'
        "GetWorkspaceSize(int *ws);\n" for i in range(n // 90)), None),
    "helper bodies": (lambda n: _filled(
        _FOO, "static inline int aclnnHelper(char c) { if (c == '{') { return "
              "aclnnGhostGetWorkspaceSize(c); } return 0; }\n", _BAR, n), 2),
    "nested braces": (lambda n: _FOO + "static const int aclnnDeep[] = " + "{" * (n // 2)
                      + "}" * (n // 2) + ";\n" + _BAR, 2),
    "apostrophes": (lambda n: _filled(_FOO + "static const long n = 1", "'0", ";\n" + _BAR, n),
                    2),
}


def run_headers(aclnn_py: Any, quick: bool) -> list[dict[str, Any]]:
    """For each kind of HEADER_KINDS at 40 KB and 1 MB, the median time of
    ``ops.headers.operator_names`` (what ``operators()`` reads of each header) and
    ``ops.headers.parse`` (every prototype, the most a ``call()`` reads), after one untimed
    parse, sizes taking turns over the rounds, with garbage collected between calls and not
    during them; the operators found are checked, so a fast wrong answer shows."""
    headers = importlib.import_module("aclnn_py.ops.headers")  # imported on first use
    rounds = 3 if quick else 7
    rows = []
    for kind, (make, operators) in HEADER_KINDS.items():
        texts = [make(n) for n in HEADER_SIZES]
        headers.parse(texts[0])  # untimed, once
        times: dict[str, list[list[int]]] = {"operator_names": [[] for _ in texts],
                                             "parse": [[] for _ in texts]}
        for _ in range(rounds):
            for index, text in enumerate(texts):
                for reading, function in (("operator_names", headers.operator_names),
                                          ("parse", headers.parse)):
                    result = None  # the last call's result is not freed in this one
                    gc.collect()
                    gc.disable()
                    try:
                        started = time.perf_counter_ns()
                        result = function(text)
                        times[reading][index].append(time.perf_counter_ns() - started)
                    finally:
                        gc.enable()
                    if reading == "operator_names":
                        expected = operators or text.count("GetWorkspaceSize(")
                        if len(result) != expected:
                            raise RuntimeError(f"{kind}: {len(result)} operators found, "
                                               f"not {expected}")
        for reading, values in times.items():
            rows.append({"kind": kind, "reading": reading,
                         "bytes": [len(text) for text in texts],
                         "prototypes": [len(headers.parse(text)) for text in texts],
                         "median_ns": [statistics.median(v) for v in values]})
    return rows


def print_headers(rows: list[dict[str, Any]]) -> None:
    small, large = HEADER_SIZES
    print(f"\nreading one header, median time (linear time is x{large / small:.0f} from "
          f"{small // 1000} KB to {large // 1_000_000} MB):")
    print(f"{'kind':<23}{'reading':<16}{'40 KB':>9}{'1 MB':>9}{'ratio':>8}  prototypes")
    for row in rows:
        first, last = row["median_ns"]
        kind = row["kind"] if row["reading"] == "operator_names" else ""
        print(f"{kind:<23}{row['reading']:<16}{fmt_time(first):>9}{fmt_time(last):>9}"
              f"{last / first:>7.1f}x  {row['prototypes'][0]}, {row['prototypes'][1]}")


# ---- a catalog of a thousand headers: the first operators() and signature() ----------------

CATALOG_HEADERS = 1000
_PARAMETER_DOCS = "npu device侧的aclTensor，数据类型支持FLOAT、FLOAT16，数据格式支持ND。"
_TENSOR_NAMES = ("self", "other", "weight", "bias", "gradOutput", "indices", "mask", "target")
_ATTRIBUTES = ("const aclScalar *alpha", "int64_t dim", "bool keepdim", "double eps",
               "const aclIntArray *kernelSize", "int64_t reduction", "float scale",
               "const char *mode", "aclDataType dtype", "int8_t cubeMathType")


def _catalog_prototype(prefix: str, name: str, parameters: list[str], width: int = 100) -> str:
    """A prototype as CANN's formatter splits it: parameters aligned under the first."""
    head = f"{prefix}aclnnStatus {name}("
    indent = " " * len(head.split("\n")[-1])
    lines, line = [], head
    for index, parameter in enumerate(parameters):
        piece = parameter + (", " if index < len(parameters) - 1 else ");")
        if len(line.split("\n")[-1]) + len(piece) > width and not line.endswith("("):
            lines.append(line.rstrip())
            line = indent
        line += piece
    return "\n".join(lines + [line]) + "\n"


def catalog_header(index: int, chance: Any) -> tuple[str, str, list[str]]:
    """A made-up header in the styles of CANN's ``op_api/aclnn_*.h``, and its operators:
    a license block, an include guard, includes, ``extern "C"``, Chinese doxygen comments
    that name the operator and its ``GetWorkspaceSize`` (brackets included), prototypes
    split over lines under a visibility macro, and up to four operators (``aclnnXxx``,
    ``aclnnXxxs``, ``aclnnInplaceXxx``, ``aclnnInplaceXxxs``). About 2 to 10 KB."""
    op = f"Synth{index:04d}{chance.choice(['Add', 'Norm', 'Pool', 'Loss', 'Grad', 'Cast'])}"
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", op).lower()
    style = chance.random()
    macro = ("ACLNN_API " if style < 0.85 else "ACL_FUNC_VISIBILITY " if style < 0.93
             else '__attribute__((visibility("default")))\n')
    variants = [op, op + "s", "Inplace" + op, "Inplace" + op + "s"][:chance.randint(1, 4)]
    guard = f"OP_API_INC_LEVEL2_ACLNN_{snake.upper()}_H_"
    parts = [
        "/**\n * Copyright (c) 2025 Example Technologies Co., Ltd.\n"
        " * This file is a part of a made-up operator library, licensed under the terms\n"
        " * of an example licence, version 2.0; see the licence file for details.\n */\n\n",
        f"#ifndef {guard}\n#define {guard}\n\n#include \"aclnn/aclnn_base.h\"\n"
        "#include \"aclnn_util.h\"\n",
    ]
    if style >= 0.97:
        parts.append('#define ACLNN_API __attribute__((visibility("default")))\n')
    parts.append('\n#ifdef __cplusplus\nextern "C" {\n#endif\n\n')
    tensors = chance.sample(_TENSOR_NAMES, chance.randint(1, 4))
    attributes = chance.sample(_ATTRIBUTES, chance.randint(0, 2))
    for variant in variants:
        name = "aclnn" + variant
        inplace = variant.startswith("Inplace")
        own = [f"{'aclTensor' if inplace and i == 0 else 'const aclTensor'} *"
               f"{t + 'Ref' if inplace and i == 0 else t}" for i, t in enumerate(tensors)]
        own += attributes + ([] if inplace else ["aclTensor *out"])
        docs = "".join(f" * @param [in] {p.split('*')[-1].split()[-1]}: {_PARAMETER_DOCS}\n"
                       for p in own[:-1])
        padding = " * 约束说明：输入与输出的数据类型需满足类型推导规则，详见接口文档。\n" * \
            chance.randint(0, 3)
        parts.append(
            f"/**\n * @brief {name}的第一段接口，根据具体的计算流程，计算workspace大小。\n"
            " * @domain aclnn_ops_infer\n *\n"
            f" * 算子功能：{variant}，完成逐元素计算；调用{name}GetWorkspaceSize(...)后再调用"
            f"{name}(...)。\n{padding}{docs}"
            " * @param [out] workspaceSize: 返回用户需要在npu device侧申请的workspace大小。\n"
            " * @param [out] executor: 返回op执行器，包含算子计算流程。\n"
            " * @return aclnnStatus: 返回状态码。\n */\n")
        parts.append(_catalog_prototype(macro, name + "GetWorkspaceSize",
                                        own + ["uint64_t *workspaceSize",
                                               "aclOpExecutor **executor"]))
        parts.append(
            f"\n/**\n * @brief {name}的第二段接口，用于执行计算。\n *\n"
            " * @param [in] workspace: 在npu device侧申请的workspace内存地址。\n"
            " * @param [in] workspaceSize: 在npu device侧申请的workspace大小，由第一段接口"
            f"{name}GetWorkspaceSize获取。\n"
            " * @param [in] executor: op执行器，包含了算子计算流程。\n"
            " * @param [in] stream: acl stream流。\n * @return aclnnStatus: 返回状态码。\n */\n")
        parts.append(_catalog_prototype(macro, name, ["void *workspace", "uint64_t workspaceSize",
                                                      "aclOpExecutor *executor",
                                                      "aclrtStream stream"]) + "\n")
    parts.append(f"#ifdef __cplusplus\n}}\n#endif\n\n#endif  // {guard}\n")
    return f"aclnn_{snake}.h", "".join(parts), ["aclnn" + v for v in variants]


CATALOG_CHILD = """
import json, sys, time
started = time.perf_counter()
import aclnn_py
imported = time.perf_counter()
from aclnn_py.ops import headers as _headers
if sys.argv[1] == "full":  # the scan before this change: every header cleaned in full
    _headers.quick_operator_names = _headers.operator_names
before = time.perf_counter()
names = aclnn_py.operators()
listed = time.perf_counter()
signature = aclnn_py.signature(sys.argv[2])
signed = time.perf_counter()
here = aclnn_py.operators(callable=True)
checked = time.perf_counter()
print(json.dumps({"import_s": imported - started, "operators_s": listed - before,
                  "signature_s": signed - listed, "callable_s": checked - signed,
                  "count": len(names), "callable": len(here), "names": names,
                  "target_callable": signature.callable}))
"""


def run_catalog(aclnn_py: Any, quick: bool) -> list[dict[str, Any]]:
    """In a copy of the emulator tree with CATALOG_HEADERS more headers in
    ``include/aclnnop`` (as ASCEND_HOME_PATH, backend ``cann``), each in a fresh Python:
    the time of ``import aclnn_py``, of the first ``operators()`` (the libraries loaded
    and every header scanned), of one ``signature()`` then (cold: its header read and
    parsed, its library looked for) and of ``operators(callable=True)``; with the quick
    scan, and with every header cleaned in full (the scan before it) as the baseline,
    taking turns; medians. The names both give are checked to be the same."""
    rounds = 3 if quick else 7
    chance = random.Random(1000)
    rows = []
    with tempfile.TemporaryDirectory(prefix="aclnn_catalog_") as workdir:
        root = Path(workdir) / "cann"
        shutil.copytree(aclnn_py.emulator.home(), root, symlinks=True)
        folder = root / "include" / "aclnnop"
        declared: list[str] = []
        sizes = []
        for index in range(CATALOG_HEADERS):
            file_name, text, names = catalog_header(index, chance)
            (folder / file_name).write_text(text)
            declared += names
            sizes.append(len(text.encode()))
        target = declared[len(declared) // 2]
        env = {k: v for k, v in os.environ.items()
               if k not in ("ACLNN_PY_CANN_HOME", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH",
                            "ASCEND_CUSTOM_OPP_PATH")}
        env.update({"ASCEND_HOME_PATH": str(root), "ACLNN_PY_BACKEND": "cann"})
        runs: dict[str, list[dict[str, Any]]] = {"quick": [], "full": []}
        for _ in range(rounds):
            for mode in runs:
                done = subprocess.run([sys.executable, "-c", CATALOG_CHILD, mode, target],
                                      env=env, cwd=workdir, capture_output=True, text=True,
                                      timeout=300)
                if done.returncode != 0:
                    raise RuntimeError(f"catalog child ({mode}) failed: {done.stderr}")
                runs[mode].append(json.loads(done.stdout))
        found = {mode: results[0]["names"] for mode, results in runs.items()}
        if found["quick"] != found["full"] or not set(declared) <= set(found["quick"]):
            raise RuntimeError("the quick scan's operators differ from the full scan's")
        for mode, results in runs.items():
            rows.append({
                "scan": mode, "headers": CATALOG_HEADERS, "operators": results[0]["count"],
                "callable": results[0]["callable"], "signature_of": target,
                "header_kb": [min(sizes) / 1000, statistics.median(sizes) / 1000,
                              max(sizes) / 1000],
                **{key: statistics.median(r[key] for r in results)
                   for key in ("import_s", "operators_s", "signature_s", "callable_s")}})
    return rows


def print_catalog(rows: list[dict[str, Any]]) -> None:
    first = rows[0]
    low, middle, high = first["header_kb"]
    print(f"\na catalog of {first['headers']} more headers ({low:.1f} / {middle:.1f} / "
          f"{high:.1f} KB min / median / max; {first['operators']} operators, "
          f"{first['callable']} callable), fresh processes, median:")
    print(f"{'scan':<8}{'import':>10}{'operators()':>13}{'signature()':>13}"
          f"{'callable=True':>15}")
    for row in rows:
        print(f"{row['scan']:<8}{row['import_s'] * 1e3:>8.1f}ms{row['operators_s'] * 1e3:>11.1f}ms"
              f"{row['signature_s'] * 1e3:>11.2f}ms{row['callable_s'] * 1e3:>13.1f}ms")
    quick, full = rows[0], rows[1]
    print(f"first operators(): x{full['operators_s'] / quick['operators_s']:.1f} faster than "
          f"the full scan (target <= 100 ms: {quick['operators_s'] * 1e3:.0f} ms); cold "
          f"signature() {quick['signature_s'] * 1e3:.2f} ms (target <= 5 ms)")


# ---- the Ray example's throughput --------------------------------------------------------

RAY_EXAMPLE = HERE.parent / "examples" / "ray_npus.py"
RAY_TIMING = re.compile(r"ray: (\d+) tasks in ([\d.]+) s, ([\d.]+) tasks/s")


def run_ray(tasks: int, rounds: int, npus: tuple[int, ...] = (1, 2)) -> list[dict[str, Any]]:
    """Tasks per second of examples/ray_npus.py on a local cluster of each count of emulated
    NPUs, the counts interleaved over ``rounds`` runs."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("RAY_ADDRESS", "ASCEND_RT_VISIBLE_DEVICES")}
    rates: dict[int, list[float]] = {count: [] for count in npus}
    for _ in range(rounds):
        for count in npus:
            done = subprocess.run(
                [sys.executable, str(RAY_EXAMPLE), "--address", "local", "--tasks", str(tasks)],
                env={**environment, "ACLNN_EMU_DEVICE_COUNT": str(count)},
                capture_output=True, text=True, timeout=900)
            found = [RAY_TIMING.fullmatch(line) for line in done.stdout.splitlines()]
            timing = next((match for match in found if match), None)
            if done.returncode != 0 or timing is None:
                raise RuntimeError(f"{RAY_EXAMPLE.name} failed:\n{done.stdout}{done.stderr}")
            rates[count].append(float(timing[3]))
            print(f"  {count} NPU(s): {timing[3]} tasks/s", flush=True)
    return [{"npus": count, "tasks": tasks, "tasks_per_s": statistics.median(values),
             "runs": values} for count, values in rates.items()]


def print_ray(rows: list[dict[str, Any]]) -> None:
    print(f"\nexamples/ray_npus.py on a local Ray cluster of emulated NPUs, {os.cpu_count()} "
          "CPUs; median of the rounds:")
    base = rows[0]["tasks_per_s"]
    for row in rows:
        print(f"  {row['npus']} NPU(s): {row['tasks_per_s']:.2f} tasks/s "
              f"({1000 / row['tasks_per_s']:.0f} ms per task, x{row['tasks_per_s'] / base:.2f})")


# ---- peak RSS of the 16 M case (child process) ----------------------------------------


def rss_child(n: int, dtype: str, mode: str, calls: int) -> None:
    """Run one mode of one case in this (fresh) process and print ru_maxrss as JSON."""
    import aclnn_py

    aclnn_py.runtime_info()      # load and initialise
    grad, x, y = inputs(n, dtype)
    gc.collect()
    base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    base_rss_kb = proc_status_kb("VmRSS")
    with contextlib.suppress(OSError):  # Linux: reset VmHWM to the current RSS
        Path("/proc/self/clear_refs").write_text("5")
    if mode == "a":
        for _ in range(calls):
            aclnn_py.mse_loss_backward(grad, x, y)
    elif mode in ("b", "c"):
        gd, xd, yd = (aclnn_py.to_device(a) for a in (grad, x, y))
        if mode == "b":
            for _ in range(calls):
                aclnn_py.mse_loss_backward(gd, xd, yd)
                aclnn_py.synchronize()
        else:
            with aclnn_py.MseLossBackwardPlan(gd, xd, yd) as plan:
                for _ in range(calls):
                    plan.run()
                    aclnn_py.synchronize()
    elif mode == "e":
        for _ in range(calls):
            numpy_formula(grad, x, y)
    elif mode == "f":
        import torch

        gt, xt, yt = (torch.from_numpy(a) for a in (grad, x, y))
        for _ in range(calls):
            torch.ops.aten.mse_loss_backward(gt, xt, yt, 1)
    else:
        raise SystemExit(f"unknown mode {mode}")
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"baseline_kb": base_kb, "peak_kb": peak_kb,
                      "baseline_rss_kb": base_rss_kb, "hwm_kb": proc_status_kb("VmHWM")}))


def proc_status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def measure_rss(n: int, dtype: str, modes: list[str], calls: int) -> list[dict[str, Any]]:
    itemsize = np.dtype(dtype).itemsize
    # Extra resident bytes a perfect implementation needs beyond the host inputs.
    minimum = {"a": (3 * n + 1) * itemsize + n * itemsize,   # device grad, x, y, out + host out
               "b": (3 * n + 1) * itemsize,                   # device grad, x, y, out
               "c": (3 * n + 1) * itemsize,
               "e": n * itemsize,                             # the result
               "f": n * itemsize}
    rows = []
    for mode in modes:
        command = [sys.executable, str(Path(__file__).resolve()), "--rss-child",
                   f"{n}:{dtype}:{mode}:{calls}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                              env={**os.environ})
        row: dict[str, Any] = {"n": n, "dtype": dtype, "mode": mode, "calls": calls,
                               "min_extra_bytes": minimum[mode]}
        if done.returncode != 0:
            row["error"] = done.stderr.strip().splitlines()[-1:] or ["failed"]
        else:
            got = json.loads(done.stdout.strip().splitlines()[-1])
            row.update(got)
            row["extra_bytes"] = (got["peak_kb"] - got["baseline_kb"]) * 1024
            if got["hwm_kb"] is not None and got["baseline_rss_kb"] is not None:
                row["extra_hwm_bytes"] = (got["hwm_kb"] - got["baseline_rss_kb"]) * 1024
        rows.append(row)
    return rows


# ---- larger than the device: chunked calls ---------------------------------------------

CHUNKED_INPUT_BYTES = 96 << 20
CHUNKED_DEVICES = {"64M": "64M", "large": None}  # ACLNN_EMU_DEVICE_MEMORY (None: default)
CHUNKED_REDUCTIONS = ("mean", "none")


def chunked_child(reduction: str, calls: int) -> None:
    """Time ``mse_loss_backward(grad, x, y, reduction)`` over three 96 MiB float32 arrays in
    this (fresh) process after one untimed call; print the samples and counters as JSON."""
    import aclnn_py
    from aclnn_py.engine import chunked as _chunked

    n = CHUNKED_INPUT_BYTES // 4
    rng = np.random.default_rng(0)
    grad, x, y = (rng.random(n, dtype=np.float32) for _ in range(3))
    mse = aclnn_py.mse_loss_backward
    mse(grad, x, y, reduction)
    before = emulator_stats(aclnn_py)
    samples = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        mse(grad, x, y, reduction)
        samples.append(time.perf_counter_ns() - start)
    after = emulator_stats(aclnn_py)
    record: dict[str, Any] = {"samples": samples, "chunks": _chunked.last_count}
    if before is not None and after is not None:
        for key in ("memcpy_calls", "sync_calls", "malloc_calls"):
            record[key] = (after[key] - before[key]) / calls
    print(json.dumps(record))


def run_chunked(quick: bool) -> list[dict[str, Any]]:
    """Each reduction on a 64 MiB device (chunked) and on the default one (not), in
    subprocesses taking turns over the rounds; medians per call."""
    rounds, calls = (1, 2) if quick else (3, 3)
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for _ in range(rounds):
        for reduction in CHUNKED_REDUCTIONS:
            for device, memory in CHUNKED_DEVICES.items():
                environment = {**os.environ}
                environment.pop("ACLNN_EMU_DEVICE_MEMORY", None)
                if memory is not None:
                    environment["ACLNN_EMU_DEVICE_MEMORY"] = memory
                command = [sys.executable, str(Path(__file__).resolve()), "--chunked-child",
                           f"{reduction}:{calls}"]
                done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                                      env=environment)
                row = found.setdefault((reduction, device), {
                    "reduction": reduction, "device": device, "samples": []})
                if done.returncode != 0:
                    row["error"] = done.stderr.strip().splitlines()[-1:] or ["failed"]
                    continue
                got = json.loads(done.stdout.strip().splitlines()[-1])
                row["samples"] += got.pop("samples")
                row.update(got)
    for row in found.values():
        if row["samples"]:
            row["median_ns"] = float(statistics.median(row["samples"]))
    return list(found.values())


# ---- one call over several devices -----------------------------------------------------

DEVICES_ELEMENTS = 16 << 20
DEVICES_REDUCTIONS = ("none", "mean")


def devices_child(count: int, calls: int) -> None:
    """Time ``mse_loss_backward(grad, x, y, reduction, devices="all")`` over three 16 M
    float32 arrays on this process's ``count`` devices (one: without devices=), after one
    untimed call; print the samples and each device's bytes per call as JSON."""
    import aclnn_py

    rng = np.random.default_rng(0)
    grad, x, y = (rng.random(DEVICES_ELEMENTS, dtype=np.float32) for _ in range(3))
    options: dict[str, Any] = {"devices": "all"} if count > 1 else {}
    found: dict[str, Any] = {}
    for reduction in DEVICES_REDUCTIONS:
        aclnn_py.mse_loss_backward(grad, x, y, reduction, **options)
        before = [aclnn_py.emulator.device_stats(d) for d in range(count)]
        samples = []
        for _ in range(calls):
            start = time.perf_counter_ns()
            aclnn_py.mse_loss_backward(grad, x, y, reduction, **options)
            samples.append(time.perf_counter_ns() - start)
        after = [aclnn_py.emulator.device_stats(d) for d in range(count)]
        found[reduction] = {"samples": samples, "bytes": [
            (b["h2d_bytes"] - a["h2d_bytes"] + b["d2h_bytes"] - a["d2h_bytes"]) // calls
            for a, b in zip(before, after)]}
    print(json.dumps(found))


def run_devices(count: int, quick: bool) -> list[dict[str, Any]]:
    """The call on 1 and on ``count`` emulated devices, in subprocesses taking turns."""
    rounds, calls = (1, 2) if quick else (3, 3)
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for _ in range(rounds):
        for devices in sorted({1, count}):
            environment = {**os.environ, "ACLNN_EMU_DEVICE_COUNT": str(devices)}
            environment.pop("ASCEND_RT_VISIBLE_DEVICES", None)
            command = [sys.executable, str(Path(__file__).resolve()), "--devices-child",
                       f"{devices}:{calls}"]
            done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                                  env=environment)
            for reduction in DEVICES_REDUCTIONS:
                row = found.setdefault((reduction, devices), {
                    "reduction": reduction, "devices": devices, "samples": []})
                if done.returncode != 0:
                    row["error"] = done.stderr.strip().splitlines()[-1:] or ["failed"]
                    continue
                got = json.loads(done.stdout.strip().splitlines()[-1])[reduction]
                row["samples"] += got["samples"]
                row["bytes_per_device"] = got["bytes"]
    for row in found.values():
        if row["samples"]:
            row["median_ns"] = float(statistics.median(row["samples"]))
    return list(found.values())


def print_devices(rows: list[dict[str, Any]]) -> None:
    print(f"\none call over several devices: mse_loss_backward over three {DEVICES_ELEMENTS >> 20}"
          f" M float32 arrays, numpy -> numpy, median per call ({os.cpu_count()} CPUs):")
    one = {row["reduction"]: row.get("median_ns") for row in rows if row["devices"] == 1}
    for row in rows:
        if "error" in row:
            print(f"  {row['reduction']:5} {row['devices']} device(s): error {row['error']}")
            continue
        base = one.get(row["reduction"])
        ratio = f" ({base / row['median_ns']:.2f}x one device's speed)" \
            if base and row["devices"] > 1 else ""
        per_device = ", ".join(f"{b / (1 << 20):.0f} MiB" for b in row["bytes_per_device"])
        print(f"  {row['reduction']:5} {row['devices']} device(s): "
              f"{fmt_time(row['median_ns'])}{ratio}; copied per device: {per_device}")


def print_chunked(rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    print(f"\nlarger than the device: mse_loss_backward over three {CHUNKED_INPUT_BYTES >> 20} "
          "MiB float32 arrays (grad of x's shape), numpy -> numpy, median per call:")
    large = {row["reduction"]: row.get("median_ns") for row in rows if row["device"] == "large"}
    for row in rows:
        if "error" in row:
            print(f"  {row['reduction']:5} {row['device']:>5} device: error {row['error']}")
            continue
        base = large.get(row["reduction"])
        ratio = f" ({row['median_ns'] / base:.2f}x the large device)" \
            if base and row["device"] != "large" else ""
        counters = "" if "memcpy_calls" not in row else (
            f"; per call {row['memcpy_calls']:g} copies, {row['sync_calls']:g} "
            f"synchronisations, {row['malloc_calls']:g} allocations")
        print(f"  {row['reduction']:5} {row['device']:>5} device: {fmt_time(row['median_ns'])}"
              f"{ratio}, {row['chunks']} chunks{counters}")


# ---- report -------------------------------------------------------------------------------


def bytes_cell(case: dict[str, Any]) -> str:
    acc = case["accounting"]["a"]
    if "h2d_bytes" not in acc:
        return "n/a"
    moved = acc["h2d_bytes"] + acc["d2h_bytes"]
    minimum = case["min_bytes"]["a"]["h2d"] + case["min_bytes"]["a"]["d2h"]
    padding = case.get("max_padding", {}).get("a", 0)
    mark = "=" if moved == minimum else "~" if minimum < moved <= minimum + padding else "!"
    return f"{moved:.0f}{mark}{minimum}"


def copies_cell(case: dict[str, Any]) -> str:
    acc = case["accounting"]["a"]
    if "memcpy_calls" not in acc:
        return "n/a"
    return f"{acc['memcpy_calls']:g}/{acc['sync_calls']:g}"


def pool_cell(case: dict[str, Any]) -> str:
    acc = case["accounting"]
    return "/".join(f"{acc[m]['pool_hits']:g}:{acc[m]['pool_misses']:g}" for m in ("a", "b", "c"))


def print_table(cases: list[dict[str, Any]]) -> None:
    header = ["case", "a np→np", "a_u unst", "b dev", "c plan", "c_w plan", "d_a", "d_b", "d_c",
              "d_r", "d_s", "e numpy", "f torch", "a_g", "e_g", "a-d_s µs", "a-d_a µs",
              "b-d_b µs", "b-d_r µs", "c-d_c µs", "c_w-d_c µs", "bytes(a)", "cp/sync(a)",
              "pool a/b/c"]
    rows = []
    for case in cases:
        t = {k: v["median_ns"] for k, v in case["timing"].items()}
        rows.append([
            f"{SIZE_LABELS.get(case['n'], case['n'])} {DTYPE_CODES[case['dtype']]}",
            *(fmt_time(t.get(k))
              for k in ("a", "a_u", "b", "c", "c_w", "d_a", "d_b", "d_c", "d_r", "d_s", "e",
                        "f", "a_g", "e_g")),
            fmt_over(t.get("a"), t.get("d_s")),
            fmt_over(t.get("a"), t.get("d_a")), fmt_over(t.get("b"), t.get("d_b")),
            fmt_over(t.get("b"), t.get("d_r")), fmt_over(t.get("c"), t.get("d_c")),
            fmt_over(t.get("c_w"), t.get("d_c")), bytes_cell(case), copies_cell(case),
            pool_cell(case)])
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))
    print("times: median wall time per call. a_g, e_g: a and e with a grad of x's shape "
          "(16 M only). a-d_s etc.: overhead over the C floor, µs "
          "(ratio); a-d_s: over the C staged sequence (what a runs), a-d_a: over the C "
          "unstaged one; b-d_b: over the C one-shot, b-d_r: over the C relaunch floor (rebind "
          "out + relaunch, what b runs on a repeat call). c_w: plan.run(synchronize=True), "
          "the run and its wait in one C call. bytes(a): host<->device bytes per "
          "call, moved = minimum, ~ minimum plus staging padding (< 512 per array), ! else. "
          "cp/sync(a): copy and synchronisation calls per call of a. pool: hits:misses per "
          "call after warm-up.")


def evaluate_targets(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = {(c["n"], c["dtype"]): c for c in cases}
    targets: list[dict[str, Any]] = []

    def add(name: str, met: bool | None, detail: str, info: bool = False) -> None:
        targets.append({"target": name, "met": met, "detail": detail, "info": info})

    for dtype in DTYPES:
        case = found.get((1, dtype))
        if case and "overhead" in case and "a_d_s" in case["overhead"]:
            over_a = case["overhead"]["a_d_s"]["over_us"]
            add(f"numpy->numpy, 1 element {dtype}: < 10 µs over the C staged sequence",
                over_a < 10, f"{over_a:.1f} µs over d_s")
        if case and "overhead" in case:
            over_b = case["overhead"]["b"]["over_us"]
            over_c = case["overhead"]["c"]["over_us"]
            add(f"DeviceArray one-shot, 1 element {dtype}: < 10 µs over the C floor",
                over_b < 10, f"{over_b:.1f} µs over d_b (the C one-shot sequence)")
            if "b_d_r" in case["overhead"]:
                over_r = case["overhead"]["b_d_r"]["over_us"]
                add(f"[info] DeviceArray one-shot, 1 element {dtype}, over the C relaunch floor "
                    "(the sequence the library runs on a repeat call)", over_r < 10,
                    f"{over_r:.1f} µs over (judged against the same 10 µs)", info=True)
            if "b_out_d_r" in case["overhead"]:
                over_o = case["overhead"]["b_out_d_r"]["over_us"]
                add(f"[info] DeviceArray one-shot into the same out=, 1 element {dtype}, over "
                    "the C relaunch floor (what the library runs: one C call)", over_o <= 2,
                    f"{over_o:.1f} µs over d_r (judged against the one-shot's 2 µs)", info=True)
            add(f"plan.run, 1 element {dtype}: < 5 µs over the C floor", over_c < 5,
                f"{over_c:.1f} µs over")
            # The tighter goals of the "one clear structure" work, reported beside them.
            if "a_d_s" in case["overhead"]:
                add(f"[info] numpy->numpy, 1 element {dtype}: <= 4 µs over the C staged "
                    "sequence", over_a <= 4, f"{over_a:.1f} µs over d_s", info=True)
            add(f"[info] DeviceArray one-shot, 1 element {dtype}: <= 2 µs over the C one-shot",
                over_b <= 2, f"{over_b:.1f} µs over d_b", info=True)
            add(f"[info] plan.run, 1 element {dtype}: <= 1 µs over the C floor", over_c <= 1,
                f"{over_c:.1f} µs over d_c", info=True)
            if "c_w" in case["overhead"]:
                over_w = case["overhead"]["c_w"]["over_us"]
                add(f"[info] plan.run(synchronize=True), 1 element {dtype}: <= 1 µs over the C "
                    "floor", over_w <= 1, f"{over_w:.1f} µs over d_c", info=True)
    exact = [c for c in cases if "h2d_bytes" in c["accounting"]["a"]]
    if exact:
        wrong = [f"{c['n']} {c['dtype']}" for c in exact
                 if not c["min_bytes"]["a"]["h2d"] <= c["accounting"]["a"]["h2d_bytes"]
                 <= c["min_bytes"]["a"]["h2d"] + c.get("max_padding", {}).get("a", 0)
                 or c["accounting"]["a"]["d2h_bytes"] != c["min_bytes"]["a"]["d2h"]]
        add("numpy->numpy moves the minimum bytes (plus staging padding under 512 bytes "
            "per array)", not wrong, "all cases" if not wrong else "not in: " + ", ".join(wrong))
        syncs = [f"{c['n']} {c['dtype']}" for c in exact
                 if c["accounting"]["a"].get("sync_calls", 1) != 1]
        add("numpy->numpy synchronises once per call", not syncs,
            "all cases" if not syncs else "not in: " + ", ".join(syncs))
    big = found.get((1 << 24, "float32"))
    if big:
        a, e = big["timing"]["a"]["median_ns"], big["timing"]["e"]["median_ns"]
        add("numpy->numpy at 16 M float32 at least as fast as the numpy formula", a <= e,
            f"{fmt_time(a)} vs {fmt_time(e)} ({a / e:.2f}x)")
        if "a_g" in big["timing"]:
            a, e = big["timing"]["a_g"]["median_ns"], big["timing"]["e_g"]["median_ns"]
            add("[info] the same with a full-size grad (a_g against e_g)", a <= e,
                f"{fmt_time(a)} vs {fmt_time(e)} ({a / e:.2f}x)", info=True)
    misses = [f"{c['n']} {c['dtype']} {m}" for c in cases for m, acc in c["accounting"].items()
              if acc["pool_misses"] or acc.get("malloc_calls")]
    add("repeated calls allocate no new device memory after warm-up", not misses,
        "no pool misses or aclrtMalloc calls" if not misses else "misses in: " + ", ".join(misses))
    leaks = [f"{c['n']} {c['dtype']}: {k}{v:+d}" for c in cases for k, v in c["leaks"].items() if v]
    add("nothing leaks", not leaks, "all live counts back to baseline" if not leaks
        else "; ".join(leaks))
    return targets


def print_targets(targets: list[dict[str, Any]]) -> None:
    print("\ntargets (reported, not asserted):")
    for t in targets:
        mark = {True: "met ", False: "MISS", None: "n/a "}[t["met"]]
        print(f"  [{mark}] {t['target']}: {t['detail']}")


def print_rss(rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    print("\npeak resident memory, 16 M case (one subprocess per mode; baseline = after "
          "import, init and making the host inputs):")
    for row in rows:
        if "error" in row:
            print(f"  {row['dtype']} {row['mode']}: error {row['error']}")
            continue
        hwm = row.get("extra_hwm_bytes")
        hwm_text = "n/a" if hwm is None else f"+{hwm / 2**20:.0f} MiB"
        print(f"  {row['dtype']:8} {row['mode']}: ru_maxrss {row['peak_kb'] / 1024:5.0f} MiB "
              f"(+{row['extra_bytes'] / 2**20:4.0f} MiB over baseline), VmHWM {hwm_text} "
              f"over the RSS before the calls; minimum +{row['min_extra_bytes'] / 2**20:.0f} MiB")


# ---- profile ------------------------------------------------------------------------------


def profile(aclnn_py: Any, calls: int, top: int) -> None:
    """cProfile of the 1-element float32 paths a, b and c (cProfile slows them several-fold)."""
    grad, x, y = inputs(1, "float32")
    gd, xd, yd = (aclnn_py.to_device(a) for a in (grad, x, y))
    plan = aclnn_py.MseLossBackwardPlan(gd, xd, yd)
    mse, sync = aclnn_py.mse_loss_backward, aclnn_py.synchronize

    def mode_a() -> None:
        mse(grad, x, y)

    def mode_b() -> None:
        mse(gd, xd, yd)
        sync()

    def mode_c() -> None:
        plan.run()
        sync()

    for name, call in (("a numpy->numpy", mode_a), ("b DeviceArray one-shot + sync", mode_b),
                       ("c plan.run + sync", mode_c)):
        for _ in range(200):
            call()
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            call()
        profiler.disable()
        stream = io.StringIO()
        stats = pstats.Stats(profiler, stream=stream)
        stats.sort_stats("tottime").print_stats(top)
        print(f"==== {name}: {calls} calls; per-call µs = tottime / {calls} * 1e6 ====")
        print(stream.getvalue())
    plan.close()


# ---- every computed operator against PyTorch -------------------------------------------------

# The operators whose time the emulator's kernels aim to keep within 4x of PyTorch's (one
# thread, 1 M float32 elements); every other computed operator within 10x.
EMULATED_GOAL = frozenset(f"aclnn{name}" for name in (
    "Add", "Mul", "Div", "Exp", "Log", "Sqrt", "Tanh", "Sigmoid", "Relu", "Gelu", "Silu", "Erf",
    "Softmax", "LogSoftmax", "ReduceSum", "Mean", "ArgMax", "Cumsum", "Matmul"))
EMULATED_N = 1 << 20
EMULATED_SQUARE = (1024, 1024)  # the 2-d cases' shape, EMULATED_N elements


class EmulatedCase:
    """One operator at about 1 M float32 elements: its aclnn_py.call arguments (numpy arrays,
    uploaded once), its out= (shapes and dtypes, allocated once on the device) and the same
    computation in PyTorch over tensors of the same values."""

    def __init__(self, arguments: dict[str, Any], out: Any, reference: Callable[[], Any]) -> None:
        self.arguments = arguments
        self.out = out
        self.reference = reference


EmulatedBuilders = dict[str, Callable[[], EmulatedCase]]


def _out_spec(shape: Any, dtype: Any = np.float32) -> tuple[tuple[int, ...], Any]:
    """An out= array's shape and dtype (``_device_out`` allocates it on the device)."""
    return (tuple(shape), np.dtype(dtype))


class _EmulatedInputs(NamedTuple):
    """What every group of cases draws on: PyTorch, the generator of the cases' inputs and its
    first draws, EMULATED_N float32 values each. The groups draw their other inputs from the
    same generator one after another, so their order fixes every case's values."""

    torch: Any
    rng: np.random.Generator
    x: np.ndarray  # in [-3, 3)
    y: np.ndarray  # in [-3, 3)
    g: np.ndarray  # a gradient, in [-1, 1)
    pos: np.ndarray  # in [0.5, 2): for logarithms, roots and reciprocals
    unit: np.ndarray  # in [-0.9, 0.9): for inverse sines, atanh and erfinv
    prob: np.ndarray  # in [0.05, 0.95): probabilities
    X: np.ndarray  # x as EMULATED_SQUARE
    G: np.ndarray  # g as EMULATED_SQUARE
    image: np.ndarray  # x as 16 images of 64 channels of 32 x 32

    @classmethod
    def draw(cls, torch: Any) -> _EmulatedInputs:
        """The shared arrays, the first draws of a generator seeded with 0."""
        rng = np.random.default_rng(0)
        x, y, g, pos, unit, prob = (
            rng.uniform(low, high, (EMULATED_N,)).astype(np.float32)
            for low, high in ((-3, 3), (-3, 3), (-1, 1), (0.5, 2), (-0.9, 0.9), (0.05, 0.95)))
        return cls(torch=torch, rng=rng, x=x, y=y, g=g, pos=pos, unit=unit, prob=prob,
                   X=x.reshape(EMULATED_SQUARE), G=g.reshape(EMULATED_SQUARE),
                   image=x.reshape(16, 64, 32, 32))

    def uniform(self, low: float, high: float, shape: Any = (EMULATED_N,)) -> np.ndarray:
        """float32 values uniform in [low, high): the generator's next draw."""
        return self.rng.uniform(low, high, shape).astype(np.float32)

    def in_place(self, arguments: dict[str, Any], source: np.ndarray,
                 method: Callable[[Any], Any]) -> EmulatedCase:
        """A case updating its own copy of ``source``; PyTorch's on a copy too."""
        tensor = self.torch.from_numpy(source.copy())
        return EmulatedCase(arguments, None, lambda: method(tensor))

    def unary(self, source: np.ndarray, function: Callable[[Any], Any],
              parameter: str = "self") -> Callable[[], EmulatedCase]:
        """The builder of a one-input case: ``source`` as ``parameter``, an out= of its shape
        and ``function`` over the same values in PyTorch."""
        T = self.torch.from_numpy
        return lambda: EmulatedCase({parameter: source}, _out_spec(source.shape),
                                    lambda: function(T(source)))


def _cases_pointwise(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Elementwise math, comparisons, logic and arithmetic, each operator over values in
    its domain (``pos`` for logarithms and roots, ``unit`` for inverse sines)."""
    torch = inputs.torch
    F, T, E = torch.nn.functional, torch.from_numpy, _out_spec
    unary = inputs.unary
    n = EMULATED_N
    x, y, pos, unit = inputs.x, inputs.y, inputs.pos, inputs.unit
    for name, source, function in (
            ("Abs", x, torch.abs), ("Neg", x, torch.neg), ("Exp", x, torch.exp),
            ("Expm1", x, torch.expm1), ("Log", pos, torch.log), ("Log2", pos, torch.log2),
            ("Log10", pos, torch.log10), ("Log1p", pos, torch.log1p), ("Sqrt", pos, torch.sqrt),
            ("Rsqrt", pos, torch.rsqrt), ("Reciprocal", pos, torch.reciprocal),
            ("Square", x, torch.square), ("Sin", x, torch.sin), ("Tan", unit, torch.tan),
            ("Asin", unit, torch.asin), ("Sinh", x, torch.sinh), ("Cosh", x, torch.cosh),
            ("Tanh", x, torch.tanh), ("Erf", x, torch.erf), ("Erfinv", unit, torch.erfinv),
            ("Sigmoid", x, torch.sigmoid), ("Relu", x, torch.relu), ("Silu", x, F.silu),
            ("Gelu", x, lambda t: F.gelu(t, approximate="tanh")), ("Mish", x, F.mish),
            ("Hardswish", x, F.hardswish), ("Floor", x, torch.floor), ("Ceil", x, torch.ceil),
            ("Trunc", x, torch.trunc), ("Round", x, torch.round),
            ("Hardsigmoid", x, F.hardsigmoid)):
        cases[f"aclnn{name}"] = unary(source, function)
    for name, source, function in (("Acos", unit, torch.acos), ("Atan", x, torch.atan),
                                   ("Cos", x, torch.cos)):
        cases[f"aclnn{name}"] = unary(source, function, "input")
    cases["aclnnSign"] = lambda: EmulatedCase({"self": x}, {"result": E((n,))},
                                              lambda: torch.sign(T(x)))
    cases["aclnnLogicalNot"] = lambda: EmulatedCase({"self": x > 0}, E((n,), bool),
                                                    lambda: torch.logical_not(T(x > 0)))
    cases["aclnnGeluV2"] = lambda: EmulatedCase({"x": x, "approximate": 0}, E((n,)),
                                                lambda: F.gelu(T(x)))
    for name, first, second, function in (
            ("Mul", x, y, torch.mul), ("Div", x, pos, torch.div),
            ("Maximum", x, y, torch.maximum), ("Minimum", x, y, torch.minimum),
            ("FloorDivide", x, pos, torch.floor_divide), ("Atan2", x, y, torch.atan2),
            ("PowTensorTensor", pos, y, torch.pow)):
        cases[f"aclnn{name}"] = (lambda a=first, b=second, f=function, p=name: EmulatedCase(
            {"self": a, ("exponent" if p.startswith("Pow") else "other"): b}, E((n,)),
            lambda: f(T(a), T(b))))
    cases["aclnnPowTensorScalar"] = lambda: EmulatedCase({"self": pos, "exponent": 2.0},
                                                         E((n,)), lambda: torch.pow(T(pos), 2.0))
    for name, function in (("Muls", torch.mul), ("Divs", torch.div)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": x, "other": 1.5}, E((n,)), lambda: f(T(x), 1.5)))
    for name, function in (("Eq", torch.eq), ("Ne", torch.ne), ("Gt", torch.gt),
                           ("Ge", torch.ge), ("Lt", torch.lt), ("Le", torch.le)):
        cases[f"aclnn{name}Tensor"] = (lambda f=function: EmulatedCase(
            {"self": x, "other": y}, E((n,), bool), lambda: f(T(x), T(y))))
        cases[f"aclnn{name}Scalar"] = (lambda f=function: EmulatedCase(
            {"self": x, "other": 0.5}, E((n,), bool), lambda: f(T(x), 0.5)))
    for name, function in (("LogicalAnd", torch.logical_and), ("LogicalOr", torch.logical_or),
                           ("LogicalXor", torch.logical_xor)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": x > 0, "other": y > 0}, E((n,), bool), lambda: f(T(x > 0), T(y > 0))))
    cases["aclnnAdd"] = lambda: EmulatedCase({"self": x, "other": y, "alpha": 1.0}, E((n,)),
                                             lambda: torch.add(T(x), T(y)))
    cases["aclnnSub"] = lambda: EmulatedCase({"self": x, "other": y, "alpha": 2.0}, E((n,)),
                                             lambda: torch.sub(T(x), T(y), alpha=2.0))
    cases["aclnnAdds"] = lambda: EmulatedCase({"self": x, "other": 1.5, "alpha": 2.0}, E((n,)),
                                              lambda: torch.add(T(x), 1.5, alpha=2.0))
    cases["aclnnSubs"] = lambda: EmulatedCase({"self": x, "other": 1.5, "alpha": 2.0}, E((n,)),
                                              lambda: torch.sub(T(x), 1.5, alpha=2.0))


def _cases_in_place(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """In-place arithmetic, activations, fills and copies."""
    torch = inputs.torch
    T, E = torch.from_numpy, _out_spec
    in_place = inputs.in_place
    n, f32 = EMULATED_N, np.float32
    x, y, pos = inputs.x, inputs.y, inputs.pos
    # in place: values that stay in range call after call
    work, work_torch = x.copy(), T(x.copy())
    for name, other, method, args in (
            ("InplaceAdd", y, "add_", {"alpha": 1.0}), ("InplaceSub", y, "sub_", {"alpha": 1.0}),
            ("InplaceAdds", 1.0, "add_", {"alpha": 1.0}),
            ("InplaceSubs", 1.0, "sub_", {"alpha": 1.0}),
            ("InplaceMul", np.ones(n, f32), "mul_", {}), ("InplaceMuls", 1.0, "mul_", {}),
            ("InplaceDiv", np.ones(n, f32), "div_", {}), ("InplaceDivs", 1.0, "div_", {})):
        cases[f"aclnn{name}"] = (lambda o=other, m=method, a=args: EmulatedCase(
            {"selfRef": work, "other": o, **a}, None,
            lambda: getattr(work_torch, m)(T(o) if isinstance(o, np.ndarray) else o, **a)))
    for name, parameter, method in (
            ("InplaceRelu", "selfRef", "relu_"), ("InplaceSigmoid", "selfRef", "sigmoid_"),
            ("InplaceTanh", "selfRef", "tanh_"), ("InplaceExp", "selfRef", "exp_"),
            ("InplaceSqrt", "self", "sqrt_"), ("InplaceNeg", "selfRef", "neg_"),
            ("InplaceLog", "selfRef", "log_"), ("InplaceZero", "selfRef", "zero_")):
        source = pos if name in ("InplaceSqrt", "InplaceLog") else x
        cases[f"aclnn{name}"] = (lambda p=parameter, m=method, s=source: in_place(
            {p: s.copy()}, s, lambda t: getattr(t, m)()))
    cases["aclnnInplaceOne"] = lambda: EmulatedCase(  # its selfRef is its out=
        {}, E((n,)), lambda: torch.ones(n, out=torch.empty(n)))
    cases["aclnnInplaceFillScalar"] = lambda: in_place(
        {"selfRef": x.copy(), "value": 2.5}, x, lambda t: t.fill_(2.5))
    cases["aclnnInplaceMaskedFillScalar"] = lambda: in_place(
        {"selfRef": x.copy(), "mask": y > 0, "value": 2.5}, x,
        lambda t: t.masked_fill_(T(y > 0), 2.5))
    cases["aclnnInplaceCopy"] = lambda: in_place({"selfRef": x.copy(), "src": y}, x,
                                                 lambda t: t.copy_(T(y)))
    cases["aclnnInplaceLerps"] = lambda: in_place({"selfRef": x.copy(), "end": y, "weight": 0.1},
                                                  x, lambda t: t.lerp_(T(y), 0.1))


def _cases_cast_select_clamp(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Cast, where, lerp, addcmul and addcdiv, and the clamps."""
    torch = inputs.torch
    T, E = torch.from_numpy, _out_spec
    n = EMULATED_N
    x, y, pos, prob = inputs.x, inputs.y, inputs.pos, inputs.prob
    cases["aclnnCast"] = lambda: EmulatedCase({"self": x, "dtype": np.dtype(np.float16)},
                                              E((n,), np.float16),
                                              lambda: T(x).to(torch.float16))
    cases["aclnnSWhere"] = lambda: EmulatedCase({"condition": x > 0, "self": x, "other": y},
                                                E((n,)), lambda: torch.where(T(x > 0), T(x), T(y)))
    cases["aclnnLerp"] = lambda: EmulatedCase({"self": x, "end": y, "weight": prob}, E((n,)),
                                              lambda: torch.lerp(T(x), T(y), T(prob)))
    for name, function in (("Addcmul", torch.addcmul), ("Addcdiv", torch.addcdiv)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": x, "tensor1": y, "tensor2": pos, "value": 0.5}, E((n,)),
            lambda: f(T(x), T(y), T(pos), value=0.5)))
    cases["aclnnLerps"] = lambda: EmulatedCase({"self": x, "end": y, "weight": 0.25}, E((n,)),
                                               lambda: torch.lerp(T(x), T(y), 0.25))
    cases["aclnnClamp"] = lambda: EmulatedCase(
        {"self": x, "clipValueMin": -1.0, "clipValueMax": 1.0}, E((n,)),
        lambda: torch.clamp(T(x), -1.0, 1.0))
    cases["aclnnClampMin"] = lambda: EmulatedCase({"self": x, "clipValueMin": -1.0}, E((n,)),
                                                  lambda: torch.clamp_min(T(x), -1.0))
    cases["aclnnClampMax"] = lambda: EmulatedCase({"self": x, "clipValueMax": 1.0}, E((n,)),
                                                  lambda: torch.clamp_max(T(x), 1.0))


def _cases_activations(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Activations' backward, the other activations and GLU."""
    torch = inputs.torch
    F, aten, T, E = torch.nn.functional, torch.ops.aten, torch.from_numpy, _out_spec
    n, square = EMULATED_N, EMULATED_SQUARE
    x, g, unit, prob = inputs.x, inputs.g, inputs.unit, inputs.prob
    X, G = inputs.X, inputs.G
    for name, saved, function, out in (
            ("SigmoidBackward", prob, aten.sigmoid_backward, "gradInput"),
            ("TanhBackward", unit, aten.tanh_backward, "gradInput")):
        cases[f"aclnn{name}"] = (lambda s=saved, f=function, o=out: EmulatedCase(
            {"gradOutput": g, "output": s}, {o: E((n,))}, lambda: f(T(g), T(s))))
    for name, function, out in (
            ("SiluBackward", aten.silu_backward, "gradInput"),
            ("GeluBackward", lambda a, b: aten.gelu_backward(a, b, approximate="tanh"),
             "gradInput"),
            ("HardswishBackward", aten.hardswish_backward, "out"),
            ("HardsigmoidBackward", aten.hardsigmoid_backward, "out"),
            ("MishBackward", aten.mish_backward, "gradInput")):
        cases[f"aclnn{name}"] = (lambda f=function, o=out: EmulatedCase(
            {"gradOutput": g, "self": x}, {o: E((n,))}, lambda: f(T(g), T(x))))
    cases["aclnnThresholdBackward"] = lambda: EmulatedCase(
        {"gradOutput": g, "self": x, "threshold": 0.25}, E((n,)),
        lambda: aten.threshold_backward(T(g), T(x), 0.25))
    cases["aclnnHardtanh"] = lambda: EmulatedCase(
        {"self": x, "clipValueMin": -1.0, "clipValueMax": 1.0}, E((n,)),
        lambda: F.hardtanh(T(x), -1.0, 1.0))
    cases["aclnnHardtanhBackward"] = lambda: EmulatedCase(
        {"gradOutput": g, "self": x, "min": -1.0, "max": 1.0}, E((n,)),
        lambda: aten.hardtanh_backward(T(g), T(x), -1.0, 1.0))
    cases["aclnnLeakyRelu"] = lambda: EmulatedCase({"self": x, "negativeSlope": 0.1}, E((n,)),
                                                   lambda: F.leaky_relu(T(x), 0.1))
    cases["aclnnLeakyReluBackward"] = lambda: EmulatedCase(
        {"gradOutput": g, "self": x, "negativeSlope": 0.1, "selfIsResult": False}, E((n,)),
        lambda: aten.leaky_relu_backward(T(g), T(x), 0.1, False))
    cases["aclnnElu"] = lambda: EmulatedCase(
        {"self": x, "alpha": 1.0, "scale": 1.0, "inputScale": 1.0}, E((n,)),
        lambda: F.elu(T(x)))
    cases["aclnnSoftplus"] = lambda: EmulatedCase(
        {"self": x, "beta": 1.0, "threshold": 20.0}, E((n,)), lambda: F.softplus(T(x)))
    cases["aclnnSoftplusBackward"] = lambda: EmulatedCase(
        {"gradOutput": g, "self": x, "beta": 1.0, "threshold": 20.0}, {"gradInput": E((n,))},
        lambda: aten.softplus_backward(T(g), T(x), 1.0, 20.0))
    cases["aclnnGlu"] = lambda: EmulatedCase({"self": X, "dim": -1}, E((1024, 512)),
                                             lambda: F.glu(T(X), -1))
    cases["aclnnGluBackward"] = lambda: EmulatedCase(
        {"gradOut": G[:, :512].copy(), "self": X, "dim": -1}, E(square),
        lambda: aten.glu_backward(T(G[:, :512].copy()), T(X), -1))


def _cases_reductions(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Reductions over the last dimension of 1024 x 1024 (all of it where there is no dim),
    cumsum and dot."""
    torch = inputs.torch
    T, E = torch.from_numpy, _out_spec
    n, f32 = EMULATED_N, np.float32
    x, y = inputs.x, inputs.y
    X = inputs.X
    for name, function in (("ReduceSum", lambda t: torch.sum(t, -1)),
                           ("Mean", lambda t: torch.mean(t, -1))):
        cases[f"aclnn{name}"] = (lambda f=function, p=("dims" if name == "ReduceSum" else "dim"),
                                 k=("keepDims" if name == "ReduceSum" else "keepDim"):
                                 EmulatedCase({"self": X, p: [-1], k: False, "dtype": f32},
                                              E((1024,)), lambda: f(T(X))))
    for name, function in (("Amax", torch.amax), ("Amin", torch.amin)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": X, "dim": [-1], "keepDim": False}, E((1024,)), lambda: f(T(X), -1)))
    for name, function in (("ArgMax", torch.argmax), ("ArgMin", torch.argmin)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": X, "dim": -1, "keepdim": False}, E((1024,), np.int64),
            lambda: f(T(X), -1)))
    for name, function in (("Max", torch.max), ("Min", torch.min)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": x}, E(()), lambda: f(T(x))))
    near_one = 1 + x / 1e6
    cases["aclnnProd"] = lambda: EmulatedCase({"self": near_one, "dtype": f32}, E(()),
                                              lambda: torch.prod(T(near_one)))
    cases["aclnnVar"] = lambda: EmulatedCase(
        {"self": X, "dim": [-1], "unbiased": True, "keepdim": False}, E((1024,)),
        lambda: torch.var(T(X), -1))
    cases["aclnnStd"] = lambda: EmulatedCase(
        {"self": X, "dim": [-1], "correction": 1, "keepdim": False}, E((1024,)),
        lambda: torch.std(T(X), -1))
    cases["aclnnNorm"] = lambda: EmulatedCase(
        {"self": X, "pScalar": 2.0, "dim": [-1], "keepdim": False}, E((1024,)),
        lambda: torch.norm(T(X), 2, -1))
    cases["aclnnLinalgVectorNorm"] = lambda: EmulatedCase(
        {"self": X, "ord": 1.0, "dims": [-1], "keepDims": False, "dtype": f32}, E((1024,)),
        lambda: torch.linalg.vector_norm(T(X), 1, -1))
    cases["aclnnCumsum"] = lambda: EmulatedCase({"self": x, "dim": 0, "dtype": f32}, E((n,)),
                                                lambda: torch.cumsum(T(x), 0))
    cases["aclnnDot"] = lambda: EmulatedCase({"self": x, "tensor": y}, E(()),
                                             lambda: torch.dot(T(x), T(y)))


def _cases_softmax(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Softmax and log-softmax, their backward and softmax cross-entropy, over rows of 1024."""
    torch = inputs.torch
    aten, T, E = torch.ops.aten, torch.from_numpy, _out_spec
    square = EMULATED_SQUARE
    X, G = inputs.X, inputs.G
    for name, function in (("Softmax", torch.softmax), ("LogSoftmax", torch.log_softmax)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": X, "dim": -1}, E(square), lambda: f(T(X), -1)))
    P = torch.softmax(T(X), -1).numpy()
    cases["aclnnSoftmaxBackward"] = lambda: EmulatedCase(
        {"gradOutput": G, "output": P, "dim": -1}, E(square),
        lambda: aten._softmax_backward_data(T(G), T(P), -1, torch.float32))
    L = np.log(P)
    cases["aclnnLogSoftmaxBackward"] = lambda: EmulatedCase(
        {"gradOutput": G, "output": L, "dim": -1}, E(square),
        lambda: aten._log_softmax_backward_data(T(G), T(L), -1, torch.float32))
    cases["aclnnSoftmaxCrossEntropyWithLogits"] = lambda: EmulatedCase(
        {"features": X, "labels": P}, {"loss": E((1024,)), "backprop": E(square)},
        lambda: (-(T(P) * torch.log_softmax(T(X), 1)).sum(1), torch.softmax(T(X), 1) - T(P)))


def _cases_norms(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Layer, RMS, group, adaptive layer and batch norms, and modulate (the batch norms' cases
    take the group norms' weights)."""
    torch = inputs.torch
    F, aten, T, E = torch.nn.functional, torch.ops.aten, torch.from_numpy, _out_spec
    u, in_place = inputs.uniform, inputs.in_place
    f32, square = np.float32, EMULATED_SQUARE
    x, y, g = inputs.x, inputs.y, inputs.g
    X, G = inputs.X, inputs.G
    W, B = u(0.5, 1.5, (1024,)), u(-1, 1, (1024,))
    cases["aclnnLayerNorm"] = lambda: EmulatedCase(
        {"input": X, "normalizedShape": [1024], "weightOptional": W, "biasOptional": B,
         "eps": 1e-5}, {"out": E(square), "meanOutOptional": E((1024, 1)),
                        "rstdOutOptional": E((1024, 1))},
        lambda: torch.native_layer_norm(T(X), [1024], T(W), T(B), 1e-5))
    cases["aclnnFastLayerNorm"] = cases["aclnnLayerNorm"]
    cases["aclnnLayerNormWithImplMode"] = lambda: EmulatedCase(
        {"input": X, "normalizedShape": [1024], "weightOptional": W, "biasOptional": B,
         "eps": 1e-5, "implMode": 0}, {"out": E(square), "meanOutOptional": E((1024, 1)),
                                       "rstdOutOptional": E((1024, 1))},
        lambda: torch.native_layer_norm(T(X), [1024], T(W), T(B), 1e-5))
    mean = X.mean(1, keepdims=True)
    rstd = (1 / np.sqrt(X.var(1, keepdims=True) + 1e-5)).astype(f32)
    cases["aclnnLayerNormBackward"] = lambda: EmulatedCase(
        {"gradOut": G, "input": X, "normalizedShape": [1024], "mean": mean, "rstd": rstd,
         "weightOptional": W, "biasOptional": B, "outputMask": [True, True, True]},
        {"gradInputOut": E(square), "gradWeightOut": E((1024,)), "gradBiasOut": E((1024,))},
        lambda: aten.native_layer_norm_backward(T(G), T(X), [1024], T(mean), T(rstd), T(W),
                                                T(B), [True, True, True]))
    def rms(v: Any, offset: float) -> Any:
        rstd = torch.rsqrt(v.square().mean(1, keepdim=True) + 1e-6)
        return v * rstd * (T(W) + offset), rstd

    for name, offset in (("RmsNorm", 0.0), ("GemmaRmsNorm", 1.0)):
        cases[f"aclnn{name}"] = (lambda o=offset: EmulatedCase(
            {"x": X, "gamma": W, "epsilon": 1e-6},
            {"yOut": E(square), "rstdOut": E((1024, 1))}, lambda: rms(T(X), o)))
    H, HW = X.astype(np.float16), W.astype(np.float16)
    cases["aclnnRmsNormQuant"] = lambda: EmulatedCase(
        {"x": H, "gamma": HW, "beta": HW, "scale": np.array([0.05], np.float16),
         "offset": np.array([1], np.int8), "epsilon": 1e-6}, E(square, np.int8),
        lambda: torch.clamp(torch.round((T(H).float() * torch.rsqrt(
            T(H).float().square().mean(1, keepdim=True) + 1e-6) * T(HW).float()
            + T(HW).float()) / 0.05 + 1).half(), -128, 127).to(torch.int8))
    cases["aclnnAddRmsNormQuant"] = lambda: EmulatedCase(
        {"x1": H, "x2": H, "gamma": HW, "scales1": np.full(1024, 0.05, np.float32),
         "scales2Optional": None, "zeroPoints1Optional": None, "zeroPoints2Optional": None,
         "axis": -1, "epsilon": 1e-6, "divMode": True},
        {"y1Out": E(square, np.int8), "y2Out": E(square, np.int8), "xOut": E(square, np.float16)},
        lambda: (torch.clamp(torch.round((2 * T(H)).float() * torch.rsqrt(
            (2 * T(H)).float().square().mean(1, keepdim=True) + 1e-6) * T(HW).float() / 0.05),
            -128, 127).to(torch.int8), None, 2 * T(H)))
    X2 = y.reshape(square)
    cases["aclnnAddRmsNorm"] = lambda: EmulatedCase(
        {"x1": X, "x2": X2, "gamma": W, "epsilon": 1e-6},
        {"yOut": E(square), "rstdOut": E((1024, 1)), "xOut": E(square)},
        lambda: (*rms(T(X) + T(X2), 0.0), T(X) + T(X2)))
    cases["aclnnInplaceAddRmsNorm"] = lambda: EmulatedCase(
        {"x1Ref": X.copy(), "x2Ref": X2.copy(), "gamma": W, "epsilon": 1e-6},
        {"rstdOut": E((1024, 1))}, lambda: rms(T(X) + T(X2), 0.0)[1])
    cases["aclnnAddLayerNorm"] = lambda: EmulatedCase(
        {"x1": X, "x2": X2, "gamma": W, "beta": W, "biasOptional": None, "epsilon": 1e-5,
         "additionalOutput": True},
        {"yOut": E(square), "meanOut": E((1024, 1)), "rstdOut": E((1024, 1)),
         "xOut": E(square)},
        lambda: (F.layer_norm(T(X) + T(X2), (1024,), T(W), T(W), 1e-5), T(X) + T(X2)))

    def rms_grad() -> Any:
        x_ = T(X).requires_grad_()
        y_ = x_ * torch.rsqrt(x_.square().mean(1, keepdim=True) + 1e-6) * T(W)
        y_.backward(T(X2))
        return x_.grad

    rstd_x = (1 / np.sqrt(np.mean(np.square(X), axis=1) + 1e-6)).astype(f32)
    cases["aclnnRmsNormGrad"] = lambda: EmulatedCase(
        {"dy": X2, "x": X, "rstd": rstd_x, "gamma": W},
        {"dxOut": E(square), "dgammaOut": E((1024,))}, rms_grad)
    sum_x = X + X2
    mean_x = sum_x.mean(axis=1, keepdims=True).astype(f32)
    rstd_sum = (1 / np.sqrt(sum_x.var(axis=1, keepdims=True) + 1e-5)).astype(f32)
    cases["aclnnAddLayerNormGrad"] = lambda: EmulatedCase(
        {"dy": X2, "x1": X, "x2": X2, "rstd": rstd_sum, "mean": mean_x, "gamma": W,
         "dsumOptional": None},
        {"dxOut": E(square), "dgammaOut": E((1024,)), "dbetaOut": E((1024,))},
        lambda: aten.native_layer_norm_backward(T(X2), T(X) + T(X2), [1024], T(mean_x),
                                                T(rstd_sum), T(W), T(W), [True, True, True]))
    half_x, half_x2, half_w = X.astype(np.float16), X2.astype(np.float16), W.astype(np.float16)
    cases["aclnnAddRmsNormCast"] = lambda: EmulatedCase(
        {"x1": half_x, "x2": half_x2, "gamma": half_w, "epsilon": 1e-6},
        {"y1Out": E(square), "y2Out": E(square, np.float16), "rstdOut": E((1024, 1)),
         "xOut": E(square, np.float16)},
        lambda: rms(T(half_x).float() + T(half_x2).float(), 0.0))
    deep_x = (0.5 * X + X2).astype(f32)
    deep_mean = deep_x.mean(axis=1, keepdims=True).astype(f32)
    deep_rstd = (1 / np.sqrt(deep_x.var(axis=1, keepdims=True) + 1e-5)).astype(f32)
    cases["aclnnDeepNorm"] = lambda: EmulatedCase(
        {"x": X, "gx": X2, "beta": W, "gamma": W, "alpha": 0.5, "epsilon": 1e-5},
        {"meanOut": E((1024, 1)), "rstdOut": E((1024, 1)), "yOut": E(square)},
        lambda: torch.native_layer_norm(0.5 * T(X) + T(X2), [1024], T(W), T(W), 1e-5))
    cases["aclnnDeepNormGrad"] = lambda: EmulatedCase(
        {"dy": X2, "x": X, "gx": X2, "gamma": W, "mean": deep_mean, "rstd": deep_rstd,
         "alpha": 0.5},
        {"dxOut": E(square), "dgxOut": E(square), "dbetaOut": E((1024,)),
         "dgammaOut": E((1024,))},
        lambda: aten.native_layer_norm_backward(
            T(X2), 0.5 * T(X) + T(X2), [1024], T(deep_mean),
            T(deep_rstd), T(W), T(W), [True, True, True])[0] * 0.5)
    gn_x = x.reshape(16, 64, 32, 32)
    gn_g, gn_b = u(0.5, 1.5, (64,)), u(-1, 1, (64,))
    gn_stats = {"meanOut": E((16, 8)), "rstdOut": E((16, 8))}
    cases["aclnnGroupNormSilu"] = lambda: EmulatedCase(
        {"self": gn_x, "gamma": gn_g, "beta": gn_b, "group": 8, "eps": 1e-5},
        {"out": E(gn_x.shape), **gn_stats},
        lambda: F.silu(F.group_norm(T(gn_x), 8, T(gn_g), T(gn_b), 1e-5)))
    cases["aclnnGroupNormSiluV2"] = lambda: EmulatedCase(
        {"self": gn_x, "gamma": gn_g, "beta": gn_b, "group": 8, "eps": 1e-5,
         "activateSilu": True}, {"out": E(gn_x.shape), **gn_stats},
        lambda: F.silu(F.group_norm(T(gn_x), 8, T(gn_g), T(gn_b), 1e-5)))
    cases["aclnnGroupNormSwish"] = lambda: EmulatedCase(
        {"x": gn_x, "gamma": gn_g, "beta": gn_b, "numGroups": 8, "dataFormatOptional": "NCHW",
         "eps": 1e-5, "activateSwish": True, "swishScale": 1.0},
        {"yOut": E(gn_x.shape), **gn_stats},
        lambda: F.silu(F.group_norm(T(gn_x), 8, T(gn_g), T(gn_b), 1e-5)))
    gn_grouped = gn_x.reshape(16, 8, -1)
    gn_mean = gn_grouped.mean(-1).astype(f32)
    gn_rstd = (1 / np.sqrt(gn_grouped.var(-1) + 1e-5)).astype(f32)
    gn_dy = g.reshape(gn_x.shape)

    def swish_grad() -> Any:
        xt = T(gn_x).requires_grad_()
        y_ = F.group_norm(xt, 8, T(gn_g), T(gn_b), 1e-5)
        F.silu(y_).backward(T(gn_dy))
        return xt.grad

    cases["aclnnGroupNormSwishGrad"] = lambda: EmulatedCase(
        {"dy": gn_dy, "mean": gn_mean, "rstd": gn_rstd, "x": gn_x, "gamma": gn_g,
         "beta": gn_b, "numGroups": 8, "dataFormatOptional": "NCHW", "swishScale": 1.0,
         "dgammaIsRequire": True, "dbetaIsRequire": True},
        {"dxOut": E(gn_x.shape), "dgammaOut": E((64,)), "dbetaOut": E((64,))}, swish_grad)
    cases["aclnnRenorm"] = lambda: EmulatedCase(
        {"self": X, "p": np.float32(2.0), "dim": 0, "maxNorm": np.float32(10.0)}, E(square),
        lambda: torch.renorm(T(X), 2.0, 0, 10.0))
    cases["aclnnInplaceRenorm"] = lambda: in_place(
        {"selfRef": X.copy(), "p": np.float32(2.0), "dim": 0, "maxNorm": np.float32(10.0)}, X,
        lambda t: t.renorm_(2.0, 0, 10.0))
    rows_index = np.arange(0, 1024, 2, dtype=np.int64)
    cases["aclnnEmbeddingRenorm"] = lambda: in_place(
        {"selfRef": X.copy(), "indices": rows_index, "maxNorm": 10.0, "normType": 2.0}, X,
        lambda t: torch.embedding_renorm_(t, T(rows_index), 10.0, 2.0))
    ada_x = X.reshape(4, 256, 1024)
    ada_scale, ada_shift = u(-0.5, 0.5, (4, 1, 1024)), u(-0.5, 0.5, (4, 1, 1024))

    def ada_torch() -> Any:
        return F.layer_norm(T(ada_x), (1024,), T(W), T(B), 1e-5) * (1 + T(ada_scale)) \
            + T(ada_shift)

    cases["aclnnAdaLayerNorm"] = lambda: EmulatedCase(
        {"x": ada_x, "scale": ada_scale, "shift": ada_shift, "weightOptional": W,
         "biasOptional": B, "epsilon": 1e-5}, E(ada_x.shape), ada_torch)
    cases["aclnnAdaLayerNormV2"] = lambda: EmulatedCase(
        {"x": ada_x, "scale": ada_scale, "shift": ada_shift, "weightOptional": W,
         "biasOptional": B, "epsilon": 1e-5},
        {"out": E(ada_x.shape), "meanOutOptional": E((4, 256, 1)),
         "rstdOutOptional": E((4, 256, 1))}, ada_torch)
    ada_mean = ada_x.mean(-1, keepdims=True).astype(f32)
    ada_rstd = (1 / np.sqrt(ada_x.var(-1, keepdims=True) + 1e-5)).astype(f32)
    ada_dy = X2.reshape(ada_x.shape)

    def ada_backward() -> Any:
        xt = T(ada_x).requires_grad_()
        y_ = F.layer_norm(xt, (1024,), T(W), T(B), 1e-5) * (1 + T(ada_scale)) + T(ada_shift)
        y_.backward(T(ada_dy))
        return xt.grad

    cases["aclnnAdaLayerNormBackward"] = lambda: EmulatedCase(
        {"gradOut": ada_dy, "input": ada_x, "normalizedShape": [1024], "rstd": ada_rstd,
         "mean": ada_mean, "scale": ada_scale, "shift": ada_shift, "weightOptional": W,
         "biasOptional": B},
        {"gradInputOut": E(ada_x.shape), "gradScaleOut": E(ada_scale.shape),
         "gradShiftOut": E(ada_shift.shape), "gradWeightOut": E((1024,)),
         "gradBiasOut": E((1024,))}, ada_backward)
    bn_x = x.reshape(16, 64, 1024)
    bn_mean, bn_invstd = u(-0.1, 0.1, (64,)), u(0.5, 1.5, (64,))
    cases["aclnnBatchNormStats"] = lambda: EmulatedCase(
        {"input": bn_x, "eps": 1e-5}, {"mean": E((64,)), "invstd": E((64,))},
        lambda: torch.var_mean(T(bn_x), (0, 2), correction=0))
    cases["aclnnBatchNormElemt"] = lambda: EmulatedCase(
        {"input": bn_x, "weight": gn_g, "bias": gn_b, "mean": bn_mean, "invstd": bn_invstd,
         "eps": 1e-5}, E(bn_x.shape),
        lambda: (T(bn_x) - T(bn_mean).reshape(1, 64, 1)) * T(bn_invstd).reshape(1, 64, 1)
        * T(gn_g).reshape(1, 64, 1) + T(gn_b).reshape(1, 64, 1))
    gather_mean, gather_invstd = u(-1, 1, (64, 16384)), u(0.5, 2, (64, 16384))
    gather_counts = np.full(64, 100.0, f32)

    def gather_torch() -> Any:
        n = T(gather_counts).reshape(-1, 1)
        means = T(gather_mean)
        average = (means * n).sum(0) / n.sum()
        pooled = (n * (1 / T(gather_invstd).square() - 1e-5 + (means - average).square()))
        return average, torch.rsqrt(pooled.sum(0) / n.sum() + 1e-5)

    cases["aclnnBatchNormGatherStatsWithCounts"] = lambda: EmulatedCase(
        {"input": x.reshape(64, 16384), "mean": gather_mean, "invstd": gather_invstd,
         "runningMean": None, "runningVar": None, "momentum": 0.1, "eps": 1e-5,
         "counts": gather_counts}, {"meanAll": E((16384,)), "invstdAll": E((16384,))},
        gather_torch)
    sync_sum, sync_squares = u(-1, 1, (64, 16384)), u(10, 20, (64, 16384))
    sync_counts = np.full(64, 100, np.int32)

    def sync_torch() -> Any:
        mean = T(sync_sum).sum(0) / 6400
        return mean, torch.rsqrt(T(sync_squares).sum(0) / 6400 - mean.square() + 1e-5)

    cases["aclnnSyncBatchNormGatherStats"] = lambda: EmulatedCase(
        {"totalSum": sync_sum, "totalSquareSum": sync_squares, "sampleCount": sync_counts,
         "mean": np.zeros(16384, f32), "variance": np.ones(16384, f32), "momentum": 0.1,
         "eps": 1e-5}, {"batchMean": E((16384,)), "batchInvstd": E((16384,))}, sync_torch)
    bn_x4 = x.reshape(16, 64, 32, 32)
    cases["aclnnBatchNormReduce"] = lambda: EmulatedCase(
        {"x": bn_x4}, {"sum": E((64,)), "squareSum": E((64,))},
        lambda: (T(bn_x4).sum((0, 2, 3)), T(bn_x4).square().sum((0, 2, 3))))
    bn_g = g.reshape(16, 64, 1024)
    bn_view = (1, 64, 1)

    def reduce_backward_torch() -> Any:
        grads = T(bn_g)
        sum_dy = grads.sum((0, 2))
        sum_dy_xmu = (grads * (T(bn_x) - T(bn_mean).reshape(bn_view))).sum((0, 2))
        return sum_dy, sum_dy_xmu, sum_dy_xmu * T(bn_invstd), sum_dy

    cases["aclnnBatchNormReduceBackward"] = lambda: EmulatedCase(
        {"gradOut": bn_g, "input": bn_x, "mean": bn_mean, "invstd": bn_invstd, "weight": gn_g,
         "inputG": True, "weightG": True, "biasG": True},
        {"sumDy": E((64,)), "sumDyXmu": E((64,)), "gradWeight": E((64,)),
         "gradBias": E((64,))}, reduce_backward_torch)
    bn_sum_dy, bn_sum_dy_xmu = u(-10, 10, (64,)), u(-10, 10, (64,))
    bn_counter = np.full(8, 2048, np.int32)

    def elemt_backward_torch() -> Any:
        invstd = T(bn_invstd).reshape(bn_view)
        centred = (T(bn_x) - T(bn_mean).reshape(bn_view)) * invstd.square() \
            * T(bn_sum_dy_xmu).reshape(bn_view) / 16384
        return (T(bn_g) - T(bn_sum_dy).reshape(bn_view) / 16384 - centred) * invstd \
            * T(gn_g).reshape(bn_view)

    cases["aclnnBatchNormElemtBackward"] = lambda: EmulatedCase(
        {"gradOut": bn_g, "input": bn_x, "mean": bn_mean, "invstd": bn_invstd, "weight": gn_g,
         "sumDy": bn_sum_dy, "sumDyXmu": bn_sum_dy_xmu, "counter": bn_counter},
        E(bn_x.shape), elemt_backward_torch)
    mod_x = x.reshape(16, 256, 256)
    mod_scale, mod_shift = u(-1, 1, (16, 256)), u(-1, 1, (16, 256))
    cases["aclnnModulate"] = lambda: EmulatedCase(
        {"self": mod_x, "scaleOptional": mod_scale, "shiftOptional": mod_shift},
        E(mod_x.shape), lambda: T(mod_x) * (1 + T(mod_scale).reshape(16, 1, 256))
        + T(mod_shift).reshape(16, 1, 256))
    mod_g = g.reshape(16, 256, 256)
    cases["aclnnModulateBackward"] = lambda: EmulatedCase(
        {"grad_output": mod_g, "input": mod_x, "scale": mod_scale, "shift": mod_shift},
        {"grad_input": E(mod_x.shape), "grad_scale": E((16, 256)), "grad_shift": E((16, 256))},
        lambda: (T(mod_g) * T(mod_scale).reshape(16, 1, 256), (T(mod_g) * T(mod_x)).sum(1),
                 T(mod_g).sum(1)))


def _cases_optimizers(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Optimizer steps, small enough that the state stays in range call after call, and
    AMP's scale update."""
    torch = inputs.torch
    T, E = torch.from_numpy, _out_spec
    f32 = np.float32
    x, y, g, pos = inputs.x, inputs.y, inputs.g, inputs.pos
    from torch.optim import adamw as torch_adamw
    from torch.optim import sgd as torch_sgd
    adam = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "weightDecay": 0.01, "eps": 1e-8,
            "amsgrad": False, "maximize": False}

    def torch_adam() -> Callable[[], Any]:
        state = [T(a.copy()) for a in (x, y, pos)]
        step = torch.tensor(1.0)
        return lambda: torch_adamw.adamw(
            [state[0]], [T(g)], [state[1]], [state[2]], [], [step], foreach=False,
            amsgrad=False, beta1=0.9, beta2=0.999, lr=1e-3, weight_decay=0.01, eps=1e-8,
            maximize=False)

    cases["aclnnApplyAdamWV2"] = lambda: EmulatedCase(
        {"varRef": x.copy(), "mRef": y.copy(), "vRef": pos.copy(),
         "maxGradNormOptionalRef": None, "grad": g, "step": np.array([1], np.int64), **adam},
        None, torch_adam())
    cases["aclnnFusedAdamw"] = lambda: EmulatedCase(
        {"paramsRef": [x.copy()], "grads": [g], "expAvgsRef": [y.copy()],
         "expAvgSqsRef": [pos.copy()], "maxExpAvgSqsRef": None,
         "stateSteps": [np.array([1.0], f32)], "gradScaleOptional": None,
         "foundInfOptional": None, **adam}, None, torch_adam())

    def torch_momentum() -> Callable[[], Any]:
        state = [T(x.copy())], [T(y.copy())]
        return lambda: torch_sgd.sgd(state[0], [T(g)], state[1], foreach=False,
                                     weight_decay=0.01, momentum=0.9, lr=1e-3, dampening=0.0,
                                     nesterov=False, maximize=False)

    cases["aclnnFusedSgd"] = lambda: EmulatedCase(
        {"paramsRef": [x.copy()], "gradsRef": [g.copy()],
         "momentumBufferListOptionalRef": [y.copy()], "gradScaleOptional": None,
         "weightDecay": 0.01, "momentum": 0.9, "lr": 1e-3, "dampening": 0.0,
         "nesterov": False, "maximize": False, "isFirstStep": False}, None, torch_momentum())

    def torch_ema_adam() -> Callable[[], Any]:
        var, m, v, ema, grad = (T(a.copy()) for a in (x, y, pos, x, g))

        def step() -> None:
            grad_ = grad + 0.01 * var
            m.mul_(0.9).add_(grad_, alpha=0.1)
            v.mul_(0.999).addcmul_(grad_, grad_, value=0.001)
            var.sub_(1e-3 * (m / (1 - 0.9 ** 3)) / ((v / (1 - 0.999 ** 3)).sqrt() + 1e-8))
            ema.mul_(0.99).add_(var, alpha=0.01)
        return step

    cases["aclnnApplyFusedEmaAdam"] = lambda: EmulatedCase(
        {"grad": g, "varRef": x.copy(), "mRef": y.copy(), "vRef": pos.copy(),
         "sRef": x.copy(), "step": np.array([3], np.int64), "lr": 1e-3, "emaDecay": 0.99,
         "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "mode": 0, "biasCorrection": True,
         "weightDecay": 0.01}, None, torch_ema_adam())

    def torch_amp() -> Callable[[], Any]:
        scale, tracker = torch.tensor([1024.0]), torch.tensor([0], dtype=torch.int32)
        return lambda: torch._amp_update_scale_(scale, tracker, torch.tensor([0.0]), 2.0, 0.5,
                                                2000)

    cases["aclnnAmpUpdateScale"] = lambda: EmulatedCase(
        {"currentScale": np.array([1024.0], f32), "growthTracker": np.array([0], np.int32),
         "foundInf": np.array([0.0], f32), "growthFactor": 2.0, "backoffFactor": 0.5,
         "growthInterval": 2000},
        {"updatedScale": E((1,)), "updatedGrowthTracker": E((1,), np.int32)}, torch_amp())


def _cases_image_norms(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Group and batch norms over ``image``, forward and backward."""
    torch = inputs.torch
    F, aten, T, E = torch.nn.functional, torch.ops.aten, torch.from_numpy, _out_spec
    u = inputs.uniform
    f32 = np.float32
    g = inputs.g
    image = inputs.image
    grad_image = g.reshape(16, 64, 32, 32)
    gamma, beta = u(0.5, 1.5, (64,)), u(-1, 1, (64,))
    group_mean = image.reshape(16, 8, -1).mean(2)
    group_rstd = (1 / np.sqrt(image.reshape(16, 8, -1).var(2) + 1e-5)).astype(f32)
    cases["aclnnGroupNorm"] = lambda: EmulatedCase(
        {"self": image, "gamma": gamma, "beta": beta, "N": 16, "C": 64, "HxW": 1024,
         "group": 8, "eps": 1e-5}, {"out": E(image.shape), "meanOut": E((16, 8)),
                                    "rstdOut": E((16, 8))},
        lambda: torch.native_group_norm(T(image), T(gamma), T(beta), 16, 64, 1024, 8, 1e-5))
    cases["aclnnGroupNormBackward"] = lambda: EmulatedCase(
        {"gradOut": grad_image, "input": image, "mean": group_mean, "rstd": group_rstd,
         "gamma": gamma, "N": 16, "C": 64, "HxW": 1024, "group": 8,
         "outputMask": [True, True, True]},
        {"gradInput": E(image.shape), "gradGammaOut": E((64,)), "gradBetaOut": E((64,))},
        lambda: aten.native_group_norm_backward(T(grad_image), T(image), T(group_mean),
                                                T(group_rstd), T(gamma), 16, 64, 1024, 8,
                                                [True, True, True]))
    running_mean, running_var = u(-1, 1, (64,)), u(0.5, 2, (64,))
    cases["aclnnBatchNorm"] = lambda: EmulatedCase(
        {"input": image, "weight": gamma, "bias": beta, "runningMean": running_mean.copy(),
         "runningVar": running_var.copy(), "training": False, "momentum": 0.1, "eps": 1e-5},
        {"output": E(image.shape), "saveMean": E((64,)), "saveInvstd": E((64,))},
        lambda: F.batch_norm(T(image), T(running_mean), T(running_var), T(gamma), T(beta),
                             False, 0.1, 1e-5))
    batch_mean = image.mean((0, 2, 3))
    batch_invstd = (1 / np.sqrt(image.var((0, 2, 3)) + 1e-5)).astype(f32)
    cases["aclnnBatchNormBackward"] = lambda: EmulatedCase(
        {"gradOut": grad_image, "input": image, "weight": gamma, "runningMean": running_mean,
         "runningVar": running_var, "saveMean": batch_mean, "saveInvstd": batch_invstd,
         "training": True, "eps": 1e-5, "outputMask": [True, True, True]},
        {"gradInput": E(image.shape), "gradWeight": E((64,)), "gradBias": E((64,))},
        lambda: aten.native_batch_norm_backward(T(grad_image), T(image), T(gamma), None, None,
                                                T(batch_mean), T(batch_invstd), True, 1e-5,
                                                [True, True, True]))
    cases["aclnnFastBatchNormBackward"] = lambda: EmulatedCase(
        {"gradOut": grad_image, "input": image, "weight": gamma, "runningMean": running_mean,
         "runningVar": running_var, "saveMean": batch_mean, "saveInvstd": batch_invstd,
         "training": True, "eps": 1e-5, "outputMask": [True, True, True], "version": 1},
        {"gradInput": E(image.shape), "gradWeight": E((64,)), "gradBias": E((64,))},
        lambda: aten.native_batch_norm_backward(T(grad_image), T(image), T(gamma), None, None,
                                                T(batch_mean), T(batch_invstd), True, 1e-5,
                                                [True, True, True]))


def _cases_losses_conv_pool2d(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Binary cross-entropy and NLL loss, convolution and 2-d pooling over ``image``, forward
    and backward."""
    torch = inputs.torch
    F, aten, T, E = torch.nn.functional, torch.ops.aten, torch.from_numpy, _out_spec
    rng, u = inputs.rng, inputs.uniform
    n, f32 = EMULATED_N, np.float32
    x, g, prob = inputs.x, inputs.g, inputs.prob
    image = inputs.image
    target = u(0, 1)
    cases["aclnnBinaryCrossEntropy"] = lambda: EmulatedCase(
        {"self": prob, "target": target, "weight": np.ones(n, f32), "reduction": 1}, E(()),
        lambda: F.binary_cross_entropy(T(prob), T(target)))
    cases["aclnnBinaryCrossEntropyBackward"] = lambda: EmulatedCase(
        {"gradOutput": g, "self": prob, "target": target, "weightOptional": None,
         "reduction": 0}, E((n,)),
        lambda: aten.binary_cross_entropy_backward(T(g), T(prob), T(target), None, 0))
    cases["aclnnBinaryCrossEntropyWithLogits"] = lambda: EmulatedCase(
        {"self": x, "target": target, "weightOptional": None, "posWeightOptional": None,
         "reduction": 1}, E(()), lambda: F.binary_cross_entropy_with_logits(T(x), T(target)))
    logits = np.log(torch.softmax(T(x.reshape(-1, 16)), 1).numpy())  # 65536 rows of 16
    labels = rng.integers(0, 16, logits.shape[0]).astype(np.int64)
    cases["aclnnNLLLoss"] = lambda: EmulatedCase(
        {"self": logits, "target": labels, "weight": np.ones(16, f32), "reduction": 1,
         "ignoreIndex": -100}, {"out": E(()), "totalWeightOut": E(())},
        lambda: F.nll_loss(T(logits), T(labels)))
    kernel, shift = u(-1, 1, (64, 64, 3, 3)), u(-1, 1, (64,))
    cases["aclnnConvolution"] = lambda: EmulatedCase(
        {"input": image, "weight": kernel, "bias": shift, "stride": [1, 1], "padding": [1, 1],
         "dilation": [1, 1], "transposed": False, "outputPadding": [0, 0], "groups": 1,
         "cubeMathType": 0}, {"output": E(image.shape)},
        lambda: F.conv2d(T(image), T(kernel), T(shift), 1, 1))
    cases["aclnnMaxPool2dWithIndices"] = lambda: EmulatedCase(
        {"self": image, "kernelSize": [2, 2], "stride": [2, 2], "padding": [0, 0],
         "dilation": [1, 1], "ceilMode": False},
        {"out": E((16, 64, 16, 16)), "indices": E((16, 64, 16, 16), np.int64)},
        lambda: F.max_pool2d(T(image), 2, 2, return_indices=True))
    mask_shape = (16, 64, 9, (-(-(16 * 16) // 16) + 1) * 32)  # the doc's mask of 3x3, stride 2

    def mask_of() -> np.ndarray:  # the forward's mask, which only the backward reads
        import aclnn_py

        return aclnn_py.call("aclnnMaxPool2dWithMask", image, [3, 3], [2, 2], [1, 1], [1, 1],
                             False, out=(np.empty((16, 64, 16, 16), f32),
                                         np.empty(mask_shape, np.int8)))[1]
    cases["aclnnMaxPool2dWithMask"] = lambda: EmulatedCase(
        {"self": image, "kernelSize": [3, 3], "stride": [2, 2], "padding": [1, 1],
         "dilation": [1, 1], "ceilMode": False},
        {"out": E((16, 64, 16, 16)), "indices": E(mask_shape, np.int8)},
        lambda: F.max_pool2d(T(image), 3, 2, 1))
    pooled_grad = u(-1, 1, (16, 64, 16, 16))
    cases["aclnnMaxPool2dWithMaskBackward"] = lambda: EmulatedCase(
        {"gradOutput": pooled_grad, "self": image, "indices": mask_of(), "kernelSize": [3, 3],
         "stride": [2, 2], "padding": [1, 1], "dilation": [1, 1], "ceilMode": False},
        E(image.shape),
        lambda: aten.max_pool2d_with_indices_backward(
            T(pooled_grad), T(image), [3, 3], [2, 2], [1, 1], [1, 1], False,
            F.max_pool2d(T(image), 3, 2, 1, return_indices=True)[1]))
    conv_grad = u(-1, 1, image.shape[:1] + (64,) + image.shape[2:])
    cases["aclnnConvolutionBackward"] = lambda: EmulatedCase(
        {"gradOutput": conv_grad, "input": image, "weight": kernel, "biasSizes": [64],
         "stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "transposed": False,
         "outputPadding": [0, 0], "groups": 1, "outputMask": [True, True, True],
         "cubeMathType": 0},
        {"gradInput": E(image.shape), "gradWeight": E(kernel.shape), "gradBias": E((64,))},
        lambda: aten.convolution_backward(T(conv_grad), T(image), T(kernel), [64], [1, 1],
                                          [1, 1], [1, 1], False, [0, 0], 1,
                                          [True, True, True]))
    nll_grad = u(0.5, 1.5, ())
    cases["aclnnNLLLossBackward"] = lambda: EmulatedCase(
        {"gradOutput": nll_grad, "self": logits, "target": labels, "weight": np.ones(16, f32),
         "reduction": 1, "ignoreIndex": -100,
         "totalWeight": np.asarray(float(logits.shape[0]), f32)}, E(logits.shape),
        lambda: aten.nll_loss_backward(T(nll_grad), T(logits), T(labels), None, 1, -100,
                                       torch.tensor(float(logits.shape[0]))))
    cases["aclnnAvgPool2d"] = lambda: EmulatedCase(
        {"self": image, "kernelSize": [2, 2], "strides": [2, 2], "paddings": [0, 0],
         "ceilMode": False, "countIncludePad": True, "divisorOverride": 0, "cubeMathType": 0},
        E((16, 64, 16, 16)), lambda: F.avg_pool2d(T(image), 2, 2))
    cases["aclnnAdaptiveAvgPool2d"] = lambda: EmulatedCase(
        {"self": image, "outputSize": [7, 7]}, E((16, 64, 7, 7)),
        lambda: F.adaptive_avg_pool2d(T(image), (7, 7)))
    def pool_grad(forward: Callable[[Any], Any], grad: np.ndarray) -> Any:
        v = T(image).requires_grad_(True)
        return torch.autograd.grad(forward(v), v, T(grad))[0]

    avg_grad = u(-1, 1, (16, 64, 16, 16))
    cases["aclnnAvgPool2dBackward"] = lambda: EmulatedCase(
        {"gradOutput": avg_grad, "self": image, "kernelSize": [3, 3], "stride": [2, 2],
         "padding": [1, 1], "ceilMode": False, "countIncludePad": True, "divisorOverride": 0,
         "cubeMathType": 0}, E(image.shape),
        lambda: pool_grad(lambda v: F.avg_pool2d(v, 3, 2, 1), avg_grad))
    adaptive_grad = u(-1, 1, (16, 64, 7, 7))
    cases["aclnnAdaptiveAvgPool2dBackward"] = lambda: EmulatedCase(
        {"gradOutput": adaptive_grad, "self": image}, E(image.shape),
        lambda: pool_grad(lambda v: F.adaptive_avg_pool2d(v, (7, 7)), adaptive_grad))
    cases["aclnnAdaptiveMaxPool2d"] = lambda: EmulatedCase(
        {"self": image, "outputSize": [7, 7]},
        {"outputOut": E((16, 64, 7, 7)), "indicesOut": E((16, 64, 7, 7), np.int64)},
        lambda: F.adaptive_max_pool2d(T(image), (7, 7), return_indices=True))
    pool_index = F.max_pool2d(T(image), 3, 2, 1, return_indices=True)[1].numpy()
    cases["aclnnMaxPool2dWithIndicesBackward"] = lambda: EmulatedCase(
        {"gradOutput": pooled_grad, "self": image, "indices": pool_index.astype(np.int32),
         "kernelSize": [3, 3], "stride": [2, 2], "padding": [1, 1], "dilation": [1, 1],
         "ceilMode": False}, E(image.shape),
        lambda: aten.max_pool2d_with_indices_backward(
            T(pooled_grad), T(image), [3, 3], [2, 2], [1, 1], [1, 1], False,
            torch.from_numpy(pool_index)))
    adaptive_index = F.adaptive_max_pool2d(T(image), (7, 7), return_indices=True)[1].numpy()
    cases["aclnnAdaptiveMaxPool2dBackward"] = lambda: EmulatedCase(
        {"gradOutput": adaptive_grad, "self": image, "indices": adaptive_index},
        E(image.shape),
        lambda: aten.adaptive_max_pool2d_backward(T(adaptive_grad), T(image),
                                                  torch.from_numpy(adaptive_index)))
    cases["aclnnMaxPool"] = lambda: EmulatedCase(
        {"self": image, "kernelShape": [3, 3], "strides": [2, 2], "autoPad": 0,
         "pads": [1, 1, 1, 1], "dilations": [1, 1], "ceilMode": 0}, E((16, 64, 16, 16)),
        lambda: F.max_pool2d(T(image), 3, 2, 1))


def _cases_pool3d_unpool(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """3-d pooling, max unpooling's backward and SwiGLU with clamping."""
    torch = inputs.torch
    F, aten, T, E = torch.nn.functional, torch.ops.aten, torch.from_numpy, _out_spec
    rng, u = inputs.rng, inputs.uniform
    square = EMULATED_SQUARE
    image = inputs.image
    volume = image.reshape(16, 64, 8, 4, 32)
    volume_grad = u(-1, 1, (16, 64, 4, 2, 16))
    cases["aclnnAvgPool3d"] = lambda: EmulatedCase(
        {"self": volume, "kernelSize": [2], "stride": [2], "padding": [0], "ceilMode": False,
         "countIncludePad": True, "divisorOverride": 0}, E((16, 64, 4, 2, 16)),
        lambda: F.avg_pool3d(T(volume), 2, 2))
    cases["aclnnAvgPool3dBackward"] = lambda: EmulatedCase(
        {"gradOutput": volume_grad, "self": volume, "kernelSize": [2], "stride": [2],
         "padding": [0], "ceilMode": False, "countIncludePad": True, "divisorOverride": 0},
        E(volume.shape),
        lambda: aten.avg_pool3d_backward(T(volume_grad), T(volume), [2, 2, 2], [2, 2, 2],
                                         [0, 0, 0], False, True, None))
    cases["aclnnAdaptiveAvgPool3d"] = lambda: EmulatedCase(
        {"self": volume, "outputSize": [4, 2, 16]}, E((16, 64, 4, 2, 16)),
        lambda: F.adaptive_avg_pool3d(T(volume), (4, 2, 16)))
    cases["aclnnAdaptiveAvgPool3dBackward"] = lambda: EmulatedCase(
        {"gradOutput": volume_grad, "self": volume}, E(volume.shape),
        lambda: aten._adaptive_avg_pool3d_backward(T(volume_grad), T(volume)))
    cases["aclnnAdaptiveMaxPool3d"] = lambda: EmulatedCase(
        {"self": volume, "outputSize": [4, 2, 16]},
        {"outputOut": E((16, 64, 4, 2, 16)), "indicesOut": E((16, 64, 4, 2, 16), np.int32)},
        lambda: F.adaptive_max_pool3d(T(volume), (4, 2, 16), return_indices=True))
    volume_index = F.max_pool3d(T(volume), 2, 2, return_indices=True)[1].numpy()
    cases["aclnnAdaptiveMaxPool3dBackward"] = lambda: EmulatedCase(
        {"gradOutput": volume_grad, "self": volume, "indices": volume_index.astype(np.int32)},
        E(volume.shape),
        lambda: aten.adaptive_max_pool3d_backward(T(volume_grad), T(volume),
                                                  torch.from_numpy(volume_index)))
    pair = rng.uniform(-10, 10, (1024, 2048)).astype(np.float32)
    cases["aclnnSwigluClamp"] = lambda: EmulatedCase(
        {"x": pair, "limit": 7.0}, E(square),
        lambda: F.silu(T(pair)[:, :1024]).clamp(max=7.0) * T(pair)[:, 1024:].clamp(-7.0, 7.0))
    cases["aclnnMaxPool3D"] = lambda: EmulatedCase(
        {"x": volume, "ksize": [2], "strides": [2], "padding": "VALID", "padsOptional": None,
         "dilationOptional": None, "ceilMode": 0, "dataFormatOptional": "NCDHW"},
        E((16, 64, 4, 2, 16)), lambda: F.max_pool3d(T(volume), 2, 2))
    cases["aclnnMaxPool3dWithArgmax"] = lambda: EmulatedCase(
        {"self": volume, "kernelSize": [2], "stride": [2], "padding": [0], "dilation": [1],
         "ceilMode": False},
        {"out": E((16, 64, 4, 2, 16)), "indices": E((16, 64, 4, 2, 16), np.int32)},
        lambda: F.max_pool3d(T(volume), 2, 2, return_indices=True))
    cases["aclnnMaxPool3dWithArgmaxBackward"] = lambda: EmulatedCase(
        {"gradOutput": volume_grad, "self": volume, "indices": volume_index.astype(np.int32),
         "kernelSize": [2], "stride": [2], "padding": [0], "dilation": [1], "ceilMode": False},
        E(volume.shape),
        lambda: aten.max_pool3d_with_indices_backward(
            T(volume_grad), T(volume), [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False,
            torch.from_numpy(volume_index)))
    unpooled_grad = u(-1, 1, (16, 64, 64, 64))
    unpool_index = F.max_pool2d(T(u(-1, 1, (16, 64, 64, 64))), 2, 2,
                                return_indices=True)[1].numpy()
    cases["aclnnMaxUnpool2dBackward"] = lambda: EmulatedCase(
        {"gradOutput": unpooled_grad, "self": image, "indices": unpool_index,
         "outputSize": [64, 64]}, E(image.shape),
        lambda: torch.gather(T(unpooled_grad).reshape(1024, -1), 1,
                             torch.from_numpy(unpool_index).reshape(1024, -1)))
    unpooled3 = u(-1, 1, (16, 64, 16, 8, 64))
    unpool3_index = F.max_pool3d(T(unpooled3), 2, 2, return_indices=True)[1].numpy()
    cases["aclnnMaxUnpool3dBackward"] = lambda: EmulatedCase(
        {"gradOutput": unpooled3, "self": volume, "indices": unpool3_index,
         "outputSize": [16, 8, 64], "stride": [2, 2, 2], "padding": [0, 0, 0]},
        E(volume.shape),
        lambda: torch.gather(T(unpooled3).reshape(1024, -1), 1,
                             torch.from_numpy(unpool3_index).reshape(1024, -1)))


def _cases_pads(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Reflection, replication and circular padding in 1 to 3 dimensions, forward and
    backward."""
    torch = inputs.torch
    F, T, E = torch.nn.functional, torch.from_numpy, _out_spec
    u = inputs.uniform
    image = inputs.image
    for kind, mode in (("Reflection", "reflect"), ("Replication", "replicate"),
                       ("Circular", "circular")):
        for dims in (1, 2, 3):
            if kind == "Circular" and dims == 1:
                continue
            source = image.reshape((16, 64, 1024) if dims == 1 else
                                   (16, 64, 32, 32) if dims == 2 else (16, 64, 8, 4, 32))
            width = [2, 2, 1, 1, 1, 1][:2 * dims]
            padded_shape = tuple(F.pad(T(source[:1, :1]), width, mode=mode).shape[2:])
            padded_grad = u(-1, 1, (16, 64) + padded_shape)

            def pad_grad(source: np.ndarray = source, width: list[int] = width,
                         mode: str = mode, grad: np.ndarray = padded_grad) -> Any:
                v = T(source).requires_grad_(True)
                return torch.autograd.grad(F.pad(v, width, mode=mode), v, T(grad))[0]
            cases[f"aclnn{kind}Pad{dims}d"] = (
                lambda source=source, width=width, mode=mode, shape=padded_shape: EmulatedCase(
                    {"self": source, "padding": width}, E((16, 64) + shape),
                    lambda: F.pad(T(source), width, mode=mode)))
            cases[f"aclnn{kind}Pad{dims}dBackward"] = (
                lambda source=source, width=width, grad=padded_grad, reference=pad_grad:
                EmulatedCase({"gradOutput": grad, "self": source, "padding": width},
                             E(source.shape), reference))


def _cases_views_and_copies(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Diagonals, flatten, slices, channel shuffle, chunk cat, im2col and unfold's gradient,
    strided assignment and embedding."""
    torch = inputs.torch
    F, T, E = torch.nn.functional, torch.from_numpy, _out_spec
    rng, u = inputs.rng, inputs.uniform
    x = inputs.x
    image = inputs.image
    vector = x.reshape(-1)[:1024]
    cases["aclnnDiag"] = lambda: EmulatedCase(
        {"self": vector, "diagonal": 0}, E((1024, 1024)), lambda: torch.diag(T(vector)))
    cases["aclnnDiagFlat"] = lambda: EmulatedCase(
        {"self": vector.reshape(32, 32), "diagonal": 0}, E((1024, 1024)),
        lambda: torch.diagflat(T(vector)))
    tall = x.reshape(-1, 2)  # wrapped: a diagonal every 3 rows, 174763 elements filled
    cases["aclnnInplaceFillDiagonal"] = lambda: EmulatedCase(
        {"selfRef": tall.copy(), "fillValue": 1.0, "wrap": True}, None,
        lambda: T(tall).fill_diagonal_(1.0, wrap=True))
    cases["aclnnFlatten"] = lambda: EmulatedCase(
        {"self": image, "axis": 2}, E((1024, 1024)), lambda: T(image).reshape(1024, 1024).clone())
    cases["aclnnSlice"] = lambda: EmulatedCase(
        {"self": x.reshape(1024, 1024), "dim": 1, "start": 1, "end": 1024, "step": 2},
        E((1024, 512)), lambda: T(x.reshape(1024, 1024))[:, 1::2].contiguous())
    cases["aclnnSliceV2"] = lambda: EmulatedCase(
        {"self": image, "starts": [1, 0], "ends": [32, 32], "axes": [2, 3], "steps": [2, 2]},
        E((16, 64, 16, 16)), lambda: T(image)[:, :, 1::2, ::2].contiguous())
    cases["aclnnChannelShuffle"] = lambda: EmulatedCase(
        {"self": image, "groups": 4}, E(image.shape), lambda: F.channel_shuffle(T(image), 4))
    chunks = [x.reshape(1024, 1024), x.reshape(-1)[:4096].reshape(64, 64)]
    cases["aclnnChunkCat"] = lambda: EmulatedCase(
        {"tensors": chunks, "dim": 0, "numChunks": 4}, E((4, 262144 + 1024)),
        lambda: torch._chunk_cat([T(c) for c in chunks], 0, 4))
    cases["aclnnIm2col"] = lambda: EmulatedCase(
        {"self": image[:4], "kernelSize": [3, 3], "dilation": [1, 1], "padding": [1, 1],
         "stride": [2, 2]}, E((4, 576, 256)),
        lambda: F.unfold(T(image[:4]), 3, 1, 1, 2))
    unfolded = u(-1, 1, (1024, 511, 4))

    def unfold_grad() -> Any:
        v = torch.zeros(1024, 1024, requires_grad=True)
        return torch.autograd.grad(v.unfold(1, 4, 2), v, T(unfolded))[0]
    cases["aclnnUnfoldGrad"] = lambda: EmulatedCase(
        {"gradOut": unfolded, "inputSizes": [1024, 1024], "dim": 1, "size": 4, "step": 2},
        E((1024, 1024)), unfold_grad)
    assigned = u(-1, 1, (512, 1024))

    def assign() -> Any:
        var = T(x.reshape(1024, 1024)).clone()
        var[::2] = T(assigned)
        return var
    cases["aclnnStridedSliceAssignV2"] = lambda: EmulatedCase(
        {"varRef": x.reshape(1024, 1024).copy(), "inputValue": assigned, "begin": [0],
         "end": [1024], "strides": [2], "axesOptional": [0]}, None, assign)
    table = u(-1, 1, (4096, 256))
    lookups = rng.integers(0, 4096, 4096).astype(np.int64)
    cases["aclnnEmbedding"] = lambda: EmulatedCase(
        {"weight": table, "indices": lookups}, E((4096, 256)),
        lambda: F.embedding(T(lookups), T(table)))


def _cases_shapes_and_indexing(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Concatenation, splits, gathers and scatters, indexing (kernels/indexing.py), sorting
    and ranges."""
    torch = inputs.torch
    F, T, E = torch.nn.functional, torch.from_numpy, _out_spec
    rng, in_place = inputs.rng, inputs.in_place
    n, square = EMULATED_N, EMULATED_SQUARE
    x, y, g = inputs.x, inputs.y, inputs.g
    X, G = inputs.X, inputs.G
    # shapes
    half = x.reshape(2, 512, 1024)
    cases["aclnnCat"] = lambda: EmulatedCase({"tensors": [half[0], half[1]], "dim": 0},
                                             E(square), lambda: torch.cat([T(half[0]),
                                                                           T(half[1])], 0))
    cases["aclnnStack"] = lambda: EmulatedCase({"tensors": [half[0], half[1]], "dim": 0},
                                               E(half.shape),
                                               lambda: torch.stack([T(half[0]), T(half[1])]))
    cases["aclnnSplitTensor"] = lambda: EmulatedCase(
        {"self": X, "splitSections": 512, "dim": 0}, [E((512, 1024)), E((512, 1024))],
        lambda: [t.clone() for t in torch.split(T(X), 512, 0)])
    cases["aclnnSplitWithSize"] = lambda: EmulatedCase(
        {"self": X, "splitSize": [256, 768], "dim": 1}, [E((1024, 256)), E((1024, 768))],
        lambda: [t.clone() for t in torch.split(T(X), [256, 768], 1)])
    column = rng.integers(0, 1024, square).astype(np.int64)
    cases["aclnnGather"] = lambda: EmulatedCase(
        {"self": X, "dim": 1, "index": column}, E(square),
        lambda: torch.gather(T(X), 1, T(column)))
    picks = rng.integers(0, 1024, 1024).astype(np.int64)
    cases["aclnnGatherV2"] = lambda: EmulatedCase(
        {"self": X, "dim": 0, "index": picks}, E(square),
        lambda: torch.index_select(T(X), 0, T(picks)))
    cases["aclnnIndexSelect"] = lambda: EmulatedCase(
        {"self": X, "dim": 0, "index": picks}, E(square),
        lambda: torch.index_select(T(X), 0, T(picks)))
    flat = rng.integers(0, n, n).astype(np.int64)
    cases["aclnnTake"] = lambda: EmulatedCase({"self": x, "index": flat}, E((n,)),
                                              lambda: torch.take(T(x), T(flat)))
    for name, reduce in (("Scatter", 0), ("ScatterAdd", None)):
        cases[f"aclnn{name}"] = (lambda r=reduce: EmulatedCase(
            {"self": X, "dim": 1, "index": column, "src": G,
             **({} if r is None else {"reduce": r})}, E(square),
            (lambda: torch.scatter(T(X), 1, T(column), T(G))) if r is not None else
            (lambda: torch.scatter_add(T(X), 1, T(column), T(G)))))
    cases["aclnnIndexFill"] = lambda: EmulatedCase(
        {"self": X, "dim": 1, "index": picks[:100], "value": 2.5}, E(square),
        lambda: torch.index_fill(T(X), 1, T(picks[:100]), 2.5))
    cases["aclnnMaskedSelect"] = lambda: EmulatedCase(
        {"self": x, "mask": y > 0}, E((n,)), lambda: torch.masked_select(T(x), T(y > 0)))
    # indexing (kernels/indexing.py); the lambdas read names of their own (later cases
    # rebind the shared ones)
    ix_column, ix_picks, ix_flat = column, picks, flat
    ix_rows = rng.integers(0, 1024, 1024).astype(np.int64)
    for name, extra in (("IndexAdd", {}), ("IndexAddV2", {"mode": 1})):
        cases[f"aclnn{name}"] = (lambda e=extra: EmulatedCase(
            {"self": X, "dim": 0, "index": ix_rows, "source": G, "alpha": 1.0, **e}, E(square),
            lambda: torch.index_add(T(X), 0, T(ix_rows), T(G))))
    ix_distinct = rng.permutation(1024).astype(np.int64)
    cases["aclnnIndexCopy"] = lambda: EmulatedCase(
        {"selfRef": X, "dim": 0, "index": ix_distinct, "source": G}, E(square),
        lambda: torch.index_copy(T(X), 0, T(ix_distinct), T(G)))
    cases["aclnnInplaceIndexCopy"] = lambda: in_place(
        {"selfRef": X.copy(), "dim": 0, "index": ix_distinct, "source": G}, X,
        lambda t: t.index_copy_(0, T(ix_distinct), T(G)))
    ix_some = [int(v) for v in ix_picks[:100]]
    cases["aclnnIndexFillTensor"] = lambda: EmulatedCase(
        {"self": X, "dim": 1, "index": ix_some, "value": 2.5}, E(square),
        lambda: torch.index_fill(T(X), 1, torch.tensor(ix_some), 2.5))
    cases["aclnnInplaceIndexFill"] = lambda: in_place(
        {"selfRef": X.copy(), "dim": 1, "index": ix_picks[:100], "value": 2.5}, X,
        lambda t: t.index_fill_(1, T(ix_picks[:100]), 2.5))
    cases["aclnnInplaceIndexFillTensor"] = lambda: in_place(
        {"selfRef": X.copy(), "dim": 1, "index": ix_some, "value": 2.5}, X,
        lambda t: t.index_fill_(1, torch.tensor(ix_some), 2.5))
    cases["aclnnIndex"] = lambda: EmulatedCase(
        {"self": X, "indices": [ix_rows]}, E(square), lambda: T(X)[T(ix_rows)])
    cases["aclnnInplaceScatter"] = lambda: in_place(
        {"selfRef": X.copy(), "dim": 1, "index": ix_column, "src": G, "reduce": 0}, X,
        lambda t: t.scatter_(1, T(ix_column), T(G)))
    cases["aclnnScatterValue"] = lambda: EmulatedCase(
        {"self": X, "dim": 1, "index": ix_column, "value": 2.5, "reduce": 0}, E(square),
        lambda: torch.scatter(T(X), 1, T(ix_column), 2.5))
    cases["aclnnInplaceScatterValue"] = lambda: in_place(
        {"selfRef": X.copy(), "dim": 1, "index": ix_column, "value": 2.5, "reduce": 0}, X,
        lambda t: t.scatter_(1, T(ix_column), 2.5))
    cases["aclnnScatterReduce"] = lambda: EmulatedCase(
        {"self": X, "dim": 1, "index": ix_column, "src": G, "reduce": 1, "includeSelf": True},
        E(square), lambda: torch.scatter_reduce(T(X), 1, T(ix_column), T(G), "sum"))
    cases["aclnnInplaceScatterReduce"] = lambda: in_place(
        {"selfRef": X.copy(), "dim": 1, "index": ix_column, "src": G, "reduce": 1,
         "includeSelf": True}, X, lambda t: t.scatter_reduce_(1, T(ix_column), T(G), "sum"))
    ix_nd = ix_distinct.reshape(-1, 1)
    cases["aclnnScatterNd"] = lambda: EmulatedCase(
        {"data": X, "indices": ix_nd, "updates": G}, E(square),
        lambda: T(X).index_copy(0, T(ix_distinct), T(G)))
    cases["aclnnScatterNdUpdate"] = lambda: in_place(
        {"varRef": X.copy(), "indices": ix_nd, "updates": G}, X,
        lambda t: t.index_copy_(0, T(ix_distinct), T(G)))
    cases["aclnnTfScatterAdd"] = lambda: in_place(
        {"varRef": X.copy(), "indices": ix_rows, "updates": G}, X,
        lambda t: t.index_add_(0, T(ix_rows), T(G)))
    cases["aclnnInplacePut"] = lambda: in_place(
        {"selfRef": x.copy(), "index": ix_flat, "source": y, "accumulate": True}, x,
        lambda t: t.put_(T(ix_flat), T(y), accumulate=True))
    cases["aclnnGatherV3"] = lambda: EmulatedCase(
        {"self": X, "dim": 0, "index": ix_picks, "batchDims": 0, "mode": 1}, E(square),
        lambda: torch.index_select(T(X), 0, T(ix_picks)))
    ix_words = rng.integers(0, 1024, (64, 16)).astype(np.int64)
    ix_grad_words = G.reshape(64, 16, 1024)
    cases["aclnnEmbeddingDenseBackward"] = lambda: EmulatedCase(
        {"grad": ix_grad_words, "indices": ix_words, "numWeights": 1024, "paddingIdx": 2 ** 63,
         "scaleGradByFreq": False}, E(square),
        lambda: torch.ops.aten.embedding_dense_backward(T(ix_grad_words), T(ix_words), 1024, -1,
                                                        False))
    ix_bag_rows = rng.integers(0, 1024, 4096).astype(np.int64)
    ix_bag_starts = np.arange(0, 4096, 4, dtype=np.int64)
    cases["aclnnEmbeddingBag"] = lambda: EmulatedCase(
        {"weight": X, "indices": ix_bag_rows, "offsets": ix_bag_starts, "scaleGradByFreq": False,
         "mode": 0, "sparse": False, "perSampleWeights": None, "includeLastOffset": False,
         "paddingIdx": -1},
        [E(square), E((4096,), np.int64), E((1024,), np.int64), E((1024,), np.int64)],
        lambda: torch.ops.aten._embedding_bag(T(X), T(ix_bag_rows), T(ix_bag_starts), False, 0,
                                              False, None, False, -1))
    cases["aclnnInplaceMaskedScatter"] = lambda: in_place(
        {"selfRef": x.copy(), "mask": y > 0, "source": g}, x,
        lambda t: t.masked_scatter_(T(y > 0), T(g)))
    ix_half_n = x[:n // 2]
    ix_twos = np.full(n // 2, 2, np.int64)
    cases["aclnnRepeatInterleave"] = lambda: EmulatedCase(
        {"self": ix_half_n, "repeats": ix_twos, "outputSize": n}, E((n,)),
        lambda: torch.repeat_interleave(T(ix_half_n), T(ix_twos)))
    cases["aclnnRepeatInterleaveInt"] = lambda: EmulatedCase(
        {"self": ix_half_n, "repeats": 2, "outputSize": n}, E((n,)),
        lambda: torch.repeat_interleave(T(ix_half_n), 2))
    ix_half_rows = X[:512]
    ix_twos_rows = np.full(512, 2, np.int64)
    cases["aclnnRepeatInterleaveWithDim"] = lambda: EmulatedCase(
        {"self": ix_half_rows, "repeats": ix_twos_rows, "dim": 0, "outputSize": 1024}, E(square),
        lambda: torch.repeat_interleave(T(ix_half_rows), T(ix_twos_rows), dim=0))
    cases["aclnnRepeatInterleaveIntWithDim"] = lambda: EmulatedCase(
        {"self": ix_half_rows, "repeats": 2, "dim": 0, "outputSize": 1024}, E(square),
        lambda: torch.repeat_interleave(T(ix_half_rows), 2, dim=0))
    cases["aclnnRepeatInterleaveTensor"] = lambda: EmulatedCase(
        {"repeats": ix_twos, "outputSize": n}, E((n,), np.int64),
        lambda: torch.repeat_interleave(T(ix_twos)))
    cases["aclnnRepeatInterleaveGrad"] = lambda: EmulatedCase(
        {"yGrad": G, "repeats": ix_twos_rows, "axis": 0}, E((512, 1024)),
        lambda: T(G).reshape(512, 2, 1024).sum(1))
    cases["aclnnMedian"] = lambda: EmulatedCase({"self": x}, E(()), lambda: torch.median(T(x)))
    cases["aclnnNanMedian"] = lambda: EmulatedCase({"self": x}, E(()),
                                                   lambda: torch.nanmedian(T(x)))
    for name, function in (("MedianDim", torch.median), ("NanMedianDim", torch.nanmedian)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": X, "dim": 1, "keepDim": False}, [E((1024,)), E((1024,), np.int64)],
            lambda: f(T(X), 1)))
    cases["aclnnKthvalue"] = lambda: EmulatedCase(
        {"self": X, "k": 100, "dim": 1, "keepdim": False}, [E((1024,)), E((1024,), np.int64)],
        lambda: torch.kthvalue(T(X), 100, 1))
    cases["aclnnNonzero"] = lambda: EmulatedCase(
        {"self": X > 0}, E((n, 2), np.int64), lambda: torch.nonzero(T(X > 0)))
    cases["aclnnNonzeroV2"] = lambda: EmulatedCase(
        {"self": X > 0}, E((2, n), np.int64), lambda: torch.nonzero(T(X > 0)).T.contiguous())
    ix_levels = np.round(x * 100).astype(np.float32)
    cases["aclnnUnique"] = lambda: EmulatedCase(
        {"self": ix_levels, "sorted": True, "returnInverse": True},
        [E((n,)), E((n,), np.int64)], lambda: torch.unique(T(ix_levels), return_inverse=True))
    ix_runs = np.sort(ix_levels)
    cases["aclnnUniqueConsecutive"] = lambda: EmulatedCase(
        {"self": ix_runs, "returnInverse": True, "returnCounts": True, "dim": 1000},
        [E((n,)), E((n,), np.int64), E((n,), np.int64)],
        lambda: torch.unique_consecutive(T(ix_runs), return_inverse=True, return_counts=True))
    ix_pairs = np.round(X[:, :2] * 10).astype(np.float32)
    cases["aclnnUniqueDim"] = lambda: EmulatedCase(
        {"self": ix_pairs, "sorted": True, "returnInverse": True, "dim": 0},
        [E((1024, 2)), E((1024,), np.int64), E((1024,), np.int64)],
        lambda: torch.unique(T(ix_pairs), return_inverse=True, return_counts=True, dim=0))
    cases["aclnnFlip"] = lambda: EmulatedCase({"self": X, "dims": [0, 1]}, E(square),
                                              lambda: torch.flip(T(X), (0, 1)))
    cases["aclnnRoll"] = lambda: EmulatedCase({"x": X, "shifts": [3, -5], "dims": [0, 1]},
                                              E(square),
                                              lambda: torch.roll(T(X), (3, -5), (0, 1)))
    cube = x.reshape(64, 128, 128)
    cases["aclnnPermute"] = lambda: EmulatedCase(
        {"self": cube, "dims": [2, 0, 1]}, E((128, 64, 128)),
        lambda: T(cube).permute(2, 0, 1).contiguous())
    row = x[:1024].reshape(1, 1024)
    cases["aclnnExpand"] = lambda: EmulatedCase({"self": row, "size": [1024, 1024]},
                                                E(square),
                                                lambda: T(row).expand(1024, 1024).contiguous())
    cases["aclnnRepeat"] = lambda: EmulatedCase({"self": half[0], "repeats": [2, 1]},
                                                E(square), lambda: T(half[0]).repeat(2, 1))
    for name, function in (("Tril", torch.tril), ("Triu", torch.triu)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": X, "diagonal": 0}, E(square), lambda: f(T(X))))
    cases["aclnnSort"] = lambda: EmulatedCase(
        {"self": X, "stable": True, "dim": -1, "descending": False},
        {"valuesOut": E(square), "indicesOut": E(square, np.int64)},
        lambda: torch.sort(T(X), dim=-1, stable=True))
    cases["aclnnArgsort"] = lambda: EmulatedCase(
        {"self": X, "dim": -1, "descending": False}, E(square, np.int64),
        lambda: torch.argsort(T(X), dim=-1, stable=True))
    cases["aclnnTopk"] = lambda: EmulatedCase(
        {"self": X, "k": 8, "dim": -1, "largest": True, "sorted": True},
        {"valuesOut": E((1024, 8)), "indicesOut": E((1024, 8), np.int64)},
        lambda: torch.topk(T(X), 8, -1))
    cases["aclnnArange"] = lambda: EmulatedCase({"start": 0.0, "end": float(n), "step": 1.0},
                                                E((n,)), lambda: torch.arange(0.0, n, 1.0))
    cases["aclnnLinspace"] = lambda: EmulatedCase({"start": -1.0, "end": 1.0, "steps": n},
                                                  E((n,)), lambda: torch.linspace(-1, 1, n))
    cases["aclnnEye"] = lambda: EmulatedCase({"n": 1024, "m": 1024}, E(square),
                                             lambda: torch.eye(1024))
    cases["aclnnConstantPadNd"] = lambda: EmulatedCase(
        {"self": X, "pad": [1, 1, 1, 1], "value": 0.5}, E((1026, 1026)),
        lambda: F.pad(T(X), (1, 1, 1, 1), value=0.5))


def _cases_matmul(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Matrix products, 1 M elements each side."""
    torch = inputs.torch
    T, E = torch.from_numpy, _out_spec
    square = EMULATED_SQUARE
    x = inputs.x
    X, G = inputs.X, inputs.G
    mats = x.reshape(16, 256, 256)
    cases["aclnnMm"] = lambda: EmulatedCase({"self": X, "mat2": G, "cubeMathType": 0},
                                            E(square), lambda: torch.mm(T(X), T(G)))
    cases["aclnnMatmul"] = lambda: EmulatedCase({"self": X, "mat2": G, "cubeMathType": 0},
                                                E(square), lambda: torch.matmul(T(X), T(G)))
    cases["aclnnBatchMatMul"] = lambda: EmulatedCase(
        {"self": mats, "mat2": mats, "cubeMathType": 0}, E(mats.shape),
        lambda: torch.bmm(T(mats), T(mats)))
    addbmm_self = x.reshape(16, 256, 256)[0].copy()
    cases["aclnnAddbmm"] = lambda: EmulatedCase(
        {"self": addbmm_self, "batch1": mats, "batch2": mats, "beta": 0.5, "alpha": 2.0,
         "cubeMathType": 0}, E(addbmm_self.shape),
        lambda: torch.addbmm(T(addbmm_self), T(mats), T(mats), beta=0.5, alpha=2.0))
    cases["aclnnMv"] = lambda: EmulatedCase({"self": X, "vec": x[:1024], "cubeMathType": 0},
                                            E((1024,)), lambda: torch.mv(T(X), T(x[:1024])))
    cases["aclnnAddmm"] = lambda: EmulatedCase(
        {"self": G, "mat1": X, "mat2": G, "beta": 0.5, "alpha": 2.0, "cubeMathType": 0},
        E(square), lambda: torch.addmm(T(G), T(X), T(G), beta=0.5, alpha=2.0))
    cases["aclnnBaddbmm"] = lambda: EmulatedCase(
        {"self": mats, "batch1": mats, "batch2": mats, "beta": 0.5, "alpha": 2.0,
         "cubeMathType": 0}, E(mats.shape),
        lambda: torch.baddbmm(T(mats), T(mats), T(mats), beta=0.5, alpha=2.0))
    cases["aclnnGemm"] = lambda: EmulatedCase(
        {"A": X, "B": G, "C": G, "alpha": 2.0, "beta": 0.5, "transA": 1, "transB": 0,
         "cubeMathType": 0}, E(square), lambda: 2.0 * (T(X).T @ T(G)) + 0.5 * T(G))


def _cases_quant(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Quantisation with a per-channel scale and offset over the last dimension, FRACTAL_NZ
    weights and the quantised matmuls."""
    torch = inputs.torch
    aten, T, E = torch.ops.aten, torch.from_numpy, _out_spec
    rng, u = inputs.rng, inputs.uniform
    n, f32, square = EMULATED_N, np.float32, EMULATED_SQUARE
    x = inputs.x
    grid = u(-40, 40, (1024, n // 1024))
    channel, quant_offset = u(0.5, 2, (n // 1024,)), u(-1, 1, (n // 1024,))
    codes = rng.integers(-128, 128, (1024, n // 1024)).astype(np.int8)

    def _quantised(value: Any) -> Any:
        return torch.clamp(torch.round(value), -128, 127).to(torch.int8)

    for name, extra in (("AscendQuant", {}), ("AscendQuantV3", {"axis": -1})):
        cases[f"aclnn{name}"] = (lambda e=extra: EmulatedCase(
            {"x": grid, "scale": channel, "offset": quant_offset, "sqrtMode": False,
             "roundMode": "round", "dstType": 2, **e}, E(grid.shape, np.int8),
            lambda: _quantised(T(grid) * T(channel) + T(quant_offset))))
    cases["aclnnAscendAntiQuant"] = lambda: EmulatedCase(
        {"x": codes, "scale": channel, "offset": quant_offset, "dstType": 1, "sqrtMode": False},
        E(codes.shape, np.float16),
        lambda: ((T(codes).float() + T(quant_offset)) * T(channel)).half())
    # FRACTAL_NZ weights and the quantised matmuls (the ...WeightNz operators take a weight
    # aclnnTransMatmulWeight made: aclnn_py.call's ND one is refused, their row an error)
    halves = x.reshape(square).astype(np.float16)
    cases["aclnnTransMatmulWeight"] = lambda: EmulatedCase(
        {"mmWeightRef": halves}, None,
        lambda: T(halves).reshape(64, 16, 64, 16).permute(2, 0, 1, 3).contiguous())
    for name, lead in (("MatmulWeightNz", ()), ("BatchMatMulWeightNz", (1,))):
        shaped = halves.reshape(lead + square)
        cases[f"aclnn{name}"] = (lambda v=shaped: EmulatedCase(
            {"self": v, "mat2": v, "cubeMathType": 1}, E(v.shape, np.float16),
            lambda: (T(v).float() @ T(v).float()).half()))
    channel_scale = u(1e-4, 1e-3, (1024,))
    scales = u(1e-4, 1e-3)
    cases["aclnnTransQuantParamV2"] = lambda: EmulatedCase(
        {"scale": scales, "offset": None}, E((n,), np.uint64),
        lambda: (T(scales.view(np.int32)).long() & 0xFFFFE000) | (1 << 46))
    cases["aclnnTransQuantParamV3"] = lambda: EmulatedCase(
        {"scale": scales, "offset": None, "roundMode": 0}, E((n,), np.uint64),
        lambda: (T(scales.view(np.int32)).long() & 0xFFFFE000) | (1 << 46))
    eights = codes.reshape(square)

    def _dequantised() -> Any:
        return (T(eights).double() @ T(eights).double() * T(channel_scale)).half()

    cases["aclnnQuantMatmulV3"] = lambda: EmulatedCase(
        {"x1": eights, "x2": eights, "scale": channel_scale, "offset": None, "bias": None,
         "transposeX1": False, "transposeX2": False}, E(square, np.float16), _dequantised)
    cases["aclnnQuantMatmulV2"] = lambda: EmulatedCase(
        {"x1": eights, "x2": eights, "bias": np.zeros(square[1], np.int32),
         "deqScale": np.resize(channel_scale.view(np.uint32).astype(np.uint64)
                               | np.uint64(1 << 46), -(-square[1] // 16) * 16),
         "adjX1": False, "adjX2": False}, E(square, np.float16), _dequantised)
    cases["aclnnQuantMatmulV4"] = lambda: EmulatedCase(
        {"x1": eights, "x2": eights, "scale": channel_scale, "offset": None,
         "pertokenScaleOptional": None, "bias": None, "transposeX1": False,
         "transposeX2": False}, E(square, np.float16), _dequantised)
    cases["aclnnQuantMatmulWeightNz"] = lambda: EmulatedCase(
        {"x1": eights, "x2": eights, "x1Scale": None,
         "x2Scale": channel_scale.view(np.uint32).astype(np.uint64) | np.uint64(1 << 46),
         "yScale": None, "x1Offset": None, "x2Offset": None, "yOffset": None, "bias": None,
         "transposeX1": False, "transposeX2": False, "groupSize": 0}, E(square, np.float16),
        _dequantised)
    token_rows = x.reshape(square).astype(np.float16)

    def _per_token() -> Any:
        rows = T(token_rows).float()
        step = 127 / rows.abs().amax(1)
        return torch.clamp(torch.round(rows * step[:, None]), -128, 127).to(torch.int8), 1 / step

    def _asymmetric() -> Any:
        rows = T(token_rows).float()
        high, low = rows.amax(1), rows.amin(1)
        scale = (high - low) / 255
        offset = 127 - high / scale
        y = torch.round(rows * (1 / scale)[:, None] + offset[:, None])
        return torch.clamp(y, -128, 127).to(torch.int8), scale, offset

    cases["aclnnDynamicQuant"] = lambda: EmulatedCase(
        {"x": token_rows, "smoothScalesOptional": None},
        {"yOut": E(square, np.int8), "scaleOut": E((1024,))}, _per_token)
    cases["aclnnDynamicQuantV2"] = lambda: EmulatedCase(
        {"x": token_rows, "smoothScalesOptional": None, "groupIndexOptional": None,
         "dstType": 2},
        {"yOut": E(square, np.int8), "scaleOut": E((1024,)), "offsetOut": E((1024,))},
        _asymmetric)
    fake_scale, fake_zero = np.array([0.05], f32), np.array([3], np.int32)
    cases["aclnnFakeQuantPerTensorAffineCachemask"] = lambda: EmulatedCase(
        {"self": grid, "scale": fake_scale, "zeroPoint": fake_zero, "fakeQuantEnabled": 1.0,
         "quantMin": -128, "quantMax": 127}, {"out": E(grid.shape), "mask": E(grid.shape, bool)},
        lambda: aten._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
            T(grid), T(fake_scale), T(fake_zero), torch.tensor([1], dtype=torch.long), -128, 127))
    channel_zero = np.zeros(channel.shape, np.int32)
    cases["aclnnFakeQuantPerChannelAffineCachemask"] = lambda: EmulatedCase(
        {"self": grid, "scale": channel, "zeroPoint": channel_zero, "axis": -1,
         "quantMin": -128, "quantMax": 127}, {"out": E(grid.shape), "mask": E(grid.shape, bool)},
        lambda: aten.fake_quantize_per_channel_affine_cachemask(
            T(grid), T(channel), T(channel_zero), 1, -128, 127))


def _cases_c_kernels(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """The C kernels: MSE, L1 and smooth L1 losses and their backward."""
    torch = inputs.torch
    F, aten, T, E = torch.nn.functional, torch.ops.aten, torch.from_numpy, _out_spec
    n = EMULATED_N
    x, y, g = inputs.x, inputs.y, inputs.g
    for name, function in (("MseLoss", F.mse_loss), ("L1Loss", F.l1_loss),
                           ("SmoothL1Loss", F.smooth_l1_loss)):
        extra = {"beta": 1.0} if name == "SmoothL1Loss" else {}
        cases[f"aclnn{name}"] = (lambda f=function, e=extra: EmulatedCase(
            {"self": x, "target": y, "reduction": 0, **e}, E((n,)),
            lambda: f(T(x), T(y), reduction="none")))
    for name, grad, function in (
            ("MseLossBackward", "gradOutput", aten.mse_loss_backward),
            ("L1LossBackward", "gradOutput", lambda *a: torch.sgn(a[1] - a[2]) * a[0]),
            ("SmoothL1LossBackward", "gradOut",
             lambda *a: aten.smooth_l1_loss_backward(*a, 1.0))):
        extra = {"beta": 1.0} if name == "SmoothL1LossBackward" else {}
        cases[f"aclnn{name}"] = (lambda p=grad, f=function, e=extra: EmulatedCase(
            {p: g, "self": x, "target": y, "reduction": 0, **e}, E((n,)),
            lambda: f(T(g), T(x), T(y), 0)))


def _cases_foreach(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """The foreach family: four tensors of n / 4 elements per list, as an optimizer's step."""
    torch = inputs.torch
    T, E = torch.from_numpy, _out_spec
    n, f32 = EMULATED_N, np.float32
    x, y, pos, unit = inputs.x, inputs.y, inputs.pos, inputs.unit
    quarter = n // 4

    def parts(source: np.ndarray) -> list[np.ndarray]:
        return [source[i * quarter:(i + 1) * quarter].copy() for i in range(4)]

    xs, ys, ps, us = parts(x), parts(y), parts(pos), parts(unit)
    lists_out = [E((quarter,))] * 4

    def per(function: Callable[..., Any], *lists: list[np.ndarray]) -> Callable[[], Any]:
        return lambda: [function(*(T(t) for t in tensors)) for tensors in zip(*lists)]

    for name, function in (("Abs", torch.abs), ("Exp", torch.exp), ("Expm1", torch.expm1),
                           ("Neg", torch.neg), ("Sigmoid", torch.sigmoid),
                           ("Sign", torch.sign), ("Sin", torch.sin), ("Cos", torch.cos),
                           ("Sinh", torch.sinh), ("Cosh", torch.cosh), ("Tanh", torch.tanh),
                           ("Atan", torch.atan), ("Erf", torch.erf), ("Erfc", torch.erfc),
                           ("Copy", torch.clone)):
        cases[f"aclnnForeach{name}"] = (lambda f=function: EmulatedCase(
            {"x": xs}, lists_out, per(f, xs)))
    for name, function in (("Acos", torch.acos), ("Asin", torch.asin), ("Tan", torch.tan)):
        cases[f"aclnnForeach{name}"] = (lambda f=function: EmulatedCase(
            {"x": us}, lists_out, per(f, us)))
    for name, function in (("Log", torch.log), ("Log2", torch.log2), ("Log10", torch.log10),
                           ("Log1p", torch.log1p), ("Sqrt", torch.sqrt),
                           ("Reciprocal", torch.reciprocal)):
        cases[f"aclnnForeach{name}"] = (lambda f=function: EmulatedCase(
            {"x": ps}, lists_out, per(f, ps)))
    cases["aclnnForeachZeroInplace"] = lambda: EmulatedCase(
        {"x": [t.copy() for t in xs]}, None, per(lambda t: t.zero_(), xs))
    binaries = (("Add", torch.add), ("Sub", torch.sub), ("Mul", torch.mul), ("Div", torch.div),
                ("Maximum", torch.maximum), ("Minimum", torch.minimum), ("Pow", torch.pow))
    for name, function in binaries:
        first = ps if name == "Pow" else xs
        cases[f"aclnnForeach{name}Scalar"] = (lambda f=function, a=first: EmulatedCase(
            {"x": a, "scalar": np.array([1.5], f32)}, lists_out,
            per(lambda t: f(t, torch.tensor(1.5)), a)))
        cases[f"aclnnForeach{name}ScalarV2"] = (lambda f=function, a=first: EmulatedCase(
            {"x": a, "scalar": 1.5}, lists_out, per(lambda t: f(t, torch.tensor(1.5)), a)))
        cases[f"aclnnForeach{name}ScalarList"] = (lambda f=function, a=first: EmulatedCase(
            {"x": a, "scalars": [1.5] * len(a)}, lists_out,
            per(lambda t: f(t, torch.tensor(1.5)), a)))
        second = ps if name == "Div" else ys
        if name in ("Add", "Sub"):
            cases[f"aclnnForeach{name}List"] = (lambda f=function, b=second: EmulatedCase(
                {"x1": xs, "x2": b, "alpha": np.array([0.5], f32)}, lists_out,
                per(lambda s, t: f(s, t, alpha=0.5), xs, b)))
            cases[f"aclnnForeach{name}ListV2"] = (lambda f=function, b=second: EmulatedCase(
                {"x1": xs, "x2": b, "alpha": 0.5}, lists_out,
                per(lambda s, t: f(s, t, alpha=0.5), xs, b)))
        else:
            cases[f"aclnnForeach{name}List"] = (lambda f=function, a=first, b=second:
                                                EmulatedCase({"x1": a, "x2": b}, lists_out,
                                                             per(f, a, b)))
    cases["aclnnForeachPowScalarAndTensor"] = lambda: EmulatedCase(
        {"scalar": 1.5, "x": xs}, lists_out, per(lambda t: torch.pow(1.5, t), xs))
    for name, function in (("Addcdiv", torch.addcdiv), ("Addcmul", torch.addcmul)):
        for suffix, scalar in (("List", np.full(4, 0.5, f32)),
                               ("ScalarList", np.full(4, 0.5, f32)),
                               ("Scalar", np.array([0.5], f32)), ("ScalarV2", 0.5)):
            key = "scalars" if suffix.endswith("List") else "scalar"
            cases[f"aclnnForeach{name}{suffix}"] = (lambda f=function, k=key, v=scalar:
                                                    EmulatedCase(
                {"x1": xs, "x2": ys, "x3": ps, k: v}, lists_out,
                per(lambda a, b, c: f(a, b, c, value=0.5), xs, ys, ps)))
    cases["aclnnForeachLerpList"] = lambda: EmulatedCase(
        {"x1": xs, "x2": ys, "weight": us}, lists_out, per(torch.lerp, xs, ys, us))
    cases["aclnnForeachLerpScalar"] = lambda: EmulatedCase(
        {"x1": xs, "x2": ys, "weight": 0.25}, lists_out,
        per(lambda a, b: torch.lerp(a, b, 0.25), xs, ys))
    cases["aclnnForeachNorm"] = lambda: EmulatedCase(
        {"x": xs, "scalar": 2.0}, [E((1,))] * 4, per(torch.linalg.vector_norm, xs))
    cases["aclnnForeachNonFiniteCheckAndUnscale"] = lambda: EmulatedCase(
        {"scaledGrads": [t.copy() for t in xs], "foundInf": np.zeros(1, f32),
         "invScale": np.ones(1, f32)}, None, per(lambda t: t.mul_(1.0), xs))
    cases["aclnnForeachRoundOffNumber"] = lambda: EmulatedCase(
        {"x": xs, "roundMode": np.array([2], np.int8)}, lists_out, per(torch.floor, xs))
    cases["aclnnForeachRoundOffNumberV2"] = lambda: EmulatedCase(
        {"x": xs, "roundMode": np.int8(2)}, lists_out, per(torch.floor, xs))


def _cases_tensor_bounds(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Clamps with tensor bounds, fills with a tensor."""
    torch = inputs.torch
    T, E = torch.from_numpy, _out_spec
    in_place = inputs.in_place
    n, f32 = EMULATED_N, np.float32
    x, y = inputs.x, inputs.y
    cases["aclnnClampTensor"] = lambda: EmulatedCase(
        {"self": x, "clipValueMin": np.full(n, -1, f32), "clipValueMax": np.ones(n, f32)},
        E((n,)), lambda: torch.clamp(T(x), T(np.full(n, -1, f32)), T(np.ones(n, f32))))
    cases["aclnnClampMinTensor"] = lambda: EmulatedCase(
        {"self": x, "clipValueMin": y}, E((n,)), lambda: torch.clamp_min(T(x), T(y)))
    cases["aclnnClampMaxTensor"] = lambda: EmulatedCase(
        {"self": x, "max": y}, E((n,)), lambda: torch.clamp_max(T(x), T(y)))
    cases["aclnnInplaceFillTensor"] = lambda: in_place(
        {"selfRef": x.copy(), "value": np.array([2.5], f32)}, x, lambda t: t.fill_(2.5))
    cases["aclnnInplaceMaskedFillTensor"] = lambda: in_place(
        {"selfRef": x.copy(), "mask": x > 0, "value": np.array(2.5, f32)}, x,
        lambda t: t.masked_fill_(T(x > 0), 2.5))


def _cases_more_activations(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """More activations (kernels/activations.py)."""
    torch = inputs.torch
    F, T, E = torch.nn.functional, torch.from_numpy, _out_spec
    in_place, unary = inputs.in_place, inputs.unary
    n, f32 = EMULATED_N, np.float32
    x, y, pos, prob = inputs.x, inputs.y, inputs.pos, inputs.prob
    for name, parameter, source, function in (
            ("Selu", "self", x, F.selu), ("Softsign", "self", x, F.softsign),
            ("LogSigmoid", "self", x, F.logsigmoid),
            ("SquaredRelu", "input", x, lambda t: torch.square(torch.relu(t))),
            ("Acosh", "self", pos + 1, torch.acosh), ("Asinh", "input", x, torch.asinh)):
        cases[f"aclnn{name}"] = unary(source, function, parameter)
    cases["aclnnSignbit"] = lambda: EmulatedCase({"self": x}, E((n,), bool),
                                                 lambda: torch.signbit(T(x)))
    cases["aclnnCelu"] = lambda: EmulatedCase({"self": x, "alpha": f32(0.5)}, E((n,)),
                                              lambda: F.celu(T(x), 0.5))
    for name, function in (("Hardshrink", F.hardshrink), ("Softshrink", F.softshrink)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": x, "lambd": f32(0.5)}, E((n,)), lambda: f(T(x), 0.5)))
    cases["aclnnThreshold"] = lambda: EmulatedCase(
        {"self": x, "threshold": f32(0.5), "value": f32(-1.0)}, E((n,)),
        lambda: F.threshold(T(x), 0.5, -1.0))
    cases["aclnnInplaceThreshold"] = lambda: in_place(
        {"selfRef": x.copy(), "threshold": f32(0.5), "value": f32(-1.0)}, x,
        lambda t: F.threshold_(t, 0.5, -1.0))
    cases["aclnnSwish"] = lambda: EmulatedCase({"self": x, "betaOptional": f32(1.0)}, E((n,)),
                                               lambda: F.silu(T(x)))
    cases["aclnnPrelu"] = lambda: EmulatedCase(
        {"self": x, "weight": np.array([0.25], f32)}, E((n,)),
        lambda: F.prelu(T(x), T(np.array([0.25], f32))))
    cases["aclnnAddRelu"] = lambda: EmulatedCase(
        {"self": x, "other": y, "alpha": f32(1.0)}, E((n,)), lambda: torch.relu(T(x) + T(y)))
    cases["aclnnInplaceAddRelu"] = lambda: in_place(
        {"selfRef": x.copy(), "other": y, "alpha": f32(1.0)}, x,
        lambda t: torch.relu_(t.add_(T(y))))
    cases["aclnnNanToNum"] = lambda: EmulatedCase(
        {"self": x, "nan": 0.0, "posinf": 1.0, "neginf": -1.0}, E((n,)),
        lambda: torch.nan_to_num(T(x), 0.0, 1.0, -1.0))
    cases["aclnnHeaviside"] = lambda: EmulatedCase(
        {"input": x, "values": y}, E((n,)), lambda: torch.heaviside(T(x), T(y)))
    cases["aclnnLogit"] = lambda: EmulatedCase({"input": prob, "eps": 0.01}, E((n,)),
                                               lambda: torch.logit(T(prob), 0.01))
    cases["aclnnIsClose"] = lambda: EmulatedCase(
        {"self": x, "other": y, "rtol": 1e-5, "atol": 1e-8, "equalNan": False},
        E((n,), bool), lambda: torch.isclose(T(x), T(y)))


def _cases_pointwise_math(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """ops-math math/: pointwise math (kernels/pointwise_math.py) and bitwise operators
    (kernels/bitwise.py)."""
    torch = inputs.torch
    T, E = torch.from_numpy, _out_spec
    rng, unary = inputs.rng, inputs.unary
    n, f32 = EMULATED_N, np.float32
    x, y, pos, unit = inputs.x, inputs.y, inputs.pos, inputs.unit
    for name, parameter, source, function in (
            ("Erfc", "self", x, torch.erfc), ("Exp2", "self", x, torch.exp2),
            ("Sinc", "self", x, torch.sinc), ("Lgamma", "self", pos, torch.lgamma),
            ("Digamma", "self", pos, torch.digamma), ("Atanh", "input", unit, torch.atanh)):
        cases[f"aclnn{name}"] = unary(source, function, parameter)
    for name, parameter, function in (
            ("IsFinite", "self", torch.isfinite), ("IsInf", "x", torch.isinf),
            ("IsPosInf", "self", torch.isposinf), ("IsNegInf", "self", torch.isneginf)):
        cases[f"aclnn{name}"] = (lambda p=parameter, f=function: EmulatedCase(
            {p: x}, E((n,), bool), lambda: f(T(x))))
    for name, first, second, function in (
            ("LogAddExp", x, y, torch.logaddexp), ("LogAddExp2", x, y, torch.logaddexp2),
            ("XLogYTensor", x, pos, torch.xlogy), ("FmodTensor", x, pos, torch.fmod),
            ("RemainderTensorTensor", x, pos, torch.remainder)):
        cases[f"aclnn{name}"] = (lambda a=first, b=second, f=function: EmulatedCase(
            {"self": a, "other": b}, E((n,)), lambda: f(T(a), T(b))))
    for name, first, second, function in (
            ("XLogYScalarOther", x, 2.5, torch.xlogy), ("FmodScalar", x, 0.75, torch.fmod),
            ("RemainderTensorScalar", x, 0.75, torch.remainder),
            ("FloorDivides", x, 0.75, torch.floor_divide)):
        cases[f"aclnn{name}"] = (lambda a=first, b=second, f=function: EmulatedCase(
            {"self": a, "other": f32(b)}, E((n,)), lambda: f(T(a), b)))
    for name, function in (("XLogYScalarSelf", torch.xlogy),
                           ("RemainderScalarTensor", torch.remainder)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": f32(1.5), "other": pos}, E((n,)),
            lambda: f(torch.tensor(1.5), T(pos))))
    cases["aclnnRoundDecimals"] = lambda: EmulatedCase(
        {"self": x, "decimals": 1}, E((n,)), lambda: torch.round(T(x), decimals=1))
    ints = rng.integers(-1000, 1000, n).astype(np.int32)
    small = rng.integers(0, 8, n).astype(np.int32)
    for name, function in (("Gcd", torch.gcd), ("BitwiseAndTensor", torch.bitwise_and),
                           ("BitwiseOrTensor", torch.bitwise_or),
                           ("BitwiseXorTensor", torch.bitwise_xor)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": ints, "other": small}, E((n,), np.int32),
            lambda: f(T(ints), T(small))))
    for name, parameter, function in (("LeftShift", "self", torch.bitwise_left_shift),
                                      ("RightShift", "input", torch.bitwise_right_shift)):
        cases[f"aclnn{name}"] = (lambda p=parameter, f=function: EmulatedCase(
            {p: ints, "shiftBits": small}, E((n,), np.int32), lambda: f(T(ints), T(small))))
    for name, parameter, function in (("BitwiseAndScalar", "other", torch.bitwise_and),
                                      ("BitwiseOrScalar", "other", torch.bitwise_or),
                                      ("BitwiseXorScalar", "other", torch.bitwise_xor),
                                      ("LeftShifts", "shiftBits", torch.bitwise_left_shift)):
        cases[f"aclnn{name}"] = (lambda p=parameter, f=function: EmulatedCase(
            {"self": ints, p: np.int32(3)}, E((n,), np.int32), lambda: f(T(ints), 3)))
    cases["aclnnBitwiseNot"] = lambda: EmulatedCase(
        {"self": ints}, E((n,), np.int32), lambda: torch.bitwise_not(T(ints)))


def _cases_dim_reductions(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """ops-math math/: reductions along dimensions (kernels/dim_reductions.py), outer and
    cross products and shrinks' backward."""
    torch = inputs.torch
    aten, T, E = torch.ops.aten, torch.from_numpy, _out_spec
    u, in_place = inputs.uniform, inputs.in_place
    n, f32 = EMULATED_N, np.float32
    x, y, g = inputs.x, inputs.y, inputs.g
    rows = u(-3, 3, (n // 64, 64))
    r = rows.shape[0]
    cases["aclnnAll"] = lambda: EmulatedCase(
        {"self": rows > -2, "dim": [1], "keepdim": False}, E((r,), bool),
        lambda: torch.all(T(rows > -2), dim=1))
    cases["aclnnAny"] = lambda: EmulatedCase(
        {"self": rows > 2, "dim": [1], "keepdim": False}, E((r,), bool),
        lambda: torch.any(T(rows > 2), dim=1))
    for name, function in (("MaxDim", torch.max), ("MinDim", torch.min)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": rows, "dim": 1, "keepdim": False},
            {"out": E((r,)), "indices": E((r,), np.int64)}, lambda: f(T(rows), 1)))
    for name, function in (("Cummax", torch.cummax), ("Cummin", torch.cummin)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": rows, "dim": 1},
            {"valuesOut": E(rows.shape), "indicesOut": E(rows.shape, np.int64)},
            lambda: f(T(rows), 1)))
    cases["aclnnAminmax"] = lambda: EmulatedCase(
        {"self": rows, "dim": [1], "keepDim": False}, {"minOut": E((r,)), "maxOut": E((r,))},
        lambda: torch.aminmax(T(rows), dim=1))
    cases["aclnnAminmaxDim"] = lambda: EmulatedCase(
        {"self": rows, "dim": 1, "keepDim": False}, {"minOut": E((r,)), "maxOut": E((r,))},
        lambda: torch.aminmax(T(rows), dim=1))
    cases["aclnnAminmaxAll"] = lambda: EmulatedCase(
        {"self": x}, {"minOut": E(()), "maxOut": E(())}, lambda: torch.aminmax(T(x)))
    cases["aclnnLogSumExp"] = lambda: EmulatedCase(
        {"self": rows, "dim": [1], "keepDim": False}, E((r,)),
        lambda: torch.logsumexp(T(rows), 1))
    cases["aclnnReduceNansum"] = lambda: EmulatedCase(
        {"self": rows, "dim": [1], "keepDim": False, "dtype": np.dtype(f32)}, E((r,)),
        lambda: torch.nansum(T(rows), 1))
    cases["aclnnProdDim"] = lambda: EmulatedCase(
        {"self": rows, "dim": 1, "keepDim": False, "dtype": np.dtype(f32)}, E((r,)),
        lambda: torch.prod(T(rows), 1))
    cases["aclnnCumprod"] = lambda: EmulatedCase(
        {"input": rows, "dim": np.int64(1), "dtype": np.dtype(f32)}, E(rows.shape),
        lambda: torch.cumprod(T(rows), 1))
    cases["aclnnInplaceCumprod"] = lambda: in_place(
        {"input": rows.copy(), "dim": np.int32(1)}, rows, lambda t: t.cumprod_(1))
    for name, function in (("MaxN", torch.maximum), ("MinN", torch.minimum)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"tensors": [x, y]}, E((n,)), lambda: f(T(x), T(y))))
    cases["aclnnEqual"] = lambda: EmulatedCase(
        {"self": x, "other": x.copy()}, E((1,), bool), lambda: torch.tensor([True]))
    cases["aclnnMaxV2"] = lambda: EmulatedCase(
        {"self": rows, "dims": [1], "keepDims": False, "noopWithEmptyDims": True}, E((r,)),
        lambda: torch.amax(T(rows), 1))
    cases["aclnnMeanV2"] = lambda: EmulatedCase(
        {"self": rows, "dim": [1], "keepDim": False, "noopWithEmptyAxes": True}, E((r,)),
        lambda: torch.mean(T(rows), 1))
    positive = np.abs(rows) + 1
    cases["aclnnReduceLogSum"] = lambda: EmulatedCase(
        {"data": positive, "axes": [1], "keepDims": False, "noopWithEmptyAxes": True}, E((r,)),
        lambda: torch.log(torch.sum(T(positive), 1)))
    images = rows.reshape(8, -1, 8, 8)
    for name, function in (("GlobalAveragePool", torch.mean), ("GlobalMaxPool", torch.amax)):
        cases[f"aclnn{name}"] = (lambda f=function: EmulatedCase(
            {"self": images}, E(images.shape[:2] + (1, 1)),
            lambda: f(T(images), dim=(2, 3), keepdim=True)))
    for name, function, first in (("VarMean", torch.var_mean, "varOut"),
                                  ("StdMeanCorrection", torch.std_mean, "stdOut")):
        cases[f"aclnn{name}"] = (lambda f=function, o=first: EmulatedCase(
            {"self": rows, "dim": [1], "correction": 1, "keepdim": False},
            {o: E((r,)), "meanOut": E((r,))}, lambda: f(T(rows), 1)))
    outer_column, line = u(-1, 1, (1024,)), u(-1, 1, (1024,))
    cases["aclnnGer"] = lambda: EmulatedCase(
        {"self": outer_column, "vec2": line}, E((1024, 1024)),
        lambda: torch.outer(T(outer_column), T(line)))
    plane = u(-1, 1, (1024, 1024))
    cases["aclnnAddr"] = lambda: EmulatedCase(
        {"self": plane, "vec1": outer_column, "vec2": line, "betaOptional": f32(0.5),
         "alphaOptional": f32(2.0)}, E((1024, 1024)),
        lambda: torch.addr(T(plane), T(outer_column), T(line), beta=0.5, alpha=2.0))
    triples, others = u(-1, 1, (n // 3, 3)), u(-1, 1, (n // 3, 3))
    cases["aclnnLinalgCross"] = lambda: EmulatedCase(
        {"self": triples, "other": others, "dim": 1}, E(triples.shape),
        lambda: torch.linalg.cross(T(triples), T(others), dim=1))
    cases["aclnnCumsumV2"] = lambda: EmulatedCase(
        {"self": rows, "dim": 1, "exclusive": False, "reverse": False}, E(rows.shape),
        lambda: torch.cumsum(T(rows), 1))
    for name, parameter, aten_backward in (
            ("Hardshrink", "lambd", aten.hardshrink_backward),
            ("Softshrink", "lambda", aten.softshrink_backward)):
        cases[f"aclnn{name}Backward"] = (lambda p=parameter, f=aten_backward: EmulatedCase(
            {"gradOutput": g, "self": x, p: f32(0.5)}, E((n,)), lambda: f(T(g), T(x), 0.5)))
    cases["aclnnSwishBackward"] = lambda: EmulatedCase(
        {"gradOutput": g, "self": x, "betaOptional": f32(1.0)}, E((n,)),
        lambda: aten.silu_backward(T(g), T(x)))


def _cases_losses_and_gated_units(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Losses of kernels/losses.py, activations' gradients, gated linear units, scaled masked
    softmax, RReLU and CTC loss."""
    torch = inputs.torch
    F, aten, T, E = torch.nn.functional, torch.ops.aten, torch.from_numpy, _out_spec
    rng, u = inputs.rng, inputs.uniform
    n, f32, square = EMULATED_N, np.float32, EMULATED_SQUARE
    x, y, g, prob = inputs.x, inputs.y, inputs.g, inputs.prob
    X, G, image = inputs.X, inputs.G, inputs.image
    Y, target_prob = y.reshape(square), prob.reshape(square)  # X, G: as bound above
    sign = np.sign(Y).astype(f32)
    cases["aclnnKlDiv"] = lambda: EmulatedCase(
        {"self": X, "target": target_prob, "reduction": 1, "logTarget": False}, E(()),
        lambda: F.kl_div(T(X), T(target_prob), reduction="mean"))
    cases["aclnnKlDivBackward"] = lambda: EmulatedCase(
        {"gradOutput": G, "self": X, "target": target_prob, "reduction": 0, "logTarget": False},
        E(square), lambda: -T(target_prob) * T(G))
    cases["aclnnKlDivTargetBackward"] = lambda: EmulatedCase(
        {"gradOutput": G, "self": X, "target": target_prob, "reduction": 0, "logTarget": False},
        E(square), lambda: T(G) * (torch.log(T(target_prob)) - T(X) + 1))
    cases["aclnnSoftMarginLoss"] = lambda: EmulatedCase(
        {"self": X, "target": sign, "reduction": 1}, E(()),
        lambda: F.soft_margin_loss(T(X), T(sign)))
    cases["aclnnSoftMarginLossBackward"] = lambda: EmulatedCase(
        {"gradOutput": G, "self": X, "target": sign, "reduction": 0}, E(square),
        lambda: -T(sign) * torch.sigmoid(-T(sign) * T(X)) * T(G))
    cases["aclnnBinaryCrossEntropyWithLogitsBackward"] = lambda: EmulatedCase(
        {"gradOutput": G, "self": X, "target": target_prob, "weightOptional": None,
         "posWeightOptional": None, "reduction": 0}, E(square),
        lambda: (torch.sigmoid(T(X)) - T(target_prob)) * T(G))
    # image: the (16, 64, 32, 32) view of x bound above
    pixel_labels = rng.integers(0, 64, (16, 32, 32)).astype(np.int64)
    class_weights = u(0.5, 1.5, (64,))
    cases["aclnnNLLLoss2d"] = lambda: EmulatedCase(
        {"self": image, "target": pixel_labels, "weight": class_weights, "reduction": 1,
         "ignoreIndex": -100}, {"out": E(()), "totalWeightOut": E(())},
        lambda: F.nll_loss(T(image), T(pixel_labels), T(class_weights)))
    cases["aclnnNLLLoss2dBackward"] = lambda: EmulatedCase(
        {"gradOutput": g[:16 * 32 * 32].reshape(16, 32, 32), "self": image, "target": pixel_labels,
         "weight": class_weights, "reduction": 0, "ignoreIndex": -100,
         "totalWeight": np.ones((), f32)}, E(image.shape),
        lambda: torch.zeros(image.shape).scatter_(1, T(pixel_labels)[:, None], 1.0))
    classes = rng.integers(0, 1024, 1024).astype(np.int64)
    cases["aclnnCrossEntropyLoss"] = lambda: EmulatedCase(
        {"input": X, "target": classes, "weightOptional": None, "reductionOptional": "mean",
         "ignoreIndex": -100, "labelSmoothing": 0.0, "lseSquareScaleForZloss": 0.0,
         "returnZloss": False},
        {"lossOut": E(()), "logProbOut": E(square), "zlossOut": E(()),
         "lseForZlossOut": E((1024,))},
        lambda: F.cross_entropy(T(X), T(classes)))
    log_prob = np.log(np.exp(X) / np.exp(X).sum(1, keepdims=True)).astype(f32)
    cases["aclnnCrossEntropyLossGrad"] = lambda: EmulatedCase(
        {"gradLoss": np.ones((), f32), "logProb": log_prob, "target": classes,
         "weightOptional": None, "gradZlossOptional": None, "lseForZlossOptional": None,
         "reductionOptional": "mean", "ignoreIndex": -100, "labelSmoothing": 0.0,
         "lseSquareScaleForZloss": 0.0}, E(square),
        lambda: (torch.exp(T(log_prob)) - F.one_hot(T(classes), 1024)) / 1024)
    margin_x = x[:256 * 64].reshape(256, 64)
    margin_t = np.where(rng.random((256, 64)) < 0.9, rng.integers(0, 64, (256, 64)), -1)
    cases["aclnnMultilabelMarginLoss"] = lambda: EmulatedCase(
        {"self": margin_x, "target": margin_t.astype(np.int64), "reduction": 1},
        {"out": E(()), "isTarget": E((256, 64))},
        lambda: F.multilabel_margin_loss(T(margin_x), T(margin_t.astype(np.int64))))
    one, two = f32(1.0), f32(1.2)
    cases["aclnnEluBackward"] = lambda: EmulatedCase(
        {"gradOutput": g, "alpha": one, "scale": two, "inputScale": one, "isResult": False,
         "selfOrResult": x}, E((n,)),
        lambda: aten.elu_backward(T(g), 1.0, 1.2, 1.0, False, T(x)))
    cases["aclnnSeluBackward"] = lambda: EmulatedCase(
        {"gradOutput": g, "result": x}, E((n,)),
        lambda: T(g) * torch.where(T(x) > 0, 1.0507, T(x) + 1.7581))
    channels = u(0.1, 0.3, (64,))
    grad_image_n = g.reshape(image.shape)
    cases["aclnnPreluBackward"] = lambda: EmulatedCase(
        {"gradOutput": grad_image_n, "self": image, "weight": channels},
        {"gradInput": E(image.shape), "gradWeight": E((64,))},
        lambda: aten._prelu_kernel_backward(T(grad_image_n), T(image), T(channels)[:, None, None]))
    cases["aclnnLogSigmoidForward"] = lambda: EmulatedCase(
        {"self": x}, {"out": E((n,)), "buffer": E((n,))},
        lambda: F.logsigmoid(T(x)))
    cases["aclnnLogSigmoidBackward"] = lambda: EmulatedCase(
        {"gradOutput": g, "self": x, "buffer": x}, E((n,)),
        lambda: T(g) * torch.sigmoid(-T(x)))
    cases["aclnnFastGelu"] = lambda: EmulatedCase(
        {"self": x}, E((n,)), lambda: T(x) * torch.sigmoid(1.702 * T(x)))
    cases["aclnnFastGeluBackward"] = lambda: EmulatedCase(
        {"gradOutput": g, "self": x}, E((n,)), lambda: T(g) * torch.sigmoid(1.702 * T(x)))
    cases["aclnnGeluBackwardV2"] = lambda: EmulatedCase(
        {"gradOutput": g, "self": x, "approximate": "none"}, E((n,)),
        lambda: aten.gelu_backward(T(g), T(x)))
    cases["aclnnHardswishBackwardV2"] = lambda: EmulatedCase(
        {"gradOutput": g, "self": x}, E((n,)), lambda: aten.hardswish_backward(T(g), T(x)))
    cases["aclnnShrink"] = lambda: EmulatedCase(
        {"self": x, "lambd": f32(0.5), "bias": f32(0.25)}, E((n,)),
        lambda: F.softshrink(T(x), 0.5))
    cases["aclnnLogitGrad"] = lambda: EmulatedCase(
        {"x": prob, "dy": g, "eps": -1.0}, E((n,)),
        lambda: aten.logit_backward(T(g), T(prob)))
    glu_shape = (1024, 512)
    glu = {"aclnnGeluMul": ({"input": X, "approximateOptional": "none"},
                            lambda: F.gelu(T(X)[:, :512]) * T(X)[:, 512:]),
           "aclnnFatreluMul": ({"input": X, "threshold": np.zeros(1, f32)},
                               lambda: F.relu(T(X)[:, :512]) * T(X)[:, 512:]),
           "aclnnSwiGlu": ({"x": X, "dim": -1},
                           lambda: F.silu(T(X)[:, :512]) * T(X)[:, 512:]),
           "aclnnClippedSwiglu": ({"x": X, "groupIndexOptional": None, "dim": -1,
                                   "alpha": 1.702, "limit": 7.0, "bias": 1.0,
                                   "interleaved": False},
                                  lambda: F.silu(T(X)[:, :512]) * T(X)[:, 512:]),
           "aclnnClippedSwigluV2": ({"x": X, "groupIndexOptional": None, "dim": -1,
                                     "alpha": 1.702, "limit": 7.0, "bias": 1.0,
                                     "interleaved": False, "clampMode": 0},
                                    lambda: F.silu(T(X)[:, :512]) * T(X)[:, 512:]),
           "aclnnSituGlu": ({"x": X, "dim": -1, "beta": 1.0, "linearBeta": 0.0,
                             "activateLeft": True},
                            lambda: torch.tanh(T(X)[:, :512]) * torch.sigmoid(T(X)[:, :512])
                            * T(X)[:, 512:]),
           "aclnnSwigluGroup": ({"x": X, "weightOptional": None, "groupIndexOptional": None,
                                 "clampLimit": 0.0},
                                lambda: F.silu(T(X)[:, :512]) * T(X)[:, 512:])}
    for name, (arguments, function) in glu.items():
        cases[name] = (lambda a=arguments, f=function: EmulatedCase(a, E(glu_shape), f))
    for name in ("aclnnGeGlu", "aclnnGeGluV3"):
        extra = {"activateLeft": False} if name.endswith("V3") else {}
        cases[name] = (lambda e=extra: EmulatedCase(
            {"self": X, "dim": -1, "approximate": 0, **e},
            {"out": E(glu_shape), "outGelu": E(glu_shape)},
            lambda: T(X)[:, :512] * F.gelu(T(X)[:, 512:])))
    GH = G[:, :512].copy()
    grads = {"aclnnSwiGluGrad": {"yGrad": GH, "x": X, "dim": -1},
             "aclnnGeGluBackward": {"gradOutput": GH, "self": X, "gelu": GH, "dim": -1,
                                    "approximate": 0},
             "aclnnGeGluV3Backward": {"gradOutput": GH, "self": X, "gelu": GH, "dim": -1,
                                      "approximate": 0, "activateLeft": False},
             "aclnnClippedSwigluGrad": {"gradY": GH, "x": X, "groupIndexOptional": None,
                                        "dim": -1, "alpha": 1.702, "limit": 7.0, "bias": 1.0,
                                        "interleaved": False},
             "aclnnSituGluGrad": {"gradY": GH, "x": X, "dim": -1, "beta": 1.0,
                                  "linearBeta": 0.0, "activateLeft": True}}

    def glu_backward() -> Any:
        a, b = T(X)[:, :512], T(X)[:, 512:]
        s = torch.sigmoid(a)
        return torch.cat([T(GH) * (s + s * (1 - s) * a) * b, T(GH) * s * a], 1)

    for name, arguments in grads.items():
        cases[name] = (lambda a=arguments: EmulatedCase(a, E(square), glu_backward))
    scores = x.reshape(16, 16, 64, 64)
    attention = rng.random((16, 1, 64, 64)) < 0.2
    cases["aclnnScaledMaskedSoftmax"] = lambda: EmulatedCase(
        {"x": scores, "mask": attention, "scale": 0.125, "fixedTriuMask": False},
        E(scores.shape),
        lambda: torch.softmax((T(scores) * 0.125).masked_fill(T(attention), -10000.0), -1))
    probabilities = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    cases["aclnnScaledMaskedSoftmaxBackward"] = lambda: EmulatedCase(
        {"gradOutput": g.reshape(scores.shape), "y": probabilities, "mask": attention,
         "scale": 0.125, "fixTriuMask": False}, E(scores.shape),
        lambda: aten._softmax_backward_data(T(g.reshape(scores.shape)), T(probabilities), -1,
                                            torch.float32) * 0.125)
    for name in ("aclnnRReluWithNoise", "aclnnInplaceRReluWithNoise"):
        out = E((n,)) if name == "aclnnRReluWithNoise" else None
        cases[name] = (lambda o=out: EmulatedCase(
            {"self": x.copy(), "noise": np.zeros(n, f32), "lower": f32(0.125),
             "upper": f32(0.375), "training": True, "seed": 0, "offset": 0},
            o, lambda: F.rrelu(T(x), 0.125, 0.375, training=True)))
    ctc_probs = np.log(prob[:128 * 32 * 64].reshape(128, 32, 64))
    ctc_targets = rng.integers(1, 64, (32, 30)).astype(np.int64)
    cases["aclnnCtcLoss"] = lambda: EmulatedCase(
        {"logProbs": ctc_probs, "targets": ctc_targets, "inputLengths": [128] * 32,
         "targetlengths": [30] * 32, "blank": 0, "zeroInfinity": False},
        {"negLogLikelihoodOut": E((32,)), "logAlphaOut": E((32, 128, 64))},
        lambda: aten._ctc_loss(T(ctc_probs), T(ctc_targets), [128] * 32, [30] * 32, 0, False))


def _cases_random(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Random fills (kernels/random_fills.py): PyTorch's generators as the speed reference."""
    torch = inputs.torch
    aten, T, E = torch.ops.aten, torch.from_numpy, _out_spec
    rng, u, in_place = inputs.rng, inputs.uniform, inputs.in_place
    n = EMULATED_N
    x, g, pos, prob = inputs.x, inputs.g, inputs.pos, inputs.prob
    generated = torch.Generator().manual_seed(0)
    seeds = {"seedTensor": np.array([1], np.int64), "offsetTensor": np.array([0], np.int64)}
    cases["aclnnInplaceNormal"] = lambda: in_place(
        {"selfRef": x.copy(), "mean": 0.0, "std": 1.0, "seed": 1, "offset": 0}, x,
        lambda t: t.normal_(0.0, 1.0, generator=generated))
    cases["aclnnInplaceNormalTensor"] = lambda: in_place(
        {"selfRef": x.copy(), "mean": 0.0, "std": 1.0, **seeds, "offset": 0}, x,
        lambda t: t.normal_(0.0, 1.0, generator=generated))
    for name, tensor_seeds in (("Uniform", False), ("UniformTensor", True)):
        cases[f"aclnnInplace{name}"] = (lambda tensor=tensor_seeds: in_place(
            {"selfRef": x.copy(), "from": -1.0, "to": 1.0,
             **(seeds if tensor else {"seed": 1}), "offset": 0}, x,
            lambda t: t.uniform_(-1.0, 1.0, generator=generated)))
    for name, tensor_seeds in (("Random", False), ("RandomTensor", True)):
        cases[f"aclnnInplace{name}"] = (lambda tensor=tensor_seeds: in_place(
            {"selfRef": x.copy(), "from": 0, "to": 100,
             **(seeds if tensor else {"seed": 1}), "offset": 0}, x,
            lambda t: t.random_(0, 100, generator=generated)))
    for name, mean_value, std_value in (
            ("FloatFloat", 0.0, 1.0), ("FloatTensor", 0.0, pos), ("TensorFloat", x, 1.0),
            ("TensorTensor", x, pos)):
        cases[f"aclnnNormal{name}"] = (lambda m=mean_value, d=std_value: EmulatedCase(
            {"mean": m, "std": d, "seed": 1, "offset": 0}, E((n,)),
            lambda: torch.normal(T(m) if isinstance(m, np.ndarray) else torch.full((n,), m),
                                 T(d) if isinstance(d, np.ndarray) else torch.full((n,), d),
                                 generator=generated)))
    cases["aclnnBernoulli"] = lambda: EmulatedCase(
        {"self": x, "prob": 0.3, "seed": 1, "offset": 0}, E((n,)),
        lambda: torch.bernoulli(torch.full((n,), 0.3), generator=generated))
    cases["aclnnBernoulliTensor"] = lambda: EmulatedCase(
        {"self": x, "prob": prob, "seed": 1, "offset": 0}, E((n,)),
        lambda: torch.bernoulli(T(prob), generator=generated))
    mask_size = (n + 127) // 128 * 16
    for name, extra in (("GenMask", {"seed": 1}), ("GenMaskV2", {"seed": 1}),
                        ("GenMaskV2Tensor", seeds)):
        arguments = {"shape": [n], "prob": 0.25, **extra, "offset": 0}
        if name != "GenMask":
            arguments["probDataType"] = np.dtype(np.float32)
        cases[f"aclnnDropout{name}"] = (lambda a=arguments: EmulatedCase(
            a, E((mask_size,), np.uint8),
            lambda: aten.native_dropout(T(x), 0.25, True)[1]))
    mask = np.packbits(rng.integers(0, 2, mask_size * 8).astype(np.uint8), bitorder="little")
    keep = T(np.unpackbits(mask, count=n, bitorder="little").astype(bool))
    cases["aclnnDropoutDoMask"] = lambda: EmulatedCase(
        {"self": x, "mask": mask, "prob": 0.25}, E((n,)),
        lambda: aten.native_dropout_backward(T(x), keep, 1 / 0.75))
    cases["aclnnDropoutBackward"] = lambda: EmulatedCase(
        {"gradOutput": g, "mask": mask, "scale": 2.0}, E((n,)),
        lambda: aten.native_dropout_backward(T(g), keep, 2.0))
    weights = u(0.1, 1.0, (1024, 1024))
    for name, extra in (("Multinomial", {"seed": 1}), ("MultinomialTensor", seeds)):
        cases[f"aclnn{name}"] = (lambda e=extra: EmulatedCase(
            {"self": weights, "numsamples": 64, "replacement": True, **e, "offset": 0},
            E((1024, 64), np.int64),
            lambda: torch.multinomial(T(weights), 64, True, generator=generated)))
    cases["aclnnRandperm"] = lambda: EmulatedCase(
        {"n": n, "seed": 1, "offset": 0}, E((n,), np.int64),
        lambda: torch.randperm(n, generator=generated))


def _cases_counting(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Enumeration, counting, lookup and list sums (kernels/counting.py)."""
    torch = inputs.torch
    F, T, E = torch.nn.functional, torch.from_numpy, _out_spec
    rng, u = inputs.rng, inputs.uniform
    n, f32 = EMULATED_N, np.float32
    x, y, g = inputs.x, inputs.y, inputs.g
    cases["aclnnRange"] = lambda: EmulatedCase(
        {"start": 0.0, "end": float(n - 1), "step": 1.0}, E((n,)),
        lambda: torch.arange(0.0, float(n), 1.0))
    hot_labels = rng.integers(0, 16, (n // 16,)).astype(np.int64)
    cases["aclnnOneHot"] = lambda: EmulatedCase(
        {"self": hot_labels, "numClasses": 16, "onValue": np.ones(1, f32),
         "offValue": np.zeros(1, f32), "axis": -1}, E((n // 16, 16)),
        lambda: F.one_hot(T(hot_labels), 16).float())
    cases["aclnnHistc"] = lambda: EmulatedCase(
        {"self": x, "bins": 100, "min": -3.0, "max": 3.0}, E((100,)),
        lambda: torch.histc(T(x), 100, -3.0, 3.0))
    sorted_rows = np.sort(u(-3, 3, (1024,)))
    cases["aclnnSearchSorted"] = lambda: EmulatedCase(
        {"sortedSequence": sorted_rows, "self": x, "outInt32": False, "right": False,
         "sorter": None}, E((n,), np.int64), lambda: torch.searchsorted(T(sorted_rows), T(x)))
    cases["aclnnSearchSorteds"] = lambda: EmulatedCase(
        {"sortedSequence": np.sort(x), "self": 0.5, "outInt32": False, "right": False,
         "sorter": None}, E((1,), np.int64),
        lambda: torch.searchsorted(T(np.sort(x)), torch.tensor([0.5])))
    cases["aclnnIsInScalarTensor"] = lambda: EmulatedCase(
        {"element": 0.5, "testElements": x, "assumeUnique": False, "invert": False},
        E((), np.bool_), lambda: torch.isin(torch.tensor(0.5), T(x)))
    cases["aclnnIsInTensorScalar"] = lambda: EmulatedCase(
        {"element": x, "testElement": 0.5, "assumeUnique": False, "invert": False},
        E((n,), np.bool_), lambda: torch.isin(T(x), torch.tensor(0.5)))
    for name in ("AddN", "Sum"):
        cases[f"aclnn{name}"] = lambda: EmulatedCase(
            {"tensors": [x, y, g]}, E((n,)), lambda: torch.stack([T(x), T(y), T(g)]).sum(0))


def _cases_linalg(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Linear algebra (kernels/linalg.py) over 1024 matrices of 32 x 32, cdist, bincount and
    scale."""
    torch = inputs.torch
    aten, T, E = torch.ops.aten, torch.from_numpy, _out_spec
    rng, u = inputs.rng, inputs.uniform
    n, f32 = EMULATED_N, np.float32
    x = inputs.x
    batch = (np.eye(32, dtype=f32) * 4 + u(-0.5, 0.5, (1024, 32, 32))).astype(f32)
    spd = (batch @ batch.transpose(0, 2, 1)).astype(f32)
    right = u(-1, 1, (1024, 32, 8))
    cases["aclnnInverse"] = lambda: EmulatedCase(
        {"self": batch}, E(batch.shape), lambda: torch.linalg.inv(T(batch)))
    cases["aclnnLinalgCholesky"] = lambda: EmulatedCase(
        {"self": spd, "upper": False}, E(spd.shape), lambda: torch.linalg.cholesky(T(spd)))
    cases["aclnnTriangularSolve"] = lambda: EmulatedCase(
        {"self": right, "A": batch, "upper": True, "transpose": False,
         "unitriangular": False}, (E(right.shape), E(batch.shape)),
        lambda: torch.triangular_solve(T(right), T(batch), upper=True))
    cases["aclnnSlogdet"] = lambda: EmulatedCase(
        {"self": batch}, (E((1024,)), E((1024,))), lambda: torch.linalg.slogdet(T(batch)))
    cases["aclnnLogdet"] = lambda: EmulatedCase(
        {"self": batch}, E((1024,)), lambda: torch.logdet(T(batch)))
    cases["aclnnLinalgQr"] = lambda: EmulatedCase(
        {"self": batch, "mode": 0}, (E(batch.shape), E(batch.shape)),
        lambda: torch.linalg.qr(T(batch)))
    cases["aclnnQr"] = lambda: EmulatedCase(
        {"self": batch, "some": True}, (E(batch.shape), E(batch.shape)),
        lambda: torch.linalg.qr(T(batch)))
    cases["aclnnSvd"] = lambda: EmulatedCase(
        {"input": batch, "fullMatrices": False, "computeUV": True},
        (E((1024, 32)), E(batch.shape), E(batch.shape)), lambda: torch.svd(T(batch)))
    points1, points2 = u(-1, 1, (16, 256, 16)), u(-1, 1, (16, 256, 16))
    cases["aclnnCdist"] = lambda: EmulatedCase(
        {"x1": points1, "x2": points2, "p": 2.0, "compute_mode": 2}, E((16, 256, 256)),
        lambda: torch.cdist(T(points1), T(points2),
                            compute_mode="donot_use_mm_for_euclid_dist"))
    cdist_values = np.sqrt(np.sum(np.square(points1[:, :, None, :] - points2[:, None, :, :]),
                                  axis=-1)).astype(f32)
    cdist_grad = u(-1, 1, (16, 256, 256))
    cases["aclnnCdistBackward"] = lambda: EmulatedCase(
        {"grad": cdist_grad, "x1": points1, "x2": points2, "cdist": cdist_values, "p": 2.0},
        E(points1.shape), lambda: aten._cdist_backward(T(cdist_grad), T(points1), T(points2),
                                                       2.0, T(cdist_values)))
    bins = rng.integers(0, 1000, (n,)).astype(np.int32)
    cases["aclnnBincount"] = lambda: EmulatedCase(
        {"self": bins, "weights": x, "minlength": 1000}, E((1000,)),
        lambda: torch.bincount(T(bins), T(x), minlength=1000))
    scale_x = x.reshape(16, 64, 1024)
    scale_s, scale_b = u(0.5, 1.5, (64,)), u(-1, 1, (64,))
    cases["aclnnScale"] = lambda: EmulatedCase(
        {"x": scale_x, "scale": scale_s, "bias": scale_b, "axis": 1, "numAxes": 1,
         "scaleFromBlob": True}, E(scale_x.shape),
        lambda: T(scale_x) * T(scale_s).reshape(1, 64, 1) + T(scale_b).reshape(1, 64, 1))


def _cases_segsum_quantize(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Exp segsum and its backward, and quantize."""
    torch = inputs.torch
    T, E = torch.from_numpy, _out_spec
    rng, u = inputs.rng, inputs.uniform
    f32 = np.float32
    x = inputs.x
    # through aclnn_py.call CANN refuses these (their op_api takes ND only, a call's 3-d to 5-d
    # tensors are NCL, NCHW, NCDHW): the table reports the refusal
    segsum_x = u(-0.1, 0, (4, 64, 64))
    segsum_below = torch.tril(torch.ones(64, 64, dtype=torch.bool), -1)
    segsum_above = torch.triu(torch.ones(64, 64, dtype=torch.bool), 1)

    def segsum_torch() -> Any:
        values = T(segsum_x)[..., None].expand(4, 64, 64, 64).masked_fill(~segsum_below, 0)
        return torch.exp(torch.cumsum(values, -2).masked_fill(segsum_above, -torch.inf))

    cases["aclnnExpSegsum"] = lambda: EmulatedCase(
        {"self": segsum_x}, E((4, 64, 64, 64)), segsum_torch)
    segsum_g, segsum_y = u(-1, 1, (1, 4, 64, 64, 64)), u(0, 1, (1, 4, 64, 64, 64))

    def segsum_backward_torch() -> Any:
        product = (T(segsum_g) * T(segsum_y)).masked_fill(~segsum_below, 0)
        suffix = torch.flip(torch.cumsum(torch.flip(product, [-2]), -2), [-2])
        return suffix.masked_fill(~segsum_below, 0).sum(-1)

    cases["aclnnExpSegsumBackward"] = lambda: EmulatedCase(
        {"gradOutput": segsum_g, "gradSelf": segsum_y,
         "gradInput": np.empty((1, 4, 64, 64), f32)},
        None,
        segsum_backward_torch)
    quant_x = x.reshape(1024, 1024)
    quant_scales, quant_zero = u(0.01, 0.05, (1024,)), rng.integers(-5, 5, 1024).astype(np.int32)
    cases["aclnnQuantize"] = lambda: EmulatedCase(
        {"x": quant_x, "scales": quant_scales, "zeroPoints": quant_zero, "dtype": np.int8,
         "axis": 1},
        E(quant_x.shape, np.int8),
        lambda: torch.round(T(quant_x) / T(quant_scales) + T(quant_zero)).clamp(-128, 127)
        .to(torch.int8))


def _cases_complex(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """Complex numbers (kernels/complex_numbers.py)."""
    torch = inputs.torch
    T, E = torch.from_numpy, _out_spec
    n = EMULATED_N
    x, y, pos = inputs.x, inputs.y, inputs.pos
    z = (x + 1j * y).astype(np.complex64)
    cases["aclnnComplex"] = lambda: EmulatedCase(
        {"real": x, "imag": y}, E((n,), np.complex64), lambda: torch.complex(T(x), T(y)))
    cases["aclnnReal"] = lambda: EmulatedCase(
        {"self": z}, E((n,)), lambda: torch.real(T(z)).clone())
    cases["aclnnPolar"] = lambda: EmulatedCase(
        {"input": pos, "angle": x}, E((n,), np.complex64), lambda: torch.polar(T(pos), T(x)))
    cases["aclnnAngleV2"] = lambda: EmulatedCase(
        {"x": z}, E((n,)), lambda: torch.angle(T(z)))


def _cases_in_place_forms(inputs: _EmulatedInputs, cases: EmulatedBuilders) -> None:
    """In-place forms: the out-of-place case's inputs, its first tensor updated (a copy of it).
    Each reads the out-of-place builder from ``cases`` when it runs, so this group comes last."""
    from aclnn_py.emulator._kernels import parameters_of
    from aclnn_py.emulator._kernels.inplace import INPLACE_OF

    def inplace_of(name: str, base: str) -> EmulatedCase:
        made = cases[base]()
        base_names = [p for p in parameters_of(base) or () if p != "out"]
        names = parameters_of(name) or ()
        arguments = {names[0]: np.array(made.arguments[base_names[0]], copy=True)}
        arguments.update({target: made.arguments.get(source)
                          for target, source in zip(names[1:], base_names[1:])})
        return EmulatedCase(arguments, None, made.reference)

    for name, base in INPLACE_OF.items():
        cases[name] = (lambda n_=name, b=base: inplace_of(n_, b))


_EMULATED_GROUPS: tuple[Callable[[_EmulatedInputs, EmulatedBuilders], None], ...] = (
    _cases_pointwise, _cases_in_place, _cases_cast_select_clamp, _cases_activations,
    _cases_reductions, _cases_softmax, _cases_norms, _cases_optimizers, _cases_image_norms,
    _cases_losses_conv_pool2d, _cases_pool3d_unpool, _cases_pads, _cases_views_and_copies,
    _cases_shapes_and_indexing, _cases_matmul, _cases_quant, _cases_c_kernels, _cases_foreach,
    _cases_tensor_bounds, _cases_more_activations, _cases_pointwise_math, _cases_dim_reductions,
    _cases_losses_and_gated_units, _cases_random, _cases_counting, _cases_linalg,
    _cases_segsum_quantize, _cases_complex, _cases_in_place_forms)


def _emulated_cases(torch: Any) -> EmulatedBuilders:
    """A builder per computed operator (the C kernels' among them), group after group in the
    order of _EMULATED_GROUPS, the order the groups draw their inputs in."""
    inputs = _EmulatedInputs.draw(torch)
    cases: EmulatedBuilders = {}
    for add_group in _EMULATED_GROUPS:
        add_group(inputs, cases)
    return cases


def _device_out(aclnn_py: Any, out: Any) -> Any:
    """out= on the device: one array (a (shape, dtype) spec), a dict of them by name or a
    tuple of specs (a tuple in that order), or a list (a tensor list)."""
    if out is None:
        return None
    if isinstance(out, dict):
        return tuple(aclnn_py.empty(*spec) for spec in out.values())
    if isinstance(out, list):
        return [aclnn_py.empty(*spec) for spec in out]
    if isinstance(out[1], tuple):  # several specs (a spec is a shape, then a dtype)
        return tuple(aclnn_py.empty(*spec) for spec in out)
    return aclnn_py.empty(*out)


def _device_arguments(aclnn_py: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    def up(value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.ndim:
            return aclnn_py.to_device(value)
        if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
            return [aclnn_py.to_device(v) for v in value]
        return value
    return {key: up(value) for key, value in arguments.items()}


def run_emulated(aclnn_py: Any, quick: bool) -> list[dict[str, Any]]:
    """For every operator the emulator computes (``aclnn_py.emulator.kernels()``): the best
    time of ``aclnn_py.call(name, ..., out=...)`` on device arrays then ``synchronize()``,
    and of PyTorch CPU on one thread computing the same, at about 1 M float32 elements,
    interleaved call by call over a few rounds; empty without PyTorch or off the emulator."""
    if not aclnn_py.emulator.loaded():
        return []
    try:
        import torch
    except ImportError:
        return []
    torch.set_num_threads(1)
    builders = _emulated_cases(torch)
    names = aclnn_py.emulator.kernels()
    missing = sorted(set(names) - set(builders))
    if missing:
        raise RuntimeError(f"no benchmark case for {', '.join(missing)}")
    rounds, repeats = (2, 2) if quick else (5, 3)
    clock, sync = time.perf_counter_ns, aclnn_py.synchronize
    rows = []
    for name in names:
        case = builders[name]()
        arguments = _device_arguments(aclnn_py, case.arguments)
        out = _device_out(aclnn_py, case.out)
        extra = {} if out is None else {"out": out}

        def emulated(arguments: dict[str, Any] = arguments, extra: dict[str, Any] = extra,
                     name: str = name) -> None:
            aclnn_py.call(name, **arguments, **extra)
            sync()

        try:
            emulated()
            case.reference()
        except Exception as error:  # reported in the table, the others still timed
            rows.append({"operator": name, "error": f"{type(error).__name__}: {error}"})
            continue
        best = {"emulator": float("inf"), "torch": float("inf")}
        for _ in range(rounds):
            for _ in range(repeats):
                for mode, call in (("emulator", emulated), ("torch", case.reference)):
                    start = clock()
                    call()
                    best[mode] = min(best[mode], clock() - start)
        del arguments, out, extra
        gc.collect()
        rows.append({"operator": name, "emulator_ns": best["emulator"],
                     "torch_ns": best["torch"], "ratio": best["emulator"] / best["torch"],
                     "goal": 4.0 if name in EMULATED_GOAL else 10.0})
    return rows


def print_emulated(rows: list[dict[str, Any]]) -> None:
    if not rows:
        print("\nevery computed operator against PyTorch: needs the emulator and PyTorch")
        return
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset: every core")
    print(f"\nevery computed operator against PyTorch CPU (one thread), ~{EMULATED_N} float32 "
          "elements, best time (aclnn_py.call on device arrays with out=, then synchronize()); "
          f"numpy's BLAS threads (OPENBLAS_NUM_THREADS): {threads}:")
    print(f"{'operator':<36}{'emulator':>11}{'PyTorch':>11}{'ratio':>9}  goal")
    met = {4.0: [0, 0], 10.0: [0, 0]}
    for row in rows:
        if "error" in row and "not implemented on SoC" in row["error"]:
            print(f"{row['operator']:<36}  not timed: CANN implements it on other SoC families "
                  "only (ACLNN_EMU_SOC chooses the emulated one)")
        elif "error" in row:
            print(f"{row['operator']:<36}  failed: {row['error']}")
    timed = [row for row in rows if "error" not in row]
    for row in sorted(timed, key=lambda r: (r["goal"], -r["ratio"])):
        ok = row["ratio"] <= row["goal"]
        met[row["goal"]][0] += ok
        met[row["goal"]][1] += 1
        mark = f"{'*' if row['goal'] == 4.0 else ' '} <= {row['goal']:.0f}x " + \
            ("met" if ok else "MISSED")
        print(f"{row['operator']:<36}{fmt_time(row['emulator_ns']):>11}"
              f"{fmt_time(row['torch_ns']):>11}{row['ratio']:>8.2f}x {mark}")
    print(f"* the operators of the 4x goal: {met[4.0][0]}/{met[4.0][1]} met; the others (10x): "
          f"{met[10.0][0]}/{met[10.0][1]} met")


# ---- main -------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer repetitions, no 16 M or chunked case (a smoke run)")
    parser.add_argument("--sizes", type=lambda s: [int(v) for v in s.split(",")],
                        help="comma-separated element counts (default 1,1024,1048576,16777216)")
    parser.add_argument("--dtypes", type=lambda s: s.split(","), help="float32,float16")
    parser.add_argument("--no-rss", action="store_true", help="skip the peak-RSS subprocesses")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch (column f)")
    parser.add_argument("--no-operators", action="store_true",
                        help="skip the other operators' table")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="JSON results path")
    parser.add_argument("--profile", action="store_true",
                        help="only profile the 1-element paths with cProfile")
    parser.add_argument("--profile-calls", type=int, default=5000)
    parser.add_argument("--call", action="store_true",
                        help="only compare aclnn_py.call with the curated operators")
    parser.add_argument("--crossover", action="store_true",
                        help="only time staged against direct copies by array size")
    parser.add_argument("--link", metavar="LATENCY_US:GBPS",
                        help="emulator transfer model for the run (sets ACLNN_EMU_LINK), "
                             "e.g. 10:25")
    parser.add_argument("--ray", action="store_true",
                        help="only the Ray example's tasks per second at 1 and 2 NPUs")
    parser.add_argument("--ray-tasks", type=int, default=16, help="tasks per --ray run")
    parser.add_argument("--ray-rounds", type=int, default=3, help="runs per NPU count")
    for name, only, skip in [
            ("headers", "time reading pathological headers at 40 KB and 1 MB",
             "reading pathological headers"),
            ("catalog", "time the first operators() and signature() over 1000 headers, in "
                        "fresh processes", "the catalog of 1000 headers"),
            ("unsynced", "the loop of 1000 calls that never synchronises",
             "the loop of 1000 calls that never synchronises"),
            ("imports", "time import aclnn_py against import numpy, fresh processes",
             "timing the imports"),
            ("scalars", "time a number or numpy scalar grad against a 0-d array",
             "timing scalar grads"),
            ("chunked", "time the calls larger than a 64 MiB device",
             "the calls larger than a 64 MiB device"),
            ("emulated", "time every operator the emulator computes against PyTorch CPU at "
                         "1 M float32 elements", "timing every computed operator"),
            ("peers", "set aclnn_py's per-call cost beside CuPy's and PyTorch's on a CUDA "
                      "GPU, each over its own C floor", "the peers' table")]:
        parser.add_argument(f"--{name}", action="store_true", help=f"only {only}")
        parser.add_argument(f"--no-{name}", action="store_true", help=f"skip {skip}")
    parser.add_argument("--devices", type=int, metavar="N",
                        help="only time one 16 M call split over N emulated devices against "
                             "one device")
    parser.add_argument("--rss-child", help=argparse.SUPPRESS)
    parser.add_argument("--chunked-child", help=argparse.SUPPRESS)
    parser.add_argument("--devices-child", help=argparse.SUPPRESS)
    parser.add_argument("--torch-npu", action="store_true",
                        help="only time mse_loss_backward on real torch_npu tensors against "
                             "DeviceArrays (torch_npu installed beside the emulator's tree)")
    parser.add_argument("--no-torch-npu", action="store_true",
                        help="skip timing real torch_npu tensors")
    parser.add_argument("--torch-npu-child", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def run_child(args: argparse.Namespace) -> bool:
    """Whether this process is a child a bench started (--rss-child, --chunked-child,
    --devices-child, --torch-npu-child), having run it if so."""
    if args.rss_child:
        n, dtype, mode, calls = args.rss_child.split(":")
        rss_child(int(n), dtype, mode, int(calls))
        return True
    if args.chunked_child:
        reduction, calls = args.chunked_child.split(":")
        chunked_child(reduction, int(calls))
        return True
    if args.devices_child:
        count, calls = args.devices_child.split(":")
        devices_child(int(count), int(calls))
        return True
    if args.torch_npu_child:
        rounds, calls = args.torch_npu_child.split(":")
        torch_npu_child(int(rounds), int(calls))
        return True
    return False


def print_study_banner(aclnn_py: Any, info: Mapping[str, Any]) -> None:
    """The first line of a study run alone: aclnn_py, its backend, the CPUs and their load."""
    print(f"aclnn_py {aclnn_py.__version__} on {info['backend']}, {os.cpu_count()} CPUs, "
          f"load {loadavg()}", flush=True)


def write_study(output: Path, name: str, rows: Any) -> None:
    """A study's rows in <name>.json beside --output."""
    output.parent.mkdir(parents=True, exist_ok=True)
    output.with_name(f"{name}.json").write_text(json.dumps(rows, indent=1) + "\n")


def run_devices_alone(aclnn_py: Any, args: argparse.Namespace, info: Mapping[str, Any]) -> int:
    """--devices N: one 16 M call split over N emulated devices against one device."""
    if args.devices < 1:
        print("--devices needs at least 1 device", file=sys.stderr)
        return 2
    if not aclnn_py.emulator.loaded():
        print("--devices times emulated devices; this run is on a real CANN",
              file=sys.stderr)
        return 1
    print_study_banner(aclnn_py, info)
    rows = run_devices(args.devices, args.quick)
    print_devices(rows)
    write_study(args.output, "devices", rows)
    return 0


def run_ray_alone(aclnn_py: Any, args: argparse.Namespace, info: Mapping[str, Any]) -> int:
    """--ray: the Ray example's tasks per second at 1 and 2 emulated NPUs."""
    print_study_banner(aclnn_py, info)
    if not aclnn_py.emulator.loaded():
        print("--ray times emulated NPUs; this run is on a real CANN", file=sys.stderr)
        return 1
    ray_rows = run_ray(args.ray_tasks, 1 if args.quick else args.ray_rounds)
    print_ray(ray_rows)
    write_study(args.output, "ray", ray_rows)
    return 0


def run_alone(aclnn_py: Any, args: argparse.Namespace, info: Mapping[str, Any]) -> int | None:
    """The exit status of the one study the options ask for alone (--profile, --devices,
    --chunked, --ray or a study's own option), None where they ask for the full run."""
    if args.profile:
        profile(aclnn_py, args.profile_calls, 30)
        return 0
    if args.devices is not None:
        return run_devices_alone(aclnn_py, args, info)
    if args.chunked:
        rows = run_chunked(args.quick)
        print_chunked(rows)
        write_study(args.output, "chunked", rows)
        return 0
    studies = {"call": (run_call_comparison, print_call_comparison),
               "crossover": (run_crossover, print_crossover),
               "headers": (run_headers, print_headers),
               "catalog": (run_catalog, print_catalog),
               "unsynced": (run_unsynced, print_unsynced),
               "imports": (run_imports, print_imports),
               "scalars": (run_scalars, print_scalars),
               "emulated": (run_emulated, print_emulated),
               "torch_npu": (run_torch_npu, print_torch_npu),
               "peers": (run_peers, print_peers)}
    for name, (run, show) in studies.items():
        if getattr(args, name):  # one study alone, its rows in <name>.json beside --output
            print_study_banner(aclnn_py, info)
            rows = run(aclnn_py, args.quick)
            show(rows)
            write_study(args.output, name, rows)
            return 0
    if args.ray:
        return run_ray_alone(aclnn_py, args, info)
    return None


class FullRunStudies(NamedTuple):
    """The studies a full run makes after its cases, named as in the results' JSON: [] or None
    where an option skips one."""

    operators: list[dict[str, Any]]
    kernels: list[dict[str, Any]]
    torch: list[dict[str, Any]]
    chunked: list[dict[str, Any]]
    headers: list[dict[str, Any]]
    catalog: list[dict[str, Any]]
    unsynced: dict[str, Any] | None
    scalars: dict[str, Any] | None
    imports: dict[str, Any] | None
    emulated: list[dict[str, Any]]
    torch_npu: dict[str, Any] | None
    peers: list[dict[str, Any]]


def run_full_studies(aclnn_py: Any, args: argparse.Namespace,
                     sizes: list[int]) -> FullRunStudies:
    """Every study of a full run that its options do not skip, one after another."""
    return FullRunStudies(
        operators=[] if args.no_operators else run_operator_cases(
            aclnn_py, [n for n in sizes if n <= 1 << 20], args.quick),
        kernels=[] if args.no_operators else run_kernel_comparison(aclnn_py, [1, 1024],
                                                                   args.quick),
        torch=[] if args.no_operators else run_torch_tensors(aclnn_py, args.quick),
        chunked=[] if args.no_chunked or args.quick else run_chunked(args.quick),
        headers=[] if args.no_headers else run_headers(aclnn_py, args.quick),
        catalog=[] if args.no_catalog else run_catalog(aclnn_py, args.quick),
        unsynced=None if args.no_unsynced else run_unsynced(aclnn_py, args.quick),
        scalars=None if args.no_scalars else run_scalars(aclnn_py, args.quick),
        imports=None if args.no_imports else run_imports(aclnn_py, args.quick),
        emulated=[] if args.no_emulated else run_emulated(aclnn_py, args.quick),
        torch_npu=None if args.no_torch_npu else run_torch_npu(aclnn_py, args.quick),
        peers=[] if args.no_peers else run_peers(aclnn_py, args.quick))


def print_full_studies(studies: FullRunStudies) -> None:
    """The full run's studies after its own table, each that has rows (the chunked one says
    why it has none)."""
    if studies.operators:
        print_operator_rows(studies.operators)
    if studies.kernels:
        print_kernel_rows(studies.kernels)
    if studies.torch:
        print_torch_rows(studies.torch)
    print_chunked(studies.chunked)
    if studies.headers:
        print_headers(studies.headers)
    if studies.catalog:
        print_catalog(studies.catalog)
    if studies.unsynced is not None:
        print_unsynced(studies.unsynced)
    if studies.scalars is not None:
        print_scalars(studies.scalars)
    if studies.imports is not None:
        print_imports(studies.imports)
    if studies.emulated:
        print_emulated(studies.emulated)
    if studies.torch_npu is not None:
        print_torch_npu(studies.torch_npu)
    if studies.peers:
        print_peers(studies.peers)


def run_full(aclnn_py: Any, args: argparse.Namespace, info: Mapping[str, Any]) -> int:
    """The full run: the mse_loss_backward cases by size and dtype, then the other studies,
    their tables on stdout and every result in --output."""
    sizes = args.sizes or [s for s in SIZES if not (args.quick and s > 1 << 20)]
    dtypes = args.dtypes or list(DTYPES)
    torch, torch_version = (None, "n/a (--no-torch)") if args.no_torch else load_torch()
    lib_dir = c_floor_libraries(aclnn_py)
    meta: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "argv": sys.argv[1:],
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch_version,
        "torch_threads": torch.get_num_threads() if torch is not None else None,
        "aclnn_py": aclnn_py.__version__,
        "runtime": info,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "loadavg_start": loadavg(),
        "grad": "0-d array", "reduction": "mean",
        "link": os.environ.get("ACLNN_EMU_LINK") or None,
    }
    print(f"aclnn_py {aclnn_py.__version__} on {info['backend']} ({info['soc_name']}), "
          f"numpy {np.__version__}, torch {torch_version}, {os.cpu_count()} CPUs, "
          f"load {meta['loadavg_start']}"
          + (f", ACLNN_EMU_LINK={meta['link']}" if meta["link"] else ""), flush=True)

    # First, while this process is still small: a forked child's ru_maxrss starts at its
    # parent's RSS.
    rss_rows: list[dict[str, Any]] = []
    big = max(sizes)
    if not args.no_rss and big >= 1 << 24:
        modes = ["a", "b", "c", "e"] + (["f"] if torch is not None else [])
        for dtype in dtypes:
            rss_rows += measure_rss(big, dtype, modes, calls=2)
        print("  peak RSS subprocesses done", flush=True)

    cases = []
    with tempfile.TemporaryDirectory(prefix="aclnn_bench_") as workdir:
        binary, how = build_c_floor(Path(workdir))
        meta["c_floor_build"] = how
        if binary is None:
            print(f"C floor unavailable: {how}", file=sys.stderr)
        for n in sizes:
            for dtype in dtypes:
                started = time.perf_counter()
                case = run_case(aclnn_py, torch, binary, lib_dir, n, dtype,
                                reps_for(n, args.quick))
                cases.append(case)
                print(f"  {SIZE_LABELS.get(n, n):>4} {dtype}: "
                      f"{time.perf_counter() - started:.1f} s", flush=True)

    studies = run_full_studies(aclnn_py, args, sizes)
    meta["loadavg_end"] = loadavg()
    targets = evaluate_targets(cases)
    print()
    print_table(cases)
    print_targets(targets)
    print_rss(rss_rows)
    print_full_studies(studies)

    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"meta": meta, "cases": cases, "rss": rss_rows,
                                       "targets": targets, **studies._asdict()},
                                      indent=1) + "\n")
    print(f"\nwrote {args.output}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("ACLNN_PY_BACKEND", "emulator")
    if args.link is not None:  # read at aclInit, here and by every child process
        os.environ["ACLNN_EMU_LINK"] = args.link
    if run_child(args):
        return 0

    import aclnn_py  # after ACLNN_PY_BACKEND is set (aclnn_py also loads lazily)

    info = aclnn_py.runtime_info()
    alone = run_alone(aclnn_py, args, info)
    return alone if alone is not None else run_full(aclnn_py, args, info)

if __name__ == "__main__":
    sys.exit(main())
