/* The replay harness: the unit tests that include gmock use only googletest's part. */
#ifndef CANN_UT_GMOCK_H
#define CANN_UT_GMOCK_H

#include "gtest/gtest.h"

#endif
