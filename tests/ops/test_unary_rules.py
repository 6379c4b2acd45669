"""The unary family's phase 1 as CANN's op_api sources check it (tools/phase1_corrections/
unary.json): refusals with 161002 naming the parameter and the rule, calls CANN accepts that the
operators' docs refused, and the numbers of the dtypes so newly accepted against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import aclnn_py
from aclnn_py.testing import assert_close

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
pytestmark = pytest.mark.emulator_only

PARAM_INVALID = 161002
F32, F16 = np.float32, np.float16


def T(array: Any) -> Any:
    return torch.from_numpy(np.array(array, order="C"))


def ones(shape: tuple[int, ...], dtype: Any = F32) -> np.ndarray:
    return np.ones(shape, dtype)


# (operator, positional arguments, out or None, what the message says)
REFUSALS = {
    # more than 8 dimensions: ops-math math/acos/op_api/aclnn_acos.cpp CheckShape
    "acos rank 9": ("aclnnAcos", (ones((1,) * 9),), None, "input has 9 dimensions; it must have"),
    # out has self's dtype: ops-math math/abs/op_api/aclnn_abs.cpp CheckDtypeValid
    "abs out dtype": ("aclnnAbs", (ones((2, 3)),), np.empty((2, 3), F16),
                      "out has dtype float16, but self's float32 gives float32"),
    # ops-math math/sign/op_api/aclnn_sign.cpp CheckDtypeValid
    "sign result dtype": ("aclnnSign", (ones((3,), np.int32),), np.empty(3, F32),
                          "result has dtype float32 and self int32"),
    # ops-math conversion/clip_by_value_v2/op_api/aclnn_hardtanh.cpp CheckMinMaxValue
    "hardtanh min above max": ("aclnnHardtanh", (ones((3,)), 2.0, 1.0), None,
                               "clipValueMin (2.0) is greater than clipValueMax (1.0)"),
    # ops-nn activation/glu/op_host/op_api/aclnn_glu.cpp CheckParamsDataAndShape
    "glu odd dimension": ("aclnnGlu", (ones((2, 3)), 1), np.empty((2, 1), F32),
                          "dimension 1 of self has size 3: it must be even"),
    "glu dim out of range": ("aclnnGlu", (ones((2, 4)), 2), np.empty((2, 2), F32),
                             "dim 2 is out of range for self"),
    # ops-nn activation/glu_grad/op_api/aclnn_glu_backward.cpp CheckParamsDataAndShape
    "glu_backward gradOut shape": ("aclnnGluBackward", (ones((2, 3, 6)), ones((2, 4, 6)), 1),
                                   np.empty((2, 4, 6), F32),
                                   "gradOut has shape [2, 3, 6]: it must be [2, 2, 6]"),
    # ops-nn activation/leaky_relu_grad/op_api/aclnn_leaky_relu_backward.cpp CheckIsResult
    "leaky_relu_backward in place": ("aclnnLeakyReluBackward", (ones((3,)), ones((3,)), -0.1, True),
                                     None, "negativeSlope is -0.1 with selfIsResult true"),
    # ops-nn common/inc/op_api/level2_base_caculation.h CheckDtypeValidActivation
    "silu out dtype": ("aclnnSilu", (ones((3,)),), np.empty(3, F16),
                       "self has dtype DT_FLOAT and out DT_FLOAT16: they must have the same dtype"),
    # ops-math math/exp/op_api/aclnn_exp.cpp CheckDtypeValid: INT64 computes as FLOAT
    "exp int64 into int32": ("aclnnExp", (ones((3,), np.int64),), np.empty(3, np.int32),
                             "self's dtype DT_INT64 computes as DT_FLOAT, which cannot be cast to "
                             "out's dtype DT_INT32"),
    # ops-math math/square/op_api/aclnn_square.cpp CheckDtypeValid: regbase (Ascend 950) only
    "square on Atlas A2": ("aclnnSquare", (ones((3,)),), None, "not implemented on SoC Ascend910B"),
    # ops-math math/tanh_grad/op_api/aclnn_tanh_backward.cpp CheckShapeValid
    "tanh_backward out shape": ("aclnnTanhBackward", (ones((1, 16, 1, 1)), ones((1, 1, 4, 4))),
                                np.empty((1, 16, 1, 1), F32),
                                "gradInput has shape [1, 16, 1, 1], but the broadcast shape of "
                                "gradOutput and output is [1, 16, 4, 4]"),
    # ops-nn activation/threshold_grad_v2_d/op_api/aclnn_threshold_backward.cpp CheckDtypeValid
    "threshold_backward dtypes": ("aclnnThresholdBackward", (ones((3,)), ones((3,), F16), 0.5),
                                  np.empty(3, F16),
                                  "self has dtype DT_FLOAT16 and gradOutput DT_FLOAT"),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_phase_1_refuses_what_cann_refuses_naming_the_parameter(name: str) -> None:
    operator, arguments, out, phrase = REFUSALS[name]
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.call(operator, *arguments, **({"out": out} if out is not None else {}))
    assert info.value.status == PARAM_INVALID
    assert phrase in info.value.message


def _rng() -> np.random.Generator:
    return np.random.default_rng(7)


def _floats(shape: tuple[int, ...], dtype: Any, low: float = -2.0, high: float = 2.0
            ) -> np.ndarray:
    return _rng().uniform(low, high, shape).astype(dtype)


def _integers(shape: tuple[int, ...], dtype: Any, low: int = -3, high: int = 4) -> np.ndarray:
    return _rng().integers(low, high, shape).astype(dtype)


# Calls CANN's op_api accepts that the docs' rules refused: (operator, arguments, out or None,
# PyTorch's result)
def _log_0d() -> tuple[Any, ...]:  # no minimum rank: CheckSameShape1In1Out
    x = np.array(1.75, F32)
    return "aclnnLog", (x,), None, torch.log(T(x))


def _leaky_relu_float64() -> tuple[Any, ...]:  # DOUBLE; negativeSlope's dtype unchecked
    x = _floats((3, 4), np.float64)
    return "aclnnLeakyRelu", (x, np.float16(0.5)), None, \
        torch.nn.functional.leaky_relu(T(x), 0.5)


def _hardswish_9d() -> tuple[Any, ...]:  # no rank limit: CheckShape checks equal shapes only
    x = _floats((2, 1, 1, 1, 1, 1, 1, 1, 3), F32, -4, 4)
    return "aclnnHardswish", (x,), None, torch.nn.functional.hardswish(T(x))


def _relu_uint8() -> tuple[Any, ...]:  # UINT8 is in DTYPE_SUPPORT_LIST
    x = _integers((3, 4), np.uint8, 0, 250)
    return "aclnnRelu", (x,), None, torch.relu(T(x))


def _sigmoid_int16() -> tuple[Any, ...]:  # integers compute in out's dtype
    x = _integers((3, 4), np.int16)
    return "aclnnSigmoid", (x,), np.empty((3, 4), F32), torch.sigmoid(T(x))


def _gelu_backward_int32_grad() -> tuple[Any, ...]:  # the promoted dtype is checked
    # the derivative of aclnnGelu's tanh form (ops-nn activation/gelu/docs/aclnnGelu.md)
    g, x = _integers((3, 4), np.int32), _floats((3, 4), F32)
    return "aclnnGeluBackward", (g, x), np.empty((3, 4), F32), \
        torch.ops.aten.gelu_backward(T(g).float(), T(x), approximate="tanh")


def _elu_float64() -> tuple[Any, ...]:  # DTYPE_SUPPORT_LIST has DOUBLE on every SoC
    x = _floats((3, 4), np.float64)
    return "aclnnElu", (x, 1.5, 1.0, 1.0), None, torch.nn.functional.elu(T(x), 1.5)


def _cosh_int32() -> tuple[Any, ...]:  # integers compute as FLOAT
    x = _integers((3, 4), np.int32)
    return "aclnnCosh", (x,), np.empty((3, 4), F32), torch.cosh(T(x))


def _sign_bool() -> tuple[Any, ...]:  # BOOL is in DTYPE_SUPPORT_LIST
    x = _integers((3, 4), np.bool_, 0, 2)
    return "aclnnSign", (x,), None, torch.sign(T(x))


def _threshold_backward_double_threshold() -> tuple[Any, ...]:  # threshold's dtype unchecked
    g, x = _floats((3, 4), F32), _floats((3, 4), F32)
    return "aclnnThresholdBackward", (g, x, 0.25), None, \
        torch.ops.aten.threshold_backward(T(g), T(x), 0.25)


def _hardtanh_backward_double_bounds() -> tuple[Any, ...]:  # min and max unchecked
    g, x = _floats((3, 4), F32), _floats((3, 4), F32)
    return "aclnnHardtanhBackward", (g, x, -0.5, 1.0), None, \
        torch.ops.aten.hardtanh_backward(T(g), T(x), -0.5, 1.0)


def _mish_backward_empty() -> tuple[Any, ...]:  # an empty tensor returns early
    g, x = ones((1, 1, 0, 2)), ones((1, 1, 0, 2))
    return "aclnnMishBackward", (g, x), None, torch.empty((1, 1, 0, 2))


ACCEPTED = [_log_0d, _leaky_relu_float64, _hardswish_9d, _relu_uint8, _sigmoid_int16,
            _gelu_backward_int32_grad, _elu_float64,
            _cosh_int32, _sign_bool, _threshold_backward_double_threshold,
            _hardtanh_backward_double_bounds, _mish_backward_empty]


@pytest.mark.parametrize("make", ACCEPTED, ids=[m.__name__[1:] for m in ACCEPTED])
def test_cann_accepts_and_the_numbers_match_pytorch(make: Any) -> None:
    operator, arguments, out, expected = make()
    result = np.asarray(aclnn_py.call(operator, *arguments,
                                      **({"out": out} if out is not None else {})))
    reference = expected.numpy()
    assert result.shape == reference.shape
    if reference.dtype.kind in "biu":
        np.testing.assert_array_equal(result, reference.astype(result.dtype))
    elif result.dtype == np.float64:  # computed in float64 as PyTorch does
        np.testing.assert_allclose(result, reference, rtol=1e-12, atol=1e-15)
    else:
        assert_close(result, reference.astype(result.dtype))


def test_self_and_out_of_two_formats_are_refused(device: Any) -> None:
    # ops-math math/reciprocal/op_api/aclnn_reciprocal.cpp CheckFormat: one storage format
    from conftest import LowLevelResources

    from aclnn_py._c import lowlevel as ll
    from aclnn_py.emulator import _kernels as kernels
    from aclnn_py.ops import catalog

    kernels.install_once()
    s = LowLevelResources()
    try:
        tensors = []
        for fmt in ("ACL_FORMAT_ND", "ACL_FORMAT_NCHW"):
            pointer = ll.malloc(4 * 16)
            s.pointers.append(pointer)
            tensors.append(ll.create_tensor((1, 1, 4, 4), ll.constant("ACL_FLOAT"), (16, 16, 4, 1),
                                            0, (1, 1, 4, 4), pointer, ll.constant(fmt)))
            s.tensors.append(tensors[-1])
        library = str(catalog.bind(catalog.signature("aclnnReciprocal")))
        with pytest.raises(aclnn_py.AclError) as info:
            ll.operator_workspace_size("aclnnReciprocal", *tensors, library=library)
        assert info.value.status == PARAM_INVALID
        assert "out has format NCHW and self ND: they must have the same format" in \
            info.value.message
    finally:
        s.release()


@pytest.mark.slow
def test_square_computes_on_ascend_950() -> None:
    from helpers import run_json

    # ops-math math/square/op_api/aclnn_square.cpp: regbase's list, self and out of one dtype
    report = run_json("""
        import json
        import ml_dtypes
        import numpy as np
        import aclnn_py

        x = np.array([[-3, -1, 0], [2, 5, 7]])
        report = {}
        for name in ("float32", "float16", "bfloat16", "int32", "int64"):
            dtype = np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)
            got = aclnn_py.call("aclnnSquare", x.astype(dtype))
            report[name] = [str(got.dtype), got.astype(np.float64).tolist()]
        mixed = (x.astype(np.float32), np.empty((2, 3), np.float16))
        for label, arguments, out in (("int8", x.astype(np.int8), None), ("mixed", *mixed)):
            try:
                aclnn_py.call("aclnnSquare", arguments, **({"out": out} if out is not None else {}))
            except aclnn_py.AclError as error:
                report[label] = [error.status, error.message]
        print(json.dumps(report))
    """, {"ACLNN_EMU_SOC": "Ascend950PR_9579", "ACLNN_PY_BACKEND": "emulator"})
    for name in ("float32", "float16", "bfloat16", "int32", "int64"):
        assert report[name] == [name, [[9.0, 1.0, 0.0], [4.0, 25.0, 49.0]]], name
    status, message = report["int8"]
    assert status == PARAM_INVALID and "self has dtype DT_INT8" in message
    status, message = report["mixed"]  # CheckDtypeValid: out has self's dtype
    assert status == PARAM_INVALID and "out has dtype DT_FLOAT16 and self DT_FLOAT" in message
