/*
 * The runtime's copies: aclrtMemcpy, aclrtMemcpyAsync (a task on its stream) and aclrtMemset,
 * the checks of their arguments, and the host copy that stands for the device's.
 *
 * Error code choice for an asynchronous copy that finds its memory freed when
 * it runs (no public statement of what CANN returns): ACL_ERROR_RT_SYS_DMA,
 * "system dma硬件执行错误" in hicann/runtime docs/zh/api_ref/25-01_aclError.md.
 */
#include "rt_internal.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "era.h"

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
    return unlock_then_wait(ACL_SUCCESS, end);
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

/* Runs outside the runtime's lock, as every task but an event record (rt_tasks.c): the
   checks against the block lists take it, as other threads allocate and free meanwhile. */
static aclError copy_run(emu_task *t)
{
    copy_task *c = (copy_task *)t;
    static const char *const which[2] = {"dst", "src"};
    LOCK();
    for (int i = 0; i < 2; i++) {
        const copy_side *side = &c->sides[i];
        if (side->kind != SIDE_PAGEABLE &&
            !range_still_valid(side->kind == SIDE_DEVICE ? &g_dev_mem : &g_host_mem, side->kind != SIDE_DEVICE,
                               t, which[i], &side->r)) {
            UNLOCK();
            return rt_failed(ACL_ERROR_RT_SYS_DMA);
        }
    }
    UNLOCK();
    copy_bytes(c->dst, c->src, c->count);
    count_copy(&c->plan, c->count);
    return ACL_SUCCESS;
}

/* Whether t is a host<->device asynchronous copy (ACLNN_EMU_LINK's copy engine); *bytes its size. */
bool copy_task_on_link(const emu_task *t, uint64_t *bytes)
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
        return rt_failed(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL);
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
    rc = stream_bound(s, api);
    if (rc) { /* an abort: the copy was dropped with the stream's work */
        UNLOCK();
        return rc;
    }
    bool async = plan.dir == DIR_D2D || (plan.dir == DIR_H2D && plan.src_pinned) ||
                 (plan.dir == DIR_D2H && plan.dst_pinned) ||
                 (plan.dir == DIR_H2H && plan.src_pinned && plan.dst_pinned);
    if (!async) {
        /* Pageable host memory: CANN returns only after the copy (RT doc 11-03). The copy is
         * ordered after the work already on the stream, so that work runs first. */
        rc = stream_run(s, s->seq_enqueued, api);
    }
    uint64_t end = !async && !rc && g_link ? s->end_ns : 0;
    return unlock_then_wait(rc, end);
}

/* The checks aclrtMemset and aclrtMemsetAsync share, lock held: devPtr live device memory of
 * the current device with count bytes from it. */
static aclError check_memset(const char *api, void *devPtr, size_t count, int32_t dev)
{
    if (!check_not_freed(api, "devPtr", devPtr))
        return ACL_ERROR_INVALID_PARAM;
    if (!blocks_find_mapping(&g_dev_mem, devPtr)) {
        emu_error("%s: devPtr %p is host memory (not inside any live aclrtMalloc allocation)", api, devPtr);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (!check_dev_side(api, "devPtr", devPtr, count, dev))
        return ACL_ERROR_INVALID_PARAM;
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    static const char api[] = "aclrtMemset";
    ENTER_WITH_ARG(api, devPtr, "devPtr");
    if (count > maxCount) {
        emu_error("%s: count %zu is greater than maxCount %zu", api, count, maxCount);
        return ACL_ERROR_INVALID_PARAM;
    }
    REQUIRE_DEVICE(api, dev);
    if (count == 0)
        return ACL_SUCCESS;
    LOCK();
    aclError rc = check_memset(api, devPtr, count, dev);
    if (!rc)
        memset(devPtr, (unsigned char)value, count);
    UNLOCK();
    return rc;
}

typedef struct {
    emu_task base;
    void *dst;
    size_t count;
    int value;
    emu_range r;
} memset_task;

static aclError memset_run(emu_task *t)
{
    memset_task *m = (memset_task *)t;
    if (!range_still_valid(&g_dev_mem, false, t, "devPtr", &m->r))
        return rt_failed(ACL_ERROR_RT_SYS_DMA);
    memset(m->dst, m->value, m->count);
    return ACL_SUCCESS;
}

/* aclrtMemsetAsync (hicann/runtime acl_rt.h; docs/zh/api_ref/11-03_memory_copy_and_set.md):
 * aclrtMemset's checks, the bytes set when the stream's work runs. */
EMU_EXPORT aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                                     aclrtStream stream_h)
{
    static const char api[] = "aclrtMemsetAsync";
    ENTER_WITH_ARG(api, devPtr, "devPtr");
    if (count > maxCount) {
        emu_error("%s: count %zu is greater than maxCount %zu", api, count, maxCount);
        return ACL_ERROR_INVALID_PARAM;
    }
    REQUIRE_DEVICE(api, dev);
    memset_task *t = calloc(1, sizeof *t);
    if (!t) {
        emu_error("%s: out of host memory", api);
        return rt_failed(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL);
    }
    LOCK();
    stream *s;
    aclError rc = resolve_stream(stream_h, api, &s);
    if (!rc && count > 0)
        rc = check_memset(api, devPtr, count, dev);
    if (rc || count == 0) {
        UNLOCK();
        free(t);
        return rc;
    }
    t->base.run = memset_run;
    t->base.release = task_free;
    t->base.name = api;
    t->dst = devPtr;
    t->count = count;
    t->value = (unsigned char)value;
    range_pin(&g_dev_mem, devPtr, count, &t->r);
    stream_append(s, &t->base);
    rc = stream_bound(s, api);
    UNLOCK();
    return rc;
}
