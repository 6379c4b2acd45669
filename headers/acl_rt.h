/*
 * CANN runtime API (header family acl/acl.h, acl/acl_rt.h, acl/acl_base.h,
 * acl/error_codes/rt_error_codes.h) -- the subset aclnn_py uses.
 *
 * Library: libascendcl.so (CANN <= 8.3), libacl_rt.so (CANN >= 8.5).
 * Sources: hicann/runtime include/external/acl/acl_rt.h, acl_base_rt.h and
 * docs/zh/api_ref/25-01_aclError.md; Ascend/pytorch third_party/acl/inc/acl/acl.h,
 * acl_base.h, acl_rt.h and error_codes/rt_error_codes.h (commit 994621452).
 *
 * Written for cffi's cdef (ABI mode) and plain C alike: no preprocessor
 * conditionals, no includes (C users include <stdint.h> and <stddef.h> first).
 * Enum values are copied literally from the sources above.
 */

typedef int aclError;
typedef void *aclrtStream;
typedef void *aclrtContext;
typedef void *aclrtEvent;
typedef uint16_t aclFloat16;

/* acl_base_rt.h: aclDataType */
typedef enum {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27,
    ACL_INT4 = 29,
    ACL_UINT1 = 30,
    ACL_COMPLEX32 = 33,
    ACL_HIFLOAT8 = 34,
    ACL_FLOAT8_E5M2 = 35,
    ACL_FLOAT8_E4M3FN = 36,
    ACL_FLOAT8_E8M0 = 37,
    ACL_FLOAT6_E3M2 = 38,
    ACL_FLOAT6_E2M3 = 39,
    ACL_FLOAT4_E2M1 = 40,
    ACL_FLOAT4_E1M2 = 41
} aclDataType;

/* acl_base_rt.h: aclFormat */
typedef enum {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4,
    ACL_FORMAT_NC1HWC0_C04 = 12,
    ACL_FORMAT_HWCN = 16,
    ACL_FORMAT_NDHWC = 27,
    ACL_FORMAT_FRACTAL_NZ = 29,
    ACL_FORMAT_NCDHW = 30,
    ACL_FORMAT_NDC1HWC0 = 32,
    ACL_FRACTAL_Z_3D = 33,
    ACL_FORMAT_NC = 35,
    ACL_FORMAT_NCL = 47,
    ACL_FORMAT_FRACTAL_NZ_C0_16 = 50,
    ACL_FORMAT_FRACTAL_NZ_C0_32 = 51,
    ACL_FORMAT_FRACTAL_NZ_C0_2 = 52,
    ACL_FORMAT_FRACTAL_NZ_C0_4 = 53,
    ACL_FORMAT_FRACTAL_NZ_C0_8 = 54
} aclFormat;

/* acl_rt.h: aclrtMemcpyKind */
typedef enum {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4,
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5,
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6,
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7
} aclrtMemcpyKind;

/* acl_rt.h: aclrtMemMallocPolicy */
typedef enum {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
    ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000
} aclrtMemMallocPolicy;

/* acl_rt.h: aclrtMemAttr */
typedef enum {
    ACL_DDR_MEM = 0,
    ACL_HBM_MEM = 1,
    ACL_DDR_MEM_HUGE = 2,
    ACL_DDR_MEM_NORMAL = 3,
    ACL_HBM_MEM_HUGE = 4,
    ACL_HBM_MEM_NORMAL = 5,
    ACL_DDR_MEM_P2P_HUGE = 6,
    ACL_DDR_MEM_P2P_NORMAL = 7,
    ACL_HBM_MEM_P2P_HUGE = 8,
    ACL_HBM_MEM_P2P_NORMAL = 9,
    ACL_HBM_MEM_HUGE1G = 10,
    ACL_HBM_MEM_P2P_HUGE1G = 11
} aclrtMemAttr;

/* acl_rt.h: aclrtStreamStatus */
typedef enum {
    ACL_STREAM_STATUS_COMPLETE = 0,
    ACL_STREAM_STATUS_NOT_READY = 1,
    ACL_STREAM_STATUS_RESERVED = 0xFFFF
} aclrtStreamStatus;

/* acl_rt.h: aclrtEventStatus (aclrtQueryEvent, deprecated) and aclrtEventRecordedStatus
   (aclrtQueryEventStatus): opposite values for the same states. */
typedef enum {
    ACL_EVENT_STATUS_COMPLETE = 0,
    ACL_EVENT_STATUS_NOT_READY = 1,
    ACL_EVENT_STATUS_RESERVED = 2
} aclrtEventStatus;

typedef enum {
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

/*
 * aclError codes. CANN declares them as `static const int` (acl_base_rt.h) and
 * `#define` (rt_error_codes.h); they are gathered in one enum here so that a
 * code can be turned back into its name. Sources: acl_base_rt.h,
 * rt_error_codes.h, docs/zh/api_ref/25-01_aclError.md.
 */
typedef enum {
    ACL_SUCCESS = 0,
    ACL_ERROR_INVALID_PARAM = 100000,
    ACL_ERROR_UNINITIALIZE = 100001,
    ACL_ERROR_REPEAT_INITIALIZE = 100002,
    ACL_ERROR_INVALID_FILE = 100003,
    ACL_ERROR_WRITE_FILE = 100004,
    ACL_ERROR_INVALID_FILE_SIZE = 100005,
    ACL_ERROR_PARSE_FILE = 100006,
    ACL_ERROR_FILE_MISSING_ATTR = 100007,
    ACL_ERROR_FILE_ATTR_INVALID = 100008,
    ACL_ERROR_INVALID_DUMP_CONFIG = 100009,
    ACL_ERROR_INVALID_PROFILING_CONFIG = 100010,
    ACL_ERROR_INVALID_MODEL_ID = 100011,
    ACL_ERROR_DESERIALIZE_MODEL = 100012,
    ACL_ERROR_PARSE_MODEL = 100013,
    ACL_ERROR_READ_MODEL_FAILURE = 100014,
    ACL_ERROR_MODEL_SIZE_INVALID = 100015,
    ACL_ERROR_MODEL_MISSING_ATTR = 100016,
    ACL_ERROR_MODEL_INPUT_NOT_MATCH = 100017,
    ACL_ERROR_MODEL_OUTPUT_NOT_MATCH = 100018,
    ACL_ERROR_MODEL_NOT_DYNAMIC = 100019,
    ACL_ERROR_OP_TYPE_NOT_MATCH = 100020,
    ACL_ERROR_OP_INPUT_NOT_MATCH = 100021,
    ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022,
    ACL_ERROR_OP_ATTR_NOT_MATCH = 100023,
    ACL_ERROR_OP_NOT_FOUND = 100024,
    ACL_ERROR_OP_LOAD_FAILED = 100025,
    ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026,
    ACL_ERROR_FORMAT_NOT_MATCH = 100027,
    ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED = 100028,
    ACL_ERROR_KERNEL_NOT_FOUND = 100029,
    ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED = 100030,
    ACL_ERROR_KERNEL_ALREADY_REGISTERED = 100031,
    ACL_ERROR_INVALID_QUEUE_ID = 100032,
    ACL_ERROR_REPEAT_SUBSCRIBE = 100033,
    ACL_ERROR_STREAM_NOT_SUBSCRIBE = 100034,
    ACL_ERROR_THREAD_NOT_SUBSCRIBE = 100035,
    ACL_ERROR_WAIT_CALLBACK_TIMEOUT = 100036,
    ACL_ERROR_REPEAT_FINALIZE = 100037,
    ACL_ERROR_NOT_STATIC_AIPP = 100038,
    ACL_ERROR_COMPILING_STUB_MODE = 100039,
    ACL_ERROR_GROUP_NOT_SET = 100040,
    ACL_ERROR_GROUP_NOT_CREATE = 100041,
    ACL_ERROR_PROF_ALREADY_RUN = 100042,
    ACL_ERROR_PROF_NOT_RUN = 100043,
    ACL_ERROR_DUMP_ALREADY_RUN = 100044,
    ACL_ERROR_DUMP_NOT_RUN = 100045,
    ACL_ERROR_PROF_REPEAT_SUBSCRIBE = 148046,
    ACL_ERROR_PROF_API_CONFLICT = 148047,
    ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG = 148048,
    ACL_ERROR_INVALID_OPP_PATH = 148049,
    ACL_ERROR_OP_UNSUPPORTED_DYNAMIC = 148050,
    ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED = 148051,
    ACL_ERROR_UNSUPPORTED_JPEG = 148052,
    ACL_ERROR_INVALID_BUNDLE_MODEL_ID = 148053,
    ACL_ERROR_BAD_ALLOC = 200000,
    ACL_ERROR_API_NOT_SUPPORT = 200001,
    ACL_ERROR_INVALID_DEVICE = 200002,
    ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003,
    ACL_ERROR_RESOURCE_NOT_MATCH = 200004,
    ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005,
    ACL_ERROR_FEATURE_UNSUPPORTED = 200006,
    ACL_ERROR_PROF_MODULES_UNSUPPORTED = 200007,
    ACL_ERROR_STORAGE_OVER_LIMIT = 300000,
    ACL_ERROR_INTERNAL_ERROR = 500000,
    ACL_ERROR_FAILURE = 500001,
    ACL_ERROR_GE_FAILURE = 500002,
    ACL_ERROR_RT_FAILURE = 500003,
    ACL_ERROR_DRV_FAILURE = 500004,
    ACL_ERROR_PROFILING_FAILURE = 500005,
    /* rt_error_codes.h */
    ACL_ERROR_RT_PARAM_INVALID = 107000,
    ACL_ERROR_RT_INVALID_DEVICEID = 107001,
    ACL_ERROR_RT_CONTEXT_NULL = 107002,
    ACL_ERROR_RT_STREAM_CONTEXT = 107003,
    ACL_ERROR_RT_ADDR_UNALIGNED = 107008,
    ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016,
    ACL_ERROR_RT_INVALID_HANDLE = 107017,
    ACL_ERROR_RT_WAIT_TIMEOUT = 107019,
    ACL_ERROR_RT_TASK_TIMEOUT = 107020,
    ACL_ERROR_RT_STREAM_ABORT = 107023,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000,
    ACL_ERROR_RT_MEMORY_ALLOCATION = 207001,
    ACL_ERROR_RT_MEMORY_FREE = 207002,
    ACL_ERROR_RT_AICORE_OVER_FLOW = 207003,
    ACL_ERROR_RT_NO_DEVICE = 207004,
    ACL_ERROR_RT_RESOURCE_ALLOC_FAIL = 207005,
    ACL_ERROR_RT_NO_PERMISSION = 207006,
    ACL_ERROR_RT_NO_EVENT_RESOURCE = 207007,
    ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008,
    ACL_ERROR_RT_AIVEC_OVER_FLOW = 207016,
    ACL_ERROR_RT_OVER_FLOW = 207017,
    ACL_ERROR_RT_DEVICE_OOM = 207018,
    ACL_ERROR_RT_INTERNAL_ERROR = 507000,
    ACL_ERROR_RT_TS_ERROR = 507001,
    ACL_ERROR_RT_STREAM_TASK_FULL = 507002,
    ACL_ERROR_RT_STREAM_TASK_EMPTY = 507003,
    ACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004,
    ACL_ERROR_RT_END_OF_SEQUENCE = 507005,
    ACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006,
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007,
    ACL_ERROR_RT_SOC_VERSION = 507008,
    ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT = 507009,
    ACL_ERROR_RT_LOST_HEARTBEAT = 507010,
    ACL_ERROR_RT_MODEL_EXECUTE = 507011,
    ACL_ERROR_RT_REPORT_TIMEOUT = 507012,
    ACL_ERROR_RT_SYS_DMA = 507013,
    ACL_ERROR_RT_AICORE_TIMEOUT = 507014,
    ACL_ERROR_RT_AICORE_EXCEPTION = 507015,
    ACL_ERROR_RT_AICORE_TRAP_EXCEPTION = 507016,
    ACL_ERROR_RT_AICPU_TIMEOUT = 507017,
    ACL_ERROR_RT_AICPU_EXCEPTION = 507018,
    ACL_ERROR_RT_DEV_SETUP_ERROR = 507033,
    ACL_ERROR_RT_VECTOR_CORE_TIMEOUT = 507034,
    ACL_ERROR_RT_VECTOR_CORE_EXCEPTION = 507035,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046,
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047,
    ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899,
    ACL_ERROR_RT_AICPU_INTERNAL_ERROR = 507900,
    ACL_ERROR_RT_SOCKET_CLOSE = 507901
} aclErrorCode;

/* Initialisation, errors, SoC (acl.h / acl_rt.h, acl_base_rt.h) */
aclError aclInit(const char *configPath);
aclError aclFinalize(void);
/* Counted de-initialisation (documented from CANN 8.5; hicann/runtime acl_rt.h). */
aclError aclFinalizeReference(uint64_t *refCount);
const char *aclGetRecentErrMsg(void);
const char *aclrtGetSocName(void);
aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion);
/* Half-precision conversions (hicann/runtime include/external/acl/acl_base_rt.h,
 * aclFloat16ToFloat and aclFloatToFloat16; behaviour in their notes there): both saturate,
 * FP16's Inf and NaN read as the finite values their bits would encode with exponent 31
 * (+-65536.0, NaN 98304.0), and a float's NaN, +-Inf or out-of-range value becomes
 * +-65504.0 (0x7BFF, 0xFBFF), NaN the positive one. */
float aclFloat16ToFloat(aclFloat16 value);
aclFloat16 aclFloatToFloat16(float value);
/* The bytes of one element of a data type (hicann/runtime 681ef7610
 * include/external/acl/acl_base_rt.h, aclDataTypeSize): 0 for ACL_STRING and
 * ACL_DT_UNDEFINED, 1 for the sub-byte ACL_INT4 and ACL_UINT1, 8 for a type it does not list. */
size_t aclDataTypeSize(aclDataType dataType);

/* Devices and contexts */
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t *deviceId);
aclError aclrtGetDeviceCount(uint32_t *count);
/* Device ids (hicann/runtime acl_rt.h from tag v8.5.0; docs/zh/api_ref/04_device_management.md):
 * a user id is an index into ASCEND_RT_VISIBLE_DEVICES, a logical id is what that variable
 * lists, a physical id the chip's (equal to the logical one outside containers). Despite
 * their names, aclrtGetPhyDevIdByLogicDevId takes a user id and aclrtGetLogicDevIdByPhyDevId
 * returns one (the same doc). */
aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId);
aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId, int32_t *const userDevid);
aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId, int32_t *const logicDevId);
aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId, int32_t *const phyDevId);
aclError aclrtSynchronizeDevice(void);
aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
aclError aclrtDestroyContext(aclrtContext context);
aclError aclrtSetCurrentContext(aclrtContext context);
aclError aclrtGetCurrentContext(aclrtContext *context);

/* Streams */
aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);

/* Events */
aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status);
aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);

/* Memory */
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
aclError aclrtMallocHost(void **hostPtr, size_t size);
aclError aclrtFreeHost(void *hostPtr);
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream);
aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);

/*
 * What frameworks bind besides (torch_npu 2.13.0; the emulator's rt_frameworks.c and
 * clients_api.h): streams with a configuration, events with flags, the device's
 * configuration, and the features out of the emulator's scope, which return
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT. Enumerations are passed as int32_t here (aclSysParamOpt,
 * aclrtFloatOverflowMode, aclDeviceInfo, aclrtMemHandleType: hicann/runtime acl_rt.h and
 * acl_base_rt.h), handles and property structs as void pointers.
 */
aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag);
aclError aclrtDestroyStreamForce(aclrtStream stream);
aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtSetDeviceSatMode(int32_t mode);
aclError aclrtSetSysParamOpt(int32_t opt, int64_t value);
aclError aclrtCtxSetSysParamOpt(int32_t opt, int64_t value);
aclError aclrtGetSysParamOpt(int32_t opt, int64_t *value);
aclError aclrtSetOpExecuteTimeOut(uint32_t timeout);
aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout);
aclError aclrtSetOpWaitTimeout(uint32_t timeout);
aclError aclGetDeviceCapability(uint32_t deviceId, int32_t deviceInfo, int64_t *value);
aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId);
aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);
aclError aclrtDeviceGetBareTgid(int32_t *pid);
aclError aclrtProcessReport(int32_t timeout);
aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr,
                                uint64_t flags);
aclError aclrtReleaseMemAddress(void *virPtr);
aclError aclrtMallocPhysical(void **handle, size_t size, const void *prop, uint64_t flags);
aclError aclrtFreePhysical(void *handle);
aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, void *handle, uint64_t flags);
aclError aclrtUnmapMem(void *virPtr);
aclError aclrtMemExportToShareableHandle(void *handle, int32_t handleType, uint64_t flags,
                                         uint64_t *shareableHandle);
aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                           void **handle);
aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum);
aclError aclrtBinaryLoadFromData(const void *data, size_t length, const void *options,
                                 void **binHandle);
aclError aclrtBinaryGetFunction(const void *binHandle, const char *kernelName, void **funcHandle);
aclError aclrtGetFunctionAddr(void *funcHandle, void **aicAddr, void **aivAddr);
aclError aclmdlInitDump(void);
aclError aclmdlSetDump(const char *dumpCfgPath);
aclError aclmdlFinalizeDump(void);
aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                          aclrtStream stream);
aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout);
aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId);
aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag);
aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag);
aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode);
/* aclrtHostFunc: void (*)(void *args) */
aclError aclrtLaunchHostFunc(aclrtStream stream, void (*fn)(void *), void *args);
/* the time an event's latest record ran, in microseconds (acl_rt.h) */
aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp);
/* ACL_PKG_VERSION_MAX_SIZE (acl_rt.h): the size of aclsysGetVersionStr's versionStr */
#define ACL_PKG_VERSION_MAX_SIZE 128
/* a package's version, from $ASCEND_HOME_PATH/share/info/<pkgName>/version.info */
aclError aclsysGetVersionStr(char *pkgName, char *versionStr);

/* The thread's last runtime failure (acl_rt.h, aclrtLastErrLevel): aclrtGetLastError returns
 * and clears it, aclrtPeekAtLastError returns it. */
typedef enum {
    ACL_RT_THREAD_LEVEL = 0
} aclrtLastErrLevel;
aclError aclrtGetLastError(aclrtLastErrLevel level);
aclError aclrtPeekAtLastError(aclrtLastErrLevel level);

/* acl_rt.h: aclrtEventWaitStatus: whether the waits issued on an event (aclrtStreamWaitEvent)
 * have all run */
typedef enum {
    ACL_EVENT_WAIT_STATUS_COMPLETE = 0,
    ACL_EVENT_WAIT_STATUS_NOT_READY = 1,
    ACL_EVENT_WAIT_STATUS_RESERVED = 0xFFFF
} aclrtEventWaitStatus;
aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus *status);

/* acl_rt.h: aclrtDevAttr (the deprecated aliases of 204 and 403 left out) */
typedef enum {
    ACL_DEV_ATTR_AICPU_CORE_NUM = 1,
    ACL_DEV_ATTR_AICORE_CORE_NUM = 101,
    ACL_DEV_ATTR_CUBE_CORE_NUM = 102,
    ACL_DEV_ATTR_VECTOR_CORE_NUM = 201,
    ACL_DEV_ATTR_WARP_SIZE = 202,
    ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE = 203,
    ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE = 204,
    ACL_DEV_ATTR_MAX_GRID_DIM_X = 205,
    ACL_DEV_ATTR_MAX_GRID_DIM_Y = 206,
    ACL_DEV_ATTR_MAX_GRID_DIM_Z = 207,
    ACL_DEV_ATTR_MAX_BLOCK_PER_GRID = 208,
    ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK = 209,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_X = 210,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Y = 211,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Z = 212,
    ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE = 301,
    ACL_DEV_ATTR_L2_CACHE_SIZE = 302,
    ACL_DEV_ATTR_SMP_ID = 401,
    ACL_DEV_ATTR_PHY_CHIP_ID = 402,
    ACL_DEV_ATTR_SUPER_POD_DEVICE_ID = 403,
    ACL_DEV_ATTR_SUPER_POD_SERVER_ID = 404,
    ACL_DEV_ATTR_SUPER_POD_ID = 405,
    ACL_DEV_ATTR_CUST_OP_PRIVILEGE = 406,
    ACL_DEV_ATTR_MAINBOARD_ID = 407,
    ACL_DEV_ATTR_HD_CONNECT_TYPE = 408,
    ACL_DEV_ATTR_DEVICE_FORM_FACTOR = 409,
    ACL_DEV_ATTR_IS_VIRTUAL = 501,
    ACL_DEV_ATTR_NPU_ARCH = 601
} aclrtDevAttr;
aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value);

/* acl_rt.h: a stream's graph-capture state (aclmdlRICaptureStatus: 0 none, 1 active,
 * 2 invalidated) and its model (aclmdlRI); the emulator captures nothing */
aclError aclmdlRICaptureGetInfo(aclrtStream stream, int32_t *status, void **modelRI);

/* acl_base_rt.h: aclCannAttr: the features the installed CANN offers on its SoC */
typedef enum {
    ACL_CANN_ATTR_UNDEFINED = -1,
    ACL_CANN_ATTR_INF_NAN = 0,
    ACL_CANN_ATTR_BF16 = 1,
    ACL_CANN_ATTR_JIT_COMPILE = 2
} aclCannAttr;
aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num);
aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value);

/* acl_rt.h: the packages aclsysGetCANNVersion (deprecated) reads, and its result */
#define ACL_PKG_VERSION_PARTS_MAX_SIZE 64
typedef enum {
    ACL_PKG_NAME_CANN,
    ACL_PKG_NAME_RUNTIME,
    ACL_PKG_NAME_COMPILER,
    ACL_PKG_NAME_HCCL,
    ACL_PKG_NAME_TOOLKIT,
    ACL_PKG_NAME_OPP,
    ACL_PKG_NAME_OPP_KERNEL,
    ACL_PKG_NAME_DRIVER
} aclCANNPackageName;
typedef struct aclCANNPackageVersion {
    char version[128];
    char majorVersion[64];
    char minorVersion[64];
    char releaseVersion[64];
    char patchVersion[64];
    char reserved[128];
} aclCANNPackageVersion;
aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version);
