"""What users reach for on arrays, plans and events, and errors that blame the right
argument and say how to fix it."""

from __future__ import annotations

import re

import numpy as np
import pytest

import aclnn_py


def test_scalars_out_of_device_arrays():
    zero_d = aclnn_py.to_device(np.float32(2.75))
    assert zero_d.item() == 2.75 and isinstance(zero_d.item(), float)
    assert float(zero_d) == 2.75 and int(zero_d) == 2
    loss = aclnn_py.mse_loss(aclnn_py.to_device(np.ones(4, np.float32)), 3.0)
    assert float(loss) == 4.0  # waits for the queued work
    one = aclnn_py.to_device(np.array([[7]], np.float16))
    assert one.item() == 7.0
    with pytest.raises(TypeError, match=r"only 0-d DeviceArrays convert to Python floats; this "
                                        r"one has shape \(1, 1\)"):
        float(one)
    with pytest.raises(ValueError, match=r"item\(\) needs an array of one element; this one "
                                         r"has shape \(2, 3\) \(6 elements\)"):
        aclnn_py.to_device(np.ones((2, 3), np.float32)).item()


def test_len_size_ndim():
    array = aclnn_py.to_device(np.ones((5, 2, 3), np.float32))
    assert (len(array), array.size, array.ndim) == (5, 30, 3)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d DeviceArray"):
        len(aclnn_py.to_device(np.float32(1)))


def test_numpy_conversion_follows_numpy_2s_copy_rule():
    array = aclnn_py.to_device(np.arange(3, dtype=np.float32))
    with pytest.raises(ValueError, match="cannot avoid a copy; use numpy.asarray"):
        np.array(array, copy=False)
    assert np.array(array).tolist() == [0.0, 1.0, 2.0]
    assert np.asarray(array, dtype=np.float64).dtype == np.float64


def test_reprs_of_events_and_plans():
    event = aclnn_py.Event()
    assert re.fullmatch(r"<aclnn_py\.Event device=0 0x[0-9a-f]+>", repr(event))
    event.close()
    assert repr(event) == "<aclnn_py.Event device=0 closed>"
    x = aclnn_py.to_device(np.ones((2, 3), np.float32))
    plan = aclnn_py.MseLossPlan(x, x, "none")
    assert repr(plan) == ("<aclnn_py.MseLossPlan aclnnMseLoss: x=(2, 3) float32, "
                          "y=(2, 3) float32, out=(2, 3) float32; device 0, workspace "
                          f"{plan.workspace_size} bytes>")
    plan.close()
    assert repr(plan).endswith("; device 0, closed>")


def test_a_number_takes_the_blame_off_itself():
    """``grad=1.0`` takes ``x``'s dtype: an unsupported ``x`` is named, with the fix."""
    x = np.ones((2, 3))  # float64
    y = np.ones(3, np.float32)
    with pytest.raises(TypeError) as raised:
        aclnn_py.mse_loss_backward(1.0, x, y)
    assert str(raised.value) == (
        "x has dtype float64; supported dtypes are float32, float16, bfloat16; convert it "
        "with x.astype(numpy.float32) (float64 is numpy's default float dtype)")
    assert aclnn_py.mse_loss(y, [1.0, 2.0, 3.0], "none").dtype == np.float32  # takes y's
    with pytest.raises(TypeError, match=r"^x has dtype int64; supported dtypes are float32, "
                                        r"float16, bfloat16; convert it with "
                                        r"x\.astype\(numpy\.float32\)$"):
        aclnn_py.add(np.arange(3), 1)
