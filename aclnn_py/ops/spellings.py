"""Keyword spellings: where CANN's headers spell one idea several ways, ``call`` takes each.

The spellings are those of the operator catalog's attribute names (for one, ``keepDims`` in
``aclnnReduceSum``, ``keepdim`` in ``aclnnArgMax``, ``keepDim`` in ``aclnnMean``). A keyword
an operator does not have, but which names the same idea as one it has, is that parameter.
"""

from __future__ import annotations

from collections.abc import Iterable

SAME_IDEA: tuple[frozenset[str], ...] = (
    frozenset({"keepDim", "keepdim", "keepDims", "keepdims"}),
    frozenset({"blockSize", "blocksize"}),
    frozenset({"offsetX", "offsetx"}),
    frozenset({"targetLengths", "targetlengths"}),
)
_GROUP = {spelling: group for group in SAME_IDEA for spelling in group}


def parameter_for(keyword: str, names: Iterable[str]) -> str:
    """The parameter of ``names`` that ``keyword`` stands for: itself, or the operator's
    spelling of the same idea (:data:`SAME_IDEA`); ``keyword`` when there is none."""
    group = _GROUP.get(keyword)
    if group is None:
        return keyword
    names = tuple(names)
    if keyword in names:
        return keyword
    for name in names:
        if name in group:
            return name
    return keyword
