"""Enumeration, counting, lookup and list sums of ops-math math/: aclnnRange, aclnnOneHot,
aclnnHistc, aclnnSearchSorted, aclnnSearchSorteds, aclnnIsInScalarTensor,
aclnnIsInTensorScalar, aclnnAddN, aclnnSum and aclnnBincount.

Each follows its doc's formula (ops-math math/<op>/docs/) and, where the doc gives none,
PyTorch's function of the same name (torch.range, one_hot, histc, searchsorted, isin);
float16 and bfloat16 compute in float32 and are rounded once.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from ...ops.dtypes import Dtypes
from . import store, tensor_format, widen
from .elementwise import register

_MAX_RANK = 8


def _rank_check(**tensors: Any) -> None:
    for name, value in tensors.items():
        if value is not None and value.ndim > _MAX_RANK:
            raise ValueError(f"{name} has {value.ndim} dimensions: at most {_MAX_RANK}")


# ---- range ----------------------------------------------------------------------------------

# ops-math math/range/op_api/aclnn_range.cpp: ASCEND910B_INPUT/OUTPUT_DTYPE_SUPPORT_LIST
_RANGE_OUT = Dtypes(("float16", "float32", "float64", "int64", "int32", "bfloat16"))


def _range_check(start: Any, end: Any, step: Any, out: np.ndarray) -> None:
    """aclnn_range.cpp: CheckParamsLogic: out is not 0-d; step is not 0 and its sign goes
    from start to end (compared in out's kind: float, double or int64)."""
    if out.ndim == 0:
        raise ValueError("out is 0-d: it must be a 1-d tensor")
    first: float
    last: float
    stride: float
    if out.dtype.kind in "iu":
        first, last, stride = int(start), int(end), int(step)
    elif out.dtype == np.float64:
        first, last, stride = float(start), float(end), float(step)
    else:  # float32, float16, bfloat16: compared as C floats (aclScalar ToFloat)
        first, last, stride = (float(np.float32(float(v))) for v in (start, end, step))
    if stride == 0:
        raise ValueError("step is 0: it must be nonzero")
    if (stride > 0 and first > last) or (stride < 0 and first < last):
        raise ValueError(f"start {first}, end {last} and step {stride}: the bounds are "
                         "inconsistent with step's sign")


@register("aclnnRange", dtypes={"out": _RANGE_OUT}, check=_range_check)
def range_(start: Any, end: Any, step: Any, out: np.ndarray) -> None:
    """out_i = start + i step for the out.size elements of out (end included when reached,
    as torch.range)."""
    if out.size == 0:
        return
    if out.dtype.kind in "iu":
        values: Any = int(start) + np.arange(out.size, dtype=np.int64) * int(step)
    else:
        values = float(start) + np.arange(out.size, dtype=np.float64) * float(step)
    store(out, values.reshape(out.shape))


# ---- one-hot --------------------------------------------------------------------------------

# ops-math math/one_hot/op_api/aclnn_one_hot.cpp: DTYPE_SUPPORT_LIST, VALUE_DTYPE_SUPPORT_LIST
_ONE_HOT_SELF = Dtypes(("int32", "int64"))
_ONE_HOT_VALUE = Dtypes(("float16", "float32", "int32", "int64"))


def _one_hot_check(self: np.ndarray, numClasses: int, onValue: np.ndarray,
                   offValue: np.ndarray, axis: int, out: np.ndarray) -> None:
    """aclnn_one_hot.cpp: CheckParams: onValue and offValue have out's dtype; at most 8
    dimensions; numClasses >= 0 (> 0 for an empty self); -1 <= axis <= self's rank; out has
    self's shape with numClasses inserted at axis."""
    for name, value in (("onValue", onValue), ("offValue", offValue)):
        if value.dtype != out.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be out's dtype "
                             f"{out.dtype.name}")
    _rank_check(self=self, onValue=onValue, offValue=offValue, out=out)
    if self.size == 0 and numClasses <= 0:
        raise ValueError(f"numClasses is {numClasses}: it must be > 0 for an empty self")
    if numClasses < 0:
        raise ValueError(f"numClasses is {numClasses}: it must be >= 0")
    if not -1 <= axis <= self.ndim:
        raise ValueError(f"axis is {axis}: it must be in [-1, {self.ndim}]")
    dim = axis + self.ndim + 1 if axis < 0 else axis
    expected = self.shape[:dim] + (numClasses,) + self.shape[dim:]
    if out.shape != expected:
        raise ValueError(f"out has shape {list(out.shape)}: it must be {list(expected)}")


@register("aclnnOneHot", dtypes={"self": _ONE_HOT_SELF, "onValue": _ONE_HOT_VALUE,
                                 "offValue": _ONE_HOT_VALUE, "out": _ONE_HOT_VALUE},
          check=_one_hot_check)
def one_hot(self: np.ndarray, numClasses: int, onValue: np.ndarray, offValue: np.ndarray,
            axis: int, out: np.ndarray) -> None:
    """out = onValue where the index along axis equals self's value, else offValue (an index
    outside [0, numClasses) gives offValue everywhere)."""
    if out.size == 0:
        return
    dim = axis + self.ndim + 1 if axis < 0 else axis
    classes = np.arange(numClasses).reshape((numClasses,) + (1,) * (self.ndim - dim))
    hits = np.expand_dims(self, dim) == classes
    on = np.asarray(onValue).reshape(-1)[0]
    off = np.asarray(offValue).reshape(-1)[0]
    store(out, np.where(hits, on, off))


# ---- histogram ------------------------------------------------------------------------------

# ops-math math/histogram_v2/op_api/aclnn_histc.cpp: DTYPE_SUPPORT_LIST_910B
_HISTC = Dtypes(("float32", "float16", "int64", "int32", "int16", "int8", "uint8"))


def _histc_check(self: np.ndarray, bins: int, min: Any, max: Any, out: np.ndarray) -> None:
    """aclnn_histc.cpp: CheckValueRange (bins > 0, min <= max, compared as int32 for an
    integer self, else float), CheckMinMaxIsInfNan (finite bounds unless both are the same
    infinity), CheckShape (out 1-d of bins elements, self of at most 8 dimensions)."""
    if bins <= 0:
        raise ValueError(f"bins is {bins}: it must be > 0")
    integral = self.dtype.kind in "iu"
    low = int(np.int32(int(min))) if integral else float(np.float32(float(min)))
    high = int(np.int32(int(max))) if integral else float(np.float32(float(max)))
    if low > high:
        raise ValueError(f"min {low} is greater than max {high}: it must not be")
    if not integral and not (math.isinf(low) and low == high) \
            and not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"the range [{low}, {high}] is not finite")
    if out.ndim != 1 or out.size != bins:
        raise ValueError(f"out has shape {list(out.shape)}: it must be [bins] = [{bins}]")
    _rank_check(self=self)


@register("aclnnHistc", dtypes=_HISTC, check=_histc_check)
def histc(self: np.ndarray, bins: int, min: Any, max: Any, out: np.ndarray) -> None:
    """bins equal-width bins over [min, max] (self's own minimum and maximum when min ==
    max, widened by 1 each way when those are equal too); values outside are left out, max
    falls in the last bin (torch.histc)."""
    values = widen(self).astype(np.float64).reshape(-1)
    low, high = float(min), float(max)
    if low == high and values.size:
        low, high = float(values.min()), float(values.max())
    if low == high:
        low, high = low - 1.0, high + 1.0
    inside = values[(values >= low) & (values <= high)]
    index = np.floor((inside - low) * bins / (high - low)).astype(np.int64)
    np.minimum(index, bins - 1, out=index)
    store(out, np.bincount(index, minlength=bins)[:bins])


# ---- searchsorted ---------------------------------------------------------------------------

# ops-math math/search_sorted/op_api/aclnn_searchsorted.cpp: DTYPE_SUPPORT_LIST
_SORTED = Dtypes(("float16", "float32", "int16", "int8", "uint8", "int32", "int64", "float64"))


def _search_check(sortedSequence: np.ndarray, values: np.ndarray, outInt32: bool,
                  sorter: Any, out: np.ndarray, name: str) -> None:
    """aclnn_searchsorted.cpp: CheckShape: at most 8 dimensions; out has self's shape; a
    sorter has sortedSequence's shape; sortedSequence is 1-d or shares self's leading
    dimensions; out is int32 when outInt32, else int64."""
    _rank_check(sortedSequence=sortedSequence, **{name: values})
    if out.shape != values.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be {name}'s shape "
                         f"{list(values.shape)}")
    if sorter is not None and sorter.shape != sortedSequence.shape:
        raise ValueError(f"sorter has shape {list(sorter.shape)}: it must be sortedSequence's "
                         f"{list(sortedSequence.shape)}")
    if sortedSequence.ndim != 1 and (sortedSequence.ndim != values.ndim
                                     or sortedSequence.shape[:-1] != values.shape[:-1]):
        raise ValueError(f"sortedSequence has shape {list(sortedSequence.shape)}: it must be "
                         f"1-d or share {name}'s leading dimensions {list(values.shape[:-1])}")
    wanted = np.int32 if outInt32 else np.int64
    if out.dtype != wanted:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be {np.dtype(wanted).name} "
                         f"when outInt32 is {bool(outInt32)}")


def _search(sortedSequence: np.ndarray, values: np.ndarray, right: bool, sorter: Any,
            out: np.ndarray) -> None:
    """The index at which each value would be inserted into its row of sortedSequence to keep
    it sorted (after equal values when right), as torch.searchsorted."""
    if out.size == 0:
        return
    dtype = np.float64 if sortedSequence.dtype.kind == "f" or values.dtype.kind == "f" \
        else np.int64
    rows = np.asarray(sortedSequence, dtype)
    if sorter is not None:
        rows = np.take_along_axis(rows, np.asarray(sorter, np.int64), axis=-1)
    side: Literal["left", "right"] = "right" if right else "left"
    queries = np.asarray(values, dtype)
    if rows.ndim == 1:
        store(out, np.searchsorted(rows, queries, side=side))
        return
    flat_rows = rows.reshape(-1, rows.shape[-1])
    flat_queries = queries.reshape(flat_rows.shape[0], -1)
    result = np.empty(flat_queries.shape, np.int64)
    for index in range(flat_rows.shape[0]):  # rows are few; each search is vectorised
        result[index] = np.searchsorted(flat_rows[index], flat_queries[index], side=side)
    store(out, result.reshape(out.shape))


@register("aclnnSearchSorted", dtypes={"sortedSequence": _SORTED, "self": _SORTED},
          check=lambda sortedSequence, self, outInt32, right, sorter, out: _search_check(
              sortedSequence, self, outInt32, sorter, out, "self"))
def search_sorted(sortedSequence: np.ndarray, self: np.ndarray, outInt32: bool, right: bool,
                  sorter: Any, out: np.ndarray) -> None:
    """torch.searchsorted(sortedSequence, self, out_int32=outInt32, right=right,
    sorter=sorter)."""
    _search(sortedSequence, self, right, sorter, out)


def _search_scalar_check(sortedSequence: np.ndarray, self: Any, outInt32: bool, right: bool,
                         sorter: Any, out: np.ndarray) -> None:
    """aclnn_searchsorted.cpp (aclnnSearchSorteds): sortedSequence is 1-d (a scalar self);
    out is not empty (CANN views it as [1])."""
    if sortedSequence.ndim != 1:
        raise ValueError(f"sortedSequence has {sortedSequence.ndim} dimensions: a scalar self "
                         "needs a 1-d one")
    if out.size == 0:
        raise ValueError("out is empty: its shape must be [1]")
    _search_check(sortedSequence, np.zeros(out.shape), outInt32, sorter, out, "self")


@register("aclnnSearchSorteds", dtypes={"sortedSequence": _SORTED},
          check=_search_scalar_check)
def search_sorteds(sortedSequence: np.ndarray, self: Any, outInt32: bool, right: bool,
                   sorter: Any, out: np.ndarray) -> None:
    """aclnnSearchSorted of one value, converted to sortedSequence's dtype first (CANN's
    op_api converts the scalar through float)."""
    value = np.asarray(np.float32(float(self))).astype(sortedSequence.dtype)
    _search(sortedSequence, np.full(out.shape, value), right, sorter, out)


# ---- isin -----------------------------------------------------------------------------------

# ops-math math/equal/op_api/aclnn_isin.cpp: ASCEND910B_DTYPE_SUPPORT_LIST
_ISIN = Dtypes(("float32", "float16", "int8", "int32", "int64", "uint8", "bfloat16", "float64",
                "int16"))


def _isin(elements: Any, tests: Any, invert: bool, out: np.ndarray) -> None:
    kind = np.float64 if np.asarray(elements).dtype.kind == "f" \
        or np.asarray(tests).dtype.kind == "f" else np.int64
    found = np.isin(np.asarray(elements, kind), np.asarray(tests, kind).reshape(-1))
    store(out, np.logical_not(found) if invert else found)


def _isin_scalar_tensor_check(element: Any, testElements: np.ndarray, assumeUnique: bool,
                              invert: bool, out: np.ndarray) -> None:
    """aclnn_isin.cpp: CheckShape: testElements of at most 8 dimensions, out 0-d; out is
    bool (CheckDtypeValid)."""
    _rank_check(testElements=testElements)
    if out.ndim != 0:
        raise ValueError(f"out has {out.ndim} dimensions: it must be 0-d")
    if out.dtype != np.bool_:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be bool")


@register("aclnnIsInScalarTensor", dtypes={"testElements": _ISIN},
          check=_isin_scalar_tensor_check)
def isin_scalar_tensor(element: Any, testElements: np.ndarray, assumeUnique: bool,
                       invert: bool, out: np.ndarray) -> None:
    """Whether element is among testElements (not, when invert)."""
    kind = np.float64 if testElements.dtype.kind == "f" or isinstance(element, float) \
        else np.int64
    found = bool(np.any(np.asarray(testElements, kind) == kind(element)))
    store(out, np.asarray(found != bool(invert)))


def _isin_tensor_scalar_check(element: np.ndarray, testElement: Any, assumeUnique: bool,
                              invert: bool, out: np.ndarray) -> None:
    """ops-math math/equal/op_api/aclnn_isin_tensor_scalar.cpp: out is bool of element's
    shape; at most 8 dimensions."""
    _rank_check(element=element)
    if out.shape != element.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be element's "
                         f"{list(element.shape)}")
    if out.dtype != np.bool_:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be bool")


@register("aclnnIsInTensorScalar", dtypes={"element": _ISIN}, check=_isin_tensor_scalar_check)
def isin_tensor_scalar(element: np.ndarray, testElement: Any, assumeUnique: bool, invert: bool,
                       out: np.ndarray) -> None:
    """element == testElement elementwise (not, when invert)."""
    if out.size:
        _isin(element, np.asarray(testElement), invert, out)


# ---- sums of tensor lists -------------------------------------------------------------------

# ops-math math/add_n/op_api/aclnn_add_n.cpp: ADD_N_DTYPE_SUPPORT_LIST
_ADD_N = Dtypes(("int32", "int64", "float16", "bfloat16", "float32"))
# ops-math math/accumulate_nv2/op_api/aclnn_sum.cpp: DTYPE_SUPPORT_LIST
_SUM = Dtypes(("float16", "float32", "int8", "int32", "uint8"))


def _list_sum(tensors: list[np.ndarray], out: np.ndarray) -> None:
    """The elementwise sum of the list, broadcast to out: float16 and bfloat16 in float32
    rounded once, integers wrapping in their dtype."""
    if out.size == 0:
        return
    dtype = np.float32 if out.dtype.kind not in "iuf" or out.dtype.itemsize == 2 \
        else out.dtype
    total = np.zeros(out.shape, dtype)
    for tensor in tensors:
        total += np.asarray(tensor).astype(dtype)
    store(out, total)


def _add_n_check(tensors: list[np.ndarray], out: np.ndarray) -> None:
    """aclnn_add_n.cpp: CheckShape: every tensor of at most 8 dimensions and of one shape,
    out's."""
    for index, tensor in enumerate(tensors):
        if tensor.ndim > _MAX_RANK:
            raise ValueError(f"tensors[{index}] has {tensor.ndim} dimensions: at most "
                             f"{_MAX_RANK}")
        if tensor.shape != tensors[0].shape:
            raise ValueError("the tensors must have one shape: tensors[0] has "
                             f"{list(tensors[0].shape)}, tensors[{index}] {list(tensor.shape)}")
    _rank_check(out=out)
    if tensors and out.shape != tensors[0].shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be the tensors' "
                         f"{list(tensors[0].shape)}")


@register("aclnnAddN", dtypes={"tensors": _ADD_N, "out": _ADD_N}, check=_add_n_check)
def add_n(tensors: list[np.ndarray], out: np.ndarray) -> None:
    """out = the elementwise sum of tensors."""
    _list_sum(tensors, out)


def _sum_check(tensors: list[np.ndarray], out: np.ndarray) -> None:
    """aclnn_sum.cpp: CheckShape: at most 8 dimensions; the tensors broadcast, to out's
    shape."""
    for index, tensor in enumerate(tensors):
        if tensor.ndim > _MAX_RANK:
            raise ValueError(f"tensors[{index}] has {tensor.ndim} dimensions: at most "
                             f"{_MAX_RANK}")
    _rank_check(out=out)
    try:
        shape = np.broadcast_shapes(*(t.shape for t in tensors))
    except ValueError:
        raise ValueError("the tensors do not broadcast: shapes "
                         f"{', '.join(str(list(t.shape)) for t in tensors)}") from None
    if out.shape != shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be the tensors' broadcast "
                         f"shape {list(shape)}")


@register("aclnnSum", dtypes={"tensors": _SUM, "out": _SUM}, check=_sum_check)
def sum_(tensors: list[np.ndarray], out: np.ndarray) -> None:
    """out = the elementwise sum of tensors, broadcast."""
    _list_sum(tensors, out)


# ---- bincount -------------------------------------------------------------------------------

# ops-math math/bincount/op_api/aclnn_bincount.cpp: SELF_, WEIGHTS_ and OUT_DTYPE_SUPPORT_LIST
_BINCOUNT_SELF = Dtypes(("int8", "int16", "int32", "int64", "uint8"))
_BINCOUNT_WEIGHTS = Dtypes(("float32", "float16", "float64", "int8", "int16", "int32", "int64",
                            "uint8", "bool"))
_BINCOUNT_OUT = Dtypes(("float32", "float64", "int32", "int64"))
_INT32_MAX = 2147483647


def _bincount_size(out: np.ndarray, minlength: int) -> int:
    return max(out.shape[0] if out.ndim else 1, minlength)


def _bincount_check(self: np.ndarray, weights: Any, minlength: int, out: np.ndarray) -> None:
    """aclnn_bincount.cpp: CheckFormat (self and out in no private format, self 1-d, weights
    of self's format and shape); aclnnBincountGetWorkspaceSize (a non-empty self counts into
    max(out's dimension 0, minlength) bins, at most 2147483647)."""
    from .foreach import PRIVATE_FORMATS
    for name, value in (("self", self), ("out", out)):
        if tensor_format(value) in PRIVATE_FORMATS:
            raise ValueError(f"{name} has a private format (aclFormat {tensor_format(value)})")
    if self.ndim != 1:
        raise ValueError(f"self has {self.ndim} dimensions: it must have 1")
    if weights is not None:
        if tensor_format(weights) != tensor_format(self):
            raise ValueError(f"weights has aclFormat {tensor_format(weights)}: it must be "
                             f"self's {tensor_format(self)}")
        if weights.shape != self.shape:
            raise ValueError(f"weights has shape {weights.shape}: it must be self's "
                             f"{self.shape}")
    if self.size and _bincount_size(out, minlength) > _INT32_MAX:
        raise ValueError(f"the output size max(out's dimension 0, minlength {minlength}) must "
                         f"be at most {_INT32_MAX}")


@register("aclnnBincount",
          dtypes={"self": _BINCOUNT_SELF, "weights": _BINCOUNT_WEIGHTS, "out": _BINCOUNT_OUT},
          check=_bincount_check)
def bincount(self: np.ndarray, weights: Any, minlength: int, out: np.ndarray) -> None:
    """out[i] = the number of self's values equal to i, or the sum of their weights
    (torch.bincount), over max(out's dimension 0, minlength) bins; self is read as int32 (the
    op_api casts it), values outside the bins are not counted. Weights other than float32
    and float64 sum in float64 (the op_api casts them to double). An empty self fills out
    with 0 when minlength > 0 and leaves it alone otherwise."""
    if self.size == 0:
        if minlength > 0:
            out[...] = 0
        return
    size = _bincount_size(out, minlength)
    values = self.astype(np.int32, copy=False).astype(np.intp)  # np.bincount's own index type
    kept = weights
    if values.min() < 0 or values.max() >= size:  # only then the cost of a selection
        inside = (values >= 0) & (values < size)
        values = values[inside]
        kept = None if weights is None else weights[inside]
    if kept is None:
        counts: np.ndarray = np.bincount(values, minlength=size)
    else:
        dtype = kept.dtype if kept.dtype in (np.float32, np.float64) else np.float64
        counts = np.bincount(values, kept.astype(np.float64, copy=False), minlength=size) \
            .astype(dtype)
    flat = np.zeros(out.size, counts.dtype)
    flat[:min(out.size, size)] = counts[:out.size]
    store(out, flat.reshape(out.shape))
