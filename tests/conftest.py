"""Shared fixtures. The suite runs on the host emulator (pyproject's addopts give
``--aclnn-backend=emulator``); ``pytest --aclnn-backend=cann`` runs it against the CANN
that ``ASCEND_HOME_PATH`` names, skipping the tests marked ``emulator_only``."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tempfile
import textwrap
from contextlib import contextmanager, suppress

import pytest

import aclnn_py

CANN_VARIABLES = ("ACLNN_PY_CANN_HOME", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME",
                  "ASCEND_OPP_PATH", "ACLNN_PY_BACKEND")

LEAK_KEYS = ("live_device_bytes", "live_allocations", "live_host_allocations", "live_tensors",
             "live_executors", "pending_tasks")


def run_python(code: str, env: dict[str, str] | None = None, *, home: str | None = None,
               timeout: float = 120, drop: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with no CANN variables but those in ``env``, and
    none of the variables named in ``drop``.

    It runs outside the source tree, so it imports the installed aclnn_py.
    """
    environment = {k: v for k, v in os.environ.items()
                   if k not in CANN_VARIABLES and not k.startswith("ACLNN_EMU_") and k not in drop}
    if home is not None:
        environment["HOME"] = home
    environment.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environment,
                          cwd=home or tempfile.gettempdir(), capture_output=True, text=True,
                          timeout=timeout)


def live_resources() -> dict[str, int]:
    """The emulator's live resources once reference cycles are collected (a test that keeps
    a caught exception, as ``pytest.raises(...) as info`` does, holds the failed call's
    arrays through the traceback's frames until then) and the memory pool's cache is
    returned."""
    gc.collect()
    aclnn_py.empty_cache()
    stats = aclnn_py.emulator.stats()
    return {key: stats[key] for key in LEAK_KEYS}


@pytest.fixture
def device():
    """Device 0 set in this thread through the low-level layer, as CANN's samples do."""
    from aclnn_py._c import lowlevel as ll

    ll.init()
    ll.set_device(0)
    yield 0
    ll.reset_device(0)


class LowLevelResources:
    """Device buffers, aclTensors (and aclScalars) and a stream made through the low-level
    layer for one test, all released by :meth:`release`."""

    def __init__(self) -> None:
        from aclnn_py._c import lowlevel as ll

        self.pointers: list = []
        self.tensors: list = []
        self.scalars: list = []
        self.stream = ll.create_stream()

    def release(self) -> None:
        from aclnn_py._c import lowlevel as ll

        for scalar in self.scalars:
            ll.destroy_scalar(scalar)
        for tensor in self.tensors:
            ll.destroy_tensor(tensor)
        for pointer in self.pointers:
            ll.free(pointer)
        ll.destroy_stream(self.stream)


@pytest.fixture(scope="module", autouse=True)
def _freeze_what_outlives_each_module():
    """After each module and its leak check (this fixture is set up first, so torn down
    last), whatever is still alive -- test modules, caches, PyTorch once imported -- moves
    to the collector's permanent generation (``gc.freeze``): the many ``gc.collect()`` calls
    of later tests and leak checks scan only what those tests make, not the whole heap."""
    yield
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="module", autouse=True)
def no_leaks_per_module():
    """After every test module, once the work its streams still hold has run, the emulator
    holds no device memory, tensors or executors. (A block released while its stream may
    still use it waits for that stream, and on the emulator queued work, a fence included,
    runs only at a synchronisation: such a block is not a leak.)"""
    yield
    if aclnn_py.emulator.loaded():
        from aclnn_py.errors import AclError
        from aclnn_py.runtime import process as _runtime
        from aclnn_py.runtime import streams as _streams

        gc.collect()
        for device in sorted({stream.device for stream in _runtime._process.streams.snapshot()}):
            with suppress(AclError):  # a test's failed work: reported to that test already
                _streams.synchronize_device(device)
        assert live_resources() == dict.fromkeys(LEAK_KEYS, 0)


@pytest.fixture(autouse=True)
def _disarm_faults():
    yield
    if aclnn_py.emulator.loaded():
        aclnn_py.emulator.clear_faults()


@contextmanager
def no_device_work():
    """Fail if the block reaches aclrtMalloc, copies to the device or launches a kernel.

    The emulator counts these; on a real CANN nothing does, and the block just runs (the
    test still checks its own outcome, e.g. the error raised).
    """
    if not aclnn_py.emulator.loaded():
        yield
        return
    aclnn_py.empty_cache()  # any allocation would have to reach aclrtMalloc
    before = aclnn_py.emulator.stats()
    yield
    after = aclnn_py.emulator.stats()
    for key in ("malloc_calls", "h2d_bytes", "kernel_launches"):
        assert after[key] == before[key], (key, after)


def status_of(call, *args) -> int:
    """The status of the AclError ``call(*args)`` must raise, which must carry CANN's message."""
    with pytest.raises(aclnn_py.AclError) as info:
        call(*args)
    assert info.value.message
    return info.value.status


def fired_faults() -> list[str]:
    """The APIs of the injected faults that have fired since faults were last cleared."""
    return [fault["api"] for fault in aclnn_py.emulator.faults() if fault["fired"]]


@pytest.fixture
def fresh_catalog(monkeypatch):
    """``monkeypatch``, with aclnn_py.call's operator catalog scanned again after the test
    changed the environment (and once more after it is undone)."""
    from aclnn_py.ops import catalog as _catalog

    _catalog.forget()
    yield monkeypatch
    monkeypatch.undo()
    _catalog.forget()
