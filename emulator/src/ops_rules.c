/*
 * The phase-1 rule checker (ops_rules.h): every computed operator's rules, applied in order.
 * Messages say what CANN's checks say (the parameter, its value, the rule), in the emulator's
 * words. Private formats: opbase's IsPrivateFormat (hicann/opbase
 * src/nnopbase/common/utils/format_utils.cpp); promotion and casting: ops_core.c.
 */
#include <inttypes.h>
#include <math.h>

#include "ops_rules.h"

#define RULE_TEXT 256

ops_soc_family ops_soc(void)
{
    const char *name = emu_soc_name();
    if (!name)
        return OPS_SOC_910B;
    if (strncmp(name, "Ascend910B", 10) == 0)
        return OPS_SOC_910B;
    if (strncmp(name, "Ascend910_93", 12) == 0)
        return OPS_SOC_910_93;
    if (strncmp(name, "Ascend950", 9) == 0 || strncmp(name, "Ascend910_95", 12) == 0)
        return OPS_SOC_950;
    if (strncmp(name, "Ascend310P", 10) == 0)
        return OPS_SOC_310P;
    if (strncmp(name, "Ascend310B", 10) == 0)
        return OPS_SOC_310B;
    if (strncmp(name, "Ascend910", 9) == 0)
        return OPS_SOC_910;
    return OPS_SOC_OTHER;
}

static bool private_format(int32_t format)
{
    switch (format) {
    case ACL_FORMAT_NC1HWC0: case ACL_FORMAT_FRACTAL_Z: case ACL_FORMAT_NDC1HWC0: case ACL_FRACTAL_Z_3D:
    case ACL_FORMAT_FRACTAL_NZ: case ACL_FORMAT_NC1HWC0_C04: case ACL_FORMAT_FRACTAL_NZ_C0_16:
    case ACL_FORMAT_FRACTAL_NZ_C0_32: case ACL_FORMAT_FRACTAL_NZ_C0_2: case ACL_FORMAT_FRACTAL_NZ_C0_4:
    case ACL_FORMAT_FRACTAL_NZ_C0_8:
        return true;
    default:
        return false;
    }
}

static const char *format_name(int32_t format)
{
    switch (format) {
    case ACL_FORMAT_NCHW: return "NCHW";
    case ACL_FORMAT_NHWC: return "NHWC";
    case ACL_FORMAT_ND: return "ND";
    case ACL_FORMAT_NC1HWC0: return "NC1HWC0";
    case ACL_FORMAT_FRACTAL_Z: return "FRACTAL_Z";
    case ACL_FORMAT_NC1HWC0_C04: return "NC1HWC0_C04";
    case ACL_FORMAT_HWCN: return "HWCN";
    case ACL_FORMAT_NDHWC: return "NDHWC";
    case ACL_FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
    case ACL_FORMAT_NCDHW: return "NCDHW";
    case ACL_FORMAT_NDC1HWC0: return "NDC1HWC0";
    case ACL_FRACTAL_Z_3D: return "FRACTAL_Z_3D";
    case ACL_FORMAT_NC: return "NC";
    case ACL_FORMAT_NCL: return "NCL";
    default: return "a format of another value";
    }
}

static const char *dims_text(const aclemuKernelArg *t, char *buf, size_t n)
{
    ops_dims_str(buf, n, t->dims, t->ndim);
    return buf;
}

/* The tensors of a present tensor or tensor list argument: *count of them from *first. */
static bool tensors_of(const aclemuKernelArg *a, const aclemuKernelArg **first, uint64_t *count)
{
    if (!a->present)
        return false;
    if (a->kind == ACLEMU_ARG_TENSOR) {
        *first = a;
        *count = 1;
        return true;
    }
    if (a->kind == ACLEMU_ARG_TENSOR_LIST) {
        *first = a->members;
        *count = a->length;
        return true;
    }
    return false;
}

/* "self" or "tensors[2]" for member j of argument i. */
static const char *member_name(const aclemuKernelArg *a, const char *name, uint64_t j, char *buf, size_t n)
{
    if (a->kind == ACLEMU_ARG_TENSOR_LIST)
        snprintf(buf, n, "%s[%" PRIu64 "]", name, j);
    else
        snprintf(buf, n, "%s", name);
    return buf;
}

/* The tensors of a rule's parameters in the rule's order: each present tensor, and each member
   of a present tensor list. */
typedef struct {
    const ops_rule *rule;
    const aclemuKernelArg *args;
    const char *const *names;
    int param;                     /* the current parameter's position in rule->params */
    const aclemuKernelArg *arg;    /* its argument */
    const aclemuKernelArg *first;  /* its tensors: count of them from first */
    uint64_t count, member;        /* the current tensor is first[member - 1] */
    const aclemuKernelArg *tensor; /* the current tensor */
    char name[RULE_TEXT];          /* filled by tensor_name */
} rule_tensors;

static rule_tensors each_tensor(const ops_rule *r, const aclemuKernelArg *args, const char *const *names)
{
    rule_tensors it = {r, args, names, -1, NULL, NULL, 0, 0, NULL, ""};
    return it;
}

static bool next_tensor(rule_tensors *it)
{
    while (it->member >= it->count) {
        if (++it->param >= OPS_RULE_MAX_PARAMS || it->rule->params[it->param] < 0)
            return false;
        it->arg = &it->args[it->rule->params[it->param]];
        it->member = 0;
        if (!tensors_of(it->arg, &it->first, &it->count))
            it->count = 0;
    }
    it->tensor = &it->first[it->member++];
    return true;
}

/* The current tensor's name for a message ("self", "tensors[2]"). */
static const char *tensor_name(rule_tensors *it)
{
    return member_name(it->arg, it->names[it->rule->params[it->param]], it->member - 1, it->name,
                       sizeof it->name);
}

static aclnnStatus check_dtypes(const char *api, const ops_rule *r, const aclemuKernelArg *a, const char *name)
{
    char what[RULE_TEXT], list[RULE_TEXT], note[160];
    if (!r->dtypes) {
        const char *soc = emu_soc_name();
        emu_error("%s: not implemented on SoC %s: CANN implements this operator on other SoC families only", api,
                  soc ? soc : "(unknown)");
        return r->status;
    }
    if (a->present && a->kind == ACLEMU_ARG_SCALAR) {
        if (!ops_dtype_in((aclDataType)a->scalar_dtype, r->dtypes)) {
            emu_error("%s: %s has dtype %s (aclDataType %d), which is not supported; supported dtypes: %s", api,
                      name, ops_dt_name((aclDataType)a->scalar_dtype), (int)a->scalar_dtype,
                      ops_dtypes_str(r->dtypes, list, sizeof list));
            return r->status;
        }
        return ACLNN_SUCCESS;
    }
    if (a->present && a->kind == ACLEMU_ARG_INTEGER) { /* an aclDataType parameter */
        if (!ops_dtype_in((aclDataType)a->integer, r->dtypes)) {
            emu_error("%s: %s is %s, which is not supported; supported dtypes: %s", api, name,
                      ops_dt_name((aclDataType)a->integer), ops_dtypes_str(r->dtypes, list, sizeof list));
            return r->status;
        }
        return ACLNN_SUCCESS;
    }
    const aclemuKernelArg *t;
    uint64_t n;
    if (!tensors_of(a, &t, &n))
        return ACLNN_SUCCESS;
    for (uint64_t j = 0; j < n; j++) {
        if (!ops_dtype_in((aclDataType)t[j].dtype, r->dtypes)) {
            emu_error("%s: %s has dtype %s (aclDataType %d), which is not supported; supported dtypes: %s%s",
                      api, member_name(a, name, j, what, sizeof what), ops_dt_name((aclDataType)t[j].dtype),
                      (int)t[j].dtype, ops_dtypes_str(r->dtypes, list, sizeof list),
                      ops_bf16_note((aclDataType)t[j].dtype, note, sizeof note));
            return r->status;
        }
    }
    return ACLNN_SUCCESS;
}

/* The dtype of a present tensor, list (its first member) or scalar argument, or the value of an
   integer (aclDataType) argument; false if none. */
static bool dtype_of(const aclemuKernelArg *a, aclDataType *dtype)
{
    if (!a->present)
        return false;
    if (a->kind == ACLEMU_ARG_SCALAR) {
        *dtype = (aclDataType)a->scalar_dtype;
        return true;
    }
    if (a->kind == ACLEMU_ARG_INTEGER) {
        *dtype = (aclDataType)a->integer;
        return true;
    }
    const aclemuKernelArg *t;
    uint64_t n;
    if (!tensors_of(a, &t, &n) || n == 0)
        return false;
    *dtype = (aclDataType)t[0].dtype;
    return true;
}

static aclnnStatus check_same_dtype(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                    const char *const *names)
{
    const char *first_name = NULL;
    aclDataType first = ACL_DT_UNDEFINED;
    char what[RULE_TEXT];
    for (int i = 0; i < OPS_RULE_MAX_PARAMS && r->params[i] >= 0; i++) {
        const aclemuKernelArg *a = &args[r->params[i]];
        const aclemuKernelArg *t;
        uint64_t n = 0;
        if (a->present && (a->kind == ACLEMU_ARG_SCALAR || a->kind == ACLEMU_ARG_INTEGER)) {
            t = a;
            n = 1;
        } else if (!tensors_of(a, &t, &n)) {
            continue;
        }
        for (uint64_t j = 0; j < n; j++) {
            aclDataType dt = a->kind == ACLEMU_ARG_SCALAR    ? (aclDataType)a->scalar_dtype
                             : a->kind == ACLEMU_ARG_INTEGER ? (aclDataType)a->integer
                                                             : (aclDataType)t[j].dtype;
            if (!first_name) {
                first_name = names[r->params[i]];
                first = dt;
            } else if (dt != first) {
                emu_error("%s: %s has dtype %s and %s %s: they must have the same dtype", api,
                          member_name(a, names[r->params[i]], j, what, sizeof what), ops_dt_name(dt), first_name,
                          ops_dt_name(first));
                return r->status;
            }
        }
    }
    return ACLNN_SUCCESS;
}

static void range_text(char *buf, size_t n, int64_t lo, int64_t hi)
{
    if (lo == hi)
        snprintf(buf, n, "exactly %" PRId64, lo);
    else if (hi >= INT32_MAX)
        snprintf(buf, n, "at least %" PRId64, lo);
    else
        snprintf(buf, n, "from %" PRId64 " to %" PRId64, lo, hi);
}

static aclnnStatus check_rank(const char *api, const ops_rule *r, const aclemuKernelArg *a, const char *name)
{
    const aclemuKernelArg *t;
    uint64_t n;
    char what[RULE_TEXT], range[96];
    if (!tensors_of(a, &t, &n))
        return ACLNN_SUCCESS;
    for (uint64_t j = 0; j < n; j++) {
        if ((int64_t)t[j].ndim < r->lo || (int64_t)t[j].ndim > r->hi) {
            range_text(range, sizeof range, r->lo, r->hi);
            emu_error("%s: %s has %" PRIu64 " dimensions; it must have %s", api,
                      member_name(a, name, j, what, sizeof what), t[j].ndim, range);
            return r->status;
        }
    }
    return ACLNN_SUCCESS;
}

static bool same_dims(const aclemuKernelArg *x, const aclemuKernelArg *y)
{
    if (x->ndim != y->ndim)
        return false;
    for (uint64_t i = 0; i < x->ndim; i++)
        if (x->dims[i] != y->dims[i])
            return false;
    return true;
}

static aclnnStatus check_same_shape(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                    const char *const *names)
{
    const aclemuKernelArg *first = NULL;
    const char *first_name = NULL;
    char a_text[RULE_TEXT], b_text[RULE_TEXT];
    for (rule_tensors it = each_tensor(r, args, names); next_tensor(&it);) {
        if (!first) {
            first = it.tensor;
            first_name = names[r->params[it.param]];
        } else if (!same_dims(first, it.tensor)) {
            emu_error("%s: %s has shape %s and %s %s: they must have the same shape", api, tensor_name(&it),
                      dims_text(it.tensor, a_text, sizeof a_text), first_name,
                      dims_text(first, b_text, sizeof b_text));
            return r->status;
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_same_rank(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                   const char *const *names)
{
    const aclemuKernelArg *first = NULL;
    const char *first_name = NULL;
    for (int i = 0; i < OPS_RULE_MAX_PARAMS && r->params[i] >= 0; i++) {
        const aclemuKernelArg *a = &args[r->params[i]];
        if (!a->present || a->kind != ACLEMU_ARG_TENSOR)
            continue;
        if (!first) {
            first = a;
            first_name = names[r->params[i]];
        } else if (a->ndim != first->ndim) {
            emu_error("%s: %s has %" PRIu64 " dimensions and %s %" PRIu64 ": they must have the same rank", api,
                      names[r->params[i]], a->ndim, first_name, first->ndim);
            return r->status;
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_broadcast(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                   const char *const *names)
{
    int64_t shape[EMU_TENSOR_MAX_DIMS];
    uint64_t rank = 0;
    char a_text[RULE_TEXT], b_text[RULE_TEXT], joined[RULE_TEXT] = "";
    size_t used = 0;
    for (int i = 0; i < OPS_RULE_MAX_PARAMS && r->params[i] >= 0; i++) {
        const aclemuKernelArg *a = &args[r->params[i]];
        if (!a->present || a->kind != ACLEMU_ARG_TENSOR)
            continue;
        if (a->ndim > EMU_TENSOR_MAX_DIMS)
            return ACLNN_SUCCESS; /* a rank rule refuses it */
        used += (size_t)snprintf(joined + used, used < sizeof joined ? sizeof joined - used : 0, "%s%s",
                                 used ? " and " : "", names[r->params[i]]);
        uint64_t out_rank = a->ndim > rank ? a->ndim : rank;
        int64_t next[EMU_TENSOR_MAX_DIMS];
        for (uint64_t k = 0; k < out_rank; k++) {
            int64_t x = k < out_rank - rank ? 1 : shape[k - (out_rank - rank)];
            int64_t y = k < out_rank - a->ndim ? 1 : a->dims[k - (out_rank - a->ndim)];
            if (x != y && x != 1 && y != 1) {
                ops_dims_str(b_text, sizeof b_text, shape, rank);
                emu_error("%s: %s with shape %s does not broadcast with the shape %s of the others (%s)", api,
                          names[r->params[i]], dims_text(a, a_text, sizeof a_text), b_text, joined);
                return r->status;
            }
            next[k] = x == 1 ? y : x;
        }
        memcpy(shape, next, sizeof(int64_t) * out_rank);
        rank = out_rank;
    }
    if (r->target >= 0 && args[r->target].present && args[r->target].kind == ACLEMU_ARG_TENSOR) {
        const aclemuKernelArg *out = &args[r->target];
        bool equal = out->ndim == rank;
        for (uint64_t k = 0; equal && k < rank; k++)
            equal = out->dims[k] == shape[k];
        if (!equal) {
            ops_dims_str(b_text, sizeof b_text, shape, rank);
            emu_error("%s: %s has shape %s, but the broadcast shape of %s is %s", api, names[r->target],
                      dims_text(out, a_text, sizeof a_text), joined, b_text);
            return r->status;
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_promote(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                 const char *const *names)
{
    aclDataType promoted = ACL_DT_UNDEFINED, dt;
    const char *first_name = NULL;
    char list[RULE_TEXT];
    char what[RULE_TEXT];
    for (int i = 0; i < OPS_RULE_MAX_PARAMS && r->params[i] >= 0; i++) {
        const aclemuKernelArg *a = &args[r->params[i]];
        const aclemuKernelArg *t = NULL;
        uint64_t n = 1;
        if (a->present && a->kind == ACLEMU_ARG_TENSOR_LIST)
            tensors_of(a, &t, &n); /* every member promotes, in order */
        else if (!dtype_of(a, &dt))
            continue;
        for (uint64_t j = 0; j < n; j++) {
            if (t)
                dt = (aclDataType)t[j].dtype;
            if (!first_name) {
                promoted = dt;
                first_name = names[r->params[i]];
                continue;
            }
            aclDataType next = ops_promote_type(promoted, dt);
            if (next == ACL_DT_UNDEFINED) {
                emu_error("%s: %s (%s) and %s (%s) have no common dtype to promote to", api, first_name,
                          ops_dt_name(promoted), member_name(a, names[r->params[i]], j, what, sizeof what),
                          ops_dt_name(dt));
                return r->status;
            }
            promoted = next;
        }
    }
    if (!first_name)
        return ACLNN_SUCCESS;
    if (r->dtypes && !ops_dtype_in(promoted, r->dtypes)) {
        emu_error("%s: the inputs promote to %s, which is not supported; supported dtypes: %s", api,
                  ops_dt_name(promoted), ops_dtypes_str(r->dtypes, list, sizeof list));
        return r->status;
    }
    if (r->target >= 0 && dtype_of(&args[r->target], &dt) && !ops_can_cast(promoted, dt)) {
        emu_error("%s: the inputs promote to %s, which cannot be cast to %s's dtype %s", api,
                  ops_dt_name(promoted), names[r->target], ops_dt_name(dt));
        return r->status;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_castable(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                  const char *const *names)
{
    aclDataType from, to;
    if (r->target < 0 || !dtype_of(&args[r->params[0]], &from) || !dtype_of(&args[r->target], &to))
        return ACLNN_SUCCESS;
    if (!ops_can_cast(from, to)) {
        emu_error("%s: %s's dtype %s cannot be cast to %s's dtype %s", api, names[r->params[0]],
                  ops_dt_name(from), names[r->target], ops_dt_name(to));
        return r->status;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_format(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                const char *const *names)
{
    for (rule_tensors it = each_tensor(r, args, names); next_tensor(&it);) {
        if ((int64_t)it.tensor->ndim < r->lo || (int64_t)it.tensor->ndim > r->hi)
            continue;
        int32_t f = it.tensor->format;
        bool ok = r->formats ? (f >= 0 && f < 64 && (r->formats >> f) & 1u) : !private_format(f);
        if (!ok) {
            emu_error("%s: %s has format %s, which is not supported%s", api, tensor_name(&it), format_name(f),
                      r->formats ? "" : " (a private format)");
            return r->status;
        }
    }
    return ACLNN_SUCCESS;
}

/* The rank a dim indexes: the target tensor's, at least 1 (CANN wraps a 0-d tensor's dims as 1-d). */
static int64_t dim_rank(const aclemuKernelArg *target)
{
    int64_t rank = target->present && target->kind == ACLEMU_ARG_TENSOR ? (int64_t)target->ndim : 0;
    return rank > 0 ? rank : 1;
}

static aclnnStatus check_dim(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                             const char *const *names)
{
    const aclemuKernelArg *a = &args[r->params[0]];
    if (!a->present || r->target < 0 || !args[r->target].present)
        return ACLNN_SUCCESS;
    int64_t rank = dim_rank(&args[r->target]);
    const int64_t *dims = a->kind == ACLEMU_ARG_INT_ARRAY ? a->integers : &a->integer;
    uint64_t n = a->kind == ACLEMU_ARG_INT_ARRAY ? a->length : 1;
    bool seen[EMU_TENSOR_MAX_DIMS] = {false};
    for (uint64_t j = 0; j < n; j++) {
        if (dims[j] < -rank || dims[j] >= rank) {
            emu_error("%s: %s %" PRId64 " is out of range for %s, which has %" PRId64
                      " dimensions: it must be in [%" PRId64 ", %" PRId64 "]",
                      api, names[r->params[0]], dims[j], names[r->target], rank, -rank, rank - 1);
            return r->status;
        }
        int64_t d = dims[j] < 0 ? dims[j] + rank : dims[j];
        if (r->hi && d < EMU_TENSOR_MAX_DIMS) {
            if (seen[d]) {
                emu_error("%s: dimension %" PRId64 " appears more than once in %s", api, d, names[r->params[0]]);
                return r->status;
            }
            seen[d] = true;
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_value(const char *api, const ops_rule *r, const aclemuKernelArg *a, const char *name)
{
    if (!a->present)
        return ACLNN_SUCCESS;
    switch (a->kind) {
    case ACLEMU_ARG_INTEGER:
    case ACLEMU_ARG_BOOL:
        if (a->integer < r->lo || a->integer > r->hi) {
            emu_error("%s: %s is %" PRId64 "; it must be in [%" PRId64 ", %" PRId64 "]", api, name, a->integer,
                      r->lo, r->hi);
            return r->status;
        }
        return ACLNN_SUCCESS;
    case ACLEMU_ARG_INT_ARRAY:
        for (uint64_t j = 0; j < a->length; j++) {
            if (a->integers[j] < r->lo || a->integers[j] > r->hi) {
                emu_error("%s: %s[%" PRIu64 "] is %" PRId64 "; it must be in [%" PRId64 ", %" PRId64 "]", api, name,
                          j, a->integers[j], r->lo, r->hi);
                return r->status;
            }
        }
        return ACLNN_SUCCESS;
    case ACLEMU_ARG_FLOAT_ARRAY:
        for (uint64_t j = 0; j < a->length; j++) {
            if (!(a->reals[j] >= r->low && a->reals[j] <= r->high)) {
                emu_error("%s: %s[%" PRIu64 "] is %g; it must be in [%g, %g]", api, name, j, a->reals[j], r->low,
                          r->high);
                return r->status;
            }
        }
        return ACLNN_SUCCESS;
    case ACLEMU_ARG_REAL:
    case ACLEMU_ARG_SCALAR:
        if (!(a->real >= r->low && a->real <= r->high)) {
            emu_error("%s: %s is %g; it must be in [%g, %g]", api, name, a->real, r->low, r->high);
            return r->status;
        }
        return ACLNN_SUCCESS;
    default:
        return ACLNN_SUCCESS;
    }
}

static aclnnStatus check_choice(const char *api, const ops_rule *r, const aclemuKernelArg *a, const char *name)
{
    if (!a->present || (a->kind != ACLEMU_ARG_INTEGER && a->kind != ACLEMU_ARG_BOOL))
        return ACLNN_SUCCESS;
    for (int32_t i = 0; i < r->n_values; i++)
        if (a->integer == r->values[i])
            return ACLNN_SUCCESS;
    char list[RULE_TEXT];
    size_t used = 0;
    for (int32_t i = 0; i < r->n_values && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%" PRId64, i ? ", " : "", r->values[i]);
    emu_error("%s: %s is %" PRId64 "; it must be one of %s", api, name, a->integer, list);
    return r->status;
}

static bool empty(const aclemuKernelArg *t)
{
    for (uint64_t k = 0; k < t->ndim; k++)
        if (t->dims[k] == 0)
            return true;
    return false;
}

static aclnnStatus check_not_empty(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                   const char *const *names)
{
    char text[RULE_TEXT];
    for (rule_tensors it = each_tensor(r, args, names); next_tensor(&it);) {
        if (empty(it.tensor)) {
            emu_error("%s: %s is empty (shape %s): it must not be", api, tensor_name(&it),
                      dims_text(it.tensor, text, sizeof text));
            return r->status;
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_length(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                const char *const *names)
{
    const aclemuKernelArg *a = &args[r->params[0]];
    if (!a->present)
        return ACLNN_SUCCESS;
    int64_t lo = r->lo, hi = r->hi;
    if (r->target >= 0) {
        if (!args[r->target].present)
            return ACLNN_SUCCESS;
        lo = hi = (int64_t)args[r->target].ndim;
    }
    if ((int64_t)a->length < lo || (int64_t)a->length > hi) {
        char range[96];
        range_text(range, sizeof range, lo, hi);
        emu_error("%s: %s has %" PRIu64 " values; it must have %s%s%s", api, names[r->params[0]], a->length, range,
                  r->target >= 0 ? ", the rank of " : "", r->target >= 0 ? names[r->target] : "");
        return r->status;
    }
    return ACLNN_SUCCESS;
}

static bool contiguous(const aclemuKernelArg *t)
{
    int64_t expected = 1;
    for (uint64_t k = t->ndim; k-- > 0;) {
        if (t->dims[k] == 0)
            return true;
        if (t->dims[k] != 1 && t->strides[k] != expected)
            return false;
        expected *= t->dims[k];
    }
    return true;
}

static aclnnStatus check_contiguous(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                    const char *const *names)
{
    for (rule_tensors it = each_tensor(r, args, names); next_tensor(&it);) {
        if (!contiguous(it.tensor)) {
            emu_error("%s: %s is not contiguous: the operator takes only contiguous tensors there", api,
                      tensor_name(&it));
            return r->status;
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_result_castable(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                         const char *const *names)
{
    aclDataType from, to;
    if (r->target < 0 || !dtype_of(&args[r->params[0]], &from) || !dtype_of(&args[r->target], &to))
        return ACLNN_SUCCESS;
    aclDataType computed = ops_dtype_in(from, r->dtypes) ? ACL_FLOAT : from;
    if (!ops_can_cast(computed, to)) {
        if (computed != from)
            emu_error("%s: %s's dtype %s computes as %s, which cannot be cast to %s's dtype %s", api,
                      names[r->params[0]], ops_dt_name(from), ops_dt_name(computed), names[r->target],
                      ops_dt_name(to));
        else
            emu_error("%s: %s's dtype %s cannot be cast to %s's dtype %s", api, names[r->params[0]],
                      ops_dt_name(from), names[r->target], ops_dt_name(to));
        return r->status;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_same_format(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                     const char *const *names)
{
    const aclemuKernelArg *first = NULL;
    char first_name[RULE_TEXT];
    for (rule_tensors it = each_tensor(r, args, names); next_tensor(&it);) {
        int32_t f = it.tensor->format;
        if (!first) {
            if (it.param == 0 && r->formats && f >= 0 && f < 64 && (r->formats >> f) & 1u)
                return ACLNN_SUCCESS;
            first = it.tensor;
            snprintf(first_name, sizeof first_name, "%s", tensor_name(&it));
        } else if (f != first->format) {
            emu_error("%s: %s has format %s and %s %s: they must have the same format", api, tensor_name(&it),
                      format_name(f), first_name, format_name(first->format));
            return r->status;
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_present(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                 const char *const *names)
{
    for (int i = 0; i < OPS_RULE_MAX_PARAMS && r->params[i] >= 0; i++) {
        if (!args[r->params[i]].present) {
            emu_error("%s: %s is NULL (it is not an optional argument)", api, names[r->params[i]]);
            return r->status;
        }
    }
    return ACLNN_SUCCESS;
}

/* Whether a present tensor (or member) among params has a dimension of 0. */
static bool any_empty(const ops_rule *r, const aclemuKernelArg *args, const char *const *names)
{
    for (rule_tensors it = each_tensor(r, args, names); next_tensor(&it);)
        if (empty(it.tensor))
            return true;
    return false;
}

static aclnnStatus check_strided_rank(const char *api, const ops_rule *r, const aclemuKernelArg *args,
                                      const char *const *names)
{
    char range[96];
    bool strided = false;
    for (rule_tensors it = each_tensor(r, args, names); !strided && next_tensor(&it);)
        strided = !contiguous(it.tensor);
    if (!strided)
        return ACLNN_SUCCESS;
    for (rule_tensors it = each_tensor(r, args, names); next_tensor(&it);) {
        if ((int64_t)it.tensor->ndim < r->lo || (int64_t)it.tensor->ndim > r->hi) {
            range_text(range, sizeof range, r->lo, r->hi);
            emu_error("%s: %s has %" PRIu64 " dimensions; with a non-contiguous view among the tensors, "
                      "it must have %s", api, tensor_name(&it), it.tensor->ndim, range);
            return r->status;
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ops_check_rules(const char *api, const ops_rule_set *rules, const aclemuKernelArg *args,
                            const char *const *names, int32_t count)
{
    if (!rules)
        return ACLNN_SUCCESS;
    ops_soc_family soc = ops_soc();
    for (int32_t i = 0; i < rules->count; i++) {
        const ops_rule *r = &rules->rules[i];
        if (r->socs && !(r->socs & soc))
            continue;
        if (r->params[0] < 0 || r->params[0] >= count || r->target >= count)
            continue;
        const aclemuKernelArg *first = &args[r->params[0]];
        const char *name = names[r->params[0]];
        aclnnStatus st = ACLNN_SUCCESS;
        switch (r->kind) {
        case OPS_RULE_DTYPES:
            for (int p = 0; p < OPS_RULE_MAX_PARAMS && r->params[p] >= 0 && st == ACLNN_SUCCESS; p++)
                st = check_dtypes(api, r, &args[r->params[p]], names[r->params[p]]);
            break;
        case OPS_RULE_SAME_DTYPE: st = check_same_dtype(api, r, args, names); break;
        case OPS_RULE_RANK:
            for (int p = 0; p < OPS_RULE_MAX_PARAMS && r->params[p] >= 0 && st == ACLNN_SUCCESS; p++)
                st = check_rank(api, r, &args[r->params[p]], names[r->params[p]]);
            break;
        case OPS_RULE_SAME_SHAPE: st = check_same_shape(api, r, args, names); break;
        case OPS_RULE_BROADCAST: st = check_broadcast(api, r, args, names); break;
        case OPS_RULE_PROMOTE: st = check_promote(api, r, args, names); break;
        case OPS_RULE_CASTABLE: st = check_castable(api, r, args, names); break;
        case OPS_RULE_FORMAT: st = check_format(api, r, args, names); break;
        case OPS_RULE_DIM: st = check_dim(api, r, args, names); break;
        case OPS_RULE_VALUE: st = check_value(api, r, first, name); break;
        case OPS_RULE_CHOICE: st = check_choice(api, r, first, name); break;
        case OPS_RULE_NOT_EMPTY: st = check_not_empty(api, r, args, names); break;
        case OPS_RULE_SAME_RANK: st = check_same_rank(api, r, args, names); break;
        case OPS_RULE_LENGTH: st = check_length(api, r, args, names); break;
        case OPS_RULE_CONTIGUOUS: st = check_contiguous(api, r, args, names); break;
        case OPS_RULE_SAME_FORMAT: st = check_same_format(api, r, args, names); break;
        case OPS_RULE_STOP_IF_EMPTY:
            if (any_empty(r, args, names))
                return ACLNN_SUCCESS;
            break;
        case OPS_RULE_PRESENT: st = check_present(api, r, args, names); break;
        case OPS_RULE_RESULT_CASTABLE: st = check_result_castable(api, r, args, names); break;
        case OPS_RULE_STRIDED_RANK: st = check_strided_rank(api, r, args, names); break;
        default: break;
        }
        if (st != ACLNN_SUCCESS)
            return st;
    }
    return ACLNN_SUCCESS;
}
