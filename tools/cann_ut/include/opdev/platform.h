/*
 * The replay harness's platform stand-in: the SoC and architecture CANN's op_api unit tests
 * switch to (their harness's opdev/platform.h stub: hicann/ops-nn tests/ut/op_api/stub/opdev/).
 * The emulator models one SoC, an Atlas A2 (SocVersion::ASCEND910B, NpuArch::DAV_2201), the
 * harness's default; a case that calls phase 1 under another is reported as such, not judged.
 * Enumerator order: hicann/ops-nn tests/ut/op_api/stub/opdev/platform.h; NpuArch values:
 * hicann/runtime pkg_inc/platform/soc_spec.h.
 */
#ifndef CANN_UT_OPDEV_PLATFORM_H
#define CANN_UT_OPDEV_PLATFORM_H

#include <cstdint>
#include <string>

enum class NpuArch : uint32_t {
    DAV_1001 = 1001, DAV_1002 = 1002, DAV_1003 = 1003, DAV_1004 = 1004, DAV_1999 = 1999,
    DAV_2002 = 2002, DAV_2003 = 2003, DAV_2004 = 2004, DAV_2006 = 2006, DAV_2102 = 2102,
    DAV_2103 = 2103, DAV_2104 = 2104, DAV_2201 = 2201, DAV_3002 = 3002, DAV_3003 = 3003,
    DAV_3004 = 3004, DAV_3102 = 3102, DAV_3103 = 3103, DAV_3113 = 3113, DAV_3502 = 3502,
    DAV_3505 = 3505, DAV_3510 = 3510, DAV_3801 = 3801, DAV_5101 = 5101, DAV_5102 = 5102,
    DAV_5161 = 5161, DAV_9201 = 9201, DAV_9202 = 9202, DAV_9301 = 9301, DAV_RESV = 0xFFFF
};

/* The graph status constants a few unit tests compare with (CANN's graph/ge_error_codes.h). */
namespace ge {
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFF;
}  // namespace ge

namespace op {

enum class SocVersion {
    ASCEND910 = 0,
    ASCEND910B,
    ASCEND910_93,
    ASCEND950,
    ASCEND350,
    ASCEND910E,
    ASCEND310,
    ASCEND310P,
    ASCEND310B,
    ASCEND310C,
    ASCEND610LITE,
    KIRINX90,
    KIRIN9030,
    RESERVED_VERSION = 99999
};

class PlatformInfo {
public:
    SocVersion GetSocVersion() const;
    NpuArch GetCurNpuArch() const;
    const std::string GetSocLongVersion() const;
    int32_t GetDeviceId() const { return 0; }
    uint32_t GetCubeCoreNum() const;
    uint32_t GetVectorCoreNum() const;
    bool Valid() const { return true; }
};

const PlatformInfo& GetCurrentPlatformInfo();
void SetPlatformSocVersion(SocVersion version);
void SetPlatformNpuArch(NpuArch arch);
void SetCubeCoreNum(uint32_t count);

/* Switches for its lifetime, then restores what was current. */
class SocVersionManager {
public:
    explicit SocVersionManager(SocVersion version);
    ~SocVersionManager();
    SocVersionManager(const SocVersionManager&) = delete;
    SocVersionManager& operator=(const SocVersionManager&) = delete;

private:
    SocVersion previous_;
    NpuArch previous_arch_;
};

class NpuArchManager {
public:
    explicit NpuArchManager(NpuArch arch);
    ~NpuArchManager();
    NpuArchManager(const NpuArchManager&) = delete;
    NpuArchManager& operator=(const NpuArchManager&) = delete;

private:
    SocVersion previous_;
    NpuArch previous_arch_;
};

}  // namespace op

using op::SetPlatformNpuArch;
using op::SetPlatformSocVersion;

#endif  // CANN_UT_OPDEV_PLATFORM_H
