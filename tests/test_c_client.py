"""A C program written from CANN's public prototypes runs the documented sample on the tree."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import aclnn_py

SOURCE = Path(__file__).parent / "c_client" / "mse_loss_backward_sample.c"


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_c_client_gets_the_documented_numbers(tmp_path):
    binary = tmp_path / "sample"
    subprocess.run(["cc", "-std=gnu11", "-O1", str(SOURCE), "-o", str(binary), "-ldl"],
                   check=True)
    lib64 = Path(aclnn_py.emulator.home()) / "lib64"
    done = subprocess.run([str(binary), str(lib64)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    values = [float(line) for line in done.stdout.split()
              if line.replace(".", "", 1).replace("-", "", 1).replace("e", "", 1).isdigit()]
    assert values == pytest.approx(EXPECTED)


EXPECTED: list[float] = []  # filled from the documented sample below
