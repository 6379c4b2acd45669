/*
 * Kernels computed outside the emulator: the handler of aclemuSetKernelHandler and the
 * operators registered for it (headers/aclnn_emu.h). The operators' generic phase 1 and
 * phase 2 (ops_generic.c) ask emu_kernel_handler for each call.
 *
 * Own mutex, never held while the handler runs: the handler may call back into the emulator.
 */
#include "rt_internal.h"

#define KERNEL_NAME_MAX 128

static pthread_mutex_t k_mu = PTHREAD_MUTEX_INITIALIZER;
EMU_FORK_GUARDED(k_mu)
static aclemuKernelHandler k_handler;
static char (*k_names)[KERNEL_NAME_MAX];
static size_t k_count, k_capacity;

static ptrdiff_t kernel_index(const char *op)
{
    for (size_t i = 0; i < k_count; i++)
        if (strcmp(k_names[i], op) == 0)
            return (ptrdiff_t)i;
    return -1;
}

EMU_EXPORT int32_t aclemuSetKernelHandler(aclemuKernelHandler handler)
{
    __atomic_store_n(&k_handler, handler, __ATOMIC_RELEASE);
    return ACL_SUCCESS;
}

EMU_EXPORT bool emu_kernel_handler_set(void)
{
    return __atomic_load_n(&k_handler, __ATOMIC_ACQUIRE) != NULL;
}

EMU_EXPORT int32_t aclemuRegisterKernel(const char *op, int32_t computed)
{
    if (!op || strlen(op) >= KERNEL_NAME_MAX) {
        emu_error("aclemuRegisterKernel: op must be an operator name of at most %d bytes", KERNEL_NAME_MAX - 1);
        return ACL_ERROR_INVALID_PARAM;
    }
    pthread_mutex_lock(&k_mu);
    ptrdiff_t found = kernel_index(op);
    aclError rc = ACL_SUCCESS;
    if (computed && found < 0) {
        if (k_count == k_capacity) {
            size_t capacity = k_capacity ? 2 * k_capacity : 256;
            void *grown = realloc(k_names, capacity * sizeof *k_names);
            if (!grown) {
                rc = ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
                emu_error("aclemuRegisterKernel: out of host memory");
            } else {
                k_names = grown;
                k_capacity = capacity;
            }
        }
        if (rc == ACL_SUCCESS)
            snprintf(k_names[k_count++], KERNEL_NAME_MAX, "%s", op);
    } else if (!computed && found >= 0) {
        memcpy(k_names[found], k_names[--k_count], KERNEL_NAME_MAX);
    }
    pthread_mutex_unlock(&k_mu);
    return rc;
}

EMU_EXPORT int32_t aclemuGetRegisteredKernels(const char **names, int64_t capacity, int64_t *count)
{
    if (!count || capacity < 0 || (capacity > 0 && !names)) {
        emu_error("aclemuGetRegisteredKernels: count must not be NULL, nor names when capacity > 0");
        return ACL_ERROR_INVALID_PARAM;
    }
    pthread_mutex_lock(&k_mu);
    *count = (int64_t)k_count;
    for (size_t i = 0; i < k_count && (int64_t)i < capacity; i++)
        names[i] = k_names[i];
    pthread_mutex_unlock(&k_mu);
    return ACL_SUCCESS;
}

EMU_EXPORT aclemuKernelHandler emu_kernel_handler(const char *op)
{
    aclemuKernelHandler handler = __atomic_load_n(&k_handler, __ATOMIC_ACQUIRE);
    if (!handler)
        return NULL;
    pthread_mutex_lock(&k_mu);
    bool registered = kernel_index(op) >= 0;
    pthread_mutex_unlock(&k_mu);
    return registered ? handler : NULL;
}
