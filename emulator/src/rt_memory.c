/*
 * The runtime's memory API: aclrtMalloc / aclrtFree, aclrtMallocHost / aclrtFreeHost and
 * aclrtGetMemInfo, over the blocks of rt_blocks.c.
 */
#include "rt_internal.h"

#include <errno.h>
#include <sys/mman.h>

static bool valid_policy(int p)
{
    switch (p) {
    case ACL_MEM_MALLOC_HUGE_FIRST:
    case ACL_MEM_MALLOC_HUGE_ONLY:
    case ACL_MEM_MALLOC_NORMAL_ONLY:
    case ACL_MEM_MALLOC_HUGE_FIRST_P2P:
    case ACL_MEM_MALLOC_HUGE_ONLY_P2P:
    case ACL_MEM_MALLOC_NORMAL_ONLY_P2P:
    case ACL_MEM_MALLOC_HUGE1G_ONLY:
    case ACL_MEM_MALLOC_HUGE1G_ONLY_P2P:
    case ACL_MEM_TYPE_LOW_BAND_WIDTH:
    case ACL_MEM_TYPE_HIGH_BAND_WIDTH:
    case ACL_MEM_ACCESS_USER_SPACE_READONLY:
        return true;
    default:
        return false;
    }
}

/* Whether policy asks for huge pages first or only. */
static bool huge_policy(int p)
{
    switch (p) {
    case ACL_MEM_MALLOC_HUGE_FIRST:
    case ACL_MEM_MALLOC_HUGE_ONLY:
    case ACL_MEM_MALLOC_HUGE_FIRST_P2P:
    case ACL_MEM_MALLOC_HUGE_ONLY_P2P:
    case ACL_MEM_MALLOC_HUGE1G_ONLY:
    case ACL_MEM_MALLOC_HUGE1G_ONLY_P2P:
    case ACL_MEM_TYPE_LOW_BAND_WIDTH:
    case ACL_MEM_TYPE_HIGH_BAND_WIDTH:
        return true;
    default:
        return false;
    }
}

/* The argument checks aclrtMalloc and aclrtMallocHost share (ptr_name: their parameter's name). */
static aclError check_alloc_args(const char *api, void **ptr, const char *ptr_name, size_t size)
{
    if (!ptr) {
        emu_error("%s: %s is NULL", api, ptr_name);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (size == 0) {
        emu_error("%s: size must be greater than 0", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    static const char api[] = "aclrtMalloc";
    ENTER(api);
    RETURN_IF_ERROR(check_alloc_args(api, devPtr, "devPtr", size));
    if (!valid_policy((int)policy)) {
        emu_error("%s: policy %d is not a valid aclrtMemMallocPolicy (pass exactly one value, e.g. "
                  "ACL_MEM_MALLOC_HUGE_FIRST)", api, (int)policy);
        return ACL_ERROR_INVALID_PARAM;
    }
    REQUIRE_DEVICE(api, dev);
    LOCK();
    device_state *d = &g_devices[dev];
    uint64_t free_b = g_dev_capacity - d->used_bytes;
    /*
     * Out of device memory -> ACL_ERROR_RT_MEMORY_ALLOCATION (207001): hicann/runtime
     * docs/zh/api_ref/25-01_aclError.md ("内存申请失败。请检查硬件环境上的存储剩余情况"), and
     * vllm-project/vllm-ascend issue #3141, where exhausted device memory surfaced as
     * "error code is 207001 ... Failed to allocate memory (EL0004) ... Memory resources are
     * exhausted". (ACL_ERROR_RT_DEVICE_OOM 207018 exists too but no aclrtMalloc source using it
     * was found.)
     */
    if ((uint64_t)size > free_b) {
        UNLOCK();
        emu_error("%s: out of device memory on device %" PRId32 ": requested %zu bytes, free %" PRIu64
                  " bytes, total %" PRIu64 " bytes", api, dev, size, free_b, g_dev_capacity);
        return rt_failed(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    mem_block b;
    bool mapped;
    /* The host may refuse a mapping that only the quarantine's reserved ranges keep out: release them. */
    while (!(mapped = block_map(size, dev, &b, huge_policy((int)policy))) && quarantine_release_oldest())
        ;
    if (!mapped) {
        UNLOCK();
        emu_error("%s: failed to allocate %zu bytes on device %" PRId32 " (host mmap failed: %s)", api, size,
                  dev, strerror(errno));
        return rt_failed(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    if (!blocks_insert(&g_dev_mem, &b)) {
        munmap(b.map, b.map_len);
        UNLOCK();
        emu_error("%s: out of host memory for bookkeeping", api);
        return rt_failed(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    d->used_bytes += size;
    g_live_device_bytes += (int64_t)size;
    if (g_live_device_bytes > g_peak_device_bytes)
        g_peak_device_bytes = g_live_device_bytes;
    g_malloc_calls++;
    *devPtr = b.base;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtFree(void *devPtr)
{
    static const char api[] = "aclrtFree";
    ENTER_WITH_ARG(api, devPtr, "devPtr");
    LOCK();
    ptrdiff_t i = blocks_find_base(&g_dev_mem, devPtr);
    if (i < 0) {
        mem_block *b = blocks_find_mapping(&g_dev_mem, devPtr);
        mem_block *q = b ? NULL : blocks_find_mapping(&g_quarantine, devPtr);
        size_t q_size = q ? q->size : 0;
        bool q_base = q && q->base == (char *)devPtr;
        UNLOCK();
        if (q_base)
            emu_error("%s: devPtr %p was already freed (double free of an allocation of %zu bytes)", api, devPtr,
                      q_size);
        else if (b)
            emu_error("%s: devPtr %p is not an address returned by aclrtMalloc, or already freed (it points "
                      "inside the allocation %p of %zu bytes)", api, devPtr, (void *)b->base, b->size);
        else
            emu_error("%s: devPtr %p is not an address returned by aclrtMalloc, or already freed", api, devPtr);
        return rt_failed(ACL_ERROR_RT_PARAM_INVALID);
    }
    /* Freed at once into the quarantine: pending work that still uses it fails when its stream is
     * synchronised (allocation id check), and its address is not handed out again for a while. */
    dev_block_retire_at((size_t)i);
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    static const char api[] = "aclrtMallocHost";
    ENTER(api);
    RETURN_IF_ERROR(check_alloc_args(api, hostPtr, "hostPtr", size));
    /* Needs a context like real CANN: ModelEngine-Group/unified-cache-management issue #143 shows
     * aclrtMallocHost returning 107002 in threads without one. */
    REQUIRE_CONTEXT(api);
    LOCK();
    mem_block b;
    bool mapped = block_map(size, -1, &b, false);
    if (!mapped || !blocks_insert(&g_host_mem, &b)) {
        if (mapped)
            munmap(b.map, b.map_len);
        UNLOCK();
        emu_error("%s: failed to allocate %zu bytes of host memory", api, size);
        return rt_failed(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    *hostPtr = b.base;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtFreeHost(void *hostPtr)
{
    static const char api[] = "aclrtFreeHost";
    ENTER_WITH_ARG(api, hostPtr, "hostPtr");
    LOCK();
    ptrdiff_t i = blocks_find_base(&g_host_mem, hostPtr);
    if (i < 0) {
        UNLOCK();
        emu_error("%s: hostPtr %p is not an address returned by aclrtMallocHost, or already freed", api, hostPtr);
        return rt_failed(ACL_ERROR_RT_PARAM_INVALID);
    }
    blocks_remove_at(&g_host_mem, (size_t)i);
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free_out, size_t *total)
{
    static const char api[] = "aclrtGetMemInfo";
    ENTER(api);
    if ((int)attr < ACL_DDR_MEM || (int)attr > ACL_HBM_MEM_P2P_HUGE1G) {
        emu_error("%s: attr %d is not a valid aclrtMemAttr", api, (int)attr);
        return ACL_ERROR_INVALID_PARAM;
    }
    REQUIRE_ARG(api, free_out, "free");
    REQUIRE_ARG(api, total, "total");
    REQUIRE_DEVICE(api, dev);
    LOCK();
    /* Every attribute reports the one emulated memory pool of the device. */
    *free_out = (size_t)(g_dev_capacity - g_devices[dev].used_bytes);
    *total = (size_t)g_dev_capacity;
    UNLOCK();
    return ACL_SUCCESS;
}

/* aclrtMallocAlign32 (hicann/runtime acl_rt.h): device memory whose real size is size rounded
 * up to 32 bytes, without the 32 bytes of padding aclrtMalloc adds on a device; freed by
 * aclrtFree. */
EMU_EXPORT aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    static const char api[] = "aclrtMallocAlign32";
    ENTER(api);
    RETURN_IF_ERROR(check_alloc_args(api, devPtr, "devPtr", size));
    if (size > SIZE_MAX - 31) {
        emu_error("%s: size %zu is too large", api, size);
        return ACL_ERROR_INVALID_PARAM;
    }
    return aclrtMalloc(devPtr, (size + 31) & ~(size_t)31, policy);
}
