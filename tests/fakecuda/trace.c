/* SPDX-License-Identifier: BSD-3-Clause */
/* Address trace (FAKECUDA_TRACE=FILE): for every launch, each thread's loads and stores of device
 * memory, grouped as a GPU groups them into requests: the i-th load (or store) of every thread of
 * one warp (32 consecutive linear thread indices of a block) is one request, as it is when the
 * warp's threads run the same instruction. Per launch one line is appended to FILE:
 *
 *   trace launch=N kernel=NAME grid=X,Y,Z block=X,Y,Z load_requests=R load_sectors=S
 *     load_distinct=D load_bytes=B store_requests=R store_sectors=S store_distinct=D
 *     store_bytes=B
 *
 * sectors: the 32-byte sectors the requests touch, each request's counted apart (what a GPU's
 * memory system serves); distinct: the sectors of the whole launch, each once (the least any
 * kernel moving those bytes must touch). A traced launch runs each thread block on one host
 * thread (grid.c), so that a warp's accesses are recorded by one thread. The kernels' own
 * stack, their arguments and the emulation's variables are host memory and not counted. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

typedef struct {
    uint64_t group;  /* block * 64 + warp * 2 + (store ? 1 : 0) */
    uint64_t seq;    /* the thread's n-th load or store */
    uint64_t sector; /* address / 32 */
    uint64_t bytes;  /* of the access, on its first sector's record; 0 on the others */
} record_t;

/* One host thread's records of the current launch. */
typedef struct buffer {
    record_t *r;
    size_t n, cap;
    bool failed;
    struct buffer *next;
} buffer_t;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *path;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static buffer_t *buffers; /* every host thread's, kept for the process's life */
static bool active;

static _Thread_local buffer_t *mine;
static _Thread_local uint64_t cur_block, cur_warp, nloads, nstores;

static void init(void)
{
    const char *p = getenv("FAKECUDA_TRACE");
    path = p != NULL && *p != '\0' ? p : NULL;
}

bool fc_trace_enabled(void)
{
    pthread_once(&once, init);
    return path != NULL;
}

void fc_trace_begin(void)
{
    active = fc_trace_enabled();
    for (buffer_t *b = buffers; active && b != NULL; b = b->next) {
        b->n = 0;
        b->failed = false;
    }
}

void fc_trace_thread(unsigned long long block, unsigned thread)
{
    cur_block = block;
    cur_warp = thread / 32;
    nloads = nstores = 0;
}

static buffer_t *buffer(void)
{
    if (mine == NULL && (mine = calloc(1, sizeof *mine)) != NULL) {
        pthread_mutex_lock(&lock);
        mine->next = buffers;
        buffers = mine;
        pthread_mutex_unlock(&lock);
    }
    return mine;
}

static void add(buffer_t *b, uint64_t group, uint64_t seq, uint64_t sector, uint64_t bytes)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        record_t *r = realloc(b->r, cap * sizeof *r);
        if (r == NULL) {
            b->failed = true;
            return;
        }
        b->r = r;
        b->cap = cap;
    }
    b->r[b->n++] = (record_t){group, seq, sector, bytes};
}

void fc_trace_access(const void *address, size_t n, bool store)
{
    uintptr_t a = (uintptr_t)address;
    buffer_t *b;
    uint64_t group, seq;

    if (!active || n == 0 || !fc_mem_in_arena(a) || (b = buffer()) == NULL || b->failed)
        return;
    group = cur_block * 64 + cur_warp * 2 + (store ? 1 : 0);
    seq = store ? nstores++ : nloads++;
    for (uint64_t s = a / 32; s <= (a + n - 1) / 32; s++)
        add(b, group, seq, s, s == a / 32 ? n : 0);
}

void fc_trace_load(const void *address, size_t n)
{
    fc_trace_access(address, n, false);
}

static int by_request(const void *x, const void *y)
{
    const record_t *a = x, *b = y;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return a->sector < b->sector ? -1 : a->sector > b->sector;
}

static int by_sector(const void *x, const void *y)
{
    const record_t *a = x, *b = y;
    unsigned ka = a->group & 1, kb = b->group & 1;
    if (ka != kb)
        return ka < kb ? -1 : 1;
    return a->sector < b->sector ? -1 : a->sector > b->sector;
}

void fc_trace_end(const fc_op_t *op, unsigned long long launch)
{
    unsigned long long requests[2] = {0, 0}, sectors[2] = {0, 0}, distinct[2] = {0, 0};
    unsigned long long bytes[2] = {0, 0};
    size_t total = 0, at = 0;
    bool failed = false;
    record_t *all;
    FILE *f;

    if (!active)
        return;
    active = false;
    for (buffer_t *b = buffers; b != NULL; b = b->next) {
        total += b->n;
        failed = failed || b->failed;
    }
    if (failed || (all = malloc((total ? total : 1) * sizeof *all)) == NULL) {
        fc_log("FAKECUDA_TRACE: out of memory tracing launch %llu", launch);
        return;
    }
    for (buffer_t *b = buffers; b != NULL; b = b->next) {
        memcpy(all + at, b->r, b->n * sizeof *all);
        at += b->n;
    }
    qsort(all, total, sizeof *all, by_request);
    for (size_t i = 0; i < total; i++) {
        unsigned k = all[i].group & 1;
        bool new_request =
            i == 0 || all[i].group != all[i - 1].group || all[i].seq != all[i - 1].seq;
        requests[k] += new_request;
        sectors[k] += new_request || all[i].sector != all[i - 1].sector;
        bytes[k] += all[i].bytes;
    }
    qsort(all, total, sizeof *all, by_sector);
    for (size_t i = 0; i < total; i++)
        distinct[all[i].group & 1] += i == 0 || (all[i].group & 1) != (all[i - 1].group & 1) ||
                                      all[i].sector != all[i - 1].sector;
    free(all);
    if ((f = fopen(path, "a")) == NULL) {
        fc_log("FAKECUDA_TRACE: cannot open %s", path);
        return;
    }
    fprintf(f,
            "trace launch=%llu kernel=%s grid=%u,%u,%u block=%u,%u,%u load_requests=%llu "
            "load_sectors=%llu load_distinct=%llu load_bytes=%llu store_requests=%llu "
            "store_sectors=%llu store_distinct=%llu store_bytes=%llu\n",
            launch, op->u.kernel.func->name, op->u.kernel.grid[0], op->u.kernel.grid[1],
            op->u.kernel.grid[2], op->u.kernel.block[0], op->u.kernel.block[1],
            op->u.kernel.block[2], requests[0], sectors[0], distinct[0], bytes[0], requests[1],
            sectors[1], distinct[1], bytes[1]);
    fclose(f);
}
