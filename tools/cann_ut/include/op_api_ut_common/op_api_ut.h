/*
 * The replay harness's test case: OP_API_UT(aclnnXxx, INPUT(...), OUTPUT(...), extra...) and
 * TestGetWorkspaceSize, as CANN's op_api unit tests write them (their harness's API, hicann/ops-nn
 * tests/ut/op_api/op_api_ut_common/inc/op_api_ut_common/op_api_ut.h).
 *
 * TestGetWorkspaceSize makes the descriptions into ACL objects (once per case object), calls
 * the operator's phase 1 with them, the extra arguments, a workspace size and an executor out,
 * destroys the executor it got, and records the status (with the emulator's message) in the
 * case's record. TestPrecision runs nothing, as in CANN's harness.
 */
#ifndef CANN_UT_OP_API_UT_H
#define CANN_UT_OP_API_UT_H

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "gtest/gtest.h"
#include "aclnn/aclnn_base.h"
#include "op_api_ut_common/array_desc.h"
#include "op_api_ut_common/scalar_desc.h"
#include "op_api_ut_common/tensor_desc.h"

namespace cann_ut {

template <>
struct StatusConstant<aclnnStatusCode> : std::true_type {};

/* Records one phase-1 call of the current case. */
void note_call(const char* op, aclnnStatus status);

/* An argument as phase 1 takes it: a description made into its ACL object, anything else as given. */
template <typename T>
T to_acl(const T& value)
{
    return value;
}
inline aclTensor* to_acl(const TensorDesc& desc) { return DescToAclContainer(desc); }
inline aclTensorList* to_acl(const TensorListDesc& desc) { return DescToAclContainer(desc); }
inline aclScalar* to_acl(const ScalarDesc& desc) { return DescToAclContainer(desc); }
inline aclIntArray* to_acl(const IntArrayDesc& desc) { return DescToAclContainer(desc); }
inline aclFloatArray* to_acl(const FloatArrayDesc& desc) { return DescToAclContainer(desc); }
inline aclBoolArray* to_acl(const BoolArrayDesc& desc) { return DescToAclContainer(desc); }

struct ToAcl {
    template <typename... D>
    auto operator()(const D&... descriptions) const
    {
        return std::make_tuple(to_acl(descriptions)...);
    }
};

/* What the harness made is destroyed with the case; what the test passed itself is the test's. */
template <typename Desc>
constexpr bool is_description = std::is_same_v<Desc, TensorDesc> || std::is_same_v<Desc, TensorListDesc> ||
                                std::is_same_v<Desc, ScalarDesc> || std::is_same_v<Desc, IntArrayDesc> ||
                                std::is_same_v<Desc, FloatArrayDesc> || std::is_same_v<Desc, BoolArrayDesc>;

template <typename Desc, typename Made>
void release_made(const Desc&, const Made& made)
{
    if constexpr (is_description<Desc>)
        Release(made);
}

template <typename GetF, typename ApiF, typename In, typename Out, typename Extra>
class OpApiUt {
public:
    using Descriptions = decltype(std::tuple_cat(std::declval<In>(), std::declval<Out>()));
    using Args = decltype(std::apply(ToAcl{}, std::declval<const Descriptions&>()));

    OpApiUt(const char* op, GetF get, ApiF, const In& inputs, const Out& outputs, const Extra& extra)
        : op_(op), get_(get), descriptions_(std::tuple_cat(inputs, outputs)), extra_(extra)
    {
    }
    ~OpApiUt()
    {
        if (made_)
            release();
    }
    /* A copy describes the same call; it makes its own ACL objects when it runs. */
    OpApiUt(const OpApiUt& other)
        : op_(other.op_), get_(other.get_), descriptions_(other.descriptions_), extra_(other.extra_)
    {
    }
    OpApiUt& operator=(const OpApiUt& other)
    {
        if (this != &other) {
            if (made_)
                release();
            made_ = false;
            op_ = other.op_;
            get_ = other.get_;
            descriptions_ = other.descriptions_;
            extra_ = other.extra_;
        }
        return *this;
    }

    OpApiUt& InputGenFunc(const std::string&) { return *this; }
    void TestPrecision() {}

    aclnnStatus TestGetWorkspaceSize(uint64_t* workspace_size)
    {
        aclOpExecutor* executor = nullptr;
        aclnnStatus status = call(workspace_size, &executor);
        if (executor != nullptr)
            aclDestroyAclOpExecutor(executor);
        return status;
    }

    aclnnStatus TestGetWorkspaceSizeWithNNopbaseInner(uint64_t* workspace_size, aclOpExecutor* executor)
    {
        (void)executor;
        return TestGetWorkspaceSize(workspace_size);
    }

private:
    aclnnStatus call(uint64_t* workspace_size, aclOpExecutor** executor)
    {
        if (!made_) {
            args_ = std::apply(ToAcl{}, descriptions_);
            made_ = true;
        }
        aclnnStatus status = std::apply(
            [&](auto&... a) {
                return std::apply([&](auto&... e) { return get_(a..., e..., workspace_size, executor); }, extra_);
            },
            args_);
        note_call(op_, status);
        return status;
    }

    void release()
    {
        release_each(std::make_index_sequence<std::tuple_size_v<Args>>{});
    }
    template <size_t... I>
    void release_each(std::index_sequence<I...>)
    {
        (release_made(std::get<I>(descriptions_), std::get<I>(args_)), ...);
    }

    const char* op_;
    GetF get_;
    Descriptions descriptions_;
    Extra extra_;
    Args args_{};
    bool made_ = false;
};

}  // namespace cann_ut

#define OP_API_UT(api, input, output, ...) \
    ::cann_ut::OpApiUt(#api, api##GetWorkspaceSize, api, input, output, std::make_tuple(__VA_ARGS__))
#define INPUT(...) std::make_tuple(__VA_ARGS__)
#define OUTPUT(...) std::make_tuple(__VA_ARGS__)

#endif  // CANN_UT_OP_API_UT_H
