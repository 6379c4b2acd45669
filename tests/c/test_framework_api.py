"""The functions frameworks bind besides aclnn_py's own (torch_npu 2.13.0's), called as a C
client calls them: through ctypes, in a process with the environment of the 8.5 tree's
``set_env.sh`` (``LD_LIBRARY_PATH`` finds the libraries by their CANN names)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import aclnn_py

pytestmark = [pytest.mark.slow, pytest.mark.emulator_only]

PRELUDE = """
import ctypes, json
from ctypes import byref, c_char_p, c_int32, c_int64, c_size_t, c_uint64, c_void_p
acl = ctypes.CDLL("libascendcl.so")
acl.aclGetRecentErrMsg.restype = c_char_p
def message():
    return acl.aclGetRecentErrMsg().decode()
assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0
"""


def run(code: str, **env: str) -> dict:
    """``code`` after PRELUDE in the 8.5 tree's environment (and ``env``): what it prints
    as JSON on its last line."""
    script = Path(aclnn_py.emulator.home("8.5")) / "set_env.sh"
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
    listing = subprocess.run(["bash", "-c", f'source "{script}" && env -0'], env=base,
                             check=True, capture_output=True).stdout.decode()
    environment = dict(item.split("=", 1) for item in listing.split("\0") if "=" in item)
    done = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                          env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_tree_holds_the_libraries_frameworks_link():
    lib64 = Path(aclnn_py.emulator.home("8.5")) / "lib64"
    for name in ("libhccl.so", "libacl_op_compiler.so", "libge_runner.so", "libgraph.so",
                 "libacl_tdt_channel.so"):
        assert (lib64 / name).is_file(), name


def test_streams_with_a_configuration_and_events_with_flags():
    found = run("""
        stream, event = c_void_p(), c_void_p()
        good = acl.aclrtCreateStreamWithConfig(byref(stream), 0, 0x3)  # FAST_LAUNCH | FAST_SYNC
        bad = acl.aclrtCreateStreamWithConfig(byref(c_void_p()), 0, 0x400)
        bad_message = message()
        flagged = acl.aclrtCreateEventWithFlag(byref(event), 0x8)  # TIME_LINE
        recorded = acl.aclrtRecordEvent(event, stream)
        waited = acl.aclrtStreamWaitEvent(None, event)
        status = c_int32(-1)
        acl.aclrtQueryEventStatus(event, byref(status))
        reset = acl.aclrtResetEvent(event, stream)
        forced = acl.aclrtDestroyStreamForce(stream)
        print(json.dumps([good, bad, bad_message, flagged, recorded, waited, status.value,
                          reset, forced, acl.aclrtCreateEventWithFlag(byref(event), 0x80)]))
    """)
    assert found[:2] == [0, 100000] and "0x400" in found[2] and "ACL_STREAM_" in found[2]
    # the wait ran the side stream up to the record: the event queries as complete (1)
    assert found[3:] == [0, 0, 0, 1, 0, 0, 100000]


def test_system_parameters_saturation_mode_and_timeouts():
    found = run("""
        value = c_int64(-1)
        default = (acl.aclrtGetSysParamOpt(0, byref(value)), value.value)
        acl.aclrtSetSysParamOpt(0, 1)
        acl.aclrtGetSysParamOpt(0, byref(value))
        after_set = value.value
        acl.aclrtCtxSetSysParamOpt(0, 2)
        acl.aclrtGetSysParamOpt(0, byref(value))
        actual = c_uint64()
        print(json.dumps([default, after_set, value.value, acl.aclrtGetSysParamOpt(9, byref(value)),
                          acl.aclrtSetDeviceSatMode(1), acl.aclrtSetDeviceSatMode(2),
                          acl.aclrtSetOpExecuteTimeOutV2(c_uint64(5000), byref(actual)),
                          actual.value, acl.aclrtSetOpWaitTimeout(10),
                          acl.aclrtSetSysParamOpt(3, 1), acl.aclrtCtxSetSysParamOpt(3, 1)]))
    """)
    # a context has no kernel early start (3)
    assert found == [[0, 0], 1, 2, 100000, 0, 100000, 0, 5000, 0, 0, 100000]


def test_peer_access_between_the_emulated_devices():
    found = run("""
        can = c_int32(-1)
        rc = acl.aclrtDeviceCanAccessPeer(byref(can), 0, 1)
        pid = c_int32()
        import os
        acl.aclrtDeviceGetBareTgid(byref(pid))
        print(json.dumps([rc, can.value, acl.aclrtDeviceCanAccessPeer(byref(can), 0, 0),
                          acl.aclrtDeviceEnablePeerAccess(1, 0),
                          acl.aclrtDeviceEnablePeerAccess(1, 1),
                          acl.aclrtDeviceCanAccessPeer(byref(can), 0, 2),
                          pid.value == os.getpid()]))
    """, ACLNN_EMU_DEVICE_COUNT="2")
    assert found == [0, 1, 100000, 0, 200006, 107001, True]


def test_features_out_of_scope_say_so():
    found = run("""
        handle = c_void_p()
        vmm = acl.aclrtReserveMemAddress(byref(handle), c_size_t(4096), c_size_t(0), None,
                                         c_uint64(0))
        vmm_message = message()
        dump = acl.aclmdlInitDump()
        compiler = ctypes.CDLL("libacl_op_compiler.so")
        op = compiler.aclopCompileAndExecute(b"Conv2D", 0, None, None, 0, None, None, None,
                                             0, 0, None, None)
        op_message = message()
        hccl = ctypes.CDLL("libhccl.so").HcclGetRootInfo(None)
        print(json.dumps([vmm, vmm_message, dump, op, op_message, hccl]))
    """)
    assert found[0] == 207000 and "not supported" in found[1]
    assert found[2] == 207000
    assert found[3] == 200001 and "Conv2D" in found[4] and "not supported" in found[4]
    assert found[5] == 5  # HCCL_E_NOT_SUPPORT


@pytest.mark.parametrize(("soc", "jit"), [("Ascend910B3", "disable"),
                                          ("Ascend910_9392", "disable"),
                                          ("Ascend910", "enable")])
def test_the_jit_compile_option_reads_as_cann_reports_it_for_the_soc(soc, jit):
    found = run("""
        compiler = ctypes.CDLL("libacl_op_compiler.so")
        compiler.aclGetCompileoptSize.restype = c_size_t
        size = compiler.aclGetCompileoptSize(10)  # ACL_OP_JIT_COMPILE
        value = ctypes.create_string_buffer(size)
        first = (compiler.aclGetCompileopt(10, value, c_size_t(size)), value.value.decode())
        set_rc = compiler.aclSetCompileopt(10, b"enable")
        size = compiler.aclGetCompileoptSize(10)
        value = ctypes.create_string_buffer(size)
        compiler.aclGetCompileopt(10, value, c_size_t(size))
        short = compiler.aclGetCompileopt(10, value, c_size_t(2))
        lookup = hasattr(compiler, "aclrtSetSysParamOpt")  # through its handle, as torch_npu
        print(json.dumps([first, set_rc, value.value.decode(), short, lookup]))
    """, ACLNN_EMU_SOC=soc)
    assert found == [[0, jit], 0, "enable", 100000, True]


def test_tensor_descriptions_and_data_buffers_hold_what_they_are_given():
    found = run("""
        acl.aclCreateTensorDesc.restype = c_void_p
        acl.aclGetTensorDescNumDims.restype = c_size_t
        dims = (c_int64 * 3)(2, 3, 4)
        desc = c_void_p(acl.aclCreateTensorDesc(0, 3, dims, 2))
        dim = c_int64()
        got = [acl.aclGetTensorDescType(desc), acl.aclGetTensorDescFormat(desc),
               acl.aclGetTensorDescNumDims(desc),
               acl.aclGetTensorDescDimV2(desc, c_size_t(2), byref(dim)), dim.value,
               acl.aclGetTensorDescDimV2(desc, c_size_t(3), byref(dim))]
        acl.aclSetTensorShape(desc, 1, (c_int64 * 1)(7))
        got += [acl.aclGetTensorDescNumDims(desc), acl.aclSetTensorPlaceMent(desc, 5)]
        acl.aclDestroyTensorDesc(desc)
        acl.aclCreateDataBuffer.restype = c_void_p
        acl.aclGetDataBufferSizeV2.restype = c_size_t
        buffer = c_void_p(acl.aclCreateDataBuffer(None, c_size_t(64)))
        got += [acl.aclGetDataBufferSizeV2(buffer), acl.aclDestroyDataBuffer(buffer)]
        print(json.dumps(got))
    """)
    assert found == [0, 2, 3, 0, 4, 100000, 1, 100000, 64, 0]


@pytest.mark.parametrize(("soc", "figures"), [("Ascend910B3", [20, 40, 201326592]),
                                              ("Ascend910B1", [24, 48, 201326592]),
                                              ("Ascend310P3", [8, 7, 16777216])])
def test_device_capabilities_are_the_socs_platform_figures(soc, figures):
    found = run("""
        value = c_int64()
        got = []
        for info in (0, 1, 2):  # AI cores, vector cores, L2 bytes
            assert acl.aclGetDeviceCapability(0, info, byref(value)) == 0
            got.append(value.value)
        print(json.dumps([got, acl.aclGetDeviceCapability(1, 0, byref(value)),
                          acl.aclGetDeviceCapability(0, 3, byref(value))]))
    """, ACLNN_EMU_SOC=soc)
    assert found == [figures, 100000, 100000]


def test_asynchronous_memset_and_host_functions_run_in_stream_order():
    found = run("""
        stream, device = c_void_p(), c_void_p()
        acl.aclrtCreateStream(byref(stream))
        acl.aclrtMalloc(byref(device), c_size_t(64), 0)
        order = []
        callback = ctypes.CFUNCTYPE(None, c_void_p)(lambda args: order.append(args))
        assert acl.aclrtMemsetAsync(device, c_size_t(64), 7, c_size_t(64), stream) == 0
        assert acl.aclrtLaunchHostFunc(stream, callback, c_void_p(42)) == 0
        before = list(order)  # queued: nothing ran yet
        assert acl.aclrtSynchronizeStream(stream) == 0
        host = (ctypes.c_uint8 * 64)()
        acl.aclrtMemcpy(host, c_size_t(64), device, c_size_t(64), 2)
        too_long = acl.aclrtMemsetAsync(device, c_size_t(64), 0, c_size_t(65), stream)
        stream_id, overflow = c_int32(-1), ctypes.c_uint32(9)
        got = [before, order, sorted(set(host)), too_long,
               acl.aclrtStreamGetId(stream, byref(stream_id)), stream_id.value >= 0,
               acl.aclrtSetStreamOverflowSwitch(stream, 1),
               acl.aclrtGetStreamOverflowSwitch(stream, byref(overflow)), overflow.value,
               acl.aclrtSetStreamOverflowSwitch(stream, 2),
               acl.aclrtSetStreamFailureMode(stream, c_uint64(1)),
               acl.aclrtSetStreamFailureMode(stream, c_uint64(2)),
               acl.aclrtSynchronizeDeviceWithTimeout(100),
               acl.aclrtSynchronizeDeviceWithTimeout(-2)]
        acl.aclrtFree(device)
        acl.aclrtDestroyStream(stream)
        print(json.dumps(got))
    """)
    assert found == [[], [42], [7], 100000, 0, True, 0, 0, 1, 100000, 0, 100000, 0, 100000]


def test_graph_capture_and_ipc_are_not_supported():
    found = run("""
        capture = acl.aclmdlRICaptureBegin(None, 0)
        capture_message = message()
        ipc = acl.aclrtIpcMemClose(b"key")
        print(json.dumps([capture, capture_message, ipc]))
    """)
    assert found[0] == 207000 and "graph capture" in found[1] and found[2] == 207000


def test_event_timestamps_in_microseconds_after_the_record_ran():
    found = run("""
        import time
        stream, first, second = c_void_p(), c_void_p(), c_void_p()
        acl.aclrtCreateStream(byref(stream))
        acl.aclrtCreateEvent(byref(first))
        acl.aclrtCreateEvent(byref(second))
        stamp = c_uint64(0)
        never = acl.aclrtEventGetTimestamp(first, byref(stamp))
        no_output = acl.aclrtEventGetTimestamp(first, None)
        no_event = acl.aclrtEventGetTimestamp(None, byref(stamp))
        acl.aclrtRecordEvent(first, stream)
        acl.aclrtSynchronizeStream(stream)
        time.sleep(0.05)
        acl.aclrtRecordEvent(second, stream)
        acl.aclrtSynchronizeStream(stream)
        got = [never, no_output, no_event, acl.aclrtEventGetTimestamp(first, byref(stamp))]
        start = stamp.value
        got.append(acl.aclrtEventGetTimestamp(second, byref(stamp)))
        elapsed = ctypes.c_float(0)
        acl.aclrtEventElapsedTime(byref(elapsed), first, second)
        got += [stamp.value - start, elapsed.value * 1000]
        print(json.dumps(got))
    """)
    assert found[:5] == [107000, 100000, 100000, 0, 0]
    # microseconds: the 50 ms between the records, as aclrtEventElapsedTime measures them
    assert found[5] >= 50000 and abs(found[5] - found[6]) <= 1


def test_package_versions_from_the_trees_version_files(tmp_path):
    for name, text in (("ops-nn", "Package=ops-nn\nVersion= 9.1.0 \n"),
                       ("ops_math", "Version=9.2.0\n"), ("empty", "Package=empty\n"),
                       ("long", "Version=" + "9" * 128 + "\n")):
        (tmp_path / "share" / "info" / name).mkdir(parents=True)
        (tmp_path / "share" / "info" / name / "version.info").write_text(text)
    found = run("""
        buffer = ctypes.create_string_buffer(128)
        got = [acl.aclsysGetVersionStr(b"runtime", buffer), buffer.value.decode(),
               acl.aclsysGetVersionStr(b"compiler", buffer), message(),
               acl.aclsysGetVersionStr(None, buffer), acl.aclsysGetVersionStr(b"runtime", None)]
        libc = ctypes.CDLL(None)
        import os
        libc.setenv(b"ASCEND_HOME_PATH", os.environ["OTHER_HOME"].encode(), 1)
        for name in (b"ops_nn", b"ops-math", b"empty", b"long"):
            buffer.value = b""
            got += [acl.aclsysGetVersionStr(name, buffer), buffer.value.decode()]
        libc.unsetenv(b"ASCEND_HOME_PATH")
        got.append(acl.aclsysGetVersionStr(b"runtime", buffer))
        print(json.dumps(got))
    """, OTHER_HOME=str(tmp_path))
    # the 8.5 tree's share/info/runtime/version.info; no compiler/ folder under share/info
    assert found[:3] == [0, "8.5.0", 100003] and "compiler/version.info" in found[3]
    assert found[4:6] == [100000, 100000]
    # each name also found with '-' and '_' exchanged; the value trimmed
    assert found[6:10] == [0, "9.1.0", 0, "9.2.0"]
    # no Version= line; a version longer than ACL_PKG_VERSION_MAX_SIZE - 1
    assert found[10:14] == [100003, "", 500000, ""]
    assert found[14] == 100003


def test_profiler_step_records_are_host_objects():
    found = run("""
        acl.aclprofCreateStepInfo.restype = c_void_p
        first, second = acl.aclprofCreateStepInfo(), acl.aclprofCreateStepInfo()
        acl.aclprofDestroyStepInfo(c_void_p(first))
        acl.aclprofDestroyStepInfo(c_void_p(second))
        acl.aclprofDestroyStepInfo(None)
        print(json.dumps([bool(first), bool(second), first != second, message()]))
    """)
    assert found[:3] == [True, True, True] and "stepInfo is NULL" in found[3]


def test_scalar_lists_own_their_scalars():
    found = run("""
        meta = ctypes.CDLL("libnnopbase.so")
        meta.aclCreateScalar.restype = c_void_p
        meta.aclCreateScalar.argtypes = [c_void_p, c_int32]
        meta.aclCreateScalarList.restype = c_void_p
        meta.aclCreateScalarList.argtypes = [c_void_p, c_uint64]
        meta.aclDestroyScalar.argtypes = [c_void_p]
        meta.aclDestroyScalarList.argtypes = [c_void_p]
        value = ctypes.c_float(1.5)
        scalars = [meta.aclCreateScalar(byref(value), 0) for _ in range(2)]  # ACL_FLOAT
        members = (c_void_p * 3)(scalars[0], None, scalars[1])
        made = meta.aclCreateScalarList(members, 3)
        got = [bool(made), meta.aclDestroyScalar(scalars[0]), message()]
        again = meta.aclCreateScalarList((c_void_p * 1)(scalars[1]), 1)
        got += [again is None, message()]
        got += [meta.aclDestroyScalarList(made), meta.aclDestroyScalar(scalars[0]),
                meta.aclDestroyScalarList(made), meta.aclDestroyScalarList(None)]
        dead = meta.aclCreateScalarList((c_void_p * 1)(scalars[0]), 1)
        got += [dead is None, message(), meta.aclCreateScalarList(None, 2) is None]
        print(json.dumps(got))
    """)
    assert found[0] is True and found[1] == 561103 and "belongs to an aclScalarList" in found[2]
    assert found[3] is True and "already belongs to another aclScalarList" in found[4]
    # the list destroys its scalars, once; NULL is accepted
    assert found[5:9] == [0, 561103, 561103, 0]
    assert found[9] is True and "not a live aclScalar" in found[10] and found[11] is True


def test_the_last_error_is_the_threads_last_runtime_failure():
    found = run("""
        import threading
        got = [acl.aclrtPeekAtLastError(0), acl.aclrtGetLastError(1), acl.aclrtPeekAtLastError(7)]
        got.append(acl.aclrtMalloc(None, c_size_t(64), 0))  # ACL's own check: no runtime failure
        got.append(acl.aclrtPeekAtLastError(0))
        got.append(acl.aclrtDestroyEvent(c_void_p(0x1234)))  # the runtime's: recorded
        device = c_int32(-1)
        got.append(acl.aclrtGetDevice(byref(device)))  # a success leaves it
        got += [acl.aclrtPeekAtLastError(0), acl.aclrtPeekAtLastError(0)]
        other = []
        def elsewhere():
            other.append(acl.aclrtPeekAtLastError(0))
            other.append(acl.aclrtSetDevice(99))
            other.append(acl.aclrtGetLastError(0))
        thread = threading.Thread(target=elsewhere)
        thread.start(); thread.join()
        got += [acl.aclrtGetLastError(0), acl.aclrtGetLastError(0), other]
        print(json.dumps(got))
    """)
    assert found == [0, 100000, 100000, 100000, 0, 107000, 0, 107000, 107000,
                     107000, 0, [0, 107001, 107001]]


@pytest.mark.parametrize(("soc", "cores"), [("Ascend910B3", [6, 20, 20, 40]),
                                            ("Ascend910_9392", [6, 24, 24, 48])])
def test_device_info_by_attribute(soc, cores):
    found = run("""
        value = c_int64(-1)
        def get(attr, device=0):
            value.value = -1
            return [acl.aclrtGetDeviceInfo(device, attr, byref(value)), value.value]
        got = [[get(attr)[1] for attr in (1, 101, 102, 201)]]
        got += [get(202), get(212), get(301), get(302), get(402), get(501), get(601),
                get(409), get(999), get(0, device=3), acl.aclrtGetDeviceInfo(0, 101, None)]
        print(json.dumps(got))
    """, ACLNN_EMU_SOC=soc, ACLNN_EMU_DEVICE_MEMORY="2G")
    assert found[0] == cores
    assert found[1:8] == [[0, 0], [0, 0], [0, 2 << 30], [0, 201326592], [0, 0], [0, 0],
                          [107000, -1]]
    assert found[8:] == [[207000, -1], [107000, -1], [107001, -1], 100000]


def test_an_events_wait_status_follows_the_waiting_streams_work():
    found = run("""
        stream, event, external, buffer = c_void_p(), c_void_p(), c_void_p(), c_void_p()
        status = c_int32(-1)
        def wait_status(ev=event):
            status.value = -1
            rc = acl.aclrtQueryEventWaitStatus(ev, byref(status))
            return status.value if rc == 0 else rc
        assert acl.aclrtCreateStream(byref(stream)) == 0
        assert acl.aclrtCreateEvent(byref(event)) == 0
        assert acl.aclrtMalloc(byref(buffer), c_size_t(64), 0) == 0
        got = [wait_status()]  # no wait issued: complete (0)
        acl.aclrtRecordEvent(event, None)
        acl.aclrtStreamWaitEvent(stream, event)  # nothing queued before it: runs at once
        got.append(wait_status())
        acl.aclrtMemsetAsync(buffer, c_size_t(64), 1, c_size_t(64), stream)
        acl.aclrtStreamWaitEvent(stream, event)  # after the memset, still pending
        got.append(wait_status())
        acl.aclrtSynchronizeStream(stream)
        got.append(wait_status())
        acl.aclrtCreateEventWithFlag(byref(external), 0x20)  # ACL_EVENT_EXTERNAL
        got += [wait_status(external), acl.aclrtPeekAtLastError(0),
                acl.aclrtQueryEventWaitStatus(None, byref(status)),
                acl.aclrtQueryEventWaitStatus(event, None)]
        print(json.dumps(got))
    """)
    assert found == [0, 0, 1, 0, 207000, 0, 100000, 100000]


@pytest.mark.parametrize(("soc", "available"), [("Ascend910B3", [0, 1, 2]),
                                                ("Ascend910_9391", [0, 1, 2]),
                                                ("Ascend310P3", [2]),
                                                ("Ascend950PR_9599", [2])])
def test_cann_attributes_by_soc(soc, available):
    found = run("""
        listing, count, value = ctypes.POINTER(c_int32)(), c_size_t(), c_int32(-1)
        got = [acl.aclGetCannAttributeList(byref(listing), byref(count))]
        got.append([listing[i] for i in range(count.value)])
        for attr in (0, 1, 2):
            acl.aclGetCannAttribute(attr, byref(value))
            got.append(value.value)
        got += [acl.aclGetCannAttribute(3, byref(value)), acl.aclGetCannAttribute(-1, byref(value)),
                acl.aclGetCannAttribute(0, None), acl.aclGetCannAttributeList(None, byref(count)),
                acl.aclGetCannAttributeList(byref(listing), None)]
        print(json.dumps(got))
    """, ACLNN_EMU_SOC=soc)
    assert found[:2] == [0, available]
    assert found[2:5] == [int(attr in available) for attr in (0, 1, 2)]
    assert found[5:] == [100000] * 5


def test_cann_version_by_package(tmp_path):
    (tmp_path / "share" / "info" / "runtime").mkdir(parents=True)
    (tmp_path / "share" / "info" / "runtime" / "version.info").write_text(
        "Version=8.5.0-beta.1\n")
    (tmp_path / "share" / "info" / "ops_legacy").mkdir(parents=True)
    (tmp_path / "share" / "info" / "ops_legacy" / "version.info").write_text("Version=9\n")
    found = run("""
        class Version(ctypes.Structure):
            _fields_ = [("version", ctypes.c_char * 128), ("major", ctypes.c_char * 64),
                        ("minor", ctypes.c_char * 64), ("release", ctypes.c_char * 64),
                        ("patch", ctypes.c_char * 64), ("reserved", ctypes.c_char * 128)]
        v = Version()
        def parts():
            return [v.version.decode(), v.major.decode(), v.minor.decode(), v.release.decode(),
                    v.patch.decode()]
        get = acl.aclsysGetCANNVersion
        got = [get(0, byref(v)), parts(), get(3, byref(v)), get(7, byref(v)), get(8, byref(v)),
               get(0, None)]
        libc = ctypes.CDLL(None)
        import os
        libc.setenv(b"ASCEND_HOME_PATH", os.environ["OTHER_HOME"].encode(), 1)
        got += [get(1, byref(v)), parts(), get(5, byref(v))]
        print(json.dumps(got))
    """, OTHER_HOME=str(tmp_path))
    # the tree's runtime package; no hccl/ under share/info; no driver package; no package 8
    assert found[:6] == [0, ["8.5.0", "8", "5", "0", "0"], 100003, 100003, 100000, 100000]
    # "-beta.1" joins as ".beta1"; ops-legacy found as ops_legacy, one part only
    assert found[6:] == [0, ["8.5.0.beta1", "8", "5", "0", "beta1"], 100003]


def test_the_profilers_other_functions_are_not_supported():
    found = run("""
        acl.aclprofCreateConfig.restype = c_void_p
        size, data = c_size_t(), c_void_p()
        got = [acl.aclprofCreateConfig(None, 0, 0, None, c_uint64(0)), message(),
               acl.aclprofWarmup(None), acl.aclprofRegisterDeviceCallback(),
               acl.aclprofGetSupportedFeatures(byref(size), byref(data)),
               acl.aclprofGetSupportedFeaturesV2(byref(size), byref(data))]
        print(json.dumps(got))
    """)
    assert found[0] is None and "aclprofCreateConfig" in found[1] and "not supported" in found[1]
    assert found[2:] == [207000] * 4


def test_no_stream_is_ever_capturing():
    found = run("""
        stream, model, status = c_void_p(), c_void_p(1), c_int32(-1)
        assert acl.aclrtCreateStream(byref(stream)) == 0
        got = [acl.aclmdlRICaptureGetInfo(stream, byref(status), byref(model)), status.value,
               model.value, acl.aclmdlRICaptureGetInfo(None, byref(status), None),
               acl.aclmdlRICaptureGetInfo(stream, None, None),
               acl.aclmdlRICaptureGetInfo(c_void_p(0x1234), byref(status), None)]
        print(json.dumps(got))
    """)
    assert found == [0, 0, None, 100000, 100000, 107000]


@pytest.mark.parametrize(("soc", "strict"), [("Ascend910B3", 0), ("Ascend910_9392", 5)])
def test_hccl_keeps_the_deterministic_setting(soc, strict):
    found = run("""
        hccl = ctypes.CDLL("libhccl.so")
        value = c_int32(-1)
        got = [hccl.HcclGetConfig(0, byref(value)), value.value]
        got += [hccl.HcclSetConfig(0, 1), hccl.HcclGetConfig(0, byref(value)), value.value]
        got += [hccl.HcclSetConfig(0, 3), hccl.HcclSetConfig(0, 2), hccl.HcclSetConfig(1, 9),
                hccl.HcclGetConfig(0, None)]
        print(json.dumps(got))
    """, ACLNN_EMU_SOC=soc)
    # 2 (reduction order kept) is for Atlas A2 only; 3 is no setting; another config is ignored
    assert found == [0, 0, 0, 0, 1, 1, strict, 0, 2]
def test_init_tensor_describes_a_live_tensor_anew():
    found = run("""
        meta = ctypes.CDLL("libnnopbase.so")
        meta.aclCreateTensor.restype = c_void_p
        meta.aclCreateTensor.argtypes = [c_void_p, c_uint64, c_int32, c_void_p, ctypes.c_int64,
                                         c_int32, c_void_p, c_uint64, c_void_p]
        meta.aclInitTensor.argtypes = [c_void_p, c_void_p, c_uint64, c_int32, c_void_p,
                                       ctypes.c_int64, c_int32, c_void_p, c_uint64, c_void_p]
        meta.aclGetViewShape.argtypes = [c_void_p, c_void_p, c_void_p]
        meta.aclGetViewStrides.argtypes = [c_void_p, c_void_p, c_void_p]
        meta.aclGetFormat.argtypes = [c_void_p, c_void_p]
        meta.aclDestroyTensor.argtypes = [c_void_p]
        dims = (ctypes.c_int64 * 2)(2, 3)
        tensor = meta.aclCreateTensor(dims, 2, 0, None, 0, 2, dims, 2, None)  # FLOAT, ND
        view = (ctypes.c_int64 * 2)(3, 2)
        strides = (ctypes.c_int64 * 2)(1, 3)
        storage = (ctypes.c_int64 * 1)(6)
        got = [meta.aclInitTensor(tensor, view, 2, 0, strides, 0, 29, storage, 1, None)]
        shape, count = ctypes.POINTER(ctypes.c_int64)(), c_uint64()
        meta.aclGetViewShape(tensor, byref(shape), byref(count))
        got.append([shape[i] for i in range(count.value)])
        meta.aclGetViewStrides(tensor, byref(shape), byref(count))
        got.append([shape[i] for i in range(count.value)])
        fmt = ctypes.c_int32()
        meta.aclGetFormat(tensor, byref(fmt))
        got.append(fmt.value)
        bad = (ctypes.c_int64 * 1)(-1)
        got += [meta.aclInitTensor(tensor, bad, 1, 0, None, 0, 2, None, 0, None), message()]
        got += [meta.aclInitTensor(None, view, 2, 0, None, 0, 2, None, 0, None)]
        meta.aclDestroyTensor(tensor)
        got += [meta.aclInitTensor(tensor, view, 2, 0, None, 0, 2, None, 0, None), message()]
        print(json.dumps(got))
    """)
    assert found[:4] == [0, [3, 2], [1, 3], 29]
    # refusals leave nothing changed: invalid dims 161002, NULL or dead tensors 161001
    assert found[4] == 161002 and "non-negative" in found[5]
    assert found[6] == 161001 and found[7] == 161001 and "not a live aclTensor" in found[8]
