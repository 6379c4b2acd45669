/*
 * aclnnSmoothL1LossBackward in the aclnn_py host emulator (libopapi.so; see ops_core.h).
 *
 * Behaviour follows CANN's open-sourced code (hicann/ops-nn):
 *   loss/smooth_l1_loss_grad_v2/op_api/aclnn_smooth_l1_loss_backward.cpp  (phase 1/2, check order)
 *   loss/smooth_l1_loss_grad_v2/op_api/smooth_l1_loss_grad_v2.cpp         (l0 SmoothL1LossGradV2:
 *       broadcasting kernel, result in the promoted dtype and the broadcast shape)
 *   loss/smooth_l1_loss_grad_v2/op_host/arch35/smooth_l1_loss_grad_v2_tiling.cpp (mean coefficient)
 *   loss/smooth_l1_loss_grad_v2/op_kernel/arch35/smooth_l1_loss_grad_v2_dag.h  (the kernel's arithmetic)
 *   loss/smooth_l1_loss_grad_v2/tests/assets/golden.py (torch.ops.aten.smooth_l1_loss_backward)
 *   loss/smooth_l1_loss_grad_v2/docs/aclnnSmoothL1LossBackward.md (dtypes, ranks, codes)
 * Check order (CANN):
 *   1. workspaceSize / executor NULL -> 161001; executor -> 561101
 *   2. gradOut, self, target, gradInput NULL (in this order)                    -> 161001
 *   3. gradOut, self, target, gradInput each in {FLOAT, FLOAT16} (+ BF16 on DAV_2201 / regbase:
 *      Atlas A2/A3, Ascend 950; the emulator's bfloat16 SoC rule)              -> 161002
 *   4. the largest rank of gradOut, self, target <= 8                           -> 161002
 *   5. reduction in [0, 2]                                                      -> 161002
 *   6. beta >= 0 (a NaN beta fails the test too)                                -> 161002
 *   7. PromoteType(gradOut, self), then with target, defined and in the list; CanCast(promoted,
 *      gradInput)                                                               -> 161002
 *   8. broadcast(gradOut, self), then with target; gradInput == that shape      -> 161002
 *   9. any input empty -> success, workspace 0, executor without work
 *  10. Contiguous -> Cast(promoted) -> SmoothL1LossGradV2 (broadcasts its inputs itself) ->
 *      Cast(gradInput dtype) -> ViewCopy.
 * Math, in float32 per element (x = self - target):
 *   s = |x| < beta ? x * (1 / beta) : sign(x)   (sign(0) = 0; a NaN x stays NaN)
 *   gradInput = (s * gradOut) * norm, norm = 1 for none/sum, (float)(1.0 / self.numel()) for mean
 *   The mean divisor is self's own element count: the arch35 tiling divides by the storage shape of
 *   the predict input (self: this API does not broadcast it), and the TBE kernel of the older SoCs
 *   (legacy operator package, impl/dynamic/smooth_l1_loss_grad_v2.py) by the element count of
 *   predict's own shape before broadcasting; PyTorch's smooth_l1_loss_backward uses
 *   1 / input.numel() too. (The generic doc phrase "divided by the number of elements of the
 *   output" and the kernel test golden, which broadcasts every input first, agree with this only
 *   when self has the broadcast shape.)
 *   beta == 0 is L1's gradient, sign(x) (PyTorch: l1_loss_backward; the TBE kernel gives the same).
 *   The arch35 tiling uses a NaN 1 / beta for beta < 1e-6 (x == 0 then gives NaN there) and the TBE
 *   kernel x / (beta + 1e-6); the emulator uses x * (1 / beta) for every beta > 0.
 *   Rounded once to the promoted dtype, then cast to gradInput's.
 */
#include "ops_core.h"

static inline float smooth_l1_bwd_elem(float g, float x, float y, const ops_kparams *k)
{
    float d = x - y;
    float s = fabsf(d) < k->beta ? d * k->inv_beta : d > 0.0f ? 1.0f : d < 0.0f ? -1.0f : d == 0.0f ? 0.0f : d;
    return (s * g) * k->coef;
}

OPS_DEF_ROWS(OPS_DEF_ROW3, smooth_l1_bwd_row, smooth_l1_bwd_elem)

OPS_DEF_KERNEL(smooth_l1_bwd_kernel, smooth_l1_bwd_row)

static aclnnStatus smooth_l1_bwd_plan(const char *api, const ops_args *a, ops_plan *pl)
{
    const aclTensor *gradOut = a->in[0], *self = a->in[1], *target = a->in[2], *gradInput = a->out;
    const aclTensor *ts[4] = {gradOut, self, target, gradInput};
    const char *names[4] = {"gradOut", "self", "target", "gradInput"};
    ops_dtypes list = ops_float_dtypes();
    char sa[256], sb[256], lst[256];

    /* 1. NULL pointers */
    OPS_CHECK(ops_check_tensors_given(api, ts, names, 4));

    /* 2. dtypes */
    OPS_CHECK(ops_check_dtypes(api, ts, names, 4, list));

    /* 3. ranks */
    for (int i = 0; i < 3; i++) {
        if (ts[i]->ndim > EMU_MAX_DIMS) {
            emu_error("%s: the tensors must have at most %d dimensions, but %s has %" PRIu64, api, EMU_MAX_DIMS,
                      names[i], ts[i]->ndim);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }

    /* 4. reduction, beta */
    OPS_CHECK(ops_check_reduction(api, a->reduction));
    OPS_CHECK(ops_check_beta(api, a->beta));

    /* 5. promotion */
    aclDataType p1 = ops_promote_type(gradOut->dtype, self->dtype);
    aclDataType p = p1 == ACL_DT_UNDEFINED ? p1 : ops_promote_type(p1, target->dtype);
    if (p == ACL_DT_UNDEFINED || !ops_dtype_in(p, list)) {
        emu_error("%s: gradOut dtype %s, self dtype %s and target dtype %s do not promote to a dtype in %s", api,
                  ops_dt_name(gradOut->dtype), ops_dt_name(self->dtype), ops_dt_name(target->dtype),
                  ops_dtypes_str(list, lst, sizeof lst));
        return ACLNN_ERR_PARAM_INVALID;
    }
    OPS_CHECK(ops_check_cast_to_out(api, p, "gradInput", gradInput));

    /* 6. broadcast */
    shape_t mid;
    OPS_CHECK(ops_check_broadcast(api, "gradOut", gradOut->dims, gradOut->ndim, "self", self->dims, self->ndim,
                                  &mid));
    if (!ops_broadcast_dims(mid.d, mid.ndim, target->dims, (int)target->ndim, &pl->bshape)) {
        ops_dims_str(sa, sizeof sa, mid.d, (uint64_t)mid.ndim);
        ops_dims_str(sb, sizeof sb, target->dims, target->ndim);
        emu_error("%s: %s (gradOut broadcast with self) and target shape %s cannot be broadcast together", api,
                  sa, sb);
        return ACLNN_ERR_PARAM_INVALID;
    }
    OPS_CHECK(ops_check_out_shape(api, "gradInput", gradInput, &pl->bshape));

    /* Contiguous -> Cast(promoted) -> SmoothL1LossGradV2 (promoted dtype, broadcasting) */
    pl->cdt = p;
    pl->stage_cast = true;
    pl->divisor = ops_view_numel(self);
    pl->k.coef = a->reduction == 1 ? (float)(1.0 / (double)(pl->divisor > 0 ? pl->divisor : 1)) : 1.0f;
    ops_set_beta(&pl->k, a->beta);
    return ops_plan_body(api, pl, a->in, gradInput);
}

const ops_desc ops_smooth_l1_loss_backward = {
    OPS_DESC(SmoothL1LossBackward, "gradInput", smooth_l1_bwd_plan, smooth_l1_bwd_kernel,
             3, "gradOut", "self", "target"),
    .prototype = OPS_PROTOTYPE(SmoothL1LossBackward),
};

EMU_EXPORT aclnnStatus aclnnSmoothL1LossBackwardGetWorkspaceSize(const aclTensor *gradOut, const aclTensor *self,
                                                                 const aclTensor *target, int64_t reduction,
                                                                 float beta, aclTensor *gradInput,
                                                                 uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ops_args a = {.in = {gradOut, self, target}, .out = gradInput, .reduction = reduction, .beta = beta};
    return ops_phase1(&ops_smooth_l1_loss_backward, &a, workspaceSize, executor);
}
