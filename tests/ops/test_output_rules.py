"""The output rules of ``aclnn_py.ops.outputs``: each against the emulator's kernels' cases
(outputs made by PyTorch) and, called without ``out=``, against PyTorch's output shapes."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest
from test_python_kernels import CASES, FLOAT_DTYPES, T

import aclnn_py
from aclnn_py.ops import outputs

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
pytestmark = pytest.mark.emulator_only


def _output_names(name: str) -> list[str]:
    return [p.name for p in aclnn_py.signature(name).parameters if p.role == "output"]


def _case_parameters() -> list[Any]:
    found = []
    for name in sorted(set(outputs.RULES) & set(CASES)):
        for label, make, dtypes in CASES[name]:
            found.append(pytest.param(name, make, FLOAT_DTYPES[dtypes[0]],
                                      id=f"{name}-{label}"))
    return found


@pytest.mark.parametrize(("name", "make", "dtype"), _case_parameters())
def test_each_rule_gives_the_outputs_of_the_kernels_cases(name, make, dtype):
    arguments, out, _ = make(np.random.default_rng(zlib.crc32(name.encode())), dtype)
    if out is None:
        pytest.skip(f"the {name} case lets the call allocate")
    given = out[0] if isinstance(out, list) else out
    given = given if isinstance(given, tuple) else (given,)
    try:
        inferred = outputs.infer(name, arguments)
    except outputs.OutputNeedsOut:     # this case's outputs follow from its data (a mask)
        pytest.skip(f"the {name} case's outputs depend on its data")
    assert inferred is not None, f"{name}'s rule does not take its case's arguments"
    for output, array in zip(_output_names(name), given):
        if array is None:
            continue
        if outputs.CALLER_DTYPE.get(name) == output:  # the rule's dtype is a default
            assert inferred[output].shape == array.shape, output
            continue
        assert inferred[output] == outputs.OutputLayout(array.shape, array.dtype), output


def test_every_rule_is_checked_by_a_case_or_a_call_below():
    ruled = set(outputs.RULES)
    assert ruled - set(CASES) - set(CALLS_BY_OPERATOR) == set()


# (operator, positional arguments, the same call in PyTorch: its outputs)
X = np.random.default_rng(7).standard_normal((2, 3, 4, 5)).astype(np.float32)
A, B = X[0, 0], X[0, 1].T.copy()              # (4, 5), (5, 4)
V = X[0, 0, 0].copy()                          # (5,)
BATCH = X.reshape(6, 4, 5)
INDEX = np.array([2, 0, 1, 2], np.int64)
EMPTY = np.zeros(0, np.int64)                   # an empty index: the whole dimension
LOG_PROBS = np.log(np.random.default_rng(8).dirichlet(np.ones(5), (6, 2))).astype(np.float32)


def _unfold_grad():
    """The gradient of Tensor.unfold(1, 3, 2) of a (4, 5) tensor for a gradient of ones."""
    x = torch.zeros(4, 5, requires_grad=True)
    x.unfold(1, 3, 2).backward(torch.ones(4, 2, 3))
    return x.grad
CALLS = [
    ("aclnnMatmul", (A, B, 0), lambda: torch.matmul(T(A), T(B))),
    ("aclnnMatmul", (V, B, 0), lambda: torch.matmul(T(V), T(B))),
    ("aclnnMatmul", (A, V, 0), lambda: torch.matmul(T(A), T(V))),
    ("aclnnMatmul", (BATCH, B, 0), lambda: torch.matmul(T(BATCH), T(B))),
    ("aclnnMm", (A, B, 0), lambda: torch.mm(T(A), T(B))),
    ("aclnnBatchMatMul", (BATCH, BATCH.transpose(0, 2, 1).copy(), 0),
     lambda: torch.bmm(T(BATCH), T(BATCH).transpose(1, 2))),
    ("aclnnMv", (A, V, 0), lambda: torch.mv(T(A), T(V))),
    ("aclnnDot", (V, V), lambda: torch.dot(T(V), T(V))),
    ("aclnnReduceSum", (X, [1, 3], False, np.float32), lambda: T(X).sum((1, 3))),
    ("aclnnReduceSum", (X, [-1], True, np.float32), lambda: T(X).sum(-1, keepdim=True)),
    ("aclnnMean", (X, [0], False, np.float32), lambda: T(X).mean(0)),
    ("aclnnAmax", (X, [2], True), lambda: T(X).amax(2, keepdim=True)),
    ("aclnnArgMax", (X, 1, False), lambda: T(X).argmax(1)),
    ("aclnnArgMin", (X, -1, True), lambda: T(X).argmin(-1, keepdim=True)),
    ("aclnnMaxDim", (X, 3, False), lambda: tuple(T(X).max(3))),
    ("aclnnMinDim", (X, 0, True), lambda: tuple(T(X).min(0, keepdim=True))),
    ("aclnnMax", (X,), lambda: T(X).max()),
    ("aclnnProd", (X, np.float32), lambda: T(X).prod()),
    ("aclnnAll", (X > 0, [1], False), lambda: (T(X) > 0).all(1)),
    ("aclnnIndexSelect", (X, 2, INDEX), lambda: T(X).index_select(2, T(INDEX))),
    ("aclnnGather", (X, 3, np.zeros((2, 3, 4, 2), np.int64)),
     lambda: T(X).gather(3, torch.zeros((2, 3, 4, 2), dtype=torch.int64))),
    ("aclnnTake", (X, INDEX), lambda: T(X).take(T(INDEX))),
    ("aclnnEmbedding", (A, INDEX.reshape(2, 2)),
     lambda: torch.nn.functional.embedding(T(INDEX.reshape(2, 2)), T(A))),
    ("aclnnPermute", (X, [3, 0, 2, 1]), lambda: T(X).permute(3, 0, 2, 1)),
    ("aclnnExpand", (V, [3, 5]), lambda: T(V).expand(3, 5)),
    ("aclnnRepeat", (A, [2, 1, 3]), lambda: T(A).repeat(2, 1, 3)),
    ("aclnnConstantPadNd", (X, [1, 2, 0, 1], 0.0),
     lambda: torch.nn.functional.pad(T(X), (1, 2, 0, 1))),
    ("aclnnTopk", (X, 2, 1, True, True), lambda: tuple(T(X).topk(2, 1))),
    ("aclnnSort", (X, False, 2, False), lambda: tuple(T(X).sort(2))),
    ("aclnnCat", ([A, A[:1]], 0), lambda: torch.cat([T(A), T(A[:1])], 0)),
    ("aclnnStack", ([A, A], 1), lambda: torch.stack([T(A), T(A)], 1)),
    ("aclnnCumsum", (X, 1, np.float32), lambda: T(X).cumsum(1)),
    ("aclnnConvolution", (X, np.ones((6, 3, 2, 2), np.float32), None, [1, 2], [1, 0], [1, 1],
                          False, [0, 0], 1, 0),
     lambda: torch.nn.functional.conv2d(T(X), torch.ones(6, 3, 2, 2), stride=(1, 2),
                                        padding=(1, 0))),
    ("aclnnMaxPool2dWithIndices", (X, [2, 2], [2, 2], [0, 0], [1, 1], True),
     lambda: torch.nn.functional.max_pool2d(T(X), 2, 2, ceil_mode=True)),
    ("aclnnAvgPool2d", (X, [3, 3], [1, 1], [1, 1], False, True, 0, 0),
     lambda: torch.nn.functional.avg_pool2d(T(X), 3, 1, 1)),
    ("aclnnLayerNorm", (X, [5], None, None, 1e-5),
     lambda: torch.nn.functional.layer_norm(T(X), [5])),
    ("aclnnMaxPool", (X, [3, 3], [2, 2], 0, [1, 1], [1, 1], 0),
     lambda: torch.nn.functional.max_pool2d(T(X), 3, 2, 1)),
    ("aclnnMaxPool", (X, [2], [], 0, [], [], 1),
     lambda: torch.nn.functional.max_pool2d(T(X), 2, 1, ceil_mode=True)),
    ("aclnnMaxPool2dWithMask", (X, [2, 2], [2, 2], [0, 0], [1, 1], True),
     lambda: (torch.nn.functional.max_pool2d(T(X), 2, 2, ceil_mode=True),)),
    ("aclnnGatherV3", (X, 1, INDEX[1:], 0, 0), lambda: T(X).index_select(1, T(INDEX[1:]))),
    ("aclnnIm2col", (X, [2, 3], [1, 1], [1, 0], [2, 1]),
     lambda: torch.nn.functional.unfold(T(X), (2, 3), padding=(1, 0), stride=(2, 1))),
    ("aclnnSliceV2", (X, [1, 0], [3, 5], [1, -1], [1, 2]), lambda: T(X)[:, 1:3, :, 0:5:2]),
    ("aclnnUnfoldGrad", (np.ones((4, 2, 3), np.float32), [4, 5], 1, 3, 2),
     _unfold_grad),
    ("aclnnChunkCat", ([A, A[:3]], 0, 2), lambda: torch._chunk_cat([T(A), T(A[:3])], 0, 2)),
    ("aclnnLinalgQr", (A, 0), lambda: tuple(torch.linalg.qr(T(A)))),
    ("aclnnQr", (B, False), lambda: tuple(torch.linalg.qr(T(B), mode="complete"))),
    ("aclnnSvd", (BATCH, False, True), lambda: (torch.linalg.svdvals(T(BATCH)),)),
    ("aclnnRange", (1.0, 4.0, 0.5), lambda: torch.arange(1.0, 4.5, 0.5)),
    ("aclnnRange", (2, 11, 3), lambda: torch.arange(2, 12, 3)),
    ("aclnnIsInScalarTensor", (float(V[2]), V, False, False),
     lambda: torch.isin(torch.tensor(float(V[2])), T(V))),
    ("aclnnSearchSorteds", (np.sort(V), 0.25, False, False, None),
     lambda: torch.searchsorted(torch.sort(T(V)).values, torch.tensor([0.25]))),
    ("aclnnFakeQuantPerTensorAffineCachemask",
     (A, np.array([0.05], np.float32), np.array([3], np.int32), 1.0, -20, 20),
     lambda: (torch.fake_quantize_per_tensor_affine(T(A), 0.05, 3, -20, 20),)),
    ("aclnnRepeatInterleaveInt", (V, 2, 0), lambda: T(V).repeat_interleave(2)),
    ("aclnnRepeatInterleaveIntWithDim", (A, 3, 0, 0), lambda: T(A).repeat_interleave(3, 0)),
    ("aclnnRepeatInterleave", (V, INDEX[:1] + 1, 15), lambda: T(V).repeat_interleave(3)),
    # integer indices: numpy's advanced indexing (an empty index keeps its dimension; the
    # broadcast indices in place when adjacent, first when a kept dimension parts them)
    ("aclnnIndex", (X, [INDEX[:3] - 1]), lambda: T(X)[torch.from_numpy(INDEX[:3] - 1)]),
    ("aclnnIndex", (X, [EMPTY, INDEX[:3, None] - 3, INDEX[:2]]),
     lambda: T(X)[:, torch.from_numpy(INDEX[:3, None] - 3), torch.from_numpy(INDEX[:2])]),
    ("aclnnIndex", (X, [INDEX[:2] % 2, EMPTY, INDEX[:2]]),
     lambda: T(X)[torch.from_numpy(INDEX[:2] % 2), :, torch.from_numpy(INDEX[:2])]),
    ("aclnnCtcLoss", (LOG_PROBS, np.array([[1, 2], [3, 3]], np.int64), [6, 5], [2, 2], 0, False),
     lambda: (torch.nn.functional.ctc_loss(T(LOG_PROBS), torch.tensor([[1, 2], [3, 3]]),
                                           [6, 5], [2, 2], reduction="none"),)),
]
CALLS_BY_OPERATOR = {name for name, _, _ in CALLS}


@pytest.mark.parametrize(("name", "arguments", "reference"), CALLS,
                         ids=[f"{name}-{index}" for index, (name, _, _) in enumerate(CALLS)])
def test_a_call_without_out_gives_pytorchs_shapes_and_values(name, arguments, reference):
    result = aclnn_py.call(name, *arguments)
    results = result if isinstance(result, tuple) else (result,)
    wanted = reference()
    wanted = wanted if isinstance(wanted, tuple) else (wanted,)
    for actual, expected in zip(results, wanted):
        assert actual.shape == tuple(expected.shape), (actual.shape, tuple(expected.shape))
        if expected.dtype in (torch.int64, torch.bool):
            np.testing.assert_array_equal(actual, expected.numpy())
        else:
            np.testing.assert_allclose(actual, expected.numpy(), rtol=2e-4, atol=2e-4)


def test_an_output_without_a_rule_is_named_with_the_way_out(monkeypatch):
    monkeypatch.delitem(outputs.RULES, "aclnnMatmul")
    with pytest.raises(ValueError, match=r"^aclnnMatmul: out cannot be inferred \(aclnn_py has "
                                         r"no output rule for aclnnMatmul, and its inputs do "
                                         r"not broadcast: self \(4, 5\), mat2 \(5, 4\)\); pass "
                                         r"out= with an array for out of the shape and dtype"):
        aclnn_py.call("aclnnMatmul", A, B, cubeMathType=0)  # (a keyword: not the fast path)


@pytest.mark.parametrize(("name", "arguments", "output", "why"), [
    ("aclnnIndex", (A, [A[:, 0] > 0]), "out", "a bool index selects as many elements"),
    ("aclnnRepeatInterleave", (V, INDEX[:1] + 1, 0), "out", "without outputSize, its extent "
                                                             "is the sum of the values"),
    ("aclnnRepeatInterleaveGrad", (A, INDEX[:1] + 1, 1), "out", "with one repeats value"),
])
def test_an_output_that_depends_on_the_data_is_named_with_the_way_out(name, arguments, output,
                                                                      why):
    with pytest.raises(outputs.OutputNeedsOut,
                       match=rf"^{name}: {output} cannot be inferred \({why}.*\); pass out= "
                             rf"with an array for {output} of the shape and dtype CANN's doc "
                             rf"of {name} gives \(signature\('{name}'\) lists its outputs\)$"):
        aclnn_py.call(name, *arguments)


# Operators whose outputs call() cannot allocate: extents that depend on the data (call()'s
# DATA_DEPENDENT, whose real extents CANN writes back, and outputs.DEPENDS_ON_DATA, which need
# out=) and in-place ones.
NEEDS_OUT = {
    # CANN writes the real extents back (call()'s DATA_DEPENDENT)
    "aclnnMaskedSelect", "aclnnNonzero", "aclnnNonzeroV2", "aclnnUnique",
    "aclnnUniqueConsecutive", "aclnnUniqueDim",
    # outputs.DEPENDS_ON_DATA: the bags of the offsets' values
    "aclnnEmbeddingBag",
    # in place, nothing to allocate
    "aclnnInplaceOne",
    # out's size is the caller's (torch.bincount's max(self) + 1, or minlength)
    "aclnnBincount",
}


def _allocated(name: str, arguments: dict[str, Any]) -> dict[str, outputs.OutputLayout]:
    """The layouts call() gives name's outputs: its rule's, else the broadcast of the tensor
    inputs in the first one's dtype."""
    found = outputs.infer(name, arguments) or {}
    tensors = [v for v in arguments.values() if hasattr(v, "shape")]
    for output in _output_names(name):
        if output not in found:
            found[output] = outputs.OutputLayout(
                np.broadcast_shapes(*(t.shape for t in tensors)), tensors[0].dtype)
    return found


def test_every_computed_operator_with_outputs_is_allocated_as_its_case_says():
    wrong = []
    for name, entries in sorted(CASES.items()):
        if name in NEEDS_OUT or any("TensorList" in p.c_type and p.role == "output"
                                    for p in aclnn_py.signature(name).parameters):
            continue  # (an output tensor list is always given: call() documents it)
        _, make, dtypes = entries[0]
        try:
            arguments, out, _ = make(np.random.default_rng(1), FLOAT_DTYPES[dtypes[0]])
        except pytest.skip.Exception:
            continue  # a case this run cannot make
        if out is None:
            continue  # the case itself lets call() allocate: test_python_kernels checks it
        given = out[0] if isinstance(out, list) else out
        given = given if isinstance(given, tuple) else (given,)
        try:
            layouts = _allocated(name, arguments)
        except (ValueError, IndexError):
            wrong.append(name)
            continue
        for output, array in zip(_output_names(name), given):
            dtype = layouts[output].dtype if outputs.CALLER_DTYPE.get(name) == output \
                else getattr(array, "dtype", None)
            if hasattr(array, "shape") and \
                    layouts[output] != outputs.OutputLayout(array.shape, dtype):
                wrong.append(name)
                break
    assert wrong == []


@pytest.mark.parametrize(("name", "arguments", "out", "message"), [
    ("aclnnChunkCat", ([A, A[:3]], 0, 2), np.empty((2, 3), np.float32),
     r"out has shape \[2, 3\]; the chunks make \[2, 20\]"),
    ("aclnnAll", (X > 0, [1], False), np.empty((2,), np.bool_),
     r"out has shape \[2\]; the reduction gives \[2, 4, 5\]"),
    ("aclnnGatherV2", (X, 1, INDEX), np.empty((2, 3), np.float32),
     r"out has shape \[2, 3\]; it must be \[2, 4, 4, 5\]"),
    ("aclnnIm2col", (X, [2, 2], [1, 1], [0, 0], [1, 1]), np.empty((2, 12), np.float32),
     r"out has shape \[2, 12\]; it must be \[2, 12, 12\]"),
])
def test_a_kernel_refuses_an_out_other_than_its_rules(name, arguments, out, message):
    """The emulator's kernels check the out given against the same output rule call() uses
    to allocate it (aclnn_py.emulator._kernels.check_output_shapes)."""
    with pytest.raises(aclnn_py.AclError, match=message):
        aclnn_py.call(name, *arguments, out=out)
