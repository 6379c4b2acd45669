"""What ``import aclnn_py`` brings in: not ml_dtypes (bfloat16 imports it when asked for or
met), not the header catalog; ``aclnn_py.testing``, ``aclnn_py.doctor`` and the catalog's
public names still work as attributes, imported on first use. Each check runs in a fresh
interpreter, whose modules are what it shows."""

from __future__ import annotations

import json

import pytest
from conftest import run_python

pytestmark = pytest.mark.slow  # each test starts an interpreter


def _run(code: str) -> dict:
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_aclnn_py_imports_neither_ml_dtypes_nor_the_catalog():
    found = _run("""
        import json, sys
        import aclnn_py
        print(json.dumps(sorted(m for m in sys.modules
                                if m == "ml_dtypes" or m.startswith(("ml_dtypes.",
                                "aclnn_py.ops.catalog", "aclnn_py.ops.headers",
                                "aclnn_py.ops.roles", "aclnn_py.testing", "aclnn_py.doctor")))))
    """)
    assert found == []


def test_a_float32_call_needs_no_ml_dtypes():
    found = _run("""
        import json, sys
        import numpy as np
        import aclnn_py
        x = np.ones(3, np.float32)
        aclnn_py.mse_loss_backward(1.0, x, x)
        aclnn_py.mse_loss_backward(np.float32(1.0), aclnn_py.to_device(x), x)
        try:
            aclnn_py.mse_loss_backward(np.ones(3), x, x)
        except TypeError as error:
            message = str(error)
        print(json.dumps({"ml_dtypes": "ml_dtypes" in sys.modules, "message": message}))
    """)
    assert found["ml_dtypes"] is False
    assert "supported dtypes are float32, float16, bfloat16" in found["message"]


def test_bfloat16_is_there_when_asked_for_or_met():
    found = _run("""
        import json, sys
        import aclnn_py
        from aclnn_py.ops import dtypes
        asked = dtypes.bfloat16
        first = "ml_dtypes" in sys.modules
        import ml_dtypes
        import numpy as np
        met = np.ones(2, ml_dtypes.bfloat16)
        device = aclnn_py.to_device(met)
        print(json.dumps({"first": first, "same": asked == np.dtype(ml_dtypes.bfloat16),
                          "is": dtypes.is_bfloat16(met.dtype),
                          "swapped": dtypes.is_bfloat16(met.dtype.newbyteorder(">")),
                          "float16": dtypes.is_bfloat16(np.dtype(np.float16)),
                          "device": device.dtype == met.dtype,
                          "in": met.dtype in dtypes.FLOATING,
                          "names": list(dtypes.FLOATING.names)}))
    """)
    assert found == {"first": True, "same": True, "is": True, "swapped": False,
                     "float16": False, "device": True, "in": True,
                     "names": ["float32", "float16", "bfloat16"]}


def test_testing_doctor_and_the_catalog_names_are_attributes():
    found = _run("""
        import json, sys
        import numpy as np
        import aclnn_py
        before = "aclnn_py.testing" in sys.modules
        aclnn_py.testing.assert_close(np.ones(2, np.float32), np.ones(2, np.float32))
        report = aclnn_py.doctor.report()
        from aclnn_py.ops import catalog
        print(json.dumps({
            "before": before, "testing": aclnn_py.testing.__name__,
            "doctor": aclnn_py.doctor.__name__, "report": isinstance(report, dict),
            "signature": aclnn_py.Signature is catalog.Signature,
            "parameter": aclnn_py.Parameter is catalog.Parameter,
            "register": aclnn_py.register_roles is catalog.register_roles,
            "unregister": aclnn_py.unregister_roles is catalog.unregister_roles,
            "dir": {"testing", "doctor", "Signature"} <= set(dir(aclnn_py)),
            "all": all(hasattr(aclnn_py, name) for name in aclnn_py.__all__)}))
    """)
    assert found == {"before": False, "testing": "aclnn_py.testing", "doctor": "aclnn_py.doctor",
                     "report": True, "signature": True, "parameter": True, "register": True,
                     "unregister": True, "dir": True, "all": True}


def test_an_unknown_attribute_is_still_an_attribute_error():
    found = _run("""
        import json
        import aclnn_py
        try:
            aclnn_py.no_such_name
        except AttributeError as error:
            print(json.dumps(str(error)))
    """)
    assert found == "module 'aclnn_py' has no attribute 'no_such_name'"
