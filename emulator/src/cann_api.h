/* The CANN API as the emulator implements it: the project's headers/ files, in order. */
#ifndef ACLNN_EMU_CANN_API_H
#define ACLNN_EMU_CANN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../headers/acl_rt.h"
#include "../../headers/acl_meta.h"
#include "../../headers/aclnn_ops.h"
#include "../../headers/aclnn_emu.h"

/* Marks a definition as exported from its shared library (everything else is hidden). */
#define EMU_EXPORT __attribute__((visibility("default")))

#endif
