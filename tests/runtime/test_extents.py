"""Shapes, axes, strides and devices are integers, as numpy takes them: ``aclnn_py.empty``,
``DeviceArray.reshape``, ``transpose`` and ``from_pointer`` refuse floats, strings and bools
with a TypeError naming the argument (numpy ints stay welcome); ``device=`` refuses them
even when it equals the current device."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import no_device_work

import aclnn_py

NOT_SHAPES = [[2.5], 2.5, "3", [True], True, (np.True_,), [np.float64(2.0)], np.array([2.0]),
              None, [None]]


@pytest.mark.parametrize("shape", NOT_SHAPES, ids=repr)
def test_empty_refuses_what_numpy_empty_refuses(shape):
    with pytest.raises(TypeError):
        np.empty(shape)  # numpy's own rule
    with no_device_work(), pytest.raises(TypeError, match="shape"):
        aclnn_py.empty(shape, np.float32)


ACCEPTED = [(3, (3,)), (np.int64(3), (3,)), ([2, np.int32(3)], (2, 3)),
            (np.array([2, 3]), (2, 3)), (np.array(4), (4,)), ((), ()), ([0, 5], (0, 5)),
            (np.uint8(2), (2,))]


@pytest.mark.parametrize("refused", NOT_SHAPES[:6], ids=repr)
def test_empty_takes_python_and_numpy_integers_only(refused):
    for shape, expected in ACCEPTED:
        assert np.empty(shape).shape == expected
        assert aclnn_py.empty(shape, np.float32).shape == expected
    with pytest.raises(TypeError, match="shape"):
        aclnn_py.empty(refused, np.float32)


@pytest.mark.parametrize("shape", [True, (True, 6), (2.0, 3), "6", (np.True_, 6)], ids=repr)
def test_reshape_refuses_non_integer_extents(shape):
    array = aclnn_py.empty((6,), np.float32)
    with pytest.raises(TypeError):
        np.empty(6).reshape(shape)
    with pytest.raises(TypeError, match="shape"):
        array.reshape(shape)
    assert array.reshape((np.int64(2), 3)).shape == (2, 3)


@pytest.mark.parametrize("axes", [(True, False), (1.0, 0)], ids=repr)
def test_transpose_refuses_non_integer_axes(axes):
    array = aclnn_py.empty((2, 3), np.float32)
    with pytest.raises(TypeError):
        np.empty((2, 3)).transpose(axes)
    with pytest.raises(TypeError, match="axes"):
        array.transpose(axes)
    assert array.transpose((np.int64(1), 0)).shape == (3, 2)


def test_from_pointer_refuses_bool_and_float_extents_and_strides():
    block = aclnn_py.empty((8,), np.float32)
    address = block.data_ptr()
    with pytest.raises(TypeError, match="shape"):
        aclnn_py.DeviceArray.from_pointer(address, [True], np.float32, owner=block)
    with pytest.raises(TypeError, match="strides"):
        aclnn_py.DeviceArray.from_pointer(address, (2,), np.float32, strides=(True,),
                                          owner=block)
    with pytest.raises(TypeError, match="strides"):
        aclnn_py.DeviceArray.from_pointer(address, (2,), np.float32, strides=(1.0,),
                                          owner=block)
    view = aclnn_py.DeviceArray.from_pointer(address, (np.int64(2),), np.float32,
                                             strides=(np.int64(2),), owner=block)
    assert (view.shape, view.strides) == ((2,), (2,))


@pytest.mark.parametrize("device", [False, 0.0, np.bool_(False)], ids=repr)
def test_device_refuses_non_integers_even_equal_to_the_current_one(device):
    aclnn_py.empty(1, np.float32, device=0)  # device 0 is current in this thread
    with pytest.raises(TypeError, match="device must be an int"):
        aclnn_py.empty(1, np.float32, device=device)
    assert aclnn_py.empty(1, np.float32, device=np.int64(0)).device == 0
