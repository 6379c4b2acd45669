"""``python -m aclnn_py --conformance`` on the emulator and on each emulator release tree:
every case and check passes (a check skips only where the release lacks the feature), the
report has its schema, and a broken expectation -- a wrong reference, an expected code, a
refusal injected into the emulator, a role table that disagrees -- is reported as a
failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CANN_VARIABLES
from tolerances import golden_add

import aclnn_py
from aclnn_py import conformance

# The command runs on aclnn_py's emulator trees here; faults are the emulator's.
pytestmark = pytest.mark.emulator_only

TOP_LEVEL = {"schema", "aclnn_py_version", "cann_version", "backend", "emulator", "root",
             "libraries", "soc_name", "bfloat16", "device_count", "devices", "visible_devices",
             "python", "numpy", "versions", "cases", "checks", "summary", "ok"}
CHECK_NAMES = ["acl_init_counting", "executor_repeatable", "executor_cache_refusal",
               "memcpy_async_host_memory", "device_visibility", "roles", "torch_npu_tensors"]
LACKS_REPEATABLE = "documented from 8.0.RC3"


def conformance_command(tmp_path: Path, env: dict[str, str], *arguments: str
                        ) -> tuple[subprocess.CompletedProcess, dict | None]:
    """``python -m aclnn_py --conformance --output <tmp>/report.json`` in a fresh interpreter
    outside the source tree, with no CANN variables but those in ``env``."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in CANN_VARIABLES and not k.startswith("ACLNN_EMU_")
                   and k != "ASCEND_RT_VISIBLE_DEVICES"}
    environment.update({"HOME": str(tmp_path), **env})
    output = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "aclnn_py", "--conformance", "--output",
                           str(output), *arguments], env=environment, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    report = json.loads(output.read_text()) if output.exists() else None
    return done, report


def allowed_skips(layout: str | None) -> dict[str, str]:
    """The checks a tree may skip, each with (a part of) its reason."""
    # torch_npu needs a real CANN: on the emulator the stand-in tests check that path
    skips: dict[str, str] = {"torch_npu_tensors": "tests/npu_standin.py"}
    if layout == "8.0.RC2":  # the repeatable-executor API is documented from 8.0.RC3
        skips.update(executor_repeatable=LACKS_REPEATABLE,
                     executor_cache_refusal=LACKS_REPEATABLE)
    return skips


def assert_all_pass(report: dict, layout: str | None) -> None:
    assert set(report) == TOP_LEVEL
    assert report["schema"] == conformance.SCHEMA
    assert report["aclnn_py_version"] == aclnn_py.__version__
    assert report["emulator"] is True and report["device_count"] >= 1
    assert report["libraries"] and Path(report["root"]).is_dir()
    assert [check["name"] for check in report["checks"]] == CHECK_NAMES
    assert [case["name"] for case in report["cases"]] == [c.name for c in conformance.CASES]
    for case in report["cases"]:
        assert case["result"] == "pass", case
        assert {"max_abs_error", "max_rel_error", "tolerance"} <= set(case)
    skips = allowed_skips(layout)
    for check in report["checks"]:
        assert {"name", "description", "result", "reason", "figures", "expectations",
                "seconds"} <= set(check)
        if check["result"] == "skipped":
            assert check["name"] in skips, check
            assert skips[check["name"]] in check["reason"], check
        else:
            assert check["result"] == "pass", check
            assert check["expectations"] and all(e["ok"] for e in check["expectations"])
    skipped = sum(check["result"] == "skipped" for check in report["checks"])
    assert report["summary"] == {
        "passed": len(report["cases"]) + len(report["checks"]) - skipped, "failed": 0,
        "skipped": skipped,
        "cases": {"passed": len(report["cases"]), "failed": 0, "skipped": 0},
        "checks": {"passed": len(report["checks"]) - skipped, "failed": 0, "skipped": skipped}}
    assert report["ok"] is True


@pytest.mark.slow
def test_the_command_passes_on_the_emulator(tmp_path):
    done, report = conformance_command(tmp_path, {"ACLNN_PY_BACKEND": "emulator"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert report is not None and report["backend"] == "emulator"
    assert report["cann_version"] == "8.5.0"
    assert_all_pass(report, None)
    assert "result: " in done.stdout and "-- OK" in done.stdout
    assert f"report written to {tmp_path / 'report.json'}" in done.stdout
    refusal = next(c for c in report["checks"] if c["name"] == "executor_cache_refusal")
    assert refusal["figures"]["refused"] is True  # the emulated cache refused with 561000


@pytest.mark.slow
@pytest.mark.parametrize("layout", aclnn_py.emulator.LAYOUTS)
def test_the_command_passes_on_each_release_tree(tmp_path, layout):
    """Each tree as a CANN install, with three devices so that the visibility check also
    names two devices and an order CANN refuses."""
    done, report = conformance_command(tmp_path, {
        "ACLNN_PY_BACKEND": "cann", "ACLNN_PY_CANN_HOME": aclnn_py.emulator.home(layout),
        "ACLNN_EMU_DEVICE_COUNT": "3"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert report is not None and report["backend"] == "cann"
    assert_all_pass(report, layout)
    visibility = next(c for c in report["checks"] if c["name"] == "device_visibility")
    assert len(visibility["expectations"]) == 4
    copies = next(c for c in report["checks"] if c["name"] == "memcpy_async_host_memory")
    ordinary = copies["figures"]["h2d_ordinary"]["status"]
    assert ordinary == (0 if layout == "8.5" else conformance.INVALID_PARAM)


@pytest.mark.slow
def test_json_goes_to_stdout_with_json(tmp_path):
    done, report = conformance_command(tmp_path, {"ACLNN_PY_BACKEND": "emulator"}, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == report


@pytest.mark.slow
def test_a_backend_that_cannot_load_exits_1_and_points_to_the_doctor(tmp_path):
    done, report = conformance_command(tmp_path, {"ACLNN_PY_BACKEND": "cann",
                                                  "ACLNN_PY_CANN_HOME": str(tmp_path / "none")})
    assert done.returncode == 1 and report is None
    assert "conformance could not start: LibraryNotFoundError" in done.stderr
    assert "python -m aclnn_py" in done.stderr


@pytest.mark.slow
def test_output_needs_conformance(tmp_path):
    done = subprocess.run([sys.executable, "-m", "aclnn_py", "--output", "x.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--output needs --conformance" in done.stderr


# ---- a broken expectation is a failure (in this process) ------------------------------------


def test_a_wrong_reference_fails_its_cases(monkeypatch):
    monkeypatch.setitem(conformance.REFERENCES, "add",
                        lambda x, y, alpha=1: golden_add(x, y, alpha) + 0.5)
    report = conformance.run(checks=[])
    failed = {case["name"] for case in report["cases"] if case["result"] == "fail"}
    adds = {case.name for case in conformance.CASES if case.function == "add"}
    empty = {case.name for case in conformance.CASES
             if case.function == "add" and 0 in (n for s in case.shapes for n in s or ())}
    assert failed == adds - empty  # an empty result has no element to be wrong
    wrong = next(case for case in report["cases"] if case["name"] == "add/float32/0d")
    assert wrong["mismatches"] == 1 and wrong["max_abs_error"] == pytest.approx(0.5)
    assert report["ok"] is False and report["summary"]["failed"] == len(failed)
    assert "FAIL add/float32/0d: 1 element(s) outside the tolerance" in \
        conformance.format_report(report)


def test_an_injected_refusal_fails_the_repeatable_check():
    aclnn_py.emulator.inject_fault("aclSetAclOpExecutorRepeatable", conformance.EXECUTOR_REFUSED)
    report = conformance.run(checks=["executor_repeatable"], cases=False)
    (check,) = report["checks"]
    assert check["result"] == "fail"
    assert check["reason"] == "aclSetAclOpExecutorRepeatable accepts a fresh executor"
    assert report["ok"] is False and report["summary"]["failed"] == 1


@pytest.mark.slow
def test_a_wrong_expected_code_fails_a_subprocess_check(monkeypatch):
    monkeypatch.setattr(conformance, "REPEAT_INITIALIZE", 0)
    report = conformance.run(checks=["acl_init_counting"], cases=False)
    (check,) = report["checks"]
    assert check["result"] == "fail"
    assert check["reason"] == "a second aclInit in the process returns " \
        "ACL_ERROR_REPEAT_INITIALIZE"
    assert check["figures"]["second_init"] == aclnn_py._c.lowlevel.ACL_ERROR_REPEAT_INITIALIZE


@pytest.mark.slow
def test_a_probe_that_cannot_run_fails_its_check(monkeypatch):
    monkeypatch.setattr(conformance, "PROBE_TIMEOUT", 1e-3)
    report = conformance.run(checks=["memcpy_async_host_memory"], cases=False)
    (check,) = report["checks"]
    assert check["result"] == "fail" and check["reason"].startswith("TimeoutExpired")


def test_the_roles_check_fails_on_a_table_entry_that_does_not_apply(monkeypatch):
    from aclnn_py.ops import catalog as _catalog

    report = conformance.run(checks=["roles"], cases=False)
    (check,) = report["checks"]
    assert check["result"] == "pass" and check["figures"]["entry_applies"] >= 8
    assert set(check["figures"]["table"]) >= {"ops-nn", "ops-math"}
    agreement = dict(_catalog.role_agreement(), names_differ=["aclnnAdd"])
    monkeypatch.setattr(_catalog, "role_agreement", lambda: agreement)
    report = conformance.run(checks=["roles"], cases=False)
    (check,) = report["checks"]
    assert check["result"] == "fail" and check["figures"]["names_differ"] == ["aclnnAdd"]


def test_unknown_checks_are_refused():
    with pytest.raises(ValueError, match="unknown checks \\['nope'\\]"):
        conformance.run(checks=["nope"])


@pytest.mark.parametrize(("version", "expected"), [
    ("8.0.RC2", (8, 0, -98)), ("8.0.RC3", (8, 0, -97)), ("8.0.0", (8, 0, 0)),
    ("8.3.RC1", (8, 3, -99)), ("8.5.0", (8, 5, 0)), ("8.5", (8, 5, 0)), (None, None),
    ("unknown", None)])
def test_release_order(version, expected):
    assert conformance.release(version) == expected
    if expected is not None:
        assert (expected >= conformance.REPEATABLE_SINCE) is (version != "8.0.RC2")
        assert (expected >= conformance.PAGEABLE_ASYNC_SINCE) is version.startswith("8.5")
