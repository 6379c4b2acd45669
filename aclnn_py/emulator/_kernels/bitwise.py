"""Bitwise operators of ops-math's ``math/`` directory: and, or, xor (tensor with tensor or with
a scalar), not, and the shifts.

The operands are integers or bools (ops-math math/bitwise_or/docs/
aclnnBitwiseOrScalar&aclnnInplaceBitwiseOrScalar.md and its siblings list BOOL and the integer
dtypes); two tensors promote as PyTorch's ``promote_types``, a tensor with a scalar keeps the
tensor's dtype unless the scalar's category is higher (a bool tensor with an integer scalar:
int64). On bools the operators are the logical ones. The result is stored into out's dtype.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .elementwise import (
    apply,
    broadcast_check,
    promote_types,
    register,
    same_shape,
    scalar_result_type,
)


def _pair_dtype(self: np.ndarray, other: Any) -> np.dtype:
    if isinstance(other, np.ndarray):
        return promote_types(self.dtype, other.dtype)
    return scalar_result_type(self.dtype, other)


def _integral(arguments: dict[str, Any]) -> None:
    """Every operand is an integer or a bool: bitwise operators have no float form (CANN's
    docs list none)."""
    for name, value in arguments.items():
        kind = value.dtype.kind if isinstance(value, np.ndarray) else np.asarray(value).dtype.kind
        if name != "out" and kind not in "biu":
            raise ValueError(f"{name} has dtype {np.asarray(value).dtype.name}: the bitwise "
                             "operators take integers and bools only")


def _integral_check(**arguments: Any) -> None:
    """Integral operands, and out has their broadcast shape."""
    _integral(arguments)
    broadcast_check(**arguments)


def _binary(function: Callable[..., Any]) -> Callable[..., None]:
    def kernel(**arguments: Any) -> None:
        self, other, out = arguments.values()
        if self.size == 0 or (isinstance(other, np.ndarray) and other.size == 0):
            return
        dtype = _pair_dtype(self, other)
        second = other if isinstance(other, np.ndarray) else \
            np.asarray(other).astype(dtype)[()]

        def compute(target: np.ndarray, a: Any, b: Any) -> None:
            function(a, b, out=target)
        apply(out, compute, [self, second], dtype)
    return kernel


BINARY: dict[str, Callable[..., Any]] = {
    # ops-math math/bitwise_and/docs/aclnnBitwiseAndTensor.md, aclnnBitwiseAndScalar.md
    "aclnnBitwiseAndTensor": np.bitwise_and,
    "aclnnBitwiseAndScalar": np.bitwise_and,
    # ops-math math/bitwise_or/docs/aclnnBitwiseOrTensor&aclnnInplaceBitwiseOrTensor.md ...
    "aclnnBitwiseOrTensor": np.bitwise_or,
    "aclnnBitwiseOrScalar": np.bitwise_or,
    # ops-math math/bitwise_xor/docs/aclnnBitwiseXorTensor&aclnnInplaceBitwiseXorTensor.md ...
    "aclnnBitwiseXorTensor": np.bitwise_xor,
    "aclnnBitwiseXorScalar": np.bitwise_xor,
    # ops-math math/left_shift/docs/aclnnLeftShift.md, aclnnLeftShifts.md: self << shiftBits
    "aclnnLeftShift": np.left_shift,
    "aclnnLeftShifts": np.left_shift,
    # ops-math math/right_shift/docs/aclnnRightShift.md: input >> shiftBits (arithmetic for
    # signed integers)
    "aclnnRightShift": np.right_shift,
}

_name: str
_function: Callable[..., Any]
for _name, _function in BINARY.items():
    register(_name, check=_integral_check)(_binary(_function))


def _not_check(self: np.ndarray, out: np.ndarray) -> None:
    _integral({"self": self})
    same_shape(self=self, out=out)


@register("aclnnBitwiseNot", check=_not_check)
def bitwise_not(self: np.ndarray, out: np.ndarray) -> None:
    """~x, the logical not of a bool (ops-math math/bitwise_not/docs/aclnnBitwiseNot.md)."""
    if self.size:
        apply(out, lambda target, x: np.invert(x, out=target), [self], self.dtype)
