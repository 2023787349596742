/* SPDX-License-Identifier: BSD-3-Clause */
/* Fused moves: which sets one fused kernel may move (every byte a member touches in the one
 * allocation of the typed buffer's context; an unpack's members never writing a byte twice),
 * handed to the launch path, which makes the members' blocks the kernel's shapes. */
#include "move/fused.h"

#include <pthread.h>
#include <stdlib.h>

#include "cache/hash.h"
#include "kernels/launch.h"
#include "move/move.h"
#include "move/state.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* This module's part of the layer's state. */
static __typeof__(tj_move_state.fused) *const fused_state = &tj_move_state.fused;

/* Typed bytes of a fused unpack whose members' spans interleave are checked run by run: at most
 * this many contiguous runs (the check sorts them), and the answer is remembered for this many
 * sets, so that a fixed call pattern pays for the check once. */
#define FUSED_CHECK_RUNS ((int64_t)1 << 21)

/* The runs being listed: spans[n] and on, each `len` bytes at `base` plus its offset. */
typedef struct {
    tj_range_t *spans;
    int64_t n, base, len;
} listing_t;

static bool list_run(int64_t disp, void *arg)
{
    listing_t *l = arg;
    l->spans[l->n].lo = l->base + disp;
    l->spans[l->n].hi = l->base + disp + l->len;
    l->n++;
    return true;
}

/* Whether no typed byte is written twice by the members (@p blocks[m] with start, @p shift[m]
 * being the byte offset of object 0 relative to the buffer minus the block's start, @p count[m]
 * objects), computed by listing every contiguous run; false when there are too many runs. */
static bool runs_disjoint(const tj_block_t *const *blocks, const int64_t *offs,
                          const int64_t *counts, int nm)
{
    int64_t total = 0, n = 0;
    tj_range_t *spans;
    bool ok;

    for (int m = 0; m < nm; m++) {
        int64_t rows = blocks[m]->size / blocks[m]->counts[0], r;
        if (!tj_mul64(rows, counts[m], &r) || !tj_add64(total, r, &total) ||
            total > FUSED_CHECK_RUNS)
            return false;
    }
    if ((spans = malloc((size_t)total * sizeof(tj_range_t))) == NULL)
        return false;
    for (int m = 0; m < nm; m++) {
        listing_t l = {spans, n, 0, blocks[m]->counts[0]};
        for (int64_t k = 0; k < counts[m]; k++) {
            l.base = offs[m] + blocks[m]->start + k * blocks[m]->extent;
            tj_block_each_run(blocks[m], list_run, &l);
        }
        n = l.n;
    }
    ok = tj_block_ranges_disjoint(spans, n);
    free(spans);
    return ok;
}

/* runs_disjoint, remembered by a hash of the members' layouts, offsets and counts. */
static bool members_disjoint(const tj_block_t *const *blocks, const int64_t *offs,
                             const int64_t *counts, int nm)
{
    int64_t rec[TJ_FUSED_MAX * (5 + 2 * TJ_BLOCK_MAX_DIMS)];
    size_t len = 0;
    tj_hash_t key;
    bool found = false, disjoint = false;

    for (int m = 0; m < nm; m++) {
        const tj_block_t *b = blocks[m];
        rec[len++] = offs[m];
        rec[len++] = counts[m];
        rec[len++] = b->start;
        rec[len++] = b->extent;
        rec[len++] = b->ndims;
        for (int d = 0; d < b->ndims; d++) {
            rec[len++] = b->counts[d];
            rec[len++] = b->strides[d];
        }
    }
    key = tj_hash_bytes(rec, len * sizeof(rec[0]));
    pthread_mutex_lock(&fused_state->checked_lock);
    for (int i = 0; i < TJ_FUSED_CHECK_MEMORY && !found; i++)
        if (fused_state->checked[i].used && fused_state->checked[i].key.hi == key.hi &&
            fused_state->checked[i].key.lo == key.lo) {
            found = true;
            disjoint = fused_state->checked[i].disjoint;
        }
    pthread_mutex_unlock(&fused_state->checked_lock);
    if (found)
        return disjoint;
    disjoint = runs_disjoint(blocks, offs, counts, nm);
    pthread_mutex_lock(&fused_state->checked_lock);
    fused_state->checked[fused_state->checked_next].key = key;
    fused_state->checked[fused_state->checked_next].used = true;
    fused_state->checked[fused_state->checked_next].disjoint = disjoint;
    fused_state->checked_next = (fused_state->checked_next + 1) % TJ_FUSED_CHECK_MEMORY;
    pthread_mutex_unlock(&fused_state->checked_lock);
    return disjoint;
}

bool tj_fused_move(const char *typed, tj_gpu_ctx_t ctx, const tj_gpu_ptr_t *known,
                   tj_devptr_t packed, const tj_fused_item_t *items, int n, tj_dir_t dir,
                   tj_batch_t *batch)
{
    tj_launch_member_t members[TJ_FUSED_MAX];
    int64_t lo[TJ_FUSED_MAX], hi[TJ_FUSED_MAX], offs[TJ_FUSED_MAX], counts[TJ_FUSED_MAX];
    const tj_block_t *typed_blocks[TJ_FUSED_MAX];
    bool pack = dir == TJ_DIR_PACK, apart = true;
    tj_gpu_ptr_t where;
    tj_gpu_scope_t scope;
    tj_launch_ready_t ready;
    tj_status_t st;

    if (tj_config()->jit == TJ_JIT_OFF || n < 2 || n > TJ_FUSED_MAX || packed == 0)
        return false;
    for (int m = 0; m < n; m++) {
        const tj_type_info_t *info = items[m].info;
        int64_t shift;

        if (!info->strided || items[m].count < 1 ||
            !tj_move_span(info, items[m].typed, items[m].count, &lo[m], &hi[m]) ||
            !tj_add64(items[m].typed, info->block.start, &shift))
            return false;
        if (!pack && !tj_block_disjoint(&info->block, items[m].count))
            return false; /* a parallel unpack into an overlapping layout would race */
        members[m] = (tj_launch_member_t){&info->block, items[m].typed, items[m].packed,
                                          items[m].count, info->serial};
        typed_blocks[m] = &info->block;
        offs[m] = items[m].typed;
        counts[m] = items[m].count;
    }
    /* Every member's bytes inside the one allocation of the buffer's context, and an unpack's
     * members apart from each other: their spans, else (halo faces interleave) their runs. */
    /* A query that fails leaves the set to the one-by-one path, whose own queries fail the call. */
    if (known != NULL)
        where = *known;
    else if (tj_gpu_query(typed + lo[0], &where) != TJ_OK)
        return false;
    if (!tj_gpu_device_like(where.kind) || where.ctx != ctx)
        return false;
    for (int m = 0; m < n; m++) {
        if (!tj_move_inside(items[m].info, typed, items[m].typed, items[m].count, &where))
            return false;
        for (int o = 0; !pack && o < m; o++)
            apart = apart && (lo[m] >= hi[o] || lo[o] >= hi[m]);
    }
    if (!apart && !members_disjoint(typed_blocks, offs, counts, n))
        return false;
    if (tj_gpu_enter_at(&where, &scope) != TJ_OK)
        return false;
    {
        /* One fused kernel of the members' blocks, from the launch path (kernels/launch.h). A set
         * no kernel is prepared for goes one by one without a word; a failed launch or wait is
         * said once. */
        tj_launch_desc_t d = {.members = members,
                              .nmembers = n,
                              .dir = dir,
                              .typed = (tj_devptr_t)(uintptr_t)typed,
                              .packed = packed,
                              .device = where.device,
                              .policy = TJ_LAUNCH_COMPILE};
        if ((st = tj_launch_prepare(&d, &ready)) == TJ_OK &&
            ((st = tj_launch_go(&ready)) != TJ_OK || (st = tj_batch_defer_wait(batch)) != TJ_OK))
            tj_log_warn_once("a fused device %s of %d members failed (%s); moving them one by "
                             "one",
                             pack ? "pack" : "unpack", n, tj_status_string(st));
    }
    tj_gpu_leave(&scope);
    if (st != TJ_OK)
        return false;
    tj_stats_add(pack ? TJ_STAT_packs_gpu : TJ_STAT_unpacks_gpu, (uint64_t)n);
    tj_log_debug("fused device %s: %d members of %d shapes, one launch", pack ? "pack" : "unpack",
                 n, ready.shapes);
    return true;
}
