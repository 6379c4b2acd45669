/*
 * aclnn operators (header family aclnnop/aclnn_*.h) -- the operators aclnn_py binds.
 *
 * Library: libopapi.so (CANN <= 8.3); CANN >= 8.5 splits it by repository: libopapi_nn.so
 * (ops-nn: the losses) and libopapi_math.so (ops-math: aclnnAdd).
 * Sources: hicann/ops-nn loss/mse_loss_grad_v2/op_host/op_api/aclnn_mse_loss_backward.h,
 * loss/mse_loss/op_api/aclnn_mse_loss.h, loss/lp_loss/op_api/aclnn_l1_loss.h,
 * loss/l1_loss_grad/op_api/aclnn_l1_loss_backward.h, loss/smooth_l1_loss_v2/op_api/aclnn_smooth_l1_loss.h,
 * loss/smooth_l1_loss_grad_v2/op_api/aclnn_smooth_l1_loss_backward.h (and each operator's docs/aclnn*.md);
 * hicann/ops-math math/add/op_api/aclnn_add.h, math/add/docs/aclnnAdd&aclnnInplaceAdd.md;
 * hiascend.com aclnnMseLossBackward and aclnnMseLoss pages (CANN 8.0 ... 8.5).
 *
 * Every operator is two calls: phase 1 (GetWorkspaceSize) validates, builds the
 * executor and sizes the workspace; phase 2 launches on a stream and consumes a
 * non-repeatable executor. `reduction`: 0 none, 1 mean, 2 sum. `beta` is a float in every
 * official release (a double here would be an ABI mismatch).
 *
 * cdef-ready: no preprocessor conditionals, no includes; needs acl_rt.h and acl_meta.h first.
 */

aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                 const aclTensor *target, int64_t reduction, aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMseLossBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream);

aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target, int64_t reduction,
                                         aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMseLoss(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

aclnnStatus aclnnL1LossGetWorkspaceSize(const aclTensor *self, const aclTensor *target, int64_t reduction,
                                        aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnL1Loss(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

aclnnStatus aclnnL1LossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                const aclTensor *target, int64_t reduction, aclTensor *gradInput,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnL1LossBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);

aclnnStatus aclnnSmoothL1LossGetWorkspaceSize(const aclTensor *self, const aclTensor *target, int64_t reduction,
                                              float beta, aclTensor *result, uint64_t *workspaceSize,
                                              aclOpExecutor **executor);
aclnnStatus aclnnSmoothL1Loss(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                              aclrtStream stream);

aclnnStatus aclnnSmoothL1LossBackwardGetWorkspaceSize(const aclTensor *gradOut, const aclTensor *self,
                                                      const aclTensor *target, int64_t reduction, float beta,
                                                      aclTensor *gradInput, uint64_t *workspaceSize,
                                                      aclOpExecutor **executor);
aclnnStatus aclnnSmoothL1LossBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                      aclrtStream stream);

/* out = self + alpha * other (ops-math; libopapi_math.so from CANN 8.5). */
aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha,
                                     aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other,
                                            const aclScalar *alpha, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                            aclrtStream stream);
