"""Discovery and loading, over fake CANN trees of both eras built from the emulator."""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import run_python

import aclnn_py

EMULATOR_LIB64 = Path(aclnn_py.emulator.home()) / "lib64"

REPORT = """
    import json, numpy as np, aclnn_py
    info = aclnn_py.runtime_info()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    r = aclnn_py.mse_loss_backward(np.ones_like(x), x, np.zeros_like(x), reduction="sum")
    info["result"] = r.ravel().tolist()
    import os
    info["opp"] = os.environ.get("ASCEND_OPP_PATH")
    print(json.dumps(info))
"""


def report(env: dict[str, str], home: Path) -> dict:
    done = run_python(REPORT, env, home=str(home))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def make_tree(root: Path, libdir: str, names: dict[str, str]) -> Path:
    """A fake install: emulator library ``source`` copied as ``target`` into root/libdir."""
    target_dir = root / libdir
    target_dir.mkdir(parents=True)
    for target, source in names.items():
        shutil.copy2(EMULATOR_LIB64 / source, target_dir / target)
    (root / "opp").mkdir()
    return root.resolve()


OLD_ERA = {"libascendcl.so": "libascendcl.so", "libnnopbase.so": "libnnopbase.so",
           "libopapi.so": "libopapi.so"}
NEW_ERA = {"libacl_rt.so": "libascendcl.so", "libascendcl.so": "libascendcl.so",
           "libnnopbase.so": "libnnopbase.so", "libopapi_nn.so": "libopapi.so",
           "libopapi.so": "libopapi.so"}


def test_old_era_tree_through_explicit_override(tmp_path):
    root = make_tree(tmp_path / "ascend-toolkit" / "latest", "lib64", OLD_ERA)
    info = report({"ACLNN_PY_CANN_HOME": str(root), "ACLNN_PY_BACKEND": "cann"}, tmp_path)
    assert info["backend"] == "cann"
    assert info["root"] == str(root)
    assert info["libraries"] == {
        "runtime": str(root / "lib64" / "libascendcl.so"),
        "meta": str(root / "lib64" / "libnnopbase.so"),
        "ops": str(root / "lib64" / "libopapi.so"),
    }
    assert info["result"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert info["opp"] == str(root / "opp")  # defaulted from the root


def test_new_era_tree_prefers_the_new_names_and_never_mixes(tmp_path):
    arch_dir = f"{platform.machine()}-linux/lib64"
    root = make_tree(tmp_path / "cann", arch_dir, NEW_ERA)
    (root / f"{platform.machine()}-linux" / "ascend_toolkit_install.info").write_text(
        "package_name=cann\nversion=8.5.0\n")
    info = report({"ASCEND_HOME_PATH": str(root)}, tmp_path)
    lib = root / arch_dir
    assert info["backend"] == "cann"
    assert info["libraries"] == {"runtime": str(lib / "libacl_rt.so"),
                                 "meta": str(lib / "libnnopbase.so"),
                                 "ops": str(lib / "libopapi_nn.so")}
    assert info["cann_version"] == "8.5.0"
    assert info["result"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]


def test_search_order_override_beats_ascend_home_and_partial_roots_are_skipped(tmp_path):
    partial = tmp_path / "partial"
    (partial / "lib64").mkdir(parents=True)
    shutil.copy2(EMULATOR_LIB64 / "libascendcl.so", partial / "lib64")
    full = make_tree(tmp_path / "full", "lib64", OLD_ERA)
    other = make_tree(tmp_path / "other", "lib64", OLD_ERA)
    info = report({"ACLNN_PY_CANN_HOME": str(partial), "ASCEND_HOME_PATH": str(full),
                   "ASCEND_TOOLKIT_HOME": str(other)}, tmp_path)
    assert info["root"] == str(full)


def test_emulator_tree_found_through_ascend_home_reports_cann(tmp_path):
    info = report({"ASCEND_HOME_PATH": aclnn_py.emulator.home(), "ACLNN_PY_BACKEND": "cann"},
                  tmp_path)
    assert info["backend"] == "cann"
    assert info["root"] == aclnn_py.emulator.home()
    assert info["result"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]


def test_auto_falls_back_to_the_emulator_and_says_so(tmp_path):
    done = run_python("""
        import logging, aclnn_py
        logging.basicConfig(level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
        print(aclnn_py.runtime_info()["backend"])
    """, home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["emulator"]
    assert "aclnn_py INFO no CANN installation found; using the aclnn_py host emulator" \
        in done.stderr
    assert done.stderr.count("no CANN installation found") == 1


def test_cann_backend_without_cann_lists_every_path_tried(tmp_path):
    done = run_python("""
        import aclnn_py
        try:
            aclnn_py.runtime_info()
        except aclnn_py.LibraryNotFoundError as error:
            assert isinstance(error, OSError)
            print(error)
        else:
            raise SystemExit("no error")
    """, {"ACLNN_PY_BACKEND": "cann"}, home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    arch = platform.machine()
    for path in ("/usr/local/Ascend/cann/lib64/libacl_rt.so",
                 "/usr/local/Ascend/cann/lib64/libascendcl.so",
                 f"/usr/local/Ascend/cann/{arch}-linux/lib64/libascendcl.so",
                 "/usr/local/Ascend/ascend-toolkit/latest/lib64/libascendcl.so",
                 f"{tmp_path}/Ascend/cann/lib64/libacl_rt.so",
                 f"{tmp_path}/Ascend/ascend-toolkit/latest/lib64/libascendcl.so"):
        assert path in text
    assert "set_env.sh" in text and "ACLNN_PY_CANN_HOME" in text


def test_relative_roots_are_never_searched(tmp_path):
    make_tree(tmp_path / "here", "lib64", OLD_ERA)
    done = run_python("""
        import os, aclnn_py
        os.chdir(os.environ["HOME"])
        try:
            aclnn_py.runtime_info()
        except aclnn_py.LibraryNotFoundError as error:
            print(error)
    """, {"ACLNN_PY_BACKEND": "cann", "ACLNN_PY_CANN_HOME": "here"}, home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "here (ignored: not an absolute path)" in done.stdout


def test_unknown_backend_is_a_clear_value_error(tmp_path):
    done = run_python("""
        import aclnn_py
        try:
            aclnn_py.runtime_info()
        except ValueError as error:
            print(error)
    """, {"ACLNN_PY_BACKEND": "gpu"}, home=str(tmp_path))
    assert "ACLNN_PY_BACKEND='gpu' is not one of auto, cann, emulator" in done.stdout


def test_import_loads_nothing_and_never_fails_without_cann(tmp_path):
    done = run_python("""
        import aclnn_py, aclnn_py._loader as loader
        print(loader.loaded() is None)
    """, {"ACLNN_PY_BACKEND": "cann"}, home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_emulator_home_is_a_cann_shaped_tree():
    home = Path(aclnn_py.emulator.home())
    for name in ("libascendcl.so", "libnnopbase.so", "libopapi.so"):
        assert (home / "lib64" / name).is_file()
    assert (home / "opp").is_dir()
    assert (home / "share" / "info" / "runtime" / "version.info").is_file()


def _exported_symbols(path: Path) -> set[str]:
    listing = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True,
                             text=True, check=True).stdout
    return {line.split()[-1] for line in listing.splitlines() if line.strip()}


@pytest.mark.parametrize("library, own, foreign", [
    ("libascendcl.so", ["aclInit", "aclrtMalloc", "aclGetRecentErrMsg"],
     ["aclCreateTensor", "aclnnMseLossBackward"]),
    ("libnnopbase.so", ["aclCreateTensor", "aclDestroyAclOpExecutor", "aclnnInit"],
     ["aclInit", "aclrtMalloc", "aclnnMseLossBackward"]),
    ("libopapi.so", ["aclnnMseLossBackward", "aclnnMseLossGetWorkspaceSize"],
     ["aclInit", "aclCreateTensor"]),
])
def test_each_emulator_library_exports_only_its_own_family(library, own, foreign):
    # dlsym through a handle also searches its dependencies (as on CANN), so read the
    # library's own dynamic symbol table: a symbol looked up in the wrong library
    # must not work here when it would not work on CANN.
    symbols = _exported_symbols(EMULATOR_LIB64 / library)
    assert set(own) <= symbols
    assert not set(foreign) & symbols
