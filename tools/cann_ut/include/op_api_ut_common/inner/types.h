/* The replay harness: the name of an aclDataType, as CANN's test harness offers it. */
#ifndef CANN_UT_INNER_TYPES_H
#define CANN_UT_INNER_TYPES_H

#include <string>

#include "aclnn/aclnn_base.h"

const std::string& String(aclDataType data_type);

#endif
