/*
 * aclFloat16ToFloat and aclFloatToFloat16: the runtime's half-precision conversions, in the
 * saturating mode hicann/runtime include/external/acl/acl_base_rt.h documents for them (the
 * notes of both functions): no Inf or NaN on either side. A float is rounded to the nearest
 * half, ties to even.
 */
#include "rt_internal.h"

#include <math.h>

#define EMU_FP16_MAX_BITS 0x7BFFu /* 65504.0 */

EMU_EXPORT float aclFloat16ToFloat(aclFloat16 value)
{
    int sign = (value & 0x8000u) ? -1 : 1;
    int exponent = (value >> 10) & 0x1F;
    int mantissa = value & 0x3FF;
    /* Exponent 31 (Inf, NaN) is read as an ordinary exponent: 0x7C00 -> 65536.0, 0x7E00 ->
     * 98304.0, as the note of aclFloat16ToFloat lists. */
    if (exponent == 0)
        return (float)sign * ldexpf((float)mantissa, -24);
    return (float)sign * ldexpf((float)(1024 + mantissa), exponent - 25);
}

EMU_EXPORT aclFloat16 aclFloatToFloat16(float value)
{
    if (isnan(value))
        return (aclFloat16)EMU_FP16_MAX_BITS;
    uint16_t sign = signbit(value) ? 0x8000u : 0;
    float magnitude = fabsf(value);
    if (magnitude >= 65520.0f) /* rounds past 65504 (or Inf): saturate */
        return (aclFloat16)(sign | EMU_FP16_MAX_BITS);
    if (magnitude < ldexpf(1.0f, -14)) {
        /* Subnormal half: units of 2^-24, rounded to nearest even (rintf in the default
         * rounding mode); 1024 units is the smallest normal, which the encoding carries. */
        return (aclFloat16)(sign | (uint16_t)rintf(ldexpf(magnitude, 24)));
    }
    int exponent;
    float fraction = frexpf(magnitude, &exponent); /* magnitude = fraction * 2^exponent */
    /* 11 significant bits: mantissa in [1024, 2048], rounded to nearest even. */
    uint32_t mantissa = (uint32_t)rintf(ldexpf(fraction, 11));
    int biased = exponent - 1 + 15;
    if (mantissa == 2048) { /* rounding carried into the next binade */
        mantissa = 1024;
        biased++;
    }
    return (aclFloat16)(sign | (uint16_t)(biased << 10) | (uint16_t)(mantissa - 1024));
}
