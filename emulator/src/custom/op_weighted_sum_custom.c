/*
 * aclnnWeightedSumCustom: the second operator of the emulator's custom operator package, taking a
 * tensor list, a float array and a bool array and writing a tensor list, so that these argument
 * kinds are exercised end to end:
 *   y        = 0 + the sum, in list order, of weights[i] * x[i] over the i where mask[i] is true
 *   terms[i] = mask[i] ? weights[i] * x[i] : 0
 * x holds n >= 1 tensors; weights, mask and terms have n entries; x's tensors, y and terms' tensors
 * share one dtype (FLOAT16 or FLOAT, plus BF16 on a bfloat16 SoC) and one shape (no broadcasting;
 * any strides). Computed in float32: each product rounded to float32, the sum accumulated in
 * float32, each result rounded to the dtype (nearest even) once, when stored. No workspace.
 *
 * Its header declares every tensor argument const, in the style of the package's AddCustom header
 * (x and terms `const aclTensorList *`); the package's ops-info description names y and terms as
 * the outputs, terms a dynamic one.
 *
 * Phase 1: workspaceSize / executor NULL (161001), executor creation (561101), x, weights, mask,
 * y, terms NULL (161001); emulator-only: each of them live (161001); then n >= 1 and the lengths
 * of weights, mask and terms (161002); each member given (161001) and live (161001); dtypes, one
 * dtype, ranks, one shape (161002); each view and its device memory (161002). The tensors are
 * taken at phase 1: the executor has no tensor to rebind (aclSetDynamic*TensorAddr is not
 * emulated), and its launch re-checks every range when it runs, as the other kernels do.
 */
#include <stdlib.h>

#include "../ops_core.h"

#define WSUM_NAME "WeightedSumCustom"

typedef struct {
    uint64_t n;
    aclTensor *x;     /* n tensors, as phase 1 saw them */
    aclTensor *terms; /* n tensors */
    aclTensor y;
    float *weights;   /* n values */
    bool *mask;       /* n values */
} wsum_args;

typedef struct {
    bool used;
    emu_range r;
} wsum_operand;

typedef struct {
    emu_task base; /* first */
    wsum_args a;
    wsum_operand *mem; /* pinned ranges, in the order of operand() */
    float *scratch;    /* n products of one element */
} wsum_task;

static void args_free(wsum_args *a)
{
    free(a->x);
    free(a->terms);
    free(a->weights);
    free(a->mask);
    memset(a, 0, sizeof *a);
}

/* Room for n of everything; false when out of host memory. */
static bool args_alloc(wsum_args *a, uint64_t n)
{
    a->n = n;
    a->x = calloc((size_t)n, sizeof *a->x);
    a->terms = calloc((size_t)n, sizeof *a->terms);
    a->weights = calloc((size_t)n, sizeof *a->weights);
    a->mask = calloc((size_t)n, sizeof *a->mask);
    return a->x && a->terms && a->weights && a->mask;
}

/*
 * The operands in declaration order, k = 0 .. 2n: x[0..n), y (k == n), terms[0..n). Each of
 * `xs`, `ts` holds n tensors.
 */
static const aclTensor *operand(const aclTensor *const *xs, const aclTensor *y, const aclTensor *const *ts,
                                uint64_t n, uint64_t k)
{
    return k < n ? xs[k] : k == n ? y : ts[k - n - 1];
}

static void operand_name(uint64_t n, uint64_t k, char *buf, size_t size)
{
    if (k < n)
        snprintf(buf, size, "x[%" PRIu64 "]", k);
    else if (k == n)
        snprintf(buf, size, "y");
    else
        snprintf(buf, size, "terms[%" PRIu64 "]", k - n - 1);
}

/* The operator's checks (see the top of the file); fills *a. */
static aclnnStatus wsum_check(const char *api, const aclTensorList *x, const aclFloatArray *weights,
                              const aclBoolArray *mask, const aclTensor *y, const aclTensorList *terms,
                              wsum_args *a)
{
    const void *given[5] = {x, weights, mask, y, terms};
    static const char *const names[5] = {"x", "weights", "mask", "y", "terms"};
    uint64_t n, nw, nm, nt;
    char name[48], sa[256], sb[256];
    aclnnStatus st = ACLNN_SUCCESS;

    for (int i = 0; i < 5; i++) {
        if (given[i] == NULL) {
            emu_error("%s: argument %s is NULL", api, names[i]);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    if (!emu_tensor_list_read(x, &n, NULL, 0))
        return ops_not_live(api, "x", "aclTensorList", "aclCreateTensorList");
    if (!emu_float_array_read(weights, &nw, NULL, 0))
        return ops_not_live(api, "weights", "aclFloatArray", "aclCreateFloatArray");
    if (!emu_bool_array_read(mask, &nm, NULL, 0))
        return ops_not_live(api, "mask", "aclBoolArray", "aclCreateBoolArray");
    if (!emu_tensor_list_read(terms, &nt, NULL, 0))
        return ops_not_live(api, "terms", "aclTensorList", "aclCreateTensorList");
    if (n == 0) {
        emu_error("%s: x is an empty tensor list; %s needs at least one tensor", api, WSUM_NAME);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (nw != n || nm != n || nt != n) {
        const char *which = nw != n ? "weights" : nm != n ? "mask" : "terms";
        uint64_t got = nw != n ? nw : nm != n ? nm : nt;
        emu_error("%s: %s has %" PRIu64 " entries but x has %" PRIu64 " tensors; they must have one length",
                  api, which, got, n);
        return ACLNN_ERR_PARAM_INVALID;
    }
    const aclTensor **xs = NULL, **ts = NULL;
    if (n <= SIZE_MAX / sizeof(aclTensor) && args_alloc(a, n)) {
        xs = calloc((size_t)n, sizeof *xs);
        ts = calloc((size_t)n, sizeof *ts);
    }
    if (xs == NULL || ts == NULL) {
        free(xs);
        free(ts);
        emu_error("%s: out of host memory", api);
        return ACLNN_ERR_INNER;
    }
    if (!emu_tensor_list_read(x, &n, xs, n) || !emu_tensor_list_read(terms, &nt, ts, n) ||
        !emu_float_array_read(weights, &nw, a->weights, n) || !emu_bool_array_read(mask, &nm, a->mask, n)) {
        emu_error("%s: an argument was destroyed during the call", api);
        st = ACLNN_ERR_PARAM_NULLPTR;
    }

    /* every tensor given and live; x[0]'s dtype and rank; then per tensor one dtype, rank, one shape, memory */
    for (uint64_t k = 0; k < 2 * n + 1 && st == ACLNN_SUCCESS; k++) {
        const aclTensor *t = operand(xs, y, ts, n, k);
        const char *label = name;
        operand_name(n, k, name, sizeof name);
        st = ops_check_tensors_given(api, &t, &label, 1);
    }
    const aclTensor *first = xs[0];
    shape_t shape;
    if (st == ACLNN_SUCCESS && (st = ops_check_dtype(api, "x[0]", first, ops_float_dtypes())) == ACLNN_SUCCESS &&
        (st = ops_check_rank(api, "x[0]", first)) == ACLNN_SUCCESS)
        ops_shape_of(first, &shape);
    for (uint64_t k = 0; k < 2 * n + 1 && st == ACLNN_SUCCESS; k++) {
        const aclTensor *t = operand(xs, y, ts, n, k);
        operand_name(n, k, name, sizeof name);
        if (t->dtype != first->dtype) {
            emu_error("%s: %s has dtype %s but x[0] has dtype %s; every tensor must have one dtype", api, name,
                      ops_dt_name(t->dtype), ops_dt_name(first->dtype));
            st = ACLNN_ERR_PARAM_INVALID;
        } else if ((st = ops_check_rank(api, name, t)) != ACLNN_SUCCESS) {
            break;
        } else if (!ops_shape_equals(t, &shape)) {
            ops_dims_str(sa, sizeof sa, t->dims, t->ndim);
            ops_dims_str(sb, sizeof sb, first->dims, first->ndim);
            emu_error("%s: %s has shape %s but x[0] has shape %s; %s does not broadcast", api, name, sa, sb,
                      WSUM_NAME);
            st = ACLNN_ERR_PARAM_INVALID;
        } else {
            st = ops_check_view_memory(api, name, t);
        }
    }
    if (st == ACLNN_SUCCESS) {
        for (uint64_t i = 0; i < n; i++) {
            a->x[i] = *xs[i];
            a->terms[i] = *ts[i];
        }
        a->y = *y;
    }
    free(xs);
    free(ts);
    return st;
}

/* ---- the kernel ---- */

static char *element(const aclTensor *t, const int64_t *idx, size_t esize)
{
    int64_t off = t->offset;
    for (uint64_t d = 0; d < t->ndim; d++)
        off += idx[d] * t->strides[d];
    return (char *)t->data + off * (int64_t)esize;
}

static void wsum_compute(const wsum_args *a, float *products)
{
    const aclTensor *y = &a->y;
    aclDataType dt = y->dtype;
    size_t esize = emu_dtype_size(dt);
    int64_t idx[EMU_MAX_DIMS] = {0};
    int64_t total = ops_view_numel(y);
    for (int64_t e = 0; e < total; e++) {
        /* every input element is read before any output element is written */
        for (uint64_t i = 0; i < a->n; i++)
            products[i] = a->mask[i] ? a->weights[i] * load_elem(element(&a->x[i], idx, esize), dt) : 0.0f;
        float sum = 0.0f;
        for (uint64_t i = 0; i < a->n; i++) {
            if (a->mask[i])
                sum += products[i];
            store_elem(element(&a->terms[i], idx, esize), dt, products[i]);
        }
        store_elem(element(y, idx, esize), dt, sum);
        for (int d = (int)y->ndim - 1; d >= 0; d--) {
            if (++idx[d] < y->dims[d])
                break;
            idx[d] = 0;
        }
    }
}

/* Operand k of a task, in the order of operand(). */
static const aclTensor *task_operand(const wsum_args *a, uint64_t k)
{
    return k < a->n ? &a->x[k] : k == a->n ? &a->y : &a->terms[k - a->n - 1];
}

static aclError wsum_run(emu_task *base)
{
    wsum_task *t = (wsum_task *)base;
    const wsum_args *a = &t->a;
    int32_t device = -1;
    char what[64];
    /* nothing is touched unless every operand is still the allocation it was at launch */
    for (uint64_t k = 0; k < 2 * a->n + 1; k++) {
        const wsum_operand *m = &t->mem[k];
        if (!m->used)
            continue;
        snprintf(what, sizeof what, "%s ", k < a->n ? "input" : "output");
        operand_name(a->n, k, what + strlen(what), sizeof what - strlen(what));
        if (m->r.ptr == NULL) {
            emu_error("%s kernel: %s memory is not valid device memory: its data address is NULL", WSUM_NAME,
                      what);
            return ACL_ERROR_RT_AICORE_EXCEPTION;
        }
        if (!emu_devmem_still_valid(base, what, &m->r))
            return ACL_ERROR_RT_AICORE_EXCEPTION;
        if ((uintptr_t)m->r.ptr % OPS_ADDR_ALIGN != 0) {
            emu_error("%s kernel: %s address %p is not %u-byte aligned", WSUM_NAME, what, m->r.ptr,
                      OPS_ADDR_ALIGN);
            return ACL_ERROR_RT_AICORE_EXCEPTION;
        }
        if (device >= 0 && m->r.device != device) {
            emu_error("%s kernel: %s memory is on device %d but the other operands are on device %d", WSUM_NAME,
                      what, (int)m->r.device, (int)device);
            return ACL_ERROR_RT_AICORE_EXCEPTION;
        }
        device = m->r.device;
    }
    wsum_compute(a, t->scratch);
    emu_counter_add(EMU_COUNTER_KERNELS_RUN, 1);
    emu_device_kernel_run(device);
    return ACL_SUCCESS;
}

static void wsum_task_release(emu_task *base)
{
    wsum_task *t = (wsum_task *)base;
    args_free(&t->a);
    free(t->mem);
    free(t->scratch);
    free(t);
}

static aclError wsum_launch(aclOpExecutor *ex, void *workspace, uint64_t workspace_size, aclrtStream stream,
                            const char *api)
{
    const wsum_args *a = ex->op_state;
    EMU_RETURN_IF_STATUS(aclError, ops_require_state(api, a));
    if (ops_view_numel(&a->y) == 0) /* empty tensors: nothing to run */
        return ACL_SUCCESS;
    uint64_t n = a->n;
    wsum_task *t = calloc(1, sizeof *t);
    bool ok = t != NULL && args_alloc(&t->a, n);
    if (ok) {
        t->mem = calloc((size_t)(2 * n + 1), sizeof *t->mem);
        t->scratch = calloc((size_t)n, sizeof *t->scratch);
        ok = t->mem != NULL && t->scratch != NULL;
    }
    if (!ok) {
        if (t != NULL)
            wsum_task_release(&t->base);
        emu_error("%s: out of host memory for the %s task", api, WSUM_NAME);
        return ACL_ERROR_BAD_ALLOC;
    }
    memcpy(t->a.x, a->x, (size_t)n * sizeof *a->x);
    memcpy(t->a.terms, a->terms, (size_t)n * sizeof *a->terms);
    memcpy(t->a.weights, a->weights, (size_t)n * sizeof *a->weights);
    memcpy(t->a.mask, a->mask, (size_t)n * sizeof *a->mask);
    t->a.y = a->y;
    for (uint64_t k = 0; k < 2 * n + 1; k++) {
        const aclTensor *v = task_operand(&t->a, k);
        uint64_t bytes;
        t->mem[k].used = true;
        if (ops_view_extent_bytes(v, &bytes)) /* phase 1 checked it */
            emu_devmem_pin(v->data, bytes, &t->mem[k].r);
    }
    t->base.run = wsum_run;
    t->base.release = wsum_task_release;
    t->base.name = WSUM_NAME;
    return emu_stream_enqueue(stream, &t->base, api);
}

static void wsum_release(aclOpExecutor *ex)
{
    wsum_args *a = ex->op_state;
    if (a != NULL)
        args_free(a);
    free(a);
    ex->op_state = NULL;
}

EMU_EXPORT aclnnStatus aclnnWeightedSumCustomGetWorkspaceSize(const aclTensorList *x, const aclFloatArray *weights,
                                                              const aclBoolArray *mask, const aclTensor *y,
                                                              const aclTensorList *terms, uint64_t *workspaceSize,
                                                              aclOpExecutor **executor)
{
    static const char *api = "aclnnWeightedSumCustomGetWorkspaceSize";
    aclOpExecutor *ex;
    OPS_CHECK(ops_phase1_begin(api, WSUM_NAME, workspaceSize, executor, &ex));
    wsum_args *a = calloc(1, sizeof *a);
    aclnnStatus st;
    if (a == NULL) {
        emu_error("%s: out of host memory", api);
        st = ACLNN_ERR_INNER;
    } else {
        st = wsum_check(api, x, weights, mask, y, terms, a);
    }
    if (st != ACLNN_SUCCESS) {
        if (a != NULL)
            args_free(a);
        free(a);
        emu_executor_discard(ex);
        return st;
    }
    ex->op_state = a;
    ex->launch = wsum_launch;
    ex->release_op = wsum_release;
    *workspaceSize = 0;
    *executor = ex;
    return ACLNN_SUCCESS;
}

EMU_EXPORT aclnnStatus aclnnWeightedSumCustom(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                              aclrtStream stream)
{
    return ops_phase2("aclnnWeightedSumCustom", workspace, workspaceSize, executor, stream);
}
