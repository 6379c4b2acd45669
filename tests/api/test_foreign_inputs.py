"""Inputs that are not numpy arrays: CPU PyTorch tensors and DLPack exporters."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import mse_backward

import aclnn_py


class Exporter:
    """A foreign array type that only speaks DLPack (CPU memory)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_exporters_are_read_without_converting():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones(3, np.float32)
    result = aclnn_py.mse_loss_backward(1.0, Exporter(x), Exporter(y))
    assert type(result) is np.ndarray
    np.testing.assert_allclose(result, mse_backward(1.0, x, y), rtol=1e-6)
    device = aclnn_py.to_device(Exporter(x))
    np.testing.assert_array_equal(device.numpy(), x)
    device.free()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_cpu_torch_tensors_are_accepted_as_they_are(dtype):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
    x = torch.arange(6, dtype=getattr(torch, dtype)).reshape(2, 3).requires_grad_()
    y = torch.ones(3, dtype=getattr(torch, dtype))
    result = aclnn_py.mse_loss_backward(1.0, x, y)
    assert type(result) is np.ndarray
    expected_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    assert result.dtype == expected_dtype
    host_x = x.detach().float().numpy()
    np.testing.assert_allclose(result.astype(np.float64), mse_backward(1.0, host_x, 1.0),
                               rtol=1e-2 if dtype != "float32" else 1e-6)
    transposed = torch.arange(6, dtype=torch.float32).reshape(3, 2).t()  # a strided view
    np.testing.assert_array_equal(aclnn_py.to_device(transposed).numpy(),
                                  transposed.numpy())


def test_a_torch_tensor_off_the_cpu_is_refused_with_the_fix():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
    meta = torch.ones(3, device="meta")
    with pytest.raises(TypeError, match=r"cannot be read from the host; move it with \.cpu\(\)"):
        aclnn_py.mse_loss_backward(1.0, meta, meta)
