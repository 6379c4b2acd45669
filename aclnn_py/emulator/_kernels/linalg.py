"""Linear algebra of ops-math math/ and ops-nn index/: aclnnInverse, aclnnLinalgCholesky,
aclnnTriangularSolve, aclnnLogdet, aclnnSlogdet, aclnnLinalgQr, aclnnQr, aclnnSvd,
aclnnCdist and aclnnCdistBackward.

Each works on batches of matrices (the last two dimensions) with numpy's LAPACK routines, as
PyTorch's functions of the same names do; float16 and bfloat16 compute in float32 (CANN's
op_api casts them so, e.g. ops-nn index/matrix_inverse/op_host/op_api/aclnn_inverse.cpp) and are
rounded once. A singular matrix gives what LAPACK gives where PyTorch's CPU function does
(inf or NaN), not an error: a device kernel does not raise.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from ...ops.dtypes import Dtypes
from . import INNER_NULLPTR, Refusal, check_output_shapes, store
from .elementwise import register

_MAX_RANK = 8
_REAL_COMPLEX = Dtypes(("float32", "float64", "complex64", "complex128"))


def _compute(dtype: np.dtype) -> Any:
    """float32 for the 16-bit floats, else the dtype itself."""
    return np.float32 if dtype.kind == "V" or dtype.itemsize == 2 else dtype


def _square_check(name: str, value: np.ndarray, empty_ok: bool = False) -> None:
    """At least 2 and at most 8 dimensions, the last two equal."""
    if empty_ok and value.size == 0:
        return
    if not 2 <= value.ndim <= _MAX_RANK:
        raise ValueError(f"{name} has {value.ndim} dimensions: it must have 2 to {_MAX_RANK}")
    if value.shape[-1] != value.shape[-2]:
        raise ValueError(f"{name} must be batches of square matrices, but they are "
                         f"{value.shape[-2]} by {value.shape[-1]}")


def _each(function: Any, matrices: np.ndarray) -> Any:
    """``function`` (a numpy.linalg routine) of the batch; when LAPACK refuses a matrix
    (singular, not positive definite), that matrix's result is NaN and the others are
    computed one by one."""
    try:
        return function(matrices)
    except np.linalg.LinAlgError:
        pass
    flat = matrices.reshape((-1,) + matrices.shape[-2:])
    result = np.full(flat.shape, np.nan, matrices.dtype)
    for index, matrix in enumerate(flat):  # only after LAPACK refused one of them
        with contextlib.suppress(np.linalg.LinAlgError):
            result[index] = function(matrix)
    return result.reshape(matrices.shape)


# ---- inverse and cholesky -------------------------------------------------------------------

# ops-nn index/matrix_inverse/op_host/op_api/aclnn_inverse.cpp: DTYPE_SUPPORT_LIST
_INVERSE = Dtypes(("float32", "float64", "complex64", "complex128", "float16"))


def _inverse_check(self: np.ndarray, out: np.ndarray) -> None:
    """aclnn_inverse.cpp: CheckShape: out has self's shape; at most 8 dimensions; a non-empty
    self has at least 2, the last two equal."""
    if out.shape != self.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be self's "
                         f"{list(self.shape)}")
    if self.ndim > _MAX_RANK:
        raise ValueError(f"self has {self.ndim} dimensions: at most {_MAX_RANK}")
    _square_check("self", self, empty_ok=True)


@register("aclnnInverse", dtypes=_INVERSE, check=_inverse_check)
def inverse(self: np.ndarray, out: np.ndarray) -> None:
    """out = self^-1 per matrix (LAPACK's; a singular matrix gives inf or NaN)."""
    if out.size == 0:
        return
    store(out, _each(np.linalg.inv, self.astype(_compute(self.dtype))))


# ops-math math/cholesky/op_api/aclnn_linalg_cholesky.cpp: ASCEND910B_DTYPE_DTYPE_SUPPORT_LIST
_CHOLESKY = Dtypes(("float32", "bfloat16", "float16"))


def _cholesky_check(self: np.ndarray, upper: bool, out: np.ndarray) -> None:
    """aclnn_linalg_cholesky.cpp: out has self's shape and dtype (the doc); a non-empty self
    is square with a last dimension of at most 8192."""
    if out.shape != self.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be self's "
                         f"{list(self.shape)}")
    _square_check("self", self, empty_ok=True)
    if self.size and self.shape[-1] > 8192:
        raise ValueError(f"self's last dimension is {self.shape[-1]}: at most 8192")


@register("aclnnLinalgCholesky", dtypes=_CHOLESKY, check=_cholesky_check)
def linalg_cholesky(self: np.ndarray, upper: bool, out: np.ndarray) -> None:
    """out = L with self = L L^T (lower), or U = L^T when upper (torch.linalg.cholesky);
    a matrix that is not positive definite gives NaN."""
    if out.size == 0:
        return
    lower = _each(np.linalg.cholesky, self.astype(np.float32))
    store(out, np.swapaxes(lower, -1, -2) if upper else lower)


# ---- triangular solve -----------------------------------------------------------------------


def _triangular_check(self: np.ndarray, A: np.ndarray, upper: bool, transpose: bool,
                      unitriangular: bool, xOut: np.ndarray, mOut: Any) -> None:
    """ops-math math/triangular_solve/op_host/op_api/aclnn_triangular_solve.cpp: CheckDtype
    (self, A, xOut and mOut of one dtype) and CheckShape (2 to 8 dimensions; A square (*, m,
    m), self (*, m, n); their batch dimensions broadcast; xOut the broadcast (*, m, n), mOut
    the broadcast (*, m, m)); unitriangular only for float32 (CalcuUnitriangular)."""
    for name, value in (("A", A), ("xOut", xOut), ("mOut", mOut)):
        if value is not None and value.dtype != self.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be self's "
                             f"{self.dtype.name}")
    for name, value in (("self", self), ("A", A), ("xOut", xOut), ("mOut", mOut)):
        if value is not None and not 2 <= value.ndim <= _MAX_RANK:
            raise ValueError(f"{name} has {value.ndim} dimensions: it must have 2 to "
                             f"{_MAX_RANK}")
    _square_check("A", A)
    if self.shape[-2] != A.shape[-2]:
        raise ValueError(f"each A matrix is {A.shape[-2]} by {A.shape[-1]} but each self "
                         f"matrix is {self.shape[-2]} by {self.shape[-1]}")
    try:
        batch = np.broadcast_shapes(A.shape[:-2], self.shape[:-2])
    except ValueError:
        raise ValueError(f"the batch dimensions of A {list(A.shape[:-2])} and self "
                         f"{list(self.shape[:-2])} do not broadcast") from None
    expected = batch + self.shape[-2:]
    if xOut.shape != expected:
        raise ValueError(f"xOut has shape {list(xOut.shape)}: it must be {list(expected)}")
    if mOut is not None and mOut.shape != batch + A.shape[-2:]:
        raise ValueError(f"mOut has shape {list(mOut.shape)}: it must be "
                         f"{list(batch + A.shape[-2:])}")
    if unitriangular and self.dtype != np.float32:
        raise ValueError("unitriangular is supported for float32 only")


@register("aclnnTriangularSolve", dtypes=_REAL_COMPLEX, check=_triangular_check)
def triangular_solve(self: np.ndarray, A: np.ndarray, upper: bool, transpose: bool,
                     unitriangular: bool, xOut: np.ndarray, mOut: Any) -> None:
    """xOut = the solution X of op(T) X = self, T A's upper or lower triangle (its diagonal
    ones when unitriangular), op the transpose when transpose; mOut = A broadcast, as given
    (aclnn_triangular_solve.cpp copies aBroadcast before unitriangular; torch.triangular_solve's
    cloned_coefficient)."""
    batch = xOut.shape[:-2]
    if mOut is not None and mOut.size:
        store(mOut, np.broadcast_to(A, mOut.shape))
    triangle = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        eye = np.eye(A.shape[-1], dtype=A.dtype)
        triangle = triangle * (1 - eye) + eye
    triangle = np.broadcast_to(triangle, batch + A.shape[-2:])
    if xOut.size == 0:
        return
    system = np.swapaxes(triangle, -1, -2) if transpose else triangle
    right = np.broadcast_to(self, xOut.shape)
    try:
        solution = np.linalg.solve(system, right)
    except np.linalg.LinAlgError:  # a zero on the diagonal
        solution = np.full(xOut.shape, np.nan, xOut.dtype)
    store(xOut, solution)


# ---- determinants ---------------------------------------------------------------------------


def _slogdet_check(self: np.ndarray, signOut: np.ndarray, logOut: np.ndarray) -> None:
    """ops-math math/slogdet/op_host/op_api/aclnn_slogdet.cpp: CheckDtypeValid (a complex
    self needs complex outputs) and CheckShape (self (*, n, n) of at least 2 dimensions;
    signOut and logOut of its batch shape)."""
    for name, value in (("signOut", signOut), ("logOut", logOut)):
        if self.dtype.kind == "c" and value.dtype.kind != "c":
            raise ValueError(f"self is {self.dtype.name}: {name} must be complex too, not "
                             f"{value.dtype.name}")
    _square_check("self", self)
    for name, value in (("signOut", signOut), ("logOut", logOut)):
        if value.shape != self.shape[:-2]:
            raise ValueError(f"{name} has shape {list(value.shape)}: it must be "
                             f"{list(self.shape[:-2])}")


@register("aclnnSlogdet", dtypes=_REAL_COMPLEX, check=_slogdet_check)
def slogdet(self: np.ndarray, signOut: np.ndarray, logOut: np.ndarray) -> None:
    """(sign, log|det|) of each matrix (torch.linalg.slogdet): sign 0 and log -inf for a
    singular one."""
    if self.size == 0 and self.shape[-1] != 0:
        return
    sign, log = np.linalg.slogdet(self)
    store(signOut, sign)
    store(logOut, log)


def _logdet_check(self: np.ndarray, out: np.ndarray) -> None:
    """ops-math math/logdet/op_host/op_api/aclnn_logdet.cpp: a complex self takes a complex
    out (CheckDtypeValid); self (*, n, n) of at least 2 dimensions, more than 8 taken too (the
    op_api folds them into one batch dimension), out of its batch shape (CheckShape)."""
    if self.dtype.kind == "c" and out.dtype.kind != "c":
        raise ValueError(f"self is {self.dtype.name}: out must be complex too, not "
                         f"{out.dtype.name}")
    if self.ndim < 2:
        raise ValueError(f"self has {self.ndim} dimensions: it must have at least 2")
    if self.shape[-1] != self.shape[-2]:
        raise ValueError(f"self must be batches of square matrices, but they are "
                         f"{self.shape[-2]} by {self.shape[-1]}")
    if out.shape != self.shape[:-2]:
        raise ValueError(f"out has shape {list(out.shape)}: it must be "
                         f"{list(self.shape[:-2])}")


@register("aclnnLogdet", dtypes=_REAL_COMPLEX, check=_logdet_check)
def logdet(self: np.ndarray, out: np.ndarray) -> None:
    """log det of each matrix (torch.logdet): NaN for a negative determinant, -inf for 0."""
    if self.size == 0 and self.shape[-1] != 0:
        return
    sign, log = np.linalg.slogdet(self)
    if self.dtype.kind == "c":
        store(out, log + np.log(sign))
        return
    store(out, np.where(sign < 0, np.nan, np.where(sign == 0, -np.inf, log)))


# ---- QR and SVD -----------------------------------------------------------------------------

_QR = Dtypes(("float32", "float16", "float64", "complex64", "complex128"))
_REDUCED, _COMPLETE, _R_ONLY = 0, 1, 2  # ops-math math/qr/op_api/aclnn_linalg_qr.cpp


def _qr_check(self: np.ndarray, mode: int, Q: np.ndarray, R: np.ndarray) -> None:
    """aclnn_linalg_qr.cpp: CheckShape: self of 2 to 8 dimensions; Q (*, m, k) and R (*, k, n)
    (reduced, 0), Q (*, m, m) and R (*, m, n) (complete, 1), Q [0] and R (*, k, n) (r, 2)."""
    if not 2 <= self.ndim <= _MAX_RANK:
        raise ValueError(f"self has {self.ndim} dimensions: it must have 2 to {_MAX_RANK}")
    check_output_shapes("aclnnLinalgQr", {"self": self, "mode": mode}, {"Q": Q, "R": R})


def _qr(self: np.ndarray, mode: int, Q: np.ndarray, R: np.ndarray) -> None:
    """Q R = self, Q with orthonormal columns and R upper triangular (LAPACK's Householder
    QR, as torch.linalg.qr)."""
    if R.size == 0 and Q.size == 0:
        return
    matrices = self.astype(_compute(self.dtype))
    q, r = np.linalg.qr(matrices, mode="complete" if mode == _COMPLETE else "reduced")
    if mode != _R_ONLY and Q.size:
        store(Q, q)
    if R.size:
        store(R, r)


@register("aclnnLinalgQr", dtypes=_QR, check=_qr_check)
def linalg_qr(self: np.ndarray, mode: int, Q: np.ndarray, R: np.ndarray) -> None:
    """torch.linalg.qr(self, mode) with mode 0 reduced, 1 complete, 2 r."""
    _qr(self, mode, Q, R)


@register("aclnnQr", dtypes=_QR,
          check=lambda self, some, Q, R: _qr_check(self, _REDUCED if some else _COMPLETE, Q, R))
def qr(self: np.ndarray, some: bool, Q: np.ndarray, R: np.ndarray) -> None:
    """torch.qr(self, some): reduced when some, complete otherwise."""
    _qr(self, _REDUCED if some else _COMPLETE, Q, R)


def _svd_check(input: np.ndarray, fullMatrices: bool, computeUV: bool, sigma: np.ndarray,
               u: np.ndarray, v: np.ndarray) -> None:
    """ops-math math/svd/op_host/op_api/aclnn_svd.cpp: CheckShape: input of 2 to 8 dimensions;
    sigma (*, k); u (*, m, m) and v (*, n, n) with fullMatrices, else u (*, m, k) and v (*, n,
    k); u and v not checked without computeUV."""
    if not 2 <= input.ndim <= _MAX_RANK:
        raise ValueError(f"input has {input.ndim} dimensions: it must have 2 to {_MAX_RANK}")
    check_output_shapes("aclnnSvd", {"input": input, "fullMatrices": fullMatrices},
                        {"sigma": sigma, "u": u if computeUV else None,
                         "v": v if computeUV else None})


@register("aclnnSvd", dtypes=_REAL_COMPLEX, check=_svd_check)
def svd(input: np.ndarray, fullMatrices: bool, computeUV: bool, sigma: np.ndarray,
        u: np.ndarray, v: np.ndarray) -> None:
    """input = u diag(sigma) v^H, sigma descending (torch.svd's v, not its conjugate
    transpose); u and v left alone without computeUV."""
    if input.size == 0:
        return
    if not computeUV:
        store(sigma, np.linalg.svd(input, compute_uv=False))
        return
    left, values, right = np.linalg.svd(input, full_matrices=bool(fullMatrices))
    store(sigma, values)
    store(u, left)
    store(v, np.conj(np.swapaxes(right, -1, -2)))


# ---- pairwise distances ---------------------------------------------------------------------

# ops-math math/cdist/op_api/aclnn_cdist.cpp: DTYPE_SUPPORT_LIST
_CDIST = Dtypes(("float32", "float16", "bfloat16"))


def _cdist_check(x1: np.ndarray, x2: np.ndarray, p: float, compute_mode: int,
                 out: np.ndarray) -> None:
    """aclnn_cdist.cpp: CheckDtypeValid (x1, x2 and out of one dtype), CheckShape (2 to 8
    dimensions, x1 and x2 of one last dimension), CheckParamsLogic (p >= 0 and not NaN;
    compute_mode 2 when p is 2); out is the batch broadcast with (P, R)."""
    for name, value in (("x2", x2), ("out", out)):
        if value.dtype != x1.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be x1's "
                             f"{x1.dtype.name}")
    for name, value in (("x1", x1), ("x2", x2), ("out", out)):
        if not 2 <= value.ndim <= _MAX_RANK:
            raise ValueError(f"{name} has {value.ndim} dimensions: it must have 2 to "
                             f"{_MAX_RANK}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"x1's last dimension {x1.shape[-1]} must be x2's {x2.shape[-1]}")
    if not p >= 0:
        raise ValueError(f"p is {p}: cdist takes non-negative p only")
    if abs(p - 2.0) < 1e-6 and compute_mode != 2:
        raise ValueError(f"compute_mode is {compute_mode}: it must be 2 when p is 2")
    if _cdist_empty(x1, x2):
        return
    try:
        batch = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        raise ValueError(f"x1 {list(x1.shape)} and x2 {list(x2.shape)} do not broadcast") \
            from None
    expected = batch + (x1.shape[-2], x2.shape[-2])
    if out.shape != expected:
        # the result is copied into out by l0 ViewCopy, whose failure phase 1 answers 561103
        raise Refusal(f"out has shape {list(out.shape)}: it must be {list(expected)}",
                      INNER_NULLPTR)


def _cdist_empty(x1: np.ndarray, x2: np.ndarray) -> bool:
    """A 0 among x1's or x2's dimensions but the last: aclnn_cdist.cpp CheckBatchDimNum, after
    which phase 1 returns with out left as it is."""
    return 0 in x1.shape[:-1] or 0 in x2.shape[:-1]


@register("aclnnCdist", dtypes=_CDIST, check=_cdist_check)
def cdist(x1: np.ndarray, x2: np.ndarray, p: float, compute_mode: int,
          out: np.ndarray) -> None:
    """out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p (torch.cdist without matrix
    products): p 0 counts the differing coordinates, p inf takes the largest; float32 for
    the halves, rows of x1 in blocks."""
    if out.size == 0 or _cdist_empty(x1, x2):
        return
    a = x1.astype(np.float32)
    b = x2.astype(np.float32)
    batch = out.shape[:-2]
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    result = np.empty(out.shape, np.float32)
    step = max(1, (1 << 20) // max(1, b.shape[-2] * b.shape[-1]))
    for start in range(0, a.shape[-2], step):  # blocks of x1's rows, each vectorised
        difference = np.abs(a[..., start:start + step, None, :] - b[..., None, :, :])
        if p == 0:
            block = np.count_nonzero(difference, axis=-1).astype(np.float32)
        elif np.isinf(p):
            block = difference.max(axis=-1) if difference.shape[-1] else \
                np.zeros(difference.shape[:-1], np.float32)
        elif p == 1:
            block = difference.sum(axis=-1)
        elif p == 2:
            block = np.sqrt(np.einsum("...k,...k->...", difference, difference))
        else:
            block = np.power(np.power(difference, np.float32(p)).sum(axis=-1),
                             np.float32(1.0 / p))
        result[..., start:start + step, :] = block
    store(out, result)


def _cdist_backward_check(grad: np.ndarray, x1: np.ndarray, x2: np.ndarray, cdist: np.ndarray,
                          p: float, out: np.ndarray) -> None:
    """ops-math math/cdist_grad/op_api/aclnn_cdist_backward.cpp: CheckDtypeValid (every
    tensor of grad's dtype), CheckDims (grad of 2 to 7 dimensions, every tensor of grad's
    rank), CheckShape (x1 as (..., P, 1, M) and x2 as (..., 1, R, M) broadcast, cdist that
    shape without M, grad of cdist's shape, out of x1's) and CheckParams (p not negative,
    except -1: the infinity norm)."""
    for name, value in (("x1", x1), ("x2", x2), ("cdist", cdist), ("out", out)):
        if value.dtype != grad.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: every tensor must have "
                             f"grad's {grad.dtype.name}")
    if not 2 <= grad.ndim <= 7:
        raise ValueError(f"grad has {grad.ndim} dimensions: it must have 2 to 7")
    for name, value in (("x1", x1), ("x2", x2), ("cdist", cdist), ("out", out)):
        if value.ndim != grad.ndim:
            raise ValueError(f"{name} has {value.ndim} dimensions: every tensor must have "
                             f"grad's {grad.ndim}")
    try:
        pairs = np.broadcast_shapes(x1.shape[:-1] + (1, x1.shape[-1]),
                                    x2.shape[:-2] + (1,) + x2.shape[-2:])
    except ValueError:
        raise ValueError(f"x1 {list(x1.shape)} and x2 {list(x2.shape)} do not broadcast as "
                         "(..., P, 1, M) and (..., 1, R, M)") from None
    if cdist.shape != pairs[:-1]:
        raise ValueError(f"cdist has shape {list(cdist.shape)}: it must be "
                         f"{list(pairs[:-1])}")
    if grad.shape != cdist.shape:
        raise ValueError(f"grad has shape {list(grad.shape)}: it must be cdist's "
                         f"{list(cdist.shape)}")
    if out.shape != x1.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be x1's {list(x1.shape)}")
    if p != -1.0 and p < 0:
        raise ValueError(f"p is {p}: it must not be negative (-1 is the infinity norm)")


def _cdist_backward_rows(a: np.ndarray, b: np.ndarray, g: np.ndarray, d: np.ndarray,
                         p: float) -> np.ndarray:
    """The gradient of x1 (broadcast to the batch) for p other than 2, rows in blocks."""
    result = np.zeros(a.shape, np.float32)
    if p == 0:
        return result
    infinity = p == -1.0 or np.isinf(p)
    step = max(1, (1 << 20) // max(1, b.shape[-2] * b.shape[-1]))
    for start in range(0, a.shape[-2], step):  # blocks of x1's rows, each vectorised
        rows = slice(start, start + step)
        diff = a[..., rows, None, :] - b[..., None, :, :]
        scale = g[..., rows, :, None]
        norm = d[..., rows, :, None]
        if p == 1:
            block = scale * np.sign(diff)
        elif infinity:
            block = scale * np.sign(diff) * (np.abs(diff) == norm)
        else:
            magnitude = np.abs(diff)
            powered = np.sign(diff) * np.power(magnitude, np.float32(p - 1))
            if p < 1:
                powered = np.where(magnitude == 0, 0, powered)
            block = np.where(norm == 0, 0,
                             scale * powered / np.power(norm, np.float32(p - 1)))
        result[..., rows, :] = np.sum(block, axis=-2)
    return result


@register("aclnnCdistBackward", dtypes=_CDIST, check=_cdist_backward_check)
def cdist_backward(grad: np.ndarray, x1: np.ndarray, x2: np.ndarray, cdist: np.ndarray,
                   p: float, out: np.ndarray) -> None:
    """out[..., i, :] = sum_j grad[..., i, j] d cdist[..., i, j] / d x1[..., i, :]
    (ops-math math/cdist_grad/docs/aclnnCdistBackward.md: grad diff |diff|^(p-2) /
    cdist^(p-1)), with PyTorch's _cdist_backward at the edges: 0 where cdist is 0 and for
    p 0, grad sign(diff) for p 1, grad sign(diff) where |diff| is cdist for the infinity norm
    (p -1 or inf); float32 for the halves. p 2 as matrix products (x1_i sum_j w_ij - (w x2)_i,
    w = grad / cdist), other p over rows of x1 in blocks; batches x1 was broadcast over are
    summed."""
    if out.size == 0:
        return
    if grad.size == 0 or x2.size == 0:
        out[...] = 0
        return
    batch = grad.shape[:-2]
    a = np.broadcast_to(x1.astype(np.float32), batch + x1.shape[-2:])
    b = np.broadcast_to(x2.astype(np.float32), batch + x2.shape[-2:])
    g = grad.astype(np.float32)
    d = cdist.astype(np.float32)
    if p == 2:  # sum_j w_ij (x1_i - x2_j), w = grad / cdist (0 where cdist is 0): products
        weights = np.divide(g, d, out=np.zeros(g.shape, np.float32), where=d != 0)
        result = a * np.sum(weights, axis=-1, keepdims=True) - np.matmul(weights, b)
    else:
        result = _cdist_backward_rows(a, b, g, d, p)
    summed = tuple(i for i, n in enumerate(x1.shape[:-2]) if n == 1 and result.shape[i] != 1)
    store(out, np.sum(result, axis=summed, keepdims=True) if summed else result)
