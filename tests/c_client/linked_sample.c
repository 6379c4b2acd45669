/*
 * A plain C client linked against a CANN install, written only from CANN's public prototypes
 * (no header of this project): it calls the API directly, so the dynamic linker resolves it
 * through the program's DT_NEEDED entries and LD_LIBRARY_PATH, as for any CANN application
 * after `source set_env.sh`. Build it against the install's lib64 with the libraries of its
 * release: -lascendcl -lnnopbase -lopapi (CANN <= 8.3), or -lacl_rt -lnnopbase -lopapi_nn
 * -lopapi_math (CANN 8.5, operators split by repository).
 *
 * It runs the aclnnMseLossBackward sample of CANN's documentation (hicann/ops-nn
 * loss/mse_loss_grad_v2/docs/aclnnMseLossBackward.md: gradOutput = self = {0, 1, 2, 3},
 * target = 1, shape [2, 2], reduction mean, so out = {-0, 0, 1, 3}), then aclnnAdd of
 * self + 2 * target = {2, 3, 4, 5}, and prints the eight values, one per line.
 * Exit status 0 on success, 1 on any failure (the call, its status and CANN's message on stderr).
 */
#include <stdint.h>
#include <stdio.h>

typedef int aclError;
typedef int32_t aclnnStatus;
typedef void *aclrtStream;
typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclOpExecutor aclOpExecutor;

enum { ACL_FLOAT = 0, ACL_FORMAT_ND = 2, ACL_MEM_MALLOC_HUGE_FIRST = 0 };
enum { ACL_MEMCPY_HOST_TO_DEVICE = 1, ACL_MEMCPY_DEVICE_TO_HOST = 2 };

aclError aclInit(const char *configPath);
aclError aclFinalize(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtMalloc(void **devPtr, size_t size, int policy);
aclError aclrtFree(void *devPtr);
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, int kind);
const char *aclGetRecentErrMsg(void);
aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, int dataType, const int64_t *stride,
                           int64_t offset, int format, const int64_t *storageDims, uint64_t storageDimsNum,
                           void *tensorData);
aclnnStatus aclDestroyTensor(const aclTensor *tensor);
aclScalar *aclCreateScalar(void *value, int dataType);
aclnnStatus aclDestroyScalar(const aclScalar *scalar);
aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                 const aclTensor *target, int64_t reduction, aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMseLossBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream);
aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha,
                                     aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

static int failed(const char *call, int status)
{
    if (status == 0)
        return 0;
    const char *message = aclGetRecentErrMsg();
    fprintf(stderr, "%s failed: %d %s\n", call, status, message ? message : "");
    return 1;
}

#define CHECK(call)                     \
    do {                                \
        if (failed(#call, (call)))      \
            return 1;                   \
    } while (0)

static const int64_t shape[2] = {2, 2}, strides[2] = {2, 1};

static aclTensor *tensor_of(void *device)
{
    return aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, device);
}

/* Phase 1 has run: allocate its workspace, launch, wait, free the workspace. */
static int launch(aclnnStatus (*phase2)(void *, uint64_t, aclOpExecutor *, aclrtStream), uint64_t size,
                  aclOpExecutor *executor, aclrtStream stream)
{
    void *workspace = NULL;
    if (size > 0)
        CHECK(aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(phase2(workspace, size, executor, stream));
    CHECK(aclrtSynchronizeStream(stream));
    if (workspace)
        CHECK(aclrtFree(workspace));
    return 0;
}

int main(void)
{
    float grad[4] = {0, 1, 2, 3}, self[4] = {0, 1, 2, 3}, target[4] = {1, 1, 1, 1}, out[8];
    float *host[3] = {grad, self, target};
    void *device[4];
    aclrtStream stream;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&stream));
    for (int i = 0; i < 4; i++) {
        CHECK(aclrtMalloc(&device[i], sizeof grad, ACL_MEM_MALLOC_HUGE_FIRST));
        if (i < 3)
            CHECK(aclrtMemcpy(device[i], sizeof grad, host[i], sizeof grad, ACL_MEMCPY_HOST_TO_DEVICE));
    }
    aclTensor *t[4];
    for (int i = 0; i < 4; i++)
        if ((t[i] = tensor_of(device[i])) == NULL)
            return failed("aclCreateTensor", -1);
    uint64_t size = 0;
    aclOpExecutor *executor = NULL;
    CHECK(aclnnMseLossBackwardGetWorkspaceSize(t[0], t[1], t[2], 1, t[3], &size, &executor));
    if (launch(aclnnMseLossBackward, size, executor, stream))
        return 1;
    CHECK(aclrtMemcpy(out, sizeof grad, device[3], sizeof grad, ACL_MEMCPY_DEVICE_TO_HOST));

    float two = 2.0f;
    aclScalar *alpha = aclCreateScalar(&two, ACL_FLOAT);
    if (alpha == NULL)
        return failed("aclCreateScalar", -1);
    CHECK(aclnnAddGetWorkspaceSize(t[1], t[2], alpha, t[3], &size, &executor));
    if (launch(aclnnAdd, size, executor, stream))
        return 1;
    CHECK(aclrtMemcpy(out + 4, sizeof grad, device[3], sizeof grad, ACL_MEMCPY_DEVICE_TO_HOST));

    CHECK(aclDestroyScalar(alpha));
    for (int i = 0; i < 4; i++) {
        CHECK(aclDestroyTensor(t[i]));
        CHECK(aclrtFree(device[i]));
    }
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    for (int i = 0; i < 8; i++)
        printf("%f\n", out[i]);
    return 0;
}
