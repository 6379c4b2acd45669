"""Compute one MSE-loss gradient with aclnn_py and check it against numpy.

Runs on an Ascend NPU through CANN when CANN is installed, else on aclnn_py's
host emulator of CANN's C API. Prints which backend ran.
"""

import numpy as np

import aclnn_py


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = rng.standard_normal((2, 3)).astype(np.float32)
    grad = np.ones((2, 3), np.float32)

    result = aclnn_py.mse_loss_backward(grad, x, y, reduction="mean")
    expected = grad * (x - y) * 2 / x.size

    info = aclnn_py.runtime_info()
    print(f"backend: {info['backend']} (SoC {info['soc_name']}, CANN {info['cann_version']}, "
          f"root {info['root']})")
    print("mse_loss_backward(grad, x, y, reduction='mean') =")
    print(result)
    print(f"max |result - numpy| = {np.max(np.abs(result - expected)):.3g}")


if __name__ == "__main__":
    main()
