/**
 * {{path}} of the aclnn_py host emulator's CANN {{version}} tree: {{what}}
 */
#ifndef {{guard}}
#define {{guard}}

{{includes}}
#ifdef __cplusplus
extern "C" {
#endif
{{body}}
#ifdef __cplusplus
}
#endif

#endif  // {{guard}}
