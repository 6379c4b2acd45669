/*
 * aclnnMseLoss in the aclnn_py host emulator (libopapi.so; see ops_core.h).
 *
 * Behaviour follows CANN's open-sourced operator API code (hicann/ops-nn):
 *   aclnn_mse_loss.cpp (loss/mse_loss/op_host/op_api/ or loss/mse_loss/op_api/ by revision),
 *   loss/mse_loss/docs/aclnnMseLoss.md. Two revisions were read: a 2025 one that broadcasts
 *   self with target (followed here) and a 2026 one that requires equal self/target shapes.
 *   level2_base_loss.h (CheckDtypeValidMseLoss, CheckReductionMseLoss, CheckFillScalarLoss)
 * Check order (CANN): workspaceSize / executor NULL (161001), executor (561101), self/target/out
 *   NULL (161001); dtype: promote(self, target) in list, then self, target, out each in list
 *   (161002; list as for aclnnMseLossBackward); reduction (161002); rank self, target <= 8;
 *   broadcast; reduction 0 -> out == broadcast shape, 1/2 -> out must be 0-d (161002);
 *   empty input -> none: nothing, mean: out = NaN, sum: out = 0; else Contiguous -> Cast(promoted)
 *   -> BroadcastTo -> MseLoss -> Cast(out dtype) -> ViewCopy.
 * Math (golden: PyTorch aten::mse_loss): float32 per element d = self - target, d * d; mean/sum
 *   summed in double (in fixed blocks and lanes: the same result for every thread count), mean
 *   divides by the broadcast numel; results rounded (RNE) to the compute dtype, then cast to out's.
 */
#include "ops_core.h"

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
        ((ops_red_acc *)vctx)->sum += sum;                                                    \
    }

DEF_FWD_REDUCE_ROW(f32, 4)
DEF_FWD_REDUCE_ROW(f16, 2)
DEF_FWD_REDUCE_ROW(bf16, 2)


OPS_DEF_LOSS_KERNEL(mse_kernel, fwd_none_row, fwd_reduce_row)

static aclnnStatus mse_plan(const char *api, const ops_args *a, ops_plan *pl)
{
    const aclTensor *self = a->in[0], *target = a->in[1], *out = a->out;
    const aclTensor *ts[3] = {self, target, out};
    const char *names[3] = {"self", "target", "out"};
    ops_dtypes list = ops_float_dtypes();
    char lst[256];

    OPS_CHECK(ops_check_tensors_given(api, ts, names, 3));

    /* dtypes: the promoted type, then self, target, out each in the support list */
    aclDataType p = ops_promote_type(self->dtype, target->dtype);
    if (p == ACL_DT_UNDEFINED) {
        emu_error("%s: self dtype %s and target dtype %s cannot be promoted to a common dtype; supported "
                  "dtypes: %s",
                  api, ops_dt_name(self->dtype), ops_dt_name(target->dtype), ops_dtypes_str(list, lst, sizeof lst));
        return ACLNN_ERR_PARAM_INVALID;
    }
    OPS_CHECK(ops_check_promoted_dtype(api, self, "self", target, "target", p, list));
    OPS_CHECK(ops_check_dtypes(api, ts, names, 3, list));

    OPS_CHECK(ops_check_reduction(api, a->reduction));

    /* shapes, then Contiguous -> Cast(promoted) -> BroadcastTo -> MseLoss (promoted dtype) */
    return ops_plan_reduced_loss(api, a, ts, names, pl, p);
}

const ops_desc ops_mse_loss = {
    OPS_DESC(MseLoss, "out", mse_plan, mse_kernel, 2, "self", "target"),
    .prototype = OPS_PROTOTYPE(MseLoss),
};

EMU_EXPORT aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                                    int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor)
{
    ops_args a = {.in = {self, target}, .out = out, .reduction = reduction};
    return ops_phase1(&ops_mse_loss, &a, workspaceSize, executor);
}
