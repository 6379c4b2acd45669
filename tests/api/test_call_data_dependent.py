"""aclnn_py.call of operators whose output extent depends on the data (aclnnMaskedSelect):
the output CANN requires (as large as the data may need), and the real extent back, read
from the output aclTensor's view shape once the launch ran."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py._c.codes import constant
from aclnn_py.emulator import _kernels
from aclnn_py.engine import call as _call
from aclnn_py.ops.dtypes import numpy_dtype

PARAM_INVALID = 161002


def _expected(values, mask):
    source, flags = np.broadcast_arrays(values, mask)
    return source[flags]


CASES = {
    "same shape": ((2, 3), (2, 3)),
    "broadcast mask": ((2, 3), (3,)),
    "broadcast both": ((4, 1), (1, 5)),
    "0-d": ((), ()),
}


@pytest.mark.parametrize("shapes", CASES.values(), ids=CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.float16])
def test_masked_select_returns_the_selected_elements_only(shapes, dtype):
    rng = np.random.default_rng(7)
    values = (rng.uniform(-5, 5, shapes[0]) * 10).astype(dtype)
    mask = rng.uniform(size=shapes[1]) < 0.5
    expected = _expected(values, mask)
    got = aclnn_py.call("aclnnMaskedSelect", values, mask)
    assert got.shape == expected.shape and got.dtype == values.dtype
    np.testing.assert_array_equal(got, expected)
    on_device = aclnn_py.call("aclnnMaskedSelect", aclnn_py.to_device(values),
                              aclnn_py.to_device(mask))
    assert isinstance(on_device, aclnn_py.DeviceArray) and on_device.shape == expected.shape
    np.testing.assert_array_equal(on_device.numpy(), expected)


def test_an_out_given_gets_the_selection_at_its_start_and_is_returned_as_its_view():
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.full(6, -1.0, np.float32)
    got = aclnn_py.call("aclnnMaskedSelect", values, np.array([True, False, True]), out=out)
    assert got.tolist() == [0.0, 2.0, 3.0, 5.0] and np.shares_memory(got, out)
    assert out.tolist() == [0.0, 2.0, 3.0, 5.0, -1.0, -1.0]  # the rest untouched


def test_a_device_out_given_is_returned_as_a_view_of_its_real_extent():
    values = aclnn_py.to_device(np.arange(6, dtype=np.float32))
    out = aclnn_py.empty((6,), np.float32)
    got = aclnn_py.call("aclnnMaskedSelect", values,
                        aclnn_py.to_device(np.array([0, 1, 1, 0, 0, 1], np.uint8)), out=out)
    assert got.shape == (3,) and got.numpy().tolist() == [1.0, 2.0, 5.0]
    assert got.data_ptr() == out.data_ptr()


def test_nothing_selected_is_an_empty_result():
    got = aclnn_py.call("aclnnMaskedSelect", np.ones((2, 2), np.float32),
                        np.zeros((2, 2), np.bool_))
    assert got.shape == (0,)
    empty = aclnn_py.call("aclnnMaskedSelect", np.ones((0, 2), np.float32),
                          np.ones((0, 2), np.bool_))
    assert empty.shape == (0,)


@pytest.mark.parametrize("on_device", [False, True], ids=["numpy", "device"])
@pytest.mark.parametrize("shape, rule", [((2, 3), "out has 2 dimensions; it must have exactly 1"),
                                         ((5,), "out has 5 elements")])
def test_an_out_cann_would_refuse_is_refused_at_phase_1(on_device, shape, rule):
    values, mask = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.bool_)
    out = np.empty(shape, np.float32)
    if on_device:
        values, mask, out = (aclnn_py.to_device(a) for a in (values, mask, out))
    with pytest.raises(aclnn_py.AclError, match=rule) as info:
        aclnn_py.call("aclnnMaskedSelect", values, mask, out=out)
    assert info.value.status == PARAM_INVALID


def test_a_transposed_out_is_refused():
    values, mask = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.bool_)
    with pytest.raises(ValueError, match="C-contiguous"):  # aclnn_py writes numpy in place
        aclnn_py.call("aclnnMaskedSelect", values, mask, out=np.empty((3, 2), np.float32).T)
    out = aclnn_py.empty((3, 2), np.float32).transpose()
    with pytest.raises(aclnn_py.AclError, match="out has 2 dimensions; it must have exactly 1"
                       ) as info:
        aclnn_py.call("aclnnMaskedSelect", aclnn_py.to_device(values), aclnn_py.to_device(mask),
                      out=out)
    assert info.value.status == PARAM_INVALID


def test_a_non_contiguous_device_out_is_accepted():
    """CANN checks no contiguity of out: hicann/ops-math conversion/masked_select_v3/op_api/
    aclnn_masked_select.cpp CheckShape; its UT aclnnMaskedSelect_5_4_float_nd_and_5_4_bool_nd_
    not_contiguous expects ACLNN_SUCCESS."""
    out = aclnn_py.empty((12,), np.float32)[::2]
    got = aclnn_py.call("aclnnMaskedSelect", aclnn_py.to_device(np.arange(6, dtype=np.float32)),
                        aclnn_py.to_device(np.array([1, 0, 1, 1, 0, 1], np.bool_)), out=out)
    assert got.numpy().tolist() == [0.0, 2.0, 3.0, 5.0]


def test_a_mask_of_another_dtype_is_refused():
    with pytest.raises(aclnn_py.AclError, match="mask has dtype DT_FLOAT") as info:
        aclnn_py.call("aclnnMaskedSelect", np.ones(3, np.float32), np.ones(3, np.float32))
    assert info.value.status == PARAM_INVALID


def test_an_operator_of_unknown_output_size_needs_out():
    with pytest.raises(TypeError, match="aclnnNonzero: its outputs' extents depend on the data"):
        aclnn_py.call("aclnnNonzero", np.ones(3, np.float32))


@pytest.fixture
def user_kernels():
    before = dict(_kernels.table())
    yield
    for name in set(_kernels.KERNELS) - set(before):
        del _kernels.KERNELS[name]
        ll.register_kernel(name, False)
    _kernels.KERNELS.update(before)
    for name in before:
        ll.register_kernel(name)


@pytest.mark.emulator_only
@pytest.mark.parametrize("operator", sorted(_call.DATA_DEPENDENT))
def test_the_emulator_refreshes_every_such_operator_s_outputs_in_phase_2(user_kernels, operator):
    """call() reads the view shapes right after phase 2, before waiting for the stream: the
    shapes are real only if phase 2 waited, as CANN's launch of these operators does."""
    signature = aclnn_py.signature(operator)

    # aclnnNonzero's out is 2-d: (elements found, self's dims); the others' 1-d
    shape = (4, 1) if operator == "aclnnNonzero" else (4,)

    @aclnn_py.emulator.kernel(operator)
    def report_one_element(**arguments):
        for parameter in signature.parameters:
            if parameter.role == "output":
                aclnn_py.emulator.report_extent(arguments[parameter.name], (1, *shape[1:]))

    # a mask of a dtype the rules accept (aclnnMaskedSelect's: UINT8 or BOOL)
    arguments = [(np.ones(4, np.bool_) if p.name == "mask" else np.ones(4, np.float32))
                 if p.is_tensor else (0 if "int" in p.c_type else False)
                 for p in signature.parameters if p.role != "output"]
    # outputs of a dtype the phase-1 table accepts (aclnnNonzero's: INT64)
    accepted = dict(signature.dtypes)
    outputs = tuple(np.zeros(shape, _first_dtype(accepted.get(p.name, ("FLOAT",))))
                    for p in signature.parameters if p.role == "output")
    got = aclnn_py.call(operator, *arguments, out=outputs)
    for array in got if isinstance(got, tuple) else (got,):
        assert array.shape == (1, *shape[1:])


def _first_dtype(names: tuple[str, ...]) -> np.dtype:
    """The numpy dtype of the first of CANN's dtype names ``names`` numpy has."""
    for name in names:
        try:
            dtype = numpy_dtype(constant(f"ACL_{name}"))
        except KeyError:
            continue
        if dtype is not None:
            return dtype
    return np.dtype(np.float32)
