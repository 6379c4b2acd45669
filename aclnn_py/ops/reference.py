"""The reference semantics of the curated operators and their per-dtype tolerances, stated once.

The test suite (``tests/tolerances.py``) and the conformance report
(:mod:`aclnn_py.conformance`) both judge results with these.

Golden semantics are PyTorch's ``aten::mse_loss_backward`` / ``F.mse_loss``
(see shared CANN facts §8, §11): compute in float64, then round once to the
result's dtype. The ``mse_loss_backward`` divisor for ``"mean"`` is ``x.size``,
not the broadcast size; ``mse_loss``'s mean is over the broadcast shape, and
CANN's empty results are NaN (``"mean"``) and 0 (``"sum"``).

Tolerances: an element passes when ``|actual - golden| <= atol + rtol * |golden|``
with ``golden`` the float64 value rounded to the result's dtype. ``rtol`` is the
operator-repo practice for float32 ("双万分之一") and float16 ("双千分之一") and
2**-6 for bfloat16 (two bfloat16 ulps at the top of a binade); ``atol`` covers
values near zero, where relative error is meaningless (msprobe's small-value
thresholds). NaN must meet NaN and infinities must match exactly.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import ml_dtypes
import numpy as np

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FLOAT32 = np.dtype(np.float32)
FLOAT16 = np.dtype(np.float16)
DTYPES = (FLOAT32, FLOAT16, BFLOAT16)
REDUCTIONS = ("none", "mean", "sum")


class Tolerance(NamedTuple):
    """``|actual - golden| <= atol + rtol * |golden|`` per element."""

    rtol: float
    atol: float


TOLERANCES: dict[np.dtype, Tolerance] = {
    FLOAT32: Tolerance(rtol=1e-4, atol=1e-9),
    FLOAT16: Tolerance(rtol=1e-3, atol=1e-5),
    BFLOAT16: Tolerance(rtol=2.0**-6, atol=1e-5),
}


def tolerance(*dtypes: Any) -> Tolerance:
    """The loosest tolerance among ``dtypes`` (a result cast through several dtypes)."""
    chosen = [TOLERANCES[np.dtype(d)] for d in dtypes]
    return Tolerance(max(t.rtol for t in chosen), max(t.atol for t in chosen))


def as_float64(value: Any) -> np.ndarray:
    return np.asarray(value).astype(np.float64)


def golden_backward(grad: Any, x: Any, y: Any, reduction: str | int) -> np.ndarray:
    """``norm * (x - y) * grad`` in float64, broadcast; ``norm = 2 / x.size`` for mean."""
    g, a, b = as_float64(grad), as_float64(x), as_float64(y)
    mean = reduction in ("mean", 1)
    norm = 2.0 / a.size if mean and a.size else 2.0
    with np.errstate(all="ignore"):
        return np.asarray(norm * (a - b) * g)


def golden_loss(x: Any, y: Any, reduction: str | int) -> np.ndarray:
    """``(x - y) ** 2`` in float64 over the broadcast shape; its mean (NaN if empty) or sum."""
    with np.errstate(all="ignore"):
        return _reduce((as_float64(x) - as_float64(y)) ** 2, reduction)


def _reduce(values: np.ndarray, reduction: str | int) -> np.ndarray:
    """``values`` as they are ("none"), their mean (NaN if empty) or sum, in float64."""
    if reduction in ("none", 0):
        return values
    if reduction in ("sum", 2):
        return np.asarray(values.sum())
    return np.asarray(values.mean() if values.size else np.nan)


def _mean_over_result(values: np.ndarray, reduction: str | int) -> np.ndarray:
    """A backward's ``values`` divided for "mean" by the result's element count."""
    if reduction in ("mean", 1) and values.size:
        return values / values.size
    return values


def golden_l1_loss(x: Any, y: Any, reduction: str | int) -> np.ndarray:
    """``|x - y|`` over the broadcast shape; its mean (NaN if empty) or sum."""
    with np.errstate(all="ignore"):
        return _reduce(np.abs(as_float64(x) - as_float64(y)), reduction)


def golden_l1_loss_backward(grad: Any, x: Any, y: Any, reduction: str | int) -> np.ndarray:
    """``grad * sign(x - y)`` broadcast; ÷ the result's element count for "mean"."""
    with np.errstate(all="ignore"):
        values = as_float64(grad) * np.sign(as_float64(x) - as_float64(y))
        return _mean_over_result(values, reduction)


def golden_smooth_l1_loss(x: Any, y: Any, reduction: str | int, beta: float = 1.0
                          ) -> np.ndarray:
    """PyTorch's smooth L1: ``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - beta/2``."""
    with np.errstate(all="ignore"):
        d = as_float64(x) - as_float64(y)
        if beta == 0:
            return _reduce(np.abs(d), reduction)
        values = np.where(np.abs(d) < beta, 0.5 * d * d / beta, np.abs(d) - 0.5 * beta)
        return _reduce(values, reduction)


def golden_smooth_l1_loss_backward(grad: Any, x: Any, y: Any, reduction: str | int,
                                   beta: float = 1.0) -> np.ndarray:
    """``grad * (d / beta if |d| < beta else sign(d))``, broadcast; ÷ ``x.size`` for "mean"
    (CANN's kernels and PyTorch divide by the input's count, as for MSE)."""
    with np.errstate(all="ignore"):
        g, a = as_float64(grad), as_float64(x)
        d = a - as_float64(y)
        slope = np.sign(d) if beta == 0 else np.where(np.abs(d) < beta, d / beta, np.sign(d))
        values = g * slope
        return np.asarray(values / a.size if reduction in ("mean", 1) and a.size else values)


def golden_add(x: Any, y: Any, alpha: float = 1) -> np.ndarray:
    """``x + alpha * y`` in float64, broadcast."""
    with np.errstate(all="ignore"):
        return as_float64(x) + alpha * as_float64(y)


# The one reference formula of each operator, by its Python function's name.
GOLDEN: dict[str, Callable[..., np.ndarray]] = {
    "mse_loss_backward": golden_backward,
    "mse_loss": golden_loss,
    "l1_loss": golden_l1_loss,
    "l1_loss_backward": golden_l1_loss_backward,
    "smooth_l1_loss": golden_smooth_l1_loss,
    "smooth_l1_loss_backward": golden_smooth_l1_loss_backward,
    "add": golden_add,
}


def rounded(golden: np.ndarray, *dtypes: Any) -> np.ndarray:
    """``golden`` rounded through each of ``dtypes`` in turn, as float64."""
    value = np.asarray(golden)
    with np.errstate(over="ignore"):
        for dtype in dtypes:
            value = value.astype(dtype)
    return value.astype(np.float64)
