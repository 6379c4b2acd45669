"""The checks of test_real_torch_npu.py, run by it in a process of their own with torch_npu
importable and the environment of the emulator's 8.5 ``set_env.sh`` and nothing else.

``python torch_npu_checks.py aclnn_first|torch_first`` prints one JSON object: each check's
name -> "ok", or "not computed: <message>" when an operator it needs is one the emulator
does not compute (561003), or "failed: <message>".
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

if sys.argv[1] == "aclnn_first":
    import torch
    import torch_npu  # noqa: F401 (registers the npu device)

    import aclnn_py
else:
    import torch
    import torch_npu  # noqa: F401 (registers the npu device)

    import aclnn_py
import torch.nn as nn
import torch.nn.functional as F

results: dict[str, str] = {}
CLOSE = 1e-3  # how near the NPU's losses are to the CPU's after training


def check(function: Callable[[], None]) -> None:
    """Run one check and keep its result."""
    try:
        function()
        results[function.__name__] = "ok"
    except Exception as error:  # each check's failure is reported, the next ones still run
        text = f"{type(error).__name__}: {error}"
        kind = "not computed" if "561003" in text else "failed"
        results[function.__name__] = f"{kind}: {text[:600]}"


def both(make: Callable[[], nn.Module]) -> tuple[nn.Module, nn.Module]:
    """The same module twice, one on the CPU and a copy on the NPU."""
    torch.manual_seed(0)
    cpu = make()
    npu = make()
    npu.load_state_dict(cpu.state_dict())
    return cpu, npu.npu()


def train(cpu: nn.Module, npu: nn.Module, optimizer: Callable[..., torch.optim.Optimizer],
          loss: Callable[..., torch.Tensor], x: torch.Tensor, y: torch.Tensor,
          steps: int) -> tuple[float, float]:
    """``steps`` steps of the same training on both: the last losses."""
    on_cpu, on_npu = optimizer(cpu.parameters()), optimizer(npu.parameters())
    last = (0.0, 0.0)
    for _ in range(steps):
        on_cpu.zero_grad()
        lc = loss(cpu(x), y)
        lc.backward()
        on_cpu.step()
        on_npu.zero_grad()
        ln = loss(npu(x.npu()), y.npu())
        ln.backward()
        on_npu.step()
        last = (lc.item(), ln.item())
    return last


@check
def device() -> None:
    assert torch.npu.is_available()
    assert torch.npu.device_count() == 1, torch.npu.device_count()
    assert torch.npu.get_device_name(0).startswith("Ascend910B"), torch.npu.get_device_name(0)


@check
def factories() -> None:
    assert torch.ones(2, 3, device="npu").cpu().tolist() == [[1.0] * 3] * 2
    assert torch.zeros(4, device="npu").cpu().tolist() == [0.0] * 4
    assert torch.arange(5, device="npu").cpu().tolist() == [0, 1, 2, 3, 4]


@check
def mse_loss_and_backward() -> None:
    torch.manual_seed(1)
    a, b = torch.randn(4, 5), torch.randn(4, 5)
    on_npu = a.clone().npu().requires_grad_()
    on_cpu = a.clone().requires_grad_()
    ln, lc = F.mse_loss(on_npu, b.npu()), F.mse_loss(on_cpu, b)
    ln.backward()
    lc.backward()
    assert abs(ln.item() - lc.item()) < 1e-6, (ln.item(), lc.item())
    assert torch.allclose(on_npu.grad.cpu(), on_cpu.grad, atol=1e-6)


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))


def mlp_trains_alike(optimizer: Callable[..., torch.optim.Optimizer]) -> None:
    """Five steps of the MLP with ``optimizer`` end at the same loss on the CPU and the NPU."""
    cpu, npu = both(mlp)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    lc, ln = train(cpu, npu, optimizer, F.mse_loss, x, y, 5)
    assert abs(lc - ln) < CLOSE, (lc, ln)


@check
def mlp_sgd() -> None:
    mlp_trains_alike(lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, foreach=False))


@check
def mlp_adam() -> None:
    # foreach=False: one tensor at a time (lerp_, addcmul_, ...)
    mlp_trains_alike(lambda p: torch.optim.Adam(p, lr=1e-2, foreach=False))


@check
def mlp_adam_multi_tensor() -> None:
    # Adam's default on an NPU: the multi-tensor path, through the aclnnForeach* operators
    mlp_trains_alike(lambda p: torch.optim.Adam(p, lr=1e-2))


def cnn() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 3))


@check
def cnn_forward() -> None:
    cpu, npu = both(lambda: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4),
                                          nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(),
                                          nn.Linear(64, 3)))
    x, y = torch.randn(8, 1, 8, 8), torch.randint(0, 3, (8,))
    lc, ln = F.cross_entropy(cpu(x), y).item(), F.cross_entropy(npu(x.npu()), y.npu()).item()
    assert abs(lc - ln) < 1e-4, (lc, ln)


@check
def cnn_sgd_momentum() -> None:
    cpu, npu = both(cnn)
    x, y = torch.randn(8, 1, 8, 8), torch.randint(0, 3, (8,))
    lc, ln = train(cpu, npu, lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, foreach=False),
                   F.cross_entropy, x, y, 3)
    assert abs(lc - ln) < CLOSE, (lc, ln)


@check
def side_stream_pinned_copies() -> None:
    side = torch.npu.Stream()
    host = torch.arange(4096, dtype=torch.float32).pin_memory()
    back = torch.empty(4096).pin_memory()
    assert host.is_pinned()
    with torch.npu.stream(side):
        doubled = host.to("npu", non_blocking=True) * 2
        back.copy_(doubled, non_blocking=True)
    done = torch.npu.Event()
    done.record(side)
    torch.npu.current_stream().wait_event(done)
    done.synchronize()
    assert torch.equal(back, host * 2)


@check
def aclnn_py_on_torch_npu_tensors() -> None:
    torch.manual_seed(2)
    x, y = torch.randn(3, 4).npu(), torch.randn(3, 4).npu()
    grad = torch.ones(3, 4).npu()
    before = aclnn_py.emulator.stats()["memcpy_calls"]
    gradient = aclnn_py.mse_loss_backward(grad, x, y)
    product = aclnn_py.call("aclnnMul", x, y)
    assert aclnn_py.emulator.stats()["memcpy_calls"] == before  # nothing went through the host
    assert isinstance(gradient, torch.Tensor) and gradient.device.type == "npu"
    assert torch.allclose(gradient.cpu(), 2 * (x.cpu() - y.cpu()) / 12, atol=1e-6)
    assert torch.allclose(product.cpu(), x.cpu() * y.cpu(), atol=1e-6)


@check
def out_of_scope_fails_cleanly() -> None:
    import torch.distributed as dist

    try:
        dist.init_process_group("hccl", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
        t = torch.ones(2, device="npu")
        dist.all_reduce(t)
    except RuntimeError as error:
        assert "not support" in str(error), error
    else:
        raise AssertionError("a collective succeeded on the emulator")
    assert torch.ones(2, device="npu").sum().item() == 2.0  # the process goes on


print(json.dumps(results))
