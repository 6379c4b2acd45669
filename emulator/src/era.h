/*
 * The CANN release a tree of the aclnn_py host emulator stands for.
 *
 * Every tree (aclnn_py.emulator.home(layout)) links the same runtime, meta and operator
 * objects; what differs by release is decided here, in the tree's support library
 * lib64/libruntime.so (era.c, compiled once per tree with the release's definitions by
 * emulator/build.py), and in the per-tree export lists the build writes. Like CANN's own
 * libruntime.so, it is found only through LD_LIBRARY_PATH (or aclnn_py's loader), and it
 * depends on the tree's stand-in driver library, driver/lib64/driver/libascend_hal.so
 * (driver.c).
 */
#ifndef ACLNN_EMU_ERA_H
#define ACLNN_EMU_ERA_H

#include <stdbool.h>

/* The CANN release of this tree, e.g. "8.3.RC1" (as in its version files). */
const char *emu_era_cann_version(void);

/*
 * Whether aclrtMemcpyAsync follows the rules documented before CANN 8.5: host memory of a
 * host<->device copy must come from aclrtMallocHost, and both addresses must be 64-byte
 * aligned. From 8.5 ordinary host memory is accepted (the copy is then synchronous) and the
 * alignment rule is no longer stated.
 */
bool emu_era_async_copy_needs_pinned_aligned(void);

/* The stand-in driver's name (driver.c), also a liveness check of that dependency. */
const char *emu_driver_name(void);

#endif
