/*
 * libhccl.so: CANN's collective communication (HCCL). Collectives between devices are out of
 * the emulator's scope: every function a framework looks up returns HCCL_E_NOT_SUPPORT (5,
 * HcclResult of Ascend/pytorch third_party/hccl/inc/hccl/hccl_types.h) with a message for
 * aclGetRecentErrMsg. The functions are defined without a parameter list: each ignores its
 * arguments, whatever hccl.h declares them to be.
 */
#include "clients_api.h"
#include "emu_internal.h"

#include <stdlib.h>
#include <string.h>

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

/*
 * The process-wide settings (hicann/hccl HcclSetConfig and HcclGetConfig; the value a union of
 * one int32_t, Ascend/pytorch third_party/hccl/inc/hccl/hccl_types.h HcclConfigValue, passed
 * by value): HCCL_DETERMINISTIC (0) takes 0 (off), 1 (on) or 2 (reduction order kept, Atlas
 * A2 only, HCCL_E_NOT_SUPPORT elsewhere), another value is HCCL_E_PARA; with the environment
 * variable HCCL_DETERMINISTIC set, the call succeeds and changes nothing. Another setting is
 * accepted and ignored. HcclGetConfig reads HCCL_DETERMINISTIC back (a NULL value is
 * HCCL_E_PTR); torch_npu sets it with every operator launch under CANN >= 8.5
 * (torch_npu/csrc/framework/OpParamMaker.cpp, ApplyLegacyDeterministicSnapshotLocked).
 */
#define EMU_HCCL_E_PTR 2
#define EMU_HCCL_DETERMINISTIC 0

static int32_t g_hccl_deterministic;

EMU_EXPORT emuHcclResult HcclSetConfig(int32_t config, int32_t value)
{
    if (config != EMU_HCCL_DETERMINISTIC || getenv("HCCL_DETERMINISTIC"))
        return EMU_HCCL_SUCCESS;
    if (value < 0 || value > 2) {
        emu_error("HcclSetConfig: HCCL_DETERMINISTIC takes 0, 1 or 2, not %d", (int)value);
        return EMU_HCCL_E_PARA;
    }
    const char *soc = aclrtGetSocName();
    if (value == 2 && !(soc && strncmp(soc, "Ascend910B", 10) == 0)) {
        emu_error("HcclSetConfig: HCCL_DETERMINISTIC 2 (reduction order kept) is for Atlas A2 only, not %s",
                  soc ? soc : "this SoC");
        return EMU_HCCL_E_NOT_SUPPORT;
    }
    __atomic_store_n(&g_hccl_deterministic, value, __ATOMIC_RELAXED);
    return EMU_HCCL_SUCCESS;
}

EMU_EXPORT emuHcclResult HcclGetConfig(int32_t config, int32_t *value)
{
    if (!value) {
        emu_error("HcclGetConfig: configValue is NULL");
        return EMU_HCCL_E_PTR;
    }
    if (config == EMU_HCCL_DETERMINISTIC)
        *value = __atomic_load_n(&g_hccl_deterministic, __ATOMIC_RELAXED);
    return EMU_HCCL_SUCCESS;
}
