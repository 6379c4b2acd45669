"""PyTorch references for recorded operator launches (``ACLNN_EMU_TRACE`` files).

Each reference takes one launch, ``Launch``: its tensors before the kernel ran and its other
arguments, by CANN's parameter names, and returns what PyTorch computes for the tensors the
operator writes, by name. Inputs are computed in float64 (integers in int64); ``compare``
then judges the emulator's results in their own dtype with a tolerance for that dtype.
Operators without a reference here are not judged. Formulas follow each operator's doc in
hicann's repositories where it gives one (the doc wins over PyTorch); where it gives none,
PyTorch's function of the same name is the reference.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

try:
    import torch
except ImportError:  # the tool then reports that it cannot compare
    torch = None  # type: ignore[assignment]

REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}  # CANN's int64 reduction (the loss docs)


@dataclass
class Launch:
    """One recorded launch: ``tensors`` before the kernel (lists as lists), ``results`` as the
    kernel left the tensors it writes, ``arguments`` the rest, ``order`` every name."""

    operator: str
    tensors: dict[str, Any]
    results: dict[str, np.ndarray]
    dtypes: dict[str, str]
    arguments: dict[str, Any]
    order: list[str]
    written: list[str]

    def input(self, index: int = 0) -> Any:
        """The ``index``-th parameter, as a float64/int64 torch tensor (or list of them)."""
        return self.tensor(self.order[index])

    def tensor(self, name: str) -> Any:
        value = self.tensors.get(name)
        if isinstance(value, list):
            return [_torch(v) for v in value]
        return None if value is None else _torch(value)

    def arg(self, name: str) -> Any:
        return self.arguments[name]


def _torch(array: np.ndarray) -> Any:
    if array.dtype == np.bool_:
        return torch.from_numpy(array.copy())
    if array.dtype.kind in "iu":
        return torch.from_numpy(array.astype(np.int64))
    return torch.from_numpy(array.astype(np.float64))


def load(path: Path) -> Launch:
    """The launch recorded in ``path``."""
    with np.load(path) as stored:
        meta = json.loads(str(stored["meta"]))
        tensors: dict[str, Any] = {}
        results: dict[str, np.ndarray] = {}
        for key in stored.files:
            if key == "meta":
                continue
            prefix, name = key.split("/", 1)
            array = stored[key]
            target = tensors if prefix == "before" else results
            base, _, index = name.partition("[")
            if index and prefix == "before":
                tensors.setdefault(base, []).append(array)
            else:
                target[name] = array
    return Launch(meta["operator"], tensors, results, meta["dtypes"], meta["arguments"],
                  meta["order"], meta["written"])


Reference = Callable[[Launch], dict[str, Any]]
REFERENCES: dict[str, Reference] = {}

# The operators whose outputs are random draws: the emulator keeps CANN's seed and offset
# contract but not its bit stream, so no reference can judge their numbers; a sample's launches
# of them are not compared (tests/ops/test_random_fills.py tests them statistically instead).
from aclnn_py.emulator._kernels.random_fills import RANDOM  # noqa: E402


def _out(launch: Launch, value: Any) -> dict[str, Any]:
    """``value`` as the operator's one written tensor."""
    return {launch.written[0]: value}


def _unary(function: Callable[[Any], Any]) -> Reference:
    return lambda launch: _out(launch, function(launch.input()))


if torch is not None:
    functional = torch.nn.functional
    # unary operators whose PyTorch function has the lower-cased name
    for _name in ("Abs", "Acos", "Asin", "Atan", "Cosh", "Exp", "Expm1", "Floor", "Log", "Log10",
                  "Log2", "Neg", "Reciprocal", "Relu", "Round", "Rsqrt", "Sigmoid", "Sign",
                  "Sqrt", "Tan", "Tanh"):
        REFERENCES[f"aclnn{_name}"] = _unary(getattr(torch, _name.lower()))
    for _name in ("Exp", "Log", "Neg", "Relu", "Sigmoid", "Sqrt", "Tanh"):
        REFERENCES[f"aclnnInplace{_name}"] = REFERENCES[f"aclnn{_name}"]


    def _binary(function: Callable[[Any, Any], Any], scalar: bool = False) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            other = launch.arg(launch.order[1]) if scalar else launch.input(1)
            return _out(launch, function(launch.input(), other))
        return reference

    for _name, _pair in {"Mul": torch.mul, "Div": torch.div, "Maximum": torch.maximum,
                         "Minimum": torch.minimum, "PowTensorTensor": torch.pow,
                         "LogicalAnd": torch.logical_and, "LogicalOr": torch.logical_or,
                         "LogicalXor": torch.logical_xor}.items():
        REFERENCES[f"aclnn{_name}"] = _binary(_pair)
    REFERENCES["aclnnInplaceMul"] = _binary(torch.mul)
    REFERENCES["aclnnInplaceDiv"] = _binary(torch.div)
    REFERENCES["aclnnMuls"] = REFERENCES["aclnnInplaceMuls"] = _binary(torch.mul, scalar=True)
    for _name, _compare in {"Eq": torch.eq, "Ne": torch.ne, "Gt": torch.gt, "Ge": torch.ge,
                            "Lt": torch.lt, "Le": torch.le}.items():
        REFERENCES[f"aclnn{_name}Tensor"] = _binary(_compare)
        REFERENCES[f"aclnn{_name}Scalar"] = _binary(_compare, scalar=True)

    def _sub(launch: Launch) -> dict[str, Any]:  # self - alpha * other (aclnnSub's doc)
        return _out(launch, launch.input() - launch.arg("alpha") * launch.input(1))

    REFERENCES["aclnnSub"] = REFERENCES["aclnnInplaceSub"] = _sub
    REFERENCES["aclnnAddcdiv"] = lambda launch: _out(launch, launch.input() + launch.arg(
        "value") * launch.tensor("tensor1") / launch.tensor("tensor2"))
    REFERENCES["aclnnAddcmul"] = lambda launch: _out(launch, launch.input() + launch.arg(
        "value") * launch.tensor("tensor1") * launch.tensor("tensor2"))
    REFERENCES["aclnnLerp"] = lambda launch: _out(launch, torch.lerp(
        launch.input(), launch.tensor("end"), launch.tensor("weight")))
    REFERENCES["aclnnSWhere"] = lambda launch: _out(launch, torch.where(
        launch.tensor("condition"), launch.tensor("self"), launch.tensor("other")))
    REFERENCES["aclnnClamp"] = REFERENCES["aclnnHardtanh"] = lambda launch: _out(
        launch, torch.clamp(launch.input(), launch.arg(launch.order[1]),
                            launch.arg(launch.order[2])))
    REFERENCES["aclnnClampMin"] = lambda launch: _out(
        launch, torch.clamp(launch.input(), min=launch.arg("clipValueMin")))
    REFERENCES["aclnnClampMax"] = lambda launch: _out(
        launch, torch.clamp(launch.input(), max=launch.arg("clipValueMax")))
    REFERENCES["aclnnInplaceZero"] = lambda launch: _out(launch, torch.zeros_like(launch.input()))
    REFERENCES["aclnnInplaceOne"] = lambda launch: _out(launch, torch.ones_like(launch.input()))
    REFERENCES["aclnnInplaceFillScalar"] = lambda launch: _out(
        launch, torch.full_like(launch.input(), launch.arg("value")))
    REFERENCES["aclnnInplaceCopy"] = lambda launch: _out(
        launch, launch.tensor("src").expand(launch.input().shape))
    REFERENCES["aclnnInplaceMaskedFillScalar"] = lambda launch: _out(
        launch, launch.input().masked_fill(launch.tensor("mask"), launch.arg("value")))

    # activations and their backward operators (autograd of the forward formula)
    REFERENCES["aclnnGelu"] = _unary(lambda x: functional.gelu(x, approximate="tanh"))
    REFERENCES["aclnnGeluV2"] = lambda launch: _out(launch, functional.gelu(
        launch.input(), approximate="tanh" if launch.arg("approximate") == 1 else "none"))
    REFERENCES["aclnnElu"] = lambda launch: _out(launch, launch.arg("scale") * torch.where(
        launch.input() > 0, launch.input(),
        launch.arg("alpha") * torch.expm1(launch.arg("inputScale") * launch.input())))
    REFERENCES["aclnnMish"] = _unary(functional.mish)
    REFERENCES["aclnnHardsigmoid"] = _unary(functional.hardsigmoid)
    REFERENCES["aclnnLeakyRelu"] = lambda launch: _out(
        launch, functional.leaky_relu(launch.input(), launch.arg("negativeSlope")))
    REFERENCES["aclnnSoftplus"] = lambda launch: _out(launch, functional.softplus(
        launch.input(), launch.arg("beta"), launch.arg("threshold")))

    def _backward(forward: Callable[[Launch, Any], Any], at: str = "self") -> Reference:
        """The gradient of ``forward(launch, x)`` at the tensor ``at``, times the first input."""
        def reference(launch: Launch) -> dict[str, Any]:
            x = launch.tensor(at).clone().requires_grad_(True)
            (grad,) = torch.autograd.grad(forward(launch, x), x, launch.input())
            return _out(launch, grad)
        return reference

    REFERENCES["aclnnMishBackward"] = _backward(lambda _, x: functional.mish(x))
    REFERENCES["aclnnSiluBackward"] = _backward(lambda _, x: functional.silu(x))
    REFERENCES["aclnnHardsigmoidBackward"] = _backward(lambda _, x: functional.hardsigmoid(x))
    # ops-nn activation/hard_swish_grad/docs/aclnnHardswishBackward.md: x / 3 + 0.5 on
    # [-3, 3], bounds included (PyTorch's gradient at 3 is 1)
    REFERENCES["aclnnHardswishBackward"] = lambda launch: _out(launch, launch.input() * torch.where(
        launch.tensor("self") < -3, 0.0, torch.where(launch.tensor("self") > 3, 1.0,
                                                     launch.tensor("self") / 3 + 0.5)))
    REFERENCES["aclnnSoftplusBackward"] = _backward(lambda launch, x: functional.softplus(
        x, launch.arg("beta"), launch.arg("threshold")))
    REFERENCES["aclnnSigmoidBackward"] = lambda launch: _out(launch, launch.input() * launch.tensor(
        "output") * (1 - launch.tensor("output")))
    REFERENCES["aclnnTanhBackward"] = lambda launch: _out(launch, launch.input() * (
        1 - launch.tensor("output") ** 2))
    REFERENCES["aclnnSoftmax"] = lambda launch: _out(
        launch, torch.softmax(launch.input(), launch.arg("dim")))
    REFERENCES["aclnnLogSoftmax"] = lambda launch: _out(
        launch, torch.log_softmax(launch.input(), launch.arg("dim")))

    def _softmax_backward(launch: Launch) -> dict[str, Any]:
        grad, output, dim = launch.input(), launch.tensor("output"), launch.arg("dim")
        return _out(launch, output * (grad - (grad * output).sum(dim, keepdim=True)))

    def _log_softmax_backward(launch: Launch) -> dict[str, Any]:
        grad, output, dim = launch.input(), launch.tensor("output"), launch.arg("dim")
        return _out(launch, grad - torch.exp(output) * grad.sum(dim, keepdim=True))

    REFERENCES["aclnnSoftmaxBackward"] = _softmax_backward
    REFERENCES["aclnnLogSoftmaxBackward"] = _log_softmax_backward

    # reductions
    REFERENCES["aclnnAmax"] = lambda launch: _out(launch, torch.amax(
        launch.input(), launch.arg("dim"), launch.arg("keepDim")))
    REFERENCES["aclnnAmin"] = lambda launch: _out(launch, torch.amin(
        launch.input(), launch.arg("dim"), launch.arg("keepDim")))
    REFERENCES["aclnnMean"] = lambda launch: _out(launch, torch.mean(
        launch.input(), launch.arg("dim"), launch.arg("keepDim")))
    REFERENCES["aclnnReduceSum"] = lambda launch: _out(launch, torch.sum(
        launch.input(), launch.arg("dims"), launch.arg("keepDims")))
    REFERENCES["aclnnMax"] = _unary(torch.max)
    REFERENCES["aclnnMin"] = _unary(torch.min)
    REFERENCES["aclnnProd"] = _unary(torch.prod)
    REFERENCES["aclnnCumsum"] = lambda launch: _out(
        launch, torch.cumsum(launch.input(), launch.arg("dim")))
    REFERENCES["aclnnStd"] = lambda launch: _out(launch, torch.std(
        launch.input(), launch.arg("dim"), correction=launch.arg("correction"),
        keepdim=launch.arg("keepdim")))
    REFERENCES["aclnnVar"] = lambda launch: _out(launch, torch.var(
        launch.input(), launch.arg("dim"), unbiased=launch.arg("unbiased"),
        keepdim=launch.arg("keepdim")))
    REFERENCES["aclnnArgMax"] = lambda launch: _out(launch, torch.argmax(
        launch.input(), launch.arg("dim"), launch.arg("keepdim")))
    REFERENCES["aclnnArgMin"] = lambda launch: _out(launch, torch.argmin(
        launch.input(), launch.arg("dim"), launch.arg("keepdim")))
    REFERENCES["aclnnDot"] = lambda launch: _out(launch, torch.dot(launch.input(),
                                                                   launch.input(1)))

    # shapes, indexing, matrices
    REFERENCES["aclnnPermute"] = lambda launch: _out(
        launch, launch.input().permute(launch.arg("dims")))
    REFERENCES["aclnnFlip"] = lambda launch: _out(
        launch, torch.flip(launch.input(), launch.arg("dims")))
    REFERENCES["aclnnRoll"] = lambda launch: _out(launch, torch.roll(
        launch.input(), launch.arg("shifts"), launch.arg("dims")))
    REFERENCES["aclnnRepeat"] = lambda launch: _out(
        launch, launch.input().repeat(launch.arg("repeats")))
    REFERENCES["aclnnExpand"] = lambda launch: _out(
        launch, launch.input().expand(launch.arg("size")))
    REFERENCES["aclnnCat"] = lambda launch: _out(
        launch, torch.cat(launch.input(), launch.arg("dim")))
    REFERENCES["aclnnStack"] = lambda launch: _out(
        launch, torch.stack(launch.input(), launch.arg("dim")))
    REFERENCES["aclnnGather"] = lambda launch: _out(launch, torch.gather(
        launch.input(), launch.arg("dim"), launch.tensor("index")))
    REFERENCES["aclnnIndexSelect"] = lambda launch: _out(launch, torch.index_select(
        launch.input(), launch.arg("dim"), launch.tensor("index")))
    REFERENCES["aclnnTake"] = lambda launch: _out(launch, torch.take(
        launch.input(), launch.tensor("index")))
    REFERENCES["aclnnEmbedding"] = lambda launch: _out(launch, functional.embedding(
        launch.tensor("indices"), launch.tensor("weight")))
    REFERENCES["aclnnConstantPadNd"] = lambda launch: _out(launch, functional.pad(
        launch.input(), launch.arg("pad"), value=launch.arg("value")))
    for _name in ("Matmul", "Mm", "BatchMatMul"):
        REFERENCES[f"aclnn{_name}"] = lambda launch: _out(
            launch, torch.matmul(launch.input(), launch.tensor("mat2")))
    REFERENCES["aclnnMv"] = lambda launch: _out(launch, torch.mv(launch.input(),
                                                                 launch.tensor("vec")))

    def _gemm(launch: Launch) -> dict[str, Any]:  # aclnnGemm.md's formula
        a, b = launch.tensor("A"), launch.tensor("B")
        a = a.T if launch.arg("transA") else a
        b = b.T if launch.arg("transB") else b
        return _out(launch, launch.arg("alpha") * (a @ b)
                    + launch.arg("beta") * launch.tensor("C"))

    REFERENCES["aclnnGemm"] = _gemm

    def _addbmm(launch: Launch) -> dict[str, Any]:
        result = launch.arg("alpha") * (launch.tensor("batch1") @ launch.tensor("batch2")).sum(0)
        beta = launch.arg("beta")
        if beta != 0:
            result = beta * launch.input() + result
        return _out(launch, result)

    REFERENCES["aclnnAddbmm"] = _addbmm
    REFERENCES["aclnnInplaceAddbmm"] = _addbmm

    # quant (ops-nn quant/ascend_quant_v2 and quant/ascend_anti_quant_v2 docs' formulas)
    _ROUNDINGS = {"round": torch.round, "floor": torch.floor, "ceil": torch.ceil,
                  "trunc": torch.trunc}

    def _scaled(launch: Launch) -> Any:
        scale = launch.tensor("scale")
        return scale * scale if launch.arg("sqrtMode") else scale

    def _ascend_quant(launch: Launch) -> dict[str, Any]:
        value = launch.input() * _scaled(launch)
        if launch.tensor("offset") is not None:
            value = value + launch.tensor("offset")
        rounded = _ROUNDINGS[launch.arg("roundMode")](value)
        return _out(launch, torch.clamp(rounded, -128, 127))

    def _ascend_anti_quant(launch: Launch) -> dict[str, Any]:
        value = launch.input()
        if launch.tensor("offset") is not None:
            value = value + launch.tensor("offset")
        return _out(launch, value * _scaled(launch))

    REFERENCES["aclnnAscendQuant"] = _ascend_quant

    # FRACTAL_NZ weights are recorded as their matrices (aclnn_py/emulator/_kernels/trace.py)
    REFERENCES["aclnnMatmulWeightNz"] = lambda launch: _out(
        launch, launch.input() @ launch.tensor("mat2"))
    REFERENCES["aclnnBatchMatMulWeightNz"] = REFERENCES["aclnnMatmulWeightNz"]

    def _packed_scale(scale: Any) -> Any:
        """A scale as float32: a uint64/int64 one (aclnnTransQuantParamV2) is the float32 of
        its low 32 bits."""
        if scale.dtype != torch.int64:
            return scale
        low = (scale.numpy().astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)
        return torch.from_numpy(low.view(np.float32).astype(np.float64))

    def _quant_matmul(launch: Launch, scale: str, offset: str, pertoken: str | None
                      ) -> dict[str, Any]:
        """ops-nn matmul/quant_batch_matmul_v3/docs/aclnnQuantMatmulV4.md's formulas."""
        x1, x2 = launch.tensor("x1"), launch.tensor("x2")
        x1 = x1.transpose(-1, -2) if launch.arg("transposeX1") else x1
        x2 = x2.transpose(-1, -2) if launch.arg("transposeX2") else x2
        value = x1 @ x2
        bias = launch.tensor("bias")
        integer = bias is not None and launch.dtypes.get("before/bias") == "int32"
        if integer:
            value = value + bias
        out_dtype = launch.dtypes.get(f"after/{launch.written[0]}")
        if out_dtype == "int32":
            return _out(launch, value)
        value = value.double() * _packed_scale(launch.tensor(scale)).reshape(-1)
        token = launch.tensor(pertoken) if pertoken else None
        if token is not None:
            value = value * token.reshape(-1, 1)
        if bias is not None and not integer:
            value = value + bias
        if out_dtype == "int8":
            if launch.tensor(offset) is not None:
                value = value + launch.tensor(offset)
            value = torch.clamp(torch.round(value), -128, 127)
        return _out(launch, value)

    def _dynamic_quant(launch: Launch) -> dict[str, Any]:
        """ops-nn quant/dynamic_quant docs' formulas, in float32 as the kernel computes."""
        x = launch.tensor("x").float()
        rows = x.reshape(-1, x.shape[-1])
        smooth = launch.tensor("smoothScalesOptional")
        if smooth is not None:
            factors = smooth.float().reshape(-1, x.shape[-1])
            group = launch.tensors.get("groupIndexOptional")
            if group is not None and factors.shape[0] > 1:
                which = np.searchsorted(group.astype(np.int64), np.arange(rows.shape[0]),
                                        side="right")
                factors = factors[torch.from_numpy(np.minimum(which, factors.shape[0] - 1))]
            rows = rows * factors
        written = launch.written
        if "offsetOut" in written and launch.results.get("offsetOut") is not None:
            high, low = rows.amax(1), rows.amin(1)
            scale = torch.clamp((high - low) / 255, min=1e-12)
            offset = 127 - high / scale
            y = torch.round(rows * (1 / scale)[:, None] + offset[:, None])
            return {"yOut": torch.clamp(y, -128, 127).reshape(x.shape), "scaleOut": scale,
                    "offsetOut": offset}
        step = 127 / rows.abs().amax(1)
        y = torch.nan_to_num(torch.round(rows * step[:, None]), nan=0.0)
        return {"yOut": torch.clamp(y, -128, 127).reshape(x.shape), "scaleOut": 1 / step}

    REFERENCES["aclnnDynamicQuant"] = _dynamic_quant
    REFERENCES["aclnnDynamicQuantV2"] = _dynamic_quant

    def _fake_quant(launch: Launch, axis: int | None) -> dict[str, Any]:
        """aclnnFakeQuantPerTensorAffineCachemask.md's formula (torch's fake_quantize, the mask
        from the rounded value)."""
        x = launch.tensor("self").float()
        scale, zero = launch.tensor("scale").float(), launch.tensor("zeroPoint")
        low, high = launch.arg("quantMin"), launch.arg("quantMax")
        if axis is None:
            if launch.arg("fakeQuantEnabled") < 1:
                return {"out": x, "mask": torch.ones(x.shape, dtype=torch.bool)}
            out = torch.fake_quantize_per_tensor_affine(x, float(scale.reshape(())),
                                                        int(zero.reshape(())), low, high)
            q = torch.round(x * (1 / scale.reshape(()))) + zero.reshape(())
        else:
            out = torch.fake_quantize_per_channel_affine(x, scale, zero.int(), axis, low, high)
            shape = [1] * x.dim()
            shape[axis] = -1
            q = torch.round(x * (1 / scale).reshape(shape)) + zero.reshape(shape)
        return {"out": out, "mask": (q >= low) & (q <= high)}

    REFERENCES["aclnnFakeQuantPerTensorAffineCachemask"] = lambda launch: _fake_quant(launch,
                                                                                      None)
    REFERENCES["aclnnFakeQuantPerChannelAffineCachemask"] = lambda launch: _fake_quant(
        launch, launch.arg("axis"))

    REFERENCES["aclnnQuantMatmulV3"] = lambda launch: _quant_matmul(launch, "scale", "offset",
                                                                     None)
    def _quant_matmul_v2(launch: Launch) -> dict[str, Any]:
        """ops-nn matmul/quant_matmul/docs/aclnnQuantMatmulV2.md: (x1 @ x2 + bias) deqScale,
        deqScale's first n values per column."""
        x1, x2 = launch.tensor("x1"), launch.tensor("x2")
        x1 = x1.transpose(-1, -2) if launch.arg("adjX1") else x1
        x2 = x2.transpose(-1, -2) if launch.arg("adjX2") else x2
        value = x1 @ x2
        bias = launch.tensor("bias")
        if bias is not None:
            value = value + bias
        scale = _packed_scale(launch.tensor("deqScale")).reshape(-1)[:value.shape[-1]]
        return _out(launch, value.double() * scale)

    REFERENCES["aclnnQuantMatmulV2"] = _quant_matmul_v2
    REFERENCES["aclnnQuantMatmulV4"] = lambda launch: _quant_matmul(
        launch, "scale", "offset", "pertokenScaleOptional")
    REFERENCES["aclnnQuantMatmulWeightNz"] = lambda launch: _quant_matmul(
        launch, "x2Scale", "x2Offset", "x1Scale")

    def _ascend_quant_v3(launch: Launch) -> dict[str, Any]:
        x, axis = launch.input(), launch.arg("axis")
        value = x.clone()
        shape = [1] * x.dim()
        scale, offset = launch.tensor("scale"), launch.tensor("offset")
        if scale.dim() == 1 and x.dim() > 1:
            shape[axis] = scale.numel()
            scale = scale.reshape(shape)
            offset = None if offset is None else offset.reshape(shape)
        value = x * (scale * scale if launch.arg("sqrtMode") else scale)
        if offset is not None:
            value = value + offset
        rounded = _ROUNDINGS[launch.arg("roundMode")](value)
        return _out(launch, torch.clamp(rounded, -128, 127))

    REFERENCES["aclnnAscendQuantV3"] = _ascend_quant_v3
    REFERENCES["aclnnAscendAntiQuant"] = _ascend_anti_quant

    # losses
    def _bce(launch: Launch) -> dict[str, Any]:
        return _out(launch, functional.binary_cross_entropy(
            launch.input(), launch.tensor("target"), launch.tensor("weight"),
            reduction=REDUCTIONS[launch.arg("reduction")]))

    def _bce_logits(launch: Launch) -> dict[str, Any]:
        return _out(launch, functional.binary_cross_entropy_with_logits(
            launch.input(), launch.tensor("target"), launch.tensor("weightOptional"),
            reduction=REDUCTIONS[launch.arg("reduction")],
            pos_weight=launch.tensor("posWeightOptional")))

    REFERENCES["aclnnBinaryCrossEntropy"] = _bce
    REFERENCES["aclnnBinaryCrossEntropyWithLogits"] = _bce_logits
    REFERENCES["aclnnBinaryCrossEntropyBackward"] = _backward(
        lambda launch, x: functional.binary_cross_entropy(
            x, launch.tensor("target"), launch.tensor("weightOptional"),
            reduction=REDUCTIONS[launch.arg("reduction")]))

    def _nll(launch: Launch) -> dict[str, Any]:
        x, target, weight = launch.input(), launch.tensor("target"), launch.tensor("weight")
        reduction, ignore = REDUCTIONS[launch.arg("reduction")], launch.arg("ignoreIndex")
        picked = target != ignore
        total = (weight[target.clamp(0)] * picked).sum() if weight is not None \
            else picked.sum().double()
        return {"out": functional.nll_loss(x, target, weight, ignore_index=ignore,
                                           reduction=reduction), "totalWeightOut": total}

    REFERENCES["aclnnNLLLoss"] = _nll

    # more activations' backward operators, by their docs' formulas
    REFERENCES["aclnnThresholdBackward"] = lambda launch: _out(launch, torch.where(
        launch.tensor("self") > launch.arg("threshold"), launch.input(), 0.0))
    REFERENCES["aclnnLeakyReluBackward"] = lambda launch: _out(launch, torch.where(
        launch.tensor("self") > 0, launch.input(), launch.input() * launch.arg("negativeSlope")))
    REFERENCES["aclnnGlu"] = lambda launch: _out(
        launch, functional.glu(launch.input(), launch.arg("dim")))
    REFERENCES["aclnnGluBackward"] = _backward(
        lambda launch, x: functional.glu(x, launch.arg("dim")))
    REFERENCES["aclnnCast"] = lambda launch: _out(launch, launch.tensors["self"].astype(
        launch.results[launch.written[0]].dtype))

    # creation, scatter and split
    REFERENCES["aclnnEye"] = lambda launch: _out(launch, torch.eye(
        launch.arg("n"), launch.arg("m"), dtype=torch.float64))
    REFERENCES["aclnnLinspace"] = lambda launch: _out(launch, torch.linspace(
        launch.arg("start"), launch.arg("end"), launch.arg("steps"), dtype=torch.float64))
    REFERENCES["aclnnArange"] = lambda launch: _out(launch, torch.arange(
        launch.arg("start"), launch.arg("end"), launch.arg("step"), dtype=torch.float64))
    REFERENCES["aclnnScatterAdd"] = lambda launch: _out(launch, torch.scatter_add(
        launch.input(), launch.arg("dim"), launch.tensor("index"), launch.tensor("src")))

    def _split(sizes: Callable[[Launch], Any]) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            parts = torch.split(launch.input(), sizes(launch), launch.arg("dim"))
            return {f"out[{index}]": part for index, part in enumerate(parts)}
        return reference

    REFERENCES["aclnnSplitTensor"] = _split(lambda launch: launch.arg("splitSections"))
    REFERENCES["aclnnSplitWithSize"] = _split(lambda launch: launch.arg("splitSize"))

    # norms, normalisation, convolution and pooling (the tensors written first)
    REFERENCES["aclnnNorm"] = lambda launch: _out(launch, torch.linalg.vector_norm(
        launch.input(), launch.arg("pScalar"), launch.arg("dim"), launch.arg("keepdim")))
    REFERENCES["aclnnLinalgVectorNorm"] = lambda launch: _out(launch, torch.linalg.vector_norm(
        launch.input(), launch.arg("ord"), launch.arg("dims"), launch.arg("keepDims")))
    REFERENCES["aclnnLayerNorm"] = lambda launch: _out(launch, functional.layer_norm(
        launch.input(), launch.arg("normalizedShape"), launch.tensor("weightOptional"),
        launch.tensor("biasOptional"), launch.arg("eps")))
    REFERENCES["aclnnLayerNormWithImplMode"] = REFERENCES["aclnnLayerNorm"]
    REFERENCES["aclnnFastLayerNorm"] = REFERENCES["aclnnLayerNorm"]
    def _rms_norm(offset: float) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            x, gamma = launch.input(), launch.tensor("gamma")
            dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
            rstd = torch.rsqrt(x.square().mean(dims, keepdim=True) + launch.arg("epsilon"))
            return {"yOut": x * rstd * (gamma + offset), "rstdOut": rstd}
        return reference

    REFERENCES["aclnnRmsNorm"] = _rms_norm(0.0)
    REFERENCES["aclnnGemmaRmsNorm"] = _rms_norm(1.0)

    def _add_rms_norm(launch: Launch) -> dict[str, Any]:
        x, gamma = launch.input() + launch.tensor("x2"), launch.tensor("gamma")
        dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
        rstd = torch.rsqrt(x.square().mean(dims, keepdim=True) + launch.arg("epsilon"))
        return {"yOut": x * rstd * gamma, "rstdOut": rstd, "xOut": x}

    REFERENCES["aclnnAddRmsNorm"] = _add_rms_norm

    def _rms_norm_quant(launch: Launch) -> dict[str, Any]:
        """ops-nn norm/rms_norm_quant/docs/aclnnRmsNormQuant.md: round((x / rms(x) gamma +
        beta) / scale + offset), saturated into int8 (scale[0] and offset[0], as its kernel)."""
        x = launch.input().double()
        gamma, beta = launch.tensor("gamma").double(), launch.tensor("beta").double()
        rms = torch.sqrt(x.square().mean(-1, keepdim=True) + launch.arg("epsilon"))
        normed = x / rms * gamma.reshape(-1) + beta.reshape(-1)
        value = normed / launch.tensor("scale").double().reshape(-1)[0] \
            + launch.tensor("offset").double().reshape(-1)[0]
        value = torch.nan_to_num(value, nan=0.0)
        return {"y": torch.round(value.clamp(-128, 127)).to(torch.int8)}

    REFERENCES["aclnnRmsNormQuant"] = _rms_norm_quant

    def _add_rms_norm_quant(launch: Launch) -> dict[str, Any]:
        """ops-nn norm/add_rms_norm_quant/docs/aclnnAddRmsNormQuant.md's formulas."""
        x = launch.input().double() + launch.tensor("x2").double()
        rms = torch.sqrt(x.square().mean(-1, keepdim=True) + launch.arg("epsilon"))
        y = x / rms * launch.tensor("gamma").double().reshape(-1)

        def quant(scales: str, zero: str) -> Any:
            factor = launch.tensor(scales).double().reshape(-1)
            value = y / factor if launch.arg("divMode") else y * factor
            points = launch.tensor(zero)
            if points is not None:
                value = value + points.double().reshape(-1)
            value = torch.nan_to_num(value, nan=0.0)
            return torch.round(value.clamp(-128, 127)).to(torch.int8)

        found = {"y1Out": quant("scales1", "zeroPoints1Optional"), "xOut": x}
        if launch.tensor("scales2Optional") is not None:
            found["y2Out"] = quant("scales2Optional", "zeroPoints2Optional")
        return found

    REFERENCES["aclnnAddRmsNormQuant"] = _add_rms_norm_quant

    def _add_rms_norm_cast(launch: Launch) -> dict[str, Any]:
        found = _add_rms_norm(launch)
        return {"y1Out": found["yOut"], "y2Out": found["yOut"], "rstdOut": found["rstdOut"],
                "xOut": found["xOut"]}

    REFERENCES["aclnnAddRmsNormCast"] = _add_rms_norm_cast

    def _inplace_add_rms_norm(launch: Launch) -> dict[str, Any]:
        x, gamma = launch.input() + launch.tensor("x2Ref"), launch.tensor("gamma")
        dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
        rstd = torch.rsqrt(x.square().mean(dims, keepdim=True) + launch.arg("epsilon"))
        return {"x1Ref": x * rstd * gamma, "rstdOut": rstd, "x2Ref": x}

    REFERENCES["aclnnInplaceAddRmsNorm"] = _inplace_add_rms_norm

    def _add_layer_norm(launch: Launch) -> dict[str, Any]:
        x = launch.input() + launch.tensor("x2")
        bias = launch.tensor("biasOptional")
        if bias is not None:
            x = x + bias
        gamma = launch.tensor("gamma")
        dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
        y = functional.layer_norm(x, gamma.shape, gamma, launch.tensor("beta"),
                                  launch.arg("epsilon"))
        variance, mean = torch.var_mean(x, dims, correction=0, keepdim=True)
        found = {"yOut": y, "meanOut": mean,
                 "rstdOut": torch.rsqrt(variance + launch.arg("epsilon"))}
        if launch.arg("additionalOutput"):
            found["xOut"] = x
        return found

    def _rms_norm_grad(launch: Launch) -> dict[str, Any]:
        """The gradient of x rstd gamma, rstd given (the doc's backward formula)."""
        x, gamma = launch.tensor("x"), launch.tensor("gamma")
        dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
        rstd = launch.tensor("rstd").reshape(x.shape[:x.dim() - gamma.dim()] + (1,) * gamma.dim())
        mean = (launch.tensor("dy") * gamma * x * rstd).mean(dims, keepdim=True)
        dx = (launch.tensor("dy") * gamma - rstd * x * mean) * rstd
        dgamma = (rstd * x * launch.tensor("dy")).sum(tuple(range(x.dim() - gamma.dim())))
        return {"dxOut": dx, "dgammaOut": dgamma}

    REFERENCES["aclnnAddLayerNorm"] = _add_layer_norm

    def _add_layer_norm_grad(launch: Launch) -> dict[str, Any]:
        x = launch.tensor("x1") + launch.tensor("x2")
        gamma = launch.tensor("gamma")
        count = gamma.dim()
        shape = x.shape[:x.dim() - count] + (1,) * count
        dx, dgamma, dbeta = torch.ops.aten.native_layer_norm_backward(
            launch.tensor("dy"), x, list(gamma.shape), launch.tensor("mean").reshape(shape),
            launch.tensor("rstd").reshape(shape), gamma, torch.zeros_like(gamma),
            [True, True, True])
        dsum = launch.tensor("dsumOptional")
        return {"dxOut": dx if dsum is None else dx + dsum, "dgammaOut": dgamma,
                "dbetaOut": dbeta}

    REFERENCES["aclnnAddLayerNormGrad"] = _add_layer_norm_grad

    def _deep_norm(launch: Launch) -> dict[str, Any]:
        x = launch.arg("alpha") * launch.tensor("x") + launch.tensor("gx")
        gamma = launch.tensor("gamma")
        dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
        variance, mean = torch.var_mean(x, dims, correction=0, keepdim=True)
        return {"yOut": functional.layer_norm(x, gamma.shape, gamma, launch.tensor("beta"),
                                              launch.arg("epsilon")),
                "meanOut": mean, "rstdOut": torch.rsqrt(variance + launch.arg("epsilon"))}

    def _deep_norm_grad(launch: Launch) -> dict[str, Any]:
        alpha = launch.arg("alpha")
        x = alpha * launch.tensor("x") + launch.tensor("gx")
        gamma = launch.tensor("gamma")
        count = gamma.dim()
        shape = x.shape[:x.dim() - count] + (1,) * count
        dgx, dgamma, dbeta = torch.ops.aten.native_layer_norm_backward(
            launch.tensor("dy"), x, list(gamma.shape), launch.tensor("mean").reshape(shape),
            launch.tensor("rstd").reshape(shape), gamma, torch.zeros_like(gamma),
            [True, True, True])
        return {"dxOut": alpha * dgx, "dgxOut": dgx, "dbetaOut": dbeta, "dgammaOut": dgamma}

    def _group_stats(x: Any, group: int, eps: float) -> tuple[Any, Any]:
        grouped = x.reshape(x.shape[0], group, -1)
        variance, mean = torch.var_mean(grouped, -1, correction=0)
        return mean, torch.rsqrt(variance + eps)

    def _group_norm_act(names: tuple[str, str, str], group: str, act: Callable[[Launch], Any]
                        ) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            x, eps = launch.input(), launch.arg("eps")
            y = functional.group_norm(x, launch.arg(group), launch.tensor("gamma"),
                                      launch.tensor("beta"), eps)
            scale = act(launch)
            if scale is not None:
                y = y * torch.sigmoid(scale * y)
            mean, rstd = _group_stats(x, launch.arg(group), eps)
            return dict(zip(names, (y, mean, rstd)))
        return reference

    def _group_norm_swish_grad(launch: Launch) -> dict[str, Any]:
        x = launch.tensor("x")
        gamma = launch.tensor("gamma").clone().requires_grad_()
        beta = launch.tensor("beta").clone().requires_grad_()
        group, scale = launch.arg("numGroups"), launch.arg("swishScale")
        mean = launch.tensor("mean").reshape(x.shape[0], group, 1)
        rstd = launch.tensor("rstd").reshape(x.shape[0], group, 1)
        normalised = ((x.reshape(x.shape[0], group, -1) - mean) * rstd).reshape(x.shape)
        view = (1, -1) + (1,) * (x.dim() - 2)
        z = normalised * gamma.reshape(view) + beta.reshape(view)
        (z * torch.sigmoid(scale * z)).backward(launch.tensor("dy"))
        found = {"dgammaOut": gamma.grad, "dbetaOut": beta.grad}
        # the input gradient: PyTorch's GroupNorm backward of the swish's gradient
        s = torch.sigmoid(scale * z.detach())
        grad = launch.tensor("dy") * s * (1 + scale * z.detach() * (1 - s))
        dx = torch.ops.aten.native_group_norm_backward(
            grad, x, launch.tensor("mean").reshape(x.shape[0], group),
            launch.tensor("rstd").reshape(x.shape[0], group), gamma.detach(), x.shape[0],
            x.shape[1], x[0, 0].numel(), group, [True, False, False])[0]
        found["dxOut"] = dx
        return found

    REFERENCES["aclnnGroupNormSilu"] = _group_norm_act(
        ("out", "meanOut", "rstdOut"), "group", lambda launch: 1.0)
    REFERENCES["aclnnGroupNormSiluV2"] = _group_norm_act(
        ("out", "meanOut", "rstdOut"), "group",
        lambda launch: 1.0 if launch.arg("activateSilu") else None)
    REFERENCES["aclnnGroupNormSwish"] = _group_norm_act(
        ("yOut", "meanOut", "rstdOut"), "numGroups",
        lambda launch: launch.arg("swishScale") if launch.arg("activateSwish") else None)
    REFERENCES["aclnnGroupNormSwishGrad"] = _group_norm_swish_grad
    REFERENCES["aclnnRenorm"] = lambda launch: _out(launch, torch.renorm(
        launch.input(), float(launch.arg("p")), launch.arg("dim"), float(launch.arg("maxNorm"))))
    REFERENCES["aclnnInplaceRenorm"] = REFERENCES["aclnnRenorm"]

    def _embedding_renorm(launch: Launch) -> dict[str, Any]:
        weight = launch.tensor("selfRef").clone()
        with torch.no_grad():
            torch.embedding_renorm_(weight, launch.tensor("indices").reshape(-1),
                                    launch.arg("maxNorm"), launch.arg("normType"))
        return {"selfRef": weight}

    REFERENCES["aclnnEmbeddingRenorm"] = _embedding_renorm
    def _ada_layer_norm(launch: Launch) -> dict[str, Any]:
        x = launch.input()
        view = x.shape[:-2] + (1, x.shape[-1])
        y = functional.layer_norm(x, (x.shape[-1],), launch.tensor("weightOptional"),
                                  launch.tensor("biasOptional"), launch.arg("epsilon"))
        y = y * (1 + launch.tensor("scale").reshape(view)) + launch.tensor("shift").reshape(view)
        variance, mean = torch.var_mean(x, -1, correction=0, keepdim=True)
        return {"out": y, "meanOutOptional": mean,
                "rstdOutOptional": torch.rsqrt(variance + launch.arg("epsilon"))}

    def _ada_layer_norm_backward(launch: Launch) -> dict[str, Any]:
        """The doc's formulas (aclnnAdaLayerNormBackward.md), with its given mean and rstd."""
        x, g = launch.tensor("input"), launch.tensor("gradOut")
        h = x.shape[-1]
        view, statistics = x.shape[:-2] + (1, h), x.shape[:-1] + (1,)
        weight, bias = launch.tensor("weightOptional"), launch.tensor("biasOptional")
        weight = torch.ones(h, dtype=x.dtype) if weight is None else weight
        bias = torch.zeros(h, dtype=x.dtype) if bias is None else bias
        rstd = launch.tensor("rstd").reshape(statistics)
        z = (x - launch.tensor("mean").reshape(statistics)) * rstd
        modulated = g * (1 + launch.tensor("scale").reshape(view))
        dyg = modulated * weight
        dx = (dyg - dyg.mean(-1, keepdim=True) - z * (dyg * z).mean(-1, keepdim=True)) * rstd
        lead = tuple(range(x.dim() - 1))
        return {"gradInputOut": dx,
                "gradScaleOut": (g * (z * weight + bias)).sum(-2).reshape(
                    launch.tensor("scale").shape),
                "gradShiftOut": g.sum(-2).reshape(launch.tensor("shift").shape),
                "gradWeightOut": (modulated * z).sum(lead), "gradBiasOut": modulated.sum(lead)}

    REFERENCES["aclnnAdaLayerNormBackward"] = _ada_layer_norm_backward
    REFERENCES["aclnnAdaLayerNorm"] = _ada_layer_norm
    REFERENCES["aclnnAdaLayerNormV2"] = _ada_layer_norm
    def _bn_view(x: Any) -> tuple[Any, tuple[int, ...]]:
        """The axes other than the channels', and the shape broadcasting a (C,) vector."""
        return tuple(a for a in range(x.dim()) if a != 1), (1, -1) + (1,) * (x.dim() - 2)

    def _batch_norm_stats(launch: Launch) -> dict[str, Any]:
        """torch.batch_norm_stats's definition (CUDA only in PyTorch)."""
        x = launch.input()
        axes, _ = _bn_view(x)
        variance, mean = torch.var_mean(x, axes, correction=0)
        return {"mean": mean, "invstd": torch.rsqrt(variance + launch.arg("eps"))}

    def _batch_norm_elemt(launch: Launch) -> dict[str, Any]:
        """torch.batch_norm_elemt's definition (CUDA only in PyTorch)."""
        x = launch.input()
        _, view = _bn_view(x)
        y = (x - launch.tensor("mean").reshape(view)) * launch.tensor("invstd").reshape(view)
        weight, bias = launch.tensor("weight"), launch.tensor("bias")
        if weight is not None:
            y = y * weight.reshape(view)
        if bias is not None:
            y = y + bias.reshape(view)
        return _out(launch, y)

    REFERENCES["aclnnBatchNormStats"] = _batch_norm_stats
    REFERENCES["aclnnBatchNormElemt"] = _batch_norm_elemt
    def _gather_stats_with_counts(launch: Launch) -> dict[str, Any]:
        """torch.batch_norm_gather_stats_with_counts's definition (CUDA only in PyTorch)."""
        n = launch.tensor("counts").reshape(-1, 1).double()
        means, eps = launch.tensor("mean"), launch.arg("eps")
        variances = 1 / launch.tensor("invstd").square() - eps
        total = n.sum()
        mean = (means * n).sum(0) / total
        pooled = (n * (variances + (means - mean).square())).sum(0)
        m = launch.arg("momentum")
        found = {"meanAll": mean, "invstdAll": torch.rsqrt(pooled / total + eps)}
        for name, value in (("runningMean", mean), ("runningVar", pooled / (total - 1))):
            running = launch.tensor(name)
            if running is not None:
                found[name] = running * (1 - m) + value.reshape(running.shape) * m
        return found

    REFERENCES["aclnnBatchNormGatherStatsWithCounts"] = _gather_stats_with_counts

    def _exp_segsum(x: Any) -> Any:
        """Mamba2's segsum, exponentiated: exp(cumsum[i] - cumsum[j]) below the diagonal,
        by masked sums (ops-math math/segsum/docs/aclnnExpSegsum.md)."""
        length = x.shape[-1]
        below = torch.tril(torch.ones(length, length, dtype=torch.bool), -1)
        sums = torch.cumsum(x[..., None].expand(*x.shape, length).masked_fill(~below, 0), -2)
        above = torch.triu(torch.ones(length, length, dtype=torch.bool), 1)
        return torch.exp(sums.masked_fill(above, -torch.inf))

    def _exp_segsum_backward(launch: Launch) -> dict[str, Any]:
        """The gradient of _exp_segsum by autograd, given its output (gradSelf)."""
        g, y = launch.tensor("gradOutput"), launch.tensor("gradSelf")
        length = g.shape[-1]
        below = torch.tril(torch.ones(length, length, dtype=torch.bool), -1)
        product = (g * y).masked_fill(~below, 0)
        suffix = torch.flip(torch.cumsum(torch.flip(product, [-2]), -2), [-2])
        return _out(launch, suffix.masked_fill(~below, 0).sum(-1))

    def _sync_gather_stats(launch: Launch) -> dict[str, Any]:
        """ops-nn norm/sync_batch_norm_gather_stats/docs/aclnnSyncBatchNormGatherStats.md's
        formulas (PyTorch has no such function)."""
        n = launch.tensor("sampleCount").long().sum().double()
        mean = launch.tensor("totalSum").sum(0) / n
        variance = launch.tensor("totalSquareSum").sum(0) / n - mean.square()
        m = launch.arg("momentum")
        return {"batchMean": mean, "batchInvstd": torch.rsqrt(variance + launch.arg("eps")),
                "mean": launch.tensor("mean") * (1 - m) + mean * m,
                "variance": launch.tensor("variance") * (1 - m) + variance * n / (n - 1) * m}

    def _batch_norm_reduce(launch: Launch) -> dict[str, Any]:
        x = launch.tensor("x")
        return {"sum": x.sum((0, 2, 3)), "squareSum": x.square().sum((0, 2, 3))}

    def _channel(value: Any, like: Any) -> Any:
        return value.reshape((1, -1) + (1,) * (like.dim() - 2))

    def _batch_norm_reduce_backward(launch: Launch) -> dict[str, Any]:
        """PyTorch's batch_norm_backward_reduce (CUDA only), by its definition."""
        g, x = launch.tensor("gradOut"), launch.tensor("input")
        axes = tuple(a for a in range(x.dim()) if a != 1)
        sum_dy = g.sum(axes)
        sum_dy_xmu = (g * (x - _channel(launch.tensor("mean"), x))).sum(axes)
        found: dict[str, Any] = {}
        if launch.arg("inputG"):
            found.update(sumDy=sum_dy, sumDyXmu=sum_dy_xmu)
        if launch.arg("weightG"):
            found["gradWeight"] = sum_dy_xmu * launch.tensor("invstd")
        if launch.arg("biasG"):
            found["gradBias"] = sum_dy
        return found

    def _batch_norm_elemt_backward(launch: Launch) -> dict[str, Any]:
        """PyTorch's batch_norm_backward_elemt (CUDA only), by its definition."""
        g, x = launch.tensor("gradOut"), launch.tensor("input")
        n = launch.tensor("counter").sum()
        invstd = _channel(launch.tensor("invstd"), x)
        weight = launch.tensor("weight")
        scale = invstd if weight is None else invstd * _channel(weight, x)
        centred = (x - _channel(launch.tensor("mean"), x)) * invstd.square() \
            * _channel(launch.tensor("sumDyXmu"), x) / n
        return _out(launch, (g - _channel(launch.tensor("sumDy"), x) / n - centred) * scale)

    def _fast_batch_norm_backward(launch: Launch) -> dict[str, Any]:
        """aten.native_batch_norm_backward, NULL statistics at BatchNormBackward's defaults."""
        x = launch.tensor("input")
        channels = x.shape[1]

        def given(name: str, default: float) -> Any:
            value = launch.tensor(name)
            return torch.full((channels,), default, dtype=torch.float64) if value is None \
                else value

        mask = [bool(m) for m in launch.arg("outputMask")]
        grads = torch.ops.aten.native_batch_norm_backward(
            launch.tensor("gradOut"), x, launch.tensor("weight"), given("runningMean", 0),
            given("runningVar", 1), given("saveMean", 0), given("saveInvstd", 1),
            bool(launch.arg("training")), float(launch.arg("eps")), mask)
        return {name: grad for name, grad, asked in
                zip(("gradInput", "gradWeight", "gradBias"), grads, mask) if asked}

    REFERENCES["aclnnFastBatchNormBackward"] = _fast_batch_norm_backward
    REFERENCES["aclnnExpSegsum"] = lambda launch: _out(launch, _exp_segsum(launch.tensor("self")))
    REFERENCES["aclnnExpSegsumBackward"] = _exp_segsum_backward
    REFERENCES["aclnnSyncBatchNormGatherStats"] = _sync_gather_stats
    REFERENCES["aclnnBatchNormReduce"] = _batch_norm_reduce
    REFERENCES["aclnnBatchNormReduceBackward"] = _batch_norm_reduce_backward
    REFERENCES["aclnnBatchNormElemtBackward"] = _batch_norm_elemt_backward
    REFERENCES["aclnnDeepNorm"] = _deep_norm
    REFERENCES["aclnnDeepNormGrad"] = _deep_norm_grad
    REFERENCES["aclnnRmsNormGrad"] = _rms_norm_grad
    REFERENCES["aclnnGroupNorm"] = lambda launch: _out(launch, functional.group_norm(
        launch.input(), launch.arg("group"), launch.tensor("gamma"), launch.tensor("beta"),
        launch.arg("eps")))

    def _convolution(launch: Launch) -> dict[str, Any]:
        x, weight, bias = launch.input(), launch.tensor("weight"), launch.tensor("bias")
        spatial = x.dim() - 2
        options = {"stride": launch.arg("stride"), "padding": launch.arg("padding"),
                   "dilation": launch.arg("dilation"), "groups": launch.arg("groups")}
        if launch.arg("transposed"):
            function = getattr(functional, f"conv_transpose{spatial}d")
            out = function(x, weight, bias, output_padding=launch.arg("outputPadding"),
                           **options)
        else:
            out = getattr(functional, f"conv{spatial}d")(x, weight, bias, **options)
        return _out(launch, out)

    REFERENCES["aclnnConvolution"] = _convolution
    REFERENCES["aclnnAdaptiveAvgPool2d"] = lambda launch: _out(
        launch, functional.adaptive_avg_pool2d(launch.input(), launch.arg("outputSize")))
    REFERENCES["aclnnAvgPool2d"] = lambda launch: _out(launch, functional.avg_pool2d(
        launch.input(), launch.arg("kernelSize"), launch.arg("strides"), launch.arg("paddings"),
        launch.arg("ceilMode"), launch.arg("countIncludePad"),
        launch.arg("divisorOverride") or None))

    def _pool_grad(forward: Callable[[Any], Any], x: Any, grad: Any) -> Any:
        """The gradient of ``forward`` at ``x`` for the output gradient ``grad``."""
        x = x.clone().requires_grad_(True)
        (result,) = torch.autograd.grad(forward(x), x, grad)
        return result

    def _scatter_grad(launch: Launch, rank: int) -> dict[str, Any]:
        """A max pool's gradient by its indices: each plane's gradient summed at its indices."""
        x, g = launch.tensor("self"), launch.tensor("gradOutput")
        planes = int(np.prod(x.shape[:-rank]))
        result = torch.zeros(planes, int(np.prod(x.shape[-rank:])), dtype=g.dtype)
        result.scatter_add_(1, launch.tensor("indices").reshape(planes, -1),
                            g.reshape(planes, -1))
        return _out(launch, result.reshape(x.shape))

    def _avg_pool2d_backward(launch: Launch) -> dict[str, Any]:
        args = (launch.arg("kernelSize"), launch.arg("stride") or None, launch.arg("padding"),
                launch.arg("ceilMode"), launch.arg("countIncludePad"),
                launch.arg("divisorOverride") or None)
        return _out(launch, _pool_grad(lambda x: functional.avg_pool2d(x, *args),
                                       launch.tensor("self"), launch.tensor("gradOutput")))

    def _avg_pool3d_backward(launch: Launch) -> dict[str, Any]:
        args = (launch.arg("kernelSize"), launch.arg("stride") or None, launch.arg("padding"),
                launch.arg("ceilMode"), launch.arg("countIncludePad"),
                launch.arg("divisorOverride") or None)
        return _out(launch, _pool_grad(lambda x: functional.avg_pool3d(x, *args),
                                       launch.tensor("self"), launch.tensor("gradOutput")))

    def _adaptive_avg_backward(rank: int) -> Reference:
        function = getattr(functional, f"adaptive_avg_pool{rank}d")

        def reference(launch: Launch) -> dict[str, Any]:
            g = launch.tensor("gradOutput")
            size = tuple(g.shape[-rank:])
            return _out(launch, _pool_grad(lambda x: function(x, size), launch.tensor("self"),
                                           g))
        return reference

    def _adaptive_max(rank: int) -> Reference:
        function = getattr(functional, f"adaptive_max_pool{rank}d")

        def reference(launch: Launch) -> dict[str, Any]:
            size = launch.arg("outputSize")
            values, indices = function(launch.input(), size[0] if len(size) == 1 else size,
                                       return_indices=True)
            return {"outputOut": values, "indicesOut": indices}
        return reference

    def _max_pool3d_argmax(launch: Launch) -> dict[str, Any]:
        values, indices = functional.max_pool3d(
            launch.input(), launch.arg("kernelSize"), launch.arg("stride") or None,
            launch.arg("padding"), launch.arg("dilation"), launch.arg("ceilMode"),
            return_indices=True)
        return {"out": values, "indices": indices}

    def _max_pool_onnx(launch: Launch) -> dict[str, Any]:
        pads = list(launch.arg("pads")) or [0]
        if len(pads) == 1:
            pads = pads * 4
        elif len(pads) == 2:
            pads = [pads[0], pads[1], pads[0], pads[1]]
        x = functional.pad(launch.input(), (pads[1], pads[3], pads[0], pads[2]),
                           value=-float("inf"))
        return _out(launch, functional.max_pool2d(x, launch.arg("kernelShape"),
                                                  launch.arg("strides") or 1, 0, 1,
                                                  bool(launch.arg("ceilMode"))))

    def _max_unpool_backward(rank: int) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            x, g = launch.tensor("self"), launch.tensor("gradOutput")
            planes = int(np.prod(x.shape[:-rank]))
            taken = torch.gather(g.reshape(planes, -1), 1,
                                 launch.tensor("indices").reshape(planes, -1))
            return _out(launch, taken.reshape(x.shape))
        return reference

    def _pad(mode: str, backward: bool) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            padding = list(launch.arg("padding"))
            x = launch.tensor("self")
            if not backward:
                return _out(launch, functional.pad(x, padding, mode=mode))
            return _out(launch, _pool_grad(lambda v: functional.pad(v, padding, mode=mode), x,
                                           launch.tensor("gradOutput")))
        return reference

    for _kind, _mode in (("Reflection", "reflect"), ("Replication", "replicate"),
                         ("Circular", "circular")):
        for _dims in (1, 2, 3):
            REFERENCES[f"aclnn{_kind}Pad{_dims}d"] = _pad(_mode, False)
            REFERENCES[f"aclnn{_kind}Pad{_dims}dBackward"] = _pad(_mode, True)
    def _slice_v2(launch: Launch) -> dict[str, Any]:
        x = launch.input()
        index = [slice(None)] * x.dim()
        for start, end, axis, step in zip(launch.arg("starts"), launch.arg("ends"),
                                          launch.arg("axes"), launch.arg("steps")):
            index[axis % x.dim()] = slice(start, end, step)
        return _out(launch, x[tuple(index)])

    def _slice(launch: Launch) -> dict[str, Any]:
        x = launch.input()
        index = [slice(None)] * x.dim()
        index[launch.arg("dim") % x.dim()] = slice(launch.arg("start"), launch.arg("end"),
                                                   launch.arg("step"))
        return _out(launch, x[tuple(index)])

    def _fill_diagonal(launch: Launch) -> dict[str, Any]:
        return {"selfRef": launch.tensor("selfRef").clone().fill_diagonal_(
            launch.arg("fillValue"), wrap=launch.arg("wrap"))}

    REFERENCES["aclnnDiag"] = lambda launch: _out(launch, torch.diag(launch.input(),
                                                                     launch.arg("diagonal")))
    REFERENCES["aclnnDiagFlat"] = lambda launch: _out(launch, torch.diagflat(
        launch.input(), launch.arg("diagonal")))
    REFERENCES["aclnnInplaceFillDiagonal"] = _fill_diagonal
    REFERENCES["aclnnFlatten"] = lambda launch: _out(launch, torch.flatten(
        launch.input(), 0, launch.arg("axis") % max(launch.input().dim(), 1) - 1).reshape(
            -1, int(np.prod(launch.input().shape[launch.arg("axis") % max(
                launch.input().dim(), 1):]))))
    REFERENCES["aclnnSlice"] = _slice
    REFERENCES["aclnnSliceV2"] = _slice_v2
    REFERENCES["aclnnChannelShuffle"] = lambda launch: _out(
        launch, functional.channel_shuffle(launch.input(), launch.arg("groups")))
    REFERENCES["aclnnChunkCat"] = lambda launch: _out(launch, torch._chunk_cat(
        launch.input(), launch.arg("dim"), launch.arg("numChunks")))
    def _unfold_grad(launch: Launch) -> dict[str, Any]:
        x = torch.zeros(launch.arg("inputSizes"), dtype=torch.float64)
        return _out(launch, _pool_grad(
            lambda v: v.unfold(launch.arg("dim"), launch.arg("size"), launch.arg("step")), x,
            launch.tensor("gradOut")))

    REFERENCES["aclnnIm2col"] = lambda launch: _out(launch, functional.unfold(
        launch.input(), launch.arg("kernelSize"), launch.arg("dilation"), launch.arg("padding"),
        launch.arg("stride")))
    REFERENCES["aclnnUnfoldGrad"] = _unfold_grad
    def _strided_slice_assign(launch: Launch) -> dict[str, Any]:
        var = launch.tensor("varRef").clone()
        begin, end, steps = launch.arg("begin"), launch.arg("end"), launch.arg("strides")
        axes = launch.arg("axesOptional")
        axes = range(len(begin)) if axes is None else axes
        index = [slice(None)] * var.dim()
        for first, last, step, axis in zip(begin, end, steps, axes):
            index[axis % var.dim()] = slice(first, last, step)
        var[tuple(index)] = launch.tensor("inputValue")
        return {"varRef": var}

    REFERENCES["aclnnStridedSliceAssignV2"] = _strided_slice_assign
    REFERENCES["aclnnAvgPool2dBackward"] = _avg_pool2d_backward
    REFERENCES["aclnnAvgPool3d"] = lambda launch: _out(launch, functional.avg_pool3d(
        launch.input(), launch.arg("kernelSize"), launch.arg("stride") or None,
        launch.arg("padding"), launch.arg("ceilMode"), launch.arg("countIncludePad"),
        launch.arg("divisorOverride") or None))
    REFERENCES["aclnnAvgPool3dBackward"] = _avg_pool3d_backward
    REFERENCES["aclnnAdaptiveAvgPool2dBackward"] = _adaptive_avg_backward(2)
    REFERENCES["aclnnAdaptiveAvgPool3d"] = lambda launch: _out(
        launch, functional.adaptive_avg_pool3d(launch.input(), launch.arg("outputSize")))
    REFERENCES["aclnnAdaptiveAvgPool3dBackward"] = _adaptive_avg_backward(3)
    REFERENCES["aclnnAdaptiveMaxPool2d"] = _adaptive_max(2)
    REFERENCES["aclnnAdaptiveMaxPool3d"] = _adaptive_max(3)
    REFERENCES["aclnnAdaptiveMaxPool2dBackward"] = lambda launch: _scatter_grad(launch, 2)
    REFERENCES["aclnnAdaptiveMaxPool3dBackward"] = lambda launch: _scatter_grad(launch, 3)
    REFERENCES["aclnnMaxPool2dWithIndicesBackward"] = lambda launch: _scatter_grad(launch, 2)
    REFERENCES["aclnnMaxPool3dWithArgmax"] = _max_pool3d_argmax

    def _max_pool3d_tf(launch: Launch) -> dict[str, Any]:
        """ops-nn experimental/pooling/max_pool3_d/docs/aclnnMaxPool3D.md: the maximum of each
        window, padding taking no part (-inf), cropped to the out given."""
        last = (launch.arg("dataFormatOptional") or "NDHWC") == "NDHWC"
        x = launch.input()
        x = x.permute(0, 4, 1, 2, 3) if last else x

        def spatial(name: str, default: int) -> list[int]:
            values = launch.arg(name) or [default]
            if len(values) == 5:
                return list(values[1:4] if last else values[2:5])
            return list(values) * 3 if len(values) == 1 else list(values)

        k, s, d = spatial("ksize", 1), spatial("strides", 1), spatial("dilationOptional", 1)
        pads = launch.arg("padsOptional") or [0] * 6
        widths: list[int] = []
        for i in (2, 1, 0):  # F.pad's order: the last dim first
            size, span = x.shape[2 + i], d[i] * (k[i] - 1) + 1
            if launch.arg("padding") == "SAME":
                out = -(-size // s[i])
                before = max((out - 1) * s[i] + span - size, 0) // 2
            elif launch.arg("padding") == "CALCULATED":
                before = pads[2 * i]
            else:
                before = 0
            widths += [before, span + s[i]]
        y = functional.max_pool3d(functional.pad(x, widths, value=float("-inf")), k, s, 0, d)
        y = y.permute(0, 2, 3, 4, 1) if last else y
        shape = launch.results[launch.written[0]].shape
        return _out(launch, y[tuple(slice(0, n) for n in shape)])

    REFERENCES["aclnnMaxPool3D"] = _max_pool3d_tf

    def _swiglu_clamp(launch: Launch) -> dict[str, Any]:
        """ops-nn experimental/activation/swiglu_clamp/README.md's formula."""
        x, limit = launch.input(), launch.arg("limit")
        gate, up = x.chunk(2, dim=-1)
        return _out(launch, functional.silu(gate).clamp(max=limit) * up.clamp(-limit, limit))

    REFERENCES["aclnnSwigluClamp"] = _swiglu_clamp
    REFERENCES["aclnnMaxPool3dWithArgmaxBackward"] = lambda launch: _scatter_grad(launch, 3)
    REFERENCES["aclnnMaxPool"] = _max_pool_onnx
    REFERENCES["aclnnMaxUnpool2dBackward"] = _max_unpool_backward(2)
    REFERENCES["aclnnMaxUnpool3dBackward"] = _max_unpool_backward(3)


    for _name in ("Acosh", "Asinh"):
        REFERENCES[f"aclnn{_name}"] = _unary(getattr(torch, _name.lower()))
    REFERENCES["aclnnSoftsign"] = _unary(functional.softsign)
    REFERENCES["aclnnSelu"] = _unary(functional.selu)
    REFERENCES["aclnnLogSigmoid"] = _unary(functional.logsigmoid)

    # the gradients of the activations, by autograd
    def _gradient(function: Callable[..., Any], *others: str) -> Reference:
        """gradInput = gradOutput d function(self, *the arguments others) / d self."""
        def reference(launch: Launch) -> dict[str, Any]:
            x = launch.tensor("self").clone().requires_grad_()
            values = [launch.arg(name) for name in others]
            function(x, *values).backward(launch.tensor("gradOutput"))
            return _out(launch, x.grad)
        return reference

    REFERENCES["aclnnHardshrinkBackward"] = _gradient(functional.hardshrink, "lambd")
    REFERENCES["aclnnSoftshrinkBackward"] = _gradient(functional.softshrink, "lambda")
    REFERENCES["aclnnSwishBackward"] = _gradient(
        lambda x, beta: x * torch.sigmoid((1.0 if beta is None else beta) * x), "betaOptional")
    REFERENCES["aclnnSelu"] = REFERENCES["aclnnInplaceSelu"] = _unary(functional.selu)
    REFERENCES["aclnnCelu"] = REFERENCES["aclnnInplaceCelu"] = lambda launch: _out(
        launch, functional.celu(launch.input(), launch.arg("alpha")))

    # the foreach family: each tensor of the list as the one-tensor operator computes it
    def _each(function: Callable[..., Any], *others: str) -> Reference:
        """out[i] = function(x_i, *the others: a list's i-th tensor, a tensor, a number)."""
        def reference(launch: Launch) -> dict[str, Any]:
            first = launch.input()
            values = []
            for name in others:
                value = launch.tensor(name) if name in launch.tensors else launch.arg(name)
                values.append(value)
            found = {}
            for index, x in enumerate(first):
                picked = [v[index] if isinstance(v, list) else v for v in values]
                picked = [v.reshape(()) if hasattr(v, "reshape") and v.numel() == 1
                          and not isinstance(o, list) else v
                          for v, o in zip(picked, values)]
                found[f"{launch.written[0]}[{index}]"] = function(x, *picked)
            return found
        return reference

    for _name in ("Abs", "Acos", "Asin", "Atan", "Cos", "Cosh", "Erf", "Erfc", "Exp", "Expm1",
                  "Log", "Log10", "Log1p", "Log2", "Neg", "Reciprocal", "Sigmoid", "Sign", "Sin",
                  "Sinh", "Sqrt", "Tan", "Tanh"):
        REFERENCES[f"aclnnForeach{_name}"] = _each(getattr(torch, _name.lower()))
    for _name, _function in (("Add", torch.add), ("Sub", torch.sub), ("Mul", torch.mul),
                             ("Div", torch.div), ("Maximum", torch.maximum),
                             ("Minimum", torch.minimum), ("Pow", torch.pow)):
        for _form in ("Scalar", "ScalarV2"):
            REFERENCES[f"aclnnForeach{_name}{_form}"] = _each(
                (lambda f: lambda x, s: f(x, torch.as_tensor(s, dtype=x.dtype)))(_function),
                "scalar")
        # one scalar per tensor, stored as nnopbase stores an aclScalarList: float32 for a
        # float list (a double rounded to it), int64 for an int32 one
        REFERENCES[f"aclnnForeach{_name}ScalarList"] = _each(
            (lambda f: lambda x, s: f(x, torch.as_tensor(
                float(np.float32(s)) if x.is_floating_point() else int(s), dtype=x.dtype)))(
                    _function), "scalars")
        if _name in ("Add", "Sub"):  # x1 + alpha x2 (aclnnForeachAddList's doc)
            REFERENCES[f"aclnnForeach{_name}List"] = _each(
                (lambda f: lambda x, y, a: f(x, y, alpha=a))(_function), "x2", "alpha")
        else:
            REFERENCES[f"aclnnForeach{_name}List"] = _each(_function, "x2")
    REFERENCES["aclnnForeachLerpScalar"] = _each(torch.lerp, "x2", "weight")
    REFERENCES["aclnnForeachLerpList"] = _each(torch.lerp, "x2", "weight")

    # ops-math math/: the pointwise and bitwise families (each doc's formula is PyTorch's)
    for _name, _function in {"Erfc": torch.erfc, "Exp2": torch.exp2, "Sinc": torch.sinc,
                             "Lgamma": torch.lgamma, "Digamma": torch.digamma,
                             "Atanh": torch.atanh, "IsFinite": torch.isfinite,
                             "IsInf": torch.isinf, "IsPosInf": torch.isposinf,
                             "IsNegInf": torch.isneginf,
                             "BitwiseNot": torch.bitwise_not}.items():
        REFERENCES[f"aclnn{_name}"] = _unary(_function)
    REFERENCES["aclnnRoundDecimals"] = lambda launch: _out(
        launch, torch.round(launch.input(), decimals=launch.arg("decimals")))

    def _either(function: Callable[[Any, Any], Any]) -> Reference:
        """A binary operator whose operands are tensors or scalars, in parameter order."""
        def reference(launch: Launch) -> dict[str, Any]:
            first, second = (launch.tensor(name) if name in launch.tensors
                             else torch.tensor(launch.arg(name)) for name in launch.order[:2])
            return _out(launch, function(first, second))
        return reference

    for _name, _pair in {"LogAddExp": torch.logaddexp, "LogAddExp2": torch.logaddexp2,
                         "XLogYTensor": torch.xlogy, "XLogYScalarSelf": torch.xlogy,
                         "XLogYScalarOther": torch.xlogy, "FmodTensor": torch.fmod,
                         "FmodScalar": torch.fmod, "RemainderTensorTensor": torch.remainder,
                         "RemainderTensorScalar": torch.remainder,
                         "RemainderScalarTensor": torch.remainder,
                         "FloorDivides": torch.floor_divide, "Gcd": torch.gcd,
                         "BitwiseAndTensor": torch.bitwise_and,
                         "BitwiseAndScalar": torch.bitwise_and,
                         "BitwiseOrTensor": torch.bitwise_or, "BitwiseOrScalar": torch.bitwise_or,
                         "BitwiseXorTensor": torch.bitwise_xor,
                         "BitwiseXorScalar": torch.bitwise_xor,
                         "LeftShift": torch.bitwise_left_shift,
                         "LeftShifts": torch.bitwise_left_shift,
                         "RightShift": torch.bitwise_right_shift}.items():
        REFERENCES[f"aclnn{_name}"] = _either(_pair)

    # ops-math math/: reductions along dimensions (kernels/dim_reductions.py)
    def _dims(launch: Launch, name: str) -> Any:
        dims = launch.arg(name)
        return list(dims) if dims else list(range(launch.input().dim()))

    REFERENCES["aclnnAll"] = lambda launch: _out(launch, torch.all(
        launch.input().bool(), dim=_dims(launch, "dim"), keepdim=launch.arg("keepdim")))
    REFERENCES["aclnnAny"] = lambda launch: _out(launch, torch.any(
        launch.input().bool(), dim=_dims(launch, "dim"), keepdim=launch.arg("keepdim")))
    REFERENCES["aclnnLogSumExp"] = lambda launch: _out(launch, torch.logsumexp(
        launch.input(), dim=_dims(launch, "dim"), keepdim=launch.arg("keepDim")))
    REFERENCES["aclnnReduceNansum"] = lambda launch: _out(launch, torch.nansum(
        launch.input(), dim=_dims(launch, "dim"), keepdim=launch.arg("keepDim")))
    REFERENCES["aclnnProdDim"] = lambda launch: _out(launch, torch.prod(
        launch.input(), dim=launch.arg("dim"), keepdim=launch.arg("keepDim")))
    REFERENCES["aclnnCumprod"] = lambda launch: _out(launch, torch.cumprod(
        launch.input(), dim=int(launch.arg("dim"))))

    def _with_indices(function: Callable[..., Any], keep: str | None) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            extra = {} if keep is None else {"keepdim": launch.arg(keep)}
            values, indices = function(launch.input(), launch.arg("dim"), **extra)
            return dict(zip(launch.written, (values, indices)))
        return reference

    REFERENCES["aclnnMaxDim"] = _with_indices(torch.max, "keepdim")
    REFERENCES["aclnnMinDim"] = _with_indices(torch.min, "keepdim")
    REFERENCES["aclnnCummax"] = _with_indices(torch.cummax, None)
    REFERENCES["aclnnCummin"] = _with_indices(torch.cummin, None)

    def _aminmax(launch: Launch, dims: Any, keep: bool) -> dict[str, Any]:
        x = launch.input()
        low = torch.amin(x, dim=dims, keepdim=keep) if dims else torch.amin(x)
        high = torch.amax(x, dim=dims, keepdim=keep) if dims else torch.amax(x)
        return dict(zip(launch.written, (low, high)))

    REFERENCES["aclnnAminmax"] = lambda launch: _aminmax(
        launch, _dims(launch, "dim"), launch.arg("keepDim"))
    REFERENCES["aclnnAminmaxDim"] = lambda launch: _aminmax(
        launch, [launch.arg("dim")], launch.arg("keepDim"))
    REFERENCES["aclnnAminmaxAll"] = lambda launch: _aminmax(launch, None, False)

    def _n(function: Callable[[Any, Any], Any]) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            tensors = launch.input()
            result = tensors[0]
            for tensor in tensors[1:]:
                result = function(result, tensor)
            return _out(launch, result)
        return reference

    REFERENCES["aclnnMaxN"] = _n(torch.maximum)
    REFERENCES["aclnnMinN"] = _n(torch.minimum)
    REFERENCES["aclnnEqual"] = lambda launch: _out(launch, torch.tensor(
        torch.equal(launch.input(), launch.input(1))))

    def _v2(function: Callable[..., Any], dims: str, noop: str, keep: str) -> Reference:
        """(self, dims, keep, noop, out): the input itself for empty dims with noop set."""
        def reference(launch: Launch) -> dict[str, Any]:
            x = launch.input()
            if not launch.arg(dims) and launch.arg(noop):
                return _out(launch, x)
            return _out(launch, function(x, _dims(launch, dims), launch.arg(keep)))
        return reference

    REFERENCES["aclnnMaxV2"] = _v2(lambda x, d, k: torch.amax(x, dim=d, keepdim=k), "dims",
                                   "noopWithEmptyDims", "keepDims")
    REFERENCES["aclnnMeanV2"] = _v2(lambda x, d, k: torch.mean(x, dim=d, keepdim=k), "dim",
                                    "noopWithEmptyAxes", "keepDim")
    REFERENCES["aclnnReduceLogSum"] = _v2(
        lambda x, d, k: torch.log(torch.sum(x, dim=d, keepdim=k)), "axes", "noopWithEmptyAxes",
        "keepDims")
    REFERENCES["aclnnGlobalAveragePool"] = lambda launch: _out(launch, torch.mean(
        launch.input(), dim=list(range(2, launch.input().dim())), keepdim=True))
    REFERENCES["aclnnGlobalMaxPool"] = lambda launch: _out(launch, torch.amax(
        launch.input(), dim=list(range(2, launch.input().dim())), keepdim=True))

    def _moments(function: Callable[..., Any]) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            first, mean = function(launch.input(), dim=_dims(launch, "dim"),
                                   correction=launch.arg("correction"),
                                   keepdim=launch.arg("keepdim"))
            return dict(zip(launch.written, (first, mean)))
        return reference

    REFERENCES["aclnnVarMean"] = _moments(torch.var_mean)
    REFERENCES["aclnnStdMeanCorrection"] = _moments(torch.std_mean)

    def _cumsum_v2(launch: Launch) -> dict[str, Any]:
        x, dim = launch.input(), launch.arg("dim")
        if launch.arg("reverse"):
            x = torch.flip(x, [dim])
        result = torch.cumsum(x, dim)
        if launch.arg("exclusive"):
            result = result - x
        return _out(launch, torch.flip(result, [dim]) if launch.arg("reverse") else result)

    REFERENCES["aclnnCumsumV2"] = _cumsum_v2

    # ops-math math/: products of vectors (kernels/vector_products.py)
    REFERENCES["aclnnGer"] = lambda launch: _out(launch, torch.outer(
        launch.input(), launch.tensor("vec2")))
    REFERENCES["aclnnAddr"] = lambda launch: _out(launch, torch.addr(
        launch.input(), launch.tensor("vec1"), launch.tensor("vec2"),
        beta=1 if launch.arg("betaOptional") is None else launch.arg("betaOptional"),
        alpha=1 if launch.arg("alphaOptional") is None else launch.arg("alphaOptional")))
    REFERENCES["aclnnLinalgCross"] = lambda launch: _out(launch, torch.linalg.cross(
        launch.input(), launch.input(1), dim=launch.arg("dim")))

    # indexing (kernels/indexing.py)
    def _index_add(launch: Launch) -> dict[str, Any]:
        self = launch.input()
        alpha = launch.arg("alpha")
        if self.dtype == torch.bool:
            return _out(launch, self.index_add(launch.arg("dim"), launch.tensor("index"),
                                               launch.tensor("source")))
        return _out(launch, torch.index_add(self, launch.arg("dim"), launch.tensor("index"),
                                            launch.tensor("source"), alpha=alpha))

    REFERENCES["aclnnIndexAdd"] = _index_add
    REFERENCES["aclnnIndexAddV2"] = _index_add
    REFERENCES["aclnnIndexCopy"] = lambda launch: _out(launch, torch.index_copy(
        launch.input(), launch.arg("dim"), launch.tensor("index"), launch.tensor("source")))
    REFERENCES["aclnnInplaceIndexCopy"] = REFERENCES["aclnnIndexCopy"]
    REFERENCES["aclnnIndexFill"] = lambda launch: _out(launch, torch.index_fill(
        launch.input(), launch.arg("dim"), launch.tensor("index"), launch.arg("value")))
    REFERENCES["aclnnIndexFillTensor"] = lambda launch: _out(launch, torch.index_fill(
        launch.input(), launch.arg("dim"), torch.tensor(launch.arg("index"), dtype=torch.int64),
        launch.arg("value")))

    def _index(launch: Launch) -> dict[str, Any]:
        key = tuple(slice(None) if i.numel() == 0 and i.dtype != torch.bool
                    else (i.bool() if launch.tensors["indices"][n].dtype == np.uint8 else i)
                    for n, i in enumerate(launch.tensor("indices")))
        return _out(launch, launch.input()[key])

    REFERENCES["aclnnIndex"] = _index
    _SCATTER_REDUCE = {0: None, 1: "add", 2: "multiply"}

    def _scatter_value(launch: Launch) -> dict[str, Any]:
        reduce = _SCATTER_REDUCE.get(launch.arg("reduce"))
        self, index = launch.input(), launch.tensor("index")
        if reduce is None:
            return _out(launch, torch.scatter(self, launch.arg("dim"), index,
                                              launch.arg("value")))
        return _out(launch, torch.scatter(self, launch.arg("dim"), index, launch.arg("value"),
                                          reduce=reduce))

    REFERENCES["aclnnScatterValue"] = _scatter_value

    def _scatter(launch: Launch) -> dict[str, Any]:
        reduce = _SCATTER_REDUCE.get(launch.arg("reduce"))
        self, index, src = launch.input(), launch.tensor("index"), launch.tensor("src")
        if reduce is None:
            return _out(launch, torch.scatter(self, launch.arg("dim"), index, src))
        return _out(launch, torch.scatter_reduce(self, launch.arg("dim"), index, src,
                                                 "sum" if reduce == "add" else "prod"))

    REFERENCES["aclnnScatter"] = _scatter
    REFERENCES["aclnnScatterReduce"] = lambda launch: _out(launch, torch.scatter_reduce(
        launch.input(), launch.arg("dim"), launch.tensor("index"), launch.tensor("src"),
        {0: "sum", 1: "sum", 2: "prod", 3: "amax", 4: "amin", 5: "mean"}[launch.arg("reduce")],
        include_self=launch.arg("includeSelf")))

    def _scatter_nd(launch: Launch) -> dict[str, Any]:
        data, indices, updates = (launch.input(), launch.tensor("indices"),
                                  launch.tensor("updates"))
        result = data.clone()
        depth = indices.shape[-1]
        rows = indices.reshape(-1, depth)
        result[tuple(rows[:, d] for d in range(depth))] = updates.reshape(
            (-1,) + tuple(data.shape[depth:]))
        return _out(launch, result)

    REFERENCES["aclnnScatterNd"] = _scatter_nd
    REFERENCES["aclnnScatterNdUpdate"] = _scatter_nd

    def _tf_scatter_add(launch: Launch) -> dict[str, Any]:
        var, indices, updates = launch.input(), launch.tensor("indices"), launch.tensor("updates")
        return _out(launch, var.index_add(0, indices.reshape(-1), updates.reshape(
            (-1,) + tuple(var.shape[1:]))))

    REFERENCES["aclnnTfScatterAdd"] = _tf_scatter_add
    REFERENCES["aclnnInplacePut"] = lambda launch: _out(launch, launch.input().put(
        launch.tensor("index"), launch.tensor("source"), accumulate=launch.arg("accumulate")))
    REFERENCES["aclnnGatherV3"] = lambda launch: _out(launch, torch.index_select(
        launch.input(), launch.arg("dim"), launch.tensor("index").reshape(-1)).reshape(
        launch.results[launch.written[0]].shape))
    REFERENCES["aclnnEmbeddingDenseBackward"] = lambda launch: _out(
        launch, torch.ops.aten.embedding_dense_backward(
            launch.input(), launch.tensor("indices"), launch.arg("numWeights"),
            launch.arg("paddingIdx") if launch.arg("paddingIdx") < launch.arg("numWeights")
            else -1, launch.arg("scaleGradByFreq")))
    REFERENCES["aclnnInplaceMaskedScatter"] = lambda launch: _out(launch, launch.input(
        ).masked_scatter(launch.tensor("mask").bool(), launch.tensor("source")))
    REFERENCES["aclnnRepeatInterleave"] = lambda launch: _out(launch, torch.repeat_interleave(
        launch.input().reshape(-1), launch.tensor("repeats").reshape(-1)))
    REFERENCES["aclnnRepeatInterleaveInt"] = lambda launch: _out(launch, torch.repeat_interleave(
        launch.input().reshape(-1), launch.arg("repeats")))
    REFERENCES["aclnnRepeatInterleaveWithDim"] = lambda launch: _out(
        launch, torch.repeat_interleave(launch.input(), launch.tensor("repeats").reshape(-1),
                                        dim=launch.arg("dim")))
    REFERENCES["aclnnRepeatInterleaveIntWithDim"] = lambda launch: _out(
        launch, torch.repeat_interleave(launch.input(), launch.arg("repeats"),
                                        dim=launch.arg("dim")))
    REFERENCES["aclnnRepeatInterleaveTensor"] = lambda launch: _out(
        launch, torch.repeat_interleave(launch.input().reshape(-1)))

    def _repeat_interleave_grad(launch: Launch) -> dict[str, Any]:
        grad, repeats, axis = launch.input(), launch.tensor("repeats").reshape(-1), \
            launch.arg("axis")
        length = grad.shape[axis]
        if repeats.numel() == 1:
            repeats = repeats.expand(length // int(repeats[0]))
        parts = torch.split(grad, repeats.tolist(), dim=axis)
        return _out(launch, torch.cat([p.sum(axis, keepdim=True) for p in parts], axis))

    REFERENCES["aclnnRepeatInterleaveGrad"] = _repeat_interleave_grad
    def _embedding_bag(launch: Launch) -> dict[str, Any]:
        mode = launch.arg("mode")
        weights = launch.tensor("perSampleWeights")
        output, offset2bag, sizes, best = torch.ops.aten._embedding_bag(
            launch.input(), launch.tensor("indices"), launch.tensor("offsets"),
            launch.arg("scaleGradByFreq"), mode if mode in (0, 1) else 2, launch.arg("sparse"),
            weights, launch.arg("includeLastOffset"), launch.arg("paddingIdx"))
        result = {"output": output}
        if mode not in (0, 1):  # PyTorch's CPU kernel fills the other outputs in max mode only
            result.update(offset2bag=offset2bag, bagSize=sizes, maxIndices=best)
        return result

    REFERENCES["aclnnEmbeddingBag"] = _embedding_bag
    REFERENCES["aclnnMedian"] = lambda launch: _out(launch, torch.median(launch.input()))
    REFERENCES["aclnnNanMedian"] = lambda launch: _out(launch, torch.nanmedian(launch.input()))

    def _values_indices(function: Callable[..., Any], keep: str,
                        *extra: str) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            values, indices = function(launch.input(), *(launch.arg(e) for e in extra),
                                       launch.arg("dim"), launch.arg(keep))
            return dict(zip(launch.written, (values, indices)))
        return reference

    REFERENCES["aclnnMedianDim"] = _values_indices(torch.median, "keepDim")
    REFERENCES["aclnnNanMedianDim"] = _values_indices(torch.nanmedian, "keepDim")
    REFERENCES["aclnnKthvalue"] = _values_indices(torch.kthvalue, "keepdim", "k")

    def _prefix(launch: Launch, name: str, value: Any) -> Any:
        """``value`` as the first elements of the written tensor ``name`` (an output whose
        extent depends on the data: the rest is not judged)."""
        got = launch.results[name]
        whole = torch.from_numpy(got.astype(np.float64 if got.dtype.kind == "f" else np.int64)
                                 ).reshape(-1).clone()
        flat = value.reshape(-1).to(whole.dtype)
        whole[:flat.numel()] = flat
        return whole.reshape(got.shape)

    REFERENCES["aclnnNonzero"] = lambda launch: _out(launch, _prefix(
        launch, launch.written[0], torch.nonzero(launch.input())))
    REFERENCES["aclnnNonzeroV2"] = lambda launch: _out(launch, _prefix(
        launch, launch.written[0], torch.nonzero(launch.input()).T.contiguous()))

    def _unique(launch: Launch) -> dict[str, Any]:
        values, inverse = torch.unique(launch.input(), sorted=True, return_inverse=True)
        result = {"valueOut": _prefix(launch, "valueOut", values)}
        if launch.arg("returnInverse") and "inverseOut" in launch.results:
            result["inverseOut"] = inverse
        return result

    REFERENCES["aclnnUnique"] = _unique

    def _unique_consecutive(launch: Launch) -> dict[str, Any]:
        dim = launch.arg("dim")
        values, inverse, counts = torch.unique_consecutive(
            launch.input(), return_inverse=True, return_counts=True,
            dim=None if dim == 1000 else dim)
        result = {"valueOut": _prefix(launch, "valueOut", values)}
        if launch.arg("returnInverse") and "inverseOut" in launch.results:
            result["inverseOut"] = _prefix(launch, "inverseOut", inverse)
        if launch.arg("returnCounts") and "countsOut" in launch.results:
            result["countsOut"] = _prefix(launch, "countsOut", counts)
        return result

    REFERENCES["aclnnUniqueConsecutive"] = _unique_consecutive

    def _unique_dim(launch: Launch) -> dict[str, Any]:
        values, inverse, counts = torch.unique(launch.input(), sorted=True, return_inverse=True,
                                               return_counts=True, dim=launch.arg("dim"))
        result = {"valueOut": _prefix(launch, "valueOut", values)}
        if "inverseOut" in launch.results:
            result["inverseOut"] = _prefix(launch, "inverseOut", inverse)
        if "countsOut" in launch.results:
            result["countsOut"] = _prefix(launch, "countsOut", counts)
        return result

    REFERENCES["aclnnUniqueDim"] = _unique_dim
    # losses of kernels/losses.py and the activations' gradients and gated linear units of
    # kernels/activations.py and activation_grads.py, by their docs' formulas (autograd where
    # the doc gives the gradient of a forward formula)
    def _grad_of(function: Callable[..., Any], at: str, *others: str,
                 grad: str = "gradOutput") -> Reference:
        """The gradient of function(tensor at, *others: tensors or arguments) with respect to
        ``at``, applied to ``grad``."""
        def reference(launch: Launch) -> dict[str, Any]:
            x = launch.tensor(at).clone().requires_grad_()
            values = [launch.tensor(n) if n in launch.tensors else launch.arg(n) for n in others]
            result = function(x, *values)
            g = launch.tensor(grad)
            result.backward(torch.broadcast_to(g, result.shape) if g.dim() else
                            g.expand(result.shape))
            return _out(launch, x.grad)
        return reference

    def _kl(x: Any, t: Any, reduction: int, log_target: bool) -> Any:
        loss = torch.exp(t) * (t - x) if log_target else torch.xlogy(t, t) - t * x
        if reduction == 0:
            return loss
        total = loss.sum()
        return total / (loss.numel() if reduction == 1 else
                        (x.shape[0] if x.dim() else 1)) if reduction in (1, 3) else total

    REFERENCES["aclnnKlDiv"] = lambda launch: _out(launch, _kl(
        launch.input(), launch.input(1), launch.arg("reduction"), launch.arg("logTarget")))
    REFERENCES["aclnnKlDivBackward"] = _grad_of(
        lambda x, t, r, lt: _kl(x, t, r, lt), "self", "target", "reduction", "logTarget")
    REFERENCES["aclnnKlDivTargetBackward"] = _grad_of(
        lambda t, x, r, lt: _kl(x, t, r, lt), "target", "self", "reduction", "logTarget")

    def _soft_margin(x: Any, t: Any, reduction: int) -> Any:
        loss = functional.softplus(-t * x)
        return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()

    REFERENCES["aclnnSoftMarginLoss"] = lambda launch: _out(launch, _soft_margin(
        launch.input(), launch.input(1), launch.arg("reduction")))
    REFERENCES["aclnnSoftMarginLossBackward"] = _grad_of(
        lambda x, t, r: _soft_margin(x, t, r), "self", "target", "reduction")
    REFERENCES["aclnnBinaryCrossEntropyWithLogitsBackward"] = _grad_of(
        lambda x, t, w, p, r: functional.binary_cross_entropy_with_logits(
            x, t, w, pos_weight=p, reduction=REDUCTIONS[r]),
        "self", "target", "weightOptional", "posWeightOptional", "reduction")

    def _nll2d(launch: Launch) -> dict[str, Any]:
        x, target, weight = launch.input(), launch.tensor("target"), launch.tensor("weight")
        ignore, reduction = launch.arg("ignoreIndex"), REDUCTIONS[launch.arg("reduction")]
        keep = target != ignore
        taken = torch.where(keep, weight[torch.where(keep, target, 0)], 0.0)
        return {"out": functional.nll_loss(x, target, weight, ignore_index=ignore,
                                           reduction=reduction),
                "totalWeightOut": taken.sum()}

    REFERENCES["aclnnNLLLoss2d"] = _nll2d

    def _nll2d_backward(launch: Launch) -> dict[str, Any]:
        x = launch.tensor("self").clone().requires_grad_()
        target, weight = launch.tensor("target"), launch.tensor("weight")
        reduction = launch.arg("reduction")
        loss = functional.nll_loss(x, target, weight, ignore_index=launch.arg("ignoreIndex"),
                                   reduction="none" if reduction == 0 else "sum")
        if reduction == 1:
            loss = loss / launch.tensor("totalWeight").reshape(())
        loss.backward(launch.tensor("gradOutput").reshape(loss.shape))
        return _out(launch, x.grad)

    REFERENCES["aclnnNLLLoss2dBackward"] = _nll2d_backward

    def _cross_entropy(launch: Launch) -> dict[str, Any]:
        x, target = launch.input(), launch.tensor("target")
        reduction = launch.arg("reductionOptional") or "mean"
        loss = functional.cross_entropy(x, target, launch.tensor("weightOptional"),
                                        ignore_index=launch.arg("ignoreIndex"),
                                        reduction=reduction,
                                        label_smoothing=launch.arg("labelSmoothing"))
        return {"lossOut": loss, "logProbOut": functional.log_softmax(x, 1)}

    REFERENCES["aclnnCrossEntropyLoss"] = _cross_entropy

    def _cross_entropy_grad(launch: Launch) -> dict[str, Any]:
        # the gradient of PyTorch's cross entropy (label smoothing included) as a function of
        # the log-probabilities, then through log-softmax's backward at output logProb
        log_prob = launch.tensor("logProb").clone().requires_grad_()
        target, weight = launch.tensor("target"), launch.tensor("weightOptional")
        ignore, smoothing = launch.arg("ignoreIndex"), launch.arg("labelSmoothing")
        reduction = launch.arg("reductionOptional") or "mean"
        classes = log_prob.shape[1]
        w = torch.ones(classes, dtype=log_prob.dtype) if weight is None else weight
        keep = target != ignore
        nll = functional.nll_loss(log_prob, target, w, ignore_index=ignore,
                                  reduction=reduction)
        smooth = torch.where(keep, -(log_prob * w).sum(1), 0.0)
        if reduction == "mean":
            smooth = smooth.sum() / w[torch.where(keep, target, 0)][keep].sum()
        elif reduction == "sum":
            smooth = smooth.sum()
        loss = (1 - smoothing) * nll + smoothing / classes * smooth
        loss.backward(launch.tensor("gradLoss").reshape(loss.shape))
        assert log_prob.grad is not None
        return _out(launch, torch.ops.aten._log_softmax_backward_data(
            log_prob.grad, log_prob.detach(), 1, log_prob.dtype))

    REFERENCES["aclnnCrossEntropyLossGrad"] = _cross_entropy_grad

    def _multilabel(launch: Launch) -> dict[str, Any]:
        x, target = launch.input(), launch.tensor("target")
        reduction = REDUCTIONS[launch.arg("reduction")]
        loss = functional.multilabel_margin_loss(x, target, reduction=reduction)
        rows = target.reshape(-1, target.shape[-1]) if target.dim() else target.reshape(1, 1)
        is_target = torch.zeros_like(rows, dtype=x.dtype)
        for n, row in enumerate(rows):
            for label in row:
                if label < 0:
                    break
                is_target[n, label] = 1
        return {"out": loss, "isTarget": is_target.reshape(target.shape)}

    REFERENCES["aclnnMultilabelMarginLoss"] = _multilabel

    def _elu_backward(launch: Launch) -> dict[str, Any]:
        g, x = launch.input(), launch.tensor("selfOrResult")
        a, s, i = launch.arg("alpha"), launch.arg("scale"), launch.arg("inputScale")
        negative = i * (x + a * s) if launch.arg("isResult") else i * a * s * torch.exp(x * i)
        return _out(launch, g * torch.where(x > 0, s, negative))

    REFERENCES["aclnnEluBackward"] = _elu_backward
    REFERENCES["aclnnSeluBackward"] = lambda launch: _out(launch, launch.input() * torch.where(
        launch.input(1) > 0, 1.0507009873554805, launch.input(1) + 1.7580993408473766))
    REFERENCES["aclnnPreluBackward"] = lambda launch: dict(zip(
        ("gradInput", "gradWeight"), _prelu_backward(launch)))

    def _prelu_backward(launch: Launch) -> tuple[Any, Any]:
        g, x, w = launch.input(), launch.tensor("self"), launch.tensor("weight")
        shape = [1] * x.dim()
        if w.numel() > 1:
            shape[1] = w.numel()
        slope = w.reshape(shape) if x.dim() else w.reshape(())
        g = torch.broadcast_to(g, x.shape)
        grad_input = torch.where(x > 0, g, g * slope)
        part = torch.where(x > 0, 0.0, g * x)
        if w.numel() > 1:
            grad_weight = part.sum([d for d in range(x.dim()) if d != 1])
        else:
            grad_weight = part.sum().reshape(w.shape)
        return grad_input, grad_weight

    REFERENCES["aclnnLogSigmoidForward"] = lambda launch: {
        "out": functional.logsigmoid(launch.input())}
    REFERENCES["aclnnLogSigmoidBackward"] = _grad_of(functional.logsigmoid, "self")
    REFERENCES["aclnnFastGelu"] = _unary(lambda x: x * torch.sigmoid(1.702 * x))
    REFERENCES["aclnnFastGeluBackward"] = _grad_of(lambda x: x * torch.sigmoid(1.702 * x),
                                                   "self")
    REFERENCES["aclnnGeluBackwardV2"] = _grad_of(
        lambda x, approximate: functional.gelu(x, approximate=approximate), "self",
        "approximate")
    REFERENCES["aclnnHardswishBackwardV2"] = lambda launch: _out(launch, launch.input() * (
        torch.where(launch.input(1) <= -3, 0.0, torch.where(
            launch.input(1) >= 3, 1.0, launch.input(1) / 3 + 0.5))))

    def _shrink(launch: Launch) -> dict[str, Any]:
        x, lambd, bias = launch.input(), launch.arg("lambd"), launch.arg("bias")
        return _out(launch, torch.where(x > lambd, x - bias,
                                        torch.where(x < -lambd, x + bias, x * 0.0)))

    REFERENCES["aclnnShrink"] = _shrink

    def _logit_grad(launch: Launch) -> dict[str, Any]:
        x, dy, eps = launch.tensor("x"), launch.tensor("dy"), launch.arg("eps")
        value = dy / (x * (1 - x))
        if eps >= 0:
            value = torch.where((x < eps) | (x > 1 - eps), 0.0, value)
        else:
            value = torch.where((x < 0) | (x > 1), float("nan"), value)
        return _out(launch, value)

    REFERENCES["aclnnLogitGrad"] = _logit_grad

    def _halves(x: Any, dim: int, interleaved: bool = False) -> tuple[Any, Any]:
        rows = x.reshape(int(np.prod(x.shape[:dim % x.dim()])), -1)
        if interleaved:
            return rows[:, 0::2], rows[:, 1::2]
        return rows.chunk(2, 1)

    def _glu_out(function: Callable[..., Any], dim: Callable[[Launch], int],
                 *others: str) -> Reference:
        """out = function(A, B, *arguments), A and B x's halves at dim."""
        def reference(launch: Launch) -> dict[str, Any]:
            x = launch.input()
            a, b = _halves(x, dim(launch))
            result = function(a, b, *(launch.arg(n) for n in others))
            return _out(launch, result.reshape(launch.results[launch.written[0]].shape))
        return reference

    REFERENCES["aclnnGeluMul"] = _glu_out(
        lambda a, b, approximate: functional.gelu(a, approximate=approximate or "none") * b,
        lambda launch: -1, "approximateOptional")
    REFERENCES["aclnnFatreluMul"] = lambda launch: _out(launch, (lambda a, b: torch.where(
        a < launch.tensor("threshold").reshape(-1)[0], 0.0, a) * b)(
            *_halves(launch.input(), -1)).reshape(launch.results["out"].shape))
    REFERENCES["aclnnSwiGlu"] = _glu_out(lambda a, b: functional.silu(a) * b,
                                         lambda launch: launch.arg("dim"))

    def _ge_glu(left: bool) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            a, b = _halves(launch.input(), launch.arg("dim"))
            left_ = left or bool(launch.arguments.get("activateLeft"))
            gate, other = (a, b) if left_ else (b, a)
            gelu = functional.gelu(gate, approximate="tanh" if launch.arg("approximate") == 1
                                   else "none")
            shape = launch.results["out"].shape
            return {"out": (gelu * other).reshape(shape), "outGelu": gelu.reshape(shape)}
        return reference

    REFERENCES["aclnnGeGlu"] = _ge_glu(False)
    REFERENCES["aclnnGeGluV3"] = _ge_glu(False)

    def _glu_grad(forward: Callable[..., Any], x_name: str, grad: str,
                  *others: str) -> Reference:
        """The gradient of forward(x, launch) with respect to x, applied to grad."""
        def reference(launch: Launch) -> dict[str, Any]:
            x = launch.tensor(x_name).clone().requires_grad_()
            result = forward(x, launch)
            result.backward(launch.tensor(grad).reshape(result.shape))
            return _out(launch, x.grad)
        return reference

    REFERENCES["aclnnSwiGluGrad"] = _glu_grad(
        lambda x, launch: (lambda a, b: functional.silu(a) * b)(
            *_halves(x, launch.arg("dim"))), "x", "yGrad")

    def _ge_glu_backward(launch: Launch) -> dict[str, Any]:
        # the doc's: the activated half by autograd of Gelu, the other gradOutput times the
        # gelu tensor given (ops-nn activation/ge_glu_grad_v2/docs/aclnnGeGluBackward.md)
        x = launch.tensor("self")
        a, b = _halves(x, launch.arg("dim"))
        left = bool(launch.arguments.get("activateLeft"))
        gate, other = ((a, b) if left else (b, a))
        gate = gate.clone().requires_grad_()
        g = launch.tensor("gradOutput").reshape(gate.shape)
        gelu = functional.gelu(gate, approximate="tanh" if launch.arg("approximate") == 1
                               else "none")
        (gelu * other).backward(g)
        d_other = g * launch.tensor("gelu").reshape(gate.shape)
        first, second = (gate.grad, d_other) if left else (d_other, gate.grad)
        return _out(launch, torch.cat([first, second], 1).reshape(x.shape))

    REFERENCES["aclnnGeGluBackward"] = REFERENCES["aclnnGeGluV3Backward"] = _ge_glu_backward

    def _clipped(x: Any, launch: Launch, mode: int = 0) -> Any:
        a, b = _halves(x, launch.arg("dim"), launch.arg("interleaved"))
        limit, alpha, bias = launch.arg("limit"), launch.arg("alpha"), launch.arg("bias")
        b = b.clamp(-limit, limit)
        if mode == 0:
            a = a.clamp(max=limit)
            y = a * torch.sigmoid(alpha * a) * (b + bias)
        else:
            y = functional.silu(a).clamp(max=limit) * b
        index = launch.tensor("groupIndexOptional")
        if index is not None:
            y = y * (torch.arange(y.shape[0]) < int(index.sum())).to(y.dtype)[:, None]
        return y

    REFERENCES["aclnnClippedSwiglu"] = lambda launch: _out(launch, _clipped(
        launch.input(), launch).reshape(launch.results["out"].shape))
    REFERENCES["aclnnClippedSwigluV2"] = lambda launch: _out(launch, _clipped(
        launch.input(), launch, launch.arg("clampMode")).reshape(launch.results["out"].shape))
    REFERENCES["aclnnClippedSwigluGrad"] = _glu_grad(_clipped, "x", "gradY")

    def _situ(x: Any, launch: Launch) -> Any:
        a, b = _halves(x, launch.arg("dim"))
        gate, up = (a, b) if launch.arg("activateLeft") else (b, a)
        beta, linear = launch.arg("beta"), launch.arg("linearBeta")
        if linear > 0:
            up = linear * torch.tanh(up / linear)
        return beta * torch.tanh(gate / beta) * torch.sigmoid(gate) * up

    REFERENCES["aclnnSituGlu"] = lambda launch: _out(launch, _situ(
        launch.input(), launch).reshape(launch.results["out"].shape))
    REFERENCES["aclnnSituGluGrad"] = _glu_grad(_situ, "x", "gradY")

    def _swiglu_group(launch: Launch) -> dict[str, Any]:
        a, b = _halves(launch.input(), -1)
        limit = launch.arg("clampLimit")
        if limit > 0:
            a, b = a.clamp(max=limit), b.clamp(-limit, limit)
        y = functional.silu(a) * b
        weight = launch.tensor("weightOptional")
        if weight is not None:
            y = y * weight.reshape(-1, 1)
        index = launch.tensor("groupIndexOptional")
        if index is not None:
            y = y * (torch.arange(y.shape[0]) < int(index.sum())).to(y.dtype)[:, None]
        return _out(launch, y.reshape(launch.results["out"].shape))

    REFERENCES["aclnnSwigluGroup"] = _swiglu_group

    def _scaled_masked_softmax(launch: Launch) -> dict[str, Any]:
        z = torch.where(launch.tensor("mask").bool(), -10000.0,
                        launch.input() * launch.arg("scale"))
        return _out(launch, torch.softmax(z, -1))

    def _scaled_masked_softmax_backward(launch: Launch) -> dict[str, Any]:
        g, y = launch.input(), launch.tensor("y")
        grad = (g * y - (g * y).sum(-1, keepdim=True) * y) * launch.arg("scale")
        mask = launch.tensor("mask")
        return _out(launch, grad if mask is None else torch.where(mask.bool(), 0.0, grad))

    REFERENCES["aclnnScaledMaskedSoftmax"] = _scaled_masked_softmax
    REFERENCES["aclnnScaledMaskedSoftmaxBackward"] = _scaled_masked_softmax_backward

    def _rrelu(launch: Launch) -> dict[str, Any]:
        """Evaluation: the mean slope; training: out = self times the slopes the kernel wrote
        into noise, each 1 for self >= 0 and in [lower, upper] otherwise (its draws are
        random: checked by their range, not their values)."""
        x, low, high = launch.tensor("self"), launch.arg("lower"), launch.arg("upper")
        written = "out" if "out" in launch.written else "self"
        if not launch.arg("training"):
            return {written: torch.where(x < 0, x * (low + high) / 2, x)}
        noise = _torch(launch.results["noise"]).reshape(-1)[:x.numel()].reshape(x.shape)
        inside = (noise >= low - 1e-6) & (noise <= high + 1e-6)
        slopes = torch.where(x < 0, torch.where(inside, noise, float("nan")), 1.0)
        return {written: x * slopes}

    REFERENCES["aclnnRReluWithNoise"] = REFERENCES["aclnnInplaceRReluWithNoise"] = _rrelu

    def _ctc(launch: Launch) -> dict[str, Any]:
        """PyTorch's _ctc_loss; its log_alpha where it is defined (t below the input length,
        s below 2 L + 1), -inf elsewhere, as the kernel writes it (PyTorch leaves those
        entries unset)."""
        log_probs, targets = launch.input(), launch.tensor("targets")
        inputs, lengths = list(launch.arg("inputLengths")), list(launch.arg("targetlengths"))
        batched = log_probs.dim() == 3
        if not batched:
            log_probs, targets = log_probs[:, None, :], targets.reshape(1, -1)
        nll, alpha = torch.ops.aten._ctc_loss(log_probs, targets, inputs, lengths,
                                              launch.arg("blank"), launch.arg("zeroInfinity"))
        if launch.arg("zeroInfinity"):
            nll = torch.where(torch.isinf(nll), 0.0, nll)
        shape = launch.results["logAlphaOut"].shape
        result = torch.full(shape, float("-inf"), dtype=torch.float64)
        for n, (steps, length) in enumerate(zip(inputs, lengths)):
            result[n, :steps, :2 * length + 1] = alpha[n, :steps, :2 * length + 1]
        return {"negLogLikelihoodOut": nll if batched else nll.reshape(()),
                "logAlphaOut": result}

    REFERENCES["aclnnCtcLoss"] = _ctc
    # ---- optimizers (kernels/optimizers.py): torch.optim's single-tensor functions ----
    from torch.optim import adamw as torch_adamw
    from torch.optim import sgd as torch_sgd

    def _adamw_step(var: Any, m: Any, v: Any, max_sq: Any, grad: Any, step: Any,
                    launch: Launch) -> None:
        """torch.optim.adamw.adamw in place, counting the step itself as CANN's kernels do."""
        amsgrad = launch.arg("amsgrad")
        torch_adamw.adamw(
            [var], [grad], [m], [v], [max_sq] if amsgrad else [],
            [step.reshape(-1)[0].double().clone()], foreach=False, amsgrad=amsgrad,
            beta1=launch.arg("beta1"), beta2=launch.arg("beta2"), lr=launch.arg("lr"),
            weight_decay=launch.arg("weightDecay"), eps=launch.arg("eps"),
            maximize=launch.arg("maximize"))

    def _apply_adam_w_v2(launch: Launch) -> dict[str, Any]:
        var, m, v = launch.tensor("varRef"), launch.tensor("mRef"), launch.tensor("vRef")
        max_sq = launch.tensor("maxGradNormOptionalRef")
        _adamw_step(var, m, v, max_sq, launch.tensor("grad"), launch.tensor("step"), launch)
        found = {"varRef": var, "mRef": m, "vRef": v}
        if launch.arg("amsgrad"):
            found["maxGradNormOptionalRef"] = max_sq
        return found

    def _fused_adamw(launch: Launch) -> dict[str, Any]:
        lists = {name: launch.tensor(name) for name in
                 ("paramsRef", "expAvgsRef", "expAvgSqsRef", "maxExpAvgSqsRef")}
        grads, steps = launch.tensor("grads"), launch.tensor("stateSteps")
        scale, inf = launch.tensor("gradScaleOptional"), launch.tensor("foundInfOptional")
        if inf is None or inf.numel() == 0 or float(inf.reshape(-1)[0]) != 1.0:
            for index, param in enumerate(lists["paramsRef"]):
                grad = grads[index] if scale is None or scale.numel() == 0 else \
                    grads[index] / scale.reshape(-1)[0]
                max_sq = lists["maxExpAvgSqsRef"][index] if launch.arg("amsgrad") else None
                _adamw_step(param, lists["expAvgsRef"][index], lists["expAvgSqsRef"][index],
                            max_sq, grad, steps[index], launch)
        return {f"{name}[{index}]": tensor for name, values in lists.items()
                if values is not None and (name != "maxExpAvgSqsRef" or launch.arg("amsgrad"))
                for index, tensor in enumerate(values)}

    def _fused_sgd(launch: Launch) -> dict[str, Any]:
        params, grads = launch.tensor("paramsRef"), launch.tensor("gradsRef")
        buffers = launch.tensor("momentumBufferListOptionalRef") or None
        scale = launch.tensor("gradScaleOptional")
        if scale is not None and scale.numel():
            grads = [g / scale.reshape(-1)[0] for g in grads]
        given = [None] * len(params) if buffers is None or launch.arg("isFirstStep") else \
            [b.clone() for b in buffers]
        torch_sgd.sgd(params, grads, given, foreach=False,
                            weight_decay=launch.arg("weightDecay"),
                            momentum=launch.arg("momentum"), lr=launch.arg("lr"),
                            dampening=launch.arg("dampening"), nesterov=launch.arg("nesterov"),
                            maximize=launch.arg("maximize"))
        found = {f"paramsRef[{i}]": p for i, p in enumerate(params)}
        found.update({f"gradsRef[{i}]": g for i, g in enumerate(grads)})
        if buffers is not None:
            found.update({f"momentumBufferListOptionalRef[{i}]": b for i, b in enumerate(given)})
        return found

    def _apply_fused_ema_adam(launch: Launch) -> dict[str, Any]:
        """The formula of ops-nn optim/apply_fused_ema_adam/docs/aclnnApplyFusedEmaAdam.md."""
        grad, var = launch.tensor("grad"), launch.tensor("varRef")
        beta1, beta2, decay = launch.arg("beta1"), launch.arg("beta2"), launch.arg("weightDecay")
        step = float(launch.tensor("step").reshape(-1)[0])
        c1, c2 = (1 - beta1 ** step, 1 - beta2 ** step) if launch.arg("biasCorrection") else \
            (1.0, 1.0)
        mode = launch.arg("mode")
        if mode == 0:
            grad = grad + decay * var
        m = beta1 * launch.tensor("mRef") + (1 - beta1) * grad
        v = beta2 * launch.tensor("vRef") + (1 - beta2) * grad * grad
        update = (m / c1) / (torch.sqrt(v / c2) + launch.arg("eps"))
        if mode == 1:
            update = update + decay * var
        var = var - launch.arg("lr") * update
        ema = launch.arg("emaDecay")
        return {"varRef": var, "mRef": m, "vRef": v,
                "sRef": ema * launch.tensor("sRef") + (1 - ema) * var}

    def _amp_update_scale(launch: Launch) -> dict[str, Any]:
        scale = launch.tensor("currentScale").float().clone()
        tracker = launch.tensor("growthTracker").int().clone()
        torch._amp_update_scale_(scale, tracker, launch.tensor("foundInf").float(),
                                 launch.arg("growthFactor"), launch.arg("backoffFactor"),
                                 launch.arg("growthInterval"))
        return {"updatedScale": scale, "updatedGrowthTracker": tracker}

    REFERENCES["aclnnApplyAdamWV2"] = _apply_adam_w_v2
    REFERENCES["aclnnFusedAdamw"] = _fused_adamw
    REFERENCES["aclnnFusedSgd"] = _fused_sgd
    REFERENCES["aclnnApplyFusedEmaAdam"] = _apply_fused_ema_adam
    REFERENCES["aclnnAmpUpdateScale"] = _amp_update_scale
    # ops-math random/drop_out_do_mask: a dropout mask applied (bit i % 8 of byte i // 8 keeps
    # element i), deterministic once the mask is drawn
    def _masked(launch: Launch, scale: float) -> dict[str, Any]:
        x = launch.input()
        mask = launch.tensors["mask"].reshape(-1).astype(np.uint8)
        bits = np.unpackbits(mask, count=x.numel(), bitorder="little").reshape(tuple(x.shape))
        return _out(launch, x * torch.from_numpy(bits.astype(np.float64)) * scale)

    REFERENCES["aclnnDropoutDoMask"] = lambda launch: _masked(
        launch, 1.0 / (1.0 - launch.arg("prob")) if launch.arg("prob") < 1.0 else 0.0)
    REFERENCES["aclnnDropoutBackward"] = lambda launch: _masked(launch, launch.arg("scale"))

    # ops-math math/: enumeration, counting, lookup and list sums (kernels/counting.py)
    def _range(launch: Launch) -> dict[str, Any]:
        count = launch.results[launch.written[0]].size
        start, step = launch.arg("start"), launch.arg("step")
        return _out(launch, start + torch.arange(count, dtype=torch.float64) * step)

    REFERENCES["aclnnRange"] = _range

    def _one_hot(launch: Launch) -> dict[str, Any]:
        x, classes, axis = launch.input(), launch.arg("numClasses"), launch.arg("axis")
        hot = functional.one_hot(x, classes).to(torch.float64)
        on, off = launch.tensor("onValue").reshape(-1)[0], launch.tensor("offValue").reshape(-1)[0]
        result = hot * (on - off) + off
        return _out(launch, result if axis == -1 else torch.movedim(result, -1, axis))

    REFERENCES["aclnnOneHot"] = _one_hot
    REFERENCES["aclnnHistc"] = lambda launch: _out(launch, torch.histc(
        launch.input().double(), launch.arg("bins"), float(launch.arg("min")),
        float(launch.arg("max"))))
    REFERENCES["aclnnSearchSorted"] = lambda launch: _out(launch, torch.searchsorted(
        launch.input(), launch.tensor("self"), right=bool(launch.arg("right")),
        sorter=launch.tensor("sorter")))
    REFERENCES["aclnnSearchSorteds"] = lambda launch: _out(launch, torch.searchsorted(
        launch.input(), torch.tensor([float(launch.arg("self"))], dtype=torch.float64),
        right=bool(launch.arg("right")), sorter=launch.tensor("sorter")))
    REFERENCES["aclnnIsInScalarTensor"] = lambda launch: _out(launch, torch.isin(
        torch.tensor(float(launch.arg("element")), dtype=torch.float64),
        launch.tensor("testElements"), invert=bool(launch.arg("invert"))))
    REFERENCES["aclnnIsInTensorScalar"] = lambda launch: _out(launch, torch.isin(
        launch.input(), torch.tensor(float(launch.arg("testElement")), dtype=torch.float64),
        invert=bool(launch.arg("invert"))))

    def _list_sum(launch: Launch) -> dict[str, Any]:
        tensors = launch.input()
        total = tensors[0]
        for tensor in tensors[1:]:
            total = total + tensor
        return _out(launch, total)

    REFERENCES["aclnnAddN"] = _list_sum
    REFERENCES["aclnnSum"] = _list_sum

    # linear algebra (kernels/linalg.py)
    REFERENCES["aclnnInverse"] = lambda launch: _out(launch, torch.linalg.inv(launch.input()))
    REFERENCES["aclnnLinalgCholesky"] = lambda launch: _out(launch, torch.linalg.cholesky(
        launch.input(), upper=bool(launch.arg("upper"))))

    def _triangular_solve(launch: Launch) -> dict[str, Any]:
        b, a = launch.input(), launch.tensor("A")
        solution, coefficient = torch.triangular_solve(
            b, a, upper=bool(launch.arg("upper")), transpose=bool(launch.arg("transpose")),
            unitriangular=bool(launch.arg("unitriangular")))
        return {"xOut": solution, "mOut": coefficient}

    REFERENCES["aclnnTriangularSolve"] = _triangular_solve

    def _slogdet(launch: Launch) -> dict[str, Any]:
        sign, log = torch.linalg.slogdet(launch.input())
        return {"signOut": sign, "logOut": log}

    REFERENCES["aclnnSlogdet"] = _slogdet
    REFERENCES["aclnnLogdet"] = lambda launch: _out(launch, torch.logdet(launch.input()))

    def _qr(mode: Callable[[Launch], str]) -> Reference:
        def reference(launch: Launch) -> dict[str, Any]:
            q, r = torch.linalg.qr(launch.input(), mode=mode(launch))
            return {"R": r} if mode(launch) == "r" else {"Q": q, "R": r}
        return reference

    REFERENCES["aclnnLinalgQr"] = _qr(lambda launch: ("reduced", "complete", "r")[
        launch.arg("mode")])
    REFERENCES["aclnnQr"] = _qr(lambda launch: "reduced" if launch.arg("some") else "complete")

    def _svd(launch: Launch) -> dict[str, Any]:
        """sigma only: u and v are unique up to the signs of their columns."""
        values = torch.linalg.svdvals(launch.input())
        return {"sigma": values}

    REFERENCES["aclnnSvd"] = _svd

    REFERENCES["aclnnCdist"] = lambda launch: _out(launch, torch.cdist(
        launch.input(), launch.tensor("x2"), p=float(launch.arg("p")),
        compute_mode="donot_use_mm_for_euclid_dist"))

    def _cdist_backward(launch: Launch) -> dict[str, Any]:
        p = float(launch.arg("p"))
        return _out(launch, torch.ops.aten._cdist_backward(
            launch.tensor("grad"), launch.tensor("x1"), launch.tensor("x2"),
            float("inf") if p == -1.0 else p, launch.tensor("cdist")))

    def _bincount(launch: Launch) -> dict[str, Any]:
        """torch.bincount over max(out's size, minlength) bins, values outside not counted."""
        values, weights = launch.tensor("self"), launch.tensor("weights")
        out = launch.results[launch.written[0]]
        size = max(out.shape[0] if out.ndim else 1, int(launch.arg("minlength")))
        inside = (values >= 0) & (values < size)
        counts = torch.bincount(values[inside], None if weights is None else weights[inside],
                                minlength=size)
        return _out(launch, counts[:out.shape[0]])

    REFERENCES["aclnnCdistBackward"] = _cdist_backward

    def _quantize(launch: Launch) -> dict[str, Any]:
        """ops-nn quant/quantize/docs/aclnnQuantize.md: round(x / scales + zeroPoints), ties to
        even (torch.round), saturated into out's dtype."""
        x, scales, zero = launch.tensor("x"), launch.tensor("scales"), launch.tensor("zeroPoints")
        shape = [1] * x.dim()
        if scales.numel() != 1:
            shape[int(launch.arg("axis"))] = scales.numel()
        value = x.float() / scales.float().reshape(shape)
        if zero is not None:
            value = value + zero.float().reshape(shape)
        info = np.iinfo(launch.results[launch.written[0]].dtype)
        return _out(launch, torch.round(value).clamp(info.min, info.max))

    REFERENCES["aclnnQuantize"] = _quantize

    def _scale(launch: Launch) -> dict[str, Any]:
        """ops-math math/scale/docs/aclnnScale.md: y = x scale + bias from axis on."""
        x, scale, bias = launch.tensor("x"), launch.tensor("scale"), launch.tensor("bias")
        start = int(launch.arg("axis")) % x.dim()
        single = scale.numel() == 1 and (
            launch.arg("scaleFromBlob") and int(launch.arg("numAxes")) == 0
            or not launch.arg("scaleFromBlob") and scale.dim() <= 1)
        view = (1,) * x.dim() if single else \
            (1,) * start + tuple(scale.shape) + (1,) * (x.dim() - start - scale.dim())
        y = x * scale.reshape(view)
        return _out(launch, y if bias is None else y + bias.reshape(view))

    def _modulate(launch: Launch) -> dict[str, Any]:
        x = launch.tensor("self")
        b, _, d = x.shape
        scale = launch.tensor("scaleOptional").reshape(b, 1, d)
        return _out(launch, x * (1 + scale) + launch.tensor("shiftOptional").reshape(b, 1, d))

    def _modulate_backward(launch: Launch) -> dict[str, Any]:
        """ops-nn vfusion/modulate_grad/docs/aclnnModulateBackward.md's formulas."""
        g, x = launch.tensor("grad_output"), launch.tensor("input")
        scale, shift = launch.tensor("scale"), launch.tensor("shift")
        b, _, d = g.shape
        found = {"grad_input": g if scale is None else g * scale.reshape(b, 1, d)}
        if scale is not None and "grad_scale" in launch.written:
            found["grad_scale"] = (g * x).sum(1)
        if shift is not None and "grad_shift" in launch.written:
            found["grad_shift"] = g.sum(1)
        return found

    REFERENCES["aclnnScale"] = _scale
    REFERENCES["aclnnModulate"] = _modulate
    REFERENCES["aclnnModulateBackward"] = _modulate_backward
    REFERENCES["aclnnBincount"] = _bincount

    # complex numbers (kernels/complex_numbers.py)
    REFERENCES["aclnnReal"] = lambda launch: _out(launch, torch.real(
        torch.from_numpy(launch.tensors["self"])))
    REFERENCES["aclnnAngleV2"] = lambda launch: _out(launch, torch.angle(
        torch.from_numpy(launch.tensors["x"])))
    REFERENCES["aclnnComplex"] = lambda launch: _out(launch, torch.complex(
        *torch.broadcast_tensors(launch.tensor("real"), launch.tensor("imag"))))
    REFERENCES["aclnnPolar"] = lambda launch: _out(launch, torch.polar(
        *torch.broadcast_tensors(launch.input(), launch.tensor("angle"))))

    # an in-place form as its operator: its first tensor is read and written
    for _name in list(REFERENCES):
        _inplace = _name.replace("aclnn", "aclnnInplace", 1)
        if not _name.startswith(("aclnnInplace", "aclnnForeach")) and _inplace not in REFERENCES:
            REFERENCES[_inplace] = REFERENCES[_name]


def tolerance(dtype: str) -> tuple[float, float]:
    """(rtol, atol) for results of ``dtype``; 0 for exact dtypes."""
    # a complex dtype: the tolerance of its parts' dtype (complex64: two float32)
    dtype = {"complex128": "float64", "complex64": "float32", "complex32": "float16"}.get(
        dtype, dtype)
    return {"float64": (1e-10, 1e-12), "float32": (1e-4, 1e-5), "float16": (2e-3, 1e-3),
            "bfloat16": (1.6e-2, 1e-2)}.get(dtype, (0.0, 0.0))


def _shown(value: Any) -> str:
    """A number as a message shows it: floats with 8 significant digits."""
    item = value.item() if hasattr(value, "item") else value
    if isinstance(item, complex):  # as a sample prints it (std::complex's <<): (real,imag)
        return f"({item.real:.8g},{item.imag:.8g})"
    return f"{item:.8g}" if isinstance(item, float) else str(item)


def compare(launch: Launch) -> str | None:
    """None when the launch's results match PyTorch (or it has no reference), else what
    differs: the tensor, the largest difference and where."""
    reference = REFERENCES.get(launch.operator)
    if reference is None or launch.operator in RANDOM:  # random draws: nothing to judge
        return None
    expected = reference(launch)
    for name, value in expected.items():
        got = launch.results.get(name)
        if got is None:
            continue
        want = np.asarray(value.detach().numpy() if hasattr(value, "detach") else value)
        dtype = launch.dtypes.get(f"after/{name}", got.dtype.name)
        if want.shape != got.shape and want.size == got.size:
            want = want.reshape(got.shape)
        if want.shape != got.shape:
            return f"{name} has shape {got.shape}, PyTorch's {want.shape}"
        rtol, atol = tolerance(dtype)
        if got.dtype.kind == "c" or want.dtype.kind == "c":
            # complex results: the real and the imaginary parts are each compared, as a
            # sample prints both (a real PyTorch value has imaginary part 0)
            want = want.astype(np.complex128)
            got_parts = got.astype(np.complex128)
            bad = ~(np.isclose(got_parts.real, want.real, rtol=rtol, atol=atol, equal_nan=True)
                    & np.isclose(got_parts.imag, want.imag, rtol=rtol, atol=atol,
                                 equal_nan=True))
        elif got.dtype.kind == "f":
            want = want.astype(np.float64)
            bad = ~np.isclose(got.astype(np.float64), want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            bad = got != want.astype(got.dtype)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"{name}[{', '.join(map(str, where))}] is {_shown(got[where])}, PyTorch "
                    f"gives {_shown(want[where])} ({int(bad.sum())} of {bad.size} differ)")
    return None
