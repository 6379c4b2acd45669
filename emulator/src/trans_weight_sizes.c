/*
 * The weight-size helpers of ops-math's trans_data (libopapi_math.so from 8.5): how many
 * elements a matmul or convolution weight takes once converted to the private format its
 * aclnnTransMatmulWeight / aclnnTransConvolutionWeight writes, so that the caller allocates it.
 *
 * Sources (hicann/ops-math c41933244): conversion/trans_data/docs/
 * aclnnCalculateMatmulWeightSizeV2.md, aclnnTransMatmulWeight.md (aclnnCalculateMatmulWeightSize),
 * aclnnCalculateConvolutionWeightSize.md; their checks and order in
 * conversion/trans_data/op_api/aclnn_trans_matmul_weight.cpp and
 * aclnn_trans_convolution_weight.cpp. For the emulator's SoC (Atlas A2, ascend910b):
 *   aclnnCalculateMatmulWeightSize(shape, size): shape, size NULL -> 161001; 2 to 6 dimensions
 *     -> else 161002; size = the product of the dimensions, the last two rounded up to
 *     multiples of 16 (the float16 blocks).
 *   aclnnCalculateMatmulWeightSizeV2(shape, dtype, size): the same NULL and rank checks, then
 *     no dimension 0 -> else 161002; float16 and bfloat16 round the last two dimensions up to
 *     16, any other dtype the second last to 16 and the last to 32 (int8 blocks).
 *   aclnnCalculateConvolutionWeightSize(shape, transposed, groups, dtype, size): shape, size
 *     NULL -> 161001; then 4 dimensions, not transposed, groups != 0 and the Atlas 300I Duo
 *     (ascend310p) SoC -> else 161002: on this SoC it always ends in 161002.
 */
#include "ops_core.h"

#define EMU_MATMUL_WEIGHT_MIN_DIMS 2
#define EMU_MATMUL_WEIGHT_MAX_DIMS 6
#define EMU_CONV_WEIGHT_DIMS 4

static int64_t round_up(int64_t value, int64_t block)
{
    return (value + block - 1) / block * block;
}

/* The shape's dimensions into dims (NULL checks of the shape and of size first: 161001). */
static aclnnStatus weight_shape(const char *api, const aclIntArray *tensorShape,
                                const uint64_t *weightTensorSize, int64_t *dims, uint64_t *n)
{
    if (tensorShape == NULL || weightTensorSize == NULL) {
        emu_error("%s: %s is NULL", api, tensorShape == NULL ? "tensorShape" : "weightTensorSize");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (!emu_int_array_read(tensorShape, n, NULL, 0))
        return ops_not_live(api, "tensorShape", "aclIntArray", "aclCreateIntArray");
    if (*n > EMU_MATMUL_WEIGHT_MAX_DIMS)
        return ACLNN_SUCCESS; /* refused by the caller's rank check */
    emu_int_array_read(tensorShape, n, dims, *n);
    return ACLNN_SUCCESS;
}

/* The matmul weight's element count: fp16_blocks rounds both last dimensions to 16, else the
 * last one to 32 (ops-math aclnn_trans_matmul_weight.cpp, CalculateMatmulWeightSize). */
static uint64_t matmul_weight_size(const int64_t *dims, uint64_t n, bool fp16_blocks)
{
    int64_t size = 1;
    for (uint64_t i = 0; i < n; i++) {
        if (i + 2 < n)
            size *= dims[i];
        else
            size *= round_up(dims[i], (i + 1 == n && !fp16_blocks) ? 32 : 16);
    }
    return (uint64_t)size;
}

static aclnnStatus matmul_rank(const char *api, uint64_t n)
{
    if (n < EMU_MATMUL_WEIGHT_MIN_DIMS || n > EMU_MATMUL_WEIGHT_MAX_DIMS) {
        emu_error("%s: tensorShape has %llu dimensions, 2 to 6 are supported", api, (unsigned long long)n);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

EMU_EXPORT aclnnStatus aclnnCalculateMatmulWeightSize(const aclIntArray *tensorShape,
                                                      uint64_t *weightTensorSize)
{
    static const char api[] = "aclnnCalculateMatmulWeightSize";
    int64_t dims[EMU_MATMUL_WEIGHT_MAX_DIMS];
    uint64_t n = 0;
    OPS_CHECK(weight_shape(api, tensorShape, weightTensorSize, dims, &n));
    OPS_CHECK(matmul_rank(api, n));
    *weightTensorSize = matmul_weight_size(dims, n, true);
    return ACLNN_SUCCESS;
}

EMU_EXPORT aclnnStatus aclnnCalculateMatmulWeightSizeV2(const aclIntArray *tensorShape,
                                                        aclDataType dataType,
                                                        uint64_t *weightTensorSize)
{
    static const char api[] = "aclnnCalculateMatmulWeightSizeV2";
    int64_t dims[EMU_MATMUL_WEIGHT_MAX_DIMS];
    uint64_t n = 0;
    OPS_CHECK(weight_shape(api, tensorShape, weightTensorSize, dims, &n));
    OPS_CHECK(matmul_rank(api, n));
    for (uint64_t i = 0; i < n; i++) {
        if (dims[i] == 0) {
            emu_error("%s: tensorShape[%llu] is 0 (no dimension may be 0)", api, (unsigned long long)i);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    *weightTensorSize = matmul_weight_size(dims, n, dataType == ACL_FLOAT16 || dataType == ACL_BF16);
    return ACLNN_SUCCESS;
}

EMU_EXPORT aclnnStatus aclnnCalculateConvolutionWeightSize(const aclIntArray *tensorShape,
                                                           bool transposed, int64_t groups,
                                                           aclDataType dataType,
                                                           uint64_t *weightTensorSize)
{
    static const char api[] = "aclnnCalculateConvolutionWeightSize";
    int64_t dims[EMU_MATMUL_WEIGHT_MAX_DIMS];
    uint64_t n = 0;
    (void)dataType;
    OPS_CHECK(weight_shape(api, tensorShape, weightTensorSize, dims, &n));
    if (n != EMU_CONV_WEIGHT_DIMS) {
        emu_error("%s: tensorShape has %llu dimensions, 4 are required", api, (unsigned long long)n);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (transposed) {
        emu_error("%s: transposed is true, only a non-transposed convolution is supported", api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (groups == 0) {
        emu_error("%s: groups is 0, it must be larger than 0", api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    emu_error("%s: supported on the Atlas 300I Duo (ascend310p) only, not on this Atlas A2 SoC",
              api);
    return ACLNN_ERR_PARAM_INVALID;
}
