/*
 * libopapi.so of the aclnn_py host emulator: the operator registry.
 *
 * EMU_OPERATORS (ops_core.h) lists every operator once. Here each line becomes the operator's
 * phase-2 entry point, aclnn<Name>(workspace, workspaceSize, executor, stream): the same for
 * every operator (CANN's l2 phase 2 is CommonOpExecutorRun), checked against its prototype in
 * headers/aclnn_ops.h by the compiler. Phase 1 (whose parameters differ per operator) is
 * defined in the operator's own file.
 */
#include "ops_core.h"

#define OPS_DEFINE_PHASE2(name, desc)                                                                    \
    EMU_EXPORT aclnnStatus aclnn##name(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, \
                                       aclrtStream stream)                                               \
    {                                                                                                    \
        return ops_phase2("aclnn" #name, workspace, workspaceSize, executor, stream);                    \
    }

EMU_OPERATORS(OPS_DEFINE_PHASE2)
