/*
 * The runtime's per-thread error text: emu_error appends, aclGetRecentErrMsg returns and
 * clears it (ACLNN_EMU_VERBOSE=1 also prints each message to stderr).
 */
#include "rt_internal.h"

#include <stdarg.h>

#define EMU_ERR_MAX_MESSAGES 64

typedef struct {
    char *msgs[EMU_ERR_MAX_MESSAGES]; /* oldest first */
    size_t n;
    char *returned; /* what the last aclGetRecentErrMsg returned */
} errbuf;

static pthread_key_t g_err_key;
static pthread_once_t g_err_once = PTHREAD_ONCE_INIT;
static bool g_verbose;

static void errbuf_free(void *p)
{
    errbuf *e = p;
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++)
        free(e->msgs[i]);
    free(e->returned);
    free(e);
}

static void err_key_init(void)
{
    pthread_key_create(&g_err_key, errbuf_free);
    const char *v = getenv("ACLNN_EMU_VERBOSE");
    g_verbose = v && *v && strcmp(v, "0") != 0;
}

static errbuf *get_errbuf(void)
{
    pthread_once(&g_err_once, err_key_init);
    errbuf *e = pthread_getspecific(g_err_key);
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e)
            return NULL;
        pthread_setspecific(g_err_key, e);
    }
    return e;
}

EMU_EXPORT void emu_error(const char *fmt, ...)
{
    errbuf *e = get_errbuf();
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    int r = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (r < 0 || !msg)
        return;
    if (g_verbose)
        fprintf(stderr, "[aclnn-emu] %s\n", msg);
    if (!e) {
        free(msg);
        return;
    }
    if (e->n == EMU_ERR_MAX_MESSAGES) { /* drop the oldest */
        free(e->msgs[0]);
        memmove(e->msgs, e->msgs + 1, (EMU_ERR_MAX_MESSAGES - 1) * sizeof e->msgs[0]);
        e->n--;
    }
    e->msgs[e->n++] = msg;
}

EMU_EXPORT const char *aclGetRecentErrMsg(void)
{
    /* A fault here makes the call return NULL (its documented failure value);
     * the fault message then waits for the next call. */
    if (emu_fault("aclGetRecentErrMsg"))
        return NULL;
    errbuf *e = get_errbuf();
    if (!e)
        return NULL;
    free(e->returned);
    e->returned = NULL;
    if (e->n == 0)
        return NULL;
    size_t total = 1;
    for (size_t i = 0; i < e->n; i++)
        total += strlen(e->msgs[i]) + 1;
    char *out = malloc(total);
    if (!out)
        return NULL;
    char *p = out;
    for (size_t i = e->n; i-- > 0;) { /* newest first */
        size_t len = strlen(e->msgs[i]);
        memcpy(p, e->msgs[i], len);
        p += len;
        if (i > 0)
            *p++ = '\n';
        free(e->msgs[i]);
    }
    *p = '\0';
    e->n = 0;
    e->returned = out;
    return out;
}

/*
 * The thread's last runtime failure, as CANN keeps it (hicann/runtime 681ef7610): a failing rt*
 * call stores its external status in a thread-local slot (src/runtime/api/api_global_err.cc,
 * GetRtExtErrCodeAndSetGlobalErr, reached through ERROR_RETURN_WITH_EXT_ERRCODE of
 * src/runtime/api/api_c.h), so ACL_ERROR_RT_* statuses set it; the ACL layer's own argument
 * checks (ACL_REQUIRES_NOT_NULL and the like, statuses 100000 to 100999) return before any rt*
 * call and leave it. A success never clears it. aclrtGetLastError returns and clears it,
 * aclrtPeekAtLastError returns it (src/acl/aclrt_impl/context.cpp and ApiImpl::GetLastErr /
 * PeekLastErr of src/runtime/api/impl/api_impl.cc); a level other than ACL_RT_THREAD_LEVEL is
 * ACL_ERROR_INVALID_PARAM there (ACL_REQUIRES_PARAM_EQUAL_REPORT). Neither needs aclInit.
 */
static __thread aclError t_last_error;

aclError rt_failed(aclError rc)
{
    if (rc >= ACL_ERROR_RT_PARAM_INVALID)
        t_last_error = rc;
    return rc;
}

static aclError last_error(const char *api, aclrtLastErrLevel level, bool clear)
{
    EMU_RETURN_IF_FAULT(api);
    if (level != ACL_RT_THREAD_LEVEL) {
        emu_error("%s: level %d is invalid: only ACL_RT_THREAD_LEVEL (0) is accepted", api, (int)level);
        return ACL_ERROR_INVALID_PARAM;
    }
    aclError rc = t_last_error;
    if (clear)
        t_last_error = ACL_SUCCESS;
    return rc;
}

EMU_EXPORT aclError aclrtGetLastError(aclrtLastErrLevel level)
{
    return last_error("aclrtGetLastError", level, true);
}

EMU_EXPORT aclError aclrtPeekAtLastError(aclrtLastErrLevel level)
{
    return last_error("aclrtPeekAtLastError", level, false);
}
