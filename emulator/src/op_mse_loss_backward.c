/*
 * aclnnMseLossBackward in the aclnn_py host emulator (libopapi.so; see ops_core.h).
 *
 * Behaviour follows CANN's open-sourced operator API code (hicann/ops-nn):
 *   loss/mse_loss_grad_v2/op_host/op_api/aclnn_mse_loss_backward.cpp  (phase 1/2, check order)
 *   loss/mse_loss_grad_v2/op_host/op_api/mse_loss_grad.cpp             (l0 MseLossGrad: result in self's dtype)
 *   loss/mse_loss_grad_v2/docs/aclnnMseLossBackward.md                 (formula, codes, sample)
 *   level2_base_loss.h, common/inc/op_api/level2_base.h -> level2_base_nn.h
 *   (CheckNotNull4Tensor, GetDtypeSupportListV2)
 * Check order (CANN):
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
 *      MseLossGrad (result in self's dtype, broadcasting its inputs), Cast to out's dtype, ViewCopy into out.
 * Math (golden: PyTorch aten::mse_loss_backward): float32 per element,
 *   r = (coef * (self - target)) * gradOutput, coef = (float)(2.0 / self.numel()) for mean, else 2;
 *   rounded (RNE) to self's dtype, then cast to out's dtype. The mean divisor is self's element
 *   count, not the broadcast one (the doc, the V2 tiling and PyTorch agree).
 */
#include "ops_core.h"

/*
 * MseLossGrad, p[0] result, p[1] gradOutput, p[2] self, p[3] target, all of dtype T (ESZ bytes):
 * r = (coef * (self - target)) * gradOutput in float32, rounded to T. Fast paths for contiguous
 * rows with a contiguous or a scalar (stride 0) gradOutput; anything else element by element.
 */
#define DEF_BWD_ROW(T, ESZ)                                                                   \
    static void bwd_row_##T(void *vctx, char *const *p, const int64_t *s, int64_t n)         \
    {                                                                                         \
        const float coef = ((const ops_kparams *)vctx)->coef;                                 \
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

OPS_DEF_KERNEL(mse_bwd_kernel, bwd_row)

static aclnnStatus mse_bwd_plan(const char *api, const ops_args *a, ops_plan *pl)
{
    const aclTensor *gradOutput = a->in[0], *self = a->in[1], *target = a->in[2], *out = a->out;
    const aclTensor *ts[4] = {gradOutput, self, target, out};
    const char *names[4] = {"gradOutput", "self", "target", "out"};
    ops_dtypes list = ops_float_dtypes();
    char sa[256], sb[256];

    /* 1. NULL pointers */
    OPS_CHECK(ops_check_tensors_given(api, ts, names, 4));

    /* 2. dtypes: gradOutput and target as self, then self and out in the support list */
    for (int i = 0; i < 3; i += 2) {
        if (ts[i]->dtype != self->dtype) {
            emu_error("%s: %s has dtype %s but self has dtype %s; they must have the same dtype", api, names[i],
                      ops_dt_name(ts[i]->dtype), ops_dt_name(self->dtype));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    OPS_CHECK(ops_check_dtype(api, "self", self, list));
    OPS_CHECK(ops_check_dtype(api, "out", out, list));

    /* 3. reduction */
    OPS_CHECK(ops_check_reduction(api, a->reduction));

    /* 4. shapes */
    OPS_CHECK(ops_check_ranks(api, ts, names, 3));
    shape_t b1;
    OPS_CHECK(ops_check_broadcast(api, "gradOutput", gradOutput->dims, gradOutput->ndim, "self", self->dims,
                                  self->ndim, &b1));
    if (!ops_broadcast_dims(target->dims, (int)target->ndim, b1.d, b1.ndim, &pl->bshape)) {
        ops_dims_str(sa, sizeof sa, target->dims, target->ndim);
        ops_dims_str(sb, sizeof sb, b1.d, (uint64_t)b1.ndim);
        emu_error("%s: target shape %s cannot be broadcast with %s (gradOutput broadcast with self)", api, sa, sb);
        return ACLNN_ERR_PARAM_INVALID;
    }
    OPS_CHECK(ops_check_out_shape(api, "out", out, &pl->bshape));

    /* MseLossGrad computes in self's dtype over the broadcast shape; only Contiguous is staged */
    pl->cdt = self->dtype;
    pl->divisor = ops_view_numel(self);
    pl->k.coef = a->reduction == 1 ? (float)(2.0 / (double)pl->divisor) : 2.0f;
    return ops_plan_body(api, pl, a->in, out);
}

const ops_desc ops_mse_loss_backward = {
    OPS_DESC(MseLossBackward, "out", mse_bwd_plan, mse_bwd_kernel, 3, "gradOutput", "self", "target"),
    .prototype = OPS_PROTOTYPE(MseLossBackward),
};

EMU_EXPORT aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                            const aclTensor *target, int64_t reduction,
                                                            aclTensor *out, uint64_t *workspaceSize,
                                                            aclOpExecutor **executor)
{
    ops_args a = {.in = {gradOutput, self, target}, .out = out, .reduction = reduction};
    return ops_phase1(&ops_mse_loss_backward, &a, workspaceSize, executor);
}
