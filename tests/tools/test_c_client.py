"""C programs written from CANN's public prototypes run on every emulator tree, set up only by
sourcing the tree's set_env.sh, as on a CANN install."""

from __future__ import annotations

import math
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from helpers import TESTS

import aclnn_py

pytestmark = pytest.mark.slow

C_CLIENT = TESTS / "c_client"

# The documented sample: gradOutput = self = [[0, 1], [2, 3]], target = 1, reduction mean:
# out = gradOutput * (self - target) * 2 / 4.
EXPECTED = [-0.0, 0.0, 1.0, 3.0]
# then aclnnAdd: self + 2 * target
EXPECTED_ADD = [2.0, 3.0, 4.0, 5.0]

# The libraries a C program of each release links (the facts file, section 1.1).
LINKED_LIBRARIES = {
    "8.0.RC2": "-lascendcl -lnnopbase -lopapi",
    "8.3": "-lascendcl -lnnopbase -lopapi",
    "8.5": "-lacl_rt -lnnopbase -lopapi_nn -lopapi_math",
}

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")


def in_set_env(layout: str, script: str, workdir: Path) -> subprocess.CompletedProcess:
    """Run ``script`` in bash after sourcing the tree's set_env.sh, in an environment holding
    nothing else of CANN's or the emulator's (no LD_LIBRARY_PATH in particular)."""
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("ASCEND_", "ACLNN_"))}
    environment.pop("LD_LIBRARY_PATH", None)
    set_env = Path(aclnn_py.emulator.home(layout)) / "set_env.sh"
    return subprocess.run(["bash", "-c", f"source {shlex.quote(str(set_env))} && {script}"],
                          cwd=workdir, env=environment, capture_output=True, text=True,
                          timeout=120)


def values(done: subprocess.CompletedProcess) -> list[float]:
    assert done.returncode == 0, done.stdout + done.stderr
    return [float(line) for line in done.stdout.split()]


@needs_cc
@pytest.mark.parametrize("layout", aclnn_py.emulator.LAYOUTS)
def test_c_client_gets_the_documented_numbers(tmp_path, layout):
    source = C_CLIENT / "mse_loss_backward_sample.c"
    done = in_set_env(layout, f"cc -std=gnu11 -O1 {shlex.quote(str(source))} -o sample -ldl && "
                      './sample "$ASCEND_HOME_PATH/lib64"', tmp_path)
    result = values(done)
    assert result == EXPECTED
    assert math.copysign(1.0, result[0]) == -1.0  # 0 * (0 - 1) * 0.5 is negative zero


@needs_cc
@pytest.mark.parametrize("layout", aclnn_py.emulator.LAYOUTS)
def test_a_c_program_linked_against_the_tree_runs_after_set_env(tmp_path, layout):
    source = C_CLIENT / "linked_sample.c"
    done = in_set_env(layout, f"cc -std=gnu11 -O1 {shlex.quote(str(source))} -o linked "
                      f'-L"$ASCEND_HOME_PATH/lib64" {LINKED_LIBRARIES[layout]} && ./linked',
                      tmp_path)
    assert values(done) == EXPECTED + EXPECTED_ADD
    # without set_env.sh the program does not start: nothing records where the libraries are
    bare = subprocess.run([str(tmp_path / "linked")], env={"PATH": os.environ["PATH"]},
                          capture_output=True, text=True, timeout=60, cwd=tempfile.gettempdir())
    assert bare.returncode != 0
    assert "cannot open shared object file" in bare.stderr


@needs_cc
@pytest.mark.parametrize("layout", aclnn_py.emulator.LAYOUTS)
def test_set_env_exports_what_cann_set_env_exports(tmp_path, layout):
    home = aclnn_py.emulator.home(layout)
    done = in_set_env(layout, 'printf "%s\\n" "$ASCEND_HOME_PATH" "$ASCEND_TOOLKIT_HOME" '
                      '"$ASCEND_OPP_PATH" "$LD_LIBRARY_PATH"', tmp_path)
    assert done.returncode == 0, done.stderr
    home_path, toolkit, opp, library_path = done.stdout.splitlines()
    assert home_path == toolkit == home
    assert opp == f"{home}/opp"
    assert library_path.split(":") == [f"{home}/lib64", f"{home}/driver/lib64",
                                       f"{home}/driver/lib64/common",
                                       f"{home}/driver/lib64/driver"]
