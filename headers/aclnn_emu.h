/*
 * The aclnn_py host emulator's own API: introspection and fault injection.
 * Not part of CANN; exported only by the emulator's libraries, so a real CANN
 * install never resolves these names.
 *
 * cdef-ready: no preprocessor conditionals, no includes.
 */

typedef struct {
    int64_t live_device_bytes;   /* bytes held by live aclrtMalloc allocations, all devices */
    int64_t peak_device_bytes;
    int64_t live_allocations;    /* live aclrtMalloc allocations */
    int64_t live_host_allocations; /* live aclrtMallocHost allocations */
    int64_t live_tensors;        /* aclTensor descriptors not yet destroyed */
    int64_t live_executors;      /* executors neither consumed by a launch nor destroyed */
    int64_t live_streams;        /* explicit streams not yet destroyed */
    int64_t live_events;
    int64_t live_contexts;       /* explicit contexts not yet destroyed */
    int64_t pending_tasks;       /* launched work not yet executed, all streams */
    int64_t h2d_bytes;           /* host to device bytes copied since load or reset */
    int64_t d2h_bytes;
    int64_t d2d_bytes;
    int64_t malloc_calls;        /* successful aclrtMalloc calls since load or reset */
    int64_t kernel_launches;     /* operator launches accepted since load or reset */
    int64_t kernels_executed;
    int64_t quarantined_allocations; /* freed device blocks whose addresses are not handed out yet */
    int64_t quarantined_bytes;   /* their requested bytes (not counted as used device memory) */
    int64_t live_scalars;        /* aclScalar objects not yet destroyed */
    int64_t live_int_arrays;     /* aclIntArray objects not yet destroyed */
    int64_t live_float_arrays;   /* aclFloatArray objects not yet destroyed */
    int64_t live_bool_arrays;    /* aclBoolArray objects not yet destroyed */
    int64_t live_tensor_lists;   /* aclTensorList objects not yet destroyed (their tensors count
                                    in live_tensors until then) */
    int64_t cached_executors;    /* phase-1 executors handed out from the modelled aclnn executor
                                    cache (ACLNN_EMU_OP_CACHE=1) since load or reset */
    int64_t memcpy_calls;        /* aclrtMemcpy and aclrtMemcpyAsync calls, any kind, since load
                                    or reset */
    int64_t sync_calls;          /* aclrtSynchronizeStream(WithTimeout), aclrtSynchronizeEvent and
                                    aclrtSynchronizeDevice calls since load or reset */
} aclemuStats;

/* Fill *stats. Returns 0, or 100000 when stats is NULL. */
int32_t aclemuGetStats(aclemuStats *stats);

/* One visible device's share of the traffic counters, since load or reset. */
typedef struct {
    int64_t h2d_bytes;           /* host to device bytes copied with this device current */
    int64_t d2h_bytes;
    int64_t kernels_executed;    /* operator kernels run on this device's memory */
} aclemuDeviceStats;

/* Fill *stats for visible device deviceId. Returns 0, or 100000 when stats is NULL or
   deviceId is not a visible device. */
int32_t aclemuGetDeviceStats(int32_t deviceId, aclemuDeviceStats *stats);

/* Zero the since-reset counters (bytes copied, calls, launches, copies, synchronisations). */
int32_t aclemuResetCounters(void);

/*
 * Make the nth call from now (1 = the next one) of the API named `api`
 * (e.g. "aclrtMalloc", "aclnnMseLossBackwardGetWorkspaceSize") fail with
 * `status` before doing anything; the failure records an error message like a
 * real one. A NULL-returning API (aclCreateTensor) returns NULL instead.
 * Several faults may be armed at once. Returns 0, or 100000 for bad arguments
 * or an API the emulator does not implement (see aclemuGetFaultApis).
 */
int32_t aclemuInjectFault(const char *api, int64_t nth, int32_t status);

/* Disarm every armed fault and forget the fired ones. */
int32_t aclemuClearFaults(void);

/* One fault armed by aclemuInjectFault, as aclemuGetFaults lists it. */
typedef struct {
    char api[64];                /* NUL-terminated API name */
    int64_t nth;                 /* as armed: the nth call from arming fails */
    int32_t status;              /* the status the failing call returns */
    int64_t remaining;           /* calls still to go until it fires; 0 once fired */
    int64_t fired;               /* 1 once fired, else 0 */
} aclemuFault;

/*
 * List the faults armed since the last aclemuClearFaults, in arming order,
 * fired ones included (they stay listed until aclemuClearFaults). Writes at
 * most `capacity` entries to `faults` (which may be NULL when capacity is 0)
 * and the number of faults listed to *count (possibly more than capacity).
 * Returns 0, or 100000 for bad arguments.
 */
int32_t aclemuGetFaults(aclemuFault *faults, int64_t capacity, int64_t *count);

/*
 * The names aclemuInjectFault accepts: every CANN API the emulator's
 * libraries export. Writes at most `capacity` pointers to static,
 * NUL-terminated names to `names` (NULL when capacity is 0) and their number
 * to *count. Returns 0, or 100000 for bad arguments.
 */
int32_t aclemuGetFaultApis(const char **names, int64_t capacity, int64_t *count);
