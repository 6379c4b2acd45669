/*
 * The runtime's global state (declared, with what each holds, in rt_internal.h).
 */
#include "rt_internal.h"

pthread_mutex_t g_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
pthread_cond_t g_task_done = PTHREAD_COND_INITIALIZER;

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
