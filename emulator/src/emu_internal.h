/*
 * Internal interface of the aclnn_py host emulator.
 *
 * Three library families, as in CANN, each exporting one header family:
 *   libascendcl.so  (rt_*.c)     acl*, aclrt* + aclemu* + the emu_ runtime services below;
 *   (libacl_rt.so from 8.5)      holds all runtime state and every counter.
 *   libnnopbase.so  (meta.c)     aclCreateTensor & co, executors, aclnnInit; needs the runtime.
 *   libopapi.so     (ops_core.c, ops_registry.c, op_*.c)  the aclnn operators (see ops_core.h:
 *                                one file per operator, one entry each in
 *                                aclnn_py/data/emulator_ops.json); needs both.
 *                                From 8.5 libopapi_nn.so (losses) and libopapi_math.so (aclnnAdd)
 *                                hold the operators, over libopapi.so (ops_core.c only).
 * emulator/build.py links these objects into one tree per CANN release (era.h), each library
 * with a soname of its own (libaclnn_py_emu_*.so, never a CANN name) and no RUNPATH: as CANN's,
 * the libraries find each other and the support libraries (lib64/libruntime.so, the driver
 * stand-in) through LD_LIBRARY_PATH, or are loaded first by aclnn_py's loader.
 * Functions below are exported (default visibility) by the library named in
 * their section; everything else is built with -fvisibility=hidden, and per-release export
 * lists written by emulator/build.py hide what a release does not provide.
 */
#ifndef ACLNN_EMU_INTERNAL_H
#define ACLNN_EMU_INTERNAL_H

#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>

#include "cann_api.h"

#define EMU_MAX_DIMS 8        /* CANN's rank limit for aclnn operators */
#define EMU_TENSOR_MAX_DIMS 25 /* what aclCreateTensor itself accepts here */

/* ==== libascendcl.so (rt_*.c, rt_internal.h) ==== */

/* ---- errors: aclGetRecentErrMsg text, per thread ---- */

/* Append one message (printf-style) to the calling thread's recent-error text. */
void emu_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * fork() and the libraries' own mutexes: a mutex that guards only its own data (held for a
 * few instructions, never while taking another lock) is registered once, when its library
 * loads; the runtime's fork handlers take every registered one after the runtime's lock and
 * release them in the parent and the child, so that a child forked while another thread held
 * one neither waits for it for ever nor sees its data half written (rt_state.c).
 */
void emu_fork_guard(pthread_mutex_t *mu);
#define EMU_FORK_GUARDED(mu)                                                                 \
    __attribute__((constructor)) static void mu##_fork_guard(void) { emu_fork_guard(&mu); }

/*
 * Fault injection point: every public API calls this first with its own name.
 * Returns 0, or the status armed by aclemuInjectFault (already recorded in the
 * error text), which the API then returns.
 */
int32_t emu_fault(const char *api);

/* The usual first line of a public API: return the injected status if the fault fires. */
#define EMU_RETURN_IF_FAULT(api) EMU_RETURN_IF_STATUS(int32_t, emu_fault(api))

/* Return the status (of type T) that expr gives from the calling function unless it is 0
 * (ACL_SUCCESS, ACLNN_SUCCESS). */
#define EMU_RETURN_IF_STATUS(T, expr)         \
    do {                                      \
        T emu_status_ = (expr);               \
        if (emu_status_ != 0)                 \
            return emu_status_;               \
    } while (0)

/* ---- runtime state ---- */

/* ACL_SUCCESS once the runtime started (aclInit, or the first runtime call before it, as CANN's
 * runtime needs no aclInit; aclFinalize does not stop it), or a configuration error of the
 * first start, its message recorded. */
int32_t emu_runtime_ready(const char *api);

/*
 * Device of the calling thread's current context, or -1 after recording
 * "no context" (the caller returns ACL_ERROR_RT_CONTEXT_NULL).
 */
int32_t emu_require_device(const char *api);

/* ---- device memory ---- */

/*
 * Whether [ptr, ptr + bytes) lies inside one live aclrtMalloc allocation.
 * bytes == 0 checks only that ptr is inside (or one past the end of) one.
 * On success *device receives its device id (device may be NULL).
 */
bool emu_devmem_contains(const void *ptr, uint64_t bytes, int32_t *device);

/*
 * A device range as deferred work saw it when it was queued: the allocation
 * it lay in is named by its allocation id (unique, never reused, even when
 * an address is handed out again). alloc_id 0: the range was not inside one
 * live allocation when pinned.
 */
typedef struct {
    const void *ptr;
    uint64_t bytes;
    uint64_t alloc_id;
    int32_t device; /* -1 when alloc_id is 0 */
} emu_range;

/*
 * Snapshot [ptr, ptr + bytes) (bytes > 0) with the id of the live aclrtMalloc
 * allocation holding all of it. Returns whether there is one; records nothing.
 * Deferred work pins every range at enqueue time and re-checks it with
 * emu_devmem_still_valid when it runs.
 */
bool emu_devmem_pin(const void *ptr, uint64_t bytes, emu_range *out);

/* ---- streams and deferred work ---- */

/*
 * A unit of device work. run() executes it on the host when the stream is
 * synchronised; before touching memory it must re-check every device range
 * it pinned (emu_devmem_pin at enqueue time) with emu_devmem_still_valid,
 * as buffers may have been freed (and their addresses reused) while it was
 * pending, and returns ACL_SUCCESS or an aclError code after recording a
 * message. release() frees the task's own state (called exactly once, after
 * run() or when the task is dropped).
 */
typedef struct emu_task {
    aclError (*run)(struct emu_task *task);
    void (*release)(struct emu_task *task);
    const char *name; /* for messages: the operator ("MseLossBackward") or API ("aclrtMemcpyAsync") */
    struct emu_task *next;
    aclrtStream stream; /* set when queued: the stream handle, NULL for a default stream */
    uint64_t enqueue_ns; /* set when queued under ACLNN_EMU_LINK: CLOCK_MONOTONIC, ns */
} emu_task;

/*
 * Whether a range pinned when `task` was queued still lies in the same live
 * allocation. If not, records "<task name> queued on stream <s>: <what> at
 * <ptr>: <why>" (what: e.g. "input 1 (self)", "workspace", "src"; why: never
 * device memory, freed while pending, or freed and its address now held by
 * another allocation) and returns false: the task must not touch memory.
 */
bool emu_devmem_still_valid(const emu_task *task, const char *what, const emu_range *r);

/*
 * emu_devmem_still_valid without the record: whether the range is still live. A task
 * checks with it first and names its operand (a formatted string) only for the record.
 */
bool emu_devmem_still_live(const emu_range *r);

/*
 * Resolve `stream` (NULL = the default stream of the calling thread's current
 * context) and queue `task` on it. Returns ACL_SUCCESS, or an error after
 * recording a message (the task is then released by this call).
 */
aclError emu_stream_enqueue(aclrtStream stream, emu_task *task, const char *api);

/* ---- kernels of other code (aclemuSetKernelHandler, rt_kernels.c) ---- */

/* The handler set by aclemuSetKernelHandler when `op` ("aclnnSoftmax") is registered for it,
   else NULL. */
aclemuKernelHandler emu_kernel_handler(const char *op);

/* Whether a kernel handler is set (by aclemuSetKernelHandler). */
bool emu_kernel_handler_set(void);

/* Bring aclnn_py's Python kernels up in this process when no handler is set (rt_python.c):
   start Python if the process has none, then install the handler. False with the reason in
   `why` when they cannot be. Call with no emulator lock held (it takes the GIL). */
bool emu_kernels_bring_up(char *why, size_t size);

/* Around every call of a kernel handler (rt_python.c): while one runs in the Python the
   emulator started, Ctrl-C (SIGINT) interrupts it with KeyboardInterrupt, and the program's
   own disposition of SIGINT then takes over. Call with no emulator lock held. */
void emu_kernel_enter(void);
void emu_kernel_leave(void);

/* ---- SoC and counters ---- */

/* The emulated SoC name (ACLNN_EMU_SOC, default an Atlas A2 name). */
const char *emu_soc_name(void);

/* Whether the emulated SoC has bfloat16 aclnn kernels (Atlas A2/A3, Ascend 950). */
bool emu_soc_supports_bf16(void);

/*
 * 0 unless ACLNN_EMU_OP_CACHE=1 was set at aclInit (and ACL is initialised); then a number
 * that changes with every such aclInit, so the executor cache modelled in meta.c starts
 * empty after aclFinalize + aclInit.
 */
uint64_t emu_op_cache_epoch(void);

typedef enum {
    EMU_COUNTER_TENSORS,        /* live aclTensors (meta.c: +1 create, -1 destroy) */
    EMU_COUNTER_EXECUTORS,      /* live executors */
    EMU_COUNTER_LAUNCHES,       /* accepted operator launches */
    EMU_COUNTER_KERNELS_RUN,    /* kernels executed */
    EMU_COUNTER_SCALARS,        /* live aclScalars (meta.c) */
    EMU_COUNTER_INT_ARRAYS,     /* live aclIntArrays (meta.c) */
    EMU_COUNTER_CACHED_EXECUTORS, /* executors phase 1 handed out from the cache (meta.c), since reset */
    EMU_COUNTER_FLOAT_ARRAYS,   /* live aclFloatArrays (meta.c) */
    EMU_COUNTER_BOOL_ARRAYS,    /* live aclBoolArrays (meta.c) */
    EMU_COUNTER_TENSOR_LISTS,   /* live aclTensorLists (meta.c) */
    EMU_COUNTER_COUNT           /* the number of counters */
} emu_counter;

void emu_counter_add(emu_counter counter, int64_t delta);

/* Count one kernel executed on `device` (aclemuGetDeviceStats). */
void emu_device_kernel_run(int32_t device);

/* ==== libnnopbase.so (meta.c) ==== */

/* ---- tensors (aclCreateTensor) ---- */

#define EMU_TENSOR_MAGIC 0x54454e53u /* "TENS" */

struct aclTensor {
    uint32_t magic;
    aclDataType dtype;
    aclFormat format;
    uint64_t ndim;
    int64_t dims[EMU_TENSOR_MAX_DIMS];
    int64_t strides[EMU_TENSOR_MAX_DIMS]; /* elements */
    int64_t offset;                       /* elements */
    uint64_t storage_ndim;
    int64_t storage_dims[EMU_TENSOR_MAX_DIMS];
    void *data;                            /* storage base (device address) */
    uint64_t serial;                       /* unique per aclCreateTensor, never reused */
};

/* Whether t is a live tensor made by aclCreateTensor (records nothing). */
bool emu_tensor_is_live(const aclTensor *t);

/* Bits of one element as CANN sizes the dtype (4 for DT_FLOAT4_E2M1); 0 for one CANN gives
 * no size (DT_STRING, DT_UNDEFINED, values it does not know). */
uint32_t emu_dtype_bits(aclDataType dtype);

/* Size in bytes of one element; 0 for the dtypes whose elements are not whole bytes (sub-byte
 * ones pack several per byte) and those without a size: nothing reads them element by element. */
size_t emu_dtype_size(aclDataType dtype);

/* Name of a dtype for messages ("DT_FLOAT", "DT_BF16", ...). */
const char *emu_dtype_name(aclDataType dtype);

/* Number of elements of the view (1 for 0-d, 0 when any dim is 0). */
int64_t emu_tensor_numel(const aclTensor *t);

/*
 * Give t, if it is still the live tensor of `serial`, the view shape dims[0 .. ndim) (ndim at
 * most EMU_TENSOR_MAX_DIMS) with C-contiguous strides, and the same storage shape: what CANN
 * does to the output of an operator whose output shape depends on the data once its kernel ran.
 * Returns whether it did.
 */
bool emu_tensor_set_view_shape(const aclTensor *t, uint64_t serial, const int64_t *dims, uint64_t ndim);

/* ---- scalars (aclCreateScalar) ---- */

/*
 * Whether s is a live aclScalar made by aclCreateScalar (records nothing). If it is,
 * *value receives the value it copied at creation as a double (bool: 0 or 1; complex:
 * the real part; 64-bit integers beyond 2^53 rounded) and *dtype its dtype. Either
 * output may be NULL.
 */
bool emu_scalar_read(const aclScalar *s, double *value, aclDataType *dtype);

/* The largest scalar value: complex128. */
#define EMU_SCALAR_MAX_BYTES 16

/*
 * Whether s is a live aclScalar; if it is, its value exactly as copied at creation, in the
 * host's representation of its dtype (a bool as one byte, 0 or 1), into
 * bytes[0 .. EMU_SCALAR_MAX_BYTES) (zero-filled past the dtype's size) and its dtype into
 * *dtype (which may be NULL).
 */
bool emu_scalar_read_bytes(const aclScalar *s, unsigned char *bytes, aclDataType *dtype);

/* ---- arrays and lists (aclCreateFloatArray, aclCreateBoolArray, aclCreateTensorList,
   aclCreateScalarList) ---- */

/*
 * Whether the object is live (records nothing). If it is, *size receives its length and the
 * first min(length, capacity) elements (members, values) are copied to the last argument
 * (which may be NULL when capacity is 0).
 */
bool emu_tensor_list_read(const aclTensorList *list, uint64_t *size, const aclTensor **tensors,
                          uint64_t capacity);
/* members may be NULL (aclCreateScalarList accepts them) */
bool emu_scalar_list_read(const aclScalarList *list, uint64_t *size, const aclScalar **scalars,
                          uint64_t capacity);
bool emu_int_array_read(const aclIntArray *array, uint64_t *size, int64_t *values, uint64_t capacity);
bool emu_float_array_read(const aclFloatArray *array, uint64_t *size, float *values, uint64_t capacity);
bool emu_bool_array_read(const aclBoolArray *array, uint64_t *size, bool *values, uint64_t capacity);

/* ---- executors ---- */
/* (libopapi.so, ops_core.c, implements the operators over these) */

/*
 * An operator's executor, made by its phase 1 and run by its phase 2.
 * The operator fills `launch` (and `release_op`) and the tensor snapshots; the
 * core owns registration, repeatability, address rebinding and consumption.
 *
 * `inputs`/`outputs` are copies of the caller's tensors taken at phase 1;
 * aclSetInputTensorAddr/aclSetOutputTensorAddr/aclSetTensorAddr change their
 * `data`. At phase 2 the core calls launch(), which must snapshot everything
 * the deferred work needs (tensors, parameters, workspace) into a task and
 * queue it with emu_stream_enqueue.
 */
#define EMU_EXECUTOR_MAX_TENSORS 8

struct aclOpExecutor {
    uint32_t magic;
    const char *op_name;             /* "MseLossBackward" */
    bool repeatable;
    uint64_t workspace_size;         /* what phase 1 reported */
    size_t n_inputs, n_outputs;
    aclTensor inputs[EMU_EXECUTOR_MAX_TENSORS];
    aclTensor outputs[EMU_EXECUTOR_MAX_TENSORS];
    const aclTensor *caller_inputs[EMU_EXECUTOR_MAX_TENSORS];   /* identity, for rebinding checks */
    const aclTensor *caller_outputs[EMU_EXECUTOR_MAX_TENSORS];
    void *op_state;                  /* operator parameters, owned */
    aclError (*launch)(aclOpExecutor *executor, void *workspace, uint64_t workspace_size,
                       aclrtStream stream, const char *api);
    void (*release_op)(aclOpExecutor *executor); /* frees op_state; may be NULL */
    /* the executor-cache signature (emu_executor_set_signature; NULL while the cache is off) */
    unsigned char *signature;
    size_t signature_len;
    bool from_cache; /* handed out by the modelled executor cache: never repeatable */
};

/* A zeroed executor registered as live, or NULL (message recorded). */
aclOpExecutor *emu_executor_new(const char *op_name);

/* Unregister and free an executor that phase 1 built but cannot hand out. */
void emu_executor_discard(aclOpExecutor *executor);

/*
 * Phase 2, common part: checks that `executor` is live (561103 otherwise),
 * the workspace (NULL with size > 0 -> 161001; smaller than phase 1 reported
 * -> 161002; not inside one live device allocation -> 161002), then calls
 * executor->launch. A non-repeatable executor is consumed whatever happens.
 */
aclnnStatus emu_executor_run(const char *api, void *workspace, uint64_t workspace_size,
                             aclOpExecutor *executor, aclrtStream stream);

/*
 * The signature of the call phase 1 just built `executor` for (the operator, every tensor's
 * dtype, shape, strides, offset, format and storage shape, the attribute values), for the
 * modelled aclnn executor cache (ACLNN_EMU_OP_CACHE=1; does nothing while it is off). If the
 * same signature already ran non-repeatably since aclInit, the executor is marked as handed out
 * by the cache: it launches as usual (once: it is not repeatable), but
 * aclSetAclOpExecutorRepeatable refuses it with 561000, as CANN refuses its cached executors.
 * The signature is recorded when a non-repeatable executor carrying it launches successfully.
 */
void emu_executor_set_signature(aclOpExecutor *executor, const void *signature, size_t len);

/*
 * Fault point of an operator's phase 2, to call instead of emu_fault(api) there:
 * returns 0, or the injected status after consuming a non-repeatable live
 * executor exactly as a failed phase 2 does (so an injected phase-2 failure
 * leaks nothing). (Added by the runtime/meta implementation.)
 */
aclnnStatus emu_executor_fault(const char *api, aclOpExecutor *executor);

#endif
