"""Elementwise kernels: math and activations with their backward operators, arithmetic and
comparisons in their tensor, scalar and in-place forms, logical operators, clamp, select and
cast.

Inputs broadcast as CANN's (and PyTorch's) rules say. Tensor and tensor: the dtypes promote as
PyTorch's ``promote_types`` does (float16 with bfloat16 gives float32); tensor and scalar: the
tensor's dtype, unless the scalar is of a higher category (a float with an integer tensor:
float32). Floating results are computed in float32 for float16 and bfloat16 and rounded once,
into the output's dtype; integer arithmetic wraps around, as the device's does.

Speed: :func:`apply` runs a kernel's chain of numpy operations over blocks of
:data:`BLOCK` elements that stay in the CPU's cache, writing into the output (or one
scratch block) with ``out=``: no temporary array of the tensor's size, no per-element Python.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ...ops.dtypes import Dtypes, is_bfloat16, numpy_dtype
from . import builtin, promotion, store

FLOATS = Dtypes(("float32", "float16", "bfloat16"))
FLOATS64 = Dtypes(("float32", "float16", "bfloat16", "float64"))
NUMBERS = Dtypes(("float32", "float16", "bfloat16", "float64", "int8", "int16", "int32",
                  "int64", "uint8"))
ANY = Dtypes(("float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64",
              "uint8", "bool"))

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2}

# The loops below that register one kernel per table row
_name: str
_unary_name: str
_unary_kernel: Unary
_short: str
_function: Callable[..., Any]
_dtypes: Dtypes
_direction: int


def register(name: str, *, dtypes: Dtypes | dict[str, Dtypes] | None = None,
             check: Callable[..., None] | None = None
             ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """:func:`builtin`, with the kernel run under ``numpy.errstate(all="ignore")``: a device
    never warns, and inf or NaN results are the IEEE answers the operators define (a numpy
    warning under ``python -W error`` would otherwise fail the kernel)."""
    def decorate(compute: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(compute)
        def quiet(**arguments: Any) -> None:
            with np.errstate(all="ignore"):
                compute(**arguments)
        builtin(name, dtypes=dtypes, check=check)(quiet)
        return compute
    return decorate


def _category(dtype: np.dtype) -> int:
    return 2 if is_bfloat16(dtype) else _CATEGORY.get(dtype.kind, 2)


def promote_types(first: np.dtype, second: np.dtype) -> np.dtype:
    """PyTorch's ``promote_types`` over the dtypes CANN's kernels take."""
    if first == second:
        return first
    halves = {np.dtype(np.float16).name, "bfloat16"}
    if {first.name, second.name} == halves:
        return np.dtype(np.float32)
    if is_bfloat16(first) or is_bfloat16(second):
        other = second if is_bfloat16(first) else first
        return first if is_bfloat16(first) and _category(other) < 2 else \
            second if _category(other) < 2 else np.promote_types(other, np.float32)
    return np.promote_types(first, second)


def scalar_result_type(tensor: np.dtype, scalar: Any) -> np.dtype:
    """The dtype of a tensor-scalar operation: the tensor's, unless the scalar's category is
    higher (then float32 for a float scalar, int64 for an integer one with a bool tensor)."""
    kind = np.asarray(scalar).dtype
    if _category(kind) <= _category(tensor):
        return tensor
    return np.dtype(np.float32) if _category(kind) == 2 else np.dtype(np.int64)


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype ``dtype`` computes in: float32 for float16 and bfloat16."""
    if dtype == np.float16 or is_bfloat16(dtype):
        return np.dtype(np.float32)
    return dtype


def _value(scalar: Any, dtype: np.dtype) -> Any:
    """A scalar argument as the operation's compute dtype takes it (an integer wraps into an
    integer dtype, as a cast on the device does)."""
    return np.asarray(scalar).astype(compute_dtype(dtype))[()]


# ---- the block driver -----------------------------------------------------------------------

BLOCK = 1 << 16  # elements per block: 256 KiB of float32; a few of them stay in a core's L2


def _flat(array: np.ndarray) -> np.ndarray:
    return array.reshape(-1)


def apply(out: np.ndarray, compute: Callable[..., None], inputs: list[Any],
          dtype: np.dtype, result: np.dtype | None = None) -> None:
    """Write ``compute(target, *inputs)`` into ``out``.

    ``compute`` writes its whole result into ``target`` (an array of dtype ``result``,
    ``dtype`` by default, never sharing memory with an input) using ``out=``; it must not
    modify its inputs. Array inputs are cast to ``dtype`` and broadcast against ``target``;
    scalars must be of ``dtype`` already. The result is rounded once into ``out``'s dtype.

    When ``out`` and every array input of its shape are C-contiguous, the work runs over
    blocks of :data:`BLOCK` elements (an input of one element broadcasts); otherwise over
    whole arrays.
    """
    if out.size == 0:
        return
    result = dtype if result is None else result
    arrays = [(i, x) for i, x in enumerate(inputs) if isinstance(x, np.ndarray)]
    blocked = out.flags.c_contiguous and all(
        x.size == 1 or (x.shape == out.shape and x.flags.c_contiguous) for _, x in arrays)
    if blocked:
        blocked = all(x.size == 1 or not np.may_share_memory(x, out)
                      or (x.__array_interface__["data"][0] == out.__array_interface__["data"][0])
                      for _, x in arrays)
    if not blocked:
        values = list(inputs)
        for i, x in arrays:
            if x.dtype != dtype or np.may_share_memory(x, out):
                values[i] = x.astype(dtype)
        target = out if out.dtype == result else np.empty(out.shape, result)
        compute(target, *values)
        if target is not out:
            np.copyto(out, target, casting="unsafe")
        return
    n = out.size
    direct = out.dtype == result
    flat_out = _flat(out)
    size = min(n, BLOCK)
    scratch = None if direct else np.empty(size, result)
    sources: list[tuple[int, np.ndarray, np.ndarray | None]] = []
    values = list(inputs)
    for i, x in arrays:
        if x.size == 1:
            values[i] = x.reshape(()).astype(dtype)
            continue
        aliased = direct and np.may_share_memory(x, out)
        buffer = np.empty(size, dtype) if (x.dtype != dtype or aliased) else None
        sources.append((i, _flat(x), buffer))
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        for i, flat, buffer in sources:
            if buffer is None:
                values[i] = flat[start:stop]
            else:
                block = buffer[:stop - start]
                np.copyto(block, flat[start:stop], casting="unsafe")
                values[i] = block
        if direct:
            compute(flat_out[start:stop], *values)
        else:
            assert scratch is not None
            target = scratch[:stop - start]
            compute(target, *values)
            np.copyto(flat_out[start:stop], target, casting="unsafe")


def select(target: np.ndarray, condition: np.ndarray, if_true: np.ndarray,
           if_false: np.ndarray | None) -> None:
    """target = where(condition, if_true, if_false or 0) for floating arrays of target's shape
    and dtype, bit by bit through integer masks: no branch on the data (numpy's where takes
    about ten passes' time on a random condition). ``if_false`` must not be ``target``."""
    bits = np.dtype(f"i{target.dtype.itemsize}")
    mask = np.broadcast_to(condition, target.shape).astype(bits)
    np.negative(mask, out=mask)                                   # 0 or all ones
    result = target.view(bits)
    np.bitwise_and(if_true.view(bits), mask, out=result)
    if if_false is not None:
        np.invert(mask, out=mask)
        np.bitwise_and(if_false.view(bits), mask, out=mask)
        np.bitwise_or(result, mask, out=result)


def _ufunc(function: Any) -> Callable[..., None]:
    """A compute of ``apply`` from a numpy ufunc."""
    def compute(target: np.ndarray, *values: Any) -> None:
        function(*values, out=target)
    return compute


def _first_on_ties(function: Any) -> Callable[..., None]:
    """A compute of ``apply`` from numpy's maximum or minimum with PyTorch's choice between
    equal arguments (-0.0 and 0.0): the first (numpy's gives the second). NaN propagates."""
    def compute(target: np.ndarray, a: Any, b: Any) -> None:
        function(b, a, out=target)
    return compute


# ---- erf, erfc and erfinv -------------------------------------------------------------------

# float32: erf(x) = tanh(x R(x^2)), R a polynomial of degree 6 (atanh(erf(x)) is odd and grows
# like x^2, so that R is smooth; tanh saturates to +-1 beyond the fitted range, where R's
# positive leading term makes x R(x^2) grow, up to infinities). The coefficients are a fit of
# ours to atanh(erf(x)) / x on [0, 4] (weighted least squares on erf's relative error,
# reweighted towards its maximum); evaluated in float32 the result is within 4 ulp of erf
# (tests/ops/test_kernel_edges.py checks it against math.erf on a dense grid).
_ERF32_R = (1.128379225730896, 0.10276905447244644, -0.00019183270342182368,
            -0.0006197831826284528, 8.763681398704648e-05, -5.668398443958722e-06,
            1.418481616610734e-07)

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
# float64: erf's Maclaurin series sum (-1)^n x^(2n+1) / (n! (2n+1)) below |x| = 1.5 (32 terms
# reach double precision there), and erfc's continued fraction (Laplace's) above.
_MACLAURIN = tuple((-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(32))


def _horner(target: np.ndarray, z: np.ndarray, coefficients: tuple[float, ...]) -> None:
    """target = sum coefficients[k] z**k (Horner's rule, in target's dtype)."""
    kind = target.dtype.type
    np.multiply(z, kind(coefficients[-1]), out=target)
    np.add(target, kind(coefficients[-2]), out=target)
    for c in reversed(coefficients[:-2]):
        np.multiply(target, z, out=target)
        np.add(target, kind(c), out=target)


def _erf32(target: np.ndarray, x: np.ndarray) -> None:
    """erf in float32 (see _ERF32_R)."""
    z = np.multiply(x, x, out=np.empty_like(target))
    _horner(target, z, _ERF32_R)
    np.multiply(target, x, out=target)
    np.tanh(target, out=target)


def _exp_neg_square(a: np.ndarray) -> Any:
    """exp(-a*a) in float64 without the rounding of a*a: a = hi + lo (Veltkamp's split),
    a*a = hi*hi (exact) + lo*(a + hi)."""
    c = a * 134217729.0
    hi = c - (c - a)
    lo = a - hi
    return np.exp(-hi * hi) * np.exp(-lo * (a + hi))


def _erf_maclaurin(a: np.ndarray) -> Any:
    z = a * a
    p = np.empty_like(a)
    _horner(p, z, _MACLAURIN)
    return _TWO_OVER_SQRT_PI * a * p


def _erfc_fraction(a: np.ndarray, terms: int) -> Any:
    """erfc(a) for a >= 1: e^(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...))))
    evaluated from its ``terms``-th level up (accurate to double precision from a = 1 with
    200 terms, from a = 1.5 with 90)."""
    a = np.minimum(a, 27.0)  # erfc(27) underflows: inf would make NaN of the split
    f = a.copy()
    for k in range(terms, 0, -1):
        np.divide(k / 2, f, out=f)
        np.add(f, a, out=f)
    return _exp_neg_square(a) / (math.sqrt(math.pi) * f)


def _erf64(x: np.ndarray) -> Any:
    """erf in float64, to about 2 ulp (1e-15 relative)."""
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    result = np.empty_like(a)
    small = a < 1.5
    result[small] = _erf_maclaurin(a[small])
    large = ~small
    if large.any():
        result[large] = 1.0 - _erfc_fraction(a[large], 90)
    result[np.isnan(a)] = np.nan
    return np.copysign(result, x)


def _erf(target: np.ndarray, x: np.ndarray) -> None:
    if target.dtype == np.float64:
        target[...] = _erf64(np.broadcast_to(x, target.shape))
    else:
        _erf32(target, x)


# float32 erfinv(x) = x R(w), w = -log((1 - x)(1 + x)): R a polynomial in w - 2.5 below
# w = 5 and in sqrt(w) - 3 above (Giles' scheme, "Approximating the erfinv function", GPU
# Computing Gems, 2011); the coefficients are a least-squares fit of ours to erfinv, within
# 9 ulp of it in float32 (checked by tests/ops/test_kernel_edges.py).
_ERFINV32_LOW = (1.5014094114303589, 0.24664022028446198, -0.004178191069513559,
                 -0.0012529065134003758, 0.00021916015248280019, -4.694733888754854e-06,
                 -3.7108954984432785e-06, 3.7442194411596574e-07, 4.594007307900938e-08)
_ERFINV32_HIGH = (2.8329765796661377, 1.0016745328903198, 0.009450779296457767,
                  -0.007620942313224077, 0.00565485842525959, -0.0036995308473706245,
                  0.0015320718521252275, 0.00013812202087137848, -0.0003242457169108093)


def _erfinv32(target: np.ndarray, x: np.ndarray) -> None:
    one = np.float32(1)
    w = np.subtract(one, x, out=np.empty_like(target))
    w *= np.add(one, x, out=np.empty_like(target))
    np.log(w, out=w)
    np.negative(w, out=w)
    t = np.subtract(w, np.float32(2.5), out=np.empty_like(target))
    _horner(target, t, _ERFINV32_LOW)
    tail = w >= 5
    if tail.any():
        s = np.sqrt(w[tail]) - np.float32(3)
        p = np.empty_like(s)
        _horner(p, s, _ERFINV32_HIGH)
        target[tail] = p
    np.multiply(target, x, out=target)
    a = np.abs(x)
    target[a == 1] = np.copysign(np.float32(np.inf), x[a == 1])
    target[a > 1] = np.nan


def _erfinv(target: np.ndarray, x: np.ndarray) -> None:
    """float16 and bfloat16 compute in float32; CANN has no float64 Erfinv (ops-nn
    activation/erfinv/op_api/aclnn_erfinv.cpp's dtype lists)."""
    _erfinv32(target, np.broadcast_to(x, target.shape))


# ---- activations ----------------------------------------------------------------------------

_SQRT_EIGHT_OVER_PI = math.sqrt(8 / math.pi)  # 2 * sqrt(2/pi)
_GELU_CUBIC = 0.044715


def _gelu_tanh(target: np.ndarray, x: np.ndarray) -> None:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed as CANN's Gelu kernel does:
    x / (1 + exp(-sqrt(8/pi) (x + 0.044715 x^3))) (the same function: 1 + tanh(u) =
    2 / (1 + exp(-2u)))."""
    kind = target.dtype.type
    np.multiply(x, x, out=target)
    np.multiply(target, kind(_GELU_CUBIC), out=target)
    np.add(target, kind(1), out=target)
    np.multiply(target, x, out=target)
    np.multiply(target, kind(-_SQRT_EIGHT_OVER_PI), out=target)
    np.exp(target, out=target)
    np.add(target, kind(1), out=target)
    np.divide(x, target, out=target)


def _gelu_erf(target: np.ndarray, x: np.ndarray) -> None:
    """0.5 x (1 + erf(x / sqrt(2)))."""
    kind = target.dtype.type
    np.multiply(x, kind(1 / math.sqrt(2)), out=target)
    _erf(target, target.copy())
    np.add(target, kind(1), out=target)
    np.multiply(target, x, out=target)
    np.multiply(target, kind(0.5), out=target)


def _sigmoid(target: np.ndarray, x: np.ndarray) -> None:
    np.negative(x, out=target)
    np.exp(target, out=target)
    np.add(target, target.dtype.type(1), out=target)
    np.reciprocal(target, out=target)


def _silu(target: np.ndarray, x: np.ndarray) -> None:
    np.negative(x, out=target)
    np.exp(target, out=target)
    np.add(target, target.dtype.type(1), out=target)
    np.divide(x, target, out=target)


def _relu(target: np.ndarray, x: np.ndarray) -> None:
    # numpy's maximum gives its second argument when they compare equal: -0.0 stays -0.0, as
    # in PyTorch's relu; NaN stays NaN
    np.maximum(target.dtype.type(0), x, out=target)


def _mish(target: np.ndarray, x: np.ndarray) -> None:
    """x tanh(softplus(x)), softplus as log1p(exp(x)): infinite above 88, where tanh gives 1."""
    np.exp(x, out=target)
    np.log1p(target, out=target)
    np.tanh(target, out=target)
    np.multiply(target, x, out=target)


def _hardswish(target: np.ndarray, x: np.ndarray) -> None:
    """x (x + 3) / 6 between -3 and 3, x above, 0 below (ops-nn activation/hard_swish/docs/
    aclnnHardswish&aclnnInplaceHardswish.md), as CANN's kernel computes it (op_kernel/arch35/
    hard_swish.h): max(x, -3) clamp(x + 3, 0, 6) times 1/6, so that -inf gives 0."""
    kind = target.dtype.type
    np.add(x, kind(3), out=target)
    np.minimum(target, kind(6), out=target)
    np.maximum(target, kind(0), out=target)
    np.multiply(target, np.maximum(x, kind(-3)), out=target)
    np.multiply(target, kind(1 / 6), out=target)


def _rsqrt(target: np.ndarray, x: np.ndarray) -> None:
    np.sqrt(x, out=target)
    np.reciprocal(target, out=target)


def _sign(target: np.ndarray, x: np.ndarray) -> None:
    # the doc defines 1, 0, -1 by comparison; NaN gives 0, as PyTorch's sign; a bool is its
    # own sign
    if x.dtype == np.bool_:
        np.copyto(target, x, casting="unsafe")
        return
    np.sign(x, out=target)
    if target.dtype.kind == "f":
        np.copyto(target, 0, where=np.isnan(target))


# ---- unary math and activations: (input, out) -------------------------------------------

def _as_float(dtype: np.dtype, out: np.dtype) -> np.dtype:
    return np.dtype(np.float32)


def _as_out(dtype: np.dtype, out: np.dtype) -> np.dtype:
    return out


def _as_itself(dtype: np.dtype, out: np.dtype) -> np.dtype:
    return dtype


def _as_sqrt(dtype: np.dtype, out: np.dtype) -> np.dtype:
    """ops-math math/sqrt/op_api/aclnn_sqrt.cpp: INT64 computes as DOUBLE, the others FLOAT."""
    return np.dtype(np.float64 if dtype == np.int64 else np.float32)


def _keep_integers(function: Any) -> Callable[..., None]:
    """A compute of ``apply`` from a rounding ufunc: an integral input is its own result
    (CANN's floor, ceil, trunc and round copy integers through: ops-math math/floor/op_api/
    aclnn_floor.cpp)."""
    def compute(target: np.ndarray, x: np.ndarray) -> None:
        if x.dtype.kind in "biu":
            np.copyto(target, x, casting="unsafe")
        else:
            function(x, out=target)
    return compute


@dataclass(frozen=True)
class Unary:
    """One unary operator: its compute (of :func:`apply`), the dtypes it computes when no
    phase-1 rules state them, and the dtype an integral or bool input computes in (as CANN's
    op_api casts it before the operator's own kernel), from (its dtype, out's dtype)."""

    compute: Callable[..., None]
    dtypes: Dtypes
    integers: Callable[[np.dtype, np.dtype], np.dtype] = _as_float


UNARY: dict[str, Unary] = {
    "aclnnAbs": Unary(_ufunc(np.abs), NUMBERS, _as_itself),
    "aclnnNeg": Unary(_ufunc(np.negative), NUMBERS, _as_itself),
    "aclnnExp": Unary(_ufunc(np.exp), FLOATS64),
    "aclnnExpm1": Unary(_ufunc(np.expm1), FLOATS64),
    "aclnnLog": Unary(_ufunc(np.log), FLOATS64),
    "aclnnLog2": Unary(_ufunc(np.log2), FLOATS64),
    "aclnnLog10": Unary(_ufunc(np.log10), FLOATS64),
    "aclnnLog1p": Unary(_ufunc(np.log1p), FLOATS64, _as_out),
    "aclnnSqrt": Unary(_ufunc(np.sqrt), FLOATS64, _as_sqrt),
    "aclnnRsqrt": Unary(_rsqrt, FLOATS64, _as_out),
    "aclnnReciprocal": Unary(_ufunc(np.reciprocal), FLOATS64),
    "aclnnSquare": Unary(_ufunc(np.square), NUMBERS, _as_itself),
    "aclnnSin": Unary(_ufunc(np.sin), FLOATS64),
    "aclnnCos": Unary(_ufunc(np.cos), FLOATS64),
    "aclnnTan": Unary(_ufunc(np.tan), FLOATS64),
    "aclnnAsin": Unary(_ufunc(np.arcsin), FLOATS64),
    "aclnnAcos": Unary(_ufunc(np.arccos), FLOATS64),
    "aclnnAtan": Unary(_ufunc(np.arctan), FLOATS64),
    "aclnnSinh": Unary(_ufunc(np.sinh), FLOATS64, _as_out),
    "aclnnCosh": Unary(_ufunc(np.cosh), FLOATS64),
    "aclnnTanh": Unary(_ufunc(np.tanh), FLOATS64),
    "aclnnErf": Unary(_erf, FLOATS64),
    "aclnnErfinv": Unary(_erfinv, FLOATS),
    "aclnnSigmoid": Unary(_sigmoid, FLOATS64, _as_out),
    "aclnnRelu": Unary(_relu, NUMBERS, _as_itself),
    "aclnnSilu": Unary(_silu, FLOATS),
    "aclnnGelu": Unary(_gelu_tanh, FLOATS),
    "aclnnMish": Unary(_mish, FLOATS),
    "aclnnHardswish": Unary(_hardswish, FLOATS),
    "aclnnFloor": Unary(_keep_integers(np.floor), FLOATS64, _as_itself),
    "aclnnCeil": Unary(_keep_integers(np.ceil), FLOATS64, _as_itself),
    "aclnnTrunc": Unary(_keep_integers(np.trunc), FLOATS64, _as_itself),
    "aclnnRound": Unary(_keep_integers(np.round), FLOATS64, _as_itself),  # half to even
    "aclnnSign": Unary(_sign, NUMBERS, _as_itself),
}

_REAL_OF_COMPLEX: dict[np.dtype, np.dtype] = {np.dtype(np.complex64): np.dtype(np.float32),
                                              np.dtype(np.complex128): np.dtype(np.float64)}


def _unary_dtype(unary: Unary, dtype: np.dtype, out: np.dtype) -> np.dtype:
    """The dtype ``unary`` computes an input of ``dtype`` in, into an ``out`` dtype."""
    if dtype.kind in "biu":
        return compute_dtype(unary.integers(dtype, out))
    return compute_dtype(dtype)


def _unary(unary: Unary) -> Callable[..., None]:
    def compute(**arguments: Any) -> None:
        source, out = arguments.values()
        if source.size == 0:
            return
        dtype = _unary_dtype(unary, source.dtype, out.dtype)
        # a complex input whose result is real (Abs) computes into its real dtype
        result = _REAL_OF_COMPLEX.get(dtype) if out.dtype.kind != "c" else None
        apply(out, unary.compute, [source], dtype, result)
    return compute


def same_shape(**arguments: Any) -> None:
    """The output (the last argument) has the shape of the input (the first)."""
    values = list(arguments.values())
    source, out = values[0], values[-1]
    if source.shape != out.shape:
        raise ValueError(f"out has shape {out.shape}, the input {source.shape}: they must be "
                         "equal")


def _abs_check(self: np.ndarray, out: np.ndarray) -> None:
    """out has self's dtype, or a complex self's real dtype (ops-math math/abs/op_api/
    aclnn_abs.cpp CheckDtypeValid)."""
    wanted = _REAL_OF_COMPLEX.get(self.dtype, self.dtype)
    if out.dtype != wanted:
        raise ValueError(f"out has dtype {out.dtype.name}, but self's {self.dtype.name} gives "
                         f"{wanted.name}: out must be {wanted.name}")


def _log10_check(self: np.ndarray, out: np.ndarray) -> None:
    """out has self's dtype when self is floating or complex, else float32 (ops-math math/log/
    op_api/aclnn_log10.cpp CheckDtypeValid)."""
    floating = self.dtype.kind in "fc" or is_bfloat16(self.dtype)
    wanted = self.dtype if floating else np.dtype(np.float32)
    if out.dtype != wanted:
        raise ValueError(f"out has dtype {out.dtype.name}, but self's {self.dtype.name} gives "
                         f"{wanted.name}: out must be {wanted.name}")


def _sign_check(self: np.ndarray, result: np.ndarray) -> None:
    """result has self's dtype, unless self is bfloat16 (ops-math math/sign/op_api/
    aclnn_sign.cpp CheckDtypeValid)."""
    if not is_bfloat16(self.dtype) and result.dtype != self.dtype:
        raise ValueError(f"result has dtype {result.dtype.name} and self {self.dtype.name}: "
                         "they must have the same dtype")


# The phase-1 rules check shapes and dtypes; these check what the rules cannot say.
_UNARY_CHECKS: dict[str, Callable[..., None]] = {
    "aclnnAbs": _abs_check, "aclnnLog10": _log10_check, "aclnnSign": _sign_check,
}

for _name, _unary_kernel in UNARY.items():
    register(_name, dtypes=_unary_kernel.dtypes,
             check=_UNARY_CHECKS.get(_name))(_unary(_unary_kernel))


def _gelu_v2_check(x: np.ndarray, approximate: int, y: np.ndarray) -> None:
    # ops-nn activation/gelu_v2/op_api/aclnn_gelu_v2.cpp: y has x's dtype and shape; an
    # approximate other than 1 (tanh) means none (erf)
    if y.dtype != x.dtype:
        raise ValueError(f"y has dtype {y.dtype.name}, x {x.dtype.name}: they must be equal")
    same_shape(x=x, y=y)


@register("aclnnGeluV2", dtypes=FLOATS, check=_gelu_v2_check)
def gelu_v2(x: np.ndarray, approximate: int, y: np.ndarray) -> None:
    """approximate: 1 'tanh', anything else 'none' (erf)."""
    apply(y, _gelu_tanh if approximate == 1 else _gelu_erf, [x], compute_dtype(x.dtype))


@register("aclnnLogicalNot", dtypes=ANY, check=same_shape)
def logical_not(self: np.ndarray, out: np.ndarray) -> None:
    store(out, np.logical_not(self))


# ---- backward of activations: (gradOutput, saved, gradInput) ------------------------------


def _broadcasts_to(out: np.ndarray, *operands: Any) -> None:
    shapes = [np.shape(o) for o in operands if isinstance(o, np.ndarray)]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"the inputs' shapes {', '.join(map(str, shapes))} do not "
                         "broadcast") from None
    if tuple(shape) != out.shape:
        raise ValueError(f"out has shape {out.shape}, the broadcast shape of the inputs is "
                         f"{tuple(shape)}")


def broadcast_check(**arguments: Any) -> None:
    """out (the last argument) has the broadcast shape of the tensor arguments before it."""
    values = list(arguments.values())
    _broadcasts_to(values[-1], *values[:-1])


def _sigmoid_backward(target: np.ndarray, g: np.ndarray, y: np.ndarray) -> None:
    np.subtract(target.dtype.type(1), y, out=target)
    np.multiply(target, y, out=target)
    np.multiply(target, g, out=target)


@register("aclnnSigmoidBackward", dtypes=FLOATS)
def sigmoid_backward(gradOutput: np.ndarray, output: np.ndarray, gradInput: np.ndarray) -> None:
    dtype = compute_dtype(promote_types(gradOutput.dtype, output.dtype))
    apply(gradInput, _sigmoid_backward, [gradOutput, output], dtype)


def _tanh_backward(target: np.ndarray, g: np.ndarray, y: np.ndarray) -> None:
    np.multiply(y, y, out=target)
    np.subtract(target.dtype.type(1), target, out=target)
    np.multiply(target, g, out=target)


@register("aclnnTanhBackward", dtypes=FLOATS)
def tanh_backward(gradOutput: np.ndarray, output: np.ndarray, gradInput: np.ndarray) -> None:
    dtype = compute_dtype(promote_types(gradOutput.dtype, output.dtype))
    apply(gradInput, _tanh_backward, [gradOutput, output], dtype)


def _silu_backward(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:
    # g s (1 + x (1 - s)), s = sigmoid(x)
    kind = target.dtype.type
    s = np.empty_like(target)
    _sigmoid(s, x)
    np.subtract(kind(1), s, out=target)
    np.multiply(target, x, out=target)
    np.add(target, kind(1), out=target)
    np.multiply(target, s, out=target)
    np.multiply(target, g, out=target)


def _silu_backward_check(gradOutput: np.ndarray, self: np.ndarray,
                         gradInput: np.ndarray) -> None:
    """Two input dtypes give a float32 gradInput (regbase's mixed precision; elsewhere the
    phase-1 rules ask for one dtype): ops-nn activation/silu_grad/op_api/
    aclnn_silu_backward.cpp CheckDtypeValid."""
    if gradOutput.dtype != self.dtype and gradInput.dtype != np.float32:
        raise ValueError(f"gradOutput has dtype {gradOutput.dtype.name} and self "
                         f"{self.dtype.name}: gradInput must then be float32, not "
                         f"{gradInput.dtype.name}")


@register("aclnnSiluBackward", dtypes=FLOATS, check=_silu_backward_check)
def silu_backward(gradOutput: np.ndarray, self: np.ndarray, gradInput: np.ndarray) -> None:
    dtype = compute_dtype(promote_types(gradOutput.dtype, self.dtype))
    apply(gradInput, _silu_backward, [gradOutput, self], dtype)


def _gelu_tanh_backward(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:
    """The derivative of the tanh form, as CANN's GeluGrad kernel computes it (ops-nn
    activation/gelu_grad/op_kernel/arch35/gelu_grad_dag.h): with u = sqrt(8/pi) (x + 0.044715
    x^3), e = exp(-u) and s = 1 / (1 + e), g (s + x u' e s^2), u' = sqrt(8/pi) (1 + 3 * 0.044715
    x^2); the second term is taken as 0 where it is NaN (e infinite)."""
    kind = target.dtype.type
    square = np.multiply(x, x, out=np.empty_like(target))
    e = np.multiply(square, kind(-_SQRT_EIGHT_OVER_PI * _GELU_CUBIC), out=np.empty_like(target))
    np.add(e, kind(-_SQRT_EIGHT_OVER_PI), out=e)
    np.multiply(e, x, out=e)
    np.exp(e, out=e)                                   # e = exp(-u)
    np.multiply(square, kind(3 * _SQRT_EIGHT_OVER_PI * _GELU_CUBIC), out=square)
    np.add(square, kind(_SQRT_EIGHT_OVER_PI), out=square)
    np.multiply(square, x, out=square)                 # x u'
    np.add(e, kind(1), out=target)
    np.reciprocal(target, out=target)                  # s
    np.multiply(e, target, out=e)
    np.multiply(e, square, out=e)
    np.multiply(e, target, out=e)                      # x u' e s^2
    e[np.isnan(e)] = 0
    np.add(target, e, out=target)
    np.multiply(target, g, out=target)


# CANN checks the inputs' promoted dtype only (ops-nn common/inc/op_api/level2_base.h
# CheckPromoteTypeGeluBackward): an integer or bool input promotes with a float one.
GELU_BACKWARD_INPUTS = Dtypes(("float32", "float16", "bfloat16", "int8", "int16", "int32",
                               "int64", "uint8", "bool"))


@register("aclnnGeluBackward", dtypes=GELU_BACKWARD_INPUTS)
def gelu_backward(gradOutput: np.ndarray, self: np.ndarray, gradInput: np.ndarray) -> None:
    dtype = compute_dtype(promote_types(gradOutput.dtype, self.dtype))
    apply(gradInput, _gelu_tanh_backward, [gradOutput, self], dtype)


def _threshold_backward(threshold: Any) -> Callable[..., None]:
    def compute(target: np.ndarray, g: np.ndarray, x: np.ndarray) -> None:
        # ops-nn activation/threshold_grad_v2_d/op_kernel/arch35/threshold_grad_v2_d_dag.h:
        # 0 where x <= threshold, else g (a NaN x passes g)
        keep = np.logical_not(np.less_equal(x, target.dtype.type(threshold)))
        select(target, keep, np.broadcast_to(g, target.shape), None)
    return compute


def real_value(scalar: Any) -> float:
    """A scalar argument as CANN's ``aclScalar::ToFloat`` reads it: its real value, in float32."""
    return float(np.float32(np.real(scalar)))


def _threshold_backward_check(gradOutput: np.ndarray, self: np.ndarray, threshold: Any,
                              out: np.ndarray) -> None:
    """int64 only with a threshold of 0 (regbase; the phase-1 rules refuse it elsewhere):
    ops-nn activation/threshold_grad_v2_d/op_api/aclnn_threshold_backward.cpp
    GetDtypeSupportList."""
    value = real_value(threshold)
    if self.dtype == np.int64 and abs(value) > np.finfo(np.float32).eps:
        raise ValueError(f"self has dtype int64, which takes a threshold of 0 only; threshold "
                         f"is {value}")


@register("aclnnThresholdBackward", dtypes=FLOATS, check=_threshold_backward_check)
def threshold_backward(gradOutput: np.ndarray, self: np.ndarray, threshold: Any,
                       out: np.ndarray) -> None:
    """gradOutput where self > threshold (read as a float in float32), else 0."""
    dtype = compute_dtype(promote_types(gradOutput.dtype, self.dtype))
    bound = real_value(threshold) if dtype.kind in "fc" else int(real_value(threshold))
    apply(out, _threshold_backward(np.asarray(bound).astype(dtype)[()]), [gradOutput, self],
          dtype)


# ---- binary: tensor with tensor, tensor with scalar, in place -----------------------------


def _binary_dtype(self: np.ndarray, other: Any) -> np.dtype:
    if isinstance(other, np.ndarray):
        return promote_types(self.dtype, other.dtype)
    return scalar_result_type(self.dtype, other)


def _operands(self: np.ndarray, other: Any, computed: np.dtype | None = None
              ) -> tuple[np.dtype, list[Any]]:
    """The compute dtype of ``self`` with ``other`` (``computed``, CANN's for the operator,
    by default the pair's promotion) and the inputs of :func:`apply`."""
    dtype = compute_dtype(_binary_dtype(self, other) if computed is None else computed)
    second = other if isinstance(other, np.ndarray) else _value(other, dtype)
    return dtype, [self, second]


ARITHMETIC: dict[str, Callable[..., Any]] = {
    "Mul": np.multiply,
    "Div": np.true_divide,
    "Maximum": np.maximum,
    "Minimum": np.minimum,
    "FloorDivide": np.floor_divide,
    "Atan2": np.arctan2,
    "PowTensorTensor": np.power,
    "PowTensorScalar": np.power,
    "Muls": np.multiply,
    "Divs": np.true_divide,
}

COMPARISONS: dict[str, Callable[..., Any]] = {
    "Eq": np.equal, "Ne": np.not_equal, "Gt": np.greater, "Ge": np.greater_equal,
    "Lt": np.less, "Le": np.less_equal,
}


def _floor_divide_exactly(a: np.ndarray, b: np.ndarray) -> Any:
    """PyTorch's floor division of floats, element by element (its div_floor_floating): a / b
    for b == 0; else from the remainder fmod(a, b), corrected to the divisor's sign and to the
    nearest integer, with the sign of a / b on a zero result."""
    with np.errstate(all="ignore"):
        remainder = np.fmod(a, b)
        quotient = (a - remainder) / b
        quotient = np.where((remainder != 0) & ((b < 0) != (remainder < 0)), quotient - 1,
                            quotient)
        floored = np.floor(quotient)
        floored = np.where(quotient - floored > 0.5, floored + 1, floored)
        floored = np.where(quotient == 0, np.copysign(0.0, a / b), floored)
        return np.where(b == 0, a / b, floored)


def _floor_divide(target: np.ndarray, a: Any, b: Any) -> None:
    """floor(a / b) with PyTorch's semantics. Floating dtypes below float64 divide in float64,
    whose quotient of two float32 (or float16) values floors to the exact quotient's floor
    (numpy's float32 floor_divide, through fmod, takes ten times as long); where an operand is
    not finite, PyTorch's rule element by element. Integers floor as numpy does, float64 as
    numpy's floor_divide."""
    if target.dtype.kind != "f" or target.dtype == np.float64:
        np.floor_divide(a, b, out=target)
        return
    wide_a, wide_b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    quotient = np.divide(wide_a, wide_b)
    np.floor(quotient, out=quotient)
    special = ~(np.isfinite(wide_a) & np.isfinite(wide_b))
    if special.any():
        special = np.broadcast_to(special, quotient.shape)
        first, second = np.broadcast_arrays(wide_a, wide_b)
        quotient[special] = _floor_divide_exactly(first[special], second[special])
    np.copyto(target, quotient, casting="unsafe")


def _empty_input(self: np.ndarray, other: Any) -> bool:
    """An empty input: CANN's phase 1 returned an executor without work (nothing is written,
    out may even have another shape: aclnnNeTensor, aclnnLeTensor)."""
    return self.size == 0 or (isinstance(other, np.ndarray) and other.size == 0)


def _arithmetic(function: Callable[..., Any], name: str) -> Callable[..., None]:
    body = _first_on_ties(function) if function in (np.maximum, np.minimum) else \
        _floor_divide if function is np.floor_divide else _ufunc(function)

    def compute(**arguments: Any) -> None:
        self, other, out = arguments.values()
        if _empty_input(self, other):
            return
        dtype, inputs = _operands(self, other, promotion.computes_in(name, self, other, out))
        apply(out, body, inputs, dtype)
    return compute


def _comparison(function: Callable[..., Any], name: str) -> Callable[..., None]:
    body = _ufunc(function)

    def compute(**arguments: Any) -> None:
        self, other, out = arguments.values()
        if _empty_input(self, other):
            return
        dtype, inputs = _operands(self, other, promotion.computes_in(name, self, other, out))
        apply(out, body, inputs, dtype, np.dtype(np.bool_))
    return compute


for _short, _function in ARITHMETIC.items():
    _dtypes = FLOATS64 if _short in ("Div", "Divs", "Atan2") else NUMBERS
    _name = f"aclnn{_short}"
    register(_name, dtypes=_dtypes, check=promotion.CHECKS.get(_name))(
        _arithmetic(_function, _name))

for _short, _function in COMPARISONS.items():
    for _form in ("Tensor", "Scalar"):
        _name = f"aclnn{_short}{_form}"
        register(_name, dtypes=ANY, check=promotion.CHECKS.get(_name))(
            _comparison(_function, _name))


def _scaled_sum(sign: int, alpha: Any) -> Callable[..., None]:
    """self + sign * alpha * other, in the compute dtype (an integer dtype wraps around)."""
    subtract = sign < 0

    def compute(target: np.ndarray, a: Any, b: Any) -> None:
        # bools: the Add is a logical or, the Sub |a - b| (hicann/ops-math math/sub/op_kernel/
        # arch35/sub_dag.h SubBoolCompute), a logical xor; the Mul by alpha a logical and
        difference = np.logical_xor if target.dtype.kind == "b" else np.subtract
        if alpha is None or alpha == 1:
            (difference if subtract else np.add)(a, b, out=target)
            return
        np.multiply(b, alpha, out=target)
        (difference if subtract else np.add)(a, target, out=target)
    return compute


def _alpha(alpha: Any, dtype: np.dtype) -> Any:
    return None if alpha is None else _value(alpha, dtype)


def _add(sign: int, name: str) -> Callable[..., None]:
    def compute(self: np.ndarray, other: Any, alpha: Any, out: np.ndarray) -> None:
        if _empty_input(self, other):
            return
        dtype, inputs = _operands(self, other, promotion.computes_in(name, self, other, out))
        apply(out, _scaled_sum(sign, _alpha(alpha, dtype)), inputs, dtype)
    return compute


for _short, _direction in (("Sub", -1), ("Adds", 1), ("Subs", -1)):  # aclnnAdd is a C kernel
    _name = f"aclnn{_short}"
    register(_name, dtypes=NUMBERS, check=promotion.CHECKS.get(_name))(_add(_direction, _name))


def _inplace_add(sign: int, name: str) -> Callable[..., None]:
    def compute(selfRef: np.ndarray, other: Any, alpha: Any) -> None:
        if _empty_input(selfRef, other):
            return
        computed = promotion.computes_in(name, selfRef, other, selfRef)
        dtype, inputs = _operands(selfRef, other, computed)
        apply(selfRef, _scaled_sum(sign, _alpha(alpha, dtype)), inputs, dtype)
    return compute


for _short, _direction in (("InplaceSub", -1), ("InplaceAdds", 1),  # InplaceAdd: a C kernel
                      ("InplaceSubs", -1)):
    _name = f"aclnn{_short}"
    register(_name, dtypes=NUMBERS, check=promotion.CHECKS.get(_name))(
        _inplace_add(_direction, _name))


def _inplace(function: Callable[..., Any], name: str) -> Callable[..., None]:
    body = _ufunc(function)

    def compute(**arguments: Any) -> None:
        selfRef, other = arguments.values()
        if _empty_input(selfRef, other):
            return
        computed = promotion.computes_in(name, selfRef, other, selfRef)
        dtype, inputs = _operands(selfRef, other, computed)
        apply(selfRef, body, inputs, dtype)
    return compute


for _short, _function in (("InplaceMul", np.multiply), ("InplaceMuls", np.multiply),
                          ("InplaceDiv", np.true_divide), ("InplaceDivs", np.true_divide)):
    _name = f"aclnn{_short}"
    register(_name, dtypes=NUMBERS, check=promotion.CHECKS.get(_name))(
        _inplace(_function, _name))


def _logical(function: Callable[..., Any]) -> Callable[..., None]:
    def compute(self: np.ndarray, other: np.ndarray, out: np.ndarray) -> None:
        if _empty_input(self, other):
            return
        store(out, function(self.astype(bool), other.astype(bool)))
    return compute


for _short, _function in (("LogicalAnd", np.logical_and), ("LogicalOr", np.logical_or),
                          ("LogicalXor", np.logical_xor)):  # the rules check their shapes
    register(f"aclnn{_short}", dtypes=ANY)(_logical(_function))


# ---- three operands -----------------------------------------------------------------------


@register("aclnnSWhere", dtypes=ANY)  # the rules check its shapes
def s_where(condition: np.ndarray, self: np.ndarray, other: np.ndarray, out: np.ndarray) -> None:
    dtype = compute_dtype(promote_types(self.dtype, other.dtype))
    store(out, np.where(condition.astype(bool), self.astype(dtype), other.astype(dtype)))


def _lerp(target: np.ndarray, start: np.ndarray, end: np.ndarray, weight: np.ndarray) -> None:
    """start + w (end - start) where w < 0.5, else end - (end - start) (1 - w), as CANN's Lerp
    kernels select (ops-math math/lerp/op_kernel/arch35/lerp_f32_nddma_without_loops.h): exact
    at both ends, and weight NaN takes the second form."""
    kind = target.dtype.type
    difference = np.subtract(end, start, out=np.empty_like(target))
    low = np.multiply(weight, difference, out=np.empty_like(target))
    np.add(low, start, out=low)
    high = np.subtract(weight, kind(1), out=np.empty_like(target))
    np.multiply(high, difference, out=high)
    np.add(high, end, out=high)
    select(target, np.less(weight, kind(0.5)), low, high)


@register("aclnnLerp", dtypes=FLOATS)  # the rules check its shapes
def lerp(self: np.ndarray, end: np.ndarray, weight: np.ndarray, out: np.ndarray) -> None:
    dtype = compute_dtype(promote_types(promote_types(self.dtype, end.dtype), weight.dtype))
    apply(out, _lerp, [self, end, weight], dtype)


@register("aclnnLerps", dtypes=FLOATS)  # the rules check its shapes
def lerps(self: np.ndarray, end: np.ndarray, weight: Any, out: np.ndarray) -> None:
    # ops-math math/lerp/docs/aclnnLerps&aclnnInplaceLerps.md: aclnnLerp with a scalar weight
    dtype = compute_dtype(promote_types(self.dtype, end.dtype))
    apply(out, _lerp, [self, end, np.asarray(_value(weight, dtype), dtype)], dtype)


def _addc(divide: bool, value: Any) -> Callable[..., None]:
    def compute(target: np.ndarray, a: np.ndarray, t1: np.ndarray, t2: np.ndarray) -> None:
        (np.divide if divide else np.multiply)(t1, t2, out=target)
        np.multiply(target, value, out=target)
        np.add(target, a, out=target)
    return compute


@register("aclnnAddcmul", dtypes=FLOATS)  # the rules check its shapes
def addcmul(self: np.ndarray, tensor1: np.ndarray, tensor2: np.ndarray, value: Any,
            out: np.ndarray) -> None:
    dtype = compute_dtype(promote_types(promote_types(self.dtype, tensor1.dtype), tensor2.dtype))
    apply(out, _addc(False, _value(value, dtype)), [self, tensor1, tensor2], dtype)


@register("aclnnAddcdiv", dtypes=FLOATS)  # the rules check its shapes
def addcdiv(self: np.ndarray, tensor1: np.ndarray, tensor2: np.ndarray, value: Any,
            out: np.ndarray) -> None:
    dtype = compute_dtype(promote_types(promote_types(self.dtype, tensor1.dtype), tensor2.dtype))
    if dtype.kind in "iub":  # int64: the doc's quotient tensor1 / tensor2, not a floor
        dtype = np.dtype(np.float64)
    apply(out, _addc(True, _value(value, dtype)), [self, tensor1, tensor2], dtype)


# ---- clamp, fill, cast --------------------------------------------------------------------


def _bound(value: Any, dtype: np.dtype) -> Any:
    """A clamp bound in the compute dtype: an integer dtype takes the float's integer part,
    saturated to the dtype's range."""
    if value is None:
        return None
    if dtype.kind in "iu" and np.asarray(value).dtype.kind == "f":
        info = np.iinfo(dtype)
        number = float(value)
        if math.isnan(number):
            return dtype.type(0)
        return dtype.type(int(min(max(math.trunc(number), info.min), info.max)))
    return _value(value, dtype)


def _clamp(low: Any, high: Any) -> Callable[..., None]:
    def compute(target: np.ndarray, x: np.ndarray) -> None:
        # the bound first: numpy gives the second argument on ties, x (-0.0 stays), as PyTorch
        if low is None:
            np.minimum(high, x, out=target)
            return
        np.maximum(low, x, out=target)
        if high is not None:
            np.minimum(high, target, out=target)
    return compute


def _clamp_into(self: np.ndarray, low: Any, high: Any, out: np.ndarray) -> None:
    """Clamp as CANN computes it on Atlas A2/A3 (ops-math conversion/clip_by_value_v2/op_api/
    aclnn_clamp.cpp, aclnnClampCommon): self and the bounds are cast to out's dtype, which the
    clip runs in (an int tensor with float bounds and a float out keeps the fractions)."""
    dtype = compute_dtype(out.dtype)
    apply(out, _clamp(_bound(low, dtype), _bound(high, dtype)), [self], dtype)


@register("aclnnClamp", dtypes=NUMBERS, check=promotion.check_clamp)
def clamp(self: np.ndarray, clipValueMin: Any, clipValueMax: Any, out: np.ndarray) -> None:
    if clipValueMin is None and clipValueMax is None:
        raise ValueError("at least one of clipValueMin and clipValueMax must be given")
    _clamp_into(self, clipValueMin, clipValueMax, out)


@register("aclnnClampMin", dtypes=NUMBERS, check=promotion.check_clamp_bound)
def clamp_min(self: np.ndarray, clipValueMin: Any, out: np.ndarray) -> None:
    _clamp_into(self, clipValueMin, None, out)


@register("aclnnClampMax", dtypes=NUMBERS, check=promotion.check_clamp_bound)
def clamp_max(self: np.ndarray, clipValueMax: Any, out: np.ndarray) -> None:
    _clamp_into(self, None, clipValueMax, out)


@register("aclnnInplaceFillScalar", dtypes=ANY)
def inplace_fill_scalar(selfRef: np.ndarray, value: Any) -> None:
    # a complex value (it promotes with every dtype) fills a real selfRef with its real part
    fill = np.asarray(value)
    store(selfRef, fill if selfRef.dtype.kind == "c" else fill.real)


@register("aclnnInplaceZero", dtypes=ANY)
def inplace_zero(selfRef: np.ndarray) -> None:
    selfRef[...] = 0


@register("aclnnInplaceMaskedFillScalar", dtypes=ANY)
def inplace_masked_fill_scalar(selfRef: np.ndarray, mask: np.ndarray, value: Any) -> None:
    selfRef[np.broadcast_to(mask.astype(bool), selfRef.shape)] = \
        np.asarray(value).astype(selfRef.dtype)


def _cast_check(self: np.ndarray, dtype: int, out: np.ndarray) -> None:
    if self.shape != out.shape:
        raise ValueError(f"out has shape {out.shape}, self {self.shape}: they must be equal")
    if numpy_dtype(dtype) != out.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}, but dtype is aclDataType {dtype}")


@register("aclnnCast", dtypes=ANY, check=_cast_check)
def cast(self: np.ndarray, dtype: int, out: np.ndarray) -> None:
    np.copyto(out, self, casting="unsafe")  # one pass, rounding to nearest even


@register("aclnnInplaceOne", dtypes=ANY)
def inplace_one(selfRef: np.ndarray) -> None:
    selfRef[...] = 1


# In-place forms of the unary operators: (selfRef) or, as CANN names it for InplaceSqrt, (self).
INPLACE_UNARY = {"aclnnInplaceRelu": "aclnnRelu", "aclnnInplaceSigmoid": "aclnnSigmoid",
                 "aclnnInplaceTanh": "aclnnTanh", "aclnnInplaceExp": "aclnnExp",
                 "aclnnInplaceSqrt": "aclnnSqrt", "aclnnInplaceNeg": "aclnnNeg",
                 "aclnnInplaceLog": "aclnnLog"}


def _inplace_unary(unary: Unary) -> Callable[..., None]:
    def compute(**arguments: Any) -> None:
        (target,) = arguments.values()
        if target.size:
            apply(target, unary.compute, [target],
                  _unary_dtype(unary, target.dtype, target.dtype))
    return compute


for _name, _unary_name in INPLACE_UNARY.items():
    _unary_kernel = UNARY[_unary_name]
    register(_name, dtypes=_unary_kernel.dtypes)(_inplace_unary(_unary_kernel))
