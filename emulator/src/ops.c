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
 *   else 2; forward d = self - target, d * d, summed in double, mean divides by the broadcast numel;
 *   results rounded (RNE) to the compute dtype, then cast to out's dtype.
 * Messages are this emulator's own wording.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

#define OPS_ADDR_ALIGN 32u  /* aclCreateTensor: tensorData must be 32-byte aligned */
#define OPS_WS_ALIGN 512u   /* each workspace chunk is rounded up to this */
#define OPS_NO_CHUNK UINT64_MAX

/* ======================================================================== */
/* fp16 / bf16 <-> fp32 (round to nearest even)                             */
/* ======================================================================== */

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

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1fu) /* inf / NaN: keep the payload */
        return bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0)
            return bits_f32(sign);
        /* subnormal: normalise */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while ((man & 0x400u) == 0);
        man &= 0x3ffu;
        return bits_f32(sign | ((uint32_t)(127 - 15 - e) << 23) | (man << 13));
    }
    return bits_f32(sign | ((exp + 127 - 15) << 23) | (man << 13));
}

static uint16_t f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t man = x & 0x7fffffu;
    if (exp == 0xffu) {
        if (man == 0)
            return sign | 0x7c00u;
        /* NaN: keep the top payload bits, stay a NaN */
        uint16_t r = (uint16_t)(0x7c00u | (man >> 13));
        if (r == 0x7c00u)
            r = 0x7c01u;
        return sign | r;
    }
    if (exp == 0) /* fp32 zero or subnormal: far below half's smallest subnormal */
        return sign;
    int e = (int)exp - 127;
    if (e > 15)
        return sign | 0x7c00u;
    if (e >= -14) {
        uint32_t m10 = man >> 13, rem = man & 0x1fffu;
        uint32_t r = ((uint32_t)(e + 15) << 10) + m10;
        if (rem > 0x1000u || (rem == 0x1000u && (m10 & 1u)))
            r++; /* a carry into the exponent is correct, up to infinity */
        return (uint16_t)(sign | r);
    }
    /* half subnormal: value / 2^-24 = full * 2^(e+1) */
    uint32_t full = man | 0x800000u;
    int sh = -(e + 1); /* >= 14 */
    if (sh > 25)
        return sign;
    uint32_t q = full >> sh, rem = full & ((1u << sh) - 1u), half = 1u << (sh - 1);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

static inline float bf16_to_f32(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

static uint16_t f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: the canonical quiet NaN, sign kept */
        return (uint16_t)(((x >> 16) & 0x8000u) | 0x7fc0u);
    uint32_t lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb; /* overflow to infinity is correct rounding */
    return (uint16_t)(x >> 16);
}

static inline float load_elem(const char *p, aclDataType dt)
{
    uint16_t h;
    switch (dt) {
    case ACL_FLOAT16:
        memcpy(&h, p, 2);
        return f16_to_f32(h);
    case ACL_BF16:
        memcpy(&h, p, 2);
        return bf16_to_f32(h);
    default: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    }
}

static inline void store_elem(char *p, aclDataType dt, float v)
{
    uint16_t h;
    switch (dt) {
    case ACL_FLOAT16:
        h = f32_to_f16(v);
        memcpy(p, &h, 2);
        break;
    case ACL_BF16:
        h = f32_to_bf16(v);
        memcpy(p, &h, 2);
        break;
    default:
        memcpy(p, &v, 4);
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
/* n-d iteration over up to 4 operands, rows of the (coalesced) last dim    */
/* ======================================================================== */

#define ITER_MAX_OPS 4

typedef struct {
    int ndim;
    int64_t shape[EMU_MAX_DIMS];
    int nops;
    char *base[ITER_MAX_OPS];
    int64_t bstride[ITER_MAX_OPS][EMU_MAX_DIMS]; /* bytes */
} nd_iter;

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
    int64_t s = (int64_t)isz;
    for (int i = it->ndim; i-- > 0;) {
        it->bstride[k][i] = it->shape[i] == 1 ? 0 : s;
        s *= it->shape[i];
    }
}

static void nd_run(nd_iter *it, row_fn fn, void *ctx)
{
    /* drop size-1 dims, merge dims that are laid out contiguously for every operand */
    int nd = 0;
    int64_t shape[EMU_MAX_DIMS], st[ITER_MAX_OPS][EMU_MAX_DIMS];
    for (int i = 0; i < it->ndim; i++) {
        if (it->shape[i] == 0)
            return;
        if (it->shape[i] == 1)
            continue;
        bool merge = nd > 0;
        for (int k = 0; merge && k < it->nops; k++)
            if (st[k][nd - 1] != it->bstride[k][i] * it->shape[i])
                merge = false;
        if (merge) {
            shape[nd - 1] *= it->shape[i];
            for (int k = 0; k < it->nops; k++)
                st[k][nd - 1] = it->bstride[k][i];
        } else {
            shape[nd] = it->shape[i];
            for (int k = 0; k < it->nops; k++)
                st[k][nd] = it->bstride[k][i];
            nd++;
        }
    }
    char *ptrs[ITER_MAX_OPS];
    int64_t inner[ITER_MAX_OPS];
    if (nd == 0) {
        for (int k = 0; k < it->nops; k++) {
            ptrs[k] = it->base[k];
            inner[k] = 0;
        }
        fn(ctx, ptrs, inner, 1);
        return;
    }
    for (int k = 0; k < it->nops; k++)
        inner[k] = st[k][nd - 1];
    int64_t n = shape[nd - 1];
    int64_t idx[EMU_MAX_DIMS] = {0};
    for (;;) {
        for (int k = 0; k < it->nops; k++) {
            char *p = it->base[k];
            for (int i = 0; i < nd - 1; i++)
                p += idx[i] * st[k][i];
            ptrs[k] = p;
        }
        fn(ctx, ptrs, inner, n);
        int i = nd - 2;
        for (; i >= 0; i--) {
            if (++idx[i] < shape[i])
                break;
            idx[i] = 0;
        }
        if (i < 0)
            return;
    }
}

/* ---- row kernels ---- */

typedef struct {
    size_t isz;
} copy_ctx;

static void copy_row(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    size_t isz = ((copy_ctx *)vctx)->isz;
    if (s[0] == (int64_t)isz && s[1] == (int64_t)isz) {
        memmove(p[0], p[1], (size_t)n * isz);
        return;
    }
    for (int64_t j = 0; j < n; j++)
        memcpy(p[0] + j * s[0], p[1] + j * s[1], isz);
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

/* Cast n contiguous elements. */
static void cast_linear(char *dst, aclDataType ddt, const char *src, aclDataType sdt, int64_t n)
{
    size_t di = ops_dtype_size(ddt), si = ops_dtype_size(sdt);
    if (ddt == sdt) {
        memmove(dst, src, (size_t)n * di);
        return;
    }
    for (int64_t j = 0; j < n; j++)
        store_elem(dst + j * (int64_t)di, ddt, load_elem(src + j * (int64_t)si, sdt));
}

typedef struct {
    float coef;
    aclDataType in_dt;  /* gradOutput, self, target (all the same) */
    aclDataType out_dt; /* self's dtype: the l0 result */
} bwd_ctx;

/* p[0] result, p[1] gradOutput, p[2] self, p[3] target */
static void bwd_row(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    const bwd_ctx *c = vctx;
    const aclDataType idt = c->in_dt, odt = c->out_dt;
    const float coef = c->coef;
    if (s[1] == 0) { /* scalar / broadcast gradOutput along this row */
        const float g = load_elem(p[1], idt);
        for (int64_t j = 0; j < n; j++) {
            float d = load_elem(p[2] + j * s[2], idt) - load_elem(p[3] + j * s[3], idt);
            float r = coef * d;
            r = r * g;
            store_elem(p[0] + j * s[0], odt, r);
        }
        return;
    }
    if (idt == ACL_FLOAT && odt == ACL_FLOAT && s[0] == 4 && s[1] == 4 && s[2] == 4 && s[3] == 4) {
        float *o = (float *)(void *)p[0];
        const float *g = (const float *)(void *)p[1], *x = (const float *)(void *)p[2],
                    *y = (const float *)(void *)p[3];
        for (int64_t j = 0; j < n; j++) {
            float r = coef * (x[j] - y[j]);
            o[j] = r * g[j];
        }
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        float g = load_elem(p[1] + j * s[1], idt);
        float d = load_elem(p[2] + j * s[2], idt) - load_elem(p[3] + j * s[3], idt);
        float r = coef * d;
        r = r * g;
        store_elem(p[0] + j * s[0], odt, r);
    }
}

typedef struct {
    aclDataType dt; /* promoted dtype: inputs and result */
    double sum;
} fwd_ctx;

/* p[0] result, p[1] self, p[2] target */
static void fwd_none_row(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    const fwd_ctx *c = vctx;
    for (int64_t j = 0; j < n; j++) {
        float d = load_elem(p[1] + j * s[1], c->dt) - load_elem(p[2] + j * s[2], c->dt);
        float sq = d * d;
        store_elem(p[0] + j * s[0], c->dt, sq);
    }
}

static void fwd_reduce_row(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    fwd_ctx *c = vctx;
    double acc = 0.0;
    for (int64_t j = 0; j < n; j++) {
        float d = load_elem(p[1] + j * s[1], c->dt) - load_elem(p[2] + j * s[2], c->dt);
        float sq = d * d;
        acc += (double)sq;
    }
    c->sum += acc;
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

typedef struct {
    emu_task base; /* first */
    mse_plan plan;
    aclTensor in[3];
    aclTensor out;
    char *ws;
} mse_task;

static const char *const BWD_IN_NAMES[3] = {"gradOutput", "self", "target"};
static const char *const FWD_IN_NAMES[3] = {"self", "target", ""};

/* The operator's input names, for messages. */
static const char *const *in_names(const mse_plan *pl)
{
    return pl->op == OP_MSE_BACKWARD ? BWD_IN_NAMES : FWD_IN_NAMES;
}

/* ---- run time ---- */

static bool run_check_range(const char *kernel, const char *arg, const void *ptr, uint64_t bytes,
                            int32_t *dev, bool *have_dev)
{
    int32_t d = -1;
    if (ptr == NULL) {
        emu_error("%s kernel: %s memory is not valid device memory: its data address is NULL", kernel, arg);
        return false;
    }
    if (!emu_devmem_contains(ptr, bytes, &d)) {
        emu_error("%s kernel: %s memory is not valid device memory (freed while the launch was pending?)",
                  kernel, arg);
        return false;
    }
    if (((uintptr_t)ptr % OPS_ADDR_ALIGN) != 0 && strcmp(arg, "workspace") != 0) {
        emu_error("%s kernel: %s address %p is not %u-byte aligned", kernel, arg, ptr, OPS_ADDR_ALIGN);
        return false;
    }
    if (*have_dev && d != *dev) {
        emu_error("%s kernel: %s memory is on device %d but the other operands are on device %d",
                  kernel, arg, (int)d, (int)*dev);
        return false;
    }
    *dev = d;
    *have_dev = true;
    return true;
}

static bool run_check_tensor(const char *kernel, const char *arg, const aclTensor *t, int32_t *dev,
                             bool *have_dev)
{
    uint64_t bytes;
    if (view_numel(t) == 0)
        return true;
    if (!view_extent_bytes(t, &bytes)) {
        emu_error("%s kernel: %s view is too large", kernel, arg);
        return false;
    }
    return run_check_range(kernel, arg, t->data, bytes, dev, have_dev);
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
            c.in_dt = pl->cdt;
            c.out_dt = pl->cdt;
            nd_run(&it, bwd_row, &c);
        } else {
            fwd_ctx c = {pl->cdt, 0.0};
            if (pl->reduction == 0) {
                nd_run(&it, fwd_none_row, &c);
            } else {
                nd_run(&it, fwd_reduce_row, &c);
                double r = pl->reduction == 1 ? c.sum / (double)pl->divisor : c.sum;
                store_elem(res, pl->cdt, (float)r);
            }
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
    if (!pl->fill_only)
        for (int i = 0; i < pl->n_in; i++)
            if (!run_check_tensor(pl->kernel, names[i], &t->in[i], &dev, &have_dev))
                return ACL_ERROR_RT_AICORE_EXCEPTION;
    if (!run_check_tensor(pl->kernel, "out", &t->out, &dev, &have_dev))
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    if (pl->ws_total > 0 && !run_check_range(pl->kernel, "workspace", t->ws, pl->ws_total, &dev, &have_dev))
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
    for (int i = 0; i < pl->n_in; i++)
        t->in[i] = ex->inputs[i];
    t->out = ex->outputs[0];
    t->ws = workspace;
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
