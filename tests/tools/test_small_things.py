"""What a new user meets first: short pytest failures from aclnn_py.testing, show_config,
a public dir(), and dtype refusals that say what to do."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from helpers import import_paths

import aclnn_py

FAILING = '''
import numpy as np
import aclnn_py.testing

def test_close():
    aclnn_py.testing.assert_close(np.array([1.0, 2.0], np.float32), np.array([1.0, 2.5]))
'''


def test_an_assert_close_failure_shows_the_callers_line_not_the_helpers(tmp_path):
    (tmp_path / "test_failing.py").write_text(FAILING)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           str(tmp_path / "test_failing.py")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "aclnn_py.testing.assert_close(np.array" in done.stdout  # the caller's line
    assert "testing.py" not in done.stdout and "def assert_close" not in done.stdout
    assert "AssertionError: Not close: 1 of 2 elements" in done.stdout  # the message stays
    failure = done.stdout.split("FAILURES")[1]
    assert len(failure.splitlines()) < 25, failure


def test_show_config_prints_the_doctors_report(capsys):
    aclnn_py.show_config()
    printed = capsys.readouterr().out
    assert printed.startswith("aclnn_py ") and "backend" in printed
    from aclnn_py import doctor

    assert printed.strip().splitlines()[-1] == doctor.format_report(
        doctor.report()).strip().splitlines()[-1]


def test_dir_lists_the_public_api_only():
    names = set(dir(aclnn_py))
    assert set(aclnn_py.__all__) <= names
    assert {"doctor", "testing", "show_config", "asnumpy"} <= names
    assert not {"importlib", "logging", "TYPE_CHECKING", "Any"} & names
    assert all(not name.startswith("_") or name == "__version__" for name in names)


@pytest.mark.parametrize(("dtype", "fix"), [
    (np.int32, "x.astype(numpy.float32)"), (np.int8, "x.astype(numpy.float32)"),
    (np.bool_, "x.astype(numpy.float32)"), (np.complex64, "x.astype(numpy.float32)")])
def test_every_dtype_refusal_says_what_to_do(dtype, fix):
    with pytest.raises(TypeError) as raised:
        aclnn_py.mse_loss(np.ones(3, dtype), np.ones(3, np.float32))
    assert str(raised.value).endswith(f"; convert it with {fix}")
    with pytest.raises(TypeError, match="give an out= array of one of them"):
        aclnn_py.add(np.ones(3, np.float32), 1.0, out=np.empty(3, np.int32))


def test_skips_for_missing_packages_say_how_to_install_them():
    """Every pytest.importorskip of the suite gives a reason with the install command."""
    import re
    from pathlib import Path

    found = []
    for folder in import_paths():
        for path in Path(folder).glob("test_*.py"):
            for call in re.findall(r"importorskip\((.*?)\)\n", path.read_text(), re.S):
                found.append((path.name, call))
    assert found
    for name, call in found:
        assert "reason=" in call, (name, call)
    text = " ".join(call for _, call in found)
    assert "pip install torch" in text
