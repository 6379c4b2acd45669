"""A C program written from CANN's public prototypes runs the documented sample on the tree."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import pytest

import aclnn_py

SOURCE = Path(__file__).parent / "c_client" / "mse_loss_backward_sample.c"

# The documented sample: gradOutput = self = [[0, 1], [2, 3]], target = 1, reduction mean:
# out = gradOutput * (self - target) * 2 / 4.
EXPECTED = [-0.0, 0.0, 1.0, 3.0]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_c_client_gets_the_documented_numbers(tmp_path):
    binary = tmp_path / "sample"
    subprocess.run(["cc", "-std=gnu11", "-O1", str(SOURCE), "-o", str(binary), "-ldl"],
                   check=True)
    lib64 = Path(aclnn_py.emulator.home()) / "lib64"
    done = subprocess.run([str(binary), str(lib64)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    values = [float(line) for line in done.stdout.split()]
    assert values == EXPECTED
    assert math.copysign(1.0, values[0]) == -1.0  # 0 * (0 - 1) * 0.5 is negative zero
