"""Roles the role table takes from CANN's sample programs (``examples/``, the
``experimental/`` ones included) and from what the op_api sources dump of phase 1, where the
docs' tables say otherwise, as ``aclnn_py.call`` and ``signature()`` use them."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py.emulator import _kernels
from aclnn_py.ops import roles as _roles

GATHER_STATS = "aclnnSyncBatchNormGatherStats"


@pytest.fixture
def user_kernels():
    """Kernels the test registers are removed again afterwards."""
    before = dict(_kernels.table())
    yield
    for name in set(_kernels.KERNELS) - set(before):
        del _kernels.KERNELS[name]
        ll.register_kernel(name, False)
    _kernels.KERNELS.update(before)


@pytest.mark.emulator_only  # the emulator's trees declare it with the table's prototype
def test_the_table_row_updates_the_running_statistics_in_place():
    # ops-nn experimental/norm/sync_batch_norm_gather_stats/examples/
    # test_aclnn_sync_batch_norm_gather_stats_inplace.cpp reads mean and variance back after
    # the call; the doc's formulas update runningMean and runningVar (its mean and variance)
    # from their own values.
    entry = _roles.table()["operators"][GATHER_STATS]
    assert (entry["outputs"], entry["inout"]) == (["batchMean", "batchInvstd"],
                                                  ["mean", "variance"])
    assert entry["basis"] == "example"
    assert "test_aclnn_sync_batch_norm_gather_stats_inplace.cpp" in entry["note"]
    roles = {p.name: p.role for p in aclnn_py.signature(GATHER_STATS).parameters}
    assert roles == {"totalSum": "input", "totalSquareSum": "input", "sampleCount": "input",
                     "mean": "inout", "variance": "inout", "momentum": "attribute",
                     "eps": "attribute", "batchMean": "output", "batchInvstd": "output"}


@pytest.mark.emulator_only
def test_call_returns_the_updated_running_statistics(user_kernels):
    @aclnn_py.emulator.kernel(GATHER_STATS, dtypes=["float32", "int32"])
    def gather_stats(totalSum, totalSquareSum, sampleCount, mean, variance, momentum, eps,
                     batchMean, batchInvstd):
        # The formulas of ops-nn norm/sync_batch_norm_gather_stats/docs/
        # aclnnSyncBatchNormGatherStats.md.
        count = float(sampleCount.sum())
        batch_mean = totalSum.sum(axis=0) / count
        batch_var = totalSquareSum.sum(axis=0) / count - batch_mean ** 2
        batchMean[...] = batch_mean
        batchInvstd[...] = 1 / np.sqrt(batch_var + eps)
        mean[...] = mean * (1 - momentum) + momentum * batch_mean
        variance[...] = variance * (1 - momentum) + momentum * batch_var * count / (count - 1)

    total_sum = np.array([[2.0, 4.0], [6.0, 8.0]], np.float32)      # 2 devices, 2 channels
    total_square = np.array([[5.0, 12.0], [13.0, 28.0]], np.float32)
    counts = np.array([2, 2], np.int32)
    mean = np.array([1.0, 1.0], np.float32)
    variance = np.array([2.0, 2.0], np.float32)
    outputs = (np.empty(2, np.float32), np.empty(2, np.float32))
    result = aclnn_py.call(GATHER_STATS, total_sum, total_square, counts, mean, variance,
                           0.5, 1e-5, out=outputs)
    assert len(result) == 4 and result[0] is mean and result[1] is variance
    batch_mean = np.array([2.0, 3.0])
    batch_var = np.array([4.5, 10.0]) - batch_mean ** 2  # 0.5, 1.0
    np.testing.assert_allclose(result[2], batch_mean, rtol=1e-6)
    np.testing.assert_allclose(result[3], 1 / np.sqrt(batch_var + 1e-5), rtol=1e-5)
    np.testing.assert_allclose(mean, 0.5 + 0.5 * batch_mean, rtol=1e-6)
    np.testing.assert_allclose(variance, 1.0 + 0.5 * batch_var * 4 / 3, rtol=1e-6)


@pytest.mark.parametrize("operator, written, source", [
    # L2_DFX_PHASE_1 dumps the Refs as outputs (the doc's prose: sfdaRef and stepRef are
    # updated), though the doc's table calls them inputs.
    ("aclnnSilentCheck", {"inputGradRef": "inout", "sfdaRef": "inout", "stepRef": "inout",
                          "result": "output"},
     "math/silent_check/op_host/op_api/aclnn_silent_check.cpp"),
    ("aclnnSilentCheckV2", {"avgRef": "inout", "inputGradRef": "inout", "stepRef": "inout",
                            "result": "output"},
     "math/silent_check_v2/op_host/op_api/aclnn_silent_check_v2.cpp"),
    # The doc's table calls these written; phase 1 dumps them as inputs only, and the docs'
    # constraints call attentionOut an input (the forward's output).
    ("aclnnConfusionTranspose", {"out": "output"},
     "conversion/confusion_transpose_d/op_api/aclnn_confusion_transpose.cpp"),
    ("aclnnNsaSelectedAttentionGrad", {"dqOut": "output", "dkOut": "output", "dvOut": "output"},
     "attention/nsa_selected_attention_grad/op_host/op_api/"
     "aclnn_nsa_selected_attention_grad.cpp"),
    ("aclnnFusedCrossEntropyLossWithMaxSum", {"lossOut": "output", "softMaxOutOptional": "output"},
     "loss/fused_cross_entropy_loss_with_max_sum/op_api/"
     "aclnn_fused_cross_entropy_loss_with_max_sum.cpp"),
])
@pytest.mark.emulator_only
def test_rows_the_op_api_source_corrects(operator, written, source):
    entry = _roles.table()["operators"][operator]
    assert entry["basis"] == "source" and source in entry["note"]
    signature = aclnn_py.signature(operator)
    found = {p.name: p.role for p in signature.parameters if p.role in ("output", "inout")}
    assert found == written
    assert all(p.source == "table" for p in signature.parameters if p.is_tensor)
