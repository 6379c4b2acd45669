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

/*
 * ---- kernels computed outside the emulator (aclnn_py's Python kernels) ----
 *
 * Every operator the emulator's trees declare is exported with its real prototype; those
 * without a kernel of the emulator's own refuse phase 1 with 561003
 * (ACLNN_ERR_INNER_FIND_KERNEL_ERROR) unless a kernel handler was set and the operator
 * registered for it. The handler is then called twice per call: at phase 1 (phase 1) to check
 * the arguments, and when the launch runs on its stream (phase 2) to compute. One call's
 * arguments, in the operator's parameter order (workspaceSize and executor left out):
 */
typedef enum {
    ACLEMU_ARG_TENSOR = 1,
    ACLEMU_ARG_TENSOR_LIST = 2,
    ACLEMU_ARG_SCALAR = 3,
    ACLEMU_ARG_INT_ARRAY = 4,
    ACLEMU_ARG_BOOL_ARRAY = 5,
    ACLEMU_ARG_FLOAT_ARRAY = 6,
    ACLEMU_ARG_STRING = 7,       /* char * */
    ACLEMU_ARG_INTEGER = 8,      /* any integer type, aclDataType included */
    ACLEMU_ARG_BOOL = 9,
    ACLEMU_ARG_REAL = 10,        /* float or double */
    ACLEMU_ARG_SCALAR_LIST = 11  /* aclScalarList: its scalars as members of kind 3 */
} aclemuArgKind;

typedef struct aclemuKernelArg aclemuKernelArg;
struct aclemuKernelArg {
    int32_t kind;            /* aclemuArgKind */
    int32_t present;         /* 0 for a NULL pointer argument (an optional one left out) */
    /* kind 1, and each member of a tensor list: */
    void *data;              /* the storage base (device address; host memory on the emulator) */
    int32_t dtype;           /* aclDataType */
    int32_t format;          /* aclFormat */
    uint64_t ndim;
    const int64_t *dims;
    const int64_t *strides;  /* in elements */
    int64_t offset;          /* in elements, from data */
    uint64_t storage_bytes;  /* bytes from data that the view may touch */
    /* kind 2 (tensors, kind 1) and kind 11 (scalars, kind 3): */
    const aclemuKernelArg *members;
    /* kinds 2, 4, 5, 6, 7, 11: the number of members, values or bytes */
    uint64_t length;
    const int64_t *integers; /* kind 4 */
    const uint8_t *bools;    /* kind 5 */
    const double *reals;     /* kind 6 */
    const char *string;      /* kind 7, NUL-terminated */
    int64_t integer;         /* kinds 8 and 9 (0 or 1) */
    double real;             /* kinds 3 (the scalar's value; 64-bit integers beyond 2^53
                                rounded: scalar_bytes has it exactly) and 10 */
    int32_t scalar_dtype;    /* kind 3: the aclScalar's aclDataType */
    char role;               /* 'i' read, 'o' written (an output), 'u' updated in place */
    /* kind 3: the scalar's value exactly, in the host's representation of scalar_dtype (its
       size of bytes; bool one byte, 0 or 1; the 8-, 6- and 4-bit floats one byte) */
    const uint8_t *scalar_bytes;
    /* kind 1 with role 'o', at phase 2 (else NULL): where the kernel of an operator whose output
       size depends on the data (aclnnMaskedSelect) reports the output's real extent: it sets
       *view_ndim (-1 until then: the shape stays) and view_dims[0 .. *view_ndim), at most 8
       dims and no more elements than the tensor has. Once the kernel returned, the output's
       aclTensor takes that view shape (aclGetViewShape reads it), as CANN's do after the
       launch. */
    int64_t *view_ndim;
    int64_t *view_dims;
};

/*
 * The handler: `op` is the operator's name ("aclnnSoftmax"), `phase` 1 or 2. Returns 0, or
 * the status to fail with (at phase 1 the status phase 1 returns, e.g. 161002; at phase 2 the
 * launch's work fails with it and the stream's next synchronisation reports it), after writing
 * a message into `message` (at most message_size bytes, NUL-terminated).
 *
 * At phase 2, ACL_ERROR_RT_STREAM_ABORT (107023) says that the kernel was interrupted (a
 * Ctrl-C): its stream's work is then aborted as aclrtStreamAbort aborts it (hicann/runtime
 * docs/api_docs/aclrtStreamAbort.md): the tasks queued after it are dropped unrun, and the call
 * that ran the kernel returns 107023 -- a synchronisation, or the call that queued a task past
 * the queue's depth (the task it queued is dropped too). A synchronisation that was waiting
 * for that work in another thread returns 107023 as well. The stream then works as before.
 */
typedef int32_t (*aclemuKernelHandler)(const char *op, int32_t phase, const aclemuKernelArg *args,
                                       int32_t count, char *message, uint64_t message_size);

/* Set (or, with NULL, remove) the handler. Returns 0. */
int32_t aclemuSetKernelHandler(aclemuKernelHandler handler);

/* Have the handler compute `op` (computed 1) or not (0). Returns 0, or 100000 when op is NULL or
   longer than 127 bytes. */
int32_t aclemuRegisterKernel(const char *op, int32_t computed);

/* How many operators the handler computes; their names into names[0 .. capacity) (each pointer
   valid until the next aclemuRegisterKernel). Returns 0, or 100000 when count is NULL. */
int32_t aclemuGetRegisteredKernels(const char **names, int64_t capacity, int64_t *count);

/*
 * ---- operators no library here exports ----
 *
 * A custom operator package may declare an operator before its libcust_opapi.so is built. Its
 * two phases are then these, the operator described by its name and parameters (in order,
 * workspaceSize and executor left out), and it is computed by the kernel handler as the
 * emulator's own generic operators are (phase 1 fails with 561003 when the operator is not
 * registered with aclemuRegisterKernel), with the same checks and statuses.
 */
typedef struct {
    const char *name;   /* the C parameter name */
    int32_t kind;       /* aclemuArgKind */
    char role;          /* 'i' read, 'o' written (an output), 'u' updated in place */
    char optional;      /* 1 when the argument may be NULL */
} aclemuGenericParam;

/* One argument: kinds 1 to 7 and 11 in pointer (NULL for one left out), 8 and 9 in integer,
   10 in real. */
typedef struct {
    const void *pointer;
    int64_t integer;
    double real;
} aclemuGenericValue;

/* Phase 1. 161001 for a NULL op, params or values (count > 0), workspaceSize or executor;
   161002 for a bad description (op not "aclnn<Name>" of at most 127 bytes, count outside
   [0, 256], a parameter without a name, an unknown kind or role, a written parameter that
   is not a tensor or tensor list). */
aclnnStatus aclemuGenericGetWorkspaceSize(const char *op, int32_t count,
                                          const aclemuGenericParam *params,
                                          const aclemuGenericValue *values,
                                          uint64_t *workspaceSize, aclOpExecutor **executor);

/* Phase 2, for an executor of aclemuGenericGetWorkspaceSize. */
aclnnStatus aclemuGenericRun(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                             aclrtStream stream);
