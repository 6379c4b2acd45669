"""The emulator's Python kernels against PyTorch CPU, the reference of record.

Every kernel of ``aclnn_py.emulator._kernels`` is called through ``aclnn_py.call`` with its real
C parameter names, on several inputs (broadcasting, non-contiguous and 0-d where the
operator takes them) in each dtype it supports among float32, float16 and bfloat16, and
compared with PyTorch within CANN's precision standard (``aclnn_py.testing``). A kernel
without a case here fails ``test_every_kernel_has_a_case``.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import call_formatted

import aclnn_py
from aclnn_py.emulator import _kernels as kernels
from aclnn_py.emulator._kernels.inplace import INPLACE_OF
from aclnn_py.emulator._kernels.random_fills import RANDOM, mask_bytes
from aclnn_py.testing import assert_close

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
ml_dtypes = pytest.importorskip("ml_dtypes", reason="pip install ml_dtypes")
pytestmark = pytest.mark.emulator_only

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOAT_DTYPES = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16),
                "bfloat16": BF16}
TORCH_DTYPES = {np.dtype(np.float32): torch.float32, np.dtype(np.float16): torch.float16,
                BF16: torch.bfloat16, np.dtype(np.float64): torch.float64,
                np.dtype(np.int64): torch.int64, np.dtype(np.int32): torch.int32,
                np.dtype(np.bool_): torch.bool, np.dtype(np.int8): torch.int8,
                np.dtype(np.uint8): torch.uint8}


def T(array: Any) -> Any:
    """A torch tensor of ``array``'s values and dtype."""
    array = np.asarray(array)
    if array.dtype == BF16:
        return torch.from_numpy(np.array(array, np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.array(array, order="C"))


def N(tensor: Any, dtype: Any = None) -> np.ndarray:
    """A numpy array of a torch tensor (bfloat16 as ml_dtypes')."""
    if tensor.dtype == torch.bfloat16:
        result = tensor.float().numpy().astype(BF16)
    else:
        result = tensor.detach().numpy()
    return result if dtype is None else result.astype(dtype)


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype,
         low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return np.asarray(rng.uniform(low, high, shape), np.float32).astype(dtype)


# ---- cases: each returns (call arguments by C name, out or None, expected) --------------

Case = Callable[[np.random.Generator, np.dtype], tuple[dict[str, Any], Any, Any]]
CASES: dict[str, list[tuple[str, Case, tuple[str, ...]]]] = {}
ALL_FLOATS = ("float32", "float16", "bfloat16")


def case(name: str, label: str = "", dtypes: tuple[str, ...] = ALL_FLOATS
         ) -> Callable[[Case], Case]:
    def register(function: Case) -> Case:
        CASES.setdefault(name, []).append((label or function.__name__, function, dtypes))
        return function
    return register


def _domain(name: str) -> tuple[float, float]:
    return {"Log": (0.1, 4), "Log2": (0.1, 4), "Log10": (0.1, 4), "Log1p": (-0.5, 3),
            "Sqrt": (0.1, 4), "Rsqrt": (0.1, 4), "Reciprocal": (0.5, 3), "Asin": (-0.9, 0.9),
            "Acos": (-0.9, 0.9), "Erfinv": (-0.9, 0.9), "Tan": (-1.2, 1.2),
            "Exp": (-3, 3), "Expm1": (-3, 3), "Sinh": (-3, 3), "Cosh": (-3, 3)}.get(name, (-3, 3))


UNARY_TORCH = {
    "Abs": torch.abs, "Neg": torch.neg, "Exp": torch.exp, "Expm1": torch.expm1,
    "Log": torch.log, "Log2": torch.log2, "Log10": torch.log10, "Log1p": torch.log1p,
    "Sqrt": torch.sqrt, "Rsqrt": torch.rsqrt, "Reciprocal": torch.reciprocal,
    "Square": torch.square, "Sin": torch.sin, "Cos": torch.cos, "Tan": torch.tan,
    "Asin": torch.asin, "Acos": torch.acos, "Atan": torch.atan, "Sinh": torch.sinh,
    "Cosh": torch.cosh, "Tanh": torch.tanh, "Erf": torch.erf, "Erfinv": torch.erfinv,
    "Sigmoid": torch.sigmoid, "Relu": torch.relu, "Silu": torch.nn.functional.silu,
    # CANN's Gelu is the tanh form (ops-nn activation/gelu/docs/aclnnGelu.md)
    "Gelu": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "Mish": torch.nn.functional.mish,
    "Hardswish": torch.nn.functional.hardswish, "Floor": torch.floor, "Ceil": torch.ceil,
    "Trunc": torch.trunc, "Round": torch.round, "Sign": torch.sign,
    "Hardsigmoid": torch.nn.functional.hardsigmoid,
}


def _unary_case(short: str, shape: tuple[int, ...], view: Callable[[np.ndarray], np.ndarray]
                ) -> Case:
    def make(rng: np.random.Generator, dtype: np.dtype) -> tuple[dict[str, Any], Any, Any]:
        parameters = kernels.parameters_of(f"aclnn{short}")
        low, high = _domain(short)
        x = view(rand(rng, shape, dtype, low, high))
        return {parameters[0]: x}, None, N(UNARY_TORCH[short](T(x)))
    return make


# Kernels CANN runs on another SoC family only, whose numbers are checked there by a slow test:
# aclnnSquare on Ascend 950 (ops-math math/square/op_api/aclnn_square.cpp; tests/ops/
# test_unary_rules.py runs it under ACLNN_EMU_SOC).
ONLY_ON_OTHER_SOCS = frozenset({"aclnnSquare"})

for _short in UNARY_TORCH:
    if f"aclnn{_short}" in ONLY_ON_OTHER_SOCS:
        continue
    case(f"aclnn{_short}", "2-d")(_unary_case(_short, (3, 5), lambda a: a))
    case(f"aclnn{_short}", "0-d")(_unary_case(_short, (), lambda a: a))
    case(f"aclnn{_short}", "non-contiguous")(_unary_case(_short, (4, 6), lambda a: a[:, ::2].T))


@case("aclnnGeluV2")
def gelu_v2(rng, dtype):
    x = rand(rng, (4, 5), dtype)
    return {"x": x, "approximate": 1}, None, N(torch.nn.functional.gelu(T(x), approximate="tanh"))


@case("aclnnLogicalNot", dtypes=("float32",))
def logical_not(rng, dtype):
    x = (rng.integers(0, 2, (3, 4)) * rng.uniform(1, 2, (3, 4))).astype(dtype)
    return {"self": x}, np.empty((3, 4), np.bool_), N(torch.logical_not(T(x)))


BINARY_TORCH = {
    "Mul": torch.mul, "Div": torch.div, "Maximum": torch.maximum, "Minimum": torch.minimum,
    "Atan2": torch.atan2, "FloorDivide": torch.floor_divide,
    "PowTensorTensor": torch.pow,
}


def _binary(short: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> Case:
    def make(rng, dtype):
        first, second = kernels.parameters_of(f"aclnn{short}")[:2]
        low = 0.5 if short in ("PowTensorTensor", "Div", "FloorDivide") else -2.0
        a, b = rand(rng, shapes[0], dtype, low, 2.0), rand(rng, shapes[1], dtype, low, 2.0)
        return {first: a, second: b}, None, N(BINARY_TORCH[short](T(a), T(b)))
    return make


for _short in BINARY_TORCH:
    case(f"aclnn{_short}", "same shape")(_binary(_short, ((3, 4), (3, 4))))
    case(f"aclnn{_short}", "broadcast")(_binary(_short, ((3, 1), (1, 4))))


def _add_case(short: str, sign: int, scalar: bool) -> Case:
    def make(rng, dtype):
        a = rand(rng, (3, 4), dtype)
        b = 1.5 if scalar else rand(rng, (4,), dtype)
        expected = torch.add(T(a), b if scalar else T(b), alpha=sign * 2.0)
        return {"self": a, "other": b, "alpha": 2.0}, None, N(expected)
    return make


for _short, _sign, _scalar in (("Add", 1, False), ("Sub", -1, False), ("Adds", 1, True),
                               ("Subs", -1, True)):
    case(f"aclnn{_short}", "alpha 2")(_add_case(_short, _sign, _scalar))


for _short, _function in (("Muls", torch.mul), ("Divs", torch.div)):
    def _scalar_case(rng, dtype, function=_function):
        a = rand(rng, (2, 3), dtype)
        return {"self": a, "other": 1.75}, None, N(function(T(a), 1.75))
    case(f"aclnn{_short}", "scalar")(_scalar_case)


@case("aclnnPowTensorScalar")
def pow_tensor_scalar(rng, dtype):
    a = rand(rng, (2, 3), dtype, 0.5, 2.0)
    return {"self": a, "exponent": 2.0}, None, N(torch.pow(T(a), 2.0))


COMPARE = {"Eq": torch.eq, "Ne": torch.ne, "Gt": torch.gt, "Ge": torch.ge, "Lt": torch.lt,
           "Le": torch.le}
for _short, _function in COMPARE.items():
    def _compare_tensor(rng, dtype, function=_function):
        a = rng.integers(-2, 3, (3, 4)).astype(dtype)
        b = rng.integers(-2, 3, (1, 4)).astype(dtype)
        return {"self": a, "other": b}, np.empty((3, 4), np.bool_), N(function(T(a), T(b)))

    def _compare_scalar(rng, dtype, function=_function):
        a = rng.integers(-2, 3, (3, 4)).astype(dtype)
        return {"self": a, "other": 1.0}, np.empty((3, 4), np.bool_), N(function(T(a), 1.0))
    case(f"aclnn{_short}Tensor", "broadcast")(_compare_tensor)
    case(f"aclnn{_short}Scalar", "scalar")(_compare_scalar)


for _short, _function in (("LogicalAnd", torch.logical_and), ("LogicalOr", torch.logical_or),
                          ("LogicalXor", torch.logical_xor)):
    def _logical(rng, dtype, function=_function):
        a, b = (rng.integers(0, 2, (3, 4)).astype(np.bool_) for _ in range(2))
        return {"self": a, "other": b}, np.empty((3, 4), np.bool_), N(function(T(a), T(b)))
    case(f"aclnn{_short}", "bool", dtypes=("float32",))(_logical)


def _inplace_case(short: str, function: Callable[..., Any], scalar: bool,
                  alpha: bool) -> Case:
    def make(rng, dtype):
        a = rand(rng, (3, 4), dtype, 0.5, 2.0)
        b = 1.25 if scalar else rand(rng, (4,), dtype, 0.5, 2.0)
        arguments = {"selfRef": a.copy(), "other": b}
        expected_args: dict[str, Any] = {}
        if alpha:
            arguments["alpha"] = 0.5
            expected_args["alpha"] = 0.5
        expected = function(T(a), b if scalar else T(b), **expected_args)
        return arguments, None, N(expected)
    return make


for _short, _function, _scalar, _alpha in (
        ("InplaceAdd", torch.add, False, True), ("InplaceSub", torch.sub, False, True),
        ("InplaceAdds", torch.add, True, True), ("InplaceSubs", torch.sub, True, True),
        ("InplaceMul", torch.mul, False, False), ("InplaceMuls", torch.mul, True, False),
        ("InplaceDiv", torch.div, False, False), ("InplaceDivs", torch.div, True, False)):
    case(f"aclnn{_short}", "in place")(_inplace_case(_short, _function, _scalar, _alpha))


@case("aclnnSWhere")
def s_where(rng, dtype):
    c = rng.integers(0, 2, (3, 1)).astype(np.bool_)
    a, b = rand(rng, (3, 4), dtype), rand(rng, (1, 4), dtype)
    return {"condition": c, "self": a, "other": b}, np.empty((3, 4), dtype), \
        N(torch.where(T(c), T(a), T(b)))


@case("aclnnLerp")
def lerp(rng, dtype):
    a, b, w = (rand(rng, (3, 4), dtype) for _ in range(3))
    return {"self": a, "end": b, "weight": w}, None, N(torch.lerp(T(a), T(b), T(w)))


@case("aclnnLerps")
def lerps(rng, dtype):
    a, b = rand(rng, (3, 4), dtype), rand(rng, (1, 4), dtype)
    return {"self": a, "end": b, "weight": 0.25}, None, N(torch.lerp(T(a), T(b), 0.25))


@case("aclnnInplaceLerps", "in place")
def inplace_lerps(rng, dtype):  # Adam's first moment: m.lerp_(grad, 1 - beta1)
    a, b = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype)
    return {"selfRef": a.copy(), "end": b, "weight": 0.9}, None, N(torch.lerp(T(a), T(b), 0.9))


for _short, _function in (("Addcmul", torch.addcmul), ("Addcdiv", torch.addcdiv)):
    def _addc(rng, dtype, function=_function):
        a, b = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype)
        c = rand(rng, (1, 4), dtype, 0.5, 2.0)
        return {"self": a, "tensor1": b, "tensor2": c, "value": 0.5}, None, \
            N(function(T(a), T(b), T(c), value=0.5))
    case(f"aclnn{_short}")(_addc)


@case("aclnnClamp")
def clamp(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    return {"self": a, "clipValueMin": -0.5, "clipValueMax": 0.75}, None, \
        N(torch.clamp(T(a), -0.5, 0.75))


@case("aclnnClampMin")
def clamp_min(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    return {"self": a, "clipValueMin": -0.5}, None, N(torch.clamp_min(T(a), -0.5))


@case("aclnnClampMax")
def clamp_max(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    return {"self": a, "clipValueMax": 0.5}, None, N(torch.clamp_max(T(a), 0.5))


@case("aclnnInplaceFillScalar")
def inplace_fill(rng, dtype):
    a = rand(rng, (2, 3), dtype)
    return {"selfRef": a, "value": 1.5}, None, np.full((2, 3), 1.5, dtype)


@case("aclnnInplaceZero")
def inplace_zero(rng, dtype):
    return {"selfRef": rand(rng, (2, 3), dtype)}, None, np.zeros((2, 3), dtype)


@case("aclnnInplaceMaskedFillScalar")
def inplace_masked_fill(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    m = rng.integers(0, 2, (1, 4)).astype(np.bool_)
    return {"selfRef": a.copy(), "mask": m, "value": -1.0}, None, \
        N(T(a).masked_fill(T(m), -1.0))


@case("aclnnCast", "float32 to float16", dtypes=("float32",))
def cast_down(rng, dtype):
    a = rand(rng, (3, 4), np.dtype(np.float32), -100, 100)
    return {"self": a, "dtype": np.dtype(np.float16)}, np.empty((3, 4), np.float16), \
        N(T(a).to(torch.float16))


@case("aclnnCast", "float16 to float32", dtypes=("float16",))
def cast_up(rng, dtype):
    a = rand(rng, (3, 4), np.dtype(np.float16), -100, 100)
    return {"self": a, "dtype": np.dtype(np.float32)}, np.empty((3, 4), np.float32), \
        N(T(a).to(torch.float32))


# ---- activations' backward ----------------------------------------------------------------


@case("aclnnSigmoidBackward")
def sigmoid_backward(rng, dtype):
    g, y = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype, 0.1, 0.9)
    return {"gradOutput": g, "output": y}, None, N(torch.ops.aten.sigmoid_backward(T(g), T(y)))


@case("aclnnTanhBackward")
def tanh_backward(rng, dtype):
    g, y = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype, -0.9, 0.9)
    return {"gradOutput": g, "output": y}, None, N(torch.ops.aten.tanh_backward(T(g), T(y)))


@case("aclnnSiluBackward")
def silu_backward(rng, dtype):
    g, x = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype)
    return {"gradOutput": g, "self": x}, None, N(torch.ops.aten.silu_backward(T(g), T(x)))


@case("aclnnGeluBackward")
def gelu_backward(rng, dtype):
    g, x = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype)
    # the derivative of the tanh form, as CANN's GeluGrad kernel computes it
    return {"gradOutput": g, "self": x}, np.empty((3, 4), dtype), \
        N(torch.ops.aten.gelu_backward(T(g), T(x), approximate="tanh"))


@case("aclnnThresholdBackward")
def threshold_backward(rng, dtype):
    g, x = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype)
    return {"gradOutput": g, "self": x, "threshold": 0.25}, None, \
        N(torch.ops.aten.threshold_backward(T(g), T(x), 0.25))


@case("aclnnHardtanh")
def hardtanh(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "clipValueMin": -0.5, "clipValueMax": 1.0}, None, \
        N(torch.nn.functional.hardtanh(T(x), -0.5, 1.0))


@case("aclnnLeakyRelu")
def leaky_relu(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "negativeSlope": 0.1}, None, N(torch.nn.functional.leaky_relu(T(x), 0.1))


@case("aclnnElu")
def elu(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "alpha": 0.75, "scale": 1.0, "inputScale": 1.0}, None, \
        N(torch.nn.functional.elu(T(x), 0.75))


@case("aclnnSoftplus")
def softplus(rng, dtype):
    x = rand(rng, (3, 4), dtype, -4, 4)
    return {"self": x, "beta": 1.0, "threshold": 20.0}, None, N(torch.nn.functional.softplus(T(x)))


@case("aclnnGlu")
def glu(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "dim": -1}, np.empty((3, 2), dtype), N(torch.nn.functional.glu(T(x), -1))


@case("aclnnInplaceOne")
def inplace_one(rng, dtype):
    return {}, np.zeros((2, 3), dtype), np.ones((2, 3), dtype)


INPLACE_UNARY = {"aclnnInplaceRelu": ("Relu", torch.relu), "aclnnInplaceSigmoid":
                 ("Sigmoid", torch.sigmoid), "aclnnInplaceTanh": ("Tanh", torch.tanh),
                 "aclnnInplaceExp": ("Exp", torch.exp), "aclnnInplaceSqrt": ("Sqrt", torch.sqrt),
                 "aclnnInplaceNeg": ("Neg", torch.neg), "aclnnInplaceLog": ("Log", torch.log)}
for _name, (_short, _function) in INPLACE_UNARY.items():
    def _inplace_unary(rng, dtype, name=_name, short=_short, function=_function):
        (parameter,) = kernels.parameters_of(name)
        x = rand(rng, (3, 4), dtype, *_domain(short))
        return {parameter: x.copy()}, None, N(function(T(x)))
    case(_name, "in place")(_inplace_unary)


BACKWARD = {
    "aclnnHardswishBackward": (("gradOutput", "self"), {}, "out",
                               lambda g, x: torch.ops.aten.hardswish_backward(g, x)),
    "aclnnHardsigmoidBackward": (("gradOutput", "self"), {}, "out",
                                 lambda g, x: torch.ops.aten.hardsigmoid_backward(g, x)),
    "aclnnHardtanhBackward": (("gradOutput", "self"), {"min": -0.5, "max": 1.0}, "out",
                              lambda g, x: torch.ops.aten.hardtanh_backward(g, x, -0.5, 1.0)),
    "aclnnLeakyReluBackward": (("gradOutput", "self"), {"negativeSlope": 0.1,
                                                        "selfIsResult": False}, "out",
                               lambda g, x: torch.ops.aten.leaky_relu_backward(g, x, 0.1, False)),
    "aclnnSoftplusBackward": (("gradOutput", "self"), {"beta": 1.0, "threshold": 20.0},
                              "gradInput",
                              lambda g, x: torch.ops.aten.softplus_backward(g, x, 1.0, 20.0)),
    "aclnnMishBackward": (("gradOutput", "self"), {}, "gradInput",
                          lambda g, x: torch.ops.aten.mish_backward(g, x)),
}
for _name, (_tensors, _attributes, _out, _function) in BACKWARD.items():
    def _backward(rng, dtype, tensors=_tensors, attributes=_attributes, function=_function):
        g, x = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype, -4, 4)
        return {tensors[0]: g, tensors[1]: x, **attributes}, None, N(function(T(g), T(x)))
    case(_name)(_backward)


@case("aclnnGluBackward")
def glu_backward(rng, dtype):
    g, x = rand(rng, (3, 2), dtype), rand(rng, (3, 4), dtype)
    return {"gradOut": g, "self": x, "dim": -1}, np.empty((3, 4), dtype), \
        N(torch.ops.aten.glu_backward(T(g), T(x), -1))


@case("aclnnBinaryCrossEntropyBackward")
def bce_backward(rng, dtype):
    g = rand(rng, (3, 4), dtype)
    p, t = rand(rng, (3, 4), dtype, 0.05, 0.95), rand(rng, (3, 4), dtype, 0, 1)
    expected = torch.ops.aten.binary_cross_entropy_backward(T(g).float(), T(p).float(),
                                                            T(t).float(), None, 0)
    return {"gradOutput": g, "self": p, "target": t, "weightOptional": None, "reduction": 0}, \
        None, N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnSoftmaxCrossEntropyWithLogits")
def softmax_cross_entropy(rng, dtype):
    x = rand(rng, (4, 5), dtype)
    y = N(torch.softmax(T(rand(rng, (4, 5), dtype)).float(), 1).to(TORCH_DTYPES[dtype]))
    xf, yf = T(x).float(), T(y).float()
    loss = -(yf * torch.log_softmax(xf, 1)).sum(1)
    backprop = torch.softmax(xf, 1) - yf
    return {"features": x, "labels": y}, (np.empty((4,), dtype), np.empty((4, 5), dtype)), \
        (N(loss.to(TORCH_DTYPES[dtype])), N(backprop.to(TORCH_DTYPES[dtype])))


# ---- reductions -------------------------------------------------------------------------


@case("aclnnReduceSum", "two dims")
def reduce_sum(rng, dtype):
    x = rand(rng, (3, 4, 5), dtype)
    return {"self": x, "dims": [0, 2], "keepDims": False, "dtype": dtype}, \
        np.empty((4,), dtype), N(torch.sum(T(x), (0, 2)))


@case("aclnnReduceSum", "keep dims, non-contiguous")
def reduce_sum_keep(rng, dtype):
    x = rand(rng, (4, 6), dtype)[:, ::2]
    return {"self": x, "dims": [1], "keepDims": True, "dtype": dtype}, \
        np.empty((4, 1), dtype), N(torch.sum(T(x), 1, keepdim=True))


@case("aclnnMean")
def mean(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "dim": [1], "keepDim": False, "dtype": dtype}, np.empty((3,), dtype), \
        N(torch.mean(T(x), 1))


for _short, _function in (("Amax", torch.amax), ("Amin", torch.amin)):
    def _extremum(rng, dtype, function=_function):
        x = rand(rng, (3, 4, 2), dtype)
        return {"self": x, "dim": [1], "keepDim": True}, np.empty((3, 1, 2), dtype), \
            N(function(T(x), 1, keepdim=True))
    case(f"aclnn{_short}")(_extremum)


for _short, _function in (("ArgMax", torch.argmax), ("ArgMin", torch.argmin)):
    def _arg(rng, dtype, function=_function):
        x = rng.permutation(12).reshape(3, 4).astype(dtype)
        return {"self": x, "dim": 1, "keepdim": False}, np.empty((3,), np.int64), \
            N(function(T(x), 1))
    case(f"aclnn{_short}")(_arg)


for _short, _function in (("Max", torch.max), ("Min", torch.min)):
    def _all(rng, dtype, function=_function):
        x = rand(rng, (3, 4), dtype)
        return {"self": x}, np.empty((), dtype), N(function(T(x)))
    case(f"aclnn{_short}")(_all)


@case("aclnnProd")
def prod(rng, dtype):
    x = rand(rng, (2, 3), dtype, 0.5, 1.5)
    return {"self": x, "dtype": dtype}, np.empty((), dtype), N(torch.prod(T(x)))


@case("aclnnVar")
def var(rng, dtype):
    x = rand(rng, (3, 5), dtype)
    return {"self": x, "dim": [1], "unbiased": True, "keepdim": False}, np.empty((3,), dtype), \
        N(torch.var(T(x), 1, unbiased=True))


@case("aclnnStd")
def std(rng, dtype):
    x = rand(rng, (3, 5), dtype)
    return {"self": x, "dim": [1], "correction": 1, "keepdim": True}, \
        np.empty((3, 1), dtype), N(torch.std(T(x), 1, correction=1, keepdim=True))


@case("aclnnNorm")
def norm(rng, dtype):
    x = rand(rng, (3, 5), dtype)
    return {"self": x, "pScalar": 2.0, "dim": [1], "keepdim": False}, np.empty((3,), dtype), \
        N(torch.norm(T(x), 2, 1))


@case("aclnnLinalgVectorNorm")
def vector_norm(rng, dtype):
    x = rand(rng, (3, 5), dtype)
    return {"self": x, "ord": 1.0, "dims": [0], "keepDims": False, "dtype": dtype}, \
        np.empty((5,), dtype), N(torch.linalg.vector_norm(T(x), 1, 0))


@case("aclnnCumsum")
def cumsum(rng, dtype):
    x = rand(rng, (3, 5), dtype)
    return {"self": x, "dim": 1, "dtype": dtype}, np.empty((3, 5), dtype), \
        N(torch.cumsum(T(x), 1))


# ---- nn -----------------------------------------------------------------------------------


@case("aclnnSoftmax", "last dim")
def softmax(rng, dtype):
    x = rand(rng, (3, 7), dtype, -4, 4)
    return {"self": x, "dim": -1}, None, N(torch.softmax(T(x), -1))


@case("aclnnSoftmax", "first dim, non-contiguous")
def softmax_first(rng, dtype):
    x = rand(rng, (6, 4), dtype, -4, 4)[::2]
    return {"self": x, "dim": 0}, None, N(torch.softmax(T(x), 0))


@case("aclnnLogSoftmax")
def log_softmax(rng, dtype):
    x = rand(rng, (3, 7), dtype, -4, 4)
    return {"self": x, "dim": 1}, None, N(torch.log_softmax(T(x), 1))


@case("aclnnSoftmaxBackward")
def softmax_backward(rng, dtype):
    g = rand(rng, (3, 5), dtype)
    y = N(torch.softmax(T(rand(rng, (3, 5), dtype)), 1))
    return {"gradOutput": g, "output": y, "dim": 1}, None, \
        N(torch.ops.aten._softmax_backward_data(T(g), T(y), 1, T(y).dtype))


@case("aclnnLogSoftmaxBackward")
def log_softmax_backward(rng, dtype):
    g = rand(rng, (3, 5), dtype)
    y = N(torch.log_softmax(T(rand(rng, (3, 5), dtype)), 1))
    return {"gradOutput": g, "output": y, "dim": 1}, None, \
        N(torch.ops.aten._log_softmax_backward_data(T(g), T(y), 1, T(y).dtype))


@case("aclnnLayerNorm")
def layer_norm(rng, dtype):
    x, w, b = rand(rng, (4, 6), dtype), rand(rng, (6,), dtype), rand(rng, (6,), dtype)
    expected = torch.nn.functional.layer_norm(T(x).float(), (6,), T(w).float(), T(b).float(),
                                              1e-5)
    outs = (np.empty((4, 6), dtype), None, None)
    return {"input": x, "normalizedShape": [6], "weightOptional": w, "biasOptional": b,
            "eps": 1e-5}, outs, N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnGroupNorm")
def group_norm(rng, dtype):
    x = rand(rng, (2, 4, 3), dtype)
    g, b = rand(rng, (4,), dtype), rand(rng, (4,), dtype)
    expected = torch.nn.functional.group_norm(T(x).float(), 2, T(g).float(), T(b).float(), 1e-5)
    outs = (np.empty((2, 4, 3), dtype), np.empty((2, 2), dtype), np.empty((2, 2), dtype))
    return {"self": x, "gamma": g, "beta": b, "N": 2, "C": 4, "HxW": 3, "group": 2,
            "eps": 1e-5}, outs, N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnBatchNorm", "inference")
def batch_norm(rng, dtype):
    x = rand(rng, (2, 3, 4), dtype)
    w, b, m = rand(rng, (3,), dtype), rand(rng, (3,), dtype), rand(rng, (3,), dtype)
    v = rand(rng, (3,), dtype, 0.5, 2.0)
    expected = torch.nn.functional.batch_norm(T(x).float(), T(m).float(), T(v).float(),
                                              T(w).float(), T(b).float(), False, 0.1, 1e-5)
    outs = (np.empty((2, 3, 4), dtype), np.empty((3,), dtype), np.empty((3,), dtype))
    return {"input": x, "weight": w, "bias": b, "runningMean": m.copy(), "runningVar": v.copy(),
            "training": False, "momentum": 0.1, "eps": 1e-5}, outs, \
        (m, v, N(expected.to(TORCH_DTYPES[dtype])))


@case("aclnnLayerNormBackward")
def layer_norm_backward(rng, dtype):
    x, w, b = (rand(rng, shape, dtype) for shape in ((4, 6), (6,), (6,)))
    g = rand(rng, (4, 6), dtype)
    xf = T(x).float()
    # the statistics as the forward operator hands them on: in the input's dtype
    mean = xf.mean(1, keepdim=True).to(TORCH_DTYPES[dtype])
    rstd = (1 / torch.sqrt(xf.var(1, unbiased=False, keepdim=True) + 1e-5)).to(
        TORCH_DTYPES[dtype])
    grads = torch.ops.aten.native_layer_norm_backward(T(g).float(), xf, [6], mean.float(),
                                                      rstd.float(), T(w).float(), T(b).float(),
                                                      [True, True, True])
    outs = (np.empty((4, 6), dtype), np.empty((6,), dtype), np.empty((6,), dtype))
    return {"gradOut": g, "input": x, "normalizedShape": [6], "mean": N(mean),
            "rstd": N(rstd), "weightOptional": w, "biasOptional": b,
            "outputMask": [True, True, True]}, outs, \
        tuple(N(grad.to(TORCH_DTYPES[dtype])) for grad in grads)


@case("aclnnGroupNormBackward")
def group_norm_backward(rng, dtype):
    x, g = rand(rng, (2, 4, 3), dtype), rand(rng, (2, 4, 3), dtype)
    gamma = rand(rng, (4,), dtype)
    xf = T(x).float().reshape(2, 2, -1)
    # the statistics as the forward operator hands them on: in the input's dtype
    mean = xf.mean(2).to(TORCH_DTYPES[dtype])
    rstd = (1 / torch.sqrt(xf.var(2, unbiased=False) + 1e-5)).to(TORCH_DTYPES[dtype])
    grads = torch.ops.aten.native_group_norm_backward(T(g).float(), T(x).float(), mean.float(),
                                                      rstd.float(), T(gamma).float(), 2, 4, 3,
                                                      2, [True, True, True])
    outs = (np.empty((2, 4, 3), dtype), np.empty((4,), dtype), np.empty((4,), dtype))
    return {"gradOut": g, "input": x, "mean": N(mean), "rstd": N(rstd), "gamma": gamma,
            "N": 2, "C": 4, "HxW": 3, "group": 2, "outputMask": [True, True, True]}, outs, \
        tuple(N(grad.to(TORCH_DTYPES[dtype])) for grad in grads)


@case("aclnnBatchNormBackward", "training", dtypes=("float32",))
def batch_norm_backward(rng, dtype):
    x, g = rand(rng, (2, 3, 4), dtype), rand(rng, (2, 3, 4), dtype)
    w = rand(rng, (3,), dtype)
    xf = T(x).float()
    mean = xf.mean((0, 2))
    invstd = 1 / torch.sqrt(xf.var((0, 2), unbiased=False) + 1e-5)
    grads = torch.ops.aten.native_batch_norm_backward(T(g).float(), xf, T(w).float(), None,
                                                      None, mean, invstd, True, 1e-5,
                                                      [True, True, True])
    outs = (np.empty((2, 3, 4), dtype), np.empty((3,), dtype), np.empty((3,), dtype))
    return {"gradOut": g, "input": x, "weight": w, "runningMean": np.zeros(3, dtype),
            "runningVar": np.ones(3, dtype),
            "saveMean": N(mean), "saveInvstd": N(invstd), "training": True, "eps": 1e-5,
            "outputMask": [True, True, True]}, outs, tuple(N(grad) for grad in grads)


@case("aclnnFastBatchNormBackward", "training")
def fast_batch_norm_backward(rng, dtype):
    x, g = rand(rng, (2, 3, 4), dtype), rand(rng, (2, 3, 4), dtype)
    w = rand(rng, (3,), dtype)
    xf = T(x).float()
    mean = xf.mean((0, 2))
    invstd = 1 / torch.sqrt(xf.var((0, 2), unbiased=False) + 1e-5)
    grads = torch.ops.aten.native_batch_norm_backward(T(g).float(), xf, T(w).float(), None,
                                                      None, mean, invstd, True, 1e-5,
                                                      [True, True, True])
    outs = (np.empty((2, 3, 4), dtype), np.empty((3,), dtype), np.empty((3,), dtype))
    return {"gradOut": g, "input": x, "weight": w, "runningMean": None, "runningVar": None,
            "saveMean": N(mean), "saveInvstd": N(invstd), "training": True, "eps": 1e-5,
            "outputMask": [True, True, True], "version": 1}, outs, \
        tuple(N(grad.to(TORCH_DTYPES[dtype])) for grad in grads)


@case("aclnnFastBatchNormBackward", "inference", dtypes=("float32",))
def fast_batch_norm_backward_inference(rng, dtype):
    x, g = rand(rng, (2, 3, 4, 2), dtype), rand(rng, (2, 3, 4, 2), dtype)
    w, rm, rv = rand(rng, (3,), dtype), rand(rng, (3,), dtype), rand(rng, (3,), dtype, 0.5, 2.0)
    grads = torch.ops.aten.native_batch_norm_backward(T(g), T(x), T(w), T(rm), T(rv), None,
                                                      None, False, 1e-5, [True, True, True])
    outs = (np.empty(x.shape, dtype), np.empty((3,), dtype), np.empty((3,), dtype))
    return {"gradOut": g, "input": x, "weight": w, "runningMean": rm, "runningVar": rv,
            "saveMean": None, "saveInvstd": None, "training": False, "eps": 1e-5,
            "outputMask": [True, True, True], "version": 0}, outs, \
        tuple(N(grad) for grad in grads)


@case("aclnnBinaryCrossEntropy")
def bce(rng, dtype):
    p, t = rand(rng, (3, 4), dtype, 0.05, 0.95), rand(rng, (3, 4), dtype, 0, 1)
    w = rand(rng, (3, 4), dtype, 0.5, 1.5)
    expected = torch.nn.functional.binary_cross_entropy(T(p).float(), T(t).float(), T(w).float())
    return {"self": p, "target": t, "weight": w, "reduction": 1}, np.empty((), dtype), \
        N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnBinaryCrossEntropyWithLogits")
def bce_logits(rng, dtype):
    x, t = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype, 0, 1)
    return {"self": x, "target": t, "weightOptional": None, "posWeightOptional": None,
            "reduction": 0}, None, \
        N(torch.nn.functional.binary_cross_entropy_with_logits(T(x), T(t), reduction="none"))


@case("aclnnNLLLoss")
def nll_loss(rng, dtype):
    x = N(torch.log_softmax(T(rand(rng, (4, 5), dtype)), 1))
    t = np.array([0, 3, 1, 4], np.int64)
    w = rand(rng, (5,), dtype, 0.5, 1.5)
    expected = torch.nn.functional.nll_loss(T(x).float(), T(t), T(w).float())
    total = T(w).float()[T(t)].sum()
    return {"self": x, "target": t, "weight": w, "reduction": 1, "ignoreIndex": -100}, \
        (np.empty((), dtype), np.empty((), dtype)), \
        (N(expected.to(TORCH_DTYPES[dtype])), N(total.to(TORCH_DTYPES[dtype])))


@case("aclnnConvolutionBackward")
def convolution_backward(rng, dtype):
    """Grouped, strided, padded and dilated: PyTorch's autograd of conv2d."""
    x, w, b = rand(rng, (2, 4, 7, 6), dtype), rand(rng, (6, 2, 3, 2), dtype), rand(rng, (6,), dtype)
    xt, wt, bt = (T(a).float().requires_grad_(True) for a in (x, w, b))
    y = torch.nn.functional.conv2d(xt, wt, bt, (2, 1), (1, 1), (1, 2), 2)
    g = rand(rng, tuple(y.shape), dtype)
    grads = torch.autograd.grad(y, (xt, wt, bt), T(g).float())
    return {"gradOutput": g, "input": x, "weight": w, "biasSizes": [6], "stride": [2, 1],
            "padding": [1, 1], "dilation": [1, 2], "transposed": False,
            "outputPadding": [0, 0], "groups": 2, "outputMask": [True, True, True],
            "cubeMathType": 0}, \
        (np.empty(x.shape, dtype), np.empty(w.shape, dtype), np.empty((6,), dtype)), \
        tuple(N(grad.to(TORCH_DTYPES[dtype])) for grad in grads)


@case("aclnnConvolutionBackward", "transposed")
def convolution_transposed_backward(rng, dtype):
    """A grouped, strided transposed convolution with output padding: PyTorch's autograd of
    conv_transpose2d."""
    x, w = rand(rng, (2, 4, 4, 5), dtype), rand(rng, (4, 3, 3, 2), dtype)
    xt, wt = (T(a).float().requires_grad_(True) for a in (x, w))
    y = torch.nn.functional.conv_transpose2d(xt, wt, None, (2, 1), (1, 0), (1, 0), 2)
    g = rand(rng, tuple(y.shape), dtype)
    grads = torch.autograd.grad(y, (xt, wt), T(g).float())
    return {"gradOutput": g, "input": x, "weight": w, "biasSizes": [6], "stride": [2, 1],
            "padding": [1, 0], "dilation": [1, 1], "transposed": True,
            "outputPadding": [1, 0], "groups": 2, "outputMask": [True, True, False],
            "cubeMathType": 0}, \
        (np.empty(x.shape, dtype), np.empty(w.shape, dtype), np.empty((6,), dtype)), \
        tuple(N(grad.to(TORCH_DTYPES[dtype])) for grad in grads)


@case("aclnnNLLLossBackward")
def nll_loss_backward(rng, dtype):
    x = rand(rng, (4, 5), dtype)
    t = np.array([0, 3, -100, 4], np.int64)
    w = rand(rng, (5,), dtype, 0.5, 1.5)
    xt = T(x).float().requires_grad_(True)
    loss = torch.nn.functional.nll_loss(xt, T(t), T(w).float(), ignore_index=-100)
    g = rand(rng, (), dtype, 0.5, 2.0)
    (grad,) = torch.autograd.grad(loss, xt, T(g).float())
    total = T(w).float()[T(np.array([0, 3, 4]))].sum()
    return {"gradOutput": g, "self": x, "target": t, "weight": w, "reduction": 1,
            "ignoreIndex": -100, "totalWeight": N(total.to(TORCH_DTYPES[dtype]))}, \
        np.empty((4, 5), dtype), N(grad.to(TORCH_DTYPES[dtype]))


@case("aclnnConvolution")
def convolution(rng, dtype):
    x, w, b = rand(rng, (1, 2, 5, 5), dtype), rand(rng, (4, 2, 3, 3), dtype), rand(rng, (4,), dtype)
    expected = torch.nn.functional.conv2d(T(x).float(), T(w).float(), T(b).float(), 1, 1)
    return {"input": x, "weight": w, "bias": b, "stride": [1, 1], "padding": [1, 1],
            "dilation": [1, 1], "transposed": False, "outputPadding": [0, 0], "groups": 1,
            "cubeMathType": 0}, np.empty((1, 4, 5, 5), dtype), N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnMaxPool2dWithIndices")
def max_pool(rng, dtype):
    x = rng.permutation(2 * 36).reshape(1, 2, 6, 6).astype(np.float32).astype(dtype)
    values, indices = torch.nn.functional.max_pool2d(T(x).float(), 2, 2, return_indices=True)
    return {"self": x, "kernelSize": [2, 2], "stride": [2, 2], "padding": [0, 0],
            "dilation": [1, 1], "ceilMode": False}, \
        (np.empty((1, 2, 3, 3), dtype), np.empty((1, 2, 3, 3), np.int64)), \
        (N(values.to(TORCH_DTYPES[dtype])), N(indices))


@case("aclnnMaxPool2dWithMask")
def max_pool_mask(rng, dtype):
    x = rng.permutation(2 * 49).reshape(1, 2, 7, 7).astype(np.float32).astype(dtype)
    values = torch.nn.functional.max_pool2d(T(x).float(), 3, 2, 1)
    mask_width = (-(-9 // 16) + 1) * 32  # the doc's (ceil(OH OW / 16) + 1) 2 16 for 3x3
    return {"self": x, "kernelSize": [3, 3], "stride": [2, 2], "padding": [1, 1],
            "dilation": [1, 1], "ceilMode": False}, \
        (np.empty((1, 2, 4, 4), dtype), np.empty((1, 2, 9, mask_width), np.int8)), \
        (N(values.to(TORCH_DTYPES[dtype])), None)


@case("aclnnMaxPool2dWithMaskBackward")
def max_pool_mask_backward(rng, dtype):
    """The forward's mask, then the gradient: PyTorch's max_pool2d backward (overlapping
    windows: 3x3, stride 2)."""
    x = rng.permutation(2 * 49).reshape(1, 2, 7, 7).astype(np.float32).astype(dtype)
    _, mask = aclnn_py.call("aclnnMaxPool2dWithMask", x, [3, 3], [2, 2], [1, 1], [1, 1], False,
                            out=(np.empty((1, 2, 4, 4), dtype), np.empty((1, 2, 9, 64), np.int8)))
    g = rand(rng, (1, 2, 4, 4), dtype)
    xt = T(x).float().requires_grad_(True)
    (grad,) = torch.autograd.grad(torch.nn.functional.max_pool2d(xt, 3, 2, 1), xt, T(g).float())
    return {"gradOutput": g, "self": x, "indices": mask, "kernelSize": [3, 3], "stride": [2, 2],
            "padding": [1, 1], "dilation": [1, 1], "ceilMode": False}, \
        np.empty((1, 2, 7, 7), dtype), N(grad.to(TORCH_DTYPES[dtype]))


@case("aclnnAvgPool2d")
def avg_pool(rng, dtype):
    x = rand(rng, (1, 2, 6, 6), dtype)
    expected = torch.nn.functional.avg_pool2d(T(x).float(), 2, 2)
    return {"self": x, "kernelSize": [2, 2], "strides": [2, 2], "paddings": [0, 0],
            "ceilMode": False, "countIncludePad": True, "divisorOverride": 0,
            "cubeMathType": 0}, np.empty((1, 2, 3, 3), dtype), N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnAdaptiveAvgPool2d")
def adaptive_avg_pool2d(rng, dtype):
    # 7 x 5 into 3 x 2: overlapping windows of uneven sizes
    x = rand(rng, (2, 3, 7, 5), dtype)
    expected = torch.nn.functional.adaptive_avg_pool2d(T(x).float(), (3, 2))
    return {"self": x, "outputSize": [3, 2]}, np.empty((2, 3, 3, 2), dtype), \
        N(expected.to(TORCH_DTYPES[dtype]))


def _grad_of(function, x, g):
    """PyTorch's gradient of ``function`` at x (float32) for the output gradient g."""
    xt = T(x).float().requires_grad_(True)
    (grad,) = torch.autograd.grad(function(xt), xt, T(g).float())
    return grad


@case("aclnnAvgPool2dBackward")
def avg_pool_backward(rng, dtype):
    # 3x3 windows, stride 2, padding 1, ceil mode: overlapping windows and a partial last one
    x, g = rand(rng, (1, 2, 6, 6), dtype), rand(rng, (1, 2, 4, 4), dtype)
    grad = _grad_of(lambda v: torch.nn.functional.avg_pool2d(v, 3, 2, 1, True, False), x, g)
    return {"gradOutput": g, "self": x, "kernelSize": [3, 3], "stride": [2, 2],
            "padding": [1, 1], "ceilMode": True, "countIncludePad": False,
            "divisorOverride": 0, "cubeMathType": 0}, np.empty((1, 2, 6, 6), dtype), \
        N(grad.to(TORCH_DTYPES[dtype]))


@case("aclnnAvgPool3d")
def avg_pool3d(rng, dtype):
    x = rand(rng, (1, 2, 5, 6, 6), dtype)
    expected = torch.nn.functional.avg_pool3d(T(x).float(), 3, 2, 1, False, True)
    return {"self": x, "kernelSize": [3], "stride": [2, 2, 2], "padding": [1],
            "ceilMode": False, "countIncludePad": True, "divisorOverride": 0}, \
        np.empty((1, 2, 3, 3, 3), dtype), N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnAvgPool3dBackward")
def avg_pool3d_backward(rng, dtype):
    x, g = rand(rng, (2, 1, 4, 5, 5), dtype), rand(rng, (2, 1, 3, 3, 3), dtype)
    grad = _grad_of(lambda v: torch.nn.functional.avg_pool3d(v, 2, 2, 1, False, False), x, g)
    return {"gradOutput": g, "self": x, "kernelSize": [2, 2, 2], "stride": [2, 2, 2],
            "padding": [1, 1, 1], "ceilMode": False, "countIncludePad": False,
            "divisorOverride": 0}, np.empty((2, 1, 4, 5, 5), dtype), \
        N(grad.to(TORCH_DTYPES[dtype]))


@case("aclnnAdaptiveAvgPool2dBackward")
def adaptive_avg_pool2d_backward(rng, dtype):
    x, g = rand(rng, (2, 3, 7, 5), dtype), rand(rng, (2, 3, 3, 2), dtype)
    grad = _grad_of(lambda v: torch.nn.functional.adaptive_avg_pool2d(v, (3, 2)), x, g)
    return {"gradOutput": g, "self": x}, np.empty((2, 3, 7, 5), dtype), \
        N(grad.to(TORCH_DTYPES[dtype]))


@case("aclnnAdaptiveAvgPool3d")
def adaptive_avg_pool3d(rng, dtype):
    x = rand(rng, (2, 5, 7, 4), dtype)
    expected = torch.nn.functional.adaptive_avg_pool3d(T(x).float(), (3, 2, 3))
    return {"self": x, "outputSize": [3, 2, 3]}, np.empty((2, 3, 2, 3), dtype), \
        N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnAdaptiveAvgPool3dBackward")
def adaptive_avg_pool3d_backward(rng, dtype):
    x, g = rand(rng, (1, 2, 5, 7, 4), dtype), rand(rng, (1, 2, 3, 2, 3), dtype)
    grad = _grad_of(lambda v: torch.nn.functional.adaptive_avg_pool3d(v, (3, 2, 3)), x, g)
    return {"gradOutput": g, "self": x}, np.empty((1, 2, 5, 7, 4), dtype), \
        N(grad.to(TORCH_DTYPES[dtype]))


def _distinct(rng, shape, dtype):
    """Values without ties (so every max pool picks one index)."""
    return (rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32) / 8
            ).astype(dtype)


@case("aclnnAdaptiveMaxPool2d")
def adaptive_max_pool2d(rng, dtype):
    x = _distinct(rng, (2, 3, 7, 5), dtype)
    values, indices = torch.nn.functional.adaptive_max_pool2d(T(x).float(), (3, 2),
                                                              return_indices=True)
    return {"self": x, "outputSize": [3, 2]}, \
        (np.empty((2, 3, 3, 2), dtype), np.empty((2, 3, 3, 2), np.int64)), \
        (N(values.to(TORCH_DTYPES[dtype])), N(indices))


@case("aclnnAdaptiveMaxPool3d")
def adaptive_max_pool3d(rng, dtype):
    x = _distinct(rng, (1, 2, 5, 4, 6), dtype)
    values, indices = torch.nn.functional.adaptive_max_pool3d(T(x).float(), (2, 3, 4),
                                                              return_indices=True)
    return {"self": x, "outputSize": [2, 3, 4]}, \
        (np.empty((1, 2, 2, 3, 4), dtype), np.empty((1, 2, 2, 3, 4), np.int32)), \
        (N(values.to(TORCH_DTYPES[dtype])), N(indices))


def _max_grad_case(rng, dtype, forward, shape, out_shape, index_dtype):
    """A max pool's gradient from its own indices (overlapping windows send several
    gradients to one element)."""
    x = _distinct(rng, shape, dtype)
    _, indices = forward(T(x).float())
    g = rand(rng, out_shape, dtype)
    grad = _grad_of(lambda v: forward(v)[0], x, g)
    return x, g, N(indices).astype(index_dtype), N(grad.to(TORCH_DTYPES[dtype]))


@case("aclnnAdaptiveMaxPool2dBackward")
def adaptive_max_pool2d_backward(rng, dtype):
    x, g, i, grad = _max_grad_case(rng, dtype, lambda v: torch.nn.functional.adaptive_max_pool2d(
        v, (4, 3), return_indices=True), (2, 2, 7, 5), (2, 2, 4, 3), np.int64)
    return {"gradOutput": g, "self": x, "indices": i}, np.empty(x.shape, dtype), grad


@case("aclnnAdaptiveMaxPool3dBackward")
def adaptive_max_pool3d_backward(rng, dtype):
    x, g, i, grad = _max_grad_case(rng, dtype, lambda v: torch.nn.functional.adaptive_max_pool3d(
        v, (2, 3, 2), return_indices=True), (1, 2, 3, 5, 3), (1, 2, 2, 3, 2), np.int32)
    return {"gradOutput": g, "self": x, "indices": i}, np.empty(x.shape, dtype), grad


@case("aclnnMaxPool2dWithIndicesBackward", dtypes=("float32",))
def max_pool2d_with_indices_backward(rng, dtype):
    x, g, i, grad = _max_grad_case(rng, dtype, lambda v: torch.nn.functional.max_pool2d(
        v, 3, 2, 1, return_indices=True), (2, 2, 7, 7), (2, 2, 4, 4), np.int32)
    return {"gradOutput": g, "self": x, "indices": i, "kernelSize": [3, 3], "stride": [2, 2],
            "padding": [1, 1], "dilation": [1, 1], "ceilMode": False}, \
        np.empty(x.shape, dtype), grad


@case("aclnnSwigluClamp", "both clamps reached", dtypes=("float32", "float16", "bfloat16"))
def swiglu_clamp(rng, dtype):
    x = rand(rng, (3, 2, 16), dtype, -12, 12)
    gate, up = T(x).float()[..., :8], T(x).float()[..., 8:]
    y = F.silu(gate).clamp(max=5.0) * up.clamp(-5.0, 5.0)
    return {"x": x, "limit": 5.0}, np.empty((3, 2, 8), dtype), N(y.to(TORCH_DTYPES[dtype]))


@case("aclnnMaxPool3D", "NDHWC, SAME padding, strides 2", dtypes=("float16", "float32", "bfloat16"))
def max_pool3d_same(rng, dtype):
    x = rand(rng, (2, 5, 6, 7, 3), dtype)
    # SAME: out ceil(in / 2) = (3, 3, 4), total pads (2, 1, 2), the smaller half before
    v = F.pad(T(x).float().permute(0, 4, 1, 2, 3), (1, 1, 0, 1, 1, 1), value=float("-inf"))
    y = F.max_pool3d(v, 3, 2).permute(0, 2, 3, 4, 1)
    return {"x": x, "ksize": [1, 3, 3, 3, 1], "strides": [1, 2, 2, 2, 1], "padding": "SAME",
            "padsOptional": [0] * 6, "dilationOptional": [1] * 5, "ceilMode": 0,
            "dataFormatOptional": "NDHWC"}, np.empty((2, 3, 3, 4, 3), dtype), \
        N(y.to(TORCH_DTYPES[dtype]))


@case("aclnnMaxPool3D", "NCDHW, CALCULATED pads, ceilMode, dilation", dtypes=("float32",))
def max_pool3d_calculated(rng, dtype):
    x = rand(rng, (1, 2, 6, 7, 8), dtype)
    y = F.max_pool3d(T(x), (2, 3, 2), (2, 2, 3), (1, 1, 0), (1, 2, 1), ceil_mode=True)
    return {"x": x, "ksize": [2, 3, 2], "strides": [2, 2, 3], "padding": "CALCULATED",
            "padsOptional": [1, 1, 1, 1, 0, 0], "dilationOptional": [1, 2, 1], "ceilMode": 1,
            "dataFormatOptional": "NCDHW"}, np.empty(tuple(y.shape), dtype), N(y)


@case("aclnnMaxPool3dWithArgmax")
def max_pool3d_with_argmax(rng, dtype):
    x = _distinct(rng, (1, 2, 5, 6, 5), dtype)
    values, indices = torch.nn.functional.max_pool3d(T(x).float(), 3, 2, 1, ceil_mode=True,
                                                     return_indices=True)
    out = tuple(values.shape)
    return {"self": x, "kernelSize": [3, 3, 3], "stride": [2, 2, 2], "padding": [1, 1, 1],
            "dilation": [1, 1, 1], "ceilMode": True}, \
        (np.empty(out, dtype), np.empty(out, np.int32)), \
        (N(values.to(TORCH_DTYPES[dtype])), N(indices))


@case("aclnnMaxPool3dWithArgmaxBackward")
def max_pool3d_with_argmax_backward(rng, dtype):
    x, g, i, grad = _max_grad_case(rng, dtype, lambda v: torch.nn.functional.max_pool3d(
        v, 3, 2, 1, return_indices=True), (1, 2, 5, 5, 5), (1, 2, 3, 3, 3), np.int32)
    return {"gradOutput": g, "self": x, "indices": i, "kernelSize": [3], "stride": [2],
            "padding": [1], "dilation": [1], "ceilMode": False}, np.empty(x.shape, dtype), grad


@case("aclnnMaxPool", dtypes=("float32", "float16"))
def max_pool_onnx(rng, dtype):
    # ONNX pads (top, left, bottom, right) = (1, 0, 0, 1)
    x = rand(rng, (2, 3, 6, 5), dtype)
    padded = torch.nn.functional.pad(T(x).float(), (0, 1, 1, 0), value=-float("inf"))
    expected = torch.nn.functional.max_pool2d(padded, (3, 2), 2)
    return {"self": x, "kernelShape": [3, 2], "strides": [2, 2], "autoPad": 0,
            "pads": [1, 0, 0, 1], "dilations": [1, 1], "ceilMode": 0}, \
        np.empty(tuple(expected.shape), dtype), N(expected.to(TORCH_DTYPES[dtype]))


def _max_unpool_backward_case(rng, dtype, rank):
    shape, out = ((2, 3, 4), (2, 6, 8)) if rank == 2 else ((2, 2, 3, 2), (2, 4, 6, 4))
    x = _distinct(rng, (1, *shape), dtype)
    g = rand(rng, (1, *out), dtype)
    plane = int(np.prod(out[1:]))
    indices = np.stack([rng.permutation(plane)[:int(np.prod(shape[1:]))]
                        for _ in range(shape[0])]).reshape((1, *shape)).astype(np.int64)
    expected = torch.gather(T(g).float().reshape(shape[0], -1), 1,
                            T(indices).reshape(shape[0], -1)).reshape(1, *shape)
    return x, g, indices, out, N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnMaxUnpool2dBackward", dtypes=("float32", "float16"))
def max_unpool2d_backward(rng, dtype):
    x, g, indices, out, expected = _max_unpool_backward_case(rng, dtype, 2)
    return {"gradOutput": g, "self": x, "indices": indices, "outputSize": list(out[1:])}, \
        np.empty(x.shape, dtype), expected


@case("aclnnMaxUnpool3dBackward", dtypes=("float32", "float16"))
def max_unpool3d_backward(rng, dtype):
    x, g, indices, out, expected = _max_unpool_backward_case(rng, dtype, 3)
    return {"gradOutput": g, "self": x, "indices": indices, "outputSize": list(out[1:]),
            "stride": [2, 2, 2], "padding": [0, 0, 0]}, np.empty(x.shape, dtype), expected


@case("aclnnEmbedding")
def embedding(rng, dtype):
    w = rand(rng, (5, 3), dtype)
    i = np.array([[0, 4], [2, 2]], np.int64)
    return {"weight": w, "indices": i}, np.empty((2, 2, 3), dtype), \
        N(torch.nn.functional.embedding(T(i), T(w)))


@case("aclnnDot")
def dot(rng, dtype):
    a, b = rand(rng, (7,), dtype), rand(rng, (7,), dtype)
    return {"self": a, "tensor": b}, np.empty((), dtype), \
        N(torch.dot(T(a).float(), T(b).float()).to(TORCH_DTYPES[dtype]))


# ---- shapes -------------------------------------------------------------------------------


@case("aclnnCat")
def cat(rng, dtype):
    a, b = rand(rng, (2, 3), dtype), rand(rng, (4, 3), dtype)
    return {"tensors": [a, b], "dim": 0}, np.empty((6, 3), dtype), N(torch.cat([T(a), T(b)], 0))


@case("aclnnStack")
def stack(rng, dtype):
    a, b = rand(rng, (2, 3), dtype), rand(rng, (2, 3), dtype)
    return {"tensors": [a, b], "dim": 1}, np.empty((2, 2, 3), dtype), \
        N(torch.stack([T(a), T(b)], 1))


@case("aclnnSplitTensor")
def split_tensor(rng, dtype):
    a = rand(rng, (5, 2), dtype)
    pieces = torch.split(T(a), 2, 0)
    return {"self": a, "splitSections": 2, "dim": 0}, \
        [[np.empty(tuple(p.shape), dtype) for p in pieces]], [N(p) for p in pieces]


@case("aclnnSplitWithSize")
def split_with_size(rng, dtype):
    a = rand(rng, (2, 6), dtype)
    pieces = torch.split(T(a), [1, 5], 1)
    return {"self": a, "splitSize": [1, 5], "dim": 1}, \
        [[np.empty(tuple(p.shape), dtype) for p in pieces]], [N(p) for p in pieces]


@case("aclnnGather")
def gather(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    i = rng.integers(0, 4, (3, 2)).astype(np.int64)
    return {"self": a, "dim": 1, "index": i}, np.empty((3, 2), dtype), \
        N(torch.gather(T(a), 1, T(i)))


@case("aclnnGatherV2")
def gather_v2(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    i = np.array([2, 0, 2], np.int64)
    return {"self": a, "dim": 0, "index": i}, np.empty((3, 4), dtype), \
        N(torch.index_select(T(a), 0, T(i)))


@case("aclnnIndexSelect")
def index_select(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    i = np.array([3, 0], np.int64)
    return {"self": a, "dim": 1, "index": i}, np.empty((3, 2), dtype), \
        N(torch.index_select(T(a), 1, T(i)))


@case("aclnnTake")
def take(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    i = np.array([[11, 0], [5, 5]], np.int64)
    return {"self": a, "index": i}, np.empty((2, 2), dtype), N(torch.take(T(a), T(i)))


@case("aclnnScatter")
def scatter(rng, dtype):
    a, s = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype)
    i = np.array([[0, 1, 2, 0], [2, 0, 1, 1]], np.int64)
    return {"self": a, "dim": 0, "index": i, "src": s, "reduce": 0}, np.empty((3, 4), dtype), \
        N(torch.scatter(T(a), 0, T(i), T(s)))


@case("aclnnScatterAdd")
def scatter_add(rng, dtype):
    a, s = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype)
    i = np.array([[0, 1, 2, 0], [0, 0, 1, 1]], np.int64)
    expected = torch.scatter_add(T(a).float(), 0, T(i), T(s).float())
    return {"self": a, "dim": 0, "index": i, "src": s}, np.empty((3, 4), dtype), \
        N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnIndexFill")
def index_fill(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    i = np.array([1, 3], np.int64)
    return {"self": a, "dim": 1, "index": i, "value": 2.5}, np.empty((3, 4), dtype), \
        N(torch.index_fill(T(a), 1, T(i), 2.5))


@case("aclnnMaskedSelect")
def masked_select(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    m = np.array([[True, False, True, True]])
    expected = torch.masked_select(T(a), T(m))
    # CANN's out holds what the broadcast could select; the call returns the real extent
    return {"self": a, "mask": m}, np.empty((a.size,), dtype), N(expected)


@case("aclnnFlip")
def flip(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    return {"self": a, "dims": [0, 1]}, None, N(torch.flip(T(a), (0, 1)))


@case("aclnnRoll")
def roll(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    return {"x": a, "shifts": [1, -2], "dims": [0, 1]}, None, N(torch.roll(T(a), (1, -2), (0, 1)))


@case("aclnnPermute")
def permute(rng, dtype):
    a = rand(rng, (2, 3, 4), dtype)
    return {"self": a, "dims": [2, 0, 1]}, np.empty((4, 2, 3), dtype), \
        N(T(a).permute(2, 0, 1).contiguous())


@case("aclnnExpand")
def expand(rng, dtype):
    a = rand(rng, (3, 1), dtype)
    return {"self": a, "size": [2, 3, 4]}, np.empty((2, 3, 4), dtype), \
        N(T(a).expand(2, 3, 4).contiguous())


@case("aclnnRepeat")
def repeat(rng, dtype):
    a = rand(rng, (2, 3), dtype)
    return {"self": a, "repeats": [2, 1, 2]}, np.empty((2, 2, 6), dtype), N(T(a).repeat(2, 1, 2))


for _short, _function in (("Tril", torch.tril), ("Triu", torch.triu)):
    def _triangle(rng, dtype, function=_function):
        a = rand(rng, (4, 5), dtype)
        return {"self": a, "diagonal": 1}, None, N(function(T(a), 1))
    case(f"aclnn{_short}")(_triangle)


@case("aclnnSort")
def sort(rng, dtype):
    a = rng.permutation(15).reshape(3, 5).astype(np.float32).astype(dtype)
    values, indices = torch.sort(T(a), dim=1, descending=True, stable=True)
    return {"self": a, "stable": True, "dim": 1, "descending": True}, \
        (np.empty((3, 5), dtype), np.empty((3, 5), np.int64)), (N(values), N(indices))


@case("aclnnArgsort")
def argsort(rng, dtype):
    a = rng.permutation(15).reshape(3, 5).astype(np.float32).astype(dtype)
    return {"self": a, "dim": 0, "descending": False}, np.empty((3, 5), np.int64), \
        N(torch.argsort(T(a), dim=0, stable=True))


@case("aclnnTopk")
def topk(rng, dtype):
    a = rng.permutation(20).reshape(4, 5).astype(np.float32).astype(dtype)
    values, indices = torch.topk(T(a), 2, 1)
    return {"self": a, "k": 2, "dim": 1, "largest": True, "sorted": True}, \
        (np.empty((4, 2), dtype), np.empty((4, 2), np.int64)), (N(values), N(indices))


@case("aclnnArange", dtypes=("float32",))
def arange(rng, dtype):
    return {"start": 1.0, "end": 4.0, "step": 0.5}, np.empty((6,), dtype), \
        N(torch.arange(1.0, 4.0, 0.5))


@case("aclnnLinspace", dtypes=("float32",))
def linspace(rng, dtype):
    return {"start": -1.0, "end": 1.0, "steps": 5}, np.empty((5,), dtype), \
        N(torch.linspace(-1, 1, 5))


@case("aclnnEye", dtypes=("float32",))
def eye(rng, dtype):
    return {"n": 3, "m": 4}, np.empty((3, 4), dtype), N(torch.eye(3, 4))


@case("aclnnInplaceCopy")
def inplace_copy(rng, dtype):
    s = rand(rng, (1, 4), dtype)
    return {"selfRef": np.zeros((3, 4), dtype), "src": s}, None, np.broadcast_to(s, (3, 4))


@case("aclnnConstantPadNd")
def constant_pad(rng, dtype):
    a = rand(rng, (2, 3), dtype)
    return {"self": a, "pad": [1, 2, 0, 1], "value": 0.5}, np.empty((3, 6), dtype), \
        N(torch.nn.functional.pad(T(a), (1, 2, 0, 1), value=0.5))


# ---- reflection, replication and circular padding (kernels/padding.py) ----------------------

_PAD_MODES = {"Reflection": "reflect", "Replication": "replicate", "Circular": "circular"}
# per padded-dims count: self's shape and padding (a negative width crops)
_PAD_SHAPES = {1: ((3, 5, 6), [2, -1]), 2: ((2, 3, 5, 6), [2, 1, -1, 3]),
               3: ((1, 2, 4, 5, 6), [2, 1, 1, 3, 1, 0])}


def _pad_case(kind, dims, backward):
    mode = _PAD_MODES[kind]
    shape, padding = _PAD_SHAPES[dims]

    def make(rng, dtype):
        x = rand(rng, shape, dtype)
        padded = torch.nn.functional.pad(T(x).float(), padding, mode=mode)
        if not backward:
            return {"self": x, "padding": padding}, np.empty(tuple(padded.shape), dtype), \
                N(padded.to(TORCH_DTYPES[dtype]))
        g = rand(rng, tuple(padded.shape), dtype)
        grad = _grad_of(lambda v: torch.nn.functional.pad(v, padding, mode=mode), x, g)
        return {"gradOutput": g, "self": x, "padding": padding}, np.empty(shape, dtype), \
            N(grad.to(TORCH_DTYPES[dtype]))
    return make


for _kind, _dims in (("Reflection", 1), ("Reflection", 2), ("Reflection", 3),
                     ("Replication", 1), ("Replication", 2), ("Replication", 3),
                     ("Circular", 2), ("Circular", 3)):
    case(f"aclnn{_kind}Pad{_dims}d", "pad")(_pad_case(_kind, _dims, False))
    case(f"aclnn{_kind}Pad{_dims}dBackward", "pad_backward",
         dtypes=("float32", "float16"))(_pad_case(_kind, _dims, True))


# ---- diagonals, slices, flatten, channel shuffle, chunk cat (kernels/conversion.py) ---------

@case("aclnnDiag", "vector")
def diag_vector(rng, dtype):
    x = rand(rng, (4,), dtype)
    return {"self": x, "diagonal": -2}, np.empty((6, 6), dtype), \
        N(torch.diag(T(x), -2))


@case("aclnnDiag", "matrix")
def diag_matrix(rng, dtype):
    x = rand(rng, (4, 6), dtype)
    return {"self": x, "diagonal": 1}, np.empty((4,), dtype), N(torch.diag(T(x), 1))


@case("aclnnDiagFlat")
def diag_flat(rng, dtype):
    x = rand(rng, (2, 3), dtype)
    return {"self": x, "diagonal": 1}, np.empty((7, 7), dtype), N(torch.diagflat(T(x), 1))


@case("aclnnInplaceFillDiagonal", "wrapped")
def fill_diagonal_wrapped(rng, dtype):
    x = rand(rng, (7, 3), dtype)
    expected = T(x).clone().fill_diagonal_(0.5, wrap=True)
    return {"selfRef": x.copy(), "fillValue": 0.5, "wrap": True}, None, N(expected)


@case("aclnnInplaceFillDiagonal", "cube")
def fill_diagonal_cube(rng, dtype):
    x = rand(rng, (3, 3, 3), dtype)
    expected = T(x).clone().fill_diagonal_(-1.0)
    return {"selfRef": x.copy(), "fillValue": -1.0, "wrap": False}, None, N(expected)


@case("aclnnFlatten")
def flatten_(rng, dtype):
    x = rand(rng, (2, 3, 4), dtype)
    return {"self": x, "axis": -1}, np.empty((6, 4), dtype), x.reshape(6, 4)


@case("aclnnSlice")
def slice_case(rng, dtype):
    x = rand(rng, (3, 10), dtype)
    return {"self": x, "dim": -1, "start": -8, "end": 100, "step": 3}, np.empty((3, 3), dtype), \
        x[:, 2::3]


@case("aclnnSliceV2")
def slice_v2_case(rng, dtype):
    x = rand(rng, (4, 5, 6), dtype)
    return {"self": x, "starts": [1, -4], "ends": [4, 6], "axes": [0, 2], "steps": [2, 1]}, \
        np.empty((2, 5, 4), dtype), x[1:4:2, :, 2:6]


@case("aclnnChannelShuffle")
def channel_shuffle_case(rng, dtype):
    x = rand(rng, (2, 6, 2, 3), dtype)
    return {"self": x, "groups": 3}, np.empty_like(x), \
        N(torch.nn.functional.channel_shuffle(T(x), 3))


@case("aclnnChunkCat")
def chunk_cat_case(rng, dtype):
    tensors = [rand(rng, (5, 3), dtype), rand(rng, (3,), dtype), rand(rng, (4, 2, 2), dtype)]
    expected = torch._chunk_cat([T(t) for t in tensors], 0, 2)
    return {"tensors": tensors, "dim": 0, "numChunks": 2}, \
        np.empty(tuple(expected.shape), dtype), N(expected)


@case("aclnnIm2col")
def im2col_case(rng, dtype):
    x = rand(rng, (2, 3, 7, 6), dtype)
    expected = torch.nn.functional.unfold(T(x), (3, 2), dilation=(1, 2), padding=(1, 0),
                                          stride=(2, 1))
    return {"self": x, "kernelSize": [3, 2], "dilation": [1, 2], "padding": [1, 0],
            "stride": [2, 1]}, np.empty(tuple(expected.shape), dtype), N(expected)


@case("aclnnUnfoldGrad")
def unfold_grad_case(rng, dtype):
    # windows of 3, step 2, along dim 1: overlapping windows share an element
    g = rand(rng, (4, 4, 3, 3), dtype)
    xt = torch.zeros(4, 9, 3, requires_grad=True)
    (grad,) = torch.autograd.grad(xt.unfold(1, 3, 2), xt, T(g).float())
    return {"gradOut": g, "inputSizes": [4, 9, 3], "dim": 1, "size": 3, "step": 2}, \
        np.empty((4, 9, 3), dtype), N(grad.to(TORCH_DTYPES[dtype]))


@case("aclnnStridedSliceAssignV2")
def strided_slice_assign_case(rng, dtype):
    var, value = rand(rng, (5, 4, 6), dtype), rand(rng, (2, 4, 3), dtype)
    expected = var.copy()
    expected[1:5:2, :, -4:-1] = value
    return {"varRef": var.copy(), "inputValue": value, "begin": [1, -4], "end": [5, -1],
            "strides": [2, 1], "axesOptional": [0, -1]}, None, expected


# ---- matmul -------------------------------------------------------------------------------


def _matmul(rng, dtype, shapes, function):
    a, b = rand(rng, shapes[0], dtype), rand(rng, shapes[1], dtype)
    expected = function(T(a).float(), T(b).float()).to(TORCH_DTYPES[dtype])
    return a, b, N(expected)


@case("aclnnMm")
def mm(rng, dtype):
    a, b, expected = _matmul(rng, dtype, ((3, 5), (5, 4)), torch.mm)
    return {"self": a, "mat2": b, "cubeMathType": 0}, np.empty((3, 4), dtype), expected


@case("aclnnMatmul", "broadcast batch")
def matmul(rng, dtype):
    a, b, expected = _matmul(rng, dtype, ((2, 3, 5), (5, 4)), torch.matmul)
    return {"self": a, "mat2": b, "cubeMathType": 0}, np.empty((2, 3, 4), dtype), expected


@case("aclnnBatchMatMul")
def batch_matmul(rng, dtype):
    a, b, expected = _matmul(rng, dtype, ((2, 3, 5), (2, 5, 4)), torch.bmm)
    return {"self": a, "mat2": b, "cubeMathType": 0}, np.empty((2, 3, 4), dtype), expected


@case("aclnnMv")
def mv(rng, dtype):
    a, b, expected = _matmul(rng, dtype, ((3, 5), (5,)), torch.mv)
    return {"self": a, "vec": b, "cubeMathType": 0}, np.empty((3,), dtype), expected


@case("aclnnAddmm")
def addmm(rng, dtype):
    c, a, b = rand(rng, (3, 4), dtype), rand(rng, (3, 5), dtype), rand(rng, (5, 4), dtype)
    expected = torch.addmm(T(c).float(), T(a).float(), T(b).float(), beta=0.5, alpha=2.0)
    return {"self": c, "mat1": a, "mat2": b, "beta": 0.5, "alpha": 2.0, "cubeMathType": 0}, \
        np.empty((3, 4), dtype), N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnBaddbmm")
def baddbmm(rng, dtype):
    c = rand(rng, (2, 3, 4), dtype)
    a, b = rand(rng, (2, 3, 5), dtype), rand(rng, (2, 5, 4), dtype)
    expected = torch.baddbmm(T(c).float(), T(a).float(), T(b).float(), beta=0.5, alpha=2.0)
    return {"self": c, "batch1": a, "batch2": b, "beta": 0.5, "alpha": 2.0, "cubeMathType": 0}, \
        np.empty((2, 3, 4), dtype), N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnAddbmm")
def addbmm(rng, dtype):
    c = rand(rng, (1, 4), dtype)
    a, b = rand(rng, (3, 2, 5), dtype), rand(rng, (3, 5, 4), dtype)
    expected = torch.addbmm(T(c).float(), T(a).float(), T(b).float(), beta=0.5, alpha=2.0)
    return {"self": c, "batch1": a, "batch2": b, "beta": 0.5, "alpha": 2.0, "cubeMathType": 0}, \
        np.empty((2, 4), dtype), N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnGemm", "transA, C broadcast")
def gemm(rng, dtype):
    a, b, c = rand(rng, (5, 3), dtype), rand(rng, (5, 4), dtype), rand(rng, (1, 4), dtype)
    expected = 1.5 * (T(a).float().T @ T(b).float()) + 0.5 * T(c).float()
    return {"A": a, "B": b, "C": c, "alpha": 1.5, "beta": 0.5, "transA": 1, "transB": 0,
            "cubeMathType": 0}, np.empty((3, 4), dtype), N(expected.to(TORCH_DTYPES[dtype]))


# ---- the quant family: AscendQuant and AscendAntiQuant (ops-nn quant/ docs' formulas) --------


@case("aclnnAscendQuant")
def ascend_quant(rng, dtype):
    x, scale, offset = rand(rng, (4, 6), dtype, -40, 40), rand(rng, (6,), dtype, 0.5, 4), \
        rand(rng, (6,), dtype)
    value = T(x).float() * T(scale).float() + T(offset).float()
    expected = torch.clamp(torch.round(value), -128, 127).to(torch.int8)  # ties to even
    return {"x": x, "scale": scale, "offset": offset, "sqrtMode": False, "roundMode": "round",
            "dstType": 2}, np.empty((4, 6), np.int8), N(expected)


@case("aclnnAscendQuant", "sqrtMode, floor")
def ascend_quant_floor(rng, dtype):
    x, scale, offset = rand(rng, (3, 5), dtype, -40, 40), rand(rng, (1,), dtype, 0.5, 2), \
        rand(rng, (1,), dtype)
    value = T(x).float() * T(scale).float() * T(scale).float() + T(offset).float()
    expected = torch.clamp(torch.floor(value), -128, 127).to(torch.int8)
    return {"x": x, "scale": scale, "offset": offset, "sqrtMode": True, "roundMode": "floor",
            "dstType": 2}, np.empty((3, 5), np.int8), N(expected)


@case("aclnnAscendQuantV3", "axis -2, ceil")
def ascend_quant_v3(rng, dtype):
    x, scale, offset = rand(rng, (2, 4, 3), dtype, -40, 40), rand(rng, (4,), dtype, 0.5, 4), \
        rand(rng, (4,), dtype)
    value = T(x).float() * T(scale).float()[:, None] + T(offset).float()[:, None]
    expected = torch.clamp(torch.ceil(value), -128, 127).to(torch.int8)
    return {"x": x, "scale": scale, "offset": offset, "sqrtMode": False, "roundMode": "ceil",
            "dstType": 2, "axis": -2}, np.empty((2, 4, 3), np.int8), N(expected)


@case("aclnnAscendAntiQuant", dtypes=("float16", "bfloat16"))
def ascend_anti_quant(rng, dtype):
    x = rng.integers(-128, 128, (4, 6)).astype(np.int8)
    scale, offset = rand(rng, (6,), np.float32, 0.1, 2), rand(rng, (6,), np.float32)
    expected = (T(x).float() + T(offset)) * T(scale)
    return {"x": x, "scale": scale, "offset": offset, "sqrtMode": False,
            "dstType": 1 if dtype == np.float16 else 27}, np.empty((4, 6), dtype), \
        N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnAscendAntiQuant", "sqrtMode", dtypes=("float16",))
def ascend_anti_quant_sqrt(rng, dtype):
    x = rng.integers(-128, 128, (2, 3, 4)).astype(np.int8)
    # offset has scale's shape (ascend_anti_quant_v2 op_api aclnn_ascend_anti_quant.cpp CheckDim)
    scale, offset = rand(rng, (4,), np.float32, 0.1, 2), rand(rng, (4,), np.float32)
    expected = (T(x).float() + T(offset)) * T(scale) * T(scale)
    return {"x": x, "scale": scale, "offset": offset, "sqrtMode": True, "dstType": 1}, \
        np.empty((2, 3, 4), dtype), N(expected.to(TORCH_DTYPES[dtype]))


# ---- the foreach family: one operation over each tensor of a list ----------------------------

FOREACH_SHAPES = ((2, 3), (4,), ())


def _foreach_inputs(rng: np.random.Generator, dtype: np.dtype, low: float = -2.0,
                    high: float = 2.0) -> list[np.ndarray]:
    return [rand(rng, shape, dtype, low, high) for shape in FOREACH_SHAPES]


def _empty_like(tensors: list[np.ndarray]) -> list[list[np.ndarray]]:
    return [[np.empty_like(t) for t in tensors]]


FOREACH_UNARY_TORCH = {**{short: UNARY_TORCH[short] for short in (
    "Abs", "Acos", "Asin", "Atan", "Cos", "Cosh", "Erf", "Exp", "Expm1", "Log", "Log10",
    "Log1p", "Log2", "Neg", "Reciprocal", "Sigmoid", "Sign", "Sin", "Sinh", "Sqrt", "Tan",
    "Tanh")}, "Erfc": torch.erfc}

for _short, _function in FOREACH_UNARY_TORCH.items():
    def _foreach_unary(rng, dtype, short=_short, function=_function):
        x = _foreach_inputs(rng, dtype, *_domain(short))
        return {"x": x}, _empty_like(x), [N(function(T(t))) for t in x]
    case(f"aclnnForeach{_short}")(_foreach_unary)


@case("aclnnForeachCopy")
def foreach_copy(rng, dtype):
    x = _foreach_inputs(rng, dtype)
    return {"x": x}, _empty_like(x), [t.copy() for t in x]


@case("aclnnForeachZeroInplace")
def foreach_zero_inplace(rng, dtype):
    x = _foreach_inputs(rng, dtype)
    return {"x": [t.copy() for t in x]}, None, [np.zeros_like(t) for t in x]


FOREACH_BINARY_TORCH = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div,
                        "Maximum": torch.maximum, "Minimum": torch.minimum, "Pow": torch.pow}

for _short, _function in FOREACH_BINARY_TORCH.items():
    def _foreach_scalar(rng, dtype, function=_function, v2=False):
        x = _foreach_inputs(rng, dtype, 0.5, 2.0)
        scalar: Any = 1.75 if v2 else np.array([1.75], np.float32 if dtype == BF16 else dtype)
        return {"x": x, "scalar": scalar}, _empty_like(x), \
            [N(function(T(t).float(), torch.tensor(1.75)).to(TORCH_DTYPES[dtype])) for t in x]
    case(f"aclnnForeach{_short}Scalar")(_foreach_scalar)
    case(f"aclnnForeach{_short}ScalarV2", "aclScalar")(functools.partial(_foreach_scalar, v2=True))

    def _foreach_scalar_list(rng, dtype, function=_function):
        """Python floats, as torch_npu passes them (ACL_DOUBLE scalars, stored as float32)."""
        x = _foreach_inputs(rng, dtype, 0.5, 2.0)
        values = [1.75, -1.25, 0.5][:len(x)]
        return {"x": x, "scalars": values}, _empty_like(x), \
            [N(function(T(t).float(), torch.tensor(np.float32(v))).to(TORCH_DTYPES[dtype]))
             for t, v in zip(x, values)]
    case(f"aclnnForeach{_short}ScalarList", "aclScalarList")(_foreach_scalar_list)

    def _foreach_list(rng, dtype, short=_short, function=_function, alpha=None):
        x1, x2 = _foreach_inputs(rng, dtype, 0.5, 2.0), _foreach_inputs(rng, dtype, 0.5, 2.0)
        arguments: dict[str, Any] = {"x1": x1, "x2": x2}
        keywords: dict[str, Any] = {}
        if alpha is not None:
            arguments["alpha"] = alpha
            keywords["alpha"] = 0.5
        expected = [N(function(T(a).float(), T(b).float(), **keywords).to(TORCH_DTYPES[dtype]))
                    for a, b in zip(x1, x2)]
        return arguments, _empty_like(x1), expected
    if _short in ("Add", "Sub"):
        case(f"aclnnForeach{_short}List", "alpha tensor")(functools.partial(
            _foreach_list, alpha=np.array([0.5], np.float32)))
        case(f"aclnnForeach{_short}ListV2", "alpha aclScalar")(
            functools.partial(_foreach_list, alpha=0.5))
    else:
        case(f"aclnnForeach{_short}List")(_foreach_list)


@case("aclnnForeachPowScalarAndTensor")
def foreach_pow_scalar_and_tensor(rng, dtype):
    x = _foreach_inputs(rng, dtype)
    return {"scalar": 1.5, "x": x}, _empty_like(x), \
        [N(torch.pow(1.5, T(t).float()).to(TORCH_DTYPES[dtype])) for t in x]


for _short, _function in (("Addcdiv", torch.addcdiv), ("Addcmul", torch.addcmul)):
    for _suffix in ("List", "ScalarList", "Scalar", "ScalarV2"):
        def _foreach_addc(rng, dtype, function=_function, suffix=_suffix):
            x1, x2 = _foreach_inputs(rng, dtype), _foreach_inputs(rng, dtype)
            x3 = _foreach_inputs(rng, dtype, 0.5, 2.0)
            values = [0.5, -1.25, 2.0]
            if suffix.endswith("List"):
                scalars: Any = np.array(values, np.float32).astype(dtype)
                parameter = "scalars"
            else:
                values = [0.5] * 3
                scalars = 0.5 if suffix == "ScalarV2" else \
                    np.array([0.5], np.float32 if dtype == BF16 else dtype)
                parameter = "scalar"
            expected = [N(function(T(a).float(), T(b).float(), T(c).float(), value=v)
                          .to(TORCH_DTYPES[dtype])) for a, b, c, v in zip(x1, x2, x3, values)]
            return {"x1": x1, "x2": x2, "x3": x3, parameter: scalars}, _empty_like(x1), expected
        case(f"aclnnForeach{_short}{_suffix}")(_foreach_addc)


@case("aclnnForeachLerpList")
def foreach_lerp_list(rng, dtype):
    x1, x2, w = (_foreach_inputs(rng, dtype) for _ in range(3))
    return {"x1": x1, "x2": x2, "weight": w}, _empty_like(x1), \
        [N(torch.lerp(T(a), T(b), T(c))) for a, b, c in zip(x1, x2, w)]


@case("aclnnForeachLerpScalar")
def foreach_lerp_scalar(rng, dtype):
    x1, x2 = _foreach_inputs(rng, dtype), _foreach_inputs(rng, dtype)
    return {"x1": x1, "x2": x2, "weight": 0.25}, _empty_like(x1), \
        [N(torch.lerp(T(a), T(b), 0.25)) for a, b in zip(x1, x2)]


for _order in (2.0, 1.0, 3.0, float("inf")):
    def _foreach_norm(rng, dtype, order=_order):
        x = _foreach_inputs(rng, dtype)
        expected = [N(torch.linalg.vector_norm(T(t).double(), order).reshape(1)
                      .to(TORCH_DTYPES[dtype])) for t in x]
        return {"x": x, "scalar": order}, [[np.empty(1, dtype) for _ in x]], expected
    case("aclnnForeachNorm", f"p={_order}")(_foreach_norm)


@case("aclnnForeachNonFiniteCheckAndUnscale")
def foreach_non_finite_check_and_unscale(rng, dtype):
    grads = [rand(rng, shape, dtype) for shape in ((2, 3), (1, 3))]
    grads[1][0, 1] = np.inf
    found = np.zeros(1, np.float32)
    expected = [N(T(g).float().mul(0.5).to(TORCH_DTYPES[dtype])) for g in grads]
    return {"scaledGrads": [g.copy() for g in grads], "foundInf": found,
            "invScale": np.array([0.5], np.float32)}, None, [expected, np.ones(1, np.float32)]


for _mode, _rounding in ((1, torch.round), (2, torch.floor), (3, torch.ceil), (5, torch.trunc),
                         (4, lambda t: torch.sign(t) * torch.floor(t.abs() + 0.5)),
                         (7, torch.frac), (0, lambda t: t)):
    def _foreach_round_off(rng, dtype, mode=_mode, rounding=_rounding, v2=False):
        x = [t * 4 for t in _foreach_inputs(rng, np.dtype(np.float32))]
        x = [t.astype(dtype) for t in x]
        mode_argument: Any = np.int8(mode) if v2 else np.array([mode], np.int8)
        return {"x": x, "roundMode": mode_argument}, _empty_like(x), \
            [N(rounding(T(t).float()).to(TORCH_DTYPES[dtype])) for t in x]
    case("aclnnForeachRoundOffNumber", f"mode {_mode}")(_foreach_round_off)
    case("aclnnForeachRoundOffNumberV2", f"aclScalar mode {_mode}")(
        functools.partial(_foreach_round_off, v2=True))


# ---- more activations and elementwise operators (kernels/activations.py) ---------------------

F = torch.nn.functional
ACTIVATIONS_TORCH: dict[str, tuple[str, Callable[..., Any], tuple[float, float]]] = {
    "aclnnSelu": ("self", F.selu, (-3, 3)),
    "aclnnSoftsign": ("self", F.softsign, (-3, 3)),
    "aclnnLogSigmoid": ("self", F.logsigmoid, (-6, 6)),
    "aclnnSquaredRelu": ("input", lambda t: torch.square(torch.relu(t)), (-3, 3)),
    "aclnnAcosh": ("self", torch.acosh, (1.0, 4.0)),
    "aclnnAsinh": ("input", torch.asinh, (-3, 3)),
    "aclnnSignbit": ("self", torch.signbit, (-3, 3)),
}
for _name, (_parameter, _function, _range) in ACTIVATIONS_TORCH.items():
    def _activation(rng, dtype, parameter=_parameter, function=_function, bounds=_range,
                    name=_name):
        x = rand(rng, (3, 5), dtype, *bounds)
        out = np.empty((3, 5), np.bool_) if name == "aclnnSignbit" else None
        return {parameter: x}, out, N(function(T(x)))
    # CANN's Acosh and Asinh take no bfloat16 on Atlas A2 (their phase-1 rules)
    case(_name, dtypes=("float32", "float16") if _name in ("aclnnAcosh", "aclnnAsinh")
         else ALL_FLOATS)(_activation)


@case("aclnnCelu")
def celu(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "alpha": 0.5}, None, N(F.celu(T(x), 0.5))


@case("aclnnHardshrink")
def hardshrink(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "lambd": np.float32(0.5)}, None, N(F.hardshrink(T(x), 0.5))


@case("aclnnSoftshrink")
def softshrink(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "lambd": np.float32(0.5)}, None, N(F.softshrink(T(x), 0.5))


@case("aclnnThreshold")
def threshold(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "threshold": np.float32(0.25), "value": np.float32(-1.0)}, None, \
        N(F.threshold(T(x), 0.25, -1.0))


@case("aclnnInplaceThreshold")
def inplace_threshold(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"selfRef": x.copy(), "threshold": np.float32(0.25), "value": np.float32(-1.0)}, None, \
        N(F.threshold(T(x), 0.25, -1.0))


@case("aclnnSwish")
def swish(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "betaOptional": 1.5}, None, N(T(x) * torch.sigmoid(1.5 * T(x)))


@case("aclnnPrelu")
def prelu(rng, dtype):
    x, w = rand(rng, (2, 3, 4), dtype), rand(rng, (3,), dtype, 0, 1)
    return {"self": x, "weight": w}, np.empty((2, 3, 4), dtype), N(F.prelu(T(x), T(w)))


@case("aclnnAddRelu")
def add_relu(rng, dtype):
    a, b = rand(rng, (3, 4), dtype), rand(rng, (1, 4), dtype)
    return {"self": a, "other": b, "alpha": np.float32(0.5)}, None, N(torch.relu(T(a) + 0.5 * T(b)))


@case("aclnnInplaceAddRelu")
def inplace_add_relu(rng, dtype):
    a, b = rand(rng, (3, 4), dtype), rand(rng, (1, 4), dtype)
    return {"selfRef": a.copy(), "other": b, "alpha": np.float32(0.5)}, None, \
        N(torch.relu(T(a) + 0.5 * T(b)))


@case("aclnnNanToNum")
def nan_to_num(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    x[0, :3] = np.array([np.nan, np.inf, -np.inf]).astype(dtype)
    return {"self": x, "nan": 0.5, "posinf": 100.0, "neginf": -100.0}, None, \
        N(torch.nan_to_num(T(x), 0.5, 100.0, -100.0))


@case("aclnnHeaviside")
def heaviside(rng, dtype):
    x = rng.integers(-1, 2, (3, 4)).astype(dtype)
    v = rand(rng, (1, 4), dtype)
    return {"input": x, "values": v}, None, N(torch.heaviside(T(x), T(v)))


@case("aclnnLogit")
def logit(rng, dtype):
    x = rand(rng, (3, 4), dtype, 0.0, 1.0)
    return {"input": x, "eps": 0.1}, None, N(torch.logit(T(x), 0.1))


@case("aclnnIsClose")
def is_close(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    b = (a.astype(np.float32) + rng.uniform(-0.02, 0.02, (3, 4))).astype(dtype)
    b[0, 0], a[0, 1], b[0, 1] = np.nan, np.nan, np.nan
    return {"self": a, "other": b, "rtol": 1e-2, "atol": 1e-2, "equalNan": True}, \
        np.empty((3, 4), np.bool_), N(torch.isclose(T(a), T(b), 1e-2, 1e-2, True))


# ---- clamps with tensor bounds, fills with a tensor, in-place forms --------------------------


@case("aclnnClampTensor")
def clamp_tensor(rng, dtype):
    a, low, high = rand(rng, (3, 4), dtype), rand(rng, (1, 4), dtype, -1, 0), \
        rand(rng, (3, 1), dtype, 0, 1)
    return {"self": a, "clipValueMin": low, "clipValueMax": high}, None, \
        N(torch.clamp(T(a), T(low), T(high)))


@case("aclnnClampMinTensor")
def clamp_min_tensor(rng, dtype):
    a, low = rand(rng, (3, 4), dtype), rand(rng, (1, 4), dtype, -1, 1)
    return {"self": a, "clipValueMin": low}, None, N(torch.clamp_min(T(a), T(low)))


@case("aclnnClampMaxTensor")
def clamp_max_tensor(rng, dtype):
    a, high = rand(rng, (3, 4), dtype), rand(rng, (3, 1), dtype, -1, 1)
    return {"self": a, "max": high}, None, N(torch.clamp_max(T(a), T(high)))


@case("aclnnInplaceFillTensor")
def inplace_fill_tensor(rng, dtype):
    a = rand(rng, (2, 3), dtype)
    return {"selfRef": a.copy(), "value": np.array([1.5], dtype)}, None, np.full((2, 3), 1.5, dtype)


@case("aclnnInplaceMaskedFillTensor")
def inplace_masked_fill_tensor(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    m = rng.integers(0, 2, (1, 4)).astype(np.bool_)
    return {"selfRef": a.copy(), "mask": m, "value": np.array(-1.0, dtype)}, None, \
        N(T(a).masked_fill(T(m), -1.0))


# ---- ops-math math/: the pointwise and bitwise families -----------------------------------

POINTWISE_TORCH = {
    "Erfc": (torch.erfc, (-4.0, 9.0)), "Exp2": (torch.exp2, (-3.0, 3.0)),
    "Sinc": (torch.sinc, (-3.0, 3.0)), "Lgamma": (torch.lgamma, (-3.5, 6.0)),
    "Digamma": (torch.digamma, (-3.5, 30.0)), "Atanh": (torch.atanh, (-0.9, 0.9)),
}


def _pointwise_case(short: str) -> Case:
    def make(rng, dtype):
        function, (low, high) = POINTWISE_TORCH[short]
        x = rand(rng, (4, 6), dtype, low, high)
        if short == "Sinc":
            x[0, 0] = 0
        # the float64 value rounded once into the dtype, as the kernel stores it
        expected = function(T(x).double()).to(T(x).dtype)
        return {kernels.parameters_of(f"aclnn{short}")[0]: x}, None, N(expected)
    return make


# Lgamma and Digamma take no bfloat16 (ops-math math/lgamma/docs/aclnnLgamma.md: FLOAT,
# FLOAT16, DOUBLE; math/digamma/op_host/op_api/aclnn_digamma.cpp ASCEND_DTYPE_DTYPE_SUPPORT_LIST)
for _short in POINTWISE_TORCH:
    case(f"aclnn{_short}", "2-d", ALL_FLOATS if _short not in ("Lgamma", "Digamma")
         else ("float32", "float16"))(_pointwise_case(_short))


SPECIAL = np.array([1.0, -1.5, np.inf, -np.inf, np.nan, 0.0, -0.0, 6e4], np.float32)
CLASSES_TORCH = {"IsFinite": torch.isfinite, "IsInf": torch.isinf, "IsPosInf": torch.isposinf,
                 "IsNegInf": torch.isneginf}
for _short, _function in CLASSES_TORCH.items():
    def _class_case(rng, dtype, function=_function, short=_short):
        x = SPECIAL.astype(dtype)
        first = kernels.parameters_of(f"aclnn{short}")[0]
        return {first: x}, np.empty(x.shape, np.bool_), N(function(T(x)))

    def _class_of_integers(rng, dtype, function=_function, short=_short):
        x = rng.integers(-5, 5, (2, 3)).astype(np.int32)
        first = kernels.parameters_of(f"aclnn{short}")[0]
        return {first: x}, np.empty(x.shape, np.bool_), N(function(T(x)))
    case(f"aclnn{_short}", "specials")(_class_case)
    case(f"aclnn{_short}", "int32", dtypes=("float32",))(_class_of_integers)


PAIRS_TORCH = {
    "LogAddExp": torch.logaddexp, "LogAddExp2": torch.logaddexp2, "XLogYTensor": torch.xlogy,
    "FmodTensor": torch.fmod, "RemainderTensorTensor": torch.remainder,
}


def _pair_case(short: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> Case:
    def make(rng, dtype):
        a, b = rand(rng, shapes[0], dtype, -3, 3), rand(rng, shapes[1], dtype, 0.5, 3)
        if short == "XLogYTensor":
            a.flat[0] = 0
        if short in ("FmodTensor", "RemainderTensorTensor"):
            b = np.where(rng.integers(0, 2, b.shape) == 1, b, -b).astype(dtype)
        return {"self": a, "other": b}, None, N(PAIRS_TORCH[short](T(a), T(b)))
    return make


for _short in PAIRS_TORCH:
    case(f"aclnn{_short}", "same shape")(_pair_case(_short, ((3, 4), (3, 4))))
    case(f"aclnn{_short}", "broadcast")(_pair_case(_short, ((3, 1), (1, 4))))

SCALAR_PAIRS = {
    "XLogYScalarOther": (torch.xlogy, 2.5, False), "XLogYScalarSelf": (torch.xlogy, 1.5, True),
    "FmodScalar": (torch.fmod, -0.75, False), "RemainderTensorScalar": (torch.remainder, -0.75,
                                                                         False),
    "RemainderScalarTensor": (torch.remainder, 2.5, True),
    "FloorDivides": (torch.floor_divide, 0.75, False),
}
for _short, (_function, _value, _first) in SCALAR_PAIRS.items():
    def _scalar_pair(rng, dtype, function=_function, value=_value, first=_first):
        x = rand(rng, (3, 4), dtype, 0.5, 3)
        x = np.where(rng.integers(0, 2, x.shape) == 1, x, -x).astype(dtype) if not first \
            else x
        if first:
            expected = function(torch.tensor(value, dtype=torch.float32), T(x).float())
            return {"self": value, "other": x}, None, N(expected.to(T(x).dtype))
        return {"self": x, "other": value}, None, N(function(T(x), value))
    case(f"aclnn{_short}", "scalar")(_scalar_pair)


@case("aclnnRoundDecimals")
def round_decimals(rng, dtype):
    x = rand(rng, (3, 4), dtype, -50, 50)
    return {"self": x, "decimals": 1}, None, N(torch.round(T(x), decimals=1))


@case("aclnnRoundDecimals", dtypes=("float32",))
def round_decimals_negative(rng, dtype):
    x = rand(rng, (3, 4), dtype, -500, 500)
    return {"self": x, "decimals": -1}, None, N(torch.round(T(x), decimals=-1))


@case("aclnnGcd", dtypes=("float32",))
def gcd(rng, dtype):
    a, b = rng.integers(-60, 60, (3, 4)).astype(np.int32), rng.integers(0, 60, (1, 4)).astype(
        np.int32)
    return {"self": a, "other": b}, None, N(torch.gcd(T(a), T(b)))


BITWISE_TORCH = {
    "BitwiseAndTensor": torch.bitwise_and, "BitwiseOrTensor": torch.bitwise_or,
    "BitwiseXorTensor": torch.bitwise_xor, "LeftShift": torch.bitwise_left_shift,
    "RightShift": torch.bitwise_right_shift,
}
for _short, _function in BITWISE_TORCH.items():
    def _bitwise(rng, dtype, function=_function, short=_short):
        shifts = short in ("LeftShift", "RightShift")
        a = rng.integers(-100, 100, (3, 4)).astype(np.int32)
        b = rng.integers(0, 8 if shifts else 100, (1, 4)).astype(np.int32)
        first, second = kernels.parameters_of(f"aclnn{short}")[:2]
        return {first: a, second: b}, None, N(function(T(a), T(b)))

    def _bitwise_bool(rng, dtype, function=_function, short=_short):
        a, b = (rng.integers(0, 2, (3, 4)).astype(np.bool_) for _ in range(2))
        return {"self": a, "other": b}, None, N(function(T(a), T(b)))
    case(f"aclnn{_short}", "int32", dtypes=("float32",))(_bitwise)
    if not _short.endswith("Shift"):
        case(f"aclnn{_short}", "bool", dtypes=("float32",))(_bitwise_bool)

for _short, _function in (("BitwiseAndScalar", torch.bitwise_and),
                          ("BitwiseOrScalar", torch.bitwise_or),
                          ("BitwiseXorScalar", torch.bitwise_xor),
                          ("LeftShifts", torch.bitwise_left_shift)):
    def _bitwise_scalar(rng, dtype, function=_function, short=_short):
        a = rng.integers(-100, 100, (3, 4)).astype(np.int64)
        first, second = kernels.parameters_of(f"aclnn{short}")[:2]
        return {first: a, second: np.int64(3)}, None, N(function(T(a), 3))
    case(f"aclnn{_short}", "int64", dtypes=("float32",))(_bitwise_scalar)


@case("aclnnBitwiseNot", dtypes=("float32",))
def bitwise_not(rng, dtype):
    a = rng.integers(-100, 100, (3, 4)).astype(np.int16)
    return {"self": a}, None, N(torch.bitwise_not(T(a)))


@case("aclnnBitwiseNot", "bool", dtypes=("float32",))
def bitwise_not_bool(rng, dtype):
    a = rng.integers(0, 2, (3, 4)).astype(np.bool_)
    return {"self": a}, None, N(torch.bitwise_not(T(a)))


# ---- ops-math math/: reductions along dimensions ---------------------------------------------


@case("aclnnAll", dtypes=("float32",))
def all_dims(rng, dtype):
    x = rng.integers(0, 4, (3, 4, 2)).astype(np.int32)
    return {"self": x, "dim": [1], "keepdim": False}, np.empty((3, 2), np.bool_), \
        N(torch.all(T(x).bool(), dim=1))


@case("aclnnAny", dtypes=("float32",))
def any_dims(rng, dtype):
    x = (rng.integers(0, 4, (3, 4, 2)) == 0).astype(np.float32)
    return {"self": x, "dim": [0, 2], "keepdim": True}, np.empty((1, 4, 1), np.bool_), \
        N(torch.any(T(x).bool(), dim=(0, 2), keepdim=True))


for _short, _function in (("MaxDim", torch.max), ("MinDim", torch.min)):
    def _dim_extremum(rng, dtype, function=_function):
        x = rand(rng, (3, 5), dtype)
        x[1, 2] = x[1, 4]  # a tie: the first index
        values, indices = function(T(x), 1)
        return {"self": x, "dim": 1, "keepdim": False}, \
            (np.empty((3,), dtype), np.empty((3,), np.int64)), (N(values), N(indices))
    case(f"aclnn{_short}", "dim 1")(_dim_extremum)

for _short, _function in (("Cummax", torch.cummax), ("Cummin", torch.cummin)):
    def _cumulative(rng, dtype, function=_function):
        x = rng.integers(-3, 3, (4, 5)).astype(dtype)  # ties: the last index
        values, indices = function(T(x), 1)
        return {"self": x, "dim": 1}, (np.empty((4, 5), dtype), np.empty((4, 5), np.int64)), \
            (N(values), N(indices))
    case(f"aclnn{_short}", "ties")(_cumulative)


@case("aclnnAminmax")
def aminmax(rng, dtype):
    x = rand(rng, (3, 4, 2), dtype)
    low, high = torch.aminmax(T(x).float(), dim=1, keepdim=True)
    return {"self": x, "dim": [1], "keepDim": True}, \
        (np.empty((3, 1, 2), dtype), np.empty((3, 1, 2), dtype)), (N(low, dtype), N(high, dtype))


@case("aclnnAminmaxDim")
def aminmax_dim(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    low, high = torch.aminmax(T(x).float(), dim=0)
    return {"self": x, "dim": 0, "keepDim": False}, \
        (np.empty((4,), dtype), np.empty((4,), dtype)), (N(low, dtype), N(high, dtype))


@case("aclnnAminmaxAll")
def aminmax_all(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    low, high = torch.aminmax(T(x).float())
    return {"self": x}, (np.empty((), dtype), np.empty((), dtype)), \
        (N(low, dtype), N(high, dtype))


@case("aclnnLogSumExp")
def log_sum_exp(rng, dtype):
    x = rand(rng, (3, 4), dtype, -20, 20)
    return {"self": x, "dim": [1], "keepDim": False}, np.empty((3,), dtype), \
        N(torch.logsumexp(T(x).float(), dim=1), dtype)


@case("aclnnReduceNansum")
def reduce_nansum(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    x[0, 1] = np.nan
    return {"self": x, "dim": [1], "keepDim": True, "dtype": dtype}, \
        np.empty((3, 1), dtype), N(torch.nansum(T(x).float(), dim=1, keepdim=True), dtype)


@case("aclnnProdDim")
def prod_dim(rng, dtype):
    x = rand(rng, (3, 4), dtype, 0.5, 1.5)
    return {"self": x, "dim": 0, "keepDim": False, "dtype": dtype}, \
        np.empty((4,), dtype), N(torch.prod(T(x).float(), dim=0), dtype)


@case("aclnnCumprod")
def cumprod(rng, dtype):
    x = rand(rng, (3, 4), dtype, 0.5, 1.5)
    return {"input": x, "dim": np.int64(1), "dtype": dtype}, \
        np.empty((3, 4), dtype), N(torch.cumprod(T(x).float(), dim=1), dtype)


for _short, _function in (("MaxN", torch.maximum), ("MinN", torch.minimum)):
    def _extremum_n(rng, dtype, function=_function):
        a, b, c = rand(rng, (3, 4), dtype), rand(rng, (1, 4), dtype), rand(rng, (3, 1), dtype)
        return {"tensors": [a, b, c]}, np.empty((3, 4), dtype), \
            N(function(function(T(a), T(b)), T(c)))
    case(f"aclnn{_short}", "broadcast")(_extremum_n)


@case("aclnnEqual")
def equal(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    b = a.copy()
    b[2, 3] = 7
    return {"self": a, "other": b}, np.empty((1,), np.bool_), np.array([False])


@case("aclnnEqual", "equal")
def equal_same(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    return {"self": a, "other": a.copy()}, np.empty((1,), np.bool_), np.array([True])


@case("aclnnMaxV2")
def max_v2(rng, dtype):
    x = rand(rng, (3, 4, 2), dtype)
    return {"self": x, "dims": [0, 2], "keepDims": False, "noopWithEmptyDims": True}, \
        np.empty((4,), dtype), N(torch.amax(T(x), dim=(0, 2)))


@case("aclnnMaxV2", "no-op")
def max_v2_noop(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "dims": [], "keepDims": False, "noopWithEmptyDims": True}, \
        np.empty((3, 4), dtype), x


@case("aclnnMeanV2")
def mean_v2(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    return {"self": x, "dim": [], "keepDim": True, "noopWithEmptyAxes": False}, \
        np.empty((1, 1), dtype), N(torch.mean(T(x).float(), dim=(0, 1), keepdim=True), dtype)


@case("aclnnReduceLogSum", dtypes=("float32", "float16"))  # bfloat16 on the 950 only (op_api)
def reduce_log_sum(rng, dtype):
    x = rand(rng, (3, 4), dtype, 0.5, 2)
    return {"data": x, "axes": [1], "keepDims": False, "noopWithEmptyAxes": False}, \
        np.empty((3,), dtype), N(torch.log(torch.sum(T(x).float(), dim=1)), dtype)


for _short, _function in (("GlobalAveragePool", torch.mean), ("GlobalMaxPool", torch.amax)):
    def _global(rng, dtype, function=_function):
        x = rand(rng, (2, 3, 4, 5), dtype)
        return {"self": x}, np.empty((2, 3, 1, 1), dtype), \
            N(function(T(x).float(), dim=(2, 3), keepdim=True), dtype)
    # GlobalMaxPool takes no bfloat16 (ops-math math/reduce_max/op_api/aclnn_global_max_pool.cpp)
    case(f"aclnn{_short}", "nchw",
         ALL_FLOATS if _short == "GlobalAveragePool" else ("float32", "float16"))(_global)

for _short, _function in (("VarMean", torch.var_mean), ("StdMeanCorrection", torch.std_mean)):
    def _moments(rng, dtype, function=_function):
        x = rand(rng, (3, 5), dtype)
        first, mean = function(T(x).float(), dim=1, correction=1, keepdim=True)
        return {"self": x, "dim": [1], "correction": 1, "keepdim": True}, \
            (np.empty((3, 1), dtype), np.empty((3, 1), dtype)), (N(first, dtype), N(mean, dtype))
    case(f"aclnn{_short}", "correction 1")(_moments)


@case("aclnnCumsumV2")
def cumsum_v2(rng, dtype):
    x = rand(rng, (3, 5), dtype)
    flipped = torch.flip(T(x).float(), [1])
    expected = torch.flip(torch.cumsum(flipped, 1) - flipped, [1])
    return {"self": x, "dim": 1, "exclusive": True, "reverse": True}, np.empty((3, 5), dtype), \
        N(expected, dtype)


@case("aclnnGer", dtypes=("float32", "float16"))  # bfloat16 on the 950 only (aclnn_ger.cpp)
def ger(rng, dtype):
    a, b = rand(rng, (3,), dtype), rand(rng, (4,), dtype)
    return {"self": a, "vec2": b}, np.empty((3, 4), dtype), N(torch.outer(T(a), T(b)))


@case("aclnnAddr")
def addr(rng, dtype):
    m, a, b = rand(rng, (3, 4), dtype), rand(rng, (3,), dtype), rand(rng, (4,), dtype)
    return {"self": m, "vec1": a, "vec2": b, "betaOptional": 0.5, "alphaOptional": 2.0}, \
        np.empty((3, 4), dtype), N(torch.addr(T(m).float(), T(a).float(), T(b).float(),
                                              beta=0.5, alpha=2.0), dtype)


@case("aclnnLinalgCross")
def linalg_cross(rng, dtype):
    a, b = rand(rng, (2, 3, 4), dtype), rand(rng, (1, 3, 4), dtype)
    return {"self": a, "other": b, "dim": 1}, np.empty((2, 3, 4), dtype), \
        N(torch.linalg.cross(T(a).float(), T(b).float(), dim=1), dtype)


def _inplace_of(name: str, base: str, make: Case) -> Case:
    """A case of the in-place form ``name`` from one of its out-of-place operator's: the same
    inputs, the first updated in place (its result cast to that tensor's dtype)."""
    def made(rng, dtype):
        arguments, _, expected = make(rng, dtype)
        base_names = [n for n in kernels.parameters_of(base) if n != "out"]
        names = kernels.parameters_of(name)
        first = arguments[base_names[0]]
        if np.shape(expected) != np.shape(first):
            pytest.skip(f"{base}'s case broadcasts {base_names[0]} into a larger result")
        given = {names[0]: np.array(first, order="C")}
        given.update({target: arguments.get(source)
                      for target, source in zip(names[1:], base_names[1:])})
        return given, None, np.asarray(expected).astype(first.dtype)
    return made


# ---- gradients of the activations (kernels/activation_grads.py) ------------------------------


def _autograd(function: Callable[[Any], Any], x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """d function(x) / dx applied to grad, by PyTorch's autograd in float64."""
    source = torch.from_numpy(x.astype(np.float64)).requires_grad_()
    function(source).backward(torch.from_numpy(grad.astype(np.float64)))
    assert source.grad is not None
    return N(source.grad)


for _name, _parameter, _function in (
        ("aclnnHardshrinkBackward", "lambd", F.hardshrink),
        ("aclnnSoftshrinkBackward", "lambda", F.softshrink)):
    def _shrink_backward(rng, dtype, parameter=_parameter, function=_function):
        x, grad = rand(rng, (3, 5), dtype), rand(rng, (3, 5), dtype)
        return {"gradOutput": grad, "self": x, parameter: np.float32(0.5)}, \
            np.empty((3, 5), dtype), _autograd(lambda t: function(t, 0.5), x, grad)
    case(_name)(_shrink_backward)

    def _shrink_backward_broadcast(rng, dtype, parameter=_parameter, function=_function):
        # gradOutput and self broadcast (CANN's op_api CheckShape of both operators)
        x, grad = rand(rng, (1, 5), dtype), rand(rng, (3, 1), dtype)
        expected = _autograd(lambda t: function(t, 0.5), np.broadcast_to(x, (3, 5)),
                             np.broadcast_to(grad, (3, 5)))
        return {"gradOutput": grad, "self": x, parameter: np.float32(0.5)}, \
            np.empty((3, 5), dtype), expected
    case(_name, "broadcast")(_shrink_backward_broadcast)


@case("aclnnSwishBackward")
def swish_backward(rng, dtype):
    x, grad = rand(rng, (3, 5), dtype), rand(rng, (3, 5), dtype)
    return {"gradOutput": grad, "self": x, "betaOptional": 1.5}, np.empty((3, 5), dtype), \
        _autograd(lambda t: t * torch.sigmoid(1.5 * t), x, grad)


# ---- losses (kernels/losses.py) ----------------------------------------------------------------


def _f64(*arrays: np.ndarray) -> list[Any]:
    """Torch float64 tensors of the arrays' values (as rounded to their dtype)."""
    return [T(np.asarray(a, np.float32).astype(np.float64))
            if a.dtype.kind == "f" or a.dtype == BF16 else T(a) for a in arrays]


def _as(value: Any, dtype: np.dtype) -> np.ndarray:
    return N(value.detach().to(torch.float64)).astype(dtype)


def _grad64(function: Callable[..., Any], x: np.ndarray, grad: np.ndarray, *others: Any
            ) -> np.ndarray:
    """d function(x, *others) / dx applied to grad, in float64."""
    source = _f64(x)[0].requires_grad_()
    result = function(source, *others)
    result.backward(_f64(grad)[0].reshape(result.shape))
    assert source.grad is not None
    return N(source.grad)


def _kl64(x: Any, t: Any, reduction: int, log_target: bool) -> Any:
    loss = torch.exp(t) * (t - x) if log_target else torch.xlogy(t, t) - t * x
    if reduction == 0:
        return loss
    total = loss.sum()
    return total / loss.numel() if reduction == 1 else total / x.shape[0] \
        if reduction == 3 else total


for _reduction, _log in ((0, False), (1, True), (2, False), (3, False)):
    def _kl_div(rng, dtype, reduction=_reduction, log_target=_log):
        x = rand(rng, (3, 4), dtype)
        t = rand(rng, (4,), dtype, -1, 1) if log_target else rand(rng, (4,), dtype, 0, 1)
        t[0] = 0 if not log_target else t[0]
        shape = (3, 4) if reduction == 0 else ()
        return {"self": x, "target": t, "reduction": reduction, "logTarget": log_target}, \
            np.empty(shape, dtype), _as(_kl64(*_f64(x, t), reduction, log_target), dtype)
    case("aclnnKlDiv", f"reduction {_reduction}")(_kl_div)

    def _kl_div_backward(rng, dtype, reduction=_reduction, log_target=_log):
        x, t = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype, 0.1, 1)
        g = rand(rng, (3, 4) if reduction == 0 else (), dtype)
        xt, tt = _f64(x, t)
        return {"gradOutput": g, "self": x, "target": t, "reduction": reduction,
                "logTarget": log_target}, np.empty((3, 4), dtype), \
            _grad64(lambda v: _kl64(v, tt, reduction, log_target), x, g)
    case("aclnnKlDivBackward", f"reduction {_reduction}")(_kl_div_backward)

    def _kl_div_target_backward(rng, dtype, reduction=_reduction, log_target=_log):
        x, t = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype, 0.1, 1)
        g = rand(rng, (3, 4) if reduction == 0 else (), dtype)
        xt = _f64(x)[0]
        return {"gradOutput": g, "self": x, "target": t, "reduction": reduction,
                "logTarget": log_target}, np.empty((3, 4), dtype), \
            _grad64(lambda v: _kl64(xt, v, reduction, log_target), t, g)
    case("aclnnKlDivTargetBackward", f"reduction {_reduction}")(_kl_div_target_backward)


def _soft_margin64(x: Any, t: Any, reduction: int) -> Any:
    loss = F.softplus(-t * x)
    return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()


for _reduction in (0, 1, 2):
    def _soft_margin(rng, dtype, reduction=_reduction):
        x, t = rand(rng, (3, 4), dtype), np.sign(rand(rng, (4,), dtype)).astype(dtype)
        return {"self": x, "target": t, "reduction": reduction}, \
            np.empty((3, 4) if reduction == 0 else (), dtype), \
            _as(_soft_margin64(*_f64(x, t), reduction), dtype)
    case("aclnnSoftMarginLoss", f"reduction {_reduction}")(_soft_margin)

    def _soft_margin_backward(rng, dtype, reduction=_reduction):
        x, t = rand(rng, (3, 4), dtype), np.sign(rand(rng, (3, 4), dtype)).astype(dtype)
        g = rand(rng, (3, 4) if reduction == 0 else (), dtype)
        tt = _f64(t)[0]
        return {"gradOutput": g, "self": x, "target": t, "reduction": reduction}, \
            np.empty((3, 4), dtype), _grad64(lambda v: _soft_margin64(v, tt, reduction), x, g)
    case("aclnnSoftMarginLossBackward", f"reduction {_reduction}")(_soft_margin_backward)


@case("aclnnBinaryCrossEntropyWithLogitsBackward")
def bce_logits_backward(rng, dtype):
    x, t = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype, 0, 1)
    w, p, g = rand(rng, (4,), dtype, 0.5, 1.5), rand(rng, (4,), dtype, 0.5, 2), \
        rand(rng, (), dtype)
    tt, wt, pt = _f64(t, w, p)
    return {"gradOutput": g, "self": x, "target": t, "weightOptional": w,
            "posWeightOptional": p, "reduction": 1}, np.empty((3, 4), dtype), \
        _grad64(lambda v: F.binary_cross_entropy_with_logits(v, tt, wt, pos_weight=pt), x, g)


@case("aclnnNLLLoss2d")
def nll_loss2d(rng, dtype):
    x = rand(rng, (2, 3, 2, 2), dtype)
    t = np.array([[[0, 2], [1, -100]], [[2, 2], [0, 1]]], np.int64)
    w = rand(rng, (3,), dtype, 0.5, 1.5)
    xt, tt, wt = _f64(x, t, w)
    loss = F.nll_loss(xt, tt, wt, reduction="mean")
    total = torch.where(tt != -100, wt[torch.where(tt != -100, tt, 0)], 0.0).sum()
    return {"self": x, "target": t, "weight": w, "reduction": 1, "ignoreIndex": -100}, \
        (np.empty((), dtype), np.empty((), dtype)), (_as(loss, dtype), _as(total, dtype))


@case("aclnnNLLLoss2dBackward")
def nll_loss2d_backward(rng, dtype):
    x = rand(rng, (2, 3, 2, 2), dtype)
    t = np.array([[[0, 2], [1, -100]], [[2, 2], [0, 1]]], np.int64)
    w, g = rand(rng, (3,), dtype, 0.5, 1.5), rand(rng, (2, 2, 2), dtype)
    tt, wt = _f64(t, w)
    return {"gradOutput": g, "self": x, "target": t, "weight": w, "reduction": 0,
            "ignoreIndex": -100, "totalWeight": np.ones((), dtype)}, \
        np.empty(x.shape, dtype), \
        _grad64(lambda v: F.nll_loss(v, tt, wt, reduction="none"), x, g)


@case("aclnnCrossEntropyLoss")
def cross_entropy_loss(rng, dtype):
    x, t = rand(rng, (4, 5), dtype), np.array([1, 4, -100, 0], np.int64)
    w = rand(rng, (5,), np.dtype(np.float32), 0.5, 1.5)
    xt, tt, wt = _f64(x, t, w)
    loss = F.cross_entropy(xt, tt, wt, label_smoothing=0.2)
    return {"input": x, "target": t, "weightOptional": w, "reductionOptional": "mean",
            "ignoreIndex": -100, "labelSmoothing": 0.2, "lseSquareScaleForZloss": 0.0,
            "returnZloss": False}, \
        (np.empty((), dtype), np.empty((4, 5), dtype), np.zeros((), dtype),
         np.zeros((4,), dtype)), (_as(loss, dtype), _as(F.log_softmax(xt, 1), dtype))


@case("aclnnCrossEntropyLossGrad")
def cross_entropy_loss_grad(rng, dtype):
    logits, t = rand(rng, (4, 5), dtype), np.array([1, 4, -100, 0], np.int64)
    log_prob = N(F.log_softmax(T(logits).float(), 1).to(TORCH_DTYPES[dtype]))
    w, g = rand(rng, (5,), np.dtype(np.float32), 0.5, 1.5), rand(rng, (4,), dtype)
    tt, wt = _f64(t, w)
    # the gradient at logits whose log-softmax is logProb: logProb itself
    expected = _grad64(lambda v: F.cross_entropy(v, tt, wt, reduction="none",
                                                 label_smoothing=0.1), log_prob, g)
    return {"gradLoss": g, "logProb": log_prob, "target": t, "weightOptional": w,
            "gradZlossOptional": None, "lseForZlossOptional": None,
            "reductionOptional": "none", "ignoreIndex": -100, "labelSmoothing": 0.1,
            "lseSquareScaleForZloss": 0.0}, np.empty((4, 5), dtype), expected


@case("aclnnMultilabelMarginLoss")
def multilabel_margin_loss(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    t = np.array([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0]], np.int64)
    xt, tt = _f64(x, t)
    marks = np.array([[1, 0, 0, 1], [0, 1, 1, 1], [0, 0, 0, 0]], dtype)
    return {"self": x, "target": t, "reduction": 0}, \
        (np.empty((3,), dtype), np.empty((3, 4), dtype)), \
        (_as(F.multilabel_margin_loss(xt, tt, reduction="none"), dtype), marks)


# ---- more activations, their gradients and the gated linear units ------------------------------


for _is_result in (False, True):
    def _elu_backward(rng, dtype, is_result=_is_result):
        x, g = rand(rng, (3, 5), dtype), rand(rng, (3, 5), dtype)
        a, s, i = 1.5, 1.2, 0.8
        if is_result:
            # x is the forward's result: the gradient from it, as the doc gives it
            xt, gt = _f64(x, g)
            expected = N(gt * torch.where(xt > 0, s, i * (xt + a * s)))
        else:
            expected = _grad64(lambda v: torch.where(v > 0, s * v, a * s * torch.expm1(v * i)),
                               x, g)
        return {"gradOutput": g, "alpha": np.float32(a), "scale": np.float32(s),
                "inputScale": np.float32(i), "isResult": is_result, "selfOrResult": x}, \
            np.empty((3, 5), dtype), expected
    case("aclnnEluBackward", f"isResult {_is_result}")(_elu_backward)


@case("aclnnSeluBackward")
def selu_backward(rng, dtype):
    x, g = rand(rng, (3, 5), dtype), rand(rng, (3, 5), dtype)
    result = N(F.selu(T(x).float()).to(TORCH_DTYPES[dtype]))
    rt, gt = _f64(result, g)
    expected = gt * torch.where(rt > 0, 1.0507009873554805, rt + 1.7580993408473766)
    return {"gradOutput": g, "result": result}, np.empty((3, 5), dtype), N(expected)


@case("aclnnPreluBackward")
def prelu_backward(rng, dtype):
    x, g, w = rand(rng, (2, 3, 4), dtype), rand(rng, (2, 3, 4), dtype), rand(rng, (3,), dtype)
    xt, gt, wt = (v.requires_grad_() for v in _f64(x, g, w))
    F.prelu(xt, wt).backward(gt)
    return {"gradOutput": g, "self": x, "weight": w}, \
        (np.empty((2, 3, 4), dtype), np.empty((3,), dtype)), (N(xt.grad), N(wt.grad))


@case("aclnnLogSigmoidForward")
def log_sigmoid_forward(rng, dtype):
    x = rand(rng, (3, 5), dtype, -20, 20)
    return {"self": x}, (np.empty((3, 5), dtype), np.zeros((3, 5), dtype)), \
        (_as(F.logsigmoid(_f64(x)[0]), dtype), None)


@case("aclnnLogSigmoidBackward")
def log_sigmoid_backward(rng, dtype):
    x, g = rand(rng, (3, 5), dtype, -20, 20), rand(rng, (3, 5), dtype)
    return {"gradOutput": g, "self": x, "buffer": np.zeros((3, 5), dtype)}, \
        np.empty((3, 5), dtype), _grad64(F.logsigmoid, x, g)


def _fast_gelu64(v: Any) -> Any:
    return v * torch.sigmoid(1.702 * v)


@case("aclnnFastGelu")
def fast_gelu(rng, dtype):
    x = rand(rng, (3, 5), dtype, -6, 6)
    return {"self": x}, np.empty((3, 5), dtype), _as(_fast_gelu64(_f64(x)[0]), dtype)


@case("aclnnFastGeluBackward")
def fast_gelu_backward(rng, dtype):
    x, g = rand(rng, (3, 5), dtype, -6, 6), rand(rng, (3, 5), dtype)
    return {"gradOutput": g, "self": x}, np.empty((3, 5), dtype), _grad64(_fast_gelu64, x, g)


for _approximate in ("none", "tanh"):
    def _gelu_backward_v2(rng, dtype, approximate=_approximate):
        x, g = rand(rng, (3, 5), dtype, -4, 4), rand(rng, (5,), dtype)
        xt = _f64(x)[0].requires_grad_()
        F.gelu(xt, approximate=approximate).backward(_f64(g)[0].expand(3, 5))
        return {"gradOutput": g, "self": x, "approximate": approximate}, \
            np.empty((3, 5), dtype), N(xt.grad)
    case("aclnnGeluBackwardV2", _approximate)(_gelu_backward_v2)


@case("aclnnHardswishBackwardV2")
def hardswish_backward_v2(rng, dtype):
    x, g = rand(rng, (3, 6), dtype, -5, 5), rand(rng, (3, 6), dtype)
    x[0, :2] = (-3, 3)
    xt, gt = _f64(x, g)
    slope = torch.where(xt <= -3, 0.0, torch.where(xt >= 3, 1.0, xt / 3 + 0.5))
    return {"gradOutput": g, "self": x}, np.empty((3, 6), dtype), N(gt * slope)


@case("aclnnShrink", dtypes=("float32", "float16"))
def shrink(rng, dtype):
    x = rand(rng, (3, 5), dtype)
    xt = _f64(x)[0]
    expected = torch.where(xt > 0.5, xt - 0.25, torch.where(xt < -0.5, xt + 0.25, 0.0))
    return {"self": x, "lambd": np.float32(0.5), "bias": np.float32(0.25)}, \
        np.empty((3, 5), dtype), _as(expected, dtype)


for _eps in (-1.0, 0.1):
    def _logit_grad(rng, dtype, eps=_eps):
        x, g = rand(rng, (3, 5), dtype, -0.2, 1.2), rand(rng, (3, 5), dtype)
        expected = _grad64(lambda v: torch.logit(v, eps if eps >= 0 else None), x, g)
        if eps < 0:
            expected[(x.astype(np.float32) < 0) | (x.astype(np.float32) > 1)] = np.nan
        return {"x": x, "dy": g, "eps": eps}, np.empty((3, 5), dtype), expected
    case("aclnnLogitGrad", f"eps {_eps}")(_logit_grad)


def _halves64(x: np.ndarray, dim: int, interleaved: bool = False) -> tuple[Any, Any]:
    xt = _f64(x)[0]
    rows = xt.reshape(int(np.prod(x.shape[:dim % x.ndim])), -1)
    return (rows[:, 0::2], rows[:, 1::2]) if interleaved else rows.chunk(2, 1)


for _approximate in ("none", "tanh"):
    def _gelu_mul(rng, dtype, approximate=_approximate):
        x = rand(rng, (2, 3, 8), dtype)
        a, b = _halves64(x, -1)
        return {"input": x, "approximateOptional": approximate}, np.empty((2, 3, 4), dtype), \
            _as((F.gelu(a, approximate=approximate) * b).reshape(2, 3, 4), dtype)
    case("aclnnGeluMul", _approximate)(_gelu_mul)


@case("aclnnFatreluMul")
def fatrelu_mul(rng, dtype):
    x, threshold = rand(rng, (3, 8), dtype), np.array([0.3], dtype)
    a, b = _halves64(x, -1)
    return {"input": x, "threshold": threshold}, np.empty((3, 4), dtype), \
        _as(torch.where(a < float(threshold.astype(np.float32)[0]), 0.0, a) * b, dtype)


@case("aclnnSwiGlu")
def swi_glu(rng, dtype):
    x = rand(rng, (2, 6, 3), dtype)
    a, b = _f64(x)[0].chunk(2, 1)
    return {"x": x, "dim": 1}, np.empty((2, 3, 3), dtype), _as(F.silu(a) * b, dtype)


@case("aclnnSwiGluGrad")
def swi_glu_grad(rng, dtype):
    x, g = rand(rng, (2, 6, 3), dtype), rand(rng, (2, 3, 3), dtype)
    return {"yGrad": g, "x": x, "dim": -2}, np.empty((2, 6, 3), dtype), \
        _grad64(lambda v: (lambda a, b: F.silu(a) * b)(*v.chunk(2, 1)), x, g)


def _ge_glu64(v: Any, dim: int, approximate: int, left: bool) -> Any:
    a, b = v.chunk(2, dim)
    gate, other = (a, b) if left else (b, a)
    return F.gelu(gate, approximate="tanh" if approximate else "none") * other, \
        F.gelu(gate, approximate="tanh" if approximate else "none")


for _name, _left, _approximate in (("aclnnGeGlu", False, 1), ("aclnnGeGluV3", True, 0),
                                    ("aclnnGeGluV3", False, 1)):
    def _ge_glu(rng, dtype, name=_name, left=_left, approximate=_approximate):
        x = rand(rng, (3, 8), dtype)
        out, gelu = _ge_glu64(_f64(x)[0], -1, approximate, left)
        arguments = {"self": x, "dim": -1, "approximate": approximate}
        if name == "aclnnGeGluV3":
            arguments["activateLeft"] = left
        return arguments, (np.empty((3, 4), dtype), np.empty((3, 4), dtype)), \
            (_as(out, dtype), _as(gelu, dtype))
    case(_name, f"left {_left} approximate {_approximate}")(_ge_glu)

    def _ge_glu_backward(rng, dtype, name=_name, left=_left, approximate=_approximate):
        x, g = rand(rng, (3, 8), dtype), rand(rng, (3, 4), dtype)
        gelu = _as(_ge_glu64(_f64(x)[0], 1, approximate, left)[1], dtype)
        arguments = {"gradOutput": g, "self": x, "gelu": gelu, "dim": 1,
                     "approximate": approximate}
        if name == "aclnnGeGluV3":
            arguments["activateLeft"] = left
        return arguments, np.empty((3, 8), dtype), \
            _grad64(lambda v: _ge_glu64(v, 1, approximate, left)[0], x, g)
    case(f"{_name}Backward", f"left {_left} approximate {_approximate}")(_ge_glu_backward)


def _clipped64(v: Any, interleaved: bool, mode: int, rows: int) -> Any:
    pre = v.shape[0]
    flat = v.reshape(pre, -1)
    a, b = (flat[:, 0::2], flat[:, 1::2]) if interleaved else flat.chunk(2, 1)
    b = b.clamp(-1.5, 1.5)
    if mode == 0:
        a = a.clamp(max=1.5)
        y = a * torch.sigmoid(1.7 * a) * (b + 0.5)
    else:
        y = F.silu(a).clamp(max=1.5) * b
    return y * (torch.arange(pre) < rows).to(y.dtype)[:, None]


for _interleaved, _mode in ((False, 0), (True, 0), (True, 1)):
    def _clipped_swiglu(rng, dtype, interleaved=_interleaved, mode=_mode):
        x, index = rand(rng, (4, 6), dtype), np.array([1, 2], np.int64)
        arguments = {"x": x, "groupIndexOptional": index, "dim": 1, "alpha": 1.7,
                     "limit": 1.5, "bias": 0.5, "interleaved": interleaved}
        if mode or interleaved:
            arguments["clampMode"] = mode
        return arguments, np.empty((4, 3), dtype), \
            _as(_clipped64(_f64(x)[0], interleaved, mode, 3), dtype)
    case("aclnnClippedSwigluV2" if _mode or _interleaved else "aclnnClippedSwiglu",
         f"interleaved {_interleaved} mode {_mode}")(_clipped_swiglu)


for _interleaved in (False, True):
    def _clipped_swiglu_grad(rng, dtype, interleaved=_interleaved):
        x, g, index = rand(rng, (4, 6), dtype), rand(rng, (4, 3), dtype), np.array([3], np.int64)
        return {"gradY": g, "x": x, "groupIndexOptional": index, "dim": -1, "alpha": 1.7,
                "limit": 1.5, "bias": 0.5, "interleaved": interleaved}, \
            np.empty((4, 6), dtype), \
            _grad64(lambda v: _clipped64(v, interleaved, 0, 3), x, g)
    case("aclnnClippedSwigluGrad", f"interleaved {_interleaved}")(_clipped_swiglu_grad)


def _situ64(v: Any, left: bool, linear: float) -> Any:
    a, b = v.chunk(2, 1)
    gate, up = (a, b) if left else (b, a)
    if linear > 0:
        up = linear * torch.tanh(up / linear)
    return 1.3 * torch.tanh(gate / 1.3) * torch.sigmoid(gate) * up


for _left, _linear in ((True, 0.0), (False, 2.0)):
    def _situ_glu(rng, dtype, left=_left, linear=_linear):
        x = rand(rng, (3, 8), dtype, -3, 3)
        return {"x": x, "dim": 1, "beta": 1.3, "linearBeta": linear, "activateLeft": left}, \
            np.empty((3, 4), dtype), _as(_situ64(_f64(x)[0], left, linear), dtype)
    case("aclnnSituGlu", f"left {_left}")(_situ_glu)

    def _situ_glu_grad(rng, dtype, left=_left, linear=_linear):
        x, g = rand(rng, (3, 8), dtype, -3, 3), rand(rng, (3, 4), dtype)
        return {"gradY": g, "x": x, "dim": 1, "beta": 1.3, "linearBeta": linear,
                "activateLeft": left}, np.empty((3, 8), dtype), \
            _grad64(lambda v: _situ64(v, left, linear), x, g)
    case("aclnnSituGluGrad", f"left {_left}")(_situ_glu_grad)


@case("aclnnSwigluGroup")
def swiglu_group(rng, dtype):
    x, w = rand(rng, (4, 6), dtype, -3, 3), rand(rng, (4,), np.dtype(np.float32))
    index = np.array([2, 1], np.int64)
    a, b = _halves64(x, -1)
    a, b = a.clamp(max=1.5), b.clamp(-1.5, 1.5)
    y = F.silu(a) * b * T(w).double()[:, None]
    y[3:] = 0
    return {"x": x, "weightOptional": w, "groupIndexOptional": index, "clampLimit": 1.5}, \
        np.empty((4, 3), dtype), _as(y, dtype)


def _masked_softmax64(x: np.ndarray, mask: np.ndarray, scale: float) -> Any:
    z = torch.where(T(mask), -10000.0, _f64(x)[0] * scale)
    return torch.softmax(z, -1)


@case("aclnnScaledMaskedSoftmax")
def scaled_masked_softmax(rng, dtype):
    x, mask = rand(rng, (2, 3, 4, 5), dtype), rng.integers(0, 2, (1, 3, 4, 5)).astype(bool)
    return {"x": x, "mask": mask, "scale": 0.7, "fixedTriuMask": False}, \
        np.empty(x.shape, dtype), _as(_masked_softmax64(x, mask, 0.7), dtype)


@case("aclnnScaledMaskedSoftmaxBackward")
def scaled_masked_softmax_backward(rng, dtype):
    x, mask = rand(rng, (2, 3, 4, 5), dtype), rng.integers(0, 2, (2, 1, 4, 5)).astype(bool)
    y, g = _as(torch.softmax(_f64(x)[0], -1), dtype), rand(rng, x.shape, dtype)
    yt, gt = _f64(y, g)
    grad = (gt * yt - (gt * yt).sum(-1, keepdim=True) * yt) * 0.7
    return {"gradOutput": g, "y": y, "mask": mask, "scale": 0.7, "fixTriuMask": False}, \
        np.empty(x.shape, dtype), N(torch.where(T(mask), 0.0, grad))


@case("aclnnRReluWithNoise", "evaluation")
def rrelu_with_noise(rng, dtype):
    x = rand(rng, (3, 5), dtype)
    xt = _f64(x)[0]
    return {"self": x, "noise": np.zeros((3, 5), dtype), "lower": np.float32(0.125),
            "upper": np.float32(0.375), "training": False, "seed": 0, "offset": 0}, \
        np.empty((3, 5), dtype), \
        (np.zeros((3, 5), dtype), _as(torch.where(xt < 0, xt * 0.25, xt), dtype))


@case("aclnnInplaceRReluWithNoise", "evaluation")
def inplace_rrelu_with_noise(rng, dtype):
    x = rand(rng, (3, 5), dtype)
    xt = _f64(x)[0]
    return {"self": x, "noise": np.zeros((3, 5), dtype), "lower": np.float32(0.125),
            "upper": np.float32(0.375), "training": False, "seed": 0, "offset": 0}, None, \
        (_as(torch.where(xt < 0, xt * 0.25, xt), dtype), None)


@pytest.mark.parametrize("name", ["aclnnRReluWithNoise", "aclnnInplaceRReluWithNoise"])
def test_rrelu_with_noise_draws_its_slopes_uniformly_and_by_seed(name: str) -> None:
    """In training the slopes of the negative elements are U(lower, upper) draws, written into
    noise (1 for the others), the same for one (seed, offset) and others for another."""
    x = np.where(np.arange(20000) % 2, -1.0, 2.0).astype(np.float32)

    def run(seed: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
        arguments = {"self": x.copy(), "noise": np.zeros(x.shape, np.float32),
                     "lower": np.float32(0.1), "upper": np.float32(0.3), "training": True,
                     "seed": seed, "offset": offset}
        first, second = aclnn_py.call(name, **arguments)  # the written tensors, in order
        return (first, second) if name == "aclnnRReluWithNoise" else (second, first)

    noise, out = run(7, 0)
    slopes = noise[x < 0]
    assert np.all(noise[x > 0] == 1) and np.array_equal(out, x * noise)
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.003 and abs(slopes.std() - 0.2 / np.sqrt(12)) < 0.003
    assert np.array_equal(run(7, 0)[0], noise)
    assert not np.array_equal(run(7, 1)[0], noise) and not np.array_equal(run(8, 0)[0], noise)


@case("aclnnCtcLoss")
def ctc_loss(rng, dtype):
    log_probs = N(F.log_softmax(T(rand(rng, (6, 3, 5), dtype)).float(), 2).to(TORCH_DTYPES[dtype]))
    targets = np.array([[1, 2, 2], [3, 0, 0], [4, 1, 3]], np.int64)
    inputs, lengths = [4, 6, 6], [3, 1, 3]
    nll, alpha = torch.ops.aten._ctc_loss(_f64(log_probs)[0], T(targets), inputs, lengths, 0,
                                          False)
    expected = np.full((3, 6, 8), -np.inf)
    for n, (steps, length) in enumerate(zip(inputs, lengths)):
        expected[n, :steps, :2 * length + 1] = N(alpha[n, :steps, :2 * length + 1])
    return {"logProbs": log_probs, "targets": targets, "inputLengths": inputs,
            "targetlengths": lengths, "blank": 0, "zeroInfinity": False}, \
        (np.empty((3,), dtype), np.empty((3, 6, 8), dtype)), (N(nll), expected)


for _name, _base in INPLACE_OF.items():
    for _label, _make, _dtypes in CASES.get(_base, []):
        case(_name, _label, dtypes=_dtypes)(_inplace_of(_name, _base, _make))


# ---- root-mean-square normalisation (kernels/norms.py) --------------------------------------

def _rms_norm_case(rng, dtype, offset):
    x, gamma = rand(rng, (2, 3, 8), dtype), rand(rng, (3, 8), dtype)
    xf = T(x).float()
    rstd = torch.rsqrt(xf.square().mean((1, 2), keepdim=True) + 1e-6)
    y = xf * rstd * (T(gamma).float() + offset)
    outs = (np.empty((2, 3, 8), dtype), np.empty((2, 1, 1), np.float32))
    return {"x": x, "gamma": gamma, "epsilon": 1e-6}, outs, \
        (N(y.to(TORCH_DTYPES[dtype])), N(rstd))


@case("aclnnRmsNorm")
def rms_norm(rng, dtype):
    return _rms_norm_case(rng, dtype, 0.0)


@case("aclnnGemmaRmsNorm")
def gemma_rms_norm(rng, dtype):
    return _rms_norm_case(rng, dtype, 1.0)


@case("aclnnRmsNormQuant", "per-tensor scale and offset, saturating, NaN row 0",
      dtypes=("float16", "bfloat16"))
def rms_norm_quant(rng, dtype):
    x, gamma, beta = rand(rng, (3, 16), dtype), rand(rng, (1, 16), dtype), rand(rng, (16,), dtype)
    x[2, 3] = np.nan
    scale, offset = np.array([0.02], dtype), np.array([3], np.int8)
    v = T(x).float()
    normed = v * torch.rsqrt(v.square().mean(1, keepdim=True) + 1e-6) * T(gamma).float()[0] \
        + T(beta).float()
    value = (normed * (1 / T(scale).float()[0]) + 3).half()
    y = torch.round(torch.nan_to_num(value, nan=0.0).clamp(-128, 127)).to(torch.int8)
    return {"x": x, "gamma": gamma, "beta": beta, "scale": scale, "offset": offset,
            "epsilon": 1e-6}, np.empty((3, 16), np.int8), N(y)


@case("aclnnAddRmsNormQuant", "two quantisations, divMode, saturating",
      dtypes=("float16", "bfloat16"))
def add_rms_norm_quant(rng, dtype):
    x1, x2, gamma = rand(rng, (4, 8), dtype), rand(rng, (4, 8), dtype), rand(rng, (8,), dtype)
    half = dtype == "float16"
    sdtype, zdtype = ("float32", "int32") if half else ("bfloat16", "bfloat16")
    s1, s2 = rand(rng, (8,), sdtype, 0.005, 0.02), rand(rng, (8,), sdtype, 0.01, 0.1)
    z1 = (rng.integers(-5, 5, (8,)) if half else rand(rng, (8,), "float32", -5, 5)).astype(zdtype)
    x = T(x1).float() + T(x2).float()
    xs = x.half().float() if half else x
    normed = xs * torch.rsqrt(xs.square().mean(1, keepdim=True) + 1e-6)
    y = (normed.half() * T(gamma)).float() if half else normed * T(gamma).float()

    def quant(value):
        return torch.round(value).clamp(-128, 127).to(torch.int8)

    outs = (np.empty((4, 8), np.int8), np.empty((4, 8), np.int8), np.empty((4, 8), dtype))
    return {"x1": x1, "x2": x2, "gamma": gamma, "scales1": s1, "scales2Optional": s2,
            "zeroPoints1Optional": z1, "zeroPoints2Optional": None, "axis": -1,
            "epsilon": 1e-6, "divMode": True}, outs, \
        (N(quant(y / T(s1).float() + T(z1).float())), N(quant(y / T(s2).float())),
         N(x.to(TORCH_DTYPES[dtype])))


@case("aclnnAddRmsNorm")
def add_rms_norm(rng, dtype):
    x1, x2, gamma = rand(rng, (4, 8), dtype), rand(rng, (4, 8), dtype), rand(rng, (8,), dtype)
    x = T(x1).float() + T(x2).float()
    rstd = torch.rsqrt(x.square().mean(1, keepdim=True) + 1e-6)
    outs = (np.empty((4, 8), dtype), np.empty((4, 1), np.float32), np.empty((4, 8), dtype))
    return {"x1": x1, "x2": x2, "gamma": gamma, "epsilon": 1e-6}, outs, \
        (N((x * rstd * T(gamma).float()).to(TORCH_DTYPES[dtype])), N(rstd),
         N(x.to(TORCH_DTYPES[dtype])))


@case("aclnnInplaceAddRmsNorm")
def inplace_add_rms_norm(rng, dtype):
    x1, x2, gamma = rand(rng, (4, 8), dtype), rand(rng, (4, 8), dtype), rand(rng, (8,), dtype)
    x = T(x1).float() + T(x2).float()
    rstd = torch.rsqrt(x.square().mean(1, keepdim=True) + 1e-6)
    return {"x1Ref": x1, "x2Ref": x2, "gamma": gamma, "epsilon": 1e-6}, \
        np.empty((4, 1), np.float32), \
        (N((x * rstd * T(gamma).float()).to(TORCH_DTYPES[dtype])), N(x.to(TORCH_DTYPES[dtype])),
         N(rstd))


# ---- indexing (kernels/indexing.py) ----------------------------------------------------------

def _tdtype(dtype):
    return TORCH_DTYPES[np.dtype(dtype)]


@case("aclnnIndexAdd")
def index_add(rng, dtype):
    a, s = rand(rng, (3, 4), dtype), rand(rng, (3, 3), dtype)
    i = np.array([3, 0, 3], np.int64)
    expected = torch.index_add(T(a).float(), 1, T(i), T(s).float(), alpha=2.0)
    return {"self": a, "dim": 1, "index": i, "source": s, "alpha": 2.0}, \
        np.empty((3, 4), dtype), N(expected.to(_tdtype(dtype)))


@case("aclnnIndexAddV2")
def index_add_v2(rng, dtype):
    a, s = rand(rng, (4, 3), dtype), rand(rng, (2, 3), dtype)
    i = np.array([1, 1], np.int32)
    expected = torch.index_add(T(a).float(), 0, T(i).long(), T(s).float())
    return {"self": a, "dim": 0, "index": i, "source": s, "alpha": 1.0, "mode": 0}, \
        np.empty((4, 3), dtype), N(expected.to(_tdtype(dtype)))


@case("aclnnIndexCopy")
def index_copy(rng, dtype):
    a, s = rand(rng, (3, 4), dtype), rand(rng, (3, 2), dtype)
    i = np.array([2, 0], np.int64)
    return {"selfRef": a, "dim": -1, "index": i, "source": s}, np.empty((3, 4), dtype), \
        N(torch.index_copy(T(a), 1, T(i), T(s)))


@case("aclnnInplaceIndexCopy")
def inplace_index_copy(rng, dtype):
    a, s = rand(rng, (4, 2), dtype), rand(rng, (2, 2), dtype)
    i = np.array([3, 1], np.int64)
    return {"selfRef": a.copy(), "dim": 0, "index": i, "source": s}, None, \
        N(torch.index_copy(T(a), 0, T(i), T(s)))


@case("aclnnIndexFillTensor")
def index_fill_tensor(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    return {"self": a, "dim": 1, "index": [0, -1], "value": 1.5}, np.empty((3, 4), dtype), \
        N(torch.index_fill(T(a), 1, torch.tensor([0, 3]), 1.5))


@case("aclnnInplaceIndexFill")
def inplace_index_fill(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    i = np.array([2], np.int64)
    return {"selfRef": a.copy(), "dim": 0, "index": i, "value": -1.0}, None, \
        N(torch.index_fill(T(a), 0, T(i), -1.0))


@case("aclnnInplaceIndexFillTensor")
def inplace_index_fill_tensor(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    return {"selfRef": a.copy(), "dim": 1, "index": [1, 2], "value": 0.5}, None, \
        N(torch.index_fill(T(a), 1, torch.tensor([1, 2]), 0.5))


@case("aclnnIndex")
def index(rng, dtype):
    a = rand(rng, (3, 4, 5), dtype)
    rows, cols = np.array([0, 2, -1], np.int64), np.array([1, 1, 4], np.int64)
    empty = np.zeros((0,), np.int64)
    return {"self": a, "indices": [rows, empty, cols]}, np.empty((3, 4), dtype), \
        N(T(a)[T(rows), :, T(cols)])


@case("aclnnIndex", "mask")
def index_mask(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    mask = np.array([True, False, True])
    return {"self": a, "indices": [mask]}, np.empty((2, 4), dtype), N(T(a)[T(mask)])


@case("aclnnInplaceScatter")
def inplace_scatter(rng, dtype):
    a, s = rand(rng, (3, 4), dtype), rand(rng, (2, 4), dtype)
    i = np.array([[0, 1, 2, 0], [2, 0, 1, 1]], np.int64)
    return {"selfRef": a.copy(), "dim": 0, "index": i, "src": s, "reduce": 0}, None, \
        N(torch.scatter(T(a), 0, T(i), T(s)))


@case("aclnnScatterValue")
def scatter_value(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    i = np.array([[0, 3], [2, 2]], np.int64)
    return {"self": a, "dim": 1, "index": i, "value": 4.0, "reduce": 0}, \
        np.empty((3, 4), dtype), N(torch.scatter(T(a), 1, T(i), 4.0))


@case("aclnnInplaceScatterValue")
def inplace_scatter_value(rng, dtype):
    a = rand(rng, (3, 4), dtype)
    i = np.array([[1], [0]], np.int64)
    expected = torch.scatter_reduce(T(a).float(), 0, T(i), torch.full((2, 1), 2.0), "sum")
    return {"selfRef": a.copy(), "dim": 0, "index": i, "value": 2.0, "reduce": 1}, None, \
        N(expected.to(_tdtype(dtype)))


@case("aclnnScatterReduce", dtypes=("float32",))
def scatter_reduce(rng, dtype):
    a, s = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype)
    i = np.array([[0, 1, 2, 0], [0, 0, 1, 1]], np.int64)
    return {"self": a, "dim": 0, "index": i, "src": s, "reduce": 1, "includeSelf": True}, \
        np.empty((3, 4), dtype), N(torch.scatter_reduce(T(a), 0, T(i), T(s), "sum"))


@case("aclnnInplaceScatterReduce", dtypes=("float32",))
def inplace_scatter_reduce(rng, dtype):
    a, s = rand(rng, (3, 4), dtype), rand(rng, (2, 4), dtype)
    i = np.array([[2, 1, 2, 0], [2, 0, 1, 1]], np.int64)
    return {"selfRef": a.copy(), "dim": 0, "index": i, "src": s, "reduce": 1,
            "includeSelf": True}, None, N(torch.scatter_reduce(T(a), 0, T(i), T(s), "sum"))


def _scatter_nd_expected(data, indices, updates):
    result = T(data).clone()
    result[tuple(T(indices)[:, d] for d in range(indices.shape[1]))] = T(updates)
    return N(result)


@case("aclnnScatterNd")
def scatter_nd(rng, dtype):
    data, updates = rand(rng, (4, 3), dtype), rand(rng, (2, 3), dtype)
    indices = np.array([[3], [1]], np.int64)
    return {"data": data, "indices": indices, "updates": updates}, np.empty((4, 3), dtype), \
        _scatter_nd_expected(data, indices, updates)


@case("aclnnScatterNdUpdate")
def scatter_nd_update(rng, dtype):
    data, updates = rand(rng, (3, 4), dtype), rand(rng, (2,), dtype)
    indices = np.array([[0, 3], [2, 1]], np.int64)
    return {"varRef": data.copy(), "indices": indices, "updates": updates}, None, \
        _scatter_nd_expected(data, indices, updates)


@case("aclnnTfScatterAdd")
def tf_scatter_add(rng, dtype):
    var, updates = rand(rng, (4, 3), dtype), rand(rng, (2, 2, 3), dtype)
    indices = np.array([[0, 3], [0, 1]], np.int64)
    expected = T(var).float().index_add(0, T(indices).reshape(-1),
                                         T(updates).float().reshape(4, 3))
    return {"varRef": var.copy(), "indices": indices, "updates": updates}, None, \
        N(expected.to(_tdtype(dtype)))


@case("aclnnInplacePut")
def inplace_put(rng, dtype):
    a, s = rand(rng, (3, 4), dtype), rand(rng, (3,), dtype)
    i = np.array([0, -1, 5], np.int64)
    expected = T(a).float().put(T(i), T(s).float(), accumulate=True)
    return {"selfRef": a.copy(), "index": i, "source": s, "accumulate": True}, None, \
        N(expected.to(_tdtype(dtype)))


@case("aclnnGatherV3")
def gather_v3(rng, dtype):
    a = rand(rng, (4, 3), dtype)
    i = np.array([[3, 0], [1, 1]], np.int64)
    return {"self": a, "dim": 0, "index": i, "batchDims": 0, "mode": 1}, \
        np.empty((2, 2, 3), dtype), N(T(a)[T(i)])


@case("aclnnEmbeddingDenseBackward")
def embedding_dense_backward(rng, dtype):
    g = rand(rng, (2, 3, 4), dtype)
    i = np.array([[0, 2, 2], [4, 1, 0]], np.int64)
    expected = torch.ops.aten.embedding_dense_backward(T(g).float(), T(i), 5, 1, True)
    return {"grad": g, "indices": i, "numWeights": 5, "paddingIdx": 1,
            "scaleGradByFreq": True}, np.empty((5, 4), dtype), N(expected.to(_tdtype(dtype)))


@case("aclnnInplaceMaskedScatter")
def inplace_masked_scatter(rng, dtype):
    a, s = rand(rng, (3, 4), dtype), rand(rng, (12,), dtype)
    m = np.array([True, False, True, True])
    return {"selfRef": a.copy(), "mask": m, "source": s}, None, \
        N(T(a).masked_scatter(T(m), T(s)))


@case("aclnnRepeatInterleave")
def repeat_interleave(rng, dtype):
    a = rand(rng, (2, 2), dtype)
    r = np.array([1, 0, 3, 2], np.int64)
    return {"self": a, "repeats": r, "outputSize": 6}, np.empty((6,), dtype), \
        N(torch.repeat_interleave(T(a).reshape(-1), T(r)))


@case("aclnnRepeatInterleaveInt")
def repeat_interleave_int(rng, dtype):
    a = rand(rng, (2, 3), dtype)
    return {"self": a, "repeats": 2, "outputSize": 12}, np.empty((12,), dtype), \
        N(torch.repeat_interleave(T(a).reshape(-1), 2))


@case("aclnnRepeatInterleaveWithDim")
def repeat_interleave_with_dim(rng, dtype):
    a = rand(rng, (2, 3), dtype)
    r = np.array([2, 0, 1], np.int32)
    return {"self": a, "repeats": r, "dim": -1, "outputSize": 3}, np.empty((2, 3), dtype), \
        N(torch.repeat_interleave(T(a), T(r).long(), dim=1))


@case("aclnnRepeatInterleaveIntWithDim")
def repeat_interleave_int_with_dim(rng, dtype):
    a = rand(rng, (2, 3), dtype)
    return {"self": a, "repeats": 3, "dim": 0, "outputSize": 6}, np.empty((6, 3), dtype), \
        N(torch.repeat_interleave(T(a), 3, dim=0))


@case("aclnnRepeatInterleaveTensor", dtypes=("float32",))
def repeat_interleave_tensor(rng, dtype):
    r = np.array([2, 0, 3], np.int64)
    return {"repeats": r, "outputSize": 5}, np.empty((5,), np.int64), \
        N(torch.repeat_interleave(T(r)))


@case("aclnnRepeatInterleaveGrad")
def repeat_interleave_grad(rng, dtype):
    g = rand(rng, (2, 6), dtype)
    r = np.array([1, 2, 2, 1], np.int64)
    expected = torch.stack([p.sum(1) for p in torch.split(T(g).float(), [1, 2, 2, 1], 1)], 1)
    return {"yGrad": g, "repeats": r, "axis": 1}, np.empty((2, 4), dtype), \
        N(expected.to(_tdtype(dtype)))


@case("aclnnEmbeddingBag")
def embedding_bag(rng, dtype):
    w, i, o = rand(rng, (5, 3), dtype), np.array([1, 2, 0, 2, 2, 1, 4]), np.array([0, 2, 4, 5])
    output, _, sizes, _ = torch.ops.aten._embedding_bag(T(w).float(), T(i), T(o), False, 1,
                                                        False, None, False, 2)
    return {"weight": w, "indices": i, "offsets": o, "scaleGradByFreq": False, "mode": 1,
            "sparse": False, "perSampleWeights": None, "includeLastOffset": False,
            "paddingIdx": 2}, \
        (np.empty((4, 3), dtype), np.empty((7,), np.int64), np.empty((4,), np.int64),
         np.empty((4,), np.int64)), \
        (N(output.to(_tdtype(dtype))), np.array([0, 0, 1, 1, 2, 3, 3]), N(sizes), None)


@case("aclnnEmbeddingBag", "max")
def embedding_bag_max(rng, dtype):
    w, i, o = _distinct(rng, (5, 3), dtype), np.array([1, 2, 0, 3, 4]), np.array([0, 2, 2])
    output, _, _, best = torch.ops.aten._embedding_bag(T(w), T(i), T(o), False, 2, False, None,
                                                       False, -1)
    return {"weight": w, "indices": i, "offsets": o, "scaleGradByFreq": False, "mode": 2,
            "sparse": False, "perSampleWeights": None, "includeLastOffset": False,
            "paddingIdx": -1}, \
        (np.empty((3, 3), dtype), np.empty((5,), np.int64), np.empty((3,), np.int64),
         np.empty((3, 3), np.int64)), (N(output), None, None, N(best))


def _distinct(rng, shape, dtype):
    """Values without ties (the index of a median or k-th value is then one)."""
    return (rng.permutation(int(np.prod(shape))).reshape(shape) / 4 - 2).astype(dtype)


@case("aclnnMedian")
def median(rng, dtype):
    a = _distinct(rng, (3, 4), dtype)
    return {"self": a}, np.empty((), dtype), N(torch.median(T(a)))


@case("aclnnNanMedian")
def nan_median(rng, dtype):
    a = _distinct(rng, (3, 4), dtype)
    a[0, 1] = np.nan
    return {"self": a}, np.empty((), dtype), N(torch.nanmedian(T(a)))


@case("aclnnMedianDim")
def median_dim(rng, dtype):
    a = _distinct(rng, (3, 5), dtype)
    values, indices = torch.median(T(a), 1, keepdim=True)
    return {"self": a, "dim": 1, "keepDim": True}, \
        (np.empty((3, 1), dtype), np.empty((3, 1), np.int64)), (N(values), N(indices))


@case("aclnnNanMedianDim")
def nan_median_dim(rng, dtype):
    a = _distinct(rng, (4, 3), dtype)
    a[1, 0] = np.nan
    values, indices = torch.nanmedian(T(a), 0)
    return {"self": a, "dim": 0, "keepDim": False}, \
        (np.empty((3,), dtype), np.empty((3,), np.int64)), (N(values), N(indices))


@case("aclnnKthvalue")
def kthvalue(rng, dtype):
    a = _distinct(rng, (3, 5), dtype)
    values, indices = torch.kthvalue(T(a), 4, -1)
    return {"self": a, "k": 4, "dim": -1, "keepdim": False}, \
        (np.empty((3,), dtype), np.empty((3,), np.int64)), (N(values), N(indices))


@case("aclnnNonzero")
def nonzero(rng, dtype):
    a = np.array([[0, 1.5, 0], [2, 0, -1]], dtype)
    return {"self": a}, np.empty((6, 2), np.int64), N(torch.nonzero(T(a)))


@case("aclnnNonzeroV2")
def nonzero_v2(rng, dtype):
    a = np.array([[0, 1.5, 0], [2, 0, -1]], dtype)
    return {"self": a}, np.empty((2, 6), np.int64), N(torch.nonzero(T(a)).T)


@case("aclnnUnique")
def unique(rng, dtype):
    a = np.array([[3, 1, 2], [1, 3, 0.5]], dtype)
    values, inverse = torch.unique(T(a), return_inverse=True)
    return {"self": a, "sorted": True, "returnInverse": True}, \
        (np.empty((6,), dtype), np.empty((2, 3), np.int64)), (N(values), N(inverse))


@case("aclnnUniqueConsecutive")
def unique_consecutive(rng, dtype):
    a = np.array([1, 1, 2, 2, 2, 1, 3], dtype)
    values, inverse, counts = torch.unique_consecutive(T(a), return_inverse=True,
                                                       return_counts=True)
    return {"self": a, "returnInverse": True, "returnCounts": True, "dim": 1000}, \
        (np.empty((7,), dtype), np.empty((7,), np.int64), np.empty((7,), np.int64)), \
        (N(values), N(inverse), N(counts))


@case("aclnnUniqueDim")
def unique_dim(rng, dtype):
    a = np.array([[1, 2], [0, 5], [1, 2]], dtype)
    values, inverse, counts = torch.unique(T(a), return_inverse=True, return_counts=True, dim=0)
    return {"self": a, "sorted": True, "returnInverse": True, "dim": 0}, \
        (np.empty((3, 2), dtype), np.empty((3,), np.int64), np.empty((3,), np.int64)), \
        (N(values), N(inverse), N(counts))
# ---- layer-norm and RMS-norm variants (kernels/norms.py) -------------------------------------

@case("aclnnAddLayerNorm")
def add_layer_norm(rng, dtype):
    x1, x2 = rand(rng, (2, 3, 8), dtype), rand(rng, (2, 3, 8), dtype)
    gamma, beta, bias = (rand(rng, (8,), dtype) for _ in range(3))
    x = T(x1).float() + T(x2).float() + T(bias).float()
    variance, mean = torch.var_mean(x, -1, correction=0, keepdim=True)
    y = torch.nn.functional.layer_norm(x, (8,), T(gamma).float(), T(beta).float(), 1e-5)
    outs = (np.empty((2, 3, 8), dtype), np.empty((2, 3, 1), np.float32),
            np.empty((2, 3, 1), np.float32), np.empty((2, 3, 8), dtype))
    return {"x1": x1, "x2": x2, "gamma": gamma, "beta": beta, "biasOptional": bias,
            "epsilon": 1e-5, "additionalOutput": True}, outs, \
        (N(y.to(TORCH_DTYPES[dtype])), N(mean), N(torch.rsqrt(variance + 1e-5)),
         N(x.to(TORCH_DTYPES[dtype])))


@case("aclnnRmsNormGrad")
def rms_norm_grad(rng, dtype):
    x, dy = rand(rng, (4, 2, 8), dtype), rand(rng, (4, 2, 8), dtype)
    gamma = rand(rng, (2, 8), dtype)
    xf = T(x).float().requires_grad_()
    gf = T(gamma).float().requires_grad_()
    rstd = torch.rsqrt(xf.detach().square().mean((1, 2), keepdim=True) + 1e-6)
    y = xf * torch.rsqrt(xf.square().mean((1, 2), keepdim=True) + 1e-6) * gf
    y.backward(T(dy).float())
    outs = (np.empty((4, 2, 8), dtype), np.empty((2, 8), np.float32))
    return {"dy": dy, "x": x, "rstd": N(rstd.reshape(4)), "gamma": gamma}, outs, \
        (N(xf.grad.to(TORCH_DTYPES[dtype])), N(gf.grad))


@case("aclnnAddLayerNormGrad")
def add_layer_norm_grad(rng, dtype):
    dy, x1, x2, dsum = (rand(rng, (3, 8), dtype) for _ in range(4))
    gamma = rand(rng, (8,), dtype)
    x = (T(x1).float() + T(x2).float()).requires_grad_()
    g = T(gamma).float().requires_grad_()
    beta = torch.zeros(8, requires_grad=True)
    variance, mean = torch.var_mean(x.detach(), -1, correction=0, keepdim=True)
    rstd = torch.rsqrt(variance + 1e-5)
    torch.nn.functional.layer_norm(x, (8,), g, beta, 1e-5).backward(T(dy).float())
    outs = (np.empty((3, 8), dtype), np.empty((8,), np.float32), np.empty((8,), np.float32))
    return {"dy": dy, "x1": x1, "x2": x2, "rstd": N(rstd), "mean": N(mean), "gamma": gamma,
            "dsumOptional": dsum}, outs, \
        (N((x.grad + T(dsum).float()).to(TORCH_DTYPES[dtype])), N(g.grad), N(beta.grad))


@case("aclnnAddRmsNormCast", dtypes=("float16", "bfloat16"))
def add_rms_norm_cast(rng, dtype):
    x1, x2, gamma = rand(rng, (4, 8), dtype), rand(rng, (4, 8), dtype), rand(rng, (8,), dtype)
    x = T(x1).float() + T(x2).float()
    rstd = torch.rsqrt(x.square().mean(1, keepdim=True) + 1e-6)
    y = x * rstd * T(gamma).float()
    outs = (np.empty((4, 8), np.float32), np.empty((4, 8), dtype), np.empty((4, 1), np.float32),
            np.empty((4, 8), dtype))
    return {"x1": x1, "x2": x2, "gamma": gamma, "epsilon": 1e-6}, outs, \
        (N(y), N(y.to(TORCH_DTYPES[dtype])), N(rstd), N(x.to(TORCH_DTYPES[dtype])))


@case("aclnnLayerNormWithImplMode")
def layer_norm_with_impl_mode(rng, dtype):
    arguments, outs, expected = layer_norm(rng, dtype)
    return {**arguments, "implMode": 1}, outs, expected


@case("aclnnFastLayerNorm")
def fast_layer_norm(rng, dtype):
    x, w, b = rand(rng, (3, 2, 5), dtype), rand(rng, (2, 5), dtype), rand(rng, (2, 5), dtype)
    variance, mean = torch.var_mean(T(x).float(), (1, 2), correction=0, keepdim=True)
    expected = torch.nn.functional.layer_norm(T(x).float(), (2, 5), T(w).float(),
                                              T(b).float(), 1e-5)
    outs = (np.empty((3, 2, 5), dtype), np.empty((3, 1, 1), np.float32),
            np.empty((3, 1, 1), np.float32))
    return {"input": x, "normalizedShape": [2, 5], "weightOptional": w, "biasOptional": b,
            "eps": 1e-5}, outs, (N(expected.to(TORCH_DTYPES[dtype])), N(mean),
                                 N(torch.rsqrt(variance + 1e-5)))


@case("aclnnDeepNorm")
def deep_norm(rng, dtype):
    x, gx = rand(rng, (3, 8), dtype), rand(rng, (3, 8), dtype)
    gamma, beta = rand(rng, (8,), dtype), rand(rng, (8,), dtype)
    summed = 0.5 * T(x).float() + T(gx).float()
    variance, mean = torch.var_mean(summed, -1, correction=0, keepdim=True)
    y = torch.nn.functional.layer_norm(summed, (8,), T(gamma).float(), T(beta).float(), 1e-5)
    outs = (np.empty((3, 1), np.float32), np.empty((3, 1), np.float32), np.empty((3, 8), dtype))
    return {"x": x, "gx": gx, "beta": beta, "gamma": gamma, "alpha": 0.5, "epsilon": 1e-5}, \
        outs, (N(mean), N(torch.rsqrt(variance + 1e-5)), N(y.to(TORCH_DTYPES[dtype])))


@case("aclnnDeepNormGrad")
def deep_norm_grad(rng, dtype):
    dy, x, gx = (rand(rng, (3, 8), dtype) for _ in range(3))
    gamma = rand(rng, (8,), dtype)
    xf, gxf = T(x).float().requires_grad_(), T(gx).float().requires_grad_()
    g = T(gamma).float().requires_grad_()
    beta = torch.zeros(8, requires_grad=True)
    summed = 0.5 * xf + gxf
    variance, mean = torch.var_mean(summed.detach(), -1, correction=0, keepdim=True)
    torch.nn.functional.layer_norm(summed, (8,), g, beta, 1e-5).backward(T(dy).float())
    outs = (np.empty((3, 8), dtype), np.empty((3, 8), dtype), np.empty((8,), np.float32),
            np.empty((8,), np.float32))
    return {"dy": dy, "x": x, "gx": gx, "gamma": gamma, "mean": N(mean),
            "rstd": N(torch.rsqrt(variance + 1e-5)), "alpha": 0.5}, outs, \
        (N(xf.grad.to(TORCH_DTYPES[dtype])), N(gxf.grad.to(TORCH_DTYPES[dtype])),
         N(beta.grad), N(g.grad))


def _group_norm_act_case(rng, dtype, scale, stats_dtype=None):
    x = rand(rng, (2, 4, 3, 2), dtype)
    g, b = rand(rng, (4,), dtype), rand(rng, (4,), dtype)
    y = torch.nn.functional.group_norm(T(x).float(), 2, T(g).float(), T(b).float(), 1e-5)
    if scale is not None:
        y = y * torch.sigmoid(scale * y)
    variance, mean = torch.var_mean(T(x).float().reshape(2, 2, -1), -1, correction=0)
    rstd = torch.rsqrt(variance + 1e-5)
    stats = TORCH_DTYPES[stats_dtype or dtype]
    outs = (np.empty(x.shape, dtype), np.empty((2, 2), stats_dtype or dtype),
            np.empty((2, 2), stats_dtype or dtype))
    return x, g, b, outs, (N(y.to(TORCH_DTYPES[dtype])), N(mean.to(stats)), N(rstd.to(stats)))


@case("aclnnGroupNormSilu")
def group_norm_silu(rng, dtype):
    x, g, b, outs, expected = _group_norm_act_case(rng, dtype, 1.0)
    return {"self": x, "gamma": g, "beta": b, "group": 2, "eps": 1e-5}, outs, expected


@case("aclnnGroupNormSiluV2")
def group_norm_silu_v2(rng, dtype):
    x, g, b, outs, expected = _group_norm_act_case(rng, dtype, None)
    return {"self": x, "gamma": g, "beta": b, "group": 2, "eps": 1e-5, "activateSilu": False}, \
        outs, expected


@case("aclnnGroupNormSwish")
def group_norm_swish(rng, dtype):
    x, g, b, outs, expected = _group_norm_act_case(rng, dtype, 1.5)
    return {"x": x, "gamma": g, "beta": b, "numGroups": 2, "dataFormatOptional": "NCHW",
            "eps": 1e-5, "activateSwish": True, "swishScale": 1.5}, outs, expected


@case("aclnnGroupNormSwishGrad")
def group_norm_swish_grad(rng, dtype):
    """gamma, beta and the statistics float32 (the doc lets them be x's dtype or float32)."""
    x, dy = rand(rng, (2, 4, 3), dtype), rand(rng, (2, 4, 3), dtype)
    g, b = rand(rng, (4,), np.float32), rand(rng, (4,), np.float32)
    xf = T(x).float().requires_grad_()
    gf, bf = T(g).requires_grad_(), T(b).requires_grad_()
    y = torch.nn.functional.group_norm(xf, 2, gf, bf, 1e-5)
    (y * torch.sigmoid(1.5 * y)).backward(T(dy).float())
    variance, mean = torch.var_mean(T(x).float().reshape(2, 2, -1), -1, correction=0)
    rstd = torch.rsqrt(variance + 1e-5)
    outs = (np.empty(x.shape, dtype), np.empty((4,), np.float32), np.empty((4,), np.float32))
    return {"dy": dy, "mean": N(mean), "rstd": N(rstd), "x": x, "gamma": g, "beta": b,
            "numGroups": 2, "dataFormatOptional": "NCHW", "swishScale": 1.5,
            "dgammaIsRequire": True, "dbetaIsRequire": True}, outs, \
        (N(xf.grad.to(TORCH_DTYPES[dtype])), N(gf.grad), N(bf.grad))


@case("aclnnRenorm")
def renorm(rng, dtype):
    x = rand(rng, (3, 4, 2), dtype)
    expected = torch.renorm(T(x).float(), 2.0, 1, 1.5)
    return {"self": x, "p": np.float32(2.0), "dim": 1, "maxNorm": np.float32(1.5)}, \
        np.empty(x.shape, dtype), N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnRenorm", "p3-negative-dim")
def renorm_p3(rng, dtype):
    x = rand(rng, (4, 5), dtype)
    expected = torch.renorm(T(x).float(), 3.0, -2, 1.0)
    return {"self": x, "p": np.float32(3.0), "dim": -2, "maxNorm": np.float32(1.0)}, \
        np.empty(x.shape, dtype), N(expected.to(TORCH_DTYPES[dtype]))


for _label, _make, _dtypes in CASES["aclnnRenorm"]:  # defined after the loop above
    case("aclnnInplaceRenorm", _label, dtypes=_dtypes)(
        _inplace_of("aclnnInplaceRenorm", "aclnnRenorm", _make))


@case("aclnnEmbeddingRenorm")
def embedding_renorm(rng, dtype):
    weight = rand(rng, (6, 4), dtype)
    indices = np.array([[0, 3], [3, 5]], np.int64)
    expected = T(weight).float().clone()
    with torch.no_grad():
        torch.embedding_renorm_(expected, T(indices).reshape(-1), 1.0, 2.0)
    return {"selfRef": weight, "indices": indices, "maxNorm": 1.0, "normType": 2.0}, None, \
        N(expected.to(TORCH_DTYPES[dtype]))


def _ada_layer_norm_case(rng, dtype, statistics):
    x = rand(rng, (2, 3, 8), dtype)
    scale, shift = rand(rng, (2, 1, 8), dtype), rand(rng, (2, 8), dtype)
    w, b = rand(rng, (8,), dtype), rand(rng, (8,), dtype)
    xf = T(x).float()
    y = torch.nn.functional.layer_norm(xf, (8,), T(w).float(), T(b).float(), 1e-5)
    y = y * (1 + T(scale).float()) + T(shift).float().reshape(2, 1, 8)
    variance, mean = torch.var_mean(xf, -1, correction=0, keepdim=True)
    arguments = {"x": x, "scale": scale, "shift": shift, "weightOptional": w,
                 "biasOptional": b, "epsilon": 1e-5}
    cast = TORCH_DTYPES[dtype]
    if not statistics:
        return arguments, np.empty(x.shape, dtype), N(y.to(cast))
    outs = (np.empty(x.shape, dtype), np.empty((2, 3, 1), dtype), np.empty((2, 3, 1), dtype))
    return arguments, outs, (N(y.to(cast)), N(mean.to(cast)),
                             N(torch.rsqrt(variance + 1e-5).to(cast)))


@case("aclnnAdaLayerNorm")
def ada_layer_norm(rng, dtype):
    return _ada_layer_norm_case(rng, dtype, False)


@case("aclnnAdaLayerNormV2")
def ada_layer_norm_v2(rng, dtype):
    return _ada_layer_norm_case(rng, dtype, True)


@case("aclnnAdaLayerNormBackward")
def ada_layer_norm_backward(rng, dtype):
    x, dy = rand(rng, (2, 3, 8), dtype), rand(rng, (2, 3, 8), dtype)
    scale, shift = rand(rng, (2, 1, 8), dtype), rand(rng, (2, 1, 8), dtype)
    w, b = rand(rng, (8,), dtype), rand(rng, (8,), dtype)
    tensors = [T(a).float().requires_grad_() for a in (x, scale, shift, w, b)]
    xf, sf, hf, wf, bf = tensors
    y = torch.nn.functional.layer_norm(xf, (8,), wf, bf, 1e-5) * (1 + sf) + hf
    y.backward(T(dy).float())
    variance, mean = torch.var_mean(T(x).float(), -1, correction=0, keepdim=True)
    cast = TORCH_DTYPES[dtype]
    outs = (np.empty(x.shape, dtype), np.empty(scale.shape, dtype),
            np.empty(shift.shape, dtype), np.empty((8,), dtype), np.empty((8,), dtype))
    return {"gradOut": dy, "input": x, "normalizedShape": [8],
            "rstd": N(torch.rsqrt(variance + 1e-5).to(cast)), "mean": N(mean.to(cast)),
            "scale": scale, "shift": shift, "weightOptional": w, "biasOptional": b}, outs, \
        tuple(N(t.grad.to(cast)) for t in tensors)


@case("aclnnBatchNormStats", dtypes=("float32", "float16"))
def batch_norm_stats(rng, dtype):
    x = rand(rng, (4, 3, 5), dtype)
    variance, mean = torch.var_mean(T(x).float(), (0, 2), correction=0)
    invstd = torch.rsqrt(variance + 1e-5)
    return {"input": x, "eps": 1e-5}, (np.empty((3,), np.float32), np.empty((3,), np.float32)), \
        (N(mean), N(invstd))


@case("aclnnBatchNormElemt")
def batch_norm_elemt(rng, dtype):
    x = rand(rng, (2, 3, 4), dtype)
    w, b, mean = rand(rng, (3,), dtype), rand(rng, (3,), dtype), rand(rng, (3,), np.float32)
    invstd = rand(rng, (3,), np.float32, 0.5, 2.0)
    y = (T(x).float() - T(mean).reshape(1, 3, 1)) * T(invstd).reshape(1, 3, 1) \
        * T(w).float().reshape(1, 3, 1) + T(b).float().reshape(1, 3, 1)
    return {"input": x, "weight": w, "bias": b, "mean": mean, "invstd": invstd, "eps": 1e-5}, \
        np.empty(x.shape, dtype), N(y.to(TORCH_DTYPES[dtype]))


@case("aclnnBatchNormGatherStatsWithCounts")
def batch_norm_gather_stats_with_counts(rng, dtype):
    x = rand(rng, (2, 3, 4), dtype)
    mean, invstd = rand(rng, (2, 3), dtype), rand(rng, (2, 3), dtype, 0.5, 2.0)
    counts = np.array([5.0, 7.0], dtype)
    rm, rv = rand(rng, (3,), dtype), rand(rng, (3,), dtype, 0.5, 2.0)
    n = T(counts).float().reshape(-1, 1)
    means, variances = T(mean).float(), 1 / T(invstd).float().square() - 1e-5
    average = (means * n).sum(0) / 12
    pooled = (n * (variances + (means - average).square())).sum(0)
    cast = TORCH_DTYPES[dtype]
    outs = (np.empty((3,), dtype), np.empty((3,), dtype))
    return {"input": x, "mean": mean, "invstd": invstd, "runningMean": rm, "runningVar": rv,
            "momentum": 0.1, "eps": 1e-5, "counts": counts}, outs, \
        (N((T(rm).float() * 0.9 + average * 0.1).to(cast)),
         N((T(rv).float() * 0.9 + pooled / 11 * 0.1).to(cast)), N(average.to(cast)),
         N(torch.rsqrt(pooled / 12 + 1e-5).to(cast)))


@case("aclnnSyncBatchNormGatherStats", dtypes=("float32", "float16"))
def sync_batch_norm_gather_stats(rng, dtype):
    total = rand(rng, (3, 4), dtype, 0.0, 5.0)
    squares = rand(rng, (3, 4), dtype, 10.0, 20.0)
    counts = np.array([3, 4, 5], np.int32)
    mean, variance = rand(rng, (4,), dtype), rand(rng, (4,), dtype, 0.5, 2.0)
    average = T(total).float().sum(0) / 12
    spread = T(squares).float().sum(0) / 12 - average.square()
    cast = TORCH_DTYPES[dtype]
    return {"totalSum": total, "totalSquareSum": squares, "sampleCount": counts,
            "mean": mean.copy(), "variance": variance.copy(), "momentum": 0.1, "eps": 1e-5}, \
        (np.empty((4,), dtype), np.empty((4,), dtype)), \
        (N((T(mean).float() * 0.9 + average * 0.1).to(cast)),
         N((T(variance).float() * 0.9 + spread * 12 / 11 * 0.1).to(cast)),
         N(average.to(cast)), N(torch.rsqrt(spread + 1e-5).to(cast)))


@case("aclnnBatchNormReduce")
def batch_norm_reduce(rng, dtype):
    x = rand(rng, (2, 3, 4, 5), dtype)
    values = T(x).float()
    return {"x": x}, (np.empty((3,), np.float32), np.empty((3,), np.float32)), \
        (N(values.sum((0, 2, 3))), N(values.square().sum((0, 2, 3))))


def _batch_norm_grads(x, g, weight):
    """PyTorch's batch-norm gradients of input and weight, with the batch's statistics."""
    inputs = T(x).float().requires_grad_()
    scale = T(weight).float().requires_grad_()
    out = torch.nn.functional.batch_norm(inputs, None, None, scale, None, True, 0.1, 1e-5)
    out.backward(T(g).float())
    return inputs.grad, scale.grad


@case("aclnnBatchNormReduceBackward")
def batch_norm_reduce_backward(rng, dtype):
    x, g = rand(rng, (3, 4, 5), dtype), rand(rng, (3, 4, 5), dtype)
    weight = rand(rng, (4,), dtype, 0.5, 1.5)
    values = T(x).float()
    mean = values.mean((0, 2))
    invstd = torch.rsqrt(values.var((0, 2), unbiased=False) + 1e-5)
    _, grad_weight = _batch_norm_grads(x, g, weight)
    cast = TORCH_DTYPES[dtype]
    sum_dy = T(g).float().sum((0, 2))
    outs = tuple(np.empty((4,), dtype) for _ in range(4))
    return {"gradOut": g, "input": x, "mean": N(mean.to(cast)), "invstd": N(invstd.to(cast)),
            "weight": weight, "inputG": True, "weightG": True, "biasG": True}, outs, \
        (N(sum_dy.to(cast)),
         N((T(g).float() * (values - mean.to(cast).float().reshape(1, 4, 1))).sum((0, 2))
           .to(cast)), N(grad_weight.to(cast)), N(sum_dy.to(cast)))


@case("aclnnBatchNormElemtBackward")
def batch_norm_elemt_backward(rng, dtype):
    x, g = rand(rng, (3, 4, 5), dtype), rand(rng, (3, 4, 5), dtype)
    weight = rand(rng, (4,), dtype, 0.5, 1.5)
    values, grads = T(x).float(), T(g).float()
    mean = values.mean((0, 2))
    invstd = torch.rsqrt(values.var((0, 2), unbiased=False) + 1e-5)
    sum_dy = grads.sum((0, 2))
    sum_dy_xmu = (grads * (values - mean.reshape(1, 4, 1))).sum((0, 2))
    grad_input, _ = _batch_norm_grads(x, g, weight)
    return {"gradOut": g, "input": x, "mean": mean.numpy(), "invstd": invstd.numpy(),
            "weight": weight, "sumDy": sum_dy.numpy(), "sumDyXmu": sum_dy_xmu.numpy(),
            "counter": np.array([7, 8], np.int32)}, np.empty(x.shape, dtype), \
        N(grad_input.to(TORCH_DTYPES[dtype]))


@case("aclnnModulate")
def modulate(rng, dtype):
    x = rand(rng, (2, 3, 4), dtype)
    scale, shift = rand(rng, (2, 4), dtype), rand(rng, (2, 1, 4), dtype)
    expected = T(x).float() * (1 + T(scale).float().reshape(2, 1, 4)) + T(shift).float()
    return {"self": x, "scaleOptional": scale, "shiftOptional": shift}, \
        np.empty(x.shape, dtype), N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnModulateBackward")
def modulate_backward(rng, dtype):
    g, x = rand(rng, (2, 3, 4), dtype), rand(rng, (2, 3, 4), dtype)
    scale, shift = rand(rng, (2, 4), dtype), rand(rng, (2, 4), dtype)
    grads, values = T(g).float(), T(x).float()
    cast = TORCH_DTYPES[dtype]
    outs = (np.empty(x.shape, dtype), np.empty((2, 4), dtype), np.empty((2, 4), dtype))
    return {"grad_output": g, "input": x, "scale": scale, "shift": shift}, outs, \
        (N((grads * T(scale).float().reshape(2, 1, 4)).to(cast)),
         N((grads * values).sum(1).to(cast)), N(grads.sum(1).to(cast)))


# ---- optimizers (kernels/optimizers.py) ------------------------------------------------------

def _torch_adamw(var, m, v, max_sq, grad, step, amsgrad, maximize):
    """torch.optim's single-tensor AdamW in float32 (it counts the step, as CANN's kernels);
    the updated tensors."""
    from torch.optim import adamw as torch_adamw
    tensors = [T(a).float().clone() for a in (var, m, v)]
    maxes = [T(max_sq).float().clone()] if amsgrad else []
    torch_adamw.adamw([tensors[0]], [T(grad).float()], [tensors[1]], [tensors[2]], maxes,
                      [torch.tensor(float(step))], foreach=False, amsgrad=amsgrad, beta1=0.9,
                      beta2=0.999, lr=0.01, weight_decay=0.1, eps=1e-8, maximize=maximize)
    return tensors + maxes


@case("aclnnApplyAdamWV2")
def apply_adam_w_v2(rng, dtype):
    var, m, grad, max_sq = (rand(rng, (3, 5), dtype) for _ in range(4))
    v = rand(rng, (3, 5), dtype, 0.0, 1.0)
    max_sq = np.maximum(max_sq.astype(np.float32), 0).astype(dtype)
    wanted = _torch_adamw(var, m, v, max_sq, grad, 2, True, True)
    return {"varRef": var, "mRef": m, "vRef": v, "maxGradNormOptionalRef": max_sq,
            "grad": grad, "step": np.array([2], np.int64), "lr": 0.01, "beta1": 0.9,
            "beta2": 0.999, "weightDecay": 0.1, "eps": 1e-8, "amsgrad": True,
            "maximize": True}, None, tuple(N(w.to(TORCH_DTYPES[dtype])) for w in wanted)


@case("aclnnFusedAdamw")
def fused_adamw(rng, dtype):
    shapes = ((4,), (2, 3))
    params = [rand(rng, s, dtype) for s in shapes]
    grads = [rand(rng, s, dtype) for s in shapes]
    ms = [rand(rng, s, dtype) for s in shapes]
    vs = [rand(rng, s, dtype, 0.0, 1.0) for s in shapes]
    steps = [np.array([1.0], np.float32), np.array([4.0], np.float32)]
    scale = np.array([2.0], np.float32)
    wanted = [_torch_adamw(p, m, v, None, N(T(g).float() / 2), s[0], False, False)
              for p, g, m, v, s in zip(params, grads, ms, vs, steps)]
    cast = lambda index: [N(w[index].to(TORCH_DTYPES[dtype])) for w in wanted]  # noqa: E731
    return {"paramsRef": params, "grads": grads, "expAvgsRef": ms, "expAvgSqsRef": vs,
            "maxExpAvgSqsRef": None, "stateSteps": steps, "gradScaleOptional": scale,
            "foundInfOptional": np.array([0.0], np.float32), "lr": 0.01, "beta1": 0.9,
            "beta2": 0.999, "weightDecay": 0.1, "eps": 1e-8, "amsgrad": False,
            "maximize": False}, None, (cast(0), cast(1), cast(2))


@case("aclnnFusedSgd")
def fused_sgd(rng, dtype):
    from torch.optim import sgd as torch_sgd
    shapes = ((5,), (2, 2))
    params = [rand(rng, s, dtype) for s in shapes]
    grads = [rand(rng, s, dtype) for s in shapes]
    buffers = [rand(rng, s, dtype) for s in shapes]
    unscaled = [T(g).float() / 4 for g in grads]
    tensors = [T(p).float().clone() for p in params]
    kept = [T(b).float().clone() for b in buffers]
    torch_sgd.sgd(tensors, unscaled, kept, foreach=False, weight_decay=0.01, momentum=0.9,
                  lr=0.1, dampening=0.0, nesterov=True, maximize=False)
    cast = lambda values: [N(v.to(TORCH_DTYPES[dtype])) for v in values]  # noqa: E731
    return {"paramsRef": params, "gradsRef": grads, "momentumBufferListOptionalRef": buffers,
            "gradScaleOptional": np.array([4.0], np.float32), "weightDecay": 0.01,
            "momentum": 0.9, "lr": 0.1, "dampening": 0.0, "nesterov": True, "maximize": False,
            "isFirstStep": False}, None, (cast(tensors), cast(unscaled), cast(kept))


@case("aclnnApplyFusedEmaAdam")
def apply_fused_ema_adam(rng, dtype):
    grad, var, m, s = (rand(rng, (2, 6), dtype) for _ in range(4))
    v = rand(rng, (2, 6), dtype, 0.0, 1.0)
    g, w = T(grad).float(), T(var).float()
    c1, c2 = 1 - 0.9 ** 3, 1 - 0.999 ** 3
    g = g + 0.05 * w  # mode 0: L2 weight decay in the gradient
    m_out = 0.9 * T(m).float() + 0.1 * g
    v_out = 0.999 * T(v).float() + 0.001 * g * g
    w = w - 0.01 * ((m_out / c1) / (torch.sqrt(v_out / c2) + 1e-8))
    s_out = 0.99 * T(s).float() + 0.01 * w
    return {"grad": grad, "varRef": var, "mRef": m, "vRef": v, "sRef": s,
            "step": np.array([3], np.int64), "lr": 0.01, "emaDecay": 0.99, "beta1": 0.9,
            "beta2": 0.999, "eps": 1e-8, "mode": 0, "biasCorrection": True,
            "weightDecay": 0.05}, None, \
        tuple(N(t.to(TORCH_DTYPES[dtype])) for t in (w, m_out, v_out, s_out))


@case("aclnnAmpUpdateScale")
def amp_update_scale(rng, dtype):
    scale = torch.tensor([1024.0])
    tracker = torch.tensor([1], dtype=torch.int32)
    torch._amp_update_scale_(scale, tracker, torch.tensor([0.0]), 2.0, 0.5, 2)
    return {"currentScale": np.array([1024.0], dtype), "growthTracker": np.array([1], np.int32),
            "foundInf": np.array([0.0], dtype), "growthFactor": 2.0, "backoffFactor": 0.5,
            "growthInterval": 2}, (np.empty((1,), dtype), np.empty((1,), np.int32)), \
        (N(scale.to(TORCH_DTYPES[dtype])), N(tracker))
# ---- FRACTAL_NZ weights and the quantised matmuls (kernels/matmul.py, kernels/quant.py) -------


def _nz_blocks(matrix: Any, c0: int) -> Any:
    """A [a, b] matrix (multiples of 16 and c0) as FRACTAL_NZ blocks [b / c0, a / 16, 16, c0]
    (ops-math conversion/trans_data/README.md; aclnnQuantMatmulWeightNz.md's (n1, k1, k0, n0))."""
    a, b = matrix.shape
    return matrix.reshape(a // 16, 16, b // c0, c0).permute(2, 0, 1, 3)


@case("aclnnTransMatmulWeight", dtypes=("float16", "bfloat16"))
def trans_matmul_weight(rng, dtype):
    weight = rand(rng, (32, 48), dtype)
    return {"mmWeightRef": weight}, None, N(_nz_blocks(T(weight), 16).reshape(32, 48))


@case("aclnnTransMatmulWeight", "int8", dtypes=("float32",))
def trans_matmul_weight_int8(rng, dtype):
    weight = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    return {"mmWeightRef": weight}, None, N(_nz_blocks(T(weight), 32).reshape(32, 64))


@case("aclnnMatmulWeightNz", dtypes=("float16", "bfloat16"))
def matmul_weight_nz(rng, dtype):
    a, b = rand(rng, (5, 20), dtype), rand(rng, (20, 24), dtype)  # padded blocks
    return {"self": a, "mat2": b, "cubeMathType": 1}, np.empty((5, 24), dtype), \
        N((T(a).float() @ T(b).float()).to(TORCH_DTYPES[dtype]))


@case("aclnnBatchMatMulWeightNz", dtypes=("float16", "bfloat16"))
def batch_matmul_weight_nz(rng, dtype):
    a, b = rand(rng, (2, 3, 40), dtype), rand(rng, (2, 40, 17), dtype)
    return {"self": a, "mat2": b, "cubeMathType": 1}, np.empty((2, 3, 17), dtype), \
        N((T(a).float() @ T(b).float()).to(TORCH_DTYPES[dtype]))


def _packed(scale: np.ndarray, offset: np.ndarray | None, fp19: bool) -> np.ndarray:
    """aclnnTransQuantParamV2 / V3's uint64 (ops-nn quant/trans_quant_param_v2/op_kernel/
    trans_quant_param_v2.h): the float32's top 19 bits (roundMode 1: rounded there to nearest
    even) | 1 << 46 | the offset rounded to an int9 at bit 37."""
    bits = scale.view(np.uint32).astype(np.uint64)
    if fp19:  # normal values: add half an ulp of the kept bits, ties to even
        bits = bits + np.uint64(0xFFF) + ((bits >> np.uint64(13)) & np.uint64(1))
    packed = (bits & np.uint64(0xFFFFE000)) | np.uint64(1 << 46)
    if offset is not None:
        nine = np.clip(np.rint(offset), -256, 255).astype(np.int64).astype(np.uint64)
        packed |= (nine & np.uint64(0x1FF)) << np.uint64(37)
    return packed


@case("aclnnTransQuantParamV2", dtypes=("float32",))
def trans_quant_param_v2(rng, dtype):
    scale = rand(rng, (16,), np.float32, 0.001, 3)
    offset = np.array([-300.0, 2.5, 3.5, -1.5, 255.4, 0.0, 7.0, -7.0] * 2, np.float32)
    return {"scale": scale, "offset": offset}, np.empty((16,), np.uint64), \
        _packed(scale, offset, False)


@case("aclnnTransQuantParamV3", "roundMode 1, one scale", dtypes=("float32",))
def trans_quant_param_v3(rng, dtype):
    scale = np.array([1.0 + 3 * 2.0 ** -11], np.float32)  # a tie of its 10-bit mantissa
    offset = rand(rng, (8,), np.float32, -20, 20)
    return {"scale": scale, "offset": offset, "roundMode": 1}, np.empty((8,), np.uint64), \
        _packed(np.repeat(scale, 8), offset, True)


def _quant_matmul_case(rng, dtype, nz):
    x1 = rng.integers(-128, 128, (4, 40)).astype(np.int8)
    x2 = rng.integers(-128, 128, (40, 24)).astype(np.int8)
    scale = rand(rng, (24,), np.float32, 1e-4, 1e-3)
    bias = rng.integers(-1000, 1000, (24,)).astype(np.int32)
    exact = T(x1).long() @ T(x2).long() + T(bias).long()
    kept = torch.from_numpy((scale.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32))
    expected = (exact.float() * kept).to(TORCH_DTYPES[dtype])
    out = np.empty((4, 24), dtype)
    packed = _packed(scale, None, False)
    if nz:
        return {"x1": x1, "x2": x2, "x1Scale": None, "x2Scale": packed, "yScale": None,
                "x1Offset": None, "x2Offset": None, "yOffset": None, "bias": bias,
                "transposeX1": False, "transposeX2": False, "groupSize": 0}, out, N(expected)
    return {"x1": x1, "x2": x2, "scale": packed, "offset": None, "bias": bias,
            "transposeX1": False, "transposeX2": False}, out, N(expected)


@case("aclnnQuantMatmulV3", dtypes=("float16", "bfloat16"))
def quant_matmul_v3(rng, dtype):
    return _quant_matmul_case(rng, dtype, False)


@case("aclnnQuantMatmulWeightNz", dtypes=("float16",))
def quant_matmul_weight_nz(rng, dtype):
    return _quant_matmul_case(rng, dtype, True)


@case("aclnnQuantMatmulV2", "deqScale padded to 16, adjX2", dtypes=("float16",))
def quant_matmul_v2(rng, dtype):
    x1 = rng.integers(-128, 128, (2, 3, 40)).astype(np.int8)
    x2 = rng.integers(-128, 128, (2, 5, 40)).astype(np.int8)
    scale = rand(rng, (16,), np.float32, 1e-4, 1e-3)
    bias = rng.integers(-1000, 1000, (5,)).astype(np.int32)
    exact = T(x1).long() @ T(x2).long().transpose(-1, -2) + T(bias).long()
    kept = torch.from_numpy((scale.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32))
    expected = (exact.float() * kept[:5]).half()
    return {"x1": x1, "x2": x2, "bias": bias, "deqScale": _packed(scale, None, False),
            "adjX1": False, "adjX2": True}, np.empty((2, 3, 5), np.float16), N(expected)


@case("aclnnQuantMatmulV4", "per-token, float scale, transposed x2, int8 out",
      dtypes=("float32",))
def quant_matmul_v4(rng, dtype):
    x1 = rng.integers(-128, 128, (3, 32)).astype(np.int8)
    x2 = rng.integers(-128, 128, (8, 32)).astype(np.int8)
    scale, token = rand(rng, (8,), np.float32, 1e-4, 1e-3), rand(rng, (3,), np.float32, 0.5, 2)
    exact = (T(x1).long() @ T(x2).long().T).double()
    value = exact * T(scale).double() * T(token).double()[:, None]
    expected = torch.clamp(torch.round(value.float()), -128, 127).to(torch.int8)
    return {"x1": x1, "x2": x2, "scale": scale, "offset": None,
            "pertokenScaleOptional": token, "bias": None, "transposeX1": False,
            "transposeX2": True}, np.empty((3, 8), np.int8), N(expected)


@case("aclnnDynamicQuant", dtypes=("float16", "bfloat16"))
def dynamic_quant(rng, dtype):
    x, smooth = rand(rng, (2, 3, 16), dtype, -5, 5), rand(rng, (16,), dtype, 0.5, 2)
    rows = (T(x).float() * T(smooth).float()).reshape(6, 16)
    step = 127 / rows.abs().amax(1)
    y = torch.clamp(torch.round(rows * step[:, None]), -128, 127).to(torch.int8)
    return {"x": x, "smoothScalesOptional": smooth}, \
        (np.empty((2, 3, 16), np.int8), np.empty((2, 3), np.float32)), \
        (N(y.reshape(2, 3, 16)), N((1 / step).reshape(2, 3)))


@case("aclnnDynamicQuantV2", "asymmetric, smooth per group", dtypes=("float16", "bfloat16"))
def dynamic_quant_v2(rng, dtype):
    x, smooth = rand(rng, (5, 8), dtype, -3, 6), rand(rng, (2, 8), dtype, 0.5, 2)
    group = np.array([3, 5], np.int32)  # rows 0-2 take smooth[0], 3-4 smooth[1]
    rows = T(x).float() * T(smooth).float()[torch.tensor([0, 0, 0, 1, 1])]
    high, low = rows.amax(1), rows.amin(1)
    scale = (high - low) / 255
    offset = 127 - high / scale
    y = torch.clamp(torch.round(rows * (1 / scale)[:, None] + offset[:, None]), -128, 127)
    return {"x": x, "smoothScalesOptional": smooth, "groupIndexOptional": group, "dstType": 2}, \
        (np.empty((5, 8), np.int8), np.empty((5,), np.float32), np.empty((5,), np.float32)), \
        (N(y.to(torch.int8)), N(scale), N(offset))


@case("aclnnDynamicQuantV2", "asymmetric int4 packed in int32", dtypes=("float16",))
def dynamic_quant_v2_int4(rng, dtype):
    x = rand(rng, (3, 16), dtype, -4, 4)
    rows = T(x).float()
    high, low = rows.amax(1), rows.amin(1)
    scale = (high - low) / 15
    offset = 7 - high / scale
    values = torch.round(rows * (1 / scale)[:, None] + offset[:, None])
    nibbles = torch.clamp(values, -8, 7).long() & 0xF
    packed = (nibbles.reshape(3, 2, 8) << torch.arange(0, 32, 4)).sum(-1)  # first: lowest bits
    return {"x": x, "smoothScalesOptional": None, "groupIndexOptional": None, "dstType": 3}, \
        (np.empty((3, 2), np.int32), np.empty((3,), np.float32), np.empty((3,), np.float32)), \
        (N(packed).astype(np.uint32).view(np.int32), N(scale), N(offset))


@case("aclnnFakeQuantPerTensorAffineCachemask", dtypes=("float32", "float16"))
def fake_quant_per_tensor(rng, dtype):
    x = rand(rng, (4, 6), dtype, -3, 3)
    scale, zero = np.array([0.05], dtype), np.array([3], np.int32)
    out, mask = torch.fake_quantize_per_tensor_affine(
        T(x).float(), float(scale[0]), 3, -20, 20), None
    q = torch.round(T(x).float() * (1 / torch.tensor(float(scale[0])))) + 3
    mask = (q >= -20) & (q <= 20)
    return {"self": x, "scale": scale, "zeroPoint": zero, "fakeQuantEnabled": 1.0,
            "quantMin": -20, "quantMax": 20}, (np.empty((4, 6), dtype), np.empty((4, 6), bool)), \
        (N(out.to(TORCH_DTYPES[dtype])), N(mask))


@case("aclnnFakeQuantPerChannelAffineCachemask", "axis -2", dtypes=("float32", "float16"))
def fake_quant_per_channel(rng, dtype):
    x = rand(rng, (2, 3, 5), dtype, -3, 3)
    scale, zero = np.array([0.05, 0.1, 0.02], dtype), np.array([1, -2, 0], np.int32)
    out = torch.fake_quantize_per_channel_affine(
        T(x).float(), T(scale).float(), T(zero), 1, -30, 30)
    q = torch.round(T(x).float() * (1 / T(scale).float())[:, None]) + T(zero)[:, None].float()
    mask = (q >= -30) & (q <= 30)
    return {"self": x, "scale": scale, "zeroPoint": zero, "axis": -2, "quantMin": -30,
            "quantMax": 30}, (np.empty((2, 3, 5), dtype), np.empty((2, 3, 5), bool)), \
        (N(out.to(TORCH_DTYPES[dtype])), N(mask))
# ---- dropout masks applied (kernels/random_fills.py) -----------------------------------------

def _dropout_mask(rng, shape):
    """A random mask of ``shape``'s elements and its bits as PyTorch's bool mask."""
    count = int(np.prod(shape))
    bits = np.zeros(mask_bytes(count) * 8, np.uint8)
    bits[:count] = rng.integers(0, 2, count)
    mask = np.packbits(bits, bitorder="little")
    return mask, torch.from_numpy(bits[:count].reshape(shape).astype(bool))


@case("aclnnDropoutDoMask")
def dropout_do_mask(rng, dtype):
    x = rand(rng, (5, 60), dtype)
    mask, keep = _dropout_mask(rng, (5, 60))
    expected = torch.where(keep, T(x).float() / 0.75, 0.0).to(TORCH_DTYPES[dtype])
    return {"self": x, "mask": mask, "prob": 0.25}, np.empty((5, 60), dtype), N(expected)


@case("aclnnDropoutBackward")
def dropout_backward(rng, dtype):
    g = rand(rng, (3, 7, 9), dtype)
    mask, keep = _dropout_mask(rng, (3, 7, 9))
    expected = torch.ops.aten.native_dropout_backward(T(g).float(), keep, 2.0)
    return {"gradOutput": g, "mask": mask, "scale": 2.0}, np.empty((3, 7, 9), dtype), \
        N(expected.to(TORCH_DTYPES[dtype]))


# ---- enumeration, counting, lookup, list sums (kernels/counting.py) --------------------------

@case("aclnnRange", dtypes=("float32", "float16"))
def range_(rng, dtype):
    return {"start": 1.0, "end": 4.0, "step": 0.5}, np.empty((7,), dtype), \
        N(torch.arange(1.0, 4.5, 0.5, dtype=TORCH_DTYPES[dtype]))  # torch.range's


@case("aclnnOneHot", dtypes=("float32",))
def one_hot(rng, dtype):
    x = rng.integers(0, 5, (3, 4)).astype(np.int64)
    on, off = np.array([2.5], np.float32), np.array([-1.0], np.float32)
    expected = torch.nn.functional.one_hot(T(x), 5).float() * 3.5 - 1.0
    return {"self": x, "numClasses": 5, "onValue": on, "offValue": off, "axis": -1}, \
        np.empty((3, 4, 5), np.float32), N(expected)


@case("aclnnHistc", dtypes=("float32", "float16"))
def histc(rng, dtype):
    x = rand(rng, (40,), dtype, -1.0, 3.0)
    expected = torch.histc(T(x).float(), 6, 0.0, 2.0).to(TORCH_DTYPES[dtype])
    return {"self": x, "bins": 6, "min": 0.0, "max": 2.0}, np.empty((6,), dtype), N(expected)


@case("aclnnSearchSorted", dtypes=("float32", "float16"))
def search_sorted(rng, dtype):
    rows = np.sort(rand(rng, (3, 8), dtype), axis=1)
    values = rand(rng, (3, 5), dtype)
    expected = torch.searchsorted(T(rows), T(values), right=True)
    return {"sortedSequence": rows, "self": values, "outInt32": False, "right": True,
            "sorter": None}, np.empty((3, 5), np.int64), N(expected)


@case("aclnnSearchSorteds", dtypes=("float32",))
def search_sorteds(rng, dtype):
    order = rng.permutation(8).astype(np.int64)
    sequence = np.empty(8, np.float32)
    sequence[order] = np.arange(8, dtype=np.float32)
    expected = torch.searchsorted(T(sequence), torch.tensor([3.0]), out_int32=True,
                                  sorter=T(order))
    return {"sortedSequence": sequence, "self": 3.0, "outInt32": True, "right": False,
            "sorter": order}, np.empty((1,), np.int32), N(expected)


@case("aclnnIsInScalarTensor", dtypes=("float32",))
def isin_scalar_tensor(rng, dtype):
    tests = np.array([1.0, 2.5, 4.0], np.float32)
    return {"element": 2.5, "testElements": tests, "assumeUnique": False, "invert": False}, \
        np.empty((), np.bool_), N(torch.isin(torch.tensor(2.5), T(tests)))


@case("aclnnIsInTensorScalar", dtypes=("float32", "float16"))
def isin_tensor_scalar(rng, dtype):
    x = np.array([[1.0, 2.0], [2.0, 3.0]], dtype)
    return {"element": x, "testElement": 2.0, "assumeUnique": False, "invert": True}, \
        np.empty((2, 2), np.bool_), N(torch.isin(T(x), torch.tensor(2.0), invert=True))


@case("aclnnAddN")
def add_n(rng, dtype):
    xs = [rand(rng, (4, 6), dtype) for _ in range(3)]
    expected = (T(xs[0]).float() + T(xs[1]).float() + T(xs[2]).float()).to(TORCH_DTYPES[dtype])
    return {"tensors": xs}, np.empty((4, 6), dtype), N(expected)


@case("aclnnSum", dtypes=("float32", "float16"))
def sum_(rng, dtype):
    xs = [rand(rng, (4, 1), dtype), rand(rng, (1, 6), dtype)]
    expected = (T(xs[0]).float() + T(xs[1]).float()).to(TORCH_DTYPES[dtype])
    return {"tensors": xs}, np.empty((4, 6), dtype), N(expected)


# ---- linear algebra (kernels/linalg.py) ------------------------------------------------------

def _well_conditioned(rng, shape, dtype):
    """Matrices near the identity, so every factorisation is stable in float16."""
    return (np.eye(shape[-1]) * 2 + rng.uniform(-0.3, 0.3, shape)).astype(dtype)


@case("aclnnInverse", dtypes=("float32", "float16"))
def inverse(rng, dtype):
    a = _well_conditioned(rng, (2, 4, 4), dtype)
    return {"self": a}, np.empty((2, 4, 4), dtype), \
        N(torch.linalg.inv(T(a).float()).to(TORCH_DTYPES[dtype]))


@case("aclnnLinalgCholesky")
def linalg_cholesky(rng, dtype):
    a = _well_conditioned(rng, (3, 4, 4), np.float32)
    spd = (a @ a.transpose(0, 2, 1)).astype(dtype)
    expected = torch.linalg.cholesky(T(spd).float(), upper=True)
    return {"self": spd, "upper": True}, np.empty((3, 4, 4), dtype), \
        N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnTriangularSolve", dtypes=("float32",))
def triangular_solve(rng, dtype):
    a = _well_conditioned(rng, (1, 4, 4), np.float32)
    b = rand(rng, (2, 4, 3), np.float32)
    x, m = torch.linalg.solve_triangular(T(a), T(b), upper=False), T(a).expand(2, 4, 4)
    return {"self": b, "A": a, "upper": False, "transpose": False, "unitriangular": False}, \
        (np.empty((2, 4, 3), np.float32), np.empty((2, 4, 4), np.float32)), (N(x), N(m))


@case("aclnnSlogdet", dtypes=("float32",))
def slogdet(rng, dtype):
    a = rand(rng, (3, 4, 4), np.float32)
    sign, log = torch.linalg.slogdet(T(a))
    return {"self": a}, (np.empty((3,), np.float32), np.empty((3,), np.float32)), \
        (N(sign), N(log))


@case("aclnnLogdet", dtypes=("float32",))
def logdet(rng, dtype):
    a = _well_conditioned(rng, (2, 3, 3), np.float32)
    return {"self": a}, np.empty((2,), np.float32), N(torch.logdet(T(a)))


@case("aclnnLinalgQr", dtypes=("float32", "float16"))
def linalg_qr(rng, dtype):
    a = _well_conditioned(rng, (2, 5, 5), dtype)[:, :, :3].copy()
    q, r = torch.linalg.qr(T(a).float())
    return {"self": a, "mode": 0}, (np.empty((2, 5, 3), dtype), np.empty((2, 3, 3), dtype)), \
        (N(q.to(TORCH_DTYPES[dtype])), N(r.to(TORCH_DTYPES[dtype])))


@case("aclnnQr", dtypes=("float32",))
def qr(rng, dtype):
    a = _well_conditioned(rng, (4, 4), np.float32)[:, :3].copy()
    q, r = torch.linalg.qr(T(a), mode="complete")
    return {"self": a, "some": False}, (np.empty((4, 4), np.float32),
                                        np.empty((4, 3), np.float32)), (N(q), N(r))


@case("aclnnSvd", dtypes=("float32",))
def svd(rng, dtype):
    a = rand(rng, (2, 5, 3), np.float32)
    outs = (np.empty((2, 3), np.float32), np.empty((2, 5, 3), np.float32),
            np.empty((2, 3, 3), np.float32))
    # u and v are unique up to their columns' signs: only sigma is compared here
    return {"input": a, "fullMatrices": False, "computeUV": True}, outs, \
        (N(torch.linalg.svdvals(T(a))), None, None)


@case("aclnnCdist", "p2")
def cdist(rng, dtype):
    x1, x2 = rand(rng, (2, 5, 3), dtype), rand(rng, (1, 4, 3), dtype)
    expected = torch.cdist(T(x1).float(), T(x2).float(),
                           compute_mode="donot_use_mm_for_euclid_dist")
    return {"x1": x1, "x2": x2, "p": 2.0, "compute_mode": 2}, np.empty((2, 5, 4), dtype), \
        N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnCdist", "p1.5", dtypes=("float32",))
def cdist_p(rng, dtype):
    x1, x2 = rand(rng, (6, 3), dtype), rand(rng, (4, 3), dtype)
    return {"x1": x1, "x2": x2, "p": 1.5, "compute_mode": 0}, np.empty((6, 4), dtype), \
        N(torch.cdist(T(x1), T(x2), p=1.5))


def _cdist_grad(x1, x2, p, dtype):
    a = T(x1).float()
    distances = torch.cdist(a, T(x2).float(), p=p)
    grad = torch.linspace(-1, 1, distances.numel()).reshape(distances.shape)
    cast = TORCH_DTYPES[dtype]
    grad, distances = grad.to(cast).float(), distances.detach().to(cast).float()
    # the gradient of the rounded inputs, as the kernel receives them
    expected = torch.ops.aten._cdist_backward(grad, a.detach(), T(x2).float(), p, distances)
    return N(grad.to(cast)), N(distances.to(cast)), N(expected.to(cast))


@case("aclnnCdistBackward", "p2")
def cdist_backward(rng, dtype):
    x1, x2 = rand(rng, (2, 5, 3), dtype), rand(rng, (2, 4, 3), dtype)
    grad, distances, expected = _cdist_grad(x1, x2, 2.0, dtype)
    return {"grad": grad, "x1": x1, "x2": x2, "cdist": distances, "p": 2.0}, \
        np.empty(x1.shape, dtype), expected


def _cdist_backward_case(p: float, given: float) -> Case:
    def make(rng, dtype):
        x1, x2 = rand(rng, (6, 3), dtype), rand(rng, (4, 3), dtype)
        grad, distances, expected = _cdist_grad(x1, x2, p, dtype)
        return {"grad": grad, "x1": x1, "x2": x2, "cdist": distances, "p": given}, \
            np.empty(x1.shape, dtype), expected
    return make


for _p, _given in ((0.5, 0.5), (1.0, 1.0), (3.0, 3.0), (float("inf"), -1.0)):
    case("aclnnCdistBackward", f"p{_given}", dtypes=("float32",))(
        _cdist_backward_case(_p, _given))


@case("aclnnScale", "from blob, axis 1")
def scale_blob(rng, dtype):
    x, scale, bias = rand(rng, (2, 3, 4, 5), dtype), rand(rng, (3, 4), dtype), \
        rand(rng, (3, 4), dtype)
    expected = T(x).float() * T(scale).float().reshape(1, 3, 4, 1) \
        + T(bias).float().reshape(1, 3, 4, 1)
    return {"x": x, "scale": scale, "bias": bias, "axis": 1, "numAxes": 2,
            "scaleFromBlob": True}, np.empty(x.shape, dtype), N(expected.to(TORCH_DTYPES[dtype]))


@case("aclnnScale", "scale's rank, negative axis, no bias")
def scale_rank(rng, dtype):
    x, scale = rand(rng, (2, 3, 4), dtype), rand(rng, (4,), dtype)
    return {"x": x, "scale": scale, "bias": None, "axis": -1, "numAxes": 0,
            "scaleFromBlob": False}, np.empty(x.shape, dtype), \
        N((T(x).float() * T(scale).float()).to(TORCH_DTYPES[dtype]))


def _torch_exp_segsum(x):
    length = x.shape[-1]
    cumulative = torch.cumsum(x, -1)
    difference = cumulative[..., :, None] - cumulative[..., None, :]
    above = torch.triu(torch.ones(length, length, dtype=torch.bool), 1)
    return torch.exp(difference.masked_fill(above, -torch.inf))


@case("aclnnExpSegsum")
def exp_segsum(rng, dtype):
    x = rand(rng, (2, 3, 5), dtype, -1.0, 0.5)
    return {"self": x}, np.empty((2, 3, 5, 5), dtype), \
        N(_torch_exp_segsum(T(x).double()).to(TORCH_DTYPES[dtype]))


@case("aclnnExpSegsumBackward")
def exp_segsum_backward(rng, dtype):
    x = T(rand(rng, (2, 2, 3, 5), dtype, -1.0, 0.5)).double().requires_grad_()
    y = _torch_exp_segsum(x)
    g = rand(rng, (2, 2, 3, 5, 5), dtype)
    rounded = N(y.detach().to(TORCH_DTYPES[dtype]))
    # autograd's gradient, with the output the kernel is given (rounded): d y / d x = y
    y.backward(T(g).double() * T(rounded).double() / y.detach().clamp_min(1e-300))
    return {"gradOutput": g, "gradSelf": rounded}, \
        np.empty((2, 2, 3, 5), dtype), N(x.grad.to(TORCH_DTYPES[dtype]))


@case("aclnnQuantize", "per channel, int8", dtypes=("float32", "float16"))
def quantize(rng, dtype):
    x, scales = rand(rng, (4, 3), dtype, -40.0, 40.0), rand(rng, (3,), dtype, 0.1, 0.5)
    zero = np.array([-3, 0, 5], np.int32)
    value = T(x).float() / T(scales).float() + T(zero).float()
    return {"x": x, "scales": scales, "zeroPoints": zero, "dtype": np.int8, "axis": -1}, \
        np.empty((4, 3), np.int8), N(torch.round(value).clamp(-128, 127).to(torch.int8))


@case("aclnnQuantize", "one scale, uint8", dtypes=("float32",))
def quantize_one(rng, dtype):
    x, scales = rand(rng, (2, 5), dtype, -1.0, 40.0), np.array([0.25], dtype)
    return {"x": x, "scales": scales, "zeroPoints": None, "dtype": np.uint8, "axis": 0}, \
        np.empty((2, 5), np.uint8), N(torch.round(T(x) / 0.25).clamp(0, 255).to(torch.uint8))


@case("aclnnBincount", dtypes=("float32",))
def bincount(rng, dtype):
    values = rng.integers(0, 6, 30).astype(np.int32)
    weights = rand(rng, (30,), dtype)
    return {"self": values, "weights": weights, "minlength": 8}, np.empty((8,), np.float32), \
        N(torch.bincount(T(values), T(weights), minlength=8))


@case("aclnnBincount", "counts, int8", dtypes=("float32",))
def bincount_counts(rng, dtype):
    values = rng.integers(0, 5, 20).astype(np.int8)
    return {"self": values, "weights": None, "minlength": 0}, np.empty((5,), np.int64), \
        N(torch.bincount(T(values).long(), minlength=5))


@case("aclnnInplaceCumprod")
def inplace_cumprod(rng, dtype):
    x = rand(rng, (3, 4), dtype, 0.5, 1.5)
    return {"input": x.copy(), "dim": np.int32(-1)}, None, \
        N(torch.cumprod(T(x).float(), dim=-1).to(TORCH_DTYPES[dtype]))


# ---- complex numbers (kernels/complex_numbers.py) --------------------------------------------

@case("aclnnComplex", dtypes=("float32",))
def complex_(rng, dtype):
    re, im = rand(rng, (3, 1), np.float32), rand(rng, (1, 4), np.float32)
    return {"real": re, "imag": im}, np.empty((3, 4), np.complex64), \
        N(torch.complex(T(re).expand(3, 4), T(im).expand(3, 4)))


@case("aclnnReal", dtypes=("float32",))
def real(rng, dtype):
    x = (rand(rng, (3, 4), np.float32) + 1j * rand(rng, (3, 4), np.float32)).astype(np.complex64)
    return {"self": x}, np.empty((3, 4), np.float32), N(torch.real(T(x)))


@case("aclnnPolar", dtypes=("float32",))
def polar(rng, dtype):
    magnitude, angle = rand(rng, (2, 5), np.float32, 0.1, 2.0), rand(rng, (5,), np.float32)
    return {"input": magnitude, "angle": angle}, np.empty((2, 5), np.complex64), \
        N(torch.polar(T(magnitude), T(angle).expand(2, 5)))


@case("aclnnAngleV2", dtypes=("float32",))
def angle_v2(rng, dtype):
    x = (rand(rng, (3, 4), np.float32) + 1j * rand(rng, (3, 4), np.float32)).astype(np.complex64)
    return {"x": x}, np.empty((3, 4), np.float32), N(torch.angle(T(x)))


# ---- the tests ------------------------------------------------------------------------------


def _parameters() -> list[Any]:
    found = []
    for name, entries in sorted(CASES.items()):
        for label, make, dtypes in entries:
            for dtype in dtypes:
                found.append(pytest.param(name, make, FLOAT_DTYPES[dtype],
                                          id=f"{name}-{label}-{dtype}"))
    return found


# Operators whose tensors must have a format aclnn_py.call does not give (it makes ND ones), as
# CANN refuses ND there: ops-nn conv/convolution_forward/op_host/op_api/aclnn_convolution.cpp
# FormatChecker (NCL, NCHW, NCDHW by rank), pooling/avg_pool3_d/op_api/aclnn_avgpool2d.cpp
# CheckFormat (NCHW or NCL), pooling/adaptive_avg_pool2d/op_api/aclnn_adaptive_avg_pool2d.cpp
# CheckFormat (the same), pooling/avg_pool3_d_grad/op_api/aclnn_avgpool2d_backward.cpp
# CheckFormatVaild (the same). Their cases run through helpers.call_formatted.
# ops-math math/segsum/op_host/op_api/aclnn_segsum.cpp and exp_segsum_grad/op_host/op_api/
# aclnn_exp_segsum_backward.cpp CheckFormat take ND only, for tensors of 3 to 5 dimensions.
FORMATS = {"aclnnConvolution": "NCHW", "aclnnAvgPool2d": "NCHW", "aclnnAdaptiveAvgPool2d": "NCHW",
           "aclnnAvgPool2dBackward": "NCHW", "aclnnMaxPool": "NCHW", "aclnnExpSegsum": "ND",
           "aclnnExpSegsumBackward": "ND"}


# Operators whose weight CANN takes only in FRACTAL_NZ (aclnn_matmul.cpp CheckWeightNzShapeValid,
# aclnn_quant_matmul_v4.cpp aclnnQuantMatmulWeightNzGetWorkspaceSize): their cases give it ND
# and helpers.call_formatted turns it into FRACTAL_NZ with aclnnTransMatmulWeight first.
NZ_WEIGHTS = {"aclnnMatmulWeightNz": "mat2", "aclnnBatchMatMulWeightNz": "mat2",
              "aclnnQuantMatmulWeightNz": "x2"}


def _call(name: str, arguments: dict[str, Any], given: Any) -> Any:
    if name in NZ_WEIGHTS:
        outputs = [p.name for p in aclnn_py.signature(name).parameters if p.role == "output"]
        call_formatted(name, "ND", {outputs[0]: given}, nz=NZ_WEIGHTS[name], **arguments)
        return given
    if name not in FORMATS:
        return aclnn_py.call(name, **arguments, **({"out": given} if given is not None else {}))
    outputs = [p.name for p in aclnn_py.signature(name).parameters if p.role == "output"
               or p.role == "inout" and p.name not in arguments]
    written = dict(zip(outputs, given if isinstance(given, tuple) else (given,)))
    call_formatted(name, FORMATS[name], written, **arguments)
    return tuple(written.values()) if len(written) > 1 else written[outputs[0]]


def _flat(values: Any) -> list[Any]:
    """The arrays of ``values``, a tensor list's (a list) in its place."""
    flat: list[Any] = []
    for value in values:
        flat.extend(value if isinstance(value, list) else [value])
    return flat


@pytest.mark.parametrize(("name", "make", "dtype"), _parameters())
def test_kernel_matches_pytorch(name: str, make: Case, dtype: np.dtype) -> None:
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    arguments, out, expected = make(rng, dtype)
    given = out if not isinstance(out, list) else out[0]
    result = _call(name, arguments, given)
    results = _flat(result if isinstance(result, (tuple, list)) else (result,))
    wanted = _flat(expected if isinstance(expected, (tuple, list)) else (expected,))
    assert len(results) >= len(wanted), (results, wanted)
    for actual, reference in zip(results, wanted):
        if actual is None or reference is None:  # None: a result with no reference to check
            continue
        reference = np.asarray(reference)
        actual = np.asarray(actual)
        assert actual.shape == reference.shape, (actual.shape, reference.shape)
        if reference.dtype.kind in "biu" or actual.dtype.kind in "biu":
            np.testing.assert_array_equal(actual, reference.astype(actual.dtype))
        elif actual.dtype.kind == "c":  # each part as a real number
            expected = reference.astype(actual.dtype)
            assert_close(actual.real.copy(), expected.real.copy())
            assert_close(actual.imag.copy(), expected.imag.copy())
        else:
            assert_close(actual, reference.astype(actual.dtype))


def test_every_kernel_has_a_case() -> None:
    builtins = {name for name, kernel in kernels.table().items() if kernel.builtin}
    # random draws are tested statistically (tests/ops/test_random_fills.py)
    assert builtins - set(CASES) - ONLY_ON_OTHER_SOCS - RANDOM == set()
    assert len(builtins) >= 150


def test_foreach_refuses_an_out_of_another_shape_and_a_mismatched_scalar() -> None:
    """CANN's foreach op_api checks (aclnn_foreach_pow_scalar_v2.cpp CheckShape and
    CheckDtypePowScalar): out has x's shape; a float16 list takes a float16 or double scalar."""
    x = [np.ones((2, 2), np.float32)]
    with pytest.raises(aclnn_py.AclError, match="shape"):
        aclnn_py.call("aclnnForeachAbs", x=x, out=[np.empty((4,), np.float32)])
    half = [np.ones((2, 2), np.float16)]
    with pytest.raises(aclnn_py.AclError, match="scalar has dtype int32"):
        aclnn_py.call("aclnnForeachAddScalarV2", x=half, scalar=np.int32(1),
                      out=[np.empty((2, 2), np.float16)])
