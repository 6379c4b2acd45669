"""A real client: PyTorch training whose MSE loss and its gradient run through aclnn_py.

``AclnnMseLoss`` is a ``torch.autograd.Function``: its forward calls
``aclnn_py.mse_loss`` and its backward ``aclnn_py.mse_loss_backward``, both on
numpy views of the tensors. A small model trained with it must follow, step for
step, an identical model trained with ``torch.nn.functional.mse_loss``.
"""

from __future__ import annotations

import pytest
from tolerances import FLOAT32, assert_close

import aclnn_py

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")

STEPS = 20
LEARNING_RATES = {"mean": 0.05, "sum": 0.002, "none": 0.05}


class AclnnMseLoss(torch.autograd.Function):
    calls = {"forward": 0, "backward": 0}

    @staticmethod
    def forward(ctx, prediction, target, reduction):
        ctx.save_for_backward(prediction, target)
        ctx.reduction = reduction
        AclnnMseLoss.calls["forward"] += 1
        loss = aclnn_py.mse_loss(prediction.detach().numpy(), target.detach().numpy(), reduction)
        return torch.from_numpy(loss)

    @staticmethod
    def backward(ctx, grad_output):
        prediction, target = ctx.saved_tensors
        AclnnMseLoss.calls["backward"] += 1
        # for "none" grad_output may be an expanded (zero-stride) tensor: numpy sees it as is
        grad = aclnn_py.mse_loss_backward(grad_output.detach().numpy(),
                                          prediction.detach().numpy(),
                                          target.detach().numpy(), ctx.reduction)
        return torch.from_numpy(grad), None, None


def aclnn_mse_loss(prediction, target, reduction="mean"):
    return AclnnMseLoss.apply(prediction, target, reduction)


def objective(loss_function, model, inputs, targets, reduction):
    loss = loss_function(model(inputs), targets, reduction)
    return loss.mean() if reduction == "none" else loss


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_training_follows_torch_step_for_step(reduction):
    torch.manual_seed(0)
    inputs = torch.randn(64, 8)
    targets = inputs @ torch.randn(8, 1) + 0.5 + 0.01 * torch.randn(64, 1)
    reference = torch.nn.Linear(8, 1)
    model = torch.nn.Linear(8, 1)
    model.load_state_dict(reference.state_dict())
    lr = LEARNING_RATES[reduction]
    optimisers = [torch.optim.SGD(m.parameters(), lr=lr) for m in (reference, model)]
    AclnnMseLoss.calls.update(forward=0, backward=0)

    losses = []
    for _step in range(STEPS):
        for optimiser in optimisers:
            optimiser.zero_grad()
        expected = objective(lambda p, t, r: torch.nn.functional.mse_loss(p, t, reduction=r),
                             reference, inputs, targets, reduction)
        actual = objective(aclnn_mse_loss, model, inputs, targets, reduction)
        assert_close(actual.detach().numpy(), expected.detach().numpy(), FLOAT32)
        expected.backward()
        actual.backward()
        for mine, theirs in zip(model.parameters(), reference.parameters()):
            assert_close(mine.grad.numpy(), theirs.grad.numpy(), FLOAT32)
        for optimiser in optimisers:
            optimiser.step()
        for mine, theirs in zip(model.parameters(), reference.parameters()):
            assert_close(mine.detach().numpy(), theirs.detach().numpy(), FLOAT32)
        losses.append(float(actual.detach()))

    assert AclnnMseLoss.calls == {"forward": STEPS, "backward": STEPS}
    assert losses[-1] < 0.5 * losses[0], losses  # it really trained


def test_gradient_reaches_inputs_of_any_shape_and_layout():
    prediction = torch.randn(3, 4, requires_grad=True)
    target = torch.randn(4, 3).t()  # a transposed (non-contiguous) target
    for reduction in ("mean", "sum", "none"):
        prediction.grad = None
        objective(aclnn_mse_loss, lambda p: p, prediction, target, reduction).backward()
        mine = prediction.grad.clone()
        prediction.grad = None
        objective(lambda p, t, r: torch.nn.functional.mse_loss(p, t, reduction=r),
                  lambda p: p, prediction, target, reduction).backward()
        assert_close(mine.numpy(), prediction.grad.numpy(), FLOAT32)
