"""Operators computed in Python answer every process: a C program that never loaded aclnn_py
(the emulator starts Python itself), and Python code calling a tree's libraries without
aclnn_py (the emulator takes the GIL and installs the kernels)."""

from __future__ import annotations

import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import TESTS

import aclnn_py

pytestmark = [pytest.mark.slow, pytest.mark.emulator_only]

SOURCE = TESTS / "c_client" / "python_kernels.c"
INPUT = [0.0, 1.0, -1.0, 2.0]


def plain_environment(**extra: str) -> dict[str, str]:
    """The environment of a program that knows nothing of CANN, aclnn_py or Python: no
    ASCEND_*, ACLNN_*, PYTHON* nor LD_LIBRARY_PATH (set_env.sh sets what the tree needs), and
    a PATH of the system's folders only, where a python3 may be another installation's."""
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("ASCEND_", "ACLNN_", "PYTHON"))
                   and key not in ("LD_LIBRARY_PATH", "VIRTUAL_ENV")}
    compiler = shutil.which("cc")
    folders = [str(Path(compiler).parent)] if compiler else []
    environment["PATH"] = ":".join(dict.fromkeys([*folders, "/usr/bin", "/bin"]))
    environment.update(extra)
    return environment


def in_set_env(script: str, workdir: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in bash after sourcing the 8.5 tree's set_env.sh."""
    set_env = Path(aclnn_py.emulator.home("8.5")) / "set_env.sh"
    return subprocess.run(["bash", "-c", f"source {shlex.quote(str(set_env))} && {script}"],
                          cwd=workdir, env=plain_environment(**extra), capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/c_client/python_kernels.c built against the 8.5 tree."""
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler (cc)")
    folder = tmp_path_factory.mktemp("python_kernels")
    done = in_set_env(f'cc -std=gnu11 -Wall -Werror -I"$ASCEND_HOME_PATH/include" '
                      f'{shlex.quote(str(SOURCE))} -L"$ASCEND_HOME_PATH/lib64" -lacl_rt '
                      f'-lnnopbase -lopapi_math -lopapi_nn -lopapi -lm -lpthread '
                      f'-o python_kernels', folder)
    assert done.returncode == 0, done.stderr
    return folder / "python_kernels"


def run_process(program: Path, mode: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return in_set_env(f"exec {shlex.quote(str(program))} {mode}", program.parent, **extra)


def run(program: Path, mode: str, **extra: str) -> list[str]:
    done = run_process(program, mode, **extra)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def test_a_c_program_gets_aclnn_exp_from_the_python_kernel(program):
    lines = run(program, "exp")
    assert lines[0] == "status 0", lines
    assert [float(line) for line in lines[1:]] == pytest.approx([math.exp(x) for x in INPUT],
                                                                abs=1e-6)  # printed %.6f


def test_a_c_program_passes_an_acl_scalar_list_to_the_python_kernel(program):
    """aclnnForeachMulScalarList: its aclScalarList reaches the kernel, a double stored as
    float32 as nnopbase stores it; too few scalars for the tensors fail with 561002 (the A2
    tiling's check)."""
    lines = run(program, "scalar-list")
    assert lines[0] == "status 0", lines
    assert [float(line) for line in lines[1:7]] == pytest.approx(
        [0.0, 2.5, -2.5, 5.0, -6.0, -8.0], abs=1e-6)
    assert lines[7] == "short status 561002", lines


def test_no_python_fails_phase_1_with_561003_naming_the_variable(program):
    lines = run(program, "exp", ACLNN_EMU_LIBPYTHON="/nonexistent/libpython3.so")
    assert lines[0] == "status 561003", lines
    message = lines[1]
    assert message.startswith("message aclnnExpGetWorkspaceSize: ")
    assert "ACLNN_EMU_LIBPYTHON=/nonexistent/libpython3.so does not load" in message
    assert "set ACLNN_EMU_LIBPYTHON to the path of the libpython" in message


USER_KERNELS = '''
import numpy as np

import aclnn_py.emulator


@aclnn_py.emulator.kernel("aclnnNdtri", dtypes=["float32"])
def sin_over_x(self, out):  # a user's kernel for an operator without one
    out[...] = np.sinc(self / np.pi)
'''


def test_a_module_of_user_kernels_named_by_aclnn_emu_kernels(program, tmp_path):
    (tmp_path / "my_kernels.py").write_text(USER_KERNELS)
    without = run(program, "ndtri")
    assert without[0] == "status 561003" and "ACLNN_EMU_KERNELS" in without[1]
    lines = run(program, "ndtri", ACLNN_EMU_KERNELS="my_kernels", PYTHONPATH=str(tmp_path))
    assert lines[0] == "status 0", lines
    expected = [1.0 if x == 0 else math.sin(x) / x for x in INPUT]
    assert [float(line) for line in lines[1:]] == pytest.approx(expected, abs=1e-6)


def test_a_module_that_fails_to_import_is_named(program, tmp_path):
    lines = run(program, "exp", ACLNN_EMU_KERNELS="no_such_kernels_module")
    assert lines[0] == "status 561003", lines
    assert "ACLNN_EMU_KERNELS names 'no_such_kernels_module', which failed to import" in lines[1]


def test_two_native_threads_launch_python_kernels_at_once(program):
    """Both threads' first calls find no handler and bring the kernels up at once: each gets
    them installed, every kernel registered, before its call goes on."""
    for _ in range(3):
        assert run(program, "threads") == ["threads ok"]


PYTHON_WITHOUT_ACLNN_PY = r'''
import ctypes, math, os, sys

lib = os.path.join(os.environ["ASCEND_HOME_PATH"], "lib64")
rt = ctypes.CDLL(os.path.join(lib, "libacl_rt.so"))
meta = ctypes.CDLL(os.path.join(lib, "libnnopbase.so"))
ops = ctypes.CDLL(os.path.join(lib, "libopapi_math.so"))
assert rt.aclInit(None) == 0 and rt.aclrtSetDevice(0) == 0
host = (ctypes.c_float * 4)(0.0, 1.0, -1.0, 2.0)
out = (ctypes.c_float * 4)()
x, y = ctypes.c_void_p(), ctypes.c_void_p()
for p in (x, y):
    assert rt.aclrtMalloc(ctypes.byref(p), ctypes.c_size_t(16), 0) == 0
assert rt.aclrtMemcpy(x, ctypes.c_size_t(16), host, ctypes.c_size_t(16), 1) == 0
shape, strides = (ctypes.c_int64 * 1)(4), (ctypes.c_int64 * 1)(1)
meta.aclCreateTensor.restype = ctypes.c_void_p
def tensor(p):
    return ctypes.c_void_p(meta.aclCreateTensor(shape, ctypes.c_uint64(1), 0, strides,
                                              ctypes.c_int64(0), 2, shape,
                                              ctypes.c_uint64(1), p))
tx, ty = tensor(x), tensor(y)
size, executor = ctypes.c_uint64(), ctypes.c_void_p()
status = ops.aclnnExpGetWorkspaceSize(tx, ty, ctypes.byref(size), ctypes.byref(executor))
print("status", status)
assert ops.aclnnExp(None, size, executor, None) == 0
assert rt.aclrtSynchronizeDevice() == 0
assert rt.aclrtMemcpy(out, ctypes.c_size_t(16), y, ctypes.c_size_t(16), 2) == 0
print(" ".join(f"{v:.6f}" for v in out))
print("aclnn_py imported", "aclnn_py" in sys.modules)
'''


def test_python_code_calling_the_tree_without_aclnn_py(tmp_path):
    """A Python process that loads the tree with ctypes, never importing aclnn_py: the
    emulator finds Python running, takes the GIL and installs aclnn_py's kernels."""
    done = in_set_env(f"{shlex.quote(sys.executable)} -c {shlex.quote(PYTHON_WITHOUT_ACLNN_PY)}",
                      tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "status 0"
    assert [float(v) for v in lines[1].split()] == pytest.approx(
        [math.exp(x) for x in INPUT], abs=1e-6)
    assert lines[2] == "aclnn_py imported True"


def test_a_forked_child_computes_python_kernels_and_the_parent_goes_on(program):
    """After the emulator brought Python up, the program forks: the child's call (a process
    with the interpreter copied, no other thread) computes, never hangs; so does the
    parent's next call."""
    lines = run(program, "fork")
    assert lines[0] == "child status 0", lines
    assert [float(line) for line in lines[1:5]] == pytest.approx([math.exp(x) for x in INPUT],
                                                                 abs=1e-6)
    assert lines[5:] == ["parent status 0"]


def test_forks_while_another_thread_runs_kernels_never_hang(program):
    """Another thread launches Python kernels all along while the program forks 20 times:
    each child (its interpreter and the runtime carried over whole: the fork waits for the
    GIL and the runtime's lock) computes; none hangs (a child is killed after 30 s)."""
    assert run(program, "fork-busy") == ["busy thread ok", "parent status 0"]


SLOW_KERNEL = '''
import time

import numpy as np

import aclnn_py.emulator


@aclnn_py.emulator.kernel("aclnnNdtri", dtypes=["float32"])
def slow_sin_over_x(self, out):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        time.sleep(0.01)
    out[...] = np.sinc(self / np.pi)
'''


def test_ctrl_c_ends_a_kernel_with_its_failure_and_the_program_gets_its_signal(program,
                                                                               tmp_path):
    """SIGINT while a kernel runs in the Python the emulator started: the kernel ends with
    the stream's abort (never runs its 20 s to the end), the program's own handler is then
    called once, and the next kernel, on a new stream, computes."""
    (tmp_path / "slow_kernels.py").write_text(SLOW_KERNEL)
    lines = run(program, "interrupt", ACLNN_EMU_KERNELS="slow_kernels",
                PYTHONPATH=str(tmp_path))
    assert lines[0] == "sync status 107023", lines  # ACL_ERROR_RT_STREAM_ABORT
    message = "\n".join(lines[1:-2])
    assert "task Ndtri on the stream was interrupted" in message
    assert "the kernel of aclnnNdtri was interrupted by KeyboardInterrupt" in message
    assert lines[-2:] == ["handler calls 1", "after status 0"]


def test_ctrl_c_in_a_program_without_a_handler_ends_it_as_sigint_does(program, tmp_path):
    """The same in a program that keeps SIGINT's default action: the process ends by the
    signal, as on CANN, without waiting for the kernel."""
    (tmp_path / "slow_kernels.py").write_text(SLOW_KERNEL)
    done = run_process(program, "interrupt-default", ACLNN_EMU_KERNELS="slow_kernels",
                       PYTHONPATH=str(tmp_path))
    assert done.returncode == -signal.SIGINT, done.stdout + done.stderr
