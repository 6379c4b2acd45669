"""Train a linear regression in numpy with the loss and its gradient from aclnn_py.

The loss is ``aclnn_py.mse_loss`` (aclnnMseLoss) and the gradient of the loss
with respect to the predictions is ``aclnn_py.mse_loss_backward``
(aclnnMseLossBackward); the chain rule through ``prediction = X @ w + b`` is
done in numpy. Runs on an Ascend NPU through CANN when CANN is installed, else
on aclnn_py's host emulator. Prints the backend and the loss every few steps,
and exits non-zero if the loss did not fall.
"""

import sys

import numpy as np

import aclnn_py

STEPS = 50
LEARNING_RATE = 0.1


def main() -> int:
    rng = np.random.default_rng(0)
    features = rng.standard_normal((256, 4)).astype(np.float32)
    true_weights = np.array([[1.5], [-2.0], [0.5], [3.0]], np.float32)
    targets = (features @ true_weights + 0.7
               + 0.01 * rng.standard_normal((256, 1))).astype(np.float32)

    weights = np.zeros((4, 1), np.float32)
    bias = np.zeros((1,), np.float32)
    one = np.float32(1.0)  # d(loss)/d(loss): the 0-d gradient of a "mean" loss

    info = aclnn_py.runtime_info()
    print(f"backend: {info['backend']} (SoC {info['soc_name']})")

    losses = []
    for step in range(STEPS):
        prediction = features @ weights + bias
        loss = float(aclnn_py.mse_loss(prediction, targets, "mean"))
        d_prediction = aclnn_py.mse_loss_backward(one, prediction, targets, "mean")
        weights -= LEARNING_RATE * (features.T @ d_prediction)
        bias -= LEARNING_RATE * d_prediction.sum(axis=0)
        losses.append(loss)
        if step % 5 == 0 or step == STEPS - 1:
            print(f"step {step:3d} loss {loss:.6g}")

    print(f"weights {[round(float(w), 3) for w in weights.ravel()]} bias {float(bias[0]):.3f}")
    if not losses[-1] < 0.01 * losses[0]:
        print(f"the loss did not fall: {losses[0]:.6g} -> {losses[-1]:.6g}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
