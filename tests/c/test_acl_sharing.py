"""aclnn_py in a process with another ACL user (torch_npu, MindSpore, a C library).

CANN counts ``aclInit`` calls (a repeat returns 100002 and still counts), but one
``aclFinalize`` de-initialises for everyone; ``aclFinalizeReference`` gives back one
count. ``aclrtSetDevice``/``aclrtResetDevice`` are counted per device. The emulator
keeps the same counts, so a foreign user's stream and memory die exactly when CANN's
would, and these tests see it.

The foreign user here is ctypes over the same emulator library that aclnn_py loads.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import run_python

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py.runtime import process as _runtime

pytestmark = pytest.mark.slow

EMULATOR = {"ACLNN_PY_BACKEND": "emulator"}

# A foreign ACL user: its own aclInit, device, stream and memory, through ctypes.
FOREIGN = """
import atexit, ctypes, logging, sys
logging.basicConfig(level=logging.WARNING)  # aclnn_py's teardown errors would show on stderr
import numpy as np
runtime = ctypes.CDLL({runtime!r})
H2D, D2H = 1, 2

class Foreign:
    def __init__(self):
        self.stream = ctypes.c_void_p()
        self.memory = ctypes.c_void_p()

    def start(self):
        print("foreign aclInit", runtime.aclInit(None))
        assert runtime.aclrtSetDevice(0) == 0
        assert runtime.aclrtCreateStream(ctypes.byref(self.stream)) == 0
        assert runtime.aclrtMalloc(ctypes.byref(self.memory), 64, 0) == 0

    def finish(self, finalize="aclFinalize"):
        host = (ctypes.c_ubyte * 64)(*range(64))
        back = (ctypes.c_ubyte * 64)()
        statuses = [
            runtime.aclrtMemcpy(self.memory, 64, host, 64, H2D),
            runtime.aclrtMemcpy(back, 64, self.memory, 64, D2H),
            runtime.aclrtSynchronizeStream(self.stream),
            runtime.aclrtFree(self.memory),
            runtime.aclrtDestroyStream(self.stream),
            runtime.aclrtResetDevice(0),
            getattr(runtime, finalize)(*([None] if finalize == "aclFinalizeReference" else [])),
        ]
        print("foreign statuses", statuses, "data", list(back) == list(range(64)))
        sys.stdout.flush()

def use_aclnn_py():
    import aclnn_py
    x = np.arange(6, dtype=np.float32)
    y = np.ones(6, np.float32)
    got = aclnn_py.mse_loss_backward(1.0, aclnn_py.to_device(x), aclnn_py.to_device(y)).numpy()
    print("aclnn_py ok", bool(np.allclose(got, 2 * (x - y) / x.size)))
    ones = np.ones(6, np.float32)
    plan = aclnn_py.MseLossBackwardPlan(*(aclnn_py.to_device(a) for a in (ones, x, y)))
    plan.run()
    aclnn_py.synchronize()
"""

ALL_ZERO = "foreign statuses [0, 0, 0, 0, 0, 0, 0] data True"
RUNTIMES = ("libacl_rt.so", "libascendcl.so")


def foreign_script(body: str, root: Path) -> str:
    runtime = next(path for path in (root / "lib64" / name for name in RUNTIMES) if path.exists())
    return FOREIGN.format(runtime=str(runtime)) + body


def run_foreign(body: str, layout: str | None = None) -> tuple[str, str]:
    """``body`` after the script above, on the emulator tree of ``layout`` (default: the
    one aclnn_py falls back to), in a process set up as the tree's set_env.sh does (the
    foreign user, like torch_npu, needs the library path; aclnn_py does not)."""
    root = Path(aclnn_py.emulator.home(layout))
    library_path = ":".join(str(root / folder) for folder in (
        "lib64", "driver/lib64", "driver/lib64/common", "driver/lib64/driver"))
    backend = EMULATOR if layout is None else {"ACLNN_PY_BACKEND": "cann",
                                               "ACLNN_PY_CANN_HOME": str(root)}
    done = run_python(foreign_script(body, root), {**backend, "LD_LIBRARY_PATH": library_path})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, done.stderr


@pytest.mark.parametrize("layout", aclnn_py.emulator.LAYOUTS)
def test_foreign_user_first_survives_aclnn_py_exit_hook(layout):
    """torch_npu initialised first: aclnn_py's aclInit gets 100002, and its exit hook (which
    runs before the foreign user's, atexit being last in, first out) leaves ACL alive --
    with aclFinalizeReference (8.5) and without it (8.3, 8.0.RC2: no finalise at all)."""
    out, err = run_foreign("""
foreign = Foreign()
foreign.start()
atexit.register(foreign.finish)
use_aclnn_py()
""", layout)
    assert "foreign aclInit 0" in out
    assert "aclnn_py ok True" in out
    assert ALL_ZERO in out
    assert err == ""


def test_foreign_user_after_aclnn_py_survives_its_teardown():
    """aclnn_py initialised first; the foreign user joins (100002) and still works after
    aclnn_py's teardown ran, then finalises its own count."""
    out, err = run_foreign("""
use_aclnn_py()
foreign = Foreign()
foreign.start()
from aclnn_py.runtime import process as _runtime
_runtime.teardown()  # what aclnn_py's exit hook does
foreign.finish("aclFinalizeReference")
""")
    assert "foreign aclInit 100002" in out
    assert ALL_ZERO in out
    assert err == ""


def test_teardown_is_silent_when_the_other_user_finalised_first():
    out, err = run_foreign("""
foreign = Foreign()
foreign.start()
use_aclnn_py()
runtime.aclrtFree(foreign.memory)
runtime.aclrtDestroyStream(foreign.stream)
runtime.aclrtResetDevice(0)
print("foreign aclFinalize", runtime.aclFinalize())
""")  # aclnn_py's exit hook then finds ACL gone
    assert "foreign aclFinalize 0" in out
    assert err == ""


def test_without_the_counted_finalize_a_joined_init_is_not_finalised():
    """A runtime without aclFinalizeReference (CANN < 8.5) and an aclInit that returned
    100002: aclnn_py must not call aclFinalize, which would end the other user's ACL."""
    out, err = run_foreign("""
foreign = Foreign()
foreign.start()
from aclnn_py._c import lowlevel as _lowlevel
_lowlevel.finalize_reference = lambda: None  # as on a runtime that lacks it
calls = []
finalize = _lowlevel.finalize
_lowlevel.finalize = lambda: (calls.append("aclFinalize"), finalize())
use_aclnn_py()
from aclnn_py.runtime import process as _runtime
_runtime.teardown()
print("aclnn_py finalize calls", calls)
foreign.finish()
""")
    assert "aclnn_py finalize calls []" in out
    assert ALL_ZERO in out
    assert err == ""


def test_without_the_counted_finalize_an_own_init_is_finalised():
    out, _ = run_foreign("""
from aclnn_py._c import lowlevel as _lowlevel
_lowlevel.finalize_reference = lambda: None
use_aclnn_py()
from aclnn_py.runtime import process as _runtime
_runtime.teardown()
print("after teardown", runtime.aclmdlInitDump())
""")
    # aclnn_py's aclInit started ACL: it ended it (the dump API, the one that needs aclInit in
    # effect, then returns ACL_ERROR_UNINITIALIZE; the runtime calls go on working)
    assert "after teardown 100001" in out


# ---- the emulator's counts -------------------------------------------------------------


def test_emulator_counts_acl_init_like_cann():
    done = run_python("""
        import ctypes
        from aclnn_py._c import lowlevel as ll
        from aclnn_py.errors import AclError
        print(ll.init(), ll.init(), ll.init())  # True False False: three references
        ll.set_device(0)
        stream = ll.create_stream()
        print("left", ll.finalize_reference(), ll.finalize_reference())
        ll.synchronize_stream(stream)  # still initialised: one reference left
        print("left", ll.finalize_reference())
        # ACL ended, the runtime not: the stream still synchronises
        for call in (lambda: ll.synchronize_stream(stream), ll.finalize_reference):
            try:
                call()
            except AclError as error:
                print(error.api, error.status)
        print(ll.init(), ll.init())
        ll.finalize()  # clears every reference at once
        try:
            ll.finalize_reference()
        except AclError as error:
            print(error.api, error.status)
    """, EMULATOR)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "True False False", "left 2 1", "left 0", "aclFinalizeReference 100037",
        "True False", "aclFinalizeReference 100037"]


def test_emulator_releases_a_device_at_its_last_reset():
    done = run_python("""
        from aclnn_py._c import lowlevel as ll
        from aclnn_py.errors import AclError
        ll.init()
        ll.set_device(0); ll.set_device(0)
        stream = ll.create_stream()
        ll.reset_device(0)
        ll.synchronize_stream(stream)  # one set left: the stream lives
        ll.reset_device(0)
        ll.set_device(0)
        try:
            ll.synchronize_stream(stream)
        except AclError as error:
            print(error.api, error.status)
    """, EMULATOR)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "aclrtSynchronizeStream"
    assert done.stdout.split()[1] != "0"


# ---- devices set once per process ------------------------------------------------------


def test_threads_bind_the_device_context_instead_of_setting_it_again(monkeypatch):
    """aclrtSetDevice is counted per call: threads must not add counts that only teardown
    can balance. Each thread binds the device's context instead."""
    aclnn_py.synchronize()
    calls = []
    set_device = ll.set_device
    monkeypatch.setattr(ll, "set_device", lambda d: (calls.append(d), set_device(d))[1])
    x = aclnn_py.to_device(np.arange(4, dtype=np.float32))
    y = aclnn_py.to_device(np.zeros(4, np.float32))
    plan = aclnn_py.MseLossBackwardPlan(aclnn_py.to_device(np.ones(4, np.float32)), x, y)
    results, errors = [], []

    def worker():
        try:
            results.append(aclnn_py.mse_loss_backward(1.0, x, y).numpy())
            plan.run()  # a thread that never set a device
            results.append(plan.out.numpy())
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for result in results:
        np.testing.assert_allclose(result, 2 * np.arange(4) / 4, rtol=1e-6)
    assert calls == []  # device 0 was set once, before; every thread bound its context
    assert _runtime._process.set_counts == {0: 1}
    plan.close()


def test_device_switches_do_not_grow_the_set_count():
    done = run_python("""
        import numpy as np
        import aclnn_py
        from aclnn_py.runtime import process as _runtime
        for _ in range(5):
            for device in (0, 1):
                with aclnn_py.Stream(device) as stream:
                    a = aclnn_py.to_device(np.ones(3, np.float32), device=device)
                    aclnn_py.add(a, a, stream=stream).numpy()
        print(sorted(_runtime._process.set_counts.items()))
    """, {**EMULATOR, "ACLNN_EMU_DEVICE_COUNT": "2"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[(0, 1), (1, 1)]"

