"""The examples run as users run them."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow

EXAMPLES = ROOT / "examples"


@pytest.mark.emulator_only
def test_quickstart_prints_the_backend_and_a_matching_result():
    done = subprocess.run([sys.executable, str(EXAMPLES / "quickstart.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "backend: emulator" in done.stdout
    error = float(done.stdout.strip().splitlines()[-1].split("=")[-1])
    assert error < 1e-6


def test_device_pipeline_runs_a_plan_over_batches():
    done = subprocess.run([sys.executable, str(EXAMPLES / "device_pipeline.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("8 launches of one plan in ")
    assert float(lines[1].split("=")[-1]) < 1e-6


def test_any_operator_lists_inspects_and_calls():
    done = subprocess.run([sys.executable, str(EXAMPLES / "any_operator.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].split()[1] == "operators," and int(lines[0].split()[0]) >= 7
    assert "aclnnStatus aclnnAddGetWorkspaceSize(" in done.stdout
    assert "aclnnAdd matches numpy: True" in lines
    loss, reference = done.stdout.split("aclnnMseLoss = ")[1].split(" (numpy ")
    assert abs(float(loss) - float(reference.split(")")[0])) < 1e-6
    assert "False" not in done.stdout


@pytest.mark.emulator_only
def test_custom_op_ci_tests_a_header_only_package_against_its_golden_function():
    done = subprocess.run([sys.executable, str(EXAMPLES / "custom_op_ci.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert "its library" in done.stdout and "libcust_opapi.so is missing" in done.stdout
    assert sum(line.endswith(": ok") for line in lines) == 5
    assert sum("refused at phase 1 (161002)" in line for line in lines) == 2
    assert lines[-1] == "all checks passed"


@pytest.mark.emulator_only
def test_torch_npu_custom_op_calls_an_operator_on_npu_tensors_without_copies():
    pytest.importorskip("torch", reason="the example needs PyTorch: pip install torch")
    done = subprocess.run([sys.executable, str(EXAMPLES / "torch_npu_custom_op.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert sum(line.endswith(" ok") and "NpuTensor (64, 128)" in line for line in lines) == 2
    assert lines[-1] == "host-device copies made by the calls: 0"
