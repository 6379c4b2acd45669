"""The emulator never stands in for CANN in someone else's lookup: after aclnn_py has used it,
a library asked for by CANN's name (as torch_npu's DT_NEEDED and dlopen do) is the one on
LD_LIBRARY_PATH, and symbols resolve there, not in the emulator."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import run_python

import aclnn_py

pytestmark = pytest.mark.slow

# A stand-in for a real CANN runtime: aclInit returns a value the emulator never does.
STAND_IN = """
int aclInit(const char *configPath) { (void)configPath; return 4242; }
int aclnn_py_stand_in_marker(void) { return 1; }
"""
# A library linked against the stand-in, calling aclInit as a CANN client does.
USER = """
extern int aclInit(const char *configPath);
int aclnn_py_user_init(void) { return aclInit(0); }
"""

USE_THEN_LOOK_UP = """
    import ctypes, json, numpy as np, aclnn_py
    info = aclnn_py.runtime_info()
    if {operators}:
        x = np.arange(4, dtype=np.float32)
        assert float(aclnn_py.mse_loss(x, x + 1, "sum")) == 4.0
    report = {{"runtime": info["libraries"]["runtime"]}}
    for name in ("libascendcl.so", "libacl_rt.so"):
        library = ctypes.CDLL(name)  # by name, as a DT_NEEDED entry or torch_npu's dlopen
        report[name] = [hasattr(library, "aclnn_py_stand_in_marker"), library.aclInit(None)]
    user = ctypes.CDLL("libaclnn_py_user.so")
    stand_in = ctypes.CDLL("libascendcl.so")
    address = lambda f: ctypes.cast(f, ctypes.c_void_p).value
    report["user_init"] = user.aclnn_py_user_init()      # its call binds to the stand-in
    report["dlsym_through_user"] = address(user.aclInit) == address(stand_in.aclInit)
    report["default_scope_has_emulator"] = hasattr(ctypes.CDLL(None), "aclemuGetStats")
    print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory) -> Path:
    """A folder with stand-in libascendcl.so and libacl_rt.so and a library linked against
    the first."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("needs a C compiler")
    folder = tmp_path_factory.mktemp("real_cann")
    (folder / "stand_in.c").write_text(STAND_IN)
    (folder / "user.c").write_text(USER)
    for name in ("libascendcl.so", "libacl_rt.so"):
        subprocess.run([cc, "-shared", "-fPIC", "-o", str(folder / name), f"-Wl,-soname,{name}",
                        str(folder / "stand_in.c")], check=True)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(folder / "libaclnn_py_user.so"),
                    str(folder / "user.c"), f"-L{folder}", "-Wl,--no-as-needed", "-lascendcl"],
                   check=True)
    return folder


@pytest.mark.parametrize("layout", aclnn_py.emulator.LAYOUTS)
def test_a_library_asked_for_by_cann_s_name_is_the_real_one_not_the_emulator(
        tmp_path, stand_ins, layout):
    code = USE_THEN_LOOK_UP.format(operators=layout != "8.0.RC2")  # RC2: no operator calls yet
    done = run_python(code, {"ACLNN_PY_BACKEND": "cann",
                             "ACLNN_PY_CANN_HOME": aclnn_py.emulator.home(layout),
                             "LD_LIBRARY_PATH": str(stand_ins)}, home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert Path(report["runtime"]).parent == Path(aclnn_py.emulator.home(layout)) / "lib64"
    assert report["libascendcl.so"] == [True, 4242]
    assert report["libacl_rt.so"] == [True, 4242]
    assert report["user_init"] == 4242
    assert report["dlsym_through_user"] is True
    assert report["default_scope_has_emulator"] is False  # loaded RTLD_LOCAL


def test_the_default_emulator_leaves_cann_s_names_alone(tmp_path, stand_ins):
    done = run_python(USE_THEN_LOOK_UP.format(operators=True),
                      {"ACLNN_PY_BACKEND": "emulator", "LD_LIBRARY_PATH": str(stand_ins)},
                      home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["libascendcl.so"] == report["libacl_rt.so"] == [True, 4242]
    assert report["user_init"] == 4242 and report["dlsym_through_user"] is True
