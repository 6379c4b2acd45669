/*
 * The runtime's global state (declared, with what each holds, in rt_internal.h).
 */
#include "rt_internal.h"

pthread_mutex_t g_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
pthread_cond_t g_task_done = PTHREAD_COND_INITIALIZER;

/*
 * fork() in a threaded program: the runtime's lock is taken before, then the libraries' own
 * mutexes (emu_fork_guard), so that the child's copy of the state is whole and unlocked. In
 * the child (one thread, the forking one) the locks and the condition are made anew, and
 * streams whose task another thread was running are aborted (streams_after_fork).
 */
#define FORK_GUARDED_MAX 16
static pthread_mutex_t *g_fork_guarded[FORK_GUARDED_MAX];
static int g_fork_guarded_count;

EMU_EXPORT void emu_fork_guard(pthread_mutex_t *mu)
{
    int slot = __atomic_fetch_add(&g_fork_guarded_count, 1, __ATOMIC_ACQ_REL);
    if (slot < FORK_GUARDED_MAX)
        __atomic_store_n(&g_fork_guarded[slot], mu, __ATOMIC_RELEASE);
    else
        abort(); /* a build with more guarded mutexes than slots: raise FORK_GUARDED_MAX */
}

static int fork_guarded_count(void)
{
    int count = __atomic_load_n(&g_fork_guarded_count, __ATOMIC_ACQUIRE);
    return count < FORK_GUARDED_MAX ? count : FORK_GUARDED_MAX;
}

static void fork_prepare(void)
{
    LOCK();
    for (int i = 0, n = fork_guarded_count(); i < n; i++)
        if (g_fork_guarded[i])
            pthread_mutex_lock(g_fork_guarded[i]);
}

static void fork_parent(void)
{
    for (int i = fork_guarded_count() - 1; i >= 0; i--)
        if (g_fork_guarded[i])
            pthread_mutex_unlock(g_fork_guarded[i]);
    UNLOCK();
}

static void fork_child(void)
{
    for (int i = 0, n = fork_guarded_count(); i < n; i++)
        if (g_fork_guarded[i])
            pthread_mutex_init(g_fork_guarded[i], NULL);
    pthread_mutexattr_t recursive;
    pthread_mutexattr_init(&recursive);
    pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g_mu, &recursive);
    pthread_mutexattr_destroy(&recursive);
    pthread_cond_init(&g_task_done, NULL);
    LOCK();
    streams_after_fork();
    UNLOCK();
}

static void install_fork_handlers(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void fork_handlers_install(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_fork_handlers);
}

bool g_inited;
bool g_started;
bool g_finalized;
uint64_t g_init_refs;
char g_soc[64] = "Ascend910B3";
bool g_bf16 = true;
int32_t g_dev_count = 1;
int32_t g_phys_count = 1;

visibility g_visibility;
int32_t g_visible_ids[EMU_MAX_DEVICES];
char g_visible_value[EMU_VISIBLE_MAX_LEN + 1];
uint64_t g_dev_capacity = 16ull << 30;
size_t g_quarantine_max = EMU_QUARANTINE_DEFAULT;
uint64_t g_op_cache_epoch;

bool g_link;
uint64_t g_link_latency_ns;
double g_link_bytes_per_ns;

device_state g_devices[EMU_MAX_DEVICES];
registry g_ctxs, g_streams, g_events;

block_list g_dev_mem, g_host_mem, g_quarantine;
uint64_t g_quarantine_bytes;

int64_t g_live_device_bytes, g_peak_device_bytes;
int64_t g_h2d, g_d2h, g_d2d, g_malloc_calls;
int64_t g_memcpy_calls, g_sync_calls;
int64_t g_counters[EMU_COUNTER_COUNT];

__thread context *t_ctx;
