"""ACLNN_EMU_TRACE: the record of each Python kernel's launch (aclnn_py.emulator._kernels.trace)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import aclnn_py


@pytest.mark.emulator_only
def test_aclnn_emu_trace_records_each_python_kernel_launch(tmp_path, monkeypatch):
    """With ACLNN_EMU_TRACE, a launch leaves the tensors before and after the kernel and the
    other arguments, in launch order: what tools/run_cann_samples.py replays through
    PyTorch. An in-place operator's tensor is recorded both ways."""
    monkeypatch.setenv("ACLNN_EMU_TRACE", str(tmp_path))
    x = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    out = aclnn_py.call("aclnnAdds", x, 2.0, 3.0)
    target = aclnn_py.to_device(x)
    aclnn_py.call("aclnnInplaceNeg", target)
    target.numpy()
    first, second = sorted(tmp_path.glob("*.npz"))
    assert first.name.endswith("-aclnnAdds.npz") and second.name.endswith("-aclnnInplaceNeg.npz")
    with np.load(first) as adds:
        meta = json.loads(str(adds["meta"]))
        assert meta["operator"] == "aclnnAdds" and meta["written"] == ["out"]
        assert meta["arguments"] == {"other": 2.0, "alpha": 3.0}
        np.testing.assert_array_equal(adds["before/self"], x)
        np.testing.assert_array_equal(adds["after/out"], out)
    with np.load(second) as neg:
        np.testing.assert_array_equal(neg["before/selfRef"], x)
        np.testing.assert_array_equal(neg["after/selfRef"], -x)
    monkeypatch.delenv("ACLNN_EMU_TRACE")
    aclnn_py.call("aclnnAdds", x, 2.0, 3.0)
    assert len(list(tmp_path.glob("*.npz"))) == 2  # not recorded without the variable
