"""aclnn_py.call with aclFloatArray, aclBoolArray and aclTensorList arguments: how each is
converted and refused, the emulator's custom operator aclnnWeightedSumCustom (a tensor list, a
float array and a bool array in, a tensor and a tensor list out) end to end against numpy,
ownership (a tensor list owns its tensors), and the emulator's checks of the new C functions
through the low-level layer."""

from __future__ import annotations

import gc
import re

import numpy as np
import pytest
from conftest import LowLevelResources, no_device_work, status_of

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py._c._ffi import ffi
from aclnn_py.engine.call import convert_attribute
from aclnn_py.errors import AclError
from aclnn_py.ops import catalog as _catalog
from aclnn_py.runtime import handles as _handles

OP = "aclnnWeightedSumCustom"
PARAM_NULLPTR = 161001
PARAM_INVALID = 161002
INNER_NULLPTR = 561103
AICORE_EXCEPTION = 507015
NEW_KEYS = ("live_float_arrays", "live_bool_arrays", "live_tensor_lists")


def weighted_sum(xs, weights, mask):
    """The operator's formula in numpy: float32 products, a float32 sum in list order, one
    rounding to the dtype."""
    dtype = xs[0].dtype
    products = [np.float32(w) * x.astype(np.float32) if m else np.zeros(x.shape, np.float32)
                for x, w, m in zip(xs, weights, mask)]
    total = np.zeros(xs[0].shape, np.float32)
    for product, m in zip(products, mask):
        if m:
            total = total + product
    return total.astype(dtype), [product.astype(dtype) for product in products]


def bits(array):
    array = np.asarray(array)
    return array.view(np.uint32 if array.dtype.itemsize == 4 else np.uint16)


def outputs(shape, dtype, n):
    return np.full(shape, 7, dtype), [np.full(shape, 7, dtype) for _ in range(n)]


def live(*keys):
    stats = aclnn_py.emulator.stats()
    return tuple(stats[key] for key in keys)


# ---- conversion of the array attributes --------------------------------------------------


def parameter(c_type, name="values", optional=False):
    return _catalog.Parameter(name, c_type, "attribute", optional)


@pytest.mark.parametrize("value, expected", [
    ([1, 2.5, np.float32(0.25), np.int64(-3)], (1.0, 2.5, 0.25, -3.0)),
    ((), ()),
    (np.array([0.5, 1.5]), (0.5, 1.5)),
])
def test_float_arrays_take_sequences_of_real_numbers(value, expected):
    converted = convert_attribute("aclnnOp", parameter("const aclFloatArray *"), value)
    assert converted == expected
    assert all(type(item) is float for item in converted)


@pytest.mark.parametrize("value, message", [
    (1.5, "must be a sequence of real numbers, got float"),
    ("1.5", "must be a sequence of real numbers, got str"),
    (np.ones((2, 2)), "must be a sequence of real numbers, got a 2-d array"),
    ([1.0, True], "must hold real numbers, got True"),
    ([1.0, "2"], "must hold real numbers, got '2'"),
    ([1.0, None], "must hold real numbers, got None"),
    (None, "is required"),
])
def test_float_arrays_refuse_anything_else(value, message):
    with pytest.raises(TypeError, match=message) as info:
        convert_attribute("aclnnOp", parameter("const aclFloatArray *"), value)
    assert "aclnnOp: values (const aclFloatArray *)" in str(info.value)


@pytest.mark.parametrize("value, expected", [
    ([True, np.bool_(False), False], (True, False, False)),
    ((), ()),
    (np.array([False, True]), (False, True)),
])
def test_bool_arrays_take_sequences_of_bools(value, expected):
    converted = convert_attribute("aclnnOp", parameter("aclBoolArray *"), value)
    assert converted == expected
    assert all(type(item) is bool for item in converted)


@pytest.mark.parametrize("value, message", [
    (True, "must be a sequence of bools, got bool"),
    ([1, 0], "must hold bools, got 1"),
    ([True, 1.0], "must hold bools, got 1.0"),
    (np.array([[True]]), "must be a sequence of bools, got a 2-d array"),
    ("TF", "must be a sequence of bools, got str"),
    (None, "is required"),
])
def test_bool_arrays_refuse_anything_else(value, message):
    with pytest.raises(TypeError, match=message):
        convert_attribute("aclnnOp", parameter("const aclBoolArray *"), value)


def test_optional_arrays_may_be_none_and_int_arrays_refuse_2d_arrays():
    for c_type in ("const aclFloatArray *", "const aclBoolArray *"):
        assert convert_attribute("aclnnOp", parameter(c_type, "scalesOptional", True), None) is None
    with pytest.raises(TypeError, match="must be a sequence of integers, got a 2-d array"):
        convert_attribute("aclnnOp", parameter("const aclIntArray *"), np.ones((2, 2), np.int64))


# ---- the custom operator: signature and refusals before any device work ------------------


def test_the_custom_operator_declares_lists_and_arrays():
    signature = aclnn_py.signature(OP)
    assert OP in aclnn_py.operators()
    assert [(p.name, p.c_type, p.role) for p in signature.parameters] == [
        ("x", "const aclTensorList *", "input"),
        ("weights", "const aclFloatArray *", "attribute"),
        ("mask", "const aclBoolArray *", "attribute"),
        ("y", "const aclTensor *", "output"),
        ("terms", "const aclTensorList *", "output"),
    ]
    assert signature.package is not None and signature.roles_known


def good_arguments():
    xs = [np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)]
    return xs, [0.5, 2.0], [True, False]


@pytest.mark.parametrize("change, error, message", [
    (dict(weights=[1.0, "a"]), TypeError, r"weights \(const aclFloatArray \*\) must hold real"),
    (dict(weights=None), TypeError, r"weights \(const aclFloatArray \*\) is required"),
    (dict(mask=[1, 0]), TypeError, r"mask \(const aclBoolArray \*\) must hold bools, got 1"),
    (dict(mask=True), TypeError, "must be a sequence of bools, got bool"),
    (dict(x=np.ones((2, 2, 3), np.float32)), TypeError,
     "x is a tensor list: pass a list or tuple of arrays, got ndarray"),
    (dict(x=[np.ones((2, 3), np.float32), None]), TypeError, r"x\[1\] is None"),
    (dict(x=None), TypeError, "x is a required tensor"),
    (dict(x=[np.ones((2, 3), np.float32), np.array([["a"]])]), TypeError,
     r"x\[1\] must be an array or numbers; got ndarray of dtype <U1"),
])
def test_call_refuses_wrong_arguments_before_any_device_work(change, error, message):
    xs, weights, mask = good_arguments()
    arguments = dict(x=xs, weights=weights, mask=mask)
    arguments.update(change)
    y, terms = outputs((2, 3), np.float32, 2)
    with no_device_work(), pytest.raises(error, match=message):
        aclnn_py.call(OP, **arguments, out=(y, terms))
    assert (y == 7).all()


def test_output_lists_need_out_as_a_sequence_of_arrays():
    xs, weights, mask = good_arguments()
    y, terms = outputs((2, 3), np.float32, 2)
    with no_device_work():
        with pytest.raises(TypeError, match="the arrays of the output tensor list terms cannot "
                                            "be inferred; pass out="):
            aclnn_py.call(OP, xs, weights, mask)
        with pytest.raises(TypeError, match="out terms is a tensor list: pass a list or tuple"):
            aclnn_py.call(OP, xs, weights, mask, out=(y, terms[0]))
        with pytest.raises(TypeError, match=r"out terms\[1\] is None"):
            aclnn_py.call(OP, xs, weights, mask, out=(y, [terms[0], None]))
        with pytest.raises(TypeError, match=r"out= array for terms\[0\] must be a numpy.ndarray"):
            aclnn_py.call(OP, xs, weights, mask, out=(y, [[1.0], terms[1]]))


def test_out_of_a_lone_output_list_is_that_lists_arrays():
    from pathlib import Path

    from aclnn_py.engine import call as _generic

    def signature(*outputs):
        parameters = (_catalog.Parameter("x", "const aclTensor *", "input", False),
                      *(_catalog.Parameter(n, t, "output", False) for n, t in outputs))
        return _catalog.Signature("aclnnSplit", parameters, Path("h.h"), 1, Path("l.so"))

    a, b = np.zeros(2), np.ones(2)
    lone = signature(("out", "aclTensorList *"))
    assert _generic._outputs(lone, [a, b])[1] == ([a, b],)
    assert _generic._outputs(lone, (a, b))[1] == ((a, b),)
    pair = signature(("first", "aclTensor *"), ("rest", "aclTensorList *"))
    assert _generic._outputs(pair, (a, [b]))[1] == (a, [b])


# ---- the custom operator end to end ------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_weighted_sum_of_numpy_arrays_is_exact(dtype):
    rng = np.random.default_rng(11)
    xs = [rng.standard_normal((3, 5)).astype(dtype) for _ in range(4)]
    weights = [0.1, -2.5, 3.0e-3, 7.25]
    mask = [True, False, True, True]
    y, terms = outputs((3, 5), dtype, 4)
    result = aclnn_py.call(OP, xs, weights, mask, out=(y, terms))
    assert result[0] is y and all(a is b for a, b in zip(result[1], terms))
    expected_y, expected_terms = weighted_sum(xs, weights, mask)
    assert np.array_equal(bits(y), bits(expected_y))
    for got, expected in zip(terms, expected_terms):
        assert np.array_equal(bits(got), bits(expected))
    assert (terms[1] == 0).all()  # masked out


def test_weighted_sum_of_device_arrays_gives_device_arrays(aclnn_stream):
    rng = np.random.default_rng(12)
    hosts = [rng.standard_normal(8).astype(np.float16) for _ in range(3)]
    xs = [aclnn_py.to_device(h) for h in hosts]
    y = aclnn_py.empty((8,), np.float16)
    terms = [aclnn_py.empty((8,), np.float16) for _ in range(3)]
    for weights in ([1.5, -1.0, 0.5], [2.0, 0.25, -4.0]):  # a second call, same signature
        result = aclnn_py.call(OP, xs, weights, (True, True, False), out=(y, terms),
                               stream=aclnn_stream)
        assert isinstance(result[0], aclnn_py.DeviceArray)
        assert result[0] is y and all(a is b for a, b in zip(result[1], terms))
        expected_y, expected_terms = weighted_sum(hosts, weights, (True, True, False))
        assert np.array_equal(bits(y.numpy()), bits(expected_y))
        for got, expected in zip(terms, expected_terms):
            assert np.array_equal(bits(got.numpy()), bits(expected))


@pytest.mark.parametrize("arguments, n_terms, message", [
    (([np.ones(3, np.float32)] * 2, [1.0], [True, True]), 2,
     "weights has 1 entries but x has 2 tensors"),
    (([np.ones(3, np.float32)] * 2, [1.0, 2.0], [True]), 2,
     "mask has 1 entries but x has 2 tensors"),
    (([np.ones(3, np.float32)] * 2, [1.0, 2.0], [True, True]), 1,
     "terms has 1 entries but x has 2 tensors"),
    (([], [], []), 0, "x is an empty tensor list"),
    (([np.ones(3, np.float32), np.ones(3, np.float16)], [1.0, 2.0], [True, True]), 2,
     r"x\[1\] has dtype DT_FLOAT16 but x\[0\] has dtype DT_FLOAT"),
    (([np.ones(3, np.float32), np.ones(4, np.float32)], [1.0, 2.0], [True, True]), 2,
     r"x\[1\] has shape \[4\] but x\[0\] has shape \[3\]"),
    (([np.ones(3, np.int32)], [1.0], [True]), 1, r"x\[0\] has dtype DT_INT32"),
])
def test_the_operator_refuses_with_its_own_status(arguments, n_terms, message):
    dtype = arguments[0][0].dtype if arguments[0] else np.float32
    y, terms = outputs((3,), dtype, n_terms)
    with pytest.raises(AclError) as info:
        aclnn_py.call(OP, *arguments, out=(y, terms))
    assert info.value.status == PARAM_INVALID
    assert info.value.api == OP + "GetWorkspaceSize"
    assert re.search(message, info.value.message), info.value
    assert (y == 7).all()


@pytest.mark.emulator_only
def test_calls_leave_no_arrays_lists_or_tensors_behind(aclnn_leak_check):
    before = live(*NEW_KEYS)
    xs, weights, mask = good_arguments()
    for _ in range(3):
        aclnn_py.call(OP, xs, weights, mask, out=outputs((2, 3), np.float32, 2))
    with pytest.raises(AclError):  # refused by the operator, after the lists were made
        aclnn_py.call(OP, xs, [1.0], mask, out=outputs((2, 3), np.float32, 2))
    for api in ("aclCreateTensorList", "aclCreateFloatArray", "aclCreateBoolArray"):
        aclnn_py.emulator.inject_fault(api, 561103)
        with pytest.raises(AclError, match=f"{api}: injected"):
            aclnn_py.call(OP, xs, weights, mask, out=outputs((2, 3), np.float32, 2))
        aclnn_py.emulator.clear_faults()
    aclnn_py.synchronize()
    gc.collect()
    assert live(*NEW_KEYS) == before == (0, 0, 0)


# ---- ownership on the host side -----------------------------------------------------------


@pytest.mark.emulator_only
def test_a_tensor_list_owns_its_tensors():
    arrays = [aclnn_py.to_device(np.ones(4, np.float32)) for _ in range(3)]
    gc.collect()
    tensors_before, lists_before = live("live_tensors", "live_tensor_lists")
    members = [a.tensor() for a in arrays]
    made = _handles.Handle("tensor_list", members)
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
        _handles.Handle("tensor_list", members)
    assert all(member.handle != ll.NULL for member in members)
    assert live("live_tensors", "live_tensor_lists")[0] == tensors_before + 2
    for member in members:
        member.destroy()
    assert live("live_tensors")[0] == tensors_before


@pytest.mark.emulator_only
@pytest.mark.parametrize("make, key", [
    (lambda: _handles.Handle("float_array", (0.5, 1.5)), "live_float_arrays"),
    (lambda: _handles.Handle("bool_array", (True, False)), "live_bool_arrays"),
    (lambda: _handles.Handle("tensor_list", []), "live_tensor_lists"),
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
            ll.memcpy(pointer, host.nbytes, ffi.from_buffer(host), host.nbytes,
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
        ll.memcpy(ffi.from_buffer(result, require_writable=True), result.nbytes,
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


def bound():
    """The custom operator's library (binding its two functions)."""
    return str(aclnn_py.signature(OP).library)


def run(s, *arguments):
    library = bound()
    size, executor = ll.operator_workspace_size(OP, *arguments, library=library)
    assert size == 0
    ll.operator_launcher(OP, library)(ll.NULL, 0, executor, s.stream)
    ll.synchronize_stream(s.stream)


def phase1_refusal(*arguments) -> AclError:
    with pytest.raises(AclError) as info:
        ll.operator_workspace_size(OP, *arguments, library=bound())
    return info.value


@pytest.mark.emulator_only
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
    pointers = ffi.new("aclTensor *[]", [a, b])
    made = ll.check_created(ll.META.aclCreateTensorList(pointers, 2), "aclCreateTensorList")
    pointers[0] = c  # after creation: the list keeps a and b
    ll.destroy_tensor_list(made)
    s.tensors.remove(a)
    s.tensors.remove(b)
    assert status_of(ll.destroy_tensor, a) == INNER_NULLPTR
    ll.destroy_tensor(c)
    s.tensors.remove(c)


@pytest.mark.emulator_only
def test_the_operator_reads_strided_members_and_copied_values(s):
    rng = np.random.default_rng(13)
    x0 = rng.standard_normal((2, 3)).astype(np.float32)
    base = rng.standard_normal((3, 2)).astype(np.float32)
    x1 = base.T  # a transposed view of base's storage
    weights_host = ffi.new("float[]", [0.5, -3.0])
    weights = ll.check_created(ll.META.aclCreateFloatArray(weights_host, 2), "aclCreateFloatArray")
    s.arrays.append((ll.destroy_float_array, weights))
    weights_host[0] = 100.0  # copied at creation
    mask = s.bool_array((True, True))
    x = s.listed([s.tensor(x0),
                  s.describe((2, 3), np.float32, s.upload(base), strides=(1, 2), storage=6)])
    y = s.tensor(np.zeros((2, 3), np.float32))
    y_pointer = s.pointers[-1]
    term_tensors = [s.tensor(np.zeros((2, 3), np.float32)) for _ in range(2)]
    term_pointers = s.pointers[-2:]
    terms = s.listed(term_tensors)
    run(s, x, weights, mask, y, terms)
    expected_y, expected_terms = weighted_sum([x0, np.ascontiguousarray(x1)], [0.5, -3.0],
                                              [True, True])
    assert np.array_equal(bits(s.read(y_pointer, (2, 3), np.float32)), bits(expected_y))
    for pointer, expected in zip(term_pointers, expected_terms):
        assert np.array_equal(bits(s.read(pointer, (2, 3), np.float32)), bits(expected))


@pytest.mark.emulator_only
def test_the_operator_checks_members_objects_and_memory(s):
    ones = np.ones(3, np.float32)
    weights, mask = s.float_array((1.0, 1.0)), s.bool_array((True, True))
    y = s.tensor(ones)
    terms = s.listed([s.tensor(ones), s.tensor(ones)])
    with_null = s.listed([s.tensor(ones), ll.NULL])  # CANN accepts NULL members
    error = phase1_refusal(with_null, weights, mask, y, terms)
    assert error.status == PARAM_NULLPTR
    assert r"argument x[1] is a NULL aclTensor pointer" in error.message
    x = s.listed([s.tensor(ones), s.tensor(ones)])
    error = phase1_refusal(x, weights, ll.NULL, y, terms)
    assert error.status == PARAM_NULLPTR and "argument mask is NULL" in error.message
    gone = ll.create_bool_array((True, True))
    ll.destroy_bool_array(gone)
    error = phase1_refusal(x, weights, gone, y, terms)
    assert error.status == PARAM_NULLPTR and "mask is not a live aclBoolArray" in error.message
    wrong = ffi.cast("aclFloatArray *", terms)  # a tensor list where a float array goes
    error = phase1_refusal(x, wrong, mask, y, terms)
    assert error.status == PARAM_NULLPTR and "weights is not a live aclFloatArray" in error.message
    host = np.zeros(16, np.float32)
    aligned = (host.ctypes.data + 31) // 32 * 32
    on_host = s.describe((3,), np.float32, ffi.cast("void *", aligned))
    error = phase1_refusal(x, weights, mask, on_host, terms)
    assert error.status == PARAM_INVALID and "y data" in error.message
    assert "is not device memory" in error.message


@pytest.mark.emulator_only
def test_the_kernel_rechecks_memory_when_it_runs(s):
    ones = np.ones(3, np.float32)
    weights, mask = s.float_array((1.0, 1.0)), s.bool_array((True, False))
    member = s.tensor(ones)
    member_pointer = s.pointers[-1]
    x = s.listed([member, s.tensor(ones)])
    y = s.tensor(np.full(3, 7, np.float32))
    y_pointer = s.pointers[-1]
    terms = s.listed([s.tensor(ones), s.tensor(ones)])
    library = bound()
    size, executor = ll.operator_workspace_size(OP, x, weights, mask, y, terms, library=library)
    ll.operator_launcher(OP, library)(ll.NULL, size, executor, s.stream)
    ll.free(member_pointer)  # while the kernel is queued
    s.pointers.remove(member_pointer)
    with pytest.raises(AclError) as info:
        ll.synchronize_stream(s.stream)
    assert info.value.status == AICORE_EXCEPTION
    assert "WeightedSumCustom" in info.value.message and "input x[0]" in info.value.message
    assert (s.read(y_pointer, (3,), np.float32) == 7).all()  # nothing was written
    with pytest.raises(AclError, match="executor is not valid"):  # phase 2 consumed it
        ll.operator_launcher(OP, library)(ll.NULL, 0, executor, s.stream)


@pytest.mark.parametrize("keyword", ["keepdim", "keepDims", "keepDim", "keepdims"])
def test_call_takes_each_spelling_of_keepdim(keyword):
    """aclnnReduceSum spells it keepDims, ArgMax keepdim, Mean keepDim: call takes any."""
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    out = np.empty((4, 1), np.float32)
    aclnn_py.call("aclnnReduceSum", x, [1], **{keyword: True}, dtype=np.float32, out=out)
    np.testing.assert_allclose(out[:, 0], x.sum(1))


def test_two_spellings_of_one_parameter_are_refused():
    x = np.ones((4, 5), np.float32)
    with pytest.raises(TypeError, match=r"got 'keepDims' twice \(as 'keepdim' and 'keepDims'\)"):
        aclnn_py.call("aclnnReduceSum", x, [1], keepdim=True, keepDims=True, dtype=np.float32,
                      out=np.empty((4, 1), np.float32))


def test_call_takes_python_values_by_the_rule_of_the_curated_functions():
    """Lists and numbers take the dtype of the call's array (not numpy's float64); what no
    dtype can hold, and what is not numbers, is refused with the curated functions' words."""
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    result = aclnn_py.call("aclnnMul", x, [1.5, 2, 3])
    assert result.dtype == np.float16
    np.testing.assert_array_equal(result, x * np.float16([1.5, 2, 3]))
    assert aclnn_py.call("aclnnMul", [0.5, 1.5], [2, 2]).dtype == np.float32
    with no_device_work():
        with pytest.raises(TypeError, match=r"^other holds Python float numbers, which the "
                                            r"call's dtype int32 cannot hold"):
            aclnn_py.call("aclnnAdd", np.ones(2, np.int32), 2.5, 1)
        with pytest.raises(TypeError, match=r"^other must be an array or numbers; got str$"):
            aclnn_py.call("aclnnAdd", x, "abc", 1.0)
        with pytest.raises(ValueError, match=r"^other holds a number that int8, the call's "
                                             r"dtype, cannot hold"):
            aclnn_py.call("aclnnAdd", np.ones(2, np.int8), [1000, 2], 1)
    with pytest.raises(TypeError, match=r"^y must be an array or numbers; got str$"):
        aclnn_py.mse_loss(x, "abc")
