"""Helpers shared by test modules in several folders (each defined here once).

The folders under ``tests/`` only group the modules by the package layer they test; the
modules form one flat import namespace as before (pyproject's ``pythonpath`` lists every
folder, so module basenames are unique: ``tests/tools/test_suite_layout.py`` checks it).
``conftest.py`` keeps the fixtures and the helpers that go with them (``run_python``,
``live_resources``, ``no_device_work`` ...); ``tolerances.py`` the golden semantics.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np

import aclnn_py

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent  # the repository


def import_paths() -> list[str]:
    """``tests/`` and every folder under it that holds test modules, as the ``sys.path``
    entries a subprocess needs to import test modules and these helpers by basename."""
    folders = {path.parent for path in TESTS.rglob("test_*.py")}
    return [str(TESTS)] + sorted(str(folder) for folder in folders - {TESTS})


# ---- device arrays and the emulator's counters ------------------------------------------


def up(value: float, shape=(4096,)) -> aclnn_py.DeviceArray:
    """A float32 device array of ``shape`` filled with ``value``."""
    return aclnn_py.to_device(np.full(shape, value, np.float32))


def upload(*arrays: np.ndarray) -> list[aclnn_py.DeviceArray]:
    """Each host array on the device."""
    return [aclnn_py.to_device(array) for array in arrays]


def settle(keys: tuple[str, ...] | None = None) -> dict[str, int]:
    """Finish queued work, drop every cache, and return the emulator's counters (only
    those named in ``keys`` when given)."""
    aclnn_py.synchronize()
    aclnn_py.empty_cache()
    gc.collect()
    stats = aclnn_py.emulator.stats()
    return stats if keys is None else {key: stats[key] for key in keys}


def in_thread(action: Callable[[], Any]) -> tuple[threading.Thread, dict]:
    """Run ``action`` in a started daemon thread; its result lands in the box as
    ``"result"``, an exception as ``"error"`` (a fresh one of the same type and message,
    without the traceback that would keep the thread's frames and their arrays alive)."""
    box: dict = {}

    def run() -> None:
        try:
            box["result"] = action()
        except Exception as error:  # reported through the box, without its traceback
            box["error"] = type(error)(str(error))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


# ---- a fresh interpreter's report --------------------------------------------------------


def run_json(code: str, env: dict[str, str] | None = None, **options: Any) -> Any:
    """``run_python(code, env, **options)``, which must succeed; its last line of output,
    read as JSON."""
    from conftest import run_python

    done = run_python(code, env, **options)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- float64 references of MSE -----------------------------------------------------------


def mse_backward(grad: Any, x: Any, y: Any, reduction: Any = "mean") -> np.ndarray:
    """``aclnnMseLossBackward`` in float64: ``scale * (x - y) * grad``, ``scale`` being
    ``2 / x.size`` for the mean (``"mean"`` or 1) and 2 otherwise."""
    grad, x, y = (np.asarray(a, np.float64) for a in (grad, x, y))
    scale = 2.0 / x.size if reduction in ("mean", 1) else 2.0
    return scale * (x - y) * grad


def mse_forward(x: Any, y: Any, reduction: str = "mean") -> np.ndarray:
    """``aclnnMseLoss`` in float64: ``(x - y) ** 2``, as it is, its mean or its sum."""
    squares = (np.asarray(x, np.float64) - y) ** 2
    return {"none": squares, "mean": squares.mean(), "sum": squares.sum()}[reduction]


# ---- what runtime_info() reports ---------------------------------------------------------


def assert_8_5_libraries(info: dict, lib: Path) -> None:
    """``info`` (``runtime_info()``) names a CANN 8.5 tree's libraries in ``lib``, and
    libopapi.so is loaded only as what libopapi_nn.so needs (by its soname, a copy or a
    link of it, as in an installed wheel), never as an operator library."""
    expected = {"runtime": str(lib / "libacl_rt.so"), "meta": str(lib / "libnnopbase.so"),
                "ops": str(lib / "libopapi_nn.so"), "opapi_math": str(lib / "libopapi_math.so")}
    for repository in ("transformer", "cv"):  # loaded where the tree has them
        if (lib / f"libopapi_{repository}.so").exists():
            expected[f"opapi_{repository}"] = str(lib / f"libopapi_{repository}.so")
    assert info["libraries"] == expected
    assert {Path(p).name for p in info["dependencies"] if Path(p).parent == lib} & {
        "libopapi.so", "libaclnn_py_emu_opapi.so"}


# ---- an operator called with tensors of a format ----------------------------------------


def _formatted_tensor(array: np.ndarray, nz: bool, code: int, stream: Any,
                      pointers: list[Any], tensors: list[Any]) -> tuple[Any, Any]:
    """``call_formatted``'s aclTensor of ``array`` in the aclFormat ``code``, over a copy in
    device memory (its FRACTAL_NZ form when ``nz``); the memory is added to ``pointers``, the
    tensor to ``tensors``. Returns the tensor and its memory."""
    from aclnn_py._c import lowlevel as ll
    from aclnn_py._c._ffi import ffi
    from aclnn_py.ops import dtypes

    size = array.nbytes
    if nz:
        from aclnn_py.emulator._kernels.matmul import nz_storage_shape

        size = int(np.prod(nz_storage_shape(array.shape, array.dtype))) * array.itemsize
    pointer = ll.malloc(max(size, 1))
    pointers.append(pointer)
    if array.nbytes:
        ll.memcpy(pointer, array.nbytes, ffi.from_buffer(array), array.nbytes,
                  ll.MEMCPY_HOST_TO_DEVICE)
    strides = tuple(s // array.itemsize for s in array.strides)
    acl_dtype = dtypes.acl_dtype(array.dtype, dtypes.all_dtypes())
    tensor = ll.create_tensor(array.shape, acl_dtype, strides, 0, (array.size,), pointer, code)
    tensors.append(tensor)
    if nz:
        _trans_matmul_weight(tensor, stream)
    return tensor, pointer


def call_formatted(name: str, fmt: str, out: dict[str, np.ndarray], *, nz: str | None = None,
                   **arguments: Any) -> None:
    """Phases 1 and 2 of ``name`` through the low-level layer, every tensor created with the
    aclFormat ``fmt`` ("ND", "NHWC"): aclnn_py.call gives each tensor the plain format of its
    rank, and some checks are about other formats. ``arguments`` by C name
    (None for a NULL pointer; a tuple or list for an aclIntArray), ``out`` the output arrays
    by name, written. ``nz``: the parameter whose tensor aclnnTransMatmulWeight first turns
    into FRACTAL_NZ (in memory of its FRACTAL_NZ size), as CANN's samples give a weight to
    the ...WeightNz operators. AclError when a phase fails."""
    from aclnn_py._c import lowlevel as ll
    from aclnn_py._c._ffi import ffi
    from aclnn_py.ops import catalog
    from aclnn_py.runtime.process import activate

    activate()
    signature = aclnn_py.signature(name)
    library = str(catalog.bind(signature))
    code = ll.constant(f"ACL_FORMAT_{fmt}")
    stream = ll.create_stream()
    pointers: list[Any] = []
    tensors: list[Any] = []
    arrays: list[Any] = []
    written: list[tuple[np.ndarray, Any]] = []
    try:
        values = []
        for p in signature.parameters:
            value = out.get(p.name, arguments.get(p.name))
            c_type = " ".join(p.c_type.replace("const", " ").split())
            if c_type == "aclTensor *":
                if value is None:
                    values.append(ll.NULL)
                    continue
                tensor, pointer = _formatted_tensor(np.ascontiguousarray(value), p.name == nz,
                                                    code, stream, pointers, tensors)
                values.append(tensor)
                if p.name in out:
                    written.append((out[p.name], pointer))
            elif c_type == "aclIntArray *":
                made = ll.NULL if value is None else ll.create_int_array(tuple(value))
                if value is not None:
                    arrays.append(made)
                values.append(made)
            else:
                values.append(value)
        size, executor = ll.operator_workspace_size(name, *values, library=library)
        workspace = ll.malloc(size) if size else ll.NULL
        if size:
            pointers.append(workspace)
        ll.check(ll.operator_phase2(name, library)(workspace, size, executor, stream), name)
        ll.synchronize_stream(stream)
        for array, pointer in written:
            if array.nbytes:
                ll.memcpy(ffi.from_buffer(array, require_writable=True), array.nbytes, pointer,
                          array.nbytes, ll.MEMCPY_DEVICE_TO_HOST)
    finally:
        for made in arrays:
            ll.destroy_int_array(made)
        for tensor in tensors:
            ll.destroy_tensor(tensor)
        for pointer in pointers:
            ll.free(pointer)
        ll.destroy_stream(stream)


def _trans_matmul_weight(tensor: Any, stream: Any) -> None:
    """aclnnTransMatmulWeight of ``tensor`` (no workspace), waited for."""
    from aclnn_py._c import lowlevel as ll
    from aclnn_py.ops import catalog

    library = str(catalog.bind(aclnn_py.signature("aclnnTransMatmulWeight")))
    size, executor = ll.operator_workspace_size("aclnnTransMatmulWeight", tensor,
                                                library=library)
    assert size == 0
    ll.check(ll.operator_phase2("aclnnTransMatmulWeight", library)(ll.NULL, 0, executor,
                                                                   stream),
             "aclnnTransMatmulWeight")
    ll.synchronize_stream(stream)


def load_script(path: Path, name: str | None = None) -> Any:
    """The script at ``path`` imported as a module (``name``, default its stem), with its
    folder on ``sys.path`` as when it runs, so that it finds its sibling modules."""
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run_c_client(tmp_path: Path, source: str, home: Path, link: list[str], *,
                 compiler: str = "cc", includes: tuple[str, ...] = (),
                 **environment: str) -> list[str]:
    """Build ``source`` (C, or C++ with ``compiler="c++"``) against the CANN tree ``home``
    with the link flags ``link``, run it with the tree's library folders on
    ``LD_LIBRARY_PATH`` (as after its ``set_env.sh``) and ``environment``; returns its output
    lines, once it built and exited 0. Skips when there is no such compiler."""
    found = shutil.which(compiler)
    if found is None:
        import pytest

        pytest.skip(f"needs a compiler ({compiler})")
    path = tmp_path / ("client.cpp" if compiler == "c++" else "client.c")
    path.write_text(source)
    env = {**os.environ, **environment,
           "LD_LIBRARY_PATH": f"{home / 'lib64'}:{home / 'driver' / 'lib64' / 'driver'}"}
    flags = [f"-I{home / 'include'}", *(f"-I{home / 'include' / sub}" for sub in includes)]
    built = subprocess.run([found, "-Wall", "-Werror", *flags, str(path), f"-L{home / 'lib64'}",
                            *link, "-o", str(tmp_path / "client")],
                           capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "client")], capture_output=True, text=True, env=env,
                         timeout=60)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.splitlines()


def run_interleaved(*targets: Callable[[], Any]) -> None:
    """Run each target in a thread of its own, all at once, switching threads as often as the
    interpreter can (races show up within a few thousand switches); returns when all ended."""
    threads = [threading.Thread(target=target) for target in targets]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
