/*
 * aclnn operators (header family aclnnop/aclnn_*.h) -- the operators aclnn_py binds.
 *
 * Library: libopapi.so (CANN <= 8.3), libopapi_nn.so (CANN >= 8.5, ops-nn).
 * Sources: hicann/ops-nn loss/mse_loss_grad_v2/op_host/op_api/aclnn_mse_loss_backward.h,
 * loss/mse_loss/op_api/aclnn_mse_loss.h; hiascend.com aclnnMseLossBackward and
 * aclnnMseLoss pages (CANN 8.0 ... 8.5).
 *
 * Every operator is two calls: phase 1 (GetWorkspaceSize) validates, builds the
 * executor and sizes the workspace; phase 2 launches on a stream and consumes a
 * non-repeatable executor. `reduction`: 0 none, 1 mean, 2 sum.
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
