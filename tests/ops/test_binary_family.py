"""The binary family on the emulator (arithmetic, comparisons, logical operators, clamp, fills,
cast and copy): phase 1 as CANN's op_api sources check it on Atlas A2 (hicann/ops-math, each
test names its source), and the numbers of the dtypes it accepts, against PyTorch CPU where
PyTorch defines them and against the operator's formula where it does not.
"""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py.emulator._kernels import promotion
from aclnn_py.errors import AclError
from aclnn_py.ops.dtypes import dtype_named

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
pytestmark = pytest.mark.emulator_only

PARAM_INVALID = 161002
RNG = np.random.default_rng(7)


def refused(operator: str, *arguments, **keywords) -> AclError:
    with pytest.raises(AclError) as info:
        aclnn_py.call(operator, *arguments, **keywords)
    return info.value


def values(dtype, shape) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


# ---- refusals CANN makes: 161002, the parameter named ---------------------------------------


def test_minimum_refuses_more_than_8_dimensions():
    # OP_CHECK_MAX_DIM(self, 8): math/minimum/op_api/aclnn_minimum.cpp CheckShape
    x = np.zeros((1,) * 9, np.float32)
    error = refused("aclnnMinimum", x, x, out=np.zeros_like(x))
    assert error.status == PARAM_INVALID and "self has 9 dimensions" in error.message


def test_sub_refuses_an_alpha_its_promoted_dtype_cannot_hold():
    # alpha must cast to the promoted dtype: a float alpha with int32 tensors is refused
    # (math/sub/op_api/aclnn_sub.cpp CheckPromoteType); a bool tensor with a uint64 scalar has
    # no promoted dtype at all (PromoteTypeScalar, then opbase's PromoteType)
    x = np.zeros(3, np.int32)
    error = refused("aclnnSub", x, x, np.float32(0.5), out=np.zeros(3, np.int32))
    assert error.status == PARAM_INVALID and "alpha has dtype DT_FLOAT" in error.message
    error = refused("aclnnSubs", np.zeros(3, bool), np.uint64(1), 1, out=np.zeros(3, np.int64))
    assert error.status == PARAM_INVALID and "self (DT_BOOL) and other (DT_UINT64)" in error.message


def test_pow_refuses_two_bool_tensors_and_lerp_mixed_dtypes():
    flags = np.ones(4, bool)
    error = refused("aclnnPowTensorTensor", flags, flags, out=np.zeros(4, np.float32))
    assert error.status == PARAM_INVALID and "both DT_BOOL" in error.message
    half, single = np.ones(3, np.float16), np.ones(3, np.float32)
    error = refused("aclnnLerp", half, single, half, out=np.zeros(3, np.float16))
    assert error.status == PARAM_INVALID and "end has dtype DT_FLOAT" in error.message


def test_fill_refuses_a_value_that_does_not_promote_with_self():
    # uint32 is in aclnnInplaceFillScalar's list, but it promotes with a float with nothing
    # (conversion/fill/op_api/aclnn_fill_scalar.cpp CheckPromoteType)
    error = refused("aclnnInplaceFillScalar", np.zeros(3, np.uint32), np.float32(1.5))
    assert error.status == PARAM_INVALID
    assert "selfRef (DT_UINT32) and value (DT_FLOAT)" in error.message


# ---- acceptances CANN makes ----------------------------------------------------------------


def test_comparisons_with_an_empty_input_accept_any_out():
    # math/not_equal/op_api/aclnn_ne_tensor.cpp and less_equal/op_api/aclnn_le_tensor.cpp
    # return before their other checks (their kernel writes nothing)
    empty = np.zeros((2, 0), np.int8)
    for operator in ("aclnnNeTensor", "aclnnLeTensor"):
        assert aclnn_py.call(operator, empty, empty, out=np.empty((2, 3), np.int8)).shape == (2, 3)
    error = refused("aclnnEqTensor", empty, empty, out=np.empty((2, 3), bool))  # not all do
    assert error.status == PARAM_INVALID and "out has shape [2, 3]" in error.message


def test_contiguous_views_of_any_rank_and_scalars_of_any_dtype_are_accepted():
    deep = np.ones((1,) * 9 + (2,), np.float32)
    assert aclnn_py.call("aclnnLogicalNot", deep, out=np.ones(deep.shape, bool)).sum() == 0
    # a float32 tensor keeps its dtype whatever the scalar's (math/add/op_api/aclnn_add.cpp)
    x = np.arange(3, dtype=np.float32)
    assert aclnn_py.call("aclnnAdds", x, np.uint64(2), np.uint8(3)).tolist() == [6, 7, 8]
    # value is converted to selfRef's dtype, whatever its own
    filled = np.zeros(3, np.float32)
    aclnn_py.call("aclnnInplaceMaskedFillScalar", filled, np.array([1, 0, 1], bool),
                  np.float64(2.5))
    assert filled.tolist() == [2.5, 0, 2.5]


# ---- numbers of the dtypes newly accepted ----------------------------------------------------


ADD_CASES = [  # self, other, alpha, out
    (np.int8, np.int8, 3, np.int8), (np.uint8, np.uint8, 7, np.uint8),
    (np.int16, np.int16, -2, np.int16), (np.int32, np.int32, 2, np.int64),
    (np.int64, np.int64, 5, np.int64), (np.int8, np.uint8, 2, np.int16),
    (np.float64, np.float64, 0.3, np.float64), (np.int32, np.float64, 2, np.float64),
    (np.complex64, np.complex64, np.complex64(1.5 - 0.5j), np.complex64),
    (np.complex128, np.complex128, np.complex128(2 + 1j), np.complex128),
    (np.float32, np.complex64, 1, np.complex64), (np.bool_, np.int32, 3, np.int32),
]


@pytest.mark.parametrize("case", ADD_CASES, ids=lambda c: "-".join(np.dtype(d).name for d in
                                                                    (c[0], c[1], c[3])))
def test_add_computes_every_dtype_cann_accepts_as_pytorch(case):
    first, second, alpha, out_dtype = case
    x, y = values(first, (3, 4)), values(second, (4,))
    got = aclnn_py.call("aclnnAdd", x, y, alpha, out=np.empty((3, 4), out_dtype))
    number = complex(alpha) if np.iscomplexobj(alpha) else alpha
    expected = torch.add(torch.from_numpy(x), torch.from_numpy(y), alpha=number).numpy()
    if np.dtype(out_dtype).kind in "iu":
        assert np.array_equal(got, expected.astype(out_dtype))  # wrapped as PyTorch wraps
    else:
        np.testing.assert_allclose(got, expected.astype(out_dtype), rtol=1e-6)


def test_add_of_bools_is_a_logical_or_and_in_place_wraps():
    x, y = np.array([True, False, False, True]), np.array([True, True, False, False])
    # alpha 2 becomes true: self or (other and alpha) (math/add/op_api/aclnn_add.cpp, the bool
    # Mul and Add of its graph)
    assert aclnn_py.call("aclnnAdd", x, y, 2, out=np.empty(4, bool)).tolist() == \
        [True, True, False, True]
    z = np.array([120, -128], np.int8)
    aclnn_py.call("aclnnInplaceAdd", z, np.array([10, -1], np.int8), 1)
    assert z.tolist() == (torch.tensor([120, -128], dtype=torch.int8) +
                          torch.tensor([10, -1], dtype=torch.int8)).tolist()


def test_divisions_and_atan2_of_integers_compute_in_float():
    a, b = np.array([1, 7, -9, 2**30 + 1], np.int32), np.array([2, 2, 4, 3], np.int32)
    expected = torch.div(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    got = aclnn_py.call("aclnnDiv", a, b, out=np.empty(4, np.float32))
    assert np.array_equal(got, expected)
    got = aclnn_py.call("aclnnDivs", a, np.int32(2), out=np.empty(4, np.float32))
    assert np.array_equal(got, torch.from_numpy(a).div(2).numpy())
    i, j = np.array([1, 0, -3], np.int64), np.array([1, 1, 0], np.int16)
    got = aclnn_py.call("aclnnAtan2", i, j, out=np.empty(3, np.float32))
    np.testing.assert_allclose(got, torch.atan2(torch.from_numpy(i), torch.from_numpy(j)).numpy(),
                               rtol=1e-6)
    assert aclnn_py.call("aclnnAtan2", i, j, out=np.empty(3, bool)).tolist() == [True, False, True]


def test_a_tensor_with_a_double_scalar_computes_as_cann_promotes_them():
    # int32 with a double scalar promotes to float64 (PromoteTypeScalar of math/add/op_api/
    # aclnn_add.cpp): the sum is exact in an float64 out
    x = np.array([16777217], np.int32)
    got = aclnn_py.call("aclnnAdds", x, np.float64(0.5), 1, out=np.empty(1, np.float64))
    assert got.tolist() == [16777217.5]
    same = aclnn_py.call("aclnnEqTensor", np.array([1 + 2j], np.complex64),
                         np.array([1 + 2j, 1 - 2j], np.complex128), out=np.empty(2, bool))
    assert same.tolist() == [True, False]


# ---- opbase's PromoteType, in C and in Python -----------------------------------------------

FILL = ["float32", "int32", "int64", "float16", "int16", "int8", "uint8", "float64", "bool",
        "complex64", "complex128", "bfloat16", "uint16", "uint32", "uint64"]


def test_the_python_promotion_table_is_the_emulators():
    """aclnnInplaceFillScalar's rule promote(selfRef, value) runs the C table; the kernels'
    inference runs promotion.promote_type: they agree on every pair numpy has."""
    for name in FILL:
        for value_name in FILL:
            target = np.zeros(1, dtype_named(name))
            value = np.ones(1, dtype_named(value_name))[0]
            expected = promotion.promote_type(target.dtype, value.dtype) is not None
            try:
                aclnn_py.call("aclnnInplaceFillScalar", target, value)
                accepted = True
            except AclError as error:
                assert error.status == PARAM_INVALID
                accepted = False
            assert accepted == expected, (name, value_name)


def test_sub_of_bools_is_a_xor_and_their_floor_division_is_in_float():
    # |a - b| (math/sub/op_kernel/arch35/sub_dag.h SubBoolCompute); FloorDivide casts bools to
    # float32 (math/floor_div/op_api/aclnn_floor_divide.cpp CalcFloorDivide)
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert aclnn_py.call("aclnnSub", a, b, 1, out=np.empty(4, bool)).tolist() == \
        np.logical_xor(a, b).tolist()
    got = aclnn_py.call("aclnnFloorDivide", a, b, out=np.empty(4, np.float32))
    expected = torch.floor_divide(torch.from_numpy(a).float(), torch.from_numpy(b).float())
    np.testing.assert_array_equal(got, expected.numpy())
