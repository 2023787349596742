/* SPDX-License-Identifier: BSD-3-Clause */
/* Running a launch as a GPU may: its thread blocks in a shuffled order on several host threads
 * at once (FAKECUDA_THREADS, the caller's included), each block's threads shuffled too, so that a
 * kernel whose result depends on an order or on threads running one at a time shows it. The
 * orders come from FAKECUDA_SEED (or a seed drawn at the first launch, said with every broken
 * rule) and the launch's number in the process, so a seed replays the orders. Host thread w of
 * n takes units w, w + n, w + 2n, ... of the shuffled order, so every one of them runs part of
 * every launch that has enough blocks; how their work interleaves is the scheduler's. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakecuda.h"

#define MAX_BLOCK_THREADS 1024

/* One launch being run. */
typedef struct {
    struct CUfunc_st *func;
    const unsigned *grid, *block;
    void **params;
    uint64_t units;       /* blocks * slices: what a host thread takes at a time */
    unsigned slices;      /* parts of one block's threads, for grids of few blocks */
    unsigned threads;     /* per block */
    uint64_t key;         /* of the orders */
    unsigned bits;        /* of the permutation's domain, 2^bits >= units */
    unsigned workers;     /* host threads taking part: the caller (0) and the pool's */
    atomic_ullong pooled; /* units run by pool threads */
    atomic_int fault;     /* the first fault's signal */
} run_t;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    int started;     /* pool threads (FAKECUDA_THREADS - 1) */
    int finished;    /* pool threads done with the current run */
    uint64_t number; /* of the current run: pool threads wait for a new one */
    run_t *run;
} pool = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, NULL};

static _Thread_local unsigned worker_index; /* 0: the launching thread */
static unsigned long long seed;
static pthread_once_t seed_once_control = PTHREAD_ONCE_INIT;
static unsigned long long launches;

static uint64_t mix(uint64_t z)
{
    /* splitmix64's finaliser */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void seed_init(void)
{
    const char *s = getenv("FAKECUDA_SEED");
    struct timespec now;

    if (s != NULL && *s != '\0') {
        char *end;
        seed = strtoull(s, &end, 0);
        if (*end == '\0')
            return;
        fc_log("ignoring malformed FAKECUDA_SEED '%s'", s);
    }
    clock_gettime(CLOCK_REALTIME, &now);
    seed = mix((uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 20) ^ ((uint64_t)getpid() << 40)) %
           1000000000000ull;
}

static void seed_once(void)
{
    pthread_once(&seed_once_control, seed_init);
}

unsigned long long fc_grid_seed(void)
{
    seed_once();
    return seed;
}

/* Unit i of the run's shuffled order: a keyed Feistel permutation of [0, 2^bits), walked until
 * it lands below `units`. */
static uint64_t permute(const run_t *r, uint64_t i)
{
    unsigned half = (r->bits + 1) / 2;
    uint64_t mask = ((uint64_t)1 << half) - 1;

    if (r->units <= 1)
        return 0;
    do {
        uint64_t left = i >> half, right = i & mask;
        for (unsigned round = 0; round < 4; round++) {
            uint64_t f = mix(r->key ^ (right * 0x9E3779B97F4A7C15ull) ^ round) & mask;
            uint64_t t = right;
            right = left ^ f;
            left = t;
        }
        i = (left << half) | right;
    } while (i >= r->units);
    return i;
}

/* Block @p b's threads in its own shuffled order (the same for every slice of the block). */
static void shuffle(const run_t *r, uint64_t b, unsigned *order)
{
    uint64_t state = mix(r->key ^ (b + 1) * 0xD1B54A32D192ED03ull);
    for (unsigned t = 0; t < r->threads; t++)
        order[t] = t;
    for (unsigned t = r->threads; t > 1; t--) {
        unsigned j;
        state = mix(state + 0x9E3779B97F4A7C15ull);
        j = (unsigned)(state % t);
        unsigned x = order[t - 1];
        order[t - 1] = order[j];
        order[j] = x;
    }
}

static void work(void *arg)
{
    run_t *r = arg;
    unsigned order[MAX_BLOCK_THREADS];
    uint64_t gx = r->grid[0], gy = r->grid[1];

    for (uint64_t i = worker_index; i < r->units; i += r->workers) {
        uint64_t u, b;
        unsigned s, at[3], from, to;
        if (atomic_load_explicit(&r->fault, memory_order_relaxed) != 0)
            break;
        u = permute(r, i);
        b = u / r->slices;
        s = (unsigned)(u % r->slices);
        at[0] = (unsigned)(b % gx);
        at[1] = (unsigned)(b / gx % gy);
        at[2] = (unsigned)(b / (gx * gy));
        shuffle(r, b, order);
        from = (unsigned)((uint64_t)s * r->threads / r->slices);
        to = (unsigned)((uint64_t)(s + 1) * r->threads / r->slices);
        r->func->block(r->grid, r->block, at, order + from, to - from, r->params);
        if (worker_index != 0)
            atomic_fetch_add_explicit(&r->pooled, 1, memory_order_relaxed);
    }
}

/* One host thread's part of a run: units until none is left or a fault stops it. */
static void participate(run_t *r)
{
    int sig = fc_fault_guard(work, r), none = 0;
    if (sig != 0)
        atomic_compare_exchange_strong(&r->fault, &none, sig);
    fc_track_flush();
}

static void *pool_main(void *arg)
{
    sigset_t set;
    uint64_t seen = 0;

    worker_index = (unsigned)(uintptr_t)arg;
    /* Only the faults of emulated device work: every other signal is for the application's
     * threads. */
    sigfillset(&set);
    sigdelset(&set, SIGSEGV);
    sigdelset(&set, SIGBUS);
    sigdelset(&set, SIGILL);
    sigdelset(&set, SIGTRAP);
    sigdelset(&set, SIGFPE);
    pthread_sigmask(SIG_SETMASK, &set, NULL);
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        run_t *r;
        while (pool.number == seen)
            pthread_cond_wait(&pool.go, &pool.lock);
        seen = pool.number;
        r = pool.run;
        pthread_mutex_unlock(&pool.lock);
        participate(r);
        pthread_mutex_lock(&pool.lock);
        if (++pool.finished == pool.started)
            pthread_cond_signal(&pool.done);
    }
    return NULL;
}

/* A child of fork has none of the pool's threads. */
static void after_fork_child(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.go, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.started = 0;
    pool.finished = 0;
    pool.run = NULL;
}

static void pool_start(void)
{
    static bool atfork;
    if (!atfork) {
        pthread_atfork(NULL, NULL, after_fork_child);
        atfork = true;
    }
    while (pool.started < fc_config.threads - 1) {
        pthread_t t;
        if (pthread_create(&t, NULL, pool_main, (void *)(uintptr_t)(pool.started + 1)) != 0)
            break; /* fewer threads: still a valid schedule */
        pthread_detach(t);
        pool.started++;
    }
}

int fc_grid_run(fc_op_t *op, unsigned long long *launch)
{
    run_t r;
    uint64_t blocks = (uint64_t)op->u.kernel.grid[0] * op->u.kernel.grid[1] * op->u.kernel.grid[2];

    memset(&r, 0, sizeof r);
    seed_once();
    *launch = ++launches;
    r.func = op->u.kernel.func;
    r.grid = op->u.kernel.grid;
    r.block = op->u.kernel.block;
    r.params = op->u.kernel.params;
    r.threads = op->u.kernel.block[0] * op->u.kernel.block[1] * op->u.kernel.block[2];
    /* A grid of fewer blocks than host threads has its blocks' threads split among them. */
    /* A traced launch keeps each block on one host thread, and so each warp (trace.c). */
    r.slices = blocks < (uint64_t)fc_config.threads && r.threads >= 64 && !fc_trace_enabled()
                   ? (unsigned)(fc_config.threads / blocks)
                   : 1;
    r.units = blocks * r.slices;
    r.key = mix(seed ^ mix(*launch));
    while (r.bits < 64 && ((uint64_t)1 << r.bits) < r.units)
        r.bits++;
    atomic_init(&r.pooled, 0);
    atomic_init(&r.fault, 0);
    r.workers = 1;
    if (r.units < 2 || fc_config.threads < 2) {
        participate(&r);
        return atomic_load(&r.fault);
    }
    pthread_mutex_lock(&pool.lock);
    pool_start();
    r.workers = (unsigned)pool.started + 1;
    pool.run = &r;
    pool.finished = 0;
    pool.number++;
    pthread_cond_broadcast(&pool.go);
    pthread_mutex_unlock(&pool.lock);
    participate(&r);
    pthread_mutex_lock(&pool.lock);
    while (pool.finished < pool.started)
        pthread_cond_wait(&pool.done, &pool.lock);
    pool.run = NULL;
    pthread_mutex_unlock(&pool.lock);
    fc_stats.blocks_on_pool += (long long)atomic_load(&r.pooled);
    return atomic_load(&r.fault);
}
