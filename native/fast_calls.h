/*
 * The per-call entry points of aclnn_py's host library (headers/aclnn_py_host.h, same names),
 * and the destructor of a block cell, as functions of the compiled module
 * aclnn_py._c._fast_calls (native/fast_calls.c).
 * Their pointers are untyped: the records come from the ABI-mode module's types
 * (aclnn_py._c._ffi), which this module does not share. setup.py gives these declarations to
 * cffi as they are.
 */

/* Gives the module the host library's functions, in the order declared below. */
void aclpyFastBind(void *relaunch_fast, void *relaunch_fast_wait, void *relaunch_run,
                   void *repeat_new, void *repeat_again, void *staged_call,
                   void *stream_synchronize_fast, void *stream_launching,
                   void *stream_sync_point, void *block_collect);

int32_t aclpyRelaunchFast(void *record);
int64_t aclpyRelaunchFastWait(void *record);
int32_t aclpyRelaunchRun(void *record, void *state, int64_t hold_mark, int64_t *done,
                         void *stream);
int32_t aclpyRepeatNew(void *repeat, void *block);
int32_t aclpyRepeatAgain(void *repeat);
int32_t aclpyStagedCall(void *record, void *state, const void *copies, void *const *addresses,
                        int32_t *step);
int aclpyStreamSynchronizeFast(void *state);
int64_t aclpyStreamLaunching(void *state, int64_t hold_mark);
uint64_t aclpyStreamSyncPoint(void *state);
void aclpyBlockCollect(void *block);
