/*
 * The runtime's SoC and version queries, and the emulator's counters and statistics
 * (aclemuGetStats, aclemuGetDeviceStats, aclemuResetCounters).
 */
#include "rt_internal.h"

EMU_EXPORT const char *aclrtGetSocName(void)
{
    if (emu_fault("aclrtGetSocName"))
        return NULL;
    if (emu_runtime_ready("aclrtGetSocName"))
        return NULL;
    return g_soc;
}

EMU_EXPORT aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)
{
    static const char api[] = "aclrtGetVersion";
    /* Constants only, after aclFinalize too (acl_rt_impl_base.cpp, aclrtGetVersionImpl). */
    EMU_RETURN_IF_FAULT(api);
    REQUIRE_ARG(api, majorVersion, "majorVersion");
    REQUIRE_ARG(api, minorVersion, "minorVersion");
    REQUIRE_ARG(api, patchVersion, "patchVersion");
    *majorVersion = 1;
    *minorVersion = 0;
    *patchVersion = 0;
    return ACL_SUCCESS;
}

EMU_EXPORT const char *emu_soc_name(void)
{
    return g_soc;
}

EMU_EXPORT bool emu_soc_supports_bf16(void)
{
    return g_bf16;
}

EMU_EXPORT uint64_t emu_op_cache_epoch(void)
{
    return __atomic_load_n(&g_op_cache_epoch, __ATOMIC_ACQUIRE); /* every phase 1 asks: no lock */
}

EMU_EXPORT void emu_counter_add(emu_counter counter, int64_t delta)
{
    if ((int)counter < 0 || (int)counter >= EMU_COUNTER_COUNT)
        return;
    LOCK();
    g_counters[counter] += delta;
    UNLOCK();
}

EMU_EXPORT int32_t aclemuGetStats(aclemuStats *st)
{
    if (!st) {
        emu_error("aclemuGetStats: stats is NULL");
        return ACL_ERROR_INVALID_PARAM;
    }
    memset(st, 0, sizeof *st);
    LOCK();
    st->live_device_bytes = g_live_device_bytes;
    st->peak_device_bytes = g_peak_device_bytes;
    st->live_allocations = (int64_t)g_dev_mem.n;
    st->live_host_allocations = (int64_t)g_host_mem.n;
    st->live_tensors = g_counters[EMU_COUNTER_TENSORS];
    st->live_executors = g_counters[EMU_COUNTER_EXECUTORS];
    int64_t streams = 0, pending = 0, ctxs = 0;
    for (size_t i = 0; i < g_streams.n; i++) {
        stream *s = g_streams.items[i];
        if (!s->is_default)
            streams++;
        pending += (int64_t)s->n_pending;
    }
    for (size_t i = 0; i < g_ctxs.n; i++)
        if (!((context *)g_ctxs.items[i])->is_default)
            ctxs++;
    st->live_streams = streams;
    st->live_events = (int64_t)g_events.n;
    st->live_contexts = ctxs;
    st->pending_tasks = pending;
    st->h2d_bytes = g_h2d;
    st->d2h_bytes = g_d2h;
    st->d2d_bytes = g_d2d;
    st->malloc_calls = g_malloc_calls;
    st->kernel_launches = g_counters[EMU_COUNTER_LAUNCHES];
    st->kernels_executed = g_counters[EMU_COUNTER_KERNELS_RUN];
    st->quarantined_allocations = (int64_t)g_quarantine.n;
    st->quarantined_bytes = (int64_t)g_quarantine_bytes;
    st->live_scalars = g_counters[EMU_COUNTER_SCALARS];
    st->live_int_arrays = g_counters[EMU_COUNTER_INT_ARRAYS];
    st->live_float_arrays = g_counters[EMU_COUNTER_FLOAT_ARRAYS];
    st->live_bool_arrays = g_counters[EMU_COUNTER_BOOL_ARRAYS];
    st->live_tensor_lists = g_counters[EMU_COUNTER_TENSOR_LISTS];
    st->cached_executors = g_counters[EMU_COUNTER_CACHED_EXECUTORS];
    st->memcpy_calls = __atomic_load_n(&g_memcpy_calls, __ATOMIC_RELAXED);
    st->sync_calls = __atomic_load_n(&g_sync_calls, __ATOMIC_RELAXED);
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT void emu_device_kernel_run(int32_t device)
{
    if (device < 0 || device >= EMU_MAX_DEVICES)
        return;
    LOCK();
    g_devices[device].kernels++;
    UNLOCK();
}

EMU_EXPORT int32_t aclemuGetDeviceStats(int32_t deviceId, aclemuDeviceStats *st)
{
    if (!st) {
        emu_error("aclemuGetDeviceStats: stats is NULL");
        return ACL_ERROR_INVALID_PARAM;
    }
    LOCK();
    if (deviceId < 0 || deviceId >= g_dev_count) {
        UNLOCK();
        emu_error("aclemuGetDeviceStats: deviceId %d is not a visible device", (int)deviceId);
        return ACL_ERROR_INVALID_PARAM;
    }
    const device_state *d = &g_devices[deviceId];
    st->h2d_bytes = d->h2d;
    st->d2h_bytes = d->d2h;
    st->kernels_executed = d->kernels;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT int32_t aclemuResetCounters(void)
{
    LOCK();
    for (int i = 0; i < EMU_MAX_DEVICES; i++)
        g_devices[i].h2d = g_devices[i].d2h = g_devices[i].kernels = 0;
    g_h2d = g_d2h = g_d2d = 0;
    g_malloc_calls = 0;
    __atomic_store_n(&g_memcpy_calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_sync_calls, 0, __ATOMIC_RELAXED);
    g_counters[EMU_COUNTER_LAUNCHES] = 0;
    g_counters[EMU_COUNTER_KERNELS_RUN] = 0;
    g_counters[EMU_COUNTER_CACHED_EXECUTORS] = 0;
    g_peak_device_bytes = g_live_device_bytes;
    UNLOCK();
    return ACL_SUCCESS;
}
