"""Normalisation kernels beyond nn.py's: aclnnRmsNorm, aclnnGemmaRmsNorm, aclnnAddRmsNorm,
aclnnInplaceAddRmsNorm, aclnnRmsNormGrad and aclnnAddLayerNorm.

The RMS ones normalise x over gamma's dimensions (x's last ones) by rstd = 1 / sqrt(mean(x^2)
+ eps) and scale by gamma (RmsNorm) or 1 + gamma (GemmaRmsNorm), as ops-nn norm/rms_norm/docs/
aclnnRmsNorm.md and norm/gemma_rms_norm/docs/aclnnGemmaRmsNorm.md define them; AddRmsNorm
first adds x1 and x2 (norm/add_rms_norm/docs/aclnnAddRmsNorm.md). AddLayerNorm adds x1, x2
and a bias and runs nn.py's aclnnLayerNorm computation on the sum. float16 and bfloat16
compute in float32 and round once into each output; rstd and mean outputs are float32."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.dtypes import Dtypes
from . import NO_KERNEL, Refusal, check_output_shapes, store, tensor_format, widen
from .elementwise import BLOCK, FLOATS
from .elementwise import register as builtin
from .nn import _layer_norm_check, group_norm, group_norm_backward, layer_norm, layer_norm_backward

_DTYPES: dict[str, Dtypes] = {"x": FLOATS, "gamma": FLOATS}


def _rms_norm_check(x: np.ndarray, gamma: np.ndarray, epsilon: float, yOut: np.ndarray,
                    rstdOut: np.ndarray) -> None:
    """The shapes of ops-nn norm/rms_norm/docs/aclnnRmsNorm.md (the same in
    norm/gemma_rms_norm/docs/aclnnGemmaRmsNorm.md): gamma is x's last dimensions
    (x_shape[n:], n < x's rank); yOut has x's shape; rstdOut has x's rank, gamma's
    dimensions as ones."""
    count = gamma.ndim
    if count == 0 or count > x.ndim or \
            tuple(x.shape[x.ndim - count:]) != tuple(gamma.shape):
        raise ValueError(f"gamma has shape {gamma.shape}: it must be the last dimensions of x, "
                         f"whose shape is {x.shape}")
    values = {"x": x, "gamma": gamma}  # (aclnnGemmaRmsNorm's rule is the same)
    check_output_shapes("aclnnRmsNorm", values, {"yOut": yOut}, "it must be x's shape")
    check_output_shapes("aclnnRmsNorm", values, {"rstdOut": rstdOut},
                        "it must be (x's leading dimensions, then ones)")
    if rstdOut.dtype != np.float32:
        raise ValueError(f"rstdOut has dtype {rstdOut.dtype.name}: it must be float32")


def _rms_norm(x: Any, gamma: np.ndarray, epsilon: float, yOut: np.ndarray,
              rstdOut: Any, offset: float) -> None:
    """y = x rstd (gamma + offset), rows in cache-sized blocks, float32 for 16-bit inputs."""
    if x.size == 0:
        return
    length = gamma.size
    dtype = np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)
    rows = np.ascontiguousarray(x).reshape(-1, length)  # x: float32 already for AddRmsNorm
    scale = widen(gamma).reshape(-1).astype(dtype) + dtype.type(offset)
    result = np.empty(rows.shape, dtype)
    rstds = np.empty((rows.shape[0], 1), dtype)
    step = max(1, BLOCK // max(length, 1))
    for start in range(0, rows.shape[0], step):
        block = rows[start:start + step].astype(dtype)
        rstd = np.asarray(np.mean(np.square(block), axis=1, keepdims=True, dtype=dtype))
        np.add(rstd, dtype.type(epsilon), out=rstd)
        np.sqrt(rstd, out=rstd)
        np.reciprocal(rstd, out=rstd)
        target = result[start:start + block.shape[0]]
        np.multiply(block, rstd, out=target)
        np.multiply(target, scale, out=target)
        rstds[start:start + block.shape[0]] = rstd
    store(yOut, result.reshape(yOut.shape))
    if rstdOut is not None:
        store(rstdOut, rstds.reshape(rstdOut.shape))


@builtin("aclnnRmsNorm", dtypes=_DTYPES, check=_rms_norm_check)
def rms_norm(x: np.ndarray, gamma: np.ndarray, epsilon: float, yOut: np.ndarray,
             rstdOut: np.ndarray) -> None:
    """x / sqrt(mean(x^2) + epsilon) gamma over gamma's dimensions."""
    _rms_norm(x, gamma, epsilon, yOut, rstdOut, 0.0)


@builtin("aclnnGemmaRmsNorm", dtypes=_DTYPES, check=_rms_norm_check)
def gemma_rms_norm(x: np.ndarray, gamma: np.ndarray, epsilon: float, yOut: np.ndarray,
                   rstdOut: np.ndarray) -> None:
    """x / sqrt(mean(x^2) + epsilon) (1 + gamma) over gamma's dimensions."""
    _rms_norm(x, gamma, epsilon, yOut, rstdOut, 1.0)


def _add_rms_norm_check(x1: np.ndarray, x2: np.ndarray, gamma: np.ndarray, epsilon: float,
                        yOut: np.ndarray, rstdOut: Any, xOut: Any) -> None:
    """ops-nn norm/add_rms_norm/docs/aclnnAddRmsNorm.md: x1, x2, gamma, yOut and xOut have one
    dtype (its table of combinations); x2, yOut and xOut have x1's shape; gamma is x1's last
    dimensions and rstdOut x1's leading ones followed by ones, as for aclnnRmsNorm."""
    for name, value in (("x2", x2), ("gamma", gamma), ("yOut", yOut), ("xOut", xOut)):
        if value is not None and value.dtype != x1.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be x1's dtype "
                             f"{x1.dtype.name}")
    if x2.shape != x1.shape:
        raise ValueError(f"x2 has shape {x2.shape}: it must be x1's shape {x1.shape}")
    count = gamma.ndim
    if count == 0 or count > x1.ndim or tuple(x1.shape[x1.ndim - count:]) != gamma.shape:
        raise ValueError(f"gamma has shape {gamma.shape}: it must be the last dimensions of "
                         f"x1, whose shape is {x1.shape}")
    values = {"x1": x1, "gamma": gamma}  # (aclnnAddRmsNormCast's shapes are the same)
    check_output_shapes("aclnnAddRmsNorm", values, {"xOut": xOut, "yOut": yOut},
                        "it must be x1's shape")
    check_output_shapes("aclnnAddRmsNorm", values, {"rstdOut": rstdOut},
                        "it must be (x1's leading dimensions, then ones)")
    if rstdOut is not None and rstdOut.dtype != np.float32:
        raise ValueError(f"rstdOut has dtype {rstdOut.dtype.name}: it must be float32")


@builtin("aclnnAddRmsNorm", dtypes=FLOATS, check=_add_rms_norm_check)
def add_rms_norm(x1: np.ndarray, x2: np.ndarray, gamma: np.ndarray, epsilon: float,
                 yOut: np.ndarray, rstdOut: Any, xOut: Any) -> None:
    """x = x1 + x2 (into xOut), then aclnnRmsNorm of x."""
    dtype = np.float64 if x1.dtype == np.float64 else np.float32
    x = np.add(x1.astype(dtype), x2.astype(dtype))
    if xOut is not None:
        store(xOut, x)
    _rms_norm(x, gamma, epsilon, yOut, rstdOut, 0.0)


def _inplace_add_rms_norm_check(x1Ref: np.ndarray, x2Ref: np.ndarray, gamma: np.ndarray,
                                epsilon: float, rstdOut: np.ndarray) -> None:
    """aclnnAddRmsNorm's check, x1Ref standing for yOut and x2Ref for xOut (ops-nn
    norm/inplace_add_rms_norm/docs/aclnnInplaceAddRmsNorm.md)."""
    _add_rms_norm_check(x1Ref, x2Ref, gamma, epsilon, x1Ref, rstdOut, x2Ref)


@builtin("aclnnInplaceAddRmsNorm", dtypes=FLOATS, check=_inplace_add_rms_norm_check)
def inplace_add_rms_norm(x1Ref: np.ndarray, x2Ref: np.ndarray, gamma: np.ndarray,
                         epsilon: float, rstdOut: np.ndarray) -> None:
    """x = x1Ref + x2Ref into x2Ref, its RmsNorm into x1Ref, rstd = 1 / Rms(x) into rstdOut
    (the operator's definition in ops-nn norm/inplace_add_rms_norm/op_graph/
    inplace_add_rms_norm_proto.h; the inputs are read before either is written)."""
    add_rms_norm(x1Ref.copy(), x2Ref.copy(), gamma, epsilon, x1Ref, rstdOut, x2Ref)


def _combination(table: frozenset[tuple[str, ...]], names: tuple[str, ...], values: tuple[Any, ...],
                 doc: str) -> None:
    """Refuse a dtype combination outside ``table`` (a doc's table of supported rows; an
    absent optional tensor matches any entry in its column)."""
    given = tuple(None if v is None else v.dtype.name for v in values)
    if not any(all(g is None or g == row for g, row in zip(given, entry)) for entry in table):
        shown = ", ".join(f"{n} {g}" for n, g in zip(names, given) if g is not None)
        raise ValueError(f"the dtypes ({shown}) are not a combination {doc} lists")


def _statistics_shape(x: np.ndarray, count: int) -> tuple[int, ...]:
    return tuple(x.shape[:x.ndim - count]) + (1,) * count


# ---- aclnnAddLayerNorm ----------------------------------------------------------------------

_F, _H, _B = "float32", "float16", "bfloat16"
# ops-nn norm/add_layer_norm/docs/aclnnAddLayerNorm.md, the Atlas A2 table:
# (x1, x2, gamma, beta, biasOptional, yOut, xOut); meanOut and rstdOut float32
_ADD_LAYER_NORM_ROWS = frozenset({
    (_F, _H, _F, _F, _F, _F, _F), (_F, _B, _F, _F, _F, _F, _F), (_H, _F, _F, _F, _F, _F, _F),
    (_B, _F, _F, _F, _F, _F, _F), (_H, _H, _F, _F, _H, _H, _H), (_B, _B, _F, _F, _B, _B, _B),
    (_H, _H, _H, _H, _H, _H, _H), (_B, _B, _B, _B, _B, _B, _B), (_F, _F, _F, _F, _F, _F, _F)})


def _add_layer_norm_check(x1: np.ndarray, x2: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                          biasOptional: Any, epsilon: float, additionalOutput: bool,
                          yOut: np.ndarray, meanOut: np.ndarray, rstdOut: np.ndarray,
                          xOut: np.ndarray) -> None:
    """ops-nn norm/add_layer_norm/docs/aclnnAddLayerNorm.md: the dtype combinations of its
    table; x2, yOut and xOut of x1's shape; gamma and beta x1's last dimensions; biasOptional
    gamma's shape or x1's; meanOut and rstdOut float32, x1's leading dimensions then ones."""
    _combination(_ADD_LAYER_NORM_ROWS,
                 ("x1", "x2", "gamma", "beta", "biasOptional", "yOut", "xOut"),
                 (x1, x2, gamma, beta, biasOptional, yOut, xOut), "aclnnAddLayerNorm's doc")
    for name, value in (("x2", x2), ("yOut", yOut), ("xOut", xOut)):
        if value.shape != x1.shape:
            raise ValueError(f"{name} has shape {value.shape}: it must be x1's shape {x1.shape}")
    count = gamma.ndim
    if count == 0 or count > x1.ndim or tuple(x1.shape[x1.ndim - count:]) != gamma.shape:
        raise ValueError(f"gamma has shape {gamma.shape}: it must be the last dimensions of "
                         f"x1, whose shape is {x1.shape}")
    if beta.shape != gamma.shape:
        raise ValueError(f"beta has shape {beta.shape}: it must be gamma's shape {gamma.shape}")
    if biasOptional is not None and biasOptional.shape not in (gamma.shape, x1.shape):
        raise ValueError(f"biasOptional has shape {biasOptional.shape}: it must be gamma's "
                         f"{gamma.shape} or x1's {x1.shape}")
    expected = _statistics_shape(x1, count)
    for name, value in (("meanOut", meanOut), ("rstdOut", rstdOut)):
        if value.dtype != np.float32 or value.shape != expected:
            raise ValueError(f"{name} is {value.dtype.name} of shape {value.shape}: it must be "
                             f"float32 of shape {expected}")


@builtin("aclnnAddLayerNorm", dtypes=FLOATS, check=_add_layer_norm_check)
def add_layer_norm(x1: np.ndarray, x2: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                   biasOptional: Any, epsilon: float, additionalOutput: bool, yOut: np.ndarray,
                   meanOut: np.ndarray, rstdOut: np.ndarray, xOut: np.ndarray) -> None:
    """x = x1 + x2 + biasOptional in float32 (into xOut with additionalOutput), then
    aclnnLayerNorm's computation of x over gamma's dimensions."""
    x = np.add(x1.astype(np.float32), x2.astype(np.float32))
    if biasOptional is not None:
        np.add(x, widen(biasOptional), out=x)
    if additionalOutput:
        store(xOut, x)
    layer_norm(x, gamma.shape, gamma, beta, epsilon, yOut, meanOut, rstdOut)


# ---- aclnnRmsNormGrad -----------------------------------------------------------------------

# ops-nn norm/rms_norm_grad/docs/aclnnRmsNormGrad.md, the Atlas A2 table:
# (dy, x, rstd, gamma, dxOut, dgammaOut)
_RMS_NORM_GRAD_ROWS = frozenset({
    (_H, _H, _F, _F, _H, _F), (_B, _B, _F, _F, _B, _F), (_H, _H, _F, _H, _H, _F),
    (_F, _F, _F, _F, _F, _F), (_B, _B, _F, _B, _B, _F)})


def _rms_norm_grad_check(dy: np.ndarray, x: np.ndarray, rstd: np.ndarray, gamma: np.ndarray,
                         dxOut: np.ndarray, dgammaOut: np.ndarray) -> None:
    """ops-nn norm/rms_norm_grad/docs/aclnnRmsNormGrad.md: its table's dtype combinations;
    dy and dxOut of x's shape; gamma and dgammaOut x's last dimensions; rstd x's leading
    dimensions (then ones, or left out)."""
    _combination(_RMS_NORM_GRAD_ROWS, ("dy", "x", "rstd", "gamma", "dxOut", "dgammaOut"),
                 (dy, x, rstd, gamma, dxOut, dgammaOut), "aclnnRmsNormGrad's doc")
    for name, value in (("dy", dy), ("dxOut", dxOut)):
        if value.shape != x.shape:
            raise ValueError(f"{name} has shape {value.shape}: it must be x's shape {x.shape}")
    count = gamma.ndim
    if count == 0 or count > x.ndim or tuple(x.shape[x.ndim - count:]) != gamma.shape:
        raise ValueError(f"gamma has shape {gamma.shape}: it must be the last dimensions of x, "
                         f"whose shape is {x.shape}")
    if dgammaOut.shape != gamma.shape:
        raise ValueError(f"dgammaOut has shape {dgammaOut.shape}: it must be gamma's shape "
                         f"{gamma.shape}")
    rows = int(np.prod(x.shape[:x.ndim - count]))
    if rstd.size != rows:
        raise ValueError(f"rstd has shape {rstd.shape}: it must hold one value per row of x, "
                         f"{rows} ({_statistics_shape(x, count)})")


@builtin("aclnnRmsNormGrad", dtypes=FLOATS, check=_rms_norm_grad_check)
def rms_norm_grad(dy: np.ndarray, x: np.ndarray, rstd: np.ndarray, gamma: np.ndarray,
                  dxOut: np.ndarray, dgammaOut: np.ndarray) -> None:
    """dx = rstd (dy gamma - rstd x mean(dy gamma x rstd)); dgamma = sum over rows of
    rstd x dy, in float32, in cache-sized row blocks."""
    length = gamma.size
    if x.size == 0 or length == 0:
        dgammaOut[...] = 0
        return
    rows_x = np.ascontiguousarray(x).reshape(-1, length)
    rows_dy = np.ascontiguousarray(dy).reshape(-1, length)
    rstds = widen(rstd).reshape(-1, 1).astype(np.float32)
    scale = widen(gamma).reshape(-1).astype(np.float32)
    dx = np.empty(rows_x.shape, np.float32)
    dgamma = np.zeros(length, np.float64)
    step = max(1, BLOCK // max(length, 1))
    for start in range(0, rows_x.shape[0], step):
        block_x = rows_x[start:start + step].astype(np.float32)
        rstd_ = rstds[start:start + block_x.shape[0]]
        block_dy = rows_dy[start:start + step].astype(np.float32)
        normalised = block_x * rstd_
        dgamma += np.sum(normalised * block_dy, axis=0, dtype=np.float64)
        weighted = block_dy * scale
        mean = np.mean(weighted * normalised, axis=1, keepdims=True, dtype=np.float32)
        target = dx[start:start + block_x.shape[0]]
        np.multiply(normalised, mean, out=target)
        np.subtract(weighted, target, out=target)
        np.multiply(target, rstd_, out=target)
    store(dxOut, dx.reshape(dxOut.shape))
    store(dgammaOut, dgamma.reshape(dgammaOut.shape))


# ---- aclnnAddLayerNormGrad ------------------------------------------------------------------

def _add_layer_norm_grad_check(dy: np.ndarray, x1: np.ndarray, x2: np.ndarray, rstd: np.ndarray,
                               mean: np.ndarray, gamma: np.ndarray, dsumOptional: Any,
                               dxOut: np.ndarray, dgammaOut: np.ndarray,
                               dbetaOut: np.ndarray) -> None:
    """ops-nn norm/add_layer_norm_grad/docs/aclnnAddLayerNormGrad.md: x1, x2, gamma,
    dsumOptional and dxOut of dy's dtype, x1, x2, dsumOptional and dxOut of its shape; gamma
    dy's last dimensions, dgammaOut and dbetaOut float32 of gamma's shape; mean and rstd
    float32, one value per row; no empty tensor."""
    for name, value in (("x1", x1), ("x2", x2), ("gamma", gamma), ("dsumOptional", dsumOptional),
                        ("dxOut", dxOut)):
        if value is not None and value.dtype != dy.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be dy's dtype "
                             f"{dy.dtype.name}")
    for name, value in (("x1", x1), ("x2", x2), ("dsumOptional", dsumOptional), ("dxOut", dxOut)):
        if value is not None and value.shape != dy.shape:
            raise ValueError(f"{name} has shape {value.shape}: it must be dy's shape {dy.shape}")
    count = gamma.ndim
    if count == 0 or count > dy.ndim or tuple(dy.shape[dy.ndim - count:]) != gamma.shape:
        raise ValueError(f"gamma has shape {gamma.shape}: it must be the last dimensions of "
                         f"dy, whose shape is {dy.shape}")
    rows = int(np.prod(dy.shape[:dy.ndim - count]))
    for name, value in (("rstd", rstd), ("mean", mean)):
        if value.dtype != np.float32 or value.size != rows:
            raise ValueError(f"{name} is {value.dtype.name} of shape {value.shape}: it must be "
                             f"float32 with one value per row of dy ({rows})")
    for name, value in (("dgammaOut", dgammaOut), ("dbetaOut", dbetaOut)):
        if value.dtype != np.float32 or value.shape != gamma.shape:
            raise ValueError(f"{name} is {value.dtype.name} of shape {value.shape}: it must be "
                             f"float32 of gamma's shape {gamma.shape}")
    for name, value in (("dy", dy), ("gamma", gamma)):
        if value.size == 0:
            raise ValueError(f"{name} is empty: aclnnAddLayerNormGrad takes no empty tensor")


@builtin("aclnnAddLayerNormGrad", dtypes=FLOATS, check=_add_layer_norm_grad_check)
def add_layer_norm_grad(dy: np.ndarray, x1: np.ndarray, x2: np.ndarray, rstd: np.ndarray,
                        mean: np.ndarray, gamma: np.ndarray, dsumOptional: Any,
                        dxOut: np.ndarray, dgammaOut: np.ndarray, dbetaOut: np.ndarray) -> None:
    """aclnnLayerNormBackward's computation of x = x1 + x2 (in float32), plus dsumOptional
    added to dx before its one rounding."""
    x = np.add(x1, x2, dtype=np.float32)
    dx = dxOut if dsumOptional is None else np.empty(x.shape, np.float32)
    layer_norm_backward(dy, x, gamma.shape, mean, rstd, gamma, None, (True, True, True), dx,
                        dgammaOut, dbetaOut)
    if dsumOptional is not None:
        np.add(dx, widen(dsumOptional), out=dx)
        store(dxOut, dx)


# ---- aclnnAddRmsNormCast --------------------------------------------------------------------

def _add_rms_norm_cast_check(x1: np.ndarray, x2: np.ndarray, gamma: np.ndarray, epsilon: float,
                             y1Out: np.ndarray, y2Out: np.ndarray, rstdOut: np.ndarray,
                             xOut: np.ndarray) -> None:
    """ops-nn norm/add_rms_norm_cast/docs/aclnnAddRmsNormCast.md: x1 float16 or bfloat16;
    x2, gamma, y2Out and xOut of its dtype; y1Out float32; shapes as aclnnAddRmsNorm's."""
    if x1.dtype.name not in (_H, _B):
        raise ValueError(f"x1 has dtype {x1.dtype.name}: it must be float16 or bfloat16")
    if y1Out.dtype != np.float32:
        raise ValueError(f"y1Out has dtype {y1Out.dtype.name}: it must be float32")
    if y2Out.shape != x1.shape or y2Out.dtype != x1.dtype:
        raise ValueError(f"y2Out is {y2Out.dtype.name} of shape {y2Out.shape}: it must be x1's "
                         f"{x1.dtype.name} of shape {x1.shape}")
    _add_rms_norm_check(x1, x2, gamma, epsilon, _shaped(y1Out, x1.dtype), rstdOut, xOut)


def _shaped(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A zero-strided stand-in of ``array``'s shape in ``dtype`` (for a shape-only check)."""
    return np.broadcast_to(np.zeros((), dtype), array.shape)


@builtin("aclnnAddRmsNormCast", dtypes=FLOATS, check=_add_rms_norm_cast_check)
def add_rms_norm_cast(x1: np.ndarray, x2: np.ndarray, gamma: np.ndarray, epsilon: float,
                      y1Out: np.ndarray, y2Out: np.ndarray, rstdOut: np.ndarray,
                      xOut: np.ndarray) -> None:
    """x = float(x1) + float(x2) (into xOut); y1Out = RmsNorm(x) gamma in float32, y2Out the
    same rounded to x1's dtype."""
    add_rms_norm(x1, x2, gamma, epsilon, y1Out, rstdOut, xOut)
    store(y2Out, y1Out)


# ---- aclnnLayerNormWithImplMode, aclnnFastLayerNorm -----------------------------------------

_IMPL_MODES = (0, 1, 2)  # HIGH_PRECISION, HIGH_PERFORMANCE, KEEP_FP16 (aclnn_layer_norm.cpp)


def _layer_norm_with_impl_mode_check(input: np.ndarray, normalizedShape: tuple[int, ...],
                                     weightOptional: Any, biasOptional: Any, eps: float,
                                     out: np.ndarray, meanOutOptional: Any, rstdOutOptional: Any,
                                     implMode: int) -> None:
    """ops-nn norm/layer_norm_v4/op_host/op_api/aclnn_layer_norm.cpp: aclnnLayerNorm's checks
    (it is aclnnLayerNormWithImplMode with implMode 0), then CheckImplMode: implMode 0, 1 or
    2, and 2 (KEEP_FP16) only with float16 input, weight and bias."""
    _layer_norm_check(input, normalizedShape, weightOptional, biasOptional, eps, out,
                      meanOutOptional, rstdOutOptional)
    if implMode not in _IMPL_MODES:
        raise ValueError(f"implMode is {implMode}: it must be 0, 1 or 2")
    if implMode == 2 and any(v is not None and v.dtype != np.float16
                             for v in (input, weightOptional, biasOptional)):
        raise ValueError("implMode 2 (KEEP_FP16) takes float16 input, weight and bias only")


@builtin("aclnnLayerNormWithImplMode", dtypes=FLOATS, check=_layer_norm_with_impl_mode_check)
def layer_norm_with_impl_mode(input: np.ndarray, normalizedShape: tuple[int, ...],
                              weightOptional: Any, biasOptional: Any, eps: float,
                              out: np.ndarray, meanOutOptional: Any, rstdOutOptional: Any,
                              implMode: int) -> None:
    """aclnnLayerNorm's computation in float32 whatever implMode (the modes trade CANN's
    kernels' speed for precision; the emulator keeps the precise one)."""
    layer_norm(input, normalizedShape, weightOptional, biasOptional, eps, out,
               meanOutOptional, rstdOutOptional)


@builtin("aclnnFastLayerNorm", dtypes=FLOATS, check=_layer_norm_check)
def fast_layer_norm(input: np.ndarray, normalizedShape: tuple[int, ...], weightOptional: Any,
                    biasOptional: Any, eps: float, out: np.ndarray, meanOutOptional: Any,
                    rstdOutOptional: Any) -> None:
    """aclnnLayerNorm's computation (ops-nn norm/layer_norm_v4/op_host/op_api/
    aclnn_fast_layer_norm.cpp checks the same dtypes and shapes)."""
    layer_norm(input, normalizedShape, weightOptional, biasOptional, eps, out,
               meanOutOptional, rstdOutOptional)


# ---- aclnnDeepNorm, aclnnDeepNormGrad -------------------------------------------------------

def _same_dtype_and_shape(reference: str, array: np.ndarray, shape: bool, **tensors: Any) -> None:
    for name, value in tensors.items():
        if value.dtype != array.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be {reference}'s "
                             f"dtype {array.dtype.name}")
        if shape and value.shape != array.shape:
            raise ValueError(f"{name} has shape {value.shape}: it must be {reference}'s shape "
                             f"{array.shape}")


def _norm_parameters_check(x: np.ndarray, gamma: np.ndarray, **statistics: np.ndarray) -> None:
    """gamma is x's last dimensions; each of ``statistics`` float32 with one value per row."""
    count = gamma.ndim
    if count == 0 or count > x.ndim or tuple(x.shape[x.ndim - count:]) != gamma.shape:
        raise ValueError(f"gamma has shape {gamma.shape}: it must be the last dimensions of x, "
                         f"whose shape is {x.shape}")
    rows = int(np.prod(x.shape[:x.ndim - count]))
    for name, value in statistics.items():
        if value.dtype != np.float32 or value.size != rows:
            raise ValueError(f"{name} is {value.dtype.name} of shape {value.shape}: it must be "
                             f"float32 with one value per row of x ({rows})")


def _deep_norm_check(x: np.ndarray, gx: np.ndarray, beta: np.ndarray, gamma: np.ndarray,
                     alpha: float, epsilon: float, meanOut: np.ndarray, rstdOut: np.ndarray,
                     yOut: np.ndarray) -> None:
    """ops-nn norm/deep_norm/docs/aclnnDeepNorm.md: gx, beta, gamma and yOut of x's dtype, gx
    and yOut of its shape, beta gamma's shape, gamma x's last dimensions; meanOut and rstdOut
    float32, x's leading dimensions."""
    _same_dtype_and_shape("x", x, True, gx=gx, yOut=yOut)
    _same_dtype_and_shape("x", x, False, beta=beta, gamma=gamma)
    if beta.shape != gamma.shape:
        raise ValueError(f"beta has shape {beta.shape}: it must be gamma's shape {gamma.shape}")
    _norm_parameters_check(x, gamma, meanOut=meanOut, rstdOut=rstdOut)


@builtin("aclnnDeepNorm", dtypes=FLOATS, check=_deep_norm_check)
def deep_norm(x: np.ndarray, gx: np.ndarray, beta: np.ndarray, gamma: np.ndarray, alpha: float,
              epsilon: float, meanOut: np.ndarray, rstdOut: np.ndarray, yOut: np.ndarray) -> None:
    """aclnnLayerNorm's computation of x' = alpha x + gx, in float32."""
    summed = np.multiply(x, np.float32(alpha), dtype=np.float32)
    np.add(summed, gx, out=summed, dtype=np.float32)
    layer_norm(summed, gamma.shape, gamma, beta, epsilon, yOut, meanOut, rstdOut)


def _deep_norm_grad_check(dy: np.ndarray, x: np.ndarray, gx: np.ndarray, gamma: np.ndarray,
                          mean: np.ndarray, rstd: np.ndarray, alpha: float, dxOut: np.ndarray,
                          dgxOut: np.ndarray, dbetaOut: np.ndarray,
                          dgammaOut: np.ndarray) -> None:
    """ops-nn norm/deep_norm_grad/docs/aclnnDeepNormGrad.md: dy, gx, dxOut and dgxOut of x's
    dtype and shape, gamma of its dtype and x's last dimensions; mean and rstd float32, one
    per row; dbetaOut and dgammaOut float32 of gamma's shape."""
    _same_dtype_and_shape("x", x, True, dy=dy, gx=gx, dxOut=dxOut, dgxOut=dgxOut)
    _same_dtype_and_shape("x", x, False, gamma=gamma)
    _norm_parameters_check(x, gamma, mean=mean, rstd=rstd)
    for name, value in (("dbetaOut", dbetaOut), ("dgammaOut", dgammaOut)):
        if value.dtype != np.float32 or value.shape != gamma.shape:
            raise ValueError(f"{name} is {value.dtype.name} of shape {value.shape}: it must be "
                             f"float32 of gamma's shape {gamma.shape}")


@builtin("aclnnDeepNormGrad", dtypes=FLOATS, check=_deep_norm_grad_check)
def deep_norm_grad(dy: np.ndarray, x: np.ndarray, gx: np.ndarray, gamma: np.ndarray,
                   mean: np.ndarray, rstd: np.ndarray, alpha: float, dxOut: np.ndarray,
                   dgxOut: np.ndarray, dbetaOut: np.ndarray, dgammaOut: np.ndarray) -> None:
    """aclnnLayerNormBackward's computation of x' = alpha x + gx: dgx its input gradient,
    dx = alpha dgx, dbeta and dgamma its parameters' (in float32)."""
    if x.size == 0:
        dbetaOut[...] = 0
        dgammaOut[...] = 0
        return
    summed = np.multiply(x, np.float32(alpha), dtype=np.float32)
    np.add(summed, gx, out=summed, dtype=np.float32)
    dgx = dgxOut if dgxOut.dtype == np.float32 else np.empty(summed.shape, np.float32)
    layer_norm_backward(dy, summed, gamma.shape, mean, rstd, gamma, None, (True, True, True),
                        dgx, dgammaOut, dbetaOut)
    if dgx is not dgxOut:
        store(dgxOut, dgx)
    np.multiply(dgx, np.float32(alpha), out=summed)
    store(dxOut, summed)


# ---- aclnnGroupNormSilu(V2), aclnnGroupNormSwish(Grad) --------------------------------------

def _group_statistics_check(x: np.ndarray, gamma: Any, beta: Any, group: int, name: str,
                            **statistics: Any) -> None:
    """The shape rules of ops-nn norm/group_norm_silu/op_host/op_api/aclnn_group_norm_silu.cpp
    (CheckShape, CheckAttr; group_norm_swish's doc states the same): x of 2 to 8 dimensions,
    N and C above 0, C divisible by the group count (above 0); gamma and beta 1-d of C, of
    one dtype, x's or float32; each statistic (N, group)."""
    if not 2 <= x.ndim <= 8:
        raise ValueError(f"{name} has {x.ndim} dimensions: it must have 2 to 8")
    if group <= 0:
        raise ValueError(f"the group count is {group}: it must be greater than 0")
    if x.shape[0] <= 0 or x.shape[1] <= 0:
        raise ValueError(f"{name} has shape {x.shape}: its N and C must be greater than 0")
    if x.shape[1] % group:
        raise ValueError(f"{name}'s channels ({x.shape[1]}) must be divisible by the group "
                         f"count {group}")
    for label, value in (("gamma", gamma), ("beta", beta)):
        if value is not None and (value.ndim != 1 or value.shape[0] != x.shape[1]):
            raise ValueError(f"{label} has shape {value.shape}: it must be 1-d of {name}'s "
                             f"{x.shape[1]} channels")
        if value is not None and value.dtype not in (x.dtype, np.float32):
            raise ValueError(f"{label} has dtype {value.dtype.name}: it must be {name}'s "
                             f"{x.dtype.name} or float32")
    if gamma is not None and beta is not None and gamma.dtype != beta.dtype:
        raise ValueError(f"gamma ({gamma.dtype.name}) and beta ({beta.dtype.name}) must have "
                         "one dtype")
    for label, value in statistics.items():
        if value is not None and value.size != x.shape[0] * group:
            raise ValueError(f"{label} has shape {value.shape}: it must be (N, group) = "
                             f"({x.shape[0]}, {group})")


def _group_norm_silu_check(self: np.ndarray, gamma: Any, beta: Any, group: int, eps: float,
                           out: np.ndarray, meanOut: np.ndarray, rstdOut: np.ndarray,
                           activateSilu: bool = True) -> None:
    """ops-nn norm/group_norm_silu/op_host/op_api/aclnn_group_norm_silu.cpp CheckParams on
    the Atlas A2: CheckDtypeValid (out, meanOut and rstdOut of self's dtype; a float32 self
    takes float32 gamma and beta), CheckShape, CheckAttr (eps above 0)."""
    for name, value in (("out", out), ("meanOut", meanOut), ("rstdOut", rstdOut)):
        if value.dtype != self.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be self's dtype "
                             f"{self.dtype.name}")
    if self.dtype == np.float32:
        for name, value in (("gamma", gamma), ("beta", beta)):
            if value is not None and value.dtype != np.float32:
                raise ValueError(f"{name} has dtype {value.dtype.name}: a float32 self takes "
                                 "float32 only")
    if out.shape != self.shape:
        raise ValueError(f"out has shape {out.shape}: it must be self's shape {self.shape}")
    if self.ndim < 2 or self.ndim > 8:
        raise ValueError(f"self has {self.ndim} dimensions: it must have 2 to 8")
    if self.size == 0:
        if group <= 0 or not eps > 0:
            raise ValueError("group and eps must be greater than 0")
        return
    _group_statistics_check(self, gamma, beta, group, "self", meanOut=meanOut,
                            rstdOut=rstdOut)
    if not eps > 0:
        raise ValueError(f"eps is {eps}: it must be greater than 0")


def _group_norm_act(x: np.ndarray, gamma: Any, beta: Any, group: int, eps: float, out: Any,
                    meanOut: Any, rstdOut: Any, scale: float | None) -> None:
    """nn.py's aclnnGroupNorm computation into float32, then y / (1 + e^(-scale y)) when
    scale is given, rounded once into out."""
    if x.size == 0:
        group_norm(x, gamma, beta, 0, 0, 0, group, eps, out, meanOut, rstdOut)
        return
    n, c = x.shape[0], x.shape[1]
    y = np.empty(x.shape, np.float32 if x.dtype != np.float64 else np.float64)
    group_norm(x, gamma, beta, n, c, x.size // (n * c), group, eps, y, meanOut, rstdOut)
    if scale is not None:
        activated = np.multiply(y, y.dtype.type(-scale))
        np.exp(activated, out=activated)
        activated += 1
        np.divide(y, activated, out=y)
    store(out, y)


@builtin("aclnnGroupNormSilu", dtypes=FLOATS, check=_group_norm_silu_check)
def group_norm_silu(self: np.ndarray, gamma: Any, beta: Any, group: int, eps: float,
                    out: np.ndarray, meanOut: np.ndarray, rstdOut: np.ndarray) -> None:
    """silu(GroupNorm(self)): meanOut 0 and rstdOut NaN for an empty self (the op_api)."""
    _group_norm_act(self, gamma, beta, group, eps, out, meanOut, rstdOut, 1.0)


@builtin("aclnnGroupNormSiluV2", dtypes=FLOATS, check=_group_norm_silu_check)
def group_norm_silu_v2(self: np.ndarray, gamma: Any, beta: Any, group: int, eps: float,
                       activateSilu: bool, out: np.ndarray, meanOut: np.ndarray,
                       rstdOut: np.ndarray) -> None:
    """aclnnGroupNormSilu, the silu only with activateSilu."""
    _group_norm_act(self, gamma, beta, group, eps, out, meanOut, rstdOut,
                    1.0 if activateSilu else None)


def _group_norm_swish_check(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, numGroups: int,
                            dataFormatOptional: Any, eps: float, activateSwish: bool,
                            swishScale: float, yOut: np.ndarray, meanOut: np.ndarray,
                            rstdOut: np.ndarray) -> None:
    """ops-nn norm/group_norm_swish/docs/aclnnGroupNormSwish.md: no empty tensor; x of 2 to
    8 dimensions, N and C above 0, C divisible by numGroups; gamma and beta of C elements,
    one dtype, x's or float32; yOut x's dtype and shape; meanOut and rstdOut gamma's dtype,
    (N, numGroups)."""
    if x.size == 0:
        raise ValueError("x is empty: aclnnGroupNormSwish takes no empty tensor")
    _group_statistics_check(x, gamma, beta, numGroups, "x", meanOut=meanOut, rstdOut=rstdOut)
    if yOut.dtype != x.dtype or yOut.shape != x.shape:
        raise ValueError(f"yOut is {yOut.dtype.name} of shape {yOut.shape}: it must be x's "
                         f"{x.dtype.name} of shape {x.shape}")
    for name, value in (("meanOut", meanOut), ("rstdOut", rstdOut)):
        if value.dtype != gamma.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be gamma's dtype "
                             f"{gamma.dtype.name}")


@builtin("aclnnGroupNormSwish", dtypes=FLOATS, check=_group_norm_swish_check)
def group_norm_swish(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, numGroups: int,
                     dataFormatOptional: Any, eps: float, activateSwish: bool,
                     swishScale: float, yOut: np.ndarray, meanOut: np.ndarray,
                     rstdOut: np.ndarray) -> None:
    """GroupNorm(x), then y / (1 + e^(-swishScale y)) with activateSwish."""
    _group_norm_act(x, gamma, beta, numGroups, eps, yOut, meanOut, rstdOut,
                    swishScale if activateSwish else None)


def _group_norm_swish_grad_check(dy: np.ndarray, mean: np.ndarray, rstd: np.ndarray,
                                 x: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                                 numGroups: int, dataFormatOptional: Any, swishScale: float,
                                 dgammaIsRequire: bool, dbetaIsRequire: bool,
                                 dxOut: np.ndarray, dgammaOut: Any, dbetaOut: Any) -> None:
    """ops-nn norm/group_norm_swish_grad/docs/aclnnGroupNormSwishGrad.md: no empty tensor;
    x and dxOut of dy's dtype and shape; gamma and beta C elements; mean and rstd gamma's
    dtype, (N, numGroups); dgammaOut and dbetaOut C elements of gamma's dtype."""
    if dy.size == 0:
        raise ValueError("dy is empty: aclnnGroupNormSwishGrad takes no empty tensor")
    _same_dtype_and_shape("dy", dy, True, x=x, dxOut=dxOut)
    _group_statistics_check(dy, gamma, beta, numGroups, "dy", mean=mean, rstd=rstd)
    for name, value in (("mean", mean), ("rstd", rstd), ("dgammaOut", dgammaOut),
                        ("dbetaOut", dbetaOut)):
        if value is not None and value.dtype != gamma.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be gamma's dtype "
                             f"{gamma.dtype.name}")
    for name, value in (("dgammaOut", dgammaOut), ("dbetaOut", dbetaOut)):
        if value is not None and value.size != dy.shape[1]:
            raise ValueError(f"{name} has shape {value.shape}: it must hold dy's "
                             f"{dy.shape[1]} channels")


@builtin("aclnnGroupNormSwishGrad", dtypes=FLOATS, check=_group_norm_swish_grad_check)
def group_norm_swish_grad(dy: np.ndarray, mean: np.ndarray, rstd: np.ndarray, x: np.ndarray,
                          gamma: np.ndarray, beta: np.ndarray, numGroups: int,
                          dataFormatOptional: Any, swishScale: float, dgammaIsRequire: bool,
                          dbetaIsRequire: bool, dxOut: np.ndarray, dgammaOut: Any,
                          dbetaOut: Any) -> None:
    """With z = xhat gamma + beta and s = sigmoid(swishScale z): the swish's gradient
    dy s (1 + swishScale z (1 - s)) goes through nn.py's aclnnGroupNormBackward."""
    n, c = x.shape[0], x.shape[1]
    width = x.size // (n * c)
    xs = widen(x).reshape(n, numGroups, -1)
    normalised = ((xs - widen(mean).reshape(n, numGroups, 1))
                  * widen(rstd).reshape(n, numGroups, 1)).reshape(n, c, width)
    z = normalised * widen(gamma).reshape(1, c, 1) + widen(beta).reshape(1, c, 1)
    s = 1 / (1 + np.exp(-np.float32(swishScale) * z))
    grad = widen(dy).reshape(n, c, width) * s * (1 + np.float32(swishScale) * z * (1 - s))
    dx = np.empty(x.shape, np.float32)
    dgamma = np.empty(c, np.float32)
    dbeta = np.empty(c, np.float32)
    group_norm_backward(grad.reshape(x.shape), x, mean, rstd, gamma, n, c, width, numGroups,
                        (True, True, True), dx, dgamma, dbeta)
    store(dxOut, dx)
    if dgammaIsRequire and dgammaOut is not None:
        store(dgammaOut, dgamma.reshape(dgammaOut.shape))
    if dbetaIsRequire and dbetaOut is not None:
        store(dbetaOut, dbeta.reshape(dbetaOut.shape))


# ---- aclnnRenorm (aclnnInplaceRenorm in inplace.py) -----------------------------------------

def _renorm_check(self: np.ndarray, p: Any, dim: int, maxNorm: Any, out: np.ndarray) -> None:
    """ops-nn norm/renorm/op_api/aclnn_renorm.cpp: CheckDtypeValid (out of self's dtype),
    CheckRenormShape (2 to 8 dimensions, out of self's shape), CheckValue (p and maxNorm not
    negative, dim in [-rank, rank - 1])."""
    if out.dtype != self.dtype:
        raise ValueError(f"out has dtype {out.dtype.name}: it must be self's dtype "
                         f"{self.dtype.name}")
    if not 2 <= self.ndim <= 8:
        raise ValueError(f"self has {self.ndim} dimensions: it must have 2 to 8")
    if out.shape != self.shape:
        raise ValueError(f"out has shape {out.shape}: it must be self's shape {self.shape}")
    if float(p) < 0:
        raise ValueError(f"p is {float(p)}: it must not be negative")
    if not -self.ndim <= dim < self.ndim:
        raise ValueError(f"dim is {dim}: it must be in [{-self.ndim}, {self.ndim - 1}]")
    if float(maxNorm) < 0:
        raise ValueError(f"maxNorm is {float(maxNorm)}: it must not be negative")


@builtin("aclnnRenorm", dtypes=FLOATS, check=_renorm_check)
def renorm(self: np.ndarray, p: Any, dim: int, maxNorm: Any, out: np.ndarray) -> None:
    """Each slice along dim scaled by min(n, maxNorm) / n, n = max(its p-norm, eps), eps 1e-7
    for float16 and 1e-12 otherwise, the factor rounded to out's dtype (ops-nn norm/renorm/
    op_kernel/arch35/renorm_dag.h, op_host/arch35/renorm_tiling_arch35.cpp); PyTorch scales
    by maxNorm / (n + 1e-7) past maxNorm, the same within rounding."""
    if self.size == 0:
        return
    x = widen(self)
    axes = tuple(a for a in range(x.ndim) if a != dim % x.ndim)
    order = float(p)
    magnitude = np.abs(x)
    if order == np.inf:
        norms = np.max(magnitude, axis=axes, keepdims=True)
    elif order == 0:
        norms = np.sum(magnitude != 0, axis=axes, keepdims=True, dtype=x.dtype)
    elif order == 1:
        norms = np.sum(magnitude, axis=axes, keepdims=True)
    elif order == 2:
        norms = np.sqrt(np.sum(np.square(magnitude), axis=axes, keepdims=True))
    else:
        norms = np.power(np.sum(np.power(magnitude, x.dtype.type(order)), axis=axes,
                                keepdims=True), x.dtype.type(1 / order))
    eps = x.dtype.type(1e-7 if self.dtype == np.float16 else 1e-12)
    norms = np.maximum(norms, eps)
    factor = np.minimum(norms, x.dtype.type(float(maxNorm))) / norms
    factor = widen(factor.astype(out.dtype))
    store(out, x * factor)


def _embedding_renorm_check(selfRef: np.ndarray, indices: np.ndarray, maxNorm: float,
                            normType: float) -> None:
    """ops-nn norm/renorm/op_api/aclnn_embedding_renorm.cpp CheckParams: indices int32 or
    int64 of at most 8 dimensions, selfRef 2-d (CheckSelfDim)."""
    if indices.dtype not in (np.int32, np.int64):
        raise ValueError(f"indices has dtype {indices.dtype.name}: it must be int32 or int64")
    if selfRef.ndim != 2:
        raise ValueError(f"selfRef has {selfRef.ndim} dimensions: it must have 2")
    if indices.ndim > 8:
        raise ValueError(f"indices has {indices.ndim} dimensions: at most 8")


@builtin("aclnnEmbeddingRenorm", dtypes={"selfRef": FLOATS}, check=_embedding_renorm_check)
def embedding_renorm(selfRef: np.ndarray, indices: np.ndarray, maxNorm: float,
                     normType: float) -> None:
    """The rows of selfRef that indices name, each renormed as aclnnRenorm does (its
    normType-norm brought down to maxNorm; a NaN maxNorm is infinity), written back (the
    op_api's GatherV2, Renorm, Mul and ScatterUpdate)."""
    if selfRef.size == 0 or indices.size == 0:
        return
    rows = np.asarray(indices).reshape(-1).astype(np.int64)
    if rows.min() < -selfRef.shape[0] or rows.max() >= selfRef.shape[0]:
        raise IndexError(f"indices hold {rows.min()}..{rows.max()}: selfRef has "
                         f"{selfRef.shape[0]} rows")
    limit = np.inf if np.isnan(maxNorm) else maxNorm
    gathered = selfRef[rows]
    result = np.empty_like(gathered)
    renorm(gathered, np.float32(normType), 0, np.float32(limit), result)
    selfRef[rows] = result


# ---- aclnnAdaLayerNorm, aclnnAdaLayerNormV2 -------------------------------------------------

def _ada_layer_norm_check(x: np.ndarray, scale: np.ndarray, shift: np.ndarray,
                          weightOptional: Any, biasOptional: Any, epsilon: float,
                          out: np.ndarray, meanOutOptional: Any = None,
                          rstdOutOptional: Any = None, v2: bool = False) -> None:
    """ops-nn norm/ada_layer_norm/op_host/op_api/aclnn_ada_layer_norm.cpp (and ada_layer_norm_v2's
    copy, useV2): CheckDtypeValid (scale, shift, out and the statistics of x's dtype; weight
    and bias one dtype, x's, or float32 in V2) and CheckShape (x of 2 to 8 dimensions (B...,
    S, H), none 0; scale and shift (B..., 1, H) or (B..., H); weight and bias (H); out x's
    shape; the statistics x's with H as 1)."""
    for name, value in (("scale", scale), ("shift", shift), ("out", out),
                        ("meanOutOptional", meanOutOptional),
                        ("rstdOutOptional", rstdOutOptional)):
        if value is not None and value.dtype != x.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be x's dtype "
                             f"{x.dtype.name}")
    if weightOptional is not None and biasOptional is not None and \
            weightOptional.dtype != biasOptional.dtype:
        raise ValueError("weightOptional and biasOptional must have one dtype")
    for name, value in (("weightOptional", weightOptional), ("biasOptional", biasOptional)):
        if value is not None and value.dtype != x.dtype and not (v2 and value.dtype == np.float32):
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be x's dtype "
                             f"{x.dtype.name}" + (" or float32" if v2 else ""))
    if not 2 <= x.ndim <= 8:
        raise ValueError(f"x has {x.ndim} dimensions: it must have 2 to 8")
    if 0 in x.shape:
        raise ValueError(f"x has shape {x.shape}: its sizes must be greater than 0")
    lead, h = tuple(x.shape[:-2]), x.shape[-1]
    for name, value in (("scale", scale), ("shift", shift)):
        if value.shape not in (lead + (1, h), lead + (h,)):
            raise ValueError(f"{name} has shape {value.shape}: it must be {lead + (1, h)} or "
                             f"{lead + (h,)}")
    for name, value in (("weightOptional", weightOptional), ("biasOptional", biasOptional)):
        if value is not None and value.shape != (h,):
            raise ValueError(f"{name} has shape {value.shape}: it must be ({h},)")
    if out.shape != x.shape:
        raise ValueError(f"out has shape {out.shape}: it must be x's shape {x.shape}")
    statistics = x.shape[:-1] + (1,)
    for name, value in (("meanOutOptional", meanOutOptional),
                        ("rstdOutOptional", rstdOutOptional)):
        if value is not None and value.shape != statistics:
            raise ValueError(f"{name} has shape {value.shape}: it must be {statistics}")


def _ada_layer_norm(x: np.ndarray, scale: np.ndarray, shift: np.ndarray, weight: Any,
                    bias: Any, epsilon: float, out: np.ndarray, mean_out: Any,
                    rstd_out: Any) -> None:
    """LayerNorm(x) over the last dimension (aclnnLayerNorm's computation) in float32, then
    (1 + scale) and + shift broadcast over S, rounded once."""
    y = np.empty(x.shape, np.float32)
    layer_norm(x, (x.shape[-1],), weight, bias, epsilon, y, mean_out, rstd_out)
    view = x.shape[:-2] + (1, x.shape[-1])
    y *= widen(scale).reshape(view) + np.float32(1)
    y += widen(shift).reshape(view)
    store(out, y)


@builtin("aclnnAdaLayerNorm", dtypes=FLOATS, check=_ada_layer_norm_check)
def ada_layer_norm(x: np.ndarray, scale: np.ndarray, shift: np.ndarray, weightOptional: Any,
                   biasOptional: Any, epsilon: float, out: np.ndarray) -> None:
    """LayerNorm(x) (1 + scale) + shift."""
    _ada_layer_norm(x, scale, shift, weightOptional, biasOptional, epsilon, out, None, None)


def _ada_layer_norm_v2_check(x: np.ndarray, scale: np.ndarray, shift: np.ndarray,
                             weightOptional: Any, biasOptional: Any, epsilon: float,
                             out: np.ndarray, meanOutOptional: Any,
                             rstdOutOptional: Any) -> None:
    _ada_layer_norm_check(x, scale, shift, weightOptional, biasOptional, epsilon, out,
                          meanOutOptional, rstdOutOptional, True)


@builtin("aclnnAdaLayerNormV2", dtypes=FLOATS, check=_ada_layer_norm_v2_check)
def ada_layer_norm_v2(x: np.ndarray, scale: np.ndarray, shift: np.ndarray, weightOptional: Any,
                      biasOptional: Any, epsilon: float, out: np.ndarray, meanOutOptional: Any,
                      rstdOutOptional: Any) -> None:
    """aclnnAdaLayerNorm, with the mean and rstd of each row written out."""
    _ada_layer_norm(x, scale, shift, weightOptional, biasOptional, epsilon, out,
                    meanOutOptional, rstdOutOptional)


def _ada_layer_norm_backward_check(gradOut: np.ndarray, input: np.ndarray,
                                   normalizedShape: tuple[int, ...], rstd: np.ndarray,
                                   mean: np.ndarray, scale: np.ndarray, shift: np.ndarray,
                                   weightOptional: Any, biasOptional: Any, gradInputOut: Any,
                                   gradScaleOut: Any, gradShiftOut: Any, gradWeightOut: Any,
                                   gradBiasOut: Any) -> None:
    """ops-nn norm/ada_layer_norm_grad/op_host/op_api/aclnn_ada_layer_norm_backward.cpp:
    CheckDtype (input, rstd, mean, scale and shift of gradOut's dtype; weight and bias one
    dtype, input's or float32; each gradient of its tensor's dtype, gradWeightOut and
    gradBiasOut of weight's (or bias's, or input's or float32)), CheckShapeEqual
    (normalizedShape input's last dimensions), the scale and shift shapes of
    aclnnAdaLayerNorm, mean and rstd one value per row."""
    _ada_layer_norm_backward_dtype_check(gradOut, input, rstd, mean, scale, shift,
                                         weightOptional, biasOptional, gradInputOut,
                                         gradScaleOut, gradShiftOut, gradWeightOut, gradBiasOut)
    _ada_layer_norm_backward_shape_check(gradOut, input, normalizedShape, rstd, mean, scale,
                                         shift, gradInputOut, gradScaleOut, gradShiftOut,
                                         gradWeightOut, gradBiasOut)


def _ada_layer_norm_backward_dtype_check(gradOut: np.ndarray, input: np.ndarray,
                                         rstd: np.ndarray, mean: np.ndarray, scale: np.ndarray,
                                         shift: np.ndarray, weightOptional: Any,
                                         biasOptional: Any, gradInputOut: Any,
                                         gradScaleOut: Any, gradShiftOut: Any,
                                         gradWeightOut: Any, gradBiasOut: Any) -> None:
    """CheckDtype: input, rstd, mean, scale and shift of gradOut's dtype; weight and bias of
    input's dtype or float32, and one dtype together; each gradient given of its tensor's
    dtype, gradWeightOut and gradBiasOut of weight's (or bias's; without either, input's
    dtype or float32)."""
    for name, value in (("input", input), ("rstd", rstd), ("mean", mean), ("scale", scale),
                        ("shift", shift)):
        if value.dtype != gradOut.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be gradOut's dtype "
                             f"{gradOut.dtype.name}")
    for name, value in (("weightOptional", weightOptional), ("biasOptional", biasOptional)):
        if value is not None and value.dtype not in (input.dtype, np.float32):
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be input's dtype "
                             f"{input.dtype.name} or float32")
    if weightOptional is not None and biasOptional is not None and \
            weightOptional.dtype != biasOptional.dtype:
        raise ValueError("weightOptional and biasOptional must have one dtype")
    parameters = weightOptional if weightOptional is not None else biasOptional
    for name, value, like in (("gradInputOut", gradInputOut, input),
                              ("gradScaleOut", gradScaleOut, scale),
                              ("gradShiftOut", gradShiftOut, shift),
                              ("gradWeightOut", gradWeightOut, parameters),
                              ("gradBiasOut", gradBiasOut, parameters)):
        if value is None:
            continue
        if like is None:
            if value.dtype not in (input.dtype, np.float32):
                raise ValueError(f"{name} has dtype {value.dtype.name}: it must be input's "
                                 "dtype or float32")
        elif value.dtype != like.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be "
                             f"{like.dtype.name}")


def _ada_layer_norm_backward_shape_check(gradOut: np.ndarray, input: np.ndarray,
                                         normalizedShape: tuple[int, ...], rstd: np.ndarray,
                                         mean: np.ndarray, scale: np.ndarray,
                                         shift: np.ndarray, gradInputOut: Any,
                                         gradScaleOut: Any, gradShiftOut: Any,
                                         gradWeightOut: Any, gradBiasOut: Any) -> None:
    """The shapes: CheckShapeEqual (normalizedShape input's last dimensions, gradOut input's
    shape), input of 2 to 8 dimensions and not empty, the scale and shift shapes of
    aclnnAdaLayerNorm, mean and rstd one value per row; each gradient given of its tensor's
    shape, gradWeightOut and gradBiasOut one value per element of input's last dimension."""
    count = len(normalizedShape)
    if count == 0 or count > input.ndim or \
            tuple(input.shape[input.ndim - count:]) != tuple(normalizedShape):
        raise ValueError(f"normalizedShape {list(normalizedShape)} must be input's last "
                         f"dimensions, whose shape is {input.shape}")
    _same_dtype_and_shape("input", input, True, gradOut=gradOut)
    if not 2 <= input.ndim <= 8 or 0 in input.shape:
        raise ValueError(f"input has shape {input.shape}: 2 to 8 dimensions, none 0")
    lead, h = tuple(input.shape[:-2]), input.shape[-1]
    for name, value in (("scale", scale), ("shift", shift)):
        if value.shape not in (lead + (1, h), lead + (h,)):
            raise ValueError(f"{name} has shape {value.shape}: it must be {lead + (1, h)} or "
                             f"{lead + (h,)}")
    rows = input.size // h
    for name, value in (("mean", mean), ("rstd", rstd)):
        if value.size != rows:
            raise ValueError(f"{name} has shape {value.shape}: it must hold one value per row "
                             f"of input ({rows})")
    for name, value, like in (("gradInputOut", gradInputOut, input),
                              ("gradScaleOut", gradScaleOut, scale),
                              ("gradShiftOut", gradShiftOut, shift)):
        if value is not None and value.shape != like.shape:
            raise ValueError(f"{name} has shape {value.shape}: it must be {like.shape}")
    for name, value in (("gradWeightOut", gradWeightOut), ("gradBiasOut", gradBiasOut)):
        if value is not None and value.size != h:
            raise ValueError(f"{name} has shape {value.shape}: it must hold {h} values")


@builtin("aclnnAdaLayerNormBackward", dtypes=FLOATS, check=_ada_layer_norm_backward_check)
def ada_layer_norm_backward(gradOut: np.ndarray, input: np.ndarray,
                            normalizedShape: tuple[int, ...], rstd: np.ndarray,
                            mean: np.ndarray, scale: np.ndarray, shift: np.ndarray,
                            weightOptional: Any, biasOptional: Any, gradInputOut: Any,
                            gradScaleOut: Any, gradShiftOut: Any, gradWeightOut: Any,
                            gradBiasOut: Any) -> None:
    """The doc's formulas (ops-nn norm/ada_layer_norm_grad/docs/aclnnAdaLayerNormBackward.md),
    in float32: z = (input - mean) rstd, g' = gradOut (1 + scale); gradInput is
    aclnnLayerNormBackward's of g'; gradScale = sum over S of gradOut (z w + b), gradShift
    = sum over S of gradOut, gradWeight = sum g' z, gradBias = sum g'."""
    h = input.shape[-1]
    view = input.shape[:-2] + (1, h)
    g = widen(gradOut).astype(np.float32, copy=False)
    modulated = g * (widen(scale).reshape(view) + np.float32(1))
    x = widen(input).astype(np.float32, copy=False)
    statistics = input.shape[:-1] + (1,)
    z = (x - widen(mean).reshape(statistics)) * widen(rstd).reshape(statistics)
    if gradInputOut is not None:
        dx = np.empty(input.shape, np.float32)
        layer_norm_backward(modulated, x, (h,), widen(mean).reshape(statistics).astype(np.float32),
                            widen(rstd).reshape(statistics).astype(np.float32), weightOptional,
                            None, (True, False, False), dx, None, None)
        store(gradInputOut, dx)
    if gradScaleOut is not None:
        affine = z if weightOptional is None else z * widen(weightOptional)
        if biasOptional is not None:
            affine = affine + widen(biasOptional)
        store(gradScaleOut, np.sum(g * affine, axis=-2, dtype=np.float64)
              .reshape(gradScaleOut.shape))
    if gradShiftOut is not None:
        store(gradShiftOut, np.sum(g, axis=-2, dtype=np.float64).reshape(gradShiftOut.shape))
    flat = modulated.reshape(-1, h)
    if gradWeightOut is not None:
        store(gradWeightOut, np.sum(flat * z.reshape(-1, h), axis=0, dtype=np.float64)
              .reshape(gradWeightOut.shape))
    if gradBiasOut is not None:
        store(gradBiasOut, np.sum(flat, axis=0, dtype=np.float64).reshape(gradBiasOut.shape))


# ---- aclnnBatchNormStats, aclnnBatchNormElemt -----------------------------------------------

def _channels(x: np.ndarray) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """C, the axes other than 1, and the shape broadcasting a (C,) vector over x."""
    return x.shape[1], tuple(a for a in range(x.ndim) if a != 1), \
        (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _batch_norm_stats_check(input: np.ndarray, eps: float, mean: np.ndarray,
                            invstd: np.ndarray) -> None:
    """ops-math math/reduce_std_with_mean/op_api/aclnn_batch_norm_stats.cpp: input float32
    or float16 on the Atlas A2 (DTYPE_SUPPORT_LIST), mean and invstd float32 (CheckDtype);
    no private format (CheckFormat); input of 2 to 8 dimensions with C not 0, mean and
    invstd 1-d of C (CheckShape)."""
    from .foreach import PRIVATE_FORMATS
    for name, value in (("input", input), ("mean", mean), ("invstd", invstd)):
        if tensor_format(value) in PRIVATE_FORMATS:
            raise ValueError(f"{name} has a private format (aclFormat {tensor_format(value)}): "
                             "it must be ND, NCL, NCHW or NCDHW")
    if input.dtype not in (np.float32, np.float16):
        raise ValueError(f"input has dtype {input.dtype.name}: it must be float32 or float16")
    for name, value in (("mean", mean), ("invstd", invstd)):
        if value.dtype != np.float32:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be float32")
    if not 2 <= input.ndim <= 8:
        raise ValueError(f"input has {input.ndim} dimensions: it must have 2 to 8")
    if input.shape[1] == 0:
        raise ValueError("input's channel size (dimension 1) must not be 0")
    for name, value in (("mean", mean), ("invstd", invstd)):
        if value.shape != (input.shape[1],):
            raise ValueError(f"{name} has shape {value.shape}: it must be ({input.shape[1]},)")


@builtin("aclnnBatchNormStats", dtypes=FLOATS, check=_batch_norm_stats_check)
def batch_norm_stats(input: np.ndarray, eps: float, mean: np.ndarray,
                     invstd: np.ndarray) -> None:
    """Per channel: the mean and (biased variance + eps)^-1/2 over every other axis, in
    float32; an empty input gives mean 0 and invstd NaN (the op_api)."""
    if input.size == 0:
        mean[...] = 0
        invstd[...] = np.nan
        return
    _, axes, _ = _channels(input)
    x = input.astype(np.float32)
    average = np.mean(x, axis=axes, keepdims=True)
    variance = np.mean(np.square(x - average), axis=axes)
    store(mean, average.reshape(-1))
    store(invstd, np.power(variance + np.float32(eps), np.float32(-0.5)))


def _batch_norm_elemt_check(input: np.ndarray, weight: Any, bias: Any, mean: np.ndarray,
                            invstd: np.ndarray, eps: float, output: np.ndarray) -> None:
    """ops-nn norm/batch_norm_elemt/op_host/op_api/aclnn_batch_norm_elemt.cpp CheckShape:
    input and output of 2 to 8 dimensions, one shape, C not 0; weight, bias, mean and invstd
    1-d of C."""
    if not 2 <= input.ndim <= 8:
        raise ValueError(f"input has {input.ndim} dimensions: it must have 2 to 8")
    if output.shape != input.shape:
        raise ValueError(f"output has shape {output.shape}: it must be input's {input.shape}")
    if input.shape[1] == 0:
        raise ValueError("input's channel size (dimension 1) must not be 0")
    for name, value in (("weight", weight), ("bias", bias), ("mean", mean),
                        ("invstd", invstd)):
        if value is not None and value.shape != (input.shape[1],):
            raise ValueError(f"{name} has shape {value.shape}: it must be 1-d of input's "
                             f"{input.shape[1]} channels")


@builtin("aclnnBatchNormElemt", dtypes=FLOATS, check=_batch_norm_elemt_check)
def batch_norm_elemt(input: np.ndarray, weight: Any, bias: Any, mean: np.ndarray,
                     invstd: np.ndarray, eps: float, output: np.ndarray) -> None:
    """(input - mean) invstd weight + bias per channel (weight 1 and bias 0 when absent),
    in float32."""
    if input.size == 0:
        return
    _, _, view = _channels(input)
    y = (widen(input).astype(np.float32, copy=False) - widen(mean).reshape(view)) \
        * widen(invstd).reshape(view)
    if weight is not None:
        y *= widen(weight).reshape(view)
    if bias is not None:
        y += widen(bias).reshape(view)
    store(output, y)


# ---- aclnnBatchNormGatherStatsWithCounts ----------------------------------------------------

def _gather_stats_check(input: np.ndarray, mean: np.ndarray, invstd: np.ndarray,
                        runningMean: Any, runningVar: Any, momentum: float, eps: float,
                        counts: np.ndarray, meanAll: np.ndarray, invstdAll: np.ndarray) -> None:
    """ops-nn norm/sync_batch_norm_gather_stats_with_counts/op_host/op_api/
    aclnn_batch_norm_gather_stats_with_counts.cpp CheckShape: input of 2 to 8 dimensions;
    mean and invstd 2-d (devices, C), counts 1-d of the devices; runningMean, runningVar,
    meanAll and invstdAll of C elements."""
    if not 2 <= input.ndim <= 8:
        raise ValueError(f"input has {input.ndim} dimensions: it must have 2 to 8")
    for name, value in (("mean", mean), ("invstd", invstd)):
        if value.ndim != 2:
            raise ValueError(f"{name} has {value.ndim} dimensions: it must have 2")
    if counts.ndim != 1:
        raise ValueError(f"counts has {counts.ndim} dimensions: it must have 1")
    if not mean.shape[0] == invstd.shape[0] == counts.shape[0]:
        raise ValueError("mean, invstd and counts must have one size in dimension 0, "
                         f"not {mean.shape[0]}, {invstd.shape[0]} and {counts.shape[0]}")
    channels = input.shape[1]
    if mean.shape[1] != channels or invstd.shape[1] != channels:
        raise ValueError(f"mean and invstd must have input's {channels} channels in "
                         "dimension 1")
    for name, value in (("runningMean", runningMean), ("runningVar", runningVar),
                        ("meanAll", meanAll), ("invstdAll", invstdAll)):
        if value is not None and value.size != channels:
            raise ValueError(f"{name} has shape {value.shape}: it must hold {channels} values")


@builtin("aclnnBatchNormGatherStatsWithCounts", dtypes=FLOATS, check=_gather_stats_check)
def batch_norm_gather_stats_with_counts(input: np.ndarray, mean: np.ndarray,
                                        invstd: np.ndarray, runningMean: Any, runningVar: Any,
                                        momentum: float, eps: float, counts: np.ndarray,
                                        meanAll: np.ndarray, invstdAll: np.ndarray) -> None:
    """The statistics of all devices, each weighted by its count: meanAll the weighted mean,
    invstdAll from the pooled biased variance (each device's 1 / invstd^2 - eps plus its
    mean's spread); the running statistics move by momentum, the variance unbiased (PyTorch's
    batch_norm_gather_stats_with_counts). An empty mean gives meanAll 0 and invstdAll NaN."""
    if mean.size == 0:
        meanAll[...] = 0
        invstdAll[...] = np.nan
        return
    n = widen(counts).astype(np.float32).reshape(-1, 1)
    means = widen(mean).astype(np.float32)
    variances = 1 / np.square(widen(invstd).astype(np.float32)) - np.float32(eps)
    total = np.sum(n)
    average = np.sum(means * n, axis=0) / total
    pooled = np.sum(n * (variances + np.square(means - average)), axis=0)
    store(meanAll, average.reshape(meanAll.shape))
    store(invstdAll, (1 / np.sqrt(pooled / total + np.float32(eps))).reshape(invstdAll.shape))
    m = np.float32(momentum)
    if runningMean is not None:
        store(runningMean, (widen(runningMean).reshape(-1) * (1 - m) + average * m)
              .reshape(runningMean.shape))
    if runningVar is not None:
        unbiased = pooled / (total - 1)
        store(runningVar, (widen(runningVar).reshape(-1) * (1 - m) + unbiased * m)
              .reshape(runningVar.shape))


# ---- synchronised batch norm: aclnnSyncBatchNormGatherStats, aclnnBatchNormReduce,
# aclnnBatchNormReduceBackward, aclnnBatchNormElemtBackward ----------------------------------

_COUNTS = Dtypes(("float32", "float16", "int32"))


def _sync_gather_stats_check(totalSum: np.ndarray, totalSquareSum: np.ndarray,
                             sampleCount: np.ndarray, mean: np.ndarray, variance: np.ndarray,
                             momentum: float, eps: float, batchMean: np.ndarray,
                             batchInvstd: np.ndarray) -> None:
    """ops-nn norm/sync_batch_norm_gather_stats/op_api/aclnn_sync_batch_norm_gather_stats.cpp:
    CheckDtypeValid (sampleCount float32, float16 or int32 off Ascend 950; totalSquareSum,
    mean and variance of totalSum's dtype, batchInvstd of batchMean's), CheckFormat (no
    private format), CheckShape (totalSum and totalSquareSum 2-d of one shape (devices, C),
    sampleCount 1-d of the devices, mean, variance, batchMean and batchInvstd 1-d of C), and
    aclnnSyncBatchNormGatherStatsGetWorkspaceSize (no devices refused)."""
    from .foreach import PRIVATE_FORMATS
    for name, value in (("totalSum", totalSum), ("totalSquareSum", totalSquareSum),
                        ("sampleCount", sampleCount), ("mean", mean), ("variance", variance)):
        if tensor_format(value) in PRIVATE_FORMATS:
            raise ValueError(f"{name} has a private format (aclFormat {tensor_format(value)}): "
                             "it must be ND, NCL, NCHW or NCDHW")
    for name, value in (("totalSquareSum", totalSquareSum), ("mean", mean),
                        ("variance", variance)):
        if value.dtype != totalSum.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be totalSum's "
                             f"{totalSum.dtype.name}")
    if batchInvstd.dtype != batchMean.dtype:
        raise ValueError(f"batchInvstd has dtype {batchInvstd.dtype.name}: it must be "
                         f"batchMean's {batchMean.dtype.name}")
    for name, value, rank in (("totalSum", totalSum, 2), ("totalSquareSum", totalSquareSum, 2),
                              ("sampleCount", sampleCount, 1), ("mean", mean, 1),
                              ("variance", variance, 1), ("batchMean", batchMean, 1),
                              ("batchInvstd", batchInvstd, 1)):
        if value.ndim != rank:
            raise ValueError(f"{name} has {value.ndim} dimensions: it must have {rank}")
    if totalSquareSum.shape != totalSum.shape:
        raise ValueError(f"totalSquareSum has shape {totalSquareSum.shape}: it must be "
                         f"totalSum's {totalSum.shape}")
    if sampleCount.shape[0] != totalSum.shape[0]:
        raise ValueError(f"sampleCount has {sampleCount.shape[0]} values: it must have one per "
                         f"device, totalSum's dimension 0 ({totalSum.shape[0]})")
    channels = totalSum.shape[1]
    for name, value in (("mean", mean), ("variance", variance), ("batchMean", batchMean),
                        ("batchInvstd", batchInvstd)):
        if value.shape[0] != channels:
            raise ValueError(f"{name} has {value.shape[0]} values: it must have totalSum's "
                             f"{channels} channels (dimension 1)")
    if totalSum.shape[0] == 0:
        raise ValueError("totalSum's dimension 0 (the devices) must not be 0")


@builtin("aclnnSyncBatchNormGatherStats",
         dtypes={"totalSum": FLOATS, "totalSquareSum": FLOATS, "sampleCount": _COUNTS,
                 "mean": FLOATS, "variance": FLOATS, "batchMean": FLOATS,
                 "batchInvstd": FLOATS},
         check=_sync_gather_stats_check)
def sync_batch_norm_gather_stats(totalSum: np.ndarray, totalSquareSum: np.ndarray,
                                 sampleCount: np.ndarray, mean: np.ndarray,
                                 variance: np.ndarray, momentum: float, eps: float,
                                 batchMean: np.ndarray, batchInvstd: np.ndarray) -> None:
    """The devices' sums pooled (ops-nn norm/sync_batch_norm_gather_stats/docs/
    aclnnSyncBatchNormGatherStats.md): batchMean = sum(totalSum) / n, the biased variance
    sum(totalSquareSum) / n - batchMean^2, batchInvstd = 1 / sqrt(variance + eps); the running
    mean and variance (in place) move by momentum, the variance unbiased (n / (n - 1)). The
    counts are truncated to int32 as the op_api casts them; float32 throughout."""
    if totalSum.shape[1] == 0:
        return
    n = np.float32(np.sum(sampleCount.astype(np.int32), dtype=np.int64))
    average = np.sum(widen(totalSum).astype(np.float32), axis=0) / n
    spread = np.sum(widen(totalSquareSum).astype(np.float32), axis=0) / n - np.square(average)
    store(batchMean, average)
    store(batchInvstd, 1 / np.sqrt(spread + np.float32(eps)))
    m = np.float32(momentum)
    store(mean, widen(mean) * (1 - m) + average * m)
    store(variance, widen(variance) * (1 - m) + spread * (n / (n - 1)) * m)


_NCHW, _NHWC = 0, 1  # aclFormat (acl_base.h)


def _batch_norm_reduce_check(x: np.ndarray, sum: np.ndarray, squareSum: np.ndarray) -> None:
    """ops-nn norm/bn_training_reduce/op_api/aclnn_batch_norm_reduce.cpp: an empty x, sum or
    squareSum is taken unchecked (aclnnBatchNormReduceGetWorkspaceSize); else CheckDtypeValid
    (sum and squareSum float32), CheckFormat (x NCHW or NHWC, sum and squareSum ND) and
    CheckShape (x 4-d, sum and squareSum 1-d of x's C: dimension 1, or 3 for NHWC)."""
    if x.size == 0 or sum.size == 0 or squareSum.size == 0:
        return
    for name, value in (("sum", sum), ("squareSum", squareSum)):
        if value.dtype != np.float32:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be float32")
    if tensor_format(x) not in (_NCHW, _NHWC):
        raise ValueError(f"x has aclFormat {tensor_format(x)}: it must be NCHW or NHWC")
    for name, value in (("sum", sum), ("squareSum", squareSum)):
        if tensor_format(value) != 2:
            raise ValueError(f"{name} has aclFormat {tensor_format(value)}: it must be ND")
    if x.ndim != 4:
        raise ValueError(f"x has {x.ndim} dimensions: it must have 4")
    channels = x.shape[3] if tensor_format(x) == _NHWC else x.shape[1]
    for name, value in (("sum", sum), ("squareSum", squareSum)):
        if value.ndim != 1 or value.shape[0] != channels:
            raise ValueError(f"{name} has shape {value.shape}: it must be ({channels},), x's "
                             "channels")


@builtin("aclnnBatchNormReduce", dtypes={"x": FLOATS}, check=_batch_norm_reduce_check)
def batch_norm_reduce(x: np.ndarray, sum: np.ndarray, squareSum: np.ndarray) -> None:
    """Per channel, the sum and the sum of squares over the other axes (ops-nn norm/
    bn_training_reduce/docs/aclnnBatchNormReduce.md), in float32; an empty x gives zeros."""
    if x.size == 0 or sum.size == 0 or squareSum.size == 0:
        sum[...] = 0
        squareSum[...] = 0
        return
    axes = (0, 1, 2) if tensor_format(x) == _NHWC else (0, 2, 3)
    values = widen(x).astype(np.float32, copy=False)
    store(sum, np.sum(values, axis=axes))
    store(squareSum, np.sum(np.square(values), axis=axes))


def _reduce_backward_check(gradOut: np.ndarray, input: np.ndarray, mean: np.ndarray,
                           invstd: np.ndarray, weight: Any, inputG: bool, weightG: bool,
                           biasG: bool, sumDy: Any, sumDyXmu: Any, gradWeight: Any,
                           gradBias: Any) -> None:
    """ops-nn norm/sync_batch_norm_backward_reduce/op_api/aclnn_batch_norm_backward_reduce.cpp:
    CheckOutputNotNull (sumDy and sumDyXmu when inputG, gradWeight when weightG, gradBias when
    biasG), CheckDtypeValid (gradOut of input's dtype; those outputs float32, float16 or
    bfloat16, unchecked when their mask is false), CheckFormat (gradOut of input's
    format, no private one) and CheckShape (gradOut and input of 2 to 8 dimensions, C not 0,
    each asked-for output 1-d of C)."""
    from .foreach import PRIVATE_FORMATS
    wanted = (("sumDy", sumDy, inputG), ("sumDyXmu", sumDyXmu, inputG),
              ("gradWeight", gradWeight, weightG), ("gradBias", gradBias, biasG))
    for name, value, asked in wanted:
        if asked and value is None:
            raise ValueError(f"{name} is NULL: it is an output the output mask asks for")
        if asked and value.dtype not in FLOATS:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be float32, float16 "
                             "or bfloat16")
    if gradOut.dtype != input.dtype:
        raise ValueError(f"gradOut has dtype {gradOut.dtype.name}: it must be input's "
                         f"{input.dtype.name}")
    if tensor_format(gradOut) != tensor_format(input):
        raise ValueError(f"gradOut has aclFormat {tensor_format(gradOut)}: it must be input's "
                         f"{tensor_format(input)}")
    for name, value in (("gradOut", gradOut), ("input", input), ("mean", mean),
                        ("invstd", invstd)):
        if tensor_format(value) in PRIVATE_FORMATS:
            raise ValueError(f"{name} has a private format (aclFormat {tensor_format(value)})")
    for name, value in (("gradOut", gradOut), ("input", input)):
        if not 2 <= value.ndim <= 8:
            raise ValueError(f"{name} has {value.ndim} dimensions: it must have 2 to 8")
    if input.shape[1] == 0:
        raise ValueError("input's channel size (dimension 1) must not be 0")
    for name, value, asked in wanted:
        if asked and value.shape != (input.shape[1],):
            raise ValueError(f"{name} has shape {value.shape}: it must be 1-d of input's "
                             f"{input.shape[1]} channels")


@builtin("aclnnBatchNormReduceBackward",
         dtypes={"gradOut": FLOATS, "input": FLOATS, "mean": FLOATS, "invstd": FLOATS},
         check=_reduce_backward_check)
def batch_norm_reduce_backward(gradOut: np.ndarray, input: np.ndarray, mean: np.ndarray,
                               invstd: np.ndarray, weight: Any, inputG: bool, weightG: bool,
                               biasG: bool, sumDy: Any, sumDyXmu: Any, gradWeight: Any,
                               gradBias: Any) -> None:
    """Per channel (PyTorch's batch_norm_backward_reduce): sumDy = sum(g), sumDyXmu =
    sum(g (x - mean)), gradWeight = sumDyXmu invstd, gradBias = sumDy, each written when its
    mask asks for it, in float32. An empty input leaves the outputs as they are (the op_api
    fills them only on Ascend 950)."""
    if gradOut.size == 0 or input.size == 0 or mean.size == 0 or invstd.size == 0:
        return
    _, axes, _ = _channels(input)
    g = widen(gradOut).astype(np.float32, copy=False)
    x = widen(input).astype(np.float32, copy=False)
    total = np.sum(g, axis=axes)
    centred = np.sum(g * x, axis=axes) - widen(mean).astype(np.float32) * total
    if inputG:
        store(sumDy, total)
        store(sumDyXmu, centred)
    if weightG:
        store(gradWeight, centred * widen(invstd).astype(np.float32))
    if biasG:
        store(gradBias, total)


def _elemt_backward_check(gradOut: np.ndarray, input: np.ndarray, mean: np.ndarray,
                          invstd: np.ndarray, weight: Any, sumDy: np.ndarray,
                          sumDyXmu: np.ndarray, counter: np.ndarray,
                          gradInput: np.ndarray) -> None:
    """ops-nn norm/sync_batch_norm_backward_elemt/op_api/aclnn_batch_norm_elemt_backward.cpp:
    CheckFormat (gradOut, input and gradInput in no private format) and CheckShape (input of
    2 to 8 dimensions, C not 0; gradOut, gradInput and counter of at most 8; gradOut and
    gradInput of input's shape; mean, invstd, weight, sumDy and sumDyXmu of C values)."""
    from .foreach import PRIVATE_FORMATS
    for name, value in (("gradOut", gradOut), ("input", input), ("gradInput", gradInput)):
        if tensor_format(value) in PRIVATE_FORMATS:
            raise ValueError(f"{name} has a private format (aclFormat {tensor_format(value)}): "
                             "it must be ND, NCHW, NCL or NCDHW")
    if not 2 <= input.ndim <= 8:
        raise ValueError(f"input has {input.ndim} dimensions: it must have 2 to 8")
    for name, value in (("gradOut", gradOut), ("gradInput", gradInput), ("counter", counter)):
        if value.ndim > 8:
            raise ValueError(f"{name} has {value.ndim} dimensions: it must have at most 8")
    if input.shape[1] == 0:
        raise ValueError("input's channel size (dimension 1) must not be 0")
    for name, value in (("gradOut", gradOut), ("gradInput", gradInput)):
        if value.shape != input.shape:
            raise ValueError(f"{name} has shape {value.shape}: it must be input's "
                             f"{input.shape}")
    for name, value in (("mean", mean), ("invstd", invstd), ("weight", weight),
                        ("sumDy", sumDy), ("sumDyXmu", sumDyXmu)):
        if value is not None and value.size != input.shape[1]:
            raise ValueError(f"{name} has shape {value.shape}: it must hold input's "
                             f"{input.shape[1]} channels")


@builtin("aclnnBatchNormElemtBackward",
         dtypes={"gradOut": FLOATS, "input": FLOATS, "mean": FLOATS, "invstd": FLOATS,
                 "weight": FLOATS, "sumDy": FLOATS, "sumDyXmu": FLOATS, "counter": _COUNTS,
                 "gradInput": FLOATS},
         check=_elemt_backward_check)
def batch_norm_elemt_backward(gradOut: np.ndarray, input: np.ndarray, mean: np.ndarray,
                              invstd: np.ndarray, weight: Any, sumDy: np.ndarray,
                              sumDyXmu: np.ndarray, counter: np.ndarray,
                              gradInput: np.ndarray) -> None:
    """gradInput = (g - sumDy / n - (x - mean) invstd^2 sumDyXmu / n) invstd weight per
    channel, n the sum of counter (PyTorch's batch_norm_backward_elemt; the op_api divides
    by the counter's sum), weight 1 when absent, in float32."""
    if input.size == 0 or gradOut.size == 0:
        return
    _, _, view = _channels(input)

    def channel(value: np.ndarray) -> Any:
        return widen(value).astype(np.float32, copy=False).reshape(view)

    n = np.sum(widen(counter).astype(np.float32))
    scale = channel(invstd)
    if weight is not None:
        scale = scale * channel(weight)
    x = widen(input).astype(np.float32, copy=False)
    centred = (x - channel(mean)) * (np.square(channel(invstd)) * (channel(sumDyXmu) / n))
    result = widen(gradOut).astype(np.float32) - channel(sumDy) / n
    result -= centred
    result *= scale
    store(gradInput, result)


# ---- aclnnModulate, aclnnModulateBackward (adaptive scale and shift of DiT blocks) -----------

def _modulate_check(self: np.ndarray, scaleOptional: Any, shiftOptional: Any,
                    out: np.ndarray) -> None:
    """ops-nn vfusion/modulate/op_host/op_api/aclnn_modulate.cpp: CheckDtypeValid (scale,
    shift and out of self's dtype), CheckShape (scale and shift given, despite their names;
    self 3-d (B, L, D); an empty self with empty scale and shift; out of self's shape; scale
    and shift (B, D) or (B, 1, D))."""
    for name, value in (("scaleOptional", scaleOptional), ("shiftOptional", shiftOptional),
                        ("out", out)):
        if value is not None and value.dtype != self.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}: it must be self's "
                             f"{self.dtype.name}")
    if scaleOptional is None or shiftOptional is None:
        raise ValueError("scaleOptional and shiftOptional must not be NULL (the op_api's "
                         "CheckShape)")
    if self.ndim != 3:
        raise ValueError(f"self has {self.ndim} dimensions: it must have 3 (B, L, D)")
    if self.size == 0 and (scaleOptional.size or shiftOptional.size):
        raise ValueError("self is empty: scaleOptional and shiftOptional must be empty too")
    if out.shape != self.shape:
        raise ValueError(f"out has shape {out.shape}: it must be self's {self.shape}")
    batch, _, width = self.shape
    for name, value in (("scaleOptional", scaleOptional), ("shiftOptional", shiftOptional)):
        if value.ndim not in (2, 3):
            raise ValueError(f"{name} has {value.ndim} dimensions: it must have 2 or 3")
        if value.shape[0] != batch or value.shape[-1] != width:
            raise ValueError(f"{name} has shape {value.shape}: its first and last dimensions "
                             f"must be self's ({batch} and {width})")
        if value.ndim == 3 and value.shape[1] != 1:
            raise ValueError(f"{name} has shape {value.shape}: a 3-d one is (B, 1, D)")


@builtin("aclnnModulate", dtypes=FLOATS, check=_modulate_check)
def modulate(self: np.ndarray, scaleOptional: Any, shiftOptional: Any, out: np.ndarray) -> None:
    """out = self (1 + scale) + shift, scale and shift (B, D) broadcast over L (ops-nn
    vfusion/modulate/docs/aclnnModulate.md), in float32 for the halves."""
    if self.size == 0:
        return
    batch, _, width = self.shape
    scale = widen(scaleOptional).astype(np.float32).reshape(batch, 1, width)
    shift = widen(shiftOptional).astype(np.float32).reshape(batch, 1, width)
    result = widen(self).astype(np.float32) * (1 + scale)
    result += shift
    store(out, result)


def _modulate_backward_check(grad_output: np.ndarray, input: np.ndarray, scale: Any,
                             shift: Any, grad_input: np.ndarray, grad_scale: Any,
                             grad_shift: Any) -> None:
    """ops-nn vfusion/modulate_grad/op_host/op_api/aclnn_modulate_backward.cpp:
    CheckMaxDimension (grad_output and input 3-d (B, L, D); with either empty, scale and shift
    empty), CheckDimension (scale and shift, when given, 2-d (B, D))."""
    for name, value in (("grad_output", grad_output), ("input", input)):
        if value.ndim != 3:
            raise ValueError(f"{name} has {value.ndim} dimensions: it must have 3 (B, L, D)")
    if (grad_output.size == 0 or input.size == 0) and any(
            v is not None and v.size for v in (scale, shift)):
        raise ValueError("grad_output or input is empty: scale and shift must be empty too")
    batch, width = grad_output.shape[0], grad_output.shape[2]
    for name, value in (("scale", scale), ("shift", shift)):
        if value is None:
            continue
        if value.ndim != 2:
            raise ValueError(f"{name} has {value.ndim} dimensions: it must have 2 (B, D)")
        if value.shape != (batch, width):
            raise ValueError(f"{name} has shape {value.shape}: it must be (B, D) = "
                             f"({batch}, {width}) of grad_output")


@builtin("aclnnModulateBackward", dtypes=FLOATS, check=_modulate_backward_check)
def modulate_backward(grad_output: np.ndarray, input: np.ndarray, scale: Any, shift: Any,
                      grad_input: np.ndarray, grad_scale: Any, grad_shift: Any) -> None:
    """As ops-nn vfusion/modulate_grad/docs/aclnnModulateBackward.md and its kernel define
    them: grad_input = grad_output scale (scale as given, broadcast over L; grad_output itself
    without scale), grad_scale = sum over L of grad_output input (with scale), grad_shift =
    sum over L of grad_output (with shift); in float32, each rounded once."""
    if grad_output.size == 0 or input.size == 0 or grad_input.size == 0:
        return
    g = widen(grad_output).astype(np.float32)
    if scale is None:
        store(grad_input, g)
    else:
        batch, _, width = g.shape
        store(grad_input, g * widen(scale).astype(np.float32).reshape(batch, 1, width))
        if grad_scale is not None:
            store(grad_scale, np.sum(g * widen(input).astype(np.float32), axis=1))
    if shift is not None and grad_shift is not None:
        store(grad_shift, np.sum(g, axis=1))


# ---- RmsNormQuant: RmsNorm then per-tensor int8 quantisation --------------------------------
#
# hicann ops-nn norm/rms_norm_quant/docs/aclnnRmsNormQuant.md:
#   quant_in = x / sqrt(mean(x^2) + epsilon) * gamma + beta;  y = round(quant_in / scale + offset)
# as its kernel (norm/rms_norm_quant/op_kernel/rms_norm_quant.cpp Compute) computes it: in float32,
# x times 1 / rms, times gamma, plus beta, times 1 / scale[0] (GetScaleAndOffset reads the first
# scale and offset only), plus offset[0]; then to float16, saturated to [-128, 127] and rounded
# to nearest even into int8 (rms_norm_quant.h CastFromF16ToI8). The doc: a NaN gives 0.
# Its checks (op_host/op_api/aclnn_rms_norm_quant.cpp, Atlas A2): x float16 or bfloat16, gamma
# and beta x's dtype, scale x's dtype, offset int8, y int8 (int4, or int32 holding eight int4, are
# not computed: 561003) (CheckDtypeValid); x 1 to 8 dims, gamma and beta 1 or 2 (a 2-d one is
# its last row), gamma's last dim x's (CheckShapeDim); y of x's shape (the doc).
def _rms_norm_quant_check(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                          scale: np.ndarray, offset: np.ndarray, epsilon: float,
                          y: np.ndarray) -> None:
    for name, value in (("gamma", gamma), ("beta", beta), ("scale", scale)):
        if value.dtype != x.dtype:
            raise ValueError(f"{name} has dtype {value.dtype.name}; it must be x's dtype "
                             f"{x.dtype.name}")
    if y.dtype != np.int8:
        raise Refusal(f"y has dtype {y.dtype.name}: only an int8 y is computed", NO_KERNEL)
    if not 1 <= x.ndim <= 8:
        raise ValueError(f"x has {x.ndim} dimensions; it must have 1 to 8")
    for name, value in (("gamma", gamma), ("beta", beta)):
        if not 1 <= value.ndim <= 2:
            raise ValueError(f"{name} has {value.ndim} dimensions; it must have 1 or 2")
    if gamma.shape[-1] != x.shape[-1]:
        raise ValueError(f"gamma's last dim ({gamma.shape[-1]}) must be x's ({x.shape[-1]})")
    if scale.size == 0 or offset.size == 0:
        raise ValueError("scale and offset must not be empty")
    check_output_shapes("aclnnRmsNormQuant", {"x": x}, {"y": y}, "it must be x's shape")


def quantise_half(value: np.ndarray, out: np.ndarray) -> None:
    """float32 ``value`` into int8 ``out`` as rms_norm_quant.h's CastFrom32To16 then
    CastFromF16ToI8 do: to float16, saturated to [-128, 127], rounded to nearest even; NaN 0."""
    half = np.clip(value.astype(np.float16), -128, 127)
    half = np.where(np.isnan(half), np.float16(0), half)
    out[...] = np.rint(half).astype(np.int8)


def _normed(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray | None,
            epsilon: float) -> np.ndarray:
    """x / rms(x) * gamma (+ beta) over x's last dim, in float32."""
    wide = np.asarray(widen(x), np.float32)
    with np.errstate(all="ignore"):
        mean = np.mean(wide * wide, axis=-1, keepdims=True, dtype=np.float32)
        factor = np.float32(1) / np.sqrt(mean + np.float32(epsilon))
        value = wide * factor * np.asarray(widen(gamma), np.float32).reshape(-1)
        if beta is not None:
            value = value + np.asarray(widen(beta), np.float32).reshape(-1)
    return np.asarray(value, np.float32)


@builtin("aclnnRmsNormQuant", dtypes={"x": Dtypes(("float16", "bfloat16")),
                                       "offset": Dtypes(("int8",))},
         check=_rms_norm_quant_check)
def rms_norm_quant(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, scale: np.ndarray,
                   offset: np.ndarray, epsilon: float, y: np.ndarray) -> None:
    """The formula above."""
    if y.size == 0:
        return
    value = _normed(x, gamma, beta, epsilon)
    with np.errstate(all="ignore"):
        inverse = np.float32(1) / np.float32(widen(scale).reshape(-1)[0])
        value = value * inverse + np.float32(offset.reshape(-1)[0])
    quantise_half(value, y)


# ---- AddRmsNormQuant: x1 + x2, RmsNorm, int8 quantisation per channel -------------------------
#
# hicann ops-nn norm/add_rms_norm_quant/docs/aclnnAddRmsNormQuant.md:
#   x = x1 + x2;  y = x / sqrt(mean(x^2) + epsilon) * gamma
#   y1Out = round(y / scales1 + zeroPoints1) (y * scales1 with divMode false); y2Out likewise
#   with scales2Optional (written only when it is given).
# As its Atlas A2 kernel computes (norm/add_rms_norm_quant/op_kernel/add_rms_norm_quant.h
# Compute / ComputePart2 / doQuant): float16 adds x1 + x2 in float16, normalises it in float32,
# rounds that to float16 and multiplies gamma in float16; bfloat16 adds in float32 (xOut rounded
# to nearest even), normalises and multiplies gamma in float32. The quantisation is float32,
# rounded to nearest even and saturated into int8 (add_rms_norm_quant_base.h RoundFloat2Int8);
# a NaN gives 0, as aclnnRmsNormQuant's doc says. The checks (op_host/op_api/
# aclnn_add_rms_norm_quant.cpp CheckParams): every tensor 1 to 8 dims, y1Out and y2Out one dtype
# (the dtype lists are the phase-1 rules'). Only the Atlas A2 combinations of the doc's table are
# computed (x1, x2, gamma, xOut float16 with float32 scales and int32 zero points, or all
# bfloat16; y1Out and y2Out int8); other dtypes the op_api takes stop with 561003. x2, y1Out,
# y2Out and xOut have x1's shape; gamma, the scales and zero points x1's last dim (the doc).
_ARNQ_COMBINATIONS = {"float16": ("float32", "int32"), "bfloat16": ("bfloat16", "bfloat16")}


def _add_rms_norm_quant_check(x1: np.ndarray, x2: np.ndarray, gamma: np.ndarray,
                              scales1: np.ndarray, scales2Optional: Any,
                              zeroPoints1Optional: Any, zeroPoints2Optional: Any, axis: int,
                              epsilon: float, divMode: bool, y1Out: np.ndarray,
                              y2Out: np.ndarray, xOut: np.ndarray) -> None:
    tensors = {"x1": x1, "x2": x2, "gamma": gamma, "scales1": scales1,
               "scales2Optional": scales2Optional, "zeroPoints1Optional": zeroPoints1Optional,
               "zeroPoints2Optional": zeroPoints2Optional, "y1Out": y1Out, "y2Out": y2Out,
               "xOut": xOut}
    for name, value in tensors.items():
        if value is not None and not 1 <= value.ndim <= 8:
            raise ValueError(f"{name} has {value.ndim} dimensions; it must have 1 to 8")
    if y1Out.dtype != y2Out.dtype:
        raise ValueError(f"y2Out has dtype {y2Out.dtype.name}; it must be y1Out's "
                         f"{y1Out.dtype.name}")
    # beyond here the op_api's lists take the call; Atlas A2 has kernels for the doc's
    # combinations only
    combination = _ARNQ_COMBINATIONS.get(x1.dtype.name)
    wanted = {"x2": x1.dtype.name, "gamma": x1.dtype.name, "xOut": x1.dtype.name,
              "y1Out": "int8", "y2Out": "int8"}
    if combination is not None:
        wanted.update({"scales1": combination[0], "scales2Optional": combination[0],
                       "zeroPoints1Optional": combination[1],
                       "zeroPoints2Optional": combination[1]})
    wrong = [f"{name} {tensors[name].dtype.name}" for name, dtype in wanted.items()
             if tensors[name] is not None and tensors[name].dtype.name != dtype]
    if combination is None or wrong:
        raise Refusal(f"x1 {x1.dtype.name} with {', '.join(wrong) or 'its dtypes'}: not one of "
                      "the Atlas A2 combinations (float16 with float32 scales and int32 zero "
                      "points, or all bfloat16; int8 outputs)", NO_KERNEL)
    if x2.shape != x1.shape:
        raise ValueError(f"x2 has shape {list(x2.shape)}; it must be x1's {list(x1.shape)}")
    columns = x1.shape[-1]
    for name in ("gamma", "scales1", "scales2Optional", "zeroPoints1Optional",
                 "zeroPoints2Optional"):
        value = tensors[name]
        if value is not None and value.size != columns:
            raise ValueError(f"{name} has shape {list(value.shape)}; it must hold x1's last "
                             f"dim ({columns})")
    check_output_shapes("aclnnAddRmsNormQuant", {"x1": x1},
                        {"y1Out": y1Out, "y2Out": y2Out, "xOut": xOut}, "it must be x1's shape")


def round_int8(value: np.ndarray, out: np.ndarray) -> None:
    """float32 ``value`` into int8 ``out``: to nearest even, saturated, NaN 0."""
    with np.errstate(invalid="ignore"):
        clipped = np.clip(np.rint(value), -128, 127)
    out[...] = np.where(np.isnan(clipped), 0, clipped).astype(np.int8)


def _quantised(y: np.ndarray, scales: np.ndarray, zero: Any, divMode: bool,
               out: np.ndarray) -> None:
    factor = np.asarray(widen(scales), np.float32).reshape(-1)
    with np.errstate(all="ignore"):
        value = y / factor if divMode else y * factor
        if zero is not None:
            value = value + np.asarray(widen(zero), np.float32).reshape(-1)
    round_int8(np.asarray(value, np.float32), out)


@builtin("aclnnAddRmsNormQuant", check=_add_rms_norm_quant_check)
def add_rms_norm_quant(x1: np.ndarray, x2: np.ndarray, gamma: np.ndarray, scales1: np.ndarray,
                       scales2Optional: Any, zeroPoints1Optional: Any, zeroPoints2Optional: Any,
                       axis: int, epsilon: float, divMode: bool, y1Out: np.ndarray,
                       y2Out: np.ndarray, xOut: np.ndarray) -> None:
    """The formulas above."""
    if x1.size == 0 or gamma.size == 0 or y2Out.size == 0:
        return
    half = x1.dtype == np.float16
    with np.errstate(all="ignore"):
        total = np.asarray(widen(x1), np.float32) + np.asarray(widen(x2), np.float32)
        store(xOut, total)
        if half:
            total = total.astype(np.float16).astype(np.float32)
        mean = np.mean(total * total, axis=-1, keepdims=True, dtype=np.float32)
        rstd = np.float32(1) / np.sqrt(mean + np.float32(epsilon))
        normed = total * rstd
        g = np.asarray(widen(gamma), np.float32).reshape(-1)
        y: np.ndarray = normed * g
        if half:  # gamma multiplied in float16
            y = (normed.astype(np.float16).astype(np.float32) * g).astype(np.float16)
    y = np.asarray(y, np.float32)
    if scales2Optional is not None:
        _quantised(y, scales2Optional, zeroPoints2Optional, divMode, y2Out)
    _quantised(y, scales1, zeroPoints1Optional, divMode, y1Out)
