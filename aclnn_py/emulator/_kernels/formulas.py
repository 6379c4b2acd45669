"""What each operator the emulator computes is defined to compute, and how its kernel does it.

One row per computed operator (its C kernels' included): the formula of the operator's CANN doc,
in our words (the doc's path is the operator table's, ``aclnn_py/data/operators.json``, unless
``source`` names another), how the kernel computes it, and how it treats float16 and bfloat16.
``tools/generate_operator_docs.py`` writes them into the page emulated-operators.md;
``tests/ops/test_kernel_edges.py`` checks there is one per computed operator.
"""

from __future__ import annotations

from typing import NamedTuple

WIDENED = "float32, rounded once"
EXACT = "copied exactly"
CUBE = "products exact in float32, float32 sums, rounded once"


class Formula(NamedTuple):
    """An operator's definition and its kernel."""

    doc: str               # the formula of the operator's doc ("" when the doc gives none)
    kernel: str            # how the emulator computes it
    halves: str = WIDENED  # how float16 and bfloat16 compute
    source: str = ""       # the doc, when not the operator table's


def _f(doc: str, kernel: str, halves: str = WIDENED, source: str = "") -> Formula:
    return Formula(doc, kernel, halves, source)


_UNARY = {
    "Abs": ("|x|", "numpy's absolute; integers wrap (abs of the minimum is itself)"),
    "Neg": ("-x", "numpy's negative; integers wrap"),
    "Exp": ("e^x", "numpy's exp"),
    "Expm1": ("e^x - 1", "numpy's expm1 (accurate near 0)"),
    "Log": ("ln x", "numpy's log (-inf at 0, NaN below)"),
    "Log2": ("log2 x", "numpy's log2"),
    "Log10": ("log10 x", "numpy's log10"),
    "Log1p": ("ln(1 + x)", "numpy's log1p"),
    "Sqrt": ("sqrt(x) for x >= 0, NaN below", "numpy's sqrt"),
    "Rsqrt": ("1 / sqrt(x)", "numpy's sqrt, then its reciprocal"),
    "Reciprocal": ("1 / x", "numpy's reciprocal"),
    "Square": ("x x", "numpy's square; integers wrap"),
    "Sin": ("sin x", "numpy's sin"),
    "Cos": ("cos x", "numpy's cos"),
    "Tan": ("tan x", "numpy's tan"),
    "Asin": ("arcsin x", "numpy's arcsin"),
    "Acos": ("arccos x", "numpy's arccos"),
    "Atan": ("arctan x", "numpy's arctan"),
    "Sinh": ("sinh x", "numpy's sinh"),
    "Cosh": ("cosh x", "numpy's cosh"),
    "Tanh": ("(e^x - e^-x) / (e^x + e^-x)", "numpy's tanh"),
    "Floor": ("floor(x)", "numpy's floor"),
    "Ceil": ("ceil(x)", "numpy's ceil"),
    "Trunc": ("trunc(x)", "numpy's trunc"),
    "Round": ("the nearest integer, ties to even", "numpy's round (ties to even)"),
    "Sign": ("1 for x > 0, 0 for x = 0, -1 for x < 0",
             "numpy's sign; NaN gives 0, as PyTorch's (the doc is silent on NaN)"),
    "Sigmoid": ("1 / (1 + e^-x)", "1 / (1 + exp(-x)), in place in cache-sized blocks"),
    "Relu": ("x for x > 0, else 0", "max(0, x); -0.0 and NaN pass through, as PyTorch's"),
    "Silu": ("x / (1 + e^-x)", "x / (1 + exp(-x)), in cache-sized blocks"),
    "Mish": ("x tanh(softplus(x))", "x tanh(log1p(exp(x))) (exp overflows to inf above 88, "
             "where tanh gives 1)"),
}
_INPLACE = {"InplaceRelu": "Relu", "InplaceSigmoid": "Sigmoid", "InplaceTanh": "Tanh",
            "InplaceExp": "Exp", "InplaceSqrt": "Sqrt", "InplaceNeg": "Neg", "InplaceLog": "Log"}
_COMPARE = {"Eq": "==", "Ne": "!=", "Gt": ">", "Ge": ">=", "Lt": "<", "Le": "<="}

FORMULAS: dict[str, Formula] = {
    **{f"aclnn{name}": _f(doc, kernel) for name, (doc, kernel) in _UNARY.items()},
    **{f"aclnn{name}": _f(_UNARY[of][0] + ", in place", _UNARY[of][1])
       for name, of in _INPLACE.items()},
    **{f"aclnn{name}Tensor": _f(f"self {op} other (broadcast), a bool",
                                "numpy's comparison in the promoted dtype")
       for name, op in _COMPARE.items()},
    **{f"aclnn{name}Scalar": _f(f"self {op} other, a bool",
                                "numpy's comparison in the promoted dtype")
       for name, op in _COMPARE.items()},
    "aclnnErf": _f("2/sqrt(pi) integral from 0 to x of e^(-t^2) dt",
                   "float64: Maclaurin series below |x| = 1.5, 1 - erfc by Laplace's continued "
                   "fraction above (within 2 ulp); float32: tanh(x R(x^2)), R a degree-6 fit of "
                   "ours (within 4 ulp, never beyond 1)"),
    "aclnnErfinv": _f("y such that erf(y) = x", "float32 (CANN has no float64 Erfinv): x P(w), "
                      "w = -log(1 - x^2), a two-piece fit of ours (Giles' scheme); +-inf at "
                      "+-1, NaN beyond"),
    "aclnnGelu": _f("0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))",
                    "as CANN's kernel (op_kernel/arch35/gelu_dag.h): x / (1 + exp(-sqrt(8/pi) "
                    "(x + 0.044715 x^3))), the same function without its tail's rounding to 0"),
    "aclnnGeluV2": _f("x Phi(x); approximate 1 is the tanh form, any other value none (erf)",
                      "0.5 x (1 + erf(x / sqrt(2))), or aclnnGelu's tanh form"),
    "aclnnHardswish": _f("x for x >= 3, 0 for x <= -3, x (x + 3) / 6 between",
                         "as CANN's kernel (op_kernel/arch35/hard_swish.h): max(x, -3) "
                         "clamp(x + 3, 0, 6) times 1/6 (so -inf gives 0)"),
    "aclnnHardsigmoid": _f("clip(x / 6 + 1/2, 0, 1)", "the same"),
    "aclnnHardtanh": _f("min for x < min, max for x > max, else x",
                        "max(min, x) then min(max, .), x kept on ties (-0.0 stays)"),
    "aclnnLeakyRelu": _f("max(0, x) + negativeSlope min(0, x)",
                         "x where x > 0, else negativeSlope x (a branch-free select)"),
    "aclnnElu": _f("scale x for x > 0, alpha scale (exp(inputScale x) - 1) otherwise",
                   "the same, expm1 for exp - 1"),
    "aclnnSoftplus": _f("log(1 + exp(beta x)) / beta for beta x <= threshold, else x",
                        "the same, log1p(exp(beta x))"),
    "aclnnGlu": _f("a sigmoid(b), a and b the halves of self along dim", "the same"),
    "aclnnLogicalNot": _f("1 where x = 0, else 0", "numpy's logical_not", "compared as is"),
    "aclnnLogicalAnd": _f("1 where both are non-zero", "numpy's logical_and", "compared as is"),
    "aclnnLogicalOr": _f("1 where either is non-zero", "numpy's logical_or", "compared as is"),
    "aclnnLogicalXor": _f("1 where exactly one is non-zero", "numpy's logical_xor",
                          "compared as is"),
    # backward of activations
    "aclnnSigmoidBackward": _f("gradOutput y (1 - y), y the forward output", "the same"),
    "aclnnTanhBackward": _f("gradOutput (1 - y^2), y the forward output", "the same"),
    "aclnnSiluBackward": _f("gradOutput s(x) (1 + x - x s(x)), s = sigmoid", "the same"),
    "aclnnGeluBackward": _f("gradOutput (1/2 + erf(x/sqrt 2)/2 + x e^(-x^2/2)/sqrt(2 pi)); "
                            "the doc also gives the tanh approximation",
                            "as CANN's kernel (op_kernel/arch35/gelu_grad_dag.h): the derivative "
                            "of the tanh form, gradOutput (s + x u' e s^2) with u = sqrt(8/pi) "
                            "(x + 0.044715 x^3), e = exp(-u), s = 1/(1 + e); its NaN second term "
                            "taken as 0"),
    "aclnnThresholdBackward": _f("gradOutput where x > threshold, else 0",
                                 "as CANN's kernel (op_kernel/arch35/"
                                 "threshold_grad_v2_d_dag.h): 0 where x <= threshold, so a NaN "
                                 "x passes gradOutput"),
    "aclnnHardswishBackward": _f("gradOutput times 0 below -3, x/3 + 1/2 in [-3, 3], 1 above",
                                 "the same (a branch-free select)"),
    "aclnnHardsigmoidBackward": _f("", "gradOutput / 6 where -3 < x < 3, else 0"),
    "aclnnHardtanhBackward": _f("gradOutput where min <= x <= max, else 0",
                                "as CANN's kernel (op_kernel/arch35/hardtanh_grad_dag.h): "
                                "gradOutput where min < x < max or x is NaN (0 at the bounds)"),
    "aclnnLeakyReluBackward": _f("gradOutput where x > 0, else gradOutput negativeSlope",
                                 "the same"),
    "aclnnSoftplusBackward": _f("gradOutput / (1 + exp(-beta x)) for beta x <= threshold, "
                                "else gradOutput", "the same"),
    "aclnnMishBackward": _f("", "gradOutput (t + x sigmoid(x) (1 - t^2)), "
                            "t = tanh(softplus(x))"),
    "aclnnGluBackward": _f("cat(gradOut s, gradOut a s (1 - s)), s = sigmoid(b)", "the same"),
    # arithmetic
    "aclnnAdd": _f("self + alpha other", "the emulator's C kernel (op_add.c): per element in "
                   "float32, alpha rounded to float32"),
    "aclnnInplaceAdd": _f("selfRef + alpha other", "as aclnnAdd (C)"),
    "aclnnAdds": _f("self + alpha other (a scalar)",
                    "in the promoted dtype; integers wrap"),
    "aclnnInplaceAdds": _f("selfRef + alpha other (a scalar)", "as aclnnAdds"),
    "aclnnSub": _f("self - alpha other", "alpha other, then the difference, in the promoted "
                   "dtype; integers wrap (uint8 included)"),
    "aclnnSubs": _f("self - alpha other (a scalar)", "as aclnnSub"),
    "aclnnInplaceSub": _f("selfRef - alpha other", "as aclnnSub"),
    "aclnnInplaceSubs": _f("selfRef - alpha other (a scalar)", "as aclnnSub"),
    "aclnnMul": _f("self other", "numpy's multiply in the promoted dtype; integers wrap"),
    "aclnnMuls": _f("self other (a scalar)", "as aclnnMul"),
    "aclnnInplaceMul": _f("selfRef other", "as aclnnMul"),
    "aclnnInplaceMuls": _f("selfRef other (a scalar)", "as aclnnMul"),
    "aclnnDiv": _f("self / other", "numpy's true_divide"),
    "aclnnDivs": _f("self / other (a scalar)", "numpy's true_divide"),
    "aclnnInplaceDiv": _f("selfRef / other", "numpy's true_divide"),
    "aclnnInplaceDivs": _f("selfRef / other (a scalar)", "numpy's true_divide"),
    "aclnnFloorDivide": _f("floor(self / other)",
                           "below float64: the float64 quotient, floored (the exact quotient's "
                           "floor); where an operand is not finite, PyTorch's rule; integers "
                           "as numpy's floor_divide"),
    "aclnnMaximum": _f("max(self, other)", "numpy's maximum; NaN propagates, self kept on ties "
                       "(-0.0 against 0.0), as PyTorch's"),
    "aclnnMinimum": _f("min(self, other)", "numpy's minimum, as aclnnMaximum"),
    "aclnnAtan2": _f("arctan(self / other), by quadrant", "numpy's arctan2"),
    "aclnnPowTensorTensor": _f("self ^ exponent", "numpy's power"),
    "aclnnPowTensorScalar": _f("self ^ exponent (a scalar)", "numpy's power"),
    "aclnnLerp": _f("start + weight (end - start)",
                    "as CANN's kernels (op_kernel/arch35/lerp_f32_nddma_without_loops.h): that "
                    "for weight < 0.5, else end - (end - start) (1 - weight): exact at both "
                    "ends"),
    "aclnnLerps": _f("start + weight (end - start), weight a scalar", "as aclnnLerp"),
    "aclnnInplaceLerps": _f("selfRef + weight (end - selfRef), weight a scalar",
                            "as aclnnLerp"),
    "aclnnAddcmul": _f("self + value tensor1 tensor2", "the same"),
    "aclnnAddcdiv": _f("self + value tensor1 / tensor2", "the same"),
    "aclnnSWhere": _f("self where condition, else other", "numpy's where in the promoted dtype"),
    "aclnnClamp": _f("max(min(x, max), min)", "on Atlas A2/A3 (op_api/aclnn_clamp.cpp): self "
                     "and the bounds cast to out's dtype, then max(min, .) and min(max, .); an "
                     "int self with float bounds into a float out keeps the fractions"),
    "aclnnClampMin": _f("max(x, min)", "as aclnnClamp"),
    "aclnnClampMax": _f("min(x, max)", "as aclnnClamp"),
    "aclnnCast": _f("", "one numpy cast into out's dtype (round to nearest even)",
                    "rounded once"),
    "aclnnInplaceFillScalar": _f("", "value cast to selfRef's dtype, everywhere", EXACT),
    "aclnnInplaceZero": _f("selfRef = 0", "the same", EXACT),
    "aclnnInplaceOne": _f("", "1 everywhere", EXACT),
    "aclnnInplaceMaskedFillScalar": _f("value where mask, else selfRef", "the same", EXACT),
    "aclnnInplaceCopy": _f("selfRef = src", "src broadcast, cast into selfRef", EXACT),
    # reductions
    "aclnnReduceSum": _f("", "numpy's sum (pairwise) over dims", "summed in float32"),
    "aclnnMean": _f("the sum over dim, divided by its size", "numpy's mean",
                    "summed in float32"),
    "aclnnAmax": _f("", "numpy's max over dim; NaN propagates"),
    "aclnnAmin": _f("", "numpy's min over dim; NaN propagates"),
    "aclnnArgMax": _f("", "numpy's argmax (the first maximum; the first NaN)"),
    "aclnnArgMin": _f("", "numpy's argmin (the first minimum; the first NaN)"),
    "aclnnMax": _f("", "numpy's max of every element (nothing for an empty self)"),
    "aclnnMin": _f("", "numpy's min of every element (nothing for an empty self)"),
    "aclnnProd": _f("the product of every element", "column products then theirs, in float64 "
                    "for floating dtypes; 1 for an empty self", "multiplied in float64"),
    "aclnnVar": _f("sum (x - mean)^2 / max(0, N - d), d = 1 when unbiased", "numpy's var"),
    "aclnnStd": _f("sqrt(sum (x - mean)^2 / max(0, N - correction))", "numpy's std"),
    "aclnnNorm": _f("(sum |x|^p)^(1/p); max |x| for inf, min |x| for -inf", "the same"),
    "aclnnLinalgVectorNorm": _f("(sum |x|^ord)^(1/ord)", "as aclnnNorm"),
    "aclnnCumsum": _f("y_i = x_1 + ... + x_i along dim",
                      "self cast to dtype; runs of 32 summed by a product with a triangle of "
                      "ones, the runs' totals in float64; a non-finite total takes numpy's "
                      "running sum (PyTorch's NaN and infinities); integers wrap",
                      "summed in float32"),
    "aclnnDot": _f("sum x_i y_i", "numpy's dot", "products and sum in float32"),
    # nn
    "aclnnSoftmax": _f("e^x_i / sum_j e^x_j along dim (the maximum subtracted first)",
                       "the same, rows at a time in cache-sized blocks; an empty self computes "
                       "nothing"),
    "aclnnLogSoftmax": _f("log(e^x_i / sum_j e^x_j) along dim (the maximum subtracted first)",
                          "x - max - log(sum exp(x - max)), rows in cache-sized blocks"),
    "aclnnSoftmaxBackward": _f("gradOutput y - sum(gradOutput y) y", "y (g - sum(g y))"),
    "aclnnLogSoftmaxBackward": _f("gradOutput - sum(gradOutput) exp(y)", "the same"),
    "aclnnSoftmaxCrossEntropyWithLogits": _f("loss = -sum y log softmax(x); backprop = "
                                             "softmax(x) - y", "the same"),
    "aclnnLayerNorm": _f("(x - E[x]) / sqrt(Var[x] + eps) weight + bias; mean E[x], rstd "
                         "1 / sqrt(Var[x] + eps)", "the same (Var biased), rows in cache-sized "
                         "blocks"),
    "aclnnLayerNormBackward": _f("gradInput = (g w - (mean(g w) + xhat mean(g w xhat))) rstd, "
                                 "xhat = (x - mean) rstd; gradWeight = sum g xhat; gradBias = "
                                 "sum g", "the same, rows in blocks; weight and bias gradients "
                                 "summed in float64"),
    "aclnnRmsNorm": _f("x_i / Rms(x) gamma_i, Rms(x) = sqrt(mean(x^2) + epsilon) over gamma's "
                       "dimensions; rstd 1 / Rms(x)", "the same, rows in cache-sized blocks"),
    "aclnnGemmaRmsNorm": _f("x_i / Rms(x) (1 + gamma_i), Rms(x) = sqrt(mean(x^2) + epsilon)",
                            "the same, rows in cache-sized blocks"),
    "aclnnAddRmsNorm": _f("x = x1 + x2; x_i / Rms(x) gamma_i, Rms(x) = sqrt(mean(x^2) + "
                          "epsilon); xOut x, rstd 1 / Rms(x)",
                          "the same, the sum kept in float32 for 16-bit inputs"),
    "aclnnInplaceAddRmsNorm": _f("x = x1Ref + x2Ref; x1Ref = x / Rms(x) gamma, x2Ref = x, "
                                 "rstd 1 / Rms(x)", "aclnnAddRmsNorm's, into x1Ref and x2Ref"),
    "aclnnApplyAdamWV2": _f("m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; theta -= lr "
                            "m_hat / (sqrt(v_hat) + eps) + lr wd theta",
                            "as CANN's kernel (op_kernel/apply_adam_w_v2_fp.h): step + 1 "
                            "counted, theta (1 - lr wd) first, amsgrad's running max of v, "
                            "maximize negating g; scalars in float32"),
    "aclnnFusedAdamw": _f("AdamW over tensor lists, grads divided by gradScale, no update "
                          "when foundInf is 1",
                          "aclnnApplyAdamWV2's step per tensor, its step stateSteps[i] + 1 "
                          "(op_kernel/fused_adamw_kernel.h)"),
    "aclnnFusedSgd": _f("SGD: g / gradScale, + wd param; buf = g first, else momentum buf + "
                        "(1 - dampening) g; nesterov g + momentum buf; param -= lr step",
                        "the same (op_kernel/fused_sgd_f32.h); the unscaled g written back "
                        "to gradsRef"),
    "aclnnApplyFusedEmaAdam": _f("Adam with L2 (mode 0) or decoupled (mode 1) weight decay, "
                                 "bias correction optional; s = emaDecay s + (1 - emaDecay) "
                                 "var", "the same, step as given"),
    "aclnnAmpUpdateScale": _f("scale backoff on foundInf != 0; growth after growthInterval "
                              "clean steps (kept if not finite); tracker counted or reset",
                              "the same (op_kernel/amp_update_scale.h), scale in float32"),
    "aclnnAddLayerNorm": _f("x = x1 + x2 + bias; y = (x - E(x)) rstd gamma + beta, rstd = "
                            "1 / sqrt(Var(x) + epsilon); xOut x with additionalOutput",
                            "the sum in float32, then aclnnLayerNorm's kernel"),
    "aclnnRmsNormGrad": _f("dx = (dy g - x rstd mean(dy g x rstd)) rstd; dg = sum rstd x dy",
                           "the same, rows in cache-sized blocks; dgamma summed in float64"),
    "aclnnAddLayerNormGrad": _f("LayerNorm's backward of x = x1 + x2; dx + dsumOptional, "
                                "dgamma, dbeta", "aclnnLayerNormBackward's kernel on the "
                                "float32 sum, dsum added before rounding"),
    "aclnnAddRmsNormCast": _f("x = float(x1) + float(x2); y1 = x / Rms(x) gamma; y2 = "
                              "cast(y1)", "aclnnAddRmsNorm's kernel into the float32 y1, "
                              "then y1 rounded once into y2"),
    "aclnnLayerNormWithImplMode": _f("aclnnLayerNorm's, implMode choosing CANN's kernel's "
                                     "precision", "aclnnLayerNorm's kernel (its precise mode) "
                                     "for every implMode"),
    "aclnnFastLayerNorm": _f("aclnnLayerNorm's", "aclnnLayerNorm's kernel"),
    "aclnnDeepNorm": _f("x' = alpha x + gx; (x' - mean(x')) rstd gamma + beta",
                        "aclnnLayerNorm's kernel on x' in float32"),
    "aclnnDeepNormGrad": _f("dgx = LayerNorm's input gradient at x' = alpha x + gx; dx = "
                            "alpha dgx; dbeta = sum dy; dgamma = sum dy xhat",
                            "aclnnLayerNormBackward's kernel on x' in float32"),
    "aclnnGroupNormSilu": _f("silu(GroupNorm(self))", "aclnnGroupNorm's kernel in float32, "
                             "then y / (1 + e^-y), rounded once"),
    "aclnnGroupNormSiluV2": _f("GroupNorm(self), silu'd with activateSilu",
                               "aclnnGroupNormSilu's"),
    "aclnnGroupNormSwish": _f("GroupNorm(x), then y / (1 + e^(-swishScale y)) with "
                              "activateSwish", "aclnnGroupNormSilu's, the scale applied"),
    "aclnnGroupNormSwishGrad": _f("the gradients of swish(xhat gamma + beta) (the doc's dYNew "
                                  "through GroupNorm's backward)",
                                  "dy s (1 + k z (1 - s)), s = sigmoid(k z), through "
                                  "aclnnGroupNormBackward's kernel"),
    "aclnnRenorm": _f("each slice along dim with a p-norm above maxNorm scaled down to it",
                      "as CANN's kernel (op_kernel/arch35/renorm_dag.h): factor min(n, maxNorm)"
                      " / n, n = max(norm, eps), rounded to out's dtype"),
    "aclnnInplaceRenorm": _f("aclnnRenorm into selfRef", "aclnnRenorm's"),
    "aclnnEmbeddingRenorm": _f("the rows indices name renormed to maxNorm in normType-norm",
                               "aclnnRenorm's kernel on the gathered rows, scattered back"),
    "aclnnAdaLayerNorm": _f("LayerNorm(x) (1 + scale) + shift", "aclnnLayerNorm's kernel "
                            "over the last dimension in float32, then the modulation"),
    "aclnnAdaLayerNormV2": _f("aclnnAdaLayerNorm's, with mean and rstd out",
                              "aclnnAdaLayerNorm's"),
    "aclnnAdaLayerNormBackward": _f("the doc's gradients of LayerNorm(input) (1 + scale) + "
                                    "shift", "aclnnLayerNormBackward's kernel on gradOut "
                                    "(1 + scale) for gradInput; the sums in float64"),
    "aclnnBatchNormStats": _f("per channel mean and (Var + eps)^-1/2 (Var biased)",
                              "the same in float32; empty input: mean 0, invstd NaN"),
    "aclnnBatchNormElemt": _f("(x - mean) invstd weight + bias per channel",
                              "the same in float32"),
    "aclnnBatchNormGatherStatsWithCounts": _f(
        "count-weighted mean and pooled invstd of the devices' statistics; running statistics "
        "moved by momentum (variance unbiased)", "PyTorch's definition, in float32"),
    "aclnnSyncBatchNormGatherStats": _f(
        "batchMean = sum(totalSum) / n, batchInvstd = 1 / sqrt(sum(totalSquareSum) / n - "
        "batchMean^2 + eps); running statistics moved by momentum (variance unbiased)",
        "the same in float32, the counts read as int32"),
    "aclnnBatchNormReduce": _f("per channel sum of x and of x^2 over N, H and W",
                               "the same in float32 (NCHW or NHWC)"),
    "aclnnBatchNormReduceBackward": _f(
        "sumDy = sum g, sumDyXmu = sum g (x - mean), gradWeight = sumDyXmu invstd, gradBias = "
        "sumDy per channel", "PyTorch's batch_norm_backward_reduce, in float32"),
    "aclnnBatchNormElemtBackward": _f(
        "(g - sumDy / n - (x - mean) invstd^2 sumDyXmu / n) invstd weight, n = sum(counter)",
        "PyTorch's batch_norm_backward_elemt, in float32"),
    "aclnnFastBatchNormBackward": _f(
        "training: weight / (n sqrt(var + eps)) (n g - sum g - xhat sum(g xhat)); else g weight "
        "/ sqrt(runningVar + eps)", "aclnnBatchNormBackward's"),
    "aclnnModulate": _f("self (1 + scale) + shift, scale and shift (B, D) over L",
                        "the same in float32"),
    "aclnnModulateBackward": _f(
        "grad_input = grad_output scale, grad_scale = sum_L grad_output input, grad_shift = "
        "sum_L grad_output", "the doc's and kernel's (scale as given, not 1 + scale), in float32"),
    "aclnnGroupNorm": _f("(x - E[x]) / sqrt(Var[x] + eps) gamma + beta per group",
                         "the same (Var biased)"),
    "aclnnGroupNormBackward": _f("gradInput = rstd gamma (g - (gradBeta + xhat gradGamma) / N)",
                                 "the same, per group"),
    "aclnnBatchNorm": _f("(x - E[x]) / sqrt(Var[x] + eps) weight + bias per channel",
                         "x scale + shift; training: the batch's mean and biased variance, "
                         "running statistics updated with the unbiased one"),
    "aclnnBatchNormBackward": _f("training: weight / (n sqrt(var + eps)) (n g - sum g - xhat "
                                 "sum(g xhat)); else g weight / sqrt(runningVar + eps)",
                                 "the same"),
    "aclnnBinaryCrossEntropy": _f("-weight (t log x + (1 - t) log(1 - x)), then reduced",
                                  "the same, each log at least -100 (PyTorch's)"),
    "aclnnBinaryCrossEntropyBackward": _f("gradOutput weight (x - t) / (x (1 - x)), divided by "
                                          "n for mean", "the same, x (1 - x) at least 1e-12"),
    "aclnnBinaryCrossEntropyWithLogits": _f("-weight (posWeight t log sigmoid(x) + (1 - t) "
                                            "log(1 - sigmoid(x))), then reduced",
                                            "weight (max(x, 0) - t x + log1p(exp(-|x|)) + "
                                            "(posWeight - 1) t softplus(-x)): no overflow, no "
                                            "cancellation"),
    "aclnnNLLLoss": _f("-weight[t] x[n, t] (0 for ignoreIndex); mean divides by the weights' "
                       "sum; totalWeight that sum", "the same; a target outside [0, C) fails "
                       "the synchronisation"),
    "aclnnNLLLossBackward": _f("out[n, t] = -gradOutput w[t] (gradOutput_n for none), / "
                               "totalWeight for mean; 0 elsewhere and for ignoreIndex",
                               "the same, in float64"),
    "aclnnConvolution": _f("sum over input channels of weight * input (cross-correlation), "
                           "plus bias", "2-d, not transposed: windows of the padded input "
                           "contracted with einsum, per group"),
    "aclnnMaxPool2dWithIndices": _f("the maximum of each window, its index h W + w",
                                    "over the input's elements only (padding never wins): the "
                                    "first maximum, the last NaN if any, the first element "
                                    "of an all -inf window, as PyTorch's kernel"),
    "aclnnConvolutionBackward": _f("gradInput: gradOutput convolved back by weight; gradWeight: "
                                   "the padded input correlated with gradOutput; gradBias: "
                                   "gradOutput summed over N and the spatial dims",
                                   "the same per group in float64 (not transposed)"),
    "aclnnMaxPool2dWithMask": _f("the maximum of each window; indices a mask of CANN's own "
                                 "layout", "the maxima as aclnnMaxPool2dWithIndices; the mask "
                                 "holds, per window position, one bit per output element that "
                                 "took it"),
    "aclnnMaxPool2dWithMaskBackward": _f("each output's gradient to the input element that "
                                         "held its maximum, summed where windows overlap",
                                         "the same, from the emulator's mask"),
    "aclnnAvgPool2d": _f("the window's sum / (kH kW), or divisorOverride",
                         "windows summed, divided as countIncludePad and divisorOverride say"),
    "aclnnAdaptiveAvgPool2d": _f("the mean of each adaptive window (as PyTorch's "
                                 "adaptive_avg_pool2d)",
                                 "rows floor(i H / outH) to ceil((i + 1) H / outH) - 1, columns "
                                 "likewise, averaged"),
    "aclnnAvgPool2dBackward": _f("each output's gradient / its window's divisor, summed back "
                                 "over the window's input elements",
                                 "the same; the divisor as aclnnAvgPool2d's"),
    "aclnnAvgPool3d": _f("the window's sum / (kD kH kW), or divisorOverride",
                         "windows summed dim by dim, divided as countIncludePad and "
                         "divisorOverride say"),
    "aclnnAvgPool3dBackward": _f("each output's gradient / its window's divisor, summed back "
                                 "over the window", "the same"),
    "aclnnAdaptiveAvgPool2dBackward": _f("each output's gradient / its adaptive window's size, "
                                         "summed over the window",
                                         "the adjoint of the per-dim averaging matrices"),
    "aclnnAdaptiveAvgPool3d": _f("the mean of each adaptive window (as PyTorch's "
                                 "adaptive_avg_pool3d)", "per-dim averaging matrices (einsum)"),
    "aclnnAdaptiveAvgPool3dBackward": _f("each output's gradient / its adaptive window's size, "
                                         "summed over the window",
                                         "the adjoint of the per-dim averaging matrices"),
    "aclnnAdaptiveMaxPool2d": _f("the maximum of each adaptive window, its index h W + w",
                                 "the first maximum, the last NaN if any, as PyTorch's "
                                 "kernel"),
    "aclnnAdaptiveMaxPool3d": _f("the maximum of each adaptive window, its index "
                                 "d H W + h W + w", "the first maximum, the last NaN if any"),
    "aclnnAdaptiveMaxPool2dBackward": _f("each output's gradient to the element its index "
                                         "names, summed", "the same (bincount in float64)"),
    "aclnnAdaptiveMaxPool3dBackward": _f("each output's gradient to the element its index "
                                         "names, summed", "the same (bincount in float64)"),
    "aclnnMaxPool2dWithIndicesBackward": _f("each output's gradient to the element h W + w its "
                                            "index names, summed where windows overlap",
                                            "the same (bincount in float64)"),
    "aclnnSwigluClamp": _f("gate, up = x's halves; y = min(silu(gate), limit) clamp(up, -limit, "
                           "limit)", "float32, rounded once"),
    "aclnnMaxPool3D": _f("the maximum of each window (VALID, SAME or CALCULATED padding, "
                         "padding taking no part)", "exact, NaN propagating"),
    "aclnnMaxPool3dWithArgmax": _f("the maximum of each window, its index d H W + h W + w",
                                   "as aclnnMaxPool2dWithIndices, over three dims"),
    "aclnnMaxPool3dWithArgmaxBackward": _f("each output's gradient to the element its index "
                                           "names, summed", "the same (bincount in float64)"),
    "aclnnMaxPool": _f("the maximum of each window (ONNX MaxPool, pads top, left, bottom, "
                       "right)", "as aclnnMaxPool2dWithIndices's maxima", EXACT),
    "aclnnMaxUnpool2dBackward": _f("out = gradOutput at indices, per plane",
                                   "the same (an index outside the plane gives 0)", EXACT),
    "aclnnMaxUnpool3dBackward": _f("out = gradOutput at indices, per plane",
                                   "the same (an index outside the plane gives 0)", EXACT),
    "aclnnReflectionPad1d": _f("self padded over its last 1 dim(s), mirrored without "
                             "repeating the edge",
                             "each dim read through its index map", EXACT),
    "aclnnReflectionPad1dBackward": _f("the output gradient summed back onto the input "
                                     "element each padded position read",
                                     "per dim, the gradient times the one-hot index map"),
    "aclnnReflectionPad2d": _f("self padded over its last 2 dim(s), mirrored without "
                             "repeating the edge",
                             "each dim read through its index map", EXACT),
    "aclnnReflectionPad2dBackward": _f("the output gradient summed back onto the input "
                                     "element each padded position read",
                                     "per dim, the gradient times the one-hot index map"),
    "aclnnReflectionPad3d": _f("self padded over its last 3 dim(s), mirrored without "
                             "repeating the edge",
                             "each dim read through its index map", EXACT),
    "aclnnReflectionPad3dBackward": _f("the output gradient summed back onto the input "
                                     "element each padded position read",
                                     "per dim, the gradient times the one-hot index map"),
    "aclnnReplicationPad1d": _f("self padded over its last 1 dim(s), the edge repeated",
                             "each dim read through its index map", EXACT),
    "aclnnReplicationPad1dBackward": _f("the output gradient summed back onto the input "
                                     "element each padded position read",
                                     "per dim, the gradient times the one-hot index map"),
    "aclnnReplicationPad2d": _f("self padded over its last 2 dim(s), the edge repeated",
                             "each dim read through its index map", EXACT),
    "aclnnReplicationPad2dBackward": _f("the output gradient summed back onto the input "
                                     "element each padded position read",
                                     "per dim, the gradient times the one-hot index map"),
    "aclnnReplicationPad3d": _f("self padded over its last 3 dim(s), the edge repeated",
                             "each dim read through its index map", EXACT),
    "aclnnReplicationPad3dBackward": _f("the output gradient summed back onto the input "
                                     "element each padded position read",
                                     "per dim, the gradient times the one-hot index map"),
    "aclnnCircularPad2d": _f("self padded over its last 2 dim(s), wrapped around",
                             "each dim read through its index map", EXACT),
    "aclnnCircularPad2dBackward": _f("the output gradient summed back onto the input "
                                     "element each padded position read",
                                     "per dim, the gradient times the one-hot index map"),
    "aclnnCircularPad3d": _f("self padded over its last 3 dim(s), wrapped around",
                             "each dim read through its index map", EXACT),
    "aclnnCircularPad3dBackward": _f("the output gradient summed back onto the input "
                                     "element each padded position read",
                                     "per dim, the gradient times the one-hot index map"),
    "aclnnDiag": _f("a 1-d self on the diagonal-th diagonal of a square matrix; a 2-d "
                    "self's diagonal-th diagonal (torch.diag)", "the same", EXACT),
    "aclnnDiagFlat": _f("self flattened onto the diagonal-th diagonal of a square matrix",
                        "the same", EXACT),
    "aclnnInplaceFillDiagonal": _f("fillValue on the main diagonal; a tall matrix with wrap "
                                   "restarts every columns + 1 rows", "the same", EXACT),
    "aclnnFlatten": _f("self as (prod of the dims before axis, prod of the rest)", "a reshape",
                       EXACT),
    "aclnnSlice": _f("self[start:end:step] along dim, clamped", "the same", EXACT),
    "aclnnSliceV2": _f("self sliced along each of axes by starts, ends, steps", "the same",
                       EXACT),
    "aclnnChannelShuffle": _f("(N, g, C / g, ...) transposed to (N, C / g, g, ...)", "the same",
                              EXACT),
    "aclnnChunkCat": _f("each tensor cut along dim 0 into numChunks zero-padded chunks, chunk i "
                        "of each in row i (torch._chunk_cat)", "the same", EXACT),
    "aclnnIm2col": _f("every kH x kW block of the zero-padded self as a column (PyTorch's "
                      "unfold)", "strided windows, transposed", EXACT),
    "aclnnUnfoldGrad": _f("each window's gradient summed back onto the elements it took "
                          "(the gradient of Tensor.unfold)", "one strided add per window "
                          "position"),
    "aclnnStridedSliceAssignV2": _f("varRef[begin:end:strides along axes] = inputValue",
                                    "the same", EXACT),
    "aclnnEmbedding": _f("out[i] = weight[indices[i]]",
                         "the same; an index outside [0, rows) fails the synchronisation "
                         "(the doc: negative is an error, past the end undefined)", EXACT),
    # matmul
    "aclnnMm": _f("self @ mat2", "numpy's matmul (BLAS)", CUBE),
    "aclnnMatmul": _f("self @ mat2, 1-d to 6-d", "numpy's matmul, batches broadcast", CUBE),
    "aclnnBatchMatMul": _f("self @ mat2, 3-d, a batch of 1 broadcasts", "numpy's matmul", CUBE),
    "aclnnMv": _f("input vec", "numpy's matmul", CUBE),
    "aclnnAddmm": _f("beta self + alpha (mat1 @ mat2)",
                     "as CANN's graphs (op_api/aclnn_addmm.cpp): alpha 0 gives beta self, beta "
                     "0 alpha (mat1 @ mat2), NaN in the part left out included", CUBE),
    "aclnnBaddbmm": _f("beta self + alpha (batch1 @ batch2); beta 0 ignores self",
                       "the same (beta within float32's epsilon of 0)", CUBE),
    "aclnnGemm": _f("out = alpha (A @ B) + beta C, A and B transposed when transA, transB",
                    "the same, C broadcast to [m, n]", CUBE),
    # quant (ops-nn quant/ascend_quant_v2, quant/ascend_anti_quant_v2 docs)
    "aclnnTransMatmulWeight": _f("the weight in place as FRACTAL_NZ blocks: storage [..., "
                                 "ceil(n / c0), ceil(k / 16), 16, c0], c0 32 bytes",
                                 "numpy reshapes; the format and storage shape set at phase 1"),
    "aclnnMatmulWeightNz": _f("self @ mat2, mat2 FRACTAL_NZ", "its matrix read back from the "
                              "blocks, numpy's matmul", CUBE),
    "aclnnBatchMatMulWeightNz": _f("self @ mat2, 3-d, mat2 FRACTAL_NZ", "its matrices read "
                                   "back from the blocks, numpy's matmul", CUBE),
    "aclnnTransQuantParamV2": _f("out = float32 bits & 0xFFFFE000 | 1 << 46 | int9(rint(offset))"
                                 " << 37", "the same, numpy bit operations"),
    "aclnnTransQuantParamV3": _f("TransQuantParamV2's; roundMode 1 rounds the float32 to 10 "
                                 "mantissa bits (ties to even)", "the same, numpy bit operations"),
    "aclnnQuantMatmulV3": _f("out = (x1 @ x2 + bias) scale + offset, or x1 @ x2 scale + bias",
                             "x1 @ x2 exact (float64 BLAS of int8, then int32), a uint64 scale "
                             "its low 32 bits as float32, float32 rounded once"),
    "aclnnAddRmsNormQuant": _f("x = x1 + x2; y = x / sqrt(mean(x^2) + epsilon) gamma; yiOut = "
                               "round(y / scalesi + zeroPointsi) (y scalesi without divMode)",
                               "float16: x and y gamma rounded to float16; float32 quantisation, "
                               "ties to even, saturated, NaN 0"),
    "aclnnRmsNormQuant": _f("y = round((x / sqrt(mean(x^2) + epsilon) gamma + beta) / scale + "
                            "offset)", "float32, then float16, saturated, ties to even; "
                            "scale[0] and offset[0]; NaN 0"),
    "aclnnQuantMatmulV2": _f("out = (x1 @ x2 + bias) deqScale, deqScale's first n values "
                             "per column", "as QuantMatmulV3, out float16"),
    "aclnnQuantMatmulV4": _f("QuantMatmulV3's, times pertokenScale per row",
                             "as QuantMatmulV3"),
    "aclnnQuantMatmulWeightNz": _f("QuantMatmulV4's with x2 FRACTAL_NZ (x2Scale the scale, "
                                   "x1Scale per token)", "as QuantMatmulV3"),
    "aclnnDynamicQuant": _f("per row: s = 127 / max|x smooth|; scaleOut = 1 / s; y = round(x "
                            "smooth s)", "float32, ties to even, saturated into int8"),
    "aclnnDynamicQuantV2": _f("DynamicQuant's (smooth per group); with offsetOut: scale = "
                              "(max - min) / 255, offset = 127 - max / scale, y = round(x / "
                              "scale + offset)", "float32, ties to even, saturated into int8"),
    "aclnnAddbmm": _f("beta self + alpha sum_b batch1[b] @ batch2[b]",
                      "one numpy matmul of the batch laid along k", CUBE),
    "aclnnFakeQuantPerTensorAffineCachemask": _f(
        "q = round(self / scale) + zero_point; out = (clamp(q, quant_min, quant_max) - "
        "zero_point) scale; mask = quant_min <= q <= quant_max", "float32, self times 1 / scale,"
        " ties to even; out = self, mask true when fakeQuantEnabled < 1"),
    "aclnnFakeQuantPerChannelAffineCachemask": _f(
        "FakeQuantPerTensorAffineCachemask's, scale and zero_point along axis",
        "float32, self times 1 / scale, ties to even"),
    "aclnnAscendQuant": _f("y = round(x scale + offset); scale squared when sqrtMode",
                           "float32, rounded by roundMode (round: ties to even), saturated "
                           "into int8"),
    "aclnnAscendQuantV3": _f("y = round(x scale + offset), scale and offset along x's axis",
                             "AscendQuant's, a 1-d scale and offset laid along axis"),
    "aclnnAscendAntiQuant": _f("y = cast((x + offset) scale); scale squared when sqrtMode",
                               "float32, rounded once into float16 or bfloat16"),
    # shapes
    "aclnnCat": _f("", "numpy's concatenate", EXACT),
    "aclnnStack": _f("", "numpy's stack", EXACT),
    "aclnnSplitTensor": _f("", "pieces of splitSections, the last the rest", EXACT),
    "aclnnSplitWithSize": _f("", "pieces of splitSize", EXACT),
    "aclnnGather": _f("out[.., i_d, ..] = self[.., index[.., i_d, ..], ..]",
                      "one flat gather; index in [-n, n - 1], else the synchronisation fails",
                      EXACT),
    "aclnnGatherV2": _f("self indexed by index along dim", "numpy's take; index in [-n, n)",
                        EXACT),
    "aclnnIndexSelect": _f("self indexed by index along dim", "numpy's take; index in [0, n)",
                           EXACT),
    "aclnnTake": _f("out_i = self.flat[index_i]", "numpy's take; index in [0, size)", EXACT),
    "aclnnScatter": _f("self with src written (reduce 0), added (1) or multiplied (2) at "
                       "index along dim", "numpy's fancy assignment, add.at over flat indices "
                       "or multiply.at; index in [0, n)"),
    "aclnnScatterAdd": _f("self with src added at index along dim",
                          "numpy's add.at over flat indices; index in [0, n)"),
    "aclnnIndexFill": _f("value at index along dim (negative from the end, out of range "
                         "skipped)", "the same", EXACT),
    "aclnnMaskedSelect": _f("self where mask, one-dimensional", "numpy's boolean indexing",
                            EXACT),
    "aclnnFlip": _f("out(i) = input(dimSize - 1 - i) on dims", "numpy's flip", EXACT),
    "aclnnRoll": _f("", "numpy's roll", EXACT),
    "aclnnPermute": _f("", "numpy's transpose", EXACT),
    "aclnnExpand": _f("self broadcast to size", "numpy's broadcast_to", EXACT),
    "aclnnRepeat": _f("", "numpy's tile", EXACT),
    "aclnnTril": _f("self where i + diagonal >= j, else 0", "numpy's tril", EXACT),
    "aclnnTriu": _f("self where i + diagonal <= j, else 0", "numpy's triu", EXACT),
    "aclnnSort": _f("sort and argsort along dim", "a stable argsort in the values' own dtype "
                    "(int64 exact); NaN last ascending, first descending", EXACT),
    "aclnnArgsort": _f("argsort along dim", "as aclnnSort", EXACT),
    "aclnnTopk": _f("", "argpartition, then the k sorted as aclnnSort (all sorted when k is "
                    "over a quarter of the dimension)", EXACT,
                    "ops-math/math/topk/docs/aclnnTopk.md"),
    "aclnnArange": _f("out_(i+1) = out_i + step from start", "start + step i in float64, "
                      "rounded once"),
    "aclnnLinspace": _f("start, start + (end - start)/(steps - 1), ..., end",
                        "numpy's linspace in float64, rounded once"),
    "aclnnEye": _f("", "0 everywhere, 1 on the diagonal", EXACT),
    "aclnnConstantPadNd": _f("self padded with value, pad pairs from the last dimension",
                             "a negative width crops, a positive one pads (numpy's pad)",
                             EXACT),
    # the C kernels' losses
    "aclnnMseLoss": _f("(x - y)^2, or its mean or sum", "the emulator's C kernel "
                       "(op_mse_loss.c), per element in float32"),
    "aclnnMseLossBackward": _f("grad (x - y) 2, divided by x.numel() for mean",
                               "the emulator's C kernel (op_mse_loss_backward.c)"),
    "aclnnL1Loss": _f("|x - y|, or its mean or sum", "the emulator's C kernel (op_l1_loss.c)"),
    "aclnnL1LossBackward": _f("", "the emulator's C kernel (op_l1_loss_backward.c): grad "
                              "sign(x - y), divided by the size for mean"),
    "aclnnSmoothL1Loss": _f("0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = x - y), "
                            "or its mean or sum", "the emulator's C kernel "
                            "(op_smooth_l1_loss.c)"),
    "aclnnSmoothL1LossBackward": _f("d where |d| < 1, else sign(d) (the doc's beta 1)",
                                    "the emulator's C kernel (op_smooth_l1_loss_backward.c): "
                                    "grad (d / beta or sign(d))"),
}


# The foreach family (ops-nn foreach/*/docs/aclnnForeach*.md): y_i = f(x_i, ...) for each
# tensor i of the lists, f computed as the single-tensor kernel computes it.
_FOREACH_UNARY = {**{name: _UNARY[name] for name in (
    "Abs", "Acos", "Asin", "Atan", "Cos", "Cosh", "Exp", "Expm1", "Log", "Log10", "Log1p",
    "Log2", "Neg", "Reciprocal", "Sigmoid", "Sign", "Sin", "Sinh", "Sqrt", "Tan", "Tanh")},
    "Erf": ("erf(x)", "as aclnnErf"),
    "Erfc": ("1 - erf(x)", "float64: erfc's continued fraction from |x| = 1.5, 1 - erf's "
             "series below; float32/16/bf16: Numerical Recipes' Chebyshev fit (1.05e-7 "
             "relative) in float64; 2 - erfc(-x) for x < 0; rounded once")}
_FOREACH_BINARY = {"Mul": "x1 x2", "Div": "x1 / x2", "Maximum": "max(x1, x2)",
                   "Minimum": "min(x1, x2)", "Pow": "x1 ^ x2"}

FORMULAS.update({
    **{f"aclnnForeach{name}": _f(f"y_i = {doc.replace('x', 'x_i')}", kernel + ", per tensor")
       for name, (doc, kernel) in _FOREACH_UNARY.items()},
    **{f"aclnnForeach{name}List": _f(f"y_i = {doc.replace('x1', 'x1_i').replace('x2', 'x2_i')}",
                                     "numpy's operation per tensor pair; integers in int32")
       for name, doc in _FOREACH_BINARY.items()},
    **{f"aclnnForeach{name}{suffix}": _f(
        f"y_i = {doc.replace('x1', 'x_i').replace('x2', 'scalar')}",
        "numpy's operation per tensor, the scalar in the compute dtype")
       for name, doc in _FOREACH_BINARY.items() for suffix in ("Scalar", "ScalarV2")},
    **{f"aclnnForeach{name}ScalarList": _f(
        f"y_i = {doc.replace('x1', 'x_i').replace('x2', 'scalars_i')}",
        "numpy's operation per tensor, scalars_i stored as nnopbase stores it (float32, or "
        "int64 for an int32 list), then in the compute dtype")
       for name, doc in _FOREACH_BINARY.items()},
    **{f"aclnnForeach{name}ScalarList": _f(
        f"y_i = x_i {sign} scalars_i",
        "numpy's operation per tensor, scalars_i stored as nnopbase stores it")
       for name, sign in (("Add", "+"), ("Sub", "-"))},
    **{f"aclnnForeach{name}{suffix}": _f(f"y_i = x_i {sign} scalar",
                                         "numpy's operation per tensor")
       for name, sign in (("Add", "+"), ("Sub", "-")) for suffix in ("Scalar", "ScalarV2")},
    **{f"aclnnForeach{name}{suffix}": _f(f"y_i = x1_i {sign} alpha x2_i",
                                         "alpha x2_i, then the sum, per tensor")
       for name, sign in (("Add", "+"), ("Sub", "-")) for suffix in ("List", "ListV2")},
    **{f"aclnnForeach{name}{suffix}": _f(
        f"y_i = x1_i + {value} (x2_i {op} x3_i)",
        f"x2_i {op} x3_i, times the scalar, plus x1_i, per tensor")
       for name, op in (("Addcdiv", "/"), ("Addcmul", "*"))
       for suffix, value in (("List", "scalars_i"), ("ScalarList", "scalars_i"),
                             ("Scalar", "scalar"), ("ScalarV2", "scalar"))},
    "aclnnForeachPowScalarAndTensor": _f("y_i = scalar ^ x_i", "numpy's power per tensor"),
    "aclnnForeachCopy": _f("y_i = x_i", "numpy's copyto", EXACT),
    "aclnnForeachZeroInplace": _f("x_i = 0", "a fill", EXACT),
    "aclnnForeachLerpList": _f("y_i = x1_i + weight_i (x2_i - x1_i)", "as aclnnLerp"),
    "aclnnForeachLerpScalar": _f("y_i = x1_i + weight (x2_i - x1_i)", "as aclnnLerp"),
    "aclnnForeachNorm": _f("y_i = (sum |x_i|^p)^(1/p)",
                           "in float64 (p = inf the max, p = 0 the count of non-zeros, as "
                           "PyTorch's vector norm), rounded once"),
    "aclnnForeachNonFiniteCheckAndUnscale": _f(
        "foundInf = 1 when a scaledGrads_i holds inf or NaN; scaledGrads_i *= invScale",
        "numpy's isfinite, then the product per tensor"),
    **{name: _f("y_i = round(x_i, roundMode)",
                "1 ties to even, 2 floor, 3 ceil, 4 ties away from zero, 5 trunc, 7 the "
                "fraction, others x itself (CANN's kernel: op_kernel/"
                "foreach_round_off_number.h); integers are themselves", EXACT)
       for name in ("aclnnForeachRoundOffNumber", "aclnnForeachRoundOffNumberV2")},
})


def _inplace_formulas() -> dict[str, Formula]:
    """The in-place forms computed through their out-of-place kernel (kernels/inplace.py)."""
    from .inplace import INPLACE_OF

    return {name: FORMULAS[base]._replace(
        doc=(FORMULAS[base].doc + ", into the first tensor") if FORMULAS[base].doc else "",
        kernel=f"as {base}, on a copy of the first tensor, into it")
        for name, base in INPLACE_OF.items() if base in FORMULAS}  # the rest: a later call


FORMULAS.update({
    "aclnnClampTensor": _f("min(max(self, clipValueMin), clipValueMax), bounds broadcast",
                           "numpy's maximum then minimum in the promoted dtype; NaN "
                           "propagates"),
    "aclnnClampMinTensor": _f("max(self, clipValueMin)", "as aclnnClampTensor"),
    "aclnnClampMaxTensor": _f("min(self, max)", "as aclnnClampTensor"),
    "aclnnInplaceFillTensor": _f("selfRef = value (one element)", "a fill", EXACT),
    "aclnnInplaceMaskedFillTensor": _f("selfRef = value where mask", "numpy's boolean "
                                       "assignment", EXACT),
})
FORMULAS.update({
    "aclnnSelu": _f("scale (max(0, x) + min(0, alpha (e^x - 1))), alpha 1.6733, scale 1.0507",
                    "numpy's expm1 below 0"),
    "aclnnSoftsign": _f("x / (1 + |x|)", "the same"),
    "aclnnLogSigmoid": _f("log(1 / (1 + e^-x))", "min(x, 0) - log1p(e^-|x|) (no overflow)"),
    "aclnnSquaredRelu": _f("max(0, x)^2", "the same"),
    "aclnnAcosh": _f("ln(x + sqrt(x^2 - 1))", "numpy's arccosh"),
    "aclnnAsinh": _f("ln(x + sqrt(x^2 + 1))", "numpy's arcsinh"),
    "aclnnCelu": _f("max(0, x) + min(0, alpha (e^(x / alpha) - 1))", "numpy's expm1 below 0"),
    "aclnnHardshrink": _f("x where |x| > lambd, else 0", "the same"),
    "aclnnSoftshrink": _f("x - lambd above lambd, x + lambd below -lambd, else 0",
                          "the same; NaN stays"),
    "aclnnThreshold": _f("x where x > threshold, else value", "the same, selected by bit masks "
                         "(no branch on the data); NaN stays"),
    "aclnnInplaceThreshold": _f("x where x > threshold, else value, into selfRef",
                                "as aclnnThreshold"),
    "aclnnSwish": _f("x sigmoid(beta x)", "x / (1 + exp(-beta x)), beta 1 when left out"),
    "aclnnPrelu": _f("max(0, x) + a min(0, x)", "a: one weight, or one per channel (dim 1)"),
    "aclnnAddRelu": _f("relu(self + alpha other)", "the sum, then max(0, .); NaN stays"),
    "aclnnInplaceAddRelu": _f("relu(self + alpha other), into selfRef", "as aclnnAddRelu"),
    "aclnnSignbit": _f("whether the sign bit is set", "numpy's signbit", EXACT),
    "aclnnNanToNum": _f("NaN -> nan, +inf -> posinf, -inf -> neginf",
                        "numpy's where; a replacement beyond out's range takes its largest "
                        "finite value, as PyTorch's"),
    "aclnnHeaviside": _f("0 for input < 0, values for input = 0, 1 for input > 0",
                         "the same; NaN gives 0, as PyTorch's"),
    "aclnnLogit": _f("ln(z / (1 - z)), z clamped to [eps, 1 - eps] when eps >= 0",
                     "the same"),
    "aclnnIsClose": _f("|self - other| <= atol + rtol |other|",
                       "the same in the promoted dtype (float32 for the halves); equal values "
                       "are close, NaN with NaN when equalNan"),
})
FORMULAS.update({
    # ops-math math/: the pointwise family (kernels/pointwise_math.py)
    "aclnnErfc": _f("1 - erf(x)", "float64: 1 - erf below |x| = 1.5, Laplace's continued "
                    "fraction above (no cancellation in the tail)"),
    "aclnnExp2": _f("2^x", "numpy's exp2"),
    "aclnnSinc": _f("1 at x = 0, else sin(pi x) / (pi x)", "the same, in float64"),
    "aclnnLgamma": _f("ln|Gamma(x)|", "Python's math.lgamma in float64; +inf at the poles"),
    "aclnnDigamma": _f("d/dx ln Gamma(x)", "float64: reflection below 0.5, recurrence up to 10, "
                       "then the asymptotic series; PyTorch's values at the poles"),
    "aclnnAtanh": _f("(1/2) ln((1 + x) / (1 - x))", "numpy's arctanh"),
    "aclnnIsFinite": _f("whether x is neither inf nor NaN", "numpy's isfinite; integers are "
                        "finite", EXACT),
    "aclnnIsInf": _f("whether x is +inf or -inf", "numpy's isinf", EXACT),
    "aclnnIsPosInf": _f("whether x is +inf", "numpy's isposinf", EXACT),
    "aclnnIsNegInf": _f("whether x is -inf", "numpy's isneginf", EXACT),
    "aclnnLogAddExp": _f("m + ln(1 + e^-|x - y|), m = max(x, y)", "numpy's logaddexp"),
    "aclnnLogAddExp2": _f("log2(2^x + 2^y)", "numpy's logaddexp2"),
    "aclnnXLogYTensor": _f("self ln(other)", "the same; 0 where self is 0 and other is not NaN "
                           "(CANN's kernel selects it)"),
    "aclnnXLogYScalarSelf": _f("self ln(other), self a scalar", "as aclnnXLogYTensor"),
    "aclnnXLogYScalarOther": _f("self ln(other), other a scalar", "as aclnnXLogYTensor"),
    "aclnnFmodTensor": _f("self - trunc(self / other) other", "numpy's fmod (exact)"),
    "aclnnFmodScalar": _f("self - trunc(self / other) other, other a scalar", "numpy's fmod"),
    "aclnnRemainderTensorTensor": _f("self - floor(self / other) other",
                                     "numpy's remainder (the divisor's sign)"),
    "aclnnRemainderTensorScalar": _f("self - floor(self / other) other, other a scalar",
                                     "numpy's remainder"),
    "aclnnRemainderScalarTensor": _f("self - floor(self / other) other, self a scalar",
                                     "numpy's remainder"),
    "aclnnFloorDivides": _f("floor(self / other), other a scalar", "as aclnnFloorDivide"),
    "aclnnGcd": _f("the greatest common divisor", "numpy's gcd", EXACT),
    "aclnnRoundDecimals": _f("x rounded to decimals places", "round(x 10^d) / 10^d (ties to "
                             "even), round(x / 10^-d) 10^-d for d < 0, as PyTorch's"),
    # the bitwise family (kernels/bitwise.py)
    "aclnnBitwiseAndTensor": _f("self & other", "numpy's bitwise_and", EXACT),
    "aclnnBitwiseAndScalar": _f("self & other, other a scalar", "numpy's bitwise_and", EXACT),
    "aclnnBitwiseOrTensor": _f("self | other", "numpy's bitwise_or", EXACT),
    "aclnnBitwiseOrScalar": _f("self | other, other a scalar", "numpy's bitwise_or", EXACT),
    "aclnnBitwiseXorTensor": _f("self ^ other", "numpy's bitwise_xor", EXACT),
    "aclnnBitwiseXorScalar": _f("self ^ other, other a scalar", "numpy's bitwise_xor", EXACT),
    "aclnnBitwiseNot": _f("~self (logical not of a bool)", "numpy's invert", EXACT),
    "aclnnLeftShift": _f("self << shiftBits", "numpy's left_shift", EXACT),
    "aclnnLeftShifts": _f("self << shiftBits, shiftBits a scalar", "numpy's left_shift", EXACT),
    "aclnnRightShift": _f("input >> shiftBits", "numpy's right_shift (arithmetic)", EXACT),
    # reductions along dimensions (kernels/dim_reductions.py)
    "aclnnAll": _f("whether every element along dim is nonzero", "numpy's all", EXACT),
    "aclnnAny": _f("whether some element along dim is nonzero", "numpy's any", EXACT),
    "aclnnMaxDim": _f("the maximum along dim and its index", "numpy's argmax (the first; NaN "
                      "wins), its value taken", EXACT),
    "aclnnMinDim": _f("the minimum along dim and its index", "numpy's argmin (the first; NaN "
                      "wins), its value taken", EXACT),
    "aclnnAminmax": _f("the minimum and the maximum over dim", "numpy's min and max", EXACT),
    "aclnnAminmaxDim": _f("the minimum and the maximum along dim", "numpy's min and max", EXACT),
    "aclnnAminmaxAll": _f("the minimum and the maximum of every element", "numpy's min and max",
                          EXACT),
    "aclnnLogSumExp": _f("ln(sum exp(x)) over dim", "m + ln(sum exp(x - m)), m the maximum"),
    "aclnnReduceNansum": _f("the sum over dim, NaN counted as 0", "numpy's nansum in out's "
                            "compute dtype"),
    "aclnnProdDim": _f("the product along dim", "numpy's prod in out's compute dtype"),
    "aclnnCumprod": _f("y_i = x_1 x_2 ... x_i along dim", "numpy's cumprod in out's compute "
                       "dtype"),
    "aclnnCummax": _f("the running maximum along dim and its index", "a pass along dim, the "
                      "last index on ties (x >= the maximum), NaN kept", EXACT),
    "aclnnCummin": _f("the running minimum along dim and its index", "as aclnnCummax", EXACT),
    "aclnnMaxN": _f("the elementwise maximum of the tensors, broadcast", "numpy's maximum "
                    "(NaN propagates)"),
    "aclnnMinN": _f("the elementwise minimum of the tensors, broadcast", "numpy's minimum "
                    "(NaN propagates)"),
    "aclnnEqual": _f("whether self and other have the same shape and elements",
                     "numpy's comparison (NaN unequal)", EXACT),
    "aclnnMaxV2": _f("the maximum over dims; self itself for empty dims with "
                     "noopWithEmptyDims", "numpy's max", EXACT),
    "aclnnMeanV2": _f("the mean over dim; self itself for empty dim with noopWithEmptyAxes",
                      "numpy's mean"),
    "aclnnReduceLogSum": _f("ln(sum x) over axes; data itself for empty axes with "
                            "noopWithEmptyAxes", "numpy's sum, then log"),
    "aclnnGlobalAveragePool": _f("the mean over the spatial dimensions (from dim 2)",
                                 "numpy's mean"),
    "aclnnGlobalMaxPool": _f("the maximum over the spatial dimensions (from dim 2)",
                             "numpy's max", EXACT),
    "aclnnVarMean": _f("sum (x - mean)^2 / (N - correction), and the mean, over dim",
                       "numpy's mean and a sum of squares"),
    "aclnnStdMeanCorrection": _f("sqrt(sum (x - mean)^2 / (N - correction)), and the mean",
                                 "as aclnnVarMean, then sqrt"),
    "aclnnGer": _f("out[i, j] = self[i] vec2[j]", "numpy's outer"),
    "aclnnAddr": _f("beta self + alpha (vec1 outer vec2)", "numpy's outer; self not read "
                    "when beta is 0, as PyTorch's"),
    "aclnnLinalgCross": _f("the cross product of the 3-vectors along dim", "numpy's cross "
                           "after broadcasting"),
    "aclnnCumsumV2": _f("the running sum along dim, from the end when reverse, each element "
                        "left out when exclusive", "numpy's cumsum (minus x when exclusive)"),
})
FORMULAS.update({
    # indexing (kernels/indexing.py)
    "aclnnIndexAdd": _f("out = self; out[..., index_i, ...] += alpha source[..., i, ...] along "
                        "dim", "numpy's add.at along dim; index in [0, n)"),
    "aclnnIndexAddV2": _f("as aclnnIndexAdd (mode picks CANN's kernel)", "as aclnnIndexAdd"),
    "aclnnIndexCopy": _f("outRef = selfRef with source's slices along dim at index",
                         "numpy's fancy assignment; index in [0, n)", EXACT),
    "aclnnInplaceIndexCopy": _f("selfRef's slices along dim at index = source's",
                                "as aclnnIndexCopy, into selfRef", EXACT),
    "aclnnIndexFillTensor": _f("value at index (an integer array) along dim",
                               "as aclnnIndexFill", EXACT),
    "aclnnIndex": _f("out = self[indices]", "numpy's advanced indexing (an empty index the "
                     "whole dimension, bool and uint8 ones masks)", EXACT),
    "aclnnScatterValue": _f("self with value written (reduce 0), added (1) or multiplied (2) at "
                            "index along dim", "as aclnnScatter with value broadcast to index"),
    "aclnnScatterReduce": _f("self with src reduced at index along dim (this SoC: float32, "
                             "sum, includeSelf)", "numpy's add.at over flat indices"),
    "aclnnScatterNd": _f("out = data; out[indices[i]] = updates[i]", "numpy's fancy "
                         "assignment over the rows of indices", EXACT),
    "aclnnScatterNdUpdate": _f("varRef[indices[i]] = updates[i]", "as aclnnScatterNd, into "
                               "varRef", EXACT),
    "aclnnTfScatterAdd": _f("varRef[indices[i]] += updates[i] along the first dimension",
                            "numpy's add.at"),
    "aclnnInplacePut": _f("selfRef.flat[index_i] = source_i (+= with accumulate)",
                          "numpy's assignment or add.at; a negative index from the end"),
    "aclnnGatherV3": _f("self's slices along dim at index", "numpy's take", EXACT),
    "aclnnEmbeddingDenseBackward": _f("out[w] = sum of grad's rows indexed w (none for "
                                      "paddingIdx), / count(w) with scaleGradByFreq",
                                      "numpy's add.at in float32 (float64 for float64)"),
    "aclnnEmbeddingBag": _f("the sum (times perSampleWeights), mean or max of each bag's rows "
                            "of weight, paddingIdx's rows left out; offset2bag, bagSize, "
                            "maxIndices", "numpy's gathers, rows added in passes"),
    "aclnnInplaceMaskedScatter": _f("selfRef where mask = source's first elements in order",
                                    "numpy's boolean assignment", EXACT),
    **{f"aclnnRepeatInterleave{form}": _f(doc, "numpy's repeat", EXACT) for form, doc in (
        ("", "self flattened, element i repeated repeats[i] times"),
        ("Int", "self flattened, each element repeated repeats times"),
        ("WithDim", "self's slice i along dim repeated repeats[i] times"),
        ("IntWithDim", "each slice along dim repeated repeats times"),
        ("Tensor", "i repeated repeats[i] times"))},
    "aclnnRepeatInterleaveGrad": _f("yGrad summed along axis over runs of repeats[i]",
                                    "numpy's add.reduceat"),
    "aclnnMedian": _f("the lower median of all elements (NaN if any)", "numpy's partition",
                      EXACT),
    "aclnnNanMedian": _f("the lower median of the elements that are not NaN",
                         "numpy's partition", EXACT),
    "aclnnMedianDim": _f("the lower median along dim and its index (NaN if the row holds one)",
                         "numpy's stable argsort", EXACT),
    "aclnnNanMedianDim": _f("the lower median along dim of the non-NaN elements, its index",
                            "numpy's stable argsort", EXACT),
    "aclnnKthvalue": _f("the k-th smallest along dim and its index", "numpy's stable argsort",
                        EXACT),
    "aclnnNonzero": _f("the coordinates of the non-zero elements, one row each",
                       "numpy's argwhere; out takes the count's extent", EXACT),
    "aclnnNonzeroV2": _f("the coordinates of the non-zero elements, one column each",
                         "numpy's argwhere, transposed; out takes the count's extent", EXACT),
    "aclnnUnique": _f("the distinct elements in ascending order, the inverse",
                      "numpy's unique; valueOut takes the count's extent", EXACT),
    "aclnnUniqueConsecutive": _f("each run of equal elements (slices) once, the inverse, the "
                                 "counts", "a comparison of neighbours", EXACT),
    "aclnnUniqueDim": _f("the distinct slices along dim in ascending order, the inverse, the "
                         "counts", "numpy's unique along an axis", EXACT),
    "aclnnInplaceIndexFill": _f("selfRef's slices at index along dim = value",
                                "as aclnnIndexFill, into selfRef", EXACT),
    "aclnnInplaceIndexFillTensor": _f("as aclnnInplaceIndexFill, index an integer array",
                                      "as aclnnIndexFill, into selfRef", EXACT),
    "aclnnInplaceScatter": _f("as aclnnScatter, into selfRef", "as aclnnScatter"),
    "aclnnInplaceScatterReduce": _f("as aclnnScatterReduce, into selfRef",
                                    "as aclnnScatterReduce"),
    "aclnnInplaceScatterValue": _f("as aclnnScatterValue, into selfRef",
                                   "as aclnnScatterValue"),
})
FORMULAS.update(_inplace_formulas())
FORMULAS.update({
    "aclnnHardshrinkBackward": _f("gradOutput where |x| > lambd, else 0",
                                  "the same; a NaN x passes gradOutput"),
    "aclnnSoftshrinkBackward": _f("gradOutput where |x| > lambda, else 0",
                                  "the same; a NaN x passes gradOutput"),
    "aclnnSwishBackward": _f("gradOutput sigmoid(beta x) (1 + beta x (1 - sigmoid(beta x)))",
                             "the same, sigmoid as 1 / (1 + exp(-beta x)), beta 1 when left "
                             "out"),
})
# the random fills (kernels/random_fills.py): numpy's Philox keyed by seed, its counter at
# offset; CANN's distributions, not its bit stream
_PHILOX = "Philox(seed, offset)"
_DRAWN = "drawn in float32 (float64 for double), rounded once; integers truncated"
FORMULAS.update({
    "aclnnInplaceNormal": _f("selfRef = mean + std N(0, 1)",
                             f"{_PHILOX}: standard normals scaled and shifted", _DRAWN),
    "aclnnInplaceNormalTensor": _f("selfRef = mean + std N(0, 1), seed and offset from "
                                   "tensors", "as aclnnInplaceNormal, offset = offsetTensor + "
                                   "offset", _DRAWN),
    "aclnnNormalFloatFloat": _f("out = mean + std N(0, 1)", _PHILOX, _DRAWN),
    "aclnnNormalFloatTensor": _f("out = mean + std_i N(0, 1)", _PHILOX, _DRAWN),
    "aclnnNormalTensorFloat": _f("out = mean_i + std N(0, 1)", _PHILOX, _DRAWN),
    "aclnnNormalTensorTensor": _f("out = mean_i + std_i N(0, 1), broadcast", _PHILOX, _DRAWN),
    "aclnnInplaceUniform": _f("selfRef = U[from, to)",
                              f"{_PHILOX}: from + (to - from) U[0, 1), kept below to", _DRAWN),
    "aclnnInplaceUniformTensor": _f("selfRef = U[from, to), seed and offset from tensors",
                                    "as aclnnInplaceUniform", _DRAWN),
    "aclnnInplaceRandom": _f("selfRef = integers uniform in [from, to)",
                             f"{_PHILOX}: numpy's integers, converted to selfRef's dtype",
                             _DRAWN),
    "aclnnInplaceRandomTensor": _f("as aclnnInplaceRandom, seed and offset from tensors",
                                   "as aclnnInplaceRandom", _DRAWN),
    "aclnnBernoulli": _f("out = 1 with probability prob, else 0",
                         f"{_PHILOX}: U[0, 1) < prob", EXACT),
    "aclnnBernoulliTensor": _f("out_i = 1 with probability prob_i, else 0",
                               "as aclnnBernoulli, prob broadcast", EXACT),
    "aclnnDropoutGenMask": _f("a bit mask keeping each element with probability 1 - prob",
                              f"{_PHILOX}: U[0, 1) >= prob, bits packed little-endian in "
                              "128-bit blocks", EXACT),
    "aclnnDropoutGenMaskV2": _f("as aclnnDropoutGenMask", "as aclnnDropoutGenMask", EXACT),
    "aclnnDropoutGenMaskV2Tensor": _f("as aclnnDropoutGenMask, seed and offset from tensors",
                                      "as aclnnDropoutGenMask", EXACT),
    "aclnnDropoutDoMask": _f("out_i = self_i / (1 - prob) where the mask keeps i, else 0",
                             "the same; prob 1 gives 0"),
    "aclnnDropoutBackward": _f("out_i = scale gradOutput_i where the mask keeps i, else 0",
                               "the same"),
    "aclnnMultinomial": _f("numsamples indices per row, drawn with probability proportional "
                           "to self", f"{_PHILOX}: with replacement the inverse of the "
                           "cumulative sums, without the top numsamples of self / Exp(1)",
                           EXACT),
    "aclnnMultinomialTensor": _f("as aclnnMultinomial, seed and offset from tensors",
                                 "as aclnnMultinomial", EXACT),
    "aclnnRandperm": _f("a random permutation of 0 .. n - 1",
                        f"{_PHILOX}: numpy's permutation", EXACT),
})
FORMULAS.update({  # kernels/counting.py
    "aclnnRange": _f("out_i = start + i step, end included when reached",
                     "the same in float64 (int64 for integer out), rounded once"),
    "aclnnOneHot": _f("out = onValue where the index along axis equals self, else offValue",
                      "numpy's comparison with the classes, then where", EXACT),
    "aclnnHistc": _f("the counts of self in bins equal-width bins over [min, max]",
                     "torch.histc's: min == max takes self's range; max in the last bin",
                     EXACT),
    "aclnnSearchSorted": _f("the insertion index of each value in its row of sortedSequence "
                            "(after equal ones when right)", "numpy's searchsorted per row",
                            EXACT),
    "aclnnSearchSorteds": _f("aclnnSearchSorted of one value", "as aclnnSearchSorted", EXACT),
    "aclnnIsInScalarTensor": _f("element in testElements (negated when invert)",
                                "numpy's isin", EXACT),
    "aclnnIsInTensorScalar": _f("element_i == testElement (negated when invert)",
                                "numpy's isin", EXACT),
    "aclnnAddN": _f("the elementwise sum of the tensors", "numpy's add in turn"),
    "aclnnSum": _f("the elementwise sum of the tensors, broadcast", "numpy's add in turn"),
})
_NO_HALVES = "no 16-bit dtypes"
FORMULAS.update({  # kernels/linalg.py: numpy's LAPACK routines per matrix of the batch
    "aclnnInverse": _f("self^-1 per matrix", "numpy's inv; a singular matrix gives NaN"),
    "aclnnLinalgCholesky": _f("L with self = L L^T, or U = L^T when upper",
                              "numpy's cholesky; a matrix not positive definite gives NaN"),
    "aclnnTriangularSolve": _f("X with op(T) X = self, T A's triangle; mOut = A broadcast",
                               "numpy's solve on the triangle (float32 or float64)", _NO_HALVES),
    "aclnnSlogdet": _f("sign and log|det| per matrix", "numpy's slogdet", _NO_HALVES),
    "aclnnLogdet": _f("log det per matrix (NaN when negative)", "numpy's slogdet", _NO_HALVES),
    "aclnnLinalgQr": _f("Q R = self, mode 0 reduced, 1 complete, 2 R only",
                        "numpy's qr (LAPACK Householder)"),
    "aclnnQr": _f("Q R = self, reduced when some", "numpy's qr (LAPACK Householder)"),
    "aclnnSvd": _f("input = u diag(sigma) v^H, sigma descending",
                   "numpy's svd (LAPACK gesdd); v is V, not V^H", _NO_HALVES),
})
FORMULAS.update({  # kernels/complex_numbers.py
    "aclnnComplex": _f("out = real + i imag, broadcast", "numpy's complex parts", EXACT),
    "aclnnReal": _f("out = the real part of self", "numpy's real", EXACT),
    "aclnnPolar": _f("out = input (cos angle + i sin angle)", "numpy's cos and sin in float32",
                     _NO_HALVES),
    "aclnnAngleV2": _f("out = angle(x) = atan2(imag x, real x)",
                       "numpy's angle; real x: pi when negative, else 0, NaN kept"),
})
FORMULAS.update({
    "aclnnCdist": _f("out[i, j] = ||x1_i - x2_j||_p, batch broadcast",
                     "the differences' p-norms without matrix products, rows in blocks"),
    "aclnnScale": _f("y = x scale + bias, scale laid along x from axis",
                     "the same, scale and bias broadcast"),
    "aclnnExpSegsum": _f("out[i, j] = exp(x[j+1] + ... + x[i]) for j <= i, 0 above the diagonal",
                         "the doc's masked cumulative sum along -2, then exp"),
    "aclnnExpSegsumBackward": _f(
        "gradInput[i] = sum over j < i <= k of gradOutput[k, j] gradSelf[k, j]",
        "the doc's masked product, reversed cumulative sum and row sum"),
    "aclnnQuantize": _f("out = round(x / scales + zeroPoints), scales along axis",
                        "the same in float32, ties to even, saturated into out's dtype"),
    "aclnnCdistBackward": _f("out = sum_j grad_ij diff |diff|^(p-2) / cdist_ij^(p-1), "
                             "diff = x1_i - x2_j",
                             "PyTorch's _cdist_backward (0 where cdist is 0; p -1 the infinity "
                             "norm), rows in blocks"),
    "aclnnBincount": _f("out[i] = the count of self == i, or the sum of its weights",
                        "torch.bincount's over max(out's size, minlength) bins; values outside "
                        "the bins not counted", EXACT),
    "aclnnInplaceCumprod": _f("input = the running product of input along dim",
                              "as aclnnCumprod, into input"),
})
FORMULAS.update(_inplace_formulas())
FORMULAS.update({
    # losses (kernels/losses.py)
    "aclnnKlDiv": _f("target (log target - self), or e^target (target - self) with logTarget; "
                     "none, mean, sum or sum / batch (batchmean)",
                     "the same; 0 where target is 0 (the kernel's select of 1 before the log)"),
    "aclnnKlDivBackward": _f("the gradient of aclnnKlDiv in self",
                             "-target g (-e^target g with logTarget), / count (mean) or / "
                             "batch (batchmean), summed back to self's shape"),
    "aclnnKlDivTargetBackward": _f("g (log target - self + 1), or g e^target (target - self + "
                                   "1) with logTarget", "the same, g divided first for mean "
                                   "and batchmean, as the op_api does"),
    "aclnnSoftMarginLoss": _f("log(1 + e^(-target self)); none, mean or sum",
                              "the same without overflow (max(z, 0) + log1p(e^-|z|))"),
    "aclnnSoftMarginLossBackward": _f("the gradient of aclnnSoftMarginLoss",
                                      "-target sigmoid(-target self) g, / count for mean"),
    "aclnnBinaryCrossEntropyWithLogitsBackward": _f(
        "the gradient of aclnnBinaryCrossEntropyWithLogits",
        "g w ((1 + (p - 1) t) sigmoid(x) - p t), / count for mean"),
    "aclnnNLLLoss2d": _f("-w[t] self[n, t, h, w]; mean over the weights taken",
                         "the same; ignoreIndex positions 0"),
    "aclnnNLLLoss2dBackward": _f("-w[t] g at the target class, / totalWeight for mean",
                                 "the same; 0 elsewhere"),
    "aclnnCrossEntropyLoss": _f("-w[y] logProb[n, y] reduced (mean over the weights taken); "
                                "logProb = x - lse", "the same, with PyTorch's label "
                                "smoothing; the zloss outputs left as they are"),
    "aclnnCrossEntropyLossGrad": _f("the doc's: p w[t] g' (1 - e) m minus it at the target, "
                                    "plus p sum(s w) - s w; zloss terms when given",
                                    "the same, p = exp(logProb)"),
    "aclnnMultilabelMarginLoss": _f("sum over labels j and non-labels i of max(0, 1 - (x[j] - "
                                    "x[i])) / C", "the same, all pairs at once; isTarget "
                                    "marks the labels"),
    # activations, their gradients and the gated linear units
    "aclnnEluBackward": _f("g scale for x > 0; g inputScale (x + alpha scale) from the result, "
                           "g inputScale alpha scale e^(x inputScale) from the input",
                           "the same"),
    "aclnnSeluBackward": _f("g scale for result > 0, else g (result + alpha scale)",
                            "the same"),
    "aclnnPreluBackward": _f("gradInput g or g w; gradWeight the sum of g x where x <= 0 per "
                             "channel", "the same, summed in float32"),
    "aclnnLogSigmoidForward": _f("log(1 / (1 + e^-x)); buffer unused", "min(x, 0) - "
                                 "log1p(e^-|x|); buffer left as it is"),
    "aclnnLogSigmoidBackward": _f("g / (1 + e^x)", "g sigmoid(-x) without overflow"),
    "aclnnFastGelu": _f("x / (1 + e^(-1.702 x))", "the same"),
    "aclnnFastGeluBackward": _f("g ((s - 1) (-1.702 x) + 1) s, s = 1 / (1 + e^(-1.702 x))",
                                "the same"),
    "aclnnGeluBackwardV2": _f("g Gelu'(x), erf's or the tanh form's",
                              "erf: Phi(x) + x phi(x); tanh: as aclnnGeluBackward"),
    "aclnnHardswishBackwardV2": _f("g times 0 (x <= -3), x / 3 + 0.5, 1 (x >= 3)",
                                   "the same"),
    "aclnnShrink": _f("x - bias above lambd, x + bias below -lambd, else 0", "the same"),
    "aclnnLogitGrad": _f("dy / (x (1 - x)); 0 outside [eps, 1 - eps], NaN outside [0, 1] "
                         "when eps < 0", "the same"),
    "aclnnGeluMul": _f("Gelu(x1) x2, the halves of the last dimension", "the same"),
    "aclnnFatreluMul": _f("x1 (0 below threshold) x2", "the same"),
    "aclnnSwiGlu": _f("silu(A) B, the halves along dim", "the same"),
    "aclnnSwiGluGrad": _f("dA = g (s + s (1 - s) A) B, dB = g s A", "the same"),
    "aclnnGeGlu": _f("A Gelu(B); outGelu Gelu(B)", "the same"),
    "aclnnGeGluV3": _f("Gelu(A) B (activateLeft) or A Gelu(B)", "the same"),
    "aclnnGeGluBackward": _f("g gelu for the other half, g other Gelu' for the activated",
                             "the same, the gelu tensor given"),
    "aclnnGeGluV3Backward": _f("as aclnnGeGluBackward, the activated half chosen",
                               "the same"),
    "aclnnClippedSwiglu": _f("min(A, l) sigmoid(alpha min(A, l)) (clamp(B, -l, l) + bias), "
                             "rows past sum(groupIndex) 0", "the same over (pre, cut)"),
    "aclnnClippedSwigluV2": _f("aclnnClippedSwiglu, or min(silu(A), l) clamp(B, -l, l) "
                               "(clampMode 1)", "the same"),
    "aclnnClippedSwigluGrad": _f("the doc's steps: clamp masks, s = sigmoid(alpha x0')",
                                 "the same"),
    "aclnnSituGlu": _f("beta tanh(gate / beta) sigmoid(gate) up'", "the same"),
    "aclnnSituGluGrad": _f("the product rule of aclnnSituGlu", "the same, 1 - tanh^2 as "
                           "sech^2 without cancellation"),
    "aclnnSwigluGroup": _f("silu(A) B (clamped when clampLimit > 0) times the token's "
                           "weight", "the same; tokens past sum(groupIndex) 0"),
    "aclnnScaledMaskedSoftmax": _f("softmax(scale x, -10000 where mask) over the last "
                                   "dimension", "the same, in float32"),
    "aclnnScaledMaskedSoftmaxBackward": _f("(g y - sum(g y) y) scale, 0 where mask",
                                           "the same"),
    "aclnnRReluWithNoise": _f("x for x > 0, a x else, a ~ U(lower, upper) (training, into "
                              "noise) or (lower + upper) / 2",
                              "numpy's PCG64 seeded by (seed, offset): statistically "
                              "CANN's, not its bits"),
    "aclnnInplaceRReluWithNoise": _f("aclnnRReluWithNoise into self", "the same"),
    "aclnnCtcLoss": _f("-log p(l | x), the sum over the paths that collapse to l",
                       "the forward variables alpha (PyTorch's recursion), all samples at "
                       "once, a loop over time; logAlpha -inf outside the lengths"),
})
