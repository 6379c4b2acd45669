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

# The operators whose outputs are random draws (the emulator's kernels/random_fills.py): the
# emulator keeps CANN's seed and offset contract but not its bit stream, so no reference can
# judge their numbers; a sample's launches of them are not compared (tests/ops/
# test_random_fills.py tests them statistically instead).
RANDOM = frozenset({
    "aclnnInplaceNormal", "aclnnInplaceNormalTensor", "aclnnInplaceUniform",
    "aclnnInplaceUniformTensor", "aclnnInplaceRandom", "aclnnInplaceRandomTensor",
    "aclnnBernoulli", "aclnnBernoulliTensor", "aclnnInplaceBernoulli",
    "aclnnInplaceBernoulliTensor", "aclnnNormalFloatFloat", "aclnnNormalFloatTensor",
    "aclnnNormalTensorFloat", "aclnnNormalTensorTensor", "aclnnDropoutGenMask",
    "aclnnDropoutGenMaskV2", "aclnnDropoutGenMaskV2Tensor", "aclnnMultinomial",
    "aclnnMultinomialTensor", "aclnnRandperm"})


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

    def _inplace_add_rms_norm(launch: Launch) -> dict[str, Any]:
        x, gamma = launch.input() + launch.tensor("x2Ref"), launch.tensor("gamma")
        dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
        rstd = torch.rsqrt(x.square().mean(dims, keepdim=True) + launch.arg("epsilon"))
        return {"x1Ref": x * rstd * gamma, "rstdOut": rstd, "x2Ref": x}

    REFERENCES["aclnnInplaceAddRmsNorm"] = _inplace_add_rms_norm
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
    return {"float64": (1e-10, 1e-12), "float32": (1e-4, 1e-5), "float16": (2e-3, 1e-3),
            "bfloat16": (1.6e-2, 1e-2)}.get(dtype, (0.0, 0.0))


def _shown(value: Any) -> str:
    """A number as a message shows it: floats with 8 significant digits."""
    item = value.item() if hasattr(value, "item") else value
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
        if got.dtype.kind in "fc":
            want = want.astype(np.float64)
            bad = ~np.isclose(got.astype(np.float64), want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            bad = got != want.astype(got.dtype)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"{name}[{', '.join(map(str, where))}] is {_shown(got[where])}, PyTorch "
                    f"gives {_shown(want[where])} ({int(bad.sum())} of {bad.size} differ)")
    return None
