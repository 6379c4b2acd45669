/*
 * The runtime's devices and contexts: aclFinalize, aclrtSetDevice / aclrtResetDevice, the device
 * count and id mappings (ASCEND_RT_VISIBLE_DEVICES), aclrtSynchronizeDevice and the context API.
 */
#include "rt_internal.h"

/* Release everything of device d (contexts, streams, events, memory). Lock held. */
static void device_release(int32_t d)
{
    for (size_t i = g_ctxs.n; i-- > 0;) {
        context *c = g_ctxs.items[i];
        if (c->device == d)
            ctx_free(c);
    }
    for (size_t i = g_events.n; i-- > 0;) {
        event *e = g_events.items[i];
        if (e->device == d)
            handle_free(&g_events, e);
    }
    for (size_t i = g_dev_mem.n; i-- > 0;)
        if (g_dev_mem.items[i].device == d)
            dev_block_retire_at(i);
    g_devices[d].refcount = 0;
    g_devices[d].default_ctx = NULL;
}

/*
 * Lock held: de-initialise ACL for everyone in the process. As CANN's aclFinalizeInternal
 * (hicann/runtime src/acl/aclrt_impl/acl.cpp) this ends ACL, not the runtime: the devices set,
 * their contexts, streams, events and memory stay, pending work stays queued, and the runtime
 * calls go on working; aclrtResetDevice releases a device. What ends is the count of aclInit
 * (aclFinalizeReference then has none to give back, the dump API returns
 * ACL_ERROR_UNINITIALIZE) and the aclnn executor cache's epoch (ACLNN_EMU_OP_CACHE).
 */
static void finalize_all(void)
{
    g_inited = false;
    g_finalized = true;
    g_init_refs = 0;
    __atomic_store_n(&g_op_cache_epoch, 0, __ATOMIC_RELEASE);
}

EMU_EXPORT aclError aclFinalize(void)
{
    EMU_RETURN_IF_FAULT("aclFinalize");
    LOCK();
    /* Only a repeat is refused: aclFinalizeImpl checks aclFinalizeFlag, which aclInit clears
     * and which starts false, so the first aclFinalize of a process succeeds even before any
     * aclInit (hicann/runtime src/acl/aclrt_impl/acl.cpp). */
    if (g_finalized) {
        UNLOCK();
        emu_error("aclFinalize: repeated finalization: aclFinalize was already called and aclInit "
                  "not since");
        return ACL_ERROR_REPEAT_FINALIZE;
    }
    finalize_all(); /* whatever the count: CANN's aclFinalize clears it */
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclFinalizeReference(uint64_t *refCount)
{
    EMU_RETURN_IF_FAULT("aclFinalizeReference");
    LOCK();
    if (!g_inited) {
        if (refCount)
            *refCount = 0;
        UNLOCK();
        emu_error("aclFinalizeReference: ACL is not initialized (aclInit was not called, or every "
                  "reference was already finalized, or aclFinalize ended them all)");
        return ACL_ERROR_REPEAT_FINALIZE;
    }
    if (--g_init_refs == 0)
        finalize_all();
    if (refCount)
        *refCount = g_init_refs;
    UNLOCK();
    return ACL_SUCCESS;
}

/* Lock held. */
static bool check_device_id(const char *api, int32_t id)
{
    if (id >= 0 && id < g_dev_count)
        return true;
    if (g_visibility == VISIBLE_UNSET)
        emu_error("%s: deviceId %" PRId32 " is invalid: the emulator has %" PRId32
                  " device(s) (ACLNN_EMU_DEVICE_COUNT), valid ids are 0 to %" PRId32,
                  api, id, g_dev_count, g_dev_count - 1);
    else if (g_dev_count == 0)
        emu_error("%s: deviceId %" PRId32 " is invalid: ASCEND_RT_VISIBLE_DEVICES='%s' makes no "
                  "device visible (aclrtGetDeviceCount says why)", api, id, g_visible_value);
    else
        emu_error("%s: deviceId %" PRId32 " is invalid: ASCEND_RT_VISIBLE_DEVICES='%s' makes %" PRId32
                  " of the %" PRId32 " device(s) visible, as ids 0 to %" PRId32, api, id,
                  g_visible_value, g_dev_count, g_phys_count, g_dev_count - 1);
    return false;
}

/* The state of device id with the lock taken, or NULL (unlocked, message recorded) for an invalid id. */
static device_state *lock_device(const char *api, int32_t id)
{
    LOCK();
    if (!check_device_id(api, id)) {
        UNLOCK();
        return NULL;
    }
    return &g_devices[id];
}

EMU_EXPORT aclError aclrtSetDevice(int32_t deviceId)
{
    static const char api[] = "aclrtSetDevice";
    ENTER(api);
    device_state *d = lock_device(api, deviceId);
    if (!d)
        return rt_failed(ACL_ERROR_RT_INVALID_DEVICEID);
    if (!d->default_ctx) {
        d->default_ctx = ctx_new(deviceId, true);
        if (!d->default_ctx) {
            UNLOCK();
            emu_error("%s: out of host memory creating the default context of device %" PRId32, api, deviceId);
            return rt_failed(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL);
        }
    }
    d->refcount++;
    set_current(d->default_ctx);
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtResetDevice(int32_t deviceId)
{
    static const char api[] = "aclrtResetDevice";
    ENTER(api);
    device_state *d = lock_device(api, deviceId);
    if (!d)
        return rt_failed(ACL_ERROR_RT_INVALID_DEVICEID);
    if (d->refcount <= 0) {
        UNLOCK();
        emu_error("%s: device %" PRId32 " is not set: aclrtSetDevice was not called for it, "
                  "or every aclrtSetDevice was already matched by aclrtResetDevice", api, deviceId);
        return rt_failed(ACL_ERROR_RT_INVALID_DEVICEID);
    }
    if (--d->refcount == 0)
        device_release(deviceId);
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtGetDevice(int32_t *deviceId)
{
    static const char api[] = "aclrtGetDevice";
    ENTER_WITH_ARG(api, deviceId, "deviceId");
    REQUIRE_DEVICE(api, dev);
    *deviceId = dev;
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtGetDeviceCount(uint32_t *count)
{
    static const char api[] = "aclrtGetDeviceCount";
    ENTER_WITH_ARG(api, count, "count");
    LOCK();
    visibility vis = g_visibility;
    int32_t visible = g_dev_count, physical = g_phys_count;
    char value[sizeof g_visible_value];
    memcpy(value, g_visible_value, sizeof value);
    UNLOCK();
    if (vis == VISIBLE_UNSET || vis == VISIBLE_OK) {
        *count = (uint32_t)visible;
        return ACL_SUCCESS;
    }
    /* CANN's text is its error EE2002 (hicann/runtime src/runtime/api/impl/api_impl.cc,
     * ApiImpl::GetDeviceCount; docs/en/error_code_ref/RTS-Errors/EE2002-*.md); the status is
     * RT_ERROR_DRV_NO_DEVICE, i.e. ACL_ERROR_RT_NO_DEVICE (src/runtime/core/src/common/
     * errcode_manage.cc). */
    if (vis == VISIBLE_NO_DEVICE)
        emu_error("%s: Value '%s' for environment variable ASCEND_RT_VISIBLE_DEVICES is invalid. "
                  "Expected value: [0, %" PRId32 "). It names no device: it must start with a "
                  "device id below %" PRId32 ", the number of devices (ACLNN_EMU_DEVICE_COUNT); "
                  "ids are comma-separated, in ascending order, and reading stops at the first "
                  "other character or id out of range", api, value, physical, physical);
    else
        emu_error("%s: Value '%s' for environment variable ASCEND_RT_VISIBLE_DEVICES is invalid. "
                  "Expected value: %s", api, value,
                  vis == VISIBLE_DUPLICATED ? "Cannot be duplicated"
                                            : "configured in ascending order");
    return rt_failed(ACL_ERROR_RT_NO_DEVICE);
}

/*
 * The id mappings (CANN >= 8.5). hicann/runtime src/acl/aclrt_impl/device.cpp checks the
 * output pointer (ACL_ERROR_INVALID_PARAM), then src/runtime/api/api_c_device.cc rejects a
 * negative id with RT_ERROR_INVALID_VALUE (ACL_ERROR_RT_PARAM_INVALID), then api_error.cc /
 * runtime.cc (ChgUserDevIdToDeviceId, GetUserDevIdByDeviceId, CheckDeviceIdIsValid) an id out
 * of range or not visible with RT_ERROR_DEVICE_ID (ACL_ERROR_RT_INVALID_DEVICEID).
 * Error code choice: a physical id with no device, which CANN leaves to the driver
 * (rtGetDeviceIndexByPhyId / rtGetDevicePhyIdByIndex), also gets ACL_ERROR_RT_INVALID_DEVICEID.
 */
static aclError id_map_check(const char *api, int32_t id, const char *name, const void *out,
                             const char *out_name)
{
    REQUIRE_ARG(api, out, out_name);
    if (id < 0) {
        emu_error("%s: %s %" PRId32 " is invalid: it must be greater than or equal to 0", api, name, id);
        return rt_failed(ACL_ERROR_RT_PARAM_INVALID);
    }
    return ACL_SUCCESS;
}

/* Lock held: the user id of logical (= physical) id `logical`, or -1 with the error reported. */
static int32_t user_of_logical(const char *api, const char *name, int32_t logical)
{
    if (logical >= g_phys_count) {
        emu_error("%s: %s %" PRId32 " is invalid: the emulator has %" PRId32 " device(s) "
                  "(ACLNN_EMU_DEVICE_COUNT), ids 0 to %" PRId32, api, name, logical, g_phys_count,
                  g_phys_count - 1);
        return -1;
    }
    for (int32_t user = 0; user < g_dev_count; user++)
        if (g_visible_ids[user] == logical)
            return user;
    emu_error("%s: %s %" PRId32 " is not visible: ASCEND_RT_VISIBLE_DEVICES='%s'", api, name, logical,
              g_visible_value);
    return -1;
}

static aclError logical_of_user(const char *api, int32_t user, int32_t *out)
{
    LOCK();
    bool ok = check_device_id(api, user);
    if (ok)
        *out = g_visible_ids[user];
    UNLOCK();
    return ok ? ACL_SUCCESS : rt_failed(ACL_ERROR_RT_INVALID_DEVICEID);
}

static aclError user_of(const char *api, const char *name, int32_t logical, int32_t *out)
{
    LOCK();
    int32_t user = user_of_logical(api, name, logical);
    if (user >= 0)
        *out = user;
    UNLOCK();
    return user >= 0 ? ACL_SUCCESS : rt_failed(ACL_ERROR_RT_INVALID_DEVICEID);
}

EMU_EXPORT aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId)
{
    static const char api[] = "aclrtGetLogicDevIdByUserDevId";
    ENTER(api);
    RETURN_IF_ERROR(id_map_check(api, userDevid, "userDevid", logicDevId, "logicDevId"));
    return logical_of_user(api, userDevid, logicDevId);
}

EMU_EXPORT aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId, int32_t *const userDevid)
{
    static const char api[] = "aclrtGetUserDevIdByLogicDevId";
    ENTER(api);
    RETURN_IF_ERROR(id_map_check(api, logicDevId, "logicDevId", userDevid, "userDevid"));
    return user_of(api, "logicDevId", logicDevId, userDevid);
}

EMU_EXPORT aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId, int32_t *const logicDevId)
{
    static const char api[] = "aclrtGetLogicDevIdByPhyDevId";
    ENTER(api);
    RETURN_IF_ERROR(id_map_check(api, phyDevId, "phyDevId", logicDevId, "logicDevId"));
    return user_of(api, "phyDevId", phyDevId, logicDevId);
}

EMU_EXPORT aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId, int32_t *const phyDevId)
{
    static const char api[] = "aclrtGetPhyDevIdByLogicDevId";
    ENTER(api);
    RETURN_IF_ERROR(id_map_check(api, logicDevId, "logicDevId", phyDevId, "phyDevId"));
    return logical_of_user(api, logicDevId, phyDevId);
}

EMU_EXPORT aclError aclrtSynchronizeDevice(void)
{
    static const char api[] = "aclrtSynchronizeDevice";
    SYNC_ENTER(api, NULL, true, NULL);
    REQUIRE_DEVICE(api, dev);
    aclError first = ACL_SUCCESS;
    uint64_t end = 0;
    LOCK();
    /* What each stream of the device holds now: tasks run outside the lock, so the list of
       streams may change meanwhile, and work queued after this call began is not waited for. */
    size_t n = 0;
    struct { stream *s; uint64_t id, upto; } *marks = malloc((g_streams.n + 1) * sizeof *marks);
    if (!marks) {
        UNLOCK();
        emu_error("%s: out of host memory", api);
        return rt_failed(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL);
    }
    for (size_t i = 0; i < g_streams.n; i++) {
        stream *s = g_streams.items[i];
        if (s->device == dev) {
            marks[n].s = s;
            marks[n].id = s->id;
            marks[n++].upto = s->seq_enqueued;
        }
    }
    for (size_t i = 0; i < n; i++) {
        stream *s = marks[i].s;
        if (!stream_alive(s, marks[i].id))
            continue; /* destroyed meanwhile: its destruction ran its work */
        aclError rc = stream_run(s, marks[i].upto, api);
        if (rc == ACL_ERROR_RT_STREAM_ABORT) {
            /* A kernel was interrupted: the call stops, the other streams keep their work. */
            first = rc;
            break;
        }
        if (!rc && stream_alive(s, marks[i].id) && s->failed) {
            rc = s->failed;
            s->failed = ACL_SUCCESS;
        }
        if (rc && !first)
            first = rc;
        if (stream_alive(s, marks[i].id))
            end = max_u64(end, s->end_ns);
    }
    free(marks);
    bool link = g_link;
    UNLOCK();
    if (link)
        link_wait_until(end);
    return first;
}

EMU_EXPORT aclError aclrtCreateContext(aclrtContext *ctx, int32_t deviceId)
{
    static const char api[] = "aclrtCreateContext";
    ENTER_WITH_ARG(api, ctx, "context");
    LOCK();
    if (!check_device_id(api, deviceId)) {
        UNLOCK();
        return rt_failed(ACL_ERROR_RT_INVALID_DEVICEID);
    }
    context *c = ctx_new(deviceId, false);
    if (!c) {
        UNLOCK();
        emu_error("%s: out of host memory", api);
        return rt_failed(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL);
    }
    set_current(c);
    *ctx = c;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtDestroyContext(aclrtContext ctx)
{
    static const char api[] = "aclrtDestroyContext";
    ENTER(api);
    LOCK();
    context *c = ctx;
    aclError rc = check_live_handle(api, &g_ctxs, "context", ctx);
    if (rc == ACL_SUCCESS && c->is_default) {
        emu_error("%s: context %p is the default context of device %" PRId32
                  ": it cannot be destroyed, it is released by aclrtResetDevice", api, ctx, c->device);
        rc = rt_failed(ACL_ERROR_RT_PARAM_INVALID);
    }
    if (rc == ACL_SUCCESS)
        ctx_free(c);
    UNLOCK();
    return rc;
}

EMU_EXPORT aclError aclrtSetCurrentContext(aclrtContext ctx)
{
    static const char api[] = "aclrtSetCurrentContext";
    ENTER(api);
    LOCK();
    aclError rc = check_live_handle(api, &g_ctxs, "context", ctx);
    if (rc == ACL_SUCCESS)
        set_current(ctx);
    UNLOCK();
    return rc;
}

EMU_EXPORT aclError aclrtGetCurrentContext(aclrtContext *ctx)
{
    static const char api[] = "aclrtGetCurrentContext";
    ENTER_WITH_ARG(api, ctx, "context");
    REQUIRE_CONTEXT(api);
    LOCK();
    *ctx = current_ctx();
    UNLOCK();
    return ACL_SUCCESS;
}
