/*
 * libhccl.so: CANN's collective communication (HCCL). Collectives between devices are out of
 * the emulator's scope: every function a framework looks up returns HCCL_E_NOT_SUPPORT (5,
 * HcclResult of Ascend/pytorch third_party/hccl/inc/hccl/hccl_types.h) with a message for
 * aclGetRecentErrMsg. The functions are defined without a parameter list: each ignores its
 * arguments, whatever hccl.h declares them to be.
 */
#include "clients_api.h"
#include "emu_internal.h"

#define EMU_HCCL_UNSUPPORTED(name)                                                                   \
    EMU_EXPORT emuHcclResult name()                                                                  \
    {                                                                                                \
        emu_error("%s: collective communication (HCCL) is not supported by the aclnn_py emulator", \
                  #name);                                                                            \
        return EMU_HCCL_E_NOT_SUPPORT;                                                               \
    }

#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wold-style-definition"
/* hccl.h (Ascend/pytorch third_party/hccl/inc/hccl/hccl.h at 9e73e708a) */
EMU_HCCL_UNSUPPORTED(HcclGetRootInfo)
EMU_HCCL_UNSUPPORTED(HcclCommInitRootInfo)
EMU_HCCL_UNSUPPORTED(HcclCommInitRootInfoConfig)
EMU_HCCL_UNSUPPORTED(HcclCommInitClusterInfo)
EMU_HCCL_UNSUPPORTED(HcclCommInitClusterInfoConfig)
EMU_HCCL_UNSUPPORTED(HcclCommInitAll)
EMU_HCCL_UNSUPPORTED(HcclCreateSubCommConfig)
EMU_HCCL_UNSUPPORTED(HcclCommDestroy)
EMU_HCCL_UNSUPPORTED(HcclGetRankSize)
EMU_HCCL_UNSUPPORTED(HcclGetRankId)
EMU_HCCL_UNSUPPORTED(HcclGetCommName)
EMU_HCCL_UNSUPPORTED(HcclGetCommAsyncError)
EMU_HCCL_UNSUPPORTED(HcclGetConfig)
EMU_HCCL_UNSUPPORTED(HcclSetConfig)
EMU_HCCL_UNSUPPORTED(HcclGetCommConfig)
EMU_HCCL_UNSUPPORTED(HcclSetCommConfig)
EMU_HCCL_UNSUPPORTED(HcclAllReduce)
EMU_HCCL_UNSUPPORTED(HcclBroadcast)
EMU_HCCL_UNSUPPORTED(HcclReduce)
EMU_HCCL_UNSUPPORTED(HcclReduceScatter)
EMU_HCCL_UNSUPPORTED(HcclReduceScatterV)
EMU_HCCL_UNSUPPORTED(HcclAllGather)
EMU_HCCL_UNSUPPORTED(HcclAllGatherV)
EMU_HCCL_UNSUPPORTED(HcclAlltoAll)
EMU_HCCL_UNSUPPORTED(HcclAlltoAllV)
EMU_HCCL_UNSUPPORTED(HcclAlltoAllVC)
EMU_HCCL_UNSUPPORTED(HcclScatter)
EMU_HCCL_UNSUPPORTED(HcclBarrier)
EMU_HCCL_UNSUPPORTED(HcclSend)
EMU_HCCL_UNSUPPORTED(HcclRecv)
EMU_HCCL_UNSUPPORTED(HcclBatchSendRecv)
EMU_HCCL_UNSUPPORTED(HcclGroupStart)
EMU_HCCL_UNSUPPORTED(HcclGroupEnd)
EMU_HCCL_UNSUPPORTED(HcclCommRegister)
EMU_HCCL_UNSUPPORTED(HcclCommDeregister)
EMU_HCCL_UNSUPPORTED(HcclCommExchangeMem)
EMU_HCCL_UNSUPPORTED(HcclCommSuspend)
EMU_HCCL_UNSUPPORTED(HcclCommResume)
EMU_HCCL_UNSUPPORTED(HcclCommWorkingDevNicSet)
EMU_HCCL_UNSUPPORTED(HcclCommSetMemoryRange)
EMU_HCCL_UNSUPPORTED(HcclCommUnsetMemoryRange)
EMU_HCCL_UNSUPPORTED(HcclCommActivateCommMemory)
EMU_HCCL_UNSUPPORTED(HcclCommDeactivateCommMemory)
