"""Every operator of the table, through the same generic tests: golden values (float64
formula and PyTorch), numpy/device/plan agreement, errors before device work, the launch
cache, faults, threads. A new operator is covered by adding one row to ROWS."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from conftest import fired_faults, no_device_work
from tolerances import BFLOAT16, DTYPES, GOLDEN, REDUCTIONS, assert_close

import aclnn_py
from aclnn_py.ops.specs import SPECS


@dataclass(frozen=True)
class Row:
    function: str
    plan: type
    # keyword attribute sets to try (besides the reduction, for reducing losses)
    attributes: tuple[dict[str, Any], ...] = ({},)
    reductions: tuple[str | None, ...] = REDUCTIONS
    torch: Any = field(default=None, compare=False)


def _torch_backward(loss_name: str):
    """Autograd of ``torch.nn.functional.<loss_name>`` in float64: d loss / d x, times
    ``grad`` (same shapes only: autograd sums broadcast axes back to x's shape)."""
    def run(torch, grad, x, y, reduction, **attributes):
        x = x.clone().requires_grad_(True)
        loss = getattr(torch.nn.functional, loss_name)(x, y, reduction=reduction, **attributes)
        loss.backward(grad if reduction == "none" else grad.reshape(()))
        return x.grad
    return run


def _torch_loss(loss_name: str):
    def run(torch, x, y, reduction, **attributes):
        return getattr(torch.nn.functional, loss_name)(x, y, reduction=reduction, **attributes)
    return run


ROWS = (
    Row("mse_loss_backward", aclnn_py.MseLossBackwardPlan, torch=_torch_backward("mse_loss")),
    Row("mse_loss", aclnn_py.MseLossPlan, torch=_torch_loss("mse_loss")),
    Row("l1_loss", aclnn_py.L1LossPlan, torch=_torch_loss("l1_loss")),
    Row("l1_loss_backward", aclnn_py.L1LossBackwardPlan, torch=_torch_backward("l1_loss")),
    Row("smooth_l1_loss", aclnn_py.SmoothL1LossPlan,
        ({"beta": 1.0}, {"beta": 0.5}, {"beta": 0.0}, {"beta": 2.0}),
        torch=_torch_loss("smooth_l1_loss")),
    Row("smooth_l1_loss_backward", aclnn_py.SmoothL1LossBackwardPlan,
        ({"beta": 1.0}, {"beta": 0.5}, {"beta": 0.0}), torch=_torch_backward("smooth_l1_loss")),
    Row("add", aclnn_py.AddPlan, ({"alpha": 1}, {"alpha": 2.5}, {"alpha": -3}),
        reductions=(None,), torch=lambda torch, x, y, alpha: torch.add(x, y, alpha=alpha)),
)
ROW_IDS = [row.function for row in ROWS]


def test_every_operator_of_the_table_has_a_row():
    assert {row.function for row in ROWS} == set(SPECS)
    for row in ROWS:
        assert row.plan.spec is SPECS[row.function]


def operands(row: Row, shapes: tuple[tuple[int, ...], ...], dtype: Any, seed: int
             ) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-3, 3, size=shape).astype(dtype) for shape in shapes]


def arguments(row: Row, reduction: str | None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Positional attribute values after the tensors (the reduction, if any)."""
    return ((reduction,) if reduction is not None else ()), {}


# Input shapes by pattern; the first tensor of a backward is the incoming gradient.
PATTERNS = {
    "same": lambda n: [(3, 4)] * n,
    "column": lambda n: [(3, 4)] * (n - 1) + [(3, 1)],
    "scalar_first": lambda n: [()] + [(3, 4)] * (n - 1),
    "all_broadcast": lambda n: [(1, 4), (3, 1), (2, 1, 1)][:n] if n == 3 else [(3, 1), (1, 4)],
    "zero_d": lambda n: [()] * n,
}


def _call(row: Row, inputs: list[Any], reduction: str | None, attributes: dict[str, Any],
          **kwargs: Any) -> Any:
    function = getattr(aclnn_py, row.function)
    extra = (reduction,) if reduction is not None else ()
    return function(*inputs, *extra, **attributes, **kwargs)


def _golden(row: Row, inputs: list[Any], reduction: str | None, attributes: dict[str, Any]):
    extra = (reduction,) if reduction is not None else ()
    return GOLDEN[row.function](*inputs, *extra, **attributes)


CASES = [(row, reduction, attributes) for row in ROWS for reduction in row.reductions
         for attributes in row.attributes]
CASE_IDS = [f"{row.function}-{reduction}-{'-'.join(f'{k}={v}' for k, v in a.items())}"
            for row, reduction, a in CASES]


@pytest.mark.parametrize("pattern", list(PATTERNS))
@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
@pytest.mark.parametrize(("row", "reduction", "attributes"), CASES, ids=CASE_IDS)
def test_golden_values_on_numpy_device_and_plan(row, reduction, attributes, dtype, pattern):
    spec = SPECS[row.function]
    inputs = operands(row, PATTERNS[pattern](len(spec.inputs)), dtype, seed=len(CASE_IDS))
    result = _call(row, inputs, reduction, attributes)
    assert_close(result, _golden(row, inputs, reduction, attributes), dtype)
    device_inputs = [aclnn_py.to_device(a) for a in inputs]
    on_device = _call(row, device_inputs, reduction, attributes)
    assert isinstance(on_device, aclnn_py.DeviceArray)
    assert on_device.numpy().tobytes() == result.tobytes()  # bit for bit
    extra = (reduction,) if reduction is not None else ()
    with row.plan(*device_inputs, *extra, **attributes) as plan:
        assert plan.run().numpy().tobytes() == result.tobytes()


@pytest.mark.filterwarnings("ignore:Using a target size")  # PyTorch on broadcast targets
@pytest.mark.parametrize("pattern", ["same", "column"])
@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
@pytest.mark.parametrize(("row", "reduction", "attributes"), CASES, ids=CASE_IDS)
def test_matches_pytorch(row, reduction, attributes, dtype, pattern):
    """PyTorch in float64 on the same values (a column target broadcast against x)."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
    spec = SPECS[row.function]
    shapes = [(4, 5)] * len(spec.inputs)
    if pattern == "column":
        shapes[-1] = (4, 1)
    inputs = operands(row, shapes, dtype, seed=7)
    if spec.reduces is False and reduction not in (None, "none") and len(spec.inputs) == 3:
        inputs[0] = np.array(inputs[0][0, 0])  # a reduced loss's gradient is 0-d
    result = _call(row, inputs, reduction, attributes)
    tensors = [torch.from_numpy(a.astype(np.float64)) for a in inputs]
    extra = (reduction,) if reduction is not None else ()
    expected = row.torch(torch, *tensors, *extra, **attributes).detach().numpy()
    assert_close(result, np.broadcast_to(expected, result.shape), dtype)


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_out_and_promotion(row):
    spec = SPECS[row.function]
    reduction = row.reductions[0]
    inputs = operands(row, [(2, 3)] * len(spec.inputs), np.float32, seed=3)
    out = np.empty(np.shape(_golden(row, inputs, reduction, row.attributes[0])), np.float16)
    assert _call(row, inputs, reduction, row.attributes[0], out=out) is out
    assert_close(out, _golden(row, inputs, reduction, row.attributes[0]), np.float16,
                 via=(np.float32,))
    if not spec.same_dtype:  # float16 with bfloat16 promotes to float32, as CANN does
        mixed = [inputs[0].astype(np.float16), *[a.astype(BFLOAT16) for a in inputs[1:]]]
        assert _call(row, mixed, reduction, row.attributes[0]).dtype == np.float32


def _no_device_work(action) -> None:
    with no_device_work():
        action()


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_bad_input_is_refused_before_device_work(row):
    spec = SPECS[row.function]
    n = len(spec.inputs)
    good = operands(row, [(2, 3)] * n, np.float32, seed=1)
    reduction, attributes = row.reductions[0], row.attributes[0]
    aclnn_py.runtime_info()
    last = spec.inputs[-1]

    def refuse(error, match, inputs, reduction=reduction, attributes=attributes, **kwargs):
        def act():
            with pytest.raises(error, match=match):
                _call(row, inputs, reduction, attributes, **kwargs)
        _no_device_work(act)

    refuse(TypeError, f"{last} has dtype int32", [*good[:-1], good[-1].astype(np.int32)])
    refuse(ValueError, "at most 8 are supported", [*good[:-1], np.zeros((1,) * 9, np.float32)])
    refuse(ValueError, "do not broadcast", [*good[:-1], np.zeros((4, 5), np.float32)])
    refuse(ValueError, "out has shape", good, out=np.empty((7,), np.float32))
    refuse(TypeError, "out must be a numpy.ndarray", good, out=[0.0])
    if reduction is not None:
        refuse(ValueError, "reduction must be", good, reduction="average")
        refuse(ValueError, "reduction must be", good, reduction=[1])
    if "beta" in attributes:
        refuse(ValueError, "beta must be a finite number >= 0", good, attributes={"beta": -1.0})
        refuse(TypeError, "beta must be a real number", good, attributes={"beta": "1"})
    if "alpha" in attributes:
        refuse(ValueError, "alpha must be finite", good, attributes={"alpha": float("nan")})
        refuse(TypeError, "alpha must be a real number", good, attributes={"alpha": None})


@pytest.mark.emulator_only
@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_a_repeat_relaunches_the_cached_executor(row):
    spec = SPECS[row.function]
    inputs = operands(row, [(5,)] * len(spec.inputs), np.float32, seed=4)
    reduction, attributes = row.reductions[-1], row.attributes[-1]
    first = [aclnn_py.to_device(a) for a in inputs]
    _call(row, first, reduction, attributes).synchronize()
    aclnn_py.emulator.inject_fault(spec.cann + "GetWorkspaceSize", 161002)
    again = [aclnn_py.to_device(a[::-1].copy()) for a in inputs]
    result = _call(row, again, reduction, attributes).numpy()
    assert fired_faults() == []  # phase 1 was skipped
    assert_close(result, _golden(row, [a[::-1] for a in inputs], reduction, attributes),
                 np.float32)


@pytest.mark.emulator_only
@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_a_failed_launch_raises_and_leaks_nothing(row):
    spec = SPECS[row.function]
    inputs = operands(row, [(5,)] * len(spec.inputs), np.float32, seed=5)
    aclnn_py.synchronize()
    aclnn_py.empty_cache()
    before = aclnn_py.emulator.stats()
    aclnn_py.emulator.inject_fault(spec.cann, 561000)
    with pytest.raises(aclnn_py.AclError) as raised:
        _call(row, inputs, row.reductions[0], row.attributes[0])
    assert raised.value.api == spec.cann and fired_faults() == [spec.cann]
    del raised
    aclnn_py.synchronize()
    aclnn_py.empty_cache()
    after = aclnn_py.emulator.stats()
    for key in ("live_tensors", "live_executors", "live_device_bytes", "pending_tasks"):
        assert after[key] == before[key], key


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_plans_rebind_by_name_and_position(row):
    spec = SPECS[row.function]
    reduction, attributes = row.reductions[0], row.attributes[0]
    host = operands(row, [(6,)] * len(spec.inputs), np.float32, seed=6)
    other = operands(row, [(6,)] * len(spec.inputs), np.float32, seed=8)
    extra = (reduction,) if reduction is not None else ()
    with row.plan(*[aclnn_py.to_device(a) for a in host], *extra, **attributes) as plan:
        last = spec.inputs[-1]
        swapped = [*host[:-1], other[-1]]
        result = plan.run(**{last: aclnn_py.to_device(other[-1])}).numpy()
        assert_close(result, _golden(row, swapped, reduction, attributes), np.float32)
        result = plan.run(*[aclnn_py.to_device(a) for a in other]).numpy()
        assert_close(result, _golden(row, other, reduction, attributes), np.float32)
        with pytest.raises(TypeError, match="unexpected argument"):
            plan.run(nonsense=None)


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_threads_share_the_cache_and_get_their_own_results(row):
    spec = SPECS[row.function]
    reduction, attributes = row.reductions[0], row.attributes[0]
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            inputs = operands(row, [(64,)] * len(spec.inputs), np.float32, seed=index)
            device = [aclnn_py.to_device(a) for a in inputs]
            for _ in range(20):
                value = _call(row, device, reduction, attributes).numpy()
            assert_close(value, _golden(row, inputs, reduction, attributes), np.float32)
            results[index] = value
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]
    assert len(results) == 4
