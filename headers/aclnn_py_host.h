/*
 * aclnn_py's own host library (native/host.c, built as aclnn_py/_native/libaclnn_py_host.so).
 * Not part of CANN: it owns device blocks and CANN handles on behalf of Python objects,
 * in C, so that giving them back never runs Python code. A garbage-collection pass, a
 * finaliser or a KeyboardInterrupt can then neither deadlock on a lock nor lose a block
 * half-way: every hand-over below is one C call.
 *
 * The library does not link against CANN: it calls the functions handed to it by
 * aclpyPoolCreate and aclpyHandlesConfigure (the loaded CANN's own).
 *
 * cdef-ready: no preprocessor conditionals, no includes.
 */

/* ---- device memory: a caching pool per device ---- */

typedef struct aclpyPool aclpyPool;

/*
 * What the pools know of one aclrtStream's progress, for stream-ordered reuse (as the
 * caching allocators of PyTorch and CuPy do): a block released while work queued on the
 * stream may still use it goes back to the cache marked with the stream and the stream's
 * current point. Later work on the same stream may have it at once (the stream runs in
 * order); another stream, or host code, only once a point issued after the release is
 * known to be done: a fence (an event recorded on the stream, queried with
 * aclrtQueryEventStatus) or a synchronisation. Made by aclpyStreamStateCreate.
 */
typedef struct aclpyStreamState aclpyStreamState;

/* One block of device memory, owned by the Python object that owns this struct. */
typedef struct {
    void *pointer;        /* device address; NULL while no block is held */
    uint64_t size;        /* bytes of the block (rounded up to 512) */
    aclpyPool *pool;
    uint64_t generation;  /* the pool generation it came from (see aclpyPoolAbandon) */
    aclpyStreamState *stream; /* the stream whose queued work may use it; NULL: none */
} aclpyBlock;

typedef struct {
    uint64_t used_bytes;     /* held by blocks in use */
    uint64_t cached_bytes;   /* kept for reuse, or released and not yet returned to CANN */
    uint64_t cached_blocks;
    uint64_t hits;           /* allocations served from the cache */
    uint64_t misses;         /* allocations that called aclrtMalloc */
    uint64_t failed_frees;   /* aclrtFree calls that failed (those blocks stay cached) */
} aclpyPoolStats;

/*
 * A pool of `device`'s memory. caching != 0 keeps released blocks for reuse (sizes
 * rounded to 512 bytes); caching == 0 returns them to CANN at the next aclpyPoolAllocate,
 * aclpyPoolTrim or aclpyBlockRelease made by a thread with the device current.
 * NULL when out of host memory. Pools live as long as the process.
 */
aclpyPool *aclpyPoolCreate(int32_t device, int32_t caching,
                           aclError (*malloc_fn)(void **, size_t, aclrtMemMallocPolicy),
                           aclError (*free_fn)(void *));

/*
 * A pool of page-locked host memory (aclrtMallocHost / aclrtFreeHost), made and
 * released with `device` current; otherwise as aclpyPoolCreate (its blocks are
 * aclpyBlocks too, and every function below takes it).
 */
aclpyPool *aclpyHostPoolCreate(int32_t device, int32_t caching,
                               aclError (*malloc_host_fn)(void **, size_t),
                               aclError (*free_fn)(void *));

/*
 * Give `block` (holding nothing) at least `nbytes` > 0 bytes: a cached block of the
 * rounded size, else a new one from aclrtMalloc with `policy`. Call with the pool's
 * device current. Returns ACL_SUCCESS or aclrtMalloc's status (block unchanged).
 */
aclError aclpyPoolAllocate(aclpyPool *pool, aclpyBlock *block, uint64_t nbytes,
                           aclrtMemMallocPolicy policy);

/*
 * Give the block back now (to the cache; without caching, to aclrtFree, which needs
 * the device current). Safe to call twice. Returns ACL_SUCCESS or aclrtFree's status
 * (the block then stays with the pool, to be retried by aclpyPoolTrim).
 */
aclError aclpyBlockRelease(aclpyBlock *block);

/*
 * As aclpyPoolAllocate, for work queued on `stream` (NULL: for host code or any stream):
 * a cached block released by work on that same stream is taken at once; one released on
 * another stream only once that stream passed a point issued after its release.
 */
aclError aclpyPoolAllocateFor(aclpyPool *pool, aclpyBlock *block, uint64_t nbytes,
                              aclrtMemMallocPolicy policy, aclpyStreamState *stream);

/* Mark `block` as used by work queued on `stream` (NULL: by none, its work is done). */
void aclpyBlockUse(aclpyBlock *block, aclpyStreamState *stream);

/* ---- streams: fences and points (see aclpyStreamState) ---- */

/*
 * The event functions of the loaded runtime, and its aclrtSynchronizeStream (for
 * aclpyStreamSynchronizeFast); call once before aclpyStreamStateCreate.
 * Either query may be NULL: aclrtQueryEventStatus (ACL_EVENT_RECORDED_STATUS_COMPLETE = 1)
 * is used when the runtime has it, else the deprecated aclrtQueryEvent
 * (ACL_EVENT_STATUS_COMPLETE = 0); with neither, only synchronisations pass points.
 */
void aclpyStreamsConfigure(aclError (*create_event)(aclrtEvent *),
                           aclError (*destroy_event)(aclrtEvent),
                           aclError (*record_event)(aclrtEvent, aclrtStream),
                           aclError (*query_event_status)(aclrtEvent, aclrtEventRecordedStatus *),
                           aclError (*query_event)(aclrtEvent, aclrtEventStatus *),
                           aclError (*synchronize)(aclrtStream));

/* The state of `stream` on `device`; NULL when out of host memory. */
aclpyStreamState *aclpyStreamStateCreate(aclrtStream stream, int32_t device);

/* ffi.gc's destructor: the owner is gone; blocks still marked with the state keep it. */
void aclpyStreamStateCollect(aclpyStreamState *state);

/*
 * Right before work is queued on the stream (the device current, under the queueing lock of
 * its owner): records a fence after the work queued so far, every few launches or at once
 * when a released block waits for one; counts the coming launch; looks at the oldest fences.
 * `hold_mark` is the owner's count of what it holds for the work queued so far. Returns the
 * hold mark of the newest fence found done since the last call, or -1.
 */
int64_t aclpyStreamLaunching(aclpyStreamState *state, int64_t hold_mark);

/* The launch just counted by aclpyStreamLaunching queued nothing (it failed first): take the
   count back, unless a block was marked with it meanwhile (then a later point covers it). */
void aclpyStreamUncount(aclpyStreamState *state);

/* The point of every launch counted so far, taken (under the queueing lock) right before a
   synchronisation... */
uint64_t aclpyStreamSyncPoint(aclpyStreamState *state);

/* ...and, once it succeeded, passed: the work queued before it is done. */
void aclpyStreamSynced(aclpyStreamState *state, uint64_t point);

/*
 * One launch of phase 2 on a repeatable executor, as one step: aclpyStreamLaunching (its
 * result in *done), then `launch(workspace, workspace_size, executor, stream)`, then, when the
 * launch failed, aclpyStreamUncount. Returns launch's status. Called under the owner's
 * queueing lock, like aclpyStreamLaunching.
 */
int32_t aclpyStreamRelaunch(aclpyStreamState *state, int64_t hold_mark, int64_t *done,
                            int32_t (*launch)(void *, uint64_t, aclOpExecutor *, aclrtStream),
                            void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                            aclrtStream stream);

/*
 * What a relaunch of one repeatable executor needs, kept in C (engine.launch.RepeatableLaunch
 * owns it, made by ffi.new, and the executor, aclTensors and workspace it points to):
 * `arrays` device arrays, the first `inputs` of them inputs, each with its aclTensor and the
 * address the executor has (one no array has, while a rebind is under way or failed).
 * `next` is where the caller puts this launch's addresses before aclpyRelaunchRun.
 * `executor` NULL: retired, launches are refused.
 */
typedef struct {
    aclOpExecutor *executor;
    int32_t (*phase2)(void *, uint64_t, aclOpExecutor *, aclrtStream);
    aclnnStatus (*set_input)(aclOpExecutor *, const size_t, aclTensor *, void *);
    aclnnStatus (*set_output)(aclOpExecutor *, const size_t, aclTensor *, void *);
    void *workspace;
    uint64_t workspace_size;
    uint32_t arrays, inputs;
    aclTensor **tensors;
    void **bound;
    void **next;
    int32_t failed_rebind;   /* the array index whose rebind failed last, else -1 */
    /* aclpyRelaunchFast launches only on `fast_state`'s stream, while aclpyEpoch() is still
       `epoch`: the owner checked its arrays (live, used on that stream) at that epoch. */
    uint64_t epoch;
    aclpyStreamState *fast_state;
    int64_t done;            /* aclpyRelaunchFast's hold mark of fences found done */
    /* The stream state and point of the last launch (a reference on the state): the
       record's executor, aclTensors and workspace are in use until that point passed. */
    aclpyStreamState *last_state;
    uint64_t last_point;
} aclpyRelaunch;

/*
 * What the relaunch calls return besides CANN's statuses: a retired record (nothing counted
 * or queued); a call that must go through the owner's queueing lock instead (nothing
 * counted or queued: the thread's current device, the epoch, or the stream's state asks for
 * the owner's checks); a launch that was queued and found fences done (*done says up to
 * which hold mark).
 */
enum { ACLPY_RELAUNCH_RETIRED = -1, ACLPY_SLOW = -2, ACLPY_LAUNCHED_FENCE_DONE = -3 };

/*
 * One relaunch as one step, under the owner's queueing lock like aclpyStreamLaunching:
 * each address in `next` that differs from the bound one is rebound (aclSetInputTensorAddr
 * or aclSetOutputTensorAddr; on failure nothing is counted or queued, failed_rebind names
 * the array and the status is returned), then aclpyStreamLaunching (its result in *done),
 * then phase 2 on `stream` (a failure takes the count back). Returns the status of the
 * step that failed, ACLPY_RELAUNCH_RETIRED for a retired record, else 0.
 */
int32_t aclpyRelaunchRun(aclpyRelaunch *record, aclpyStreamState *state, int64_t hold_mark,
                         int64_t *done, aclrtStream stream);

/*
 * aclpyRelaunchRun without the owner's queueing lock, for a record whose arrays did not
 * change since the owner checked them (record->epoch), on the stream of record->fast_state
 * (NULL: none yet), its fence mark in record->done: ACLPY_SLOW
 * (nothing counted or queued) unless the calling thread has the stream's device current
 * (aclpyThreadDevice, this runtime generation), and, under the state's mutex, the stream is
 * open with no launch of the owner's under way, it is `fast_state`'s and no array may have
 * moved or been freed since (aclpyEpoch(), bumped before the wait that a move or a free
 * makes). Then relaunches the bound addresses (`next`, written under the owner's lock, is not
 * read), counting the launch (a fence's hold mark is
 * the owner's last one). Returns 0, ACLPY_LAUNCHED_FENCE_DONE (with *done), ACLPY_SLOW,
 * ACLPY_RELAUNCH_RETIRED or the failing status.
 */
int32_t aclpyRelaunchFast(aclpyRelaunch *record);

/*
 * aclpyRelaunchFast, then, once the launch is queued, the wait of aclpyStreamSynchronizeFast
 * on the same stream up to a point that includes it, taken under the same hold of the state's
 * mutex: a repeated run and its synchronisation in one call. Returns both statuses in one
 * value, so that callers racing on one record each get their own: what aclpyRelaunchFast
 * returns in the low 32 bits, and above them the wait's status (ACLPY_SLOW when it did not
 * wait: the relaunch declined or failed). 0: launched and waited for.
 */
int64_t aclpyRelaunchFastWait(aclpyRelaunch *record);

/*
 * A repeated one-shot launch without the owner's queueing lock, with everything it needs
 * in one record (engine.launch_cache owns it, made by ffi.new, and keeps alive what it
 * points to): the relaunch record, the stream it runs on (`state`, whose stream it is),
 * the placement epoch at which the owner checked its arrays and marked them as used on
 * that stream, their `addresses` (every array, inputs then outputs; the inputs only when
 * the output is a new block), the `pool` and size of that new output, and the hold mark of
 * the fences a launch found done.
 */
typedef struct {
    aclpyRelaunch *record;
    aclpyStreamState *state;
    uint64_t epoch;
    void *const *addresses;
    aclpyPool *pool;
    uint64_t nbytes;
    int64_t done;
} aclpyRepeat;

/*
 * A repeat with a new result: fill the empty `block` from the repeat's pool (`nbytes`,
 * marked as used on its stream), then aclpyRelaunchRun over the repeat's input addresses
 * and the block as the output. ACLPY_SLOW (nothing counted or queued) when the pool cannot
 * give the block at once (it stays empty), or when, under the state's mutex, the stream is
 * closed, a launch of the owner's is under way, or the epoch moved on (an array may have
 * been freed or moved since: a free or a move bumps it before its wait, so that wait either
 * sees this launch or this call declines); the block then stays filled, for the owner's own
 * launch. Otherwise rebinds (the record's `next` stays the owner's), counts and launches.
 * Returns 0, ACLPY_LAUNCHED_FENCE_DONE (with repeat->done), ACLPY_SLOW,
 * ACLPY_RELAUNCH_RETIRED or the failing status.
 */
int32_t aclpyRepeatNew(aclpyRepeat *repeat, aclpyBlock *block);

/*
 * A repeat into arrays the caller gave: as aclpyRepeatNew, over the repeat's addresses of
 * every array and with no block to fill. Returns 0, ACLPY_LAUNCHED_FENCE_DONE (with
 * repeat->done), ACLPY_SLOW (nothing counted or queued), ACLPY_RELAUNCH_RETIRED or the
 * failing status.
 */
int32_t aclpyRepeatAgain(aclpyRepeat *repeat);

/* Whether the record's last launch is known done (or it never launched). */
int32_t aclpyRelaunchDone(const aclpyRelaunch *record);

/* ffi.gc's destructor of a record: lets go of its last stream state. */
void aclpyRelaunchCollect(aclpyRelaunch *record);

/* The epoch of arrays' placement: bumped (aclpyEpochBump) whenever an array may have left the
   stream it was used on, or was freed. */
uint64_t aclpyEpoch(void);
void aclpyEpochBump(void);
/* Where the epoch is kept, for a caller that reads it without a call. */
const uint64_t *aclpyEpochCell(void);

/* The owner queued (or failed to queue) the launch counted by aclpyStreamLaunching. */
void aclpyStreamLaunched(aclpyStreamState *state);

/*
 * aclpyStreamSynchronize of the state's stream (with the runtime's aclrtSynchronizeStream given
 * to aclpyStreamsConfigure), without the owner's queueing lock: ACLPY_SLOW (nothing done) unless
 * the calling thread has the stream's device current and the stream is open with no launch of
 * the owner's under way; else takes the point under the state's mutex and waits.
 */
aclError aclpyStreamSynchronizeFast(aclpyStreamState *state);

/* Which step of aclpyStagedCall failed. */
#define ACLPY_STEP_NONE 0
#define ACLPY_STEP_UPLOAD 1       /* aclrtMemcpyAsync of the inputs */
#define ACLPY_STEP_LAUNCH 2       /* a rebind or the phase 2 (see the record's failed_rebind) */
#define ACLPY_STEP_DOWNLOAD 3     /* aclrtMemcpyAsync of the result */
#define ACLPY_STEP_SYNCHRONIZE 4  /* aclrtSynchronizeStream */

/* The copies of one staged call (aclpyStagedCall). */
typedef struct {
    aclError (*memcpy_async)(void *, size_t, const void *, size_t, aclrtMemcpyKind, aclrtStream);
    void *const *sources;   /* `count` contiguous host inputs ... */
    void *const *targets;   /* ... copied to these places of the page-locked block ... */
    const uint64_t *sizes;  /* ... of these sizes */
    uint32_t count;
    void *host_data;        /* the staging blocks: the first `upload` bytes go up */
    void *device_data;
    uint64_t upload;
    void *result_host;      /* the result comes down from `result_device` to `result_host` */
    void *result_device;
    uint64_t result_bytes;  /* 0: no result to bring back */
    void *out;              /* where the result is copied once all succeeded */
} aclpyStagedCopies;

/*
 * One staged call of the numpy path over a repeatable executor, without the owner's lock:
 * ACLPY_SLOW (nothing done) unless the calling thread has the stream's device current and,
 * under the state's mutex, the stream is open, no launch of the owner's is under way and the
 * record is not retired. Then, under the mutex: copies the inputs into the host block, the
 * upload (aclrtMemcpyAsync), the relaunch over `addresses` (rebinds, counted, phase 2) and
 * the download; then waits for the stream (the point taken under the mutex, as
 * aclpyStreamSynchronizeFast) whatever failed after the upload was queued, so nothing stays
 * queued over the staging blocks; then, when all succeeded, copies the result to `out`.
 * Returns 0, ACLPY_SLOW or the first failing status, with *step saying which step failed.
 */
int32_t aclpyStagedCall(aclpyRelaunch *record, aclpyStreamState *state, const aclpyStagedCopies *copies,
                        void *const *addresses, int32_t *step);

/* From now on nothing launches or waits without the owner's lock; returns once the waits
   under way without it ended. */
void aclpyStreamClose(aclpyStreamState *state);

/* aclpyRelaunchRun's rebinds and launch for a launch its caller counted already (with
   aclpyStreamLaunching, and takes back with aclpyStreamUncount when this fails). */
int32_t aclpyRelaunchCounted(aclpyRelaunch *record, aclrtStream stream);

/* `synchronize(stream)` (aclrtSynchronizeStream), then aclpyStreamSynced(state, point) whatever
   its outcome (a failed synchronisation ends the queued work too). Returns its status. */
aclError aclpyStreamSynchronize(aclpyStreamState *state, aclError (*synchronize)(aclrtStream),
                                aclrtStream stream, uint64_t point);

/* The stream is destroyed (its work ran or was dropped): every block marked with it is free;
   its fence events are destroyed (the device current). */
void aclpyStreamClosed(aclpyStreamState *state);

typedef struct {
    uint64_t fences_recorded;   /* events recorded as fences */
    uint64_t fences_done;       /* fences found done by a query */
    uint64_t point;             /* the last point issued */
    uint64_t completed;         /* the last point known done */
} aclpyStreamStats;

void aclpyStreamGetStats(aclpyStreamState *state, aclpyStreamStats *stats);

/* ffi.gc's destructor of a block cell: release a held block (to the cache; without
   caching, to aclrtFree when the calling thread has the pool's device current, else to
   the list returned to CANN at the pool's next allocation or trim). Never fails. */
void aclpyBlockCollect(aclpyBlock *block);

/* Tell the library which device aclnn_py made current in the calling thread. */
void aclpyThreadDevice(int32_t device);

/*
 * Return every cached block to CANN (aclrtFree; call with the device current).
 * Blocks whose aclrtFree fails stay cached; the first failing status is returned
 * (ACL_SUCCESS when all went). *freed_bytes and *kept_blocks may be NULL.
 */
aclError aclpyPoolTrim(aclpyPool *pool, uint64_t *freed_bytes, uint64_t *kept_blocks);

void aclpyPoolGetStats(aclpyPool *pool, aclpyPoolStats *stats);

/*
 * The device's memory is gone (runtime torn down): forget the cache and the counts.
 * Blocks handed out before are ignored when they come back.
 */
void aclpyPoolAbandon(aclpyPool *pool);

/* ---- staging: the blocks of one call of the numpy path ---- */

/* A page-locked host block and a device block owned together (either may be empty). */
typedef struct {
    aclpyBlock host;
    aclpyBlock device;
    char *host_data;      /* host.pointer while held, for offsets; NULL for none */
    char *device_data;    /* device.pointer while held */
    int32_t failed;       /* after aclpyStagingTake: 0, or 1 (host) / 2 (device) for the
                             allocation that failed */
} aclpyStaging;

/*
 * Fill `staging` with `host_bytes` from `host_pool` and `device_bytes` from `device_pool` in
 * one step (a size of 0, or a block already held, takes nothing). Returns ACL_SUCCESS, or the
 * failing allocation's status (see `failed`); a block taken before the failure stays held.
 */
aclError aclpyStagingTake(aclpyStaging *staging, aclpyPool *host_pool, uint64_t host_bytes,
                          aclpyPool *device_pool, uint64_t device_bytes);

/* ffi.gc's destructor of a staging cell: both blocks go back as aclpyBlockCollect returns
   them. Never fails. */
void aclpyStagingCollect(aclpyStaging *staging);

/* ---- CANN handles that need no device context to destroy ---- */

typedef struct {
    void *handle;         /* aclTensor *, aclOpExecutor *, aclScalar *, aclIntArray *,
                             aclFloatArray *, aclBoolArray *, aclTensorList * or
                             aclScalarList *; NULL once destroyed (or, for a tensor or a
                             scalar, once handed to a list) */
    int32_t kind;         /* 1: aclTensor (aclDestroyTensor), 2: aclOpExecutor, 3: aclScalar,
                             4: aclIntArray, 5: aclFloatArray, 6: aclBoolArray,
                             7: aclTensorList (aclDestroyTensorList, which destroys its
                             tensors too), 8: aclScalarList (aclDestroyScalarList, which
                             destroys its scalars too) */
    uint64_t generation;  /* handle generation it was made in (see aclpyHandlesAbandon) */
} aclpyHandle;

/* The destroy functions of the loaded libraries; call once before any handle. Any may be
   NULL when the loaded CANN lacks it (aclDestroyAclOpExecutor is not usable in CANN 8.0.RC2):
   a handle of that kind is then given up, not destroyed, when released (see
   aclpyHandlesUndestroyable). */
void aclpyHandlesConfigure(int32_t (*destroy_tensor)(const aclTensor *),
                           int32_t (*destroy_executor)(aclOpExecutor *),
                           int32_t (*destroy_scalar)(const aclScalar *),
                           int32_t (*destroy_int_array)(const aclIntArray *),
                           int32_t (*destroy_float_array)(const aclFloatArray *),
                           int32_t (*destroy_bool_array)(const aclBoolArray *),
                           int32_t (*destroy_tensor_list)(const aclTensorList *),
                           int32_t (*destroy_scalar_list)(const aclScalarList *));

/* The current handle generation: store it in each new aclpyHandle. */
uint64_t aclpyHandlesGeneration(void);

/* Destroy the handle now, once; on failure it stays owned (retried on delete). */
int32_t aclpyHandleRelease(aclpyHandle *handle);

typedef aclTensor *(*aclpyCreateTensorFunction)(const int64_t *, uint64_t, aclDataType,
                                                 const int64_t *, int64_t, aclFormat,
                                                 const int64_t *, uint64_t, void *);

/* Call `create` (the loaded aclCreateTensor) and store the tensor straight into the empty
   `owned`, so it is owned the moment it exists. Returns 1, or 0 when `create` gave NULL. */
int32_t aclpyCreateTensor(aclpyHandle *owned, aclpyCreateTensorFunction create,
                          const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                          const int64_t *stride, int64_t offset, aclFormat format,
                          const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData);

typedef aclScalar *(*aclpyCreateScalarFunction)(void *, aclDataType);

/* Call `create` (the loaded aclCreateScalar) on the value at `value` of `dataType` and store
   the scalar straight into the empty `owned`. Returns 1, or 0 when `create` gave NULL. */
int32_t aclpyCreateScalar(aclpyHandle *owned, aclpyCreateScalarFunction create, void *value,
                          aclDataType dataType);

typedef aclIntArray *(*aclpyCreateIntArrayFunction)(const int64_t *, uint64_t);

/* Call `create` (the loaded aclCreateIntArray) and store the array straight into the empty
   `owned`. Returns 1, or 0 when `create` gave NULL. */
int32_t aclpyCreateIntArray(aclpyHandle *owned, aclpyCreateIntArrayFunction create,
                            const int64_t *value, uint64_t size);

typedef aclFloatArray *(*aclpyCreateFloatArrayFunction)(const float *, uint64_t);

/* Call `create` (the loaded aclCreateFloatArray) and store the array straight into the empty
   `owned`. Returns 1, or 0 when `create` gave NULL. */
int32_t aclpyCreateFloatArray(aclpyHandle *owned, aclpyCreateFloatArrayFunction create,
                              const float *value, uint64_t size);

typedef aclBoolArray *(*aclpyCreateBoolArrayFunction)(const bool *, uint64_t);

/* Call `create` (the loaded aclCreateBoolArray) and store the array straight into the empty
   `owned`. Returns 1, or 0 when `create` gave NULL. */
int32_t aclpyCreateBoolArray(aclpyHandle *owned, aclpyCreateBoolArrayFunction create,
                             const bool *value, uint64_t size);

typedef aclTensorList *(*aclpyCreateTensorListFunction)(const aclTensor *const *, uint64_t);

/*
 * Call `create` (the loaded aclCreateTensorList) on the tensors the `size` handles `members`
 * hold and store the list straight into the empty `owned`. CANN's list owns its tensors from
 * then on (aclDestroyTensorList destroys them), so on success each member handle is emptied in
 * the same call; on failure they stay owned by their handles. Returns 1; 0 when `create` gave
 * NULL; -1, calling nothing, when a member is not a tensor handle of the current generation
 * holding a tensor, or when out of host memory.
 */
int32_t aclpyCreateTensorList(aclpyHandle *owned, aclpyCreateTensorListFunction create,
                              aclpyHandle *const *members, uint64_t size);

typedef aclScalarList *(*aclpyCreateScalarListFunction)(const aclScalar *const *, uint64_t);

/* As aclpyCreateTensorList, for `create` (the loaded aclCreateScalarList) on the scalars the
   `size` handles `members` hold (aclDestroyScalarList destroys them). */
int32_t aclpyCreateScalarList(aclpyHandle *owned, aclpyCreateScalarListFunction create,
                              aclpyHandle *const *members, uint64_t size);

typedef int32_t (*aclpyLaunchFunction)(void *, uint64_t, aclOpExecutor *, aclrtStream);

/*
 * Phase 2 (`launch`, the loaded aclnnXxx) on the non-repeatable executor `owned` holds. CANN
 * frees such an executor inside phase 2, whether it succeeds or not, so the handle is taken out
 * of `owned` in the same call: it is launched once and never destroyed afterwards. Returns
 * launch's status, or 561103 (ACLNN_ERR_INNER_NULLPTR) when `owned` holds no executor of the
 * current handle generation (nothing is launched).
 */
int32_t aclpyHandleLaunch(aclpyHandle *owned, aclpyLaunchFunction launch, void *workspace,
                          uint64_t workspace_size, aclrtStream stream);

/*
 * The non-repeatable executor `owned` holds, taken out of it for a phase 2 the caller makes
 * itself (one with parameters besides the usual four, which `launch` cannot be): from then on
 * it is launched once and never destroyed by aclnn_py. NULL when `owned` holds no executor of
 * the current handle generation.
 */
aclOpExecutor *aclpyHandleTake(aclpyHandle *owned);

/* ffi.gc's destructor of a handle cell: destroy a handle still held. */
void aclpyHandleCollect(aclpyHandle *handle);

/* The runtime was torn down: handles made before are no longer destroyed. */
void aclpyHandlesAbandon(void);

/* This process is a child forked from one whose runtime aclnn_py had started: the parent's
 * blocks and handles are left as they are (no pool lock is taken for them: another thread
 * of the parent may have held one at the fork), and nothing is destroyed. */
void aclpyForked(void);

/* Handle destroys made by aclpyHandleCollect that failed, since load. */
uint64_t aclpyHandlesFailedDeletes(void);

/* Handles given up since load because the loaded CANN has no destroy function for their kind
   (each is leaked: an executor whose phase 2 never ran, on CANN 8.0.RC2). */
uint64_t aclpyHandlesUndestroyable(void);
