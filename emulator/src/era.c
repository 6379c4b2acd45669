/*
 * lib64/libruntime.so of an aclnn_py host emulator tree: the CANN release it stands for
 * (era.h). emulator/build.py compiles this file once per tree with
 *   EMU_ERA_CANN_VERSION              the release string, e.g. "8.3.RC1"
 *   EMU_ERA_ASYNC_COPY_PINNED_ALIGNED 1 before CANN 8.5, else 0
 */
#include "cann_api.h"
#include "era.h"

#ifndef EMU_ERA_CANN_VERSION
#error "EMU_ERA_CANN_VERSION must be defined by the build (emulator/build.py)"
#endif
#ifndef EMU_ERA_ASYNC_COPY_PINNED_ALIGNED
#error "EMU_ERA_ASYNC_COPY_PINNED_ALIGNED must be defined by the build (emulator/build.py)"
#endif

EMU_EXPORT const char *emu_era_cann_version(void)
{
    /* The driver is a dependency as in CANN (libruntime.so needs libascend_hal.so). */
    return emu_driver_name() ? EMU_ERA_CANN_VERSION : "";
}

EMU_EXPORT bool emu_era_async_copy_needs_pinned_aligned(void)
{
    return EMU_ERA_ASYNC_COPY_PINNED_ALIGNED != 0;
}
