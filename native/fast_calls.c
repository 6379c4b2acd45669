/*
 * The per-call entry points of aclnn_py's host library (and the destructor of the block cell
 * each one-shot result gets) as the functions of a compiled module
 * (cffi's API mode, built by setup.py over fast_calls.h): Python calls them directly, where
 * the ABI-mode library object builds a libffi call each time (about 0.15 µs a call).
 *
 * The host library stays the one the loader opened (aclnn_py._c.host): aclpyFastBind gives
 * this module its functions' addresses once, and each function here calls through them.
 * Built with hidden visibility, so that these names never stand in for the host library's
 * own, whatever order and scope the libraries are loaded in.
 */
#include <stdint.h>

#include "fast_calls.h"

static int32_t (*relaunch_fast_entry)(void *);
static int64_t (*relaunch_fast_wait_entry)(void *);
static int32_t (*relaunch_run_entry)(void *, void *, int64_t, int64_t *, void *);
static int32_t (*repeat_new_entry)(void *, void *);
static int32_t (*repeat_again_entry)(void *);
static int32_t (*staged_call_entry)(void *, void *, const void *, void *const *, int32_t *);
static int (*stream_synchronize_fast_entry)(void *);
static int64_t (*stream_launching_entry)(void *, int64_t);
static uint64_t (*stream_sync_point_entry)(void *);
static void (*block_collect_entry)(void *);

void aclpyFastBind(void *relaunch_fast, void *relaunch_fast_wait, void *relaunch_run,
                   void *repeat_new, void *repeat_again, void *staged_call,
                   void *stream_synchronize_fast, void *stream_launching,
                   void *stream_sync_point, void *block_collect)
{
    relaunch_fast_entry = (int32_t (*)(void *))relaunch_fast;
    relaunch_fast_wait_entry = (int64_t (*)(void *))relaunch_fast_wait;
    relaunch_run_entry = (int32_t (*)(void *, void *, int64_t, int64_t *, void *))relaunch_run;
    repeat_new_entry = (int32_t (*)(void *, void *))repeat_new;
    repeat_again_entry = (int32_t (*)(void *))repeat_again;
    staged_call_entry =
        (int32_t (*)(void *, void *, const void *, void *const *, int32_t *))staged_call;
    stream_synchronize_fast_entry = (int (*)(void *))stream_synchronize_fast;
    stream_launching_entry = (int64_t (*)(void *, int64_t))stream_launching;
    stream_sync_point_entry = (uint64_t (*)(void *))stream_sync_point;
    block_collect_entry = (void (*)(void *))block_collect;
}

int32_t aclpyRelaunchFast(void *record)
{
    return relaunch_fast_entry(record);
}

int64_t aclpyRelaunchFastWait(void *record)
{
    return relaunch_fast_wait_entry(record);
}

int32_t aclpyRelaunchRun(void *record, void *state, int64_t hold_mark, int64_t *done,
                         void *stream)
{
    return relaunch_run_entry(record, state, hold_mark, done, stream);
}

int32_t aclpyRepeatNew(void *repeat, void *block)
{
    return repeat_new_entry(repeat, block);
}

int32_t aclpyRepeatAgain(void *repeat)
{
    return repeat_again_entry(repeat);
}

int32_t aclpyStagedCall(void *record, void *state, const void *copies, void *const *addresses,
                        int32_t *step)
{
    return staged_call_entry(record, state, copies, addresses, step);
}

int aclpyStreamSynchronizeFast(void *state)
{
    return stream_synchronize_fast_entry(state);
}

int64_t aclpyStreamLaunching(void *state, int64_t hold_mark)
{
    return stream_launching_entry(state, hold_mark);
}

uint64_t aclpyStreamSyncPoint(void *state)
{
    return stream_sync_point_entry(state);
}

void aclpyBlockCollect(void *block)
{
    block_collect_entry(block);
}
