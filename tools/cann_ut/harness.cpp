/*
 * The replay harness: runs the cases of one of CANN's op_api unit test files, compiled against
 * the headers of include/ and an emulator tree, and writes one JSON line per event to the
 * results file given to cann_ut_run:
 *   {"case": "Suite.name", "event": "start"}   before the case runs (flushed: a crash leaves it)
 *   {"case": ..., "event": "end", "calls": [...], "checks": [...], "exception": bool}
 * calls: each phase-1 call of the case {op, status, soc, arch, message}; checks: each EXPECT_ or
 * ASSERT_ comparison {line, kind, passed, integers, a, b, status_operand, first, second}.
 * tools/replay_cann_ut.py reads them and classifies every case.
 */
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "op_api_ut_common/op_api_ut.h"
#include "op_api_ut_common/inner/types.h"
#include "opdev/platform.h"

#define CANN_UT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Case {
    std::string suite;
    std::string name;
    cann_ut::TestFactory factory;
    cann_ut::SuiteHook set_up;
    cann_ut::SuiteHook tear_down;
    std::function<void()> select;  // TEST_P: points GetParam() at this case's parameter
};

struct Pattern {
    std::string suite;
    std::string name;
    std::function<testing::Test*()> factory;
};

struct Instantiation {
    std::string prefix;
    std::string suite;
    size_t count;
    std::function<void(size_t)> select;
    cann_ut::SuiteHook set_up;
    cann_ut::SuiteHook tear_down;
};

std::vector<Case>& cases()
{
    static std::vector<Case> registered;
    return registered;
}
std::vector<Pattern>& patterns()
{
    static std::vector<Pattern> registered;
    return registered;
}
std::vector<Instantiation>& instantiations()
{
    static std::vector<Instantiation> registered;
    return registered;
}

std::string json_string(const std::string& text)
{
    std::string out = "\"";
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
            out += escaped;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

/* The record of the case running now. */
struct Record {
    std::vector<std::string> calls;
    std::vector<std::string> checks;
};
Record* current_record = nullptr;
const testing::TestInfo* current_info = nullptr;

/* The platform the case runs on (the emulator models the harness's default). */
op::SocVersion soc = op::SocVersion::ASCEND910B;
NpuArch arch = NpuArch::DAV_2201;
uint32_t cube_cores = 0;

const char* comparison_name(cann_ut::Comparison comparison)
{
    static const char* names[] = {"EQ", "NE", "LT", "LE", "GT", "GE", "TRUE", "FALSE"};
    return names[static_cast<int>(comparison)];
}

std::vector<Case> expanded_cases()
{
    std::vector<Case> all = cases();
    for (const Instantiation& instantiation : instantiations()) {
        for (const Pattern& pattern : patterns()) {
            if (pattern.suite != instantiation.suite)
                continue;
            for (size_t i = 0; i < instantiation.count; i++) {
                Case c{instantiation.prefix + "/" + pattern.suite, pattern.name + "/" + std::to_string(i),
                       pattern.factory, instantiation.set_up, instantiation.tear_down,
                       [select = instantiation.select, i]() { select(i); }};
                all.push_back(c);
            }
        }
    }
    return all;
}

void write_line(FILE* out, const std::string& line)
{
    std::fputs(line.c_str(), out);
    std::fputc('\n', out);
    std::fflush(out);
}

int run_cases(FILE* out, const std::set<std::string>& skip)
{
    std::vector<Case> all = expanded_cases();
    std::vector<std::string> order;  // suites in the order of their first case
    std::map<std::string, std::vector<const Case*>> by_suite;
    for (const Case& c : all) {
        if (!by_suite.count(c.suite))
            order.push_back(c.suite);
        by_suite[c.suite].push_back(&c);
    }
    int run = 0;
    for (const std::string& suite : order) {
        const std::vector<const Case*>& members = by_suite[suite];
        bool any = false;
        for (const Case* c : members)
            any = any || !skip.count(c->suite + "." + c->name);
        if (!any)
            continue;
        /* The platform a suite's SetUpTestCase selects stays for its cases, as in googletest
           (ops-math's square suite selects NpuArch::DAV_3510 there). */
        soc = op::SocVersion::ASCEND910B;
        arch = NpuArch::DAV_2201;
        members.front()->set_up();
        const op::SocVersion suite_soc = soc;
        const NpuArch suite_arch = arch;
        for (const Case* c : members) {
            std::string id = c->suite + "." + c->name;
            if (skip.count(id))
                continue;
            write_line(out, "{\"case\": " + json_string(id) + ", \"event\": \"start\"}");
            Record record;
            testing::TestInfo info(c->suite, c->name);
            current_record = &record;
            current_info = &info;
            soc = suite_soc;
            arch = suite_arch;
            bool exception = false;
            try {
                if (c->select)
                    c->select();
                std::unique_ptr<testing::Test> test(c->factory());
                test->CannUtRun();
            } catch (...) {
                exception = true;
            }
            current_record = nullptr;
            current_info = nullptr;
            std::string line = "{\"case\": " + json_string(id) + ", \"event\": \"end\", \"exception\": " +
                               (exception ? "true" : "false") + ", \"calls\": [";
            for (size_t i = 0; i < record.calls.size(); i++)
                line += (i ? ", " : "") + record.calls[i];
            line += "], \"checks\": [";
            for (size_t i = 0; i < record.checks.size(); i++)
                line += (i ? ", " : "") + record.checks[i];
            write_line(out, line + "]}");
            run++;
        }
        members.front()->tear_down();
    }
    return run;
}

}  // namespace

/* ---- googletest's API ---- */

namespace testing {

UnitTest* UnitTest::GetInstance()
{
    static UnitTest instance;
    return &instance;
}

const TestInfo* UnitTest::current_test_info() const
{
    static const TestInfo none("", "");
    return current_info ? current_info : &none;
}

Environment* AddGlobalTestEnvironment(Environment* environment) { return environment; }
void InitGoogleTest(int*, char**) {}

}  // namespace testing

int RUN_ALL_TESTS() { return run_cases(stdout, {}) >= 0 ? 0 : 1; }

namespace cann_ut {

Registration::Registration(const char* suite, const char* name, TestFactory factory, SuiteHook set_up,
                           SuiteHook tear_down)
{
    cases().push_back(Case{suite, name, std::move(factory), set_up, tear_down, nullptr});
}

PatternRegistration::PatternRegistration(const char* suite, const char* name, std::function<testing::Test*()> factory)
{
    patterns().push_back(Pattern{suite, name, std::move(factory)});
}

InstantiationRegistration::InstantiationRegistration(const char* prefix, const char* suite, size_t count,
                                                     std::function<void(size_t)> select, SuiteHook set_up,
                                                     SuiteHook tear_down)
{
    instantiations().push_back(Instantiation{prefix, suite, count, std::move(select), set_up, tear_down});
}

void record(Comparison comparison, int line, const char* first, const char* second, bool passed, bool integers,
            int64_t a, int64_t b, int status_operand)
{
    if (!current_record)
        return;
    std::string entry = "{\"line\": " + std::to_string(line) + ", \"kind\": \"" + comparison_name(comparison) +
                        "\", \"passed\": " + (passed ? "true" : "false") +
                        ", \"integers\": " + (integers ? "true" : "false") + ", \"a\": " + std::to_string(a) +
                        ", \"b\": " + std::to_string(b) + ", \"status_operand\": " + std::to_string(status_operand) +
                        ", \"first\": " + json_string(first) + ", \"second\": " + json_string(second) + "}";
    current_record->checks.push_back(entry);
}

void note_call(const char* op, aclnnStatus status)
{
    const char* message = aclGetRecentErrMsg();
    std::string text = message ? message : "";
    if (text.size() > 400)
        text = text.substr(0, 400);
    if (!current_record)
        return;
    current_record->calls.push_back("{\"op\": " + json_string(op) + ", \"status\": " + std::to_string(status) +
                                    ", \"soc\": " + std::to_string(static_cast<int>(soc)) +
                                    ", \"arch\": " + std::to_string(static_cast<uint32_t>(arch)) +
                                    ", \"message\": " + json_string(text) + "}");
}

}  // namespace cann_ut

/* ---- descriptions ---- */

static void release_tensor(aclTensor* tensor) { Release(tensor); }
static void release_list(aclTensorList* list) { Release(list); }
static void release_scalar(aclScalar* scalar) { Release(scalar); }

TensorDesc::TensorDesc(const vector<int64_t>& view_dims, aclDataType data_type, aclFormat format,
                       const vector<int64_t>& stride, int64_t offset, const vector<int64_t>& storage_dims)
    : view_dims_(view_dims), data_type_(data_type), format_(format), strides_(stride), offset_(offset),
      storage_dims_(storage_dims)
{
}

aclTensor* TensorDesc::ToAclTypeRawPtr() const
{
    const vector<int64_t>& storage = storage_dims_.empty() ? view_dims_ : storage_dims_;
    return aclCreateTensor(view_dims_.data(), view_dims_.size(), data_type_, strides_.empty() ? nullptr : strides_.data(),
                           offset_, format_, storage.data(), storage.size(), nullptr);
}

unique_ptr<aclTensor, void (*)(aclTensor*)> TensorDesc::ToAclType() const
{
    return unique_ptr<aclTensor, void (*)(aclTensor*)>(ToAclTypeRawPtr(), release_tensor);
}

TensorDesc& TensorDesc::ViewDims(const vector<int64_t>& view_dims)
{
    view_dims_ = view_dims;
    return *this;
}
TensorDesc& TensorDesc::Format(aclFormat format)
{
    format_ = format;
    return *this;
}
TensorDesc& TensorDesc::Precision(float, float, float) { return *this; }
TensorDesc& TensorDesc::ValueFile(const string&) { return *this; }
TensorDesc& TensorDesc::ValidCount(int32_t) { return *this; }

TensorListDesc::TensorListDesc(const vector<TensorDesc>& members) : members_(members) {}
TensorListDesc::TensorListDesc(int duplicate_count, const TensorDesc& member)
    : members_(static_cast<size_t>(duplicate_count > 0 ? duplicate_count : 0), member)
{
}

aclTensorList* TensorListDesc::ToAclTypeRawPtr() const
{
    vector<aclTensor*> tensors;
    for (const TensorDesc& member : members_)
        tensors.push_back(member.ToAclTypeRawPtr());
    return aclCreateTensorList(tensors.data(), tensors.size());
}

unique_ptr<aclTensorList, void (*)(aclTensorList*)> TensorListDesc::ToAclType() const
{
    return unique_ptr<aclTensorList, void (*)(aclTensorList*)>(ToAclTypeRawPtr(), release_list);
}

aclTensor* DescToAclContainer(const TensorDesc& desc) { return desc.ToAclTypeRawPtr(); }
aclTensorList* DescToAclContainer(const TensorListDesc& desc) { return desc.ToAclTypeRawPtr(); }
void Release(aclTensor* tensor)
{
    if (tensor)
        aclDestroyTensor(tensor);
}
void Release(aclTensorList* list)
{
    if (list)
        aclDestroyTensorList(list);
}

template <typename T>
static void store(unsigned char* bytes, T value)
{
    std::memcpy(bytes, &value, sizeof value);
}

/* IEEE half from float, rounded to nearest even (what aclFloat16 holds). */
static uint16_t half_bits(float value)
{
    uint32_t x;
    std::memcpy(&x, &value, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, exponent = (x >> 23) & 0xffu, mantissa = x & 0x7fffffu;
    if (exponent == 0xffu)
        return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
    int e = static_cast<int>(exponent) - 127 + 15;
    if (e >= 0x1f)
        return static_cast<uint16_t>(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10)
            return static_cast<uint16_t>(sign);
        mantissa |= 0x800000u;
        uint32_t shift = static_cast<uint32_t>(14 - e);
        uint32_t half = mantissa >> shift, rest = mantissa & ((1u << shift) - 1), midpoint = 1u << (shift - 1);
        if (rest > midpoint || (rest == midpoint && (half & 1u)))
            half++;
        return static_cast<uint16_t>(sign | half);
    }
    uint32_t half = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13), rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
        half++;
    return static_cast<uint16_t>(sign | half);
}

ScalarDesc::ScalarDesc(bool value) : data_type_(ACL_BOOL) { store(bytes_, value); }
ScalarDesc::ScalarDesc(int8_t value) : data_type_(ACL_INT8) { store(bytes_, value); }
ScalarDesc::ScalarDesc(uint8_t value) : data_type_(ACL_UINT8) { store(bytes_, value); }
ScalarDesc::ScalarDesc(int16_t value) : data_type_(ACL_INT16) { store(bytes_, value); }
ScalarDesc::ScalarDesc(uint16_t value) : data_type_(ACL_UINT16) { store(bytes_, value); }
ScalarDesc::ScalarDesc(int32_t value) : data_type_(ACL_INT32) { store(bytes_, value); }
ScalarDesc::ScalarDesc(uint32_t value) : data_type_(ACL_UINT32) { store(bytes_, value); }
ScalarDesc::ScalarDesc(int64_t value) : data_type_(ACL_INT64) { store(bytes_, value); }
ScalarDesc::ScalarDesc(uint64_t value) : data_type_(ACL_UINT64) { store(bytes_, value); }
ScalarDesc::ScalarDesc(double value) : data_type_(ACL_DOUBLE) { store(bytes_, value); }
ScalarDesc::ScalarDesc(float value, aclDataType data_type) : data_type_(data_type)
{
    if (data_type == ACL_FLOAT16)
        store(bytes_, half_bits(value));
    else
        store(bytes_, value);
}

aclScalar* ScalarDesc::ToAclTypeRawPtr() const
{
    return aclCreateScalar(const_cast<unsigned char*>(bytes_), data_type_);
}

unique_ptr<aclScalar, void (*)(aclScalar*)> ScalarDesc::ToAclType() const
{
    return unique_ptr<aclScalar, void (*)(aclScalar*)>(ToAclTypeRawPtr(), release_scalar);
}

aclScalar* DescToAclContainer(const ScalarDesc& desc) { return desc.ToAclTypeRawPtr(); }
void Release(aclScalar* scalar)
{
    if (scalar)
        aclDestroyScalar(scalar);
}

template <>
aclIntArray* ArrayDesc<int64_t, aclIntArray>::ToAclTypeRawPtr() const
{
    return aclCreateIntArray(values_.data(), values_.size());
}
template <>
aclFloatArray* ArrayDesc<float, aclFloatArray>::ToAclTypeRawPtr() const
{
    return aclCreateFloatArray(values_.data(), values_.size());
}
template <>
aclBoolArray* ArrayDesc<bool, aclBoolArray>::ToAclTypeRawPtr() const
{
    std::unique_ptr<bool[]> flags(new bool[values_.size() + 1]);
    for (size_t i = 0; i < values_.size(); i++)
        flags[i] = values_[i];
    return aclCreateBoolArray(flags.get(), values_.size());
}

template <typename Value, typename Array>
unique_ptr<Array, void (*)(Array*)> ArrayDesc<Value, Array>::ToAclType() const
{
    return unique_ptr<Array, void (*)(Array*)>(ToAclTypeRawPtr(), [](Array* array) { Release(array); });
}
template class ArrayDesc<int64_t, aclIntArray>;
template class ArrayDesc<float, aclFloatArray>;
template class ArrayDesc<bool, aclBoolArray>;

aclIntArray* DescToAclContainer(const IntArrayDesc& desc) { return desc.ToAclTypeRawPtr(); }
aclFloatArray* DescToAclContainer(const FloatArrayDesc& desc) { return desc.ToAclTypeRawPtr(); }
aclBoolArray* DescToAclContainer(const BoolArrayDesc& desc) { return desc.ToAclTypeRawPtr(); }
void Release(aclIntArray* array)
{
    if (array)
        aclDestroyIntArray(array);
}
void Release(aclFloatArray* array)
{
    if (array)
        aclDestroyFloatArray(array);
}
void Release(aclBoolArray* array)
{
    if (array)
        aclDestroyBoolArray(array);
}

const std::string& String(aclDataType data_type)
{
    static std::map<int, std::string> names;
    std::string& name = names[static_cast<int>(data_type)];
    if (name.empty())
        name = "DT_" + std::to_string(static_cast<int>(data_type));
    return name;
}

/* ---- the platform ---- */

namespace op {

SocVersion PlatformInfo::GetSocVersion() const { return soc; }
NpuArch PlatformInfo::GetCurNpuArch() const { return arch; }
const std::string PlatformInfo::GetSocLongVersion() const
{
    return soc == SocVersion::ASCEND910B ? "Ascend910B3" : "Ascend" + std::to_string(static_cast<int>(soc));
}
uint32_t PlatformInfo::GetCubeCoreNum() const { return cube_cores; }
uint32_t PlatformInfo::GetVectorCoreNum() const { return 0; }

const PlatformInfo& GetCurrentPlatformInfo()
{
    static PlatformInfo info;
    return info;
}

/* The architecture of each SoC, as CANN's harness pairs them (hicann/ops-nn
   tests/ut/op_api/stub/opdev/platform.cpp). */
static NpuArch arch_of(SocVersion version)
{
    switch (version) {
    case SocVersion::ASCEND910: return NpuArch::DAV_1001;
    case SocVersion::ASCEND910B:
    case SocVersion::ASCEND910_93: return NpuArch::DAV_2201;
    case SocVersion::ASCEND950: return NpuArch::DAV_3510;
    case SocVersion::ASCEND310:
    case SocVersion::ASCEND310P: return NpuArch::DAV_2002;
    case SocVersion::ASCEND310B: return NpuArch::DAV_3002;
    case SocVersion::ASCEND610LITE: return NpuArch::DAV_3102;
    default: return arch;
    }
}

static SocVersion soc_of(NpuArch target)
{
    switch (target) {
    case NpuArch::DAV_1001: return SocVersion::ASCEND910;
    case NpuArch::DAV_2201: return SocVersion::ASCEND910B;
    case NpuArch::DAV_3510: return SocVersion::ASCEND950;
    case NpuArch::DAV_2002: return SocVersion::ASCEND310P;
    case NpuArch::DAV_3002: return SocVersion::ASCEND310B;
    case NpuArch::DAV_3102: return SocVersion::ASCEND610LITE;
    default: return SocVersion::RESERVED_VERSION;
    }
}

void SetPlatformSocVersion(SocVersion version)
{
    soc = version;
    arch = arch_of(version);
}
void SetPlatformNpuArch(NpuArch target)
{
    arch = target;
    soc = soc_of(target);
}
void SetCubeCoreNum(uint32_t count) { cube_cores = count; }

SocVersionManager::SocVersionManager(SocVersion version) : previous_(soc), previous_arch_(arch)
{
    SetPlatformSocVersion(version);
}
SocVersionManager::~SocVersionManager()
{
    soc = previous_;
    arch = previous_arch_;
}
NpuArchManager::NpuArchManager(NpuArch target) : previous_(soc), previous_arch_(arch) { SetPlatformNpuArch(target); }
NpuArchManager::~NpuArchManager()
{
    soc = previous_;
    arch = previous_arch_;
}

}  // namespace op

/* ---- the entry point ---- */

/* Runs every case of the loaded file but those named (one per line) in skip_path (may be
   NULL), appending the events to results_path. Returns the number of cases run, or -1. */
CANN_UT_EXPORT int cann_ut_run(const char* results_path, const char* skip_path)
{
    std::set<std::string> skip;
    if (skip_path) {
        if (FILE* in = std::fopen(skip_path, "r")) {
            char line[4096];
            while (std::fgets(line, sizeof line, in)) {
                std::string name(line);
                while (!name.empty() && (name.back() == '\n' || name.back() == '\r'))
                    name.pop_back();
                skip.insert(name);
            }
            std::fclose(in);
        }
    }
    FILE* out = std::fopen(results_path, "a");
    if (!out)
        return -1;
    int run = run_cases(out, skip);
    std::fclose(out);
    return run;
}

/* The number of cases the file defines (TEST_P cases expanded). */
CANN_UT_EXPORT int cann_ut_count() { return static_cast<int>(expanded_cases().size()); }
