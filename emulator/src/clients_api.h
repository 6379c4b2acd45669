/*
 * The CANN functions a framework binds beyond what headers/acl_rt.h declares: what torch_npu
 * 2.13.0 links from libascendcl.so, libacl_op_compiler.so and libhccl.so or looks up at run
 * time (its lib/libtorch_npu.so's undefined symbols and the names its function loaders pass
 * to dlsym). Declarations in our words; prototypes, enum values and flags from hicann/runtime
 * include/external/acl/acl_rt.h and acl_base_rt.h (v8.5.0), and, for what those do not hold
 * (tensor descriptions, aclop attributes, compile options, profiling reporters, the rt* kernel
 * registration), Ascend/pytorch third_party/acl/inc/acl/acl_base.h, acl_op.h,
 * acl_op_compiler.h and experiment/msprof/toolchain/prof_api.h at fda6165bf, and
 * torch_npu/csrc/inductor/mlir/hacl_rt.h at 9e73e708a.
 */
#ifndef ACLNN_EMU_CLIENTS_API_H
#define ACLNN_EMU_CLIENTS_API_H

#include <stddef.h>
#include <stdint.h>

#include "cann_api.h"

/* acl_rt.h: the flags of aclrtCreateEventWithFlag / aclrtCreateEventExWithFlag */
#define EMU_ACL_EVENT_SYNC 0x01U
#define EMU_ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x02U
#define EMU_ACL_EVENT_TIME_LINE 0x08U
#define EMU_ACL_EVENT_DEVICE_USE_ONLY 0x10U
#define EMU_ACL_EVENT_EXTERNAL 0x20U
#define EMU_ACL_EVENT_IPC 0x40U
/* acl_rt.h: the flags of aclrtCreateStreamWithConfig */
#define EMU_ACL_STREAM_FAST_LAUNCH 0x01U
#define EMU_ACL_STREAM_FAST_SYNC 0x02U
#define EMU_ACL_STREAM_PERSISTENT 0x04U
#define EMU_ACL_STREAM_HUGE 0x08U
#define EMU_ACL_STREAM_CPU_SCHEDULE 0x10U
#define EMU_ACL_STREAM_DEVICE_USE_ONLY 0x20U

/* acl_rt.h: aclrtFloatOverflowMode */
typedef enum { EMU_OVERFLOW_SATURATION = 0, EMU_OVERFLOW_INFNAN = 1, EMU_OVERFLOW_UNDEF = 2 } emuOverflowMode;
/* acl_base_rt.h: aclSysParamOpt (0 deterministic, 1 debug kernel, 2 strong consistency
 * (deprecated), 3 kernel early start) */
#define EMU_SYS_PARAM_OPTS 4
/* acl_base_rt.h: aclDeviceInfo (AI cores, vector cores, L2 size) */
typedef enum { EMU_DEVICE_INFO_AI_CORE_NUM = 0, EMU_DEVICE_INFO_VECTOR_CORE_NUM = 1,
               EMU_DEVICE_INFO_L2_SIZE = 2 } emuDeviceInfo;
/* acl_base_rt.h: aclLogLevel and aclMemType */
typedef enum { EMU_LOG_DEBUG = 0, EMU_LOG_INFO = 1, EMU_LOG_WARNING = 2, EMU_LOG_ERROR = 3 } emuLogLevel;
typedef enum { EMU_MEMTYPE_DEVICE = 0, EMU_MEMTYPE_HOST = 1, EMU_MEMTYPE_HOST_COMPILE_INDEPENDENT = 2 } emuMemType;

/* acl_op_compiler.h: aclCompileOpt, 0 to 16 (ACL_PRECISION_MODE ... ACL_OP_DEBUG_OPTION);
 * 10 is ACL_OP_JIT_COMPILE */
#define EMU_COMPILE_OPTS 17
#define EMU_COMPILE_OPT_JIT_COMPILE 10

/* Opaque to callers: a tensor description, a data buffer, an operator's attributes. */
typedef struct aclTensorDesc aclTensorDesc;
typedef struct aclDataBuffer aclDataBuffer;
typedef struct aclopAttr aclopAttr;

/* hccl_types.h (Ascend/pytorch third_party/hccl/inc/hccl/hccl_types.h): HcclResult */
typedef int32_t emuHcclResult;
#define EMU_HCCL_SUCCESS 0
#define EMU_HCCL_E_PARA 1
#define EMU_HCCL_E_NOT_SUPPORT 5

#endif
