/*
 * The replay harness's scalar description: ScalarDesc(value) makes an aclScalar of the value's
 * type (float with ACL_FLOAT or ACL_FLOAT16), as CANN's op_api unit tests write it (their
 * harness's API, hicann/ops-nn tests/ut/op_api/op_api_ut_common/inc/op_api_ut_common/
 * scalar_desc.h).
 */
#ifndef CANN_UT_SCALAR_DESC_H
#define CANN_UT_SCALAR_DESC_H

#include <cstdint>
#include <memory>

#include "aclnn/aclnn_base.h"

using namespace std;

class ScalarDesc {
public:
    ScalarDesc(bool value = false);
    ScalarDesc(int8_t value = 0);
    ScalarDesc(uint8_t value = 0);
    ScalarDesc(int16_t value = 0);
    ScalarDesc(uint16_t value = 0);
    ScalarDesc(int32_t value = 0);
    ScalarDesc(uint32_t value = 0);
    ScalarDesc(int64_t value = 0);
    ScalarDesc(uint64_t value = 0);
    ScalarDesc(float value = 0, aclDataType data_type = ACL_FLOAT);
    ScalarDesc(double value = 0);

    unique_ptr<aclScalar, void (*)(aclScalar*)> ToAclType() const;
    aclScalar* ToAclTypeRawPtr() const;

private:
    unsigned char bytes_[8] = {};  // the value as aclCreateScalar reads it, in its dtype
    aclDataType data_type_;
};

aclScalar* DescToAclContainer(const ScalarDesc& desc);
void Release(aclScalar* scalar);

#endif  // CANN_UT_SCALAR_DESC_H
