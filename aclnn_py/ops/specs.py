"""The operator table: every aclnn operator aclnn_py offers, as a declaration.

An :class:`OperatorSpec` says everything the generic layers need: the CANN
name, the tensor inputs (and which may be Python numbers), the attributes
with their C types and how Python values become C arguments, the dtypes and
rank limit, and how the result's shape and dtype follow from the inputs.
Validation, result allocation, the launch-cache key and the plan classes all
come from it (``engine.dispatch``); adding an operator adds a row here.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Union

import numpy as np

from .dtypes import FLOATING, Dtypes, promote


class Reduction(enum.IntEnum):
    """How a loss reduces over elements; the values are CANN's (and PyTorch's)."""

    NONE = 0
    MEAN = 1
    SUM = 2


ReductionLike = Union[Literal["none", "mean", "sum"], int, Reduction]
_ACCEPTED_REDUCTIONS = "'none', 'mean', 'sum', 0, 1, 2 or aclnn_py.Reduction"


def to_reduction(value: Any) -> int:
    """CANN's int64_t reduction for ``value``; ValueError naming what is accepted."""
    try:
        if isinstance(value, str) and value == value.lower():  # exact: "Mean" is refused
            return int(Reduction[value.upper()])
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(Reduction(int(value)))
    except (KeyError, ValueError):
        pass
    case = " (the names are lower case, exactly)" if isinstance(value, str) and \
        value.lower() in ("none", "mean", "sum") else ""
    raise ValueError(f"reduction must be {_ACCEPTED_REDUCTIONS}, got {value!r}{case}")


class _NegativeZero(float):
    """-0.0 as a C argument. Launch-cache and layout keys hold the C values, and an
    executor keeps the scalars it was made with; ``-0.0 == 0.0`` would let a call with
    one reuse the executor of the other (``x + -0.0 * y`` keeps the sign of a zero ``x``,
    ``x + 0.0 * y`` does not). This -0.0 equals only itself."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _NegativeZero)

    def __ne__(self, other: object) -> bool:
        return not isinstance(other, _NegativeZero)

    def __hash__(self) -> int:
        return hash("-0.0")


NEGATIVE_ZERO = _NegativeZero(-0.0)


def _negative_zero(value: float) -> bool:
    return value == 0 and math.copysign(1.0, value) < 0


def c_float(value: float) -> float:
    """``value`` as a C attribute's value: itself, except -0.0 (:data:`NEGATIVE_ZERO`)."""
    return NEGATIVE_ZERO if _negative_zero(value) else value


class _SignedZeroComplex(complex):
    """A complex value with a -0.0 part, as a C argument: for the reason of
    :class:`_NegativeZero`, it equals only a complex with the same value and signs."""

    __slots__ = ()

    def _key(self) -> tuple[float, float, bool, bool]:
        return (self.real, self.imag, _negative_zero(self.real), _negative_zero(self.imag))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _SignedZeroComplex) and self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(("signed zero complex", *self._key()))


def c_complex(value: complex) -> complex:
    """``value`` as a C attribute's value: itself, unless a part is -0.0."""
    if _negative_zero(value.real) or _negative_zero(value.imag):
        return _SignedZeroComplex(value)
    return value


def to_beta(value: Any) -> float:
    """``beta`` as CANN's ``float``: a finite number, not negative (as PyTorch requires)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"beta must be a real number, got {type(value).__name__}")
    beta = float(value)
    if not math.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be a finite number >= 0, got {value!r}")
    return c_float(beta)


def to_alpha(value: Any) -> float:
    """``alpha`` as the value of CANN's ``aclScalar``: a finite real number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"alpha must be a real number, got {type(value).__name__}")
    alpha = float(value)
    if not math.isfinite(alpha):
        raise ValueError(f"alpha must be finite, got {value!r}")
    return c_float(alpha)


# Spellings the hot path maps to C values without calling a converter.
_FAST_REDUCTIONS: dict[tuple[type, Any], int] = {
    **{(str, mode.name.lower()): int(mode) for mode in Reduction},
    **{(Reduction, mode): int(mode) for mode in Reduction},
    **{(int, int(mode)): int(mode) for mode in Reduction},
}


_FAST_REDUCTION_KEYS = {spelling: (value,) for spelling, value in _FAST_REDUCTIONS.items()}


def _fast_reduction(value: Any) -> int | None:
    try:
        return _FAST_REDUCTIONS.get((type(value), value))
    except TypeError:  # unhashable: the converter explains what is accepted
        return None


def _fast_real(value: Any) -> float | None:
    if type(value) is float:
        return value if value else c_float(value)
    if type(value) is int and -(1 << 53) <= value <= 1 << 53:  # exactly a float
        return float(value)
    return None


@dataclass(frozen=True, eq=False)
class Attribute:
    """A non-tensor argument of an operator.

    ``c_type`` is the type CANN's header declares (a Python float passed for a
    ``float`` parameter goes through cffi as a float, never as a double).
    ``convert`` validates a Python value and returns the C argument; ``fast``
    returns it for the common spellings only (None otherwise) on the hot path.
    ``annotation`` and ``positional`` shape the public function's signature (an
    attribute that is not positional is keyword-only there; plans take all by position).
    """

    name: str
    c_type: str
    default: Any
    convert: Callable[[Any], Any]
    fast: Callable[[Any], Any]
    annotation: str = "Any"
    positional: bool = False


REDUCTION = Attribute("reduction", "int64_t", "mean", to_reduction, _fast_reduction,
                      "ReductionLike", positional=True)
BETA = Attribute("beta", "float", 1.0, to_beta, _fast_real, "float")
ALPHA = Attribute("alpha", "const aclScalar *", 1, to_alpha, _fast_real, "float")


@dataclass(frozen=True, eq=False)
class OperatorSpec:
    """One aclnn operator: ``out = cann(*inputs, *attributes)`` over device tensors."""

    function: str                   # the Python function, e.g. "mse_loss_backward"
    cann: str                       # the aclnn operator, e.g. "aclnnMseLossBackward"
    inputs: tuple[str, ...]         # tensor inputs, in CANN's order
    attributes: tuple[Attribute, ...] = ()
    numbers: tuple[str, ...] = ()   # inputs that may be Python numbers: they take `like`'s dtype
    like: str = ""                  # the input whose dtype numbers take
    same_dtype: bool = True         # inputs share one dtype (else CANN's promotion)
    reduces: bool = False           # "reduction" other than none gives a 0-d result
    dtypes: Dtypes = FLOATING
    max_rank: int = 8
    # CANN's smallest documented rank: 0-d arrays travel as shape [1] when it is 1.
    min_cann_rank: int = 0
    mean_divisor: str = ""          # documented in the function's docstring
    reference: str = ""             # CANN's documentation of the operator
    # Operators called through their header (aclnn_py.call):
    outputs: tuple[str, ...] = ("out",)  # the output tensors, in CANN's order
    library: str = ""               # bound from this library; "" for the loaded CANN's
    # The C arguments in CANN's order, when not "inputs, attributes, output": ("tensor", i)
    # for the i-th array of a launch (inputs, then outputs), ("list", i, n) for a tensor list
    # of the n arrays from the i-th, ("attribute", j), ("null", 0).
    order: tuple[tuple[str, int] | tuple[str, int, int], ...] = ()
    # The arguments a phase 2 takes besides the usual four, entries as in ``order`` (phase 1's
    # objects again, or those of parameters only phase 2 has); such a spec is not repeatable.
    phase2: tuple[tuple[str, int] | tuple[str, int, int], ...] = ()
    repeatable: bool = True         # False: every launch does phase 1 (_launch.OneShotLaunch)
    elementwise: bool = True        # numpy calls too large for the device may go in chunks
    fast_attributes: Callable[[tuple[Any, ...]], tuple[Any, ...] | None] = field(
        init=False, repr=False)
    like_index: int = field(init=False, repr=False)  # of `like` in inputs; -1 without one
    number_indices: frozenset[int] = field(init=False, repr=False)  # of `numbers` in inputs

    def __post_init__(self) -> None:
        object.__setattr__(self, "like_index", self.inputs.index(self.like) if self.like else -1)
        object.__setattr__(self, "number_indices", frozenset(
            index for index, name in enumerate(self.inputs) if name in self.numbers))
        fasts = tuple(attribute.fast for attribute in self.attributes)
        if fasts == (_fast_reduction,):
            def fast_attributes(values: tuple[Any, ...]) -> tuple[Any, ...] | None:
                (value,) = values
                try:
                    return _FAST_REDUCTION_KEYS.get((type(value), value))
                except TypeError:  # unhashable
                    return None
        else:
            def fast_attributes(values: tuple[Any, ...]) -> tuple[Any, ...] | None:
                converted = tuple(fast(value) for fast, value in zip(fasts, values))
                return None if None in converted else converted
        object.__setattr__(self, "fast_attributes", fast_attributes)

    @property
    def names(self) -> tuple[str, ...]:
        """The tensors of a launch: the inputs, then the outputs."""
        return (*self.inputs, *self.outputs)

    def convert_attributes(self, values: tuple[Any, ...]) -> tuple[Any, ...]:
        """The C arguments for the attribute ``values`` (validated)."""
        return tuple(attribute.convert(value)
                     for attribute, value in zip(self.attributes, values))

    def result_dtype(self, dtypes: list[np.dtype]) -> np.dtype:
        result = dtypes[0]
        for dtype in dtypes[1:]:
            result = promote(result, dtype)
        return result

    def result_shape(self, shape: tuple[int, ...], c_attributes: tuple[Any, ...]
                     ) -> tuple[int, ...]:
        if self.reduces:
            for attribute, value in zip(self.attributes, c_attributes):
                if attribute is REDUCTION and value != Reduction.NONE:
                    return ()
        return shape


MSE_LOSS_BACKWARD = OperatorSpec(
    "mse_loss_backward", "aclnnMseLossBackward", ("grad", "x", "y"), (REDUCTION,),
    numbers=("grad", "y"), like="x", mean_divisor="x.size",
    reference="ops-nn loss/mse_loss_grad/docs/aclnnMseLossBackward.md")

MSE_LOSS = OperatorSpec(
    "mse_loss", "aclnnMseLoss", ("x", "y"), (REDUCTION,), numbers=("y",), like="x",
    same_dtype=False, reduces=True, mean_divisor="the broadcast size",
    reference="ops-nn loss/mse_loss/docs/aclnnMseLoss.md")

L1_LOSS = OperatorSpec(
    "l1_loss", "aclnnL1Loss", ("x", "y"), (REDUCTION,), numbers=("y",), like="x",
    same_dtype=False, reduces=True, mean_divisor="the broadcast size",
    reference="ops-nn loss/lp_loss/docs/aclnnL1Loss.md")

L1_LOSS_BACKWARD = OperatorSpec(
    "l1_loss_backward", "aclnnL1LossBackward", ("grad", "x", "y"), (REDUCTION,),
    numbers=("grad", "y"), like="x", same_dtype=False,
    mean_divisor="the broadcast size (the result's elements)",
    reference="ops-nn loss/l1_loss_grad/docs/aclnnL1LossBackward.md")

SMOOTH_L1_LOSS = OperatorSpec(
    "smooth_l1_loss", "aclnnSmoothL1Loss", ("x", "y"), (REDUCTION, BETA), numbers=("y",),
    like="x", same_dtype=False, reduces=True, mean_divisor="the broadcast size",
    reference="ops-nn loss/smooth_l1_loss_v2/docs/aclnnSmoothL1Loss.md")

SMOOTH_L1_LOSS_BACKWARD = OperatorSpec(
    "smooth_l1_loss_backward", "aclnnSmoothL1LossBackward", ("grad", "x", "y"),
    (REDUCTION, BETA), numbers=("grad", "y"), like="x", same_dtype=False,
    mean_divisor="x.size",
    reference="ops-nn loss/smooth_l1_loss_grad_v2/docs/aclnnSmoothL1LossBackward.md")

ADD = OperatorSpec(
    "add", "aclnnAdd", ("x", "y"), (ALPHA,), numbers=("y",), like="x", same_dtype=False,
    reference="ops-math math/add/docs/aclnnAdd&aclnnInplaceAdd.md")

SPECS: Mapping[str, OperatorSpec] = {spec.function: spec for spec in (
    MSE_LOSS_BACKWARD, MSE_LOSS, L1_LOSS, L1_LOSS_BACKWARD, SMOOTH_L1_LOSS,
    SMOOTH_L1_LOSS_BACKWARD, ADD)}
