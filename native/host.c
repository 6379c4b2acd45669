/*
 * aclnn_py's host library: device blocks and CANN handles owned in C (see
 * headers/aclnn_py_host.h for the contract).
 *
 * Python objects own an aclpyBlock or aclpyHandle made by ffi.new and wrapped by
 * ffi.gc with the Collect functions below, so dropping the object runs C code only. Each public function is one step as far as Python can see: an
 * interrupt lands before or after it, never inside, and no Python lock is
 * involved. The pool's mutex is held only around list updates, never around a
 * call into CANN, so a CANN call made here can never wait on this library. A
 * stream state's mutex is held around a launch (so that counting, launching and
 * the point a synchronisation takes stay in one order), never around a
 * synchronisation, and nothing called under it takes a lock of this library.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../headers/acl_rt.h"
#include "../headers/acl_meta.h"
#include "../headers/aclnn_py_host.h"

#define EXPORT __attribute__((visibility("default")))
#define ROUNDING 512u

typedef aclError (*malloc_fn_t)(void **, size_t, aclrtMemMallocPolicy);
typedef aclError (*malloc_host_fn_t)(void **, size_t);
typedef aclError (*free_fn_t)(void *);

typedef struct {
    void *pointer;
    uint64_t size;
    aclpyStreamState *stream; /* released while work on it may use the block; NULL: free */
    uint64_t point;           /* that stream's point at the release */
} cached_block;

/* ---- stream states (see aclpyStreamState in the header) ---- */

/* Fences in flight per stream, and launches between them when no released block waits for
   one: together they span the emulator's and CANN's queue depth of 2048 tasks, so a stream
   whose queue is full still finds a fence done every FENCE_EVERY launches. */
#define FENCES 16
#define FENCE_EVERY 256u
#define LOOK_EVERY 8u     /* launches between looks at the oldest fence */
#define POINT_DONE UINT64_MAX

struct aclpyStreamState {
    int64_t refs;        /* the owner's and one per block or cache entry marked with it; atomic */
    uint64_t point;      /* the last point issued; atomic */
    uint64_t completed;  /* the last point known done (POINT_DONE once closed); atomic */
    int32_t wanted;      /* a released block waits for a fence; atomic */
    uint64_t stamps;     /* releases that marked a block with this state; atomic */
    aclrtStream stream;
    int32_t device;
    /* Touched only under the owner's queueing lock (aclpyStreamLaunched) and at close: */
    uint32_t launches;   /* since the last fence */
    uint32_t head, count;
    aclrtEvent events[FENCES];
    uint64_t points[FENCES];
    int64_t marks[FENCES];
    uint64_t fences_recorded, fences_done;
    uint64_t counted, stamps_at_count; /* the last launch counted, for aclpyStreamUncount */
    /* Launches, the point a synchronisation takes and closing happen in one order under
       `lock`, whether they come from the owner's queueing lock or from the calls that need
       no Python lock (aclpyRelaunchFast, aclpyStreamSynchronizeFast): */
    pthread_mutex_t lock;
    pthread_cond_t idle;  /* signalled when the last synchronisation without the owner's lock ends */
    int32_t closed;       /* aclpyStreamClose: nothing is launched or waited for without the owner */
    int32_t busy;         /* a launch counted by aclpyStreamLaunching is being queued by the owner */
    uint32_t syncing;     /* synchronisations under way without the owner's lock */
    int64_t hold_mark;    /* the owner's hold count at its last counted launch (fences use it) */
};

static aclError (*g_create_event)(aclrtEvent *);
static aclError (*g_destroy_event)(aclrtEvent);
static aclError (*g_record_event)(aclrtEvent, aclrtStream);
static aclError (*g_query_event_status)(aclrtEvent, aclrtEventRecordedStatus *);
static aclError (*g_query_event)(aclrtEvent, aclrtEventStatus *);
static aclError (*g_synchronize)(aclrtStream);

static void state_ref(aclpyStreamState *state)
{
    if (state)
        __atomic_add_fetch(&state->refs, 1, __ATOMIC_RELAXED);
}

static void state_unref(aclpyStreamState *state)
{
    if (state && __atomic_sub_fetch(&state->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        pthread_mutex_destroy(&state->lock);
        pthread_cond_destroy(&state->idle);
        free(state);
    }
}

/*
 * Whether a block released at `point` on `state` is free for any stream and host code: a
 * fence or synchronisation covering every launch counted up to that point has passed
 * (launches are counted before they are queued, see aclpyStreamLaunching).
 */
static bool released_done(const aclpyStreamState *state, uint64_t point)
{
    return !state || __atomic_load_n(&state->completed, __ATOMIC_ACQUIRE) >= point;
}

static void raise_completed(aclpyStreamState *state, uint64_t point)
{
    uint64_t seen = __atomic_load_n(&state->completed, __ATOMIC_RELAXED);
    while (seen < point &&
           !__atomic_compare_exchange_n(&state->completed, &seen, point, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
}

struct aclpyPool {
    pthread_mutex_t lock;
    int32_t device;
    bool caching;
    malloc_fn_t malloc_fn;           /* aclrtMalloc; NULL in a host pool */
    malloc_host_fn_t malloc_host_fn; /* aclrtMallocHost in a host pool */
    free_fn_t free_fn;               /* aclrtFree or aclrtFreeHost */
    uint64_t generation;
    cached_block *cache; /* released blocks, newest last */
    size_t n_cached, cap_cached;
    aclpyPoolStats stats;
};

/* ---- the cache (call with pool->lock held) ---- */

static bool cache_push(aclpyPool *pool, void *pointer, uint64_t size, aclpyStreamState *stream,
                       uint64_t point)
{
    if (pool->n_cached == pool->cap_cached) {
        size_t cap = pool->cap_cached ? 2 * pool->cap_cached : 64;
        cached_block *grown = realloc(pool->cache, cap * sizeof *grown);
        if (!grown)
            return false;
        pool->cache = grown;
        pool->cap_cached = cap;
    }
    pool->cache[pool->n_cached++] = (cached_block){pointer, size, stream, point};
    pool->stats.cached_bytes += size;
    pool->stats.cached_blocks++;
    return true;
}

/*
 * The newest cached block of exactly `size` bytes that work on `stream` may have (see
 * aclpyStreamState), removed from the cache; NULL if none. *marked: the stream state the
 * entry carried (its reference passes to the caller).
 */
static void *cache_take(aclpyPool *pool, uint64_t size, aclpyStreamState *stream,
                        aclpyStreamState **marked)
{
    for (size_t i = pool->n_cached; i-- > 0;) {
        cached_block *entry = &pool->cache[i];
        if (entry->size == size &&
            ((stream && entry->stream == stream) || released_done(entry->stream, entry->point))) {
            void *pointer = entry->pointer;
            *marked = entry->stream;
            *entry = pool->cache[--pool->n_cached];
            pool->stats.cached_bytes -= size;
            pool->stats.cached_blocks--;
            return pointer;
        }
    }
    return NULL;
}

/* Return every cached block that no queued work may use to CANN; failures go back into the
   cache, and so do blocks still waiting for their stream. */
static aclError cache_free_all(aclpyPool *pool, uint64_t *freed_bytes, uint64_t *kept_blocks)
{
    pthread_mutex_lock(&pool->lock);
    size_t n = 0;
    for (size_t i = 0; i < pool->n_cached; i++)
        n += released_done(pool->cache[i].stream, pool->cache[i].point);
    cached_block *blocks = n ? malloc(n * sizeof *blocks) : NULL;
    if (n && !blocks)
        n = 0; /* out of host memory: nothing is freed this time */
    size_t taken = 0;
    for (size_t i = pool->n_cached; taken < n && i-- > 0;) {
        cached_block *entry = &pool->cache[i];
        if (released_done(entry->stream, entry->point)) {
            blocks[taken++] = *entry;
            pool->stats.cached_bytes -= entry->size;
            pool->stats.cached_blocks--;
            *entry = pool->cache[--pool->n_cached];
        }
    }
    uint64_t generation = pool->generation;
    pthread_mutex_unlock(&pool->lock);

    aclError first = ACL_SUCCESS;
    uint64_t freed = 0, kept = 0;
    for (size_t i = 0; i < taken; i++) {
        state_unref(blocks[i].stream);
        aclError status = pool->free_fn(blocks[i].pointer);
        if (status == ACL_SUCCESS) {
            freed += blocks[i].size;
            continue;
        }
        if (first == ACL_SUCCESS)
            first = status;
        pthread_mutex_lock(&pool->lock);
        pool->stats.failed_frees++;
        /* Kept for a later try, unless the runtime was torn down meanwhile. */
        if (pool->generation == generation && cache_push(pool, blocks[i].pointer, blocks[i].size, NULL, 0))
            kept++;
        pthread_mutex_unlock(&pool->lock);
    }
    free(blocks);
    if (freed_bytes)
        *freed_bytes = freed;
    if (kept_blocks)
        *kept_blocks = kept;
    return first;
}

/* ---- pools ---- */

EXPORT aclpyPool *aclpyPoolCreate(int32_t device, int32_t caching, malloc_fn_t malloc_fn,
                                  free_fn_t free_fn)
{
    aclpyPool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pthread_mutex_init(&pool->lock, NULL);
    pool->device = device;
    pool->caching = caching != 0;
    pool->malloc_fn = malloc_fn;
    pool->free_fn = free_fn;
    pool->generation = 1;
    return pool;
}

EXPORT aclpyPool *aclpyHostPoolCreate(int32_t device, int32_t caching,
                                      malloc_host_fn_t malloc_host_fn, free_fn_t free_fn)
{
    aclpyPool *pool = aclpyPoolCreate(device, caching, NULL, free_fn);
    if (pool)
        pool->malloc_host_fn = malloc_host_fn;
    return pool;
}

EXPORT aclError aclpyPoolAllocateFor(aclpyPool *pool, aclpyBlock *block, uint64_t nbytes,
                                     aclrtMemMallocPolicy policy, aclpyStreamState *stream)
{
    uint64_t size = (nbytes + ROUNDING - 1) / ROUNDING * ROUNDING;
    if (!pool->caching) /* blocks released by the garbage collector go back first */
        cache_free_all(pool, NULL, NULL);
    pthread_mutex_lock(&pool->lock);
    aclpyStreamState *marked = NULL;
    void *pointer = pool->caching ? cache_take(pool, size, stream, &marked) : NULL;
    uint64_t generation = pool->generation;
    if (pointer) {
        pool->stats.hits++;
        pool->stats.used_bytes += size;
    } else {
        pool->stats.misses++;
    }
    pthread_mutex_unlock(&pool->lock);
    state_unref(marked);
    if (!pointer) {
        uint64_t asked = pool->caching ? size : nbytes;
        aclError status = pool->malloc_host_fn ? pool->malloc_host_fn(&pointer, (size_t)asked)
                                               : pool->malloc_fn(&pointer, (size_t)asked, policy);
        if (status != ACL_SUCCESS)
            return status;
        size = asked;
        pthread_mutex_lock(&pool->lock);
        if (pool->generation == generation)
            pool->stats.used_bytes += size;
        pthread_mutex_unlock(&pool->lock);
    }
    block->size = size;
    block->pool = pool;
    block->generation = generation;
    state_ref(stream);
    block->stream = stream;
    block->pointer = pointer; /* last: from here on the block is held */
    return ACL_SUCCESS;
}

EXPORT aclError aclpyPoolAllocate(aclpyPool *pool, aclpyBlock *block, uint64_t nbytes,
                                  aclrtMemMallocPolicy policy)
{
    return aclpyPoolAllocateFor(pool, block, nbytes, policy, NULL);
}

EXPORT void aclpyBlockUse(aclpyBlock *block, aclpyStreamState *stream)
{
    state_ref(stream);
    state_unref(__atomic_exchange_n(&block->stream, stream, __ATOMIC_ACQ_REL));
}

/* Detach the block's memory, and the stream whose work may use it, from `block`; false when
   it held none (or a stale one). */
static bool block_detach(aclpyBlock *block, void **pointer, uint64_t *size, aclpyStreamState **stream)
{
    *pointer = __atomic_exchange_n(&block->pointer, NULL, __ATOMIC_ACQ_REL);
    *stream = NULL;
    if (!*pointer || !block->pool)
        return false;
    *stream = __atomic_exchange_n(&block->stream, NULL, __ATOMIC_ACQ_REL);
    aclpyPool *pool = block->pool;
    *size = block->size;
    pthread_mutex_lock(&pool->lock);
    bool current = block->generation == pool->generation;
    if (current)
        pool->stats.used_bytes -= *size;
    pthread_mutex_unlock(&pool->lock);
    if (!current) {
        state_unref(*stream);
        *stream = NULL;
    }
    return current;
}

/* The point a block released now is marked with: read after a full fence, so a relaunch
   without the owner's lock that counted its launch before this release's epoch bump is
   covered, and one that counts later sees the bump and declines (relaunch_locked). */
static uint64_t release_point(aclpyStreamState *stream)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return stream ? __atomic_load_n(&stream->point, __ATOMIC_SEQ_CST) : 0;
}

/* Back to the cache, marked with `stream` (whose reference it takes) at its current point when
   work queued there may still use the block. */
static void cache_or_drop(aclpyPool *pool, void *pointer, uint64_t size, uint64_t generation,
                          aclpyStreamState *stream)
{
    uint64_t point = release_point(stream);
    if (stream && released_done(stream, point)) {
        state_unref(stream); /* closed, or nothing launched since its last known-done point */
        stream = NULL;
    } else if (stream) {
        __atomic_add_fetch(&stream->stamps, 1, __ATOMIC_ACQ_REL);
        __atomic_store_n(&stream->wanted, 1, __ATOMIC_RELEASE); /* the next launch records a fence */
    }
    pthread_mutex_lock(&pool->lock);
    bool kept = pool->generation == generation && cache_push(pool, pointer, size, stream, point);
    pthread_mutex_unlock(&pool->lock);
    if (!kept) /* torn down, or out of host memory: the block is lost, not reused */
        state_unref(stream);
}

/* Set in a child forked from a process whose runtime aclnn_py had started (aclpyForked). */
static bool g_forked;

EXPORT void aclpyForked(void)
{
    __atomic_store_n(&g_forked, true, __ATOMIC_RELEASE);
    aclpyHandlesAbandon();
}

static bool forked(void)
{
    return __atomic_load_n(&g_forked, __ATOMIC_ACQUIRE);
}

EXPORT aclError aclpyBlockRelease(aclpyBlock *block)
{
    void *pointer;
    uint64_t size;
    aclpyStreamState *stream;
    uint64_t generation = block->generation;
    if (forked())
        return ACL_SUCCESS;
    if (!block_detach(block, &pointer, &size, &stream))
        return ACL_SUCCESS;
    aclpyPool *pool = block->pool;
    if (!pool->caching && released_done(stream, release_point(stream))) {
        state_unref(stream);
        aclError status = pool->free_fn(pointer);
        if (status == ACL_SUCCESS)
            return ACL_SUCCESS;
        pthread_mutex_lock(&pool->lock);
        pool->stats.failed_frees++;
        pthread_mutex_unlock(&pool->lock);
        cache_or_drop(pool, pointer, size, generation, NULL); /* retried by aclpyPoolTrim */
        return status;
    }
    /* Cached; without caching, kept until its stream's work is done, then freed. */
    cache_or_drop(pool, pointer, size, generation, stream);
    return ACL_SUCCESS;
}

/* The device aclnn_py made current in this thread, -1 for none (aclpyThreadDevice), and the
   handle generation it was made current in (a teardown or a fork ends it). */
static __thread int32_t t_device = -1;
static __thread uint64_t t_device_generation;

EXPORT void aclpyThreadDevice(int32_t device)
{
    t_device = device;
    t_device_generation = aclpyHandlesGeneration();
}

/* Whether aclnn_py made `device` current in this thread in this runtime generation. */
static bool thread_on(int32_t device)
{
    return t_device == device && t_device_generation == aclpyHandlesGeneration() && !forked();
}

/* Bumped whenever an array may have left the stream it was launched on, or was freed. */
static uint64_t g_epoch = 1;

EXPORT uint64_t aclpyEpoch(void)
{
    return __atomic_load_n(&g_epoch, __ATOMIC_ACQUIRE);
}

EXPORT const uint64_t *aclpyEpochCell(void)
{
    return &g_epoch;
}

EXPORT void aclpyEpochBump(void)
{
    __atomic_add_fetch(&g_epoch, 1, __ATOMIC_SEQ_CST);
}

EXPORT void aclpyBlockCollect(aclpyBlock *block)
{
    void *pointer;
    uint64_t size;
    aclpyStreamState *stream;
    if (forked())
        return;
    uint64_t generation = block->generation;
    if (block_detach(block, &pointer, &size, &stream)) {
        aclpyPool *pool = block->pool;
        /* Without caching, CANN takes the block back now when the device is current in
           this thread and no queued work may use it; otherwise it waits for the pool's next
           allocation or trim. */
        if (!pool->caching && t_device == pool->device &&
            released_done(stream, release_point(stream)) &&
            pool->free_fn(pointer) == ACL_SUCCESS) {
            state_unref(stream);
            return;
        }
        cache_or_drop(pool, pointer, size, generation, stream);
    }
}

/* ---- staging: a page-locked host block and a device block taken together ---- */

/* Take nbytes from pool into block unless it holds a block already (or nbytes is 0); on a failure
 * staging->failed is set to which (1 host, 2 device). */
static aclError staging_take_one(aclpyStaging *staging, aclpyPool *pool, aclpyBlock *block, uint64_t nbytes,
                                 int32_t which)
{
    if (!nbytes || block->pointer)
        return ACL_SUCCESS;
    aclError status = aclpyPoolAllocate(pool, block, nbytes, ACL_MEM_MALLOC_HUGE_FIRST);
    if (status != ACL_SUCCESS)
        staging->failed = which;
    return status;
}

EXPORT aclError aclpyStagingTake(aclpyStaging *staging, aclpyPool *host_pool, uint64_t host_bytes,
                                 aclpyPool *device_pool, uint64_t device_bytes)
{
    staging->failed = 0;
    aclError status = staging_take_one(staging, host_pool, &staging->host, host_bytes, 1);
    if (status == ACL_SUCCESS)
        status = staging_take_one(staging, device_pool, &staging->device, device_bytes, 2);
    if (status != ACL_SUCCESS)
        return status;
    staging->host_data = staging->host.pointer;
    staging->device_data = staging->device.pointer;
    return ACL_SUCCESS;
}

EXPORT void aclpyStagingCollect(aclpyStaging *staging)
{
    aclpyBlockCollect(&staging->host);
    aclpyBlockCollect(&staging->device);
}

EXPORT aclError aclpyPoolTrim(aclpyPool *pool, uint64_t *freed_bytes, uint64_t *kept_blocks)
{
    return cache_free_all(pool, freed_bytes, kept_blocks);
}

EXPORT void aclpyPoolGetStats(aclpyPool *pool, aclpyPoolStats *stats)
{
    pthread_mutex_lock(&pool->lock);
    *stats = pool->stats;
    pthread_mutex_unlock(&pool->lock);
}

EXPORT void aclpyPoolAbandon(aclpyPool *pool)
{
    pthread_mutex_lock(&pool->lock);
    pool->generation++;
    for (size_t i = 0; i < pool->n_cached; i++)
        state_unref(pool->cache[i].stream);
    free(pool->cache);
    pool->cache = NULL;
    pool->n_cached = pool->cap_cached = 0;
    uint64_t hits = pool->stats.hits, misses = pool->stats.misses;
    memset(&pool->stats, 0, sizeof pool->stats);
    pool->stats.hits = hits;
    pool->stats.misses = misses;
    pthread_mutex_unlock(&pool->lock);
}

/* ---- streams ---- */

EXPORT void aclpyStreamsConfigure(aclError (*create_event)(aclrtEvent *), aclError (*destroy_event)(aclrtEvent),
                                  aclError (*record_event)(aclrtEvent, aclrtStream),
                                  aclError (*query_event_status)(aclrtEvent, aclrtEventRecordedStatus *),
                                  aclError (*query_event)(aclrtEvent, aclrtEventStatus *),
                                  aclError (*synchronize)(aclrtStream))
{
    g_synchronize = synchronize;
    g_create_event = create_event;
    g_destroy_event = destroy_event;
    g_record_event = record_event;
    g_query_event_status = query_event_status;
    g_query_event = query_event;
}

EXPORT aclpyStreamState *aclpyStreamStateCreate(aclrtStream stream, int32_t device)
{
    aclpyStreamState *state = calloc(1, sizeof *state);
    if (!state)
        return NULL;
    state->refs = 1;
    state->stream = stream;
    state->device = device;
    pthread_mutex_init(&state->lock, NULL);
    pthread_cond_init(&state->idle, NULL);
    return state;
}

EXPORT void aclpyStreamStateCollect(aclpyStreamState *state)
{
    /* The owner closed the stream first, or its finaliser destroyed it: either way its work
       ran or was dropped. Fence events not destroyed at close are left to the device reset. */
    __atomic_store_n(&state->completed, POINT_DONE, __ATOMIC_RELEASE);
    state_unref(state);
}

/* Whether the fence in `slot` is done (its event queried complete). */
static bool fence_done(aclpyStreamState *state, uint32_t slot)
{
    if (g_query_event_status) {
        aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
        return g_query_event_status(state->events[slot], &status) == ACL_SUCCESS &&
               status == ACL_EVENT_RECORDED_STATUS_COMPLETE;
    }
    if (g_query_event) {
        aclrtEventStatus status = ACL_EVENT_STATUS_NOT_READY;
        return g_query_event(state->events[slot], &status) == ACL_SUCCESS && status == ACL_EVENT_STATUS_COMPLETE;
    }
    return false;
}

static void fence_record(aclpyStreamState *state, uint64_t point, int64_t hold_mark)
{
    uint32_t slot = (state->head + state->count) % FENCES;
    if (!state->events[slot] && (!g_create_event || g_create_event(&state->events[slot]) != ACL_SUCCESS)) {
        state->events[slot] = NULL;
        return;
    }
    if (!g_record_event || g_record_event(state->events[slot], state->stream) != ACL_SUCCESS)
        return;
    state->points[slot] = point;
    state->marks[slot] = hold_mark;
    state->count++;
    state->launches = 0;
    state->fences_recorded++;
    __atomic_store_n(&state->wanted, 0, __ATOMIC_RELEASE);
}

/* aclpyStreamLaunching's work, `state->lock` held. */
static int64_t launching_locked(aclpyStreamState *state, int64_t hold_mark)
{
    bool can_query = g_query_event_status || g_query_event;
    uint64_t point = __atomic_load_n(&state->point, __ATOMIC_ACQUIRE);
    /* A fence after the work queued so far, if there is room and a way to query it: every
       FENCE_EVERY launches, sooner when a released block waits for one (the more fences in
       flight, the further apart, so a few launches cannot fill the ring). */
    uint32_t spacing = FENCE_EVERY;
    if (__atomic_load_n(&state->wanted, __ATOMIC_ACQUIRE) && state->count < 4)
        spacing = 1u << (2 * state->count); /* 1, 4, 16, 64 */
    if (can_query && state->count < FENCES && state->launches >= spacing &&
        point > __atomic_load_n(&state->completed, __ATOMIC_ACQUIRE))
        fence_record(state, point, hold_mark);
    state->launches++;
    /* Counted before it is queued: a block released from here on waits for a later fence. */
    state->stamps_at_count = __atomic_load_n(&state->stamps, __ATOMIC_ACQUIRE);
    state->counted = __atomic_add_fetch(&state->point, 1, __ATOMIC_ACQ_REL);
    int64_t done = -1;
    if (state->count && state->launches % LOOK_EVERY == 1) { /* right after a fence, then every few launches */
        while (state->count) {
            uint32_t slot = state->head;
            /* A synchronisation may have passed it already. */
            if (__atomic_load_n(&state->completed, __ATOMIC_ACQUIRE) < state->points[slot]) {
                if (!fence_done(state, slot))
                    break;
                state->fences_done++;
                raise_completed(state, state->points[slot]);
            }
            done = state->marks[slot];
            state->head = (slot + 1) % FENCES;
            state->count--;
        }
    }
    return done;
}

static void uncount_locked(aclpyStreamState *state)
{
    uint64_t counted = state->counted;
    if (!counted || __atomic_load_n(&state->stamps, __ATOMIC_ACQUIRE) != state->stamps_at_count)
        return; /* a block was marked with the count meanwhile: it stays (a later point covers it) */
    __atomic_compare_exchange_n(&state->point, &counted, counted - 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    state->counted = 0;
}

EXPORT int64_t aclpyStreamLaunching(aclpyStreamState *state, int64_t hold_mark)
{
    pthread_mutex_lock(&state->lock);
    state->busy = 1; /* until aclpyStreamLaunched: the owner queues the work itself */
    state->hold_mark = hold_mark;
    int64_t done = launching_locked(state, hold_mark);
    pthread_mutex_unlock(&state->lock);
    return done;
}

EXPORT void aclpyStreamLaunched(aclpyStreamState *state)
{
    pthread_mutex_lock(&state->lock);
    state->busy = 0;
    pthread_mutex_unlock(&state->lock);
}

EXPORT void aclpyStreamUncount(aclpyStreamState *state)
{
    pthread_mutex_lock(&state->lock);
    uncount_locked(state);
    state->busy = 0;
    pthread_mutex_unlock(&state->lock);
}

EXPORT uint64_t aclpyStreamSyncPoint(aclpyStreamState *state)
{
    pthread_mutex_lock(&state->lock);
    /* The owner's queueing lock is held: a launch marked busy was cut short before it could
       say it was queued (an interrupt), and was queued or not by now. */
    state->busy = 0;
    uint64_t point = __atomic_load_n(&state->point, __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&state->lock);
    return point;
}

EXPORT void aclpyStreamSynced(aclpyStreamState *state, uint64_t point)
{
    raise_completed(state, point);
}

/* Count and launch, `state->lock` held; a failure takes the count back. `epoch` (0 for the
   owner, who checked the arrays under its lock): the placement epoch the caller without the
   owner's lock checked, checked again once the launch is counted. A free in another thread
   does not take the mutex: it bumps the epoch, then reads the point to mark the block with
   (release_point). Counted first, checked after, both sequentially consistent: either the
   release's point covers this launch, or this check sees the bump and nothing is launched. */
static int32_t relaunch_locked(aclpyStreamState *state, int64_t hold_mark, int64_t *done,
                               int32_t (*launch)(void *, uint64_t, aclOpExecutor *, aclrtStream),
                               void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                               aclrtStream stream, uint64_t epoch)
{
    *done = launching_locked(state, hold_mark);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (epoch && epoch != __atomic_load_n(&g_epoch, __ATOMIC_SEQ_CST)) {
        uncount_locked(state); /* kept when a block was marked with it: a later point covers it */
        return ACLPY_SLOW;
    }
    int32_t status = launch(workspace, workspace_size, executor, stream);
    if (status != 0)
        uncount_locked(state);
    return status;
}

EXPORT int32_t aclpyStreamRelaunch(aclpyStreamState *state, int64_t hold_mark, int64_t *done,
                                   int32_t (*launch)(void *, uint64_t, aclOpExecutor *, aclrtStream),
                                   void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                                   aclrtStream stream)
{
    pthread_mutex_lock(&state->lock);
    state->hold_mark = hold_mark;
    int32_t status = relaunch_locked(state, hold_mark, done, launch, workspace, workspace_size, executor, stream, 0);
    pthread_mutex_unlock(&state->lock);
    return status;
}

/* A bound address no array has: a rebind under way, or one that failed. */
#define ADDRESS_UNKNOWN ((void *)(uintptr_t)1)

/* Rebind the arrays whose address in `addresses` differs from the bound one. On a failure
   the record relaunches nothing without its owner's checks again (epoch 0). */
static int32_t relaunch_rebind(aclpyRelaunch *record, void *const *addresses)
{
    for (uint32_t i = 0; i < record->arrays; i++) {
        void *address = addresses[i];
        if (address == record->bound[i])
            continue;
        record->bound[i] = ADDRESS_UNKNOWN; /* until CANN has taken the new one */
        int32_t status = i < record->inputs
            ? record->set_input(record->executor, i, record->tensors[i], address)
            : record->set_output(record->executor, i - record->inputs, record->tensors[i], address);
        if (status != 0) {
            record->failed_rebind = (int32_t)i;
            record->epoch = 0;
            return status;
        }
        record->bound[i] = address;
    }
    return 0;
}

static aclOpExecutor *record_executor(aclpyRelaunch *record)
{
    return __atomic_load_n(&record->executor, __ATOMIC_ACQUIRE);
}

/* The record was launched on `state` at its last counted point: it is in use until then. */
static void record_launched(aclpyRelaunch *record, aclpyStreamState *state)
{
    if (record->last_state != state) {
        state_ref(state);
        state_unref(record->last_state);
        record->last_state = state;
    }
    record->last_point = state->counted;
}

EXPORT int32_t aclpyRelaunchCounted(aclpyRelaunch *record, aclrtStream stream)
{
    if (!record_executor(record))
        return ACLPY_RELAUNCH_RETIRED;
    record->failed_rebind = -1;
    int32_t status = relaunch_rebind(record, record->next);
    if (status != 0)
        return status;
    return record->phase2(record->workspace, record->workspace_size, record->executor, stream);
}

/* A relaunch with `state->lock` held: rebind to `addresses` (NULL: relaunch the bound ones),
   count, launch (`epoch`: see relaunch_locked). */
static int32_t relaunch_run_locked(aclpyRelaunch *record, aclpyStreamState *state, int64_t hold_mark,
                                   int64_t *done, aclrtStream stream, void *const *addresses,
                                   uint64_t epoch)
{
    *done = -1;
    if (!record_executor(record))
        return ACLPY_RELAUNCH_RETIRED;
    record->failed_rebind = -1;
    int32_t status = addresses ? relaunch_rebind(record, addresses) : 0;
    if (status != 0)
        return status;
    status = relaunch_locked(state, hold_mark, done, record->phase2, record->workspace,
                             record->workspace_size, record->executor, stream, epoch);
    if (status == 0)
        record_launched(record, state);
    return status;
}

EXPORT int32_t aclpyRelaunchRun(aclpyRelaunch *record, aclpyStreamState *state, int64_t hold_mark,
                                int64_t *done, aclrtStream stream)
{
    pthread_mutex_lock(&state->lock);
    state->hold_mark = hold_mark;
    int32_t status = relaunch_run_locked(record, state, hold_mark, done, stream, record->next, 0);
    pthread_mutex_unlock(&state->lock);
    return status;
}

/* aclpyRelaunchRun under the state's mutex for a caller without the owner's lock: ACLPY_SLOW
   for a closed stream, a launch of the owner's under way, or a record whose arrays may have
   changed since the owner checked them (read under the mutex, so a free or a move that bumps
   the epoch before it waits on the stream either sees this launch or is seen by it). */
static int32_t relaunch_unowned_locked(aclpyRelaunch *record, aclpyStreamState *state,
                                       int64_t *done, aclrtStream stream)
{
    if (state->closed || state->busy || record->fast_state != state ||
        record->epoch != __atomic_load_n(&g_epoch, __ATOMIC_ACQUIRE))
        return ACLPY_SLOW;
    /* The bound addresses: `next` is the owner's, written under its lock only. */
    return relaunch_run_locked(record, state, state->hold_mark, done, stream, NULL, record->epoch);
}

static int32_t relaunch_unowned(aclpyRelaunch *record, aclpyStreamState *state, int64_t *done,
                                aclrtStream stream)
{
    pthread_mutex_lock(&state->lock);
    int32_t status = relaunch_unowned_locked(record, state, done, stream);
    pthread_mutex_unlock(&state->lock);
    if (status == 0 && *done >= 0)
        return ACLPY_LAUNCHED_FENCE_DONE;
    return status;
}

/* A relaunch over `addresses` (all of the record's arrays) by a caller without the owner's
   lock, whose arrays the owner checked at placement epoch `epoch`: ACLPY_SLOW for a closed
   stream, a launch of the owner's under way, or an epoch that moved on (read under the
   mutex, as relaunch_unowned_locked reads it). */
static int32_t relaunch_at_epoch(aclpyRelaunch *record, aclpyStreamState *state, int64_t *done,
                                 aclrtStream stream, uint64_t epoch, void *const *addresses)
{
    int32_t status = ACLPY_SLOW;
    pthread_mutex_lock(&state->lock);
    if (!state->closed && !state->busy && epoch == __atomic_load_n(&g_epoch, __ATOMIC_ACQUIRE))
        status = relaunch_run_locked(record, state, state->hold_mark, done, stream, addresses, epoch);
    pthread_mutex_unlock(&state->lock);
    if (status == 0 && *done >= 0)
        return ACLPY_LAUNCHED_FENCE_DONE;
    return status;
}

EXPORT int32_t aclpyRepeatNew(aclpyRepeat *repeat, aclpyBlock *block)
{
    aclpyRelaunch *record = repeat->record;
    aclpyStreamState *state = repeat->state;
    if (aclpyPoolAllocateFor(repeat->pool, block, repeat->nbytes, ACL_MEM_MALLOC_HUGE_FIRST,
                             state) != ACL_SUCCESS)
        return ACLPY_SLOW; /* the block stays empty: the owner's allocation recovers or reports */
    uint32_t last = record->arrays - 1;
    void *small[8];
    void **addresses = record->arrays <= 8 ? small : malloc(record->arrays * sizeof *addresses);
    if (!addresses)
        return ACLPY_SLOW;
    memcpy(addresses, repeat->addresses, last * sizeof *addresses);
    addresses[last] = block->pointer;
    int32_t status = relaunch_at_epoch(record, state, &repeat->done, state->stream,
                                       repeat->epoch, addresses);
    if (addresses != small)
        free(addresses);
    return status;
}

EXPORT int32_t aclpyRepeatAgain(aclpyRepeat *repeat)
{
    return relaunch_at_epoch(repeat->record, repeat->state, &repeat->done, repeat->state->stream,
                             repeat->epoch, repeat->addresses);
}

EXPORT int32_t aclpyRelaunchFast(aclpyRelaunch *record)
{
    aclpyStreamState *state = record->fast_state;
    if (!state || !thread_on(state->device))
        return ACLPY_SLOW;
    return relaunch_unowned(record, state, &record->done, state->stream);
}

EXPORT int32_t aclpyRelaunchDone(const aclpyRelaunch *record)
{
    return released_done(record->last_state, record->last_point);
}

EXPORT void aclpyRelaunchCollect(aclpyRelaunch *record)
{
    state_unref(record->last_state);
    record->last_state = NULL;
}

EXPORT aclError aclpyStreamSynchronize(aclpyStreamState *state, aclError (*synchronize)(aclrtStream),
                                       aclrtStream stream, uint64_t point)
{
    aclError status = synchronize(stream);
    raise_completed(state, point);
    return status;
}

/* A wait without the owner's lock, the point taken and `syncing` raised by the caller under
   `state->lock` (which it has let go of): closing waits for it to end. */
static aclError wait_unowned(aclpyStreamState *state, uint64_t point)
{
    aclError status = g_synchronize(state->stream);
    raise_completed(state, point);
    pthread_mutex_lock(&state->lock);
    if (--state->syncing == 0)
        pthread_cond_broadcast(&state->idle);
    pthread_mutex_unlock(&state->lock);
    return status;
}

EXPORT aclError aclpyStreamSynchronizeFast(aclpyStreamState *state)
{
    if (!g_synchronize || !thread_on(state->device))
        return ACLPY_SLOW;
    pthread_mutex_lock(&state->lock);
    if (state->closed || state->busy) {
        pthread_mutex_unlock(&state->lock);
        return ACLPY_SLOW;
    }
    uint64_t point = __atomic_load_n(&state->point, __ATOMIC_ACQUIRE);
    state->syncing++;
    pthread_mutex_unlock(&state->lock);
    return wait_unowned(state, point);
}

/* aclpyRelaunchFastWait's result: the relaunch's status in the low half, the wait's above. */
static int64_t relaunch_waited(int32_t status, int32_t waited)
{
    return (int64_t)(((uint64_t)(uint32_t)waited << 32) | (uint32_t)status);
}

EXPORT int64_t aclpyRelaunchFastWait(aclpyRelaunch *record)
{
    aclpyStreamState *state = record->fast_state;
    if (!state || !g_synchronize || !thread_on(state->device))
        return relaunch_waited(ACLPY_SLOW, ACLPY_SLOW);
    pthread_mutex_lock(&state->lock);
    int64_t done = -1; /* this call's own: the record's is shared by every caller */
    int32_t status = relaunch_unowned_locked(record, state, &done, state->stream);
    uint64_t point = 0;
    if (status == 0) { /* the wait's point, this launch's included; closing waits for it */
        record->done = done;
        point = __atomic_load_n(&state->point, __ATOMIC_ACQUIRE);
        state->syncing++;
    }
    pthread_mutex_unlock(&state->lock);
    if (status != 0)
        return relaunch_waited(status, ACLPY_SLOW);
    return relaunch_waited(done >= 0 ? ACLPY_LAUNCHED_FENCE_DONE : 0, wait_unowned(state, point));
}

EXPORT int32_t aclpyStagedCall(aclpyRelaunch *record, aclpyStreamState *state, const aclpyStagedCopies *copies,
                               void *const *addresses, int32_t *step)
{
    *step = ACLPY_STEP_NONE;
    if (!g_synchronize || !copies->memcpy_async || !thread_on(state->device))
        return ACLPY_SLOW;
    pthread_mutex_lock(&state->lock);
    if (state->closed || state->busy || !record_executor(record)) {
        pthread_mutex_unlock(&state->lock);
        return ACLPY_SLOW;
    }
    aclrtStream stream = state->stream;
    for (uint32_t i = 0; i < copies->count; i++)
        memcpy(copies->targets[i], copies->sources[i], copies->sizes[i]);
    int32_t status = 0;
    if (copies->upload) {
        status = copies->memcpy_async(copies->device_data, copies->upload, copies->host_data, copies->upload,
                                      ACL_MEMCPY_HOST_TO_DEVICE, stream);
        if (status != 0) { /* nothing queued */
            pthread_mutex_unlock(&state->lock);
            *step = ACLPY_STEP_UPLOAD;
            return status;
        }
    }
    int64_t done;
    status = relaunch_run_locked(record, state, state->hold_mark, &done, stream, addresses, 0);
    if (status != 0)
        *step = ACLPY_STEP_LAUNCH;
    else if (copies->result_bytes) {
        status = copies->memcpy_async(copies->result_host, copies->result_bytes, copies->result_device,
                                      copies->result_bytes, ACL_MEMCPY_DEVICE_TO_HOST, stream);
        if (status != 0)
            *step = ACLPY_STEP_DOWNLOAD;
    }
    /* Whatever was queued is waited for before returning: nothing stays queued over the
       staging blocks, which the caller gives back once this returns. */
    uint64_t point = __atomic_load_n(&state->point, __ATOMIC_ACQUIRE);
    state->syncing++;
    pthread_mutex_unlock(&state->lock);
    aclError synced = wait_unowned(state, point);
    if (status != 0)
        return status; /* the first failure is the one reported */
    if (synced != ACL_SUCCESS) {
        *step = ACLPY_STEP_SYNCHRONIZE;
        return synced;
    }
    if (copies->result_bytes)
        memcpy(copies->out, copies->result_host, copies->result_bytes);
    return 0;
}

EXPORT void aclpyStreamClose(aclpyStreamState *state)
{
    pthread_mutex_lock(&state->lock);
    state->closed = 1;
    while (state->syncing)
        pthread_cond_wait(&state->idle, &state->lock);
    pthread_mutex_unlock(&state->lock);
}

EXPORT void aclpyStreamClosed(aclpyStreamState *state)
{
    pthread_mutex_lock(&state->lock);
    state->closed = 1;
    pthread_mutex_unlock(&state->lock);
    __atomic_store_n(&state->completed, POINT_DONE, __ATOMIC_RELEASE);
    for (uint32_t i = 0; i < FENCES; i++) {
        if (state->events[i] && g_destroy_event)
            g_destroy_event(state->events[i]);
        state->events[i] = NULL;
    }
    state->count = 0;
}

EXPORT void aclpyStreamGetStats(aclpyStreamState *state, aclpyStreamStats *stats)
{
    stats->fences_recorded = state->fences_recorded;
    stats->fences_done = state->fences_done;
    stats->point = __atomic_load_n(&state->point, __ATOMIC_ACQUIRE);
    stats->completed = __atomic_load_n(&state->completed, __ATOMIC_ACQUIRE);
}

/* ---- handles ---- */

enum {
    HANDLE_TENSOR = 1,
    HANDLE_EXECUTOR = 2,
    HANDLE_SCALAR = 3,
    HANDLE_INT_ARRAY = 4,
    HANDLE_FLOAT_ARRAY = 5,
    HANDLE_BOOL_ARRAY = 6,
    HANDLE_TENSOR_LIST = 7,
    HANDLE_SCALAR_LIST = 8
};

static int32_t (*g_destroy_tensor)(const aclTensor *);
static int32_t (*g_destroy_executor)(aclOpExecutor *);
static int32_t (*g_destroy_scalar)(const aclScalar *);
static int32_t (*g_destroy_int_array)(const aclIntArray *);
static int32_t (*g_destroy_float_array)(const aclFloatArray *);
static int32_t (*g_destroy_bool_array)(const aclBoolArray *);
static int32_t (*g_destroy_tensor_list)(const aclTensorList *);
static int32_t (*g_destroy_scalar_list)(const aclScalarList *);
static uint64_t g_handle_generation = 1;
static uint64_t g_failed_deletes;
static uint64_t g_undestroyable;

EXPORT void aclpyHandlesConfigure(int32_t (*destroy_tensor)(const aclTensor *),
                                  int32_t (*destroy_executor)(aclOpExecutor *),
                                  int32_t (*destroy_scalar)(const aclScalar *),
                                  int32_t (*destroy_int_array)(const aclIntArray *),
                                  int32_t (*destroy_float_array)(const aclFloatArray *),
                                  int32_t (*destroy_bool_array)(const aclBoolArray *),
                                  int32_t (*destroy_tensor_list)(const aclTensorList *),
                                  int32_t (*destroy_scalar_list)(const aclScalarList *))
{
    __atomic_store_n(&g_destroy_scalar_list, destroy_scalar_list, __ATOMIC_RELEASE);
    __atomic_store_n(&g_destroy_int_array, destroy_int_array, __ATOMIC_RELEASE);
    __atomic_store_n(&g_destroy_float_array, destroy_float_array, __ATOMIC_RELEASE);
    __atomic_store_n(&g_destroy_bool_array, destroy_bool_array, __ATOMIC_RELEASE);
    __atomic_store_n(&g_destroy_tensor_list, destroy_tensor_list, __ATOMIC_RELEASE);
    __atomic_store_n(&g_destroy_tensor, destroy_tensor, __ATOMIC_RELEASE);
    __atomic_store_n(&g_destroy_executor, destroy_executor, __ATOMIC_RELEASE);
    __atomic_store_n(&g_destroy_scalar, destroy_scalar, __ATOMIC_RELEASE);
}

EXPORT uint64_t aclpyHandlesGeneration(void)
{
    return __atomic_load_n(&g_handle_generation, __ATOMIC_ACQUIRE);
}

/* A handle whose kind the loaded CANN cannot destroy (no destroy function) is given up. */
static int32_t undestroyable(void)
{
    __atomic_add_fetch(&g_undestroyable, 1, __ATOMIC_RELAXED);
    return ACL_SUCCESS;
}

/* Destroy handle with the destroy function in the pointer variable fn_var, once set (counted as
 * undestroyable while it is NULL). */
#define DESTROY_WITH(fn_var)                                                           \
    do {                                                                               \
        __typeof__(fn_var) destroy = __atomic_load_n(&(fn_var), __ATOMIC_ACQUIRE);     \
        return destroy ? destroy(handle) : undestroyable();                            \
    } while (0)

static int32_t handle_destroy(int32_t kind, void *handle)
{
    switch (kind) {
    case HANDLE_TENSOR: DESTROY_WITH(g_destroy_tensor);
    case HANDLE_INT_ARRAY: DESTROY_WITH(g_destroy_int_array);
    case HANDLE_SCALAR: DESTROY_WITH(g_destroy_scalar);
    case HANDLE_FLOAT_ARRAY: DESTROY_WITH(g_destroy_float_array);
    case HANDLE_BOOL_ARRAY: DESTROY_WITH(g_destroy_bool_array);
    case HANDLE_TENSOR_LIST: DESTROY_WITH(g_destroy_tensor_list);
    case HANDLE_SCALAR_LIST: DESTROY_WITH(g_destroy_scalar_list);
    default:
        /* NULL on CANN 8.0.RC2, where aclDestroyAclOpExecutor is not usable: an executor whose
           phase 2 never ran is then lost (aclnn_py runs phase 2 right after phase 1 there). */
        DESTROY_WITH(g_destroy_executor);
    }
}

EXPORT int32_t aclpyHandleRelease(aclpyHandle *owned)
{
    void *handle = __atomic_exchange_n(&owned->handle, NULL, __ATOMIC_ACQ_REL);
    if (!handle || owned->generation != aclpyHandlesGeneration())
        return ACL_SUCCESS;
    int32_t status = handle_destroy(owned->kind, handle);
    if (status != ACL_SUCCESS) /* still ours: destroyed again on delete */
        __atomic_store_n(&owned->handle, handle, __ATOMIC_RELEASE);
    return status;
}

EXPORT aclOpExecutor *aclpyHandleTake(aclpyHandle *owned)
{
    /* Taken out first: CANN frees a non-repeatable executor inside phase 2 whatever the outcome
       (hicann/opbase op_executor.cpp), so from here on it is never ours to destroy again. */
    if (owned->kind != HANDLE_EXECUTOR)
        return NULL;
    aclOpExecutor *executor = __atomic_exchange_n(&owned->handle, NULL, __ATOMIC_ACQ_REL);
    if (!executor || owned->generation != aclpyHandlesGeneration())
        return NULL; /* none, or one of a torn-down runtime: nothing to launch */
    return executor;
}

EXPORT int32_t aclpyHandleLaunch(aclpyHandle *owned, aclpyLaunchFunction launch, void *workspace,
                                 uint64_t workspace_size, aclrtStream stream)
{
    aclOpExecutor *executor = aclpyHandleTake(owned);
    if (!executor)
        return ACLNN_ERR_INNER_NULLPTR;
    return launch(workspace, workspace_size, executor, stream);
}

/* Own a handle just made (1), or report that none was (0): stamped with the current generation. */
static int32_t handle_own(aclpyHandle *owned, int32_t kind, void *handle)
{
    if (!handle)
        return 0;
    owned->kind = kind;
    owned->generation = aclpyHandlesGeneration();
    __atomic_store_n(&owned->handle, handle, __ATOMIC_RELEASE);
    return 1;
}

EXPORT int32_t aclpyCreateTensor(aclpyHandle *owned, aclpyCreateTensorFunction create,
                                 const int64_t *viewDims, uint64_t viewDimsNum,
                                 aclDataType dataType, const int64_t *stride, int64_t offset,
                                 aclFormat format, const int64_t *storageDims,
                                 uint64_t storageDimsNum, void *tensorData)
{
    return handle_own(owned, HANDLE_TENSOR, create(viewDims, viewDimsNum, dataType, stride, offset, format,
                                                   storageDims, storageDimsNum, tensorData));
}

EXPORT int32_t aclpyCreateScalar(aclpyHandle *owned, aclpyCreateScalarFunction create, void *value,
                                 aclDataType dataType)
{
    return handle_own(owned, HANDLE_SCALAR, create(value, dataType));
}

EXPORT int32_t aclpyCreateIntArray(aclpyHandle *owned, aclpyCreateIntArrayFunction create,
                                   const int64_t *value, uint64_t size)
{
    return handle_own(owned, HANDLE_INT_ARRAY, create(value, size));
}

EXPORT int32_t aclpyCreateFloatArray(aclpyHandle *owned, aclpyCreateFloatArrayFunction create,
                                     const float *value, uint64_t size)
{
    return handle_own(owned, HANDLE_FLOAT_ARRAY, create(value, size));
}

EXPORT int32_t aclpyCreateBoolArray(aclpyHandle *owned, aclpyCreateBoolArrayFunction create,
                                    const bool *value, uint64_t size)
{
    return handle_own(owned, HANDLE_BOOL_ARRAY, create(value, size));
}

/* The live handles of a list's members, all of `kind` and of this generation, in a new array
   (NULL for an empty list): 1, or -1 when one is not (or out of host memory). */
static int gather_members(aclpyHandle *const *members, uint64_t size, int kind,
                          uint64_t generation, void ***gathered)
{
    *gathered = NULL;
    if (size > SIZE_MAX / sizeof(void *))
        return -1;
    void **items = size ? malloc((size_t)size * sizeof *items) : NULL;
    if (size && !items)
        return -1;
    for (uint64_t i = 0; i < size; i++) {
        items[i] = __atomic_load_n(&members[i]->handle, __ATOMIC_ACQUIRE);
        if (members[i]->kind != kind || members[i]->generation != generation || !items[i]) {
            free(items);
            return -1;
        }
    }
    *gathered = items;
    return 1;
}

/* `owned` takes the list CANN made (0 when it made none); the list destroys its members from
   now on, so their handles let go of them. */
static int32_t own_list(aclpyHandle *owned, int kind, uint64_t generation, void *list,
                        aclpyHandle *const *members, uint64_t size)
{
    if (!list)
        return 0;
    owned->kind = kind;
    owned->generation = generation;
    __atomic_store_n(&owned->handle, list, __ATOMIC_RELEASE);
    for (uint64_t i = 0; i < size; i++)
        __atomic_store_n(&members[i]->handle, NULL, __ATOMIC_RELEASE);
    return 1;
}

EXPORT int32_t aclpyCreateTensorList(aclpyHandle *owned, aclpyCreateTensorListFunction create,
                                     aclpyHandle *const *members, uint64_t size)
{
    uint64_t generation = aclpyHandlesGeneration();
    void **tensors;
    if (gather_members(members, size, HANDLE_TENSOR, generation, &tensors) < 0)
        return -1;
    aclTensorList *list = create((const aclTensor *const *)tensors, size);
    free(tensors);
    return own_list(owned, HANDLE_TENSOR_LIST, generation, list, members, size);
}

EXPORT int32_t aclpyCreateScalarList(aclpyHandle *owned, aclpyCreateScalarListFunction create,
                                     aclpyHandle *const *members, uint64_t size)
{
    uint64_t generation = aclpyHandlesGeneration();
    void **scalars;
    if (gather_members(members, size, HANDLE_SCALAR, generation, &scalars) < 0)
        return -1;
    aclScalarList *list = create((const aclScalar *const *)scalars, size);
    free(scalars);
    return own_list(owned, HANDLE_SCALAR_LIST, generation, list, members, size);
}

EXPORT void aclpyHandleCollect(aclpyHandle *owned)
{
    if (owned->handle && aclpyHandleRelease(owned) != ACL_SUCCESS)
        __atomic_add_fetch(&g_failed_deletes, 1, __ATOMIC_RELAXED);
}

EXPORT void aclpyHandlesAbandon(void)
{
    __atomic_add_fetch(&g_handle_generation, 1, __ATOMIC_ACQ_REL);
}

EXPORT uint64_t aclpyHandlesFailedDeletes(void)
{
    return __atomic_load_n(&g_failed_deletes, __ATOMIC_RELAXED);
}

EXPORT uint64_t aclpyHandlesUndestroyable(void)
{
    return __atomic_load_n(&g_undestroyable, __ATOMIC_RELAXED);
}
