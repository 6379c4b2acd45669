"""None for the parameters an operator's doc lets be NULL, not only for ``...Optional`` ones.

The names come from the phase-1 table (``aclnn_py/data/phase1_rules.json``, its
``nullable`` lists, read from CANN's docs: 可传入nullptr, 可选 ...)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py.ops import catalog

pytestmark = pytest.mark.emulator_only


def test_the_signature_marks_what_the_doc_lets_be_null_and_nothing_else() -> None:
    # ops-nn conv/convolution_forward/docs/aclnnConvolution.md: bias 可传入nullptr
    optional = {p.name: p.optional for p in catalog.signature("aclnnConvolution").parameters}
    assert optional["bias"] and not optional["input"] and not optional["weight"]
    assert not optional["output"]  # an output stays required: call would leave it out


def test_batch_norm_without_weight_bias_or_running_statistics() -> None:
    # ops-nn norm/batch_norm_v3/docs/aclnnBatchNorm.md: weight, bias, runningMean and
    # runningVar may be NULL (weight then ones, bias zeros; in training, nothing is updated)
    x = np.random.default_rng(0).uniform(-2, 2, (2, 3, 4, 4)).astype(np.float32)
    outs = (np.empty_like(x), np.empty(3, np.float32), np.empty(3, np.float32))
    y, mean, invstd = aclnn_py.call("aclnnBatchNorm", x, None, None, None, None, True, 0.1,
                                    1e-5, out=outs)
    m, v = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    np.testing.assert_allclose(mean, m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(invstd, 1 / np.sqrt(v + 1e-5), rtol=1e-4)
    np.testing.assert_allclose(y, (x - m[:, None, None]) / np.sqrt(v[:, None, None] + 1e-5),
                               rtol=1e-4, atol=1e-5)


def test_clamp_with_one_bound() -> None:
    # ops-math conversion/clip_by_value_v2/docs/aclnnClamp.md: clipValueMin or clipValueMax
    # may be NULL
    x = np.array([-2.0, 0.0, 5.0], np.float32)
    np.testing.assert_array_equal(aclnn_py.call("aclnnClamp", x, None, 1.0), [-2.0, 0.0, 1.0])
    np.testing.assert_array_equal(aclnn_py.call("aclnnClamp", x, -1.0, None), [-1.0, 0.0, 5.0])


@pytest.mark.parametrize("on_device", [False, True], ids=["numpy", "device"])
def test_a_trailing_bound_left_out_works_on_every_repeat(on_device: bool) -> None:
    # clipValueMax left out by position: the repeat, which skips binding, must take it as
    # left out too (it once read the argument past the end)
    x = np.array([-2.0, -0.5, 0.5, 2.0], np.float32)
    given = aclnn_py.to_device(x) if on_device else x
    for _ in range(3):
        result = aclnn_py.call("aclnnClamp", given, 0.0)
        got = result.numpy() if isinstance(result, aclnn_py.DeviceArray) else result
        np.testing.assert_array_equal(got, np.maximum(x, 0.0))


def test_none_for_a_required_tensor_is_still_a_type_error_before_any_device_work() -> None:
    with pytest.raises(TypeError, match="weight is a required tensor"):
        aclnn_py.call("aclnnConvolution", np.ones((1, 2, 5, 5), np.float32), None, None,
                      [1, 1], [0, 0], [1, 1], False, [0, 0], 1, 0,
                      out=np.empty((1, 4, 3, 3), np.float32))
