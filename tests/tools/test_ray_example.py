"""examples/ray_npus.py on Ray clusters of emulated NPUs: a local one it starts, one started
with some devices hidden by ASCEND_RT_VISIBLE_DEVICES, one where Ray leaves the variable
alone, and a running cluster it joins through RAY_ADDRESS."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path

import pytest
from helpers import ROOT

EXAMPLE = ROOT / "examples" / "ray_npus.py"
NOSET = "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES"

pytestmark = [
    pytest.mark.emulator_only,
    pytest.mark.skipif(find_spec("ray") is None,
                       reason='Ray is not installed: pip install "aclnn_py[ray]"'),
    pytest.mark.slow,
]


def environment(**variables: str) -> dict[str, str]:
    """This process's environment without Ray's, CANN's or the emulator's variables, plus
    ``variables``."""
    kept = {k: v for k, v in os.environ.items()
            if not k.startswith(("RAY_", "ASCEND_", "ACLNN_"))}
    return {**kept, "ACLNN_PY_BACKEND": "emulator", **variables}


def run_example(env: dict[str, str], *arguments: str) -> list[str]:
    done = subprocess.run([sys.executable, str(EXAMPLE), *arguments], env=env,
                          capture_output=True, text=True, timeout=600,
                          cwd=tempfile.gettempdir())
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if line.startswith("ray: ")]


def tasks_per_npu(lines: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in lines:
        found = re.fullmatch(r"ray: node \w+ NPU (\d+): (\d+) tasks", line)
        if found:
            counts[found[1]] = counts.get(found[1], 0) + int(found[2])
    return counts


def test_a_local_cluster_of_two_emulated_npus():
    lines = run_example(environment(ACLNN_EMU_DEVICE_COUNT="2"), "--address", "local")
    assert lines[0] == "ray: started a local cluster (emulated NPUs); 2 NPUs"
    counts = tasks_per_npu(lines)
    assert set(counts) <= {"0", "1"} and sum(counts.values()) == 8
    assert lines[-1] == "ray: 8 tasks on 2 NPUs, results match"


def test_only_the_npus_left_visible_are_used():
    # Ray takes the node's NPU ids from ASCEND_RT_VISIBLE_DEVICES; each task checks that its
    # device is the NPU Ray named (logical id 1 here, device 0 of the task's process).
    lines = run_example(environment(ACLNN_EMU_DEVICE_COUNT="2", ASCEND_RT_VISIBLE_DEVICES="1"),
                        "--address", "local", "--tasks", "4")
    assert lines[0] == "ray: started a local cluster (emulated NPUs); 1 NPUs"
    assert tasks_per_npu(lines) == {"1": 4}
    assert lines[-1] == "ray: 4 tasks on 1 NPUs, results match"


def test_tasks_find_their_npu_when_ray_leaves_the_visible_devices_alone():
    lines = run_example(environment(ACLNN_EMU_DEVICE_COUNT="3", **{NOSET: "1"}),
                        "--address", "local", "--tasks", "4")
    assert set(tasks_per_npu(lines)) <= {"0", "1", "2"}
    assert lines[-1] == "ray: 4 tasks on 3 NPUs, results match"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_joining_a_running_cluster_whose_node_declares_its_npus():
    ray = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")
    assert ray is not None
    port = free_port()
    temp = tempfile.mkdtemp(prefix="ray-")
    # The node, not the driver, has the emulated devices; both run without token auth.
    node_env = environment(ACLNN_EMU_DEVICE_COUNT="2", RAY_AUTH_MODE="disabled")
    with open(os.path.join(temp, "head.log"), "w+") as log:
        head = subprocess.Popen(
            [ray, "start", "--head", "--block", "--port", str(port), "--num-cpus", "2",
             "--resources", '{"NPU": 2}', "--include-dashboard", "false", "--temp-dir", temp,
             "--disable-usage-stats"], env=node_env, stdout=log, stderr=subprocess.STDOUT)
        try:
            while "Ray runtime started" not in Path(log.name).read_text():
                assert head.poll() is None, Path(log.name).read_text()
                time.sleep(0.2)
            driver_env = environment(RAY_AUTH_MODE="disabled", RAY_ADDRESS=f"127.0.0.1:{port}")
            del driver_env["ACLNN_PY_BACKEND"]
            lines = run_example(driver_env, "--tasks", "4")
        finally:
            head.terminate()
            head.wait(timeout=120)
            shutil.rmtree(temp, ignore_errors=True)
    assert lines[0] == f"ray: joined the cluster at 127.0.0.1:{port}; 2 NPUs"
    assert set(tasks_per_npu(lines)) <= {"0", "1"}
    assert lines[-1] == "ray: 4 tasks on 2 NPUs, results match"
