"""aclnn_py's pytest plugin (registered through the ``pytest11`` entry point).

* ``--aclnn-backend=emulator|cann|auto`` sets ``ACLNN_PY_BACKEND`` before aclnn_py
  first loads CANN; ``cann`` with no CANN to be found stops the session at the start,
  with the reason and the paths tried. Without it the plugin changes nothing, so on an
  NPU host a suite runs against whatever the environment selects.
* Markers: ``npu`` (needs a real Ascend NPU: skipped unless the loaded libraries are a
  real CANN, not one of aclnn_py's emulator trees) and ``emulator_only`` (relies on what
  only the emulator has: its counters, fault injection, deferred kernels, poisoned
  memory: skipped when the backend is CANN, even a CANN-shaped emulator tree, so the
  rest of a suite is known to be portable).
* Fixtures: ``aclnn_stream`` (a fresh stream, closed after the test) and
  ``aclnn_leak_check`` (fails a test that leaves device memory, aclTensors or
  executors behind, as the emulator counts them; on a real CANN, device memory held
  by aclnn_py's arrays on the current device, from :func:`aclnn_py.memory_info`).
* The report header names aclnn_py's version, the backend of the run and why.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

OPTION = "--aclnn-backend"
BACKENDS = ("emulator", "cann", "auto")
LEAK_KEYS = ("live_device_bytes", "live_allocations", "live_tensors", "live_executors",
             "live_scalars", "live_int_arrays", "live_float_arrays", "live_bool_arrays",
             "live_tensor_lists")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("aclnn_py")
    group.addoption(OPTION, dest="aclnn_backend", choices=BACKENDS, default=None,
                    help="the aclnn_py backend for this run (sets ACLNN_PY_BACKEND); default: "
                         "leave the environment alone")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "npu: needs a real Ascend NPU with CANN (skipped on "
                                       "aclnn_py's emulator)")
    config.addinivalue_line("markers", "emulator_only: relies on behaviour only aclnn_py's "
                                       "emulator has (skipped when the backend is CANN)")
    backend = config.getoption("aclnn_backend")
    if backend is None:
        return
    from aclnn_py._c import loader as _loader
    from aclnn_py.errors import LibraryNotFoundError

    loaded = _loader.loaded()
    if loaded is not None and backend != "auto" and loaded.installation.backend != backend:
        raise pytest.UsageError(f"{OPTION}={backend}: aclnn_py already loaded the "
                                f"{loaded.installation.backend} backend in this process")
    os.environ[_loader.ENV_BACKEND] = backend
    if backend == "cann" and loaded is None:
        try:
            _loader.locate()
        except LibraryNotFoundError as error:  # once, not one error per test
            raise pytest.UsageError(f"{OPTION}=cann: no loadable CANN.\n{error}") from None


def pytest_report_header(config: pytest.Config) -> str:
    from aclnn_py import __version__
    from aclnn_py._c import loader as _loader

    loaded = _loader.loaded()
    try:
        installation = loaded.installation if loaded is not None else _loader.locate()
    except Exception as error:  # the header reports it; the tests that load will fail on it
        return f"aclnn_py {__version__}: no usable backend: {str(error).splitlines()[0]}"
    return (f"aclnn_py {__version__}: backend {installation.backend} at {installation.root} "
            f"({installation.reason})")


def backend() -> str:
    """The backend this run uses: "cann" or "emulator" (located, not loaded)."""
    from aclnn_py._c import loader as _loader

    loaded = _loader.loaded()
    return (loaded.installation if loaded is not None else _loader.locate()).backend


def on_emulator() -> bool:
    """Whether the loaded libraries are aclnn_py's emulator (any of its trees, through
    either backend)."""
    from aclnn_py import emulator

    return emulator.loaded()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("emulator_only") is not None and backend() == "cann":
        pytest.skip("relies on aclnn_py's emulator; the backend is CANN")
    if item.get_closest_marker("npu") is not None and on_emulator():
        pytest.skip("needs a real Ascend NPU; the loaded libraries are aclnn_py's emulator")


@pytest.fixture
def aclnn_stream() -> Iterator[Any]:
    """A new :class:`aclnn_py.Stream` on the current device, closed after the test."""
    import aclnn_py

    with aclnn_py.Stream() as stream:
        yield stream
    stream.close()


@pytest.fixture
def aclnn_leak_check() -> Iterator[None]:
    """Fail the test if it leaves device memory, aclTensors or executors alive, counted after
    synchronising and emptying aclnn_py's caches: by the emulator, or on a real CANN (which
    counts nothing of the kind) as the bytes aclnn_py's live arrays hold on the current
    device (``memory_info()["used_bytes"]``)."""
    import gc

    import aclnn_py

    emulated = on_emulator()

    def live() -> dict[str, int]:
        aclnn_py.synchronize()
        gc.collect()
        aclnn_py.empty_cache()
        if not emulated:
            return {"used_bytes": aclnn_py.memory_info()["used_bytes"]}
        stats = aclnn_py.emulator.stats()
        return {key: stats[key] for key in LEAK_KEYS if key in stats}

    before = live()
    yield
    after = live()
    leaked = {key: after[key] - before[key] for key in after if after[key] != before[key]}
    assert not leaked, f"the test left resources alive: {leaked}"
