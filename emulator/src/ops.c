/*
 * libopapi.so of the aclnn_py host emulator: aclnnMseLossBackward and aclnnMseLoss.
 *
 * Behaviour follows CANN's open-sourced operator API code (hicann/ops-nn):
 *   loss/mse_loss_grad_v2/op_host/op_api/aclnn_mse_loss_backward.cpp  (phase 1/2, check order)
 *   loss/mse_loss_grad_v2/op_host/op_api/mse_loss_grad.cpp             (l0 MseLossGrad: result in self's dtype)
 *   loss/mse_loss_grad_v2/docs/aclnnMseLossBackward.md                 (formula, codes, sample)
 *   aclnn_mse_loss.cpp (loss/mse_loss/op_host/op_api/ or loss/mse_loss/op_api/ by revision),
 *   loss/mse_loss/docs/aclnnMseLoss.md. Two revisions were read: a 2025 one that broadcasts
 *   self with target (followed here) and a 2026 one that requires equal self/target shapes.
 *   level2_base_loss.h (CheckDtypeValidMseLoss, CheckReductionMseLoss, CheckFillScalarLoss)
 *   common/inc/op_api/level2_base.h -> level2_base_nn.h (CheckNotNull3Tensor/4Tensor, GetDtypeSupportListV2)
 *   hicann/opbase aclnn_kernels/common/op_error_check.h (OP_CHECK_* macros: what each check tests)
 * Check order, aclnnMseLossBackwardGetWorkspaceSize (CANN):
 *   1. workspaceSize / executor NULL                              -> 161001
 *   2. create the executor                                        -> 561101
 *   3. gradOutput, self, target, out NULL (in this order)          -> 161001
 *   4. dtype: gradOutput == self, target == self, self in list, out in list -> 161002
 *      list = {FLOAT, FLOAT16, BF16} on DAV_2201 (A2/A3) / regbase (950), else {FLOAT, FLOAT16}
 *   5. reduction in [0, 2]                                         -> 161002
 *   6. rank <= 8 for gradOutput, self, target; broadcast(gradOutput, self), then with target;
 *      out shape == broadcast shape                                -> 161002
 *   7. any input empty -> success, workspace 0, executor without work
 *   8. l0 Contiguous of each input (view must fit its storage shape, else NULL -> 561103),
 *      MseLossGrad (result in self's dtype), Cast to out's dtype, ViewCopy into out.
 * aclnnMseLossGetWorkspaceSize (CANN): 1, 2, then self/target/out NULL; dtype: promote(self, target)
 *   in list, then self, target, out each in list; reduction; rank self, target <= 8; broadcast;
 *   reduction 0 -> out == broadcast shape, 1/2 -> out must be 0-d; empty input -> none: nothing,
 *   mean: out = NaN, sum: out = 0; else Contiguous -> Cast(promoted) -> BroadcastTo -> MseLoss ->
 *   Cast(out dtype) -> ViewCopy.
 * Emulator-only strictness (not in CANN's code, what hardware would punish): each tensor must be a
 * live aclTensor (checked right after the NULL checks, before anything reads it), dims/strides/offset
 * non-negative; at the end of phase 1 each non-empty view's data, when set, must be 32-byte aligned
 * and lie wholly inside one live aclrtMalloc allocation; the kernel re-checks every range it touches
 * when it runs (507015 if freed, NULL or foreign).
 * Workspace (reported only when CANN's graph needs intermediate tensors, and really used by the
 * kernel; each chunk rounded up to 512 bytes, laid out in this order):
 *   per input whose view is not C-contiguous (strides of dims > 1 not row-major; zero-stride
 *   broadcast views included, an offset alone does not count): numel x itemsize (Contiguous);
 *   forward only, per input whose dtype differs from the promoted one: numel x promoted itemsize
 *   (Cast), and per input whose shape differs from the broadcast one: broadcast numel x promoted
 *   itemsize (BroadcastTo);
 *   when out's dtype differs from the compute dtype, or out is not contiguous: the l0 result,
 *   result numel x compute itemsize; when both: also the cast result, result numel x out itemsize,
 *   copied into out's view by the ViewCopy.
 * Math (golden: PyTorch aten::mse_loss_backward / mse_loss): float32 per element,
 *   backward r = (coef * (self - target)) * gradOutput, coef = (float)(2.0 / self.numel()) for mean,
 *   else 2; forward d = self - target, d * d, summed in double (in fixed blocks and lanes, see nd_reduce:
 *   the same result for every thread count), mean divides by the broadcast numel;
 *   results rounded (RNE) to the compute dtype, then cast to out's dtype.
 * Speed: each stage is one pass over memory (fp16/bf16 converted in registers, 4 lanes at a time);
 * stages over large tensors split their elements among threads (ACLNN_EMU_THREADS, see par_for).
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

#include "emu_internal.h"

#define OPS_ADDR_ALIGN 32u  /* aclCreateTensor: tensorData must be 32-byte aligned */
#define OPS_WS_ALIGN 512u   /* each workspace chunk is rounded up to this */
#define OPS_NO_CHUNK UINT64_MAX

/* ======================================================================== */
/* fp16 / bf16 <-> fp32 (round to nearest even)                             */
/* ======================================================================== */

/*
 * Each conversion exists as a scalar function and as a 4-lane one (GCC/Clang vector extensions,
 * plain SSE2 / NEON code) doing the same integer and float steps lane by lane, so that a kernel's
 * contiguous fast path, its strided path and its tail give bit-identical results. The float steps
 * are exact (their results are normal fp32 numbers, so FTZ/DAZ cannot change them) in the default
 * round-to-nearest-even mode; every NaN keeps its sign and fp16 NaNs keep their payload's top bits.
 */

typedef float v4f __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef uint16_t v4h __attribute__((vector_size(8)));
typedef double v4d __attribute__((vector_size(32)));

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/*
 * fp16 -> fp32, exact. Normal numbers rebias the exponent; infinity / NaN get the fp32 maximum
 * exponent (payload kept); subnormals (and zero) are 1.mant x 2^-14 - 2^-14 = mant x 2^-24, an
 * exact subtraction.
 */
static inline float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = (uint32_t)(h & 0x7fffu) << 13;
    uint32_t e = em & 0x0f800000u;
    uint32_t r = em + (112u << 23);
    if (e == 0x0f800000u)
        r += 112u << 23;
    else if (e == 0)
        r = f32_bits(bits_f32(em + (113u << 23)) - 0x1p-14f);
    return bits_f32(r | sign);
}

static inline v4f v_f16_to_f32(v4u h)
{
    v4u sign = (h & 0x8000u) << 16;
    v4u em = (h & 0x7fffu) << 13;
    v4u e = em & 0x0f800000u;
    v4u r = em + (112u << 23);
    r += (v4u)(e == 0x0f800000u) & (112u << 23);
    v4u sub = (v4u)((v4f)(em + (113u << 23)) - 0x1p-14f);
    v4u zero = (v4u)(e == 0u);
    r = (r & ~zero) | (sub & zero);
    return (v4f)(r | sign);
}

/*
 * fp32 -> fp16, round to nearest even. a = |x|: NaN keeps the top payload bits (stays a NaN);
 * >= 65536 is infinity; the normal range rounds the mantissa by adding 0xfff + lsb (a carry into
 * the exponent is correct, up to infinity); below 2^-14 the value is added to 0.5, whose ulp is
 * 2^-24, half's subnormal step: the float addition rounds it, its low bits are the result
 * (fp32 subnormals give 0).
 */
static inline uint16_t f32_to_f16(float f)
{
    uint32_t x = f32_bits(f), sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu, r;
    if (a > 0x7f800000u) {
        r = 0x7c00u | ((a & 0x7fffffu) >> 13);
        if (r == 0x7c00u)
            r = 0x7c01u;
    } else if (a >= 0x47800000u) {
        r = 0x7c00u;
    } else if (a >= 0x38800000u) {
        r = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    } else {
        r = f32_bits(bits_f32(a) + 0.5f) - 0x3f000000u;
    }
    return (uint16_t)(sign | r);
}

static inline v4u v_f32_to_f16(v4f f)
{
    v4u x = (v4u)f;
    v4u sign = (x >> 16) & 0x8000u;
    v4u a = x & 0x7fffffffu;
    v4i ai = (v4i)a; /* non-negative: signed compares are the cheap ones */
    v4u r = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    v4u sub = (v4u)((v4f)a + 0.5f) - 0x3f000000u;
    v4u nan = 0x7c00u | ((a & 0x7fffffu) >> 13);
    nan |= (v4u)(nan == 0x7c00u) & 1u;
    v4u m = (v4u)(ai < 0x38800000);
    r = (r & ~m) | (sub & m);
    m = (v4u)(ai >= 0x47800000);
    r = (r & ~m) | (0x7c00u & m);
    m = (v4u)(ai > 0x7f800000);
    r = (r & ~m) | (nan & m);
    return r | sign;
}

static inline float bf16_to_f32(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

static inline v4f v_bf16_to_f32(v4u h)
{
    return (v4f)(h << 16);
}

/* fp32 -> bf16, round to nearest even (overflow to infinity is correct); NaN: the quiet NaN, sign kept. */
static inline uint16_t f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)(((x >> 16) & 0x8000u) | 0x7fc0u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static inline v4u v_f32_to_bf16(v4f f)
{
    v4u x = (v4u)f;
    v4u r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    v4u nan = ((x >> 16) & 0x8000u) | 0x7fc0u;
    v4u m = (v4u)((v4i)(x & 0x7fffffffu) > 0x7f800000);
    return (r & ~m) | (nan & m);
}

/*
 * Element access by dtype: ld_T / st_T one element, vld_T / vst_T four contiguous ones
 * (T = f32, f16, bf16), and load_elem / store_elem with the dtype at run time.
 */
static inline float ld_f32(const char *p)
{
    float f;
    memcpy(&f, p, 4);
    return f;
}

static inline float ld_f16(const char *p)
{
    uint16_t h;
    memcpy(&h, p, 2);
    return f16_to_f32(h);
}

static inline float ld_bf16(const char *p)
{
    uint16_t h;
    memcpy(&h, p, 2);
    return bf16_to_f32(h);
}

static inline void st_f32(char *p, float v)
{
    memcpy(p, &v, 4);
}

static inline void st_f16(char *p, float v)
{
    uint16_t h = f32_to_f16(v);
    memcpy(p, &h, 2);
}

static inline void st_bf16(char *p, float v)
{
    uint16_t h = f32_to_bf16(v);
    memcpy(p, &h, 2);
}

static inline v4f vld_f32(const char *p)
{
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline v4f vld_f16(const char *p)
{
    v4h h;
    memcpy(&h, p, sizeof h);
    return v_f16_to_f32(__builtin_convertvector(h, v4u));
}

static inline v4f vld_bf16(const char *p)
{
    v4h h;
    memcpy(&h, p, sizeof h);
    return v_bf16_to_f32(__builtin_convertvector(h, v4u));
}

static inline void vst_f32(char *p, v4f v)
{
    memcpy(p, &v, sizeof v);
}

static inline void vst_f16(char *p, v4f v)
{
    v4h h = __builtin_convertvector(v_f32_to_f16(v), v4h);
    memcpy(p, &h, sizeof h);
}

static inline void vst_bf16(char *p, v4f v)
{
    v4h h = __builtin_convertvector(v_f32_to_bf16(v), v4h);
    memcpy(p, &h, sizeof h);
}

static inline float load_elem(const char *p, aclDataType dt)
{
    switch (dt) {
    case ACL_FLOAT16:
        return ld_f16(p);
    case ACL_BF16:
        return ld_bf16(p);
    default:
        return ld_f32(p);
    }
}

static inline void store_elem(char *p, aclDataType dt, float v)
{
    switch (dt) {
    case ACL_FLOAT16:
        st_f16(p, v);
        break;
    case ACL_BF16:
        st_bf16(p, v);
        break;
    default:
        st_f32(p, v);
        break;
    }
}

/* ======================================================================== */
/* shapes, views, dtypes                                                    */
/* ======================================================================== */

typedef struct {
    int ndim;
    int64_t d[EMU_MAX_DIMS];
} shape_t;

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

static const char *dt_name(aclDataType dt)
{
    const char *n = emu_dtype_name(dt);
    return n ? n : "DT_UNDEFINED";
}

static bool dtype_supported(aclDataType dt)
{
    return dt == ACL_FLOAT || dt == ACL_FLOAT16 || (dt == ACL_BF16 && emu_soc_supports_bf16());
}

static const char *support_list_str(void)
{
    return emu_soc_supports_bf16() ? "[DT_FLOAT, DT_FLOAT16, DT_BF16]" : "[DT_FLOAT, DT_FLOAT16]";
}

/* Extra words for a bf16 rejection on a SoC without bf16 kernels ("" otherwise). */
static const char *bf16_note(aclDataType dt, char *buf, size_t n)
{
    buf[0] = '\0';
    if (dt == ACL_BF16 && !emu_soc_supports_bf16()) {
        const char *soc = emu_soc_name();
        snprintf(buf, n, " (DT_BF16 needs an Atlas A2/A3 or Ascend 950 SoC; the emulated SoC is %s)",
                 soc ? soc : "unknown");
    }
    return buf;
}

static void dims_str(char *buf, size_t n, const int64_t *d, uint64_t nd)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (uint64_t i = 0; i < nd && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %" PRId64 : "%" PRId64, d[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

/* Numpy broadcasting (right-aligned; equal, or one of them 1). */
static bool broadcast_dims(const int64_t *a, int na, const int64_t *b, int nb, shape_t *out)
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

static bool shape_equals(const aclTensor *t, const shape_t *s)
{
    if (t->ndim != (uint64_t)s->ndim)
        return false;
    for (int i = 0; i < s->ndim; i++)
        if (t->dims[i] != s->d[i])
            return false;
    return true;
}

static int64_t shape_numel(const shape_t *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= s->d[i];
    return n;
}

/* Number of elements, -1 on overflow. */
static int64_t view_numel(const aclTensor *t)
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
}

/*
 * Elements from the storage base the view reaches: offset + sum stride*(dim-1) + 1
 * (0 for an empty view). false on overflow.
 */
static bool view_extent_elems(const aclTensor *t, uint64_t *out)
{
    if (view_numel(t) == 0) {
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
 * Every element is computed by the same code whichever thread gets it, and MseLoss's sum/mean
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

/*
 * A row function gets n elements: operand k's first at ptrs[k], the next ones bstrides[k] bytes
 * apart. Operand 0 is the one written (if any).
 */
typedef void (*row_fn)(void *ctx, char *const *ptrs, const int64_t *bstrides, int64_t n);

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
 * Sum reductions (MseLoss mean/sum): the row-major element order is cut into at most RED_MAX_BLOCKS
 * blocks of equal size (a multiple of PAR_ALIGN, at least RED_MIN_BLOCK elements: one block up to
 * that), fixed by the element count alone. The row function adds each row piece of a block to the
 * block's double sum (see fwd_reduce rows: 4 lanes per piece); the blocks' sums are then added in
 * block order. Threads take whole blocks, so the result is the same for every thread count.
 */
#define RED_MAX_BLOCKS 256
#define RED_MIN_BLOCK ((int64_t)64 * 1024)

typedef struct {
    double sum;
} red_acc;

typedef struct {
    const nd_plan *p;
    row_fn fn;
    int64_t blk;
    double *part;
} red_job;

static void red_job_slice(void *arg, int64_t lo, int64_t hi)
{
    const red_job *j = arg;
    for (int64_t b = lo; b < hi; b++) {
        red_acc acc = {0.0};
        int64_t end = j->p->total - b * j->blk < j->blk ? j->p->total : (b + 1) * j->blk;
        nd_range(j->p, b * j->blk, end, j->fn, &acc);
        j->part[b] = acc.sum;
    }
}

/* The sum over every element of what fn adds to its red_acc. */
static double nd_reduce(const nd_iter *it, row_fn fn)
{
    nd_plan p;
    if (!nd_prepare(it, &p))
        return 0.0;
    int64_t blk = p.total / RED_MAX_BLOCKS + 1;
    if (blk < RED_MIN_BLOCK)
        blk = RED_MIN_BLOCK;
    blk = (blk + PAR_ALIGN - 1) / PAR_ALIGN * PAR_ALIGN;
    int64_t nb = (p.total - 1) / blk + 1;
    double part[RED_MAX_BLOCKS];
    red_job j = {&p, fn, blk, part};
    par_for(nb, blk, 1, false, red_job_slice, &j);
    double s = 0.0;
    for (int64_t b = 0; b < nb; b++)
        s += part[b];
    return s;
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

typedef struct {
    char *dst;
    aclDataType ddt;
    const char *src;
    aclDataType sdt;
} cast_job;

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
    switch (c->ddt) {
    case ACL_FLOAT16:
        if (c->sdt == ACL_BF16)
            CAST_LOOP(f16, bf16, 2, 2);
        else
            CAST_LOOP(f16, f32, 2, 4);
        break;
    case ACL_BF16:
        if (c->sdt == ACL_FLOAT16)
            CAST_LOOP(bf16, f16, 2, 2);
        else
            CAST_LOOP(bf16, f32, 2, 4);
        break;
    default:
        if (c->sdt == ACL_FLOAT16)
            CAST_LOOP(f32, f16, 4, 2);
        else
            CAST_LOOP(f32, bf16, 4, 2);
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

/* ---- l0 kernels: one fused pass, fp16/bf16 converted in registers ---- */

typedef struct {
    float coef;
} bwd_ctx;

/*
 * MseLossGrad, p[0] result, p[1] gradOutput, p[2] self, p[3] target, all of dtype T (ESZ bytes):
 * r = (coef * (self - target)) * gradOutput in float32, rounded to T. Fast paths for contiguous
 * rows with a contiguous or a scalar (stride 0) gradOutput; anything else element by element.
 */
#define DEF_BWD_ROW(T, ESZ)                                                                   \
    static void bwd_row_##T(void *vctx, char *const *p, const int64_t *s, int64_t n)         \
    {                                                                                         \
        const float coef = ((const bwd_ctx *)vctx)->coef;                                     \
        char *o = p[0];                                                                       \
        const char *g = p[1], *x = p[2], *y = p[3];                                           \
        int64_t j = 0;                                                                        \
        if (s[0] == (ESZ) && s[2] == (ESZ) && s[3] == (ESZ) && s[1] == 0) {                   \
            const float gs = ld_##T(g);                                                       \
            const v4f vc = {coef, coef, coef, coef}, vg = {gs, gs, gs, gs};                   \
            for (; j + 4 <= n; j += 4)                                                        \
                vst_##T(o + j * (ESZ), (vc * (vld_##T(x + j * (ESZ)) - vld_##T(y + j * (ESZ)))) * vg); \
            for (; j < n; j++)                                                                \
                st_##T(o + j * (ESZ), (coef * (ld_##T(x + j * (ESZ)) - ld_##T(y + j * (ESZ)))) * gs); \
            return;                                                                           \
        }                                                                                     \
        if (s[0] == (ESZ) && s[1] == (ESZ) && s[2] == (ESZ) && s[3] == (ESZ)) {               \
            const v4f vc = {coef, coef, coef, coef};                                          \
            for (; j + 4 <= n; j += 4)                                                        \
                vst_##T(o + j * (ESZ), (vc * (vld_##T(x + j * (ESZ)) - vld_##T(y + j * (ESZ)))) * \
                                           vld_##T(g + j * (ESZ)));                           \
        }                                                                                     \
        for (; j < n; j++)                                                                    \
            st_##T(o + j * s[0], (coef * (ld_##T(x + j * s[2]) - ld_##T(y + j * s[3]))) * ld_##T(g + j * s[1])); \
    }

DEF_BWD_ROW(f32, 4)
DEF_BWD_ROW(f16, 2)
DEF_BWD_ROW(bf16, 2)

/* MseLoss, reduction none: p[0] result, p[1] self, p[2] target (T): d = self - target, d * d. */
#define DEF_FWD_NONE_ROW(T, ESZ)                                                              \
    static void fwd_none_row_##T(void *vctx, char *const *p, const int64_t *s, int64_t n)    \
    {                                                                                         \
        char *o = p[0];                                                                       \
        const char *x = p[1], *y = p[2];                                                      \
        int64_t j = 0;                                                                        \
        if (s[0] == (ESZ) && s[1] == (ESZ) && s[2] == (ESZ)) {                                \
            for (; j + 4 <= n; j += 4) {                                                      \
                v4f d = vld_##T(x + j * (ESZ)) - vld_##T(y + j * (ESZ));                      \
                vst_##T(o + j * (ESZ), d * d);                                                \
            }                                                                                 \
        }                                                                                     \
        for (; j < n; j++) {                                                                  \
            float d = ld_##T(x + j * s[1]) - ld_##T(y + j * s[2]);                            \
            st_##T(o + j * s[0], d * d);                                                      \
        }                                                                                     \
    }

DEF_FWD_NONE_ROW(f32, 4)
DEF_FWD_NONE_ROW(f16, 2)
DEF_FWD_NONE_ROW(bf16, 2)

/*
 * MseLoss, reduction mean/sum (ctx: red_acc): the row piece's squares d * d (float32), in double,
 * element j into lane j % 4 for the piece's whole groups of 4, lanes added as (0 + 1) + (2 + 3),
 * then the tail in order; the piece's sum goes to the block's.
 */
#define DEF_FWD_REDUCE_ROW(T, ESZ)                                                            \
    static void fwd_reduce_row_##T(void *vctx, char *const *p, const int64_t *s, int64_t n)  \
    {                                                                                         \
        const char *x = p[1], *y = p[2];                                                      \
        v4d acc = {0.0, 0.0, 0.0, 0.0};                                                       \
        int64_t j = 0;                                                                        \
        if (s[1] == (ESZ) && s[2] == (ESZ)) {                                                 \
            for (; j + 4 <= n; j += 4) {                                                      \
                v4f d = vld_##T(x + j * (ESZ)) - vld_##T(y + j * (ESZ));                      \
                acc += __builtin_convertvector(d * d, v4d);                                   \
            }                                                                                 \
        } else {                                                                              \
            for (; j + 4 <= n; j += 4) {                                                      \
                for (int l = 0; l < 4; l++) {                                                 \
                    float d = ld_##T(x + (j + l) * s[1]) - ld_##T(y + (j + l) * s[2]);        \
                    acc[l] += (double)(d * d);                                                \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        double sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);                                   \
        for (; j < n; j++) {                                                                  \
            float d = ld_##T(x + j * s[1]) - ld_##T(y + j * s[2]);                            \
            sum += (double)(d * d);                                                           \
        }                                                                                     \
        ((red_acc *)vctx)->sum += sum;                                                        \
    }

DEF_FWD_REDUCE_ROW(f32, 4)
DEF_FWD_REDUCE_ROW(f16, 2)
DEF_FWD_REDUCE_ROW(bf16, 2)

/* The row function of dtype dt among {f32, f16, bf16}. */
static row_fn pick_row(aclDataType dt, row_fn f32, row_fn f16, row_fn bf16)
{
    return dt == ACL_FLOAT16 ? f16 : dt == ACL_BF16 ? bf16 : f32;
}

/* ======================================================================== */
/* plans: what phase 1 decided, snapshot into tasks                         */
/* ======================================================================== */

enum { OP_MSE_BACKWARD = 1, OP_MSE_FORWARD = 2 };

typedef struct {
    uint64_t contig_off; /* Contiguous copy (input dtype, input numel), or OPS_NO_CHUNK */
    uint64_t cast_off;   /* Cast to the compute dtype (input numel), or OPS_NO_CHUNK */
    uint64_t bcast_off;  /* BroadcastTo the broadcast shape (compute dtype), or OPS_NO_CHUNK */
} in_plan;

typedef struct {
    int op;
    const char *kernel; /* "MseLossBackward" / "MseLoss" for messages */
    int n_in;
    int64_t reduction;
    int64_t divisor;    /* backward: self numel; forward: broadcast numel */
    bool no_work;       /* empty inputs and nothing to write */
    bool fill_only;     /* forward, empty input, mean/sum: fill out */
    aclDataType cdt;    /* compute dtype: self's (backward) / promoted (forward) */
    shape_t bshape;
    int64_t bnumel;
    int64_t rnumel;     /* result elements: bnumel, or 1 for forward mean/sum */
    in_plan in[3];
    uint64_t res_off;   /* result in cdt, or OPS_NO_CHUNK: written straight into out */
    uint64_t cast_off;  /* result cast to out's dtype, or OPS_NO_CHUNK */
    bool out_direct;    /* the last stage writes out's (contiguous) view directly */
    uint64_t ws_total;
} mse_plan;

/* A device range the kernel touches, pinned with its allocation id at phase 2. */
typedef struct {
    bool used;      /* the kernel reads or writes it */
    bool too_large; /* the view's extent overflows: nothing was pinned */
    emu_range r;
} mse_operand;

typedef struct {
    emu_task base; /* first */
    mse_plan plan;
    aclTensor in[3];
    aclTensor out;
    char *ws;
    mse_operand in_mem[3], out_mem, ws_mem;
} mse_task;

static const char *const BWD_IN_NAMES[3] = {"gradOutput", "self", "target"};
static const char *const FWD_IN_NAMES[3] = {"self", "target", ""};

/* The operator's input names, for messages. */
static const char *const *in_names(const mse_plan *pl)
{
    return pl->op == OP_MSE_BACKWARD ? BWD_IN_NAMES : FWD_IN_NAMES;
}

/* ---- run time ---- */

/* Pin what tensor t's view touches (nothing for an empty view). */
static void pin_tensor(mse_operand *m, const aclTensor *t)
{
    uint64_t bytes;
    memset(m, 0, sizeof *m);
    if (view_numel(t) == 0)
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
static bool run_check_operand(const mse_task *t, const char *what, const mse_operand *m, bool tensor,
                              int32_t *dev, bool *have_dev)
{
    const char *kernel = t->plan.kernel;
    if (!m->used)
        return true;
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
    if (*have_dev && m->r.device != *dev) {
        emu_error("%s kernel: %s memory is on device %d but the other operands are on device %d",
                  kernel, what, (int)m->r.device, (int)*dev);
        return false;
    }
    *dev = m->r.device;
    *have_dev = true;
    return true;
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

static void execute_plan(const mse_plan *pl, const aclTensor *in, const aclTensor *out, char *ws)
{
    /* stage each input: Contiguous -> Cast -> BroadcastTo, each into its workspace chunk */
    aclTensor cur[3];
    for (int i = 0; i < pl->n_in; i++) {
        aclTensor v = in[i];
        shape_t vs;
        vs.ndim = (int)v.ndim;
        memcpy(vs.d, v.dims, sizeof(int64_t) * v.ndim);
        if (pl->in[i].contig_off != OPS_NO_CHUNK) {
            char *dst = ws + pl->in[i].contig_off;
            gather_view(dst, &v, &vs);
            rebase_contiguous(&v, dst);
        }
        if (pl->in[i].cast_off != OPS_NO_CHUNK) {
            char *dst = ws + pl->in[i].cast_off;
            cast_linear(dst, pl->cdt, (char *)v.data + v.offset * (int64_t)ops_dtype_size(v.dtype), v.dtype,
                        shape_numel(&vs));
            v.data = dst;
            v.offset = 0;
            v.dtype = pl->cdt;
        }
        if (pl->in[i].bcast_off != OPS_NO_CHUNK) {
            char *dst = ws + pl->in[i].bcast_off;
            gather_view(dst, &v, &pl->bshape);
            v.ndim = (uint64_t)pl->bshape.ndim;
            memcpy(v.dims, pl->bshape.d, sizeof(int64_t) * v.ndim);
            rebase_contiguous(&v, dst);
        }
        cur[i] = v;
    }

    /* where the l0 result goes */
    size_t csz = ops_dtype_size(pl->cdt), osz = ops_dtype_size(out->dtype);
    char *out_lin = (char *)out->data + out->offset * (int64_t)osz; /* out contiguous */
    char *res = pl->res_off != OPS_NO_CHUNK ? ws + pl->res_off : out_lin;

    if (pl->fill_only) { /* forward only */
        float v = pl->reduction == 1 ? NAN : 0.0f;
        store_elem(res, pl->cdt, v);
    } else {
        /* the l0 kernel iterates over the broadcast shape: operand 0 the result, then the staged inputs */
        nd_iter it;
        nd_init(&it, &pl->bshape, pl->n_in + 1);
        nd_set_contig(&it, 0, res, csz);
        for (int i = 0; i < pl->n_in; i++)
            nd_set_tensor(&it, i + 1, &cur[i], csz);
        if (pl->op == OP_MSE_BACKWARD) {
            bwd_ctx c;
            c.coef = pl->reduction == 1 ? (float)(2.0 / (double)pl->divisor) : 2.0f;
            nd_run(&it, pick_row(pl->cdt, bwd_row_f32, bwd_row_f16, bwd_row_bf16), &c);
        } else if (pl->reduction == 0) {
            nd_run(&it, pick_row(pl->cdt, fwd_none_row_f32, fwd_none_row_f16, fwd_none_row_bf16), NULL);
        } else {
            double sum = nd_reduce(&it, pick_row(pl->cdt, fwd_reduce_row_f32, fwd_reduce_row_f16,
                                                 fwd_reduce_row_bf16));
            double r = pl->reduction == 1 ? sum / (double)pl->divisor : sum;
            store_elem(res, pl->cdt, (float)r);
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

static aclError mse_task_run(emu_task *base)
{
    mse_task *t = (mse_task *)base;
    const mse_plan *pl = &t->plan;
    const char *const *names = in_names(pl);
    int32_t dev = -1;
    bool have_dev = false;
    char what[64];
    /* Nothing is touched unless every operand is still the allocation it was at launch. */
    for (int i = 0; i < pl->n_in; i++) {
        snprintf(what, sizeof what, "input %d (%s)", i, names[i]);
        if (!run_check_operand(t, what, &t->in_mem[i], true, &dev, &have_dev))
            return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    if (!run_check_operand(t, "output 0 (out)", &t->out_mem, true, &dev, &have_dev) ||
        !run_check_operand(t, "workspace", &t->ws_mem, false, &dev, &have_dev))
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    execute_plan(pl, t->in, &t->out, t->ws);
    emu_counter_add(EMU_COUNTER_KERNELS_RUN, 1);
    return ACL_SUCCESS;
}

static void mse_task_release(emu_task *base)
{
    free(base);
}

static aclError mse_launch(aclOpExecutor *ex, void *workspace, uint64_t workspace_size, aclrtStream stream,
                           const char *api)
{
    const mse_plan *pl = ex->op_state;
    if (pl == NULL) {
        emu_error("%s: executor has no operator state", api);
        return ACL_ERROR_INTERNAL_ERROR;
    }
    if (pl->no_work)
        return ACL_SUCCESS;
    mse_task *t = calloc(1, sizeof *t);
    if (t == NULL) {
        emu_error("%s: out of host memory for the %s task", api, pl->kernel);
        return ACL_ERROR_BAD_ALLOC;
    }
    t->base.run = mse_task_run;
    t->base.release = mse_task_release;
    t->base.name = pl->kernel;
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

static void mse_release_op(aclOpExecutor *ex)
{
    free(ex->op_state);
    ex->op_state = NULL;
}

/* ======================================================================== */
/* phase 1 helpers                                                          */
/* ======================================================================== */

/* The checks both operators' phase 1 starts with: steps 1 and 2 (then the executor is *ex). */
static aclnnStatus phase1_begin(const char *api, const char *op_name, const uint64_t *workspaceSize,
                                aclOpExecutor *const *executor, aclOpExecutor **ex)
{
    EMU_RETURN_IF_FAULT(api);
    if (workspaceSize == NULL || executor == NULL) {
        emu_error("%s: %s is NULL (both workspaceSize and executor must point to storage)", api,
                  workspaceSize == NULL ? "workspaceSize" : "executor");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    *ex = emu_executor_new(op_name);
    return *ex == NULL ? ACLNN_ERR_INNER_CREATE_EXECUTOR : ACLNN_SUCCESS;
}

/* An empty plan: no workspace chunks yet. */
static void plan_init(mse_plan *pl, int op, const char *kernel, int n_in, int64_t reduction)
{
    memset(pl, 0, sizeof *pl);
    pl->op = op;
    pl->kernel = kernel;
    pl->n_in = n_in;
    pl->reduction = reduction;
    for (int i = 0; i < 3; i++)
        pl->in[i].contig_off = pl->in[i].cast_off = pl->in[i].bcast_off = OPS_NO_CHUNK;
    pl->res_off = pl->cast_off = OPS_NO_CHUNK;
}

/* Emulator-only: a live descriptor with a sane view (reads nothing of a destroyed one). */
static aclnnStatus check_live(const char *api, const char *arg, const aclTensor *t)
{
    if (!emu_tensor_is_live(t)) {
        emu_error("%s: %s is not a live aclTensor (it was destroyed, or never made by aclCreateTensor)",
                  api, arg);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
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
    if (view_numel(t) < 0 || !view_extent_bytes(t, &e)) {
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
    if (view_numel(t) == 0) /* nothing is read or written: only the alignment rule applies */
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

static aclnnStatus check_rank(const char *api, const char *arg, const aclTensor *t)
{
    if (t->ndim > EMU_MAX_DIMS) {
        emu_error("%s: %s has %" PRIu64 " dimensions; at most %d are supported", api, arg, t->ndim, EMU_MAX_DIMS);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_dtype_supported(const char *api, const char *arg, const aclTensor *t)
{
    char note[160];
    if (!dtype_supported(t->dtype)) {
        emu_error("%s: %s has dtype %s, which is not supported; supported dtypes: %s%s", api, arg,
                  dt_name(t->dtype), support_list_str(), bf16_note(t->dtype, note, sizeof note));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_out_shape(const char *api, const aclTensor *out, const shape_t *bs)
{
    char a[256], b[256];
    if (!shape_equals(out, bs)) {
        dims_str(a, sizeof a, out->dims, out->ndim);
        dims_str(b, sizeof b, bs->d, (uint64_t)bs->ndim);
        emu_error("%s: out has shape %s but must have the broadcast shape %s", api, a, b);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_reduction(const char *api, int64_t reduction)
{
    if (reduction < 0 || reduction > 2) {
        emu_error("%s: reduction must be 0 (none), 1 (mean) or 2 (sum), but got %" PRId64, api, reduction);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* CANN's NULL checks of the tensor arguments (in order), then the emulator's liveness check. */
static aclnnStatus check_tensors_given(const char *api, const aclTensor *const *ts, const char *const *names, int n)
{
    aclnnStatus st;
    for (int i = 0; i < n; i++) {
        if (ts[i] == NULL) {
            emu_error("%s: argument %s is a NULL aclTensor pointer (a tensor is required)", api, names[i]);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    for (int i = 0; i < n; i++)
        if ((st = check_live(api, names[i], ts[i])) != ACLNN_SUCCESS)
            return st;
    return ACLNN_SUCCESS;
}

typedef aclnnStatus (*tensor_check)(const char *api, const char *arg, const aclTensor *t);

/* check each input of pl, then out unless it is NULL; the first failure is returned. */
static aclnnStatus check_operands(const char *api, tensor_check check, const mse_plan *pl,
                                  const aclTensor *const *ins, const aclTensor *out)
{
    const char *const *names = in_names(pl);
    aclnnStatus st;
    for (int i = 0; i < pl->n_in; i++)
        if ((st = check(api, names[i], ins[i])) != ACLNN_SUCCESS)
            return st;
    return out != NULL ? check(api, "out", out) : ACLNN_SUCCESS;
}

/* Result routing (shared): l0 result in cdt -> Cast(out dtype) -> ViewCopy(out). */
static bool plan_result(mse_plan *pl, const aclTensor *out)
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

/* Snapshot tensors and plan into the executor; on failure the caller discards it. */
static aclnnStatus finish_executor(const char *api, aclOpExecutor *ex, const mse_plan *pl,
                                   const aclTensor *const *ins, const aclTensor *out)
{
    mse_plan *st = malloc(sizeof *st);
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
    ex->launch = mse_launch;
    ex->release_op = mse_release_op;
    return ACLNN_SUCCESS;
}

/* Phase 1's last steps: route the result into out, then (emulator-only) the device memory of every view. */
static aclnnStatus plan_output(const char *api, mse_plan *pl, const aclTensor *const *ins, const aclTensor *out)
{
    if (!plan_result(pl, out)) {
        emu_error("%s: out is too large", api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return check_operands(api, check_memory, pl, ins, out);
}

/* Phase 1's end: hand out the executor built from pl, or discard it when st (or the snapshot) failed. */
static aclnnStatus phase1_end(const char *api, aclnnStatus st, aclOpExecutor *ex, const mse_plan *pl,
                              const aclTensor *const *ins, const aclTensor *out, uint64_t *workspaceSize,
                              aclOpExecutor **executor)
{
    if (st == ACLNN_SUCCESS)
        st = finish_executor(api, ex, pl, ins, out);
    if (st != ACLNN_SUCCESS) {
        emu_executor_discard(ex);
        return st;
    }
    *workspaceSize = pl->ws_total;
    *executor = ex;
    return ACLNN_SUCCESS;
}

/* Phase 2 of both operators: the fault point, then the executor core. */
static aclnnStatus phase2(const char *api, void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                          aclrtStream stream)
{
    aclnnStatus fault = emu_executor_fault(api, executor);
    if (fault != 0)
        return fault;
    return emu_executor_run(api, workspace, workspaceSize, executor, stream);
}

/* ======================================================================== */
/* aclnnMseLossBackward                                                     */
/* ======================================================================== */

static aclnnStatus bwd_check_params(const char *api, const aclTensor *gradOutput, const aclTensor *self,
                                    const aclTensor *target, int64_t reduction, const aclTensor *out,
                                    shape_t *bshape)
{
    const aclTensor *ts[4] = {gradOutput, self, target, out};
    const char *names[4] = {"gradOutput", "self", "target", "out"};
    aclnnStatus st;
    char a[256], b[256];

    /* 1. NULL pointers */
    if ((st = check_tensors_given(api, ts, names, 4)) != ACLNN_SUCCESS)
        return st;

    /* 2. dtypes: gradOutput and target as self, then self and out in the support list */
    for (int i = 0; i < 3; i += 2) {
        if (ts[i]->dtype != self->dtype) {
            emu_error("%s: %s has dtype %s but self has dtype %s; they must have the same dtype", api, names[i],
                      dt_name(ts[i]->dtype), dt_name(self->dtype));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    if ((st = check_dtype_supported(api, "self", self)) != ACLNN_SUCCESS)
        return st;
    if ((st = check_dtype_supported(api, "out", out)) != ACLNN_SUCCESS)
        return st;

    /* 3. reduction */
    if ((st = check_reduction(api, reduction)) != ACLNN_SUCCESS)
        return st;

    /* 4. shapes */
    for (int i = 0; i < 3; i++)
        if ((st = check_rank(api, names[i], ts[i])) != ACLNN_SUCCESS)
            return st;
    shape_t b1;
    if (!broadcast_dims(gradOutput->dims, (int)gradOutput->ndim, self->dims, (int)self->ndim, &b1)) {
        dims_str(a, sizeof a, gradOutput->dims, gradOutput->ndim);
        dims_str(b, sizeof b, self->dims, self->ndim);
        emu_error("%s: gradOutput shape %s and self shape %s cannot be broadcast together", api, a, b);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!broadcast_dims(target->dims, (int)target->ndim, b1.d, b1.ndim, bshape)) {
        dims_str(a, sizeof a, target->dims, target->ndim);
        dims_str(b, sizeof b, b1.d, (uint64_t)b1.ndim);
        emu_error("%s: target shape %s cannot be broadcast with %s (gradOutput broadcast with self)", api, a, b);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return check_out_shape(api, out, bshape);
}

/* Phase 1 of aclnnMseLossBackward once the executor exists: checks, then the plan. */
static aclnnStatus bwd_plan(const char *api, const aclTensor *const *ins, int64_t reduction, const aclTensor *out,
                            mse_plan *pl)
{
    const aclTensor *gradOutput = ins[0], *self = ins[1], *target = ins[2];
    aclnnStatus st = bwd_check_params(api, gradOutput, self, target, reduction, out, &pl->bshape);
    if (st != ACLNN_SUCCESS)
        return st;
    pl->cdt = self->dtype;

    if (view_numel(self) == 0 || view_numel(gradOutput) == 0 || view_numel(target) == 0) {
        pl->no_work = true; /* CANN: success, workspace 0, nothing to run (the sizes stay 0) */
        pl->out_direct = true;
        return check_operands(api, check_memory, pl, ins, out);
    }

    if ((st = check_operands(api, check_view_domain, pl, ins, out)) != ACLNN_SUCCESS)
        return st;
    pl->divisor = view_numel(self);
    pl->bnumel = shape_numel(&pl->bshape);
    pl->rnumel = pl->bnumel;

    /* l0 Contiguous of each input */
    for (int i = 0; i < 3; i++) {
        if ((st = check_contiguous_source(api, BWD_IN_NAMES[i], ins[i])) != ACLNN_SUCCESS)
            return st;
        if (!view_contiguous(ins[i]) &&
            !ws_add_elems(&pl->ws_total, (uint64_t)view_numel(ins[i]), ins[i]->dtype, &pl->in[i].contig_off)) {
            emu_error("%s: %s is too large", api, BWD_IN_NAMES[i]);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    /* MseLossGrad (self's dtype) -> Cast(out dtype) -> ViewCopy(out) */
    return plan_output(api, pl, ins, out);
}

EMU_EXPORT aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                            const aclTensor *target, int64_t reduction,
                                                            aclTensor *out, uint64_t *workspaceSize,
                                                            aclOpExecutor **executor)
{
    static const char api[] = "aclnnMseLossBackwardGetWorkspaceSize";
    aclOpExecutor *ex;
    aclnnStatus st = phase1_begin(api, "MseLossBackward", workspaceSize, executor, &ex);
    if (st != ACLNN_SUCCESS)
        return st;
    const aclTensor *ins[3] = {gradOutput, self, target};
    mse_plan pl;
    plan_init(&pl, OP_MSE_BACKWARD, "MseLossBackward", 3, reduction);
    st = bwd_plan(api, ins, reduction, out, &pl);
    return phase1_end(api, st, ex, &pl, ins, out, workspaceSize, executor);
}

EMU_EXPORT aclnnStatus aclnnMseLossBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                            aclrtStream stream)
{
    return phase2("aclnnMseLossBackward", workspace, workspaceSize, executor, stream);
}

/* ======================================================================== */
/* aclnnMseLoss                                                             */
/* ======================================================================== */

/* Rank in the int/bool promotion lattice, -1 if not bool/int. */
static int int_rank(aclDataType dt)
{
    switch (dt) {
    case ACL_BOOL: return 0;
    case ACL_UINT8: return 1;
    case ACL_INT8: return 2;
    case ACL_INT16: return 3;
    case ACL_INT32: return 4;
    case ACL_INT64: return 5;
    default: return -1;
    }
}

static int float_rank(aclDataType dt)
{
    switch (dt) {
    case ACL_FLOAT16: return 1;
    case ACL_BF16: return 1;
    case ACL_FLOAT: return 2;
    case ACL_DOUBLE: return 3;
    default: return -1;
    }
}

/* PyTorch-style type promotion over the dtypes that matter here; ACL_DT_UNDEFINED otherwise. */
static aclDataType promote_type(aclDataType a, aclDataType b)
{
    static const aclDataType ints[] = {ACL_BOOL, ACL_UINT8, ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64};
    int fa = float_rank(a), fb = float_rank(b), ia = int_rank(a), ib = int_rank(b);
    if (a == b && (fa >= 0 || ia >= 0))
        return a;
    if (fa >= 0 && fb >= 0) {
        if (fa == 1 && fb == 1)
            return ACL_FLOAT; /* FLOAT16 + BF16 */
        return fa > fb ? a : b;
    }
    if (fa >= 0 && ib >= 0)
        return a;
    if (fb >= 0 && ia >= 0)
        return b;
    if (ia >= 0 && ib >= 0) {
        if ((a == ACL_UINT8 && b == ACL_INT8) || (a == ACL_INT8 && b == ACL_UINT8))
            return ACL_INT16;
        return ints[ia > ib ? ia : ib];
    }
    return ACL_DT_UNDEFINED;
}

static aclnnStatus fwd_check_params(const char *api, const aclTensor *self, const aclTensor *target,
                                    int64_t reduction, const aclTensor *out, shape_t *bshape,
                                    aclDataType *promoted)
{
    const aclTensor *ts[3] = {self, target, out};
    const char *names[3] = {"self", "target", "out"};
    aclnnStatus st;
    char a[256], b[256], note[160];

    if ((st = check_tensors_given(api, ts, names, 3)) != ACLNN_SUCCESS)
        return st;

    /* dtypes: the promoted type, then self, target, out each in the support list */
    aclDataType p = promote_type(self->dtype, target->dtype);
    if (!dtype_supported(p)) {
        if (p == ACL_DT_UNDEFINED)
            emu_error("%s: self dtype %s and target dtype %s cannot be promoted to a common dtype; supported "
                      "dtypes: %s",
                      api, dt_name(self->dtype), dt_name(target->dtype), support_list_str());
        else
            emu_error("%s: self dtype %s and target dtype %s promote to %s, which is not supported; supported "
                      "dtypes: %s%s",
                      api, dt_name(self->dtype), dt_name(target->dtype), dt_name(p), support_list_str(),
                      bf16_note(p, note, sizeof note));
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (int i = 0; i < 3; i++)
        if ((st = check_dtype_supported(api, names[i], ts[i])) != ACLNN_SUCCESS)
            return st;
    *promoted = p;

    if ((st = check_reduction(api, reduction)) != ACLNN_SUCCESS)
        return st;

    for (int i = 0; i < 2; i++)
        if ((st = check_rank(api, names[i], ts[i])) != ACLNN_SUCCESS)
            return st;
    if (!broadcast_dims(self->dims, (int)self->ndim, target->dims, (int)target->ndim, bshape)) {
        dims_str(a, sizeof a, self->dims, self->ndim);
        dims_str(b, sizeof b, target->dims, target->ndim);
        emu_error("%s: self shape %s and target shape %s cannot be broadcast together", api, a, b);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (reduction == 0)
        return check_out_shape(api, out, bshape);
    if (out->ndim != 0) {
        dims_str(a, sizeof a, out->dims, out->ndim);
        emu_error("%s: with reduction %" PRId64 " (%s) out must be a 0-dimensional tensor, but its shape is %s",
                  api, reduction, reduction == 1 ? "mean" : "sum", a);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* Phase 1 of aclnnMseLoss once the executor exists: checks, then the plan. */
static aclnnStatus fwd_plan(const char *api, const aclTensor *const *ins, int64_t reduction, const aclTensor *out,
                            mse_plan *pl)
{
    const aclTensor *self = ins[0], *target = ins[1];
    aclnnStatus st = fwd_check_params(api, self, target, reduction, out, &pl->bshape, &pl->cdt);
    if (st != ACLNN_SUCCESS)
        return st;
    pl->bnumel = shape_numel(&pl->bshape);
    pl->divisor = pl->bnumel;
    pl->rnumel = reduction == 0 ? pl->bnumel : 1;

    if (view_numel(self) == 0 || view_numel(target) == 0) {
        if ((st = check_operands(api, check_memory, pl, ins, NULL)) != ACLNN_SUCCESS)
            return st;
        if (reduction == 0) {
            pl->no_work = true;
            pl->out_direct = true;
            return check_memory(api, "out", out);
        }
        /* CANN fills out with NaN (mean) or 0 (sum): a tiny kernel writing out */
        pl->fill_only = true;
        pl->rnumel = 1;
        if ((st = check_view_domain(api, "out", out)) != ACLNN_SUCCESS)
            return st;
        pl->cdt = out->dtype; /* the fill value is made in out's dtype */
        pl->out_direct = true; /* a 0-d out is contiguous */
        return check_memory(api, "out", out);
    }

    if ((st = check_operands(api, check_view_domain, pl, ins, out)) != ACLNN_SUCCESS)
        return st;
    /* per input: Contiguous -> Cast(promoted) -> BroadcastTo, each materialised in the workspace */
    bool same_shape = self->ndim == target->ndim &&
                      memcmp(self->dims, target->dims, sizeof(int64_t) * self->ndim) == 0;
    for (int i = 0; i < 2; i++) {
        const aclTensor *t = ins[i];
        in_plan *ip = &pl->in[i];
        uint64_t numel = (uint64_t)view_numel(t);
        bool ok = true;
        if ((st = check_contiguous_source(api, FWD_IN_NAMES[i], t)) != ACLNN_SUCCESS)
            return st;
        if (!view_contiguous(t))
            ok = ws_add_elems(&pl->ws_total, numel, t->dtype, &ip->contig_off);
        if (ok && t->dtype != pl->cdt)
            ok = ws_add_elems(&pl->ws_total, numel, pl->cdt, &ip->cast_off);
        if (ok && !same_shape && !shape_equals(t, &pl->bshape))
            ok = ws_add_elems(&pl->ws_total, (uint64_t)pl->bnumel, pl->cdt, &ip->bcast_off);
        if (!ok) {
            emu_error("%s: %s is too large", api, FWD_IN_NAMES[i]);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    /* MseLoss (promoted dtype) -> Cast(out dtype) -> ViewCopy(out) */
    return plan_output(api, pl, ins, out);
}

EMU_EXPORT aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                                    int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor)
{
    static const char api[] = "aclnnMseLossGetWorkspaceSize";
    aclOpExecutor *ex;
    aclnnStatus st = phase1_begin(api, "MseLoss", workspaceSize, executor, &ex);
    if (st != ACLNN_SUCCESS)
        return st;
    const aclTensor *ins[2] = {self, target};
    mse_plan pl;
    plan_init(&pl, OP_MSE_FORWARD, "MseLoss", 2, reduction);
    st = fwd_plan(api, ins, reduction, out, &pl);
    return phase1_end(api, st, ex, &pl, ins, out, workspaceSize, executor);
}

EMU_EXPORT aclnnStatus aclnnMseLoss(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                    aclrtStream stream)
{
    return phase2("aclnnMseLoss", workspace, workspaceSize, executor, stream);
}
