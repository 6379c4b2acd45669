"""Bad arguments: one test per class, checking the exception type, that the message names
the argument and the rule, and that no device work happened before the error."""

from __future__ import annotations

import json
import re
from contextlib import contextmanager

import ml_dtypes
import numpy as np
import pytest
from conftest import no_device_work, run_python

import aclnn_py

BF16 = ml_dtypes.bfloat16
SUPPORTED = "supported dtypes are float32, float16, bfloat16"


def fix(name: str, dtype: str) -> str:
    """The end of the dtype error: what to do (float64's says why numpy made it)."""
    if name == "out":
        return r"; give an out= array of one of them \(results are written in place\)"
    if dtype != "float64":
        return rf"; convert it with {name}\.astype\(numpy\.float32\)"
    return (rf"; convert it with {name}\.astype\(numpy\.float32\) \(float64 is numpy's "
            rf"default float dtype\)")
GOOD = np.ones((2, 3), np.float32)


@pytest.fixture(scope="module", autouse=True)
def _initialised():
    """The runtime is up (so counters exist) before the first check."""
    aclnn_py.mse_loss_backward(GOOD, GOOD, GOOD)


def raises(exception, pattern):
    """pytest.raises wrapped in the no-device-work check."""

    @contextmanager
    def both():
        with no_device_work(), pytest.raises(exception, match=pattern) as info:
            yield info
    return both()


def backward_args(name, value):
    args = {"grad": GOOD, "x": GOOD, "y": GOOD}
    args[name] = value
    return args["grad"], args["x"], args["y"]


# --- unsupported dtypes -------------------------------------------------------------------

BAD_DTYPES = [np.float64, np.int32, np.int64, np.int8, np.uint8, np.bool_, np.complex64,
              np.complex128]


@pytest.mark.parametrize("bad", BAD_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["grad", "x", "y"])
def test_backward_unsupported_dtype_is_a_type_error_listing_supported(name, bad):
    value = np.ones((2, 3), bad)
    bad = np.dtype(bad).name
    with raises(TypeError, rf"^{name} has dtype {bad}; {SUPPORTED}{fix(name, bad)}$"):
        aclnn_py.mse_loss_backward(*backward_args(name, value))


@pytest.mark.parametrize("bad", BAD_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["x", "y"])
def test_loss_unsupported_dtype_is_a_type_error_listing_supported(name, bad):
    args = {"x": GOOD, "y": GOOD, name: np.ones((2, 3), bad)}
    bad = np.dtype(bad).name
    with raises(TypeError, rf"^{name} has dtype {bad}; {SUPPORTED}{fix(name, bad)}$"):
        aclnn_py.mse_loss(args["x"], args["y"])


@pytest.mark.parametrize(("value", "error", "message"), [
    (None, TypeError, r"^grad is a required tensor; got None$"),
    ("1.0", TypeError, r"^grad must be an array or numbers; got str$"),
    (True, TypeError, r"^grad holds Python bools, which a call of dtype float32 does not take "
                      r"as numbers; pass numbers or an array$"),
    ([[1, 2], [3]], ValueError, r"^grad: numpy cannot make an array of it"),
    (np.array(["a"]), TypeError, r"^grad must be an array or numbers; got ndarray of dtype <U1$"),
], ids=["none", "str", "bool", "ragged", "str-array"])
def test_values_that_are_not_arrays_or_numbers_name_the_argument(value, error, message):
    with raises(error, message):
        aclnn_py.mse_loss_backward(value, GOOD, GOOD)


def test_python_values_take_the_calls_dtype_else_their_own():
    """A list takes the dtype of the call's array; Python values alone are bool, int64 or
    float32 together, and a refused one is told to use numpy.asarray (a list has no astype)."""
    result = aclnn_py.mse_loss_backward([[1.0, 2.0, 3.0]], GOOD, GOOD, "none")
    assert result.dtype == np.float32 and result.shape == (2, 3)
    result = aclnn_py.mse_loss([0.5, 1.5], [1, 2], "none")
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, [0.25, 0.25])
    with raises(TypeError, r"^x has dtype int64; supported dtypes are float32, float16, "
                           r"bfloat16; pass numpy\.asarray\(x, dtype=numpy\.float32\)"):
        aclnn_py.mse_loss([1, 2], [1, 2])


# --- mismatched dtypes --------------------------------------------------------------------

@pytest.mark.parametrize(("grad", "x", "y"), [
    (np.float16, np.float32, np.float32),
    (np.float32, BF16, BF16),
    (np.float32, np.float32, np.float16),
    (BF16, np.float16, np.float32),
], ids=["grad", "x", "y", "all"])
def test_backward_mismatched_dtypes_name_arguments_and_dtypes(grad, x, y):
    names = [np.dtype(d).name for d in (grad, x, y)]
    pattern = (rf"^grad, x, y must share one dtype \(CANN does not promote for this operator\); "
               rf"got grad {names[0]}, x {names[1]}, y {names[2]}$")
    with raises(TypeError, pattern):
        aclnn_py.mse_loss_backward(np.ones(3, grad), np.ones(3, x), np.ones(3, y))


# --- bfloat16 on an SoC without it --------------------------------------------------------

@pytest.mark.slow
def test_bfloat16_on_310p_is_a_type_error_naming_the_soc_and_products():
    done = run_python("""
        import json
        import ml_dtypes
        import numpy as np
        import aclnn_py

        bf, f16 = np.ones(3, ml_dtypes.bfloat16), np.ones(3, np.float16)
        aclnn_py.mse_loss_backward(f16, f16, f16)  # float16 works on this SoC
        report = {}
        for label, call in [
            ("backward", lambda: aclnn_py.mse_loss_backward(bf, bf, bf)),
            ("loss", lambda: aclnn_py.mse_loss(bf, bf)),
            ("promoted", lambda: aclnn_py.mse_loss(f16, bf)),
            ("out", lambda: aclnn_py.mse_loss_backward(f16, f16, f16, "none",
                                                       out=np.empty(3, ml_dtypes.bfloat16))),
        ]:
            aclnn_py.empty_cache()
            aclnn_py.emulator.reset_counters()
            try:
                call()
            except Exception as error:
                stats = aclnn_py.emulator.stats()
                report[label] = [type(error).__name__, str(error), stats["malloc_calls"],
                                 stats["h2d_bytes"]]
            else:
                report[label] = ["no error"]
        print(json.dumps(report))
    """, {"ACLNN_EMU_SOC": "Ascend310P3", "ACLNN_PY_BACKEND": "emulator"})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    expected_argument = {"backward": "grad", "loss": "x", "promoted": "y", "out": "out"}
    for label, argument in expected_argument.items():
        kind, message, mallocs, uploaded = report[label]
        assert kind == "TypeError", report[label]
        assert message.startswith(f"{argument} is bfloat16"), message
        assert "Ascend310P3" in message
        assert "Atlas A2" in message and "Atlas A3" in message and "Ascend 950" in message
        assert (mallocs, uploaded) == (0, 0)


# --- ranks and shapes ---------------------------------------------------------------------

NINE_D = (1, 2, 1, 2, 1, 2, 1, 2, 1)


@pytest.mark.parametrize("name", ["grad", "x", "y"])
def test_backward_more_than_8_dims_is_a_value_error_naming_the_shape(name):
    value = np.ones(NINE_D, np.float32)
    pattern = rf"^{name} has 9 dimensions \(shape \(1, 2, 1, 2, 1, 2, 1, 2, 1\)\); at most 8"
    with raises(ValueError, pattern):
        aclnn_py.mse_loss_backward(*backward_args(name, value))


def test_loss_more_than_8_dims_is_a_value_error():
    with raises(ValueError, r"^y has 9 dimensions .*at most 8"):
        aclnn_py.mse_loss(GOOD, np.ones(NINE_D, np.float32))


@pytest.mark.parametrize(("grad", "x", "y"), [
    ((3,), (4,), (3,)),
    ((123, 11, 2), (123, 11, 2), (123, 8, 2)),
    ((2, 3), (3, 2), (1,)),
])
def test_backward_shapes_that_do_not_broadcast_name_every_shape(grad, x, y):
    pattern = (rf"^shapes do not broadcast together: grad {_re(grad)}, x {_re(x)}, "
               rf"y {_re(y)}$")
    with raises(ValueError, pattern):
        aclnn_py.mse_loss_backward(np.ones(grad, np.float32), np.ones(x, np.float32),
                                   np.ones(y, np.float32))


def test_loss_shapes_that_do_not_broadcast_name_every_shape():
    with raises(ValueError, r"^shapes do not broadcast together: x \(2, 3\), y \(2,\)$"):
        aclnn_py.mse_loss(GOOD, np.ones(2, np.float32))


def _re(shape):
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


# --- reductions ---------------------------------------------------------------------------

BAD_REDUCTIONS = ["avg", "", "elementwise_mean", 3, -1, 1.0, None, True, [1]]


@pytest.mark.parametrize("reduction", BAD_REDUCTIONS, ids=repr)
def test_bad_reduction_is_a_value_error_listing_accepted_values(reduction):
    pattern = (r"^reduction must be 'none', 'mean', 'sum', 0, 1, 2 or aclnn_py\.Reduction, "
               rf"got {_escape(repr(reduction))}$")
    with raises(ValueError, pattern):
        aclnn_py.mse_loss_backward(GOOD, GOOD, GOOD, reduction)
    with raises(ValueError, pattern):
        aclnn_py.mse_loss(GOOD, GOOD, reduction)


def _escape(text):
    return re.escape(text)


# --- out ----------------------------------------------------------------------------------

@pytest.mark.parametrize("out", [[0.0] * 6, (0.0,), 0.0, memoryview(bytearray(24))],
                         ids=["list", "tuple", "float", "memoryview"])
def test_out_not_an_ndarray_is_a_type_error(out):
    pattern = rf"^out must be a numpy\.ndarray, got {type(out).__name__}$"
    with raises(TypeError, pattern):
        aclnn_py.mse_loss_backward(GOOD, GOOD, GOOD, out=out)
    with raises(TypeError, pattern):
        aclnn_py.mse_loss(GOOD, GOOD, "none", out=out)


@pytest.mark.parametrize("bad", [np.float64, np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_out_of_unsupported_dtype_is_a_type_error(bad):
    pattern = rf"^out has dtype {np.dtype(bad).name}; {SUPPORTED}{fix('out', np.dtype(bad).name)}$"
    with raises(TypeError, pattern):
        aclnn_py.mse_loss_backward(GOOD, GOOD, GOOD, out=np.empty((2, 3), bad))
    with raises(TypeError, pattern):
        aclnn_py.mse_loss(GOOD, GOOD, out=np.empty((), bad))


@pytest.mark.parametrize(("reduction", "shape", "required"), [
    ("none", (3, 2), (2, 3)),
    ("none", (2, 3, 1), (2, 3)),
    ("mean", (2, 3), ()),     # a mean or sum loss is 0-d
    ("sum", (1,), ()),
])
def test_loss_out_of_the_wrong_shape_is_a_value_error(reduction, shape, required):
    pattern = rf"^out has shape {_re(shape)}; the result has shape {_re(required)}$"
    with raises(ValueError, pattern):
        aclnn_py.mse_loss(GOOD, GOOD, reduction, out=np.empty(shape, np.float32))


@pytest.mark.parametrize("shape", [(3, 2), (6,), (1, 2, 3), (123, 8, 2)])
def test_backward_out_of_the_wrong_shape_is_a_value_error(shape):
    pattern = rf"^out has shape {_re(shape)}; the result has shape \(2, 3\)$"
    with raises(ValueError, pattern):
        aclnn_py.mse_loss_backward(GOOD, GOOD, GOOD, out=np.empty(shape, np.float32))


def test_read_only_out_is_a_value_error():
    out = np.empty((2, 3), np.float32)
    out.flags.writeable = False
    with raises(ValueError, r"^out is read-only$"):
        aclnn_py.mse_loss_backward(GOOD, GOOD, GOOD, out=out)
    with raises(ValueError, r"^out is read-only$"):
        aclnn_py.mse_loss(GOOD, GOOD, "none", out=out)


@pytest.mark.parametrize("layout", ["fortran", "sliced", "negative", "broadcast"])
def test_non_c_contiguous_out_is_a_value_error(layout):
    base = np.empty((3, 2), np.float32)
    out = {
        "fortran": np.empty((2, 3), np.float32, order="F"),
        "sliced": np.empty((2, 6), np.float32)[:, ::2],
        "negative": base.T[::-1],
        "broadcast": np.broadcast_to(np.empty(3, np.float32), (2, 3)),
    }[layout]
    assert out.shape == (2, 3)
    # a broadcast view is read-only, and says so first
    pattern = "^out is read-only$" if layout == "broadcast" else "^out must be C-contiguous"
    with raises(ValueError, pattern):
        aclnn_py.mse_loss_backward(GOOD, GOOD, GOOD, out=out)


def test_rejected_out_is_left_untouched():
    out = np.full((2, 3), 5.0, np.float64)
    with raises(TypeError, "^out has dtype float64"):
        aclnn_py.mse_loss_backward(GOOD, GOOD, GOOD, out=out)
    assert (out == 5.0).all()
