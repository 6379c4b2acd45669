/*
 * libopapi.so of the aclnn_py host emulator: the interface between the operator core
 * (ops_core.c), the operator registry (ops_registry.c) and the operators (op_*.c).
 *
 * An operator is a file op_<name>.c defining
 *   - its phase-1 entry point aclnn<Name>GetWorkspaceSize, which packs its arguments into an
 *     ops_args and calls ops_phase1(&ops_<name>, ...);
 *   - its ops_desc ops_<name>: names, inputs, its plan() (CANN's checks for that operator, in
 *     CANN's order and with CANN's status codes, then its output shape / dtype rule and the
 *     staging it needs; it ends with ops_plan_body) and its kernel() (the row kernel for the
 *     compute dtype);
 * and one entry in aclnn_py/data/emulator_ops.json (name, file, CANN repository), from which the
 * build declares the descriptor, defines the phase-2 entry point aclnn<Name> (ops_registry.c),
 * puts both API names in the fault table (rt_faults.c) and links the file into its library.
 * Its CANN prototypes go to headers/aclnn_ops.h.
 *
 * The core runs every operator the same way CANN's l2 APIs do:
 *   phase 1: fault point, workspaceSize/executor NULL (161001), executor creation (561101),
 *            the operator's checks, then the shared plan: empty inputs (no work, or the NaN / 0
 *            fill of a reduced loss), each input's Contiguous -> Cast -> BroadcastTo staging
 *            (or BroadcastTo -> Cast) into workspace chunks, the l0 kernel's result, Cast to
 *            out's dtype, ViewCopy into out's view; emulator-only device memory checks.
 *   phase 2: fault point, executor checks (emu_executor_run), a task queued on the stream.
 *   kernel:  when the stream is synchronised: re-check every pinned range, stage, run the
 *            operator's row kernel over the broadcast shape (split among threads; reductions
 *            in fixed blocks, so results never depend on the thread count), cast, copy out.
 * Kernels compute float16 / bfloat16 in float32 (float32 in float32) and round to nearest
 * even once, when storing their result.
 */
#ifndef ACLNN_EMU_OPS_CORE_H
#define ACLNN_EMU_OPS_CORE_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "emu_internal.h"

/*
 * Every product is rounded before it is added: a fused multiply-add (which compilers may
 * otherwise form for a * b + c on targets that have one) would change results by platform.
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define OPS_ADDR_ALIGN 32u  /* aclCreateTensor: tensorData must be 32-byte aligned */
#define OPS_WS_ALIGN 512u   /* each workspace chunk is rounded up to this */
#define OPS_NO_CHUNK UINT64_MAX
#define OPS_MAX_IN 3        /* tensor inputs of an operator */

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

static inline int64_t ld_i64(const char *p)
{
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline void st_i64(char *p, int64_t v)
{
    memcpy(p, &v, 8);
}

/* ======================================================================== */
/* shapes and dtypes                                                        */
/* ======================================================================== */

typedef struct {
    int ndim;
    int64_t d[EMU_MAX_DIMS];
} shape_t;

/* A set of dtypes: bit d for aclDataType d (all the values headers/acl_rt.h declares are < 64). */
typedef uint64_t ops_dtypes;
#define OPS_DT(d) ((ops_dtypes)1 << (unsigned)(d))

/* Whether dt is in set (false for values outside 0..63). */
static inline bool ops_dtype_in(aclDataType dt, ops_dtypes set)
{
    return (int)dt >= 0 && (int)dt < 64 && (set & OPS_DT(dt)) != 0;
}

/* {FLOAT, FLOAT16} plus BF16 when the emulated SoC has bfloat16 kernels (Atlas A2/A3, Ascend 950). */
ops_dtypes ops_float_dtypes(void);

/* IsFloatingType / IsComplexType / IsIntegralType(type, include_bool) of opbase's data_type_utils.h. */
bool ops_is_floating(aclDataType dt);
bool ops_is_complex(aclDataType dt);
bool ops_is_integral(aclDataType dt, bool include_bool);

/* opbase's PromoteType over the dtypes acl_rt.h declares; ACL_DT_UNDEFINED when there is none. */
aclDataType ops_promote_type(aclDataType a, aclDataType b);

/* opbase's CanCast: complex to non-complex, floating to integral, non-bool to bool are refused. */
bool ops_can_cast(aclDataType from, aclDataType to);

/* Name of a dtype for messages ("DT_FLOAT", ...). */
const char *ops_dt_name(aclDataType dt);

/* "[DT_FLOAT, DT_FLOAT16, ...]" for a set (into buf). */
const char *ops_dtypes_str(ops_dtypes set, char *buf, size_t n);

/* " (DT_BF16 needs an Atlas A2/A3 or Ascend 950 SoC; ...)" for a bf16 refusal on a SoC without it, else "". */
const char *ops_bf16_note(aclDataType dt, char *buf, size_t n);

/* "[2, 3]" (into buf). */
void ops_dims_str(char *buf, size_t n, const int64_t *d, uint64_t nd);

/* Numpy broadcasting (right-aligned; equal, or one of them 1); false if they do not broadcast. */
bool ops_broadcast_dims(const int64_t *a, int na, const int64_t *b, int nb, shape_t *out);

bool ops_shape_equals(const aclTensor *t, const shape_t *s);
int64_t ops_shape_numel(const shape_t *s);
void ops_shape_of(const aclTensor *t, shape_t *s);

/* Number of elements of t's view, -1 on overflow. */
int64_t ops_view_numel(const aclTensor *t);

/*
 * One element of any dtype the C operators' casts take (ops_cast_dtype), exactly: integral and
 * bool ones as an integer, floating ones as a double, complex ones as two.
 */
typedef struct {
    double re, im;    /* the value (an integer's rounded to double), and a complex one's imaginary part */
    int64_t i;        /* an integral or bool element (a uint64 one's bits) */
    bool integral;    /* i holds the value */
    bool is_unsigned; /* i holds a uint64 */
} ops_wide;

/* Whether the cast stages of the C operators take dt: the floating, integral, bool and complex
   dtypes of acl_rt.h but the 8-, 6- and 4-bit floats and complex32. */
bool ops_cast_dtype(aclDataType dt);

/* Element at p of dtype dt (one ops_cast_dtype takes) into *v, and back (the value converted
   as CANN's Cast converts it: rounded to nearest even into a floating dtype, wrapped into an
   integral one, non-zero into bool, a real part into a complex one). */
void ops_load_wide(const char *p, aclDataType dt, ops_wide *v);
void ops_store_wide(char *p, aclDataType dt, const ops_wide *v);

/* ======================================================================== */
/* kernels                                                                  */
/* ======================================================================== */

/*
 * A row function gets n elements: operand k's first at ptrs[k], the next ones bstrides[k] bytes
 * apart. Operand 0 is the result (in the compute dtype, written by elementwise kernels; not
 * touched by reductions), operands 1.. the staged inputs in the operator's order.
 * Elementwise kernels get ctx = the plan's const ops_kparams; reductions get ctx = an ops_red_acc.
 */
typedef void (*row_fn)(void *ctx, char *const *ptrs, const int64_t *bstrides, int64_t n);

/* Kernel parameters, fixed at phase 1. */
typedef struct {
    float coef;                  /* MseLossBackward 2 or 2/n; L1LossBackward, SmoothL1LossBackward 1 or 1/n */
    float beta;                  /* SmoothL1Loss* */
    float inv_beta;              /* 1 / beta (0 when beta is 0) */
    float neg_half_beta;         /* -0.5 * beta */
    float alpha;                 /* Add: alpha as float32 */
    bool alpha_is_one;           /* Add: out = self + other (alpha ignored) */
    double alpha_d;              /* Add: alpha as float64, complex alpha's real part */
    double alpha_im;             /* Add: a complex alpha's imaginary part */
    int64_t alpha_i;             /* Add: alpha in an integral (wrapped) or bool dtype */
    aclDataType cdt;             /* the compute (result) dtype */
    aclDataType dt[OPS_MAX_IN];  /* each staged input's dtype as the kernel reads it */
} ops_kparams;

/*
 * A reduction's accumulator: a float kernel adds its row piece's sum in double to `sum`, an
 * integer one its sum modulo 2^64 to `isum`. The core sums fixed blocks and adds the blocks'
 * sums in block order (deterministic for every thread count).
 */
typedef struct {
    double sum;
    uint64_t isum;
    const ops_kparams *k;
} ops_red_acc;

/* The row function of dtype dt among {f32, f16, bf16}. */
static inline row_fn ops_pick_row(aclDataType dt, row_fn f32, row_fn f16, row_fn bf16)
{
    return dt == ACL_FLOAT16 ? f16 : dt == ACL_BF16 ? bf16 : f32;
}

/*
 * Row kernels built from an element function F, for inputs and result of dtype T (f32, f16, bf16):
 * the inputs are loaded as float32 (exactly), F computes in float32, the result is rounded to T
 * once, when stored. Scalar code, the same for every stride, so every element gets the same bits
 * wherever it lies.
 *
 * OPS_DEF_ROW2(NAME, T, F): p[0] = F(p[1], p[2], k)           (k: const ops_kparams *)
 * OPS_DEF_ROW3(NAME, T, F): p[0] = F(p[1], p[2], p[3], k)
 * OPS_DEF_REDUCE_ROW2(NAME, T, F): adds F(p[1], p[2], k) of the row piece to the ops_red_acc's
 *   double sum: element j into lane j % 4 for the piece's whole groups of 4, lanes added as
 *   (0 + 1) + (2 + 3), then the tail in order (as MseLoss's reduction does).
 */
/* The three kernels NAME_f32, NAME_f16 and NAME_bf16 of one of the macros below (DEF). */
#define OPS_DEF_ROWS(DEF, NAME, F) DEF(NAME, f32, F) DEF(NAME, f16, F) DEF(NAME, bf16, F)

/* Of the kernels NAME_f32, NAME_f16 and NAME_bf16, the one for pl's compute dtype. */
#define OPS_PICK_ROWS(pl, NAME) ops_pick_row((pl)->cdt, NAME##_f32, NAME##_f16, NAME##_bf16)

/* An operator's kernel function KERNEL (see ops_desc): the ROWS kernels; for OPS_DEF_LOSS_KERNEL
 * the REDUCE_ROWS ones when pl->reduce. */
#define OPS_DEF_KERNEL(KERNEL, ROWS)                                                      \
    static row_fn KERNEL(const ops_plan *pl)                                              \
    {                                                                                     \
        return OPS_PICK_ROWS(pl, ROWS);                                                   \
    }
#define OPS_DEF_LOSS_KERNEL(KERNEL, ROWS, REDUCE_ROWS)                                    \
    static row_fn KERNEL(const ops_plan *pl)                                              \
    {                                                                                     \
        return pl->reduce ? OPS_PICK_ROWS(pl, REDUCE_ROWS) : OPS_PICK_ROWS(pl, ROWS);     \
    }

#define OPS_DEF_ROW2(NAME, T, F)                                                          \
    static void NAME##_##T(void *vctx, char *const *p, const int64_t *s, int64_t n)       \
    {                                                                                     \
        const ops_kparams *k = vctx;                                                      \
        char *o = p[0];                                                                   \
        const char *a = p[1], *b = p[2];                                                  \
        for (int64_t j = 0; j < n; j++)                                                   \
            st_##T(o + j * s[0], F(ld_##T(a + j * s[1]), ld_##T(b + j * s[2]), k));       \
    }

#define OPS_DEF_ROW3(NAME, T, F)                                                          \
    static void NAME##_##T(void *vctx, char *const *p, const int64_t *s, int64_t n)       \
    {                                                                                     \
        const ops_kparams *k = vctx;                                                      \
        char *o = p[0];                                                                   \
        const char *a = p[1], *b = p[2], *c = p[3];                                       \
        for (int64_t j = 0; j < n; j++)                                                   \
            st_##T(o + j * s[0],                                                          \
                   F(ld_##T(a + j * s[1]), ld_##T(b + j * s[2]), ld_##T(c + j * s[3]), k)); \
    }

#define OPS_DEF_REDUCE_ROW2(NAME, T, F)                                                   \
    static void NAME##_##T(void *vctx, char *const *p, const int64_t *s, int64_t n)       \
    {                                                                                     \
        ops_red_acc *acc = vctx;                                                          \
        const ops_kparams *k = acc->k;                                                    \
        const char *a = p[1], *b = p[2];                                                  \
        double lane[4] = {0.0, 0.0, 0.0, 0.0};                                            \
        int64_t j = 0;                                                                    \
        for (; j + 4 <= n; j += 4)                                                        \
            for (int l = 0; l < 4; l++)                                                   \
                lane[l] += (double)F(ld_##T(a + (j + l) * s[1]), ld_##T(b + (j + l) * s[2]), k); \
        double sum = (lane[0] + lane[1]) + (lane[2] + lane[3]);                           \
        for (; j < n; j++)                                                                \
            sum += (double)F(ld_##T(a + j * s[1]), ld_##T(b + j * s[2]), k);              \
        acc->sum += sum;                                                                  \
    }

/* ======================================================================== */
/* plans                                                                    */
/* ======================================================================== */

typedef struct {
    uint64_t contig_off; /* Contiguous copy (input dtype, input numel), or OPS_NO_CHUNK */
    uint64_t cast_off;   /* Cast to the compute dtype, or OPS_NO_CHUNK */
    uint64_t bcast_off;  /* BroadcastTo the broadcast shape, or OPS_NO_CHUNK */
} ops_in_plan;

typedef struct ops_desc ops_desc;

/* What phase 1 decided, snapshot into the executor and then into each launch's task. */
typedef struct {
    const ops_desc *desc;
    int n_in;
    int64_t reduction;
    bool reduce;        /* the kernel sums everything to one value (a forward loss with mean/sum) */
    int64_t divisor;    /* mean: what the sum is divided by */
    bool no_work;       /* empty inputs and nothing to write */
    bool fill_only;     /* reduced loss of empty inputs: out = NaN (mean) or 0 (sum) */
    aclDataType cdt;    /* compute dtype: the l0 kernel's result dtype */
    /* staging of each input (set by the operator's plan, before ops_plan_body) */
    bool stage_cast;    /* Cast an input whose dtype is not cdt */
    bool stage_bcast;   /* BroadcastTo an input whose shape is not bshape */
    bool bcast_first;   /* Contiguous -> BroadcastTo -> Cast instead of Contiguous -> Cast -> BroadcastTo */
    shape_t bshape;     /* the shape the kernel iterates over */
    int64_t bnumel;
    int64_t rnumel;     /* result elements: bnumel, or 1 for a reduction */
    ops_in_plan in[OPS_MAX_IN];
    uint64_t res_off;   /* result in cdt, or OPS_NO_CHUNK: written straight into out */
    uint64_t cast_off;  /* result cast to out's dtype, or OPS_NO_CHUNK */
    bool out_direct;    /* the last stage writes out's (contiguous) view directly */
    uint64_t ws_total;
    ops_kparams k;
} ops_plan;

/* An operator's phase-1 arguments. */
typedef struct {
    const aclTensor *in[OPS_MAX_IN]; /* the tensor inputs, in the operator's order */
    const aclTensor *out;
    int64_t reduction;
    float beta;
    const aclScalar *alpha;
} ops_args;

struct ops_desc {
    const char *name;       /* "L1Loss": executor and kernel name in messages */
    const char *phase1_api; /* "aclnnL1LossGetWorkspaceSize" */
    const char *phase2_api; /* "aclnnL1Loss" */
    int n_in;
    const char *in_names[OPS_MAX_IN];
    const char *out_name;   /* "out", "gradInput", "result" */
    /* CANN's checks, then the plan (ending with ops_plan_body); the first failure is returned */
    aclnnStatus (*plan)(const char *api, const ops_args *a, ops_plan *pl);
    /* the l0 kernel for pl: an elementwise row, or a reduction row when pl->reduce */
    row_fn (*kernel)(const ops_plan *pl);
    /* its header's parameters and its phase-1 rules (OPS_PROTOTYPE), checked before the plan;
       NULL for an operator without (the custom package's) */
    const struct ops_prototype *prototype;
};

/* The three names of aclnn<Name>, for an ops_desc initialiser: OPS_DESC_NAMES(L1Loss). */
#define OPS_DESC_NAMES(Name) \
    .name = #Name, .phase1_api = "aclnn" #Name "GetWorkspaceSize", .phase2_api = "aclnn" #Name

/* The fields of an ops_desc initialiser for aclnn<Name>: its output's name, plan and kernel, then
 * its N_IN input names: {OPS_DESC(L1Loss, "out", l1_plan, l1_kernel, 2, "self", "target")}. */
#define OPS_DESC(Name, OUT, PLAN, KERNEL, N_IN, ...)                                               \
    OPS_DESC_NAMES(Name), .n_in = (N_IN), .in_names = {__VA_ARGS__}, .out_name = (OUT), .plan = (PLAN), \
    .kernel = (KERNEL)

/* Phase 1 of an operator (its GetWorkspaceSize calls this). */
aclnnStatus ops_phase1(const ops_desc *d, const ops_args *a, uint64_t *workspaceSize, aclOpExecutor **executor);

/* Phase 2 of an operator: the fault point, then the executor core. */
aclnnStatus ops_phase2(const char *api, void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                       aclrtStream stream);

/*
 * CANN's first steps of a phase 1 (OP_CHECK_COMM_INPUT, CREATE_EXECUTOR), also for an operator
 * that does not go through ops_phase1: the fault point, workspaceSize / executor NULL (161001),
 * then the executor, *ex (561101 when it cannot be made).
 */
static inline aclnnStatus ops_phase1_begin(const char *api, const char *op_name, const uint64_t *workspaceSize,
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

/*
 * The shared end of every plan, once the operator's checks passed and it set cdt, bshape,
 * reduce, divisor, the staging flags and the kernel parameters: empty inputs, the emulator's
 * view checks, each input's staging chunks, the result's routing to out, the device memory
 * checks. bnumel / rnumel are derived here.
 */
aclnnStatus ops_plan_body(const char *api, ops_plan *pl, const aclTensor *const *ins, const aclTensor *out);

/*
 * ---- checks shared by the operators (each records a message) ----
 * The static inline ones are compiled into each operator library: from 8.5 the core is a library
 * of its own (libopapi.so), whose exports are CANN's layout's, not these.
 */

/* Return the status from the calling check function unless it is ACLNN_SUCCESS. */
#define OPS_CHECK(expr) EMU_RETURN_IF_STATUS(aclnnStatus, expr)

/* A launch's operator state, as phase 1 left it in the executor: ACL_ERROR_INTERNAL_ERROR
 * (recorded) when there is none. */
static inline aclError ops_require_state(const char *api, const void *op_state)
{
    if (op_state == NULL) {
        emu_error("%s: executor has no operator state", api);
        return ACL_ERROR_INTERNAL_ERROR;
    }
    return ACL_SUCCESS;
}

/* CANN's NULL checks of the tensor arguments in order (161001). */
static inline aclnnStatus ops_check_not_null(const char *api, const aclTensor *const *ts,
                                             const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        if (ts[i] == NULL) {
            emu_error("%s: argument %s is a NULL aclTensor pointer (a tensor is required)", api, names[i]);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    return ACLNN_SUCCESS;
}

/* ops_check_not_null, then the emulator's liveness check of each (161001). */
aclnnStatus ops_check_tensors_given(const char *api, const aclTensor *const *ts, const char *const *names, int n);

/* Emulator-only: `arg` is not a live `type` made by `creator` (161001, the message recorded). */
static inline aclnnStatus ops_not_live(const char *api, const char *arg, const char *type, const char *creator)
{
    emu_error("%s: %s is not a live %s (it was destroyed, or never made by %s)", api, arg, type, creator);
    return ACLNN_ERR_PARAM_NULLPTR;
}

/*
 * Emulator-only, for an operator that runs its own kernel instead of the shared plan: t's view in
 * aclCreateTensor's domain, then (once data is set) its address 32-byte aligned and the view inside
 * one live device allocation (161002).
 */
aclnnStatus ops_check_view_memory(const char *api, const char *arg, const aclTensor *t);

/* Bytes from t's data that its view reaches ((offset + extent) x itemsize); false on overflow. */
bool ops_view_extent_bytes(const aclTensor *t, uint64_t *bytes);

/* reduction in [0, 2] (161002). */
aclnnStatus ops_check_reduction(const char *api, int64_t reduction);

/* rank <= 8 (161002). */
aclnnStatus ops_check_rank(const char *api, const char *arg, const aclTensor *t);

/* ops_check_rank of each of ts[0 .. n), in order. */
static inline aclnnStatus ops_check_ranks(const char *api, const aclTensor *const *ts, const char *const *names,
                                          int n)
{
    for (int i = 0; i < n; i++)
        OPS_CHECK(ops_check_rank(api, names[i], ts[i]));
    return ACLNN_SUCCESS;
}

/* t's dtype in set (161002, the message lists the set). */
aclnnStatus ops_check_dtype(const char *api, const char *arg, const aclTensor *t, ops_dtypes set);

/* ops_check_dtype of each of ts[0 .. n), in order. */
static inline aclnnStatus ops_check_dtypes(const char *api, const aclTensor *const *ts, const char *const *names,
                                           int n, ops_dtypes set)
{
    for (int i = 0; i < n; i++)
        OPS_CHECK(ops_check_dtype(api, names[i], ts[i], set));
    return ACLNN_SUCCESS;
}

/* out's shape equals bs (161002). */
aclnnStatus ops_check_out_shape(const char *api, const char *arg, const aclTensor *out, const shape_t *bs);

/* Broadcast a's and b's shapes into *out (161002 naming them when they do not broadcast). */
aclnnStatus ops_check_broadcast(const char *api, const char *an, const int64_t *a, uint64_t na, const char *bn,
                                const int64_t *b, uint64_t nb, shape_t *out);

/* PromoteType(a, b) into *p, defined (161002 naming both dtypes). */
aclnnStatus ops_check_promotable(const char *api, const aclTensor *a, const char *an, const aclTensor *b,
                                 const char *bn, aclDataType *p);

/* p, the promoted dtype of a and b, in set (161002 naming both dtypes and listing the set). */
aclnnStatus ops_check_promoted_dtype(const char *api, const aclTensor *a, const char *an, const aclTensor *b,
                                     const char *bn, aclDataType p, ops_dtypes set);

/* CanCast(p, out's dtype) (161002). */
aclnnStatus ops_check_cast_to_out(const char *api, aclDataType p, const char *arg, const aclTensor *out);

/* beta >= 0; a NaN beta fails too (161002). */
aclnnStatus ops_check_beta(const char *api, float beta);

/* The SmoothL1 kernels' parameters of beta: beta, 1 / beta (0 when beta is 0), -0.5 * beta. */
static inline void ops_set_beta(ops_kparams *k, float beta)
{
    k->beta = beta;
    k->inv_beta = beta > 0.0f ? 1.0f / beta : 0.0f;
    k->neg_half_beta = -0.5f * beta;
}

/*
 * The shapes of a two-input operator, ts / names = {input 0, input 1, out}: the rank of both
 * inputs, their broadcast into *bs, then (when check_out) out's shape equals *bs (161002).
 */
aclnnStatus ops_check_pair_shapes(const char *api, const aclTensor *const *ts, const char *const *names,
                                  bool check_out, shape_t *bs);

/*
 * The result of a reduced loss (reduction 1 or 2; nothing is checked for 0). Without
 * any_one_element: it must be 0-d (161002). With any_one_element (the ViewCopy of the one-element
 * loss into it): its rank (161002), then exactly one element (561103, CANN's failed ViewCopy).
 */
aclnnStatus ops_check_reduced_out(const char *api, const char *arg, const aclTensor *out, int64_t reduction,
                                  bool any_one_element);

/*
 * The plan of an operator that stages every input by Cast and BroadcastTo (BroadcastTo first when
 * bcast_first) to the compute dtype cdt and the broadcast shape pl->bshape; reduce: the kernel sums
 * to one value, divisor the broadcast numel. Ends with ops_plan_body (into a->out).
 */
aclnnStatus ops_plan_staged(const char *api, const ops_args *a, ops_plan *pl, aclDataType cdt, bool bcast_first,
                            bool reduce);

/*
 * The shapes and plan of a forward loss whose mean/sum result must be 0-d, ts / names = {self,
 * target, out}: ops_check_pair_shapes (out's shape checked for reduction none), then
 * ops_check_reduced_out (0-d), then ops_plan_staged (Contiguous -> Cast(cdt) -> BroadcastTo;
 * mean/sum reduce).
 */
aclnnStatus ops_plan_reduced_loss(const char *api, const ops_args *a, const aclTensor *const *ts,
                                  const char *const *names, ops_plan *pl, aclDataType cdt);

/* ======================================================================== */
/* the registry                                                             */
/* ======================================================================== */

/*
 * EMU_OPERATORS(X) (emu_operators.h, which the build writes from aclnn_py/data/emulator_ops.json):
 * X(Name, descriptor), one per operator. Here it declares `extern const ops_desc descriptor`
 * (defined in its op_*.c); ops_registry.c defines the phase-2 entry points aclnn<Name> and
 * rt_faults.c puts both API names in the fault table.
 */
#include "emu_operators.h"

#define OPS_DECLARE_DESC(name, desc) extern const ops_desc desc;
EMU_OPERATORS(OPS_DECLARE_DESC)
#undef OPS_DECLARE_DESC

/* Each operator's prototype and rules, written by the build from aclnn_py/data/operators.json and
   phase1_rules.json into the library that holds it: `.prototype = OPS_PROTOTYPE(Name)`. */
#define OPS_DECLARE_PROTOTYPE(name, desc) extern const struct ops_prototype ops_prototype_##name;
EMU_OPERATORS(OPS_DECLARE_PROTOTYPE)
#undef OPS_DECLARE_PROTOTYPE
#define OPS_PROTOTYPE(Name) (&ops_prototype_##Name)

#endif
