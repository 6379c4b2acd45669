/* The replay harness: the platform header some unit tests include. */
#ifndef CANN_UT_PLATFORM_PLATFORM_INFO_H
#define CANN_UT_PLATFORM_PLATFORM_INFO_H

#include "opdev/platform.h"

#endif
