"""tools/check_wheel.py refuses a wheel whose tag its libraries do not meet."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest
from helpers import ROOT

import aclnn_py

pytest.importorskip("elftools", reason="pyelftools is not installed: pip install pyelftools")

CHECK = ROOT / "tools" / "check_wheel.py"


def _wheel(tmp_path, name: str) -> str:
    """A wheel named ``name`` holding this machine's host library (x86_64 or aarch64, built
    here against this machine's glibc)."""
    from pathlib import Path

    library = Path(aclnn_py.__file__).parent / "_native" / "libaclnn_py_host.so"
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(library, "aclnn_py/_native/libaclnn_py_host.so")
    return str(path)


def run(*wheels: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECK), *wheels], capture_output=True,
                          text=True, timeout=60)


def test_a_plain_linux_tag_is_refused(tmp_path):
    done = run(_wheel(tmp_path, "aclnn_py-0.1.0-cp39-abi3-linux_x86_64.whl"))
    assert done.returncode == 1
    assert "not tagged cp39-abi3-manylinux_<glibc>_<machine>" in done.stderr


def test_the_wrong_machine_and_a_too_new_glibc_are_refused(tmp_path):
    import platform

    other = "aarch64" if platform.machine() == "x86_64" else "x86_64"
    done = run(_wheel(tmp_path, f"aclnn_py-0.1.0-cp39-abi3-manylinux_2_1_{other}.whl"))
    assert done.returncode == 1
    assert "libaclnn_py_host.so: machine EM_" in done.stderr
    assert "newer than manylinux_2_1" in done.stderr  # it needs GLIBC_2.2.5 at least
