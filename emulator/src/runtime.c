/*
 * aclnn_py host emulator -- runtime library (built as libascendcl.so).
 *
 * Implements the acl / aclrt subset declared in headers/acl_rt.h, the emulator
 * API of headers/aclnn_emu.h and the emu_* runtime services of emu_internal.h.
 * All runtime state lives here, guarded by one process-wide recursive mutex
 * (deferred tasks run while it is held and may call back into emu_* services).
 *
 * Lock order: libnnopbase's own mutex may be held only while calling nothing in
 * this library; tasks run here may call libnnopbase. So the order is always
 * runtime mutex -> nnopbase mutex, never the reverse.
 *
 * Error codes not stated in the project's facts file are documented where they
 * are chosen (see "Error code choices" comments).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "emu_internal.h"
#include "era.h"

/*
 * Error code choice for an asynchronous copy that finds its memory freed when
 * it runs (no public statement of what CANN returns): ACL_ERROR_RT_SYS_DMA,
 * "system dma硬件执行错误" in hicann/runtime docs/zh/api_ref/25-01_aclError.md.
 */

#define EMU_MAX_DEVICES 64
#define EMU_MAX_STREAMS_PER_DEVICE 1984 /* RT doc 06: explicit streams per device on A2/A3 */
/*
 * Tasks a stream holds before a launch waits for the device: CANN's submission queue
 * of a stream has rtsqDepth entries, 2048 on Atlas A2/A3 (hicann/runtime
 * src/runtime/config/910_B_93/dev_info_reg.cc; Stream::Setup in
 * docs/zh/design/modules/stream/stream.md). Past that depth the host waits for the
 * oldest task, so the emulator runs the oldest pending tasks first; below it, work
 * stays deferred until a synchronisation, which is what exposes a missing one.
 */
#define EMU_STREAM_DEPTH 2048
#define EMU_ERR_MAX_MESSAGES 64

/*
 * Quarantine of freed device memory: aclrtFree keeps a block's address range
 * reserved (never handed out by aclrtMalloc) until ACLNN_EMU_QUARANTINE
 * (default EMU_QUARANTINE_DEFAULT) more blocks have been freed, or keeping it
 * would reserve more than EMU_QUARANTINE_MAX_MAPPED bytes of address space,
 * or the host refuses a new mapping (aclrtMalloc then releases quarantined
 * blocks and retries); the oldest freed goes first. Quarantined blocks are
 * not device memory in use: they count neither against the device capacity
 * nor in aclrtGetMemInfo or the live figures of aclemuGetStats. Small blocks
 * are poisoned (every byte EMU_POISON_BYTE: NaN for every float type) and
 * kept read-only, within EMU_POISON_BUDGET bytes; the others have their pages
 * dropped and become inaccessible (PROT_NONE), so they cost no memory.
 * Deferred work also checks the allocation id of every range it touches
 * (emu_devmem_still_valid), which catches a freed block even once its address
 * has been handed out again.
 */
#define EMU_QUARANTINE_DEFAULT 256
#define EMU_QUARANTINE_LIMIT 65536 /* the largest ACLNN_EMU_QUARANTINE accepted */
#define EMU_QUARANTINE_MAX_MAPPED ((uint64_t)64 << 30)
#define EMU_POISON_BYTE 0xFF
#define EMU_POISON_MAX_BLOCK ((size_t)1 << 20) /* larger blocks are dropped, not poisoned */
#define EMU_POISON_BUDGET ((uint64_t)16 << 20) /* poisoned bytes kept at most */

/* ------------------------------------------------------------------------- */
/* Global state                                                              */
/* ------------------------------------------------------------------------- */

static pthread_mutex_t g_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
#define LOCK() pthread_mutex_lock(&g_mu)
#define UNLOCK() pthread_mutex_unlock(&g_mu)
/* Signalled whenever a thread finishes running a stream's task (see stream_run). */
static pthread_cond_t g_task_done = PTHREAD_COND_INITIALIZER;

static bool g_inited;
/* aclInit's reference count, as CANN keeps it (hicann/runtime src/acl/aclrt_impl/acl.cpp,
 * aclInitImpl / aclFinalizeImpl / aclFinalizeReferenceImpl; docs/zh/api_ref/
 * 02_initialization_and_deinitialization.md): every aclInit adds one, a repeat included
 * (which still returns 100002); aclFinalize clears it and de-initialises for every user
 * in the process; aclFinalizeReference takes one away and de-initialises at zero. */
static uint64_t g_init_refs;
static char g_soc[64] = "Ascend910B3";
static bool g_bf16 = true;
static int32_t g_dev_count = 1;  /* visible devices (user ids 0 .. g_dev_count - 1) */
static int32_t g_phys_count = 1; /* ACLNN_EMU_DEVICE_COUNT; logical ids 0 .. g_phys_count - 1 */

/*
 * ASCEND_RT_VISIBLE_DEVICES, read at aclInit. The emulator models no container, so a device's
 * physical id is its logical id (hicann/runtime docs/zh/api_ref/04_device_management.md, "用户
 * 设备ID、逻辑设备ID、物理设备ID之间的关系"); g_visible_ids maps user ids to logical ids.
 */
typedef enum {
    VISIBLE_UNSET,         /* every device visible, user id = logical id */
    VISIBLE_OK,
    VISIBLE_NO_DEVICE,     /* empty, or no leading id below the device count */
    VISIBLE_NOT_ASCENDING,
    VISIBLE_DUPLICATED,
} visibility;
#define EMU_VISIBLE_MAX_LEN 128 /* RT_SET_DEVICE_STR_MAX_LEN, hicann/runtime base_info.hpp */
static visibility g_visibility;
static int32_t g_visible_ids[EMU_MAX_DEVICES];
static char g_visible_value[EMU_VISIBLE_MAX_LEN + 1];
static uint64_t g_dev_capacity = 16ull << 30;
static uint64_t g_next_id = 1; /* handle generation ids, never reused */
static size_t g_quarantine_max = EMU_QUARANTINE_DEFAULT;
/* ACLNN_EMU_OP_CACHE=1: the aclnn executor cache is modelled (meta.c); each aclInit with it on
 * starts a new epoch (an empty cache); 0 while it is off or ACL is finalized */
static uint64_t g_op_cache_epoch;
static uint64_t g_op_cache_epochs;

/*
 * ACLNN_EMU_LINK=<latency_us>:<GB/s>: a transfer model, off unless set. Virtual time runs on
 * CLOCK_MONOTONIC (ns). Each device has a copy engine (host<->device copies: latency +
 * bytes / bandwidth each) and a compute engine (kernels and device-to-device copies: the real
 * time their run took), working concurrently. When a stream's tasks run (at synchronisation),
 * each starts at the latest of its enqueue time, the end of the previous task on its stream
 * and its engine's free time; event records take no time. Synchronising a stream, an event or
 * the device returns no earlier than the end of the work waited for (aclrtStreamQuery reports
 * not ready until then; aclrtDestroyStream does not wait); a synchronous host<->device
 * aclrtMemcpy takes the copy engine from max(now, engine free) and returns at its end. The
 * host copy itself stands for the modelled one (a copy is never faster than the host).
 */
static bool g_link;
static uint64_t g_link_latency_ns;
static double g_link_bytes_per_ns; /* GB/s = bytes per ns */

typedef struct context context;
typedef struct stream stream;
typedef struct event event;

/* Each handle struct starts with its generation id (see handle_new). */

struct context {
    uint64_t id;
    int32_t device;
    bool is_default;
    stream *default_stream;
};

struct stream {
    uint64_t id;
    context *ctx;
    int32_t device;
    bool is_default;
    emu_task *head, *tail;
    uint64_t n_pending;
    uint64_t seq_enqueued; /* tasks ever queued */
    uint64_t seq_done;     /* tasks ever run or dropped (FIFO, so the first seq_done of seq_enqueued) */
    bool query_not_ready_reported;
    uint64_t end_ns; /* ACLNN_EMU_LINK: virtual end of the last task run */
    bool running;    /* a thread is running the head task, outside the lock (see stream_run) */
    aclError failed; /* first failure of work run by the queue-depth bound, for the next sync */
};

struct event {
    uint64_t id;
    int32_t device;
    bool recorded;          /* a record was issued */
    bool completed;         /* the latest record has run */
    stream *rec_stream;
    uint64_t rec_stream_id;
    uint64_t rec_seq;       /* stream seq_enqueued value right after the record task */
    uint64_t generation;    /* bumped by every record */
    struct timespec ts;
    uint64_t done_ns;       /* ACLNN_EMU_LINK: virtual time of the latest record */
    uint32_t not_ready_polls; /* queries that found the latest record pending (see query_event) */
};

typedef struct {
    int32_t refcount; /* aclrtSetDevice count */
    context *default_ctx;
    uint64_t used_bytes;
    int64_t explicit_streams;
    uint64_t copy_free_ns, compute_free_ns; /* ACLNN_EMU_LINK: when each engine is next free */
    int64_t h2d, d2h, kernels; /* since load or reset: aclemuGetDeviceStats */
} device_state;

static device_state g_devices[EMU_MAX_DEVICES];

/* live handle registries (pointer arrays; handles are never dereferenced before lookup) */
typedef struct {
    void **items;
    size_t n, cap;
} registry;

static registry g_ctxs, g_streams, g_events;

/* memory allocations, sorted by address */
typedef struct {
    char *base;         /* address handed out */
    size_t size;        /* requested bytes */
    char *map;          /* mapping start */
    size_t map_len;     /* mapping length including the guard page */
    int32_t device;     /* -1 for host (aclrtMallocHost) */
    uint64_t id;        /* allocation id: unique, never reused */
    uint64_t freed_seq; /* in quarantine: when it was freed (the oldest leaves first) */
    bool poisoned;      /* in quarantine: poisoned and readable (else its pages are dropped) */
} mem_block;

typedef struct {
    mem_block *items;
    size_t n, cap;
} block_list;

/* live device and pinned host allocations; freed device blocks still reserved */
static block_list g_dev_mem, g_host_mem, g_quarantine;
static uint64_t g_next_alloc_id = 1;
static uint64_t g_free_seq;
static uint64_t g_quarantine_bytes;  /* requested bytes of the quarantined blocks */
static uint64_t g_quarantine_mapped; /* their mapping lengths */
static uint64_t g_poisoned_bytes;    /* requested bytes of the poisoned ones */

/* counters */
static int64_t g_live_device_bytes, g_peak_device_bytes;
static int64_t g_h2d, g_d2h, g_d2d, g_malloc_calls;
static int64_t g_memcpy_calls, g_sync_calls; /* every call made, whatever its outcome */
#define COUNT_CALL(counter) __atomic_add_fetch(&(counter), 1, __ATOMIC_RELAXED)
static int64_t g_counters[EMU_COUNTER_COUNT]; /* emu_counter */

/* faults: every one armed since the last aclemuClearFaults, fired ones included */
static aclemuFault *g_faults;
static size_t g_n_faults, g_cap_faults;
static size_t g_n_armed; /* of those, not yet fired */

/* thread-local current context (pointer plus generation id, so a destroyed
 * context whose memory is reused is never mistaken for a live one) */
static __thread context *t_ctx;
static __thread uint64_t t_ctx_id;

/* ------------------------------------------------------------------------- */
/* Per-thread error text                                                     */
/* ------------------------------------------------------------------------- */

typedef struct {
    char *msgs[EMU_ERR_MAX_MESSAGES]; /* oldest first */
    size_t n;
    char *returned; /* what the last aclGetRecentErrMsg returned */
} errbuf;

static pthread_key_t g_err_key;
static pthread_once_t g_err_once = PTHREAD_ONCE_INIT;
static bool g_verbose;

static void errbuf_free(void *p)
{
    errbuf *e = p;
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++)
        free(e->msgs[i]);
    free(e->returned);
    free(e);
}

static void err_key_init(void)
{
    pthread_key_create(&g_err_key, errbuf_free);
    const char *v = getenv("ACLNN_EMU_VERBOSE");
    g_verbose = v && *v && strcmp(v, "0") != 0;
}

static errbuf *get_errbuf(void)
{
    pthread_once(&g_err_once, err_key_init);
    errbuf *e = pthread_getspecific(g_err_key);
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e)
            return NULL;
        pthread_setspecific(g_err_key, e);
    }
    return e;
}

EMU_EXPORT void emu_error(const char *fmt, ...)
{
    errbuf *e = get_errbuf();
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    int r = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (r < 0 || !msg)
        return;
    if (g_verbose)
        fprintf(stderr, "[aclnn-emu] %s\n", msg);
    if (!e) {
        free(msg);
        return;
    }
    if (e->n == EMU_ERR_MAX_MESSAGES) { /* drop the oldest */
        free(e->msgs[0]);
        memmove(e->msgs, e->msgs + 1, (EMU_ERR_MAX_MESSAGES - 1) * sizeof e->msgs[0]);
        e->n--;
    }
    e->msgs[e->n++] = msg;
}

EMU_EXPORT const char *aclGetRecentErrMsg(void)
{
    /* A fault here makes the call return NULL (its documented failure value);
     * the fault message then waits for the next call. */
    if (emu_fault("aclGetRecentErrMsg"))
        return NULL;
    errbuf *e = get_errbuf();
    if (!e)
        return NULL;
    free(e->returned);
    e->returned = NULL;
    if (e->n == 0)
        return NULL;
    size_t total = 1;
    for (size_t i = 0; i < e->n; i++)
        total += strlen(e->msgs[i]) + 1;
    char *out = malloc(total);
    if (!out)
        return NULL;
    char *p = out;
    for (size_t i = e->n; i-- > 0;) { /* newest first */
        size_t len = strlen(e->msgs[i]);
        memcpy(p, e->msgs[i], len);
        p += len;
        if (i > 0)
            *p++ = '\n';
        free(e->msgs[i]);
    }
    *p = '\0';
    e->n = 0;
    e->returned = out;
    return out;
}

/* ------------------------------------------------------------------------- */
/* Faults                                                                    */
/* ------------------------------------------------------------------------- */

/*
 * Every API with a fault point: the CANN functions the three libraries export
 * (runtime.c, meta.c, and libopapi.so's operator files), each of which passes its
 * own name to emu_fault, EMU_RETURN_IF_FAULT, sync_fault or emu_executor_fault
 * (through ops_phase1 / ops_phase2 for the operators). aclemuInjectFault
 * accepts only these names; the tests check the table against the exports.
 */
static const char *const g_fault_apis[] = {
    /* libascendcl.so */
    "aclInit", "aclFinalize", "aclFinalizeReference", "aclGetRecentErrMsg",
    "aclrtSetDevice", "aclrtResetDevice", "aclrtGetDevice", "aclrtGetDeviceCount", "aclrtSynchronizeDevice",
    "aclrtGetLogicDevIdByUserDevId", "aclrtGetUserDevIdByLogicDevId", "aclrtGetLogicDevIdByPhyDevId",
    "aclrtGetPhyDevIdByLogicDevId",
    "aclrtCreateContext", "aclrtDestroyContext", "aclrtSetCurrentContext", "aclrtGetCurrentContext",
    "aclrtCreateStream", "aclrtDestroyStream", "aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout",
    "aclrtStreamQuery",
    "aclrtCreateEvent", "aclrtDestroyEvent", "aclrtRecordEvent", "aclrtSynchronizeEvent",
    "aclrtEventElapsedTime", "aclrtQueryEventStatus", "aclrtQueryEvent",
    "aclrtMalloc", "aclrtFree", "aclrtMallocHost", "aclrtFreeHost", "aclrtGetMemInfo",
    "aclrtMemcpy", "aclrtMemcpyAsync", "aclrtMemset",
    "aclrtGetSocName", "aclrtGetVersion",
    /* libnnopbase.so */
    "aclCreateTensor", "aclDestroyTensor", "aclGetViewOffset", "aclGetFormat", "aclGetDataType",
    "aclCreateScalar", "aclDestroyScalar", "aclCreateIntArray", "aclDestroyIntArray",
    "aclCreateFloatArray", "aclDestroyFloatArray", "aclCreateBoolArray", "aclDestroyBoolArray",
    "aclCreateTensorList", "aclDestroyTensorList",
    "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor",
    "aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr",
    "aclnnInit", "aclnnFinalize",
    /* libopapi.so */
    "aclnnMseLossBackwardGetWorkspaceSize", "aclnnMseLossBackward",
    "aclnnMseLossGetWorkspaceSize", "aclnnMseLoss",
    "aclnnL1LossGetWorkspaceSize", "aclnnL1Loss",
    "aclnnL1LossBackwardGetWorkspaceSize", "aclnnL1LossBackward",
    "aclnnSmoothL1LossGetWorkspaceSize", "aclnnSmoothL1Loss",
    "aclnnSmoothL1LossBackwardGetWorkspaceSize", "aclnnSmoothL1LossBackward",
    "aclnnAddGetWorkspaceSize", "aclnnAdd", "aclnnInplaceAddGetWorkspaceSize", "aclnnInplaceAdd",
};

#define EMU_N_FAULT_APIS (sizeof g_fault_apis / sizeof g_fault_apis[0])

static bool is_fault_api(const char *api)
{
    for (size_t i = 0; i < EMU_N_FAULT_APIS; i++)
        if (strcmp(g_fault_apis[i], api) == 0)
            return true;
    return false;
}

EMU_EXPORT int32_t emu_fault(const char *api)
{
    if (!api)
        return 0;
    int32_t status = 0;
    LOCK();
    if (g_n_armed) {
        for (size_t i = 0; i < g_n_faults; i++) {
            aclemuFault *f = &g_faults[i];
            if (f->fired || strcmp(f->api, api) != 0)
                continue;
            if (--f->remaining > 0)
                continue;
            /* fires (several armed for the same call fire together; the first armed sets the status) */
            f->remaining = 0;
            f->fired = 1;
            g_n_armed--;
            if (status == 0)
                status = f->status;
        }
    }
    UNLOCK();
    if (status)
        emu_error("%s: injected fault, status %" PRId32, api, status);
    return status;
}

EMU_EXPORT int32_t aclemuInjectFault(const char *api, int64_t nth, int32_t status)
{
    if (!api || !*api || nth < 1 || status == 0) {
        emu_error("aclemuInjectFault: invalid argument (api must be a non-empty name, nth >= 1, status != 0)");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (!is_fault_api(api)) {
        emu_error("aclemuInjectFault: unknown API '%.*s': the emulator implements no function of that name, so "
                  "the fault could never fire (aclemuGetFaultApis lists the names it accepts)", 200, api);
        return ACL_ERROR_INVALID_PARAM;
    }
    LOCK();
    if (g_n_faults == g_cap_faults) {
        size_t cap = g_cap_faults ? 2 * g_cap_faults : 8;
        aclemuFault *nf = realloc(g_faults, cap * sizeof *nf);
        if (!nf) {
            UNLOCK();
            emu_error("aclemuInjectFault: out of host memory");
            return ACL_ERROR_BAD_ALLOC;
        }
        g_faults = nf;
        g_cap_faults = cap;
    }
    aclemuFault *f = &g_faults[g_n_faults++];
    memset(f, 0, sizeof *f);
    snprintf(f->api, sizeof f->api, "%s", api); /* known names are all shorter */
    f->nth = nth;
    f->remaining = nth;
    f->status = status;
    g_n_armed++;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT int32_t aclemuClearFaults(void)
{
    LOCK();
    free(g_faults);
    g_faults = NULL;
    g_n_faults = g_cap_faults = g_n_armed = 0;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT int32_t aclemuGetFaults(aclemuFault *faults, int64_t capacity, int64_t *count)
{
    if (!count || capacity < 0 || (!faults && capacity > 0)) {
        emu_error("aclemuGetFaults: invalid argument (count must not be NULL, capacity >= 0, faults may be NULL "
                  "only when capacity is 0)");
        return ACL_ERROR_INVALID_PARAM;
    }
    LOCK();
    size_t n = g_n_faults < (uint64_t)capacity ? g_n_faults : (size_t)capacity;
    if (n)
        memcpy(faults, g_faults, n * sizeof *faults);
    *count = (int64_t)g_n_faults;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT int32_t aclemuGetFaultApis(const char **names, int64_t capacity, int64_t *count)
{
    if (!count || capacity < 0 || (!names && capacity > 0)) {
        emu_error("aclemuGetFaultApis: invalid argument (count must not be NULL, capacity >= 0, names may be "
                  "NULL only when capacity is 0)");
        return ACL_ERROR_INVALID_PARAM;
    }
    for (size_t i = 0; i < EMU_N_FAULT_APIS && i < (uint64_t)capacity; i++)
        names[i] = g_fault_apis[i];
    *count = (int64_t)EMU_N_FAULT_APIS;
    return ACL_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Registries                                                                */
/* ------------------------------------------------------------------------- */

static bool reg_add(registry *r, void *p)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        void **ni = realloc(r->items, cap * sizeof *ni);
        if (!ni)
            return false;
        r->items = ni;
        r->cap = cap;
    }
    r->items[r->n++] = p;
    return true;
}

static bool reg_has(const registry *r, const void *p)
{
    if (!p)
        return false;
    for (size_t i = 0; i < r->n; i++)
        if (r->items[i] == p)
            return true;
    return false;
}

static void reg_remove(registry *r, const void *p)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->items[i] == p) {
            memmove(r->items + i, r->items + i + 1, (r->n - i - 1) * sizeof *r->items);
            r->n--;
            return;
        }
    }
}

static void reg_free(registry *r)
{
    free(r->items);
    r->items = NULL;
    r->n = r->cap = 0;
}

/*
 * A zeroed handle object of `size` bytes, registered in r and given a fresh
 * generation id (the `id` field every handle struct starts with), or NULL when
 * out of host memory. Lock held.
 */
static void *handle_new(registry *r, size_t size)
{
    uint64_t *h = calloc(1, size);
    if (!h)
        return NULL;
    if (!reg_add(r, h)) {
        free(h);
        return NULL;
    }
    *h = g_next_id++;
    return h;
}

/*
 * Whether h is a live handle of r; if not, records "<api>: <kind> <h> is not a
 * live <kind> ..." and returns 100000 for NULL, 107000 for any other handle.
 * Lock held.
 */
static aclError check_live_handle(const char *api, const registry *r, const char *kind, const void *h)
{
    if (reg_has(r, h))
        return ACL_SUCCESS;
    emu_error("%s: %s %p is not a live %s (never created, already destroyed, or its device was reset)", api, kind,
              h, kind);
    return h ? ACL_ERROR_RT_PARAM_INVALID : ACL_ERROR_INVALID_PARAM;
}

/* Unregister and free a handle object. Lock held. */
static void handle_free(registry *r, void *h)
{
    reg_remove(r, h);
    free(h);
}

/* ------------------------------------------------------------------------- */
/* Init / config                                                             */
/* ------------------------------------------------------------------------- */

static void report_uninitialized(const char *api)
{
    emu_error("%s: ACL is not initialized: call aclInit first (or aclFinalize was already called)", api);
}

EMU_EXPORT bool emu_require_init(const char *api)
{
    LOCK();
    bool ok = g_inited;
    UNLOCK();
    if (!ok)
        report_uninitialized(api);
    return ok;
}

/*
 * Checks that open the public APIs. They return from the calling API, hence
 * macros; each API uses them in the order its checks are made.
 */

/* Return the status from the calling API unless it is ACL_SUCCESS. */
#define RETURN_IF_ERROR(expr)                 \
    do {                                      \
        aclError status_ = (expr);            \
        if (status_ != ACL_SUCCESS)           \
            return status_;                   \
    } while (0)

#define REQUIRE_INIT(api)                     \
    do {                                      \
        if (!emu_require_init(api))           \
            return ACL_ERROR_UNINITIALIZE;    \
    } while (0)

/* How (nearly) every public API starts: its fault point, then the aclInit check. */
#define ENTER(api)                            \
    do {                                      \
        EMU_RETURN_IF_FAULT(api);             \
        REQUIRE_INIT(api);                    \
    } while (0)

/* A required pointer argument: ACL_ERROR_INVALID_PARAM with "<api>: <name> is NULL". */
#define REQUIRE_ARG(api, ptr, name)                  \
    do {                                             \
        if (!(ptr)) {                                \
            emu_error("%s: %s is NULL", api, name);  \
            return ACL_ERROR_INVALID_PARAM;          \
        }                                            \
    } while (0)

static bool parse_u64(const char *s, const char **end, uint64_t *out)
{
    if (!isdigit((unsigned char)*s))
        return false;
    uint64_t v = 0;
    while (isdigit((unsigned char)*s)) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
        s++;
    }
    *end = s;
    *out = v;
    return true;
}

static bool parse_bytes(const char *s, uint64_t *out)
{
    const char *end;
    uint64_t v;
    if (!parse_u64(s, &end, &v))
        return false;
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: return false;
    }
    if (*end != '\0' || v == 0)
        return false;
    if (shift && v > (UINT64_MAX >> shift))
        return false;
    *out = v << shift;
    return true;
}

/*
 * The SoC names aclrtGetSocName can report: the SoC_version of every Ascend platform
 * configuration in hicann/runtime src/platform/platform_config (HEAD 681ef761), then the
 * Short_SoC_version family names those files give, plus "Ascend910_95", the short name
 * CANN's operator and tooling code uses for the Ascend 950 family (hicann/ops-nn build
 * scripts: SUPPORT_COMPUTE_UNIT_SHORT "ascend910_95", printed as "ascend950").
 */
static const char *const g_known_socs[] = {
    "Ascend031", "Ascend035", "Ascend035A", "Ascend035B",
    "Ascend310B1", "Ascend310B2", "Ascend310B3", "Ascend310B4",
    "Ascend310P1", "Ascend310P3", "Ascend310P5", "Ascend310P7",
    "Ascend350_354f", "Ascend350_355e",
    "Ascend910A", "Ascend910PremiumA", "Ascend910ProA", "Ascend910ProB",
    "Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4", "Ascend910B4-1",
    "Ascend910_9362", "Ascend910_9363", "Ascend910_9372", "Ascend910_9381", "Ascend910_9382",
    "Ascend910_9391", "Ascend910_9392",
    "Ascend950DT_950x", "Ascend950DT_950y", "Ascend950DT_9571", "Ascend950DT_9572",
    "Ascend950DT_9573", "Ascend950DT_9574", "Ascend950DT_9575", "Ascend950DT_9576",
    "Ascend950DT_9577", "Ascend950DT_9578", "Ascend950DT_9581", "Ascend950DT_9581x",
    "Ascend950DT_9582", "Ascend950DT_9582x", "Ascend950DT_9583", "Ascend950DT_9584",
    "Ascend950DT_9585", "Ascend950DT_9586", "Ascend950DT_9587", "Ascend950DT_9588",
    "Ascend950DT_9591", "Ascend950DT_9592", "Ascend950DT_9595", "Ascend950DT_9596",
    "Ascend950DT_95A1", "Ascend950DT_95A2",
    "Ascend950PR_950z", "Ascend950PR_9579", "Ascend950PR_957b", "Ascend950PR_957bx",
    "Ascend950PR_957c", "Ascend950PR_957d", "Ascend950PR_9589", "Ascend950PR_958b",
    "Ascend950PR_9599",
    /* family (short) names */
    "Ascend310B", "Ascend310P", "Ascend350", "Ascend910", "Ascend910B", "Ascend910_93",
    "Ascend950", "Ascend910_95",
};

static bool soc_known(const char *name)
{
    for (size_t i = 0; i < sizeof g_known_socs / sizeof g_known_socs[0]; i++)
        if (strcmp(name, g_known_socs[i]) == 0)
            return true;
    return false;
}

/* bfloat16 in aclnn kernels: Atlas A2 (Ascend910B*), Atlas A3 (Ascend910_93*) and the
 * Ascend 950 family (Ascend950*, short name Ascend910_95) -- "DAV_2201 or regbase" in
 * hicann/ops-nn level2_base.h (GetDtypeSupportListV2); the same rule as the binding's
 * aclnn_py/_dtypes.py. */
static bool soc_has_bf16(const char *name)
{
    return strncmp(name, "Ascend910B", 10) == 0 || strncmp(name, "Ascend910_93", 12) == 0 ||
           strncmp(name, "Ascend950", 9) == 0 || strncmp(name, "Ascend910_95", 12) == 0;
}

static void report_unknown_soc(const char *value)
{
    char names[2048];
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < sizeof g_known_socs / sizeof g_known_socs[0] && used < sizeof names; i++) {
        int n = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", g_known_socs[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    emu_error("aclInit: environment variable ACLNN_EMU_SOC='%s' is not a SoC CANN knows; known "
              "names: %s", value, names);
}

/* A non-negative decimal number (digits and at most one '.') ending at `stop`; NULL on failure. */
static const char *parse_decimal(const char *s, char stop, double *out)
{
    const char *p = s;
    int dots = 0, digits = 0;
    for (; *p && *p != stop; p++) {
        if (*p == '.')
            dots++;
        else if (isdigit((unsigned char)*p))
            digits++;
        else
            return NULL;
    }
    if (digits == 0 || dots > 1 || *p != stop)
        return NULL;
    *out = strtod(s, NULL);
    return p;
}

/* ACLNN_EMU_LINK: unset or empty -> off; else <latency_us>:<GB/s>, bandwidth > 0. */
static bool parse_link(const char *v, uint64_t *latency_ns, double *bytes_per_ns)
{
    double us, gbs;
    const char *p = parse_decimal(v, ':', &us);
    if (!p || !parse_decimal(p + 1, '\0', &gbs) || gbs <= 0 || us > 1e9)
        return false;
    *latency_ns = (uint64_t)(us * 1e3 + 0.5);
    *bytes_per_ns = gbs;
    return true;
}

static aclError read_config(char *soc, bool *bf16, int32_t *count, uint64_t *capacity, size_t *quarantine,
                           bool *op_cache, bool *link, uint64_t *link_latency_ns, double *link_bytes_per_ns)
{
    const char *v = getenv("ACLNN_EMU_SOC");
    if (v) {
        size_t len = strlen(v);
        bool ok = len > 0 && len < 64;
        for (size_t i = 0; ok && i < len; i++)
            ok = isgraph((unsigned char)v[i]) != 0;
        if (!ok) {
            emu_error("aclInit: environment variable ACLNN_EMU_SOC='%s' is invalid: expected a SoC name "
                      "of 1 to 63 printable characters without spaces (e.g. Ascend910B3)", v);
            return ACL_ERROR_INVALID_PARAM;
        }
        if (!soc_known(v)) {
            report_unknown_soc(v);
            return ACL_ERROR_INVALID_PARAM;
        }
        strcpy(soc, v);
    } else {
        strcpy(soc, "Ascend910B3");
    }
    *bf16 = soc_has_bf16(soc);

    v = getenv("ACLNN_EMU_DEVICE_COUNT");
    *count = 1;
    if (v) {
        const char *end;
        uint64_t n;
        if (!parse_u64(v, &end, &n) || *end != '\0' || n < 1 || n > EMU_MAX_DEVICES) {
            emu_error("aclInit: environment variable ACLNN_EMU_DEVICE_COUNT='%s' is invalid: expected an "
                      "integer from 1 to %d", v, EMU_MAX_DEVICES);
            return ACL_ERROR_INVALID_PARAM;
        }
        *count = (int32_t)n;
    }

    v = getenv("ACLNN_EMU_DEVICE_MEMORY");
    *capacity = 16ull << 30;
    if (v) {
        uint64_t b;
        if (!parse_bytes(v, &b) || b > (uint64_t)INT64_MAX) {
            emu_error("aclInit: environment variable ACLNN_EMU_DEVICE_MEMORY='%s' is invalid: expected a "
                      "positive byte count with an optional K, M, G or T suffix (e.g. 16G)", v);
            return ACL_ERROR_INVALID_PARAM;
        }
        *capacity = b;
    }

    v = getenv("ACLNN_EMU_QUARANTINE");
    *quarantine = EMU_QUARANTINE_DEFAULT;
    if (v) {
        const char *end;
        uint64_t n;
        if (!parse_u64(v, &end, &n) || *end != '\0' || n > EMU_QUARANTINE_LIMIT) {
            emu_error("aclInit: environment variable ACLNN_EMU_QUARANTINE='%s' is invalid: expected the number "
                      "of freed device blocks kept from reuse, 0 to %d", v, EMU_QUARANTINE_LIMIT);
            return ACL_ERROR_INVALID_PARAM;
        }
        *quarantine = (size_t)n;
    }

    v = getenv("ACLNN_EMU_OP_CACHE");
    *op_cache = false;
    if (v) {
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
            emu_error("aclInit: environment variable ACLNN_EMU_OP_CACHE='%s' is invalid: expected 1 (model "
                      "the aclnn executor cache) or 0", v);
            return ACL_ERROR_INVALID_PARAM;
        }
        *op_cache = v[0] == '1';
    }

    v = getenv("ACLNN_EMU_LINK");
    *link = v && *v;
    if (*link && !parse_link(v, link_latency_ns, link_bytes_per_ns)) {
        emu_error("aclInit: environment variable ACLNN_EMU_LINK='%s' is invalid: expected "
                  "<latency_us>:<GB/s>, two decimal numbers, the bandwidth above 0 (e.g. 10:25), or empty "
                  "for no transfer model", v);
        return ACL_ERROR_INVALID_PARAM;
    }
    return ACL_SUCCESS;
}

/*
 * ASCEND_RT_VISIBLE_DEVICES as CANN's runtime reads it (hicann/runtime HEAD 681ef761:
 * src/runtime/core/src/runtime.cc, Runtime::GetVisibleDevices and SplitString; the cases of
 * tests/ut/runtime/runtime/test/platform/910B/rt_utest_runtime.cc,
 * ut_GetVisibleDevicesByChipCloudTest0). The first 128 characters count. Unless the value
 * starts with a digit it names no device; else ids are read up to the first character that
 * is neither a digit nor a comma, or the second comma in a row. Reading also stops at the
 * first id not below the device count (so "0,1,5,7" on 4 devices is "0,1"), and once every
 * device is named. An id below the previous one, or equal to one before, spoils the whole
 * value, as does naming no device; aclrtGetDeviceCount then fails (ApiImpl::GetDeviceCount),
 * aclInit does not. Set and empty names no device.
 */
static visibility read_visible_devices(const char *v, int32_t physical, int32_t *ids, int32_t *count)
{
    char text[EMU_VISIBLE_MAX_LEN + 1];
    snprintf(text, sizeof text, "%s", v);
    *count = 0;
    if (!isdigit((unsigned char)text[0]))
        return VISIBLE_NO_DEVICE;
    const char *p = text;
    while (*count < physical) {
        uint64_t id = 0;
        bool over = false;
        for (; isdigit((unsigned char)*p); p++) {
            id = id * 10 + (uint64_t)(*p - '0');
            over = over || id > INT32_MAX; /* std::stoi throws: an id out of range */
        }
        if (over || id >= (uint64_t)physical)
            break;
        for (int32_t j = 0; j < *count; j++) {
            if (ids[*count - 1] > (int32_t)id)
                return VISIBLE_NOT_ASCENDING;
            if (ids[j] == (int32_t)id)
                return VISIBLE_DUPLICATED;
        }
        ids[(*count)++] = (int32_t)id;
        if (*p != ',' || !isdigit((unsigned char)p[1]))
            break; /* another character, the end, or ",," */
        p++;
    }
    return *count ? VISIBLE_OK : VISIBLE_NO_DEVICE;
}

/* Lock held. A repeat counts: aclFinalizeReference must be called once more. */
static aclError repeated_init(void)
{
    g_init_refs++;
    UNLOCK();
    emu_error("aclInit: repeated initialization: aclInit was already called; counted (%" PRIu64
              " references): each needs its aclFinalizeReference, or one aclFinalize ends them all",
              g_init_refs);
    return ACL_ERROR_REPEAT_INITIALIZE;
}

EMU_EXPORT aclError aclInit(const char *configPath)
{
    EMU_RETURN_IF_FAULT("aclInit");
    LOCK();
    if (g_inited)
        return repeated_init();
    UNLOCK();
    /* configPath: NULL or "" = no configuration; otherwise the file must be readable.
     * Error code choice: ACL_ERROR_INVALID_FILE (100003, "请检查文件是否存在、文件是否能被访问",
     * RT doc 25-01). The JSON content itself is not interpreted. */
    if (configPath && *configPath) {
        FILE *f = fopen(configPath, "r");
        if (!f) {
            emu_error("aclInit: configPath '%s' cannot be opened: %s", configPath, strerror(errno));
            return ACL_ERROR_INVALID_FILE;
        }
        fclose(f);
    }
    char soc[64];
    bool bf16;
    int32_t count;
    uint64_t cap;
    size_t quarantine;
    bool op_cache, link;
    uint64_t link_latency_ns = 0;
    double link_bytes_per_ns = 0;
    aclError rc = read_config(soc, &bf16, &count, &cap, &quarantine, &op_cache, &link, &link_latency_ns,
                              &link_bytes_per_ns);
    if (rc)
        return rc;
    const char *visible = getenv("ASCEND_RT_VISIBLE_DEVICES");
    int32_t visible_ids[EMU_MAX_DEVICES], visible_count = count;
    visibility vis = visible ? read_visible_devices(visible, count, visible_ids, &visible_count)
                             : VISIBLE_UNSET;
    LOCK();
    if (g_inited) /* lost a race with another thread */
        return repeated_init();
    strcpy(g_soc, soc);
    g_bf16 = bf16;
    g_phys_count = count;
    g_visibility = vis;
    g_dev_count = vis == VISIBLE_UNSET ? count : vis == VISIBLE_OK ? visible_count : 0;
    for (int32_t i = 0; i < g_dev_count; i++)
        g_visible_ids[i] = vis == VISIBLE_UNSET ? i : visible_ids[i];
    snprintf(g_visible_value, sizeof g_visible_value, "%s", visible ? visible : "");
    g_dev_capacity = cap;
    g_quarantine_max = quarantine;
    g_link = link;
    g_link_latency_ns = link_latency_ns;
    g_link_bytes_per_ns = link_bytes_per_ns;
    __atomic_store_n(&g_op_cache_epoch, op_cache ? ++g_op_cache_epochs : 0, __ATOMIC_RELEASE);
    memset(g_devices, 0, sizeof g_devices);
    g_inited = true;
    g_init_refs = 1;
    UNLOCK();
    return ACL_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Contexts, streams, tasks                                                  */
/* ------------------------------------------------------------------------- */

static context *current_ctx(void)
{
    if (t_ctx && reg_has(&g_ctxs, t_ctx) && t_ctx->id == t_ctx_id)
        return t_ctx;
    return NULL;
}

static void set_current(context *c)
{
    t_ctx = c;
    t_ctx_id = c ? c->id : 0;
}

EMU_EXPORT int32_t emu_require_device(const char *api)
{
    LOCK();
    context *c = current_ctx();
    bool stale = t_ctx != NULL && c == NULL;
    int32_t dev = c ? c->device : -1;
    UNLOCK();
    if (dev < 0) {
        if (stale)
            emu_error("%s: the calling thread's current context is no longer valid (it was destroyed, its "
                      "device was reset, or aclFinalize was called): call aclrtSetDevice or "
                      "aclrtSetCurrentContext", api);
        else
            emu_error("%s: no current context in the calling thread: call aclrtSetDevice or "
                      "aclrtSetCurrentContext first", api);
    }
    return dev;
}

/* Declares `var`, the current device; returns ACL_ERROR_RT_CONTEXT_NULL without a context. */
#define REQUIRE_DEVICE(api, var)                 \
    int32_t var = emu_require_device(api);       \
    if (var < 0)                                 \
        return ACL_ERROR_RT_CONTEXT_NULL;

/* The same check where the device itself is not needed. */
#define REQUIRE_CONTEXT(api)                     \
    do {                                         \
        if (emu_require_device(api) < 0)         \
            return ACL_ERROR_RT_CONTEXT_NULL;    \
    } while (0)

static void task_release(emu_task *t)
{
    if (t && t->release)
        t->release(t);
}

/* release() of tasks that own nothing but their own allocation. */
static void task_free(emu_task *t)
{
    free(t);
}

/* Unlink the head task of s (not running) if it is one of the first `upto` ever queued, else NULL.
 * Lock held. */
static emu_task *stream_pop(stream *s, uint64_t upto)
{
    emu_task *t = s->head;
    if (!t || s->running || s->seq_done >= upto)
        return NULL;
    s->head = t->next;
    if (!s->head)
        s->tail = NULL;
    t->next = NULL;
    s->n_pending--;
    return t;
}

/* Whether s (seen with generation id `id`) is still a live stream. Lock held. */
static bool stream_alive(const stream *s, uint64_t id);

/* Wait until no thread runs a task of s; false if s was freed meanwhile. Lock held once. */
static bool stream_wait_idle(stream *s)
{
    uint64_t id = s->id;
    while (s->running) {
        pthread_cond_wait(&g_task_done, &g_mu);
        if (!stream_alive(s, id))
            return false;
    }
    return true;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* ACLNN_EMU_LINK: how long `bytes` occupy the copy engine. */
static uint64_t link_duration_ns(uint64_t bytes)
{
    return g_link_latency_ns + (uint64_t)((double)bytes / g_link_bytes_per_ns + 0.5);
}

/*
 * ACLNN_EMU_LINK: return at `target` (CLOCK_MONOTONIC ns), not before: sleep, then spin for the
 * last EMU_LINK_SPIN_NS. Called without the lock.
 */
#define EMU_LINK_SPIN_NS 100000u

static void link_wait_until(uint64_t target)
{
    uint64_t now = now_ns();
    if (now + EMU_LINK_SPIN_NS < target) {
        uint64_t wake = target - EMU_LINK_SPIN_NS;
        struct timespec ts = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
    while (now_ns() < target)
        ;
}

static aclError copy_run(emu_task *t);
static aclError record_run(emu_task *t);
static bool copy_task_on_link(const emu_task *t, uint64_t *bytes);
static void record_task_done(emu_task *t, uint64_t at_ns);

/* ACLNN_EMU_LINK: place t, which ran for run_ns, in virtual time (see g_link). Lock held. */
static void link_place(stream *s, emu_task *t, uint64_t run_ns)
{
    device_state *d = &g_devices[s->device];
    uint64_t start = max_u64(t->enqueue_ns, s->end_ns), bytes;
    if (copy_task_on_link(t, &bytes)) {
        start = max_u64(start, d->copy_free_ns);
        s->end_ns = d->copy_free_ns = start + link_duration_ns(bytes);
    } else if (t->run == record_run) {
        s->end_ns = start;
        record_task_done(t, start);
    } else {
        start = max_u64(start, d->compute_free_ns);
        s->end_ns = d->compute_free_ns = start + run_ns;
    }
}

/*
 * Run the tasks of s while seq_done < upto, in order. Returns the first error.
 * Called with the lock held once (not recursively), and returns with it held.
 *
 * A task runs outside the lock, so that a kernel may call back into the runtime
 * (emu_devmem_*, aclGetRecentErrMsg) or run code that takes other locks, while other
 * threads go on queuing and querying. It stays at the head of the stream until it is
 * done (`running`), so checks of pending work still see it; only one thread runs a
 * stream's tasks at a time, the others wait for it. Event records, which only touch
 * the runtime's own state, run under the lock.
 */
static aclError stream_run(stream *s, uint64_t upto, const char *api)
{
    aclError first = ACL_SUCCESS;
    uint64_t id = s->id;
    while (s->head && s->seq_done < upto) {
        if (s->running) {
            if (!stream_wait_idle(s))
                return first;
            continue;
        }
        emu_task *t = s->head;
        aclError rc = ACL_SUCCESS;
        uint64_t t0 = g_link ? now_ns() : 0;
        if (t->run == record_run) {
            rc = t->run(t);
        } else if (t->run) {
            s->running = true;
            UNLOCK();
            rc = t->run(t);
            LOCK();
            s->running = false;
            pthread_cond_broadcast(&g_task_done);
            if (!stream_alive(s, id)) /* freed meanwhile: its freeing waited, the task is ours */
                return rc;
        }
        if (g_link)
            link_place(s, t, now_ns() - t0);
        stream_pop(s, UINT64_MAX);
        s->seq_done++;
        if (rc != ACL_SUCCESS && first == ACL_SUCCESS) {
            first = rc;
            emu_error("%s: task %s on the stream failed with error %d", api, t->name ? t->name : "(unnamed)", rc);
        }
        task_release(t);
    }
    if (!s->head)
        s->query_not_ready_reported = false;
    return first;
}

/* Everything queued on s; a failure of work run earlier by the depth bound comes first. */
static aclError stream_run_all(stream *s, const char *api)
{
    aclError rc = stream_run(s, UINT64_MAX, api);
    if (s->failed) {
        if (!rc) {
            rc = s->failed;
            emu_error("%s: work queued on the stream failed with error %d when the stream's queue was full "
                      "and its oldest tasks ran", api, rc);
        }
        s->failed = ACL_SUCCESS;
    }
    return rc;
}

/* Drop (release unrun) the tasks of s while seq_done < upto, after any running one. Lock held once. */
static void stream_drop_upto(stream *s, uint64_t upto)
{
    emu_task *t;
    if (!stream_wait_idle(s))
        return;
    while ((t = stream_pop(s, upto)) != NULL) {
        s->seq_done++;
        task_release(t);
    }
    if (!s->head)
        s->query_not_ready_reported = false;
}

static void stream_drop(stream *s)
{
    stream_drop_upto(s, UINT64_MAX);
    s->failed = ACL_SUCCESS;
}

/*
 * The stream whose work up to e->rec_seq the latest record of e still waits
 * for, or NULL: never recorded, already completed, or recorded on a stream
 * that is gone (its work was run or dropped). Lock held.
 */
static stream *pending_record_stream(const event *e)
{
    if (e->recorded && !e->completed && reg_has(&g_streams, e->rec_stream) && e->rec_stream->id == e->rec_stream_id)
        return e->rec_stream;
    return NULL;
}

/*
 * Fault point of the synchronising APIs. An injected failure there stands for
 * the device failing the work: the work the call would have waited for is
 * dropped (released without running, so outputs are never written) and the
 * status returned, so a caller may free its buffers afterwards without later
 * calls tripping over stale tasks. Dropped: the stream h (NULL = the default
 * stream), every stream of the device (all_device), or the record stream of
 * ev up to and including its record.
 */
static int32_t sync_fault(const char *api, aclrtStream h, bool all_device, event *ev)
{
    int32_t f = emu_fault(api);
    if (!f)
        return 0;
    LOCK();
    context *c = current_ctx();
    if (g_inited && c) {
        if (all_device) {
            for (size_t i = 0; i < g_streams.n; i++) {
                stream *s = g_streams.items[i];
                if (s->device == c->device)
                    stream_drop(s);
            }
        } else if (ev) {
            stream *s = reg_has(&g_events, ev) ? pending_record_stream(ev) : NULL;
            if (s)
                stream_drop_upto(s, ev->rec_seq);
        } else {
            stream *s = NULL;
            if (!h)
                s = c->default_stream;
            else if (reg_has(&g_streams, h) && ((stream *)h)->device == c->device)
                s = h;
            if (s)
                stream_drop(s);
        }
    }
    UNLOCK();
    return f;
}

static stream *stream_new(context *c, bool is_default)
{
    stream *s = handle_new(&g_streams, sizeof *s);
    if (!s)
        return NULL;
    s->ctx = c;
    s->device = c->device;
    s->is_default = is_default;
    if (!is_default)
        g_devices[c->device].explicit_streams++;
    return s;
}

/* Free a stream, dropping its pending work. Lock held. */
static bool stream_alive(const stream *s, uint64_t id)
{
    return reg_has(&g_streams, s) && s->id == id;
}

static void stream_free(stream *s)
{
    if (!stream_wait_idle(s)) /* another thread freed it while its task ran */
        return;
    stream_drop(s);
    if (!s->is_default)
        g_devices[s->device].explicit_streams--;
    handle_free(&g_streams, s);
}

static context *ctx_new(int32_t device, bool is_default)
{
    context *c = handle_new(&g_ctxs, sizeof *c);
    if (!c)
        return NULL;
    c->device = device;
    c->is_default = is_default;
    c->default_stream = stream_new(c, true);
    if (!c->default_stream) {
        handle_free(&g_ctxs, c);
        return NULL;
    }
    return c;
}

/* Destroy a context and every stream made in it (pending work dropped). Lock held. */
static void ctx_free(context *c)
{
    for (size_t i = g_streams.n; i-- > 0;) {
        if (i >= g_streams.n) /* a stream freed elsewhere while one of ours finished its task */
            continue;
        stream *s = g_streams.items[i];
        if (s->ctx == c)
            stream_free(s);
    }
    /* Other threads that still point at c notice through the id check in current_ctx(). */
    handle_free(&g_ctxs, c);
}

/* ------------------------------------------------------------------------- */
/* Memory blocks                                                             */
/* ------------------------------------------------------------------------- */

static size_t page_size(void)
{
    static size_t ps;
    if (!ps) {
        long v = sysconf(_SC_PAGESIZE);
        ps = v > 0 ? (size_t)v : 4096;
    }
    return ps;
}

/* index of the last block with map <= p, or -1 */
static ptrdiff_t blocks_floor(const block_list *l, const void *p)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((const char *)l->items[mid].map <= (const char *)p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ptrdiff_t)lo - 1;
}

/* block whose mapping (allocation, padding or guard page) contains p */
static mem_block *blocks_find_mapping(const block_list *l, const void *p)
{
    ptrdiff_t i = blocks_floor(l, p);
    if (i < 0)
        return NULL;
    mem_block *b = &l->items[i];
    if ((const char *)p < b->map + b->map_len)
        return b;
    return NULL;
}

static ptrdiff_t blocks_find_base(const block_list *l, const void *p)
{
    ptrdiff_t i = blocks_floor(l, p);
    if (i >= 0 && l->items[i].base == (const char *)p)
        return i;
    return -1;
}

/*
 * Map a new block; returns false on mmap failure. huge: an aclrtMalloc policy that asks for huge
 * pages (hicann/runtime docs/api_docs/aclrtMemMallocPolicy.md: ACL_MEM_MALLOC_HUGE_FIRST takes 2M
 * pages for requests above 1M, normal pages up to 1M; ACL_MEM_TYPE_LOW/HIGH_BAND_WIDTH alone mean
 * HUGE_FIRST): the host is asked for transparent huge pages there, a hint it may ignore.
 */
#define EMU_HUGE_ABOVE ((size_t)1 << 20)

static bool block_map(size_t size, int32_t device, mem_block *out, bool huge)
{
    size_t ps = page_size();
    if (size > SIZE_MAX - 2 * ps)
        return false;
    size_t usable = (size + ps - 1) / ps * ps;
    size_t len = usable + ps;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return false;
    mprotect((char *)m + usable, ps, PROT_NONE); /* guard page: host overruns fault */
    if (huge && size > EMU_HUGE_ABOVE)
        madvise(m, usable, MADV_HUGEPAGE);
    size_t rounded = (size + 63) / 64 * 64;
    memset(out, 0, sizeof *out);
    out->map = m;
    out->map_len = len;
    out->base = (char *)m + usable - rounded; /* 64-byte aligned, ends next to the guard */
    out->size = size;
    out->device = device;
    out->id = g_next_alloc_id++;
    return true;
}

static bool blocks_insert(block_list *l, const mem_block *b)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        mem_block *ni = realloc(l->items, cap * sizeof *ni);
        if (!ni)
            return false;
        l->items = ni;
        l->cap = cap;
    }
    ptrdiff_t i = blocks_floor(l, b->map) + 1;
    memmove(l->items + i + 1, l->items + i, (l->n - (size_t)i) * sizeof *l->items);
    l->items[i] = *b;
    l->n++;
    return true;
}

/* Unlink block i from l, its mapping left in place. */
static mem_block blocks_take_at(block_list *l, size_t i)
{
    mem_block b = l->items[i];
    memmove(l->items + i, l->items + i + 1, (l->n - i - 1) * sizeof *l->items);
    l->n--;
    return b;
}

static void blocks_remove_at(block_list *l, size_t i)
{
    mem_block b = blocks_take_at(l, i);
    munmap(b.map, b.map_len);
}

/*
 * The block of l holding all of [ptr, ptr + bytes), or NULL. bytes == 0 asks
 * only that ptr be inside (or one past the end of) it.
 */
static const mem_block *blocks_holding(const block_list *l, const void *ptr, uint64_t bytes)
{
    if (!ptr)
        return NULL;
    ptrdiff_t i = blocks_floor(l, ptr);
    if (i < 0)
        return NULL;
    const mem_block *b = &l->items[i];
    const char *p = ptr;
    if (p < b->base)
        return NULL;
    uint64_t off = (uint64_t)(p - b->base);
    bool ok = bytes == 0 ? off <= b->size : off < b->size && bytes <= b->size - off;
    return ok ? b : NULL;
}

/* ---- quarantine (see EMU_QUARANTINE_DEFAULT) ---- */

/* Unmap quarantined block i: its address may be handed out again. Lock held. */
static void quarantine_release_at(size_t i)
{
    const mem_block *b = &g_quarantine.items[i];
    g_quarantine_bytes -= b->size;
    g_quarantine_mapped -= b->map_len;
    if (b->poisoned)
        g_poisoned_bytes -= b->size;
    blocks_remove_at(&g_quarantine, i);
}

/* Release the block freed longest ago; false when the quarantine is empty. Lock held. */
static bool quarantine_release_oldest(void)
{
    if (g_quarantine.n == 0)
        return false;
    size_t oldest = 0;
    for (size_t i = 1; i < g_quarantine.n; i++)
        if (g_quarantine.items[i].freed_seq < g_quarantine.items[oldest].freed_seq)
            oldest = i;
    quarantine_release_at(oldest);
    return true;
}

static void quarantine_flush(void)
{
    while (g_quarantine.n)
        quarantine_release_at(g_quarantine.n - 1);
    free(g_quarantine.items);
    memset(&g_quarantine, 0, sizeof g_quarantine);
}

/*
 * Take a freed device block (already unlinked from g_dev_mem) into the
 * quarantine: poison it or drop its pages, and keep its address range
 * reserved, releasing the oldest blocks beyond the bounds. Lock held.
 */
static void quarantine_add(mem_block b)
{
    if (g_quarantine_max == 0 || b.map_len > EMU_QUARANTINE_MAX_MAPPED) {
        munmap(b.map, b.map_len);
        return;
    }
    size_t usable = b.map_len - page_size(); /* the guard page stays as it is */
    b.poisoned = b.size <= EMU_POISON_MAX_BLOCK && g_poisoned_bytes + b.size <= EMU_POISON_BUDGET;
    if (b.poisoned) {
        memset(b.base, EMU_POISON_BYTE, b.size);
        mprotect(b.map, usable, PROT_READ);
    } else {
        madvise(b.map, usable, MADV_DONTNEED);
        mprotect(b.map, usable, PROT_NONE);
    }
    b.freed_seq = ++g_free_seq;
    while (g_quarantine.n >= g_quarantine_max || g_quarantine_mapped + b.map_len > EMU_QUARANTINE_MAX_MAPPED)
        if (!quarantine_release_oldest())
            break;
    if (!blocks_insert(&g_quarantine, &b)) {
        munmap(b.map, b.map_len); /* no bookkeeping memory: release it at once */
        return;
    }
    g_quarantine_bytes += b.size;
    g_quarantine_mapped += b.map_len;
    if (b.poisoned)
        g_poisoned_bytes += b.size;
}

/* Free live device block i: it leaves the device's used memory and enters the quarantine. Lock held. */
static void dev_block_retire_at(size_t i)
{
    mem_block *b = &g_dev_mem.items[i];
    g_devices[b->device].used_bytes -= b->size;
    g_live_device_bytes -= (int64_t)b->size;
    quarantine_add(blocks_take_at(&g_dev_mem, i));
}

EMU_EXPORT bool emu_devmem_contains(const void *ptr, uint64_t bytes, int32_t *device)
{
    LOCK();
    const mem_block *b = blocks_holding(&g_dev_mem, ptr, bytes);
    if (b && device)
        *device = b->device;
    UNLOCK();
    return b != NULL;
}

/* Pin [ptr, ptr + bytes) against the blocks of l. Lock held. */
static bool range_pin(const block_list *l, const void *ptr, uint64_t bytes, emu_range *out)
{
    const mem_block *b = bytes > 0 ? blocks_holding(l, ptr, bytes) : NULL;
    out->ptr = ptr;
    out->bytes = bytes;
    out->alloc_id = b ? b->id : 0;
    out->device = b ? b->device : -1;
    return b != NULL;
}

EMU_EXPORT bool emu_devmem_pin(const void *ptr, uint64_t bytes, emu_range *out)
{
    LOCK();
    bool ok = range_pin(&g_dev_mem, ptr, bytes, out);
    UNLOCK();
    return ok;
}

/*
 * Whether r, pinned against the blocks of l, still lies in the same live
 * allocation; if not, records why (see emu_devmem_still_valid). host: l is
 * the aclrtMallocHost list. Lock held.
 */
static bool range_still_valid(const block_list *l, bool host, const emu_task *task, const char *what,
                              const emu_range *r)
{
    const mem_block *b = r->alloc_id ? blocks_holding(l, r->ptr, r->bytes) : NULL;
    if (b && b->id == r->alloc_id)
        return true;
    const char *memory = host ? "pinned host memory" : "device memory";
    const char *free_api = host ? "aclrtFreeHost" : "aclrtFree";
    char why[256];
    if (r->alloc_id == 0) {
        snprintf(why, sizeof why, "the range was not inside one live %s allocation when the work was queued "
                 "(%s, never allocated, already freed, or past the end of its allocation)",
                 host ? "aclrtMallocHost" : "aclrtMalloc", host ? "pageable memory" : "host memory");
    } else {
        const mem_block *now = blocks_holding(l, r->ptr, 0);
        if (now)
            snprintf(why, sizeof why, "%s was freed (%s) while the work was pending, and its address now belongs "
                     "to another allocation (allocation id %" PRIu64 ", the work's was %" PRIu64 ")", memory,
                     free_api, now->id, r->alloc_id);
        else
            snprintf(why, sizeof why, "%s was freed (%s) while the work was pending", memory, free_api);
    }
    char where[64];
    if (task->stream)
        snprintf(where, sizeof where, "stream %p", task->stream);
    else
        snprintf(where, sizeof where, "the default stream");
    emu_error("%s queued on %s: %s at %p (%" PRIu64 " bytes): %s", task->name ? task->name : "work", where, what,
              r->ptr, r->bytes, why);
    return false;
}

EMU_EXPORT bool emu_devmem_still_valid(const emu_task *task, const char *what, const emu_range *r)
{
    LOCK();
    bool ok = range_still_valid(&g_dev_mem, false, task, what, r);
    UNLOCK();
    return ok;
}

/* ------------------------------------------------------------------------- */
/* Devices and contexts                                                      */
/* ------------------------------------------------------------------------- */

/* Release everything of device d (contexts, streams, events, memory). Lock held. */
static void device_release(int32_t d)
{
    for (size_t i = g_ctxs.n; i-- > 0;) {
        context *c = g_ctxs.items[i];
        if (c->device == d)
            ctx_free(c);
    }
    for (size_t i = g_events.n; i-- > 0;) {
        event *e = g_events.items[i];
        if (e->device == d)
            handle_free(&g_events, e);
    }
    for (size_t i = g_dev_mem.n; i-- > 0;)
        if (g_dev_mem.items[i].device == d)
            dev_block_retire_at(i);
    g_devices[d].refcount = 0;
    g_devices[d].default_ctx = NULL;
}

/* Lock held, ACL initialised: de-initialise for everyone in the process. */
static void finalize_all(void)
{
    /* Pending work is dropped, not run: nobody can observe its results any more. */
    for (int32_t d = 0; d < EMU_MAX_DEVICES; d++)
        device_release(d);
    for (size_t i = g_host_mem.n; i-- > 0;)
        blocks_remove_at(&g_host_mem, i);
    reg_free(&g_ctxs);
    reg_free(&g_streams);
    reg_free(&g_events);
    quarantine_flush();
    free(g_dev_mem.items);
    free(g_host_mem.items);
    memset(&g_dev_mem, 0, sizeof g_dev_mem);
    memset(&g_host_mem, 0, sizeof g_host_mem);
    g_live_device_bytes = 0;
    set_current(NULL);
    g_inited = false;
    g_init_refs = 0;
    __atomic_store_n(&g_op_cache_epoch, 0, __ATOMIC_RELEASE);
}

EMU_EXPORT aclError aclFinalize(void)
{
    EMU_RETURN_IF_FAULT("aclFinalize");
    LOCK();
    if (!g_inited) {
        UNLOCK();
        emu_error("aclFinalize: ACL is not initialized (aclInit was not called, or aclFinalize was already called)");
        return ACL_ERROR_REPEAT_FINALIZE;
    }
    finalize_all(); /* whatever the count: CANN's aclFinalize clears it */
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclFinalizeReference(uint64_t *refCount)
{
    EMU_RETURN_IF_FAULT("aclFinalizeReference");
    LOCK();
    if (!g_inited) {
        if (refCount)
            *refCount = 0;
        UNLOCK();
        emu_error("aclFinalizeReference: ACL is not initialized (aclInit was not called, or every "
                  "reference was already finalized, or aclFinalize ended them all)");
        return ACL_ERROR_REPEAT_FINALIZE;
    }
    if (--g_init_refs == 0)
        finalize_all();
    if (refCount)
        *refCount = g_init_refs;
    UNLOCK();
    return ACL_SUCCESS;
}

/* Lock held. */
static bool check_device_id(const char *api, int32_t id)
{
    if (id >= 0 && id < g_dev_count)
        return true;
    if (g_visibility == VISIBLE_UNSET)
        emu_error("%s: deviceId %" PRId32 " is invalid: the emulator has %" PRId32
                  " device(s) (ACLNN_EMU_DEVICE_COUNT), valid ids are 0 to %" PRId32,
                  api, id, g_dev_count, g_dev_count - 1);
    else if (g_dev_count == 0)
        emu_error("%s: deviceId %" PRId32 " is invalid: ASCEND_RT_VISIBLE_DEVICES='%s' makes no "
                  "device visible (aclrtGetDeviceCount says why)", api, id, g_visible_value);
    else
        emu_error("%s: deviceId %" PRId32 " is invalid: ASCEND_RT_VISIBLE_DEVICES='%s' makes %" PRId32
                  " of the %" PRId32 " device(s) visible, as ids 0 to %" PRId32, api, id,
                  g_visible_value, g_dev_count, g_phys_count, g_dev_count - 1);
    return false;
}

EMU_EXPORT aclError aclrtSetDevice(int32_t deviceId)
{
    static const char api[] = "aclrtSetDevice";
    ENTER(api);
    LOCK();
    if (!check_device_id(api, deviceId)) {
        UNLOCK();
        return ACL_ERROR_RT_INVALID_DEVICEID;
    }
    device_state *d = &g_devices[deviceId];
    if (!d->default_ctx) {
        d->default_ctx = ctx_new(deviceId, true);
        if (!d->default_ctx) {
            UNLOCK();
            emu_error("%s: out of host memory creating the default context of device %" PRId32, api, deviceId);
            return ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
        }
    }
    d->refcount++;
    set_current(d->default_ctx);
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtResetDevice(int32_t deviceId)
{
    static const char api[] = "aclrtResetDevice";
    ENTER(api);
    LOCK();
    if (!check_device_id(api, deviceId)) {
        UNLOCK();
        return ACL_ERROR_RT_INVALID_DEVICEID;
    }
    device_state *d = &g_devices[deviceId];
    if (d->refcount <= 0) {
        UNLOCK();
        emu_error("%s: device %" PRId32 " is not set: aclrtSetDevice was not called for it, "
                  "or every aclrtSetDevice was already matched by aclrtResetDevice", api, deviceId);
        return ACL_ERROR_RT_INVALID_DEVICEID;
    }
    if (--d->refcount == 0)
        device_release(deviceId);
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtGetDevice(int32_t *deviceId)
{
    static const char api[] = "aclrtGetDevice";
    ENTER(api);
    REQUIRE_ARG(api, deviceId, "deviceId");
    REQUIRE_DEVICE(api, dev);
    *deviceId = dev;
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtGetDeviceCount(uint32_t *count)
{
    static const char api[] = "aclrtGetDeviceCount";
    ENTER(api);
    REQUIRE_ARG(api, count, "count");
    LOCK();
    visibility vis = g_visibility;
    int32_t visible = g_dev_count, physical = g_phys_count;
    char value[sizeof g_visible_value];
    memcpy(value, g_visible_value, sizeof value);
    UNLOCK();
    if (vis == VISIBLE_UNSET || vis == VISIBLE_OK) {
        *count = (uint32_t)visible;
        return ACL_SUCCESS;
    }
    /* CANN's text is its error EE2002 (hicann/runtime src/runtime/api/impl/api_impl.cc,
     * ApiImpl::GetDeviceCount; docs/en/error_code_ref/RTS-Errors/EE2002-*.md); the status is
     * RT_ERROR_DRV_NO_DEVICE, i.e. ACL_ERROR_RT_NO_DEVICE (src/runtime/core/src/common/
     * errcode_manage.cc). */
    if (vis == VISIBLE_NO_DEVICE)
        emu_error("%s: Value '%s' for environment variable ASCEND_RT_VISIBLE_DEVICES is invalid. "
                  "Expected value: [0, %" PRId32 "). It names no device: it must start with a "
                  "device id below %" PRId32 ", the number of devices (ACLNN_EMU_DEVICE_COUNT); "
                  "ids are comma-separated, in ascending order, and reading stops at the first "
                  "other character or id out of range", api, value, physical, physical);
    else
        emu_error("%s: Value '%s' for environment variable ASCEND_RT_VISIBLE_DEVICES is invalid. "
                  "Expected value: %s", api, value,
                  vis == VISIBLE_DUPLICATED ? "Cannot be duplicated"
                                            : "configured in ascending order");
    return ACL_ERROR_RT_NO_DEVICE;
}

/*
 * The id mappings (CANN >= 8.5). hicann/runtime src/acl/aclrt_impl/device.cpp checks the
 * output pointer (ACL_ERROR_INVALID_PARAM), then src/runtime/api/api_c_device.cc rejects a
 * negative id with RT_ERROR_INVALID_VALUE (ACL_ERROR_RT_PARAM_INVALID), then api_error.cc /
 * runtime.cc (ChgUserDevIdToDeviceId, GetUserDevIdByDeviceId, CheckDeviceIdIsValid) an id out
 * of range or not visible with RT_ERROR_DEVICE_ID (ACL_ERROR_RT_INVALID_DEVICEID).
 * Error code choice: a physical id with no device, which CANN leaves to the driver
 * (rtGetDeviceIndexByPhyId / rtGetDevicePhyIdByIndex), also gets ACL_ERROR_RT_INVALID_DEVICEID.
 */
static aclError id_map_check(const char *api, int32_t id, const char *name, const void *out,
                             const char *out_name)
{
    REQUIRE_ARG(api, out, out_name);
    if (id < 0) {
        emu_error("%s: %s %" PRId32 " is invalid: it must be greater than or equal to 0", api, name, id);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    return ACL_SUCCESS;
}

/* Lock held: the user id of logical (= physical) id `logical`, or -1 with the error reported. */
static int32_t user_of_logical(const char *api, const char *name, int32_t logical)
{
    if (logical >= g_phys_count) {
        emu_error("%s: %s %" PRId32 " is invalid: the emulator has %" PRId32 " device(s) "
                  "(ACLNN_EMU_DEVICE_COUNT), ids 0 to %" PRId32, api, name, logical, g_phys_count,
                  g_phys_count - 1);
        return -1;
    }
    for (int32_t user = 0; user < g_dev_count; user++)
        if (g_visible_ids[user] == logical)
            return user;
    emu_error("%s: %s %" PRId32 " is not visible: ASCEND_RT_VISIBLE_DEVICES='%s'", api, name, logical,
              g_visible_value);
    return -1;
}

static aclError logical_of_user(const char *api, int32_t user, int32_t *out)
{
    LOCK();
    bool ok = check_device_id(api, user);
    if (ok)
        *out = g_visible_ids[user];
    UNLOCK();
    return ok ? ACL_SUCCESS : ACL_ERROR_RT_INVALID_DEVICEID;
}

static aclError user_of(const char *api, const char *name, int32_t logical, int32_t *out)
{
    LOCK();
    int32_t user = user_of_logical(api, name, logical);
    if (user >= 0)
        *out = user;
    UNLOCK();
    return user >= 0 ? ACL_SUCCESS : ACL_ERROR_RT_INVALID_DEVICEID;
}

EMU_EXPORT aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId)
{
    static const char api[] = "aclrtGetLogicDevIdByUserDevId";
    ENTER(api);
    RETURN_IF_ERROR(id_map_check(api, userDevid, "userDevid", logicDevId, "logicDevId"));
    return logical_of_user(api, userDevid, logicDevId);
}

EMU_EXPORT aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId, int32_t *const userDevid)
{
    static const char api[] = "aclrtGetUserDevIdByLogicDevId";
    ENTER(api);
    RETURN_IF_ERROR(id_map_check(api, logicDevId, "logicDevId", userDevid, "userDevid"));
    return user_of(api, "logicDevId", logicDevId, userDevid);
}

EMU_EXPORT aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId, int32_t *const logicDevId)
{
    static const char api[] = "aclrtGetLogicDevIdByPhyDevId";
    ENTER(api);
    RETURN_IF_ERROR(id_map_check(api, phyDevId, "phyDevId", logicDevId, "logicDevId"));
    return user_of(api, "phyDevId", phyDevId, logicDevId);
}

EMU_EXPORT aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId, int32_t *const phyDevId)
{
    static const char api[] = "aclrtGetPhyDevIdByLogicDevId";
    ENTER(api);
    RETURN_IF_ERROR(id_map_check(api, logicDevId, "logicDevId", phyDevId, "phyDevId"));
    return logical_of_user(api, logicDevId, phyDevId);
}

EMU_EXPORT aclError aclrtSynchronizeDevice(void)
{
    static const char api[] = "aclrtSynchronizeDevice";
    COUNT_CALL(g_sync_calls);
    RETURN_IF_ERROR(sync_fault(api, NULL, true, NULL));
    REQUIRE_INIT(api);
    REQUIRE_DEVICE(api, dev);
    aclError first = ACL_SUCCESS;
    uint64_t end = 0;
    LOCK();
    /* What each stream of the device holds now: tasks run outside the lock, so the list of
       streams may change meanwhile, and work queued after this call began is not waited for. */
    size_t n = 0;
    struct { stream *s; uint64_t id, upto; } *marks = malloc((g_streams.n + 1) * sizeof *marks);
    if (!marks) {
        UNLOCK();
        emu_error("%s: out of host memory", api);
        return ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
    }
    for (size_t i = 0; i < g_streams.n; i++) {
        stream *s = g_streams.items[i];
        if (s->device == dev) {
            marks[n].s = s;
            marks[n].id = s->id;
            marks[n++].upto = s->seq_enqueued;
        }
    }
    for (size_t i = 0; i < n; i++) {
        stream *s = marks[i].s;
        if (!stream_alive(s, marks[i].id))
            continue; /* destroyed meanwhile: its destruction ran its work */
        aclError rc = stream_run(s, marks[i].upto, api);
        if (!rc && stream_alive(s, marks[i].id) && s->failed) {
            rc = s->failed;
            s->failed = ACL_SUCCESS;
        }
        if (rc && !first)
            first = rc;
        if (stream_alive(s, marks[i].id))
            end = max_u64(end, s->end_ns);
    }
    free(marks);
    bool link = g_link;
    UNLOCK();
    if (link)
        link_wait_until(end);
    return first;
}

EMU_EXPORT aclError aclrtCreateContext(aclrtContext *ctx, int32_t deviceId)
{
    static const char api[] = "aclrtCreateContext";
    ENTER(api);
    REQUIRE_ARG(api, ctx, "context");
    LOCK();
    if (!check_device_id(api, deviceId)) {
        UNLOCK();
        return ACL_ERROR_RT_INVALID_DEVICEID;
    }
    context *c = ctx_new(deviceId, false);
    if (!c) {
        UNLOCK();
        emu_error("%s: out of host memory", api);
        return ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
    }
    set_current(c);
    *ctx = c;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtDestroyContext(aclrtContext ctx)
{
    static const char api[] = "aclrtDestroyContext";
    ENTER(api);
    LOCK();
    context *c = ctx;
    aclError rc = check_live_handle(api, &g_ctxs, "context", ctx);
    if (rc == ACL_SUCCESS && c->is_default) {
        emu_error("%s: context %p is the default context of device %" PRId32
                  ": it cannot be destroyed, it is released by aclrtResetDevice", api, ctx, c->device);
        rc = ACL_ERROR_RT_PARAM_INVALID;
    }
    if (rc == ACL_SUCCESS)
        ctx_free(c);
    UNLOCK();
    return rc;
}

EMU_EXPORT aclError aclrtSetCurrentContext(aclrtContext ctx)
{
    static const char api[] = "aclrtSetCurrentContext";
    ENTER(api);
    LOCK();
    aclError rc = check_live_handle(api, &g_ctxs, "context", ctx);
    if (rc == ACL_SUCCESS)
        set_current(ctx);
    UNLOCK();
    return rc;
}

EMU_EXPORT aclError aclrtGetCurrentContext(aclrtContext *ctx)
{
    static const char api[] = "aclrtGetCurrentContext";
    ENTER(api);
    REQUIRE_ARG(api, ctx, "context");
    REQUIRE_CONTEXT(api);
    LOCK();
    *ctx = current_ctx();
    UNLOCK();
    return ACL_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Streams                                                                   */
/* ------------------------------------------------------------------------- */

/*
 * Resolve a user stream handle for the calling thread. Lock held. Records a
 * message and returns an error for: no current context (107002), unknown
 * stream (107000), stream of another device (107003).
 */
static aclError resolve_stream(aclrtStream h, const char *api, stream **out)
{
    context *c = current_ctx();
    if (!c) {
        bool stale = t_ctx != NULL;
        emu_error("%s: %s: call aclrtSetDevice or aclrtSetCurrentContext first", api,
                  stale ? "the calling thread's current context is no longer valid (destroyed, device reset, or "
                          "aclFinalize called)"
                        : "no current context in the calling thread");
        return ACL_ERROR_RT_CONTEXT_NULL;
    }
    if (!h) {
        *out = c->default_stream;
        return ACL_SUCCESS;
    }
    if (!reg_has(&g_streams, h)) {
        emu_error("%s: stream %p is not a live stream (never created, already destroyed, or its context or "
                  "device was released)", api, h);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    stream *s = h;
    if (s->device != c->device) {
        emu_error("%s: stream %p belongs to device %" PRId32 " but the calling thread's current context is on "
                  "device %" PRId32, api, h, s->device, c->device);
        return ACL_ERROR_RT_STREAM_CONTEXT;
    }
    *out = s;
    return ACL_SUCCESS;
}

/*
 * After a task was appended to s: past EMU_STREAM_DEPTH pending tasks, run the oldest
 * until the queue is back at that depth. A failure is kept for the stream's next
 * synchronisation, where CANN reports failures of asynchronous work. Lock held once.
 */
static void stream_bound(stream *s, const char *api)
{
    if (s->n_pending <= EMU_STREAM_DEPTH)
        return;
    uint64_t id = s->id;
    aclError rc = stream_run(s, s->seq_done + (s->n_pending - EMU_STREAM_DEPTH), api);
    if (rc && stream_alive(s, id) && !s->failed)
        s->failed = rc;
}

static void stream_append(stream *s, emu_task *t)
{
    t->next = NULL;
    t->stream = s->is_default ? NULL : s;
    if (s->tail)
        s->tail->next = t;
    else
        s->head = t;
    s->tail = t;
    s->n_pending++;
    s->seq_enqueued++;
    t->enqueue_ns = g_link ? now_ns() : 0;
}

EMU_EXPORT aclError emu_stream_enqueue(aclrtStream stream_h, emu_task *task, const char *api)
{
    if (!task) {
        emu_error("%s: internal error: NULL task", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    LOCK();
    if (!g_inited) {
        UNLOCK();
        report_uninitialized(api);
        task_release(task);
        return ACL_ERROR_UNINITIALIZE;
    }
    stream *s;
    aclError rc = resolve_stream(stream_h, api, &s);
    if (rc) {
        UNLOCK();
        task_release(task);
        return rc;
    }
    stream_append(s, task);
    stream_bound(s, api);
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtCreateStream(aclrtStream *stream_out)
{
    static const char api[] = "aclrtCreateStream";
    ENTER(api);
    REQUIRE_ARG(api, stream_out, "stream");
    REQUIRE_DEVICE(api, dev);
    LOCK();
    context *c = current_ctx();
    if (!c) { /* raced with a reset */
        UNLOCK();
        emu_error("%s: no current context in the calling thread", api);
        return ACL_ERROR_RT_CONTEXT_NULL;
    }
    if (g_devices[dev].explicit_streams >= EMU_MAX_STREAMS_PER_DEVICE) {
        UNLOCK();
        emu_error("%s: device %" PRId32 " already has %d streams, the maximum", api, dev,
                  EMU_MAX_STREAMS_PER_DEVICE);
        return ACL_ERROR_RT_NO_STREAM_RESOURCE;
    }
    stream *s = stream_new(c, false);
    if (!s) {
        UNLOCK();
        emu_error("%s: out of host memory", api);
        return ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
    }
    *stream_out = s;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtDestroyStream(aclrtStream stream_h)
{
    static const char api[] = "aclrtDestroyStream";
    ENTER(api);
    if (!stream_h) {
        emu_error("%s: stream is NULL: the default stream cannot be destroyed", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    REQUIRE_CONTEXT(api);
    LOCK();
    stream *s;
    aclError rc = resolve_stream(stream_h, api, &s);
    if (rc) {
        UNLOCK();
        return rc;
    }
    if (s->is_default) {
        UNLOCK();
        emu_error("%s: stream %p is the default stream of a context: it cannot be destroyed", api, stream_h);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    rc = stream_run_all(s, api);
    if (rc)
        emu_error("%s: pending work of stream %p failed with error %d (the stream was destroyed anyway)", api,
                  stream_h, rc);
    stream_free(s);
    UNLOCK();
    return rc;
}

/* Run everything queued on the stream h (NULL = the default stream). */
static aclError synchronize_stream(const char *api, aclrtStream h)
{
    LOCK();
    stream *s;
    aclError rc = resolve_stream(h, api, &s);
    if (!rc)
        rc = stream_run_all(s, api); /* host execution never times out */
    uint64_t end = !rc && g_link ? s->end_ns : 0;
    UNLOCK();
    if (end)
        link_wait_until(end);
    return rc;
}

EMU_EXPORT aclError aclrtSynchronizeStream(aclrtStream stream_h)
{
    static const char api[] = "aclrtSynchronizeStream";
    COUNT_CALL(g_sync_calls);
    RETURN_IF_ERROR(sync_fault(api, stream_h, false, NULL));
    REQUIRE_INIT(api);
    return synchronize_stream(api, stream_h);
}

EMU_EXPORT aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream_h, int32_t timeout)
{
    static const char api[] = "aclrtSynchronizeStreamWithTimeout";
    COUNT_CALL(g_sync_calls);
    RETURN_IF_ERROR(sync_fault(api, stream_h, false, NULL));
    REQUIRE_INIT(api);
    if (timeout < -1) {
        emu_error("%s: timeout %" PRId32 " is invalid: expected -1 (wait forever) or a value >= 0 in milliseconds",
                  api, timeout);
        return ACL_ERROR_INVALID_PARAM;
    }
    return synchronize_stream(api, stream_h);
}

EMU_EXPORT aclError aclrtStreamQuery(aclrtStream stream_h, aclrtStreamStatus *status)
{
    static const char api[] = "aclrtStreamQuery";
    ENTER(api);
    REQUIRE_ARG(api, status, "status");
    LOCK();
    stream *s;
    aclError rc = resolve_stream(stream_h, api, &s);
    if (rc) {
        UNLOCK();
        return rc;
    }
    if (!s->head && g_link && now_ns() < s->end_ns) {
        *status = ACL_STREAM_STATUS_NOT_READY; /* ACLNN_EMU_LINK: the work ends later */
    } else if (!s->head) {
        s->query_not_ready_reported = false;
        *status = ACL_STREAM_STATUS_COMPLETE;
    } else if (!s->query_not_ready_reported) {
        /* First look at pending work: report it as still running. */
        s->query_not_ready_reported = true;
        *status = ACL_STREAM_STATUS_NOT_READY;
    } else {
        /* Next look: the work "finished" meanwhile (under ACLNN_EMU_LINK, at its virtual end). */
        rc = stream_run_all(s, api);
        *status = g_link && now_ns() < s->end_ns ? ACL_STREAM_STATUS_NOT_READY : ACL_STREAM_STATUS_COMPLETE;
    }
    UNLOCK();
    return rc;
}

/* ------------------------------------------------------------------------- */
/* Events                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct {
    emu_task base;
    event *ev;
    uint64_t ev_id;
    uint64_t generation;
} record_task;

static aclError record_run(emu_task *t)
{
    record_task *r = (record_task *)t;
    if (reg_has(&g_events, r->ev) && r->ev->id == r->ev_id && r->ev->generation == r->generation) {
        clock_gettime(CLOCK_MONOTONIC, &r->ev->ts);
        r->ev->completed = true;
    }
    return ACL_SUCCESS;
}

/* ACLNN_EMU_LINK: the record t ran at virtual time at_ns. Lock held. */
static void record_task_done(emu_task *t, uint64_t at_ns)
{
    record_task *r = (record_task *)t;
    if (reg_has(&g_events, r->ev) && r->ev->id == r->ev_id && r->ev->generation == r->generation) {
        r->ev->done_ns = at_ns;
        r->ev->ts = (struct timespec){(time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u)};
    }
}

EMU_EXPORT aclError aclrtCreateEvent(aclrtEvent *ev)
{
    static const char api[] = "aclrtCreateEvent";
    ENTER(api);
    REQUIRE_ARG(api, ev, "event");
    REQUIRE_DEVICE(api, dev);
    LOCK();
    event *e = handle_new(&g_events, sizeof *e);
    if (e) {
        e->device = dev;
        *ev = e;
    }
    UNLOCK();
    if (!e) {
        emu_error("%s: out of host memory", api);
        return ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
    }
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtDestroyEvent(aclrtEvent ev)
{
    static const char api[] = "aclrtDestroyEvent";
    ENTER(api);
    REQUIRE_CONTEXT(api);
    LOCK();
    aclError rc = check_live_handle(api, &g_events, "event", ev);
    if (rc == ACL_SUCCESS)
        handle_free(&g_events, ev);
    UNLOCK();
    return rc;
}

/* Issue a record of ev on stream_h as task t (not consumed on failure). Lock held. */
static aclError record_event(const char *api, aclrtEvent ev, aclrtStream stream_h, record_task *t)
{
    event *e = ev;
    stream *s;
    RETURN_IF_ERROR(check_live_handle(api, &g_events, "event", ev));
    RETURN_IF_ERROR(resolve_stream(stream_h, api, &s));
    if (e->device != s->device) {
        emu_error("%s: event %p belongs to device %" PRId32 " but stream %p to device %" PRId32, api, ev,
                  e->device, stream_h, s->device);
        return ACL_ERROR_RT_STREAM_CONTEXT;
    }
    e->generation++;
    e->recorded = true;
    e->completed = false;
    e->not_ready_polls = 0;
    t->base.run = record_run;
    t->base.release = task_free;
    t->base.name = "EventRecord";
    t->ev = e;
    t->ev_id = e->id;
    t->generation = e->generation;
    stream_append(s, &t->base);
    e->rec_stream = s;
    e->rec_stream_id = s->id;
    e->rec_seq = s->seq_enqueued;
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtRecordEvent(aclrtEvent ev, aclrtStream stream_h)
{
    static const char api[] = "aclrtRecordEvent";
    ENTER(api);
    REQUIRE_CONTEXT(api);
    record_task *t = calloc(1, sizeof *t);
    if (!t) {
        emu_error("%s: out of host memory", api);
        return ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
    }
    LOCK();
    aclError rc = record_event(api, ev, stream_h, t);
    if (!rc)
        stream_bound(((event *)ev)->rec_stream, api);
    UNLOCK();
    if (rc)
        free(t);
    return rc;
}

EMU_EXPORT aclError aclrtSynchronizeEvent(aclrtEvent ev)
{
    static const char api[] = "aclrtSynchronizeEvent";
    COUNT_CALL(g_sync_calls);
    RETURN_IF_ERROR(sync_fault(api, NULL, false, ev));
    REQUIRE_INIT(api);
    REQUIRE_CONTEXT(api);
    LOCK();
    event *e = ev;
    aclError rc = check_live_handle(api, &g_events, "event", ev);
    /* Never recorded: nothing to wait for. Recorded on a stream that is gone: its work was run or dropped. */
    stream *s = rc == ACL_SUCCESS ? pending_record_stream(e) : NULL;
    if (s)
        rc = stream_run(s, e->rec_seq, api);
    uint64_t end = !rc && g_link && e->completed ? e->done_ns : 0;
    UNLOCK();
    if (end)
        link_wait_until(end);
    return rc;
}

/*
 * Whether the work captured by the latest record of ev is done, for the two query APIs.
 * A query does not run pending work: only a synchronisation or the queue-depth bound
 * does, so polling cannot hide a missing synchronisation. A record still pending after
 * EMU_QUERY_PATIENCE queries runs then, so a loop that polls until completion ends as
 * it would on a device. Never recorded: complete (RT doc 07_event_management.md,
 * aclrtRecordEvent: an event with no captured tasks queries as complete).
 */
#define EMU_QUERY_PATIENCE 1024

static aclError query_event(const char *api, aclrtEvent ev, bool *complete)
{
    REQUIRE_INIT(api);
    REQUIRE_CONTEXT(api);
    LOCK();
    event *e = ev;
    aclError rc = check_live_handle(api, &g_events, "event", ev);
    if (rc) {
        UNLOCK();
        return rc;
    }
    stream *s = pending_record_stream(e);
    if (s && ++e->not_ready_polls > EMU_QUERY_PATIENCE) {
        uint64_t id = s->id;
        rc = stream_run(s, e->rec_seq, api);
        if (rc && stream_alive(s, id) && !s->failed)
            s->failed = rc; /* and kept for the stream's next synchronisation, as stream_bound does */
    }
    if (!pending_record_stream(e))
        e->not_ready_polls = 0;
    *complete = !rc && !pending_record_stream(e) && !(g_link && e->completed && now_ns() < e->done_ns);
    UNLOCK();
    return rc;
}

/* aclrtQueryEventStatus: ACL_EVENT_RECORDED_STATUS_NOT_READY = 0, _COMPLETE = 1
 * (hicann/runtime include/external/acl/acl_rt.h, aclrtEventRecordedStatus). */
EMU_EXPORT aclError aclrtQueryEventStatus(aclrtEvent ev, aclrtEventRecordedStatus *status)
{
    static const char api[] = "aclrtQueryEventStatus";
    ENTER(api);
    REQUIRE_ARG(api, status, "status");
    bool complete = false;
    aclError rc = query_event(api, ev, &complete);
    if (!rc)
        *status = complete ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    return rc;
}

/* The deprecated aclrtQueryEvent, whose aclrtEventStatus has the opposite values:
 * ACL_EVENT_STATUS_COMPLETE = 0, _NOT_READY = 1 (same header). */
EMU_EXPORT aclError aclrtQueryEvent(aclrtEvent ev, aclrtEventStatus *status)
{
    static const char api[] = "aclrtQueryEvent";
    ENTER(api);
    REQUIRE_ARG(api, status, "status");
    bool complete = false;
    aclError rc = query_event(api, ev, &complete);
    if (!rc)
        *status = complete ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
    return rc;
}

EMU_EXPORT aclError aclrtEventElapsedTime(float *ms, aclrtEvent start, aclrtEvent end)
{
    static const char api[] = "aclrtEventElapsedTime";
    ENTER(api);
    REQUIRE_ARG(api, ms, "ms");
    REQUIRE_CONTEXT(api);
    LOCK();
    const char *names[2] = {"startEvent", "endEvent"};
    event *evs[2] = {start, end};
    for (int i = 0; i < 2; i++) {
        if (!reg_has(&g_events, evs[i])) {
            UNLOCK();
            emu_error("%s: %s %p is not a live event", api, names[i], (void *)evs[i]);
            return evs[i] ? ACL_ERROR_RT_PARAM_INVALID : ACL_ERROR_INVALID_PARAM;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!evs[i]->recorded) {
            UNLOCK();
            emu_error("%s: %s %p was never recorded (call aclrtRecordEvent)", api, names[i], (void *)evs[i]);
            return ACL_ERROR_RT_PARAM_INVALID;
        }
        if (!evs[i]->completed) {
            UNLOCK();
            /* Error code choice: ACL_ERROR_RT_EVENT_NOT_COMPLETE (507006, RT doc 25-01). */
            emu_error("%s: %s %p has not completed yet: synchronize its stream or the event first", api,
                      names[i], (void *)evs[i]);
            return ACL_ERROR_RT_EVENT_NOT_COMPLETE;
        }
    }
    double d = (double)(evs[1]->ts.tv_sec - evs[0]->ts.tv_sec) * 1e3 +
               (double)(evs[1]->ts.tv_nsec - evs[0]->ts.tv_nsec) / 1e6;
    *ms = (float)d;
    UNLOCK();
    return ACL_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Memory API                                                                */
/* ------------------------------------------------------------------------- */

static bool valid_policy(int p)
{
    switch (p) {
    case ACL_MEM_MALLOC_HUGE_FIRST:
    case ACL_MEM_MALLOC_HUGE_ONLY:
    case ACL_MEM_MALLOC_NORMAL_ONLY:
    case ACL_MEM_MALLOC_HUGE_FIRST_P2P:
    case ACL_MEM_MALLOC_HUGE_ONLY_P2P:
    case ACL_MEM_MALLOC_NORMAL_ONLY_P2P:
    case ACL_MEM_MALLOC_HUGE1G_ONLY:
    case ACL_MEM_MALLOC_HUGE1G_ONLY_P2P:
    case ACL_MEM_TYPE_LOW_BAND_WIDTH:
    case ACL_MEM_TYPE_HIGH_BAND_WIDTH:
    case ACL_MEM_ACCESS_USER_SPACE_READONLY:
        return true;
    default:
        return false;
    }
}

/* Whether policy asks for huge pages first or only. */
static bool huge_policy(int p)
{
    switch (p) {
    case ACL_MEM_MALLOC_HUGE_FIRST:
    case ACL_MEM_MALLOC_HUGE_ONLY:
    case ACL_MEM_MALLOC_HUGE_FIRST_P2P:
    case ACL_MEM_MALLOC_HUGE_ONLY_P2P:
    case ACL_MEM_MALLOC_HUGE1G_ONLY:
    case ACL_MEM_MALLOC_HUGE1G_ONLY_P2P:
    case ACL_MEM_TYPE_LOW_BAND_WIDTH:
    case ACL_MEM_TYPE_HIGH_BAND_WIDTH:
        return true;
    default:
        return false;
    }
}

/* The argument checks aclrtMalloc and aclrtMallocHost share (ptr_name: their parameter's name). */
static aclError check_alloc_args(const char *api, void **ptr, const char *ptr_name, size_t size)
{
    if (!ptr) {
        emu_error("%s: %s is NULL", api, ptr_name);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (size == 0) {
        emu_error("%s: size must be greater than 0", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    static const char api[] = "aclrtMalloc";
    ENTER(api);
    RETURN_IF_ERROR(check_alloc_args(api, devPtr, "devPtr", size));
    if (!valid_policy((int)policy)) {
        emu_error("%s: policy %d is not a valid aclrtMemMallocPolicy (pass exactly one value, e.g. "
                  "ACL_MEM_MALLOC_HUGE_FIRST)", api, (int)policy);
        return ACL_ERROR_INVALID_PARAM;
    }
    REQUIRE_DEVICE(api, dev);
    LOCK();
    device_state *d = &g_devices[dev];
    uint64_t free_b = g_dev_capacity - d->used_bytes;
    /*
     * Out of device memory -> ACL_ERROR_RT_MEMORY_ALLOCATION (207001): hicann/runtime
     * docs/zh/api_ref/25-01_aclError.md ("内存申请失败。请检查硬件环境上的存储剩余情况"), and
     * vllm-project/vllm-ascend issue #3141, where exhausted device memory surfaced as
     * "error code is 207001 ... Failed to allocate memory (EL0004) ... Memory resources are
     * exhausted". (ACL_ERROR_RT_DEVICE_OOM 207018 exists too but no aclrtMalloc source using it
     * was found.)
     */
    if ((uint64_t)size > free_b) {
        UNLOCK();
        emu_error("%s: out of device memory on device %" PRId32 ": requested %zu bytes, free %" PRIu64
                  " bytes, total %" PRIu64 " bytes", api, dev, size, free_b, g_dev_capacity);
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    mem_block b;
    bool mapped;
    /* The host may refuse a mapping that only the quarantine's reserved ranges keep out: release them. */
    while (!(mapped = block_map(size, dev, &b, huge_policy((int)policy))) && quarantine_release_oldest())
        ;
    if (!mapped) {
        UNLOCK();
        emu_error("%s: failed to allocate %zu bytes on device %" PRId32 " (host mmap failed: %s)", api, size,
                  dev, strerror(errno));
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    if (!blocks_insert(&g_dev_mem, &b)) {
        munmap(b.map, b.map_len);
        UNLOCK();
        emu_error("%s: out of host memory for bookkeeping", api);
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    d->used_bytes += size;
    g_live_device_bytes += (int64_t)size;
    if (g_live_device_bytes > g_peak_device_bytes)
        g_peak_device_bytes = g_live_device_bytes;
    g_malloc_calls++;
    *devPtr = b.base;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtFree(void *devPtr)
{
    static const char api[] = "aclrtFree";
    ENTER(api);
    REQUIRE_ARG(api, devPtr, "devPtr");
    LOCK();
    ptrdiff_t i = blocks_find_base(&g_dev_mem, devPtr);
    if (i < 0) {
        mem_block *b = blocks_find_mapping(&g_dev_mem, devPtr);
        mem_block *q = b ? NULL : blocks_find_mapping(&g_quarantine, devPtr);
        size_t q_size = q ? q->size : 0;
        bool q_base = q && q->base == (char *)devPtr;
        UNLOCK();
        if (q_base)
            emu_error("%s: devPtr %p was already freed (double free of an allocation of %zu bytes)", api, devPtr,
                      q_size);
        else if (b)
            emu_error("%s: devPtr %p is not an address returned by aclrtMalloc, or already freed (it points "
                      "inside the allocation %p of %zu bytes)", api, devPtr, (void *)b->base, b->size);
        else
            emu_error("%s: devPtr %p is not an address returned by aclrtMalloc, or already freed", api, devPtr);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    /* Freed at once into the quarantine: pending work that still uses it fails when its stream is
     * synchronised (allocation id check), and its address is not handed out again for a while. */
    dev_block_retire_at((size_t)i);
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    static const char api[] = "aclrtMallocHost";
    ENTER(api);
    RETURN_IF_ERROR(check_alloc_args(api, hostPtr, "hostPtr", size));
    /* Needs a context like real CANN: ModelEngine-Group/unified-cache-management issue #143 shows
     * aclrtMallocHost returning 107002 in threads without one. */
    REQUIRE_CONTEXT(api);
    LOCK();
    mem_block b;
    bool mapped = block_map(size, -1, &b, false);
    if (!mapped || !blocks_insert(&g_host_mem, &b)) {
        if (mapped)
            munmap(b.map, b.map_len);
        UNLOCK();
        emu_error("%s: failed to allocate %zu bytes of host memory", api, size);
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    *hostPtr = b.base;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtFreeHost(void *hostPtr)
{
    static const char api[] = "aclrtFreeHost";
    ENTER(api);
    REQUIRE_ARG(api, hostPtr, "hostPtr");
    LOCK();
    ptrdiff_t i = blocks_find_base(&g_host_mem, hostPtr);
    if (i < 0) {
        UNLOCK();
        emu_error("%s: hostPtr %p is not an address returned by aclrtMallocHost, or already freed", api, hostPtr);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    blocks_remove_at(&g_host_mem, (size_t)i);
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free_out, size_t *total)
{
    static const char api[] = "aclrtGetMemInfo";
    ENTER(api);
    if ((int)attr < ACL_DDR_MEM || (int)attr > ACL_HBM_MEM_P2P_HUGE1G) {
        emu_error("%s: attr %d is not a valid aclrtMemAttr", api, (int)attr);
        return ACL_ERROR_INVALID_PARAM;
    }
    REQUIRE_ARG(api, free_out, "free");
    REQUIRE_ARG(api, total, "total");
    REQUIRE_DEVICE(api, dev);
    LOCK();
    /* Every attribute reports the one emulated memory pool of the device. */
    *free_out = (size_t)(g_dev_capacity - g_devices[dev].used_bytes);
    *total = (size_t)g_dev_capacity;
    UNLOCK();
    return ACL_SUCCESS;
}

/*
 * Large copies are split among threads, like a DMA engine with several channels, so that the
 * emulator's copies keep up with the host: ACLNN_EMU_THREADS (as for the operator kernels in
 * ops_core.c; default the online cores, at most 16; 1 copies in one piece). Overlapping ranges are
 * copied with memmove in one piece. From COPY_STREAM_MIN bytes on, copies use streaming stores
 * (copy_stream), as a DMA engine writes memory without going through the CPU's caches.
 */
#define COPY_SPLIT_MIN ((size_t)8 << 20)
#define COPY_STREAM_MIN ((size_t)1 << 20)
#define COPY_MAX_THREADS 16

static pthread_once_t copy_threads_once = PTHREAD_ONCE_INIT;
static int copy_threads = 1;

static void copy_threads_init(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("ACLNN_EMU_THREADS");
    if (env != NULL && *env != '\0') {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v > 0)
            n = v;
    }
    copy_threads = n < 1 ? 1 : n > COPY_MAX_THREADS ? COPY_MAX_THREADS : (int)n;
}

typedef struct {
    char *dst;
    const char *src;
    size_t count;
} copy_slice;

/*
 * Whether the pages at both ends of [p, p + count) are resident. A destination whose pages are
 * not there yet is written with ordinary stores: each page fault clears its page through the
 * caches, where ordinary stores then find it.
 */
static bool pages_resident(const void *p, size_t count)
{
    long page = sysconf(_SC_PAGESIZE);
    unsigned char in[1] = {0};
    for (int end = 0; end < 2; end++) {
        uintptr_t at = ((uintptr_t)p + (end ? count - 1 : 0)) & ~(uintptr_t)(page - 1);
        if (mincore((void *)at, 1, in) != 0 || !(in[0] & 1))
            return false;
    }
    return true;
}

/*
 * memcpy of non-overlapping ranges, with streaming (non-temporal) stores where the host has them
 * (x86) and the destination is resident: it is then not read into the caches before it is
 * overwritten, which makes a copy much larger than the caches about 1.5 times as fast.
 */
static void copy_stream(char *dst, const char *src, size_t count)
{
#if defined(__SSE2__)
    if (!pages_resident(dst, count)) {
        memcpy(dst, src, count);
        return;
    }
    size_t i = (16 - ((uintptr_t)dst & 15)) & 15;
    if (i > count)
        i = count;
    memcpy(dst, src, i);
    for (; i + 64 <= count; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
        _mm_stream_si128((__m128i *)(dst + i), a);
        _mm_stream_si128((__m128i *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(dst + i + 48), d);
    }
    _mm_sfence(); /* streaming stores are weakly ordered: done before anyone reads them */
    memcpy(dst + i, src + i, count - i);
#else
    memcpy(dst, src, count);
#endif
}

static void *copy_slice_run(void *arg)
{
    copy_slice *slice = arg;
    copy_stream(slice->dst, slice->src, slice->count);
    return NULL;
}

static void copy_bytes(void *dst, const void *src, size_t count)
{
    const char *d = dst, *s = src;
    if (count < COPY_STREAM_MIN || (d < s + count && s < d + count)) {
        memmove(dst, src, count);
        return;
    }
    if (count < COPY_SPLIT_MIN) {
        copy_stream(dst, src, count);
        return;
    }
    pthread_once(&copy_threads_once, copy_threads_init);
    int n = copy_threads;
    size_t per = (count / (size_t)n + 4095) & ~(size_t)4095; /* whole pages */
    copy_slice slices[COPY_MAX_THREADS];
    pthread_t threads[COPY_MAX_THREADS];
    bool started[COPY_MAX_THREADS] = {false};
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* workers take no signals */
    size_t offset = 0;
    int used = 0;
    for (; used < n && offset < count; used++) {
        size_t len = count - offset < per ? count - offset : per;
        slices[used] = (copy_slice){(char *)dst + offset, s + offset, len};
        offset += len;
        if (used > 0)
            started[used] = pthread_create(&threads[used], NULL, copy_slice_run, &slices[used]) == 0;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    copy_slice_run(&slices[0]);
    for (int i = 1; i < used; i++) {
        if (started[i])
            pthread_join(threads[i], NULL);
        else
            copy_slice_run(&slices[i]); /* no thread to be had: copy it here */
    }
}

/* ---- memcpy checks ---- */

enum { DIR_H2H, DIR_H2D, DIR_D2H, DIR_D2D };

typedef struct {
    int dir;
    int32_t device; /* the current device of the call: where the device side lives */
    bool dst_pinned, src_pinned;
} copy_plan;

static const char *kind_name(int kind)
{
    static const char *names[] = {"ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE",
                                  "ACL_MEMCPY_DEVICE_TO_HOST", "ACL_MEMCPY_DEVICE_TO_DEVICE",
                                  "ACL_MEMCPY_DEFAULT", "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
                                  "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE", "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE"};
    return kind >= 0 && kind < 8 ? names[kind] : "?";
}

/* Check a device-side range. Lock held. */
static bool check_dev_side(const char *api, const char *which, const void *p, size_t count, int32_t cur_dev)
{
    mem_block *b = blocks_find_mapping(&g_dev_mem, p);
    const char *c = p;
    if (c < b->base) {
        emu_error("%s: %s %p lies %zu bytes before the start of its device allocation %p", api, which, p,
                  (size_t)(b->base - c), (void *)b->base);
        return false;
    }
    size_t off = (size_t)(c - b->base);
    if (off >= b->size) {
        emu_error("%s: %s %p lies %zu bytes past the end of its device allocation %p (%zu bytes)", api, which, p,
                  off - b->size, (void *)b->base, b->size);
        return false;
    }
    if (count > b->size - off) {
        emu_error("%s: %s range exceeds its allocation by %zu bytes (%s %p + count %zu, allocation %p of %zu "
                  "bytes)", api, which, count - (b->size - off), which, p, count, (void *)b->base, b->size);
        return false;
    }
    if (b->device != cur_dev) {
        emu_error("%s: %s %p is memory of device %" PRId32 " but the current device is %" PRId32, api, which, p,
                  b->device, cur_dev);
        return false;
    }
    return true;
}

/* Check a host-side range; sets *pinned when it lies in an aclrtMallocHost block. Lock held. */
static bool check_host_side(const char *api, const char *which, const void *p, size_t count, bool *pinned)
{
    mem_block *b = blocks_find_mapping(&g_host_mem, p);
    *pinned = false;
    if (!b)
        return true; /* pageable memory: the emulator cannot check its extent */
    const char *c = p;
    if (c < b->base || (size_t)(c - b->base) >= b->size) {
        emu_error("%s: %s %p lies outside its aclrtMallocHost allocation %p (%zu bytes)", api, which, p,
                  (void *)b->base, b->size);
        return false;
    }
    size_t off = (size_t)(c - b->base);
    if (count > b->size - off) {
        emu_error("%s: %s range exceeds its aclrtMallocHost allocation by %zu bytes", api, which,
                  count - (b->size - off));
        return false;
    }
    *pinned = true;
    return true;
}

/* Refuse p when it lies in a freed (quarantined) device block. Lock held. */
static bool check_not_freed(const char *api, const char *which, const void *p)
{
    const mem_block *q = blocks_find_mapping(&g_quarantine, p);
    if (!q)
        return true;
    emu_error("%s: %s %p lies in device memory already freed with aclrtFree (an allocation of %zu bytes at %p)",
              api, which, p, q->size, (void *)q->base);
    return false;
}

/*
 * Validate a copy. Lock held. kind handling (documented choice):
 *   HOST_TO_BUF_TO_DEVICE (5) is treated as HOST_TO_DEVICE;
 *   INNER_DEVICE_TO_DEVICE (6) as DEVICE_TO_DEVICE (both on the current device);
 *   INTER_DEVICE_TO_DEVICE (7) is rejected with 100000 (no peer copies in the emulator);
 *   DEFAULT (4) infers the direction from the pointers (bounds still checked).
 * Every device side must lie inside one live allocation of the current device.
 */
static aclError check_copy(const char *api, void *dst, size_t destMax, const void *src, size_t count, int kind,
                           int32_t cur_dev, copy_plan *plan, bool *empty)
{
    *empty = false;
    REQUIRE_ARG(api, dst, "dst");
    REQUIRE_ARG(api, src, "src");
    if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE) {
        emu_error("%s: kind %d is not a valid aclrtMemcpyKind", api, kind);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (kind == ACL_MEMCPY_INTER_DEVICE_TO_DEVICE) {
        emu_error("%s: kind ACL_MEMCPY_INTER_DEVICE_TO_DEVICE is not supported by the emulator", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (count > destMax) {
        emu_error("%s: count %zu is greater than destMax %zu", api, count, destMax);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (count == 0) {
        *empty = true;
        return ACL_SUCCESS;
    }
    if (!check_not_freed(api, "dst", dst) || !check_not_freed(api, "src", src))
        return ACL_ERROR_INVALID_PARAM;
    bool dst_dev = blocks_find_mapping(&g_dev_mem, dst) != NULL;
    bool src_dev = blocks_find_mapping(&g_dev_mem, src) != NULL;
    int want_dst = -1, want_src = -1; /* 1 device, 0 host, -1 any */
    switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: want_dst = 0; want_src = 0; break;
    case ACL_MEMCPY_HOST_TO_DEVICE:
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: want_dst = 1; want_src = 0; break;
    case ACL_MEMCPY_DEVICE_TO_HOST: want_dst = 0; want_src = 1; break;
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE: want_dst = 1; want_src = 1; break;
    default: break;
    }
    if (want_dst >= 0 && (int)dst_dev != want_dst) {
        emu_error("%s: dst %p is %s but kind is %s%s", api, dst, dst_dev ? "device memory" : "host memory",
                  kind_name(kind), dst_dev ? "" : " (it is not inside any live aclrtMalloc allocation)");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (want_src >= 0 && (int)src_dev != want_src) {
        emu_error("%s: src %p is %s but kind is %s%s", api, src, src_dev ? "device memory" : "host memory",
                  kind_name(kind), src_dev ? "" : " (it is not inside any live aclrtMalloc allocation)");
        return ACL_ERROR_INVALID_PARAM;
    }
    plan->dst_pinned = plan->src_pinned = false;
    plan->device = cur_dev;
    if (dst_dev ? !check_dev_side(api, "dst", dst, count, cur_dev)
                : !check_host_side(api, "dst", dst, count, &plan->dst_pinned))
        return ACL_ERROR_INVALID_PARAM;
    if (src_dev ? !check_dev_side(api, "src", src, count, cur_dev)
                : !check_host_side(api, "src", src, count, &plan->src_pinned))
        return ACL_ERROR_INVALID_PARAM;
    plan->dir = dst_dev ? (src_dev ? DIR_D2D : DIR_H2D) : (src_dev ? DIR_D2H : DIR_H2H);
    return ACL_SUCCESS;
}

static void count_copy(const copy_plan *plan, size_t count)
{
    device_state *d = &g_devices[plan->device];
    switch (plan->dir) {
    case DIR_H2D: g_h2d += (int64_t)count; d->h2d += (int64_t)count; break;
    case DIR_D2H: g_d2h += (int64_t)count; d->d2h += (int64_t)count; break;
    case DIR_D2D: g_d2d += (int64_t)count; break;
    default: break;
    }
}

EMU_EXPORT aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
{
    static const char api[] = "aclrtMemcpy";
    COUNT_CALL(g_memcpy_calls);
    ENTER(api);
    REQUIRE_DEVICE(api, dev);
    LOCK();
    copy_plan plan;
    bool empty;
    aclError rc = check_copy(api, dst, destMax, src, count, (int)kind, dev, &plan, &empty);
    if (rc || empty) {
        UNLOCK();
        return rc;
    }
    /* ACLNN_EMU_LINK: the copy engine from max(call, engine free); the host copy stands for it */
    uint64_t end = 0;
    if (g_link && (plan.dir == DIR_H2D || plan.dir == DIR_D2H)) {
        device_state *d = &g_devices[dev];
        end = d->copy_free_ns = max_u64(now_ns(), d->copy_free_ns) + link_duration_ns(count);
    }
    /* Immediate, no stream synchronisation (RT doc 11-03): reading before a sync sees stale data. */
    copy_bytes(dst, src, count);
    count_copy(&plan, count);
    UNLOCK();
    if (end)
        link_wait_until(end);
    return ACL_SUCCESS;
}

/* One side of an asynchronous copy, pinned when it is queued. */
enum { SIDE_PAGEABLE, SIDE_DEVICE, SIDE_PINNED_HOST };

typedef struct {
    int kind;     /* SIDE_*: pageable host memory cannot be checked */
    emu_range r;
} copy_side;

typedef struct {
    emu_task base;
    void *dst;
    const void *src;
    size_t count;
    copy_plan plan;
    copy_side sides[2]; /* dst, src */
} copy_task;

/* Pin one side of a copy check_copy accepted. Lock held. */
static void copy_side_pin(copy_side *side, const void *p, size_t count, bool is_dev, bool pinned)
{
    side->kind = is_dev ? SIDE_DEVICE : pinned ? SIDE_PINNED_HOST : SIDE_PAGEABLE;
    if (side->kind != SIDE_PAGEABLE)
        range_pin(is_dev ? &g_dev_mem : &g_host_mem, p, count, &side->r);
}

static aclError copy_run(emu_task *t)
{
    copy_task *c = (copy_task *)t;
    static const char *const which[2] = {"dst", "src"};
    for (int i = 0; i < 2; i++) {
        const copy_side *side = &c->sides[i];
        if (side->kind != SIDE_PAGEABLE &&
            !range_still_valid(side->kind == SIDE_DEVICE ? &g_dev_mem : &g_host_mem, side->kind != SIDE_DEVICE,
                               t, which[i], &side->r))
            return ACL_ERROR_RT_SYS_DMA;
    }
    copy_bytes(c->dst, c->src, c->count);
    count_copy(&c->plan, c->count);
    return ACL_SUCCESS;
}

/* Whether t is a host<->device asynchronous copy (ACLNN_EMU_LINK's copy engine); *bytes its size. */
static bool copy_task_on_link(const emu_task *t, uint64_t *bytes)
{
    const copy_task *c = (const copy_task *)t;
    if (t->run != copy_run || (c->plan.dir != DIR_H2D && c->plan.dir != DIR_D2H))
        return false;
    *bytes = c->count;
    return true;
}

/*
 * aclrtMemcpyAsync's rules before CANN 8.5 (hiascend aclrtMemcpyAsync pages up to 8.1/8.2, see
 * the facts file "aclrtMemcpyAsync by era"): both addresses 64-byte aligned, and the host side
 * of a host<->device copy allocated with aclrtMallocHost (with other host memory CANN reports
 * nothing and the behaviour is undefined). The 8.5 pages accept ordinary host memory (the call
 * then returns after the copy) and state no alignment rule. CANN documents no status for
 * breaking these rules, so the emulator returns the one it returns for every other refused
 * copy argument, ACL_ERROR_INVALID_PARAM, rather than a more specific code (such as
 * ACL_ERROR_RT_ADDR_UNALIGNED) that CANN is not known to use here. Lock held.
 */
static aclError check_async_copy_era(const char *api, const void *dst, const void *src, const copy_plan *plan)
{
    if (!emu_era_async_copy_needs_pinned_aligned())
        return ACL_SUCCESS;
    const char *release = emu_era_cann_version();
    const void *sides[2] = {dst, src};
    static const char *const which[2] = {"dst", "src"};
    for (int i = 0; i < 2; i++) {
        if ((uintptr_t)sides[i] % 64 != 0) {
            emu_error("%s: %s %p is not 64-byte aligned; CANN %s requires both addresses of an asynchronous "
                      "copy to be 64-byte aligned", api, which[i], sides[i], release);
            return ACL_ERROR_INVALID_PARAM;
        }
    }
    bool host_dst = plan->dir == DIR_D2H, host_src = plan->dir == DIR_H2D;
    if ((host_dst && !plan->dst_pinned) || (host_src && !plan->src_pinned)) {
        emu_error("%s: %s %p is not page-locked host memory from aclrtMallocHost; CANN %s requires it for the "
                  "host side of an asynchronous %s copy (ordinary host memory is accepted from CANN 8.5)",
                  api, host_dst ? "dst" : "src", host_dst ? dst : src, release,
                  host_dst ? "device-to-host" : "host-to-device");
        return ACL_ERROR_INVALID_PARAM;
    }
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                                     aclrtMemcpyKind kind, aclrtStream stream_h)
{
    static const char api[] = "aclrtMemcpyAsync";
    COUNT_CALL(g_memcpy_calls);
    ENTER(api);
    REQUIRE_DEVICE(api, dev);
    copy_task *t = calloc(1, sizeof *t);
    if (!t) {
        emu_error("%s: out of host memory", api);
        return ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
    }
    LOCK();
    stream *s;
    aclError rc = resolve_stream(stream_h, api, &s);
    copy_plan plan;
    bool empty = false;
    if (!rc)
        rc = check_copy(api, dst, destMax, src, count, (int)kind, dev, &plan, &empty);
    if (!rc && !empty)
        rc = check_async_copy_era(api, dst, src, &plan);
    if (rc || empty) {
        UNLOCK();
        free(t);
        return rc;
    }
    t->base.run = copy_run;
    t->base.release = task_free;
    t->base.name = api;
    t->dst = dst;
    t->src = src;
    t->count = count;
    t->plan = plan;
    copy_side_pin(&t->sides[0], dst, count, plan.dir == DIR_H2D || plan.dir == DIR_D2D, plan.dst_pinned);
    copy_side_pin(&t->sides[1], src, count, plan.dir == DIR_D2H || plan.dir == DIR_D2D, plan.src_pinned);
    stream_append(s, &t->base);
    stream_bound(s, api);
    bool async = plan.dir == DIR_D2D || (plan.dir == DIR_H2D && plan.src_pinned) ||
                 (plan.dir == DIR_D2H && plan.dst_pinned) ||
                 (plan.dir == DIR_H2H && plan.src_pinned && plan.dst_pinned);
    if (!async) {
        /* Pageable host memory: CANN returns only after the copy (RT doc 11-03). The copy is
         * ordered after the work already on the stream, so that work runs first. */
        rc = stream_run(s, s->seq_enqueued, api);
    }
    uint64_t end = !async && !rc && g_link ? s->end_ns : 0;
    UNLOCK();
    if (end)
        link_wait_until(end);
    return rc;
}

EMU_EXPORT aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    static const char api[] = "aclrtMemset";
    ENTER(api);
    REQUIRE_ARG(api, devPtr, "devPtr");
    if (count > maxCount) {
        emu_error("%s: count %zu is greater than maxCount %zu", api, count, maxCount);
        return ACL_ERROR_INVALID_PARAM;
    }
    REQUIRE_DEVICE(api, dev);
    if (count == 0)
        return ACL_SUCCESS;
    LOCK();
    if (!check_not_freed(api, "devPtr", devPtr)) {
        UNLOCK();
        return ACL_ERROR_INVALID_PARAM;
    }
    if (!blocks_find_mapping(&g_dev_mem, devPtr)) {
        UNLOCK();
        emu_error("%s: devPtr %p is host memory (not inside any live aclrtMalloc allocation)", api, devPtr);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (!check_dev_side(api, "devPtr", devPtr, count, dev)) {
        UNLOCK();
        return ACL_ERROR_INVALID_PARAM;
    }
    memset(devPtr, (unsigned char)value, count);
    UNLOCK();
    return ACL_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* SoC, version, counters, stats                                             */
/* ------------------------------------------------------------------------- */

EMU_EXPORT const char *aclrtGetSocName(void)
{
    if (emu_fault("aclrtGetSocName"))
        return NULL;
    if (!emu_require_init("aclrtGetSocName"))
        return NULL;
    return g_soc;
}

EMU_EXPORT aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)
{
    static const char api[] = "aclrtGetVersion";
    ENTER(api);
    REQUIRE_ARG(api, majorVersion, "majorVersion");
    REQUIRE_ARG(api, minorVersion, "minorVersion");
    REQUIRE_ARG(api, patchVersion, "patchVersion");
    *majorVersion = 1;
    *minorVersion = 0;
    *patchVersion = 0;
    return ACL_SUCCESS;
}

EMU_EXPORT const char *emu_soc_name(void)
{
    return g_soc;
}

EMU_EXPORT bool emu_soc_supports_bf16(void)
{
    return g_bf16;
}

EMU_EXPORT uint64_t emu_op_cache_epoch(void)
{
    return __atomic_load_n(&g_op_cache_epoch, __ATOMIC_ACQUIRE); /* every phase 1 asks: no lock */
}

EMU_EXPORT void emu_counter_add(emu_counter counter, int64_t delta)
{
    if ((int)counter < 0 || (int)counter >= EMU_COUNTER_COUNT)
        return;
    LOCK();
    g_counters[counter] += delta;
    UNLOCK();
}

EMU_EXPORT int32_t aclemuGetStats(aclemuStats *st)
{
    if (!st) {
        emu_error("aclemuGetStats: stats is NULL");
        return ACL_ERROR_INVALID_PARAM;
    }
    memset(st, 0, sizeof *st);
    LOCK();
    st->live_device_bytes = g_live_device_bytes;
    st->peak_device_bytes = g_peak_device_bytes;
    st->live_allocations = (int64_t)g_dev_mem.n;
    st->live_host_allocations = (int64_t)g_host_mem.n;
    st->live_tensors = g_counters[EMU_COUNTER_TENSORS];
    st->live_executors = g_counters[EMU_COUNTER_EXECUTORS];
    int64_t streams = 0, pending = 0, ctxs = 0;
    for (size_t i = 0; i < g_streams.n; i++) {
        stream *s = g_streams.items[i];
        if (!s->is_default)
            streams++;
        pending += (int64_t)s->n_pending;
    }
    for (size_t i = 0; i < g_ctxs.n; i++)
        if (!((context *)g_ctxs.items[i])->is_default)
            ctxs++;
    st->live_streams = streams;
    st->live_events = (int64_t)g_events.n;
    st->live_contexts = ctxs;
    st->pending_tasks = pending;
    st->h2d_bytes = g_h2d;
    st->d2h_bytes = g_d2h;
    st->d2d_bytes = g_d2d;
    st->malloc_calls = g_malloc_calls;
    st->kernel_launches = g_counters[EMU_COUNTER_LAUNCHES];
    st->kernels_executed = g_counters[EMU_COUNTER_KERNELS_RUN];
    st->quarantined_allocations = (int64_t)g_quarantine.n;
    st->quarantined_bytes = (int64_t)g_quarantine_bytes;
    st->live_scalars = g_counters[EMU_COUNTER_SCALARS];
    st->live_int_arrays = g_counters[EMU_COUNTER_INT_ARRAYS];
    st->live_float_arrays = g_counters[EMU_COUNTER_FLOAT_ARRAYS];
    st->live_bool_arrays = g_counters[EMU_COUNTER_BOOL_ARRAYS];
    st->live_tensor_lists = g_counters[EMU_COUNTER_TENSOR_LISTS];
    st->cached_executors = g_counters[EMU_COUNTER_CACHED_EXECUTORS];
    st->memcpy_calls = __atomic_load_n(&g_memcpy_calls, __ATOMIC_RELAXED);
    st->sync_calls = __atomic_load_n(&g_sync_calls, __ATOMIC_RELAXED);
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT void emu_device_kernel_run(int32_t device)
{
    if (device < 0 || device >= EMU_MAX_DEVICES)
        return;
    LOCK();
    g_devices[device].kernels++;
    UNLOCK();
}

EMU_EXPORT int32_t aclemuGetDeviceStats(int32_t deviceId, aclemuDeviceStats *st)
{
    if (!st) {
        emu_error("aclemuGetDeviceStats: stats is NULL");
        return ACL_ERROR_INVALID_PARAM;
    }
    LOCK();
    if (deviceId < 0 || deviceId >= g_dev_count) {
        UNLOCK();
        emu_error("aclemuGetDeviceStats: deviceId %d is not a visible device", (int)deviceId);
        return ACL_ERROR_INVALID_PARAM;
    }
    const device_state *d = &g_devices[deviceId];
    st->h2d_bytes = d->h2d;
    st->d2h_bytes = d->d2h;
    st->kernels_executed = d->kernels;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT int32_t aclemuResetCounters(void)
{
    LOCK();
    for (int i = 0; i < EMU_MAX_DEVICES; i++)
        g_devices[i].h2d = g_devices[i].d2h = g_devices[i].kernels = 0;
    g_h2d = g_d2h = g_d2d = 0;
    g_malloc_calls = 0;
    __atomic_store_n(&g_memcpy_calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_sync_calls, 0, __ATOMIC_RELAXED);
    g_counters[EMU_COUNTER_LAUNCHES] = 0;
    g_counters[EMU_COUNTER_KERNELS_RUN] = 0;
    g_counters[EMU_COUNTER_CACHED_EXECUTORS] = 0;
    g_peak_device_bytes = g_live_device_bytes;
    UNLOCK();
    return ACL_SUCCESS;
}
