/* The background compiler: a bounded queue of kernels to compile and up to TYPEJIT_JIT_THREADS
 * worker threads started on first use. A worker only provisions kernels (memory table, disk
 * cache, NVRTC, store): it makes no MPI and no CUDA call, so it never meets the application's
 * threads inside either library. */
#include "send/compiler.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cache/hash.h"
#include "gpu/cuda.h"
#include "send/kernels.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

#define QUEUE_MAX   256
#define WORKERS_MAX 64

typedef struct {
    tj_block_t block;
    int32_t word, dir;
    char target[32];
} job_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static job_t queue[QUEUE_MAX];
static int head, queued, running;
/* Keys of the jobs queued or running, so that a kernel is never queued twice. */
static tj_hash_t pending[QUEUE_MAX + WORKERS_MAX];
static int npending;
static pthread_t workers[WORKERS_MAX];
static int nworkers;
static bool stopping;

static tj_hash_t job_key(const job_t *j)
{
    return tj_hash_bytes(j, sizeof(*j));
}

static void forget(tj_hash_t key)
{
    for (int i = 0; i < npending; i++)
        if (pending[i].lo == key.lo && pending[i].hi == key.hi) {
            pending[i] = pending[--npending];
            return;
        }
}

/* A commit's job leaves the target to the worker, so that the commit starts neither the CUDA
 * driver nor NVRTC: device 0's target when there is a device whose driver loads this NVRTC's
 * kernels, the target without a device under TYPEJIT_JIT=always, else none (no job). */
static bool resolve_target(job_t *j)
{
    if (j->target[0] != '\0')
        return true;
    if (tj_gpu_available()) {
        if (tj_kernels_loadable() != TJ_OK)
            return false;
        return tj_kernels_target(0, j->target, sizeof(j->target)) == TJ_OK;
    }
    if (tj_config()->jit != TJ_JIT_ALWAYS)
        return false;
    return tj_kernels_target(-1, j->target, sizeof(j->target)) == TJ_OK;
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        job_t j;
        tj_hash_t key;
        tj_kernel_t *k;
        tj_origin_t from;

        while (queued == 0 && !stopping)
            pthread_cond_wait(&work, &lock);
        if (stopping)
            break;
        j = queue[head];
        /* The key the request added, taken before resolve_target fills in the target. */
        key = job_key(&j);
        head = (head + 1) % QUEUE_MAX;
        queued--;
        running++;
        pthread_mutex_unlock(&lock);
        /* Failures are logged where they happen and remembered by the kernel table. */
        if (resolve_target(&j) &&
            tj_kernels_get(&j.block, j.word, (tj_dir_t)j.dir, j.target, &k, &from) == TJ_OK &&
            from == TJ_FROM_COMPILE)
            tj_stats_inc(TJ_STAT_jit_background);
        pthread_mutex_lock(&lock);
        running--;
        forget(key);
        pthread_cond_broadcast(&work);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

void tj_compiler_request(const tj_block_t *block, int word, tj_dir_t dir, const char *target)
{
    int want = tj_config()->jit_threads;
    tj_hash_t key;
    job_t j;

    memset(&j, 0, sizeof(j));
    j.block = *block;
    j.word = word;
    j.dir = (int32_t)dir;
    snprintf(j.target, sizeof(j.target), "%s", target != NULL ? target : "");
    key = job_key(&j);
    pthread_mutex_lock(&lock);
    if (stopping)
        goto out_unlock;
    for (int i = 0; i < npending; i++)
        if (pending[i].lo == key.lo && pending[i].hi == key.hi)
            goto out_unlock;
    if (queued == QUEUE_MAX) {
        tj_log_debug("background compile queue full; a kernel is asked for again later");
        goto out_unlock;
    }
    queue[(head + queued) % QUEUE_MAX] = j;
    queued++;
    pending[npending++] = key;
    /* Workers start on first use: a process that never compiles has none. */
    if (nworkers < want && nworkers < WORKERS_MAX && nworkers < queued + running) {
        if (pthread_create(&workers[nworkers], NULL, worker, NULL) == 0)
            nworkers++;
        else if (nworkers == 0)
            tj_log_warn_once("cannot start a background compile thread; kernels wait");
    }
    pthread_cond_signal(&work);
out_unlock:
    pthread_mutex_unlock(&lock);
}

tj_compile_state_t tj_compiler_state(const tj_block_t *block, int word, tj_dir_t dir)
{
    tj_compile_state_t state = TJ_COMPILE_IDLE;
    tj_hash_t key;
    job_t j;

    memset(&j, 0, sizeof(j));
    j.block = *block;
    j.word = word;
    j.dir = (int32_t)dir;
    key = job_key(&j);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < npending && state == TJ_COMPILE_IDLE; i++)
        if (pending[i].lo == key.lo && pending[i].hi == key.hi)
            state = TJ_COMPILE_RUNNING;
    /* Pending and still in the queue: not started yet. */
    for (int i = 0; i < queued && state == TJ_COMPILE_RUNNING; i++) {
        tj_hash_t q = job_key(&queue[(head + i) % QUEUE_MAX]);
        if (q.lo == key.lo && q.hi == key.hi)
            state = TJ_COMPILE_QUEUED;
    }
    pthread_mutex_unlock(&lock);
    return state;
}

bool tj_compiler_busy(void)
{
    bool busy;
    pthread_mutex_lock(&lock);
    busy = queued > 0 || running > 0;
    pthread_mutex_unlock(&lock);
    return busy;
}

void tj_compiler_drain(int seconds)
{
    struct timespec until;
    int left;

    pthread_mutex_lock(&lock);
    if (seconds > 0 && nworkers > 0 && (queued > 0 || running > 0)) {
        clock_gettime(CLOCK_REALTIME, &until); /* the clock of pthread_cond_timedwait */
        until.tv_sec += seconds;
        /* Workers broadcast on `work` after each job. */
        while ((queued > 0 || running > 0) &&
               pthread_cond_timedwait(&work, &lock, &until) != ETIMEDOUT)
            ;
    }
    left = queued;
    pthread_mutex_unlock(&lock);
    if (left > 0)
        tj_log_info("%d background compile(s) still queued after TYPEJIT_JIT_DRAIN=%d s are "
                    "dropped; `typejit warm` can fill the cache ahead of the next run",
                    left, seconds);
}

void tj_compiler_finalize(void)
{
    int n;

    pthread_mutex_lock(&lock);
    /* Queued compiles are dropped; running ones finish and store their kernels. */
    while (queued > 0) {
        forget(job_key(&queue[head]));
        head = (head + 1) % QUEUE_MAX;
        queued--;
    }
    stopping = true;
    pthread_cond_broadcast(&work);
    n = nworkers;
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++)
        pthread_join(workers[i], NULL);
    pthread_mutex_lock(&lock);
    nworkers = 0;
    npending = 0;
    head = 0;
    stopping = false;
    pthread_mutex_unlock(&lock);
}
