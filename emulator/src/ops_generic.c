/*
 * The generic operator path (ops_generic.h): phase 1 checks every argument the way the
 * emulator's own operators do (live handles, device memory of each view), refuses an operator
 * without a kernel (561003), asks the kernel handler to check the call, and snapshots the
 * arguments into the executor; phase 2 (ops_phase2) queues a task owning a copy of them, whose
 * run re-checks every pinned range and calls the handler to compute.
 *
 * Tensors that are inputs (read, or updated in place) and outputs are the executor's inputs and
 * outputs in parameter order (the first EMU_EXECUTOR_MAX_TENSORS of each), so a repeatable
 * executor's aclSetInputTensorAddr / aclSetOutputTensorAddr rebind them as for any operator.
 *
 * An output whose extent depends on the data: the kernel reports its real view shape
 * (aclemuKernelArg's view_ndim / view_dims) and the caller's aclTensor takes it once the kernel
 * ran. For CANN's operators of that kind, phase 2 also waits for the stream, as CANN's launch
 * does (see data_dependent below), so the shape is there when phase 2 returns.
 */
#include <pthread.h>
#include <stdlib.h>

#include "ops_generic.h"

#define MESSAGE_BYTES 1024

/* One argument: its snapshot and the kernel's view of it. */
typedef struct {
    int32_t kind;
    int32_t present;
    aclTensor tensor;      /* ACLEMU_ARG_TENSOR */
    int32_t slot_kind;     /* ACLEMU_ARG_TENSOR: 0 none, 1 the executor's inputs[slot], 2 its outputs[slot] */
    size_t slot;
    aclTensor *members;    /* ACLEMU_ARG_TENSOR_LIST */
    uint64_t length;       /* members, values or string bytes */
    void *values;          /* arrays: int64_t, uint8_t or double values; strings: the text;
                              scalar lists: generic_scalar */
    int64_t integer;
    double real;
    int32_t scalar_dtype;
    unsigned char scalar_bytes[EMU_SCALAR_MAX_BYTES]; /* ACLEMU_ARG_SCALAR: the value, exactly */
    const aclTensor *caller;  /* ACLEMU_ARG_TENSOR: the aclTensor passed (its view shape may change) */
    int64_t view_ndim;        /* an output's real extent as its kernel reported it; -1: none */
    int64_t view_dims[EMU_MAX_DIMS];
} generic_arg;

/*
 * CANN's operators whose output extent depends on the data: their l0 kernels are launched with
 * an output-shape argument (OP_OUTSHAPE, or an AI CPU task of ge::DEPEND_SHAPE_RANGE), and
 * CANN's launcher then synchronises the stream and gives the output aclTensor the real shape
 * before phase 2 returns (hicann/opbase src/nnopbase/composite_op/aclnn_engine/op_kernel.h,
 * outshape.h; aicpu/task_handler/aicpu_task.cpp). The operators: hicann/ops-math
 * conversion/masked_select_v3/op_api/masked_select.cpp (aclnnMaskedSelect); hicann/ops-nn
 * index/non_zero/op_api/nonzero.cpp (aclnnNonzero, aclnnNonzeroV2),
 * index/unique_consecutive/op_api/unique_consecutive.cpp (aclnnUnique, aclnnUnique2,
 * aclnnUniqueConsecutive), index/unique_with_counts_ext2/op_host/op_api/unique_with_counts_ext2.cpp
 * (aclnnUniqueDim). aclnn_py's call() has the same list (aclnn_py/_call.py).
 */
static const char *const data_dependent[] = {
    "aclnnMaskedSelect", "aclnnNonzero", "aclnnNonzeroV2", "aclnnUnique", "aclnnUnique2",
    "aclnnUniqueConsecutive", "aclnnUniqueDim",
};

static bool is_data_dependent(const char *op)
{
    for (size_t i = 0; i < sizeof data_dependent / sizeof data_dependent[0]; i++)
        if (strcmp(op, data_dependent[i]) == 0)
            return true;
    return false;
}

/* One scalar of an aclScalarList (ACLEMU_ARG_SCALAR_LIST: a generic_arg's values, length of
   them), as read_arg read an aclScalar. */
typedef struct {
    double real;
    int32_t dtype;
    unsigned char bytes[EMU_SCALAR_MAX_BYTES];
} generic_scalar;

typedef struct {
    const ops_generic_op *op;
    generic_arg *args;
} generic_state;

typedef struct {
    emu_range r;
    bool used;
} generic_pin;

typedef struct {
    emu_task base; /* first */
    const ops_generic_op *op;
    generic_arg *args;
    generic_pin *pins; /* one per tensor and list member, in order */
    size_t n_pins;
} generic_task;

/* ---- arguments ---- */

static void free_args(generic_arg *args, int32_t count)
{
    if (!args)
        return;
    for (int32_t i = 0; i < count; i++) {
        free(args[i].members);
        free(args[i].values);
    }
    free(args);
}

/* A copy of n bytes at p (NULL when n is 0), or false when out of host memory. */
static bool copy_bytes(void **out, const void *p, size_t n)
{
    *out = NULL;
    if (n == 0)
        return true;
    *out = malloc(n);
    if (*out)
        memcpy(*out, p, n);
    return *out != NULL;
}

static generic_arg *copy_args(const generic_arg *args, int32_t count)
{
    generic_arg *copy = calloc(count ? (size_t)count : 1, sizeof *copy);
    if (!copy)
        return NULL;
    for (int32_t i = 0; i < count; i++) {
        copy[i] = args[i];
        copy[i].members = NULL;
        copy[i].values = NULL;
        size_t value_bytes = 0;
        if (args[i].kind == ACLEMU_ARG_INT_ARRAY)
            value_bytes = args[i].length * sizeof(int64_t);
        else if (args[i].kind == ACLEMU_ARG_BOOL_ARRAY)
            value_bytes = args[i].length;
        else if (args[i].kind == ACLEMU_ARG_FLOAT_ARRAY)
            value_bytes = args[i].length * sizeof(double);
        else if (args[i].kind == ACLEMU_ARG_STRING && args[i].values)
            value_bytes = args[i].length + 1;
        else if (args[i].kind == ACLEMU_ARG_SCALAR_LIST)
            value_bytes = args[i].length * sizeof(generic_scalar);
        void *members = NULL, *values = NULL;
        if (!copy_bytes(&members, args[i].members, args[i].members ? args[i].length * sizeof(aclTensor) : 0) ||
            !copy_bytes(&values, args[i].values, value_bytes)) {
            free(members);
            free_args(copy, i);
            return NULL;
        }
        copy[i].members = members;
        copy[i].values = values;
    }
    return copy;
}

static aclnnStatus missing(const char *api, const char *name)
{
    emu_error("%s: %s is NULL (it is not an optional argument)", api, name);
    return ACLNN_ERR_PARAM_NULLPTR;
}

/* Read one pointer argument into a; the first failure is returned (message recorded). */
static aclnnStatus read_arg(const char *api, const char *name, int32_t kind, const void *p, generic_arg *a)
{
    switch (kind) {
    case ACLEMU_ARG_TENSOR: {
        const aclTensor *t = p;
        if (!emu_tensor_is_live(t))
            return ops_not_live(api, name, "aclTensor", "aclCreateTensor");
        if (emu_dtype_size(t->dtype) > 0) /* else the kernel refuses its dtype (161002) */
            OPS_CHECK(ops_check_view_memory(api, name, t));
        a->tensor = *t;
        a->caller = t;
        a->view_ndim = -1;
        return ACLNN_SUCCESS;
    }
    case ACLEMU_ARG_TENSOR_LIST: {
        uint64_t n = 0;
        if (!emu_tensor_list_read(p, &n, NULL, 0))
            return ops_not_live(api, name, "aclTensorList", "aclCreateTensorList");
        const aclTensor **members = calloc(n ? n : 1, sizeof *members);
        a->members = calloc(n ? n : 1, sizeof(aclTensor));
        if (!members || !a->members) {
            free(members);
            emu_error("%s: out of host memory", api);
            return ACLNN_ERR_INNER;
        }
        emu_tensor_list_read(p, &n, members, n);
        a->length = n;
        aclnnStatus st = ACLNN_SUCCESS;
        char what[160];
        for (uint64_t j = 0; j < n && st == ACLNN_SUCCESS; j++) {
            snprintf(what, sizeof what, "%s[%" PRIu64 "]", name, j);
            if (!emu_tensor_is_live(members[j]))
                st = ops_not_live(api, what, "aclTensor", "aclCreateTensor");
            else if (emu_dtype_size(members[j]->dtype) > 0) /* else the kernel refuses its dtype */
                st = ops_check_view_memory(api, what, members[j]);
            if (st == ACLNN_SUCCESS)
                a->members[j] = *members[j];
        }
        free(members);
        return st;
    }
    case ACLEMU_ARG_SCALAR: {
        aclDataType dtype;
        if (!emu_scalar_read(p, &a->real, &dtype) || !emu_scalar_read_bytes(p, a->scalar_bytes, &dtype))
            return ops_not_live(api, name, "aclScalar", "aclCreateScalar");
        a->scalar_dtype = (int32_t)dtype;
        return ACLNN_SUCCESS;
    }
    case ACLEMU_ARG_SCALAR_LIST: {
        /* Each scalar as an aclScalar argument is read; a NULL member is refused as
           NnopbaseExecutorAddScalarListInput refuses it (hicann/opbase aa3cd74
           src/nnopbase/individual_op/executor/indv_executor_ext.cpp: NNOPBASE_ASSERT_NOTNULL_RETVAL
           of each member, 161001). */
        uint64_t n = 0;
        if (!emu_scalar_list_read(p, &n, NULL, 0))
            return ops_not_live(api, name, "aclScalarList", "aclCreateScalarList");
        const aclScalar **scalars = calloc(n ? n : 1, sizeof *scalars);
        generic_scalar *values = calloc(n ? n : 1, sizeof *values);
        if (!scalars || !values) {
            free(scalars);
            free(values);
            emu_error("%s: out of host memory", api);
            return ACLNN_ERR_INNER;
        }
        emu_scalar_list_read(p, &n, scalars, n);
        a->values = values;
        a->length = n;
        aclnnStatus st = ACLNN_SUCCESS;
        char what[160];
        for (uint64_t j = 0; j < n && st == ACLNN_SUCCESS; j++) {
            snprintf(what, sizeof what, "%s[%" PRIu64 "]", name, j);
            aclDataType dtype;
            if (!scalars[j]) {
                emu_error("%s: %s is NULL: every scalar of an aclScalarList must be one", api, what);
                st = ACLNN_ERR_PARAM_NULLPTR;
            } else if (!emu_scalar_read(scalars[j], &values[j].real, &dtype) ||
                       !emu_scalar_read_bytes(scalars[j], values[j].bytes, &dtype)) {
                st = ops_not_live(api, what, "aclScalar", "aclCreateScalar");
            } else {
                values[j].dtype = (int32_t)dtype;
            }
        }
        free(scalars);
        return st;
    }
    case ACLEMU_ARG_INT_ARRAY:
    case ACLEMU_ARG_BOOL_ARRAY:
    case ACLEMU_ARG_FLOAT_ARRAY: {
        uint64_t n = 0;
        bool live = kind == ACLEMU_ARG_INT_ARRAY ? emu_int_array_read(p, &n, NULL, 0)
                    : kind == ACLEMU_ARG_BOOL_ARRAY ? emu_bool_array_read(p, &n, NULL, 0)
                                                 : emu_float_array_read(p, &n, NULL, 0);
        const char *type = kind == ACLEMU_ARG_INT_ARRAY ? "aclIntArray"
                           : kind == ACLEMU_ARG_BOOL_ARRAY ? "aclBoolArray" : "aclFloatArray";
        if (!live) {
            char creator[32];
            snprintf(creator, sizeof creator, "aclCreate%s", type + 3);
            return ops_not_live(api, name, type, creator);
        }
        size_t item = kind == ACLEMU_ARG_INT_ARRAY ? sizeof(int64_t) : kind == ACLEMU_ARG_BOOL_ARRAY ? 1 : sizeof(double);
        a->values = calloc(n ? n : 1, item > sizeof(float) ? item : sizeof(float));
        if (!a->values) {
            emu_error("%s: out of host memory", api);
            return ACLNN_ERR_INNER;
        }
        a->length = n;
        if (kind == ACLEMU_ARG_INT_ARRAY) {
            emu_int_array_read(p, &n, a->values, n);
        } else if (kind == ACLEMU_ARG_BOOL_ARRAY) {
            bool *flags = calloc(n ? n : 1, sizeof *flags);
            if (!flags) {
                emu_error("%s: out of host memory", api);
                return ACLNN_ERR_INNER;
            }
            emu_bool_array_read(p, &n, flags, n);
            for (uint64_t j = 0; j < n; j++)
                ((uint8_t *)a->values)[j] = flags[j];
            free(flags);
        } else {
            float *floats = calloc(n ? n : 1, sizeof *floats);
            if (!floats) {
                emu_error("%s: out of host memory", api);
                return ACLNN_ERR_INNER;
            }
            emu_float_array_read(p, &n, floats, n);
            for (uint64_t j = 0; j < n; j++)
                ((double *)a->values)[j] = floats[j];
            free(floats);
        }
        return ACLNN_SUCCESS;
    }
    default: /* ACLEMU_ARG_STRING */
        a->length = strlen(p);
        if (!copy_bytes(&a->values, p, a->length + 1)) {
            emu_error("%s: out of host memory", api);
            return ACLNN_ERR_INNER;
        }
        return ACLNN_SUCCESS;
    }
}

/* ---- the kernel's view of the arguments ---- */

/*
 * The bytes a kernel may touch from t's data: its view's extent, and for a FRACTAL_NZ tensor its
 * whole storage shape too (the padded fractal blocks a consumer of the format reads; CANN's
 * aclnnTransMatmulWeight gives the weight that storage shape, see to_fractal_nz).
 */
static bool tensor_bytes(const aclTensor *t, uint64_t *bytes)
{
    if (!ops_view_extent_bytes(t, bytes))
        return false;
    size_t item = emu_dtype_size(t->dtype);
    if (t->format != ACL_FORMAT_FRACTAL_NZ || item == 0 || t->storage_ndim == 0)
        return true;
    uint64_t n = 1;
    for (uint64_t d = 0; d < t->storage_ndim; d++)
        if (t->storage_dims[d] < 0 || __builtin_mul_overflow(n, (uint64_t)t->storage_dims[d], &n))
            return false;
    uint64_t storage;
    if (__builtin_mul_overflow(n, (uint64_t)item, &storage))
        return false;
    if (storage > *bytes)
        *bytes = storage;
    return true;
}

/*
 * What aclnnTransMatmulWeight's phase 1 does to its weight (hicann/ops-math c41933244
 * conversion/trans_data/op_api/aclnn_trans_matmul_weight.cpp, aclnnTransMatmulWeightGetWorkspaceSize:
 * SetStorageShape of TransData's FRACTAL_NZ result, SetStorageFormat(FORMAT_FRACTAL_NZ)); its
 * launch then moves the data into that layout. The storage shape of an ND view [..., a, b] in
 * FRACTAL_NZ: [..., ceil(b / c0), ceil(a / 16), 16, c0], c0 32 for a 1-byte dtype, else 16
 * (ops-math conversion/trans_data/README.md's table of ND <-> FRACTAL_NZ; hicann/ops-nn matmul/quant_batch_matmul_v3/docs/aclnnQuantMatmulWeightNz.md
 * names it (batch, n1, k1, k0, n0), k0 16 and n0 32 for an int8 [k, n]).
 */
static void to_fractal_nz(aclTensor *t)
{
    size_t item = emu_dtype_size(t->dtype);
    if (t->ndim < 2 || t->ndim + 2 > EMU_TENSOR_MAX_DIMS || item == 0 || emu_tensor_numel(t) == 0)
        return;
    int64_t c0 = item == 1 ? 32 : 16, rows = t->dims[t->ndim - 2], columns = t->dims[t->ndim - 1];
    uint64_t n = 0;
    for (uint64_t d = 0; d + 2 < t->ndim; d++)
        t->storage_dims[n++] = t->dims[d];
    t->storage_dims[n++] = (columns + c0 - 1) / c0;
    t->storage_dims[n++] = (rows + 15) / 16;
    t->storage_dims[n++] = 16;
    t->storage_dims[n++] = c0;
    t->storage_ndim = n;
    t->format = ACL_FORMAT_FRACTAL_NZ;
}

static void tensor_view(aclemuKernelArg *k, const aclTensor *t)
{
    uint64_t bytes = 0;
    k->kind = ACLEMU_ARG_TENSOR;
    k->present = 1;
    k->data = t->data;
    k->dtype = (int32_t)t->dtype;
    k->format = (int32_t)t->format;
    k->ndim = t->ndim;
    k->dims = t->dims;
    k->strides = t->strides;
    k->offset = t->offset;
    k->storage_bytes = ops_view_numel(t) > 0 && tensor_bytes(t, &bytes) ? bytes : 0;
}

/*
 * The handler's arguments for args (tensors as given, or, for rebindable ones, as the executor
 * now has them when ex is not NULL); list members go to members[] (one per member). With
 * `report` (phase 2), each output tensor gets the view_ndim / view_dims of its generic_arg to
 * report its real extent in. Returns the array, or NULL when out of host memory; *members_out
 * receives the members' array to free.
 */
static aclemuKernelArg *kernel_args(generic_arg *args, int32_t count, const char *roles,
                                    const aclOpExecutor *ex, bool report, aclemuKernelArg **members_out)
{
    size_t n_members = 0;
    for (int32_t i = 0; i < count; i++)
        if (args[i].kind == ACLEMU_ARG_TENSOR_LIST || args[i].kind == ACLEMU_ARG_SCALAR_LIST)
            n_members += args[i].length;
    aclemuKernelArg *k = calloc(count ? (size_t)count : 1, sizeof *k);
    aclemuKernelArg *members = calloc(n_members ? n_members : 1, sizeof *members);
    if (!k || !members) {
        free(k);
        free(members);
        return NULL;
    }
    size_t m = 0;
    for (int32_t i = 0; i < count; i++) {
        generic_arg *a = &args[i];
        k[i].kind = a->kind;
        k[i].present = a->present;
        k[i].role = roles[i];
        if (!a->present)
            continue;
        switch (a->kind) {
        case ACLEMU_ARG_TENSOR: {
            const aclTensor *t = &a->tensor;
            if (ex && a->slot_kind == 1)
                t = &ex->inputs[a->slot];
            else if (ex && a->slot_kind == 2)
                t = &ex->outputs[a->slot];
            tensor_view(&k[i], t);
            if (report && roles[i] == 'o') {
                a->view_ndim = -1;
                k[i].view_ndim = &a->view_ndim;
                k[i].view_dims = a->view_dims;
            }
            break;
        }
        case ACLEMU_ARG_TENSOR_LIST:
            k[i].members = &members[m];
            k[i].length = a->length;
            for (uint64_t j = 0; j < a->length; j++) {
                members[m].role = roles[i];
                tensor_view(&members[m++], &a->members[j]);
            }
            break;
        case ACLEMU_ARG_SCALAR:
            k[i].real = a->real;
            k[i].scalar_dtype = a->scalar_dtype;
            k[i].scalar_bytes = a->scalar_bytes;
            break;
        case ACLEMU_ARG_SCALAR_LIST: {
            const generic_scalar *scalars = a->values;
            k[i].members = &members[m];
            k[i].length = a->length;
            for (uint64_t j = 0; j < a->length; j++, m++) {
                members[m].kind = ACLEMU_ARG_SCALAR;
                members[m].present = 1;
                members[m].role = roles[i];
                members[m].real = scalars[j].real;
                members[m].scalar_dtype = scalars[j].dtype;
                members[m].scalar_bytes = scalars[j].bytes;
            }
            break;
        }
        case ACLEMU_ARG_INT_ARRAY:
            k[i].integers = a->values;
            k[i].length = a->length;
            break;
        case ACLEMU_ARG_BOOL_ARRAY:
            k[i].bools = a->values;
            k[i].length = a->length;
            break;
        case ACLEMU_ARG_FLOAT_ARRAY:
            k[i].reals = a->values;
            k[i].length = a->length;
            break;
        case ACLEMU_ARG_STRING:
            k[i].string = a->values;
            k[i].length = a->length;
            break;
        case ACLEMU_ARG_REAL:
            k[i].real = a->real;
            break;
        default: /* ACLEMU_ARG_INTEGER, ACLEMU_ARG_BOOL */
            k[i].integer = a->integer;
            break;
        }
    }
    *members_out = members;
    return k;
}

/* Call the handler (at phase 1 after the operator's rules); a failure's message is recorded.
   Returns its status. */
static int32_t call_handler(aclemuKernelHandler handler, const ops_generic_op *op, int32_t phase,
                            generic_arg *args, const aclOpExecutor *ex, const char *api)
{
    aclemuKernelArg *members;
    aclemuKernelArg *k = kernel_args(args, op->count, op->roles, ex, phase == 2, &members);
    if (!k) {
        emu_error("%s: out of host memory", api);
        return phase == 1 ? ACLNN_ERR_INNER : ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
    }
    if (phase == 1) {
        aclnnStatus st = ops_check_rules(api, op->rules, k, op->names, op->count);
        if (st != ACLNN_SUCCESS) {
            free(k);
            free(members);
            return st;
        }
    }
    char message[MESSAGE_BYTES] = "";
    emu_kernel_enter();
    int32_t status = handler(op->name, phase, k, op->count, message, sizeof message);
    emu_kernel_leave();
    free(k);
    free(members);
    if (status != 0) {
        message[sizeof message - 1] = '\0';
        emu_error("%s: %s", api, message[0] ? message : "the kernel failed without a message");
    }
    return status;
}

/* ---- phase 2: the task ---- */

static void pin_view(generic_pin *pin, const aclTensor *t)
{
    uint64_t bytes;
    memset(pin, 0, sizeof *pin);
    if (ops_view_numel(t) == 0 || !tensor_bytes(t, &bytes))
        return;
    pin->used = true;
    emu_devmem_pin(t->data, bytes, &pin->r);
}

/*
 * The outputs whose kernel reported their real extent take it as view shape (their aclTensor,
 * if the caller still has it). A report beyond 8 dims, with a negative dim, or of more
 * elements than the output has fails the kernel (507015).
 */
static aclError refresh_view_shapes(const ops_generic_op *op, const generic_arg *args)
{
    for (int32_t i = 0; i < op->count; i++) {
        const generic_arg *a = &args[i];
        if (a->kind != ACLEMU_ARG_TENSOR || !a->present || op->roles[i] != 'o' || a->view_ndim < 0)
            continue;
        int64_t n = 1, had = ops_view_numel(&a->tensor);
        bool ok = a->view_ndim <= EMU_MAX_DIMS;
        for (int64_t d = 0; ok && d < a->view_ndim; d++)
            ok = a->view_dims[d] >= 0 && !__builtin_mul_overflow(n, a->view_dims[d], &n);
        if (!ok || n > had) {
            emu_error("%s kernel: the extent reported for %s is not a shape of at most %d dims and %" PRId64
                      " elements (the output's)", op->name, op->names[i], EMU_MAX_DIMS, had);
            return ACL_ERROR_RT_AICORE_EXCEPTION;
        }
        emu_tensor_set_view_shape(a->caller, a->tensor.serial, a->view_dims, (uint64_t)a->view_ndim);
    }
    return ACL_SUCCESS;
}

static aclError generic_run(emu_task *base)
{
    generic_task *t = (generic_task *)base;
    const ops_generic_op *op = t->op;
    int32_t device = -1;
    size_t p = 0;
    char what[192];
    for (int32_t i = 0; i < op->count; i++) {
        const generic_arg *a = &t->args[i];
        uint64_t n = a->kind == ACLEMU_ARG_TENSOR ? 1 : a->kind == ACLEMU_ARG_TENSOR_LIST ? a->length : 0;
        for (uint64_t j = 0; a->present && j < n; j++, p++) {
            const generic_pin *pin = &t->pins[p];
            if (!pin->used)
                continue;
            if (emu_devmem_still_live(&pin->r) && (device < 0 || pin->r.device == device)) {
                device = pin->r.device;
                continue; /* named (formatted) only for a record */
            }
            if (a->kind == ACLEMU_ARG_TENSOR)
                snprintf(what, sizeof what, "%s", op->names[i]);
            else
                snprintf(what, sizeof what, "%s[%" PRIu64 "]", op->names[i], j);
            if (!emu_devmem_still_valid(&t->base, what, &pin->r))
                return ACL_ERROR_RT_AICORE_EXCEPTION;
            if (device >= 0 && pin->r.device != device) {
                emu_error("%s kernel: %s memory is on device %d but the other tensors are on device %d",
                          op->name, what, (int)pin->r.device, (int)device);
                return ACL_ERROR_RT_AICORE_EXCEPTION;
            }
            device = pin->r.device;
        }
    }
    aclemuKernelHandler handler = emu_kernel_handler(op->name);
    if (!handler) {
        emu_error("%s kernel: its kernel was unregistered after phase 1", op->name);
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    int32_t status = call_handler(handler, op, 2, t->args, NULL, op->name);
    if (status != 0)
        return status;
    status = refresh_view_shapes(op, t->args);
    if (status != 0)
        return status;
    emu_counter_add(EMU_COUNTER_KERNELS_RUN, 1);
    if (device >= 0)
        emu_device_kernel_run(device);
    return ACL_SUCCESS;
}

static void generic_task_release(emu_task *base)
{
    generic_task *t = (generic_task *)base;
    free_args(t->args, t->op->count);
    free(t->pins);
    free(t);
}

static aclError generic_launch(aclOpExecutor *ex, void *workspace, uint64_t workspace_size, aclrtStream stream,
                               const char *api)
{
    const generic_state *state = ex->op_state;
    EMU_RETURN_IF_STATUS(aclError, ops_require_state(api, state));
    const ops_generic_op *op = state->op;
    generic_task *t = calloc(1, sizeof *t);
    generic_arg *args = t ? copy_args(state->args, op->count) : NULL;
    size_t n_pins = 0;
    for (int32_t i = 0; args && i < op->count; i++) {
        if (args[i].kind == ACLEMU_ARG_TENSOR && args[i].present) {
            /* as the executor has it now: rebound addresses included */
            if (args[i].slot_kind == 1)
                args[i].tensor = ex->inputs[args[i].slot];
            else if (args[i].slot_kind == 2)
                args[i].tensor = ex->outputs[args[i].slot];
            n_pins++;
        } else if (args[i].kind == ACLEMU_ARG_TENSOR_LIST && args[i].present) {
            n_pins += args[i].length;
        }
    }
    generic_pin *pins = args ? calloc(n_pins ? n_pins : 1, sizeof *pins) : NULL;
    if (!pins) {
        if (args)
            free_args(args, op->count);
        free(t);
        emu_error("%s: out of host memory for the %s task", api, op->name);
        return ACL_ERROR_BAD_ALLOC;
    }
    size_t p = 0;
    for (int32_t i = 0; i < op->count; i++) {
        if (!args[i].present)
            continue;
        if (args[i].kind == ACLEMU_ARG_TENSOR)
            pin_view(&pins[p++], &args[i].tensor);
        else if (args[i].kind == ACLEMU_ARG_TENSOR_LIST)
            for (uint64_t j = 0; j < args[i].length; j++)
                pin_view(&pins[p++], &args[i].members[j]);
    }
    t->base.run = generic_run;
    t->base.release = generic_task_release;
    t->base.name = op->name + 5; /* "Softmax", as the emulator's own tasks are named */
    t->op = op;
    t->args = args;
    t->pins = pins;
    t->n_pins = n_pins;
    aclError rc = emu_stream_enqueue(stream, &t->base, api);
    if (rc == ACL_SUCCESS && is_data_dependent(op->name))
        rc = aclrtSynchronizeStream(stream); /* CANN's launcher waits, then refreshes the shape */
    return rc;
}

static void generic_release_op(aclOpExecutor *ex)
{
    generic_state *state = ex->op_state;
    if (state) {
        free_args(state->args, state->op->count);
        free(state);
    }
    ex->op_state = NULL;
}

/* ---- phase 1 ---- */

static aclnnStatus read_args(const ops_generic_op *op, const ops_generic_value *values, generic_arg *args,
                             aclOpExecutor *ex)
{
    const char *api = op->phase1_api;
    for (int32_t i = 0; i < op->count; i++) {
        generic_arg *a = &args[i];
        a->kind = op->kinds[i];
        a->present = 1;
        if (a->kind == ACLEMU_ARG_INTEGER || a->kind == ACLEMU_ARG_BOOL) {
            a->integer = values[i].integer;
            continue;
        }
        if (a->kind == ACLEMU_ARG_REAL) {
            a->real = values[i].real;
            continue;
        }
        if (!values[i].pointer) {
            if (op->optional[i] != '1')
                return missing(api, op->names[i]);
            a->present = 0;
            continue;
        }
        OPS_CHECK(read_arg(api, op->names[i], a->kind, values[i].pointer, a));
        if (a->kind != ACLEMU_ARG_TENSOR)
            continue;
        bool output = op->roles[i] == 'o';
        size_t *n = output ? &ex->n_outputs : &ex->n_inputs;
        if (*n < EMU_EXECUTOR_MAX_TENSORS) {
            a->slot_kind = output ? 2 : 1;
            a->slot = *n;
            if (output) {
                ex->outputs[*n] = a->tensor;
                ex->caller_outputs[*n] = values[i].pointer;
            } else {
                ex->inputs[*n] = a->tensor;
                ex->caller_inputs[*n] = values[i].pointer;
            }
            ++*n;
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_generic_phase1(const ops_generic_op *op, const ops_generic_value *values,
                               uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = op->phase1_api;
    aclOpExecutor *ex;
    aclnnStatus st = ops_phase1_begin(api, op->name + 5, workspaceSize, executor, &ex);
    if (st != ACLNN_SUCCESS)
        return st;
    aclemuKernelHandler handler = emu_kernel_handler(op->name);
    char why[MESSAGE_BYTES] = "";
    if (!handler && !emu_kernel_handler_set()) { /* a process that did not load aclnn_py */
        if (!emu_kernels_bring_up(why, sizeof why)) {
            emu_executor_discard(ex);
            emu_error("%s: the aclnn_py emulator computes %s in Python, but could not bring its "
                      "Python kernels up: %s", api, op->name, why);
            return ACLNN_ERR_INNER_FIND_KERNEL_ERROR;
        }
        handler = emu_kernel_handler(op->name);
    }
    if (!handler) {
        emu_executor_discard(ex);
        emu_error("%s: the aclnn_py emulator declares %s but does not compute it: give it a kernel with "
                  "the decorator aclnn_py.emulator.kernel(\"%s\") (from C: aclemuSetKernelHandler and "
                  "aclemuRegisterKernel; in a program that did not load aclnn_py: a module of such kernels "
                  "named by ACLNN_EMU_KERNELS); aclnn_py.emulator.kernels() lists the operators it "
                  "computes",
                  api, op->name, op->name);
        return ACLNN_ERR_INNER_FIND_KERNEL_ERROR;
    }
    generic_state *state = calloc(1, sizeof *state);
    generic_arg *args = calloc(op->count ? (size_t)op->count : 1, sizeof *args);
    if (!state || !args) {
        free(state);
        free(args);
        emu_executor_discard(ex);
        emu_error("%s: out of host memory", api);
        return ACLNN_ERR_INNER;
    }
    st = read_args(op, values, args, ex);
    if (st == ACLNN_SUCCESS)
        st = call_handler(handler, op, 1, args, NULL, api);
    if (st != ACLNN_SUCCESS) {
        free_args(args, op->count);
        free(state);
        emu_executor_discard(ex);
        return st;
    }
    if (strcmp(op->name, "aclnnTransMatmulWeight") == 0 && args[0].present) {
        to_fractal_nz((aclTensor *)args[0].caller);
        to_fractal_nz(&args[0].tensor);
        if (args[0].slot_kind == 1)
            to_fractal_nz(&ex->inputs[args[0].slot]);
    }
    state->op = op;
    state->args = args;
    ex->op_state = state;
    ex->launch = generic_launch;
    ex->release_op = generic_release_op;
    ex->workspace_size = 0;
    *workspaceSize = 0;
    *executor = ex;
    return ACLNN_SUCCESS;
}

/* ---- phase 2 with parameters of its own ---- */

aclnnStatus ops_generic_phase2(const ops_generic_op *op, const ops_generic_value *values, void *workspace,
                               uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    /* CANN's checks the executor first (OP_CHECK_NULL(executor)), which ops_phase2 does. */
    for (int32_t i = 0; executor && i < op->count; i++) {
        int32_t kind = op->kinds[i];
        if (kind == ACLEMU_ARG_INTEGER || kind == ACLEMU_ARG_BOOL || kind == ACLEMU_ARG_REAL)
            continue;
        if (!values[i].pointer) {
            if (op->optional[i] == '1')
                continue;
            return missing(op->phase1_api, op->names[i]);
        }
        generic_arg a;
        memset(&a, 0, sizeof a);
        aclnnStatus st = read_arg(op->phase1_api, op->names[i], kind, values[i].pointer, &a);
        free(a.members);
        free(a.values);
        if (st != ACLNN_SUCCESS)
            return st;
    }
    return ops_phase2(op->name, workspace, workspaceSize, executor, stream);
}

/* ---- operators described at run time (aclemuGenericGetWorkspaceSize) ---- */

#define DESCRIBED_MAX_PARAMS 256
#define DESCRIBED_MAX_NAME 128
#define DESCRIBED_MAX_OPS 4096

/* A description, kept for the life of the process: executors and tasks point at it. */
typedef struct described_op {
    ops_generic_op op;
    struct described_op *next;
} described_op;

static pthread_mutex_t described_lock = PTHREAD_MUTEX_INITIALIZER;
EMU_FORK_GUARDED(described_lock)
static described_op *described;
static int32_t described_count;

static bool same_description(const ops_generic_op *op, const char *name, int32_t count,
                             const aclemuGenericParam *params)
{
    if (op->count != count || strcmp(op->name, name) != 0)
        return false;
    for (int32_t i = 0; i < count; i++)
        if (strcmp(op->names[i], params[i].name) != 0 || op->kinds[i] != (char)params[i].kind ||
            op->roles[i] != params[i].role || op->optional[i] != (params[i].optional ? '1' : '0'))
            return false;
    return true;
}

static char *copy_text(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    char *copy = malloc(n + m + 1);
    if (copy) {
        memcpy(copy, text, n);
        memcpy(copy + n, suffix, m + 1);
    }
    return copy;
}

/* A new description (NULL when out of host memory). */
static described_op *describe(const char *name, int32_t count, const aclemuGenericParam *params)
{
    described_op *d = calloc(1, sizeof *d);
    char **names = calloc(count ? (size_t)count : 1, sizeof *names);
    char *kinds = calloc((size_t)count + 1, 1), *roles = calloc((size_t)count + 1, 1);
    char *optional = calloc((size_t)count + 1, 1);
    char *op_name = copy_text(name, ""), *phase1 = copy_text(name, "GetWorkspaceSize");
    bool ok = d && names && kinds && roles && optional && op_name && phase1;
    for (int32_t i = 0; ok && i < count; i++) {
        names[i] = copy_text(params[i].name, "");
        ok = names[i] != NULL;
        kinds[i] = (char)params[i].kind;
        roles[i] = params[i].role;
        optional[i] = params[i].optional ? '1' : '0';
    }
    if (!ok) {
        for (int32_t i = 0; names && i < count; i++)
            free(names[i]);
        free(names), free(kinds), free(roles), free(optional), free(op_name), free(phase1), free(d);
        return NULL;
    }
    d->op = (ops_generic_op){op_name, phase1, count, (const char *const *)names, kinds, roles, optional, NULL};
    return d;
}

/* The kept description equal to this one, made on first use; NULL with the status set. */
static const ops_generic_op *described_op_for(const char *api, const char *name, int32_t count,
                                              const aclemuGenericParam *params, aclnnStatus *status)
{
    const ops_generic_op *found = NULL;
    pthread_mutex_lock(&described_lock);
    for (described_op *d = described; d && !found; d = d->next)
        if (same_description(&d->op, name, count, params))
            found = &d->op;
    if (!found && described_count >= DESCRIBED_MAX_OPS) {
        emu_error("%s: more than %d operator descriptions in this process", api, DESCRIBED_MAX_OPS);
        *status = ACLNN_ERR_INNER;
    } else if (!found) {
        described_op *d = describe(name, count, params);
        if (d) {
            d->next = described;
            described = d;
            described_count++;
            found = &d->op;
        } else {
            emu_error("%s: out of host memory", api);
            *status = ACLNN_ERR_INNER;
        }
    }
    pthread_mutex_unlock(&described_lock);
    return found;
}

static aclnnStatus check_description(const char *api, const char *op, int32_t count,
                                     const aclemuGenericParam *params, const aclemuGenericValue *values)
{
    if (!op) {
        emu_error("%s: op is NULL", api);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    size_t length = strnlen(op, DESCRIBED_MAX_NAME);
    if (length >= DESCRIBED_MAX_NAME || length <= 5 || strncmp(op, "aclnn", 5) != 0) {
        emu_error("%s: op must be an operator name \"aclnn<Name>\" of at most %d bytes", api,
                  DESCRIBED_MAX_NAME - 1);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (count < 0 || count > DESCRIBED_MAX_PARAMS) {
        emu_error("%s: %s: count is %d, outside [0, %d]", api, op, (int)count, DESCRIBED_MAX_PARAMS);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (count > 0 && (!params || !values)) {
        emu_error("%s: %s: %s is NULL but count is %d", api, op, params ? "values" : "params", (int)count);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    for (int32_t i = 0; i < count; i++) {
        const aclemuGenericParam *p = &params[i];
        if (!p->name || p->name[0] == '\0') {
            emu_error("%s: %s: parameter %d has no name", api, op, (int)i);
            return ACLNN_ERR_PARAM_INVALID;
        }
        if (p->kind < ACLEMU_ARG_TENSOR || p->kind > ACLEMU_ARG_SCALAR_LIST) {
            emu_error("%s: %s: parameter %s has kind %d, not an aclemuArgKind (1 to 11)", api, op, p->name,
                      (int)p->kind);
            return ACLNN_ERR_PARAM_INVALID;
        }
        if (p->role != 'i' && p->role != 'o' && p->role != 'u') {
            emu_error("%s: %s: parameter %s has role %d, not 'i', 'o' or 'u' (105, 111 or 117)", api, op, p->name, (int)p->role);
            return ACLNN_ERR_PARAM_INVALID;
        }
        if (p->role != 'i' && p->kind != ACLEMU_ARG_TENSOR && p->kind != ACLEMU_ARG_TENSOR_LIST) {
            emu_error("%s: %s: parameter %s is written but is not a tensor or tensor list", api, op, p->name);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

EMU_EXPORT aclnnStatus aclemuGenericGetWorkspaceSize(const char *op, int32_t count, const aclemuGenericParam *params,
                                                     const aclemuGenericValue *values, uint64_t *workspaceSize,
                                                     aclOpExecutor **executor)
{
    const char *api = "aclemuGenericGetWorkspaceSize";
    aclnnStatus st = check_description(api, op, count, params, values);
    if (st != ACLNN_SUCCESS)
        return st;
    const ops_generic_op *described_op = described_op_for(api, op, count, params, &st);
    if (!described_op)
        return st;
    return ops_generic_phase1(described_op, values, workspaceSize, executor);
}

EMU_EXPORT aclnnStatus aclemuGenericRun(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                        aclrtStream stream)
{
    return ops_phase2("aclemuGenericRun", workspace, workspaceSize, executor, stream);
}
