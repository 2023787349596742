/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the in-memory kernel table: get/put, first insert wins, destroy with a free
 * function, and 8 threads racing to insert and look up the same keys without losing or
 * duplicating a value. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/hash.h"
#include "cache/memo.h"
#include "check.h"

#define NTHREADS 8
#define NKEYS    2000

/* A value that knows its key and who made it; freed exactly once. */
typedef struct {
    int key;
    int owner;
} value_t;

static atomic_int values_alive;
static atomic_int values_freed;

static value_t *new_value(int key, int owner)
{
    value_t *v = malloc(sizeof(*v));
    REQUIRE(v != NULL);
    v->key = key;
    v->owner = owner;
    atomic_fetch_add(&values_alive, 1);
    return v;
}

static void free_value(void *p)
{
    atomic_fetch_sub(&values_alive, 1);
    atomic_fetch_add(&values_freed, 1);
    free(p);
}

static tj_hash_t key_of(int k)
{
    char text[32];
    int n = snprintf(text, sizeof(text), "key %d", k);
    return tj_hash_bytes(text, (size_t)n);
}

static void test_basic(void)
{
    tj_memo_t *m = NULL;
    value_t *a, *b, *got;
    tj_hash_t k1 = key_of(1), k2 = key_of(2), k1_hi = k1;

    CHECK_EQ_INT(tj_memo_create(&m), TJ_OK);
    REQUIRE(m != NULL);
    CHECK(tj_memo_get(m, k1) == NULL);

    a = new_value(1, 0);
    CHECK(tj_memo_put(m, k1, a) == a);
    CHECK(tj_memo_get(m, k1) == a);
    CHECK(tj_memo_get(m, k2) == NULL);

    /* A second put of the same key returns the first value; the caller frees its own. */
    b = new_value(1, 1);
    got = tj_memo_put(m, k1, b);
    CHECK(got == a);
    if (got != b)
        free_value(b);
    CHECK(tj_memo_get(m, k1) == a);

    /* Keys that share one half are still different keys. */
    k1_hi.lo ^= 1;
    CHECK(tj_memo_get(m, k1_hi) == NULL);
    b = new_value(3, 0);
    CHECK(tj_memo_put(m, k1_hi, b) == b);
    CHECK(tj_memo_get(m, k1_hi) == b);
    CHECK(tj_memo_get(m, k1) == a);
    CHECK(tj_memo_put(m, k2, NULL) == NULL);

    atomic_store(&values_freed, 0);
    tj_memo_destroy(m, free_value);
    CHECK_EQ_INT(atomic_load(&values_freed), 2);
    CHECK_EQ_INT(atomic_load(&values_alive), 0);

    /* Without a free function the values stay the caller's. */
    REQUIRE(tj_memo_create(&m) == TJ_OK);
    a = new_value(4, 0);
    CHECK(tj_memo_put(m, key_of(4), a) == a);
    tj_memo_destroy(m, NULL);
    CHECK_EQ_INT(a->key, 4);
    free_value(a);
    tj_memo_destroy(NULL, NULL);
}

typedef struct {
    tj_memo_t *memo;
    int id;
    pthread_barrier_t *start;
    value_t *winners[NKEYS]; /* what put returned to this thread for each key */
    int lost, bad;
} worker_t;

static void *worker(void *arg)
{
    worker_t *w = arg;

    pthread_barrier_wait(w->start);
    for (int n = 0; n < NKEYS; n++) {
        /* Every thread does every key, starting at different places and in both directions. */
        int k = (w->id % 2) ? (n + w->id * 97) % NKEYS : (NKEYS - 1 - n + w->id * 131) % NKEYS;
        tj_hash_t h = key_of(k);
        value_t *v = tj_memo_get(w->memo, h), *mine, *won;

        if (v != NULL) {
            w->bad += v->key != k;
            w->winners[k] = v;
            continue;
        }
        mine = new_value(k, w->id);
        won = tj_memo_put(w->memo, h, mine);
        if (won == NULL) {
            w->bad++;
            free_value(mine);
            continue;
        }
        if (won != mine) {
            w->lost++;
            free_value(mine);
        }
        w->bad += won->key != k;
        w->winners[k] = won;
        /* A value once in the table never changes. */
        w->bad += tj_memo_get(w->memo, h) != won;
    }
    return NULL;
}

static void test_threads(void)
{
    static worker_t workers[NTHREADS];
    pthread_t threads[NTHREADS];
    pthread_barrier_t start;
    tj_memo_t *m = NULL;

    REQUIRE(tj_memo_create(&m) == TJ_OK);
    REQUIRE(pthread_barrier_init(&start, NULL, NTHREADS) == 0);
    atomic_store(&values_freed, 0);
    for (int t = 0; t < NTHREADS; t++) {
        memset(&workers[t], 0, sizeof(workers[t]));
        workers[t].memo = m;
        workers[t].id = t;
        workers[t].start = &start;
        REQUIRE(pthread_create(&threads[t], NULL, worker, &workers[t]) == 0);
    }
    for (int t = 0; t < NTHREADS; t++)
        REQUIRE(pthread_join(threads[t], NULL) == 0);
    pthread_barrier_destroy(&start);

    /* Every thread saw the same single value per key, and it is the one in the table. */
    for (int t = 0; t < NTHREADS; t++)
        CHECK_EQ_INT(workers[t].bad, 0);
    for (int k = 0; k < NKEYS; k++) {
        value_t *v = tj_memo_get(m, key_of(k));
        REQUIRE(v != NULL);
        CHECK_EQ_INT(v->key, k);
        for (int t = 0; t < NTHREADS; t++)
            CHECK(workers[t].winners[k] == v);
    }
    /* No value lost, none duplicated: one per key alive, the losers all freed. */
    CHECK_EQ_INT(atomic_load(&values_alive), NKEYS);
    atomic_store(&values_freed, 0);
    tj_memo_destroy(m, free_value);
    CHECK_EQ_INT(atomic_load(&values_freed), NKEYS);
    CHECK_EQ_INT(atomic_load(&values_alive), 0);
}

int main(void)
{
    test_basic();
    test_threads();
    CHECK_DONE();
}
