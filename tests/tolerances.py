"""The golden semantics and the per-dtype tolerances of the numerical tests: those of
:mod:`aclnn_py.ops.reference` (stated once there, shared with the conformance report), and
:func:`assert_close`, which judges a result by them."""

from __future__ import annotations

from typing import Any

import numpy as np

from aclnn_py.ops.reference import (  # noqa: F401 - re-exported for the tests
    BFLOAT16,
    DTYPES,
    FLOAT16,
    FLOAT32,
    GOLDEN,
    REDUCTIONS,
    TOLERANCES,
    Tolerance,
    as_float64,
    golden_add,
    golden_backward,
    golden_l1_loss,
    golden_l1_loss_backward,
    golden_loss,
    golden_smooth_l1_loss,
    golden_smooth_l1_loss_backward,
    rounded,
    tolerance,
)


def assert_close(actual: np.ndarray, golden: Any, dtype: Any, *, via: tuple[Any, ...] = (),
                 atol: float | None = None) -> None:
    """``actual`` has ``dtype`` and ``golden``'s shape, and matches it within the tolerance.

    ``golden`` (float64) is rounded through ``via`` (e.g. the inputs' dtype when
    ``out`` has another one) and then to ``dtype``; the tolerance is the loosest
    of all those dtypes. ``atol`` overrides the table's for exactness checks.
    """
    dtype = np.dtype(dtype)
    assert isinstance(actual, np.ndarray), type(actual)
    assert actual.dtype == dtype, (actual.dtype, dtype)
    golden = np.asarray(golden)
    assert actual.shape == golden.shape, (actual.shape, golden.shape)
    expected = rounded(golden, *via, dtype)
    rtol, table_atol = tolerance(dtype, *via)
    np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=rtol,
                               atol=table_atol if atol is None else atol, equal_nan=True)
