/*
 * libacl_op_compiler.so: CANN's online compilation of aclop operators and its compile options
 * (Ascend/pytorch third_party/acl/inc/acl/acl_op_compiler.h at fda6165bf: aclSetCompileopt,
 * aclGetCompileoptSize, aclGetCompileopt, aclopCompileAndExecute and its V2). The options are
 * stored and read back; compiling an operator is out of the emulator's scope and returns
 * ACL_ERROR_API_NOT_SUPPORT with a message. Linked over the runtime, so that a lookup of a
 * runtime function through this library's handle (torch_npu finds aclrtSetSysParamOpt so)
 * finds it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clients_api.h"
#include "emu_internal.h"

static pthread_mutex_t g_options_mu = PTHREAD_MUTEX_INITIALIZER;
EMU_FORK_GUARDED(g_options_mu)
static char *g_options[EMU_COMPILE_OPTS]; /* set by aclSetCompileopt; NULL: the default */

/*
 * An option's value before any aclSetCompileopt. ACL_OP_JIT_COMPILE reads "disable" on the
 * Atlas A2 and A3 parts (Ascend910B*, Ascend910_93*), whose operators come as binary kernels,
 * and "enable" on the older ones. torch_npu takes its own default from this value
 * (torch_npu/csrc/framework/LazyInitAclops.cpp, GetAndSetDefaultJitCompileByAcl) and, unless
 * it reads "disable", sends Conv2d and BatchNorm weights to private formats through the aclop
 * path at Module.npu(). No CANN document found states the per-SoC default: the values follow
 * torch_npu's behaviour on those parts. Every other option reads as empty.
 */
static const char *default_option(int32_t opt)
{
    if (opt != EMU_COMPILE_OPT_JIT_COMPILE)
        return "";
    const char *soc = emu_soc_name();
    bool binary = soc && (strncmp(soc, "Ascend910B", 10) == 0 || strncmp(soc, "Ascend910_93", 12) == 0);
    return binary ? "disable" : "enable";
}

static bool valid_option(const char *api, int32_t opt)
{
    if (opt >= 0 && opt < EMU_COMPILE_OPTS)
        return true;
    emu_error("%s: opt %" PRId32 " is not an aclCompileOpt (0 to %d)", api, opt, EMU_COMPILE_OPTS - 1);
    return false;
}

EMU_EXPORT aclError aclSetCompileopt(int32_t opt, const char *value)
{
    static const char api[] = "aclSetCompileopt";
    if (!valid_option(api, opt))
        return ACL_ERROR_INVALID_PARAM;
    if (!value) {
        emu_error("%s: value is NULL", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    char *copy = strdup(value);
    if (!copy) {
        emu_error("%s: out of host memory", api);
        return ACL_ERROR_BAD_ALLOC;
    }
    pthread_mutex_lock(&g_options_mu);
    free(g_options[opt]);
    g_options[opt] = copy;
    pthread_mutex_unlock(&g_options_mu);
    return ACL_SUCCESS;
}

/* The bytes aclGetCompileopt needs for the option, its terminating NUL included; 0 for an
 * option that is no aclCompileOpt. */
EMU_EXPORT size_t aclGetCompileoptSize(int32_t opt)
{
    if (!valid_option("aclGetCompileoptSize", opt))
        return 0;
    pthread_mutex_lock(&g_options_mu);
    size_t n = strlen(g_options[opt] ? g_options[opt] : default_option(opt)) + 1;
    pthread_mutex_unlock(&g_options_mu);
    return n;
}

EMU_EXPORT aclError aclGetCompileopt(int32_t opt, char *value, size_t length)
{
    static const char api[] = "aclGetCompileopt";
    if (!valid_option(api, opt))
        return ACL_ERROR_INVALID_PARAM;
    if (!value) {
        emu_error("%s: value is NULL", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    pthread_mutex_lock(&g_options_mu);
    const char *current = g_options[opt] ? g_options[opt] : default_option(opt);
    size_t n = strlen(current) + 1;
    aclError rc = ACL_SUCCESS;
    if (length < n) {
        emu_error("%s: length %zu is too small: the value takes %zu bytes (aclGetCompileoptSize)", api, length, n);
        rc = ACL_ERROR_INVALID_PARAM;
    } else {
        memcpy(value, current, n);
    }
    pthread_mutex_unlock(&g_options_mu);
    return rc;
}

static aclError no_online_compilation(const char *api, const char *opType)
{
    emu_error("%s: operator %s: online compilation of aclop operators is not supported by the aclnn_py "
              "emulator (it computes the aclnn operators only)", api, opType ? opType : "(null)");
    return ACL_ERROR_API_NOT_SUPPORT;
}

EMU_EXPORT aclError aclopCompileAndExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                           const aclDataBuffer *const inputs[], int numOutputs,
                                           const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                           const aclopAttr *attr, int32_t engineType, int32_t compileFlag,
                                           const char *opPath, aclrtStream stream)
{
    return no_online_compilation("aclopCompileAndExecute", opType);
}

EMU_EXPORT aclError aclopCompileAndExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                             aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                                             aclDataBuffer *outputs[], aclopAttr *attr, int32_t engineType,
                                             int32_t compileFlag, const char *opPath, aclrtStream stream)
{
    return no_online_compilation("aclopCompileAndExecuteV2", opType);
}

EMU_EXPORT aclError aclopCompile(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                 int numOutputs, const aclTensorDesc *const outputDesc[], const aclopAttr *attr,
                                 int32_t engineType, int32_t compileFlag, const char *opPath)
{
    return no_online_compilation("aclopCompile", opType);
}

EMU_EXPORT aclError aclGenGraphAndDumpForOp(const char *opType, int numInputs,
                                            const aclTensorDesc *const inputDesc[],
                                            const aclDataBuffer *const inputs[], int numOutputs,
                                            const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                            const aclopAttr *attr, int32_t engineType, const char *graphDumpPath,
                                            void *graphdumpOpt)
{
    return no_online_compilation("aclGenGraphAndDumpForOp", opType);
}
