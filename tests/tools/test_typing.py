"""The public API's types, as mypy --strict sees them from a user's script.

numpy in gives ``numpy.ndarray``, any ``DeviceArray`` in gives ``DeviceArray`` (its overloads
come first: a DeviceArray has ``__array__`` and so is an ``ArrayLike`` too); reductions are
``Literal["none", "mean", "sum"] | int | Reduction``; ``devices=`` is
``Sequence[int] | Literal["all"] | None``; ``runtime_info()`` and ``memory_info()``
are TypedDicts.
"""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

api = pytest.importorskip("mypy.api", reason="mypy is not installed (pip install mypy)")

USER_SCRIPT = textwrap.dedent('''
    import numpy as np
    import aclnn_py
    from aclnn_py import DeviceArray, Reduction

    x = np.ones((2, 3), np.float32)
    y = np.zeros((2, 3), np.float32)
    d = aclnn_py.to_device(x)
    reveal_type(aclnn_py.mse_loss_backward(1.0, x, y, "mean"))           # N1
    reveal_type(aclnn_py.mse_loss_backward(1.0, d, y, "sum"))            # D1
    reveal_type(aclnn_py.mse_loss_backward(x, y, d, Reduction.NONE))     # D2
    reveal_type(aclnn_py.mse_loss(x, y, 0))                              # N2
    reveal_type(aclnn_py.mse_loss(d, d))                                 # D3
    reveal_type(aclnn_py.l1_loss([1.0, 2.0], y, "none"))                 # N3
    reveal_type(aclnn_py.l1_loss(x, d))                                  # D4
    reveal_type(aclnn_py.l1_loss_backward(1.0, x, y))                    # N4
    reveal_type(aclnn_py.l1_loss_backward(d, x, y))                      # D5
    reveal_type(aclnn_py.smooth_l1_loss(x, y, beta=0.5))                 # N5
    reveal_type(aclnn_py.smooth_l1_loss(d, y, "sum", beta=0.5))          # D6
    reveal_type(aclnn_py.smooth_l1_loss_backward(1.0, x, y, beta=2.0))   # N6
    reveal_type(aclnn_py.smooth_l1_loss_backward(1.0, x, d))             # D7
    reveal_type(aclnn_py.add(x, 1.0, alpha=2))                           # N7
    reveal_type(aclnn_py.add(d, 1.0))                                    # D8
    reveal_type(aclnn_py.add(x, d))                                      # D9
    reveal_type(aclnn_py.mse_loss_backward(1.0, x, y, devices=[0, 1]))   # N8
    reveal_type(aclnn_py.smooth_l1_loss(x, y, "sum", devices="all"))     # N9
    aclnn_py.add(x, y, devices="every")                                  # E5
    out: DeviceArray = aclnn_py.add(d, d, out=aclnn_py.empty((2, 3), np.float32))
    reveal_type(aclnn_py.runtime_info()["device_count"])                 # I1
    reveal_type(aclnn_py.runtime_info()["cann_version"])                 # I2
    reveal_type(aclnn_py.memory_info()["used_bytes"])                    # I3
    with aclnn_py.MseLossPlan(d, d) as plan:
        reveal_type(plan.run())                                          # D10
        reveal_type(plan.run(x=d, out=d))                                # D11
        plan.run(grad=d)                                                 # E4
    aclnn_py.MseLossBackwardPlan(d, d, d).run(d, x=d, y=None)
    aclnn_py.mse_loss(x, y, "average")                                   # E1
    aclnn_py.runtime_info()["no_such_key"]                               # E2
    aclnn_py.SmoothL1LossPlan(d, d, "means", beta=1.0)                   # E3
''')


def _mypy(tmp_path: Path) -> dict[str, str]:
    """mypy --strict over the user script: each tagged line's message."""
    script = tmp_path / "user_script.py"
    script.write_text(USER_SCRIPT)
    # Run from the temporary directory so that the installed aclnn_py is what mypy sees.
    previous = os.getcwd()
    os.chdir(tmp_path)
    try:
        stdout, stderr, _status = api.run(
            ["--strict", "--no-incremental", "--show-error-codes", "--config-file", "",
             "--ignore-missing-imports", str(script)])
    finally:
        os.chdir(previous)
    tags = {number: tag for number, line in enumerate(USER_SCRIPT.splitlines(), 1)
            for tag in re.findall(r"# (\w+)$", line)}
    messages: dict[str, str] = {}
    untagged = []
    for line in stdout.splitlines():
        match = re.match(r".*user_script\.py:(\d+): (\w+): (.*)", line)
        if not match:
            continue
        tag = tags.get(int(match.group(1)))
        if tag is None:
            untagged.append(line)
        else:
            messages[tag] = messages.get(tag, "") + f"{match.group(2)}: {match.group(3)}\n"
    assert not untagged, f"unexpected mypy output:\n{stdout}\n{stderr}"
    return messages


@pytest.fixture(scope="module")
def revealed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _mypy(tmp_path_factory.mktemp("typing"))


def _type(message: str) -> str:
    match = re.search(r'Revealed type is "(.*)"', message)
    assert match, message
    return match.group(1)


@pytest.mark.parametrize("tag", [f"N{i}" for i in range(1, 10)])
def test_numpy_inputs_give_ndarray(revealed: dict[str, str], tag: str) -> None:
    found = _type(revealed[tag])
    assert found.startswith("numpy.ndarray["), found


@pytest.mark.parametrize("tag", [f"D{i}" for i in range(1, 12)])
def test_device_array_inputs_give_device_array(revealed: dict[str, str], tag: str) -> None:
    assert _type(revealed[tag]) == "aclnn_py.runtime.arrays.DeviceArray"


def test_info_dicts_are_typed(revealed: dict[str, str]) -> None:
    assert _type(revealed["I1"]) in ("int", "builtins.int")
    assert _type(revealed["I2"]) in ("str | None", "builtins.str | None",
                                     "Union[builtins.str, None]")
    assert _type(revealed["I3"]) in ("int", "builtins.int")
    assert "error:" in revealed["E2"] and "no_such_key" in revealed["E2"]


def test_wrong_reduction_string_is_a_type_error(revealed: dict[str, str]) -> None:
    message = revealed["E1"]
    assert "error:" in message and "call-overload" in message, message
    assert "error:" in revealed["E3"] and "Literal['none', 'mean', 'sum']" in revealed["E3"]


def test_only_the_expected_lines_are_flagged(revealed: dict[str, str]) -> None:
    errors = sorted(tag for tag, message in revealed.items() if "error:" in message)
    assert errors == ["E1", "E2", "E3", "E4", "E5"], revealed


def test_devices_takes_ids_or_all(revealed: dict[str, str]) -> None:
    message = revealed["E5"]
    assert "error:" in message and '"devices"' in message and "Literal['all']" in message, \
        message


def test_plan_run_knows_its_plans_array_names(revealed: dict[str, str]) -> None:
    assert "error:" in revealed["E4"] and '"grad"' in revealed["E4"], revealed["E4"]
