"""examples/training_step.py runs as users run it, and its loss falls."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "training_step.py"


@pytest.mark.emulator_only
def test_training_example_prints_the_backend_and_a_falling_loss():
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "backend: emulator" in done.stdout
    steps = [(int(s), float(v)) for s, v in
             re.findall(r"^step\s+(\d+) loss ([0-9.eE+-]+)$", done.stdout, re.MULTILINE)]
    assert [s for s, _ in steps][:2] == [0, 5] and steps[-1][0] == 49
    losses = [v for _, v in steps]
    # never rises (beyond float32 rounding once at the noise floor), and falls 100-fold
    assert all(b <= a * (1 + 1e-4) for a, b in zip(losses, losses[1:])), losses
    assert all(b < a for a, b in zip(losses[:6], losses[1:6])), losses
    assert losses[-1] < 0.01 * losses[0]


def test_training_example_fails_when_the_loss_does_not_fall(monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("training_step", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # a gradient of zeros: nothing moves, so the loss cannot fall
    monkeypatch.setattr(module.aclnn_py, "mse_loss_backward",
                        lambda grad, x, y, reduction: np.zeros_like(x))
    assert module.main() == 1
    assert "the loss did not fall" in capsys.readouterr().err
