/*
 * The runtime's stream API, and emu_stream_enqueue, through which the operators queue their work.
 */
#include "rt_internal.h"

/*
 * Resolve a user stream handle for the calling thread. Lock held. Records a
 * message and returns an error for: no current context (107002), unknown
 * stream (107000), stream of another device (107003).
 */
aclError resolve_stream(aclrtStream h, const char *api, stream **out)
{
    context *c = current_ctx();
    if (!c) {
        bool stale = t_ctx != NULL;
        emu_error("%s: %s: call aclrtSetDevice or aclrtSetCurrentContext first", api,
                  stale ? "the calling thread's current context is no longer valid (destroyed, or its device "
                          "reset)"
                        : "no current context in the calling thread");
        return rt_failed(ACL_ERROR_RT_CONTEXT_NULL);
    }
    if (!h) {
        *out = c->default_stream;
        return ACL_SUCCESS;
    }
    if (!reg_has(&g_streams, h)) {
        emu_error("%s: stream %p is not a live stream (never created, already destroyed, or its context or "
                  "device was released)", api, h);
        return rt_failed(ACL_ERROR_RT_PARAM_INVALID);
    }
    stream *s = h;
    if (s->device != c->device) {
        emu_error("%s: stream %p belongs to device %" PRId32 " but the calling thread's current context is on "
                  "device %" PRId32, api, h, s->device, c->device);
        return rt_failed(ACL_ERROR_RT_STREAM_CONTEXT);
    }
    *out = s;
    return ACL_SUCCESS;
}

/*
 * After a task was appended to s: past EMU_STREAM_DEPTH pending tasks, run the oldest
 * until the queue is back at that depth. A failure is kept for the stream's next
 * synchronisation, where CANN reports failures of asynchronous work. Returns
 * ACL_SUCCESS, or ACL_ERROR_RT_STREAM_ABORT when that work aborted the stream
 * (stream_run): the task just appended was dropped with the rest, and the call that
 * queued it returns the status. Lock held once.
 */
aclError stream_bound(stream *s, const char *api)
{
    if (s->n_pending <= EMU_STREAM_DEPTH)
        return ACL_SUCCESS;
    uint64_t id = s->id;
    aclError rc = stream_run(s, s->seq_done + (s->n_pending - EMU_STREAM_DEPTH), api);
    if (rc == ACL_ERROR_RT_STREAM_ABORT)
        return rc;
    if (rc && stream_alive(s, id) && !s->failed)
        s->failed = rc;
    return ACL_SUCCESS;
}

void stream_append(stream *s, emu_task *t)
{
    t->next = NULL;
    t->stream = s->is_default ? NULL : s;
    if (s->tail)
        s->tail->next = t;
    else
        s->head = t;
    s->tail = t;
    s->n_pending++;
    s->seq_enqueued++;
    t->enqueue_ns = g_link ? now_ns() : 0;
}

EMU_EXPORT aclError emu_stream_enqueue(aclrtStream stream_h, emu_task *task, const char *api)
{
    if (!task) {
        emu_error("%s: internal error: NULL task", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    LOCK();
    aclError rc = runtime_ready(api);
    if (rc) {
        UNLOCK();
        task_release(task);
        return rc;
    }
    stream *s;
    rc = resolve_stream(stream_h, api, &s);
    if (rc) {
        UNLOCK();
        task_release(task);
        return rc;
    }
    stream_append(s, task);
    rc = stream_bound(s, api);
    UNLOCK();
    return rc;
}

/*
 * How the stream and event calls go on after their own argument checks: the calling thread
 * needs a current context (107002), then, with the lock taken, the event ev must be live (when
 * e is given; 107000, or 100000 for NULL) and the stream h must be the calling context's
 * (when s is given; NULL is the default stream: see resolve_stream). On success the caller
 * holds the lock; on an error (recorded) it is released.
 */
aclError lock_handles(const char *api, aclrtStream h, stream **s, aclrtEvent ev, event **e)
{
    if (emu_require_device(api) < 0)
        return rt_failed(ACL_ERROR_RT_CONTEXT_NULL);
    LOCK();
    aclError rc = e ? check_live_handle(api, &g_events, "event", ev) : ACL_SUCCESS;
    if (!rc && e)
        *e = ev;
    if (!rc && s)
        rc = resolve_stream(h, api, s);
    if (rc)
        UNLOCK();
    return rc;
}

EMU_EXPORT aclError aclrtCreateStream(aclrtStream *stream_out)
{
    static const char api[] = "aclrtCreateStream";
    ENTER_WITH_ARG(api, stream_out, "stream");
    REQUIRE_DEVICE(api, dev);
    LOCK();
    context *c = current_ctx();
    if (!c) { /* raced with a reset */
        UNLOCK();
        emu_error("%s: no current context in the calling thread", api);
        return rt_failed(ACL_ERROR_RT_CONTEXT_NULL);
    }
    if (g_devices[dev].explicit_streams >= EMU_MAX_STREAMS_PER_DEVICE) {
        UNLOCK();
        emu_error("%s: device %" PRId32 " already has %d streams, the maximum", api, dev,
                  EMU_MAX_STREAMS_PER_DEVICE);
        return rt_failed(ACL_ERROR_RT_NO_STREAM_RESOURCE);
    }
    stream *s = stream_new(c, false);
    if (!s) {
        UNLOCK();
        emu_error("%s: out of host memory", api);
        return rt_failed(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL);
    }
    *stream_out = s;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtDestroyStream(aclrtStream stream_h)
{
    static const char api[] = "aclrtDestroyStream";
    ENTER(api);
    if (!stream_h) {
        emu_error("%s: stream is NULL: the default stream cannot be destroyed", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    stream *s;
    RETURN_IF_ERROR(lock_handles(api, stream_h, &s, NULL, NULL));
    if (s->is_default) {
        UNLOCK();
        emu_error("%s: stream %p is the default stream of a context: it cannot be destroyed", api, stream_h);
        return rt_failed(ACL_ERROR_RT_PARAM_INVALID);
    }
    aclError rc = stream_run_all(s, api);
    if (rc)
        emu_error("%s: pending work of stream %p failed with error %d (the stream was destroyed anyway)", api,
                  stream_h, rc);
    stream_free(s);
    UNLOCK();
    return rc;
}

/* Run everything queued on the stream h (NULL = the default stream). */
static aclError synchronize_stream(const char *api, aclrtStream h)
{
    LOCK();
    stream *s;
    aclError rc = resolve_stream(h, api, &s);
    if (!rc)
        rc = stream_run_all(s, api); /* host execution never times out */
    uint64_t end = !rc && g_link ? s->end_ns : 0;
    return unlock_then_wait(rc, end);
}

EMU_EXPORT aclError aclrtSynchronizeStream(aclrtStream stream_h)
{
    static const char api[] = "aclrtSynchronizeStream";
    SYNC_ENTER(api, stream_h, false, NULL);
    return synchronize_stream(api, stream_h);
}

EMU_EXPORT aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream_h, int32_t timeout)
{
    static const char api[] = "aclrtSynchronizeStreamWithTimeout";
    SYNC_ENTER(api, stream_h, false, NULL);
    if (timeout < -1) {
        emu_error("%s: timeout %" PRId32 " is invalid: expected -1 (wait forever) or a value >= 0 in milliseconds",
                  api, timeout);
        return ACL_ERROR_INVALID_PARAM;
    }
    return synchronize_stream(api, stream_h);
}

EMU_EXPORT aclError aclrtStreamQuery(aclrtStream stream_h, aclrtStreamStatus *status)
{
    static const char api[] = "aclrtStreamQuery";
    ENTER_WITH_ARG(api, status, "status");
    stream *s;
    RETURN_IF_ERROR(lock_handles(api, stream_h, &s, NULL, NULL));
    aclError rc = ACL_SUCCESS;
    if (!s->head && g_link && now_ns() < s->end_ns) {
        *status = ACL_STREAM_STATUS_NOT_READY; /* ACLNN_EMU_LINK: the work ends later */
    } else if (!s->head) {
        s->query_not_ready_reported = false;
        *status = ACL_STREAM_STATUS_COMPLETE;
    } else if (!s->query_not_ready_reported) {
        /* First look at pending work: report it as still running. */
        s->query_not_ready_reported = true;
        *status = ACL_STREAM_STATUS_NOT_READY;
    } else {
        /* Next look: the work "finished" meanwhile (under ACLNN_EMU_LINK, at its virtual end). */
        rc = stream_run_all(s, api);
        *status = g_link && now_ns() < s->end_ns ? ACL_STREAM_STATUS_NOT_READY : ACL_STREAM_STATUS_COMPLETE;
    }
    UNLOCK();
    return rc;
}

/* aclrtDestroyStreamForce (hicann/runtime acl_rt.h; docs/zh/api_ref/06_stream_management.md):
 * destroys the stream without waiting for its unfinished work, which is dropped unrun. */
EMU_EXPORT aclError aclrtDestroyStreamForce(aclrtStream stream_h)
{
    static const char api[] = "aclrtDestroyStreamForce";
    ENTER(api);
    if (!stream_h) {
        emu_error("%s: stream is NULL: the default stream cannot be destroyed", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    stream *s;
    RETURN_IF_ERROR(lock_handles(api, stream_h, &s, NULL, NULL));
    if (s->is_default) {
        UNLOCK();
        emu_error("%s: stream %p is the default stream of a context: it cannot be destroyed", api, stream_h);
        return rt_failed(ACL_ERROR_RT_PARAM_INVALID);
    }
    stream_free(s);
    UNLOCK();
    return ACL_SUCCESS;
}

/* aclrtSynchronizeDeviceWithTimeout (acl_rt.h): as aclrtSynchronizeDevice, whose host
 * execution never times out; timeout -1 waits forever, otherwise it is >= 0 ms. */
EMU_EXPORT aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout)
{
    static const char api[] = "aclrtSynchronizeDeviceWithTimeout";
    ENTER(api);
    if (timeout < -1) {
        emu_error("%s: timeout %" PRId32 " is invalid: expected -1 (wait forever) or a value >= 0 in milliseconds",
                  api, timeout);
        return ACL_ERROR_INVALID_PARAM;
    }
    return aclrtSynchronizeDevice();
}

/* aclrtStreamGetId (acl_rt.h): a number naming the stream (NULL: the default stream). */
EMU_EXPORT aclError aclrtStreamGetId(aclrtStream stream_h, int32_t *streamId)
{
    static const char api[] = "aclrtStreamGetId";
    ENTER_WITH_ARG(api, streamId, "streamId");
    stream *s;
    RETURN_IF_ERROR(lock_handles(api, stream_h, &s, NULL, NULL));
    *streamId = (int32_t)(s->id & 0x7fffffff);
    UNLOCK();
    return ACL_SUCCESS;
}

/* aclrtSetStreamOverflowSwitch / aclrtGetStreamOverflowSwitch (acl_rt.h: flag 0 disables,
 * 1 enables the stream's overflow detection in saturation mode): kept and read back; host
 * arithmetic reports no overflow either way. */
EMU_EXPORT aclError aclrtSetStreamOverflowSwitch(aclrtStream stream_h, uint32_t flag)
{
    static const char api[] = "aclrtSetStreamOverflowSwitch";
    ENTER(api);
    if (flag > 1) {
        emu_error("%s: flag %" PRIu32 " is invalid: 0 (disable) or 1 (enable)", api, flag);
        return ACL_ERROR_INVALID_PARAM;
    }
    stream *s;
    RETURN_IF_ERROR(lock_handles(api, stream_h, &s, NULL, NULL));
    s->overflow = flag;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtGetStreamOverflowSwitch(aclrtStream stream_h, uint32_t *flag)
{
    static const char api[] = "aclrtGetStreamOverflowSwitch";
    ENTER_WITH_ARG(api, flag, "flag");
    stream *s;
    RETURN_IF_ERROR(lock_handles(api, stream_h, &s, NULL, NULL));
    *flag = s->overflow;
    UNLOCK();
    return ACL_SUCCESS;
}

/* aclrtSetStreamFailureMode (acl_rt.h: ACL_CONTINUE_ON_FAILURE 0, ACL_STOP_ON_FAILURE 1): kept;
 * a failed task here fails its stream's next synchronisation in either mode. */
EMU_EXPORT aclError aclrtSetStreamFailureMode(aclrtStream stream_h, uint64_t mode)
{
    static const char api[] = "aclrtSetStreamFailureMode";
    ENTER(api);
    if (mode > 1) {
        emu_error("%s: mode %" PRIu64 " is invalid: ACL_CONTINUE_ON_FAILURE (0) or ACL_STOP_ON_FAILURE (1)", api,
                  mode);
        return ACL_ERROR_INVALID_PARAM;
    }
    stream *s;
    RETURN_IF_ERROR(lock_handles(api, stream_h, &s, NULL, NULL));
    s->failure_mode = mode;
    UNLOCK();
    return ACL_SUCCESS;
}

typedef struct {
    emu_task base;
    void (*fn)(void *);
    void *args;
} host_func_task;

static aclError host_func_run(emu_task *t)
{
    host_func_task *h = (host_func_task *)t;
    h->fn(h->args);
    return ACL_SUCCESS;
}

/* aclrtLaunchHostFunc (acl_rt.h, aclrtHostFunc: void (*)(void *args)): fn(args) runs on the
 * host in the stream's order, when the stream's work runs (at its synchronisation or the
 * queue-depth bound), in the thread that runs it. */
EMU_EXPORT aclError aclrtLaunchHostFunc(aclrtStream stream_h, void (*fn)(void *), void *args)
{
    static const char api[] = "aclrtLaunchHostFunc";
    ENTER_WITH_ARG(api, fn, "fn");
    host_func_task *t = calloc(1, sizeof *t);
    if (!t) {
        emu_error("%s: out of host memory", api);
        return rt_failed(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL);
    }
    stream *s;
    aclError rc = lock_handles(api, stream_h, &s, NULL, NULL);
    if (rc) {
        free(t);
        return rc;
    }
    t->base.run = host_func_run;
    t->base.release = task_free;
    t->base.name = api;
    t->fn = fn;
    t->args = args;
    stream_append(s, &t->base);
    rc = stream_bound(s, api);
    UNLOCK();
    return rc;
}

/*
 * aclmdlRICaptureGetInfo (hicann/runtime 681ef7610 src/acl/aclrt_impl/model_ri.cpp,
 * aclmdlRICaptureGetInfoImpl: stream NULL, or status and modelRI both NULL, is
 * ACL_ERROR_INVALID_PARAM; then the stream's capture state, written where a pointer is given).
 * Graph capture is out of scope (aclmdlRICaptureBegin returns 207000), so no stream is ever
 * capturing: ACL_MODEL_RI_CAPTURE_STATUS_NONE (0) and no model. torch_npu asks it around every
 * allocation and stream operation on the SoCs that support capture.
 */
EMU_EXPORT aclError aclmdlRICaptureGetInfo(aclrtStream stream_h, int32_t *status, void **modelRI)
{
    static const char api[] = "aclmdlRICaptureGetInfo";
    ENTER_WITH_ARG(api, stream_h, "stream");
    if (!status && !modelRI) {
        emu_error("%s: status and modelRI are both NULL", api);
        return ACL_ERROR_INVALID_PARAM;
    }
    stream *s;
    RETURN_IF_ERROR(lock_handles(api, stream_h, &s, NULL, NULL));
    UNLOCK();
    if (status)
        *status = 0; /* ACL_MODEL_RI_CAPTURE_STATUS_NONE */
    if (modelRI)
        *modelRI = NULL;
    return ACL_SUCCESS;
}
