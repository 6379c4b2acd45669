"""Device visibility: ``ASCEND_RT_VISIBLE_DEVICES`` over the emulator's
``ACLNN_EMU_DEVICE_COUNT`` devices, read as CANN's runtime reads it (hicann/runtime
src/runtime/core/src/runtime.cc, Runtime::GetVisibleDevices; the cases below include those of
its unit test ut_GetVisibleDevicesByChipCloudTest0 and of the variable's documentation), the
id mappings of CANN >= 8.5, and what runtime_info() and the doctor report. ACL reads the
variable once per process, so each case runs in a subprocess."""

from __future__ import annotations

import json

import pytest
from conftest import run_python

import aclnn_py

pytestmark = pytest.mark.slow

VISIBLE = "ASCEND_RT_VISIBLE_DEVICES"
EMULATOR = {"ACLNN_PY_BACKEND": "emulator"}

REPORT = """
import json, aclnn_py
try:
    info = aclnn_py.runtime_info()
except aclnn_py.AclError as error:
    print(json.dumps({"status": error.status, "api": error.api, "message": error.message}))
else:
    print(json.dumps({"count": info["device_count"], "visible": info["visible_devices"],
                      "devices": info["devices"]}))
"""


def report(env: dict[str, str], *, drop: tuple[str, ...] = ()) -> dict:
    done = run_python(REPORT, env, drop=drop)
    assert done.returncode == 0, done.stderr
    result: dict = json.loads(done.stdout.splitlines()[-1])
    return result


def logical_ids(found: dict) -> list[int]:
    assert [d["device"] for d in found["devices"]] == list(range(found["count"]))
    assert all(d["physical_id"] == d["logical_id"] for d in found["devices"])  # no container
    return [d["logical_id"] for d in found["devices"]]


@pytest.mark.emulator_only
@pytest.mark.parametrize(("devices", "value", "expected"), [
    (3, "1", [1]),
    (3, "0,1", [0, 1]),
    (3, "0,1,2", [0, 1, 2]),
    (4, "1,3", [1, 3]),
    (3, "0,1,5,7", [0, 1]),    # reading stops at the first id out of range
    (8, "1,3,8", [1, 3]),      # the variable's documentation
    (4, "2,3,9,1", [2, 3]),    # nothing after an id out of range is read
    (4, "1, 2,3", [1]),        # ... nor after another character (a space)
    (3, "1*", [1]),
    (3, "0#1,", [0]),
    (3, "0,1$0,", [0, 1]),
    (3, "1,", [1]),
    (3, "1,,", [1]),
    (3, "1,,2", [1]),          # two commas in a row end the list
    (3, "0,1,2,0", [0, 1, 2]),  # every device named: the rest is not read
    (3, "002", [2]),
])
def test_visible_devices_are_renumbered_from_zero(devices, value, expected):
    found = report({**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": str(devices), VISIBLE: value})
    assert found["count"] == len(expected)
    assert found["visible"] == value
    assert logical_ids(found) == expected


@pytest.mark.emulator_only
@pytest.mark.parametrize(("value", "expected"), [
    ("", "Expected value: [0, 3)"),
    (",0", "Expected value: [0, 3)"),
    ("-1,3", "Expected value: [0, 3)"),
    ("10", "Expected value: [0, 3)"),
    ("3", "Expected value: [0, 3)"),
    ("99999999999999999999", "Expected value: [0, 3)"),
    ("1,0", "Expected value: configured in ascending order"),
    ("0,2,1", "Expected value: configured in ascending order"),
    ("1,1", "Expected value: Cannot be duplicated"),
])
def test_a_value_naming_no_device_or_out_of_order_fails_aclrtGetDeviceCount(value, expected):
    found = report({**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": "3", VISIBLE: value})
    assert found["api"] == "aclrtGetDeviceCount"
    assert found["status"] == 207004  # ACL_ERROR_RT_NO_DEVICE
    assert f"Value '{value}' for environment variable {VISIBLE} is invalid" in found["message"]
    assert expected in found["message"]


@pytest.mark.emulator_only
def test_unset_means_every_device():
    found = report({**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": "3"}, drop=(VISIBLE,))
    assert found["visible"] is None
    assert logical_ids(found) == [0, 1, 2]


@pytest.mark.emulator_only
def test_acl_init_succeeds_and_a_failed_start_gives_it_back():
    done = run_python("""
        import aclnn_py
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        try:
            aclnn_py.runtime_info()
        except aclnn_py.AclError as error:
            print(error.status)
        print(ll.init())  # True: aclnn_py's aclInit was given back, ACL is down again
        try:
            ll.get_device_count()
        except aclnn_py.AclError as error:
            print(error.status)
        try:
            ll.set_device(0)
        except aclnn_py.AclError as error:
            print(error.status, error.message)
        ll.finalize()
    """, {**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": "2", VISIBLE: "2"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == ["207004", "True", "207004"]
    assert lines[3].startswith("107001 aclrtSetDevice: deviceId 0 is invalid: "
                               f"{VISIBLE}='2' makes no device visible")


@pytest.mark.emulator_only
def test_work_runs_on_the_visible_devices_and_others_are_refused():
    done = run_python("""
        import numpy as np, aclnn_py
        from aclnn_py._c import lowlevel as ll
        from aclnn_py._c._ffi import ffi
        x = np.arange(6, dtype=np.float32)
        on_1 = aclnn_py.to_device(x, device=1)
        grad = aclnn_py.mse_loss_backward(1.0, on_1, 1.0, "sum")
        print(grad.device, grad.numpy().tolist())
        for device in (2, -1):
            try:
                aclnn_py.to_device(x, device=device)
            except ValueError as error:
                print(error)
        try:
            ll.set_device(2)
        except aclnn_py.AclError as error:
            print(error.status, error.message)
    """, {**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": "4", VISIBLE: "1,3"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "1 [-2.0, 0.0, 2.0, 4.0, 6.0, 8.0]"
    assert lines[1] == "device must be in [0, 2), got 2"
    assert lines[2] == "device must be in [0, 2), got -1"
    assert lines[3] == (f"107001 aclrtSetDevice: deviceId 2 is invalid: {VISIBLE}='1,3' makes 2 "
                        "of the 4 device(s) visible, as ids 0 to 1")


MAPPINGS = """
from aclnn_py._c import lowlevel as ll
from aclnn_py._c._ffi import ffi
ll.init()
RT, ffi = ll.RT, ffi
out = ffi.new("int32_t *")
for api, value in [("aclrtGetLogicDevIdByUserDevId", 0), ("aclrtGetLogicDevIdByUserDevId", 1),
                   ("aclrtGetLogicDevIdByUserDevId", 2), ("aclrtGetLogicDevIdByUserDevId", -1),
                   ("aclrtGetUserDevIdByLogicDevId", 3), ("aclrtGetUserDevIdByLogicDevId", 2),
                   ("aclrtGetUserDevIdByLogicDevId", 4), ("aclrtGetPhyDevIdByLogicDevId", 1),
                   ("aclrtGetLogicDevIdByPhyDevId", 1), ("aclrtGetLogicDevIdByPhyDevId", -5)]:
    out[0] = -99
    status = getattr(RT, api)(value, out)
    print(api, value, status, out[0])
print(RT.aclrtGetPhyDevIdByLogicDevId(0, ffi.NULL))
"""


@pytest.mark.emulator_only
def test_the_id_mappings_of_cann_8_5():
    done = run_python(MAPPINGS, {**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": "4", VISIBLE: "1,3"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "aclrtGetLogicDevIdByUserDevId 0 0 1",
        "aclrtGetLogicDevIdByUserDevId 1 0 3",
        "aclrtGetLogicDevIdByUserDevId 2 107001 -99",   # not a visible device
        "aclrtGetLogicDevIdByUserDevId -1 107000 -99",  # negative: an invalid parameter
        "aclrtGetUserDevIdByLogicDevId 3 0 1",
        "aclrtGetUserDevIdByLogicDevId 2 107001 -99",   # a device, but not visible
        "aclrtGetUserDevIdByLogicDevId 4 107001 -99",   # no such device
        "aclrtGetPhyDevIdByLogicDevId 1 0 3",           # takes a user id (CANN's doc)
        "aclrtGetLogicDevIdByPhyDevId 1 0 0",           # returns a user id (CANN's doc)
        "aclrtGetLogicDevIdByPhyDevId -5 107000 -99",
        "100000",                                       # a NULL output
    ]


@pytest.mark.emulator_only
@pytest.mark.parametrize("layout", aclnn_py.emulator.LAYOUTS)
def test_ids_are_reported_where_the_release_has_the_mappings(layout):
    found = report({"ACLNN_PY_BACKEND": "cann",
                    "ACLNN_PY_CANN_HOME": aclnn_py.emulator.home(layout),
                    "ACLNN_EMU_DEVICE_COUNT": "4", VISIBLE: "0,2"})
    assert found["count"] == 2 and found["visible"] == "0,2"
    ids = [(d["logical_id"], d["physical_id"]) for d in found["devices"]]
    assert ids == ([(0, 0), (2, 2)] if layout == "8.5" else [(None, None), (None, None)])


@pytest.mark.emulator_only
def test_the_doctor_shows_the_visible_devices():
    env = {**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": "4", VISIBLE: "1,3"}
    done = run_python("from aclnn_py.doctor import main; main(['--json'])", env)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["ok"] and found["device_count"] == 2 and found["visible_devices"] == "1,3"
    assert [(d["device"], d["logical_id"], d["physical_id"]) for d in found["devices"]] == \
        [(0, 1, 1), (1, 3, 3)]
    text = run_python("from aclnn_py.doctor import main; main([])", env).stdout
    assert f"devices              2 visible ({VISIBLE}=1,3)" in text
    assert "device 1           logical id 3, physical id 3; 16.00 GiB total" in text


@pytest.mark.emulator_only
def test_the_doctor_explains_a_bad_value():
    done = run_python("from aclnn_py.doctor import main; raise SystemExit(main([]))",
                      {**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": "2", VISIBLE: "1,1"})
    assert done.returncode == 1
    assert (f"error: AclError: aclrtGetDeviceCount failed with ACL_ERROR_RT_NO_DEVICE (207004): "
            f"aclrtGetDeviceCount: Value '1,1' for environment variable {VISIBLE} is invalid. "
            "Expected value: Cannot be duplicated") in done.stdout


def test_runtime_info_lists_every_visible_device():
    info = aclnn_py.runtime_info()
    assert len(info["devices"]) == info["device_count"] >= 1
    assert [d["device"] for d in info["devices"]] == list(range(info["device_count"]))
    for device in info["devices"]:
        assert (device["logical_id"] is None) == (device["physical_id"] is None)
        assert device["logical_id"] is None or device["logical_id"] >= device["device"]
