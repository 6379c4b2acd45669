"""Random fills and dropout: the aclnn operators of ops-math random/ on the Atlas A2 SoC.

CANN draws its numbers with a counter-based generator (Philox) keyed by ``seed`` and started at
``offset``: the same seed and offset give the same numbers, different ones other numbers. The
emulator keeps that contract with numpy's Philox generator (key ``seed``, counter ``offset``,
both as unsigned 64-bit), not CANN's bit stream: its numbers follow the operators'
distributions but are not the device's (nor PyTorch's) bit for bit. The ``...Tensor`` forms read
seed and offset from int64 tensors of shape [1] when the launch runs (ops-math
random/dsa_random_normal/op_host/op_api/aclnn_normal.cpp: CheckSeedOffsetParams), the offset
argument added to offsetTensor's value.

The dropout masks are bit masks: bit ``i % 8`` of byte ``i // 8`` set keeps element ``i``, the
mask's byte count rounded up to whole 128-bit blocks (random/dsa_gen_bit_mask/op_host/op_api/
aclnn_dropout_gen_mask.cpp: InferDSAOutShapeV2; drop_out_do_mask/op_api/
aclnn_dropout_do_mask.cpp: CheckShape).

Values are drawn in float32 (float64 for double tensors) and rounded once into the output's
dtype; integer and bool outputs take the values converted as CANN's casts do.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...ops.dtypes import Dtypes
from . import broadcasts_to, store
from .elementwise import register

_MASK64 = (1 << 64) - 1
_MAX_RANK = 8  # OP_CHECK_MAX_DIM(..., 8) of every op_api here
_FLOATS = Dtypes(("float32", "float16", "bfloat16", "float64"))
# ops-math random/dsa_random_normal/op_host/op_api/aclnn_normal.cpp: DTYPE_SUPPORT_LIST (DAV_2201)
_NORMAL_SELF = Dtypes(("float16", "float32", "float64", "int16", "int32", "int64", "int8",
                       "uint8", "bool", "bfloat16"))
# random/dsa_random_uniform/op_host/op_api/aclnn_uniform.cpp: the dtype list
_UNIFORM_SELF = Dtypes(("float32", "int32", "int64", "float16", "int16", "int8", "uint8",
                        "float64", "bfloat16"))
# random/dsa_random_uniform/op_host/op_api/aclnn_random.cpp: DTYPE_SUPPORT_LIST (not RegBase)
_RANDOM_SELF = Dtypes(("float32", "int32", "int64", "float16", "int16", "int8", "uint8", "bool",
                       "float64", "bfloat16"))
# random/dsa_gen_bit_mask/op_host/op_api/aclnn_bernoulli.cpp: ASCEND910B_DTYPE_SUPPORT_LIST
# (self, out) and ASCEND910B_PROB_DTYPE_SUPPORT_LIST (prob)
_BERNOULLI_SELF = Dtypes(("float32", "int32", "int64", "float16", "int16", "int8", "uint8",
                          "float64", "bool", "bfloat16"))
_BERNOULLI_PROB = Dtypes(("float32", "float16", "float64", "bfloat16"))
_SEED = Dtypes(("int64",))
_SEED_UNSIGNED = Dtypes(("int64", "uint64"))
_MASK = Dtypes(("uint8",))
_DROPOUT = Dtypes(("float32", "float16", "bfloat16"))

# The operators whose outputs are random: a comparison with PyTorch cannot judge them
# (tools/torch_references.py reads them from here; tests/ops/test_random_fills.py tests them
# statistically).
RANDOM = frozenset({
    "aclnnInplaceNormal", "aclnnInplaceNormalTensor", "aclnnInplaceUniform",
    "aclnnInplaceUniformTensor", "aclnnInplaceRandom", "aclnnInplaceRandomTensor",
    "aclnnBernoulli", "aclnnBernoulliTensor", "aclnnInplaceBernoulli",
    "aclnnInplaceBernoulliTensor", "aclnnNormalFloatFloat", "aclnnNormalFloatTensor",
    "aclnnNormalTensorFloat", "aclnnNormalTensorTensor", "aclnnDropoutGenMask",
    "aclnnDropoutGenMaskV2", "aclnnDropoutGenMaskV2Tensor", "aclnnMultinomial",
    "aclnnMultinomialTensor", "aclnnRandperm"})


def generator(seed: int, offset: int) -> np.random.Generator:
    """The numbers of ``seed`` from ``offset`` on: a Philox generator keyed by seed whose
    counter starts at offset (both taken as unsigned 64-bit, as CANN's casts to uint64)."""
    return np.random.Generator(np.random.Philox(key=int(seed) & _MASK64,
                                                counter=int(offset) & _MASK64))


def standard_normal(rng: np.random.Generator, count: int, dtype: Any) -> np.ndarray:
    """``count`` standard normals by the Box-Muller transform of the generator's raw 32-bit
    words (each pair of uniforms gives two normals), in float32 or float64."""
    half = (count + 1) // 2
    if dtype == np.float64:
        uniforms = rng.random(2 * half)
    else:
        words = rng.bit_generator.random_raw(half).view(np.uint32)
        uniforms = (words >> np.uint32(8)).astype(np.float32)
        uniforms *= np.float32(2.0 ** -24)
    radius = np.log1p(-uniforms[0::2])  # u in [0, 1): log1p(-u) is finite
    radius *= dtype(-2.0)
    np.sqrt(radius, out=radius)
    angle = uniforms[1::2] * dtype(2.0 * math.pi)
    values = np.empty(2 * half, dtype)
    np.cos(angle, out=values[:half])
    np.sin(angle, out=values[half:])
    values[:half] *= radius
    values[half:] *= radius
    return values[:count]


def _from_tensors(seedTensor: np.ndarray, offsetTensor: np.ndarray,
                  offset: int) -> np.random.Generator:
    """The generator of seedTensor's value and offsetTensor's value plus ``offset``."""
    seed = int(np.asarray(seedTensor).reshape(-1)[0])
    start = int(np.asarray(offsetTensor).reshape(-1)[0]) + int(offset)
    return generator(seed, start)


def _seed_tensors_check(seedTensor: np.ndarray, offsetTensor: np.ndarray,
                        unsigned: bool = False) -> None:
    """ops-math random/dsa_random_normal/op_host/op_api/aclnn_normal.cpp:
    CheckSeedOffsetParams (the same in aclnn_random.cpp and aclnn_dropout_gen_mask.cpp):
    seedTensor and offsetTensor are int64 of shape [1]; ``unsigned``: uint64 too
    (aclnn_uniform.cpp: CheckSeedOffsetDtype)."""
    allowed = ("int64", "uint64") if unsigned else ("int64",)
    for name, value in (("seedTensor", seedTensor), ("offsetTensor", offsetTensor)):
        if value.dtype.name not in allowed:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be "
                             f"{' or '.join(allowed)}")
        if value.shape != (1,):
            raise ValueError(f"{name} has shape {list(value.shape)}: it must be [1]")


def _rank_check(**tensors: Any) -> None:
    for name, value in tensors.items():
        if value is not None and value.ndim > _MAX_RANK:
            raise ValueError(f"{name} has {value.ndim} dimensions: at most {_MAX_RANK}")


def _compute(dtype: np.dtype) -> type[np.floating[Any]]:
    return np.float64 if dtype == np.float64 else np.float32


def _store_values(target: np.ndarray, values: np.ndarray) -> None:
    """Write drawn floats into ``target``: rounded once for floats; integers take them
    truncated toward zero (CANN's Cast), bool whether they are non-zero."""
    if target.dtype.kind in "iu":
        values = np.trunc(values)
        info = np.iinfo(target.dtype)
        values = np.clip(values, info.min, info.max)
    store(target, values.reshape(target.shape))


# ---- normal ---------------------------------------------------------------------------------


def _normal_check(selfRef: np.ndarray, std: float) -> None:
    """aclnn_normal.cpp: CheckParams: std >= 0, selfRef of at most 8 dimensions."""
    if std < 0:
        raise ValueError(f"std is {std}: it must be >= 0")
    _rank_check(selfRef=selfRef)


def _fill_normal(target: np.ndarray, mean: float, std: float,
                 rng: np.random.Generator) -> None:
    if target.size == 0:
        return
    dtype = _compute(target.dtype)
    values = standard_normal(rng, target.size, dtype)
    values *= dtype(std)
    values += dtype(mean)
    _store_values(target, values)


@register("aclnnInplaceNormal", dtypes=_NORMAL_SELF,
          check=lambda selfRef, mean, std, seed, offset: _normal_check(selfRef, std))
def inplace_normal(selfRef: np.ndarray, mean: float, std: float, seed: int, offset: int) -> None:
    """selfRef = mean + std N(0, 1), drawn from (seed, offset)."""
    _fill_normal(selfRef, mean, std, generator(seed, offset))


def _inplace_normal_tensor_check(selfRef: np.ndarray, mean: float, std: float,
                                 seedTensor: np.ndarray, offsetTensor: np.ndarray,
                                 offset: int) -> None:
    _seed_tensors_check(seedTensor, offsetTensor)
    _normal_check(selfRef, std)


@register("aclnnInplaceNormalTensor",
          dtypes={"selfRef": _NORMAL_SELF, "seedTensor": _SEED, "offsetTensor": _SEED},
          check=_inplace_normal_tensor_check)
def inplace_normal_tensor(selfRef: np.ndarray, mean: float, std: float, seedTensor: np.ndarray,
                          offsetTensor: np.ndarray, offset: int) -> None:
    """selfRef = mean + std N(0, 1), drawn from seedTensor's seed, offsetTensor's value plus
    offset."""
    _fill_normal(selfRef, mean, std, _from_tensors(seedTensor, offsetTensor, offset))


def _normal_out(mean: Any, std: Any, rng: np.random.Generator, out: np.ndarray) -> None:
    """out = mean + std N(0, 1), mean and std numbers or tensors broadcast to out."""
    if out.size == 0:
        return
    dtype = _compute(out.dtype)
    values = standard_normal(rng, out.size, dtype).reshape(out.shape)
    values *= np.asarray(std, dtype)
    values += np.asarray(mean, dtype)
    store(out, values)


def _broadcast_out_check(out: np.ndarray, **tensors: Any) -> None:
    """random/stateless_random_normal_v2/op_api/aclnn_normal_out.cpp:
    CheckTensorAndFloatShapeOfMean / CheckTensorAndTensorShape: the tensors broadcast to out's
    shape exactly; at most 8 dimensions."""
    shapes = [value.shape for value in tensors.values()]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{' and '.join(tensors)} do not broadcast: shapes "
                         f"{', '.join(str(list(s)) for s in shapes)}") from None
    if shape != out.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be {list(shape)}, the "
                         f"broadcast shape of {' and '.join(tensors)}")
    _rank_check(out=out, **tensors)


def _normal_float_tensor_check(mean: float, std: np.ndarray, seed: int, offset: int,
                               out: np.ndarray) -> None:
    """aclnn_normal_out.cpp: CheckFloatAndTensorShapeOfStd: std not empty and of out's shape
    (unless out is empty and std has one element)."""
    if std.size == 0:
        raise ValueError("std is an empty tensor: it must not be")
    if not (out.size == 0 and std.size == 1) and std.shape != out.shape:
        raise ValueError(f"std has shape {list(std.shape)}: it must be out's shape "
                         f"{list(out.shape)}")
    _rank_check(std=std, out=out)


@register("aclnnNormalFloatFloat", dtypes={"out": _FLOATS},
          check=lambda mean, std, seed, offset, out: _rank_check(out=out))
def normal_float_float(mean: float, std: float, seed: int, offset: int, out: np.ndarray) -> None:
    """out = mean + std N(0, 1)."""
    _normal_out(mean, std, generator(seed, offset), out)


@register("aclnnNormalFloatTensor", dtypes={"std": _FLOATS, "out": _FLOATS},
          check=_normal_float_tensor_check)
def normal_float_tensor(mean: float, std: np.ndarray, seed: int, offset: int,
                        out: np.ndarray) -> None:
    """out = mean + std N(0, 1), std a tensor."""
    _normal_out(mean, std.astype(np.float64), generator(seed, offset), out)


@register("aclnnNormalTensorFloat", dtypes={"mean": _FLOATS, "out": _FLOATS},
          check=lambda mean, std, seed, offset, out: _broadcast_out_check(out, mean=mean))
def normal_tensor_float(mean: np.ndarray, std: float, seed: int, offset: int,
                        out: np.ndarray) -> None:
    """out = mean + std N(0, 1), mean a tensor."""
    _normal_out(mean.astype(np.float64), std, generator(seed, offset), out)


@register("aclnnNormalTensorTensor", dtypes={"mean": _FLOATS, "std": _FLOATS, "out": _FLOATS},
          check=lambda mean, std, seed, offset, out: _broadcast_out_check(out, mean=mean,
                                                                          std=std))
def normal_tensor_tensor(mean: np.ndarray, std: np.ndarray, seed: int, offset: int,
                         out: np.ndarray) -> None:
    """out = mean + std N(0, 1), mean and std tensors broadcast to out."""
    _normal_out(mean.astype(np.float64), std.astype(np.float64), generator(seed, offset), out)


# ---- uniform and random integers ------------------------------------------------------------


def _uniform_check(**values: Any) -> None:
    """random/dsa_random_uniform/op_host/op_api/aclnn_uniform.cpp: CheckParams: from <= to;
    selfRef of at most 8 dimensions."""
    low, high = values["from"], values["to"]
    if low > high:
        raise ValueError(f"from ({low}) is greater than to ({high}): it must not be")
    _rank_check(selfRef=values["selfRef"])
    if "seedTensor" in values:
        _seed_tensors_check(values["seedTensor"], values["offsetTensor"], unsigned=True)


def _below(high: float, dtype: np.dtype) -> Any:
    """The largest value of the 16-bit float ``dtype`` below ``high``."""
    value = np.asarray(high, np.float32).astype(dtype)
    if float(value) < high:
        return value
    bits = value.view(np.uint16)
    if float(value) > 0:
        return (bits - np.uint16(1)).view(dtype)
    if float(value) == 0:
        return np.asarray(0x8001, np.uint16).view(dtype)
    return (bits + np.uint16(1)).view(dtype)


def _fill_uniform(target: np.ndarray, low: float, high: float,
                  rng: np.random.Generator) -> None:
    """target = from + (to - from) U[0, 1)."""
    if target.size == 0:
        return
    dtype = _compute(target.dtype)
    values = rng.random(target.size, dtype=dtype)
    values *= dtype(high - low)
    values += dtype(low)
    _store_values(target, values)
    if target.dtype.itemsize == 2 and target.dtype.kind not in "iu" and high > low:
        # rounded into a 16-bit float a value just under ``to`` may become ``to``
        np.minimum(target, _below(high, target.dtype), out=target)


@register("aclnnInplaceUniform", dtypes=_UNIFORM_SELF, check=_uniform_check)
def inplace_uniform(**values: Any) -> None:
    """selfRef = U[from, to), drawn from (seed, offset)."""
    _fill_uniform(values["selfRef"], values["from"], values["to"],
                  generator(values["seed"], values["offset"]))


@register("aclnnInplaceUniformTensor",
          dtypes={"selfRef": _UNIFORM_SELF, "seedTensor": _SEED_UNSIGNED,
                  "offsetTensor": _SEED_UNSIGNED},
          check=_uniform_check)
def inplace_uniform_tensor(**values: Any) -> None:
    """selfRef = U[from, to), drawn from seedTensor's seed and offsetTensor's value plus
    offset."""
    _fill_uniform(values["selfRef"], values["from"], values["to"],
                  _from_tensors(values["seedTensor"], values["offsetTensor"], values["offset"]))


def _random_check(**values: Any) -> None:
    """random/dsa_random_uniform/op_host/op_api/aclnn_random.cpp: CheckFromToRange (from <
    to) and CheckShape (at most 8 dimensions)."""
    low, high = values["from"], values["to"]
    if low >= high:
        raise ValueError(f"from ({low}) must be less than to ({high})")
    _rank_check(selfRef=values["selfRef"])
    if "seedTensor" in values:
        _seed_tensors_check(values["seedTensor"], values["offsetTensor"])


def _fill_random(target: np.ndarray, low: int, high: int, rng: np.random.Generator) -> None:
    """target = integers uniform in [from, to), converted to target's dtype."""
    if target.size == 0:
        return
    values = rng.integers(low, high, target.size, dtype=np.int64, endpoint=False)
    store(target, values.reshape(target.shape))


@register("aclnnInplaceRandom", dtypes=_RANDOM_SELF, check=_random_check)
def inplace_random(**values: Any) -> None:
    """selfRef = integers uniform in [from, to), drawn from (seed, offset)."""
    _fill_random(values["selfRef"], values["from"], values["to"],
                 generator(values["seed"], values["offset"]))


@register("aclnnInplaceRandomTensor",
          dtypes={"selfRef": _RANDOM_SELF, "seedTensor": _SEED, "offsetTensor": _SEED},
          check=_random_check)
def inplace_random_tensor(**values: Any) -> None:
    """selfRef = integers uniform in [from, to), drawn from the seed and offset tensors."""
    _fill_random(values["selfRef"], values["from"], values["to"],
                 _from_tensors(values["seedTensor"], values["offsetTensor"], values["offset"]))


# ---- bernoulli ------------------------------------------------------------------------------


def _bernoulli_check(self: np.ndarray, prob: Any, seed: int, offset: int,
                     out: np.ndarray) -> None:
    """random/dsa_gen_bit_mask/op_host/op_api/aclnn_bernoulli.cpp: CheckProb (a scalar prob
    in [0, 1]), CheckShape / CheckShapeTensor (out has self's shape; at most 8 dimensions);
    a prob tensor broadcasts to self's shape."""
    if out.shape != self.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be self's shape "
                         f"{list(self.shape)}")
    if isinstance(prob, np.ndarray):
        if not broadcasts_to(prob.shape, self.shape):
            raise ValueError(f"prob has shape {list(prob.shape)}, which does not broadcast to "
                             f"self's shape {list(self.shape)}")
        _rank_check(self=self, prob=prob)
        return
    value = float(prob)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"prob is {value}: it must be in [0, 1]")
    _rank_check(self=self)


def _bernoulli(self: np.ndarray, prob: Any, seed: int, offset: int, out: np.ndarray) -> None:
    """out = 1 with probability prob, else 0 (U[0, 1) < prob)."""
    if out.size == 0:
        return
    threshold = np.asarray(prob, np.float64)
    if threshold.dtype.kind != "f" or threshold.ndim == 0:
        threshold = np.asarray(float(np.asarray(prob)), np.float64)
    draws = generator(seed, offset).random(out.size).reshape(out.shape)
    store(out, draws < threshold)


@register("aclnnBernoulli", dtypes={"self": _BERNOULLI_SELF, "out": _BERNOULLI_SELF},
          check=_bernoulli_check)
def bernoulli(self: np.ndarray, prob: Any, seed: int, offset: int, out: np.ndarray) -> None:
    """out ~ Bernoulli(prob), prob a scalar."""
    _bernoulli(self, prob, seed, offset, out)


@register("aclnnBernoulliTensor",
          dtypes={"self": _BERNOULLI_SELF, "prob": _BERNOULLI_PROB, "out": _BERNOULLI_SELF},
          check=_bernoulli_check)
def bernoulli_tensor(self: np.ndarray, prob: np.ndarray, seed: int, offset: int,
                     out: np.ndarray) -> None:
    """out ~ Bernoulli(prob), prob a tensor broadcast to self."""
    _bernoulli(self, prob, seed, offset, out)


# ---- dropout --------------------------------------------------------------------------------


def mask_bytes(count: int) -> int:
    """The bytes of a dropout mask of ``count`` elements: whole 128-bit blocks
    (aclnn_dropout_gen_mask.cpp: InferDSAOutShapeV2)."""
    return (count + 127) // 128 * 128 // 8


def _gen_mask_check(shape: tuple[int, ...], prob: float, out: np.ndarray) -> None:
    """aclnn_dropout_gen_mask.cpp: CheckProbability (prob in [0, 1]) and CheckShape (out has
    mask_bytes(prod(shape)) elements)."""
    if not 0.0 <= prob <= 1.0:
        raise ValueError(f"prob is {prob}: it must be in [0, 1]")
    need = mask_bytes(math.prod(shape))
    if out.size != need:
        raise ValueError(f"out has {out.size} elements: it must have {need} (the elements of "
                         "shape in bits, rounded up to whole 128-bit blocks)")


def _gen_mask(shape: tuple[int, ...], prob: float, rng: np.random.Generator,
              out: np.ndarray) -> None:
    """Bit i of the mask kept (1) with probability 1 - prob; the padding bits 0."""
    count = math.prod(shape)
    bits = np.zeros(mask_bytes(count) * 8, np.bool_)
    bits[:count] = rng.random(count) >= prob
    store(out, np.packbits(bits, bitorder="little").reshape(out.shape))


@register("aclnnDropoutGenMask", dtypes={"out": _MASK},
          check=lambda shape, prob, seed, offset, out: _gen_mask_check(shape, prob, out))
def dropout_gen_mask(shape: tuple[int, ...], prob: float, seed: int, offset: int,
                     out: np.ndarray) -> None:
    """A dropout bit mask of prod(shape) elements, each kept with probability 1 - prob."""
    _gen_mask(shape, prob, generator(seed, offset), out)


@register("aclnnDropoutGenMaskV2", dtypes={"out": _MASK},
          check=lambda shape, prob, seed, offset, probDataType, out:
          _gen_mask_check(shape, prob, out))
def dropout_gen_mask_v2(shape: tuple[int, ...], prob: float, seed: int, offset: int,
                        probDataType: Any, out: np.ndarray) -> None:
    """aclnnDropoutGenMask; probDataType only says in which dtype the device compares."""
    _gen_mask(shape, prob, generator(seed, offset), out)


def _gen_mask_tensor_check(shape: tuple[int, ...], prob: float, seedTensor: np.ndarray,
                           offsetTensor: np.ndarray, offset: int, probDataType: Any,
                           out: np.ndarray) -> None:
    _seed_tensors_check(seedTensor, offsetTensor)
    _gen_mask_check(shape, prob, out)


@register("aclnnDropoutGenMaskV2Tensor",
          dtypes={"seedTensor": _SEED, "offsetTensor": _SEED, "out": _MASK},
          check=_gen_mask_tensor_check)
def dropout_gen_mask_v2_tensor(shape: tuple[int, ...], prob: float, seedTensor: np.ndarray,
                               offsetTensor: np.ndarray, offset: int, probDataType: Any,
                               out: np.ndarray) -> None:
    """aclnnDropoutGenMaskV2 with seed and offset read from tensors."""
    _gen_mask(shape, prob, _from_tensors(seedTensor, offsetTensor, offset), out)


def _mask_check(x: np.ndarray, mask: np.ndarray, out: np.ndarray, name: str,
                exact: bool = False) -> None:
    """drop_out_do_mask/op_api/aclnn_dropout_do_mask.cpp: CheckShape (mask has at least
    mask_bytes(x.size) elements; ``exact``: just that many, aclnn_dropout_backward.cpp:
    CheckShape); out has x's shape."""
    need = mask_bytes(x.size)
    if mask.size < need or (exact and mask.size != need):
        raise ValueError(f"mask has {mask.size} elements: it needs {'' if exact else 'at least '}"
                         f"{need} for the {x.size} elements of {name}")
    if out.shape != x.shape:
        raise ValueError(f"out has shape {list(out.shape)}: it must be {name}'s shape "
                         f"{list(x.shape)}")


def _apply_mask(x: np.ndarray, mask: np.ndarray, scale: float, out: np.ndarray) -> None:
    """out = x scale where the mask's bit is set, else 0."""
    if out.size == 0:
        return
    bits = np.unpackbits(np.ascontiguousarray(mask).reshape(-1), count=x.size,
                         bitorder="little").astype(np.bool_).reshape(x.shape)
    dtype = _compute(x.dtype)
    values = x.astype(dtype) * dtype(scale)
    store(out, np.where(bits, values, dtype(0)))


def _do_mask_check(self: np.ndarray, mask: np.ndarray, prob: float, out: np.ndarray) -> None:
    """aclnn_dropout_do_mask.cpp: CheckProbability (prob in [0, 1]) and CheckShape."""
    if not 0.0 <= prob <= 1.0:
        raise ValueError(f"prob is {prob}: it must be in [0, 1]")
    _mask_check(self, mask, out, "self")


@register("aclnnDropoutDoMask", dtypes={"self": _DROPOUT, "mask": _MASK, "out": _DROPOUT},
          check=_do_mask_check)
def dropout_do_mask(self: np.ndarray, mask: np.ndarray, prob: float, out: np.ndarray) -> None:
    """out = self / (1 - prob) where mask keeps the element, else 0 (ops-math
    random/drop_out_do_mask/docs/aclnnDropoutDoMask.md); prob 1 keeps nothing."""
    _apply_mask(self, mask, 1.0 / (1.0 - prob) if prob < 1.0 else 0.0, out)


def _backward_check(gradOutput: np.ndarray, mask: np.ndarray, scale: float,
                    out: np.ndarray) -> None:
    """drop_out_do_mask/op_api/aclnn_dropout_backward.cpp: CheckProbability: p = 1 when
    scale is 0, else 1 - 1 / scale, must be in [0, 1]; CheckShape: out has gradOutput's
    shape, mask exactly mask_bytes(gradOutput.size) elements."""
    p = 1.0 if scale == 0.0 else 1.0 - 1.0 / scale
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"scale is {scale}: 1 - 1 / scale must be in [0, 1] (scale 0 or >= 1)")
    _mask_check(gradOutput, mask, out, "gradOutput", exact=True)


@register("aclnnDropoutBackward",
          dtypes={"gradOutput": _DROPOUT, "mask": _MASK, "out": _DROPOUT},
          check=_backward_check)
def dropout_backward(gradOutput: np.ndarray, mask: np.ndarray, scale: float,
                     out: np.ndarray) -> None:
    """out = scale gradOutput where mask keeps the element, else 0 (ops-math
    random/drop_out_do_mask/docs/aclnnDropoutBackward.md)."""
    _apply_mask(gradOutput, mask, scale, out)


# ---- multinomial and randperm ---------------------------------------------------------------

_MULTINOMIAL_SELF = Dtypes(("float32", "float16", "float64", "bfloat16"))


def _multinomial_check(self: np.ndarray, numsamples: int, replacement: bool,
                       out: np.ndarray) -> None:
    """random/stateless_sample_multinomial/op_api/aclnn_multinomial.cpp: CheckShape (self
    1-d or 2-d, out of self's rank, out's last dimension numsamples, its first self's for
    2-d) and CheckValueRange (numsamples > 0, at most self's categories without
    replacement, at most 2^24 categories); out is int64."""
    if self.ndim not in (1, 2):
        raise ValueError(f"self has {self.ndim} dimensions: it must have 1 or 2")
    if out.ndim != self.ndim:
        raise ValueError(f"out has {out.ndim} dimensions: it must have self's {self.ndim}")
    if out.shape[-1] != numsamples:
        raise ValueError(f"out's last dimension is {out.shape[-1]}: it must be numsamples "
                         f"({numsamples})")
    if self.ndim == 2 and out.shape[0] != self.shape[0]:
        raise ValueError(f"out's first dimension is {out.shape[0]}: it must be self's "
                         f"{self.shape[0]}")
    if numsamples <= 0:
        raise ValueError(f"numsamples is {numsamples}: it must be > 0")
    categories = self.shape[-1]
    if not replacement and numsamples > categories:
        raise ValueError(f"numsamples ({numsamples}) exceeds self's {categories} categories "
                         "without replacement")
    if categories > 1 << 24:
        raise ValueError(f"self has {categories} categories: at most 2^24")
    if out.dtype != np.int64:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be int64")


def _multinomial(self: np.ndarray, numsamples: int, replacement: bool,
                 rng: np.random.Generator, out: np.ndarray) -> None:
    """Indices drawn with probabilities proportional to each row of self: with replacement
    by inverting the rows' cumulative sums, without by the largest numsamples of
    weight / Exp(1) (the exponential race CANN's op_api runs)."""
    if out.size == 0:
        return
    weights = np.atleast_2d(self.astype(np.float64))
    rows, categories = weights.shape
    if replacement:
        totals = np.cumsum(weights, axis=1)
        draws = rng.random((rows, numsamples)) * totals[:, -1:]
        picks = np.empty((rows, numsamples), np.int64)
        for row in range(rows):  # one search per row: rows are few, samples many
            picks[row] = np.searchsorted(totals[row], draws[row], side="right")
        np.minimum(picks, categories - 1, out=picks)
    else:
        keys = weights / rng.standard_exponential((rows, categories))
        picks = np.argsort(-keys, axis=1, kind="stable")[:, :numsamples]
    store(out, picks.reshape(out.shape))


@register("aclnnMultinomial", dtypes={"self": _MULTINOMIAL_SELF},
          check=lambda self, numsamples, replacement, seed, offset, out:
          _multinomial_check(self, numsamples, replacement, out))
def multinomial(self: np.ndarray, numsamples: int, replacement: bool, seed: int, offset: int,
                out: np.ndarray) -> None:
    """numsamples category indices per row of self, drawn from (seed, offset)."""
    _multinomial(self, numsamples, replacement, generator(seed, offset), out)


def _multinomial_tensor_check(self: np.ndarray, numsamples: int, replacement: bool,
                              seedTensor: np.ndarray, offsetTensor: np.ndarray, offset: int,
                              out: np.ndarray) -> None:
    _seed_tensors_check(seedTensor, offsetTensor)
    _multinomial_check(self, numsamples, replacement, out)


@register("aclnnMultinomialTensor",
          dtypes={"self": _MULTINOMIAL_SELF, "seedTensor": _SEED, "offsetTensor": _SEED},
          check=_multinomial_tensor_check)
def multinomial_tensor(self: np.ndarray, numsamples: int, replacement: bool,
                       seedTensor: np.ndarray, offsetTensor: np.ndarray, offset: int,
                       out: np.ndarray) -> None:
    """aclnnMultinomial with seed and offset read from tensors."""
    _multinomial(self, numsamples, replacement,
                 _from_tensors(seedTensor, offsetTensor, offset), out)


# random/stateless_randperm/op_api/aclnn_randperm.cpp: DTYPE_SUPPORT_LIST_2201
_RANDPERM_OUT = Dtypes(("float32", "float16", "int32", "float64", "int64", "int8", "uint8",
                        "int16", "bfloat16"))


def _randperm_check(n: int, seed: int, offset: int, out: np.ndarray) -> None:
    """aclnn_randperm.cpp: CheckParams: out has shape [n] (CheckShapeValid), n >= 0."""
    if out.shape != (n,):
        raise ValueError(f"out has shape {list(out.shape)}: it must be [n] = [{n}]")
    if n < 0:
        raise ValueError(f"n is {n}: it must be >= 0")


@register("aclnnRandperm", dtypes={"out": _RANDPERM_OUT}, check=_randperm_check)
def randperm(n: int, seed: int, offset: int, out: np.ndarray) -> None:
    """A random permutation of 0 .. n - 1, drawn from (seed, offset)."""
    if n:
        store(out, generator(seed, offset).permutation(n).reshape(out.shape))
