/*
 * The runtime's event API: a record is a task on its stream, done when the stream's work up to it
 * has run.
 */
#include "rt_internal.h"

#include "clients_api.h"

typedef struct {
    emu_task base;
    event *ev;
    uint64_t ev_id;
    uint64_t generation;
} record_task;

aclError record_run(emu_task *t)
{
    record_task *r = (record_task *)t;
    if (reg_has(&g_events, r->ev) && r->ev->id == r->ev_id && r->ev->generation == r->generation) {
        clock_gettime(CLOCK_MONOTONIC, &r->ev->ts);
        r->ev->completed = true;
    }
    return ACL_SUCCESS;
}

/* ACLNN_EMU_LINK: the record t ran at virtual time at_ns. Lock held. */
void record_task_done(emu_task *t, uint64_t at_ns)
{
    record_task *r = (record_task *)t;
    if (reg_has(&g_events, r->ev) && r->ev->id == r->ev_id && r->ev->generation == r->generation) {
        r->ev->done_ns = at_ns;
        r->ev->ts = (struct timespec){(time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u)};
    }
}

EMU_EXPORT aclError aclrtCreateEvent(aclrtEvent *ev)
{
    static const char api[] = "aclrtCreateEvent";
    ENTER_WITH_ARG(api, ev, "event");
    REQUIRE_DEVICE(api, dev);
    LOCK();
    event *e = handle_new(&g_events, sizeof *e);
    if (e) {
        e->device = dev;
        *ev = e;
    }
    UNLOCK();
    if (!e) {
        emu_error("%s: out of host memory", api);
        return rt_failed(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL);
    }
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtDestroyEvent(aclrtEvent ev)
{
    static const char api[] = "aclrtDestroyEvent";
    ENTER(api);
    event *e;
    RETURN_IF_ERROR(lock_handles(api, NULL, NULL, ev, &e));
    handle_free(&g_events, e);
    UNLOCK();
    return ACL_SUCCESS;
}

/* Issue a record of e on s as task t (not consumed on failure). Lock held. */
static aclError record_event(const char *api, event *e, stream *s, record_task *t)
{
    if (e->device != s->device) {
        emu_error("%s: event %p belongs to device %" PRId32 " but stream %p to device %" PRId32, api, (void *)e,
                  e->device, (void *)s, s->device);
        return rt_failed(ACL_ERROR_RT_STREAM_CONTEXT);
    }
    e->generation++;
    e->recorded = true;
    e->completed = false;
    e->not_ready_polls = 0;
    t->base.run = record_run;
    t->base.release = task_free;
    t->base.name = "EventRecord";
    t->ev = e;
    t->ev_id = e->id;
    t->generation = e->generation;
    stream_append(s, &t->base);
    e->rec_stream = s;
    e->rec_stream_id = s->id;
    e->rec_seq = s->seq_enqueued;
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtRecordEvent(aclrtEvent ev, aclrtStream stream_h)
{
    static const char api[] = "aclrtRecordEvent";
    ENTER(api);
    record_task *t = calloc(1, sizeof *t);
    if (!t) {
        emu_error("%s: out of host memory", api);
        return rt_failed(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL);
    }
    stream *s;
    event *e;
    aclError rc = lock_handles(api, stream_h, &s, ev, &e);
    if (!rc) {
        rc = record_event(api, e, s, t);
        if (rc)
            UNLOCK();
    }
    if (rc) {
        free(t);
        return rc;
    }
    rc = stream_bound(s, api); /* an abort there dropped the record too */
    UNLOCK();
    return rc;
}

EMU_EXPORT aclError aclrtSynchronizeEvent(aclrtEvent ev)
{
    static const char api[] = "aclrtSynchronizeEvent";
    SYNC_ENTER(api, NULL, false, ev);
    event *e;
    RETURN_IF_ERROR(lock_handles(api, NULL, NULL, ev, &e));
    aclError rc = ACL_SUCCESS;
    /* Never recorded: nothing to wait for. Recorded on a stream that is gone: its work was run or dropped. */
    stream *s = pending_record_stream(e);
    if (s)
        rc = stream_run(s, e->rec_seq, api);
    uint64_t end = !rc && g_link && e->completed ? e->done_ns : 0;
    return unlock_then_wait(rc, end);
}

/*
 * Whether the work captured by the latest record of ev is done, for the two query APIs.
 * A query does not run pending work: only a synchronisation or the queue-depth bound
 * does, so polling cannot hide a missing synchronisation. A record still pending after
 * EMU_QUERY_PATIENCE queries runs then, so a loop that polls until completion ends as
 * it would on a device. Never recorded: complete (RT doc 07_event_management.md,
 * aclrtRecordEvent: an event with no captured tasks queries as complete).
 */
#define EMU_QUERY_PATIENCE 1024

static aclError query_event(const char *api, aclrtEvent ev, const void *status, bool *complete)
{
    ENTER_WITH_ARG(api, status, "status");
    event *e;
    RETURN_IF_ERROR(lock_handles(api, NULL, NULL, ev, &e));
    aclError rc = ACL_SUCCESS;
    stream *s = pending_record_stream(e);
    if (s && ++e->not_ready_polls > EMU_QUERY_PATIENCE) {
        uint64_t id = s->id;
        rc = stream_run(s, e->rec_seq, api);
        if (rc && rc != ACL_ERROR_RT_STREAM_ABORT && stream_alive(s, id) && !s->failed)
            s->failed = rc; /* and kept for the stream's next synchronisation, as stream_bound does */
    }
    if (!pending_record_stream(e))
        e->not_ready_polls = 0;
    *complete = !rc && !pending_record_stream(e) && !(g_link && e->completed && now_ns() < e->done_ns);
    UNLOCK();
    return rc;
}

/* aclrtQueryEventStatus: ACL_EVENT_RECORDED_STATUS_NOT_READY = 0, _COMPLETE = 1
 * (hicann/runtime include/external/acl/acl_rt.h, aclrtEventRecordedStatus). */
EMU_EXPORT aclError aclrtQueryEventStatus(aclrtEvent ev, aclrtEventRecordedStatus *status)
{
    bool complete = false;
    aclError rc = query_event("aclrtQueryEventStatus", ev, status, &complete);
    if (!rc)
        *status = complete ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    return rc;
}

/* The deprecated aclrtQueryEvent, whose aclrtEventStatus has the opposite values:
 * ACL_EVENT_STATUS_COMPLETE = 0, _NOT_READY = 1 (same header). */
EMU_EXPORT aclError aclrtQueryEvent(aclrtEvent ev, aclrtEventStatus *status)
{
    bool complete = false;
    aclError rc = query_event("aclrtQueryEvent", ev, status, &complete);
    if (!rc)
        *status = complete ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
    return rc;
}

/* Forget the waits of e that have run (their stream ran past them, or is gone). Lock held. */
static void event_prune_waits(event *e)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < e->n_waits; i++) {
        stream *s = e->waits[i].s;
        if (stream_alive(s, e->waits[i].stream_id) && s->seq_done < e->waits[i].seq)
            e->waits[kept++] = e->waits[i];
    }
    e->n_waits = kept;
}

void event_note_wait(event *e, stream *s)
{
    event_prune_waits(e);
    if (s->seq_done >= s->seq_enqueued)
        return; /* nothing queued before it: the wait runs at once */
    if (e->n_waits == EMU_EVENT_WAITS) {
        memmove(e->waits, e->waits + 1, (EMU_EVENT_WAITS - 1) * sizeof e->waits[0]);
        e->n_waits--;
    }
    e->waits[e->n_waits].s = s;
    e->waits[e->n_waits].stream_id = s->id;
    e->waits[e->n_waits].seq = s->seq_enqueued;
    e->n_waits++;
}

/*
 * aclrtQueryEventWaitStatus (hicann/runtime 681ef7610: src/acl/aclrt_impl/event.cpp,
 * aclrtQueryEventWaitStatusImpl: event, then status, NULL is ACL_ERROR_INVALID_PARAM;
 * ApiImplEvent::EventQueryWaitStatus of src/runtime/api/impl/api_impl_event_common.cc: an
 * event created with exactly ACL_EVENT_EXTERNAL or ACL_EVENT_IPC is
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT, returned without setting the thread's last error;
 * Event::QueryEventWaitStatus of src/runtime/core/src/event/event.cc: complete when no wait
 * issued on the event is still pending). A wait here is pending while its stream has not yet
 * run the work queued before it (aclrtStreamWaitEvent). Like the other queries, this runs no
 * work; it needs no current context.
 */
EMU_EXPORT aclError aclrtQueryEventWaitStatus(aclrtEvent ev, aclrtEventWaitStatus *status)
{
    static const char api[] = "aclrtQueryEventWaitStatus";
    ENTER_WITH_ARG(api, ev, "event");
    REQUIRE_ARG(api, status, "status");
    LOCK();
    event *e = ev;
    aclError rc = check_live_handle(api, &g_events, "event", ev);
    if (rc) {
        UNLOCK();
        return rc;
    }
    uint32_t flags = e->flags;
    if (flags == EMU_ACL_EVENT_EXTERNAL || flags == EMU_ACL_EVENT_IPC) {
        UNLOCK();
        emu_error("%s: event %p was created with flag %s: its wait status cannot be queried", api, ev,
                  flags == EMU_ACL_EVENT_EXTERNAL ? "ACL_EVENT_EXTERNAL" : "ACL_EVENT_IPC");
        return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    }
    event_prune_waits(e);
    *status = e->n_waits ? ACL_EVENT_WAIT_STATUS_NOT_READY : ACL_EVENT_WAIT_STATUS_COMPLETE;
    UNLOCK();
    return ACL_SUCCESS;
}

EMU_EXPORT aclError aclrtEventElapsedTime(float *ms, aclrtEvent start, aclrtEvent end)
{
    static const char api[] = "aclrtEventElapsedTime";
    ENTER_WITH_ARG(api, ms, "ms");
    REQUIRE_CONTEXT(api);
    LOCK();
    const char *names[2] = {"startEvent", "endEvent"};
    event *evs[2] = {start, end};
    for (int i = 0; i < 2; i++) {
        if (!reg_has(&g_events, evs[i])) {
            UNLOCK();
            emu_error("%s: %s %p is not a live event", api, names[i], (void *)evs[i]);
            return evs[i] ? rt_failed(ACL_ERROR_RT_PARAM_INVALID) : ACL_ERROR_INVALID_PARAM;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!evs[i]->recorded) {
            UNLOCK();
            emu_error("%s: %s %p was never recorded (call aclrtRecordEvent)", api, names[i], (void *)evs[i]);
            return rt_failed(ACL_ERROR_RT_PARAM_INVALID);
        }
        if (!evs[i]->completed) {
            UNLOCK();
            /* Error code choice: ACL_ERROR_RT_EVENT_NOT_COMPLETE (507006, RT doc 25-01). */
            emu_error("%s: %s %p has not completed yet: synchronize its stream or the event first", api,
                      names[i], (void *)evs[i]);
            return rt_failed(ACL_ERROR_RT_EVENT_NOT_COMPLETE);
        }
    }
    double d = (double)(evs[1]->ts.tv_sec - evs[0]->ts.tv_sec) * 1e3 +
               (double)(evs[1]->ts.tv_nsec - evs[0]->ts.tv_nsec) / 1e6;
    *ms = (float)d;
    UNLOCK();
    return ACL_SUCCESS;
}

/*
 * aclrtStreamWaitEvent (hicann/runtime acl_rt.h; docs/zh/api_ref/07_event_management.md): work
 * queued on stream after this call starts only once the latest record of event has run. Here
 * the wait runs that record's stream up to the record now, so whatever the waiting stream runs
 * later finds it done; a failure of that work is kept for its own stream's next
 * synchronisation, where CANN reports it. An event never recorded has nothing to wait for.
 */
EMU_EXPORT aclError aclrtStreamWaitEvent(aclrtStream stream_h, aclrtEvent ev)
{
    static const char api[] = "aclrtStreamWaitEvent";
    ENTER(api);
    stream *s;
    event *e;
    RETURN_IF_ERROR(lock_handles(api, stream_h, &s, ev, &e));
    stream *rec = pending_record_stream(e);
    if (rec) {
        uint64_t id = rec->id;
        aclError work = stream_run(rec, e->rec_seq, api);
        if (work && work != ACL_ERROR_RT_STREAM_ABORT && stream_alive(rec, id) && !rec->failed)
            rec->failed = work;
    }
    event_note_wait(e, s);
    UNLOCK();
    return ACL_SUCCESS;
}

/*
 * aclrtResetEvent (same header): the event goes back to its state before any record, as a
 * task of stream in CANN; with the records of this emulator taking effect at their stream's
 * run, resetting at once is what a later query or wait observes.
 */
EMU_EXPORT aclError aclrtResetEvent(aclrtEvent ev, aclrtStream stream_h)
{
    static const char api[] = "aclrtResetEvent";
    ENTER(api);
    stream *s;
    event *e;
    RETURN_IF_ERROR(lock_handles(api, stream_h, &s, ev, &e));
    e->generation++; /* a record still queued no longer completes it */
    e->recorded = false;
    e->completed = false;
    e->rec_stream = NULL;
    e->not_ready_polls = 0;
    UNLOCK();
    return ACL_SUCCESS;
}

/*
 * aclrtEventGetTimestamp (hicann/runtime 681ef7610 src/acl/aclrt_impl/event.cpp: timestamp is
 * checked before event, both for NULL; docs/zh/api_ref/07_event_management.md: the time the
 * event's latest record ran, in microseconds since the system started, read after the
 * record's stream was synchronised). Here the record's completion time on the runtime's
 * monotonic clock (the modelled time under ACLNN_EMU_LINK), as aclrtEventElapsedTime reads it;
 * an event not recorded or not yet run fails as there.
 */
EMU_EXPORT aclError aclrtEventGetTimestamp(aclrtEvent ev, uint64_t *timestamp)
{
    static const char api[] = "aclrtEventGetTimestamp";
    ENTER_WITH_ARG(api, timestamp, "timestamp");
    REQUIRE_ARG(api, ev, "event");
    REQUIRE_CONTEXT(api);
    LOCK();
    event *e = ev;
    if (!reg_has(&g_events, e)) {
        UNLOCK();
        emu_error("%s: event %p is not a live event", api, (void *)e);
        return rt_failed(ACL_ERROR_RT_PARAM_INVALID);
    }
    if (!e->recorded) {
        UNLOCK();
        emu_error("%s: event %p was never recorded (call aclrtRecordEvent)", api, (void *)e);
        return rt_failed(ACL_ERROR_RT_PARAM_INVALID);
    }
    if (!e->completed) {
        UNLOCK();
        /* Error code choice: as aclrtEventElapsedTime's, ACL_ERROR_RT_EVENT_NOT_COMPLETE. */
        emu_error("%s: event %p has not completed yet: synchronize its stream or the event first", api,
                  (void *)e);
        return rt_failed(ACL_ERROR_RT_EVENT_NOT_COMPLETE);
    }
    *timestamp = (uint64_t)e->ts.tv_sec * 1000000u + (uint64_t)e->ts.tv_nsec / 1000u;
    UNLOCK();
    return ACL_SUCCESS;
}
