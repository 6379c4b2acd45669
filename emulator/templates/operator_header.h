/**
 * aclnn{{name}} of the aclnn_py host emulator's CANN {{version}} tree, declared as CANN's
 * operator headers declare it.
 */
#ifndef OP_API_INC_{{guard}}_H_
#define OP_API_INC_{{guard}}_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif
{{declarations}}
#ifdef __cplusplus
}
#endif

#endif  // OP_API_INC_{{guard}}_H_
