/*
 * aclnnAdd in the aclnn_py host emulator (libopapi.so; see ops_core.h): out = self + alpha * other.
 *
 * Behaviour follows CANN's open-sourced code (hicann/ops-math):
 *   math/add/op_api/aclnn_add.cpp, aclnn_add.h   (phase 1/2, check order, the l0 graph it builds)
 *   math/add/docs/aclnnAdd&aclnnInplaceAdd.md    (formula, dtypes, ranks, codes)
 *   hicann/opbase include/nnopbase/opdev/data_type_utils.h (PromoteType, CanCast)
 * Check order (CANN; its aclnnAddGetWorkspaceSize has no OP_CHECK_COMM_INPUT: the emulator still
 * refuses a NULL workspaceSize / executor with 161001, where CANN would dereference it):
 *   1. executor -> 561101
 *   2. self, other, alpha, out NULL (in this order)                             -> 161001
 *   3. self, then other, in CANN's list: FLOAT, INT32, INT64, FLOAT16, INT16, INT8, UINT8, DOUBLE,
 *      BOOL, COMPLEX64, COMPLEX128, + BF16 on DAV_2201 / DAV_3510 (Atlas A2/A3, Ascend 950; the
 *      emulator's bfloat16 SoC rule)                                           -> 161002
 *   4. PromoteType(self, other) defined; alpha castable to it (CanCast; a bool promoted dtype needs an
 *      integral or bool alpha); CanCast(promoted, out)                         -> 161002
 *   5. rank of self, other <= 8; self and other broadcast; out == broadcast shape -> 161002
 *   6. self or other empty -> success, workspace 0, executor without work
 *   7. (Atlas A2/A3 graph) float16 or bfloat16 with float32 and alpha == 1: Contiguous -> Add on the
 *      mixed dtypes (result float32); else Contiguous -> Cast(promoted) -> Add (alpha == 1) / Axpy /
 *      Mul + Add -> Cast(out dtype) -> ViewCopy. The l0 Add broadcasts: there is no BroadcastTo.
 *      "alpha == 1" is CANN's test !(alpha > 1 || alpha < 1) on alpha as a float, which a NaN alpha
 *      passes too: alpha is then ignored (out = self + other), as there.
 * Emulator subset (an honest one: anything else is refused with 161002 and a message saying so):
 *   out's dtype must be one the casts take (ops_cast_dtype: every floating, integral, bool and
 *   complex dtype but the 8-, 6- and 4-bit floats and complex32, which CanCast would let through).
 * Ranks: 0-8 ("no more than 8 dimensions", the doc).
 * Math, in the promoted dtype:
 *   FLOAT, FLOAT16, BF16: in float32 per element, self + alpha * other (the product rounded to
 *     float32, then the sum), alpha read as a float (aclScalar::ToFloat), rounded once to the
 *     promoted dtype. (CANN's A2 graph for bfloat16 with alpha != 1 is a Mul then an Add, each
 *     rounding to bfloat16; the emulator rounds once.)
 *   DOUBLE: in float64, alpha converted to float64 (the Mul + Add of the A2 graph: ConvertToTensor).
 *   INT8, INT16, INT32, INT64, UINT8: modulo 2^width (the Mul + Add in the integral dtype, alpha
 *     converted to it; int32's Axpy on A2 takes alpha as a float, exact for the integral alphas
 *     CanCast lets through up to 2^24).
 *   BOOL: self or (other and alpha): the bool Add is a logical or, the Mul by a bool alpha a
 *     logical and.
 *   COMPLEX64 in float, COMPLEX128 in double: self + alpha * other with a complex alpha.
 *   Then the result is cast to out's dtype (ops_store_wide: rounded to nearest even into a
 *   floating dtype, from a float64 through float32 into float16 and bfloat16; wrapped into an
 *   integral one).
 */
#include "ops_core.h"

static inline float add_elem(float s, float o, const ops_kparams *k)
{
    return k->alpha_is_one ? s + o : s + k->alpha * o;
}

OPS_DEF_ROWS(OPS_DEF_ROW2, add_row, add_elem)

/* Inputs of different float dtypes (the mixed-dtype l0 Add): each loaded as its own dtype. */
static void add_row_mixed(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    const ops_kparams *k = vctx;
    for (int64_t j = 0; j < n; j++)
        store_elem(p[0] + j * s[0], k->cdt,
                   add_elem(load_elem(p[1] + j * s[1], k->dt[0]), load_elem(p[2] + j * s[2], k->dt[1]), k));
}

static void add_row_f64(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    const ops_kparams *k = vctx;
    for (int64_t j = 0; j < n; j++) {
        double x, y;
        memcpy(&x, p[1] + j * s[1], 8);
        memcpy(&y, p[2] + j * s[2], 8);
        double r = k->alpha_is_one ? x + y : x + k->alpha_d * y;
        memcpy(p[0] + j * s[0], &r, 8);
    }
}

/* Integral rows of type T: the sum modulo 2^width, through uint64 (whose wrap-around is defined). */
#define ADD_INT_ROW(NAME, T)                                                                      \
    static void NAME(void *vctx, char *const *p, const int64_t *s, int64_t n)                     \
    {                                                                                             \
        const ops_kparams *k = vctx;                                                              \
        uint64_t a = (uint64_t)k->alpha_i;                                                        \
        for (int64_t j = 0; j < n; j++) {                                                         \
            T x, y;                                                                               \
            memcpy(&x, p[1] + j * s[1], sizeof x);                                                \
            memcpy(&y, p[2] + j * s[2], sizeof y);                                                \
            uint64_t product = k->alpha_is_one ? (uint64_t)(int64_t)y : a * (uint64_t)(int64_t)y; \
            T r = (T)((uint64_t)(int64_t)x + product);                                            \
            memcpy(p[0] + j * s[0], &r, sizeof r);                                                \
        }                                                                                         \
    }

ADD_INT_ROW(add_row_i8, int8_t)
ADD_INT_ROW(add_row_u8, uint8_t)
ADD_INT_ROW(add_row_i16, int16_t)
ADD_INT_ROW(add_row_i32, int32_t)
ADD_INT_ROW(add_row_i64, int64_t)

static void add_row_bool(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    const ops_kparams *k = vctx;
    bool a = k->alpha_is_one || k->alpha_i != 0;
    for (int64_t j = 0; j < n; j++) {
        uint8_t x = *(const uint8_t *)(p[1] + j * s[1]), y = *(const uint8_t *)(p[2] + j * s[2]);
        *(uint8_t *)(p[0] + j * s[0]) = (uint8_t)(x != 0 || (y != 0 && a));
    }
}

static void add_row_c64(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    const ops_kparams *k = vctx;
    float ar = (float)k->alpha_d, ai = (float)k->alpha_im;
    for (int64_t j = 0; j < n; j++) {
        float x[2], y[2], r[2];
        memcpy(x, p[1] + j * s[1], sizeof x);
        memcpy(y, p[2] + j * s[2], sizeof y);
        if (k->alpha_is_one) {
            r[0] = x[0] + y[0];
            r[1] = x[1] + y[1];
        } else {
            r[0] = x[0] + (ar * y[0] - ai * y[1]);
            r[1] = x[1] + (ar * y[1] + ai * y[0]);
        }
        memcpy(p[0] + j * s[0], r, sizeof r);
    }
}

static void add_row_c128(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    const ops_kparams *k = vctx;
    double ar = k->alpha_d, ai = k->alpha_im;
    for (int64_t j = 0; j < n; j++) {
        double x[2], y[2], r[2];
        memcpy(x, p[1] + j * s[1], sizeof x);
        memcpy(y, p[2] + j * s[2], sizeof y);
        if (k->alpha_is_one) {
            r[0] = x[0] + y[0];
            r[1] = x[1] + y[1];
        } else {
            r[0] = x[0] + (ar * y[0] - ai * y[1]);
            r[1] = x[1] + (ar * y[1] + ai * y[0]);
        }
        memcpy(p[0] + j * s[0], r, sizeof r);
    }
}

static row_fn add_kernel(const ops_plan *pl)
{
    switch (pl->cdt) {
    case ACL_DOUBLE: return add_row_f64;
    case ACL_INT8: return add_row_i8;
    case ACL_UINT8: return add_row_u8;
    case ACL_INT16: return add_row_i16;
    case ACL_INT32: return add_row_i32;
    case ACL_INT64: return add_row_i64;
    case ACL_BOOL: return add_row_bool;
    case ACL_COMPLEX64: return add_row_c64;
    case ACL_COMPLEX128: return add_row_c128;
    default:
        break;
    }
    if (pl->k.dt[0] != pl->cdt || pl->k.dt[1] != pl->cdt)
        return add_row_mixed;
    return OPS_PICK_ROWS(pl, add_row);
}

/* CANN's aclnnAdd input list (GetDtypeSupportListBySocVersion). */
static ops_dtypes add_input_dtypes(void)
{
    ops_dtypes set = OPS_DT(ACL_FLOAT) | OPS_DT(ACL_INT32) | OPS_DT(ACL_INT64) | OPS_DT(ACL_FLOAT16) |
                     OPS_DT(ACL_INT16) | OPS_DT(ACL_INT8) | OPS_DT(ACL_UINT8) | OPS_DT(ACL_DOUBLE) |
                     OPS_DT(ACL_BOOL) | OPS_DT(ACL_COMPLEX64) | OPS_DT(ACL_COMPLEX128);
    return emu_soc_supports_bf16() ? set | OPS_DT(ACL_BF16) : set;
}

/* isAddMixDtypeSupport: float16 or bfloat16 with float32, either way round. */
static bool add_mixed(aclDataType a, aclDataType b)
{
    return (a == ACL_FLOAT && (b == ACL_FLOAT16 || b == ACL_BF16)) ||
           (b == ACL_FLOAT && (a == ACL_FLOAT16 || a == ACL_BF16));
}

static aclnnStatus add_plan(const char *api, const ops_args *a, ops_plan *pl)
{
    const aclTensor *self = a->in[0], *other = a->in[1], *out = a->out;
    const aclTensor *ts[3] = {self, other, out};
    const char *names[3] = {"self", "other", "out"};
    ops_dtypes inputs = add_input_dtypes();

    /* 1. NULL pointers: self, other, alpha, out; then (emulator) live objects */
    OPS_CHECK(ops_check_not_null(api, ts, names, 2));
    if (a->alpha == NULL) {
        emu_error("%s: argument alpha is a NULL aclScalar pointer (a scalar is required)", api);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    OPS_CHECK(ops_check_tensors_given(api, ts, names, 3));
    double alpha;
    aclDataType alpha_dt;
    unsigned char alpha_bytes[EMU_SCALAR_MAX_BYTES];
    if (!emu_scalar_read(a->alpha, &alpha, &alpha_dt) || !emu_scalar_read_bytes(a->alpha, alpha_bytes, NULL))
        return ops_not_live(api, "alpha", "aclScalar", "aclCreateScalar");

    /* 2. dtypes */
    OPS_CHECK(ops_check_dtypes(api, ts, names, 2, inputs));
    aclDataType p = ops_promote_type(self->dtype, other->dtype);
    if (p == ACL_DT_UNDEFINED) {
        emu_error("%s: self dtype %s and other dtype %s cannot be promoted to a common dtype", api,
                  ops_dt_name(self->dtype), ops_dt_name(other->dtype));
        return ACLNN_ERR_PARAM_INVALID;
    }
    bool alpha_ok = p == ACL_BOOL ? ops_is_integral(alpha_dt, true) : ops_can_cast(alpha_dt, p);
    if (!alpha_ok) {
        emu_error("%s: alpha's dtype %s cannot be cast to the promoted dtype %s", api, ops_dt_name(alpha_dt),
                  ops_dt_name(p));
        return ACLNN_ERR_PARAM_INVALID;
    }
    OPS_CHECK(ops_check_cast_to_out(api, p, "out", out));
    if (!ops_cast_dtype(out->dtype)) { /* emulator subset */
        emu_error("%s: out has dtype %s: the emulator's aclnnAdd does not compute into it (it casts into the "
                  "floating, integral, bool and complex dtypes but the 8-, 6- and 4-bit floats and complex32)",
                  api, ops_dt_name(out->dtype));
        return ACLNN_ERR_PARAM_INVALID;
    }

    /* 3. shapes */
    OPS_CHECK(ops_check_pair_shapes(api, ts, names, true, &pl->bshape));

    /* Contiguous -> [Cast(promoted)] -> Add / Axpy / Mul + Add (promoted dtype, broadcasting) */
    float af = (float)alpha;
    ops_wide alpha_value;
    if (ops_cast_dtype(alpha_dt)) {
        ops_load_wide((const char *)alpha_bytes, alpha_dt, &alpha_value);
    } else { /* a narrow float: its value as aclScalar decodes it */
        memset(&alpha_value, 0, sizeof alpha_value);
        alpha_value.re = alpha;
    }
    pl->cdt = p;
    pl->k.alpha = af;
    pl->k.alpha_is_one = !(af > 1.0f || af < 1.0f);
    pl->k.alpha_d = alpha_value.integral && alpha_value.is_unsigned ? (double)(uint64_t)alpha_value.i
                                                                  : alpha_value.re;
    pl->k.alpha_im = alpha_value.im;
    pl->k.alpha_i = alpha_value.integral ? alpha_value.i : 0;
    pl->stage_cast = !(add_mixed(self->dtype, other->dtype) && pl->k.alpha_is_one);
    return ops_plan_body(api, pl, a->in, out);
}

const ops_desc ops_add = {
    OPS_DESC(Add, "out", add_plan, add_kernel, 2, "self", "other"),
    .prototype = OPS_PROTOTYPE(Add),
};

/*
 * aclnnInplaceAdd(selfRef, other, alpha): selfRef = selfRef + alpha * other, the same checks and
 * computation with selfRef as out (so the broadcast shape must be selfRef's shape, and the promoted
 * dtype must cast to selfRef's dtype, as the doc's inplace rules say). Elementwise, every element is
 * read before it is written at the same position.
 */
const ops_desc ops_inplace_add = {
    OPS_DESC(InplaceAdd, "selfRef", add_plan, add_kernel, 2, "selfRef", "other"),
    .prototype = OPS_PROTOTYPE(InplaceAdd),
};

/* CANN declares selfRef const although the operator writes it (hicann/ops-math
 * math/add/op_api/aclnn_add.h), as most of its in-place operators. */
EMU_EXPORT aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other,
                                                       const aclScalar *alpha, uint64_t *workspaceSize,
                                                       aclOpExecutor **executor)
{
    ops_args a = {.in = {selfRef, other}, .out = (aclTensor *)selfRef, .alpha = alpha};
    return ops_phase1(&ops_inplace_add, &a, workspaceSize, executor);
}

EMU_EXPORT aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha,
                                                aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ops_args a = {.in = {self, other}, .out = out, .alpha = alpha};
    return ops_phase1(&ops_add, &a, workspaceSize, executor);
}
