"""aclnn_py's pytest plugin, as a user's own suite sees it (pytest run in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

import aclnn_py
from aclnn_py._c import loader as _loader

pytestmark = pytest.mark.slow

SUITE = '''
import os
import numpy as np
import pytest
import aclnn_py

def test_backend_variable():
    print("backend variable:", os.environ.get("ACLNN_PY_BACKEND"))

@pytest.mark.emulator_only
def test_emulator_only():
    assert aclnn_py.emulator.stats()["live_streams"] >= 0

@pytest.mark.npu
def test_npu():
    pass

def test_stream_fixture(aclnn_stream):
    assert isinstance(aclnn_stream, aclnn_py.Stream) and not aclnn_stream.closed
    x = aclnn_py.to_device(np.ones(3, np.float32), stream=aclnn_stream)
    assert aclnn_py.add(x, x, stream=aclnn_stream).numpy().tolist() == [2.0, 2.0, 2.0]

LEAKED = []

def test_leaky(aclnn_leak_check):
    LEAKED.append(aclnn_py.to_device(np.ones(16, np.float32)))

def test_tidy(aclnn_leak_check):
    aclnn_py.to_device(np.ones(16, np.float32)).free()
'''


def run_suite(tmp_path: Path, *options: str, env: dict[str, str] | None = None):
    """pytest on the user suite above, from a directory without the project's config."""
    (tmp_path / "test_user_suite.py").write_text(SUITE)
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("ACLNN_PY_BACKEND", "ACLNN_PY_CANN_HOME", "ASCEND_HOME_PATH",
                                "ASCEND_TOOLKIT_HOME", "PYTEST_ADDOPTS")}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s",
                           "-rs", f"--junitxml={tmp_path / 'report.xml'}", *options,
                           str(tmp_path / "test_user_suite.py")],
                          cwd=tmp_path, env=environment, capture_output=True, text=True,
                          timeout=120)


def outcomes(tmp_path: Path) -> dict[str, str]:
    """Each test's outcome, from the run's JUnit report."""
    found = {}
    for case in ElementTree.parse(tmp_path / "report.xml").iter("testcase"):
        kinds = {child.tag for child in case}
        found[case.get("name")] = ("FAILED" if kinds & {"failure", "error"} else
                                   "SKIPPED" if "skipped" in kinds else "PASSED")
    return found


def test_the_option_picks_the_backend_and_the_markers_follow_it(tmp_path):
    done = run_suite(tmp_path, "--aclnn-backend=emulator")
    assert "backend variable: emulator" in done.stdout
    assert outcomes(tmp_path) == {
        "test_backend_variable": "PASSED", "test_emulator_only": "PASSED",
        "test_npu": "SKIPPED", "test_stream_fixture": "PASSED", "test_leaky": "FAILED",
        "test_tidy": "PASSED"}, done.stdout
    assert "needs a real Ascend NPU; the loaded libraries are aclnn_py's emulator" in done.stdout
    assert "the test left resources alive" in done.stdout


def test_without_the_option_the_environment_is_left_alone(tmp_path):
    done = run_suite(tmp_path, "-k", "backend_variable")
    assert "backend variable: None" in done.stdout
    done = run_suite(tmp_path, "-k", "backend_variable", env={"ACLNN_PY_BACKEND": "emulator"})
    assert "backend variable: emulator" in done.stdout


def test_the_cann_backend_skips_emulator_only_tests(tmp_path):
    """Through the cann backend on the emulator's CANN-shaped tree, as CI runs the portable
    subset: emulator_only tests skip, the npu ones too (it is still the emulator)."""
    root = str(_loader.find_emulator().root)
    done = run_suite(tmp_path, "--aclnn-backend=cann", "-k", "not leaky",
                     env={"ACLNN_PY_CANN_HOME": root})
    result = outcomes(tmp_path)
    assert result["test_emulator_only"] == "SKIPPED", done.stdout
    assert result["test_npu"] == "SKIPPED"
    assert result["test_stream_fixture"] == "PASSED"
    assert "relies on aclnn_py's emulator; the backend is CANN" in done.stdout


def test_an_unknown_backend_is_a_usage_error(tmp_path):
    done = run_suite(tmp_path, "--aclnn-backend=npu")
    assert done.returncode == 4  # pytest's usage error
    assert "invalid choice: 'npu'" in done.stderr


def test_the_plugin_is_registered_with_the_installed_package():
    from importlib.metadata import entry_points

    names = {entry.value for entry in entry_points(group="pytest11")}
    assert "aclnn_py.pytest_plugin" in names



def test_the_report_header_names_the_backend_and_why(tmp_path):
    done = run_suite(tmp_path, "--aclnn-backend=emulator", "-k", "backend_variable")
    header = next(line for line in done.stdout.splitlines() if line.startswith("aclnn_py "))
    assert header.startswith(f"aclnn_py {aclnn_py.__version__}: backend emulator at "
                             f"{_loader.EMULATOR_HOME} (ACLNN_PY_BACKEND=emulator: ")


def test_the_cann_backend_without_cann_stops_the_session_once_with_the_paths_tried(tmp_path):
    done = run_suite(tmp_path, "--aclnn-backend=cann", env={"HOME": str(tmp_path)})
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert done.stderr.count("--aclnn-backend=cann: no loadable CANN.") == 1
    assert "No CANN installation found" in done.stderr and "Paths tried:" in done.stderr
    assert "passed" not in done.stdout and "error" not in done.stdout.lower()


def test_a_named_location_that_does_not_load_fails_the_run_unless_emulator_is_asked(tmp_path):
    bogus = str(tmp_path / "bogus")
    done = run_suite(tmp_path, "-k", "stream_fixture", env={"ASCEND_HOME_PATH": bogus})
    assert (f"aclnn_py {aclnn_py.__version__}: no usable backend: $ASCEND_HOME_PATH names "
            f"{bogus} as the CANN install, but it does not exist") in done.stdout
    assert outcomes(tmp_path) == {"test_stream_fixture": "FAILED"}, done.stdout
    assert "LibraryNotFoundError" in done.stdout
    done = run_suite(tmp_path, "--aclnn-backend=emulator", "-k", "stream_fixture",
                     env={"ASCEND_HOME_PATH": bogus})
    assert outcomes(tmp_path) == {"test_stream_fixture": "PASSED"}, done.stdout


LEAK_SUITE = '''
import numpy as np
import pytest
import aclnn_py
import aclnn_py.pytest_plugin

@pytest.fixture(autouse=True)
def as_if_on_cann(monkeypatch):
    """What the fixture does on a real CANN, whose libraries count no live resources."""
    monkeypatch.setattr(aclnn_py.pytest_plugin, "on_emulator", lambda: False)

LEAKED = []

def test_leaky(aclnn_leak_check):
    LEAKED.append(aclnn_py.to_device(np.ones(1000, np.float32)))

def test_tidy(aclnn_leak_check):
    x = aclnn_py.to_device(np.ones(1000, np.float32))
    aclnn_py.add(x, x).numpy()
'''


def test_the_leak_check_counts_aclnn_py_memory_off_the_emulator(tmp_path):
    (tmp_path / "test_leaks.py").write_text(LEAK_SUITE)
    environment = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "--aclnn-backend=emulator", str(tmp_path / "test_leaks.py")],
                          cwd=tmp_path, env=environment, capture_output=True, text=True,
                          timeout=120)
    # test_leaky passes and then errors at teardown; test_tidy passes.
    assert "2 passed, 1 error" in done.stdout, done.stdout
    assert "ERROR test_leaks.py::test_leaky" in done.stdout
    assert "the test left resources alive: {'used_bytes': 4096}" in done.stdout
