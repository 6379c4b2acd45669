/*
 * The runtime's memory blocks: every aclrtMalloc and aclrtMallocHost allocation is a mapping
 * of its own, ending next to a guard page, and the lists of them answer which allocation holds
 * an address (emu_devmem_*).
 *
 * Quarantine of freed device memory: aclrtFree keeps a block's address range
 * reserved (never handed out by aclrtMalloc) until ACLNN_EMU_QUARANTINE
 * (default EMU_QUARANTINE_DEFAULT) more blocks have been freed, or keeping it
 * would reserve more than EMU_QUARANTINE_MAX_MAPPED bytes of address space,
 * or the host refuses a new mapping (aclrtMalloc then releases quarantined
 * blocks and retries); the oldest freed goes first. Quarantined blocks are
 * not device memory in use: they count neither against the device capacity
 * nor in aclrtGetMemInfo or the live figures of aclemuGetStats. Small blocks
 * are poisoned (every byte EMU_POISON_BYTE: NaN for every float type) and
 * kept read-only, within EMU_POISON_BUDGET bytes; the others have their pages
 * dropped and become inaccessible (PROT_NONE), so they cost no memory.
 * Deferred work also checks the allocation id of every range it touches
 * (emu_devmem_still_valid), which catches a freed block even once its address
 * has been handed out again.
 */
#include "rt_internal.h"

#include <sys/mman.h>
#include <unistd.h>

#define EMU_QUARANTINE_MAX_MAPPED ((uint64_t)64 << 30)
#define EMU_POISON_BYTE 0xFF
#define EMU_POISON_MAX_BLOCK ((size_t)1 << 20) /* larger blocks are dropped, not poisoned */
#define EMU_POISON_BUDGET ((uint64_t)16 << 20) /* poisoned bytes kept at most */

static uint64_t g_next_alloc_id = 1;
static uint64_t g_free_seq;
static uint64_t g_quarantine_mapped; /* mapping lengths of the quarantined blocks */
static uint64_t g_poisoned_bytes;    /* requested bytes of the poisoned ones */

static size_t page_size(void)
{
    static size_t ps;
    if (!ps) {
        long v = sysconf(_SC_PAGESIZE);
        ps = v > 0 ? (size_t)v : 4096;
    }
    return ps;
}

/* index of the last block with map <= p, or -1 */
static ptrdiff_t blocks_floor(const block_list *l, const void *p)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((const char *)l->items[mid].map <= (const char *)p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ptrdiff_t)lo - 1;
}

/* block whose mapping (allocation, padding or guard page) contains p */
mem_block *blocks_find_mapping(const block_list *l, const void *p)
{
    ptrdiff_t i = blocks_floor(l, p);
    if (i < 0)
        return NULL;
    mem_block *b = &l->items[i];
    if ((const char *)p < b->map + b->map_len)
        return b;
    return NULL;
}

ptrdiff_t blocks_find_base(const block_list *l, const void *p)
{
    ptrdiff_t i = blocks_floor(l, p);
    if (i >= 0 && l->items[i].base == (const char *)p)
        return i;
    return -1;
}

/*
 * Map a new block; returns false on mmap failure. huge: an aclrtMalloc policy that asks for huge
 * pages (hicann/runtime docs/api_docs/aclrtMemMallocPolicy.md: ACL_MEM_MALLOC_HUGE_FIRST takes 2M
 * pages for requests above 1M, normal pages up to 1M; ACL_MEM_TYPE_LOW/HIGH_BAND_WIDTH alone mean
 * HUGE_FIRST): the host is asked for transparent huge pages there, a hint it may ignore.
 */
#define EMU_HUGE_ABOVE ((size_t)1 << 20)

bool block_map(size_t size, int32_t device, mem_block *out, bool huge)
{
    size_t ps = page_size();
    if (size > SIZE_MAX - 2 * ps)
        return false;
    size_t usable = (size + ps - 1) / ps * ps;
    size_t len = usable + ps;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return false;
    mprotect((char *)m + usable, ps, PROT_NONE); /* guard page: host overruns fault */
    if (huge && size > EMU_HUGE_ABOVE)
        madvise(m, usable, MADV_HUGEPAGE);
    size_t rounded = (size + 63) / 64 * 64;
    memset(out, 0, sizeof *out);
    out->map = m;
    out->map_len = len;
    out->base = (char *)m + usable - rounded; /* 64-byte aligned, ends next to the guard */
    out->size = size;
    out->device = device;
    out->id = g_next_alloc_id++;
    return true;
}

bool blocks_insert(block_list *l, const mem_block *b)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        mem_block *ni = realloc(l->items, cap * sizeof *ni);
        if (!ni)
            return false;
        l->items = ni;
        l->cap = cap;
    }
    ptrdiff_t i = blocks_floor(l, b->map) + 1;
    memmove(l->items + i + 1, l->items + i, (l->n - (size_t)i) * sizeof *l->items);
    l->items[i] = *b;
    l->n++;
    return true;
}

/* Unlink block i from l, its mapping left in place. */
static mem_block blocks_take_at(block_list *l, size_t i)
{
    mem_block b = l->items[i];
    memmove(l->items + i, l->items + i + 1, (l->n - i - 1) * sizeof *l->items);
    l->n--;
    return b;
}

void blocks_remove_at(block_list *l, size_t i)
{
    mem_block b = blocks_take_at(l, i);
    munmap(b.map, b.map_len);
}

/*
 * The block of l holding all of [ptr, ptr + bytes), or NULL. bytes == 0 asks
 * only that ptr be inside (or one past the end of) it.
 */
static const mem_block *blocks_holding(const block_list *l, const void *ptr, uint64_t bytes)
{
    if (!ptr)
        return NULL;
    ptrdiff_t i = blocks_floor(l, ptr);
    if (i < 0)
        return NULL;
    const mem_block *b = &l->items[i];
    const char *p = ptr;
    if (p < b->base)
        return NULL;
    uint64_t off = (uint64_t)(p - b->base);
    bool ok = bytes == 0 ? off <= b->size : off < b->size && bytes <= b->size - off;
    return ok ? b : NULL;
}

/* ---- quarantine (see the top of this file) ---- */

/* Unmap quarantined block i: its address may be handed out again. Lock held. */
static void quarantine_release_at(size_t i)
{
    const mem_block *b = &g_quarantine.items[i];
    g_quarantine_bytes -= b->size;
    g_quarantine_mapped -= b->map_len;
    if (b->poisoned)
        g_poisoned_bytes -= b->size;
    blocks_remove_at(&g_quarantine, i);
}

/* Release the block freed longest ago; false when the quarantine is empty. Lock held. */
bool quarantine_release_oldest(void)
{
    if (g_quarantine.n == 0)
        return false;
    size_t oldest = 0;
    for (size_t i = 1; i < g_quarantine.n; i++)
        if (g_quarantine.items[i].freed_seq < g_quarantine.items[oldest].freed_seq)
            oldest = i;
    quarantine_release_at(oldest);
    return true;
}

void quarantine_flush(void)
{
    while (g_quarantine.n)
        quarantine_release_at(g_quarantine.n - 1);
    free(g_quarantine.items);
    memset(&g_quarantine, 0, sizeof g_quarantine);
}

/*
 * Take a freed device block (already unlinked from g_dev_mem) into the
 * quarantine: poison it or drop its pages, and keep its address range
 * reserved, releasing the oldest blocks beyond the bounds. Lock held.
 */
static void quarantine_add(mem_block b)
{
    if (g_quarantine_max == 0 || b.map_len > EMU_QUARANTINE_MAX_MAPPED) {
        munmap(b.map, b.map_len);
        return;
    }
    size_t usable = b.map_len - page_size(); /* the guard page stays as it is */
    b.poisoned = b.size <= EMU_POISON_MAX_BLOCK && g_poisoned_bytes + b.size <= EMU_POISON_BUDGET;
    if (b.poisoned) {
        memset(b.base, EMU_POISON_BYTE, b.size);
        mprotect(b.map, usable, PROT_READ);
    } else {
        madvise(b.map, usable, MADV_DONTNEED);
        mprotect(b.map, usable, PROT_NONE);
    }
    b.freed_seq = ++g_free_seq;
    while (g_quarantine.n >= g_quarantine_max || g_quarantine_mapped + b.map_len > EMU_QUARANTINE_MAX_MAPPED)
        if (!quarantine_release_oldest())
            break;
    if (!blocks_insert(&g_quarantine, &b)) {
        munmap(b.map, b.map_len); /* no bookkeeping memory: release it at once */
        return;
    }
    g_quarantine_bytes += b.size;
    g_quarantine_mapped += b.map_len;
    if (b.poisoned)
        g_poisoned_bytes += b.size;
}

/* Free live device block i: it leaves the device's used memory and enters the quarantine. Lock held. */
void dev_block_retire_at(size_t i)
{
    mem_block *b = &g_dev_mem.items[i];
    g_devices[b->device].used_bytes -= b->size;
    g_live_device_bytes -= (int64_t)b->size;
    quarantine_add(blocks_take_at(&g_dev_mem, i));
}

EMU_EXPORT bool emu_devmem_contains(const void *ptr, uint64_t bytes, int32_t *device)
{
    LOCK();
    const mem_block *b = blocks_holding(&g_dev_mem, ptr, bytes);
    if (b && device)
        *device = b->device;
    UNLOCK();
    return b != NULL;
}

/* Pin [ptr, ptr + bytes) against the blocks of l. Lock held. */
bool range_pin(const block_list *l, const void *ptr, uint64_t bytes, emu_range *out)
{
    const mem_block *b = bytes > 0 ? blocks_holding(l, ptr, bytes) : NULL;
    out->ptr = ptr;
    out->bytes = bytes;
    out->alloc_id = b ? b->id : 0;
    out->device = b ? b->device : -1;
    return b != NULL;
}

EMU_EXPORT bool emu_devmem_pin(const void *ptr, uint64_t bytes, emu_range *out)
{
    LOCK();
    bool ok = range_pin(&g_dev_mem, ptr, bytes, out);
    UNLOCK();
    return ok;
}

/*
 * Whether r, pinned against the blocks of l, still lies in the same live
 * allocation; if not, records why (see emu_devmem_still_valid). host: l is
 * the aclrtMallocHost list. Lock held.
 */
static bool range_live(const block_list *l, const emu_range *r)
{
    const mem_block *b = r->alloc_id ? blocks_holding(l, r->ptr, r->bytes) : NULL;
    return b && b->id == r->alloc_id;
}

bool range_still_valid(const block_list *l, bool host, const emu_task *task, const char *what,
                       const emu_range *r)
{
    if (range_live(l, r))
        return true;
    const char *memory = host ? "pinned host memory" : "device memory";
    const char *free_api = host ? "aclrtFreeHost" : "aclrtFree";
    char why[256];
    if (r->alloc_id == 0) {
        snprintf(why, sizeof why, "the range was not inside one live %s allocation when the work was queued "
                 "(%s, never allocated, already freed, or past the end of its allocation)",
                 host ? "aclrtMallocHost" : "aclrtMalloc", host ? "pageable memory" : "host memory");
    } else {
        const mem_block *now = blocks_holding(l, r->ptr, 0);
        if (now)
            snprintf(why, sizeof why, "%s was freed (%s) while the work was pending, and its address now belongs "
                     "to another allocation (allocation id %" PRIu64 ", the work's was %" PRIu64 ")", memory,
                     free_api, now->id, r->alloc_id);
        else
            snprintf(why, sizeof why, "%s was freed (%s) while the work was pending", memory, free_api);
    }
    char where[64];
    if (task->stream)
        snprintf(where, sizeof where, "stream %p", task->stream);
    else
        snprintf(where, sizeof where, "the default stream");
    emu_error("%s queued on %s: %s at %p (%" PRIu64 " bytes): %s", task->name ? task->name : "work", where, what,
              r->ptr, r->bytes, why);
    return false;
}

EMU_EXPORT bool emu_devmem_still_live(const emu_range *r)
{
    LOCK();
    bool ok = range_live(&g_dev_mem, r);
    UNLOCK();
    return ok;
}

EMU_EXPORT bool emu_devmem_still_valid(const emu_task *task, const char *what, const emu_range *r)
{
    LOCK();
    bool ok = range_still_valid(&g_dev_mem, false, task, what, r);
    UNLOCK();
    return ok;
}
