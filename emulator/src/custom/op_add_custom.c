/*
 * aclnnAddCustom: the operator of the emulator's custom operator package (opp/vendors/customize,
 * library op_api/lib/libcust_opapi.so), z = x + y, so that discovery and calls of custom operator
 * packages are exercised end to end.
 *
 * It has the shape of the Ascend C getting-started operator AddCustom: inputs x, y and output z of
 * one dtype (FLOAT16 or FLOAT here, plus BF16 on a bfloat16 SoC) and one shape, no broadcasting.
 * Its generated header declares z `const aclTensor *` like the inputs, as CANN's code generator
 * does for custom operators; the package's ops-info description says z is the output.
 *
 * Phase 1: workspaceSize / executor NULL (161001), executor creation (561101), x, y, z NULL
 * (161001), dtypes (161002), equal dtypes of x, y and z (161002), equal shapes (161002), then the
 * core's shared plan (ops_core.h). The library links its own copy of the operator core, as each
 * custom operator library carries its own operator code.
 */
#include "../ops_core.h"

static inline float add_custom_elem(float x, float y, const ops_kparams *k)
{
    return x + y;
}

OPS_DEF_ROWS(OPS_DEF_ROW2, add_custom_row, add_custom_elem)

OPS_DEF_KERNEL(add_custom_kernel, add_custom_row)

static aclnnStatus add_custom_plan(const char *api, const ops_args *a, ops_plan *pl)
{
    const aclTensor *x = a->in[0], *y = a->in[1], *z = a->out;
    const aclTensor *ts[3] = {x, y, z};
    const char *names[3] = {"x", "y", "z"};
    ops_dtypes list = ops_float_dtypes();
    char sa[256], sb[256];

    OPS_CHECK(ops_check_tensors_given(api, ts, names, 3));
    OPS_CHECK(ops_check_dtypes(api, ts, names, 3, list));
    if (y->dtype != x->dtype || z->dtype != x->dtype) {
        emu_error("%s: x, y and z must have one dtype; got %s, %s and %s", api, ops_dt_name(x->dtype),
                  ops_dt_name(y->dtype), ops_dt_name(z->dtype));
        return ACLNN_ERR_PARAM_INVALID;
    }
    OPS_CHECK(ops_check_ranks(api, ts, names, 3));
    ops_shape_of(x, &pl->bshape);
    for (int i = 1; i < 3; i++) {
        if (!ops_shape_equals(ts[i], &pl->bshape)) {
            ops_dims_str(sa, sizeof sa, x->dims, x->ndim);
            ops_dims_str(sb, sizeof sb, ts[i]->dims, ts[i]->ndim);
            emu_error("%s: %s has shape %s but x has shape %s; AddCustom does not broadcast", api, names[i], sb,
                      sa);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ops_plan_staged(api, a, pl, x->dtype, false, false);
}

static const ops_desc ops_add_custom = {
    OPS_DESC(AddCustom, "z", add_custom_plan, add_custom_kernel, 2, "x", "y"),
};

EMU_EXPORT aclnnStatus aclnnAddCustomGetWorkspaceSize(const aclTensor *x, const aclTensor *y, const aclTensor *z,
                                                      uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ops_args a = {.in = {x, y}, .out = z};
    return ops_phase1(&ops_add_custom, &a, workspaceSize, executor);
}

EMU_EXPORT aclnnStatus aclnnAddCustom(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                      aclrtStream stream)
{
    return ops_phase2("aclnnAddCustom", workspace, workspaceSize, executor, stream);
}
