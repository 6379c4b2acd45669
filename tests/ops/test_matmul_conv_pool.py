"""The matmul, convolution and pooling operators on the emulator, against CANN's own rules.

What phase 1 refuses and accepts is what hicann ops-nn's op_api sources of these operators
check (each test names the source and, where there is one, the unit test case of CANN's that
shows it); the numbers of what it accepts are PyTorch's. aclnnConvolution and aclnnAvgPool2d
take NCL/NCHW/NCDHW tensors only: aclnn_py.call describes its tensors so by rank, as torch_npu
does; ``helpers.call_formatted`` makes tensors of any other format.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import call_formatted

import aclnn_py
from aclnn_py.testing import assert_close

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
F = torch.nn.functional
pytestmark = pytest.mark.emulator_only

PARAM_INVALID = 161002


def rand(*shape: int, dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape)).uniform(-2, 2, shape).astype(dtype)


def refused(name: str, *args: Any, **kwargs: Any) -> aclnn_py.AclError:
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.call(name, *args, **kwargs)
    return info.value


def refused_formatted(name: str, fmt: str, out: dict[str, np.ndarray],
                      **arguments: Any) -> aclnn_py.AclError:
    with pytest.raises(aclnn_py.AclError) as info:
        call_formatted(name, fmt, out, **arguments)
    return info.value


# ---- the matmul family ----------------------------------------------------------------------


def test_matmul_reshapes_the_product_to_out_as_cann_does():
    # aclnn_matmul.cpp checks no rank of out: the product is reshaped to it
    # (CommonPostProcessWithReshape); UT test_aclnn_matmul.cpp test_dot_fp16_d1_d1 gives a dot
    # product an out of [1] and expects ACLNN_SUCCESS. Its batch dims broadcast, not all dims.
    a, b = rand(6), rand(6, seed=1)
    result = aclnn_py.call("aclnnMatmul", a, b, cubeMathType=0, out=np.empty((1,), np.float32))
    assert_close(result, np.array([np.dot(a, b)], np.float32))
    a, b = rand(3, 1, 2, 5), rand(4, 5, 3)
    result = aclnn_py.call("aclnnMatmul", a, b, cubeMathType=1,
                           out=np.empty((3, 4, 2, 3), np.float32))
    assert_close(result, torch.matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy())


def test_matmul_s_product_that_does_not_fit_out_fails_as_cann_s_reshape_does():
    # ops-math conversion/reshape/op_api/reshape.cpp: a different number of elements fails,
    # and aclnn_matmul.cpp returns ACLNN_ERR_INNER_NULLPTR (561103).
    error = refused("aclnnMatmul", rand(2, 3), rand(3, 4), cubeMathType=0,
                    out=np.empty((2, 5), np.float32))
    assert error.status == 561103 and "out has shape [2, 5]" in error.message


def test_the_matmul_family_takes_cube_math_types_minus_1_to_4():
    # matmul/common/op_host/op_api/cube_util.cpp CheckCubeMathType: any other value is
    # ACLNN_ERR_PARAM_INVALID; -1 (FP16FP32_KEEP_DTYPE) is known on an Atlas A2.
    error = refused("aclnnMm", rand(2, 3), rand(3, 4), cubeMathType=5,
                    out=np.empty((2, 4), np.float32))
    assert error.status == PARAM_INVALID and "cubeMathType is 5" in error.message
    result = aclnn_py.call("aclnnMm", rand(2, 3), rand(3, 4), cubeMathType=-1,
                           out=np.empty((2, 4), np.float32))
    assert_close(result, rand(2, 3) @ rand(3, 4))


def test_mv_refuses_a_vec_of_another_dtype_than_a_non_empty_self():
    # aclnn_mv.cpp CheckDtypeSame; UT test_aclnn_mv.cpp l2_mv_test_04 expects
    # ACLNN_ERR_PARAM_INVALID, l2_mv_test_06 ACLNN_SUCCESS for an empty self.
    error = refused("aclnnMv", rand(3, 4, dtype=np.float16), rand(4), cubeMathType=1,
                    out=np.empty((3,), np.float32))
    assert error.status == PARAM_INVALID and "self has dtype float16 and vec float32" \
        in error.message
    result = aclnn_py.call("aclnnMv", np.empty((3, 0), np.float16), np.empty((0,), np.float32),
                           cubeMathType=1, out=np.full((3,), 7, np.float32))
    np.testing.assert_array_equal(result, np.zeros(3, np.float32))


def test_addmm_checks_the_k_axis_at_phase_1_and_leaves_self_out_when_beta_is_0():
    # aclnn_addmm.cpp CheckMatmul; UT test_aclnn_addmm.cpp case_cannot_matmul expects
    # ACLNN_ERR_PARAM_INVALID. CreateAddmmGraphImpl: beta 0 computes alpha * mat1 @ mat2 only.
    error = refused("aclnnAddmm", rand(3, 4), rand(3, 5), rand(6, 4), beta=1.0, alpha=1.0,
                    cubeMathType=0, out=np.empty((3, 4), np.float32))
    assert error.status == PARAM_INVALID and "k-axis of mat1 [3, 5] and mat2 [6, 4]" \
        in error.message
    mat1, mat2 = rand(3, 5), rand(5, 4)
    result = aclnn_py.call("aclnnAddmm", np.full((3, 4), np.nan, np.float32), mat1, mat2,
                           beta=0.0, alpha=2.0, cubeMathType=0, out=np.empty((3, 4), np.float32))
    assert_close(result, 2 * (mat1 @ mat2))


def test_baddbmm_writes_float16_products_into_a_float32_out():
    # aclnn_baddbmm.cpp checks each dtype against the list, not self's against out's; UT
    # test_aclnn_baddbmm.cpp baddbmm_16in32out_fp16_fp16_fp32_use_hf32 expects ACLNN_SUCCESS.
    self, batch1, batch2 = (rand(2, 3, 4, dtype=np.float16), rand(2, 3, 5, dtype=np.float16),
                            rand(2, 5, 4, dtype=np.float16))
    result = aclnn_py.call("aclnnBaddbmm", self, batch1, batch2, beta=0.5, alpha=2.0,
                           cubeMathType=3, out=np.empty((2, 3, 4), np.float32))
    expected = torch.baddbmm(*(torch.from_numpy(a).float() for a in (self, batch1, batch2)),
                             beta=0.5, alpha=2.0)
    assert_close(result, expected.numpy())


# ---- convolution ------------------------------------------------------------------------


def _conv(x: np.ndarray, w: np.ndarray, bias: Any, out_shape: tuple[int, ...], fmt: str,
          **attributes: Any) -> np.ndarray:
    out = np.empty(out_shape, np.float32)
    call_formatted("aclnnConvolution", fmt, {"output": out}, input=x, weight=w, bias=bias,
                   cubeMathType=0, **attributes)
    return out


def test_convolution_refuses_nd_tensors_as_cann_s_format_checker_does():
    # aclnn_convolution.cpp FormatChecker::CheckConv2d: a 4-d input is NCHW. UT
    # test_aclnn_convolution.cpp test_conv2D_NHWC expects an error.
    error = refused_formatted("aclnnConvolution", "ND", {"output": np.empty((1, 4, 5, 5),
                                                                           np.float32)},
                              input=rand(1, 2, 5, 5), weight=rand(4, 2, 3, 3), bias=rand(4),
                              stride=[1, 1], padding=[1, 1], dilation=[1, 1], transposed=False,
                              outputPadding=[0, 0], groups=1, cubeMathType=0)
    assert error.status == PARAM_INVALID and "input has format ND" in error.message \
        and "NCHW" in error.message


def test_call_takes_convolution_and_avg_pool_arrays_and_the_null_bias_their_doc_allows():
    # call describes a 4-d array as NCHW (torch_npu's op-plugin, op_api_common ConvertType);
    # ops-nn conv/convolution_forward/docs/aclnnConvolution.md lets bias be NULL (无bias场景，
    # 可传入nullptr)
    x, w = rand(1, 2, 5, 5), rand(4, 2, 3, 3, seed=1)
    result = aclnn_py.call("aclnnConvolution", x, w, None, [1, 1], [1, 1], [1, 1], False,
                           [0, 0], 1, 0, out=np.empty((1, 4, 5, 5), np.float32))
    assert_close(result, F.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1).numpy())
    pooled = aclnn_py.call("aclnnAvgPool2d", x, [2, 2], [2, 2], [0, 0], False, True, 0, 0,
                           out=np.empty((1, 2, 2, 2), np.float32))
    assert_close(pooled, F.avg_pool2d(torch.from_numpy(x), 2).numpy())


def test_convolution_refuses_channels_that_groups_do_not_divide():
    # aclnn_convolution.cpp ValueChecker::CheckChannelAndGroups; UT test_aclnn_convolution.cpp
    # test_groups_1 expects ACLNN_ERR_PARAM_INVALID.
    error = refused_formatted("aclnnConvolution", "NCHW", {"output": np.empty((1, 4, 5, 5),
                                                                             np.float32)},
                              input=rand(1, 4, 5, 5), weight=rand(4, 2, 3, 3), bias=None,
                              stride=[1, 1], padding=[1, 1], dilation=[1, 1], transposed=False,
                              outputPadding=[0, 0], groups=3, cubeMathType=0)
    assert error.status == PARAM_INVALID and "groups (3)" in error.message


def test_convolution_computes_1d_3d_and_transposed_ones_without_bias():
    # The doc: 1-d (NCL), 2-d and 3-d, transposed or not, and no bias (无bias场景，可传入nullptr).
    x, w, b = rand(2, 4, 9), rand(6, 2, 3), rand(6)
    expected = F.conv1d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride=2,
                        padding=1, dilation=2, groups=2).numpy()
    result = _conv(x, w, b, expected.shape, "NCL", stride=[2], padding=[1], dilation=[2],
                   transposed=False, outputPadding=[0], groups=2)
    assert_close(result, expected)
    x, w = rand(1, 2, 4, 5, 6, dtype=np.float16), rand(4, 2, 3, 3, 2, dtype=np.float16)
    expected = F.conv3d(torch.from_numpy(x).float(), torch.from_numpy(w).float(),
                        padding=(1, 1, 0), stride=(1, 2, 1)).numpy()
    result = _conv(x, w, None, expected.shape, "NCDHW", stride=[1, 2, 1], padding=[1, 1, 0],
                   dilation=[1, 1, 1], transposed=False, outputPadding=[0, 0, 0], groups=1)
    assert_close(result, expected)
    x, w = rand(1, 4, 5, 6), rand(4, 2, 3, 2)
    expected = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=(2, 1),
                                  padding=(1, 0), output_padding=(1, 0), groups=2,
                                  dilation=(1, 2)).numpy()
    result = _conv(x, w, None, expected.shape, "NCHW", stride=[2, 1], padding=[1, 0],
                   dilation=[1, 2], transposed=True, outputPadding=[1, 0], groups=2)
    assert_close(result, expected)


# ---- pooling ----------------------------------------------------------------------------


def test_max_pool_refuses_a_padding_over_half_the_kernel():
    # aclnn_max_pool2d_with_indices.cpp CheckShape; UT test_aclnn_max_pool2d_with_indices.cpp
    # ascend910B2_abnormal_padValue expects ACLNN_ERR_PARAM_INVALID.
    error = refused("aclnnMaxPool2dWithIndices", rand(1, 2, 6, 6), kernelSize=[2, 2],
                    stride=[2, 2], padding=[2, 0], dilation=[1, 1], ceilMode=False,
                    out=(np.empty((1, 2, 5, 3), np.float32), np.empty((1, 2, 5, 3), np.int64)))
    assert error.status == PARAM_INVALID and "padding's H (2)" in error.message


def test_avg_pool_takes_an_empty_batch_and_refuses_a_cube_math_type_its_cube_path_does_not():
    # aclnn_avgpool2d.cpp CheckShape lets the batch be 0 (UT test_aclnn_avgpool2d.cpp
    # test_avgpool2d_out_empty_tensor expects ACLNN_SUCCESS); ProcessDataTypeConvert takes
    # float32 with cubeMathType 0 or 2 only (UT
    # ascend910B2_test_avgpool2d_divisorOverride_cube_fp32 expects ACLNN_ERR_PARAM_INVALID).
    attributes = dict(kernelSize=[2, 2], strides=[2, 2], paddings=[0], ceilMode=False,
                      countIncludePad=True, divisorOverride=0)
    call_formatted("aclnnAvgPool2d", "NCHW", {"out": np.empty((0, 1, 3, 3), np.float32)},
                   self=np.empty((0, 1, 6, 6), np.float32), cubeMathType=1, **attributes)
    error = refused_formatted("aclnnAvgPool2d", "NCHW",
                              {"out": np.empty((1, 1, 3, 3), np.float32)},
                              self=rand(1, 1, 6, 6), cubeMathType=1, **attributes)
    assert error.status == PARAM_INVALID and "cubeMathType 1" in error.message
    x = rand(2, 7, 8)
    out = np.empty((2, 4, 5), np.float32)
    call_formatted("aclnnAvgPool2d", "NCL", {"out": out}, self=x, kernelSize=[3], strides=[2],
                   paddings=[1], ceilMode=True, countIncludePad=False, divisorOverride=0,
                   cubeMathType=0)
    expected = F.avg_pool2d(torch.from_numpy(x)[None], 3, 2, 1, True, False)[0].numpy()
    assert_close(out, expected)
