"""The matmul family: ``Mm``, ``Matmul``, ``BatchMatMul``, ``Mv``, ``Addmm``, ``Baddbmm`` and
``Gemm``.

As CANN's cube unit does, float16 and bfloat16 multiply in their own precision and accumulate
in float32 (computed here as float32 products: the products of two halves are exact in float32),
rounded once into the output. ``cubeMathType`` (0 keep the dtype, 1 allow float32 to compute in
lower precision, 2 use float16, 3 use HF32) only ever lowers float32's precision on an NPU; the
emulator computes float32 in float32 whatever its value.

The phase-1 checks are what each operator's op_api source (hicann ops-nn ``matmul/``) checks
beyond the rules of aclnn_py/data/phase1_rules.json (dtypes, ranks, cubeMathType's values, the
formats refused): the shapes the product needs, and what out must be. The results follow those
sources too: an empty product writes nothing, a product of empty operands zeros, and
``beta`` or ``alpha`` of 0 leaves its term out (a NaN there does not reach out).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._c.codes import constant
from ...ops.dtypes import Dtypes
from ...ops.outputs import infer
from . import Refusal, check_output_shapes, store, tensor_format, widen
from .elementwise import FLOATS
from .elementwise import register as builtin

_EPSILON = float(np.finfo(np.float32).eps)


def product_shape(first: tuple[int, ...], second: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of ``matmul`` of tensors of these shapes (numpy's and PyTorch's rules: a 1-d
    operand is a row or column, batch dimensions broadcast), or ValueError."""
    if not first or not second:
        raise ValueError(f"shapes {first} and {second} cannot be multiplied: a 0-d tensor has "
                         "no matrix")
    a = (1,) + first if len(first) == 1 else first
    b = second + (1,) if len(second) == 1 else second
    if a[-1] != b[-2]:
        raise ValueError(f"shapes {first} and {second} cannot be multiplied: {a[-1]} columns "
                         f"against {b[-2]} rows")
    try:
        batch = np.broadcast_shapes(a[:-2], b[:-2])
    except ValueError:
        raise ValueError(f"shapes {first} and {second} cannot be multiplied: their batch "
                         "dimensions do not broadcast") from None
    rows = () if len(first) == 1 else (a[-2],)
    columns = () if len(second) == 1 else (b[-1],)
    return tuple(batch) + rows + columns

FRACTAL_NZ = constant("ACL_FORMAT_FRACTAL_NZ")
INNER_NULLPTR = constant("ACLNN_ERR_INNER_NULLPTR")  # 561103: a step of CANN's graph failed
FLOAT_EPSILON = float(np.finfo(np.float32).eps)


def _shape(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _broadcast(first: tuple[int, ...], second: tuple[int, ...]) -> tuple[int, ...] | None:
    """The broadcast shape of two shapes (opbase's BroadcastInferShape), None when they do
    not broadcast."""
    rank = max(len(first), len(second))
    a, b = (1,) * (rank - len(first)) + first, (1,) * (rank - len(second)) + second
    if any(x != y and x != 1 and y != 1 for x, y in zip(a, b)):
        return None
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def _not_nz(**tensors: np.ndarray) -> None:
    """The ``self``/``out`` of these operators cannot be FRACTAL_NZ (their op_api's
    CheckFormat compares the storage format with FORMAT_FRACTAL_NZ: only that one)."""
    for name, tensor in tensors.items():
        if tensor_format(tensor) == FRACTAL_NZ:
            raise ValueError(f"{name} has format FRACTAL_NZ, which is not supported")


def _is_zero(value: Any) -> bool:
    """CANN's test of an aclScalar for 0: |ToFloat()| at most float32's epsilon."""
    return abs(float(value)) <= FLOAT_EPSILON


# ---- Mm, BatchMatMul, Matmul ----------------------------------------------------------------


def _ranks(first: str, a: np.ndarray, second: str, b: np.ndarray, rank: int) -> None:
    if a.ndim != rank or b.ndim != rank:
        raise ValueError(f"{first} and {second} must be {rank}-d, got {a.ndim}-d and "
                         f"{b.ndim}-d")


def _mm_check(self: np.ndarray, mat2: np.ndarray, out: np.ndarray, cubeMathType: int) -> None:
    # ops-nn matmul/mat_mul_v3/op_host/op_api/aclnn_mm.cpp: CheckShapeValid (the k-axis),
    # CheckOutputShapeValid (out is [m, n]); the ranks (2) are rules.
    if self.shape[1] != mat2.shape[0]:
        raise ValueError(f"the k-axis of self {_shape(self.shape)} and mat2 "
                         f"{_shape(mat2.shape)} differ")
    check_output_shapes("aclnnMm", {"self": self, "mat2": mat2}, {"out": out})


def _bmm_check(self: np.ndarray, mat2: np.ndarray, out: np.ndarray, cubeMathType: int) -> None:
    # ops-nn matmul/batch_mat_mul_v3/op_host/op_api/aclnn_batch_matmul.cpp CheckShape: a
    # FRACTAL_NZ mat2 has neither k nor n of 1, the k-axis, the batch (equal, or one of them
    # 1), out [max batch, m, n]; the ranks (3) are rules.
    _not_nz(self=self, out=out)  # aclnn_batch_matmul.cpp CheckFormat
    if tensor_format(mat2) == FRACTAL_NZ and 1 in mat2.shape[1:]:
        raise ValueError(f"mat2 {_shape(mat2.shape)} is FRACTAL_NZ: its k-axis and n-axis "
                         "cannot be 1")
    if self.shape[2] != mat2.shape[1]:
        raise ValueError(f"the k-axis of self {_shape(self.shape)} and mat2 "
                         f"{_shape(mat2.shape)} differ")
    if self.shape[0] != mat2.shape[0] and 1 not in (self.shape[0], mat2.shape[0]):
        raise ValueError(f"the batch of self {_shape(self.shape)} and mat2 "
                         f"{_shape(mat2.shape)} must be equal, or one of them 1")
    check_output_shapes("aclnnBatchMatMul", {"self": self, "mat2": mat2}, {"out": out})


def _matmul_check(self: np.ndarray, mat2: np.ndarray, out: np.ndarray,
                  cubeMathType: int) -> None:
    # ops-nn matmul/mat_mul_v3/op_host/op_api/aclnn_matmul.cpp CheckShapeValid: the k-axis
    # (mat2's first dim when it has 1 or 2, else its last but one), the batch dims broadcast
    # when both have 2 dims or more; the ranks (1 to 6) are rules. out's shape is not checked:
    # the product is reshaped to it (CommonPostProcessWithReshape), which fails with
    # ACLNN_ERR_INNER_NULLPTR unless it has as many elements (ops-math
    # conversion/reshape/op_api/reshape.cpp: and not none); with an empty operand out is
    # filled with zeros whatever its shape, or left as it is when it is empty too.
    _not_nz(self=self, out=out)  # aclnn_matmul.cpp CheckFormat
    k = mat2.shape[0] if mat2.ndim <= 2 else mat2.shape[-2]
    if self.shape[-1] != k:
        raise ValueError(f"the k-axis of self {_shape(self.shape)} and mat2 "
                         f"{_shape(mat2.shape)} differ")
    layouts = infer("aclnnMatmul", {"self": self, "mat2": mat2})  # its output rule
    if layouts is None:
        raise ValueError(f"the batch dims of self {_shape(self.shape)} and mat2 "
                         f"{_shape(mat2.shape)} do not broadcast")
    if self.size == 0 or mat2.size == 0:
        return
    shape = layouts["out"].shape
    if out.size != int(np.prod(shape)):
        raise Refusal(f"out has shape {_shape(out.shape)}: the product, {_shape(shape)}, cannot "
                      "be reshaped to it (a different number of elements)", INNER_NULLPTR)


def _product(self: np.ndarray, mat2: np.ndarray, out: np.ndarray, cubeMathType: int) -> None:
    a, b = widen(self), widen(mat2)
    if out.dtype == a.dtype == b.dtype and out.flags.c_contiguous and out.ndim >= 2 \
            and a.ndim >= 2 and b.ndim >= 2 and not np.may_share_memory(out, self) \
            and not np.may_share_memory(out, mat2):
        np.matmul(a, b, out=out)
        return
    store(out, np.matmul(a, b))


def _batch_product(self: np.ndarray, mat2: np.ndarray, out: np.ndarray,
                   cubeMathType: int) -> None:
    # aclnn_batch_matmul.cpp: an empty result (self's batch or m, or mat2's n, 0) writes
    # nothing (BatchmmEmptyTensorGraph).
    product = np.matmul(widen(self), widen(mat2))
    if product.size:
        store(out, product)


def _reshaped_product(self: np.ndarray, mat2: np.ndarray, out: np.ndarray,
                      cubeMathType: int) -> None:
    if self.size == 0 or mat2.size == 0:
        if out.size:
            store(out, np.zeros(out.shape, np.float32))
        return
    store(out, np.matmul(widen(self), widen(mat2)).reshape(out.shape))


builtin("aclnnMm", dtypes=FLOATS, check=_mm_check)(_product)
builtin("aclnnBatchMatMul", dtypes=FLOATS, check=_bmm_check)(_batch_product)
builtin("aclnnMatmul", dtypes=FLOATS, check=_matmul_check)(_reshaped_product)


# ---- Mv -------------------------------------------------------------------------------------


def _mv_check(self: np.ndarray, vec: np.ndarray, out: np.ndarray, cubeMathType: int) -> None:
    # ops-nn matmul/mv/op_host/op_api/aclnn_mv.cpp: CheckDtypeSame (self's dtype is vec's
    # unless self is empty; out's is vec's is a rule), CheckShape (vec [m], out [n]).
    if self.size and self.dtype != vec.dtype:
        raise ValueError(f"self has dtype {self.dtype.name} and vec {vec.dtype.name}: they "
                         "must have the same dtype (unless self is empty)")
    if vec.shape != (self.shape[1],):
        raise ValueError(f"vec has shape {_shape(vec.shape)}; it must be [{self.shape[1]}], "
                         f"the columns of self {_shape(self.shape)}")
    check_output_shapes("aclnnMv", {"self": self, "vec": vec}, {"out": out})


@builtin("aclnnMv", dtypes=FLOATS, check=_mv_check)
def mv(self: np.ndarray, vec: np.ndarray, out: np.ndarray, cubeMathType: int) -> None:
    store(out, np.matmul(widen(self), widen(vec)))


# ---- Addmm, Baddbmm -------------------------------------------------------------------------


def _addmm_check(self: np.ndarray, mat1: np.ndarray, mat2: np.ndarray, beta: Any, alpha: Any,
                 out: np.ndarray, cubeMathType: int) -> None:
    # ops-nn matmul/mat_mul_v3/op_host/op_api/aclnn_addmm.cpp: CheckMatmul (the k-axis),
    # CheckBroadcast (self and [n, p] broadcast), CheckOutShape (out is [n, p]; empty when n
    # or p is 0); the ranks (mat1, mat2 and out 2, self 1 or 2) are rules.
    _not_nz(self=self)  # aclnn_addmm.cpp CheckMatmul
    if mat1.shape[1] != mat2.shape[0]:
        raise ValueError(f"the k-axis of mat1 {_shape(mat1.shape)} and mat2 "
                         f"{_shape(mat2.shape)} differ")
    product = (mat1.shape[0], mat2.shape[1])
    if _broadcast(self.shape, product) is None:
        raise ValueError(f"self {_shape(self.shape)} does not broadcast with mat1 @ mat2, "
                         f"{_shape(product)}")
    if 0 in product:
        if out.size:
            raise ValueError(f"out has shape {_shape(out.shape)}; mat1 @ mat2 is empty "
                             f"({_shape(product)}): out must be empty")
    elif out.shape[:2] != product:
        raise ValueError(f"out has shape {_shape(out.shape)}; it must be {_shape(product)}")


@builtin("aclnnAddmm", dtypes=FLOATS, check=_addmm_check)
def addmm(self: np.ndarray, mat1: np.ndarray, mat2: np.ndarray, beta: Any, alpha: Any,
          out: np.ndarray, cubeMathType: int) -> None:
    # aclnn_addmm.cpp ExecAddmmGraph, CreateAddmmGraphImpl: an empty self or product writes
    # nothing; alpha 0 (or an empty k) gives beta * self, beta 0 alpha * mat1 @ mat2.
    if self.size == 0 or out.size == 0:
        return
    scaled = np.float32(beta) * widen(self)
    if _is_zero(alpha) or mat1.size == 0:
        result = scaled
    else:
        product = np.float32(alpha) * np.matmul(widen(mat1), widen(mat2))
        result = product if _is_zero(beta) else scaled + product
    store(out, np.broadcast_to(result, out.shape))


def _baddbmm_check(self: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: Any,
                   alpha: Any, out: np.ndarray, cubeMathType: int) -> None:
    # ops-nn matmul/batch_mat_mul_v3/op_host/op_api/aclnn_baddbmm.cpp: CheckShape (the
    # k-axis, the batch dims broadcast, self empty exactly when batch1 @ batch2 is),
    # CheckBroadCast (self broadcasts with batch1 @ batch2, out is that shape, which batch1 @
    # batch2 has already), CheckFormat (batch1, batch2 and out have one format); the ranks
    # (batch1, batch2 and out 3, self 1 to 3) are rules.
    if batch1.shape[2] != batch2.shape[1]:
        raise ValueError(f"the k-axis of batch1 {_shape(batch1.shape)} and batch2 "
                         f"{_shape(batch2.shape)} differ")
    if batch1.shape[0] != batch2.shape[0] and 1 not in (batch1.shape[0], batch2.shape[0]):
        raise ValueError(f"the batch of batch1 {_shape(batch1.shape)} and batch2 "
                         f"{_shape(batch2.shape)} do not broadcast")
    product = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    if (self.size == 0) != (0 in product):
        raise ValueError(f"self {_shape(self.shape)} and batch1 @ batch2 {_shape(product)} "
                         "must both be empty, or neither")
    shape = _broadcast(self.shape, product)
    if shape is None:
        raise ValueError(f"self {_shape(self.shape)} does not broadcast with batch1 @ batch2, "
                         f"{_shape(product)}")
    if out.shape != shape:
        raise ValueError(f"out has shape {_shape(out.shape)}; it must be {_shape(shape)}")
    if any(n != 1 and p == 1 for n, p in zip(shape[-3:], product)):
        raise ValueError(f"batch1 @ batch2 {_shape(product)} must have the broadcast shape "
                         f"of self and itself, {_shape(shape)}")
    formats = {tensor_format(batch1), tensor_format(batch2), tensor_format(out)}
    if len(formats) > 1:
        raise ValueError("batch1, batch2 and out must have one format")


@builtin("aclnnBaddbmm", dtypes=FLOATS, check=_baddbmm_check)
def baddbmm(self: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: Any, alpha: Any,
            out: np.ndarray, cubeMathType: int) -> None:
    # aclnn_baddbmm.cpp: an empty product writes nothing; beta 0 gives alpha * batch1 @ batch2
    # (BaddbmmBeta0Graph).
    if out.size == 0:
        return
    product = np.float32(alpha) * np.matmul(widen(batch1), widen(batch2))
    result = product if _is_zero(beta) else np.float32(beta) * widen(self) + product
    store(out, np.broadcast_to(result, out.shape))


# ---- Addbmm ----------------------------------------------------------------------------------


def _addbmm_check(self: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: Any,
                  alpha: Any, out: np.ndarray, cubeMathType: int) -> None:
    # ops-nn matmul/batch_mat_mul_v3/op_host/op_api/aclnn_addbmm.cpp: CheckShape (the k-axis,
    # the batch broadcasts, self empty exactly when batch1 @ batch2's matrices are),
    # CheckBroadCast (self broadcasts with [n, p] to it, out is [n, p]), CheckAddbmmFormat;
    # the ranks (batch1 and batch2 3, self 0 to 2) are rules.
    if batch1.shape[2] != batch2.shape[1]:
        raise ValueError(f"the k-axis of batch1 {_shape(batch1.shape)} and batch2 "
                         f"{_shape(batch2.shape)} differ")
    if batch1.shape[0] != batch2.shape[0] and 1 not in (batch1.shape[0], batch2.shape[0]):
        raise ValueError("self's batch dim and mat2's batch dim can not broadcast")
    product = (batch1.shape[1], batch2.shape[2])
    if (self.size == 0) != (0 in product):
        raise ValueError(f"self {_shape(self.shape)} and batch1 @ batch2's matrices "
                         f"{_shape(product)} must both be empty, or neither")
    if _broadcast(self.shape, product) != product:
        raise ValueError(f"Shape of self {_shape(self.shape)} and batch1@batch2's last two "
                         f"dims {_shape(product)} can't broadcast to them")
    if out.shape != product:
        raise ValueError(f"Shape of out should be {_shape(product)}, but current is "
                         f"{_shape(out.shape)}")
    if tensor_format(batch1) != tensor_format(batch2):
        raise ValueError("Format of batch1 and batch2 should be equal")


@builtin("aclnnAddbmm", dtypes=FLOATS, check=_addbmm_check)
def addbmm(self: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: Any, alpha: Any,
           out: np.ndarray, cubeMathType: int) -> None:
    """out = beta self + alpha sum_b batch1[b] @ batch2[b] (aclnnAddbmm.md); aclnn_addbmm.cpp's
    graphs: alpha 0 leaves the product out, beta 0 self (a NaN there does not reach out),
    both 0 fill zeros; an empty result writes nothing."""
    if out.size == 0:
        return
    result: Any = np.zeros(out.shape, np.float32)
    if not _is_zero(alpha):
        # the batch's products summed as one product: [n, b k] @ [b k, p]
        batch = max(batch1.shape[0], batch2.shape[0])
        first = np.broadcast_to(widen(batch1), (batch,) + batch1.shape[1:])
        second = np.broadcast_to(widen(batch2), (batch,) + batch2.shape[1:])
        rows = first.transpose(1, 0, 2).reshape(first.shape[1], -1)
        summed = np.matmul(rows, second.reshape(-1, second.shape[2]))
        result = np.float32(alpha) * summed
    if not _is_zero(beta):
        result = np.float32(beta) * widen(self).astype(np.float32) + result
    store(out, np.broadcast_to(result, out.shape))


# ---- Gemm ------------------------------------------------------------------------------------


def _gemm_check(A: np.ndarray, B: np.ndarray, C: np.ndarray, alpha: float, beta: float,
                transA: int, transB: int, out: np.ndarray, cubeMathType: int) -> None:
    # ops-nn matmul/gemm/op_host/op_api/aclnn_gemm.cpp: CheckMatmul (A and B 2-d, the k-axis
    # after the transposes), CheckBroadcast (C broadcasts to [m, n]), CheckOutShape
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError(f"A and B must be 2-d, got {A.ndim}-d and {B.ndim}-d")
    a = A.T if transA else A
    b = B.T if transB else B
    if a.shape[1] != b.shape[0]:
        raise ValueError("the k-axis of the two inputs are different")
    wanted = (a.shape[0], b.shape[1])
    if _broadcast(C.shape, wanted) != wanted:
        raise ValueError(f"C {_shape(C.shape)} does not broadcast to {_shape(wanted)}")
    if out.shape != wanted:
        raise ValueError(f"out has shape {_shape(out.shape)}; it must be {_shape(wanted)}")


@builtin("aclnnGemm", dtypes=FLOATS, check=_gemm_check)
def gemm(A: np.ndarray, B: np.ndarray, C: np.ndarray, alpha: float, beta: float, transA: int,
         transB: int, out: np.ndarray, cubeMathType: int) -> None:
    # aclnnGemm.md: out = alpha (op(A) @ op(B)) + beta C, op transposing when trans is nonzero;
    # aclnn_gemm.cpp GemmMulEmptyProcess: an empty product gives beta C broadcast to out
    a = widen(A.T if transA else A)
    b = widen(B.T if transB else B)
    scaled = np.float32(beta) * widen(C)
    product = np.float32(alpha) * np.matmul(a, b) if a.shape[1] else 0
    result = scaled + product
    store(out, np.broadcast_to(result, out.shape))


# ---- FRACTAL_NZ weights: TransMatmulWeight, MatmulWeightNz, BatchMatMulWeightNz ---------------
#
# How the emulator holds a FRACTAL_NZ tensor: as CANN does. aclnnTransMatmulWeight's phase 1
# gives the weight storage format FRACTAL_NZ and the storage shape of TransData's result
# (hicann/ops-math c41933244 conversion/trans_data/op_api/aclnn_trans_matmul_weight.cpp,
# aclnnTransMatmulWeightGetWorkspaceSize; done by the emulator's C side, ops_generic.c
# to_fractal_nz), keeping its view shape [..., a, b]; its launch writes the data in that layout.
# The layout (ops-math conversion/trans_data/README.md, ND <-> FRACTAL_NZ: c0 16 for float32,
# int32, float16 and bfloat16, 32 for int8 and uint8; ops-nn matmul/quant_batch_matmul_v3/docs/
# aclnnQuantMatmulWeightNz.md: an int8 [k, n] as (batch, n1, k1, k0, n0), k0 16, n0 32):
# storage [..., ceil(b / c0), ceil(a / 16), 16, c0], element [i, j] of each matrix at
# [j // c0, i // 16, i % 16, j % c0], the padding zeros. A client copying the weight back sees
# those blocks; every consumer of a FRACTAL_NZ tensor reads its matrix back with from_nz.


def nz_c0(dtype: np.dtype) -> int:
    """The columns of one FRACTAL_NZ block: 32 for a 1-byte dtype, else 16."""
    return 32 if dtype.itemsize == 1 else 16


def nz_storage_shape(shape: tuple[int, ...], dtype: np.dtype) -> tuple[int, ...]:
    """The FRACTAL_NZ storage shape of an ND view ``shape`` (2-d or more) of ``dtype``."""
    c0 = nz_c0(dtype)
    rows, columns = shape[-2], shape[-1]
    return tuple(shape[:-2]) + (-(-columns // c0), -(-rows // 16), 16, c0)


def to_nz(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` ([..., a, b]) in FRACTAL_NZ blocks (its storage shape, padding zeros)."""
    c0 = nz_c0(matrix.dtype)
    *batch, rows, columns = matrix.shape
    storage = nz_storage_shape(matrix.shape, matrix.dtype)
    padded = np.zeros(tuple(batch) + (storage[-3] * 16, storage[-4] * c0), matrix.dtype)
    padded[..., :rows, :columns] = matrix
    blocks = padded.reshape(tuple(batch) + (storage[-3], 16, storage[-4], c0))
    return np.ascontiguousarray(np.moveaxis(blocks, -2, -4))


def _storage(array: np.ndarray, count: int) -> np.ndarray:
    """``count`` elements of ``array``'s memory from its first element on: a FRACTAL_NZ
    tensor's blocks (the emulator hands a kernel its whole storage shape's bytes)."""
    base: Any = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    raw = np.frombuffer(base, np.uint8)
    start = array.__array_interface__["data"][0] - raw.__array_interface__["data"][0]
    if start < 0 or start + count * array.itemsize > raw.size:
        raise Refusal(f"the FRACTAL_NZ tensor's memory holds fewer than the {count} elements "
                      "of its storage shape", INNER_NULLPTR)
    return raw[start:start + count * array.itemsize].view(array.dtype)


def from_nz(array: np.ndarray) -> np.ndarray:
    """The ND matrix ([..., a, b], ``array``'s view shape) of a FRACTAL_NZ tensor."""
    storage = nz_storage_shape(array.shape, array.dtype)
    blocks = _storage(array, int(np.prod(storage))).reshape(storage)
    *batch, rows, columns = array.shape
    matrix = np.moveaxis(blocks, -4, -2).reshape(
        tuple(batch) + (storage[-3] * 16, storage[-4] * storage[-1]))
    return matrix[..., :rows, :columns]


def weight(array: np.ndarray) -> np.ndarray:
    """A weight as its matrix, FRACTAL_NZ or ND."""
    return from_nz(array) if tensor_format(array) == FRACTAL_NZ else array


def recorded(array: np.ndarray) -> np.ndarray:
    """What a trace of launches keeps of a tensor (kernels/trace.py): a copy, a FRACTAL_NZ
    one's matrix (its blocks when they cannot be read)."""
    try:
        if tensor_format(array) == FRACTAL_NZ:
            return np.array(from_nz(array))
    except (ValueError, Refusal):
        pass
    return array.copy()


_TRANS_WEIGHT = Dtypes(("float16", "bfloat16", "int8", "uint8"))


def _trans_weight_check(mmWeightRef: np.ndarray) -> None:
    # ops-math aclnn_trans_matmul_weight.cpp: CheckFormatValid (the storage format ND),
    # CheckShapeDim / CheckShapeDimV2 (2 to 6 dims on Atlas A2); its dtypes
    # (ASCEND910B_DTYPE_DTYPE_SUPPORT_LIST: float16, bfloat16, int8, float8_e4m3fn, hifloat8,
    # uint8; the float8 ones have no numpy dtype) are the kernel's.
    if tensor_format(mmWeightRef) != constant("ACL_FORMAT_ND"):
        raise ValueError("the format of mmWeightRef must be ND")
    if mmWeightRef.size and not 2 <= mmWeightRef.ndim <= 6:
        raise ValueError(f"mmWeightRef has {mmWeightRef.ndim} dimensions; 2 to 6 are supported")


@builtin("aclnnTransMatmulWeight", dtypes={"mmWeightRef": _TRANS_WEIGHT},
         check=_trans_weight_check)
def trans_matmul_weight(mmWeightRef: np.ndarray) -> None:
    """The weight's matrix written in place as FRACTAL_NZ blocks (its storage shape)."""
    if mmWeightRef.size == 0:
        return
    matrix = np.array(mmWeightRef)  # the ND data, before its memory is rewritten
    blocks = to_nz(matrix)
    _storage(mmWeightRef, blocks.size)[...] = blocks.reshape(-1)


def _weight_nz_shapes(self: np.ndarray, mat2: np.ndarray, out: np.ndarray,
                      operator: str) -> None:
    if tensor_format(mat2) != FRACTAL_NZ:
        raise ValueError("Format of mat2 must be FRACTAL_NZ (made by aclnnTransMatmulWeight)")
    _not_nz(self=self, out=out)
    if self.shape[-1] != mat2.shape[-2]:
        raise ValueError(f"the k-axis of self {_shape(self.shape)} and mat2 "
                         f"{_shape(mat2.shape)} differ")
    if infer(operator, {"self": self, "mat2": mat2}) is None:  # its output rule
        raise ValueError(f"the batch dims of self {_shape(self.shape)} and mat2 "
                         f"{_shape(mat2.shape)} do not broadcast")
    check_output_shapes(operator, {"self": self, "mat2": mat2}, {"out": out})


def _matmul_weight_nz_check(self: np.ndarray, mat2: np.ndarray, out: np.ndarray,
                            cubeMathType: int) -> None:
    # ops-nn matmul/mat_mul_v3/op_host/op_api/aclnn_matmul.cpp: CheckWeightNzDtypeValid (a
    # float32 self with a float16 out refused under KEEP_DTYPE, 0; self and mat2 not float16
    # and bfloat16 together), CheckWeightNzShapeValid (mat2 FRACTAL_NZ, self and mat2 2-d,
    # mat2's n and k not 1, the k-axis)
    if cubeMathType == 0 and out.dtype == np.float16 and self.dtype == np.float32:
        raise ValueError("Input tensor's dtype[DT_FLOAT] should be same with output's "
                         "dtype[DT_FLOAT16]")
    if {self.dtype.name, mat2.dtype.name} == {"float16", "bfloat16"}:
        raise ValueError(f"self ({self.dtype.name}) and mat2 ({mat2.dtype.name}) must be both "
                         "bfloat16 or both float16")
    if self.ndim != 2 or mat2.ndim != 2:
        raise ValueError(f"self and mat2 must be 2-d, got {self.ndim}-d and {mat2.ndim}-d")
    if 1 in mat2.shape:
        raise ValueError(f"mat2 {_shape(mat2.shape)} in FRACTAL_NZ cannot have n or k of 1")
    _weight_nz_shapes(self, mat2, out, "aclnnMatmulWeightNz")


_WEIGHT_NZ_16 = Dtypes(("float16", "bfloat16"))


def _batch_matmul_weight_nz_check(self: np.ndarray, mat2: np.ndarray, out: np.ndarray,
                                  cubeMathType: int) -> None:
    # ops-nn matmul/batch_mat_mul_v3/op_host/op_api/aclnn_batch_matmul.cpp
    # CheckDtypeValidWeightNz: self and mat2 of one dtype, out float32 or theirs; CheckShape
    if self.dtype != mat2.dtype:
        raise ValueError(f"self's dtype [{self.dtype.name}] and mat2's dtype "
                         f"[{mat2.dtype.name}] are not equal")
    if out.dtype != np.float32 and out.dtype != self.dtype:
        raise ValueError(f"self's dtype [{self.dtype.name}] and out's dtype "
                         f"[{out.dtype.name}] are not equal")
    if self.ndim != 3 or mat2.ndim != 3:
        raise ValueError(f"self and mat2 must be 3-d, got {self.ndim}-d and {mat2.ndim}-d")
    _weight_nz_shapes(self, mat2, out, "aclnnBatchMatMulWeightNz")


def _nz_product(self: np.ndarray, mat2: np.ndarray, out: np.ndarray, cubeMathType: int) -> None:
    if out.size:
        store(out, np.matmul(widen(self), widen(from_nz(mat2))))


builtin("aclnnMatmulWeightNz", dtypes=FLOATS, check=_matmul_weight_nz_check)(_nz_product)
builtin("aclnnBatchMatMulWeightNz", dtypes={"self": _WEIGHT_NZ_16, "mat2": _WEIGHT_NZ_16},
        check=_batch_matmul_weight_nz_check)(_nz_product)
