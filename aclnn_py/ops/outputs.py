"""The shape and dtype of each output of a call, from its inputs and attributes.

``aclnn_py.call`` allocates an operator's outputs with these rules when no ``out=`` is given,
on CANN and on the emulator alike. One rule per operator, written once: a pattern where one
fits (the reductions over dims with keepdim, the matmul family, gathers, the norms and their
saved statistics, pools and convolutions), a short function where a formula is needed. The
shapes are those of CANN's docs for each operator (``docs/aclnn<Name>.md`` of hicann's
ops-nn and ops-math) and of PyTorch's operators of the same name; ``tests/ops/
test_output_rules.py`` checks every rule against the emulator's kernels' test cases, whose
outputs are PyTorch's.

A rule takes the call's values by C parameter name (arrays, or anything with ``.shape`` and
``.dtype``, for tensors; lists of them for tensor lists; the Python values given for the
other parameters) and gives the layout of each output parameter it knows by name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

INT64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)


@dataclass(frozen=True, slots=True)
class OutputLayout:
    """The shape and dtype an output parameter gets."""

    shape: tuple[int, ...]
    dtype: np.dtype


Values = Mapping[str, Any]
Rule = Callable[[Values], dict[str, OutputLayout]]
RULES: dict[str, Rule] = {}


class OutputNeedsOut(TypeError):
    """An output no rule can give: its extent depends on the data (or on how CANN is to be
    called), so the caller passes ``out=``."""


# Operators whose outputs' extents follow from the data, not from the inputs' shapes and the
# attributes: (the output named in the message, why). call() cannot allocate them; those whose
# real extents CANN writes back (aclnnNonzero, aclnnUnique, ...) are call()'s own DATA_DEPENDENT
# list instead. Rules below raise the same error for the calls of theirs that depend on data.
DEPENDS_ON_DATA: dict[str, tuple[str, str]] = {
    "aclnnEmbeddingBag": ("output", "the bags, offset2bag, bagSize and maxIndices follow the "
                          "mode and the values of offsets"),
}


def needs_out(operator: str, name: str, why: str) -> OutputNeedsOut:
    """The error of an output ``name`` of ``operator`` that no rule gives, ``why``."""
    return OutputNeedsOut(f"{operator}: {name} cannot be inferred ({why}); pass out= with an "
                          f"array for {name} of the shape and dtype CANN's doc of {operator} "
                          f"gives (signature({operator!r}) lists its outputs)")


def infer(operator: str, values: Values) -> dict[str, OutputLayout] | None:
    """The outputs' layouts of a call of ``operator`` with ``values`` (by C parameter name),
    or None when no rule is known. A rule whose values do not fit (a dim out of range, a
    missing tensor) gives None too: the call's own checks then say what is wrong.

    Raises
    ------
    OutputNeedsOut
        for an operator of :data:`DEPENDS_ON_DATA`, or a call whose outputs depend on its
        data: the message names the output and says to pass ``out=`` with its shape and
        dtype.
    """
    if operator in DEPENDS_ON_DATA:
        raise needs_out(operator, *DEPENDS_ON_DATA[operator])
    rule = RULES.get(operator)
    if rule is None:
        return None
    try:
        return rule(values)
    except OutputNeedsOut:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, ZeroDivisionError):
        return None


def _rule(*names: str) -> Callable[[Rule], Rule]:
    def register(function: Rule) -> Rule:
        for name in names:
            RULES[name] = function
        return function
    return register


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(int(n) for n in value.shape)


def _dtype(value: Any, default: Any) -> np.dtype:
    """An ``aclDataType`` attribute as given (a numpy dtype or anything numpy.dtype takes),
    or ``default`` when it is None."""
    found: np.dtype = np.dtype(default) if value is None else np.dtype(value)
    return found


def _axes(ndim: int, dims: Any) -> tuple[int, ...]:
    """Reduction axes: every dimension for None or an empty list (CANN's reductions reduce
    all then); negative dims count from the end."""
    if dims is None:
        return tuple(range(ndim))
    listed = [int(d) for d in (dims if isinstance(dims, (list, tuple)) else [dims])]
    if not listed:
        return tuple(range(ndim))
    span = max(ndim, 1)
    for d in listed:
        if not -span <= d < span:
            raise ValueError(f"dim {d} out of range")
    return tuple(sorted({d % span for d in listed if d % span < ndim}))


def _reduced(shape: tuple[int, ...], axes: tuple[int, ...], keep: bool) -> tuple[int, ...]:
    if keep:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


# ---- reductions over dims ---------------------------------------------------------------

def _reduction(dim: str | None, keep: str | None, dtype: str | None = None,
               outputs: Sequence[tuple[str, str]] = (("out", "self"),),
               source: str = "self") -> Rule:
    """A reduction of ``source`` over the dims ``dim`` (None: all), keeping them when the
    attribute ``keep`` is true; each output (name, "self" | "int64" | "bool") of the
    reduced shape and that dtype, or of the ``dtype`` attribute when given."""
    def rule(values: Values) -> dict[str, OutputLayout]:
        x = values[source]
        shape = _shape(x)
        axes = _axes(len(shape), values.get(dim) if dim else None)
        reduced = _reduced(shape, axes, bool(values.get(keep)) if keep else False)
        kinds = {"self": _dtype(values.get(dtype) if dtype else None, x.dtype),
                 "int64": INT64, "bool": BOOL}
        return {name: OutputLayout(reduced, kinds[kind]) for name, kind in outputs}
    return rule


RULES.update({
    "aclnnReduceSum": _reduction("dims", "keepDims", "dtype"),
    "aclnnMean": _reduction("dim", "keepDim", "dtype"),
    "aclnnReduceNansum": _reduction("dim", "keepDim", "dtype"),
    "aclnnAmax": _reduction("dim", "keepDim"),
    "aclnnAmin": _reduction("dim", "keepDim"),
    "aclnnLogSumExp": _reduction("dim", "keepDim"),
    "aclnnArgMax": _reduction("dim", "keepdim", outputs=(("out", "int64"),)),
    "aclnnArgMin": _reduction("dim", "keepdim", outputs=(("out", "int64"),)),
    "aclnnMaxDim": _reduction("dim", "keepdim", outputs=(("out", "self"), ("indices", "int64"))),
    "aclnnMinDim": _reduction("dim", "keepdim", outputs=(("out", "self"), ("indices", "int64"))),
    "aclnnKthvalue": _reduction("dim", "keepdim",
                                outputs=(("valuesOut", "self"), ("indicesOut", "int64"))),
    "aclnnMedianDim": _reduction("dim", "keepDim",
                                 outputs=(("valuesOut", "self"), ("indicesOut", "int64"))),
    "aclnnNanMedianDim": _reduction("dim", "keepDim",
                                    outputs=(("valuesOut", "self"), ("indicesOut", "int64"))),
    "aclnnMedian": _reduction(None, None, outputs=(("valuesOut", "self"),)),
    "aclnnNanMedian": _reduction(None, None),
    "aclnnMax": _reduction(None, None),
    "aclnnMin": _reduction(None, None),
    "aclnnProd": _reduction(None, None, "dtype"),
    "aclnnProdDim": _reduction("dim", "keepDim", "dtype"),
    "aclnnVar": _reduction("dim", "keepdim"),
    "aclnnStd": _reduction("dim", "keepdim"),
    "aclnnNorm": _reduction("dim", "keepdim"),
    "aclnnLinalgVectorNorm": _reduction("dims", "keepDims", "dtype"),
    "aclnnAll": _reduction("dim", "keepdim", outputs=(("out", "bool"),)),
    "aclnnAny": _reduction("dim", "keepdim", outputs=(("out", "bool"),)),
    "aclnnAminmax": _reduction("dim", "keepDim",
                               outputs=(("minOut", "self"), ("maxOut", "self"))),
    "aclnnAminmaxDim": _reduction("dim", "keepDim",
                                  outputs=(("minOut", "self"), ("maxOut", "self"))),
    "aclnnAminmaxAll": _reduction(None, None, outputs=(("minOut", "self"), ("maxOut", "self"))),
    "aclnnVarMean": _reduction("dim", "keepdim",
                               outputs=(("varOut", "self"), ("meanOut", "self"))),
    "aclnnStdMeanCorrection": _reduction("dim", "keepdim",
                                         outputs=(("stdOut", "self"), ("meanOut", "self"))),
})


@_rule("aclnnCumsum", "aclnnCumsumV2", "aclnnCumprod")
def _cumulative(values: Values) -> dict[str, OutputLayout]:
    x = values.get("self", values.get("input"))
    return {"out": OutputLayout(_shape(x), _dtype(values.get("dtype"), x.dtype))}


@_rule("aclnnCummax", "aclnnCummin")
def _cumulative_extremum(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    return {"valuesOut": OutputLayout(_shape(x), x.dtype),
            "indicesOut": OutputLayout(_shape(x), INT64)}


@_rule("aclnnGlobalAveragePool", "aclnnGlobalMaxPool")
def _global_pool(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    shape = _shape(x)
    return {"out": OutputLayout(shape[:2] + (1,) * (len(shape) - 2), x.dtype)}


@_rule("aclnnEqual")
def _equal(values: Values) -> dict[str, OutputLayout]:
    return {"out": OutputLayout((1,), BOOL)}


# ---- the matmul family -------------------------------------------------------------------

def _matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's (and torch.matmul's) product shape: 1-d operands promoted and squeezed back,
    batch dims broadcast."""
    if not a or not b:
        raise ValueError("matmul of a 0-d operand")
    left = (1,) + a if len(a) == 1 else a
    right = b + (1,) if len(b) == 1 else b
    if left[-1] != right[-2]:
        raise ValueError("inner dims differ")
    batch = np.broadcast_shapes(left[:-2], right[:-2])
    shape = (*batch, left[-2], right[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    return tuple(int(n) for n in shape)


def _matmul(first: str, second: str) -> Rule:
    def rule(values: Values) -> dict[str, OutputLayout]:
        a, b = values[first], values[second]
        return {"out": OutputLayout(_matmul_shape(_shape(a), _shape(b)), a.dtype)}
    return rule


RULES.update({
    "aclnnMatmul": _matmul("self", "mat2"),
    "aclnnMm": _matmul("self", "mat2"),
    "aclnnBatchMatMul": _matmul("self", "mat2"),
    "aclnnMv": _matmul("self", "vec"),
    "aclnnDot": _matmul("self", "tensor"),
    "aclnnAddmm": _matmul("mat1", "mat2"),
    "aclnnBaddbmm": _matmul("batch1", "batch2"),
})


@_rule("aclnnGemm")
def _gemm(values: Values) -> dict[str, OutputLayout]:
    a, b = _shape(values["A"]), _shape(values["B"])
    rows = a[1] if values.get("transA") else a[0]
    columns = b[0] if values.get("transB") else b[1]
    return {"out": OutputLayout((rows, columns), values["A"].dtype)}


@_rule("aclnnGer", "aclnnAddr")
def _outer(values: Values) -> dict[str, OutputLayout]:
    first = values["vec1"] if "vec1" in values else values["self"]
    return {"out": OutputLayout((_shape(first)[0], _shape(values["vec2"])[0]), first.dtype)}


# ---- gathers, joins and layouts ------------------------------------------------------------

@_rule("aclnnIndex")
def _index(values: Values) -> dict[str, OutputLayout]:
    """self[indices] with integer indices, numpy's (and PyTorch's) advanced indexing: the
    indices broadcast together; an empty one (and each dimension past them) keeps self's
    dimension; the broadcast shape takes the indexed dimensions' place when they are
    adjacent, else it comes first (ops-nn index/index/op_api/aclnn_index.cpp
    CalculateOutputShapeAndTransposeFlag: out has indices' rank + self's - the number indexed;
    GetTransposedOutputShape). A bool or uint8 index selects as many elements as it holds
    true values: its out is the caller's."""
    x, indices = values["self"], list(values["indices"])
    if any(np.dtype(i.dtype).kind in "bu" for i in indices):
        raise needs_out("aclnnIndex", "out", "a bool index selects as many elements as it "
                        "holds true values")
    shape = _shape(x)
    if len(indices) > len(shape):
        raise ValueError("more indices than self has dimensions")
    indexed = [d for d, i in enumerate(indices) if int(np.prod(_shape(i))) != 0]
    broadcast = np.broadcast_shapes(*(_shape(indices[d]) for d in indexed)) if indexed else ()
    kept = [n for d, n in enumerate(shape) if d not in indexed]
    if indexed and indexed == list(range(indexed[0], indexed[-1] + 1)):
        result = shape[:indexed[0]] + tuple(broadcast) + shape[indexed[-1] + 1:]
    else:
        result = tuple(broadcast) + tuple(kept)
    return {"out": OutputLayout(result, x.dtype)}


@_rule("aclnnIndexSelect")
def _index_select(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    shape = list(_shape(x))
    if shape:
        shape[_axes(len(shape), values["dim"])[0]] = math.prod(_shape(values["index"]))
    return {"out": OutputLayout(tuple(shape), x.dtype)}


@_rule("aclnnGatherV2")
def _gather_v2(values: Values) -> dict[str, OutputLayout]:
    """ops-nn index/gather_v2/op_api/aclnn_gather_v2.cpp CheckOutShape: self's shape with dim
    replaced by index's (a 0-d index counting as (1,)); a 0-d self gives a 0-d out."""
    x, index = values["self"], values["index"]
    shape = _shape(x)
    if not shape:
        return {"out": OutputLayout((), x.dtype)}
    axis = _axes(len(shape), values["dim"])[0]
    return {"out": OutputLayout(shape[:axis] + (_shape(index) or (1,)) + shape[axis + 1:],
                                x.dtype)}


@_rule("aclnnGather", "aclnnTake")
def _gather(values: Values) -> dict[str, OutputLayout]:
    return {"out": OutputLayout(_shape(values["index"]), values["self"].dtype)}


@_rule("aclnnEmbedding")
def _embedding(values: Values) -> dict[str, OutputLayout]:
    weight = values["weight"]
    return {"out": OutputLayout(_shape(values["indices"]) + _shape(weight)[1:], weight.dtype)}


@_rule("aclnnCat")
def _cat(values: Values) -> dict[str, OutputLayout]:
    tensors = [t for t in values["tensors"] if _shape(t) != (0,)]  # 1-d empties are skipped
    first = tensors[0] if tensors else values["tensors"][0]
    shape = list(_shape(first))
    axis = _axes(len(shape), values["dim"])[0]
    shape[axis] = sum(_shape(t)[axis] for t in tensors)
    return {"out": OutputLayout(tuple(shape), first.dtype)}


@_rule("aclnnStack")
def _stack(values: Values) -> dict[str, OutputLayout]:
    tensors = values["tensors"]
    shape = list(_shape(tensors[0]))
    dim = int(values["dim"])
    axis = dim % (len(shape) + 1)
    shape.insert(axis, len(tensors))
    return {"out": OutputLayout(tuple(shape), tensors[0].dtype)}


@_rule("aclnnPermute")
def _permute(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    shape = _shape(x)
    return {"out": OutputLayout(tuple(shape[int(d) % len(shape)] for d in values["dims"]),
                                x.dtype)}


@_rule("aclnnExpand")
def _expand(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    return {"out": OutputLayout(tuple(int(n) for n in values["size"]), x.dtype)}


@_rule("aclnnRepeat")
def _repeat(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    repeats = [int(n) for n in values["repeats"]]
    shape = (1,) * (len(repeats) - len(_shape(x))) + _shape(x)
    return {"out": OutputLayout(tuple(n * r for n, r in zip(shape, repeats)), x.dtype)}


@_rule("aclnnConstantPadNd")
def _constant_pad(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    shape = list(_shape(x))
    pad = [int(p) for p in values["pad"]]
    for pair in range(len(pad) // 2):
        shape[-1 - pair] += pad[2 * pair] + pad[2 * pair + 1]
    return {"out": OutputLayout(tuple(shape), x.dtype)}


@_rule("aclnnSort")
def _sort(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    return {"valuesOut": OutputLayout(_shape(x), x.dtype),
            "indicesOut": OutputLayout(_shape(x), INT64)}


@_rule("aclnnArgsort")
def _argsort(values: Values) -> dict[str, OutputLayout]:
    return {"out": OutputLayout(_shape(values["self"]), INT64)}


@_rule("aclnnTopk")
def _topk(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    shape = list(_shape(x))
    if shape:
        shape[_axes(len(shape), values["dim"])[0]] = int(values["k"])
    return {"valuesOut": OutputLayout(tuple(shape), x.dtype),
            "indicesOut": OutputLayout(tuple(shape), INT64)}


# ---- norms and their saved statistics ------------------------------------------------------

@_rule("aclnnLayerNorm")
def _layer_norm(values: Values) -> dict[str, OutputLayout]:
    x = values["input"]
    shape = _shape(x)
    kept = len(shape) - len(values["normalizedShape"])
    statistics = shape[:kept] + (1,) * (len(shape) - kept)
    return {"out": OutputLayout(shape, x.dtype),
            "meanOutOptional": OutputLayout(statistics, x.dtype),
            "rstdOutOptional": OutputLayout(statistics, x.dtype)}


@_rule("aclnnRmsNorm", "aclnnGemmaRmsNorm")
def _rms_norm(values: Values) -> dict[str, OutputLayout]:
    x = values["x"]
    shape = _shape(x)
    kept = len(shape) - len(_shape(values["gamma"]))
    statistics = shape[:kept] + (1,) * (len(shape) - kept)
    return {"yOut": OutputLayout(shape, x.dtype),
            "rstdOut": OutputLayout(statistics, np.dtype(np.float32))}


@_rule("aclnnGroupNorm")
def _group_norm(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    statistics = (int(values["N"]), int(values["group"]))
    return {"out": OutputLayout(_shape(x), x.dtype),
            "meanOut": OutputLayout(statistics, x.dtype),
            "rstdOut": OutputLayout(statistics, x.dtype)}


@_rule("aclnnBatchNorm")
def _batch_norm(values: Values) -> dict[str, OutputLayout]:
    x = values["input"]
    channels = (_shape(x)[1],)
    return {"output": OutputLayout(_shape(x), x.dtype),
            "saveMean": OutputLayout(channels, np.dtype(np.float32)),
            "saveInvstd": OutputLayout(channels, np.dtype(np.float32))}


@_rule("aclnnSoftmaxCrossEntropyWithLogits")
def _softmax_cross_entropy(values: Values) -> dict[str, OutputLayout]:
    features = values["features"]
    return {"loss": OutputLayout(_shape(features)[:1], features.dtype),
            "backprop": OutputLayout(_shape(features), features.dtype)}


# ---- windows: pools and convolutions --------------------------------------------------------

def _pairs(value: Any, count: int, default: int) -> tuple[int, ...]:
    """An IntArray attribute of one value per spatial dim, or one value for all of them."""
    items = [int(v) for v in (value if value is not None else ())]
    if not items:
        return (default,) * count
    return tuple(items) * count if len(items) == 1 else tuple(items[-count:])


def _window_extent(size: int, kernel: int, stride: int, pad: int, dilation: int,
                   ceil: bool) -> int:
    """Output extent of a pooling window (PyTorch's pooling_output_shape: with ceilMode the
    last window must start inside the input or its left padding)."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    extent = (span + (stride - 1 if ceil else 0)) // stride + 1
    if ceil and (extent - 1) * stride >= size + pad:
        extent -= 1
    return extent


def _pool(kernel: str, stride: str, padding: str, dilation: str | None,
          indices: np.dtype | None, dims: int = 2) -> Rule:
    """A pool over the last ``dims`` dims; max pools' ``indices`` of that dtype."""
    def rule(values: Values) -> dict[str, OutputLayout]:
        x = values["self"]
        shape = _shape(x)
        kernels = _pairs(values[kernel], dims, 1)
        strides = _pairs(values[stride], dims, 0)
        strides = tuple(s or k for s, k in zip(strides, kernels))
        pads = _pairs(values[padding], dims, 0)
        dilations = _pairs(values[dilation], dims, 1) if dilation else (1,) * dims
        ceil = bool(values.get("ceilMode"))
        spatial = tuple(_window_extent(n, k, s, p, d, ceil) for n, k, s, p, d in
                        zip(shape[-dims:], kernels, strides, pads, dilations))
        result = {"out": OutputLayout(shape[:-dims] + spatial, x.dtype)}
        if indices is not None:
            result["indices"] = OutputLayout(shape[:-dims] + spatial, indices)
        return result
    return rule


RULES.update({
    # indices INT32 or INT64 (ops-nn aclnnMaxPool2dWithIndices.md): int64, PyTorch's
    "aclnnMaxPool2dWithIndices": _pool("kernelSize", "stride", "padding", "dilation", INT64),
    "aclnnAvgPool2d": _pool("kernelSize", "strides", "paddings", None, None),
    # indices INT32 (ops-nn aclnnMaxPool3dWithArgmax.md)
    "aclnnMaxPool3dWithArgmax": _pool("kernelSize", "stride", "padding", "dilation",
                                      np.dtype(np.int32), 3),
    "aclnnAvgPool3d": _pool("kernelSize", "stride", "padding", None, None, 3),
})


@_rule("aclnnAdaptiveAvgPool2d")
def _adaptive_pool(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    size = tuple(int(n) for n in values["outputSize"])
    return {"out": OutputLayout(_shape(x)[:-2] + size, x.dtype)}


def _c_div(a: int, b: int) -> int:
    """C's integer division (towards zero), as CANN's shape arithmetic does it."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b > 0) else -quotient


@_rule("aclnnConvolution")
def _convolution(values: Values) -> dict[str, OutputLayout]:
    """(N, C out, spatial...) of input (N, C, spatial...) and weight (C out, C in / groups,
    kernel...), as ops-nn conv/convolution_forward/op_host/op_api/aclnn_convolution.cpp
    ConvEngine::InferShape computes it (C's integer division): 1-d and 2-d convolutions (2-d
    transposed ones too) take one padding per spatial dim or a (before, after) pair each; a
    transposed one has C out = weight's C times groups. A kernel reading a channel-last
    tensor passes it as (N, C, spatial...)."""
    x, weight = values["input"], values["weight"]
    shape, kernel = _shape(x), _shape(weight)
    rank, spatial = len(shape), len(shape) - 2
    transposed = bool(values.get("transposed"))
    strides = _pairs(values["stride"], spatial, 1)
    dilations = _pairs(values["dilation"], spatial, 1)
    padding = [int(p) for p in (values["padding"] or ())]
    if len(padding) == 2 * spatial and (rank == 3 and not transposed or rank == 4):
        pads = tuple(padding[2 * i] + padding[2 * i + 1] for i in range(spatial))
    else:
        pads = tuple(2 * p for p in _pairs(padding, spatial, 0))
    groups = int(values["groups"])
    if transposed:
        extra = _pairs(values.get("outputPadding"), spatial, 0)
        sizes = tuple((n - 1) * s - p + d * (k - 1) + e + 1 for n, s, p, d, k, e in
                      zip(shape[2:], strides, pads, dilations, kernel[2:], extra))
        channels = kernel[1] * groups
    else:
        sizes = tuple(_c_div(n + p - d * (k - 1) - 1, s) + 1 for n, s, p, d, k in
                      zip(shape[2:], strides, pads, dilations, kernel[2:]))
        channels = kernel[0]
    return {"output": OutputLayout((shape[0], channels, *sizes), x.dtype)}


# ---- outputs like an input -------------------------------------------------------------------

def _like(dtype: np.dtype | None = None, **outputs: str) -> Rule:
    """Each output (keyword) of the shape, and the dtype (else ``dtype``), of the input named
    (value): the backward operators' gradients, the scatters and index updates."""
    def rule(values: Values) -> dict[str, OutputLayout]:
        return {name: OutputLayout(_shape(values[source]),
                                   values[source].dtype if dtype is None else dtype)
                for name, source in outputs.items()}
    return rule


RULES.update({
    **{f"aclnn{name}": _like(out="self") for name in (
        "AdaptiveAvgPool2dBackward", "AdaptiveAvgPool3dBackward", "GluBackward",
        "IndexAdd", "IndexAddV2", "IndexFill", "Scatter", "ScatterAdd", "ScatterReduce",
        "ScatterValue", "Prelu", "NLLLossBackward", "MaxUnpool2dBackward",
        "MaxUnpool3dBackward")},
    **{f"aclnn{name}": _like(gradInput="self") for name in (
        "AdaptiveMaxPool2dBackward", "AdaptiveMaxPool3dBackward", "AvgPool2dBackward",
        "MaxPool2dWithIndicesBackward", "MaxPool2dWithMaskBackward",
        "MaxPool3dWithArgmaxBackward", "CircularPad2dBackward", "CircularPad3dBackward",
        "ReflectionPad1dBackward", "ReflectionPad2dBackward", "ReflectionPad3dBackward",
        "ReplicationPad1dBackward", "ReplicationPad2dBackward", "ReplicationPad3dBackward")},
    "aclnnAvgPool3dBackward": _like(output="self"),
    "aclnnIndexCopy": _like(outRef="selfRef"),
    "aclnnScatterNd": _like(out="data"),
    "aclnnIsInf": _like(BOOL, out="x"),
    **{f"aclnn{name}": _like(BOOL, out="self") for name in (
        "IsFinite", "IsPosInf", "IsNegInf", "LogicalNot", "Signbit",
        "EqScalar", "NeScalar", "GeScalar", "GtScalar", "LeScalar", "LtScalar")},
})


def _broadcast(dtype: np.dtype | None, *inputs: str) -> Rule:
    """One output ``out``: the broadcast shape of ``inputs``, of ``dtype`` (else the
    first input's)."""
    def rule(values: Values) -> dict[str, OutputLayout]:
        shape = tuple(int(n) for n in np.broadcast_shapes(*(_shape(values[n]) for n in inputs)))
        return {"out": OutputLayout(shape, values[inputs[0]].dtype if dtype is None else dtype)}
    return rule


RULES.update({
    **{f"aclnn{name}Tensor": _broadcast(BOOL, "self", "other")
       for name in ("Eq", "Ne", "Ge", "Gt", "Le", "Lt")},
    "aclnnIsClose": _broadcast(BOOL, "self", "other"),
    "aclnnSWhere": _broadcast(None, "self", "other", "condition"),
})


@_rule("aclnnCast")
def _cast(values: Values) -> dict[str, OutputLayout]:
    return {"out": OutputLayout(_shape(values["self"]), np.dtype(values["dtype"]))}


@_rule("aclnnMaxV2", "aclnnMeanV2", "aclnnReduceLogSum")
def _reduction_v2(values: Values) -> dict[str, OutputLayout]:
    """ONNX-style reductions: an empty dims list reduces nothing when ``noop...`` is set."""
    x = values.get("self", values.get("data"))
    dims = values.get("dims", values.get("dim", values.get("axes")))
    keep = values.get("keepDims", values.get("keepDim"))
    noop = values.get("noopWithEmptyDims", values.get("noopWithEmptyAxes"))
    name = "reduce" if "data" in values else "out"
    if not dims and noop:
        return {name: OutputLayout(_shape(x), x.dtype)}
    return {name: OutputLayout(_reduced(_shape(x), _axes(len(_shape(x)), dims), bool(keep)),
                               x.dtype)}


def _pad(values: Values) -> dict[str, OutputLayout]:
    """The pads: ``padding`` pairs (left, right) from the last dimension."""
    x = values["self"]
    shape = list(_shape(x))
    pad = [int(p) for p in values["padding"]]
    for pair in range(len(pad) // 2):
        shape[-1 - pair] += pad[2 * pair] + pad[2 * pair + 1]
    return {"out": OutputLayout(tuple(shape), x.dtype)}


for _name in ("ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
              "ReplicationPad2d", "ReplicationPad3d", "CircularPad2d", "CircularPad3d"):
    RULES[f"aclnn{_name}"] = _pad


def _adaptive(indices: np.dtype | None) -> Rule:
    """Adaptive pools: ``outputSize`` replaces the spatial dims; max pools' indices of
    ``indices``' dtype."""
    def rule(values: Values) -> dict[str, OutputLayout]:
        x = values["self"]
        size = tuple(int(n) for n in values["outputSize"])
        shape = _shape(x)[:len(_shape(x)) - len(size)] + size
        if indices is None:
            return {"out": OutputLayout(shape, x.dtype)}
        return {"outputOut": OutputLayout(shape, x.dtype),
                "indicesOut": OutputLayout(shape, indices)}
    return rule


RULES.update({"aclnnAdaptiveAvgPool3d": _adaptive(None),
              "aclnnAdaptiveMaxPool2d": _adaptive(INT64),
              # the Atlas A2 and A3 take no INT64 indicesOut (ops-nn aclnnAdaptiveMaxPool3d.md)
              "aclnnAdaptiveMaxPool3d": _adaptive(np.dtype(np.int32))})


@_rule("aclnnConvolutionBackward")
def _convolution_backward(values: Values) -> dict[str, OutputLayout]:
    grad = values["gradOutput"]
    return {"gradInput": OutputLayout(_shape(values["input"]), values["input"].dtype),
            "gradWeight": OutputLayout(_shape(values["weight"]), values["weight"].dtype),
            "gradBias": OutputLayout(_shape(grad)[1:2], grad.dtype)}


@_rule("aclnnAddRmsNorm")
def _add_rms_norm(values: Values) -> dict[str, OutputLayout]:
    layouts = _rms_norm({"x": values["x1"], "gamma": values["gamma"]})
    return {**layouts, "xOut": OutputLayout(_shape(values["x1"]), values["x1"].dtype)}


@_rule("aclnnGlu")
def _glu(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    shape = list(_shape(x))
    axis = _axes(len(shape), values["dim"])[0]
    shape[axis] //= 2
    return {"out": OutputLayout(tuple(shape), x.dtype)}


@_rule("aclnnEmbeddingDenseBackward")
def _embedding_backward(values: Values) -> dict[str, OutputLayout]:
    grad = values["grad"]
    return {"out": OutputLayout((int(values["numWeights"]), _shape(grad)[-1]), grad.dtype)}


@_rule("aclnnDiag")
def _diag(values: Values) -> dict[str, OutputLayout]:
    x, k = values["self"], int(values["diagonal"])
    shape = _shape(x)
    if len(shape) == 1:
        n = shape[0] + abs(k)
        return {"out": OutputLayout((n, n), x.dtype)}
    rows, columns = shape
    length = min(rows, columns - k) if k >= 0 else min(rows + k, columns)
    return {"out": OutputLayout((max(length, 0),), x.dtype)}


@_rule("aclnnFlatten")
def _flatten(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    shape = _shape(x)
    axis = int(values["axis"]) % max(len(shape), 1) if shape else 0
    return {"out": OutputLayout((math.prod(shape[:axis]), math.prod(shape[axis:])), x.dtype)}


@_rule("aclnnSlice")
def _slice(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    shape = list(_shape(x))
    axis = _axes(len(shape), values["dim"])[0]
    shape[axis] = len(range(*slice(int(values["start"]), int(values["end"]),
                                   int(values["step"])).indices(shape[axis])))
    return {"out": OutputLayout(tuple(shape), x.dtype)}


@_rule("aclnnNLLLoss")
def _nll_loss(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    out = _shape(values["target"]) if int(values["reduction"]) == 0 else ()
    return {"out": OutputLayout(out, x.dtype), "totalWeightOut": OutputLayout((), x.dtype)}


@_rule("aclnnBinaryCrossEntropy")
def _binary_cross_entropy(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    return {"out": OutputLayout(_shape(x) if int(values["reduction"]) == 0 else (), x.dtype)}


@_rule("aclnnMaxN", "aclnnMinN")
def _extremum_of_list(values: Values) -> dict[str, OutputLayout]:
    tensors = values["tensors"]
    shape = tuple(int(n) for n in np.broadcast_shapes(*(_shape(t) for t in tensors)))
    return {"out": OutputLayout(shape, tensors[0].dtype)}


@_rule("aclnnEye")
def _eye(values: Values) -> dict[str, OutputLayout]:
    n = int(values["n"])
    m = n if values.get("m") is None else int(values["m"])
    return {"out": OutputLayout((n, m), np.dtype(np.float32))}


@_rule("aclnnLinspace")
def _linspace(values: Values) -> dict[str, OutputLayout]:
    return {"out": OutputLayout((int(values["steps"]),), np.dtype(np.float32))}


@_rule("aclnnArange")
def _arange(values: Values) -> dict[str, OutputLayout]:
    start, end, step = (values[name] for name in ("start", "end", "step"))
    count = max(math.ceil((float(end) - float(start)) / float(step)), 0)
    floats = any(isinstance(v, float) or getattr(v, "dtype", INT64).kind == "f"
                 for v in (start, end, step))
    return {"out": OutputLayout((count,), np.dtype(np.float32) if floats else INT64)}


def _quant(values: Values) -> dict[str, OutputLayout]:
    """AscendQuant(V3) and AscendAntiQuant: y of x's shape in ``dstType`` (an aclDataType
    value)."""
    from .dtypes import numpy_dtype

    dtype = numpy_dtype(int(values["dstType"]))
    if dtype is None:
        raise ValueError("dstType has no numpy dtype")
    return {"y": OutputLayout(_shape(values["x"]), dtype)}


for _name in ("AscendQuant", "AscendQuantV3", "AscendAntiQuant"):
    RULES[f"aclnn{_name}"] = _quant


@_rule("aclnnBatchNormBackward")
def _batch_norm_backward(values: Values) -> dict[str, OutputLayout]:
    x, weight = values["input"], values.get("weight")
    channels = (_shape(x)[1],)
    dtype = x.dtype if weight is None else weight.dtype
    return {"gradInput": OutputLayout(_shape(x), x.dtype),
            "gradWeight": OutputLayout(channels, dtype),
            "gradBias": OutputLayout(channels, dtype)}


@_rule("aclnnGroupNormBackward")
def _group_norm_backward(values: Values) -> dict[str, OutputLayout]:
    x, gamma = values["input"], values["gamma"]
    channels = (int(values["C"]),)
    return {"gradInput": OutputLayout(_shape(x), x.dtype),
            "gradGammaOut": OutputLayout(channels, gamma.dtype),
            "gradBetaOut": OutputLayout(channels, gamma.dtype)}


@_rule("aclnnLayerNormBackward")
def _layer_norm_backward(values: Values) -> dict[str, OutputLayout]:
    x, weight = values["input"], values.get("weightOptional")
    normalized = tuple(int(n) for n in values["normalizedShape"])
    dtype = x.dtype if weight is None else weight.dtype
    return {"gradInputOut": OutputLayout(_shape(x), x.dtype),
            "gradWeightOut": OutputLayout(normalized, dtype),
            "gradBiasOut": OutputLayout(normalized, dtype)}


@_rule("aclnnDiagFlat")
def _diag_flat(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    n = math.prod(_shape(x)) + abs(int(values["diagonal"]))
    return {"out": OutputLayout((n, n), x.dtype)}


@_rule("aclnnInplaceAddRmsNorm")
def _inplace_add_rms_norm(values: Values) -> dict[str, OutputLayout]:
    return {"rstdOut": _rms_norm({"x": values["x1Ref"], "gamma": values["gamma"]})["rstdOut"]}


# ---- gated linear units: the gated dim halves --------------------------------------------------

def _halved(source: str, dim: str | None, names: Sequence[str]) -> Rule:
    """Outputs of ``source``'s shape with dim ``dim`` (the last without one) halved."""
    def rule(values: Values) -> dict[str, OutputLayout]:
        x = values[source]
        shape = list(_shape(x))
        axis = _axes(len(shape), values[dim] if dim else -1)[0]
        shape[axis] //= 2
        return {name: OutputLayout(tuple(shape), x.dtype) for name in names}
    return rule


RULES.update({
    "aclnnSwiGlu": _halved("x", "dim", ("out",)),
    "aclnnSituGlu": _halved("x", "dim", ("out",)),
    "aclnnClippedSwiglu": _halved("x", "dim", ("out",)),
    "aclnnClippedSwigluV2": _halved("x", "dim", ("out",)),
    "aclnnSwigluGroup": _halved("x", None, ("out",)),
    "aclnnGeGlu": _halved("self", "dim", ("out", "outGelu")),
    "aclnnGeGluV3": _halved("self", "dim", ("out", "outGelu")),
    "aclnnGeluMul": _halved("input", None, ("out",)),
    "aclnnFatreluMul": _halved("input", None, ("out",)),
    "aclnnSwiGluGrad": _like(out="x"),
    "aclnnSituGluGrad": _like(out="x"),
    "aclnnClippedSwigluGrad": _like(gradXOut="x"),
    "aclnnGeGluBackward": _like(gradInput="self"),
    "aclnnGeGluV3Backward": _like(gradInput="self"),
    "aclnnPreluBackward": _like(gradInput="self", gradWeight="weight"),
    "aclnnDropoutDoMask": _like(out="self"),
    "aclnnDropoutBackward": _like(out="gradOutput"),
    "aclnnNLLLoss2dBackward": _like(out="self"),
    "aclnnBatchNormElemt": _like(output="input"),
    "aclnnAmpUpdateScale": _like(updatedScale="currentScale",
                                 updatedGrowthTracker="growthTracker"),
    "aclnnAdaLayerNorm": _like(out="x"),
    "aclnnIsInTensorScalar": _like(BOOL, out="element"),
})


def _real_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float64 if dtype == np.complex128 else np.float32)


@_rule("aclnnReal", "aclnnAngleV2")
def _real(values: Values) -> dict[str, OutputLayout]:
    x = values.get("self", values.get("x"))
    dtype = _real_of(x.dtype) if x.dtype.kind == "c" else x.dtype
    return {"out": OutputLayout(_shape(x), dtype)}


@_rule("aclnnComplex", "aclnnPolar")
def _complex(values: Values) -> dict[str, OutputLayout]:
    a, b = (values["real"], values["imag"]) if "real" in values else \
        (values["input"], values["angle"])
    shape = tuple(int(n) for n in np.broadcast_shapes(_shape(a), _shape(b)))
    dtype = np.dtype(np.complex128 if a.dtype == np.float64 else np.complex64)
    return {"out": OutputLayout(shape, dtype)}


# ---- more norms -----------------------------------------------------------------------------

def _statistics(shape: tuple[int, ...], normalized: int) -> tuple[int, ...]:
    """The saved mean and rstd of a norm over the last ``normalized`` dims."""
    kept = len(shape) - normalized
    return shape[:kept] + (1,) * normalized


@_rule("aclnnAddLayerNorm")
def _add_layer_norm(values: Values) -> dict[str, OutputLayout]:
    x = values["x1"]
    statistics = _statistics(_shape(x), len(_shape(values["gamma"])))
    f32 = np.dtype(np.float32)
    return {"yOut": OutputLayout(_shape(x), x.dtype), "meanOut": OutputLayout(statistics, f32),
            "rstdOut": OutputLayout(statistics, f32), "xOut": OutputLayout(_shape(x), x.dtype)}


@_rule("aclnnAdaLayerNormV2", "aclnnFastLayerNorm")
def _layer_norm_like(values: Values) -> dict[str, OutputLayout]:
    x = values.get("x", values.get("input"))
    normalized = len(values["normalizedShape"]) if "normalizedShape" in values else 1
    statistics = _statistics(_shape(x), normalized)
    return {"out": OutputLayout(_shape(x), x.dtype),
            "meanOutOptional": OutputLayout(statistics, x.dtype),
            "rstdOutOptional": OutputLayout(statistics, x.dtype)}


@_rule("aclnnDeepNorm")
def _deep_norm(values: Values) -> dict[str, OutputLayout]:
    x = values["x"]
    statistics = _statistics(_shape(x), len(_shape(values["gamma"])))
    f32 = np.dtype(np.float32)
    return {"meanOut": OutputLayout(statistics, f32), "rstdOut": OutputLayout(statistics, f32),
            "yOut": OutputLayout(_shape(x), x.dtype)}


@_rule("aclnnDeepNormGrad")
def _deep_norm_grad(values: Values) -> dict[str, OutputLayout]:
    x, gamma = values["x"], values["gamma"]
    f32 = np.dtype(np.float32)
    return {"dxOut": OutputLayout(_shape(x), x.dtype), "dgxOut": OutputLayout(_shape(x), x.dtype),
            "dbetaOut": OutputLayout(_shape(gamma), f32),
            "dgammaOut": OutputLayout(_shape(gamma), f32)}


@_rule("aclnnAddLayerNormGrad")
def _add_layer_norm_grad(values: Values) -> dict[str, OutputLayout]:
    x, gamma = values["x1"], values["gamma"]
    f32 = np.dtype(np.float32)
    return {"dxOut": OutputLayout(_shape(x), x.dtype),
            "dgammaOut": OutputLayout(_shape(gamma), f32),
            "dbetaOut": OutputLayout(_shape(gamma), f32)}


@_rule("aclnnRmsNormGrad")
def _rms_norm_grad(values: Values) -> dict[str, OutputLayout]:
    x, gamma = values["x"], values["gamma"]
    return {"dxOut": OutputLayout(_shape(x), x.dtype),
            "dgammaOut": OutputLayout(_shape(gamma), np.dtype(np.float32))}


@_rule("aclnnGroupNormSilu", "aclnnGroupNormSiluV2", "aclnnGroupNormSwish")
def _group_norm_silu(values: Values) -> dict[str, OutputLayout]:
    x = values.get("self", values.get("x"))
    groups = int(values.get("group", values.get("numGroups")))
    statistics = (_shape(x)[0], groups)
    name = "yOut" if "x" in values else "out"
    return {name: OutputLayout(_shape(x), x.dtype), "meanOut": OutputLayout(statistics, x.dtype),
            "rstdOut": OutputLayout(statistics, x.dtype)}


@_rule("aclnnGroupNormSwishGrad")
def _group_norm_swish_grad(values: Values) -> dict[str, OutputLayout]:
    x, gamma = values["x"], values["gamma"]
    return {"dxOut": OutputLayout(_shape(x), x.dtype),
            "dgammaOut": OutputLayout(_shape(gamma), gamma.dtype),
            "dbetaOut": OutputLayout(_shape(gamma), gamma.dtype)}


@_rule("aclnnBatchNormStats")
def _batch_norm_stats(values: Values) -> dict[str, OutputLayout]:
    channels = (_shape(values["input"])[1],)
    f32 = np.dtype(np.float32)
    return {"mean": OutputLayout(channels, f32), "invstd": OutputLayout(channels, f32)}


@_rule("aclnnBatchNormGatherStatsWithCounts")
def _batch_norm_gather(values: Values) -> dict[str, OutputLayout]:
    mean = values["mean"]
    channels = (_shape(mean)[-1],)
    return {"meanAll": OutputLayout(channels, mean.dtype),
            "invstdAll": OutputLayout(channels, mean.dtype)}


# ---- losses and the rest ----------------------------------------------------------------------

@_rule("aclnnNLLLoss2d")
def _nll_loss_2d(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    out = _shape(values["target"]) if int(values["reduction"]) == 0 else ()
    return {"out": OutputLayout(out, x.dtype), "totalWeightOut": OutputLayout((), x.dtype)}


@_rule("aclnnMultilabelMarginLoss")
def _multilabel_margin(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    out = _shape(x)[:-1] if int(values["reduction"]) == 0 else ()
    return {"out": OutputLayout(out, x.dtype), "isTarget": OutputLayout(_shape(x), x.dtype)}


@_rule("aclnnCrossEntropyLoss")
def _cross_entropy(values: Values) -> dict[str, OutputLayout]:
    x = values["input"]
    rows = _shape(x)[:1]
    loss = rows if values.get("reductionOptional") == "none" else ()
    return {"lossOut": OutputLayout(loss, x.dtype), "logProbOut": OutputLayout(_shape(x), x.dtype),
            "zlossOut": OutputLayout(loss, x.dtype), "lseForZlossOut": OutputLayout(rows, x.dtype)}


@_rule("aclnnCrossEntropyLossGrad")
def _cross_entropy_grad(values: Values) -> dict[str, OutputLayout]:
    return _like(out="logProb")(values)


@_rule("aclnnAddN", "aclnnSum")
def _add_n(values: Values) -> dict[str, OutputLayout]:
    tensors = values["tensors"]
    shape = tuple(int(n) for n in np.broadcast_shapes(*(_shape(t) for t in tensors)))
    return {"out": OutputLayout(shape, tensors[0].dtype)}


@_rule("aclnnAddbmm")
def _addbmm(values: Values) -> dict[str, OutputLayout]:
    b1, b2 = _shape(values["batch1"]), _shape(values["batch2"])
    return {"out": OutputLayout((b1[-2], b2[-1]), values["batch1"].dtype)}


@_rule("aclnnCdist")
def _cdist(values: Values) -> dict[str, OutputLayout]:
    a, b = _shape(values["x1"]), _shape(values["x2"])
    batch = tuple(int(n) for n in np.broadcast_shapes(a[:-2], b[:-2]))
    return {"out": OutputLayout((*batch, a[-2], b[-2]), values["x1"].dtype)}


@_rule("aclnnHistc")
def _histc(values: Values) -> dict[str, OutputLayout]:
    return {"out": OutputLayout((int(values["bins"]),), values["self"].dtype)}


@_rule("aclnnOneHot")
def _one_hot(values: Values) -> dict[str, OutputLayout]:
    shape = list(_shape(values["self"]))
    axis = int(values["axis"])
    shape.insert(axis % (len(shape) + 1), int(values["numClasses"]))
    return {"out": OutputLayout(tuple(shape), values["onValue"].dtype)}


@_rule("aclnnSearchSorted")
def _search_sorted(values: Values) -> dict[str, OutputLayout]:
    dtype = np.dtype(np.int32) if values.get("outInt32") else INT64
    return {"out": OutputLayout(_shape(values["self"]), dtype)}


@_rule("aclnnLogdet")
def _logdet(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    return {"out": OutputLayout(_shape(x)[:-2], x.dtype)}


@_rule("aclnnSlogdet")
def _slogdet(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    return {"signOut": OutputLayout(_shape(x)[:-2], x.dtype),
            "logOut": OutputLayout(_shape(x)[:-2], x.dtype)}


@_rule("aclnnTriangularSolve")
def _triangular_solve(values: Values) -> dict[str, OutputLayout]:
    b, a = _shape(values["self"]), _shape(values["A"])
    batch = tuple(int(n) for n in np.broadcast_shapes(b[:-2], a[:-2]))
    dtype = values["self"].dtype
    return {"xOut": OutputLayout((*batch, *b[-2:]), dtype),
            "mOut": OutputLayout((*batch, *a[-2:]), dtype)}


# ---- the pools, gathers, slices and folds with a formula of their own ---------------------------

@_rule("aclnnMaxPool")
def _max_pool_onnx(values: Values) -> dict[str, OutputLayout]:
    """ops-nn pooling/max_pool_v3/op_api/aclnn_max_pool.cpp CheckShape (PoolingOutShape):
    kernelShape one value or (kH, kW); strides none (1), one or two; pads none, one, (H, W) or
    ONNX's (top, left, bottom, right); each extent (size + pads - kernel (+ stride - 1 with
    ceilMode)) // stride + 1, less one when ceilMode's last window starts past the input and
    its first padding."""
    x = values["self"]
    shape = _shape(x)
    kernels = _pairs(values["kernelShape"], 2, 1)
    strides = _pairs(values.get("strides"), 2, 1)
    pads = [int(p) for p in values.get("pads") or ()]
    if not pads:
        pads = [0]
    before, after = ((pads[0],) * 2, (pads[0],) * 2) if len(pads) == 1 else \
        ((pads[0], pads[1]), (pads[0], pads[1])) if len(pads) == 2 else \
        ((pads[0], pads[1]), (pads[2], pads[3]))
    ceil = bool(values.get("ceilMode"))
    spatial = []
    for size, kernel, stride, first, last in zip(shape[-2:], kernels, strides, before, after):
        extent = (size + first + last - kernel + (stride - 1 if ceil else 0)) // stride + 1
        if ceil and (extent - 1) * stride >= size + first:
            extent -= 1
        spatial.append(extent)
    return {"out": OutputLayout(shape[:-2] + tuple(spatial), x.dtype)}


_MAX_POOL_2D = _pool("kernelSize", "stride", "padding", "dilation", None)


@_rule("aclnnMaxPool2dWithMask")
def _max_pool_with_mask(values: Values) -> dict[str, OutputLayout]:
    """out as aclnnMaxPool2dWithIndices's; indices the INT8 mask [N, C, kH kW, (ceil(OH OW /
    16) + 1) 2 16] (ops-nn pooling/max_pool3d_with_argmax_v2/docs/aclnnMaxPool2dWithMask.md,
    indices; op_api/aclnn_max_pool2d_with_indices.cpp CheckShape builds the same mask shape
    on an Atlas A2)."""
    out = _MAX_POOL_2D(values)["out"]
    kernel = _pairs(values["kernelSize"], 2, 1)
    height, width = out.shape[-2:]
    mask = (-(-(height * width) // 16) + 1) * 2 * 16
    return {"out": out, "indices": OutputLayout(out.shape[:-2] + (kernel[0] * kernel[1], mask),
                                                np.dtype(np.int8))}


@_rule("aclnnGatherV3")
def _gather_v3(values: Values) -> dict[str, OutputLayout]:
    """ops-nn index/gather_v2/docs/aclnnGatherV3.md: self's shape with dim replaced by index's
    shape past its batchDims leading dims (0 on an Atlas A2)."""
    x, index = values["self"], values["index"]
    shape = _shape(x) or (1,)
    axis = _axes(len(shape), values["dim"])[0]
    batch = int(values.get("batchDims") or 0)
    return {"out": OutputLayout(shape[:axis] + _shape(index)[batch:] + shape[axis + 1:],
                                x.dtype)}


@_rule("aclnnChunkCat")
def _chunk_cat(values: Values) -> dict[str, OutputLayout]:
    """ops-math conversion/chunk_cat/op_api/aclnn_chunk_cat.cpp (torch._chunk_cat along dim
    0): (numChunks, the sum over the tensors of ceil(dim 0 / numChunks) times their other
    dims); the tensors' dtype (a float32 input needs a float32 out, CheckDtypeValid)."""
    tensors = values["tensors"]
    chunks = int(values["numChunks"])
    width = sum(-(-_shape(t)[0] // chunks) * math.prod(_shape(t)[1:]) for t in tensors)
    return {"out": OutputLayout((chunks, width), tensors[0].dtype)}


@_rule("aclnnIm2col")
def _im2col(values: Values) -> dict[str, OutputLayout]:
    """ops-math conversion/im2col/op_api/aclnn_im2col.cpp CheckOutputDims: ([N,] C kH kW, L),
    L the blocks' count, each way (size + 2 pad - (dilation (kernel - 1) + 1)) // stride + 1."""
    x = values["self"]
    shape = _shape(x)
    kernel, dilation, padding, stride = (_pairs(values[name], 2, 1) for name in
                                         ("kernelSize", "dilation", "padding", "stride"))
    blocks = [(shape[-2 + i] + 2 * padding[i] - (dilation[i] * (kernel[i] - 1) + 1))
              // stride[i] + 1 for i in range(2)]
    return {"out": OutputLayout(shape[:-3] + (shape[-3] * kernel[0] * kernel[1],
                                              blocks[0] * blocks[1]), x.dtype)}


@_rule("aclnnSliceV2")
def _slice_v2(values: Values) -> dict[str, OutputLayout]:
    """ops-math conversion/strided_slice_v3/op_api/aclnn_slice_v2.cpp CheckShape: each of the
    first len(steps) axes sliced from its start to its end by its step (clamped as Python's
    slices)."""
    x = values["self"]
    shape = list(_shape(x))
    starts, ends, axes, steps = (list(values[name]) for name in ("starts", "ends", "axes",
                                                                   "steps"))
    for i, step in enumerate(steps):
        axis = _axes(len(shape), int(axes[i]))[0]
        shape[axis] = len(range(*slice(int(starts[i]), int(ends[i]), int(step))
                                .indices(shape[axis])))
    return {"out": OutputLayout(tuple(shape), x.dtype)}


@_rule("aclnnUnfoldGrad")
def _unfold_grad(values: Values) -> dict[str, OutputLayout]:
    """ops-math conversion/unfold_grad/op_api/aclnn_unfold_grad.cpp CheckShapeValid: gradIn of
    inputSizes, in gradOut's dtype."""
    grad = values["gradOut"]
    return {"gradIn": OutputLayout(tuple(int(n) for n in values["inputSizes"]), grad.dtype)}


# ---- more norms: AdaLayerNorm's gradients, AddRmsNormCast ------------------------------------

@_rule("aclnnAdaLayerNormBackward")
def _ada_layer_norm_backward(values: Values) -> dict[str, OutputLayout]:
    """ops-nn norm/ada_layer_norm_grad/docs/aclnnAdaLayerNormBackward.md and op_api
    CheckDtype: gradInputOut input's, gradScaleOut scale's and gradShiftOut shift's layout;
    gradWeightOut and gradBiasOut [H] of weight's (else bias's, else input's) dtype."""
    x, scale, shift = values["input"], values["scale"], values["shift"]
    weight = values.get("weightOptional")
    parameters = weight if weight is not None else values.get("biasOptional")
    dtype = x.dtype if parameters is None else parameters.dtype
    hidden = (_shape(x)[-1],)
    return {"gradInputOut": OutputLayout(_shape(x), x.dtype),
            "gradScaleOut": OutputLayout(_shape(scale), scale.dtype),
            "gradShiftOut": OutputLayout(_shape(shift), shift.dtype),
            "gradWeightOut": OutputLayout(hidden, dtype),
            "gradBiasOut": OutputLayout(hidden, dtype)}


@_rule("aclnnAddRmsNormCast")
def _add_rms_norm_cast(values: Values) -> dict[str, OutputLayout]:
    """ops-nn norm/add_rms_norm_cast/docs/aclnnAddRmsNormCast.md: y1Out float32 and y2Out and
    xOut x1's dtype, all of x1's shape; rstdOut float32, x1's leading dims then ones for
    gamma's."""
    x = values["x1"]
    statistics = _statistics(_shape(x), len(_shape(values["gamma"])))
    f32 = np.dtype(np.float32)
    return {"y1Out": OutputLayout(_shape(x), f32), "y2Out": OutputLayout(_shape(x), x.dtype),
            "rstdOut": OutputLayout(statistics, f32), "xOut": OutputLayout(_shape(x), x.dtype)}


# ---- the weight-NZ and quantised matmuls, the quantisers -------------------------------------

# The matmuls whose out dtype CANN takes from the out tensor given (several are valid for the
# same inputs): their rules give a default; ``out=`` picks another.
CALLER_DTYPE: dict[str, str] = {
    "aclnnQuantMatmulV3": "out", "aclnnQuantMatmulV4": "out", "aclnnQuantMatmulWeightNz": "out",
    "aclnnDynamicQuant": "yOut", "aclnnRange": "out",
}

RULES.update({
    # mat2's view shape is its (k, n) matrix; the FRACTAL_NZ blocks are its storage (ops-nn
    # matmul/mat_mul_v3/op_host/op_api/aclnn_matmul.cpp CheckWeightNzShapeValid; batch_mat_mul_v3
    # aclnn_batch_matmul.cpp CheckShape): self @ mat2 in self's dtype
    "aclnnMatmulWeightNz": _matmul("self", "mat2"),
    "aclnnBatchMatMulWeightNz": _matmul("self", "mat2"),
})


@_rule("aclnnQuantMatmulV3", "aclnnQuantMatmulV4", "aclnnQuantMatmulWeightNz")
def _quant_matmul(values: Values) -> dict[str, OutputLayout]:
    """ops-nn matmul/quant_batch_matmul_v3/op_api/aclnn_quant_matmul_v4.cpp: out (batch, m, n)
    from x1 (m, k) (or (k, m) transposed) and x2 (k, n) (or (n, k)), the batch dims broadcast.
    Its dtype is the out given (CheckDtypeValidOnOnlyL0c2outForUnclassified): without one,
    bfloat16 when the scale or bias is bfloat16 (they require it), int8 when an offset is given
    (only an int8 out takes one), else float16."""
    a, b = _shape(values["x1"]), _shape(values["x2"])
    m = a[-1] if values.get("transposeX1") else a[-2]
    n = b[-2] if values.get("transposeX2") else b[-1]
    batch = tuple(int(d) for d in np.broadcast_shapes(a[:-2], b[:-2]))
    scale = values.get("scale", values.get("x2Scale"))
    bias = values.get("bias")
    offset = values.get("offset", values.get("x2Offset"))
    if any(t is not None and t.dtype.name == "bfloat16" for t in (scale, bias)):
        from .dtypes import bfloat16_dtype

        dtype = np.dtype(bfloat16_dtype())
    elif offset is not None:
        dtype = np.dtype(np.int8)
    else:
        dtype = np.dtype(np.float16)
    return {"out": OutputLayout((*batch, m, n), dtype)}


@_rule("aclnnDynamicQuant", "aclnnDynamicQuantV2")
def _dynamic_quant(values: Values) -> dict[str, OutputLayout]:
    """ops-nn quant/dynamic_quant/op_host/op_api/aclnn_dynamic_quant.cpp CheckShape: yOut x's
    shape in int8 (dstType 2; aclnnDynamicQuant's default), or int32 with the last dim an
    eighth (dstType 3, eight int4 each, CheckInt32OutputShape); scaleOut and offsetOut float32
    of x's shape without its last dim."""
    x = values["x"]
    shape = _shape(x)
    f32 = np.dtype(np.float32)
    destination = int(values.get("dstType", 2))
    if destination == 2:
        y = OutputLayout(shape, np.dtype(np.int8))
    elif destination == 3:
        if shape[-1] % 8:
            raise ValueError("an int32 yOut needs x's last dim a multiple of 8")
        y = OutputLayout(shape[:-1] + (shape[-1] // 8,), np.dtype(np.int32))
    else:
        raise ValueError(f"dstType {destination} has no numpy dtype")
    return {"yOut": y, "scaleOut": OutputLayout(shape[:-1], f32),
            "offsetOut": OutputLayout(shape[:-1], f32)}


@_rule("aclnnTransQuantParamV2", "aclnnTransQuantParamV3")
def _trans_quant_param(values: Values) -> dict[str, OutputLayout]:
    """ops-nn quant/trans_quant_param_v2/docs/aclnnTransQuantParamV2.md (scale, offset and out
    shapes): uint64; a 2-d scale's shape, else 1-d of the larger of scale's and offset's
    lengths."""
    scale, offset = values["scale"], values.get("offset")
    shape = _shape(scale)
    if len(shape) != 2:
        shape = (max(math.prod(shape), 0 if offset is None else math.prod(_shape(offset))),)
    return {"out": OutputLayout(shape, np.dtype(np.uint64))}


@_rule("aclnnFakeQuantPerChannelAffineCachemask", "aclnnFakeQuantPerTensorAffineCachemask")
def _fake_quant(values: Values) -> dict[str, OutputLayout]:
    """ops-nn quant/fake_quant_affine_cachemask/op_api/aclnn_fake_quant_per_{channel,tensor}_
    affine_cachemask.cpp CheckShape: out and mask of self's shape; out self's dtype, mask
    bool."""
    x = values["self"]
    return {"out": OutputLayout(_shape(x), x.dtype), "mask": OutputLayout(_shape(x), BOOL)}


# ---- scalars in: isin, searchsorted, range ------------------------------------------------

@_rule("aclnnIsInScalarTensor")
def _isin_scalar_tensor(values: Values) -> dict[str, OutputLayout]:
    """ops-math math/equal/op_api/aclnn_isin.cpp CheckShape, CheckDtypeValid: a 0-d bool."""
    return {"out": OutputLayout((), BOOL)}


@_rule("aclnnSearchSorteds")
def _search_sorteds(values: Values) -> dict[str, OutputLayout]:
    """ops-math aclnn_searchsorted.cpp (aclnnSearchSorteds): a scalar self gives [1], int32
    with outInt32, else int64."""
    return {"out": OutputLayout((1,), np.dtype(np.int32) if values.get("outInt32") else INT64)}


@_rule("aclnnRange")
def _range(values: Values) -> dict[str, OutputLayout]:
    """ops-math math/range/docs/aclnnRange.md: floor((end - start) / step) + 1 values,
    computed in float32 for float scalars (its warning on out's size), torch.range's; out
    float32 for float scalars, else int64 (its dtype is the out given)."""
    start, end, step = (values[name] for name in ("start", "end", "step"))
    floats = any(isinstance(v, float) or getattr(v, "dtype", INT64).kind == "f"
                 for v in (start, end, step))
    if floats:
        first, last, stride = (np.float32(float(v)) for v in (start, end, step))
        count = int(np.floor((last - first) / stride)) + 1
    else:
        count = (int(end) - int(start)) // int(step) + 1
    return {"out": OutputLayout((max(count, 0),), np.dtype(np.float32) if floats else INT64)}


# ---- factorisations ---------------------------------------------------------------------------

@_rule("aclnnLinalgQr", "aclnnQr")
def _qr(values: Values) -> dict[str, OutputLayout]:
    """ops-math math/qr/op_api/aclnn_linalg_qr.cpp CheckShape: self (*, m, n), k = min(m, n):
    Q (*, m, k) and R (*, k, n) reduced (mode 0, aclnnQr's some), Q (*, m, m) and R (*, m, n)
    complete (mode 1), Q [0] and R (*, k, n) for mode 2 (r); both self's dtype."""
    x = values["self"]
    shape = _shape(x)
    batch, (m, n) = shape[:-2], shape[-2:]
    k = min(m, n)
    mode = int(values["mode"]) if "mode" in values else (0 if values.get("some") else 1)
    q, r = {0: (batch + (m, k), batch + (k, n)), 1: (batch + (m, m), batch + (m, n)),
            2: ((0,), batch + (k, n))}[mode]
    return {"Q": OutputLayout(q, x.dtype), "R": OutputLayout(r, x.dtype)}


@_rule("aclnnSvd")
def _svd(values: Values) -> dict[str, OutputLayout]:
    """ops-math math/svd/op_host/op_api/aclnn_svd.cpp CheckShape: input (*, m, n), k = min(m,
    n): sigma (*, k), real; u (*, m, m) and v (*, n, n) with fullMatrices, else u (*, m, k) and
    v (*, n, k), input's dtype."""
    x = values["input"]
    shape = _shape(x)
    batch, (m, n) = shape[:-2], shape[-2:]
    k = min(m, n)
    full = bool(values.get("fullMatrices"))
    sigma = _real_of(x.dtype) if x.dtype.kind == "c" else x.dtype
    return {"sigma": OutputLayout(batch + (k,), sigma),
            "u": OutputLayout(batch + ((m, m) if full else (m, k)), x.dtype),
            "v": OutputLayout(batch + ((n, n) if full else (n, k)), x.dtype)}


# ---- CTC loss ---------------------------------------------------------------------------------

CTC_ALIGN = 8  # ops-nn loss/ctc_loss_v2/op_api/ctc_loss_v2.cpp CtcLossNpuOutputShape (off Regbase)


@_rule("aclnnCtcLoss")
def _ctc_loss(values: Values) -> dict[str, OutputLayout]:
    """ops-nn loss/ctc_loss_v2/op_api/aclnn_ctc_loss.cpp CheckTargetAndOutShapeParameterValue:
    logProbs (T, N, C) or (T, C); negLogLikelihoodOut (N) (0-d for a 2-d logProbs);
    logAlphaOut (N, T, 2 max(targetlengths) + 1 rounded up to 8); both logProbs' dtype."""
    x = values["logProbs"]
    shape = _shape(x)
    batch = shape[1] if len(shape) == 3 else 1
    longest = max((int(n) for n in values["targetlengths"]), default=0)
    width = (2 * longest + 1 + CTC_ALIGN - 1) // CTC_ALIGN * CTC_ALIGN
    return {"negLogLikelihoodOut": OutputLayout((batch,) if len(shape) == 3 else (), x.dtype),
            "logAlphaOut": OutputLayout((batch, shape[0], width), x.dtype)}


# ---- repeat_interleave: known from an int repeats or outputSize ---------------------------------

def _repeated(operator: str, source: str | None, dim: str | None) -> Rule:
    """ops-nn index/repeat_interleave/op_api/aclnn_repeat_interleave.cpp CheckRepeatresOutShape:
    ``source`` (flattened without ``dim``) with dim's extent repeated: times an int repeats,
    else outputSize when it is above 0; a tensor repeats without outputSize depends on its
    values. aclnnRepeatInterleaveTensor gives int64 indices (repeats' dtype)."""
    def rule(values: Values) -> dict[str, OutputLayout]:
        repeats = values["repeats"]
        x = values[source] if source else repeats
        shape = _shape(x) if dim else (math.prod(_shape(x)),)
        axis = _axes(len(shape), values[dim])[0] if dim else 0
        size = int(values.get("outputSize") or 0)
        if isinstance(repeats, (int, np.integer)):
            size = shape[axis] * int(repeats)
        elif size <= 0:
            raise needs_out(operator, "out", "without outputSize, its extent is the sum of the "
                            "values of repeats")
        shape = shape[:axis] + (size,) + shape[axis + 1:]
        return {"out": OutputLayout(shape, x.dtype)}
    return rule


for _name, _source, _dim in (("RepeatInterleave", "self", None),
                             ("RepeatInterleaveWithDim", "self", "dim"),
                             ("RepeatInterleaveInt", "self", None),
                             ("RepeatInterleaveIntWithDim", "self", "dim"),
                             ("RepeatInterleaveTensor", None, None)):
    RULES[f"aclnn{_name}"] = _repeated(f"aclnn{_name}", _source, _dim)


@_rule("aclnnRepeatInterleaveGrad")
def _repeat_interleave_grad(values: Values) -> dict[str, OutputLayout]:
    """ops-nn index/repeat_interleave_grad/docs/aclnnRepeatInterleaveGrad.md: yGrad summed over
    runs along axis: one per value of a repeats of several values; with one value the count
    is axis's extent divided by it, a value of the data."""
    grad, repeats = values["yGrad"], values["repeats"]
    shape = _shape(grad) or (1,)
    axis = _axes(len(shape), values["axis"])[0]
    count = math.prod(_shape(repeats))
    if count <= 1:
        raise needs_out("aclnnRepeatInterleaveGrad", "out", "with one repeats value, the runs' "
                        "count along axis is its extent divided by that value")
    return {"out": OutputLayout(shape[:axis] + (count,) + shape[axis + 1:], grad.dtype)}
# ---- the kernels of branch kernels: synchronised batch norm, cdist's gradient, scale,
# modulate and the segment sums -----------------------------------------------------------

def _per_channel(values: Values, source: str, channels: int, names: tuple[str, ...],
                 dtype: np.dtype | None = None) -> dict[str, OutputLayout]:
    return {name: OutputLayout((channels,), values[source].dtype if dtype is None else dtype)
            for name in names}


@_rule("aclnnSyncBatchNormGatherStats")
def _sync_batch_norm_gather_stats(values: Values) -> dict[str, OutputLayout]:
    return _per_channel(values, "totalSum", _shape(values["totalSum"])[1],
                        ("batchMean", "batchInvstd"))


@_rule("aclnnBatchNormReduce")
def _batch_norm_reduce(values: Values) -> dict[str, OutputLayout]:
    # a 4-d x is described NCHW by call(): its channels are dimension 1
    return _per_channel(values, "x", _shape(values["x"])[1], ("sum", "squareSum"),
                        np.dtype(np.float32))


@_rule("aclnnBatchNormReduceBackward")
def _batch_norm_reduce_backward(values: Values) -> dict[str, OutputLayout]:
    return _per_channel(values, "input", _shape(values["input"])[1],
                        ("sumDy", "sumDyXmu", "gradWeight", "gradBias"))


@_rule("aclnnFastBatchNormBackward")
def _fast_batch_norm_backward(values: Values) -> dict[str, OutputLayout]:
    return _batch_norm_backward(values)


RULES["aclnnBatchNormElemtBackward"] = _like(gradInput="input")
RULES["aclnnCdistBackward"] = _like(out="x1")
RULES["aclnnScale"] = _like(y="x")
RULES["aclnnModulate"] = _like(out="self")


@_rule("aclnnModulateBackward")
def _modulate_backward(values: Values) -> dict[str, OutputLayout]:
    g, x = values["grad_output"], values["input"]
    rows = (_shape(g)[0], _shape(g)[2])
    return {"grad_input": OutputLayout(_shape(x), x.dtype),
            "grad_scale": OutputLayout(rows, x.dtype),
            "grad_shift": OutputLayout(rows, x.dtype)}


@_rule("aclnnExpSegsum")
def _exp_segsum(values: Values) -> dict[str, OutputLayout]:
    x = values["self"]
    return {"out": OutputLayout(_shape(x) + _shape(x)[-1:], x.dtype)}



@_rule("aclnnQuantize")
def _quantize(values: Values) -> dict[str, OutputLayout]:
    """out of x's shape, in the dtype asked for."""
    return {"out": OutputLayout(_shape(values["x"]), _dtype(values["dtype"], np.int8))}


@_rule("aclnnQuantMatmulV2")
def _quant_matmul_v2(values: Values) -> dict[str, OutputLayout]:
    """ops-nn matmul/quant_matmul/op_host/op_api/aclnn_quant_matmul.cpp CheckOutShape: out
    (batch, m, n) in float16 (batch: InferOutputShape's broadcast) from x1 (batch, m, k) (or
    (batch, k, m) with adjX1) and x2 (batch, k, n) (or (batch, n, k) with adjX2)."""
    a, b = _shape(values["x1"]), _shape(values["x2"])
    m = a[-1] if values.get("adjX1") else a[-2]
    n = b[-2] if values.get("adjX2") else b[-1]
    batch = tuple(int(d) for d in np.broadcast_shapes(a[:-2], b[:-2]))
    return {"out": OutputLayout((*batch, m, n), np.dtype(np.float16))}


@_rule("aclnnRmsNormQuant")
def _rms_norm_quant(values: Values) -> dict[str, OutputLayout]:
    """ops-nn norm/rms_norm_quant/docs/aclnnRmsNormQuant.md: y of x's shape, int8."""
    return {"y": OutputLayout(_shape(values["x"]), np.dtype(np.int8))}


@_rule("aclnnAddRmsNormQuant")
def _add_rms_norm_quant(values: Values) -> dict[str, OutputLayout]:
    """ops-nn norm/add_rms_norm_quant/docs/aclnnAddRmsNormQuant.md: y1Out and y2Out int8 and
    xOut (x1 + x2) of x1's shape and dtype."""
    x1 = values["x1"]
    i8 = np.dtype(np.int8)
    return {"y1Out": OutputLayout(_shape(x1), i8), "y2Out": OutputLayout(_shape(x1), i8),
            "xOut": OutputLayout(_shape(x1), x1.dtype)}


# ops-nn experimental/pooling/max_pool3_d/op_host/max_pool3_d_infershape.cpp: x 5-d; ksize,
# strides and dilation of 1, 3 or 5 values (5: in dataFormat's order, N's and C's 1 for ksize and
# strides), each spatial one above 0; padding "VALID" (out = (in - dilation (k - 1) - 1) //
# stride + 1), "SAME" (out = ceil(in / stride); TensorFlow's split, the smaller half before) or
# "CALCULATED" (pads (front, back, top, bottom, left, right), each >= 0; out = (in + pads -
# dilation (k - 1) - 1 (+ stride - 1 with ceilMode)) // stride + 1, one less when ceilMode's last
# window starts beyond the front pad and the input). dataFormat defaults to "NDHWC"
# (op_host/op_api/aclnn_max_pool3_d.cpp).
def _pool_spatial(name: str, values: tuple[int, ...] | None, default: int,
                  channels_last: bool, outer_ones: bool) -> tuple[int, ...]:
    if values is None:
        return (default,) * 3
    if len(values) not in (1, 3, 5):
        raise ValueError(f"{name} has {len(values)} values; it must have 1, 3 or 5")
    spatial: tuple[int, ...]
    if len(values) == 1:
        spatial = (values[0],) * 3
    elif len(values) == 3:
        spatial = tuple(values)
    else:
        spatial = tuple(values[1:4]) if channels_last else tuple(values[2:5])
        channel = values[4] if channels_last else values[1]
        if outer_ones and (values[0] != 1 or channel != 1):
            raise ValueError(f"{name}'s values on N and C must be 1")
    if min(spatial) <= 0:
        raise ValueError(f"{name}'s spatial values {list(spatial)} must be above 0")
    return spatial


def max_pool3d_geometry(shape: tuple[int, ...], ksize: tuple[int, ...],
                        strides: tuple[int, ...], padding: str,
                        padsOptional: tuple[int, ...] | None,
                        dilationOptional: tuple[int, ...] | None, ceilMode: int,
                        dataFormatOptional: str | None
                        ) -> tuple[bool, list[tuple[int, int, int, int, int]]]:
    """For x of ``shape``: (channels last, per spatial dim (k, stride, dilation, pad before,
    out)); a ValueError where the infershape fails."""
    fmt = "NDHWC" if dataFormatOptional is None else dataFormatOptional
    if len(shape) != 5:
        raise ValueError(f"x has {len(shape)} dimensions; it must have 5")
    if fmt not in ("NDHWC", "NCDHW"):
        raise ValueError(f"dataFormat {fmt!r} must be NCDHW or NDHWC")
    last = fmt == "NDHWC"
    k = _pool_spatial("ksize", ksize, 1, last, True)
    s = _pool_spatial("strides", strides, 1, last, True)
    dil = _pool_spatial("dilation", dilationOptional, 1, last, False)
    sizes = shape[1:4] if last else shape[2:5]
    pads = (0,) * 6 if padsOptional is None else tuple(padsOptional)
    geometry = []
    if padding == "CALCULATED":
        if len(pads) != 6:
            raise ValueError(f"pads has {len(pads)} values; it must have 6")
        if min(pads) < 0:
            raise ValueError(f"pads {list(pads)} must not be negative")
    elif padding not in ("VALID", "SAME"):
        raise ValueError(f"padding {padding!r} must be CALCULATED, VALID or SAME")
    for i, size in enumerate(sizes):
        span = dil[i] * (k[i] - 1) + 1
        if padding == "VALID":
            out, before = (size - span) // s[i] + 1, 0
        elif padding == "SAME":
            out = -(-size // s[i])
            before = max((out - 1) * s[i] + span - size, 0) // 2
        else:
            before, after = pads[2 * i], pads[2 * i + 1]
            numerator = size + before + after - span + (s[i] - 1 if ceilMode else 0)
            out = numerator // s[i] + 1
            if ceilMode and (out - 1) * s[i] >= size + before:
                out -= 1
        geometry.append((k[i], s[i], dil[i], before, max(out, 0)))
    return last, geometry


@_rule("aclnnMaxPool3D")
def _max_pool3d(values: Values) -> dict[str, OutputLayout]:
    """ops-nn experimental/pooling/max_pool3_d/op_host/max_pool3_d_infershape.cpp: x's shape
    with its spatial dims pooled (max_pool3d_geometry), x's dtype."""
    x = values["x"]
    last, geometry = max_pool3d_geometry(_shape(x), values["ksize"], values["strides"],
                                         values["padding"], values.get("padsOptional"),
                                         values.get("dilationOptional"),
                                         values.get("ceilMode", 0),
                                         values.get("dataFormatOptional"))
    shape = list(_shape(x))
    first = 1 if last else 2
    shape[first:first + 3] = [g[4] for g in geometry]
    return {"out": OutputLayout(tuple(shape), x.dtype)}


@_rule("aclnnSwigluClamp")
def _swiglu_clamp(values: Values) -> dict[str, OutputLayout]:
    """ops-nn experimental/activation/swiglu_clamp/op_host/op_api/aclnn_swiglu_clamp.cpp
    CheckShape: y is x with its last dim halved, in x's dtype."""
    x = values["x"]
    shape = _shape(x)
    return {"y": OutputLayout(shape[:-1] + (shape[-1] // 2,) if shape else shape, x.dtype)}
