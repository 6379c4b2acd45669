"""Stress run: threads, garbage collection and interrupts against the launch path and pool.

Worker threads make one-shot calls (numpy and device arrays), run and drop plans,
free arrays, empty the caches and churn the garbage collector, on shared and own
streams, while a timer raises KeyboardInterrupt in the main thread (which works
too) at random moments. Every completed result is checked against numpy. At the
end every queued piece of work is waited for, the caches are emptied, and the
emulator's live counts (device bytes, allocations, streams: only the device's default
one is left, ...) and the device bytes aclnn_py holds in use must be back at their
starting values.

    python benchmarks/stress.py                   # 20 s
    python benchmarks/stress.py --seconds 600     # a soak
    python benchmarks/stress.py --repeat 10       # ten runs, one line each
    python benchmarks/stress.py --fallback        # every signature on the one-shot fallback

Prints one JSON line per run; exits 1 if any run had a wrong result or a leak.
A run that hangs prints every thread's stack and exits after ``--watchdog`` seconds past
its planned end.
"""

from __future__ import annotations

import argparse
import faulthandler
import gc
import json
import os
import random
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
from numpy.testing import assert_allclose  # imported before any interrupt can hit an import

os.environ.setdefault("ACLNN_PY_BACKEND", "emulator")

import aclnn_py  # noqa: E402
from aclnn_py._c import lowlevel as _lowlevel  # noqa: E402
from aclnn_py._c import nnopbase as _nnopbase
from aclnn_py.runtime import process as _runtime  # noqa: E402
from aclnn_py.runtime import streams as _streams

# Must return to their starting values (the emulator's counts; "used_bytes" is
# memory_info()'s): only the device's default stream is left.
LIVE_KEYS = ("live_device_bytes", "live_allocations", "live_host_allocations", "live_tensors",
             "live_executors", "pending_tasks", "live_streams")
# Reported only: a stream that lives on (the device's default one) makes its 16 fence
# events as it first needs them and keeps them, so a first run usually ends 16 up; and an
# interrupt that lands inside a dropped event's Python finaliser leaves that event to the
# process (see docs/reliability.md).
REPORTED_KEYS = ("live_events",)


def live_counts() -> dict[str, int]:
    """The emulator's live counts and the device bytes aclnn_py holds in use."""
    return {**aclnn_py.emulator.stats(), "used_bytes": aclnn_py.memory_info()["used_bytes"]}


class Cycle:
    """An object in a reference cycle: only the garbage collector frees what it holds."""

    def __init__(self, array: aclnn_py.DeviceArray) -> None:
        self.array = array
        self.me = self


def one_step(rng: random.Random, shared: aclnn_py.Stream, counts: dict[str, int]) -> None:
    """One random operation; raises AssertionError on a wrong result."""
    n = rng.choice((1, 7, 64, 1000))
    host = np.arange(n, dtype=np.float32) - n / 3
    kind = rng.randrange(8)
    stream = shared if rng.random() < 0.5 else None
    if kind == 0:  # numpy in, numpy out
        result = aclnn_py.mse_loss_backward(2.0, host, 1.0, "none", stream=stream)
        expected = 2.0 * (host - 1.0) * 2
    elif kind == 1:  # device arrays, one-shot, cached
        x = aclnn_py.to_device(host)
        result = aclnn_py.mse_loss_backward(x, x, 0.0, "sum", stream=stream).numpy()
        expected = host * host * 2
    elif kind == 2:  # a plan, run three times, waiting once, then rebinding; closed
        x, y = aclnn_py.to_device(host), aclnn_py.to_device(np.zeros(n, np.float32))
        with aclnn_py.MseLossPlan(x, y, "none", stream=stream) as plan:
            plan.run()
            plan.run(synchronize=True)  # the repeat: the run and its wait in one C call
            other = aclnn_py.to_device(host + 1)
            result = plan.run(x=other).numpy()
        expected = (host + 1) ** 2
    elif kind == 3:  # a plan dropped without close while its run is queued
        x = aclnn_py.to_device(host)
        out = aclnn_py.MseLossBackwardPlan(x, x, x, "none").run()
        result = out.numpy()
        expected = np.zeros(n, np.float32)
    elif kind == 4:  # explicit frees, including one while work on it is queued
        x = aclnn_py.to_device(host)
        result_array = aclnn_py.mse_loss(x, 0.0, "none", stream=stream)
        x.free()  # waits for the queued reader
        result = result_array.numpy()
        result_array.free()
        expected = host * host
    elif kind == 5:  # arrays held only by reference cycles
        holder = Cycle(aclnn_py.to_device(host))
        result = aclnn_py.mse_loss(holder.array, holder.array, "sum").numpy()
        expected = np.float32(0)
        del holder
    elif kind == 6:  # a private stream, closed while its last result is still pending
        with aclnn_py.Stream() as own:
            x = aclnn_py.to_device(host)
            pending = aclnn_py.mse_loss_backward(1.0, x, 0.0, "none")
        own.close()
        result = pending.numpy()
        expected = host * 2
    else:  # the caches and the collector
        if rng.random() < 0.3:
            aclnn_py.empty_cache()
        gc.collect(rng.randrange(3))
        counts["maintenance"] += 1
        return
    assert_allclose(result, expected, rtol=1e-5, atol=1e-5)
    counts["checked"] += 1


def described(error: BaseException) -> str:
    """The error and where it was raised (the innermost frames), for the report."""
    frames = traceback.extract_tb(error.__traceback__)[-4:]
    where = " <- ".join(f"{Path(frame.filename).name}:{frame.lineno} {frame.name}"
                        for frame in reversed(frames))
    return f"{type(error).__name__}: {str(error)[:400]} [at {where}]"


def _drain() -> list[Any]:
    """Wait for every stream of the device (streams left open by an interrupted close or
    `with` exit hold their last work until then), collect, empty the caches; returns the
    streams an interrupted `with` exit left current. Those are exited and closed, as their
    owner would (closing finishes a close an interrupt cut short; the next run starts with
    none current); dropped ones whose release an interrupt cut short are destroyed at the
    device-wide synchronisation."""
    stale = list(getattr(_runtime._thread, "streams", []))
    for stream in reversed(stale):
        stream.__exit__(None, None, None)
        stream.close()
    _streams.synchronize_device(0)
    gc.collect()
    _streams.synchronize_device(0)  # and streams the collection dropped
    aclnn_py.empty_cache()
    return stale


def run(seconds: float, threads: int, seed: int, interrupt_every: float) -> dict[str, object]:
    aclnn_py.runtime_info()
    aclnn_py.synchronize()  # the default stream exists from here on
    before = live_counts()
    stop = time.monotonic() + seconds
    shared = aclnn_py.Stream()
    counts = {"checked": 0, "maintenance": 0, "wrong": 0, "interrupts": 0, "errors": 0}
    failures: list[str] = []
    lock = threading.Lock()

    def worker(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        local = dict.fromkeys(counts, 0)
        while time.monotonic() < stop:
            try:
                one_step(rng, shared, local)
            except AssertionError as error:
                local["wrong"] += 1
                failures.append(str(error)[:300])
            except Exception as error:  # anything else is a failure too
                local["errors"] += 1
                failures.append(described(error))
        with lock:
            for key, value in local.items():
                counts[key] += value

    armed = False

    def interrupt(signum: int, frame: object) -> None:
        if armed:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in workers:
        thread.start()
    rng = random.Random(seed)
    main = dict.fromkeys(counts, 0)
    while time.monotonic() < stop:
        try:
            armed = True
            signal.setitimer(signal.ITIMER_REAL, rng.uniform(0.05, 2) * interrupt_every)
            one_step(rng, shared, main)
            armed = False
        except KeyboardInterrupt:
            armed = False
            main["interrupts"] += 1
        except AssertionError as error:
            armed = False
            main["wrong"] += 1
            failures.append(str(error)[:300])
        except Exception as error:
            armed = False
            main["errors"] += 1
            failures.append(described(error))
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)
    for thread in workers:
        thread.join()
    for key, value in main.items():
        counts[key] += value
    shared.close()
    stale = _drain()
    after = live_counts()
    return {**counts, "seconds": seconds, "threads": threads, "seed": seed,
            "leaked": {key: after[key] - before[key] for key in (*LIVE_KEYS, "used_bytes")},
            "with_streams_left": len(stale),
            "events_left": {key: after[key] - before[key] for key in REPORTED_KEYS},
            "failures": failures[:5]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--threads", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--interrupt-every", type=float, default=0.002,
                        help="mean seconds between interrupts (default 0.002)")
    parser.add_argument("--fallback", action="store_true",
                        help="launch every signature as on a CANN without repeatable executors "
                             "(phase 1 and an ordinary launch each time)")
    parser.add_argument("--watchdog", type=float, default=60.0,
                        help="seconds past the planned end after which every thread's stack "
                             "is printed and the run exits (a hang)")
    args = parser.parse_args()
    if args.fallback:  # as if the loaded CANN lacked the repeatable-executor API
        _nnopbase._repeatable_api_missing = _lowlevel.REPEATABLE_API
    faulthandler.dump_traceback_later(args.seconds * args.repeat + args.watchdog, exit=True)
    bad = False
    for index in range(args.repeat):
        report = run(args.seconds, args.threads, args.seed + index, args.interrupt_every)
        print(json.dumps(report), flush=True)
        bad |= bool(report["wrong"] or report["errors"] or any(report["leaked"].values()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
