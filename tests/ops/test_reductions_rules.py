"""The reductions family on the emulator: phase 1 as CANN's op_api sources check it (the rules
of ``tools/phase1_corrections/reductions.json`` and the kernels' checks), and the numbers of
what CANN accepts there against PyTorch.

Each case cites the hicann source or unit test (``**/tests/ut/**/test_aclnn_*.cpp``) it
follows.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from conftest import LowLevelResources

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py._c._ffi import ffi
from aclnn_py.emulator import _kernels
from aclnn_py.ops import catalog
from aclnn_py.testing import assert_close

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
pytestmark = pytest.mark.emulator_only

PARAM_INVALID, PARAM_NULLPTR, INNER_NULLPTR = 161002, 161001, 561103


def refused(name: str, *args: Any, **kwargs: Any) -> aclnn_py.AclError:
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.call(name, *args, **kwargs)
    return info.value


ACL_DTYPES = {np.dtype(np.float32): "ACL_FLOAT", np.dtype(np.float16): "ACL_FLOAT16",
              np.dtype(ml_dtypes.bfloat16): "ACL_BF16", np.dtype(np.float64): "ACL_DOUBLE",
              np.dtype(np.int64): "ACL_INT64", np.dtype(np.int32): "ACL_INT32"}


class Calls(LowLevelResources):
    """Calls through the low-level layer, where a tensor aclnn_py.call requires (its name does
    not end in Optional) may be NULL, as CANN's C API lets it be: ``None`` passes NULL."""

    def __init__(self) -> None:
        super().__init__()
        self.arrays: list[Any] = []

    def tensor(self, array: Any) -> Any:
        if array is None:
            return ll.NULL
        array = np.array(array, order="C")
        pointer = ll.malloc(max(array.nbytes, 1))
        self.pointers.append(pointer)
        if array.nbytes:
            ll.memcpy(pointer, array.nbytes, ffi.from_buffer(array), array.nbytes,
                      ll.MEMCPY_HOST_TO_DEVICE)
        strides = tuple(int(np.prod(array.shape[i + 1:])) for i in range(array.ndim))
        handle = ll.create_tensor(array.shape, ll.constant(ACL_DTYPES[array.dtype]), strides,
                                  0, array.shape, pointer)
        self.tensors.append(handle)
        return handle

    def bools(self, values: list[bool]) -> Any:
        array = ll.create_bool_array(values)
        self.arrays.append((ll.destroy_bool_array, array))
        return array

    def read(self, handle: Any, like: np.ndarray) -> np.ndarray:
        result = np.empty_like(like)
        pointer = self.pointers[self.tensors.index(handle)]
        ll.memcpy(ffi.from_buffer(result, require_writable=True), result.nbytes, pointer,
                  result.nbytes, ll.MEMCPY_DEVICE_TO_HOST)
        return result

    def run(self, operator: str, *arguments: Any) -> None:
        """Both phases, synchronised."""
        _kernels.install_once()
        library = str(catalog.bind(catalog.signature(operator)))
        size, executor = ll.operator_workspace_size(operator, *arguments, library=library)
        workspace = ll.malloc(size) if size else ll.NULL
        try:
            ll.operator_launcher(operator, library)(workspace, size, executor, self.stream)
            ll.synchronize_stream(self.stream)
        finally:
            if size:
                ll.free(workspace)

    def release(self) -> None:
        for destroy, array in self.arrays:
            destroy(array)
        super().release()


@pytest.fixture
def c(device: Any) -> Any:
    calls = Calls()
    yield calls
    calls.release()


def rand(shape: tuple[int, ...], dtype: Any = np.float32, low: float = -2.0,
         high: float = 2.0, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng([seed, *shape])
    return rng.uniform(low, high, shape).astype(dtype)


# ---- refusals CANN makes (161002 naming the parameter) -------------------------------------


def test_reduce_sum_refuses_a_dtype_out_does_not_have():
    # ops-math reduce_sum UT l2_reduce_sum_test_self_float32_dtype_int32; aclnn_reduce_sum.cpp
    # CheckDtypeValid: out's dtype is dtype's
    error = refused("aclnnReduceSum", rand((2, 3)), dims=[0], keepDims=False, dtype=np.int32,
                    out=np.empty(3, np.float32))
    assert error.status == PARAM_INVALID
    assert "dtype has dtype DT_INT32 and out DT_FLOAT" in error.message


def test_amax_refuses_more_than_eight_dimensions():
    # ops-math reduce_max UT l2_amax_test_dimension
    x = np.ones((2, 2) + (1,) * 8, np.float32)
    error = refused("aclnnAmax", x, dim=[0], keepDim=True,
                    out=np.empty((1, 2) + (1,) * 8, np.float32))
    assert error.status == PARAM_INVALID and "self has 10 dimensions" in error.message


def test_softmax_backward_refuses_a_dim_out_of_range():
    # ops-nn softmax_grad UT case_013_dim_invalid; aclnn_softmax_backward.cpp CheckDim
    g = rand((2, 3))
    error = refused("aclnnSoftmaxBackward", g, g, 2, out=np.empty((2, 3), np.float32))
    assert error.status == PARAM_INVALID
    assert "dim 2 is out of range for gradOutput" in error.message


def test_nll_loss_refuses_a_weight_of_another_dtype():
    # ops-nn nll_loss UT case_016; aclnn_nll_loss.cpp CheckDtypeValid
    error = refused("aclnnNLLLoss", rand((1, 7)), np.zeros(1, np.int64),
                    np.ones(7, np.float16), 0, -100,
                    out=(np.empty(1, np.float32), np.empty((), np.float32)))
    assert error.status == PARAM_INVALID
    assert "weight has dtype DT_FLOAT16 and self DT_FLOAT" in error.message


def test_batch_norm_refuses_a_saved_mean_of_another_size():
    # ops-nn batch_norm_v3 UT ascend910B2_l2_batch_norm_error_mean_shape
    x, ones = rand((3, 5, 3, 8)), np.ones(5, np.float32)
    error = refused("aclnnBatchNorm", x, ones, ones, ones, ones, True, 0.1, 1e-5,
                    out=(np.empty_like(x), np.empty(6, np.float32), np.empty(5, np.float32)))
    assert error.status == PARAM_INVALID and "saveMean has shape (6,)" in error.message


def test_group_norm_backward_refuses_an_output_mask_of_two_values():
    # ops-nn group_norm_grad UT Ascend950PR_9599_case_float_normal (an empty mask)
    x = rand((2, 3, 4))
    error = refused("aclnnGroupNormBackward", x, x, rand((2, 1)), rand((2, 1)), rand((3,)),
                    2, 3, 4, 1, [True, True],
                    out=(np.empty_like(x), np.empty(3, np.float32), np.empty(3, np.float32)))
    assert error.status == PARAM_INVALID and "outputMask has 2 values" in error.message


def test_binary_cross_entropy_refuses_a_null_self_with_inner_nullptr(c):
    # ops-nn binary_cross_entropy UT case_nullptr_1 expects ACLNN_ERR_INNER_NULLPTR
    t = rand((2, 2), low=0, high=1)
    with pytest.raises(aclnn_py.AclError) as info:
        c.run("aclnnBinaryCrossEntropy", ll.NULL, c.tensor(t), c.tensor(t), 0, c.tensor(t))
    assert info.value.status == INNER_NULLPTR and "self is NULL" in info.value.message


def test_batch_norm_needs_the_saved_statistics_in_training_only(c):
    # aclnn_batch_norm.cpp CheckNotNull: training needs saveMean; ops-nn batch_norm_v3 UT
    # l2_batch_norm_infer_empty_input_null_save_mean_var: inference takes them NULL
    x, ones = rand((2, 3, 4)), np.ones(3, np.float32)
    with pytest.raises(aclnn_py.AclError) as info:
        c.run("aclnnBatchNorm", c.tensor(x), ll.NULL, ll.NULL, ll.NULL, ll.NULL, True, 0.1,
              1e-5, c.tensor(x), ll.NULL, c.tensor(ones))
    assert info.value.status == PARAM_NULLPTR and "saveMean is NULL" in info.value.message
    c.run("aclnnBatchNorm", c.tensor(x), c.tensor(ones), c.tensor(ones), c.tensor(ones * 0),
          c.tensor(ones), False, 0.1, 1e-5, c.tensor(x), ll.NULL, ll.NULL)


# ---- acceptances CANN makes --------------------------------------------------------------


def test_softmax_of_an_empty_self_accepts_any_out_and_writes_nothing(c):
    # ops-nn softmax_v2 UT case_010_emptytensor_normal (self [2, 0], out [2, 3])
    out = np.full((2, 3), 7, np.float32)
    handle = c.tensor(out)
    c.run("aclnnSoftmax", c.tensor(np.empty((2, 0), np.float32)), 1, handle)
    assert (c.read(handle, out) == 7).all()


def test_layer_norm_backward_takes_a_null_output_the_mask_does_not_ask_for(c):
    # ops-nn layer_norm_grad_v3 UT ascend910B2_aclnnLayerNormBackward_output_mask_second_false
    x, g, w = rand((4, 6)), rand((4, 6), seed=1), rand((6,), low=0.5)
    xt = torch.from_numpy(x)
    mean = xt.mean(1, keepdim=True)
    rstd = 1 / torch.sqrt(xt.var(1, unbiased=False, keepdim=True) + 1e-5)
    grad_input, grad_bias = c.tensor(np.empty_like(x)), c.tensor(np.empty_like(w))
    shape = ll.create_int_array([6])
    c.arrays.append((ll.destroy_int_array, shape))
    c.run("aclnnLayerNormBackward", c.tensor(g), c.tensor(x), shape, c.tensor(mean.numpy()),
          c.tensor(rstd.numpy()), c.tensor(w), ll.NULL, c.bools([True, False, True]),
          grad_input, ll.NULL, grad_bias)
    expected = torch.ops.aten.native_layer_norm_backward(
        torch.from_numpy(g), xt, [6], mean, rstd, torch.from_numpy(w), torch.from_numpy(w),
        [True, False, True])
    assert_close(c.read(grad_input, x), expected[0].numpy())
    assert_close(c.read(grad_bias, w), expected[2].numpy())


def test_std_with_a_null_dim_reduces_every_dimension(c):
    # ops-math reduce_std_v2 UT normal_dim_nullptr
    x, out = rand((2, 3, 4)), np.empty((), np.float32)
    handle = c.tensor(out)
    c.run("aclnnStd", c.tensor(x), ll.NULL, 1, False, handle)
    assert_close(c.read(handle, out), torch.std(torch.from_numpy(x)).numpy())


def test_group_norm_without_gamma_and_beta_matches_pytorch(c):
    # ops-nn experimental group_norm UT group_norm_normal_float32_without_gamma_beta
    x, stats = rand((2, 4, 3)), np.empty((2, 2), np.float32)
    out = c.tensor(np.empty_like(x))
    c.run("aclnnGroupNorm", c.tensor(x), ll.NULL, ll.NULL, 2, 4, 3, 2, 1e-5, out,
          c.tensor(stats), c.tensor(stats))
    expected = torch.nn.functional.group_norm(torch.from_numpy(x), 2)
    assert_close(c.read(out, x), expected.numpy())


def test_batch_norm_inference_with_null_parameters_uses_cann_s_defaults(c):
    # aclnn_batch_norm.cpp BatchNorm: a NULL weight is 1, bias 0, runningMean 0, runningVar 1
    x = rand((2, 3, 4))
    out = c.tensor(np.empty_like(x))
    c.run("aclnnBatchNorm", c.tensor(x), ll.NULL, ll.NULL, ll.NULL, ll.NULL, False, 0.1, 1e-5,
          out, ll.NULL, ll.NULL)
    expected = torch.nn.functional.batch_norm(torch.from_numpy(x), torch.zeros(3),
                                              torch.ones(3), None, None, False, 0.1, 1e-5)
    assert_close(c.read(out, x), expected.numpy())


def test_batch_norm_backward_with_a_null_weight_matches_pytorch(c):
    # ops-nn batch_norm_grad_v3 UT l2_batch_norm_backward_err_int32 reaches the dtype check
    # with weight NULL; BatchNormBackward uses ones
    x, g = rand((2, 3, 4)), rand((2, 3, 4), seed=1)
    xt = torch.from_numpy(x)
    mean, invstd = xt.mean((0, 2)), 1 / torch.sqrt(xt.var((0, 2), unbiased=False) + 1e-5)
    likes = (x, np.empty(3, np.float32), np.empty(3, np.float32))
    outs = [c.tensor(np.empty_like(like)) for like in likes]
    c.run("aclnnBatchNormBackward", c.tensor(g), c.tensor(x), ll.NULL, ll.NULL, ll.NULL,
          c.tensor(mean.numpy()), c.tensor(invstd.numpy()), True, 1e-5,
          c.bools([True, True, True]), *outs)
    expected = torch.ops.aten.native_batch_norm_backward(
        torch.from_numpy(g), xt, None, None, None, mean, invstd, True, 1e-5, [True, True, True])
    for handle, like, reference in zip(outs, likes, expected):
        assert_close(c.read(handle, like), reference.numpy())


# ---- the numbers of the dtypes CANN accepts ------------------------------------------------


def test_norm_of_a_float64_self_matches_pytorch():
    # ops-nn lp_norm_v2 UT case_3_3_2_4_p2_4dim_double_ND_24: Atlas A2 casts to float
    x = rand((3, 4), np.float64)
    out = np.empty(3, np.float64)
    aclnn_py.call("aclnnNorm", x, 2.0, [1], False, out=out)
    np.testing.assert_allclose(out, torch.norm(torch.from_numpy(x), 2, 1).numpy(), rtol=1e-6)


def test_linalg_vector_norm_of_an_int32_self_matches_pytorch():
    # ops-nn lp_norm_v2 UT case_self_int32
    x = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    out = np.empty(4, np.float32)
    aclnn_py.call("aclnnLinalgVectorNorm", x, 1.0, [0], False, np.float32, out=out)
    expected = torch.linalg.vector_norm(torch.from_numpy(x).float(), 1, 0)
    assert_close(out, expected.numpy())


def test_reduce_sum_casts_self_to_dtype_before_summing():
    # aclnn_reduce_sum.cpp casts self to dtype, then sums (PyTorch's sum(dtype=) does too)
    x = np.array([[1.7, 2.6], [-0.9, 3.5]], np.float32)
    out = np.empty(2, np.int32)
    aclnn_py.call("aclnnReduceSum", x, dims=[0], keepDims=False, dtype=np.int32, out=out)
    expected = torch.sum(torch.from_numpy(x).to(torch.int32), 0, dtype=torch.int32)
    np.testing.assert_array_equal(out, expected.numpy())


def test_cumsum_of_a_bool_self_into_float_matches_pytorch():
    # aclnn_cumsum.cpp checks out's dtype only and casts self to it
    x = np.array([[True, False, True], [True, True, False]])
    out = np.empty((2, 3), np.float32)
    aclnn_py.call("aclnnCumsum", x, 1, np.float32, out=out)
    expected = torch.cumsum(torch.from_numpy(x), 1, dtype=torch.float32)
    np.testing.assert_array_equal(out, expected.numpy())


def test_dot_refuses_inputs_of_two_dtypes():
    # ops-math dot UT l2_dot_abnormal_dtype_self_other_unequal; aclnn_dot.cpp CheckDtypeValid
    error = refused("aclnnDot", np.ones(3, np.int32), np.ones(3, np.float32),
                    out=np.empty((), np.int32))
    assert error.status == PARAM_INVALID
    assert "tensor has dtype DT_FLOAT and self DT_INT32" in error.message


def test_log_softmax_backward_into_a_float64_out_matches_pytorch():
    # ops-nn log_softmax_grad UT case_008_diff_in_out_dtype_normal (out DOUBLE)
    g = rand((3, 5))
    y = torch.log_softmax(torch.from_numpy(rand((3, 5), seed=1)), 1)
    out = np.empty((3, 5), np.float64)
    aclnn_py.call("aclnnLogSoftmaxBackward", g, y.numpy(), 1, out=out)
    expected = torch.ops.aten._log_softmax_backward_data(torch.from_numpy(g), y, 1,
                                                          torch.float32)
    np.testing.assert_allclose(out, expected.double().numpy(), rtol=1e-5, atol=1e-6)
