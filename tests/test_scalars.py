"""Numbers and numpy scalars as arguments: the fast path takes them, typed exactly as
validation types them (a Python number or numpy.float64 takes the ``like`` input's dtype
where the operator takes numbers; any other numpy scalar is the 0-d array of its own
dtype), with results bit for bit those of the 0-d arrays they stand for. Over numpy
arrays a scalar shares the layout of its 0-d array.
"""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py.engine import dispatch as _dispatch
from aclnn_py.engine.validate import as_array
from aclnn_py.ops.specs import SPECS

NUMBER_SPECS = [spec for spec in SPECS.values() if spec.numbers]
KINDS = {"float": 0.75, "int": 3, "np.float64": np.float64(0.75), "np.float32": np.float32(0.75),
         "np.float16": np.float16(0.75)}


def _attributes(spec) -> tuple:
    return tuple("none" if a.name == "reduction" else a.default for a in spec.attributes)


def _function(spec):
    return getattr(aclnn_py, spec.function)


def _call(spec, inputs):
    attributes = dict(zip((a.name for a in spec.attributes), _attributes(spec)))
    return _function(spec)(*inputs, **attributes)


def _typed(spec, inputs, index):
    """The input at ``index`` as validation types it: ``as_array`` with the like dtype."""
    like = inputs[spec.like_index]
    dtype = like.dtype if index in spec.number_indices else None
    return as_array(inputs[index], dtype, argument="value")


@pytest.fixture
def validations(monkeypatch):
    """How many calls were validated (the fast paths validate nothing)."""
    seen = []
    validated = _dispatch.validated

    def counting(*args, **kwargs):
        seen.append(args[0].function)
        return validated(*args, **kwargs)

    monkeypatch.setattr(_dispatch, "validated", counting)
    return seen


def _inputs(spec, dtype, index, value, rng):
    arrays = [rng.uniform(-2, 2, size=5).astype(dtype) for _ in spec.inputs]
    arrays[index] = value
    return arrays


def _bits(array) -> np.ndarray:
    array = np.asarray(array)
    return array.view(f"u{array.dtype.itemsize}") if array.dtype.kind == "f" else array


def _same(actual, expected) -> bool:
    actual, expected = np.asarray(actual), np.asarray(expected)
    return actual.dtype == expected.dtype and actual.shape == expected.shape and \
        np.array_equal(_bits(actual), _bits(expected))


def _outcome(spec, inputs, on_device=False):
    """The call's result (as numpy), or the type of the error it raised."""
    try:
        result = _call(spec, inputs)
    except (TypeError, ValueError) as error:
        return type(error)
    return result.numpy() if on_device else result


@pytest.mark.parametrize("spec", NUMBER_SPECS, ids=lambda s: s.function)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("kind", list(KINDS))
def test_numpy_calls_type_scalars_as_validation_does_and_repeat_without_it(
        spec, dtype, kind, validations):
    rng = np.random.default_rng(0)
    for index in range(len(spec.inputs)):
        if index == spec.like_index:
            continue
        inputs = _inputs(spec, dtype, index, KINDS[kind], rng)
        as_zero_d = list(inputs)
        try:
            as_zero_d[index] = _typed(spec, inputs, index)
        except TypeError:  # a number where the operator takes none
            as_zero_d = None
        expected = _outcome(spec, as_zero_d) if as_zero_d else TypeError
        del validations[:]
        first = _outcome(spec, inputs)
        seen = len(validations)
        again = _outcome(spec, inputs)
        if isinstance(expected, type):
            assert first is expected and again is expected
            assert len(validations) == 2  # refused every time, never taken fast
            continue
        assert _same(first, expected) and _same(again, expected), (index, first, expected)
        # a numpy scalar finds its 0-d array's layout at once, a number after its first call
        assert seen <= (index in spec.number_indices and kind in ("float", "int", "np.float64"))
        assert len(validations) == seen, validations


def test_a_scalar_and_its_zero_d_array_share_one_layout(validations):
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    y = np.zeros(7, np.float32)
    zero_d = aclnn_py.mse_loss_backward(np.asarray(np.float32(0.5)), x, y, "none")
    scalar = aclnn_py.mse_loss_backward(np.float32(0.5), x, y, "none")
    assert len(validations) == 1
    assert _same(scalar, zero_d)


def test_a_float16_scalar_is_float16_where_float32_arrays_promote_it(validations):
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    y = np.zeros(7, np.float32)
    for _ in range(2):
        result = aclnn_py.l1_loss_backward(np.float16(0.1), x, y, "none")
        assert result.dtype == np.float32
        assert _same(result, aclnn_py.l1_loss_backward(np.asarray(np.float16(0.1)), x, y,
                                                       "none"))
        with pytest.raises(TypeError, match="share one dtype"):
            aclnn_py.mse_loss_backward(np.float16(0.1), x, y)


def test_a_bfloat16_scalar_takes_the_fast_path(validations):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from aclnn_py.ops.dtypes import soc_supports_bfloat16

    if not soc_supports_bfloat16(aclnn_py.runtime_info()["soc_name"]):
        pytest.skip("this SoC has no bfloat16 aclnn kernels")
    x = np.linspace(-1, 1, 7).astype(ml_dtypes.bfloat16)
    y = np.zeros(7, ml_dtypes.bfloat16)
    grad = ml_dtypes.bfloat16(0.5)
    first = aclnn_py.mse_loss_backward(grad, x, y, "none")
    again = aclnn_py.mse_loss_backward(grad, x, y, "none")
    assert len(validations) == 1
    expected = aclnn_py.mse_loss_backward(np.asarray(grad), x, y, "none")
    assert _same(first, expected) and _same(again, expected)
