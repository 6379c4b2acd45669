/* The replay harness: the types an op_api's level-0 headers name (aclTensor, aclTensorList,
 * aclOpExecutor; from the emulator tree), which CANN's opdev/op_executor.h declares; the unit
 * tests that include such a header (ops-nn index/scatter_update's, through
 * index/index_put_v2/op_api/index_put_v2.h) call none of its functions. */
#ifndef CANN_UT_OPDEV_OP_EXECUTOR_H
#define CANN_UT_OPDEV_OP_EXECUTOR_H

#include "aclnn/aclnn_base.h"

#endif
