/*
 * aclnnL1Loss in the aclnn_py host emulator (libopapi.so; see ops_core.h).
 *
 * Behaviour follows CANN's open-sourced operator API code (hicann/ops-nn):
 *   loss/lp_loss/op_api/aclnn_l1_loss.cpp   (phase 1/2, check order, int64 path)
 *   loss/lp_loss/op_api/aclnn_l1_loss.h     (prototypes)
 *   loss/lp_loss/docs/aclnnL1Loss.md        (formula, dtypes, ranks, codes)
 *   loss/common/level2_base_loss.h          (CheckFillScalarLoss: the empty-input fill)
 * Check order (CANN):
 *   1. workspaceSize / executor NULL -> 161001; executor -> 561101
 *   2. self, target, out NULL (in this order)                                  -> 161001
 *   3. reduction in [0, 2]                                                     -> 161002
 *   4. dtype (CheckDtypeValid):
 *      reduction none: self not floating but target floating                  -> 161002
 *      reduction mean: neither self nor target floating                       -> 161002
 *      PromoteType(self, target) undefined                                    -> 161002
 *      promoted not in {FLOAT, FLOAT16, INT64} (+ BF16 on Atlas A2/A3, CANN's
 *      SocVersion 910B..910E; the emulator's bfloat16 SoC rule)                -> 161002
 *      CanCast(promoted, out) false (a floating result into an integral out)   -> 161002
 *      Only the promoted dtype is listed, so an input may be any dtype that promotes into the list
 *      (e.g. int32 with int64, bool with float16): it is Cast like any other.
 *   5. shape (CheckShape): rank of self, target <= 8; self and target broadcast; reduction none:
 *      out == broadcast shape; mean/sum: out must be 0-d                       -> 161002
 *   6. self or target empty: none -> nothing to do; mean -> out = NaN; sum -> out = 0
 *   7. Contiguous -> Cast(promoted) -> BroadcastTo (when self's and target's shapes differ) ->
 *      LpLoss(p=1) (float dtypes) or Sub -> Abs (-> ReduceSum) (int64) -> Cast(out dtype) -> ViewCopy.
 * Emulator subset: out must be one of FLOAT, FLOAT16, INT64 or BF16 (on a bfloat16 SoC); CANN's
 *   check is only CanCast (it would also take e.g. DOUBLE) -> 161002 here.
 * Ranks: the doc says 1-8 for self/target; the code checks only the upper bound (0-d works).
 * Math: float dtypes |self - target| in float32, rounded once to the promoted dtype; mean/sum summed
 *   in double in fixed blocks (the same for every thread count), mean divided by the broadcast
 *   element count ("the sum of the output divided by its number of elements", the doc).
 *   int64: |self - target| and its sum modulo 2^64 (CANN's Sub/Abs/ReduceSum in int64; mean is
 *   refused for two integral inputs, see 4). The int64 path's intermediate Sub/Abs results are not
 *   given workspace chunks here (the emulator fuses them).
 */
#include "ops_core.h"

static inline float l1_elem(float x, float y, const ops_kparams *k)
{
    (void)k;
    return fabsf(x - y);
}

OPS_DEF_ROWS(OPS_DEF_ROW2, l1_row, l1_elem)
OPS_DEF_ROWS(OPS_DEF_REDUCE_ROW2, l1_reduce_row, l1_elem)

/* |x - y| in int64, wrapping like the device's integer arithmetic (|INT64_MIN| stays INT64_MIN). */
static inline uint64_t l1_i64(const char *x, const char *y)
{
    uint64_t d = (uint64_t)ld_i64(x) - (uint64_t)ld_i64(y);
    return (int64_t)d < 0 ? (uint64_t)0 - d : d;
}

static void l1_row_i64(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        st_i64(p[0] + j * s[0], (int64_t)l1_i64(p[1] + j * s[1], p[2] + j * s[2]));
}

static void l1_reduce_row_i64(void *vctx, char *const *p, const int64_t *s, int64_t n)
{
    uint64_t sum = 0;
    for (int64_t j = 0; j < n; j++)
        sum += l1_i64(p[1] + j * s[1], p[2] + j * s[2]);
    ((ops_red_acc *)vctx)->isum += sum;
}

static row_fn l1_kernel(const ops_plan *pl)
{
    if (pl->cdt == ACL_INT64)
        return pl->reduce ? l1_reduce_row_i64 : l1_row_i64;
    return pl->reduce ? OPS_PICK_ROWS(pl, l1_reduce_row) : OPS_PICK_ROWS(pl, l1_row);
}

static aclnnStatus l1_plan(const char *api, const ops_args *a, ops_plan *pl)
{
    const aclTensor *self = a->in[0], *target = a->in[1], *out = a->out;
    const aclTensor *ts[3] = {self, target, out};
    const char *names[3] = {"self", "target", "out"};
    ops_dtypes list = ops_float_dtypes() | OPS_DT(ACL_INT64);

    /* 1. NULL pointers */
    OPS_CHECK(ops_check_tensors_given(api, ts, names, 3));

    /* 2. reduction */
    OPS_CHECK(ops_check_reduction(api, a->reduction));

    /* 3. dtypes */
    bool fs = ops_is_floating(self->dtype), ft = ops_is_floating(target->dtype);
    if (a->reduction == 0 && !fs && ft) {
        emu_error("%s: with reduction 0 (none), a self of dtype %s (not floating point) needs a target that "
                  "is not floating point either, but target has dtype %s",
                  api, ops_dt_name(self->dtype), ops_dt_name(target->dtype));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (a->reduction == 1 && !fs && !ft) {
        emu_error("%s: with reduction 1 (mean), self or target must have a floating point dtype, but self has "
                  "dtype %s and target %s",
                  api, ops_dt_name(self->dtype), ops_dt_name(target->dtype));
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclDataType p;
    OPS_CHECK(ops_check_promotable(api, self, "self", target, "target", &p));
    OPS_CHECK(ops_check_promoted_dtype(api, self, "self", target, "target", p, list));
    OPS_CHECK(ops_check_cast_to_out(api, p, "out", out));
    OPS_CHECK(ops_check_dtype(api, "out", out, list)); /* emulator subset, see above */

    /* 4. shapes, then Contiguous -> Cast(promoted) -> BroadcastTo -> LpLoss (promoted dtype) */
    return ops_plan_reduced_loss(api, a, ts, names, pl, p);
}

const ops_desc ops_l1_loss = {
    OPS_DESC(L1Loss, "out", l1_plan, l1_kernel, 2, "self", "target"),
    .prototype = OPS_PROTOTYPE(L1Loss),
};

EMU_EXPORT aclnnStatus aclnnL1LossGetWorkspaceSize(const aclTensor *self, const aclTensor *target, int64_t reduction,
                                                   aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ops_args a = {.in = {self, target}, .out = out, .reduction = reduction};
    return ops_phase1(&ops_l1_loss, &a, workspaceSize, executor);
}
