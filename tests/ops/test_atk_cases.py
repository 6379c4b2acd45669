"""A held-out suite from aclnnMseLossBackward's public system and unit tests.

Sources (hicann/ops-nn; read from the stored copy of its mirror jbgztxdy/ops-nn):

* ``loss/mse_loss_grad/tests/st/aclnnMseLossBackward/atk_aclnnMseLossBackward.json``
  (commit b3622fd0): 299 ATK system-test cases, every one with the same shape for
  ``gradOutput``, ``self`` and ``target``, 0-D to 8-D, float16/float32/bfloat16,
  values uniform in [-100, 100] or constant inf/-inf/NaN/0 in one or more
  inputs, and tensors up to 16,777,216 elements. ``ATK`` below is a
  representative subset of 71 cases keeping the source ids; the 16,777,216-element
  cases are scaled down to 2,097,152 elements. A reduction range ``[0, 2]`` in the
  source runs all three reductions here.
* ``loss/mse_loss_grad_v2/tests/ut/op_host/op_api/test_aclnn_mse_loss_backward.cpp``
  (commit b17666c7): the unit tests' broadcasting, empty-tensor, non-contiguous,
  mixed-out-dtype and invalid cases (``UT_VALID``, ``UT_INVALID``). Where CANN
  returns ACLNN_ERR_PARAM_INVALID / ACLNN_ERR_PARAM_NULLPTR, aclnn_py raises
  TypeError (dtypes, a None tensor) or ValueError (reduction, shapes, ranks, out)
  before any device work. The source's 9-D case uses int32 tensors; here it is
  float32 so that the rank rule, not the dtype rule, is what fails.

Valid cases must match the float64 reference (and PyTorch when installed) within
``tests/tolerances.py``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest
from conftest import no_device_work
from tolerances import BFLOAT16, FLOAT16, FLOAT32, assert_close, golden_backward

import aclnn_py

F16, F32, BF16 = FLOAT16, FLOAT32, BFLOAT16
BIG = 2_097_152  # stands for the source's 16,777,216
REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


class Case(NamedTuple):
    id: str
    dtype: np.dtype
    shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # grad, x, y
    reduction: int | None  # None: every reduction (the source's range [0, 2])
    values: tuple[str, str, str] = ("r", "r", "r")  # r: uniform [-100, 100]
    out_dtype: np.dtype | None = None
    layout: str = "C"


def atk(id_, dtype, shape, reduction, grad="r", x="r", y="r"):
    return Case(f"atk{id_}", dtype, (shape, shape, shape), reduction, (grad, x, y))


ATK = [
    atk(0, F16, (), None),
    atk(1, F32, (), 0),
    atk(2, BF16, (), 1),
    atk(5, F16, (1,), 0, grad="-inf"),
    atk(6, F32, (), 0, x="inf"),
    atk(8, F16, (), 2),
    atk(9, F16, (), 1, grad="-inf"),
    atk(16, F32, (), 1, x="nan"),
    atk(20, F16, (), 2, y="nan"),
    atk(26, F16, (7,), 0, x="-inf", y="nan"),
    atk(27, F32, (8,), 1),
    atk(30, BF16, (9,), 2),
    atk(34, BF16, (16, 1), 2),
    atk(35, F16, (17,), 1),
    atk(40, BF16, (20,), 0, x="-inf"),
    atk(43, BF16, (17, 7), 2, grad="inf"),
    atk(44, F32, (19, 7), 1, y="-inf"),
    atk(46, BF16, (1, 255, 1), 1),
    atk(47, F16, (15, 17), 0, x="nan"),
    atk(50, BF16, (256,), 2, y="inf"),
    atk(51, F32, (257,), 1, grad="nan"),
    atk(55, F16, (21, 21, 1), 0, grad="-inf"),
    atk(60, BF16, (9, 1, 21, 8), 0),
    atk(62, F16, (1, 1, 1, 256, 7), 1),
    atk(64, F16, (7, 19, 16, 1), 1, x="inf"),
    atk(77, F16, (20, 19, 19), 2, grad="nan"),
    atk(79, BF16, (13107,), 0),
    atk(83, F32, (1, 1, 7, 1, 257, 15, 1, 1), 2),
    atk(86, F32, (7, 19, 1, 16, 16, 1), 2),
    atk(87, F16, (20, 1, 7, 15, 1, 17), 0),
    atk(94, F16, (1, 257, 255), 2),
    atk(95, F32, (257, 256), 2, grad="-inf"),
    atk(98, F32, (536, 17, 9), 1, x="nan"),
    atk(103, BF16, (3, 8, 8, 7, 3, 4, 10), 1),
    atk(105, BF16, (7, 1, 7, 15, 1, 1, 255), 0),
    atk(108, BF16, (7, 4, 10, 9, 1, 7, 4, 3), 2),
    atk(109, F16, (1, 1, 13107, 17), 1, grad="inf"),
    atk(111, F32, (3, 3, 1, 10, 8, 10, 8, 4), 0),
    atk(118, F16, (15, 9, 1, 1, 8, 19, 19), 2, y="inf"),
    atk(121, F32, (4, 3, 4, 1, 7, 128, 10), 1),
    atk(135, F32, (7, 3, 10, 4, 9, 3, 4, 8), 1),
    atk(141, BF16, (128, 9, 8, 127), 0, grad="nan"),
    atk(143, F32, (256, 19, 256), 1),
    atk(148, F32, (16, 7, 13107), 2, y="inf"),
    atk(150, BF16, (256, 1, 19, 1, 17, 1, 21, 1), 0),
    atk(157, F32, (8, 13107, 21), 1),
    atk(162, F32, (10, 127, 3, 10, 8, 1, 10), 1, grad="-inf"),
    atk(165, F32, (13107, 255), 1, y="-inf"),
    atk(201, F32, (1, 1, 1, 1), 2),
    atk(204, F32, (1,) * 8, 0),
    atk(207, BF16, (1,), 0, grad="inf"),
    atk(209, F16, (1, 1, 1, 1), 0, y="nan"),
    atk(213, BF16, (1,) * 8, 1),
    atk(220, BF16, (1,) * 5, 2, x="-inf"),
    atk(224, BF16, (1,) * 6, 0, grad="nan"),
    atk(225, F32, (), 2, x="-inf", y="0"),
    atk(226, F16, (1,), 0, y="0"),
    atk(227, BF16, (), 1, y="0"),
    atk(231, F32, (8,), None),
    atk(233, F32, (16,), 1, grad="-inf", x="nan", y="0"),
    atk(234, F16, (20,), 0, grad="inf", y="0"),
    atk(239, F32, (16, 19, 20, 8), None, x="inf"),
    atk(242, BF16, (20, 20, 294), 1, y="0"),
    atk(244, BF16, (8, 1, 1, 20, 9, 16, 9, 1), 1, y="±inf"),
    atk(247, F16, (1, 3276, 1, 4, 4, 3, 1, 5), 2, y="0"),
    atk(251, F16, (2, 3276, 3, 64), 0, y="-inf"),
    atk(253, F32, (17, 19, 588, 7), 1, y="inf"),
    atk(266, F16, (1, 1, BIG, 1, 1), 0),
    atk(267, F32, (1, 1, 1, BIG, 1, 1, 1, 1), 2, y="nan"),
    atk(274, BF16, (1, BIG), 1),
    atk(284, F16, (BIG,), 1),
]

UT_VALID = [
    Case("ut01_broadcast_none", F32, ((2, 2, 3, 2), (1, 2, 3, 2), (2, 2, 1, 2)), 0,
         ("r1", "r1", "r1")),
    Case("ut02_broadcast_mean", F16, ((1, 3, 2), (2, 3, 2), (3, 2)), 1, ("r1", "r1", "r1")),
    Case("ut02_bf16_broadcast_mean", BF16, ((1, 3, 2), (2, 3, 2), (3, 2)), 1,
         ("r1", "r1", "r1")),
    Case("ut03_float_in_float16_out", F32, ((2, 2),) * 3, 2, ("r1", "r1", "r1"), F16),
    Case("ut04_float16_in_float_out", F16, ((2, 2),) * 3, 1, ("r1", "r1", "r1"), F32),
    Case("ut05_empty_none", F32, ((1, 0, 1, 2), (1, 1, 0, 2), (1, 0, 1, 2)), 0),
    Case("ut06_empty_mean", F32, ((1, 0, 1, 2), (1, 1, 0, 2), (1, 0, 1, 2)), 1),
    Case("ut07_empty_sum", F32, ((1, 0, 1, 2), (1, 1, 0, 2), (1, 0, 1, 2)), 2),
    Case("ut11_inputs_not_contiguous", F32, ((5, 4),) * 3, 0, ("r2", "r2", "r2"),
         layout="fortran"),
    Case("ut20_mean", F32, ((2, 2),) * 3, 1, ("r1", "r1", "r1")),
]

CASES = ATK + UT_VALID
RANGES = {"r": 100.0, "r1": 1.0, "r2": 2.0}


def make(spec: str, shape: tuple[int, ...], dtype: np.dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if spec in RANGES:
        values = rng.uniform(-RANGES[spec], RANGES[spec], size=shape)
    elif spec == "±inf":
        values = np.where(rng.integers(0, 2, size=shape) == 1, np.inf, -np.inf)
    else:
        values = np.full(shape, float(spec))
    return values.astype(dtype)


def inputs(case: Case) -> list[np.ndarray]:
    seed = int("".join(c for c in case.id if c.isdigit()) or 0)
    arrays = [make(spec, shape, case.dtype, seed * 3 + i)
              for i, (spec, shape) in enumerate(zip(case.values, case.shapes))]
    if case.layout == "fortran":  # strides (1, 5) for shape (5, 4), as in the source
        arrays = [np.asfortranarray(a) for a in arrays]
        assert all(a.strides == (a.itemsize, 5 * a.itemsize) for a in arrays)
    return arrays


def reductions(case: Case) -> list[str]:
    return list(REDUCTIONS.values()) if case.reduction is None else [REDUCTIONS[case.reduction]]


def test_the_table_covers_every_category():
    ranks = {len(c.shapes[1]) for c in CASES}
    assert ranks == set(range(9))
    assert {c.dtype for c in CASES} == {F16, F32, BF16}
    assert {r for c in CASES for r in reductions(c)} == set(REDUCTIONS.values())
    assert {"inf", "-inf", "nan", "0", "±inf"} <= {v for c in CASES for v in c.values}
    assert any(len({s for s in c.shapes}) > 1 for c in CASES)  # broadcasting
    assert any(0 in c.shapes[1] for c in CASES)  # empty
    sizes = [int(np.prod(c.shapes[1])) for c in CASES]
    assert BIG in sizes and max(sizes) <= 4_000_000  # big, but a few million at most
    assert 40 <= len(CASES) <= 90


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_valid_case_matches_the_reference(case):
    grad, x, y = inputs(case)
    for reduction in reductions(case):
        shape = np.broadcast_shapes(*case.shapes)
        out = None if case.out_dtype is None else np.zeros(shape, case.out_dtype)
        result = aclnn_py.mse_loss_backward(grad, x, y, reduction, out=out)
        assert out is None or result is out
        golden = golden_backward(grad, x, y, reduction)
        if case.out_dtype is None:
            assert_close(result, golden, case.dtype)
        else:
            assert_close(result, golden, case.out_dtype, via=(case.dtype,))


TORCH_CASES = [c for c in CASES if np.prod(c.shapes[1]) <= 100_000]


@pytest.mark.parametrize("case", TORCH_CASES, ids=[c.id for c in TORCH_CASES])
def test_valid_case_matches_torch(case):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
    grad, x, y = inputs(case)
    for reduction in reductions(case):
        result = aclnn_py.mse_loss_backward(grad, x, y, reduction)
        expected = torch.ops.aten.mse_loss_backward(
            *(torch.from_numpy(a.astype(np.float64)) for a in (grad, x, y)),
            list(REDUCTIONS.values()).index(reduction))
        assert_close(result, expected.numpy(), case.dtype)


def _f32(shape: tuple[int, ...]) -> np.ndarray:
    return np.ones(shape, np.float32)


class Invalid(NamedTuple):
    id: str
    args: tuple[Any, Any, Any]
    kwargs: dict[str, Any]
    error: type
    pattern: str


UT_INVALID = [
    Invalid("ut13_reduction_3", (_f32((8,)),) * 3, {"reduction": 3}, ValueError,
            r"^reduction must be 'none', 'mean', 'sum', 0, 1, 2 .*got 3$"),
    Invalid("ut14_grad_none", (None, _f32((10, 5)), _f32((10, 5))), {}, TypeError,
            r"^grad is a required tensor; got None$"),
    Invalid("ut14_self_none", (_f32((10, 5)), None, _f32((10, 5))), {}, TypeError,
            r"^x is a required tensor; got None$"),
    Invalid("ut14_target_none", (_f32((10, 5)), _f32((10, 5)), None), {}, TypeError,
            r"^y is a required tensor; got None$"),
    Invalid("ut15_target_shape", (_f32((123, 11, 2)), _f32((123, 11, 2)), _f32((123, 8, 2))),
            {}, ValueError, r"^shapes do not broadcast together: grad \(123, 11, 2\), "
            r"x \(123, 11, 2\), y \(123, 8, 2\)$"),
    Invalid("ut22_self_shape", (_f32((123, 11, 2)), _f32((123, 8, 2)), _f32((123, 11, 2))),
            {}, ValueError, r"^shapes do not broadcast together: .*x \(123, 8, 2\)"),
    Invalid("ut16_out_int32", (_f32((6, 2, 1, 2)),) * 3,
            {"reduction": 0, "out": np.zeros((6, 2, 1, 2), np.int32)}, TypeError,
            r"^out has dtype int32; supported dtypes are float32, float16, bfloat16; give an out= "
            r"array of one of them"),
    Invalid("ut17_inputs_int32", (np.ones((6, 2, 1, 2), np.int32),) * 3, {"reduction": 0},
            TypeError, r"^grad has dtype int32; supported dtypes"),
    Invalid("ut18_grad_int32", (np.ones((6, 2, 1, 2), np.int32), _f32((6, 2, 1, 2)),
                                _f32((6, 2, 1, 2))), {}, TypeError, r"^grad has dtype int32"),
    Invalid("ut18_target_int32", (_f32((6, 2, 1, 2)), _f32((6, 2, 1, 2)),
                                  np.ones((6, 2, 1, 2), np.int32)), {}, TypeError,
            r"^y has dtype int32"),
    Invalid("ut19_grad_9d", (_f32((2, 3, 4, 5, 6, 7, 8, 9, 10)), _f32((7, 8, 9, 10)),
                             _f32((7, 8, 9, 10))), {}, ValueError,
            r"^grad has 9 dimensions \(shape \(2, 3, 4, 5, 6, 7, 8, 9, 10\)\); at most 8"),
    Invalid("ut19_self_9d", (_f32((7, 8, 9, 10)), _f32((2, 3, 4, 5, 6, 7, 8, 9, 10)),
                             _f32((7, 8, 9, 10))), {}, ValueError, r"^x has 9 dimensions"),
    Invalid("ut19_target_9d", (_f32((7, 8, 9, 10)), _f32((7, 8, 9, 10)),
                               _f32((2, 3, 4, 5, 6, 7, 8, 9, 10))), {}, ValueError,
            r"^y has 9 dimensions"),
    Invalid("ut21_out_shape", (_f32((123, 11, 2)), _f32((123, 1, 2)), _f32((123, 11, 1))),
            {"reduction": 0, "out": _f32((123, 8, 2))}, ValueError,
            r"^out has shape \(123, 8, 2\); the result has shape \(123, 11, 2\)$"),
    Invalid("ut12_out_not_contiguous", (_f32((5, 4)),) * 3,
            {"reduction": 0, "out": np.asfortranarray(_f32((5, 4)))}, ValueError,
            r"^out must be C-contiguous"),
]


@pytest.mark.parametrize("case", UT_INVALID, ids=[c.id for c in UT_INVALID])
def test_invalid_case_raises_before_device_work(case):
    aclnn_py.mse_loss_backward(_f32((1,)), _f32((1,)), _f32((1,)))  # runtime up
    with no_device_work(), pytest.raises(case.error, match=case.pattern):
        aclnn_py.mse_loss_backward(*case.args, **case.kwargs)
