/*
 * The runtime's contexts, streams and the work queued on them: the calling thread's current
 * context, running and dropping a stream's tasks, the ACLNN_EMU_LINK transfer model's virtual
 * time, and the creation and freeing of streams and contexts.
 */
#include "rt_internal.h"

#include <errno.h>

static __thread uint64_t t_ctx_id; /* generation id of t_ctx (see current_ctx) */

/* The calling thread's current context, or NULL (none, or no longer live). Lock held. */
context *current_ctx(void)
{
    if (t_ctx && reg_has(&g_ctxs, t_ctx) && t_ctx->id == t_ctx_id)
        return t_ctx;
    return NULL;
}

void set_current(context *c)
{
    t_ctx = c;
    t_ctx_id = c ? c->id : 0;
}

EMU_EXPORT int32_t emu_require_device(const char *api)
{
    LOCK();
    context *c = current_ctx();
    bool stale = t_ctx != NULL && c == NULL;
    int32_t dev = c ? c->device : -1;
    UNLOCK();
    if (dev < 0) {
        if (stale)
            emu_error("%s: the calling thread's current context is no longer valid (it was destroyed, or its "
                      "device was reset): call aclrtSetDevice or "
                      "aclrtSetCurrentContext", api);
        else
            emu_error("%s: no current context in the calling thread: call aclrtSetDevice or "
                      "aclrtSetCurrentContext first", api);
    }
    return dev;
}

void task_release(emu_task *t)
{
    if (t && t->release)
        t->release(t);
}

/* release() of tasks that own nothing but their own allocation. */
void task_free(emu_task *t)
{
    free(t);
}

/* Unlink the head task of s (not running) if it is one of the first `upto` ever queued, else NULL.
 * Lock held. */
static emu_task *stream_pop(stream *s, uint64_t upto)
{
    emu_task *t = s->head;
    if (!t || s->running || s->seq_done >= upto)
        return NULL;
    s->head = t->next;
    if (!s->head)
        s->tail = NULL;
    t->next = NULL;
    s->n_pending--;
    return t;
}

/* Wait until no thread runs a task of s; false if s was freed meanwhile. Lock held once. */
static bool stream_wait_idle(stream *s)
{
    uint64_t id = s->id;
    while (s->running) {
        pthread_cond_wait(&g_task_done, &g_mu);
        if (!stream_alive(s, id))
            return false;
    }
    return true;
}

/* ACLNN_EMU_LINK: how long `bytes` occupy the copy engine. */
uint64_t link_duration_ns(uint64_t bytes)
{
    return g_link_latency_ns + (uint64_t)((double)bytes / g_link_bytes_per_ns + 0.5);
}

/*
 * ACLNN_EMU_LINK: return at `target` (CLOCK_MONOTONIC ns), not before: sleep, then spin for the
 * last EMU_LINK_SPIN_NS. Called without the lock.
 */
#define EMU_LINK_SPIN_NS 100000u

void link_wait_until(uint64_t target)
{
    uint64_t now = now_ns();
    if (now + EMU_LINK_SPIN_NS < target) {
        uint64_t wake = target - EMU_LINK_SPIN_NS;
        struct timespec ts = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
    while (now_ns() < target)
        ;
}

/* ACLNN_EMU_LINK: place t, which ran for run_ns, in virtual time (see g_link). Lock held. */
static void link_place(stream *s, emu_task *t, uint64_t run_ns)
{
    device_state *d = &g_devices[s->device];
    uint64_t start = max_u64(t->enqueue_ns, s->end_ns), bytes;
    if (copy_task_on_link(t, &bytes)) {
        start = max_u64(start, d->copy_free_ns);
        s->end_ns = d->copy_free_ns = start + link_duration_ns(bytes);
    } else if (t->run == record_run) {
        s->end_ns = start;
        record_task_done(t, start);
    } else {
        start = max_u64(start, d->compute_free_ns);
        s->end_ns = d->compute_free_ns = start + run_ns;
    }
}

/*
 * Abort the work of s as aclrtStreamAbort does (hicann/runtime docs/api_docs/aclrtStreamAbort.md:
 * the running task stops, the tasks issued but not run are dropped, and a synchronisation waiting
 * meanwhile returns ACL_ERROR_RT_STREAM_ABORT): every task still queued is released unrun, an
 * earlier failure kept for the next synchronisation is forgotten with the work it came from, and
 * threads waiting in stream_run see `aborts` change. Lock held once, no task of s running.
 */
static uint64_t stream_abort(stream *s)
{
    uint64_t dropped = 0;
    emu_task *t;
    while ((t = stream_pop(s, UINT64_MAX)) != NULL) {
        s->seq_done++;
        task_release(t);
        dropped++;
    }
    s->query_not_ready_reported = false;
    s->failed = ACL_SUCCESS;
    s->aborts++;
    return dropped;
}

/*
 * Run the tasks of s while seq_done < upto, in order. Returns the first error.
 * Called with the lock held once (not recursively), and returns with it held.
 *
 * A task runs outside the lock, so that a kernel may call back into the runtime
 * (emu_devmem_*, aclGetRecentErrMsg) or run code that takes other locks, while other
 * threads go on queuing and querying. It stays at the head of the stream until it is
 * done (`running`), so checks of pending work still see it; only one thread runs a
 * stream's tasks at a time, the others wait for it. Event records, which only touch
 * the runtime's own state, run under the lock.
 *
 * A task that fails with ACL_ERROR_RT_STREAM_ABORT (a kernel handler's kernel was
 * interrupted: headers/aclnn_emu.h) aborts the stream (stream_abort): the run stops there
 * and returns that status, whatever failed before, so the call that ran the kernel reports
 * the abort. A call that was waiting for another thread's task when that task aborted the
 * stream returns it too, as CANN's synchronisations do during an abort.
 */
aclError stream_run(stream *s, uint64_t upto, const char *api)
{
    aclError first = ACL_SUCCESS;
    uint64_t id = s->id, aborts = s->aborts;
    while (s->head && s->seq_done < upto) {
        if (s->running) {
            if (!stream_wait_idle(s))
                return first;
            if (s->aborts != aborts) {
                emu_error("%s: the work of the stream was aborted while this call waited for it: a kernel "
                          "run by another thread was interrupted, and the tasks queued after it were dropped",
                          api);
                return rt_failed(ACL_ERROR_RT_STREAM_ABORT);
            }
            continue;
        }
        emu_task *t = s->head;
        aclError rc = ACL_SUCCESS;
        uint64_t t0 = g_link ? now_ns() : 0;
        if (t->run == record_run) {
            rc = t->run(t);
        } else if (t->run) {
            s->running = true;
            UNLOCK();
            rc = t->run(t);
            LOCK();
            s->running = false;
            pthread_cond_broadcast(&g_task_done);
            if (!stream_alive(s, id)) /* freed meanwhile: its freeing waited, the task is ours */
                return rt_failed(rc);
        }
        if (g_link)
            link_place(s, t, now_ns() - t0);
        stream_pop(s, UINT64_MAX);
        s->seq_done++;
        if (rc == ACL_ERROR_RT_STREAM_ABORT) {
            uint64_t dropped = stream_abort(s);
            emu_error("%s: task %s on the stream was interrupted: the stream's work was aborted, and the %" PRIu64
                      " tasks queued after it were dropped unrun", api, t->name ? t->name : "(unnamed)", dropped);
            task_release(t);
            return rt_failed(rc);
        }
        if (rc != ACL_SUCCESS && first == ACL_SUCCESS) {
            first = rc;
            emu_error("%s: task %s on the stream failed with error %d", api, t->name ? t->name : "(unnamed)", rc);
        }
        task_release(t);
    }
    if (!s->head)
        s->query_not_ready_reported = false;
    return rt_failed(first);
}

/*
 * In the child of fork(), the only thread: a task another thread of the parent was running
 * (outside the lock) never finishes here. Its stream's work is aborted, as an interrupted
 * kernel aborts it: the next synchronisation of that stream returns ACL_ERROR_RT_STREAM_ABORT
 * with a message, instead of waiting for ever. Lock held.
 */
void streams_after_fork(void)
{
    for (size_t i = 0; i < g_streams.n; i++) {
        stream *s = g_streams.items[i];
        if (!s->running)
            continue;
        s->running = false;
        emu_task *t = stream_pop(s, UINT64_MAX); /* the one that was running: never run here */
        if (t) {
            s->seq_done++;
            task_release(t);
        }
        uint64_t dropped = stream_abort(s);
        s->failed = ACL_ERROR_RT_STREAM_ABORT;
        emu_error("fork: another thread of the parent process was running a task of stream %p: in this "
                  "child its work was aborted (%" PRIu64 " more tasks dropped)", (void *)s, dropped);
    }
}

/* Everything queued on s; a failure of work run earlier by the depth bound comes first. */
aclError stream_run_all(stream *s, const char *api)
{
    aclError rc = stream_run(s, UINT64_MAX, api);
    if (s->failed) {
        if (!rc) {
            rc = s->failed;
            emu_error("%s: work queued on the stream failed with error %d when the stream's queue was full "
                      "and its oldest tasks ran", api, rc);
            rt_failed(rc);
        }
        s->failed = ACL_SUCCESS;
    }
    return rc;
}

/* Drop (release unrun) the tasks of s while seq_done < upto, after any running one. Lock held once. */
static void stream_drop_upto(stream *s, uint64_t upto)
{
    emu_task *t;
    if (!stream_wait_idle(s))
        return;
    while ((t = stream_pop(s, upto)) != NULL) {
        s->seq_done++;
        task_release(t);
    }
    if (!s->head)
        s->query_not_ready_reported = false;
}

static void stream_drop(stream *s)
{
    stream_drop_upto(s, UINT64_MAX);
    s->failed = ACL_SUCCESS;
}

/*
 * The stream whose work up to e->rec_seq the latest record of e still waits
 * for, or NULL: never recorded, already completed, dropped unrun (an abort or
 * a failed synchronisation dropped it), or recorded on a stream that is gone
 * (its work was run or dropped). Lock held.
 */
stream *pending_record_stream(const event *e)
{
    if (e->recorded && !e->completed && reg_has(&g_streams, e->rec_stream) && e->rec_stream->id == e->rec_stream_id &&
        e->rec_stream->seq_done < e->rec_seq)
        return e->rec_stream;
    return NULL;
}

/*
 * Fault point of the synchronising APIs. An injected failure there stands for
 * the device failing the work: the work the call would have waited for is
 * dropped (released without running, so outputs are never written) and the
 * status returned, so a caller may free its buffers afterwards without later
 * calls tripping over stale tasks. Dropped: the stream h (NULL = the default
 * stream), every stream of the device (all_device), or the record stream of
 * ev up to and including its record.
 */
int32_t sync_fault(const char *api, aclrtStream h, bool all_device, event *ev)
{
    int32_t f = emu_fault(api);
    if (!f)
        return 0;
    LOCK();
    context *c = current_ctx();
    if (g_started && c) {
        if (all_device) {
            for (size_t i = 0; i < g_streams.n; i++) {
                stream *s = g_streams.items[i];
                if (s->device == c->device)
                    stream_drop(s);
            }
        } else if (ev) {
            stream *s = reg_has(&g_events, ev) ? pending_record_stream(ev) : NULL;
            if (s)
                stream_drop_upto(s, ev->rec_seq);
        } else {
            stream *s = NULL;
            if (!h)
                s = c->default_stream;
            else if (reg_has(&g_streams, h) && ((stream *)h)->device == c->device)
                s = h;
            if (s)
                stream_drop(s);
        }
    }
    UNLOCK();
    return f;
}

stream *stream_new(context *c, bool is_default)
{
    stream *s = handle_new(&g_streams, sizeof *s);
    if (!s)
        return NULL;
    s->ctx = c;
    s->device = c->device;
    s->is_default = is_default;
    if (!is_default)
        g_devices[c->device].explicit_streams++;
    return s;
}

/* Whether s (seen with generation id `id`) is still a live stream. Lock held. */
bool stream_alive(const stream *s, uint64_t id)
{
    return reg_has(&g_streams, s) && s->id == id;
}

/* Free a stream, dropping its pending work. Lock held. */
void stream_free(stream *s)
{
    if (!stream_wait_idle(s)) /* another thread freed it while its task ran */
        return;
    stream_drop(s);
    if (!s->is_default)
        g_devices[s->device].explicit_streams--;
    handle_free(&g_streams, s);
}

context *ctx_new(int32_t device, bool is_default)
{
    context *c = handle_new(&g_ctxs, sizeof *c);
    if (!c)
        return NULL;
    c->device = device;
    c->is_default = is_default;
    c->default_stream = stream_new(c, true);
    if (!c->default_stream) {
        handle_free(&g_ctxs, c);
        return NULL;
    }
    return c;
}

/* Destroy a context and every stream made in it (pending work dropped). Lock held. */
void ctx_free(context *c)
{
    for (size_t i = g_streams.n; i-- > 0;) {
        if (i >= g_streams.n) /* a stream freed elsewhere while one of ours finished its task */
            continue;
        stream *s = g_streams.items[i];
        if (s->ctx == c)
            stream_free(s);
    }
    /* Other threads that still point at c notice through the id check in current_ctx(). */
    handle_free(&g_ctxs, c);
}
