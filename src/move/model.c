/* SPDX-License-Identifier: BSD-3-Clause */
/* The method model: CUDA-awareness of the system MPI, the system table of this machine, the
 * predicted time of each method and the choice, remembered per (run, size, count, peer,
 * direction). */
#include "move/model.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda.h"
#include "move/state.h"
#include "move/systable.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"

/* This module's part of the layer's state. */
static __typeof__(tj_move_state.model) *const model_state = &tj_move_state.model;

/* The defaults without a table (docs/send-paths.md explains them): below these packed sizes the
 * kernel writes (or reads) mapped host memory itself; at and above, device memory is handed to a
 * CUDA-aware MPI, or packed on the device and copied to the host in one DMA copy. */
#define DEFAULT_ONESHOT_AWARE   ((int64_t)64 << 10)
#define DEFAULT_ONESHOT_UNAWARE ((int64_t)256 << 10)

const char *tj_method_name(tj_method_t method)
{
    switch (method) {
    case TJ_METHOD_AUTO:
        return "auto";
    case TJ_METHOD_DEVICE:
        return "device";
    case TJ_METHOD_ONESHOT:
        return "oneshot";
    case TJ_METHOD_STAGED:
        return "staged";
    }
    return "unknown";
}

/* --- CUDA-awareness ------------------------------------------------------------------------- */

static void detect_aware(void)
{
    /* Looked up at run time: the library is built against one MPI's headers but must answer
     * for whichever MPI the job runs (and mpi-ext.h is Open MPI's alone). */
    int (*ompi)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support");
    int (*mpich)(int, int *) = (int (*)(int, int *))dlsym(RTLD_DEFAULT, "MPIX_GPU_query_support");
    int flag = 0;

    if (ompi != NULL) {
        model_state->aware_detected = ompi() == 1;
        model_state->aware_query = "MPIX_Query_cuda_support()";
    } else if (mpich != NULL && mpich(0 /* MPIX_GPU_SUPPORT_CUDA */, &flag) == 0) {
        model_state->aware_detected = flag != 0;
        model_state->aware_query = "MPIX_GPU_query_support()";
    }
    tj_log_debug("system mpi %s cuda-aware (%s)", model_state->aware_detected ? "is" : "is not",
                 ompi != NULL    ? "MPIX_Query_cuda_support"
                 : mpich != NULL ? "MPIX_GPU_query_support"
                                 : "no query function");
}

bool tj_model_cuda_aware(void)
{
    tj_tristate_t s = tj_config()->cuda_aware;

    if (s != TJ_TRI_AUTO)
        return s == TJ_TRI_YES;
    pthread_once(&model_state->aware_once, detect_aware);
    return model_state->aware_detected;
}

void tj_model_check_settings(void)
{
    if (tj_config()->cuda_aware != TJ_TRI_YES)
        return;
    /* The setting wins (an MPI may not know its own build), but handing device memory to an
     * MPI that says it cannot take it usually crashes it: say so, once. */
    pthread_once(&model_state->aware_once, detect_aware);
    if (model_state->aware_query != NULL && !model_state->aware_detected)
        tj_log_warn_job("TYPEJIT_CUDA_AWARE=yes, but the system mpi says it is not cuda-aware (%s "
                        "returned no): device buffers handed to it may crash it or be read as "
                        "host memory; unset TYPEJIT_CUDA_AWARE unless you know better",
                        model_state->aware_query);
}

bool tj_model_stage_contiguous(void)
{
    static atomic_bool refused;
    tj_tristate_t s = tj_config()->stage_contiguous;

    if (s == TJ_TRI_YES)
        return true;
    if (tj_model_cuda_aware())
        return false; /* yes returned above; auto and no leave them to the MPI */
    /* Not staging would hand device memory to an MPI that reads it as host memory: a crash, or
     * wrong bytes. Refused as TYPEJIT_METHOD=device is, said once. */
    if (s == TJ_TRI_NO && !atomic_exchange(&refused, true))
        tj_log_warn_job("TYPEJIT_STAGE_CONTIGUOUS=no needs a cuda-aware system mpi (this one is "
                        "not; TYPEJIT_CUDA_AWARE=yes overrides): contiguous device buffers are "
                        "staged through host memory");
    return true;
}

/* --- the table of this machine -------------------------------------------------------------- */

tj_status_t tj_model_table_path(int device, char *path, size_t len)
{
    const tj_config_t *cfg = tj_config();
    char name[128], file[256];
    int sm, n;
    tj_status_t st;

    if (cfg->system_table[0] != '\0') {
        n = snprintf(path, len, "%s", cfg->system_table);
        return n < 0 || (size_t)n >= len ? TJ_ERR_INVALID : TJ_OK;
    }
    if (cfg->cache_dir[0] == '\0')
        return TJ_ERR_NOT_FOUND;
    if ((st = tj_gpu_device_name(device, name, sizeof(name))) != TJ_OK ||
        (st = tj_gpu_sm(device, &sm)) != TJ_OK)
        return st;
    tj_systable_file_name(name, sm, tj_gpu_driver_version(), file, sizeof(file));
    n = snprintf(path, len, "%s/system/%s", cfg->cache_dir, file);
    return n < 0 || (size_t)n >= len ? TJ_ERR_INVALID : TJ_OK;
}

static void load_table(void)
{
    char path[4096], why[256] = "";
    tj_systable_t *t;
    int device = tj_gpu_current_device();
    tj_status_t st;

    /* The device's name and arch are asked of the driver before the lock (no driver call runs
     * under it); threads that race here ask twice and load once. */
    st = tj_model_table_path(device < 0 ? 0 : device, path, sizeof(path));
    pthread_mutex_lock(&model_state->table_lock);
    if (atomic_load(&model_state->table_loaded))
        goto out_unlock;
    if (st != TJ_OK) {
        tj_log_info("no system table (%s): sends choose their method by the default thresholds "
                    "(docs/send-paths.md); `typejit measure` makes one",
                    tj_status_string(st));
        goto out_loaded;
    }
    if ((t = malloc(sizeof(*t))) == NULL)
        goto out_loaded;
    st = tj_systable_load(path, t, why, sizeof(why));
    if (st == TJ_OK) {
        model_state->table = t;
        tj_log_info("system table %s: %s, measured %s", path, t->device, t->date);
        goto out_loaded;
    }
    free(t);
    if (st == TJ_ERR_NOT_FOUND && tj_config()->system_table[0] != '\0')
        tj_log_warn_job("TYPEJIT_SYSTEM_TABLE names %s, which does not exist: sends choose their "
                        "method by the default thresholds; `typejit measure --output %s` makes it",
                        path, path);
    else if (st == TJ_ERR_NOT_FOUND)
        tj_log_info("no system table at %s: sends choose their method by the default thresholds "
                    "(docs/send-paths.md); `typejit measure` makes one",
                    path);
    else
        tj_log_warn_job(
            "ignoring the system table %s: %s; sends choose their method by the default "
            "thresholds",
            path, why[0] != '\0' ? why : tj_status_string(st));
out_loaded:
    atomic_store(&model_state->table_loaded, true);
out_unlock:
    pthread_mutex_unlock(&model_state->table_lock);
}

/* --- prediction ----------------------------------------------------------------------------- */

/* The ping-pong curve of @p q for the peer's placement, else for the other placement, else
 * NULL. */
static const tj_curve_t *pingpong(const tj_systable_t *t, tj_quantity_t q, bool same_node)
{
    const tj_curve_t *c = tj_systable_find(t, q, same_node ? TJ_PEER_NODE : TJ_PEER_NET);
    return c != NULL ? c : tj_systable_find(t, q, same_node ? TJ_PEER_NET : TJ_PEER_NODE);
}

static void predict(const tj_systable_t *t, int64_t run, int64_t bytes, bool same_node, bool recv,
                    double us[4])
{
    double kd = tj_systable_kernel(t, recv ? TJ_Q_UNPACK_DEVICE : TJ_Q_PACK_DEVICE, run, bytes);
    double km = tj_systable_kernel(t, recv ? TJ_Q_UNPACK_MAPPED : TJ_Q_PACK_MAPPED, run, bytes);
    const tj_curve_t *copy = tj_systable_find(t, recv ? TJ_Q_COPY_H2D : TJ_Q_COPY_D2H, 0);
    const tj_curve_t *host = pingpong(t, TJ_Q_PINGPONG_HOST, same_node);
    const tj_curve_t *dev = pingpong(t, TJ_Q_PINGPONG_DEVICE, same_node);
    /* No host ping-pong (one rank measured): the MPI's share is left out of every method. */
    double ph = host != NULL ? tj_curve_eval(host, bytes) / 2 : 0;
    double c = copy != NULL ? tj_curve_eval(copy, bytes) : 0;

    us[TJ_METHOD_AUTO] = 0;
    us[TJ_METHOD_ONESHOT] = km + ph;
    us[TJ_METHOD_STAGED] = kd + c + ph;
    /* Without device ping-pong rows the MPI's handling of device memory is unknown: it is
     * priced as staged (what a CUDA-aware MPI without GPUDirect does itself), so that device
     * is chosen only where it was measured to be faster. */
    us[TJ_METHOD_DEVICE] = dev != NULL ? kd + tj_curve_eval(dev, bytes) / 2 : us[TJ_METHOD_STAGED];
}

/* The run length the model looks up: dimension 0 of the block; for a type with no block, the
 * largest measured run (as if contiguous). */
static int64_t run_of(const tj_block_t *block)
{
    return block != NULL ? block->counts[0] : INT64_MAX / 2;
}

bool tj_model_predict(const tj_block_t *block, int64_t count, int64_t bytes, bool same_node,
                      bool recv, double us[4])
{
    (void)count;
    if (!atomic_load(&model_state->table_loaded))
        load_table();
    if (model_state->table == NULL)
        return false;
    predict(model_state->table, run_of(block), bytes, same_node, recv, us);
    return true;
}

static tj_method_t fastest(const double us[4], bool aware)
{
    tj_method_t best = TJ_METHOD_ONESHOT;

    /* Ties go to the method listed first: oneshot, then staged, then device. */
    if (us[TJ_METHOD_STAGED] < us[best])
        best = TJ_METHOD_STAGED;
    if (aware && us[TJ_METHOD_DEVICE] < us[best])
        best = TJ_METHOD_DEVICE;
    return best;
}

static tj_method_t by_default(int64_t bytes, bool aware)
{
    if (aware)
        return bytes < DEFAULT_ONESHOT_AWARE ? TJ_METHOD_ONESHOT : TJ_METHOD_DEVICE;
    return bytes < DEFAULT_ONESHOT_UNAWARE ? TJ_METHOD_ONESHOT : TJ_METHOD_STAGED;
}

/* --- remembered choices --------------------------------------------------------------------- */

/* The choice depends on the block only through its run and packed size, so the key holds those
 * (two types of the same run and size share an entry). A small open-addressing table; when it
 * fills, it starts over. */
#define MEMO_SLOTS 1024
#define MEMO_LIMIT (MEMO_SLOTS * 3 / 4)

typedef struct tj_model_memo {
    int64_t run, size, count, bytes;
    uint8_t flags; /* 1: same node, 2: receive, 4: slot used */
    uint8_t method;
} memo_t;

static uint64_t memo_hash(const memo_t *k)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    int64_t v[5] = {k->run, k->size, k->count, k->bytes, k->flags};

    for (int i = 0; i < 5; i++) {
        h ^= (uint64_t)v[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
    }
    return h ^ (h >> 33);
}

static bool memo_same(const memo_t *a, const memo_t *b)
{
    return a->run == b->run && a->size == b->size && a->count == b->count && a->bytes == b->bytes &&
           a->flags == b->flags;
}

/* Look @p key up; with @p put, store its method. Returns the stored method or AUTO. */
static tj_method_t memo_access(const memo_t *key, bool put)
{
    tj_method_t found = TJ_METHOD_AUTO;
    uint64_t h = memo_hash(key);

    pthread_mutex_lock(&model_state->memo_lock);
    if (model_state->memo == NULL &&
        (!put || (model_state->memo = calloc(MEMO_SLOTS, sizeof(*model_state->memo))) == NULL))
        goto out_unlock;
    if (put && model_state->memo_used >= MEMO_LIMIT) {
        memset(model_state->memo, 0, MEMO_SLOTS * sizeof(*model_state->memo));
        model_state->memo_used = 0;
    }
    for (uint64_t i = h % MEMO_SLOTS;; i = (i + 1) % MEMO_SLOTS) {
        memo_t *m = &model_state->memo[i];
        if (!(m->flags & 4)) {
            if (put) {
                *m = *key;
                m->flags |= 4;
                model_state->memo_used++;
            }
            break;
        }
        if (memo_same(m, key)) {
            found = (tj_method_t)m->method;
            break;
        }
    }
out_unlock:
    pthread_mutex_unlock(&model_state->memo_lock);
    return found;
}

/* --- the choice ----------------------------------------------------------------------------- */

static tj_method_t choose(const tj_block_t *block, int64_t count, int64_t bytes, bool same_node,
                          bool recv)
{
    tj_method_setting_t forced = tj_config()->method;
    bool aware = tj_model_cuda_aware();
    memo_t key;
    tj_method_t m;
    double us[4];

    if (forced == TJ_FORCE_ONESHOT)
        return TJ_METHOD_ONESHOT;
    if (forced == TJ_FORCE_STAGED)
        return TJ_METHOD_STAGED;
    if (forced == TJ_FORCE_DEVICE) {
        if (aware)
            return TJ_METHOD_DEVICE;
        tj_log_warn_job("TYPEJIT_METHOD=device needs a cuda-aware system mpi (this one is not; "
                        "TYPEJIT_CUDA_AWARE=yes overrides): the model chooses between oneshot "
                        "and staged");
    }

    memset(&key, 0, sizeof(key));
    key.run = block != NULL ? block->counts[0] : 0;
    key.size = block != NULL ? block->size : 0;
    key.count = count;
    key.bytes = bytes;
    key.flags = (uint8_t)((same_node ? 1 : 0) | (recv ? 2 : 0));
    if ((m = memo_access(&key, false)) != TJ_METHOD_AUTO)
        return m;

    if (!atomic_load(&model_state->table_loaded))
        load_table();
    if (model_state->table != NULL) {
        predict(model_state->table, run_of(block), bytes, same_node, recv, us);
        m = fastest(us, aware);
        tj_log_debug("%s of %lld bytes in runs of %lld: device %.1f us, oneshot %.1f us, staged "
                     "%.1f us: %s",
                     recv ? "receive" : "send", (long long)bytes, (long long)key.run,
                     us[TJ_METHOD_DEVICE], us[TJ_METHOD_ONESHOT], us[TJ_METHOD_STAGED],
                     tj_method_name(m));
    } else
        m = by_default(bytes, aware);
    key.method = (uint8_t)m;
    memo_access(&key, true);
    return m;
}

tj_method_t tj_model_choose(const tj_block_t *block, int64_t count, int64_t bytes, bool same_node)
{
    return choose(block, count, bytes, same_node, false);
}

tj_method_t tj_model_choose_recv(const tj_block_t *block, int64_t count, int64_t bytes,
                                 bool same_node)
{
    return choose(block, count, bytes, same_node, true);
}

tj_method_t tj_model_choose_remembered(tj_type_plan_t *plan, const tj_block_t *block, int64_t count,
                                       int64_t bytes, bool recv)
{
    tj_method_t m = choose(block, count, bytes, false, recv);

    if (plan != NULL && bytes >= 0 && bytes < ((int64_t)1 << 59)) {
        unsigned i = atomic_fetch_add_explicit(&plan->next_method, 1, memory_order_relaxed);
        atomic_store_explicit(&plan->methods[i % TJ_PLAN_METHODS],
                              TJ_MODEL_METHOD_WORD(bytes, recv, m), memory_order_relaxed);
    }
    return m;
}

void tj_model_finalize(void)
{
    pthread_mutex_lock(&model_state->table_lock);
    free(model_state->table);
    model_state->table = NULL;
    atomic_store(&model_state->table_loaded, false);
    pthread_mutex_unlock(&model_state->table_lock);
    pthread_mutex_lock(&model_state->memo_lock);
    free(model_state->memo);
    model_state->memo = NULL;
    model_state->memo_used = 0;
    pthread_mutex_unlock(&model_state->memo_lock);
}
