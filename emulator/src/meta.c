/*
 * aclnn_py host emulator -- aclnn meta library (built as libnnopbase.so).
 *
 * aclCreateTensor & co, aclCreateScalar, the int / float / bool arrays and tensor lists,
 * executors (the common part of every operator's phase 2, repeatability and address
 * rebinding) and aclnnInit/aclnnFinalize.
 * Sources: hicann/opbase src/nnopbase/common/api/acl_op_api.cpp, op_executor.cpp,
 * src/nnopbase/common/utils/common_types.cpp (aclScalar, aclArray constructors),
 * docs for aclCreateTensor, aclCreateScalar, aclCreateIntArray, aclDestroyScalar,
 * aclDestroyIntArray, aclCreateFloatArray, aclCreateBoolArray, aclCreateTensorList and their
 * destroyers, aclSetAclOpExecutorRepeatable, aclDestroyAclOpExecutor,
 * aclSetInputTensorAddr (summarised in the project's cann-abi-facts.md §6, §7); the
 * executor cache model (ACLNN_EMU_OP_CACHE): src/nnopbase/common/utils/op_cache.cpp.
 *
 * Locking: one mutex for the registries of live tensors, scalars, arrays, tensor
 * lists and executors. It is
 * never held while calling into libascendcl (emu_fault, emu_counter_add,
 * launch...), so libascendcl may call back in here from a task without any
 * risk of lock-order inversion.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

#define EMU_EXECUTOR_MAGIC 0x45584543u /* "EXEC" */

static pthread_mutex_t m_mu = PTHREAD_MUTEX_INITIALIZER;
EMU_FORK_GUARDED(m_mu)
#define MLOCK() pthread_mutex_lock(&m_mu)
#define MUNLOCK() pthread_mutex_unlock(&m_mu)

static bool m_aclnn_inited;

/* ------------------------------------------------------------------------- */
/* Pointer hash set (open addressing, linear probing, backward-shift delete)  */
/* ------------------------------------------------------------------------- */

typedef struct {
    const void **slots;
    size_t cap; /* power of two, or 0 */
    size_t n;
} ptr_set;

static ptr_set m_tensors, m_executors, m_scalars, m_int_arrays, m_float_arrays, m_bool_arrays, m_tensor_lists;
/* The live scalar lists, and the live scalars that belong to one: aclDestroyScalarList releases them. */
static ptr_set m_scalar_lists, m_listed_scalars;
/* The live tensors that belong to a live tensor list: aclDestroyTensorList releases them. */
static ptr_set m_listed;

static size_t ptr_hash(const void *p, size_t mask)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & mask;
}

static bool set_has(const ptr_set *s, const void *p)
{
    if (!p || !s->cap)
        return false;
    size_t mask = s->cap - 1;
    for (size_t i = ptr_hash(p, mask);; i = (i + 1) & mask) {
        if (!s->slots[i])
            return false;
        if (s->slots[i] == p)
            return true;
    }
}

static bool set_grow(ptr_set *s)
{
    size_t cap = s->cap ? 2 * s->cap : 64;
    const void **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < s->cap; i++) {
        const void *p = s->slots[i];
        if (!p)
            continue;
        size_t j = ptr_hash(p, cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = p;
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return true;
}

static bool set_add(ptr_set *s, const void *p)
{
    if ((s->n + 1) * 2 > s->cap && !set_grow(s))
        return false;
    size_t mask = s->cap - 1;
    size_t i = ptr_hash(p, mask);
    while (s->slots[i]) {
        if (s->slots[i] == p)
            return true;
        i = (i + 1) & mask;
    }
    s->slots[i] = p;
    s->n++;
    return true;
}

static bool set_remove(ptr_set *s, const void *p)
{
    if (!p || !s->cap)
        return false;
    size_t mask = s->cap - 1;
    size_t i = ptr_hash(p, mask);
    while (s->slots[i] != p) {
        if (!s->slots[i])
            return false;
        i = (i + 1) & mask;
    }
    /* backward-shift deletion keeps probe chains intact */
    s->slots[i] = NULL;
    for (size_t j = (i + 1) & mask; s->slots[j]; j = (j + 1) & mask) {
        size_t k = ptr_hash(s->slots[j], mask);
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j); /* home k cyclically in (i, j] */
        if (stays)
            continue;
        s->slots[i] = s->slots[j];
        s->slots[j] = NULL;
        i = j;
    }
    s->n--;
    return true;
}

/* ------------------------------------------------------------------------- */
/* dtypes                                                                    */
/* ------------------------------------------------------------------------- */

/*
 * One entry per data type value CANN sizes: its name (the ge::DataType names of opbase's
 * include/nnopbase/opdev/data_type_utils.h TypeSize table, whose comments name each value) and
 * the bits of one element (that table gives bytes, or kDataTypeSizeBitOffset + bits for the
 * sub-byte types: DT_INT4, DT_UINT1, DT_INT2, DT_UINT2, DT_FLOAT6_*, DT_FLOAT4_*). A value
 * without an entry (DT_STRING, DT_STRING_REF, DT_UNDEFINED, 5, 42 and up) has no element size
 * in CANN either (TypeSize's entry is -1, or the value is outside its table).
 */
typedef struct {
    const char *name;
    uint32_t bits;
} dtype_info;

static const dtype_info m_dtypes[] = {
    [ACL_FLOAT] = {"DT_FLOAT", 32},
    [ACL_FLOAT16] = {"DT_FLOAT16", 16},
    [ACL_INT8] = {"DT_INT8", 8},
    [ACL_INT32] = {"DT_INT32", 32},
    [ACL_UINT8] = {"DT_UINT8", 8},
    [ACL_INT16] = {"DT_INT16", 16},
    [ACL_UINT16] = {"DT_UINT16", 16},
    [ACL_UINT32] = {"DT_UINT32", 32},
    [ACL_INT64] = {"DT_INT64", 64},
    [ACL_UINT64] = {"DT_UINT64", 64},
    [ACL_DOUBLE] = {"DT_DOUBLE", 64},
    [ACL_BOOL] = {"DT_BOOL", 8},
    [ACL_STRING] = {"DT_STRING", 0},
    [14] = {"DT_DUAL_SUB_INT8", 8},
    [15] = {"DT_DUAL_SUB_UINT8", 8},
    [ACL_COMPLEX64] = {"DT_COMPLEX64", 64},
    [ACL_COMPLEX128] = {"DT_COMPLEX128", 128},
    [18] = {"DT_QINT8", 8},
    [19] = {"DT_QINT16", 16},
    [20] = {"DT_QINT32", 32},
    [21] = {"DT_QUINT8", 8},
    [22] = {"DT_QUINT16", 16},
    [23] = {"DT_RESOURCE", 64},
    [24] = {"DT_STRING_REF", 0},
    [25] = {"DT_DUAL", 40},
    [26] = {"DT_VARIANT", 64},
    [ACL_BF16] = {"DT_BF16", 16},
    [28] = {"DT_UNDEFINED", 0},
    [ACL_INT4] = {"DT_INT4", 4},
    [ACL_UINT1] = {"DT_UINT1", 1},
    [31] = {"DT_INT2", 2},
    [32] = {"DT_UINT2", 2},
    [ACL_COMPLEX32] = {"DT_COMPLEX32", 32},
    [ACL_HIFLOAT8] = {"DT_HIFLOAT8", 8},
    [ACL_FLOAT8_E5M2] = {"DT_FLOAT8_E5M2", 8},
    [ACL_FLOAT8_E4M3FN] = {"DT_FLOAT8_E4M3FN", 8},
    [ACL_FLOAT8_E8M0] = {"DT_FLOAT8_E8M0", 8},
    [ACL_FLOAT6_E3M2] = {"DT_FLOAT6_E3M2", 6},
    [ACL_FLOAT6_E2M3] = {"DT_FLOAT6_E2M3", 6},
    [ACL_FLOAT4_E2M1] = {"DT_FLOAT4_E2M1", 4},
    [ACL_FLOAT4_E1M2] = {"DT_FLOAT4_E1M2", 4},
};

static const dtype_info *dtype_lookup(aclDataType dtype)
{
    int v = (int)dtype;
    if (v < 0 || v >= (int)(sizeof m_dtypes / sizeof m_dtypes[0]) || !m_dtypes[v].name)
        return NULL;
    return &m_dtypes[v];
}

EMU_EXPORT uint32_t emu_dtype_bits(aclDataType dtype)
{
    const dtype_info *info = dtype_lookup(dtype);
    return info ? info->bits : 0;
}

EMU_EXPORT size_t emu_dtype_size(aclDataType dtype)
{
    uint32_t bits = emu_dtype_bits(dtype);
    return bits % 8 == 0 ? bits / 8 : 0;
}

EMU_EXPORT const char *emu_dtype_name(aclDataType dtype)
{
    if (dtype == ACL_DT_UNDEFINED)
        return "DT_UNDEFINED";
    const dtype_info *info = dtype_lookup(dtype);
    return info ? info->name : "DT_UNKNOWN";
}

/*
 * Bytes of n elements of a dtype of `bits` bits, as CANN counts them (opbase
 * src/nnopbase/common/utils/data_type_utils.cpp CalcShapeBytes: sub-byte types pack, and the
 * last byte is counted whole: two DT_FLOAT4_E2M1 per byte, 3 of them in 2 bytes). False on
 * overflow of int64.
 */
static bool dtype_bytes(int64_t n, uint32_t bits, int64_t *bytes)
{
    int64_t whole; /* n / 8 groups of 8 elements are `bits` bytes each; the rest fit in bits bytes */
    return !__builtin_mul_overflow(n / 8, (int64_t)bits, &whole) &&
           !__builtin_add_overflow(whole, ((n % 8) * (int64_t)bits + 7) / 8, bytes);
}

/* ------------------------------------------------------------------------- */
/* Tensors                                                                   */
/* ------------------------------------------------------------------------- */

EMU_EXPORT bool emu_tensor_is_live(const aclTensor *t)
{
    MLOCK();
    bool live = set_has(&m_tensors, t);
    MUNLOCK();
    return live;
}

EMU_EXPORT int64_t emu_tensor_numel(const aclTensor *t)
{
    if (!t)
        return 0;
    int64_t n = 1;
    for (uint64_t i = 0; i < t->ndim; i++) {
        if (t->dims[i] == 0)
            return 0;
        if (t->dims[i] > 0 && n > INT64_MAX / t->dims[i])
            return INT64_MAX; /* not reachable for tensors aclCreateTensor accepted */
        n *= t->dims[i];
    }
    return n;
}

/* product of dims with overflow detection */
static bool dims_product(const int64_t *dims, uint64_t n, int64_t *out)
{
    int64_t p = 1;
    bool zero = false;
    for (uint64_t i = 0; i < n; i++) {
        if (dims[i] == 0)
            zero = true;
        else if (p > INT64_MAX / dims[i])
            return false;
        else
            p *= dims[i];
    }
    *out = zero ? 0 : p;
    return true;
}

/* A copy of the size values of esize bytes at value (NULL for size 0) into *copy; false after
 * recording why. */
static bool copy_values(const char *api, const void *value, uint64_t size, size_t esize, void **copy)
{
    *copy = NULL;
    if (!value && size > 0) {
        /* CANN's constructors make an empty object here; the emulator refuses the contradiction. */
        emu_error("%s: value is NULL but size is %" PRIu64, api, size);
        return false;
    }
    if (size > SIZE_MAX / esize) {
        emu_error("%s: size %" PRIu64 " is too large", api, size);
        return false;
    }
    if (size == 0)
        return true;
    *copy = malloc((size_t)size * esize);
    if (!*copy) {
        emu_error("%s: out of host memory", api);
        return false;
    }
    memcpy(*copy, value, (size_t)size * esize);
    return true;
}

/* Register obj in set and count it; false (message recorded) when out of host memory. */
static bool register_live(const char *api, ptr_set *set, const void *obj, emu_counter counter)
{
    MLOCK();
    bool ok = set_add(set, obj);
    MUNLOCK();
    if (!ok) {
        emu_error("%s: out of host memory", api);
        return false;
    }
    emu_counter_add(counter, +1);
    return true;
}

/* Take obj out of set; false (message recorded: the `noun` is not a live `what` made by `creator`) when it is
 * not there. */
static bool unregister_live(const char *api, ptr_set *set, const void *obj, const char *noun, const char *what,
                            const char *creator)
{
    MLOCK();
    bool live = set_remove(set, obj);
    MUNLOCK();
    if (!live)
        emu_error("%s: %s %p is not a live %s: it was already destroyed, or was not made by %s", api, noun, obj,
                  what, creator);
    return live;
}

static uint64_t m_tensor_serial; /* the last serial handed out (atomic) */

/*
 * The checks of aclCreateTensor and aclInitTensor, then the fields of *t from the arguments
 * (magic, serial and liveness untouched). Returns false after recording the message.
 */
static bool tensor_fill(const char *api, aclTensor *t, const int64_t *viewDims, uint64_t viewDimsNum,
                        aclDataType dataType, const int64_t *stride, int64_t offset, aclFormat format,
                        const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData)
{
    if (!viewDims && viewDimsNum > 0) {
        emu_error("%s: viewDims is NULL but viewDimsNum is %" PRIu64, api, viewDimsNum);
        return false;
    }
    if (!storageDims && storageDimsNum > 0) {
        emu_error("%s: storageDims is NULL but storageDimsNum is %" PRIu64, api, storageDimsNum);
        return false;
    }
    if (viewDimsNum > EMU_TENSOR_MAX_DIMS) {
        emu_error("%s: viewDimsNum %" PRIu64 " exceeds the maximum rank %d", api, viewDimsNum, EMU_TENSOR_MAX_DIMS);
        return false;
    }
    if (storageDimsNum > EMU_TENSOR_MAX_DIMS) {
        emu_error("%s: storageDimsNum %" PRIu64 " exceeds the maximum rank %d", api, storageDimsNum,
                  EMU_TENSOR_MAX_DIMS);
        return false;
    }
    /* Any dataType: CANN's constructor takes the value as it is (ToOpDataType, a cast;
     * ACL_DT_UNDEFINED and ACL_STRING included), and the operators' checks refuse the ones they
     * do not support (161002). Only the byte counts below need an element size. */
    uint32_t bits = emu_dtype_bits(dataType);
    for (uint64_t i = 0; i < viewDimsNum; i++) {
        if (viewDims[i] < 0) {
            emu_error("%s: viewDims[%" PRIu64 "] is %" PRId64 ": dims must be non-negative", api, i, viewDims[i]);
            return false;
        }
        if (stride && stride[i] < 0) {
            emu_error("%s: stride[%" PRIu64 "] is %" PRId64 ": strides must be non-negative", api, i, stride[i]);
            return false;
        }
    }
    for (uint64_t i = 0; i < storageDimsNum; i++) {
        if (storageDims[i] < 0) {
            emu_error("%s: storageDims[%" PRIu64 "] is %" PRId64 ": dims must be non-negative", api, i,
                      storageDims[i]);
            return false;
        }
    }
    if (offset < 0) {
        emu_error("%s: offset is %" PRId64 ": it must be non-negative", api, offset);
        return false;
    }
    int64_t numel, storage_numel, bytes;
    if (!dims_product(viewDims, viewDimsNum, &numel) || !dtype_bytes(numel, bits, &bytes)) {
        emu_error("%s: the number of bytes of viewDims overflows int64", api);
        return false;
    }
    if (!dims_product(storageDims, storageDimsNum, &storage_numel) || !dtype_bytes(storage_numel, bits, &bytes)) {
        emu_error("%s: the number of bytes of storageDims overflows int64", api);
        return false;
    }

    t->dtype = dataType;
    t->format = format;
    t->ndim = viewDimsNum;
    for (uint64_t i = 0; i < viewDimsNum; i++)
        t->dims[i] = viewDims[i];
    if (stride) {
        for (uint64_t i = 0; i < viewDimsNum; i++)
            t->strides[i] = stride[i];
    } else { /* C-contiguous strides from viewDims (CANN's constructor does the same) */
        int64_t s = 1;
        for (uint64_t i = viewDimsNum; i-- > 0;) {
            t->strides[i] = s;
            s *= viewDims[i] > 0 ? viewDims[i] : 1;
        }
    }
    t->offset = offset;
    t->storage_ndim = storageDimsNum;
    for (uint64_t i = 0; i < storageDimsNum; i++)
        t->storage_dims[i] = storageDims[i];
    t->data = tensorData;
    return true;
}

EMU_EXPORT aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                                      const int64_t *stride, int64_t offset, aclFormat format,
                                      const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData)
{
    static const char *api = "aclCreateTensor";
    if (emu_fault(api))
        return NULL;
    aclTensor *t = calloc(1, sizeof *t);
    if (!t) {
        emu_error("%s: out of host memory", api);
        return NULL;
    }
    if (!tensor_fill(api, t, viewDims, viewDimsNum, dataType, stride, offset, format, storageDims, storageDimsNum,
                     tensorData)) {
        free(t);
        return NULL;
    }
    t->magic = EMU_TENSOR_MAGIC;
    t->serial = __atomic_add_fetch(&m_tensor_serial, 1, __ATOMIC_RELAXED);

    if (!register_live(api, &m_tensors, t, EMU_COUNTER_TENSORS)) {
        free(t);
        return NULL;
    }
    return t;
}

/*
 * aclInitTensor (hicann/opbase aa3cd74 include/nnopbase/aclnn/acl_meta.h): describe a live
 * aclTensor anew, with aclCreateTensor's parameters (a tensor made by aclCreateTensor keeps its
 * handle; CANN's samples use it to give a converted weight its private format's view). The
 * arguments are checked as aclCreateTensor checks them; a tensor that is NULL or not live is
 * refused with ACLNN_ERR_PARAM_NULLPTR, invalid arguments with ACLNN_ERR_PARAM_INVALID, and the
 * tensor is then unchanged.
 */
EMU_EXPORT aclnnStatus aclInitTensor(aclTensor *tensor, const int64_t *viewDims, uint64_t viewDimsNum,
                                     aclDataType dataType, const int64_t *stride, int64_t offset,
                                     aclFormat format, const int64_t *storageDims, uint64_t storageDimsNum,
                                     void *tensorDataAddr)
{
    static const char *api = "aclInitTensor";
    EMU_RETURN_IF_FAULT(api);
    if (!tensor) {
        emu_error("%s: tensor is NULL", api);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    aclTensor fresh;
    memset(&fresh, 0, sizeof fresh);
    if (!tensor_fill(api, &fresh, viewDims, viewDimsNum, dataType, stride, offset, format, storageDims,
                     storageDimsNum, tensorDataAddr))
        return ACLNN_ERR_PARAM_INVALID;
    MLOCK();
    bool live = set_has(&m_tensors, tensor);
    if (live) {
        fresh.magic = tensor->magic;
        fresh.serial = tensor->serial;
        *tensor = fresh;
    }
    MUNLOCK();
    if (!live) {
        emu_error("%s: tensor %p is not a live aclTensor: it was already destroyed, or was not made by "
                  "aclCreateTensor", api, (const void *)tensor);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    return ACLNN_SUCCESS;
}

EMU_EXPORT aclnnStatus aclDestroyTensor(const aclTensor *tensor)
{
    static const char *api = "aclDestroyTensor";
    EMU_RETURN_IF_FAULT(api);
    if (!tensor)
        return ACLNN_SUCCESS;
    MLOCK();
    bool listed = set_has(&m_listed, tensor);
    bool live = !listed && set_remove(&m_tensors, tensor);
    MUNLOCK();
    if (listed) {
        /* Real CANN: a double free once the list is destroyed too; the emulator refuses. */
        emu_error("%s: tensor %p belongs to an aclTensorList: aclDestroyTensorList releases the tensors "
                  "of a list, so destroying it here as well would free it twice", api, (const void *)tensor);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    if (!live) {
        /* Real CANN: undefined behaviour (a debug-mode check only warns); the emulator refuses. */
        emu_error("%s: tensor %p is not a live aclTensor: it was already destroyed, or was not made by "
                  "aclCreateTensor", api, (const void *)tensor);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    aclTensor *t = (aclTensor *)tensor;
    t->magic = 0;
    free(t);
    emu_counter_add(EMU_COUNTER_TENSORS, -1);
    return ACLNN_SUCCESS;
}

/*
 * The tensor getters: copy `size` bytes of the field at `offset` in the
 * aclTensor to out, after the common checks. The field is read under the lock,
 * so a concurrent destroy cannot free the tensor mid-read.
 */
static aclnnStatus get_field(const char *api, const aclTensor *t, void *out, const char *out_name, size_t offset,
                             size_t size)
{
    EMU_RETURN_IF_FAULT(api);
    if (!t) {
        emu_error("%s: tensor is NULL", api);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (!out) {
        emu_error("%s: %s is NULL", api, out_name);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (!emu_tensor_is_live(t)) {
        emu_error("%s: tensor %p is not a live aclTensor (already destroyed, or not made by aclCreateTensor)", api,
                  (const void *)t);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    MLOCK();
    bool live = set_has(&m_tensors, t);
    if (live)
        memcpy(out, (const char *)t + offset, size);
    MUNLOCK();
    if (!live) {
        emu_error("%s: tensor %p was destroyed during the call", api, (const void *)t);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    return ACLNN_SUCCESS;
}

EMU_EXPORT bool emu_tensor_set_view_shape(const aclTensor *t, uint64_t serial, const int64_t *dims, uint64_t ndim)
{
    if (ndim > EMU_TENSOR_MAX_DIMS)
        return false;
    MLOCK();
    bool live = set_has(&m_tensors, t) && t->serial == serial;
    if (live) {
        aclTensor *w = (aclTensor *)t;
        w->ndim = w->storage_ndim = ndim;
        int64_t step = 1;
        for (uint64_t i = ndim; i-- > 0;) {
            w->dims[i] = w->storage_dims[i] = dims[i];
            w->strides[i] = step;
            step *= dims[i] > 0 ? dims[i] : 1;
        }
    }
    MUNLOCK();
    return live;
}

/*
 * aclGetViewShape, aclGetViewStrides, aclGetStorageShape: a new array of the field's values
 * into *values (CANN allocates it with new[], the caller releases it; here malloc, which
 * libstdc++'s new[] of int64_t is) and their number into *count. The checks and statuses are
 * CANN's (opbase acl_op_api.cpp: NULL arguments 161001), then the emulator's liveness check.
 */
enum { FIELD_VIEW_DIMS, FIELD_STRIDES, FIELD_STORAGE_DIMS };

static aclnnStatus get_array(const char *api, const aclTensor *t, int which, int64_t **values, uint64_t *count,
                             const char *values_name, const char *count_name)
{
    EMU_RETURN_IF_FAULT(api);
    if (!t || !values || !count) {
        emu_error("%s: %s is NULL", api, !t ? "tensor" : !values ? values_name : count_name);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    int64_t copy[EMU_TENSOR_MAX_DIMS];
    uint64_t n = 0;
    MLOCK();
    bool live = set_has(&m_tensors, t);
    if (live) {
        n = which == FIELD_STORAGE_DIMS ? t->storage_ndim : t->ndim;
        const int64_t *field = which == FIELD_VIEW_DIMS ? t->dims : which == FIELD_STRIDES ? t->strides
                                                                                          : t->storage_dims;
        memcpy(copy, field, (size_t)n * sizeof *copy);
    }
    MUNLOCK();
    if (!live) {
        emu_error("%s: tensor %p is not a live aclTensor (already destroyed, or not made by aclCreateTensor)", api,
                  (const void *)t);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    int64_t *made = malloc((n ? (size_t)n : 1) * sizeof *made); /* new int64_t[0] is not NULL either */
    if (!made) {
        emu_error("%s: out of host memory", api);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    memcpy(made, copy, (size_t)n * sizeof *made);
    *values = made;
    *count = n;
    return ACLNN_SUCCESS;
}

EMU_EXPORT aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum)
{
    return get_array("aclGetViewShape", tensor, FIELD_VIEW_DIMS, viewDims, viewDimsNum, "viewDims",
                     "viewDimsNum");
}

EMU_EXPORT aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue, uint64_t *stridesNum)
{
    return get_array("aclGetViewStrides", tensor, FIELD_STRIDES, stridesValue, stridesNum, "stridesValue",
                     "stridesNum");
}

EMU_EXPORT aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims, uint64_t *storageDimsNum)
{
    return get_array("aclGetStorageShape", tensor, FIELD_STORAGE_DIMS, storageDims, storageDimsNum, "storageDims",
                     "storageDimsNum");
}

EMU_EXPORT aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset)
{
    return get_field("aclGetViewOffset", tensor, offset, "offset", offsetof(aclTensor, offset), sizeof *offset);
}

EMU_EXPORT aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format)
{
    return get_field("aclGetFormat", tensor, format, "format", offsetof(aclTensor, format), sizeof *format);
}

EMU_EXPORT aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType)
{
    aclnnStatus st = get_field("aclGetDataType", tensor, dataType, "dataType", offsetof(aclTensor, dtype),
                               sizeof *dataType);
    /* CANN answers ACL_DT_UNDEFINED for a data type that is no aclDataType member (opbase
     * data_type_utils.h ToAclDataType; the members are acl_base_rt.h's). */
    if (st != ACLNN_SUCCESS)
        return st;
    switch (*dataType) {
    case ACL_FLOAT: case ACL_FLOAT16: case ACL_INT8: case ACL_INT32: case ACL_UINT8: case ACL_INT16:
    case ACL_UINT16: case ACL_UINT32: case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_BOOL:
    case ACL_STRING: case ACL_COMPLEX64: case ACL_COMPLEX128: case ACL_BF16: case ACL_INT4: case ACL_UINT1:
    case ACL_COMPLEX32: case ACL_HIFLOAT8: case ACL_FLOAT8_E5M2: case ACL_FLOAT8_E4M3FN: case ACL_FLOAT8_E8M0:
    case ACL_FLOAT6_E3M2: case ACL_FLOAT6_E2M3: case ACL_FLOAT4_E2M1: case ACL_FLOAT4_E1M2:
        break;
    default:
        *dataType = ACL_DT_UNDEFINED;
    }
    return st;
}

/* ------------------------------------------------------------------------- */
/* Scalars and integer arrays                                                */
/* ------------------------------------------------------------------------- */

#define EMU_SCALAR_MAGIC 0x5343414cu    /* "SCAL" */
#define EMU_INT_ARRAY_MAGIC 0x49415252u /* "IARR" */

/*
 * CANN's aclScalar copies the value, read as its dtype, into a union at creation
 * (common_types.cpp aclScalar::aclScalar(const void *, DataType)); a dtype outside its
 * list throws and aclCreateScalar returns nullptr. scalar_decode has that list: the dtypes
 * of acl_base_rt.h but DT_STRING, DT_INT4, DT_UINT1 and DT_COMPLEX32 (the 8-bit floats and the
 * packed 6- and 4-bit ones are read as one byte, their bits as given).
 */
struct aclScalar {
    uint32_t magic;
    aclDataType dtype;
    unsigned char bytes[EMU_SCALAR_MAX_BYTES]; /* the value as given, dtype-sized (bool: 0 or 1) */
    double value;            /* the same value as a double (see emu_scalar_read) */
};

struct aclIntArray {
    uint32_t magic;
    uint64_t size;
    int64_t *values; /* a copy; NULL when size is 0 */
};

/* fp16 bits -> double (exact). */
static double half_bits_to_double(uint16_t h)
{
    int exp = (h >> 10) & 0x1f;
    double mant = (double)(h & 0x3ff);
    double v;
    if (exp == 0x1f)
        v = mant != 0.0 ? NAN : INFINITY;
    else if (exp == 0)
        v = ldexp(mant, -24);
    else
        v = ldexp(mant + 1024.0, exp - 25);
    return (h & 0x8000u) ? -v : v;
}

/*
 * The narrow floats as CANN's aclScalar converts them (hicann/opbase
 * src/nnopbase/common/utils/float8_e5m2.cpp, float8_e4m3fn.cpp, float8_e8m0.cpp,
 * float6_e3m2.cpp, float6_e2m3.cpp, float4_e2m1.cpp, float4_e1m2.cpp, hifloat8.cpp).
 * minifloat: a sign bit, exp_bits of exponent (bias), man_bits of mantissa, subnormal when the
 * exponent is 0; the 6- and 4-bit ones take the low bits of their byte.
 */
static double minifloat(unsigned v, int exp_bits, int man_bits, int bias)
{
    unsigned sign = (v >> (exp_bits + man_bits)) & 1u, e = (v >> man_bits) & ((1u << exp_bits) - 1u);
    unsigned m = v & ((1u << man_bits) - 1u);
    double x = e == 0 ? ldexp((double)m, 1 - bias - man_bits)
                      : ldexp((double)(m + (1u << man_bits)), (int)e - bias - man_bits);
    return sign ? -x : x;
}

/* HiFloat8: a sign bit, then a dot field of 1 to 4 bits (0001, 001x, 01xx, 1xxx) telling the
 * width of the exponent that follows (0 to 4 bits, its top bit the exponent's sign), the rest
 * mantissa; 0000 marks the denormals 2^(e - 23). 0x80 is NaN, 0x6F and 0xEF the infinities. */
static double hifloat8(unsigned v)
{
    if (v == 0x80u)
        return NAN;
    double sign = (v & 0x80u) ? -1.0 : 1.0;
    if ((v & 0x7Fu) == 0x6Fu)
        return sign * INFINITY;
    unsigned field = (v & 0x78u) >> 3;
    if (field == 0) {
        unsigned e = v & 0x07u;
        return e == 0 ? 0.0 : sign * ldexp(1.0, (int)e - 23);
    }
    unsigned dot = field == 1 ? 0 : field < 4 ? 1 : field < 8 ? 2 : field < 12 ? 3 : 4;
    unsigned width = field == 1 ? 4 : field < 4 ? 3 : 2;
    unsigned mantissa_bits = 7 - (dot + width);
    double mantissa = ldexp((double)(v & ((1u << mantissa_bits) - 1u)), -(int)mantissa_bits);
    int exp = 0;
    if (dot > 0) {
        unsigned em = (v >> mantissa_bits) & ((1u << dot) - 1u);
        unsigned magnitude = em | (1u << (dot - 1));
        exp = (em & (1u << (dot - 1))) ? -(int)magnitude : (int)magnitude;
    }
    return sign * ldexp(1.0 + mantissa, exp);
}

/* The value bytes as a double; false for a dtype CANN's aclScalar does not take. */
static bool scalar_decode(aclDataType dtype, const void *p, double *out)
{
    switch (dtype) {
    case ACL_FLOAT: { float v; memcpy(&v, p, sizeof v); *out = v; return true; }
    case ACL_DOUBLE: { double v; memcpy(&v, p, sizeof v); *out = v; return true; }
    case ACL_FLOAT16: { uint16_t v; memcpy(&v, p, sizeof v); *out = half_bits_to_double(v); return true; }
    case ACL_BF16: {
        uint16_t h;
        memcpy(&h, p, sizeof h);
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        *out = f;
        return true;
    }
    case ACL_INT8: { int8_t v; memcpy(&v, p, sizeof v); *out = v; return true; }
    case ACL_UINT8: { uint8_t v; memcpy(&v, p, sizeof v); *out = v; return true; }
    case ACL_INT16: { int16_t v; memcpy(&v, p, sizeof v); *out = v; return true; }
    case ACL_UINT16: { uint16_t v; memcpy(&v, p, sizeof v); *out = v; return true; }
    case ACL_INT32: { int32_t v; memcpy(&v, p, sizeof v); *out = v; return true; }
    case ACL_UINT32: { uint32_t v; memcpy(&v, p, sizeof v); *out = v; return true; }
    case ACL_INT64: { int64_t v; memcpy(&v, p, sizeof v); *out = (double)v; return true; }
    case ACL_UINT64: { uint64_t v; memcpy(&v, p, sizeof v); *out = (double)v; return true; }
    case ACL_BOOL: { uint8_t v; memcpy(&v, p, sizeof v); *out = v != 0 ? 1.0 : 0.0; return true; }
    case ACL_COMPLEX64: { float v; memcpy(&v, p, sizeof v); *out = v; return true; }   /* real part */
    case ACL_COMPLEX128: { double v; memcpy(&v, p, sizeof v); *out = v; return true; } /* real part */
    case ACL_FLOAT8_E5M2: { /* infinities and NaNs at the top exponent */
        uint8_t v = *(const uint8_t *)p;
        *out = (v & 0x7Cu) != 0x7Cu ? minifloat(v, 5, 2, 15) : (v & 3u) ? NAN : (v & 0x80u) ? -INFINITY : INFINITY;
        return true;
    }
    case ACL_FLOAT8_E4M3FN: { /* no infinity; S.1111.111 is NaN */
        uint8_t v = *(const uint8_t *)p;
        *out = (v & 0x7Fu) == 0x7Fu ? NAN : minifloat(v, 4, 3, 7);
        return true;
    }
    case ACL_FLOAT8_E8M0: { /* 2^(e - 127), no sign; 0 is zero, 255 NaN */
        uint8_t v = *(const uint8_t *)p;
        *out = v == 0 ? 0.0 : v == 0xFFu ? NAN : ldexp(1.0, (int)v - 127);
        return true;
    }
    case ACL_FLOAT6_E3M2: *out = minifloat(*(const uint8_t *)p & 0x3Fu, 3, 2, 3); return true;
    case ACL_FLOAT6_E2M3: *out = minifloat(*(const uint8_t *)p & 0x3Fu, 2, 3, 1); return true;
    case ACL_FLOAT4_E2M1: *out = minifloat(*(const uint8_t *)p & 0x0Fu, 2, 1, 1); return true;
    case ACL_FLOAT4_E1M2: *out = minifloat(*(const uint8_t *)p & 0x0Fu, 1, 2, 1); return true;
    case ACL_HIFLOAT8: *out = hifloat8(*(const uint8_t *)p); return true;
    default: return false;
    }
}

EMU_EXPORT aclScalar *aclCreateScalar(void *value, aclDataType dataType)
{
    static const char *api = "aclCreateScalar";
    if (emu_fault(api))
        return NULL;
    if (!value) { /* CANN: nullptr, nothing logged */
        emu_error("%s: value is NULL (a host pointer to the value is required)", api);
        return NULL;
    }
    uint32_t bits = emu_dtype_bits(dataType);
    size_t size = bits < 8 ? 1 : bits / 8; /* CANN reads the packed sub-byte floats as one byte */
    double decoded;
    if (bits == 0 || size > EMU_SCALAR_MAX_BYTES || !scalar_decode(dataType, value, &decoded)) {
        emu_error("%s: dataType %d (%s) is not supported for a scalar", api, (int)dataType,
                  emu_dtype_name(dataType));
        return NULL;
    }
    aclScalar *s = calloc(1, sizeof *s);
    if (!s) {
        emu_error("%s: out of host memory", api);
        return NULL;
    }
    s->magic = EMU_SCALAR_MAGIC;
    s->dtype = dataType;
    memcpy(s->bytes, value, size);
    if (dataType == ACL_BOOL)
        s->bytes[0] = s->bytes[0] != 0; /* CANN reads the byte; any non-zero one is true */
    s->value = decoded;
    if (!register_live(api, &m_scalars, s, EMU_COUNTER_SCALARS)) {
        free(s);
        return NULL;
    }
    return s;
}

EMU_EXPORT aclnnStatus aclDestroyScalar(const aclScalar *scalar)
{
    static const char *api = "aclDestroyScalar";
    EMU_RETURN_IF_FAULT(api);
    if (!scalar)
        return ACLNN_SUCCESS;
    MLOCK();
    bool listed = set_has(&m_listed_scalars, scalar);
    MUNLOCK();
    if (listed) {
        /* Real CANN: a double free once the list is destroyed too; the emulator refuses. */
        emu_error("%s: scalar %p belongs to an aclScalarList: aclDestroyScalarList releases the scalars "
                  "of a list, so destroying it here as well would free it twice", api, (const void *)scalar);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    /* Real CANN: undefined behaviour (a debug-mode check only warns); the emulator refuses. */
    if (!unregister_live(api, &m_scalars, scalar, "scalar", "aclScalar", "aclCreateScalar"))
        return ACLNN_ERR_INNER_NULLPTR;
    aclScalar *s = (aclScalar *)scalar;
    s->magic = 0;
    free(s);
    emu_counter_add(EMU_COUNTER_SCALARS, -1);
    return ACLNN_SUCCESS;
}

EMU_EXPORT bool emu_scalar_read_bytes(const aclScalar *s, unsigned char *bytes, aclDataType *dtype)
{
    MLOCK();
    bool live = set_has(&m_scalars, s);
    if (live) {
        memcpy(bytes, s->bytes, EMU_SCALAR_MAX_BYTES);
        if (dtype)
            *dtype = s->dtype;
    }
    MUNLOCK();
    return live;
}

EMU_EXPORT bool emu_scalar_read(const aclScalar *s, double *value, aclDataType *dtype)
{
    MLOCK();
    bool live = set_has(&m_scalars, s);
    if (live) {
        if (value)
            *value = s->value;
        if (dtype)
            *dtype = s->dtype;
    }
    MUNLOCK();
    return live;
}

/* ------------------------------------------------------------------------- */
/* Float and bool arrays, tensor lists                                       */
/* ------------------------------------------------------------------------- */

#define EMU_FLOAT_ARRAY_MAGIC 0x46415252u /* "FARR" */
#define EMU_BOOL_ARRAY_MAGIC 0x42415252u  /* "BARR" */
#define EMU_TENSOR_LIST_MAGIC 0x544c5354u /* "TLST" */

/* CANN's aclArray<T> copies the values (common_types.cpp); so do these. */
struct aclFloatArray {
    uint32_t magic;
    uint64_t size;
    float *values; /* NULL when size is 0 */
};

struct aclBoolArray {
    uint32_t magic;
    uint64_t size;
    bool *values; /* NULL when size is 0 */
};

/* A list of handles: aclTensorList and aclScalarList (see list_kind). */
typedef struct {
    uint32_t magic;
    uint64_t size;
    void **items; /* NULL when size is 0 */
} pointer_list;

struct aclTensorList {
    pointer_list list; /* of aclTensor * */
};


/* Any non-zero byte of a bool value reads as true. */
static void bool_values_normalize(aclBoolArray *a)
{
    for (uint64_t i = 0; i < a->size; i++)
        a->values[i] = ((const unsigned char *)a->values)[i] != 0;
}

/*
 * aclCreate<Name>Array and aclDestroy<Name>Array for an array struct of magic, size and values
 * (CType *): the values copied, the array registered live in SET and counted in COUNTER. FIXUP
 * (a function taking the new array, or nothing) adjusts the copied values.
 */
#define EMU_DEFINE_ARRAY(Name, CType, MAGIC, SET, COUNTER, FIXUP)                                \
    EMU_EXPORT acl##Name##Array *aclCreate##Name##Array(const CType *value, uint64_t size)       \
    {                                                                                            \
        static const char *api = "aclCreate" #Name "Array";                                      \
        if (emu_fault(api))                                                                      \
            return NULL;                                                                         \
        void *copy;                                                                              \
        if (!copy_values(api, value, size, sizeof(CType), &copy))                                \
            return NULL;                                                                         \
        acl##Name##Array *a = calloc(1, sizeof *a);                                              \
        if (!a) {                                                                                \
            free(copy);                                                                          \
            emu_error("%s: out of host memory", api);                                            \
            return NULL;                                                                         \
        }                                                                                        \
        a->magic = MAGIC;                                                                        \
        a->size = size;                                                                          \
        a->values = copy;                                                                        \
        FIXUP(a);                                                                                \
        if (!register_live(api, &SET, a, COUNTER)) {                                             \
            free(copy);                                                                          \
            free(a);                                                                             \
            return NULL;                                                                         \
        }                                                                                        \
        return a;                                                                                \
    }                                                                                            \
                                                                                                 \
    EMU_EXPORT aclnnStatus aclDestroy##Name##Array(const acl##Name##Array *array)                \
    {                                                                                            \
        static const char *api = "aclDestroy" #Name "Array";                                     \
        EMU_RETURN_IF_FAULT(api);                                                                \
        if (!array)                                                                              \
            return ACLNN_SUCCESS;                                                                \
        if (!unregister_live(api, &SET, array, "array", "acl" #Name "Array", "aclCreate" #Name "Array")) \
            return ACLNN_ERR_INNER_NULLPTR;                                                      \
        acl##Name##Array *a = (acl##Name##Array *)array;                                         \
        a->magic = 0;                                                                            \
        free(a->values);                                                                         \
        free(a);                                                                                 \
        emu_counter_add(COUNTER, -1);                                                            \
        return ACLNN_SUCCESS;                                                                    \
    }

#define EMU_ARRAY_NO_FIXUP(a) ((void)(a))

/* aclIntArray: as CANN, except that a NULL value with a non-zero size is refused. */
EMU_DEFINE_ARRAY(Int, int64_t, EMU_INT_ARRAY_MAGIC, m_int_arrays, EMU_COUNTER_INT_ARRAYS, EMU_ARRAY_NO_FIXUP)
EMU_DEFINE_ARRAY(Float, float, EMU_FLOAT_ARRAY_MAGIC, m_float_arrays, EMU_COUNTER_FLOAT_ARRAYS, EMU_ARRAY_NO_FIXUP)
EMU_DEFINE_ARRAY(Bool, bool, EMU_BOOL_ARRAY_MAGIC, m_bool_arrays, EMU_COUNTER_BOOL_ARRAYS, bool_values_normalize)

/*
 * What tells the two lists of handles apart: aclTensorList and aclScalarList (hicann/opbase
 * aa3cd74b7f6d src/nnopbase/common/api/acl_op_api.cpp; aclTensorList::aclTensorList in
 * common_types.cpp): each copies the array of pointers and its destruction destroys every
 * member; members may be NULL; the others must be live and belong to no list (this one
 * included: they would be freed twice), each registered in `listed` until the list is
 * destroyed, so that their own destroy function refuses them.
 */
typedef struct {
    const char *list_type, *member_type, *member_create; /* names for the messages */
    uint32_t magic;
    ptr_set *lists, *members, *listed;
    int list_counter;    /* an emu_counter, or -1 */
    emu_counter member_counter;
} list_kind;

/* Releasing a listed member: its magic cleared, freed (aclTensor and aclScalar start with it). */
static void member_free(void *member)
{
    *(uint32_t *)member = 0;
    free(member);
}

enum { MEMBER_OK, MEMBER_NOT_LIVE, MEMBER_LISTED, MEMBER_NO_MEMORY, LIST_NO_MEMORY };

/* aclCreate<Kind>List into *out (a calloc'ed struct of one pointer_list), or false with the message. */
static bool list_create(const list_kind *k, const char *api, const void *const *value, uint64_t size,
                        pointer_list *l)
{
    void *copy;
    if (!copy_values(api, value, size, sizeof(void *), &copy))
        return false;
    void **items = copy;
    l->magic = k->magic;
    l->size = size;
    l->items = items;

    int why = MEMBER_OK;
    uint64_t bad = 0;
    MLOCK();
    for (; bad < size && why == MEMBER_OK; bad++) {
        const void *m = items[bad];
        if (!m)
            continue;
        if (!set_has(k->members, m))
            why = MEMBER_NOT_LIVE;
        else if (set_has(k->listed, m))
            why = MEMBER_LISTED;
        else if (!set_add(k->listed, m))
            why = MEMBER_NO_MEMORY;
    }
    if (why == MEMBER_OK && !set_add(k->lists, l))
        why = LIST_NO_MEMORY;
    if (why != MEMBER_OK) {
        uint64_t added = why == LIST_NO_MEMORY ? size : bad - 1;
        for (uint64_t i = 0; i < added; i++)
            if (items[i])
                set_remove(k->listed, items[i]);
    }
    MUNLOCK();

    if (why != MEMBER_OK) {
        uint64_t i = bad - 1;
        const void *m = i < size ? items[i] : NULL;
        bool twice = false;
        for (uint64_t j = 0; why == MEMBER_LISTED && j < i; j++)
            twice = twice || items[j] == items[i];
        if (why == MEMBER_NOT_LIVE)
            emu_error("%s: value[%" PRIu64 "] (%p) is not a live %s: it was destroyed, or was not made "
                      "by %s", api, i, m, k->member_type, k->member_create);
        else if (why == MEMBER_LISTED && twice)
            emu_error("%s: value[%" PRIu64 "] (%p) is already in this list: it would be destroyed twice",
                      api, i, m);
        else if (why == MEMBER_LISTED)
            emu_error("%s: value[%" PRIu64 "] (%p) already belongs to another %s, which releases it: "
                      "two lists would destroy it twice", api, i, m, k->list_type);
        else
            emu_error("%s: out of host memory", api);
        free(items);
        return false;
    }
    if (k->list_counter >= 0)
        emu_counter_add((emu_counter)k->list_counter, +1);
    return true;
}

/* aclDestroy<Kind>List of the list l (its struct freed by the caller on success). */
static aclnnStatus list_destroy(const list_kind *k, const char *api, pointer_list *l, const void *handle)
{
    int64_t destroyed = 0;
    MLOCK();
    bool live = set_remove(k->lists, l);
    for (uint64_t i = 0; live && i < l->size; i++) {
        void *m = l->items[i];
        if (!m)
            continue;
        set_remove(k->listed, m);
        if (set_remove(k->members, m)) { /* always: the member's own destroy refuses a listed one */
            member_free(m);
            destroyed++;
        }
    }
    MUNLOCK();
    if (!live) {
        emu_error("%s: list %p is not a live %s: it was already destroyed, or was not made by "
                  "aclCreate%s", api, handle, k->list_type, k->list_type + 3);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    l->magic = 0;
    free(l->items);
    emu_counter_add(k->member_counter, -destroyed);
    if (k->list_counter >= 0)
        emu_counter_add((emu_counter)k->list_counter, -1);
    return ACLNN_SUCCESS;
}

static const list_kind k_tensor_lists = {"aclTensorList", "aclTensor", "aclCreateTensor", EMU_TENSOR_LIST_MAGIC,
                                         &m_tensor_lists, &m_tensors, &m_listed, EMU_COUNTER_TENSOR_LISTS,
                                         EMU_COUNTER_TENSORS};

EMU_EXPORT aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size)
{
    static const char *api = "aclCreateTensorList";
    if (emu_fault(api))
        return NULL;
    aclTensorList *l = calloc(1, sizeof *l);
    if (!l) {
        emu_error("%s: out of host memory", api);
        return NULL;
    }
    if (!list_create(&k_tensor_lists, api, (const void *const *)value, size, &l->list)) {
        free(l);
        return NULL;
    }
    return l;
}

EMU_EXPORT aclnnStatus aclDestroyTensorList(const aclTensorList *array)
{
    static const char *api = "aclDestroyTensorList";
    EMU_RETURN_IF_FAULT(api);
    if (!array)
        return ACLNN_SUCCESS;
    aclTensorList *l = (aclTensorList *)array;
    aclnnStatus rc = list_destroy(&k_tensor_lists, api, &l->list, array);
    if (rc == ACLNN_SUCCESS)
        free(l);
    return rc;
}

EMU_EXPORT bool emu_tensor_list_read(const aclTensorList *list, uint64_t *size, const aclTensor **tensors,
                                     uint64_t capacity)
{
    MLOCK();
    bool live = set_has(&m_tensor_lists, list);
    if (live) {
        *size = list->list.size;
        for (uint64_t i = 0; i < list->list.size && i < capacity; i++)
            tensors[i] = list->list.items[i];
    }
    MUNLOCK();
    return live;
}

/* aclScalarList (hicann/opbase aa3cd74b7f6d include/nnopbase/aclnn/acl_meta.h): as aclTensorList
 * (list_kind), aclDestroyScalarList destroying each scalar in it, NULL accepted. */
struct aclScalarList {
    pointer_list list; /* of aclScalar * */
};

#define EMU_SCALAR_LIST_MAGIC 0x53434c53u /* "SCLS" */

static const list_kind k_scalar_lists = {"aclScalarList", "aclScalar", "aclCreateScalar", EMU_SCALAR_LIST_MAGIC,
                                         &m_scalar_lists, &m_scalars, &m_listed_scalars, -1,
                                         EMU_COUNTER_SCALARS};

EMU_EXPORT aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size)
{
    static const char *api = "aclCreateScalarList";
    if (emu_fault(api))
        return NULL;
    aclScalarList *l = calloc(1, sizeof *l);
    if (!l) {
        emu_error("%s: out of host memory", api);
        return NULL;
    }
    if (!list_create(&k_scalar_lists, api, (const void *const *)value, size, &l->list)) {
        free(l);
        return NULL;
    }
    return l;
}

EMU_EXPORT bool emu_scalar_list_read(const aclScalarList *list, uint64_t *size, const aclScalar **scalars,
                                     uint64_t capacity)
{
    MLOCK();
    bool live = set_has(&m_scalar_lists, list);
    if (live) {
        *size = list->list.size;
        for (uint64_t i = 0; i < list->list.size && i < capacity; i++)
            scalars[i] = list->list.items[i];
    }
    MUNLOCK();
    return live;
}

EMU_EXPORT aclnnStatus aclDestroyScalarList(const aclScalarList *array)
{
    static const char *api = "aclDestroyScalarList";
    EMU_RETURN_IF_FAULT(api);
    if (!array)
        return ACLNN_SUCCESS;
    aclScalarList *l = (aclScalarList *)array;
    aclnnStatus rc = list_destroy(&k_scalar_lists, api, &l->list, array);
    if (rc == ACLNN_SUCCESS)
        free(l);
    return rc;
}

/* emu_<name>_array_read: the size and up to capacity values of a live array. */
#define EMU_DEFINE_ARRAY_READ(name, Name, CType, SET)                                                \
    EMU_EXPORT bool emu_##name##_array_read(const acl##Name##Array *array, uint64_t *size, CType *values, \
                                            uint64_t capacity)                                         \
    {                                                                                                \
        MLOCK();                                                                                     \
        bool live = set_has(&SET, array);                                                            \
        if (live) {                                                                                  \
            *size = array->size;                                                                     \
            if (array->size > 0 && capacity > 0)                                                     \
                memcpy(values, array->values,                                                        \
                       (size_t)(array->size < capacity ? array->size : capacity) * sizeof *values);  \
        }                                                                                            \
        MUNLOCK();                                                                                   \
        return live;                                                                                 \
    }

EMU_DEFINE_ARRAY_READ(int, Int, int64_t, m_int_arrays)
EMU_DEFINE_ARRAY_READ(float, Float, float, m_float_arrays)
EMU_DEFINE_ARRAY_READ(bool, Bool, bool, m_bool_arrays)

/* ------------------------------------------------------------------------- */
/* The aclnn executor cache, modelled (ACLNN_EMU_OP_CACHE=1)                  */
/* ------------------------------------------------------------------------- */

/*
 * What CANN does (hicann/opbase src/nnopbase/common/utils/op_cache.cpp, acl_op_api.cpp, and
 * docs aclSetAclOpExecutorRepeatable.md, in our words): nnopbase keeps the executors of ordinary
 * (non-repeatable) two-phase calls in a cache keyed by a hash of the operator and the
 * descriptions of its arguments. Phase 1 of the same operator with the same signature later
 * hands out the cached executor, with the new call's addresses. aclSetAclOpExecutorRepeatable
 * recognises only freshly built executors and returns ACLNN_ERR_INNER (561000) for a cached one.
 *
 * The model keeps only the signatures that ran: an executor built for one of them is an
 * ordinary non-repeatable executor (same checks, same launch, consumed by phase 2) marked
 * from_cache, and aclSetAclOpExecutorRepeatable refuses it. The set is emptied by every aclInit
 * that turns the cache on (see emu_op_cache_epoch) and when it reaches EMU_OP_CACHE_LIMIT
 * signatures. Guarded by m_mu.
 */
#define EMU_OP_CACHE_LIMIT 65536

typedef struct sig_node {
    struct sig_node *next;
    uint64_t hash;
    size_t len;
    unsigned char bytes[];
} sig_node;

static sig_node **m_sigs; /* buckets */
static size_t m_sig_buckets, m_sig_count;
static uint64_t m_sig_epoch;

static uint64_t sig_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void sigs_clear(void)
{
    for (size_t b = 0; b < m_sig_buckets; b++) {
        for (sig_node *n = m_sigs[b], *next; n; n = next) {
            next = n->next;
            free(n);
        }
    }
    free(m_sigs);
    m_sigs = NULL;
    m_sig_buckets = m_sig_count = 0;
}

/* The set of `epoch` (emptied when the epoch changed). m_mu held. */
static void sigs_enter(uint64_t epoch)
{
    if (m_sig_epoch != epoch) {
        sigs_clear();
        m_sig_epoch = epoch;
    }
}

static bool sigs_has(uint64_t h, const unsigned char *p, size_t n)
{
    if (!m_sig_buckets)
        return false;
    for (const sig_node *node = m_sigs[h & (m_sig_buckets - 1)]; node; node = node->next)
        if (node->hash == h && node->len == n && memcmp(node->bytes, p, n) == 0)
            return true;
    return false;
}

/* Add a signature (best effort: out of host memory, it is not cached). m_mu held. */
static void sigs_add(uint64_t h, const unsigned char *p, size_t n)
{
    if (sigs_has(h, p, n))
        return;
    if (m_sig_count >= EMU_OP_CACHE_LIMIT)
        sigs_clear(); /* CANN's cache has a size limit too */
    if (m_sig_count + 1 > m_sig_buckets) {
        size_t buckets = m_sig_buckets ? 2 * m_sig_buckets : 64;
        sig_node **grown = calloc(buckets, sizeof *grown);
        if (!grown)
            return;
        for (size_t b = 0; b < m_sig_buckets; b++) {
            for (sig_node *node = m_sigs[b], *next; node; node = next) {
                next = node->next;
                node->next = grown[node->hash & (buckets - 1)];
                grown[node->hash & (buckets - 1)] = node;
            }
        }
        free(m_sigs);
        m_sigs = grown;
        m_sig_buckets = buckets;
    }
    sig_node *node = malloc(sizeof *node + n);
    if (!node)
        return;
    node->hash = h;
    node->len = n;
    memcpy(node->bytes, p, n);
    node->next = m_sigs[h & (m_sig_buckets - 1)];
    m_sigs[h & (m_sig_buckets - 1)] = node;
    m_sig_count++;
}

EMU_EXPORT void emu_executor_set_signature(aclOpExecutor *executor, const void *signature, size_t len)
{
    uint64_t epoch = emu_op_cache_epoch(); /* libascendcl: called without m_mu */
    if (!epoch || !executor || !signature || !len)
        return;
    unsigned char *copy = malloc(len);
    if (!copy)
        return; /* not cacheable: it behaves as with the cache off */
    memcpy(copy, signature, len);
    uint64_t h = sig_hash(copy, len);
    MLOCK();
    sigs_enter(epoch);
    bool cached = sigs_has(h, copy, len);
    free(executor->signature);
    executor->signature = copy;
    executor->signature_len = len;
    executor->from_cache = cached;
    MUNLOCK();
    if (cached)
        emu_counter_add(EMU_COUNTER_CACHED_EXECUTORS, +1);
}

/* After a successful non-repeatable launch: the signature has now run non-repeatably. */
static void executor_cache_signature(const aclOpExecutor *e)
{
    if (!e->signature)
        return;
    uint64_t epoch = emu_op_cache_epoch();
    if (!epoch)
        return;
    MLOCK();
    sigs_enter(epoch);
    sigs_add(sig_hash(e->signature, e->signature_len), e->signature, e->signature_len);
    MUNLOCK();
}

/* ------------------------------------------------------------------------- */
/* Executors                                                                 */
/* ------------------------------------------------------------------------- */

EMU_EXPORT aclOpExecutor *emu_executor_new(const char *op_name)
{
    aclOpExecutor *e = calloc(1, sizeof *e);
    if (e) {
        e->magic = EMU_EXECUTOR_MAGIC;
        e->op_name = op_name;
        MLOCK();
        bool ok = set_add(&m_executors, e);
        MUNLOCK();
        if (!ok) {
            free(e);
            e = NULL;
        }
    }
    if (!e) {
        emu_error("%s: failed to create the executor: out of host memory", op_name ? op_name : "executor");
        return NULL;
    }
    emu_counter_add(EMU_COUNTER_EXECUTORS, +1);
    return e;
}

/* The operator's name for messages, or `fallback` when it has none. */
static const char *op_label(const aclOpExecutor *e, const char *fallback)
{
    return e->op_name ? e->op_name : fallback;
}

/* Free an executor already removed from the registry (no lock held). */
static void executor_free(aclOpExecutor *e)
{
    if (e->release_op)
        e->release_op(e);
    free(e->signature);
    e->magic = 0;
    free(e);
    emu_counter_add(EMU_COUNTER_EXECUTORS, -1);
}

EMU_EXPORT void emu_executor_discard(aclOpExecutor *executor)
{
    if (!executor)
        return;
    MLOCK();
    bool live = set_remove(&m_executors, executor);
    MUNLOCK();
    if (live)
        executor_free(executor);
}

/* Whether an operator's launch() returned an aclnnStatus worth passing through. */
static bool is_aclnn_status(aclError rc)
{
    return rc == ACLNN_ERR_PARAM_NULLPTR || rc == ACLNN_ERR_PARAM_INVALID || rc == ACLNN_ERR_RUNTIME_ERROR ||
           (rc >= ACLNN_ERR_INNER && rc < ACLNN_ERR_INNER + 200);
}

/*
 * Whether executor is live; if it is and is not repeatable, it is also taken
 * out of the registry (*consume = true): the caller then frees it once done.
 */
static bool executor_claim(aclOpExecutor *executor, bool *consume)
{
    MLOCK();
    bool live = set_has(&m_executors, executor);
    *consume = live && !executor->repeatable;
    if (*consume)
        set_remove(&m_executors, executor);
    MUNLOCK();
    return live;
}

/* The message and status for an executor handle that is not live. */
static aclnnStatus executor_not_live(const char *api, const aclOpExecutor *executor)
{
    emu_error("%s: executor %p is not valid: it is NULL, was already consumed by a launch, or destroyed", api,
              (const void *)executor);
    return ACLNN_ERR_INNER_NULLPTR;
}

EMU_EXPORT aclnnStatus emu_executor_run(const char *api, void *workspace, uint64_t workspace_size,
                                        aclOpExecutor *executor, aclrtStream stream)
{
    /* a non-repeatable executor is consumed by this call whatever happens (CANN: CommonOpExecutorRun deletes it) */
    bool consume;
    if (!executor_claim(executor, &consume)) {
        emu_error("%s: executor is not valid: it was already consumed by a launch or destroyed (executor %p)",
                  api, (void *)executor);
        return ACLNN_ERR_INNER_NULLPTR;
    }

    aclnnStatus rc = ACLNN_SUCCESS;
    uint64_t need = executor->workspace_size;
    if (!workspace && workspace_size > 0) {
        emu_error("%s: workspace is NULL but workspaceSize is %" PRIu64, api, workspace_size);
        rc = ACLNN_ERR_PARAM_NULLPTR;
    } else if (workspace_size < need) {
        emu_error("%s: workspaceSize %" PRIu64 " is smaller than the %" PRIu64
                  " bytes required (the size returned by phase 1)", api, workspace_size, need);
        rc = ACLNN_ERR_PARAM_INVALID;
    } else if (need > 0 && !emu_devmem_contains(workspace, need, NULL)) {
        emu_error("%s: workspace %p is not inside one live device allocation of at least the %" PRIu64
                  " bytes required (host memory, a freed buffer, or too small an allocation)",
                  api, workspace, need);
        rc = ACLNN_ERR_PARAM_INVALID;
    } else if (!executor->launch) {
        emu_error("%s: internal error: executor of %s has no launch function", api, op_label(executor, "operator"));
        rc = ACLNN_ERR_INNER;
    } else {
        aclError lrc = executor->launch(executor, workspace, workspace_size, stream, api);
        if (lrc != ACL_SUCCESS) {
            if (is_aclnn_status(lrc)) {
                rc = lrc;
            } else {
                emu_error("%s: launching %s on the stream failed: runtime error %d", api,
                          op_label(executor, "the operator"), lrc);
                rc = ACLNN_ERR_RUNTIME_ERROR;
            }
        } else {
            emu_counter_add(EMU_COUNTER_LAUNCHES, +1);
            if (consume)
                executor_cache_signature(executor);
        }
    }
    if (consume)
        executor_free(executor);
    return rc;
}

EMU_EXPORT aclnnStatus emu_executor_fault(const char *api, aclOpExecutor *executor)
{
    int32_t f = emu_fault(api);
    if (!f)
        return 0;
    /* An injected phase-2 failure is a failed phase 2: a non-repeatable executor is consumed. */
    bool consume;
    executor_claim(executor, &consume);
    if (consume)
        executor_free(executor);
    return f;
}

EMU_EXPORT aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor)
{
    static const char *api = "aclSetAclOpExecutorRepeatable";
    EMU_RETURN_IF_FAULT(api);
    MLOCK();
    bool live = set_has(&m_executors, executor);
    bool cached = live && executor->from_cache;
    if (live && !cached)
        executor->repeatable = true;
    MUNLOCK();
    if (!live)
        return executor_not_live(api, executor);
    if (cached) {
        emu_error("%s: the executor of %s came from the aclnn executor cache (phase 1 of the same operator "
                  "and signature already ran non-repeatably in this process; ACLNN_EMU_OP_CACHE=1): a cached "
                  "executor cannot be made repeatable; launch it once non-repeatably (phase 2 consumes it)",
                  api, op_label(executor, "the operator"));
        return ACLNN_ERR_INNER;
    }
    return ACLNN_SUCCESS;
}

EMU_EXPORT aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
    static const char *api = "aclDestroyAclOpExecutor";
    EMU_RETURN_IF_FAULT(api);
    MLOCK();
    bool live = set_remove(&m_executors, executor);
    MUNLOCK();
    if (!live) {
        emu_error("%s: executor %p is not valid: it is NULL, was already consumed by a launch (a non-repeatable "
                  "executor is freed by phase 2 and must not be destroyed), or was already destroyed", api,
                  (void *)executor);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    executor_free(executor);
    return ACLNN_SUCCESS;
}

enum { SET_INPUT, SET_OUTPUT, SET_ANY };

static aclnnStatus set_tensor_addr(const char *api, int which, aclOpExecutor *executor, size_t index,
                                   aclTensor *tensor, void *addr)
{
    EMU_RETURN_IF_FAULT(api);
    MLOCK();
    if (!set_has(&m_executors, executor)) {
        MUNLOCK();
        return executor_not_live(api, executor);
    }
    if (!executor->repeatable) {
        MUNLOCK();
        emu_error("%s: executor is not repeatable: call aclSetAclOpExecutorRepeatable right after phase 1", api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!tensor) {
        MUNLOCK();
        emu_error("%s: tensor is NULL", api);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    aclTensor *snap;
    const aclTensor *caller;
    const char *kind;
    size_t local;
    size_t n_in = executor->n_inputs, n_out = executor->n_outputs;
    const char *op = op_label(executor, "the operator");
    if (which == SET_INPUT || (which == SET_ANY && index < n_in)) {
        if (index >= n_in) {
            MUNLOCK();
            emu_error("%s: index %zu is out of range: %s has %zu input(s)", api, index, op, n_in);
            return ACLNN_ERR_PARAM_INVALID;
        }
        local = index;
        snap = &executor->inputs[local];
        caller = executor->caller_inputs[local];
        kind = "input";
    } else {
        local = which == SET_ANY ? index - n_in : index;
        if (local >= n_out) {
            MUNLOCK();
            if (which == SET_ANY)
                emu_error("%s: index %zu is out of range: %s has %zu input(s) and %zu output(s)", api, index, op,
                          n_in, n_out);
            else
                emu_error("%s: index %zu is out of range: %s has %zu output(s)", api, index, op, n_out);
            return ACLNN_ERR_PARAM_INVALID;
        }
        snap = &executor->outputs[local];
        caller = executor->caller_outputs[local];
        kind = "output";
    }
    if (!snap->data) {
        MUNLOCK();
        emu_error("%s: %s %zu had a NULL data address in phase 1: its address cannot be updated", api, kind, local);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (tensor != caller) {
        MUNLOCK();
        emu_error("%s: tensor %p is not the aclTensor passed as %s %zu in phase 1 (%p)", api, (void *)tensor, kind,
                  local, (const void *)caller);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!addr) {
        MUNLOCK();
        emu_error("%s: addr is NULL", api);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    snap->data = addr;
    if (set_has(&m_tensors, tensor))
        tensor->data = addr;
    MUNLOCK();
    return ACLNN_SUCCESS;
}

EMU_EXPORT aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                             void *addr)
{
    return set_tensor_addr("aclSetInputTensorAddr", SET_INPUT, executor, index, tensor, addr);
}

EMU_EXPORT aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                              void *addr)
{
    return set_tensor_addr("aclSetOutputTensorAddr", SET_OUTPUT, executor, index, tensor, addr);
}

EMU_EXPORT aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    return set_tensor_addr("aclSetTensorAddr", SET_ANY, executor, index, tensor, addr);
}

/* ------------------------------------------------------------------------- */
/* aclnnInit / aclnnFinalize                                                 */
/* ------------------------------------------------------------------------- */

static aclnnStatus set_aclnn_inited(const char *api, bool inited)
{
    EMU_RETURN_IF_FAULT(api);
    MLOCK();
    m_aclnn_inited = inited;
    MUNLOCK();
    return ACLNN_SUCCESS;
}

EMU_EXPORT aclnnStatus aclnnInit(const char *configPath)
{
    return set_aclnn_inited("aclnnInit", true);
}

EMU_EXPORT aclnnStatus aclnnFinalize(void)
{
    return set_aclnn_inited("aclnnFinalize", false);
}
