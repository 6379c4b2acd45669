"""Helpers for checking aclnn_py results in users' own test suites.

:func:`assert_close` compares a result with a reference the way CANN judges operator
precision, and says where and by how much they differ; its ``bit_exact`` mode compares
float16, bfloat16 and float32 bit patterns. :func:`default_tolerance` gives the
thresholds it uses per dtype.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

__all__ = ["Tolerance", "assert_close", "default_tolerance"]

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
_FLOAT16 = np.dtype(np.float16)
_FLOAT32 = np.dtype(np.float32)

# CANN's precision standard for ecosystem operators (hicann/opbase,
# docs/en/ops_precision_standard/experimental_standard.md): the threshold T per dtype.
_THRESHOLDS = {_FLOAT16: 2.0**-10, _BFLOAT16: 2.0**-7, _FLOAT32: 2.0**-13}
_THRESHOLD_TEXT = {_FLOAT16: "2**-10", _BFLOAT16: "2**-7", _FLOAT32: "2**-13"}
# The standard's relative error is |actual - golden| / (|golden| + 1e-7).
_GUARD = 1e-7
_BITS = {_FLOAT16: np.uint16, _BFLOAT16: np.uint16, _FLOAT32: np.uint32}


class Tolerance(NamedTuple):
    """Thresholds of :func:`assert_close` for one dtype.

    An element passes when ``|actual - expected| <= atol + rtol * |expected|``; the mean
    relative error must stay below ``mean_rtol`` (None: not checked).
    """

    rtol: float
    atol: float
    mean_rtol: float | None = None


def default_tolerance(dtype: Any) -> Tolerance:
    """The thresholds of CANN's precision standard for ecosystem operators for ``dtype``.

    The standard (hicann/opbase ``docs/en/ops_precision_standard/experimental_standard.md``)
    takes each element's relative error ``|a - g| / (|g| + 1e-7)`` against the golden
    value ``g`` and a threshold ``T`` per dtype (float16 2**-10, bfloat16 2**-7, float32
    2**-13); a result passes when the largest relative error (MARE) is below ``10 * T``
    and the mean (MERE) below ``T``. As a per-element check that is
    ``rtol = 10 * T``, ``atol = 10 * T * 1e-7``, and ``mean_rtol = T``.
    Integer and bool dtypes compare exactly. TypeError for other dtypes (the standard
    gives no threshold for float64, for instance: pass ``rtol`` and ``atol``).
    """
    dtype = np.dtype(dtype)
    threshold = _THRESHOLDS.get(dtype)
    if threshold is not None:
        return Tolerance(10 * threshold, 10 * threshold * _GUARD, threshold)
    if dtype.kind in "biu":
        return Tolerance(0.0, 0.0)
    raise TypeError(f"no default tolerance for {dtype.name}: CANN's precision standard gives "
                    "thresholds for float32, float16 and bfloat16 only; pass rtol and atol")


def _as_numpy(value: Any) -> np.ndarray:
    """A numpy array of ``value`` (a DeviceArray is copied back once its work is done)."""
    array = np.asarray(value)
    if array.dtype.kind not in "biuf" and array.dtype != _BFLOAT16:
        raise TypeError(f"assert_close compares real numbers, got dtype {array.dtype}")
    return array


def _tolerance_for(actual: np.dtype, expected: np.dtype) -> tuple[Tolerance, str]:
    """The looser default of the two dtypes (a dtype the standard lacks is ignored while
    the other has one), and how it was chosen."""
    known = [d for d in (actual, expected) if d in _THRESHOLDS]
    if known:
        dtype = max(known, key=lambda d: _THRESHOLDS[d])
        return default_tolerance(dtype), (
            f"{dtype.name} defaults of CANN's ecosystem-operator precision standard: "
            f"MARE < 10 * {_THRESHOLD_TEXT[dtype]}, MERE < {_THRESHOLD_TEXT[dtype]}")
    return default_tolerance(actual), f"{actual.name}: exact"


def _index(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _number(value: Any) -> str:
    """A numpy scalar as its dtype prints it (the shortest text that reads back exactly)."""
    return str(value)


def assert_close(actual: Any, expected: Any, *, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = True,
                 mismatch_ratio: float = 0.0, bit_exact: bool = False) -> None:
    """Raise AssertionError unless ``actual`` matches ``expected`` element by element.

    Parameters
    ----------
    actual, expected : array_like or DeviceArray
        Of one shape (no broadcasting); ``expected`` may have a wider dtype (a float64
        golden value, say). Device arrays are copied back once their work is done.
    rtol, atol : float, optional
        An element passes when ``|actual - expected| <= atol + rtol * |expected|``. Give
        both or neither. By default both come from CANN's precision standard for
        ecosystem operators (hicann/opbase ``docs/en/ops_precision_standard/
        experimental_standard.md``; see :func:`default_tolerance`) for the less precise
        of the two dtypes among float32, float16 and bfloat16, and its second criterion
        holds as well: the mean relative error stays below ``T`` (float16 2**-10,
        bfloat16 2**-7, float32 2**-13). Integer and bool arrays compare exactly.
    equal_nan : bool
        NaN in both at the same place counts as equal. Infinities must match exactly.
    mismatch_ratio : float
        Ratio mode: the check passes while the share of elements that fail stays below
        this (``0``, the default: none may fail). ``rtol=atol=1e-3,
        mismatch_ratio=1e-3`` is the "double thousandth" criterion of Huawei's msprobe
        accuracy checker. A NaN or infinity where none is expected always fails.
    bit_exact : bool
        Compare bit patterns instead (float16, bfloat16 or float32 ``actual``):
        ``expected`` is first rounded to ``actual``'s dtype (to nearest, ties to even),
        so a float64 golden value checks correct rounding. ``-0.0`` differs from ``0.0``;
        with ``equal_nan`` any NaN matches any NaN, whatever its payload.

    Raises
    ------
    AssertionError
        Saying how many elements (and what share) fail, the worst of them (index,
        actual, expected, absolute and relative error) and the tolerance used.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this one's
    actual_array, expected_array = _as_numpy(actual), _as_numpy(expected)
    if actual_array.shape != expected_array.shape:
        raise AssertionError(f"shapes differ: actual {actual_array.shape}, "
                             f"expected {expected_array.shape}")
    if not 0 <= mismatch_ratio < 1:
        raise ValueError(f"mismatch_ratio must be in [0, 1), got {mismatch_ratio!r}")
    if bit_exact:
        if rtol is not None or atol is not None:
            raise ValueError("bit_exact compares bit patterns: rtol and atol do not apply")
        _assert_bits(actual_array, expected_array, equal_nan, mismatch_ratio)
        return
    if (rtol is None) != (atol is None):
        raise ValueError("give both rtol and atol, or neither (for the defaults)")
    if rtol is None or atol is None:
        tolerance, origin = _tolerance_for(actual_array.dtype, expected_array.dtype)
    else:
        if rtol < 0 or atol < 0 or math.isnan(rtol) or math.isnan(atol):
            raise ValueError(f"rtol and atol must be >= 0, got {rtol!r} and {atol!r}")
        tolerance, origin = Tolerance(float(rtol), float(atol)), "given"
    _assert_values(actual_array, expected_array, tolerance, origin, equal_nan, mismatch_ratio)


def _assert_values(actual: np.ndarray, expected: np.ndarray, tolerance: Tolerance, origin: str,
                   equal_nan: bool, mismatch_ratio: float) -> None:
    __tracebackhide__ = True  # pytest shows the caller's line, not this one's
    a = actual.astype(np.float64).ravel()
    e = expected.astype(np.float64).ravel()
    with np.errstate(all="ignore"):
        difference = np.abs(a - e)
        allowed = tolerance.atol + tolerance.rtol * np.abs(e)
        finite = np.isfinite(a) & np.isfinite(e)
        passes = np.where(finite, difference <= allowed, a == e)
        if equal_nan:
            passes |= np.isnan(a) & np.isnan(e)
        # How far past its allowance each element is: the worst is reported.
        excess = np.where(finite, difference / np.where(allowed > 0, allowed, np.inf), np.inf)
        excess[finite & (allowed == 0) & (difference > 0)] = np.inf
    failing = ~passes
    count = int(failing.sum())
    unexpected_nonfinite = bool((failing & ~finite).any())
    size = a.size
    within_ratio = count == 0 or (not unexpected_nonfinite and count / size < mismatch_ratio)
    mean_error = None
    mean_ok = True
    if tolerance.mean_rtol is not None and finite.any():
        mean_error = float(np.mean(difference[finite] / (np.abs(e[finite]) + _GUARD)))
        mean_ok = mean_error < tolerance.mean_rtol
    if within_ratio and mean_ok:
        return
    lines = []
    if count:
        allowance = f" (at most {mismatch_ratio:.3g} allowed)" if mismatch_ratio else ""
        lines.append(f"Not close: {count} of {size} elements ({count / size:.3%}) differ beyond "
                     f"the tolerance{allowance}.")
        worst = int(np.argmax(np.where(failing, excess, -1.0)))
        lines.append(_worst_line(worst, actual, expected, a, e))
    else:
        lines.append(f"Not close: every element is within the tolerance, but the mean relative "
                     f"error {mean_error:.6g} is not below {tolerance.mean_rtol:.6g}.")
        with np.errstate(all="ignore"):
            relative = np.where(finite, difference / (np.abs(e) + _GUARD), -1.0)
        lines.append(_worst_line(int(np.argmax(relative)), actual, expected, a, e))
    mean_text = "" if tolerance.mean_rtol is None else (
        f"; mean relative error < {tolerance.mean_rtol:.6g}"
        + (f" (it is {mean_error:.6g})" if mean_error is not None else ""))
    lines.append(f"Tolerance: |actual - expected| <= atol + rtol * |expected| with "
                 f"rtol={tolerance.rtol:.6g}, atol={tolerance.atol:.6g}{mean_text} ({origin}); "
                 f"equal_nan={equal_nan}.")
    lines.append(f"dtypes: actual {actual.dtype.name}, expected {expected.dtype.name}.")
    raise AssertionError("\n".join(lines))


def _worst_line(flat: int, actual: np.ndarray, expected: np.ndarray, a: np.ndarray,
                e: np.ndarray) -> str:
    """The report line of element ``flat`` (``a`` and ``e``: the arrays as float64)."""
    with np.errstate(all="ignore"):
        absolute = abs(float(a[flat]) - float(e[flat]))
        relative = absolute / abs(float(e[flat])) if e[flat] != 0 else (
            0.0 if absolute == 0 else math.inf)
    return (f"Worst element at index {_index(flat, actual.shape)}: actual "
            f"{_number(actual.ravel()[flat])}, expected {_number(expected.ravel()[flat])} "
            f"(abs error {absolute:.6g}, rel error {relative:.6g}).")


def _assert_bits(actual: np.ndarray, expected: np.ndarray, equal_nan: bool,
                 mismatch_ratio: float) -> None:
    __tracebackhide__ = True  # pytest shows the caller's line, not this one's
    dtype = actual.dtype
    bits = _BITS.get(dtype)
    if bits is None:
        raise TypeError(f"bit_exact compares float16, bfloat16 or float32 results, got "
                        f"{dtype.name}")
    rounded = expected
    if expected.dtype != dtype:
        with np.errstate(over="ignore"):
            rounded = expected.astype(dtype)
    a_bits = np.ascontiguousarray(actual).view(bits).ravel()
    e_bits = np.ascontiguousarray(rounded).view(bits).ravel()
    passes = a_bits == e_bits
    if equal_nan:
        passes |= np.isnan(actual.astype(np.float32)).ravel() & \
            np.isnan(rounded.astype(np.float32)).ravel()
    count = int((~passes).sum())
    size = a_bits.size
    if count == 0 or count / size < mismatch_ratio:
        return
    flat = int(np.argmax(~passes))
    a = float(actual.ravel()[flat])
    e = float(rounded.ravel()[flat])
    width = 2 * dtype.itemsize
    place = (f"First differing element at index {_index(flat, actual.shape)}: actual "
             f"{_number(actual.ravel()[flat])} (0x{int(a_bits[flat]):0{width}x}), expected "
             f"{_number(rounded.ravel()[flat])} "
             f"(0x{int(e_bits[flat]):0{width}x})")
    if math.isfinite(a) and math.isfinite(e) and math.copysign(1, a) == math.copysign(1, e):
        place += f", {abs(int(a_bits[flat]) - int(e_bits[flat]))} units in the last place apart"
    rounding = (f" (expected {expected.dtype.name} rounded to {dtype.name})"
                if expected.dtype != dtype else "")
    raise AssertionError("\n".join([
        f"Not bit-exact: {count} of {size} elements ({count / size:.3%}) differ{rounding}.",
        place + ".",
        f"Tolerance: identical bit patterns of {dtype.name}; equal_nan={equal_nan}."]))
