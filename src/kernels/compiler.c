/* SPDX-License-Identifier: BSD-3-Clause */
/* The background compiler: a queue of kernels to compile, as long as the requests make it (none
 * is dropped: every kernel a run asks for is compiled in that run, the last ones while
 * MPI_Finalize drains the queue), and up to TYPEJIT_JIT_THREADS worker threads started on first
 * use. A worker only provides kernels through the kernel lookup
 * (memory table, disk cache, NVRTC, store) after asking the CUDA driver for device 0's compute
 * capability once: it makes no MPI call and runs no CUDA context, stream or launch, so it never
 * meets the application's threads inside MPI or a context. Workers run with every signal
 * blocked (the application's handlers run on its own threads), and they are stopped before the
 * process's destructors run, MPI_Finalize or not: no worker is inside NVRTC while NVRTC is torn
 * down. */
#include "kernels/compiler.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/hash.h"
#include "cache/hashset.h"
#include "gpu/cuda.h"
#include "jit/nvrtc.h"
#include "kernels/lookup.h"
#include "kernels/state.h"
#include "kernels/target.h"
#include "util/clock.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* The layer's state of the compile queue (kernels/state.h). */
static __typeof__(tj_kernels_state.compiler) *const queue = &tj_kernels_state.compiler;

typedef struct {
    tj_block_t block;
    int32_t word, edge, dir;
    char target[32];
    tj_layout_t *layout; /* a parts kernel's (a reference held while queued), else NULL */
    bool serial, one_object;
} job_t;

/* A queued job, in the order of the requests. */
typedef struct queued_job {
    job_t job;
    tj_hash_t key;
    struct queued_job *next;
} queued_t;

static tj_hash_t job_key(const job_t *j)
{
    if (j->layout != NULL) {
        /* By what the kernel depends on, not by the layout's address. */
        struct {
            uint64_t hash[2];
            int32_t word, dir, serial, one_object;
            char target[32];
        } r;
        memset(&r, 0, sizeof(r));
        r.hash[0] = j->layout->hash[0];
        r.hash[1] = j->layout->hash[1];
        r.word = j->word;
        r.dir = j->dir;
        r.serial = j->serial;
        r.one_object = j->one_object;
        memcpy(r.target, j->target, sizeof(r.target));
        return tj_hash_bytes(&r, sizeof(r));
    }
    return tj_hash_bytes(j, sizeof(*j));
}

static bool key_equal(tj_hash_t a, tj_hash_t b)
{
    return a.lo == b.lo && a.hi == b.hi;
}

/* Remove @p key from the set @p keys of *n (the running jobs). */
static void drop_key(tj_hash_t *keys, int *n, tj_hash_t key)
{
    for (int i = 0; i < *n; i++)
        if (key_equal(keys[i], key)) {
            keys[i] = keys[--*n];
            return;
        }
}

static bool has_key(const tj_hash_t *keys, int n, tj_hash_t key)
{
    for (int i = 0; i < n; i++)
        if (key_equal(keys[i], key))
            return true;
    return false;
}

/* The job of a request; its block moved to start 0, as the kernel lookup builds kernels. */
static job_t job_of(const tj_block_t *block, tj_words_t words, tj_dir_t dir, const char *target)
{
    job_t j;
    memset(&j, 0, sizeof(j));
    j.block = tj_block_at_zero(block);
    j.word = words.word;
    j.edge = words.edge;
    j.dir = (int32_t)dir;
    snprintf(j.target, sizeof(j.target), "%s", target != NULL ? target : "");
    return j;
}

/* A commit's job leaves the target to the worker, so that the commit starts neither the CUDA
 * driver nor NVRTC: device 0's target when there is a device whose driver loads this NVRTC's
 * kernels, the target without a device under TYPEJIT_JIT=always, else none (no job). */
static bool resolve_target(job_t *j)
{
    if (j->target[0] != '\0')
        return true;
    if (tj_gpu_available()) {
        if (tj_target_loadable() != TJ_OK)
            return false;
        return tj_target_of_device(0, j->target, sizeof(j->target)) == TJ_OK;
    }
    if (tj_config()->jit != TJ_JIT_ALWAYS)
        return false;
    return tj_target_of_device(-1, j->target, sizeof(j->target)) == TJ_OK;
}

static void stop_at_exit(void);

static void register_exit(void)
{
    if (atexit(stop_at_exit) != 0)
        tj_log_warn("cannot register the stop of the background compiles at exit");
}

static void *worker(void *arg)
{
    (void)arg;
    /* The libraries a worker enters are loaded first, and the stop at exit registered after
     * them: exit handlers run in reverse order, so the workers stop before NVRTC's (and the
     * driver's) own handlers tear them down. */
    (void)tj_gpu_available();
    (void)tj_nvrtc_load();
    pthread_once(&queue->exit_once, register_exit);
    pthread_mutex_lock(&queue->lock);
    for (;;) {
        job_t j;
        tj_hash_t key;
        tj_kernel_t *k;
        tj_origin_t from;

        queued_t *q;

        while (queue->queued == 0 && !queue->stopping)
            pthread_cond_wait(&queue->work, &queue->lock);
        if (queue->stopping)
            break;
        q = queue->head;
        if ((queue->head = q->next) == NULL)
            queue->tail = &queue->head;
        queue->queued--;
        queue->running++;
        j = q->job;
        /* The key the request added, taken before resolve_target fills in the target. */
        key = q->key;
        queue->active[queue->nactive++] = key;
        pthread_mutex_unlock(&queue->lock);
        free(q);
        /* Failures are logged where they happen and remembered by the kernel table. */
        if (resolve_target(&j)) {
            tj_kernel_spec_t spec = j.layout != NULL
                                        ? tj_spec_parts(j.layout, j.word, j.one_object,
                                                        (tj_dir_t)j.dir, j.serial, j.target)
                                        : tj_spec_words(&j.block, (tj_words_t){j.word, j.edge},
                                                        (tj_dir_t)j.dir, j.target);
            if (tj_lookup_kernel(&spec, TJ_LOOKUP_COMPILE, &k, &from) == TJ_OK &&
                from == TJ_FROM_COMPILE)
                tj_stats_inc(TJ_STAT_jit_background);
        }
        tj_layout_release(j.layout);
        atomic_fetch_add_explicit(&queue->finished, 1, memory_order_release);
        pthread_mutex_lock(&queue->lock);
        queue->running--;
        tj_hashset_remove(&queue->pending, key);
        drop_key(queue->active, &queue->nactive, key);
        pthread_cond_broadcast(&queue->work);
    }
    pthread_mutex_unlock(&queue->lock);
    return NULL;
}

unsigned tj_compiler_finished(void)
{
    return atomic_load_explicit(&queue->finished, memory_order_acquire);
}

/* A child of fork has none of the workers: it starts with an empty compiler. */
static void forget_in_child(void)
{
    pthread_mutex_init(&queue->lock, NULL);
    pthread_cond_init(&queue->work, NULL);
    /* The parent's jobs are its own: the child forgets them (and leaks their memory). */
    queue->head = NULL;
    queue->tail = &queue->head;
    queue->queued = 0;
    queue->running = queue->nactive = queue->nworkers = 0;
    memset(&queue->pending, 0, sizeof(queue->pending));
    queue->stopping = false;
}

static void register_fork(void)
{
    pthread_atfork(NULL, NULL, forget_in_child);
}

/* A worker thread, with every signal blocked and a name that says what it is. */
static bool start_worker(pthread_t *thread)
{
    sigset_t all, old;
    int rc;

    pthread_once(&queue->fork_once, register_fork);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(thread, NULL, worker, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return false;
    pthread_setname_np(*thread, "typejit-compile");
    return true;
}

static void request(job_t *j);

void tj_compiler_request(const tj_block_t *block, tj_words_t words, tj_dir_t dir,
                         const char *target)
{
    job_t j = job_of(block, words, dir, target);
    request(&j);
}

/* The job of a parts kernel's request. */
static job_t job_of_layout(const tj_layout_t *l, int word, bool one_object, tj_dir_t dir,
                           bool serial, const char *target)
{
    job_t j;
    memset(&j, 0, sizeof(j));
    j.layout = (tj_layout_t *)l;
    j.word = word;
    j.one_object = one_object;
    j.dir = (int32_t)dir;
    j.serial = serial;
    snprintf(j.target, sizeof(j.target), "%s", target != NULL ? target : "");
    return j;
}

void tj_compiler_request_parts(const tj_layout_t *layout, int word, bool one_object, tj_dir_t dir,
                               bool serial, const char *target)
{
    job_t j = job_of_layout(layout, word, one_object, dir, serial, target);
    request(&j);
}

/* Where job @p j stands in the queue. */
static tj_compile_state_t state_of(const job_t *j)
{
    tj_hash_t key = job_key(j);
    tj_compile_state_t state = TJ_COMPILE_IDLE;

    pthread_mutex_lock(&queue->lock);
    if (has_key(queue->active, queue->nactive, key))
        state = TJ_COMPILE_RUNNING;
    else if (tj_hashset_has(&queue->pending, key))
        state = TJ_COMPILE_QUEUED;
    pthread_mutex_unlock(&queue->lock);
    return state;
}

tj_compile_state_t tj_compiler_state_parts(const tj_layout_t *layout, int word, bool one_object,
                                           tj_dir_t dir, bool serial)
{
    job_t j = job_of_layout(layout, word, one_object, dir, serial, NULL);
    return state_of(&j);
}

/* Queue job @p jp (its layout, if any, gets a reference of the queue's). */
static void request(job_t *jp)
{
    int want = tj_config()->jit_threads;
    tj_hash_t key = job_key(jp);
    queued_t *q = malloc(sizeof(*q));
    bool added = false;

    if (q == NULL) {
        tj_log_warn_once("out of memory queuing a background compile; the kernel is compiled "
                         "when a launch needs it");
        return;
    }
    q->job = *jp;
    q->key = key;
    q->next = NULL;
    pthread_mutex_lock(&queue->lock);
    if (queue->stopping || tj_hashset_has(&queue->pending, key) ||
        tj_hashset_add(&queue->pending, key, &added) != TJ_OK || !added)
        goto out_unlock;
    q->job.layout = tj_layout_hold(q->job.layout);
    *queue->tail = q;
    queue->tail = &q->next;
    q = NULL;
    queue->queued++;
    /* Workers start on first use: a process that never compiles has none. */
    if (queue->nworkers < want && queue->nworkers < TJ_COMPILER_WORKERS_MAX &&
        queue->nworkers < queue->queued + queue->running) {
        if (start_worker(&queue->workers[queue->nworkers]))
            queue->nworkers++;
        else if (queue->nworkers == 0)
            tj_log_warn_once("cannot start a background compile thread; kernels wait");
    }
    pthread_cond_signal(&queue->work);
out_unlock:
    pthread_mutex_unlock(&queue->lock);
    free(q);
}

tj_compile_state_t tj_compiler_state(const tj_block_t *block, tj_words_t words, tj_dir_t dir)
{
    job_t j = job_of(block, words, dir, NULL);
    return state_of(&j);
}

void tj_compiler_drain(int seconds)
{
    struct timespec until;
    long left;

    pthread_mutex_lock(&queue->lock);
    if (seconds > 0 && queue->nworkers > 0 && (queue->queued > 0 || queue->running > 0)) {
        /* A worker waiting for another process's compile stops waiting at the same time. */
        tj_lookup_give_up_waits(tj_clock_ms() + 1000LL * seconds);
        clock_gettime(CLOCK_REALTIME, &until); /* the clock of pthread_cond_timedwait */
        until.tv_sec += seconds;
        /* Workers broadcast on `work` after each job. */
        while ((queue->queued > 0 || queue->running > 0) &&
               pthread_cond_timedwait(&queue->work, &queue->lock, &until) != ETIMEDOUT)
            ;
    }
    left = queue->queued;
    pthread_mutex_unlock(&queue->lock);
    if (left > 0)
        tj_log_info("%ld background compile(s) still queued after TYPEJIT_JIT_DRAIN=%d s are "
                    "dropped; `typejit warm` can fill the cache ahead of the next run",
                    left, seconds);
}

/* Drop the queued compiles, make waits for other processes' compiles give up, and wait for the
 * workers to end: each finishes the compile it is inside of (NVRTC cannot be interrupted, and
 * the kernel is stored for the next run), none starts another. */
static void stop_workers(void)
{
    queued_t *dropped;
    int n;

    pthread_mutex_lock(&queue->lock);
    dropped = queue->head;
    queue->head = NULL;
    queue->tail = &queue->head;
    queue->queued = 0;
    queue->stopping = true;
    tj_lookup_give_up_waits(0);
    pthread_cond_broadcast(&queue->work);
    n = queue->nworkers;
    pthread_mutex_unlock(&queue->lock);
    /* Released without the lock: the last reference to a layout frees its device part tables,
     * driver calls that never run under the compiler's lock. */
    while (dropped != NULL) {
        queued_t *next = dropped->next;
        tj_layout_release(dropped->job.layout);
        free(dropped);
        dropped = next;
    }
    for (int i = 0; i < n; i++)
        pthread_join(queue->workers[i], NULL);
    pthread_mutex_lock(&queue->lock);
    queue->nworkers = 0;
    tj_hashset_clear(&queue->pending);
    queue->nactive = 0;
    pthread_mutex_unlock(&queue->lock);
}

void tj_compiler_finalize(void)
{
    stop_workers();
    /* A process may compile again after its MPI_Finalize (tools, tests). */
    pthread_mutex_lock(&queue->lock);
    queue->stopping = false;
    pthread_mutex_unlock(&queue->lock);
    tj_lookup_give_up_waits(LLONG_MAX);
}

/* At exit, MPI_Finalize or not: the workers end before the destructors of the libraries they
 * use run; later requests are refused. */
static void stop_at_exit(void)
{
    stop_workers();
}
