/*
 * aclnn_py host emulator -- runtime library (built as libascendcl.so, libacl_rt.so from 8.5):
 * what its files (rt_*.c, one per part of the runtime) share.
 *
 * The library implements the acl / aclrt subset declared in headers/acl_rt.h, the emulator
 * API of headers/aclnn_emu.h and the emu_* runtime services of emu_internal.h. All runtime
 * state is declared here (defined in rt_state.c, or in the one file that uses it), guarded by
 * one process-wide recursive mutex (deferred tasks run while it is held and may call back
 * into emu_* services). Everything declared here is hidden: the library exports only its
 * EMU_EXPORT definitions.
 *
 * Lock order: libnnopbase's own mutex may be held only while calling nothing in
 * this library; tasks run here may call libnnopbase. So the order is always
 * runtime mutex -> nnopbase mutex, never the reverse.
 *
 * Error codes not stated in the project's facts file are documented where they
 * are chosen (see "Error code choices" comments).
 *
 * Each rt_*.c includes this header first (it defines _GNU_SOURCE).
 */
#ifndef ACLNN_EMU_RT_INTERNAL_H
#define ACLNN_EMU_RT_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_internal.h"

#pragma GCC visibility push(hidden)

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

/* Freed device blocks kept from reuse (ACLNN_EMU_QUARANTINE; see rt_blocks.c). */
#define EMU_QUARANTINE_DEFAULT 256
#define EMU_QUARANTINE_LIMIT 65536 /* the largest ACLNN_EMU_QUARANTINE accepted */

/* ------------------------------------------------------------------------- */
/* Global state                                                              */
/* ------------------------------------------------------------------------- */

extern pthread_mutex_t g_mu; /* recursive */
#define LOCK() pthread_mutex_lock(&g_mu)
#define UNLOCK() pthread_mutex_unlock(&g_mu)
/* Signalled whenever a thread finishes running a stream's task (see stream_run). */
extern pthread_cond_t g_task_done;
/* Keep the runtime whole across fork() (rt_state.c); installed when the runtime starts. */
void fork_handlers_install(void);
void streams_after_fork(void);

extern bool g_inited; /* between aclInit and aclFinalize */
/* The configuration was read (by aclInit or the first runtime call before it, see
 * runtime_ready); once per process: aclFinalize leaves the runtime running. */
extern bool g_started;
/* aclFinalize ran and no aclInit since: CANN's aclFinalizeFlag (src/acl/aclrt_impl/acl.cpp),
 * false until the first aclFinalize of the process, so one before any aclInit succeeds. */
extern bool g_finalized;
/* aclInit's reference count, as CANN keeps it (hicann/runtime src/acl/aclrt_impl/acl.cpp,
 * aclInitImpl / aclFinalizeImpl / aclFinalizeReferenceImpl; docs/zh/api_ref/
 * 02_initialization_and_deinitialization.md): every aclInit adds one, a repeat included
 * (which still returns 100002); aclFinalize clears it and de-initialises for every user
 * in the process; aclFinalizeReference takes one away and de-initialises at zero. */
extern uint64_t g_init_refs;
extern char g_soc[64];
extern bool g_bf16;
extern int32_t g_dev_count;  /* visible devices (user ids 0 .. g_dev_count - 1) */
extern int32_t g_phys_count; /* ACLNN_EMU_DEVICE_COUNT; logical ids 0 .. g_phys_count - 1 */

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
extern visibility g_visibility;
extern int32_t g_visible_ids[EMU_MAX_DEVICES];
extern char g_visible_value[EMU_VISIBLE_MAX_LEN + 1];
extern uint64_t g_dev_capacity;
extern size_t g_quarantine_max;
/* ACLNN_EMU_OP_CACHE=1: the aclnn executor cache is modelled (meta.c); each aclInit with it on
 * starts a new epoch (an empty cache); 0 while it is off or ACL is finalized */
extern uint64_t g_op_cache_epoch;

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
extern bool g_link;
extern uint64_t g_link_latency_ns;
extern double g_link_bytes_per_ns; /* GB/s = bytes per ns */

/* The waits an event keeps track of (struct event); past that number the oldest is forgotten. */
#define EMU_EVENT_WAITS 16

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
    uint64_t aborts; /* times its work was aborted (see stream_run) */
    uint32_t priority; /* aclrtCreateStreamWithConfig's (0, the highest, otherwise) */
    uint32_t flags;    /* and its flags */
    uint32_t overflow; /* aclrtSetStreamOverflowSwitch's flag (0 off, 1 on) */
    uint64_t failure_mode; /* aclrtSetStreamFailureMode's (ACL_CONTINUE_ON_FAILURE, 0, unless set) */
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
    uint32_t flags;           /* aclrtCreateEventWithFlag's (0 from aclrtCreateEvent) */
    /* The waits issued on it (aclrtStreamWaitEvent) not known to have run: each is done once its
     * stream ran the work queued before it (aclrtQueryEventWaitStatus) */
    struct {
        stream *s;
        uint64_t stream_id;
        uint64_t seq; /* the stream's seq_enqueued at the wait */
    } waits[EMU_EVENT_WAITS];
    uint32_t n_waits;
};

/* Note a wait on e by stream s (aclrtStreamWaitEvent). Lock held. */
void event_note_wait(event *e, stream *s);

typedef struct {
    int32_t refcount; /* aclrtSetDevice count */
    context *default_ctx;
    uint64_t used_bytes;
    int64_t explicit_streams;
    uint64_t copy_free_ns, compute_free_ns; /* ACLNN_EMU_LINK: when each engine is next free */
    int64_t h2d, d2h, kernels; /* since load or reset: aclemuGetDeviceStats */
} device_state;

extern device_state g_devices[EMU_MAX_DEVICES];

/* live handle registries (pointer arrays; handles are never dereferenced before lookup) */
typedef struct {
    void **items;
    size_t n, cap;
} registry;

extern registry g_ctxs, g_streams, g_events;

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
extern block_list g_dev_mem, g_host_mem, g_quarantine;
extern uint64_t g_quarantine_bytes; /* requested bytes of the quarantined blocks */

/* counters */
extern int64_t g_live_device_bytes, g_peak_device_bytes;
extern int64_t g_h2d, g_d2h, g_d2d, g_malloc_calls;
extern int64_t g_memcpy_calls, g_sync_calls; /* every call made, whatever its outcome */
#define COUNT_CALL(counter) __atomic_add_fetch(&(counter), 1, __ATOMIC_RELAXED)
extern int64_t g_counters[EMU_COUNTER_COUNT]; /* emu_counter */

/* thread-local current context (pointer plus generation id, so a destroyed
 * context whose memory is reused is never mistaken for a live one; see current_ctx) */
extern __thread context *t_ctx;

/* ------------------------------------------------------------------------- */
/* Checks that open the public APIs                                          */
/* ------------------------------------------------------------------------- */

/*
 * They return from the calling API, hence macros; each API uses them in the order its
 * checks are made.
 */

/* Return the status from the calling API unless it is ACL_SUCCESS. */
#define RETURN_IF_ERROR(expr) EMU_RETURN_IF_STATUS(aclError, expr)

/* The runtime started (see runtime_ready): fails only with a configuration error. */
#define REQUIRE_INIT(api) RETURN_IF_ERROR(emu_runtime_ready(api))

/* How (nearly) every public API starts: its fault point, then REQUIRE_INIT. */
#define ENTER(api)                            \
    do {                                      \
        EMU_RETURN_IF_FAULT(api);             \
        REQUIRE_INIT(api);                    \
    } while (0)

/* ENTER, then REQUIRE_ARG(api, ptr, name): how an API with a required pointer argument starts. */
#define ENTER_WITH_ARG(api, ptr, name)                             \
    do {                                                           \
        ENTER(api);                                                \
        REQUIRE_ARG(api, ptr, name);                               \
    } while (0)

/* How a synchronising API starts: counted, its fault point (sync_fault's h, all_device and ev),
 * then the aclInit check. */
#define SYNC_ENTER(api, h, all_device, ev)                         \
    do {                                                           \
        COUNT_CALL(g_sync_calls);                                  \
        RETURN_IF_ERROR(sync_fault(api, h, all_device, ev));       \
        REQUIRE_INIT(api);                                         \
    } while (0)

/* A required pointer argument: ACL_ERROR_INVALID_PARAM with "<api>: <name> is NULL". */
#define REQUIRE_ARG(api, ptr, name)                  \
    do {                                             \
        if (!(ptr)) {                                \
            emu_error("%s: %s is NULL", api, name);  \
            return ACL_ERROR_INVALID_PARAM;          \
        }                                            \
    } while (0)

/* Declares `var`, the current device; returns ACL_ERROR_RT_CONTEXT_NULL without a context. */
#define REQUIRE_DEVICE(api, var)                 \
    int32_t var = emu_require_device(api);       \
    if (var < 0)                                 \
        return rt_failed(ACL_ERROR_RT_CONTEXT_NULL);

/* The same check where the device itself is not needed. */
#define REQUIRE_CONTEXT(api)                     \
    do {                                         \
        if (emu_require_device(api) < 0)         \
            return rt_failed(ACL_ERROR_RT_CONTEXT_NULL); \
    } while (0)

/* ------------------------------------------------------------------------- */
/* Functions shared by the runtime's files                                   */
/* ------------------------------------------------------------------------- */

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/*
 * Each is documented where it is defined; "lock held" unless the definition says otherwise.
 */

/* rt_registry.c */
bool reg_has(const registry *r, const void *p);
void reg_free(registry *r);
void *handle_new(registry *r, size_t size);
aclError check_live_handle(const char *api, const registry *r, const char *kind, const void *h);
void handle_free(registry *r, void *h);

/* rt_errors.c: status, recorded as the calling thread's last error when it is an
 * ACL_ERROR_RT_* status (aclrtGetLastError) */
aclError rt_failed(aclError status);

/* rt_init.c */
void report_uninitialized(const char *api);
aclError runtime_ready(const char *api);

/* rt_tasks.c */
context *current_ctx(void);
void set_current(context *c);
void task_release(emu_task *t);
void task_free(emu_task *t);
uint64_t link_duration_ns(uint64_t bytes);
void link_wait_until(uint64_t target);

/* Unlock, then wait until end (ACLNN_EMU_LINK) unless it is 0; gives rc back. */
static inline aclError unlock_then_wait(aclError rc, uint64_t end)
{
    UNLOCK();
    if (end)
        link_wait_until(end);
    return rc;
}
aclError stream_run(stream *s, uint64_t upto, const char *api);
aclError stream_run_all(stream *s, const char *api);
stream *pending_record_stream(const event *e);
int32_t sync_fault(const char *api, aclrtStream h, bool all_device, event *ev);
stream *stream_new(context *c, bool is_default);
bool stream_alive(const stream *s, uint64_t id);
void stream_free(stream *s);
context *ctx_new(int32_t device, bool is_default);
void ctx_free(context *c);

/* rt_blocks.c */
mem_block *blocks_find_mapping(const block_list *l, const void *p);
ptrdiff_t blocks_find_base(const block_list *l, const void *p);
bool block_map(size_t size, int32_t device, mem_block *out, bool huge);
bool blocks_insert(block_list *l, const mem_block *b);
void blocks_remove_at(block_list *l, size_t i);
bool quarantine_release_oldest(void);
void quarantine_flush(void);
void dev_block_retire_at(size_t i);
bool range_pin(const block_list *l, const void *ptr, uint64_t bytes, emu_range *out);
bool range_still_valid(const block_list *l, bool host, const emu_task *task, const char *what,
                       const emu_range *r);

/* rt_streams.c */
aclError resolve_stream(aclrtStream h, const char *api, stream **out);
aclError lock_handles(const char *api, aclrtStream h, stream **s, aclrtEvent ev, event **e);
aclError stream_bound(stream *s, const char *api);
void stream_append(stream *s, emu_task *t);

/* rt_events.c and rt_memcpy.c: the tasks link_place (rt_tasks.c) tells apart */
aclError record_run(emu_task *t);
void record_task_done(emu_task *t, uint64_t at_ns);
bool copy_task_on_link(const emu_task *t, uint64_t *bytes);

#pragma GCC visibility pop

#endif
