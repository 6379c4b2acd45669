/*
 * libopapi.so of the aclnn_py host emulator: the operator core, shared by every operator
 * (see ops_core.h for how an operator plugs in).
 *
 * What is common to CANN's l2 operator APIs, as read in CANN's open-sourced code
 * (hicann/ops-nn, hicann/ops-math, hicann/opbase):
 *   OP_CHECK_COMM_INPUT (workspaceSize / executor NULL -> 161001), CREATE_EXECUTOR (-> 561101),
 *   CheckNotNull* (161001), the l0 Contiguous / Cast / BroadcastTo / ViewCopy steps around the
 *   operator's l0 kernel, and CommonOpExecutorRun for phase 2
 *   (opbase aclnn_kernels/common/op_error_check.h: what each OP_CHECK_* tests;
 *   opbase include/nnopbase/opdev/data_type_utils.h: PromoteType's table, CanCast, IsFloatingType).
 * Emulator-only strictness (not in CANN's code, what hardware would punish): each tensor must be a
 * live aclTensor (checked right after the NULL checks, before anything reads it), dims/strides/offset
 * non-negative; at the end of phase 1 each non-empty view's data, when set, must be 32-byte aligned
 * and lie wholly inside one live aclrtMalloc allocation; the kernel re-checks every range it touches
 * when it runs (507015 if freed, NULL or foreign).
 * Workspace (reported only when CANN's graph needs intermediate tensors, and really used by the
 * kernel; each chunk rounded up to 512 bytes, laid out in this order):
 *   per input whose view is not C-contiguous (strides of dims > 1 not row-major; zero-stride
 *   broadcast views included, an offset alone does not count): numel x itemsize (Contiguous);
 *   when the operator casts its inputs, per input whose dtype differs from the compute dtype:
 *   numel x compute itemsize (Cast); when it broadcasts them, per input whose shape differs from
 *   the broadcast one: broadcast numel x itemsize (BroadcastTo), in the order the operator's graph
 *   has (Cast then BroadcastTo, or BroadcastTo then Cast);
 *   when out's dtype differs from the compute dtype, or out is not contiguous: the l0 result,
 *   result numel x compute itemsize; when both: also the cast result, result numel x out itemsize,
 *   copied into out's view by the ViewCopy.
 * Speed: each stage is one pass over memory (fp16/bf16 converted in registers, 4 lanes at a time
 * where a kernel has a vector path); stages over large tensors split their elements among threads
 * (ACLNN_EMU_THREADS, see par_for).
 * Messages are this emulator's own wording.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops_core.h"
#include "ops_rules.h"

/* ======================================================================== */
/* shapes, views, dtypes                                                    */
/* ======================================================================== */

static size_t ops_dtype_size(aclDataType dt)
{
    switch (dt) {
    case ACL_FLOAT:
        return 4;
    case ACL_FLOAT16:
    case ACL_BF16:
        return 2;
    default:
        return emu_dtype_size(dt);
    }
}

const char *ops_dt_name(aclDataType dt)
{
    const char *n = emu_dtype_name(dt);
    return n ? n : "DT_UNDEFINED";
}

ops_dtypes ops_float_dtypes(void)
{
    ops_dtypes set = OPS_DT(ACL_FLOAT) | OPS_DT(ACL_FLOAT16);
    return emu_soc_supports_bf16() ? set | OPS_DT(ACL_BF16) : set;
}

bool ops_is_floating(aclDataType dt)
{
    switch (dt) {
    case ACL_DOUBLE: case ACL_FLOAT: case ACL_BF16: case ACL_FLOAT16: case ACL_HIFLOAT8: case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN: case ACL_FLOAT8_E8M0: case ACL_FLOAT6_E3M2: case ACL_FLOAT6_E2M3: case ACL_FLOAT4_E2M1:
    case ACL_FLOAT4_E1M2:
        return true;
    default:
        return false;
    }
}

bool ops_is_complex(aclDataType dt)
{
    return dt == ACL_COMPLEX32 || dt == ACL_COMPLEX64 || dt == ACL_COMPLEX128;
}

bool ops_is_integral(aclDataType dt, bool include_bool)
{
    switch (dt) {
    case ACL_INT8: case ACL_INT16: case ACL_INT32: case ACL_INT64:
    case ACL_UINT8: case ACL_UINT16: case ACL_UINT32: case ACL_UINT64:
        return true;
    case ACL_BOOL:
        return include_bool;
    default:
        return false;
    }
}

/*
 * opbase's PromoteType: equal dtypes stay, else its kPromoteTypesLookup (hicann/opbase
 * include/nnopbase/opdev/data_type_utils.h), read here row by row over the dtypes it promotes.
 * The table is not symmetric (uint16 with complex64 gives complex64, complex64 with uint16 none).
 * Letters: f float, h float16, b bfloat16, d double, 1 int8, 2 int16, 4 int32, 8 int64, u uint8,
 * v uint16, w uint32, x uint64, ? bool, c complex64, C complex128, z complex32, . none.
 */
static const aclDataType PROMOTED_DTYPES[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT8, ACL_INT32, ACL_UINT8, ACL_INT16,
                                              ACL_UINT16, ACL_UINT32, ACL_INT64, ACL_UINT64, ACL_DOUBLE, ACL_BOOL,
                                              ACL_COMPLEX64, ACL_COMPLEX128, ACL_BF16, ACL_COMPLEX32};
static const char PROMOTED_LETTERS[] = "fh14u2vw8xd?cCbz";
static const char *const PROMOTIONS[] = {
    /*        fh14u2vw8xd?cCbz */
    /* f */ "ffffff..f.dfcCfc",
    /* h */ "fhhhhh..h.dhcCfz",
    /* 1 */ "fh1422..8.d1cCbz",
    /* 4 */ "fh4444..8.d4cCbz",
    /* u */ "fh24u2..8.ducCbz",
    /* 2 */ "fh2422..8.d2cCbz",
    /* v */ "......v.....cC..",
    /* w */ ".......w....cC..",
    /* 8 */ "fh8888..8.d8cCbz",
    /* x */ ".........x..CC..",
    /* d */ "dddddd..d.ddCCdC",
    /* ? */ "fh14u2..8.d?cCbz",
    /* c */ "cccccc..c.CccCcc",
    /* C */ "CCCCCC..C.CCCCCC",
    /* b */ "ffbbbb..b.dbcCbc",
    /* z */ "czzzzz..z.CzcCcz",
};

static int promoted_index(aclDataType dt)
{
    for (int i = 0; i < (int)(sizeof PROMOTED_DTYPES / sizeof PROMOTED_DTYPES[0]); i++)
        if (PROMOTED_DTYPES[i] == dt)
            return i;
    return -1;
}

aclDataType ops_promote_type(aclDataType a, aclDataType b)
{
    if ((int)a < 0 || (int)b < 0)
        return ACL_DT_UNDEFINED;
    if (a == b)
        return a;
    int i = promoted_index(a), j = promoted_index(b);
    if (i < 0 || j < 0)
        return ACL_DT_UNDEFINED;
    const char *letter = strchr(PROMOTED_LETTERS, PROMOTIONS[i][j]);
    return letter ? PROMOTED_DTYPES[letter - PROMOTED_LETTERS] : ACL_DT_UNDEFINED;
}

bool ops_can_cast(aclDataType from, aclDataType to)
{
    if (ops_is_complex(from) && !ops_is_complex(to))
        return false;
    if (ops_is_floating(from) && ops_is_integral(to, false))
        return false;
    if (from != ACL_BOOL && to == ACL_BOOL)
        return false;
    return true;
}

const char *ops_dtypes_str(ops_dtypes set, char *buf, size_t n)
{
    /* the order CANN's support lists use */
    static const aclDataType order[] = {ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_INT32, ACL_INT64, ACL_INT16,
                                        ACL_INT8, ACL_UINT8, ACL_BOOL, ACL_COMPLEX128, ACL_COMPLEX64, ACL_BF16};
    size_t k = (size_t)snprintf(buf, n, "[");
    bool first = true;
    for (size_t i = 0; i < sizeof order / sizeof order[0] && k < n; i++) {
        if (!ops_dtype_in(order[i], set))
            continue;
        k += (size_t)snprintf(buf + k, n - k, first ? "%s" : ", %s", ops_dt_name(order[i]));
        first = false;
    }
    if (k < n)
        snprintf(buf + k, n - k, "]");
    return buf;
}

const char *ops_bf16_note(aclDataType dt, char *buf, size_t n)
{
    buf[0] = '\0';
    if (dt == ACL_BF16 && !emu_soc_supports_bf16()) {
        const char *soc = emu_soc_name();
        snprintf(buf, n, " (DT_BF16 needs an Atlas A2/A3 or Ascend 950 SoC; the emulated SoC is %s)",
                 soc ? soc : "unknown");
    }
    return buf;
}

void ops_dims_str(char *buf, size_t n, const int64_t *d, uint64_t nd)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (uint64_t i = 0; i < nd && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %" PRId64 : "%" PRId64, d[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

bool ops_broadcast_dims(const int64_t *a, int na, const int64_t *b, int nb, shape_t *out)
{
    int n = na > nb ? na : nb;
    if (n > EMU_MAX_DIMS)
        return false;
    for (int i = 0; i < n; i++) {
        int ia = na - n + i, ib = nb - n + i;
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        int64_t r;
        if (da == db)
            r = da;
        else if (da == 1)
            r = db;
        else if (db == 1)
            r = da;
        else
            return false;
        out->d[i] = r;
    }
    out->ndim = n;
    return true;
}

bool ops_shape_equals(const aclTensor *t, const shape_t *s)
{
    if (t->ndim != (uint64_t)s->ndim)
        return false;
    for (int i = 0; i < s->ndim; i++)
        if (t->dims[i] != s->d[i])
            return false;
    return true;
}

int64_t ops_shape_numel(const shape_t *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= s->d[i];
    return n;
}

void ops_shape_of(const aclTensor *t, shape_t *s)
{
    s->ndim = t->ndim < EMU_MAX_DIMS ? (int)t->ndim : EMU_MAX_DIMS; /* callers checked the rank */
    memcpy(s->d, t->dims, sizeof(int64_t) * (size_t)s->ndim);
}

int64_t ops_view_numel(const aclTensor *t)
{
    int64_t n = 1;
    for (uint64_t i = 0; i < t->ndim; i++) {
        if (t->dims[i] == 0)
            return 0;
    }
    for (uint64_t i = 0; i < t->ndim; i++)
        if (__builtin_mul_overflow(n, t->dims[i], &n))
            return -1;
    return n;
}

/* CANN's IsContiguous: strides of dims > 1 are the row-major ones (offset may be anything). */
static bool view_contiguous(const aclTensor *t)
{
    int64_t expect = 1;
    for (uint64_t k = t->ndim; k-- > 0;) {
        if (t->dims[k] == 1)
            continue;
        if (t->strides[k] != expect)
            return false;
        expect *= t->dims[k];
    }
    return true;
    return true;
}

/*
 * Elements from the storage base the view reaches: offset + sum stride*(dim-1) + 1
 * (0 for an empty view). false on overflow.
 */
static bool view_extent_elems(const aclTensor *t, uint64_t *out)
{
    if (ops_view_numel(t) == 0) {
        *out = 0;
        return true;
    }
    int64_t e = t->offset, p;
    for (uint64_t i = 0; i < t->ndim; i++) {
        if (__builtin_mul_overflow(t->strides[i], t->dims[i] - 1, &p) || __builtin_add_overflow(e, p, &e))
            return false;
    }
    if (__builtin_add_overflow(e, (int64_t)1, &e))
        return false;
    *out = (uint64_t)e;
    return true;
}

static bool view_extent_bytes(const aclTensor *t, uint64_t *out)
{
    uint64_t e;
    if (!view_extent_elems(t, &e))
        return false;
    return !__builtin_mul_overflow(e, (uint64_t)ops_dtype_size(t->dtype), out);
}

static uint64_t round_ws(uint64_t n)
{
    return (n + OPS_WS_ALIGN - 1) / OPS_WS_ALIGN * OPS_WS_ALIGN;
}

/* Add a workspace chunk of n bytes; returns its offset, OPS_NO_CHUNK on overflow. */
static uint64_t ws_add(uint64_t *total, uint64_t n)
{
    uint64_t off = *total, r = round_ws(n);
    if (r < n || __builtin_add_overflow(*total, r, total))
        return OPS_NO_CHUNK;
    return off;
}

/* Add a chunk of numel elements of dt; false on overflow, else *off receives its offset. */
static bool ws_add_elems(uint64_t *total, uint64_t numel, aclDataType dt, uint64_t *off)
{
    uint64_t n;
    if (__builtin_mul_overflow(numel, (uint64_t)ops_dtype_size(dt), &n))
        return false;
    *off = ws_add(total, n);
    return *off != OPS_NO_CHUNK;
}

/* ======================================================================== */
/* worker threads for large kernels                                         */
/* ======================================================================== */

/*
 * A kernel stage (Contiguous / BroadcastTo copy, Cast, the l0 kernel, ViewCopy) over at least
 * PAR_MIN_ELEMS elements splits its element range into contiguous slices of at least
 * PAR_MIN_SLICE elements, one per thread: the thread running the task (stream synchronisation)
 * takes the first, plain pthreads created for this stage take the others and are joined before
 * the stage returns. Nothing outlives a stage: no pool to tear down at unload, fork or exit.
 *
 * ACLNN_EMU_THREADS=N: the most threads a stage uses, 1 to 16 (1 disables threading). Unset,
 * empty or not a positive integer: the online cores (sysconf(_SC_NPROCESSORS_ONLN)); anything
 * above 16 counts as 16. Read once, when the first stage large enough to split runs.
 *
 * Every element is computed by the same code whichever thread gets it, and a loss's sum/mean
 * uses blocks fixed by the element count alone (see nd_reduce), so results are bit-identical
 * for every thread count. A stage whose destination overlaps itself or a source with another
 * layout (where the order of the writes matters) runs in one thread.
 */
#define PAR_MAX_THREADS 16
#define PAR_MIN_ELEMS ((int64_t)256 * 1024)
#define PAR_MIN_SLICE ((int64_t)128 * 1024)
#define PAR_ALIGN 64 /* slice bounds (elements): whole cache lines of contiguous destinations */

static pthread_once_t par_once = PTHREAD_ONCE_INIT;
static int par_threads = 1;

static void par_init(void)
{
    int saved_errno = errno;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("ACLNN_EMU_THREADS");
    if (env != NULL && *env != '\0') {
        char *end;
        errno = 0;
        long v = strtol(env, &end, 10);
        if (errno == 0 && *end == '\0' && v > 0)
            n = v;
    }
    if (n < 1)
        n = 1;
    if (n > PAR_MAX_THREADS)
        n = PAR_MAX_THREADS;
    par_threads = (int)n;
    errno = saved_errno;
}

typedef void (*par_fn)(void *arg, int64_t lo, int64_t hi);

typedef struct {
    par_fn fn;
    void *arg;
    int64_t lo, hi;
} par_slice;

static void *par_worker(void *v)
{
    par_slice *s = v;
    s->fn(s->arg, s->lo, s->hi);
    return NULL;
}

/*
 * fn(arg, lo, hi) over [0, units) in contiguous slices, one per thread; unit_elems elements per
 * unit (for the thresholds), slice bounds multiples of align units. serial: one slice.
 */
static void par_for(int64_t units, int64_t unit_elems, int64_t align, bool serial, par_fn fn, void *arg)
{
    int64_t elems = units > INT64_MAX / unit_elems ? INT64_MAX : units * unit_elems;
    int64_t nt = 1;
    if (!serial && elems >= PAR_MIN_ELEMS) {
        pthread_once(&par_once, par_init);
        nt = par_threads;
        if (nt > elems / PAR_MIN_SLICE)
            nt = elems / PAR_MIN_SLICE;
        if (nt > units / align)
            nt = units / align;
    }
    if (nt <= 1) {
        fn(arg, 0, units);
        return;
    }
    par_slice sl[PAR_MAX_THREADS];
    pthread_t th[PAR_MAX_THREADS];
    bool started[PAR_MAX_THREADS];
    int64_t per = units / nt;
    for (int64_t t = 0; t < nt; t++) {
        sl[t].fn = fn;
        sl[t].arg = arg;
        sl[t].lo = t == 0 ? 0 : per * t / align * align;
        sl[t].hi = t == nt - 1 ? units : per * (t + 1) / align * align;
    }
    /* workers block every signal: the caller's threads keep handling them */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int64_t t = 1; t < nt; t++)
        started[t] = pthread_create(&th[t], NULL, par_worker, &sl[t]) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    fn(arg, sl[0].lo, sl[0].hi);
    for (int64_t t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else /* no thread: this one does the slice */
            fn(arg, sl[t].lo, sl[t].hi);
    }
}

/* ======================================================================== */
/* n-d iteration over up to 4 operands, rows of the (coalesced) last dim    */
/* ======================================================================== */

#define ITER_MAX_OPS 4

typedef struct {
    int ndim;
    int64_t shape[EMU_MAX_DIMS];
    int nops;
    char *base[ITER_MAX_OPS];
    int64_t bstride[ITER_MAX_OPS][EMU_MAX_DIMS]; /* bytes */
    size_t esz[ITER_MAX_OPS];                    /* element size, bytes */
} nd_iter;

/* (row_fn: see ops_core.h) */

static void nd_init(nd_iter *it, const shape_t *shape, int nops)
{
    memset(it, 0, sizeof *it);
    it->ndim = shape->ndim;
    memcpy(it->shape, shape->d, sizeof(int64_t) * (size_t)shape->ndim);
    it->nops = nops;
}

/*
 * Operand k is a view (data base, element offset, dims, element strides, itemsize) broadcast
 * right-aligned to the iteration shape: size-1 / missing dims get stride 0.
 */
static void nd_set_view(nd_iter *it, int k, char *data, int64_t offset, const int64_t *dims,
                        const int64_t *strides, int ndim, size_t isz)
{
    it->base[k] = data + offset * (int64_t)isz;
    it->esz[k] = isz;
    for (int i = 0; i < it->ndim; i++) {
        int j = ndim - it->ndim + i;
        it->bstride[k][i] = (j >= 0 && dims[j] != 1) ? strides[j] * (int64_t)isz : 0;
    }
}

/* Operand k is the view of tensor t, its elements isz bytes each. */
static void nd_set_tensor(nd_iter *it, int k, const aclTensor *t, size_t isz)
{
    nd_set_view(it, k, (char *)t->data, t->offset, t->dims, t->strides, (int)t->ndim, isz);
}

/* Operand k is a contiguous buffer of the iteration shape. */
static void nd_set_contig(nd_iter *it, int k, char *data, size_t isz)
{
    it->base[k] = data;
    it->esz[k] = isz;
    int64_t s = (int64_t)isz;
    for (int i = it->ndim; i-- > 0;) {
        it->bstride[k][i] = it->shape[i] == 1 ? 0 : s;
        s *= it->shape[i];
    }
}

/* An iteration with size-1 dims dropped and dims laid out contiguously for every operand merged. */
typedef struct {
    int nd; /* 0: a single element */
    int nops;
    int64_t total; /* elements */
    int64_t shape[EMU_MAX_DIMS];
    int64_t st[ITER_MAX_OPS][EMU_MAX_DIMS];
    char *base[ITER_MAX_OPS];
    size_t esz[ITER_MAX_OPS];
} nd_plan;

/* false when there is nothing to iterate (a dim of size 0). */
static bool nd_prepare(const nd_iter *it, nd_plan *p)
{
    int nd = 0;
    memset(p, 0, sizeof *p);
    p->nops = it->nops;
    p->total = 1;
    for (int i = 0; i < it->ndim; i++) {
        if (it->shape[i] == 0)
            return false;
        if (it->shape[i] == 1)
            continue;
        p->total *= it->shape[i];
        bool merge = nd > 0;
        for (int k = 0; merge && k < it->nops; k++)
            if (p->st[k][nd - 1] != it->bstride[k][i] * it->shape[i])
                merge = false;
        if (merge) {
            p->shape[nd - 1] *= it->shape[i];
            for (int k = 0; k < it->nops; k++)
                p->st[k][nd - 1] = it->bstride[k][i];
        } else {
            p->shape[nd] = it->shape[i];
            for (int k = 0; k < it->nops; k++)
                p->st[k][nd] = it->bstride[k][i];
            nd++;
        }
    }
    p->nd = nd;
    for (int k = 0; k < it->nops; k++) {
        p->base[k] = it->base[k];
        p->esz[k] = it->esz[k];
    }
    return true;
}

/* Elements [lo, hi) of the row-major order, row piece by row piece. */
static void nd_range(const nd_plan *p, int64_t lo, int64_t hi, row_fn fn, void *ctx)
{
    char *ptrs[ITER_MAX_OPS];
    int64_t inner[ITER_MAX_OPS] = {0};
    if (lo >= hi)
        return;
    if (p->nd == 0) {
        for (int k = 0; k < p->nops; k++)
            ptrs[k] = p->base[k];
        fn(ctx, ptrs, inner, 1);
        return;
    }
    const int nd = p->nd;
    const int64_t n = p->shape[nd - 1];
    for (int k = 0; k < p->nops; k++)
        inner[k] = p->st[k][nd - 1];
    int64_t row = lo / n, col = lo % n;
    int64_t idx[EMU_MAX_DIMS] = {0};
    for (int i = nd - 2; i >= 0; i--) {
        idx[i] = row % p->shape[i];
        row /= p->shape[i];
    }
    for (int64_t pos = lo; pos < hi;) {
        int64_t len = n - col < hi - pos ? n - col : hi - pos;
        for (int k = 0; k < p->nops; k++) {
            char *q = p->base[k] + col * inner[k];
            for (int i = 0; i < nd - 1; i++)
                q += idx[i] * p->st[k][i];
            ptrs[k] = q;
        }
        fn(ctx, ptrs, inner, len);
        pos += len;
        col = 0;
        for (int i = nd - 2; i >= 0; i--) {
            if (++idx[i] < p->shape[i])
                break;
            idx[i] = 0;
        }
    }
}

/* Byte span [lo, hi) operand k reaches (strides are never negative here). */
static void nd_span(const nd_plan *p, int k, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t e = (uintptr_t)p->esz[k];
    for (int i = 0; i < p->nd; i++)
        e += (uintptr_t)(p->st[k][i] * (p->shape[i] - 1));
    *lo = (uintptr_t)p->base[k];
    *hi = *lo + e;
}

/*
 * Whether the elements may be split among threads: operand 0 (the destination) does not overlap
 * itself (checked conservatively: each dim, by increasing stride, steps past all the smaller ones),
 * and overlaps no other operand unless that one has exactly its layout (in place).
 */
static bool nd_split_safe(const nd_plan *p)
{
    int64_t st[EMU_MAX_DIMS], sh[EMU_MAX_DIMS];
    int n = p->nd;
    for (int i = 0; i < n; i++) { /* insertion sort by stride */
        int j = i;
        for (; j > 0 && st[j - 1] > p->st[0][i]; j--) {
            st[j] = st[j - 1];
            sh[j] = sh[j - 1];
        }
        st[j] = p->st[0][i];
        sh[j] = p->shape[i];
    }
    int64_t span = (int64_t)p->esz[0];
    for (int i = 0; i < n; i++) {
        if (st[i] < span)
            return false;
        span += st[i] * (sh[i] - 1);
    }
    uintptr_t dlo, dhi, lo, hi;
    nd_span(p, 0, &dlo, &dhi);
    for (int k = 1; k < p->nops; k++) {
        nd_span(p, k, &lo, &hi);
        if (lo >= dhi || dlo >= hi)
            continue;
        if (p->base[k] != p->base[0] || p->esz[k] != p->esz[0])
            return false;
        for (int i = 0; i < n; i++)
            if (p->st[k][i] != p->st[0][i])
                return false;
    }
    return true;
}

typedef struct {
    const nd_plan *p;
    row_fn fn;
    void *ctx;
} nd_job;

static void nd_job_slice(void *arg, int64_t lo, int64_t hi)
{
    const nd_job *j = arg;
    nd_range(j->p, lo, hi, j->fn, j->ctx);
}

/* fn over every element (ctx shared by the threads: read only). */
static void nd_run(const nd_iter *it, row_fn fn, void *ctx)
{
    nd_plan p;
    if (!nd_prepare(it, &p))
        return;
    nd_job j = {&p, fn, ctx};
    par_for(p.total, 1, PAR_ALIGN, !nd_split_safe(&p), nd_job_slice, &j);
}

/*
 * Sum reductions (a loss's mean/sum): the row-major element order is cut into at most RED_MAX_BLOCKS
 * blocks of equal size (a multiple of PAR_ALIGN, at least RED_MIN_BLOCK elements: one block up to
 * that), fixed by the element count alone. The row function adds each row piece of a block to the
 * block's ops_red_acc (float kernels: a double sum, 4 lanes per piece; integer kernels: a sum
 * modulo 2^64); the blocks' sums are then added in block order. Threads take whole blocks, so the
 * result is the same for every thread count.
 */
#define RED_MAX_BLOCKS 256
#define RED_MIN_BLOCK ((int64_t)64 * 1024)

typedef struct {
    const nd_plan *p;
    row_fn fn;
    int64_t blk;
    const ops_kparams *k;
    double *part;
    uint64_t *ipart;
} red_job;

static void red_job_slice(void *arg, int64_t lo, int64_t hi)
{
    const red_job *j = arg;
    for (int64_t b = lo; b < hi; b++) {
        ops_red_acc acc = {0.0, 0, j->k};
        int64_t end = j->p->total - b * j->blk < j->blk ? j->p->total : (b + 1) * j->blk;
        nd_range(j->p, b * j->blk, end, j->fn, &acc);
        j->part[b] = acc.sum;
        j->ipart[b] = acc.isum;
    }
}

/* The sums over every element of what fn adds to its ops_red_acc, into *total. */
static void nd_reduce(const nd_iter *it, row_fn fn, const ops_kparams *k, ops_red_acc *total)
{
    nd_plan p;
    total->sum = 0.0;
    total->isum = 0;
    total->k = k;
    if (!nd_prepare(it, &p))
        return;
    int64_t blk = p.total / RED_MAX_BLOCKS + 1;
    if (blk < RED_MIN_BLOCK)
        blk = RED_MIN_BLOCK;
    blk = (blk + PAR_ALIGN - 1) / PAR_ALIGN * PAR_ALIGN;
    int64_t nb = (p.total - 1) / blk + 1;
    double part[RED_MAX_BLOCKS];
    uint64_t ipart[RED_MAX_BLOCKS];
    red_job j = {&p, fn, blk, k, part, ipart};
    par_for(nb, blk, 1, false, red_job_slice, &j);
    double s = 0.0;
    uint64_t is = 0;
    for (int64_t b = 0; b < nb; b++) {
        s += part[b];
        is += ipart[b];
    }
    total->sum = s;
    total->isum = is;
}

/* ---- copies and casts ---- */

typedef struct {
    size_t isz;
} copy_ctx;

/* p[0] destination, p[1] source */
static void copy_row(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    const size_t isz = ((copy_ctx *)vctx)->isz;
    char *d = p[0];
    const char *src = p[1];
    if (s[0] == (int64_t)isz && s[1] == (int64_t)isz) {
        memmove(d, src, (size_t)n * isz);
        return;
    }
    switch (isz) {
    case 2:
        for (int64_t j = 0; j < n; j++)
            memcpy(d + j * s[0], src + j * s[1], 2);
        break;
    case 4:
        for (int64_t j = 0; j < n; j++)
            memcpy(d + j * s[0], src + j * s[1], 4);
        break;
    default:
        for (int64_t j = 0; j < n; j++)
            memcpy(d + j * s[0], src + j * s[1], isz);
        break;
    }
}

/* Copy a view into a contiguous buffer of the iteration shape (Contiguous / BroadcastTo). */
static void gather_view(char *dst, const aclTensor *src, const shape_t *shape)
{
    nd_iter it;
    size_t isz = ops_dtype_size(src->dtype);
    copy_ctx c = {isz};
    nd_init(&it, shape, 2);
    nd_set_contig(&it, 0, dst, isz);
    nd_set_tensor(&it, 1, src, isz);
    nd_run(&it, copy_row, &c);
}

/* ViewCopy: a contiguous buffer of out's shape into out's view. */
static void scatter_view(const aclTensor *dst, const char *src)
{
    nd_iter it;
    shape_t s;
    size_t isz = ops_dtype_size(dst->dtype);
    copy_ctx c = {isz};
    s.ndim = (int)dst->ndim;
    memcpy(s.d, dst->dims, sizeof(int64_t) * dst->ndim);
    nd_init(&it, &s, 2);
    nd_set_tensor(&it, 0, dst, isz);
    nd_set_contig(&it, 1, (char *)src, isz);
    nd_run(&it, copy_row, &c);
}

/* n contiguous elements from S to D (f32, f16, bf16), 4 at a time, then the tail. */
#define CAST_LOOP(D, S, DSZ, SSZ)                                  \
    do {                                                           \
        int64_t j = 0;                                             \
        for (; j + 4 <= n; j += 4)                                 \
            vst_##D(dst + j * (DSZ), vld_##S(src + j * (SSZ)));    \
        for (; j < n; j++)                                         \
            st_##D(dst + j * (DSZ), ld_##S(src + j * (SSZ)));      \
    } while (0)

/* The cast into D (DSZ bytes): from S1 (S1SZ bytes) when the source dtype is S1DT, else from S2. */
#define CAST_INTO(D, DSZ, S1DT, S1, S1SZ, S2, S2SZ)                \
    do {                                                           \
        if (c->sdt == (S1DT))                                      \
            CAST_LOOP(D, S1, DSZ, S1SZ);                           \
        else                                                       \
            CAST_LOOP(D, S2, DSZ, S2SZ);                           \
    } while (0)

typedef struct {
    char *dst;
    aclDataType ddt;
    const char *src;
    aclDataType sdt;
} cast_job;

static bool is_f32_family(aclDataType dt)
{
    return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16;
}

/* An integral (or bool) element as int64 (bool: 0 or 1). */
static int64_t load_int(const char *p, aclDataType dt)
{
    switch (dt) {
    case ACL_BOOL: { uint8_t v; memcpy(&v, p, 1); return v != 0; }
    case ACL_UINT8: { uint8_t v; memcpy(&v, p, 1); return v; }
    case ACL_INT8: { int8_t v; memcpy(&v, p, 1); return v; }
    case ACL_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case ACL_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case ACL_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case ACL_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: return ld_i64(p); /* INT64 (UINT64 reinterpreted) */
    }
}

bool ops_cast_dtype(aclDataType dt)
{
    switch (dt) {
    case ACL_FLOAT: case ACL_FLOAT16: case ACL_BF16: case ACL_DOUBLE: case ACL_BOOL:
    case ACL_INT8: case ACL_INT16: case ACL_INT32: case ACL_INT64:
    case ACL_UINT8: case ACL_UINT16: case ACL_UINT32: case ACL_UINT64:
    case ACL_COMPLEX64: case ACL_COMPLEX128:
        return true;
    default:
        return false;
    }
}

void ops_load_wide(const char *p, aclDataType dt, ops_wide *v)
{
    memset(v, 0, sizeof *v);
    switch (dt) {
    case ACL_FLOAT: case ACL_FLOAT16: case ACL_BF16:
        v->re = load_elem(p, dt);
        return;
    case ACL_DOUBLE:
        memcpy(&v->re, p, 8);
        return;
    case ACL_COMPLEX64: {
        float c[2];
        memcpy(c, p, sizeof c);
        v->re = c[0];
        v->im = c[1];
        return;
    }
    case ACL_COMPLEX128:
        memcpy(&v->re, p, 8);
        memcpy(&v->im, p + 8, 8);
        return;
    case ACL_UINT64: {
        uint64_t u;
        memcpy(&u, p, 8);
        v->i = (int64_t)u;
        v->re = (double)u;
        v->integral = v->is_unsigned = true;
        return;
    }
    default:
        v->i = load_int(p, dt);
        v->re = (double)v->i;
        v->integral = true;
        return;
    }
}

/* A real value truncated towards zero into int64, saturated (NaN gives 0): a floating value
   never reaches an integral dtype through CanCast, this only keeps the conversion defined. */
static int64_t trunc_int64(double x)
{
    if (!(x == x))
        return 0;
    if (x >= 9223372036854775807.0)
        return INT64_MAX;
    if (x <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)x;
}

void ops_store_wide(char *p, aclDataType dt, const ops_wide *v)
{
    /* an integer is rounded once, from its exact value */
    float f = v->integral ? (v->is_unsigned ? (float)(uint64_t)v->i : (float)v->i) : (float)v->re;
    int64_t i = v->integral ? v->i : trunc_int64(v->re);
    switch (dt) {
    case ACL_FLOAT: case ACL_FLOAT16: case ACL_BF16:
        store_elem(p, dt, f);
        return;
    case ACL_DOUBLE:
        memcpy(p, &v->re, 8);
        return;
    case ACL_COMPLEX64: {
        float c[2] = {f, (float)v->im};
        memcpy(p, c, sizeof c);
        return;
    }
    case ACL_COMPLEX128:
        memcpy(p, &v->re, 8);
        memcpy(p + 8, &v->im, 8);
        return;
    case ACL_BOOL: {
        uint8_t b = v->integral ? v->i != 0 : (v->re != 0.0 || v->im != 0.0);
        memcpy(p, &b, 1);
        return;
    }
    case ACL_INT8: case ACL_UINT8: { uint8_t b = (uint8_t)i; memcpy(p, &b, 1); return; }
    case ACL_INT16: case ACL_UINT16: { uint16_t h = (uint16_t)i; memcpy(p, &h, 2); return; }
    case ACL_INT32: case ACL_UINT32: { uint32_t w = (uint32_t)i; memcpy(p, &w, 4); return; }
    default: st_i64(p, i); return; /* INT64, UINT64: the low 64 bits */
    }
}

/* Casts the float kernels do not cover, element by element (ops_load_wide, ops_store_wide). */
static void cast_generic(char *dst, aclDataType ddt, const char *src, aclDataType sdt, int64_t n)
{
    size_t di = ops_dtype_size(ddt), si = ops_dtype_size(sdt);
    ops_wide v;
    for (int64_t j = 0; j < n; j++) {
        ops_load_wide(src + j * (int64_t)si, sdt, &v);
        ops_store_wide(dst + j * (int64_t)di, ddt, &v);
    }
}

static void cast_slice(void *arg, int64_t lo, int64_t hi)
{
    const cast_job *c = arg;
    size_t di = ops_dtype_size(c->ddt), si = ops_dtype_size(c->sdt);
    char *dst = c->dst + lo * (int64_t)di;
    const char *src = c->src + lo * (int64_t)si;
    int64_t n = hi - lo;
    if (c->ddt == c->sdt) {
        memmove(dst, src, (size_t)n * di);
        return;
    }
    if (!is_f32_family(c->ddt) || !is_f32_family(c->sdt)) {
        cast_generic(dst, c->ddt, src, c->sdt, n);
        return;
    }
    switch (c->ddt) {
    case ACL_FLOAT16:
        CAST_INTO(f16, 2, ACL_BF16, bf16, 2, f32, 4);
        break;
    case ACL_BF16:
        CAST_INTO(bf16, 2, ACL_FLOAT16, f16, 2, f32, 4);
        break;
    default:
        CAST_INTO(f32, 4, ACL_FLOAT16, f16, 2, bf16, 2);
        break;
    }
}

/* Cast n contiguous elements. */
static void cast_linear(char *dst, aclDataType ddt, const char *src, aclDataType sdt, int64_t n)
{
    cast_job c = {dst, ddt, src, sdt};
    uintptr_t d0 = (uintptr_t)dst, s0 = (uintptr_t)src;
    bool overlap = d0 < s0 + (uintptr_t)n * ops_dtype_size(sdt) && s0 < d0 + (uintptr_t)n * ops_dtype_size(ddt);
    par_for(n, 1, PAR_ALIGN, overlap, cast_slice, &c);
}

/* ======================================================================== */
/* tasks: what a launch queues                                              */
/* ======================================================================== */

/* A device range the kernel touches, pinned with its allocation id at phase 2. */
typedef struct {
    bool used;      /* the kernel reads or writes it */
    bool too_large; /* the view's extent overflows: nothing was pinned */
    emu_range r;
} ops_operand;

typedef struct {
    emu_task base; /* first */
    ops_plan plan;
    aclTensor in[OPS_MAX_IN];
    aclTensor out;
    char *ws;
    ops_operand in_mem[OPS_MAX_IN], out_mem, ws_mem;
} ops_task;

/* Pin what tensor t's view touches (nothing for an empty view). */
static void pin_tensor(ops_operand *m, const aclTensor *t)
{
    uint64_t bytes;
    memset(m, 0, sizeof *m);
    if (ops_view_numel(t) == 0)
        return;
    m->used = true;
    if (!view_extent_bytes(t, &bytes)) {
        m->too_large = true;
        return;
    }
    emu_devmem_pin(t->data, bytes, &m->r);
}

/*
 * Re-check one pinned operand when the kernel runs: still the same live
 * allocation, aligned (tensors), on the same device as the others. `what`
 * names it for messages, e.g. "input 1 (self)".
 */
/* Whether operand m may be touched; when not, records why, naming it as "<role> <index>
 * (<name>)" ("input 1 (self)"), or "<role>" for an index < 0 ("workspace"). The name is
 * formatted only for a record: the check runs on every launch. */
static bool run_check_operand(const ops_task *t, const char *role, int index, const char *name,
                              const ops_operand *m, bool tensor, int32_t *dev, bool *have_dev)
{
    if (!m->used)
        return true;
    if (!m->too_large && m->r.ptr != NULL && emu_devmem_still_live(&m->r) &&
        (!tensor || ((uintptr_t)m->r.ptr % OPS_ADDR_ALIGN) == 0) &&
        (!*have_dev || m->r.device == *dev)) {
        *dev = m->r.device;
        *have_dev = true;
        return true;
    }
    const char *kernel = t->plan.desc->name;
    char what[96];
    if (index < 0)
        snprintf(what, sizeof what, "%s", role);
    else
        snprintf(what, sizeof what, "%s %d (%s)", role, index, name);
    if (m->too_large) {
        emu_error("%s kernel: %s view is too large", kernel, what);
        return false;
    }
    if (m->r.ptr == NULL) {
        emu_error("%s kernel: %s memory is not valid device memory: its data address is NULL", kernel, what);
        return false;
    }
    if (!emu_devmem_still_valid(&t->base, what, &m->r))
        return false;
    if (tensor && ((uintptr_t)m->r.ptr % OPS_ADDR_ALIGN) != 0) {
        emu_error("%s kernel: %s address %p is not %u-byte aligned", kernel, what, m->r.ptr, OPS_ADDR_ALIGN);
        return false;
    }
    emu_error("%s kernel: %s memory is on device %d but the other operands are on device %d",
              kernel, what, (int)m->r.device, (int)*dev);
    return false;
}

/* Make v a C-contiguous view of its dims at data (offset 0). */
static void rebase_contiguous(aclTensor *v, char *data)
{
    int64_t s = 1;
    v->data = data;
    v->offset = 0;
    for (uint64_t k = v->ndim; k-- > 0;) {
        v->strides[k] = s;
        s *= v->dims[k];
    }
}

/* Cast stage: the (contiguous) view v into the chunk at dst, as the compute dtype. */
static void stage_cast(const ops_plan *pl, aclTensor *v, char *dst)
{
    shape_t vs;
    ops_shape_of(v, &vs);
    cast_linear(dst, pl->cdt, (char *)v->data + v->offset * (int64_t)ops_dtype_size(v->dtype), v->dtype,
                ops_shape_numel(&vs));
    v->data = dst;
    v->offset = 0;
    v->dtype = pl->cdt;
}

/* BroadcastTo stage: the view v expanded to the broadcast shape in the chunk at dst. */
static void stage_bcast(const ops_plan *pl, aclTensor *v, char *dst)
{
    gather_view(dst, v, &pl->bshape);
    v->ndim = (uint64_t)pl->bshape.ndim;
    memcpy(v->dims, pl->bshape.d, sizeof(int64_t) * v->ndim);
    rebase_contiguous(v, dst);
}

/* Input i through its stages: Contiguous, then Cast and BroadcastTo in the operator's order. */
static aclTensor stage_input(const ops_plan *pl, int i, const aclTensor *src, char *ws)
{
    const ops_in_plan *ip = &pl->in[i];
    aclTensor v = *src;
    if (ip->contig_off != OPS_NO_CHUNK) {
        shape_t vs;
        ops_shape_of(&v, &vs);
        gather_view(ws + ip->contig_off, &v, &vs);
        rebase_contiguous(&v, ws + ip->contig_off);
    }
    if (pl->bcast_first) {
        if (ip->bcast_off != OPS_NO_CHUNK)
            stage_bcast(pl, &v, ws + ip->bcast_off);
        if (ip->cast_off != OPS_NO_CHUNK)
            stage_cast(pl, &v, ws + ip->cast_off);
    } else {
        if (ip->cast_off != OPS_NO_CHUNK)
            stage_cast(pl, &v, ws + ip->cast_off);
        if (ip->bcast_off != OPS_NO_CHUNK)
            stage_bcast(pl, &v, ws + ip->bcast_off);
    }
    return v;
}

/* A one-element result (a reduction, or the fill of an empty one) in dt. */
static void store_one(char *p, aclDataType dt, double v, uint64_t iv)
{
    if (dt == ACL_INT64)
        st_i64(p, (int64_t)iv);
    else
        store_elem(p, dt, (float)v);
}

static void execute_plan(const ops_plan *pl, const aclTensor *in, const aclTensor *out, char *ws)
{
    /* stage each input into its workspace chunks */
    aclTensor cur[OPS_MAX_IN];
    for (int i = 0; i < pl->n_in; i++)
        cur[i] = stage_input(pl, i, &in[i], ws);

    /* where the l0 result goes */
    size_t csz = ops_dtype_size(pl->cdt), osz = ops_dtype_size(out->dtype);
    char *out_lin = (char *)out->data + out->offset * (int64_t)osz; /* out contiguous */
    char *res = pl->res_off != OPS_NO_CHUNK ? ws + pl->res_off : out_lin;

    if (pl->fill_only) {
        store_one(res, pl->cdt, pl->reduction == 1 ? NAN : 0.0, 0);
    } else {
        /* the l0 kernel iterates over the broadcast shape: operand 0 the result, then the staged inputs */
        nd_iter it;
        row_fn kernel = pl->desc->kernel(pl);
        nd_init(&it, &pl->bshape, pl->n_in + 1);
        nd_set_contig(&it, 0, res, csz);
        for (int i = 0; i < pl->n_in; i++)
            nd_set_tensor(&it, i + 1, &cur[i], ops_dtype_size(cur[i].dtype));
        if (pl->reduce) {
            ops_red_acc acc;
            nd_reduce(&it, kernel, &pl->k, &acc);
            double r = pl->reduction == 1 ? acc.sum / (double)pl->divisor : acc.sum;
            store_one(res, pl->cdt, r, acc.isum);
        } else {
            nd_run(&it, kernel, (void *)&pl->k);
        }
    }

    /* Cast to out's dtype, ViewCopy into out */
    char *last = res;
    if (out->dtype != pl->cdt) {
        char *dst = pl->cast_off != OPS_NO_CHUNK ? ws + pl->cast_off : out_lin;
        cast_linear(dst, out->dtype, res, pl->cdt, pl->rnumel);
        last = dst;
    }
    if (!pl->out_direct)
        scatter_view(out, last);
}

static aclError task_run(emu_task *base)
{
    ops_task *t = (ops_task *)base;
    const ops_plan *pl = &t->plan;
    const ops_desc *d = pl->desc;
    int32_t dev = -1;
    bool have_dev = false;
    /* Nothing is touched unless every operand is still the allocation it was at launch. */
    for (int i = 0; i < pl->n_in; i++) {
        if (!run_check_operand(t, "input", i, d->in_names[i], &t->in_mem[i], true, &dev, &have_dev))
            return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    if (!run_check_operand(t, "output", 0, d->out_name, &t->out_mem, true, &dev, &have_dev) ||
        !run_check_operand(t, "workspace", -1, NULL, &t->ws_mem, false, &dev, &have_dev))
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    execute_plan(pl, t->in, &t->out, t->ws);
    emu_counter_add(EMU_COUNTER_KERNELS_RUN, 1);
    emu_device_kernel_run(dev);
    return ACL_SUCCESS;
}

static void task_release(emu_task *base)
{
    free(base);
}

static aclError ops_launch(aclOpExecutor *ex, void *workspace, uint64_t workspace_size, aclrtStream stream,
                           const char *api)
{
    const ops_plan *pl = ex->op_state;
    EMU_RETURN_IF_STATUS(aclError, ops_require_state(api, pl));
    if (pl->no_work)
        return ACL_SUCCESS;
    /* Not calloc: the task is large and every field read is set here (inputs past
     * n_in are never read), so clearing it all would cost each launch. */
    ops_task *t = malloc(sizeof *t);
    if (t == NULL) {
        emu_error("%s: out of host memory for the %s task", api, pl->desc->name);
        return ACL_ERROR_BAD_ALLOC;
    }
    memset(t->in_mem, 0, sizeof t->in_mem);
    t->out_mem = (ops_operand){0};
    t->ws_mem = (ops_operand){0};
    t->base.run = task_run;
    t->base.release = task_release;
    t->base.name = pl->desc->name;
    t->base.next = NULL;
    t->plan = *pl;
    for (int i = 0; i < pl->n_in; i++) {
        t->in[i] = ex->inputs[i];
        if (!pl->fill_only)
            pin_tensor(&t->in_mem[i], &t->in[i]);
    }
    t->out = ex->outputs[0];
    pin_tensor(&t->out_mem, &t->out);
    t->ws = workspace;
    if (pl->ws_total > 0) {
        t->ws_mem.used = true;
        emu_devmem_pin(workspace, pl->ws_total, &t->ws_mem.r);
    }
    return emu_stream_enqueue(stream, &t->base, api);
}

static void ops_release_op(aclOpExecutor *ex)
{
    free(ex->op_state);
    ex->op_state = NULL;
}

/* ======================================================================== */
/* phase 1                                                                  */
/* ======================================================================== */

/* An empty plan: no workspace chunks yet. */
static void plan_init(ops_plan *pl, const ops_desc *d, int64_t reduction)
{
    memset(pl, 0, sizeof *pl);
    pl->desc = d;
    pl->n_in = d->n_in;
    pl->reduction = reduction;
    for (int i = 0; i < OPS_MAX_IN; i++)
        pl->in[i].contig_off = pl->in[i].cast_off = pl->in[i].bcast_off = OPS_NO_CHUNK;
    pl->res_off = pl->cast_off = OPS_NO_CHUNK;
    pl->k.coef = 1.0f;
}

/* Emulator-only: a live descriptor with a sane view (reads nothing of a destroyed one). */
static aclnnStatus check_live(const char *api, const char *arg, const aclTensor *t)
{
    if (!emu_tensor_is_live(t))
        return ops_not_live(api, arg, "aclTensor", "aclCreateTensor");
    if (t->ndim > EMU_TENSOR_MAX_DIMS) {
        emu_error("%s: %s has %" PRIu64 " dimensions, more than a tensor can hold", api, arg, t->ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (uint64_t i = 0; i < t->ndim; i++) {
        if (t->dims[i] < 0) {
            emu_error("%s: %s has a negative size %" PRId64 " in dimension %" PRIu64, api, arg, t->dims[i], i);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

/* Emulator-only, for tensors the kernel will touch: strides/offset in aclCreateTensor's domain. */
static aclnnStatus check_view_domain(const char *api, const char *arg, const aclTensor *t)
{
    if (t->offset < 0) {
        emu_error("%s: %s has a negative view offset %" PRId64 " (offsets and strides must be non-negative)",
                  api, arg, t->offset);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (uint64_t i = 0; i < t->ndim; i++) {
        if (t->strides[i] < 0) {
            emu_error("%s: %s has a negative stride %" PRId64 " in dimension %" PRIu64
                      " (offsets and strides must be non-negative)",
                      api, arg, t->strides[i], i);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    uint64_t e;
    if (ops_view_numel(t) < 0 || !view_extent_bytes(t, &e)) {
        emu_error("%s: %s view is too large to address", api, arg);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* CANN's l0 Contiguous refuses a view that does not fit its storage shape (-> 561103). */
static aclnnStatus check_contiguous_source(const char *api, const char *arg, const aclTensor *t)
{
    uint64_t ext, storage = 1;
    if (view_contiguous(t) || !view_extent_elems(t, &ext))
        return ACLNN_SUCCESS;
    for (uint64_t i = 0; i < t->storage_ndim && i < EMU_TENSOR_MAX_DIMS; i++) {
        if (t->storage_dims[i] < 0 ||
            __builtin_mul_overflow(storage, (uint64_t)t->storage_dims[i], &storage)) {
            storage = UINT64_MAX;
            break;
        }
    }
    if (ext > storage) {
        emu_error("%s: %s is a non-contiguous view reaching %" PRIu64 " elements of its storage, but its "
                  "storage shape holds only %" PRIu64 " elements; making it contiguous failed",
                  api, arg, ext, storage);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    return ACLNN_SUCCESS;
}

/* Emulator-only: the device memory the kernel will touch (data may still be NULL here). */
static aclnnStatus check_memory(const char *api, const char *arg, const aclTensor *t)
{
    uint64_t bytes;
    if (t->data == NULL)
        return ACLNN_SUCCESS;
    if (((uintptr_t)t->data % OPS_ADDR_ALIGN) != 0) {
        emu_error("%s: %s data address %p is not %u-byte aligned (aclCreateTensor requires it)", api, arg,
                  t->data, OPS_ADDR_ALIGN);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (ops_view_numel(t) == 0) /* nothing is read or written: only the alignment rule applies */
        return ACLNN_SUCCESS;
    if (!view_extent_bytes(t, &bytes)) {
        emu_error("%s: %s view is too large to address", api, arg);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!emu_devmem_contains(t->data, 0, NULL)) {
        emu_error("%s: %s data %p is not device memory (host memory or not allocated with aclrtMalloc, "
                  "or already freed)",
                  api, arg, t->data);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!emu_devmem_contains(t->data, bytes, NULL)) {
        emu_error("%s: %s view exceeds its allocation: it reaches %" PRIu64 " bytes from %p (offset %" PRId64
                  " elements), past the end of the aclrtMalloc block",
                  api, arg, bytes, t->data, t->offset);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_view_memory(const char *api, const char *arg, const aclTensor *t)
{
    OPS_CHECK(check_view_domain(api, arg, t));
    return check_memory(api, arg, t);
}

bool ops_view_extent_bytes(const aclTensor *t, uint64_t *bytes)
{
    return view_extent_bytes(t, bytes);
}

aclnnStatus ops_check_rank(const char *api, const char *arg, const aclTensor *t)
{
    if (t->ndim > EMU_MAX_DIMS) {
        emu_error("%s: %s has %" PRIu64 " dimensions; at most %d are supported", api, arg, t->ndim, EMU_MAX_DIMS);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_dtype(const char *api, const char *arg, const aclTensor *t, ops_dtypes set)
{
    char note[160], list[256];
    if (!ops_dtype_in(t->dtype, set)) {
        emu_error("%s: %s has dtype %s, which is not supported; supported dtypes: %s%s", api, arg,
                  ops_dt_name(t->dtype), ops_dtypes_str(set, list, sizeof list),
                  ops_bf16_note(t->dtype, note, sizeof note));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_out_shape(const char *api, const char *arg, const aclTensor *out, const shape_t *bs)
{
    char a[256], b[256];
    if (!ops_shape_equals(out, bs)) {
        ops_dims_str(a, sizeof a, out->dims, out->ndim);
        ops_dims_str(b, sizeof b, bs->d, (uint64_t)bs->ndim);
        emu_error("%s: %s has shape %s but must have the broadcast shape %s", api, arg, a, b);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_broadcast(const char *api, const char *an, const int64_t *a, uint64_t na, const char *bn,
                                const int64_t *b, uint64_t nb, shape_t *out)
{
    char sa[256], sb[256];
    if (!ops_broadcast_dims(a, (int)na, b, (int)nb, out)) {
        ops_dims_str(sa, sizeof sa, a, na);
        ops_dims_str(sb, sizeof sb, b, nb);
        emu_error("%s: %s shape %s and %s shape %s cannot be broadcast together", api, an, sa, bn, sb);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_reduction(const char *api, int64_t reduction)
{
    if (reduction < 0 || reduction > 2) {
        emu_error("%s: reduction must be 0 (none), 1 (mean) or 2 (sum), but got %" PRId64, api, reduction);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_tensors_given(const char *api, const aclTensor *const *ts, const char *const *names, int n)
{
    OPS_CHECK(ops_check_not_null(api, ts, names, n));
    for (int i = 0; i < n; i++)
        OPS_CHECK(check_live(api, names[i], ts[i]));
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_promotable(const char *api, const aclTensor *a, const char *an, const aclTensor *b,
                                 const char *bn, aclDataType *p)
{
    *p = ops_promote_type(a->dtype, b->dtype);
    if (*p == ACL_DT_UNDEFINED) {
        emu_error("%s: %s dtype %s and %s dtype %s cannot be promoted to a common dtype", api, an,
                  ops_dt_name(a->dtype), bn, ops_dt_name(b->dtype));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_promoted_dtype(const char *api, const aclTensor *a, const char *an, const aclTensor *b,
                                     const char *bn, aclDataType p, ops_dtypes set)
{
    char note[160], list[256];
    if (!ops_dtype_in(p, set)) {
        emu_error("%s: %s dtype %s and %s dtype %s promote to %s, which is not supported; supported "
                  "dtypes: %s%s",
                  api, an, ops_dt_name(a->dtype), bn, ops_dt_name(b->dtype), ops_dt_name(p),
                  ops_dtypes_str(set, list, sizeof list), ops_bf16_note(p, note, sizeof note));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_cast_to_out(const char *api, aclDataType p, const char *arg, const aclTensor *out)
{
    if (!ops_can_cast(p, out->dtype)) {
        emu_error("%s: the promoted dtype %s cannot be cast to %s's dtype %s", api, ops_dt_name(p), arg,
                  ops_dt_name(out->dtype));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_beta(const char *api, float beta)
{
    if (!(beta >= 0.0f)) {
        emu_error("%s: beta must be greater than or equal to 0, but got %g", api, (double)beta);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_pair_shapes(const char *api, const aclTensor *const *ts, const char *const *names,
                                  bool check_out, shape_t *bs)
{
    OPS_CHECK(ops_check_ranks(api, ts, names, 2));
    OPS_CHECK(ops_check_broadcast(api, names[0], ts[0]->dims, ts[0]->ndim, names[1], ts[1]->dims, ts[1]->ndim,
                                  bs));
    return check_out ? ops_check_out_shape(api, names[2], ts[2], bs) : ACLNN_SUCCESS;
}

aclnnStatus ops_check_reduced_out(const char *api, const char *arg, const aclTensor *out, int64_t reduction,
                                  bool any_one_element)
{
    char sa[256];
    if (reduction == 0)
        return ACLNN_SUCCESS;
    const char *how = reduction == 1 ? "mean" : "sum";
    if (!any_one_element) {
        if (out->ndim != 0) {
            ops_dims_str(sa, sizeof sa, out->dims, out->ndim);
            emu_error("%s: with reduction %" PRId64 " (%s) %s must be a 0-dimensional tensor, but its shape is %s",
                      api, reduction, how, arg, sa);
            return ACLNN_ERR_PARAM_INVALID;
        }
        return ACLNN_SUCCESS;
    }
    OPS_CHECK(ops_check_rank(api, arg, out));
    if (ops_view_numel(out) != 1) {
        ops_dims_str(sa, sizeof sa, out->dims, out->ndim);
        emu_error("%s: with reduction %" PRId64 " (%s) the loss is one element, but %s has shape %s: "
                  "copying the loss into %s failed (%s must be 0-dimensional or [1])",
                  api, reduction, how, arg, sa, arg, arg);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_plan_staged(const char *api, const ops_args *a, ops_plan *pl, aclDataType cdt, bool bcast_first,
                            bool reduce)
{
    pl->cdt = cdt;
    pl->stage_cast = true;
    pl->stage_bcast = true;
    pl->bcast_first = bcast_first;
    pl->reduce = reduce;
    pl->divisor = ops_shape_numel(&pl->bshape);
    return ops_plan_body(api, pl, a->in, a->out);
}

aclnnStatus ops_plan_reduced_loss(const char *api, const ops_args *a, const aclTensor *const *ts,
                                  const char *const *names, ops_plan *pl, aclDataType cdt)
{
    OPS_CHECK(ops_check_pair_shapes(api, ts, names, a->reduction == 0, &pl->bshape));
    OPS_CHECK(ops_check_reduced_out(api, names[2], ts[2], a->reduction, false));
    return ops_plan_staged(api, a, pl, cdt, false, a->reduction != 0);
}

typedef aclnnStatus (*tensor_check)(const char *api, const char *arg, const aclTensor *t);

/* check each input of pl, then out unless it is NULL; the first failure is returned. */
static aclnnStatus check_operands(const char *api, tensor_check check, const ops_plan *pl,
                                  const aclTensor *const *ins, const aclTensor *out)
{
    const ops_desc *d = pl->desc;
    for (int i = 0; i < pl->n_in; i++)
        OPS_CHECK(check(api, d->in_names[i], ins[i]));
    return out != NULL ? check(api, d->out_name, out) : ACLNN_SUCCESS;
}

/* Result routing (shared): l0 result in cdt -> Cast(out dtype) -> ViewCopy(out). */
static bool plan_result(ops_plan *pl, const aclTensor *out)
{
    bool out_contig = view_contiguous(out);
    bool need_cast = out->dtype != pl->cdt;
    pl->res_off = OPS_NO_CHUNK;
    pl->cast_off = OPS_NO_CHUNK;
    if ((need_cast || !out_contig) && !ws_add_elems(&pl->ws_total, (uint64_t)pl->rnumel, pl->cdt, &pl->res_off))
        return false;
    if (need_cast && !out_contig && !ws_add_elems(&pl->ws_total, (uint64_t)pl->rnumel, out->dtype, &pl->cast_off))
        return false;
    pl->out_direct = out_contig;
    return true;
}

aclnnStatus ops_plan_body(const char *api, ops_plan *pl, const aclTensor *const *ins, const aclTensor *out)
{
    const char *out_name = pl->desc->out_name;
    bool empty = false;
    pl->bnumel = ops_shape_numel(&pl->bshape);
    pl->rnumel = pl->reduce ? 1 : pl->bnumel;
    pl->k.cdt = pl->cdt;
    for (int i = 0; i < pl->n_in; i++)
        if (ops_view_numel(ins[i]) == 0)
            empty = true;

    if (empty) {
        OPS_CHECK(check_operands(api, check_memory, pl, ins, NULL));
        if (!pl->reduce) { /* CANN: success, workspace 0, nothing to run (the sizes stay 0) */
            pl->no_work = true;
            pl->out_direct = true;
            return check_memory(api, out_name, out);
        }
        /* CANN fills out with NaN (mean) or 0 (sum): a tiny kernel writing out */
        pl->fill_only = true;
        pl->rnumel = 1;
        OPS_CHECK(check_view_domain(api, out_name, out));
        pl->cdt = out->dtype; /* the fill value is made in out's dtype */
        pl->out_direct = true; /* a one-element out is contiguous */
        return check_memory(api, out_name, out);
    }

    OPS_CHECK(check_operands(api, check_view_domain, pl, ins, out));
    /* per input: Contiguous, then Cast and BroadcastTo (in the operator's order), each materialised */
    for (int i = 0; i < pl->n_in; i++) {
        const aclTensor *t = ins[i];
        const char *name = pl->desc->in_names[i];
        ops_in_plan *ip = &pl->in[i];
        uint64_t numel = (uint64_t)ops_view_numel(t), bnumel = (uint64_t)pl->bnumel;
        bool cast = pl->stage_cast && t->dtype != pl->cdt;
        bool bcast = pl->stage_bcast && !ops_shape_equals(t, &pl->bshape);
        bool ok = true;
        OPS_CHECK(check_contiguous_source(api, name, t));
        if (!view_contiguous(t))
            ok = ws_add_elems(&pl->ws_total, numel, t->dtype, &ip->contig_off);
        if (pl->bcast_first) {
            if (ok && bcast)
                ok = ws_add_elems(&pl->ws_total, bnumel, t->dtype, &ip->bcast_off);
            if (ok && cast)
                ok = ws_add_elems(&pl->ws_total, bcast ? bnumel : numel, pl->cdt, &ip->cast_off);
        } else {
            if (ok && cast)
                ok = ws_add_elems(&pl->ws_total, numel, pl->cdt, &ip->cast_off);
            if (ok && bcast)
                ok = ws_add_elems(&pl->ws_total, bnumel, pl->cdt, &ip->bcast_off);
        }
        if (!ok) {
            emu_error("%s: %s is too large", api, name);
            return ACLNN_ERR_PARAM_INVALID;
        }
        pl->k.dt[i] = cast ? pl->cdt : t->dtype;
    }
    /* the l0 kernel (cdt) -> Cast(out dtype) -> ViewCopy(out) */
    if (!plan_result(pl, out)) {
        emu_error("%s: %s is too large", api, out_name);
        return ACLNN_ERR_PARAM_INVALID;
    }
    /* emulator-only: the device memory of every view */
    return check_operands(api, check_memory, pl, ins, out);
}

/* Snapshot tensors and plan into the executor; on failure the caller discards it. */
static aclnnStatus finish_executor(const char *api, aclOpExecutor *ex, const ops_plan *pl,
                                   const aclTensor *const *ins, const aclTensor *out)
{
    ops_plan *st = malloc(sizeof *st);
    if (st == NULL) {
        emu_error("%s: out of host memory", api);
        return ACLNN_ERR_INNER;
    }
    *st = *pl;
    ex->n_inputs = (size_t)pl->n_in;
    ex->n_outputs = 1;
    for (int i = 0; i < pl->n_in; i++) {
        ex->inputs[i] = *ins[i];
        ex->caller_inputs[i] = ins[i];
    }
    ex->outputs[0] = *out;
    ex->caller_outputs[0] = out;
    ex->workspace_size = pl->ws_total;
    ex->op_state = st;
    ex->launch = ops_launch;
    ex->release_op = ops_release_op;
    return ACLNN_SUCCESS;
}

/*
 * The executor-cache signature of a call, as CANN's cache keys it (hicann/opbase op_cache.cpp
 * hashes the operator, each tensor's description and the attribute values, not the addresses):
 * the operator's name, then per tensor (inputs, then out) its dtype, format, shape, strides,
 * offset and storage shape, then the reduction, beta and alpha's value and dtype.
 */
typedef struct {
    unsigned char bytes[4096];
    size_t n;
    bool full; /* did not fit: the call is not cacheable */
} ops_signature;

static void sig_put(ops_signature *sg, const void *p, size_t n)
{
    if (sg->full || n > sizeof sg->bytes - sg->n) {
        sg->full = true;
        return;
    }
    memcpy(sg->bytes + sg->n, p, n);
    sg->n += n;
}

static void sig_tensor(ops_signature *sg, const aclTensor *t)
{
    int32_t head[2] = {(int32_t)t->dtype, (int32_t)t->format};
    sig_put(sg, head, sizeof head);
    sig_put(sg, &t->ndim, sizeof t->ndim);
    sig_put(sg, t->dims, (size_t)t->ndim * sizeof t->dims[0]);
    sig_put(sg, t->strides, (size_t)t->ndim * sizeof t->strides[0]);
    sig_put(sg, &t->offset, sizeof t->offset);
    sig_put(sg, &t->storage_ndim, sizeof t->storage_ndim);
    sig_put(sg, t->storage_dims, (size_t)t->storage_ndim * sizeof t->storage_dims[0]);
}

static void call_signature(ops_signature *sg, const ops_desc *d, const ops_args *a)
{
    sg->n = 0;
    sg->full = false;
    sig_put(sg, d->name, strlen(d->name) + 1);
    for (int i = 0; i < d->n_in; i++)
        sig_tensor(sg, a->in[i]);
    sig_tensor(sg, a->out);
    sig_put(sg, &a->reduction, sizeof a->reduction);
    sig_put(sg, &a->beta, sizeof a->beta);
    double alpha = 0.0;
    aclDataType alpha_dtype = ACL_DT_UNDEFINED;
    if (a->alpha != NULL)
        emu_scalar_read(a->alpha, &alpha, &alpha_dtype);
    sig_put(sg, &alpha, sizeof alpha);
    sig_put(sg, &alpha_dtype, sizeof alpha_dtype);
}

/* The argument of a C operator's parameter `name` (its in_names, out_name, and the attributes
   its ops_args holds), for its rules; false for a tensor that is not a live one (the plan says
   so) or a parameter ops_args does not hold. */
static bool prototype_arg(const ops_desc *d, const ops_args *a, const char *name, aclemuKernelArg *k,
                          bool *null)
{
    const aclTensor *t = NULL;
    bool tensor = false;
    memset(k, 0, sizeof *k);
    *null = false;
    if (strcmp(name, d->out_name) == 0) {
        t = a->out;
        tensor = true;
    }
    for (int i = 0; !tensor && i < d->n_in; i++)
        if (strcmp(name, d->in_names[i]) == 0) {
            t = a->in[i];
            tensor = true;
        }
    if (tensor) {
        *null = t == NULL;
        if (t == NULL || !emu_tensor_is_live(t))
            return false;
        k->kind = ACLEMU_ARG_TENSOR;
        k->present = 1;
        k->data = t->data;
        k->dtype = (int32_t)t->dtype;
        k->format = (int32_t)t->format;
        k->ndim = t->ndim;
        k->dims = t->dims;
        k->strides = t->strides;
        k->offset = t->offset;
        return true;
    }
    if (strcmp(name, "reduction") == 0) {
        k->kind = ACLEMU_ARG_INTEGER;
        k->present = 1;
        k->integer = a->reduction;
        return true;
    }
    if (strcmp(name, "beta") == 0) {
        k->kind = ACLEMU_ARG_REAL;
        k->present = 1;
        k->real = a->beta;
        return true;
    }
    if (strcmp(name, "alpha") == 0) {
        aclDataType dtype;
        *null = a->alpha == NULL;
        if (!a->alpha || !emu_scalar_read(a->alpha, &k->real, &dtype))
            return false;
        k->kind = ACLEMU_ARG_SCALAR;
        k->present = 1;
        k->scalar_dtype = (int32_t)dtype;
        return true;
    }
    return false;
}

/* The operator's rules (ops_rules.h), once its required parameters are known not to be NULL;
   a tensor that is not live is left to the plan, which names it. */
static aclnnStatus check_prototype(const char *api, const ops_desc *d, const ops_args *a)
{
    const ops_prototype *p = d->prototype;
    aclemuKernelArg args[OPS_MAX_IN + 4];
    if (!p || p->count > (int32_t)(sizeof args / sizeof args[0]))
        return ACLNN_SUCCESS;
    bool complete = true;
    for (int32_t i = 0; i < p->count; i++) {
        bool null;
        if (!prototype_arg(d, a, p->names[i], &args[i], &null)) {
            if (null && p->nullable[i] != '1') {
                emu_error("%s: %s is NULL (it is not an optional argument)", api, p->names[i]);
                return ACLNN_ERR_PARAM_NULLPTR;
            }
            complete = complete && null;
        }
    }
    return complete ? ops_check_rules(api, p->rules, args, p->names, p->count) : ACLNN_SUCCESS;
}

aclnnStatus ops_phase1(const ops_desc *d, const ops_args *a, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = d->phase1_api;
    aclOpExecutor *ex;
    aclnnStatus st = ops_phase1_begin(api, d->name, workspaceSize, executor, &ex);
    if (st != ACLNN_SUCCESS)
        return st;
    ops_plan pl;
    plan_init(&pl, d, a->reduction);
    st = check_prototype(api, d, a);
    if (st == ACLNN_SUCCESS)
        st = d->plan(api, a, &pl);
    if (st == ACLNN_SUCCESS)
        st = finish_executor(api, ex, &pl, a->in, a->out);
    if (st != ACLNN_SUCCESS) {
        emu_executor_discard(ex);
        return st;
    }
    if (emu_op_cache_epoch() != 0) { /* ACLNN_EMU_OP_CACHE=1 */
        ops_signature sg;
        call_signature(&sg, d, a);
        if (!sg.full)
            emu_executor_set_signature(ex, sg.bytes, sg.n);
    }
    *workspaceSize = pl.ws_total;
    *executor = ex;
    return ACLNN_SUCCESS;
}

aclnnStatus ops_phase2(const char *api, void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                       aclrtStream stream)
{
    aclnnStatus fault = emu_executor_fault(api, executor);
    if (fault != 0)
        return fault;
    return emu_executor_run(api, workspace, workspaceSize, executor, stream);
}
