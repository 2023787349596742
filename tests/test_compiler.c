/* The background compiler at volume: more distinct kernels than its queue and its table of
 * pending keys hold, requested as a commit requests them (the target left to the worker). Each
 * request must be served exactly once; issue 16 item 1 was a worker that forgot another key than
 * its request had added, so that the table of pending keys overflowed after about 320 requests.
 *
 * Run with TYPEJIT_JIT=always, TYPEJIT_CACHE=off and the test double's NVRTC refusing every
 * compile (FAKECUDA_NVRTC_REFUSE=1): each request is then a fast failed compile, counted by
 * jit_failures, and remembered, so that asking again compiles nothing. */
#include <stdio.h>
#include <time.h>

#include "check.h"
#include "kernels/compiler.h"
#include "kernels/supply.h"
#include "util/stats.h"

#define KERNELS 500 /* distinct kernels: more than the queue (256) and pending keys (320) */
#define BATCH   100 /* requests at a time: fewer than the queue holds, so none is dropped */

static void wait_idle(void)
{
    struct timespec pause = {0, 1000 * 1000};
    /* A bound only against a hang: the refused compiles take microseconds each. */
    for (int i = 0; i < 120 * 1000 && tj_compiler_busy(); i++)
        nanosleep(&pause, NULL);
    REQUIRE(!tj_compiler_busy());
}

/* Kernel i: a 2-D block of 8-byte runs, its own count of rows. */
static void block_of(int i, tj_block_t *b)
{
    int64_t counts[2] = {8, 2 + i}, strides[2] = {1, 24};
    REQUIRE(tj_block_make(0, 24 * (2 + i), 2, counts, strides, b) == TJ_OK);
}

static void request_all(void)
{
    for (int first = 0; first < KERNELS; first += BATCH) {
        for (int i = first; i < first + BATCH; i++) {
            tj_block_t b;
            block_of(i, &b);
            tj_compiler_request(&b, b.word, TJ_DIR_PACK, NULL);
        }
        wait_idle();
    }
}

int main(void)
{
    request_all();
    CHECK_EQ_INT(tj_stats_get(TJ_STAT_jit_failures), KERNELS);
    /* Failures are remembered by the kernel table: the same requests compile nothing again. */
    request_all();
    CHECK_EQ_INT(tj_stats_get(TJ_STAT_jit_failures), KERNELS);
    tj_compiler_finalize();
    tj_supply_finalize();
    CHECK_DONE();
}
