"""The stress run (benchmarks/stress.py) as a test: threads, garbage collection and random
KeyboardInterrupts against the launch path, plans, streams and the pool, under a watchdog."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow

STRESS = ROOT / "benchmarks" / "stress.py"
SECONDS = float(os.environ.get("ACLNN_PY_STRESS_SECONDS", "15"))


@pytest.mark.parametrize(("options", "seconds"), [((), SECONDS), (("--fallback",), SECONDS / 3)],
                         ids=["repeatable", "fallback"])
def test_stress_finishes_with_right_results_and_nothing_left_behind(options, seconds):
    """``--fallback``: every signature launches the ordinary way (phase 1 each time, the
    executor consumed by phase 2), as when CANN refuses repeatable executors."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ACLNN_")}
    environment["ACLNN_PY_BACKEND"] = "emulator"
    try:
        done = subprocess.run([sys.executable, str(STRESS), "--seconds", str(seconds),
                               *options],
                              env=environment, capture_output=True, text=True,
                              timeout=seconds + 120)  # the watchdog: a hang fails here
    except subprocess.TimeoutExpired as expired:
        raise AssertionError(f"the stress run hung (no end {seconds + 120:.0f} s after it "
                             f"started); its output: {expired.stdout!r}") from None
    assert done.stdout, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    print(report)  # the figures, with pytest -s
    assert report["failures"] == [] and report["wrong"] == 0 and report["errors"] == 0
    assert report["checked"] > 1000
    assert report["interrupts"] > 50
    assert report["leaked"] == dict.fromkeys(report["leaked"], 0)
    assert done.returncode == 0, done.stderr
