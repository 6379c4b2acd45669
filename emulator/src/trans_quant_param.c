/*
 * aclnnTransQuantParam (libopapi_nn.so from 8.5): the quantisation parameters the quantised
 * matmuls take (a uint64 per channel), from float scales and offsets, in a host array the call
 * allocates with calloc and the caller frees.
 *
 * Source (hicann/ops-nn e5c3fa93): quant/trans_quant_param/docs/aclnnTransQuantParam.md; its
 * checks, their order and the encoding in quant/trans_quant_param/op_host/op_api/
 * aclnn_trans_quant_param.cpp and quant_util.cpp:
 *   1. offsetArray given with offsetSize 0, or NULL with offsetSize != 0; scaleArray NULL;
 *      scaleSize 0 -> 161002 (all of them: CANN maps this check's every failure to 161002)
 *   2. quantParam, quantParamSize NULL -> 161001
 *   3. size = max(scaleSize, offsetSize), rounded up to a multiple of 16 unless it is 1;
 *      the array zero-filled (calloc; 561103 when it cannot be had)
 *   4. each scale: its float32 bits | 1 << 46; then each offset, rounded to an integer (half
 *      away from zero) and clamped to [-256, 255], as 9 bits at bit 37, the entry first masked
 *      with 0x4000FFFFFFFF.
 */
#include "ops_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EMU_QUANT_ALIGN 16u
#define EMU_QUANT_SCALE_FLAG (1ULL << 46)
#define EMU_QUANT_OFFSET_MASK 0x1FFULL
#define EMU_QUANT_KEEP_MASK 0x4000FFFFFFFFULL
#define EMU_QUANT_OFFSET_SHIFT 37

static aclnnStatus quant_param_sizes(const char *api, const float *scaleArray, uint64_t scaleSize,
                                     const float *offsetArray, uint64_t offsetSize)
{
    if (offsetArray != NULL && offsetSize < 1) {
        emu_error("%s: offsetSize is 0 with an offsetArray given (it must be larger than 0)", api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (offsetArray == NULL && offsetSize != 0) {
        emu_error("%s: offsetArray is NULL, so offsetSize must be 0", api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (scaleArray == NULL) {
        emu_error("%s: scaleArray is NULL (it is required)", api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (scaleSize < 1) {
        emu_error("%s: scaleSize is 0 (it must be larger than 0)", api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

EMU_EXPORT aclnnStatus aclnnTransQuantParam(const float *scaleArray, uint64_t scaleSize,
                                            const float *offsetArray, uint64_t offsetSize,
                                            uint64_t **quantParam, uint64_t *quantParamSize)
{
    static const char api[] = "aclnnTransQuantParam";
    OPS_CHECK(quant_param_sizes(api, scaleArray, scaleSize, offsetArray, offsetSize));
    if (quantParam == NULL || quantParamSize == NULL) {
        emu_error("%s: %s is NULL", api, quantParam == NULL ? "quantParam" : "quantParamSize");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    uint64_t size = scaleSize > offsetSize ? scaleSize : offsetSize;
    if (size != 1 && size % EMU_QUANT_ALIGN != 0)
        size += EMU_QUANT_ALIGN - size % EMU_QUANT_ALIGN;
    *quantParamSize = size;
    *quantParam = calloc(size, sizeof(uint64_t));
    if (*quantParam == NULL) {
        emu_error("%s: cannot allocate %llu parameters", api, (unsigned long long)size);
        *quantParamSize = 0;
        return ACLNN_ERR_INNER_NULLPTR;
    }
    for (uint64_t i = 0; i < scaleSize; i++) {
        uint32_t bits;
        memcpy(&bits, &scaleArray[i], sizeof bits);
        (*quantParam)[i] = (uint64_t)bits | EMU_QUANT_SCALE_FLAG;
    }
    for (uint64_t i = 0; offsetArray != NULL && i < offsetSize; i++) {
        long value = lroundf(offsetArray[i]);
        value = value < -256 ? -256 : value > 255 ? 255 : value;
        (*quantParam)[i] &= EMU_QUANT_KEEP_MASK;
        (*quantParam)[i] |= ((uint64_t)value & EMU_QUANT_OFFSET_MASK) << EMU_QUANT_OFFSET_SHIFT;
    }
    return ACLNN_SUCCESS;
}
