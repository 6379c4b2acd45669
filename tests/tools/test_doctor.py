"""Diagnosis: ``python -m aclnn_py``, the error of a named CANN location that does not load,
the warning of a surprising fallback to the emulator, and the error of importing the unbuilt
source tree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from conftest import CANN_VARIABLES, run_python

from aclnn_py import LibraryNotFoundError
from aclnn_py._c import loader as _loader

PACKAGE = Path(_loader.__file__).resolve().parent.parent


def doctor(*arguments: str, env: dict[str, str] | None = None, home: Path
           ) -> subprocess.CompletedProcess:
    """``python -m aclnn_py`` in a fresh interpreter, outside the source tree, with no CANN
    variables but those in ``env`` and ``home`` as $HOME (so no $HOME/Ascend)."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in CANN_VARIABLES and not k.startswith("ACLNN_EMU_")}
    environment.update({"HOME": str(home), **(env or {})})
    return subprocess.run([sys.executable, "-m", "aclnn_py", *arguments], env=environment,
                          cwd=home, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_doctor_json_on_the_emulator(tmp_path):
    done = doctor("--json", "--backend", "emulator", home=tmp_path,
                  env={"ACLNN_EMU_SOC": "Ascend310P3", "LD_LIBRARY_PATH": "/opt/nothing"})
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads(done.stdout)
    assert found["ok"] is True
    assert found["backend"] == "emulator" and found["emulator"] is True
    assert found["reason"].startswith("ACLNN_PY_BACKEND=emulator")
    assert found["cann_version"] == "8.5.0"
    assert found["soc_name"] == "Ascend310P3" and found["bfloat16"] is False
    assert set(found["libraries"]) == {"runtime", "meta", "ops", "opapi_math",
                                       "opapi_transformer", "opapi_cv"}
    assert all(Path(path).is_file() for path in found["libraries"].values())
    # The support library libruntime.so, by its file name or (an installed wheel keeps
    # copies, not links) by its soname's.
    assert any(Path(path).name in ("libruntime.so", "libaclnn_py_emu_runtime.so")
               for path in found["dependencies"])
    assert all(path.startswith(found["root"]) for path in found["dependencies"])
    assert found["device_count"] == 1
    assert found["devices"][0]["total_bytes"] == 16 * 2**30
    assert 0 < found["devices"][0]["free_bytes"] <= found["devices"][0]["total_bytes"]
    assert found["environment"] == {"ACLNN_EMU_SOC": "Ascend310P3",
                                    "ACLNN_PY_BACKEND": "emulator",
                                    "LD_LIBRARY_PATH": "/opt/nothing"}
    test = found["self_test"]
    assert test["ok"] and test["operator"] == "aclnnMseLossBackward"
    assert len(test["result"]) == 2 and test["max_abs_error"] < 1e-6
    assert found["versions"]["aclnn_py"] and found["versions"]["numpy"]
    assert found["operators"] >= 9  # the curated ones, aclnnInplaceAdd, aclnnAddCustom
    assert found["custom_packages"] == [
        {"path": str(Path(found["root"]) / "opp" / "vendors" / "customize"), "exists": True}]
    assert [root["source"] for root in found["searched_roots"]] == [
        "default", "default", "default ($HOME)", "default ($HOME)"]


@pytest.mark.slow
def test_doctor_text_names_the_cann_tree_it_used(tmp_path):
    """Through the cann backend on the emulator's 8.3 tree: the reason names the variable,
    and the text says the libraries are the emulator's."""
    root = _loader.emulator_home("8.3")
    done = doctor(home=tmp_path, env={"ACLNN_PY_BACKEND": "cann",
                                      "ACLNN_PY_CANN_HOME": str(root),
                                      "ACLNN_EMU_DEVICE_COUNT": "2"})
    assert done.returncode == 0, done.stdout + done.stderr
    text = done.stdout
    assert "backend              cann (aclnn_py's emulator tree)" in text
    assert f"CANN found at {root} ($ACLNN_PY_CANN_HOME)" in text
    assert f"  $ACLNN_PY_CANN_HOME    {root}: complete" in text
    assert "CANN version         8.3.RC1" in text
    assert "devices              2" in text and "  device 1 " in text
    assert f"  ACLNN_PY_CANN_HOME={root}" in text
    assert "self-test            aclnnMseLossBackward on float32 (2, 3) and (3,): ok" in text
    assert text.rstrip().endswith("result: OK")


@pytest.mark.slow
def test_doctor_exits_non_zero_when_the_requested_backend_cannot_work(tmp_path):
    done = doctor("--backend", "cann", home=tmp_path)
    assert done.returncode == 1
    assert "error: LibraryNotFoundError: No CANN installation found" in done.stdout
    assert "result: FAILED: the requested backend cannot work here" in done.stdout
    done = doctor("--json", home=tmp_path, env={"ACLNN_PY_BACKEND": "cann"})
    assert done.returncode == 1
    found = json.loads(done.stdout)
    assert found["ok"] is False and found["backend"] is None and found["self_test"] is None
    assert found["error"].startswith("LibraryNotFoundError")


@pytest.mark.slow
def test_doctor_reports_a_named_location_that_does_not_load(tmp_path):
    bogus = tmp_path / "opt" / "bogus" / "cann"
    done = doctor(home=tmp_path, env={"ASCEND_TOOLKIT_HOME": str(bogus)})
    assert done.returncode == 1, done.stdout + done.stderr
    text = done.stdout
    assert f"CANN location named  $ASCEND_TOOLKIT_HOME={bogus} (the only root searched" in text
    assert f"  $ASCEND_TOOLKIT_HOME   {bogus}: does not exist" in text
    assert "default" not in text.split("CANN roots searched, in order:")[1].split("\n\n")[0]
    assert (f"error: LibraryNotFoundError: $ASCEND_TOOLKIT_HOME names {bogus} as the CANN "
            "install, but it does not exist") in text
    assert f"Paths tried:\n  {bogus}/lib64/libacl_rt.so" in text
    assert "to run on the emulator instead, set ACLNN_PY_BACKEND=emulator" in text
    assert "backend              emulator" not in text and "self-test" not in text
    assert text.rstrip().endswith("result: FAILED: the requested backend cannot work here")
    found = json.loads(doctor("--json", home=tmp_path,
                              env={"ASCEND_TOOLKIT_HOME": str(bogus)}).stdout)
    assert found["ok"] is False and found["backend"] is None
    assert found["named_location"] == {"variable": "ASCEND_TOOLKIT_HOME", "value": str(bogus)}
    assert str(bogus / "lib64" / "libnnopbase.so") in found["tried"]
    assert [root["source"] for root in found["searched_roots"]] == ["$ASCEND_TOOLKIT_HOME"]
    # The setting the error names runs the emulator, the location notwithstanding.
    done = doctor("--backend", "emulator", home=tmp_path, env={"ASCEND_TOOLKIT_HOME": str(bogus)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "backend              emulator" in done.stdout


def test_doctor_reports_an_aclnn_py_built_without_the_emulator(tmp_path, monkeypatch):
    from aclnn_py import doctor as doctor_module

    monkeypatch.setattr(_loader, "EMULATOR_TREES", tmp_path / "absent")
    monkeypatch.setattr(_loader, "EMULATOR_HOME", tmp_path / "absent" / "8.5")
    monkeypatch.setattr(_loader, "_libraries", None)
    monkeypatch.setenv("ACLNN_PY_BACKEND", "emulator")
    found = doctor_module.report()
    assert found["ok"] is False and found["emulator_built"] is False
    assert "installed without its host emulator (ACLNN_PY_BUILD_EMULATOR=0" in found["error"]
    assert "emulator built       no" in doctor_module.format_report(found)


# ---- a named location that does not load; the fallback warning ------------------------


@pytest.fixture
def auto_backend(tmp_path, monkeypatch):
    """locate() in auto mode with no CANN anywhere, a fresh warning flag, and the Ascend
    default folder at a path of the test's choosing (absent at first)."""
    for variable in CANN_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(_loader, "ASCEND_BASE", tmp_path / "Ascend-default")
    monkeypatch.setattr(_loader, "_fallback_warned", False)
    return tmp_path


def fallback_warnings() -> tuple[_loader.Installation, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        installation = _loader.locate()
        _loader.locate()
    return installation, [str(w.message) for w in caught if w.category is RuntimeWarning]


def test_no_warning_when_nothing_says_cann_should_be_here(auto_backend):
    installation, messages = fallback_warnings()
    assert installation.backend == "emulator"
    assert messages == []
    assert "nothing in the environment points at one" in installation.reason


@pytest.mark.parametrize("backend", ["auto", "cann"])
@pytest.mark.parametrize("variable", ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME",
                                      "ACLNN_PY_CANN_HOME"])
def test_a_named_cann_that_does_not_load_is_an_error_not_a_warning(auto_backend, monkeypatch,
                                                                   variable, backend):
    empty = auto_backend / "cann-root"
    empty.mkdir()
    monkeypatch.setenv(variable, str(empty))
    monkeypatch.setenv("ACLNN_PY_BACKEND", backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):  # every lookup, not only the first
            with pytest.raises(LibraryNotFoundError) as caught:
                _loader.locate()
            assert str(caught.value).startswith(f"${variable} names {empty} as the CANN "
                                                "install, but it has no runtime library")
            assert "ACLNN_PY_BACKEND=emulator" in caught.value.message
            assert f"{empty}/lib64/libacl_rt.so" in caught.value.tried


def test_one_warning_when_the_default_ascend_folder_exists(auto_backend):
    _loader.ASCEND_BASE.mkdir()
    installation, messages = fallback_warnings()
    assert installation.backend == "emulator"
    assert len(messages) == 1 and f"{_loader.ASCEND_BASE} exists" in messages[0]
    assert "uses its host emulator" in messages[0] and "python -m aclnn_py" in messages[0]
    assert "ACLNN_PY_BACKEND=emulator" in messages[0]


def test_the_warning_points_at_the_callers_line(auto_backend):
    _loader.ASCEND_BASE.mkdir()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        _loader.locate()
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_no_warning_when_the_emulator_is_asked_for(auto_backend, monkeypatch):
    monkeypatch.setenv("ASCEND_HOME_PATH", str(auto_backend / "bogus"))
    monkeypatch.setenv("ACLNN_PY_BACKEND", "emulator")
    _loader.ASCEND_BASE.mkdir()
    installation, messages = fallback_warnings()
    assert installation.backend == "emulator" and messages == []


USERS_PROCESS = """
    import numpy as np
    import aclnn_py, aclnn_py._c.loader
    aclnn_py._c.loader.ASCEND_BASE = aclnn_py._c.loader.Path(__import__("os").environ["HOME"])
    x = np.ones(3, np.float32)
    aclnn_py.add(x, x)
    aclnn_py.mse_loss(x, x)
    print(aclnn_py.runtime_info()["backend"])
"""


@pytest.mark.slow
def test_the_warning_reaches_a_users_process_once_at_the_users_line(tmp_path):
    """No location named, but the default Ascend folder (here: $HOME) exists."""
    done = run_python(USERS_PROCESS, home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "emulator"
    assert done.stderr.count("RuntimeWarning: aclnn_py found no usable CANN installation") == 1
    line = textwrap.dedent(USERS_PROCESS).splitlines().index("aclnn_py.add(x, x)") + 1
    assert f"<string>:{line}: RuntimeWarning: aclnn_py found no usable CANN" in done.stderr
    assert f"{tmp_path} exists" in done.stderr


# ---- importing the unbuilt source tree ----------------------------------------------------


@pytest.mark.slow
def test_importing_the_unbuilt_source_tree_says_what_to_do(tmp_path):
    """As after a non-editable install, run from the repository root: the source tree's
    aclnn_py (no _ffi.py, no libraries) comes first on sys.path. ``-S`` keeps out this
    environment's own install, whose editable finder would supply the missing modules."""
    shutil.copytree(PACKAGE, tmp_path / "aclnn_py", ignore=shutil.ignore_patterns(
        "_ffi.py", "_fast_calls*", "_native", "_emulator", "__pycache__"))
    done = subprocess.run([sys.executable, "-S", "-c", "import aclnn_py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: aclnn_py was imported from an unbuilt source tree "
                           f"({tmp_path})"), done.stderr
    assert f"`pip install -e {tmp_path}`" in last
    assert "run Python (and pytest) from another directory" in last
    assert "ModuleNotFoundError" not in done.stderr


@pytest.mark.slow
def test_a_tree_built_without_the_compiled_module_says_to_build_it_again(tmp_path):
    """A tree built before the per-call entry points were compiled (or whose build stopped
    short): everything but ``_fast_calls``. It comes first on sys.path (the current
    directory), ahead of this environment's install."""
    shutil.copytree(PACKAGE, tmp_path / "aclnn_py", ignore=shutil.ignore_patterns(
        "_fast_calls*", "__pycache__"))
    done = subprocess.run([sys.executable, "-c", "import aclnn_py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ImportError: aclnn_py at {tmp_path} has no compiled module "
                           "aclnn_py/_c/_fast_calls"), done.stderr
    assert f"`pip install -e {tmp_path}`" in last
    assert "ModuleNotFoundError" not in done.stderr
