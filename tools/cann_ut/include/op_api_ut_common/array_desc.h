/*
 * The replay harness's array descriptions: IntArrayDesc, FloatArrayDesc and BoolArrayDesc (a
 * list of values, or one value repeated), made into aclIntArray, aclFloatArray and
 * aclBoolArray, as CANN's op_api unit tests write them (their harness's API, hicann/ops-nn
 * tests/ut/op_api/op_api_ut_common/inc/op_api_ut_common/array_desc.h).
 */
#ifndef CANN_UT_ARRAY_DESC_H
#define CANN_UT_ARRAY_DESC_H

#include <cassert>
#include <cstdint>
#include <memory>
#include <vector>

#include "aclnn/aclnn_base.h"

using namespace std;

template <typename Value, typename Array>
class ArrayDesc {
public:
    ArrayDesc(const vector<Value>& values) : values_(values) {}
    ArrayDesc(int duplicate_count, Value value) : values_(static_cast<size_t>(duplicate_count), value)
    {
        assert(duplicate_count > 0);
    }
    const vector<Value>& Get() const { return values_; }
    Array* ToAclTypeRawPtr() const;
    unique_ptr<Array, void (*)(Array*)> ToAclType() const;

private:
    vector<Value> values_;
};

using IntArrayDesc = ArrayDesc<int64_t, aclIntArray>;
using FloatArrayDesc = ArrayDesc<float, aclFloatArray>;
using BoolArrayDesc = ArrayDesc<bool, aclBoolArray>;

aclIntArray* DescToAclContainer(const IntArrayDesc& desc);
aclFloatArray* DescToAclContainer(const FloatArrayDesc& desc);
aclBoolArray* DescToAclContainer(const BoolArrayDesc& desc);
void Release(aclIntArray* array);
void Release(aclFloatArray* array);
void Release(aclBoolArray* array);

#endif  // CANN_UT_ARRAY_DESC_H
