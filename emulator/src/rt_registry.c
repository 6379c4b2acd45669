/*
 * The runtime's handle registries: contexts, streams and events are live while registered.
 */
#include "rt_internal.h"

static uint64_t g_next_id = 1; /* handle generation ids, never reused */

static bool reg_add(registry *r, void *p)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        void **ni = realloc(r->items, cap * sizeof *ni);
        if (!ni)
            return false;
        r->items = ni;
        r->cap = cap;
    }
    r->items[r->n++] = p;
    return true;
}

bool reg_has(const registry *r, const void *p)
{
    if (!p)
        return false;
    for (size_t i = 0; i < r->n; i++)
        if (r->items[i] == p)
            return true;
    return false;
}

static void reg_remove(registry *r, const void *p)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->items[i] == p) {
            memmove(r->items + i, r->items + i + 1, (r->n - i - 1) * sizeof *r->items);
            r->n--;
            return;
        }
    }
}

void reg_free(registry *r)
{
    free(r->items);
    r->items = NULL;
    r->n = r->cap = 0;
}

/*
 * A zeroed handle object of `size` bytes, registered in r and given a fresh
 * generation id (the `id` field every handle struct starts with), or NULL when
 * out of host memory. Lock held.
 */
void *handle_new(registry *r, size_t size)
{
    uint64_t *h = calloc(1, size);
    if (!h)
        return NULL;
    if (!reg_add(r, h)) {
        free(h);
        return NULL;
    }
    *h = g_next_id++;
    return h;
}

/*
 * Whether h is a live handle of r; if not, records "<api>: <kind> <h> is not a
 * live <kind> ..." and returns 100000 for NULL, 107000 for any other handle.
 * Lock held.
 */
aclError check_live_handle(const char *api, const registry *r, const char *kind, const void *h)
{
    if (reg_has(r, h))
        return ACL_SUCCESS;
    emu_error("%s: %s %p is not a live %s (never created, already destroyed, or its device was reset)", api, kind,
              h, kind);
    return h ? rt_failed(ACL_ERROR_RT_PARAM_INVALID) : ACL_ERROR_INVALID_PARAM;
}

/* Unregister and free a handle object. Lock held. */
void handle_free(registry *r, void *h)
{
    reg_remove(r, h);
    free(h);
}
