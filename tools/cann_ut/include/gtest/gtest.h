/*
 * The replay harness's googletest: the part of googletest's API that CANN's op_api unit tests
 * use (TEST, TEST_F, TEST_P with INSTANTIATE_TEST_SUITE_P over Values/ValuesIn, the EXPECT_ and
 * ASSERT_ comparisons, fixtures with per-test and per-suite set-up, the current test's names).
 *
 * It runs the cases and, instead of printing failures, records every comparison with its
 * operands in the case's record (harness.cpp): a comparison with an aclnnStatus constant is the
 * case's expectation of phase 1's status, which tools/replay_cann_ut.py compares with what the
 * emulator answered.
 */
#ifndef CANN_UT_GTEST_H
#define CANN_UT_GTEST_H

#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace testing {

class Test {
public:
    virtual ~Test() = default;
    static void SetUpTestCase() {}
    static void TearDownTestCase() {}
    static void SetUpTestSuite() {}
    static void TearDownTestSuite() {}

protected:
    virtual void SetUp() {}
    virtual void TearDown() {}

public:
    virtual void TestBody() = 0;
    void CannUtRun()
    {
        SetUp();
        TestBody();
        TearDown();
    }
};

template <typename T>
class WithParamInterface {
public:
    using ParamType = T;
    virtual ~WithParamInterface() = default;
    static const T& GetParam() { return *current_parameter(); }
    static const T*& current_parameter()
    {
        static const T* parameter = nullptr;
        return parameter;
    }
};

template <typename T>
class TestWithParam : public Test, public WithParamInterface<T> {};

template <typename T>
struct TestParamInfo {
    T param;
    size_t index;
};

class TestInfo {
public:
    TestInfo(std::string suite, std::string name) : suite_(std::move(suite)), name_(std::move(name)) {}
    const char* test_case_name() const { return suite_.c_str(); }
    const char* test_suite_name() const { return suite_.c_str(); }
    const char* name() const { return name_.c_str(); }

private:
    std::string suite_;
    std::string name_;
};

class UnitTest {
public:
    static UnitTest* GetInstance();
    const TestInfo* current_test_info() const;
};

class Environment {
public:
    virtual ~Environment() = default;
    virtual void SetUp() {}
    virtual void TearDown() {}
};

Environment* AddGlobalTestEnvironment(Environment* environment);
void InitGoogleTest(int* argc, char** argv);

/* Values(...) and ValuesIn(...): a list of parameters, converted to the suite's ParamType. */
template <typename... Ts>
struct ValueList {
    std::tuple<Ts...> values;
    template <typename T>
    std::vector<T> to() const
    {
        return std::apply([](const auto&... v) { return std::vector<T>{static_cast<T>(v)...}; }, values);
    }
};

template <typename... Ts>
ValueList<Ts...> Values(Ts... values)
{
    return ValueList<Ts...>{std::make_tuple(values...)};
}

template <typename T>
struct ValuesInList {
    std::vector<T> values;
    template <typename U>
    std::vector<U> to() const
    {
        return std::vector<U>(values.begin(), values.end());
    }
};

template <typename Container>
auto ValuesIn(const Container& container)
{
    using Item = std::decay_t<decltype(*std::begin(container))>;
    return ValuesInList<Item>{std::vector<Item>(std::begin(container), std::end(container))};
}

inline ValueList<bool, bool> Bool() { return Values(false, true); }

}  // namespace testing

namespace cann_ut {

/* The registry and the recorder (harness.cpp). */
using TestFactory = std::function<testing::Test*()>;
using SuiteHook = void (*)();

struct Registration {
    Registration(const char* suite, const char* name, TestFactory factory, SuiteHook set_up, SuiteHook tear_down);
};

/* TEST_P: a pattern run once per parameter of each instantiation of its suite. */
struct PatternRegistration {
    PatternRegistration(const char* suite, const char* name, std::function<testing::Test*()> factory);
};

struct InstantiationRegistration {
    InstantiationRegistration(const char* prefix, const char* suite, size_t count,
                              std::function<void(size_t)> select, SuiteHook set_up, SuiteHook tear_down);
};

enum class Comparison { EQ, NE, LT, LE, GT, GE, TRUE_, FALSE_ };

/* One comparison of the current case: its operands as integers when both are (exactly), and
   which operand is an aclnnStatus constant (-1: neither, 0: the first, 1: the second). */
void record(Comparison comparison, int line, const char* first, const char* second, bool passed, bool integers,
            int64_t a, int64_t b, int status_operand);

/* Whether T is the type of CANN's aclnnStatus constants (specialised by op_api_ut.h). */
template <typename T>
struct StatusConstant : std::false_type {};

template <typename T>
constexpr bool status_type()
{
    return StatusConstant<std::decay_t<T>>::value;
}

template <typename T>
constexpr bool integer_like()
{
    using D = std::decay_t<T>;
    return std::is_integral_v<D> || std::is_enum_v<D>;
}

template <typename T>
int64_t as_integer(const T& value)
{
    using D = std::decay_t<T>;
    if constexpr (std::is_enum_v<D>)
        return static_cast<int64_t>(static_cast<std::underlying_type_t<D>>(value));
    else
        return static_cast<int64_t>(value);
}

template <typename T>
constexpr bool pointer_like()
{
    using D = std::decay_t<T>;
    return std::is_pointer_v<D> || std::is_null_pointer_v<D>;
}

template <typename T>
uintptr_t address(const T& value)
{
    if constexpr (std::is_null_pointer_v<std::decay_t<T>>)
        return 0;
    else if constexpr (std::is_pointer_v<std::decay_t<T>>)
        return reinterpret_cast<uintptr_t>(value);
    else
        return static_cast<uintptr_t>(value);
}

template <typename A, typename B>
bool ordered(Comparison comparison, const A& a, const B& b)
{
    switch (comparison) {
    case Comparison::EQ: return a == b;
    case Comparison::NE: return a != b;
    case Comparison::LT: return a < b;
    case Comparison::LE: return a <= b;
    case Comparison::GT: return a > b;
    default: return a >= b;
    }
}

template <typename A, typename B>
bool compare(Comparison comparison, int line, const char* ea, const char* eb, const A& a, const B& b)
{
    bool passed;
    if constexpr (pointer_like<A>() || pointer_like<B>()) {  // ordered as addresses
        uintptr_t x = address(a), y = address(b);
        passed = ordered(comparison, x, y);
    } else {
        passed = ordered(comparison, a, b);
    }
    if constexpr (integer_like<A>() && integer_like<B>()) {
        int status_operand = status_type<A>() ? 0 : status_type<B>() ? 1 : -1;
        record(comparison, line, ea, eb, passed, true, as_integer(a), as_integer(b), status_operand);
    } else {
        record(comparison, line, ea, eb, passed, false, 0, 0, -1);
    }
    return passed;
}

template <typename T>
bool truth(Comparison comparison, int line, const char* expression, const T& value)
{
    bool passed = comparison == Comparison::TRUE_ ? static_cast<bool>(value) : !static_cast<bool>(value);
    record(comparison, line, expression, "", passed, false, 0, 0, -1);
    return passed;
}

/* What `<< message` after a check streams into: discarded. */
struct Sink {
    template <typename T>
    Sink& operator<<(const T&)
    {
        return *this;
    }
    Sink& operator<<(std::ostream& (*)(std::ostream&)) { return *this; }
};

struct Voider {
    void operator=(const Sink&) {}
};

/* A fixture's suite hooks, reached from a class derived from it (they may be protected). */
template <typename Fixture>
struct SuiteHooks : Fixture {
    static void set_up()
    {
        Fixture::SetUpTestSuite();
        Fixture::SetUpTestCase();
    }
    static void tear_down()
    {
        Fixture::TearDownTestCase();
        Fixture::TearDownTestSuite();
    }
};

}  // namespace cann_ut

#define CANN_UT_CLASS(suite, name) suite##_##name##_CannUtTest

#define CANN_UT_DEFINE(suite, name, parent)                                                                   \
    class CANN_UT_CLASS(suite, name) : public parent {                                                        \
    public:                                                                                                   \
        void TestBody() override;                                                                             \
    };                                                                                                        \
    static ::cann_ut::Registration cann_ut_registration_##suite##_##name(                                    \
        #suite, #name, []() -> ::testing::Test* { return new CANN_UT_CLASS(suite, name); },                  \
        &::cann_ut::SuiteHooks<parent>::set_up, &::cann_ut::SuiteHooks<parent>::tear_down);                   \
    void CANN_UT_CLASS(suite, name)::TestBody()

#define TEST_F(fixture, name) CANN_UT_DEFINE(fixture, name, fixture)
#define TEST(suite, name) CANN_UT_DEFINE(suite, name, ::testing::Test)

#define TEST_P(fixture, name)                                                                                 \
    class CANN_UT_CLASS(fixture, name) : public fixture {                                                     \
    public:                                                                                                   \
        void TestBody() override;                                                                             \
    };                                                                                                        \
    static ::cann_ut::PatternRegistration cann_ut_pattern_##fixture##_##name(                                \
        #fixture, #name, []() -> ::testing::Test* { return new CANN_UT_CLASS(fixture, name); });             \
    void CANN_UT_CLASS(fixture, name)::TestBody()

#define INSTANTIATE_TEST_SUITE_P(prefix, fixture, generator, ...)                                             \
    static const auto cann_ut_parameters_##prefix##_##fixture =                                               \
        (generator).template to<typename fixture::ParamType>();                                               \
    static ::cann_ut::InstantiationRegistration cann_ut_instantiation_##prefix##_##fixture(                  \
        #prefix, #fixture, cann_ut_parameters_##prefix##_##fixture.size(),                                   \
        [](size_t i) { fixture::current_parameter() = &cann_ut_parameters_##prefix##_##fixture[i]; },        \
        &::cann_ut::SuiteHooks<fixture>::set_up, &::cann_ut::SuiteHooks<fixture>::tear_down)
#define INSTANTIATE_TEST_CASE_P INSTANTIATE_TEST_SUITE_P

#define CANN_UT_BLOCKER_ \
    switch (0)           \
    case 0:              \
    default:

#define CANN_UT_EXPECT_(check) \
    CANN_UT_BLOCKER_           \
    if (check)                 \
        ;                      \
    else                       \
        ::cann_ut::Sink()
#define CANN_UT_ASSERT_(check) \
    CANN_UT_BLOCKER_           \
    if (check)                 \
        ;                      \
    else                       \
        return ::cann_ut::Voider() = ::cann_ut::Sink()

#define CANN_UT_CMP_(op, a, b) ::cann_ut::compare(::cann_ut::Comparison::op, __LINE__, #a, #b, (a), (b))
#define EXPECT_EQ(a, b) CANN_UT_EXPECT_(CANN_UT_CMP_(EQ, a, b))
#define EXPECT_NE(a, b) CANN_UT_EXPECT_(CANN_UT_CMP_(NE, a, b))
#define EXPECT_LT(a, b) CANN_UT_EXPECT_(CANN_UT_CMP_(LT, a, b))
#define EXPECT_LE(a, b) CANN_UT_EXPECT_(CANN_UT_CMP_(LE, a, b))
#define EXPECT_GT(a, b) CANN_UT_EXPECT_(CANN_UT_CMP_(GT, a, b))
#define EXPECT_GE(a, b) CANN_UT_EXPECT_(CANN_UT_CMP_(GE, a, b))
#define EXPECT_TRUE(a) CANN_UT_EXPECT_(::cann_ut::truth(::cann_ut::Comparison::TRUE_, __LINE__, #a, (a)))
#define EXPECT_FALSE(a) CANN_UT_EXPECT_(::cann_ut::truth(::cann_ut::Comparison::FALSE_, __LINE__, #a, (a)))
#define ASSERT_EQ(a, b) CANN_UT_ASSERT_(CANN_UT_CMP_(EQ, a, b))
#define ASSERT_NE(a, b) CANN_UT_ASSERT_(CANN_UT_CMP_(NE, a, b))
#define ASSERT_LT(a, b) CANN_UT_ASSERT_(CANN_UT_CMP_(LT, a, b))
#define ASSERT_LE(a, b) CANN_UT_ASSERT_(CANN_UT_CMP_(LE, a, b))
#define ASSERT_GT(a, b) CANN_UT_ASSERT_(CANN_UT_CMP_(GT, a, b))
#define ASSERT_GE(a, b) CANN_UT_ASSERT_(CANN_UT_CMP_(GE, a, b))
#define ASSERT_TRUE(a) CANN_UT_ASSERT_(::cann_ut::truth(::cann_ut::Comparison::TRUE_, __LINE__, #a, (a)))
#define ASSERT_FALSE(a) CANN_UT_ASSERT_(::cann_ut::truth(::cann_ut::Comparison::FALSE_, __LINE__, #a, (a)))
#define EXPECT_STREQ(a, b) EXPECT_TRUE(std::string(a) == std::string(b))
#define EXPECT_FLOAT_EQ(a, b) EXPECT_EQ(static_cast<float>(a), static_cast<float>(b))
#define EXPECT_DOUBLE_EQ(a, b) EXPECT_EQ(static_cast<double>(a), static_cast<double>(b))
#define ADD_FAILURE() ::cann_ut::Sink()
#define GTEST_SKIP() return ::cann_ut::Voider() = ::cann_ut::Sink()
#define SUCCEED() ::cann_ut::Sink()
#define FAIL() return ::cann_ut::Voider() = ::cann_ut::Sink()

int RUN_ALL_TESTS();

#endif  // CANN_UT_GTEST_H
