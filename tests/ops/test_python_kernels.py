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


# Lgamma takes no bfloat16 (ops-math math/lgamma/docs/aclnnLgamma.md: FLOAT, FLOAT16, DOUBLE)
for _short in POINTWISE_TORCH:
    case(f"aclnn{_short}", "2-d",
         ALL_FLOATS if _short != "Lgamma" else ("float32", "float16"))(_pointwise_case(_short))


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
# CheckFormat (the same). Their cases run through helpers.call_formatted.
FORMATS = {"aclnnConvolution": "NCHW", "aclnnAvgPool2d": "NCHW", "aclnnAdaptiveAvgPool2d": "NCHW"}


def _call(name: str, arguments: dict[str, Any], given: Any) -> Any:
    if name not in FORMATS:
        return aclnn_py.call(name, **arguments, **({"out": given} if given is not None else {}))
    outputs = [p.name for p in aclnn_py.signature(name).parameters if p.role == "output"]
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
