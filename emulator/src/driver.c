/*
 * driver/lib64/driver/libascend_hal.so of an aclnn_py host emulator tree: a stand-in for the
 * Ascend driver library, which CANN's runtime needs and which the dynamic linker finds only
 * through LD_LIBRARY_PATH (set_env.sh adds the driver folders). It only names itself.
 */
#include "cann_api.h"
#include "era.h"

EMU_EXPORT const char *emu_driver_name(void)
{
    return "aclnn_py host emulator driver stand-in";
}
