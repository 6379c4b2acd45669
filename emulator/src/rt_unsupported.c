/*
 * The runtime functions frameworks look up for features out of the emulator's scope (torch_npu
 * 2.13.0 finds each by name and uses it when present): each returns
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000) with a message for aclGetRecentErrMsg, and has no
 * fault point (tests/c/test_emulator_strict.py reads the names from this file). Prototypes from
 * hicann/runtime include/external/acl/acl_rt.h, acl_mdl.h and acl_prof.h (v8.5.0), their
 * handles, enumerations and structs passed here as void pointers and int32_t.
 */
#include "rt_internal.h"

#define EMU_UNSUPPORTED(name, what, ...)                                              \
    EMU_EXPORT aclError name(__VA_ARGS__)                                             \
    {                                                                                 \
        emu_error("%s: %s is not supported by the aclnn_py emulator", #name, what);   \
        return rt_failed(ACL_ERROR_RT_FEATURE_NOT_SUPPORT);                                      \
    }

/* memory shared between processes (IPC) and host memory registered for the device */
EMU_UNSUPPORTED(aclrtIpcMemGetExportKey, "memory sharing between processes (IPC)", void *devPtr, size_t size,
                char *key, size_t len, uint64_t flags)
EMU_UNSUPPORTED(aclrtIpcMemImportByKey, "memory sharing between processes (IPC)", void **devPtr, const char *key,
                uint64_t flags)
EMU_UNSUPPORTED(aclrtIpcMemSetImportPid, "memory sharing between processes (IPC)", const char *key, int32_t *pid,
                size_t num)
EMU_UNSUPPORTED(aclrtIpcMemClose, "memory sharing between processes (IPC)", const char *key)
EMU_UNSUPPORTED(aclrtIpcGetEventHandle, "event sharing between processes (IPC)", aclrtEvent event, void *handle)
EMU_UNSUPPORTED(aclrtIpcOpenEventHandle, "event sharing between processes (IPC)", void *handle, aclrtEvent *event)
EMU_UNSUPPORTED(aclrtHostRegister, "registering host memory for the device", void *ptr, uint64_t size,
                int32_t type, void **devPtr)
EMU_UNSUPPORTED(aclrtHostRegisterV2, "registering host memory for the device", void *ptr, uint64_t size,
                uint32_t flag)
EMU_UNSUPPORTED(aclrtHostUnregister, "registering host memory for the device", void *ptr)
EMU_UNSUPPORTED(aclrtMallocHostWithCfg, "host memory with a configuration", void **ptr, uint64_t size, void *cfg)
EMU_UNSUPPORTED(aclrtPointerGetAttributes, "pointer attributes", const void *ptr, void *attributes)

/* batched and conditional copies, device-side values, cache maintenance */
EMU_UNSUPPORTED(aclrtMemcpyBatch, "batched copies", void **dsts, size_t *destMaxs, void **srcs, size_t *sizes,
                size_t numBatches, void *attrs, size_t *attrsIndexes, size_t numAttrs, size_t *failIndex)
EMU_UNSUPPORTED(aclrtMemcpyBatchAsync, "batched copies", void **dsts, size_t *destMaxs, void **srcs,
                size_t *sizes, size_t numBatches, void *attrs, size_t *attrsIndexes, size_t numAttrs,
                size_t *failIndex, aclrtStream stream)
EMU_UNSUPPORTED(aclrtMemcpyAsyncWithCondition, "conditional copies", void *dst, size_t destMax, const void *src,
                size_t count, int32_t kind, aclrtStream stream)
EMU_UNSUPPORTED(aclrtValueWrite, "device-side value writes", void *devAddr, uint64_t value, uint32_t flag,
                aclrtStream stream)
EMU_UNSUPPORTED(aclrtValueWait, "device-side value waits", void *devAddr, uint64_t value, uint32_t flag,
                aclrtStream stream)
EMU_UNSUPPORTED(aclrtCmoAsync, "cache maintenance operations", void *src, size_t size, int32_t cmoType,
                aclrtStream stream)
EMU_UNSUPPORTED(aclrtGetHardwareSyncAddr, "the hardware synchronisation address", void **addr)
EMU_UNSUPPORTED(aclrtLaunchKernelWithHostArgs, "launching a device kernel binary", void *funcHandle,
                uint32_t numBlocks, aclrtStream stream, void *cfg, void *hostArgs, size_t argsSize,
                void *placeHolderArray, size_t placeHolderNum)

/* callbacks through a reporting thread (aclrtLaunchHostFunc runs host work in order) */
EMU_UNSUPPORTED(aclrtSubscribeReport, "callbacks through a subscribed thread", uint64_t threadId,
                aclrtStream stream)
EMU_UNSUPPORTED(aclrtUnSubscribeReport, "callbacks through a subscribed thread", uint64_t threadId,
                aclrtStream stream)
EMU_UNSUPPORTED(aclrtLaunchCallback, "callbacks through a subscribed thread", void *fn, void *userData,
                int32_t blockType, aclrtStream stream)

/* device health, repair and resource limits */
EMU_UNSUPPORTED(aclrtGetMemUceInfo, "memory UCE error reports", int32_t deviceId, void *memUceInfoArray,
                size_t arraySize, size_t *retSize)
EMU_UNSUPPORTED(aclrtMemUceRepair, "memory UCE repair", int32_t deviceId, void *memUceInfoArray, size_t arraySize)
EMU_UNSUPPORTED(aclrtGetErrorVerbose, "detailed device error reports", int32_t deviceId, void *errorInfo)
EMU_UNSUPPORTED(aclrtRepairError, "device error repair", int32_t deviceId, const void *errorInfo)
EMU_UNSUPPORTED(aclrtDeviceTaskAbort, "aborting a device's tasks", int32_t deviceId, uint32_t timeout)
EMU_UNSUPPORTED(aclrtGetDeviceUtilizationRate, "device utilisation figures", int32_t deviceId,
                void *utilizationInfo)
EMU_UNSUPPORTED(aclrtGetMemUsageInfo, "per-module memory usage", int32_t deviceId, void *memUsageInfo,
                size_t inputNum, size_t *outputNum)
EMU_UNSUPPORTED(aclrtDeviceGetUuid, "device UUIDs", int32_t deviceId, void *uuid)
EMU_UNSUPPORTED(aclrtGetPrimaryCtxState, "primary context state", int32_t deviceId, uint32_t *flags,
                int32_t *active)
EMU_UNSUPPORTED(aclrtSetDeviceResLimit, "device resource limits", int32_t deviceId, int32_t type, uint32_t value)
EMU_UNSUPPORTED(aclrtGetDeviceResLimit, "device resource limits", int32_t deviceId, int32_t type, uint32_t *value)
EMU_UNSUPPORTED(aclrtResetDeviceResLimit, "device resource limits", int32_t deviceId)
EMU_UNSUPPORTED(aclrtSetStreamResLimit, "stream resource limits", aclrtStream stream, int32_t type, uint32_t value)
EMU_UNSUPPORTED(aclrtGetStreamResLimit, "stream resource limits", aclrtStream stream, int32_t type,
                uint32_t *value)
EMU_UNSUPPORTED(aclrtResetStreamResLimit, "stream resource limits", aclrtStream stream)
EMU_UNSUPPORTED(aclrtUseStreamResInCurrentThread, "stream resource limits", aclrtStream stream)
EMU_UNSUPPORTED(aclrtUnuseStreamResInCurrentThread, "stream resource limits", aclrtStream stream)
EMU_UNSUPPORTED(aclrtGetResInCurrentThread, "stream resource limits", int32_t type, uint32_t *value)
EMU_UNSUPPORTED(aclrtSetStreamAttribute, "stream attributes", aclrtStream stream, int32_t stmAttrType,
                void *value)

/* graph capture (NPUGraph: acl_mdl.h's aclmdlRI*) */
EMU_UNSUPPORTED(aclmdlRICaptureBegin, "graph capture", aclrtStream stream, int32_t mode)
EMU_UNSUPPORTED(aclmdlRICaptureEnd, "graph capture", aclrtStream stream, void **modelRI)
EMU_UNSUPPORTED(aclmdlRICaptureThreadExchangeMode, "graph capture", int32_t *mode)
EMU_UNSUPPORTED(aclmdlRICaptureTaskGrpBegin, "graph capture", aclrtStream stream)
EMU_UNSUPPORTED(aclmdlRICaptureTaskGrpEnd, "graph capture", aclrtStream stream, void **handle)
EMU_UNSUPPORTED(aclmdlRICaptureTaskUpdateBegin, "graph capture", aclrtStream stream, void *handle)
EMU_UNSUPPORTED(aclmdlRICaptureTaskUpdateEnd, "graph capture", aclrtStream stream)
EMU_UNSUPPORTED(aclmdlRICaptureToModelRIBegin, "graph capture", aclrtStream stream, void *modelRI, int32_t mode)
EMU_UNSUPPORTED(aclmdlRIExecuteAsync, "graph capture", void *modelRI, aclrtStream stream)
EMU_UNSUPPORTED(aclmdlRIDestroy, "graph capture", void *modelRI)
EMU_UNSUPPORTED(aclmdlRIGetId, "graph capture", void *modelRI, uint32_t *modelRIId)
EMU_UNSUPPORTED(aclmdlRIDebugPrint, "graph capture", void *modelRI)
EMU_UNSUPPORTED(aclmdlRIDebugJsonPrint, "graph capture", void *modelRI, const char *path, uint32_t flags)
EMU_UNSUPPORTED(aclmdlRICondHandleCreate, "graph capture", void *modelRI, uint32_t defaultLaunchValue,
                int32_t flag, void **handle)
EMU_UNSUPPORTED(aclmdlRICondHandleGetCondPtr, "graph capture", void *handle, uint64_t **ptr)
EMU_UNSUPPORTED(aclmdlRIAddCondTask, "graph capture", void *params, aclrtStream stream, uint32_t flags)

/* the profiler (acl_prof.h) and operator argument dumps */
EMU_UNSUPPORTED(aclprofInit, "the profiler", const char *profilerResultPath, size_t length)
EMU_UNSUPPORTED(aclprofFinalize, "the profiler", void)
EMU_UNSUPPORTED(aclprofSetConfig, "the profiler", int32_t configType, const char *config, size_t configLength)
EMU_UNSUPPORTED(aclprofStart, "the profiler", const void *profilerConfig)
EMU_UNSUPPORTED(aclprofStop, "the profiler", const void *profilerConfig)
EMU_UNSUPPORTED(aclprofDestroyConfig, "the profiler", const void *profilerConfig)
EMU_UNSUPPORTED(aclprofMarkEx, "the profiler", const char *msg, size_t msgLen, aclrtStream stream)
EMU_UNSUPPORTED(aclprofGetStepTimestamp, "the profiler", void *stepInfo, int32_t tag, aclrtStream stream)
/* The rest torch_npu 2.13.0 looks up (hicann/runtime 681ef7610 include/external/acl/acl_prof.h and
 * src/dfx/msprof/inc/toolchain/prof_acl_api.h): aclprofWarmup and aclprofRegisterDeviceCallback
 * return int, aclprofGetSupportedFeatures(V2) a Status, all 0 on success, so 207000 says "not
 * supported" through each; aclprofCreateConfig returns the configuration or NULL. */
EMU_UNSUPPORTED(aclprofWarmup, "the profiler", const void *profilerConfig)
EMU_UNSUPPORTED(aclprofRegisterDeviceCallback, "the profiler", void)
EMU_UNSUPPORTED(aclprofGetSupportedFeatures, "the profiler", size_t *featuresSize, void **featuresData)
EMU_UNSUPPORTED(aclprofGetSupportedFeaturesV2, "the profiler", size_t *featuresSize, void **featuresData)

EMU_EXPORT void *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums, int32_t aicoreMetrics,
                                     const void *aicoreEvents, uint64_t dataTypeConfig)
{
    emu_error("aclprofCreateConfig: the profiler is not supported by the aclnn_py emulator");
    return NULL;
}
EMU_UNSUPPORTED(aclopStartDumpArgs, "dumping operator arguments", uint32_t dumpType, const char *path)
EMU_UNSUPPORTED(aclopStopDumpArgs, "dumping operator arguments", uint32_t dumpType)
