/*
 * The C floor of benchmarks/bench.py: the bare CANN call sequences aclnn_py makes for
 * aclnnMseLossBackward, timed with a stream synchronisation per call and no Python.
 *
 * Usage: c_floor <lib64 directory> [options] <case>...
 *   case       <elements>:<f32|f16>, e.g. 1:f32 1048576:f16
 *   --budget-ms MS   time budget per measurement after warm-up (default 1000)
 *   --min-reps N     at least N timed calls (default 5)
 *   --max-reps N     at most N timed calls (default 5000)
 *   --warmup N       untimed calls first (default 20)
 *   --samples 0|1    also print every per-call sample, sorted (default 0)
 *   --direct-bytes N the staged sequence sends arrays above N bytes straight, as aclnn_py
 *                    does (default 65536)
 * The three libraries are dlopen'ed by absolute path from that directory, like aclnn_py
 * does: libacl_rt.so else libascendcl.so, libnnopbase.so, libopapi_nn.so else libopapi.so.
 *
 * Per case, grad is a 0-d tensor, x, y and out have shape [n], reduction is 1 ('mean'),
 * as in bench.py. Five sequences, each timed per call (CLOCK_MONOTONIC), median reported:
 *   oneshot      aclCreateTensor x4 -> aclnnMseLossBackwardGetWorkspaceSize -> (workspace
 *                allocated beforehand, like a pool hit) -> aclnnMseLossBackward ->
 *                aclrtSynchronizeStream -> aclDestroyTensor x4       (bench column d_b)
 *   plan         a repeatable executor made once: aclnnMseLossBackward -> aclrtSynchronizeStream
 *                                                                     (bench column d_c)
 *   relaunch     another repeatable executor made once, with its own tensors:
 *                aclSetOutputTensorAddr(executor, 0, out tensor, one of two device output
 *                buffers, alternating every call) -> aclnnMseLossBackward ->
 *                aclrtSynchronizeStream. What aclnn_py runs for a repeated one-shot call on
 *                device arrays (bench column b) with its cached executor; the library skips
 *                the rebind when the result lands at the same address, so the alternation,
 *                which makes the rebind real every call, is its worst case. (bench column d_r)
 *   numpy_path   aclrtMemcpy H2D of grad, x and y -> oneshot -> aclrtMemcpy D2H of out
 *                                                                     (bench column d_a)
 *   staged       what aclnn_py's numpy path runs, one-shot: grad, x and y packed (memcpy)
 *                into one page-locked block (aclrtMallocHost) at 512-byte aligned offsets ->
 *                one aclrtMemcpyAsync H2D into one device block laid out the same way ->
 *                oneshot over that block, without its synchronisation -> one
 *                aclrtMemcpyAsync D2H of out into the page-locked block ->
 *                aclrtSynchronizeStream -> memcpy of out to the host result. An array above
 *                --direct-bytes travels instead with a synchronous aclrtMemcpy straight from
 *                (to) host memory, after the synchronisation for out, as aclnn_py does.
 *                                                                     (bench column d_s)
 * Device buffers (inputs, both outputs, workspace, the staging blocks) are allocated once per
 * case, outside the timing.
 *
 * Output: one JSON object on stdout, {"unit": "ns", "cases": [...]}: per case the median
 * wall time per call of each sequence, the mean CPU time per call (CLOCK_PROCESS_CPUTIME_ID)
 * and the repetitions. Exit status 0 on
 * success, 1 on any failure (the failing call, its status and aclGetRecentErrMsg on stderr).
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int aclError;
typedef int32_t aclnnStatus;
typedef void *aclrtStream;
typedef struct aclTensor aclTensor;
typedef struct aclOpExecutor aclOpExecutor;

enum { ACL_FLOAT = 0, ACL_FLOAT16 = 1 };
enum { ACL_FORMAT_ND = 2 };
enum { ACL_MEM_MALLOC_HUGE_FIRST = 0 };
enum { ACL_MEMCPY_HOST_TO_DEVICE = 1, ACL_MEMCPY_DEVICE_TO_HOST = 2 };
enum { STAGING_ALIGNMENT = 512 };

static struct {
    aclError (*aclInit)(const char *);
    aclError (*aclFinalize)(void);
    aclError (*aclrtSetDevice)(int32_t);
    aclError (*aclrtResetDevice)(int32_t);
    aclError (*aclrtCreateStream)(aclrtStream *);
    aclError (*aclrtDestroyStream)(aclrtStream);
    aclError (*aclrtSynchronizeStream)(aclrtStream);
    aclError (*aclrtMalloc)(void **, size_t, int);
    aclError (*aclrtFree)(void *);
    aclError (*aclrtMemcpy)(void *, size_t, const void *, size_t, int);
    aclError (*aclrtMemcpyAsync)(void *, size_t, const void *, size_t, int, aclrtStream);
    aclError (*aclrtMallocHost)(void **, size_t);
    aclError (*aclrtFreeHost)(void *);
    const char *(*aclGetRecentErrMsg)(void);
    aclTensor *(*aclCreateTensor)(const int64_t *, uint64_t, int, const int64_t *, int64_t, int,
                                  const int64_t *, uint64_t, void *);
    aclnnStatus (*aclDestroyTensor)(const aclTensor *);
    aclnnStatus (*aclSetAclOpExecutorRepeatable)(aclOpExecutor *);
    aclnnStatus (*aclSetOutputTensorAddr)(aclOpExecutor *, const size_t, aclTensor *, void *);
    aclnnStatus (*aclDestroyAclOpExecutor)(aclOpExecutor *);
    aclnnStatus (*aclnnMseLossBackwardGetWorkspaceSize)(const aclTensor *, const aclTensor *,
                                                        const aclTensor *, int64_t, aclTensor *,
                                                        uint64_t *, aclOpExecutor **);
    aclnnStatus (*aclnnMseLossBackward)(void *, uint64_t, aclOpExecutor *, aclrtStream);
} api;

/* dlopen dir/preferred if that file exists, else dir/fallback (CANN >= 8.5 renamed two). */
static void *open_lib(const char *dir, const char *preferred, const char *fallback)
{
    char path[4096];
    const char *names[2] = {preferred, fallback};
    for (int i = 0; i < 2 && names[i]; i++) {
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path) {
            fprintf(stderr, "path too long: %s/%s\n", dir, names[i]);
            return NULL;
        }
        if (access(path, F_OK) == 0 || i == 1 || names[1] == NULL)
            break;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL)
        fprintf(stderr, "dlopen(%s) failed: %s\n", path, dlerror());
    return h;
}

static int load_sym(void *lib, const char *name, void *slot)
{
    dlerror();
    void *p = dlsym(lib, name);
    if (p == NULL) {
        fprintf(stderr, "dlsym(%s) failed: %s\n", name, dlerror());
        return -1;
    }
    memcpy(slot, &p, sizeof p);
    return 0;
}

#define LOAD(lib, fn) \
    do { \
        if (load_sym(lib, #fn, &api.fn) != 0) \
            return -1; \
    } while (0)

static int load_api(const char *dir)
{
    void *rt = open_lib(dir, "libacl_rt.so", "libascendcl.so");
    void *meta = rt ? open_lib(dir, "libnnopbase.so", NULL) : NULL;
    void *ops = meta ? open_lib(dir, "libopapi_nn.so", "libopapi.so") : NULL;
    if (ops == NULL)
        return -1;
    LOAD(rt, aclInit);
    LOAD(rt, aclFinalize);
    LOAD(rt, aclrtSetDevice);
    LOAD(rt, aclrtResetDevice);
    LOAD(rt, aclrtCreateStream);
    LOAD(rt, aclrtDestroyStream);
    LOAD(rt, aclrtSynchronizeStream);
    LOAD(rt, aclrtMalloc);
    LOAD(rt, aclrtFree);
    LOAD(rt, aclrtMemcpy);
    LOAD(rt, aclrtMemcpyAsync);
    LOAD(rt, aclrtMallocHost);
    LOAD(rt, aclrtFreeHost);
    LOAD(rt, aclGetRecentErrMsg);
    LOAD(meta, aclCreateTensor);
    LOAD(meta, aclDestroyTensor);
    LOAD(meta, aclSetAclOpExecutorRepeatable);
    LOAD(meta, aclSetOutputTensorAddr);
    LOAD(meta, aclDestroyAclOpExecutor);
    LOAD(ops, aclnnMseLossBackwardGetWorkspaceSize);
    LOAD(ops, aclnnMseLossBackward);
    return 0;
}

static int fail(const char *what, int status)
{
    const char *msg = api.aclGetRecentErrMsg ? api.aclGetRecentErrMsg() : NULL;
    fprintf(stderr, "c_floor: %s failed with %d: %s\n", what, status, msg ? msg : "");
    return 1;
}

#define CHECK(call) \
    do { \
        int status_ = (call); \
        if (status_ != 0) \
            return fail(#call, status_); \
    } while (0)

static struct {
    double budget_ns;
    long min_reps, max_reps, warmup;
    int samples; /* print every sample too */
    size_t direct_bytes;
} opt = {1e9, 5, 5000, 20, 0, 65536};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* One benchmarked case: buffers and host data shared by the four sequences. */
typedef struct {
    int64_t n;
    int dtype;        /* ACL_FLOAT or ACL_FLOAT16 */
    size_t itemsize;
    void *host_grad, *host_x, *host_y, *host_out;
    void *dev_grad, *dev_x, *dev_y, *dev_out, *workspace;
    void *dev_out_alt; /* the second output buffer of the relaunch sequence */
    char *pinned, *dev_stage; /* the staging blocks of the staged sequence */
    size_t off[4];            /* grad, x, y, out in the device block */
    size_t out_pinned;        /* out in the page-locked block */
    size_t upload;            /* bytes of the packed inputs */
    size_t pinned_bytes, stage_bytes;
    uint64_t workspace_size;
    aclrtStream stream;
} Case;

/* float in [0, 1) -> IEEE half (round to nearest, ties away: good enough for test data) */
static uint16_t to_half(float f)
{
    if (f < 6.1035156e-05f)
        return 0;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint32_t exponent = ((bits >> 23) & 0xff) - 127 + 15;
    uint32_t mantissa = (bits >> 13) & 0x3ff;
    uint32_t half = (exponent << 10) | mantissa;
    if (bits & 0x1000)
        half += 1;  /* may carry into the exponent, which is still correct rounding */
    return (uint16_t)half;
}

static void fill(void *dst, int64_t n, int dtype, uint64_t *seed)
{
    for (int64_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
        float v = (float)((*seed >> 40) & 0xffffff) / 16777216.0f;
        if (dtype == ACL_FLOAT)
            ((float *)dst)[i] = v;
        else
            ((uint16_t *)dst)[i] = to_half(v);
    }
}

/* The four tensors (grad 0-d, x, y, out of shape [n]) over the given device addresses. */
static int make_tensors_at(Case *c, aclTensor **t, void *grad, void *x, void *y, void *out)
{
    const int64_t shape[1] = {c->n}, strides[1] = {1}, storage[1] = {c->n}, one[1] = {1};
    t[0] = api.aclCreateTensor(NULL, 0, c->dtype, NULL, 0, ACL_FORMAT_ND, one, 1, grad);
    t[1] = api.aclCreateTensor(shape, 1, c->dtype, strides, 0, ACL_FORMAT_ND, storage, 1, x);
    t[2] = api.aclCreateTensor(shape, 1, c->dtype, strides, 0, ACL_FORMAT_ND, storage, 1, y);
    t[3] = api.aclCreateTensor(shape, 1, c->dtype, strides, 0, ACL_FORMAT_ND, storage, 1, out);
    for (int i = 0; i < 4; i++)
        if (t[i] == NULL)
            return fail("aclCreateTensor", -1);
    return 0;
}

static int make_tensors(Case *c, aclTensor **t)
{
    return make_tensors_at(c, t, c->dev_grad, c->dev_x, c->dev_y, c->dev_out);
}

static int destroy_tensors(aclTensor **t)
{
    for (int i = 0; i < 4; i++)
        CHECK(api.aclDestroyTensor(t[i]));
    return 0;
}

/* the one-shot call on t, launched on the case's stream (the workspace it asks for must fit
 * the case's) */
static int launch(Case *c, aclTensor **t)
{
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(api.aclnnMseLossBackwardGetWorkspaceSize(t[0], t[1], t[2], 1, t[3], &ws, &ex));
    if (ws > c->workspace_size) {
        fprintf(stderr, "c_floor: workspace grew from %llu to %llu bytes\n",
                (unsigned long long)c->workspace_size, (unsigned long long)ws);
        return 1;
    }
    CHECK(api.aclnnMseLossBackward(ws ? c->workspace : NULL, ws, ex, c->stream));
    return 0;
}

/* (b) the one-shot call on device buffers */
static int oneshot(Case *c)
{
    aclTensor *t[4];
    if (make_tensors(c, t) || launch(c, t))
        return 1;
    CHECK(api.aclrtSynchronizeStream(c->stream));
    return destroy_tensors(t);
}

/* (a') the numpy path: uploads, the one-shot call, the download */
static int numpy_path(Case *c)
{
    size_t bytes = (size_t)c->n * c->itemsize;
    CHECK(api.aclrtMemcpy(c->dev_grad, c->itemsize, c->host_grad, c->itemsize, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(api.aclrtMemcpy(c->dev_x, bytes, c->host_x, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(api.aclrtMemcpy(c->dev_y, bytes, c->host_y, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    if (oneshot(c))
        return 1;
    CHECK(api.aclrtMemcpy(c->host_out, bytes, c->dev_out, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    return 0;
}

static size_t aligned(size_t offset)
{
    return (offset + STAGING_ALIGNMENT - 1) / STAGING_ALIGNMENT * STAGING_ALIGNMENT;
}

/* Lay the staging blocks out as aclnn_py does: staged inputs packed in order, then the
   direct ones (device block only), then out; a staged out follows the staged inputs in the
   page-locked block. */
static void stage_layout(Case *c)
{
    size_t bytes = (size_t)c->n * c->itemsize;
    size_t sizes[4] = {c->itemsize, bytes, bytes, bytes};
    size_t offset = 0;
    c->upload = 0;
    for (int i = 0; i < 3; i++) {
        if (sizes[i] > opt.direct_bytes)
            continue;
        c->off[i] = offset;
        c->upload = offset + sizes[i];
        offset = aligned(c->upload);
    }
    c->out_pinned = offset;
    for (int i = 0; i < 3; i++) {
        if (sizes[i] <= opt.direct_bytes)
            continue;
        c->off[i] = offset;
        offset = aligned(offset + sizes[i]);
    }
    c->off[3] = offset;
    c->stage_bytes = offset + bytes;
    c->pinned_bytes = bytes <= opt.direct_bytes ? c->out_pinned + bytes : c->upload;
}

/* (a) the staged numpy path, one-shot */
static int staged(Case *c)
{
    size_t bytes = (size_t)c->n * c->itemsize;
    const void *sources[3] = {c->host_grad, c->host_x, c->host_y};
    size_t sizes[3] = {c->itemsize, bytes, bytes};
    for (int i = 0; i < 3; i++) {
        if (sizes[i] <= opt.direct_bytes)
            memcpy(c->pinned + c->off[i], sources[i], sizes[i]);
        else
            CHECK(api.aclrtMemcpy(c->dev_stage + c->off[i], sizes[i], sources[i], sizes[i],
                                  ACL_MEMCPY_HOST_TO_DEVICE));
    }
    if (c->upload)
        CHECK(api.aclrtMemcpyAsync(c->dev_stage, c->upload, c->pinned, c->upload,
                                   ACL_MEMCPY_HOST_TO_DEVICE, c->stream));
    aclTensor *t[4];
    if (make_tensors_at(c, t, c->dev_stage + c->off[0], c->dev_stage + c->off[1],
                        c->dev_stage + c->off[2], c->dev_stage + c->off[3])
        || launch(c, t))
        return 1;
    if (bytes <= opt.direct_bytes)
        CHECK(api.aclrtMemcpyAsync(c->pinned + c->out_pinned, bytes, c->dev_stage + c->off[3], bytes,
                                   ACL_MEMCPY_DEVICE_TO_HOST, c->stream));
    CHECK(api.aclrtSynchronizeStream(c->stream));
    if (bytes <= opt.direct_bytes)
        memcpy(c->host_out, c->pinned + c->out_pinned, bytes);
    else
        CHECK(api.aclrtMemcpy(c->host_out, bytes, c->dev_stage + c->off[3], bytes,
                              ACL_MEMCPY_DEVICE_TO_HOST));
    return destroy_tensors(t);
}

/* (c) relaunch of a repeatable executor */
static aclOpExecutor *plan_executor;
static int plan_run(Case *c)
{
    CHECK(api.aclnnMseLossBackward(c->workspace_size ? c->workspace : NULL, c->workspace_size,
                                   plan_executor, c->stream));
    CHECK(api.aclrtSynchronizeStream(c->stream));
    return 0;
}

/* (b on a repeat call) rebind the output to the other buffer, relaunch, synchronise */
static aclOpExecutor *relaunch_executor;
static aclTensor *relaunch_out;
static int relaunch_flip;
static int relaunch(Case *c)
{
    relaunch_flip ^= 1;
    CHECK(api.aclSetOutputTensorAddr(relaunch_executor, 0, relaunch_out,
                                     relaunch_flip ? c->dev_out_alt : c->dev_out));
    CHECK(api.aclnnMseLossBackward(c->workspace_size ? c->workspace : NULL, c->workspace_size,
                                   relaunch_executor, c->stream));
    CHECK(api.aclrtSynchronizeStream(c->stream));
    return 0;
}

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The timing of one sequence: per-call wall samples (sorted), mean CPU time per call. */
typedef struct {
    int64_t *samples;
    long reps;
    double median_ns, cpu_ns;
} Timing;

/* Warm up, then time single calls until the budget or max_reps. */
static int measure(int (*fn)(Case *), Case *c, Timing *t)
{
    for (long i = 0; i < opt.warmup; i++)
        if (fn(c))
            return 1;
    long n = 0;
    int64_t start = now_ns(), cpu0 = cpu_ns();
    while (n < opt.max_reps && (n < opt.min_reps || (double)(now_ns() - start) < opt.budget_ns)) {
        int64_t t0 = now_ns();
        if (fn(c))
            return 1;
        t->samples[n++] = now_ns() - t0;
    }
    t->cpu_ns = (double)(cpu_ns() - cpu0) / (double)n;
    qsort(t->samples, (size_t)n, sizeof *t->samples, cmp_i64);
    t->median_ns = n % 2 ? (double)t->samples[n / 2]
                         : 0.5 * (double)(t->samples[n / 2 - 1] + t->samples[n / 2]);
    t->reps = n;
    return 0;
}

static void print_samples(const char *name, const Timing *t, int first)
{
    printf("%s\"%s\": [", first ? "" : ", ", name);
    for (long i = 0; i < t->reps; i++)
        printf(i ? ", %lld" : "%lld", (long long)t->samples[i]);
    printf("]");
}

static int run_case(Case *c, int first)
{
    size_t bytes = (size_t)c->n * c->itemsize;
    uint64_t seed = 42;
    c->host_grad = malloc(c->itemsize);
    c->host_x = malloc(bytes);
    c->host_y = malloc(bytes);
    c->host_out = malloc(bytes);
    Timing tm[5]; /* oneshot, plan, numpy_path, relaunch, staged */
    size_t slots = (size_t)(opt.max_reps > 0 ? opt.max_reps : 1);
    for (int i = 0; i < 5; i++)
        tm[i].samples = malloc(sizeof(int64_t) * slots);
    if (!c->host_grad || !c->host_x || !c->host_y || !c->host_out || !tm[0].samples ||
        !tm[1].samples || !tm[2].samples || !tm[3].samples || !tm[4].samples) {
        fprintf(stderr, "c_floor: out of host memory\n");
        return 1;
    }
    fill(c->host_grad, 1, c->dtype, &seed);
    fill(c->host_x, c->n, c->dtype, &seed);
    fill(c->host_y, c->n, c->dtype, &seed);
    memset(c->host_out, 0, bytes);
    CHECK(api.aclrtMalloc(&c->dev_grad, c->itemsize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(api.aclrtMalloc(&c->dev_x, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(api.aclrtMalloc(&c->dev_y, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(api.aclrtMalloc(&c->dev_out, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(api.aclrtMalloc(&c->dev_out_alt, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(api.aclrtMemcpy(c->dev_grad, c->itemsize, c->host_grad, c->itemsize, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(api.aclrtMemcpy(c->dev_x, bytes, c->host_x, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(api.aclrtMemcpy(c->dev_y, bytes, c->host_y, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    stage_layout(c);
    CHECK(api.aclrtMallocHost((void **)&c->pinned, c->pinned_bytes));
    CHECK(api.aclrtMalloc((void **)&c->dev_stage, c->stage_bytes, ACL_MEM_MALLOC_HUGE_FIRST));

    /* The repeatable executor of (c); its phase 1 also tells the workspace size. */
    aclTensor *pt[4];
    if (make_tensors(c, pt))
        return 1;
    CHECK(api.aclnnMseLossBackwardGetWorkspaceSize(pt[0], pt[1], pt[2], 1, pt[3], &c->workspace_size,
                                                   &plan_executor));
    CHECK(api.aclSetAclOpExecutorRepeatable(plan_executor));
    c->workspace = NULL;
    if (c->workspace_size)
        CHECK(api.aclrtMalloc(&c->workspace, c->workspace_size, ACL_MEM_MALLOC_HUGE_FIRST));

    /* The repeatable executor of the relaunch sequence, with its own tensors (out at dev_out). */
    aclTensor *rt[4];
    uint64_t relaunch_ws = 0;
    if (make_tensors(c, rt))
        return 1;
    CHECK(api.aclnnMseLossBackwardGetWorkspaceSize(rt[0], rt[1], rt[2], 1, rt[3], &relaunch_ws,
                                                   &relaunch_executor));
    CHECK(api.aclSetAclOpExecutorRepeatable(relaunch_executor));
    if (relaunch_ws > c->workspace_size) {
        fprintf(stderr, "c_floor: relaunch workspace %llu > %llu bytes\n",
                (unsigned long long)relaunch_ws, (unsigned long long)c->workspace_size);
        return 1;
    }
    relaunch_out = rt[3];
    relaunch_flip = 0;

    if (measure(oneshot, c, &tm[0]) || measure(plan_run, c, &tm[1]) || measure(relaunch, c, &tm[3]) ||
        measure(numpy_path, c, &tm[2]) || measure(staged, c, &tm[4]))
        return 1;

    CHECK(api.aclDestroyAclOpExecutor(relaunch_executor));
    if (destroy_tensors(rt))
        return 1;
    CHECK(api.aclDestroyAclOpExecutor(plan_executor));
    if (destroy_tensors(pt))
        return 1;
    if (c->workspace)
        CHECK(api.aclrtFree(c->workspace));
    CHECK(api.aclrtFree(c->dev_grad));
    CHECK(api.aclrtFree(c->dev_x));
    CHECK(api.aclrtFree(c->dev_y));
    CHECK(api.aclrtFree(c->dev_out));
    CHECK(api.aclrtFree(c->dev_out_alt));
    CHECK(api.aclrtFree(c->dev_stage));
    CHECK(api.aclrtFreeHost(c->pinned));
    free(c->host_grad);
    free(c->host_x);
    free(c->host_y);
    free(c->host_out);
    printf("%s\n    {\"n\": %lld, \"dtype\": \"%s\", \"workspace_bytes\": %llu,"
           " \"oneshot_ns\": %.1f, \"plan_ns\": %.1f, \"relaunch_ns\": %.1f, \"numpy_path_ns\": %.1f,"
           " \"staged_ns\": %.1f,"
           " \"cpu_ns\": {\"oneshot\": %.1f, \"plan\": %.1f, \"relaunch\": %.1f, \"numpy_path\": %.1f,"
           " \"staged\": %.1f},"
           " \"reps\": {\"oneshot\": %ld, \"plan\": %ld, \"relaunch\": %ld, \"numpy_path\": %ld,"
           " \"staged\": %ld}",
           first ? "" : ",", (long long)c->n, c->dtype == ACL_FLOAT ? "float32" : "float16",
           (unsigned long long)c->workspace_size, tm[0].median_ns, tm[1].median_ns, tm[3].median_ns,
           tm[2].median_ns, tm[4].median_ns, tm[0].cpu_ns, tm[1].cpu_ns, tm[3].cpu_ns, tm[2].cpu_ns,
           tm[4].cpu_ns, tm[0].reps, tm[1].reps, tm[3].reps, tm[2].reps, tm[4].reps);
    if (opt.samples) {
        printf(", \"samples\": {");
        print_samples("oneshot", &tm[0], 1);
        print_samples("plan", &tm[1], 0);
        print_samples("relaunch", &tm[3], 0);
        print_samples("numpy_path", &tm[2], 0);
        print_samples("staged", &tm[4], 0);
        printf("}");
    }
    printf("}");
    for (int i = 0; i < 5; i++)
        free(tm[i].samples);
    fflush(stdout);
    return 0;
}

static int parse_case(const char *arg, Case *c)
{
    char *end = NULL;
    long long n = strtoll(arg, &end, 10);
    if (end == arg || *end != ':' || n < 1)
        return -1;
    memset(c, 0, sizeof *c);
    c->n = n;
    if (strcmp(end + 1, "f32") == 0 || strcmp(end + 1, "float32") == 0) {
        c->dtype = ACL_FLOAT;
        c->itemsize = 4;
    } else if (strcmp(end + 1, "f16") == 0 || strcmp(end + 1, "float16") == 0) {
        c->dtype = ACL_FLOAT16;
        c->itemsize = 2;
    } else {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <lib64 directory> [--budget-ms MS] [--min-reps N] "
                        "[--max-reps N] [--warmup N] [--direct-bytes N] <n>:<f32|f16>...\n", argv[0]);
        return 2;
    }
    /* options may come anywhere; the remaining arguments are the cases */
    const char *cases[256];
    int n_cases = 0;
    for (int i = 2; i < argc; i++) {
        const char *name = argv[i];
        if (strncmp(name, "--", 2) != 0) {
            if (n_cases == (int)(sizeof cases / sizeof *cases)) {
                fprintf(stderr, "c_floor: too many cases\n");
                return 2;
            }
            cases[n_cases++] = name;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "c_floor: %s needs a value\n", name);
            return 2;
        }
        double value = strtod(argv[++i], NULL);
        if (strcmp(name, "--budget-ms") == 0)
            opt.budget_ns = value * 1e6;
        else if (strcmp(name, "--min-reps") == 0)
            opt.min_reps = (long)value;
        else if (strcmp(name, "--max-reps") == 0)
            opt.max_reps = (long)value;
        else if (strcmp(name, "--warmup") == 0)
            opt.warmup = (long)value;
        else if (strcmp(name, "--samples") == 0)
            opt.samples = value != 0;
        else if (strcmp(name, "--direct-bytes") == 0)
            opt.direct_bytes = (size_t)value;
        else {
            fprintf(stderr, "c_floor: unknown option %s\n", name);
            return 2;
        }
    }
    if (opt.min_reps < 1)
        opt.min_reps = 1;
    if (opt.max_reps < opt.min_reps)
        opt.max_reps = opt.min_reps;
    if (load_api(argv[1]) != 0)
        return 1;
    aclrtStream stream = NULL;
    CHECK(api.aclInit(NULL));
    CHECK(api.aclrtSetDevice(0));
    CHECK(api.aclrtCreateStream(&stream));
    printf("{\"unit\": \"ns\", \"cases\": [");
    for (int i = 0; i < n_cases; i++) {
        Case c;
        if (parse_case(cases[i], &c) != 0) {
            fprintf(stderr, "c_floor: bad case %s (want <elements>:<f32|f16>)\n", cases[i]);
            return 2;
        }
        c.stream = stream;
        if (run_case(&c, i == 0))
            return 1;
    }
    printf("\n]}\n");
    CHECK(api.aclrtDestroyStream(stream));
    CHECK(api.aclrtResetDevice(0));
    CHECK(api.aclFinalize());
    return 0;
}
