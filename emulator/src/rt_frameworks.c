/*
 * What a framework binds from the runtime beyond the rest of rt_*.c (clients_api.h): streams
 * with a configuration, events with flags, the device's configuration (saturation mode,
 * system parameters, timeouts, capabilities, peer access), tensor descriptions, data buffers
 * and operator attributes, and the profiling and dump hooks. Each behaves as CANN's does
 * where its effect can be seen on one host, succeeds where it cannot (the device's
 * saturation mode, timeouts, profiling reports), and where the feature is out of the
 * emulator's scope (virtual memory, IPC, kernel binaries, dumps) returns CANN's "not
 * supported" status with a message for aclGetRecentErrMsg.
 */
#include "rt_internal.h"

#include <unistd.h>

#include "clients_api.h"

/* The status and message of a feature the emulator leaves out. */
static aclError unsupported(const char *api, const char *what)
{
    emu_error("%s: %s is not supported by the aclnn_py emulator", api, what);
    return rt_failed(ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
}

/* ---- streams and events ---- */

/* aclrtCreateStreamWithConfig (hicann/runtime acl_rt.h, docs/zh/api_ref/06_stream_management.md):
 * a stream with a priority (0 the highest) and ACL_STREAM_* flags, which change nothing here
 * but are kept. */
EMU_EXPORT aclError aclrtCreateStreamWithConfig(aclrtStream *stream_out, uint32_t priority, uint32_t flag)
{
    static const char api[] = "aclrtCreateStreamWithConfig";
    ENTER_WITH_ARG(api, stream_out, "stream");
    const uint32_t known = EMU_ACL_STREAM_FAST_LAUNCH | EMU_ACL_STREAM_FAST_SYNC | EMU_ACL_STREAM_PERSISTENT |
                           EMU_ACL_STREAM_HUGE | EMU_ACL_STREAM_CPU_SCHEDULE | EMU_ACL_STREAM_DEVICE_USE_ONLY;
    if (flag & ~known) {
        emu_error("%s: flag 0x%" PRIx32 " has bits no ACL_STREAM_* flag has (known: 0x%" PRIx32 ")", api, flag,
                  known);
        return ACL_ERROR_INVALID_PARAM;
    }
    aclError rc = aclrtCreateStream(stream_out);
    if (rc)
        return rc;
    LOCK();
    stream *s = *stream_out;
    s->priority = priority;
    s->flags = flag;
    UNLOCK();
    return ACL_SUCCESS;
}

/* An event with ACL_EVENT_* flags (acl_rt.h): kept; timing works whatever they say. */
static aclError create_event_with_flag(const char *api, aclrtEvent *ev, uint32_t flag)
{
    ENTER_WITH_ARG(api, ev, "event");
    const uint32_t known = EMU_ACL_EVENT_SYNC | EMU_ACL_EVENT_CAPTURE_STREAM_PROGRESS | EMU_ACL_EVENT_TIME_LINE |
                           EMU_ACL_EVENT_DEVICE_USE_ONLY | EMU_ACL_EVENT_EXTERNAL | EMU_ACL_EVENT_IPC;
    if (flag & ~known) {
        emu_error("%s: flag 0x%" PRIx32 " has bits no ACL_EVENT_* flag has (known: 0x%" PRIx32 ")", api, flag,
                  known);
        return ACL_ERROR_INVALID_PARAM;
    }
    aclError rc = aclrtCreateEvent(ev);
    if (rc)
        return rc;
    LOCK();
    ((event *)*ev)->flags = flag;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtCreateEventWithFlag(aclrtEvent *ev, uint32_t flag)
{
    return create_event_with_flag("aclrtCreateEventWithFlag", ev, flag);
}

EMU_EXPORT aclError aclrtCreateEventExWithFlag(aclrtEvent *ev, uint32_t flag)
{
    return create_event_with_flag("aclrtCreateEventExWithFlag", ev, flag);
}

/* ---- the device's configuration ---- */

static int32_t g_sat_mode = EMU_OVERFLOW_SATURATION;
static int64_t g_sys_params[EMU_SYS_PARAM_OPTS]; /* 0 unless set (docs/zh/api_ref/03_runtime_configuration.md) */

/* aclrtSetDeviceSatMode: saturation or INF/NaN mode of float overflow on the device; the
 * emulator's kernels compute in IEEE arithmetic whatever is set, so it is stored only. */
EMU_EXPORT aclError aclrtSetDeviceSatMode(int32_t mode)
{
    static const char api[] = "aclrtSetDeviceSatMode";
    ENTER(api);
    if (mode != EMU_OVERFLOW_SATURATION && mode != EMU_OVERFLOW_INFNAN) {
        emu_error("%s: mode %" PRId32 " is invalid: expected ACL_RT_OVERFLOW_MODE_SATURATION (0) or "
                  "ACL_RT_OVERFLOW_MODE_INFNAN (1)", api, mode);
        return ACL_ERROR_INVALID_PARAM;
    }
    LOCK();
    g_sat_mode = mode;
    UNLOCK();
    return ACL_SUCCESS;
}

/* An option of the process (0 to 3) or of a context (0 to 2: no kernel early start), as
 * hicann/runtime src/acl/aclrt_impl/context.cpp, GetSysParamOpt, accepts them. */
static aclError check_sys_param(const char *api, int32_t opt, int32_t count)
{
    if (opt < 0 || opt >= count) {
        emu_error("%s: opt %" PRId32 " is invalid here: expected an aclSysParamOpt of 0 to %" PRId32, api, opt,
                  count - 1);
        return ACL_ERROR_INVALID_PARAM;
    }
    return ACL_SUCCESS;
}

static aclError set_sys_param(const char *api, int32_t opt, int64_t value, int32_t count)
{
    ENTER(api);
    RETURN_IF_ERROR(check_sys_param(api, opt, count));
    LOCK();
    g_sys_params[opt] = value;
    UNLOCK();
    return ACL_SUCCESS;
}

/* aclrtSetSysParamOpt / aclrtCtxSetSysParamOpt: the process's (one context's: the emulator
 * keeps one value for both) runtime parameter, read back by aclrtGetSysParamOpt. */
EMU_EXPORT aclError aclrtSetSysParamOpt(int32_t opt, int64_t value)
{
    return set_sys_param("aclrtSetSysParamOpt", opt, value, EMU_SYS_PARAM_OPTS);
}

EMU_EXPORT aclError aclrtCtxSetSysParamOpt(int32_t opt, int64_t value)
{
    return set_sys_param("aclrtCtxSetSysParamOpt", opt, value, EMU_SYS_PARAM_OPTS - 1);
}

EMU_EXPORT aclError aclrtGetSysParamOpt(int32_t opt, int64_t *value)
{
    static const char api[] = "aclrtGetSysParamOpt";
    ENTER_WITH_ARG(api, value, "value");
    RETURN_IF_ERROR(check_sys_param(api, opt, EMU_SYS_PARAM_OPTS));
    LOCK();
    *value = g_sys_params[opt];
    UNLOCK();
    return ACL_SUCCESS;
}

/* The operator timeouts (acl_rt.h): host execution never times out, so they are accepted. */
EMU_EXPORT aclError aclrtSetOpExecuteTimeOut(uint32_t timeout)
{
    ENTER("aclrtSetOpExecuteTimeOut");
    return ACL_SUCCESS;
}

/* V2 reports the timeout in effect: the one asked for, in microseconds as given. */
EMU_EXPORT aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout)
{
    static const char api[] = "aclrtSetOpExecuteTimeOutV2";
    ENTER_WITH_ARG(api, actualTimeout, "actualTimeout");
    *actualTimeout = timeout;
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtSetOpWaitTimeout(uint32_t timeout)
{
    ENTER("aclrtSetOpWaitTimeout");
    return ACL_SUCCESS;
}

static aclError check_device_id(const char *api, const char *name, int32_t id)
{
    if (id < 0 || id >= g_dev_count) {
        emu_error("%s: %s %" PRId32 " is not a visible device (0 to %" PRId32 ")", api, name, id, g_dev_count - 1);
        return rt_failed(ACL_ERROR_RT_INVALID_DEVICEID);
    }
    return ACL_SUCCESS;
}

/*
 * aclGetDeviceCapability: the emulated SoC's AI cores, vector cores and L2 bytes, as CANN reads
 * them from its platform file (hicann/runtime src/acl/aclrt_impl/acl.cpp,
 * aclGetDeviceCapabilityImpl: keys ai_core_cnt, vector_core_cnt and l2_size of
 * src/platform/platform_config/cann/<SoC>.ini, whose figures these are); a SoC without a file
 * there (the 950 parts, the family names) reads as Ascend910B3. A deviceId past the device
 * count and an unknown deviceInfo are ACL_ERROR_INVALID_PARAM there.
 */
static const struct {
    const char *soc;
    int64_t ai_cores, vector_cores, l2_bytes;
    int64_t cube_cores; /* cube_core_cnt, -1 where the file has none */
    int64_t ai_cpus;    /* ai_cpu_cnt (0 where the file leaves it empty) */
    bool inf_nan_bf16;  /* support_inf_nan=1 and support_bf16=1 (the two go together there) */
} g_platform[] = {
    {"Ascend031", 1, 1, 4194304, -1, 4, false},
    {"Ascend035", 1, 0, 0, -1, 0, false},
    {"Ascend035A", 1, 0, 0, -1, 0, false},
    {"Ascend035B", 1, 0, 0, -1, 0, false},
    {"Ascend310B1", 1, 1, 4194304, 1, 4, false},
    {"Ascend310B2", 1, 1, 4194304, 1, 4, false},
    {"Ascend310B3", 1, 1, 4194304, 1, 4, false},
    {"Ascend310B4", 1, 1, 4194304, 1, 4, false},
    {"Ascend310P1", 10, 8, 16777216, -1, 8, false},
    {"Ascend310P3", 8, 7, 16777216, -1, 7, false},
    {"Ascend310P5", 8, 7, 16777216, -1, 8, false},
    {"Ascend310P7", 8, 7, 16777216, -1, 8, false},
    {"Ascend910A", 32, 0, 33554432, -1, 4, false},
    {"Ascend910B", 30, 0, 33554432, -1, 6, false},
    {"Ascend910B1", 24, 48, 201326592, 24, 6, true},
    {"Ascend910B2", 24, 48, 201326592, 24, 6, true},
    {"Ascend910B2C", 24, 48, 201326592, 24, 6, true},
    {"Ascend910B3", 20, 40, 201326592, 20, 6, true},
    {"Ascend910B4-1", 20, 40, 176160768, 20, 6, true},
    {"Ascend910B4", 20, 40, 100663296, 20, 6, true},
    {"Ascend910PremiumA", 32, 0, 33554432, -1, 4, false},
    {"Ascend910ProA", 32, 0, 33554432, -1, 4, false},
    {"Ascend910ProB", 30, 0, 33554432, -1, 4, false},
    {"Ascend910_9362", 20, 40, 176160768, 20, 6, true},
    {"Ascend910_9363", 20, 40, 176160768, 20, 6, true},
    {"Ascend910_9372", 20, 40, 201326592, 20, 6, true},
    {"Ascend910_9381", 24, 48, 201326592, 24, 6, true},
    {"Ascend910_9382", 24, 48, 201326592, 24, 6, true},
    {"Ascend910_9391", 24, 48, 201326592, 24, 6, true},
    {"Ascend910_9392", 24, 48, 201326592, 24, 6, true},
};

/* The emulated SoC's row of g_platform, or NULL when CANN has no platform file for it. Lock held. */
static ptrdiff_t platform_row(void)
{
    for (size_t i = 0; i < sizeof g_platform / sizeof g_platform[0]; i++)
        if (strcmp(g_platform[i].soc, g_soc) == 0)
            return (ptrdiff_t)i;
    return -1;
}

/* The row aclGetDeviceCapability reads: the SoC's, else Ascend910B3's. */
static size_t platform_row_or_default(void)
{
    ptrdiff_t row = platform_row();
    if (row >= 0)
        return (size_t)row;
    for (size_t i = 0; i < sizeof g_platform / sizeof g_platform[0]; i++)
        if (strcmp(g_platform[i].soc, "Ascend910B3") == 0)
            return i;
    return 0;
}

EMU_EXPORT aclError aclGetDeviceCapability(uint32_t deviceId, int32_t deviceInfo, int64_t *value)
{
    static const char api[] = "aclGetDeviceCapability";
    ENTER_WITH_ARG(api, value, "value");
    if (deviceId >= (uint32_t)g_dev_count) {
        emu_error("%s: deviceId %" PRIu32 " is not below the device count %" PRId32, api, deviceId, g_dev_count);
        return ACL_ERROR_INVALID_PARAM;
    }
    size_t row = platform_row_or_default();
    switch (deviceInfo) {
    case EMU_DEVICE_INFO_AI_CORE_NUM: *value = g_platform[row].ai_cores; return ACL_SUCCESS;
    case EMU_DEVICE_INFO_VECTOR_CORE_NUM: *value = g_platform[row].vector_cores; return ACL_SUCCESS;
    case EMU_DEVICE_INFO_L2_SIZE: *value = g_platform[row].l2_bytes; return ACL_SUCCESS;
    default:
        emu_error("%s: deviceInfo %" PRId32 " is not an aclDeviceInfo (0 to 2)", api, deviceInfo);
        return ACL_ERROR_INVALID_PARAM;
    }
}

/*
 * aclrtGetDeviceInfo (hicann/runtime 681ef7610: src/acl/aclrt_impl/device.cpp,
 * aclrtGetDeviceInfoImpl: value NULL is ACL_ERROR_INVALID_PARAM; then rtsDeviceGetInfo,
 * ApiImpl::GetDeviceInfoByAttr and GetDeviceInfoByAttrMisc of src/runtime/api/impl/api_impl.cc).
 * What the emulator knows: the AI CPU, AI core, cube core and vector core counts and the L2 size
 * from the SoC's platform file (ai_cpu_cnt, ai_core_cnt, cube_core_cnt, vector_core_cnt,
 * l2_size; a file without cube_core_cnt fails the query, a SoC without a file reads as
 * Ascend910B3's, as aclGetDeviceCapability does); the SIMT limits (202 to 212) are the A2/A3
 * device properties, all 0 (src/runtime/config/910_B_93/dev_info_reg.cc), read for every SoC
 * here; the global memory is the device's capacity (ACLNN_EMU_DEVICE_MEMORY); a device is not
 * virtual (501: 0, no compute-power splitting); the physical chip id (402) is the device's
 * logical id (no container). The NPU architecture (601) fails as on A2/A3, whose npuArch is 0
 * (GetDeviceNpuArch: RT_ERROR_INVALID_VALUE). The board, server and pod figures (401, 403 to
 * 409) come from the driver of a real machine: not supported here. Another attr is
 * ACL_ERROR_RT_PARAM_INVALID, a device id past the count ACL_ERROR_RT_INVALID_DEVICEID.
 */
EMU_EXPORT aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value)
{
    static const char api[] = "aclrtGetDeviceInfo";
    ENTER_WITH_ARG(api, value, "value");
    LOCK();
    if (deviceId >= (uint32_t)g_dev_count) {
        int32_t count = g_dev_count;
        UNLOCK();
        emu_error("%s: deviceId %" PRIu32 " is not a visible device (the count is %" PRId32 ")", api, deviceId,
                  count);
        return rt_failed(ACL_ERROR_RT_INVALID_DEVICEID);
    }
    size_t row = platform_row_or_default();
    int64_t v = 0;
    aclError rc = ACL_SUCCESS;
    switch ((int32_t)attr) {
    case ACL_DEV_ATTR_AICPU_CORE_NUM: v = g_platform[row].ai_cpus; break;
    case ACL_DEV_ATTR_AICORE_CORE_NUM: v = g_platform[row].ai_cores; break;
    case ACL_DEV_ATTR_CUBE_CORE_NUM:
        v = g_platform[row].cube_cores;
        if (v < 0) {
            emu_error("%s: the platform file of %s gives no cube_core_cnt", api, g_soc);
            rc = ACL_ERROR_RT_PARAM_INVALID;
        }
        break;
    case ACL_DEV_ATTR_VECTOR_CORE_NUM: v = g_platform[row].vector_cores; break;
    case ACL_DEV_ATTR_WARP_SIZE: case ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE:
    case ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE: case ACL_DEV_ATTR_MAX_GRID_DIM_X: case ACL_DEV_ATTR_MAX_GRID_DIM_Y:
    case ACL_DEV_ATTR_MAX_GRID_DIM_Z: case ACL_DEV_ATTR_MAX_BLOCK_PER_GRID:
    case ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK: case ACL_DEV_ATTR_MAX_BLOCK_DIM_X:
    case ACL_DEV_ATTR_MAX_BLOCK_DIM_Y: case ACL_DEV_ATTR_MAX_BLOCK_DIM_Z:
        v = 0;
        break;
    case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE: v = (int64_t)g_dev_capacity; break;
    case ACL_DEV_ATTR_L2_CACHE_SIZE: v = g_platform[row].l2_bytes; break;
    case ACL_DEV_ATTR_PHY_CHIP_ID: v = g_visible_ids[deviceId]; break;
    case ACL_DEV_ATTR_IS_VIRTUAL: v = 0; break;
    case ACL_DEV_ATTR_NPU_ARCH:
        emu_error("%s: attr ACL_DEV_ATTR_NPU_ARCH (601): the NPU architecture of %s is not set in CANN's "
                  "device properties, so the query fails as on that SoC", api, g_soc);
        rc = ACL_ERROR_RT_PARAM_INVALID;
        break;
    case ACL_DEV_ATTR_SMP_ID: case ACL_DEV_ATTR_SUPER_POD_DEVICE_ID: case ACL_DEV_ATTR_SUPER_POD_SERVER_ID:
    case ACL_DEV_ATTR_SUPER_POD_ID: case ACL_DEV_ATTR_CUST_OP_PRIVILEGE: case ACL_DEV_ATTR_MAINBOARD_ID:
    case ACL_DEV_ATTR_HD_CONNECT_TYPE: case ACL_DEV_ATTR_DEVICE_FORM_FACTOR:
        emu_error("%s: attr %d is a figure of the machine's driver (board, server or pod), which the emulator "
                  "does not model", api, (int)attr);
        rc = ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
        break;
    default:
        emu_error("%s: attr %d is not an aclrtDevAttr (1, 101, 102, 201 to 212, 301, 302, 401 to 409, 501, "
                  "601)", api, (int)attr);
        rc = ACL_ERROR_RT_PARAM_INVALID;
    }
    UNLOCK();
    if (rc)
        return rt_failed(rc);
    *value = v;
    return ACL_SUCCESS;
}

/*
 * aclGetCannAttributeList / aclGetCannAttribute (hicann/runtime 681ef7610: src/acl/aclrt_impl/
 * acl.cpp, aclGetCannAttributeListImpl and aclGetCannAttributeImpl; src/acl/utils/
 * cann_info_utils.cpp, CannInfoUtils). An attribute is available when the installed runtime is
 * at least the version src/acl/config/swFeatureList.json names (INF_NAN and BF16 7.1,
 * JIT_COMPILE 6.4: every era emulated here is newer) and, for INF_NAN and BF16, when the SoC's
 * platform file sets support_inf_nan / support_bf16 to 1 (the Atlas A2 and A3 parts; a SoC
 * without a file has neither). The list holds the available ones in enum order. NULL pointers
 * and an attribute outside the enum are ACL_ERROR_INVALID_PARAM.
 */
static aclCannAttr g_cann_attrs[3];

static size_t cann_attributes(void)
{
    LOCK();
    ptrdiff_t row = platform_row();
    size_t n = 0;
    if (row >= 0 && g_platform[row].inf_nan_bf16) {
        g_cann_attrs[n++] = ACL_CANN_ATTR_INF_NAN;
        g_cann_attrs[n++] = ACL_CANN_ATTR_BF16;
    }
    g_cann_attrs[n++] = ACL_CANN_ATTR_JIT_COMPILE;
    UNLOCK();
    return n;
}

EMU_EXPORT aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num)
{
    static const char api[] = "aclGetCannAttributeList";
    ENTER_WITH_ARG(api, cannAttrList, "cannAttrList");
    REQUIRE_ARG(api, num, "num");
    *num = cann_attributes();
    *cannAttrList = g_cann_attrs;
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value)
{
    static const char api[] = "aclGetCannAttribute";
    ENTER_WITH_ARG(api, value, "value");
    if (cannAttr < ACL_CANN_ATTR_INF_NAN || cannAttr > ACL_CANN_ATTR_JIT_COMPILE) {
        emu_error("%s: cannAttr %d is not an attribute CANN knows (0 INF_NAN, 1 BF16, 2 JIT_COMPILE)", api,
                  (int)cannAttr);
        return ACL_ERROR_INVALID_PARAM;
    }
    size_t n = cann_attributes();
    *value = 0;
    for (size_t i = 0; i < n; i++)
        if (g_cann_attrs[i] == cannAttr)
            *value = 1;
    return ACL_SUCCESS;
}

/* aclrtDeviceCanAccessPeer (docs/zh/api_ref/04_device_management.md): the emulated devices
 * share the host's memory, so any two different ones can; a device with itself is
 * ACL_ERROR_INVALID_PARAM (src/acl/aclrt_impl/memory.cpp, aclrtDeviceCanAccessPeerImpl). */
EMU_EXPORT aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId)
{
    static const char api[] = "aclrtDeviceCanAccessPeer";
    ENTER_WITH_ARG(api, canAccessPeer, "canAccessPeer");
    RETURN_IF_ERROR(check_device_id(api, "deviceId", deviceId));
    RETURN_IF_ERROR(check_device_id(api, "peerDeviceId", peerDeviceId));
    if (deviceId == peerDeviceId) {
        emu_error("%s: deviceId and peerDeviceId are both %" PRId32 ": a device is no peer of itself", api, deviceId);
        return ACL_ERROR_INVALID_PARAM;
    }
    *canAccessPeer = 1;
    return ACL_SUCCESS;
}

/* aclrtDeviceEnablePeerAccess: flags is reserved, 0, and anything else is
 * ACL_ERROR_FEATURE_UNSUPPORTED; the current device as the peer is ACL_ERROR_INVALID_PARAM
 * (hicann/runtime src/acl/aclrt_impl/memory.cpp, aclrtDeviceEnablePeerAccessImpl). */
EMU_EXPORT aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags)
{
    static const char api[] = "aclrtDeviceEnablePeerAccess";
    ENTER(api);
    if (flags != 0) {
        emu_error("%s: flags %" PRIu32 " is not supported: it is reserved and must be 0", api, flags);
        return ACL_ERROR_FEATURE_UNSUPPORTED;
    }
    REQUIRE_DEVICE(api, dev);
    if (peerDeviceId == dev) {
        emu_error("%s: peerDeviceId %" PRId32 " is the current device", api, peerDeviceId);
        return ACL_ERROR_INVALID_PARAM;
    }
    RETURN_IF_ERROR(check_device_id(api, "peerDeviceId", peerDeviceId));
    return ACL_SUCCESS;
}

/* aclrtDeviceGetBareTgid: the calling process's id (same doc). */
EMU_EXPORT aclError aclrtDeviceGetBareTgid(int32_t *pid)
{
    static const char api[] = "aclrtDeviceGetBareTgid";
    ENTER_WITH_ARG(api, pid, "pid");
    *pid = (int32_t)getpid();
    return ACL_SUCCESS;
}

/* aclrtProcessReport (acl_rt.h): the callbacks of aclrtSubscribeReport, which the emulator
 * does not offer: nothing is ever pending, so a wait of `timeout` ms finds nothing. */
EMU_EXPORT aclError aclrtProcessReport(int32_t timeout)
{
    static const char api[] = "aclrtProcessReport";
    ENTER(api);
    if (timeout < -1) {
        emu_error("%s: timeout %" PRId32 " is invalid: -1 or a value >= 0 in milliseconds", api, timeout);
        return ACL_ERROR_INVALID_PARAM;
    }
    return rt_failed(ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
}

/* ---- out of scope: virtual memory, IPC, kernel binaries, dumps ---- */

EMU_EXPORT aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr,
                                           uint64_t flags)
{
    ENTER("aclrtReserveMemAddress");
    return unsupported("aclrtReserveMemAddress", "virtual memory management");
}

EMU_EXPORT aclError aclrtReleaseMemAddress(void *virPtr)
{
    ENTER("aclrtReleaseMemAddress");
    return unsupported("aclrtReleaseMemAddress", "virtual memory management");
}

EMU_EXPORT aclError aclrtMallocPhysical(void **handle, size_t size, const void *prop, uint64_t flags)
{
    ENTER("aclrtMallocPhysical");
    return unsupported("aclrtMallocPhysical", "virtual memory management");
}

EMU_EXPORT aclError aclrtFreePhysical(void *handle)
{
    ENTER("aclrtFreePhysical");
    return unsupported("aclrtFreePhysical", "virtual memory management");
}

EMU_EXPORT aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, void *handle, uint64_t flags)
{
    ENTER("aclrtMapMem");
    return unsupported("aclrtMapMem", "virtual memory management");
}

EMU_EXPORT aclError aclrtUnmapMem(void *virPtr)
{
    ENTER("aclrtUnmapMem");
    return unsupported("aclrtUnmapMem", "virtual memory management");
}

EMU_EXPORT aclError aclrtMemExportToShareableHandle(void *handle, int32_t handleType, uint64_t flags,
                                                    uint64_t *shareableHandle)
{
    ENTER("aclrtMemExportToShareableHandle");
    return unsupported("aclrtMemExportToShareableHandle", "memory sharing between processes (IPC)");
}

EMU_EXPORT aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId, void **handle)
{
    ENTER("aclrtMemImportFromShareableHandle");
    return unsupported("aclrtMemImportFromShareableHandle", "memory sharing between processes (IPC)");
}

EMU_EXPORT aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum)
{
    ENTER("aclrtMemSetPidToShareableHandle");
    return unsupported("aclrtMemSetPidToShareableHandle", "memory sharing between processes (IPC)");
}

EMU_EXPORT aclError aclrtBinaryLoadFromData(const void *data, size_t length, const void *options, void **binHandle)
{
    ENTER("aclrtBinaryLoadFromData");
    return unsupported("aclrtBinaryLoadFromData", "loading a device kernel binary");
}

EMU_EXPORT aclError aclrtBinaryGetFunction(const void *binHandle, const char *kernelName, void **funcHandle)
{
    ENTER("aclrtBinaryGetFunction");
    return unsupported("aclrtBinaryGetFunction", "loading a device kernel binary");
}

EMU_EXPORT aclError aclrtGetFunctionAddr(void *funcHandle, void **aicAddr, void **aivAddr)
{
    ENTER("aclrtGetFunctionAddr");
    return unsupported("aclrtGetFunctionAddr", "loading a device kernel binary");
}

/* Dumps of operator data (acl_rt.h aclmdlInitDump, aclmdlSetDump, aclmdlFinalizeDump;
 * docs/zh/api_ref/18_dump_configuration.md): the only calls that need aclInit in effect
 * (hicann/runtime src/acl/aclrt_impl/toolchain/dump.cpp: GetAclInitFlag first, else
 * ACL_ERROR_UNINITIALIZE), then out of scope. */
static aclError require_acl_init(const char *api)
{
    LOCK();
    bool inited = g_inited;
    UNLOCK();
    if (inited)
        return ACL_SUCCESS;
    report_uninitialized(api);
    return ACL_ERROR_UNINITIALIZE;
}

EMU_EXPORT aclError aclmdlInitDump(void)
{
    ENTER("aclmdlInitDump");
    RETURN_IF_ERROR(require_acl_init("aclmdlInitDump"));
    return unsupported("aclmdlInitDump", "dumping operator data");
}

EMU_EXPORT aclError aclmdlSetDump(const char *dumpCfgPath)
{
    ENTER("aclmdlSetDump");
    RETURN_IF_ERROR(require_acl_init("aclmdlSetDump"));
    return unsupported("aclmdlSetDump", "dumping operator data");
}

EMU_EXPORT aclError aclmdlFinalizeDump(void)
{
    ENTER("aclmdlFinalizeDump");
    RETURN_IF_ERROR(require_acl_init("aclmdlFinalizeDump"));
    return unsupported("aclmdlFinalizeDump", "dumping operator data");
}

/* The rt* kernel registration and launch of CANN's libruntime (torch_npu's MLIR kernels;
 * rtError_t as in hacl_rt.h, whose RT_ERROR_FEATURE_NOT_SUPPORT the ACL code 207000
 * stands for). */
EMU_EXPORT int32_t rtDevBinaryRegister(const void *bin, void **handle)
{
    return unsupported("rtDevBinaryRegister", "registering a device kernel binary");
}

EMU_EXPORT int32_t rtFunctionRegister(void *binHandle, const void *stubFunc, const char *stubName,
                                      const void *devFunc, uint32_t funcMode)
{
    return unsupported("rtFunctionRegister", "registering a device kernel");
}

EMU_EXPORT int32_t rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args, uint32_t argsSize,
                                  void *smDesc, void *stream)
{
    return unsupported("rtKernelLaunch", "launching a registered device kernel");
}

EMU_EXPORT int32_t rtGetC2cCtrlAddr(uint64_t *addr, uint32_t *len)
{
    return unsupported("rtGetC2cCtrlAddr", "the FFTS control address");
}

/* ---- tensor descriptions, data buffers, operator attributes (acl_base.h, acl_op.h) ---- */

struct aclTensorDesc {
    int32_t dtype, format, placement;
    size_t n_dims;
    int64_t *dims;
    char *name;
};

struct aclDataBuffer {
    void *data;
    size_t size;
};

struct aclopAttr {
    size_t n_set; /* attributes set: the emulator compiles no aclop operator to use them */
};

static aclError set_shape(aclTensorDesc *d, int numDims, const int64_t *dims)
{
    int64_t *copy = NULL;
    if (numDims > 0) {
        copy = malloc((size_t)numDims * sizeof *copy);
        if (!copy)
            return ACL_ERROR_BAD_ALLOC;
        memcpy(copy, dims, (size_t)numDims * sizeof *copy);
    }
    free(d->dims);
    d->dims = copy;
    d->n_dims = numDims > 0 ? (size_t)numDims : 0;
    return ACL_SUCCESS;
}

/* aclCreateTensorDesc: NULL (with a message) for a negative numDims or dims missing. */
EMU_EXPORT aclTensorDesc *aclCreateTensorDesc(int32_t dataType, int numDims, const int64_t *dims, int32_t format)
{
    if (numDims < 0 || (numDims > 0 && !dims)) {
        emu_error("aclCreateTensorDesc: numDims %d %s", numDims, numDims < 0 ? "is negative" : "with dims NULL");
        return NULL;
    }
    aclTensorDesc *d = calloc(1, sizeof *d);
    if (!d || set_shape(d, numDims, dims)) {
        free(d);
        emu_error("aclCreateTensorDesc: out of host memory");
        return NULL;
    }
    d->dtype = dataType;
    d->format = format;
    return d;
}

EMU_EXPORT void aclDestroyTensorDesc(const aclTensorDesc *desc)
{
    if (!desc)
        return;
    aclTensorDesc *d = (aclTensorDesc *)desc;
    free(d->dims);
    free(d->name);
    free(d);
}

EMU_EXPORT int32_t aclGetTensorDescType(const aclTensorDesc *desc)
{
    return desc ? desc->dtype : ACL_DT_UNDEFINED;
}

EMU_EXPORT int32_t aclGetTensorDescFormat(const aclTensorDesc *desc)
{
    return desc ? desc->format : ACL_FORMAT_UNDEFINED;
}

EMU_EXPORT size_t aclGetTensorDescNumDims(const aclTensorDesc *desc)
{
    return desc ? desc->n_dims : 0;
}

EMU_EXPORT aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize)
{
    static const char api[] = "aclGetTensorDescDimV2";
    REQUIRE_ARG(api, desc, "desc");
    REQUIRE_ARG(api, dimSize, "dimSize");
    if (index >= desc->n_dims) {
        emu_error("%s: index %zu is out of range: the description has %zu dimensions", api, index, desc->n_dims);
        return ACL_ERROR_INVALID_PARAM;
    }
    *dimSize = desc->dims[index];
    return ACL_SUCCESS;
}

EMU_EXPORT void aclSetTensorDescName(aclTensorDesc *desc, const char *name)
{
    if (!desc)
        return;
    free(desc->name);
    desc->name = name ? strdup(name) : NULL;
}

EMU_EXPORT aclError aclSetTensorFormat(aclTensorDesc *desc, int32_t format)
{
    REQUIRE_ARG("aclSetTensorFormat", desc, "desc");
    desc->format = format;
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const int64_t *dims)
{
    static const char api[] = "aclSetTensorShape";
    REQUIRE_ARG(api, desc, "desc");
    if (numDims < 0 || (numDims > 0 && !dims)) {
        emu_error("%s: numDims %d %s", api, numDims, numDims < 0 ? "is negative" : "with dims NULL");
        return ACL_ERROR_INVALID_PARAM;
    }
    return set_shape(desc, numDims, dims);
}

EMU_EXPORT aclError aclSetTensorPlaceMent(aclTensorDesc *desc, int32_t memType)
{
    static const char api[] = "aclSetTensorPlaceMent";
    REQUIRE_ARG(api, desc, "desc");
    if (memType < EMU_MEMTYPE_DEVICE || memType > EMU_MEMTYPE_HOST_COMPILE_INDEPENDENT) {
        emu_error("%s: memType %" PRId32 " is not an aclMemType (0 to 2)", api, memType);
        return ACL_ERROR_INVALID_PARAM;
    }
    desc->placement = memType;
    return ACL_SUCCESS;
}

EMU_EXPORT aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
    aclDataBuffer *b = malloc(sizeof *b);
    if (!b) {
        emu_error("aclCreateDataBuffer: out of host memory");
        return NULL;
    }
    b->data = data;
    b->size = size;
    return b;
}

EMU_EXPORT aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)
{
    REQUIRE_ARG("aclDestroyDataBuffer", dataBuffer, "dataBuffer");
    free((void *)dataBuffer);
    return ACL_SUCCESS;
}

EMU_EXPORT void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer)
{
    return dataBuffer ? dataBuffer->data : NULL;
}

EMU_EXPORT size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer)
{
    return dataBuffer ? dataBuffer->size : 0;
}

/* aclDataTypeSize: the sizes of hicann/runtime 681ef7610 src/acl/aclrt_impl/data_buffer.cpp
 * (aclDataTypeSizeImpl): the sub-byte types count one byte, the string and undefined types
 * none, and the types it does not list (ACL_FLOAT6_*, ACL_FLOAT4_*) fall to its default of 8. */
EMU_EXPORT size_t aclDataTypeSize(aclDataType dataType)
{
    switch (dataType) {
    case ACL_STRING:
    case ACL_DT_UNDEFINED:
        return 0;
    case ACL_UINT1:
    case ACL_INT4:
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0:
        return 1;
    case ACL_FLOAT16:
    case ACL_INT16:
    case ACL_UINT16:
    case ACL_BF16:
        return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
        return 4;
    case ACL_COMPLEX128:
        return 16;
    default: /* ACL_INT64, ACL_UINT64, ACL_DOUBLE, ACL_COMPLEX64 and the unlisted types */
        return 8;
    }
}

EMU_EXPORT aclopAttr *aclopCreateAttr(void)
{
    aclopAttr *a = calloc(1, sizeof *a);
    if (!a)
        emu_error("aclopCreateAttr: out of host memory");
    return a;
}

EMU_EXPORT void aclopDestroyAttr(const aclopAttr *attr)
{
    free((void *)attr);
}

/* One attribute set: attr and its name are required. */
static aclError set_attr(const char *api, aclopAttr *attr, const char *name)
{
    REQUIRE_ARG(api, attr, "attr");
    REQUIRE_ARG(api, name, "attrName");
    attr->n_set++;
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue)
{
    return set_attr("aclopSetAttrBool", attr, attrName);
}

EMU_EXPORT aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue)
{
    return set_attr("aclopSetAttrInt", attr, attrName);
}

EMU_EXPORT aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue)
{
    return set_attr("aclopSetAttrFloat", attr, attrName);
}

EMU_EXPORT aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue)
{
    return set_attr("aclopSetAttrString", attr, attrName);
}

EMU_EXPORT aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName, int32_t attrValue)
{
    return set_attr("aclopSetAttrDataType", attr, attrName);
}

EMU_EXPORT aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName, int numValues,
                                         const uint8_t *values)
{
    return set_attr("aclopSetAttrListBool", attr, attrName);
}

EMU_EXPORT aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues,
                                        const int64_t *values)
{
    return set_attr("aclopSetAttrListInt", attr, attrName);
}

EMU_EXPORT aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName, int numValues,
                                          const float *values)
{
    return set_attr("aclopSetAttrListFloat", attr, attrName);
}

EMU_EXPORT aclError aclopSetAttrListListInt(aclopAttr *attr, const char *attrName, int numLists,
                                            const int *numValues, const int64_t *const values[])
{
    return set_attr("aclopSetAttrListListInt", attr, attrName);
}

/* ---- logging and profiling hooks: nothing to observe on a host ---- */

/* aclAppLog (acl_base_rt.h): an application's line for CANN's log; errors go to stderr. */
EMU_EXPORT void aclAppLog(int32_t logLevel, const char *func, const char *file, uint32_t line, const char *fmt, ...)
{
    if (logLevel < EMU_LOG_ERROR || !fmt)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[ERROR] %s:%" PRIu32 " %s: ", file ? file : "?", line, func ? func : "?");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* The profiler's reporting functions (prof_api.h): no profiler runs, reports are dropped. */
EMU_EXPORT int32_t MsprofRegisterCallback(uint32_t moduleId, void *handle)
{
    return 0;
}

EMU_EXPORT int32_t MsprofReportApi(uint32_t agingFlag, const void *api)
{
    return 0;
}

EMU_EXPORT int32_t MsprofReportCompactInfo(uint32_t agingFlag, const void *data, uint32_t length)
{
    return 0;
}

EMU_EXPORT int32_t MsprofReportAdditionalInfo(uint32_t agingFlag, const void *data, uint32_t length)
{
    return 0;
}

/* A string's id in the reports: its 64-bit FNV-1a hash, the same for the same text. */
EMU_EXPORT uint64_t MsprofGetHashId(const char *hashInfo, size_t length)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; hashInfo && i < length; i++)
        h = (h ^ (uint8_t)hashInfo[i]) * 0x100000001b3ULL;
    return h;
}

/* The profiler's clock: CLOCK_MONOTONIC in nanoseconds. */
EMU_EXPORT uint64_t MsprofSysCycleTime(void)
{
    return now_ns();
}

/* ---- package versions ---- */

/* aclsysGetVersionStr's buffer (hicann/runtime include/external/acl/acl_rt.h
 * ACL_PKG_VERSION_MAX_SIZE). */
#define EMU_PKG_VERSION_MAX_SIZE 128

/*
 * The version of package name, as hicann/runtime 681ef7610 src/acl/aclrt_impl/acl.cpp
 * (GetVersionByPkgName, GetVersionStringInternal) reads it: the first line of
 * $ASCEND_HOME_PATH/share/info/<name>/version.info that holds "Version=", what follows the key,
 * trimmed. ACL_ERROR_INVALID_FILE when ASCEND_HOME_PATH is unset or not a folder, the file is
 * missing or holds no non-empty version. The driver's and firmware's packages, which CANN finds
 * through the driver's install file, are no part of the emulated tree and are missing here.
 */
static aclError read_pkg_version(const char *api, const char *name, char *out, size_t cap, bool quiet)
{
    const char *home = getenv("ASCEND_HOME_PATH");
    char *real = home ? realpath(home, NULL) : NULL;
    if (!real) {
        emu_error("%s: ASCEND_HOME_PATH is %s", api, home ? "not an existing folder" : "not set");
        return ACL_ERROR_INVALID_FILE;
    }
    char *path = NULL;
    int n = asprintf(&path, "%s/share/info/%s/version.info", real, name);
    free(real);
    if (n < 0 || !path)
        return ACL_ERROR_INVALID_FILE;
    FILE *f = fopen(path, "r");
    if (!f) {
        if (!quiet)
            emu_error("%s: no version file %s: is package %s installed?", api, path, name);
        free(path);
        return ACL_ERROR_INVALID_FILE;
    }
    static const char key[] = "Version=";
    char line[1024];
    bool found = false;
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, key);
        if (!at)
            continue;
        const char *v = at + sizeof key - 1;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t len = strlen(v);
        while (len && (v[len - 1] == '\n' || v[len - 1] == '\r' || v[len - 1] == ' ' || v[len - 1] == '\t'))
            len--;
        if (len >= cap) {
            fclose(f);
            emu_error("%s: the version in %s is %zu characters, more than the %zu the buffer holds", api, path,
                      len, cap - 1);
            free(path);
            return ACL_ERROR_INTERNAL_ERROR;
        }
        memcpy(out, v, len);
        out[len] = '\0';
        found = len > 0;
        break;
    }
    fclose(f);
    if (!found)
        emu_error("%s: %s holds no \"Version=\" line with a version", api, path);
    free(path);
    return found ? ACL_SUCCESS : ACL_ERROR_INVALID_FILE;
}

/*
 * aclsysGetVersionStr (hicann/runtime acl.cpp aclsysGetVersionStrImpl, GetPkgVersionContent):
 * versionStr (ACL_PKG_VERSION_MAX_SIZE bytes) then pkgName must not be NULL; a name with '-' is
 * also looked for with '_' in their place, and one with '_' with '-', the first name's failure
 * then staying silent. Needs no aclInit.
 */
EMU_EXPORT aclError aclsysGetVersionStr(char *pkgName, char *versionStr)
{
    static const char api[] = "aclsysGetVersionStr";
    EMU_RETURN_IF_FAULT(api);
    REQUIRE_ARG(api, versionStr, "versionStr");
    REQUIRE_ARG(api, pkgName, "pkgName");
    char *other = strdup(pkgName);
    if (!other)
        return ACL_ERROR_BAD_ALLOC;
    bool alternative = false;
    const char from = strchr(pkgName, '-') ? '-' : '_', to = from == '-' ? '_' : '-';
    for (char *c = other; *c; c++)
        if (*c == from) {
            *c = to;
            alternative = true;
        }
    aclError rc = read_pkg_version(api, pkgName, versionStr, EMU_PKG_VERSION_MAX_SIZE, alternative);
    if (rc != ACL_SUCCESS && alternative)
        rc = read_pkg_version(api, other, versionStr, EMU_PKG_VERSION_MAX_SIZE, false);
    free(other);
    return rc;
}

/*
 * aclsysGetCANNVersion, deprecated (hicann/runtime 681ef7610 src/acl/aclrt_impl/acl.cpp,
 * aclsysGetCANNVersionImpl, GetCANNVersionInternal, FillinPackageVersion, ConvertVersion):
 * version NULL is ACL_ERROR_INVALID_PARAM; a name outside aclCANNPackageName too. The package
 * folders are kMapToPkgName's (CANN and RUNTIME: runtime; COMPILER: bisheng-compiler; HCCL:
 * hccl; TOOLKIT: oam-tools; OPP and OPP_KERNEL: ops-legacy), read as aclsysGetVersionStr reads
 * them; the driver's, which CANN finds through /etc/ascend_install.info, is no part of the
 * emulated tree. The version has what follows its first '-' joined to it by a '.' with that
 * part's own dots removed ("8.5.0-beta.1" is "8.5.0.beta1"), and splits at '.' into major,
 * minor, release and patch, missing ones "0"; fewer than two parts, or an empty part, is
 * ACL_ERROR_INVALID_FILE.
 */
EMU_EXPORT aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version)
{
    static const char api[] = "aclsysGetCANNVersion";
    EMU_RETURN_IF_FAULT(api);
    REQUIRE_ARG(api, version, "version");
    static const char *const folders[] = {"runtime", "runtime", "bisheng-compiler", "hccl", "oam-tools",
                                          "ops-legacy", "ops-legacy"};
    if ((int)name == ACL_PKG_NAME_DRIVER) {
        emu_error("%s: the driver package's version is not known: the emulated tree has no driver package "
                  "(CANN reads it through /etc/ascend_install.info)", api);
        return ACL_ERROR_INVALID_FILE;
    }
    if ((int)name < ACL_PKG_NAME_CANN || (int)name >= ACL_PKG_NAME_DRIVER) {
        emu_error("%s: name %d is not an aclCANNPackageName (0 to 7)", api, (int)name);
        return ACL_ERROR_INVALID_PARAM;
    }
    char text[EMU_PKG_VERSION_MAX_SIZE];
    const char *folder = folders[name];
    aclError rc = read_pkg_version(api, folder, text, sizeof text, strchr(folder, '-') != NULL);
    if (rc != ACL_SUCCESS && strchr(folder, '-')) {
        char other[32];
        snprintf(other, sizeof other, "%s", folder);
        for (char *c = other; *c; c++)
            if (*c == '-')
                *c = '_';
        rc = read_pkg_version(api, other, text, sizeof text, false);
    }
    if (rc != ACL_SUCCESS)
        return rc == ACL_ERROR_INTERNAL_ERROR ? ACL_ERROR_INVALID_FILE : rc;
    /* "<prefix>-<suffix>" becomes "<prefix>.<suffix without dots>" */
    char converted[EMU_PKG_VERSION_MAX_SIZE];
    char *dash = strchr(text, '-');
    size_t used = 0;
    for (const char *c = text; *c && used + 1 < sizeof converted; c++) {
        if (c == dash)
            converted[used++] = '.';
        else if (!(dash && c > dash && *c == '.'))
            converted[used++] = *c;
    }
    converted[used] = '\0';
    memset(version, 0, sizeof *version);
    char *parts[4] = {version->majorVersion, version->minorVersion, version->releaseVersion,
                      version->patchVersion};
    size_t count = 0;
    bool empty = false;
    for (const char *start = converted;; count++) {
        const char *stop = strchr(start, '.');
        size_t len = stop ? (size_t)(stop - start) : strlen(start);
        empty = empty || (len == 0 && count < 4);
        if (count < 4)
            snprintf(parts[count], ACL_PKG_VERSION_PARTS_MAX_SIZE, "%.*s", (int)len, start);
        if (!stop)
            break;
        start = stop + 1;
    }
    count++;
    for (size_t i = count; i < 4; i++)
        strcpy(parts[i], "0");
    snprintf(version->version, sizeof version->version, "%s", converted);
    if (count < 2 || empty) {
        memset(version, 0, sizeof *version);
        emu_error("%s: the %s package's version \"%s\" is not <major>.<minor>[.<release>[.<patch>]]", api, folder,
                  text);
        return ACL_ERROR_INVALID_FILE;
    }
    return ACL_SUCCESS;
}

/* ---- profiling step records ---- */

/*
 * aclprofCreateStepInfo / aclprofDestroyStepInfo (hicann/runtime 681ef7610
 * src/dfx/msprof/collector/dvvp/msprofiler/prof_acl_core.cpp; include/external/acl/acl_prof.h):
 * a host object with the step's start and end flags, cleared, and an index from a process-wide
 * count; NULL when it cannot be allocated. Destroying NULL is refused with a message and no
 * status (the function returns nothing). aclprofGetStepTimestamp, which would mark the step
 * on a stream for the profiler, is out of scope (rt_unsupported.c).
 */
typedef struct {
    bool start_flag;
    bool end_flag;
    uint32_t index_id;
} step_info;

static uint32_t g_step_index;

EMU_EXPORT void *aclprofCreateStepInfo(void)
{
    step_info *info = calloc(1, sizeof *info);
    if (!info) {
        emu_error("aclprofCreateStepInfo: no memory for a step record of %zu bytes", sizeof *info);
        return NULL;
    }
    LOCK();
    info->index_id = g_step_index++;
    UNLOCK();
    return info;
}

EMU_EXPORT void aclprofDestroyStepInfo(void *stepInfo)
{
    if (!stepInfo) {
        emu_error("aclprofDestroyStepInfo: stepInfo is NULL");
        return;
    }
    free(stepInfo);
}
