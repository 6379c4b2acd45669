
/*
 * aclnnWeightedSumCustom of the aclnn_py host emulator's custom operator package.
*/

#ifndef ACLNN_WEIGHTED_SUM_CUSTOM_H_
#define ACLNN_WEIGHTED_SUM_CUSTOM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* funtion: aclnnWeightedSumCustomGetWorkspaceSize
 * parameters :
 * x : dynamic
 * weights : required
 * mask : required
 * y : required
 * terms : dynamic
 * workspaceSize : size of workspace(output).
 * executor : executor context(output).
 */
__attribute__((visibility("default")))
aclnnStatus aclnnWeightedSumCustomGetWorkspaceSize(
    const aclTensorList *x,
    const aclFloatArray *weights,
    const aclBoolArray *mask,
    const aclTensor *y,
    const aclTensorList *terms,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/* funtion: aclnnWeightedSumCustom
 * parameters :
 * workspace : workspace memory addr(input).
 * workspaceSize : size of workspace(input).
 * executor : executor context(input).
 * stream : acl stream.
 */
__attribute__((visibility("default")))
aclnnStatus aclnnWeightedSumCustom(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
