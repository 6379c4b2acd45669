"""The matmul family: ``Mm``, ``Matmul``, ``BatchMatMul``, ``Mv``, ``Addmm`` and ``Baddbmm``.

As CANN's cube unit does, float16 and bfloat16 multiply in their own precision and accumulate
in float32 (computed here as float32 products: the products of two halves are exact in float32),
rounded once into the output. ``cubeMathType`` (0 keep the dtype, 1 allow float32 to compute in
lower precision, 2 use float16, 3 use HF32) only ever lowers float32's precision on an NPU; the
emulator computes float32 in float32 whatever its value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import builtin, store, widen
from .elementwise import FLOATS


def _product_check(self: np.ndarray, other: np.ndarray, out: np.ndarray) -> None:
    try:
        shape = np.matmul(np.empty(self.shape, np.float32), np.empty(other.shape, np.float32)).shape
    except ValueError:
        raise ValueError(f"shapes {self.shape} and {other.shape} cannot be multiplied") from None
    if shape != out.shape:
        raise ValueError(f"out has shape {out.shape}, the product {shape}")


def _mm_check(self: np.ndarray, mat2: np.ndarray, out: np.ndarray, cubeMathType: int) -> None:
    if self.ndim != 2 or mat2.ndim != 2:
        raise ValueError(f"self and mat2 must be 2-d, got {self.ndim}-d and {mat2.ndim}-d")
    _product_check(self, mat2, out)


def _bmm_check(self: np.ndarray, mat2: np.ndarray, out: np.ndarray, cubeMathType: int) -> None:
    if self.ndim != 3 or mat2.ndim != 3:
        raise ValueError(f"self and mat2 must be 3-d, got {self.ndim}-d and {mat2.ndim}-d")
    _product_check(self, mat2, out)


def _matmul_check(self: np.ndarray, mat2: np.ndarray, out: np.ndarray, cubeMathType: int) -> None:
    _product_check(self, mat2, out)


def _product(self: np.ndarray, mat2: np.ndarray, out: np.ndarray, cubeMathType: int) -> None:
    store(out, np.matmul(widen(self), widen(mat2)))


builtin("aclnnMm", dtypes=FLOATS, check=_mm_check)(_product)
builtin("aclnnBatchMatMul", dtypes=FLOATS, check=_bmm_check)(_product)
builtin("aclnnMatmul", dtypes=FLOATS, check=_matmul_check)(_product)


@builtin("aclnnMv", dtypes=FLOATS)
def mv(self: np.ndarray, vec: np.ndarray, out: np.ndarray, cubeMathType: int) -> None:
    store(out, np.matmul(widen(self), widen(vec)))


def _scaled(value: Any, default: float = 1.0) -> np.float32:
    return np.float32(default if value is None else value)


@builtin("aclnnAddmm", dtypes=FLOATS)
def addmm(self: np.ndarray, mat1: np.ndarray, mat2: np.ndarray, beta: Any, alpha: Any,
          out: np.ndarray, cubeMathType: int) -> None:
    product = np.matmul(widen(mat1), widen(mat2))
    store(out, _scaled(beta) * widen(self) + _scaled(alpha) * product)


@builtin("aclnnBaddbmm", dtypes=FLOATS)
def baddbmm(self: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: Any, alpha: Any,
            out: np.ndarray, cubeMathType: int) -> None:
    product = np.matmul(widen(batch1), widen(batch2))
    store(out, _scaled(beta) * widen(self) + _scaled(alpha) * product)
