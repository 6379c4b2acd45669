/*
 * aclnnSmoothL1Loss in the aclnn_py host emulator (libopapi.so; see ops_core.h).
 *
 * Behaviour follows CANN's open-sourced code (hicann/ops-nn):
 *   loss/smooth_l1_loss_v2/op_api/aclnn_smooth_l1_loss.cpp  (phase 1/2, check order)
 *   loss/smooth_l1_loss_v2/op_api/smooth_l1_loss.cpp        (l0 SmoothL1LossV2: result in the input dtype)
 *   loss/smooth_l1_loss_v2/op_host/smooth_l1_loss_v2_infershape.cpp (none: the input shape; mean/sum: 0-d)
 *   loss/smooth_l1_loss_v2/op_kernel/arch35/smooth_l1_loss_v2_dag.h,
 *   loss/smooth_l1_loss_v2/op_host/arch35/smooth_l1_loss_v2_tiling_arch35.cpp
 *   loss/smooth_l1_loss_v2/docs/aclnnSmoothL1Loss.md        (formula, dtypes, ranks, codes)
 * Check order (CANN):
 *   1. workspaceSize / executor NULL -> 161001; executor -> 561101
 *   2. self, target, result NULL (in this order)                                -> 161001
 *   3. self, then target, in {FLOAT, FLOAT16} (+ BF16 on DAV_2201 / regbase: Atlas A2/A3, Ascend 950;
 *      the emulator's bfloat16 SoC rule)                                        -> 161002
 *   4. PromoteType(self, target) defined; CanCast(promoted, result)             -> 161002
 *   5. reduction in [0, 2]                                                      -> 161002
 *   6. rank of self, target <= 8; self and target broadcast; reduction none: result == broadcast
 *      shape (mean/sum: result's shape is not checked here)                     -> 161002
 *   7. beta >= 0 (a NaN beta fails the test too)                                -> 161002
 *   8. self or target empty: none -> nothing; mean -> result = NaN; sum -> result = 0 (a [1] fill
 *      copied into result)
 *   9. Contiguous -> BroadcastTo (both, when self's and target's shapes differ) -> Cast(promoted) ->
 *      SmoothL1LossV2 -> Cast(result dtype) -> ViewCopy.
 * The result of mean/sum: the current ops-nn doc says its shape is [1], the CANN 8.0 pages
 *   (hiascend.com canncommercial/80RC22 .../aclnnSmoothL1Loss.md) say [] (0-d); the l0 infershape
 *   makes it 0-d and the ViewCopy copies it into result. The emulator takes a result of exactly one element (0-d, [1], ...)
 *   and refuses any other with 561103, the status CANN's phase 1 returns when its ViewCopy fails.
 * Emulator subset: result must be FLOAT, FLOAT16 or BF16 (on a bfloat16 SoC); CANN's check is only
 *   CanCast (it would also take DOUBLE) -> 161002 here.
 * Ranks: the doc says 1-8; the code checks only the upper bound (0-d works).
 * Math (PyTorch's smooth_l1_loss; the arch35 kernel's arithmetic), in float32 per element:
 *   d = self - target, a = |d|: a < beta ? (d * (d * 0.5)) * (1 / beta) : a + (-0.5 * beta);
 *   beta == 0 never takes the first branch: the L1 loss |d|. (The arch35 tiling uses 0 instead of
 *   1 / beta for beta < 1e-6; the emulator uses 1 / beta for every beta > 0, as PyTorch does.)
 *   mean/sum summed in double in fixed blocks (the same for every thread count); mean divided by
 *   the broadcast element count; rounded once to the promoted dtype, then cast to result's.
 */
#include "ops_core.h"

static inline float smooth_l1_elem(float x, float y, const ops_kparams *k)
{
    float d = x - y, a = fabsf(d);
    return a < k->beta ? (d * (d * 0.5f)) * k->inv_beta : a + k->neg_half_beta;
}

OPS_DEF_ROWS(OPS_DEF_ROW2, smooth_l1_row, smooth_l1_elem)
OPS_DEF_ROWS(OPS_DEF_REDUCE_ROW2, smooth_l1_reduce_row, smooth_l1_elem)

OPS_DEF_LOSS_KERNEL(smooth_l1_kernel, smooth_l1_row, smooth_l1_reduce_row)

static aclnnStatus smooth_l1_plan(const char *api, const ops_args *a, ops_plan *pl)
{
    const aclTensor *self = a->in[0], *target = a->in[1], *result = a->out;
    const aclTensor *ts[3] = {self, target, result};
    const char *names[3] = {"self", "target", "result"};
    ops_dtypes list = ops_float_dtypes();

    /* 1. NULL pointers */
    OPS_CHECK(ops_check_tensors_given(api, ts, names, 3));

    /* 2. dtypes */
    OPS_CHECK(ops_check_dtypes(api, ts, names, 2, list));
    aclDataType p;
    OPS_CHECK(ops_check_promotable(api, self, "self", target, "target", &p));
    OPS_CHECK(ops_check_cast_to_out(api, p, "result", result));
    OPS_CHECK(ops_check_dtype(api, "result", result, list)); /* emulator subset */

    /* 3. reduction */
    OPS_CHECK(ops_check_reduction(api, a->reduction));

    /* 4. shapes */
    OPS_CHECK(ops_check_pair_shapes(api, ts, names, a->reduction == 0, &pl->bshape));

    /* 5. beta */
    OPS_CHECK(ops_check_beta(api, a->beta));

    /* the ViewCopy of a mean/sum into result (the doc's rank limit for result, 8, holds too) */
    OPS_CHECK(ops_check_reduced_out(api, "result", result, a->reduction, true));

    /* Contiguous -> BroadcastTo -> Cast(promoted) -> SmoothL1LossV2 (promoted dtype) */
    ops_set_beta(&pl->k, a->beta);
    return ops_plan_staged(api, a, pl, p, true, a->reduction != 0);
}

const ops_desc ops_smooth_l1_loss = {
    OPS_DESC(SmoothL1Loss, "result", smooth_l1_plan, smooth_l1_kernel, 2, "self", "target"),
    .prototype = OPS_PROTOTYPE(SmoothL1Loss),
};

EMU_EXPORT aclnnStatus aclnnSmoothL1LossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                                         int64_t reduction, float beta, aclTensor *result,
                                                         uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ops_args a = {.in = {self, target}, .out = result, .reduction = reduction, .beta = beta};
    return ops_phase1(&ops_smooth_l1_loss, &a, workspaceSize, executor);
}
