/*
 * aclnnL1LossBackward in the aclnn_py host emulator (libopapi.so; see ops_core.h).
 *
 * Behaviour follows CANN's open-sourced code (hicann/ops-nn):
 *   loss/l1_loss_grad/op_api/aclnn_l1_loss_backward.cpp  (phase 1/2, check order)
 *   loss/l1_loss_grad/op_api/l1_loss_grad.cpp            (l0 L1LossGrad: result in self's dtype)
 *   loss/l1_loss_grad/op_host/arch35/l1_loss_grad_tiling.cpp (mean coefficient)
 *   loss/l1_loss_grad/op_kernel/arch35/l1_loss_grad_dag.h    (the kernel's arithmetic)
 *   loss/l1_loss_grad/tests/assets/golden.py, tests/st/.../executor_aclnnL1LossBackward.py (goldens)
 *   loss/l1_loss_grad/docs/aclnnL1LossBackward.md        (dtypes, ranks)
 * Check order (CANN):
 *   1. workspaceSize / executor NULL -> 161001; executor -> 561101
 *   2. gradOutput, self, target, gradInput NULL (in this order)               -> 161001
 *   3. reduction in [0, 2]                                                     -> 161002
 *   4. dtype: PromoteType(gradOutput, self), then with target, defined; CanCast(promoted, gradInput);
 *      promoted in {FLOAT, FLOAT16} (+ BF16 on Atlas A2/A3: SocVersion 910B..910E; the emulator's
 *      bfloat16 SoC rule)                                                      -> 161002
 *   5. shape: rank of self, target, gradOutput, gradInput <= 8; broadcast(self, gradOutput), then
 *      with target; gradInput == that shape                                   -> 161002
 *   6. any input empty -> success, workspace 0, executor without work
 *   7. Contiguous -> BroadcastTo (each input whose shape is not the broadcast one; on Ascend 950 a
 *      0-d gradOutput is left to the kernel, not modelled here) -> Cast(promoted) -> L1LossGrad ->
 *      Cast(gradInput dtype) -> ViewCopy.
 * Emulator subset: gradInput must be FLOAT, FLOAT16 or BF16 (on a bfloat16 SoC); CANN's check is only
 *   CanCast (it would also take DOUBLE) -> 161002 here.
 * Math (the arch35 kernel DAG and tiling): per element, in float32,
 *   sign = self > target ? 1 : self < target ? -1 : 0   (so a NaN gives 0, as CANN's golden)
 *   gradInput = sign * (gradOutput * coef)
 *   coef = 1 for none/sum; for mean 1 / N computed in float as ((1 / d0) / d1) / ..., over the dims
 *   of the broadcast shape: N is the number of elements of the output (the inputs are broadcast
 *   before the kernel, and the tiling divides by the broadcast target's shape; the doc: "the sum of
 *   the output divided by its number of elements"; the ATK golden divides by the broadcast numel).
 *   This differs from aclnnMseLossBackward, whose divisor is self's own element count.
 *   The result is rounded once to the promoted dtype, then cast to gradInput's.
 */
#include "ops_core.h"

static inline float l1_bwd_elem(float g, float x, float y, const ops_kparams *k)
{
    float sign = x > y ? 1.0f : x < y ? -1.0f : 0.0f;
    return sign * (g * k->coef);
}

OPS_DEF_ROWS(OPS_DEF_ROW3, l1_bwd_row, l1_bwd_elem)

OPS_DEF_KERNEL(l1_bwd_kernel, l1_bwd_row)

static aclnnStatus l1_bwd_plan(const char *api, const ops_args *a, ops_plan *pl)
{
    const aclTensor *gradOutput = a->in[0], *self = a->in[1], *target = a->in[2], *gradInput = a->out;
    const aclTensor *ts[4] = {gradOutput, self, target, gradInput};
    const char *names[4] = {"gradOutput", "self", "target", "gradInput"};
    ops_dtypes list = ops_float_dtypes();
    char sa[256], sb[256], sc[256], lst[256], note[160];

    /* 1. NULL pointers */
    OPS_CHECK(ops_check_tensors_given(api, ts, names, 4));

    /* 2. reduction */
    OPS_CHECK(ops_check_reduction(api, a->reduction));

    /* 3. dtypes */
    aclDataType p1 = ops_promote_type(gradOutput->dtype, self->dtype);
    if (p1 == ACL_DT_UNDEFINED) {
        emu_error("%s: gradOutput dtype %s and self dtype %s cannot be promoted to a common dtype", api,
                  ops_dt_name(gradOutput->dtype), ops_dt_name(self->dtype));
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclDataType p = ops_promote_type(target->dtype, p1);
    if (p == ACL_DT_UNDEFINED) {
        emu_error("%s: target dtype %s, gradOutput dtype %s and self dtype %s cannot be promoted to a common "
                  "dtype", api, ops_dt_name(target->dtype), ops_dt_name(gradOutput->dtype),
                  ops_dt_name(self->dtype));
        return ACLNN_ERR_PARAM_INVALID;
    }
    OPS_CHECK(ops_check_cast_to_out(api, p, "gradInput", gradInput));
    if (!ops_dtype_in(p, list)) {
        emu_error("%s: gradOutput, self and target promote to %s, which is not supported; supported dtypes: %s%s",
                  api, ops_dt_name(p), ops_dtypes_str(list, lst, sizeof lst), ops_bf16_note(p, note, sizeof note));
        return ACLNN_ERR_PARAM_INVALID;
    }
    OPS_CHECK(ops_check_dtype(api, "gradInput", gradInput, list)); /* emulator subset */

    /* 4. shapes */
    const aclTensor *ranked[4] = {self, target, gradOutput, gradInput};
    const char *ranked_names[4] = {"self", "target", "gradOutput", "gradInput"};
    OPS_CHECK(ops_check_ranks(api, ranked, ranked_names, 4));
    shape_t b1;
    OPS_CHECK(ops_check_broadcast(api, "self", self->dims, self->ndim, "gradOutput", gradOutput->dims,
                                  gradOutput->ndim, &b1));
    if (!ops_broadcast_dims(target->dims, (int)target->ndim, b1.d, b1.ndim, &pl->bshape)) {
        ops_dims_str(sa, sizeof sa, gradOutput->dims, gradOutput->ndim);
        ops_dims_str(sb, sizeof sb, self->dims, self->ndim);
        ops_dims_str(sc, sizeof sc, target->dims, target->ndim);
        emu_error("%s: gradOutput shape %s, self shape %s and target shape %s cannot be broadcast together", api,
                  sa, sb, sc);
        return ACLNN_ERR_PARAM_INVALID;
    }
    OPS_CHECK(ops_check_out_shape(api, "gradInput", gradInput, &pl->bshape));

    /* Contiguous -> BroadcastTo -> Cast(promoted) -> L1LossGrad (promoted dtype) */
    pl->k.coef = 1.0f;
    if (a->reduction == 1) {
        for (int i = 0; i < pl->bshape.ndim; i++) /* a 0-d shape counts as [1] */
            if (pl->bshape.d[i] != 0)
                pl->k.coef = pl->k.coef / (float)pl->bshape.d[i];
    }
    return ops_plan_staged(api, a, pl, p, true, false);
}

const ops_desc ops_l1_loss_backward = {
    OPS_DESC(L1LossBackward, "gradInput", l1_bwd_plan, l1_bwd_kernel, 3, "gradOutput", "self", "target"),
    .prototype = OPS_PROTOTYPE(L1LossBackward),
};

EMU_EXPORT aclnnStatus aclnnL1LossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                           const aclTensor *target, int64_t reduction,
                                                           aclTensor *gradInput, uint64_t *workspaceSize,
                                                           aclOpExecutor **executor)
{
    ops_args a = {.in = {gradOutput, self, target}, .out = gradInput, .reduction = reduction};
    return ops_phase1(&ops_l1_loss_backward, &a, workspaceSize, executor);
}
