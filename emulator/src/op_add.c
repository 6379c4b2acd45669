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
 * Emulator subset (an honest one: everything else is refused with 161002 and a message saying so):
 *   the promoted dtype must be FLOAT, FLOAT16 or BF16 (inputs of any listed dtype that promote to one
 *   of them are accepted and cast, e.g. int32 with float32; integral, bool, DOUBLE and complex results
 *   are not implemented), and out must be FLOAT, FLOAT16 or BF16 (on a bfloat16 SoC).
 * Ranks: 0-8 ("no more than 8 dimensions", the doc).
 * Math, in float32 per element: self + alpha * other (the product rounded to float32, then the sum),
 *   alpha read as a float (aclScalar::ToFloat), rounded once to the promoted dtype, then cast to
 *   out's. (CANN's A2 graph for bfloat16 with alpha != 1 is a Mul then an Add, each rounding to
 *   bfloat16; the emulator rounds once.)
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

static row_fn add_kernel(const ops_plan *pl)
{
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
    ops_dtypes inputs = add_input_dtypes(), floats = ops_float_dtypes();
    char lst[256];

    /* 1. NULL pointers: self, other, alpha, out; then (emulator) live objects */
    OPS_CHECK(ops_check_not_null(api, ts, names, 2));
    if (a->alpha == NULL) {
        emu_error("%s: argument alpha is a NULL aclScalar pointer (a scalar is required)", api);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    OPS_CHECK(ops_check_tensors_given(api, ts, names, 3));
    double alpha;
    aclDataType alpha_dt;
    if (!emu_scalar_read(a->alpha, &alpha, &alpha_dt))
        return ops_not_live(api, "alpha", "aclScalar", "aclCreateScalar");

    /* 2. dtypes */
    OPS_CHECK(ops_check_dtypes(api, ts, names, 2, inputs));
    aclDataType p = ops_promote_type(self->dtype, other->dtype);
    if (p == ACL_DT_UNDEFINED) {
        emu_error("%s: self dtype %s and other dtype %s cannot be promoted to a common dtype%s", api,
                  ops_dt_name(self->dtype), ops_dt_name(other->dtype),
                  ops_is_complex(self->dtype) || ops_is_complex(other->dtype)
                      ? " (the emulator does not implement complex dtypes)" : "");
        return ACLNN_ERR_PARAM_INVALID;
    }
    bool alpha_ok = p == ACL_BOOL ? ops_is_integral(alpha_dt, true) : ops_can_cast(alpha_dt, p);
    if (!alpha_ok) {
        emu_error("%s: alpha's dtype %s cannot be cast to the promoted dtype %s", api, ops_dt_name(alpha_dt),
                  ops_dt_name(p));
        return ACLNN_ERR_PARAM_INVALID;
    }
    OPS_CHECK(ops_check_cast_to_out(api, p, "out", out));
    if (!ops_dtype_in(p, floats)) { /* emulator subset */
        emu_error("%s: self dtype %s and other dtype %s promote to %s: the emulator implements aclnnAdd only for "
                  "the promoted dtypes %s", api, ops_dt_name(self->dtype), ops_dt_name(other->dtype),
                  ops_dt_name(p), ops_dtypes_str(floats, lst, sizeof lst));
        return ACLNN_ERR_PARAM_INVALID;
    }
    OPS_CHECK(ops_check_dtype(api, "out", out, floats)); /* emulator subset */

    /* 3. shapes */
    OPS_CHECK(ops_check_pair_shapes(api, ts, names, true, &pl->bshape));

    /* Contiguous -> [Cast(promoted)] -> Add / Axpy (promoted dtype, broadcasting) */
    float af = (float)alpha;
    pl->cdt = p;
    pl->k.alpha = af;
    pl->k.alpha_is_one = !(af > 1.0f || af < 1.0f);
    pl->stage_cast = !(add_mixed(self->dtype, other->dtype) && pl->k.alpha_is_one);
    return ops_plan_body(api, pl, a->in, out);
}

const ops_desc ops_add = {
    OPS_DESC(Add, "out", add_plan, add_kernel, 2, "self", "other"),
};

/*
 * aclnnInplaceAdd(selfRef, other, alpha): selfRef = selfRef + alpha * other, the same checks and
 * computation with selfRef as out (so the broadcast shape must be selfRef's shape, and the promoted
 * dtype must cast to selfRef's dtype, as the doc's inplace rules say). Elementwise, every element is
 * read before it is written at the same position.
 */
const ops_desc ops_inplace_add = {
    OPS_DESC(InplaceAdd, "selfRef", add_plan, add_kernel, 2, "selfRef", "other"),
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
