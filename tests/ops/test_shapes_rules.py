"""Phase 1 of the shapes family (concatenation, splitting, gathers and scatters, flips and rolls,
triangles, padding, ranges, sorting) as CANN's op_api sources check it, through
``aclnn_py.call`` on the emulator: refusals CANN makes (161002, naming the parameter), calls CANN
accepts that were refused before, and what the newly accepted calls compute, against PyTorch.
The rules come from ``tools/phase1_corrections/shapes.json`` and the kernels' own checks."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
pytestmark = pytest.mark.emulator_only

PARAM_INVALID = 161002


def _refused(name: str, match: str, *arguments: object, **keywords: object) -> None:
    with pytest.raises(aclnn_py.AclError, match=match) as info:
        aclnn_py.call(name, *arguments, **keywords)
    assert info.value.status == PARAM_INVALID
    assert f"{name}GetWorkspaceSize" in str(info.value)


# ---- refusals CANN makes --------------------------------------------------------------------


def test_tril_refuses_an_out_of_another_dtype():
    # ops-math conversion/tril/op_api/aclnn_tril.cpp CheckDtypeValid: out of self's dtype
    a = np.ones((3, 3), np.float32)
    _refused("aclnnTril", r"out has dtype DT_INT32 and self DT_FLOAT: they must have the same",
             a, 0, out=np.empty((3, 3), np.int32))


def test_cat_refuses_members_that_promote_to_complex128():
    # ops-math conversion/concat_d/op_api/aclnn_cat.cpp CheckPromoteType
    tensors = [np.ones((2, 2), np.complex64), np.ones((2, 2), np.float64)]
    _refused("aclnnCat", "promote to DT_COMPLEX128, which is not supported", tensors, 0,
             out=np.empty((4, 2), np.complex64))


@pytest.mark.parametrize("shifts, dims, match", [
    ([1, 2], [0], "shifts has 2 values and dims 1"),  # CheckArraySize
    ([1], [2], "dims holds 2, out of range for x of 2 dimensions"),  # CheckDimsRange
])
def test_roll_refuses_its_arrays_at_phase_1(shifts, dims, match):
    _refused("aclnnRoll", match, np.ones((2, 3), np.float32), shifts, dims)


def test_split_with_size_refuses_sizes_that_do_not_sum_to_the_extent():
    # ops-math conversion/split_v/op_api/aclnn_split_with_size.cpp CheckShape
    a = np.ones((5, 2), np.float32)
    _refused("aclnnSplitWithSize", r"splitSize \[2, 2\] sums to 4; it must sum to 5", a, [2, 2],
             0, out=[np.empty((2, 2), np.float32), np.empty((2, 2), np.float32)])


def test_constant_pad_nd_refuses_a_crop_below_zero():
    # ops-math conversion/pad_v3/op_api/aclnn_constant_pad_nd.cpp CheckShape
    _refused("aclnnConstantPadNd", r"crops dimension 1 \(extent 3\) below 0",
             np.ones((2, 3), np.float32), [-2, -2], 0.0, out=np.empty((2, 0), np.float32))


# ---- calls CANN accepts, refused before -----------------------------------------------------


def test_flip_takes_a_0d_self():
    # ops-nn index/reverse_v2/op_api/aclnn_flip.cpp: no lower bound on self's rank
    got = aclnn_py.call("aclnnFlip", np.array(3.5, np.float32), [0])
    assert got.shape == () and float(got) == 3.5


def test_gather_v2_takes_a_0d_index():
    # ops-nn index/gather_v2/op_api/aclnn_gather_v2.cpp CheckOutShape: a 0-d index is one
    # element; UT l2_gather_v2_index_0_dim expects success
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = aclnn_py.call("aclnnGatherV2", a, 1, np.array(2, np.int64),
                        out=np.empty((3, 1), np.float32))
    np.testing.assert_array_equal(got, a[:, 2:3])


def test_linspace_takes_steps_0_and_an_int64_out():
    # ops-math math/lin_space/op_api/aclnn_linspace.cpp: no not-empty rule, INT64 on 910B
    empty = aclnn_py.call("aclnnLinspace", 0.0, 1.0, 0, out=np.empty((0,), np.float32))
    assert empty.shape == (0,)
    got = aclnn_py.call("aclnnLinspace", -3.0, 7.0, 6, out=np.empty((6,), np.int64))
    np.testing.assert_array_equal(got, torch.linspace(-3.0, 7.0, 6, dtype=torch.int64).numpy())


def test_linspace_into_int32_converts_start_and_end_first():
    # aclnn_linspace.cpp converts start and end to out's dtype before computing, as PyTorch
    got = aclnn_py.call("aclnnLinspace", -3.0, 7.5, 6, out=np.empty((6,), np.int32))
    np.testing.assert_array_equal(got, torch.linspace(-3.0, 7.5, 6, dtype=torch.int32).numpy())


def test_sort_takes_a_tensor_of_more_than_8_dimensions():
    # ops-math math/sort/op_api/aclnn_sort.cpp: no rank limit (UT l2_sort_test_25 expects success)
    rng = np.random.default_rng(3)
    a = rng.permutation(2**9).astype(np.float32).reshape((2,) * 9)
    values, indices = aclnn_py.call("aclnnSort", a, True, -1, True,
                                    out=(np.empty_like(a), np.empty(a.shape, np.int64)))
    expected = torch.sort(torch.from_numpy(a), dim=-1, descending=True, stable=True)
    np.testing.assert_array_equal(values, expected.values.numpy())
    np.testing.assert_array_equal(indices, expected.indices.numpy())


def test_constant_pad_nd_crops_with_negative_widths_as_pytorch():
    # CheckShape accepts a negative width that leaves the dimension's extent >= 0
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    got = aclnn_py.call("aclnnConstantPadNd", a, [-1, 2, 1, -3], 9.0,
                        out=np.empty((2, 6), np.float32))
    expected = torch.nn.functional.pad(torch.from_numpy(a), (-1, 2, 1, -3), value=9.0)
    np.testing.assert_array_equal(got, expected.numpy())


def test_stack_takes_0d_members():
    # ops-math conversion/pack/op_api/aclnn_stack.cpp: tensors of any rank up to 8
    got = aclnn_py.call("aclnnStack", [np.float32(1.5), np.float32(-2.0)], 0,
                        out=np.empty((2,), np.float32))
    np.testing.assert_array_equal(got, [1.5, -2.0])


def test_argsort_refuses_a_bfloat16_self_of_extent_1_along_dim():
    # ops-math math/sort/op_api/aclnn_argsort.cpp CheckDimValid: off RegBase (Atlas A2 here)
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="pip install ml_dtypes")
    a = np.ones((3, 1), ml_dtypes.bfloat16)
    _refused("aclnnArgsort", "self is bfloat16 with extent 1 along dim 1", a, 1, False,
             out=np.empty((3, 1), np.int64))
    got = aclnn_py.call("aclnnArgsort", a, 0, False, out=np.empty((3, 1), np.int64))
    assert got.tolist() == [[0], [1], [2]]
