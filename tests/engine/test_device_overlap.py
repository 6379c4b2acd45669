"""On the device path an ``out=`` that shares memory with an input without being that very
view is refused before any device work (the device would read and write it in no promised
order), as PyTorch refuses partial overlap: through the curated functions, ``call``, the
launch cache's repeat path and plans. The very same view (in place) stays allowed, and
views whose elements interleave without sharing any compute right."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import no_device_work

import aclnn_py

SHARE = "share memory without being the same view"


def _buffer(n=8):
    return aclnn_py.to_device(np.arange(n, dtype=np.float32))


@pytest.mark.parametrize("through", ["function", "call"])
def test_an_out_shifted_over_its_inputs_is_refused_naming_them(through):
    b = _buffer()
    aclnn_py.synchronize()
    with no_device_work(), pytest.raises(ValueError, match=SHARE) as info:
        if through == "function":
            aclnn_py.add(b[0:7], b[0:7], out=b[1:8])
        else:
            aclnn_py.call("aclnnAdd", b[0:7], b[0:7], 1, out=b[1:8])
    assert "out (written) and " + ("x" if through == "function" else "self") in str(info.value)
    assert b.numpy().tolist() == list(range(8))  # untouched


def test_the_launch_cache_s_repeat_path_refuses_it_too():
    separate, out = _buffer(), _buffer()
    aclnn_py.add(separate[0:7], separate[0:7], out=out[1:8])  # the signature is cached
    b = _buffer()  # the same layouts, one buffer
    aclnn_py.synchronize()
    with no_device_work(), pytest.raises(ValueError, match=SHARE):
        aclnn_py.add(b[0:7], b[0:7], out=b[1:8])
    with pytest.raises(ValueError, match=SHARE):
        aclnn_py.add(b[0:7], 1.0, out=b[1:8])  # a number kept on the device as the other


def test_an_input_broadcast_from_part_of_out_is_refused():
    m = aclnn_py.to_device(np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match=SHARE):
        aclnn_py.add(m, m[0], out=m)


def test_the_very_same_view_and_interleaved_views_stay_allowed_where_overlap_is_refused():
    b = _buffer()
    assert aclnn_py.add(b, b, alpha=2, out=b) is b  # in place
    assert b.numpy().tolist() == [3.0 * i for i in range(8)]
    c = _buffer()
    aclnn_py.call("aclnnAdd", c[2:6], c[2:6], 1, out=c[2:6])
    assert c.numpy().tolist() == [0, 1, 4, 6, 8, 10, 6, 7]
    d = _buffer()  # no element shared
    got = aclnn_py.call("aclnnAdd", d[::2], d[::2], 1, out=d[1::2])
    assert got.numpy().tolist() == [0.0, 4.0, 8.0, 12.0]
    assert d.numpy().tolist() == [0, 0, 2, 4, 4, 8, 6, 12]
    with pytest.raises(ValueError, match=SHARE):  # elements shared: one element apart
        aclnn_py.call("aclnnAdd", d[0:4], d[0:4], 1, out=d[1:5])


def test_plans_refuse_it_when_built_and_when_rebound():
    b = _buffer()
    with pytest.raises(ValueError, match=SHARE):
        aclnn_py.AddPlan(b[0:7], b[0:7], out=b[1:8])
    big = _buffer()
    with aclnn_py.AddPlan(big[1:8], _buffer(7)) as plan:
        plan.run()
        with pytest.raises(ValueError, match=SHARE):
            plan.run(out=big[0:7])  # the planned out's layout, over the x bound
        plan.run(out=_buffer(7))  # a separate out is fine
        other = _buffer()
        with pytest.raises(ValueError, match=SHARE):
            plan.run(x=other[1:8], out=other[0:7])


def test_two_outputs_over_the_same_memory_are_refused():
    values = aclnn_py.to_device(np.array([3.0, 1.0, 2.0, 0.0], np.float32))
    block = aclnn_py.empty((8,), np.float32)
    indices = aclnn_py.DeviceArray.from_pointer(block.data_ptr(), (4,), np.int64, owner=block)
    with pytest.raises(ValueError, match="valuesOut \\(written\\) and indicesOut"):
        aclnn_py.call("aclnnSort", values, False, 0, False, out=(block[0:4], indices))
