/* SPDX-License-Identifier: BSD-3-Clause */
/* The launch room (see launch.h). */
#include "kernels/launch.h"

#include <stdatomic.h>
#include <string.h>

#include "kernels/compiler.h"
#include "kernels/parttable.h"
#include "kernels/prepare.h"
#include "kernels/supply.h"
#include "kernels/target.h"
#include "type/layout_words.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* Whether this process has prepared a launch before. */
static atomic_bool launched;

tj_status_t tj_launch_possible(void)
{
    return tj_target_loadable();
}

/* The kernel of @p spec as @p policy says: TJ_ERR_NOT_FOUND when the launch is to run the
 * generic kernel instead (TYPEJIT_JIT=off, or the kernel asked of the background compiler). */
static tj_status_t kernel_as(const tj_kernel_spec_t *spec, tj_launch_policy_t policy,
                             tj_kernel_t **k)
{
    const tj_config_t *cfg = tj_config();
    tj_status_t st;

    if (policy == TJ_LAUNCH_AS_SET && cfg->jit == TJ_JIT_OFF)
        return TJ_ERR_NOT_FOUND;
    if (policy == TJ_LAUNCH_COMPILE || cfg->jit_sync)
        return tj_supply_get(spec, TJ_SUPPLY_COMPILE, k, NULL);
    if ((st = tj_supply_get(spec, TJ_SUPPLY_CACHED, k, NULL)) != TJ_ERR_NOT_FOUND)
        return st;
    if (spec->layout != NULL)
        tj_compiler_request_parts(spec->layout, spec->word, spec->one_object, spec->dir,
                                  spec->serial, spec->target);
    else
        tj_compiler_request(&spec->blocks[0], (tj_words_t){spec->word, spec->edge}, spec->dir,
                            spec->target);
    return st;
}

/* The kernel's function in the current context, the geometry and arguments of @p work. */
static tj_status_t ready(tj_kernel_t *k, const tj_kind_work_t *work, tj_launch_ready_t *r)
{
    tj_kernel_spec_t spec = tj_kernel_spec(k);
    tj_status_t st;

    if ((st = tj_kernel_function(k, &r->fn)) != TJ_OK)
        return st;
    return tj_kind_of(spec.kind)->geometry(&spec, work, &r->args);
}

/* Between @p at (the typed side's first byte: object 0's, or frame element 0's) and the packed
 * side, in the launch's direction. */
static void pointers(const tj_launch_desc_t *d, tj_devptr_t at, tj_launch_ready_t *r)
{
    r->args.dst = d->dir == TJ_DIR_PACK ? d->packed : at;
    r->args.src = d->dir == TJ_DIR_PACK ? at : d->packed;
}

/* One strided block: its kernel for the launch's words, or the generic kernel (the layout as
 * run-time arguments) while that is not there. */
static tj_status_t prepare_block(const tj_launch_desc_t *d, const char *target,
                                 tj_launch_ready_t *r)
{
    tj_block_t b = tj_block_at_zero(d->block);
    tj_devptr_t at = d->typed + (tj_devptr_t)d->block->start; /* object 0's first byte */
    tj_words_t words = d->op.kind == TJ_OP_MOVE
                           ? tj_block_words(&b, d->count, (uintptr_t)at, (uintptr_t)d->packed)
                           : (tj_words_t){d->op_size, 0};
    tj_kernel_spec_t spec = tj_spec_words(&b, words, d->dir, target);
    tj_kind_work_t work = {.block = &b, .count = d->count};
    tj_kernel_t *k;
    tj_status_t st;

    spec.op = d->op;
    pointers(d, at, r);
    if ((st = kernel_as(&spec, d->policy, &k)) == TJ_OK) {
        r->jit = true;
        r->edges = words.edge != 0;
        return ready(k, &work, r);
    }
    if (st != TJ_ERR_NOT_FOUND || d->op.kind != TJ_OP_MOVE)
        return st;
    /* The generic kernel has no edges: the plain word of the launch. Its geometry first: a block
     * of 2^31 words per object or more is staged meanwhile. */
    spec = tj_spec_generic(words.edge != 0 ? words.edge : words.word, d->dir, target);
    if ((st = tj_kind_of(spec.kind)->geometry(&spec, &work, &r->args)) != TJ_OK)
        return st;
    if (tj_config()->jit != TJ_JIT_OFF)
        tj_stats_inc(TJ_STAT_packs_generic_while_compiling);
    if ((st = tj_supply_get(&spec, TJ_SUPPLY_COMPILE, &k, NULL)) != TJ_OK)
        return st;
    return ready(k, &work, r);
}

/* A layout: its parts kernel, or, while that is not there, the parts kernel of the layout's runs
 * (one compiled image per word serves every layout); a layout of too many runs for that compiles
 * its own kernel now. A table not baked into the source is put on the device. */
static tj_status_t prepare_layout(const tj_launch_desc_t *d, const char *target,
                                  tj_launch_ready_t *r)
{
    tj_layout_t *l = d->layout, *runs;
    tj_devptr_t at = d->typed + (tj_devptr_t)l->start; /* frame element 0 of object 0 */
    bool one;
    int word = tj_layout_launch_word(l, d->count, (uintptr_t)at, (uintptr_t)d->packed, &one);
    tj_kernel_spec_t spec = tj_spec_parts(l, word, one, d->dir, d->serial, target);
    tj_kind_work_t work = {.count = d->count};
    tj_kernel_t *k;
    tj_status_t st;

    pointers(d, at, r);
    r->serial = d->serial;
    if ((st = kernel_as(&spec, d->policy, &k)) != TJ_OK && st != TJ_ERR_NOT_FOUND)
        return st;
    r->jit = st == TJ_OK;
    if (st == TJ_ERR_NOT_FOUND) {
        if (tj_config()->jit != TJ_JIT_OFF)
            tj_stats_inc(TJ_STAT_packs_generic_while_compiling);
        if (tj_parttable_runs(l, &runs) == TJ_OK) {
            l = runs;
            word = tj_layout_launch_word(l, d->count, (uintptr_t)at, (uintptr_t)d->packed, &one);
        }
        spec = tj_spec_parts(l, word, one, d->dir, d->serial, target);
        if ((st = tj_supply_get(&spec, TJ_SUPPLY_COMPILE, &k, NULL)) != TJ_OK)
            return st;
    }
    if ((st = tj_kernel_function(k, &r->fn)) != TJ_OK ||
        (!l->baked && (st = tj_parttable_get(l, &work.table)) != TJ_OK))
        return st;
    return tj_kind_of(spec.kind)->geometry(&spec, &work, &r->args);
}

/* A fused set: the members' blocks become the kernel's shapes, each moved with the widest word
 * its member's addresses allow (a fused kernel has no edges); members with equal blocks and
 * words share a shape. */
static tj_status_t prepare_fused(const tj_launch_desc_t *d, const char *target,
                                 tj_launch_ready_t *r)
{
    tj_block_t blocks[TJ_FUSED_MAX];
    tj_fused_member_t members[TJ_FUSED_MAX];
    int words[TJ_FUSED_MAX], nshapes = 0;
    tj_kind_work_t work = {.members = members, .nmembers = d->nmembers};
    tj_kernel_spec_t spec;
    tj_kernel_t *k;
    tj_status_t st;

    if (d->nmembers < 1 || d->nmembers > TJ_FUSED_MAX)
        return TJ_ERR_INVALID;
    for (int m = 0; m < d->nmembers; m++) {
        const tj_launch_member_t *mb = &d->members[m];
        tj_block_t b = tj_block_at_zero(mb->block);
        int64_t shift;
        tj_words_t w;
        int s = 0, word;

        if (!tj_add64(mb->typed, mb->block->start, &shift))
            return TJ_ERR_INVALID;
        w = tj_block_words(mb->block, mb->count, (uintptr_t)d->typed + (uintptr_t)shift,
                           (uintptr_t)d->packed + (uintptr_t)mb->packed);
        word = w.edge != 0 ? w.edge : w.word;
        while (s < nshapes && !(tj_block_equal(&blocks[s], &b) && words[s] == word))
            s++;
        if (s == nshapes) {
            words[nshapes] = word;
            blocks[nshapes++] = b;
        }
        members[m] = (tj_fused_member_t){s, shift, mb->packed, mb->count};
    }
    spec = tj_spec_fused(blocks, words, nshapes, d->dir, target);
    r->jit = true;
    r->fused = true;
    r->shapes = nshapes;
    pointers(d, d->typed, r);
    if ((st = tj_supply_get(&spec, TJ_SUPPLY_COMPILE, &k, NULL)) != TJ_OK)
        return st;
    return ready(k, &work, r);
}

tj_status_t tj_launch_prepare(const tj_launch_desc_t *d, tj_launch_ready_t *r)
{
    char target[TJ_TARGET_MAX];
    tj_status_t st;

    memset(r, 0, sizeof(*r));
    /* The first launch: the kernels of the types committed before the process met the GPU are
     * asked for now (kernels/prepare.h); later launches pay one load. */
    if (!atomic_load_explicit(&launched, memory_order_relaxed) && !atomic_exchange(&launched, true))
        tj_prepare_launching();
    if ((d->block != NULL) + (d->layout != NULL) + (d->members != NULL) != 1 ||
        (d->op.kind != TJ_OP_MOVE && (d->block == NULL || d->policy != TJ_LAUNCH_COMPILE)))
        return TJ_ERR_INVALID;
    if ((st = tj_launch_possible()) != TJ_OK ||
        (st = tj_target_of_device(d->device, target, sizeof(target))) != TJ_OK)
        return st;
    if (d->block != NULL)
        return prepare_block(d, target, r);
    if (d->layout != NULL)
        return prepare_layout(d, target, r);
    return prepare_fused(d, target, r);
}

tj_status_t tj_launch_go(tj_launch_ready_t *r)
{
    tj_status_t st = tj_gpu_launch(r->fn, r->args.geo.grid, r->args.geo.block, r->args.argv);

    if (st != TJ_OK)
        return st;
    tj_stats_inc(TJ_STAT_kernel_launches);
    if (r->jit && r->edges)
        tj_stats_inc(TJ_STAT_edge_launches);
    if (r->serial)
        tj_stats_inc(TJ_STAT_unpacks_serial);
    if (r->fused)
        tj_stats_inc(TJ_STAT_fused_launches);
    return TJ_OK;
}

tj_status_t tj_launch_run(const tj_launch_desc_t *d)
{
    tj_launch_ready_t r;
    tj_status_t st;

    if ((st = tj_launch_prepare(d, &r)) != TJ_OK || (st = tj_launch_go(&r)) != TJ_OK)
        return st;
    return d->wait ? tj_batch_settle(d->batch) : TJ_OK;
}
