/*
 * The runtime's fault injection: aclemuInjectFault arms a fault on an API, emu_fault fires it.
 */
#include "rt_internal.h"

#include "emu_operators.h"

/* faults: every one armed since the last aclemuClearFaults, fired ones included */
static aclemuFault *g_faults;
static size_t g_n_faults, g_cap_faults;
static size_t g_n_armed; /* of those, not yet fired */

/*
 * Every API with a fault point: the CANN functions the three libraries export
 * (rt_*.c, meta.c, and libopapi.so's operator files), each of which passes its
 * own name to emu_fault, EMU_RETURN_IF_FAULT, sync_fault or emu_executor_fault
 * (through ops_phase1 / ops_phase2 for the operators). aclemuInjectFault
 * accepts only these names; the tests check the table against the exports.
 */
#define FAULT_API_NAMES(name, desc) "aclnn" #name "GetWorkspaceSize", "aclnn" #name,
static const char *const g_fault_apis[] = {
    /* libascendcl.so */
    "aclInit", "aclFinalize", "aclFinalizeReference", "aclGetRecentErrMsg",
    "aclrtSetDevice", "aclrtResetDevice", "aclrtGetDevice", "aclrtGetDeviceCount", "aclrtSynchronizeDevice",
    "aclrtGetLogicDevIdByUserDevId", "aclrtGetUserDevIdByLogicDevId", "aclrtGetLogicDevIdByPhyDevId",
    "aclrtGetPhyDevIdByLogicDevId",
    "aclrtCreateContext", "aclrtDestroyContext", "aclrtSetCurrentContext", "aclrtGetCurrentContext",
    "aclrtCreateStream", "aclrtDestroyStream", "aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout",
    "aclrtStreamQuery",
    "aclrtCreateEvent", "aclrtDestroyEvent", "aclrtRecordEvent", "aclrtSynchronizeEvent",
    "aclrtEventElapsedTime", "aclrtQueryEventStatus", "aclrtQueryEvent",
    "aclrtMalloc", "aclrtFree", "aclrtMallocHost", "aclrtFreeHost", "aclrtGetMemInfo",
    "aclrtMemcpy", "aclrtMemcpyAsync", "aclrtMemset",
    "aclrtGetSocName", "aclrtGetVersion",
    /* what frameworks bind besides (rt_frameworks.c and the stream, event and memory files) */
    "aclrtCreateStreamWithConfig", "aclrtDestroyStreamForce", "aclrtCreateEventWithFlag",
    "aclrtCreateEventExWithFlag", "aclrtStreamWaitEvent", "aclrtResetEvent", "aclrtMallocAlign32",
    "aclrtSetDeviceSatMode", "aclrtSetSysParamOpt", "aclrtCtxSetSysParamOpt", "aclrtGetSysParamOpt",
    "aclrtSetOpExecuteTimeOut", "aclrtSetOpExecuteTimeOutV2", "aclrtSetOpWaitTimeout",
    "aclGetDeviceCapability", "aclrtDeviceCanAccessPeer", "aclrtDeviceEnablePeerAccess",
    "aclrtDeviceGetBareTgid", "aclrtProcessReport",
    "aclrtReserveMemAddress", "aclrtReleaseMemAddress", "aclrtMallocPhysical", "aclrtFreePhysical",
    "aclrtMapMem", "aclrtUnmapMem", "aclrtMemExportToShareableHandle",
    "aclrtMemImportFromShareableHandle", "aclrtMemSetPidToShareableHandle",
    "aclrtBinaryLoadFromData", "aclrtBinaryGetFunction", "aclrtGetFunctionAddr",
    "aclmdlInitDump", "aclmdlSetDump", "aclmdlFinalizeDump",
    "aclrtMemsetAsync", "aclrtSynchronizeDeviceWithTimeout", "aclrtStreamGetId", "aclrtSetStreamOverflowSwitch",
    "aclrtGetStreamOverflowSwitch", "aclrtSetStreamFailureMode", "aclrtLaunchHostFunc",
    "aclrtEventGetTimestamp", "aclsysGetVersionStr",
    "aclrtGetLastError", "aclrtPeekAtLastError", "aclrtQueryEventWaitStatus", "aclrtGetDeviceInfo",
    "aclGetCannAttributeList", "aclGetCannAttribute", "aclsysGetCANNVersion", "aclmdlRICaptureGetInfo",
    /* libnnopbase.so */
    "aclCreateTensor", "aclDestroyTensor", "aclInitTensor", "aclGetViewOffset", "aclGetFormat",
    "aclGetDataType",
    "aclGetViewShape", "aclGetViewStrides", "aclGetStorageShape",
    "aclCreateScalar", "aclDestroyScalar", "aclCreateIntArray", "aclDestroyIntArray",
    "aclCreateFloatArray", "aclDestroyFloatArray", "aclCreateBoolArray", "aclDestroyBoolArray",
    "aclCreateTensorList", "aclDestroyTensorList", "aclCreateScalarList", "aclDestroyScalarList",
    "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor",
    "aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr",
    "aclnnInit", "aclnnFinalize",
    /* libopapi.so: both names of every operator */
    EMU_OPERATORS(FAULT_API_NAMES)
};

#define EMU_N_FAULT_APIS (sizeof g_fault_apis / sizeof g_fault_apis[0])

static bool is_fault_api(const char *api)
{
    for (size_t i = 0; i < EMU_N_FAULT_APIS; i++)
        if (strcmp(g_fault_apis[i], api) == 0)
            return true;
    return false;
}

EMU_EXPORT int32_t emu_fault(const char *api)
{
    if (!api)
        return 0;
    int32_t status = 0;
    LOCK();
    if (g_n_armed) {
        for (size_t i = 0; i < g_n_faults; i++) {
            aclemuFault *f = &g_faults[i];
            if (f->fired || strcmp(f->api, api) != 0)
                continue;
            if (--f->remaining > 0)
                continue;
            /* fires (several armed for the same call fire together; the first armed sets the status) */
            f->remaining = 0;
            f->fired = 1;
            g_n_armed--;
            if (status == 0)
                status = f->status;
        }
    }
    UNLOCK();
    if (status)
        emu_error("%s: injected fault, status %" PRId32, api, status);
    return status;
}

EMU_EXPORT int32_t aclemuInjectFault(const char *api, int64_t nth, int32_t status)
{
    if (!api || !*api || nth < 1 || status == 0) {
        emu_error("aclemuInjectFault: invalid argument (api must be a non-empty name, nth >= 1, status != 0)");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (!is_fault_api(api)) {
        emu_error("aclemuInjectFault: unknown API '%.*s': the emulator implements no function of that name, so "
                  "the fault could never fire (aclemuGetFaultApis lists the names it accepts)", 200, api);
        return ACL_ERROR_INVALID_PARAM;
    }
    LOCK();
    if (g_n_faults == g_cap_faults) {
        size_t cap = g_cap_faults ? 2 * g_cap_faults : 8;
        aclemuFault *nf = realloc(g_faults, cap * sizeof *nf);
        if (!nf) {
            UNLOCK();
            emu_error("aclemuInjectFault: out of host memory");
            return ACL_ERROR_BAD_ALLOC;
        }
        g_faults = nf;
        g_cap_faults = cap;
    }
    aclemuFault *f = &g_faults[g_n_faults++];
    memset(f, 0, sizeof *f);
    snprintf(f->api, sizeof f->api, "%s", api); /* known names are all shorter */
    f->nth = nth;
    f->remaining = nth;
    f->status = status;
    g_n_armed++;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT int32_t aclemuClearFaults(void)
{
    LOCK();
    free(g_faults);
    g_faults = NULL;
    g_n_faults = g_cap_faults = g_n_armed = 0;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT int32_t aclemuGetFaults(aclemuFault *faults, int64_t capacity, int64_t *count)
{
    if (!count || capacity < 0 || (!faults && capacity > 0)) {
        emu_error("aclemuGetFaults: invalid argument (count must not be NULL, capacity >= 0, faults may be NULL "
                  "only when capacity is 0)");
        return ACL_ERROR_INVALID_PARAM;
    }
    LOCK();
    size_t n = g_n_faults < (uint64_t)capacity ? g_n_faults : (size_t)capacity;
    if (n)
        memcpy(faults, g_faults, n * sizeof *faults);
    *count = (int64_t)g_n_faults;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT int32_t aclemuGetFaultApis(const char **names, int64_t capacity, int64_t *count)
{
    if (!count || capacity < 0 || (!names && capacity > 0)) {
        emu_error("aclemuGetFaultApis: invalid argument (count must not be NULL, capacity >= 0, names may be "
                  "NULL only when capacity is 0)");
        return ACL_ERROR_INVALID_PARAM;
    }
    for (size_t i = 0; i < EMU_N_FAULT_APIS && i < (uint64_t)capacity; i++)
        names[i] = g_fault_apis[i];
    *count = (int64_t)EMU_N_FAULT_APIS;
    return ACL_SUCCESS;
}
