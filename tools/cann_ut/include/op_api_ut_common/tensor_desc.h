/*
 * The replay harness's tensor descriptions: TensorDesc (view shape, dtype, format, strides,
 * offset, storage shape; value ranges and precision, which phase 1 never reads) and
 * TensorListDesc, as CANN's op_api unit tests write them (their harness's API, hicann/ops-nn
 * tests/ut/op_api/op_api_ut_common/inc/op_api_ut_common/tensor_desc.h). Each becomes an
 * aclTensor of the emulator with no data (NULL), as the unit tests' tensors have at phase 1.
 */
#ifndef CANN_UT_TENSOR_DESC_H
#define CANN_UT_TENSOR_DESC_H

#include <cassert>
#include <cmath>  // float_t and NAN, which CANN's own headers bring to its UT files
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "aclnn/aclnn_base.h"
#include "op_api_ut_common/inner/types.h"
#include "opdev/platform.h"

using namespace std;

class TensorDesc {
public:
    TensorDesc(const vector<int64_t>& view_dims = {1, 1, 16, 16}, aclDataType data_type = ACL_FLOAT,
               aclFormat format = ACL_FORMAT_NCHW, const vector<int64_t>& stride = {}, int64_t offset = 0,
               const vector<int64_t>& storage_dims = {});
    TensorDesc(const TensorDesc& desc) = default;
    TensorDesc& operator=(const TensorDesc& desc) = default;

    unique_ptr<aclTensor, void (*)(aclTensor*)> ToAclType() const;
    aclTensor* ToAclTypeRawPtr() const;

    TensorDesc& ViewDims(const vector<int64_t>& view_dims);
    TensorDesc& Format(aclFormat format);
    TensorDesc& Precision(float relative, float percentage, float absolute = 1e-08);
    template <typename T>
    TensorDesc& ValueRange(T low, T high)
    {
        (void)low;
        (void)high;
        return *this;
    }
    template <typename T>
    TensorDesc& Value(const vector<T>& values)
    {
        (void)values;
        return *this;
    }
    TensorDesc& ValueFile(const string& binary_file);
    TensorDesc& ValidCount(int32_t count);

private:
    vector<int64_t> view_dims_;
    aclDataType data_type_;
    aclFormat format_;
    vector<int64_t> strides_;
    int64_t offset_;
    vector<int64_t> storage_dims_;
};

class TensorListDesc {
public:
    TensorListDesc(const vector<TensorDesc>& members);
    TensorListDesc(int duplicate_count, const TensorDesc& member);

    unique_ptr<aclTensorList, void (*)(aclTensorList*)> ToAclType() const;
    aclTensorList* ToAclTypeRawPtr() const;

private:
    vector<TensorDesc> members_;
};

aclTensor* DescToAclContainer(const TensorDesc& desc);
aclTensorList* DescToAclContainer(const TensorListDesc& desc);
void Release(aclTensor* tensor);
void Release(aclTensorList* list);

#endif  // CANN_UT_TENSOR_DESC_H
