"""aclFloatArray, aclBoolArray and aclTensorList: ownership on the host side (a tensor list
owns its tensors) and the emulator's checks of the new C functions through the low-level
layer."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from conftest import LowLevelResources

import aclnn_py
from aclnn_py import _lowlevel as ll
from aclnn_py import _runtime
from aclnn_py.errors import AclError

INNER_NULLPTR = 561103
NEW_KEYS = ("live_float_arrays", "live_bool_arrays", "live_tensor_lists")


def live(*keys):
    stats = aclnn_py.emulator.stats()
    return tuple(stats[key] for key in keys)


# ---- ownership on the host side -----------------------------------------------------------


@pytest.mark.emulator_only
def test_a_tensor_list_owns_its_tensors():
    arrays = [aclnn_py.to_device(np.ones(4, np.float32)) for _ in range(3)]
    gc.collect()
    tensors_before, lists_before = live("live_tensors", "live_tensor_lists")
    members = [a.tensor() for a in arrays]
    made = _runtime.AclTensorList(members)
    assert live("live_tensors", "live_tensor_lists") == (tensors_before + 3, lists_before + 1)
    assert all(member.handle == ll.NULL for member in members)
    for member in members:
        member.destroy()  # the list's now: nothing happens
    assert live("live_tensors") == (tensors_before + 3,)
    made.destroy()
    made.destroy()
    assert live("live_tensors", "live_tensor_lists") == (tensors_before, lists_before)


@pytest.mark.emulator_only
def test_a_failed_tensor_list_leaves_the_tensors_with_their_owners():
    arrays = [aclnn_py.to_device(np.ones(4, np.float32)) for _ in range(2)]
    gc.collect()
    tensors_before = live("live_tensors")[0]
    members = [a.tensor() for a in arrays]
    aclnn_py.emulator.inject_fault("aclCreateTensorList", 207001)
    with pytest.raises(AclError, match="injected"):
        _runtime.AclTensorList(members)
    assert all(member.handle != ll.NULL for member in members)
    assert live("live_tensors", "live_tensor_lists")[0] == tensors_before + 2
    for member in members:
        member.destroy()
    assert live("live_tensors")[0] == tensors_before


@pytest.mark.emulator_only
@pytest.mark.parametrize("make, key", [
    (lambda: _runtime.AclFloatArray((0.5, 1.5)), "live_float_arrays"),
    (lambda: _runtime.AclBoolArray((True, False)), "live_bool_arrays"),
    (lambda: _runtime.AclTensorList([]), "live_tensor_lists"),
], ids=["aclFloatArray", "aclBoolArray", "aclTensorList"])
def test_arrays_and_lists_are_owned_like_tensors(make, key):
    aclnn_py.runtime_info()
    gc.collect()
    before = live(key)[0]
    made = [make() for _ in range(3)]
    assert live(key)[0] == before + 3
    made[0].destroy()
    made[0].destroy()  # once only
    assert live(key)[0] == before + 2
    del made  # the others are destroyed in C when collected
    assert live(key)[0] == before


# ---- the emulator's C functions through the low-level layer ------------------------------


class Resources(LowLevelResources):
    """Device tensors (float32 / float16) and a stream for one test, released at the end;
    tensors handed to a list are the list's (:meth:`listed`)."""

    def __init__(self) -> None:
        super().__init__()
        self.lists: list = []
        self.arrays: list = []

    def upload(self, host):
        """Device memory holding a copy of ``host``."""
        host = np.ascontiguousarray(host)
        pointer = ll.malloc(max(host.nbytes, 1))
        self.pointers.append(pointer)
        if host.nbytes:
            ll.memcpy(pointer, host.nbytes, ll.ffi.from_buffer(host), host.nbytes,
                      ll.MEMCPY_HOST_TO_DEVICE)
        return pointer

    def describe(self, shape, dtype, data, *, strides=None, storage=None):
        """An aclTensor of ``shape`` over ``data`` (C-contiguous unless ``strides``)."""
        if strides is None:
            strides = tuple(int(v) for v in np.cumprod((1,) + tuple(shape)[::-1])[:-1][::-1])
        size = int(np.prod(shape))
        acl = ll.constant("ACL_FLOAT" if np.dtype(dtype) == np.float32 else "ACL_FLOAT16")
        handle = ll.create_tensor(tuple(shape), acl, tuple(strides), 0,
                                  (storage or max(size, 1),), data)
        self.tensors.append(handle)
        return handle

    def tensor(self, array):
        array = np.asarray(array)
        return self.describe(array.shape, array.dtype, self.upload(array))

    def read(self, tensor_pointer, shape, dtype):
        result = np.empty(shape, dtype)
        ll.memcpy(ll.ffi.from_buffer(result, require_writable=True), result.nbytes,
                  tensor_pointer, result.nbytes, ll.MEMCPY_DEVICE_TO_HOST)
        return result

    def listed(self, tensors):
        """A tensor list of ``tensors``, which are its from now on."""
        made = ll.create_tensor_list(tensors)
        for tensor in tensors:
            if tensor != ll.NULL:
                self.tensors.remove(tensor)
        self.lists.append(made)
        return made

    def float_array(self, values):
        made = ll.create_float_array(tuple(values))
        self.arrays.append((ll.destroy_float_array, made))
        return made

    def bool_array(self, values):
        made = ll.create_bool_array(tuple(values))
        self.arrays.append((ll.destroy_bool_array, made))
        return made

    def release(self) -> None:
        for destroy, made in self.arrays:
            destroy(made)
        for made in self.lists:
            ll.destroy_tensor_list(made)
        super().release()


@pytest.fixture
def s(device):
    resources = Resources()
    yield resources
    resources.release()


def status_of(call, *args) -> int:
    with pytest.raises(AclError) as info:
        call(*args)
    assert info.value.message
    return info.value.status


def test_float_and_bool_arrays_are_counted_and_refuse_double_destroy(device):
    before = live(*NEW_KEYS)
    floats = [ll.create_float_array((1.0, 2.0)), ll.create_float_array(())]
    flags = [ll.create_bool_array((True,)), ll.create_bool_array(())]
    assert live(*NEW_KEYS) == (before[0] + 2, before[1] + 2, before[2])
    for made in floats:
        ll.destroy_float_array(made)
    for made in flags:
        ll.destroy_bool_array(made)
    assert live(*NEW_KEYS) == before
    with pytest.raises(AclError, match="not a live aclFloatArray") as info:
        ll.destroy_float_array(floats[0])
    assert info.value.status == INNER_NULLPTR
    with pytest.raises(AclError, match="not a live aclBoolArray") as info:
        ll.destroy_bool_array(flags[0])
    assert info.value.status == INNER_NULLPTR
    ll.destroy_float_array(ll.NULL)  # like CANN: NULL is accepted
    ll.destroy_bool_array(ll.NULL)
    ll.destroy_tensor_list(ll.NULL)
    with pytest.raises(AclError, match="value is NULL but size is 2"):
        ll.check_created(ll.META.aclCreateFloatArray(ll.NULL, 2), "aclCreateFloatArray")
    with pytest.raises(AclError, match="value is NULL but size is 3"):
        ll.check_created(ll.META.aclCreateBoolArray(ll.NULL, 3), "aclCreateBoolArray")
    with pytest.raises(AclError, match="value is NULL but size is 1"):
        ll.check_created(ll.META.aclCreateTensorList(ll.NULL, 1), "aclCreateTensorList")
    assert live(*NEW_KEYS) == before


@pytest.mark.emulator_only
def test_destroying_a_list_destroys_its_tensors_and_only_once(s):
    members = [s.tensor(np.ones(2, np.float32)) for _ in range(3)]
    tensors_before = live("live_tensors")[0]
    made = ll.create_tensor_list(members)
    assert live("live_tensors", "live_tensor_lists")[0] == tensors_before
    with pytest.raises(AclError, match="belongs to an aclTensorList: aclDestroyTensorList "
                                       "releases the tensors of a list") as info:
        ll.destroy_tensor(members[1])
    assert info.value.status == INNER_NULLPTR
    ll.destroy_tensor_list(made)
    for member in members:
        s.tensors.remove(member)
    assert live("live_tensors")[0] == tensors_before - 3
    assert status_of(ll.destroy_tensor_list, made) == INNER_NULLPTR
    with pytest.raises(AclError, match="not a live aclTensor"):
        ll.destroy_tensor(members[0])


@pytest.mark.emulator_only
def test_a_tensor_can_belong_to_one_list_once(s):
    a, b = s.tensor(np.ones(2, np.float32)), s.tensor(np.ones(2, np.float32))
    lists_before = live("live_tensor_lists")[0]
    with pytest.raises(AclError, match=r"value\[2\] \(0x[0-9a-f]+\) is already in this list"):
        ll.create_tensor_list([a, b, a])
    first = s.listed([a])
    with pytest.raises(AclError, match=r"value\[1\] .* already belongs to another aclTensorList"):
        ll.create_tensor_list([b, a])
    gone = s.tensor(np.ones(2, np.float32))
    ll.destroy_tensor(gone)
    s.tensors.remove(gone)
    with pytest.raises(AclError, match=r"value\[1\] .* is not a live aclTensor"):
        ll.create_tensor_list([b, gone])
    ll.destroy_tensor(b)  # every refusal left b with its creator
    s.tensors.remove(b)
    assert live("live_tensor_lists")[0] == lists_before + 1  # only the first
    assert first != ll.NULL


@pytest.mark.emulator_only
def test_the_list_copies_the_array_of_pointers(s):
    a, b, c = (s.tensor(np.ones(2, np.float32)) for _ in range(3))
    pointers = ll.ffi.new("aclTensor *[]", [a, b])
    made = ll.check_created(ll.META.aclCreateTensorList(pointers, 2), "aclCreateTensorList")
    pointers[0] = c  # after creation: the list keeps a and b
    ll.destroy_tensor_list(made)
    s.tensors.remove(a)
    s.tensors.remove(b)
    assert status_of(ll.destroy_tensor, a) == INNER_NULLPTR
    ll.destroy_tensor(c)
    s.tensors.remove(c)
