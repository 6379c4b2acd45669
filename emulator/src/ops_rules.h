/*
 * Phase-1 rules as data: what CANN's phase 1 of an operator checks before it builds anything
 * (dtypes per parameter and SoC, ranks, dtype and shape relations, formats, attribute ranges),
 * one rule per check, applied in order by one checker (ops_check_rules) to every computed
 * operator. The rules are aclnn_py/data/phase1_rules.json, written by tools/cann_rules.py from
 * the operators' docs and corrected where CANN's own unit tests say otherwise; emulator/build.py
 * turns them into these structures.
 */
#ifndef ACLNN_EMU_OPS_RULES_H
#define ACLNN_EMU_OPS_RULES_H

#include "ops_core.h"

#define OPS_RULE_MAX_PARAMS 8

typedef enum {
    OPS_RULE_DTYPES = 1,  /* params[0]: its dtype (each member's; a scalar's; an integer parameter's
                             value, an aclDataType such as ReduceSum's dtype) is in dtypes */
    OPS_RULE_SAME_DTYPE,  /* params: the present ones (and their members) have one dtype (an integer
                             parameter: its value as an aclDataType) */
    OPS_RULE_RANK,        /* params[0]: lo <= rank <= hi (each member) */
    OPS_RULE_SAME_SHAPE,  /* params: the present ones have one shape */
    OPS_RULE_BROADCAST,   /* params broadcast together; target (if any) has the broadcast shape */
    OPS_RULE_PROMOTE,     /* params promote to one dtype (in dtypes, if any); target (if any) can
                             be cast from it */
    OPS_RULE_CASTABLE,    /* params[0]'s dtype can be cast to target's (an integer parameter: its
                             value as an aclDataType) */
    OPS_RULE_FORMAT,      /* params: a format in formats, or (formats 0) no private format; only the
                             tensors whose rank is in [lo, hi] (by default every rank) */
    OPS_RULE_DIM,         /* params[0] (an integer, or each of an int array) is a dim of target:
                             in [-r, r) for r = max(rank, 1); hi 1: no dim named twice */
    OPS_RULE_VALUE,       /* params[0] (integer, bool, real, scalar, or each of an int or float
                             array) is in [low, high] */
    OPS_RULE_CHOICE,      /* params[0] (an integer) is one of values */
    OPS_RULE_NOT_EMPTY,   /* params: no dimension of 0 */
    OPS_RULE_SAME_RANK,   /* params: one rank */
    OPS_RULE_LENGTH,      /* params[0] (an array or tensor list): lo <= length <= hi, or with a
                             target, the target's rank */
    OPS_RULE_CONTIGUOUS,  /* params: each a C-contiguous view (dims of extent 1 aside) */
    OPS_RULE_SAME_FORMAT, /* params: the present ones (and their members) have one format; with
                             formats, params[0] in one of them is exempt (CANN's "out's format is
                             self's unless self is ND") */
    OPS_RULE_PRESENT,     /* params: each given (not NULL), else status: for a parameter marked
                             nullable because CANN refuses its NULL with another status than
                             161001 (ACLNN_ERR_INNER_NULLPTR, 561103, in some op_api sources) */
    OPS_RULE_STOP_IF_EMPTY, /* params: when a present one is empty (a dimension of 0), the rules after
                               this one are not applied (CANN's phase 1 returns before those checks) */
    OPS_RULE_RESULT_CASTABLE, /* the dtype params[0] computes in can be cast to target's: its own,
                                 or FLOAT when it is one of dtypes (the ones CANN casts to float
                                 before computing) */
    OPS_RULE_STRIDED_RANK,  /* params: when one of them (present) is not C-contiguous, each has
                               lo <= rank <= hi (a rank limit CANN applies to strided views only) */
} ops_rule_kind;

/* The SoC families a rule may be limited to (CANN's docs name them by product). */
typedef enum {
    OPS_SOC_910 = 1 << 0,    /* Atlas 训练系列产品 (Ascend910) */
    OPS_SOC_910B = 1 << 1,   /* Atlas A2 训练/推理系列产品 (Ascend910B*) */
    OPS_SOC_910_93 = 1 << 2, /* Atlas A3 (Ascend910_93*) */
    OPS_SOC_950 = 1 << 3,    /* Ascend 950PR/950DT (Ascend950*, Ascend910_95) */
    OPS_SOC_310P = 1 << 4,   /* Atlas 推理系列产品 (Ascend310P*) */
    OPS_SOC_310B = 1 << 5,   /* Atlas 200I/500 A2 推理产品 (Ascend310B*) */
    OPS_SOC_OTHER = 1 << 6,
} ops_soc_family;

typedef struct {
    uint16_t kind;                       /* ops_rule_kind */
    uint16_t socs;                       /* ops_soc_family bits it holds on; 0: every SoC */
    int16_t params[OPS_RULE_MAX_PARAMS]; /* parameter indexes, -1 after the last */
    int16_t target;                      /* a parameter index, or -1 */
    int32_t status;                      /* what a failure returns (161002 unless stated) */
    ops_dtypes dtypes;                   /* DTYPES (none: the operator runs on none of the rule's
                                            SoCs), PROMOTE, RESULT_CASTABLE */
    uint64_t formats;                    /* FORMAT: aclFormat bits; 0: no private format */
    int64_t lo, hi;                      /* RANK, LENGTH, DIM flags, integer VALUE bounds, FORMAT ranks */
    double low, high;                    /* real VALUE bounds */
    const int64_t *values;               /* CHOICE */
    int32_t n_values;
} ops_rule;

typedef struct ops_rule_set {
    int32_t count;
    const ops_rule *rules;
} ops_rule_set;

/* A C operator's phase-1 parameters as its header declares them, which of them may be NULL, and
   its rules (the generic operators' descriptors carry the same, ops_generic.h). */
typedef struct ops_prototype {
    int32_t count;
    const char *const *names;
    const char *nullable;          /* per parameter: '1' when NULL is allowed */
    const ops_rule_set *rules;     /* NULL: none */
} ops_prototype;

/* The emulated SoC's family (from aclrtGetSocName's name). */
ops_soc_family ops_soc(void);

/*
 * Apply rules to one call's arguments (the handler's view of them, names[i] naming args[i]); the
 * first rule that fails records a message in CANN's style and returns its status.
 */
aclnnStatus ops_check_rules(const char *api, const ops_rule_set *rules, const aclemuKernelArg *args,
                            const char *const *names, int32_t count);

#endif
