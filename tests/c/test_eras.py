"""Every CANN release the emulator is laid out as, used as an install tree: file names,
sonames, no RUNPATH, exports, versions, loading without LD_LIBRARY_PATH, operators, missing
dependencies, and aclrtMemcpyAsync's rules by release. Each case runs in a subprocess (the
loader loads once per process)."""

from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import run_python

import aclnn_py

pytestmark = pytest.mark.slow

LAYOUTS = aclnn_py.emulator.LAYOUTS
REPEATABLE_API = ("aclSetAclOpExecutorRepeatable", "aclSetInputTensorAddr",
                  "aclSetOutputTensorAddr", "aclDestroyAclOpExecutor")
LOSSES = ("aclnnMseLoss", "aclnnMseLossBackward", "aclnnL1Loss", "aclnnL1LossBackward",
          "aclnnSmoothL1Loss", "aclnnSmoothL1LossBackward")


# What each release installs (the facts file, section 1.1), and its version string.
RELEASES = {
    "8.0.RC2": {"version": "8.0.RC2", "runtime": "libascendcl.so", "ops": "libopapi.so",
                "extra": {}, "also": ()},
    "8.3": {"version": "8.3.RC1", "runtime": "libascendcl.so", "ops": "libopapi.so",
            "extra": {}, "also": ()},
    "8.5": {"version": "8.5.0", "runtime": "libacl_rt.so", "ops": "libopapi_nn.so",
            "extra": {"opapi_math": "libopapi_math.so",
                      "opapi_transformer": "libopapi_transformer.so",
                      "opapi_cv": "libopapi_cv.so"}, "also": ("libopapi.so",)},
}
CANN_NAMES = {"libascendcl.so", "libacl_rt.so", "libnnopbase.so", "libopapi.so",
              "libopapi_nn.so", "libopapi_math.so", "libopapi_transformer.so", "libopapi_cv.so",
              "libruntime.so", "libascend_hal.so"}

needs_binutils = pytest.mark.skipif(shutil.which("readelf") is None or shutil.which("nm") is None,
                                    reason="needs readelf and nm (binutils)")


def home(layout: str) -> Path:
    return Path(aclnn_py.emulator.home(layout))


def libraries_of(layout: str) -> list[str]:
    release = RELEASES[layout]
    return [release["runtime"], "libnnopbase.so", release["ops"], *release["extra"].values(),
            *release["also"]]


def elf_files(root: Path) -> list[Path]:
    """The tree's libraries under CANN's file names (the soname-named entries beside them are
    links, or copies in an installed wheel, which keeps no links)."""
    return sorted(p for p in root.rglob("*.so")
                  if not p.is_symlink() and not p.name.startswith("libaclnn_py_emu_"))


def dynamic(path: Path) -> list[tuple[str, str]]:
    """(tag, value) of each entry of readelf -d, e.g. ("NEEDED", "libc.so.6")."""
    text = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                          check=True).stdout
    return re.findall(r"\((\w+)\)\s+[^\[\n]*\[([^\]]*)\]", text)


def soname(path: Path) -> str:
    (name,) = [value for tag, value in dynamic(path) if tag == "SONAME"]
    return name


def needed(path: Path) -> list[str]:
    return [value for tag, value in dynamic(path) if tag == "NEEDED"]


def exported(path: Path) -> set[str]:
    listing = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True,
                             text=True, check=True).stdout
    return {line.split()[-1] for line in listing.splitlines() if line.strip()}


def same_library(path: Path | str, expected: Path) -> bool:
    """Whether ``path`` is ``expected`` or the soname-named entry beside it (a link in an
    editable install, a copy in an installed wheel)."""
    path = Path(path)
    return path.parent == expected.parent and filecmp.cmp(path, expected, shallow=False)


def without_library_path(env: dict[str, str]) -> dict[str, str]:
    """``env`` for run_python, which copies os.environ: LD_LIBRARY_PATH removed, as in a
    process (a Jupyter kernel, say) started without set_env.sh."""
    return {**env, "LD_LIBRARY_PATH": ""}


def cann_json(script: str, tmp_path: Path, **env: str):
    """Run ``script`` on the ``cann`` backend with ``env`` and no library path; what it
    printed last, read as JSON (the run must succeed)."""
    done = run_python(script, without_library_path({**env, "ACLNN_PY_BACKEND": "cann"}),
                      home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


# ---- the trees ---------------------------------------------------------------------------


def test_the_layouts_are_three_releases_and_the_default_is_the_newest():
    assert LAYOUTS == ("8.0.RC2", "8.3", "8.5")
    assert aclnn_py.emulator.home() == aclnn_py.emulator.home("8.5")
    assert len({aclnn_py.emulator.home(layout) for layout in LAYOUTS}) == 3


def test_an_unknown_layout_is_a_value_error_listing_the_known_ones():
    with pytest.raises(ValueError, match=r"'9\.0'.*8\.0\.RC2, 8\.3, 8\.5"):
        aclnn_py.emulator.home("9.0")


@needs_binutils
@pytest.mark.parametrize("layout", LAYOUTS)
def test_file_names_are_cann_s_and_sonames_are_the_emulator_s_own(layout):
    lib64 = home(layout) / "lib64"
    for name in libraries_of(layout):
        path = lib64 / name
        assert path.is_file() and not path.is_symlink(), path
        own = soname(path)
        assert own.startswith("libaclnn_py_emu_") and own not in CANN_NAMES, own
        # the soname beside the file, for the DT_NEEDED entries of the other libraries
        assert (lib64 / own).resolve() == path.resolve() or \
            (lib64 / own).read_bytes() == path.read_bytes()
    others = {"libacl_rt.so", "libopapi_nn.so", "libopapi_math.so"} if layout != "8.5" else set()
    assert not any((lib64 / name).exists() for name in others)
    sonames = [soname(path) for path in elf_files(home(layout))]
    assert len(sonames) == len(set(sonames))


@needs_binutils
def test_8_5_keeps_libascendcl_so_as_a_filter_of_libacl_rt_so():
    # hicann/runtime scripts/package/module/ascend/RuntimeSo.xml: both in lib64 from 8.5
    lib64 = home("8.5") / "lib64"
    path = lib64 / "libascendcl.so"
    assert path.is_file() and not path.is_symlink()
    assert soname(path) == "libaclnn_py_emu_ascendcl.so"
    assert ("FILTER", soname(lib64 / "libacl_rt.so")) in dynamic(path)
    assert exported(path) == exported(lib64 / "libacl_rt.so")


@needs_binutils
@pytest.mark.parametrize("layout", LAYOUTS)
def test_no_library_has_a_runpath_and_dependencies_need_the_library_path(layout):
    root = home(layout)
    for path in elf_files(root):
        tags = {tag for tag, _ in dynamic(path)}
        assert not tags & {"RPATH", "RUNPATH"}, path
    release = RELEASES[layout]
    assert "libaclnn_py_emu_runtime.so" in needed(root / "lib64" / release["runtime"])
    assert needed(root / "lib64" / "libruntime.so") == ["libaclnn_py_emu_ascend_hal.so"]
    assert (root / "driver" / "lib64" / "driver" / "libascend_hal.so").is_file()
    if layout == "8.5":  # the operator libraries link libopapi.so (ops-nn symbol.cmake v8.5.0)
        for name in ("libopapi_nn.so", "libopapi_math.so"):
            assert "libaclnn_py_emu_opapi.so" in needed(root / "lib64" / name)
    # dlopen by absolute path without LD_LIBRARY_PATH cannot find the support library
    done = run_python(f"""
        import ctypes
        try:
            ctypes.CDLL({str(root / "lib64" / release["runtime"])!r})
        except OSError as error:
            print(error)
    """, without_library_path({}))
    assert "libaclnn_py_emu_runtime.so: cannot open shared object file" in done.stdout


@needs_binutils
@pytest.mark.parametrize("layout", LAYOUTS)
def test_exports_follow_the_release(layout):
    lib64 = home(layout) / "lib64"
    release = RELEASES[layout]
    runtime, meta = exported(lib64 / release["runtime"]), exported(lib64 / "libnnopbase.so")
    assert {"aclInit", "aclrtMalloc", "aclrtMemcpyAsync", "aclGetRecentErrMsg"} <= runtime
    assert {"aclCreateTensor", "aclDestroyTensor", "aclSetTensorAddr"} <= meta
    if layout == "8.0.RC2":  # documented from 8.0.RC3
        assert not set(REPEATABLE_API) & meta
    else:
        assert set(REPEATABLE_API) <= meta
    mappings = {"aclrtGetLogicDevIdByUserDevId", "aclrtGetUserDevIdByLogicDevId",
                "aclrtGetLogicDevIdByPhyDevId", "aclrtGetPhyDevIdByLogicDevId"}
    if layout != "8.5":  # documented in the 8.5 and 9.x references only
        assert "aclFinalizeReference" not in runtime
        assert not mappings & runtime
    else:
        assert mappings <= runtime
    operators = {f"aclnn{name}{phase}" for name in ("Add", *(n[5:] for n in LOSSES))
                 for phase in ("", "GetWorkspaceSize")}
    if layout == "8.5":
        nn, math = exported(lib64 / "libopapi_nn.so"), exported(lib64 / "libopapi_math.so")
        assert nn & operators == {o for o in operators if not o.startswith("aclnnAdd")}
        assert math & operators == {"aclnnAdd", "aclnnAddGetWorkspaceSize"}
        assert not {s for s in exported(lib64 / "libopapi.so") if s.startswith("aclnn")}
    else:
        ops = exported(lib64 / "libopapi.so")
        assert operators <= ops
        assert not {s for s in ops if s.startswith("ops_")}  # the core stays inside


# ---- aclnn_py on each tree, without LD_LIBRARY_PATH -------------------------------------

REPORT = """
    import json, aclnn_py
    info = aclnn_py.runtime_info()
    print(json.dumps(info))
"""

OPERATORS = """
    import json, numpy as np, aclnn_py
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones(3, np.float32)
    dx, dy = aclnn_py.to_device(x), aclnn_py.to_device(np.broadcast_to(y, (2, 3)).copy())
    plan = aclnn_py.AddPlan(dx, dy, alpha=2)
    plan.run()
    plan.run(x=dy, y=dx)  # rebinding works whether or not the executor is repeatable
    print(json.dumps({"mse": float(aclnn_py.mse_loss(x, y, "sum")),
                      "add": aclnn_py.add(x, y, alpha=2).ravel().tolist(),
                      "plan": plan.out.numpy().ravel().tolist()}))
"""


@pytest.mark.parametrize("variable", ["ACLNN_PY_CANN_HOME", "ASCEND_HOME_PATH"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_loads_through_the_search_path_without_ld_library_path(tmp_path, layout, variable):
    root = home(layout)
    info = cann_json(REPORT, tmp_path, **{variable: str(root)})
    release = RELEASES[layout]
    lib64 = root / "lib64"
    assert info["backend"] == "cann" and info["root"] == str(root)
    assert info["cann_version"] == release["version"]
    assert info["libraries"] == {"runtime": str(lib64 / release["runtime"]),
                                 "meta": str(lib64 / "libnnopbase.so"),
                                 "ops": str(lib64 / release["ops"]),
                                 **{key: str(lib64 / name)
                                    for key, name in release["extra"].items()}}
    hal = root / "driver" / "lib64" / "driver" / "libascend_hal.so"
    expected = [hal, lib64 / "libruntime.so", *(lib64 / name for name in release["also"])]
    dependencies = info["dependencies"]
    assert len(dependencies) == len(expected)
    order = [next(i for i, e in enumerate(expected) if same_library(p, e)) for p in dependencies]
    assert sorted(order) == list(range(len(expected)))
    assert order.index(0) < order.index(1)  # the driver stand-in before the library needing it


@pytest.mark.parametrize("layout", LAYOUTS)
def test_operators_and_plans_are_correct_on_each_tree(tmp_path, layout):
    """8.0.RC2 lacks the repeatable-executor API: the binding falls back to the ordinary
    two-phase call there, plans included."""
    result = cann_json(OPERATORS, tmp_path, ACLNN_PY_CANN_HOME=str(home(layout)))
    assert result == {"mse": 1 + 0 + 1 + 4 + 9 + 16.0, "add": [2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
                      "plan": [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]}


def test_the_8_5_tree_through_ascend_home_path_reports_the_8_5_libraries(tmp_path):
    root = home("8.5")
    libraries = cann_json(REPORT, tmp_path, ASCEND_HOME_PATH=str(root))["libraries"]
    assert {Path(path).name for path in libraries.values()} == {
        "libacl_rt.so", "libnnopbase.so", "libopapi_nn.so", "libopapi_math.so",
        "libopapi_transformer.so", "libopapi_cv.so"}


LOAD_ERROR = """
    import aclnn_py
    try:
        aclnn_py.runtime_info()
    except aclnn_py.LibraryNotFoundError as error:
        print(error)
    else:
        raise SystemExit("loaded without an error")
"""


def copy_tree(layout: str, target: Path) -> Path:
    shutil.copytree(home(layout), target, symlinks=True)
    return target


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_missing_dependency_is_named_and_set_env_suggested(tmp_path, layout):
    root = copy_tree(layout, tmp_path / "cann")
    shutil.rmtree(root / "driver")
    done = run_python(LOAD_ERROR, without_library_path({"ACLNN_PY_CANN_HOME": str(root),
                                                        "ACLNN_PY_BACKEND": "cann"}),
                      home=str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "it needs libaclnn_py_emu_ascend_hal.so, which is neither in the install's " \
        "library folders nor in the driver folders" in done.stdout
    assert "Source CANN's set_env.sh before starting Python" in done.stdout
    assert str(root / "lib64" / "libaclnn_py_emu_ascend_hal.so") in done.stdout  # looked there


def test_the_driver_folder_can_be_given_by_aclnn_py_driver_path(tmp_path):
    root = copy_tree("8.5", tmp_path / "cann")
    driver = tmp_path / "elsewhere" / "driver"
    driver.parent.mkdir()
    shutil.move(str(root / "driver"), str(driver))
    info = cann_json(REPORT, tmp_path, ACLNN_PY_CANN_HOME=str(root),
                     ACLNN_PY_DRIVER_PATH=str(driver))
    hal = driver / "lib64" / "driver" / "libascend_hal.so"
    assert any(same_library(path, hal) for path in info["dependencies"])


def test_with_set_env_sourced_the_dependencies_are_those_of_ld_library_path(tmp_path):
    """When the process started with LD_LIBRARY_PATH set, the dynamic linker has nothing to
    pre-load for; the libraries loaded are still the tree's own."""
    root = home("8.3")
    folders = [root / "lib64", root / "driver" / "lib64" / "driver"]
    done = run_python(REPORT, {"ACLNN_PY_CANN_HOME": str(root), "ACLNN_PY_BACKEND": "cann",
                               "LD_LIBRARY_PATH": os.pathsep.join(map(str, folders))},
                      home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout.splitlines()[-1])
    assert info["libraries"]["runtime"] == str(root / "lib64" / "libascendcl.so")
    assert info["cann_version"] == "8.3.RC1"


# ---- aclrtMemcpyAsync by release ---------------------------------------------------------

ASYNC_COPIES = """
    import json
    from aclnn_py._c import lowlevel as ll
    from aclnn_py._c._ffi import ffi
    from aclnn_py.errors import AclError

    ll.init()
    ll.set_device(0)
    stream = ll.create_stream()
    device = ll.malloc(512)
    pinned = ll.malloc_host(512)
    ordinary = ffi.new("char[1024]")  # malloc'ed by cffi: ordinary host memory
    aligned = ffi.cast("char *", ordinary) + (-ll.address(ordinary) % 64)
    pinned_odd = ffi.cast("char *", pinned) + 8
    device_odd = ffi.cast("char *", device) + 8
    H2D, D2H = ll.MEMCPY_HOST_TO_DEVICE, ll.MEMCPY_DEVICE_TO_HOST
    cases = {
        "h2d_ordinary": (device, 512, aligned, 256, H2D),
        "d2h_ordinary": (aligned, 512, device, 256, D2H),
        "h2d_misaligned_host": (device, 512, pinned_odd, 256, H2D),
        "d2h_misaligned_host": (pinned_odd, 504, device, 256, D2H),
        "h2d_misaligned_device": (device_odd, 504, pinned, 256, H2D),
        "d2h_misaligned_device": (pinned, 512, device_odd, 256, D2H),
        "h2d_pinned": (device, 512, pinned, 256, H2D),
        "d2h_pinned": (pinned, 512, device, 256, D2H),
    }
    results = {}
    for name, arguments in cases.items():
        try:
            ll.memcpy_async(*arguments, stream)
            ll.synchronize_stream(stream)
            results[name] = [0, ""]
        except AclError as error:
            results[name] = [error.status, error.message]
    ll.free_host(pinned)
    ll.free(device)
    ll.destroy_stream(stream)
    print(json.dumps(results))
"""


@pytest.mark.parametrize("layout", LAYOUTS)
def test_async_copies_follow_the_release_s_rules(tmp_path, layout):
    results = cann_json(ASYNC_COPIES, tmp_path, ACLNN_PY_CANN_HOME=str(home(layout)))
    assert results["h2d_pinned"] == [0, ""] and results["d2h_pinned"] == [0, ""]
    if layout == "8.5":  # ordinary host memory accepted, no alignment rule stated
        assert all(result == [0, ""] for result in results.values()), results
        return
    version = RELEASES[layout]["version"]
    for name in ("h2d_ordinary", "d2h_ordinary"):
        status, message = results[name]
        assert status == 100000, results[name]
        assert "is not page-locked host memory from aclrtMallocHost" in message
        assert f"CANN {version} requires it" in message
        assert ("src" if name.startswith("h2d") else "dst") in message
    for name in ("h2d_misaligned_host", "d2h_misaligned_host", "h2d_misaligned_device",
                 "d2h_misaligned_device"):
        status, message = results[name]
        assert status == 100000, results[name]
        assert "is not 64-byte aligned" in message
        assert f"CANN {version} requires both addresses of an asynchronous copy" in message


FAULT_POINTS = """
    import json, aclnn_py
    apis = aclnn_py.emulator.fault_apis()
    try:
        aclnn_py.emulator.inject_fault("aclSetAclOpExecutorRepeatable", 561000)
        refused = False
    except ValueError:
        refused = True
    print(json.dumps({"apis": list(apis), "refused": refused}))
"""


@pytest.mark.parametrize("layout", LAYOUTS)
def test_fault_points_are_the_functions_the_release_has(tmp_path, layout):
    result = cann_json(FAULT_POINTS, tmp_path, ACLNN_PY_CANN_HOME=str(home(layout)))
    repeatable = {"aclSetAclOpExecutorRepeatable", "aclSetInputTensorAddr",
                  "aclSetOutputTensorAddr", "aclDestroyAclOpExecutor"}
    apis = set(result["apis"])
    assert {"aclInit", "aclrtMemcpyAsync", "aclnnMseLossBackward"} <= apis
    assert (repeatable & apis == set()) is (layout == "8.0.RC2")
    assert ("aclFinalizeReference" in apis) is (layout == "8.5")
    assert ("aclrtGetLogicDevIdByUserDevId" in apis) is (layout == "8.5")
    assert result["refused"] is (layout == "8.0.RC2")
