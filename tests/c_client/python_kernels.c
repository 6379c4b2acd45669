/*
 * A plain C program (no Python in it) that calls operators the aclnn_py emulator computes in
 * Python, built against an emulator tree's headers and libraries (-lacl_rt -lnnopbase
 * -lopapi_math -lopapi_nn -lopapi). The emulator starts Python itself on the first such call.
 *
 *   python_kernels exp      aclnnExp of {0, 1, -1, 2}: prints "status <phase 1 status>" and,
 *                           when it is 0, the four results, one per line (%.6f); else
 *                           "message <aclGetRecentErrMsg>"
 *   python_kernels ndtri    the same with aclnnNdtri (a user's kernel, ACLNN_EMU_KERNELS)
 *   python_kernels threads  two threads, each on its own stream, run aclnnExp 20 times at
 *                           once on data of their own and check every result: prints
 *                           "threads ok" or what was wrong
 *   python_kernels fork     aclnnExp once (Python comes up), then fork(): the child calls
 *                           aclnnExp on a stream of its own and prints "child status <s>"
 *                           and its results, or "child message <why>" (it is killed after
 *                           30 s: "child hung"); the parent then calls it again ("parent
 *                           status <s>")
 *   python_kernels fork-busy  the same 20 times while another thread launches aclnnExp all
 *                           along: prints "busy thread ok" and "parent status <s>" after
 *                           any child's failure or hang
 *   python_kernels interrupt  with a SIGINT handler of the program's own, aclnnNdtri (a user's
 *                           kernel that takes 20 s, ACLNN_EMU_KERNELS) launched, and SIGINT
 *                           sent to the process 1 s later: prints "sync status <s>",
 *                           "message <aclGetRecentErrMsg>" when s is not 0, "handler calls
 *                           <n>", then "after status <s>" of aclnnExp on a new stream
 *   python_kernels interrupt-default  the same without a handler of its own (SIG_DFL)
 *   python_kernels scalar-list  aclnnForeachMulScalarList (an aclScalarList argument) of the
 *                           tensors {0, 1, -1, 2} and {3, 4} by the scalars 2.5 (ACL_DOUBLE)
 *                           and -2 (ACL_FLOAT): prints "status <phase 1 status>", then the
 *                           six results (%.6f), or "message <aclGetRecentErrMsg>"; then
 *                           "short status <s>" of the same call with one scalar only
 *
 * Exit status 0 when the calls ran as described, 1 when a runtime call failed.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_exp.h"
#include "aclnnop/aclnn_foreach_mul_scalar_list.h"
#include "aclnnop/aclnn_ndtri.h"

typedef aclnnStatus (*phase1_fn)(const aclTensor *, aclTensor *, uint64_t *, aclOpExecutor **);
typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

/* One unary call on n floats: in -> out. Returns phase 1's status, or -1 when another call
   failed (told on stderr). */
static int unary(phase1_fn phase1, phase2_fn phase2, aclrtStream stream, const float *in,
                 float *out, int64_t n)
{
    int64_t shape[1] = {n}, strides[1] = {1};
    size_t bytes = (size_t)n * sizeof(float);
    void *x = NULL, *y = NULL;
    if (aclrtMalloc(&x, bytes, ACL_MEM_MALLOC_HUGE_FIRST) || aclrtMalloc(&y, bytes, ACL_MEM_MALLOC_HUGE_FIRST) ||
        aclrtMemcpy(x, bytes, in, bytes, ACL_MEMCPY_HOST_TO_DEVICE)) {
        fprintf(stderr, "allocation or copy failed: %s\n", aclGetRecentErrMsg());
        return -1;
    }
    aclTensor *tx = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, x);
    aclTensor *ty = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, y);
    uint64_t workspace = 0;
    aclOpExecutor *executor = NULL;
    int status = phase1(tx, ty, &workspace, &executor);
    if (status == 0 && (phase2(NULL, workspace, executor, stream) || aclrtSynchronizeStream(stream) ||
                        aclrtMemcpy(out, bytes, y, bytes, ACL_MEMCPY_DEVICE_TO_HOST))) {
        fprintf(stderr, "launch failed: %s\n", aclGetRecentErrMsg());
        status = -1;
    }
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclrtFree(x);
    aclrtFree(y);
    return status;
}

static void *exp_thread(void *arg)
{
    float offset = *(const float *)arg, in[64], out[64];
    aclrtStream stream = NULL;
    if (aclrtSetDevice(0) || aclrtCreateStream(&stream))
        return "no stream";
    const char *wrong = NULL;
    for (int round = 0; !wrong && round < 20; round++) {
        for (int i = 0; i < 64; i++)
            in[i] = offset + 0.01f * (float)(i + round);
        if (unary(aclnnExpGetWorkspaceSize, aclnnExp, stream, in, out, 64) != 0)
            wrong = "a call failed";
        for (int i = 0; !wrong && i < 64; i++)
            if (fabsf(out[i] - expf(in[i])) > 1e-5f * expf(in[i]))
                wrong = "a wrong result";
    }
    aclrtDestroyStream(stream);
    return (void *)wrong;
}

static int fork_once(aclrtStream stream, const float *in, float *out, int print);

/* The scalar-list mode: see the top of the file. */
static int scalar_list_mode(aclrtStream stream)
{
    float in[6] = {0.0f, 1.0f, -1.0f, 2.0f, 3.0f, 4.0f}, out[6] = {0};
    int64_t sizes[2] = {4, 2}, strides[1] = {1}, storage[1] = {6};
    void *x = NULL, *y = NULL;
    if (aclrtMalloc(&x, sizeof in, ACL_MEM_MALLOC_HUGE_FIRST) ||
        aclrtMalloc(&y, sizeof out, ACL_MEM_MALLOC_HUGE_FIRST) ||
        aclrtMemcpy(x, sizeof in, in, sizeof in, ACL_MEMCPY_HOST_TO_DEVICE)) {
        fprintf(stderr, "allocation or copy failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    aclTensor *xs[2], *ys[2];
    for (int i = 0; i < 2; i++) { /* views of one storage each: the second from element 4 */
        int64_t offset = i == 0 ? 0 : 4;
        xs[i] = aclCreateTensor(&sizes[i], 1, ACL_FLOAT, strides, offset, ACL_FORMAT_ND, storage, 1, x);
        ys[i] = aclCreateTensor(&sizes[i], 1, ACL_FLOAT, strides, offset, ACL_FORMAT_ND, storage, 1, y);
    }
    aclTensorList *xl = aclCreateTensorList((const aclTensor *const *)xs, 2);
    aclTensorList *yl = aclCreateTensorList((const aclTensor *const *)ys, 2);
    double first = 2.5;
    float second = -2.0f;
    const aclScalar *scalars[2] = {aclCreateScalar(&first, ACL_DOUBLE), aclCreateScalar(&second, ACL_FLOAT)};
    aclScalarList *both = aclCreateScalarList(scalars, 2);
    uint64_t workspace = 0;
    aclOpExecutor *executor = NULL;
    int status = aclnnForeachMulScalarListGetWorkspaceSize(xl, both, yl, &workspace, &executor);
    printf("status %d\n", status);
    if (status == 0 && (aclnnForeachMulScalarList(NULL, workspace, executor, stream) ||
                        aclrtSynchronizeStream(stream) ||
                        aclrtMemcpy(out, sizeof out, y, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST))) {
        fprintf(stderr, "launch failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    if (status == 0)
        for (int i = 0; i < 6; i++)
            printf("%.6f\n", out[i]);
    else
        printf("message %s\n", aclGetRecentErrMsg());
    float lone = 1.0f;
    const aclScalar *one[1] = {aclCreateScalar(&lone, ACL_FLOAT)};
    aclScalarList *short_list = aclCreateScalarList(one, 1);
    printf("short status %d\n",
           (int)aclnnForeachMulScalarListGetWorkspaceSize(xl, short_list, yl, &workspace, &executor));
    aclDestroyScalarList(both);
    aclDestroyScalarList(short_list);
    aclDestroyTensorList(xl);
    aclDestroyTensorList(yl);
    aclrtFree(x);
    aclrtFree(y);
    return 0;
}

static volatile int g_busy_stop;

/* Launches aclnnExp until g_busy_stop: a thread inside kernels while another forks. */
static void *busy_thread(void *arg)
{
    (void)arg;
    float in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = 0.001f * (float)i;
    aclrtStream stream = NULL;
    if (aclrtSetDevice(0) || aclrtCreateStream(&stream))
        return "no stream";
    while (!g_busy_stop)
        if (unary(aclnnExpGetWorkspaceSize, aclnnExp, stream, in, out, 256) != 0)
            return "a call failed";
    aclrtDestroyStream(stream);
    return NULL;
}

/* The fork mode: see the top of the file. With `busy`, another thread launches kernels all
   along, and the program forks 20 times. */
static int fork_mode(aclrtStream stream, int busy)
{
    float in[4] = {0.0f, 1.0f, -1.0f, 2.0f}, out[4] = {0};
    if (unary(aclnnExpGetWorkspaceSize, aclnnExp, stream, in, out, 4) != 0)
        return 1;
    pthread_t other;
    if (busy)
        pthread_create(&other, NULL, busy_thread, NULL);
    for (int round = 0; round < (busy ? 20 : 1); round++) {
        if (fork_once(stream, in, out, !busy) != 0)
            return 1;
    }
    if (busy) {
        g_busy_stop = 1;
        void *wrong = NULL;
        pthread_join(other, &wrong);
        printf("busy thread %s\n", wrong ? (const char *)wrong : "ok");
    }
    int status = unary(aclnnExpGetWorkspaceSize, aclnnExp, stream, in, out, 4);
    printf("parent status %d\n", status);
    return status != 0;
}

/* Fork once: the child calls aclnnExp on a stream of its own and reports (its results when
   `print`), killed after 30 s. */
static int fork_once(aclrtStream stream, const float *in, float *out, int print)
{
    (void)stream;
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        alarm(30);
        aclrtStream own = NULL;
        int status = aclrtSetDevice(0) || aclrtCreateStream(&own)
                         ? -1
                         : unary(aclnnExpGetWorkspaceSize, aclnnExp, own, in, out, 4);
        if (print || status != 0)
            printf("child status %d\n", status);
        if (status == 0 && print)
            for (int i = 0; i < 4; i++)
                printf("%.6f\n", out[i]);
        else if (status != 0)
            printf("child message %s\n", aclGetRecentErrMsg());
        fflush(stdout);
        _exit(0);
    }
    int how = 0;
    waitpid(child, &how, 0);
    if (WIFSIGNALED(how)) {
        printf("child hung\n");
        return 1;
    }
    return 0;
}

static volatile sig_atomic_t g_handler_calls;

static void count_sigint(int signal_number)
{
    (void)signal_number;
    g_handler_calls++;
}

static void *send_sigint_later(void *unused)
{
    (void)unused;
    sleep(1);
    kill(getpid(), SIGINT);
    return NULL;
}

/* The interrupt modes: see the top of the file. */
static int interrupt_mode(aclrtStream stream, int own_handler)
{
    if (own_handler) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = count_sigint;
        sigemptyset(&action.sa_mask);
        sigaction(SIGINT, &action, NULL);
    } else {
        /* the default action itself: a program started with SIGINT ignored (as a background
           job of a shell without job control is) would otherwise keep ignoring it */
        signal(SIGINT, SIG_DFL);
    }
    int64_t shape[1] = {4}, strides[1] = {1};
    void *x = NULL, *y = NULL;
    if (aclrtMalloc(&x, 16, ACL_MEM_MALLOC_HUGE_FIRST) || aclrtMalloc(&y, 16, ACL_MEM_MALLOC_HUGE_FIRST))
        return 1;
    aclTensor *tx = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, x);
    aclTensor *ty = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, y);
    uint64_t workspace = 0;
    aclOpExecutor *executor = NULL;
    if (aclnnNdtriGetWorkspaceSize(tx, ty, &workspace, &executor) || aclnnNdtri(NULL, workspace, executor, stream)) {
        fprintf(stderr, "launch failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    pthread_t sender;
    pthread_create(&sender, NULL, send_sigint_later, NULL);
    int status = aclrtSynchronizeStream(stream);
    printf("sync status %d\n", status);
    if (status != 0)
        printf("message %s\n", aclGetRecentErrMsg());
    pthread_join(sender, NULL);
    printf("handler calls %d\n", (int)g_handler_calls);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclrtFree(x);
    aclrtFree(y);
    aclrtStream other = NULL;
    float in[4] = {0.0f, 1.0f, -1.0f, 2.0f}, out[4] = {0};
    int after = aclrtCreateStream(&other) ? -1 : unary(aclnnExpGetWorkspaceSize, aclnnExp, other, in, out, 4);
    printf("after status %d\n", after);
    if (other)
        aclrtDestroyStream(other);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exp";
    aclrtStream stream = NULL;
    if (aclInit(NULL) || aclrtSetDevice(0) || aclrtCreateStream(&stream)) {
        fprintf(stderr, "start failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    int failed = 0;
    if (strcmp(mode, "fork") == 0 || strcmp(mode, "fork-busy") == 0) {
        failed = fork_mode(stream, strcmp(mode, "fork-busy") == 0);
    } else if (strcmp(mode, "interrupt") == 0 || strcmp(mode, "interrupt-default") == 0) {
        failed = interrupt_mode(stream, strcmp(mode, "interrupt") == 0);
    } else if (strcmp(mode, "scalar-list") == 0) {
        failed = scalar_list_mode(stream);
    } else if (strcmp(mode, "threads") == 0) {
        float offsets[2] = {-1.0f, 1.0f};
        pthread_t threads[2];
        void *wrong[2] = {NULL, NULL};
        for (int i = 0; i < 2; i++)
            pthread_create(&threads[i], NULL, exp_thread, &offsets[i]);
        for (int i = 0; i < 2; i++)
            pthread_join(threads[i], &wrong[i]);
        for (int i = 0; i < 2; i++)
            if (wrong[i])
                printf("thread %d: %s\n", i, (const char *)wrong[i]);
        if (!wrong[0] && !wrong[1])
            printf("threads ok\n");
    } else {
        float in[4] = {0.0f, 1.0f, -1.0f, 2.0f}, out[4] = {0};
        int ndtri = strcmp(mode, "ndtri") == 0;
        int status = unary(ndtri ? aclnnNdtriGetWorkspaceSize : aclnnExpGetWorkspaceSize,
                           ndtri ? aclnnNdtri : aclnnExp, stream, in, out, 4);
        printf("status %d\n", status);
        if (status == 0)
            for (int i = 0; i < 4; i++)
                printf("%.6f\n", out[i]);
        else if (status > 0)
            printf("message %s\n", aclGetRecentErrMsg());
        failed = status < 0;
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return failed;
}
