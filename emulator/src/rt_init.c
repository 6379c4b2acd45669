/*
 * aclInit and the configuration it reads: the emulator's environment variables (ACLNN_EMU_SOC,
 * ACLNN_EMU_DEVICE_COUNT, ACLNN_EMU_DEVICE_MEMORY, ACLNN_EMU_QUARANTINE, ACLNN_EMU_OP_CACHE,
 * ACLNN_EMU_LINK) and ASCEND_RT_VISIBLE_DEVICES.
 */
#include "rt_internal.h"

#include <ctype.h>
#include <errno.h>

static uint64_t g_op_cache_epochs; /* epochs started (see g_op_cache_epoch) */
static bool g_op_cache_on;         /* ACLNN_EMU_OP_CACHE=1 when the runtime started */

void report_uninitialized(const char *api)
{
    emu_error("%s: aclInit must be called first (ACL is not initialized%s)", api,
              g_finalized ? ": aclFinalize ended it" : "");
}

static bool parse_u64(const char *s, const char **end, uint64_t *out)
{
    if (!isdigit((unsigned char)*s))
        return false;
    uint64_t v = 0;
    while (isdigit((unsigned char)*s)) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
        s++;
    }
    *end = s;
    *out = v;
    return true;
}

static bool parse_bytes(const char *s, uint64_t *out)
{
    const char *end;
    uint64_t v;
    if (!parse_u64(s, &end, &v))
        return false;
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: return false;
    }
    if (*end != '\0' || v == 0)
        return false;
    if (shift && v > (UINT64_MAX >> shift))
        return false;
    *out = v << shift;
    return true;
}

/*
 * The SoC names aclrtGetSocName can report: the SoC_version of every Ascend platform
 * configuration in hicann/runtime src/platform/platform_config (HEAD 681ef761), then the
 * Short_SoC_version family names those files give, plus "Ascend910_95", the short name
 * CANN's operator and tooling code uses for the Ascend 950 family (hicann/ops-nn build
 * scripts: SUPPORT_COMPUTE_UNIT_SHORT "ascend910_95", printed as "ascend950").
 */
static const char *const g_known_socs[] = {
    "Ascend031", "Ascend035", "Ascend035A", "Ascend035B",
    "Ascend310B1", "Ascend310B2", "Ascend310B3", "Ascend310B4",
    "Ascend310P1", "Ascend310P3", "Ascend310P5", "Ascend310P7",
    "Ascend350_354f", "Ascend350_355e",
    "Ascend910A", "Ascend910PremiumA", "Ascend910ProA", "Ascend910ProB",
    "Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4", "Ascend910B4-1",
    "Ascend910_9362", "Ascend910_9363", "Ascend910_9372", "Ascend910_9381", "Ascend910_9382",
    "Ascend910_9391", "Ascend910_9392",
    "Ascend950DT_950x", "Ascend950DT_950y", "Ascend950DT_9571", "Ascend950DT_9572",
    "Ascend950DT_9573", "Ascend950DT_9574", "Ascend950DT_9575", "Ascend950DT_9576",
    "Ascend950DT_9577", "Ascend950DT_9578", "Ascend950DT_9581", "Ascend950DT_9581x",
    "Ascend950DT_9582", "Ascend950DT_9582x", "Ascend950DT_9583", "Ascend950DT_9584",
    "Ascend950DT_9585", "Ascend950DT_9586", "Ascend950DT_9587", "Ascend950DT_9588",
    "Ascend950DT_9591", "Ascend950DT_9592", "Ascend950DT_9595", "Ascend950DT_9596",
    "Ascend950DT_95A1", "Ascend950DT_95A2",
    "Ascend950PR_950z", "Ascend950PR_9579", "Ascend950PR_957b", "Ascend950PR_957bx",
    "Ascend950PR_957c", "Ascend950PR_957d", "Ascend950PR_9589", "Ascend950PR_958b",
    "Ascend950PR_9599",
    /* family (short) names */
    "Ascend310B", "Ascend310P", "Ascend350", "Ascend910", "Ascend910B", "Ascend910_93",
    "Ascend950", "Ascend910_95",
};

static bool soc_known(const char *name)
{
    for (size_t i = 0; i < sizeof g_known_socs / sizeof g_known_socs[0]; i++)
        if (strcmp(name, g_known_socs[i]) == 0)
            return true;
    return false;
}

/* bfloat16 in aclnn kernels: Atlas A2 (Ascend910B*), Atlas A3 (Ascend910_93*) and the
 * Ascend 950 family (Ascend950*, short name Ascend910_95) -- "DAV_2201 or regbase" in
 * hicann/ops-nn level2_base.h (GetDtypeSupportListV2); the same rule as the binding's
 * aclnn_py/_dtypes.py. */
static bool soc_has_bf16(const char *name)
{
    return strncmp(name, "Ascend910B", 10) == 0 || strncmp(name, "Ascend910_93", 12) == 0 ||
           strncmp(name, "Ascend950", 9) == 0 || strncmp(name, "Ascend910_95", 12) == 0;
}

static void report_unknown_soc(const char *api, const char *value)
{
    char names[2048];
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < sizeof g_known_socs / sizeof g_known_socs[0] && used < sizeof names; i++) {
        int n = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", g_known_socs[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    emu_error("%s: environment variable ACLNN_EMU_SOC='%s' is not a SoC CANN knows; known "
              "names: %s", api, value, names);
}

/* A non-negative decimal number (digits and at most one '.') ending at `stop`; NULL on failure. */
static const char *parse_decimal(const char *s, char stop, double *out)
{
    const char *p = s;
    int dots = 0, digits = 0;
    for (; *p && *p != stop; p++) {
        if (*p == '.')
            dots++;
        else if (isdigit((unsigned char)*p))
            digits++;
        else
            return NULL;
    }
    if (digits == 0 || dots > 1 || *p != stop)
        return NULL;
    *out = strtod(s, NULL);
    return p;
}

/* ACLNN_EMU_LINK: unset or empty -> off; else <latency_us>:<GB/s>, bandwidth > 0. */
static bool parse_link(const char *v, uint64_t *latency_ns, double *bytes_per_ns)
{
    double us, gbs;
    const char *p = parse_decimal(v, ':', &us);
    if (!p || !parse_decimal(p + 1, '\0', &gbs) || gbs <= 0 || us > 1e9)
        return false;
    *latency_ns = (uint64_t)(us * 1e3 + 0.5);
    *bytes_per_ns = gbs;
    return true;
}

static aclError read_config(const char *api, char *soc, bool *bf16, int32_t *count,
                           uint64_t *capacity, size_t *quarantine, bool *op_cache, bool *link,
                           uint64_t *link_latency_ns, double *link_bytes_per_ns)
{
    const char *v = getenv("ACLNN_EMU_SOC");
    if (v) {
        size_t len = strlen(v);
        bool ok = len > 0 && len < 64;
        for (size_t i = 0; ok && i < len; i++)
            ok = isgraph((unsigned char)v[i]) != 0;
        if (!ok) {
            emu_error("%s: environment variable ACLNN_EMU_SOC='%s' is invalid: expected a SoC name "
                      "of 1 to 63 printable characters without spaces (e.g. Ascend910B3)", api, v);
            return ACL_ERROR_INVALID_PARAM;
        }
        if (!soc_known(v)) {
            report_unknown_soc(api, v);
            return ACL_ERROR_INVALID_PARAM;
        }
        strcpy(soc, v);
    } else {
        strcpy(soc, "Ascend910B3");
    }
    *bf16 = soc_has_bf16(soc);

    v = getenv("ACLNN_EMU_DEVICE_COUNT");
    *count = 1;
    if (v) {
        const char *end;
        uint64_t n;
        if (!parse_u64(v, &end, &n) || *end != '\0' || n < 1 || n > EMU_MAX_DEVICES) {
            emu_error("%s: environment variable ACLNN_EMU_DEVICE_COUNT='%s' is invalid: expected an "
                      "integer from 1 to %d", api, v, EMU_MAX_DEVICES);
            return ACL_ERROR_INVALID_PARAM;
        }
        *count = (int32_t)n;
    }

    v = getenv("ACLNN_EMU_DEVICE_MEMORY");
    *capacity = 16ull << 30;
    if (v) {
        uint64_t b;
        if (!parse_bytes(v, &b) || b > (uint64_t)INT64_MAX) {
            emu_error("%s: environment variable ACLNN_EMU_DEVICE_MEMORY='%s' is invalid: expected a "
                      "positive byte count with an optional K, M, G or T suffix (e.g. 16G)", api, v);
            return ACL_ERROR_INVALID_PARAM;
        }
        *capacity = b;
    }

    v = getenv("ACLNN_EMU_QUARANTINE");
    *quarantine = EMU_QUARANTINE_DEFAULT;
    if (v) {
        const char *end;
        uint64_t n;
        if (!parse_u64(v, &end, &n) || *end != '\0' || n > EMU_QUARANTINE_LIMIT) {
            emu_error("%s: environment variable ACLNN_EMU_QUARANTINE='%s' is invalid: expected the number "
                      "of freed device blocks kept from reuse, 0 to %d", api, v, EMU_QUARANTINE_LIMIT);
            return ACL_ERROR_INVALID_PARAM;
        }
        *quarantine = (size_t)n;
    }

    v = getenv("ACLNN_EMU_OP_CACHE");
    *op_cache = false;
    if (v) {
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
            emu_error("%s: environment variable ACLNN_EMU_OP_CACHE='%s' is invalid: expected 1 (model "
                      "the aclnn executor cache) or 0", api, v);
            return ACL_ERROR_INVALID_PARAM;
        }
        *op_cache = v[0] == '1';
    }

    v = getenv("ACLNN_EMU_LINK");
    *link = v && *v;
    if (*link && !parse_link(v, link_latency_ns, link_bytes_per_ns)) {
        emu_error("%s: environment variable ACLNN_EMU_LINK='%s' is invalid: expected "
                  "<latency_us>:<GB/s>, two decimal numbers, the bandwidth above 0 (e.g. 10:25), or empty "
                  "for no transfer model", api, v);
        return ACL_ERROR_INVALID_PARAM;
    }
    return ACL_SUCCESS;
}

/*
 * ASCEND_RT_VISIBLE_DEVICES as CANN's runtime reads it (hicann/runtime HEAD 681ef761:
 * src/runtime/core/src/runtime.cc, Runtime::GetVisibleDevices and SplitString; the cases of
 * tests/ut/runtime/runtime/test/platform/910B/rt_utest_runtime.cc,
 * ut_GetVisibleDevicesByChipCloudTest0). The first 128 characters count. Unless the value
 * starts with a digit it names no device; else ids are read up to the first character that
 * is neither a digit nor a comma, or the second comma in a row. Reading also stops at the
 * first id not below the device count (so "0,1,5,7" on 4 devices is "0,1"), and once every
 * device is named. An id below the previous one, or equal to one before, spoils the whole
 * value, as does naming no device; aclrtGetDeviceCount then fails (ApiImpl::GetDeviceCount),
 * aclInit does not. Set and empty names no device.
 */
static visibility read_visible_devices(const char *v, int32_t physical, int32_t *ids, int32_t *count)
{
    char text[EMU_VISIBLE_MAX_LEN + 1];
    snprintf(text, sizeof text, "%s", v);
    *count = 0;
    if (!isdigit((unsigned char)text[0]))
        return VISIBLE_NO_DEVICE;
    const char *p = text;
    while (*count < physical) {
        uint64_t id = 0;
        bool over = false;
        for (; isdigit((unsigned char)*p); p++) {
            id = id * 10 + (uint64_t)(*p - '0');
            over = over || id > INT32_MAX; /* std::stoi throws: an id out of range */
        }
        if (over || id >= (uint64_t)physical)
            break;
        for (int32_t j = 0; j < *count; j++) {
            if (ids[*count - 1] > (int32_t)id)
                return VISIBLE_NOT_ASCENDING;
            if (ids[j] == (int32_t)id)
                return VISIBLE_DUPLICATED;
        }
        ids[(*count)++] = (int32_t)id;
        if (*p != ',' || !isdigit((unsigned char)p[1]))
            break; /* another character, the end, or ",," */
        p++;
    }
    return *count ? VISIBLE_OK : VISIBLE_NO_DEVICE;
}

/* Lock held: read the configuration and start the runtime with no device set. */
static aclError start_runtime(const char *api)
{
    char soc[64];
    bool bf16;
    int32_t count;
    uint64_t cap;
    size_t quarantine;
    bool op_cache, link;
    uint64_t link_latency_ns = 0;
    double link_bytes_per_ns = 0;
    aclError rc = read_config(api, soc, &bf16, &count, &cap, &quarantine, &op_cache, &link,
                              &link_latency_ns, &link_bytes_per_ns);
    if (rc)
        return rc;
    const char *visible = getenv("ASCEND_RT_VISIBLE_DEVICES");
    int32_t visible_ids[EMU_MAX_DEVICES], visible_count = count;
    visibility vis = visible ? read_visible_devices(visible, count, visible_ids, &visible_count)
                             : VISIBLE_UNSET;
    strcpy(g_soc, soc);
    g_bf16 = bf16;
    g_phys_count = count;
    g_visibility = vis;
    g_dev_count = vis == VISIBLE_UNSET ? count : vis == VISIBLE_OK ? visible_count : 0;
    for (int32_t i = 0; i < g_dev_count; i++)
        g_visible_ids[i] = vis == VISIBLE_UNSET ? i : visible_ids[i];
    snprintf(g_visible_value, sizeof g_visible_value, "%s", visible ? visible : "");
    g_dev_capacity = cap;
    g_quarantine_max = quarantine;
    g_link = link;
    g_link_latency_ns = link_latency_ns;
    g_link_bytes_per_ns = link_bytes_per_ns;
    g_op_cache_on = op_cache;
    __atomic_store_n(&g_op_cache_epoch, op_cache ? ++g_op_cache_epochs : 0, __ATOMIC_RELEASE);
    memset(g_devices, 0, sizeof g_devices);
    fork_handlers_install();
    g_started = true;
    return ACL_SUCCESS;
}

/*
 * CANN's runtime API checks no aclInit: no aclrt*Impl of hicann/runtime src/acl/aclrt_impl/
 * (device.cpp, memory.cpp, stream.cpp, event.cpp, context.cpp, acl_rt_impl_base.cpp) asks
 * GetAclInitFlag(); only toolchain/dump.cpp's dump API does (aclmdlInitDump, aclmdlSetDump,
 * aclmdlFinalizeDump: ACL_ERROR_UNINITIALIZE). The runtime starts on its first use, and so does
 * the emulator's: aclInit or the first runtime call before it reads the configuration, once per
 * process. aclFinalize ends ACL, not the runtime (src/acl/aclrt_impl/acl.cpp,
 * aclFinalizeInternal: profiling, dump and the callbacks of the other ACL modules), so calls
 * after it find their devices, streams, events and memory as they left them. Lock held.
 */
aclError runtime_ready(const char *api)
{
    if (g_started)
        return ACL_SUCCESS;
    return start_runtime(api);
}

EMU_EXPORT int32_t emu_runtime_ready(const char *api)
{
    LOCK();
    aclError rc = runtime_ready(api);
    UNLOCK();
    return rc;
}

/* Lock held. A repeat counts: aclFinalizeReference must be called once more. */
static aclError repeated_init(void)
{
    g_init_refs++;
    UNLOCK();
    emu_error("aclInit: repeated initialization: aclInit was already called; counted (%" PRIu64
              " references): each needs its aclFinalizeReference, or one aclFinalize ends them all",
              g_init_refs);
    return ACL_ERROR_REPEAT_INITIALIZE;
}

/*
 * The content of aclInit's configuration file ("" for none), or NULL with the message recorded.
 * Error code choice: ACL_ERROR_INVALID_FILE (100003, "请检查文件是否存在、文件是否能被访问",
 * RT doc 25-01). The JSON content itself is not interpreted.
 */
static char *read_config_file(const char *configPath, aclError *rc)
{
    *rc = ACL_SUCCESS;
    if (!configPath || !*configPath)
        return strdup("");
    FILE *f = fopen(configPath, "r");
    if (!f) {
        emu_error("aclInit: configPath '%s' cannot be opened: %s", configPath, strerror(errno));
        *rc = ACL_ERROR_INVALID_FILE;
        return NULL;
    }
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    char chunk[4096];
    size_t n;
    while (out && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, out);
    bool failed = !out || ferror(f);
    fclose(f);
    if (out)
        fclose(out);
    if (failed || !text) {
        emu_error("aclInit: configPath '%s' cannot be read", configPath);
        free(text);
        *rc = ACL_ERROR_INVALID_FILE;
        return NULL;
    }
    return text;
}

/* The first successful aclInit's configuration content: a later one (after aclFinalize) must
 * bring the same (hicann/runtime src/acl/aclrt_impl/acl.cpp, aclInitImpl: aclInitJsonHash,
 * the hash of the content, NULL or "" hashing as an empty file; else ACL_ERROR_INVALID_PARAM). */
static char *g_first_config;
static char g_first_config_path[256];

EMU_EXPORT aclError aclInit(const char *configPath)
{
    EMU_RETURN_IF_FAULT("aclInit");
    LOCK();
    if (g_inited)
        return repeated_init();
    UNLOCK();
    /* configPath: NULL or "" = no configuration; otherwise the file must be readable. */
    aclError rc;
    char *config = read_config_file(configPath, &rc);
    if (!config)
        return rc ? rc : ACL_ERROR_BAD_ALLOC;
    LOCK();
    if (g_inited) { /* lost a race with another thread */
        free(config);
        return repeated_init();
    }
    if (g_first_config && strcmp(config, g_first_config) != 0) {
        UNLOCK();
        free(config);
        emu_error("aclInit: the content of configPath '%s' differs from the configuration of the first "
                  "aclInit of the process ('%s')", configPath ? configPath : "", g_first_config_path);
        return ACL_ERROR_INVALID_PARAM;
    }
    /* A runtime already started, by a call before aclInit or before an aclFinalize, keeps its
     * configuration, devices and memory. */
    rc = g_started ? ACL_SUCCESS : start_runtime("aclInit");
    if (rc) {
        UNLOCK();
        free(config);
        return rc;
    }
    if (!g_first_config) {
        g_first_config = config;
        snprintf(g_first_config_path, sizeof g_first_config_path, "%s", configPath ? configPath : "");
    } else {
        free(config);
    }
    if (g_op_cache_on && __atomic_load_n(&g_op_cache_epoch, __ATOMIC_ACQUIRE) == 0)
        __atomic_store_n(&g_op_cache_epoch, ++g_op_cache_epochs, __ATOMIC_RELEASE); /* after aclFinalize */
    g_inited = true;
    g_finalized = false; /* aclInitImpl clears aclFinalizeFlag (src/acl/aclrt_impl/acl.cpp) */
    g_init_refs = 1;
    UNLOCK();
    return ACL_SUCCESS;
}
