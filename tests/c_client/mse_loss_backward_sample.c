/*
 * A standalone client of CANN's C API, written only from CANN's public prototypes
 * (no header of this project): the aclnnMseLossBackward sample of CANN's operator
 * documentation (hicann/ops-nn loss/mse_loss_grad_v2/docs/aclnnMseLossBackward.md,
 * "调用示例"), translated to C and resolving every function with dlsym from the
 * library CANN documents it in:
 *   libacl_rt.so (CANN >= 8.5) else libascendcl.so
 *                   aclInit, aclFinalize, aclrtSetDevice, aclrtResetDevice,
 *                   aclrtCreateStream, aclrtDestroyStream, aclrtSynchronizeStream,
 *                   aclrtMalloc, aclrtFree, aclrtMemcpy, aclGetRecentErrMsg
 *   libnnopbase.so  aclCreateTensor, aclDestroyTensor
 *   libopapi_nn.so (CANN >= 8.5) else libopapi.so
 *                   aclnnMseLossBackwardGetWorkspaceSize, aclnnMseLossBackward
 *
 * Usage: mse_loss_backward_sample <lib64 directory>
 * The three libraries are dlopen'ed by absolute path from that directory; their own
 * dependencies are found as CANN's are, through LD_LIBRARY_PATH (source set_env.sh first).
 *
 * Inputs (float32, shape [2, 2], reduction = 1 'mean'):
 *   gradOutput = {0, 1, 2, 3}, self = {0, 1, 2, 3}, target = {1, 1, 1, 1}
 * out = gradOutput * (self - target) * 2 / self.numel() (numel = 4), so the expected
 * printed values, one per line, are:
 *   -0.000000   (0 * -1 * 0.5 = negative zero)
 *   0.000000
 *   1.000000
 *   3.000000
 * Exit status: 0 on success, 1 on any failure (the failing call and its status are
 * printed on stderr, with aclGetRecentErrMsg's text).
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- CANN public types (acl/acl_base.h, aclnn/acl_meta.h) ---- */
typedef int aclError;
typedef int32_t aclnnStatus;
typedef void *aclrtStream;
typedef struct aclTensor aclTensor;
typedef struct aclOpExecutor aclOpExecutor;
typedef int aclDataType;   /* enum; ACL_FLOAT = 0 */
typedef int aclFormat;     /* enum; ACL_FORMAT_ND = 2 */
typedef int aclrtMemMallocPolicy;
typedef int aclrtMemcpyKind;

enum { ACL_SUCCESS = 0 };
enum { ACL_FLOAT = 0 };
enum { ACL_FORMAT_ND = 2 };
enum { ACL_MEM_MALLOC_HUGE_FIRST = 0 };
enum { ACL_MEMCPY_HOST_TO_DEVICE = 1, ACL_MEMCPY_DEVICE_TO_HOST = 2 };

/* ---- CANN public prototypes, as function-pointer types ---- */
typedef aclError (*aclInit_fn)(const char *configPath);
typedef aclError (*aclFinalize_fn)(void);
typedef aclError (*aclrtSetDevice_fn)(int32_t deviceId);
typedef aclError (*aclrtResetDevice_fn)(int32_t deviceId);
typedef aclError (*aclrtCreateStream_fn)(aclrtStream *stream);
typedef aclError (*aclrtDestroyStream_fn)(aclrtStream stream);
typedef aclError (*aclrtSynchronizeStream_fn)(aclrtStream stream);
typedef aclError (*aclrtMalloc_fn)(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
typedef aclError (*aclrtFree_fn)(void *devPtr);
typedef aclError (*aclrtMemcpy_fn)(void *dst, size_t destMax, const void *src, size_t count,
                                   aclrtMemcpyKind kind);
typedef const char *(*aclGetRecentErrMsg_fn)(void);
typedef aclTensor *(*aclCreateTensor_fn)(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                                         const int64_t *stride, int64_t offset, aclFormat format,
                                         const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData);
typedef aclnnStatus (*aclDestroyTensor_fn)(const aclTensor *tensor);
typedef aclnnStatus (*aclnnMseLossBackwardGetWorkspaceSize_fn)(const aclTensor *gradOutput, const aclTensor *self,
                                                                const aclTensor *target, int64_t reduction,
                                                                aclTensor *out, uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
typedef aclnnStatus (*aclnnMseLossBackward_fn)(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                               aclrtStream stream);

static struct {
    aclInit_fn aclInit;
    aclFinalize_fn aclFinalize;
    aclrtSetDevice_fn aclrtSetDevice;
    aclrtResetDevice_fn aclrtResetDevice;
    aclrtCreateStream_fn aclrtCreateStream;
    aclrtDestroyStream_fn aclrtDestroyStream;
    aclrtSynchronizeStream_fn aclrtSynchronizeStream;
    aclrtMalloc_fn aclrtMalloc;
    aclrtFree_fn aclrtFree;
    aclrtMemcpy_fn aclrtMemcpy;
    aclGetRecentErrMsg_fn aclGetRecentErrMsg;
    aclCreateTensor_fn aclCreateTensor;
    aclDestroyTensor_fn aclDestroyTensor;
    aclnnMseLossBackwardGetWorkspaceSize_fn aclnnMseLossBackwardGetWorkspaceSize;
    aclnnMseLossBackward_fn aclnnMseLossBackward;
} api;

/* dlopen dir/preferred if that file exists, else dir/fallback; *name receives the one chosen. */
static void *open_lib(const char *dir, const char *preferred, const char *fallback, const char **name)
{
    char path[4096];
    *name = preferred;
    if (snprintf(path, sizeof path, "%s/%s", dir, preferred) >= (int)sizeof path) {
        fprintf(stderr, "path too long: %s/%s\n", dir, preferred);
        return NULL;
    }
    if (fallback != NULL && access(path, F_OK) != 0) {
        *name = fallback;
        if (snprintf(path, sizeof path, "%s/%s", dir, fallback) >= (int)sizeof path) {
            fprintf(stderr, "path too long: %s/%s\n", dir, fallback);
            return NULL;
        }
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL)
        fprintf(stderr, "dlopen(%s) failed: %s\n", path, dlerror());
    return h;
}

static int load_sym(void *lib, const char *libname, const char *name, void *slot)
{
    dlerror();
    void *p = dlsym(lib, name);
    if (p == NULL) {
        const char *e = dlerror();
        fprintf(stderr, "dlsym(%s, %s) failed: %s\n", libname, name, e ? e : "NULL symbol");
        return -1;
    }
    memcpy(slot, &p, sizeof p); /* object pointer -> function pointer, as POSIX allows */
    return 0;
}

#define LOAD(lib, libname, fn) \
    do { \
        if (load_sym(lib, libname, #fn, &api.fn) != 0) \
            return -1; \
    } while (0)

static int load_api(const char *dir)
{
    const char *rt_name, *meta_name, *ops_name;
    void *rt = open_lib(dir, "libacl_rt.so", "libascendcl.so", &rt_name);
    void *meta = rt ? open_lib(dir, "libnnopbase.so", NULL, &meta_name) : NULL;
    void *ops = meta ? open_lib(dir, "libopapi_nn.so", "libopapi.so", &ops_name) : NULL;
    if (ops == NULL)
        return -1;
    LOAD(rt, rt_name, aclInit);
    LOAD(rt, rt_name, aclFinalize);
    LOAD(rt, rt_name, aclrtSetDevice);
    LOAD(rt, rt_name, aclrtResetDevice);
    LOAD(rt, rt_name, aclrtCreateStream);
    LOAD(rt, rt_name, aclrtDestroyStream);
    LOAD(rt, rt_name, aclrtSynchronizeStream);
    LOAD(rt, rt_name, aclrtMalloc);
    LOAD(rt, rt_name, aclrtFree);
    LOAD(rt, rt_name, aclrtMemcpy);
    LOAD(rt, rt_name, aclGetRecentErrMsg);
    LOAD(meta, meta_name, aclCreateTensor);
    LOAD(meta, meta_name, aclDestroyTensor);
    LOAD(ops, ops_name, aclnnMseLossBackwardGetWorkspaceSize);
    LOAD(ops, ops_name, aclnnMseLossBackward);
    return 0;
}

static void report(const char *what, int ret)
{
    const char *msg = api.aclGetRecentErrMsg ? api.aclGetRecentErrMsg() : NULL;
    fprintf(stderr, "%s failed. ERROR: %d\n%s\n", what, ret, msg ? msg : "(no error message)");
}

#define CHECK(call, what) \
    do { \
        int ret_ = (call); \
        if (ret_ != ACL_SUCCESS) { \
            report(what, ret_); \
            return 1; \
        } \
    } while (0)

static int64_t shape_size(const int64_t *shape, size_t n)
{
    int64_t s = 1;
    for (size_t i = 0; i < n; i++)
        s *= shape[i];
    return s;
}

/* The sample's CreateAclTensor: device buffer, H2D copy, contiguous ND tensor. */
static int create_acl_tensor(const float *host, const int64_t *shape, size_t ndim, void **dev, aclTensor **tensor)
{
    size_t size = (size_t)shape_size(shape, ndim) * sizeof(float);
    int64_t strides[8];
    CHECK(api.aclrtMalloc(dev, size, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
    CHECK(api.aclrtMemcpy(*dev, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy");
    strides[ndim - 1] = 1;
    for (size_t i = ndim - 1; i-- > 0;)
        strides[i] = shape[i + 1] * strides[i + 1];
    *tensor = api.aclCreateTensor(shape, ndim, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, ndim, *dev);
    if (*tensor == NULL) {
        report("aclCreateTensor", -1);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s <lib64 directory>\n", argv[0]);
        return 2;
    }
    if (load_api(argv[1]) != 0)
        return 1;

    /* 1. device / stream */
    int32_t deviceId = 0;
    aclrtStream stream = NULL;
    CHECK(api.aclInit(NULL), "aclInit");
    CHECK(api.aclrtSetDevice(deviceId), "aclrtSetDevice");
    CHECK(api.aclrtCreateStream(&stream), "aclrtCreateStream");

    /* 2. inputs and output */
    const int64_t shape[2] = {2, 2};
    const float gradOutputHost[4] = {0, 1, 2, 3};
    const float selfHost[4] = {0, 1, 2, 3};
    const float targetHost[4] = {1, 1, 1, 1};
    const float outHost[4] = {0, 0, 0, 0};
    void *gradOutputDev = NULL, *selfDev = NULL, *targetDev = NULL, *outDev = NULL;
    aclTensor *gradOutput = NULL, *self = NULL, *target = NULL, *out = NULL;
    if (create_acl_tensor(gradOutputHost, shape, 2, &gradOutputDev, &gradOutput) ||
        create_acl_tensor(selfHost, shape, 2, &selfDev, &self) ||
        create_acl_tensor(targetHost, shape, 2, &targetDev, &target) ||
        create_acl_tensor(outHost, shape, 2, &outDev, &out))
        return 1;
    int64_t reduction = 1;

    /* 3. the two-phase call */
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = NULL;
    CHECK(api.aclnnMseLossBackwardGetWorkspaceSize(gradOutput, self, target, reduction, out, &workspaceSize,
                                                   &executor),
          "aclnnMseLossBackwardGetWorkspaceSize");
    void *workspaceAddr = NULL;
    if (workspaceSize > 0)
        CHECK(api.aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST), "allocate workspace");
    CHECK(api.aclnnMseLossBackward(workspaceAddr, workspaceSize, executor, stream), "aclnnMseLossBackward");

    /* 4. wait for the stream */
    CHECK(api.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");

    /* 5. results */
    int64_t size = shape_size(shape, 2);
    float result[4] = {0};
    CHECK(api.aclrtMemcpy(result, sizeof result, outDev, (size_t)size * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST),
          "copy result from device to host");
    for (int64_t i = 0; i < size; i++)
        printf("%f\n", result[i]);

    /* 6. tensors */
    CHECK(api.aclDestroyTensor(gradOutput), "aclDestroyTensor(gradOutput)");
    CHECK(api.aclDestroyTensor(self), "aclDestroyTensor(self)");
    CHECK(api.aclDestroyTensor(target), "aclDestroyTensor(target)");
    CHECK(api.aclDestroyTensor(out), "aclDestroyTensor(out)");

    /* 7. device resources */
    CHECK(api.aclrtFree(gradOutputDev), "aclrtFree(gradOutput)");
    CHECK(api.aclrtFree(selfDev), "aclrtFree(self)");
    CHECK(api.aclrtFree(targetDev), "aclrtFree(target)");
    CHECK(api.aclrtFree(outDev), "aclrtFree(out)");
    if (workspaceSize > 0)
        CHECK(api.aclrtFree(workspaceAddr), "aclrtFree(workspace)");
    CHECK(api.aclrtDestroyStream(stream), "aclrtDestroyStream");
    CHECK(api.aclrtResetDevice(deviceId), "aclrtResetDevice");
    CHECK(api.aclFinalize(), "aclFinalize");
    return 0;
}
