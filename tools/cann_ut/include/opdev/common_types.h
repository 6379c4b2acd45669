/* The replay harness: the ACL and aclnn types the unit tests name (from the emulator tree). */
#ifndef CANN_UT_OPDEV_COMMON_TYPES_H
#define CANN_UT_OPDEV_COMMON_TYPES_H

#include "aclnn/aclnn_base.h"

#endif
