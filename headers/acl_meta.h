/*
 * aclnn meta API (header family aclnn/acl_meta.h, aclnn/aclnn_base.h,
 * nnopbase/opdev/op_errno.h) -- the subset aclnn_py uses.
 *
 * Library: libnnopbase.so (every CANN release).
 * Sources: hicann/opbase include/nnopbase/aclnn/acl_meta.h, aclnn_base.h,
 * include/nnopbase/opdev/op_errno.h and
 * docs/en/api/nnopbase/opdev/aclnn_return_code/aclnn_return_codes.md.
 *
 * cdef-ready: no preprocessor conditionals, no includes; needs acl_rt.h first.
 */

typedef int32_t aclnnStatus;
typedef struct aclTensor aclTensor;
typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclTensorList aclTensorList;
typedef struct aclScalarList aclScalarList;

/* aclnnStatus codes (op_errno.h, where they are #defines). */
typedef enum {
    ACLNN_SUCCESS = 0,
    ACLNN_ERR_PARAM_NULLPTR = 161001,
    ACLNN_ERR_PARAM_INVALID = 161002,
    ACLNN_ERR_RUNTIME_ERROR = 361001,
    ACLNN_ERR_INNER = 561000,
    ACLNN_ERR_INNER_INFERSHAPE_ERROR = 561001,
    ACLNN_ERR_INNER_TILING_ERROR = 561002,
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR = 561003,
    ACLNN_ERR_INNER_CREATE_EXECUTOR = 561101,
    ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR = 561102,
    ACLNN_ERR_INNER_NULLPTR = 561103,
    ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE = 561104,
    ACLNN_ERR_INNER_KEY_CONFLICT = 561105,
    ACLNN_ERR_INNER_INVALID_IMPL_MODE = 561106,
    ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND = 561107,
    ACLNN_ERR_INNER_LOAD_JSON_FAILED = 561108,
    ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND = 561109,
    ACLNN_ERR_INNER_JSON_FORMAT_INVALID = 561110,
    ACLNN_ERR_INNER_JSON_DTYPE_INVALID = 561111,
    ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND = 561112,
    ACLNN_ERR_INNER_OP_FILE_INVALID = 561113,
    ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND = 561114,
    ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH = 561115,
    ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE = 561116,
    ACLNN_ERR_INNER_INPUT_JSON_IS_NULL = 561117,
    ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID = 561118,
    ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID = 561119
} aclnnStatusCode;

/* Tensors (acl_meta.h). Dims, strides and offset count elements, not bytes. */
aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData);
aclnnStatus aclDestroyTensor(const aclTensor *tensor);
/* Describe a live tensor anew, with aclCreateTensor's parameters. */
aclnnStatus aclInitTensor(aclTensor *tensor, const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                          const int64_t *stride, int64_t offset, aclFormat format,
                          const int64_t *storageDims, uint64_t storageDimsNum, void *tensorDataAddr);
aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset);
aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format);
aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType);
/*
 * The view shape, view strides and storage shape (acl_meta.h; opbase docs/en/api/nnopbase/aclnn/
 * aclGetViewShape.md, aclGetViewStrides.md, aclGetStorageShape.md): each returns a new array in
 * *values that the caller releases (CANN allocates it with new[]). After an operator whose output
 * size depends on the data (aclnnMaskedSelect), the output's view shape is the real one
 * (torch_npu's op-plugin MaskedSelectKernelNpuOpApi.cpp reads it back this way).
 */
aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum);
aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue, uint64_t *stridesNum);
aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims, uint64_t *storageDimsNum);

/*
 * Scalars and integer arrays (acl_meta.h): host values, copied at creation (opbase
 * src/nnopbase/common/api/acl_op_api.cpp; docs/en/api/nnopbase/aclnn/aclCreateScalar.md,
 * aclCreateIntArray.md, aclDestroyScalar.md, aclDestroyIntArray.md). The creators return NULL
 * on failure; the destroyers accept NULL.
 */
aclScalar *aclCreateScalar(void *value, aclDataType dataType);
aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);
aclnnStatus aclDestroyScalar(const aclScalar *scalar);
aclnnStatus aclDestroyIntArray(const aclIntArray *array);

/*
 * Float and bool arrays, tensor lists (acl_meta.h; opbase docs/zh/nnopbase/aclnn/
 * aclCreateFloatArray.md, aclCreateBoolArray.md, aclCreateTensorList.md, aclDestroyFloatArray.md,
 * aclDestroyBoolArray.md, aclDestroyTensorList.md; src/nnopbase/common/api/acl_op_api.cpp). The
 * arrays copy the values; a tensor list copies the array of pointers, and aclDestroyTensorList
 * destroys the tensors in it as well ("对于aclTensorList内的aclTensor不需要重复释放"), so a tensor
 * put into a list is released with the list only. The creators return NULL on failure (the
 * tensors then stay the caller's); the destroyers accept NULL.
 */
aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size);
aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size);
aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size);
aclnnStatus aclDestroyFloatArray(const aclFloatArray *array);
aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);
aclnnStatus aclDestroyTensorList(const aclTensorList *array);
/* A list of scalars (acl_meta.h): as a tensor list, aclDestroyScalarList destroys its scalars. */
aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size);
aclnnStatus aclDestroyScalarList(const aclScalarList *array);

/* Executors (acl_meta.h) */
aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);
aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr);
aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr);
aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr);

/* Layer initialisation (aclnn_base.h) */
aclnnStatus aclnnInit(const char *configPath);
aclnnStatus aclnnFinalize(void);
