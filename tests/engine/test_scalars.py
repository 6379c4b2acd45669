"""Numbers and numpy scalars as arguments: the fast paths take them, typed exactly as
validation types them (a Python number or numpy.float64 takes the ``like`` input's dtype
where the operator takes numbers; any other numpy scalar is the 0-d array of its own
dtype), with results bit for bit those of the 0-d arrays they stand for.

Over numpy arrays a scalar shares the layout of its 0-d array; over device arrays it is a
constant kept on the device per stream and value (``engine.constants``), uploaded once,
told apart by its bytes (-0.0 from 0.0; NaN finds itself), bounded, and released by
``empty_cache()``, by its stream's end and at teardown.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from conftest import run_python

import aclnn_py
from aclnn_py.engine import constants as _constants
from aclnn_py.engine import validate as _validate
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
    validated = _validate.validated

    def counting(*args, **kwargs):
        seen.append(args[0].function)
        return validated(*args, **kwargs)

    monkeypatch.setattr(_validate, "validated", counting)  # (what validate.placed calls)
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


def _each_number_input(spec, dtype, kind: str, seed: int):
    """For each input but the one the result takes its type from: its index and the inputs
    with a ``KINDS[kind]`` number there (from one generator seeded with ``seed``)."""
    rng = np.random.default_rng(seed)
    for index in range(len(spec.inputs)):
        if index != spec.like_index:
            yield index, _inputs(spec, dtype, index, KINDS[kind], rng)


@pytest.mark.parametrize("spec", NUMBER_SPECS, ids=lambda s: s.function)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("kind", list(KINDS))
def test_numpy_calls_type_scalars_as_validation_does_and_repeat_without_it(
        spec, dtype, kind, validations):
    for index, inputs in _each_number_input(spec, dtype, kind, seed=0):
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
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="pip install ml_dtypes")
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


# ---- device arrays: constants ------------------------------------------------------------


@pytest.fixture
def empty_constants():
    aclnn_py.synchronize()
    aclnn_py.empty_cache()
    assert _constants.count() == 0
    yield
    aclnn_py.synchronize()
    aclnn_py.empty_cache()


def _uploads() -> int:
    return aclnn_py.emulator.stats()["h2d_bytes"] if aclnn_py.emulator.loaded() else 0


@pytest.mark.parametrize("spec", NUMBER_SPECS, ids=lambda s: s.function)
@pytest.mark.parametrize("kind", list(KINDS))
def test_device_calls_upload_a_scalar_once_and_repeat_without_validation(
        spec, kind, validations, empty_constants):
    for index, host in _each_number_input(spec, np.float32, kind, seed=1):
        device = [value if i == index else aclnn_py.to_device(value)
                  for i, value in enumerate(host)]
        try:
            zero_d = _typed(spec, host, index)
        except TypeError:
            zero_d = None
        as_zero_d = list(device)
        if zero_d is not None:
            as_zero_d[index] = aclnn_py.to_device(zero_d)
        expected = _outcome(spec, as_zero_d, True) if zero_d is not None else TypeError
        del validations[:]
        kept = _constants.count()
        first = _outcome(spec, device, True)
        uploads, seen = _uploads(), len(validations)
        again = _outcome(spec, device, True)
        if isinstance(expected, type):
            assert first is expected and again is expected
            assert len(validations) == 2 and _constants.count() == kept
            continue
        assert _uploads() == uploads  # the constant stayed on the device
        assert _same(first, expected) and _same(again, expected), (index, first, expected)
        # validated when its constant was new (one operator's inputs may share one)
        assert seen == (_constants.count() - kept) and len(validations) == seen, validations


def test_negative_zero_and_zero_are_two_constants(empty_constants):
    x = aclnn_py.to_device(np.array([-0.0, 1.0], np.float32))
    y = aclnn_py.to_device(np.array([-1.0, 0.0], np.float32))
    for order in ((0.0, -0.0), (-0.0, 0.0)):
        for grad in order:
            result = aclnn_py.mse_loss_backward(grad, x, y, "none").numpy()
            assert list(np.signbit(result)) == [np.signbit(grad)] * 2, (grad, result)
            added = aclnn_py.add(x, grad).numpy()  # -0.0 + -0.0 is -0.0; -0.0 + 0.0 is 0.0
            assert np.signbit(added[0]) == np.signbit(grad), (grad, added)
    assert _constants.count() == 2  # one each, whichever operator and input takes it


def test_nan_constants_find_themselves(empty_constants):
    x = aclnn_py.to_device(np.ones(3, np.float32))
    for _ in range(3):
        result = aclnn_py.mse_loss_backward(float("nan"), x, x, "none").numpy()
        assert np.isnan(result).all()
        assert np.isnan(aclnn_py.mse_loss_backward(np.float32("nan"), x, x, "none").numpy()).all()
    assert _constants.count() == 2


def test_constants_are_bounded_and_the_least_recently_used_goes(empty_constants):
    x = aclnn_py.to_device(np.full(2, 2.0, np.float32))
    y = aclnn_py.to_device(np.zeros(2, np.float32))
    values = [float(k) for k in range(_constants.CAPACITY + 10)]
    for value in values:
        aclnn_py.mse_loss_backward(value, x, y, "sum")
        assert _constants.count() <= _constants.CAPACITY
    assert _constants.count() == _constants.CAPACITY
    for value in (values[0], values[-1], values[5]):  # the first went, and comes back
        assert aclnn_py.mse_loss_backward(value, x, y, "none").numpy().tolist() == [4 * value] * 2


def test_a_constant_found_again_is_the_last_to_go(empty_constants):
    """Finding a constant makes it the most recently used: the next one kept pushes out
    the oldest of the others, and the one found stays on the device."""
    x = aclnn_py.to_device(np.full(2, 2.0, np.float32))
    y = aclnn_py.to_device(np.zeros(2, np.float32))
    values = [float(k) for k in range(_constants.CAPACITY)]
    for value in values:
        aclnn_py.mse_loss_backward(value, x, y, "sum")
    aclnn_py.mse_loss_backward(values[0], x, y, "sum")  # found: now the most recent
    aclnn_py.mse_loss_backward(-1.0, x, y, "sum")  # kept: values[1] goes
    assert _constants.count() == _constants.CAPACITY
    uploads = _uploads()
    assert aclnn_py.mse_loss_backward(values[0], x, y, "none").numpy().tolist() == [0.0] * 2
    assert _uploads() == uploads  # still on the device
    assert aclnn_py.mse_loss_backward(values[1], x, y, "none").numpy().tolist() == [4.0] * 2
    assert _uploads() > uploads  # it went, and came back


def test_constants_stay_consistent_while_threads_find_keep_and_empty_them(empty_constants):
    """Threads finding and keeping constants while others empty the cache and collect
    garbage: every call computes with its own value, and nothing raises (an OrderedDict
    here raised KeyError for a key being added when a finaliser or another thread
    changed it in the middle of the assignment)."""
    import threading

    x = aclnn_py.to_device(np.full(2, 3.0, np.float32))
    y = aclnn_py.to_device(np.zeros(2, np.float32))
    errors: list[BaseException] = []
    stop = threading.Event()

    def calls(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            while not stop.is_set():
                value = float(rng.integers(0, 300))
                got = aclnn_py.mse_loss_backward(value, x, y, "none").numpy()
                assert got.tolist() == [6.0 * value] * 2, (value, got)
        except BaseException as error:  # reported below
            errors.append(error)
            stop.set()

    def churn() -> None:
        while not stop.is_set():
            aclnn_py.empty_cache()
            gc.collect(0)

    threads = [threading.Thread(target=calls, args=(seed,)) for seed in range(3)]
    threads.append(threading.Thread(target=churn))
    for thread in threads:
        thread.start()
    stop.wait(1.5)
    stop.set()
    for thread in threads:
        thread.join(10)
    assert not errors, errors[0]
    assert _constants.count() <= _constants.CAPACITY


def test_empty_cache_releases_the_constants(empty_constants):
    x = aclnn_py.to_device(np.ones(4, np.float32))
    aclnn_py.synchronize()
    aclnn_py.empty_cache()
    used = aclnn_py.memory_info()["used_bytes"]
    for value in (1.0, 2.0, np.float32(3.0)):
        aclnn_py.mse_loss_backward(value, x, x, "none")
    aclnn_py.add(x, 5)
    assert _constants.count() == 4
    aclnn_py.synchronize()
    gc.collect()
    assert aclnn_py.memory_info()["used_bytes"] > used
    aclnn_py.empty_cache()
    assert _constants.count() == 0
    assert aclnn_py.memory_info()["used_bytes"] == used


def test_emptying_the_cache_again_and_again_adds_no_finalisers(empty_constants):
    import weakref

    x = aclnn_py.to_device(np.ones(2, np.float32))
    aclnn_py.mse_loss_backward(1.0, x, x).numpy()
    aclnn_py.empty_cache()
    finalisers = len(weakref.finalize._registry)
    for value in range(5):
        aclnn_py.mse_loss_backward(float(value), x, x).numpy()
        assert _constants.count() == 1
        aclnn_py.empty_cache()
        assert _constants.count() == 0
    assert len(weakref.finalize._registry) <= finalisers


def test_each_stream_keeps_its_own_constants_until_it_ends(empty_constants):
    x = aclnn_py.to_device(np.full(3, 3.0, np.float32))
    y = aclnn_py.to_device(np.ones(3, np.float32))
    first, second = aclnn_py.Stream(), aclnn_py.Stream()
    results = {}
    for name, stream in (("first", first), ("second", second)):
        with stream:
            results[name] = aclnn_py.mse_loss_backward(0.5, x, y, "none")
        results[name + " given"] = aclnn_py.mse_loss_backward(0.5, x, y, "none", stream=stream)
    assert _constants.count() == 2
    for result in results.values():
        assert result.numpy().tolist() == [2.0] * 3
    first.close()
    assert _constants.count() == 1
    x.synchronize()  # the inputs no longer name the stream either
    y.synchronize()
    del second, stream, results
    gc.collect()
    assert _constants.count() == 0


@pytest.mark.slow
def test_teardown_releases_the_constants():
    done = run_python("""
        import numpy as np, aclnn_py
        from aclnn_py.engine import constants
        from aclnn_py.runtime import process
        x = aclnn_py.to_device(np.ones(3, np.float32))
        aclnn_py.mse_loss_backward(2.0, x, x).numpy()
        kept = constants.count()
        del x
        process.teardown()
        print(kept, constants.count(), aclnn_py.emulator.stats()["live_allocations"])
        x, y = np.full(3, 2.0, np.float32), np.ones(3, np.float32)
        print(aclnn_py.mse_loss_backward(2.0, x, y, "none").tolist(),
              aclnn_py.mse_loss_backward(2.0, aclnn_py.to_device(x), aclnn_py.to_device(y),
                                         "none").numpy().tolist())
    """, {"ACLNN_PY_BACKEND": "emulator"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["1", "0", "0"]
    assert lines[1] == "[4.0, 4.0, 4.0] [4.0, 4.0, 4.0]"
