/*
 * The CUDA floor of bench.py's peers table: the 1-element float32 mse_loss_backward
 * (grad a 0-d array, reduction "mean": out = grad * (x - y) * 2 / n) launched from C and
 * waited for, with no Python, so that CuPy's and PyTorch's Python calls can be set against
 * their own C floor as aclnn_py's are against c_floor.c.
 *
 * The CUDA driver library (libcuda.so.1) is opened at run time and the kernel is PTX text
 * that the driver compiles for the GPU present, so neither the CUDA toolkit nor its headers
 * are needed to build this file: cc -O2 cuda_floor.c -o cuda_floor -ldl.
 *
 * Usage: cuda_floor [--rounds R] [--calls N] [--warmup W]
 *        cuda_floor --print-ptx    (the kernel's PTX, for ptxas to check without a GPU)
 * Prints {"median_ns": [one per round], "value": <out[0]>, "expected": <...>} on stdout.
 * Exit 2 with a line on stderr when there is no CUDA driver or device (the bench then shows
 * the row as not available, with that line), 1 on any other failure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The driver API's types and prototypes used here (CUDA Driver API reference, cuda.h). */
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

static struct {
    CUresult (*init)(unsigned int);
    CUresult (*device_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*primary_context)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*load_module)(CUmodule *, const void *);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*malloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*upload)(CUdeviceptr, const void *, size_t);
    CUresult (*download)(void *, CUdeviceptr, size_t);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
    CUresult (*synchronize)(CUstream);
} cu;

/* out[i] = grad[0] * (x[i] - y[i]) * scale for i < n: one thread per element. */
static const char KERNEL[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry mse_loss_backward(.param .u64 p_grad, .param .u64 p_x, .param .u64 p_y,\n"
    "    .param .u64 p_out, .param .f32 p_scale, .param .u32 p_n)\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .b32 %r<6>;\n"
    "    .reg .f32 %f<8>;\n"
    "    .reg .b64 %rd<13>;\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    mad.lo.s32 %r4, %r1, %r2, %r3;\n"
    "    ld.param.u32 %r5, [p_n];\n"
    "    setp.ge.u32 %p1, %r4, %r5;\n"
    "    @%p1 bra DONE;\n"
    "    ld.param.u64 %rd1, [p_grad];\n"
    "    ld.param.u64 %rd2, [p_x];\n"
    "    ld.param.u64 %rd3, [p_y];\n"
    "    ld.param.u64 %rd4, [p_out];\n"
    "    cvta.to.global.u64 %rd5, %rd1;\n"
    "    cvta.to.global.u64 %rd6, %rd2;\n"
    "    cvta.to.global.u64 %rd7, %rd3;\n"
    "    cvta.to.global.u64 %rd8, %rd4;\n"
    "    mul.wide.u32 %rd9, %r4, 4;\n"
    "    add.s64 %rd10, %rd6, %rd9;\n"
    "    add.s64 %rd11, %rd7, %rd9;\n"
    "    add.s64 %rd12, %rd8, %rd9;\n"
    "    ld.global.f32 %f1, [%rd10];\n"
    "    ld.global.f32 %f2, [%rd11];\n"
    "    ld.global.f32 %f3, [%rd5];\n"
    "    ld.param.f32 %f4, [p_scale];\n"
    "    sub.f32 %f5, %f1, %f2;\n"
    "    mul.f32 %f6, %f3, %f5;\n"
    "    mul.f32 %f7, %f6, %f4;\n"
    "    st.global.f32 [%rd12], %f7;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

static int failed(const char *what, CUresult status)
{
    fprintf(stderr, "cuda_floor: %s failed with CUresult %d\n", what, status);
    return 1;
}

#define CALL(what, expression)                      \
    do {                                            \
        CUresult status_ = (expression);            \
        if (status_ != 0) return failed(what, status_); \
    } while (0)

static int load_driver(void)
{
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "cuda_floor: no CUDA driver (libcuda.so.1: %s)\n", dlerror());
        return 2;
    }
    const struct { void **slot; const char *name; } symbols[] = {
        {(void **)&cu.init, "cuInit"},
        {(void **)&cu.device_count, "cuDeviceGetCount"},
        {(void **)&cu.device_get, "cuDeviceGet"},
        {(void **)&cu.primary_context, "cuDevicePrimaryCtxRetain"},
        {(void **)&cu.set_current, "cuCtxSetCurrent"},
        {(void **)&cu.load_module, "cuModuleLoadData"},
        {(void **)&cu.get_function, "cuModuleGetFunction"},
        {(void **)&cu.malloc, "cuMemAlloc_v2"},
        {(void **)&cu.free, "cuMemFree_v2"},
        {(void **)&cu.upload, "cuMemcpyHtoD_v2"},
        {(void **)&cu.download, "cuMemcpyDtoH_v2"},
        {(void **)&cu.launch, "cuLaunchKernel"},
        {(void **)&cu.synchronize, "cuStreamSynchronize"},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; ++i) {
        *symbols[i].slot = dlsym(library, symbols[i].name);
        if (*symbols[i].slot == NULL) {
            fprintf(stderr, "cuda_floor: the CUDA driver lacks %s\n", symbols[i].name);
            return 2;
        }
    }
    return 0;
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rounds = 5, calls = 2000, warmup = 200;
    if (argc == 2 && strcmp(argv[1], "--print-ptx") == 0) {
        fputs(KERNEL, stdout);
        return 0;
    }
    for (int i = 1; i < argc; i += 2) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (value != NULL && strcmp(argv[i], "--rounds") == 0) rounds = atoi(value);
        else if (value != NULL && strcmp(argv[i], "--calls") == 0) calls = atoi(value);
        else if (value != NULL && strcmp(argv[i], "--warmup") == 0) warmup = atoi(value);
        else {
            fprintf(stderr, "usage: cuda_floor [--rounds R] [--calls N] [--warmup W] | "
                            "--print-ptx\n");
            return 1;
        }
    }
    if (rounds < 1 || calls < 1 || warmup < 0) {
        fprintf(stderr, "cuda_floor: rounds and calls must be positive\n");
        return 1;
    }
    int loaded = load_driver();
    if (loaded != 0) return loaded;
    CUresult status = cu.init(0);
    int count = 0;
    if (status == 0) status = cu.device_count(&count);
    if (status != 0 || count < 1) {
        fprintf(stderr, "cuda_floor: no CUDA device (cuInit or cuDeviceGetCount: %d, %d "
                        "devices)\n", status, count);
        return 2;
    }
    CUdevice device;
    CUcontext context;
    CUmodule module;
    CUfunction function;
    CALL("cuDeviceGet", cu.device_get(&device, 0));
    CALL("cuDevicePrimaryCtxRetain", cu.primary_context(&context, device));
    CALL("cuCtxSetCurrent", cu.set_current(context));
    CALL("cuModuleLoadData", cu.load_module(&module, KERNEL));
    CALL("cuModuleGetFunction", cu.get_function(&function, module, "mse_loss_backward"));

    const float grad = 1.5f, x = 3.0f, y = 0.5f;
    unsigned n = 1;
    float scale = 2.0f / (float)n;
    CUdeviceptr grad_d, x_d, y_d, out_d;
    CALL("cuMemAlloc", cu.malloc(&grad_d, sizeof grad));
    CALL("cuMemAlloc", cu.malloc(&x_d, sizeof x));
    CALL("cuMemAlloc", cu.malloc(&y_d, sizeof y));
    CALL("cuMemAlloc", cu.malloc(&out_d, sizeof(float)));
    CALL("cuMemcpyHtoD", cu.upload(grad_d, &grad, sizeof grad));
    CALL("cuMemcpyHtoD", cu.upload(x_d, &x, sizeof x));
    CALL("cuMemcpyHtoD", cu.upload(y_d, &y, sizeof y));
    void *parameters[] = {&grad_d, &x_d, &y_d, &out_d, &scale, &n};

    int64_t *samples = malloc(sizeof(int64_t) * (size_t)calls);
    if (samples == NULL) return failed("malloc", -1);
    for (int i = 0; i < warmup; ++i) {
        CALL("cuLaunchKernel", cu.launch(function, 1, 1, 1, 1, 1, 1, 0, NULL, parameters, NULL));
        CALL("cuStreamSynchronize", cu.synchronize(NULL));
    }
    printf("{\"median_ns\": [");
    for (int round = 0; round < rounds; ++round) {
        for (int i = 0; i < calls; ++i) {
            int64_t start = now_ns();
            CALL("cuLaunchKernel",
                 cu.launch(function, 1, 1, 1, 1, 1, 1, 0, NULL, parameters, NULL));
            CALL("cuStreamSynchronize", cu.synchronize(NULL));
            samples[i] = now_ns() - start;
        }
        qsort(samples, (size_t)calls, sizeof samples[0], by_value);
        printf("%s%lld", round ? ", " : "", (long long)samples[calls / 2]);
    }
    float out = NAN;
    CALL("cuMemcpyDtoH", cu.download(&out, out_d, sizeof out));
    if (isfinite(out)) /* (JSON has no NaN: a kernel that never wrote gives null) */
        printf("], \"value\": %.9g, \"expected\": %.9g}\n", out, grad * (x - y) * scale);
    else
        printf("], \"value\": null, \"expected\": %.9g}\n", grad * (x - y) * scale);
    free(samples);
    cu.free(grad_d);
    cu.free(x_d);
    cu.free(y_d);
    cu.free(out_d);
    return 0;
}
